// batch/v1 Job (Kueue's pkg/controller/jobs/job): suspended through `spec.suspend`; one
// PodSet `main` whose template is `spec.template`; partial admission runs the admitted count
// as `spec.parallelism` (restored from the Workload's count on stop); finished when the
// Complete or Failed condition is True, with that condition's message.

import type { KObject, PodTemplateSpec } from '../../api/objects.ts';
import { DEFAULT_PODSET_NAME, JobKind, jobIntegration } from '../../integrations/job.ts';
import { type SuspendingAdapter, isRecord, readSpec, specOf, trueCondition } from './adapter.ts';

export const JobCondition = { Complete: 'Complete', Failed: 'Failed' } as const;

export const batchJobAdapter: SuspendingAdapter = {
  mode: 'suspend',
  kind: JobKind.kind,
  apiVersion: JobKind.apiVersion,
  hookSuffix: 'job.kb.io',
  integration: jobIntegration,
  isSuspended: (job) => readSpec(job).suspend === true,
  setSuspended(job, suspend) {
    specOf(job).suspend = suspend;
  },
  templates(job) {
    const t = specOf(job).template;
    return new Map(isRecord(t) ? [[DEFAULT_PODSET_NAME, t as unknown as PodTemplateSpec]] : []);
  },
  setCount(job, _podSet, count) {
    specOf(job).parallelism = count;
  },
  finished: (job: KObject) => {
    const c = trueCondition(job, [JobCondition.Complete, JobCondition.Failed]);
    if (!c) return undefined;
    const success = c.type === JobCondition.Complete;
    return { success, message: c.message || (success ? 'Job finished successfully' : 'Job failed') };
  },
};
