// What the topology would allow a pending Workload now, level by level: for its first PodSet
// with a topology request, the engine is asked for a required placement at each level of the
// first TAS flavor that suits it, lowest level first. The answer names the lowest level one
// domain of which holds every pod ("the best level that would fit"), and for the levels
// below it how many pods the best domain holds. Slices are left out: the question is where
// the whole PodSet fits.

import type { Workload } from '../api/objects.ts';
import { podRequests } from '../api/resources.ts';
import { isVolcanoWorkload } from './network-topology.ts';
import { flavorMismatch, placementRequest, podSetGroups, type TasFlavor } from './workload-placement.ts';

export interface LevelFit {
  level: string;
  /** Pods that fit in the best single domain of the level (capped at the count). */
  fit: number;
}

export interface FitByLevel {
  podSet: string;
  flavor: string;
  count: number;
  /** Lowest level first. */
  levels: LevelFit[];
  /** The lowest level that holds every pod in one domain, or null when none does. */
  best: string | null;
}

const FIT_ONLY = /allows to fit only (\d+) out of/;

/** The engine's answer at each level (see the header), or undefined when no TAS flavor suits the Workload. */
export function fitByLevel(w: Workload, flavors: readonly TasFlavor[]): FitByLevel | undefined {
  const volcano = isVolcanoWorkload(w);
  for (const group of podSetGroups(w.spec.podSets)) {
    const ps = group.workers;
    if (!ps.topologyRequest?.required && !ps.topologyRequest?.preferred) continue;
    const tf = flavors.find((f) => (f.implicit ?? false) === volcano && flavorMismatch(f, ps) === undefined);
    if (!tf) return undefined;
    let perPod;
    let leaderPerPod;
    try {
      perPod = podRequests(ps.template.spec);
      leaderPerPod = group.leader ? podRequests(group.leader.template.spec) : undefined;
    } catch {
      return undefined;
    }
    const base = placementRequest(group, tf.flavor, perPod, leaderPerPod);
    const levels: LevelFit[] = [];
    let best: string | null = null;
    for (const level of [...tf.snapshot.levels].reverse()) {
      const r = tf.engine.place({ ...base, mode: 'required', level, sliceLayers: [], implied: false, maxLevel: undefined });
      const fit = r.ok ? ps.count : Number(FIT_ONLY.exec(r.reason)?.[1] ?? 0);
      levels.push({ level, fit });
      if (r.ok) {
        best = level;
        break;
      }
    }
    return { podSet: ps.name, flavor: tf.flavor.metadata.name, count: ps.count, levels, best };
  }
  return undefined;
}
