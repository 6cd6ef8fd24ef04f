import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { PodSet, ResourceFlavor, Workload } from '../api/objects.ts';
import { BLOCK, HOST, node, RACK, rackOf, snapshotOf } from '../testing/builders.ts';
import { PlacementEngine } from './engine.ts';
import { placeWorkload, podSetGroups, type TasFlavor } from './workload-placement.ts';

function podSet(name: string, count: number, cpu: string, extra: Partial<PodSet> = {}, annotations: Record<string, string> = {}): PodSet {
  return {
    name,
    count,
    template: { metadata: { annotations }, spec: { containers: [{ name: 'c', resources: { requests: { cpu } } }] } },
    ...extra,
  };
}

function workload(podSets: PodSet[]): Workload {
  return { apiVersion: 'kueue.x-k8s.io/v1beta2', kind: 'Workload', metadata: { name: 'w', namespace: 'ns' }, spec: { podSets } };
}

function flavor(name: string, nodeLabels: Record<string, string>, extra: Partial<ResourceFlavor['spec']> = {}): ResourceFlavor {
  return {
    apiVersion: 'kueue.x-k8s.io/v1beta2',
    kind: 'ResourceFlavor',
    metadata: { name },
    spec: { nodeLabels, topologyName: 'default', ...extra },
  };
}

function tas(f: ResourceFlavor, nodes: Parameters<typeof snapshotOf>[1]): TasFlavor {
  const snapshot = snapshotOf([BLOCK, RACK, HOST], nodes, { nodeLabels: f.spec.nodeLabels });
  return { flavor: f, snapshot, engine: new PlacementEngine(snapshot) };
}

describe('PodSet groups (leader + workers)', () => {
  it('the smaller PodSet is the leader; on a tie the second-listed one', () => {
    const g = { topologyRequest: { podSetGroupName: 'g', required: RACK } };
    assert.equal(podSetGroups([podSet('leader', 1, '1', g), podSet('workers', 3, '1', g)])[0]!.leader!.name, 'leader');
    assert.equal(podSetGroups([podSet('a', 2, '1', g), podSet('b', 2, '1', g)])[0]!.leader!.name, 'b');
  });
  it("leader and workers are placed together, only the workers' request drives the placement", () => {
    const nodes = [...rackOf('b1', 'r1', [2, 2], 'a'), ...rackOf('b1', 'r2', [4, 4], 'b')];
    const f = tas(flavor('f', {}), nodes);
    const g = (req?: string) => ({ topologyRequest: { podSetGroupName: 'g', ...(req ? { required: req } : {}) } });
    const r = placeWorkload(workload([podSet('leader', 1, '1', g()), podSet('workers', 5, '1', g(RACK))]), [f]);
    assert.ok(r.ok, r.ok ? '' : r.reason);
    const leader = r.podSets.find((p) => p.name === 'leader')!;
    const workers = r.podSets.find((p) => p.name === 'workers')!;
    assert.equal(leader.assignment.domains.length, 1);
    assert.ok(leader.assignment.domains[0]!.values[0]!.startsWith('b'), "leader in the workers' rack");
    assert.equal(
      workers.assignment.domains.reduce((n, d) => n + d.count, 0),
      5,
    );
    for (const d of workers.assignment.domains) assert.ok(d.values[0]!.startsWith('b'));
  });
});

describe('several PodSets of one Workload', () => {
  it("are placed in order against each other's assumed usage; the first failure stops the workload", () => {
    const f = tas(flavor('f', {}), rackOf('b1', 'r1', [4, 4], 'a'));
    const ok = placeWorkload(
      workload([
        podSet('one', 4, '1', { topologyRequest: { required: RACK } }),
        podSet('two', 4, '1', { topologyRequest: { required: RACK } }),
      ]),
      [f],
    );
    assert.ok(ok.ok);
    const used = new Map<string, number>();
    for (const p of ok.podSets) for (const d of p.assignment.domains) used.set(d.values[0]!, (used.get(d.values[0]!) ?? 0) + d.count);
    assert.deepEqual(Object.fromEntries(used), { a1: 4, a2: 4 });
    const no = placeWorkload(
      workload([
        podSet('one', 4, '1', { topologyRequest: { required: RACK } }),
        podSet('two', 5, '1', { topologyRequest: { required: RACK } }),
      ]),
      [f],
    );
    assert.deepEqual(no, {
      ok: false,
      podSet: 'two',
      reason:
        'couldn\'t assign flavors to pod set two: topology "default" allows to fit only 4 out of 5 pod(s). Total nodes: 2; excluded: resource "cpu": 1',
    });
  });
  it('PodSets with count 0 are skipped', () => {
    const f = tas(flavor('f', {}), rackOf('b1', 'r1', [1], 'a'));
    const r = placeWorkload(workload([podSet('zero', 0, '1'), podSet('one', 1, '1')]), [f]);
    assert.ok(r.ok);
    assert.deepEqual(
      r.podSets.map((p) => p.name),
      ['one'],
    );
  });
});

describe('flavor choice', () => {
  const nodesA = rackOf('b1', 'r1', [4], 'a').map((n) => n.labels({ pool: 'a' }));
  const nodesB = rackOf('b2', 'r1', [4], 'b').map((n) => n.labels({ pool: 'b' }));
  const all = [...nodesA, ...nodesB];
  it("the first TAS flavor whose node labels suit the PodSet's selector is used", () => {
    const fa = tas(flavor('fa', { pool: 'a' }), all);
    const fb = tas(flavor('fb', { pool: 'b' }), all);
    const ps = podSet('main', 2, '1');
    ps.template.spec.nodeSelector = { pool: 'b' };
    const r = placeWorkload(workload([ps]), [fa, fb]);
    assert.ok(r.ok);
    assert.equal(r.podSets[0]!.flavor, 'fb');
    assert.deepEqual(
      r.podSets[0]!.assignment.domains.map((d) => d.values[0]),
      ['b1'],
    );
  });
  it("the flavor's node labels decide which nodes are in its tree", () => {
    const fa = tas(flavor('fa', { pool: 'a' }), all);
    assert.deepEqual(
      fa.snapshot.leaves().map((d) => fa.snapshot.id(d)),
      ['a1'],
    );
  });
  it("untolerated flavor taints and missing levels are reported in the peer's words; a missing level is named with the Topology's levels", () => {
    const tainted = tas(flavor('t', {}, { nodeTaints: [{ key: 'gpu', value: 'h100', effect: 'NoSchedule' }] }), all);
    const r = placeWorkload(workload([podSet('main', 1, '1', { topologyRequest: { required: 'zone' } })]), [
      tainted,
      tas(flavor('f', {}), all),
    ]);
    assert.deepEqual(r, {
      ok: false,
      podSet: 'main',
      reason:
        "couldn't assign flavors to pod set main: untolerated taint gpu=h100:NoSchedule in flavor t, " +
        `Flavor "f" does not contain the requested level "zone"; the Topology "default" has levels: ${BLOCK}, ${RACK}, ${HOST}`,
    });
  });
});

describe('implied TAS', () => {
  it('a PodSet without a topology request is placed unconstrained at the lowest level with LeastFreeCapacity', () => {
    const f = tas(flavor('f', {}), rackOf('b1', 'r1', [3, 3, 2, 1], 'x'));
    const r = placeWorkload(workload([podSet('main', 7, '1')]), [f]);
    assert.ok(r.ok);
    assert.deepEqual(Object.fromEntries(r.podSets[0]!.assignment.domains.map((d) => [d.values[0], d.count])), {
      x1: 3,
      x2: 1,
      x3: 2,
      x4: 1,
    });
  });
});

describe('preferred node affinity (TASRespectNodeAffinityPreferred)', () => {
  const nodes = [
    node('x1')
      .labels({ [BLOCK]: 'b', [RACK]: 'r', disk: 'hdd' })
      .cpu(4),
    node('x2')
      .labels({ [BLOCK]: 'b', [RACK]: 'r', disk: 'ssd' })
      .cpu(4),
  ];
  const ps = () => {
    const p = podSet('main', 2, '1', { topologyRequest: { required: RACK } });
    p.template.spec.affinity = {
      nodeAffinity: {
        preferredDuringSchedulingIgnoredDuringExecution: [
          { weight: 10, preference: { matchExpressions: [{ key: 'disk', operator: 'In', values: ['ssd'] }] } },
        ],
      },
    };
    return p;
  };
  it('off by default: the tie breaks on names', () => {
    const r = placeWorkload(workload([ps()]), [tas(flavor('f', {}), nodes)]);
    assert.ok(r.ok);
    assert.deepEqual(
      r.podSets[0]!.assignment.domains.map((d) => d.values[0]),
      ['x1'],
    );
  });
  it('on: the preferred node wins', () => {
    const r = placeWorkload(workload([ps()]), [tas(flavor('f', {}), nodes)], { respectPreferredAffinity: true });
    assert.ok(r.ok);
    assert.deepEqual(
      r.podSets[0]!.assignment.domains.map((d) => d.values[0]),
      ['x2'],
    );
  });
});
