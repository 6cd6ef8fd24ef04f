// `topoqueue topology show`: the domain tree in the terminal, with node counts and free
// capacity per domain. Readable for large clusters: `--depth` limits the levels shown and
// siblings past `--max-children` collapse into one "... N more" line.
//
// Two forms over the same walk:
// - label levels: one line per domain, `<level key>=<value>`;
// - HyperNode tiers: one line per HyperNode, `tier <t> (<tierName>) <name>`, problems of the
//   tree first (`! ...`). The source gives every node a value at every tier, standing in
//   for a skipped tier with the HyperNode below it and for "no HyperNode" with the node
//   itself; such a chain of stand-ins is shown once, on the domain it stands for (a
//   HyperNode saying `(also tier 2)`, a node saying `(in no HyperNode)`). HyperNodes come
//   before nodes among siblings, so a crowd of unplaced nodes cannot push them out of view.

import { formatResourceAmount } from '../api/resources.ts';
import { tierOfLevelKey, type HyperNodeTree } from '../topology/hypernode-tree.ts';
import type { TopologySnapshot } from '../topology/snapshot.ts';

export interface ShowOptions {
  depth?: number;
  maxChildren?: number;
  /** Resources to show (default: every resource some node has, plus pods). */
  resources?: string[];
  /** The HyperNode tree, for a snapshot whose levels are HyperNode tiers. */
  hyperNodes?: HyperNodeView;
  /** Also `used:` and `total:` after `free:` (the command line shows them). */
  usedAndTotal?: boolean;
}

export interface HyperNodeView {
  tree: HyperNodeTree;
  /** `spec.tierName` of each HyperNode that has one. */
  tierNames: ReadonlyMap<string, string>;
}

/** What a domain shows as: itself, or the end of the stand-in chain it starts. */
interface Shown {
  d: number;
  label: string;
  /** Sorts before nodes among siblings (a HyperNode). */
  first: boolean;
}

/**
 * Free and total capacity (`domain * R + r`) and node count of every domain, summed from
 * its leaves; a leaf's total is its nodes' allocatable.
 */
function rollUp(s: TopologySnapshot): { free: Float64Array; total: Float64Array; nodes: Int32Array } {
  const R = s.resourceCount;
  const free = new Float64Array(s.domainCount * R);
  const total = new Float64Array(s.domainCount * R);
  const nodes = new Int32Array(s.domainCount);
  const L = s.levels.length;
  for (const leaf of s.domainsAt(L - 1)) {
    nodes[leaf] = s.leafNodeCount(leaf);
    for (let r = 0; r < R; r++) free[leaf * R + r] = Math.max(0, s.free(leaf, r));
  }
  for (let n = 0; n < s.nodeCount; n++) {
    const info = s.node(n);
    const leaf = s.nodeLeaf(info.name);
    if (leaf < 0) continue;
    for (let r = 0; r < R; r++) total[leaf * R + r]! += info.allocatable[s.resources.names[r]!] ?? 0;
  }
  for (let l = L - 2; l >= 0; l--) {
    for (const d of s.domainsAt(l)) {
      for (const c of s.children(d)) {
        nodes[d]! += nodes[c]!;
        for (let r = 0; r < R; r++) {
          free[d * R + r]! += free[c * R + r]!;
          total[d * R + r]! += total[c * R + r]!;
        }
      }
    }
  }
  return { free, total, nodes };
}

/** One domain of `topology show -o json|yaml`, quantities in human units. */
export interface DomainJson {
  level: string;
  value: string;
  nodes: number;
  free: Record<string, string>;
  used: Record<string, string>;
  total: Record<string, string>;
  children?: DomainJson[];
}

/** The tree as data (`-o json|yaml`): levels, node count, and every domain down to `depth`. */
export function topologyData(
  s: TopologySnapshot,
  title: string,
  options: ShowOptions = {},
): { title: string; levels: string[]; nodes: number; domains: DomainJson[] } {
  const depth = options.depth ?? s.levels.length;
  const R = s.resourceCount;
  const { free, total, nodes } = rollUp(s);
  const names = shownResources(s, options);
  const amounts = (d: number, f: (r: number) => number) =>
    Object.fromEntries(names.map((r) => [s.resources.names[r]!, formatResourceAmount(s.resources.names[r]!, f(d * R + r))]));
  const ranks = s.ranks();
  const domain = (d: number): DomainJson => {
    const out: DomainJson = {
      level: s.levels[s.level(d)]!,
      value: own(s, d),
      nodes: nodes[d]!,
      free: amounts(d, (i) => free[i]!),
      used: amounts(d, (i) => Math.max(0, total[i]! - free[i]!)),
      total: amounts(d, (i) => total[i]!),
    };
    if (s.level(d) + 1 < depth && s.children(d).length > 0)
      out.children = [...s.children(d)].sort((a, b) => ranks[a]! - ranks[b]!).map(domain);
    return out;
  };
  const roots = [...s.domainsAt(0)].sort((a, b) => ranks[a]! - ranks[b]!);
  return { title, levels: [...s.levels], nodes: roots.reduce((n, d) => n + nodes[d]!, 0), domains: roots.map(domain) };
}

/** Resource indexes shown: every resource some leaf has free, plus pods (or the caller's list). */
function shownResources(s: TopologySnapshot, options: ShowOptions): number[] {
  const names =
    options.resources ??
    s.resources.names.filter((n, r) => s.domainsAt(s.levels.length - 1).some((d) => s.free(d, r) !== 0) || n === 'pods');
  return names.map((n) => s.resources.get(n)).filter((r): r is number => r !== undefined);
}

const own = (s: TopologySnapshot, d: number) => s.values(d)[s.level(d)]!;

/** True when the snapshot's levels are HyperNode tiers (then the hostname). */
function isTierTopology(s: TopologySnapshot): boolean {
  return s.levels.length > 1 && s.levels.slice(0, -1).every((k) => tierOfLevelKey(k) !== undefined);
}

function tierList(tiers: readonly number[]): string {
  return `${tiers.length === 1 ? 'tier' : 'tiers'} ${tiers.join(', ')}`;
}

/**
 * Follows a domain down while it only stands in for its single child: the same value one
 * level lower (a HyperNode for a skipped tier, or a node for a tier it has no HyperNode
 * at), or a node's own domain above its leaf. Returns the levels passed and the end.
 */
function standInChain(s: TopologySnapshot, tree: HyperNodeTree, d0: number): { d: number; levels: number[] } {
  const L = s.levels.length;
  const levels = [s.level(d0)];
  let d = d0;
  for (;;) {
    const kids = s.children(d);
    if (kids.length !== 1) break;
    const c = kids[0]!;
    const sameValue = own(s, c) === own(s, d);
    const nodeAboveLeaf = s.level(c) === L - 1 && tree.tier(own(s, d)) === undefined;
    if (!sameValue && !nodeAboveLeaf) break;
    d = c;
    levels.push(s.level(c));
  }
  return { d, levels };
}

function hyperNodeLine(s: TopologySnapshot, view: HyperNodeView, d0: number): Shown {
  const { tree, tierNames } = view;
  const L = s.levels.length;
  const { d, levels } = standInChain(s, tree, d0);
  const v = own(s, d);
  const levelTiers = levels.filter((l) => l < L - 1).map((l) => tierOfLevelKey(s.levels[l]!)!);
  const tier = tree.tier(v);
  if (s.level(d) < L - 1 && tier !== undefined) {
    const also = levelTiers.filter((t) => t !== tier);
    const tn = tierNames.get(v);
    return { d, first: true, label: `tier ${tier}${tn ? ` (${tn})` : ''} ${v}${also.length > 0 ? ` (also ${tierList(also)})` : ''}` };
  }
  let note = '';
  if (s.level(d) === L - 1 && levelTiers.length > 0) {
    const nodeName = s.node(s.leafFirstNode(d)).name;
    const everywhere = levels[0] === 0 && tree.leafHyperNode(nodeName) === undefined;
    note = everywhere ? ' (in no HyperNode)' : ` (in no HyperNode of ${tierList(levelTiers)})`;
  }
  return { d, first: false, label: `${s.levels[s.level(d)]}=${v}${note}` };
}

/** Summary line, the tree's problems (`!`), and the HyperNodes with no node in the tree. */
function hyperNodeHeader(s: TopologySnapshot, view: HyperNodeView, title: string, nodes: Int32Array, maxNames: number): string[] {
  const { tree } = view;
  const L = s.levels.length;
  const shown = new Set<string>();
  for (let l = 0; l < L - 1; l++) for (const d of s.domainsAt(l)) if (tree.tier(own(s, d)) !== undefined) shown.add(own(s, d));
  const total = s.domainsAt(0).reduce((n, d) => n + nodes[d]!, 0);
  const loose = s.leaves().reduce((n, d) => n + (tree.leafHyperNode(s.node(s.leafFirstNode(d)).name) === undefined ? nodes[d]! : 0), 0);
  const tiers = s.levels.slice(0, -1).map((k) => tierOfLevelKey(k)!);
  const lines = [
    `${title}: HyperNode ${tierList(tiers)}, then ${s.levels[L - 1]}; ${shown.size} HyperNode(s), ${total} node(s) in the tree${loose > 0 ? ` (${loose} in no HyperNode)` : ''}`,
  ];
  for (const p of tree.problems) lines.push(`! ${p.message}`);
  for (const w of tree.warnings) lines.push(`! ${w}`);
  if (!tree.ready)
    lines.push('! hyperNodes are not ready for scheduling: jobs with a network topology stay pending until the HyperNodes are fixed');
  const empty = tree.hyperNodeNames.filter((h) => tiers.includes(tree.tier(h)!) && !shown.has(h)).sort();
  if (empty.length > 0) {
    const more = empty.length > maxNames ? `, ... (${empty.length - maxNames} more)` : '';
    lines.push(`  not shown, no node of the tree under them: ${empty.slice(0, maxNames).join(', ')}${more}`);
  }
  return lines;
}

export function renderTopology(s: TopologySnapshot, title: string, options: ShowOptions = {}): string {
  const depth = options.depth ?? s.levels.length;
  const maxChildren = options.maxChildren ?? 20;
  const R = s.resourceCount;
  const { free, total, nodes } = rollUp(s);
  const idx = shownResources(s, options);
  const list = (d: number, f: (i: number) => number) =>
    idx.map((r) => `${s.resources.names[r]}=${formatResourceAmount(s.resources.names[r]!, f(d * R + r))}`).join(' ');
  const fmt = (d: number) =>
    options.usedAndTotal
      ? `${list(d, (i) => free[i]!)}  used: ${list(d, (i) => Math.max(0, total[i]! - free[i]!))}  total: ${list(d, (i) => total[i]!)}`
      : list(d, (i) => free[i]!);
  const roots = s.domainsAt(0);
  const view = options.hyperNodes && isTierTopology(s) ? options.hyperNodes : undefined;
  const lines: string[] = [];
  let show: (d: number) => Shown;
  if (view) {
    show = (d) => hyperNodeLine(s, view, d);
    lines.push(...hyperNodeHeader(s, view, title, nodes, maxChildren));
  } else {
    show = (d) => ({ d, first: false, label: `${s.levels[s.level(d)]}=${own(s, d)}` });
    const total = roots.reduce((n, d) => n + nodes[d]!, 0);
    lines.push(`${title}: ${s.levels.length} level(s) ${s.levels.join(' > ')}; ${total} node(s) in the tree`);
  }
  const ranks = s.ranks();
  const walk = (list: readonly number[], indent: string) => {
    const sorted = list
      .map((d0) => ({ ...show(d0), rank: ranks[d0]! }))
      .sort((a, b) => Number(b.first) - Number(a.first) || a.rank - b.rank);
    for (const { d, label } of sorted.slice(0, maxChildren)) {
      lines.push(`${indent}${label}  nodes=${nodes[d]}  free: ${fmt(d)}`);
      if (s.level(d) + 1 < depth) walk(s.children(d), indent + '  ');
    }
    if (sorted.length > maxChildren) {
      const rest = sorted.slice(maxChildren);
      const restNodes = rest.reduce((n, x) => n + nodes[x.d]!, 0);
      lines.push(`${indent}... ${rest.length} more (${restNodes} node(s)); raise --max-children to see them`);
    }
  };
  walk(roots, '  ');
  return lines.join('\n');
}
