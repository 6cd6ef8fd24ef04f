// The topology placement engine: request + snapshot -> assignment, or a reason.
//
// Phases (kueue-tas.md §5-§7):
//   1. count what fits per leaf (filters, free capacity minus assumed usage), then roll
//      the counters up the tree (pods, slices, leader, with-leader, affinity);
//   2a. pick the fit level and its domains: required stays at its level, preferred climbs,
//      unconstrained splits at its search level;
//   2b. walk down: above the slice level pool the chosen domains' children and consume
//      them globally; at and below it distribute each parent's count among its children;
//   3. emit the leaves with their counts, sorted by level values.
//
// Every tie breaks on level values (the domain's rank in its level), so the same input
// always gives the same output. State lives in typed arrays indexed by domain, reused
// across calls. Per pod shape the count pass keeps each leaf's count and, for plain
// requests, their roll-up, both moved only at the leaves the snapshot lists as changed
// since (capacityChangesSince); a placement starts from that roll-up, copying back only
// the domains the previous descent wrote. Answers themselves are never remembered.

import type { Toleration } from '../api/objects.ts';
import type { ResourceAmounts } from '../api/resources.ts';
import {
  formatTaint,
  matchesNodeSelector,
  matchesRequiredAffinity,
  preferredAffinityScore,
  untoleratedTaint,
} from '../topology/node-match.ts';
import { CHANGE_LOG, type TopologySnapshot } from '../topology/snapshot.ts';
import type { Assignment, DomainAssignment } from './assignment.ts';
import { balancedPlacement } from './balanced.ts';
import { type Algorithm, algorithmFor, type PlacementRequest, type Profile } from './request.ts';
import { HOSTNAME_LABEL } from '../api/keys.ts';

const MAX_INT32 = 2147483647;
const NO_AMOUNTS: readonly number[] = [];

export interface PlacementOptions {
  profile?: Profile;
  /** `TASRespectNodeAffinityPreferred`: preferred node affinity becomes a score. */
  respectPreferredAffinity?: boolean;
  /** Usage of PodSets placed earlier in the same pass. */
  assumed?: AssumedUsage;
  /** Ignore TAS usage (would preemption help?); non-TAS usage still counts. */
  simulateEmpty?: boolean;
  /** Node replacement: only leaves under this domain are candidates. */
  requiredDomain?: number;
  /** Leaves that may take pods at all (others count as `topologyDomain` exclusions). */
  leafEligible?: (leaf: number) => boolean;
}

export type PlacementResult = { ok: true; workers: Assignment; leader?: Assignment } | { ok: false; reason: string };

/** Usage assumed by earlier PodSets of the same pass, keyed by leaf. */
export class AssumedUsage {
  private readonly byLeaf = new Map<number, ResourceAmounts>();
  /** Bumped by every add: the vectors of `byResourceId` are rebuilt after a change. */
  private version = 0;
  private vectors: { snapshot: TopologySnapshot; version: number; resources: number; byLeaf: Map<number, Float64Array> } | undefined;

  add(leaf: number, perPod: ResourceAmounts, count: number): void {
    let acc = this.byLeaf.get(leaf);
    if (!acc) {
      acc = {};
      this.byLeaf.set(leaf, acc);
    }
    for (const k in perPod) acc[k] = (acc[k] ?? 0) + perPod[k]! * count;
    acc.pods = (acc.pods ?? 0) + count;
    this.version++;
  }

  /** Adds an emitted assignment of `snapshot` (worker or leader). */
  addAssignment(snapshot: TopologySnapshot, a: Assignment, perPod: ResourceAmounts): void {
    for (const dom of a.domains) {
      const leaf = snapshot.leafById(snapshot.leafIdOf(dom.values));
      if (leaf !== undefined) this.add(leaf, perPod, dom.count);
    }
  }

  get(leaf: number): ResourceAmounts | undefined {
    return this.byLeaf.get(leaf);
  }

  /**
   * The same usage per leaf as vectors indexed by `snapshot`'s resource ids, for the
   * counting loop. A resource the snapshot has never named is left out: no node has it, so
   * no request that names it (interned before this is called) can fit anyway.
   */
  byResourceId(snapshot: TopologySnapshot): ReadonlyMap<number, Float64Array> {
    const resources = snapshot.resourceCount;
    const v = this.vectors;
    if (v && v.snapshot === snapshot && v.version === this.version && v.resources === resources) return v.byLeaf;
    const byLeaf = new Map<number, Float64Array>();
    for (const [leaf, acc] of this.byLeaf) {
      const vec = new Float64Array(resources);
      for (const name in acc) {
        const r = snapshot.knownResourceIndex(name);
        if (r !== undefined) vec[r] = acc[name]!;
      }
      byLeaf.set(leaf, vec);
    }
    this.vectors = { snapshot, version: this.version, resources, byLeaf };
    return byLeaf;
  }

  get size(): number {
    return this.byLeaf.size;
  }
}

/**
 * Per-domain counters of one placement attempt, indexed by domain id (Kueue's `domain`
 * state in tas_flavor_snapshot.go). Filled for the leaves, rolled up the tree, then
 * overwritten by the descent with what each chosen domain takes.
 */
class DomainCounts {
  /** Length of the arrays (grown, never shrunk). */
  capacity = 0;
  /** Pods of the request that fit in the domain (Kueue: state). */
  podCount = new Int32Array(0);
  /** Slices (of the outer slice layer) that fit in the domain; 0 below the slice level (Kueue: sliceState). */
  sliceCount = new Int32Array(0);
  /** 1 when the leader fits somewhere in the domain, else 0; after the descent, leaders placed (Kueue: leaderState). */
  leaderCount = new Int32Array(0);
  /** Worker pods that fit when the leader is placed in the domain too (Kueue: stateWithLeader). */
  podCountWithLeader = new Int32Array(0);
  /** Worker slices that fit when the leader is placed in the domain too (Kueue: sliceStateWithLeader). */
  sliceCountWithLeader = new Int32Array(0);
  /** Sum of the leaves' preferred node affinity scores (TASRespectNodeAffinityPreferred). */
  affinityScore = new Float64Array(0);

  /** The roll-up the counters hold (setRolledUp), but for the domains in `dirty`. */
  private source: RolledUp | undefined;
  /** Domains whose counters were written since setRolledUp, or moved in `source` since. */
  private dirty = new Int32Array(1024);
  private dirtyCount = 0;

  reset(n: number): void {
    this.source = undefined;
    if (this.grow(n)) return;
    this.podCount.fill(0, 0, n);
    this.sliceCount.fill(0, 0, n);
    this.leaderCount.fill(0, 0, n);
    this.podCountWithLeader.fill(0, 0, n);
    this.sliceCountWithLeader.fill(0, 0, n);
    this.affinityScore.fill(0, 0, n);
  }

  /**
   * The counters of a plain count pass, rolled up, from `r` (its `n` domains): when they
   * hold `r` already, only the domains written or moved since are copied again.
   */
  setRolledUp(r: RolledUp, n: number): void {
    const fresh = this.grow(n);
    if (this.source === r && !fresh) {
      const { dirty, podCount, podCountWithLeader, sliceCount, sliceCountWithLeader, leaderCount, affinityScore } = this;
      const { pods, slices } = r;
      for (let i = 0; i < this.dirtyCount; i++) {
        const d = dirty[i]!;
        podCount[d] = pods[d]!;
        podCountWithLeader[d] = pods[d]!;
        sliceCount[d] = slices[d]!;
        sliceCountWithLeader[d] = slices[d]!;
        leaderCount[d] = 0;
        affinityScore[d] = 0;
      }
    } else {
      if (!fresh) {
        this.leaderCount.fill(0, 0, n);
        this.affinityScore.fill(0, 0, n);
      }
      this.podCount.set(r.pods);
      this.podCountWithLeader.set(r.pods);
      this.sliceCount.set(r.slices);
      this.sliceCountWithLeader.set(r.slices);
    }
    this.source = r;
    this.dirtyCount = 0;
  }

  /** Domain `d`'s counters are about to be written outside a count pass (the descent). */
  mark(d: number): void {
    if (this.source === undefined) return;
    if (this.dirtyCount === this.dirty.length) {
      // Past an eighth of the domains a full copy costs about as much: drop the source.
      if (this.dirty.length * 8 >= this.capacity) {
        this.source = undefined;
        return;
      }
      const more = new Int32Array(this.dirty.length * 2);
      more.set(this.dirty);
      this.dirty = more;
    }
    this.dirty[this.dirtyCount++] = d;
  }

  /** `r` moved at domain `d` (a leaf counted again): copied again if the counters hold `r`. */
  moved(r: RolledUp, d: number): void {
    if (this.source === r) this.mark(d);
  }

  /** Room for `n` domains; true when the arrays were made anew (all zero). */
  private grow(n: number): boolean {
    if (n <= this.capacity) return false;
    this.capacity = Math.max(n, this.capacity * 2);
    this.podCount = new Int32Array(this.capacity);
    this.sliceCount = new Int32Array(this.capacity);
    this.leaderCount = new Int32Array(this.capacity);
    this.podCountWithLeader = new Int32Array(this.capacity);
    this.sliceCountWithLeader = new Int32Array(this.capacity);
    this.affinityScore = new Float64Array(this.capacity);
    return true;
  }
}

/** Why leaves took no pod in a count pass: turned into text only for a message. */
interface Exclusions {
  /** Leaves in the snapshot. */
  totalLeaves: number;
  /** Outside `requiredDomain` or refused by `leafEligible`. */
  topologyDomain: number;
  /** Per eligibility verdict (index into `reasons` + 1): taint, nodeSelector, affinity. */
  byVerdict: Int32Array;
  reasons: readonly string[];
  /** Per requested resource (same index as `requestNames`): leaves where it was the one that fit no pod. */
  byRequest: Int32Array;
  requestNames: readonly string[];
}

/** A resolved request: level indices, slice sizes and units per level. */
interface Plan {
  req: PlacementRequest;
  algo: Algorithm;
  mode: PlacementRequest['mode'];
  searchLevel: number;
  sliceLevel: number;
  sliceSize: number;
  /** Inner layer size that applies to each level (1 where none). */
  unitAt: Int32Array;
  /** Slices to place: floor(count / sliceSize). */
  units: number;
  /** Preferred requests: the highest level they may climb to (index), if capped. */
  ceiling?: number;
  leaders: number;
  useAffinity: boolean;
}

/** Eligibility of leaves for one pod shape, cached while the node set is unchanged. */
interface Eligibility {
  version: number;
  /** 0 = eligible; otherwise an index into `reasons` + 1. */
  verdict: Int32Array;
  reasons: string[];
  score: Float64Array;
}

/**
 * The engine for one snapshot. Holds reusable buffers and per-shape caches, so keep one
 * per snapshot rather than one per call.
 */
export class PlacementEngine {
  readonly snapshot: TopologySnapshot;
  private readonly counts = new DomainCounts();
  private readonly eligibilityCache = new Map<string, Eligibility>();
  /** Per pod shape, the plain count pass's per-leaf results (leafCounts). */
  private readonly leafCountCache = new Map<string, LeafCounts>();
  /** The last count pass, while the counters still hold it (see countsKey). */
  private countsMemo: { key: string; excluded: Exclusions } | undefined;
  /** Leaves whose capacity changed since a cached count (capacityChangesSince). */
  private readonly changed = new Int32Array(CHANGE_LOG);
  private readonly scratchArrays = { items: new Int32Array(0), keys: new Int32Array(0), starts: new Int32Array(0) };
  constructor(snapshot: TopologySnapshot) {
    this.snapshot = snapshot;
  }

  /** Places one PodSet (or a leader/worker group) on the snapshot. */
  place(req: PlacementRequest, options: PlacementOptions = {}): PlacementResult {
    const plan = this.resolve(req, options);
    if (typeof plan === 'string') return { ok: false, reason: plan };
    let excluded = this.fillInCounts(plan, options);

    if (
      options.profile === 'BalancedPlacement' &&
      plan.mode === 'preferred' &&
      plan.ceiling === undefined &&
      plan.leaders === 0 &&
      req.sliceLayers.length <= 1
    ) {
      const choice = balancedPlacement({
        snapshot: this.snapshot,
        sliceCount: this.counts.sliceCount,
        podCount: this.counts.podCount,
        preferredLevel: plan.searchLevel,
        sliceLevel: plan.sliceLevel,
        units: plan.units,
      });
      if (choice) {
        this.countsMemo = undefined;
        const chosen: number[] = [];
        for (const { domain, units } of choice.domains) {
          this.counts.mark(domain);
          this.counts.sliceCount[domain] = units;
          this.counts.podCount[domain] = units * plan.sliceSize;
          chosen.push(domain);
        }
        const leaves = this.descend(plan, choice.level, chosen, false);
        if (leaves) return this.emit(plan, leaves, excluded);
      }
      // Silently fall back to BestFit on fresh counters.
      excluded = this.fillInCounts(plan, options);
    }

    const fit = this.findFitLevel(plan, plan.searchLevel, excluded);
    if (typeof fit === 'string') return { ok: false, reason: fit };
    this.trim(plan, fit.domains);
    const leaves = this.descend(plan, fit.level, fit.domains, true);
    if (!leaves) return { ok: false, reason: this.notFitMessage(plan, excluded, 0) };
    return this.emit(plan, leaves, excluded);
  }

  /**
   * How many pods of `req` fit in each domain of `level` (by level key), as the counting
   * phase sees it: for callers that choose a domain themselves (Volcano co-location).
   */
  podsPerDomain(req: PlacementRequest, levelKey: string, options: PlacementOptions = {}): { domain: number; pods: number }[] {
    const plan = this.resolve({ ...req, sliceLayers: [], leader: undefined }, options);
    const level = this.snapshot.levels.indexOf(levelKey);
    if (typeof plan === 'string' || level < 0) return [];
    this.fillInCounts(plan, options);
    return this.snapshot.domainsAt(level).map((d) => ({ domain: d, pods: this.counts.podCount[d]! }));
  }

  /**
   * The counting phase alone, for explanations (placement/explain.ts): how many pods of
   * `req` (its slices and leader left out) fit in every domain, indexed by domain, and per
   * leaf why it takes none, in the words of the "excluded" list (undefined when it takes some).
   */
  countsWithReasons(req: PlacementRequest, options: PlacementOptions = {}): { pods: Int32Array; why: (string | undefined)[] } | undefined {
    const plan = this.resolve({ ...req, sliceLayers: [], leader: undefined }, options);
    if (typeof plan === 'string') return undefined;
    const why: (string | undefined)[] = [];
    this.fillInCounts(plan, options, why);
    return { pods: this.counts.podCount.slice(0, this.snapshot.domainCount), why };
  }

  // ---- resolution -------------------------------------------------------------------

  private resolve(req: PlacementRequest, options: PlacementOptions): Plan | string {
    const s = this.snapshot;
    const L = s.levels.length;
    if (L === 0) return 'topology level not specified';
    // No closure here: esbuild's keepNames wraps each named one made per call (__name).
    const layers = req.sliceLayers;
    let searchLevel: number;
    if (req.mode === 'unconstrained') {
      searchLevel = layers.length > 0 && !req.implied && req.level === undefined ? 0 : L - 1;
    } else {
      if (req.level === undefined) return 'topology level not specified';
      searchLevel = s.levels.indexOf(req.level);
      if (searchLevel < 0) return `no requested topology level: ${req.level}`;
    }
    let sliceLevel = L - 1;
    let sliceSize = 1;
    const unitAt = new Int32Array(L).fill(1);
    if (layers.length > 0) {
      const outer = layers[0]!;
      if (!(outer.size > 0)) return 'slice topology requested, but slice size not provided';
      sliceLevel = s.levels.indexOf(outer.topology);
      if (sliceLevel < 0) return `no requested topology level for slices: ${outer.topology}`;
      const key = req.level ?? s.levels[searchLevel]!;
      if (sliceLevel < searchLevel && req.mode !== 'unconstrained')
        return `podset slice topology ${outer.topology} is above the podset topology ${key}`;
      sliceSize = outer.size;
      let prevIdx = sliceLevel;
      let prev = outer;
      for (let i = 1; i < layers.length; i++) {
        const layer = layers[i]!;
        const idx = s.levels.indexOf(layer.topology);
        if (idx < 0) return `no requested topology level for additional slice layer: ${layer.topology}`;
        if (idx <= prevIdx) return `additional slice layer topology ${layer.topology} must be at a lower level than ${prev.topology}`;
        if (!(layer.size > 0) || prev.size % layer.size !== 0)
          return `additional slice layer size ${layer.size} must evenly divide parent layer size ${prev.size}`;
        for (let l = prevIdx + 1; l <= idx; l++) unitAt[l] = layer.size;
        prevIdx = idx;
        prev = layer;
      }
    }
    let ceiling: number | undefined;
    if (req.maxLevel !== undefined) {
      ceiling = s.levels.indexOf(req.maxLevel);
      if (ceiling < 0) return `no requested topology level: ${req.maxLevel}`;
      if (ceiling > searchLevel) return `the highest allowed level ${req.maxLevel} is below the requested level ${s.levels[searchLevel]}`;
    }
    return {
      req,
      ceiling,
      algo: algorithmFor(options.profile ?? 'Mixed', req.mode),
      mode: req.mode,
      searchLevel,
      sliceLevel,
      sliceSize,
      unitAt,
      units: Math.floor(req.count / sliceSize),
      leaders: req.leader ? 1 : 0,
      useAffinity: options.respectPreferredAffinity === true && (req.preferredAffinity?.length ?? 0) > 0,
    };
  }

  // ---- phase 1: counts --------------------------------------------------------------

  private eligibility(req: PlacementRequest, useAffinity: boolean): Eligibility | undefined {
    const s = this.snapshot;
    if (!s.hostnameLowest) return undefined;
    const key = JSON.stringify([
      req.nodeSelector ?? null,
      req.tolerations,
      req.requiredAffinity ?? null,
      useAffinity ? (req.preferredAffinity ?? null) : null,
    ]);
    const cached = this.eligibilityCache.get(key);
    if (cached && cached.version === s.attributeVersion) return cached;
    const n = s.domainCount;
    const verdict = new Int32Array(n);
    const score = new Float64Array(n);
    const reasons: string[] = [];
    const reasonIdx = new Map<string, number>();
    const mark = (leaf: number, reason: string) => {
      let i = reasonIdx.get(reason);
      if (i === undefined) {
        i = reasons.length;
        reasons.push(reason);
        reasonIdx.set(reason, i);
      }
      verdict[leaf] = i + 1;
    };
    const tolerations: Toleration[] = req.tolerations;
    for (const leaf of s.leaves()) {
      const first = s.leafFirstNode(leaf);
      if (first < 0) continue;
      const node = s.node(first);
      const taint = untoleratedTaint(node.taints, tolerations);
      if (taint) mark(leaf, `taint "${formatTaint(taint)}"`);
      else if (!matchesNodeSelector(node.labels, req.nodeSelector)) mark(leaf, 'nodeSelector');
      else if (!matchesRequiredAffinity(node.labels, node.name, req.requiredAffinity)) mark(leaf, 'affinity');
      else if (useAffinity) score[leaf] = preferredAffinityScore(node.labels, node.name, req.preferredAffinity);
    }
    const e: Eligibility = { version: s.attributeVersion, verdict, reasons, score };
    if (this.eligibilityCache.size > 256) this.eligibilityCache.clear();
    this.eligibilityCache.set(key, e);
    return e;
  }

  /** Phase 1 for `plan`: fills the counters and returns why leaves took no pod. */
  private fillInCounts(plan: Plan, options: PlacementOptions, why?: (string | undefined)[]): Exclusions {
    // Explaining (`why`) always counts afresh: the memo holds no reasons.
    if (why !== undefined) {
      this.countsMemo = undefined;
      return this.countPass(plan, options, why);
    }
    const key = this.countsKey(plan, options);
    const memo = this.countsMemo;
    if (key !== undefined && memo !== undefined && memo.key === key) return memo.excluded;
    const excluded = this.countPass(plan, options);
    this.countsMemo = key !== undefined ? { key, excluded } : undefined;
    return excluded;
  }

  /**
   * What a count pass depends on, or undefined when it cannot be memoized (assumed usage of
   * an earlier PodSet, a required domain or a leaf filter). The snapshot's versions change
   * with every node, label and usage change, so an equal key means equal counts: the
   * scheduler's pending heads retried one after another while nothing was admitted or
   * freed (a requeue of many parked Workloads of the same pod shape) count once. The counters
   * are reused as they are, so anything that changes them after the pass (the balanced
   * choice, consume, trim, descend) drops the memo: a required request that fails leaves
   * them untouched, which is the case that repeats.
   */
  private countsKey(plan: Plan, options: PlacementOptions): string | undefined {
    if ((options.assumed?.size ?? 0) > 0 || options.requiredDomain !== undefined || options.leafEligible !== undefined) return undefined;
    const s = this.snapshot;
    const req = plan.req;
    return JSON.stringify([
      s.usageVersion,
      s.version,
      s.attributeVersion,
      s.resourceCount,
      s.domainCount,
      req.requests,
      req.leader?.requests ?? null,
      req.nodeSelector ?? null,
      req.tolerations,
      req.requiredAffinity ?? null,
      plan.useAffinity ? (req.preferredAffinity ?? null) : null,
      plan.sliceLevel,
      plan.sliceSize,
      Array.from(plan.unitAt),
      options.simulateEmpty === true,
    ]);
  }

  private countPass(plan: Plan, options: PlacementOptions, why?: (string | undefined)[]): Exclusions {
    const s = this.snapshot;
    const counts = this.counts;
    const req = plan.req;

    // Request vectors over the snapshot's resource indices (pods always included), sorted
    // by name so the first minimum is the limiting resource (ties alphabetical).
    const reqIdx: number[] = [];
    const reqVal: number[] = [];
    const reqName: string[] = [];
    const all: ResourceAmounts = { ...req.requests, pods: 1 + (req.requests.pods ?? 0) };
    for (const name of Object.keys(all).sort()) {
      const v = all[name]!;
      if (!(v > 0)) continue;
      reqIdx.push(s.resourceIndex(name));
      reqVal.push(v);
      reqName.push(name);
    }
    const leaderReq: ResourceAmounts | undefined = req.leader
      ? { pods: 1 + (req.leader.requests.pods ?? 0), ...withoutPods(req.leader.requests) }
      : undefined;
    const leaderNames = leaderReq ? Object.keys(leaderReq).sort() : [];
    const leaderIdx = leaderNames.map((n) => s.resourceIndex(n));
    const leaderVal = leaderReq ? leaderNames.map((n) => leaderReq[n]!) : NO_AMOUNTS;
    // The leader's request for each of the workers' resources (what it leaves them).
    const leaderValByReq = leaderReq ? reqName.map((n) => leaderReq[n] ?? 0) : NO_AMOUNTS;
    // Interning may have grown the arrays: read them (and the assumed usage by resource id) only now.
    const { free: freeA, tas: tasA, R: RR } = s.capacityArrays();
    // Empty assumed usage (the first PodSet of a Workload) is no assumed usage.
    const assumed = options.assumed !== undefined && options.assumed.size > 0 ? options.assumed.byResourceId(s) : undefined;

    const elig = this.eligibility(req, plan.useAffinity);
    const leaves = s.leaves();
    const simulateEmpty = options.simulateEmpty === true;
    const within = options.requiredDomain;
    const eligible = options.leafEligible;
    const byRequest = new Int32Array(reqIdx.length);
    const byVerdict = new Int32Array((elig?.reasons.length ?? 0) + 1);
    let topologyDomain = 0;

    const reqIdxA = Int32Array.from(reqIdx);
    const reqValA = Float64Array.from(reqVal);
    const verdict = elig?.verdict;
    const score = elig && plan.useAffinity ? elig.score : undefined;
    // The common case (no assumed usage, no leader, no empty-cluster simulation, no domain
    // filter) gets a loop of its own: it runs once per leaf of the topology.
    // Explaining (`why`) takes the general loop: it is not on the hot path.
    const plain =
      why === undefined &&
      assumed === undefined &&
      leaderReq === undefined &&
      !simulateEmpty &&
      within === undefined &&
      eligible === undefined;
    let rolledUp = false;
    if (plain) {
      const c = this.leafCounts(leaves, elig, freeA, RR, reqIdxA, reqValA);
      byRequest.set(c.byRequest);
      byVerdict.set(c.byVerdict);
      const n = s.domainCount;
      // Without affinity scores or inner slice layers the roll-up is kept with the leaf counts.
      const r = score === undefined && plan.unitAt.every(isOne) ? this.rolledUpCounts(c, plan) : undefined;
      if (r !== undefined) {
        counts.setRolledUp(r, n);
        rolledUp = true;
      } else {
        this.leafCountsToCounters(c, plan, n, leaves);
        if (score !== undefined) leafScores(leaves, verdict!, score, counts.affinityScore);
      }
    } else {
      counts.reset(s.domainCount);
      topologyDomain = this.countLeaves(
        leaves,
        elig,
        byVerdict,
        byRequest,
        options,
        plan,
        {
          freeA,
          tasA,
          RR,
          reqIdxA,
          reqValA,
          leaderIdx,
          leaderVal,
          leaderValByReq,
          assumed,
          reqName,
        },
        why,
      );
    }
    if (!rolledUp) this.rollUp(plan);
    return { totalLeaves: leaves.length, topologyDomain, byVerdict, reasons: elig?.reasons ?? [], byRequest, requestNames: reqName };
  }

  /** Counters reset, then the leaves' from the cached per-leaf counts. */
  private leafCountsToCounters(c: LeafCounts, plan: Plan, n: number, leaves: readonly number[]): void {
    const counts = this.counts;
    counts.reset(n);
    const fit = c.fit.subarray(0, n);
    counts.podCount.set(fit);
    counts.podCountWithLeader.set(fit);
    if (this.snapshot.levels.length - 1 === plan.sliceLevel) {
      if (plan.sliceSize === 1) {
        counts.sliceCount.set(fit);
        counts.sliceCountWithLeader.set(fit);
      } else {
        leafSlices(leaves, c.fit, plan.sliceSize, counts.sliceCount, counts.sliceCountWithLeader);
      }
    }
  }

  /**
   * The plain roll-up of `c` for the plan's slice level and size: kept with the leaf
   * counts and moved with each leaf they count again, made by a roll-up the first time.
   * Undefined when the sums could reach the int32 clamp (the kept sums would not be clamped
   * as the roll-up clamps them).
   */
  private rolledUpCounts(c: LeafCounts, plan: Plan): RolledUp | undefined {
    for (const r of c.rolled)
      if (r.sliceLevel === plan.sliceLevel && r.sliceSize === plan.sliceSize) return r.total < MAX_INT32 ? r : undefined;
    const s = this.snapshot;
    const n = s.domainCount;
    this.leafCountsToCounters(c, plan, n, s.leaves());
    this.rollUp(plan);
    let total = 0;
    for (const root of s.domainsAt(0)) total += this.counts.podCount[root]!;
    const r: RolledUp = {
      sliceLevel: plan.sliceLevel,
      sliceSize: plan.sliceSize,
      total,
      pods: this.counts.podCount.slice(0, n),
      slices: this.counts.sliceCount.slice(0, n),
    };
    // Sums clamped by this roll-up would stay wrong as leaves move: such a roll-up is kept
    // (so it is not made again on every call) but never used.
    if (total >= MAX_INT32) r.total = Infinity;
    if (c.rolled.length >= 4) c.rolled.shift();
    c.rolled.push(r);
    return total < MAX_INT32 ? r : undefined;
  }

  /**
   * The plain count pass's per-leaf results for this pod shape: from the cache when the
   * structure and eligibility are unchanged (only leaves whose capacity moved are counted
   * again), else from scratch.
   */
  private leafCounts(
    leaves: readonly number[],
    elig: Eligibility | undefined,
    freeA: Float64Array,
    RR: number,
    reqIdx: Int32Array,
    reqVal: Float64Array,
  ): LeafCounts {
    const s = this.snapshot;
    const { stamps, clock } = s.capacityStamps();
    const key = `${reqIdx.join(',')}|${reqVal.join(',')}`;
    const verdict = elig?.verdict;
    let c = this.leafCountCache.get(key);
    if (c && c.structure === s.version && c.resources === RR && c.elig === elig && c.fit.length >= s.domainCount) {
      if (c.clock !== clock) {
        const changed = this.changed;
        const n = s.capacityChangesSince(c.clock, changed);
        if (n >= 0) countListed(s, this.counts, changed, n, verdict, freeA, RR, reqIdx, reqVal, c);
        else {
          countChanged(leaves, verdict, stamps, freeA, RR, reqIdx, reqVal, c);
          c.rolled.length = 0;
        }
        c.clock = clock;
      }
      return c;
    }
    const n = s.domainCount;
    c = {
      structure: s.version,
      resources: RR,
      elig,
      clock,
      fit: new Int32Array(n),
      limiting: new Int32Array(n),
      byRequest: new Int32Array(reqIdx.length),
      byVerdict: new Int32Array((elig?.reasons.length ?? 0) + 1),
      rolled: [],
    };
    countAll(leaves, verdict, freeA, RR, reqIdx, reqVal, c);
    if (this.leafCountCache.size >= 16) this.leafCountCache.clear();
    this.leafCountCache.set(key, c);
    return c;
  }

  /** The count pass over every leaf with assumed usage, a leader, simulateEmpty or a domain filter; returns the leaves filtered out. */
  private countLeaves(
    leaves: readonly number[],
    elig: Eligibility | undefined,
    byVerdict: Int32Array,
    byRequest: Int32Array,
    options: PlacementOptions,
    plan: Plan,
    a: {
      freeA: Float64Array;
      tasA: Float64Array;
      RR: number;
      reqIdxA: Int32Array;
      reqValA: Float64Array;
      leaderIdx: readonly number[];
      leaderVal: readonly number[];
      leaderValByReq: readonly number[];
      assumed: ReadonlyMap<number, Float64Array> | undefined;
      reqName: readonly string[];
    },
    why?: (string | undefined)[],
  ): number {
    const { freeA, tasA, RR, reqIdxA, reqValA, leaderIdx, leaderVal, leaderValByReq, assumed, reqName } = a;
    const { podCount, sliceCount, leaderCount, podCountWithLeader, sliceCountWithLeader, affinityScore } = this.counts;
    const verdict = elig?.verdict;
    const score = elig && plan.useAffinity ? elig.score : undefined;
    const leafSlices = this.snapshot.levels.length - 1 === plan.sliceLevel;
    const sliceSize = plan.sliceSize;
    const simulateEmpty = options.simulateEmpty === true;
    const within = options.requiredDomain;
    const eligible = options.leafEligible;
    const leaderReq = plan.leaders > 0;
    const nr = reqIdxA.length;
    let topologyDomain = 0;
    for (let li = 0; li < leaves.length; li++) {
      const leaf = leaves[li]!;
      if ((within !== undefined && !this.isWithin(leaf, within)) || (eligible !== undefined && !eligible(leaf))) {
        topologyDomain++;
        if (why) why[leaf] = 'topologyDomain';
        continue;
      }
      if (verdict !== undefined && verdict[leaf] !== 0) {
        byVerdict[verdict[leaf]!]!++;
        if (why) why[leaf] = elig!.reasons[verdict[leaf]! - 1];
        continue;
      }
      const base = leaf * RR;
      const extra = assumed?.get(leaf);
      let fit = MAX_INT32;
      let limiting = 0;
      for (let k = 0; k < nr; k++) {
        const r = reqIdxA[k]!;
        let rem = freeA[base + r]!;
        if (simulateEmpty) rem += tasA[base + r]!;
        if (extra) rem -= extra[r]!;
        const f = rem <= 0 ? 0 : Math.floor(rem / reqValA[k]!);
        if (f < fit) {
          fit = f;
          limiting = k;
        }
      }
      if (fit === 0) {
        byRequest[limiting]!++;
        if (why) why[leaf] = `resource "${reqName[limiting]}"`;
      }
      podCount[leaf] = fit;
      if (score !== undefined) affinityScore[leaf] = score[leaf]!;
      if (leaderReq) {
        // The leader fits when one leader pod fits; workers then fit in what is left.
        let leaderFits = true;
        for (let k = 0; k < leaderIdx.length; k++) {
          const r = leaderIdx[k]!;
          let rem = freeA[base + r]!;
          if (simulateEmpty) rem += tasA[base + r]!;
          if (extra) rem -= extra[r]!;
          if (rem < leaderVal[k]!) leaderFits = false;
        }
        leaderCount[leaf] = leaderFits ? 1 : 0;
        if (leaderFits) {
          let w = MAX_INT32;
          for (let k = 0; k < nr; k++) {
            const r = reqIdxA[k]!;
            let rem = freeA[base + r]!;
            if (simulateEmpty) rem += tasA[base + r]!;
            if (extra) rem -= extra[r]!;
            rem -= leaderValByReq[k]!;
            const f = rem <= 0 ? 0 : Math.floor(rem / reqValA[k]!);
            if (f < w) w = f;
          }
          podCountWithLeader[leaf] = w;
        }
      } else {
        podCountWithLeader[leaf] = fit;
      }
      if (leafSlices) {
        sliceCount[leaf] = Math.floor(fit / sliceSize);
        sliceCountWithLeader[leaf] = Math.floor(podCountWithLeader[leaf]! / sliceSize);
      }
    }
    return topologyDomain;
  }

  private isWithin(leaf: number, ancestor: number): boolean {
    const s = this.snapshot;
    for (let d = leaf; d >= 0; d = s.parent(d)) if (d === ancestor) return true;
    return false;
  }

  /**
   * Bottom-up roll-up of the counters (§5). Children are read from the snapshot's level
   * lists (each parent's live children side by side), not from per-domain child arrays:
   * the sums are of integers, so the order in which children are added does not matter,
   * and empty children, which the lists leave out, hold only zeros.
   */
  private rollUp(plan: Plan): void {
    const s = this.snapshot;
    const { podCount, sliceCount, leaderCount, podCountWithLeader, sliceCountWithLeader, affinityScore } = this.counts;
    const { lists, childLo, childHi } = s.tree();
    const withLeader = plan.leaders > 0;
    const useAffinity = plan.useAffinity;
    const sliceLevel = plan.sliceLevel;
    const sliceSize = plan.sliceSize;
    for (let l = s.levels.length - 2; l >= 0; l--) {
      const u = plan.unitAt[l + 1]!;
      const parents = lists[l]!;
      const kids = lists[l + 1]!;
      for (let i = 0; i < parents.length; i++) {
        const d = parents[i]!;
        const lo = childLo[d]!;
        const hi = childHi[d]!;
        // Sums over the children; a leader is placed in one child only, so the with-leader
        // counts are the plain sums minus the smallest penalty among leader-capable children.
        let pods = 0;
        let slices = 0;
        let leaderFits = 0;
        let affinity = 0;
        let minPenalty = Infinity;
        let minSlicePenalty = Infinity;
        if (!withLeader && u === 1) {
          for (let k = lo; k < hi; k++) {
            const c = kids[k]!;
            pods += podCount[c]!;
            slices += sliceCount[c]!;
          }
          if (useAffinity) for (let k = lo; k < hi; k++) affinity += affinityScore[kids[k]!]!;
        } else {
          for (let k = lo; k < hi; k++) {
            const c = kids[k]!;
            const childPods = u === 1 ? podCount[c]! : Math.floor(podCount[c]! / u) * u;
            pods += childPods;
            slices += sliceCount[c]!;
            affinity += affinityScore[c]!;
            if (withLeader && leaderCount[c]! > 0) {
              leaderFits = 1;
              const childPodsWithLeader = u === 1 ? podCountWithLeader[c]! : Math.floor(podCountWithLeader[c]! / u) * u;
              const p = childPods - childPodsWithLeader;
              if (p < minPenalty) minPenalty = p;
              const sp = sliceCount[c]! - sliceCountWithLeader[c]!;
              if (sp < minSlicePenalty) minSlicePenalty = sp;
            }
          }
        }
        // Sums are clamped to int32 as the peer's counters are.
        const podsWithLeader = withLeader ? (leaderFits ? pods - minPenalty : 0) : pods;
        podCount[d] = Math.min(pods, MAX_INT32);
        affinityScore[d] = affinity;
        leaderCount[d] = leaderFits;
        podCountWithLeader[d] = Math.min(podsWithLeader, MAX_INT32);
        if (l < sliceLevel) {
          sliceCount[d] = Math.min(slices, MAX_INT32);
          sliceCountWithLeader[d] = Math.min(withLeader ? (leaderFits ? slices - minSlicePenalty : 0) : slices, MAX_INT32);
        } else if (l === sliceLevel) {
          sliceCount[d] = Math.floor(Math.min(pods, MAX_INT32) / sliceSize);
          sliceCountWithLeader[d] = Math.floor(Math.min(podsWithLeader, MAX_INT32) / sliceSize);
        } else {
          sliceCount[d] = 0;
          sliceCountWithLeader[d] = 0;
        }
      }
    }
  }

  // ---- ordering -----------------------------------------------------------------------

  /** BestFit: slices desc, pods asc; LFC: slices asc, pods asc; then level values. */
  private sortPlain(list: number[], plan: Plan, cap: Int32Array = this.counts.sliceCount): number[] {
    const { podCount, affinityScore } = this.counts;
    const lfc = plan.algo === 'LeastFreeCapacity';
    const useAff = plan.useAffinity;
    if (!useAff && this.packedSort(list, cap, !lfc, podCount)) return list;
    const rank = this.snapshot.ranks();
    return list.sort((a, b) => {
      if (useAff && affinityScore[a] !== affinityScore[b]) return affinityScore[b]! - affinityScore[a]!;
      if (cap[a] !== cap[b]) return lfc ? cap[a]! - cap[b]! : cap[b]! - cap[a]!;
      if (podCount[a] !== podCount[b]) return podCount[a]! - podCount[b]!;
      return rank[a]! - rank[b]!;
    });
  }

  /** Leader count desc, then with-leader slices and pods as above. */
  private sortWithLeader(list: number[], plan: Plan, capL: Int32Array = this.counts.sliceCountWithLeader): number[] {
    const { leaderCount, podCountWithLeader, affinityScore } = this.counts;
    const lfc = plan.algo === 'LeastFreeCapacity';
    const useAff = plan.useAffinity;
    if (!useAff && this.packedSort(list, capL, !lfc, podCountWithLeader, leaderCount)) return list;
    const rank = this.snapshot.ranks();
    return list.sort((a, b) => {
      if (leaderCount[a] !== leaderCount[b]) return leaderCount[b]! - leaderCount[a]!;
      if (useAff && affinityScore[a] !== affinityScore[b]) return affinityScore[b]! - affinityScore[a]!;
      if (capL[a] !== capL[b]) return lfc ? capL[a]! - capL[b]! : capL[b]! - capL[a]!;
      if (podCountWithLeader[a] !== podCountWithLeader[b]) return podCountWithLeader[a]! - podCountWithLeader[b]!;
      return rank[a]! - rank[b]!;
    });
  }

  /**
   * The orders above without a comparator: `leader` desc (when given), `cap` (desc when
   * `capDesc`), `pods` asc, then rank, packed into one exact integer per domain and sorted
   * as numbers. Ranks are unique within a level, so the order is total and the same as the
   * comparator's. Returns false, leaving `list` alone, when the list is short, spans
   * levels, or the fields need more than the 53 bits a double holds exactly.
   */
  private packedSort(list: number[], cap: Int32Array, capDesc: boolean, pods: Int32Array, leader?: Int32Array): boolean {
    const n = list.length;
    if (n < 16) return false;
    const s = this.snapshot;
    const level = s.level(list[0]!);
    const { lists } = s.tree();
    const levelList = lists[level]!;
    const rank = s.ranks();
    let maxCap = 0;
    let maxPods = 0;
    let ranked = true;
    for (let i = 0; i < n; i++) {
      const d = list[i]!;
      if (s.level(d) !== level) return false;
      const c = cap[d]!;
      const p = pods[d]!;
      if (c < 0 || p < 0 || (leader !== undefined && leader[d]! > 1)) return false;
      if (c > maxCap) maxCap = c;
      if (p > maxPods) maxPods = p;
      if (i > 0 && rank[d]! <= rank[list[i - 1]!]!) ranked = false;
    }
    const buckets = (leader !== undefined ? 2 : 1) * (maxCap + 1) * (maxPods + 1);
    if (ranked && buckets <= 2 * n) {
      this.bucketSort(list, cap, capDesc, maxCap, pods, maxPods, leader, buckets);
      return true;
    }
    const rankSpan = 2 ** bitsFor(levelList.length);
    const podSpan = 2 ** bitsFor(maxPods + 1);
    const capSpan = 2 ** bitsFor(maxCap + 1);
    const leaderSpan = leader !== undefined ? 2 : 1;
    if (leaderSpan * capSpan * podSpan * rankSpan > 2 ** 53) return false;
    const keys = new Float64Array(n);
    for (let i = 0; i < n; i++) {
      const d = list[i]!;
      const l = leader !== undefined ? 1 - leader[d]! : 0;
      const c = capDesc ? maxCap - cap[d]! : cap[d]!;
      keys[i] = ((l * capSpan + c) * podSpan + pods[d]!) * rankSpan + rank[d]!;
    }
    keys.sort();
    for (let i = 0; i < n; i++) {
      const k = keys[i]!;
      list[i] = levelList[k - Math.floor(k / rankSpan) * rankSpan]!;
    }
    return true;
  }

  /**
   * packedSort's order for a list already in rank order whose (leader, cap, pods) keys
   * take few values: a stable counting sort by that key, which keeps rank order within
   * each key (O(n + buckets), where the packed sort is O(n log n)).
   */
  private bucketSort(
    list: number[],
    cap: Int32Array,
    capDesc: boolean,
    maxCap: number,
    pods: Int32Array,
    maxPods: number,
    leader: Int32Array | undefined,
    buckets: number,
  ): void {
    const n = list.length;
    const scratch = this.scratch(n, buckets + 1);
    const { items, keys, starts } = scratch;
    starts.fill(0, 0, buckets + 1);
    const capSpan = maxCap + 1;
    const podSpan = maxPods + 1;
    for (let i = 0; i < n; i++) {
      const d = list[i]!;
      const l = leader !== undefined ? 1 - leader[d]! : 0;
      const c = capDesc ? maxCap - cap[d]! : cap[d]!;
      const k = (l * capSpan + c) * podSpan + pods[d]!;
      keys[i] = k;
      items[i] = d;
      starts[k + 1]!++;
    }
    for (let k = 1; k <= buckets; k++) starts[k]! += starts[k - 1]!;
    for (let i = 0; i < n; i++) list[starts[keys[i]!]!++] = items[i]!;
  }

  /** Scratch arrays of bucketSort (grown, never shrunk). */
  private scratch(n: number, b: number): { items: Int32Array; keys: Int32Array; starts: Int32Array } {
    const s = this.scratchArrays;
    if (s.items.length < n) {
      s.items = new Int32Array(Math.max(n, s.items.length * 2));
      s.keys = new Int32Array(s.items.length);
    }
    if (s.starts.length < b) s.starts = new Int32Array(Math.max(b, s.starts.length * 2));
    return s;
  }

  /**
   * "Optimize the last domain": the candidate from `from` on with the smallest capacity
   * that still holds `need` (first on ties); with preferred affinity only the leading
   * block sharing the top score is searched.
   */
  private bestFit(list: readonly number[], from: number, need: number, cap: Int32Array, leaderOnly: boolean, plan: Plan): number {
    const { leaderCount, affinityScore } = this.counts;
    let best = -1;
    const topAff = affinityScore[list[from]!]!;
    for (let i = from; i < list.length; i++) {
      const d = list[i]!;
      if (plan.useAffinity && affinityScore[d] !== topAff) break;
      if (leaderOnly && leaderCount[d] === 0) continue;
      if (cap[d]! >= need && (best < 0 || cap[d]! < cap[list[best]!]!)) best = i;
    }
    return best < 0 ? from : best;
  }

  // ---- phase 2a: the fit level ------------------------------------------------------------

  private findFitLevel(plan: Plan, level: number, excluded: Exclusions): { level: number; domains: number[] } | string {
    const s = this.snapshot;
    const counts = this.counts;
    const domains = s.domainsAt(level);
    if (domains.length === 0) return `no topology domains at level: ${s.levels[level]}`;
    const need = plan.units;
    if (plan.algo === 'BestFit' && plan.leaders === 0 && !plan.useAffinity) {
      // Without a leader or affinity the sorted order is needed only for its first domain
      // and for the best fit: both are found in one pass (same order, same ties).
      const { top, best } = this.topAndBestFit(domains, need);
      if (best >= 0) return { level, domains: [best] };
      const requiredHere = plan.mode === 'required' || (plan.ceiling !== undefined && level <= plan.ceiling);
      if (requiredHere) return this.notFitMessage(plan, excluded, counts.sliceCount[top]!);
      if (plan.mode === 'preferred' && level > 0) return this.findFitLevel(plan, level - 1, excluded);
    }
    const sorted = this.sortWithLeader(domains.slice(), plan);
    let top = sorted[0]!;
    if (plan.algo === 'BestFit' && fitsAll(counts, top, need, plan.leaders)) {
      const i = this.bestFit(sorted, 0, need, counts.sliceCountWithLeader, plan.leaders > 0, plan);
      top = sorted[i]!;
      return { level, domains: [top] };
    }
    // A preferred request with a ceiling behaves as required once it reaches the ceiling.
    const requiredHere = plan.mode === 'required' || (plan.ceiling !== undefined && level <= plan.ceiling);
    if (plan.algo === 'LeastFreeCapacity') {
      for (const d of sorted) if (fitsAll(counts, d, need, plan.leaders)) return { level, domains: [d] };
      if (requiredHere) return this.notFitMessage(plan, excluded, counts.podCount[sorted[sorted.length - 1]!]!);
    }
    if (requiredHere) {
      if (plan.useAffinity) for (const d of sorted) if (fitsAll(counts, d, need, plan.leaders)) return { level, domains: [d] };
      return this.notFitMessage(plan, excluded, counts.sliceCount[top]!);
    }
    if (plan.mode === 'preferred' && level > 0) return this.findFitLevel(plan, level - 1, excluded);
    // Greedy multi-domain at this level.
    const taken = this.consume(domains.slice(), plan, need, plan.leaders, plan.sliceSize, true);
    if (!taken.ok) {
      if (taken.leadersPlaced < plan.leaders) return this.notFitMessage(plan, excluded, taken.leadersPlaced, plan.leaders, true);
      return this.notFitMessage(plan, excluded, need - taken.remaining);
    }
    return { level, domains: taken.domains };
  }

  /**
   * BestFit's with-leader order with no leader and no affinity (slices desc, pods asc,
   * rank asc): its first domain, and the domain the best fit would take when that one
   * holds `need` (the smallest slice count that does, first in that order), else -1.
   */
  private topAndBestFit(domains: readonly number[], need: number): { top: number; best: number } {
    const { sliceCountWithLeader: cap, podCountWithLeader: pods } = this.counts;
    const rank = this.snapshot.ranks();
    let top = domains[0]!;
    let best = -1;
    for (let i = 0; i < domains.length; i++) {
      const d = domains[i]!;
      const c = cap[d]!;
      if (i > 0 && (c > cap[top]! || (c === cap[top] && (pods[d]! < pods[top]! || (pods[d] === pods[top] && rank[d]! < rank[top]!)))))
        top = d;
      if (
        c >= need &&
        (best < 0 || c < cap[best]! || (c === cap[best] && (pods[d]! < pods[best]! || (pods[d] === pods[best] && rank[d]! < rank[best]!))))
      )
        best = d;
    }
    return { top, best: cap[top]! >= need ? best : -1 };
  }

  // ---- phase 2b: descent -------------------------------------------------------------------

  /**
   * Consume rule: walk the sorted list taking whole domains; leaders first (with-leader
   * capacity, leader-capable domains only), then the rest in plain order. BestFit swaps
   * the last domain needed for the best fit; LFC just accumulates. A taken domain's pod
   * count becomes units x unitSize.
   */
  private consume(
    list: number[],
    plan: Plan,
    need: number,
    leaders: number,
    unitSize: number,
    useSlices: boolean,
  ): { ok: boolean; domains: number[]; remaining: number; leadersPlaced: number } {
    this.countsMemo = undefined;
    const counts = this.counts;
    const cap = useSlices ? counts.sliceCount : counts.podCount;
    const capL = useSlices ? counts.sliceCountWithLeader : counts.podCountWithLeader;
    const bf = plan.algo === 'BestFit';
    const taken: number[] = [];
    let remaining = need;
    let leadersPlaced = 0;
    let rest = list;
    // Below the slice level the slice counters are 0, so children order by pods ascending
    // (kueue-tas.md §5, §6.3); the capacity compared is still the pod count.
    const orderKey = useSlices ? cap : counts.sliceCount;
    const orderKeyL = useSlices ? capL : counts.sliceCountWithLeader;
    if (leaders > 0) {
      const sorted = this.sortWithLeader(list.slice(), plan, orderKeyL);
      let total = 0;
      for (const d of list) total += cap[d]!;
      // The leader's domain: the first leader-capable one (with-leader order) whose leader
      // penalty still leaves enough in total; BestFit takes the smallest that holds it all.
      let i = -1;
      for (let k = 0; k < sorted.length; k++) {
        const d = sorted[k]!;
        if (counts.leaderCount[d] === 0) break;
        if (total - (cap[d]! - capL[d]!) >= remaining) {
          i = k;
          break;
        }
      }
      if (i < 0) return { ok: false, domains: [], remaining, leadersPlaced };
      if (bf && capL[sorted[i]!]! >= remaining) i = this.bestFit(sorted, i, remaining, capL, true, plan);
      const d = sorted[i]!;
      const t = Math.min(capL[d]!, remaining);
      counts.mark(d);
      counts.podCount[d] = t * unitSize;
      if (useSlices) counts.sliceCount[d] = t;
      counts.leaderCount[d] = 1;
      remaining -= t;
      leadersPlaced = 1;
      taken.push(d);
      rest = list.filter((x) => x !== d);
    }
    this.sortPlain(rest, plan, orderKey);
    for (let i = 0; i < rest.length && remaining > 0; i++) {
      let d = rest[i]!;
      let c = cap[d]!;
      if (c <= 0) continue;
      if (bf && c >= remaining) {
        d = rest[this.bestFit(rest, i, remaining, cap, false, plan)]!;
        c = cap[d]!;
      }
      const t = Math.min(c, remaining);
      counts.mark(d);
      counts.podCount[d] = t * unitSize;
      if (useSlices) counts.sliceCount[d] = t;
      counts.leaderCount[d] = 0;
      remaining -= t;
      taken.push(d);
    }
    return { ok: remaining === 0, domains: taken, remaining, leadersPlaced };
  }

  /** A single chosen domain takes exactly the need (greedy picks are trimmed already). */
  private trim(plan: Plan, chosen: number[]): void {
    this.countsMemo = undefined;
    if (chosen.length !== 1) return;
    const d = chosen[0]!;
    this.counts.mark(d);
    this.counts.podCount[d] = plan.units * plan.sliceSize;
    this.counts.sliceCount[d] = plan.units;
    this.counts.leaderCount[d] = plan.leaders;
  }

  /**
   * Walks down from `fitLevel`. Above the slice level the children of all chosen domains
   * are pooled (`pooled`) or, for balanced placement, distributed per parent in slices;
   * at and below it each parent's pods go to its own children.
   */
  private descend(plan: Plan, fitLevel: number, chosen: number[], pooled: boolean): number[] | undefined {
    this.countsMemo = undefined;
    const s = this.snapshot;
    const counts = this.counts;
    const L = s.levels.length;
    let current = chosen;
    for (let l = fitLevel; l + 1 < L; l++) {
      let next: number[] = [];
      if (l < plan.sliceLevel && !pooled) {
        for (const d of current) {
          const r = this.consume(this.liveChildren(d), plan, counts.sliceCount[d]!, counts.leaderCount[d]!, plan.sliceSize, true);
          if (!r.ok) return undefined;
          appendTo(next, r.domains);
        }
      } else if (l < plan.sliceLevel) {
        // Parents in rank order pool their children in rank order (a parent's children are
        // side by side in the level list), which lets consume sort them by buckets.
        const { lists, childLo, childHi } = s.tree();
        const kids = lists[l + 1]!;
        let size = 0;
        let leaders = 0;
        for (const d of current) {
          size += childHi[d]! - childLo[d]!;
          leaders += counts.leaderCount[d]!;
        }
        const pooled = new Array<number>(size);
        let j = 0;
        for (const d of sortByRank(s, current.slice(), s.ranks()))
          for (let k = childLo[d]!, hi = childHi[d]!; k < hi; k++) pooled[j++] = kids[k]!;
        const r = this.consume(pooled, plan, plan.units, leaders, plan.sliceSize, true);
        if (!r.ok) return undefined;
        next = r.domains;
      } else {
        const u = plan.unitAt[l + 1]!;
        for (const d of current) {
          const kids = this.liveChildren(d);
          if (u > 1) {
            for (const c of kids) {
              counts.mark(c);
              counts.sliceCount[c] = Math.floor(counts.podCount[c]! / u);
              counts.sliceCountWithLeader[c] = Math.floor(counts.podCountWithLeader[c]! / u);
            }
          }
          const r = this.consume(kids, plan, Math.floor(counts.podCount[d]! / u), counts.leaderCount[d]!, u, u > 1);
          if (!r.ok) return undefined;
          appendTo(next, r.domains);
        }
      }
      current = next;
    }
    return current;
  }

  /**
   * The children of `d` that hold nodes, in level order. Empty children hold only zero
   * counters, which the descent never takes, so leaving them out changes nothing.
   */
  private liveChildren(d: number): number[] {
    const { lists, childLo, childHi } = this.snapshot.tree();
    const kids = lists[this.snapshot.level(d) + 1]!;
    const out: number[] = [];
    for (let k = childLo[d]!, hi = childHi[d]!; k < hi; k++) out.push(kids[k]!);
    return out;
  }

  // ---- phase 3: emit -------------------------------------------------------------------------

  private emit(plan: Plan, leaves: number[], excluded: Exclusions): PlacementResult {
    const s = this.snapshot;
    const counts = this.counts;
    const podCount = counts.podCount;
    let m = 0;
    for (let i = 0; i < leaves.length; i++) if (podCount[leaves[i]!]! > 0) m++;
    let taking: number[];
    if (m === leaves.length) taking = leaves.slice();
    else {
      taking = [];
      for (let i = 0; i < leaves.length; i++) if (podCount[leaves[i]!]! > 0) taking.push(leaves[i]!);
    }
    const sorted = sortByRank(s, taking, s.ranks());
    const levels = s.hostnameLowest ? [HOSTNAME_LABEL] : [...s.levels];
    const domains: DomainAssignment[] = new Array(sorted.length);
    for (let i = 0; i < sorted.length; i++) {
      const d = sorted[i]!;
      domains[i] = { values: leafValues(s, d), count: podCount[d]! };
    }
    const workers: Assignment = { levels, domains };
    if (plan.leaders === 0) return { ok: true, workers };
    const leaderLeaf = leaves.find((d) => counts.leaderCount[d]! > 0);
    if (leaderLeaf === undefined) return { ok: false, reason: this.notFitMessage(plan, excluded, 0, 1, true) };
    return { ok: true, workers, leader: { levels, domains: [{ values: leafValues(s, leaderLeaf), count: 1 }] } };
  }

  // ---- messages ------------------------------------------------------------------------------

  /** The peer's "doesn't allow to fit" message for `fit` of `total` (default: the units), with the exclusions of the count pass. */
  private notFitMessage(plan: Plan, excluded: Exclusions, fit: number, total?: number, leader = false): string {
    const s = this.snapshot;
    const n = total ?? plan.units;
    let msg: string;
    if (plan.req.sliceLayers.length > 1 && !leader) {
      msg = `topology "${s.name}" doesn't allow to fit${this.multiLayerDetail(plan)}`;
    } else {
      const unit = plan.sliceSize > 1 && !leader ? 'slice(s)' : 'pod(s)';
      msg =
        fit === 0
          ? `topology "${s.name}" doesn't allow to fit any of ${n} ${unit}`
          : `topology "${s.name}" allows to fit only ${fit} out of ${n} ${unit}`;
    }
    const parts = exclusionList(excluded);
    if (parts.length > 0) {
      msg += `. Total nodes: ${excluded.totalLeaves}; excluded: ${parts.join(', ')}`;
    }
    return msg;
  }

  /** Per layer, how many slices fit in the best domain at the requested level. */
  private multiLayerDetail(plan: Plan): string {
    const s = this.snapshot;
    const counts = this.counts;
    const domains = s.domainsAt(plan.searchLevel);
    let best = -1;
    for (const d of domains) {
      if (
        best < 0 ||
        counts.sliceCount[d]! > counts.sliceCount[best]! ||
        (counts.sliceCount[d] === counts.sliceCount[best] && s.id(d) < s.id(best))
      )
        best = d;
    }
    let out = '';
    for (const layer of plan.req.sliceLayers) {
      const needed = Math.floor(plan.req.count / layer.size);
      let fit = 0;
      if (best >= 0) {
        const li = s.levels.indexOf(layer.topology);
        fit = this.slicesUnder(best, li, layer.size);
      }
      out += `; ${fit}/${needed} slice(s) fit on level ${layer.topology}`;
    }
    return out;
  }

  private slicesUnder(d: number, level: number, size: number): number {
    const s = this.snapshot;
    if (s.level(d) === level) return Math.floor(this.counts.podCount[d]! / size);
    let n = 0;
    for (const c of s.children(d)) n += this.slicesUnder(c, level, size);
    return n;
  }
}

/**
 * What the count pass found per leaf for one pod shape (requests over the snapshot's
 * resource ids, one eligibility), kept between calls: pods that fit, the limiting
 * request of a leaf that fits none, and the exclusion totals. Valid while the structure
 * and the eligibility are the same; leaves whose capacity changed since `clock` are
 * counted again.
 */
interface LeafCounts {
  structure: number;
  resources: number;
  elig: Eligibility | undefined;
  clock: number;
  fit: Int32Array;
  limiting: Int32Array;
  byRequest: Int32Array;
  byVerdict: Int32Array;
  /** Its plain roll-ups (rollUp with no leader, affinity or inner slice layer), per slice level and size. */
  rolled: RolledUp[];
}

/**
 * A plain roll-up of a LeafCounts: per domain, the pods and slices rollUp gives it (leaders
 * and affinity are 0), moved with every leaf counted again (rollLeafChange) while the leaf
 * counts are kept, dropped when every leaf is counted again.
 */
interface RolledUp {
  sliceLevel: number;
  sliceSize: number;
  /** Pods over every leaf: while under the int32 clamp, no sum is clamped. */
  total: number;
  pods: Int32Array;
  slices: Int32Array;
}

/** A leaf's pod count went from `before` to `after`: its own counters and its ancestors' move (rollUp's sums, unclamped). */
function rollLeafChange(r: RolledUp, s: TopologySnapshot, leaf: number, before: number, after: number, counts: DomainCounts): void {
  const { pods, slices, sliceLevel, sliceSize } = r;
  const dp = after - before;
  let l = s.level(leaf);
  let ds = 0;
  if (l === sliceLevel) {
    ds = Math.floor(after / sliceSize) - Math.floor(before / sliceSize);
    slices[leaf]! += ds;
  }
  pods[leaf]! += dp;
  r.total += dp;
  counts.moved(r, leaf);
  for (let a = s.parent(leaf); a >= 0; a = s.parent(a)) {
    l--;
    counts.moved(r, a);
    pods[a]! += dp;
    if (l < sliceLevel) slices[a]! += ds;
    else if (l === sliceLevel) {
      const old = slices[a]!;
      slices[a] = Math.floor(pods[a]! / sliceSize);
      ds = slices[a]! - old;
    }
  }
}

function isOne(u: number): boolean {
  return u === 1;
}

/**
 * Pods of one leaf that fit by the scarcest requested resource (ties: the first, requests
 * being sorted by name); `out[0]` the fit, `out[1]` the limiting request's index.
 */
function leafFit(freeA: Float64Array, base: number, reqIdx: Int32Array, reqVal: Float64Array, out: Int32Array): void {
  let fit = MAX_INT32;
  let limiting = 0;
  for (let k = 0; k < reqIdx.length; k++) {
    const rem = freeA[base + reqIdx[k]!]!;
    const f = rem <= 0 ? 0 : Math.floor(rem / reqVal[k]!);
    if (f < fit) {
      fit = f;
      limiting = k;
    }
  }
  out[0] = fit;
  out[1] = limiting;
}

/**
 * The count pass from scratch for the common case (no assumed usage, leader,
 * simulateEmpty or domain filter) into `c`. Functions of their own, so V8 compiles each
 * loop whole rather than entering an on-stack-replaced loop whose exit it has never seen
 * (that deoptimized on every call).
 */
function countAll(
  leaves: readonly number[],
  verdict: Int32Array | undefined,
  freeA: Float64Array,
  RR: number,
  reqIdx: Int32Array,
  reqVal: Float64Array,
  c: LeafCounts,
): void {
  const { fit, limiting, byRequest, byVerdict } = c;
  const out = new Int32Array(2);
  for (let li = 0; li < leaves.length; li++) {
    const leaf = leaves[li]!;
    if (verdict !== undefined && verdict[leaf] !== 0) {
      byVerdict[verdict[leaf]!]!++;
      continue;
    }
    leafFit(freeA, leaf * RR, reqIdx, reqVal, out);
    fit[leaf] = out[0]!;
    limiting[leaf] = out[1]!;
    if (out[0] === 0) byRequest[out[1]!]!++;
  }
}

/** Counts again the leaves whose capacity changed since `c.clock` (stamps from the snapshot). */
function countChanged(
  leaves: readonly number[],
  verdict: Int32Array | undefined,
  stamps: Float64Array,
  freeA: Float64Array,
  RR: number,
  reqIdx: Int32Array,
  reqVal: Float64Array,
  c: LeafCounts,
): void {
  const { fit, limiting, byRequest } = c;
  const clock = c.clock;
  const out = new Int32Array(2);
  for (let li = 0; li < leaves.length; li++) {
    const leaf = leaves[li]!;
    if (stamps[leaf]! <= clock || (verdict !== undefined && verdict[leaf] !== 0)) continue;
    if (fit[leaf] === 0) byRequest[limiting[leaf]!]!--;
    leafFit(freeA, leaf * RR, reqIdx, reqVal, out);
    fit[leaf] = out[0]!;
    limiting[leaf] = out[1]!;
    if (out[0] === 0) byRequest[out[1]!]!++;
  }
}

/** countChanged over the first `n` leaves of `listed`, the snapshot's list of the leaves that changed. */
function countListed(
  s: TopologySnapshot,
  counts: DomainCounts,
  listed: Int32Array,
  n: number,
  verdict: Int32Array | undefined,
  freeA: Float64Array,
  RR: number,
  reqIdx: Int32Array,
  reqVal: Float64Array,
  c: LeafCounts,
): void {
  const { fit, limiting, byRequest } = c;
  const out = new Int32Array(2);
  for (let li = 0; li < n; li++) {
    const leaf = listed[li]!;
    if (verdict !== undefined && verdict[leaf] !== 0) continue;
    const before = fit[leaf]!;
    if (before === 0) byRequest[limiting[leaf]!]!--;
    leafFit(freeA, leaf * RR, reqIdx, reqVal, out);
    fit[leaf] = out[0]!;
    limiting[leaf] = out[1]!;
    if (out[0] === 0) byRequest[out[1]!]!++;
    if (out[0] !== before) for (let i = 0; i < c.rolled.length; i++) rollLeafChange(c.rolled[i]!, s, leaf, before, out[0]!, counts);
  }
}

/** Leaf slices from the cached pod counts (the slice level is the leaf level). */
function leafSlices(
  leaves: readonly number[],
  fit: Int32Array,
  sliceSize: number,
  sliceCount: Int32Array,
  sliceCountWithLeader: Int32Array,
): void {
  for (let li = 0; li < leaves.length; li++) {
    const leaf = leaves[li]!;
    const sl = Math.floor(fit[leaf]! / sliceSize);
    sliceCount[leaf] = sl;
    sliceCountWithLeader[leaf] = sl;
  }
}

/** Affinity scores of the eligible leaves. */
function leafScores(leaves: readonly number[], verdict: Int32Array, score: Float64Array, affinityScore: Float64Array): void {
  for (let li = 0; li < leaves.length; li++) {
    const leaf = leaves[li]!;
    if (verdict[leaf] === 0) affinityScore[leaf] = score[leaf]!;
  }
}

/** `reason: count` entries of a count pass, sorted alphabetically. */
function exclusionList(e: Exclusions): string[] {
  const parts: string[] = [];
  if (e.topologyDomain > 0) parts.push(`topologyDomain: ${e.topologyDomain}`);
  for (let i = 1; i < e.byVerdict.length; i++) if (e.byVerdict[i]! > 0) parts.push(`${e.reasons[i - 1]}: ${e.byVerdict[i]}`);
  for (let k = 0; k < e.byRequest.length; k++) if (e.byRequest[k]! > 0) parts.push(`resource "${e.requestNames[k]}": ${e.byRequest[k]}`);
  return parts.sort();
}

/**
 * Domains in level-value order: their ranks sorted as numbers when they share a level
 * (ranks are unique within one), else through a comparator.
 */
function sortByRank(s: TopologySnapshot, list: number[], rank: Int32Array): number[] {
  const n = list.length;
  if (n === 0) return list;
  const level = s.level(list[0]!);
  let sorted = true;
  for (let i = 0; i < n; i++) {
    const d = list[i]!;
    if (s.level(d) !== level) return list.sort((a, b) => rank[a]! - rank[b]!);
    if (i > 0 && rank[d]! <= rank[list[i - 1]!]!) sorted = false;
  }
  // Often already in order: a descent that took a rank-ordered run of equal domains.
  if (sorted) return list;
  const ranks = new Int32Array(n);
  for (let i = 0; i < n; i++) ranks[i] = rank[list[i]!]!;
  ranks.sort();
  const byRank = s.tree().lists[level]!;
  for (let i = 0; i < n; i++) list[i] = byRank[ranks[i]!]!;
  return list;
}

/** Appends `b` to `a` (a spread would pass every element as an argument). */
function appendTo(a: number[], b: readonly number[]): void {
  for (let i = 0; i < b.length; i++) a.push(b[i]!);
}

/** Bits needed for values 0 .. n - 1 (at least 1). */
function bitsFor(n: number): number {
  let b = 1;
  while (2 ** b < n) b++;
  return b;
}

function withoutPods(a: ResourceAmounts): ResourceAmounts {
  const out: ResourceAmounts = {};
  for (const k in a) if (k !== 'pods') out[k] = a[k]!;
  return out;
}

/** Whether domain `d` holds every slice and the leaders (counters of the count pass). */
function fitsAll(counts: DomainCounts, d: number, need: number, leaders: number): boolean {
  return counts.sliceCountWithLeader[d]! >= need && counts.leaderCount[d]! >= leaders;
}

/** A leaf's values as an assignment names it: the hostname alone on hostname-lowest topologies, else the full path. */
function leafValues(s: TopologySnapshot, d: number): string[] {
  return s.hostnameLowest ? [s.values(d)[s.levels.length - 1]!] : [...s.values(d)];
}
