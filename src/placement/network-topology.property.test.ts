// The placement invariants on random HyperNode trees: no node over capacity, counts add
// up, a hard limit is respected (every pod inside one HyperNode of tier <= the limit),
// partitions stay whole in one domain, the same input gives the same output.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { hyperNode, hyperNodeSnapshotOf, node } from '../testing/builders.ts';
import { PlacementEngine } from './engine.ts';
import { applyNetworkTopology, hyperNodeLeafFilter } from './network-topology.ts';

interface RandomTree {
  spines: { leaves: { cpus: number[] }[] }[];
  loose: number[];
}

const treeArb: fc.Arbitrary<RandomTree> = fc.record({
  spines: fc.array(
    fc.record({
      leaves: fc.array(fc.record({ cpus: fc.array(fc.integer({ min: 0, max: 4 }), { minLength: 1, maxLength: 4 }) }), {
        minLength: 1,
        maxLength: 3,
      }),
    }),
    { minLength: 1, maxLength: 3 },
  ),
  loose: fc.array(fc.integer({ min: 0, max: 4 }), { maxLength: 2 }),
});

function build(t: RandomTree) {
  const hns = [];
  const nodes = [];
  const cap = new Map<string, number>();
  const spineNames: string[] = [];
  for (const [si, spine] of t.spines.entries()) {
    const leafNames: string[] = [];
    for (const [li, leaf] of spine.leaves.entries()) {
      const names = leaf.cpus.map((c, ni) => {
        const name = `n${si}-${li}-${ni}`;
        nodes.push(node(name).cpu(c));
        cap.set(name, c);
        return name;
      });
      hns.push(
        hyperNode(`leaf${si}-${li}`)
          .tier(1)
          .nodes(...names),
      );
      leafNames.push(`leaf${si}-${li}`);
    }
    hns.push(
      hyperNode(`spine${si}`)
        .tier(2)
        .hyperNodes(...leafNames),
    );
    spineNames.push(`spine${si}`);
  }
  hns.push(
    hyperNode('core')
      .tier(3)
      .hyperNodes(...spineNames),
  );
  for (const [i, c] of t.loose.entries()) {
    nodes.push(node(`loose${i}`).cpu(c));
    cap.set(`loose${i}`, c);
  }
  return { ...hyperNodeSnapshotOf(hns, nodes), cap };
}

describe('placement invariants on random HyperNode trees', () => {
  it('hard limits, soft search, partitions', () => {
    fc.assert(
      fc.property(
        treeArb,
        fc.integer({ min: 1, max: 12 }),
        fc.constantFrom<'hard' | 'soft'>('hard', 'soft'),
        fc.integer({ min: 0, max: 4 }),
        fc.constantFrom(0, 2),
        (t, count, mode, tier, partition) => {
          const { snapshot, tree, cap } = build(t);
          const req = applyNetworkTopology(
            {
              podSetName: 'w',
              count: partition ? count * partition : count,
              requests: { cpu: 1000 },
              mode: 'unconstrained',
              sliceLayers: [],
              tolerations: [],
            },
            snapshot.levels,
            { mode, highestTier: tier },
            partition ? { partitionSize: partition, topology: { mode: 'hard', highestTier: 1 } } : {},
            (n) => tree.tierOfName(n),
          );
          if (typeof req === 'string') {
            assert.ok(mode === 'hard' && tier < 1, req);
            return;
          }
          const leafEligible = hyperNodeLeafFilter(snapshot, req, (n) =>
            tree.leafHyperNode(n) ? tree.tier(tree.leafHyperNode(n)!) : undefined,
          );
          const r = new PlacementEngine(snapshot).place(req, { leafEligible });
          assert.deepEqual(new PlacementEngine(snapshot).place(req, { leafEligible }), r, 'deterministic');
          if (!r.ok) return;
          const used = new Map<string, number>();
          let total = 0;
          for (const d of r.workers.domains) {
            used.set(d.values[0]!, (used.get(d.values[0]!) ?? 0) + d.count);
            total += d.count;
          }
          assert.equal(total, req.count, 'counts add up');
          for (const [n, u] of used) assert.ok(u <= cap.get(n)!, `${n}: ${u} > ${cap.get(n)}`);
          const hosts = [...used.keys()];
          if (mode === 'hard' && tier < tree.rootTier) {
            const ok = tree.hyperNodeNames.some((h) => tree.tier(h)! <= tier && hosts.every((n) => tree.nodesOf(h).has(n)));
            assert.ok(ok, `hard ${tier}: ${hosts.join(',')} not inside one HyperNode of tier <= ${tier}`);
          }
          if (partition) {
            const perLeaf = new Map<string, number>();
            for (const [n, u] of used) {
              const leaf = tree.leafHyperNode(n) ?? n;
              perLeaf.set(leaf, (perLeaf.get(leaf) ?? 0) + u);
            }
            for (const [leaf, u] of perLeaf) assert.equal(u % partition, 0, `partition split in ${leaf}`);
          }
        },
      ),
      { numRuns: 300, seed: 11 },
    );
  });
});
