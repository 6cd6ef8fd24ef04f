// One head's entry in a scheduling cycle: the head, the members decided with it (itself,
// and the other gangs of its gang group), and what the nomination found. Shared by the
// cycle (cycle.ts), the nomination (nominate.ts) and gang groups (gang-group.ts).

import type { WorkloadPlacementOptions } from '../placement/workload-placement.ts';
import type { FlavorAssignment, PendingReason } from './flavor-assigner.ts';
import type { PreemptionTarget } from './preemption.ts';
import type { AdmittedWorkload, ClusterQueueInfo } from './snapshot.ts';
import type { WorkloadInfo } from './workload-info.ts';

export interface CycleConfig {
  /** Seconds since the epoch (virtual or real). */
  now: number;
  placement?: WorkloadPlacementOptions;
  /** Kueue's PartialAdmission gate (default on). */
  partialAdmission?: boolean;
  /** waitForPodsReady.blockAdmission: the message when an admitted Workload is not ready yet. */
  admissionBlocked?: string;
}

export interface Member {
  info: WorkloadInfo;
  cq: ClusterQueueInfo;
  assignment?: FlavorAssignment;
  counts?: Map<string, number>;
  targets: readonly PreemptionTarget[];
  /** NonStrict: the reservation is below the minimum. */
  reservedOnly: boolean;
  /** The reservation it held before this cycle (NonStrict accumulation). */
  held?: AdmittedWorkload;
  /** A group member taken from its heap (not parked): it goes back there if not admitted. */
  wasLive?: boolean;
}

export interface Entry {
  head: WorkloadInfo;
  members: Member[];
  status: 'fit' | 'preempt' | 'fail' | 'timeout';
  reason: PendingReason;
  message: string;
  /** Requeue straight back (FailedAfterNomination, PendingPreemption). */
  immediate: boolean;
  /** Never retried until the Workload changes (namespace mismatch, timeout, misconfigured). */
  parkedForGood?: boolean;
  gangWaitingSince?: number;
  /**
   * A gang group's message as each member reads it (the peer names the pod's own gang as
   * `current gang`); `message` is the head's.
   */
  messageFor?: (gangId: string) => string;
}

export function fail(e: Entry, reason: PendingReason, message: string, immediate: boolean): void {
  e.status = 'fail';
  e.reason = reason;
  e.message = message;
  e.immediate = immediate;
}

/** The reservation a member holds with its nominated assignment. */
export function toAdmitted(m: Member, now: number): AdmittedWorkload {
  const a = m.assignment!;
  // Optional fields are set only when present (no object spread per admission).
  const out: AdmittedWorkload = {
    key: m.info.key,
    workload: m.info.workload,
    clusterQueue: m.cq.name,
    priority: m.info.priority,
    reservedAt: now,
    podSets: a.podSets,
    usage: a.usage,
  };
  const gang = m.info.gang;
  if (gang) {
    out.gangGroup = gang.groupId;
    out.gangId = gang.id;
  }
  if (m.reservedOnly) out.reservedOnly = true;
  return out;
}
