// Kubeflow MPIJob v2beta1 (Kueue's pkg/controller/jobs/mpijob): suspended through
// `spec.runPolicy.suspend` (the MPI operator deletes the pods while suspended); PodSets
// `launcher` and `worker` with the replica specs' templates; finished when the Succeeded or
// Failed condition is True. The webhook puts `kueue.x-k8s.io/pod-index-offset: "1"` on the
// worker template with runLauncherAsWorker (see integrations/mpijob.ts), so the worker pods
// carry it for the TopologyUngater's ranks.

import { KueueAnnotation } from '../../api/keys.ts';
import type { KObject, PodTemplateSpec } from '../../api/objects.ts';
import { MPIJobKind, MPIReplicaType, mpiJobIntegration, mpiPodSetName, mpiWorkerNeedsOffset } from '../../integrations/mpijob.ts';
import { type SuspendingAdapter, isRecord, specOf, templateMeta, trueCondition } from './adapter.ts';

export const MPIJobCondition = { Succeeded: 'Succeeded', Failed: 'Failed' } as const;

function runPolicy(job: KObject): Record<string, unknown> {
  const spec = specOf(job);
  if (!isRecord(spec.runPolicy)) spec.runPolicy = {};
  return spec.runPolicy as Record<string, unknown>;
}

export const mpiJobAdapter: SuspendingAdapter = {
  mode: 'suspend',
  kind: MPIJobKind.kind,
  apiVersion: MPIJobKind.apiVersion,
  hookSuffix: 'mpijob.kb.io',
  integration: mpiJobIntegration,
  isSuspended: (job) => {
    const rp = (job as { spec?: { runPolicy?: { suspend?: unknown } } }).spec?.runPolicy;
    return rp?.suspend === true;
  },
  setSuspended(job, suspend) {
    runPolicy(job).suspend = suspend;
  },
  templates(job) {
    const out = new Map<string, PodTemplateSpec>();
    const specs = specOf(job).mpiReplicaSpecs;
    if (!isRecord(specs)) return out;
    for (const t of [MPIReplicaType.Launcher, MPIReplicaType.Worker]) {
      const rs = specs[t];
      if (isRecord(rs) && isRecord(rs.template)) out.set(mpiPodSetName(t), rs.template as unknown as PodTemplateSpec);
    }
    return out;
  },
  defaultOnCreate(job) {
    if (!mpiWorkerNeedsOffset(specOf(job))) return;
    const worker = this.templates(job).get(mpiPodSetName(MPIReplicaType.Worker))!;
    const meta = templateMeta(worker);
    meta.annotations = { ...meta.annotations, [KueueAnnotation.PodIndexOffset]: '1' };
  },
  finished: (job) => {
    const c = trueCondition(job, [MPIJobCondition.Succeeded, MPIJobCondition.Failed]);
    if (!c) return undefined;
    const success = c.type === MPIJobCondition.Succeeded;
    return { success, message: c.message || (success ? 'MPIJob finished successfully' : 'MPIJob failed') };
  },
};
