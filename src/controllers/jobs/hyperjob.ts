// HyperJob (training.volcano.sh/v1alpha1): pod-gated through its child Volcano Jobs, one
// Workload with one PodSet per replicatedJob (integrations/hyperjob.ts). The embedded
// cluster creates child Volcano Jobs `<hyperjob>-<replicatedJob>-<i>` (controller: the
// HyperJob), labelled with the keys below, and their pods as for any Volcano Job. A pod's
// PodSet is its child Job's replicatedJob, lowercased: the child's label, else its name.
// Finished when the HyperJob reports Completed or Failed, else when a child Job failed
// (failure) or every child Job completed (success).

import type { KObject, Pod } from '../../api/objects.ts';
import { HyperJobKind, hyperJobIntegration } from '../../integrations/hyperjob.ts';
import { ownerIdentity, workloadNameForOwner } from '../../integrations/workload-name.ts';
import { type PodGatedAdapter, isRecord, readSpec, trueCondition } from './adapter.ts';
import { volcanoJobFinish } from './volcano-job.ts';

/** Labels on a HyperJob's child Volcano Jobs (topoqueue's; Volcano has no HyperJob controller yet). */
export const HyperJobLabel = {
  Name: 'training.volcano.sh/hyperjob-name',
  ReplicatedJobName: 'training.volcano.sh/replicatedjob-name',
  JobIndex: 'training.volcano.sh/job-index',
} as const;

export const HyperJobCondition = { Completed: 'Completed', Failed: 'Failed' } as const;

function replicatedJobs(hj: KObject): { name: string; replicas: number }[] {
  const rjs = readSpec(hj).replicatedJobs;
  return (Array.isArray(rjs) ? rjs : []).filter(isRecord).map((rj) => ({
    name: String(rj.name ?? ''),
    replicas: typeof rj.replicas === 'number' ? rj.replicas : 1,
  }));
}

/** The replicatedJob a child Volcano Job belongs to: its label, else its name `<hyperjob>-<replicatedJob>-<i>`. */
export function replicatedJobOfChild(hj: KObject, child: KObject): string | undefined {
  const names = replicatedJobs(hj).map((r) => r.name);
  const label = child.metadata.labels?.[HyperJobLabel.ReplicatedJobName];
  if (label !== undefined) return names.includes(label) ? label : undefined;
  const prefix = `${hj.metadata.name}-`;
  if (!child.metadata.name.startsWith(prefix)) return undefined;
  const rest = child.metadata.name.slice(prefix.length);
  return [...names].sort((a, b) => b.length - a.length).find((n) => rest.startsWith(`${n}-`) && /^[0-9]+$/.test(rest.slice(n.length + 1)));
}

export const hyperJobAdapter: PodGatedAdapter = {
  mode: 'pods',
  kind: HyperJobKind.kind,
  apiVersion: HyperJobKind.apiVersion,
  hookSuffix: 'hyperjob.topoqueue.io',
  integration: hyperJobIntegration,
  placePod(hj, _pod: Pod, owner) {
    const rj = owner.kind === 'Job' ? replicatedJobOfChild(hj, owner) : undefined;
    return rj === undefined ? undefined : { workload: workloadNameForOwner(ownerIdentity(hj)), podSet: rj.toLowerCase() };
  },
  finished(hj, view) {
    const c = trueCondition(hj, [HyperJobCondition.Completed, HyperJobCondition.Failed]);
    if (c) {
      const success = c.type === HyperJobCondition.Completed;
      return { success, message: c.message || (success ? 'HyperJob completed' : 'HyperJob failed') };
    }
    const children = view.childJobs(hj);
    for (const child of children) {
      const f = volcanoJobFinish(child);
      if (f && !f.success) return { success: false, message: `Volcano Job ${child.metadata.name} of the HyperJob: ${f.message}` };
    }
    const expected = replicatedJobs(hj).reduce((n, r) => n + r.replicas, 0);
    const completed = children.filter((c) => volcanoJobFinish(c)?.success === true && replicatedJobOfChild(hj, c) !== undefined).length;
    if (expected > 0 && completed >= expected) return { success: true, message: `All ${expected} Volcano Jobs of the HyperJob completed` };
    return undefined;
  },
};
