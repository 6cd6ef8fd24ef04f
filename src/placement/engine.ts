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
import { formatTaint, matchesNodeSelector, matchesRequiredAffinity, preferredAffinityScore, untoleratedTaint } from '../topology/node-match.ts';
import type { TopologySnapshot } from '../topology/snapshot.ts';
import type { Assignment } from './assignment.ts';
import { balancedPlacement } from './balanced.ts';
import { type Algorithm, algorithmFor, type PlacementRequest, type Profile } from './request.ts';
import { HOSTNAME_LABEL } from '../api/keys.ts';

const MAX_INT32 = 2147483647;

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

export type PlacementResult =
  | { ok: true; workers: Assignment; leader?: Assignment }
  | { ok: false; reason: string };

/** Usage assumed by earlier PodSets of the same pass, keyed by leaf. */
export class AssumedUsage {
  private readonly byLeaf = new Map<number, ResourceAmounts>();

  add(leaf: number, perPod: ResourceAmounts, count: number): void {
    let acc = this.byLeaf.get(leaf);
    if (!acc) {
      acc = {};
      this.byLeaf.set(leaf, acc);
    }
    for (const k in perPod) acc[k] = (acc[k] ?? 0) + perPod[k]! * count;
    acc.pods = (acc.pods ?? 0) + count;
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

  get size(): number {
    return this.byLeaf.size;
  }
}

/** Per-domain counters of one placement attempt. */
class State {
  cap = 0;
  pc = new Int32Array(0);
  sc = new Int32Array(0);
  lc = new Int32Array(0);
  pcl = new Int32Array(0);
  scl = new Int32Array(0);
  aff = new Float64Array(0);

  reset(n: number): void {
    if (n > this.cap) {
      this.cap = Math.max(n, this.cap * 2);
      this.pc = new Int32Array(this.cap);
      this.sc = new Int32Array(this.cap);
      this.lc = new Int32Array(this.cap);
      this.pcl = new Int32Array(this.cap);
      this.scl = new Int32Array(this.cap);
      this.aff = new Float64Array(this.cap);
    } else {
      this.pc.fill(0, 0, n);
      this.sc.fill(0, 0, n);
      this.lc.fill(0, 0, n);
      this.pcl.fill(0, 0, n);
      this.scl.fill(0, 0, n);
      this.aff.fill(0, 0, n);
    }
  }
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
  private readonly st = new State();
  private readonly eligibilityCache = new Map<string, Eligibility>();
  /** Exclusion counts of the last fillInCounts, turned into text only for a message. */
  private excl = { topologyDomain: 0, byVerdict: new Int32Array(0), reasons: [] as string[], byRequest: new Int32Array(0), requestNames: [] as string[] };
  private totalLeaves = 0;

  constructor(snapshot: TopologySnapshot) {
    this.snapshot = snapshot;
  }

  /** Places one PodSet (or a leader/worker group) on the snapshot. */
  place(req: PlacementRequest, options: PlacementOptions = {}): PlacementResult {
    const plan = this.resolve(req, options);
    if (typeof plan === 'string') return { ok: false, reason: plan };
    this.fillInCounts(plan, options);

    if (options.profile === 'BalancedPlacement' && plan.mode === 'preferred' && plan.ceiling === undefined && plan.leaders === 0 && req.sliceLayers.length <= 1) {
      const choice = balancedPlacement({ snapshot: this.snapshot, sc: this.st.sc, pc: this.st.pc, preferredLevel: plan.searchLevel, sliceLevel: plan.sliceLevel, units: plan.units });
      if (choice) {
        const chosen: number[] = [];
        for (const { domain, units } of choice.domains) {
          this.st.sc[domain] = units;
          this.st.pc[domain] = units * plan.sliceSize;
          chosen.push(domain);
        }
        const leaves = this.descend(plan, choice.level, chosen, false);
        if (leaves) return this.emit(plan, leaves);
      }
      // Silently fall back to BestFit on fresh counters.
      this.fillInCounts(plan, options);
    }

    const fit = this.findFitLevel(plan, plan.searchLevel);
    if (typeof fit === 'string') return { ok: false, reason: fit };
    this.trim(plan, fit.domains);
    const leaves = this.descend(plan, fit.level, fit.domains, true);
    if (!leaves) return { ok: false, reason: this.notFitMessage(plan, 0) };
    return this.emit(plan, leaves);
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
    return this.snapshot.domainsAt(level).map((d) => ({ domain: d, pods: this.st.pc[d]! }));
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
      if (sliceLevel < searchLevel && req.mode !== 'unconstrained') return `podset slice topology ${outer.topology} is above the podset topology ${key}`;
      sliceSize = outer.size;
      let prevIdx = sliceLevel;
      let prev = outer;
      for (let i = 1; i < layers.length; i++) {
        const layer = layers[i]!;
        const idx = levelIdx(layer.topology);
        if (idx < 0) return `no requested topology level for additional slice layer: ${layer.topology}`;
        if (idx <= prevIdx) return `additional slice layer topology ${layer.topology} must be at a lower level than ${prev.topology}`;
        if (!(layer.size > 0) || prev.size % layer.size !== 0) return `additional slice layer size ${layer.size} must evenly divide parent layer size ${prev.size}`;
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
    const key = JSON.stringify([req.nodeSelector ?? null, req.tolerations, req.requiredAffinity ?? null, useAffinity ? (req.preferredAffinity ?? null) : null]);
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

  private fillInCounts(plan: Plan, options: PlacementOptions): void {
    const s = this.snapshot;
    const st = this.st;
    st.reset(s.domainCount);
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
    const leaderReq: ResourceAmounts | undefined = req.leader ? { pods: 1 + (req.leader.requests.pods ?? 0), ...withoutPods(req.leader.requests) } : undefined;
    const leaderNames = leaderReq ? Object.keys(leaderReq).sort() : [];
    const leaderIdx = leaderNames.map((n) => s.resourceIndex(n));
    // Interning may have grown the arrays: read them only now.
    const { free: freeA, tas: tasA, R: RR } = s.capacityArrays();

    const elig = this.eligibility(req, plan.useAffinity);
    const leaves = s.leaves();
    const assumed = options.assumed;
    const simulateEmpty = options.simulateEmpty === true;
    const within = options.requiredDomain;
    const eligible = options.leafEligible;
    this.totalLeaves = leaves.length;
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
        if (extra) rem -= extra[reqName[k]!] ?? 0;
        const f = rem <= 0 ? 0 : Math.floor(rem / reqVal[k]!);
        if (f < fit) {
          fit = f;
          limiting = k;
        }
      }
      if (fit === 0) byRequest[limiting]!++;
      st.pc[leaf] = fit;
      if (elig && plan.useAffinity) st.aff[leaf] = elig.score[leaf]!;
      if (leaderReq) {
        // The leader fits when one leader pod fits; workers then fit in what is left.
        let leaderFits = true;
        for (let k = 0; k < leaderIdx.length; k++) {
          const r = leaderIdx[k]!;
          let rem = freeA[base + r]!;
          if (simulateEmpty) rem += tasA[base + r]!;
          if (extra) rem -= extra[leaderNames[k]!] ?? 0;
          if (rem < leaderReq[leaderNames[k]!]!) leaderFits = false;
        }
        st.lc[leaf] = leaderFits ? 1 : 0;
        if (leaderFits) {
          let w = MAX_INT32;
          for (let k = 0; k < nr; k++) {
            const r = reqIdx[k]!;
            let rem = freeA[base + r]!;
            if (simulateEmpty) rem += tasA[base + r]!;
            if (extra) rem -= extra[reqName[k]!] ?? 0;
            rem -= leaderReq[reqName[k]!] ?? 0;
            const f = rem <= 0 ? 0 : Math.floor(rem / reqVal[k]!);
            if (f < w) w = f;
          }
          st.pcl[leaf] = w;
        }
      } else {
        st.pcl[leaf] = fit;
      }
      if (s.levels.length - 1 === plan.sliceLevel) {
        st.sc[leaf] = Math.floor(fit / plan.sliceSize);
        st.scl[leaf] = Math.floor(st.pcl[leaf]! / plan.sliceSize);
      }
    }
    this.excl = { topologyDomain, byVerdict, reasons: elig?.reasons ?? [], byRequest, requestNames: reqName };
    this.rollUp(plan);
  }

  private isWithin(leaf: number, ancestor: number): boolean {
    const s = this.snapshot;
    for (let d = leaf; d >= 0; d = s.parent(d)) if (d === ancestor) return true;
    return false;
  }

  /** Bottom-up roll-up of the counters (§5). */
  private rollUp(plan: Plan): void {
    const s = this.snapshot;
    const st = this.st;
    const withLeader = plan.leaders > 0;
    for (let l = s.levels.length - 2; l >= 0; l--) {
      const u = plan.unitAt[l + 1]!;
      for (const d of s.domainsAt(l)) {
        let pc = 0;
        let sc = 0;
        let lc = 0;
        let aff = 0;
        let minPenalty = Infinity;
        let minSlicePenalty = Infinity;
        for (const c of s.children(d)) {
          const cpc = u === 1 ? st.pc[c]! : Math.floor(st.pc[c]! / u) * u;
          pc += cpc;
          sc += st.sc[c]!;
          aff += st.aff[c]!;
          if (withLeader) {
            if (st.lc[c]! > 0) {
              lc = 1;
              const cpcl = u === 1 ? st.pcl[c]! : Math.floor(st.pcl[c]! / u) * u;
              const p = cpc - cpcl;
              if (p < minPenalty) minPenalty = p;
              const sp = st.sc[c]! - st.scl[c]!;
              if (sp < minSlicePenalty) minSlicePenalty = sp;
            }
          }
        }
        // Sums are clamped to int32 as the peer's counters are.
        const pcl = withLeader ? (lc ? pc - minPenalty : 0) : pc;
        st.pc[d] = Math.min(pc, MAX_INT32);
        st.aff[d] = aff;
        st.lc[d] = lc;
        st.pcl[d] = Math.min(pcl, MAX_INT32);
        if (l < plan.sliceLevel) {
          st.sc[d] = Math.min(sc, MAX_INT32);
          st.scl[d] = Math.min(withLeader ? (lc ? sc - minSlicePenalty : 0) : sc, MAX_INT32);
        } else if (l === plan.sliceLevel) {
          st.sc[d] = Math.floor(Math.min(pc, MAX_INT32) / plan.sliceSize);
          st.scl[d] = Math.floor(Math.min(pcl, MAX_INT32) / plan.sliceSize);
        } else {
          st.sc[d] = 0;
          st.scl[d] = 0;
        }
      }
    }
  }

  // ---- ordering -----------------------------------------------------------------------

  /** BestFit: slices desc, pods asc; LFC: slices asc, pods asc; then level values. */
  private sortPlain(list: number[], plan: Plan, cap: Int32Array = this.st.sc): number[] {
    const { pc, aff } = this.st;
    const rank = this.snapshot.ranks();
    const lfc = plan.algo === 'LeastFreeCapacity';
    const useAff = plan.useAffinity;
    return list.sort((a, b) => {
      if (useAff && aff[a] !== aff[b]) return aff[b]! - aff[a]!;
      if (cap[a] !== cap[b]) return lfc ? cap[a]! - cap[b]! : cap[b]! - cap[a]!;
      if (pc[a] !== pc[b]) return pc[a]! - pc[b]!;
      return rank[a]! - rank[b]!;
    });
  }

  /** Leader count desc, then with-leader slices and pods as above. */
  private sortWithLeader(list: number[], plan: Plan, capL: Int32Array = this.st.scl): number[] {
    const { lc, pcl, aff } = this.st;
    const rank = this.snapshot.ranks();
    const lfc = plan.algo === 'LeastFreeCapacity';
    const useAff = plan.useAffinity;
    return list.sort((a, b) => {
      if (lc[a] !== lc[b]) return lc[b]! - lc[a]!;
      if (useAff && aff[a] !== aff[b]) return aff[b]! - aff[a]!;
      if (capL[a] !== capL[b]) return lfc ? capL[a]! - capL[b]! : capL[b]! - capL[a]!;
      if (pcl[a] !== pcl[b]) return pcl[a]! - pcl[b]!;
      return rank[a]! - rank[b]!;
    });
  }

  /**
   * "Optimize the last domain": the candidate from `from` on with the smallest capacity
   * that still holds `need` (first on ties); with preferred affinity only the leading
   * block sharing the top score is searched.
   */
  private bestFit(list: readonly number[], from: number, need: number, cap: Int32Array, leaderOnly: boolean, plan: Plan): number {
    const { lc, aff } = this.st;
    let best = -1;
    const topAff = aff[list[from]!]!;
    for (let i = from; i < list.length; i++) {
      const d = list[i]!;
      if (plan.useAffinity && aff[d] !== topAff) break;
      if (leaderOnly && lc[d] === 0) continue;
      if (cap[d]! >= need && (best < 0 || cap[d]! < cap[list[best]!]!)) best = i;
    }
    return best < 0 ? from : best;
  }

  // ---- phase 2a: the fit level ------------------------------------------------------------

  private findFitLevel(plan: Plan, level: number): { level: number; domains: number[] } | string {
    const s = this.snapshot;
    const st = this.st;
    const domains = s.domainsAt(level);
    if (domains.length === 0) return `no topology domains at level: ${s.levels[level]}`;
    const sorted = this.sortWithLeader(domains.slice(), plan);
    const need = plan.units;
    const fitsAll = (d: number) => st.scl[d]! >= need && st.lc[d]! >= plan.leaders;
    let top = sorted[0]!;
    if (plan.algo === 'BestFit' && fitsAll(top)) {
      const i = this.bestFit(sorted, 0, need, st.scl, plan.leaders > 0, plan);
      top = sorted[i]!;
      return { level, domains: [top] };
    }
    // A preferred request with a ceiling behaves as required once it reaches the ceiling.
    const requiredHere = plan.mode === 'required' || (plan.ceiling !== undefined && level <= plan.ceiling);
    if (plan.algo === 'LeastFreeCapacity') {
      for (const d of sorted) if (fitsAll(d)) return { level, domains: [d] };
      if (requiredHere) return this.notFitMessage(plan, st.pc[sorted[sorted.length - 1]!]!);
    }
    if (requiredHere) {
      if (plan.useAffinity) for (const d of sorted) if (fitsAll(d)) return { level, domains: [d] };
      return this.notFitMessage(plan, st.sc[top]!);
    }
    if (plan.mode === 'preferred' && level > 0) return this.findFitLevel(plan, level - 1);
    // Greedy multi-domain at this level.
    const taken = this.consume(domains.slice(), plan, need, plan.leaders, plan.sliceSize, true);
    if (!taken.ok) {
      if (taken.leadersPlaced < plan.leaders) return this.notFitMessage(plan, taken.leadersPlaced, plan.leaders, true);
      return this.notFitMessage(plan, need - taken.remaining);
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
    const st = this.st;
    const cap = useSlices ? st.sc : st.pc;
    const capL = useSlices ? st.scl : st.pcl;
    const bf = plan.algo === 'BestFit';
    const taken: number[] = [];
    let remaining = need;
    let leadersPlaced = 0;
    let rest = list;
    // Below the slice level the slice counters are 0, so children order by pods ascending
    // (kueue-tas.md §5, §6.3); the capacity compared is still the pod count.
    const orderKey = useSlices ? cap : st.sc;
    const orderKeyL = useSlices ? capL : st.scl;
    if (leaders > 0) {
      const sorted = this.sortWithLeader(list.slice(), plan, orderKeyL);
      let total = 0;
      for (const d of list) total += cap[d]!;
      // The leader's domain: the first leader-capable one (with-leader order) whose leader
      // penalty still leaves enough in total; BestFit takes the smallest that holds it all.
      let i = -1;
      for (let k = 0; k < sorted.length; k++) {
        const d = sorted[k]!;
        if (st.lc[d] === 0) break;
        if (total - (cap[d]! - capL[d]!) >= remaining) {
          i = k;
          break;
        }
      }
      if (i < 0) return { ok: false, domains: [], remaining, leadersPlaced };
      if (bf && capL[sorted[i]!]! >= remaining) i = this.bestFit(sorted, i, remaining, capL, true, plan);
      const d = sorted[i]!;
      const t = Math.min(capL[d]!, remaining);
      st.pc[d] = t * unitSize;
      if (useSlices) st.sc[d] = t;
      st.lc[d] = 1;
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
      st.pc[d] = t * unitSize;
      if (useSlices) st.sc[d] = t;
      st.lc[d] = 0;
      remaining -= t;
      taken.push(d);
    }
    return { ok: remaining === 0, domains: taken, remaining, leadersPlaced };
  }

  /** A single chosen domain takes exactly the need (greedy picks are trimmed already). */
  private trim(plan: Plan, chosen: number[]): void {
    if (chosen.length !== 1) return;
    const d = chosen[0]!;
    this.st.pc[d] = plan.units * plan.sliceSize;
    this.st.sc[d] = plan.units;
    this.st.lc[d] = plan.leaders;
  }

  /**
   * Walks down from `fitLevel`. Above the slice level the children of all chosen domains
   * are pooled (`pooled`) or, for balanced placement, distributed per parent in slices;
   * at and below it each parent's pods go to its own children.
   */
  private descend(plan: Plan, fitLevel: number, chosen: number[], pooled: boolean): number[] | undefined {
    const s = this.snapshot;
    const st = this.st;
    const L = s.levels.length;
    let current = chosen;
    for (let l = fitLevel; l + 1 < L; l++) {
      const next: number[] = [];
      if (l < plan.sliceLevel && !pooled) {
        for (const d of current) {
          const r = this.consume(s.children(d).slice(), plan, st.sc[d]!, st.lc[d]!, plan.sliceSize, true);
          if (!r.ok) return undefined;
          next.push(...r.domains);
        }
      } else if (l < plan.sliceLevel) {
        const pooled: number[] = [];
        for (const d of current) for (const c of s.children(d)) pooled.push(c);
        const leaders = current.reduce((n, d) => n + st.lc[d]!, 0);
        const r = this.consume(pooled, plan, plan.units, leaders, plan.sliceSize, true);
        if (!r.ok) return undefined;
        next.push(...r.domains);
      } else {
        const u = plan.unitAt[l + 1]!;
        for (const d of current) {
          const kids = s.children(d).slice();
          if (u > 1) {
            for (const c of kids) {
              st.sc[c] = Math.floor(st.pc[c]! / u);
              st.scl[c] = Math.floor(st.pcl[c]! / u);
            }
          }
          const r = this.consume(kids, plan, Math.floor(st.pc[d]! / u), st.lc[d]!, u, u > 1);
          if (!r.ok) return undefined;
          next.push(...r.domains);
        }
      }
      current = next;
    }
    return current;
  }

  // ---- phase 3: emit -------------------------------------------------------------------------

  private emit(plan: Plan, leaves: number[]): PlacementResult {
    const s = this.snapshot;
    const st = this.st;
    const rank = s.ranks();
    const sorted = leaves.filter((d) => st.pc[d]! > 0).sort((a, b) => rank[a]! - rank[b]!);
    const levels = s.hostnameLowest ? [HOSTNAME_LABEL] : [...s.levels];
    const valuesOf = (d: number) => (s.hostnameLowest ? [s.values(d)[s.levels.length - 1]!] : [...s.values(d)]);
    const workers: Assignment = { levels, domains: sorted.map((d) => ({ values: valuesOf(d), count: st.pc[d]! })) };
    if (plan.leaders === 0) return { ok: true, workers };
    const leaderLeaf = leaves.find((d) => st.lc[d]! > 0);
    if (leaderLeaf === undefined) return { ok: false, reason: this.notFitMessage(plan, 0, 1, true) };
    return { ok: true, workers, leader: { levels, domains: [{ values: valuesOf(leaderLeaf), count: 1 }] } };
  }

  // ---- messages ------------------------------------------------------------------------------

  private notFitMessage(plan: Plan, fit: number, total?: number, leader = false): string {
    const s = this.snapshot;
    const n = total ?? plan.units;
    let msg: string;
    if (plan.req.sliceLayers.length > 1 && !leader) {
      msg = `topology "${s.name}" doesn't allow to fit${this.multiLayerDetail(plan)}`;
    } else {
      const unit = plan.sliceSize > 1 && !leader ? 'slice(s)' : 'pod(s)';
      msg = fit === 0 ? `topology "${s.name}" doesn't allow to fit any of ${n} ${unit}` : `topology "${s.name}" allows to fit only ${fit} out of ${n} ${unit}`;
    }
    const parts = this.exclusionList();
    if (parts.length > 0) {
      msg += `. Total nodes: ${this.totalLeaves}; excluded: ${parts.join(', ')}`;
    }
    return msg;
  }

  /** `reason: count` entries of the last count pass, sorted alphabetically. */
  private exclusionList(): string[] {
    const e = this.excl;
    const parts: string[] = [];
    if (e.topologyDomain > 0) parts.push(`topologyDomain: ${e.topologyDomain}`);
    for (let i = 1; i < e.byVerdict.length; i++) if (e.byVerdict[i]! > 0) parts.push(`${e.reasons[i - 1]}: ${e.byVerdict[i]}`);
    for (let k = 0; k < e.byRequest.length; k++) if (e.byRequest[k]! > 0) parts.push(`resource "${e.requestNames[k]}": ${e.byRequest[k]}`);
    return parts.sort();
  }

  /** Per layer, how many slices fit in the best domain at the requested level. */
  private multiLayerDetail(plan: Plan): string {
    const s = this.snapshot;
    const st = this.st;
    const domains = s.domainsAt(plan.searchLevel);
    let best = -1;
    for (const d of domains) {
      if (best < 0 || st.sc[d]! > st.sc[best]! || (st.sc[d] === st.sc[best] && s.id(d) < s.id(best))) best = d;
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
    if (s.level(d) === level) return Math.floor(this.st.pc[d]! / size);
    let n = 0;
    for (const c of s.children(d)) n += this.slicesUnder(c, level, size);
    return n;
  }
}

function withoutPods(a: ResourceAmounts): ResourceAmounts {
  const out: ResourceAmounts = {};
  for (const k in a) if (k !== 'pods') out[k] = a[k]!;
  return out;
}
