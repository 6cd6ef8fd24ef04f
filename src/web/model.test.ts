import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KObject, Workload } from '../api/objects.ts';
import { VirtualClock } from '../runtime/clock.ts';
import { MemoryStore } from '../runtime/memory-store.ts';
import { mutable } from '../runtime/store.ts';
import { BLOCK, node, pod, RACK } from '../testing/builders.ts';
import { blockerOf, DashboardModel, defaultResource } from './model.ts';

const KUEUE = 'kueue.x-k8s.io/v1beta2';

function workload(name: string, opts: { queue: string; gpus: number; count: number; admittedTo?: string; pending?: string }): Workload {
  const w: Workload = {
    apiVersion: KUEUE,
    kind: 'Workload',
    metadata: { name, namespace: 'team', ownerReferences: [{ apiVersion: 'batch/v1', kind: 'Job', name, uid: 'u', controller: true }] },
    spec: {
      queueName: opts.queue,
      priority: 5,
      podSets: [
        {
          name: 'main',
          count: opts.count,
          template: { spec: { containers: [{ name: 'c', resources: { requests: { 'nvidia.com/gpu': String(opts.gpus) } } }] } },
        },
      ],
    },
    status: { conditions: [] },
  } as unknown as Workload;
  if (opts.admittedTo) {
    w.status!.admission = {
      clusterQueue: opts.admittedTo,
      podSetAssignments: [
        {
          name: 'main',
          count: opts.count,
          flavors: { 'nvidia.com/gpu': 'gpu' },
          resourceUsage: { 'nvidia.com/gpu': String(opts.gpus * opts.count) },
        },
      ],
    };
    w.status!.conditions = [
      { type: 'QuotaReserved', status: 'True', reason: 'QuotaReserved', message: 'ok', lastTransitionTime: '2026-01-01T00:00:00Z' },
    ];
  }
  if (opts.pending)
    w.status!.conditions = [
      { type: 'QuotaReserved', status: 'False', reason: 'Pending', message: opts.pending, lastTransitionTime: '2026-01-01T00:00:00Z' },
    ];
  return w;
}

async function fixture() {
  const clock = new VirtualClock();
  const store = new MemoryStore({ clock });
  const objects: KObject[] = [
    node('n1')
      .labels({ [BLOCK]: 'b1', [RACK]: 'r1' })
      .gpu(8)
      .cpu(64)
      .build(),
    node('n2')
      .labels({ [BLOCK]: 'b1', [RACK]: 'r1' })
      .gpu(8)
      .cpu(64)
      .notReady()
      .build(),
    node('n3')
      .labels({ [BLOCK]: 'b1', [RACK]: 'r2' })
      .gpu(8)
      .cpu(64)
      .unschedulable()
      .taint({ key: 'maint', value: 'yes', effect: 'NoSchedule' })
      .build(),
    {
      apiVersion: KUEUE,
      kind: 'ClusterQueue',
      metadata: { name: 'cq' },
      spec: {
        cohortName: 'org',
        resourceGroups: [
          {
            coveredResources: ['nvidia.com/gpu'],
            flavors: [{ name: 'gpu', resources: [{ name: 'nvidia.com/gpu', nominalQuota: '8', borrowingLimit: '8' }] }],
          },
        ],
      },
    } as KObject,
    { apiVersion: KUEUE, kind: 'LocalQueue', metadata: { name: 'lq', namespace: 'team' }, spec: { clusterQueue: 'cq' } } as KObject,
    workload('big', { queue: 'lq', gpus: 4, count: 3, admittedTo: 'cq' }),
    workload('waits', {
      queue: 'lq',
      gpus: 8,
      count: 2,
      pending: "couldn't assign flavors to pod set main: insufficient unused quota for nvidia.com/gpu in flavor gpu, 8 more needed",
    }),
  ];
  for (const o of objects) store.createSync(o);
  const podOf = (name: string, on: string, gpus: number) => {
    const p = pod(name).on(on).request('nvidia.com/gpu', gpus).request('cpu', '500m').build();
    p.metadata.namespace = 'team';
    p.metadata.annotations = { 'kueue.x-k8s.io/workload': 'big' };
    return p;
  };
  store.createSync(podOf('big-0', 'n1', 4));
  store.createSync(podOf('big-1', 'n1', 4));
  store.createSync(podOf('big-2', 'n3', 4));
  store.createSync({ ...pod('done').on('n3').request('nvidia.com/gpu', 4).phase('Succeeded').build() });
  const model = new DashboardModel({ store, clock });
  await model.start();
  return { store, model };
}

describe('dashboard model', () => {
  it('a node shows the requests of its bound, non-terminal pods against its capacity, and its state', async () => {
    const { model } = await fixture();
    const s = model.state();
    const n = new Map(s.nodes.map((x) => [x.name, x]));
    assert.deepEqual(n.get('n1')!.used, { cpu: 1, 'nvidia.com/gpu': 8, pods: 2 });
    assert.equal(n.get('n1')!.capacity['nvidia.com/gpu'], 8);
    assert.deepEqual(n.get('n1')!.workloads, ['team/big']);
    assert.deepEqual(n.get('n3')!.used['nvidia.com/gpu'], 4, 'the Succeeded pod no longer counts');
    assert.equal(n.get('n2')!.ready, false);
    assert.equal(n.get('n3')!.unschedulable, true);
    assert.deepEqual(n.get('n3')!.taints, ['maint=yes:NoSchedule']);
    assert.equal(s.defaultResource, 'nvidia.com/gpu');
    assert.deepEqual(s.views[0]!.paths.n3, ['n3']);
    model.stop();
  });

  it('queues: usage of admitted Workloads per flavor and resource, borrowing above nominal, pending and admitted counts', async () => {
    const { model } = await fixture();
    const cq = model.state().queues.clusterQueues[0]!;
    assert.deepEqual(cq.resources, [{ flavor: 'gpu', resource: 'nvidia.com/gpu', nominal: 8, borrowingLimit: 8, usage: 12, borrowed: 4 }]);
    assert.equal(cq.pending, 1);
    assert.equal(cq.admitted, 1);
    assert.deepEqual(cq.localQueues, [{ namespace: 'team', name: 'lq', pending: 1, admitted: 1 }]);
    assert.deepEqual(model.state().queues.cohorts, [{ name: 'org', parent: null, clusterQueues: ['cq'] }]);
    model.stop();
  });

  it('a pending Workload carries its reason in full and what blocks it; pods come by rank order with their nodes', async () => {
    const { model } = await fixture();
    const w = new Map(model.state().workloads.map((x) => [x.key, x]));
    const waits = w.get('team/waits')!;
    assert.equal(waits.status, 'Pending');
    assert.match(waits.pendingReason!, /insufficient unused quota for nvidia.com\/gpu in flavor gpu, 8 more needed$/);
    assert.equal(waits.blocker!.kind, 'quota');
    assert.equal(waits.clusterQueue, 'cq');
    assert.equal(waits.kind, 'Job');
    const big = w.get('team/big')!;
    assert.equal(big.status, 'Admitted');
    assert.deepEqual(
      big.podList.map((p) => [p.name, p.node]),
      [
        ['big-0', 'n1'],
        ['big-1', 'n1'],
        ['big-2', 'n3'],
      ],
    );
    model.stop();
  });

  it('a flush sends only what changed since the last one: the node a pod left, the Workload whose condition moved, the queues', async () => {
    const { store, model } = await fixture();
    model.flush();
    assert.equal(model.flush(), undefined, 'nothing changed');
    let told = 0;
    model.onChange(() => told++);
    store.deleteSync('Pod', 'team', 'big-2');
    const w = mutable(store.getSync<Workload>('Workload', 'team', 'waits')!);
    w.status!.conditions = [
      {
        type: 'QuotaReserved',
        status: 'False',
        reason: 'Pending',
        message: 'topology "default" allows to fit only 1 out of 2 pod(s)',
        lastTransitionTime: '2026-01-01T00:01:00Z',
      },
    ];
    store.updateStatusSync(w);
    assert.ok(told >= 2);
    const d = model.flush()!;
    assert.deepEqual(
      d.nodes!.map((n) => [n.name, n.used['nvidia.com/gpu'] ?? 0]),
      [['n3', 0]],
    );
    const waits = d.workloads!.find((x) => x.key === 'team/waits')!;
    assert.equal(waits.blocker!.kind, 'topology');
    assert.deepEqual(
      waits.history.map((c) => c.message.slice(0, 20)),
      ["couldn't assign flav", 'topology "default" a'],
    );
    assert.ok(d.queues);
    assert.equal(d.views, undefined, 'no node joined or left: the views stand');
    store.deleteSync('Node', undefined, 'n2');
    const d2 = model.flush()!;
    assert.deepEqual(d2.removedNodes, ['n2']);
    assert.ok(d2.views && !('n2' in d2.views[0]!.paths));
    model.stop();
  });

  it('what blocks a Workload is read from the scheduler message: quota, topology or other', () => {
    assert.equal(blockerOf("couldn't assign flavors to pod set main: insufficient quota for cpu in flavor f").kind, 'quota');
    assert.equal(
      blockerOf('couldn\'t assign flavors to pod set main: topology "t" doesn\'t allow to fit any of 4 pod(s)').kind,
      'topology',
    );
    assert.equal(blockerOf('waiting for the admission check').kind, 'other');
    assert.equal(defaultResource(['cpu', 'memory']), 'cpu');
    assert.equal(defaultResource(['amd.com/gpu', 'cpu']), 'amd.com/gpu');
  });
});
