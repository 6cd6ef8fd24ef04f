import { test } from 'node:test';
import assert from 'node:assert/strict';
import { KueueAnnotation, KueueLabel, KueueSchedulingGate } from '../api/keys.ts';
import type { KObject, Pod } from '../api/objects.ts';
import { VolcanoLabel } from '../api/volcano-objects.ts';
import { findCondition } from '../admission/conditions.ts';
import {
  type JobEnv,
  admit,
  createChild,
  createPod,
  hyperJob,
  jobEnv,
  latest,
  podTemplate,
  resourceFlavor,
  setStatus,
  volcanoJob,
} from '../testing/jobs.ts';
import { HyperJobLabel } from '../integrations/hyperjob.ts';

const flavors = [resourceFlavor('default-flavor', { pool: 'a' })];
const gates = (p: Pod) => (p.spec.schedulingGates ?? []).map((g) => g.name);

/** The HyperJob controller: child Volcano Jobs `<hj>-<rj>-<i>`, and Volcano's pods for each. */
function runHyperJob(
  env: JobEnv,
  hj: KObject,
  rjs: { name: string; replicas: number; pods: number }[],
  labelled = true,
): { children: KObject[]; pods: Pod[] } {
  const cur = latest(env, hj);
  const children: KObject[] = [];
  const pods: Pod[] = [];
  for (const rj of rjs) {
    for (let i = 0; i < rj.replicas; i++) {
      const name = `${cur.metadata.name}-${rj.name}-${i}`;
      const labels: Record<string, string> = labelled
        ? { [HyperJobLabel.Name]: cur.metadata.name, [HyperJobLabel.ReplicatedJobName]: rj.name, [HyperJobLabel.JobIndex]: String(i) }
        : {};
      const child = createChild(env, cur, volcanoJob(name, [{ name: 'worker', replicas: rj.pods }], { queue: null, labels }));
      children.push(child);
      for (let p = 0; p < rj.pods; p++) {
        pods.push(
          createPod(env, child, `${name}-worker-${p}`, {
            template: podTemplate(),
            labels: { [VolcanoLabel.JobName]: name, [VolcanoLabel.TaskSpec]: 'worker' },
          }),
        );
      }
    }
  }
  return { children, pods: pods.map((p) => latest(env, p)) };
}

test("HyperJob: one Workload with a PodSet per replicatedJob; child Volcano Jobs get none; their pods are gated as the replicatedJob's PodSet", async () => {
  const env = await jobEnv({}, flavors);
  const hj = await env.create(hyperJob('llm', [{ name: 'trainer', replicas: 2, tasks: [{ name: 'worker', replicas: 2 }] }]));
  const wl = env.workload();
  assert.match(wl.metadata.name, /^hyperjob-llm-[0-9a-f]{5}$/);
  assert.deepEqual(
    wl.spec.podSets.map((p) => [p.name, p.count]),
    [['trainer', 4]],
  );
  const { pods } = runHyperJob(env, hj, [{ name: 'trainer', replicas: 2, pods: 2 }]);
  await env.settle();
  assert.equal(env.workloads().length, 1);
  assert.deepEqual(
    [
      ...new Set(
        pods.map(
          (p) => `${p.metadata.labels?.[KueueLabel.PodSet]} ${p.metadata.annotations?.[KueueAnnotation.Workload]} ${gates(p).join(',')}`,
        ),
      ),
    ],
    [`trainer ${wl.metadata.name} ${KueueSchedulingGate.Admission},${KueueSchedulingGate.Topology}`],
  );
});

test('HyperJob: child Jobs without labels are placed by name; admission ungates every pod of every child', async () => {
  const env = await jobEnv({}, flavors);
  const hj = await env.create(
    hyperJob('llm', [
      { name: 'a', tasks: [{ name: 'worker' }] },
      { name: 'a-b', replicas: 2, tasks: [{ name: 'worker' }] },
    ]),
  );
  const { pods } = runHyperJob(
    env,
    hj,
    [
      { name: 'a', replicas: 1, pods: 1 },
      { name: 'a-b', replicas: 2, pods: 1 },
    ],
    false,
  );
  assert.deepEqual(
    pods.map((p) => [p.metadata.name, p.metadata.labels?.[KueueLabel.PodSet]]),
    [
      ['llm-a-0-worker-0', 'a'],
      ['llm-a-b-0-worker-0', 'a-b'],
      ['llm-a-b-1-worker-0', 'a-b'],
    ],
  );
  admit(env, env.workload());
  await env.settle();
  assert.deepEqual(env.pods().map(gates), [[], [], []]);
});

test('HyperJob: finished when every child Job completed, failed as soon as one child failed', async () => {
  const env = await jobEnv({}, flavors);
  const hj = await env.create(hyperJob('ok', [{ name: 'r', replicas: 2, tasks: [{ name: 'worker' }] }]));
  admit(env, env.workload());
  const { children } = runHyperJob(env, hj, [{ name: 'r', replicas: 2, pods: 1 }]);
  await env.settle();
  setStatus(env, children[0]!, { state: { phase: 'Completed' } });
  await env.settle();
  assert.equal(findCondition(env.workload(), 'Finished'), undefined, 'one child of two is not the HyperJob');
  setStatus(env, children[1]!, { state: { phase: 'Completed' } });
  await env.settle();
  assert.deepEqual(
    [findCondition(env.workload(), 'Finished')?.reason, findCondition(env.workload(), 'Finished')?.message],
    ['Succeeded', 'All 2 Volcano Jobs of the HyperJob completed'],
  );

  const env2 = await jobEnv({}, flavors);
  const bad = await env2.create(hyperJob('bad', [{ name: 'r', replicas: 2, tasks: [{ name: 'worker' }] }]));
  const run = runHyperJob(env2, bad, [{ name: 'r', replicas: 2, pods: 1 }]);
  setStatus(env2, run.children[1]!, { state: { phase: 'Failed' } });
  await env2.settle();
  assert.deepEqual(
    [findCondition(env2.workload(), 'Finished')?.reason, findCondition(env2.workload(), 'Finished')?.message],
    ['Failed', 'Volcano Job bad-r-1 of the HyperJob: Volcano Job failed'],
  );
});
