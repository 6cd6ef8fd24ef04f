// batch/v1 Job, as Kubernetes' job controller runs it (the parts topoqueue's jobs use):
//   1. count finished pods: each pod carries the finalizer `batch.kubernetes.io/job-tracking`;
//      a Succeeded or Failed pod is added to the status counts (and, Indexed, to
//      completedIndexes) with its uid under uncountedTerminatedPods, then its finalizer is
//      removed, then the uid is dropped: a pod is counted once even if it is deleted later
//      (node deleted, stopped by someone else). Pods the controller deletes itself
//      (suspended, finished, excess) lose the finalizer first and are never counted;
//   2. finished? failed > backoffLimit (default 6) -> Failed (BackoffLimitExceeded);
//      Indexed: every index in [0, completions) succeeded; NonIndexed: succeeded >=
//      completions, or without completions one pod succeeded and none is active -> Complete;
//      a finished Job's active pods are deleted;
//   3. suspended -> delete the active pods, condition Suspended=True, startTime cleared;
//   4. running -> keep min(parallelism, completions - succeeded) active pods: Indexed pods
//      `<job>-<index>-<5 chars>` for the lowest indexes neither done nor running (a failed
//      index gets a new pod, same index), NonIndexed `<job>-<5 chars>`; excess pods (parallelism
//      lowered) are deleted, highest index / newest first; without completions (a work
//      queue) no pod is added once one has succeeded;
//   5. status: active, ready, succeeded, failed, terminating, startTime, completionTime,
//      completedIndexes, conditions.
// Not modelled: pod failure policy, success policy, backoff delay between replacements
// (replacements are created at once), activeDeadlineSeconds, ttlSecondsAfterFinished.

import type { Condition, KObject, Pod, PodTemplateSpec } from '../api/objects.ts';
import { PodIndexLabel } from '../api/keys.ts';
import { compareStrings } from '../api/values.ts';
import { nowTimestamp } from '../runtime/clock.ts';
import { jobFramework } from '../integrations/job.ts';
import {
  BY_CONTROLLER_UID,
  StandIn,
  carryVerdict,
  conditionTrue,
  controllerUidIndex,
  createPod,
  deleteQuietly,
  isActive,
  isDeleting,
  podFromTemplate,
  withCondition,
  writeStatus,
  type KindEnv,
} from './job-controller-common.ts';
import { isPodReady, isTerminal } from '../api/objects.ts';

export const JOB_TRACKING_FINALIZER = 'batch.kubernetes.io/job-tracking';

export const JobLabel = {
  JobName: 'batch.kubernetes.io/job-name',
  ControllerUid: 'batch.kubernetes.io/controller-uid',
  /** Legacy keys, still written by Kubernetes. */
  LegacyJobName: 'job-name',
  LegacyControllerUid: 'controller-uid',
  CompletionIndex: PodIndexLabel.JobCompletionIndex,
} as const;

export const DEFAULT_BACKOFF_LIMIT = 6;

export interface BatchJob extends KObject {
  kind: 'Job';
  spec: {
    parallelism?: number;
    completions?: number;
    completionMode?: 'Indexed' | 'NonIndexed';
    backoffLimit?: number;
    suspend?: boolean;
    template: PodTemplateSpec;
    [k: string]: unknown;
  };
  status?: BatchJobStatus;
}

export interface BatchJobStatus {
  active?: number;
  ready?: number;
  succeeded?: number;
  failed?: number;
  terminating?: number;
  startTime?: string;
  completionTime?: string;
  completedIndexes?: string;
  uncountedTerminatedPods?: { succeeded?: string[]; failed?: string[] };
  conditions?: Condition[];
  [k: string]: unknown;
}

const whole = (v: unknown, dflt: number): number => (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0 ? v : dflt);

/** `1,3-5` -> {1, 3, 4, 5}; anything unreadable is skipped. */
export function parseIndexes(s: string | undefined): Set<number> {
  const out = new Set<number>();
  if (!s) return out;
  for (const part of s.split(',')) {
    const m = /^(\d+)(?:-(\d+))?$/.exec(part.trim());
    if (!m) continue;
    const a = Number(m[1]);
    const b = m[2] === undefined ? a : Number(m[2]);
    for (let i = a; i <= b; i++) out.add(i);
  }
  return out;
}

/** {1, 3, 4, 5} -> `1,3-5` (Kubernetes' completedIndexes form). */
export function formatIndexes(set: ReadonlySet<number>): string {
  const xs = [...set].sort((a, b) => a - b);
  const parts: string[] = [];
  for (let i = 0; i < xs.length;) {
    let j = i;
    while (j + 1 < xs.length && xs[j + 1] === xs[j]! + 1) j++;
    parts.push(j > i ? `${xs[i]}-${xs[j]}` : String(xs[i]));
    i = j + 1;
  }
  return parts.join(',');
}

export function completionIndexOf(p: Pod): number | undefined {
  const raw = p.metadata.labels?.[JobLabel.CompletionIndex] ?? p.metadata.annotations?.[JobLabel.CompletionIndex];
  if (raw === undefined || !/^\d+$/.test(raw)) return undefined;
  return Number(raw);
}

const hasTracking = (p: Pod): boolean => p.metadata.finalizers?.includes(JOB_TRACKING_FINALIZER) === true;

const newestFirst = (a: Pod, b: Pod): number =>
  compareStrings(b.metadata.creationTimestamp ?? '', a.metadata.creationTimestamp ?? '') ||
  compareStrings(b.metadata.name, a.metadata.name);

/** The pod the controller creates for `job` (and `index` when Indexed). */
export function jobPod(job: BatchJob, index: number | undefined): Pod {
  const labels: Record<string, string> = {
    [JobLabel.ControllerUid]: job.metadata.uid!,
    [JobLabel.JobName]: job.metadata.name,
    [JobLabel.LegacyControllerUid]: job.metadata.uid!,
    [JobLabel.LegacyJobName]: job.metadata.name,
  };
  const annotations: Record<string, string> = {};
  if (index !== undefined) {
    labels[JobLabel.CompletionIndex] = String(index);
    annotations[JobLabel.CompletionIndex] = String(index);
  }
  return podFromTemplate(job, job.spec.template, {
    generateName: index === undefined ? `${job.metadata.name}-` : `${job.metadata.name}-${index}-`,
    labels,
    annotations,
    finalizers: [JOB_TRACKING_FINALIZER],
  });
}

export class BatchJobController extends StandIn<BatchJob> {
  readonly framework = jobFramework;
  protected override readonly exactVersion = true;

  override setup(env: KindEnv): void {
    super.setup(env);
    this.objects.addIndex(BY_CONTROLLER_UID, controllerUidIndex);
    // A start or stop by the job reconciler keeps the spec's verdict (no second parse of the template).
    this.objects.addHandler({ update: carryVerdict });
  }

  /** A pod kept by the tracking finalizer whose Job is gone: release it. */
  async releaseOrphan(namespace: string, name: string): Promise<void> {
    const pod = this.env.pods.get(namespace, name);
    if (!pod || !hasTracking(pod)) return;
    const ref = pod.metadata.ownerReferences?.find((r) => r.controller === true && r.kind === 'Job');
    const job = ref ? this.objects.get(namespace, ref.name) : undefined;
    if (job && job.metadata.uid === ref!.uid) return;
    await this.removeTracking(pod);
  }

  protected async sync(job: BatchJob): Promise<void> {
    const { ctx } = this.env;
    const now = nowTimestamp(ctx.clock);
    const spec = job.spec ?? ({} as BatchJob['spec']);
    const suspended = spec.suspend === true;
    const indexed = spec.completionMode === 'Indexed';
    const parallelism = whole(spec.parallelism, 1);
    const hasCompletions = typeof spec.completions === 'number';
    const completions = hasCompletions ? whole(spec.completions, 1) : indexed ? parallelism : undefined;
    const backoffLimit = whole(spec.backoffLimit, DEFAULT_BACKOFF_LIMIT);
    // A shallow copy: every field below is replaced, never changed in place (conditions by
    // withCondition's new list), so the stored (frozen) parts are shared, and the store keeps
    // sharing them when the status is written.
    const status: BatchJobStatus = { ...job.status };

    // 1. Count finished pods, then release them.
    const uncSucceeded = new Set(status.uncountedTerminatedPods?.succeeded ?? []);
    const uncFailed = new Set(status.uncountedTerminatedPods?.failed ?? []);
    const completed = parseIndexes(status.completedIndexes);
    let succeeded = status.succeeded ?? 0;
    let failed = status.failed ?? 0;
    let newlyCounted = false;
    const release: Pod[] = [];
    const owned = this.env.podsOf(job.metadata.uid);
    for (const p of owned) {
      if (!hasTracking(p)) continue;
      const uid = p.metadata.uid!;
      if (uncSucceeded.has(uid) || uncFailed.has(uid)) {
        release.push(p);
        continue;
      }
      if (p.status?.phase === 'Succeeded') {
        const idx = indexed ? completionIndexOf(p) : undefined;
        if (!indexed) succeeded++;
        else if (idx !== undefined && idx < (completions ?? 0) && !completed.has(idx)) {
          completed.add(idx);
          succeeded++;
        }
        uncSucceeded.add(uid);
      } else if (p.status?.phase === 'Failed') {
        failed++;
        uncFailed.add(uid);
      } else continue;
      newlyCounted = true;
      release.push(p);
    }
    status.succeeded = succeeded;
    status.failed = failed;
    if (indexed) status.completedIndexes = formatIndexes(completed);
    status.uncountedTerminatedPods = { succeeded: [...uncSucceeded], failed: [...uncFailed] };
    if (newlyCounted) await writeStatus(ctx, job, tidy(status));
    for (const p of release) {
      await this.removeTracking(p);
      uncSucceeded.delete(p.metadata.uid!);
      uncFailed.delete(p.metadata.uid!);
    }
    status.uncountedTerminatedPods = { succeeded: [...uncSucceeded], failed: [...uncFailed] };

    // 2. Finished?
    // Releasing finished pods changes no active pod: the active ones are those of the list above.
    let active = owned.filter(isActive);
    let finished = conditionTrue(status.conditions, 'Complete') || conditionTrue(status.conditions, 'Failed');
    if (!finished && !suspended) {
      if (failed > backoffLimit) {
        status.conditions = withCondition(
          status.conditions,
          { type: 'Failed', status: 'True', reason: 'BackoffLimitExceeded', message: 'Job has reached the specified backoff limit' },
          now,
        );
        this.env.recorder.event(job, 'Warning', 'BackoffLimitExceeded', 'Job has reached the specified backoff limit');
        finished = true;
      } else if (
        indexed ? completed.size >= (completions ?? 0) : hasCompletions ? succeeded >= completions! : succeeded > 0 && active.length === 0
      ) {
        status.conditions = withCondition(
          status.conditions,
          { type: 'Complete', status: 'True', reason: 'CompletionsReached', message: 'Reached expected number of succeeded pods' },
          now,
        );
        status.completionTime = now;
        this.env.recorder.event(job, 'Normal', 'Completed', 'Job completed');
        finished = true;
      }
    }

    if (finished || suspended) {
      // 3. Finished or suspended: no pod runs.
      for (const p of active) await this.deletePod(p);
      if (!finished) {
        if (!conditionTrue(status.conditions, 'Suspended')) this.env.recorder.event(job, 'Normal', 'Suspended', 'Job suspended');
        status.conditions = withCondition(
          status.conditions,
          { type: 'Suspended', status: 'True', reason: 'JobSuspended', message: 'Job suspended' },
          now,
        );
        delete status.startTime;
      }
    } else {
      // 4. Running: keep the wanted number of active pods.
      if (conditionTrue(status.conditions, 'Suspended')) {
        status.conditions = withCondition(
          status.conditions,
          { type: 'Suspended', status: 'False', reason: 'JobResumed', message: 'Job resumed' },
          now,
        );
        this.env.recorder.event(job, 'Normal', 'Resumed', 'Job resumed');
      }
      status.startTime ??= now;
      if (indexed) await this.syncIndexed(job, active, completed, parallelism, completions ?? 0);
      // Without completions (a work queue), once a pod succeeded no new pod starts and the others finish on their own.
      else if (hasCompletions || succeeded === 0)
        await this.syncNonIndexed(job, active, parallelism, hasCompletions ? completions! - succeeded : parallelism);
    }

    // 5. Status.
    const pods = this.env.podsOf(job.metadata.uid);
    active = pods.filter(isActive);
    status.active = active.length;
    status.ready = active.filter(isPodReady).length;
    status.terminating = pods.filter((p) => isDeleting(p) && !isTerminal(p)).length;
    await writeStatus(ctx, job, tidy(status));
  }

  private async syncIndexed(job: BatchJob, active: Pod[], completed: Set<number>, parallelism: number, completions: number): Promise<void> {
    const byIndex = new Map<number, Pod>();
    const extra: Pod[] = [];
    for (const p of [...active].sort(newestFirst).reverse()) {
      const i = completionIndexOf(p);
      // A pod without a valid index, of an index already done, or a second pod of an index: not needed.
      if (i === undefined || i >= completions || completed.has(i) || byIndex.has(i)) extra.push(p);
      else byIndex.set(i, p);
    }
    const want = Math.max(0, Math.min(parallelism, completions - completed.size));
    for (const p of extra) await this.deletePod(p);
    if (byIndex.size > want) {
      const highest = [...byIndex.keys()].sort((a, b) => b - a).slice(0, byIndex.size - want);
      for (const i of highest) await this.deletePod(byIndex.get(i)!);
      return;
    }
    let missing = want - byIndex.size;
    for (let i = 0; i < completions && missing > 0; i++) {
      if (completed.has(i) || byIndex.has(i)) continue;
      await createPod(this.env, job, jobPod(job, i));
      missing--;
    }
  }

  private async syncNonIndexed(job: BatchJob, active: Pod[], parallelism: number, remaining: number): Promise<void> {
    const want = Math.max(0, Math.min(parallelism, remaining));
    if (active.length > want) {
      for (const p of [...active].sort(newestFirst).slice(0, active.length - want)) await this.deletePod(p);
      return;
    }
    for (let n = active.length; n < want; n++) await createPod(this.env, job, jobPod(job, undefined));
  }

  /**
   * Deletes a pod the controller no longer wants (suspended, finished, excess): its tracking
   * finalizer is removed first, as Kubernetes' deleteJobPods does, so it is never counted.
   */
  private async deletePod(p: Pod): Promise<void> {
    await this.removeTracking(p);
    await deleteQuietly(this.env.ctx, this.env.pods.get(p.metadata.namespace, p.metadata.name) ?? p);
  }

  /** Removes the tracking finalizer (from the informer's current pod; a conflict is retried by the manager). */
  private async removeTracking(stale: Pod): Promise<void> {
    const p = this.env.pods.get(stale.metadata.namespace, stale.metadata.name);
    if (!p || p.metadata.uid !== stale.metadata.uid || !hasTracking(p)) return;
    await this.env.ctx.store.update<Pod>({
      ...p,
      metadata: { ...p.metadata, finalizers: p.metadata.finalizers!.filter((x) => x !== JOB_TRACKING_FINALIZER) },
    });
  }
}

/** Drops empty optional fields so an unchanged status compares equal. */
function tidy(s: BatchJobStatus): BatchJobStatus {
  const out: BatchJobStatus = { ...s };
  const u = out.uncountedTerminatedPods;
  if (u && (u.succeeded ?? []).length === 0 && (u.failed ?? []).length === 0) delete out.uncountedTerminatedPods;
  if (out.completedIndexes === '') delete out.completedIndexes;
  if (out.conditions && out.conditions.length === 0) delete out.conditions;
  return out;
}
