// The job webhooks, run by the store on writes (Kueue's per-framework webhooks, same names:
// `mjob.kb.io` / `vjob.kb.io`, `mjobset.kb.io`, `mmpijob.kb.io`, `mleaderworkerset.kb.io`...;
// `m/vvolcanojob.topoqueue.io` and `m/vhyperjob.topoqueue.io` for the Volcano kinds), and the
// pod hook `mjobpod.topoqueue.io` that gates the pods of pod-gated jobs.
//
// Managed: the job has no managed parent (a JobSet's Job, a HyperJob's Volcano Job are left
// to the parent), its namespace matches `managedJobsNamespaceSelector` (matched against the
// Namespace's labels plus `kubernetes.io/metadata.name`; a namespace without a Namespace
// object matches on that label alone), and it has `kueue.x-k8s.io/queue-name` or
// `manageJobsWithoutQueueName` is set. (Kueue exempts non-pod integrations from the
// namespace selector when they name a queue; topoqueue applies it to every kind.)
//
// Mutating, on create of a job in a managed namespace:
//   1. no queue-name label and a LocalQueue `default` in the namespace -> label `default`;
//   2. managed -> the adapter's defaults (pod-index offsets), and Job/JobSet/MPIJob are suspended.
// Validating, on create and update:
//   1. the queue-name label must be a DNS subdomain (Kubernetes' message, as Kueue reports it);
//   2. create of a managed job: the Workload must be buildable (TAS annotations, minimum
//      parallelism...), refused with the integration's message;
//   3. update of a running (not suspended) managed Job/JobSet/MPIJob: the queue name is immutable.
// Pod hook, on create of a pod whose controller chain leads to a managed LeaderWorkerSet,
// Volcano Job or HyperJob: label `kueue.x-k8s.io/podset`, annotation `kueue.x-k8s.io/workload`,
// and the gates `kueue.x-k8s.io/admission` and `kueue.x-k8s.io/topology` (the latter dropped at
// start when the PodSet has no topology assignment, as Kueue's pod webhook does).

import { formatWhere } from '../api/errors.ts';
import { labelSelectorMatches } from '../api/label-selector.ts';
import { KueueAnnotation, KueueLabel, KueueSchedulingGate, NAMESPACE_NAME_LABEL } from '../api/keys.ts';
import type { KObject, Pod } from '../api/objects.ts';
import { DNS_SUBDOMAIN_MAX, DNS_SUBDOMAIN_PATTERN, DNS_SUBDOMAIN_PROBLEM } from '../api/names.ts';
import type { InformerFactory } from '../runtime/informer.ts';
import type { AdmissionResponse, ObjectStore } from '../runtime/store.ts';
import { type TopoqueueConfig, frameworkEnabled } from './config.ts';
import type { JobAdapter } from '../integrations/framework.ts';
import { JOB_ADAPTERS, type Lookup, adapterFor, controllerOf, managedRoot } from '../integrations/registry.ts';

export const DEFAULT_LOCAL_QUEUE = 'default';
export const JOB_POD_HOOK = 'mjobpod.topoqueue.io';

export interface JobWebhookDeps {
  config: TopoqueueConfig;
  informers: InformerFactory;
}

/** Does the namespace match managedJobsNamespaceSelector? */
export function namespaceManaged(deps: JobWebhookDeps, namespace: string): boolean {
  const ns = deps.informers.for('Namespace').get(undefined, namespace);
  const labels = { ...ns?.metadata.labels, [NAMESPACE_NAME_LABEL]: namespace };
  return labelSelectorMatches(deps.config.managedJobsNamespaceSelector, labels);
}

export const queueNameOf = (obj: KObject): string | undefined => obj.metadata.labels?.[KueueLabel.QueueName] || undefined;

/** A job with a job kind for its controller (a JobSet's Job): its parent is managed instead. */
export const hasManagedParent = (obj: KObject): boolean => {
  const ref = controllerOf(obj);
  return ref !== undefined && adapterFor(ref) !== undefined;
};

/** Is this job managed by topoqueue (see the header)? */
export function jobManaged(deps: JobWebhookDeps, job: KObject): boolean {
  if (hasManagedParent(job)) return false;
  if (!namespaceManaged(deps, job.metadata.namespace ?? 'default')) return false;
  return queueNameOf(job) !== undefined || deps.config.manageJobsWithoutQueueName;
}

/** Cache lookups of the kinds a controller chain may pass through. */
export function cacheLookup(informers: InformerFactory): Lookup {
  return (kind, namespace, name) => informers.for(kind).get(namespace, name);
}

const QUEUE_FIELD = `metadata.labels[${KueueLabel.QueueName}]`;

/** Kueue's ValidateLabelAsCRDName: the label value must be a DNS subdomain (Kubernetes' wording). */
export function queueNameProblem(value: string): string | undefined {
  const errs: string[] = [];
  if (value.length > DNS_SUBDOMAIN_MAX) errs.push(`must be no more than ${DNS_SUBDOMAIN_MAX} characters`);
  if (!DNS_SUBDOMAIN_PATTERN.test(value)) errs.push(DNS_SUBDOMAIN_PROBLEM);
  return errs.length > 0 ? `${QUEUE_FIELD}: Invalid value: ${JSON.stringify(value)}: ${errs.join(',')}` : undefined;
}

function defaultJob(deps: JobWebhookDeps, adapter: JobAdapter, job: KObject): void {
  if (hasManagedParent(job)) return;
  const namespace = job.metadata.namespace ?? 'default';
  if (!namespaceManaged(deps, namespace)) return;
  if (queueNameOf(job) === undefined && deps.informers.for('LocalQueue').get(namespace, DEFAULT_LOCAL_QUEUE)) {
    job.metadata.labels = { ...job.metadata.labels, [KueueLabel.QueueName]: DEFAULT_LOCAL_QUEUE };
  }
  if (queueNameOf(job) === undefined && !deps.config.manageJobsWithoutQueueName) return;
  adapter.defaultOnCreate?.(job);
  if (adapter.mode === 'suspend' && !adapter.isSuspended(job)) adapter.setSuspended(job, true);
}

function validateJob(deps: JobWebhookDeps, adapter: JobAdapter, job: KObject, old: KObject | undefined): AdmissionResponse | void {
  const denied: string[] = [];
  const queue = job.metadata.labels?.[KueueLabel.QueueName];
  if (queue !== undefined) {
    const p = queueNameProblem(queue);
    if (p) denied.push(p);
  }
  if (jobManaged(deps, job)) {
    if (old === undefined) {
      const r = adapter.integration.toWorkloads(job, { where: {} });
      for (const e of r.errors) denied.push(e.where.field ? `${e.where.field}: ${e.detail}` : `${formatWhere(e.where)}: ${e.detail}`);
    } else if (adapter.mode === 'suspend' && !adapter.isSuspended(job) && (queueNameOf(old) ?? '') !== (queueNameOf(job) ?? '')) {
      denied.push(`${QUEUE_FIELD}: Invalid value: ${JSON.stringify(queueNameOf(job) ?? '')}: field is immutable`);
    }
  }
  return denied.length > 0 ? { denied } : undefined;
}

function gatePod(deps: JobWebhookDeps, lookup: Lookup, pod: Pod): void {
  const r = managedRoot(pod, lookup);
  if (!r) return;
  const adapter = adapterFor(r.root);
  if (adapter?.mode !== 'pods' || !frameworkEnabled(deps.config, adapter.integration.name) || !jobManaged(deps, r.root)) return;
  const place = adapter.placePod(r.root, pod, r.owner);
  if (!place) return;
  pod.metadata.labels = { ...pod.metadata.labels, [KueueLabel.PodSet]: place.podSet };
  pod.metadata.annotations = { ...pod.metadata.annotations, [KueueAnnotation.Workload]: place.workload };
  const gates = [...(pod.spec.schedulingGates ?? [])];
  for (const name of [KueueSchedulingGate.Admission, KueueSchedulingGate.Topology]) {
    if (!gates.some((g) => g.name === name)) gates.push({ name });
  }
  pod.spec.schedulingGates = gates;
}

/** Registers the job webhooks and the pod hook on the store (the job reconciler's setup). */
export function registerJobWebhooks(store: ObjectStore, deps: JobWebhookDeps): void {
  for (const adapter of JOB_ADAPTERS) {
    // A framework left out of integrations.frameworks keeps its hooks (the webhook configuration names them) but they do nothing.
    const ours = (o: KObject) => o.apiVersion === adapter.apiVersion && frameworkEnabled(deps.config, adapter.integration.name);
    store.addAdmissionHook({
      name: `m${adapter.hookSuffix}`,
      kinds: [adapter.kind],
      operations: ['CREATE'],
      type: 'mutating',
      admit: (req) => {
        if (ours(req.object)) defaultJob(deps, adapter, req.object);
      },
    });
    store.addAdmissionHook({
      name: `v${adapter.hookSuffix}`,
      kinds: [adapter.kind],
      operations: ['CREATE', 'UPDATE'],
      type: 'validating',
      admit: (req) =>
        ours(req.object) ? validateJob(deps, adapter, req.object, req.operation === 'UPDATE' ? req.old : undefined) : undefined,
    });
  }
  const lookup = cacheLookup(deps.informers);
  store.addAdmissionHook({
    name: JOB_POD_HOOK,
    kinds: ['Pod'],
    operations: ['CREATE'],
    type: 'mutating',
    admit: (req) => gatePod(deps, lookup, req.object as Pod),
  });
}
