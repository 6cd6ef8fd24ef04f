// Placing a whole Workload on TAS flavors: the TAS half of Kueue's flavor assigner.
//
// 1. per PodSet: per-pod requests, and the PodSet group it belongs to (leader + workers);
// 2. per group, in order of first appearance: the first TAS flavor that suits it
//    (node labels against selectors and affinity, taints against tolerations, the
//    requested levels present in the flavor's topology);
// 3. place the group on that flavor's snapshot against the usage assumed by the groups
//    placed before it; the first failure stops the workload (kueue-tas.md §9, §12).

import type { PodSet, ResourceFlavor, Toleration, Workload } from '../api/objects.ts';
import { podRequests, type ResourceAmounts } from '../api/resources.ts';
import { hasTopologyConstraint } from '../api/topology-request.ts';
import { formatTaint, matchesNodeSelector, matchesRequirement, untoleratedTaint } from '../topology/node-match.ts';
import type { TopologySnapshot } from '../topology/snapshot.ts';
import type { Assignment } from './assignment.ts';
import { AssumedUsage, type PlacementEngine, type PlacementOptions } from './engine.ts';
import type { PlacementRequest } from './request.ts';

/** A TAS ResourceFlavor with its snapshot and engine. */
export interface TasFlavor {
  flavor: ResourceFlavor;
  snapshot: TopologySnapshot;
  engine: PlacementEngine;
}

export interface PodSetPlacement {
  name: string;
  count: number;
  flavor: string;
  /** Requests of one pod (without `pods`). */
  perPod: ResourceAmounts;
  assignment: Assignment;
}

export type WorkloadPlacement =
  | { ok: true; podSets: PodSetPlacement[] }
  | { ok: false; podSet: string; reason: string };

export type WorkloadPlacementOptions = Omit<PlacementOptions, 'assumed' | 'requiredDomain'> & {
  /** `TASMultiLayerTopology` (default on): off refuses more than one slice layer. */
  multiLayerTopology?: boolean;
};

interface Group {
  /** Drives the placement: its topology request, selectors and tolerations. */
  workers: PodSet;
  leader?: PodSet;
}

/** PodSets grouped by `podSetGroupName`; the smaller (second on ties) is the leader. */
export function podSetGroups(podSets: readonly PodSet[]): Group[] {
  const groups: PodSet[][] = [];
  const byName = new Map<string, PodSet[]>();
  for (const ps of podSets) {
    const g = ps.topologyRequest?.podSetGroupName;
    if (g === undefined) {
      groups.push([ps]);
      continue;
    }
    let members = byName.get(g);
    if (!members) {
      members = [];
      byName.set(g, members);
      groups.push(members);
    }
    members.push(ps);
  }
  return groups.map((m) => {
    if (m.length < 2) return { workers: m[0]! };
    const [a, b] = m as [PodSet, PodSet];
    return a.count < b.count ? { workers: b, leader: a } : { workers: a, leader: b };
  });
}

/** Why a flavor does not suit a PodSet, in the peer's words; undefined when it does. */
export function flavorMismatch(tf: TasFlavor, ps: PodSet): string | undefined {
  const f = tf.flavor;
  const name = f.metadata.name;
  const spec = ps.template.spec;
  const labels = f.spec.nodeLabels ?? {};
  // Selectors are evaluated only over the label keys the flavor defines.
  const own: Record<string, string> = {};
  for (const k in spec.nodeSelector ?? {}) if (k in labels) own[k] = spec.nodeSelector![k]!;
  if (!matchesNodeSelector(labels, own)) return `flavor ${name} doesn't match node affinity`;
  const terms = spec.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms;
  if (terms && terms.length > 0) {
    const ok = terms.some((t) =>
      (t.matchExpressions ?? []).filter((e) => e.key in labels).every((e) => matchesRequirement(labels[e.key], e)),
    );
    if (!ok) return `flavor ${name} doesn't match node affinity`;
  }
  const tolerations = [...(spec.tolerations ?? []), ...(f.spec.tolerations ?? [])];
  const taint = untoleratedTaint(f.spec.nodeTaints ?? [], tolerations);
  if (taint) return `untolerated taint ${formatTaint(taint)} in flavor ${name}`;
  const r = ps.topologyRequest;
  const levels = tf.snapshot.levels;
  for (const key of [r?.required, r?.preferred]) {
    if (key !== undefined && !levels.includes(key)) return `Flavor "${name}" does not contain the requested level`;
  }
  return undefined;
}

/** The engine's request for a group on a flavor. */
export function placementRequest(group: Group, flavor: ResourceFlavor, perPod: ResourceAmounts, leaderPerPod?: ResourceAmounts): PlacementRequest {
  const ps = group.workers;
  const r = ps.topologyRequest;
  const spec = ps.template.spec;
  const layers =
    r?.podsetSliceRequiredTopologyConstraints ??
    (r?.podSetSliceRequiredTopology !== undefined ? [{ topology: r.podSetSliceRequiredTopology, size: r.podSetSliceSize ?? 0 }] : []);
  const tolerations: Toleration[] = [...(spec.tolerations ?? []), ...(flavor.spec.tolerations ?? [])];
  const base: PlacementRequest = {
    podSetName: ps.name,
    count: ps.count,
    requests: perPod,
    mode: 'unconstrained',
    sliceLayers: layers,
    nodeSelector: spec.nodeSelector,
    tolerations,
    requiredAffinity: spec.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms,
    preferredAffinity: spec.affinity?.nodeAffinity?.preferredDuringSchedulingIgnoredDuringExecution,
  };
  if (group.leader && leaderPerPod) base.leader = { podSetName: group.leader.name, requests: leaderPerPod };
  if (r?.required !== undefined) return { ...base, mode: 'required', level: r.required };
  if (r?.preferred !== undefined) return { ...base, mode: 'preferred', level: r.preferred };
  if (!hasTopologyConstraint(r)) return { ...base, implied: true };
  return base;
}

/**
 * Places every PodSet of `workload` on the given TAS flavors. PodSets with count 0 are
 * skipped. On failure, PodSets placed before the failing one are not reported: the
 * workload as a whole does not fit.
 */
export function placeWorkload(workload: Workload, flavors: readonly TasFlavor[], options: WorkloadPlacementOptions = {}): WorkloadPlacement {
  const assumed = new Map<TopologySnapshot, AssumedUsage>();
  const out: PodSetPlacement[] = [];
  for (const group of podSetGroups(workload.spec.podSets)) {
    const ps = group.workers;
    if (ps.count === 0 && (!group.leader || group.leader.count === 0)) continue;
    const perPod = podRequests(ps.template.spec, `spec.podSets[${ps.name}].template.spec`);
    const leaderPerPod = group.leader ? podRequests(group.leader.template.spec, `spec.podSets[${group.leader.name}].template.spec`) : undefined;
    const mismatches: string[] = [];
    let chosen: TasFlavor | undefined;
    for (const tf of flavors) {
      const why = flavorMismatch(tf, ps);
      if (why === undefined) {
        chosen = tf;
        break;
      }
      mismatches.push(why);
    }
    if (!chosen) {
      const reason = flavors.length === 0 ? 'no TAS ResourceFlavor in the input' : mismatches.join(', ');
      return { ok: false, podSet: ps.name, reason: `couldn't assign flavors to pod set ${ps.name}: ${reason}` };
    }
    let usage = assumed.get(chosen.snapshot);
    if (!usage) {
      usage = new AssumedUsage();
      assumed.set(chosen.snapshot, usage);
    }
    const req = placementRequest(group, chosen.flavor, perPod, leaderPerPod);
    if (options.multiLayerTopology === false && req.sliceLayers.length > 1) {
      return { ok: false, podSet: ps.name, reason: `couldn't assign flavors to pod set ${ps.name}: multi-layer slice constraints need the TASMultiLayerTopology feature gate` };
    }
    const result = chosen.engine.place(req, { ...options, assumed: usage });
    if (!result.ok) return { ok: false, podSet: ps.name, reason: `couldn't assign flavors to pod set ${ps.name}: ${result.reason}` };
    const flavorName = chosen.flavor.metadata.name;
    usage.addAssignment(chosen.snapshot, result.workers, perPod);
    if (result.leader && group.leader && leaderPerPod) {
      usage.addAssignment(chosen.snapshot, result.leader, leaderPerPod);
      out.push({ name: group.leader.name, count: group.leader.count, flavor: flavorName, perPod: leaderPerPod, assignment: result.leader });
    }
    out.push({ name: ps.name, count: ps.count, flavor: flavorName, perPod, assignment: result.workers });
  }
  // Report in the Workload's PodSet order.
  const order = new Map(workload.spec.podSets.map((p, i) => [p.name, i]));
  out.sort((a, b) => order.get(a.name)! - order.get(b.name)!);
  return { ok: true, podSets: out };
}
