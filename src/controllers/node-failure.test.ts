import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KObject, ResourceFlavor, Taint, Workload } from '../api/objects.ts';
import { DEFAULT_GATES } from '../placement/request.ts';
import { node } from '../testing/builders.ts';
import { placement, tasEnv, tasPod, tasWorkload, type TasEnv } from '../testing/tas-runtime.ts';
import { nowTimestamp } from '../runtime/clock.ts';
import { retryOnConflict } from '../runtime/store.ts';
import { hostsOf, nodeFailureController, TAINT_TERMINATION_MESSAGE } from './node-failure.ts';
import { topologyUngater } from './topology-ungater.ts';

const SECOND = 1000;

async function env(objects: KObject[]): Promise<TasEnv> {
  const e = await tasEnv(objects, [nodeFailureController()]);
  await e.m.run();
  return e;
}

const wl = (e: TasEnv, name = 'wl') => e.store.getSync('Workload', 'default', name)!;
const unhealthy = (e: TasEnv, name = 'wl') => (wl(e, name).status?.unhealthyNodes ?? []).map((n) => n.name);
const evicted = (e: TasEnv, name = 'wl') => wl(e, name).status?.conditions?.find((c) => c.type === 'Evicted');
const pod = (e: TasEnv, name: string) => e.store.getSync('Pod', 'default', name)!;

async function setReady(e: TasEnv, name: string, status: 'True' | 'False'): Promise<void> {
  await retryOnConflict(
    e.store,
    'Node',
    undefined,
    name,
    (n) => void (n.status!.conditions = [{ type: 'Ready', status, lastTransitionTime: nowTimestamp(e.clock) } as never]),
    { status: true },
  );
}

async function setTaints(e: TasEnv, name: string, taints: Taint[], unschedulable = false): Promise<void> {
  await retryOnConflict(e.store, 'Node', undefined, name, (n) => void (n.spec = { ...n.spec, taints, unschedulable }));
}

async function setPhase(e: TasEnv, name: string, phase: 'Succeeded' | 'Failed'): Promise<void> {
  await retryOnConflict(e.store, 'Pod', 'default', name, (p) => void (p.status = { phase }), { status: true });
}

/** Two Ready nodes, a Workload with one pod on each, running. */
function twoNodes(opts: { tolerations?: Workload['spec']['podSets'][number]['template']['spec']['tolerations'] } = {}): KObject[] {
  return [
    node('h1').build(),
    node('h2').build(),
    tasWorkload('wl')
      .podSet('main', 2, undefined, opts)
      .assign('main', [
        ['h1', 1],
        ['h2', 1],
      ])
      .build(),
    tasPod('p-1', 'wl').runningOn('h1').build(),
    tasPod('p-2', 'wl').runningOn('h2').build(),
  ];
}

describe('node failures: NotReady, deleted, no Ready condition', () => {
  it('a node NotReady for 29 s is not failed; at 30 s it is added to unhealthyNodes and its pods are terminated', async () => {
    const e = await env(twoNodes());
    const t0 = e.clock.now();
    await setReady(e, 'h2', 'False');
    await e.m.run({ untilMs: t0 + 29 * SECOND });
    assert.deepEqual(unhealthy(e), []);
    assert.equal(pod(e, 'p-2').status?.phase, 'Running');
    await e.m.run({ untilMs: t0 + 31 * SECOND });
    assert.deepEqual(unhealthy(e), ['h2']);
    assert.equal(evicted(e), undefined);
    const p2 = pod(e, 'p-2');
    assert.equal(p2.status?.phase, 'Failed');
    const c = p2.status!.conditions!.find((x) => x.type === 'TerminatedByKueue')!;
    assert.equal(c.reason, 'UnschedulableOnAssignedNode');
    assert.match(c.message!, /^Pod terminated by Kueue NodeController due to node failure: node h2 is NotReady for 30s$/);
    assert.equal(e.m.events.about('Pod/default/p-2')[0]?.reason, 'PodTerminatedByKueue');
    assert.equal(pod(e, 'p-1').status?.phase, 'Running');
    assert.deepEqual(e.m.errors, []);
  });

  it('a NotReady condition without a transition time counts from when it is first seen', async () => {
    const e = await env(twoNodes());
    const t0 = e.clock.now();
    await retryOnConflict(e.store, 'Node', undefined, 'h2', (n) => void (n.status!.conditions = [{ type: 'Ready', status: 'Unknown' }]), {
      status: true,
    });
    await e.m.run({ untilMs: t0 + 29 * SECOND });
    assert.deepEqual(unhealthy(e), []);
    await e.m.run({ untilMs: t0 + 31 * SECOND });
    assert.deepEqual(unhealthy(e), ['h2']);
  });

  it('a node that becomes Ready within 30 s never fails', async () => {
    const e = await env(twoNodes());
    const t0 = e.clock.now();
    await setReady(e, 'h2', 'False');
    await e.m.run({ untilMs: t0 + 20 * SECOND });
    await setReady(e, 'h2', 'True');
    await e.m.run({ untilMs: t0 + 60 * SECOND });
    assert.deepEqual(unhealthy(e), []);
    assert.equal(pod(e, 'p-2').status?.phase, 'Running');
  });

  it('a deleted node, or one without a Ready condition, fails at once', async () => {
    const e = await env(twoNodes());
    await e.store.delete('Node', undefined, 'h2');
    await e.m.run({ untilMs: e.clock.now() });
    assert.deepEqual(unhealthy(e), ['h2']);
    assert.match(pod(e, 'p-2').status!.conditions!.find((x) => x.type === 'TerminatedByKueue')!.message!, /node h2 was deleted/);

    const f = await env(twoNodes());
    await retryOnConflict(f.store, 'Node', undefined, 'h1', (n) => void (n.status!.conditions = []), { status: true });
    await f.m.run({ untilMs: f.clock.now() });
    assert.deepEqual(unhealthy(f), ['h1']);
  });

  it("with TASFailedNodeReplacement off, a second failed node evicts the Workload with the peers' message", async () => {
    const e = await tasEnv(twoNodes(), [nodeFailureController()], {
      config: { gates: { ...DEFAULT_GATES, TASFailedNodeReplacement: false } },
    });
    await e.m.run();
    await e.store.delete('Node', undefined, 'h2');
    await e.m.run();
    await e.store.delete('Node', undefined, 'h1');
    await e.m.run();
    const c = evicted(e)!;
    assert.equal(c.status, 'True');
    assert.equal(c.reason, 'NodeFailures');
    assert.equal(c.message, 'Workload eviction triggered due to multiple TAS assigned node failures, including: h2, h1');
    assert.deepEqual(unhealthy(e), ['h2']);
    assert.deepEqual((wl(e).status!.schedulingStats as { evictions: unknown[] }).evictions, [
      { reason: 'NodeFailures', underlyingCause: '', count: 1 },
    ]);
    assert.match(
      await e.m.metrics.text(),
      /kueue_evicted_workloads_total\{cluster_queue="cq",reason="NodeFailures",underlying_cause=""\} 1/,
    );
    assert.equal(e.m.events.about('Workload/default/wl').filter((x) => x.reason === 'EvictedDueToNodeFailures').length, 1);
    assert.equal(pod(e, 'p-1').status?.phase, 'Failed');
  });

  it('a second failed node is listed beside the first, for the scheduler to repair both together (no eviction)', async () => {
    const e = await env(twoNodes());
    await e.store.delete('Node', undefined, 'h2');
    await e.m.run();
    await e.store.delete('Node', undefined, 'h1');
    await e.m.run();
    assert.equal(evicted(e), undefined);
    assert.deepEqual(unhealthy(e), ['h2', 'h1']);
    assert.equal(pod(e, 'p-1').status?.phase, 'Failed');
    assert.equal(pod(e, 'p-2').status?.phase, 'Failed');
  });

  it('a node that is healthy again is removed from unhealthyNodes', async () => {
    const e = await env(twoNodes());
    await retryOnConflict(e.store, 'Node', undefined, 'h2', (n) => void (n.status!.conditions = []), { status: true });
    await e.m.run();
    assert.deepEqual(unhealthy(e), ['h2']);
    await setReady(e, 'h2', 'True');
    await e.m.run();
    assert.deepEqual(unhealthy(e), []);
    assert.equal(wl(e).status!.unhealthyNodes, undefined);
  });

  it('a node the assignment no longer names (replaced) leaves unhealthyNodes, and a pod left pending on it is terminated', async () => {
    const e = await env([...twoNodes(), node('h3').build(), tasPod('p-3', 'wl').ungatedOn('h2').build()]);
    await e.store.delete('Node', undefined, 'h2');
    await e.m.run();
    assert.deepEqual(unhealthy(e), ['h2']);
    // p-3 pointed at h2 and never bound: terminated with p-2.
    assert.equal(pod(e, 'p-3').status?.phase, 'Failed');
    // The scheduler's second pass: h2 replaced by h3; a pod ungated onto h2 meanwhile is a stray.
    await e.store.create(tasPod('p-4', 'wl').ungatedOn('h2').build());
    const replaced = tasWorkload('wl')
      .podSet('main', 2)
      .assign('main', [
        ['h1', 1],
        ['h3', 1],
      ])
      .build();
    await retryOnConflict(
      e.store,
      'Workload',
      'default',
      'wl',
      (o) => void (o.status = { ...o.status, admission: replaced.status!.admission }),
      { status: true },
    );
    await e.m.run();
    assert.deepEqual(unhealthy(e), []);
    assert.equal(pod(e, 'p-4').status?.phase, 'Failed');
    assert.match(pod(e, 'p-4').status!.conditions![0]!.message!, /node h2 is no longer in the topology assignment of PodSet main/);
  });

  it('a failed node not assigned to the Workload changes nothing', async () => {
    const e = await env([...twoNodes(), node('h9').build()]);
    await e.store.delete('Node', undefined, 'h9');
    await e.m.run();
    assert.deepEqual(unhealthy(e), []);
  });
});

describe('node failures: a hostname label that differs from the Node name', () => {
  /** Node `pool-a-7f3a` labelled `gpu-017` (assignments and selectors say gpu-017), and h2. */
  function cloudNodes(): KObject[] {
    const p = tasPod('p-1', 'wl').ungatedOn('gpu-017').build();
    p.spec.nodeName = 'pool-a-7f3a';
    p.status = { phase: 'Running' };
    return [
      node('pool-a-7f3a').hostname('gpu-017').build(),
      node('h2').build(),
      tasWorkload('wl')
        .podSet('main', 2)
        .assign('main', [
          ['gpu-017', 1],
          ['h2', 1],
        ])
        .build(),
      p,
      tasPod('p-2', 'wl').runningOn('h2').build(),
    ];
  }

  it('a deleted node whose hostname label differs from its name is found through the label and listed by name', async () => {
    const e = await env(cloudNodes());
    assert.deepEqual(unhealthy(e), [], 'a healthy node: the hostname value is not taken for a missing node');
    await e.store.delete('Node', undefined, 'pool-a-7f3a');
    await e.m.run({ untilMs: e.clock.now() });
    assert.deepEqual(unhealthy(e), ['pool-a-7f3a']);
    assert.equal(evicted(e), undefined, 'one failed node, not two (name and hostname)');
    assert.match(pod(e, 'p-1').status!.conditions!.find((x) => x.type === 'TerminatedByKueue')!.message!, /node pool-a-7f3a was deleted/);
    assert.equal(pod(e, 'p-2').status?.phase, 'Running');
  });

  it('a NotReady node whose hostname label differs from its name fails after the delay', async () => {
    const e = await env(cloudNodes());
    await setReady(e, 'pool-a-7f3a', 'False');
    await e.m.run({ untilMs: e.clock.now() + 31 * SECOND });
    assert.deepEqual(unhealthy(e), ['pool-a-7f3a']);
    assert.equal(pod(e, 'p-1').status?.phase, 'Failed');
  });
});

describe('node failures: taints', () => {
  const noSchedule: Taint = { key: 'maintenance', value: 'true', effect: 'NoSchedule' };
  const noExecute: Taint = { key: 'broken', effect: 'NoExecute' };

  it("an untolerated NoSchedule taint fails the node only once the Workload's pods there have stopped", async () => {
    const e = await env(twoNodes());
    await setTaints(e, 'h2', [noSchedule]);
    await e.m.run();
    assert.deepEqual(unhealthy(e), [], 'p-2 still runs on h2');
    await setPhase(e, 'p-2', 'Failed');
    await e.m.run();
    assert.deepEqual(unhealthy(e), ['h2']);
  });

  it('a taint the pod template tolerates is not a failure', async () => {
    const e = await env(twoNodes({ tolerations: [{ key: 'maintenance', operator: 'Exists' }] }));
    await setTaints(e, 'h2', [noSchedule]);
    await setPhase(e, 'p-2', 'Succeeded');
    await e.m.run();
    assert.deepEqual(unhealthy(e), []);
  });

  it('a taint the assigned flavor tolerates is not a failure', async () => {
    const flavor: ResourceFlavor = {
      apiVersion: 'kueue.x-k8s.io/v1beta2',
      kind: 'ResourceFlavor',
      metadata: { name: 'tas' },
      spec: { topologyName: 't', tolerations: [{ key: 'broken', operator: 'Exists', effect: 'NoExecute' }] },
    };
    const e = await env([flavor, ...twoNodes()]);
    await setTaints(e, 'h2', [noExecute]);
    await setPhase(e, 'p-2', 'Failed');
    await e.m.run();
    assert.deepEqual(unhealthy(e), []);
  });

  it('a NoExecute taint tolerated only for tolerationSeconds fails the node once the pods stopped', async () => {
    const e = await env(twoNodes({ tolerations: [{ key: 'broken', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 60 }] }));
    await setTaints(e, 'h2', [noExecute]);
    await e.m.run();
    assert.deepEqual(unhealthy(e), []);
    await setPhase(e, 'p-2', 'Failed');
    await e.m.run();
    assert.deepEqual(unhealthy(e), ['h2']);
  });

  it('a cordoned node (spec.unschedulable) with only a pending pod there fails, and the pod is terminated for the taint', async () => {
    const objects = [
      node('h1').build(),
      node('h2').build(),
      tasWorkload('wl')
        .podSet('main', 2)
        .assign('main', [
          ['h1', 1],
          ['h2', 1],
        ])
        .build(),
      tasPod('p-1', 'wl').runningOn('h1').build(),
      tasPod('p-2', 'wl').ungatedOn('h2').build(),
    ];
    const e = await env(objects);
    await setTaints(e, 'h2', [], true);
    await e.m.run();
    assert.deepEqual(unhealthy(e), ['h2']);
    const c = pod(e, 'p-2').status!.conditions!.find((x) => x.type === 'TerminatedByKueue')!;
    assert.equal(c.message, TAINT_TERMINATION_MESSAGE);
    assert.equal(pod(e, 'p-1').status?.phase, 'Running');
  });

  it('removing the taint makes the node healthy again', async () => {
    const e = await env(twoNodes());
    await setTaints(e, 'h2', [noExecute]);
    await setPhase(e, 'p-2', 'Failed');
    await e.m.run();
    assert.deepEqual(unhealthy(e), ['h2']);
    await setTaints(e, 'h2', []);
    await e.m.run();
    assert.deepEqual(unhealthy(e), []);
  });
});

describe('node failures with the TopologyUngater', () => {
  it('the replacement of a pod on a failed node stays gated until the assignment names a new node, then goes there', async () => {
    const e = await tasEnv(twoNodes().concat(node('h3').build()), [nodeFailureController(), topologyUngater()]);
    await e.m.run();
    await e.store.delete('Node', undefined, 'h2');
    await e.m.run();
    assert.deepEqual(unhealthy(e), ['h2']);
    assert.equal(pod(e, 'p-2').status?.phase, 'Failed');
    // The job controller replaces the failed pod (gated, from the template).
    await e.store.create(tasPod('p-2b', 'wl').build());
    await e.m.run();
    assert.equal(placement(pod(e, 'p-2b')), 'gated');
    // The scheduler's second pass: h2 -> h3.
    const replaced = tasWorkload('wl')
      .podSet('main', 2)
      .assign('main', [
        ['h1', 1],
        ['h3', 1],
      ])
      .build();
    await retryOnConflict(
      e.store,
      'Workload',
      'default',
      'wl',
      (o) => void (o.status = { ...o.status, admission: replaced.status!.admission }),
      { status: true },
    );
    await e.m.run();
    assert.equal(placement(pod(e, 'p-2b')), 'h3');
    assert.deepEqual(unhealthy(e), []);
    assert.deepEqual(e.m.errors, []);
  });
});

describe('node failures: the hosts of a Workload', () => {
  it('hostsOf is read once per admission: a status write of other fields answers the same, a new admission afresh', async () => {
    const e = await env(twoNodes());
    const before = wl(e);
    assert.deepEqual([...hostsOf(before).keys()].sort(), ['h1', 'h2']);
    // A status write built from the stored object (as the kubelet and the ungater write): the admission is shared.
    await e.store.updateStatus({
      ...before,
      status: { ...before.status, conditions: [{ type: 'PodsReady', status: 'True' }] },
    } as Workload);
    const after = wl(e);
    assert.notEqual(after, before);
    assert.equal(hostsOf(after), hostsOf(before), 'the same answer for the shared admission');
    await retryOnConflict(
      e.store,
      'Workload',
      'default',
      'wl',
      (w) =>
        void (w.status = {
          ...w.status,
          admission: {
            ...w.status!.admission!,
            podSetAssignments: w.status!.admission!.podSetAssignments.map((p) => ({ ...p, topologyAssignment: undefined })),
          },
        }),
      { status: true },
    );
    assert.deepEqual([...hostsOf(wl(e)).keys()], [], 'a new admission is read afresh');
  });
});
