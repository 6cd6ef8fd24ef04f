// The job reconciler with everything else that runs in the embedded cluster: the scheduler,
// the TopologyUngater, the stand-ins' job controllers, binder, kubelet and garbage collector.
// One job of every framework goes from creation to its end (an LWS serves on).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { HOSTNAME_LABEL, KueueAnnotation, KueueSchedulingGate, TopoqueueAnnotation } from '../api/keys.ts';
import type { KObject, Workload } from '../api/objects.ts';
import { findCondition, isTrue } from '../admission/conditions.ts';
import { cq, flavor } from '../testing/admission.ts';
import { readyNode, testCluster } from '../testing/cluster.ts';
import {
  batchJob,
  embeddedControllers,
  hyperJob,
  leaderWorkerSet,
  localQueue,
  mpiJob,
  namespace,
  podTemplate,
  volcanoJob,
  jobSet,
} from '../testing/jobs.ts';

const RACK = 'cloud.com/rack';

function cluster(): KObject[] {
  const nodes = ['r1', 'r2'].flatMap((rack) =>
    [1, 2, 3].map((i) => readyNode(`${rack}-n${i}`, { cpu: '8', memory: '32Gi', pods: '110' }, { [RACK]: rack, pool: 'a' })),
  );
  return [
    namespace('ns'),
    ...nodes,
    {
      apiVersion: 'kueue.x-k8s.io/v1beta2',
      kind: 'Topology',
      metadata: { name: 'default' },
      spec: { levels: [{ nodeLabel: RACK }, { nodeLabel: HOSTNAME_LABEL }] },
    } as KObject,
    flavor('tas', { topology: 'default', nodeLabels: { pool: 'a' } }),
    cq('cq').quota('tas', { cpu: '48' }).build(),
    localQueue('lq'),
  ];
}

const runs = (d: string) => podTemplate({ cpu: '2', annotations: { [TopoqueueAnnotation.RunDuration]: d } });

test('embedded cluster: a Job, JobSet, MPIJob, Volcano Job and HyperJob are admitted with TAS, started, ungated, run and finished; an LWS serves', async () => {
  const c = await testCluster(embeddedControllers(), cluster());
  const rackTemplate = podTemplate({
    cpu: '2',
    annotations: { [TopoqueueAnnotation.RunDuration]: '30s', [KueueAnnotation.PodSetRequiredTopology]: RACK },
  });
  const jobs: KObject[] = [
    batchJob('train', { parallelism: 2, completions: 2, indexed: true, template: rackTemplate }),
    jobSet('js', [
      { name: 'driver', template: runs('20s') },
      { name: 'workers', replicas: 2, template: runs('40s') },
    ]),
    mpiJob('pi', { workers: 2, runLauncherAsWorker: true, launcher: runs('50s'), worker: podTemplate({ cpu: '2' }) }),
    volcanoJob('vj', [{ name: 'worker', replicas: 2, template: runs('25s') }]),
    hyperJob('hj', [{ name: 'r', replicas: 2, tasks: [{ name: 'worker', template: runs('15s') }] }]),
    leaderWorkerSet('serve', { size: 2, worker: podTemplate({ cpu: '1' }), leader: podTemplate({ cpu: '1' }) }),
  ];
  for (const j of jobs) await c.store.create(j);
  await c.run(15 * 60_000);

  const errors = c.manager.errors.filter((e) => e.controller === 'job');
  assert.deepEqual(errors, []);
  const workloads = c.store.listSync('Workload', { namespace: 'ns' });
  const byOwner = new Map(workloads.map((w) => [`${w.metadata.ownerReferences?.[0]?.kind}/${w.metadata.ownerReferences?.[0]?.name}`, w]));
  assert.equal(workloads.length, 6);
  for (const key of ['Job/train', 'JobSet/js', 'MPIJob/pi', 'Job/vj', 'HyperJob/hj']) {
    const w = byOwner.get(key);
    assert.ok(w, `${key} has a Workload`);
    const fin = findCondition(w, 'Finished');
    assert.deepEqual([key, fin?.status, fin?.reason], [key, 'True', 'Succeeded'], `${key}: ${JSON.stringify(w.status?.conditions)}`);
    assert.equal(findCondition(w, 'PodsReady')?.status, 'True', `${key} reached PodsReady`);
    assert.deepEqual(w.metadata.finalizers ?? [], [], `${key}'s finished Workload keeps no finalizer`);
  }
  const lws = byOwner.get('LeaderWorkerSet/serve')!;
  assert.ok(isTrue(lws, 'Admitted'));
  assert.equal(findCondition(lws, 'PodsReady')?.status, 'True');
  const lwsPods = c.store.listSync('Pod', { namespace: 'ns' }).filter((p) => p.metadata.name.startsWith('serve-'));
  assert.deepEqual(
    lwsPods.map((p) => [p.metadata.name, p.status?.phase, p.spec.schedulingGates ?? []]),
    [
      ['serve-0', 'Running', []],
      ['serve-0-1', 'Running', []],
    ],
  );
  // TAS: the Job's pods were given one rack by the ungater (the topology gate was ours to add).
  const trainPods = c.store.listSync('Pod', { namespace: 'ns' }).filter((p) => p.metadata.name.startsWith('train-'));
  assert.equal(new Set(trainPods.map((p) => p.spec.nodeSelector?.[RACK] ?? p.spec.nodeName?.split('-')[0])).size, 1, 'one rack');
  assert.ok(trainPods.every((p) => !(p.spec.schedulingGates ?? []).some((g) => g.name === KueueSchedulingGate.Topology)));
});

test('embedded cluster: a preempted Job is suspended, its pods go, its quota is released to the preemptor, and it runs again afterwards', async () => {
  const objects: KObject[] = [
    namespace('ns'),
    readyNode('n1', { cpu: '8', memory: '32Gi', pods: '110' }),
    flavor('default'),
    cq('cq').quota('default', { cpu: '8' }).preemption({ withinClusterQueue: 'LowerPriority' }).build(),
    localQueue('lq'),
    { apiVersion: 'kueue.x-k8s.io/v1beta2', kind: 'WorkloadPriorityClass', metadata: { name: 'high' }, value: 1000 } as KObject,
  ];
  const c = await testCluster(embeddedControllers(), objects);
  const low = batchJob('low', { parallelism: 4, completions: 4, template: runs('100s') });
  await c.store.create(low);
  await c.run(10_000);
  assert.equal(c.store.listSync('Pod', { namespace: 'ns' }).filter((p) => p.status?.phase === 'Running').length, 4);
  await c.store.create(
    batchJob('high', { parallelism: 4, completions: 4, labels: { 'kueue.x-k8s.io/priority-class': 'high' }, template: runs('30s') }),
  );
  await c.run(20 * 60_000);

  assert.deepEqual(
    c.manager.errors.filter((e) => e.controller === 'job'),
    [],
  );
  const wl = (name: string) =>
    c.store.listSync('Workload', { namespace: 'ns' }).find((w) => w.metadata.ownerReferences?.[0]?.name === name)!;
  const lowW = wl('low');
  const highW = wl('high');
  assert.equal(findCondition(highW, 'Finished')?.reason, 'Succeeded');
  assert.equal(findCondition(lowW, 'Finished')?.reason, 'Succeeded');
  assert.equal(findCondition(lowW, 'Evicted')?.status, 'False', 'readmitted after its eviction');
  assert.match(findCondition(lowW, 'Evicted')?.message ?? '', /^Previously: /);
  const finishedAt = (w: Workload) => Date.parse(findCondition(w, 'Finished')!.lastTransitionTime!);
  assert.ok(finishedAt(highW) < finishedAt(lowW), 'the preemptor ran first');
});
