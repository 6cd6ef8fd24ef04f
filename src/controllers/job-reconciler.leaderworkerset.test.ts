import { test } from 'node:test';
import assert from 'node:assert/strict';
import { KueueAnnotation, KueueLabel, KueueRuntimeKey, KueueSchedulingGate } from '../api/keys.ts';
import type { KObject, Pod, PodTemplateSpec } from '../api/objects.ts';
import { findCondition } from '../admission/conditions.ts';
import { leaderWorkerSetWorkloadName } from '../integrations/leaderworkerset.ts';
import {
  type JobEnv,
  admit,
  createPod,
  editJob,
  evict,
  jobEnv,
  latest,
  leaderWorkerSet,
  namespace,
  podTemplate,
  resourceFlavor,
  setPodPhase,
} from '../testing/jobs.ts';
import { LWSLabel } from '../integrations/leaderworkerset.ts';

type LWS = KObject & {
  spec: { replicas: number; leaderWorkerTemplate: { size: number; leaderTemplate?: PodTemplateSpec; workerTemplate: PodTemplateSpec } };
};

const flavors = [resourceFlavor('default-flavor', { pool: 'a' })];
const gates = (p: Pod) => (p.spec.schedulingGates ?? []).map((g) => g.name);

/** The LWS controller (embedded cluster): leader `<lws>-<g>` and workers `<lws>-<g>-<w>` for one group. */
function createGroup(env: JobEnv, lws: LWS, group: number): Pod[] {
  const cur = latest(env, lws);
  const lwt = cur.spec.leaderWorkerTemplate;
  const pods: Pod[] = [];
  for (let w = 0; w < lwt.size; w++) {
    const name = w === 0 ? `${cur.metadata.name}-${group}` : `${cur.metadata.name}-${group}-${w}`;
    const template = w === 0 && lwt.leaderTemplate ? lwt.leaderTemplate : lwt.workerTemplate;
    const labels = { [LWSLabel.Name]: cur.metadata.name, [LWSLabel.GroupIndex]: String(group), [LWSLabel.WorkerIndex]: String(w) };
    pods.push(createPod(env, cur, name, { template, labels }));
  }
  return pods.map((p) => env.get<Pod>('Pod', p.metadata.name)!);
}

test('LeaderWorkerSet: one Workload per group (leader 1 + worker size-1); the webhook puts pod-index-offset "1" on the worker template when there is a leader', async () => {
  const env = await jobEnv({}, flavors);
  const lws = (await env.create(leaderWorkerSet('serve', { replicas: 2, size: 4 }))) as LWS;
  const solo = (await env.create(leaderWorkerSet('solo', { size: 2, leader: null }))) as LWS;
  assert.equal(latest(env, lws).spec.leaderWorkerTemplate.workerTemplate.metadata?.annotations?.[KueueAnnotation.PodIndexOffset], '1');
  assert.equal(
    latest(env, solo).spec.leaderWorkerTemplate.workerTemplate.metadata?.annotations?.[KueueAnnotation.PodIndexOffset],
    undefined,
  );
  const names = env.workloads().map((w) => w.metadata.name);
  assert.deepEqual(
    names,
    [leaderWorkerSetWorkloadName(lws, 0), leaderWorkerSetWorkloadName(lws, 1), leaderWorkerSetWorkloadName(solo, 0)].sort(),
  );
  const group0 = env.workloads().find((w) => w.metadata.name === leaderWorkerSetWorkloadName(lws, 0))!;
  assert.deepEqual(
    group0.spec.podSets.map((p) => [p.name, p.count]),
    [
      ['leader', 1],
      ['worker', 3],
    ],
  );
  assert.deepEqual(
    group0.spec.podSets.map((p) => p.topologyRequest?.podIndexLabel),
    [undefined, LWSLabel.WorkerIndex],
  );
  assert.equal(group0.metadata.annotations?.[KueueRuntimeKey.IsGroupWorkload], 'true');
  const soloW = env.workloads().find((w) => w.metadata.name === leaderWorkerSetWorkloadName(solo, 0))!;
  assert.deepEqual(
    soloW.spec.podSets.map((p) => [p.name, p.count]),
    [['main', 2]],
  );
});

test("LeaderWorkerSet: its pods are created gated, labelled with their PodSet and annotated with their group's Workload", async () => {
  const env = await jobEnv({}, flavors);
  const lws = (await env.create(leaderWorkerSet('serve', { replicas: 2, size: 3 }))) as LWS;
  const pods = createGroup(env, lws, 1);
  assert.deepEqual(
    pods.map((p) => [
      p.metadata.name,
      p.metadata.labels?.[KueueLabel.PodSet],
      p.metadata.annotations?.[KueueAnnotation.Workload],
      gates(p),
    ]),
    [
      ['serve-1', 'leader', leaderWorkerSetWorkloadName(lws, 1), [KueueSchedulingGate.Admission, KueueSchedulingGate.Topology]],
      ['serve-1-1', 'worker', leaderWorkerSetWorkloadName(lws, 1), [KueueSchedulingGate.Admission, KueueSchedulingGate.Topology]],
      ['serve-1-2', 'worker', leaderWorkerSetWorkloadName(lws, 1), [KueueSchedulingGate.Admission, KueueSchedulingGate.Topology]],
    ],
  );
  assert.equal(pods[1]!.metadata.annotations?.[KueueAnnotation.PodIndexOffset], '1', 'worker pods carry the offset from the template');
});

test("LeaderWorkerSet: admitting one group lifts the admission gate of that group's pods only, merging the info; the topology gate stays only where assigned", async () => {
  const env = await jobEnv({}, flavors);
  const lws = (await env.create(leaderWorkerSet('serve', { replicas: 2, size: 3 }))) as LWS;
  createGroup(env, lws, 0);
  createGroup(env, lws, 1);
  await env.settle();
  const w0 = env.workloads().find((w) => w.metadata.name === leaderWorkerSetWorkloadName(lws, 0))!;
  admit(env, w0, { topology: ['worker'] });
  await env.settle();
  const byName = new Map(env.pods().map((p) => [p.metadata.name, p]));
  assert.deepEqual(gates(byName.get('serve-0')!), []);
  assert.deepEqual(gates(byName.get('serve-0-1')!), [KueueSchedulingGate.Topology]);
  assert.deepEqual(gates(byName.get('serve-1')!), [KueueSchedulingGate.Admission, KueueSchedulingGate.Topology]);
  const leader = byName.get('serve-0')!;
  assert.deepEqual(leader.spec.nodeSelector, { pool: 'a' });
  assert.equal(leader.metadata.labels?.['kueue.x-k8s.io/cluster-queue-name'], 'cq');
  assert.equal(leader.metadata.annotations?.[KueueAnnotation.PodSetUnconstrainedTopology], undefined);
  assert.deepEqual(
    env.events('Started').map((e) => [e.object, e.message]),
    [['LeaderWorkerSet/ns/serve', 'Admitted by clusterQueue cq']],
  );
});

test('LeaderWorkerSet: no more pods of a PodSet are ungated than were admitted', async () => {
  const env = await jobEnv({}, flavors);
  const lws = (await env.create(leaderWorkerSet('serve', { size: 2, leader: null }))) as LWS;
  createGroup(env, lws, 0);
  createPod(env, latest(env, lws), 'serve-0-7', { labels: { [LWSLabel.GroupIndex]: '0', [LWSLabel.WorkerIndex]: '7' } });
  admit(env, env.workload());
  await env.settle();
  assert.deepEqual(
    env.pods().map((p) => [p.metadata.name, gates(p).includes(KueueSchedulingGate.Admission)]),
    [
      ['serve-0', false],
      ['serve-0-1', false],
      ['serve-0-7', true],
    ],
  );
});

test("LeaderWorkerSet: PodsReady per group; an evicted group's running pods are deleted, its reservation cleared, and recreated pods wait gated", async () => {
  const env = await jobEnv({}, flavors);
  const lws = (await env.create(leaderWorkerSet('serve', { replicas: 2, size: 2 }))) as LWS;
  const pods0 = createGroup(env, lws, 0);
  const pods1 = createGroup(env, lws, 1);
  await env.settle();
  const [w0, w1] = [0, 1].map((g) => env.workloads().find((w) => w.metadata.name === leaderWorkerSetWorkloadName(lws, g))!);
  admit(env, w0!);
  admit(env, w1!);
  await env.settle();
  for (const p of [...pods0, ...pods1]) setPodPhase(env, p, 'Running');
  await env.settle();
  const current = (g: number) => env.workloads().find((w) => w.metadata.name === leaderWorkerSetWorkloadName(lws, g))!;
  assert.equal(findCondition(current(0), 'PodsReady')?.reason, 'Started');

  evict(env, w0!);
  await env.settle();
  assert.deepEqual(
    env.pods().map((p) => p.metadata.name),
    ['serve-1', 'serve-1-1'],
    "group 0's pods are deleted, group 1 runs on",
  );
  assert.equal(current(0).status?.admission, undefined);
  assert.ok(current(1).status?.admission);
  assert.deepEqual(
    env.events('Stopped').map((e) => e.object),
    ['LeaderWorkerSet/ns/serve'],
  );

  const again = createGroup(env, lws, 0);
  await env.settle();
  assert.ok(
    again.every((p) => gates(latest(env, p)).includes(KueueSchedulingGate.Admission)),
    'recreated pods wait at the gate',
  );
  assert.equal(env.pods().length, 4, 'gated pods of an evicted group are not deleted again');
});

test('LeaderWorkerSet: scaling down deletes the Workloads of the groups beyond replicas; an LWS never finishes', async () => {
  const env = await jobEnv({}, flavors);
  const lws = (await env.create(leaderWorkerSet('serve', { replicas: 3, size: 2 }))) as LWS;
  assert.equal(env.workloads().length, 3);
  editJob(env, lws, (j) => {
    j.spec.replicas = 1;
  });
  await env.settle();
  assert.deepEqual(
    env.workloads().map((w) => w.metadata.name),
    [leaderWorkerSetWorkloadName(lws, 0)],
  );
  assert.equal(findCondition(env.workload(), 'Finished'), undefined);
});

test('LeaderWorkerSet: pods in an unmanaged namespace are not gated', async () => {
  const env = await jobEnv({ managedJobsNamespaceSelector: { matchLabels: { managed: 'yes' } } }, [...flavors, namespace('ns')]);
  const lws = (await env.create(leaderWorkerSet('serve', { size: 2 }))) as LWS;
  const pods = createGroup(env, lws, 0);
  assert.deepEqual(pods.map(gates), [[], []]);
  assert.deepEqual(env.workloads(), []);
});

test('LeaderWorkerSet: a template change replaces the group Workloads and deletes their running pods', async () => {
  const env = await jobEnv({}, flavors);
  const lws = (await env.create(leaderWorkerSet('serve', { size: 2, worker: podTemplate({ cpu: '1' }) }))) as LWS;
  const before = env.workload();
  const pods = createGroup(env, lws, 0);
  admit(env, before);
  await env.settle();
  for (const p of pods) setPodPhase(env, p, 'Running');
  await env.settle();
  editJob(env, lws, (j) => {
    (j.spec.leaderWorkerTemplate as { workerTemplate: PodTemplateSpec }).workerTemplate.spec.containers[0]!.resources = {
      requests: { cpu: '2' },
    };
  });
  await env.settle();
  assert.notEqual(env.workload().metadata.uid, before.metadata.uid);
  assert.deepEqual(env.pods(), []);
});
