// The scale shape's generator and driver (bench/scale-shapes.ts, bench/scale-bench.ts) on a
// small size: declared counts, determinism, and a cycle that admits every ClusterQueue's
// head, the TAS ones placed on the topology.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { checkScaleRun, runScaleBench } from './scale-bench.ts';
import {
  buildScaleTopology,
  SCALE_65K,
  scaleCluster,
  scaleNodeCount,
  scalePending,
  scalePendingCount,
  scaleTasClusterQueues,
  type ScaleSize,
} from './scale-shapes.ts';

const SMALL: ScaleSize = {
  ...SCALE_65K,
  zones: 2,
  blocksPerZone: 2,
  racksPerBlock: 3,
  hostsPerRack: 4,
  podsPerNode: 2,
  clusterQueues: 20,
  tasCohorts: 1,
  small: 3,
  medium: 1,
  large: 1,
};

describe('scale shape', () => {
  it('declares the issue counts: 65,000 nodes in 4 levels, 650,000 pods, 5,000 ClusterQueues, 250,000 pending', () => {
    assert.equal(scaleNodeCount(SCALE_65K), 65_000);
    assert.equal(scaleNodeCount(SCALE_65K) * SCALE_65K.podsPerNode, 650_000);
    assert.equal(SCALE_65K.clusterQueues, 5000);
    assert.equal(scalePendingCount(SCALE_65K), 250_000);
  });

  it('generates the declared nodes and pods, the same on every run, each pod on a known node', () => {
    const a = scaleCluster(SMALL);
    const b = scaleCluster(SMALL);
    assert.equal(a.nodes.length, scaleNodeCount(SMALL));
    assert.equal(a.pods.length, scaleNodeCount(SMALL) * SMALL.podsPerNode);
    assert.deepEqual(
      a.pods.map((p) => [p.key, p.nodeName, p.requests.cpu]),
      b.pods.map((p) => [p.key, p.nodeName, p.requests.cpu]),
    );
    assert.equal(new Set(a.pods.map((p) => p.key)).size, a.pods.length, 'pod keys are unique');
    const { snapshot } = buildScaleTopology(a.nodes, a.pods);
    assert.equal(snapshot.leaves().length, scaleNodeCount(SMALL));
    assert.equal(snapshot.levels.length, 4);
    for (const p of a.pods) assert.ok(snapshot.nodeLeaf(p.nodeName) >= 0, p.nodeName);
    assert.equal(scalePending(SMALL).length, scalePendingCount(SMALL));
  });

  it('one cycle nominates and admits every head, the TAS ClusterQueues placed on the topology', () => {
    const r = runScaleBench(SMALL, { builds: 1, warmup: 1, reps: 2, gc: () => {} });
    assert.equal(checkScaleRun(SMALL, r), undefined);
    assert.equal(r.tasAdmitted, scaleTasClusterQueues(SMALL));
    assert.equal(r.cycles.length, 2);
  });
});
