// MPIJob (kubeflow.org/v2beta1), as the MPI operator runs it, with the launcher as a pod:
//   1. runPolicy.suspend -> every pod is deleted (a resumed job starts afresh), condition
//      Suspended=True;
//   2. running -> pods `<name>-launcher` (from mpiReplicaSpecs.Launcher) and
//      `<name>-worker-<i>` for i < Worker.replicas (default 1), owned (controller) by the
//      MPIJob, labels `training.kubeflow.org/job-name`, `training.kubeflow.org/replica-type`
//      (launcher | worker), `training.kubeflow.org/replica-index`; a missing pod is created
//      again (a pod being deleted is waited for: names are fixed);
//   3. the launcher Succeeded -> condition Succeeded, Failed -> condition Failed; then the
//      running workers are deleted (cleanPodPolicy Running; the operator's default None would
//      leave them holding their nodes until their own end);
//   4. status: startTime, completionTime, conditions (Created, Running, Suspended,
//      Succeeded, Failed), replicaStatuses per type (active, succeeded, failed).
// Not modelled: the launcher as a Job with its own backoff, hostfile/ssh ConfigMaps and Secrets.

import type { Condition, KObject, PodTemplateSpec } from '../api/objects.ts';
import { MPIJobLabel, mpiJobFramework } from '../integrations/mpijob.ts';
import { nowTimestamp } from '../runtime/clock.ts';
import {
  StandIn,
  conditionTrue,
  createPod,
  deleteQuietly,
  isActive,
  isDeleting,
  podFromTemplate,
  withCondition,
  writeStatus,
} from './job-controller-common.ts';

interface ReplicaSpec {
  replicas?: number;
  template: PodTemplateSpec;
}

export interface MPIJob extends KObject {
  kind: 'MPIJob';
  spec: {
    mpiReplicaSpecs: { Launcher?: ReplicaSpec; Worker?: ReplicaSpec };
    runPolicy?: { suspend?: boolean; cleanPodPolicy?: string };
    [k: string]: unknown;
  };
  status?: {
    conditions?: Condition[];
    startTime?: string;
    completionTime?: string;
    replicaStatuses?: Record<string, { active: number; succeeded: number; failed: number }>;
    [k: string]: unknown;
  };
}

export const launcherName = (job: string): string => `${job}-launcher`;
export const workerName = (job: string, i: number): string => `${job}-worker-${i}`;

interface WantedPod {
  name: string;
  type: 'launcher' | 'worker';
  index: number;
  template: PodTemplateSpec;
}

function wantedPods(job: MPIJob): WantedPod[] {
  const specs = job.spec.mpiReplicaSpecs ?? {};
  const out: WantedPod[] = [];
  if (specs.Launcher) out.push({ name: launcherName(job.metadata.name), type: 'launcher', index: 0, template: specs.Launcher.template });
  const w = specs.Worker;
  if (w)
    for (let i = 0; i < (typeof w.replicas === 'number' && w.replicas >= 0 ? w.replicas : 1); i++)
      out.push({ name: workerName(job.metadata.name, i), type: 'worker', index: i, template: w.template });
  return out;
}

export class MPIJobController extends StandIn<MPIJob> {
  readonly framework = mpiJobFramework;

  /** Only the replica specs' shape: what the pods are made from. */
  protected override check(job: MPIJob): string | undefined {
    const specs = (job.spec as Partial<MPIJob['spec']> | undefined)?.mpiReplicaSpecs;
    const bad = (r: unknown) =>
      r !== undefined && (typeof r !== 'object' || r === null || typeof (r as ReplicaSpec).template?.spec !== 'object');
    if (typeof specs !== 'object' || specs === null || bad(specs.Launcher) || bad(specs.Worker)) {
      return 'spec.mpiReplicaSpecs must map Launcher and Worker to {replicas, template} with a pod template';
    }
    return undefined;
  }

  protected async sync(job: MPIJob): Promise<void> {
    const namespace = job.metadata.namespace ?? 'default';
    const name = job.metadata.name;
    const { ctx, recorder } = this.env;
    const now = nowTimestamp(ctx.clock);
    const status = structuredClone(job.status ?? {});
    const id = `${namespace}/${name}`;
    status.conditions = withCondition(
      status.conditions,
      { type: 'Created', status: 'True', reason: 'MPIJobCreated', message: `MPIJob ${id} is created.` },
      now,
    );
    const pods = this.env.podsOf(job.metadata.uid);
    const byName = new Map(pods.map((p) => [p.metadata.name, p]));
    const launcher = byName.get(launcherName(name));
    let finished = conditionTrue(status.conditions, 'Succeeded') || conditionTrue(status.conditions, 'Failed');
    const suspended = job.spec.runPolicy?.suspend === true;

    if (!finished && launcher?.status?.phase === 'Succeeded') {
      status.conditions = withCondition(
        status.conditions,
        { type: 'Succeeded', status: 'True', reason: 'MPIJobSucceeded', message: `MPIJob ${id} successfully completed.` },
        now,
      );
      status.conditions = withCondition(
        status.conditions,
        { type: 'Running', status: 'False', reason: 'MPIJobSucceeded', message: `MPIJob ${id} successfully completed.` },
        now,
      );
      status.completionTime = now;
      recorder.event(job, 'Normal', 'MPIJobSucceeded', `MPIJob ${id} successfully completed.`);
      finished = true;
    } else if (!finished && launcher?.status?.phase === 'Failed' && !(suspended && isDeleting(launcher))) {
      status.conditions = withCondition(
        status.conditions,
        { type: 'Failed', status: 'True', reason: 'MPIJobFailed', message: `MPIJob ${id} has failed: its launcher pod failed` },
        now,
      );
      status.conditions = withCondition(
        status.conditions,
        { type: 'Running', status: 'False', reason: 'MPIJobFailed', message: `MPIJob ${id} has failed: its launcher pod failed` },
        now,
      );
      status.completionTime = now;
      recorder.event(job, 'Warning', 'MPIJobFailed', `MPIJob ${id} has failed: its launcher pod failed`);
      finished = true;
    }

    if (finished || suspended) {
      // Finished: stop what still runs. Suspended: remove every pod, so a resumed job starts afresh.
      for (const p of pods) if (isActive(p) || (!finished && !isDeleting(p))) await deleteQuietly(ctx, p);
      if (!finished) {
        if (!conditionTrue(status.conditions, 'Suspended')) recorder.event(job, 'Normal', 'MPIJobSuspended', 'MPIJob suspended');
        status.conditions = withCondition(
          status.conditions,
          { type: 'Suspended', status: 'True', reason: 'MPIJobSuspended', message: 'MPIJob suspended' },
          now,
        );
        if (conditionTrue(status.conditions, 'Running'))
          status.conditions = withCondition(
            status.conditions,
            { type: 'Running', status: 'False', reason: 'MPIJobSuspended', message: 'MPIJob suspended' },
            now,
          );
        delete status.startTime;
      }
    } else {
      if (conditionTrue(status.conditions, 'Suspended')) {
        status.conditions = withCondition(
          status.conditions,
          { type: 'Suspended', status: 'False', reason: 'MPIJobResumed', message: 'MPIJob resumed' },
          now,
        );
        recorder.event(job, 'Normal', 'MPIJobResumed', 'MPIJob resumed');
      }
      status.startTime ??= now;
      for (const w of wantedPods(job)) {
        if (byName.has(w.name)) continue;
        const pod = podFromTemplate(job, w.template, {
          name: w.name,
          labels: { [MPIJobLabel.JobName]: name, [MPIJobLabel.ReplicaType]: w.type, [MPIJobLabel.ReplicaIndex]: String(w.index) },
        });
        await createPod(this.env, job, pod);
      }
      if (launcher?.status?.phase === 'Running') {
        status.conditions = withCondition(
          status.conditions,
          { type: 'Running', status: 'True', reason: 'MPIJobRunning', message: `MPIJob ${id} is running.` },
          now,
        );
      }
    }

    const counts: Record<string, { active: number; succeeded: number; failed: number }> = {};
    for (const p of this.env.podsOf(job.metadata.uid)) {
      const type = p.metadata.labels?.[MPIJobLabel.ReplicaType] === 'launcher' ? 'Launcher' : 'Worker';
      const c = (counts[type] ??= { active: 0, succeeded: 0, failed: 0 });
      if (p.status?.phase === 'Succeeded') c.succeeded++;
      else if (p.status?.phase === 'Failed') c.failed++;
      else if (!isDeleting(p)) c.active++;
    }
    status.replicaStatuses = counts;
    await writeStatus(ctx, job, status);
  }
}
