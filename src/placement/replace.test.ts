import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { BLOCK, HOST, rackOf, RACK, snapshotOf } from '../testing/builders.ts';
import type { Assignment } from './assignment.ts';
import { PlacementEngine } from './engine.ts';
import { replaceNode } from './replace.ts';
import type { PlacementRequest } from './request.ts';

const levels = [BLOCK, RACK, HOST];
const req = (p: Partial<PlacementRequest>): PlacementRequest => ({
  podSetName: 'main',
  count: 1,
  requests: { cpu: 1000 },
  mode: 'required',
  sliceLayers: [],
  tolerations: [],
  ...p,
});
const hosts = (a: Assignment) => Object.fromEntries(a.domains.map((d) => [d.values[0], d.count]));

describe('failed node replacement', () => {
  it("keeps every healthy domain and moves only the failed node's pods, inside the required domain", () => {
    const s = snapshotOf(levels, [...rackOf('b1', 'r1', [2, 2, 2], 'a'), ...rackOf('b1', 'r2', [4], 'b'), ...rackOf('b2', 'r1', [8], 'c')]);
    const existing: Assignment = {
      levels: [HOST],
      domains: [
        { values: ['a1'], count: 2 },
        { values: ['a2'], count: 2 },
      ],
    };
    s.removeNode('a1');
    const r = replaceNode(new PlacementEngine(s), req({ count: 4, level: RACK }), existing, 'a1');
    assert.ok(r.ok, r.ok ? '' : r.reason);
    assert.deepEqual(hosts(r.workers), { a2: 2, a3: 2 });
  });
  it('the kept pods count as usage: no double booking of a healthy node', () => {
    const s = snapshotOf(levels, rackOf('b1', 'r1', [2, 2], 'a'));
    const existing: Assignment = {
      levels: [HOST],
      domains: [
        { values: ['a1'], count: 2 },
        { values: ['a2'], count: 2 },
      ],
    };
    s.removeNode('a1');
    const r = replaceNode(new PlacementEngine(s), req({ count: 4, level: RACK }), existing, 'a1');
    assert.deepEqual(r, { ok: false, reason: 'cannot find replacement assignment for unhealthy node: a1' });
  });
  it('a stale domain in the existing assignment is reported', () => {
    const s = snapshotOf(levels, rackOf('b1', 'r1', [2, 2], 'a'));
    const existing: Assignment = {
      levels: [HOST],
      domains: [
        { values: ['gone'], count: 2 },
        { values: ['a2'], count: 2 },
      ],
    };
    const r = replaceNode(new PlacementEngine(s), req({ count: 4, level: RACK }), existing, 'a2');
    assert.deepEqual(r, {
      ok: false,
      reason: 'Cannot replace the node, because the existing topologyAssignment is invalid, as it contains the stale domain gone',
    });
  });
  it('a broken rack slice is completed inside the same rack', () => {
    const s = snapshotOf(levels, [...rackOf('b1', 'r1', [2, 2, 2], 'a'), ...rackOf('b1', 'r2', [2, 2, 2], 'b')]);
    const existing: Assignment = {
      levels: [HOST],
      domains: [
        { values: ['a1'], count: 2 },
        { values: ['a2'], count: 2 },
        { values: ['b1'], count: 2 },
        { values: ['b2'], count: 2 },
      ],
    };
    s.removeNode('b1');
    const r = replaceNode(
      new PlacementEngine(s),
      req({ count: 8, level: BLOCK, sliceLayers: [{ topology: RACK, size: 4 }] }),
      existing,
      'b1',
    );
    assert.ok(r.ok, r.ok ? '' : r.reason);
    assert.deepEqual(hosts(r.workers), { a1: 2, a2: 2, b2: 2, b3: 2 });
  });
  it('a node the assignment does not use leaves it unchanged', () => {
    const s = snapshotOf(levels, rackOf('b1', 'r1', [2, 2], 'a'));
    const existing: Assignment = { levels: [HOST], domains: [{ values: ['a1'], count: 2 }] };
    const r = replaceNode(new PlacementEngine(s), req({ count: 2, level: RACK }), existing, 'zz');
    assert.deepEqual(r, { ok: true, workers: existing });
  });
});
