// Nomination (kueue-core.md §1b, Kueue's scheduler.go `nominate`): what one head would get
// against the snapshot as the cycle found it.
//
// 1. checks: invalid Workload, timed-out gang, ClusterQueue missing or inactive, LocalQueue
//    stopped, namespace selector;
// 2. a gang's group is closed and checked (gang-group.ts), its members decided together;
// 3. member by member, against the usage of the members before it (assumed for the
//    duration of the nomination): flavors with the TAS hook; for a lone Workload that
//    does not fit, preemption targets; then smaller counts from the PodSet reducer
//    (partial admission, the gang minimum); a NonStrict gang keeps the largest part that
//    fits below its minimum. A lone head equal to one that just failed on the same
//    snapshot state fails the same way without being assigned again (equivalence.ts).
// The snapshot is left as it was found.

import { GangMode } from '../api/gang.ts';
import { namespaceSelectorMatches } from '../api/queues.ts';
import { formatResourceAmount, type ResourceAmounts } from '../api/resources.ts';
import type { WorkloadPlacementOptions } from '../placement/workload-placement.ts';
import type { CycleConfig, Entry, Member } from './entry.ts';
import { equivalenceApplies, recallFailure, rememberFailure } from './equivalence.ts';
import { toAdmitted } from './entry.ts';
import { assignFlavors, type FlavorAssignment, PendingReason } from './flavor-assigner.ts';
import { closeGangGroup, type GangGroupContext, gangMemberName, startsWaitingNow } from './gang-group.ts';
import { belowMinimum, fullCounts, searchBelowMinimum, searchLargest, shrinkSteps } from './podset-reducer.ts';
import { findPreemptionTargets, type PreemptionTarget } from './preemption.ts';
import type { AdmissionSnapshot, AdmittedWorkload, ClusterQueueInfo } from './snapshot.ts';
import { totalPods, type WorkloadInfo } from './workload-info.ts';

/** What a cycle's nominations share: the gang groups' context, the config and the LocalQueue state. */
export interface NominationContext extends Omit<GangGroupContext, 'now' | 'check'> {
  cfg: CycleConfig;
  /** Whether any LocalQueue is stopped (checked per head only then). */
  lqStopped: boolean;
}

/** The entry of one head: its members and what they would get. `cqName`: its ClusterQueue, when the caller knows it. */
export function nominate(ctx: NominationContext, head: WorkloadInfo, cqName = ctx.queues.clusterQueueOf(head.key)): Entry {
  const { snap, cfg, lqStopped } = ctx;
  const cq = cqName !== undefined ? snap.clusterQueues.get(cqName) : undefined;
  const self: Member = { info: head, cq: cq!, targets: NO_TARGETS, reservedOnly: false, held: snap.admitted.get(head.key) };
  const entry: Entry = { head, members: [self], status: 'fail', reason: PendingReason.Inadmissible, message: '', immediate: false };
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
    const group: GangGroupContext = { ...ctx, now: cfg.now, check: (info, c, name) => check(snap, info, c, name, lqStopped) };
    if (closeGangGroup(group, entry, gang)) return entry;
  }

  // Flavors, preemption and partial admission, member by member against the usage of the
  // members before it (assumed for the duration of the nomination).
  // Made only for a gang group or a held reservation (most heads are neither).
  let assumed: string[] | undefined;
  let restore: AdmittedWorkload[] | undefined;
  try {
    for (const m of entry.members) {
      // A NonStrict gang's own reservation is reconsidered, not counted against it.
      if (m.held) (restore ??= []).push(snap.removeAdmitted(m.info.key)!);
      const r = nominateMember(snap, m, cfg, entry.members.length === 1);
      if (r.status !== 'fit' && r.status !== 'preempt') {
        entry.reason = r.reason;
        entry.message =
          entry.members.length > 1
            ? `gang group [${entry.members
                .map((x) => x.info.gang?.id ?? x.info.key)
                .sort()
                .join(' ')}] is admitted whole or not at all; member ${gangMemberName(m.info)}: ${r.message}`
            : m.info.gang && namesOwnPodSet(m.info, r.message)
              ? `gang ${gangMemberName(m.info)}: ${r.message}`
              : r.message;
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
        (assumed ??= []).push(m.info.key);
      }
    }
    entry.status = 'fit';
    entry.reason = PendingReason.WaitingForQuota;
    return entry;
  } finally {
    if (assumed) for (const k of assumed) snap.removeAdmitted(k);
    if (restore) for (const a of restore) snap.addAdmitted(a);
  }
}

/** Whether a message names one of the Workload's pod sets (a lone gang's role hash needs its pods beside it). */
function namesOwnPodSet(info: WorkloadInfo, message: string): boolean {
  return info.podSets.some((p) => message.includes(`pod set ${p.name}`));
}

function check(
  snap: AdmissionSnapshot,
  info: WorkloadInfo,
  cq: ClusterQueueInfo | undefined,
  cqName: string | undefined,
  lqStopped: boolean,
): { reason: PendingReason; message: string } | undefined {
  if (info.invalid !== undefined) return { reason: PendingReason.Misconfigured, message: info.invalid };
  if (info.gang?.timedOut) {
    return {
      reason: PendingReason.GangTimeout,
      message: `gang ${info.gang.id} timed out (gang.scheduling.koordinator.sh/timeout=true): it is not scheduled until its pods are recreated or the annotation is removed`,
    };
  }
  if (!cq) return { reason: PendingReason.Misconfigured, message: `ClusterQueue ${cqName ?? ''} not found` };
  if (cq.inactive) return { reason: PendingReason.Suspended, message: `ClusterQueue ${cq.name} is inactive` };
  if (lqStopped && info.queueName !== undefined) {
    const lq = snap.localQueues.get(`${info.namespace}/${info.queueName}`);
    if (lq && lq.spec.stopPolicy !== 'None')
      return { reason: PendingReason.Suspended, message: `LocalQueue ${info.queueName} is inactive` };
  }
  // The usual selector, `{}`, matches every namespace: no lookup.
  if (!cq.everyNamespace && !namespaceSelectorMatches(cq.namespaceSelector, snap.namespaces.get(info.namespace))) {
    return { reason: PendingReason.Inadmissible, message: `Workload namespace doesn't match ClusterQueue selector` };
  }
  if (info.gang?.minResources) {
    const gap = minResourcesGap(snap, cq, info.gang.minResources);
    if (gap) {
      return {
        reason: PendingReason.ExceedsMaxQuota,
        message: `gang ${info.gang.id}: its PodGroup's spec.minResources exceeds what ClusterQueue ${cq.name} can ever give (its quota with everything it may borrow); resource gap: ${gap}`,
      };
    }
  }
  return undefined;
}

/**
 * scheduler-plugins' minResources check against what the ClusterQueue can ever give: per
 * resource it covers, the sum over its flavors of the quota with everything it may borrow
 * (no usage anywhere). Resources it does not cover (and `pods`) are the cluster's concern,
 * checked when the pods are placed. The gap as `name=amount, ...`, or undefined.
 */
function minResourcesGap(snap: AdmissionSnapshot, cq: ClusterQueueInfo, need: ResourceAmounts): string | undefined {
  const gaps: string[] = [];
  for (const r of Object.keys(need).sort()) {
    const g = cq.groupOf.get(r);
    if (g === undefined) continue;
    let can = 0;
    for (const f of cq.resourceGroups[g]!.flavors) can += snap.quota.potentialAvailable(cq.name, snap.frKeys.of(f, r));
    if (need[r]! > can) gaps.push(`${r}=${formatResourceAmount(r, need[r]! - can)}`);
  }
  return gaps.length > 0 ? gaps.join(', ') : undefined;
}

interface MemberResult {
  status: 'fit' | 'preempt' | 'fail';
  reason: PendingReason;
  message: string;
  gangWaitingSince?: number;
}

/** No preemption targets (shared until a member gets its own array). */
const NO_TARGETS: readonly PreemptionTarget[] = [];

/** A member's fit, shared: it is only read. */
const FIT: MemberResult = { status: 'fit', reason: PendingReason.WaitingForQuota, message: '' };

export function placementOptions(cfg: CycleConfig): WorkloadPlacementOptions {
  return cfg.placement ?? {};
}

/** Flavors for one Workload, then preemption, then smaller counts (partial admission, gang minimum). */
function nominateMember(snap: AdmissionSnapshot, m: Member, cfg: CycleConfig, alone: boolean): MemberResult {
  const info = m.info;
  const gang = info.gang;
  // Scheduling equivalence (equivalence.ts): the same lone head failed on this very state.
  const equivalence = equivalenceApplies(m, alone);
  if (equivalence) {
    const hit = recallFailure(snap, cfg.placement, m);
    if (hit) return { status: 'fail', reason: hit.reason, message: hit.message };
  }
  // The counts asked for first: each PodSet's own (no Map: undefined) unless a gang's
  // total-number caps them.
  const asked = gang !== undefined && gang.total < totalPods(info) ? fullCounts(info) : undefined;
  const first = tryCounts(snap, m, cfg, asked);
  if (first.mode === 'Fit') {
    m.assignment = first;
    m.counts = asked;
    return FIT;
  }
  const found = { candidates: 0 };
  if (first.mode === 'Preempt' && alone) {
    const targets = targetsFor(snap, m, first, asked, cfg, found);
    if (targets.length > 0) {
      m.assignment = first;
      m.counts = asked;
      m.targets = targets;
      return { status: 'preempt', reason: PendingReason.WaitingForQuota, message: first.message || 'insufficient unused quota' };
    }
  }
  const full = asked ?? fullCounts(info);
  const fits = fitsAt(snap, m, cfg);
  // Partial admission (Kueue, minCount) or the gang minimum (nothing to shrink without either).
  if (gang || info.podSets.some((p) => p.minCount !== undefined)) {
    const found = searchLargest(shrinkSteps(info, full, cfg.partialAdmission !== false), fits);
    if (found) {
      m.assignment = found.a;
      m.counts = found.counts;
      return { status: 'fit', reason: PendingReason.WaitingForQuota, message: '' };
    }
  }
  // NonStrict gangs hold what fits while they accumulate (never less than they held).
  const startsWaiting = startsWaitingNow(
    gang,
    first.preemptQuota.size === 0 && (first.reason === PendingReason.TopologyPlacementFailed || first.preemptTopology),
    cfg.now,
  );
  // Accumulating is pointless when even an empty cluster or the whole quota is too small.
  const hopeless =
    first.reason === PendingReason.ExceedsMaxQuota ||
    first.reason === PendingReason.NoMatchingFlavor ||
    (first.mode === 'NoFit' && first.reason === PendingReason.TopologyPlacementFailed);
  if (gang && gang.mode === GangMode.NonStrict && alone && !hopeless) {
    const { k, best } = searchBelowMinimum(belowMinimum(info, full), fits);
    const heldCount = m.held ? m.held.podSets.reduce((s, p) => s + p.count, 0) : 0;
    if (best && k >= heldCount && k > 0) {
      m.assignment = best.a;
      m.counts = best.counts;
      m.reservedOnly = true;
      return { status: 'fit', reason: PendingReason.GangAccumulating, message: '', gangWaitingSince: gang.waitingSince ?? cfg.now };
    }
  }
  if (equivalence && found.candidates === 0 && startsWaiting === undefined)
    rememberFailure(snap, cfg.placement, m, { reason: first.reason, message: first.message });
  return {
    status: 'fail',
    reason: first.reason,
    message: first.message,
    ...(startsWaiting !== undefined ? { gangWaitingSince: startsWaiting } : {}),
  };
}

function tryCounts(snap: AdmissionSnapshot, m: Member, cfg: CycleConfig, counts: Map<string, number> | undefined): FlavorAssignment {
  return assignFlavors(snap, m.cq, m.info, counts ? { placement: placementOptions(cfg), counts } : { placement: placementOptions(cfg) });
}

function targetsFor(
  snap: AdmissionSnapshot,
  m: Member,
  a: FlavorAssignment,
  counts: Map<string, number> | undefined,
  cfg: CycleConfig,
  found: { candidates: number },
): PreemptionTarget[] {
  return findPreemptionTargets(snap, {
    info: m.info,
    cq: m.cq,
    assignment: a,
    fits: fitsWith(snap, m, cfg, counts),
    found,
  });
}

/** The PodSet reducer's fits(): the Fit at these counts, or undefined (made here, after the first try failed). */
function fitsAt(snap: AdmissionSnapshot, m: Member, cfg: CycleConfig): (counts: Map<string, number>) => FlavorAssignment | undefined {
  return (counts) => {
    const a = tryCounts(snap, m, cfg, counts);
    return a.mode === 'Fit' ? a : undefined;
  };
}

/** The preemption search's fits(); made here so that no named closure is created per call. */
function fitsWith(snap: AdmissionSnapshot, m: Member, cfg: CycleConfig, counts: Map<string, number> | undefined): () => boolean {
  return () => tryCounts(snap, m, cfg, counts).mode === 'Fit';
}
