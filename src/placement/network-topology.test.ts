// Volcano's hard/soft network topology on HyperNode trees (volcano-hypernode.md §4), on the
// seed's two examples: the 3-tier spine-leaf tree and two RoCE networks of NVLink domains.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { HyperNodeTree } from '../topology/hypernode-tree.ts';
import type { TopologySnapshot } from '../topology/snapshot.ts';
import { hyperNode, hyperNodeSnapshotOf, node, seedSpineLeaf } from '../testing/builders.ts';
import { PlacementEngine } from './engine.ts';
import { applyNetworkTopology, type NetworkTopologyRequest } from './network-topology.ts';
import type { PlacementRequest } from './request.ts';

const base: PlacementRequest = {
  podSetName: 'worker',
  count: 1,
  requests: { cpu: 1000 },
  mode: 'unconstrained',
  sliceLayers: [],
  tolerations: [],
};

function place(
  s: TopologySnapshot,
  tree: HyperNodeTree,
  count: number,
  job?: NetworkTopologyRequest,
  partition?: { size: number; topology?: NetworkTopologyRequest },
): string[] | string {
  const req = applyNetworkTopology(
    { ...base, count },
    s.levels,
    job,
    { topology: partition?.topology, partitionSize: partition?.size },
    (n) => tree.tierOfName(n),
  );
  if (typeof req === 'string') return req;
  const r = new PlacementEngine(s).place(req);
  if (!r.ok) return r.reason;
  return r.workers.domains.flatMap((d) => Array(d.count).fill(d.values[0]) as string[]);
}

describe('seed example 1: spine-leaf tree of three tiers, one pod per node', () => {
  const { snapshot: s, tree } = hyperNodeSnapshotOf(
    seedSpineLeaf(),
    Array.from({ length: 8 }, (_, i) => node(`node${i}`).cpu(1)),
  );
  it('hard, highestTierAllowed 1: two pods inside one tier-1 HyperNode', () => {
    assert.deepEqual(place(s, tree, 2, { mode: 'hard', highestTier: 1 }), ['node0', 'node1']);
  });
  it('hard, highestTierAllowed 1: three pods do not fit any tier-1 HyperNode', () => {
    assert.equal(place(s, tree, 3, { mode: 'hard', highestTier: 1 }), 'topology "hypernodes" allows to fit only 2 out of 3 pod(s)');
  });
  it('hard, highestTierAllowed 2: three pods inside one tier-2 HyperNode (the tightest tier that fits)', () => {
    const got = place(s, tree, 3, { mode: 'hard', highestTier: 2 }) as string[];
    assert.equal(got.length, 3);
    assert.ok(
      got.every((n) => ['node0', 'node1', 'node2', 'node3'].includes(n)),
      String(got),
    );
  });
  it('hard, highestTierAllowed 2: five pods exceed every tier-2 HyperNode', () => {
    assert.match(place(s, tree, 5, { mode: 'hard', highestTier: 2 }) as string, /allows to fit only 4 out of 5/);
  });
  it('soft: the search climbs to the whole cluster and always fits when the cluster has room', () => {
    assert.equal((place(s, tree, 8, { mode: 'soft', highestTier: 1 }) as string[]).length, 8);
    assert.match(place(s, tree, 9, { mode: 'soft' }) as string, /allows to fit only 8 out of 9/);
  });
  it('highestTierAllowed at or above the virtual root (4) spans the cluster', () => {
    assert.equal((place(s, tree, 8, { mode: 'hard', highestTier: 4 }) as string[]).length, 8);
  });
  it('highestTierAllowed 0 with tiers from 1: never schedules', () => {
    assert.equal(place(s, tree, 1, { mode: 'hard', highestTier: 0 }), 'no HyperNode of tier <= 0: the job cannot be placed');
  });
  it('hard without a tier (or with an unknown tierName) is no constraint', () => {
    assert.equal((place(s, tree, 8, { mode: 'hard' }) as string[]).length, 8);
    assert.equal((place(s, tree, 8, { mode: 'hard', highestTierName: 'nope' }) as string[]).length, 8);
  });
  it('a used node moves the job to another leaf', () => {
    const { snapshot, tree: t } = hyperNodeSnapshotOf(
      seedSpineLeaf(),
      Array.from({ length: 8 }, (_, i) => node(`node${i}`).cpu(1)),
    );
    snapshot.addPod('ns/busy', 'node0', { cpu: 1000 });
    assert.deepEqual(place(snapshot, t, 2, { mode: 'hard', highestTier: 1 }), ['node2', 'node3']);
  });
  it("partitions: each partition inside one domain of its tier, all inside the job's", () => {
    const got = place(s, tree, 4, { mode: 'hard', highestTier: 3 }, { size: 2, topology: { mode: 'hard', highestTier: 1 } }) as string[];
    assert.equal(got.length, 4);
    const leaves = new Map<string, number>();
    for (const n of got) {
      const leaf = tree.leafHyperNode(n)!;
      leaves.set(leaf, (leaves.get(leaf) ?? 0) + 1);
    }
    for (const c of leaves.values()) assert.equal(c % 2, 0);
  });
});

describe('seed example 2: two RoCE networks, each of two NVLink domains', () => {
  // The seed's YAML names the children `nvlink-network0` but defines `nvlink_network-0`;
  // HyperNode names are DNS subdomains, so the example uses `nvlink-network0` throughout.
  const hns = [
    hyperNode('roce-network0').tier(2, 'roce').hyperNodes('nvlink-network0', 'nvlink-network1'),
    hyperNode('roce-network1').tier(2, 'roce').hyperNodes('nvlink-network2', 'nvlink-network3'),
    hyperNode('nvlink-network0').tier(1, 'nvlink').nodes('node1', 'node2'),
    hyperNode('nvlink-network1').tier(1, 'nvlink').nodes('node3', 'node4'),
    hyperNode('nvlink-network2').tier(1, 'nvlink').nodes('node5', 'node6'),
    hyperNode('nvlink-network3').tier(1, 'nvlink').nodes('node7', 'node8'),
  ];
  const { snapshot: s, tree } = hyperNodeSnapshotOf(
    hns,
    Array.from({ length: 8 }, (_, i) => node(`node${i + 1}`).gpu(8)),
  );
  const gpu = (n: number) => ({ ...base, requests: { 'nvidia.com/gpu': n } });
  it('a 16-GPU job with highestTierName nvlink fits one NVLink domain', () => {
    const req = applyNetworkTopology({ ...gpu(8), count: 2 }, s.levels, { mode: 'hard', highestTierName: 'nvlink' }, {}, (n) =>
      tree.tierOfName(n),
    );
    assert.ok(typeof req !== 'string');
    const r = new PlacementEngine(s).place(req);
    assert.ok(r.ok);
    assert.deepEqual(
      r.workers.domains.map((d) => d.values[0]),
      ['node1', 'node2'],
    );
  });
  it('a 32-GPU job limited to roce fits one RoCE network; to nvlink it does not', () => {
    const req = applyNetworkTopology({ ...gpu(8), count: 4 }, s.levels, { mode: 'hard', highestTierName: 'roce' }, {}, (n) =>
      tree.tierOfName(n),
    );
    assert.ok(typeof req !== 'string');
    const r = new PlacementEngine(s).place(req);
    assert.ok(r.ok);
    assert.deepEqual(
      r.workers.domains.map((d) => d.values[0]),
      ['node1', 'node2', 'node3', 'node4'],
    );
    const tight = applyNetworkTopology({ ...gpu(8), count: 4 }, s.levels, { mode: 'hard', highestTierName: 'nvlink' }, {}, (n) =>
      tree.tierOfName(n),
    );
    assert.ok(typeof tight !== 'string');
    assert.equal(new PlacementEngine(s).place(tight).ok, false);
  });
  it('HyperJob-style: replicated jobs of 2 pods each in their own NVLink domain, all in one RoCE network', () => {
    const req = applyNetworkTopology(
      { ...gpu(8), count: 4 },
      s.levels,
      { mode: 'hard', highestTier: 2 },
      { partitionSize: 2, topology: { mode: 'hard', highestTier: 1 } },
      (n) => tree.tierOfName(n),
    );
    assert.ok(typeof req !== 'string');
    const r = new PlacementEngine(s).place(req);
    assert.ok(r.ok);
    const leaves = r.workers.domains.map((d) => tree.leafHyperNode(d.values[0]!));
    assert.deepEqual(leaves, ['nvlink-network0', 'nvlink-network0', 'nvlink-network1', 'nvlink-network1']);
  });
});
