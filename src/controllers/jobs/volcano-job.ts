// Volcano Job (batch.volcano.sh/v1alpha1): pod-gated, one Workload with one PodSet per task
// (integrations/volcano-job.ts). The embedded cluster creates pods `<job>-<task>-<i>`
// labelled `volcano.sh/job-name` and `volcano.sh/task-spec: <task>`; a pod's PodSet is its
// task, lowercased. Finished when `status.state.phase` is Completed (success) or Failed,
// Aborted or Terminated (failure).

import type { KObject, Pod } from '../../api/objects.ts';
import { VolcanoLabel } from '../../api/volcano-objects.ts';
import { VolcanoJobKind, volcanoJobIntegration } from '../../integrations/volcano-job.ts';
import { ownerIdentity, workloadNameForOwner } from '../../integrations/workload-name.ts';
import { type Finish, type PodGatedAdapter, isRecord, readSpec } from './adapter.ts';

export const VolcanoJobPhase = { Completed: 'Completed', Failed: 'Failed', Aborted: 'Aborted', Terminated: 'Terminated' } as const;
const FAILED_PHASES: readonly string[] = [VolcanoJobPhase.Failed, VolcanoJobPhase.Aborted, VolcanoJobPhase.Terminated];

/** Task names of a Volcano JobSpec as Volcano defaults them (`default<i>` when unnamed). */
export function taskNames(spec: Record<string, unknown>): string[] {
  const tasks = Array.isArray(spec.tasks) ? spec.tasks : [];
  return tasks.map((t: unknown, i) => (isRecord(t) && typeof t.name === 'string' && t.name !== '' ? t.name : `default${i}`));
}

/** The task of a pod of Volcano Job `jobName`: its `volcano.sh/task-spec` label, else its name `<job>-<task>-<i>`. */
export function taskOfPod(jobName: string, tasks: readonly string[], pod: Pod): string | undefined {
  const label = pod.metadata.labels?.[VolcanoLabel.TaskSpec];
  if (label !== undefined) return tasks.includes(label) ? label : undefined;
  const prefix = `${jobName}-`;
  if (!pod.metadata.name.startsWith(prefix)) return undefined;
  const rest = pod.metadata.name.slice(prefix.length);
  return [...tasks].sort((a, b) => b.length - a.length).find((t) => rest.startsWith(`${t}-`) && /^[0-9]+$/.test(rest.slice(t.length + 1)));
}

/** Phase of a Volcano Job (`status.state.phase`). */
export function volcanoJobPhase(job: KObject): string | undefined {
  const state = (job as { status?: { state?: { phase?: unknown } } }).status?.state;
  return typeof state?.phase === 'string' ? state.phase : undefined;
}

export function volcanoJobFinish(job: KObject): Finish | undefined {
  const phase = volcanoJobPhase(job);
  const message = (job as { status?: { state?: { message?: unknown } } }).status?.state?.message;
  const msg = typeof message === 'string' && message !== '' ? message : undefined;
  if (phase === VolcanoJobPhase.Completed) return { success: true, message: msg ?? 'Volcano Job completed' };
  if (phase !== undefined && FAILED_PHASES.includes(phase)) return { success: false, message: msg ?? `Volcano Job ${phase.toLowerCase()}` };
  return undefined;
}

export const volcanoJobAdapter: PodGatedAdapter = {
  mode: 'pods',
  kind: VolcanoJobKind.kind,
  apiVersion: VolcanoJobKind.apiVersion,
  hookSuffix: 'volcanojob.topoqueue.io',
  integration: volcanoJobIntegration,
  placePod(job, pod) {
    const task = taskOfPod(job.metadata.name, taskNames(readSpec(job)), pod);
    return task === undefined ? undefined : { workload: workloadNameForOwner(ownerIdentity(job)), podSet: task.toLowerCase() };
  },
  finished: volcanoJobFinish,
};
