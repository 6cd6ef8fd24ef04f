import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { KueueApiVersion } from '../api/api-versions.ts';
import type { ResourceFlavor, Workload } from '../api/objects.ts';
import { BLOCK, HOST, node, RACK } from '../testing/builders.ts';
import { LabelTopologySource, nodeInfoFromNode } from '../topology/source.ts';
import { fitByLevel } from './fit-levels.ts';
import { tasFlavorOf } from './tas-flavors.ts';

const flavor: ResourceFlavor = {
  apiVersion: KueueApiVersion.V1beta2,
  kind: 'ResourceFlavor',
  metadata: { name: 'gpu' },
  spec: { topologyName: 'default' },
};

function workload(count: number, gpus: number, topologyRequest?: Record<string, string>): Workload {
  return {
    apiVersion: KueueApiVersion.V1beta2,
    kind: 'Workload',
    metadata: { name: 'w', namespace: 'ns' },
    spec: {
      podSets: [
        {
          name: 'main',
          count,
          topologyRequest,
          template: { spec: { containers: [{ name: 'c', resources: { requests: { 'nvidia.com/gpu': String(gpus) } } }] } },
        },
      ],
    },
  } as unknown as Workload;
}

describe('fit by level', () => {
  // 2 blocks x 2 racks x 2 hosts of 8 GPUs; block b1's rack r1 is half used.
  const nodes = ['b1', 'b2'].flatMap((b) =>
    ['r1', 'r2'].flatMap((r) =>
      [1, 2].map((h) =>
        node(`${b}-${r}-${h}`)
          .labels({ [BLOCK]: b, [RACK]: `${b}-${r}` })
          .gpu(8)
          .build(),
      ),
    ),
  );
  const tf = tasFlavorOf(
    flavor,
    new LabelTopologySource('default', [BLOCK, RACK, HOST]),
    nodes.map((n) => nodeInfoFromNode(n)),
  );
  tf.snapshot.addPod('ns/busy', 'b1-r1-1', { 'nvidia.com/gpu': 8 });

  it('names the lowest level one domain of which holds every pod, with what the best domain of each lower level holds', () => {
    assert.deepEqual(fitByLevel(workload(3, 8, { required: RACK }), [tf]), {
      podSet: 'main',
      flavor: 'gpu',
      count: 3,
      levels: [
        { level: HOST, fit: 1 },
        { level: RACK, fit: 2 },
        { level: BLOCK, fit: 3 },
      ],
      best: BLOCK,
    });
  });

  it('no level holds them all: every level with its best, and no best level', () => {
    const r = fitByLevel(workload(8, 8, { preferred: BLOCK }), [tf])!;
    assert.equal(r.best, null);
    assert.deepEqual(
      r.levels.map((l) => l.fit),
      [1, 2, 4],
    );
  });

  it('a PodSet without a topology request, or no TAS flavor that suits it: no answer', () => {
    assert.equal(fitByLevel(workload(1, 8), [tf]), undefined);
    assert.equal(fitByLevel(workload(1, 8, { required: 'zone' }), [tf]), undefined);
  });
});
