// Failed-node replacement (kueue-tas.md §13, extended to several nodes at once): a new
// assignment for an admitted PodSet that keeps every healthy domain and re-places only
// the pods of the failed nodes.
//
// 1. drop the domains of the failed nodes; their count is what must move;
// 2. every remaining domain must still be a leaf of the snapshot (else: stale);
// 3. slice layers, innermost first: a layer domain whose pods (kept, plus those already
//    refilled) are not a whole number of its slices was broken by a failure; its pods
//    stay, so the slice is completed inside that domain (with the inner layers' slices);
// 4. the pods still missing are whole outermost slices (or, unsliced, any count): they
//    go inside the required domain, the required-level ancestor of the kept pods (none
//    when no pod is kept or the level is only preferred);
// 5. every placement runs against the usage of the kept and already refilled pods; the
//    result merges kept and new domains, sorted by full leaf path, summing duplicates.
//
// With one failed node this is Kueue's procedure: the broken slice's domain is the one the
// missing pods complete. Kueue evicts on a second failure; here the failures are repaired
// together and the Workload is evicted only when no repair fits.
//
// The caller removes the workload's own recorded usage from the snapshot first (and the
// failed nodes, when they are still there): the kept domains come back as assumed usage
// here. node-replacement.ts is that caller, for `plan` and the scheduler alike.

/** A failed node: its `metadata.name` (for messages) and the hostname label value assignments record. */
export interface FailedNode {
  name: string;
  hostname: string;
}

import { compareValues } from '../topology/snapshot.ts';
import type { Assignment, DomainAssignment } from './assignment.ts';
import { AssumedUsage, type PlacementEngine, type PlacementOptions, type PlacementResult } from './engine.ts';
import type { PlacementRequest } from './request.ts';

type FailedNodes = string | FailedNode | readonly (string | FailedNode)[];

const asFailed = (n: string | FailedNode): FailedNode => (typeof n === 'string' ? { name: n, hostname: n } : n);

/** Kueue's message when no replacement fits (the nodes' names, comma separated). */
export const noReplacementReason = (names: readonly string[]): string =>
  `cannot find replacement assignment for unhealthy node: ${names.join(', ')}`;

export function replaceNode(
  engine: PlacementEngine,
  req: PlacementRequest,
  existing: Assignment,
  failedNodes: FailedNodes,
  options: Omit<PlacementOptions, 'assumed' | 'requiredDomain'> = {},
): PlacementResult {
  const s = engine.snapshot;
  const nodes = (Array.isArray(failedNodes) ? (failedNodes as readonly (string | FailedNode)[]) : [failedNodes as string | FailedNode]).map(
    asFailed,
  );
  const hostnames = new Set(nodes.map((n) => n.hostname));
  const isFailed = (d: DomainAssignment): boolean => hostnames.has(d.values[d.values.length - 1]!);
  const failed = existing.domains.filter(isFailed);
  if (failed.length === 0) return { ok: true, workers: existing };
  let missing = failed.reduce((n, d) => n + d.count, 0);
  const kept = existing.domains.filter((d) => !isFailed(d));
  const hit = nodes.filter((n) => failed.some((d) => d.values[d.values.length - 1] === n.hostname)).map((n) => n.name);
  const noReplacement: PlacementResult = { ok: false, reason: noReplacementReason(hit) };

  const keptLeaves: { leaf: number; count: number }[] = [];
  for (const d of kept) {
    const leaf = s.leafById(s.leafIdOf(d.values));
    if (leaf === undefined) {
      return {
        ok: false,
        reason: `Cannot replace the node, because the existing topologyAssignment is invalid, as it contains the stale domain ${d.values[d.values.length - 1]}`,
      };
    }
    keptLeaves.push({ leaf, count: d.count });
  }

  const assumed = new AssumedUsage();
  for (const k of keptLeaves) assumed.add(k.leaf, req.requests, k.count);
  const ancestorAt = (leaf: number, level: number): number => {
    let d = leaf;
    while (d >= 0 && s.level(d) > level) d = s.parent(d);
    return d;
  };
  /** Pods per leaf: kept, then refilled. */
  const placed: { leaf: number; count: number }[] = [...keptLeaves];
  const added: DomainAssignment[] = [];
  const placeInto = (count: number, sliceLayers: PlacementRequest['sliceLayers'], requiredDomain: number | undefined): boolean => {
    const r = engine.place({ ...req, count, leader: undefined, sliceLayers }, { ...options, assumed, requiredDomain });
    if (!r.ok) return false;
    for (const d of r.workers.domains) {
      const leaf = s.leafById(s.leafIdOf(d.values));
      if (leaf !== undefined) {
        assumed.add(leaf, req.requests, d.count);
        placed.push({ leaf, count: d.count });
      }
      added.push(d);
    }
    return true;
  };

  // 3. Broken slices, innermost layer first; each is completed where its pods stay.
  const layers = req.sliceLayers;
  const ranks = s.ranks();
  for (let i = layers.length - 1; i >= 0 && missing > 0; i--) {
    const layer = layers[i]!;
    const level = s.levels.indexOf(layer.topology);
    if (level < 0) continue;
    const perDomain = new Map<number, number>();
    for (const p of placed) {
      const a = ancestorAt(p.leaf, level);
      perDomain.set(a, (perDomain.get(a) ?? 0) + p.count);
    }
    const broken = [...perDomain].filter(([, c]) => c % layer.size !== 0).sort((a, b) => ranks[a[0]]! - ranks[b[0]]!);
    for (const [domain, c] of broken) {
      const deficit = layer.size - (c % layer.size);
      if (deficit > missing || !placeInto(deficit, layers.slice(i + 1), domain)) return noReplacement;
      missing -= deficit;
    }
  }

  // 4. The rest inside the required domain.
  if (missing > 0) {
    let requiredDomain: number | undefined;
    if (req.mode === 'required' && req.level !== undefined && keptLeaves.length > 0)
      requiredDomain = ancestorAt(keptLeaves[0]!.leaf, s.levels.indexOf(req.level));
    const outer = layers[0];
    const sliceLayers = outer === undefined || missing % outer.size === 0 ? layers : [];
    if (!placeInto(missing, sliceLayers, requiredDomain)) return noReplacement;
  }
  return { ok: true, workers: { levels: existing.levels, domains: mergeDomains(kept, added, (d) => fullPath(engine, d)) } };
}

function fullPath(engine: PlacementEngine, d: DomainAssignment): readonly string[] {
  const leaf = engine.snapshot.leafById(engine.snapshot.leafIdOf(d.values));
  return leaf === undefined ? d.values : engine.snapshot.values(leaf);
}

/** Kept and new domains merged, duplicates summed, sorted by full leaf path. */
function mergeDomains(
  a: readonly DomainAssignment[],
  b: readonly DomainAssignment[],
  path: (d: DomainAssignment) => readonly string[],
): DomainAssignment[] {
  const byKey = new Map<string, DomainAssignment>();
  for (const d of [...a, ...b]) {
    const key = d.values.join('\u0000');
    const prev = byKey.get(key);
    if (prev) prev.count += d.count;
    else byKey.set(key, { values: [...d.values], count: d.count });
  }
  return [...byKey.values()].sort((x, y) => compareValues(path(x), path(y)));
}
