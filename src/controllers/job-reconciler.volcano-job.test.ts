import { test } from 'node:test';
import assert from 'node:assert/strict';
import { KueueAnnotation, KueueLabel, KueueSchedulingGate } from '../api/keys.ts';
import type { KObject, Pod } from '../api/objects.ts';
import { VolcanoLabel } from '../api/volcano-objects.ts';
import { findCondition } from '../admission/conditions.ts';
import {
  type JobEnv,
  admit,
  batchJob,
  createPod,
  evict,
  jobEnv,
  latest,
  podTemplate,
  resourceFlavor,
  setPodPhase,
  setStatus,
  volcanoJob,
} from '../testing/jobs.ts';

const flavors = [resourceFlavor('default-flavor', { pool: 'a' })];
const gates = (p: Pod) => (p.spec.schedulingGates ?? []).map((g) => g.name);

/** Volcano's job controller: pods `<job>-<task>-<i>` labelled with the job and task. */
function runVolcanoJob(env: JobEnv, job: KObject, tasks: { name: string; replicas: number }[]): Pod[] {
  const cur = latest(env, job);
  const pods: Pod[] = [];
  for (const t of tasks) {
    for (let i = 0; i < t.replicas; i++) {
      const labels = { [VolcanoLabel.JobName]: cur.metadata.name, [VolcanoLabel.TaskSpec]: t.name };
      pods.push(
        createPod(env, cur, `${cur.metadata.name}-${t.name}-${i}`, {
          template: podTemplate(),
          labels,
          annotations: { 'volcano.sh/task-index': String(i) },
        }),
      );
    }
  }
  return pods.map((p) => latest(env, p));
}

test('Volcano Job: one Workload with a PodSet per task; its pods are gated with their task as PodSet', async () => {
  const env = await jobEnv({}, flavors);
  const job = await env.create(volcanoJob('mpi', [{ name: 'master' }, { name: 'worker', replicas: 2 }]));
  const wl = env.workload();
  assert.match(wl.metadata.name, /^job-mpi-[0-9a-f]{5}$/);
  assert.deepEqual(
    wl.spec.podSets.map((p) => [p.name, p.count]),
    [
      ['master', 1],
      ['worker', 2],
    ],
  );
  const pods = runVolcanoJob(env, job, [
    { name: 'master', replicas: 1 },
    { name: 'worker', replicas: 2 },
  ]);
  assert.deepEqual(
    pods.map((p) => [
      p.metadata.name,
      p.metadata.labels?.[KueueLabel.PodSet],
      p.metadata.annotations?.[KueueAnnotation.Workload],
      gates(p),
    ]),
    [
      ['mpi-master-0', 'master', wl.metadata.name, [KueueSchedulingGate.Admission, KueueSchedulingGate.Topology]],
      ['mpi-worker-0', 'worker', wl.metadata.name, [KueueSchedulingGate.Admission, KueueSchedulingGate.Topology]],
      ['mpi-worker-1', 'worker', wl.metadata.name, [KueueSchedulingGate.Admission, KueueSchedulingGate.Topology]],
    ],
  );
});

test('Volcano Job: admission ungates every pod with the merged info; PodsReady from the pods; phase Completed finishes the Workload', async () => {
  const env = await jobEnv({}, flavors);
  const job = await env.create(volcanoJob('mpi', [{ name: 'worker', replicas: 2 }]));
  const pods = runVolcanoJob(env, job, [{ name: 'worker', replicas: 2 }]);
  admit(env, env.workload());
  await env.settle();
  const ungated = env.pods();
  assert.deepEqual(ungated.map(gates), [[], []]);
  assert.deepEqual(
    ungated.map((p) => p.spec.nodeSelector),
    [{ pool: 'a' }, { pool: 'a' }],
  );
  for (const p of pods) setPodPhase(env, p, 'Running');
  await env.settle();
  assert.equal(findCondition(env.workload(), 'PodsReady')?.reason, 'Started');
  setStatus(env, job, { state: { phase: 'Completed' } });
  await env.settle();
  const fin = findCondition(env.workload(), 'Finished');
  assert.deepEqual([fin?.status, fin?.reason, fin?.message], ['True', 'Succeeded', 'Volcano Job completed']);
});

test('Volcano Job: phase Failed (or Aborted) finishes the Workload as failed; eviction deletes the running pods and clears the reservation', async () => {
  const env = await jobEnv({}, flavors);
  const job = await env.create(volcanoJob('a', [{ name: 'w' }]));
  const wl = admit(env, env.workload());
  const pods = runVolcanoJob(env, job, [{ name: 'w', replicas: 1 }]);
  await env.settle();
  setPodPhase(env, pods[0]!, 'Running');
  evict(env, wl);
  await env.settle();
  assert.deepEqual(env.pods(), []);
  assert.equal(env.workload().status?.admission, undefined);

  const env2 = await jobEnv({}, flavors);
  const aborted = await env2.create(volcanoJob('b', [{ name: 'w' }]));
  setStatus(env2, aborted, { state: { phase: 'Aborted', message: 'aborted by the user' } });
  await env2.settle();
  const fin = findCondition(env2.workload(), 'Finished');
  assert.deepEqual([fin?.reason, fin?.message], ['Failed', 'aborted by the user']);
});

test('Volcano Job and batch Job share the store kind Job: each is handled by its own adapter and webhook', async () => {
  const env = await jobEnv({}, flavors);
  const vj = await env.create(volcanoJob('v', [{ name: 'w' }]));
  const bj = await env.create(batchJob('b'));
  assert.equal((latest(env, bj) as KObject & { spec: { suspend?: boolean } }).spec.suspend, true);
  assert.equal(
    (latest(env, vj) as KObject & { spec: { suspend?: boolean } }).spec.suspend,
    undefined,
    'a Volcano Job is not suspended: its pods are gated',
  );
  assert.deepEqual(
    env
      .workloads()
      .map((w) => w.spec.podSets.map((p) => p.name))
      .sort(),
    [['main'], ['w']],
  );
  assert.deepEqual(env.manager.errors, []);
});
