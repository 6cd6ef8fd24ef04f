// Why a pending Workload waits (`plan --explain`, the simulate report): per PodSet group
// with a TAS flavor, level by level from the lowest to the highest, how many of its pods
// fit in the best single domain and what excludes the nodes there; then whether quota,
// the topology, both or neither stops it.
//
// 1. per group (leader and workers, as placement groups them): the flavor (the one the
//    admission chose, else the first TAS flavor that suits it);
// 2. the engine's counting phase alone (slices and leader left out): pods per domain and,
//    per leaf, why it takes none; NotReady or unschedulable nodes are not in the tree, so
//    they are counted from the snapshot's list of them, by their paths;
// 3. per level, the best domain (most pods; ties to the first in level-value order), its
//    count capped at the PodSet's, and the exclusions among its nodes;
// 4. the placement as the scheduler runs it (placeWorkload: slices, leaders, Volcano
//    network topology, groups one after another) says whether the topology stops it, and
//    at which group; quota comes from the caller (admission/explain.ts, or the admission's
//    reason), as does anything else that holds the Workload back.
// Everything is computed against the snapshots as they are: against the cluster the plan
// leaves (every admission made), not as it was when the Workload was tried.

import { CoreApiVersion } from '../api/api-versions.ts';
import type { Workload } from '../api/objects.ts';
import { podRequests } from '../api/resources.ts';
import { HOSTNAME_LABEL } from '../api/keys.ts';
import { isVolcanoWorkload, networkTopologyFromAnnotations } from './network-topology.ts';
import {
  flavorMismatch,
  placementRequest,
  placeWorkload,
  podSetGroups,
  type TasFlavor,
  type WorkloadPlacementOptions,
} from './workload-placement.ts';

/** Short name of a level key: `cloud.provider.com/topology-rack` -> `rack`, hostname -> `host`. */
export function levelName(key: string): string {
  if (key === HOSTNAME_LABEL) return 'host';
  const base = key.slice(key.lastIndexOf('/') + 1);
  return base.replace(/^topology-/, '') || key;
}

/** Why nodes take none of the pods, as the explanation words it (engine reason -> text). */
export const ExcludedBy = {
  notReady: 'not ready or unschedulable',
  nodeSelector: 'node selector',
  affinity: 'node affinity',
  topologyDomain: 'outside the allowed domains',
} as const;

export interface LevelExplanation {
  level: string;
  /** Pods that fit in the best domain of the level (capped at the PodSet's count). */
  fit: number;
  /** The best domain (its path, `/`-joined; a host by name), or null when the level has none. */
  domain: string | null;
  /** Nodes of that domain that take none of the pods, by reason. */
  excluded: Record<string, number>;
}

export interface PodSetExplanation {
  podSet: string;
  count: number;
  /** The TAS flavor, or null when none suits the PodSet (`mismatch` says why). */
  flavor: string | null;
  mismatch?: string[];
  topology?: string;
  /** The Topology's levels, highest first. */
  topologyLevels?: string[];
  /** What the PodSet asks: `required rack`, `preferred block`, `network topology hard, highest tier 1` (Volcano), or `unconstrained`. */
  request: string;
  /** Nodes of the flavor: in the topology tree, plus NotReady or unschedulable ones. */
  nodes?: number;
  /** Nodes of the flavor that take none of the pods, by reason. */
  excluded?: Record<string, number>;
  /** Lowest level first. */
  levels: LevelExplanation[];
  /** The lowest level one domain of which holds every pod, or null. */
  lowestFit: string | null;
  /** The engine's answer for the request as written: undefined when it fits. */
  topologyStop?: string;
}

export interface Explanation {
  workload: string;
  /** A Workload of Pods (a pod group, a gang): its pods, whose PodSets are named by role hash. */
  pods?: string[];
  podSets: PodSetExplanation[];
  /** What stops it: quota, topology, both, or neither (then `other` says what holds it). */
  stoppedBy: ('quota' | 'topology')[];
  /** The quota's refusal, when quota stops it. */
  quota?: string;
  /** A pending reason that is neither quota nor topology (gang, queue order, inactive...). */
  other?: string;
}

/** The engine's reason words -> the explanation's. */
function excludedText(why: string): string {
  if (why.startsWith('resource "')) return `insufficient ${why.slice('resource "'.length, -1)}`;
  if (why.startsWith('taint "')) return `untolerated taint ${why.slice('taint "'.length, -1)}`;
  return ExcludedBy[why as keyof typeof ExcludedBy] ?? why;
}

function bump(m: Record<string, number>, k: string): void {
  m[k] = (m[k] ?? 0) + 1;
}

const sorted = (m: Record<string, number>): Record<string, number> =>
  Object.fromEntries(Object.entries(m).sort(([a, x], [b, y]) => y - x || (a < b ? -1 : a > b ? 1 : 0)));

/**
 * Steps 1 to 4 of the header for every PodSet group of `w`, topology only (`stoppedBy`
 * holds `topology` when a group does not fit as written).
 */
export function explainTopology(w: Workload, flavors: readonly TasFlavor[], options: WorkloadPlacementOptions = {}): Explanation {
  const volcano = isVolcanoWorkload(w);
  const jobTopology = volcano ? networkTopologyFromAnnotations(w.metadata.annotations) : undefined;
  const podSets: PodSetExplanation[] = [];
  for (const group of podSetGroups(w.spec.podSets)) {
    const ps = group.workers;
    const r = ps.topologyRequest;
    const net = networkTopologyFromAnnotations(ps.template.metadata?.annotations) ?? jobTopology;
    const request =
      r?.required !== undefined
        ? `required ${r.required}`
        : r?.preferred !== undefined
          ? `preferred ${r.preferred}`
          : net
            ? `network topology ${net.mode}${net.highestTier !== undefined ? `, highest tier ${net.highestTier}` : ''}${net.highestTierName !== undefined ? `, highest tier ${net.highestTierName}` : ''}`
            : 'unconstrained';
    const forced = options.flavorOf?.get(ps.name);
    const candidates = flavors.filter((f) =>
      forced !== undefined ? f.flavor.metadata.name === forced : (f.implicit ?? false) === volcano,
    );
    const mismatch: string[] = [];
    let tf: TasFlavor | undefined;
    for (const f of candidates) {
      const why = flavorMismatch(f, ps);
      if (why === undefined) {
        tf = f;
        break;
      }
      mismatch.push(why);
    }
    const count = ps.count;
    if (!tf) {
      podSets.push({ podSet: ps.name, count, flavor: null, mismatch, request, levels: [], lowestFit: null });
      continue;
    }
    let perPod;
    let leaderPerPod;
    try {
      perPod = podRequests(ps.template.spec);
      leaderPerPod = group.leader ? podRequests(group.leader.template.spec) : undefined;
    } catch (e) {
      podSets.push({ podSet: ps.name, count, flavor: null, mismatch: [(e as Error).message], request, levels: [], lowestFit: null });
      continue;
    }
    const req = placementRequest(group, tf.flavor, perPod, leaderPerPod);
    const placeOptions = { profile: options.profile, respectPreferredAffinity: options.respectPreferredAffinity };
    podSets.push({ podSet: ps.name, count, request, ...countLevels(tf, req, count, placeOptions) });
  }
  // 4. The placement itself, as the scheduler runs it (Volcano network topology, slices,
  //    leaders, each group against the usage of those before it): the first failure stops.
  let placed: ReturnType<typeof placeWorkload>;
  try {
    placed = placeWorkload(w, flavors, options);
  } catch (e) {
    placed = { ok: false, podSet: podSets[0]?.podSet ?? '', reason: (e as Error).message };
  }
  if (!placed.ok) {
    const p = podSets.find((x) => x.podSet === placed.podSet) ?? podSets[0];
    const prefix = `couldn't assign flavors to pod set ${placed.podSet}: `;
    if (p && p.flavor !== null) p.topologyStop = placed.reason.startsWith(prefix) ? placed.reason.slice(prefix.length) : placed.reason;
  }
  const stopped = !placed.ok || podSets.some((p) => p.flavor === null);
  const pods = (w.metadata.ownerReferences ?? []).filter((o) => o.kind === 'Pod' && o.apiVersion === CoreApiVersion.V1).map((o) => o.name);
  return {
    workload: `${w.metadata.namespace ?? 'default'}/${w.metadata.name}`,
    ...(pods.length > 0 ? { pods } : {}),
    podSets,
    stoppedBy: stopped ? ['topology'] : [],
  };
}

function countLevels(
  tf: TasFlavor,
  req: ReturnType<typeof placementRequest>,
  count: number,
  options: { profile?: WorkloadPlacementOptions['profile']; respectPreferredAffinity?: boolean },
): Omit<PodSetExplanation, 'podSet' | 'count' | 'request'> {
  const s = tf.snapshot;
  const L = s.levels.length;
  const base = { flavor: tf.flavor.metadata.name, topology: s.name, topologyLevels: [...s.levels] };
  const counted = tf.engine.countsWithReasons({ ...req, mode: 'unconstrained', level: undefined, maxLevel: undefined }, options);
  if (!counted) return { ...base, levels: [], lowestFit: null };
  // 3. The best domain of each level.
  const best = new Int32Array(L).fill(-1);
  for (let l = 0; l < L; l++) {
    for (const d of s.domainsAt(l)) if (best[l]! < 0 || counted.pods[d]! > counted.pods[best[l]!]!) best[l] = d;
  }
  const excludedAt: Record<string, number>[] = Array.from({ length: L }, () => ({}));
  const excluded: Record<string, number> = {};
  let nodes = 0;
  for (const leaf of s.leaves()) {
    const n = s.leafNodeCount(leaf);
    nodes += n;
    const why = counted.why[leaf];
    if (why === undefined) continue;
    const text = excludedText(why);
    for (let i = 0; i < n; i++) bump(excluded, text);
    for (let d = leaf; d >= 0; d = s.parent(d)) if (best[s.level(d)] === d) for (let i = 0; i < n; i++) bump(excludedAt[s.level(d)]!, text);
  }
  for (const { path } of s.unreadyNodes()) {
    nodes++;
    bump(excluded, ExcludedBy.notReady);
    for (let l = 0; l < L; l++) {
      const id = l === L - 1 && s.hostnameLowest ? path[l]! : path.slice(0, l + 1).join(',');
      const d = s.domainById(l, id);
      if (d !== undefined && best[l] === d) bump(excludedAt[l]!, ExcludedBy.notReady);
    }
  }
  const levels: LevelExplanation[] = [];
  let lowestFit: string | null = null;
  for (let l = L - 1; l >= 0; l--) {
    const d = best[l]!;
    const fit = d < 0 ? 0 : Math.min(counted.pods[d]!, count);
    if (fit >= count && lowestFit === null) lowestFit = s.levels[l]!;
    const domain = d < 0 ? null : l === L - 1 && s.hostnameLowest ? s.values(d)[l]! : s.values(d).join('/');
    levels.push({ level: s.levels[l]!, fit, domain, excluded: sorted(excludedAt[l]!) });
  }
  return { ...base, nodes, excluded: sorted(excluded), levels, lowestFit };
}

/** Pending reasons that mean quota stops the Workload (kueue-core §1a). */
const QUOTA_REASONS: ReadonlySet<string> = new Set([
  'WaitingForQuota',
  'ExceedsMaxQuota',
  'NoMatchingFlavor',
  'WaitingForPreemptedWorkloads',
]);

/**
 * The topology explanation with the Workload's own pending condition folded in: quota
 * stops it when the condition's reason is a quota reason; a reason that is neither quota
 * nor topology (a gang not ready, a queue, inactive) becomes `other`.
 */
export function withPendingReason(e: Explanation, reason: string | undefined, message: string | undefined): Explanation {
  if (reason === undefined || reason === 'TopologyPlacementFailed') return e;
  if (QUOTA_REASONS.has(reason)) return { ...e, stoppedBy: ['quota', ...e.stoppedBy], quota: message ?? reason };
  return { ...e, other: message ? `${reason}: ${message}` : reason };
}

/** `required cloud.com/topology-rack` -> `required rack`. */
const shortRequest = (r: string) => r.replace(/^(required|preferred) (.+)$/, (_, m: string, k: string) => `${m} ${levelName(k)}`);
const plural = (n: number, one: string) => `${n} ${one}${n === 1 ? '' : 's'}`;
const list = (m: Record<string, number>) =>
  Object.entries(m)
    .map(([k, v]) => `${k} ${v}`)
    .join(', ');

/** The explanation as indented text (`plan --explain`, the report's `explain`): one line per fact. */
export function renderExplanation(e: Explanation, indent = ''): string {
  const lines: string[] = [];
  const stop =
    e.stoppedBy.length === 2
      ? 'quota and topology'
      : e.stoppedBy.length === 1
        ? e.stoppedBy[0]!
        : e.other !== undefined
          ? 'neither quota nor topology on its own'
          : 'nothing: it fits now';
  lines.push(`${e.workload}: stopped by ${stop}`);
  if (e.pods)
    lines.push(`  pods: ${e.pods.length > 8 ? `${e.pods.slice(0, 8).join(', ')}, ... (${e.pods.length} in all)` : e.pods.join(', ')}`);
  if (e.quota !== undefined) lines.push(`  quota: ${e.quota}`);
  if (e.other !== undefined) lines.push(`  waits for: ${e.other}`);
  for (const p of e.podSets) {
    if (p.flavor === null) {
      lines.push(
        `  pod set ${p.podSet}: ${plural(p.count, 'pod')}, ${shortRequest(p.request)}; no TAS flavor suits it${p.mismatch?.length ? `: ${p.mismatch.join(', ')}` : ''}`,
      );
      continue;
    }
    lines.push(
      `  pod set ${p.podSet}: ${plural(p.count, 'pod')}, ${shortRequest(p.request)}, flavor ${p.flavor}, Topology "${p.topology}" (levels: ${(p.topologyLevels ?? []).join(', ')})`,
    );
    const ex = list(p.excluded ?? {});
    lines.push(`    nodes: ${p.nodes ?? 0}${ex ? `; excluded: ${ex}` : ''}`);
    const width = Math.max(0, ...p.levels.map((l) => levelName(l.level).length));
    for (const l of p.levels) {
      const name = levelName(l.level);
      const where = l.domain === null ? `no ${name} holds a node` : `${l.fit} of ${p.count} fit in ${name} ${l.domain}`;
      const lx = list(l.excluded);
      lines.push(`    ${`${name}:`.padEnd(width + 1)} ${where}${lx ? ` (excluded there: ${lx})` : ''}`);
    }
    if (p.topologyStop !== undefined) {
      const low =
        p.lowestFit === null
          ? 'no single domain holds them all'
          : `the lowest level one domain of which holds them all is ${levelName(p.lowestFit)}`;
      // The totals are on the nodes line already.
      lines.push(`    topology stops it: ${p.topologyStop.replace(/\. Total nodes: .*$/, '')}; ${low}`);
    } else lines.push('    topology: fits as requested');
  }
  return lines.map((l) => indent + l).join('\n') + '\n';
}
