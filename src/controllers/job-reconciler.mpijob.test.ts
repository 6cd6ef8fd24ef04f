import { test } from 'node:test';
import assert from 'node:assert/strict';
import { KueueAnnotation, KueueLabel, KueueSchedulingGate, PodIndexLabel } from '../api/keys.ts';
import type { KObject, PodTemplateSpec } from '../api/objects.ts';
import { findCondition } from '../admission/conditions.ts';
import { MPIJobLabel } from '../integrations/mpijob.ts';
import {
  admit,
  batchJob,
  createChild,
  createPod,
  evict,
  jobEnv,
  latest,
  mpiJob,
  podTemplate,
  resourceFlavor,
  setJobCondition,
  setPodPhase,
} from '../testing/jobs.ts';

type MPIJob = KObject & {
  spec: {
    runPolicy?: { suspend?: boolean };
    mpiReplicaSpecs: Record<'Launcher' | 'Worker', { replicas: number; template: PodTemplateSpec }>;
  };
};

const flavors = [resourceFlavor('default-flavor', { pool: 'a' })];
const offsetOf = (t: PodTemplateSpec | undefined) => t?.metadata?.annotations?.[KueueAnnotation.PodIndexOffset];

/** The MPI operator: `<name>-launcher` and `<name>-worker-<i>` from the current templates. */
function runMPIJob(env: Awaited<ReturnType<typeof jobEnv>>, job: MPIJob) {
  const cur = latest(env, job);
  const specs = cur.spec.mpiReplicaSpecs;
  const labels = (type: string, i: number) => ({
    [MPIJobLabel.JobName]: cur.metadata.name,
    [MPIJobLabel.ReplicaType]: type,
    [PodIndexLabel.KubeflowReplicaIndex]: String(i),
  });
  const pods = [createPod(env, cur, `${cur.metadata.name}-launcher`, { template: specs.Launcher.template, labels: labels('launcher', 0) })];
  for (let i = 0; i < specs.Worker.replicas; i++) {
    pods.push(createPod(env, cur, `${cur.metadata.name}-worker-${i}`, { template: specs.Worker.template, labels: labels('worker', i) }));
  }
  return pods;
}

test('MPIJob: runPolicy.suspend is set on create; the Workload has PodSets launcher then worker', async () => {
  const env = await jobEnv({}, flavors);
  const job = (await env.create(mpiJob('pi', { workers: 3 }))) as MPIJob;
  assert.equal(latest(env, job).spec.runPolicy?.suspend, true);
  const wl = env.workload();
  assert.match(wl.metadata.name, /^mpijob-pi-[0-9a-f]{5}$/);
  assert.deepEqual(
    wl.spec.podSets.map((p) => [p.name, p.count]),
    [
      ['launcher', 1],
      ['worker', 3],
    ],
  );
  assert.deepEqual(
    wl.spec.podSets.map((p) => p.topologyRequest?.podIndexLabel),
    [PodIndexLabel.KubeflowReplicaIndex, PodIndexLabel.KubeflowReplicaIndex],
  );
});

test('MPIJob with runLauncherAsWorker: the webhook puts pod-index-offset "1" on the worker template (not with a PodSet group, not without the flag)', async () => {
  const env = await jobEnv({}, flavors);
  const a = (await env.create(mpiJob('a', { runLauncherAsWorker: true }))) as MPIJob;
  const b = (await env.create(mpiJob('b'))) as MPIJob;
  const grouped = podTemplate({
    annotations: { [KueueAnnotation.PodSetGroupName]: 'g', [KueueAnnotation.PodSetRequiredTopology]: 'cloud.com/rack' },
  });
  const c = (await env.create(
    mpiJob('c', {
      runLauncherAsWorker: true,
      worker: grouped,
      launcher: podTemplate({
        annotations: { [KueueAnnotation.PodSetGroupName]: 'g', [KueueAnnotation.PodSetRequiredTopology]: 'cloud.com/rack' },
      }),
    }),
  )) as MPIJob;
  assert.deepEqual(
    [a, b, c].map((j) => [
      offsetOf(latest(env, j).spec.mpiReplicaSpecs.Launcher.template),
      offsetOf(latest(env, j).spec.mpiReplicaSpecs.Worker.template),
    ]),
    [
      [undefined, '1'],
      [undefined, undefined],
      [undefined, undefined],
    ],
  );
  const wlOf = (j: KObject) => env.workloads().find((w) => w.metadata.ownerReferences?.[0]?.uid === j.metadata.uid)!;
  assert.equal(offsetOf(wlOf(a).spec.podSets[1]!.template), '1');
  assert.equal(offsetOf(wlOf(b).spec.podSets[1]!.template), undefined);
});

test('MPIJob: admission merges into the launcher and worker templates and resumes; PodsReady from its pods; Succeeded finishes the Workload', async () => {
  const env = await jobEnv({}, flavors);
  const job = (await env.create(mpiJob('pi', { workers: 2, runLauncherAsWorker: true }))) as MPIJob;
  admit(env, env.workload(), { topology: ['worker'] });
  await env.settle();
  const cur = latest(env, job);
  assert.equal(cur.spec.runPolicy?.suspend, false);
  const { Launcher, Worker } = cur.spec.mpiReplicaSpecs;
  assert.deepEqual(
    [Launcher.template.metadata?.labels?.[KueueLabel.PodSet], Worker.template.metadata?.labels?.[KueueLabel.PodSet]],
    ['launcher', 'worker'],
  );
  assert.deepEqual(
    [Launcher.template.spec.schedulingGates, Worker.template.spec.schedulingGates],
    [undefined, [{ name: KueueSchedulingGate.Topology }]],
  );
  assert.equal(offsetOf(Worker.template), '1', 'the offset stays for the ungater');

  const pods = runMPIJob(env, job);
  for (const p of pods) setPodPhase(env, p, 'Running');
  await env.settle();
  assert.equal(findCondition(env.workload(), 'PodsReady')?.reason, 'Started');
  setJobCondition(env, job, 'Failed', 'MPIJob pi is failed because 1 Worker replica(s) failed.');
  await env.settle();
  const fin = findCondition(env.workload(), 'Finished');
  assert.deepEqual([fin?.reason, fin?.message], ['Failed', 'MPIJob pi is failed because 1 Worker replica(s) failed.']);
});

test('MPIJob: a launcher run as a batch Job is left to the MPIJob and its pods count for it; eviction suspends and restores', async () => {
  const env = await jobEnv({}, flavors);
  const job = (await env.create(mpiJob('pi', { workers: 1 }))) as MPIJob;
  const wl = admit(env, env.workload());
  await env.settle();
  const cur = latest(env, job);
  const launcherJob = createChild(env, cur, batchJob('pi-launcher', { queue: null }));
  await env.settle();
  assert.equal((latest(env, launcherJob) as KObject & { spec: { suspend?: boolean } }).spec.suspend, undefined);
  const pods = [
    createPod(env, launcherJob, 'pi-launcher-abcde'),
    createPod(env, cur, 'pi-worker-0', { template: cur.spec.mpiReplicaSpecs.Worker.template }),
  ];
  for (const p of pods) setPodPhase(env, p, 'Running');
  await env.settle();
  assert.equal(findCondition(env.workload(), 'PodsReady')?.reason, 'Started');
  assert.equal(env.workloads().length, 1);

  evict(env, wl);
  await env.settle();
  const stopped = latest(env, job);
  assert.equal(stopped.spec.runPolicy?.suspend, true);
  assert.deepEqual(stopped.spec.mpiReplicaSpecs.Worker.template, wl.spec.podSets[1]!.template);
  for (const p of pods) env.store.deleteSync('Pod', 'ns', p.metadata.name);
  await env.settle();
  assert.equal(env.workload().status?.admission, undefined);
  assert.deepEqual(env.manager.errors, []);
});
