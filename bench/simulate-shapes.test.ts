// The all-at-once burst shape (issue 16) declares what it builds and is deterministic.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { BURST_20K, burstJobSizes, burstObjects, scaledBurst } from './simulate-shapes.ts';

describe('the burst shape', () => {
  it('draws 2,000 Job sizes that sum to exactly 82,820 pods, the same every time', () => {
    const sizes = burstJobSizes(BURST_20K.jobs, BURST_20K.pods, BURST_20K.seed);
    assert.equal(sizes.length, 2000);
    assert.equal(
      sizes.reduce((a, b) => a + b, 0),
      82_820,
    );
    assert.ok(sizes.every((n) => n >= 1));
    assert.deepEqual(burstJobSizes(BURST_20K.jobs, BURST_20K.pods, BURST_20K.seed), sizes);
  });

  it('builds 20,000 nodes in 10 blocks of 40 racks, and submits every Job at t = 0 unless spread', () => {
    const objects = burstObjects(BURST_20K);
    const nodes = objects.filter((o) => o.kind === 'Node');
    assert.equal(nodes.length, 20_000);
    assert.equal(new Set(nodes.map((n) => n.metadata.labels!['cloud.provider.com/topology-rack'])).size, 400);
    const jobs = objects.filter((o) => o.kind === 'Job');
    assert.equal(jobs.length, 2000);
    assert.ok(jobs.every((j) => j.metadata.annotations?.['topoqueue.io/submit-at'] === undefined));
    const spread = burstObjects(scaledBurst(0.1, 24 * 3_600_000)).filter((o) => o.kind === 'Job');
    assert.equal(spread.length, 200);
    assert.equal(spread.at(-1)!.metadata.annotations!['topoqueue.io/submit-at'], `${Math.floor((199 * 24 * 3_600_000) / 200)}ms`);
  });
});
