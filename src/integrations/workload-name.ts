// The Workload an owner gets: its name, the owner's identity, and the skeleton every
// integration fills with PodSets (spec kueue-core §1d "Workload naming" and
// jobframework.NewWorkload / ConstructWorkload).
//
// Naming: `<lowercase kind>-<owner name>`, cut to 253-6 characters, then `-` and the
// first 5 hex digits of SHA-1 over `Kind\nGroup\nownerName\nownerUID`.
//
// Manifests have no uid. The owner uid is then `metadata.uid` if set, else derived from
// the object's identity: SHA-1 over `topoqueue/manifest-uid\nGroup\nKind\nnamespace\nname`
// laid out as an RFC 4122 version-5 style UUID. It is stable across runs (same manifest,
// same Workload name), unique per kind (a Job and a JobSet with one name do not
// collide) and a valid label value, so it can go into `kueue.x-k8s.io/job-uid` as is.

// node:crypto is deterministic hashing only; the pure-layer rule targets I/O.
import { createHash } from 'node:crypto';
import { InputError, type Where } from '../api/errors.ts';
import { KueueApiVersion, KueueLabel } from '../api/keys.ts';
import type { KObject, OwnerReference, Pod, PodSet, PodTemplateSpec, StringMap, Workload } from '../api/objects.ts';
import { isRecord } from '../api/values.ts';
import { isLabelValue } from '../api/names.ts';

/** Finalizer Kueue puts on every Workload created by an integration (missing from api/keys.ts). */
export const RESOURCE_IN_USE_FINALIZER = 'kueue.x-k8s.io/resource-in-use';
/** Annotations with this prefix are copied from the job to its Workload (admissioncheck.FilterProvReqAnnotations). */
export const PROVREQ_ANNOTATION_PREFIX = 'provreq.kueue.x-k8s.io/';
export const DEFAULT_NAMESPACE = 'default';
/** Marks a Workload built for a group of pods: pod groups, LWS groups (missing from api/keys.ts). */
export const IS_GROUP_WORKLOAD_ANNOTATION = 'kueue.x-k8s.io/is-group-workload';
/** Workload API limit on `spec.podSets` (and on roles in a pod group). */
export const MAX_PODSETS = 18;

const MAX_NAME_LENGTH = 253;
const HASH_LENGTH = 5;
/** Room for `-` and the 5-hex hash. */
export const MAX_WORKLOAD_NAME_PREFIX = MAX_NAME_LENGTH - HASH_LENGTH - 1;

export function sha1Hex(s: string): string {
  return createHash('sha1').update(s, 'utf8').digest('hex');
}

export function sha256Hex(s: string): string {
  return createHash('sha256').update(s, 'utf8').digest('hex');
}

/** API group of an apiVersion: `batch/v1` -> `batch`, `v1` -> `` (core). */
export function apiGroup(apiVersion: string): string {
  const slash = apiVersion.indexOf('/');
  return slash < 0 ? '' : apiVersion.slice(0, slash);
}

export interface OwnerIdentity {
  kind: string;
  group: string;
  name: string;
  uid: string;
}

/** GetWorkloadNameForOwnerWithGVK. */
export function workloadNameForOwner(owner: OwnerIdentity): string {
  let prefixed = `${owner.kind.toLowerCase()}-${owner.name}`;
  if (prefixed.length > MAX_WORKLOAD_NAME_PREFIX) prefixed = prefixed.slice(0, MAX_WORKLOAD_NAME_PREFIX);
  const hash = sha1Hex(`${owner.kind}\n${owner.group}\n${owner.name}\n${owner.uid}`);
  return `${prefixed}-${hash.slice(0, HASH_LENGTH)}`;
}

export function namespaceOf(obj: KObject): string {
  return obj.metadata.namespace || DEFAULT_NAMESPACE;
}

/** Deterministic uid for an object written without one (see the header comment). */
export function manifestUid(group: string, kind: string, namespace: string, name: string): string {
  const h = sha1Hex(`topoqueue/manifest-uid\n${group}\n${kind}\n${namespace}\n${name}`);
  const version = '5' + h.slice(13, 16);
  const variant = ((parseInt(h[16]!, 16) & 0x3) | 0x8).toString(16) + h.slice(17, 20);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${version}-${variant}-${h.slice(20, 32)}`;
}

export function ownerUid(obj: KObject): string {
  return obj.metadata.uid || manifestUid(apiGroup(obj.apiVersion), obj.kind, namespaceOf(obj), obj.metadata.name);
}

export function ownerIdentity(obj: KObject): OwnerIdentity {
  return { kind: obj.kind, group: apiGroup(obj.apiVersion), name: obj.metadata.name, uid: ownerUid(obj) };
}

export function ownerReference(obj: KObject, controller: boolean): OwnerReference {
  return { apiVersion: obj.apiVersion, kind: obj.kind, name: obj.metadata.name, uid: ownerUid(obj), controller };
}

/** `Kind/namespace/name` for messages. */
export function objectRef(obj: KObject): string {
  return `${obj.kind}/${namespaceOf(obj)}/${obj.metadata.name}`;
}

/** The caller's place (file, document) narrowed to this object and, optionally, a field. */
export function whereIn(base: Where, obj: KObject, field?: string): Where {
  const w: Where = { ...base, object: base.object ?? objectRef(obj) };
  if (field !== undefined) w.field = field;
  else delete w.field;
  return w;
}

/** Field path of an annotation or label, e.g. `metadata.annotations["kueue.x-k8s.io/x"]`. */
export function keyField(prefix: string, key: string): string {
  return `${prefix}[${JSON.stringify(key)}]`;
}

/**
 * A PodSet template: a deep copy of the pod template whose metadata keeps only labels
 * and annotations (the only metadata a Workload PodSet template may carry).
 * `extraAnnotations` are set on the copy (e.g. what an integration's webhook adds).
 */
export function podSetTemplate(template: PodTemplateSpec, extraAnnotations?: StringMap): PodTemplateSpec {
  const metadata: NonNullable<PodTemplateSpec['metadata']> = {};
  if (template.metadata?.labels) metadata.labels = { ...template.metadata.labels };
  const annotations = { ...template.metadata?.annotations, ...extraAnnotations };
  if (Object.keys(annotations).length > 0) metadata.annotations = annotations;
  return { metadata, spec: structuredClone(template.spec) };
}

/**
 * spec.priority as Kueue would set it, where that needs no lookup: Kueue resolves the
 * WorkloadPriorityClass label, then a `priorityClassName` in the templates, else 0.
 * Resolving a class needs the cluster, so with a class named the priority is left
 * undefined; with none it is the default, 0.
 */
export function defaultPriority(owner: KObject, podSets: PodSet[]): number | undefined {
  if (owner.metadata.labels?.[KueueLabel.PriorityClass]) return undefined;
  if (podSets.some((ps) => ps.template.spec.priorityClassName)) return undefined;
  return 0;
}

/**
 * A pod's Workload priority (plain pods, pod groups, gangs): with no WorkloadPriorityClass
 * label, the pod's own `spec.priority` (the API server's value from its PriorityClass),
 * which Kueue reads for pods; else as defaultPriority.
 */
export function podPriority(pod: Pod, podSets: PodSet[]): number | undefined {
  if (pod.metadata.labels?.[KueueLabel.PriorityClass]) return undefined;
  const p = (pod.spec as { priority?: unknown }).priority;
  if (typeof p === 'number' && Number.isSafeInteger(p)) return p;
  return defaultPriority(pod, podSets);
}

/** `spec.priorityClassRef` from the object's `kueue.x-k8s.io/priority-class` label (Jobs, pods, pod groups, gangs alike). */
export function setPriorityClassRef(wl: Workload, from: KObject): void {
  const wpc = from.metadata.labels?.[KueueLabel.PriorityClass];
  if (wpc) wl.spec.priorityClassRef = { group: 'kueue.x-k8s.io', kind: 'WorkloadPriorityClass', name: wpc };
}

export function provReqAnnotations(annotations: StringMap | undefined): StringMap | undefined {
  if (!annotations) return undefined;
  const out: StringMap = {};
  for (const [k, v] of Object.entries(annotations)) if (k.startsWith(PROVREQ_ANNOTATION_PREFIX)) out[k] = v;
  return Object.keys(out).length > 0 ? out : undefined;
}

/**
 * Reads an optional integer field (`count`-like). Absent -> `def`; otherwise it must be
 * an int32 >= `min` (numbers only: Kubernetes int32 fields are not quoted).
 */
export function readInt(value: unknown, def: number, min: number, where: Where, errors: InputError[]): number {
  if (value === undefined || value === null) return def;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > 2 ** 31 - 1) {
    errors.push(new InputError(where, `must be a whole number from ${min} to ${2 ** 31 - 1}, got ${JSON.stringify(value)}`));
    return def;
  }
  return value;
}

/** A pod template at `where`: an object with `spec.containers`, else an error and undefined. */
export function readPodTemplate(value: unknown, where: Where, errors: InputError[]): PodTemplateSpec | undefined {
  if (!isRecord(value) || !isRecord(value.spec) || !Array.isArray(value.spec.containers)) {
    errors.push(new InputError(where, 'a pod template with spec.containers is required'));
    return undefined;
  }
  return value as unknown as PodTemplateSpec;
}

export interface OwnedWorkloadOptions {
  /** Workload name; default: workloadNameForOwner(owner). */
  name?: string;
  /** Extra Workload annotations. */
  annotations?: StringMap;
}

/**
 * The Workload for a job-like owner (jobframework.NewWorkload + ConstructWorkload):
 * owner's namespace, label `kueue.x-k8s.io/job-uid`, controller owner reference,
 * finalizer `kueue.x-k8s.io/resource-in-use`, provreq annotations, `spec.queueName` from
 * the owner's `kueue.x-k8s.io/queue-name` label, and the default priority.
 */
export function ownedWorkload(owner: KObject, podSets: PodSet[], opts: OwnedWorkloadOptions = {}): Workload {
  const id = ownerIdentity(owner);
  const annotations = { ...provReqAnnotations(owner.metadata.annotations), ...opts.annotations };
  const wl: Workload = {
    apiVersion: KueueApiVersion.V1beta2,
    kind: 'Workload',
    metadata: {
      name: opts.name ?? workloadNameForOwner(id),
      namespace: namespaceOf(owner),
      labels: isLabelValue(id.uid) ? { [KueueLabel.JobUID]: id.uid } : {},
      ownerReferences: [ownerReference(owner, true)],
      finalizers: [RESOURCE_IN_USE_FINALIZER],
    },
    spec: { podSets },
  };
  if (Object.keys(annotations).length > 0) wl.metadata.annotations = annotations;
  const queueName = owner.metadata.labels?.[KueueLabel.QueueName];
  if (queueName) wl.spec.queueName = queueName;
  const priority = owner.kind === 'Pod' && owner.apiVersion === 'v1' ? podPriority(owner as Pod, podSets) : defaultPriority(owner, podSets);
  if (priority !== undefined) wl.spec.priority = priority;
  // Kueue names the class on the Workload; its value is resolved where the classes are
  // known (the admission snapshot), which then sets spec.priority.
  setPriorityClassRef(wl, owner);
  // The Workload is created right after its owner: queue order follows the owner's age.
  if (owner.metadata.creationTimestamp) wl.metadata.creationTimestamp = owner.metadata.creationTimestamp;
  return wl;
}

/** Kueue's error when the pods of a group disagree on a label to copy. */
export const LABELS_MISMATCH_MESSAGE = 'constructing workload: pods have different label values';

/**
 * Kueue's labelKeysToCopy: the labels of these keys that the sources carry (a job, or every
 * pod of a group), for the Workload made from them. Sources that lack a key are skipped; two
 * sources with different values of a key are an error (undefined).
 */
export function labelsToCopy(keys: readonly string[], sources: readonly KObject[]): Record<string, string> | undefined {
  const out: Record<string, string> = {};
  for (const key of keys) {
    for (const o of sources) {
      const v = o.metadata.labels?.[key];
      if (v === undefined) continue;
      if (out[key] !== undefined && out[key] !== v) return undefined;
      out[key] = v;
    }
  }
  return out;
}
