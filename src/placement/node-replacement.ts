// Failed-node replacement for one admitted Workload (kueue-tas.md §13): the one procedure
// behind `plan --replace-node` and the scheduler's second pass; both callers only
// translate its answer into their output (a printed Workload, a status write). Several
// failed nodes are repaired together (Kueue evicts on the second one).
//
// 1. resolve the failed Nodes: the user and status.unhealthyNodes name them by
//    `metadata.name`, assignments record their `kubernetes.io/hostname` label value (the
//    two differ on clouds and with custom node names);
// 2. skip: no PodSet is assigned to any of them, or (SkipReassignmentForPodOwnedWorkloads)
//    the Workload is owned by a single Pod and is not a pod group: its assignment is kept;
// 3. with TASFailedNodeReplacement off there is no replacement;
// 4. take the nodes out of every TAS snapshot; per affected PodSet, in order: its own
//    usage out (the others', already replaced ones included, stay), replace.ts
//    replaceNode, its new usage in;
// 5. put the nodes back; on the first failure every PodSet's old usage comes back and the
//    answer is the eviction condition, else the new podSetAssignments.

import { CoreApiVersion } from '../api/api-versions.ts';
import { InputError, type Where } from '../api/errors.ts';
import { HOSTNAME_LABEL, KueueRuntimeKey } from '../api/keys.ts';
import type { Condition, PodSetAssignment, Workload } from '../api/objects.ts';
import { podRequests, type ResourceAmounts } from '../api/resources.ts';
import type { NodeInfo } from '../topology/source.ts';
import type { Assignment } from './assignment.ts';
import { encodeV1beta2 } from './assignment-codec.ts';
import { type FailedNode, replaceNode } from './replace.ts';
import type { FeatureGates } from './request.ts';
import { decodeAssignment, forgetWorkloadUsage, recordAssignmentUsage, usageKey } from './tas-usage.ts';
import { placementRequest, type TasFlavor, type WorkloadPlacementOptions } from './workload-placement.ts';

/** Kueue's condition reason for an eviction after node failures. */
export const NODE_FAILURES = 'NodeFailures';

/** The FailFast eviction message (kueue-tas.md §13). */
export const noReplacementMessage = (nodes: readonly string[]): string =>
  `Workload was evicted as there was no replacement for unhealthy node(s): ${nodes.join(', ')}`;

/** The gates the procedure reads. */
export type ReplacementGates = Pick<
  FeatureGates,
  'TASFailedNodeReplacement' | 'SkipReassignmentForPodOwnedWorkloads' | 'TASAssignmentsEncodingByHostnamePrefix'
>;

/** Where the Workload's TAS usage is recorded: the caller's book of reservations. */
export interface ReplacementUsage {
  /** Takes the recorded TAS usage of one PodSet out of the snapshots. */
  forget(podSet: string, assignment: Assignment): void;
  /** Records one PodSet's TAS usage with `assignment`. */
  record(podSet: string, assignment: Assignment): void;
}

export interface NodeReplacementInput {
  /** An admitted Workload (status.admission with topology assignments). */
  workload: Workload;
  /** Where the Workload came from, for decoding errors. */
  where?: Where;
  /** The failed Nodes' `metadata.name`s (one or more). */
  nodes: readonly string[];
  /**
   * A node's hostname label when the snapshots no longer hold the node (it was deleted);
   * otherwise read from them. The node name when neither knows.
   */
  hostname?: (node: string) => string | undefined;
  /**
   * Whether a hostname the assignment keeps names a node that is still in the cluster but
   * out of the snapshots (NotReady, not failed yet). Such a node is usually the next to be
   * listed unhealthy: the repair waits for it (skip 'not-ready') instead of calling the
   * domain stale, so that nodes failing together are repaired together.
   */
  notReady?: (hostname: string) => boolean;
  flavors: readonly TasFlavor[];
  usage: ReplacementUsage;
  placement: WorkloadPlacementOptions;
  gates: ReplacementGates;
}

export type NodeReplacement =
  /** Nothing to do: the Workload keeps its assignment. */
  | { kind: 'skip'; why: 'not-assigned' | 'pod-owned' | 'not-ready' }
  /** Every PodSet that used the node moved off it; `podSetAssignments` replaces the admission's. */
  | { kind: 'replaced'; podSetAssignments: PodSetAssignment[]; assignments: ReadonlyMap<string, Assignment> }
  /** No replacement: `reason` says why, `condition` is what to write (the Workload is evicted). */
  | { kind: 'failed'; reason: string; condition: Condition };

/** Owned by a single Pod that is not a pod group (SkipReassignmentForPodOwnedWorkloads keeps its assignment). */
export function podOwned(w: Workload): boolean {
  const owners = w.metadata.ownerReferences ?? [];
  return (
    owners.length === 1 &&
    owners[0]!.kind === 'Pod' &&
    owners[0]!.apiVersion === CoreApiVersion.V1 &&
    w.metadata.annotations?.[KueueRuntimeKey.IsGroupWorkload] !== 'true'
  );
}

/** The hostname label of the node named `name` in the first snapshot that holds it. */
export function hostnameOf(flavors: readonly TasFlavor[], name: string): string | undefined {
  for (const tf of flavors) {
    const n = tf.snapshot.nodeIndex(name);
    if (n !== undefined) return tf.snapshot.node(n).labels[HOSTNAME_LABEL];
  }
  return undefined;
}

interface AffectedPodSet {
  index: number;
  psa: PodSetAssignment;
  assignment: Assignment;
  flavor: TasFlavor | undefined;
}

/** Steps 1 to 5 for one Workload. Throws an InputError naming the field on an undecodable assignment. */
export function replaceFailedNode(input: NodeReplacementInput): NodeReplacement {
  const { workload: w, flavors, usage, gates } = input;
  const nodes = [...new Set(input.nodes)];
  const failedNodes: FailedNode[] = nodes.map((name) => ({ name, hostname: hostnameOf(flavors, name) ?? input.hostname?.(name) ?? name }));
  const hostnames = new Set(failedNodes.map((n) => n.hostname));
  const onFailedNode = (d: Assignment['domains'][number]): boolean => hostnames.has(d.values[d.values.length - 1]!);
  const psas = w.status?.admission?.podSetAssignments ?? [];
  const affected: AffectedPodSet[] = [];
  psas.forEach((psa, index) => {
    if (!psa.topologyAssignment) return;
    const assignment = decodeAssignment(psa.topologyAssignment, {
      ...(input.where ?? {}),
      field: `status.admission.podSetAssignments[${index}].topologyAssignment`,
    });
    if (!assignment.domains.some(onFailedNode)) return;
    const flavorName = Object.values(psa.flavors ?? {})[0];
    affected.push({ index, psa, assignment, flavor: flavors.find((f) => f.flavor.metadata.name === flavorName) });
  });
  if (affected.length === 0) return { kind: 'skip', why: 'not-assigned' };
  if (gates.SkipReassignmentForPodOwnedWorkloads && podOwned(w)) return { kind: 'skip', why: 'pod-owned' };

  const failed = (reason: string): NodeReplacement => {
    const listed = (w.status?.unhealthyNodes ?? []).map((n) => n.name);
    return {
      kind: 'failed',
      reason,
      condition: {
        type: 'Evicted',
        status: 'True',
        reason: NODE_FAILURES,
        message: noReplacementMessage(listed.length > 0 ? listed : nodes),
      },
    };
  };
  if (!gates.TASFailedNodeReplacement) return failed(`node ${nodes.join(', ')} failed and TASFailedNodeReplacement is off`);
  if (input.notReady) {
    for (const a of affected) {
      const snapshot = a.flavor?.snapshot;
      const waiting =
        snapshot &&
        a.assignment.domains.some(
          (d) =>
            !onFailedNode(d) &&
            snapshot.leafById(snapshot.leafIdOf(d.values)) === undefined &&
            input.notReady!(d.values[d.values.length - 1]!),
        );
      if (waiting) return { kind: 'skip', why: 'not-ready' };
    }
  }

  // What is recorded per affected PodSet. Usage is forgotten while the node is still in
  // the snapshots (usage shared with other flavors is found through the node's leaf).
  const recorded = new Map<string, Assignment>();
  for (const a of affected) usage.forget(a.psa.name, a.assignment);
  const parked: { flavor: TasFlavor; info: NodeInfo }[] = [];
  for (const tf of flavors) {
    for (const node of nodes) {
      const n = tf.snapshot.nodeIndex(node);
      if (n === undefined) continue;
      parked.push({ flavor: tf, info: tf.snapshot.node(n) });
      tf.snapshot.removeNode(node);
    }
  }
  const replaced = new Map<string, Assignment>();
  let failure: string | undefined;
  try {
    for (const a of affected) {
      const kept: Assignment = { levels: a.assignment.levels, domains: a.assignment.domains.filter((d) => !onFailedNode(d)) };
      usage.record(a.psa.name, kept);
      recorded.set(a.psa.name, kept);
    }
    for (const a of affected) {
      const spec = w.spec.podSets.find((p) => p.name === a.psa.name);
      if (!a.flavor || !spec) {
        failure = `flavor "${Object.values(a.psa.flavors ?? {})[0] ?? ''}" of PodSet ${a.psa.name} is not a TAS flavor${spec ? '' : ', or the PodSet is not in spec.podSets'}`;
        break;
      }
      const perPod: ResourceAmounts = podRequests(spec.template.spec);
      const req = { ...placementRequest({ workers: spec }, a.flavor.flavor, perPod), count: a.psa.count ?? spec.count };
      usage.forget(a.psa.name, recorded.get(a.psa.name)!);
      const r = replaceNode(a.flavor.engine, req, a.assignment, failedNodes, input.placement);
      const now = r.ok ? r.workers : recorded.get(a.psa.name)!;
      usage.record(a.psa.name, now);
      recorded.set(a.psa.name, now);
      if (!r.ok) {
        failure = r.reason;
        break;
      }
      replaced.set(a.psa.name, r.workers);
    }
  } finally {
    for (const p of parked) p.flavor.snapshot.upsertNode(p.info);
    // Back to the old assignments on failure (the Workload is evicted with what it held);
    // a replaced PodSet's new usage was recorded without the node and stays.
    for (const a of affected) {
      const now = recorded.get(a.psa.name);
      if (failure === undefined && now !== undefined && replaced.has(a.psa.name)) continue;
      if (now !== undefined) usage.forget(a.psa.name, now);
      usage.record(a.psa.name, a.assignment);
    }
  }
  if (failure !== undefined) return failed(failure);
  const podSetAssignments = psas.map((psa) => {
    const a = replaced.get(psa.name);
    return a
      ? { ...psa, topologyAssignment: encodeV1beta2(a, { encodingByHostnamePrefix: gates.TASAssignmentsEncodingByHostnamePrefix }) }
      : psa;
  });
  return { kind: 'replaced', podSetAssignments, assignments: replaced };
}

/** The usage book of `plan`: each PodSet's usage recorded under usageKey on the flavors' snapshots. */
export function snapshotUsage(flavors: readonly TasFlavor[], w: Workload): ReplacementUsage {
  const flavorOf = (podSet: string): TasFlavor | undefined => {
    const psa = w.status?.admission?.podSetAssignments.find((p) => p.name === podSet);
    const name = Object.values(psa?.flavors ?? {})[0];
    return flavors.find((f) => f.flavor.metadata.name === name);
  };
  return {
    forget(podSet, assignment) {
      const tf = flavorOf(podSet);
      if (tf) forgetWorkloadUsage(flavors, tf, usageKey(w, podSet), assignment);
    },
    record(podSet, assignment) {
      const tf = flavorOf(podSet);
      const spec = w.spec.podSets.find((p) => p.name === podSet);
      if (tf && spec) recordAssignmentUsage(flavors, tf, usageKey(w, podSet), assignment, podRequests(spec.template.spec));
    },
  };
}

/** An InputError for a `--replace-node` (or unhealthy node) name that no Node in the input has. */
export function unknownNodeError(node: string, known: readonly string[]): InputError {
  const list =
    known.length === 0
      ? 'there is no Node in the input'
      : `Nodes in the input: ${[...known].sort().slice(0, 20).join(', ')}${known.length > 20 ? ', ...' : ''}`;
  return new InputError({ field: '--replace-node' }, `node "${node}" is not in the input (a Node's metadata.name); ${list}`);
}
