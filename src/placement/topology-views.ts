// Topology views: where every node sits, per TAS flavor, for pictures of the data centre
// (the dashboard's heat-map, the report viewer's placement). Unlike the snapshot, a view
// keeps the nodes a placement leaves out (NotReady, cordoned): a picture marks them
// instead of hiding them. The paths come from the same TopologySource the engine uses.
//
// 1. one view per TAS ResourceFlavor whose Topology can be used (label levels or HyperNode
//    tiers), over the nodes carrying the flavor's nodeLabels;
// 2. with HyperNodes, the implicit flavor's view (every tier) last;
// 3. with neither, one view of bare hosts (level kubernetes.io/hostname), so every cluster
//    has a picture.

import { HOSTNAME_LABEL } from '../api/keys.ts';
import type { ResourceFlavor, Topology } from '../api/objects.ts';
import type { HyperNode } from '../api/volcano-objects.ts';
import { HyperNodeTopologySource, HyperNodeTree } from '../topology/hypernode-tree.ts';
import type { NodeInfo, TopologySource } from '../topology/source.ts';
import { IMPLICIT_HYPERNODE_FLAVOR, topologySourceOf } from './tas-flavors.ts';

export interface TopologyView {
  /** The Topology's name (the implicit HyperNode flavor's, or `hosts` for the fallback). */
  name: string;
  /** The ResourceFlavor, or null for the fallback view. */
  flavor: string | null;
  source: 'labels' | 'hypernodes' | 'hosts';
  /** Level keys, outermost first. */
  levels: string[];
  /** Node name -> its values per level; nodes without a place in this view are absent. */
  paths: Map<string, string[]>;
}

export interface TopologyViewsInput {
  flavors: readonly ResourceFlavor[];
  topologies: readonly Topology[];
  hyperNodes: readonly HyperNode[];
  nodes: readonly NodeInfo[];
}

const byName = (a: { metadata: { name: string } }, b: { metadata: { name: string } }) =>
  a.metadata.name < b.metadata.name ? -1 : a.metadata.name > b.metadata.name ? 1 : 0;

function carries(node: NodeInfo, labels: Record<string, string> | undefined): boolean {
  for (const k in labels ?? {}) if (node.labels[k] !== labels![k]) return false;
  return true;
}

function viewOf(
  source: TopologySource,
  flavor: string | null,
  kind: TopologyView['source'],
  nodes: readonly NodeInfo[],
  nodeLabels?: Record<string, string>,
): TopologyView {
  const paths = new Map<string, string[]>();
  for (const n of nodes) {
    if (!carries(n, nodeLabels)) continue;
    const p = source.leafPath(n);
    if (p !== undefined) paths.set(n.name, p);
  }
  return { name: source.name, flavor, source: kind, levels: [...source.levels], paths };
}

/** Every view of the cluster, in flavor-name order, the HyperNode view last (see the header). */
export function topologyViews(input: TopologyViewsInput): TopologyView[] {
  const tree = input.hyperNodes.length > 0 ? new HyperNodeTree(input.hyperNodes, input.nodes) : undefined;
  const topologies = new Map(input.topologies.map((t) => [t.metadata.name, t]));
  const views: TopologyView[] = [];
  for (const f of [...input.flavors].sort(byName)) {
    const t = f.spec.topologyName === undefined ? undefined : topologies.get(f.spec.topologyName);
    if (!t) continue;
    const source = topologySourceOf(t, tree);
    if (typeof source === 'string') continue;
    views.push(
      viewOf(source, f.metadata.name, source instanceof HyperNodeTopologySource ? 'hypernodes' : 'labels', input.nodes, f.spec.nodeLabels),
    );
  }
  if (tree)
    views.push(viewOf(new HyperNodeTopologySource(IMPLICIT_HYPERNODE_FLAVOR, tree), IMPLICIT_HYPERNODE_FLAVOR, 'hypernodes', input.nodes));
  if (views.length === 0) {
    const hosts: TopologySource = { name: 'hosts', levels: [HOSTNAME_LABEL], leafPath: (n) => [n.labels[HOSTNAME_LABEL] ?? n.name] };
    views.push(viewOf(hosts, null, 'hosts', input.nodes));
  }
  return views;
}
