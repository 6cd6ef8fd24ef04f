import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { GangAnnotation } from '../api/gang.ts';
import { HOSTNAME_LABEL, KueueAnnotation, KueueLabel } from '../api/keys.ts';
import { tierLevelKey } from '../topology/hypernode-tree.ts';
import type { KObject, Workload } from '../api/objects.ts';
import { decodeV1beta2 } from '../placement/assignment-codec.ts';
import { DEFAULT_GATES } from '../placement/request.ts';
import { BLOCK, cq, flavor, localQueue, RACK, TAS_LEVELS, wl } from '../testing/admission.ts';
import { hyperNode, node, pod } from '../testing/builders.ts';
import { runtimeEnv, type RuntimeEnv } from '../testing/runtime.ts';
import { condition, finish, markUnhealthy, topology } from '../testing/scheduler.ts';
import { schedulerController } from './scheduler.ts';

const get = (env: RuntimeEnv, name: string) => env.get('Workload', 'default', name)!;

/** Pods per host of a Workload's first PodSet assignment. */
function hosts(w: Workload): Record<string, number> {
  const t = w.status?.admission?.podSetAssignments[0]?.topologyAssignment;
  if (!t) return {};
  const out: Record<string, number> = {};
  for (const d of decodeV1beta2(t).domains) out[d.values[d.values.length - 1]!] = (out[d.values[d.values.length - 1]!] ?? 0) + d.count;
  return out;
}

/** Two racks of two 4-cpu nodes: r1 (x1, x2) and r2 (y1, y2). */
function tasObjects(): KObject[] {
  const n = (name: string, rack: string) =>
    node(name)
      .labels({ [BLOCK]: 'b1', [RACK]: rack })
      .cpu(4)
      .build();
  return [
    topology('default', TAS_LEVELS),
    flavor('tas', { topology: 'default', nodeLabels: { [BLOCK]: 'b1' } }),
    cq('a').quota('tas', { cpu: '100' }).build(),
    localQueue('a', 'a'),
    n('x1', 'r1'),
    n('x2', 'r1'),
    n('y1', 'r2'),
    n('y2', 'r2'),
  ];
}

const rackRequired = { required: RACK };

describe('scheduler controller: topology-aware scheduling', () => {
  it('writes the topology assignment and never puts more on a node than it has free (other pods counted)', async () => {
    const env = runtimeEnv({ controllers: [schedulerController()], objects: tasObjects() });
    // A pod no Workload owns uses 2 of x1's 4 cpus: r1 has room for 3 pods of 2 cpus.
    env.seed(pod('daemon').on('x1').request('cpu', 2).build());
    await env.start();
    env.seed(wl('w1').queue('a').pods(4, { cpu: '2' }, { topology: rackRequired }).build());
    await env.run();
    assert.deepEqual(hosts(get(env, 'w1')), { y1: 2, y2: 2 });
    env.seed(wl('w2').queue('a').pods(3, { cpu: '2' }, { topology: rackRequired }).build());
    await env.run();
    assert.deepEqual(hosts(get(env, 'w2')), { x1: 1, x2: 2 });
    env.seed(wl('w3').queue('a').pods(1, { cpu: '2' }, { topology: rackRequired }).build());
    await env.run();
    const w3 = get(env, 'w3');
    assert.equal(w3.status?.admission, undefined);
    assert.equal(condition(w3, 'QuotaReserved')?.reason, 'TopologyPlacementFailed');

    // The other pod ends: its capacity is free again, and w3 fits on x1.
    env.patch('Pod', 'default', 'daemon', (p: KObject & { status?: { phase?: string } }) => (p.status = { phase: 'Succeeded' }), {
      status: true,
    });
    await env.run();
    assert.deepEqual(hosts(get(env, 'w3')), { x1: 1 });
  });

  it('the pods of an admitted Workload count through its assignment, not twice; once it has finished, as plain usage until they end', async () => {
    const env = runtimeEnv({ controllers: [schedulerController()], objects: tasObjects() });
    await env.start();
    env.seed(wl('filler').queue('a').pods(2, { cpu: '4' }, { topology: rackRequired }).build());
    await env.run();
    env.seed(wl('w1').queue('a').pods(1, { cpu: '2' }, { topology: rackRequired }).build());
    await env.run();
    const placed = hosts(get(env, 'w1'));
    // Its pods run where the assignment says (the ungater's and binder's work).
    let i = 0;
    for (const [h, n] of Object.entries(placed)) {
      for (let k = 0; k < n; k++) {
        const p = pod(`w1-${i++}`).on(h).request('cpu', 2).build();
        p.metadata.annotations = { [KueueAnnotation.Workload]: 'w1' };
        p.metadata.labels = { [KueueLabel.PodSet]: 'main' };
        env.seed(p);
      }
    }
    // w2 fits only in what w1 left of its rack, its own node included.
    env.seed(wl('w2').queue('a').pods(3, { cpu: '2' }, { topology: rackRequired }).build());
    await env.run();
    assert.ok(get(env, 'w2').status?.admission, 'w1 counted once');

    finish(env, 'w1');
    env.seed(wl('w3').queue('a').pods(1, { cpu: '2' }).build());
    await env.run();
    assert.equal(get(env, 'w3').status?.admission, undefined, "the finished Workload's pods still hold their nodes");
    for (let k = 0; k < i; k++)
      env.patch('Pod', 'default', `w1-${k}`, (p: KObject & { status?: { phase?: string } }) => (p.status = { phase: 'Succeeded' }), {
        status: true,
      });
    await env.run();
    assert.ok(get(env, 'w3').status?.admission, 'their end frees the room');
  });

  it('a node joining the topology wakes the Workloads waiting for room', async () => {
    const env = runtimeEnv({ controllers: [schedulerController()], objects: tasObjects(), config: { requeueBatchMs: 0 } });
    await env.start();
    env.seed(wl('big').queue('a').pods(3, { cpu: '4' }, { topology: rackRequired }).build());
    await env.run();
    assert.equal(condition(get(env, 'big'), 'QuotaReserved')?.reason, 'TopologyPlacementFailed');
    env.seed(
      node('x3')
        .labels({ [BLOCK]: 'b1', [RACK]: 'r1' })
        .cpu(4)
        .build(),
    );
    await env.run();
    assert.deepEqual(hosts(get(env, 'big')), { x1: 1, x2: 1, x3: 1 });
  });
});

describe('scheduler controller: failed node replacement (second pass)', () => {
  const setup = async (extraNode: boolean) => {
    const objects = tasObjects();
    if (extraNode)
      objects.push(
        node('x3')
          .labels({ [BLOCK]: 'b1', [RACK]: 'r1' })
          .cpu(4)
          .build(),
      );
    const env = runtimeEnv({ controllers: [schedulerController()], objects });
    await env.start();
    // Fill r2 so that w1 goes to r1.
    env.seed(wl('filler').queue('a').pods(2, { cpu: '4' }, { topology: rackRequired }).priority(10).build());
    await env.run();
    env.seed(wl('w1').queue('a').pods(2, { cpu: '4' }, { topology: rackRequired }).build());
    await env.run();
    return env;
  };

  it("moves only the failed node's pods to a replacement in the same required domain and clears unhealthyNodes", async () => {
    const env = await setup(true);
    const before = hosts(get(env, 'w1'));
    assert.equal(Object.keys(before).length, 2);
    const failed = Object.keys(before)[0]!;
    const kept = Object.keys(before)[1]!;
    env.patch('Node', undefined, failed, (n) => (n.status = { ...n.status, conditions: [{ type: 'Ready', status: 'False' }] }), {
      status: true,
    });
    markUnhealthy(env, 'w1', [failed]);
    await env.run();
    const w1 = get(env, 'w1');
    const after = hosts(w1);
    assert.equal(after[kept], 1, 'the healthy domain is kept');
    assert.equal(after[failed], undefined);
    assert.deepEqual(Object.keys(after).sort(), [kept, 'x3'].sort());
    assert.equal(w1.status?.unhealthyNodes, undefined);
    assert.equal(condition(w1, 'Evicted'), undefined);
    assert.equal(w1.status?.admission?.podSetAssignments[0]?.count, 2);
  });

  /** r1 with five nodes (r2 filled first); w1 with 3 pods in r1; its hosts, sorted. */
  const threePodsOnFiveNodes = async () => {
    const objects = tasObjects();
    for (const n of ['x3', 'x4', 'x5'])
      objects.push(
        node(n)
          .labels({ [BLOCK]: 'b1', [RACK]: 'r1' })
          .cpu(4)
          .build(),
      );
    const env = runtimeEnv({ controllers: [schedulerController()], objects });
    await env.start();
    env.seed(wl('filler').queue('a').pods(2, { cpu: '4' }, { topology: rackRequired }).priority(10).build());
    await env.run();
    env.seed(wl('w1').queue('a').pods(3, { cpu: '4' }, { topology: rackRequired }).build());
    await env.run();
    return { env, before: Object.keys(hosts(get(env, 'w1'))).sort() };
  };
  const notReady = (env: RuntimeEnv, name: string) =>
    env.patch('Node', undefined, name, (n) => (n.status = { ...n.status, conditions: [{ type: 'Ready', status: 'False' }] }), {
      status: true,
    });

  it('two failed nodes listed together are repaired together: both move inside the required rack, nothing is evicted', async () => {
    const { env, before } = await threePodsOnFiveNodes();
    assert.equal(before.length, 3);
    const failed = before.slice(0, 2);
    for (const f of failed) notReady(env, f);
    markUnhealthy(env, 'w1', failed);
    await env.run();
    const w1 = get(env, 'w1');
    assert.equal(condition(w1, 'Evicted'), undefined);
    const after = hosts(w1);
    assert.equal(after[before[2]!], 1, 'the healthy node keeps its pod');
    for (const f of failed) assert.equal(after[f], undefined);
    assert.deepEqual(Object.keys(after).sort(), ['x1', 'x2', 'x3', 'x4', 'x5'].filter((h) => !failed.includes(h)).sort());
    assert.equal(w1.status?.unhealthyNodes, undefined);
  });

  it('a kept node that is NotReady but not listed yet is waited for, not called stale; once listed, both are repaired together', async () => {
    const { env, before } = await threePodsOnFiveNodes();
    const failed = before.slice(0, 2);
    for (const f of failed) notReady(env, f);
    markUnhealthy(env, 'w1', [failed[0]!]);
    await env.run();
    assert.equal(condition(get(env, 'w1'), 'Evicted'), undefined, 'no stale-domain eviction while the second node is only NotReady');
    assert.deepEqual(Object.keys(hosts(get(env, 'w1'))).sort(), before, 'nothing moved yet');
    markUnhealthy(env, 'w1', failed);
    await env.run();
    const after = hosts(get(env, 'w1'));
    assert.equal(condition(get(env, 'w1'), 'Evicted'), undefined);
    for (const f of failed) assert.equal(after[f], undefined);
    assert.equal(
      Object.values(after).reduce((x, y) => x + y, 0),
      3,
    );
  });

  it('evicts with NodeFailures when there is no replacement', async () => {
    const env = await setup(false);
    const failed = Object.keys(hosts(get(env, 'w1')))[0]!;
    env.patch('Node', undefined, failed, (n) => (n.status = { ...n.status, conditions: [{ type: 'Ready', status: 'False' }] }), {
      status: true,
    });
    markUnhealthy(env, 'w1', [failed]);
    await env.run();
    const w1 = get(env, 'w1');
    assert.equal(condition(w1, 'Evicted')?.reason, 'NodeFailures');
    assert.equal(condition(w1, 'Evicted')?.message, `Workload was evicted as there was no replacement for unhealthy node(s): ${failed}`);
    assert.ok(w1.status?.admission, 'the reservation stays until the pods have stopped');
    assert.deepEqual(w1.status?.unhealthyNodes, [{ name: failed }]);
  });

  it('a Workload owned by a single Pod keeps its assignment', async () => {
    const env = await setup(true);
    env.patch('Workload', 'default', 'w1', (w) => (w.metadata.ownerReferences = [{ apiVersion: 'v1', kind: 'Pod', name: 'p', uid: 'u' }]));
    const before = get(env, 'w1').status?.admission;
    const failed = Object.keys(hosts(get(env, 'w1')))[0]!;
    markUnhealthy(env, 'w1', [failed]);
    await env.run();
    assert.deepEqual(get(env, 'w1').status?.admission, before);
    assert.equal(condition(get(env, 'w1'), 'Evicted'), undefined);
  });
});

describe('scheduler controller: failed node replacement, names and gates', () => {
  it('a failed Node whose hostname label differs from its name is replaced (found by the label the assignment records)', async () => {
    const n = (name: string, host: string, rack: string) =>
      node(name)
        .hostname(host)
        .labels({ [BLOCK]: 'b1', [RACK]: rack })
        .cpu(4)
        .build();
    const objects = [
      topology('default', TAS_LEVELS),
      flavor('tas', { topology: 'default', nodeLabels: { [BLOCK]: 'b1' } }),
      cq('a').quota('tas', { cpu: '100' }).build(),
      localQueue('a', 'a'),
      n('pool-a-7f3a', 'gpu-017', 'r1'),
      n('pool-a-9k2b', 'gpu-018', 'r1'),
      n('pool-a-1x4c', 'gpu-019', 'r1'),
    ];
    const env = runtimeEnv({ controllers: [schedulerController()], objects });
    await env.start();
    env.seed(wl('w1').queue('a').pods(2, { cpu: '4' }, { topology: rackRequired }).build());
    await env.run();
    const before = hosts(get(env, 'w1'));
    assert.equal(Object.keys(before).length, 2);
    const failedHost = Object.keys(before)[0]!;
    const failed = { 'gpu-017': 'pool-a-7f3a', 'gpu-018': 'pool-a-9k2b', 'gpu-019': 'pool-a-1x4c' }[failedHost]!;
    env.store.deleteSync('Node', undefined, failed);
    markUnhealthy(env, 'w1', [failed]);
    await env.run();
    const w1 = get(env, 'w1');
    assert.equal(condition(w1, 'Evicted'), undefined);
    assert.equal(hosts(w1)[failedHost], undefined);
    assert.equal(
      Object.values(hosts(w1)).reduce((a, b) => a + b, 0),
      2,
    );
    assert.equal(w1.status?.unhealthyNodes, undefined);
  });

  it('SkipReassignmentForPodOwnedWorkloads off: a Workload owned by a single Pod is replaced like any other', async () => {
    const objects = tasObjects();
    objects.push(
      node('x3')
        .labels({ [BLOCK]: 'b1', [RACK]: 'r1' })
        .cpu(4)
        .build(),
    );
    const env = runtimeEnv({
      controllers: [schedulerController()],
      objects,
      config: { gates: { ...DEFAULT_GATES, SkipReassignmentForPodOwnedWorkloads: false } },
    });
    await env.start();
    env.seed(wl('filler').queue('a').pods(2, { cpu: '4' }, { topology: rackRequired }).priority(10).build());
    await env.run();
    env.seed(wl('w1').queue('a').pods(2, { cpu: '4' }, { topology: rackRequired }).build());
    await env.run();
    env.patch<Workload>(
      'Workload',
      'default',
      'w1',
      (w) => (w.metadata.ownerReferences = [{ apiVersion: 'v1', kind: 'Pod', name: 'p', uid: 'u' }]),
    );
    const failed = Object.keys(hosts(get(env, 'w1')))[0]!;
    markUnhealthy(env, 'w1', [failed]);
    await env.run();
    assert.equal(hosts(get(env, 'w1'))[failed], undefined);
    assert.ok(hosts(get(env, 'w1'))['x3']);
  });
});

describe('scheduler controller: hostnames', () => {
  it('hostname-lowest assignments name the hosts', async () => {
    const env = runtimeEnv({ controllers: [schedulerController()], objects: tasObjects() });
    await env.start();
    env.seed(wl('w1').queue('a').pods(1, { cpu: '1' }).build());
    await env.run();
    const t = get(env, 'w1').status?.admission?.podSetAssignments[0]?.topologyAssignment;
    assert.deepEqual(t?.levels, [HOSTNAME_LABEL], 'implicit TAS (every flavor of the ClusterQueue is a TAS flavor)');
  });
});

describe('scheduler controller: gangs and HyperNodes', () => {
  it('a gang that does not fit within its waiting time is released and it and its pods are annotated timed out', async () => {
    const env = runtimeEnv({ controllers: [schedulerController()], objects: tasObjects() });
    await env.start();
    const gang = wl('g').queue('a').pods(3, { cpu: '4' }, { topology: rackRequired }).gang(3, { waitingTime: '30s' }).build();
    gang.metadata.ownerReferences = [0, 1, 2].map((i) => ({ apiVersion: 'v1', kind: 'Pod', name: `g-${i}`, uid: `u${i}` }));
    env.seed(gang, ...[0, 1, 2].map((i) => pod(`g-${i}`).build()));
    await env.run(29_000);
    let g = get(env, 'g');
    assert.equal(condition(g, 'QuotaReserved')?.reason, 'TopologyPlacementFailed');
    assert.equal(g.metadata.annotations?.['topoqueue.io/gang-waiting-since'], '2026-01-01T00:00:00Z');
    assert.equal(g.metadata.annotations?.[GangAnnotation.Timeout], undefined);
    await env.run(2_000);
    g = get(env, 'g');
    assert.equal(g.metadata.annotations?.[GangAnnotation.Timeout], 'true');
    assert.equal(condition(g, 'QuotaReserved')?.reason, 'GangTimeout');
    for (let i = 0; i < 3; i++)
      assert.equal(env.get<KObject>('Pod', 'default', `g-${i}`)?.metadata.annotations?.[GangAnnotation.Timeout], 'true');
    const r = await env.run();
    assert.ok(r.idle, 'not scheduled again until the user acts');
  });

  it('a Topology of HyperNode tiers: a tier-required PodSet lands inside one HyperNode; a new member node extends it', async () => {
    const objects: KObject[] = [
      hyperNode('s0').tier(1).nodes('n0', 'n1').build(),
      hyperNode('s1').tier(1).nodes('n2', 'n3').build(),
      hyperNode('top').tier(2).hyperNodes('s0', 's1').build(),
      topology('tiers', [tierLevelKey(2), tierLevelKey(1), HOSTNAME_LABEL]),
      flavor('hn', { topology: 'tiers', nodeLabels: { pool: 'gpu' } }),
      cq('a').quota('hn', { cpu: '100' }).build(),
      localQueue('a', 'a'),
      ...['n0', 'n1', 'n2', 'n3'].map((n) => node(n).labels({ pool: 'gpu' }).cpu(4).build()),
    ];
    const env = runtimeEnv({ controllers: [schedulerController()], objects, config: { requeueBatchMs: 0 } });
    await env.start();
    env.seed(
      wl('w1')
        .queue('a')
        .pods(2, { cpu: '4' }, { topology: { required: tierLevelKey(1) } })
        .build(),
    );
    await env.run();
    const placed = Object.keys(hosts(get(env, 'w1'))).sort();
    assert.ok(JSON.stringify(placed) === '["n0","n1"]' || JSON.stringify(placed) === '["n2","n3"]', placed.join());
    env.seed(
      wl('w2')
        .queue('a')
        .pods(3, { cpu: '4' }, { topology: { required: tierLevelKey(1) } })
        .build(),
    );
    await env.run();
    assert.equal(get(env, 'w2').status?.admission, undefined);
    // A third node joins the free HyperNode (by exact name): w2 fits there.
    const free = placed[0] === 'n0' ? 's1' : 's0';
    const newNode = free === 's1' ? 'n4' : 'n5';
    env.patch('HyperNode', undefined, free, (h) => h.spec.members.push({ type: 'Node', selector: { exactMatch: { name: newNode } } }));
    env.seed(node(newNode).labels({ pool: 'gpu' }).cpu(4).build());
    await env.run();
    assert.equal(Object.keys(hosts(get(env, 'w2'))).length, 3);
    assert.ok(hosts(get(env, 'w2'))[newNode]);
  });
});
