// Preemption (kueue-core.md §1b "Preemption basics", §1a Preempted reasons): which admitted
// Workloads to evict so that a pending one fits. The search simulates on the snapshot it is
// given (removeAdmitted / addAdmitted) and leaves it as it found it (step 5).
//
// 1. Candidates: the preemptor's ClusterQueue per `withinClusterQueue`; the other
//    ClusterQueues of its cohort tree that borrow a needed flavor-resource, per
//    `reclaimWithinCohort`. Only Workloads holding a needed flavor-resource (or, when
//    topology room is short, pods on the preemptor's TAS flavor) count. A gang group (gang
//    groups sharing a gang id, joined) is one unit: a candidate only when every member is.
// 2. Order (the peer's CandidatesOrdering): Workloads already being evicted first (rule 0:
//    Evicted=True, still holding their reservation while they stop, so taking them again
//    costs no new eviction), then other ClusterQueues, lower priority, most recently
//    reserved, key.
// 3. Attempts, as the peer's getTargets: only own candidates -> may borrow;
//    borrowWithinCohort -> may borrow while reclaiming below its priority threshold;
//    under nominal -> reclaim without borrowing; last, own candidates only -> may borrow.
// 4. One attempt over an ordered list: skip units of ClusterQueues that have stopped
//    borrowing; binary-search the shortest prefix whose removal lets the preemptor fit
//    (each prefix tested once; a domain's estimate is probed first, and when it fits the
//    whole list is never removed to learn that a solution exists); fill back in reverse
//    order (in growing chunks while they keep fitting).
//    For a topology request at a level, each domain's units go first (domains ordered by
//    an estimate of the victims they need), the best domain solution wins, and the global
//    order is the fallback.
// 5. Restore the snapshot: the same reservations and usage (not the insertion order of
//    `snap.admitted`, which nothing reads).

import type { ResourceAmounts } from '../api/resources.ts';
import { parseTime } from '../api/time.ts';
import { compareStrings } from '../api/values.ts';
import { isTrue, WorkloadCondition } from './conditions.ts';
import type { TasFlavor } from '../placement/workload-placement.ts';
import type { FlavorAssignment } from './flavor-assigner.ts';
import type { FR } from './quota.ts';
import type { AdmissionSnapshot, AdmittedWorkload, ClusterQueueInfo } from './snapshot.ts';
import type { WorkloadInfo } from './workload-info.ts';

/** Reasons of the `Preempted` condition (kueue-core §1a; `InCohortFairSharing` needs fair sharing). */
export const PreemptedReason = {
  InClusterQueue: 'InClusterQueue',
  InCohortReclamation: 'InCohortReclamation',
  InCohortReclaimWhileBorrowing: 'InCohortReclaimWhileBorrowing',
} as const;
export type PreemptedReason = (typeof PreemptedReason)[keyof typeof PreemptedReason];

/** The peer's words for each reason (its HumanReadablePreemptionReasons). */
const REASON_WORDS: Record<PreemptedReason, string> = {
  InClusterQueue: 'prioritization in the ClusterQueue',
  InCohortReclamation: 'reclamation within the cohort',
  InCohortReclaimWhileBorrowing: 'reclamation within the cohort while borrowing',
};

/** The message of a preempted Workload's `Preempted` condition. */
export function preemptionMessage(preemptorUid: string | undefined, reason: PreemptedReason): string {
  return `Preempted to accommodate a workload (UID: ${preemptorUid || 'UNKNOWN'}) due to ${REASON_WORDS[reason]}`;
}

/** The preemptor's UID (or, for `plan`'s Workloads without one, its key) in a preemptionMessage; undefined for another text. */
export function preemptorOfMessage(message: string): string | undefined {
  const m = /^Preempted to accommodate a workload \(UID: ([^,)]+)[,)]/.exec(message);
  return m && m[1] !== 'UNKNOWN' ? m[1] : undefined;
}

export interface PreemptionTarget {
  key: string;
  clusterQueue: string;
  reason: PreemptedReason;
  message: string;
}

export interface PreemptionRequest {
  /** The preemptor. */
  info: WorkloadInfo;
  /** Its ClusterQueue. */
  cq: ClusterQueueInfo;
  /** Mode `Preempt`: which flavor-resources need freeing (preemptQuota), or TAS room (preemptTopology). */
  assignment: FlavorAssignment;
  /** Whether the preemptor fits on the snapshot as it is at the moment of the call (quota and topology). Deterministic. */
  fits: () => boolean;
  /** Keys that must not be chosen (e.g. already targeted by another preemptor this cycle). */
  exclude?: ReadonlySet<string>;
  /** Filled by the search: how many candidate units it found (0 when it looked at none). */
  found?: { candidates: number };
}

const NO_FLAVORS: readonly string[] = [];

/** At most this many domain-first orderings are tried per attempt (each costs a binary search and a fill-back). */
const MAX_DOMAIN_TRIES = 8;

/** Admitted Workloads preempted together: one Workload, or every Workload of a gang group (gangUnits). */
interface Unit {
  /** Sorted by key. */
  members: AdmittedWorkload[];
  /** Every member is in the preemptor's ClusterQueue. */
  own: boolean;
  /** Every member is already being evicted (Evicted=True): ordered first (the peer's rule 0). */
  evicted: boolean;
  /** Highest member priority. */
  priority: number;
  /** Highest priority among members of other ClusterQueues (-Infinity: none). */
  otherPriority: number;
  /** Latest reservation. */
  reservedAt: number;
  /** Smallest member key. */
  key: string;
  /** ClusterQueues of members outside the preemptor's: each must still borrow when the unit is taken. */
  others: string[];
  /** Topology mode: domains at the requested level holding its pods on the TAS flavor. */
  domains: number[];
  /** Topology mode: the leaves where removing it frees room, each once... */
  freedLeaves: number[];
  /** ...and what it frees there of each of Topo.names, `names.length` amounts per leaf. */
  freedAmounts: number[];
}

interface Topo {
  tf: TasFlavor;
  level: number;
  /** Per-pod request of the preemptor's TAS PodSets (`pods: 1` included), and their pod count. */
  perPod: ResourceAmounts;
  need: number;
  /** The resources of perPod with a positive amount, in its key order, and those amounts. */
  names: string[];
  per: number[];
  /** Per domain: its ancestor at the level (-1: none; -2: not computed yet). */
  ancestor: Int32Array;
  /** Domain at the level -> its leaves (built on first use). */
  leaves?: Map<number, number[]>;
  /** Per leaf of `leaves`: its position in its domain's list (-1: not a leaf of any). */
  position?: Int32Array;
}

interface Solution {
  units: Unit[];
  threshold: number | undefined;
  /** Targets (Workloads). */
  size: number;
  maxPriority: number;
}

/** Units taken out of the snapshot, and how to put them back. */
class Removals {
  private readonly removed = new Set<Unit>();
  constructor(private readonly snap: AdmissionSnapshot) {}

  remove(u: Unit): void {
    if (this.removed.has(u)) return;
    this.removed.add(u);
    for (const m of u.members) this.snap.removeAdmitted(m.key);
  }

  add(u: Unit): void {
    if (!this.removed.delete(u)) return;
    for (const m of u.members) this.snap.addAdmitted(m);
  }

  restore(): void {
    for (const u of [...this.removed].reverse()) this.add(u);
  }
}

interface Ctx {
  snap: AdmissionSnapshot;
  cq: string;
  fits: () => boolean;
  /** Flavor-resources needing preemption: other ClusterQueues must borrow one to be reclaimed from. */
  needed: FR[];
  /** The preemptor's quota usage (the "without borrowing" check). */
  usage: ReadonlyMap<FR, number>;
  topo?: Topo;
  removals: Removals;
}

/**
 * The admitted Workloads to preempt so that the preemptor fits, with the reason and message
 * of each; [] when preemption would not help (or is not needed: it fits already). The
 * snapshot is used for simulation and is exactly as before when this returns.
 */
export function findPreemptionTargets(snap: AdmissionSnapshot, req: PreemptionRequest): PreemptionTarget[] {
  const { assignment: a, cq } = req;
  if (req.found) req.found.candidates = 0;
  if (a.mode === 'NoFit' || (a.preemptQuota.size === 0 && !a.preemptTopology)) return [];
  if (!snap.quota.hasClusterQueue(cq.name)) return [];
  // Most searches end with no candidate (a head nominated again and again while its
  // ClusterQueue holds nothing it may take): nothing is built before the candidates are.
  const tasFlavors = a.preemptTopology ? tasFlavorsOf(a) : NO_FLAVORS;
  const needed = neededOf(a, tasFlavors);

  // Without borrowWithinCohort, a ClusterQueue at or above its nominal quota only ever
  // takes its own Workloads (strategy): the cohort's are not collected then.
  const bwc = cq.preemption.borrowWithinCohort;
  const ownOnly = !(bwc !== undefined && bwc.policy === 'LowerPriority') && !underNominalOf(snap, cq.name, needed);
  const units = candidateUnits(snap, req, needed, tasFlavors, ownOnly);
  if (req.found) req.found.candidates = units.length;
  if (units.length === 0 || req.fits()) return [];
  const ctx: Ctx = { snap, cq: cq.name, fits: req.fits, needed, usage: a.usage, removals: new Removals(snap) };
  // Where the units sit on the topology, once there are any.
  ctx.topo = topologyOf(snap, req);
  if (ctx.topo) for (const u of units) locate(ctx.topo, u);
  units.sort(byOrder);

  // The reservations come back, not their insertion order in `snap.admitted`: nothing
  // reads that order (the cycle's own holds and fitsAfterTargets move keys too), and
  // rebuilding the map cost a copy of every reservation of the cluster per search.
  let sol: Solution | undefined;
  try {
    sol = strategy(ctx, req, units);
  } finally {
    ctx.removals.restore();
  }
  if (!sol) return [];
  // Workloads built by `plan` have no uid: name the preemptor by its key then.
  const uid = req.info.workload.metadata.uid ?? req.info.key;
  return sol.units.flatMap((u) =>
    u.members.map((m) => {
      const reason = reasonOf(m, cq.name, sol.threshold);
      return { key: m.key, clusterQueue: m.clusterQueue, reason, message: preemptionMessage(uid, reason) };
    }),
  );
}

/** The TAS flavors of the preemptor's PodSets, each once. */
function tasFlavorsOf(a: FlavorAssignment): readonly string[] {
  const out: string[] = [];
  for (const p of a.podSets) if (p.tasFlavor !== undefined && !out.includes(p.tasFlavor)) out.push(p.tasFlavor);
  return out;
}

/** The flavor-resources needing preemption, sorted: the quota's, and with topology room short every one of the TAS flavors'. */
function neededOf(a: FlavorAssignment, tasFlavors: readonly string[]): FR[] {
  const out: FR[] = [...a.preemptQuota];
  if (tasFlavors.length > 0) {
    for (const f of a.usage.keys()) {
      if (out.includes(f)) continue;
      // The flavor is the part before the first '/'.
      const i = f.indexOf('/');
      for (const t of tasFlavors) {
        if (i === t.length && f.startsWith(t)) {
          out.push(f);
          break;
        }
      }
    }
  }
  return out.sort();
}

function reasonOf(m: AdmittedWorkload, cq: string, threshold: number | undefined): PreemptedReason {
  if (m.clusterQueue === cq) return PreemptedReason.InClusterQueue;
  return threshold !== undefined && m.priority < threshold
    ? PreemptedReason.InCohortReclaimWhileBorrowing
    : PreemptedReason.InCohortReclamation;
}

// ---- candidates ------------------------------------------------------------------------

/** What candidateUnits' checks read, built once per search (module-level checks: no closures per call). */
interface CandidateCtx {
  snap: AdmissionSnapshot;
  req: PreemptionRequest;
  needed: readonly FR[];
  cohort: ReadonlySet<string>;
  /** Made on first use. */
  borrowingMemo: Map<string, boolean> | undefined;
  quotaFRs: ReadonlySet<FR>;
  tasFlavors: readonly string[];
}

function borrowingNeeded(c: CandidateCtx, q: string): boolean {
  let b = c.borrowingMemo?.get(q);
  if (b === undefined) {
    b = false;
    for (const f of c.needed) {
      if (c.snap.quota.borrowing(q, f) > 0) {
        b = true;
        break;
      }
    }
    (c.borrowingMemo ??= new Map()).set(q, b);
  }
  return b;
}

function eligible(c: CandidateCtx, w: AdmittedWorkload): boolean {
  const { req, snap } = c;
  const { cq, info } = req;
  const policy = cq.preemption;
  if (req.exclude?.has(w.key)) return false;
  if (w.clusterQueue === cq.name) {
    if (policy.withinClusterQueue === 'LowerPriority') return w.priority < info.priority;
    if (policy.withinClusterQueue === 'LowerOrNewerEqualPriority') {
      if (w.priority < info.priority) return true;
      if (w.priority !== info.priority) return false;
      const t = parseTime(w.workload.metadata.creationTimestamp);
      return t !== undefined && info.timestamp < t;
    }
    return false;
  }
  if (policy.reclaimWithinCohort === 'Never' || !c.cohort.has(w.clusterQueue) || !snap.quota.hasClusterQueue(w.clusterQueue)) return false;
  if (!borrowingNeeded(c, w.clusterQueue)) return false;
  return policy.reclaimWithinCohort === 'Any' || w.priority < info.priority;
}

/**
 * Whether any Workload of ClusterQueue `q` (the preemptor's, or one of its cohort) could be
 * eligible: the part of eligible() that depends on `q` alone. False means eligible() is
 * false for each of its Workloads.
 */
function clusterQueueMayGive(c: CandidateCtx, q: string): boolean {
  const { req, snap } = c;
  const policy = req.cq.preemption;
  if (q === req.cq.name) return policy.withinClusterQueue === 'LowerPriority' || policy.withinClusterQueue === 'LowerOrNewerEqualPriority';
  return policy.reclaimWithinCohort !== 'Never' && c.cohort.has(q) && snap.quota.hasClusterQueue(q) && borrowingNeeded(c, q);
}

function helps(c: CandidateCtx, w: AdmittedWorkload): boolean {
  for (const f of c.quotaFRs) if ((w.usage.get(f) ?? 0) > 0) return true;
  if (c.tasFlavors.length === 0) return false;
  for (const p of w.podSets) if (p.assignment !== undefined && p.tasFlavor !== undefined && c.tasFlavors.includes(p.tasFlavor)) return true;
  return false;
}

/**
 * `ownOnly`: the caller will only choose among the preemptor's own Workloads (see
 * findPreemptionTargets), so the cohort's lone Workloads are not looked at.
 */
function candidateUnits(
  snap: AdmissionSnapshot,
  req: PreemptionRequest,
  needed: readonly FR[],
  tasFlavors: readonly string[],
  ownOnly: boolean,
): Unit[] {
  const { cq } = req;
  const policy = cq.preemption;
  const cohort: ReadonlySet<string> = cq.cohort !== undefined ? snap.quota.cohortMemberSet(cq.name) : new Set([cq.name]);
  const c: CandidateCtx = {
    snap,
    req,
    needed,
    cohort,
    borrowingMemo: undefined,
    quotaFRs: req.assignment.preemptQuota,
    tasFlavors,
  };

  const out: Unit[] = [];
  // Only Workloads of the preemptor's ClusterQueue and (reclaiming) of its cohort can be
  // eligible: the others are not even looked at.
  lone(c, cq.name, out);
  if (!ownOnly && policy.reclaimWithinCohort !== 'Never') for (const q of cohort) if (q !== cq.name) lone(c, q, out);
  for (const members of gangUnits(snap)) {
    if (!members.every((w) => eligible(c, w)) || !members.some((w) => helps(c, w))) continue;
    members.sort((x, y) => compareStrings(x.key, y.key));
    const others = [...new Set(members.filter((m) => m.clusterQueue !== cq.name).map((m) => m.clusterQueue))].sort();
    const unit: Unit = {
      members,
      own: others.length === 0,
      evicted: members.every((m) => isTrue(m.workload, WorkloadCondition.Evicted)),
      priority: Math.max(...members.map((m) => m.priority)),
      otherPriority: Math.max(...members.filter((m) => m.clusterQueue !== cq.name).map((m) => m.priority)),
      reservedAt: Math.max(...members.map((m) => m.reservedAt)),
      key: members[0]!.key,
      others,
      domains: [],
      freedLeaves: [],
      freedAmounts: [],
    };
    out.push(unit);
  }
  return out;
}

/**
 * The lone Workloads (the common case) of ClusterQueue `q` that are candidates, as units,
 * checked before anything is built for them. What eligible() asks of the ClusterQueue
 * alone is asked once: one that can give nothing (the policy protects it, or it does not
 * borrow) is not iterated.
 */
function lone(c: CandidateCtx, q: string, out: Unit[]): void {
  if (!clusterQueueMayGive(c, q)) return;
  const own = c.req.cq.name;
  for (const w of c.snap.admittedIn(q)) {
    if (w.gangGroup !== undefined || !eligible(c, w) || !helps(c, w)) continue;
    const other = w.clusterQueue !== own;
    out.push({
      members: [w],
      own: !other,
      evicted: isTrue(w.workload, WorkloadCondition.Evicted),
      priority: w.priority,
      otherPriority: other ? w.priority : -Infinity,
      reservedAt: w.reservedAt,
      key: w.key,
      others: other ? [w.clusterQueue] : [],
      domains: [],
      freedLeaves: [],
      freedAmounts: [],
    });
  }
}

/**
 * Admitted gang Workloads that go together: every Workload whose gang group (`gangGroup`,
 * gang ids joined by `,`) shares a gang id with another's. Groups declared one-sidedly
 * (A lists B, B lists only itself) are joined too: A was admitted only with B, so taking B
 * must take A. (Lone Workloads are units by themselves; callers sort the units.)
 */
function gangUnits(snap: AdmissionSnapshot): AdmittedWorkload[][] {
  const out: AdmittedWorkload[][] = [];
  const gangs: AdmittedWorkload[] = [];
  for (const w of snap.admittedInGangGroups()) gangs.push(w);
  if (gangs.length === 0) return out;
  const parent = new Map<string, string>();
  const find = (x: string): string => {
    let r = x;
    while (parent.get(r) !== r) r = parent.get(r)!;
    for (let y = x; y !== r;) {
      const next = parent.get(y)!;
      parent.set(y, r);
      y = next;
    }
    return r;
  };
  for (const w of gangs) {
    const ids = w.gangGroup!.split(',');
    for (const id of ids) if (!parent.has(id)) parent.set(id, id);
    const root = find(ids[0]!);
    for (const id of ids.slice(1)) {
      const r = find(id);
      if (r !== root) parent.set(r, root);
    }
  }
  const groups = new Map<string, AdmittedWorkload[]>();
  for (const w of gangs) {
    const g = find(w.gangGroup!.split(',')[0]!);
    let list = groups.get(g);
    if (!list) groups.set(g, (list = []));
    list.push(w);
  }
  for (const list of groups.values()) out.push(list);
  return out;
}

/** Already being evicted first, then other ClusterQueues, lower priority, most recently reserved, key. */
function byOrder(a: Unit, b: Unit): number {
  return (
    Number(b.evicted) - Number(a.evicted) ||
    Number(a.own) - Number(b.own) ||
    a.priority - b.priority ||
    b.reservedAt - a.reservedAt ||
    compareStrings(a.key, b.key)
  );
}

// ---- attempts ----------------------------------------------------------------------------

/** The peer's getTargets: which candidates, and whether the preemptor may borrow. */
function strategy(ctx: Ctx, req: PreemptionRequest, units: Unit[]): Solution | undefined {
  const own = units.filter((u) => u.own);
  if (own.length === units.length) return minimal(ctx, units, true, undefined);
  const under = underNominal(ctx);
  const bwc = req.cq.preemption.borrowWithinCohort;
  if (bwc !== undefined && bwc.policy === 'LowerPriority') {
    const t = bwc.maxPriorityThreshold;
    const threshold = t !== undefined && t < req.info.priority ? t + 1 : req.info.priority;
    // Borrowing already: other ClusterQueues' Workloads only below the threshold.
    const list = under ? units : units.filter((u) => u.otherPriority < threshold);
    return minimal(ctx, list, true, threshold);
  }
  if (under) {
    const s = minimal(ctx, units, false, undefined);
    if (s) return s;
  }
  return minimal(ctx, own, true, undefined);
}

/** The preemptor's ClusterQueue uses less than its nominal quota of every needed flavor-resource. */
function underNominal(ctx: Ctx): boolean {
  return underNominalOf(ctx.snap, ctx.cq, ctx.needed);
}

function underNominalOf(snap: AdmissionSnapshot, cq: string, needed: readonly FR[]): boolean {
  const q = snap.quota;
  for (const f of needed) if (!(q.usage(cq, f) < q.nominal(cq, f))) return false;
  return true;
}

/** Domain-first orderings when the request has a level, else (or when none works) the global order. */
function minimal(ctx: Ctx, list: Unit[], allowBorrowing: boolean, threshold: number | undefined): Solution | undefined {
  if (list.length === 0) return undefined;
  if (ctx.topo) {
    const best = domainFirst(ctx, ctx.topo, list, allowBorrowing, threshold);
    if (best) return best;
  }
  return solve(ctx, list, allowBorrowing, threshold, undefined);
}

const better = (a: { size: number; maxPriority: number }, b: { size: number; maxPriority: number }): boolean =>
  a.size < b.size || (a.size === b.size && a.maxPriority < b.maxPriority);

function domainFirst(ctx: Ctx, topo: Topo, list: Unit[], allowBorrowing: boolean, threshold: number | undefined): Solution | undefined {
  const byDomain = new Map<number, Unit[]>();
  for (const u of list) {
    for (const d of u.domains) {
      let l = byDomain.get(d);
      if (!l) byDomain.set(d, (l = []));
      l.push(u);
    }
  }
  const s = topo.tf.snapshot;
  const idx = resourceIndices(topo);
  const estimates = [...byDomain].map(([d, units]) => ({ d, units, ...estimate(topo, idx, d, units) }));
  estimates.sort((a, b) => a.size - b.size || a.maxPriority - b.maxPriority || s.rank(a.d) - s.rank(b.d));
  let best: Solution | undefined;
  let tries = 0;
  for (const e of estimates) {
    if (!Number.isFinite(e.size) || tries++ === MAX_DOMAIN_TRIES) break;
    if (best && !better(e, best)) break;
    const first = new Set(e.units);
    const ordered = [...e.units, ...list.filter((u) => !first.has(u))];
    const sol = solve(ctx, ordered, allowBorrowing, threshold, e.count);
    if (sol && (!best || better(sol, best))) best = sol;
  }
  return best;
}

/** The snapshot's indices of Topo.names, read when the estimates are made (undefined: a resource no node has). */
function resourceIndices(topo: Topo): (number | undefined)[] {
  const s = topo.tf.snapshot;
  return topo.names.map((r) => s.resources.get(r));
}

const NO_ESTIMATE = { count: Infinity, size: Infinity, maxPriority: Infinity };

/**
 * How many of a domain's units (in order) must go for the preemptor's pods to fit in it,
 * counting pods per leaf from free capacity: an estimate (it ignores node filters, slices
 * and leaders) that only orders the domains; fits() decides.
 */
function estimate(
  topo: Topo,
  idx: readonly (number | undefined)[],
  d: number,
  units: Unit[],
): { count: number; size: number; maxPriority: number } {
  for (const i of idx) if (i === undefined) return NO_ESTIMATE;
  const s = topo.tf.snapshot;
  const R = idx.length;
  const per = topo.per;
  const leaves = leavesOf(topo, d);
  const position = topo.position!;
  const { free: freeArr, R: SR } = s.capacityArrays();
  // Free capacity of each leaf of the domain, R amounts per leaf in the order of its list.
  const free = new Float64Array(leaves.length * R);
  let total = 0;
  for (let p = 0; p < leaves.length; p++) {
    const base = leaves[p]! * SR;
    for (let i = 0; i < R; i++) free[p * R + i] = freeArr[base + idx[i]!]!;
    total += podsFitting(free, p * R, per);
  }
  let size = 0;
  let maxPriority = -Infinity;
  if (total >= topo.need) return { count: 0, size, maxPriority };
  for (let i = 0; i < units.length; i++) {
    const u = units[i]!;
    size += u.members.length;
    maxPriority = Math.max(maxPriority, u.priority);
    const fl = u.freedLeaves;
    const fa = u.freedAmounts;
    for (let e = 0; e < fl.length; e++) {
      const leaf = fl[e]!;
      const p = position[leaf]!;
      if (p < 0 || topo.ancestor[leaf] !== d) continue;
      const b = p * R;
      const before = podsFitting(free, b, per);
      for (let j = 0; j < R; j++) free[b + j]! += fa[e * R + j]!;
      total += podsFitting(free, b, per) - before;
    }
    if (total >= topo.need) return { count: i + 1, size, maxPriority };
  }
  return NO_ESTIMATE;
}

/** Pods of `per` that fit in the free amounts at `free[b ..]` (one per resource of `per`). */
function podsFitting(free: Float64Array, b: number, per: readonly number[]): number {
  let n = Infinity;
  for (let i = 0; i < per.length; i++) n = Math.min(n, Math.floor(free[b + i]! / per[i]!));
  return Math.max(0, n);
}

// ---- one attempt -----------------------------------------------------------------------------

/**
 * The shortest prefix of `ordered` whose removal lets the preemptor fit, filled back.
 * `hint`: a guess of that prefix length (domain estimates), probed first.
 */
function solve(
  ctx: Ctx,
  ordered: Unit[],
  allowBorrowing: boolean,
  threshold: number | undefined,
  hint: number | undefined,
): Solution | undefined {
  const eff = keepBorrowing(ctx, ordered);
  const n = eff.length;
  if (n === 0) return undefined;
  // Prefixes from this length on hold a Workload above the threshold: no borrowing then.
  let noBorrowFrom = Infinity;
  if (!allowBorrowing) noBorrowFrom = 0;
  else if (threshold !== undefined) {
    const i = eff.findIndex((u) => u.otherPriority >= threshold);
    if (i >= 0) noBorrowFrom = i + 1;
  }
  const { removals } = ctx;
  let cur = 0;
  const moveTo = (k: number): void => {
    while (cur < k) removals.remove(eff[cur++]!);
    while (cur > k) removals.add(eff[--cur]!);
  };
  // Each prefix length is tested at most once (the answer is a function of the prefix).
  const tested = new Map<number, boolean>();
  const test = (k: number): boolean => {
    let v = tested.get(k);
    if (v === undefined) {
      moveTo(k);
      v = ctx.fits() && (k < noBorrowFrom || withinNominal(ctx));
      tested.set(k, v);
    }
    return v;
  };
  // A fitting guess below `hi` shows the range holds a solution without removing every
  // candidate up to `hi` first (at 7,000 candidates, that removal and its undoing cost
  // more than the whole search otherwise).
  const hinted = (lo: number, hi: number): boolean => hint !== undefined && Math.max(hint, lo) < hi && test(Math.max(hint, lo));

  // The predicate is monotone on [1, noBorrowFrom) and on [noBorrowFrom, n] separately.
  let k: number | undefined;
  const end1 = Math.min(noBorrowFrom - 1, n);
  if (end1 >= 1 && (hinted(1, end1) || test(end1))) k = firstTrue(1, end1, test, hint);
  else {
    const lo = Math.max(noBorrowFrom, 1);
    if (lo <= n && (hinted(lo, n) || test(n))) k = firstTrue(lo, n, test, hint);
  }
  if (k === undefined) {
    moveTo(0);
    return undefined;
  }
  moveTo(k);

  // Fill back, last removed first (the last is needed: without it the prefix k-1 did not
  // fit). A chunk that fits once added back can go whole, so chunks double while they fit.
  const mayBorrow = k < noBorrowFrom;
  const ok = (): boolean => ctx.fits() && (mayBorrow || withinNominal(ctx));
  const kept = new Array<boolean>(k).fill(true);
  let chunk = 1;
  for (let i = k - 2; i >= 0;) {
    const c = Math.min(chunk, i + 1);
    for (let j = i; j > i - c; j--) removals.add(eff[j]!);
    if (ok()) {
      for (let j = i; j > i - c; j--) kept[j] = false;
      i -= c;
      chunk *= 2;
      continue;
    }
    for (let j = i - c + 1; j <= i; j++) removals.remove(eff[j]!);
    if (c === 1) i--;
    chunk = 1;
  }
  const units = eff.slice(0, k).filter((_, i) => kept[i]);
  for (const u of units) removals.add(u);
  return {
    units,
    threshold,
    size: units.reduce((s, u) => s + u.members.length, 0),
    maxPriority: Math.max(...units.map((u) => u.priority)),
  };
}

/** Smallest k in [lo, hi] with test(k), given test(hi) and a monotone test; probes `hint` first. */
function firstTrue(lo: number, hi: number, test: (k: number) => boolean, hint: number | undefined): number {
  if (hint !== undefined && hint < hi) {
    const h = Math.max(hint, lo);
    if (h < hi) {
      if (test(h)) {
        if (h === lo || !test(h - 1)) return h;
        hi = h - 1;
      } else {
        // Gallop upwards from the guess.
        lo = h + 1;
        for (let step = 1; lo < hi; step *= 2) {
          const p = lo + step - 1;
          if (p >= hi) break;
          if (test(p)) {
            hi = p;
            break;
          }
          lo = p + 1;
        }
      }
    }
  }
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (test(mid)) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

/**
 * The units in order, without those whose other ClusterQueues would no longer borrow a
 * needed flavor-resource once the units before them are gone (the peer skips them: quota
 * is reclaimed only from borrowers).
 */
function keepBorrowing(ctx: Ctx, ordered: Unit[]): Unit[] {
  const q = ctx.snap.quota;
  const needed = ctx.needed;
  // Per other ClusterQueue: its usage of each needed flavor-resource once the units kept so far are gone.
  const used = new Map<string, number[]>();
  const usage = (cq: string): number[] => {
    let u = used.get(cq);
    if (!u) used.set(cq, (u = needed.map((f) => q.usage(cq, f))));
    return u;
  };
  const borrows = (cq: string): boolean => {
    const u = usage(cq);
    for (let i = 0; i < needed.length; i++) if (u[i]! > q.nominal(cq, needed[i]!)) return true;
    return false;
  };
  const out: Unit[] = [];
  for (const u of ordered) {
    if (u.others.length > 0) {
      if (!u.others.every(borrows)) continue;
      for (const m of u.members) {
        if (m.clusterQueue === ctx.cq) continue;
        const left = usage(m.clusterQueue);
        for (let i = 0; i < needed.length; i++) {
          const v = m.usage.get(needed[i]!);
          if (v) left[i] = left[i]! - v;
        }
      }
    }
    out.push(u);
  }
  return out;
}

/** The preemptor's ClusterQueue stays within its nominal quota once it is admitted. */
function withinNominal(ctx: Ctx): boolean {
  const q = ctx.snap.quota;
  for (const [f, v] of ctx.usage) if (q.usage(ctx.cq, f) + v > q.nominal(ctx.cq, f)) return false;
  return true;
}

// ---- topology --------------------------------------------------------------------------------

/** The preemptor's TAS PodSet with a required or preferred level, when topology room is short. */
function topologyOf(snap: AdmissionSnapshot, req: PreemptionRequest): Topo | undefined {
  const a = req.assignment;
  if (!a.preemptTopology) return undefined;
  for (const ps of a.podSets) {
    if (ps.tasFlavor === undefined) continue;
    const r = req.info.podSets.find((p) => p.name === ps.name)?.podSet.topologyRequest;
    const levelName = r?.required ?? r?.preferred;
    const tf = snap.tas.get(ps.tasFlavor);
    if (levelName === undefined || !tf) continue;
    const level = tf.snapshot.levels.indexOf(levelName);
    if (level < 0) continue;
    const perPod: ResourceAmounts = { pods: 1 };
    let need = 0;
    for (const p of a.podSets) {
      if (p.tasFlavor !== ps.tasFlavor) continue;
      need += p.count;
      for (const [r, v] of Object.entries(p.perPod)) perPod[r] = Math.max(perPod[r] ?? 0, v);
    }
    const names = Object.keys(perPod).filter((r) => perPod[r]! > 0);
    const ancestor = new Int32Array(tf.snapshot.domainCount).fill(-2);
    return { tf, level, perPod, need, names, per: names.map((r) => perPod[r]!), ancestor };
  }
  return undefined;
}

/** The domain at the level above (or at) `d`, -1 when there is none; remembered per domain. */
function ancestorAt(topo: Topo, d: number): number {
  const memo = topo.ancestor;
  const hit = d < memo.length ? memo[d]! : -2;
  if (hit !== -2) return hit;
  const s = topo.tf.snapshot;
  let a = d;
  while (a >= 0 && s.level(a) > topo.level) a = s.parent(a);
  if (d < memo.length) memo[d] = a;
  return a;
}

function leavesOf(topo: Topo, d: number): number[] {
  if (!topo.leaves) {
    topo.leaves = new Map();
    topo.position = new Int32Array(topo.ancestor.length).fill(-1);
    for (const l of topo.tf.snapshot.leaves()) {
      const a = ancestorAt(topo, l);
      let list = topo.leaves.get(a);
      if (!list) topo.leaves.set(a, (list = []));
      if (l < topo.position.length) topo.position[l] = list.length;
      list.push(l);
    }
  }
  return topo.leaves.get(d) ?? [];
}

/** Small units look their leaves up in their list; a unit with more leaves than this builds an index. */
const LINEAR_LEAVES = 32;

/** A unit's domains at the level and what it frees per leaf, from its TAS assignments. */
function locate(topo: Topo, u: Unit): void {
  const s = topo.tf.snapshot;
  const name = topo.tf.flavor.metadata.name;
  const names = topo.names;
  const R = names.length;
  const domains: number[] = [];
  const leaves = u.freedLeaves;
  const amounts = u.freedAmounts;
  let index: Map<number, number> | undefined;
  for (const m of u.members) {
    for (const ps of m.podSets) {
      if (ps.tasFlavor !== name || !ps.assignment) continue;
      for (const d of ps.assignment.domains) {
        const leaf = s.leafById(s.leafIdOf(d.values));
        if (leaf === undefined) continue;
        const dom = ancestorAt(topo, leaf);
        if (dom >= 0 && !domains.includes(dom)) domains.push(dom);
        let e = -1;
        if (index) e = index.get(leaf) ?? -1;
        else for (let i = 0; i < leaves.length; i++) if (leaves[i] === leaf) e = i;
        if (e < 0) {
          e = leaves.length;
          leaves.push(leaf);
          for (let j = 0; j < R; j++) amounts.push(0);
          if (index) index.set(leaf, e);
          else if (leaves.length > LINEAR_LEAVES) index = new Map(leaves.map((l, i) => [l, i]));
        }
        // Summed in the order the per-leaf totals always were: the pod itself, then each per-pod amount.
        for (let j = 0; j < R; j++) {
          const r = names[j]!;
          if (r === 'pods') amounts[e * R + j]! += d.count;
          const v = ps.perPod[r];
          if (v !== undefined) amounts[e * R + j]! += v * d.count;
        }
      }
    }
  }
  u.domains = domains.sort((x, y) => x - y);
}
