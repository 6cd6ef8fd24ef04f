// Invariants over random clusters: no node over capacity, counts add up, the required
// level is respected, slices stay whole, the same input gives the same output.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { BLOCK, HOST, node, RACK, snapshotOf } from '../testing/builders.ts';
import type { TopologySnapshot } from '../topology/snapshot.ts';
import { PlacementEngine } from './engine.ts';
import type { PlacementRequest, Profile } from './request.ts';

const levels = [BLOCK, RACK, HOST];

interface Cluster {
  blocks: { racks: { hosts: { cpu: number; gpu: number; used: number }[] }[] }[];
}

const clusterArb: fc.Arbitrary<Cluster> = fc.record({
  blocks: fc.array(
    fc.record({
      racks: fc.array(
        fc.record({
          hosts: fc.array(
            fc.record({ cpu: fc.integer({ min: 0, max: 16 }), gpu: fc.integer({ min: 0, max: 8 }), used: fc.integer({ min: 0, max: 4 }) }),
            { minLength: 1, maxLength: 6 },
          ),
        }),
        {
          minLength: 1,
          maxLength: 4,
        },
      ),
    }),
    { minLength: 1, maxLength: 3 },
  ),
});

const requestArb = fc.record({
  count: fc.integer({ min: 1, max: 40 }),
  mode: fc.constantFrom('required', 'preferred', 'unconstrained' as const),
  level: fc.constantFrom(BLOCK, RACK, HOST),
  cpu: fc.integer({ min: 1, max: 4 }),
  gpu: fc.integer({ min: 0, max: 2 }),
  slice: fc.constantFrom(0, 1, 2, 4),
  sliceLevel: fc.constantFrom(RACK, HOST),
  leader: fc.boolean(),
});

const profileArb = fc.constantFrom<Profile>('Mixed', 'BestFit', 'LeastFreeCapacity', 'BalancedPlacement');

function build(c: Cluster): { s: TopologySnapshot; cap: Map<string, { cpu: number; gpu: number; path: string[] }> } {
  const nodes = [];
  const cap = new Map<string, { cpu: number; gpu: number; path: string[] }>();
  for (const [b, blk] of c.blocks.entries()) {
    for (const [r, rack] of blk.racks.entries()) {
      for (const [h, host] of rack.hosts.entries()) {
        const name = `b${b}-r${r}-h${h}`;
        nodes.push(
          node(name)
            .labels({ [BLOCK]: `b${b}`, [RACK]: `r${r}` })
            .cpu(host.cpu)
            .gpu(host.gpu),
        );
        cap.set(name, { cpu: (host.cpu - Math.min(host.used, host.cpu)) * 1000, gpu: host.gpu, path: [`b${b}`, `b${b}/r${r}`] });
      }
    }
  }
  const s = snapshotOf(levels, nodes);
  for (const [b, blk] of c.blocks.entries())
    for (const [r, rack] of blk.racks.entries())
      for (const [h, host] of rack.hosts.entries()) {
        const used = Math.min(host.used, host.cpu);
        if (used > 0) s.addPod(`used-${b}-${r}-${h}`, `b${b}-r${r}-h${h}`, { cpu: used * 1000 });
      }
  return { s, cap };
}

type RandomRequest = typeof requestArb extends fc.Arbitrary<infer T> ? T : never;

function toRequest(r: RandomRequest): PlacementRequest {
  const sliceLayers =
    r.slice > 0 && r.mode !== 'unconstrained'
      ? [{ topology: levels.indexOf(r.sliceLevel) >= levels.indexOf(r.level) ? r.sliceLevel : HOST, size: r.slice }]
      : [];
  const requests: Record<string, number> = { cpu: r.cpu * 1000 };
  if (r.gpu > 0) requests['nvidia.com/gpu'] = r.gpu;
  return {
    podSetName: 'w',
    count: sliceLayers.length ? r.count * r.slice : r.count,
    requests,
    mode: r.mode,
    level: r.mode === 'unconstrained' ? undefined : r.level,
    sliceLayers,
    tolerations: [],
    leader: r.leader ? { podSetName: 'l', requests: { cpu: 1000 } } : undefined,
  };
}

describe('placement invariants over random clusters', () => {
  it('no node over capacity, counts add up, required level and slices respected, deterministic', () => {
    fc.assert(
      fc.property(clusterArb, requestArb, profileArb, (c, r, profile) => {
        const { s, cap } = build(c);
        const req = toRequest(r);
        const res = new PlacementEngine(s).place(req, { profile });
        const again = new PlacementEngine(s).place(req, { profile });
        assert.deepEqual(again, res, 'same input, same output');
        if (!res.ok) return;
        const perNode = new Map<string, { cpu: number; gpu: number }>();
        const add = (host: string, count: number, rq: Record<string, number>) => {
          const u = perNode.get(host) ?? { cpu: 0, gpu: 0 };
          u.cpu += count * (rq.cpu ?? 0);
          u.gpu += count * (rq['nvidia.com/gpu'] ?? 0);
          perNode.set(host, u);
        };
        let total = 0;
        for (const d of res.workers.domains) {
          assert.ok(d.count > 0);
          total += d.count;
          add(d.values[0]!, d.count, req.requests);
        }
        const sliceSize = req.sliceLayers[0]?.size ?? 1;
        assert.equal(total, Math.floor(req.count / sliceSize) * sliceSize, 'counts add up');
        if (req.leader) {
          assert.equal(res.leader?.domains.length, 1);
          add(res.leader!.domains[0]!.values[0]!, 1, req.leader.requests);
        }
        for (const [host, u] of perNode) {
          const cp = cap.get(host)!;
          assert.ok(u.cpu <= cp.cpu, `${host} cpu ${u.cpu} > ${cp.cpu}`);
          assert.ok(u.gpu <= cp.gpu, `${host} gpu ${u.gpu} > ${cp.gpu}`);
        }
        const hosts = [...perNode.keys()];
        if (req.mode === 'required') {
          const li = levels.indexOf(req.level!);
          if (li < 2) assert.equal(new Set(hosts.map((h) => cap.get(h)!.path[li])).size, 1, 'inside one required domain');
        }
        if (req.sliceLayers.length === 1) {
          const li = levels.indexOf(req.sliceLayers[0]!.topology);
          const per = new Map<string, number>();
          for (const d of res.workers.domains) {
            const key = li < 2 ? cap.get(d.values[0]!)!.path[li]! : d.values[0]!;
            per.set(key, (per.get(key) ?? 0) + d.count);
          }
          for (const [k, n] of per) assert.equal(n % sliceSize, 0, `slice domain ${k} holds ${n}`);
        }
      }),
      { numRuns: 300, seed: 42 },
    );
  });

  it('a request that fits somewhere is placed when its level allows splitting', () => {
    fc.assert(
      fc.property(clusterArb, fc.integer({ min: 1, max: 30 }), (c, count) => {
        const { s, cap } = build(c);
        let room = 0;
        for (const v of cap.values()) room += Math.floor(v.cpu / 1000);
        const res = new PlacementEngine(s).place({
          podSetName: 'w',
          count,
          requests: { cpu: 1000 },
          mode: 'unconstrained',
          sliceLayers: [],
          tolerations: [],
        });
        assert.equal(res.ok, count <= room, res.ok ? '' : res.reason);
      }),
      { numRuns: 200, seed: 7 },
    );
  });
});
