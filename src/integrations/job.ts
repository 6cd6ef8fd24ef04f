// batch/v1 Job, as Kueue's Job integration (pkg/controller/jobs/job). Its Workload:
//   - one PodSet `main` with count = min(parallelism (default 1), completions if set);
//   - minCount from the Job's annotation `kueue.x-k8s.io/job-min-parallelism`
//     (partial admission), an integer in 1..count;
//   - a topology request from the pod template's TAS annotations; the pod index label
//     `batch.kubernetes.io/job-completion-index` only for `completionMode: Indexed`
//     (the only mode whose pods carry it).

import { CoreApiVersion } from '../api/api-versions.ts';
import { InputError, type Where } from '../api/errors.ts';
import { PodIndexLabel } from '../api/keys.ts';
import type { KObject, PodSet, PodTemplateSpec, Workload } from '../api/objects.ts';
import { topologyRequestFromAnnotations } from '../api/topology-request.ts';
import { defineFramework, finishByCondition, readSpec, specOf } from './framework.ts';
import type { IntegrationContext, ToWorkloadsResult } from './integration.ts';
import { keyField, ownedWorkload, podSetTemplate, readInt, readPodTemplate, whereIn } from './workload-name.ts';
import { isRecord } from '../api/values.ts';

/** Kueue's partial-admission annotation on a Job (missing from api/keys.ts). */
export const JOB_MIN_PARALLELISM_ANNOTATION = 'kueue.x-k8s.io/job-min-parallelism';
export const DEFAULT_PODSET_NAME = 'main';

export const JobKind = { apiVersion: CoreApiVersion.Batch, kind: 'Job' } as const;

/**
 * Pods a Job runs at once: min(parallelism, completions), parallelism defaulting to 1
 * (podsCount in Kueue). `spec` is a JobSpec as written; `at` names the spec's field path.
 */
export function podsPerJob(spec: Record<string, unknown>, where: Where, at: string, errors: InputError[]): number {
  const parallelism = readInt(spec.parallelism, 1, 0, { ...where, field: `${at}.parallelism` }, errors);
  const completions = readInt(spec.completions, parallelism, 0, { ...where, field: `${at}.completions` }, errors);
  return Math.min(parallelism, completions);
}

function minCountOf(obj: KObject, count: number, where: Where, errors: InputError[]): number | undefined {
  const raw = obj.metadata.annotations?.[JOB_MIN_PARALLELISM_ANNOTATION];
  if (raw === undefined) return undefined;
  const n = /^[0-9]+$/.test(raw) ? Number(raw) : NaN;
  if (!Number.isSafeInteger(n) || n < 1 || n > count) {
    errors.push(
      new InputError(
        { ...where, field: keyField('metadata.annotations', JOB_MIN_PARALLELISM_ANNOTATION) },
        `${JOB_MIN_PARALLELISM_ANNOTATION}=${JSON.stringify(raw)} must be a whole number between 1 and the Job's pod count ${count}`,
      ),
    );
    return undefined;
  }
  return n;
}

export function jobToWorkloads(obj: KObject, ctx: IntegrationContext): ToWorkloadsResult {
  const errors: InputError[] = [];
  const where = whereIn(ctx.where, obj);
  const spec = (obj as { spec?: unknown }).spec;
  if (!isRecord(spec)) {
    errors.push(new InputError({ ...where, field: 'spec' }, 'a Job needs a spec with a pod template'));
    return { workloads: [], errors };
  }
  const template = readPodTemplate(spec.template, { ...where, field: 'spec.template' }, errors);
  const count = podsPerJob(spec, where, 'spec', errors);
  const minCount = minCountOf(obj, count, where, errors);
  if (template === undefined) return { workloads: [], errors };

  const indexed = spec.completionMode === 'Indexed';
  const tr = topologyRequestFromAnnotations(
    template.metadata?.annotations,
    count,
    indexed ? { podIndexLabel: PodIndexLabel.JobCompletionIndex } : {},
    { ...where, field: 'spec.template' },
  );
  errors.push(...tr.errors);
  if (errors.length > 0) return { workloads: [], errors };

  const podSet: PodSet = { name: DEFAULT_PODSET_NAME, template: podSetTemplate(template), count };
  if (minCount !== undefined) podSet.minCount = minCount;
  if (tr.request) podSet.topologyRequest = tr.request;
  const workload: Workload = ownedWorkload(obj, [podSet]);
  return { workloads: [workload], errors };
}

// ---------------------------------------------------------------------------------------
// The job side: suspended through `spec.suspend`; one PodSet `main` whose template is
// `spec.template`; partial admission runs the admitted count as `spec.parallelism`
// (restored from the Workload's count on stop); finished when the Complete or Failed
// condition is True, with that condition's message.
// ---------------------------------------------------------------------------------------

export const JobCondition = { Complete: 'Complete', Failed: 'Failed' } as const;

export const jobFramework = defineFramework({
  name: 'batch/job',
  kinds: [JobKind],
  toWorkloads: jobToWorkloads,
  job: {
    mode: 'suspend',
    hookSuffix: 'job.kb.io',
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
    finished: (job) => finishByCondition(job, JobCondition.Complete, JobCondition.Failed),
  },
});
