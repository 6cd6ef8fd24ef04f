import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { KueueApiVersion } from '../api/api-versions.ts';
import type { ResourceFlavor, Workload } from '../api/objects.ts';
import { BLOCK, HOST, node, RACK } from '../testing/builders.ts';
import { LabelTopologySource, nodeInfoFromNode } from '../topology/source.ts';
import { explainTopology, renderExplanation, withPendingReason } from './explain.ts';
import { tasFlavorOf } from './tas-flavors.ts';

const flavor: ResourceFlavor = {
  apiVersion: KueueApiVersion.V1beta2,
  kind: 'ResourceFlavor',
  metadata: { name: 'gpu' },
  spec: { topologyName: 'default' },
};

function workload(count: number, topologyRequest?: Record<string, string>): Workload {
  return {
    apiVersion: KueueApiVersion.V1beta2,
    kind: 'Workload',
    metadata: { name: 'train', namespace: 'ns' },
    spec: {
      podSets: [
        {
          name: 'main',
          count,
          topologyRequest,
          template: { spec: { containers: [{ name: 'c', resources: { requests: { 'nvidia.com/gpu': '8' } } }] } },
        },
      ],
    },
  } as unknown as Workload;
}

// One block of 2 racks x 4 hosts of 8 GPUs: r1-h1 is tainted, r2-h1 is NotReady.
function cluster() {
  const nodes = ['r1', 'r2'].flatMap((r) =>
    [1, 2, 3, 4].map((h) => {
      const b = node(`${r}-h${h}`)
        .labels({ [BLOCK]: 'b1', [RACK]: r })
        .gpu(8);
      if (r === 'r1' && h === 1) b.taint({ key: 'maintenance', value: 'true', effect: 'NoSchedule' });
      if (r === 'r2' && h === 1) b.notReady();
      return b.build();
    }),
  );
  return tasFlavorOf(
    flavor,
    new LabelTopologySource('default', [BLOCK, RACK, HOST]),
    nodes.map((n) => nodeInfoFromNode(n)),
  );
}

describe('explain', () => {
  it('counts per level what the best domain holds and what excludes the nodes, and says the required level stops it', () => {
    const e = explainTopology(workload(6, { required: RACK }), [cluster()]);
    assert.deepEqual(e.stoppedBy, ['topology']);
    const p = e.podSets[0]!;
    assert.equal(p.nodes, 8);
    assert.deepEqual(p.excluded, { 'not ready or unschedulable': 1, 'untolerated taint maintenance=true:NoSchedule': 1 });
    assert.deepEqual(
      p.levels.map((l) => [l.level, l.fit, l.domain, l.excluded]),
      [
        [HOST, 1, 'r1-h2', {}],
        [RACK, 3, 'b1/r1', { 'untolerated taint maintenance=true:NoSchedule': 1 }],
        [BLOCK, 6, 'b1', { 'not ready or unschedulable': 1, 'untolerated taint maintenance=true:NoSchedule': 1 }],
      ],
    );
    assert.equal(p.lowestFit, BLOCK);
    assert.match(p.topologyStop!, /allows to fit only 3 out of 6 pod\(s\)/);
    const text = renderExplanation(e);
    assert.match(text, /^ns\/train: stopped by topology\n/);
    assert.match(text, /rack: {2}3 of 6 fit in rack b1\/r1 \(excluded there: untolerated taint maintenance=true:NoSchedule 1\)/);
    assert.match(text, /block: 6 of 6 fit in block b1/);
    assert.match(text, /the lowest level one domain of which holds them all is block/);
  });

  it('a request that fits as written is not stopped by the topology', () => {
    const e = explainTopology(workload(6, { required: BLOCK }), [cluster()]);
    assert.deepEqual(e.stoppedBy, []);
    assert.match(renderExplanation(e), /stopped by nothing: it fits now[\s\S]*topology: fits as requested/);
  });

  it('folds in the pending reason: quota alone, quota and topology, or something else', () => {
    const fits = explainTopology(workload(6, { required: BLOCK }), [cluster()]);
    const quota = withPendingReason(fits, 'WaitingForQuota', 'insufficient unused quota for nvidia.com/gpu in flavor gpu, 8 more needed');
    assert.deepEqual(quota.stoppedBy, ['quota']);
    assert.match(renderExplanation(quota), /stopped by quota\n {2}quota: insufficient unused quota/);
    const both = withPendingReason(explainTopology(workload(6, { required: RACK }), [cluster()]), 'WaitingForQuota', 'no quota');
    assert.deepEqual(both.stoppedBy, ['quota', 'topology']);
    assert.match(renderExplanation(both), /stopped by quota and topology/);
    const topo = withPendingReason(explainTopology(workload(6, { required: RACK }), [cluster()]), 'TopologyPlacementFailed', 'x');
    assert.deepEqual(topo.stoppedBy, ['topology']);
    const gang = withPendingReason(fits, 'GangNotReady', 'gang ns/g has 1 of its minimum 2 pods');
    assert.deepEqual(gang.stoppedBy, []);
    assert.match(renderExplanation(gang), /stopped by neither quota nor topology on its own\n {2}waits for: GangNotReady: gang ns\/g/);
  });

  it('a Workload of Pods names its pods, since its PodSets are named by role hash', () => {
    const w = workload(2, { required: BLOCK });
    w.spec.podSets[0]!.name = '199f7c7c';
    w.metadata.ownerReferences = ['p-0', 'p-1'].map((name) => ({ apiVersion: 'v1', kind: 'Pod', name, uid: name }));
    const e = explainTopology(w, [cluster()]);
    assert.deepEqual(e.pods, ['p-0', 'p-1']);
    assert.match(renderExplanation(e), /^ns\/train: stopped by nothing: it fits now\n {2}pods: p-0, p-1\n {2}pod set 199f7c7c: 2 pods/);
  });

  it('a PodSet no TAS flavor suits says why', () => {
    const e = explainTopology(workload(2, { required: 'cloud.com/zone' }), [cluster()]);
    assert.deepEqual(e.stoppedBy, ['topology']);
    assert.equal(e.podSets[0]!.flavor, null);
    assert.match(renderExplanation(e), /no TAS flavor suits it: Flavor "gpu" does not contain the requested level/);
  });
});
