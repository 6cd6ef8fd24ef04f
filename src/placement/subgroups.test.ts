// Volcano sub-groups placed instance by instance (subgroups.ts) on the seed's spine-leaf
// tree: s0..s3 leaves of 2 nodes (tier 1), s4 = s0+s1 and s5 = s2+s3 (tier 2), s6 the core.
// Every node holds one pod.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import type { PodSet, Workload } from '../api/objects.ts';
import { hyperNodeSnapshotOf, node, seedSpineLeaf } from '../testing/builders.ts';
import { PlacementEngine } from './engine.ts';
import { SUBGROUP_INSTANCES_ANNOTATION, formatSubgroupInfo, type SubgroupInstance } from './subgroups.ts';
import { placeWorkload, type TasFlavor } from './workload-placement.ts';

function flavor(): TasFlavor {
  const { snapshot, tree } = hyperNodeSnapshotOf(
    seedSpineLeaf(),
    Array.from({ length: 8 }, (_, i) => node(`node${i}`).cpu(1)),
  );
  return {
    flavor: {
      apiVersion: 'kueue.x-k8s.io/v1beta2',
      kind: 'ResourceFlavor',
      metadata: { name: 'hypernodes' },
      spec: { topologyName: 'hypernodes' },
    },
    snapshot,
    engine: new PlacementEngine(snapshot),
    tierOfName: (n) => tree.tierOfName(n),
    leafTier: (n) => (tree.leafHyperNode(n) ? tree.tier(tree.leafHyperNode(n)!) : undefined),
    implicit: true,
  };
}

interface Policy {
  name: string;
  size: number;
  min?: number;
  tier?: number;
  instances: SubgroupInstance[];
}

function policyPodSet(p: Policy): PodSet {
  const annotations: Record<string, string> = {
    'topoqueue.io/partition-size': String(p.size),
    [SUBGROUP_INSTANCES_ANNOTATION]: formatSubgroupInfo({
      policy: p.name,
      size: p.size,
      minSubGroups: p.min ?? 0,
      ready: 0,
      instances: p.instances,
    }),
  };
  if (p.tier !== undefined) {
    annotations['volcano.sh/network-topology-mode'] = 'hard';
    annotations['volcano.sh/network-topology-highest-tier'] = String(p.tier);
  }
  return {
    name: p.name,
    count: p.instances.reduce((n, i) => n + i.pending, 0),
    template: { metadata: { annotations }, spec: { containers: [{ name: 'c', resources: { requests: { cpu: '1' } } }] } },
  };
}

function workload(
  policies: Policy[],
  gang: number,
  job: Record<string, string> = { 'volcano.sh/network-topology-mode': 'soft' },
): Workload {
  return {
    apiVersion: 'kueue.x-k8s.io/v1beta2',
    kind: 'Workload',
    metadata: { name: 'w', namespace: 'ns', annotations: { ...job, 'gang.scheduling.koordinator.sh/min-available': String(gang) } },
    spec: { podSets: policies.map(policyPodSet) },
  };
}

const LEAF: Record<string, string> = {
  node0: 's0',
  node1: 's0',
  node2: 's1',
  node3: 's1',
  node4: 's2',
  node5: 's2',
  node6: 's3',
  node7: 's3',
};
const SPINE: Record<string, string> = { s0: 's4', s1: 's4', s2: 's5', s3: 's5' };

function instances(r: ReturnType<typeof placeWorkload>): Record<string, string[]> {
  assert.ok(r.ok, r.ok ? '' : r.reason);
  return Object.fromEntries(r.podSets.flatMap((p) => (p.instances ?? []).map((i) => [`${p.name}/${i.id}`, [...i.nodes].sort()])));
}

describe('Volcano sub-groups placed instance by instance', () => {
  it('an instance with more pods than subGroupSize: its minimum as one slice, the extras after it inside its domain within its tier limit', () => {
    const f = flavor();
    const r = placeWorkload(workload([{ name: 'dp', size: 2, min: 1, tier: 2, instances: [{ id: 'k=0', pending: 3 }] }], 2), [f]);
    const got = instances(r)['dp/k=0']!;
    assert.equal(got.length, 3);
    assert.equal(new Set(got.map((n) => SPINE[LEAF[n]!])).size, 1, `one spine: ${got.join(', ')}`);
  });

  it('an instance with fewer pods than subGroupSize waits: none of its pods is placed, and a job that needs it stays pending', () => {
    const f = flavor();
    const r = placeWorkload(
      workload(
        [
          {
            name: 'dp',
            size: 2,
            min: 1,
            tier: 1,
            instances: [
              { id: 'k=0', pending: 1 },
              { id: 'k=1', pending: 2 },
            ],
          },
        ],
        2,
      ),
      [f],
    );
    const got = instances(r);
    assert.deepEqual(got['dp/k=0'], []);
    assert.equal(got['dp/k=1']!.length, 2);
    const alone = placeWorkload(workload([{ name: 'dp', size: 2, min: 1, tier: 1, instances: [{ id: 'k=0', pending: 1 }] }], 2), [f]);
    assert.equal(alone.ok, false);
    assert.match(
      alone.ok ? '' : alone.reason,
      /subGroupPolicy "dp", instance \{k=0\} has 1 pod of the 2 its subGroupSize needs: it waits for the others/,
    );
  });

  it('a partly running instance: its pending pods stay inside the leaf it runs in (tier-1 limit)', () => {
    const f = flavor();
    f.snapshot.addPod('ns/b1', 'node2', { cpu: 1000 });
    const r = placeWorkload(
      workload([{ name: 'dp', size: 2, min: 1, tier: 1, instances: [{ id: 'k=1', pending: 2, bound: 1, nodes: ['node2'] }] }], 1, {
        'volcano.sh/network-topology-mode': 'hard',
        'volcano.sh/network-topology-highest-tier': '2',
      }),
      [f],
    );
    // Its need (1 pod) goes to node3, the rest of its leaf; the extra finds no room there and waits.
    assert.deepEqual(instances(r)['dp/k=1'], ['node3']);
  });

  it('a partly running instance already across domains above its tier limit gets no more pods', () => {
    const f = flavor();
    const r = placeWorkload(
      workload([{ name: 'dp', size: 3, min: 1, tier: 1, instances: [{ id: 'k=1', pending: 1, bound: 2, nodes: ['node0', 'node2'] }] }], 1),
      [f],
    );
    assert.equal(r.ok, false);
    assert.match(r.ok ? '' : r.reason, /instance \{k=1\}: its pods already run across domains above topology\.volcano\.sh\/tier-1/);
  });

  it('several policies: the minimum subgroup by subgroup, then the rest where it fits (not all or nothing)', () => {
    const f = flavor();
    const two = (k: number) => ({ id: `g=${k}`, pending: 2 });
    const r = placeWorkload(
      workload(
        [
          { name: 'prefill', size: 2, min: 1, tier: 1, instances: [two(0), two(1)] },
          { name: 'decode', size: 2, min: 2, tier: 1, instances: [two(0), two(1), two(2)] },
        ],
        6,
      ),
      [f],
    );
    const got = instances(r);
    const full = Object.values(got).filter((n) => n.length === 2);
    assert.equal(full.length, 4, JSON.stringify(got));
    for (const nodes of full) assert.equal(LEAF[nodes[0]!], LEAF[nodes[1]!]);
    assert.ok(got['decode/g=0']!.length === 2 && got['decode/g=1']!.length === 2 && got['prefill/g=0']!.length === 2);
  });

  it('several policies whose minimum does not fit: pending, with the policy that fell short', () => {
    const f = flavor();
    const two = (k: number) => ({ id: `g=${k}`, pending: 2 });
    const r = placeWorkload(workload([{ name: 'decode', size: 2, min: 5, tier: 1, instances: [0, 1, 2, 3, 4].map(two) }], 10), [f]);
    assert.equal(r.ok, false);
    assert.match(r.ok ? '' : r.reason, /subGroupPolicy "decode" needs 5 ready instances \(minSubGroups\) of 2 pods, and only 4 can be/);
  });

  it('property: whenever anything is placed, at least max(minMember, sum of minSubGroups x subGroupSize); no instance split across its tier limit', () => {
    const arb = fc.record({
      size: fc.integer({ min: 1, max: 3 }),
      tier: fc.constantFrom(1, 2),
      pendings: fc.array(fc.integer({ min: 1, max: 4 }), { minLength: 1, maxLength: 4 }),
      min: fc.integer({ min: 0, max: 3 }),
      minMember: fc.integer({ min: 0, max: 6 }),
      busy: fc.subarray(['node0', 'node1', 'node2', 'node3', 'node4', 'node5', 'node6', 'node7']),
    });
    fc.assert(
      fc.property(arb, ({ size, tier, pendings, min, minMember, busy }) => {
        const f = flavor();
        for (const n of busy) f.snapshot.addPod(`other/${n}`, n, { cpu: 1000 });
        const gang = Math.max(minMember, min * size);
        const insts = pendings.map((p, k) => ({ id: `k=${k}`, pending: p }));
        const r = placeWorkload(workload([{ name: 'dp', size, min, tier, instances: insts }], gang), [f]);
        if (!r.ok) return;
        const placed = r.podSets.reduce((n, p) => n + p.count, 0);
        assert.ok(placed >= gang, `placed ${placed} < ${gang}`);
        for (const i of r.podSets.flatMap((p) => p.instances ?? [])) {
          const domains = new Set(i.nodes.map((n) => (tier === 1 ? LEAF[n] : SPINE[LEAF[n]!])));
          assert.ok(domains.size <= 1, `${i.id} split: ${i.nodes.join(', ')}`);
          assert.ok(i.nodes.length === 0 || i.nodes.length >= size, `${i.id} placed below its size: ${i.nodes.join(', ')}`);
        }
      }),
      { numRuns: 200, seed: 15 },
    );
  });
});
