import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { KueueApiVersion } from '../api/api-versions.ts';
import type { ResourceFlavor, Topology } from '../api/objects.ts';
import { BLOCK, HOST, hyperNode, node, RACK } from '../testing/builders.ts';
import { nodeInfoFromNode } from '../topology/source.ts';
import { topologyViews } from './topology-views.ts';

const topology = (name: string, levels: string[]): Topology => ({
  apiVersion: KueueApiVersion.V1beta2,
  kind: 'Topology',
  metadata: { name },
  spec: { levels: levels.map((nodeLabel) => ({ nodeLabel })) },
});
const flavor = (name: string, topologyName: string, nodeLabels?: Record<string, string>): ResourceFlavor => ({
  apiVersion: KueueApiVersion.V1beta2,
  kind: 'ResourceFlavor',
  metadata: { name },
  spec: { topologyName, nodeLabels },
});

describe('topology views', () => {
  const nodes = [
    node('a1')
      .labels({ [BLOCK]: 'b1', [RACK]: 'r1', pool: 'gpu' })
      .gpu(8),
    node('a2')
      .labels({ [BLOCK]: 'b1', [RACK]: 'r2', pool: 'gpu' })
      .gpu(8)
      .notReady(),
    node('a3')
      .labels({ [BLOCK]: 'b2', [RACK]: 'r1', pool: 'gpu' })
      .gpu(8)
      .unschedulable(),
    node('c1').labels({ pool: 'cpu' }).cpu(64),
  ].map((n) => nodeInfoFromNode(n.build()));

  it('a TAS flavor gives each of its nodes its level values, keeping NotReady and cordoned nodes the snapshot leaves out', () => {
    const [v, ...rest] = topologyViews({
      flavors: [flavor('gpu', 'default', { pool: 'gpu' })],
      topologies: [topology('default', [BLOCK, RACK, HOST])],
      hyperNodes: [],
      nodes,
    });
    assert.equal(rest.length, 0);
    assert.deepEqual(v!.levels, [BLOCK, RACK, HOST]);
    assert.equal(v!.flavor, 'gpu');
    assert.deepEqual(Object.fromEntries(v!.paths), { a1: ['b1', 'r1', 'a1'], a2: ['b1', 'r2', 'a2'], a3: ['b2', 'r1', 'a3'] });
  });

  it('HyperNodes add the implicit flavor view with their tiers; a flavor naming a missing Topology has none', () => {
    const hns = [hyperNode('leaf0').tier(1).nodes('a1', 'a2').build(), hyperNode('spine').tier(2).hyperNodes('leaf0').build()];
    const views = topologyViews({ flavors: [flavor('gpu', 'missing')], topologies: [], hyperNodes: hns, nodes });
    assert.deepEqual(
      views.map((v) => [v.name, v.source, v.levels.length]),
      [['hypernodes', 'hypernodes', 3]],
    );
    assert.deepEqual(views[0]!.paths.get('a1'), ['spine', 'leaf0', 'a1']);
  });

  it('without TAS flavors or HyperNodes every node is its own host in one view', () => {
    const [v, ...rest] = topologyViews({ flavors: [], topologies: [], hyperNodes: [], nodes });
    assert.equal(rest.length, 0);
    assert.equal(v!.source, 'hosts');
    assert.deepEqual([...v!.paths.keys()], ['a1', 'a2', 'a3', 'c1']);
  });
});
