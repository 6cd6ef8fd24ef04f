// The scheduling cycle (kueue-core.md §1b), pure: the queues and the snapshot in, decisions
// out. What it admits is assumed into the snapshot (as Kueue assumes into its cache) and
// what it does not admit is requeued; nothing else is touched and no clock is read.
//
//   1. heads: one per ClusterQueue; a gang's whole group is taken with it (gang-aware order:
//      the members of a group are decided together, whichever queue they wait in);
//   2. nominate (nominate.ts): checks, the gang group (gang-group.ts), flavor assignment with
//      the TAS hook, preemption targets, then partial admission (`minCount`) or the gang
//      minimum when the whole does not fit (podset-reducer.ts);
//   3. order: non-borrowing first, higher priority, earlier timestamp;
//   4. processEntry, per entry against the shared snapshot (Kueue's scheduler.go): re-check,
//      then admit, preempt or skip, and requeue what is not admitted: StrictFIFO straight
//      back, BestEffortFIFO parked until capacity is freed.
//
// Gangs (koordinator-gang.md; docs/design.md "Gangs"): a gang is a Workload whose
// annotations carry its minimum, total, mode and group. It is admitted only with at least
// its minimum placed at once; a group is admitted whole or not at all; a Strict gang holds
// nothing while it waits, a NonStrict one keeps the largest part that fits (QuotaReserved,
// not Admitted) and grows it; its waiting time starts when it first holds a reservation or
// first fails on the topology alone, and when it runs out everything is released and the
// gang is timed out.

import type { Workload } from '../api/objects.ts';
import { type CycleConfig, type Entry, fail, type Member, toAdmitted } from './entry.ts';
import { compareStrings } from '../api/values.ts';
import { assignFlavors, type FlavorAssignment, PendingReason, quotaFitHolds } from './flavor-assigner.ts';
import { timedOutPods } from './gang-group.ts';
import { nominate, type NominationContext, placementOptions } from './nominate.ts';
import type { PreemptionTarget } from './preemption.ts';
import type { QueueManager } from './queue.ts';
import type { AdmissionSnapshot, AdmittedWorkload } from './snapshot.ts';
import type { WorkloadInfo } from './workload-info.ts';

export type { CycleConfig } from './entry.ts';

export type Decision =
  | {
      kind: 'admit';
      key: string;
      workload: Workload;
      clusterQueue: string;
      admitted: AdmittedWorkload;
      /** A NonStrict gang below its minimum: quota reserved, not admitted. */
      reservedOnly: boolean;
      /** Set when a gang's waiting time starts now. */
      gangWaitingSince?: number;
    }
  | { kind: 'preempt'; key: string; clusterQueue: string; by: string; target: PreemptionTarget }
  | {
      kind: 'pending';
      key: string;
      workload: Workload;
      clusterQueue?: string;
      reason: PendingReason;
      message: string;
      gangWaitingSince?: number;
    }
  | {
      kind: 'gangTimeout';
      key: string;
      workload: Workload;
      clusterQueue?: string;
      message: string;
      /** Pods (`ns/name`, from the Workload's Pod owner references) to annotate `gang.scheduling.koordinator.sh/timeout=true`. */
      pods: string[];
    };

export interface CycleResult {
  decisions: Decision[];
  heads: number;
  admitted: number;
  preempting: number;
  /** BestEffortFIFO heads parked this cycle (the next cycle tries the ones behind them). */
  parked: number;
}

/** What processEntry reads and accumulates over one cycle. */
interface CycleState {
  readonly snap: AdmissionSnapshot;
  readonly queues: QueueManager;
  readonly cfg: CycleConfig;
  /** Heads popped this cycle: requeued as heads. */
  readonly popped: ReadonlySet<string>;
  readonly decisions: Decision[];
  /** Workloads some preemptor of this cycle targets already. */
  readonly targeted: Set<string>;
  /** Stand-in reservations of preemptors, taken back at the end of the cycle. */
  readonly holds: { key: string; restore?: AdmittedWorkload }[];
  admitted: number;
  preempting: number;
  parked: number;
  /**
   * Nominations leave the snapshot as they found it: until an entry admits, holds or
   * releases something, a lone Workload's nominated assignment is still what it would get.
   */
  changed: boolean;
}

/** One cycle. */
export function schedule(snap: AdmissionSnapshot, queues: QueueManager, cfg: CycleConfig): CycleResult {
  const now = cfg.now;
  const headQueues: string[] = [];
  const heads = queues.heads(now, () => true, headQueues);
  // Gang group bookkeeping concerns gangs only: a Workload that is not a gang is never a
  // member of another head's entry, nor a group's.
  const decided = new Map<string, Entry>();
  // Order: fits before preemptions... as Kueue: non-borrowing first, priority, timestamp.
  // Workloads whose preemptions are under way come first, so what they freed is theirs
  // (Kueue's PrioritizePreemptorWorkloads; on here, see docs/design.md).
  // The keys are computed once per entry, not per comparison (the same stable sort).
  const preemptors = queues.preemptors;
  const keyed: ReturnType<typeof orderKey>[] = [];
  // Popped heads are out of their heaps: a gang group finds its members among them too.
  const headOfGang = new Map<string, WorkloadInfo>();
  const popped = new Set<string>();
  let gangs = false;
  for (let i = 0; i < heads.length; i++) {
    const h = heads[i]!;
    if (!h.gang) continue;
    gangs = true;
    headOfGang.set(h.gang.id, h);
    popped.add(h.key);
  }
  let lqStopped = false;
  for (const lq of snap.localQueues.values()) {
    if (lq.spec.stopPolicy !== 'None') {
      lqStopped = true;
      break;
    }
  }
  const nomination: NominationContext = { snap, queues, cfg, decided, findGang: (id) => headOfGang.get(id) ?? queues.gang(id), lqStopped };
  // Gangs with the shortest group lists first: a gang that can go alone is decided on its
  // own before a group that names it pulls it in (without gangs, every group is one).
  const groupSize = (h: WorkloadInfo) => h.gang?.group.length ?? 1;
  const byGroup = gangs ? heads.map((_, i) => i).sort((a, b) => groupSize(heads[a]!) - groupSize(heads[b]!)) : undefined;
  for (let k = 0; k < heads.length; k++) {
    const i = byGroup ? byGroup[k]! : k;
    const head = heads[i]!;
    if (head.gang && decided.has(head.key)) continue;
    const e = nominate(nomination, head, headQueues[i]);
    if (head.gang) {
      for (const m of e.members) decided.set(m.info.key, e);
      decided.set(head.key, e);
    }
    // Its order key now, while the head is still in cache (nomination does not change what
    // the key reads; a cycle of 5,000 heads found them cold again afterwards).
    keyed.push(orderKey(e));
  }

  keyed.sort((x, y) => x.p - y.p || x.b - y.b || y.priority - x.priority || x.timestamp - y.timestamp || compareStrings(x.uid, y.uid));
  const order = keyed.map((x) => x.e);

  function orderKey(e: Entry) {
    let b = 0;
    for (let i = 0; i < e.members.length; i++) b = Math.max(b, e.members[i]!.assignment?.borrowing ?? 0);
    const h = e.head;
    return { e, p: preemptors.size > 0 && preemptors.has(h.key) ? 0 : 1, b, priority: h.priority, timestamp: h.timestamp, uid: h.uid };
  }

  const state: CycleState = {
    snap,
    queues,
    cfg,
    popped,
    decisions: [],
    targeted: new Set(),
    holds: [],
    admitted: 0,
    preempting: 0,
    parked: 0,
    changed: false,
  };
  for (let i = 0; i < order.length; i++) processEntry(state, order[i]!);
  for (const h of state.holds) {
    snap.removeAdmitted(h.key);
    if (h.restore) snap.addAdmitted(h.restore);
  }
  return { decisions: state.decisions, heads: heads.length, admitted: state.admitted, preempting: state.preempting, parked: state.parked };
}

/**
 * One entry against the snapshot as the entries before it left it: a fit is admitted (or
 * fails after nomination), a preemption issued (its targets free of other preemptors, and
 * it still fits once they are gone), a timed-out gang released; whatever is not admitted
 * is requeued.
 */
function processEntry(st: CycleState, e: Entry): void {
  const { snap, queues, cfg } = st;
  if (e.status === 'fit') {
    if (cfg.admissionBlocked !== undefined && e.members.every((m) => !m.held)) {
      fail(e, PendingReason.WaitingForPodsReady, cfg.admissionBlocked, false);
    } else if (!admitEntry(snap, e, cfg, st.decisions, !st.changed)) {
      fail(e, PendingReason.WaitingForQuota, 'Workload no longer fits after processing another workload', true);
    } else {
      st.changed = true;
      st.admitted += e.members.length;
      for (const m of e.members) {
        // A reservation below the minimum stays queued; under StrictFIFO it keeps heading the queue.
        if (m.reservedOnly) queues.requeue(m.info, m.cq.strategy === 'StrictFIFO');
        else queues.delete(m.info.key);
      }
      return;
    }
  } else if (e.status === 'preempt') {
    const m = e.members[0]!;
    let after: FlavorAssignment | undefined;
    if (m.targets.some((t) => st.targeted.has(t.key))) {
      fail(e, PendingReason.WaitingForQuota, 'Workload has overlapping preemption targets with another workload', true);
    } else if ((after = fitsAfterTargets(snap, m, cfg)) === undefined) {
      fail(e, PendingReason.WaitingForQuota, 'Workload no longer fits after processing another workload', true);
    } else {
      // What the preemptor will take once its targets are gone is held for the rest of
      // the cycle, on top of the targets' usage, so later entries cannot take it (quota
      // and the domain it will use).
      m.assignment = after;
      // The hold replaces its own partial reservation (same TAS usage keys) until the
      // end of the cycle.
      if (m.held) snap.removeAdmitted(m.info.key);
      const hold = { ...toAdmitted(m, cfg.now), key: reservationKey(m.info.key) };
      delete hold.gangId;
      snap.addAdmitted(hold);
      st.changed = true;
      st.holds.push({ key: hold.key, restore: m.held });
      for (const t of m.targets) {
        st.targeted.add(t.key);
        st.decisions.push({ kind: 'preempt', key: t.key, clusterQueue: t.clusterQueue, by: m.info.key, target: t });
      }
      st.preempting++;
      queues.preemptors.add(m.info.key);
      e.reason = PendingReason.WaitingForPreemptedWorkloads;
      e.message = `${e.message}. Pending the preemption of ${m.targets.length} workload(s)`;
      e.immediate = true;
      const q = queues.queue(m.cq.name);
      if (q && m.cq.strategy === 'BestEffortFIFO') q.setSticky(m.info.key);
    }
  }
  if (e.status === 'timeout') {
    for (const m of e.members) {
      if (m.held) {
        snap.removeAdmitted(m.info.key);
        st.changed = true;
      }
      st.decisions.push({
        kind: 'gangTimeout',
        key: m.info.key,
        workload: m.info.workload,
        clusterQueue: m.cq?.name,
        message: e.message,
        pods: timedOutPods(m.info),
      });
      queues.delete(m.info.key);
    }
    return;
  }
  for (const m of e.members) {
    st.decisions.push({
      kind: 'pending',
      key: m.info.key,
      workload: m.info.workload,
      clusterQueue: m.cq?.name,
      reason: e.reason,
      message: e.messageFor && m.info.gang ? e.messageFor(m.info.gang.id) : e.message,
      ...(e.gangWaitingSince !== undefined ? { gangWaitingSince: e.gangWaitingSince } : {}),
    });
    const strict = m.cq?.strategy === 'StrictFIFO';
    // A member popped as a head this cycle is requeued as a head; one taken from its heap
    // goes back there.
    const asHead = m.info.key === e.head.key || st.popped.has(m.info.key);
    const immediate = asHead ? !e.parkedForGood && (e.immediate || strict) : m.wasLive === true;
    if (!immediate && asHead) st.parked++;
    // NoFit or no preemption candidates at nomination (Kueue's RequeueReasonNoFit /
    // PreemptionNoCandidates): the reasons equivalence hashing remembers.
    const noFit = !immediate && asHead && e.status === 'fail' && NO_FIT_REASONS.has(e.reason) && e.members.length === 1;
    queues.requeue(m.info, immediate, noFit);
  }
}

const NO_FIT_REASONS: ReadonlySet<string> = new Set([
  PendingReason.NoMatchingFlavor,
  PendingReason.ExceedsMaxQuota,
  PendingReason.WaitingForQuota,
  PendingReason.TopologyPlacementFailed,
]);

/**
 * A preemptor still fits once its targets are gone, after earlier entries of this cycle:
 * the assignment it would get then, or undefined.
 */
function fitsAfterTargets(snap: AdmissionSnapshot, m: Member, cfg: CycleConfig): FlavorAssignment | undefined {
  // Its own partial reservation (NonStrict) is part of what it will hold, not extra usage.
  const keys = [...m.targets.map((t) => t.key), ...(m.held ? [m.info.key] : [])];
  const removed = keys.map((k) => snap.removeAdmitted(k)).filter((x): x is AdmittedWorkload => x !== undefined);
  try {
    const a = assignFlavors(snap, m.cq, m.info, { placement: placementOptions(cfg), counts: m.counts });
    return a.mode === 'Fit' ? a : undefined;
  } finally {
    for (const a of removed) snap.addAdmitted(a);
  }
}

/** Key of the stand-in reservation a preemptor holds for the rest of the cycle. */
const reservationKey = (key: string) => `${key}\u0000preempting`;

/**
 * Admits every member against the snapshot as it is now (earlier entries included): each
 * is re-assigned with its nominated counts; all or none.
 */
function admitEntry(snap: AdmissionSnapshot, e: Entry, cfg: CycleConfig, decisions: Decision[], unchanged: boolean): boolean {
  const members = e.members;
  // Made only when a member held a reservation, or for a second member (`done`: every
  // member's reservation in order; `last`, a lone member's).
  let done: AdmittedWorkload[] | undefined;
  let last: AdmittedWorkload | undefined;
  let restore: AdmittedWorkload[] | undefined;
  // The snapshot is as the nomination saw it: a lone member's assignment stands.
  const reuse = unchanged && members.length === 1 && !members[0]!.held && members[0]!.assignment?.mode === 'Fit';
  for (const m of members) {
    if (m.held) (restore ??= []).push(snap.removeAdmitted(m.info.key)!);
    // A quota-only Fit on one flavor per group is re-checked against the quota alone.
    const holds = reuse || m.assignment === undefined ? undefined : quotaFitHolds(snap, m.cq, m.assignment);
    const a =
      reuse || holds === true
        ? m.assignment!
        : holds === false
          ? undefined
          : assignFlavors(
              snap,
              m.cq,
              m.info,
              m.counts ? { placement: placementOptions(cfg), counts: m.counts } : { placement: placementOptions(cfg) },
            );
    if (a?.mode !== 'Fit') {
      if (done) for (const d of done) snap.removeAdmitted(d.key);
      if (restore) for (const r of restore) snap.addAdmitted(r);
      return false;
    }
    m.assignment = a;
    const adm = toAdmitted(m, cfg.now);
    snap.addAdmitted(adm);
    last = adm;
    if (members.length > 1) (done ??= []).push(adm);
  }
  // The reservations just added (addAdmitted keeps the object), not looked up again.
  for (let i = 0; i < members.length; i++) {
    const m = members[i]!;
    const adm = done !== undefined ? done[i]! : last!;
    const since = m.reservedOnly ? (m.info.gang?.waitingSince ?? cfg.now) : undefined;
    if (since !== undefined && m.info.gang) m.info.gang.waitingSince = since;
    const d: Decision = {
      kind: 'admit',
      key: m.info.key,
      workload: m.info.workload,
      clusterQueue: m.cq.name,
      admitted: adm,
      reservedOnly: m.reservedOnly,
    };
    if (since !== undefined) d.gangWaitingSince = since;
    decisions.push(d);
  }
  return true;
}
