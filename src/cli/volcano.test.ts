// `topoqueue plan` on the Volcano examples: HyperNodes, Volcano Jobs, a HyperJob, and a
// Kueue Job on a Topology whose levels are HyperNode tiers.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Workload } from '../api/objects.ts';
import { decodeV1beta2 } from '../placement/assignment-codec.ts';
import { runCli, tmpFile } from '../testing/cli.ts';

async function plan(...args: string[]): Promise<{ code: number; items: Workload[]; err: string }> {
  const { code, out, err } = await runCli(['plan', ...args, '-o', 'json']);
  return { code, items: code === 0 ? (JSON.parse(out) as { items: Workload[] }).items : [], err };
}

const byName = (items: Workload[], prefix: string) => items.find((w) => w.metadata.name.startsWith(prefix))!;
function hosts(w: Workload): string[] {
  return (w.status?.admission?.podSetAssignments ?? []).flatMap((p) =>
    p.topologyAssignment ? decodeV1beta2(p.topologyAssignment).domains.flatMap((d) => Array(d.count).fill(d.values[0]) as string[]) : [],
  );
}
const message = (w: Workload) => w.status!.conditions!.find((c) => c.type === 'QuotaReserved')!.message ?? '';

describe("plan: examples/volcano-spine-leaf (the seed's example 1)", () => {
  it('hard tier 1 in one leaf, tier 2 in one spine, the too-tight job pending, soft in the tightest domain left', async () => {
    const r = await plan('-f', 'examples/volcano-spine-leaf');
    assert.equal(r.code, 0, r.err);
    assert.deepEqual(hosts(byName(r.items, 'job-leaf-job')), ['node0', 'node1']);
    assert.deepEqual(hosts(byName(r.items, 'job-spine-job')).sort(), ['node4', 'node5', 'node6', 'node7']);
    assert.equal(
      message(byName(r.items, 'job-too-tight')),
      'couldn\'t assign flavors to pod set worker: topology "hypernodes" allows to fit only 2 out of 3 pod(s). Total nodes: 8; excluded: resource "nvidia.com/gpu": 6',
    );
    assert.deepEqual(hosts(byName(r.items, 'job-soft-job')), ['node2', 'node3']);
  });
  it("a HyperNode with two parents pends every job with a network topology, with the peer's message", async () => {
    const f = tmpFile(
      'extra.yaml',
      'apiVersion: topology.volcano.sh/v1alpha1\nkind: HyperNode\nmetadata: {name: s9}\nspec:\n  tier: 2\n  members:\n  - type: HyperNode\n    selector: {exactMatch: {name: s0}}\n',
    );
    const r = await plan('-f', 'examples/volcano-spine-leaf', '-f', f);
    assert.equal(r.code, 0, r.err);
    assert.match(r.err, /HyperNode s0 already has a parent s4, and cannot set another parent s9/);
    for (const w of r.items)
      assert.equal(
        message(w),
        'hyperNodes are not ready for scheduling: HyperNode s0 already has a parent s4, and cannot set another parent s9',
      );
  });
});

describe('plan: Volcano details', () => {
  it('a Volcano Job without networkTopology is placed anywhere, even with no HyperNodes in the input; tier 0 never schedules', async () => {
    const f = tmpFile(
      'vj.yaml',
      `apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: plain, namespace: team-a}
spec:
  minAvailable: 3
  tasks:
  - name: worker
    replicas: 3
    template:
      spec:
        restartPolicy: OnFailure
        containers: [{name: w, image: i, resources: {requests: {nvidia.com/gpu: "8"}}}]
---
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: tier0, namespace: team-a}
spec:
  minAvailable: 1
  networkTopology: {mode: hard, highestTierAllowed: 0}
  tasks:
  - name: worker
    replicas: 1
    template:
      spec:
        restartPolicy: OnFailure
        containers: [{name: w, image: i, resources: {requests: {nvidia.com/gpu: "8"}}}]
`,
    );
    const r = await plan('-f', 'examples/tas-basic/cluster.yaml', '-f', f);
    assert.equal(r.code, 0, r.err);
    assert.equal(hosts(byName(r.items, 'job-plain')).length, 3);
    assert.equal(
      message(byName(r.items, 'job-tier0')),
      "couldn't assign flavors to pod set worker: no HyperNode of tier <= 0: the job cannot be placed",
    );
  });
  it('BalancedPlacement does not lift a hard tier limit', async () => {
    const r = await plan('-f', 'examples/volcano-spine-leaf', '--profile', 'BalancedPlacement');
    assert.equal(r.code, 0, r.err);
    assert.match(message(byName(r.items, 'job-too-tight')), /allows to fit only 2 out of 3 pod\(s\)/);
  });
});

describe("plan: examples/volcano-roce-nvlink (the seed's example 2)", () => {
  it('the HyperJob takes one RoCE network, each child job one NVLink domain; the Kueue Job a tier-1 domain left', async () => {
    const r = await plan('-f', 'examples/volcano-roce-nvlink');
    assert.equal(r.code, 0, r.err);
    assert.deepEqual(hosts(byName(r.items, 'hyperjob-llm-pretrain')), ['node1', 'node2', 'node3', 'node4']);
    assert.deepEqual(hosts(byName(r.items, 'job-eval')), ['node5', 'node6']);
  });
  it('a Topology cannot mix node-label levels and HyperNode tiers', async () => {
    const f = tmpFile(
      'mixed.yaml',
      'apiVersion: kueue.x-k8s.io/v1beta2\nkind: Topology\nmetadata: {name: mixed}\nspec:\n  levels:\n  - nodeLabel: cloud.com/block\n  - nodeLabel: topology.volcano.sh/tier-1\n' +
        '---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {name: mixed}\nspec: {nodeLabels: {cloud.com/block: b1}, topologyName: mixed}\n',
    );
    const r = await plan('-f', 'examples/volcano-roce-nvlink/cluster.yaml', '-f', 'examples/volcano-roce-nvlink/hyperjob.yaml', '-f', f);
    assert.equal(r.code, 2);
    assert.match(r.err, /spec\.levels: a Topology takes its levels either from node labels or from HyperNode tiers/);
  });
});
