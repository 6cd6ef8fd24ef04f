// The TopologySource conformance suite over HyperNodes (Volcano's tiers): blocks are tier-2
// HyperNodes of rack HyperNodes, racks tier-1 HyperNodes of their nodes by exact name.
import type { HyperNode } from '../api/volcano-objects.ts';
import { hyperNode, node } from '../testing/builders.ts';
import { HyperNodeTopologySource, HyperNodeTree, tierLevelKey } from '../topology/hypernode-tree.ts';
import { TopologySnapshot } from '../topology/snapshot.ts';
import { nodeInfoFromNode, type NodeInfo } from '../topology/source.ts';
import { type HostSpec, runTopologySourceCases, TOPOLOGY_NAME, type TreeSpec } from './topology-source.case.test.ts';

const hostNode = (h: HostSpec): NodeInfo => {
  const n = node(h.name).cpu(h.cpu);
  for (const t of h.taints ?? []) n.taint(t);
  return nodeInfoFromNode(n.build());
};

runTopologySourceCases({
  name: 'HyperNodes (HyperNodeTopologySource)',
  build(tree: TreeSpec, opts = {}) {
    const hyperNodes: HyperNode[] = [];
    const infos: NodeInfo[] = [];
    for (const b of tree.blocks) {
      for (const r of b.racks) {
        hyperNodes.push(
          hyperNode(r.name)
            .tier(1)
            .nodes(...r.hosts.map((h) => h.name))
            .build(),
        );
        infos.push(...r.hosts.map(hostNode));
      }
      hyperNodes.push(
        hyperNode(b.name)
          .tier(2)
          .hyperNodes(...b.racks.map((r) => r.name))
          .build(),
      );
    }
    if (opts.orphan) infos.push(hostNode(opts.orphan));
    const snapshot = new TopologySnapshot(new HyperNodeTopologySource(TOPOLOGY_NAME, new HyperNodeTree(hyperNodes, infos)));
    for (const i of infos) snapshot.upsertNode(i);
    return { snapshot, block: tierLevelKey(2), rack: tierLevelKey(1) };
  },
  unsupported: {
    'racks as leaves (no hostname level): the nodes of a rack share one leaf, capacity summed':
      'the levels of a HyperNode topology always end with kubernetes.io/hostname (HyperNodeTopologySource): every node is its own leaf',
    'a node with no place at a level is left out of the tree':
      'Volcano keeps a node that no HyperNode lists: it stands in as its own domain at every tier (HyperNodeTopologySource.leafPath), so it is never left out',
  },
});
