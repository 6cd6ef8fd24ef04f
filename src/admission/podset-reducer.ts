// The PodSet reducer (Kueue's flavorassigner/podset_reducer.go): smaller pod counts for a
// Workload that does not fit whole. Pure counts; the caller says what fits.
//
// - partial admission (Kueue's `minCount`): every PodSet with a minCount shrinks in
//   proportion, `count - delta*i/totalDelta`, never below its minCount;
// - gangs (koordinator-gang.md): pods are dropped from the PodSets in proportion to what
//   each may lose, the total never below the gang's minimum (and at least one pod);
// - NonStrict gangs accumulating: every total from 1 to min-1, for the largest part that fits;
// - `searchLargest` finds the largest candidate that fits by bisection (fitting is monotone
//   in fewer pods).

import type { WorkloadInfo } from './workload-info.ts';
import { totalPods } from './workload-info.ts';

/** Candidate counts, largest first: `at(i)` for i in 1..n. */
export interface ReductionSteps {
  n: number;
  at: (i: number) => Map<string, number>;
}

/** The Workload's counts, capped by a gang's total-number (the excess taken from the last PodSets). */
export function fullCounts(info: WorkloadInfo): Map<string, number> {
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
export function shrinkSteps(info: WorkloadInfo, full: Map<string, number>, partial: boolean): ReductionSteps {
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
  return {
    n: totalDelta,
    at: (i) => new Map(info.podSets.map((p, j) => [p.name, (full.get(p.name) ?? p.count) - Math.floor((deltas[j]! * i) / totalDelta)])),
  };
}

/** Full counts minus `d` pods, taken from the PodSets in proportion to what each may lose (never below its floor). */
export function dropPods(info: WorkloadInfo, full: Map<string, number>, floors: readonly number[], d: number): Map<string, number> {
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
export function belowMinimum(info: WorkloadInfo, full: Map<string, number>): Map<string, number>[] {
  const T = [...full.values()].reduce((a, b) => a + b, 0);
  const min = Math.min(info.gang?.min ?? T, T);
  const out: Map<string, number>[] = [];
  const floors = info.podSets.map(() => 0);
  for (let k = 1; k < min; k++) out.push(dropPods(info, full, floors, T - k));
  return out;
}

/**
 * The smallest step i (largest counts) whose candidate fits, with what `fits` answered; or
 * undefined when not even the smallest (`at(n)`) fits.
 */
export function searchLargest<A>(
  steps: ReductionSteps,
  fits: (counts: Map<string, number>) => A | undefined,
): { a: A; counts: Map<string, number> } | undefined {
  const probe = (i: number) => {
    const counts = steps.at(i);
    const a = fits(counts);
    return a === undefined ? undefined : { a, counts };
  };
  let lo = 1;
  let hi = steps.n;
  if (hi <= 0 || !probe(hi)) return undefined;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (probe(mid)) hi = mid;
    else lo = mid + 1;
  }
  return probe(lo);
}

/**
 * The largest k such that `below[k-1]` fits (bisection), with what `fits` answered; k = 0
 * and no answer when none does.
 */
export function searchBelowMinimum<A>(
  below: readonly Map<string, number>[],
  fits: (counts: Map<string, number>) => A | undefined,
): { k: number; best?: { a: A; counts: Map<string, number> } } {
  let lo = 0;
  let hi = below.length;
  let best: { a: A; counts: Map<string, number> } | undefined;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    const a = fits(below[mid - 1]!);
    if (a !== undefined) {
      lo = mid;
      best = { a, counts: below[mid - 1]! };
    } else {
      hi = mid - 1;
    }
  }
  return { k: lo, best };
}
