// Keeps the HyperNode figures from rotting: the generator is deterministic and produces the
// declared tree (regex and label leaves resolve to their rack), and the bench's Volcano
// placements succeed on a scaled-down shape.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { PlacementEngine } from '../src/placement/engine.ts';
import { tierLevelKey } from '../src/topology/hypernode-tree.ts';
import {
  buildHyperNodeSnapshotTimed,
  buildTreeTimed,
  checkTree,
  HN_RACK,
  HYPERNODE,
  HYPERNODE_JOB_TIER,
  hyperNodeHostCount,
  hyperNodeInfos,
  hyperNodeRequest,
  hyperNodeShape,
  type HyperNodeSize,
} from './hypernode-shapes.ts';
import { checkPlacement, GPU } from './shapes.ts';

/** 2 blocks x 3 spines x 4 leaves x 5 hosts: 120 hosts, 24 leaves (2 regex, 2 label). */
const SMALL: HyperNodeSize = { blocks: 2, spinesPerBlock: 3, racksPerSpine: 4, hostsPerRack: 5, seed: 7 };
/** More than a spine's 20 hosts, fewer than a block's ~30 free ones. */
const SMALL_PODS = 21;

describe('hypernode shape', () => {
  const shape = hyperNodeShape(SMALL);
  it('is the same cluster for the same seed, and another for another seed', () => {
    assert.deepEqual(hyperNodeShape(SMALL), shape);
    const other = hyperNodeShape({ ...SMALL, seed: 8 });
    assert.notDeepEqual(other.pods, shape.pods);
    assert.notDeepEqual(other.hyperNodes, shape.hyperNodes);
  });
  it('has the declared hosts, HyperNodes per tier and member kinds', () => {
    assert.equal(shape.nodes.length, hyperNodeHostCount(SMALL));
    assert.equal(hyperNodeHostCount(HYPERNODE), 100_000);
    assert.equal(new Set(shape.nodes.map((n) => n.metadata.name)).size, shape.nodes.length);
    const tiers = [1, 2, 3].map((t) => shape.hyperNodes.filter((h) => h.spec.tier === t).length);
    assert.deepEqual(tiers, [24, 6, 2]);
    assert.deepEqual(shape.leafMembers, { exact: 20, regex: 2, label: 2 });
    const names = shape.hyperNodes.map((h) => h.metadata.name);
    assert.deepEqual([...names].sort(), names);
    assert.ok(shape.nodes.every((n) => n.metadata.labels![HN_RACK] && n.status!.allocatable![GPU] === '8'));
    assert.equal(shape.pods.length, shape.nodes.length / 2);
  });
  it('builds a ready tree with every host under its rack leaf, spine and block', () => {
    const infos = hyperNodeInfos(shape);
    const { tree } = buildTreeTimed(shape, infos);
    assert.equal(checkTree(shape, tree), undefined);
    assert.deepEqual(tree.tiers, [1, 2, 3]);
    const { snapshot: s } = buildHyperNodeSnapshotTimed(shape, tree, infos);
    assert.deepEqual(s.levels.slice(0, 3), [3, 2, 1].map(tierLevelKey));
    assert.equal(s.leaves().length, shape.nodes.length);
    assert.equal(s.domainsAt(0).length, SMALL.blocks);
  });
});

describe("the bench's Volcano placements on a scaled-down hypernode shape", () => {
  const shape = hyperNodeShape(SMALL);
  const infos = hyperNodeInfos(shape);
  const { tree } = buildTreeTimed(shape, infos);
  const { snapshot: s } = buildHyperNodeSnapshotTimed(shape, tree, infos);
  const engine = new PlacementEngine(s);
  it('hard, highestTier 3: all pods on whole free hosts of one block', () => {
    const req = hyperNodeRequest(s, tree, SMALL_PODS, { mode: 'hard', highestTier: HYPERNODE_JOB_TIER });
    const r = engine.place(req);
    assert.equal(checkPlacement(s, req, r, tierLevelKey(HYPERNODE_JOB_TIER)), undefined);
    assert.ok(r.ok && r.workers.domains.every((d) => d.count === 1));
  });
  it('hard, highestTier 2: no spine holds them, so it fails', () => {
    const req = hyperNodeRequest(s, tree, SMALL_PODS, { mode: 'hard', highestTier: 2 });
    assert.match(checkPlacement(s, req, engine.place(req))!, /failed: .*allows to fit only \d+ out of 21/);
  });
  it('soft: more than a block holds, so it splits at the root', () => {
    const req = hyperNodeRequest(s, tree, 45, { mode: 'soft' });
    const r = engine.place(req);
    assert.equal(checkPlacement(s, req, r), undefined);
    assert.match(checkPlacement(s, req, r, tierLevelKey(3))!, /spans 2 domains of/);
  });
});
