// Plain Pods -> Workloads, as Kueue's Pod integration (pkg/controller/jobs/pod, spec
// kueue-core §1e, KEP-976).
//
// Which pods: unbound ones (no spec.nodeName), not Succeeded/Failed, not being deleted.
// Bound pods are usage and are read elsewhere.
//
// Single pod (no group name): Workload `pod-<name>-<hash>`, one PodSet `main` of count 1,
// controller owner reference to the pod, label `kueue.x-k8s.io/job-uid`.
//
// Pod group (label or annotation `kueue.x-k8s.io/pod-group-name`, the annotation wins;
// annotation `kueue.x-k8s.io/pod-group-total-count`), per namespace and group name:
//   1. validate every member: both keys set, total count a whole number >= 1, group name
//      a valid object name (the webhook's rules and messages);
//   2. members must agree on the total count and the queue name (Kueue's messages); a
//      `kueue.x-k8s.io/pod-group-pod-index` must be an unsigned integer below the total;
//   3. fast admission (`kueue.x-k8s.io/pod-group-fast-admission: "true"` on the first pod):
//      one PodSet named by the first pod's role hash, count = total count;
//   4. otherwise fewer pods than the total count -> no Workload, Kueue's
//      `'<group>' group has fewer runnable pods than expected`; more -> the excess is
//      dropped in Kueue's order (keep pods with the managed finalizer, then ungated ones,
//      then older ones; then by name), as Kueue deletes excess pods;
//   5. PodSets: one per role hash, count = pods with that hash, template from the first
//      such pod by name, sorted by name; more than 18 roles is an error;
//   6. Workload named after the group, annotation `kueue.x-k8s.io/is-group-workload`,
//      non-controller owner references to every member, no job-uid label.
// Members are ordered by name (what a list from the API server returns).
//
// Every PodSet template keeps the pod's labels and annotations (Kueue keeps only the
// spec; placement here reads TAS annotations and labels from templates).

import { CoreApiVersion, KueueApiVersion } from '../api/api-versions.ts';
import { InputError, type Where } from '../api/errors.ts';
import { KueueLabel, KueueSchedulingGate } from '../api/keys.ts';
import type { KObject, Pod, PodSet, PodSpec, Workload } from '../api/objects.ts';
import { QuantityError, formatQuantity, parseQuantity } from '../api/quantity.ts';
import { topologyRequestFromAnnotations } from '../api/topology-request.ts';
import { DNS_SUBDOMAIN_MAX, isDnsSubdomain } from '../api/names.ts';
import { compareStrings, isRecord } from '../api/values.ts';
import type { Integration, IntegrationContext, SourcedObject, SourcedWorkload, ToWorkloadsResult } from './integration.ts';
import {
  IS_GROUP_WORKLOAD_ANNOTATION,
  MAX_PODSETS,
  RESOURCE_IN_USE_FINALIZER,
  podPriority,
  setPriorityClassRef,
  keyField,
  namespaceOf,
  ownedWorkload,
  ownerReference,
  podSetTemplate,
  provReqAnnotations,
  sha256Hex,
  whereIn,
} from './workload-name.ts';

export const PodKind = { apiVersion: CoreApiVersion.V1, kind: 'Pod' } as const;

/** Pod-group keys missing from api/keys.ts. */
export const PodGroupAnnotation = {
  TotalCount: 'kueue.x-k8s.io/pod-group-total-count',
  FastAdmission: 'kueue.x-k8s.io/pod-group-fast-admission',
  RoleHash: 'kueue.x-k8s.io/role-hash',
} as const;
/** Finalizer the pod webhook puts on managed pods. */
export const MANAGED_POD_FINALIZER = 'kueue.x-k8s.io/managed';

const DEFAULT_PODSET_NAME = 'main';

export const BOTH_KEYS_DETAIL = `both the '${PodGroupAnnotation.TotalCount}' annotation and the '${KueueLabel.PodGroupName}' label should be set`;

// ---------------------------------------------------------------------------------------
// Role hash
// ---------------------------------------------------------------------------------------
//
// SHA-256 over Go's json.Marshal of {"spec": shape}, first 8 hex digits (spec kueue-core
// §1e "Role hash"). The shape is a map (keys sorted): initContainers and containers
// (each {"ports", "resources": {"requests"}}), nodeSelector, affinity, tolerations,
// runtimeClassName, priority, topologySpreadConstraints, overhead, resourceClaims, and
// "resources": {"requests"} (pod-level) only when spec.resources is set. Typed Kubernetes
// structs inside it keep Go's field order and omitempty rules.
//
// The pod is read as Kueue's webhook sees it, after the API server's defaulting and a
// JSON round trip: empty omitempty slices and maps are gone (so they encode as null),
// quantities are canonical, container ports default `protocol: TCP`, and container
// requests default from limits. `spec.priority` is used as written (the Priority
// admission plugin's value is not known here). A `kueue.x-k8s.io/role-hash` annotation is
// not trusted: the hash is always recomputed (spec: a user-supplied hash lets pods with
// different requests share one role).

type Enc = (v: unknown) => string;
interface Field {
  name: string;
  enc: Enc;
  /** Go's omitempty: leave the field out when it holds its zero value. */
  omitempty?: boolean;
  /** The field's Go kind, for omitempty and for the zero value. */
  kind: 'string' | 'int' | 'ptr' | 'slice' | 'map' | 'struct';
}

function isEmpty(kind: Field['kind'], v: unknown): boolean {
  if (v === undefined || v === null) return true;
  switch (kind) {
    case 'string':
      return v === '';
    case 'int':
      return v === 0;
    case 'slice':
      return Array.isArray(v) && v.length === 0;
    case 'map':
      return isRecord(v) && Object.keys(v).length === 0;
    default:
      return false;
  }
}

/** Go's string encoding: JSON plus escaped <, >, & and U+2028/2029 (HTML-safe by default). */
export function goString(v: unknown): string {
  return JSON.stringify(String(v)).replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

const str: Enc = (v) => goString(v ?? '');
const int: Enc = (v) => String(typeof v === 'number' ? v : Number(v ?? 0));
const ptr =
  (inner: Enc): Enc =>
  (v) =>
    v === undefined || v === null ? 'null' : inner(v);
const slice =
  (item: Enc): Enc =>
  (v) =>
    Array.isArray(v) ? `[${v.map(item).join(',')}]` : 'null';
function sortedMap(v: unknown, value: Enc): string {
  if (!isRecord(v)) return 'null';
  const keys = Object.keys(v).sort();
  return `{${keys.map((k) => `${goString(k)}:${value(v[k])}`).join(',')}}`;
}
const stringMap: Enc = (v) => sortedMap(v, str);
const struct =
  (fields: Field[]): Enc =>
  (v) => {
    const o = isRecord(v) ? v : {};
    const parts: string[] = [];
    for (const f of fields) {
      if (f.omitempty && isEmpty(f.kind, o[f.name])) continue;
      parts.push(`${goString(f.name)}:${f.enc(o[f.name])}`);
    }
    return `{${parts.join(',')}}`;
  };
const F = (name: string, kind: Field['kind'], enc: Enc, omitempty = false): Field => ({ name, kind, enc, omitempty });

const requirement = struct([F('key', 'string', str), F('operator', 'string', str), F('values', 'slice', slice(str), true)]);
const nodeSelectorTerm = struct([
  F('matchExpressions', 'slice', slice(requirement), true),
  F('matchFields', 'slice', slice(requirement), true),
]);
const labelSelector = struct([F('matchLabels', 'map', stringMap, true), F('matchExpressions', 'slice', slice(requirement), true)]);
const podAffinityTerm = struct([
  F('labelSelector', 'ptr', ptr(labelSelector), true),
  F('namespaces', 'slice', slice(str), true),
  F('topologyKey', 'string', str),
  F('namespaceSelector', 'ptr', ptr(labelSelector), true),
  F('matchLabelKeys', 'slice', slice(str), true),
  F('mismatchLabelKeys', 'slice', slice(str), true),
]);
const podAffinity = struct([
  F('requiredDuringSchedulingIgnoredDuringExecution', 'slice', slice(podAffinityTerm), true),
  F(
    'preferredDuringSchedulingIgnoredDuringExecution',
    'slice',
    slice(struct([F('weight', 'int', int), F('podAffinityTerm', 'struct', podAffinityTerm)])),
    true,
  ),
]);
const affinity = struct([
  F(
    'nodeAffinity',
    'ptr',
    ptr(
      struct([
        F(
          'requiredDuringSchedulingIgnoredDuringExecution',
          'ptr',
          ptr(struct([F('nodeSelectorTerms', 'slice', slice(nodeSelectorTerm))])),
          true,
        ),
        F(
          'preferredDuringSchedulingIgnoredDuringExecution',
          'slice',
          slice(struct([F('weight', 'int', int), F('preference', 'struct', nodeSelectorTerm)])),
          true,
        ),
      ]),
    ),
    true,
  ),
  F('podAffinity', 'ptr', ptr(podAffinity), true),
  F('podAntiAffinity', 'ptr', ptr(podAffinity), true),
]);
const toleration = struct([
  F('key', 'string', str, true),
  F('operator', 'string', str, true),
  F('value', 'string', str, true),
  F('effect', 'string', str, true),
  F('tolerationSeconds', 'ptr', ptr(int), true),
]);
const topologySpreadConstraint = struct([
  F('maxSkew', 'int', int),
  F('topologyKey', 'string', str),
  F('whenUnsatisfiable', 'string', str),
  F('labelSelector', 'ptr', ptr(labelSelector), true),
  F('minDomains', 'ptr', ptr(int), true),
  F('nodeAffinityPolicy', 'ptr', ptr(str), true),
  F('nodeTaintsPolicy', 'ptr', ptr(str), true),
  F('matchLabelKeys', 'slice', slice(str), true),
]);
const containerPort = struct([
  F('name', 'string', str, true),
  F('hostPort', 'int', int, true),
  F('containerPort', 'int', int),
  F('protocol', 'string', str, true),
  F('hostIP', 'string', str, true),
]);
const podResourceClaim = struct([
  F('name', 'string', str),
  F('resourceClaimName', 'ptr', ptr(str), true),
  F('resourceClaimTemplateName', 'ptr', ptr(str), true),
]);

/** A value the API server would have dropped (omitempty, empty) reads as absent. */
function present(v: unknown): unknown {
  if (Array.isArray(v) && v.length === 0) return undefined;
  if (isRecord(v) && Object.keys(v).length === 0) return undefined;
  return v;
}

/** The role-hash shape of a pod spec as compact Go JSON. Throws QuantityError on a bad quantity. */
export function roleShapeJSON(spec: PodSpec): string {
  const quantities: Enc = (v) => sortedMap(v, (q) => goString(formatQuantity(parseQuantity(q as string))));
  const requestsOf = (c: Record<string, unknown>): unknown => {
    const res = isRecord(c.resources) ? c.resources : {};
    const requests = isRecord(res.requests) ? { ...res.requests } : undefined;
    const limits = isRecord(res.limits) ? res.limits : undefined;
    if (!present(limits)) return present(requests);
    const out: Record<string, unknown> = { ...requests };
    for (const [k, v] of Object.entries(limits!)) if (!(k in out)) out[k] = v;
    return present(out);
  };
  const containers = (list: unknown): string => {
    if (!Array.isArray(list) || list.length === 0) return 'null';
    const items = list.map((c: unknown) => {
      const cc = isRecord(c) ? c : {};
      const ports = present(cc.ports);
      const defaulted = Array.isArray(ports)
        ? ports.map((p: unknown) => (isRecord(p) && !p.protocol ? { ...p, protocol: 'TCP' } : p))
        : undefined;
      return `{"ports":${slice(containerPort)(defaulted)},"resources":{"requests":${quantities(requestsOf(cc))}}}`;
    });
    return `[${items.join(',')}]`;
  };

  const s = spec as Record<string, unknown>;
  const fields: Record<string, string> = {
    affinity: ptr(affinity)(s.affinity),
    containers: containers(s.containers),
    initContainers: containers(s.initContainers),
    nodeSelector: ptr(stringMap)(present(s.nodeSelector)),
    overhead: ptr(quantities)(present(s.overhead)),
    priority: ptr(int)(s.priority),
    resourceClaims: slice(podResourceClaim)(present(s.resourceClaims)),
    runtimeClassName: ptr(str)(s.runtimeClassName),
    tolerations: slice(toleration)(present(s.tolerations)),
    topologySpreadConstraints: slice(topologySpreadConstraint)(present(s.topologySpreadConstraints)),
  };
  if (s.resources !== undefined && s.resources !== null) {
    const res = isRecord(s.resources) ? s.resources : {};
    fields.resources = `{"requests":${quantities(present(res.requests))}}`;
  }
  const keys = Object.keys(fields).sort();
  return `{"spec":{${keys.map((k) => `${goString(k)}:${fields[k]}`).join(',')}}}`;
}

/** 8 hex digits of SHA-256 over a role shape (as produced by roleShapeJSON). */
export function roleHashOfShape(shapeJSON: string): string {
  return sha256Hex(shapeJSON).slice(0, 8);
}

/** The pod's role hash, or an error naming the field that could not be read. */
export function roleHash(pod: Pod, where: Where): { hash?: string; error?: InputError } {
  try {
    return { hash: roleHashOfShape(roleShapeJSON(pod.spec)) };
  } catch (e) {
    if (e instanceof QuantityError) {
      return { error: new InputError({ ...where, field: 'spec' }, `cannot compute the pod's role hash: ${e.message}`) };
    }
    throw e;
  }
}

// ---------------------------------------------------------------------------------------
// Pods -> Workloads
// ---------------------------------------------------------------------------------------

/** Pods Kueue would still admit: unbound, not finished, not being deleted. */
export function isPendingPlainPod(pod: Pod): boolean {
  if (pod.spec?.nodeName) return false;
  const phase = pod.status?.phase;
  if (phase === 'Succeeded' || phase === 'Failed') return false;
  return !pod.metadata.deletionTimestamp;
}

/** Group name: annotation `kueue.x-k8s.io/pod-group-name` wins over the label of the same key. */
export function podGroupName(pod: KObject): string | undefined {
  return pod.metadata.annotations?.[KueueLabel.PodGroupName] ?? pod.metadata.labels?.[KueueLabel.PodGroupName];
}

const TOTAL_COUNT_FIELD = keyField('metadata.annotations', PodGroupAnnotation.TotalCount);
const POD_INDEX_FIELD = keyField('metadata.labels', KueueLabel.PodGroupPodIndex);

/** A member pod and where it was read. */
export interface PodAt {
  pod: Pod;
  where: Where;
}

/** The queue name a member pod asks for (`kueue.x-k8s.io/queue-name`, '' without). */
export function podQueue(m: PodAt): string {
  return m.pod.metadata.labels?.[KueueLabel.QueueName] ?? '';
}

/** Kueue's error when two members of one group ask for different queues. */
export function queueMismatch(first: PodAt, m: PodAt): InputError | undefined {
  if (podQueue(m) === podQueue(first)) return undefined;
  return new InputError(
    { ...m.where, field: keyField('metadata.labels', KueueLabel.QueueName) },
    `pods '${first.pod.metadata.name}' and '${m.pod.metadata.name}' has different queue names: ${podQueue(first)}!=${podQueue(m)}`,
  );
}

/** Members by role hash, in their order; a pod whose hash cannot be computed adds an error. */
export function groupByRole<M extends PodAt>(members: readonly M[], errors: InputError[]): Map<string, M[]> {
  const roles = new Map<string, M[]>();
  for (const m of members) {
    const r = roleHash(m.pod, m.where);
    if (r.error) {
      errors.push(r.error);
      continue;
    }
    const list = roles.get(r.hash!) ?? [];
    list.push(m);
    roles.set(r.hash!, list);
  }
  return roles;
}

interface Member extends PodAt {
  index: number;
  total: number;
}

/** A PodSet of `count` pods shaped like `pod`, with the topology request its TAS annotations ask for. */
export function podPodSet(pod: Pod, name: string, count: number, where: Where, errors: InputError[]): PodSet {
  const template = podSetTemplate({ metadata: pod.metadata, spec: pod.spec });
  const tr = topologyRequestFromAnnotations(
    pod.metadata.annotations,
    count,
    { podIndexLabel: KueueLabel.PodGroupPodIndex },
    { ...where, field: undefined },
  );
  errors.push(...tr.errors);
  const ps: PodSet = { name, template, count };
  if (tr.request) ps.topologyRequest = tr.request;
  return ps;
}

/** Kueue's single-pod Workload (`pod-<name>-<hash>`, PodSet `main`), or undefined with errors added. */
export function singlePodWorkload(pod: Pod, where: Where, errors: InputError[]): Workload | undefined {
  const before = errors.length;
  const ps = podPodSet(pod, DEFAULT_PODSET_NAME, 1, where, errors);
  return errors.length > before ? undefined : ownedWorkload(pod, [ps]);
}

/**
 * Kueue's order for keeping pods when a group has more than its total count: pods with the
 * managed finalizer, then ungated ones, then older ones; then by name. The excess is the tail.
 */
export function podKeepOrder(a: Pod, b: Pod): number {
  const fin = (p: Pod) => (p.metadata.finalizers?.includes(MANAGED_POD_FINALIZER) ? 0 : 1);
  const gated = (p: Pod) => (p.spec.schedulingGates?.some((g) => g.name === KueueSchedulingGate.Admission) ? 1 : 0);
  const created = (p: Pod) => p.metadata.creationTimestamp ?? '\uffff';
  const x = a.metadata.name;
  const y = b.metadata.name;
  return fin(a) - fin(b) || gated(a) - gated(b) || compareStrings(created(a), created(b)) || compareStrings(x, y);
}

function keepOrder(a: Member, b: Member): number {
  return podKeepOrder(a.pod, b.pod);
}

function byName(a: Member, b: Member): number {
  return compareStrings(a.pod.metadata.name, b.pod.metadata.name);
}

function groupWorkload(group: string, members: Member[], errors: InputError[]): Workload | undefined {
  const first = members[0]!;
  const total = first.total;
  const before = errors.length;

  // 2. Members agree on the total count and the queue name.
  for (const m of members.slice(1)) {
    const a = first.pod.metadata.name;
    const b = m.pod.metadata.name;
    if (m.total !== total) {
      errors.push(
        new InputError(
          { ...m.where, field: TOTAL_COUNT_FIELD },
          `pods '${a}' and '${b}' has different '${PodGroupAnnotation.TotalCount}' values: ${total}!=${m.total}`,
        ),
      );
    }
    const mismatch = queueMismatch(first, m);
    if (mismatch) errors.push(mismatch);
  }
  // A pod index (TAS rank ordering) is an unsigned integer below the total count.
  for (const m of members) {
    const raw = m.pod.metadata.labels?.[KueueLabel.PodGroupPodIndex];
    if (raw === undefined || (/^(0|[1-9][0-9]*)$/.test(raw) && Number(raw) < total)) continue;
    errors.push(
      new InputError(
        { ...m.where, field: POD_INDEX_FIELD },
        `Invalid value: ${JSON.stringify(raw)}: the pod index of group '${group}' must be an unsigned integer below its ${PodGroupAnnotation.TotalCount} (${total})`,
      ),
    );
  }
  if (errors.length > before) return undefined;

  // 3-5. PodSets by role.
  const roles = new Map<string, Member[]>();
  const fast = first.pod.metadata.annotations?.[PodGroupAnnotation.FastAdmission] === 'true';
  let kept: Member[];
  if (fast) {
    kept = members;
  } else if (members.length < total) {
    errors.push(
      new InputError(
        { ...first.where, field: TOTAL_COUNT_FIELD },
        `'${group}' group has fewer runnable pods than expected: ${members.length} of ` +
          `${PodGroupAnnotation.TotalCount}=${total} pending (${members.map((m) => m.pod.metadata.name).join(', ')}); ` +
          'add the missing pods or lower the total count',
      ),
    );
    return undefined;
  } else {
    kept = [...members].sort(keepOrder).slice(0, total).sort(byName);
  }
  for (const [hash, list] of groupByRole(fast ? [first] : kept, errors)) roles.set(hash, list);
  if (errors.length > before) return undefined;
  if (roles.size > MAX_PODSETS) {
    errors.push(new InputError({ ...first.where, field: undefined }, `pod group can't include more than ${MAX_PODSETS} roles`));
    return undefined;
  }
  const podSets = [...roles.keys()].sort().map((hash) => {
    const rm = roles.get(hash)!;
    return podPodSet(rm[0]!.pod, hash, fast ? total : rm.length, rm[0]!.where, errors);
  });
  if (errors.length > before) return undefined;

  // 6. The group's Workload.
  const pod = first.pod;
  const wl: Workload = {
    apiVersion: KueueApiVersion.V1beta2,
    kind: 'Workload',
    metadata: {
      name: group,
      namespace: namespaceOf(pod),
      annotations: { ...provReqAnnotations(pod.metadata.annotations), [IS_GROUP_WORKLOAD_ANNOTATION]: 'true' },
      ownerReferences: kept.map((m) => ownerReference(m.pod, false)),
      finalizers: [RESOURCE_IN_USE_FINALIZER],
    },
    spec: { podSets },
  };
  if (podQueue(first)) wl.spec.queueName = podQueue(first);
  const priority = podPriority(pod, podSets);
  if (priority !== undefined) wl.spec.priority = priority;
  setPriorityClassRef(wl, pod);
  return wl;
}

/**
 * All plain Pods of a manifest set -> Workloads: single pods one by one, pod groups
 * across documents. `first` is the index in `items` of each Workload's first member.
 */
export function workloadsFromPods(items: readonly SourcedObject[]): {
  workloads: (SourcedWorkload & { first: number })[];
  errors: InputError[];
} {
  const errors: InputError[] = [];
  const out: (SourcedWorkload & { first: number })[] = [];
  const groups = new Map<string, { name: string; members: Member[]; invalid: boolean }>();

  items.forEach(({ object, where: base }, index) => {
    const pod = object as Pod;
    const where = whereIn(base, pod);
    if (!isRecord(pod.spec) || !Array.isArray(pod.spec.containers)) {
      errors.push(new InputError({ ...where, field: 'spec.containers' }, 'a Pod needs spec.containers'));
      return;
    }
    if (!isPendingPlainPod(pod)) return;

    const group = podGroupName(pod);
    const rawTotal = pod.metadata.annotations?.[PodGroupAnnotation.TotalCount];
    if (group === undefined) {
      if (rawTotal !== undefined) {
        errors.push(new InputError({ ...where, field: keyField('metadata.labels', KueueLabel.PodGroupName) }, BOTH_KEYS_DETAIL));
        return;
      }
      const wl = singlePodWorkload(pod, where, errors);
      if (wl) out.push({ workload: wl, source: base, first: index });
      return;
    }

    const key = `${namespaceOf(pod)}\n${group}`;
    const entry = groups.get(key) ?? { name: group, members: [], invalid: false };
    groups.set(key, entry);
    let total = NaN;
    if (rawTotal === undefined) {
      errors.push(new InputError({ ...where, field: TOTAL_COUNT_FIELD }, BOTH_KEYS_DETAIL));
    } else {
      total = /^[0-9]+$/.test(rawTotal) ? Number(rawTotal) : NaN;
      if (!Number.isSafeInteger(total) || total < 1) {
        errors.push(
          new InputError(
            { ...where, field: TOTAL_COUNT_FIELD },
            `incorrect annotation value '${PodGroupAnnotation.TotalCount}=${rawTotal}': group total count should be greater than zero`,
          ),
        );
        total = NaN;
      }
    }
    if (!isDnsSubdomain(group)) {
      const field = pod.metadata.annotations?.[KueueLabel.PodGroupName] !== undefined ? 'metadata.annotations' : 'metadata.labels';
      errors.push(
        new InputError(
          { ...where, field: keyField(field, KueueLabel.PodGroupName) },
          `pod group name ${JSON.stringify(group)} must be a valid object name: at most ${DNS_SUBDOMAIN_MAX} lowercase ` +
            "letters, digits, '-' and '.', starting and ending with a letter or digit",
        ),
      );
      total = NaN;
    }
    if (Number.isNaN(total)) entry.invalid = true;
    else entry.members.push({ pod, where, index, total });
  });

  for (const { name, members, invalid } of groups.values()) {
    if (invalid || members.length === 0) continue;
    const firstIn = members.reduce((a, b) => (b.index < a.index ? b : a));
    const wl = groupWorkload(name, [...members].sort(byName), errors);
    if (wl) out.push({ workload: wl, source: items[firstIn.index]!.where, first: firstIn.index });
  }
  out.sort((a, b) => a.first - b.first);
  return { workloads: out, errors };
}

export function podToWorkloads(obj: KObject, ctx: IntegrationContext): ToWorkloadsResult {
  const r = workloadsFromPods([{ object: obj, where: ctx.where }]);
  return { workloads: r.workloads.map((w) => w.workload), errors: r.errors };
}

export const podIntegration: Integration = {
  name: 'pod',
  kinds: [PodKind],
  toWorkloads: podToWorkloads,
  toWorkloadsAcross: workloadsFromPods,
};
