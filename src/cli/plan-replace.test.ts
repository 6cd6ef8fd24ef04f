import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KObject, Node, Workload } from '../api/objects.ts';
import { schedulerController } from '../controllers/scheduler.ts';
import { decodeV1beta2 } from '../placement/assignment-codec.ts';
import { cq, flavor, localQueue, BLOCK, RACK, TAS_LEVELS, wl } from '../testing/admission.ts';
import { node } from '../testing/builders.ts';
import { runCli as run, tmpFile } from '../testing/cli.ts';
import { runtimeEnv } from '../testing/runtime.ts';
import { condition, markUnhealthy, topology } from '../testing/scheduler.ts';
import { plan } from './plan.ts';

const parsed = (objects: KObject[]) => objects.map((object, i) => ({ object, where: { file: 'in.yaml', document: i + 1 } }));

function hosts(w: Workload): Record<string, number> {
  const out: Record<string, number> = {};
  for (const psa of w.status?.admission?.podSetAssignments ?? []) {
    if (!psa.topologyAssignment) continue;
    for (const d of decodeV1beta2(psa.topologyAssignment).domains)
      out[d.values[d.values.length - 1]!] = (out[d.values[d.values.length - 1]!] ?? 0) + d.count;
  }
  return out;
}

/** One rack r1 of three 4-cpu nodes whose names differ from their hostname labels (cloud style). */
function cloud(): KObject[] {
  const n = (name: string, host: string) =>
    node(name)
      .hostname(host)
      .labels({ [BLOCK]: 'b1', [RACK]: 'r1' })
      .cpu(4)
      .build();
  return [
    topology('default', TAS_LEVELS),
    flavor('tas', { topology: 'default', nodeLabels: { [BLOCK]: 'b1' } }),
    cq('a').quota('tas', { cpu: '100' }).build(),
    localQueue('a', 'a'),
    n('pool-a-7f3a', 'gpu-017'),
    n('pool-a-9k2b', 'gpu-018'),
    n('pool-a-1x4c', 'gpu-019'),
  ];
}

/** A Workload admitted on gpu-017 and gpu-018 (one 4-cpu pod each), as plan writes it. */
function admittedOnCloud(owner?: 'pod'): Workload {
  const w = wl('w1')
    .queue('a')
    .pods(2, { cpu: '4' }, { topology: { required: RACK } })
    .build();
  if (owner === 'pod') w.metadata.ownerReferences = [{ apiVersion: 'v1', kind: 'Pod', name: 'p', uid: 'u' }];
  const objects = cloud().filter((o) => o.kind !== 'ClusterQueue' && o.kind !== 'LocalQueue');
  const [placed] = plan(parsed([...objects, w])).workloads;
  assert.deepEqual(hosts(placed!), { 'gpu-017': 1, 'gpu-018': 1 });
  return placed!;
}

describe('plan --replace-node', () => {
  it('a Node whose hostname label differs from its name is replaced: the user names the Node, the assignment records the label', () => {
    const r = plan(parsed([...cloud(), admittedOnCloud()]), { replaceNode: 'pool-a-7f3a' });
    assert.deepEqual(r.errors, []);
    assert.equal(r.workloads.length, 1);
    assert.deepEqual(hosts(r.workloads[0]!), { 'gpu-018': 1, 'gpu-019': 1 });
  });

  it('a Node whose hostname label differs from its name is found by its label even when it is not in the tree (lost its rack label)', () => {
    const objects = cloud().map((o) => {
      if (o.metadata.name !== 'pool-a-7f3a') return o;
      const n = structuredClone(o) as Node;
      delete n.metadata.labels![RACK];
      return n;
    });
    const r = plan(parsed([...objects, admittedOnCloud()]), { replaceNode: 'pool-a-7f3a' });
    assert.deepEqual(hosts(r.workloads[0]!), { 'gpu-018': 1, 'gpu-019': 1 });
  });

  it('SkipReassignmentForPodOwnedWorkloads (on by default): a Workload owned by a single Pod keeps its assignment, and a note says why', () => {
    const before = admittedOnCloud('pod');
    const r = plan(parsed([...cloud(), before]), { replaceNode: 'pool-a-7f3a' });
    assert.equal(r.workloads.length, 1);
    assert.deepEqual(r.workloads[0]!.status, before.status);
    assert.ok(
      r.notes.some((n) => /owned by a single Pod \(SkipReassignmentForPodOwnedWorkloads\)/.test(n)),
      r.notes.join('\n'),
    );
    const off = plan(parsed([...cloud(), before]), { replaceNode: 'pool-a-7f3a', gates: { SkipReassignmentForPodOwnedWorkloads: false } });
    assert.deepEqual(hosts(off.workloads[0]!), { 'gpu-018': 1, 'gpu-019': 1 });
  });

  it('an unknown --replace-node node is reported: exit code 2, naming the flag and the node', async () => {
    const admitted = tmpFile('admitted.json', JSON.stringify(admittedOnCloud()));
    const objects = tmpFile('cloud.json', JSON.stringify(cloud()));
    const r = await run(['plan', '-f', objects, '-f', admitted, '--replace-node', 'gpu-017']);
    assert.equal(r.code, 2);
    assert.match(
      r.err,
      /--replace-node: node "gpu-017" is not in the input \(a Node's metadata\.name\); Nodes in the input: pool-a-1x4c, pool-a-7f3a, pool-a-9k2b/,
    );
    assert.equal(r.out, '');
  });

  it("plan and the scheduler's second pass write the same condition when there is no replacement", async () => {
    // Two nodes in r1, both used: no room for a replacement.
    const objects = cloud().filter((o) => o.metadata.name !== 'pool-a-1x4c');
    const env = runtimeEnv({ controllers: [schedulerController()], objects });
    await env.start();
    env.seed(
      wl('w1')
        .queue('a')
        .pods(2, { cpu: '4' }, { topology: { required: RACK } })
        .build(),
    );
    await env.run();
    const admitted = structuredClone(env.get<Workload>('Workload', 'default', 'w1')!);
    assert.deepEqual(hosts(admitted), { 'gpu-017': 1, 'gpu-018': 1 });

    env.patch<Node>(
      'Node',
      undefined,
      'pool-a-7f3a',
      (n) => (n.status = { ...n.status, conditions: [{ type: 'Ready', status: 'False' }] }),
      { status: true },
    );
    markUnhealthy(env, 'w1', ['pool-a-7f3a']);
    await env.run();
    const runtime = condition(env.get<Workload>('Workload', 'default', 'w1'), 'Evicted')!;

    const planned = plan(parsed([...objects, admitted]), { replaceNode: 'pool-a-7f3a' });
    const fromPlan = condition(planned.workloads[0], 'Evicted')!;
    const shape = (c: typeof runtime) => ({ type: c.type, status: c.status, reason: c.reason, message: c.message });
    assert.deepEqual(shape(fromPlan), shape(runtime));
    assert.deepEqual(shape(runtime), {
      type: 'Evicted',
      status: 'True',
      reason: 'NodeFailures',
      message: 'Workload was evicted as there was no replacement for unhealthy node(s): pool-a-7f3a',
    });
  });
});
