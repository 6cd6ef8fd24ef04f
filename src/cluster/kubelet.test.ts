import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Node, Pod } from '../api/objects.ts';
import { retryOnConflict } from '../runtime/store.ts';
import { readyNode, testCluster, type TestCluster } from '../testing/cluster.ts';
import { kubelet } from './kubelet.ts';

function boundPod(name: string, node: string | undefined, annotations: Record<string, string> = {}, extra: Partial<Pod> = {}): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'default', annotations },
    spec: { containers: [{ name: 'main', image: 'busybox' }], ...(node ? { nodeName: node } : {}) },
    status: { phase: 'Pending' },
    ...extra,
  };
}

const phase = (c: TestCluster, name: string) => c.pod(name)?.status?.phase;
const condition = (c: TestCluster, name: string, type: string) => c.pod(name)?.status?.conditions?.find((x) => x.type === type);

async function setNode(c: TestCluster, name: string, change: (n: Node) => void, status = false) {
  await retryOnConflict(c.store, 'Node', undefined, name, (n) => void change(n), { status });
}

describe('kubelet', () => {
  it('runs a bound pod at once (Running, Ready, startTime) and ends it after its run duration', async () => {
    const c = await testCluster(
      [kubelet()],
      [readyNode('n1'), boundPod('p', 'n1', { 'topoqueue.io/run-duration': '90s' }), boundPod('unbound', undefined)],
    );
    await c.run(0);
    assert.equal(phase(c, 'p'), 'Running');
    const p = c.pod('p')!;
    assert.equal(p.status?.startTime, '2026-01-01T00:00:00Z');
    for (const t of ['Initialized', 'Ready', 'ContainersReady', 'PodScheduled']) assert.equal(condition(c, 'p', t)?.status, 'True', t);
    assert.deepEqual((p.status?.containerStatuses as { state: object }[])[0]!.state, { running: { startedAt: '2026-01-01T00:00:00Z' } });
    assert.equal(phase(c, 'unbound'), 'Pending', 'an unbound pod is not run');
    await c.run(89_999);
    assert.equal(phase(c, 'p'), 'Running');
    await c.run(1);
    assert.equal(phase(c, 'p'), 'Succeeded');
    assert.equal(c.elapsed(), 90);
    assert.equal(condition(c, 'p', 'Ready')?.status, 'False');
    assert.equal(
      (c.pod('p')!.status?.containerStatuses as { state: { terminated: { reason: string; exitCode: number } } }[])[0]!.state.terminated
        .reason,
      'Completed',
    );
  });

  it('the default run duration is 60s', async () => {
    const c = await testCluster([kubelet()], [readyNode('n1'), boundPod('p', 'n1')]);
    await c.run();
    assert.equal(phase(c, 'p'), 'Succeeded');
    assert.equal(c.elapsed(), 60);
  });

  it('fail-after fails the pod with reason Error when it comes before the run duration', async () => {
    const c = await testCluster(
      [kubelet()],
      [
        readyNode('n1'),
        boundPod('f', 'n1', { 'topoqueue.io/run-duration': '10m', 'topoqueue.io/fail-after': '2m30s' }),
        boundPod('late', 'n1', { 'topoqueue.io/run-duration': '1m', 'topoqueue.io/fail-after': '5m' }),
      ],
    );
    await c.run(60_000);
    assert.equal(phase(c, 'late'), 'Succeeded', 'the run ended before the failure');
    await c.run();
    assert.equal(phase(c, 'f'), 'Failed');
    assert.equal(c.elapsed(), 150);
    const term = (c.pod('f')!.status?.containerStatuses as { state: { terminated: { reason: string; exitCode: number } } }[])[0]!.state
      .terminated;
    assert.equal(term.reason, 'Error');
    assert.equal(term.exitCode, 1);
  });

  it('an unreadable run duration gets a Warning Event and the default', async () => {
    const c = await testCluster([kubelet()], [readyNode('n1'), boundPod('p', 'n1', { 'topoqueue.io/run-duration': 'ten minutes' })]);
    await c.run();
    assert.equal(c.elapsed(), 60);
    const e = c.manager.events.about('Pod/default/p').find((x) => x.reason === 'InvalidAnnotation');
    assert.match(e?.message ?? '', /topoqueue\.io\/run-duration="ten minutes" is not a Go duration/);
  });

  it('a node NotReady makes its pods not Ready and holds them; Ready again, they go on (and end if their time has come)', async () => {
    const c = await testCluster([kubelet()], [readyNode('n1'), boundPod('p', 'n1', { 'topoqueue.io/run-duration': '100s' })]);
    await c.run(10_000);
    await setNode(c, 'n1', (n) => void (n.status!.conditions = [{ type: 'Ready', status: 'False', reason: 'NodeStatusUnknown' }]), true);
    await c.run(0);
    assert.equal(condition(c, 'p', 'Ready')?.status, 'False');
    assert.equal(condition(c, 'p', 'Ready')?.reason, 'NodeNotReady');
    await c.run(200_000);
    assert.equal(phase(c, 'p'), 'Running', 'no progress while the node is NotReady');
    await setNode(c, 'n1', (n) => void (n.status!.conditions = [{ type: 'Ready', status: 'True' }]), true);
    await c.run(0);
    assert.equal(phase(c, 'p'), 'Succeeded');
    assert.equal(c.elapsed(), 210);
  });

  it('a pending pod on a NotReady node waits for the node', async () => {
    const n = readyNode('n1');
    n.status!.conditions = [{ type: 'Ready', status: 'False' }];
    const c = await testCluster([kubelet()], [n, boundPod('p', 'n1')]);
    await c.run(30_000);
    assert.equal(phase(c, 'p'), 'Pending');
    await setNode(c, 'n1', (x) => void (x.status!.conditions = [{ type: 'Ready', status: 'True' }]), true);
    await c.run(0);
    assert.equal(phase(c, 'p'), 'Running');
  });

  it('the pods of a deleted node are deleted; a pod bound to a node never seen is deleted after 40s', async () => {
    const held = boundPod('held', 'n1');
    held.metadata.finalizers = ['example.com/keep'];
    const c = await testCluster(
      [kubelet()],
      [readyNode('n1'), boundPod('p', 'n1', { 'topoqueue.io/run-duration': '1h' }), held, boundPod('ghost', 'nowhere')],
    );
    await c.run(1000);
    await c.store.delete('Node', undefined, 'n1');
    await c.run(0);
    assert.equal(c.pod('p'), undefined);
    assert.equal(phase(c, 'held'), 'Failed', 'a pod held by a finalizer is terminated');
    assert.ok(c.pod('ghost'));
    await c.run(38_999);
    assert.ok(c.pod('ghost'));
    await c.run(1);
    assert.equal(c.pod('ghost'), undefined);
  });

  it('an untolerated NoExecute taint deletes the pod; tolerationSeconds delays it; NoSchedule does not', async () => {
    const tolerant = boundPod('tolerant', 'n1', { 'topoqueue.io/run-duration': '1h' });
    tolerant.spec.tolerations = [{ key: 'maintenance', operator: 'Exists', effect: 'NoExecute' }];
    const patient = boundPod('patient', 'n1', { 'topoqueue.io/run-duration': '1h' });
    patient.spec.tolerations = [{ key: 'maintenance', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 30 }];
    const c = await testCluster(
      [kubelet()],
      [
        readyNode('n1'),
        readyNode('n2'),
        boundPod('plain', 'n1', { 'topoqueue.io/run-duration': '1h' }),
        tolerant,
        patient,
        boundPod('other', 'n2', { 'topoqueue.io/run-duration': '1h' }),
      ],
    );
    await c.run(5000);
    await setNode(c, 'n1', (n) => void (n.spec = { taints: [{ key: 'maintenance', effect: 'NoExecute' }] }));
    await setNode(c, 'n2', (n) => void (n.spec = { taints: [{ key: 'maintenance', effect: 'NoSchedule' }] }));
    await c.run(0);
    assert.equal(c.pod('plain'), undefined);
    assert.ok(c.pod('patient'));
    assert.equal(phase(c, 'tolerant'), 'Running');
    assert.equal(phase(c, 'other'), 'Running');
    await c.run(29_999);
    assert.ok(c.pod('patient'));
    await c.run(1);
    assert.equal(c.pod('patient'), undefined);
    assert.equal(c.elapsed(), 35);
    assert.equal(c.manager.events.about('Pod/default/plain')[0]?.message, 'Marking for deletion Pod default/plain');
  });

  it('a pod being deleted under a finalizer is terminated (Failed), bound or not', async () => {
    const a = boundPod('a', 'n1', { 'topoqueue.io/run-duration': '1h' });
    a.metadata.finalizers = ['x/y'];
    const b = boundPod('b', undefined);
    b.metadata.finalizers = ['x/y'];
    const c = await testCluster([kubelet()], [readyNode('n1'), a, b]);
    await c.run(1000);
    await c.store.delete('Pod', 'default', 'a');
    await c.store.delete('Pod', 'default', 'b');
    await c.run(0);
    assert.equal(phase(c, 'a'), 'Failed');
    assert.equal(phase(c, 'b'), 'Failed');
  });

  it('serving pods (of a LeaderWorkerSet, or a serving pod group) run until deleted unless they name a run duration', async () => {
    const lws = boundPod('lws-0', 'n1');
    lws.metadata.ownerReferences = [
      { apiVersion: 'leaderworkerset.x-k8s.io/v1', kind: 'LeaderWorkerSet', name: 'lws', uid: 'u1', controller: true },
    ];
    const timed = boundPod('lws-1', 'n1', { 'topoqueue.io/run-duration': '5m' });
    timed.metadata.ownerReferences = lws.metadata.ownerReferences;
    const group = boundPod('srv', 'n1', { 'kueue.x-k8s.io/pod-group-serving': 'true' });
    const c = await testCluster([kubelet()], [readyNode('n1'), lws, timed, group]);
    await c.run();
    assert.equal(phase(c, 'lws-0'), 'Running');
    assert.equal(phase(c, 'srv'), 'Running');
    assert.equal(phase(c, 'lws-1'), 'Succeeded');
    assert.equal(c.elapsed(), 300, 'idle once only the serving pods are left');
  });
});
