// Volcano's networkTopology as a PlacementRequest (volcano-hypernode.md §4): the adapter
// that makes `mode: hard|soft` with `highestTierAllowed` / `highestTierName` the same
// internal request as Kueue's annotations.
//
// - hard with a limit T below the virtual root: search from the lowest tier up, at most to
//   the highest tier <= T, the whole gang inside one domain: a *preferred* request at the
//   lowest tier with a ceiling at tier T (the engine treats the ceiling as required);
// - soft, or hard with T >= the root tier: the same search with no ceiling, so it splits
//   across the top level (the peer's virtual root) only when nothing smaller fits;
// - hard with no tier (or an unknown tierName): no constraint (the peer's flat path);
// - partitions (a task's partitionPolicy, a HyperJob's replicated jobs): slices of that
//   size, each inside one domain of the highest tier <= the partition's limit.
// Tier names resolve through the HyperNodes' `spec.tierName`.

import type { StringMap } from '../api/objects.ts';
import { VolcanoAnnotation } from '../api/volcano-objects.ts';
import { tierOfLevelKey } from '../topology/hypernode-tree.ts';
import type { TopologySnapshot } from '../topology/snapshot.ts';
import type { PlacementRequest } from './request.ts';

/** PodSet template annotation: the partition (slice) size of a task or replicated job. */
export const PARTITION_SIZE_ANNOTATION = 'topoqueue.io/partition-size';

export interface NetworkTopologyRequest {
  mode: 'hard' | 'soft';
  highestTier?: number;
  highestTierName?: string;
}

/** Reads the three `volcano.sh/network-topology-*` annotations; undefined when absent. */
export function networkTopologyFromAnnotations(a: StringMap | undefined): NetworkTopologyRequest | undefined {
  if (!a) return undefined;
  const mode = a[VolcanoAnnotation.NetworkTopologyMode];
  const tier = a[VolcanoAnnotation.NetworkTopologyHighestTier];
  const name = a[VolcanoAnnotation.NetworkTopologyHighestTierName];
  if (mode === undefined && tier === undefined && name === undefined) return undefined;
  const t = tier !== undefined && /^(0|[1-9][0-9]*)$/.test(tier.trim()) ? Number(tier.trim()) : undefined;
  return { mode: mode?.toLowerCase() === 'soft' ? 'soft' : 'hard', highestTier: t, highestTierName: name };
}

export function hasNetworkTopology(a: StringMap | undefined): boolean {
  return networkTopologyFromAnnotations(a) !== undefined || a?.[PARTITION_SIZE_ANNOTATION] !== undefined;
}

const VOLCANO_GROUPS = ['batch.volcano.sh/', 'scheduling.volcano.sh/', 'training.volcano.sh/'];

/** Whether an apiVersion is one of Volcano's groups. */
export function isVolcanoApiVersion(apiVersion: string): boolean {
  return VOLCANO_GROUPS.some((g) => apiVersion.startsWith(g));
}

/**
 * A Workload scheduled the Volcano way: it asks for a network topology, or it was built from
 * a Volcano object (a Volcano Job without networkTopology still goes on the HyperNode
 * topology, unconstrained, as the peer's flat path does).
 */
export function isVolcanoWorkload(w: {
  metadata: { annotations?: StringMap; ownerReferences?: { apiVersion: string }[] };
  spec: { podSets: { template: { metadata?: { annotations?: StringMap } } }[] };
}): boolean {
  return workloadHasNetworkTopology(w) || (w.metadata.ownerReferences ?? []).some((o) => isVolcanoApiVersion(o.apiVersion));
}

/** Whether a Workload asks for a network topology at job or task level. */
export function workloadHasNetworkTopology(w: {
  metadata: { annotations?: StringMap };
  spec: { podSets: { template: { metadata?: { annotations?: StringMap } } }[] };
}): boolean {
  return hasNetworkTopology(w.metadata.annotations) || w.spec.podSets.some((p) => hasNetworkTopology(p.template.metadata?.annotations));
}

/** What the snapshot's levels offer: tier per level index (undefined for the hostname). */
interface TierLevels {
  /** `{tier, key}` ascending by tier. */
  tiers: { tier: number; key: string }[];
  rootTier: number;
}

function tierLevels(levels: readonly string[]): TierLevels {
  const tiers = levels
    .map((key) => ({ tier: tierOfLevelKey(key), key }))
    .filter((x): x is { tier: number; key: string } => x.tier !== undefined);
  tiers.sort((a, b) => a.tier - b.tier);
  return { tiers, rootTier: tiers.length === 0 ? 1 : tiers[tiers.length - 1]!.tier + 1 };
}

/** The limit a topology resolves to: a tier, `root` (whole cluster) or `none` (no constraint). */
function limitOf(
  t: NetworkTopologyRequest | undefined,
  rootTier: number,
  tierOfName: (n: string) => number | undefined,
  inherited?: number,
): number | 'none' {
  if (!t) return 'none';
  if (t.mode === 'soft') return inherited ?? rootTier;
  const tier = t.highestTier ?? (t.highestTierName !== undefined ? tierOfName(t.highestTierName) : undefined);
  return tier === undefined ? 'none' : tier;
}

/**
 * Applies a Workload's (job) and PodSet's (task) network topology to a base request on a
 * HyperNode topology snapshot. Returns the request, or a reason when the limit leaves no
 * domain at all.
 */
export function applyNetworkTopology(
  base: PlacementRequest,
  levels: readonly string[],
  job: NetworkTopologyRequest | undefined,
  task: { topology?: NetworkTopologyRequest; partitionSize?: number },
  tierOfName: (name: string) => number | undefined,
): PlacementRequest | string {
  const { tiers, rootTier } = tierLevels(levels);
  const highestAtOrBelow = (t: number) => {
    let key: string | undefined;
    for (const x of tiers) if (x.tier <= t) key = x.key;
    return key;
  };
  const jobLimit = limitOf(job, rootTier, tierOfName);
  const req: PlacementRequest = { ...base, sliceLayers: [], mode: 'unconstrained', level: undefined, maxLevel: undefined, implied: false };

  // Partitions: slices inside one domain of the highest tier <= the partition's limit.
  let sliceKey: string | undefined;
  if (task.partitionSize !== undefined && task.partitionSize > 0) {
    let limit = limitOf(task.topology, rootTier, tierOfName, typeof jobLimit === 'number' ? jobLimit : undefined);
    if (typeof limit === 'number' && typeof jobLimit === 'number') limit = Math.min(limit, jobLimit);
    if (typeof limit === 'number' && limit < rootTier) {
      sliceKey = highestAtOrBelow(limit);
      if (sliceKey === undefined) return `no HyperNode tier is at or below ${limit}: the partitions of ${base.podSetName} cannot be placed`;
      req.sliceLayers = [{ topology: sliceKey, size: task.partitionSize }];
    }
  }

  const lowest = tiers[0]?.key;
  // No job constraint: slices alone (searched from the top), or nothing at all.
  if (jobLimit === 'none') return req.sliceLayers.length > 0 ? req : { ...req, implied: true };
  if (lowest === undefined) {
    if (jobLimit < rootTier) return `no HyperNode of tier <= ${jobLimit}: the job cannot be placed`;
    return { ...req, implied: req.sliceLayers.length === 0 };
  }
  const start = sliceKey ?? lowest;
  if (jobLimit >= rootTier) return { ...req, mode: 'preferred', level: start };
  const ceiling = highestAtOrBelow(jobLimit);
  if (ceiling === undefined) return `no HyperNode of tier <= ${jobLimit}: the job cannot be placed`;
  // A partition limit above the job's is clamped to it (the peer does not validate this).
  const startTier = tierOfLevelKey(start)!;
  return { ...req, mode: 'preferred', level: startTier > jobLimit ? ceiling : start, maxLevel: ceiling };
}

/**
 * With a ceiling at tier T, a node qualifies only if some HyperNode of tier <= T contains it
 * (the peer's candidates are HyperNodes); a node in no HyperNode, or only in higher ones,
 * stands alone in the tree and must not pass for a tier-T domain. `leafTier(node)` is the
 * tier of the lowest HyperNode containing the node.
 */
export function hyperNodeLeafFilter(
  snapshot: TopologySnapshot,
  req: PlacementRequest,
  leafTier: (node: string) => number | undefined,
): ((leaf: number) => boolean) | undefined {
  if (req.maxLevel === undefined) return undefined;
  const ceiling = tierOfLevelKey(req.maxLevel);
  if (ceiling === undefined) return undefined;
  return (leaf) => {
    const n = snapshot.leafFirstNode(leaf);
    if (n < 0) return false;
    const t = leafTier(snapshot.node(n).name);
    return t !== undefined && t <= ceiling;
  };
}
