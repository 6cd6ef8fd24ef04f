// TAS usage of admitted Workloads on the flavors' snapshots: recorded when a Workload is
// admitted (or read from the input), taken back when it is evicted or finishes. Shared by
// `plan`, the admission cycle and (later) the runtime.

import { InputError, type Where } from '../api/errors.ts';
import type { TopologyAssignment, TopologyAssignmentV1beta1, Workload } from '../api/objects.ts';
import { podRequests, type ResourceAmounts } from '../api/resources.ts';
import type { Assignment } from './assignment.ts';
import { decodeV1beta1, decodeV1beta2 } from './assignment-codec.ts';
import type { TasFlavor } from './workload-placement.ts';

/** The assignment of a PodSetAssignment in either API form. */
export function decodeAssignment(t: TopologyAssignment | TopologyAssignmentV1beta1, where: Where): Assignment {
  return 'domains' in t && Array.isArray(t.domains)
    ? decodeV1beta1(t as TopologyAssignmentV1beta1, where)
    : decodeV1beta2(t as TopologyAssignment, where);
}

/** Key under which a Workload PodSet's usage is recorded on a snapshot. */
export function usageKey(w: Workload, podSet: string): string {
  return `${w.metadata.namespace ?? 'default'}/${w.metadata.name}/${podSet}`;
}

/** Records the TAS usage of an admitted Workload on its flavors' snapshots. */
export function recordWorkloadUsage(flavors: readonly TasFlavor[], w: Workload, where: Where): InputError[] {
  const errors: InputError[] = [];
  for (const [i, psa] of (w.status?.admission?.podSetAssignments ?? []).entries()) {
    if (!psa.topologyAssignment) continue;
    const field = `status.admission.podSetAssignments[${i}]`;
    const flavorName = Object.values(psa.flavors ?? {})[0];
    const tf = flavors.find((f) => f.flavor.metadata.name === flavorName);
    if (!tf) {
      errors.push(
        new InputError({ ...where, field: `${field}.flavors` }, `flavor "${flavorName ?? ''}" is not a TAS ResourceFlavor in the input`),
      );
      continue;
    }
    const ps = w.spec.podSets.find((p) => p.name === psa.name);
    if (!ps) continue;
    let a: Assignment;
    try {
      a = decodeAssignment(psa.topologyAssignment, { ...where, field: `${field}.topologyAssignment` });
    } catch (e) {
      errors.push(e instanceof InputError ? e : new InputError({ ...where, field: `${field}.topologyAssignment` }, (e as Error).message));
      continue;
    }
    recordAssignmentUsage(flavors, tf, usageKey(w, ps.name), a, podRequests(ps.template.spec));
  }
  return errors;
}

/** An assignment's usage on its flavor, and on the same nodes in every other flavor. */
export function recordAssignmentUsage(
  flavors: readonly TasFlavor[],
  owner: TasFlavor,
  key: string,
  a: Assignment,
  perPod: ResourceAmounts,
): void {
  owner.snapshot.addWorkloadUsage(
    key,
    a.domains.map((d) => ({ leafId: owner.snapshot.leafIdOf(d.values), count: d.count })),
    perPod,
  );
  shareWithOtherFlavors(flavors, owner, key, a, perPod);
}

/**
 * Flavors can overlap (the implicit HyperNode flavor spans every node): an assignment on one
 * flavor is usage on the same nodes in every other, recorded there per node. For a leaf of
 * several nodes (a topology whose lowest level is not the hostname) it goes to the leaf's
 * first node.
 */
function shareWithOtherFlavors(flavors: readonly TasFlavor[], owner: TasFlavor, key: string, a: Assignment, perPod: ResourceAmounts): void {
  if (!flavors.some((f) => f !== owner)) return;
  for (const { d, nodeName } of domainNodes(owner.snapshot, a)) {
    const amounts: ResourceAmounts = {};
    for (const r in perPod) amounts[r] = perPod[r]! * d.count;
    for (const other of flavors) if (other !== owner) other.snapshot.addPod(`${key}@${nodeName}`, nodeName, amounts, d.count);
  }
}

/** Takes back what shareWithOtherFlavors and the owner's usage recorded. */
export function forgetWorkloadUsage(flavors: readonly TasFlavor[], owner: TasFlavor, key: string, a: Assignment): void {
  owner.snapshot.removeWorkloadUsage(key);
  // One TAS flavor (the common case) shares with no one: no lookup per domain.
  if (!flavors.some((f) => f !== owner)) return;
  for (const { nodeName } of domainNodes(owner.snapshot, a)) {
    for (const other of flavors) if (other !== owner) other.snapshot.removePod(`${key}@${nodeName}`);
  }
}

/** Each domain of the assignment with the node that stands for it elsewhere: its leaf's first node (domains off the tree or on an empty leaf are skipped). */
function* domainNodes(s: TasFlavor['snapshot'], a: Assignment): Generator<{ d: Assignment['domains'][number]; nodeName: string }> {
  for (const d of a.domains) {
    const leaf = s.leafById(s.leafIdOf(d.values));
    if (leaf === undefined) continue;
    const n = s.leafFirstNode(leaf);
    if (n < 0) continue;
    yield { d, nodeName: s.node(n).name };
  }
}
