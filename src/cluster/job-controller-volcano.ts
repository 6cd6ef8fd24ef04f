// Volcano Job (batch.volcano.sh/v1alpha1) and HyperJob (training.volcano.sh/v1alpha1).
//
// Volcano Job:
//   1. parse the Job with the API layer's schema (task names default to `default<i>`,
//      replicas to 1); an unparseable Job gets a Warning Event and no pods;
//   2. pods `<job>-<task>-<i>` per task replica, owned (controller) by the Job, labels
//      `volcano.sh/job-name`, `volcano.sh/task-spec: <task>`, annotation
//      `volcano.sh/task-index: "<i>"`; while the Job is not finished a missing pod is created
//      again (a pod being deleted is waited for: names are fixed; finished pods stay);
//   3. gang minimum = spec.minAvailable, else the sum of the tasks' (as the integration reads
//      it); Failed when so many pods failed that the minimum can no longer succeed (its
//      unfinished pods are deleted); Completed when every pod has finished and at least the
//      minimum succeeded;
//   4. status.state.phase Pending (fewer than the minimum running) | Running | Completed |
//      Failed, and pending / running / succeeded / failed counts, minAvailable.
//   Not modelled: lifecycle policies (restart, abort on events), maxRetry, the Job's own
//   PodGroup (`<job>-<uid>`) and the `scheduling.k8s.io/group-name` annotation on pods.
//
// HyperJob:
//   1. child Volcano Jobs `<hyperjob>-<replicatedJob>-<i>` for i < replicas (default 1), the
//      replicatedJob's templateSpec as spec, owned (controller) by the HyperJob, labels
//      `training.volcano.sh/hyperjob-name`, `training.volcano.sh/replicatedjob-name`,
//      `training.volcano.sh/job-index`; a deleted child is created again until the HyperJob
//      has finished;
//   2. every child Completed -> condition Completed; a child Failed -> condition Failed and
//      the unfinished children are deleted;
//   3. status: conditions and replicatedJobsStatus (per replicatedJob, child Jobs by phase).

import type { Condition, KObject } from '../api/objects.ts';
import { parseObject } from '../api/schemas.ts';
import { VolcanoLabel, type HyperJob, type VolcanoJob, type VolcanoJobSpec } from '../api/volcano-objects.ts';
import { HyperJobLabel, hyperJobFramework } from '../integrations/hyperjob.ts';
import { VolcanoJobKind, VolcanoJobPhase, jobMinAvailable, volcanoJobFramework } from '../integrations/volcano-job.ts';
import { nowTimestamp } from '../runtime/clock.ts';
import type { Informer } from '../runtime/informer.ts';
import {
  BY_CONTROLLER_UID,
  StandIn,
  conditionTrue,
  controllerUidIndex,
  createChild,
  createPod,
  deleteQuietly,
  isActive,
  isDeleting,
  ownerReference,
  podFromTemplate,
  refuse,
  withCondition,
  writeStatus,
  type KindEnv,
} from './job-controller-common.ts';

export const VolcanoTaskIndexAnnotation = 'volcano.sh/task-index';

export interface VolcanoJobStatus {
  state?: { phase?: string; reason?: string; message?: string; lastTransitionTime?: string };
  minAvailable?: number;
  pending?: number;
  running?: number;
  succeeded?: number;
  failed?: number;
  [k: string]: unknown;
}

type StatusOf<T> = T & { status?: VolcanoJobStatus };

export const volcanoPodName = (job: string, task: string, i: number): string => `${job}-${task}-${i}`;

const phaseOf = (j: KObject): string | undefined => (j as StatusOf<KObject>).status?.state?.phase;
const isFinishedPhase = (p: string | undefined): boolean => p === VolcanoJobPhase.Completed || p === VolcanoJobPhase.Failed;

/**
 * The Volcano kinds' stand-ins parse a stored object with the API layer's schema (defaults
 * filled in) in sync, not in check: a Volcano Job that does not parse still gets a status. The
 * parse is cached per stored object, so the InvalidSpec Event is told once per version.
 */
abstract class ParsingStandIn<T extends KObject> extends StandIn<T> {
  private readonly parseCache = new WeakMap<KObject, { object?: T; message?: string }>();

  protected override check(): undefined {
    return undefined;
  }

  protected parsed(stored: T): { object?: T; message?: string } {
    let p = this.parseCache.get(stored);
    if (!p) {
      const r = parseObject(stored, {});
      p = r.object ? { object: r.object as T } : { message: r.errors.map((e) => e.message).join('; ') };
      this.parseCache.set(stored, p);
      if (p.message) refuse(this.env, stored, p.message);
    }
    return p;
  }
}

export class VolcanoJobController extends ParsingStandIn<VolcanoJob> {
  readonly framework = volcanoJobFramework;

  protected async sync(stored: VolcanoJob): Promise<void> {
    const name = stored.metadata.name;
    const { ctx, recorder } = this.env;
    const now = nowTimestamp(ctx.clock);
    const p = this.parsed(stored);
    const status: VolcanoJobStatus = structuredClone((stored as StatusOf<VolcanoJob>).status ?? {});
    if (!p.object) {
      status.state = { ...status.state, phase: status.state?.phase ?? VolcanoJobPhase.Pending, reason: 'InvalidSpec', message: p.message };
      await writeStatus(ctx, stored, status);
      return;
    }
    const spec: VolcanoJobSpec = p.object.spec;
    const minAvailable = jobMinAvailable(spec);
    let phase = status.state?.phase;
    const pods = this.env.podsOf(stored.metadata.uid);
    const byName = new Map(pods.map((x) => [x.metadata.name, x]));

    if (!isFinishedPhase(phase)) {
      for (const task of spec.tasks) {
        for (let i = 0; i < (task.replicas ?? 1); i++) {
          const podName = volcanoPodName(name, task.name, i);
          if (byName.has(podName)) continue;
          const pod = podFromTemplate(stored, task.template, {
            name: podName,
            labels: { [VolcanoLabel.JobName]: name, [VolcanoLabel.TaskSpec]: task.name },
            annotations: { [VolcanoTaskIndexAnnotation]: String(i) },
          });
          await createPod(this.env, stored, pod);
        }
      }
    }

    const total = spec.tasks.reduce((n, t) => n + (t.replicas ?? 1), 0);
    const c = { pending: 0, running: 0, succeeded: 0, failed: 0 };
    const after = this.env.podsOf(stored.metadata.uid);
    for (const x of after) {
      if (x.status?.phase === 'Succeeded') c.succeeded++;
      else if (x.status?.phase === 'Failed') c.failed++;
      else if (isDeleting(x)) continue;
      else if (x.status?.phase === 'Running') c.running++;
      else c.pending++;
    }
    if (!isFinishedPhase(phase)) {
      if (total - c.failed < minAvailable) {
        phase = VolcanoJobPhase.Failed;
        for (const x of after) if (isActive(x)) await deleteQuietly(ctx, x);
        recorder.event(stored, 'Warning', 'JobFailed', `${c.failed} pods failed: fewer than minAvailable ${minAvailable} can succeed`);
      } else if (c.succeeded + c.failed === total && c.succeeded >= minAvailable) {
        phase = VolcanoJobPhase.Completed;
        recorder.event(stored, 'Normal', 'JobCompleted', `${c.succeeded} of ${total} pods succeeded`);
      } else {
        phase = c.running + c.succeeded >= minAvailable && c.running > 0 ? VolcanoJobPhase.Running : VolcanoJobPhase.Pending;
      }
    }
    if (status.state?.phase !== phase) status.state = { phase, lastTransitionTime: now };
    Object.assign(status, { minAvailable, ...c });
    await writeStatus(ctx, stored, status);
  }
}

export class HyperJobController extends ParsingStandIn<HyperJob> {
  readonly framework = hyperJobFramework;
  private jobs!: Informer<VolcanoJob>;

  override setup(env: KindEnv): void {
    super.setup(env);
    this.jobs = env.ctx.informers.for<VolcanoJob>(VolcanoJobKind.kind);
    this.jobs.addIndex(BY_CONTROLLER_UID, controllerUidIndex);
  }

  protected async sync(stored: HyperJob): Promise<void> {
    const namespace = stored.metadata.namespace ?? 'default';
    const name = stored.metadata.name;
    const { ctx, recorder } = this.env;
    const now = nowTimestamp(ctx.clock);
    const p = this.parsed(stored);
    if (!p.object) return;
    const hj = p.object;
    const status = structuredClone((stored as StatusOf<HyperJob> & { status?: { conditions?: Condition[] } }).status ?? {}) as {
      conditions?: Condition[];
      replicatedJobsStatus?: { name: string; jobStates: Record<string, number> }[];
    };
    const children = this.jobs.byIndex(BY_CONTROLLER_UID, stored.metadata.uid!).filter((j) => j.apiVersion === VolcanoJobKind.apiVersion);
    const byName = new Map(children.map((j) => [j.metadata.name, j]));
    let finished = conditionTrue(status.conditions, 'Completed') || conditionTrue(status.conditions, 'Failed');

    const wanted: string[] = [];
    for (const rj of hj.spec.replicatedJobs) for (let i = 0; i < (rj.replicas ?? 1); i++) wanted.push(`${name}-${rj.name}-${i}`);
    if (!finished) {
      const failed = children.find((j) => phaseOf(j) === VolcanoJobPhase.Failed);
      if (failed) {
        status.conditions = withCondition(
          status.conditions,
          { type: 'Failed', status: 'True', reason: 'JobFailed', message: `child Job ${failed.metadata.name} failed` },
          now,
        );
        recorder.event(stored, 'Warning', 'JobFailed', `child Job ${failed.metadata.name} failed`);
        for (const j of children) if (!isFinishedPhase(phaseOf(j))) await deleteQuietly(ctx, j);
        finished = true;
      } else if (wanted.every((n) => byName.has(n) && phaseOf(byName.get(n)!) === VolcanoJobPhase.Completed)) {
        status.conditions = withCondition(
          status.conditions,
          { type: 'Completed', status: 'True', reason: 'AllJobsCompleted', message: `all ${wanted.length} Jobs completed` },
          now,
        );
        recorder.event(stored, 'Normal', 'AllJobsCompleted', `all ${wanted.length} Jobs completed`);
        finished = true;
      }
    }
    if (!finished) {
      for (const rj of hj.spec.replicatedJobs) {
        for (let i = 0; i < (rj.replicas ?? 1); i++) {
          const jobName = `${name}-${rj.name}-${i}`;
          if (byName.has(jobName)) continue;
          const child: VolcanoJob = {
            apiVersion: VolcanoJobKind.apiVersion,
            kind: VolcanoJobKind.kind,
            metadata: {
              name: jobName,
              namespace,
              labels: { [HyperJobLabel.Name]: name, [HyperJobLabel.ReplicatedJobName]: rj.name, [HyperJobLabel.JobIndex]: String(i) },
              ownerReferences: [ownerReference(stored)],
            },
            spec: structuredClone(rj.templateSpec),
          };
          await createChild(this.env, stored, child);
        }
      }
    }
    const fresh = this.jobs.byIndex(BY_CONTROLLER_UID, stored.metadata.uid!);
    status.replicatedJobsStatus = hj.spec.replicatedJobs.map((rj) => {
      const jobStates: Record<string, number> = {};
      for (const j of fresh) {
        if (j.metadata.labels?.[HyperJobLabel.ReplicatedJobName] !== rj.name) continue;
        const ph = phaseOf(j) ?? VolcanoJobPhase.Pending;
        jobStates[ph] = (jobStates[ph] ?? 0) + 1;
      }
      return { name: rj.name, jobStates };
    });
    await writeStatus(ctx, stored, status);
  }
}
