// Why a pending Workload waits, with quota (`plan --explain` with ClusterQueues): the
// topology explanation (placement/explain.ts) on the TAS flavors quota would give it, and
// whether quota stops it now.
//
// 1. flavors from quota alone (the topology skipped) in its ClusterQueue, against the
//    snapshot as it is: a mode other than Fit means quota stops it (its message kept);
// 2. the topology explanation on the TAS flavors chosen there (else the first that suits);
// 3. its pending condition: a reason that is neither quota nor topology (a gang, a queue),
//    or a Workload that neither stops now, says what else holds it back.
// Reads the snapshot; changes nothing.

import type { Workload } from '../api/objects.ts';
import { type Explanation, explainTopology } from '../placement/explain.ts';
import type { WorkloadPlacementOptions } from '../placement/workload-placement.ts';
import { assignFlavors, PendingReason } from './flavor-assigner.ts';
import type { AdmissionSnapshot } from './snapshot.ts';
import { workloadInfo } from './workload-info.ts';

const QUOTA_OR_TOPOLOGY: ReadonlySet<string> = new Set([
  PendingReason.WaitingForQuota,
  PendingReason.ExceedsMaxQuota,
  PendingReason.NoMatchingFlavor,
  PendingReason.WaitingForPreemptedWorkloads,
  PendingReason.TopologyPlacementFailed,
]);

/** Steps 1 to 3 for `w` pending in ClusterQueue `cqName` (undefined: not queued). */
export function explainPending(
  snap: AdmissionSnapshot,
  cqName: string | undefined,
  w: Workload,
  placement: WorkloadPlacementOptions,
): Explanation {
  const info = workloadInfo(w, snap.priorityClasses);
  const cq = cqName !== undefined ? snap.clusterQueues.get(cqName) : undefined;
  let quota: string | undefined;
  let flavorOf: Map<string, string> | undefined;
  if (cq && info.invalid === undefined) {
    const a = assignFlavors(snap, cq, info, { placement, skipTopology: true });
    if (a.mode !== 'Fit') quota = a.message || `insufficient quota in ClusterQueue ${cq.name}`;
    flavorOf = new Map();
    for (const p of a.podSets) if (p.tasFlavor !== undefined) flavorOf.set(p.name, p.tasFlavor);
  }
  const e = explainTopology(w, snap.tasList, { ...placement, ...(flavorOf && flavorOf.size > 0 ? { flavorOf } : {}) });
  const out: Explanation = quota !== undefined ? { ...e, stoppedBy: ['quota', ...e.stoppedBy], quota } : e;
  const c = w.status?.conditions?.find((x) => x.type === 'QuotaReserved' && x.status === 'False');
  if (c && (!QUOTA_OR_TOPOLOGY.has(c.reason ?? '') || out.stoppedBy.length === 0))
    out.other = c.message ? `${c.reason ?? 'Pending'}: ${c.message}` : (c.reason ?? 'Pending');
  return out;
}
