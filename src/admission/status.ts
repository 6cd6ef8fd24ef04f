// What the scheduler writes on a Workload for each decision of the cycle (kueue-core.md §1b
// "What is written on admission", §1a reasons). `now` undefined leaves transition times
// out (`plan` output is the same on every run).

import { GangAnnotation } from '../api/gang.ts';
import type { PodSetAssignment, Workload } from '../api/objects.ts';
import { formatResourceAmount } from '../api/resources.ts';
import { formatTime } from '../api/time.ts';
import { encodeV1beta2 } from '../placement/assignment-codec.ts';
import { resetCondition, setCondition, WorkloadCondition } from './conditions.ts';
import { PendingReason } from './flavor-assigner.ts';
import type { PreemptionTarget } from './preemption.ts';
import type { AdmittedWorkload } from './snapshot.ts';
import { GANG_WAITING_SINCE_ANNOTATION } from './workload-info.ts';

export interface StatusOptions {
  now?: number;
  /** TASAssignmentsEncodingByHostnamePrefix (default on). */
  encodingByHostnamePrefix?: boolean;
}

/** `status.admission` of a reservation. */
export function admissionOf(
  a: AdmittedWorkload,
  encodingByHostnamePrefix = true,
): { clusterQueue: string; podSetAssignments: PodSetAssignment[] } {
  const byName = new Map(a.podSets.map((p) => [p.name, p]));
  return {
    clusterQueue: a.clusterQueue,
    podSetAssignments: a.workload.spec.podSets.map((ps) => {
      const p = byName.get(ps.name);
      if (!p) return { name: ps.name, count: 0 };
      const out: PodSetAssignment = {
        name: ps.name,
        flavors: Object.fromEntries(
          Object.keys(p.flavors)
            .sort()
            .map((r) => [r, p.flavors[r]!]),
        ),
        resourceUsage: Object.fromEntries(
          Object.keys(p.usage)
            .sort()
            .map((r) => [r, formatResourceAmount(r, p.usage[r]!)]),
        ),
        count: p.count,
      };
      if (p.assignment) out.topologyAssignment = encodeV1beta2(p.assignment, { encodingByHostnamePrefix });
      return out;
    }),
  };
}

/** QuotaReserved=True, and Admitted=True unless the reservation is a NonStrict gang's partial one. */
export function writeAdmission(w: Workload, a: AdmittedWorkload, opts: StatusOptions = {}): void {
  w.status = { ...(w.status ?? {}), admission: admissionOf(a, opts.encodingByHostnamePrefix ?? true) };
  setCondition(
    w,
    {
      type: WorkloadCondition.QuotaReserved,
      status: 'True',
      reason: 'QuotaReserved',
      message: `Quota reserved in ClusterQueue ${a.clusterQueue}`,
    },
    opts.now,
  );
  if (a.reservedOnly) {
    const held = a.podSets.reduce((n, p) => n + p.count, 0);
    const min = w.metadata.annotations?.[GangAnnotation.MinAvailable] ?? '?';
    setCondition(
      w,
      {
        type: WorkloadCondition.Admitted,
        status: 'False',
        reason: PendingReason.GangAccumulating,
        message: `NonStrict gang holds ${held} of its minimum ${min} pods; it is admitted when the minimum is reserved`,
      },
      opts.now,
    );
  } else {
    setCondition(
      w,
      { type: WorkloadCondition.Admitted, status: 'True', reason: 'Admitted', message: 'The workload is admitted' },
      opts.now,
    );
    // Satisfied: its waiting time no longer runs (a later eviction starts afresh).
    if (w.metadata.annotations?.[GANG_WAITING_SINCE_ANNOTATION] !== undefined) {
      const { [GANG_WAITING_SINCE_ANNOTATION]: _, ...rest } = w.metadata.annotations;
      w.metadata = { ...w.metadata, annotations: rest };
    }
  }
  for (const t of [WorkloadCondition.Evicted, WorkloadCondition.Preempted]) resetCondition(w, t, opts.now);
}

/** QuotaReserved=False with the reason and message of the cycle. */
export function writePending(w: Workload, reason: string, message: string, opts: StatusOptions = {}): void {
  setCondition(w, { type: WorkloadCondition.QuotaReserved, status: 'False', reason, message }, opts.now);
}

/** Our annotation when a gang's waiting time starts. */
export function writeGangWaitingSince(w: Workload, since: number): void {
  w.metadata = { ...w.metadata, annotations: { ...(w.metadata.annotations ?? {}), [GANG_WAITING_SINCE_ANNOTATION]: formatTime(since) } };
}

/** Takes the reservation away: no admission, QuotaReserved=False, Admitted=False. */
export function clearAdmission(w: Workload, reason: string, message: string, opts: StatusOptions = {}): void {
  if (w.status?.admission !== undefined) {
    const { admission: _, ...rest } = w.status;
    w.status = rest;
  }
  setCondition(w, { type: WorkloadCondition.QuotaReserved, status: 'False', reason, message }, opts.now);
  const admitted = w.status?.conditions?.find((c) => c.type === WorkloadCondition.Admitted);
  if (admitted && admitted.status === 'True')
    setCondition(
      w,
      { type: WorkloadCondition.Admitted, status: 'False', reason: 'NoReservation', message: 'The workload has no reservation' },
      opts.now,
    );
}

/** Evicted=True (Preempted), Preempted=True with the detailed reason; the reservation is released and the Workload requeued. */
export function writePreempted(w: Workload, t: PreemptionTarget, opts: StatusOptions = {}): void {
  setCondition(w, { type: WorkloadCondition.Evicted, status: 'True', reason: 'Preempted', message: t.message }, opts.now);
  setCondition(w, { type: WorkloadCondition.Preempted, status: 'True', reason: t.reason, message: t.message }, opts.now);
  clearAdmission(w, 'PendingEvaluation', t.message, opts);
  setCondition(w, { type: WorkloadCondition.Requeued, status: 'True', reason: 'Preempted', message: t.message }, opts.now);
}

/**
 * Evicted=True with a reason and message. The reservation stays: whoever stops the
 * Workload's pods clears it afterwards (admission/pods-ready.ts clearReservation).
 */
export function writeEvicted(w: Workload, reason: string, message: string, opts: StatusOptions = {}): void {
  setCondition(w, { type: WorkloadCondition.Evicted, status: 'True', reason, message }, opts.now);
}

/**
 * The runtime's preemption: Evicted=True (Preempted) and Preempted=True with the detailed
 * reason, the reservation kept until the victim's pods are gone (writePreempted, which
 * releases at once, is for `plan` where nothing runs).
 */
export function writePreemptionEviction(w: Workload, t: PreemptionTarget, opts: StatusOptions = {}): void {
  writeEvicted(w, 'Preempted', t.message, opts);
  setCondition(w, { type: WorkloadCondition.Preempted, status: 'True', reason: t.reason, message: t.message }, opts.now);
}

/** A gang whose waiting time ran out: no reservation, annotated timed out (seed), not scheduled again until the user acts. */
export function writeGangTimeout(w: Workload, message: string, opts: StatusOptions = {}): void {
  w.metadata = { ...w.metadata, annotations: { ...(w.metadata.annotations ?? {}), [GangAnnotation.Timeout]: 'true' } };
  clearAdmission(w, PendingReason.GangTimeout, message, opts);
}
