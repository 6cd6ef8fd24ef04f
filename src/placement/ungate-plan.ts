// The TopologyUngater's plan for one PodSet (kueue-tas §14, kueue-core §1f): which gated
// pod goes to which domain of the PodSet's topology assignment. Pure: pods and the
// assignment in, the plan out; the controller does the reads and the writes.
//
// 1. rank mode, when the PodSet names a podIndexLabel: read every pod's rank (index, plus
//    sub-group index × pods per sub-group, minus the offset), expand the assignment into a
//    rank -> domain table (domain i repeated count_i times, in emission order) and check
//    that every already-ungated pod sits where its rank says; any failed check abandons
//    rank mode, with the reason;
// 2. greedy mode otherwise: count the ungated pods per domain from their nodeSelector and
//    hand each domain, in assignment order, what it still lacks from the gated pods, in list
//    order; surplus gated pods stay gated;
// 3. pods whose domain is a node in unhealthyNodes are held (stay gated) for the
//    replacement assignment.
//
// One pass over the pods and one over the domains: a 5,000-pod gang plans in a few ms.

import { HOSTNAME_LABEL, KueueAnnotation, KueueSchedulingGate } from '../api/keys.ts';
import type { Pod, PodSetTopologyRequest, StringMap } from '../api/objects.ts';
import { compareStrings } from '../api/values.ts';
import type { DomainAssignment } from './assignment.ts';

export interface RankSettings {
  podIndexLabel: string;
  subGroupIndexLabel?: string;
  subGroupCount?: number;
  /** Where this PodSet's ranks start within its PodSet group (0 for the leader or when ungrouped). */
  groupOffset: number;
}

export interface UngatePlanInput {
  /** The assignment's levels, outermost first. */
  levels: readonly string[];
  domains: readonly DomainAssignment[];
  /** The admitted pod count of the PodSet (the assignment's count, else the PodSet's). */
  count: number;
  /** Rank settings; absent when the PodSet has no podIndexLabel (greedy only). */
  rank?: RankSettings;
  /** The PodSet's pods that are not Succeeded/Failed, in list order (see comparePodNames). */
  pods: readonly Pod[];
  /** Node names whose domains hold their pods gated. */
  unhealthyNodes?: ReadonlySet<string>;
}

export interface PodUngate {
  pod: Pod;
  /** Index into the input's domains. */
  domain: number;
}

export interface UngatePlan {
  mode: 'rank' | 'greedy';
  /** Why rank mode was abandoned (absent in rank mode and when the PodSet asks for no ranks). */
  fallback?: string;
  /** Gated pods to ungate, each with its domain. */
  ungate: PodUngate[];
  /** Gated pods whose domain is an unhealthy node: they stay gated. */
  held: PodUngate[];
  /** The nodeSelector entries of a domain: one per level written (see selectorLevels). */
  selectorOf(domain: number): StringMap;
}

export function hasTopologyGate(pod: Pod): boolean {
  const gates = pod.spec.schedulingGates;
  if (!gates) return false;
  for (const g of gates) if (g.name === KueueSchedulingGate.Topology) return true;
  return false;
}

/**
 * Indexes of the levels written as nodeSelector entries: every level, except that a
 * hostname-lowest assignment writes only `kubernetes.io/hostname` (the hostname pins the
 * node; Kueue's v1beta2 assignments carry only that level anyway).
 */
export function selectorLevels(levels: readonly string[]): number[] {
  if (levels.length > 0 && levels[levels.length - 1] === HOSTNAME_LABEL) return [levels.length - 1];
  return levels.map((_, i) => i);
}

/** The rank settings of a PodSet's topology request, or undefined without a podIndexLabel. */
export function rankSettings(tr: PodSetTopologyRequest | undefined, groupOffset: number): RankSettings | undefined {
  if (!tr?.podIndexLabel) return undefined;
  return {
    podIndexLabel: tr.podIndexLabel,
    ...(tr.subGroupIndexLabel !== undefined ? { subGroupIndexLabel: tr.subGroupIndexLabel } : {}),
    ...(tr.subGroupCount !== undefined ? { subGroupCount: tr.subGroupCount } : {}),
    groupOffset,
  };
}

/**
 * The rank offset of a PodSet in a PodSet group (kueue-core §1f): the leader (the smaller
 * PodSet; on equal counts the one listed first, whose pod indexes start first, as an LWS
 * leader's worker-index 0 does) ranks from 0, the other from the leader's count. An
 * ungrouped PodSet, or a group that is not exactly two PodSets, has offset 0.
 */
export function podSetGroupOffset(
  podSets: readonly { name: string; count: number; topologyRequest?: PodSetTopologyRequest }[],
  name: string,
): number {
  const i = podSets.findIndex((p) => p.name === name);
  const group = podSets[i]?.topologyRequest?.podSetGroupName;
  if (i < 0 || !group) return 0;
  const members = podSets.map((p, j) => ({ p, j })).filter(({ p }) => p.topologyRequest?.podSetGroupName === group);
  if (members.length !== 2) return 0;
  const other = members.find(({ j }) => j !== i)!;
  const me = podSets[i]!;
  const otherLeads = other.p.count < me.count || (other.p.count === me.count && other.j < i);
  return otherLeads ? other.p.count : 0;
}

export function planUngates(input: UngatePlanInput): UngatePlan {
  const { levels, domains } = input;
  const idx = selectorLevels(levels);
  const keys = domains.map((d) => domainKey(d.values, idx));
  const hostnameOnly = idx.length === 1 && levels[idx[0]!] === HOSTNAME_LABEL;
  const unhealthy = input.unhealthyNodes;
  const held = (domain: number): boolean =>
    hostnameOnly && unhealthy !== undefined && unhealthy.size > 0 && unhealthy.has(domains[domain]!.values[idx[0]!]!);
  const selectorOf = (domain: number): StringMap => {
    const out: StringMap = {};
    for (const l of idx) out[levels[l]!] = domains[domain]!.values[l]!;
    return out;
  };
  const split = (pairs: PodUngate[]): { ungate: PodUngate[]; held: PodUngate[] } => {
    const ungate: PodUngate[] = [];
    const kept: PodUngate[] = [];
    for (const p of pairs) (held(p.domain) ? kept : ungate).push(p);
    return { ungate, held: kept };
  };

  let fallback: string | undefined;
  if (input.rank) {
    const r = byRanks(input, input.rank, keys, idx);
    if (r.ok) return { mode: 'rank', ...split(r.pairs), selectorOf };
    fallback = r.reason;
  }
  return { mode: 'greedy', ...(fallback !== undefined ? { fallback } : {}), ...split(greedy(input, keys, idx)), selectorOf };
}

function domainKey(values: readonly string[], idx: readonly number[]): string {
  if (idx.length === 1) return values[idx[0]!] ?? '';
  let k = '';
  for (const i of idx) k += `${values[i] ?? ''}\u0000`;
  return k;
}

/** The domain key of an ungated pod, from its nodeSelector; undefined when a level is missing. */
function podDomainKey(pod: Pod, levels: readonly string[], idx: readonly number[]): string | undefined {
  const sel = pod.spec.nodeSelector;
  if (!sel) return undefined;
  if (idx.length === 1) return sel[levels[idx[0]!]!];
  let k = '';
  for (const i of idx) {
    const v = sel[levels[i]!];
    if (v === undefined) return undefined;
    k += `${v}\u0000`;
  }
  return k;
}

// Greedy (Kueue's assignGatedPodsToDomainsGreedy): each domain entry gets
// max(count - ungated there, 0) of the gated pods still unplaced, in list order.
function greedy(input: UngatePlanInput, keys: readonly string[], idx: readonly number[]): PodUngate[] {
  const ungatedAt = new Map<string, number>();
  const gated: Pod[] = [];
  for (const pod of input.pods) {
    if (hasTopologyGate(pod)) {
      gated.push(pod);
      continue;
    }
    const k = podDomainKey(pod, input.levels, idx);
    if (k !== undefined) ungatedAt.set(k, (ungatedAt.get(k) ?? 0) + 1);
  }
  const out: PodUngate[] = [];
  let next = 0;
  for (let d = 0; d < input.domains.length && next < gated.length; d++) {
    const want = Math.max(input.domains[d]!.count - (ungatedAt.get(keys[d]!) ?? 0), 0);
    const take = Math.min(want, gated.length - next);
    for (let i = 0; i < take; i++) out.push({ pod: gated[next++]!, domain: d });
  }
  return out;
}

type RankResult = { ok: true; pairs: PodUngate[] } | { ok: false; reason: string };

// Rank mode (Kueue's readRanksIfAvailable + assignGatedPodsToDomainsByRanks).
function byRanks(input: UngatePlanInput, rs: RankSettings, keys: readonly string[], idx: readonly number[]): RankResult {
  const pods = input.pods;
  if (pods.length === 0) return { ok: true, pairs: [] };
  const fail = (reason: string): RankResult => ({ ok: false, reason });

  const offsetText = pods[0]!.metadata.annotations?.[KueueAnnotation.PodIndexOffset];
  let offset = rs.groupOffset;
  if (offsetText !== undefined) {
    const o = parseIndex(offsetText);
    if (o === undefined)
      return fail(
        `pod ${pods[0]!.metadata.name}: annotation ${KueueAnnotation.PodIndexOffset} is ${JSON.stringify(offsetText)}, not a non-negative integer`,
      );
    offset += o;
  }
  const count = input.count;
  let perSubGroup = count;
  if (rs.subGroupIndexLabel !== undefined) {
    const n = rs.subGroupCount;
    if (n === undefined || !Number.isInteger(n) || n <= 0)
      return fail(
        `subGroupCount is ${n === undefined ? 'missing' : String(n)}; a positive integer is required with subGroupIndexLabel ${rs.subGroupIndexLabel}`,
      );
    perSubGroup = Math.floor(count / n);
  }

  // The rank -> domain table.
  let total = 0;
  for (const d of input.domains) total += d.count;
  const domainOfRank = new Int32Array(total);
  let at = 0;
  for (let d = 0; d < input.domains.length; d++) {
    domainOfRank.fill(d, at, at + input.domains[d]!.count);
    at += input.domains[d]!.count;
  }

  const podAt = new Array<Pod | undefined>(Math.min(count, total));
  for (const pod of pods) {
    const name = pod.metadata.name;
    const labels = pod.metadata.labels ?? {};
    const index = readBelow(labels[rs.podIndexLabel], perSubGroup + offset);
    if (typeof index === 'string') return fail(`pod ${name}: label ${rs.podIndexLabel} ${index}`);
    let rank = index - offset;
    if (rank < 0) return fail(`pod ${name}: index ${index} is below the offset ${offset}`);
    if (rs.subGroupIndexLabel !== undefined) {
      const sub = readBelow(labels[rs.subGroupIndexLabel], rs.subGroupCount!);
      if (typeof sub === 'string') return fail(`pod ${name}: label ${rs.subGroupIndexLabel} ${sub}`);
      rank += sub * perSubGroup;
    }
    if (rank >= count) return fail(`pod ${name}: rank ${rank} is not below the PodSet count ${count}`);
    if (rank >= total) return fail(`pod ${name}: rank ${rank} is beyond the assignment's ${total} pods`);
    if (podAt[rank] !== undefined) return fail(`pods ${podAt[rank]!.metadata.name} and ${name} have the same rank ${rank}`);
    podAt[rank] = pod;
    if (!hasTopologyGate(pod)) {
      const k = podDomainKey(pod, input.levels, idx);
      if (k !== keys[domainOfRank[rank]!]) return fail(`pod ${name} (rank ${rank}) is ungated outside the domain its rank implies`);
    }
  }
  const pairs: PodUngate[] = [];
  for (let r = 0; r < podAt.length; r++) {
    const pod = podAt[r];
    if (pod !== undefined && hasTopologyGate(pod)) pairs.push({ pod, domain: domainOfRank[r]! });
  }
  return { ok: true, pairs };
}

/** A non-negative decimal integer (Go's strconv.Atoi, sign allowed), or undefined. */
function parseIndex(s: string): number | undefined {
  if (!/^\+?[0-9]+$/.test(s)) return undefined;
  const n = Number(s);
  return Number.isSafeInteger(n) ? n : undefined;
}

/** The index in a label value below `bound`, or what is wrong with it. */
function readBelow(value: string | undefined, bound: number): number | string {
  if (value === undefined) return 'is missing';
  const n = parseIndex(value);
  if (n === undefined) return `is ${JSON.stringify(value)}, not a non-negative integer`;
  if (n >= bound) return `is ${n}, not below ${bound}`;
  return n;
}

/**
 * The order pods are listed in: by name, runs of digits compared as numbers (`w-2` before
 * `w-10`), so greedy mode hands out domains in the order people read pod names.
 */
export function comparePodNames(a: string, b: string): number {
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    const ca = a.charCodeAt(i);
    const cb = b.charCodeAt(j);
    if (isDigit(ca) && isDigit(cb)) {
      let ei = i;
      let ej = j;
      while (ei < a.length && isDigit(a.charCodeAt(ei))) ei++;
      while (ej < b.length && isDigit(b.charCodeAt(ej))) ej++;
      // Compare without leading zeros: longer is larger, then digit by digit.
      let si = i;
      let sj = j;
      while (si < ei - 1 && a.charCodeAt(si) === 48) si++;
      while (sj < ej - 1 && b.charCodeAt(sj) === 48) sj++;
      if (ei - si !== ej - sj) return ei - si - (ej - sj);
      for (; si < ei; si++, sj++) {
        const d = a.charCodeAt(si) - b.charCodeAt(sj);
        if (d !== 0) return d;
      }
      i = ei;
      j = ej;
      continue;
    }
    if (ca !== cb) return ca - cb;
    i++;
    j++;
  }
  if (a.length - i !== b.length - j) return a.length - i - (b.length - j);
  return compareStrings(a, b);
}

function isDigit(c: number): boolean {
  return c >= 48 && c <= 57;
}
