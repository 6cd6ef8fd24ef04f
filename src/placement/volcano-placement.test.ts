// Whole Volcano-style Workloads on a HyperNode flavor: several PodSets in one domain, the
// gang minimum, and jobs with pods already running (volcano-hypernode.md §3, §4.3).

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { PodSet, Workload } from '../api/objects.ts';
import { hyperNodeSnapshotOf, node, seedSpineLeaf } from '../testing/builders.ts';
import { PlacementEngine } from './engine.ts';
import { placeWorkload, type TasFlavor } from './workload-placement.ts';

function flavor(nodeCount = 8, cpu = 1): TasFlavor {
  const { snapshot, tree } = hyperNodeSnapshotOf(
    seedSpineLeaf(),
    Array.from({ length: nodeCount }, (_, i) => node(`node${i}`).cpu(cpu)),
  );
  return {
    flavor: {
      apiVersion: 'kueue.x-k8s.io/v1beta2',
      kind: 'ResourceFlavor',
      metadata: { name: 'hypernodes' },
      spec: { topologyName: 'hypernodes' },
    },
    snapshot,
    engine: new PlacementEngine(snapshot),
    tierOfName: (n) => tree.tierOfName(n),
    leafTier: (n) => (tree.leafHyperNode(n) ? tree.tier(tree.leafHyperNode(n)!) : undefined),
    implicit: true,
  };
}

const ps = (name: string, count: number): PodSet => ({
  name,
  count,
  template: { spec: { containers: [{ name: 'c', resources: { requests: { cpu: '1' } } }] } },
});

function workload(podSets: PodSet[], annotations: Record<string, string>): Workload {
  return {
    apiVersion: 'kueue.x-k8s.io/v1beta2',
    kind: 'Workload',
    metadata: { name: 'w', namespace: 'ns', annotations },
    spec: { podSets },
  };
}

const hosts = (r: ReturnType<typeof placeWorkload>) =>
  r.ok ? r.podSets.flatMap((p) => p.assignment.domains.map((d) => `${p.name}:${d.values[0]}`)) : r.reason;

describe('Volcano Workloads on HyperNodes', () => {
  it('master and workers share the tightest domain within the limit', () => {
    const r = placeWorkload(
      workload([ps('master', 1), ps('worker', 2)], {
        'volcano.sh/network-topology-mode': 'hard',
        'volcano.sh/network-topology-highest-tier': '2',
      }),
      [flavor()],
    );
    // All three inside one tier-2 HyperNode (s4: node0..node3), none in s5.
    const got = hosts(r) as string[];
    assert.equal(got.length, 3);
    for (const h of got) assert.match(h, /:node[0-3]$/);
  });
  it('a job that cannot share one domain within the limit stays pending', () => {
    const r = placeWorkload(
      workload([ps('master', 1), ps('worker', 2)], {
        'volcano.sh/network-topology-mode': 'hard',
        'volcano.sh/network-topology-highest-tier': '1',
      }),
      [flavor()],
    );
    assert.equal(r.ok, false);
  });
  it('a gang that does not fit whole is placed at its minimum, then as many more as fit within the limit', () => {
    const f = flavor();
    f.snapshot.addPod('ns/busy', 'node3', { cpu: 1000 });
    const r = placeWorkload(
      workload([ps('worker', 6)], {
        'volcano.sh/network-topology-mode': 'hard',
        'volcano.sh/network-topology-highest-tier': '2',
        'gang.scheduling.koordinator.sh/min-available': '2',
      }),
      [f],
    );
    assert.ok(r.ok, r.ok ? '' : r.reason);
    // The gang of 2 takes the tightest tier (a tier-1 leaf, s0); one more fits around it
    // inside s4 (node3 is busy), none outside the tier-2 limit.
    assert.equal(r.podSets[0]!.count, 3);
    assert.deepEqual(
      r.podSets[0]!.assignment.domains.map((d) => d.values[0]),
      ['node0', 'node1', 'node2'],
    );
  });
  it('a gang minimum rounds up to whole partitions (minimum 3 with partitions of 2 places 4)', () => {
    const f = flavor();
    for (const n of ['node2', 'node3', 'node6', 'node7']) f.snapshot.addPod(`ns/busy-${n}`, n, { cpu: 1000 });
    const w = workload([ps('worker', 8)], {
      'volcano.sh/network-topology-mode': 'hard',
      'volcano.sh/network-topology-highest-tier': '3',
      'gang.scheduling.koordinator.sh/min-available': '3',
    });
    w.spec.podSets[0]!.template.metadata = {
      annotations: {
        'topoqueue.io/partition-size': '2',
        'volcano.sh/network-topology-mode': 'hard',
        'volcano.sh/network-topology-highest-tier': '1',
      },
    };
    const r = placeWorkload(w, [f]);
    assert.ok(r.ok, r.ok ? '' : r.reason);
    assert.equal(r.podSets[0]!.count, 4);
  });
  it("pods already running fix the job's domain: new pods go inside its highest ancestor within the limit", () => {
    const f = flavor();
    f.snapshot.addPod('ns/w-0', 'node4', { cpu: 1000 });
    const r = placeWorkload(
      workload([ps('worker', 3)], { 'volcano.sh/network-topology-mode': 'hard', 'volcano.sh/network-topology-highest-tier': '2' }),
      [f],
      {},
      { nodes: ['node4'], perPodSet: new Map([['worker', 1]]) },
    );
    assert.ok(r.ok, r.ok ? '' : r.reason);
    assert.equal(r.podSets[0]!.count, 2);
    for (const d of r.podSets[0]!.assignment.domains) assert.ok(['node5', 'node6', 'node7'].includes(d.values[0]!), d.values[0]);
  });
  it('with a tier-1 limit, new pods stay inside the leaf the job runs in', () => {
    const f = flavor();
    f.snapshot.addPod('ns/w-0', 'node4', { cpu: 1000 });
    const r = placeWorkload(
      workload([ps('worker', 3)], { 'volcano.sh/network-topology-mode': 'hard', 'volcano.sh/network-topology-highest-tier': '1' }),
      [f],
      {},
      { nodes: ['node4'], perPodSet: new Map([['worker', 1]]) },
    );
    assert.equal(r.ok, false);
    const r2 = placeWorkload(
      workload([ps('worker', 2)], { 'volcano.sh/network-topology-mode': 'hard', 'volcano.sh/network-topology-highest-tier': '1' }),
      [f],
      {},
      { nodes: ['node4'], perPodSet: new Map([['worker', 1]]) },
    );
    assert.ok(r2.ok);
    assert.deepEqual(
      r2.podSets[0]!.assignment.domains.map((d) => d.values[0]),
      ['node5'],
    );
  });
  it('pods straddling domains above the limit block further placement', () => {
    const r = placeWorkload(
      workload([ps('worker', 3)], { 'volcano.sh/network-topology-mode': 'hard', 'volcano.sh/network-topology-highest-tier': '1' }),
      [flavor()],
      {},
      { nodes: ['node0', 'node4'], perPodSet: new Map([['worker', 2]]) },
    );
    assert.deepEqual(r, {
      ok: false,
      podSet: 'worker',
      reason: `couldn't assign flavors to pod set worker: pods of the job already run across domains above topology.volcano.sh/tier-1: no more pods can be placed until that changes`,
    });
  });
  it('a Kueue-style Workload never lands on the implicit HyperNode flavor', () => {
    const r = placeWorkload(workload([ps('main', 1)], {}), [flavor()]);
    assert.deepEqual(r, {
      ok: false,
      podSet: 'main',
      reason: "couldn't assign flavors to pod set main: no TAS ResourceFlavor in the input",
    });
  });
});
