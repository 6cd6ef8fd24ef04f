// The generic job reconciler and the job webhooks, through batch/v1 Jobs (the other
// frameworks' specifics are in jobs/*.test.ts). The tests play the scheduler (admit, evict)
// and the cluster (pods, Job conditions) by writing the objects themselves.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { KueueAnnotation, KueueLabel, KueueRuntimeKey, KueueSchedulingGate } from '../api/keys.ts';
import type { KObject, Pod, PodTemplateSpec, Workload } from '../api/objects.ts';
import { WorkloadCondition, findCondition, isTrue } from '../admission/conditions.ts';
import { JOB_MIN_PARALLELISM_ANNOTATION } from '../integrations/job.ts';
import { workloadNameForOwner } from '../integrations/workload-name.ts';
import { jobReadsChange } from './job-reconciler.ts';
import { InvalidError, mutable } from '../runtime/store.ts';
import {
  admit,
  batchJob,
  createChild,
  createPod,
  editJob,
  evict,
  jobEnv,
  jobSet,
  latest,
  localQueue,
  namespace,
  podTemplate,
  resourceFlavor,
  setJobCondition,
  setPodPhase,
  setStatus,
} from '../testing/jobs.ts';

type Job = KObject & { spec: { suspend?: boolean; parallelism?: number; template: PodTemplateSpec } };

const flavors = [resourceFlavor('default-flavor', { 'cloud.com/pool': 'a' }, [{ key: 'gpu', operator: 'Exists', effect: 'NoSchedule' }])];

test('a Job with a queue name is suspended on create and gets one Workload job-<name>-<hash> with PodSet main, owned by the Job', async () => {
  const env = await jobEnv({}, flavors);
  const job = (await env.create(batchJob('train', { parallelism: 3 }))) as Job;
  assert.equal(latest(env, job).spec.suspend, true);
  const wl = env.workload();
  assert.equal(wl.metadata.name, workloadNameForOwner({ kind: 'Job', group: 'batch', name: 'train', uid: job.metadata.uid! }));
  assert.deepEqual(
    wl.spec.podSets.map((p) => [p.name, p.count]),
    [['main', 3]],
  );
  assert.equal(wl.spec.podSets[0]!.topologyRequest, undefined, 'NonIndexed: no pod index label');
  assert.equal(wl.spec.queueName, 'lq');
  assert.deepEqual(wl.metadata.ownerReferences, [
    { apiVersion: 'batch/v1', kind: 'Job', name: 'train', uid: job.metadata.uid, controller: true },
  ]);
  assert.deepEqual(wl.metadata.finalizers, [KueueRuntimeKey.ResourceInUseFinalizer]);
  assert.deepEqual(
    env.events('CreatedWorkload').map((e) => [e.object, e.message]),
    [['Job/ns/train', `Created Workload: ns/${wl.metadata.name}`]],
  );
  // Without waitForPodsReady nothing else is written; with it (the default) PodsReady=False/WaitForStart.
  assert.equal(findCondition(wl, WorkloadCondition.PodsReady)?.reason, 'WaitForStart');
  await env.create(batchJob('indexed', { parallelism: 2, completions: 2, indexed: true }));
  const indexed = env.workloads().find((w) => w.metadata.name.startsWith('job-indexed-'))!;
  assert.equal(indexed.spec.podSets[0]!.topologyRequest?.podIndexLabel, 'batch.kubernetes.io/job-completion-index');
  assert.deepEqual(env.manager.errors, []);
});

test('a Job without a queue name, or in an unmanaged namespace, is left alone: not suspended, no Workload', async () => {
  const env = await jobEnv({ managedJobsNamespaceSelector: { matchLabels: { team: 'ml' } } }, [
    namespace('ns', { team: 'ml' }),
    namespace('other'),
  ]);
  const noQueue = (await env.create(batchJob('plain', { queue: null }))) as Job;
  const elsewhere = (await env.create(batchJob('elsewhere', { namespace: 'other' }))) as Job;
  const noNamespaceObject = (await env.create(batchJob('ghost', { namespace: 'ghost' }))) as Job;
  assert.equal(latest(env, noQueue).spec.suspend, undefined);
  assert.equal(latest(env, elsewhere).spec.suspend, undefined);
  assert.equal(latest(env, noNamespaceObject).spec.suspend, undefined);
  assert.deepEqual(env.workloads('ns').concat(env.workloads('other'), env.workloads('ghost')), []);

  // The default selector excludes kube-system (by the name label, no Namespace object needed).
  const env2 = await jobEnv();
  const system = (await env2.create(batchJob('sys', { namespace: 'kube-system' }))) as Job;
  assert.equal(latest(env2, system).spec.suspend, undefined);
  assert.deepEqual(env2.workloads('kube-system'), []);
});

test('manageJobsWithoutQueueName manages Jobs without the label; a LocalQueue named default fills the label in', async () => {
  const env = await jobEnv({ manageJobsWithoutQueueName: true });
  const job = (await env.create(batchJob('plain', { queue: null }))) as Job;
  assert.equal(latest(env, job).spec.suspend, true);
  assert.equal(env.workload().spec.queueName, undefined);

  const env2 = await jobEnv({}, [localQueue('default')]);
  const job2 = (await env2.create(batchJob('plain', { queue: null }))) as Job;
  assert.equal(latest(env2, job2).metadata.labels?.[KueueLabel.QueueName], 'default');
  assert.equal(latest(env2, job2).spec.suspend, true);
  assert.equal(env2.workload().spec.queueName, 'default');
});

test('an admitted Job starts: flavor nodeLabels and tolerations, podset label, workload annotation, queue labels, the topology gate; unsuspended', async () => {
  const env = await jobEnv({}, flavors);
  const job = (await env.create(
    batchJob('train', { parallelism: 2, template: podTemplate({ labels: { app: 'x' }, nodeSelector: { zone: 'z1' } }) }),
  )) as Job;
  const wl = env.workload();
  admit(env, wl, { topology: ['main'] });
  await env.settle();
  const started = latest(env, job);
  assert.equal(started.spec.suspend, false);
  const t = started.spec.template;
  assert.deepEqual(t.metadata?.labels, {
    app: 'x',
    [KueueLabel.PodSet]: 'main',
    [KueueRuntimeKey.LocalQueueNameLabel]: 'lq',
    [KueueRuntimeKey.ClusterQueueNameLabel]: 'cq',
  });
  // No topology request on the PodSet: implicit TAS, marked unconstrained.
  assert.deepEqual(t.metadata?.annotations, {
    [KueueAnnotation.Workload]: wl.metadata.name,
    [KueueAnnotation.PodSetUnconstrainedTopology]: 'true',
  });
  assert.deepEqual(t.spec.nodeSelector, { zone: 'z1', 'cloud.com/pool': 'a' });
  assert.deepEqual(t.spec.tolerations, [{ key: 'gpu', operator: 'Exists', effect: 'NoSchedule' }]);
  assert.deepEqual(t.spec.schedulingGates, [{ name: KueueSchedulingGate.Topology }]);
  assert.deepEqual(
    env.events('Started').map((e) => e.message),
    ['Admitted by clusterQueue cq'],
  );
  // The started Job still matches its Workload: nothing deleted, nothing recreated.
  await env.settle();
  assert.equal(env.workload().metadata.uid, wl.metadata.uid);
  assert.deepEqual(env.events('DeletedWorkload'), []);
  assert.deepEqual(env.manager.errors, []);
});

test('no topology assignment, no topology gate; a reservation without Admitted (a gang accumulating) does not start the Job', async () => {
  const env = await jobEnv({}, flavors);
  const job = (await env.create(batchJob('train'))) as Job;
  admit(env, env.workload(), { reserveOnly: true });
  await env.settle();
  assert.equal(latest(env, job).spec.suspend, true);
  admit(env, env.workload());
  await env.settle();
  assert.equal(latest(env, job).spec.suspend, false);
  assert.equal(latest(env, job).spec.template.spec.schedulingGates, undefined);
});

test('partial admission runs the admitted count as parallelism; stopping restores the Workload count', async () => {
  const env = await jobEnv({}, flavors);
  const job = (await env.create(batchJob('train', { parallelism: 8, annotations: { [JOB_MIN_PARALLELISM_ANNOTATION]: '2' } }))) as Job;
  const wl = env.workload();
  assert.equal(wl.spec.podSets[0]!.minCount, 2);
  admit(env, wl, { counts: { main: 5 } });
  await env.settle();
  assert.equal(latest(env, job).spec.parallelism, 5);
  assert.equal(latest(env, job).spec.suspend, false);
  assert.equal(env.workload().metadata.uid, wl.metadata.uid, 'the partially admitted running Job still matches its Workload');
  evict(env, wl);
  await env.settle();
  assert.equal(latest(env, job).spec.suspend, true);
  assert.equal(latest(env, job).spec.parallelism, 8);
});

test('PodsReady: WaitForStart, Started once every pod is ready, WaitForRecovery when one fails, Recovered after', async () => {
  const env = await jobEnv({ podBatchMs: 1000 }, flavors);
  const job = (await env.create(batchJob('train', { parallelism: 2 }))) as Job;
  const wl = admit(env, env.workload());
  await env.settle();
  const reason = () => findCondition(env.workload(), WorkloadCondition.PodsReady)?.reason;
  assert.equal(reason(), 'WaitForStart');
  const running = latest(env, job);
  const pods = [
    createPod(env, running, 'train-a', { template: running.spec.template }),
    createPod(env, running, 'train-b', { template: running.spec.template }),
  ];
  setPodPhase(env, pods[0]!, 'Running');
  await env.settle();
  assert.equal(reason(), 'WaitForStart');
  setPodPhase(env, pods[1]!, 'Running');
  await env.settle();
  assert.equal(reason(), 'Started');
  assert.equal(findCondition(env.workload(), WorkloadCondition.PodsReady)?.status, 'True');
  setPodPhase(env, pods[1]!, 'Failed', false);
  await env.settle();
  assert.equal(reason(), 'WaitForRecovery');
  createPod(env, running, 'train-c', { template: running.spec.template });
  setPodPhase(
    env,
    env.pods().find((p) => p.metadata.name === 'train-c')!,
    'Running',
  );
  await env.settle();
  assert.equal(reason(), 'Recovered');
  assert.equal(env.workload().metadata.uid, wl.metadata.uid);
});

test('a finished Job finishes its Workload (Succeeded, or Failed with the condition message) and drops the finalizer', async () => {
  const env = await jobEnv({}, flavors);
  const ok = (await env.create(batchJob('ok'))) as Job;
  const bad = (await env.create(batchJob('bad'))) as Job;
  for (const w of env.workloads()) admit(env, w);
  await env.settle();
  setJobCondition(env, ok, 'Complete');
  setJobCondition(env, bad, 'Failed', 'Job has reached the specified backoff limit');
  await env.settle();
  const byOwner = (j: KObject) => env.workloads().find((w) => w.metadata.ownerReferences?.[0]?.name === j.metadata.name)!;
  const okW = byOwner(ok);
  const badW = byOwner(bad);
  assert.deepEqual(
    [findCondition(okW, 'Finished')?.status, findCondition(okW, 'Finished')?.reason, findCondition(okW, 'Finished')?.message],
    ['True', 'Succeeded', 'Job finished successfully'],
  );
  assert.deepEqual(
    [findCondition(badW, 'Finished')?.reason, findCondition(badW, 'Finished')?.message],
    ['Failed', 'Job has reached the specified backoff limit'],
  );
  assert.deepEqual(okW.metadata.finalizers ?? [], []);
  assert.deepEqual(badW.metadata.finalizers ?? [], []);
  assert.deepEqual(
    env
      .events('FinishedWorkload')
      .map((e) => e.message)
      .sort(),
    [`Workload 'ns/${badW.metadata.name}' is declared finished`, `Workload 'ns/${okW.metadata.name}' is declared finished`],
  );
});

test('dropping the finalizer of a finished Workload writes its metadata only: the stored spec is shared, not copied', async () => {
  const env = await jobEnv({}, flavors);
  const job = (await env.create(batchJob('ok'))) as Job;
  admit(env, env.workload());
  await env.settle();
  const before = env.workload();
  setJobCondition(env, job, 'Complete');
  await env.settle();
  const after = env.workload();
  assert.deepEqual(after.metadata.finalizers ?? [], []);
  assert.equal(findCondition(after, 'Finished')?.reason, 'Succeeded');
  assert.equal(after.spec, before.spec, 'the same (frozen) spec object');
});

test('an evicted Job is suspended with its templates restored; the reservation is cleared once its pods are gone, and it starts again when readmitted', async () => {
  const env = await jobEnv({}, flavors);
  const job = (await env.create(batchJob('train', { parallelism: 2 }))) as Job;
  const wl = admit(env, env.workload(), { topology: ['main'] });
  await env.settle();
  const running = latest(env, job);
  const pod = createPod(env, running, 'train-a', { template: running.spec.template });
  setPodPhase(env, pod, 'Running');
  await env.settle();

  evict(env, wl, 'Preempted', 'Preempted to accommodate a higher priority Workload');
  await env.settle();
  const stopped = latest(env, job);
  assert.equal(stopped.spec.suspend, true);
  assert.deepEqual(stopped.spec.template, wl.spec.podSets[0]!.template, 'the template is the Workload PodSet template again');
  assert.deepEqual(
    env.events('Stopped').map((e) => e.message),
    ['Preempted to accommodate a higher priority Workload'],
  );
  assert.ok(env.workload().status?.admission, 'the quota is held while a pod still runs');

  env.store.deleteSync('Pod', 'ns', 'train-a'); // the Job controller deletes the pods of a suspended Job
  await env.settle();
  const cleared = env.workload();
  assert.equal(cleared.status?.admission, undefined);
  assert.deepEqual(
    [findCondition(cleared, 'QuotaReserved')?.status, findCondition(cleared, 'QuotaReserved')?.reason],
    ['False', 'PendingEvaluation'],
  );
  assert.deepEqual([findCondition(cleared, 'Requeued')?.status, findCondition(cleared, 'Requeued')?.reason], ['True', 'Preempted']);
  assert.equal(cleared.metadata.uid, wl.metadata.uid, 'the same Workload is requeued');

  admit(env, cleared);
  await env.settle();
  assert.equal(latest(env, job).spec.suspend, false);
  assert.deepEqual(env.manager.errors, []);
});

test('with waitForPodsReady a new Workload is created with PodsReady False/WaitForStart: no status write follows its create', async () => {
  const env = await jobEnv({}, flavors);
  const seen: string[] = [];
  env.store.watch<Workload>('Workload', (e) => seen.push(`${e.type} ${findCondition(e.object, WorkloadCondition.PodsReady)?.reason}`));
  await env.create(batchJob('train', { parallelism: 2 }));
  await env.settle();
  assert.deepEqual(seen, ['ADDED WaitForStart']);
  const c = findCondition(env.workload(), WorkloadCondition.PodsReady)!;
  assert.deepEqual([c.status, c.reason, c.lastTransitionTime], ['False', 'WaitForStart', '2026-01-01T00:00:00Z']);
});

test('an evicted Workload whose Job is stopped and pods gone has its reservation cleared and PodsReady WaitForStart in one status write', async () => {
  const env = await jobEnv({}, flavors);
  const job = (await env.create(batchJob('train', { parallelism: 1 }))) as Job;
  const wl = admit(env, env.workload());
  await env.settle();
  const running = latest(env, job);
  const pod = createPod(env, running, 'train-a', { template: running.spec.template });
  setPodPhase(env, pod, 'Running');
  await env.settle();
  assert.equal(findCondition(env.workload(), WorkloadCondition.PodsReady)?.reason, 'Started');

  // Evicted with its one pod already finished (not active): stopped, then cleared at once.
  setPodPhase(env, env.pods()[0]!, 'Succeeded', false);
  const writes: string[] = [];
  env.store.watch<Workload>('Workload', (e) => {
    const w = e.object;
    writes.push(`${findCondition(w, 'QuotaReserved')?.status} ${findCondition(w, WorkloadCondition.PodsReady)?.reason}`);
  });
  evict(env, wl, 'Preempted', 'Preempted to accommodate a higher priority Workload');
  await env.settle();
  assert.equal(latest(env, job).spec.suspend, true);
  const cleared = env.workload();
  assert.equal(cleared.status?.admission, undefined);
  assert.deepEqual(
    [findCondition(cleared, WorkloadCondition.PodsReady)?.status, findCondition(cleared, WorkloadCondition.PodsReady)?.reason],
    ['False', 'WaitForStart'],
  );
  // The eviction (the test's write), then one write by the job reconciler: no intermediate Started or WaitForRecovery.
  assert.deepEqual(writes, ['True Started', 'False WaitForStart']);

  // Evicted while its pod runs: the Job is stopped; once the pod is gone, the reservation and PodsReady are cleared together.
  admit(env, cleared);
  await env.settle();
  const again = latest(env, job);
  const pod2 = createPod(env, again, 'train-b', { template: again.spec.template });
  setPodPhase(env, pod2, 'Running');
  await env.settle();
  writes.length = 0;
  evict(env, env.workload(), 'Preempted', 'Preempted again');
  await env.settle();
  env.store.deleteSync('Pod', 'ns', 'train-b');
  await env.settle();
  // The eviction, then (the pod gone) one write: not WaitForRecovery, then cleared, then WaitForStart.
  assert.deepEqual(writes, ['True Started', 'False WaitForStart']);
  assert.deepEqual(env.manager.errors, []);
});

test('a Workload that no longer matches its Job (template changed while suspended) is deleted and replaced', async () => {
  const env = await jobEnv({}, flavors);
  const job = (await env.create(batchJob('train', { parallelism: 2 }))) as Job;
  const old = env.workload();
  editJob(env, job, (j) => {
    (j.spec.template as PodTemplateSpec).spec.containers[0]!.resources = { requests: { cpu: '4' } };
  });
  await env.settle();
  const now = env.workload();
  assert.notEqual(now.metadata.uid, old.metadata.uid);
  assert.equal(now.spec.podSets[0]!.template.spec.containers[0]!.resources?.requests?.cpu, '4');
  assert.deepEqual(
    env.events('DeletedWorkload').map((e) => e.message),
    [`Deleted not matching Workload: ns/${old.metadata.name}`],
  );
  assert.equal(env.events('CreatedWorkload').length, 2);
});

test("a running Job whose Workload is not matching is stopped with Kueue's message before its Workload is replaced", async () => {
  const env = await jobEnv({}, flavors);
  const job = (await env.create(batchJob('train', { parallelism: 2 }))) as Job;
  admit(env, env.workload());
  await env.settle();
  editJob(env, job, (j) => {
    j.spec.parallelism = 3;
  });
  await env.settle();
  assert.equal(latest(env, job).spec.suspend, true);
  assert.deepEqual(
    env.events('Stopped').map((e) => e.message),
    ['No matching Workload; restoring pod templates according to existent Workload'],
  );
  assert.deepEqual(env.workload().spec.podSets[0]!.count, 3);
});

test('a nodeSelector key the template already has with another value finishes the Workload FailedToStart; the Job stays suspended', async () => {
  const env = await jobEnv({}, flavors);
  const job = (await env.create(batchJob('train', { template: podTemplate({ nodeSelector: { 'cloud.com/pool': 'b' } }) }))) as Job;
  admit(env, env.workload());
  await env.settle();
  assert.equal(latest(env, job).spec.suspend, true);
  const fin = findCondition(env.workload(), 'Finished');
  assert.deepEqual([fin?.status, fin?.reason], ['True', 'FailedToStart']);
  assert.equal(
    fin?.message,
    'invalid admission check PodSetUpdate: conflict for nodeSelector: conflict for key=cloud.com/pool, value1=b, value2=a',
  );
  assert.deepEqual(env.manager.errors, []);
});

test('an unknown assigned flavor is retried (logged), not a permanent failure', async () => {
  const env = await jobEnv({}, []);
  const job = (await env.create(batchJob('train'))) as Job;
  admit(env, env.workload(), { flavor: 'later' });
  await env.manager.run({ untilMs: env.clock.now() + 100 });
  assert.equal(latest(env, job).spec.suspend, true);
  assert.match(env.manager.errors[0]?.message ?? '', /ResourceFlavor "later" not found/);
  env.store.createSync(resourceFlavor('later', { pool: 'l' }));
  await env.manager.run({ untilMs: env.clock.now() + 60_000 });
  assert.equal(latest(env, job).spec.suspend, false);
  assert.deepEqual(latest(env, job).spec.template.spec.nodeSelector, { pool: 'l' });
});

test('a Job unsuspended by hand while its Workload is not admitted is suspended again', async () => {
  const env = await jobEnv({}, flavors);
  const job = (await env.create(batchJob('train'))) as Job;
  editJob(env, job, (j) => {
    j.spec.suspend = false;
  });
  await env.settle();
  assert.equal(latest(env, job).spec.suspend, true);
  assert.deepEqual(
    env.events('Stopped').map((e) => e.message),
    ['Not admitted by cluster queue'],
  );
});

test('a Workload deleted by a user stops the Job, loses its finalizer, and a new one is created', async () => {
  const env = await jobEnv({}, flavors);
  const job = (await env.create(batchJob('train'))) as Job;
  const wl = admit(env, env.workload());
  await env.settle();
  assert.equal(latest(env, job).spec.suspend, false);
  env.store.deleteSync('Workload', 'ns', wl.metadata.name);
  await env.settle();
  assert.equal(latest(env, job).spec.suspend, true);
  assert.deepEqual(
    env.events('Stopped').map((e) => e.message),
    ['Workload is deleted'],
  );
  const next = env.workload();
  assert.notEqual(next.metadata.uid, wl.metadata.uid);
  assert.equal(next.status?.admission, undefined);
});

test('the Workload of a deleted Job loses its finalizer; garbage collection then deletes it', async () => {
  const env = await jobEnv({}, flavors);
  const job = await env.create(batchJob('train'));
  admit(env, env.workload());
  await env.settle();
  env.store.deleteSync('Job', 'ns', job.metadata.name);
  await env.settle();
  const wl = env.workload();
  assert.deepEqual(wl.metadata.finalizers ?? [], []);
  env.store.deleteSync('Workload', 'ns', wl.metadata.name); // the garbage collector
  assert.deepEqual(env.workloads(), []);
});

test('a Job owned by a JobSet is left to its parent: not suspended, no Workload of its own', async () => {
  const env = await jobEnv({}, flavors);
  const js = await env.create(jobSet('js', [{ name: 'w' }]));
  createChild(env, js, batchJob('js-w-0', { queue: null }));
  await env.settle();
  assert.equal(env.get<Job>('Job', 'js-w-0')!.spec.suspend, undefined);
  assert.deepEqual(
    env.workloads().map((w) => w.metadata.ownerReferences?.[0]?.kind),
    ['JobSet'],
  );
});

test("webhook: a queue-name label that is not a DNS subdomain is refused with Kubernetes' message", async () => {
  const env = await jobEnv();
  await assert.rejects(
    env.store.create(batchJob('train', { queue: 'Bad_Queue' })),
    (e: unknown) =>
      e instanceof InvalidError &&
      e.message ===
        'admission webhook "vjob.kb.io" denied the request: metadata.labels[kueue.x-k8s.io/queue-name]: Invalid value: "Bad_Queue": ' +
          "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character " +
          "(e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
  );
});

test('webhook: a Workload that cannot be built is refused on create, naming the field; the queue name of a running Job is immutable', async () => {
  const env = await jobEnv({}, flavors);
  await assert.rejects(
    env.store.create(batchJob('train', { parallelism: 2, annotations: { [JOB_MIN_PARALLELISM_ANNOTATION]: '5' } })),
    /admission webhook "vjob\.kb\.io" denied the request: metadata\.annotations\["kueue\.x-k8s\.io\/job-min-parallelism"\]: .*between 1 and the Job's pod count 2/,
  );
  const job = (await env.create(batchJob('ok'))) as Job;
  const relabel = (j: KObject, queue: string) => {
    const x = mutable(latest(env, j));
    x.metadata.labels = { ...x.metadata.labels, [KueueLabel.QueueName]: queue };
    return env.store.update(x);
  };
  await relabel(job, 'other'); // suspended: the queue may change
  await env.settle();
  admit(env, env.workload());
  await env.settle();
  await assert.rejects(
    relabel(job, 'third'),
    /admission webhook "vjob\.kb\.io" denied the request: metadata\.labels\[kueue\.x-k8s\.io\/queue-name\]: Invalid value: "third": field is immutable/,
  );
});

test('a prebuilt Workload named by the Job is adopted and used; one that does not match is finished OutOfSync', async () => {
  const env = await jobEnv({}, flavors);
  const prebuilt: Workload = {
    apiVersion: 'kueue.x-k8s.io/v1beta2',
    kind: 'Workload',
    metadata: { name: 'pre', namespace: 'ns' },
    spec: { queueName: 'lq', podSets: [{ name: 'main', count: 1, template: podTemplate() }] },
  };
  env.store.createSync(prebuilt);
  const job = (await env.create(batchJob('train', { labels: { [KueueAnnotation.PrebuiltWorkloadName]: 'pre' } }))) as Job;
  assert.deepEqual(
    env.workloads().map((w) => w.metadata.name),
    ['pre'],
  );
  assert.equal(env.workload().metadata.ownerReferences?.[0]?.uid, job.metadata.uid);
  admit(env, env.workload());
  await env.settle();
  assert.equal(latest(env, job).spec.suspend, false);

  env.store.createSync({
    ...structuredClone(prebuilt),
    metadata: { name: 'pre2', namespace: 'ns' },
    spec: { ...structuredClone(prebuilt.spec), podSets: [{ name: 'main', count: 7, template: podTemplate() }] },
  });
  await env.create(batchJob('other', { labels: { [KueueAnnotation.PrebuiltWorkloadName]: 'pre2' } }));
  const pre2 = env.workloads().find((w) => w.metadata.name === 'pre2')!;
  assert.deepEqual(
    [findCondition(pre2, 'Finished')?.reason, findCondition(pre2, 'Finished')?.message],
    ['OutOfSync', 'The prebuilt workload is out of sync with its user job'],
  );
});

test('without waitForPodsReady no PodsReady condition is written', async () => {
  const env = await jobEnv({ waitForPodsReady: undefined }, flavors);
  const job = (await env.create(batchJob('train'))) as Job;
  admit(env, env.workload());
  await env.settle();
  const running = latest(env, job);
  setPodPhase(env, createPod(env, running, 'train-a', { template: running.spec.template }), 'Running');
  await env.settle();
  assert.equal(findCondition(env.workload(), 'PodsReady'), undefined);
  assert.ok(isTrue(env.workload(), 'Admitted'));
});

test('pods of a Job are found through their controller: a pod of another Job with the same name prefix does not count', async () => {
  const env = await jobEnv({}, flavors);
  const a = (await env.create(batchJob('a', { parallelism: 1 }))) as Job;
  const b = (await env.create(batchJob('b', { parallelism: 1 }))) as Job;
  for (const w of env.workloads()) admit(env, w);
  await env.settle();
  const pod: Pod = createPod(env, latest(env, b), 'a-xxxxx');
  setPodPhase(env, pod, 'Running');
  await env.settle();
  const wa = env.workloads().find((w) => w.metadata.ownerReferences?.[0]?.uid === a.metadata.uid)!;
  const wb = env.workloads().find((w) => w.metadata.ownerReferences?.[0]?.uid === b.metadata.uid)!;
  assert.equal(findCondition(wa, 'PodsReady')?.status, 'False');
  assert.equal(findCondition(wb, 'PodsReady')?.status, 'True');
});

test('of two Workloads owned by one Job, the matching one is kept and the other deleted', async () => {
  const env = await jobEnv({}, flavors);
  const job = (await env.create(batchJob('train', { parallelism: 2 }))) as Job;
  const kept = env.workload();
  const stray = structuredClone(kept) as Workload;
  stray.metadata = {
    name: 'stray',
    namespace: 'ns',
    ownerReferences: kept.metadata.ownerReferences,
    finalizers: [KueueRuntimeKey.ResourceInUseFinalizer],
  };
  stray.spec.podSets[0]!.count = 9;
  delete stray.status;
  await env.create(stray);
  assert.deepEqual(
    env.workloads().map((w) => w.metadata.name),
    [kept.metadata.name],
  );
  assert.deepEqual(
    env.events('DeletedWorkload').map((e) => e.message),
    ['Deleted not matching Workload: ns/stray'],
  );
  assert.equal(latest(env, job).spec.suspend, true);
});

test('a Job deleted and created again under its name gets a new Workload; the old one is released', async () => {
  const env = await jobEnv({}, flavors);
  await env.create(batchJob('train'));
  const old = env.workload();
  env.store.deleteSync('Job', 'ns', 'train');
  const again = await env.create(batchJob('train'));
  const all = env.workloads();
  assert.equal(all.length, 2, 'the old Workload waits for the garbage collector');
  const fresh = all.find((w) => w.metadata.uid !== old.metadata.uid)!;
  assert.equal(fresh.metadata.ownerReferences?.[0]?.uid, again.metadata.uid);
  assert.deepEqual(all.find((w) => w.metadata.uid === old.metadata.uid)!.metadata.finalizers ?? [], []);
});

test('metrics: the first PodsReady observes the ready and admitted-until-ready wait times', async () => {
  const env = await jobEnv({}, flavors);
  const job = (await env.create(batchJob('train'))) as Job;
  admit(env, env.workload());
  await env.settle();
  env.clock.advanceBy(7_000);
  const running = latest(env, job);
  setPodPhase(env, createPod(env, running, 'train-a', { template: running.spec.template }), 'Running');
  await env.settle();
  const text = await env.manager.metrics.text();
  assert.match(text, /kueue_ready_wait_time_seconds_count\{cluster_queue="cq"\} 1/);
  assert.match(text, /kueue_admitted_until_ready_wait_time_seconds_sum\{cluster_queue="cq"\} 8/);
});

test("a running Job's match with its Workload is judged again when an assigned ResourceFlavor changes, not remembered", async () => {
  const env = await jobEnv({}, flavors);
  const job = (await env.create(batchJob('train'))) as Job;
  admit(env, env.workload());
  await env.settle();
  assert.equal(latest(env, job).spec.suspend, false);
  // Another status write: the job is reconciled again with the same PodSets and Workload spec (the verdict is remembered).
  setStatus(env, env.workload(), {
    ...env.workload().status,
    conditions: [
      ...(env.workload().status?.conditions ?? []),
      { type: 'Noted', status: 'True', reason: 'R', message: '', lastTransitionTime: '2026-01-01T00:00:00Z' },
    ],
  });
  await env.settle();
  assert.deepEqual(env.events('Stopped'), []);
  // The flavor's node labels change: the PodSets the Workload would run now differ from the started Job's.
  const rf = mutable(env.store.getSync('ResourceFlavor', undefined, 'default-flavor')!) as ReturnType<typeof resourceFlavor>;
  rf.spec = { ...rf.spec, nodeLabels: { 'cloud.com/pool': 'b' } };
  env.store.updateSync(rf);
  setStatus(env, env.workload(), {
    ...env.workload().status,
    conditions: env.workload().status!.conditions!.filter((c) => c.type !== 'Noted'),
  });
  await env.settle();
  assert.deepEqual(
    env.events('Stopped').map((e) => e.message),
    ['No matching Workload; restoring pod templates according to existent Workload'],
  );
});

test('jobReadsChange: a rewritten pending message (QuotaReserved False, or absent before) is no change; admission, other conditions, spec.active and finalizers are', () => {
  const base = {
    apiVersion: 'kueue.x-k8s.io/v1beta2',
    kind: 'Workload',
    metadata: { name: 'w', namespace: 'ns', resourceVersion: '1', finalizers: ['kueue.x-k8s.io/resource-in-use'] },
    spec: { queueName: 'q', podSets: [{ name: 'main', count: 1, template: { spec: { containers: [] } } }] },
    status: {},
  } as unknown as Workload;
  const pending = (message: string, rv: string): Workload => ({
    ...base,
    metadata: { ...base.metadata, resourceVersion: rv },
    status: {
      conditions: [{ type: 'QuotaReserved', status: 'False', reason: 'Pending', message, lastTransitionTime: '2026-01-01T00:00:00Z' }],
    },
  });
  const a = pending('insufficient unused quota for cpu in flavor default, 12 more needed', '2');
  assert.equal(jobReadsChange(base, a), false);
  assert.equal(jobReadsChange(a, pending('insufficient unused quota for cpu in flavor default, 11 more needed', '3')), false);
  const reserved = mutable(a);
  reserved.status!.conditions = [{ type: 'QuotaReserved', status: 'True', reason: 'QuotaReserved', message: 'm' }];
  assert.equal(jobReadsChange(a, reserved), true);
  const admitted = mutable(a);
  admitted.status!.admission = { clusterQueue: 'cq', podSetAssignments: [] } as never;
  assert.equal(jobReadsChange(a, admitted), true);
  const evicted = mutable(a);
  evicted.status!.conditions!.push({ type: 'Evicted', status: 'True', reason: 'Preempted', message: 'm' });
  assert.equal(jobReadsChange(a, evicted), true);
  const inactive = mutable(a);
  inactive.spec.active = false;
  assert.equal(jobReadsChange(a, inactive), true);
  const released = mutable(a);
  released.metadata.finalizers = [];
  assert.equal(jobReadsChange(a, released), true);
});

test('a Job whose Workload only had its pending message rewritten is left as it is; its admission then starts it', async () => {
  const env = await jobEnv({}, flavors);
  const job = (await env.create(batchJob('train'))) as Job;
  await env.settle();
  const writes = () => Object.values(env.store.writes).reduce((x, y) => x + y, 0);
  for (const n of [3, 2, 1]) {
    const before = writes();
    const w = env.workload();
    setStatus(env, w, {
      ...w.status,
      conditions: [
        ...(w.status?.conditions ?? []).filter((c) => c.type !== 'QuotaReserved'),
        {
          type: 'QuotaReserved',
          status: 'False',
          reason: 'Pending',
          message: `${n} more needed`,
          lastTransitionTime: '2026-01-01T00:00:00Z',
        },
      ],
    });
    await env.settle();
    assert.equal(writes(), before + 1, 'only the rewrite itself');
  }
  assert.equal(latest(env, job).spec.suspend, true);
  admit(env, env.workload());
  await env.settle();
  assert.equal(latest(env, job).spec.suspend, false);
});
