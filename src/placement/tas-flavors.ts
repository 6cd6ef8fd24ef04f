// TAS flavors from the objects that define them: one snapshot per ResourceFlavor with a
// `spec.topologyName`, over a label Topology or the HyperNode tree, with every node on it.
// Shared by `plan` (all at one instant) and the scheduler controller (rebuilt when the
// queue configuration changes, then kept current from node and pod events).
//
// 1. each Topology becomes a source: label levels, or HyperNode tiers
//    (`topology.volcano.sh/tier-<N>`, then optionally `kubernetes.io/hostname`);
// 2. each TAS ResourceFlavor becomes a snapshot over its Topology with every node upserted
//    (a flavor whose Topology is missing or unusable is reported, not built);
// 3. with a HyperNode tree, an implicit flavor spanning every node with every tier (for
//    Volcano jobs, which name no flavor) comes last.

import { KueueApiVersion } from '../api/api-versions.ts';
import { HOSTNAME_LABEL } from '../api/keys.ts';
import type { ResourceFlavor, Topology } from '../api/objects.ts';
import { HyperNodeTopologySource, type HyperNodeTree, tierOfLevelKey } from '../topology/hypernode-tree.ts';
import { TopologySnapshot } from '../topology/snapshot.ts';
import { LabelTopologySource, type NodeInfo, type TopologySource } from '../topology/source.ts';
import { PlacementEngine } from './engine.ts';
import type { TasFlavor } from './workload-placement.ts';

/** Name of the flavor (and topology) Volcano jobs use when there are HyperNodes. */
export const IMPLICIT_HYPERNODE_FLAVOR = 'hypernodes';

/** Why a Topology cannot be used: levels mixing labels and tiers, or tiers without HyperNodes. */
export type TopologyProblem = 'mixed-levels' | 'no-hypernodes';

/** The source of a Topology, or why there is none. */
export function topologySourceOf(t: Topology, tree: HyperNodeTree | undefined): TopologySource | TopologyProblem {
  const keys = t.spec.levels.map((l) => l.nodeLabel);
  const tiers = keys.map(tierOfLevelKey);
  if (tiers.every((x) => x === undefined)) return LabelTopologySource.fromTopology(t);
  const body = keys[keys.length - 1] === HOSTNAME_LABEL ? tiers.slice(0, -1) : tiers;
  if (body.some((x) => x === undefined)) return 'mixed-levels';
  if (!tree) return 'no-hypernodes';
  return new HyperNodeTopologySource(t.metadata.name, tree, body as number[]);
}

/** A TAS flavor over `source` with every node of `nodes` upserted. */
export function tasFlavorOf(flavor: ResourceFlavor, source: TopologySource, nodes: Iterable<NodeInfo>, implicit = false): TasFlavor {
  const snapshot = new TopologySnapshot(source, { nodeLabels: flavor.spec.nodeLabels });
  for (const n of nodes) snapshot.upsertNode(n);
  const hn = source instanceof HyperNodeTopologySource ? source.tree : undefined;
  return {
    flavor,
    snapshot,
    engine: new PlacementEngine(snapshot),
    tierOfName: hn ? (name) => hn.tierOfName(name) : undefined,
    leafTier: hn ? (node) => leafTierOf(hn, node) : undefined,
    implicit,
  };
}

/** The implicit flavor over a HyperNode tree (every node, every tier). */
export function implicitHyperNodeFlavor(tree: HyperNodeTree, nodes: Iterable<NodeInfo>): TasFlavor {
  const flavor: ResourceFlavor = {
    apiVersion: KueueApiVersion.V1beta2,
    kind: 'ResourceFlavor',
    metadata: { name: IMPLICIT_HYPERNODE_FLAVOR },
    spec: { topologyName: IMPLICIT_HYPERNODE_FLAVOR },
  };
  return tasFlavorOf(flavor, new HyperNodeTopologySource(IMPLICIT_HYPERNODE_FLAVOR, tree), nodes, true);
}

export type TasFlavorProblem =
  /** `flavors[index]` names a Topology that is not there. */
  | { kind: 'missing-topology'; index: number; topology: string }
  /** `flavors[index]` names a Topology that cannot be used. */
  | { kind: TopologyProblem; index: number; topology: string };

export interface TasFlavorsInput {
  /** Every ResourceFlavor; those without `spec.topologyName` are skipped. */
  flavors: readonly ResourceFlavor[];
  topologies: ReadonlyMap<string, Topology>;
  tree?: HyperNodeTree;
  nodes: readonly NodeInfo[];
}

/** Every TAS flavor, in the order of `flavors`, then the implicit HyperNode flavor; problems in the same order. */
export function buildTasFlavors(input: TasFlavorsInput): { flavors: TasFlavor[]; problems: TasFlavorProblem[] } {
  const flavors: TasFlavor[] = [];
  const problems: TasFlavorProblem[] = [];
  input.flavors.forEach((flavor, index) => {
    const topology = flavor.spec.topologyName;
    if (topology === undefined) return;
    const t = input.topologies.get(topology);
    if (!t) {
      problems.push({ kind: 'missing-topology', index, topology });
      return;
    }
    const source = topologySourceOf(t, input.tree);
    if (typeof source === 'string') problems.push({ kind: source, index, topology });
    else flavors.push(tasFlavorOf(flavor, source, input.nodes));
  });
  if (input.tree) flavors.push(implicitHyperNodeFlavor(input.tree, input.nodes));
  return { flavors, problems };
}

function leafTierOf(tree: HyperNodeTree, node: string): number | undefined {
  const leaf = tree.leafHyperNode(node);
  return leaf === undefined ? undefined : tree.tier(leaf);
}
