// BalancedPlacement (KEP-2724 "Balanced placement", kueue-tas.md §10): for preferred
// requests, spread the units evenly over the fewest domains of two consecutive levels
// (the preferred level P and the one below it), inside one domain of the level above P.
//
// 1. candidate groups: each domain one level above P contributes its children (all
//    top-level domains form one group when P is the top level);
// 2. per group, over the sub-domains (the children of the group's domains when P is
//    above the slice level, else the group's domains): a greedy pass in BestFit order
//    finds how many sub-domains k are needed; the threshold T = floor(units / k), capped
//    by the capacity of the last one taken; sub-domains below T are pruned and the group
//    must still fit. Best group: highest T, then fewest domains at P;
// 3. choose the P-domains with a small DP (fewest domains, then least leftover capacity;
//    candidates ordered by leader count, with-leader slices, entropy of their children's
//    capacities, level values), then the sub-domains under them the same way (ordered by
//    level values); each gets T units and the remainder goes out in with-leader order,
//    each domain up to its capacity.
// Returns undefined when it cannot produce a result; the caller falls back to BestFit.
// Leader/worker groups and multi-layer slices are not balanced (they fall back): the
// KEP's table has neither, and the peer's leader variant is not specified precisely.

import type { TopologySnapshot } from '../topology/snapshot.ts';

export interface BalancedInput {
  snapshot: TopologySnapshot;
  /** Slices of the request that fit per domain (already rolled up). */
  sliceCount: Int32Array;
  /** Pods of the request that fit per domain (already rolled up). */
  podCount: Int32Array;
  preferredLevel: number;
  sliceLevel: number;
  units: number;
}

export interface BalancedChoice {
  /** Level of the domains that received units (P or P + 1). */
  level: number;
  /** Chosen domains with the units each receives. */
  domains: { domain: number; units: number }[];
}

export function balancedPlacement(input: BalancedInput): BalancedChoice | undefined {
  const { snapshot: s, sliceCount, podCount, preferredLevel: P, sliceLevel, units } = input;
  if (units <= 0) return undefined;
  const lookAtChildren = P < sliceLevel;
  const ranks = s.ranks();

  // 1. Candidate groups of P-domains.
  const groups: number[][] =
    P === 0
      ? [s.domainsAt(0).slice()]
      : s.domainsAt(P - 1).map((g) =>
          s
            .children(g)
            .slice()
            .sort((a, b) => ranks[a]! - ranks[b]!),
        );

  // 2. Threshold per group.
  let best: { pDomains: number[]; T: number; cap: Map<number, number>; pCount: number } | undefined;
  for (const pDomains of groups) {
    const subs = lookAtChildren ? pDomains.flatMap((d) => s.children(d)) : pDomains;
    const sorted = subs.filter((d) => sliceCount[d]! > 0).sort((a, b) => sliceCount[b]! - sliceCount[a]! || ranks[a]! - ranks[b]!);
    let k = 0;
    let acc = 0;
    let last = 0;
    for (const d of sorted) {
      if (acc >= units) break;
      acc += sliceCount[d]!;
      last = sliceCount[d]!;
      k++;
    }
    if (acc < units) continue;
    const T = Math.min(Math.floor(units / k), last);
    if (T <= 0 || (best && T < best.T)) continue;
    // Prune sub-domains below T and check the group still fits.
    const cap = new Map<number, number>();
    let total = 0;
    for (const d of subs) {
      const c = sliceCount[d]! >= T ? sliceCount[d]! : 0;
      cap.set(d, c);
      total += c;
    }
    if (total < units) continue;
    const pCap = (d: number) => (lookAtChildren ? s.children(d).reduce((n, c) => n + cap.get(c)!, 0) : cap.get(d)!);
    const pCount = minCount(pDomains.map(pCap), units);
    if (!best || T > best.T || pCount < best.pCount) best = { pDomains, T, cap, pCount };
  }
  if (!best) return undefined;
  const { T, cap } = best;

  // 3. Choose P-domains, then sub-domains, then hand out the units.
  let finalDomains: number[];
  if (lookAtChildren) {
    const pCap = (d: number) => s.children(d).reduce((n, c) => n + cap.get(c)!, 0);
    // Entropy of the children's pod counts (pruned children count 0).
    const entropy = (d: number) => shannon(s.children(d).map((c) => (cap.get(c)! > 0 ? podCount[c]! : 0)));
    const ordered = best.pDomains
      .filter((d) => pCap(d) > 0)
      .map((d) => ({ d, c: pCap(d), h: entropy(d) }))
      .sort((a, b) => b.c - a.c || b.h - a.h || ranks[a.d]! - ranks[b.d]!);
    const chosenP = chooseSubset(
      ordered.map((x) => x.d),
      ordered.map((x) => x.c),
      units,
    );
    if (!chosenP) return undefined;
    const subs = chosenP
      .flatMap((d) => s.children(d))
      .filter((c) => cap.get(c)! > 0)
      .sort((a, b) => ranks[a]! - ranks[b]!);
    const chosen = chooseSubset(
      subs,
      subs.map((d) => cap.get(d)!),
      units,
    );
    if (!chosen) return undefined;
    finalDomains = chosen;
  } else {
    const subs = best.pDomains.filter((d) => cap.get(d)! > 0).sort((a, b) => ranks[a]! - ranks[b]!);
    const chosen = chooseSubset(
      subs,
      subs.map((d) => cap.get(d)!),
      units,
    );
    if (!chosen) return undefined;
    finalDomains = chosen;
  }
  const base = Math.min(T, Math.floor(units / finalDomains.length));
  const out = finalDomains.map((d) => ({ domain: d, units: base }));
  let remaining = units - base * finalDomains.length;
  // With-leader order: slices desc, pods asc, level values.
  const handOrder = out
    .slice()
    .sort(
      (a, b) => cap.get(b.domain)! - cap.get(a.domain)! || podCount[a.domain]! - podCount[b.domain]! || ranks[a.domain]! - ranks[b.domain]!,
    );
  for (const o of handOrder) {
    if (remaining === 0) break;
    const extra = Math.min(cap.get(o.domain)! - o.units, remaining);
    o.units += extra;
    remaining -= extra;
  }
  if (remaining > 0) return undefined;
  return { level: lookAtChildren ? P + 1 : P, domains: out.filter((o) => o.units > 0) };
}

/** Fewest capacities (largest first) that reach `need`. */
function minCount(caps: number[], need: number): number {
  const sorted = caps.slice().sort((a, b) => b - a);
  let acc = 0;
  for (let i = 0; i < sorted.length; i++) {
    acc += sorted[i]!;
    if (acc >= need) return i + 1;
  }
  return Infinity;
}

/**
 * The subset with the fewest domains whose capacity reaches `need`, and among those the
 * least leftover; earlier candidates win ties. Pseudo-polynomial DP over (count, sum),
 * sums capped at need + max capacity.
 */
function chooseSubset(ids: number[], caps: number[], need: number): number[] | undefined {
  const k = minCount(caps, need);
  if (!Number.isFinite(k)) return undefined;
  const maxCap = Math.max(...caps);
  const limit = need + maxCap;
  // reach[c] maps a capped sum to the list of chosen indices (first found wins).
  const reach: Map<number, number[]>[] = Array.from({ length: k + 1 }, () => new Map());
  reach[0]!.set(0, []);
  for (let i = 0; i < ids.length; i++) {
    for (let c = k - 1; c >= 0; c--) {
      for (const [sum, picks] of reach[c]!) {
        const next = Math.min(sum + caps[i]!, limit);
        if (!reach[c + 1]!.has(next)) reach[c + 1]!.set(next, [...picks, i]);
      }
    }
  }
  let bestSum = Infinity;
  let bestPicks: number[] | undefined;
  for (const [sum, picks] of reach[k]!) {
    if (sum >= need && sum < bestSum) {
      bestSum = sum;
      bestPicks = picks;
    }
  }
  return bestPicks?.map((i) => ids[i]!);
}

function shannon(xs: number[]): number {
  const total = xs.reduce((a, b) => a + b, 0);
  if (total <= 0) return 0;
  let h = 0;
  for (const x of xs) if (x > 0) h -= (x / total) * Math.log(x / total);
  return h;
}
