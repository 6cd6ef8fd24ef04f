// Volcano sub-groups (volcano-hypernode.md §1.3, §3 step 4, §4.3): a PodGroup's
// `subGroupPolicy` instances, or a Volcano Job's partitions, placed the way Volcano's
// allocate does, instance by instance.
//
// The contract: a policy PodSet's template carries `topoqueue.io/subgroup-instances`, a JSON
// record of the policy (name, subGroupSize, minSubGroups, how many of its instances are
// already ready outside this PodSet) and, in the PodSet's pod order, each instance's pending
// pods and the nodes of its bound pods. An instance is ready when subGroupSize of its pods
// are bound; its "need" is what it still lacks, its extras are the rest of its pending pods.
//
// placeSubgroups, inside the job's domain:
//   1. the minimum, inside `within`: for each policy, the instances needed to reach
//      minSubGroups (each its need as one slice, in order, skipping any that does not fit);
//      then default-group pods (the implicit subgroup: a Volcano Job's tasks without
//      partitions), then more instances' needs, whole, until the job's gang minimum (at
//      least one pod) is placed; an instance with fewer pending pods than its
//      need waits (none of its pods is placed);
//   2. the rest, inside the highest ancestor of the job's domain (running pods included)
//      within the job's ceiling, anywhere without one: the other instances' needs, whole,
//      the default-group pods left, then each instance's extras, as many as fit;
//   3. every instance stays inside its record: the highest ancestor of the lowest domain
//      holding its pods (bound and placed) that is within its tier limit (the slice level).
// An instance's pods straddling a domain above its limit get no more pods.

import type { StringMap } from '../api/objects.ts';
import type { ResourceAmounts } from '../api/resources.ts';
import type { TopologySnapshot } from '../topology/snapshot.ts';
import type { Assignment } from './assignment.ts';
import { AssumedUsage, type PlacementEngine, type PlacementOptions } from './engine.ts';
import type { PlacementRequest } from './request.ts';

/** PodSet template annotation: the sub-group instances of a policy PodSet (see the header). */
export const SUBGROUP_INSTANCES_ANNOTATION = 'topoqueue.io/subgroup-instances';

export interface SubgroupInstance {
  /** `key=value, ...` of the policy's matchLabelKeys (for messages). */
  id: string;
  /** Pending pods of the instance in this PodSet. */
  pending: number;
  /** Pods of the instance already bound (they count toward subGroupSize). */
  bound?: number;
  /** Nodes of the bound pods. */
  nodes?: string[];
}

export interface SubgroupInfo {
  policy: string;
  size: number;
  minSubGroups: number;
  /** Instances of the policy already ready with no pending pod (in no PodSet). */
  ready: number;
  instances: SubgroupInstance[];
}

export function formatSubgroupInfo(info: SubgroupInfo): string {
  return JSON.stringify(info);
}

const isCount = (x: unknown): x is number => typeof x === 'number' && Number.isInteger(x) && x >= 0;

/** Reads the annotation; undefined when absent, a message when unreadable. */
export function subgroupInfoOf(a: StringMap | undefined): SubgroupInfo | string | undefined {
  const raw = a?.[SUBGROUP_INSTANCES_ANNOTATION];
  if (raw === undefined) return undefined;
  const bad = `${SUBGROUP_INSTANCES_ANNOTATION} must be {policy, size, minSubGroups, ready, instances: [{id, pending, bound?, nodes?}]}`;
  let v: unknown;
  try {
    v = JSON.parse(raw);
  } catch {
    return `${bad}: not JSON`;
  }
  const o = v as Partial<SubgroupInfo>;
  if (typeof o !== 'object' || o === null || typeof o.policy !== 'string' || !isCount(o.size) || o.size < 1) return bad;
  if (!isCount(o.minSubGroups) || !isCount(o.ready) || !Array.isArray(o.instances)) return bad;
  for (const i of o.instances as Partial<SubgroupInstance>[]) {
    if (typeof i !== 'object' || i === null || typeof i.id !== 'string' || !isCount(i.pending)) return bad;
    if (i.bound !== undefined && !isCount(i.bound)) return bad;
    if (i.nodes !== undefined && (!Array.isArray(i.nodes) || i.nodes.some((n) => typeof n !== 'string'))) return bad;
  }
  return o as SubgroupInfo;
}

/** One PodSet of the job, as placement prepared it. */
export interface SubgroupPart {
  name: string;
  snapshot: TopologySnapshot;
  engine: PlacementEngine;
  /** The PodSet's request, job topology applied; its slice layer (if any) is the instance limit. */
  req: PlacementRequest;
  perPod: ResourceAmounts;
  /** Leaves the job's ceiling allows. */
  leafEligible?: (leaf: number) => boolean;
  /** Leaves an instance's limit allows (a HyperNode ceiling at the slice level). */
  instanceLeafEligible?: (leaf: number) => boolean;
  /** Absent: the PodSet is in the default group (pods, not instances). */
  subgroup?: SubgroupInfo;
}

export interface SubgroupPlacement {
  name: string;
  count: number;
  assignment: Assignment;
  /** Per instance of the PodSet, the nodes its newly placed pods go to (one entry per pod). */
  instances?: { id: string; nodes: string[] }[];
}

export type SubgroupResult = { ok: true; podSets: SubgroupPlacement[] } | { ok: false; podSet: string; reason: string };

interface InstanceState {
  part: Part;
  inst: SubgroupInstance;
  /** Pods still lacking for the instance to be ready. */
  need: number;
  /** Pending pods not placed yet. */
  left: number;
  /** Leaves holding its pods (bound and placed). */
  leaves: number[];
  /** Nodes of its newly placed pods, one entry per pod. */
  placedNodes: string[];
}

interface Part {
  p: SubgroupPart;
  pieces: Assignment[];
  placed: number;
  /** Default group: pods not placed yet. */
  left: number;
  instances: InstanceState[];
  /** Level index of the instance limit (the slice level), -1 when instances are not confined. */
  limit: number;
}

/** The chain of a domain up to the top, self first. */
function chain(s: TopologySnapshot, d: number): number[] {
  const c: number[] = [];
  for (let a = d; a >= 0; a = s.parent(a)) c.push(a);
  return c;
}

/** The lowest domain holding every leaf (-1: none, i.e. across the top level). */
export function lowestCommon(s: TopologySnapshot, leaves: readonly number[]): number {
  if (leaves.length === 0) return -1;
  const chains = leaves.map((l) => chain(s, l));
  return chains[0]!.find((x) => chains.every((c) => c.includes(x))) ?? -1;
}

/** `d` climbed to `level` (a level index); -1 stays -1; a domain above it is -1. */
export function climbTo(s: TopologySnapshot, d: number, level: number): number {
  if (d < 0 || s.level(d) < level) return -1;
  let a = d;
  while (a >= 0 && s.level(a) > level) a = s.parent(a);
  return a;
}

/** Intersection of two domains (undefined = everywhere): the deeper, if nested; null when apart. */
function intersect(s: TopologySnapshot, a: number | undefined, b: number | undefined): number | undefined | null {
  if (a === undefined) return b;
  if (b === undefined) return a;
  if (chain(s, a).includes(b)) return a;
  if (chain(s, b).includes(a)) return b;
  return null;
}

/** The node of each pod of an assignment (hostname-level assignments; else the domain's last value). */
function podNodes(a: Assignment): string[] {
  return a.domains.flatMap((d) => Array<string>(d.count).fill(d.values[d.values.length - 1]!));
}

function leavesOf(s: TopologySnapshot, a: Assignment): number[] {
  const out: number[] = [];
  for (const d of a.domains) {
    const l = s.leafById(s.leafIdOf(d.values));
    if (l !== undefined) out.push(l);
  }
  return out;
}

const pods = (n: number) => `${n} pod${n === 1 ? '' : 's'}`;

/**
 * Places the PodSets of a job with sub-groups (see the header). `within`: the domain the
 * minimum must stay in (undefined: anywhere); `ceiling`: the job's ceiling level index
 * (-1: none); `running`: leaves of the job's pods already bound outside the instances.
 */
export function placeSubgroups(
  parts: readonly SubgroupPart[],
  gang: number,
  options: Omit<PlacementOptions, 'assumed' | 'requiredDomain' | 'leafEligible'>,
  within: number | undefined,
  ceiling: number,
  running: readonly number[] = [],
): SubgroupResult {
  const s = parts[0]!.snapshot;
  const usage = new AssumedUsage();
  let firstFailure: { podSet: string; reason: string } | undefined;
  const note = (podSet: string, reason: string) => {
    firstFailure ??= { podSet, reason };
  };
  const state: Part[] = parts.map((p) => {
    const limitKey = p.req.sliceLayers[0]?.topology;
    const part: Part = {
      p,
      pieces: [],
      placed: 0,
      left: p.subgroup ? 0 : p.req.count,
      instances: [],
      limit: limitKey !== undefined ? s.levels.indexOf(limitKey) : -1,
    };
    for (const inst of p.subgroup?.instances ?? []) {
      const bound = inst.bound ?? 0;
      const leaves = (inst.nodes ?? []).map((n) => s.nodeLeaf(n)).filter((l) => l >= 0);
      part.instances.push({ part, inst, need: Math.max(0, p.subgroup!.size - bound), left: inst.pending, leaves, placedNodes: [] });
    }
    return part;
  });
  const instances = state.flatMap((x) => x.instances);
  let total = 0;

  const place = (part: Part, req: PlacementRequest, domain: number | undefined, eligible?: (leaf: number) => boolean) => {
    const r = part.p.engine.place(req, {
      ...options,
      assumed: usage,
      requiredDomain: domain,
      leafEligible: eligible ?? part.p.leafEligible,
    });
    if (!r.ok) return r;
    usage.addAssignment(s, r.workers, part.p.perPod);
    part.pieces.push(r.workers);
    part.placed += req.count;
    total += req.count;
    return r;
  };

  /** The instance's request: inside one domain of its limit, tightest first. */
  const instanceReq = (part: Part, count: number): PlacementRequest => {
    const req: PlacementRequest = { ...part.p.req, count, sliceLayers: [], leader: undefined };
    if (part.limit < 0) return req;
    const lowest = s.levels.length >= 2 ? s.levels.length - 2 : s.levels.length - 1;
    return { ...req, mode: 'preferred', level: s.levels[Math.max(lowest, part.limit)], maxLevel: s.levels[part.limit], implied: false };
  };

  /** Where an instance may take pods now; null: nowhere (its pods straddle its limit or leave the job's domain). */
  const instanceDomain = (x: InstanceState, bound: number | undefined): number | undefined | null => {
    if (x.leaves.length === 0 || x.part.limit < 0) return bound;
    const rec = climbTo(s, lowestCommon(s, x.leaves), x.part.limit);
    if (rec < 0) return null;
    return intersect(s, rec, bound);
  };

  const describe = (x: InstanceState) => `subGroupPolicy ${JSON.stringify(x.part.p.subgroup!.policy)}, instance {${x.inst.id}}`;

  /** Places an instance's need as one slice; false when it does not fit. */
  const placeNeed = (x: InstanceState, bound: number | undefined): boolean => {
    const name = x.part.p.name;
    if (x.need === 0 || x.left < x.need) return false;
    const d = instanceDomain(x, bound);
    if (d === null) {
      note(name, `${describe(x)}: its pods already run across domains above ${s.levels[x.part.limit]}: no more of its pods can be placed`);
      return false;
    }
    const r = place(x.part, instanceReq(x.part, x.need), d, x.part.p.instanceLeafEligible);
    if (!r.ok) {
      note(name, `${describe(x)} needs ${pods(x.need)} inside one domain: ${r.reason}`);
      return false;
    }
    x.leaves.push(...leavesOf(s, r.workers));
    x.placedNodes.push(...podNodes(r.workers));
    x.left -= x.need;
    x.need = 0;
    return true;
  };

  /** As many as fit, up to `max`, of `req`'s shape (binary search over the count). */
  const placeMost = (
    part: Part,
    max: number,
    req: (n: number) => PlacementRequest,
    domain: number | undefined,
    eligible?: (l: number) => boolean,
  ) => {
    let lo = 0;
    let hi = max;
    const opts = { ...options, assumed: usage, requiredDomain: domain, leafEligible: eligible ?? part.p.leafEligible };
    let best: Assignment | undefined;
    while (lo < hi) {
      const mid = Math.ceil((lo + hi) / 2);
      const r = part.p.engine.place(req(mid), opts);
      if (r.ok) {
        lo = mid;
        best = r.workers;
      } else hi = mid - 1;
    }
    if (!best || lo === 0) return { n: 0, leaves: [] as number[], nodes: [] as string[] };
    usage.addAssignment(s, best, part.p.perPod);
    part.pieces.push(best);
    part.placed += lo;
    total += lo;
    return { n: lo, leaves: leavesOf(s, best), nodes: podNodes(best) };
  };

  const defaultReq = (part: Part) => (n: number) => ({ ...part.p.req, count: n, leader: undefined });

  const waits = (x: InstanceState) => x.need > 0 && x.left < x.need;
  const noteWaiting = (x: InstanceState) =>
    note(
      x.part.p.name,
      `${describe(x)} has ${pods(x.left + (x.inst.bound ?? 0))} of the ${x.part.p.subgroup!.size} its subGroupSize needs: it waits for the others`,
    );
  /** Untouched instances of exactly subGroupSize pending pods: interchangeable slices. */
  const fresh = (x: InstanceState) => x.leaves.length === 0 && x.part.limit >= 0 && x.need === x.part.p.subgroup!.size && x.left === x.need;

  /**
   * Places the needs of up to `want` instances of `xs`, in order, inside `bound`; returns how
   * many. Runs of fresh instances of one PodSet go to the engine together, as slices of
   * subGroupSize (one call per step of a binary search instead of one per instance); each
   * slice's pods are contiguous in the assignment's rank order, so they are split back into
   * instances in that order.
   */
  const placeNeeds = (xs: readonly InstanceState[], bound: number | undefined, want: number): number => {
    let done = 0;
    for (let i = 0; i < xs.length && done < want;) {
      const x = xs[i]!;
      if (x.need === 0) {
        i++;
        continue;
      }
      if (waits(x)) {
        noteWaiting(x);
        i++;
        continue;
      }
      if (!fresh(x)) {
        if (placeNeed(x, bound)) done++;
        i++;
        continue;
      }
      let j = i;
      while (j < xs.length && j - i < want - done && xs[j]!.part === x.part && fresh(xs[j]!)) j++;
      const run = xs.slice(i, j);
      const part = x.part;
      const size = part.p.subgroup!.size;
      const opts = { ...options, assumed: usage, requiredDomain: bound, leafEligible: part.p.instanceLeafEligible ?? part.p.leafEligible };
      let lo = 0;
      let hi = run.length;
      let best: Assignment | undefined;
      let why: string | undefined;
      while (lo < hi) {
        const mid = Math.ceil((lo + hi) / 2);
        const r = part.p.engine.place({ ...part.p.req, count: mid * size, leader: undefined }, opts);
        if (r.ok) {
          lo = mid;
          best = r.workers;
        } else {
          hi = mid - 1;
          why ??= r.reason;
        }
      }
      if (best && lo > 0) {
        usage.addAssignment(s, best, part.p.perPod);
        part.pieces.push(best);
        part.placed += lo * size;
        total += lo * size;
        const slots = podNodes(best);
        run.slice(0, lo).forEach((y, k) => {
          const nodes = slots.slice(k * size, (k + 1) * size);
          y.placedNodes.push(...nodes);
          y.leaves.push(...nodes.map((n) => s.nodeLeaf(n)).filter((l) => l >= 0));
          y.left -= y.need;
          y.need = 0;
        });
        done += lo;
      }
      if (lo < run.length) {
        note(part.p.name, `${describe(run[lo]!)} needs ${pods(size)} inside one domain: ${why ?? 'no room'}`);
        // The rest of the run would not fit either; later instances may (other PodSets, records).
        i = j;
      } else i = j;
    }
    return done;
  };

  // 1. The minimum, inside `within`.
  const byPolicy = new Map<string, InstanceState[]>();
  for (const x of instances) {
    const name = x.part.p.subgroup!.policy;
    byPolicy.set(name, [...(byPolicy.get(name) ?? []), x]);
  }
  for (const [policy, xs] of byPolicy) {
    const info = xs[0]!.part.p.subgroup!;
    let ready = info.ready + xs.filter((x) => x.need === 0).length;
    if (ready >= info.minSubGroups) continue;
    ready += placeNeeds(xs, within, info.minSubGroups - ready);
    if (ready < info.minSubGroups) {
      const why = firstFailure ? `: ${firstFailure.reason}` : '';
      return {
        ok: false,
        podSet: xs[0]!.part.p.name,
        reason: `subGroupPolicy ${JSON.stringify(policy)} needs ${info.minSubGroups} ready instance${info.minSubGroups === 1 ? '' : 's'} (minSubGroups) of ${pods(info.size)}, and only ${ready} can be${why}`,
      };
    }
  }
  const minimum = Math.max(gang, 1);
  for (const part of state) {
    if (total >= minimum || part.left === 0) continue;
    const n = placeMost(part, Math.min(part.left, minimum - total), defaultReq(part), within);
    part.left -= n.n;
    if (n.n === 0) {
      const r = part.p.engine.place(
        { ...part.p.req, count: 1, leader: undefined },
        { ...options, assumed: usage, requiredDomain: within, leafEligible: part.p.leafEligible },
      );
      if (!r.ok) note(part.p.name, r.reason);
    }
  }
  // Further instances, PodSet by PodSet in order, until the minimum is reached.
  for (const part of state) {
    if (total >= minimum) break;
    const xs = part.instances.filter((x) => x.need > 0);
    if (xs.length === 0) continue;
    placeNeeds(xs, within, Math.ceil((minimum - total) / part.p.subgroup!.size));
  }
  // Extras of instances already ready count toward the gang minimum too.
  for (const x of instances) {
    if (total >= minimum) break;
    if (x.need > 0 || x.left === 0) continue;
    const d = instanceDomain(x, within);
    if (d === null) continue;
    const n = placeMost(x.part, Math.min(x.left, minimum - total), (k) => instanceReq(x.part, k), d, x.part.p.instanceLeafEligible);
    x.left -= n.n;
    x.leaves.push(...n.leaves);
    x.placedNodes.push(...n.nodes);
  }
  if (total < minimum) {
    const f = firstFailure ?? { podSet: parts[0]!.name, reason: 'nothing of the job can be placed' };
    if (gang <= 1 && total === 0) return { ok: false, ...f };
    return {
      ok: false,
      podSet: f.podSet,
      reason: `only ${pods(total)} of the job's minimum of ${minimum} can be placed: ${f.reason}`,
    };
  }

  // 2. The rest, inside the highest domain around the job within its ceiling.
  const allLeaves = [...running, ...instances.flatMap((x) => x.leaves), ...state.flatMap((x) => x.pieces.flatMap((a) => leavesOf(s, a)))];
  const around = ceiling >= 0 ? climbTo(s, lowestCommon(s, allLeaves), ceiling) : -1;
  const rest = around >= 0 ? around : ceiling >= 0 ? within : undefined;
  placeNeeds(
    instances.filter((x) => x.need > 0 && !waits(x)),
    rest,
    instances.length,
  );
  for (const part of state) {
    if (part.left === 0) continue;
    part.left -= placeMost(part, part.left, defaultReq(part), rest).n;
  }
  for (const x of instances) {
    if (x.need > 0 || x.left === 0) continue;
    const d = instanceDomain(x, rest);
    if (d === null) continue;
    const n = placeMost(x.part, x.left, (k) => instanceReq(x.part, k), d, x.part.p.instanceLeafEligible);
    x.left -= n.n;
    x.leaves.push(...n.leaves);
    x.placedNodes.push(...n.nodes);
  }

  return {
    ok: true,
    podSets: state.map((part) => ({
      name: part.p.name,
      count: part.placed,
      assignment: mergePieces(s, part.pieces),
      ...(part.p.subgroup ? { instances: part.instances.map((x) => ({ id: x.inst.id, nodes: x.placedNodes })) } : {}),
    })),
  };
}

/** One assignment from several, same leaves added up, in rank order. */
export function mergePieces(s: TopologySnapshot, pieces: readonly Assignment[]): Assignment {
  const byId = new Map<string, { values: string[]; count: number; leaf: number }>();
  for (const a of pieces) {
    for (const d of a.domains) {
      const id = s.leafIdOf(d.values);
      const prev = byId.get(id);
      if (prev) prev.count += d.count;
      else byId.set(id, { values: [...d.values], count: d.count, leaf: s.leafById(id) ?? -1 });
    }
  }
  const ranks = s.ranks();
  const domains = [...byId.values()]
    .sort((x, y) => (ranks[x.leaf] ?? 0) - (ranks[y.leaf] ?? 0))
    .map(({ values, count }) => ({ values, count }));
  return { levels: pieces[0]?.levels ?? s.levels.slice(-1), domains };
}
