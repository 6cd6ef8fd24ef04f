import { test } from 'node:test';
import assert from 'node:assert/strict';
import { KueueLabel, KueueSchedulingGate, PodIndexLabel } from '../api/keys.ts';
import type { KObject, PodTemplateSpec } from '../api/objects.ts';
import { findCondition } from '../admission/conditions.ts';
import {
  admit,
  batchJob,
  createChild,
  createPod,
  evict,
  jobEnv,
  jobSet,
  latest,
  podTemplate,
  resourceFlavor,
  setJobCondition,
  setPodPhase,
} from '../testing/jobs.ts';
import { JobSetLabel } from '../integrations/jobset.ts';

type JobSet = KObject & {
  spec: { suspend?: boolean; replicatedJobs: { name: string; replicas: number; template: { spec: { template: PodTemplateSpec } } }[] };
};

const flavors = [resourceFlavor('default-flavor', { pool: 'a' })];

/** What the JobSet controller does when resumed: child Jobs `<js>-<rj>-<i>` from the current templates, and their pods. */
function runJobSet(env: Awaited<ReturnType<typeof jobEnv>>, js: JobSet) {
  const cur = latest(env, js);
  const pods = [];
  for (const rj of cur.spec.replicatedJobs) {
    for (let i = 0; i < rj.replicas; i++) {
      const name = `${cur.metadata.name}-${rj.name}-${i}`;
      const labels = {
        [JobSetLabel.JobSetName]: cur.metadata.name,
        [JobSetLabel.ReplicatedJobName]: rj.name,
        [JobSetLabel.JobIndex]: String(i),
      };
      const job = createChild(env, cur, {
        ...batchJob(name, { queue: null, labels }),
        spec: { ...rj.template.spec, completionMode: 'Indexed' },
      } as KObject);
      pods.push(
        createPod(env, job, `${name}-0-abcde`, {
          template: rj.template.spec.template,
          labels: { ...labels, [PodIndexLabel.JobCompletionIndex]: '0' },
        }),
      );
    }
  }
  return pods;
}

test('JobSet: suspended on create; one Workload with a PodSet per replicatedJob, count = replicas x pods per Job, Indexed ranks and job-index sub-groups', async () => {
  const env = await jobEnv({}, flavors);
  const js = (await env.create(jobSet('train', [{ name: 'Driver' }, { name: 'workers', replicas: 2, parallelism: 4 }]))) as JobSet;
  assert.equal(latest(env, js).spec.suspend, true);
  const wl = env.workload();
  assert.match(wl.metadata.name, /^jobset-train-[0-9a-f]{5}$/);
  assert.deepEqual(
    wl.spec.podSets.map((p) => [p.name, p.count]),
    [
      ['driver', 1],
      ['workers', 8],
    ],
  );
  assert.deepEqual(wl.spec.podSets[1]!.topologyRequest, {
    podIndexLabel: PodIndexLabel.JobCompletionIndex,
    subGroupIndexLabel: PodIndexLabel.JobSetJobIndex,
    subGroupCount: 2,
  });
});

test("JobSet: admission merges each PodSet's info into its replicatedJob template (the topology gate only where assigned) and resumes it", async () => {
  const env = await jobEnv({}, flavors);
  const js = (await env.create(
    jobSet('train', [
      { name: 'driver', template: podTemplate({ labels: { role: 'driver' } }) },
      {
        name: 'workers',
        replicas: 2,
        template: podTemplate({ annotations: { 'kueue.x-k8s.io/podset-required-topology': 'cloud.com/rack' } }),
      },
    ]),
  )) as JobSet;
  admit(env, env.workload(), { topology: ['workers'] });
  await env.settle();
  const cur = latest(env, js);
  assert.equal(cur.spec.suspend, false);
  const [driver, workers] = cur.spec.replicatedJobs.map((rj) => rj.template.spec.template);
  assert.deepEqual([driver!.metadata?.labels?.[KueueLabel.PodSet], workers!.metadata?.labels?.[KueueLabel.PodSet]], ['driver', 'workers']);
  assert.equal(driver!.metadata?.labels?.role, 'driver');
  assert.deepEqual([driver!.spec.nodeSelector, workers!.spec.nodeSelector], [{ pool: 'a' }, { pool: 'a' }]);
  assert.deepEqual([driver!.spec.schedulingGates, workers!.spec.schedulingGates], [undefined, [{ name: KueueSchedulingGate.Topology }]]);
});

test('JobSet: PodsReady counts the pods of its child Jobs; Completed finishes the Workload', async () => {
  const env = await jobEnv({}, flavors);
  const js = (await env.create(jobSet('train', [{ name: 'workers', replicas: 2 }]))) as JobSet;
  admit(env, env.workload());
  await env.settle();
  const pods = runJobSet(env, js);
  await env.settle();
  assert.equal(env.get('Job', 'train-workers-0')!.metadata.ownerReferences?.[0]?.kind, 'JobSet');
  assert.equal(findCondition(env.workload(), 'PodsReady')?.reason, 'WaitForStart');
  for (const p of pods) setPodPhase(env, p, 'Running');
  await env.settle();
  assert.equal(findCondition(env.workload(), 'PodsReady')?.reason, 'Started');
  assert.equal(env.workloads().length, 1, 'child Jobs get no Workload of their own');
  setJobCondition(env, js, 'Completed', 'jobset completed successfully');
  await env.settle();
  const fin = findCondition(env.workload(), 'Finished');
  assert.deepEqual([fin?.reason, fin?.message], ['Succeeded', 'jobset completed successfully']);
});

test("JobSet: an evicted JobSet is suspended and its templates restored; the reservation is cleared once the child Jobs' pods are gone", async () => {
  const env = await jobEnv({}, flavors);
  const js = (await env.create(jobSet('train', [{ name: 'workers', replicas: 2 }]))) as JobSet;
  const wl = admit(env, env.workload(), { topology: ['workers'] });
  await env.settle();
  const pods = runJobSet(env, js);
  for (const p of pods) setPodPhase(env, p, 'Running');
  await env.settle();
  evict(env, wl, 'PodsReadyTimeout', 'Exceeded the PodsReady timeout ns/x');
  await env.settle();
  const cur = latest(env, js);
  assert.equal(cur.spec.suspend, true);
  assert.deepEqual(cur.spec.replicatedJobs[0]!.template.spec.template, wl.spec.podSets[0]!.template);
  assert.ok(env.workload().status?.admission);
  for (const name of ['train-workers-0', 'train-workers-1']) env.store.deleteSync('Job', 'ns', name);
  for (const p of pods) env.store.deleteSync('Pod', 'ns', p.metadata.name);
  await env.settle();
  const cleared = env.workload();
  assert.equal(cleared.status?.admission, undefined);
  assert.equal(findCondition(cleared, 'Requeued')?.status, 'False', 'a PodsReady timeout waits for its backoff');
  assert.deepEqual(env.manager.errors, []);
});
