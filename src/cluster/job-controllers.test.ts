import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KObject, Pod } from '../api/objects.ts';
import { retryOnConflict } from '../runtime/store.ts';
import { podTemplate, testCluster, type TestCluster } from '../testing/cluster.ts';
import type { BatchJob } from './job-controller-batch.ts';
import { formatIndexes, parseIndexes } from './job-controller-batch.ts';
import type { JobSet } from './job-controller-jobset.ts';
import { CoreApiVersion, JobFrameworkApiVersion, VolcanoApiVersion } from '../api/api-versions.ts';
import { JOB_FRAMEWORKS } from '../integrations/registry.ts';
import { carryVerdict, jobKey, sameJsonText, specParses, specProblem, splitJobKey } from './job-controller-common.ts';
import { jobControllers, standIns } from './job-controllers.ts';

const job = (name: string, spec: Partial<BatchJob['spec']>, labels: Record<string, string> = {}): BatchJob => ({
  apiVersion: CoreApiVersion.Batch,
  kind: 'Job',
  metadata: { name, namespace: 'default', labels },
  spec: { template: podTemplate(), ...spec },
});

const names = (pods: Pod[]) => pods.map((p) => p.metadata.name);
const active = (c: TestCluster) =>
  c.pods().filter((p) => p.status?.phase !== 'Succeeded' && p.status?.phase !== 'Failed' && !p.metadata.deletionTimestamp);
const cond = (o: KObject | undefined, type: string) =>
  ((o as { status?: { conditions?: { type: string; status: string; reason?: string }[] } })?.status?.conditions ?? []).find(
    (c) => c.type === type,
  );

/** Finishes every active pod with `phase` (as a kubelet would) and lets the controllers react. */
async function finishAll(c: TestCluster, phase: 'Succeeded' | 'Failed', filter: (p: Pod) => boolean = () => true) {
  for (const p of active(c).filter(filter)) await c.setPhase(p.metadata.name, phase);
  await c.run();
}

/** Marks pods being deleted as Failed (the kubelet's part), so their finalizers can be released. */
async function terminateDeleting(c: TestCluster) {
  for (const p of c.pods().filter((x) => x.metadata.deletionTimestamp && x.status?.phase !== 'Failed' && x.status?.phase !== 'Succeeded'))
    await c.setPhase(p.metadata.name, 'Failed');
  await c.run();
}

describe('job controllers: batch/v1 Job', () => {
  it('an Indexed Job gets pods <job>-<index>-<5 chars> with the completion index label and annotation, the job labels, owner and tracking finalizer', async () => {
    const c = await testCluster([jobControllers()], [job('train', { completionMode: 'Indexed', parallelism: 3, completions: 3 })]);
    await c.run();
    const pods = c.pods();
    assert.equal(pods.length, 3);
    const j = c.get<BatchJob>('Job', 'train')!;
    for (const [i, p] of pods.entries()) {
      assert.match(p.metadata.name, new RegExp(`^train-${i}-[a-z0-9]{5}$`));
      assert.equal(p.metadata.labels?.['batch.kubernetes.io/job-completion-index'], String(i));
      assert.equal(p.metadata.annotations?.['batch.kubernetes.io/job-completion-index'], String(i));
      assert.equal(p.metadata.labels?.['batch.kubernetes.io/job-name'], 'train');
      assert.equal(p.metadata.labels?.['batch.kubernetes.io/controller-uid'], j.metadata.uid);
      assert.equal(p.metadata.labels?.app, 'test', 'template labels are kept');
      assert.deepEqual(p.metadata.ownerReferences, [
        { apiVersion: 'batch/v1', kind: 'Job', name: 'train', uid: j.metadata.uid, controller: true, blockOwnerDeletion: true },
      ]);
      assert.deepEqual(p.metadata.finalizers, ['batch.kubernetes.io/job-tracking']);
      assert.equal(p.spec.containers[0]!.resources?.requests?.cpu, '1');
    }
    assert.equal(j.status?.active, 3);
    assert.ok(j.status?.startTime);
  });

  it("pod events reach the Job's sync syncJobBatchPeriod (1 s) later, the first event of a window arming it; syncBatchMs 0 syncs at once", async () => {
    for (const [opts, completeAfterMs] of [
      [{}, 1000],
      [{ syncBatchMs: 0 }, 0],
    ] as const) {
      const c = await testCluster([jobControllers(opts)], [job('quick', { parallelism: 1, completions: 1 })]);
      await c.run();
      const [p] = c.pods();
      await c.setPhase(p!.metadata.name, 'Running');
      await c.run(400);
      await c.setPhase(p!.metadata.name, 'Succeeded');
      // The Running update 400 ms ago armed the sync: it comes 600 ms after the Succeeded one.
      if (completeAfterMs > 0) {
        await c.run(599);
        assert.equal(cond(c.get('Job', 'quick'), 'Complete'), undefined, `${JSON.stringify(opts)}: not synced before the batch ends`);
        await c.run(1);
      } else await c.run(0);
      assert.equal(cond(c.get('Job', 'quick'), 'Complete')?.status, 'True', JSON.stringify(opts));
    }
  });

  it('a NonIndexed Job keeps min(parallelism, completions - succeeded) pods <job>-<5 chars> and completes at completions', async () => {
    const c = await testCluster([jobControllers()], [job('batch', { parallelism: 3, completions: 4 })]);
    await c.run();
    assert.equal(c.pods().length, 3);
    for (const p of c.pods()) assert.match(p.metadata.name, /^batch-[a-z0-9]{5}$/);
    const [a, b] = names(active(c));
    await c.setPhase(a!, 'Succeeded');
    await c.setPhase(b!, 'Succeeded');
    await c.run();
    assert.equal(active(c).length, 2, '4 - 2 succeeded = 2 wanted, one of the 3 still runs: one more');
    let j = c.get<BatchJob>('Job', 'batch')!;
    assert.equal(j.status?.succeeded, 2);
    assert.equal(cond(j, 'Complete'), undefined);
    await finishAll(c, 'Succeeded');
    j = c.get<BatchJob>('Job', 'batch')!;
    assert.equal(j.status?.succeeded, 4);
    assert.equal(cond(j, 'Complete')?.status, 'True');
    assert.ok(j.status?.completionTime);
    assert.equal(
      c.pods().every((p) => !p.metadata.finalizers?.length),
      true,
      'counted pods are released',
    );
    assert.equal(j.status?.uncountedTerminatedPods, undefined);
  });

  it('a failed pod is replaced with a new pod of the same index, and backoffLimit failures + 1 fail the Job and delete its active pods', async () => {
    const c = await testCluster(
      [jobControllers()],
      [job('flaky', { completionMode: 'Indexed', parallelism: 2, completions: 2, backoffLimit: 1 })],
    );
    await c.run();
    const first = c.pods().find((p) => p.metadata.labels?.['batch.kubernetes.io/job-completion-index'] === '1')!;
    await c.setPhase(first.metadata.name, 'Failed');
    await c.run();
    const idx1 = c.pods().filter((p) => p.metadata.labels?.['batch.kubernetes.io/job-completion-index'] === '1');
    assert.equal(idx1.length, 2, 'the failed pod stays, a replacement of index 1 is created');
    assert.equal(active(c).length, 2);
    assert.equal(c.get<BatchJob>('Job', 'flaky')!.status?.failed, 1);
    assert.equal(cond(c.get('Job', 'flaky'), 'Failed'), undefined, 'one failure is within backoffLimit 1');
    const replacement = idx1.find((p) => p.metadata.name !== first.metadata.name)!;
    await c.setPhase(replacement.metadata.name, 'Failed');
    await c.run();
    const j = c.get<BatchJob>('Job', 'flaky')!;
    assert.equal(j.status?.failed, 2);
    assert.equal(cond(j, 'Failed')?.reason, 'BackoffLimitExceeded');
    assert.equal(active(c).length, 0, 'the index-0 pod still running is deleted');
  });

  it('pods deleted after the Job completed are not counted as failures', async () => {
    const c = await testCluster([jobControllers()], [job('extra', { parallelism: 3 })]);
    await c.run();
    const [first] = active(c);
    await c.setPhase(first!.metadata.name, 'Succeeded');
    await c.run();
    assert.equal(cond(c.get('Job', 'extra'), 'Complete'), undefined, 'without completions, the Job waits for its other pods');
    await finishAll(c, 'Succeeded', (p) => p.metadata.name !== active(c)[0]!.metadata.name);
    assert.equal(cond(c.get('Job', 'extra'), 'Complete'), undefined);
    await finishAll(c, 'Succeeded');
    assert.equal(cond(c.get('Job', 'extra'), 'Complete')?.status, 'True');

    const d = await testCluster([jobControllers()], [job('more', { parallelism: 2, completions: 1 })]);
    await d.run();
    await d.setPhase(active(d)[0]!.metadata.name, 'Succeeded');
    await d.run();
    assert.equal(cond(d.get('Job', 'more'), 'Complete')?.status, 'True');
    assert.equal(active(d).length, 0, 'the pod no longer needed is deleted');
    await terminateDeleting(d);
    assert.equal(d.get<BatchJob>('Job', 'more')!.status?.failed, 0);
  });

  it('the backoffLimit defaults to 6: the seventh failure fails the Job', async () => {
    const c = await testCluster([jobControllers()], [job('six', {})]);
    await c.run();
    for (let i = 1; i <= 6; i++) {
      await finishAll(c, 'Failed');
      assert.equal(cond(c.get('Job', 'six'), 'Failed'), undefined, `after ${i} failures`);
      assert.equal(active(c).length, 1);
    }
    await finishAll(c, 'Failed');
    assert.equal(cond(c.get('Job', 'six'), 'Failed')?.status, 'True');
  });

  it('a suspended Job has no pods; suspending deletes them without counting failures, even when resumed before they are gone', async () => {
    const c = await testCluster(
      [jobControllers()],
      [job('s', { suspend: true, completionMode: 'Indexed', parallelism: 2, completions: 2 })],
    );
    await c.run();
    assert.equal(c.pods().length, 0);
    assert.equal(cond(c.get('Job', 's'), 'Suspended')?.status, 'True');
    await retryOnConflict<BatchJob>(c.store, 'Job', 'default', 's', (j) => void (j.spec.suspend = false));
    await c.run();
    assert.equal(active(c).length, 2);
    assert.equal(cond(c.get('Job', 's'), 'Suspended')?.reason, 'JobResumed');
    await retryOnConflict<BatchJob>(c.store, 'Job', 'default', 's', (j) => void (j.spec.suspend = true));
    await c.run();
    assert.equal(c.pods().length, 0, 'released from the tracking finalizer, then deleted');
    const j = c.get<BatchJob>('Job', 's')!;
    assert.equal(j.status?.failed, 0, 'pods stopped by suspension are not failures');
    assert.equal(j.status?.startTime, undefined);
    assert.equal(cond(j, 'Suspended')?.status, 'True');
    // Resumed and suspended again while its pods are still held by another finalizer.
    await retryOnConflict<BatchJob>(c.store, 'Job', 'default', 's', (x) => void (x.spec.suspend = false));
    await c.run();
    for (const p of c.pods())
      await retryOnConflict(c.store, 'Pod', 'default', p.metadata.name, (x) => void x.metadata.finalizers!.push('example.com/slow'));
    await retryOnConflict<BatchJob>(c.store, 'Job', 'default', 's', (x) => void (x.spec.suspend = true));
    await c.run();
    await retryOnConflict<BatchJob>(c.store, 'Job', 'default', 's', (x) => void (x.spec.suspend = false));
    await c.run();
    await terminateDeleting(c);
    assert.equal(c.get<BatchJob>('Job', 's')!.status?.failed, 0, 'the stopped pods are not failures of the resumed Job');
    assert.equal(active(c).length, 2);
  });

  it('a finished pod on a deleted node is counted once even though the pod is gone', async () => {
    const c = await testCluster([jobControllers()], [job('once', { completions: 1 })]);
    await c.run();
    const [p] = c.pods();
    await c.setPhase(p!.metadata.name, 'Succeeded');
    await c.store.delete('Pod', 'default', p!.metadata.name);
    await c.run();
    assert.equal(c.pods().length, 0);
    const j = c.get<BatchJob>('Job', 'once')!;
    assert.equal(j.status?.succeeded, 1);
    assert.equal(cond(j, 'Complete')?.status, 'True');
  });

  it('a tracked pod whose Job was deleted is released by the orphan path', async () => {
    const c = await testCluster([jobControllers()], [job('gone', {})]);
    await c.run();
    const [p] = c.pods();
    await c.store.delete('Job', 'default', 'gone');
    await c.store.delete('Pod', 'default', p!.metadata.name);
    await c.setPhase(p!.metadata.name, 'Failed');
    await c.run();
    assert.equal(c.pods().length, 0);
  });

  it('a status write shares the stored parts it leaves as they are: the conditions are the same objects', async () => {
    const c = await testCluster([jobControllers()], [job('s', { suspend: true, parallelism: 1, completions: 2 })]);
    await c.run();
    await retryOnConflict<BatchJob>(c.store, 'Job', 'default', 's', (j) => void (j.spec.suspend = false));
    await c.run();
    const before = c.get<BatchJob>('Job', 's')!;
    await finishAll(c, 'Succeeded');
    const after = c.get<BatchJob>('Job', 's')!;
    assert.equal(after.status?.succeeded, 1);
    assert.notEqual(after.metadata.resourceVersion, before.metadata.resourceVersion);
    assert.ok(before.status?.conditions?.length);
    assert.equal(after.status?.conditions?.[0], before.status?.conditions?.[0], 'the condition object is shared, not copied');
  });

  it('completedIndexes are written in Kubernetes interval form', () => {
    assert.equal(formatIndexes(new Set([5, 1, 3, 4, 0])), '0-1,3-5');
    assert.deepEqual([...parseIndexes('0-1,3-5,9')], [0, 1, 3, 4, 5, 9]);
  });
});

const jobSet = (name: string, suspend: boolean, failurePolicy?: { maxRestarts: number }): JobSet => ({
  apiVersion: 'jobset.x-k8s.io/v1alpha2',
  kind: 'JobSet',
  metadata: { name, namespace: 'default' },
  spec: {
    suspend,
    ...(failurePolicy ? { failurePolicy } : {}),
    replicatedJobs: [
      { name: 'leader', replicas: 1, template: { spec: { parallelism: 1, completions: 1, template: podTemplate() } } },
      {
        name: 'workers',
        replicas: 2,
        template: { metadata: { labels: { tier: 'w' } }, spec: { parallelism: 2, completions: 2, template: podTemplate() } },
      },
    ],
  },
});

describe('job controllers: JobSet', () => {
  it('child Jobs <jobset>-<replicatedJob>-<index> are Indexed, owned, labelled on the Job and the pod template, suspended like the JobSet', async () => {
    const c = await testCluster([jobControllers()], [jobSet('js', true)]);
    await c.run();
    const jobs = c.store.listSync<BatchJob>('Job').sort((a, b) => a.metadata.name.localeCompare(b.metadata.name));
    assert.deepEqual(names(jobs as unknown as Pod[]), ['js-leader-0', 'js-workers-0', 'js-workers-1']);
    const w1 = jobs[2]!;
    const keys = {
      'jobset.sigs.k8s.io/jobset-name': 'js',
      'jobset.sigs.k8s.io/replicatedjob-name': 'workers',
      'jobset.sigs.k8s.io/job-index': '1',
      'jobset.sigs.k8s.io/replicatedjob-replicas': '2',
      'jobset.sigs.k8s.io/restart-attempt': '0',
    };
    assert.deepEqual(w1.metadata.labels, { tier: 'w', ...keys });
    assert.deepEqual(w1.metadata.annotations, keys);
    assert.deepEqual(w1.spec.template.metadata?.labels, { app: 'test', ...keys });
    assert.equal(w1.spec.completionMode, 'Indexed');
    assert.equal(w1.spec.suspend, true);
    assert.equal(w1.metadata.ownerReferences?.[0]?.kind, 'JobSet');
    assert.equal(c.pods().length, 0);
    assert.equal(cond(c.get('JobSet', 'js'), 'Suspended')?.status, 'True');
  });

  it("resuming copies the JobSet's current templates into the child Jobs, whose pods then carry the job-set and index labels", async () => {
    const c = await testCluster([jobControllers()], [jobSet('js', true)]);
    await c.run();
    await retryOnConflict<JobSet>(c.store, 'JobSet', 'default', 'js', (js) => {
      js.spec.suspend = false;
      for (const rj of js.spec.replicatedJobs) rj.template.spec.template.spec.nodeSelector = { pool: 'gpu' };
    });
    await c.run();
    const jobs = c.store.listSync<BatchJob>('Job');
    assert.equal(
      jobs.every((j) => j.spec.suspend === false && j.spec.template.spec.nodeSelector?.pool === 'gpu'),
      true,
    );
    const pods = c.pods();
    assert.equal(pods.length, 5);
    const p = pods.find((x) => x.metadata.name.startsWith('js-workers-1-1-'))!;
    assert.ok(p, names(pods).join(','));
    assert.equal(p.metadata.labels?.['jobset.sigs.k8s.io/job-index'], '1');
    assert.equal(p.metadata.labels?.['batch.kubernetes.io/job-completion-index'], '1');
    assert.equal(p.spec.nodeSelector?.pool, 'gpu');
  });

  it('the JobSet is Completed when every child Job completes', async () => {
    const c = await testCluster([jobControllers()], [jobSet('js', false)]);
    await c.run();
    await finishAll(c, 'Succeeded');
    const js = c.get<JobSet>('JobSet', 'js')!;
    assert.equal(cond(js, 'Completed')?.reason, 'AllJobsCompleted');
    assert.deepEqual(
      js.status?.replicatedJobsStatus?.map((s) => [s.name, s.succeeded]),
      [
        ['leader', 1],
        ['workers', 2],
      ],
    );
  });

  it('a failed child Job fails the JobSet (maxRestarts 0) and its unfinished child Jobs are deleted', async () => {
    const c = await testCluster([jobControllers()], [jobSet('js', false)]);
    await c.run();
    await retryOnConflict<BatchJob>(c.store, 'Job', 'default', 'js-leader-0', (j) => void (j.spec.backoffLimit = 0));
    await finishAll(c, 'Failed', (p) => p.metadata.name.startsWith('js-leader-0'));
    const js = c.get<JobSet>('JobSet', 'js')!;
    assert.equal(cond(js, 'Failed')?.reason, 'FailedJobs');
    assert.deepEqual(names(c.store.listSync('Job') as Pod[]), ['js-leader-0']);
  });

  it('with failurePolicy.maxRestarts the child Jobs are recreated as a new attempt', async () => {
    const c = await testCluster([jobControllers()], [jobSet('js', false, { maxRestarts: 1 })]);
    await c.run();
    const before = c.get<BatchJob>('Job', 'js-workers-0')!.metadata.uid;
    await retryOnConflict<BatchJob>(c.store, 'Job', 'default', 'js-leader-0', (j) => void (j.spec.backoffLimit = 0));
    await finishAll(c, 'Failed', (p) => p.metadata.name.startsWith('js-leader-0'));
    const js = c.get<JobSet>('JobSet', 'js')!;
    assert.equal(js.status?.restarts, 1);
    assert.equal(cond(js, 'Failed'), undefined);
    const w0 = c.get<BatchJob>('Job', 'js-workers-0')!;
    assert.notEqual(w0.metadata.uid, before);
    assert.equal(w0.metadata.labels?.['jobset.sigs.k8s.io/restart-attempt'], '1');
  });
});

describe('job controllers: MPIJob', () => {
  const mpi = (suspend: boolean): KObject =>
    ({
      apiVersion: 'kubeflow.org/v2beta1',
      kind: 'MPIJob',
      metadata: { name: 'pi', namespace: 'default' },
      spec: {
        runPolicy: { suspend },
        mpiReplicaSpecs: {
          Launcher: { replicas: 1, template: podTemplate() },
          Worker: { replicas: 2, template: podTemplate({ cpu: '2' }) },
        },
      },
    }) as KObject;

  it('pods <name>-launcher and <name>-worker-<i> with the kubeflow labels, created when runPolicy.suspend is false', async () => {
    const c = await testCluster([jobControllers()], [mpi(true)]);
    await c.run();
    assert.equal(c.pods().length, 0);
    assert.equal(cond(c.get('MPIJob', 'pi'), 'Suspended')?.status, 'True');
    await retryOnConflict(
      c.store,
      'MPIJob',
      'default',
      'pi',
      (j) => void ((j as unknown as { spec: { runPolicy: { suspend: boolean } } }).spec.runPolicy.suspend = false),
    );
    await c.run();
    assert.deepEqual(names(c.pods()), ['pi-launcher', 'pi-worker-0', 'pi-worker-1']);
    const w1 = c.pod('pi-worker-1')!;
    assert.deepEqual(
      { ...w1.metadata.labels },
      {
        app: 'test',
        'training.kubeflow.org/job-name': 'pi',
        'training.kubeflow.org/replica-type': 'worker',
        'training.kubeflow.org/replica-index': '1',
      },
    );
    assert.equal(c.pod('pi-launcher')!.metadata.labels?.['training.kubeflow.org/replica-type'], 'launcher');
    assert.equal(w1.metadata.ownerReferences?.[0]?.kind, 'MPIJob');
  });

  it('the launcher succeeding makes the MPIJob Succeeded and its running workers are deleted; suspending deletes every pod', async () => {
    const c = await testCluster([jobControllers()], [mpi(false)]);
    await c.run();
    for (const n of ['pi-launcher', 'pi-worker-0', 'pi-worker-1']) await c.setPhase(n, 'Running');
    await c.run();
    assert.equal(cond(c.get('MPIJob', 'pi'), 'Running')?.status, 'True');
    await c.setPhase('pi-launcher', 'Succeeded');
    await c.run();
    assert.equal(cond(c.get('MPIJob', 'pi'), 'Succeeded')?.reason, 'MPIJobSucceeded');
    assert.deepEqual(names(c.pods()), ['pi-launcher']);

    const d = await testCluster([jobControllers()], [mpi(false)]);
    await d.run();
    await retryOnConflict(
      d.store,
      'MPIJob',
      'default',
      'pi',
      (j) => void ((j as unknown as { spec: { runPolicy: { suspend: boolean } } }).spec.runPolicy.suspend = true),
    );
    await d.run();
    assert.equal(d.pods().length, 0);
  });

  it('a failed launcher fails the MPIJob', async () => {
    const c = await testCluster([jobControllers()], [mpi(false)]);
    await c.run();
    await c.setPhase('pi-launcher', 'Failed');
    await c.run();
    assert.equal(cond(c.get('MPIJob', 'pi'), 'Failed')?.reason, 'MPIJobFailed');
  });
});

describe('job controllers: LeaderWorkerSet', () => {
  const lws = (leader: boolean): KObject =>
    ({
      apiVersion: 'leaderworkerset.x-k8s.io/v1',
      kind: 'LeaderWorkerSet',
      metadata: { name: 'vllm', namespace: 'default' },
      spec: {
        replicas: 2,
        leaderWorkerTemplate: {
          size: 3,
          ...(leader ? { leaderTemplate: podTemplate({ cpu: '1' }, {}, { role: 'leader' }) } : {}),
          workerTemplate: podTemplate({ cpu: '2' }, {}, { role: 'worker' }),
        },
      },
    }) as KObject;

  it('per group a leader <lws>-<g> and workers <lws>-<g>-<w> with name, group-index and worker-index labels', async () => {
    const c = await testCluster([jobControllers()], [lws(true)]);
    await c.run();
    assert.deepEqual(names(c.pods()), ['vllm-0', 'vllm-0-1', 'vllm-0-2', 'vllm-1', 'vllm-1-1', 'vllm-1-2']);
    const leader = c.pod('vllm-1')!;
    assert.equal(leader.metadata.labels?.role, 'leader');
    assert.equal(leader.metadata.labels?.['leaderworkerset.sigs.k8s.io/group-index'], '1');
    assert.equal(leader.metadata.labels?.['leaderworkerset.sigs.k8s.io/worker-index'], '0');
    const w = c.pod('vllm-1-2')!;
    assert.equal(w.metadata.labels?.role, 'worker');
    assert.equal(w.metadata.labels?.['leaderworkerset.sigs.k8s.io/name'], 'vllm');
    assert.equal(w.metadata.labels?.['leaderworkerset.sigs.k8s.io/worker-index'], '2');
    assert.equal(w.metadata.annotations?.['leaderworkerset.sigs.k8s.io/leader-name'], 'vllm-1');
    assert.equal(w.metadata.ownerReferences?.[0]?.kind, 'LeaderWorkerSet');
  });

  it('without a leaderTemplate the leader uses the worker template', async () => {
    const c = await testCluster([jobControllers()], [lws(false)]);
    await c.run();
    assert.equal(c.pod('vllm-0')!.metadata.labels?.role, 'worker');
  });

  it('serving: a deleted pod and a finished pod are created again', async () => {
    const c = await testCluster([jobControllers()], [lws(true)]);
    await c.run();
    const uid = c.pod('vllm-0-1')!.metadata.uid;
    await c.store.delete('Pod', 'default', 'vllm-0-1');
    await c.setPhase('vllm-1', 'Succeeded');
    const leaderUid = c.pod('vllm-1')!.metadata.uid;
    await c.run();
    assert.equal(c.pods().length, 6);
    assert.notEqual(c.pod('vllm-0-1')!.metadata.uid, uid);
    assert.notEqual(c.pod('vllm-1')!.metadata.uid, leaderUid);
    assert.equal(c.pod('vllm-1')!.status?.phase, 'Pending');
  });
});

describe('job controllers: Volcano Job and HyperJob', () => {
  const vcjob = (name: string, minAvailable?: number): KObject =>
    ({
      apiVersion: 'batch.volcano.sh/v1alpha1',
      kind: 'Job',
      metadata: { name, namespace: 'default' },
      spec: {
        ...(minAvailable ? { minAvailable } : {}),
        tasks: [
          { name: 'ps', replicas: 1, template: podTemplate() },
          { name: 'worker', replicas: 2, template: podTemplate() },
        ],
      },
    }) as KObject;
  const phase = (c: TestCluster, name: string) => (c.get('Job', name) as { status?: { state?: { phase?: string } } }).status?.state?.phase;

  it('pods <job>-<task>-<i> with volcano.sh/job-name and task-spec labels and the task-index annotation; Running then Completed', async () => {
    const c = await testCluster([jobControllers()], [vcjob('vc')]);
    await c.run();
    assert.deepEqual(names(c.pods()), ['vc-ps-0', 'vc-worker-0', 'vc-worker-1']);
    const w = c.pod('vc-worker-1')!;
    assert.equal(w.metadata.labels?.['volcano.sh/job-name'], 'vc');
    assert.equal(w.metadata.labels?.['volcano.sh/task-spec'], 'worker');
    assert.equal(w.metadata.annotations?.['volcano.sh/task-index'], '1');
    assert.equal(w.metadata.ownerReferences?.[0]?.apiVersion, 'batch.volcano.sh/v1alpha1');
    assert.equal(phase(c, 'vc'), 'Pending');
    for (const p of c.pods()) await c.setPhase(p.metadata.name, 'Running');
    await c.run();
    assert.equal(phase(c, 'vc'), 'Running');
    await finishAll(c, 'Succeeded');
    assert.equal(phase(c, 'vc'), 'Completed');
  });

  it('a deleted pod of a running Volcano Job is created again; failures below minAvailable fail the Job', async () => {
    const c = await testCluster([jobControllers()], [vcjob('vc', 2)]);
    await c.run();
    const uid = c.pod('vc-worker-0')!.metadata.uid;
    await c.store.delete('Pod', 'default', 'vc-worker-0');
    await c.run();
    assert.notEqual(c.pod('vc-worker-0')!.metadata.uid, uid);
    await c.setPhase('vc-worker-0', 'Failed');
    await c.run();
    assert.notEqual(phase(c, 'vc'), 'Failed', '3 - 1 failed >= minAvailable 2');
    await c.setPhase('vc-worker-1', 'Failed');
    await c.run();
    assert.equal(phase(c, 'vc'), 'Failed');
    assert.equal(c.pod('vc-ps-0'), undefined, 'its unfinished pod is deleted');
  });

  it('a HyperJob creates Volcano Jobs <hyperjob>-<replicatedJob>-<i> owned by it, and finishes when all of them complete', async () => {
    const hj = {
      apiVersion: 'training.volcano.sh/v1alpha1',
      kind: 'HyperJob',
      metadata: { name: 'hj', namespace: 'default' },
      spec: {
        replicatedJobs: [{ name: 'trainer', replicas: 2, templateSpec: { tasks: [{ name: 'w', replicas: 2, template: podTemplate() }] } }],
      },
    } as KObject;
    const c = await testCluster([jobControllers()], [hj]);
    await c.run();
    const jobs = c.store.listSync<KObject>('Job').sort((a, b) => a.metadata.name.localeCompare(b.metadata.name));
    assert.deepEqual(
      jobs.map((j) => j.metadata.name),
      ['hj-trainer-0', 'hj-trainer-1'],
    );
    assert.equal(jobs[1]!.metadata.labels?.['training.volcano.sh/hyperjob-name'], 'hj');
    assert.equal(jobs[1]!.metadata.labels?.['training.volcano.sh/job-index'], '1');
    assert.equal(jobs[1]!.metadata.ownerReferences?.[0]?.kind, 'HyperJob');
    assert.deepEqual(names(c.pods()), ['hj-trainer-0-w-0', 'hj-trainer-0-w-1', 'hj-trainer-1-w-0', 'hj-trainer-1-w-1']);
    await finishAll(c, 'Succeeded', (p) => p.metadata.name.startsWith('hj-trainer-0'));
    assert.equal(cond(c.get('HyperJob', 'hj'), 'Completed'), undefined);
    await finishAll(c, 'Succeeded');
    assert.equal(cond(c.get('HyperJob', 'hj'), 'Completed')?.status, 'True');
  });
});

describe('job controllers: bad input', () => {
  it('a job object the API schema refuses gets a Warning Event naming the field and no pods, and the controller goes on', async () => {
    const badJob = {
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: { name: 'bad', namespace: 'default' },
      spec: { parallelism: -1, template: podTemplate() },
    } as KObject;
    const badJs = {
      apiVersion: 'jobset.x-k8s.io/v1alpha2',
      kind: 'JobSet',
      metadata: { name: 'badjs', namespace: 'default' },
      spec: { replicatedJobs: [{ name: 'x' }] },
    } as KObject;
    const badMpi = {
      apiVersion: 'kubeflow.org/v2beta1',
      kind: 'MPIJob',
      metadata: { name: 'badmpi', namespace: 'default' },
      spec: { mpiReplicaSpecs: { Worker: { replicas: 2 } } },
    } as KObject;
    const c = await testCluster([jobControllers()], [badJob, badJs, badMpi, job('good', {})]);
    await c.run();
    assert.equal(c.pods().length, 1, 'only the good Job has a pod');
    assert.deepEqual(c.manager.errors, []);
    const msg = (ref: string) => c.manager.events.about(ref).find((e) => e.reason === 'InvalidSpec')?.message ?? '';
    assert.match(msg('Job/default/bad'), /^nothing is created: .*spec\.parallelism: must be at least 0/);
    assert.match(msg('JobSet/default/badjs'), /^nothing is created: .*spec\.replicatedJobs\[0\]\.template/);
    assert.equal(
      msg('MPIJob/default/badmpi'),
      'nothing is created: spec.mpiReplicaSpecs must map Launcher and Worker to {replicas, template} with a pod template',
    );
  });
});

describe('job controllers: the schema verdict of a batch/v1 Job', () => {
  const job = (): BatchJob =>
    ({
      apiVersion: CoreApiVersion.Batch,
      kind: 'Job',
      metadata: { name: 'j', namespace: 'default', uid: 'u1' },
      spec: { parallelism: 2, suspend: true, template: podTemplate() },
    }) as BatchJob;
  const next = (j: BatchJob, change: (s: BatchJob['spec']) => void): BatchJob => {
    const spec = structuredClone(j.spec);
    change(spec);
    return { ...j, spec };
  };

  it('a start or stop (suspend and template labels and annotations changed) keeps the verdict without a second parse', () => {
    const a = job();
    assert.equal(specProblem(a), undefined);
    const n = specParses();
    const started = next(a, (s) => {
      s.suspend = false;
      s.template.metadata = { labels: { 'kueue.x-k8s.io/podset': 'main' }, annotations: { 'kueue.x-k8s.io/workload': 'job-j-1' } };
    });
    carryVerdict(a, started);
    assert.equal(specProblem(started), undefined);
    const stopped = next(started, (s) => {
      s.suspend = true;
      delete s.template.metadata;
    });
    carryVerdict(started, stopped);
    assert.equal(specProblem(stopped), undefined);
    assert.equal(specParses(), n, 'neither new spec was parsed');
  });

  it('a template label the schema refuses, any other change, or a spec refused before is parsed again', () => {
    const a = job();
    assert.equal(specProblem(a), undefined);
    const badLabel = next(a, (s) => {
      s.template.metadata = { labels: { '-bad': 'x' } };
    });
    carryVerdict(a, badLabel);
    assert.match(specProblem(badLabel) ?? '', /spec\.template\.metadata\.labels/);
    const n = specParses();
    const wider = next(a, (s) => {
      s.parallelism = 3;
      s.suspend = false;
    });
    carryVerdict(a, wider);
    assert.equal(specProblem(wider), undefined);
    assert.equal(specParses(), n + 1, 'a parallelism change is parsed');
    const refused = next(a, (s) => {
      s.parallelism = -1;
    });
    assert.ok(specProblem(refused));
    const resumed = next(refused, (s) => {
      s.suspend = false;
    });
    carryVerdict(refused, resumed);
    assert.match(specProblem(resumed) ?? '', /spec\.parallelism/, 'a refusal is not carried: parsed, and refused again');
  });
});

describe('job controllers: one stand-in per job framework of the registry', () => {
  it('every job framework has its stand-in, in registry order, keyed by the framework name', () => {
    const all = standIns();
    assert.deepEqual(
      all.map((c) => c.framework),
      JOB_FRAMEWORKS,
    );
    assert.deepEqual(
      all.map((c) => c.tag),
      JOB_FRAMEWORKS.map((f) => f.name),
    );
  });

  it('an owner is matched by API group and kind; batch/v1 Job only at that exact version', () => {
    const owner = (apiVersion: string, kind: string) => standIns().find((c) => c.owns({ apiVersion, kind }))?.tag;
    assert.equal(owner(CoreApiVersion.Batch, 'Job'), 'batch/job');
    assert.equal(owner('batch/v2', 'Job'), undefined);
    assert.equal(owner(CoreApiVersion.V1, 'Job'), undefined);
    assert.equal(owner(VolcanoApiVersion.Job, 'Job'), 'batch.volcano.sh/job');
    assert.equal(owner('batch.volcano.sh/v1beta1', 'Job'), 'batch.volcano.sh/job');
    assert.equal(owner(JobFrameworkApiVersion.JobSet, 'JobSet'), 'jobset.x-k8s.io/jobset');
    assert.equal(owner('jobset.x-k8s.io/v1alpha1', 'JobSet'), 'jobset.x-k8s.io/jobset');
    assert.equal(owner('apps/v1', 'ReplicaSet'), undefined);
  });

  it('keys split back into framework, namespace and name though the framework name holds a slash', () => {
    assert.deepEqual(splitJobKey(jobKey('jobset.x-k8s.io/jobset', 'team-a', 'train')), {
      tag: 'jobset.x-k8s.io/jobset',
      namespace: 'team-a',
      name: 'train',
    });
    assert.deepEqual(splitJobKey(jobKey('OrphanPod', undefined, 'p-1')), { tag: 'OrphanPod', namespace: 'default', name: 'p-1' });
  });
});

describe('sameJsonText', () => {
  it('says what comparing the two JSON texts says: key order counts, undefined members do not, undefined in an array is null', () => {
    const cases: [unknown, unknown][] = [
      [
        { a: 1, b: [1, 2] },
        { a: 1, b: [1, 2] },
      ],
      [
        { a: 1, b: 2 },
        { b: 2, a: 1 },
      ],
      [{ a: 1, c: undefined }, { a: 1 }],
      [{ a: 1 }, { a: 1, c: undefined, d: 2 }],
      [
        [1, undefined],
        [1, null],
      ],
      [[1, undefined], [1]],
      [{ a: '1' }, { a: 1 }],
      [{ a: 0 }, { a: -0 }],
      [{ a: NaN }, { a: null }],
      [{ a: { b: { c: 'x' } } }, { a: { b: { c: 'y' } } }],
      [{ a: [] }, { a: {} }],
      [{}, { a: undefined }],
      [{ t: new Date(0) }, { t: new Date(1) }],
      [
        { active: 1, ready: 0, conditions: [{ type: 'Complete', status: 'True' }] },
        { active: 1, ready: 1, conditions: [{ type: 'Complete', status: 'True' }] },
      ],
    ];
    for (const [a, b] of cases) {
      assert.equal(sameJsonText(a, b), JSON.stringify(a) === JSON.stringify(b), `${JSON.stringify(a)} vs ${JSON.stringify(b)}`);
      assert.equal(sameJsonText(b, a), JSON.stringify(a) === JSON.stringify(b), `${JSON.stringify(b)} vs ${JSON.stringify(a)}`);
    }
  });
});
