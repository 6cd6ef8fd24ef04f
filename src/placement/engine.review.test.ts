// Regressions from the spec review: each case states the rule it pins.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { BLOCK, HOST, node, RACK, rackOf, snapshotOf } from '../testing/builders.ts';
import type { TopologySnapshot } from '../topology/snapshot.ts';
import { nodeInfoFromNode } from '../topology/source.ts';
import { PlacementEngine, type PlacementOptions } from './engine.ts';
import type { PlacementRequest } from './request.ts';

const L3 = [BLOCK, RACK, HOST];
const req = (p: Partial<PlacementRequest>): PlacementRequest => ({
  podSetName: 'main',
  count: 1,
  requests: { cpu: 1000 },
  mode: 'required',
  sliceLayers: [],
  tolerations: [],
  ...p,
});
function run(s: TopologySnapshot, p: Partial<PlacementRequest>, o: PlacementOptions = {}): unknown {
  const r = new PlacementEngine(s).place(req(p), o);
  if (!r.ok) return r.reason;
  const w = Object.fromEntries(r.workers.domains.map((d) => [d.values.join('/'), d.count]));
  return r.leader ? { workers: w, leader: r.leader.domains.map((d) => d.values.join('/')) } : w;
}
const leader = (cpu: number) => ({ podSetName: 'l', requests: { cpu: cpu * 1000 } });
const n = (name: string, rack: string) => node(name).labels({ [BLOCK]: 'b', [RACK]: rack });

describe('the leader goes to a domain whose leader penalty still leaves enough in total (§6.5)', () => {
  it('LeastFreeCapacity, greedy', () => {
    const s = snapshotOf(L3, [n('A', 'r').cpu(8), n('D', 'r').cpu(100).pods(8)]);
    assert.deepEqual(run(s, { count: 15, mode: 'unconstrained', leader: leader(4) }), { workers: { A: 8, D: 7 }, leader: ['D'] });
  });
  it('BestFit, greedy', () => {
    const s = snapshotOf(L3, [n('A', 'r').cpu(20), n('D', 'r').cpu(100).pods(8)]);
    assert.deepEqual(run(s, { count: 27, mode: 'unconstrained', leader: leader(12) }, { profile: 'BestFit' }), {
      workers: { A: 20, D: 7 },
      leader: ['D'],
    });
  });
  it("required: the descent keeps the roll-up's promise", () => {
    const s = snapshotOf(L3, [n('A', 'r').cpu(20), n('D', 'r').cpu(100).pods(8)]);
    assert.deepEqual(run(s, { count: 27, mode: 'required', level: RACK, leader: leader(12) }), { workers: { A: 20, D: 7 }, leader: ['D'] });
  });
});

describe('below the slice level children order by pods ascending (§5, §6.3)', () => {
  const s = snapshotOf(L3, rackOf('b1', 'r1', [3, 3, 2, 1], 'x'));
  it('slice of 2 per rack', () => {
    assert.deepEqual(run(s, { count: 2, mode: 'required', level: RACK, sliceLayers: [{ topology: RACK, size: 2 }] }), { x3: 1, x4: 1 });
  });
  it('slice of 4 per rack', () => {
    assert.deepEqual(run(s, { count: 4, mode: 'required', level: RACK, sliceLayers: [{ topology: RACK, size: 4 }] }), {
      x1: 1,
      x3: 2,
      x4: 1,
    });
  });
});

describe('counters are clamped to int32 (§3)', () => {
  it('two nodes of 2^31-1 pods do not roll up to a negative count', () => {
    const s = snapshotOf(L3, [n('a', 'r').pods(2 ** 31 - 1), n('c', 'r').pods(2 ** 31 - 1)]);
    assert.deepEqual(run(s, { count: 3, mode: 'required', level: RACK, requests: {} }), { a: 3 });
  });
});

describe('BalancedPlacement details (§10.3)', () => {
  it('the remainder goes out in with-leader order: slices desc, pods asc', () => {
    const s = snapshotOf(L3, rackOf('b1', 'r1', [11, 10], 'h'));
    assert.deepEqual(
      run(s, { count: 15, mode: 'preferred', level: RACK, sliceLayers: [{ topology: HOST, size: 5 }] }, { profile: 'BalancedPlacement' }),
      { h1: 5, h2: 10 },
    );
  });
  it("candidate racks order by the entropy of their children's pod counts", () => {
    const s = snapshotOf(L3, [...rackOf('b1', 'r1', [5, 9], 'a'), ...rackOf('b1', 'r2', [5, 5], 'b')]);
    assert.deepEqual(
      run(s, { count: 10, mode: 'preferred', level: RACK, sliceLayers: [{ topology: HOST, size: 5 }] }, { profile: 'BalancedPlacement' }),
      { b1: 5, b2: 5 },
    );
  });
});

describe('snapshot: a hostname reused by a new node in another rack (create before delete)', () => {
  it('the leaf moves with its node counts; no phantom rack remains', () => {
    const s = snapshotOf(L3, [
      node('n-old')
        .hostname('h1')
        .labels({ [BLOCK]: 'b', [RACK]: 'r1' })
        .cpu(4),
      node('n2')
        .hostname('h2')
        .labels({ [BLOCK]: 'b', [RACK]: 'r2' })
        .cpu(4),
    ]);
    s.upsertNode(
      nodeInfoFromNode(
        node('n-new')
          .hostname('h1')
          .labels({ [BLOCK]: 'b', [RACK]: 'r2' })
          .cpu(4)
          .build(),
      ),
    );
    s.removeNode('n-old');
    s.removeNode('n2');
    assert.deepEqual(
      s.domainsAt(1).map((d) => s.id(d)),
      ['b,r2'],
    );
    assert.deepEqual(run(s, { count: 4, mode: 'required', level: RACK }), { h1: 4 });
  });
});
