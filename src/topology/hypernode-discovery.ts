// HyperNodes from node labels, as Volcano's label discovery builds them
// (volcano-hypernode.md §6.2). Pure: nodes and the HyperNodes already there in, the
// HyperNodes to apply and the problems out.
//
// 1. check the configuration: type name of at most 20 characters, no duplicate label
//    keys, at least one key above the node level;
// 2. walk each node from tier 1 upward and stop at the first missing label: one HyperNode
//    per (label key, value), shared by every node that carries it; tier 1 lists node
//    names, tier k the tier-(k-1) HyperNodes under it;
// 3. name each HyperNode: reuse an existing label-sourced one with the same `{key: value}`
//    label and tier prefix, else `hypernode-<type>-tier<k>-<5 hex of sha1(key=value)>`
//    (values in byte order; a name already taken is hashed again with a counter);
// 4. report what the peer would trip on: a value under several parents (the scheduler
//    refuses the whole tree), nodes whose walk stopped early, and existing label-sourced
//    HyperNodes of the type that were not produced again (the peer deletes them).

import { createHash } from 'node:crypto';
import { HOSTNAME_LABEL } from '../api/keys.ts';
import { labelKeyProblem } from '../api/topology-request.ts';
import { VolcanoApiVersion, VolcanoLabel, type HyperNode, type HyperNodeMember } from '../api/volcano-objects.ts';
import { DNS_SUBDOMAIN_PATTERN } from '../api/names.ts';
import { compareStrings } from '../api/values.ts';
import type { TreeNode } from './hypernode-tree.ts';

/** `volcano.sh/network-topology-source` value on HyperNodes this discovery generates. */
export const LABEL_SOURCE = 'label';
export const DEFAULT_TOPOLOGY_TYPE = 'label';
export const MAX_TOPOLOGY_TYPE_NAME = 20;
/** Names printed in a problem before "... (N more)". */
const NAMES_SHOWN = 5;
/** The peer gives up after this many name attempts. */
const NAME_ATTEMPTS = 20;

export interface DiscoveryConfig {
  /** Label keys, highest level first; the last one is the node level and never a HyperNode. */
  levels: readonly string[];
  /** Topology type name, part of the generated names (default `label`). */
  type?: string;
}

export interface DiscoveryConfigError {
  field: 'type' | 'levels';
  message: string;
}

export interface ParentClaim {
  key: string;
  value: string;
  hyperNode: string;
  /** Nodes that put the child under this parent, sorted. */
  nodes: string[];
}

export type DiscoveryProblem =
  | { reason: 'MultipleParents'; key: string; value: string; hyperNode: string; parents: ParentClaim[]; message: string }
  | { reason: 'MissingLabel'; key: string; tier: number; nodes: string[]; message: string }
  | { reason: 'Stale'; hyperNode: string; message: string };

export interface DiscoveryResult {
  /** Tier ascending, then label value. */
  hyperNodes: HyperNode[];
  /** Existing label-sourced HyperNodes of this type that were not produced: the peer deletes them. */
  stale: string[];
  problems: DiscoveryProblem[];
}

/** The type name as it appears in HyperNode names: lower case, non `[a-z0-9.-]` as `-`. */
export function typeNamePart(type: string): string {
  return type.toLowerCase().replace(/[^a-z0-9.-]/g, '-');
}

/** Every problem with the configuration (the peer skips such a type). */
export function checkDiscoveryConfig(config: DiscoveryConfig): DiscoveryConfigError[] {
  const errors: DiscoveryConfigError[] = [];
  const type = config.type ?? DEFAULT_TOPOLOGY_TYPE;
  if (type === '') errors.push({ field: 'type', message: 'the topology type name must not be empty' });
  else if (type.length > MAX_TOPOLOGY_TYPE_NAME)
    errors.push({
      field: 'type',
      message: `The length of topologyTypeName exceeds ${MAX_TOPOLOGY_TYPE_NAME}. topologyTypeName is ${type}`,
    });
  else if (!DNS_SUBDOMAIN_PATTERN.test(`hypernode-${typeNamePart(type)}-tier1-00000`)) {
    errors.push({
      field: 'type',
      message: `"${type}" gives HyperNode names (hypernode-${typeNamePart(type)}-tier1-...) that are not valid object names; use letters, digits, '-' and '.', not two of '.' and '-' in a row`,
    });
  }
  const levels = config.levels;
  if (levels.length < 2) {
    errors.push({
      field: 'levels',
      message: `needs at least two label keys, highest level first, the last being the node level (e.g. cloud.provider.com/topology-rack,${HOSTNAME_LABEL}); got ${levels.length}`,
    });
  }
  for (const [i, key] of levels.entries()) {
    const p = labelKeyProblem(key);
    if (p) errors.push({ field: 'levels', message: `key ${i + 1} ("${key}"): ${p}` });
  }
  const dup = levels.filter((k, i) => levels.indexOf(k) !== i);
  if (dup.length > 0)
    errors.push({ field: 'levels', message: `there are duplicate labels (${[...new Set(dup)].join(', ')} given more than once)` });
  return errors;
}

interface Domain {
  tier: number;
  key: string;
  value: string;
  name: string;
  /** Node names (tier 1) or child domains (tier k > 1). */
  nodes: Set<string>;
  children: Set<Domain>;
  /** Parent value -> nodes that put this domain under it. */
  parents: Map<string, string[]>;
}

/**
 * The HyperNodes label discovery produces for `nodes`, and the problems with them.
 * `existing` (the HyperNodes already in the cluster) only lends names and tells what is
 * stale; HyperNodes without the label-source label are never touched.
 */
export function discoverHyperNodes(nodes: readonly TreeNode[], existing: readonly HyperNode[], config: DiscoveryConfig): DiscoveryResult {
  const configErrors = checkDiscoveryConfig(config);
  if (configErrors.length > 0) throw new Error(`invalid discovery configuration: ${configErrors.map((e) => e.message).join('; ')}`);
  const type = typeNamePart(config.type ?? DEFAULT_TOPOLOGY_TYPE);
  // Tier k's key is the k-th above the node level: keys[k] for k = 1..T.
  const T = config.levels.length - 1;
  const keys = ['', ...config.levels.slice(0, T).reverse()];

  // 2. Walk each node upward to its first missing label.
  const domains: Map<string, Domain>[] = keys.map(() => new Map());
  const stopped: { node: TreeNode; higher: boolean }[][] = keys.map(() => []);
  for (const n of [...nodes].sort((a, b) => compareStrings(a.name, b.name))) {
    let below: Domain | undefined;
    for (let k = 1; k <= T; k++) {
      const value = n.labels[keys[k]!];
      if (value === undefined) {
        let higher = false;
        for (let j = k + 1; j <= T; j++) higher ||= n.labels[keys[j]!] !== undefined;
        stopped[k]!.push({ node: n, higher });
        break;
      }
      let d = domains[k]!.get(value);
      if (!d) {
        d = { tier: k, key: keys[k]!, value, name: '', nodes: new Set(), children: new Set(), parents: new Map() };
        domains[k]!.set(value, d);
      }
      if (below) {
        d.children.add(below);
        const claim = below.parents.get(value);
        if (claim) claim.push(n.name);
        else below.parents.set(value, [n.name]);
      } else {
        d.nodes.add(n.name);
      }
      below = d;
    }
  }

  // 3. Names: reuse first, so a new value never takes a name an old one keeps.
  const sorted = domains.map((m) => [...m.values()].sort((a, b) => compareStrings(a.value, b.value)));
  const taken = new Set(existing.map((h) => h.metadata.name));
  const reusable = new Map<string, string[]>();
  for (const h of existing) {
    const labels = h.metadata.labels ?? {};
    if (labels[VolcanoLabel.NetworkTopologySource] !== LABEL_SOURCE) continue;
    for (let k = 1; k <= T; k++) {
      const value = labels[keys[k]!];
      if (value === undefined || !h.metadata.name.startsWith(tierPrefix(type, k))) continue;
      const id = `${k}\u0000${value}`;
      reusable.set(id, [...(reusable.get(id) ?? []), h.metadata.name].sort(compareStrings));
    }
  }
  const used = new Set<string>();
  for (const d of sorted.flat()) {
    const name = reusable.get(`${d.tier}\u0000${d.value}`)?.find((x) => !used.has(x));
    if (name !== undefined) {
      d.name = name;
      used.add(name);
    }
  }
  for (const d of sorted.flat()) {
    if (d.name !== '') continue;
    d.name = freshName(type, d, (x) => taken.has(x) || used.has(x));
    used.add(d.name);
  }

  const hyperNodes = sorted.flat().map((d) => toHyperNode(d));

  // 4. Problems.
  const problems: DiscoveryProblem[] = [];
  for (let k = 1; k < T; k++) {
    for (const d of sorted[k]!) {
      if (d.parents.size < 2) continue;
      const parents = [...d.parents]
        .sort(([a], [b]) => compareStrings(a, b))
        .map(([value, ns]) => ({ key: keys[k + 1]!, value, hyperNode: domains[k + 1]!.get(value)!.name, nodes: ns }));
      problems.push({
        reason: 'MultipleParents',
        key: d.key,
        value: d.value,
        hyperNode: d.name,
        parents,
        message: multipleParentsMessage(d, parents),
      });
    }
  }
  for (let k = 1; k <= T; k++) {
    const s = stopped[k]!;
    if (s.length === 0) continue;
    const names = s.map((x) => x.node.name);
    const higher = s.filter((x) => x.higher).length;
    const what = k === 1 ? ' and are in no HyperNode' : `, so their HyperNodes stop at tier ${k - 1}`;
    const ignored =
      higher > 0 ? `; ${higher} of them have a higher-level label too (ignored: the walk stops at the first missing label)` : '';
    problems.push({
      reason: 'MissingLabel',
      key: keys[k]!,
      tier: k,
      nodes: names,
      message: `${s.length} node(s) have no label ${keys[k]} (tier ${k})${what}: ${few(names, NAMES_SHOWN)}${ignored}`,
    });
  }
  const stale = existing
    .filter(
      (h) =>
        h.metadata.labels?.[VolcanoLabel.NetworkTopologySource] === LABEL_SOURCE &&
        h.metadata.name.startsWith(`hypernode-${type}-tier`) &&
        !used.has(h.metadata.name),
    )
    .map((h) => h.metadata.name)
    .sort(compareStrings);
  for (const name of stale)
    problems.push({
      reason: 'Stale',
      hyperNode: name,
      message: `stale: ${name} (would be deleted): label-sourced and no longer produced by these labels`,
    });
  return { hyperNodes, stale, problems };
}

/** `hypernode-<type>-tier<k>-`: the dash keeps tier 1 from claiming tier 10's names. */
function tierPrefix(type: string, k: number): string {
  return `hypernode-${type}-tier${k}-`;
}

function freshName(type: string, d: Domain, isTaken: (name: string) => boolean): string {
  for (let i = 0; i < NAME_ATTEMPTS; i++) {
    const seed = i === 0 ? `${d.key}=${d.value}` : `${d.key}=${d.value}#${i}`;
    const name = `${tierPrefix(type, d.tier)}${createHash('sha1').update(seed).digest('hex').slice(0, 5)}`;
    if (!isTaken(name)) return name;
  }
  throw new Error(`unable to get unique hyperNodeName after ${NAME_ATTEMPTS} attempts (${d.key}=${d.value})`);
}

function toHyperNode(d: Domain): HyperNode {
  const members: HyperNodeMember[] =
    d.tier === 1
      ? [...d.nodes].sort(compareStrings).map((name) => ({ type: 'Node', selector: { exactMatch: { name } } }))
      : [...d.children]
          .map((c) => c.name)
          .sort(compareStrings)
          .map((name) => ({ type: 'HyperNode', selector: { exactMatch: { name } } }));
  return {
    apiVersion: VolcanoApiVersion.HyperNode,
    kind: 'HyperNode',
    metadata: { name: d.name, labels: { [VolcanoLabel.NetworkTopologySource]: LABEL_SOURCE, [d.key]: d.value } },
    spec: { tier: d.tier, tierName: d.key, members },
  };
}

function multipleParentsMessage(d: Domain, parents: ParentClaim[]): string {
  const list = parents.map((p) => `${p.key}=${p.value} (${p.hyperNode}; nodes ${few(p.nodes, 3)})`);
  const joined = `${list.slice(0, -1).join(', ')} and ${list[list.length - 1]}`;
  const refusals = parents
    .slice(1)
    .map((p) => `HyperNode ${d.name} already has a parent ${parents[0]!.hyperNode}, and cannot set another parent ${p.hyperNode}`);
  return `${d.key}=${d.value} (${d.name}) is under ${parents.length} parents: ${joined}. A value must be unique per label key across the cluster; the scheduler refuses the tree: ${refusals.join('; ')}`;
}

function few(names: readonly string[], n: number): string {
  return names.length <= n ? names.join(', ') : `${names.slice(0, n).join(', ')}, ... (${names.length - n} more)`;
}
