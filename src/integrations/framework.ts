// One record per job framework (Kueue's GenericJob, pkg/controller/jobframework/interface.go):
// its kinds (each names the API schema that parses it, api/schemas.ts), how it builds its
// Workloads, and, for the frameworks the generic job reconciler runs
// (controllers/job-reconciler.ts), the job side: start / stop / suspend as pure object
// transforms, how a pod finds its PodSet, when the job has finished, webhook defaulting.
// Each framework is one file of this folder (job.ts, jobset.ts, ...) declaring its record with
// defineFramework; registry.ts lists them, and every other list derives from that one.
// Plain Pods, Koordinator / scheduler-plugins gangs and Volcano PodGroups form one record
// (volcano-podgroup.ts) with no job side: their Workloads span documents, and the pod-group
// controller runs them.
//
// The job side comes in two families (kueue-core §1d "Suspension"):
//   - suspending (Job, JobSet, MPIJob): the job object itself is suspended; start =
//     merge the PodSet info into its pod templates and unsuspend; stop = suspend and restore
//     the templates from the Workload's PodSets;
//   - pod-gated (LeaderWorkerSet, Volcano Job, HyperJob): their pods are created
//     with the scheduling gate `kueue.x-k8s.io/admission`; start = merge the info into each
//     gated pod and lift the gate; stop = delete the pods (the owner recreates them, gated).
//
// PodSet info of an admitted PodSet (podSetInfos, Kueue's pkg/podset: FromAssignment, Merge,
// RestorePodSpec):
//   1. nodeSelector += nodeLabels of each assigned ResourceFlavor (by flavor name), tolerations +=
//      the flavors' tolerations;
//   2. label `kueue.x-k8s.io/podset`, annotation `kueue.x-k8s.io/workload`, labels
//      `kueue.x-k8s.io/local-queue-name` / `kueue.x-k8s.io/cluster-queue-name`;
//   3. a topology (or delayed topology) assignment: the gate `kueue.x-k8s.io/topology`, and
//      for implicit TAS (no topology request) `kueue.x-k8s.io/podset-unconstrained-topology: "true"`;
//   4. count = the admitted count (partial admission).
// Merging refuses a key the template already has with another value: that is permanent (the
// reconciler finishes the Workload with reason FailedToStart and Kueue's message).

import { KueueAnnotation, KueueLabel, KueueRuntimeKey, KueueSchedulingGate } from '../api/keys.ts';
import type {
  KObject,
  ObjectMeta,
  Pod,
  PodSet,
  PodSpec,
  PodTemplateSpec,
  ResourceFlavor,
  StringMap,
  Toleration,
  Workload,
} from '../api/objects.ts';
import { type KindEntry, kindEntry } from '../api/schemas.ts';
import type { Integration } from './integration.ts';
import { isRunningReadyOrSucceeded, isTerminal } from '../api/objects.ts';
import { isRecord } from '../api/values.ts';

export interface PodSetInfo {
  name: string;
  count: number;
  labels: StringMap;
  annotations: StringMap;
  nodeSelector: StringMap;
  tolerations: Toleration[];
  schedulingGates: { name: string }[];
}

/** A job that finished, as its framework reports it. */
export interface Finish {
  success: boolean;
  message: string;
}

/** What adapters may look up besides the job itself (informer caches). */
export interface AdapterView {
  /** Jobs (batch or Volcano) whose controller is `owner`, by name. */
  childJobs(owner: KObject): KObject[];
}

interface AdapterBase<T extends KObject> {
  /** The store kind (a batch Job and a Volcano Job share the kind `Job`). */
  readonly kind: string;
  readonly apiVersion: string;
  /** Webhook names: `m<hook>.kb.io` / `v<hook>.kb.io` (Kueue's) or `.topoqueue.io` for the Volcano kinds. */
  readonly hookSuffix: string;
  readonly integration: Integration;
  /** Finished, and how; undefined while running. */
  finished(job: T, view: AdapterView): Finish | undefined;
  /** Webhook defaulting on create of a managed job, besides suspension (MPIJob, LWS: pod-index offset). */
  defaultOnCreate?(job: T): void;
}

export interface SuspendingAdapter<T extends KObject = KObject> extends AdapterBase<T> {
  readonly mode: 'suspend';
  isSuspended(job: T): boolean;
  setSuspended(job: T, suspend: boolean): void;
  /** The pod templates of a private copy, by PodSet name, to change in place. */
  templates(job: T): Map<string, PodTemplateSpec>;
  /** Partial admission: run `count` pods of PodSet `podSet` (Job: parallelism). */
  setCount?(job: T, podSet: string, count: number): void;
}

export interface PodPlacement {
  /** Workload name. */
  workload: string;
  podSet: string;
}

export interface PodGatedAdapter<T extends KObject = KObject> extends AdapterBase<T> {
  readonly mode: 'pods';
  /**
   * The Workload and PodSet of a pod of this job; `owner` is the pod's controller (the job,
   * or a child Job of it). undefined when the pod cannot be placed (labels missing).
   */
  placePod(job: T, pod: Pod, owner: KObject): PodPlacement | undefined;
}

export type JobAdapter<T extends KObject = KObject> = SuspendingAdapter<T> | PodGatedAdapter<T>;

/** What a framework file writes for its job side: the kind, apiVersion and integration come from the record. */
export type JobSide<T extends KObject = KObject> =
  Omit<SuspendingAdapter<T>, 'kind' | 'apiVersion' | 'integration'> | Omit<PodGatedAdapter<T>, 'kind' | 'apiVersion' | 'integration'>;

/** One job framework: its kinds with their API schemas, its Workloads, and its job side. */
export interface Framework extends Integration {
  /** The API schema of each of `kinds`, in the same order. */
  readonly schemas: readonly KindEntry[];
  /** The generic job reconciler's part; absent when another controller runs the framework (plain Pods, PodGroups). */
  readonly job?: JobAdapter;
}

/** A framework with a job side: what the job reconciler, its webhooks and the stand-ins serve. */
export type JobFramework = Framework & { readonly job: JobAdapter };

/**
 * The record of a framework, from what its file declares: each kind's schema is looked up in
 * the API registry (a kind without one is a programming error, thrown at load), and the job
 * side, when there is one, serves the first kind and builds its Workloads with the record.
 */
export function defineFramework(spec: Integration & { job: JobSide }): JobFramework;
export function defineFramework(spec: Integration): Framework;
export function defineFramework(spec: Integration & { job?: JobSide }): Framework {
  const schemas = spec.kinds.map((k) => {
    const entry = kindEntry(k.apiVersion, k.kind);
    if (!entry) throw new Error(`framework ${spec.name}: no API schema for ${k.kind} (${k.apiVersion}) in api/schemas.ts`);
    return entry;
  });
  const { job, ...integration } = spec;
  const framework: { -readonly [K in keyof Framework]: Framework[K] } = { ...integration, schemas };
  if (job) {
    const kind = spec.kinds[0]!;
    // In place: a job side's methods may call each other through `this`.
    framework.job = Object.assign(job, { kind: kind.kind, apiVersion: kind.apiVersion, integration: framework }) as JobAdapter;
  }
  return framework;
}

// ---------------------------------------------------------------------------------------
// PodSet info
// ---------------------------------------------------------------------------------------

/** A merge that can never succeed: the template already has the key with another value. */
export class PodSetInfoConflict extends Error {
  constructor(what: string, key: string, value1: string, value2: string) {
    // Kueue: podset.BadPodSetsUpdateError wrapping utilmaps.HaveConflict.
    super(`invalid admission check PodSetUpdate: conflict for ${what}: conflict for key=${key}, value1=${value1}, value2=${value2}`);
    this.name = 'PodSetInfoConflict';
  }
}

export class MissingFlavorError extends Error {}

const isTas = (ps: PodSet | undefined): boolean => {
  const tr = ps?.topologyRequest;
  return tr !== undefined && (tr.required !== undefined || tr.preferred !== undefined || tr.unconstrained !== undefined);
};

/**
 * The PodSet info of every PodSet of an admitted Workload, in the Workload's PodSet order.
 * Throws MissingFlavorError when an assigned ResourceFlavor is unknown (retry later).
 */
export function podSetInfos(wl: Workload, flavor: (name: string) => ResourceFlavor | undefined): PodSetInfo[] {
  const admission = wl.status?.admission;
  const byName = new Map((admission?.podSetAssignments ?? []).map((a) => [a.name, a]));
  return wl.spec.podSets.map((ps) => {
    const a = byName.get(ps.name);
    const info: PodSetInfo = {
      name: ps.name,
      count: a?.count ?? ps.count,
      labels: { [KueueLabel.PodSet]: ps.name },
      annotations: { [KueueAnnotation.Workload]: wl.metadata.name },
      nodeSelector: {},
      tolerations: [],
      schedulingGates: [],
    };
    if (wl.spec.queueName) info.labels[KueueRuntimeKey.LocalQueueNameLabel] = wl.spec.queueName;
    if (admission?.clusterQueue) info.labels[KueueRuntimeKey.ClusterQueueNameLabel] = admission.clusterQueue;
    const flavors = [...new Set(Object.values(a?.flavors ?? {}))].sort();
    for (const name of flavors) {
      const rf = flavor(name);
      if (!rf)
        throw new MissingFlavorError(
          `ResourceFlavor "${name}" not found (assigned to PodSet ${ps.name} of Workload ${wl.metadata.namespace}/${wl.metadata.name})`,
        );
      Object.assign(info.nodeSelector, rf.spec?.nodeLabels ?? {});
      for (const t of rf.spec?.tolerations ?? []) addToleration(info.tolerations, t);
    }
    const delayed = (a as { delayedTopologyRequest?: unknown } | undefined)?.delayedTopologyRequest;
    if (a?.topologyAssignment !== undefined || delayed !== undefined) {
      info.schedulingGates.push({ name: KueueSchedulingGate.Topology });
      if (!isTas(ps)) info.annotations[KueueAnnotation.PodSetUnconstrainedTopology] = 'true';
    }
    return info;
  });
}

/** The info a Workload PodSet's own template carries: what stopping restores (podset.FromPodSet). */
export function podSetInfoOfTemplate(ps: PodSet): PodSetInfo {
  const t = ps.template;
  return {
    name: ps.name,
    count: ps.count,
    labels: { ...t.metadata?.labels },
    annotations: { ...t.metadata?.annotations },
    nodeSelector: { ...t.spec.nodeSelector },
    tolerations: structuredClone(t.spec.tolerations ?? []),
    schedulingGates: structuredClone(t.spec.schedulingGates ?? []),
  };
}

function addToleration(list: Toleration[], t: Toleration): void {
  const key = canonicalJson(t);
  if (!list.some((x) => canonicalJson(x) === key)) list.push(structuredClone(t));
}

function checkConflicts(what: string, have: StringMap | undefined, add: StringMap): void {
  for (const k of Object.keys(add).sort()) {
    const v = have?.[k];
    if (v !== undefined && v !== add[k]) throw new PodSetInfoConflict(what, k, v, add[k]!);
  }
}

type Meta = Pick<ObjectMeta, 'labels' | 'annotations'>;

/** Merges `info` into a (private) template or pod: maps by key, tolerations and gates appended once. Throws PodSetInfoConflict. */
export function mergePodSetInfo(meta: Meta, spec: PodSpec, info: PodSetInfo): void {
  checkConflicts('annotations', meta.annotations, info.annotations);
  checkConflicts('labels', meta.labels, info.labels);
  checkConflicts('nodeSelector', spec.nodeSelector, info.nodeSelector);
  if (Object.keys(info.annotations).length > 0) meta.annotations = { ...meta.annotations, ...info.annotations };
  if (Object.keys(info.labels).length > 0) meta.labels = { ...meta.labels, ...info.labels };
  if (Object.keys(info.nodeSelector).length > 0) spec.nodeSelector = { ...spec.nodeSelector, ...info.nodeSelector };
  if (info.tolerations.length > 0) {
    const tolerations = [...(spec.tolerations ?? [])];
    for (const t of info.tolerations) addToleration(tolerations, t);
    spec.tolerations = tolerations;
  }
  for (const g of info.schedulingGates) {
    if (!(spec.schedulingGates ?? []).some((x) => x.name === g.name))
      spec.schedulingGates = [...(spec.schedulingGates ?? []), { name: g.name }];
  }
}

/** Sets a template's labels, annotations, nodeSelector, tolerations and gates back to `info`'s. True when anything changed. */
export function restorePodSetInfo(meta: Meta, spec: PodSpec, info: PodSetInfo): boolean {
  const before = canonicalJson([meta.labels, meta.annotations, spec.nodeSelector, spec.tolerations, spec.schedulingGates]);
  const set = <K extends string>(o: Record<K, unknown>, k: K, v: unknown, empty: boolean) => {
    if (empty) delete o[k];
    else o[k] = v;
  };
  set(meta as Record<string, unknown>, 'labels', { ...info.labels }, Object.keys(info.labels).length === 0);
  set(meta as Record<string, unknown>, 'annotations', { ...info.annotations }, Object.keys(info.annotations).length === 0);
  set(spec as Record<string, unknown>, 'nodeSelector', { ...info.nodeSelector }, Object.keys(info.nodeSelector).length === 0);
  set(spec as Record<string, unknown>, 'tolerations', structuredClone(info.tolerations), info.tolerations.length === 0);
  set(spec as Record<string, unknown>, 'schedulingGates', structuredClone(info.schedulingGates), info.schedulingGates.length === 0);
  return canonicalJson([meta.labels, meta.annotations, spec.nodeSelector, spec.tolerations, spec.schedulingGates]) !== before;
}

/** Template metadata of a private copy, created when absent. */
export function templateMeta(t: PodTemplateSpec): Meta {
  return (t.metadata ??= {});
}

// ---------------------------------------------------------------------------------------
// Comparing PodSets (Kueue's equality.ComparePodSetSlices)
// ---------------------------------------------------------------------------------------

/**
 * JSON with sorted keys, leaving out what Kubernetes cannot tell from absent: undefined and
 * null values, empty lists and empty maps.
 */
export function canonicalJson(v: unknown): string {
  return JSON.stringify(canonical(v)) ?? 'null';
}

function canonical(v: unknown): unknown {
  if (Array.isArray(v)) {
    const items = v.map(canonical).filter((x) => x !== undefined);
    return items.length === 0 ? undefined : items;
  }
  if (v === null || v === undefined) return undefined;
  if (typeof v !== 'object') return v;
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(v).sort()) {
    const x = canonical((v as Record<string, unknown>)[k]);
    if (x !== undefined) out[k] = x;
  }
  return Object.keys(out).length === 0 ? undefined : out;
}

/**
 * Same PodSets: names in order, counts, minCounts and pod specs. `specText` writes a pod spec
 * as canonical JSON (a caller may remember the texts of objects it compares often).
 */
export function samePodSets(
  a: readonly PodSet[],
  b: readonly PodSet[],
  specText: (spec: PodSet['template']['spec']) => string = canonicalJson,
): boolean {
  if (a.length !== b.length) return false;
  return a.every((x, i) => {
    const y = b[i]!;
    return x.name === y.name && x.count === y.count && x.minCount === y.minCount && specText(x.template.spec) === specText(y.template.spec);
  });
}

/**
 * The PodSets a started job shows: the Workload's, with the PodSet info merged into the
 * templates and the admitted counts (Kueue's expectedRunningPodSets). undefined when they
 * cannot be built (unknown flavor, conflicting info).
 */
export function runningPodSets(wl: Workload, infos: readonly PodSetInfo[]): PodSet[] | undefined {
  const byName = new Map(infos.map((i) => [i.name, i]));
  try {
    return wl.spec.podSets.map((ps) => {
      const out = structuredClone(ps);
      const info = byName.get(ps.name);
      if (info) {
        mergePodSetInfo(templateMeta(out.template), out.template.spec, info);
        if (ps.minCount !== undefined) out.count = info.count;
      }
      return out;
    });
  } catch (e) {
    if (e instanceof PodSetInfoConflict) return undefined;
    throw e;
  }
}

// ---------------------------------------------------------------------------------------
// Pods
// ---------------------------------------------------------------------------------------

export const hasGate = (p: Pod, gate: string): boolean => (p.spec.schedulingGates ?? []).some((g) => g.name === gate);

/** A pod that holds (or may soon hold) resources: not finished, not being deleted, not waiting for admission. */
export const isActivePod = (p: Pod): boolean =>
  !isTerminal(p) && !p.metadata.deletionTimestamp && !hasGate(p, KueueSchedulingGate.Admission);

/** Running with the Ready condition, or Succeeded: what PodsReady counts. */
export const isReadyOrSucceeded = (p: Pod): boolean => !p.metadata.deletionTimestamp && isRunningReadyOrSucceeded(p);

/** The first True condition of `types` in a status' conditions. */
export function trueCondition(obj: KObject, types: readonly string[]): { type: string; message?: string } | undefined {
  const conditions = (obj as { status?: { conditions?: { type: string; status: string; message?: string }[] } }).status?.conditions ?? [];
  return conditions.find((c) => c.status === 'True' && types.includes(c.type));
}

/**
 * Finished by a True condition of `success` or `failure` type (Job, JobSet, MPIJob), with its
 * message, else `<kind> finished successfully` / `<kind> failed`.
 */
export function finishByCondition(job: KObject, success: string, failure: string): Finish | undefined {
  const c = trueCondition(job, [success, failure]);
  if (!c) return undefined;
  const ok = c.type === success;
  return { success: ok, message: c.message || (ok ? `${job.kind} finished successfully` : `${job.kind} failed`) };
}

/** `spec` of a (shared, read-only) job object as a record; {} when absent. */
export function readSpec(job: KObject): Record<string, unknown> {
  const spec = (job as unknown as { spec?: unknown }).spec;
  return isRecord(spec) ? spec : {};
}

/** `spec` of a private copy of a job object as a record (created when absent). */
export function specOf(job: KObject): Record<string, unknown> {
  const o = job as unknown as { spec?: unknown };
  if (!isRecord(o.spec)) o.spec = {};
  return o.spec as Record<string, unknown>;
}
