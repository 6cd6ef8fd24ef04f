// From loaded objects to what placement needs: one snapshot per TAS ResourceFlavor with
// the usage of bound Pods and of admitted Workloads recorded on it.

import { InputError, type Where } from '../api/errors.ts';
import { KueueAnnotation } from '../api/keys.ts';
import type { ParsedObject } from '../api/manifest.ts';
import { HOSTNAME_LABEL } from '../api/keys.ts';
import type { KObject, Node, Pod, ResourceFlavor, Topology, Workload } from '../api/objects.ts';
import { isTerminal } from '../api/objects.ts';
import type { HyperNode } from '../api/volcano-objects.ts';
import { podRequests } from '../api/resources.ts';
import { hasNetworkTopology, isVolcanoApiVersion } from '../placement/network-topology.ts';
import type { TasFlavor } from '../placement/workload-placement.ts';
import { buildTasFlavors, IMPLICIT_HYPERNODE_FLAVOR } from '../placement/tas-flavors.ts';
import { recordWorkloadUsage } from '../placement/tas-usage.ts';

export { isAdmitted, isFinished } from '../admission/admitted.ts';
import { isAdmitted, isFinished } from '../admission/admitted.ts';
export { decodeAssignment, forgetWorkloadUsage, recordAssignmentUsage, recordWorkloadUsage, usageKey } from '../placement/tas-usage.ts';
import { HyperNodeTree, TIER_LEVEL_PREFIX } from '../topology/hypernode-tree.ts';
import { AllocatableCache, nodeInfoFromNode, type NodeInfo } from '../topology/source.ts';

export interface ClusterInput {
  nodes: { node: Node; where: Where }[];
  hyperNodes: { hyperNode: HyperNode; where: Where }[];
  pods: { pod: Pod; where: Where }[];
  topologies: Map<string, { topology: Topology; where: Where }>;
  flavors: { flavor: ResourceFlavor; where: Where }[];
  workloads: { workload: Workload; where: Where }[];
  /** Everything else, in input order (Jobs, JobSets, LWS...). */
  others: ParsedObject[];
}

export function sortObjects(objects: readonly ParsedObject[]): ClusterInput {
  const input: ClusterInput = { nodes: [], hyperNodes: [], pods: [], topologies: new Map(), flavors: [], workloads: [], others: [] };
  for (const p of objects) {
    const o: KObject = p.object;
    switch (o.kind) {
      case 'Node':
        input.nodes.push({ node: o as Node, where: p.where });
        break;
      case 'Pod':
        input.pods.push({ pod: o as Pod, where: p.where });
        input.others.push(p);
        break;
      case 'HyperNode':
        input.hyperNodes.push({ hyperNode: o as HyperNode, where: p.where });
        break;
      case 'Topology':
        input.topologies.set(o.metadata.name, { topology: o as Topology, where: p.where });
        break;
      case 'ResourceFlavor':
        input.flavors.push({ flavor: o as ResourceFlavor, where: p.where });
        break;
      case 'Workload':
        input.workloads.push({ workload: o as Workload, where: p.where });
        break;
      default:
        input.others.push(p);
    }
  }
  return input;
}

export interface TasCluster {
  flavors: TasFlavor[];
  /** The HyperNode tree, when the input has HyperNodes. */
  hyperNodeTree?: HyperNodeTree;
  nodeInfos: NodeInfo[];
  errors: InputError[];
  /** Things worth telling the user (nodes left out, pods on unknown nodes...). */
  notes: string[];
}

/**
 * Builds one snapshot per TAS flavor (a ResourceFlavor with `spec.topologyName`) and
 * records usage: bound, non-terminal Pods (except pods of Workloads admitted in the
 * input, which count through their assignment) and admitted Workloads' assignments.
 */
export function buildTasCluster(input: ClusterInput, options: { recordAdmitted?: boolean } = {}): TasCluster {
  const errors: InputError[] = [];
  const notes: string[] = [];
  const nodeInfos: NodeInfo[] = [];
  const cache = new AllocatableCache();
  for (const { node, where } of input.nodes) {
    try {
      nodeInfos.push(nodeInfoFromNode(node, cache));
    } catch (e) {
      errors.push(
        new InputError(
          { ...where, field: e instanceof InputError ? e.where.field : undefined },
          e instanceof InputError ? e.detail : (e as Error).message,
        ),
      );
    }
  }
  const notReady = nodeInfos.filter((n) => !n.ready || n.unschedulable).length;
  if (notReady > 0) notes.push(`${notReady} node(s) are NotReady or unschedulable and take no part in placement`);

  // Volcano jobs need a HyperNode topology even when the input has no HyperNodes: the peer
  // then treats the whole cluster as its root (tier 1).
  const volcanoInput = input.others.some(
    (o) => isVolcanoApiVersion(o.object.apiVersion) || (o.object.kind === 'Pod' && hasNetworkTopology(o.object.metadata.annotations)),
  );
  let tree: HyperNodeTree | undefined;
  if (input.hyperNodes.length > 0 || volcanoInput) {
    tree = new HyperNodeTree(
      input.hyperNodes.map((h) => h.hyperNode),
      nodeInfos,
    );
    for (const p of tree.problems) notes.push(`HyperNode ${p.hyperNodes.join(', ')}: ${p.message}`);
    for (const w of tree.warnings) notes.push(w);
    if (!tree.ready)
      notes.push('hyperNodes are not ready for scheduling: jobs with a network topology stay pending until the HyperNodes are fixed');
  }

  const built = buildTasFlavors({
    flavors: input.flavors.map((f) => f.flavor),
    topologies: new Map([...input.topologies].map(([k, v]) => [k, v.topology])),
    tree,
    nodes: nodeInfos,
  });
  const flavors = built.flavors;
  notes.push(...levelLabelNotes(flavors, nodeInfos));
  for (const p of built.problems) {
    const { where } = input.flavors[p.index]!;
    const topoWhere = input.topologies.get(p.topology)?.where;
    if (p.kind === 'missing-topology') {
      errors.push(
        new InputError(
          { ...where, field: 'spec.topologyName' },
          `Topology "${p.topology}" is not in the input; add it, or point the ResourceFlavor at one of: ${[...input.topologies.keys()].join(', ') || '(none)'}`,
        ),
      );
    } else if (p.kind === 'mixed-levels') {
      errors.push(
        new InputError(
          { ...topoWhere, field: 'spec.levels' },
          `a Topology takes its levels either from node labels or from HyperNode tiers (${TIER_LEVEL_PREFIX}<N>, then optionally ${HOSTNAME_LABEL}), not both`,
        ),
      );
    } else {
      errors.push(
        new InputError(
          { ...topoWhere, field: 'spec.levels' },
          `levels ${TIER_LEVEL_PREFIX}<N> come from HyperNodes, and the input has none`,
        ),
      );
    }
  }

  // Pods of admitted Workloads count through the Workload's assignment, not twice.
  const admittedNames = new Set(
    input.workloads
      .filter((w) => isAdmitted(w.workload))
      .map((w) => `${w.workload.metadata.namespace ?? 'default'}/${w.workload.metadata.name}`),
  );
  const known = new Set(nodeInfos.map((n) => n.name));
  let unknownNode = 0;
  for (const { pod, where } of input.pods) {
    if (!pod.spec.nodeName || isTerminal(pod)) continue;
    const ns = pod.metadata.namespace ?? 'default';
    const wl = pod.metadata.annotations?.[KueueAnnotation.Workload];
    if (wl !== undefined && admittedNames.has(`${ns}/${wl}`)) continue;
    if (!known.has(pod.spec.nodeName)) unknownNode++;
    let req;
    try {
      req = podRequests(pod.spec);
    } catch (e) {
      errors.push(
        new InputError(
          { ...where, field: e instanceof InputError ? e.where.field : 'spec' },
          e instanceof InputError ? e.detail : (e as Error).message,
        ),
      );
      continue;
    }
    for (const f of flavors) f.snapshot.addPod(`${ns}/${pod.metadata.name}`, pod.spec.nodeName, req);
  }
  if (unknownNode > 0) notes.push(`${unknownNode} bound pod(s) are on nodes that are not in the input`);

  // With queues, the admission snapshot records admitted Workloads itself (it must be able
  // to take them back when it preempts).
  for (const { workload, where } of options.recordAdmitted === false ? [] : input.workloads) {
    if (!isAdmitted(workload) || isFinished(workload)) continue;
    errors.push(...recordWorkloadUsage(flavors, workload, where));
  }
  return { flavors, hyperNodeTree: tree, nodeInfos, errors, notes };
}

/**
 * What a label Topology silently leaves out: nodes of a flavor missing a level label, and
 * levels no node of the flavor carries (`kubernetes.io/hostname` falls back to nothing
 * either: a node must carry every level's label to enter the tree).
 */
export function levelLabelNotes(flavors: readonly TasFlavor[], nodes: readonly NodeInfo[]): string[] {
  const notes: string[] = [];
  for (const f of flavors) {
    if (f.implicit || f.tierOfName !== undefined) continue;
    const selector = f.flavor.spec.nodeLabels ?? {};
    const mine = nodes.filter((n) => Object.entries(selector).every(([k, v]) => n.labels[k] === v));
    if (mine.length === 0) {
      notes.push(
        `ResourceFlavor ${f.flavor.metadata.name}: no node carries its nodeLabels ${JSON.stringify(selector)}: nothing can be placed on it`,
      );
      continue;
    }
    const levels = f.snapshot.levels;
    const missing = mine.filter((n) => levels.some((l) => n.labels[l] === undefined));
    for (const level of levels) {
      if (mine.every((n) => n.labels[level] === undefined))
        notes.push(
          `Topology ${f.snapshot.name}: no node of ResourceFlavor ${f.flavor.metadata.name} carries the level label "${level}"; levels: ${levels.join(', ')}`,
        );
    }
    if (missing.length > 0) {
      const shown = missing.slice(0, 5).map((n) => `${n.name} (no ${levels.filter((l) => n.labels[l] === undefined).join(', ')})`);
      notes.push(
        `ResourceFlavor ${f.flavor.metadata.name}: ${missing.length} node(s) lack a level label of Topology ${f.snapshot.name} and take no part in placement: ${shown.join(', ')}${missing.length > 5 ? ', ...' : ''}`,
      );
    }
  }
  return notes;
}

export { IMPLICIT_HYPERNODE_FLAVOR };
