import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { BLOCK, node, RACK, rackOf, snapshotOf } from '../testing/builders.ts';
import { AllocatableCache, nodeInfoFromNode } from './source.ts';

const levels = [BLOCK, RACK, 'kubernetes.io/hostname'];
const info = (b: ReturnType<typeof node>) => nodeInfoFromNode(b.build());

describe('snapshot incremental maintenance', () => {
  it('a node update that keeps its place is applied in place: no structural rebuild', () => {
    const s = snapshotOf(levels, rackOf('b', 'r', [4, 4], 'x'));
    const v = s.version;
    s.upsertNode(info(node('x1').labels({ [BLOCK]: 'b', [RACK]: 'r' }).cpu(6)));
    assert.equal(s.version, v);
    const cpu = s.resources.get('cpu')!;
    assert.equal(s.free(s.leafById('x1')!, cpu), 6000);
  });
  it('a label change that moves the node to another rack re-parents its leaf', () => {
    const s = snapshotOf(levels, rackOf('b', 'r', [4, 4], 'x'));
    s.upsertNode(info(node('x1').labels({ [BLOCK]: 'b', [RACK]: 'r2' }).cpu(4)));
    const leaf = s.leafById('x1')!;
    assert.deepEqual(s.values(leaf), ['b', 'r2', 'x1']);
    assert.deepEqual(s.domainsAt(1).map((d) => s.id(d)), ['b,r', 'b,r2']);
  });
  it('a node turning NotReady leaves the tree, and comes back with its pods\' usage', () => {
    const s = snapshotOf(levels, rackOf('b', 'r', [4], 'x'));
    const cpu = s.resources.get('cpu')!;
    s.addPod('ns/p', 'x1', { cpu: 1000 });
    s.upsertNode(info(node('x1').labels({ [BLOCK]: 'b', [RACK]: 'r' }).cpu(4).notReady()));
    assert.equal(s.leafById('x1'), undefined);
    assert.equal(s.leaves().length, 0);
    s.upsertNode(info(node('x1').labels({ [BLOCK]: 'b', [RACK]: 'r' }).cpu(4)));
    assert.equal(s.free(s.leafById('x1')!, cpu), 3000);
  });
  it('TAS usage on a leaf that is gone is kept and re-applied when the node returns', () => {
    const s = snapshotOf(levels, rackOf('b', 'r', [4], 'x'));
    const cpu = s.resources.get('cpu')!;
    s.removeNode('x1');
    s.addWorkloadUsage('ns/w/main', [{ leafId: 'x1', count: 2 }], { cpu: 1000 });
    s.upsertNode(info(node('x1').labels({ [BLOCK]: 'b', [RACK]: 'r' }).cpu(4)));
    assert.equal(s.free(s.leafById('x1')!, cpu), 2000);
    assert.equal(s.tasUsage(s.leafById('x1')!, cpu), 2000);
    s.removeWorkloadUsage('ns/w/main');
    assert.equal(s.free(s.leafById('x1')!, cpu), 4000);
  });
  it('TAS usage survives its node leaving and returning; removing it while the node is away also holds', () => {
    const s = snapshotOf(levels, rackOf('b', 'r', [4], 'x'));
    const cpu = s.resources.get('cpu')!;
    s.addWorkloadUsage('ns/a/main', [{ leafId: 'x1', count: 1 }], { cpu: 1000 });
    s.addWorkloadUsage('ns/b/main', [{ leafId: 'x1', count: 2 }], { cpu: 1000 });
    s.removeNode('x1');
    s.removeWorkloadUsage('ns/b/main');
    s.upsertNode(info(node('x1').labels({ [BLOCK]: 'b', [RACK]: 'r' }).cpu(4)));
    assert.equal(s.free(s.leafById('x1')!, cpu), 3000);
    s.removeWorkloadUsage('ns/a/main');
    assert.equal(s.free(s.leafById('x1')!, cpu), 4000);
    assert.equal(s.tasUsage(s.leafById('x1')!, cpu), 0);
  });
  it('repeated updates reuse the node slot (no growth per heartbeat)', () => {
    const s = snapshotOf(levels, rackOf('b', 'r', [4], 'x'));
    for (let i = 0; i < 1000; i++) s.upsertNode(info(node('x1').labels({ [BLOCK]: 'b', [RACK]: 'r' }).cpu(4 + (i % 2))));
    for (let i = 0; i < 1000; i++) {
      s.removeNode('x1');
      s.upsertNode(info(node('x1').labels({ [BLOCK]: 'b', [RACK]: 'r' }).cpu(4)));
    }
    assert.equal(s.nodeIndex('x1'), 0);
    assert.equal(s.nodeCount, 1);
  });
  it('a node missing a flavor node label is not in the tree', () => {
    const s = snapshotOf(levels, [node('x1').labels({ [BLOCK]: 'b', [RACK]: 'r', pool: 'a' }).cpu(1), node('x2').labels({ [BLOCK]: 'b', [RACK]: 'r' }).cpu(1)], { nodeLabels: { pool: 'a' } });
    assert.deepEqual(s.leaves().map((d) => s.id(d)), ['x1']);
  });
  it('a hostname equal to a block name does not collide', () => {
    const s = snapshotOf(levels, [node('b1').labels({ [BLOCK]: 'b1', [RACK]: 'r1' }).cpu(1)]);
    assert.deepEqual(s.domainsAt(0).map((d) => s.id(d)), ['b1']);
    assert.deepEqual(s.leaves().map((d) => s.values(d)), [['b1', 'r1', 'b1']]);
  });
});

describe('AllocatableCache', () => {
  it('shares the parsed list between nodes of one shape and still reports bad quantities', () => {
    const c = new AllocatableCache();
    const a = nodeInfoFromNode(node('a').cpu('96').build(), c);
    const b = nodeInfoFromNode(node('b').cpu('96').build(), c);
    assert.equal(a.allocatable, b.allocatable);
    assert.deepEqual(a.allocatable, { pods: 110, cpu: 96000 });
    assert.throws(() => nodeInfoFromNode(node('c').cpu('9x').build(), c), /status\.allocatable\.cpu: Invalid value: "9x"/);
  });
});
