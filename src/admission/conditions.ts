// Workload conditions as Kueue writes them (kueue-core.md §1a "Condition types", "Reasons").
// Pure: `now` is seconds since the epoch, passed in. lastTransitionTime changes only when
// the status changes, as metav1 conditions do.

import type { Condition, Workload } from '../api/objects.ts';
import { formatTime } from '../api/time.ts';

export const WorkloadCondition = {
  QuotaReserved: 'QuotaReserved',
  Admitted: 'Admitted',
  Evicted: 'Evicted',
  Preempted: 'Preempted',
  Requeued: 'Requeued',
  PodsReady: 'PodsReady',
  Finished: 'Finished',
  DeactivationTarget: 'DeactivationTarget',
} as const;

export function findCondition(w: Workload, type: string): Condition | undefined {
  return w.status?.conditions?.find((c) => c.type === type);
}

export function isTrue(w: Workload, type: string): boolean {
  return findCondition(w, type)?.status === 'True';
}

/**
 * Sets a condition. The transition time is kept when the status does not change (reason
 * and message may); `now` undefined leaves it out (`plan`'s deterministic output).
 */
export function setCondition(w: Workload, c: Condition, now?: number): void {
  const conditions = [...(w.status?.conditions ?? [])];
  const i = conditions.findIndex((x) => x.type === c.type);
  const old = i >= 0 ? conditions[i] : undefined;
  const next: Condition = { ...c };
  // As Kueue's SetConditionAndUpdate: the generation the condition was computed for
  // (`kubectl wait --for=condition` ignores a condition older than metadata.generation).
  if (next.observedGeneration === undefined && w.metadata?.generation !== undefined) next.observedGeneration = w.metadata.generation;
  if (old && old.status === c.status && old.lastTransitionTime !== undefined) next.lastTransitionTime = old.lastTransitionTime;
  else if (now !== undefined) next.lastTransitionTime = formatTime(now);
  if (i >= 0) conditions[i] = next;
  else conditions.push(next);
  w.status = { ...(w.status ?? {}), conditions };
}

/** Some condition was computed for an older generation than the Workload's. */
export function staleConditions(w: Workload): boolean {
  const gen = w.metadata?.generation;
  return gen !== undefined && (w.status?.conditions ?? []).some((c) => c.observedGeneration !== undefined && c.observedGeneration < gen);
}

/**
 * After a spec change (a new metadata.generation), conditions that still hold are stamped
 * with the new generation. Returns false when every condition is already current.
 */
export function stampObservedGeneration(w: Workload): boolean {
  if (!staleConditions(w)) return false;
  const gen = w.metadata.generation!;
  const conditions = w.status?.conditions ?? [];
  w.status = {
    ...w.status,
    conditions: conditions.map((c) =>
      c.observedGeneration !== undefined && c.observedGeneration < gen ? { ...c, observedGeneration: gen } : c,
    ),
  };
  return true;
}

/** Kueue resets Evicted/Preempted on admission with `Previously: <old message>`. */
export function resetCondition(w: Workload, type: string, now?: number): void {
  const old = findCondition(w, type);
  if (!old || old.status !== 'True') return;
  setCondition(w, { type, status: 'False', reason: old.reason, message: `Previously: ${old.message ?? ''}` }, now);
}
