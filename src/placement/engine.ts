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
// across calls; nothing is copied per call except the short lists being sorted.

import type { Toleration } from '../api/objects.ts';
import type { ResourceAmounts } from '../api/resources.ts';
import {
  formatTaint,
  matchesNodeSelector,
  matchesRequiredAffinity,
  preferredAffinityScore,
  untoleratedTaint,
} from '../topology/node-match.ts';
import type { TopologySnapshot } from '../topology/snapshot.ts';
import type { Assignment } from './assignment.ts';
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

  reset(n: number): void {
    if (n > this.capacity) {
      this.capacity = Math.max(n, this.capacity * 2);
      this.podCount = new Int32Array(this.capacity);
      this.sliceCount = new Int32Array(this.capacity);
      this.leaderCount = new Int32Array(this.capacity);
      this.podCountWithLeader = new Int32Array(this.capacity);
      this.sliceCountWithLeader = new Int32Array(this.capacity);
      this.affinityScore = new Float64Array(this.capacity);
    } else {
      this.podCount.fill(0, 0, n);
      this.sliceCount.fill(0, 0, n);
      this.leaderCount.fill(0, 0, n);
      this.podCountWithLeader.fill(0, 0, n);
      this.sliceCountWithLeader.fill(0, 0, n);
      this.affinityScore.fill(0, 0, n);
    }
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
  /** The last count pass, while the counters still hold it (see countsKey). */
  private countsMemo: { key: string; excluded: Exclusions } | undefined;

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

  // ---- resolution -------------------------------------------------------------------

  private resolve(req: PlacementRequest, options: PlacementOptions): Plan | string {
    const s = this.snapshot;
    const L = s.levels.length;
    if (L === 0) return 'topology level not specified';
    const levelIdx = (key: string) => s.levels.indexOf(key);
    const layers = req.sliceLayers;
    let searchLevel: number;
    if (req.mode === 'unconstrained') {
      searchLevel = layers.length > 0 && !req.implied && req.level === undefined ? 0 : L - 1;
    } else {
      if (req.level === undefined) return 'topology level not specified';
      searchLevel = levelIdx(req.level);
      if (searchLevel < 0) return `no requested topology level: ${req.level}`;
    }
    let sliceLevel = L - 1;
    let sliceSize = 1;
    const unitAt = new Int32Array(L).fill(1);
    if (layers.length > 0) {
      const outer = layers[0]!;
      if (!(outer.size > 0)) return 'slice topology requested, but slice size not provided';
      sliceLevel = levelIdx(outer.topology);
      if (sliceLevel < 0) return `no requested topology level for slices: ${outer.topology}`;
      const key = req.level ?? s.levels[searchLevel]!;
      if (sliceLevel < searchLevel && req.mode !== 'unconstrained')
        return `podset slice topology ${outer.topology} is above the podset topology ${key}`;
      sliceSize = outer.size;
      let prevIdx = sliceLevel;
      let prev = outer;
      for (let i = 1; i < layers.length; i++) {
        const layer = layers[i]!;
        const idx = levelIdx(layer.topology);
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
      ceiling = levelIdx(req.maxLevel);
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
  private fillInCounts(plan: Plan, options: PlacementOptions): Exclusions {
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

  private countPass(plan: Plan, options: PlacementOptions): Exclusions {
    const s = this.snapshot;
    const counts = this.counts;
    counts.reset(s.domainCount);
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
    const assumed = options.assumed?.byResourceId(s);

    const elig = this.eligibility(req, plan.useAffinity);
    const leaves = s.leaves();
    const simulateEmpty = options.simulateEmpty === true;
    const within = options.requiredDomain;
    const eligible = options.leafEligible;
    const nr = reqIdx.length;
    const byRequest = new Int32Array(nr);
    const byVerdict = new Int32Array((elig?.reasons.length ?? 0) + 1);
    let topologyDomain = 0;

    for (let li = 0; li < leaves.length; li++) {
      const leaf = leaves[li]!;
      if ((within !== undefined && !this.isWithin(leaf, within)) || (eligible !== undefined && !eligible(leaf))) {
        topologyDomain++;
        continue;
      }
      if (elig && elig.verdict[leaf] !== 0) {
        byVerdict[elig.verdict[leaf]!]!++;
        continue;
      }
      const base = leaf * RR;
      const extra = assumed?.get(leaf);
      let fit = MAX_INT32;
      let limiting = 0;
      for (let k = 0; k < nr; k++) {
        const r = reqIdx[k]!;
        let rem = freeA[base + r]!;
        if (simulateEmpty) rem += tasA[base + r]!;
        if (extra) rem -= extra[r]!;
        const f = rem <= 0 ? 0 : Math.floor(rem / reqVal[k]!);
        if (f < fit) {
          fit = f;
          limiting = k;
        }
      }
      if (fit === 0) byRequest[limiting]!++;
      counts.podCount[leaf] = fit;
      if (elig && plan.useAffinity) counts.affinityScore[leaf] = elig.score[leaf]!;
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
        counts.leaderCount[leaf] = leaderFits ? 1 : 0;
        if (leaderFits) {
          let w = MAX_INT32;
          for (let k = 0; k < nr; k++) {
            const r = reqIdx[k]!;
            let rem = freeA[base + r]!;
            if (simulateEmpty) rem += tasA[base + r]!;
            if (extra) rem -= extra[r]!;
            rem -= leaderValByReq[k]!;
            const f = rem <= 0 ? 0 : Math.floor(rem / reqVal[k]!);
            if (f < w) w = f;
          }
          counts.podCountWithLeader[leaf] = w;
        }
      } else {
        counts.podCountWithLeader[leaf] = fit;
      }
      if (s.levels.length - 1 === plan.sliceLevel) {
        counts.sliceCount[leaf] = Math.floor(fit / plan.sliceSize);
        counts.sliceCountWithLeader[leaf] = Math.floor(counts.podCountWithLeader[leaf]! / plan.sliceSize);
      }
    }
    this.rollUp(plan);
    return { totalLeaves: leaves.length, topologyDomain, byVerdict, reasons: elig?.reasons ?? [], byRequest, requestNames: reqName };
  }

  private isWithin(leaf: number, ancestor: number): boolean {
    const s = this.snapshot;
    for (let d = leaf; d >= 0; d = s.parent(d)) if (d === ancestor) return true;
    return false;
  }

  /** Bottom-up roll-up of the counters (§5). */
  private rollUp(plan: Plan): void {
    const s = this.snapshot;
    const counts = this.counts;
    const withLeader = plan.leaders > 0;
    for (let l = s.levels.length - 2; l >= 0; l--) {
      const u = plan.unitAt[l + 1]!;
      for (const d of s.domainsAt(l)) {
        // Sums over the children; a leader is placed in one child only, so the with-leader
        // counts are the plain sums minus the smallest penalty among leader-capable children.
        let pods = 0;
        let slices = 0;
        let leaderFits = 0;
        let affinity = 0;
        let minPenalty = Infinity;
        let minSlicePenalty = Infinity;
        for (const c of s.children(d)) {
          const childPods = u === 1 ? counts.podCount[c]! : Math.floor(counts.podCount[c]! / u) * u;
          pods += childPods;
          slices += counts.sliceCount[c]!;
          affinity += counts.affinityScore[c]!;
          if (withLeader) {
            if (counts.leaderCount[c]! > 0) {
              leaderFits = 1;
              const childPodsWithLeader = u === 1 ? counts.podCountWithLeader[c]! : Math.floor(counts.podCountWithLeader[c]! / u) * u;
              const p = childPods - childPodsWithLeader;
              if (p < minPenalty) minPenalty = p;
              const sp = counts.sliceCount[c]! - counts.sliceCountWithLeader[c]!;
              if (sp < minSlicePenalty) minSlicePenalty = sp;
            }
          }
        }
        // Sums are clamped to int32 as the peer's counters are.
        const podsWithLeader = withLeader ? (leaderFits ? pods - minPenalty : 0) : pods;
        counts.podCount[d] = Math.min(pods, MAX_INT32);
        counts.affinityScore[d] = affinity;
        counts.leaderCount[d] = leaderFits;
        counts.podCountWithLeader[d] = Math.min(podsWithLeader, MAX_INT32);
        if (l < plan.sliceLevel) {
          counts.sliceCount[d] = Math.min(slices, MAX_INT32);
          counts.sliceCountWithLeader[d] = Math.min(withLeader ? (leaderFits ? slices - minSlicePenalty : 0) : slices, MAX_INT32);
        } else if (l === plan.sliceLevel) {
          counts.sliceCount[d] = Math.floor(Math.min(pods, MAX_INT32) / plan.sliceSize);
          counts.sliceCountWithLeader[d] = Math.floor(Math.min(podsWithLeader, MAX_INT32) / plan.sliceSize);
        } else {
          counts.sliceCount[d] = 0;
          counts.sliceCountWithLeader[d] = 0;
        }
      }
    }
  }

  // ---- ordering -----------------------------------------------------------------------

  /** BestFit: slices desc, pods asc; LFC: slices asc, pods asc; then level values. */
  private sortPlain(list: number[], plan: Plan, cap: Int32Array = this.counts.sliceCount): number[] {
    const { podCount, affinityScore } = this.counts;
    const rank = this.snapshot.ranks();
    const lfc = plan.algo === 'LeastFreeCapacity';
    const useAff = plan.useAffinity;
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
    const rank = this.snapshot.ranks();
    const lfc = plan.algo === 'LeastFreeCapacity';
    const useAff = plan.useAffinity;
    return list.sort((a, b) => {
      if (leaderCount[a] !== leaderCount[b]) return leaderCount[b]! - leaderCount[a]!;
      if (useAff && affinityScore[a] !== affinityScore[b]) return affinityScore[b]! - affinityScore[a]!;
      if (capL[a] !== capL[b]) return lfc ? capL[a]! - capL[b]! : capL[b]! - capL[a]!;
      if (podCountWithLeader[a] !== podCountWithLeader[b]) return podCountWithLeader[a]! - podCountWithLeader[b]!;
      return rank[a]! - rank[b]!;
    });
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
    const sorted = this.sortWithLeader(domains.slice(), plan);
    const need = plan.units;
    const fitsAll = (d: number) => counts.sliceCountWithLeader[d]! >= need && counts.leaderCount[d]! >= plan.leaders;
    let top = sorted[0]!;
    if (plan.algo === 'BestFit' && fitsAll(top)) {
      const i = this.bestFit(sorted, 0, need, counts.sliceCountWithLeader, plan.leaders > 0, plan);
      top = sorted[i]!;
      return { level, domains: [top] };
    }
    // A preferred request with a ceiling behaves as required once it reaches the ceiling.
    const requiredHere = plan.mode === 'required' || (plan.ceiling !== undefined && level <= plan.ceiling);
    if (plan.algo === 'LeastFreeCapacity') {
      for (const d of sorted) if (fitsAll(d)) return { level, domains: [d] };
      if (requiredHere) return this.notFitMessage(plan, excluded, counts.podCount[sorted[sorted.length - 1]!]!);
    }
    if (requiredHere) {
      if (plan.useAffinity) for (const d of sorted) if (fitsAll(d)) return { level, domains: [d] };
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
      const next: number[] = [];
      if (l < plan.sliceLevel && !pooled) {
        for (const d of current) {
          const r = this.consume(s.children(d).slice(), plan, counts.sliceCount[d]!, counts.leaderCount[d]!, plan.sliceSize, true);
          if (!r.ok) return undefined;
          next.push(...r.domains);
        }
      } else if (l < plan.sliceLevel) {
        const pooled: number[] = [];
        for (const d of current) for (const c of s.children(d)) pooled.push(c);
        const leaders = current.reduce((n, d) => n + counts.leaderCount[d]!, 0);
        const r = this.consume(pooled, plan, plan.units, leaders, plan.sliceSize, true);
        if (!r.ok) return undefined;
        next.push(...r.domains);
      } else {
        const u = plan.unitAt[l + 1]!;
        for (const d of current) {
          const kids = s.children(d).slice();
          if (u > 1) {
            for (const c of kids) {
              counts.sliceCount[c] = Math.floor(counts.podCount[c]! / u);
              counts.sliceCountWithLeader[c] = Math.floor(counts.podCountWithLeader[c]! / u);
            }
          }
          const r = this.consume(kids, plan, Math.floor(counts.podCount[d]! / u), counts.leaderCount[d]!, u, u > 1);
          if (!r.ok) return undefined;
          next.push(...r.domains);
        }
      }
      current = next;
    }
    return current;
  }

  // ---- phase 3: emit -------------------------------------------------------------------------

  private emit(plan: Plan, leaves: number[], excluded: Exclusions): PlacementResult {
    const s = this.snapshot;
    const counts = this.counts;
    const rank = s.ranks();
    const sorted = leaves.filter((d) => counts.podCount[d]! > 0).sort((a, b) => rank[a]! - rank[b]!);
    const levels = s.hostnameLowest ? [HOSTNAME_LABEL] : [...s.levels];
    const valuesOf = (d: number) => (s.hostnameLowest ? [s.values(d)[s.levels.length - 1]!] : [...s.values(d)]);
    const workers: Assignment = { levels, domains: sorted.map((d) => ({ values: valuesOf(d), count: counts.podCount[d]! })) };
    if (plan.leaders === 0) return { ok: true, workers };
    const leaderLeaf = leaves.find((d) => counts.leaderCount[d]! > 0);
    if (leaderLeaf === undefined) return { ok: false, reason: this.notFitMessage(plan, excluded, 0, 1, true) };
    return { ok: true, workers, leader: { levels, domains: [{ values: valuesOf(leaderLeaf), count: 1 }] } };
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

/** `reason: count` entries of a count pass, sorted alphabetically. */
function exclusionList(e: Exclusions): string[] {
  const parts: string[] = [];
  if (e.topologyDomain > 0) parts.push(`topologyDomain: ${e.topologyDomain}`);
  for (let i = 1; i < e.byVerdict.length; i++) if (e.byVerdict[i]! > 0) parts.push(`${e.reasons[i - 1]}: ${e.byVerdict[i]}`);
  for (let k = 0; k < e.byRequest.length; k++) if (e.byRequest[k]! > 0) parts.push(`resource "${e.requestNames[k]}": ${e.byRequest[k]}`);
  return parts.sort();
}

function withoutPods(a: ResourceAmounts): ResourceAmounts {
  const out: ResourceAmounts = {};
  for (const k in a) if (k !== 'pods') out[k] = a[k]!;
  return out;
}
