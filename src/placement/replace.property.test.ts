// Repair of several failed nodes over random clusters and random failed sets: every
// repaired placement is valid (capacity, required domain, whole slices), keeps every
// healthy pod where it was, and no repair is missed that a re-placement of the missing
// pods inside the same required domain would find (checked by counting free pod slots,
// independently of the engine).

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { BLOCK, HOST, RACK, rackOf, snapshotOf } from '../testing/builders.ts';
import type { TopologySnapshot } from '../topology/snapshot.ts';
import type { Assignment } from './assignment.ts';
import { PlacementEngine } from './engine.ts';
import { replaceNode } from './replace.ts';
import type { PlacementRequest } from './request.ts';

const levels = [BLOCK, RACK, HOST];

/** Pod slots (1 cpu per pod) per host, by block and rack. */
type Cluster = number[][][];

const clusterArb: fc.Arbitrary<Cluster> = fc.array(
  fc.array(fc.array(fc.integer({ min: 0, max: 4 }), { minLength: 1, maxLength: 4 }), { minLength: 1, maxLength: 3 }),
  { minLength: 1, maxLength: 2 },
);

const caseArb = fc.record({
  cluster: clusterArb,
  count: fc.integer({ min: 1, max: 16 }),
  /** 0: unsliced, required rack; else rack slices of this size, required block. */
  slice: fc.constantFrom(0, 0, 2, 3),
  /** Which of the assignment's hosts fail (by position, as bits), and extra unassigned ones. */
  failBits: fc.integer({ min: 1, max: 255 }),
});

interface Host {
  name: string;
  block: string;
  rack: string;
  cap: number;
}

function hostsOf(cluster: Cluster): Host[] {
  const out: Host[] = [];
  cluster.forEach((racks, b) =>
    racks.forEach((caps, r) =>
      caps.forEach((cap, h) => out.push({ name: `b${b}-r${r}-x${h + 1}`, block: `b${b}`, rack: `b${b}/r${r}`, cap })),
    ),
  );
  return out;
}

function snapshot(cluster: Cluster, without: ReadonlySet<string>): TopologySnapshot {
  const nodes = cluster.flatMap((racks, b) => racks.flatMap((caps, r) => rackOf(`b${b}`, `r${r}`, caps, `b${b}-r${r}-x`)));
  return snapshotOf(
    levels,
    nodes.filter((n) => !without.has(n.build().metadata.name)),
  );
}

const perHost = (a: Assignment): Map<string, number> => {
  const m = new Map<string, number>();
  for (const d of a.domains) m.set(d.values[d.values.length - 1]!, (m.get(d.values[d.values.length - 1]!) ?? 0) + d.count);
  return m;
};

function sum<T>(xs: Iterable<T>, f: (x: T) => number): number {
  let n = 0;
  for (const x of xs) n += f(x);
  return n;
}

/**
 * Whether the missing pods fit, by slot counting: unsliced, the free slots of the required
 * rack; sliced, each broken rack's deficit in that rack, then whole slices in the block's
 * racks. With no kept pod, any domain of the required level will do.
 */
function repairExists(
  hosts: readonly Host[],
  failed: ReadonlySet<string>,
  kept: ReadonlyMap<string, number>,
  missing: number,
  slice: number,
): boolean {
  const healthy = hosts.filter((h) => !failed.has(h.name));
  const free = (h: Host) => h.cap - (kept.get(h.name) ?? 0);
  const keyOf = (h: Host) => (slice === 0 ? h.rack : h.block);
  const keptHosts = healthy.filter((h) => (kept.get(h.name) ?? 0) > 0);
  const domains = keptHosts.length > 0 ? [keyOf(keptHosts[0]!)] : [...new Set(healthy.map(keyOf))];
  return domains.some((domain) => {
    const inside = healthy.filter((h) => keyOf(h) === domain);
    if (slice === 0) return sum(inside, free) >= missing;
    let rest = missing;
    let wholeSlices = 0;
    for (const rack of new Set(inside.map((h) => h.rack))) {
      const hs = inside.filter((h) => h.rack === rack);
      const c = sum(hs, (h) => kept.get(h.name) ?? 0);
      let room = sum(hs, free);
      if (c % slice !== 0) {
        const deficit = slice - (c % slice);
        if (deficit > room || deficit > rest) return false;
        room -= deficit;
        rest -= deficit;
      }
      wholeSlices += Math.floor(room / slice);
    }
    return rest % slice === 0 && rest / slice <= wholeSlices;
  });
}

describe('repair of several failed nodes (property)', () => {
  it('every repair is valid, keeps every healthy pod where it was, and none is missed that slot counting finds', () => {
    let repaired = 0;
    let refused = 0;
    fc.assert(
      fc.property(caseArb, ({ cluster, count: rawCount, slice, failBits }) => {
        const count = slice === 0 ? rawCount : slice * Math.max(1, Math.floor(rawCount / slice));
        const hosts = hostsOf(cluster);
        const req: PlacementRequest = {
          podSetName: 'main',
          count,
          requests: { cpu: 1000 },
          mode: 'required',
          level: slice === 0 ? RACK : BLOCK,
          sliceLayers: slice === 0 ? [] : [{ topology: RACK, size: slice }],
          tolerations: [],
        };
        const first = new PlacementEngine(snapshot(cluster, new Set())).place(req);
        if (!first.ok) return;
        const before = perHost(first.workers);
        const assigned = [...before.keys()].sort();
        const failed = new Set(assigned.filter((_, i) => (failBits >> i) & 1));
        if (failed.size === 0) failed.add(assigned[0]!);
        // An unassigned host may fail too: it must change nothing.
        const idle = hosts.find((h) => !before.has(h.name));
        if (idle && failBits & 128) failed.add(idle.name);

        const s = snapshot(cluster, failed);
        const r = replaceNode(new PlacementEngine(s), req, first.workers, [...failed]);
        const kept = new Map([...before].filter(([h]) => !failed.has(h)));
        const missing = sum(failed, (h) => before.get(h) ?? 0);
        const exists = repairExists(hosts, failed, kept, missing, slice);
        if (!r.ok) {
          refused++;
          assert.equal(
            exists,
            false,
            `a repair was missed: ${JSON.stringify({ cluster, count, slice, failed: [...failed], before: [...before] })}`,
          );
          assert.match(r.reason, /^cannot find replacement assignment for unhealthy node: /);
          return;
        }
        repaired++;
        const after = perHost(r.workers);
        assert.equal(
          sum(after.values(), (n) => n),
          count,
          'every pod placed',
        );
        for (const f of failed) assert.equal(after.get(f), undefined, `nothing left on failed ${f}`);
        for (const [h, n] of kept) assert.ok((after.get(h) ?? 0) >= n, `healthy pods on ${h} stay`);
        const byName = new Map(hosts.map((h) => [h.name, h]));
        for (const [h, n] of after) assert.ok(n <= byName.get(h)!.cap, `${h} over capacity`);
        const domainsUsed = new Set([...after.keys()].map((h) => (slice === 0 ? byName.get(h)!.rack : byName.get(h)!.block)));
        assert.equal(domainsUsed.size, 1, 'one required domain');
        if (kept.size > 0)
          assert.ok(
            domainsUsed.has(slice === 0 ? byName.get([...kept.keys()][0]!)!.rack : byName.get([...kept.keys()][0]!)!.block),
            "the kept pods' domain",
          );
        if (slice > 0) {
          const perRack = new Map<string, number>();
          for (const [h, n] of after) perRack.set(byName.get(h)!.rack, (perRack.get(byName.get(h)!.rack) ?? 0) + n);
          for (const [rack, n] of perRack) assert.equal(n % slice, 0, `rack ${rack} holds whole slices`);
        }
      }),
      { numRuns: 400, seed: 15 },
    );
    assert.ok(repaired > 20 && refused > 5, `both outcomes exercised: ${repaired} repaired, ${refused} refused`);
  });
});
