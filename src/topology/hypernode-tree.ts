// The HyperNode forest (volcano-hypernode.md §2, §3) and the topology source built on it.
//
// 1. resolve each HyperNode's Node members against the nodes: exact names, regex over node
//    names (unanchored, RE2 semantics), label selectors (an empty selector selects nothing);
// 2. link HyperNode members (exactMatch only): one parent each, the first claimant in input
//    order wins; a second parent or a cycle is a problem on the objects involved and makes
//    the tree not ready (the peer then schedules no job that has a network topology);
// 3. each node's leaf is the lowest-tier HyperNode whose nodes contain it (ties: the first
//    name in byte order, where the peer picks arbitrarily); its chain is leaf, parent, ...
//
// The source turns tiers into levels, highest tier first, then the hostname. A chain that
// skips a tier (a tier-1 switch directly under a tier-3 one) stands in for the missing level
// with its nearest lower HyperNode, and a node in no HyperNode is its own domain at every
// tier, so every node has a value at every level and the snapshot and engine need not know
// the tree came from HyperNodes. The peer's virtual cluster root (tier max + 1) is not a
// level: placing across the top level is what the engine does when it splits at the top.

import { HOSTNAME_LABEL } from '../api/keys.ts';
import type { StringMap } from '../api/objects.ts';
import { compileUserRegex } from '../api/regex.ts';
import type { HyperNode, LabelSelector } from '../api/volcano-objects.ts';
import { compareStrings } from '../api/values.ts';
import { matchesRequirement } from './node-match.ts';
import type { NodeInfo, TopologySource } from './source.ts';

/** Level key of a HyperNode tier: what a Topology level or a Kueue annotation names. */
export const TIER_LEVEL_PREFIX = 'topology.volcano.sh/tier-';

export function tierLevelKey(tier: number): string {
  return `${TIER_LEVEL_PREFIX}${tier}`;
}

/** The tier of a level key, or undefined when the key is not a tier key. */
export function tierOfLevelKey(key: string): number | undefined {
  if (!key.startsWith(TIER_LEVEL_PREFIX)) return undefined;
  const rest = key.slice(TIER_LEVEL_PREFIX.length);
  return /^(0|[1-9][0-9]*)$/.test(rest) ? Number(rest) : undefined;
}

export interface HyperNodeProblem {
  /** HyperNodes the problem is about (each gets a condition). */
  hyperNodes: string[];
  reason: 'MultipleParents' | 'CyclicDependency' | 'InvalidMember';
  message: string;
}

/** A node as the tree needs it. */
export interface TreeNode {
  name: string;
  labels: StringMap;
}

export class HyperNodeTree {
  /** Distinct tiers of the HyperNodes, ascending. */
  readonly tiers: number[];
  /** The peer's virtual root tier: highest tier + 1 (1 when there are no HyperNodes). */
  readonly rootTier: number;
  readonly problems: HyperNodeProblem[];
  private readonly tierOf = new Map<string, number>();
  private readonly parent = new Map<string, string>();
  private readonly children = new Map<string, string[]>();
  private readonly realNodes = new Map<string, Set<string>>();
  private readonly directCount = new Map<string, number>();
  private readonly leafOf = new Map<string, string>();
  private readonly tierByName = new Map<string, number>();
  private readonly tierNameConflicts: string[] = [];
  /** HyperNode-type members selected by regexMatch or labelMatch: ignored, as Volcano does. */
  private readonly ignoredMembers: string[] = [];

  constructor(hyperNodes: readonly HyperNode[], nodes: readonly TreeNode[]) {
    const problems: HyperNodeProblem[] = [];
    const byName = new Map(hyperNodes.map((h) => [h.metadata.name, h]));
    for (const h of hyperNodes) {
      const tier = h.spec.tier ?? 0;
      this.tierOf.set(h.metadata.name, tier);
      const tn = h.spec.tierName;
      if (tn !== undefined && tn !== '') {
        const prev = this.tierByName.get(tn);
        if (prev !== undefined && prev !== tier)
          this.tierNameConflicts.push(`Conflicting tiers for tierName ${tn}: existing ${prev}, new ${tier}. Using ${tier}.`);
        this.tierByName.set(tn, tier);
      }
    }

    // 2. Parent links, first claimant (input order) wins.
    for (const h of hyperNodes) {
      for (const m of h.spec.members) {
        if (m.type !== 'HyperNode' || !m.selector.exactMatch) continue;
        const child = m.selector.exactMatch.name;
        const p = this.parent.get(child);
        if (p !== undefined && p !== h.metadata.name) {
          problems.push({
            hyperNodes: [child, p, h.metadata.name],
            reason: 'MultipleParents',
            message: `HyperNode ${child} already has a parent ${p}, and cannot set another parent ${h.metadata.name}`,
          });
          continue;
        }
        if (p === h.metadata.name) continue;
        // A link that would close a cycle is refused.
        const chain: string[] = [];
        let cyclic = false;
        for (let a: string | undefined = h.metadata.name; a !== undefined; a = this.parent.get(a)) {
          chain.push(a);
          if (a === child) {
            cyclic = true;
            break;
          }
        }
        if (cyclic) {
          problems.push({
            hyperNodes: [...new Set(chain)],
            reason: 'CyclicDependency',
            message: `cyclic dependency detected: HyperNode ${child} is already in the ancestor chain [${chain.join(' ')}]`,
          });
          continue;
        }
        this.parent.set(child, h.metadata.name);
        const kids = this.children.get(h.metadata.name) ?? [];
        kids.push(child);
        this.children.set(h.metadata.name, kids);
      }
    }

    // 1. Node members.
    const index = new NodeIndex(nodes);
    const direct = new Map<string, Set<string>>();
    for (const h of hyperNodes) {
      const set = new Set<string>();
      let count = 0;
      for (const [i, m] of h.spec.members.entries()) {
        const sel = m.selector;
        if (m.type === 'HyperNode') {
          if (sel.exactMatch) count++;
          else {
            const kind = sel.regexMatch ? 'regexMatch' : 'labelMatch';
            this.ignoredMembers.push(
              `HyperNode ${h.metadata.name}: spec.members[${i}] (type HyperNode) uses ${kind}, which Volcano ignores for HyperNode members: ` +
                'the member is ignored; name the child HyperNode with exactMatch.name, or use type Node to select nodes',
            );
          }
          continue;
        }
        if (sel.exactMatch) {
          set.add(sel.exactMatch.name);
        } else if (sel.regexMatch) {
          const r = compileUserRegex(sel.regexMatch.pattern);
          if (!r.ok) {
            problems.push({
              hyperNodes: [h.metadata.name],
              reason: 'InvalidMember',
              message: `spec.members[${i}]: member regexMatch pattern is invalid: ${r.error}`,
            });
            continue;
          }
          for (const n of index.namesFor(sel.regexMatch.pattern)) if (r.regex.test(n)) set.add(n);
        } else if (sel.labelMatch) {
          for (const n of index.candidatesFor(sel.labelMatch)) if (matchesLabelSelector(n.labels, sel.labelMatch)) set.add(n.name);
        }
      }
      direct.set(h.metadata.name, set);
      this.directCount.set(h.metadata.name, count + set.size);
    }
    const resolve = (name: string, seen: Set<string>): Set<string> => {
      const memo = this.realNodes.get(name);
      if (memo) return memo;
      const out = new Set(direct.get(name) ?? []);
      seen.add(name);
      for (const c of this.children.get(name) ?? []) {
        if (seen.has(c) || !byName.has(c)) continue;
        for (const n of resolve(c, seen)) out.add(n);
      }
      this.realNodes.set(name, out);
      return out;
    };
    for (const h of hyperNodes) resolve(h.metadata.name, new Set());

    // 3. Each node's leaf: lowest tier, then name.
    const order = [...hyperNodes]
      .map((h) => h.metadata.name)
      .sort((a, b) => this.tierOf.get(a)! - this.tierOf.get(b)! || compareStrings(a, b));
    for (const hn of order) for (const n of this.realNodes.get(hn)!) if (!this.leafOf.has(n)) this.leafOf.set(n, hn);

    this.tiers = [...new Set(this.tierOf.values())].sort((a, b) => a - b);
    this.rootTier = this.tiers.length === 0 ? 1 : this.tiers[this.tiers.length - 1]! + 1;
    this.problems = problems;
  }

  /** False when a HyperNode has two parents or the links form a cycle (spec §2.4). */
  get ready(): boolean {
    return !this.problems.some((p) => p.reason !== 'InvalidMember');
  }

  get hyperNodeNames(): string[] {
    return [...this.tierOf.keys()];
  }

  tier(hn: string): number | undefined {
    return this.tierOf.get(hn);
  }

  parentOf(hn: string): string | undefined {
    return this.parent.get(hn);
  }

  childrenOf(hn: string): readonly string[] {
    return this.children.get(hn) ?? [];
  }

  /** `[h, parent(h), ...]`, self first. */
  ancestors(hn: string): string[] {
    const out: string[] = [];
    const seen = new Set<string>();
    for (let a: string | undefined = hn; a !== undefined && !seen.has(a); a = this.parent.get(a)) {
      out.push(a);
      seen.add(a);
    }
    return out;
  }

  /** The lowest-tier HyperNode containing the node, if any. */
  leafHyperNode(node: string): string | undefined {
    return this.leafOf.get(node);
  }

  /** Every node under the HyperNode (exact names count even without a Node object). */
  nodesOf(hn: string): ReadonlySet<string> {
    return this.realNodes.get(hn) ?? new Set();
  }

  /** `status.nodeCount` as the peer computes it: the union of the direct members. */
  nodeCount(hn: string): number {
    return this.directCount.get(hn) ?? 0;
  }

  /** `tierName` -> tier (the last HyperNode declaring a name wins, as in the peer). */
  tierOfName(name: string): number | undefined {
    return this.tierByName.get(name);
  }

  get warnings(): readonly string[] {
    return [...this.tierNameConflicts, ...this.ignoredMembers];
  }

  /** Problems naming this HyperNode. */
  problemsOf(hn: string): HyperNodeProblem[] {
    return this.problems.filter((p) => p.hyperNodes.includes(hn));
  }
}

/**
 * Narrows member resolution so a tree of 10,000 HyperNodes over 100,000 nodes does not test
 * every selector against every node: names sorted once, so a regex anchored on a literal
 * prefix (`^gpu-12-`) is tested only on the names in that prefix's range; labels indexed
 * by key and value, so a selector with `matchLabels` or an `In` expression is tested only on
 * the nodes that carry one of its values. Every candidate is still tested in full.
 */
class NodeIndex {
  private readonly sortedNames: string[];
  private readonly byLabel = new Map<string, Map<string, TreeNode[]>>();

  constructor(private readonly nodes: readonly TreeNode[]) {
    this.sortedNames = nodes.map((n) => n.name).sort();
  }

  /** Node names a pattern may match: the literal-prefix range of an anchored pattern, else all. */
  namesFor(pattern: string): readonly string[] {
    const prefix = literalPrefix(pattern);
    if (prefix === '') return this.sortedNames;
    const names = this.sortedNames;
    let lo = 0;
    let hi = names.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (names[mid]! < prefix) lo = mid + 1;
      else hi = mid;
    }
    let end = lo;
    while (end < names.length && names[end]!.startsWith(prefix)) end++;
    return names.slice(lo, end);
  }

  /** Nodes a selector may match: those carrying one of the values of its most selective term. */
  candidatesFor(sel: LabelSelector): readonly TreeNode[] {
    let best: readonly TreeNode[] | undefined;
    const consider = (list: readonly TreeNode[]) => {
      if (!best || list.length < best.length) best = list;
    };
    for (const [k, v] of Object.entries(sel.matchLabels ?? {})) consider(this.valuesOf(k).get(v) ?? []);
    for (const e of sel.matchExpressions ?? []) {
      if (e.operator !== 'In') continue;
      const byValue = this.valuesOf(e.key);
      consider((e.values ?? []).flatMap((v) => byValue.get(v) ?? []));
    }
    return best ?? this.nodes;
  }

  private valuesOf(key: string): Map<string, TreeNode[]> {
    let m = this.byLabel.get(key);
    if (!m) {
      m = new Map();
      for (const n of this.nodes) {
        const v = n.labels[key];
        if (v === undefined) continue;
        const list = m.get(v);
        if (list) list.push(n);
        else m.set(v, [n]);
      }
      this.byLabel.set(key, m);
    }
    return m;
  }
}

/** The literal text a pattern anchored with `^` must start with ('' when none or unsure). */
export function literalPrefix(pattern: string): string {
  // An alternation anywhere may escape the anchor (`^a|b`); flag groups and \\Q...\\E can make
  // the character before them optional (`^n(?i)?ode`): no prefix then.
  if (!pattern.startsWith('^') || pattern.includes('|') || pattern.includes('(?') || pattern.includes('\\Q')) return '';
  let out = '';
  for (let i = 1; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === '\\') {
      const next = pattern[i + 1];
      if (next !== undefined && /[-./\\^$*+?()[\]{}|]/.test(next)) {
        out += next;
        i++;
        continue;
      }
      // A class escape (\\d, \\w...) may be followed by a quantifier that applies to it, but
      // what came before stays literal.
      break;
    }
    if (/[.*+?()[\]{}|^$]/.test(c)) {
      // A quantifier makes the character before it optional.
      if (/[*?{]/.test(c)) out = out.slice(0, -1);
      break;
    }
    out += c;
  }
  return out;
}

/** Standard label-selector semantics, except that an empty selector selects nothing (peer). */
export function matchesLabelSelector(labels: StringMap, sel: LabelSelector): boolean {
  const ml = sel.matchLabels ?? {};
  const me = sel.matchExpressions ?? [];
  if (Object.keys(ml).length === 0 && me.length === 0) return false;
  for (const k in ml) if (labels[k] !== ml[k]) return false;
  for (const e of me) if (!matchesRequirement(labels[e.key], e)) return false;
  return true;
}

/**
 * A HyperNode tree as a topology source. Levels are the given tiers (default: every tier
 * of the tree), highest first, as `topology.volcano.sh/tier-<N>` keys, then the hostname.
 */
export class HyperNodeTopologySource implements TopologySource {
  readonly name: string;
  readonly levels: readonly string[];
  readonly levelTiers: readonly number[];
  readonly tree: HyperNodeTree;

  constructor(name: string, tree: HyperNodeTree, tiers?: readonly number[]) {
    this.name = name;
    this.tree = tree;
    this.levelTiers = [...(tiers ?? tree.tiers)].sort((a, b) => b - a);
    this.levels = [...this.levelTiers.map(tierLevelKey), HOSTNAME_LABEL];
  }

  leafPath(node: NodeInfo): string[] | undefined {
    const host = node.labels[HOSTNAME_LABEL] ?? node.name;
    const leaf = this.tree.leafHyperNode(node.name);
    const chain = leaf === undefined ? [] : this.tree.ancestors(leaf).map((h) => ({ h, tier: this.tree.tier(h)! }));
    const path: string[] = [];
    for (const t of this.levelTiers) {
      // A parent of the same tier as its child is the wider domain of that tier: take the
      // highest HyperNode of tier t in the chain.
      let at: string | undefined;
      for (const c of chain) if (c.tier === t) at = c.h;
      if (at !== undefined) {
        path.push(at);
        continue;
      }
      // Missing tier: the nearest HyperNode below it stands in (above the chain's top, that
      // is the top); with none below, the node is its own domain at this tier.
      let below: string | undefined;
      for (const c of chain) if (c.tier < t) below = c.h;
      path.push(below ?? node.name);
    }
    path.push(host);
    return path;
  }
}
