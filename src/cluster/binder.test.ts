import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Node, NodeSelectorRequirement, Pod, Toleration } from '../api/objects.ts';
import { retryOnConflict } from '../runtime/store.ts';
import { readyNode, testCluster } from '../testing/cluster.ts';
import { binder } from './binder.ts';

function pendingPod(name: string, requests: Record<string, string> = { cpu: '1' }, spec: Partial<Pod['spec']> = {}): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'default' },
    spec: { containers: [{ name: 'c', resources: { requests } }], ...spec },
    status: { phase: 'Pending' },
  };
}

const nodeOf = (c: { pod(n: string): Pod | undefined }, name: string) => c.pod(name)?.spec.nodeName;
const scheduled = (p: Pod | undefined) => p?.status?.conditions?.find((x) => x.type === 'PodScheduled');

describe('binder', () => {
  it('binds to the first fitting node in name order and packs nodes before moving on', async () => {
    const c = await testCluster(
      [binder()],
      [
        readyNode('b', { cpu: '2', pods: '110' }),
        readyNode('a', { cpu: '2', pods: '110' }),
        pendingPod('p1'),
        pendingPod('p2'),
        pendingPod('p3'),
      ],
    );
    await c.run();
    assert.deepEqual(
      ['p1', 'p2', 'p3'].map((n) => nodeOf(c, n)),
      ['a', 'a', 'b'],
    );
  });

  it('honours nodeSelector and every required node affinity operator, and matchFields metadata.name', async () => {
    const nodes = [
      readyNode('n1', undefined, { zone: 'z1', gen: '3' }),
      readyNode('n2', undefined, { zone: 'z2', gen: '5', gpu: 'yes' }),
      readyNode('n3', undefined, { zone: 'z3', gen: '7' }),
    ];
    const affinity = (expr: NodeSelectorRequirement[], fields: NodeSelectorRequirement[] = []) => ({
      nodeAffinity: {
        requiredDuringSchedulingIgnoredDuringExecution: {
          nodeSelectorTerms: [{ matchExpressions: expr, ...(fields.length ? { matchFields: fields } : {}) }],
        },
      },
    });
    const pods = [
      pendingPod('sel', undefined, { nodeSelector: { zone: 'z2' } }),
      pendingPod('in', undefined, { affinity: affinity([{ key: 'zone', operator: 'In', values: ['z3'] }]) }),
      pendingPod('notin', undefined, { affinity: affinity([{ key: 'zone', operator: 'NotIn', values: ['z1', 'z2'] }]) }),
      pendingPod('exists', undefined, { affinity: affinity([{ key: 'gpu', operator: 'Exists' }]) }),
      pendingPod('dne', undefined, {
        affinity: affinity([
          { key: 'gpu', operator: 'DoesNotExist' },
          { key: 'zone', operator: 'In', values: ['z3'] },
        ]),
      }),
      pendingPod('gt', undefined, { affinity: affinity([{ key: 'gen', operator: 'Gt', values: ['5'] }]) }),
      pendingPod('lt', undefined, { affinity: affinity([{ key: 'gen', operator: 'Lt', values: ['5'] }]) }),
      pendingPod('field', undefined, { affinity: affinity([], [{ key: 'metadata.name', operator: 'In', values: ['n2'] }]) }),
      pendingPod('nowhere', undefined, { nodeSelector: { zone: 'z9' } }),
    ];
    const c = await testCluster([binder()], [...nodes, ...pods]);
    await c.run();
    assert.deepEqual(
      pods.map((p) => [p.metadata.name, nodeOf(c, p.metadata.name)]),
      [
        ['sel', 'n2'],
        ['in', 'n3'],
        ['notin', 'n3'],
        ['exists', 'n2'],
        ['dne', 'n3'],
        ['gt', 'n3'],
        ['lt', 'n1'],
        ['field', 'n2'],
        ['nowhere', undefined],
      ],
    );
    assert.equal(scheduled(c.pod('nowhere'))?.message, "0/3 nodes are available: 3 node(s) didn't match Pod's node affinity/selector.");
  });

  it('skips tainted, cordoned and NotReady nodes unless tolerated; PreferNoSchedule does not block', async () => {
    const tainted = (name: string, effect: 'NoSchedule' | 'NoExecute' | 'PreferNoSchedule'): Node => {
      const n = readyNode(name);
      n.spec = { taints: [{ key: 'dedicated', value: 'ml', effect }] };
      return n;
    };
    const cordoned = readyNode('c-cordoned');
    cordoned.spec = { unschedulable: true };
    const notReady = readyNode('d-notready');
    notReady.status!.conditions = [{ type: 'Ready', status: 'False' }];
    const tol: Toleration[] = [{ key: 'dedicated', operator: 'Equal', value: 'ml', effect: 'NoSchedule' }];
    const c = await testCluster(
      [binder()],
      [
        tainted('a-noschedule', 'NoSchedule'),
        tainted('b-noexecute', 'NoExecute'),
        cordoned,
        notReady,
        pendingPod('plain', { cpu: '100' }),
        pendingPod('tolerates', undefined, { tolerations: tol }),
        pendingPod('tolerates-all', undefined, {
          tolerations: [{ operator: 'Exists' }],
          nodeSelector: { 'kubernetes.io/hostname': 'b-noexecute' },
        }),
      ],
    );
    await c.run();
    assert.equal(nodeOf(c, 'plain'), undefined);
    // Reasons as kube-scheduler sorts them: the "<count> <reason>" strings in order.
    assert.equal(
      scheduled(c.pod('plain'))?.message,
      '0/4 nodes are available: 1 node(s) had untolerated taint {node.kubernetes.io/not-ready: }, 1 node(s) were unschedulable, 2 node(s) had untolerated taint {dedicated: ml}.',
    );
    assert.equal(scheduled(c.pod('plain'))?.reason, 'Unschedulable');
    assert.equal(nodeOf(c, 'tolerates'), 'a-noschedule');
    assert.equal(nodeOf(c, 'tolerates-all'), 'b-noexecute');
    const d = await testCluster([binder()], [tainted('x', 'PreferNoSchedule'), pendingPod('p')]);
    await d.run();
    assert.equal(nodeOf(d, 'p'), 'x');
  });

  it("respects capacity per resource and the pods count, with kube-scheduler's message", async () => {
    const c = await testCluster(
      [binder()],
      [
        readyNode('n1', { cpu: '4', memory: '8Gi', pods: '2' }),
        readyNode('n2', { cpu: '2', memory: '1Gi', pods: '110' }),
        pendingPod('a', { cpu: '1' }),
        pendingPod('b', { cpu: '1' }),
        pendingPod('c', { cpu: '1', memory: '2Gi' }),
        pendingPod('g', { 'nvidia.com/gpu': '1' }),
      ],
    );
    await c.run();
    assert.equal(nodeOf(c, 'a'), 'n1');
    assert.equal(nodeOf(c, 'b'), 'n1');
    assert.equal(nodeOf(c, 'c'), undefined, 'n1 is out of pods, n2 out of memory');
    assert.equal(scheduled(c.pod('c'))?.message, '0/2 nodes are available: 1 Insufficient memory, 1 Too many pods.');
    assert.equal(scheduled(c.pod('g'))?.message, '0/2 nodes are available: 1 Too many pods, 2 Insufficient nvidia.com/gpu.');
  });

  it('a waiting pod is bound once a pod on its node finishes, or once a node is added', async () => {
    const c = await testCluster(
      [binder()],
      [
        readyNode('n1', { cpu: '2', pods: '110' }),
        pendingPod('a', { cpu: '2' }),
        pendingPod('b', { cpu: '2' }),
        pendingPod('big', { cpu: '6' }),
      ],
    );
    await c.run();
    assert.equal(nodeOf(c, 'a'), 'n1');
    assert.equal(nodeOf(c, 'b'), undefined);
    assert.equal(scheduled(c.pod('b'))?.message, '0/1 nodes are available: 1 Insufficient cpu.');
    await c.setPhase('a', 'Succeeded');
    await c.run();
    assert.equal(nodeOf(c, 'b'), 'n1', 'the finished pod frees its cpu');
    await c.store.delete('Pod', 'default', 'b');
    await c.run();
    assert.equal(nodeOf(c, 'big'), undefined);
    await c.store.create(readyNode('n2', { cpu: '8', pods: '110' }));
    await c.run();
    assert.equal(nodeOf(c, 'big'), 'n2');
  });

  it('a waiting pod is bound when its node becomes Ready or is uncordoned', async () => {
    const n = readyNode('n1');
    n.status!.conditions = [{ type: 'Ready', status: 'False' }];
    const c = await testCluster([binder()], [n, pendingPod('p')]);
    await c.run();
    assert.equal(nodeOf(c, 'p'), undefined);
    await retryOnConflict(c.store, 'Node', undefined, 'n1', (x) => void (x.status!.conditions = [{ type: 'Ready', status: 'True' }]), {
      status: true,
    });
    await c.run();
    assert.equal(nodeOf(c, 'p'), 'n1');
  });

  it('gated pods are left alone until their last gate is removed', async () => {
    const c = await testCluster(
      [binder()],
      [readyNode('n1'), pendingPod('g', undefined, { schedulingGates: [{ name: 'kueue.x-k8s.io/topology' }] })],
    );
    await c.run();
    assert.equal(nodeOf(c, 'g'), undefined);
    assert.equal(scheduled(c.pod('g')), undefined, 'a gated pod is not reported unschedulable');
    await retryOnConflict(c.store, 'Pod', 'default', 'g', (p) => void (p.spec.schedulingGates = []));
    await c.run();
    assert.equal(nodeOf(c, 'g'), 'n1');
  });

  it('pods bound by someone else count against capacity; terminal ones do not', async () => {
    const running = pendingPod('running', { cpu: '3' }, { nodeName: 'n1' });
    running.status = { phase: 'Running' };
    const done = pendingPod('done', { cpu: '4' }, { nodeName: 'n1' });
    done.status = { phase: 'Succeeded' };
    const c = await testCluster(
      [binder()],
      [readyNode('n1', { cpu: '4', pods: '110' }), running, done, pendingPod('p', { cpu: '2' }), pendingPod('q', { cpu: '1' })],
    );
    await c.run();
    assert.equal(nodeOf(c, 'p'), undefined);
    assert.equal(nodeOf(c, 'q'), 'n1');
  });

  it('binds a backlog with about one capacity check per pod and node, not one scan of all nodes per pod', async () => {
    const b = binder();
    const nodes: Node[] = [];
    for (let i = 0; i < 500; i++) nodes.push(readyNode(`n${String(i).padStart(4, '0')}`, { cpu: '4', pods: '110' }));
    const pods: Pod[] = [];
    for (let i = 0; i < 2000; i++) pods.push(pendingPod(`p${i}`, { cpu: '1' }));
    for (let i = 0; i < 10; i++) pods.push(pendingPod(`extra${i}`, { cpu: '1' }));
    const c = await testCluster([b], [...nodes, ...pods]);
    let checks = 0;
    const fits = b.state.nodes.fits.bind(b.state.nodes);
    b.state.nodes.fits = (n, r) => (checks++, fits(n, r));
    await c.run();
    const bound = c.pods().filter((p) => p.spec.nodeName);
    assert.equal(bound.length, 2000);
    assert.ok(checks < 2 * (2010 + 500), `capacity checks: ${checks}`);
    for (let i = 0; i < 500; i++) assert.deepEqual(b.state.free(`n${String(i).padStart(4, '0')}`)?.cpu, 0);
    // Freeing one node binds waiting pods there, without rescanning every node per pod.
    checks = 0;
    for (const p of bound.filter((x) => x.spec.nodeName === 'n0250')) await c.setPhase(p.metadata.name, 'Succeeded');
    await c.run();
    assert.equal(c.pods().filter((p) => p.metadata.name.startsWith('extra') && p.spec.nodeName === 'n0250').length, 4);
    assert.ok(checks < 600, `capacity checks after the release: ${checks}`);
  });
});
