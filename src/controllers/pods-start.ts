// Starting and stopping plain pods (kueue-core §1d "What is injected on start", §1e "Start",
// "Stop"): what an admitted PodSet brings to each of its pods, and the pod writes.
//
// Start, per pod: 1. the PodSet info from the admission (nodeSelector += nodeLabels of every
// assigned flavor, tolerations += the flavors' tolerations, label `kueue.x-k8s.io/podset`,
// annotation `kueue.x-k8s.io/workload`, labels local-queue-name and cluster-queue-name);
// 2. merge it into the pod (a key already set to another value is a conflict: permanent);
// 3. remove the gate `kueue.x-k8s.io/admission`, and `kueue.x-k8s.io/topology` unless the
// PodSet's assignment has a topologyAssignment (the TopologyUngater lifts that one).
// Stop: condition TerminationTarget=True (reason = the stop reason) on the pod's status,
// then delete it; Kueue never recreates pods.

import { KueueAnnotation, KueueLabel, KueueRuntimeKey, KueueSchedulingGate } from '../api/keys.ts';
import type { Condition, Pod, ResourceFlavor, StringMap, Toleration, Workload } from '../api/objects.ts';
import { nowTimestamp, type Clock } from '../runtime/clock.ts';
import { isNotFound, retryOnConflict, type ObjectStore } from '../runtime/store.ts';

export const TERMINATION_TARGET = 'TerminationTarget';

/** Kueue's stop reasons (jobframework.StopReason). */
export const StopReason = {
  WorkloadEvicted: 'WorkloadEvicted',
  WorkloadDeleted: 'WorkloadDeleted',
  NotAdmitted: 'NotAdmitted',
} as const;
export const NOT_ADMITTED_MESSAGE = 'Not admitted by cluster queue';
export const WORKLOAD_DELETED_MESSAGE = 'Workload is deleted';

export interface PodSetInfo {
  podSet: string;
  nodeSelector: StringMap;
  tolerations: Toleration[];
  labels: StringMap;
  annotations: StringMap;
  /** The assignment has a topologyAssignment: the TopologyUngater lifts the topology gate. */
  topology: boolean;
}

/** The PodSet's info from the Workload's admission, or why it cannot be built yet. */
export function podSetInfo(
  wl: Workload,
  podSet: string,
  flavor: (name: string) => ResourceFlavor | undefined,
): { info?: PodSetInfo; error?: string } {
  const admission = wl.status?.admission;
  const psa = admission?.podSetAssignments.find((a) => a.name === podSet);
  if (!admission || !psa) return { error: `Workload ${wl.metadata.name} has no assignment for PodSet ${podSet}` };
  const nodeSelector: StringMap = {};
  const tolerations: Toleration[] = [];
  for (const name of [...new Set(Object.values(psa.flavors ?? {}))].sort()) {
    const rf = flavor(name);
    if (!rf) return { error: `ResourceFlavor ${name} assigned to PodSet ${podSet} of Workload ${wl.metadata.name} is not found` };
    for (const [k, v] of Object.entries(rf.spec?.nodeLabels ?? {})) {
      if (nodeSelector[k] !== undefined && nodeSelector[k] !== v)
        return { error: `flavors of PodSet ${podSet} set nodeSelector ${k} to ${nodeSelector[k]} and ${v}` };
      nodeSelector[k] = v;
    }
    for (const t of rf.spec?.tolerations ?? []) if (!tolerations.some((x) => sameToleration(x, t))) tolerations.push(t);
  }
  const labels: StringMap = { [KueueLabel.PodSet]: podSet };
  if (wl.spec.queueName) labels[KueueRuntimeKey.LocalQueueNameLabel] = wl.spec.queueName;
  if (admission.clusterQueue) labels[KueueRuntimeKey.ClusterQueueNameLabel] = admission.clusterQueue;
  return {
    info: {
      podSet,
      nodeSelector,
      tolerations,
      labels,
      annotations: { [KueueAnnotation.Workload]: wl.metadata.name },
      topology: psa.topologyAssignment !== undefined,
    },
  };
}

function sameToleration(a: Toleration, b: Toleration): boolean {
  return (
    a.key === b.key &&
    (a.operator ?? 'Equal') === (b.operator ?? 'Equal') &&
    a.value === b.value &&
    (a.effect ?? '') === (b.effect ?? '') &&
    a.tolerationSeconds === b.tolerationSeconds
  );
}

function mergeMap(what: string, into: StringMap | undefined, add: StringMap): { merged: StringMap; conflict?: string } {
  const merged: StringMap = { ...into };
  for (const [k, v] of Object.entries(add)) {
    if (merged[k] !== undefined && merged[k] !== v)
      return { merged, conflict: `conflict for ${what}: conflict for key=${k}, value1=${merged[k]}, value2=${v}` };
    merged[k] = v;
  }
  return { merged };
}

/** Merges the info into a private copy of the pod and lifts Kueue's gates; a conflict is returned (permanent). */
export function applyPodSetInfo(pod: Pod, info: PodSetInfo): string | undefined {
  const ns = mergeMap('nodeSelector', pod.spec.nodeSelector, info.nodeSelector);
  const labels = mergeMap('labels', pod.metadata.labels, info.labels);
  const annotations = mergeMap('annotations', pod.metadata.annotations, info.annotations);
  const conflict = ns.conflict ?? labels.conflict ?? annotations.conflict;
  if (conflict) return conflict;
  if (Object.keys(ns.merged).length > 0) pod.spec.nodeSelector = ns.merged;
  pod.metadata.labels = labels.merged;
  pod.metadata.annotations = annotations.merged;
  const tolerations = [...(pod.spec.tolerations ?? [])];
  for (const t of info.tolerations) if (!tolerations.some((x) => sameToleration(x, t))) tolerations.push(t);
  if (tolerations.length > 0) pod.spec.tolerations = tolerations;
  const lifted = new Set<string>([KueueSchedulingGate.Admission]);
  if (!info.topology) lifted.add(KueueSchedulingGate.Topology);
  const gates = (pod.spec.schedulingGates ?? []).filter((g) => !lifted.has(g.name));
  if (gates.length > 0) pod.spec.schedulingGates = gates;
  else delete pod.spec.schedulingGates;
  return undefined;
}

export type StartResult = { status: 'started' } | { status: 'skipped' } | { status: 'conflict'; conflict: string };

/**
 * Writes the start of one pod: `started`; `skipped` when the pod is gone or no longer
 * gated; `conflict` when the info cannot be merged (nothing written).
 */
export async function startPod(store: ObjectStore, pod: Pod, info: PodSetInfo): Promise<StartResult> {
  let result: StartResult = { status: 'skipped' };
  await retryOnConflict(store, 'Pod', pod.metadata.namespace, pod.metadata.name, (p) => {
    result = { status: 'skipped' };
    if (p.metadata.uid !== pod.metadata.uid || !hasAdmissionGate(p)) return false;
    const conflict = applyPodSetInfo(p, info);
    result = conflict === undefined ? { status: 'started' } : { status: 'conflict', conflict };
    return conflict === undefined;
  });
  return result;
}

export function hasAdmissionGate(pod: Pod): boolean {
  return pod.spec?.schedulingGates?.some((g) => g.name === KueueSchedulingGate.Admission) ?? false;
}

/** TerminationTarget=True on the pod's status, then delete. */
export async function stopPod(store: ObjectStore, clock: Clock, pod: Pod, reason: string, message: string): Promise<void> {
  const ns = pod.metadata.namespace;
  const name = pod.metadata.name;
  const condition: Condition = { type: TERMINATION_TARGET, status: 'True', reason, message, lastTransitionTime: nowTimestamp(clock) };
  await retryOnConflict(
    store,
    'Pod',
    ns,
    name,
    (p) => {
      if (p.metadata.uid !== pod.metadata.uid) return false;
      const conditions = (p.status?.conditions ?? []).filter((c) => c.type !== TERMINATION_TARGET);
      p.status = { ...p.status, conditions: [...conditions, condition] };
    },
    { status: true },
  );
  try {
    await store.delete('Pod', ns, name, { uid: pod.metadata.uid });
  } catch (e) {
    if (!isNotFound(e)) throw e;
  }
}

/** Removes the managed finalizer; true when the pod changed. */
export async function finalizePod(store: ObjectStore, pod: Pod): Promise<boolean> {
  if (!(pod.metadata.finalizers ?? []).includes(KueueRuntimeKey.ManagedFinalizer)) return false;
  const r = await retryOnConflict(store, 'Pod', pod.metadata.namespace, pod.metadata.name, (p) => {
    if (p.metadata.uid !== pod.metadata.uid) return false;
    const fins = p.metadata.finalizers ?? [];
    if (!fins.includes(KueueRuntimeKey.ManagedFinalizer)) return false;
    p.metadata.finalizers = fins.filter((f) => f !== KueueRuntimeKey.ManagedFinalizer);
  });
  return r.outcome === 'written';
}
