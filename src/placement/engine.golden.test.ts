// Speed work on the engine must not change a single placement: a fixed, seeded set of
// clusters and requests (every mode, profile, slice layers, leaders, affinity, assumed
// usage, within a domain, a removed node) is placed, and the digest of every result
// (assignments and failure messages, in order) must equal the one recorded before the
// engine's count pass and roll-up were rewritten for speed (issue 16).

import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';
import { Rng as Prng } from '../testing/rng.ts';
import { BLOCK, HOST, node, RACK, snapshotOf } from '../testing/builders.ts';
import type { TopologySnapshot } from '../topology/snapshot.ts';
import { AssumedUsage, PlacementEngine, type PlacementOptions } from './engine.ts';
import type { PlacementRequest, Profile } from './request.ts';

const ZONE = 'topology.kubernetes.io/zone';
const GPU = 'nvidia.com/gpu';
const PROFILES: Profile[] = ['Mixed', 'BestFit', 'LeastFreeCapacity', 'BalancedPlacement'];

/** A seeded cluster: zones x blocks x racks x hosts of uneven size, some used, some tainted. */
function cluster(rng: Prng, levels: 3 | 4, size: number): { s: TopologySnapshot; hosts: string[] } {
  const nodes = [];
  const hosts: string[] = [];
  const zones = levels === 4 ? rng.int(1, 3) : 1;
  for (let z = 0; z < zones; z++) {
    for (let b = 0, nb = rng.int(1, 4 * size); b < nb; b++) {
      for (let r = 0, nr = rng.int(1, 6 * size); r < nr; r++) {
        for (let h = 0, nh = rng.int(1, 9 * size); h < nh; h++) {
          const name = `z${z}-b${b}-r${r}-h${h}`;
          const labels: Record<string, string> = {
            [BLOCK]: `z${z}-b${b}`,
            [RACK]: `z${z}-b${b}-r${r}`,
            pool: rng.int(0, 2) === 0 ? 'x' : 'y',
          };
          if (levels === 4) labels[ZONE] = `z${z}`;
          let n = node(name).labels(labels).cpu(rng.int(0, 16)).gpu(rng.int(0, 8));
          if (rng.int(0, 9) === 0) n = n.taint({ key: 'dedicated', value: 'infra', effect: 'NoSchedule' });
          nodes.push(n);
          hosts.push(name);
        }
      }
    }
  }
  const s = snapshotOf(levels === 4 ? [ZONE, BLOCK, RACK, HOST] : [BLOCK, RACK, HOST], nodes);
  for (const h of hosts) {
    const used = rng.int(0, 5);
    if (used > 0) s.addPod(`used/${h}`, h, { cpu: used * 1000, [GPU]: rng.int(0, 2) });
  }
  return { s, hosts };
}

function request(rng: Prng, s: TopologySnapshot, size: number): PlacementRequest {
  const L = s.levels.length;
  const mode = (['required', 'preferred', 'unconstrained'] as const)[rng.int(0, 2)]!;
  const level = rng.int(0, L - 1);
  const slice = [0, 0, 1, 2, 4][rng.int(0, 4)]!;
  const sliceLevel = rng.int(level, L - 1);
  const sliceLayers = slice > 0 ? [{ topology: s.levels[sliceLevel]!, size: slice }] : [];
  if (slice === 4 && sliceLevel < L - 1 && rng.int(0, 1) === 0) sliceLayers.push({ topology: s.levels[L - 1]!, size: 2 });
  const requests: Record<string, number> = { cpu: rng.int(1, 4) * 1000 };
  if (rng.int(0, 2) === 0) requests[GPU] = rng.int(1, 2);
  const count = (slice > 0 ? slice : 1) * rng.int(1, 30 * size * size);
  const req: PlacementRequest = {
    podSetName: 'w',
    count,
    requests,
    mode,
    level: mode === 'unconstrained' && rng.int(0, 1) === 0 ? undefined : s.levels[level],
    sliceLayers: mode === 'unconstrained' && slice === 0 ? [] : sliceLayers,
    tolerations: rng.int(0, 1) === 0 ? [{ key: 'dedicated', operator: 'Exists', effect: 'NoSchedule' }] : [],
  };
  if (rng.int(0, 3) === 0) req.leader = { podSetName: 'l', requests: { cpu: rng.int(1, 3) * 1000 } };
  if (rng.int(0, 4) === 0) req.nodeSelector = { pool: 'x' };
  if (rng.int(0, 4) === 0)
    req.preferredAffinity = [
      { weight: rng.int(1, 100), preference: { matchExpressions: [{ key: 'pool', operator: 'In', values: ['y'] }] } },
    ];
  if (mode === 'preferred' && level > 0 && rng.int(0, 3) === 0) req.maxLevel = s.levels[rng.int(0, level)];
  return req;
}

/** Places a seeded series and returns the digest of every result, in order. */
export function placementDigest(
  seed: number,
  clusters: number,
  perCluster: number,
  size = 1,
): { digest: string; placed: number; failed: number } {
  const rng = new Prng(seed);
  const h = createHash('sha256');
  let placed = 0;
  let failed = 0;
  for (let c = 0; c < clusters; c++) {
    const { s, hosts } = cluster(rng, c % 2 === 0 ? 3 : 4, size);
    const engine = new PlacementEngine(s);
    for (let i = 0; i < perCluster; i++) {
      const req = request(rng, s, size);
      const options: PlacementOptions = { profile: PROFILES[rng.int(0, 3)]!, respectPreferredAffinity: rng.int(0, 1) === 0 };
      if (rng.int(0, 4) === 0) {
        const assumed = new AssumedUsage();
        for (let k = 0; k < 3; k++) {
          const leaf = s.leafById(hosts[rng.int(0, hosts.length - 1)]!);
          if (leaf !== undefined) assumed.add(leaf, { cpu: 1000 }, rng.int(1, 3));
        }
        options.assumed = assumed;
      }
      if (rng.int(0, 5) === 0) options.simulateEmpty = true;
      if (rng.int(0, 6) === 0) options.requiredDomain = s.domainsAt(0)[rng.int(0, s.domainsAt(0).length - 1)];
      const result = engine.place(req, options);
      h.update(JSON.stringify(result));
      h.update('\n');
      if (result.ok) placed++;
      else failed++;
      // Usage moves between placements, as admissions do, and now and then a node goes.
      if (result.ok)
        s.addWorkloadUsage(
          `wl-${c}-${i}`,
          result.workers.domains.map((d) => ({ leafId: d.values[d.values.length - 1]!, count: d.count })),
          req.requests,
        );
      if (rng.int(0, 9) === 0) s.removeNode(hosts[rng.int(0, hosts.length - 1)]!);
    }
  }
  return { digest: h.digest('hex'), placed, failed };
}

describe('placement engine: identical placements across speed work', () => {
  it('the seeded placement series gives the digest recorded before the rewrite', () => {
    const r = placementDigest(16, 60, 40);
    // The series exercises both outcomes (a digest of only failures would prove little).
    assert.ok(r.placed > 600 && r.failed > 300, `${r.placed} placed, ${r.failed} failed`);
    assert.equal(r.digest, '80460013445d6f62bd739670ff50f35a5a32cbd3678ef2f4e3efa7c3b9591d7d');
  });

  it('larger seeded clusters (long sibling lists, sorted without a comparator) give the recorded digest', () => {
    const r = placementDigest(1616, 12, 25, 4);
    assert.ok(r.placed > 100 && r.failed > 50, `${r.placed} placed, ${r.failed} failed`);
    assert.equal(r.digest, '84d8b117d07ddbcab1acb52d66544cb4b3b091af2efaae1cba44c6b1df0f30e1');
  });
});

describe('placement engine: the count cache', () => {
  it('a reused engine places as a fresh one after pod, node and workload usage changes on a few leaves', () => {
    const rng = new Prng(99);
    const { s, hosts } = cluster(rng, 4, 3);
    const reused = new PlacementEngine(s);
    for (let i = 0; i < 60; i++) {
      const req = request(rng, s, 3);
      const options: PlacementOptions = { profile: PROFILES[rng.int(0, 3)]! };
      assert.deepEqual(reused.place(req, options), new PlacementEngine(s).place(req, options), `placement ${i}`);
      const h = hosts[rng.int(0, hosts.length - 1)]!;
      const change = rng.int(0, 3);
      if (change === 0) s.addPod(`extra/${i}`, h, { cpu: rng.int(1, 8) * 1000 });
      else if (change === 1) s.removePod(`used/${h}`);
      else if (change === 2) s.upsertNode({ ...s.node(s.nodeIndex(h)!), allocatable: { cpu: rng.int(0, 32) * 1000, pods: 110 } });
      else s.addWorkloadUsage(`w/${i}`, [{ leafId: h, count: 1 }], { cpu: 2000 });
    }
  });

  it('the plain roll-up kept with the leaf counts follows every leaf counted again, and the counters a placement wrote are copied back from it: a reused engine places and counts as a fresh one, few pod shapes, usage moving on a few leaves', () => {
    const rng = new Prng(7);
    const { s, hosts } = cluster(rng, 4, 3);
    const reused = new PlacementEngine(s);
    const shapes: Record<string, number>[] = [{ cpu: 1000 }, { cpu: 2000, [GPU]: 1 }, { cpu: 3000 }];
    let rolledUp = 0;
    for (let i = 0; i < 150; i++) {
      const L = s.levels.length;
      const mode = (['required', 'preferred', 'unconstrained'] as const)[rng.int(0, 2)]!;
      const level = rng.int(0, L - 1);
      const slice = [0, 1, 2, 3][rng.int(0, 3)]!;
      const sliceLayers = slice > 0 ? [{ topology: s.levels[rng.int(level, L - 1)]!, size: slice }] : [];
      const req: PlacementRequest = {
        podSetName: 'w',
        count: (slice > 0 ? slice : 1) * rng.int(1, 60),
        requests: shapes[rng.int(0, shapes.length - 1)]!,
        mode,
        level: s.levels[level],
        sliceLayers,
        tolerations: [],
      };
      const options: PlacementOptions = { profile: PROFILES[rng.int(0, 3)]! };
      const r = reused.place(req, options);
      assert.deepEqual(r, new PlacementEngine(s).place(req, options), `placement ${i}`);
      // The counters the placement wrote are not those of the next count pass.
      for (const key of s.levels)
        assert.deepEqual(reused.podsPerDomain(req, key), new PlacementEngine(s).podsPerDomain(req, key), `pods per domain ${i} ${key}`);
      if (r.ok) rolledUp++;
      for (let k = rng.int(1, 3); k > 0; k--) {
        const h = hosts[rng.int(0, hosts.length - 1)]!;
        const change = rng.int(0, 3);
        if (change === 0) s.addPod(`extra/${i}/${k}`, h, { cpu: rng.int(1, 8) * 1000 });
        else if (change === 1) s.removePod(`used/${h}`);
        else if (change === 2 && s.nodeIndex(h) !== undefined)
          s.upsertNode({ ...s.node(s.nodeIndex(h)!), allocatable: { cpu: rng.int(0, 32) * 1000, [GPU]: rng.int(0, 8), pods: 110 } });
        else if (r.ok && k === 1)
          s.addWorkloadUsage(
            `w/${i}`,
            r.workers.domains.map((d) => ({ leafId: d.values[d.values.length - 1]!, count: d.count })),
            req.requests,
          );
      }
    }
    assert.ok(rolledUp > 50, `${rolledUp} placed`);
  });
});
