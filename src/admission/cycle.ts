// The scheduling cycle (kueue-core.md §1b), pure: the queues and the snapshot in, decisions
// out. What it admits is assumed into the snapshot (as Kueue assumes into its cache) and
// what it does not admit is requeued; nothing else is touched and no clock is read.
//
//   1. heads: one per ClusterQueue; a gang's whole group is taken with it (gang-aware order:
//      the members of a group are decided together, whichever queue they wait in);
//   2. nominate: checks (ClusterQueue, LocalQueue, namespace, gang basic check, timeout),
//      flavor assignment with the TAS hook, preemption targets, then partial admission
//      (`minCount`) or the gang minimum when the whole does not fit;
//   3. order: non-borrowing first, higher priority, earlier timestamp;
//   4. process against the shared snapshot: re-check, then admit, preempt or skip;
//   5. requeue: StrictFIFO straight back, BestEffortFIFO parked until capacity is freed.
//
// Gangs (koordinator-gang.md; docs/design.md "Gangs"): a gang is a Workload whose
// annotations carry its minimum, total, mode and group. It is admitted only with at least
// its minimum placed at once; a group is admitted whole or not at all; a Strict gang holds
// nothing while it waits, a NonStrict one keeps the largest part that fits (QuotaReserved,
// not Admitted) and grows it; its waiting time starts when it first holds a reservation or
// first fails on the topology alone, and when it runs out everything is released and the
// gang is timed out.

import { GangMode } from '../api/gang.ts';
import { namespaceSelectorMatches } from '../api/queues.ts';
import type { Workload } from '../api/objects.ts';
import { compareStrings } from '../api/values.ts';
import type { WorkloadPlacementOptions } from '../placement/workload-placement.ts';
import { assignFlavors, type FlavorAssignment, PendingReason } from './flavor-assigner.ts';
import { findPreemptionTargets, type PreemptionTarget } from './preemption.ts';
import type { QueueManager } from './queue.ts';
import type { AdmissionSnapshot, AdmittedWorkload, ClusterQueueInfo } from './snapshot.ts';
import { totalPods, type WorkloadInfo } from './workload-info.ts';

export interface CycleConfig {
  /** Seconds since the epoch (virtual or real). */
  now: number;
  placement?: WorkloadPlacementOptions;
  /** Kueue's PartialAdmission gate (default on). */
  partialAdmission?: boolean;
  /** waitForPodsReady.blockAdmission: the message when an admitted Workload is not ready yet. */
  admissionBlocked?: string;
}

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

interface Member {
  info: WorkloadInfo;
  cq: ClusterQueueInfo;
  assignment?: FlavorAssignment;
  counts?: Map<string, number>;
  targets: PreemptionTarget[];
  /** NonStrict: the reservation is below the minimum. */
  reservedOnly: boolean;
  /** The reservation it held before this cycle (NonStrict accumulation). */
  held?: AdmittedWorkload;
  /** A group member taken from its heap (not parked): it goes back there if not admitted. */
  wasLive?: boolean;
}

interface Entry {
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
}

const gangIdList = (ids: readonly string[]) => `[${ids.join(' ')}]`;

/** One cycle. */
export function schedule(snap: AdmissionSnapshot, queues: QueueManager, cfg: CycleConfig): CycleResult {
  const now = cfg.now;
  const heads = queues.heads(now, () => true);
  const decided = new Map<string, Entry>();
  const entries: Entry[] = [];
  // Popped heads are out of their heaps: a gang group finds its members among them too.
  const headOfGang = new Map<string, WorkloadInfo>();
  for (const h of heads) if (h.gang) headOfGang.set(h.gang.id, h);
  const findGang = (id: string) => headOfGang.get(id) ?? queues.gang(id);
  const popped = new Set(heads.map((h) => h.key));
  // Whether any LocalQueue is stopped (checked per head only then).
  let lqStopped = false;
  for (const lq of snap.localQueues.values()) {
    if (lq.spec.stopPolicy !== 'None') {
      lqStopped = true;
      break;
    }
  }
  // Gangs with the shortest group lists first: a gang that can go alone is decided on its
  // own before a group that names it pulls it in.
  const byGroup = [...heads].sort((a, b) => (a.gang?.group.length ?? 1) - (b.gang?.group.length ?? 1));
  for (const head of byGroup) {
    if (decided.has(head.key)) continue;
    const e = nominate(snap, queues, head, cfg, decided, findGang, lqStopped);
    for (const m of e.members) decided.set(m.info.key, e);
    decided.set(head.key, e);
    entries.push(e);
  }

  // Order: fits before preemptions... as Kueue: non-borrowing first, priority, timestamp.
  const borrowingOf = (e: Entry) => Math.max(0, ...e.members.map((m) => m.assignment?.borrowing ?? 0));
  // Workloads whose preemptions are under way come first, so what they freed is theirs
  // (Kueue's PrioritizePreemptorWorkloads; on here, see docs/design.md).
  const preemptor = (e: Entry) => (queues.preemptors.has(e.head.key) ? 0 : 1);
  // The keys are computed once per entry, not per comparison (the same stable sort).
  const order = entries
    .map((e) => ({ e, p: preemptor(e), b: borrowingOf(e) }))
    .sort((x, y) => {
      const a = x.e.head;
      const b = y.e.head;
      return x.p - y.p || x.b - y.b || b.priority - a.priority || a.timestamp - b.timestamp || compareStrings(a.uid, b.uid);
    })
    .map((x) => x.e);

  const decisions: Decision[] = [];
  const targeted = new Set<string>();
  const holds: { key: string; restore?: AdmittedWorkload }[] = [];
  let after: FlavorAssignment | undefined;
  let admitted = 0;
  let preempting = 0;
  let parked = 0;
  // Nominations leave the snapshot as they found it: until an entry here admits, holds or
  // releases something, a lone Workload's nominated assignment is still what it would get.
  let changed = false;
  for (const e of order) {
    if (e.status === 'fit') {
      if (cfg.admissionBlocked !== undefined && e.members.every((m) => !m.held)) {
        fail(e, PendingReason.WaitingForPodsReady, cfg.admissionBlocked, false);
      } else if (!admitEntry(snap, e, cfg, decisions, !changed)) {
        fail(e, PendingReason.WaitingForQuota, 'Workload no longer fits after processing another workload', true);
      } else {
        changed = true;
        admitted += e.members.length;
        for (const m of e.members) {
          // A reservation below the minimum stays queued; under StrictFIFO it keeps heading the queue.
          if (m.reservedOnly) queues.requeue(m.info, m.cq.strategy === 'StrictFIFO');
          else queues.delete(m.info.key);
        }
        continue;
      }
    } else if (e.status === 'preempt') {
      const m = e.members[0]!;
      if (m.targets.some((t) => targeted.has(t.key))) {
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
        const hold = { ...toAdmitted(m, now), key: reservationKey(m.info.key) };
        delete hold.gangId;
        snap.addAdmitted(hold);
        changed = true;
        holds.push({ key: hold.key, restore: m.held });
        for (const t of m.targets) {
          targeted.add(t.key);
          decisions.push({ kind: 'preempt', key: t.key, clusterQueue: t.clusterQueue, by: m.info.key, target: t });
        }
        preempting++;
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
          changed = true;
        }
        const pods = (m.info.workload.metadata.ownerReferences ?? []).filter((o) => o.kind === 'Pod' && o.apiVersion === 'v1').map((o) => `${m.info.namespace}/${o.name}`);
        decisions.push({ kind: 'gangTimeout', key: m.info.key, workload: m.info.workload, clusterQueue: m.cq?.name, message: e.message, pods });
        queues.delete(m.info.key);
      }
      continue;
    }
    for (const m of e.members) {
      decisions.push({
        kind: 'pending',
        key: m.info.key,
        workload: m.info.workload,
        clusterQueue: m.cq?.name,
        reason: e.reason,
        message: e.message,
        ...(e.gangWaitingSince !== undefined ? { gangWaitingSince: e.gangWaitingSince } : {}),
      });
      const strict = m.cq?.strategy === 'StrictFIFO';
      // A member popped as a head this cycle is requeued as a head; one taken from its heap
      // goes back there.
      const asHead = m.info.key === e.head.key || popped.has(m.info.key);
      const immediate = asHead ? !e.parkedForGood && (e.immediate || strict) : m.wasLive === true;
      if (!immediate && asHead) parked++;
      queues.requeue(m.info, immediate);
    }
  }
  for (const h of holds) {
    snap.removeAdmitted(h.key);
    if (h.restore) snap.addAdmitted(h.restore);
  }
  return { decisions, heads: heads.length, admitted, preempting, parked };
}

function fail(e: Entry, reason: PendingReason, message: string, immediate: boolean): void {
  e.status = 'fail';
  e.reason = reason;
  e.message = message;
  e.immediate = immediate;
}

// ---------------------------------------------------------------------------------------
// Nomination
// ---------------------------------------------------------------------------------------

function nominate(
  snap: AdmissionSnapshot,
  queues: QueueManager,
  head: WorkloadInfo,
  cfg: CycleConfig,
  decided: ReadonlyMap<string, Entry>,
  findGang: (id: string) => WorkloadInfo | undefined,
  lqStopped: boolean,
): Entry {
  const entry: Entry = { head, members: [], status: 'fail', reason: PendingReason.Inadmissible, message: '', immediate: false };
  const cqName = queues.clusterQueueOf(head.key);
  const cq = cqName !== undefined ? snap.clusterQueues.get(cqName) : undefined;
  const self: Member = { info: head, cq: cq!, targets: [], reservedOnly: false, held: snap.admitted.get(head.key) };
  entry.members.push(self);
  const problem = check(snap, head, cq, cqName, lqStopped);
  if (problem) {
    entry.reason = problem.reason;
    entry.message = problem.message;
    entry.parkedForGood = true;
    return entry;
  }

  // The gang group: every other gang of it is taken out of its queue and decided now.
  const gang = head.gang;
  if (gang) {
    // The group is closed over its members' own groups: a gang pulled in by another's list
    // brings the gangs its own list names (each gang's pods wait for their own group).
    const missing: string[] = [];
    const seen = new Set<string>([gang.id]);
    const todo = [...gang.group];
    while (todo.length > 0) {
      const id = todo.shift()!;
      if (seen.has(id)) continue;
      seen.add(id);
      const other = findGang(id);
      const earlier = other ? decided.get(other.key) : undefined;
      if (earlier) {
        if (earlier.status === 'fit') {
          // It is admitted below (or not): this group is tried again next cycle.
          entry.reason = PendingReason.GangNotReady;
          entry.message = `gangGroup ${gangIdList(gang.group)}: member gang ${id} is being admitted in this cycle; retrying next cycle`;
          entry.immediate = true;
        } else {
          entry.reason = earlier.reason;
          entry.message = `gangGroup ${gangIdList(gang.group)}: member gang ${id} cannot be admitted: ${earlier.message}`;
        }
        return entry;
      }
      if (other) {
        const ocqName = queues.clusterQueueOf(other.key)!;
        const ocq = snap.clusterQueues.get(ocqName);
        const taken = queues.take(other.key);
        entry.members.push({ info: other, cq: ocq!, targets: [], reservedOnly: false, held: snap.admitted.get(other.key), wasLive: taken?.live ?? true });
        const p = check(snap, other, ocq, ocqName, lqStopped);
        if (p) {
          entry.reason = p.reason;
          entry.message = `gang ${other.gang!.id} of the group: ${p.message}`;
          return entry;
        }
        todo.push(...(other.gang?.group ?? []));
        continue;
      }
      // Admitted already (once satisfied): it does not hold the group back.
      if (snap.admittedGang(id)) continue;
      missing.push(id);
    }
    const short = entry.members.filter((m) => m.info.gang && totalPods(m.info) < m.info.gang.min);
    if (missing.length > 0 || short.length > 0) {
      const parts: string[] = [];
      if (missing.length > 0) parts.push(`memberGangs ${gangIdList(missing)} doesn't exists`);
      if (short.length > 0) parts.push(`memberGangs ${gangIdList(gang.group)} child pod not collect enough`);
      entry.reason = PendingReason.GangNotReady;
      entry.message = `gangGroup ${gangIdList(gang.group)} basic check: ${parts.join(', ')}, current gang: ${gang.id}`;
      return entry;
    }
    // Timed out while waiting: release and stop.
    const since = entry.members.map((m) => m.info.gang?.waitingSince).filter((x): x is number => x !== undefined);
    const waited = since.length > 0 ? Math.min(...since) : undefined;
    if (waited !== undefined && cfg.now >= waited + gang.waitingSeconds) {
      entry.status = 'timeout';
      entry.reason = PendingReason.GangTimeout;
      entry.message = `gang ${gang.id} was not satisfied within its waiting time of ${gang.waitingSeconds}s (waiting since ${waited}); ` +
        'its reservations are released and its pods are annotated gang.scheduling.koordinator.sh/timeout=true: delete or recreate them to try again';
      return entry;
    }
  }

  // Flavors, preemption and partial admission, member by member against the usage of the
  // members before it (assumed for the duration of the nomination).
  const assumed: string[] = [];
  const restore: AdmittedWorkload[] = [];
  try {
    for (const m of entry.members) {
      // A NonStrict gang's own reservation is reconsidered, not counted against it.
      if (m.held) restore.push(snap.removeAdmitted(m.info.key)!);
      const r = nominateMember(snap, m, cfg, entry.members.length === 1);
      if (r.status !== 'fit' && r.status !== 'preempt') {
        entry.reason = r.reason;
        entry.message = entry.members.length > 1 ? `gang group [${entry.members.map((x) => x.info.gang?.id ?? x.info.key).sort().join(' ')}] is admitted whole or not at all; member ${m.info.key}: ${r.message}` : r.message;
        entry.gangWaitingSince = r.gangWaitingSince;
        // A NonStrict gang that held a reservation keeps it (it is re-added below).
        return entry;
      }
      if (r.status === 'preempt') {
        entry.status = 'preempt';
        entry.reason = PendingReason.WaitingForQuota;
        entry.message = r.message;
        return entry;
      }
      if (entry.members.length > 1) {
        snap.addAdmitted(toAdmitted(m, cfg.now));
        assumed.push(m.info.key);
      }
    }
    entry.status = 'fit';
    entry.reason = PendingReason.WaitingForQuota;
    return entry;
  } finally {
    for (const k of assumed) snap.removeAdmitted(k);
    for (const a of restore) snap.addAdmitted(a);
  }
}

function check(snap: AdmissionSnapshot, info: WorkloadInfo, cq: ClusterQueueInfo | undefined, cqName: string | undefined, lqStopped: boolean): { reason: PendingReason; message: string } | undefined {
  if (info.invalid !== undefined) return { reason: PendingReason.Misconfigured, message: info.invalid };
  if (info.gang?.timedOut) {
    return { reason: PendingReason.GangTimeout, message: `gang ${info.gang.id} timed out (gang.scheduling.koordinator.sh/timeout=true): it is not scheduled until its pods are recreated or the annotation is removed` };
  }
  if (!cq) return { reason: PendingReason.Misconfigured, message: `ClusterQueue ${cqName ?? ''} not found` };
  if (cq.inactive) return { reason: PendingReason.Suspended, message: `ClusterQueue ${cq.name} is inactive` };
  if (lqStopped && info.queueName !== undefined) {
    const lq = snap.localQueues.get(`${info.namespace}/${info.queueName}`);
    if (lq && lq.spec.stopPolicy !== 'None') return { reason: PendingReason.Suspended, message: `LocalQueue ${info.queueName} is inactive` };
  }
  if (!namespaceSelectorMatches(cq.namespaceSelector, snap.namespaces.get(info.namespace))) {
    return { reason: PendingReason.Inadmissible, message: `Workload namespace doesn't match ClusterQueue selector` };
  }
  return undefined;
}

interface MemberResult {
  status: 'fit' | 'preempt' | 'fail';
  reason: PendingReason;
  message: string;
  gangWaitingSince?: number;
}

function placementOptions(cfg: CycleConfig): WorkloadPlacementOptions {
  return cfg.placement ?? {};
}

/** Flavors for one Workload, then preemption, then smaller counts (partial admission, gang minimum). */
function nominateMember(snap: AdmissionSnapshot, m: Member, cfg: CycleConfig, alone: boolean): MemberResult {
  const info = m.info;
  const gang = info.gang;
  const full = fullCounts(info);
  const first = tryCounts(snap, m, cfg, full);
  if (first.mode === 'Fit') {
    m.assignment = first;
    m.counts = full;
    return { status: 'fit', reason: PendingReason.WaitingForQuota, message: '' };
  }
  if (first.mode === 'Preempt' && alone) {
    const targets = targetsFor(snap, m, first, full, cfg);
    if (targets.length > 0) {
      m.assignment = first;
      m.counts = full;
      m.targets = targets;
      return { status: 'preempt', reason: PendingReason.WaitingForQuota, message: first.message || 'insufficient unused quota' };
    }
  }
  // Partial admission (Kueue, minCount) or the gang minimum (nothing to shrink without either).
  const steps = gang || info.podSets.some((p) => p.minCount !== undefined) ? shrinkSteps(info, full, cfg.partialAdmission !== false) : undefined;
  const n = steps?.n ?? 0;
  if (n > 0) {
    // Smallest i (largest counts) that fits; fitting is monotone in fewer pods.
    let lo = 1;
    let hi = n;
    let found: { a: FlavorAssignment; counts: Map<string, number> } | undefined;
    if (probeStep(snap, m, cfg, steps!, hi)) {
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        const r = probeStep(snap, m, cfg, steps!, mid);
        if (r) hi = mid;
        else lo = mid + 1;
      }
      found = probeStep(snap, m, cfg, steps!, lo);
    }
    if (found) {
      m.assignment = found.a;
      m.counts = found.counts;
      return { status: 'fit', reason: PendingReason.WaitingForQuota, message: '' };
    }
  }
  // NonStrict gangs hold what fits while they accumulate (never less than they held).
  const startsWaiting = gang && gang.waitingSince === undefined && first.preemptQuota.size === 0 && (first.reason === PendingReason.TopologyPlacementFailed || first.preemptTopology) ? cfg.now : undefined;
  // Accumulating is pointless when even an empty cluster or the whole quota is too small.
  const hopeless = first.reason === PendingReason.ExceedsMaxQuota || first.reason === PendingReason.NoMatchingFlavor || (first.mode === 'NoFit' && first.reason === PendingReason.TopologyPlacementFailed);
  if (gang && gang.mode === GangMode.NonStrict && alone && !hopeless) {
    const below = belowMinimum(info, full);
    let lo = 0;
    let hi = below.length;
    // Largest k such that below[k-1] fits.
    let best: { a: FlavorAssignment; counts: Map<string, number> } | undefined;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      const a = tryCounts(snap, m, cfg, below[mid - 1]!);
      if (a.mode === 'Fit') {
        lo = mid;
        best = { a, counts: below[mid - 1]! };
      } else {
        hi = mid - 1;
      }
    }
    const heldCount = m.held ? m.held.podSets.reduce((s, p) => s + p.count, 0) : 0;
    if (best && lo >= heldCount && lo > 0) {
      m.assignment = best.a;
      m.counts = best.counts;
      m.reservedOnly = true;
      return { status: 'fit', reason: PendingReason.GangAccumulating, message: '', gangWaitingSince: gang.waitingSince ?? cfg.now };
    }
  }
  return { status: 'fail', reason: first.reason, message: first.message, ...(startsWaiting !== undefined ? { gangWaitingSince: startsWaiting } : {}) };
}

function tryCounts(snap: AdmissionSnapshot, m: Member, cfg: CycleConfig, counts: Map<string, number>): FlavorAssignment {
  return assignFlavors(snap, m.cq, m.info, { placement: placementOptions(cfg), counts });
}

function probeStep(snap: AdmissionSnapshot, m: Member, cfg: CycleConfig, steps: { at: (i: number) => Map<string, number> }, i: number): { a: FlavorAssignment; counts: Map<string, number> } | undefined {
  const counts = steps.at(i);
  const a = tryCounts(snap, m, cfg, counts);
  return a.mode === 'Fit' ? { a, counts } : undefined;
}

function fullCounts(info: WorkloadInfo): Map<string, number> {
  const out = new Map<string, number>();
  for (const p of info.podSets) out.set(p.name, p.count);
  const total = info.gang?.total;
  if (total !== undefined && total < totalPods(info)) {
    // total-number bounds how many may come: drop the excess from the last PodSets.
    let excess = totalPods(info) - total;
    for (const p of [...info.podSets].reverse()) {
      const d = Math.min(excess, p.count);
      out.set(p.name, p.count - d);
      excess -= d;
    }
  }
  return out;
}

/**
 * Candidate counts, largest first: `at(i)` for i in 1..n. Every candidate keeps each PodSet
 * at or above its `minCount` (with partial admission on) and, for a gang, the total at or
 * above its minimum (at least one pod: a gang of minimum 0 is admitted with at least one).
 */
function shrinkSteps(info: WorkloadInfo, full: Map<string, number>, partial: boolean): { n: number; at: (i: number) => Map<string, number> } {
  const gang = info.gang;
  const T = [...full.values()].reduce((a, b) => a + b, 0);
  if (gang) {
    // PodSets without minCount may shrink to 0; the gang's minimum bounds the total.
    const floors = info.podSets.map((p) => Math.min(full.get(p.name) ?? 0, partial && p.minCount !== undefined ? p.minCount : 0));
    const floorTotal = floors.reduce((a, b) => a + b, 0);
    const low = Math.max(gang.min, floorTotal, 1);
    if (low >= T) return { n: 0, at: () => full };
    return { n: T - low, at: (i) => dropPods(info, full, floors, i) };
  }
  if (!partial) return { n: 0, at: () => full };
  // Kueue: shrink every PodSet with minCount proportionally, `count - delta*i/totalDelta`.
  const deltas = info.podSets.map((p) => (p.minCount !== undefined ? Math.max(0, (full.get(p.name) ?? p.count) - p.minCount) : 0));
  const totalDelta = deltas.reduce((a, b) => a + b, 0);
  return { n: totalDelta, at: (i) => new Map(info.podSets.map((p, j) => [p.name, (full.get(p.name) ?? p.count) - Math.floor((deltas[j]! * i) / totalDelta)])) };
}

/** Full counts minus `d` pods, taken from the PodSets in proportion to what each may lose (never below its floor). */
function dropPods(info: WorkloadInfo, full: Map<string, number>, floors: readonly number[], d: number): Map<string, number> {
  const room = info.podSets.map((p, j) => Math.max(0, (full.get(p.name) ?? 0) - floors[j]!));
  const R = room.reduce((a, b) => a + b, 0);
  const out = new Map(full);
  let left = Math.min(d, R);
  const drops = room.map((r) => Math.min(r, Math.floor((d * r) / Math.max(1, R))));
  for (const x of drops) left -= x;
  for (let j = 0; j < drops.length && left > 0; j++) {
    const more = Math.min(room[j]! - drops[j]!, left);
    drops[j] = drops[j]! + more;
    left -= more;
  }
  info.podSets.forEach((p, j) => out.set(p.name, (full.get(p.name) ?? 0) - drops[j]!));
  return out;
}

/** Counts with 1 .. min-1 pods (a NonStrict gang's partial reservations), smallest first. */
function belowMinimum(info: WorkloadInfo, full: Map<string, number>): Map<string, number>[] {
  const T = [...full.values()].reduce((a, b) => a + b, 0);
  const min = Math.min(info.gang?.min ?? T, T);
  const out: Map<string, number>[] = [];
  const floors = info.podSets.map(() => 0);
  for (let k = 1; k < min; k++) out.push(dropPods(info, full, floors, T - k));
  return out;
}

function targetsFor(snap: AdmissionSnapshot, m: Member, a: FlavorAssignment, counts: Map<string, number>, cfg: CycleConfig): PreemptionTarget[] {
  return findPreemptionTargets(snap, {
    info: m.info,
    cq: m.cq,
    assignment: a,
    fits: fitsWith(snap, m, cfg, counts),
  });
}

/** The preemption search's fits(); made here so that no named closure is created per call. */
function fitsWith(snap: AdmissionSnapshot, m: Member, cfg: CycleConfig, counts: Map<string, number>): () => boolean {
  return () => tryCounts(snap, m, cfg, counts).mode === 'Fit';
}

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

function toAdmitted(m: Member, now: number): AdmittedWorkload {
  const a = m.assignment!;
  return {
    key: m.info.key,
    workload: m.info.workload,
    clusterQueue: m.cq.name,
    priority: m.info.priority,
    reservedAt: now,
    podSets: a.podSets,
    usage: a.usage,
    ...(m.info.gang ? { gangGroup: m.info.gang.groupId, gangId: m.info.gang.id } : {}),
    ...(m.reservedOnly ? { reservedOnly: true } : {}),
  };
}

/**
 * Admits every member against the snapshot as it is now (earlier entries included): each
 * is re-assigned with its nominated counts; all or none.
 */
function admitEntry(snap: AdmissionSnapshot, e: Entry, cfg: CycleConfig, decisions: Decision[], unchanged: boolean): boolean {
  const done: AdmittedWorkload[] = [];
  const restore: AdmittedWorkload[] = [];
  // The snapshot is as the nomination saw it: a lone member's assignment stands.
  const reuse = unchanged && e.members.length === 1 && !e.members[0]!.held && e.members[0]!.assignment?.mode === 'Fit';
  for (const m of e.members) {
    if (m.held) restore.push(snap.removeAdmitted(m.info.key)!);
    const a = reuse ? m.assignment! : assignFlavors(snap, m.cq, m.info, { placement: placementOptions(cfg), counts: m.counts });
    if (a.mode !== 'Fit') {
      for (const d of done) snap.removeAdmitted(d.key);
      for (const r of restore) snap.addAdmitted(r);
      return false;
    }
    m.assignment = a;
    const adm = toAdmitted(m, cfg.now);
    snap.addAdmitted(adm);
    done.push(adm);
  }
  for (const m of e.members) {
    const adm = snap.admitted.get(m.info.key)!;
    const since = m.reservedOnly ? (m.info.gang?.waitingSince ?? cfg.now) : undefined;
    if (since !== undefined && m.info.gang) m.info.gang.waitingSince = since;
    decisions.push({
      kind: 'admit',
      key: m.info.key,
      workload: m.info.workload,
      clusterQueue: m.cq.name,
      admitted: adm,
      reservedOnly: m.reservedOnly,
      ...(since !== undefined ? { gangWaitingSince: since } : {}),
    });
  }
  return true;
}
