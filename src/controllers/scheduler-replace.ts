// The scheduler's second pass for a failed node (kueue-tas.md §13, TASFailedNodeReplacement
// with FailFast): an admitted Workload with one node in status.unhealthyNodes gets a new
// topology assignment that moves only that node's pods, or is evicted when there is none.
//
// 1. skip: the node is in none of its assignments, or it is owned by one Pod and is not
//    a pod group (SkipReassignmentForPodOwnedWorkloads: the assignment is kept);
// 2. take the Workload's own reservation and the failed node (when still listed) out of
//    the snapshot;
// 3. per affected PodSet, in order: with the other PodSets' usage (already replaced ones
//    included) back in the snapshot, placement/replace.ts replaceNode;
// 4. put the node back and record the new reservation, or the old one on failure.

import { CoreApiVersion } from '../api/api-versions.ts';
import { KueueRuntimeKey } from '../api/keys.ts';
import type { PodSetAssignment, Workload } from '../api/objects.ts';
import { AdmissionSnapshot, type AdmittedWorkload, type PodSetAdmission } from '../admission/snapshot.ts';
import { encodeV1beta2 } from '../placement/assignment-codec.ts';
import { replaceNode } from '../placement/replace.ts';
import { placementRequest, type WorkloadPlacementOptions } from '../placement/workload-placement.ts';
import type { NodeInfo } from '../topology/source.ts';

export type Replacement =
  | { kind: 'skip' }
  | { kind: 'replaced'; admitted: AdmittedWorkload; podSetAssignments: PodSetAssignment[] }
  | { kind: 'evict'; message: string; reason: string };

/** The FailFast eviction message (kueue-tas.md §13). */
export const noReplacementMessage = (nodes: readonly string[]) => `Workload was evicted as there was no replacement for unhealthy node(s): ${nodes.join(', ')}`;

const usesNode = (ps: PodSetAdmission, node: string) => ps.assignment?.domains.some((d) => d.values[d.values.length - 1] === node) === true;

/** Owned by a single Pod that is not a pod group: its assignment is kept. */
export function podOwned(w: Workload): boolean {
  const owners = w.metadata.ownerReferences ?? [];
  return owners.length === 1 && owners[0]!.kind === 'Pod' && owners[0]!.apiVersion === CoreApiVersion.V1 && w.metadata.annotations?.[KueueRuntimeKey.IsGroupWorkload] !== 'true';
}

export function replaceFailedNode(snap: AdmissionSnapshot, key: string, node: string, placement: WorkloadPlacementOptions, encodingByHostnamePrefix: boolean): Replacement {
  const current = snap.admitted.get(key);
  if (!current) return { kind: 'skip' };
  const w = current.workload;
  const affected = current.podSets.filter((ps) => usesNode(ps, node));
  if (affected.length === 0 || podOwned(w)) return { kind: 'skip' };

  snap.removeAdmitted(key);
  const parked: { snapshot: (typeof snap.tasList)[number]['snapshot']; info: NodeInfo }[] = [];
  for (const tf of snap.tasList) {
    const n = tf.snapshot.nodeIndex(node);
    if (n === undefined) continue;
    parked.push({ snapshot: tf.snapshot, info: tf.snapshot.node(n) });
    tf.snapshot.removeNode(node);
  }
  let podSets = [...current.podSets];
  let failure: string | undefined;
  try {
    for (const ps of affected) {
      const others = podSets.filter((p) => p.name !== ps.name);
      snap.addAdmitted({ ...current, podSets: others, usage: AdmissionSnapshot.usageOf(others) });
      try {
        const tf = ps.tasFlavor !== undefined ? snap.tas.get(ps.tasFlavor) : undefined;
        const spec = w.spec.podSets.find((p) => p.name === ps.name);
        if (!tf || !spec) {
          failure = `flavor "${ps.tasFlavor ?? ''}" of PodSet ${ps.name} is not a TAS flavor any more`;
          break;
        }
        const req = { ...placementRequest({ workers: spec }, tf.flavor, ps.perPod), count: ps.count };
        const r = replaceNode(tf.engine, req, ps.assignment!, node, placement);
        if (!r.ok) {
          failure = r.reason;
          break;
        }
        podSets = podSets.map((p) => (p.name === ps.name ? { ...p, assignment: r.workers } : p));
      } finally {
        snap.removeAdmitted(key);
      }
    }
  } finally {
    for (const p of parked) p.snapshot.upsertNode(p.info);
  }
  if (failure !== undefined) {
    snap.addAdmitted(current);
    return { kind: 'evict', reason: 'NodeFailures', message: noReplacementMessage((w.status?.unhealthyNodes ?? [{ name: node }]).map((n) => n.name)) };
  }
  const admitted: AdmittedWorkload = { ...current, podSets };
  snap.addAdmitted(admitted);
  const byName = new Map(podSets.map((p) => [p.name, p]));
  const podSetAssignments = (w.status!.admission!.podSetAssignments ?? []).map((psa) => {
    const p = byName.get(psa.name);
    if (!p?.assignment || !affected.some((a) => a.name === psa.name)) return psa;
    return { ...psa, topologyAssignment: encodeV1beta2(p.assignment, { encodingByHostnamePrefix }) };
  });
  return { kind: 'replaced', admitted, podSetAssignments };
}
