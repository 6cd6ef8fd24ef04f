// JobSet (jobset.x-k8s.io/v1alpha2), as the JobSet controller runs it:
//   1. child Jobs `<jobset>-<replicatedJob>-<jobIndex>`, one per replica, owned (controller)
//      by the JobSet, Indexed unless the template says otherwise, `suspend` mirrored from the
//      JobSet; labels and annotations `jobset.sigs.k8s.io/jobset-name`, `replicatedjob-name`,
//      `job-index`, `replicatedjob-replicas`, `restart-attempt` on the Job and on its pod
//      template. Templates come from the JobSet's replicatedJobs when a Job is created and
//      again when a suspended Job is resumed (so what Kueue injected on start reaches them);
//   2. a child Job Failed -> with failurePolicy.maxRestarts left, restarts+1 and every child
//      Job is deleted and created anew (the garbage collector removes their pods); else the
//      JobSet is Failed and its unfinished child Jobs are deleted;
//   3. every child Job Complete -> Completed;
//   4. status: restarts, conditions (Completed, Failed, Suspended), replicatedJobsStatus
//      (per replicatedJob: how many child Jobs are ready, succeeded, failed, active, suspended).
// Not modelled: success policy, startup policy, network (headless Service), coordinator.

import type { Condition, KObject, PodTemplateSpec, StringMap } from '../api/objects.ts';
import { nowTimestamp } from '../runtime/clock.ts';
import type { Informer } from '../runtime/informer.ts';
import { JobKind } from '../integrations/job.ts';
import { JobSetLabel, jobSetFramework } from '../integrations/jobset.ts';
import type { BatchJob } from './job-controller-batch.ts';
import {
  BY_CONTROLLER_UID,
  StandIn,
  conditionTrue,
  controllerUidIndex,
  createChild,
  deleteQuietly,
  isDeleting,
  ownerReference,
  updateObject,
  withCondition,
  writeStatus,
  type KindEnv,
} from './job-controller-common.ts';

export interface ReplicatedJob {
  name: string;
  replicas?: number;
  template: { metadata?: { labels?: StringMap; annotations?: StringMap }; spec: BatchJob['spec'] };
}

export interface JobSet extends KObject {
  kind: 'JobSet';
  spec: { suspend?: boolean; replicatedJobs: ReplicatedJob[]; failurePolicy?: { maxRestarts?: number }; [k: string]: unknown };
  status?: { restarts?: number; conditions?: Condition[]; replicatedJobsStatus?: ReplicatedJobStatus[]; [k: string]: unknown };
}

export interface ReplicatedJobStatus {
  name: string;
  ready: number;
  succeeded: number;
  failed: number;
  active: number;
  suspended: number;
}

const replicasOf = (rj: ReplicatedJob): number => (typeof rj.replicas === 'number' && rj.replicas >= 0 ? rj.replicas : 1);

export const childJobName = (js: string, rj: string, index: number): string => `${js}-${rj}-${index}`;

function childLabels(js: JobSet, rj: ReplicatedJob, index: number, restarts: number): StringMap {
  return {
    [JobSetLabel.JobSetName]: js.metadata.name,
    [JobSetLabel.ReplicatedJobName]: rj.name,
    [JobSetLabel.JobIndex]: String(index),
    [JobSetLabel.ReplicatedJobReplicas]: String(replicasOf(rj)),
    [JobSetLabel.RestartAttempt]: String(restarts),
  };
}

/** The replicatedJob's pod template with the JobSet's labels and annotations added. */
function childPodTemplate(rj: ReplicatedJob, keys: StringMap): PodTemplateSpec {
  const t = structuredClone(rj.template.spec.template ?? { spec: { containers: [] } });
  t.metadata = { ...t.metadata, labels: { ...t.metadata?.labels, ...keys }, annotations: { ...t.metadata?.annotations, ...keys } };
  return t;
}

export function childJob(js: JobSet, rj: ReplicatedJob, index: number, restarts: number): BatchJob {
  const keys = childLabels(js, rj, index, restarts);
  const spec = structuredClone(rj.template.spec);
  spec.completionMode ??= 'Indexed';
  spec.suspend = js.spec.suspend === true;
  spec.template = childPodTemplate(rj, keys);
  return {
    apiVersion: JobKind.apiVersion,
    kind: JobKind.kind,
    metadata: {
      name: childJobName(js.metadata.name, rj.name, index),
      namespace: js.metadata.namespace,
      labels: { ...rj.template.metadata?.labels, ...keys },
      annotations: { ...rj.template.metadata?.annotations, ...keys },
      ownerReferences: [ownerReference(js)],
    },
    spec,
  };
}

const jobDone = (j: BatchJob, type: 'Complete' | 'Failed'): boolean => conditionTrue(j.status?.conditions, type);

export class JobSetController extends StandIn<JobSet> {
  readonly framework = jobSetFramework;
  private jobs!: Informer<BatchJob>;

  override setup(env: KindEnv): void {
    super.setup(env);
    this.jobs = env.ctx.informers.for<BatchJob>(JobKind.kind);
    this.jobs.addIndex(BY_CONTROLLER_UID, controllerUidIndex);
  }

  protected async sync(js: JobSet): Promise<void> {
    const { ctx, recorder } = this.env;
    const now = nowTimestamp(ctx.clock);
    const status = structuredClone(js.status ?? {});
    const restarts = status.restarts ?? 0;
    const children = this.jobs.byIndex(BY_CONTROLLER_UID, js.metadata.uid!).filter((j) => j.apiVersion === JobKind.apiVersion);
    const current = children.filter((j) => j.metadata.labels?.[JobSetLabel.RestartAttempt] === String(restarts));
    const finished = conditionTrue(status.conditions, 'Completed') || conditionTrue(status.conditions, 'Failed');
    status.replicatedJobsStatus = js.spec.replicatedJobs.map((rj) => this.replicatedJobStatus(rj, current));

    if (finished) {
      if (conditionTrue(status.conditions, 'Failed'))
        for (const j of children) if (!jobDone(j, 'Complete') && !jobDone(j, 'Failed')) await deleteQuietly(ctx, j);
      await writeStatus(ctx, js, status);
      return;
    }
    // Jobs of an earlier attempt go first.
    const stale = children.filter((j) => !current.includes(j));
    for (const j of stale) await deleteQuietly(ctx, j);

    const failedJob = current.find((j) => jobDone(j, 'Failed'));
    if (failedJob) {
      const policy = js.spec.failurePolicy;
      const maxRestarts = policy?.maxRestarts ?? 0;
      if (restarts < maxRestarts) {
        status.restarts = restarts + 1;
        recorder.event(
          js,
          'Warning',
          'Restarting',
          `child Job ${failedJob.metadata.name} failed: restarting the JobSet (attempt ${restarts + 1} of ${maxRestarts})`,
        );
        await writeStatus(ctx, js, status);
        for (const j of current) await deleteQuietly(ctx, j);
        return;
      }
      const [reason, message] = policy
        ? ['ReachedMaxRestarts', 'jobset failed due to reaching max number of restarts']
        : ['FailedJobs', 'jobset failed due to one or more job failures'];
      status.conditions = withCondition(status.conditions, { type: 'Failed', status: 'True', reason, message }, now);
      recorder.event(js, 'Warning', reason, message);
      for (const j of current) if (!jobDone(j, 'Complete') && !jobDone(j, 'Failed')) await deleteQuietly(ctx, j);
      await writeStatus(ctx, js, status);
      return;
    }
    const expected = js.spec.replicatedJobs.reduce((n, rj) => n + replicasOf(rj), 0);
    if (stale.length === 0 && current.length === expected && current.every((j) => jobDone(j, 'Complete'))) {
      status.conditions = withCondition(
        status.conditions,
        { type: 'Completed', status: 'True', reason: 'AllJobsCompleted', message: 'jobset completed successfully' },
        now,
      );
      recorder.event(js, 'Normal', 'AllJobsCompleted', 'jobset completed successfully');
      await writeStatus(ctx, js, status);
      return;
    }

    const suspend = js.spec.suspend === true;
    if (stale.length === 0) {
      const byName = new Map(current.map((j) => [j.metadata.name, j]));
      for (const rj of js.spec.replicatedJobs) {
        for (let i = 0; i < replicasOf(rj); i++) {
          const child = byName.get(childJobName(js.metadata.name, rj.name, i));
          if (!child) {
            await createChild(this.env, js, childJob(js, rj, i, restarts));
          } else if (!isDeleting(child) && (child.spec.suspend === true) !== suspend) {
            const template = childJob(js, rj, i, restarts).spec.template;
            await updateObject(ctx, child, (o) => {
              o.spec.suspend = suspend;
              // Resumed: the pod template as the JobSet has it now.
              if (!suspend) o.spec.template = template;
            });
          }
        }
      }
    }
    const wasSuspended = conditionTrue(status.conditions, 'Suspended');
    if (suspend)
      status.conditions = withCondition(
        status.conditions,
        { type: 'Suspended', status: 'True', reason: 'SuspendedJobs', message: 'jobset is suspended' },
        now,
      );
    else if (wasSuspended)
      status.conditions = withCondition(
        status.conditions,
        { type: 'Suspended', status: 'False', reason: 'ResumeJobs', message: 'jobset is resumed' },
        now,
      );
    const fresh = this.jobs
      .byIndex(BY_CONTROLLER_UID, js.metadata.uid!)
      .filter((j) => j.metadata.labels?.[JobSetLabel.RestartAttempt] === String(restarts));
    status.replicatedJobsStatus = js.spec.replicatedJobs.map((rj) => this.replicatedJobStatus(rj, fresh));
    await writeStatus(ctx, js, status);
  }

  private replicatedJobStatus(rj: ReplicatedJob, jobs: BatchJob[]): ReplicatedJobStatus {
    const s: ReplicatedJobStatus = { name: rj.name, ready: 0, succeeded: 0, failed: 0, active: 0, suspended: 0 };
    for (const j of jobs) {
      if (j.metadata.labels?.[JobSetLabel.ReplicatedJobName] !== rj.name) continue;
      if (jobDone(j, 'Complete')) s.succeeded++;
      else if (jobDone(j, 'Failed')) s.failed++;
      else if (j.spec.suspend === true) s.suspended++;
      else {
        s.active++;
        const perJob = Math.min(j.spec.parallelism ?? 1, j.spec.completions ?? j.spec.parallelism ?? 1);
        if ((j.status?.ready ?? 0) + (j.status?.succeeded ?? 0) >= perJob) s.ready++;
      }
    }
    return s;
  }
}
