// Keeps the benchmark from rotting: the generators are deterministic and produce the
// declared counts, the bench's placements succeed on a scaled-down large shape and on the
// full peer shape, and every figure the bench prints has a goal.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { HOSTNAME_LABEL } from '../src/api/keys.ts';
import { decodeV1beta2, encodeV1beta2 } from '../src/placement/assignment-codec.ts';
import { PlacementEngine } from '../src/placement/engine.ts';
import { FIGURES, loadGoals } from './main.ts';
import {
  BLOCK,
  buildSnapshot,
  checkPlacement,
  GPU,
  gkeHostnames,
  LARGE,
  type LargeSize,
  largeHostCount,
  largeShape,
  largeWorkloads,
  PEER,
  PEER_BLOCK,
  PEER_RACK,
  peerShape,
  peerWorkloads,
  Prng,
  RACK,
  singlePodAssignment,
  usageDomains,
  WHOLE_HOST,
  ZONE,
} from './shapes.ts';

const SMALL: LargeSize = { zones: 2, blocksPerZone: 2, racksPerBlock: 5, hostsPerRack: 10, seed: 42 };
/** More than a rack's 10 hosts, well under a block's ~25 free ones. */
const SMALL_PODS = 15;

describe('Prng', () => {
  it('is deterministic per seed and stays in range', () => {
    const a = new Prng(1);
    const b = new Prng(1);
    const xs = Array.from({ length: 100 }, () => a.int(1, 7));
    assert.deepEqual(
      Array.from({ length: 100 }, () => b.int(1, 7)),
      xs,
    );
    assert.ok(xs.every((x) => x >= 1 && x <= 7));
    assert.equal(new Set(xs).size, 7);
    assert.notDeepEqual(
      Array.from({ length: 100 }, () => new Prng(2).int(1, 7)),
      xs,
    );
  });
});

describe('large shape', () => {
  const shape = largeShape(SMALL);
  it('is the same cluster for the same seed, and another for another seed', () => {
    assert.deepEqual(largeShape(SMALL), shape);
    assert.notDeepEqual(largeShape({ ...SMALL, seed: 43 }).pods, shape.pods);
  });
  it('has the declared hosts, levels and capacities', () => {
    assert.equal(shape.nodes.length, largeHostCount(SMALL));
    assert.equal(largeHostCount(LARGE), 100_000);
    assert.equal(new Set(shape.nodes.map((n) => n.metadata.name)).size, shape.nodes.length);
    const racks = new Set(shape.nodes.map((n) => n.metadata.labels![RACK]));
    assert.equal(racks.size, SMALL.zones * SMALL.blocksPerZone * SMALL.racksPerBlock);
    assert.equal(new Set(shape.nodes.map((n) => n.metadata.labels![ZONE])).size, SMALL.zones);
    for (const n of shape.nodes) {
      assert.equal(n.apiVersion, 'v1');
      assert.equal(n.kind, 'Node');
      assert.deepEqual(n.status!.allocatable, { pods: '110', [GPU]: '8', cpu: '128', memory: '1Ti' });
      assert.ok(n.status!.conditions!.some((c) => c.type === 'Ready' && c.status === 'True'));
      for (const key of shape.levels) assert.ok(n.metadata.labels![key], `${n.metadata.name} lacks ${key}`);
    }
  });
  it('has exactly half of the hosts partly used, by one pod of 1-7 GPUs each', () => {
    assert.equal(shape.pods.length, shape.nodes.length / 2);
    assert.equal(new Set(shape.pods.map((p) => p.nodeName)).size, shape.pods.length);
    assert.equal(new Set(shape.pods.map((p) => p.key)).size, shape.pods.length);
    for (const p of shape.pods) assert.ok(p.requests[GPU]! >= 1 && p.requests[GPU]! <= 7);
  });
  it('builds into a snapshot with every host as a leaf', () => {
    const s = buildSnapshot(shape);
    assert.equal(s.leaves().length, shape.nodes.length);
    assert.equal(s.domainsAt(0).length, SMALL.zones);
    assert.equal(s.domainsAt(1).length, SMALL.zones * SMALL.blocksPerZone);
  });
});

describe("the bench's placements on a scaled-down large shape", () => {
  const s = buildSnapshot(largeShape(SMALL));
  const engine = new PlacementEngine(s);
  const w = largeWorkloads(SMALL_PODS);
  it('required block: all pods on whole free hosts of one block', () => {
    const r = engine.place(w.requiredBlock);
    assert.equal(checkPlacement(s, w.requiredBlock, r, BLOCK), undefined);
    assert.ok(r.ok && r.workers.domains.every((d) => d.count === 1));
  });
  it('preferred rack: no rack holds them, so it climbs to one block', () => {
    assert.equal(checkPlacement(s, w.preferredRack, engine.place(w.preferredRack), BLOCK), undefined);
    assert.match(checkPlacement(s, w.preferredRack, engine.place(w.preferredRack), RACK)!, /spans \d+ domains of/);
  });
  it('the workload-usage round trip leaves the snapshot as it was', () => {
    const r = engine.place(w.requiredBlock);
    assert.ok(r.ok);
    s.addWorkloadUsage('w', usageDomains(r.workers), WHOLE_HOST);
    assert.notDeepEqual(engine.place(w.requiredBlock), r);
    s.removeWorkloadUsage('w');
    assert.deepEqual(engine.place(w.requiredBlock), r);
  });
  it('a workload that cannot fit is reported, not passed', () => {
    const tooBig = { ...w.requiredBlock, count: 1000 };
    assert.match(checkPlacement(s, tooBig, engine.place(tooBig), BLOCK)!, /failed: topology "large"/);
    const untolerated = { ...w.requiredBlock, tolerations: [] };
    assert.match(checkPlacement(s, untolerated, engine.place(untolerated))!, /taint/);
  });
});

describe('peer shape (full size)', () => {
  const shape = peerShape(PEER);
  const s = buildSnapshot(shape);
  it("is Kueue's 1 x 10 x 64 TAS topology", () => {
    assert.equal(shape.nodes.length, 640);
    assert.deepEqual(shape.levels, [PEER_BLOCK, PEER_RACK, HOSTNAME_LABEL]);
    assert.equal(s.domainsAt(1).length, 10);
    assert.deepEqual(peerShape(PEER), shape);
  });
  it("the bench's placements succeed", () => {
    const engine = new PlacementEngine(s);
    const w = peerWorkloads();
    assert.equal(checkPlacement(s, w.requiredRack, engine.place(w.requiredRack), PEER_RACK), undefined);
    assert.equal(checkPlacement(s, w.preferredBlock, engine.place(w.preferredBlock), PEER_BLOCK), undefined);
  });
});

describe('hostnames for the encoding figure', () => {
  it('are deterministic, unique, sorted and round-trip through v1beta2', () => {
    const h = gkeHostnames(400, 40, 7);
    assert.deepEqual(gkeHostnames(400, 40, 7), h);
    assert.equal(new Set(h).size, 400);
    assert.deepEqual([...h].sort(), h);
    const a = singlePodAssignment(h);
    assert.deepEqual(decodeV1beta2(encodeV1beta2(a)), a);
  });
});

describe('goals.json', () => {
  const goals = loadGoals();
  it('has one complete goal per printed figure, in the same unit, and nothing else', () => {
    for (const f of FIGURES) {
      const g = goals.get(f.name);
      assert.ok(g, `no goal for ${f.name}`);
      assert.equal(g.unit, f.unit, f.name);
      assert.ok(Number.isFinite(g.goal) && g.goal > 0, f.name);
      assert.ok(g.shape.length > 0 && g.note.length > 0, f.name);
    }
    assert.deepEqual([...goals.keys()].sort(), FIGURES.map((f) => f.name).sort());
  });
});
