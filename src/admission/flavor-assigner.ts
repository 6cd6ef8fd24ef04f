// Flavor assignment (kueue-core.md §1b "Flavor assignment"): per PodSet and resource group,
// the ClusterQueue's flavors in order; per flavor a mode from quota (Fit, Preempt, NoFit)
// and a borrowing level; flavor fungibility decides whether to keep scanning; then the TAS
// hook places the TAS PodSets on the chosen flavors.
//
// Differences from the peer, on purpose (docs/design.md "Admission"):
//   - the scan starts at the first flavor every time (no LastTriedFlavorIdx);
//   - "Preempt" means quota could be freed by preemption under the ClusterQueue's policy;
//     the cycle then asks the preemption module for targets (the peer's oracle runs here).

import type { PodSet, ResourceFlavor } from '../api/objects.ts';
import { formatResourceAmount, type ResourceAmounts } from '../api/resources.ts';
import { hasTopologyConstraint } from '../api/topology-request.ts';
import type { Assignment } from '../placement/assignment.ts';
import { placeWorkload, podSetGroups, resourceFlavorMismatch, type WorkloadPlacementOptions } from '../placement/workload-placement.ts';
import { fr, type FR } from './quota.ts';
import type { AdmissionSnapshot, ClusterQueueInfo, PodSetAdmission } from './snapshot.ts';
import type { WorkloadInfo } from './workload-info.ts';

export type Mode = 'Fit' | 'Preempt' | 'NoFit';

/** Why a Workload is pending (QuotaReserved=False reasons, kueue-core §1a). */
export const PendingReason = {
  NoMatchingFlavor: 'NoMatchingFlavor',
  ExceedsMaxQuota: 'ExceedsMaxQuota',
  WaitingForQuota: 'WaitingForQuota',
  TopologyPlacementFailed: 'TopologyPlacementFailed',
  WaitingForPreemptedWorkloads: 'WaitingForPreemptedWorkloads',
  Misconfigured: 'Misconfigured',
  Suspended: 'Suspended',
  Inadmissible: 'Inadmissible',
  WaitingForPodsReady: 'WaitingForPodsReady',
  /** Ours: a gang short of members, or its group short of gangs. */
  GangNotReady: 'GangNotReady',
  /** Ours: a gang whose waiting time ran out (seed: not scheduled until the user acts). */
  GangTimeout: 'GangTimeout',
  /** Ours: a NonStrict gang holding a reservation below its minimum. */
  GangAccumulating: 'GangAccumulating',
} as const;
export type PendingReason = (typeof PendingReason)[keyof typeof PendingReason];

/** Most severe first: the reason a NoFit reports (kueue-core §1b). */
const SEVERITY: readonly PendingReason[] = [PendingReason.NoMatchingFlavor, PendingReason.ExceedsMaxQuota, PendingReason.WaitingForQuota, PendingReason.TopologyPlacementFailed];

export interface FlavorAssignment {
  mode: Mode;
  podSets: PodSetAdmission[];
  /** Quota usage per flavor-resource. */
  usage: Map<FR, number>;
  /** Highest borrowing level over the PodSets (0 = within nominal quota). */
  borrowing: number;
  /** Flavor-resources where quota must be freed by preemption. */
  preemptQuota: Set<FR>;
  /** TAS capacity is short although quota may fit: preemption must free room on the topology. */
  preemptTopology: boolean;
  reason: PendingReason;
  message: string;
}

export interface AssignOptions {
  placement: WorkloadPlacementOptions;
  /** Counts to try instead of the PodSets' own (partial admission, gang minimum). */
  counts?: ReadonlyMap<string, number>;
  /** Skip the TAS placement (the cycle re-runs it when processing). */
  skipTopology?: boolean;
}

const MODE_RANK: Record<Mode, number> = { Fit: 2, Preempt: 1, NoFit: 0 };
const worse = (a: Mode, b: Mode): Mode => (MODE_RANK[a] <= MODE_RANK[b] ? a : b);

/** A PodSet uses TAS when it asks for it, or implicitly when every flavor of the ClusterQueue is a TAS flavor. */
export function usesTopology(ps: PodSet, cq: ClusterQueueInfo): boolean {
  return hasTopologyConstraint(ps.topologyRequest) || cq.allTas;
}

interface FlavorTry {
  flavor: string;
  mode: Mode;
  borrowing: number;
  preempt: FR[];
  reasons: { reason: PendingReason; message: string }[];
}

function better(a: FlavorTry, b: FlavorTry, cq: ClusterQueueInfo): boolean {
  const byMode = MODE_RANK[a.mode] - MODE_RANK[b.mode];
  const byBorrow = b.borrowing - a.borrowing;
  // A flavor that does not fit at all never wins over one that does.
  if (a.mode === 'NoFit' || b.mode === 'NoFit') return byMode > 0;
  if (cq.fungibility.preference === 'PreemptionOverBorrowing') return byBorrow !== 0 ? byBorrow > 0 : byMode > 0;
  return byMode !== 0 ? byMode > 0 : byBorrow > 0;
}

/** Whether the scan may stop at this flavor (flavor fungibility). */
function stopsHere(t: FlavorTry, cq: ClusterQueueInfo): boolean {
  if (t.mode === 'NoFit') return false;
  if (t.mode === 'Preempt' && cq.fungibility.whenCanPreempt === 'TryNextFlavor') return false;
  if (t.borrowing > 0 && cq.fungibility.whenCanBorrow === 'TryNextFlavor') return false;
  return true;
}

/** Whether preemption could ever free `val` of `f` for this ClusterQueue under its policy. */
function preemptionMayHelp(snap: AdmissionSnapshot, cq: ClusterQueueInfo, f: FR, val: number): boolean {
  const p = cq.preemption;
  if (p.withinClusterQueue !== 'Never' && snap.quota.nominal(cq.name, f) >= val) return true;
  if (cq.cohort !== undefined && p.reclaimWithinCohort !== 'Never') return true;
  return false;
}

/**
 * Assigns flavors to every PodSet of the Workload in its ClusterQueue, then (mode Fit or
 * Preempt) runs the TAS placement. Reads the snapshot; changes nothing.
 */
export function assignFlavors(snap: AdmissionSnapshot, cq: ClusterQueueInfo, info: WorkloadInfo, options: AssignOptions): FlavorAssignment {
  const coversPods = cq.groupOf.has('pods');
  const assigned = new Map<FR, number>();
  const podSets: PodSetAdmission[] = [];
  const preemptQuota = new Set<FR>();
  const reasons: { reason: PendingReason; message: string }[] = [];
  let mode: Mode = 'Fit';
  let borrowing = 0;
  const byName = new Map(info.podSets.map((p) => [p.name, p]));
  const tasFlavorOf = new Map<string, string>();

  for (const group of podSetGroups(info.workload.spec.podSets)) {
    const members = [group.workers, ...(group.leader ? [group.leader] : [])].map((ps) => byName.get(ps.name)!).filter(Boolean);
    const counts = members.map((m) => options.counts?.get(m.name) ?? m.count);
    if (counts.every((c) => c === 0)) {
      for (const m of members) podSets.push({ name: m.name, count: 0, flavors: {}, perPod: m.perPod, usage: {} });
      continue;
    }
    // The group's total request per resource.
    const request: ResourceAmounts = {};
    members.forEach((m, i) => {
      for (const [r, v] of Object.entries(m.perPod)) if (v > 0) request[r] = (request[r] ?? 0) + v * counts[i]!;
    });
    if (coversPods) request.pods = counts.reduce((a, b) => a + b, 0);
    const ps = group.workers;
    const resources = Object.keys(request).sort();
    const uncovered = resources.filter((r) => !cq.groupOf.has(r));
    if (uncovered.length > 0) {
      mode = 'NoFit';
      reasons.push({ reason: PendingReason.NoMatchingFlavor, message: `couldn't assign flavors to pod set ${ps.name}: resource ${uncovered[0]} unavailable in ClusterQueue` });
      continue;
    }
    const tas = usesTopology(ps, cq);
    const flavors: Record<string, string> = {};
    let groupMode: Mode = 'Fit';
    const groupIdx = [...new Set(resources.map((r) => cq.groupOf.get(r)!))].sort((a, b) => a - b);
    for (const gi of groupIdx) {
      const rg = cq.resourceGroups[gi]!;
      let best: FlavorTry | undefined;
      const tried: string[] = [];
      for (const name of rg.flavors) {
        const t = tryFlavor(snap, cq, name, rg.covered, request, assigned, ps, tas);
        tried.push(...t.reasons.map((r) => r.message));
        if (!best || better(t, best, cq)) best = t;
        if (stopsHere(t, cq)) break;
      }
      if (!best || best.mode === 'NoFit') {
        groupMode = 'NoFit';
        const worst = best?.reasons.map((r) => r.reason).sort((a, b) => SEVERITY.indexOf(a) - SEVERITY.indexOf(b))[0] ?? PendingReason.NoMatchingFlavor;
        reasons.push({ reason: worst, message: `couldn't assign flavors to pod set ${ps.name}: ${tried.join(', ') || 'no flavor'}` });
        continue;
      }
      for (const r of rg.covered) if (request[r] !== undefined) flavors[r] = best.flavor;
      groupMode = worse(groupMode, best.mode);
      borrowing = Math.max(borrowing, best.borrowing);
      for (const f of best.preempt) preemptQuota.add(f);
      if (best.mode === 'Preempt') reasons.push(...best.reasons);
      if (tas) tasFlavorOf.set(ps.name, best.flavor);
    }
    mode = worse(mode, groupMode);
    if (groupMode === 'NoFit') continue;
    for (const r of resources) assigned.set(fr(flavors[r]!, r), (assigned.get(fr(flavors[r]!, r)) ?? 0) + request[r]!);
    members.forEach((m, i) => {
      const usage: ResourceAmounts = {};
      for (const [r, v] of Object.entries(m.perPod)) if (v > 0) usage[r] = v * counts[i]!;
      if (coversPods) usage.pods = counts[i]!;
      const own: Record<string, string> = {};
      for (const r of Object.keys(usage)) if (flavors[r] !== undefined) own[r] = flavors[r];
      // A pod with no requests still takes one `pods`: name the flavor of its group.
      podSets.push({ name: m.name, count: counts[i]!, flavors: own, perPod: m.perPod, usage, ...(tas ? { tasFlavor: tasFlavorOf.get(ps.name) } : {}) });
    });
  }

  const result = (m: Mode, reason: PendingReason, message: string): FlavorAssignment => ({
    mode: m,
    podSets: order(podSets, info.workload.spec.podSets),
    usage: usageOf(podSets),
    borrowing,
    preemptQuota,
    preemptTopology: false,
    reason,
    message,
  });
  if (mode === 'NoFit') {
    const worst = [...reasons].sort((a, b) => SEVERITY.indexOf(a.reason) - SEVERITY.indexOf(b.reason))[0]!;
    return result('NoFit', worst.reason, reasons.map((r) => r.message).join('; '));
  }
  if (tasFlavorOf.size === 0 || options.skipTopology) {
    return mode === 'Fit' ? result('Fit', PendingReason.WaitingForQuota, '') : result('Preempt', PendingReason.WaitingForQuota, reasons.map((r) => r.message).join('; '));
  }
  // The TAS hook: place on the current snapshot when quota fits; on an empty one to learn
  // whether preemption could ever help.
  const tasOptions: WorkloadPlacementOptions = { ...options.placement, flavorOf: tasFlavorOf, counts: new Map(podSets.map((p) => [p.name, p.count])) };
  if (mode === 'Fit') {
    const placed = placeWorkload(info.workload, snap.tasList, tasOptions);
    if (placed.ok) {
      applyPlacement(podSets, placed.podSets, coversPods);
      return result('Fit', PendingReason.WaitingForQuota, '');
    }
    const empty = placeWorkload(info.workload, snap.tasList, { ...tasOptions, simulateEmpty: true });
    if (!empty.ok) return result('NoFit', PendingReason.TopologyPlacementFailed, empty.reason);
    const r = result('Preempt', PendingReason.TopologyPlacementFailed, placed.reason);
    r.preemptTopology = true;
    return r;
  }
  const empty = placeWorkload(info.workload, snap.tasList, { ...tasOptions, simulateEmpty: true });
  if (!empty.ok) return result('NoFit', PendingReason.TopologyPlacementFailed, empty.reason);
  const r = result('Preempt', PendingReason.WaitingForQuota, reasons.map((x) => x.message).join('; '));
  r.preemptTopology = true;
  return r;
}

/**
 * Writes the placement into the PodSet admissions. A gang placement may hold fewer pods
 * than asked (its minimum plus what fits): counts and usage follow the placement.
 */
export function applyPlacement(podSets: PodSetAdmission[], placed: readonly { name: string; count: number; flavor: string; assignment: Assignment }[], coversPods: boolean): void {
  for (const p of placed) {
    const ps = podSets.find((x) => x.name === p.name);
    if (!ps) continue;
    ps.assignment = p.assignment;
    ps.tasFlavor = p.flavor;
    if (p.count !== ps.count) {
      ps.count = p.count;
      const usage: ResourceAmounts = {};
      for (const [r, v] of Object.entries(ps.perPod)) if (v > 0) usage[r] = v * p.count;
      if (coversPods) usage.pods = p.count;
      ps.usage = usage;
    }
  }
}

function usageOf(podSets: readonly PodSetAdmission[]): Map<FR, number> {
  const out = new Map<FR, number>();
  for (const ps of podSets) {
    for (const [r, v] of Object.entries(ps.usage)) {
      const f = ps.flavors[r];
      if (f === undefined) continue;
      out.set(fr(f, r), (out.get(fr(f, r)) ?? 0) + v);
    }
  }
  return out;
}

function order(podSets: PodSetAdmission[], spec: readonly PodSet[]): PodSetAdmission[] {
  const idx = new Map(spec.map((p, i) => [p.name, i]));
  return [...podSets].sort((a, b) => idx.get(a.name)! - idx.get(b.name)!);
}

function tryFlavor(
  snap: AdmissionSnapshot,
  cq: ClusterQueueInfo,
  name: string,
  covered: readonly string[],
  request: ResourceAmounts,
  assigned: ReadonlyMap<FR, number>,
  ps: PodSet,
  tas: boolean,
): FlavorTry {
  const t: FlavorTry = { flavor: name, mode: 'Fit', borrowing: 0, preempt: [], reasons: [] };
  const noFit = (reason: PendingReason, message: string): FlavorTry => ({ ...t, mode: 'NoFit', reasons: [{ reason, message }] });
  const flavor: ResourceFlavor | undefined = snap.flavors.get(name);
  if (!flavor) return noFit(PendingReason.NoMatchingFlavor, `flavor ${name} not found`);
  const isTas = flavor.spec.topologyName !== undefined;
  if (tas && !isTas) return noFit(PendingReason.NoMatchingFlavor, `Flavor "${name}" does not support TopologyAwareScheduling`);
  if (!tas && isTas) return noFit(PendingReason.NoMatchingFlavor, `Flavor "${name}" supports only TopologyAwareScheduling`);
  if (isTas && !snap.tas.has(name)) return noFit(PendingReason.NoMatchingFlavor, `Flavor "${name}" information missing in TAS cache`);
  const mismatch = resourceFlavorMismatch(flavor, ps, isTas ? snap.tas.get(name)!.snapshot.levels : undefined);
  if (mismatch) return noFit(PendingReason.NoMatchingFlavor, mismatch);
  for (const r of covered) {
    const req = request[r];
    if (req === undefined) continue;
    const f = fr(name, r);
    const before = assigned.get(f) ?? 0;
    const val = before + req;
    const potential = snap.quota.potentialAvailable(cq.name, f);
    if (val > potential) {
      return noFit(
        PendingReason.ExceedsMaxQuota,
        `insufficient quota for ${r} in flavor ${name}, previously considered podsets requests (${formatResourceAmount(r, before)}) + current podset request (${formatResourceAmount(r, req)}) > maximum capacity (${formatResourceAmount(r, potential)})`,
      );
    }
    const available = snap.quota.available(cq.name, f);
    if (val <= available) {
      t.borrowing = Math.max(t.borrowing, snap.quota.borrowingLevel(cq.name, f, val));
      continue;
    }
    const message = `insufficient unused quota for ${r} in flavor ${name}, ${formatResourceAmount(r, val - available)} more needed`;
    if (!preemptionMayHelp(snap, cq, f, val)) return noFit(PendingReason.WaitingForQuota, message);
    t.mode = 'Preempt';
    t.preempt.push(f);
    t.reasons.push({ reason: PendingReason.WaitingForQuota, message: `couldn't assign flavors to pod set ${ps.name}: ${message}` });
    // Borrowing after preemption: above nominal means borrowing.
    if (val > snap.quota.nominal(cq.name, f)) t.borrowing = Math.max(t.borrowing, 1);
  }
  return t;
}
