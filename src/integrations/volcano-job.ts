// batch.volcano.sh/v1alpha1 Job -> one Kueue Workload carrying Volcano's gang and
// network-topology semantics as annotations (spec volcano-hypernode §1.2, §1.3, §4).
// Also the Volcano-side contract every Volcano adapter writes (volcano-podgroup.ts and
// hyperjob.ts reuse the helpers below).
//
// The contract the placement engine reads:
//   - Workload annotations:
//       `volcano.sh/network-topology-mode` (`hard`|`soft`), and when given
//       `volcano.sh/network-topology-highest-tier` (integer) or
//       `volcano.sh/network-topology-highest-tier-name`: the job-level networkTopology;
//       `gang.scheduling.koordinator.sh/min-available`: the gang minimum, in pods;
//       `scheduling.volcano.sh/queue-name`: the Volcano queue (`spec.queue`);
//   - PodSet template annotations (task level), for a task with `partitionPolicy`:
//       `topoqueue.io/partition-size` and the partition's networkTopology under the same
//       three `volcano.sh/network-topology-*` keys, and `topoqueue.io/subgroup-instances`
//       (placement/subgroups.ts: the partitions as sub-group instances, minPartitions as
//       their minSubGroups). Those keys are removed from the user's
//       pod templates first: on a Volcano Job's pods Volcano ignores them (the pods already
//       name a PodGroup), so only what the adapter derives may appear there.
//
// Job -> Workload:
//   1. parse the Job with the API layer's schema and Volcano's admission rules (defaults:
//      task replicas 1, unnamed tasks `default<i>`, mode hard, a one-element
//      networkTopology list read as its element);
//   2. one PodSet per task: name = task name (lowercased), count = replicas, template =
//      the task template labelled `volcano.sh/task-spec` and `volcano.sh/job-name`;
//   3. gang minimum = `spec.minAvailable`, or when unset (or 0, which the API cannot tell
//      from unset) what Volcano's mutating webhook sets: the sum over tasks of
//      `minAvailable`, each defaulting to the task's replicas;
//   4. the Workload as for any job owner (ownedWorkload: name `job-<name>-<hash>`, Kueue
//      queue label, owner reference); a `spec.priorityClassName` leaves the priority to
//      the class, as a template's does.

import { GangAnnotation } from '../api/gang.ts';
import { InputError, type Where } from '../api/errors.ts';
import type { KObject, Pod, PodSet, PodTemplateSpec, StringMap, Workload } from '../api/objects.ts';
import { parseObject } from '../api/schemas.ts';
import { networkTopologyOf } from '../api/volcano.ts';
import { SUBGROUP_INSTANCES_ANNOTATION, formatSubgroupInfo } from '../placement/subgroups.ts';
import {
  VolcanoAnnotation,
  VolcanoApiVersion,
  VolcanoLabel,
  type NetworkTopologySpec,
  type VolcanoJob,
  type VolcanoJobSpec,
  type VolcanoTask,
} from '../api/volcano-objects.ts';
import { type Finish, defineFramework, readSpec } from './framework.ts';
import type { IntegrationContext, ToWorkloadsResult } from './integration.ts';
import { MAX_PODSETS, ownedWorkload, ownerIdentity, podSetTemplate, whereIn, workloadNameForOwner } from './workload-name.ts';
import { isRecord } from '../api/values.ts';

export const VolcanoJobKind = { apiVersion: VolcanoApiVersion.Job, kind: 'Job' } as const;

/** The gang minimum in pods, under Koordinator's key (defined in api/gang.ts). */
export const GANG_MIN_AVAILABLE_ANNOTATION = GangAnnotation.MinAvailable;
/** On a PodSet template: pods per partition (slice), each confined to its own domain. */
export const PARTITION_SIZE_ANNOTATION = 'topoqueue.io/partition-size';
/** Volcano's queue key on pods; on Workloads it keeps a Volcano `spec.queue`. */
export const VOLCANO_QUEUE_ANNOTATION = 'scheduling.volcano.sh/queue-name';

/** Keys only an adapter may put on a PodSet template (removed from user templates). */
const DERIVED_TEMPLATE_ANNOTATIONS: readonly string[] = [
  VolcanoAnnotation.NetworkTopologyMode,
  VolcanoAnnotation.NetworkTopologyHighestTier,
  VolcanoAnnotation.NetworkTopologyHighestTierName,
  PARTITION_SIZE_ANNOTATION,
  SUBGROUP_INSTANCES_ANNOTATION,
];

/**
 * The `volcano.sh/network-topology-*` annotations for a normalized networkTopology: the
 * mode always, the tier and the tier name when set. No topology -> no annotations.
 */
export function networkTopologyAnnotations(nt: NetworkTopologySpec | undefined): StringMap {
  if (nt === undefined) return {};
  const out: StringMap = { [VolcanoAnnotation.NetworkTopologyMode]: nt.mode ?? 'hard' };
  if (nt.highestTierAllowed !== undefined) out[VolcanoAnnotation.NetworkTopologyHighestTier] = String(nt.highestTierAllowed);
  if (nt.highestTierName !== undefined) out[VolcanoAnnotation.NetworkTopologyHighestTierName] = nt.highestTierName;
  return out;
}

/**
 * A PodSet template for Volcano pods: podSetTemplate's copy without the derived keys the
 * user may have written, then `labels` and `annotations` set on it.
 */
export function volcanoPodSetTemplate(template: PodTemplateSpec, labels: StringMap, annotations: StringMap = {}): PodTemplateSpec {
  const kept: StringMap = { ...template.metadata?.annotations };
  for (const k of DERIVED_TEMPLATE_ANNOTATIONS) delete kept[k];
  const out = podSetTemplate({ metadata: { labels: template.metadata?.labels, annotations: kept }, spec: template.spec }, annotations);
  const allLabels = { ...out.metadata!.labels, ...labels };
  if (Object.keys(allLabels).length > 0) out.metadata!.labels = allLabels;
  return out;
}

/** Task-level annotations for a `partitionPolicy`: partition size and the partition's topology. */
export function partitionAnnotations(size: number, topology: NetworkTopologySpec | undefined): StringMap {
  return { [PARTITION_SIZE_ANNOTATION]: String(size), ...networkTopologyAnnotations(topology) };
}

/** Pods a Volcano JobSpec creates: the sum of its tasks' replicas (parsed: defaults set). */
export function podsOfJobSpec(spec: VolcanoJobSpec): number {
  return spec.tasks.reduce((n, t) => n + (t.replicas ?? 1), 0);
}

/**
 * The gang minimum of a parsed JobSpec: `minAvailable` if set and not 0, else Volcano's
 * webhook default, the sum of the tasks' `minAvailable` (each defaulting to replicas).
 */
export function jobMinAvailable(spec: VolcanoJobSpec): number {
  if (spec.minAvailable !== undefined && spec.minAvailable > 0) return spec.minAvailable;
  return spec.tasks.reduce((n, t) => n + (t.minAvailable ?? t.replicas ?? 1), 0);
}

/**
 * Parses a Volcano object with the API layer's schema and admission rules, as the CLI
 * does on load (parsing a parsed object again changes nothing). Never throws.
 */
export function parseVolcano<T extends KObject>(obj: KObject, where: Where): { object?: T; errors: InputError[] } {
  const r = parseObject(obj, where);
  return { object: r.object as T | undefined, errors: r.errors };
}

/** Workload annotations common to the Volcano kinds: topology, gang minimum, queue. */
export function volcanoWorkloadAnnotations(
  topology: NetworkTopologySpec | undefined,
  minAvailable: number,
  queue: string | undefined,
): StringMap {
  const out: StringMap = { ...networkTopologyAnnotations(topology), [GANG_MIN_AVAILABLE_ANNOTATION]: String(minAvailable) };
  if (queue) out[VOLCANO_QUEUE_ANNOTATION] = queue;
  return out;
}

/** ownedWorkload, with a Volcano `priorityClassName` leaving the priority to the class. */
export function volcanoOwnedWorkload(
  owner: KObject,
  podSets: PodSet[],
  annotations: StringMap,
  priorityClassName: string | undefined,
): Workload {
  const wl = ownedWorkload(owner, podSets, { annotations });
  if (priorityClassName) delete wl.spec.priority;
  return wl;
}

/** A PodSet count limit error, shared by the adapters. */
export function tooManyPodSets(where: Where, field: string, what: string, n: number): InputError {
  return new InputError({ ...where, field }, `a Workload holds at most ${MAX_PODSETS} PodSets, one per ${what}; this object has ${n}`);
}

function taskPodSet(task: VolcanoTask, job: string): PodSet {
  const name = task.name.toLowerCase();
  const pp = task.partitionPolicy;
  const annotations = pp ? partitionAnnotations(pp.partitionSize, networkTopologyOf(pp)) : {};
  // Partitions are sub-group instances (Volcano's job controller makes a subGroupPolicy of
  // them): pod i is in partition floor(i / partitionSize), all pending.
  if (pp) {
    annotations[SUBGROUP_INSTANCES_ANNOTATION] = formatSubgroupInfo({
      policy: task.name,
      size: pp.partitionSize,
      minSubGroups: pp.minPartitions ?? 0,
      ready: 0,
      instances: Array.from({ length: pp.totalPartitions }, (_, k) => ({
        id: `${VolcanoLabel.PartitionId}=${k}`,
        pending: pp.partitionSize,
      })),
    });
  }
  const labels = { [VolcanoLabel.TaskSpec]: task.name, [VolcanoLabel.JobName]: job };
  const template = volcanoPodSetTemplate(task.template, labels, annotations);
  return { name, template, count: task.replicas ?? 1 };
}

export function volcanoJobToWorkloads(obj: KObject, ctx: IntegrationContext): ToWorkloadsResult {
  const where = whereIn(ctx.where, obj);
  const parsed = parseVolcano<VolcanoJob>(obj, where);
  if (parsed.object === undefined) return { workloads: [], errors: parsed.errors };
  const job = parsed.object;
  const spec = job.spec;
  if (spec.tasks.length > MAX_PODSETS) {
    return { workloads: [], errors: [tooManyPodSets(where, 'spec.tasks', 'task', spec.tasks.length)] };
  }
  const podSets = spec.tasks.map((t) => taskPodSet(t, job.metadata.name));
  const annotations = volcanoWorkloadAnnotations(networkTopologyOf(spec), jobMinAvailable(spec), spec.queue);
  return { workloads: [volcanoOwnedWorkload(job, podSets, annotations, spec.priorityClassName)], errors: [] };
}

// ---------------------------------------------------------------------------------------
// The job side: pod-gated. The Volcano Job controller (the embedded cluster's stand-in too)
// creates pods `<job>-<task>-<i>` labelled `volcano.sh/job-name` and
// `volcano.sh/task-spec: <task>`; a pod's PodSet is its task, lowercased. Finished when
// `status.state.phase` is Completed (success) or Failed, Aborted or Terminated (failure).
// ---------------------------------------------------------------------------------------

export const VolcanoJobPhase = {
  Pending: 'Pending',
  Running: 'Running',
  Completed: 'Completed',
  Failed: 'Failed',
  Aborted: 'Aborted',
  Terminated: 'Terminated',
} as const;
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

export const volcanoJobFramework = defineFramework({
  name: 'batch.volcano.sh/job',
  kinds: [VolcanoJobKind],
  toWorkloads: volcanoJobToWorkloads,
  job: {
    mode: 'pods',
    hookSuffix: 'volcanojob.topoqueue.io',
    placePod(job, pod) {
      const task = taskOfPod(job.metadata.name, taskNames(readSpec(job)), pod);
      return task === undefined ? undefined : { workload: workloadNameForOwner(ownerIdentity(job)), podSet: task.toLowerCase() };
    },
    finished: volcanoJobFinish,
  },
});
