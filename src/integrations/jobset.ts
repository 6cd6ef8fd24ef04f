// JobSet (jobset.x-k8s.io/v1alpha2), as Kueue's JobSet integration (pkg/controller/jobs/jobset).
// Its Workload:
//   - one PodSet per replicatedJob, named by the replicatedJob name (lowercased);
//   - count = replicas (default 1) x pods per Job (min(parallelism, completions));
//   - topology request from the Job pod template's annotations, with pod index label
//     `batch.kubernetes.io/job-completion-index` (JobSet runs its Jobs Indexed), sub-group
//     index label `jobset.sigs.k8s.io/job-index` and subGroupCount = replicas;
//   - `podset-slice-required-topology` without `podset-slice-size` defaults the slice size
//     to the Job's parallelism (KEP-2724 "JobSet with ReplicatedJob instance topology").

import { JobFrameworkApiVersion } from '../api/api-versions.ts';
import { InputError } from '../api/errors.ts';
import { PodIndexLabel } from '../api/keys.ts';
import type { KObject, PodSet, PodTemplateSpec } from '../api/objects.ts';
import { topologyRequestFromAnnotations } from '../api/topology-request.ts';
import { defineFramework, finishByCondition, readSpec, specOf } from './framework.ts';
import type { IntegrationContext, ToWorkloadsResult } from './integration.ts';
import { isDnsLabel } from '../api/names.ts';
import { podsPerJob } from './job.ts';
import { MAX_PODSETS, ownedWorkload, podSetTemplate, readInt, readPodTemplate, whereIn } from './workload-name.ts';
import { isRecord } from '../api/values.ts';

export const JobSetKind = { apiVersion: JobFrameworkApiVersion.JobSet, kind: 'JobSet' } as const;

export function jobSetToWorkloads(obj: KObject, ctx: IntegrationContext): ToWorkloadsResult {
  const errors: InputError[] = [];
  const where = whereIn(ctx.where, obj);
  const spec = (obj as { spec?: unknown }).spec;
  const rjs = isRecord(spec) ? spec.replicatedJobs : undefined;
  if (!Array.isArray(rjs) || rjs.length === 0) {
    errors.push(new InputError({ ...where, field: 'spec.replicatedJobs' }, 'a JobSet needs at least one replicatedJob'));
    return { workloads: [], errors };
  }
  if (rjs.length > MAX_PODSETS) {
    errors.push(
      new InputError(
        { ...where, field: 'spec.replicatedJobs' },
        `a Workload holds at most ${MAX_PODSETS} PodSets, one per replicatedJob; this JobSet has ${rjs.length}`,
      ),
    );
  }

  const podSets: PodSet[] = [];
  const seen = new Set<string>();
  rjs.forEach((rj: unknown, i) => {
    const at = `spec.replicatedJobs[${i}]`;
    if (!isRecord(rj)) {
      errors.push(new InputError({ ...where, field: at }, 'a replicatedJob must be an object with name, replicas and template'));
      return;
    }
    const rawName = rj.name;
    const name = typeof rawName === 'string' ? rawName.toLowerCase() : '';
    if (!isDnsLabel(name)) {
      errors.push(
        new InputError(
          { ...where, field: `${at}.name` },
          `${JSON.stringify(rawName)} cannot name a PodSet: a lowercase DNS label is required ` +
            "(at most 63 letters, digits and '-', starting and ending with a letter or digit)",
        ),
      );
    } else if (seen.has(name)) {
      errors.push(new InputError({ ...where, field: `${at}.name` }, `replicatedJob name ${JSON.stringify(rawName)} is used twice`));
    }
    seen.add(name);

    const replicas = readInt(rj.replicas, 1, 0, { ...where, field: `${at}.replicas` }, errors);
    const jobSpec = isRecord(rj.template) ? rj.template.spec : undefined;
    if (!isRecord(jobSpec)) {
      errors.push(new InputError({ ...where, field: `${at}.template.spec` }, 'a replicatedJob needs a Job template'));
      return;
    }
    const perJob = podsPerJob(jobSpec, where, `${at}.template.spec`, errors);
    const parallelism = readInt(jobSpec.parallelism, 1, 0, where, []);
    const template = readPodTemplate(jobSpec.template, { ...where, field: `${at}.template.spec.template` }, errors);
    if (template === undefined) return;

    const count = replicas * perJob;
    const tr = topologyRequestFromAnnotations(
      template.metadata?.annotations,
      count,
      {
        podIndexLabel: PodIndexLabel.JobCompletionIndex,
        subGroupIndexLabel: PodIndexLabel.JobSetJobIndex,
        subGroupCount: replicas,
        defaultSliceSize: parallelism,
      },
      { ...where, field: `${at}.template.spec.template` },
    );
    errors.push(...tr.errors);
    const podSet: PodSet = { name, template: podSetTemplate(template), count };
    if (tr.request) podSet.topologyRequest = tr.request;
    podSets.push(podSet);
  });

  if (errors.length > 0) return { workloads: [], errors };
  return { workloads: [ownedWorkload(obj, podSets)], errors };
}

// ---------------------------------------------------------------------------------------
// The job side: suspended through `spec.suspend` (the JobSet controller deletes its child
// Jobs while suspended and creates them from the current templates when resumed); a PodSet's
// template is its replicatedJob's Job pod template; finished when the Completed or Failed
// condition is True.
// ---------------------------------------------------------------------------------------

export const JobSetCondition = { Completed: 'Completed', Failed: 'Failed' } as const;

/** Labels and annotations the JobSet controller puts on its child Jobs and their pods. */
export const JobSetLabel = {
  JobSetName: 'jobset.sigs.k8s.io/jobset-name',
  ReplicatedJobName: 'jobset.sigs.k8s.io/replicatedjob-name',
  JobIndex: PodIndexLabel.JobSetJobIndex,
  ReplicatedJobReplicas: PodIndexLabel.JobSetReplicatedJobReplicas,
  RestartAttempt: 'jobset.sigs.k8s.io/restart-attempt',
} as const;

export const jobSetFramework = defineFramework({
  name: 'jobset.x-k8s.io/jobset',
  kinds: [JobSetKind],
  toWorkloads: jobSetToWorkloads,
  job: {
    mode: 'suspend',
    hookSuffix: 'jobset.kb.io',
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
    finished: (js) => finishByCondition(js, JobSetCondition.Completed, JobSetCondition.Failed),
  },
});
