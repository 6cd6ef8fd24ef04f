// The job frameworks, one line each: the only list of them. What the job reconciler watches,
// which webhooks exist, which objects `topoqueue plan` turns into Workloads, which owners
// make a pod not a plain Pod, and which stand-ins the embedded cluster runs all derive from
// it. Adding a framework: its file in this folder (see framework.ts) and one line here.

import type { KObject, OwnerReference, TypeMeta } from '../api/objects.ts';
import type { Framework, JobAdapter, JobFramework } from './framework.ts';
import { hyperJobFramework } from './hyperjob.ts';
import { jobFramework } from './job.ts';
import { jobSetFramework } from './jobset.ts';
import { leaderWorkerSetFramework } from './leaderworkerset.ts';
import { mpiJobFramework } from './mpijob.ts';
import { volcanoJobFramework } from './volcano-job.ts';
import { podGroupFramework } from './volcano-podgroup.ts';
import { apiGroup } from './workload-name.ts';

/** Every framework, in the order Kueue's docs list them (plan output follows it). */
export const FRAMEWORKS: readonly Framework[] = [
  jobFramework,
  jobSetFramework,
  mpiJobFramework,
  leaderWorkerSetFramework,
  // Plain Pods, Koordinator / scheduler-plugins gangs and Volcano PodGroups: one record,
  // because PodGroups and their pods are separate documents that one integration must see.
  podGroupFramework,
  volcanoJobFramework,
  hyperJobFramework,
];

/** The frameworks the generic job reconciler runs (those with a job side), in registry order. */
export const JOB_FRAMEWORKS: readonly JobFramework[] = FRAMEWORKS.filter((f): f is JobFramework => f.job !== undefined);

/** The job adapters the reconciler and the webhooks serve. */
export const JOB_ADAPTERS: readonly JobAdapter[] = JOB_FRAMEWORKS.map((f) => f.job);

/** Store kinds the job reconciler watches (a batch Job and a Volcano Job share `Job`). */
export const JOB_KINDS: readonly string[] = [...new Set(JOB_ADAPTERS.map((a) => a.kind))];

/** The framework for this apiVersion and kind, if any. */
export function integrationFor(t: TypeMeta): Framework | undefined {
  return FRAMEWORKS.find((f) => f.kinds.some((k) => k.apiVersion === t.apiVersion && k.kind === t.kind));
}

/** Same group and kind as a supported kind but another version: what we accept instead. */
export function supportedVersionsOf(t: TypeMeta): string[] {
  const group = apiGroup(t.apiVersion);
  return FRAMEWORKS.flatMap((f) => f.kinds.filter((k) => k.kind === t.kind && apiGroup(k.apiVersion) === group).map((k) => k.apiVersion));
}

/** The job adapter serving this apiVersion and kind. */
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
