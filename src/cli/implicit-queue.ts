// The implicit queue: what `plan` does without ClusterQueues (every Workload and job placed
// in input order against the capacity of the TAS flavors), written as the Kueue objects the
// embedded cluster needs to do the same in `simulate`.
//
// 1. nothing when the input has a ClusterQueue (its queues rule) or no TAS flavor;
// 2. one ClusterQueue (BestEffortFIFO, every namespace) whose quota per TAS flavor is the
//    whole allocatable of the nodes: topology, not quota, decides what fits, as in `plan`;
// 3. in each namespace with work, a LocalQueue `default` (jobs and pods without a
//    queue-name label get it, as `plan` manages them) and one per queue name the input uses.

import { KueueApiVersion } from '../api/api-versions.ts';
import { type Where } from '../api/errors.ts';
import { KueueLabel } from '../api/keys.ts';
import type { ParsedObject } from '../api/manifest.ts';
import type { KObject, Node, ResourceFlavor } from '../api/objects.ts';
import { addAmounts, formatResourceAmount, type ResourceAmounts } from '../api/resources.ts';
import { DEFAULT_LOCAL_QUEUE } from '../controllers/job-webhook.ts';
import { CLUSTER_KINDS } from '../cluster/embedded.ts';
import { hasNetworkTopology, isVolcanoApiVersion } from '../placement/network-topology.ts';
import { IMPLICIT_HYPERNODE_FLAVOR } from '../placement/tas-flavors.ts';
import { AllocatableCache, nodeInfoFromNode } from '../topology/source.ts';

export const IMPLICIT_CLUSTER_QUEUE = 'topoqueue-implicit';
const IMPLICIT_FLAVOR_LABEL = 'topoqueue.io/implicit-flavor';

const WHERE: Where = { object: `ClusterQueue/${IMPLICIT_CLUSTER_QUEUE}`, field: '(implicit: the input has no ClusterQueue)' };

/** The implicit ClusterQueue and LocalQueues for `objects`, or none (see the header). */
export function implicitQueueObjects(objects: readonly ParsedObject[]): ParsedObject[] {
  if (objects.some((o) => o.object.kind === 'ClusterQueue')) return [];
  const flavors = objects
    .filter((o) => o.object.kind === 'ResourceFlavor' && (o.object as ResourceFlavor).spec?.topologyName !== undefined)
    .map((o) => o.object.metadata.name);
  // Volcano jobs (and pods with a network topology) go to the HyperNode tree, whole cluster
  // as tier 1 without HyperNodes: the scheduler's implicit flavor, first for them as in plan.
  const volcano = objects.some(
    (o) =>
      o.object.kind === 'HyperNode' ||
      isVolcanoApiVersion(o.object.apiVersion) ||
      (o.object.kind === 'Pod' && hasNetworkTopology(o.object.metadata.annotations)),
  );
  const hyperNodeObjects: ParsedObject[] = [];
  if (volcano) {
    // The scheduler's implicit HyperNode flavor (every node, every tier) under its name; the
    // object makes the ClusterQueue's flavor exist. Kueue wants nodeLabels with a
    // topologyName: a label of topoqueue's own, which withImplicitQueue puts on every node.
    hyperNodeObjects.push({
      object: {
        apiVersion: KueueApiVersion.V1beta2,
        kind: 'ResourceFlavor',
        metadata: { name: IMPLICIT_HYPERNODE_FLAVOR },
        spec: { topologyName: IMPLICIT_HYPERNODE_FLAVOR, nodeLabels: { [IMPLICIT_FLAVOR_LABEL]: IMPLICIT_HYPERNODE_FLAVOR } },
      } as KObject,
      where: { ...WHERE, object: `ResourceFlavor/${IMPLICIT_HYPERNODE_FLAVOR}` },
    });
    flavors.unshift(IMPLICIT_HYPERNODE_FLAVOR);
  }
  if (flavors.length === 0) return [];

  let total: ResourceAmounts = {};
  const cache = new AllocatableCache();
  for (const o of objects) {
    if (o.object.kind !== 'Node') continue;
    try {
      total = addAmounts(total, nodeInfoFromNode(o.object as Node, cache).allocatable);
    } catch {
      // A node with a bad quantity is refused and reported by the input check.
    }
  }
  const resources = Object.keys(total)
    .filter((r) => total[r]! > 0)
    .sort();
  if (resources.length === 0) return [];
  const clusterQueue = {
    apiVersion: KueueApiVersion.V1beta2,
    kind: 'ClusterQueue',
    metadata: { name: IMPLICIT_CLUSTER_QUEUE },
    spec: {
      namespaceSelector: {},
      queueingStrategy: 'BestEffortFIFO',
      resourceGroups: [
        {
          coveredResources: resources,
          flavors: flavors.map((name) => ({
            name,
            resources: resources.map((r) => ({ name: r, nominalQuota: formatResourceAmount(r, total[r]!) })),
          })),
        },
      ],
    },
  };

  const queues = new Map<string, Set<string>>();
  for (const { object } of objects) {
    if ((CLUSTER_KINDS as readonly string[]).includes(object.kind) || object.kind === 'SimulationEvent') continue;
    const ns = object.metadata.namespace ?? 'default';
    const names = queues.get(ns) ?? new Set([DEFAULT_LOCAL_QUEUE]);
    const q = object.metadata.labels?.[KueueLabel.QueueName];
    if (q !== undefined && q !== '') names.add(q);
    queues.set(ns, names);
  }
  const existing = new Set(
    objects
      .filter((o) => o.object.kind === 'LocalQueue')
      .map((o) => `${o.object.metadata.namespace ?? 'default'}/${o.object.metadata.name}`),
  );
  const localQueues: ParsedObject[] = [];
  for (const ns of [...queues.keys()].sort()) {
    for (const name of [...queues.get(ns)!].sort()) {
      if (existing.has(`${ns}/${name}`)) continue;
      localQueues.push({
        object: {
          apiVersion: KueueApiVersion.V1beta2,
          kind: 'LocalQueue',
          metadata: { name, namespace: ns },
          spec: { clusterQueue: IMPLICIT_CLUSTER_QUEUE },
        } as KObject,
        where: { ...WHERE, object: `LocalQueue/${ns}/${name}` },
      });
    }
  }
  return [...hyperNodeObjects, { object: clusterQueue as KObject, where: WHERE }, ...localQueues];
}

/**
 * `objects` with the implicit queue (see the header) added; with the HyperNode flavor, every
 * Node carries its label (admission puts the flavor's nodeLabels on the pods' selector).
 */
export function withImplicitQueue(objects: readonly ParsedObject[]): { objects: ParsedObject[]; implicit: boolean } {
  const added = implicitQueueObjects(objects);
  if (added.length === 0) return { objects: [...objects], implicit: false };
  const hyperNodes = added.some((o) => o.object.kind === 'ResourceFlavor');
  const nodes = objects.map((o) => {
    if (!hyperNodes || o.object.kind !== 'Node') return o;
    const node = structuredClone(o.object);
    node.metadata.labels = { ...node.metadata.labels, [IMPLICIT_FLAVOR_LABEL]: IMPLICIT_HYPERNODE_FLAVOR };
    return { object: node, where: o.where };
  });
  return { objects: [...nodes, ...added], implicit: true };
}
