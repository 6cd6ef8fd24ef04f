import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { BLOCK, HOST, node, rackOf, RACK, snapshotOf } from '../testing/builders.ts';
import { nodeInfoFromNode } from '../topology/source.ts';
import { CHANGE_LOG, type TopologySnapshot } from '../topology/snapshot.ts';
import { AssumedUsage, PlacementEngine, type PlacementOptions } from './engine.ts';
import type { PlacementRequest } from './request.ts';

function request(p: Partial<PlacementRequest>): PlacementRequest {
  return { podSetName: 'main', count: 1, requests: { cpu: 1000 }, mode: 'required', sliceLayers: [], tolerations: [], ...p };
}

/** Places and returns `{host: count}` (or the failure reason). */
function placeOn(s: TopologySnapshot, p: Partial<PlacementRequest>, o: PlacementOptions = {}): Record<string, number> | string {
  const r = new PlacementEngine(s).place(request(p), o);
  if (!r.ok) return r.reason;
  return Object.fromEntries(r.workers.domains.map((d) => [d.values.join('/'), d.count]));
}

const levels3 = [BLOCK, RACK, HOST];

describe('KEP-2724 "Computing the assignment" example: a rack of 3,3,2,1', () => {
  const s = snapshotOf(levels3, rackOf('b1', 'r1', [3, 3, 2, 1], 'x'));
  it('BestFit takes the two 3s and optimizes the last domain to the node with room for exactly 1', () => {
    assert.deepEqual(placeOn(s, { count: 7, mode: 'required', level: RACK }), { x1: 3, x2: 3, x4: 1 });
  });
  it('LeastFreeCapacity takes 1, 2, 3 and reserves 1 pod on the last node', () => {
    assert.deepEqual(placeOn(s, { count: 7, mode: 'unconstrained' }), { x4: 1, x3: 2, x1: 3, x2: 1 });
  });
});

describe('KEP-2724 two-level example: a rack of 6,5,4,3,2 with slices of 2 per host', () => {
  const s = snapshotOf(levels3, rackOf('b1', 'r1', [6, 5, 4, 3, 2], 'x'));
  const slices = [{ topology: HOST, size: 2 }];
  it('BestFit, 12 pods: 6 . 4 . 2', () => {
    assert.deepEqual(placeOn(s, { count: 12, mode: 'required', level: RACK, sliceLayers: slices }), { x1: 6, x3: 4, x5: 2 });
  });
  it('LeastFreeCapacity, 10 pods: . 2 4 2 2 (profile LeastFreeCapacity)', () => {
    assert.deepEqual(placeOn(s, { count: 10, mode: 'required', level: RACK, sliceLayers: slices }, { profile: 'LeastFreeCapacity' }), {
      x2: 2,
      x3: 4,
      x4: 2,
      x5: 2,
    });
  });
  it('LeastFreeCapacity, 10 pods: . 2 4 2 2 (Mixed, slice-only request)', () => {
    assert.deepEqual(placeOn(s, { count: 10, mode: 'unconstrained', sliceLayers: slices }), { x2: 2, x3: 4, x4: 2, x5: 2 });
  });
});

describe('KEP-2724 multi-level example: 64 pods, slices of 32 per block and 16 per rack', () => {
  const nodes = [];
  for (const b of ['b1', 'b2']) for (const r of ['r1', 'r2']) nodes.push(...rackOf(b, r, [8, 8, 8, 8], `${b}-${r}-h`));
  const s = snapshotOf(levels3, nodes);
  it('one block hosts all 64 pods, each rack 32, each host 8', () => {
    const got = placeOn(s, {
      count: 64,
      mode: 'required',
      level: BLOCK,
      sliceLayers: [
        { topology: BLOCK, size: 32 },
        { topology: RACK, size: 16 },
      ],
    });
    assert.equal(typeof got, 'object');
    const hosts = got as Record<string, number>;
    assert.equal(Object.keys(hosts).length, 8);
    for (const [h, c] of Object.entries(hosts)) {
      assert.equal(c, 8);
      assert.ok(h.startsWith('b1-'), h);
    }
  });
});

describe('required, preferred and unconstrained requests', () => {
  const nodes = [...rackOf('b1', 'r1', [4, 4], 'a'), ...rackOf('b1', 'r2', [4, 4], 'b'), ...rackOf('b2', 'r1', [2, 2], 'c')];
  const s = snapshotOf(levels3, nodes);
  it('required never leaves its level', () => {
    assert.equal(placeOn(s, { count: 9, mode: 'required', level: RACK }), 'topology "default" allows to fit only 8 out of 9 pod(s)');
  });
  it('preferred climbs one level at a time until one domain fits', () => {
    assert.deepEqual(placeOn(s, { count: 9, mode: 'preferred', level: RACK }), { a1: 4, a2: 4, b1: 1 });
  });
  it('preferred splits across the top level when nothing fits', () => {
    assert.deepEqual(placeOn(s, { count: 20, mode: 'preferred', level: RACK }), { a1: 4, a2: 4, b1: 4, b2: 4, c1: 2, c2: 2 });
  });
  it('a request that fits nowhere reports what does fit', () => {
    assert.equal(placeOn(s, { count: 21, mode: 'preferred', level: RACK }), 'topology "default" allows to fit only 20 out of 21 pod(s)');
  });
  it('unknown level gives the peer message', () => {
    assert.equal(placeOn(s, { count: 1, mode: 'required', level: 'nope' }), 'no requested topology level: nope');
  });
});

describe('free capacity', () => {
  it('every pod also takes one `pods`: a node with pods: 2 fits 2', () => {
    const s = snapshotOf(levels3, [
      node('x')
        .labels({ [BLOCK]: 'b', [RACK]: 'r' })
        .cpu(10)
        .pods(2),
    ]);
    assert.equal(placeOn(s, { count: 3, mode: 'required', level: RACK }), 'topology "default" allows to fit only 2 out of 3 pod(s)');
  });
  it('a node without `pods` allocatable fits nothing and is listed as excluded by that resource', () => {
    const s = snapshotOf(levels3, [
      node('x')
        .labels({ [BLOCK]: 'b', [RACK]: 'r' })
        .cpu(10)
        .pods(0),
      node('y')
        .labels({ [BLOCK]: 'b', [RACK]: 'r' })
        .cpu(1),
    ]);
    assert.equal(
      placeOn(s, { count: 3, mode: 'required', level: RACK }),
      'topology "default" allows to fit only 1 out of 3 pod(s). Total nodes: 2; excluded: resource "pods": 1',
    );
    assert.equal(
      placeOn(s, { count: 2, mode: 'required', level: RACK, requests: { cpu: 2000 } }),
      'topology "default" doesn\'t allow to fit any of 2 pod(s). Total nodes: 2; excluded: resource "cpu": 1, resource "pods": 1',
    );
  });
  it('bound non-terminal pods are usage; removing them frees the capacity', () => {
    const s = snapshotOf(levels3, rackOf('b', 'r', [4], 'x'));
    s.addPod('default/p', 'x1', { cpu: 3000 });
    assert.deepEqual(placeOn(s, { count: 1, mode: 'required', level: RACK }), { x1: 1 });
    assert.match(placeOn(s, { count: 2, mode: 'required', level: RACK }) as string, /allows to fit only 1 out of 2/);
    s.removePod('default/p');
    assert.deepEqual(placeOn(s, { count: 4, mode: 'required', level: RACK }), { x1: 4 });
  });
  it('NotReady and unschedulable nodes are not in the tree', () => {
    const s = snapshotOf(levels3, [
      node('x1')
        .labels({ [BLOCK]: 'b', [RACK]: 'r' })
        .cpu(4)
        .notReady(),
      node('x2')
        .labels({ [BLOCK]: 'b', [RACK]: 'r' })
        .cpu(4)
        .unschedulable(),
    ]);
    assert.equal(placeOn(s, { count: 1, mode: 'required', level: RACK }), `no topology domains at level: ${RACK}`);
  });
  it("PodSets of one pass see each other's assumed usage", () => {
    const s = snapshotOf(levels3, rackOf('b', 'r', [4, 4], 'x'));
    const e = new PlacementEngine(s);
    const assumed = new AssumedUsage();
    const first = e.place(request({ count: 4, level: RACK }), { assumed });
    assert.ok(first.ok);
    assumed.addAssignment(s, first.workers, { cpu: 1000 });
    const second = e.place(request({ count: 4, level: RACK }), { assumed });
    assert.ok(second.ok);
    assert.notDeepEqual(first.workers.domains[0]!.values, second.workers.domains[0]!.values);
    const third = e.place(request({ count: 1, level: RACK }), {
      assumed: (assumed.addAssignment(s, second.workers, { cpu: 1000 }), assumed),
    });
    assert.equal(third.ok, false);
  });
  it('assumed usage counts by resource: a leader and workers see it, a resource no node has is ignored', () => {
    const s = snapshotOf(levels3, rackOf('b', 'r', [4, 4], 'x'));
    const assumed = new AssumedUsage();
    assumed.add(s.leafById(s.leafIdOf(['b', 'r', 'x1']))!, { cpu: 3000, 'example.com/none': 5 }, 1);
    const resources = s.resourceCount;
    const e = new PlacementEngine(s);
    // 5 CPUs are free (x1 1, x2 4): 4 workers and a 1-CPU leader fit, 5 workers and a leader do not.
    const r = e.place(request({ count: 4, level: RACK, leader: { podSetName: 'leader', requests: { cpu: 1000 } } }), { assumed });
    assert.ok(r.ok, r.ok ? '' : r.reason);
    assert.equal(
      e.place(request({ count: 5, level: RACK, leader: { podSetName: 'leader', requests: { cpu: 1000 } } }), { assumed }).ok,
      false,
    );
    // A 2-CPU leader fits only on x2, which leaves room for 2 workers, and x1 for 1.
    assert.equal(
      e.place(request({ count: 4, level: RACK, leader: { podSetName: 'leader', requests: { cpu: 2000 } } }), { assumed }).ok,
      false,
    );
    assert.ok(e.place(request({ count: 3, level: RACK, leader: { podSetName: 'leader', requests: { cpu: 2000 } } }), { assumed }).ok);
    assert.equal(s.resourceCount, resources, 'assumed usage interns no resource');
  });
  it('a refusal lists the exclusions of its own count pass, whatever the engine placed before', () => {
    const s = snapshotOf(levels3, [
      ...rackOf('b', 'r1', [2, 2], 'x'),
      node('t1')
        .labels({ [BLOCK]: 'b', [RACK]: 'r2' })
        .cpu(2)
        .taint({ key: 'dedicated', value: 'gpu', effect: 'NoSchedule' })
        .build(),
    ]);
    const ask = request({ count: 5, level: RACK, requests: { cpu: 1000, memory: 1 } });
    const fresh = new PlacementEngine(s).place(ask);
    const used = new PlacementEngine(s);
    used.place(request({ count: 1, level: RACK, nodeSelector: { missing: 'label' } }));
    used.podsPerDomain(request({ count: 1 }), RACK);
    const again = used.place(ask);
    assert.equal(fresh.ok, false);
    assert.deepEqual(again, fresh);
    assert.match(fresh.ok ? '' : fresh.reason, /Total nodes: 3; excluded: resource "memory": 2, taint "dedicated=gpu:NoSchedule": 1$/);
  });
  it('one engine answers as a fresh one across repeated asks, usage added and freed between them (the count pass is reused only while nothing changed)', () => {
    const s = snapshotOf(levels3, [...rackOf('b', 'r1', [4, 4], 'x'), ...rackOf('b', 'r2', [4, 2], 'y')]);
    const e = new PlacementEngine(s);
    const same = (p: Partial<PlacementRequest>) => {
      const want = new PlacementEngine(s).place(request(p));
      assert.deepEqual(e.place(request(p)), want, JSON.stringify(p));
      return want.ok;
    };
    // The same pod shape, several counts, in a row: one count pass serves them all.
    assert.equal(same({ count: 8, level: RACK }), true);
    assert.equal(same({ count: 9, level: RACK }), false);
    assert.equal(same({ count: 6, level: RACK }), true);
    assert.equal(same({ count: 3, level: RACK, mode: 'preferred' }), true);
    // Usage taken: r1 is full, then freed again.
    s.addWorkloadUsage(
      'w',
      ['x1', 'x2'].map((h) => ({ leafId: h, count: 4 })),
      { cpu: 1000 },
    );
    assert.equal(same({ count: 6, level: RACK }), true);
    assert.equal(same({ count: 8, level: RACK }), false);
    // Freed right after a refusal: the refusal's count pass must not answer again.
    s.removeWorkloadUsage('w');
    assert.equal(same({ count: 8, level: RACK }), true);
    // Another pod shape after the first.
    assert.equal(same({ count: 4, level: RACK, requests: { cpu: 2000 } }), true);
    assert.equal(same({ count: 5, level: RACK, requests: { cpu: 2000 } }), false);
  });
  it('the cached per-leaf counts follow the changes the snapshot lists, and a scan of every leaf when more changed than its log keeps', () => {
    const s = snapshotOf(levels3, [...rackOf('b', 'r1', [4, 4], 'x'), ...rackOf('b', 'r2', [4, 2], 'y')]);
    const e = new PlacementEngine(s);
    const same = (p: Partial<PlacementRequest>) =>
      assert.deepEqual(e.place(request(p)), new PlacementEngine(s).place(request(p)), JSON.stringify(p));
    same({ count: 8, level: RACK });
    // A few changes: listed by the snapshot.
    s.addPod('ns/a', 'x1', { cpu: 3000 });
    s.addPod('ns/b', 'y2', { cpu: 2000 });
    same({ count: 6, level: RACK });
    same({ count: 5, level: RACK, mode: 'preferred' });
    // More changes than the log keeps, the last of them undone: every leaf is scanned.
    for (let i = 0; i < CHANGE_LOG; i++) s.addPod(`ns/p${i}`, 'x2', { cpu: 1 });
    s.removePod('ns/a');
    same({ count: 7, level: RACK });
    same({ count: 8, level: RACK });
  });
  it('a long rank-ordered list with few distinct counts is ordered as the comparator orders it (counting sort): fullest first, then level values', () => {
    // 40 hosts x01..x40 in one rack fitting 1, 2, 3, 1, 2, 3, ... pods: BestFit takes the
    // 3s in level order, then the first 2 for the last 2 pods.
    const hosts = Array.from({ length: 40 }, (_, i) =>
      node(`x${String(i + 1).padStart(2, '0')}`)
        .labels({ [BLOCK]: 'b', [RACK]: 'r' })
        .cpu((i % 3) + 1),
    );
    const s = snapshotOf(levels3, hosts);
    assert.deepEqual(placeOn(s, { count: 20, mode: 'required', level: RACK }), { x03: 3, x06: 3, x09: 3, x12: 3, x15: 3, x18: 3, x02: 2 });
  });
  it('incremental node add and remove', () => {
    const s = snapshotOf(levels3, rackOf('b', 'r', [4], 'x'));
    s.upsertNode(
      nodeInfoFromNode(
        node('x2')
          .labels({ [BLOCK]: 'b', [RACK]: 'r' })
          .cpu(4)
          .build(),
      ),
    );
    assert.deepEqual(placeOn(s, { count: 8, mode: 'required', level: RACK }), { x1: 4, x2: 4 });
    s.removeNode('x1');
    assert.deepEqual(placeOn(s, { count: 4, mode: 'required', level: RACK }), { x2: 4 });
  });
});

describe('node filters on hostname-lowest topologies', () => {
  const s = snapshotOf(levels3, [
    node('x1')
      .labels({ [BLOCK]: 'b', [RACK]: 'r', pool: 'a' })
      .cpu(4)
      .taint({ key: 'gpu', value: 'true', effect: 'NoSchedule' }),
    node('x2')
      .labels({ [BLOCK]: 'b', [RACK]: 'r', pool: 'b' })
      .cpu(4),
    node('x3')
      .labels({ [BLOCK]: 'b', [RACK]: 'r', pool: 'a' })
      .cpu(4)
      .taint({ key: 'soft', effect: 'PreferNoSchedule' }),
  ]);
  it('untolerated NoSchedule taints exclude, PreferNoSchedule is ignored, exclusions listed alphabetically', () => {
    assert.equal(
      placeOn(s, { count: 9, mode: 'required', level: RACK, nodeSelector: { pool: 'a' } }),
      'topology "default" allows to fit only 4 out of 9 pod(s). Total nodes: 3; excluded: nodeSelector: 1, taint "gpu=true:NoSchedule": 1',
    );
  });
  it('tolerations let tainted nodes in', () => {
    assert.deepEqual(
      placeOn(s, {
        count: 8,
        mode: 'required',
        level: RACK,
        nodeSelector: { pool: 'a' },
        tolerations: [{ key: 'gpu', operator: 'Exists' }],
      }),
      { x1: 4, x3: 4 },
    );
  });
  it('required node affinity', () => {
    const got = placeOn(s, {
      count: 4,
      mode: 'required',
      level: RACK,
      requiredAffinity: [{ matchExpressions: [{ key: 'pool', operator: 'In', values: ['b'] }] }],
    });
    assert.deepEqual(got, { x2: 4 });
  });
  it('filters are not applied when the lowest level is not the hostname', () => {
    const s2 = snapshotOf(
      [BLOCK, RACK],
      [
        node('x1')
          .labels({ [BLOCK]: 'b', [RACK]: 'r' })
          .cpu(4)
          .taint({ key: 'gpu', effect: 'NoSchedule' }),
      ],
    );
    assert.deepEqual(placeOn(s2, { count: 4, mode: 'required', level: RACK }), { 'b/r': 4 });
  });
});

describe('leader and workers', () => {
  it('the leader lands in one leaf with the workers', () => {
    const s = snapshotOf(levels3, rackOf('b', 'r', [3, 3], 'x'));
    const r = new PlacementEngine(s).place(request({ count: 5, level: RACK, leader: { podSetName: 'leader', requests: { cpu: 1000 } } }));
    assert.ok(r.ok, r.ok ? '' : r.reason);
    const total = r.workers.domains.reduce((n, d) => n + d.count, 0);
    assert.equal(total, 5);
    assert.equal(r.leader!.domains.length, 1);
  });
  it('no room for the leader: fails', () => {
    const s = snapshotOf(levels3, rackOf('b', 'r', [3, 3], 'x'));
    const r = new PlacementEngine(s).place(request({ count: 6, level: RACK, leader: { podSetName: 'leader', requests: { cpu: 1000 } } }));
    assert.equal(r.ok, false);
  });
});

describe('failure messages', () => {
  it('slices are counted in slice(s) when the slice size is above 1', () => {
    const s = snapshotOf(levels3, rackOf('b1', 'r1', [4, 3], 'x'));
    assert.equal(
      placeOn(s, { count: 8, mode: 'required', level: RACK, sliceLayers: [{ topology: HOST, size: 2 }] }),
      'topology "default" allows to fit only 3 out of 4 slice(s)',
    );
  });
  it('multi-layer requests report, per layer, how many slices fit in the best domain', () => {
    const s = snapshotOf(levels3, [...rackOf('b1', 'r1', [4, 4], 'a'), ...rackOf('b1', 'r2', [4, 1], 'b')]);
    assert.equal(
      placeOn(s, {
        count: 16,
        mode: 'required',
        level: BLOCK,
        sliceLayers: [
          { topology: BLOCK, size: 16 },
          { topology: RACK, size: 8 },
        ],
      }),
      `topology "default" doesn't allow to fit; 0/1 slice(s) fit on level ${BLOCK}; 1/2 slice(s) fit on level ${RACK}`,
    );
  });
  it('validation messages of the peer, in order', () => {
    const s = snapshotOf(levels3, rackOf('b1', 'r1', [4], 'a'));
    assert.equal(
      placeOn(s, { count: 2, level: RACK, sliceLayers: [{ topology: 'nope', size: 2 }] }),
      'no requested topology level for slices: nope',
    );
    assert.equal(
      placeOn(s, { count: 2, level: RACK, sliceLayers: [{ topology: BLOCK, size: 2 }] }),
      `podset slice topology ${BLOCK} is above the podset topology ${RACK}`,
    );
    assert.equal(
      placeOn(s, { count: 2, level: RACK, sliceLayers: [{ topology: RACK, size: 0 }] }),
      'slice topology requested, but slice size not provided',
    );
    assert.equal(
      placeOn(s, {
        count: 4,
        level: BLOCK,
        sliceLayers: [
          { topology: RACK, size: 4 },
          { topology: BLOCK, size: 2 },
        ],
      }),
      `additional slice layer topology ${BLOCK} must be at a lower level than ${RACK}`,
    );
    assert.equal(
      placeOn(s, {
        count: 4,
        level: BLOCK,
        sliceLayers: [
          { topology: BLOCK, size: 4 },
          { topology: RACK, size: 3 },
        ],
      }),
      'additional slice layer size 3 must evenly divide parent layer size 4',
    );
    assert.equal(
      placeOn(s, {
        count: 4,
        level: BLOCK,
        sliceLayers: [
          { topology: BLOCK, size: 4 },
          { topology: 'zone', size: 2 },
        ],
      }),
      'no requested topology level for additional slice layer: zone',
    );
  });
});

describe('topologies whose lowest level is not the hostname', () => {
  it('several nodes collapse into one leaf, their capacity summed; output carries the full path', () => {
    const s = snapshotOf(
      [BLOCK, RACK],
      [
        node('x1')
          .labels({ [BLOCK]: 'b', [RACK]: 'r' })
          .cpu(2),
        node('x2')
          .labels({ [BLOCK]: 'b', [RACK]: 'r' })
          .cpu(2),
      ],
    );
    const r = new PlacementEngine(s).place(request({ count: 4, level: RACK }));
    assert.ok(r.ok);
    assert.deepEqual(r.workers, { levels: [BLOCK, RACK], domains: [{ values: ['b', 'r'], count: 4 }] });
  });
  it('a node missing a level label is left out silently', () => {
    const s = snapshotOf(
      [BLOCK, RACK],
      [
        node('x1')
          .labels({ [BLOCK]: 'b' })
          .cpu(2),
      ],
    );
    assert.equal(placeOn(s, { count: 1, level: RACK }), `no topology domains at level: ${RACK}`);
  });
  it('the final tie-break is a plain string comparison of level values (x10 < x2)', () => {
    const s = snapshotOf(levels3, [
      node('x2')
        .labels({ [BLOCK]: 'b', [RACK]: 'r' })
        .cpu(1),
      node('x10')
        .labels({ [BLOCK]: 'b', [RACK]: 'r' })
        .cpu(1),
    ]);
    assert.deepEqual(placeOn(s, { count: 1, level: RACK }), { x10: 1 });
  });
});

describe('simulateEmpty', () => {
  it('ignores TAS usage but keeps non-TAS usage', () => {
    const s = snapshotOf(levels3, rackOf('b', 'r', [4], 'x'));
    s.addWorkloadUsage('ns/w/main', [{ leafId: 'x1', count: 2 }], { cpu: 1000 });
    s.addPod('ns/p', 'x1', { cpu: 1000 });
    assert.match(placeOn(s, { count: 2, level: RACK }) as string, /allows to fit only 1 out of 2/);
    assert.deepEqual(placeOn(s, { count: 3, level: RACK }, { simulateEmpty: true }), { x1: 3 });
    s.removeWorkloadUsage('ns/w/main');
    assert.deepEqual(placeOn(s, { count: 3, level: RACK }), { x1: 3 });
  });
});

describe('KEP-2724 "Hierarchy representation" example: rack labels are not globally unique', () => {
  const B = 'cloud.provider.com/topology-block';
  const R = 'cloud.provider.com/topology-rack';
  const s = snapshotOf(
    [B, R],
    [
      node('node-1')
        .labels({ [B]: 'block-1', [R]: 'rack-1' })
        .cpu(2),
      node('node-2')
        .labels({ [B]: 'block-1', [R]: 'rack-2' })
        .cpu(2),
      node('node-3')
        .labels({ [B]: 'block-2', [R]: 'rack-1' })
        .cpu(2),
      node('node-4')
        .labels({ [B]: 'block-2', [R]: 'rack-3' })
        .cpu(2),
    ],
  );
  it('node-1 and node-3 share the rack label but are different racks', () => {
    assert.deepEqual(
      s.domainsAt(1).map((d) => s.id(d)),
      ['block-1,rack-1', 'block-1,rack-2', 'block-2,rack-1', 'block-2,rack-3'],
    );
    assert.equal(placeOn(s, { count: 3, mode: 'required', level: R }), 'topology "default" allows to fit only 2 out of 3 pod(s)');
  });
  it('an assignment speaks in full level paths when the lowest level is not the hostname', () => {
    const r = new PlacementEngine(s).place(request({ count: 4, mode: 'required', level: B }));
    assert.ok(r.ok);
    assert.deepEqual(r.workers, {
      levels: [B, R],
      domains: [
        { values: ['block-1', 'rack-1'], count: 2 },
        { values: ['block-1', 'rack-2'], count: 2 },
      ],
    });
  });
});
