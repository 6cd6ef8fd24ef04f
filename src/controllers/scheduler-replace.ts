// The scheduler's second pass for a failed node (kueue-tas.md §13, TASFailedNodeReplacement
// with FailFast): an admitted Workload with nodes in status.unhealthyNodes gets a new
// topology assignment that moves only those nodes' pods, or is evicted when there is none.
// The procedure is placement/node-replacement.ts (the one `plan --replace-node` runs);
// this module only lends it the admission snapshot as its usage book and translates the
// answer into the reservation to record.

import type { PodSetAssignment } from '../api/objects.ts';
import type { AdmissionSnapshot, AdmittedWorkload } from '../admission/snapshot.ts';
import type { Assignment } from '../placement/assignment.ts';
import { replaceFailedNode as replaceProcedure, type ReplacementGates, type ReplacementUsage } from '../placement/node-replacement.ts';
import type { WorkloadPlacementOptions } from '../placement/workload-placement.ts';

export type Replacement =
  | { kind: 'skip' }
  | { kind: 'replaced'; admitted: AdmittedWorkload; podSetAssignments: PodSetAssignment[] }
  | { kind: 'evict'; message: string; reason: string; detail: string };

/**
 * The reservation `current` as the procedure's usage book: a PodSet's TAS usage is
 * forgotten or recorded by re-recording the reservation with that PodSet's assignment
 * changed (quota usage does not move).
 */
function reservationUsage(
  snap: AdmissionSnapshot,
  current: AdmittedWorkload,
): ReplacementUsage & { podSets(): AdmittedWorkload['podSets'] } {
  const tas = new Map<string, Assignment | undefined>(current.podSets.map((p) => [p.name, p.assignment]));
  const podSets = () => current.podSets.map((p) => (tas.get(p.name) === p.assignment ? p : { ...p, assignment: tas.get(p.name) }));
  const set = (podSet: string, a: Assignment | undefined) => {
    tas.set(podSet, a);
    snap.addAdmitted({ ...current, podSets: podSets() });
  };
  return { forget: (podSet) => set(podSet, undefined), record: set, podSets };
}

/**
 * The second pass for Workload `key` and its failed Nodes `nodes` (by name); `hostname`
 * gives a node's hostname label when the snapshots no longer hold the node.
 */
export function replaceFailedNodes(
  snap: AdmissionSnapshot,
  key: string,
  nodes: readonly string[],
  placement: WorkloadPlacementOptions,
  gates: ReplacementGates,
  hostname?: (node: string) => string | undefined,
  notReady?: (hostname: string) => boolean,
): Replacement {
  const current = snap.admitted.get(key);
  if (!current) return { kind: 'skip' };
  const usage = reservationUsage(snap, current);
  let r;
  try {
    r = replaceProcedure({ workload: current.workload, nodes, hostname, notReady, flavors: snap.tasList, usage, placement, gates });
  } finally {
    if (snap.admitted.get(key) !== current && !(r?.kind === 'replaced')) snap.addAdmitted(current);
  }
  if (r.kind === 'skip') return { kind: 'skip' };
  if (r.kind === 'failed') return { kind: 'evict', reason: r.condition.reason!, message: r.condition.message!, detail: r.reason };
  const admitted: AdmittedWorkload = { ...current, podSets: usage.podSets() };
  snap.addAdmitted(admitted);
  return { kind: 'replaced', admitted, podSetAssignments: r.podSetAssignments };
}
