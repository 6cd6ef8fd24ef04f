// JobSet (jobset.x-k8s.io/v1alpha2, Kueue's pkg/controller/jobs/jobset): suspended through
// `spec.suspend` (the JobSet controller deletes its child Jobs while suspended and creates
// them from the current templates when resumed); one PodSet per replicatedJob, named by the
// lowercased replicatedJob name, whose template is the replicatedJob's Job pod template;
// finished when the Completed or Failed condition is True.

import type { PodTemplateSpec } from '../../api/objects.ts';
import { JobSetKind, jobSetIntegration } from '../../integrations/jobset.ts';
import { type SuspendingAdapter, isRecord, readSpec, specOf, trueCondition } from './adapter.ts';

export const JobSetCondition = { Completed: 'Completed', Failed: 'Failed' } as const;

/** Labels and annotations the JobSet controller puts on its child Jobs and their pods. */
export const JobSetLabel = {
  JobSetName: 'jobset.sigs.k8s.io/jobset-name',
  ReplicatedJobName: 'jobset.sigs.k8s.io/replicatedjob-name',
  JobIndex: 'jobset.sigs.k8s.io/job-index',
  ReplicatedJobReplicas: 'jobset.sigs.k8s.io/replicatedjob-replicas',
} as const;

export const jobSetAdapter: SuspendingAdapter = {
  mode: 'suspend',
  kind: JobSetKind.kind,
  apiVersion: JobSetKind.apiVersion,
  hookSuffix: 'jobset.kb.io',
  integration: jobSetIntegration,
  isSuspended: (js) => readSpec(js).suspend === true,
  setSuspended(js, suspend) {
    specOf(js).suspend = suspend;
  },
  templates(js) {
    const out = new Map<string, PodTemplateSpec>();
    const rjs = specOf(js).replicatedJobs;
    for (const rj of Array.isArray(rjs) ? rjs : []) {
      if (!isRecord(rj) || typeof rj.name !== 'string' || !isRecord(rj.template) || !isRecord(rj.template.spec)) continue;
      const t = rj.template.spec.template;
      if (isRecord(t)) out.set(rj.name.toLowerCase(), t as unknown as PodTemplateSpec);
    }
    return out;
  },
  finished: (js) => {
    const c = trueCondition(js, [JobSetCondition.Completed, JobSetCondition.Failed]);
    if (!c) return undefined;
    const success = c.type === JobSetCondition.Completed;
    return { success, message: c.message || (success ? 'JobSet finished successfully' : 'JobSet failed') };
  },
};
