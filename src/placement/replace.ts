// Failed-node replacement (kueue-tas.md §13): a new assignment for an admitted PodSet
// that keeps every healthy domain and re-places only the pods of the failed node.
//
// 1. drop the domain of the failed node; its count is what must move;
// 2. every remaining domain must still be a leaf of the snapshot (else: stale);
// 3. find the required replacement domain: the innermost broken slice layer's domain
//    that the missing pods complete, else the required-level ancestor, else none;
// 4. a sliced request whose missing count is not a whole outer slice is re-placed with
//    the innermost layer that divides it (single pods if none);
// 5. place the missing pods inside that domain against the usage of the kept domains,
//    then merge, sorted by full leaf path, summing duplicates.
//
// The caller removes the workload's own recorded usage from the snapshot first (and the
// failed node, when it is still there): the kept domains come back as assumed usage here.
// node-replacement.ts is that caller, for `plan` and the scheduler alike.

/** A failed node: its `metadata.name` (for messages) and the hostname label value assignments record. */
export interface FailedNode {
  name: string;
  hostname: string;
}

import { compareValues } from '../topology/snapshot.ts';
import type { Assignment, DomainAssignment } from './assignment.ts';
import { AssumedUsage, type PlacementEngine, type PlacementOptions, type PlacementResult } from './engine.ts';
import type { PlacementRequest } from './request.ts';

export function replaceNode(
  engine: PlacementEngine,
  req: PlacementRequest,
  existing: Assignment,
  failedNode: string | FailedNode,
  options: Omit<PlacementOptions, 'assumed' | 'requiredDomain'> = {},
): PlacementResult {
  const s = engine.snapshot;
  const { name, hostname } = typeof failedNode === 'string' ? { name: failedNode, hostname: failedNode } : failedNode;
  const failed = existing.domains.filter((d) => d.values[d.values.length - 1] === hostname);
  if (failed.length === 0) return { ok: true, workers: existing };
  const missing = failed.reduce((n, d) => n + d.count, 0);
  const kept = existing.domains.filter((d) => d.values[d.values.length - 1] !== hostname);

  const keptLeaves: { leaf: number; count: number }[] = [];
  for (const d of kept) {
    const leaf = s.leafById(s.leafIdOf(d.values));
    if (leaf === undefined) {
      return { ok: false, reason: `Cannot replace the node, because the existing topologyAssignment is invalid, as it contains the stale domain ${d.values[d.values.length - 1]}` };
    }
    keptLeaves.push({ leaf, count: d.count });
  }

  const assumed = new AssumedUsage();
  for (const k of keptLeaves) assumed.add(k.leaf, req.requests, k.count);

  // 3. The required replacement domain.
  const ancestorAt = (leaf: number, level: number): number => {
    let d = leaf;
    while (d >= 0 && s.level(d) > level) d = s.parent(d);
    return d;
  };
  let requiredDomain: number | undefined;
  const layers = req.sliceLayers;
  let layersForMissing = layers;
  const brokenIdx = findLastIndex(layers, (l) => missing % l.size !== 0);
  if (brokenIdx >= 0) {
    const layer = layers[brokenIdx]!;
    const level = s.levels.indexOf(layer.topology);
    const perDomain = new Map<number, number>();
    for (const k of keptLeaves) {
      const a = ancestorAt(k.leaf, level);
      perDomain.set(a, (perDomain.get(a) ?? 0) + k.count);
    }
    const ranks = s.ranks();
    const candidates = [...perDomain].filter(([, c]) => (c + missing) % layer.size === 0).sort((a, b) => ranks[a[0]]! - ranks[b[0]]!);
    if (candidates.length > 0) requiredDomain = candidates[0]![0];
  }
  if (requiredDomain === undefined && req.mode === 'required' && req.level !== undefined && keptLeaves.length > 0) {
    requiredDomain = ancestorAt(keptLeaves[0]!.leaf, s.levels.indexOf(req.level));
  }
  // 4. Re-place a broken slice with the innermost layer that divides the missing pods.
  if (layers.length > 0 && missing % layers[0]!.size !== 0 && requiredDomain !== undefined) {
    const fitting = findLastIndex(layers, (l) => missing % l.size === 0);
    layersForMissing = fitting >= 0 ? [layers[fitting]!] : [];
  }

  const result = engine.place({ ...req, count: missing, leader: undefined, sliceLayers: layersForMissing }, { ...options, assumed, requiredDomain });
  if (!result.ok) return { ok: false, reason: `cannot find replacement assignment for unhealthy node: ${name}` };
  return { ok: true, workers: { levels: existing.levels, domains: mergeDomains(kept, result.workers.domains, (d) => fullPath(engine, d)) } };
}

function fullPath(engine: PlacementEngine, d: DomainAssignment): readonly string[] {
  const leaf = engine.snapshot.leafById(engine.snapshot.leafIdOf(d.values));
  return leaf === undefined ? d.values : engine.snapshot.values(leaf);
}

/** Kept and new domains merged, duplicates summed, sorted by full leaf path. */
function mergeDomains(a: readonly DomainAssignment[], b: readonly DomainAssignment[], path: (d: DomainAssignment) => readonly string[]): DomainAssignment[] {
  const byKey = new Map<string, DomainAssignment>();
  for (const d of [...a, ...b]) {
    const key = d.values.join('\u0000');
    const prev = byKey.get(key);
    if (prev) prev.count += d.count;
    else byKey.set(key, { values: [...d.values], count: d.count });
  }
  return [...byKey.values()].sort((x, y) => compareValues(path(x), path(y)));
}

function findLastIndex<T>(xs: readonly T[], pred: (x: T) => boolean): number {
  for (let i = xs.length - 1; i >= 0; i--) if (pred(xs[i]!)) return i;
  return -1;
}
