// A Workload's reservation as the snapshot holds it, read back from its status: what
// `plan` finds admitted in its input, and what the scheduler controller finds admitted in
// the store (after a restart, or written by someone else).
//
// Per PodSetAssignment: the PodSet's per-pod requests, the admitted count, the recorded
// resourceUsage (else requests x count), the flavors, and the decoded topology
// assignment on the PodSet's (single) TAS flavor.

import { InputError, type Where } from '../api/errors.ts';
import type { Workload } from '../api/objects.ts';
import { parseResourceList, podRequests } from '../api/resources.ts';
import { parseTime } from '../api/time.ts';
import { decodeAssignment } from '../placement/tas-usage.ts';
import { findCondition, WorkloadCondition } from './conditions.ts';
import { PendingReason } from './flavor-assigner.ts';
import { AdmissionSnapshot, type AdmittedWorkload, type PodSetAdmission, workloadKey } from './snapshot.ts';
import { workloadInfo } from './workload-info.ts';

/** Whether the Workload holds a reservation (status.admission). */
export function isAdmitted(w: Workload): boolean {
  return w.status?.admission !== undefined;
}

export function isFinished(w: Workload): boolean {
  return (w.status?.conditions ?? []).some((c) => c.type === 'Finished' && c.status === 'True');
}

/**
 * A NonStrict gang's partial reservation: quota reserved, Admitted=False (GangAccumulating).
 * It holds its usage and keeps waiting in its queue to grow.
 */
export function isReservedOnly(w: Workload): boolean {
  const c = findCondition(w, WorkloadCondition.Admitted);
  return w.status?.admission !== undefined && c?.status !== 'True' && c?.reason === PendingReason.GangAccumulating;
}

/**
 * The reservation of an admitted Workload, or undefined (no ClusterQueue named, or a
 * problem, pushed on `errors` with the field).
 */
export function admittedFromStatus(
  w: Workload,
  where: Where,
  classes: ReadonlyMap<string, number>,
  errors: InputError[],
): AdmittedWorkload | undefined {
  const adm = w.status!.admission!;
  if (adm.clusterQueue === undefined) return undefined;
  const info = workloadInfo(w, classes);
  const podSets: PodSetAdmission[] = [];
  for (const [i, psa] of (adm.podSetAssignments ?? []).entries()) {
    const ps = w.spec.podSets.find((p) => p.name === psa.name);
    if (!ps) continue;
    const field = `status.admission.podSetAssignments[${i}]`;
    try {
      const perPod = podRequests(ps.template.spec);
      const count = psa.count ?? ps.count;
      const usage = psa.resourceUsage
        ? parseResourceList(psa.resourceUsage, `${field}.resourceUsage`)
        : Object.fromEntries(Object.entries(perPod).map(([r, v]) => [r, v * count]));
      const flavors = psa.flavors ?? {};
      const tasFlavor = psa.topologyAssignment ? Object.values(flavors)[0] : undefined;
      podSets.push({
        name: ps.name,
        count,
        flavors,
        perPod,
        usage,
        ...(tasFlavor !== undefined
          ? { tasFlavor, assignment: decodeAssignment(psa.topologyAssignment!, { ...where, field: `${field}.topologyAssignment` }) }
          : {}),
      });
    } catch (e) {
      errors.push(
        e instanceof InputError
          ? new InputError({ ...where, field: e.where.field ?? field }, e.detail)
          : new InputError({ ...where, field }, (e as Error).message),
      );
      return undefined;
    }
  }
  const reserved = parseTime(findCondition(w, 'QuotaReserved')?.lastTransitionTime) ?? info.timestamp;
  return {
    key: workloadKey(w),
    workload: w,
    clusterQueue: adm.clusterQueue,
    priority: info.priority,
    reservedAt: reserved,
    podSets,
    usage: AdmissionSnapshot.usageOf(podSets),
    ...(info.gang ? { gangGroup: info.gang.groupId, gangId: info.gang.id } : {}),
    ...(isReservedOnly(w) ? { reservedOnly: true } : {}),
  };
}
