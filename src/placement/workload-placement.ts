// Placing a whole Workload on TAS flavors: the TAS half of Kueue's flavor assigner.
//
// 1. per PodSet: per-pod requests, and the PodSet group it belongs to (leader + workers);
// 2. per group, in order of first appearance: the first TAS flavor that suits it
//    (node labels against selectors and affinity, taints against tolerations, the
//    requested levels present in the flavor's topology);
// 3. place the group on that flavor's snapshot against the usage assumed by the groups
//    placed before it; the first failure stops the workload (kueue-tas.md §9, §12).

import type { PodSet, ResourceFlavor, Toleration, Workload } from '../api/objects.ts';
import { GangAnnotation } from '../api/gang.ts';
import { podRequests, type ResourceAmounts } from '../api/resources.ts';
import { hasTopologyConstraint } from '../api/topology-request.ts';
import { formatTaint, matchesNodeSelector, matchesRequirement, untoleratedTaint } from '../topology/node-match.ts';
import type { TopologySnapshot } from '../topology/snapshot.ts';
import type { Assignment } from './assignment.ts';
import { AssumedUsage, type PlacementEngine, type PlacementOptions } from './engine.ts';
import {
  applyNetworkTopology,
  hyperNodeLeafFilter,
  isVolcanoWorkload,
  networkTopologyFromAnnotations,
  PARTITION_SIZE_ANNOTATION,
} from './network-topology.ts';
import type { PlacementRequest } from './request.ts';
import { climbTo, lowestCommon, mergePieces, placeSubgroups, subgroupInfoOf, type SubgroupPart } from './subgroups.ts';

/** A TAS ResourceFlavor with its snapshot and engine. */
export interface TasFlavor {
  flavor: ResourceFlavor;
  snapshot: TopologySnapshot;
  engine: PlacementEngine;
  /** HyperNode topologies: tierName -> tier (set only for those). */
  tierOfName?: (name: string) => number | undefined;
  /** HyperNode topologies: the tier of the lowest HyperNode containing a node. */
  leafTier?: (node: string) => number | undefined;
  /** A flavor the input did not declare (HyperNodes for Volcano jobs): Volcano-style
   *  Workloads only. */
  implicit?: boolean;
}

export interface PodSetPlacement {
  name: string;
  count: number;
  flavor: string;
  /** Requests of one pod (without `pods`). */
  perPod: ResourceAmounts;
  assignment: Assignment;
  /** Sub-group PodSets (subgroups.ts): the nodes each instance's newly placed pods go to. */
  instances?: { id: string; nodes: string[] }[];
}

export type WorkloadPlacement = { ok: true; podSets: PodSetPlacement[] } | { ok: false; podSet: string; reason: string };

export type WorkloadPlacementOptions = Omit<PlacementOptions, 'assumed' | 'requiredDomain'> & {
  /** `TASMultiLayerTopology` (default on): off refuses more than one slice layer. */
  multiLayerTopology?: boolean;
  /** The flavor each PodSet must use (the admission cycle's flavor assignment); PodSets
   *  not listed are not placed. Without it every PodSet takes the first flavor that suits. */
  flavorOf?: ReadonlyMap<string, string>;
  /** Counts to place instead of the PodSets' own (partial admission). */
  counts?: ReadonlyMap<string, number>;
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
  return resourceFlavorMismatch(tf.flavor, ps, tf.snapshot.levels);
}

/**
 * The same for any ResourceFlavor (kueue-core §1a): node labels against the PodSet's
 * selector and required affinity (over the flavor's own keys only), its taints against the
 * PodSet's and the flavor's tolerations; for a TAS flavor (`levels` given), the requested
 * levels must be in its topology.
 */
export function resourceFlavorMismatch(f: ResourceFlavor, ps: PodSet, levels?: readonly string[]): string | undefined {
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
  if (levels === undefined) return undefined;
  const r = ps.topologyRequest;
  for (const key of [r?.required, r?.preferred]) {
    // Kueue's sentence, then the level asked for and the levels there are.
    if (key !== undefined && !levels.includes(key))
      return `Flavor "${name}" does not contain the requested level "${key}"; the Topology "${f.spec.topologyName ?? name}" has levels: ${levels.join(', ')}`;
  }
  return undefined;
}

/** The engine's request for a group on a flavor. */
export function placementRequest(
  group: Group,
  flavor: ResourceFlavor,
  perPod: ResourceAmounts,
  leaderPerPod?: ResourceAmounts,
): PlacementRequest {
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

interface Prepared {
  group: Group;
  flavor: TasFlavor;
  req: PlacementRequest;
  /** HyperNode ceilings: nodes in no HyperNode of tier <= the limit take no pods. */
  leafEligible?: (leaf: number) => boolean;
  perPod: ResourceAmounts;
  leaderPerPod?: ResourceAmounts;
}

type Failure = { ok: false; podSet: string; reason: string };

const fail = (podSet: string, reason: string): Failure => ({
  ok: false,
  podSet,
  reason: `couldn't assign flavors to pod set ${podSet}: ${reason}`,
});

/** The gang minimum a Workload carries (`gang.scheduling.koordinator.sh/min-available`). */
export function gangMinimum(w: Workload): number | undefined {
  // The seed's key for a gang minimum (Koordinator's gang annotation), also on Workloads.
  const v = w.metadata.annotations?.[GangAnnotation.MinAvailable];
  return v !== undefined && /^[1-9][0-9]*$/.test(v) ? Number(v) : undefined;
}

/** Flavor and request per group (Volcano network topology applied on HyperNode flavors). */
function prepare(workload: Workload, flavors: readonly TasFlavor[], options: WorkloadPlacementOptions): Prepared[] | Failure {
  const jobTopology = networkTopologyFromAnnotations(workload.metadata.annotations);
  const volcano = isVolcanoWorkload(workload);
  // Volcano-style requests go to HyperNode flavors first.
  // Volcano Workloads see every node and every tier first (the implicit flavor), as the
  // peer's scheduler does; declared HyperNode flavors, then the rest, after it.
  const ordered = volcano
    ? [...flavors.filter((f) => f.implicit), ...flavors.filter((f) => f.tierOfName && !f.implicit), ...flavors.filter((f) => !f.tierOfName)]
    : flavors.filter((f) => !f.implicit);
  const out: Prepared[] = [];
  for (const group of podSetGroups(workload.spec.podSets)) {
    const ps = group.workers;
    const forced = options.flavorOf?.get(ps.name);
    if (options.flavorOf && forced === undefined) continue;
    if (ps.count === 0 && (!group.leader || group.leader.count === 0)) continue;
    const perPod = podRequests(ps.template.spec, `spec.podSets[${ps.name}].template.spec`);
    const leaderPerPod = group.leader
      ? podRequests(group.leader.template.spec, `spec.podSets[${group.leader.name}].template.spec`)
      : undefined;
    const mismatches: string[] = [];
    let chosen: TasFlavor | undefined;
    for (const tf of forced !== undefined ? flavors.filter((f) => f.flavor.metadata.name === forced) : ordered) {
      const why = flavorMismatch(tf, ps);
      if (why === undefined) {
        chosen = tf;
        break;
      }
      mismatches.push(why);
    }
    if (!chosen) return fail(ps.name, ordered.length === 0 ? 'no TAS ResourceFlavor in the input' : mismatches.join(', '));
    let req: PlacementRequest | string = placementRequest(group, chosen.flavor, perPod, leaderPerPod);
    const count = options.counts?.get(ps.name);
    if (count !== undefined) req = { ...req, count };
    if (volcano && chosen.tierOfName) {
      const a = ps.template.metadata?.annotations;
      const size = a?.[PARTITION_SIZE_ANNOTATION];
      req = applyNetworkTopology(
        req,
        chosen.snapshot.levels,
        jobTopology,
        { topology: networkTopologyFromAnnotations(a), partitionSize: size !== undefined ? Number(size) : undefined },
        chosen.tierOfName,
      );
      if (typeof req === 'string') return fail(ps.name, req);
    }
    if (options.multiLayerTopology === false && req.sliceLayers.length > 1) {
      return fail(ps.name, 'multi-layer slice constraints need the TASMultiLayerTopology feature gate');
    }
    const leafEligible = chosen.leafTier ? hyperNodeLeafFilter(chosen.snapshot, req, chosen.leafTier) : undefined;
    out.push({ group, flavor: chosen, req, perPod, leaderPerPod, leafEligible });
  }
  return out;
}

/** Places prepared groups in order, each against the usage of those before it. */
function placeInOrder(
  prepared: readonly Prepared[],
  options: WorkloadPlacementOptions,
  within?: number,
  counts?: Map<Prepared, number>,
): PodSetPlacement[] | Failure {
  const assumed = new Map<TopologySnapshot, AssumedUsage>();
  const out: PodSetPlacement[] = [];
  for (const p of prepared) {
    const { group, flavor, perPod, leaderPerPod } = p;
    const count = counts?.get(p) ?? p.req.count;
    let usage = assumed.get(flavor.snapshot);
    if (!usage) {
      usage = new AssumedUsage();
      assumed.set(flavor.snapshot, usage);
    }
    const result = flavor.engine.place(
      { ...p.req, count },
      { ...options, assumed: usage, requiredDomain: within, leafEligible: p.leafEligible },
    );
    if (!result.ok) return fail(group.workers.name, result.reason);
    const flavorName = flavor.flavor.metadata.name;
    usage.addAssignment(flavor.snapshot, result.workers, perPod);
    if (result.leader && group.leader && leaderPerPod) {
      usage.addAssignment(flavor.snapshot, result.leader, leaderPerPod);
      out.push({ name: group.leader.name, count: group.leader.count, flavor: flavorName, perPod: leaderPerPod, assignment: result.leader });
    }
    out.push({ name: group.workers.name, count, flavor: flavorName, perPod, assignment: result.workers });
  }
  return out;
}

/** The lowest domain holding every leaf of the assignments (-1: none below the top). */
function commonDomain(s: TopologySnapshot, placed: readonly PodSetPlacement[]): number {
  let common: number[] | undefined;
  for (const p of placed) {
    for (const d of p.assignment.domains) {
      const leaf = s.leafById(s.leafIdOf(d.values));
      if (leaf === undefined) continue;
      const chain: number[] = [];
      for (let a = leaf; a >= 0; a = s.parent(a)) chain.push(a);
      common = common === undefined ? chain : common.filter((x) => chain.includes(x));
    }
  }
  return common && common.length > 0 ? common[0]! : -1;
}

/**
 * Places every PodSet of `workload` on the given TAS flavors. PodSets with count 0 are
 * skipped. On failure, PodSets placed before the failing one are not reported: the
 * workload as a whole does not fit.
 *
 * Volcano gangs on a HyperNode flavor: with several PodSets and a job-level limit, the
 * largest PodSet is placed first and the whole job is then fitted inside the lowest domain
 * around it that holds everything, climbing no higher than the limit (the peer dry-runs
 * every candidate of a tier; this finds the same tightest tier but, within it, the domain
 * the largest PodSet chose). A single PodSet that does not fit whole is placed at its gang
 * minimum, then as many more pods as fit around it within the limit (the peer's extra
 * replicas confined by the job's domain).
 */
export function placeWorkload(
  workload: Workload,
  flavors: readonly TasFlavor[],
  options: WorkloadPlacementOptions = {},
  running?: RunningPods,
): WorkloadPlacement {
  const prepared = prepare(workload, flavors, options);
  if (!Array.isArray(prepared)) return prepared;
  if (prepared.some((p) => p.group.workers.template.metadata?.annotations?.[SUBGROUP_KEY] !== undefined)) {
    return placeWithSubgroups(workload, prepared, options, running);
  }
  if (running && running.nodes.length > 0 && prepared.length > 0) return placeAroundRunning(workload, prepared, options, running);
  let placed = placeTogether(prepared, options);
  if (!Array.isArray(placed)) placed = placeGangMinimum(workload, prepared, options, placed);
  if (!Array.isArray(placed)) return placed;
  // Report in the Workload's PodSet order.
  const order = new Map(workload.spec.podSets.map((p, i) => [p.name, i]));
  placed.sort((a, b) => order.get(a.name)! - order.get(b.name)!);
  return { ok: true, podSets: placed };
}

/** Pods of the Workload already bound: their nodes, and how many per PodSet. */
export interface RunningPods {
  nodes: string[];
  perPodSet: Map<string, number>;
}

/**
 * A job with pods already running (volcano-hypernode.md §3 step 4, §4.3): its domain is the
 * lowest one holding all its running pods; the remaining pods go inside the highest
 * ancestor of that domain still within the limit. Pods straddling a domain above the
 * limit mean no more pods can be placed until that changes.
 */
function placeAroundRunning(
  workload: Workload,
  prepared: Prepared[],
  options: WorkloadPlacementOptions,
  running: RunningPods,
): WorkloadPlacement {
  const p0 = prepared[0]!;
  const s = p0.flavor.snapshot;
  // Running pods on nodes the snapshot does not know (gone, or never listed) give no domain.
  const leaves = running.nodes.map((n) => s.nodeLeaf(n)).filter((l) => l >= 0);
  if (leaves.length === 0) {
    const counts = new Map<Prepared, number>();
    for (const p of prepared) counts.set(p, Math.max(0, p.req.count - (running.perPodSet.get(p.group.workers.name) ?? 0)));
    const placed = placeInOrder(
      prepared.filter((p) => counts.get(p)! > 0),
      options,
      undefined,
      counts,
    );
    return Array.isArray(placed) ? { ok: true, podSets: placed } : placed;
  }
  let d = -1;
  if (leaves.length > 0) {
    const chains = leaves.map((l) => {
      const c: number[] = [];
      for (let a = l; a >= 0; a = s.parent(a)) c.push(a);
      return c;
    });
    d = chains[0]!.find((x) => chains.every((c) => c.includes(x))) ?? -1;
  }
  const maxLevel = prepared.find((p) => p.req.maxLevel !== undefined)?.req.maxLevel;
  const ceiling = maxLevel !== undefined ? s.levels.indexOf(maxLevel) : -1;
  if (ceiling >= 0 && (d < 0 || s.level(d) < ceiling)) {
    return fail(
      p0.group.workers.name,
      `pods of the job already run across domains above ${maxLevel}: no more pods can be placed until that changes`,
    );
  }
  let within = -1;
  if (ceiling >= 0) {
    within = d;
    while (within >= 0 && s.level(within) > ceiling) within = s.parent(within);
  }
  const counts = new Map<Prepared, number>();
  for (const p of prepared) counts.set(p, Math.max(0, p.req.count - (running.perPodSet.get(p.group.workers.name) ?? 0)));
  const todo = prepared.filter((p) => counts.get(p)! > 0);
  const placed = placeInOrder(todo, options, within >= 0 ? within : undefined, counts);
  if (!Array.isArray(placed)) return placed;
  const order = new Map(workload.spec.podSets.map((ps, i) => [ps.name, i]));
  placed.sort((a, b) => order.get(a.name)! - order.get(b.name)!);
  return { ok: true, podSets: placed };
}

function placeTogether(prepared: Prepared[], options: WorkloadPlacementOptions): PodSetPlacement[] | Failure {
  // Volcano jobs on a HyperNode flavor keep all PodSets in one domain: within the ceiling
  // for hard limits, anywhere up to the top level for soft ones.
  const together = prepared.filter((p) => p.flavor.tierOfName && p.req.mode === 'preferred');
  if (prepared.length < 2 || together.length === 0 || new Set(prepared.map((p) => p.flavor)).size > 1)
    return placeInOrder(prepared, options);
  const s = prepared[0]!.flavor.snapshot;
  const maxLevel = together.find((p) => p.req.maxLevel !== undefined)?.req.maxLevel;
  const ceiling = maxLevel !== undefined ? s.levels.indexOf(maxLevel) : 0;
  // Tightest level first, as the peer's tier-by-tier search: at each level, the domains
  // where every PodSet fits on its own, fullest first (the peer's binpack), each tried with
  // the whole job; the first that holds it wins. At most MAX_CANDIDATES per level.
  const lowest = s.levels.indexOf(together[0]!.req.level ?? s.levels[s.levels.length - 2]!);
  let firstFailure: Failure | undefined;
  for (let level = lowest; level >= ceiling && level >= 0; level--) {
    const key = s.levels[level]!;
    const room = new Map<number, number>();
    let candidates: Set<number> | undefined;
    for (const p of prepared) {
      const fits = new Set<number>();
      for (const { domain, pods } of p.flavor.engine.podsPerDomain(p.req, key, { ...options, leafEligible: p.leafEligible })) {
        if (pods < p.req.count) continue;
        fits.add(domain);
        room.set(domain, (room.get(domain) ?? 0) + pods);
      }
      candidates = candidates === undefined ? fits : new Set([...candidates].filter((d) => fits.has(d)));
    }
    const ranks = s.ranks();
    const ordered = [...(candidates ?? [])].sort((a, b) => room.get(a)! - room.get(b)! || ranks[a]! - ranks[b]!).slice(0, MAX_CANDIDATES);
    for (const d of ordered) {
      const r = placeInOrder(prepared, options, d);
      if (Array.isArray(r)) return r;
      firstFailure ??= r;
    }
  }
  if (maxLevel === undefined) {
    // Soft: nothing holds the whole job in one domain; place it across the top level.
    const r = placeInOrder(prepared, options);
    if (Array.isArray(r)) return r;
    firstFailure ??= r;
  }
  return (
    firstFailure ?? fail(prepared[0]!.group.workers.name, 'the PodSets of the job do not fit together inside one domain within the limit')
  );
}

/** Domains tried per level when fitting several PodSets together. */
const MAX_CANDIDATES = 16;

function placeGangMinimum(
  workload: Workload,
  prepared: Prepared[],
  options: WorkloadPlacementOptions,
  failure: Failure,
): PodSetPlacement[] | Failure {
  const min = gangMinimum(workload);
  if (min === undefined || prepared.length !== 1) return failure;
  const p = prepared[0]!;
  const unit = p.req.sliceLayers[0]?.size ?? 1;
  // Whole slices, at least the minimum.
  const gang = Math.ceil(min / unit) * unit;
  if (gang <= 0 || gang >= p.req.count) return failure;
  const base = placeInOrder(prepared, options, undefined, new Map([[p, gang]]));
  if (!Array.isArray(base)) return failure;
  // More pods, as many as fit, inside the highest domain around the gang within the limit.
  const s = p.flavor.snapshot;
  let around = commonDomain(s, base);
  let ceiling = p.req.maxLevel !== undefined ? s.levels.indexOf(p.req.maxLevel) : -1;
  // A required level confines the extra pods to the gang's domain at that level.
  if (p.req.mode === 'required' && p.req.level !== undefined) ceiling = Math.max(ceiling, s.levels.indexOf(p.req.level));
  if (ceiling < 0) around = -1;
  else while (around >= 0 && s.level(around) > ceiling) around = s.parent(around);
  const usage = new AssumedUsage();
  for (const b of base) usage.addAssignment(s, b.assignment, b.perPod);
  let lo = 0;
  let hi = Math.floor((p.req.count - gang) / unit);
  let best: PodSetPlacement['assignment'] | undefined;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    const r = p.flavor.engine.place(
      { ...p.req, count: mid * unit },
      { ...options, assumed: usage, requiredDomain: around >= 0 ? around : undefined, leafEligible: p.leafEligible },
    );
    if (r.ok) {
      lo = mid;
      best = r.workers;
    } else {
      hi = mid - 1;
    }
  }
  const main = base.find((b) => b.name === p.group.workers.name)!;
  if (best && lo > 0) {
    main.assignment = mergePieces(s, [main.assignment, best]);
    main.count += lo * unit;
  }
  return base;
}

const SUBGROUP_KEY = 'topoqueue.io/subgroup-instances';

/**
 * A job with sub-groups (subgroups.ts): the minimum is searched tightest level first, as
 * for several PodSets (at most MAX_CANDIDATES domains per level, fullest first), inside the
 * job's domain when pods already run; the rest follows inside placeSubgroups.
 */
function placeWithSubgroups(
  workload: Workload,
  prepared: Prepared[],
  options: WorkloadPlacementOptions,
  running: RunningPods | undefined,
): WorkloadPlacement {
  const p0 = prepared[0];
  if (p0 === undefined) return { ok: true, podSets: [] };
  if (new Set(prepared.map((p) => p.flavor)).size > 1) {
    return fail(p0.group.workers.name, 'the PodSets of a job with sub-groups must all fit one flavor; they match different ones');
  }
  const tf = p0.flavor;
  const s = tf.snapshot;
  const parts: SubgroupPart[] = [];
  for (const p of prepared) {
    const read = subgroupInfoOf(p.group.workers.template.metadata?.annotations);
    if (typeof read === 'string') return fail(p.group.workers.name, read);
    // A Volcano Job's running pods (counted per PodSet) fill its partitions in order, as its
    // controller creates pods by index; a PodGroup's Workload already leaves them out.
    let ran = running?.perPodSet.get(p.group.workers.name) ?? 0;
    let info = read;
    let req = p.req;
    if (ran > 0 && info) {
      let ready = info.ready;
      const instances = [];
      for (const i of info.instances) {
        const b = Math.min(ran, i.pending);
        ran -= b;
        const bound = (i.bound ?? 0) + b;
        if (i.pending - b === 0) {
          if (bound >= info.size) ready++;
          continue;
        }
        instances.push({ ...i, pending: i.pending - b, ...(bound > 0 ? { bound } : {}) });
      }
      info = { ...info, ready, instances };
    } else if (ran > 0) req = { ...req, count: Math.max(0, req.count - ran) };
    const sliceKey = p.req.sliceLayers[0]?.topology;
    const instanceLeafEligible =
      sliceKey !== undefined && tf.leafTier ? hyperNodeLeafFilter(s, { ...p.req, maxLevel: sliceKey }, tf.leafTier) : undefined;
    parts.push({
      name: p.group.workers.name,
      snapshot: s,
      engine: tf.engine,
      req,
      perPod: p.perPod,
      leafEligible: p.leafEligible,
      instanceLeafEligible,
      subgroup: info,
    });
  }
  const gang = gangMinimum(workload) ?? 0;
  const maxLevel = prepared.find((p) => p.req.maxLevel !== undefined)?.req.maxLevel;
  const ceiling = maxLevel !== undefined ? s.levels.indexOf(maxLevel) : -1;
  const nodes = [...(running?.nodes ?? []), ...parts.flatMap((p) => p.subgroup?.instances.flatMap((i) => i.nodes ?? []) ?? [])];
  const runningLeaves = nodes.map((n) => s.nodeLeaf(n)).filter((l) => l >= 0);
  const done = (r: ReturnType<typeof placeSubgroups>): WorkloadPlacement => {
    if (!r.ok) return fail(r.podSet, r.reason);
    const byName = new Map(prepared.map((p) => [p.group.workers.name, p]));
    // PodSets with nothing placed are reported with count 0: the admission charges no quota for them.
    const podSets: PodSetPlacement[] = r.podSets.map((x) => ({
      name: x.name,
      count: x.count,
      flavor: tf.flavor.metadata.name,
      perPod: byName.get(x.name)!.perPod,
      assignment: x.assignment,
      ...(x.instances ? { instances: x.instances } : {}),
    }));
    return { ok: true, podSets };
  };

  // Pods already running: the job's domain is the highest ancestor of theirs within the ceiling.
  if (runningLeaves.length > 0) {
    const d = lowestCommon(s, runningLeaves);
    if (ceiling >= 0 && climbTo(s, d, ceiling) < 0) {
      return fail(
        p0.group.workers.name,
        `pods of the job already run across domains above ${maxLevel}: no more pods can be placed until that changes`,
      );
    }
    return done(placeSubgroups(parts, gang, options, ceiling >= 0 ? climbTo(s, d, ceiling) : undefined, ceiling, runningLeaves));
  }
  const together = prepared.filter((p) => p.flavor.tierOfName && p.req.mode === 'preferred');
  if (together.length === 0) return done(placeSubgroups(parts, gang, options, undefined, ceiling));

  // Tightest level first; the first domain that holds the minimum wins.
  const minimum = Math.max(gang, 1);
  let first: WorkloadPlacement | undefined;
  const ranks = s.ranks();
  for (let level = s.levels.length - 2; level >= Math.max(ceiling, 0); level--) {
    const key = s.levels[level]!;
    const room = new Map<number, number>();
    for (const p of prepared) {
      for (const { domain, pods } of tf.engine.podsPerDomain(
        { ...p.req, mode: 'unconstrained', level: undefined, maxLevel: undefined },
        key,
        {
          ...options,
          leafEligible: p.leafEligible,
        },
      )) {
        room.set(domain, (room.get(domain) ?? 0) + Math.min(pods, p.req.count));
      }
    }
    const candidates = [...room]
      .filter(([, n]) => n >= minimum)
      .sort((a, b) => a[1] - b[1] || ranks[a[0]]! - ranks[b[0]]!)
      .slice(0, MAX_CANDIDATES);
    for (const [d] of candidates) {
      const r = done(placeSubgroups(parts, gang, options, d, ceiling));
      if (r.ok) return r;
      first ??= r;
    }
  }
  if (ceiling < 0) {
    const r = done(placeSubgroups(parts, gang, options, undefined, ceiling));
    if (r.ok) return r;
    first ??= r;
  }
  return (
    first ??
    fail(
      p0.group.workers.name,
      `the job's minimum of ${minimum} pod${minimum === 1 ? '' : 's'} does not fit inside one domain within the limit`,
    )
  );
}
