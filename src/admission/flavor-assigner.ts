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
import {
  type PodSetPlacement,
  placeWorkload,
  podSetGroups,
  resourceFlavorMismatch,
  type TasFlavor,
  type WorkloadPlacement,
  type WorkloadPlacementOptions,
} from '../placement/workload-placement.ts';
import { type FR, type FrKeys } from './quota.ts';
import type { AdmissionSnapshot, ClusterQueueInfo, PodSetAdmission } from './snapshot.ts';
import { type PodSetInfo, placementInputsKey, type WorkloadInfo } from './workload-info.ts';

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
const SEVERITY: readonly PendingReason[] = [
  PendingReason.NoMatchingFlavor,
  PendingReason.ExceedsMaxQuota,
  PendingReason.WaitingForQuota,
  PendingReason.TopologyPlacementFailed,
];

export interface FlavorAssignment {
  mode: Mode;
  podSets: PodSetAdmission[];
  /** Quota usage per flavor-resource. */
  usage: Map<FR, number>;
  /** Highest borrowing level over the PodSets (0 = within nominal quota). */
  borrowing: number;
  /** Flavor-resources where quota must be freed by preemption. */
  preemptQuota: ReadonlySet<FR>;
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
  /** NONE until something is added (most tries fit: no array per try). */
  preempt: readonly FR[];
  reasons: readonly { reason: PendingReason; message: string }[];
}

const NONE: readonly never[] = [];

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
  if (p.withinClusterQueue !== 'Never' && snap.quota.nominalAt(cq.quotaIndex, snap.quota.frIndex(f)) >= val) return true;
  if (cq.cohort !== undefined && p.reclaimWithinCohort !== 'Never') return true;
  return false;
}

/**
 * Assigns flavors to every PodSet of the Workload in its ClusterQueue, then (mode Fit or
 * Preempt) runs the TAS placement. Reads the snapshot; changes nothing.
 */
export function assignFlavors(snap: AdmissionSnapshot, cq: ClusterQueueInfo, info: WorkloadInfo, options: AssignOptions): FlavorAssignment {
  // Every head of every cycle comes through here: what most Workloads do not need (a
  // second group's running totals, TAS flavors, reasons, preemption) is made only when needed.
  const coversPods = cq.coversPods;
  const shape = shapeOf(info);
  const groups = shape.groups;
  // What the groups before this one take (read by tryFlavor), kept only when another follows.
  const assigned = groups.length > 1 ? new Map<FR, number>() : undefined;
  // The first PodSet makes an array of one (the usual Workload has one: no grown array).
  let podSets: PodSetAdmission[] | undefined;
  let preemptQuota: Set<FR> | undefined;
  let reasons: { reason: PendingReason; message: string }[] | undefined;
  let mode: Mode = 'Fit';
  let borrowing = 0;
  let tasFlavorOf: Map<string, string> | undefined;

  for (let gi = 0; gi < groups.length; gi++) {
    const group = groups[gi]!;
    const members = group.members;
    const lone = members.length === 1;
    // The count of each member (a lone member's without an array).
    const loneCount = lone ? (options.counts?.get(members[0]!.name) ?? members[0]!.count) : 0;
    let counts: number[] | undefined;
    let allZero = true;
    if (lone) allZero = loneCount === 0;
    else {
      counts = [];
      for (const m of members) {
        const c = options.counts?.get(m.name) ?? m.count;
        counts.push(c);
        if (c !== 0) allZero = false;
      }
    }
    if (allZero) {
      for (const m of members) {
        const zero: PodSetAdmission = { name: m.name, count: 0, flavors: {}, perPod: m.perPod, usage: {} };
        if (podSets) podSets.push(zero);
        else podSets = [zero];
      }
      continue;
    }
    // The group's total request per resource.
    const request = groupRequest(group, lone ? loneCount : undefined, counts, coversPods);
    const ps = group.workers;
    const resources = coversPods ? group.resourcesWithPods : group.resources;
    let uncovered: string | undefined;
    for (const r of resources) {
      if (!cq.groupOf.has(r)) {
        uncovered = r;
        break;
      }
    }
    if (uncovered !== undefined) {
      mode = 'NoFit';
      (reasons ??= []).push({
        reason: PendingReason.NoMatchingFlavor,
        message: `couldn't assign flavors to pod set ${ps.name}: resource ${uncovered} unavailable in ClusterQueue`,
      });
      continue;
    }
    // usesTopology(ps, cq), with the PodSet's side read once on its shape.
    const tas = group.topology || cq.allTas;
    const flavors: Record<string, string> = {};
    let groupMode: Mode = 'Fit';
    const indices = resources.length === 1 ? undefined : groupIndices(cq, resources);
    const nGroups = indices ? indices.length : 1;
    for (let k = 0; k < nGroups; k++) {
      const rg = cq.resourceGroups[indices ? indices[k]! : cq.groupOf.get(resources[0]!)!]!;
      let best: FlavorTry | undefined;
      let tried: string[] | undefined;
      for (const name of rg.flavors) {
        const t = tryFlavor(snap, cq, name, rg.covered, request, assigned, group, tas);
        for (const r of t.reasons) (tried ??= []).push(r.message);
        if (!best || better(t, best, cq)) best = t;
        if (stopsHere(t, cq)) break;
      }
      if (!best || best.mode === 'NoFit') {
        groupMode = 'NoFit';
        const worst =
          best?.reasons.map((r) => r.reason).sort((a, b) => SEVERITY.indexOf(a) - SEVERITY.indexOf(b))[0] ?? PendingReason.NoMatchingFlavor;
        (reasons ??= []).push({
          reason: worst,
          message: `couldn't assign flavors to pod set ${ps.name}: ${tried?.join(', ') || 'no flavor'}`,
        });
        continue;
      }
      for (const r of rg.covered) if (request[r] !== undefined) flavors[r] = best.flavor;
      groupMode = worse(groupMode, best.mode);
      borrowing = Math.max(borrowing, best.borrowing);
      for (const f of best.preempt) (preemptQuota ??= new Set()).add(f);
      if (best.mode === 'Preempt') for (const r of best.reasons) (reasons ??= []).push(r);
      if (tas) (tasFlavorOf ??= new Map()).set(ps.name, best.flavor);
    }
    mode = worse(mode, groupMode);
    if (groupMode === 'NoFit') continue;
    if (assigned) {
      for (const r of resources) {
        const f = snap.frKeys.of(flavors[r]!, r);
        assigned.set(f, (assigned.get(f) ?? 0) + request[r]!);
      }
    }
    for (let i = 0; i < members.length; i++) {
      const m = members[i]!;
      const c = lone ? loneCount : counts![i]!;
      // A lone member's usage is its group's request (the same keys and products), which
      // nothing changes: shared, not copied.
      let usage: ResourceAmounts = request;
      if (!lone) {
        usage = {};
        const pairs = group.requested[i]!;
        for (let j = 0; j < pairs.length; j += 2) usage[pairs[j] as string] = (pairs[j + 1] as number) * c;
        if (coversPods) usage.pods = c;
      }
      // A lone member uses every resource of its group: the group's flavors are its own.
      let own = flavors;
      if (!lone) {
        own = {};
        for (const r in usage) if (flavors[r] !== undefined) own[r] = flavors[r];
      }
      // A pod with no requests still takes one `pods`: name the flavor of its group.
      const admission: PodSetAdmission = { name: m.name, count: c, flavors: own, perPod: m.perPod, usage };
      if (tas) admission.tasFlavor = tasFlavorOf!.get(ps.name);
      if (podSets) podSets.push(admission);
      else podSets = [admission];
    }
  }

  podSets ??= [];
  const parts: ResultParts = { keys: snap.frKeys, podSets, spec: shape.spec, borrowing, preemptQuota: preemptQuota ?? NO_FRS };
  if (mode === 'NoFit') {
    const worst = [...reasons!].sort((a, b) => SEVERITY.indexOf(a.reason) - SEVERITY.indexOf(b.reason))[0]!;
    return result(parts, 'NoFit', worst.reason, reasons!.map((r) => r.message).join('; '));
  }
  if (tasFlavorOf === undefined || options.skipTopology) {
    return mode === 'Fit'
      ? result(parts, 'Fit', PendingReason.WaitingForQuota, '')
      : result(parts, 'Preempt', PendingReason.WaitingForQuota, (reasons ?? []).map((r) => r.message).join('; '));
  }
  // The TAS hook: place on the current snapshot when quota fits; on an empty one to learn
  // whether preemption could ever help.
  const tasOptions: WorkloadPlacementOptions = {
    ...options.placement,
    flavorOf: tasFlavorOf,
    counts: new Map(podSets.map((p) => [p.name, p.count])),
  };
  if (mode === 'Fit') {
    const placed = placeNow(snap, info, shape, options.placement, tasOptions);
    if (placed.ok) {
      applyPlacement(podSets, placed.podSets, coversPods);
      return result(parts, 'Fit', PendingReason.WaitingForQuota, '');
    }
    const empty = placeOnEmpty(snap, info, shape, options.placement, tasOptions);
    if (!empty.ok) return result(parts, 'NoFit', PendingReason.TopologyPlacementFailed, empty.reason);
    const r = result(parts, 'Preempt', PendingReason.TopologyPlacementFailed, placed.reason);
    r.preemptTopology = true;
    return r;
  }
  const empty = placeOnEmpty(snap, info, shape, options.placement, tasOptions);
  if (!empty.ok) return result(parts, 'NoFit', PendingReason.TopologyPlacementFailed, empty.reason);
  const r = result(parts, 'Preempt', PendingReason.WaitingForQuota, (reasons ?? []).map((x) => x.message).join('; '));
  r.preemptTopology = true;
  return r;
}

/** No flavor-resource to free (the usual answer, shared: the set is never changed). */
const NO_FRS: ReadonlySet<FR> = new Set();

/**
 * A group's total request per resource at these counts (`pods` with the total when the
 * ClusterQueue covers it). A lone member's at its own count is kept on the group shape
 * (the object is only read): every head of every cycle asks for it.
 */
function groupRequest(
  group: GroupShape,
  loneCount: number | undefined,
  counts: readonly number[] | undefined,
  coversPods: boolean,
): ResourceAmounts {
  const cacheable = loneCount !== undefined;
  if (cacheable) {
    const hit = coversPods ? group.requestWithPods : group.request;
    if (hit !== undefined && hit.count === loneCount) return hit.request;
  }
  const request: ResourceAmounts = {};
  let total = 0;
  for (let i = 0; i < group.members.length; i++) {
    const c = loneCount ?? counts![i]!;
    total += c;
    const pairs = group.requested[i]!;
    for (let j = 0; j < pairs.length; j += 2) {
      const r = pairs[j] as string;
      request[r] = (request[r] ?? 0) + (pairs[j + 1] as number) * c;
    }
  }
  if (coversPods) request.pods = total;
  if (cacheable) {
    if (coversPods) group.requestWithPods = { count: loneCount, request };
    else group.request = { count: loneCount, request };
  }
  return request;
}

/**
 * Whether a quota-only Fit still fits against the snapshot as it is now, without assigning
 * again (the cycle re-checks each nominated Fit after earlier entries admitted): exactly
 * what assignFlavors would answer when the ClusterQueue has one flavor per resource group
 * (the same flavors are chosen; the Workload fits iff each flavor-resource's total, the
 * last sum tryFlavor compares, is at most what is available) and no PodSet is on a topology
 * (no placement to redo). Integer amounts only, so the totals are the same whatever the
 * order of summing. Undefined when that does not hold: assign again.
 */
export function quotaFitHolds(snap: AdmissionSnapshot, cq: ClusterQueueInfo, a: FlavorAssignment): boolean | undefined {
  if (a.mode !== 'Fit' || !cq.oneFlavorPerGroup) return undefined;
  for (let i = 0; i < a.podSets.length; i++) {
    const ps = a.podSets[i]!;
    if (ps.tasFlavor !== undefined || ps.assignment !== undefined) return undefined;
  }
  // One pass: any amount that is not an integer makes the answer undefined, whatever else.
  let fits = true;
  const quota = snap.quota;
  for (const [f, v] of a.usage) {
    if (!Number.isSafeInteger(v)) return undefined;
    if (fits && v > quota.availableAt(cq.quotaIndex, quota.frIndex(f))) fits = false;
  }
  return fits;
}

// ---- the placement on an empty topology, remembered ---------------------------------------
//
// Whether a Workload could fit with no TAS Workload admitted (simulateEmpty) is asked for
// every head whose quota is short, and costs a whole placement. Its answer depends only on
// the Workload's shape (its PodSets, the annotations and owners placement reads), the
// counts and flavors asked for, the placement options, each TAS snapshot's structure and
// what TAS Workloads cannot take away: free + TAS usage per domain (allocatable minus the
// other pods), which admitting and evicting leave unchanged. So answers are kept per
// AdmissionSnapshot while every TAS snapshot keeps its structure version and that vector;
// when its usage version moved, the vector is compared (a few thousand numbers, against a
// placement over every leaf), and any change forgets every answer.

interface RoomState {
  version: number;
  usageVersion: number;
  /** free + tas per domain and resource when last checked. */
  room: Float64Array;
  /** Every free and TAS amount was a safe integer then (so TAS usage changes keep `room` exactly). */
  integral: boolean;
}

interface Answer {
  ok: boolean;
  reason: string;
}

interface AnswersByShape<T> {
  /** The key as first stored: an info adopts it, so later lookups compare one string object. */
  key: string;
  /** One PodSet on one flavor: by count. */
  byCount: Map<number, Map<string, T>>;
  /** Otherwise by counts and flavors. */
  byAsk: Map<string, T>;
}

interface EmptyMemo {
  rooms: Map<TasFlavor['snapshot'], RoomState>;
  /** Placement options object -> shape key -> answers. */
  answers: WeakMap<object, Map<string, AnswersByShape<Answer>>>;
}

// ---- the placement on the snapshot as it is, remembered ------------------------------------
//
// The TAS placement of a Workload (placeWorkload) reads the same things as the placement on
// an empty topology above (the Workload's shape, the counts and flavors, the options) and
// the TAS snapshots as they are now: their structure (`version`) and every capacity and
// usage in them (`usageVersion`, bumped by every change). While no version moved, the same
// question has the same answer: heads of the same shape nominated in one cycle, and the
// check at admission of a head nominated on the snapshot as it still is, place once. Any
// version moved forgets every answer.

interface NowMemo {
  /** Per TAS flavor (snap.tasList order): structure version, usage version, when the answers were kept. */
  versions: number[];
  answers: WeakMap<object, Map<string, AnswersByShape<WorkloadPlacement>>>;
}

/** Whether every TAS snapshot is as it was when the answers were kept; if not, they are forgotten. */
function nowUnchanged(memo: NowMemo, snap: AdmissionSnapshot): boolean {
  const tasList = snap.tasList;
  const v = memo.versions;
  let same = v.length === 2 * tasList.length;
  for (let i = 0; same && i < tasList.length; i++) {
    const s = tasList[i]!.snapshot;
    same = v[2 * i] === s.version && v[2 * i + 1] === s.usageVersion;
  }
  if (same) return true;
  v.length = 0;
  for (const tf of tasList) v.push(tf.snapshot.version, tf.snapshot.usageVersion);
  memo.answers = new WeakMap();
  return false;
}

/** placeWorkload on the snapshot as it is, remembered while it stays so (a copy of a kept success: it is not shared). */
function placeNow(
  snap: AdmissionSnapshot,
  info: WorkloadInfo,
  shape: WorkloadShape,
  placement: WorkloadPlacementOptions,
  tasOptions: WorkloadPlacementOptions,
): WorkloadPlacement {
  const memo = memoOf(snap).now;
  nowUnchanged(memo, snap);
  let fresh: WorkloadPlacement | undefined;
  const kept = remembered(
    memo.answers,
    info,
    shape,
    placement,
    tasOptions,
    () => (fresh = placeWorkload(info.workload, snap.tasList, tasOptions)),
  );
  if (kept === fresh || !kept.ok) return kept;
  return { ok: true, podSets: kept.podSets.map(copyPlacement) };
}

function copyPlacement(p: PodSetPlacement): PodSetPlacement {
  const a = p.assignment;
  const copy: PodSetPlacement = {
    ...p,
    assignment: { levels: [...a.levels], domains: a.domains.map((d) => ({ values: [...d.values], count: d.count })) },
  };
  if (p.instances) copy.instances = p.instances.map((i) => ({ id: i.id, nodes: [...i.nodes] }));
  return copy;
}

/** Shapes remembered per placement options before the answers are forgotten (bounded memory). */
const MAX_SHAPES = 4096;

/**
 * What flavor assignment remembers between calls, kept by the AdmissionSnapshot it reads
 * (`snap.assignerMemo`), so it lives and dies with that snapshot; each part is bounded.
 */
export interface FlavorAssignerMemo {
  /** Answers of the placement on an empty cluster (placeOnEmpty), at most MAX_SHAPES per options. */
  empty: EmptyMemo;
  /** formatResourceAmount per resource and amount, at most MAX_FORMATTED per resource. */
  formatted: Map<string, Map<number, string>>;
  /** resourceFlavorMismatch of plain PodSets (GroupShape.plainKey) per flavor, for the levels it was computed with, by level asked for. */
  mismatch: Map<ResourceFlavor, { levels: readonly string[] | undefined; byKey: Map<string, { result: string | undefined }> }>;
  /** Placements on the snapshot as it is now (placeNow), while its versions stay the same. */
  now: NowMemo;
}

function memoOf(snap: AdmissionSnapshot): FlavorAssignerMemo {
  return (snap.assignerMemo ??= {
    empty: { rooms: new Map(), answers: new WeakMap() },
    formatted: new Map(),
    mismatch: new Map(),
    now: { versions: [], answers: new WeakMap() },
  });
}

const NO_OPTIONS = {};

/** Whether the TAS snapshots still offer what they did when the answers were kept. */
function roomUnchanged(memo: EmptyMemo, snap: AdmissionSnapshot): boolean {
  const tasList = snap.tasList;
  let same = memo.rooms.size === tasList.length;
  for (const tf of tasList) {
    const s = tf.snapshot;
    const st = memo.rooms.get(s);
    if (st && st.version === s.version && st.usageVersion === s.usageVersion) continue;
    const n = s.domainCount * s.resourceCount;
    // Only TAS usage recorded by the snapshot moved since: nothing to compare.
    if (st && st.integral && st.version === s.version && st.room.length === n && snap.tasUsageOnlySince(s, st.usageVersion)) {
      st.usageVersion = s.usageVersion;
      continue;
    }
    const { free, tas } = s.capacityArrays();
    let equal = st !== undefined && st.version === s.version && st.room.length === n;
    if (equal) {
      const room = st!.room;
      for (let i = 0; i < n; i++) {
        if (room[i] !== free[i]! + tas[i]!) {
          equal = false;
          break;
        }
      }
    }
    if (equal) {
      st!.usageVersion = s.usageVersion;
      st!.integral = integralArrays(free, tas, n);
      continue;
    }
    const room = new Float64Array(n);
    let integral = true;
    for (let i = 0; i < n; i++) {
      room[i] = free[i]! + tas[i]!;
      if (integral && !(Number.isSafeInteger(free[i]) && Number.isSafeInteger(tas[i]) && Number.isSafeInteger(room[i]))) integral = false;
    }
    memo.rooms.set(s, { version: s.version, usageVersion: s.usageVersion, room, integral });
    same = false;
  }
  return same;
}

/** Placement options are told apart by identity; any empty set of them is the same. */
function optionsKeyOf(placement: WorkloadPlacementOptions | undefined): object {
  if (placement) for (const k in placement) if ((placement as Record<string, unknown>)[k] !== undefined) return placement;
  return NO_OPTIONS;
}

function integralArrays(free: Float64Array, tas: Float64Array, n: number): boolean {
  for (let i = 0; i < n; i++)
    if (!(Number.isSafeInteger(free[i]) && Number.isSafeInteger(tas[i]) && Number.isSafeInteger(free[i]! + tas[i]!))) return false;
  return true;
}

function placeOnEmpty(
  snap: AdmissionSnapshot,
  info: WorkloadInfo,
  shape: WorkloadShape,
  placement: WorkloadPlacementOptions,
  tasOptions: WorkloadPlacementOptions,
): Answer {
  const memo = memoOf(snap).empty;
  if (!roomUnchanged(memo, snap)) memo.answers = new WeakMap();
  return remembered(memo.answers, info, shape, placement, tasOptions, () => emptyAnswer(snap, info.workload, tasOptions));
}

/**
 * The answer kept for this Workload shape, options, counts and flavors in `store`, or the
 * one `compute` gives, kept. At most MAX_SHAPES shapes per placement options.
 */
function remembered<T>(
  store: WeakMap<object, Map<string, AnswersByShape<T>>>,
  info: WorkloadInfo,
  shape: WorkloadShape,
  placement: WorkloadPlacementOptions,
  tasOptions: WorkloadPlacementOptions,
  compute: () => T,
): T {
  const optionsKey = optionsKeyOf(placement);
  let byShape = store.get(optionsKey);
  if (!byShape || byShape.size >= MAX_SHAPES) store.set(optionsKey, (byShape = new Map()));
  // The usual Workload: one PodSet on one flavor, looked up without building a key.
  const lone = shape.groups.length === 1 && shape.groups[0]!.members.length === 1 ? shape.groups[0]!.members[0]!.name : undefined;
  const inputs = placementInputsKey(info);
  let answers = byShape.get(inputs);
  if (!answers) byShape.set(inputs, (answers = { key: inputs, byCount: new Map(), byAsk: new Map() }));
  else info.placementInputs = answers.key;
  const counts = tasOptions.counts!;
  const flavorOf = tasOptions.flavorOf!;
  if (lone !== undefined && counts.size === 1 && flavorOf.size === 1) {
    const count = counts.get(lone);
    const flavor = flavorOf.get(lone);
    if (count !== undefined && flavor !== undefined) {
      let byFlavor = answers.byCount.get(count);
      if (!byFlavor) answers.byCount.set(count, (byFlavor = new Map()));
      const hit = byFlavor.get(flavor);
      if (hit !== undefined) return hit;
      const answer = compute();
      byFlavor.set(flavor, answer);
      return answer;
    }
  }
  let key = '';
  for (const [k, v] of counts) key += `${k}=${v};`;
  key += '|';
  for (const [k, v] of flavorOf) key += `${k}=${v};`;
  let answer = answers.byAsk.get(key);
  if (answer === undefined) answers.byAsk.set(key, (answer = compute()));
  return answer;
}

function emptyAnswer(snap: AdmissionSnapshot, w: WorkloadInfo['workload'], tasOptions: WorkloadPlacementOptions): Answer {
  const r = placeWorkload(w, snap.tasList, { ...tasOptions, simulateEmpty: true });
  return r.ok ? { ok: true, reason: '' } : { ok: false, reason: r.reason };
}

/**
 * Writes the placement into the PodSet admissions. A gang placement may hold fewer pods
 * than asked (its minimum plus what fits): counts and usage follow the placement.
 */
export function applyPlacement(
  podSets: PodSetAdmission[],
  placed: readonly { name: string; count: number; flavor: string; assignment: Assignment }[],
  coversPods: boolean,
): void {
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

/** The usage per flavor-resource, keyed by the snapshot's interned keys (the quota maps' own strings). */
function usageOf(podSets: readonly PodSetAdmission[], keys: FrKeys): Map<FR, number> {
  const out = new Map<FR, number>();
  for (const ps of podSets) {
    for (const r in ps.usage) {
      const f = ps.flavors[r];
      if (f === undefined) continue;
      const k = keys.of(f, r);
      out.set(k, (out.get(k) ?? 0) + ps.usage[r]!);
    }
  }
  return out;
}

/** The PodSet admissions in the Workload's order (the array itself when there is nothing to order: it is not used after). */
function order(podSets: PodSetAdmission[], spec: readonly PodSet[]): PodSetAdmission[] {
  if (podSets.length < 2) return podSets;
  const idx = new Map(spec.map((p, i) => [p.name, i]));
  return [...podSets].sort((a, b) => idx.get(a.name)! - idx.get(b.name)!);
}

interface ResultParts {
  keys: FrKeys;
  podSets: PodSetAdmission[];
  spec: readonly PodSet[];
  borrowing: number;
  preemptQuota: ReadonlySet<FR>;
}

function result(p: ResultParts, mode: Mode, reason: PendingReason, message: string): FlavorAssignment {
  return {
    mode,
    podSets: order(p.podSets, p.spec),
    usage: usageOf(p.podSets, p.keys),
    borrowing: p.borrowing,
    preemptQuota: p.preemptQuota,
    preemptTopology: false,
    reason,
    message,
  };
}

/** A PodSet group of a Workload as assignFlavors reads it (workers first, then the leader). */
interface GroupShape {
  workers: PodSet;
  members: PodSetInfo[];
  /** Per member: resource, per-pod amount, ... for every positive per-pod request, in the PodSet's order. */
  requested: (string | number)[][];
  /** hasTopologyConstraint of the workers' topology request. */
  topology: boolean;
  /** The group's requested resources, sorted; and the same with `pods`. */
  resources: string[];
  resourcesWithPods: string[];
  /**
   * When the workers have no node selector, required node affinity or tolerations,
   * resourceFlavorMismatch reads nothing else of them but the level they ask for (their
   * required or preferred level, '' for none): that level, the key of the snapshot's
   * answers per flavor (mismatchOf). Undefined otherwise.
   */
  plainKey: string | undefined;
  /** resourceFlavorMismatch of the other workers per flavor (flavors are not changed in place), for the levels it was computed with. */
  mismatch?: Map<ResourceFlavor, { levels: readonly string[] | undefined; result: string | undefined }>;
  /** The request of a lone member at a count (groupRequest), without and with `pods`: read only. */
  request?: { count: number; request: ResourceAmounts };
  requestWithPods?: { count: number; request: ResourceAmounts };
}

/** How assignFlavors reads a Workload's PodSets; kept on its WorkloadInfo (`shape`), a function of the info alone. */
export interface WorkloadShape {
  infos: readonly PodSetInfo[];
  /** The Workload's PodSets (their order orders the result). */
  spec: readonly PodSet[];
  groups: GroupShape[];
}

/**
 * The groups of a Workload info: a function of its PodSets and the Workload's, which are
 * never changed in place (a changed Workload gets a new info, with new PodSet infos). Kept
 * on the info, which lives as long as the Workload waits, whatever snapshot it is assigned
 * in: a head is read once, not once per snapshot (the flavor mismatches it remembers are
 * keyed by the ResourceFlavor objects and topology levels, which are not changed in place
 * either).
 */
function shapeOf(info: WorkloadInfo): WorkloadShape {
  const hit = info.shape;
  if (hit && hit.infos === info.podSets) return hit;
  const spec = info.workload.spec.podSets;
  // Every head is shaped once per snapshot: plain loops, no Map for a lone PodSet.
  const lone = spec.length === 1 && spec[0]!.topologyRequest?.podSetGroupName === undefined;
  const byName = lone ? undefined : new Map(info.podSets.map((p) => [p.name, p]));
  const groups: GroupShape[] = [];
  for (const group of lone ? [{ workers: spec[0]! }] : podSetGroups(spec)) {
    const members: PodSetInfo[] = [];
    for (const ps of group.leader ? [group.workers, group.leader] : [group.workers]) {
      const m = byName ? byName.get(ps.name) : info.podSets.find((p) => p.name === ps.name);
      if (m) members.push(m);
    }
    const requested: (string | number)[][] = [];
    const keys = new Set<string>();
    for (const m of members) {
      const pairs: (string | number)[] = [];
      for (const r in m.perPod) {
        const v = m.perPod[r]!;
        if (v > 0) {
          pairs.push(r, v);
          keys.add(r);
        }
      }
      requested.push(pairs);
    }
    const resources = [...keys].sort();
    const resourcesWithPods = keys.has('pods') ? resources : [...keys, 'pods'].sort();
    groups.push({
      workers: group.workers,
      members,
      requested,
      topology: hasTopologyConstraint(group.workers.topologyRequest),
      resources,
      resourcesWithPods,
      plainKey: plainKeyOf(group.workers),
    });
  }
  const shape = { infos: info.podSets, spec, groups };
  info.shape = shape;
  return shape;
}

/** The resource groups of `cq` covering `resources` (all covered), ascending. */
function groupIndices(cq: ClusterQueueInfo, resources: string[]): number[] {
  if (resources.length === 1) return [cq.groupOf.get(resources[0]!)!];
  return [...new Set(resources.map((r) => cq.groupOf.get(r)!))].sort((a, b) => a - b);
}

/** The level a plain PodSet asks for ('' for none): see GroupShape.plainKey. */
function plainKeyOf(ps: PodSet): string | undefined {
  const spec = ps.template.spec;
  if (spec.nodeSelector !== undefined) for (const _ in spec.nodeSelector) return undefined;
  if ((spec.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms?.length ?? 0) > 0) return undefined;
  if ((spec.tolerations?.length ?? 0) > 0) return undefined;
  const r = ps.topologyRequest;
  // Both levels, or a level named '' (the key of none): read per group.
  if ((r?.required !== undefined && r.preferred !== undefined) || r?.required === '' || r?.preferred === '') return undefined;
  return r?.required ?? r?.preferred ?? '';
}

/** Levels remembered per flavor before they are forgotten (bounded memory). */
const MAX_MISMATCH_KEYS = 4096;

function flavorMismatch(
  snap: AdmissionSnapshot,
  group: GroupShape,
  flavor: ResourceFlavor,
  levels: readonly string[] | undefined,
): string | undefined {
  const key = group.plainKey;
  if (key !== undefined) {
    // The same answer for every plain PodSet asking for this level: one per flavor.
    const memo = memoOf(snap).mismatch;
    let byFlavor = memo.get(flavor);
    if (!byFlavor || byFlavor.levels !== levels) memo.set(flavor, (byFlavor = { levels, byKey: new Map() }));
    const hit = byFlavor.byKey.get(key);
    if (hit !== undefined) return hit.result;
    const result = resourceFlavorMismatch(flavor, group.workers, levels);
    if (byFlavor.byKey.size >= MAX_MISMATCH_KEYS) byFlavor.byKey.clear();
    byFlavor.byKey.set(key, { result });
    return result;
  }
  const hit = group.mismatch?.get(flavor);
  if (hit && hit.levels === levels) return hit.result;
  const result = resourceFlavorMismatch(flavor, group.workers, levels);
  (group.mismatch ??= new Map()).set(flavor, { levels, result });
  return result;
}

/** Amounts remembered per resource before they are forgotten (bounded memory). */
const MAX_FORMATTED = 4096;

/** formatResourceAmount, remembered (messages repeat the same few amounts every cycle). */
function formatAmount(snap: AdmissionSnapshot, r: string, n: number): string {
  const formatted = memoOf(snap).formatted;
  let byAmount = formatted.get(r);
  if (!byAmount) formatted.set(r, (byAmount = new Map()));
  let s = byAmount.get(n);
  if (s === undefined) {
    if (byAmount.size >= MAX_FORMATTED) byAmount.clear();
    byAmount.set(n, (s = formatResourceAmount(r, n)));
  }
  return s;
}

function noFit(t: FlavorTry, reason: PendingReason, message: string): FlavorTry {
  return { ...t, mode: 'NoFit', reasons: [{ reason, message }] };
}

function tryFlavor(
  snap: AdmissionSnapshot,
  cq: ClusterQueueInfo,
  name: string,
  covered: readonly string[],
  request: ResourceAmounts,
  assigned: ReadonlyMap<FR, number> | undefined,
  group: GroupShape,
  tas: boolean,
): FlavorTry {
  const ps = group.workers;
  const t: FlavorTry = { flavor: name, mode: 'Fit', borrowing: 0, preempt: NONE, reasons: NONE };
  const flavor: ResourceFlavor | undefined = snap.flavors.get(name);
  if (!flavor) return noFit(t, PendingReason.NoMatchingFlavor, `flavor ${name} not found`);
  const isTas = flavor.spec.topologyName !== undefined;
  if (tas && !isTas) return noFit(t, PendingReason.NoMatchingFlavor, `Flavor "${name}" does not support TopologyAwareScheduling`);
  if (!tas && isTas) return noFit(t, PendingReason.NoMatchingFlavor, `Flavor "${name}" supports only TopologyAwareScheduling`);
  if (isTas && !snap.tas.has(name)) return noFit(t, PendingReason.NoMatchingFlavor, `Flavor "${name}" information missing in TAS cache`);
  const mismatch = flavorMismatch(snap, group, flavor, isTas ? snap.tas.get(name)!.snapshot.levels : undefined);
  if (mismatch) return noFit(t, PendingReason.NoMatchingFlavor, mismatch);
  const quota = snap.quota;
  const q = cq.quotaIndex;
  for (const r of covered) {
    const req = request[r];
    if (req === undefined) continue;
    const f = snap.frKeys.of(name, r);
    const fi = quota.frIndex(f);
    const before = assigned?.get(f) ?? 0;
    const val = before + req;
    const potential = quota.potentialAvailableAt(q, fi);
    if (val > potential) {
      return noFit(
        t,
        PendingReason.ExceedsMaxQuota,
        `insufficient quota for ${r} in flavor ${name}, previously considered podsets requests (${formatAmount(snap, r, before)}) + current podset request (${formatAmount(snap, r, req)}) > maximum capacity (${formatAmount(snap, r, potential)})`,
      );
    }
    const available = quota.availableAt(q, fi);
    if (val <= available) {
      t.borrowing = Math.max(t.borrowing, quota.borrowingLevelAt(q, fi, val));
      continue;
    }
    const message = `insufficient unused quota for ${r} in flavor ${name}, ${formatAmount(snap, r, val - available)} more needed`;
    if (!preemptionMayHelp(snap, cq, f, val)) return noFit(t, PendingReason.WaitingForQuota, message);
    t.mode = 'Preempt';
    t.preempt = [...t.preempt, f];
    t.reasons = [
      ...t.reasons,
      { reason: PendingReason.WaitingForQuota, message: `couldn't assign flavors to pod set ${ps.name}: ${message}` },
    ];
    // Borrowing after preemption: above nominal means borrowing.
    if (val > quota.nominalAt(q, fi)) t.borrowing = Math.max(t.borrowing, 1);
  }
  return t;
}
