// The job adapters the reconciler and the webhooks serve, found by apiVersion and kind.

import type { KObject, OwnerReference, TypeMeta } from '../../api/objects.ts';
import type { JobAdapter } from './adapter.ts';
import { hyperJobAdapter } from './hyperjob.ts';
import { batchJobAdapter } from './job.ts';
import { jobSetAdapter } from './jobset.ts';
import { leaderWorkerSetAdapter } from './leaderworkerset.ts';
import { mpiJobAdapter } from './mpijob.ts';
import { volcanoJobAdapter } from './volcano-job.ts';

export const JOB_ADAPTERS: readonly JobAdapter[] = [batchJobAdapter, jobSetAdapter, mpiJobAdapter, leaderWorkerSetAdapter, volcanoJobAdapter, hyperJobAdapter];

/** Store kinds the job reconciler watches (a batch Job and a Volcano Job share `Job`). */
export const JOB_KINDS: readonly string[] = [...new Set(JOB_ADAPTERS.map((a) => a.kind))];

export function adapterFor(t: TypeMeta): JobAdapter | undefined {
  return JOB_ADAPTERS.find((a) => a.kind === t.kind && a.apiVersion === t.apiVersion);
}

/** The controlling owner reference of an object. */
export function controllerOf(obj: KObject): OwnerReference | undefined {
  return obj.metadata.ownerReferences?.find((r) => r.controller === true);
}

/** Looks an object up in a cache: kind, namespace, name. */
export type Lookup = (kind: string, namespace: string, name: string) => KObject | undefined;

/**
 * The managed job an object (a pod, or a child Job) runs for: its controller when that is a
 * job kind, or that controller's controller when it is one too (a JobSet's Job, a HyperJob's
 * Volcano Job, an MPIJob's launcher Job). `owner` is the object's direct controller.
 */
export function managedRoot(obj: KObject, get: Lookup): { root: KObject; owner: KObject } | undefined {
  const ns = obj.metadata.namespace ?? 'default';
  const resolve = (o: KObject): KObject | undefined => {
    const ref = controllerOf(o);
    if (!ref || !adapterFor(ref)) return undefined;
    const found = get(ref.kind, ns, ref.name);
    return found && found.apiVersion === ref.apiVersion && (!ref.uid || found.metadata.uid === ref.uid) ? found : undefined;
  };
  const owner = resolve(obj);
  if (!owner) return undefined;
  const parent = controllerOf(owner);
  if (!parent || !adapterFor(parent)) return { root: owner, owner };
  const root = resolve(owner);
  return root ? { root, owner } : undefined;
}

/** `Kind/namespace/name`: the job reconciler's key of a job. */
export function jobKey(job: KObject): string {
  return `${job.kind}/${job.metadata.namespace ?? 'default'}/${job.metadata.name}`;
}
