// The pod webhook of plain Pods (kueue-core §1e "Webhook", KEP-976 "Gating Pod Scheduling"):
// a mutating hook on CREATE and a validating hook on CREATE and UPDATE, registered on the
// store by the pod-group controller's setup.
//
// Mutation (defaultPod):
//   1. scope: unless the pod carries `kueue.x-k8s.io/pod-suspending-parent`, its namespace
//      must match managedJobsNamespaceSelector and its controller owner must not be a kind
//      another integration runs (pods-scope.ts); pods already bound are left alone (a bound
//      pod cannot be gated);
//   2. queue: no `kueue.x-k8s.io/queue-name` and a LocalQueue `default` in the namespace ->
//      the label is defaulted to `default`;
//   3. managed when it has a queue name, manageJobsWithoutQueueName is set, or a suspending
//      parent gates it. Gang pods (Koordinator annotations, PodGroup labels) follow the
//      same rule: their Workload needs a LocalQueue like any other;
//   4. a managed pod gets label `kueue.x-k8s.io/managed: "true"`, finalizer
//      `kueue.x-k8s.io/managed` (not with a suspending parent), the scheduling gates
//      `kueue.x-k8s.io/admission` and `kueue.x-k8s.io/topology` (TAS is always on; the
//      topology gate is dropped at start when the admission has no topology assignment),
//      label `kueue.x-k8s.io/pod-group-pod-index` copied from the label named by
//      `kueue.x-k8s.io/pod-group-pod-index-label`, and annotation `kueue.x-k8s.io/role-hash`,
//      recomputed (a user's value is not trusted; a suspending parent's is kept).
//      Metric kueue_pods_gated_total counts pods that got the admission gate.
//
// Validation (validatePod), for pods in scope; messages are Kueue's field errors verbatim:
//   - owned by another integration: allowed, with Kueue's warning when it carries the
//     managed label;
//   - managed label only "true"; group name <-> total count (a group declared with
//     `kueue.x-k8s.io/pod-group-sets`, or a worker with `kueue.x-k8s.io/pod-group-role`,
//     needs no total count); total count a whole number >= 1; group name a valid object
//     name; TAS annotations valid; prebuilt workload name = group name; pod-group-sets
//     readable;
//   - UPDATE: group name immutable once set; `kueue.x-k8s.io/retriable-in-group: "false"`
//     cannot be removed or changed; the queue name is immutable once the pod is ungated;
//     the role hash of a managed pod is immutable (ours: the controller groups pods by it,
//     so changing it would move a pod into another role's quota).

import type { InputError } from '../api/errors.ts';
import { KueueAnnotation, KueueLabel, KueueRuntimeKey, KueueSchedulingGate } from '../api/keys.ts';
import type { KObject, Pod, StringMap } from '../api/objects.ts';
import { topologyRequestFromAnnotations } from '../api/topology-request.ts';
import { DNS_SUBDOMAIN_PROBLEM, isDnsSubdomain } from '../api/names.ts';
import { BOTH_KEYS_DETAIL, PodGroupAnnotation, podGroupName, roleHash } from '../integrations/pod.ts';
import type { ControllerContext } from '../runtime/manager.ts';
import type { AdmissionHook, AdmissionRequest, AdmissionResponse } from '../runtime/store.ts';
import { POD_FRAMEWORK, type TopoqueueConfig, frameworkEnabled } from './config.ts';
import { POD_GROUP_ROLE_LABEL, hasPodGroupSets, parsePodGroupSets } from './pods-group-sets.ts';
import { namespaceManaged, ownedByKnownIntegration } from './pods-scope.ts';

export const POD_MUTATING_WEBHOOK = 'mpod.kb.io';
export const POD_VALIDATING_WEBHOOK = 'vpod.kb.io';

export const OWNER_MANAGED_WARNING =
  "pod owner is managed by kueue, label 'kueue.x-k8s.io/managed=true' might lead to unexpected behaviour";
export const MANAGED_LABEL_DETAIL = "managed label value can only be 'true'";
export const UNRETRIABLE_DETAIL = "unretriable pod group can't be converted to retriable";
export const PREBUILT_DETAIL = 'prebuilt workload and pod group should be equal';
export const IMMUTABLE_DETAIL = 'field is immutable';

export const MANAGED_LABEL_VALUE = 'true';

/** What the hooks read besides the pod: the configuration, namespaces and LocalQueues. */
export interface PodWebhookEnv {
  config: TopoqueueConfig;
  namespaceManaged(namespace: string): boolean;
  localQueueExists(namespace: string, name: string): boolean;
}

// ---------------------------------------------------------------------------------------
// Field errors in Kubernetes' wording (field.Error.Error())
// ---------------------------------------------------------------------------------------

const path = (prefix: 'labels' | 'annotations', key: string) => `metadata.${prefix}[${key}]`;
const required = (field: string, detail: string) => `${field}: Required value: ${detail}`;
const invalid = (field: string, value: string, detail: string) => `${field}: Invalid value: ${JSON.stringify(value)}: ${detail}`;
const forbidden = (field: string, detail: string) => `${field}: Forbidden: ${detail}`;

/** Where the group name was read: the annotation wins over the label. */
function groupNameField(pod: KObject): string {
  return pod.metadata.annotations?.[KueueLabel.PodGroupName] !== undefined
    ? path('annotations', KueueLabel.PodGroupName)
    : path('labels', KueueLabel.PodGroupName);
}

const hasGate = (pod: Pod, gate: string) => pod.spec?.schedulingGates?.some((g) => g.name === gate) ?? false;

function suspendedByParent(pod: KObject): boolean {
  return pod.metadata.annotations?.[KueueRuntimeKey.PodSuspendingParent] !== undefined;
}

/** In scope of the webhook: a suspending parent, or a managed namespace and no integration owner. */
function inScope(pod: Pod, env: PodWebhookEnv): boolean {
  if (suspendedByParent(pod)) return true;
  return env.namespaceManaged(pod.metadata.namespace ?? 'default') && !ownedByKnownIntegration(pod);
}

// ---------------------------------------------------------------------------------------
// Mutation
// ---------------------------------------------------------------------------------------

/** Changes the pod in place (see the header). Returns whether it was gated now. */
export function defaultPod(pod: Pod, env: PodWebhookEnv): { managed: boolean; gated: boolean } {
  const none = { managed: false, gated: false };
  if (!pod.spec || pod.spec.nodeName) return none;
  if (!inScope(pod, env)) return none;
  const md = pod.metadata;
  const ns = md.namespace ?? 'default';
  if (!md.labels?.[KueueLabel.QueueName] && env.localQueueExists(ns, 'default'))
    md.labels = { ...md.labels, [KueueLabel.QueueName]: 'default' };
  const parent = suspendedByParent(pod);
  const managed = parent || Boolean(md.labels?.[KueueLabel.QueueName]) || env.config.manageJobsWithoutQueueName;
  if (!managed) return none;

  const labels: StringMap = { ...md.labels, [KueueLabel.Managed]: MANAGED_LABEL_VALUE };
  const indexLabel = md.annotations?.[KueueRuntimeKey.PodGroupPodIndexLabel];
  if (indexLabel !== undefined && labels[indexLabel] !== undefined) labels[KueueLabel.PodGroupPodIndex] = labels[indexLabel]!;
  md.labels = labels;
  if (!parent && !(md.finalizers ?? []).includes(KueueRuntimeKey.ManagedFinalizer))
    md.finalizers = [...(md.finalizers ?? []), KueueRuntimeKey.ManagedFinalizer];
  const gates = [...(pod.spec.schedulingGates ?? [])];
  const gated = !hasGate(pod, KueueSchedulingGate.Admission);
  if (gated) gates.push({ name: KueueSchedulingGate.Admission });
  if (!hasGate(pod, KueueSchedulingGate.Topology)) gates.push({ name: KueueSchedulingGate.Topology });
  pod.spec.schedulingGates = gates;
  if (!(parent && md.annotations?.[PodGroupAnnotation.RoleHash] !== undefined)) {
    const r = roleHash(pod, {});
    if (r.hash !== undefined) md.annotations = { ...md.annotations, [PodGroupAnnotation.RoleHash]: r.hash };
  }
  return { managed: true, gated };
}

// ---------------------------------------------------------------------------------------
// Validation
// ---------------------------------------------------------------------------------------

function validateCommon(pod: Pod): string[] {
  const out: string[] = [];
  const labels = pod.metadata.labels ?? {};
  const annotations = pod.metadata.annotations ?? {};
  const managed = labels[KueueLabel.Managed];
  if (managed !== undefined && managed !== MANAGED_LABEL_VALUE)
    out.push(invalid(path('labels', KueueLabel.Managed), managed, MANAGED_LABEL_DETAIL));

  const group = podGroupName(pod);
  const total = annotations[PodGroupAnnotation.TotalCount];
  const declaresSets = hasPodGroupSets(pod) || labels[POD_GROUP_ROLE_LABEL] !== undefined;
  if (group === undefined) {
    if (total !== undefined) return [...out, required(path('labels', KueueLabel.PodGroupName), BOTH_KEYS_DETAIL)];
  } else {
    if (!isDnsSubdomain(group)) out.push(invalid(groupNameField(pod), group, DNS_SUBDOMAIN_PROBLEM));
    if (total === undefined && !declaresSets)
      return [...out, required(path('annotations', PodGroupAnnotation.TotalCount), BOTH_KEYS_DETAIL)];
  }
  if (total !== undefined && (!/^[0-9]+$/.test(total) || !(Number(total) >= 1) || !Number.isSafeInteger(Number(total)))) {
    out.push(
      invalid(
        path('annotations', PodGroupAnnotation.TotalCount),
        total,
        `incorrect annotation value '${PodGroupAnnotation.TotalCount}=${total}': group total count should be greater than zero`,
      ),
    );
  }

  const sets = annotations[KueueRuntimeKey.PodGroupSets];
  if (sets !== undefined) {
    const r = parsePodGroupSets(sets);
    if (r.error) out.push(invalid(path('annotations', KueueRuntimeKey.PodGroupSets), sets, r.error));
    else if (group === undefined)
      out.push(
        required(
          groupNameField(pod),
          `the '${KueueRuntimeKey.PodGroupSets}' annotation declares the PodSets of a pod group: set the group name`,
        ),
      );
  }

  const prebuilt = labels[KueueAnnotation.PrebuiltWorkloadName] ?? annotations[KueueAnnotation.PrebuiltWorkloadName];
  if (group !== undefined && prebuilt !== undefined && prebuilt !== group) {
    const where = labels[KueueAnnotation.PrebuiltWorkloadName] !== undefined ? 'labels' : 'annotations';
    out.push(invalid(path(where, KueueAnnotation.PrebuiltWorkloadName), prebuilt, PREBUILT_DETAIL));
  }

  const tas = topologyRequestFromAnnotations(annotations, 1, {}, {});
  for (const e of tas.errors) out.push(`${fieldOf(e)}: Invalid value: ${e.detail}`);
  return out;
}

function fieldOf(e: InputError): string {
  return e.where.field ?? 'metadata.annotations';
}

function validateUpdate(pod: Pod, old: Pod): string[] {
  const out: string[] = [];
  const oldGroup = podGroupName(old);
  const group = podGroupName(pod);
  if (oldGroup !== undefined && group !== oldGroup) out.push(invalid(groupNameField(old), group ?? '', IMMUTABLE_DETAIL));
  const retriable = KueueRuntimeKey.RetriableInGroup;
  if (group !== undefined && old.metadata.annotations?.[retriable] === 'false' && pod.metadata.annotations?.[retriable] !== 'false') {
    out.push(forbidden(path('annotations', retriable), UNRETRIABLE_DETAIL));
  }
  const oldRole = old.metadata.annotations?.[PodGroupAnnotation.RoleHash];
  const role = pod.metadata.annotations?.[PodGroupAnnotation.RoleHash];
  if (old.metadata.labels?.[KueueLabel.Managed] === MANAGED_LABEL_VALUE && oldRole !== undefined && role !== oldRole) {
    out.push(invalid(path('annotations', PodGroupAnnotation.RoleHash), role ?? '', IMMUTABLE_DETAIL));
  }
  const oldQueue = old.metadata.labels?.[KueueLabel.QueueName];
  const queue = pod.metadata.labels?.[KueueLabel.QueueName];
  if (
    old.metadata.labels?.[KueueLabel.Managed] === MANAGED_LABEL_VALUE &&
    !hasGate(old, KueueSchedulingGate.Admission) &&
    oldQueue !== queue
  ) {
    out.push(invalid(path('labels', KueueLabel.QueueName), queue ?? '', IMMUTABLE_DETAIL));
  }
  return out;
}

/** The validating hook's answer for one request. */
export function validatePod(req: AdmissionRequest, env: PodWebhookEnv): AdmissionResponse {
  const pod = req.object as Pod;
  if (!suspendedByParent(pod) && ownedByKnownIntegration(pod)) {
    return pod.metadata.labels?.[KueueLabel.Managed] === MANAGED_LABEL_VALUE ? { warnings: [OWNER_MANAGED_WARNING] } : {};
  }
  if (!inScope(pod, env)) return {};
  const denied = validateCommon(pod);
  if (req.operation === 'UPDATE' && req.old) denied.push(...validateUpdate(pod, req.old as Pod));
  return denied.length > 0 ? { denied } : {};
}

// ---------------------------------------------------------------------------------------
// Registration
// ---------------------------------------------------------------------------------------

/** The hooks over a controller context (namespaces and LocalQueues from its informers). */
export function podWebhookHooks(ctx: ControllerContext<TopoqueueConfig>): AdmissionHook[] {
  const namespaces = ctx.informers.for('Namespace');
  const localQueues = ctx.informers.for('LocalQueue');
  const env: PodWebhookEnv = {
    config: ctx.config,
    namespaceManaged: (ns) => namespaceManaged(ctx.config.managedJobsNamespaceSelector, namespaces, ns),
    localQueueExists: (ns, name) => localQueues.get(ns, name) !== undefined,
  };
  return [
    {
      name: POD_MUTATING_WEBHOOK,
      kinds: ['Pod'],
      operations: ['CREATE'],
      type: 'mutating',
      admit(req) {
        // kueue_pods_gated_total is counted by the controller when the gated pod is stored.
        if (frameworkEnabled(ctx.config, POD_FRAMEWORK)) defaultPod(req.object as Pod, env);
      },
    },
    {
      name: POD_VALIDATING_WEBHOOK,
      kinds: ['Pod'],
      operations: ['CREATE', 'UPDATE'],
      type: 'validating',
      admit: (req) => (frameworkEnabled(ctx.config, POD_FRAMEWORK) ? validatePod(req, env) : {}),
    },
  ];
}

/** Registers the pod webhook on the context's store. */
export function registerPodWebhook(ctx: ControllerContext<TopoqueueConfig>): void {
  for (const h of podWebhookHooks(ctx)) ctx.store.addAdmissionHook(h);
}
