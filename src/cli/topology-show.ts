// `topoqueue topology show`: the domain tree in the terminal, with node counts and free
// capacity per domain. Readable for large clusters: `--depth` limits the levels shown and
// siblings past `--max-children` collapse into one "... N more" line.

import { formatResourceAmount } from '../api/resources.ts';
import type { TopologySnapshot } from '../topology/snapshot.ts';

export interface ShowOptions {
  depth?: number;
  maxChildren?: number;
  /** Resources to show (default: every resource some node has, plus pods). */
  resources?: string[];
}

/** Free capacity of every domain, summed from its leaves: `domain * R + r`. */
function rollUpFree(s: TopologySnapshot): Float64Array {
  const R = s.resourceCount;
  const out = new Float64Array(s.domainCount * R);
  const L = s.levels.length;
  for (const leaf of s.domainsAt(L - 1)) for (let r = 0; r < R; r++) out[leaf * R + r] = Math.max(0, s.free(leaf, r));
  for (let l = L - 2; l >= 0; l--) {
    for (const d of s.domainsAt(l)) for (const c of s.children(d)) for (let r = 0; r < R; r++) out[d * R + r]! += out[c * R + r]!;
  }
  return out;
}

function nodeCount(s: TopologySnapshot, d: number): number {
  if (s.level(d) === s.levels.length - 1) return s.leafNodeCount(d);
  let n = 0;
  for (const c of s.children(d)) n += nodeCount(s, c);
  return n;
}

export function renderTopology(s: TopologySnapshot, title: string, options: ShowOptions = {}): string {
  const depth = options.depth ?? s.levels.length;
  const maxChildren = options.maxChildren ?? 20;
  const R = s.resourceCount;
  const free = rollUpFree(s);
  const names = options.resources ?? s.resources.names.filter((n, r) => s.domainsAt(s.levels.length - 1).some((d) => s.free(d, r) !== 0) || n === 'pods');
  const idx = names.map((n) => s.resources.get(n)).filter((r): r is number => r !== undefined);
  const fmt = (d: number) => idx.map((r) => `${s.resources.names[r]}=${formatResourceAmount(s.resources.names[r]!, free[d * R + r]!)}`).join(' ');
  const roots = s.domainsAt(0);
  const lines: string[] = [];
  const total = roots.reduce((n, d) => n + nodeCount(s, d), 0);
  lines.push(`${title}: ${s.levels.length} level(s) ${s.levels.join(' > ')}; ${total} node(s) in the tree`);
  const ranks = s.ranks();
  const walk = (list: readonly number[], indent: string) => {
    const sorted = [...list].sort((a, b) => ranks[a]! - ranks[b]!);
    const shown = sorted.slice(0, maxChildren);
    for (const d of shown) {
      const level = s.level(d);
      const value = s.values(d)[level]!;
      const nodes = nodeCount(s, d);
      lines.push(`${indent}${s.levels[level]}=${value}  nodes=${nodes}  free: ${fmt(d)}`);
      if (level + 1 < depth) walk(s.children(d), indent + '  ');
    }
    if (sorted.length > shown.length) {
      const rest = sorted.slice(maxChildren);
      const restNodes = rest.reduce((n, d) => n + nodeCount(s, d), 0);
      lines.push(`${indent}... ${rest.length} more (${restNodes} node(s)); raise --max-children to see them`);
    }
  };
  walk(roots, '  ');
  return lines.join('\n');
}
