// The TopologySource conformance suite over node labels (Kueue's Topology levels).
import { HOSTNAME_LABEL } from '../api/keys.ts';
import { BLOCK, node, RACK } from '../testing/builders.ts';
import { TopologySnapshot } from '../topology/snapshot.ts';
import { LabelTopologySource, nodeInfoFromNode } from '../topology/source.ts';
import { type HostSpec, runTopologySourceCases, TOPOLOGY_NAME, type TreeSpec } from './topology-source.case.test.ts';

const hostNode = (h: HostSpec, labels: Record<string, string>) => {
  const n = node(h.name).labels(labels).cpu(h.cpu);
  for (const t of h.taints ?? []) n.taint(t);
  return nodeInfoFromNode(n.build());
};

runTopologySourceCases({
  name: 'node labels (LabelTopologySource)',
  build(tree: TreeSpec, opts = {}) {
    const levels = opts.hostLevel === false ? [BLOCK, RACK] : [BLOCK, RACK, HOSTNAME_LABEL];
    const snapshot = new TopologySnapshot(new LabelTopologySource(TOPOLOGY_NAME, levels));
    for (const b of tree.blocks)
      for (const r of b.racks) for (const h of r.hosts) snapshot.upsertNode(hostNode(h, { [BLOCK]: b.name, [RACK]: r.name }));
    // No rack label: no place at that level.
    if (opts.orphan) snapshot.upsertNode(hostNode(opts.orphan, { [BLOCK]: tree.blocks[0]!.name }));
    return { snapshot, block: BLOCK, rack: RACK };
  },
});
