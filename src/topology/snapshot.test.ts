import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { BLOCK, node, RACK, rackOf, snapshotOf } from '../testing/builders.ts';
import { CHANGE_LOG } from './snapshot.ts';
import { AllocatableCache, nodeInfoFromNode } from './source.ts';

const levels = [BLOCK, RACK, 'kubernetes.io/hostname'];
const info = (b: ReturnType<typeof node>) => nodeInfoFromNode(b.build());

describe('snapshot incremental maintenance', () => {
  it('a node update that keeps its place is applied in place: no structural rebuild', () => {
    const s = snapshotOf(levels, rackOf('b', 'r', [4, 4], 'x'));
    const v = s.version;
    s.upsertNode(
      info(
        node('x1')
          .labels({ [BLOCK]: 'b', [RACK]: 'r' })
          .cpu(6),
      ),
    );
    assert.equal(s.version, v);
    const cpu = s.resources.get('cpu')!;
    assert.equal(s.free(s.leafById('x1')!, cpu), 6000);
  });
  it('a label change that moves the node to another rack re-parents its leaf', () => {
    const s = snapshotOf(levels, rackOf('b', 'r', [4, 4], 'x'));
    s.upsertNode(
      info(
        node('x1')
          .labels({ [BLOCK]: 'b', [RACK]: 'r2' })
          .cpu(4),
      ),
    );
    const leaf = s.leafById('x1')!;
    assert.deepEqual(s.values(leaf), ['b', 'r2', 'x1']);
    assert.deepEqual(
      s.domainsAt(1).map((d) => s.id(d)),
      ['b,r', 'b,r2'],
    );
  });
  it("a node turning NotReady leaves the tree, and comes back with its pods' usage", () => {
    const s = snapshotOf(levels, rackOf('b', 'r', [4], 'x'));
    const cpu = s.resources.get('cpu')!;
    s.addPod('ns/p', 'x1', { cpu: 1000 });
    s.upsertNode(
      info(
        node('x1')
          .labels({ [BLOCK]: 'b', [RACK]: 'r' })
          .cpu(4)
          .notReady(),
      ),
    );
    assert.equal(s.leafById('x1'), undefined);
    assert.equal(s.leaves().length, 0);
    s.upsertNode(
      info(
        node('x1')
          .labels({ [BLOCK]: 'b', [RACK]: 'r' })
          .cpu(4),
      ),
    );
    assert.equal(s.free(s.leafById('x1')!, cpu), 3000);
  });
  it('TAS usage on a leaf that is gone is kept and re-applied when the node returns', () => {
    const s = snapshotOf(levels, rackOf('b', 'r', [4], 'x'));
    const cpu = s.resources.get('cpu')!;
    s.removeNode('x1');
    s.addWorkloadUsage('ns/w/main', [{ leafId: 'x1', count: 2 }], { cpu: 1000 });
    s.upsertNode(
      info(
        node('x1')
          .labels({ [BLOCK]: 'b', [RACK]: 'r' })
          .cpu(4),
      ),
    );
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
    s.upsertNode(
      info(
        node('x1')
          .labels({ [BLOCK]: 'b', [RACK]: 'r' })
          .cpu(4),
      ),
    );
    assert.equal(s.free(s.leafById('x1')!, cpu), 3000);
    s.removeWorkloadUsage('ns/a/main');
    assert.equal(s.free(s.leafById('x1')!, cpu), 4000);
    assert.equal(s.tasUsage(s.leafById('x1')!, cpu), 0);
  });
  it('repeated updates reuse the node slot (no growth per heartbeat)', () => {
    const s = snapshotOf(levels, rackOf('b', 'r', [4], 'x'));
    for (let i = 0; i < 1000; i++)
      s.upsertNode(
        info(
          node('x1')
            .labels({ [BLOCK]: 'b', [RACK]: 'r' })
            .cpu(4 + (i % 2)),
        ),
      );
    for (let i = 0; i < 1000; i++) {
      s.removeNode('x1');
      s.upsertNode(
        info(
          node('x1')
            .labels({ [BLOCK]: 'b', [RACK]: 'r' })
            .cpu(4),
        ),
      );
    }
    assert.equal(s.nodeIndex('x1'), 0);
    assert.equal(s.nodeCount, 1);
  });
  it('a node missing a flavor node label is not in the tree', () => {
    const s = snapshotOf(
      levels,
      [
        node('x1')
          .labels({ [BLOCK]: 'b', [RACK]: 'r', pool: 'a' })
          .cpu(1),
        node('x2')
          .labels({ [BLOCK]: 'b', [RACK]: 'r' })
          .cpu(1),
      ],
      { nodeLabels: { pool: 'a' } },
    );
    assert.deepEqual(
      s.leaves().map((d) => s.id(d)),
      ['x1'],
    );
  });
  it('a hostname equal to a block name does not collide', () => {
    const s = snapshotOf(levels, [
      node('b1')
        .labels({ [BLOCK]: 'b1', [RACK]: 'r1' })
        .cpu(1),
    ]);
    assert.deepEqual(
      s.domainsAt(0).map((d) => s.id(d)),
      ['b1'],
    );
    assert.deepEqual(
      s.leaves().map((d) => s.values(d)),
      [['b1', 'r1', 'b1']],
    );
  });
});

describe('node and name ids', () => {
  it("a removed node's index is reused by the next node added, under another name", () => {
    const s = snapshotOf(levels, rackOf('b', 'r', [4, 4], 'x'));
    const n1 = s.nodeIndex('x1')!;
    s.removeNode('x1');
    assert.equal(s.nodeIndex('x1'), undefined);
    assert.equal(s.nodeLeaf('x1'), -1);
    s.upsertNode(
      info(
        node('y1')
          .labels({ [BLOCK]: 'b', [RACK]: 'r' })
          .cpu(2),
      ),
    );
    assert.equal(s.nodeIndex('y1'), n1);
    assert.equal(s.node(n1).name, 'y1');
    assert.equal(s.nodeIndex('x1'), undefined);
    assert.equal(s.leafById('x1'), undefined);
    assert.equal(s.nodeCount, 2);
    assert.deepEqual(
      s.leaves().map((d) => s.id(d)),
      ['x2', 'y1'],
    );
  });
  it('a node whose hostname label is not its name: the node is found by name, its leaf by hostname', () => {
    const s = snapshotOf(levels, [
      node('n1')
        .hostname('h1')
        .labels({ [BLOCK]: 'b', [RACK]: 'r' })
        .cpu(4),
    ]);
    const leaf = s.leafById('h1')!;
    assert.equal(s.nodeLeaf('n1'), leaf);
    assert.equal(s.leafById('n1'), undefined);
    assert.equal(s.nodeIndex('h1'), undefined);
    assert.equal(s.domainById(2, 'h1'), leaf);
    s.addPod('ns/p', 'n1', { cpu: 1000 });
    s.addPod('ns/q', 'h1', { cpu: 1000 }); // bound to a node named h1, which does not exist
    assert.equal(s.free(leaf, s.resources.get('cpu')!), 3000);
  });
  it('a node relabelled to another hostname leaves its old leaf empty and takes a leaf of the new hostname', () => {
    const s = snapshotOf(levels, [
      node('n1')
        .hostname('h1')
        .labels({ [BLOCK]: 'b', [RACK]: 'r' })
        .cpu(4),
    ]);
    s.addPod('ns/p', 'n1', { cpu: 1000 });
    s.upsertNode(
      info(
        node('n1')
          .hostname('h2')
          .labels({ [BLOCK]: 'b', [RACK]: 'r' })
          .cpu(4),
      ),
    );
    assert.equal(s.leafById('h1'), undefined);
    const leaf = s.leafById('h2')!;
    assert.equal(s.nodeLeaf('n1'), leaf);
    assert.deepEqual(s.values(leaf), ['b', 'r', 'h2']);
    assert.equal(s.free(leaf, s.resources.get('cpu')!), 3000);
    assert.deepEqual(
      s.leaves().map((d) => s.id(d)),
      ['h2'],
    );
  });
  it("a node removed and added again under its name gets its leaf back, with its pods' usage", () => {
    const s = snapshotOf(levels, rackOf('b', 'r', [4, 4], 'x'));
    const leaf = s.leafById('x1')!;
    s.addPod('ns/p', 'x1', { cpu: 1000 });
    s.removeNode('x1');
    s.upsertNode(
      info(
        node('x1')
          .labels({ [BLOCK]: 'b', [RACK]: 'r' })
          .cpu(4),
      ),
    );
    assert.equal(s.leafById('x1'), leaf);
    assert.equal(s.free(leaf, s.resources.get('cpu')!), 3000);
  });
  it("a removed pod's slot serves the next pod, and a pod added again under its key replaces its usage", () => {
    const s = snapshotOf(levels, rackOf('b', 'r', [4, 4], 'x'));
    const cpu = s.resources.get('cpu')!;
    const [x1, x2] = [s.leafById('x1')!, s.leafById('x2')!];
    s.addPod('ns/a', 'x1', { cpu: 1000 });
    s.removePod('ns/a');
    s.removePod('ns/a'); // a second removal changes nothing
    s.addPod('ns/b', 'x2', { cpu: 2000 });
    assert.deepEqual([s.free(x1, cpu), s.free(x2, cpu)], [4000, 2000]);
    s.addPod('ns/b', 'x1', { cpu: 3000 }, 2);
    assert.deepEqual([s.free(x1, cpu), s.free(x2, cpu)], [1000, 4000]);
    assert.deepEqual([s.free(x1, 0), s.free(x2, 0)], [108, 110]); // 110 pods each
  });
  it('resources first named by pods on a node not in the tree are named when the node joins, in the order the pods named them', () => {
    const s = snapshotOf(levels, rackOf('b', 'r', [4], 'x'));
    s.addPod('ns/p', 'y1', { cpu: 1000, 'example.com/a': 2, 'example.com/b': 1 });
    s.addPod('ns/q', 'y1', { 'example.com/c': 1 });
    s.removePod('ns/q');
    assert.deepEqual(s.resources.names, ['pods', 'cpu']);
    s.upsertNode(
      info(
        node('y1')
          .labels({ [BLOCK]: 'b', [RACK]: 'r' })
          .cpu(4)
          .resource('example.com/b', 5),
      ),
    );
    assert.deepEqual(s.resources.names, ['pods', 'cpu', 'example.com/b', 'example.com/a', 'example.com/c']);
    const y1 = s.leafById('y1')!;
    assert.deepEqual(
      s.resources.names.map((_, r) => s.free(y1, r)),
      [109, 3000, 4, -2, 0],
    );
    s.removeNode('y1');
    s.upsertNode(
      info(
        node('y1')
          .labels({ [BLOCK]: 'b', [RACK]: 'r' })
          .cpu(4),
      ),
    );
    assert.deepEqual(
      s.resources.names.map((_, r) => s.free(s.leafById('y1')!, r)),
      [109, 3000, -1, -2, 0],
    );
  });
  it('a leaf that moved rack reports its new values, asked for before and after the move', () => {
    const s = snapshotOf(levels, rackOf('b', 'r', [4], 'x'));
    const leaf = s.leafById('x1')!;
    assert.deepEqual(s.values(leaf), ['b', 'r', 'x1']);
    s.upsertNode(
      info(
        node('x1')
          .labels({ [BLOCK]: 'b2', [RACK]: 'r' })
          .cpu(4),
      ),
    );
    assert.equal(s.leafById('x1'), leaf);
    assert.deepEqual(s.values(leaf), ['b2', 'r', 'x1']);
    assert.deepEqual(
      s.domainsAt(1).map((d) => s.values(d)),
      [['b2', 'r']],
    );
  });
});

describe('capacity changes', () => {
  it('capacityChangesSince lists each leaf whose capacity changed since a clock once, at its last change, or -1 past the log', () => {
    const s = snapshotOf(levels, rackOf('b', 'r', [4, 4, 4], 'x'));
    s.leaves();
    const leaf = (h: string) => s.leafById(h)!;
    const out = new Int32Array(CHANGE_LOG);
    const since = s.capacityStamps().clock;
    assert.equal(s.capacityChangesSince(since, out), 0);
    s.addPod('ns/a', 'x2', { cpu: 1000 });
    s.addPod('ns/b', 'x1', { cpu: 1000 });
    s.removePod('ns/a');
    const n = s.capacityChangesSince(since, out);
    assert.deepEqual([...out.subarray(0, n)], [leaf('x1'), leaf('x2')]);
    const mid = s.capacityStamps().clock;
    s.upsertNode(
      info(
        node('x3')
          .labels({ [BLOCK]: 'b', [RACK]: 'r' })
          .cpu(6),
      ),
    );
    assert.deepEqual([...out.subarray(0, s.capacityChangesSince(mid, out))], [leaf('x3')]);
    // An output shorter than the changes, or more changes than the log keeps: -1.
    assert.equal(s.capacityChangesSince(since, new Int32Array(2)), -1);
    for (let i = 0; i < CHANGE_LOG; i++) s.addPod(`ns/p${i}`, 'x1', { cpu: 1 });
    assert.equal(s.capacityChangesSince(mid, out), -1);
    const last = s.capacityStamps().clock;
    s.removePod('ns/p0');
    assert.deepEqual([...out.subarray(0, s.capacityChangesSince(last, out))], [leaf('x1')]);
  });
});

describe('pod usage on a node', () => {
  it('pods of one node in a row, the node moving rack between them: each counts on the leaf it is on', () => {
    const s = snapshotOf(levels, rackOf('b', 'r', [4, 4], 'x'));
    const cpu = s.resources.get('cpu')!;
    s.addPod('ns/p1', 'x1', { cpu: 1000 });
    s.upsertNode(
      info(
        node('x1')
          .labels({ [BLOCK]: 'b', [RACK]: 'r2' })
          .cpu(4),
      ),
    );
    s.addPod('ns/p2', 'x1', { cpu: 1000 });
    assert.equal(s.free(s.leafById('x1')!, cpu), 2000);
    s.removeNode('x1');
    s.addPod('ns/p3', 'x1', { cpu: 1000 });
    s.upsertNode(
      info(
        node('x1')
          .labels({ [BLOCK]: 'b', [RACK]: 'r' })
          .cpu(4),
      ),
    );
    assert.equal(s.free(s.leafById('x1')!, cpu), 1000);
    s.removePod('ns/p1');
    s.removePod('ns/p2');
    assert.equal(s.free(s.leafById('x1')!, cpu), 3000);
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
  it('a list changed in place after it was parsed is parsed afresh', () => {
    const c = new AllocatableCache();
    const list: Record<string, string> = { cpu: '96', pods: '110' };
    assert.deepEqual(c.parse(list), { cpu: 96000, pods: 110 });
    list.cpu = '8';
    assert.deepEqual(c.parse(list), { cpu: 8000, pods: 110 });
    list.memory = '1Gi';
    assert.deepEqual(c.parse(list), { cpu: 8000, pods: 110, memory: 1024 ** 3 });
  });
  it('the same quantities in another order keep their own order', () => {
    const c = new AllocatableCache();
    c.parse({ cpu: '1', pods: '2' });
    assert.deepEqual(Object.keys(c.parse({ pods: '2', cpu: '1' })), ['pods', 'cpu']);
  });
});

describe('incremental maintenance equals a fresh build (property)', () => {
  it('after any sequence of node and pod events, the tree and free capacity match a snapshot built from the final state', async () => {
    const fc = (await import('fast-check')).default;
    const { TopologySnapshot } = await import('./snapshot.ts');
    const { LabelTopologySource } = await import('./source.ts');
    const event = fc.oneof(
      fc.record({
        t: fc.constant('node' as const),
        name: fc.integer({ min: 0, max: 5 }),
        rack: fc.integer({ min: 0, max: 2 }),
        cpu: fc.integer({ min: 0, max: 8 }),
        ready: fc.boolean(),
      }),
      fc.record({ t: fc.constant('remove' as const), name: fc.integer({ min: 0, max: 5 }) }),
      fc.record({
        t: fc.constant('pod' as const),
        pod: fc.integer({ min: 0, max: 5 }),
        name: fc.integer({ min: 0, max: 5 }),
        cpu: fc.integer({ min: 1, max: 3 }),
      }),
      fc.record({ t: fc.constant('unpod' as const), pod: fc.integer({ min: 0, max: 5 }) }),
    );
    fc.assert(
      fc.property(fc.array(event, { maxLength: 40 }), (events) => {
        const fresh = () => new TopologySnapshot(new LabelTopologySource('t', levels));
        const s = fresh();
        const nodes = new Map<string, ReturnType<typeof info>>();
        const pods = new Map<string, { node: string; cpu: number }>();
        for (const e of events) {
          if (e.t === 'node') {
            // Hostnames are unique per node here: two live nodes sharing one is a conflict
            // whose outcome depends on event order (see the create-before-delete test).
            const b = node(`n${e.name}`)
              .hostname(`h${e.name}`)
              .labels({ [BLOCK]: 'b', [RACK]: `r${e.rack}` })
              .cpu(e.cpu);
            if (!e.ready) b.notReady();
            const ni = info(b);
            nodes.set(ni.name, ni);
            s.upsertNode(ni);
          } else if (e.t === 'remove') {
            nodes.delete(`n${e.name}`);
            s.removeNode(`n${e.name}`);
          } else if (e.t === 'pod') {
            pods.set(`p${e.pod}`, { node: `n${e.name}`, cpu: e.cpu * 1000 });
            s.addPod(`p${e.pod}`, `n${e.name}`, { cpu: e.cpu * 1000 });
          } else {
            pods.delete(`p${e.pod}`);
            s.removePod(`p${e.pod}`);
          }
        }
        const f = fresh();
        for (const ni of nodes.values()) f.upsertNode(ni);
        for (const [k, p] of pods) f.addPod(k, p.node, { cpu: p.cpu });
        const view = (x: InstanceType<typeof TopologySnapshot>) =>
          levels.map((_, l) =>
            x.domainsAt(l).map((d) => {
              const cpu = x.resources.get('cpu');
              return `${x.values(d).join('/')}=${x.id(d)}:${l === levels.length - 1 ? `${x.free(d, 0)}/${cpu === undefined ? 0 : x.free(d, cpu)}` : ''}`;
            }),
          );
        assert.deepEqual(view(s), view(f));
      }),
      { numRuns: 400, seed: 3 },
    );
  });
});
