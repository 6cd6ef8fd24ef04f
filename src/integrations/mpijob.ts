// Kubeflow MPIJob (kubeflow.org/v2beta1), as Kueue's MPIJob integration
// (pkg/controller/jobs/mpijob) and KEP-2724 "MPIJob with runLauncherAsWorker". Its Workload:
//   - PodSets in replica-type order: `launcher` (when spec.mpiReplicaSpecs.Launcher is
//     given) then `worker` (when Worker is given), named by the lowercased replica type;
//   - count = the replica spec's `replicas`, default 1 (the MPI operator requires the
//     launcher's to be 1);
//   - both PodSets use the pod index label `training.kubeflow.org/replica-index`;
//   - with `spec.runLauncherAsWorker: true`, a launcher, and no
//     `kueue.x-k8s.io/podset-group-name` on the worker template, the worker template gets
//     `kueue.x-k8s.io/pod-index-offset: "1"` (the launcher is rank 0, worker indexes start
//     at 1; Kueue's MPIJob webhook sets it, overwriting any value). With a group name,
//     offsets are the PodSet group's business.

import { JobFrameworkApiVersion } from '../api/api-versions.ts';
import { InputError } from '../api/errors.ts';
import { KueueAnnotation, PodIndexLabel } from '../api/keys.ts';
import type { KObject, PodSet, PodTemplateSpec, StringMap } from '../api/objects.ts';
import { topologyRequestFromAnnotations } from '../api/topology-request.ts';
import { defineFramework, finishByCondition, specOf, templateMeta } from './framework.ts';
import type { IntegrationContext, ToWorkloadsResult } from './integration.ts';
import { keyField, ownedWorkload, podSetTemplate, readInt, readPodTemplate, whereIn } from './workload-name.ts';
import { isRecord } from '../api/values.ts';

export const MPIJobKind = { apiVersion: JobFrameworkApiVersion.MPIJob, kind: 'MPIJob' } as const;

/** Replica types in the order Kueue builds PodSets (orderedReplicaTypes). */
export const MPIReplicaType = { Launcher: 'Launcher', Worker: 'Worker' } as const;
export type MPIReplicaType = (typeof MPIReplicaType)[keyof typeof MPIReplicaType];
const REPLICA_TYPES: readonly MPIReplicaType[] = [MPIReplicaType.Launcher, MPIReplicaType.Worker];

/** Labels the MPI operator puts on an MPIJob's pods. */
export const MPIJobLabel = {
  JobName: 'training.kubeflow.org/job-name',
  ReplicaType: 'training.kubeflow.org/replica-type',
  ReplicaIndex: PodIndexLabel.KubeflowReplicaIndex,
} as const;

/** PodSet name of a replica type (kueue.NewPodSetReference: lowercased). */
export const mpiPodSetName = (t: MPIReplicaType): string => t.toLowerCase();

/** Does the worker template get the pod-index offset (runLauncherAsWorker, a launcher, no PodSet group)? */
export function mpiWorkerNeedsOffset(spec: Record<string, unknown>): boolean {
  const specs = spec.mpiReplicaSpecs;
  if (spec.runLauncherAsWorker !== true || !isRecord(specs)) return false;
  if (!isRecord(specs.Launcher) || !isRecord(specs.Worker)) return false;
  const t = specs.Worker.template;
  const ann = isRecord(t) && isRecord(t.metadata) && isRecord(t.metadata.annotations) ? t.metadata.annotations : {};
  return ann[KueueAnnotation.PodSetGroupName] === undefined;
}

export function mpiJobToWorkloads(obj: KObject, ctx: IntegrationContext): ToWorkloadsResult {
  const errors: InputError[] = [];
  const where = whereIn(ctx.where, obj);
  const spec = (obj as { spec?: unknown }).spec;
  const specs = isRecord(spec) ? spec.mpiReplicaSpecs : undefined;
  if (!isRecord(spec) || !isRecord(specs)) {
    errors.push(
      new InputError(
        { ...where, field: 'spec.mpiReplicaSpecs' },
        'an MPIJob needs spec.mpiReplicaSpecs with a Launcher and usually a Worker',
      ),
    );
    return { workloads: [], errors };
  }
  for (const t of Object.keys(specs)) {
    if (!(REPLICA_TYPES as readonly string[]).includes(t)) {
      errors.push(
        new InputError(
          { ...where, field: keyField('spec.mpiReplicaSpecs', t) },
          `Unsupported value: ${JSON.stringify(t)}: supported values: "Launcher", "Worker"`,
        ),
      );
    }
  }
  const present = REPLICA_TYPES.filter((t) => specs[t] !== undefined && specs[t] !== null);
  if (present.length === 0) {
    errors.push(
      new InputError({ ...where, field: 'spec.mpiReplicaSpecs' }, 'an MPIJob needs a Launcher replica spec (and usually a Worker one)'),
    );
  }
  const offset = mpiWorkerNeedsOffset(spec);

  const podSets: PodSet[] = [];
  for (const t of present) {
    const at = `spec.mpiReplicaSpecs.${t}`;
    const rs = specs[t];
    if (!isRecord(rs)) {
      errors.push(new InputError({ ...where, field: at }, 'a replica spec must be an object with replicas and template'));
      continue;
    }
    const count = readInt(rs.replicas, 1, 0, { ...where, field: `${at}.replicas` }, errors);
    if (t === MPIReplicaType.Launcher && count !== 1) {
      errors.push(new InputError({ ...where, field: `${at}.replicas` }, `Invalid value: ${count}: must be 1`));
    }
    const template = readPodTemplate(rs.template, { ...where, field: `${at}.template` }, errors);
    if (template === undefined) continue;
    const extra: StringMap | undefined = t === MPIReplicaType.Worker && offset ? { [KueueAnnotation.PodIndexOffset]: '1' } : undefined;
    const psTemplate = podSetTemplate(template, extra);
    const tr = topologyRequestFromAnnotations(
      psTemplate.metadata?.annotations,
      count,
      { podIndexLabel: PodIndexLabel.KubeflowReplicaIndex },
      {
        ...where,
        field: `${at}.template`,
      },
    );
    errors.push(...tr.errors);
    const ps: PodSet = { name: mpiPodSetName(t), template: psTemplate, count };
    if (tr.request) ps.topologyRequest = tr.request;
    podSets.push(ps);
  }
  if (errors.length > 0) return { workloads: [], errors };
  return { workloads: [ownedWorkload(obj, podSets)], errors };
}

// ---------------------------------------------------------------------------------------
// The job side: suspended through `spec.runPolicy.suspend` (the MPI operator deletes the
// pods while suspended); PodSets `launcher` and `worker` with the replica specs' templates;
// finished when the Succeeded or Failed condition is True. The webhook puts the pod-index
// offset on the worker template (mpiWorkerNeedsOffset), so the worker pods carry it for the
// TopologyUngater's ranks.
// ---------------------------------------------------------------------------------------

export const MPIJobCondition = { Succeeded: 'Succeeded', Failed: 'Failed' } as const;

function runPolicy(job: KObject): Record<string, unknown> {
  const spec = specOf(job);
  if (!isRecord(spec.runPolicy)) spec.runPolicy = {};
  return spec.runPolicy as Record<string, unknown>;
}

function mpiTemplates(job: KObject): Map<string, PodTemplateSpec> {
  const out = new Map<string, PodTemplateSpec>();
  const specs = specOf(job).mpiReplicaSpecs;
  if (!isRecord(specs)) return out;
  for (const t of [MPIReplicaType.Launcher, MPIReplicaType.Worker]) {
    const rs = specs[t];
    if (isRecord(rs) && isRecord(rs.template)) out.set(mpiPodSetName(t), rs.template as unknown as PodTemplateSpec);
  }
  return out;
}

export const mpiJobFramework = defineFramework({
  name: 'kubeflow.org/mpijob',
  kinds: [MPIJobKind],
  toWorkloads: mpiJobToWorkloads,
  job: {
    mode: 'suspend',
    hookSuffix: 'mpijob.kb.io',
    isSuspended: (job) => {
      const rp = (job as { spec?: { runPolicy?: { suspend?: unknown } } }).spec?.runPolicy;
      return rp?.suspend === true;
    },
    setSuspended(job, suspend) {
      runPolicy(job).suspend = suspend;
    },
    templates: mpiTemplates,
    defaultOnCreate(job) {
      if (!mpiWorkerNeedsOffset(specOf(job))) return;
      const worker = mpiTemplates(job).get(mpiPodSetName(MPIReplicaType.Worker))!;
      const meta = templateMeta(worker);
      meta.annotations = { ...meta.annotations, [KueueAnnotation.PodIndexOffset]: '1' };
    },
    finished: (job) => finishByCondition(job, MPIJobCondition.Succeeded, MPIJobCondition.Failed),
  },
});
