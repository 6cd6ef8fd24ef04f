// What the embedded cluster's job controllers share: one reconciler ('job-controllers') runs
// a stand-in per job framework of the registry (integrations/registry.ts); keys are
// `<framework>/<namespace>/<name>` where the framework's name tells the stand-in (batch/v1
// Job and Volcano's Job are both kind `Job` in the store, so the kind alone cannot). Pods
// and child objects are indexed by the uid of their controller owner; their events enqueue
// that owner.
//
// The skeleton (StandIn): find the object in the informer of its framework's kind; skip it
// when gone, being deleted or of another apiVersion; refuse it (a Warning Event, nothing
// created) when the framework's check finds a problem, by default the API schema's verdict;
// else sync it. A framework's stand-in supplies only the sync and, where it differs, the check.
//
// Stand-ins write through the store like any controller, so every watcher sees each change;
// they rely on the embedded store's synchronous watch (a write's event is in the informer
// before the write returns), so they keep no creation expectations.

import { apiGroup } from '../integrations/workload-name.ts';
import { CoreApiVersion } from '../api/api-versions.ts';
import type { Condition, KObject, OwnerReference, Pod, PodTemplateSpec, StringMap, TypeMeta } from '../api/objects.ts';
import type { JobFramework } from '../integrations/framework.ts';
import { isTerminal } from '../api/objects.ts';
import { parseObject } from '../api/schemas.ts';
import { podTemplate } from '../api/schema-parts.ts';
import type { EventRecorder } from '../runtime/events.ts';
import type { Informer } from '../runtime/informer.ts';
import type { ControllerContext, ReconcileResult } from '../runtime/manager.ts';
import { deepCopy, isConflict, isNotFound, retryOnConflict } from '../runtime/store.ts';
import type { WorkQueue } from '../runtime/work-queue.ts';
import type { TopoqueueConfig } from '../controllers/config.ts';

/** Informer index: objects by the uid of their controller owner. */
export const BY_CONTROLLER_UID = 'cluster/controller-uid';

export const controllerUidIndex = (o: KObject): string[] => {
  const ref = controllerRef(o);
  return ref ? [ref.uid] : [];
};

/** The key tag of a pod with the Job tracking finalizer whose Job is gone (not a framework name). */
export const ORPHAN_POD_TAG = 'OrphanPod';

export const jobKey = (tag: string, namespace: string | undefined, name: string): string => `${tag}/${namespace ?? 'default'}/${name}`;

/** The parts of a key; the tag (a framework name) may itself hold a '/', namespaces and names cannot. */
export function splitJobKey(key: string): { tag: string; namespace: string; name: string } {
  const b = key.lastIndexOf('/');
  const a = key.lastIndexOf('/', b - 1);
  return { tag: key.slice(0, a), namespace: key.slice(a + 1, b), name: key.slice(b + 1) };
}

export function controllerRef(o: KObject): OwnerReference | undefined {
  return o.metadata.ownerReferences?.find((r) => r.controller === true);
}

/** The owner reference a controller puts on what it creates. */
export function ownerReference(owner: KObject): OwnerReference & { blockOwnerDeletion: boolean } {
  return {
    apiVersion: owner.apiVersion,
    kind: owner.kind,
    name: owner.metadata.name,
    uid: owner.metadata.uid!,
    controller: true,
    blockOwnerDeletion: true,
  };
}

export const isDeleting = (o: KObject): boolean => o.metadata.deletionTimestamp !== undefined;
/** Neither finished nor being deleted (what job controllers count as `active`). */
export const isActive = (p: Pod): boolean => !isTerminal(p) && !isDeleting(p);

export interface PodOptions {
  name?: string;
  generateName?: string;
  labels?: StringMap;
  annotations?: StringMap;
  finalizers?: string[];
}

/** A Pod from a template, owned (controller) by `owner`; extra labels and annotations win over the template's. */
export function podFromTemplate(owner: KObject, template: PodTemplateSpec | undefined, opts: PodOptions): Pod {
  const labels = { ...template?.metadata?.labels, ...opts.labels };
  const annotations = { ...template?.metadata?.annotations, ...opts.annotations };
  const metadata: Pod['metadata'] = {
    name: opts.name ?? '',
    namespace: owner.metadata.namespace ?? 'default',
    ownerReferences: [ownerReference(owner)],
  };
  if (opts.generateName && !opts.name) metadata.generateName = opts.generateName;
  if (Object.keys(labels).length > 0) metadata.labels = labels;
  if (Object.keys(annotations).length > 0) metadata.annotations = annotations;
  if (opts.finalizers && opts.finalizers.length > 0) metadata.finalizers = [...opts.finalizers];
  const spec = deepCopy(template?.spec ?? { containers: [] });
  return { apiVersion: CoreApiVersion.V1, kind: 'Pod', metadata, spec, status: { phase: 'Pending' } };
}

/**
 * Sets a condition in a Kubernetes-style list (Job, JobSet, MPIJob, HyperJob): the transition
 * time moves only when the status changes. Returns the new list.
 */
export function withCondition(
  conditions: readonly Condition[] | undefined,
  c: Omit<Condition, 'lastTransitionTime'>,
  now: string,
): Condition[] {
  const out = [...(conditions ?? [])];
  const i = out.findIndex((x) => x.type === c.type);
  const old = i >= 0 ? out[i] : undefined;
  const next: Condition = {
    ...c,
    lastTransitionTime: old && old.status === c.status && old.lastTransitionTime ? old.lastTransitionTime : now,
  };
  if (old && old.status === next.status && old.reason === next.reason && old.message === next.message) return out;
  if (i >= 0) out[i] = next;
  else out.push(next);
  return out;
}

export const conditionTrue = (conditions: readonly Condition[] | undefined, type: string): boolean =>
  conditions?.some((c) => c.type === type && c.status === 'True') === true;

/**
 * Writes `status` when it differs from the stored one (status subresource, retried on
 * conflict). The write replaces the whole status, so the stored object is not deep-copied
 * first (retryOnConflict would copy the Job's spec and template for nothing); the store
 * copies `status`, which the caller may go on changing.
 */
export async function writeStatus(ctx: ControllerContext<TopoqueueConfig>, obj: KObject, status: object): Promise<void> {
  if (sameJsonText((obj as { status?: unknown }).status ?? {}, status)) return;
  for (let attempt = 1; ; attempt++) {
    const o = await ctx.store.get(obj.kind, obj.metadata.namespace, obj.metadata.name);
    if (!o || o.metadata.uid !== obj.metadata.uid || sameJsonText((o as { status?: unknown }).status ?? {}, status)) return;
    try {
      await ctx.store.updateStatus({ ...o, status } as KObject);
      return;
    } catch (e) {
      if (!isConflict(e) || attempt >= STATUS_ATTEMPTS) throw e;
    }
  }
}

/**
 * JSON.stringify(a) === JSON.stringify(b) for JSON-shaped data (plain objects, arrays,
 * strings, finite numbers, booleans, null; undefined members left out), key order included,
 * without writing either text: the job controllers compare the status they want with the
 * stored one on every reconcile.
 */
export function sameJsonText(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return JSON.stringify(a) === JSON.stringify(b);
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (!Array.isArray(a) && (!isPlain(a) || !isPlain(b))) return JSON.stringify(a) === JSON.stringify(b);
  if (Array.isArray(a)) {
    const y = b as unknown[];
    if (a.length !== y.length) return false;
    for (let i = 0; i < a.length; i++) {
      // In an array, undefined is written as null.
      if (!sameJsonText(a[i] === undefined ? null : a[i], y[i] === undefined ? null : y[i])) return false;
    }
    return true;
  }
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  const x = a as Record<string, unknown>;
  const y = b as Record<string, unknown>;
  let i = 0;
  let j = 0;
  for (;;) {
    while (i < ka.length && x[ka[i]!] === undefined) i++;
    while (j < kb.length && y[kb[j]!] === undefined) j++;
    if (i === ka.length || j === kb.length) return i === ka.length && j === kb.length;
    const k = ka[i]!;
    if (k !== kb[j] || !sameJsonText(x[k], y[k])) return false;
    i++;
    j++;
  }
}

function isPlain(v: object): boolean {
  const p = Object.getPrototypeOf(v);
  return p === Object.prototype || p === null;
}

/** Attempts of a status write that meets conflicts (as retryOnConflict). */
const STATUS_ATTEMPTS = 5;

/** Deletes an object; one already gone is fine. */
export async function deleteQuietly(ctx: ControllerContext<TopoqueueConfig>, obj: KObject): Promise<void> {
  if (isDeleting(obj)) return;
  try {
    await ctx.store.delete(obj.kind, obj.metadata.namespace, obj.metadata.name, { uid: obj.metadata.uid });
  } catch (e) {
    if (!isNotFound(e)) throw e;
  }
}

/** Creates a pod; a denial (a webhook, a name taken) is told as a FailedCreate Event on the owner, then thrown (retried with backoff). */
export async function createPod(env: KindEnv, owner: KObject, pod: Pod): Promise<void> {
  try {
    await env.ctx.store.create(pod);
  } catch (e) {
    env.recorder.event(owner, 'Warning', 'FailedCreate', `Error creating: ${e instanceof Error ? e.message : String(e)}`);
    throw e;
  }
}

/** Creates a child object (a JobSet's Jobs, a HyperJob's Volcano Jobs), with the same FailedCreate Event on failure. */
export async function createChild(env: KindEnv, owner: KObject, child: KObject): Promise<void> {
  try {
    await env.ctx.store.create(child);
  } catch (e) {
    env.recorder.event(
      owner,
      'Warning',
      'FailedCreate',
      `Error creating ${child.kind} ${child.metadata.name}: ${e instanceof Error ? e.message : String(e)}`,
    );
    throw e;
  }
}

/** Updates a copy of the stored object (spec/metadata), retried on conflict; `change` returns false to write nothing. */
export async function updateObject<T extends KObject>(
  ctx: ControllerContext<TopoqueueConfig>,
  obj: T,
  change: (o: T) => boolean | void,
): Promise<void> {
  await retryOnConflict<T>(ctx.store, obj.kind, obj.metadata.namespace, obj.metadata.name, (o) => {
    if (o.metadata.uid !== obj.metadata.uid) return false;
    return change(o);
  });
}

/**
 * Verdicts by spec object: the store shares an unchanged (frozen) spec between versions, so
 * status writes do not re-parse. A metadata-only change is not re-checked.
 */
const verdicts = new WeakMap<object, string | null>();
let parses = 0;

/** How many times specProblem has parsed an object (tests: what a remembered verdict saves). */
export function specParses(): number {
  return parses;
}

/**
 * Why the API schema refuses a stored job object (its messages joined), or undefined. The
 * verdict is cached per stored object (a new version is a new object).
 */
export function specProblem(obj: KObject): string | undefined {
  const key = ((obj as { spec?: object }).spec ?? obj) as object;
  let v = verdicts.get(key);
  if (v === undefined) {
    parses++;
    const r = parseObject(obj, {});
    v = r.object ? null : r.errors.map((e) => e.message).join('; ');
    verdicts.set(key, v);
  }
  return v ?? undefined;
}

/** The pod template metadata's schema (labels and annotations), to check it on its own. */
const templateMetadata = podTemplate.shape.metadata;

/**
 * A batch/v1 Job whose spec changed only in `suspend` and its pod template's metadata (what
 * the job reconciler changes when it starts or stops the Job: Kueue's labels and annotations)
 * keeps the verdict of the spec before when that was an acceptance and the new template
 * metadata is accepted on its own: the Job schema (api/schemas.ts) has no rule across these
 * fields and no other check, so the whole parse could only say the same. Anything else is
 * left to specProblem's parse. Called with each update the Job informer sees (a handler:
 * it only looks, and remembers).
 */
export function carryVerdict(old: KObject, obj: KObject): void {
  const a = (old as { spec?: unknown }).spec;
  const b = (obj as { spec?: unknown }).spec;
  if (a === b || !isRecord(a) || !isRecord(b) || verdicts.get(a) !== null || verdicts.has(b)) return;
  if (obj.apiVersion !== CoreApiVersion.Batch || obj.kind !== 'Job' || old.apiVersion !== obj.apiVersion || old.kind !== obj.kind) return;
  if (b.suspend !== undefined && typeof b.suspend !== 'boolean') return;
  const ta = a.template;
  const tb = b.template;
  if (!isRecord(ta) || !isRecord(tb)) return;
  if (!sameExcept(a, b, ['suspend', 'template']) || !sameExcept(ta, tb, ['metadata'])) return;
  if (!templateMetadata.safeParse(tb.metadata).success) return;
  verdicts.set(b, null);
}

const isRecord = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** Same JSON text but for some keys (their values and places). */
function sameExcept(a: Record<string, unknown>, b: Record<string, unknown>, keys: readonly string[]): boolean {
  const rest = (o: Record<string, unknown>) => {
    const out: Record<string, unknown> = {};
    for (const k in o) if (!keys.includes(k)) out[k] = o[k];
    return out;
  };
  return sameJsonText(rest(a), rest(b));
}

/** A Warning Event (`InvalidSpec`) on a job object the controller cannot run. */
export function refuse(env: KindEnv, obj: KObject, problem: string): void {
  env.recorder.event(obj, 'Warning', 'InvalidSpec', `nothing is created: ${problem}`);
}

/** What every KindController gets from the shared reconciler. */
export interface KindEnv {
  ctx: ControllerContext<TopoqueueConfig>;
  queue: WorkQueue;
  recorder: EventRecorder;
  pods: Informer<Pod>;
  /** Pods whose controller owner has this uid (the pod informer's index). */
  podsOf(uid: string | undefined): Pod[];
}

/** What the shared reconciler sees of a stand-in. */
export interface KindController {
  readonly framework: JobFramework;
  /** The key tag: the framework's name. */
  readonly tag: string;
  /** The store kind watched (several frameworks may share one kind). */
  readonly kind: string;
  setup(env: KindEnv): void;
  /** Is this object (or owner reference) of this stand-in's framework? */
  owns(ref: TypeMeta): boolean;
  reconcile(namespace: string, name: string): Promise<ReconcileResult | void>;
}

/**
 * The stand-in of one job framework (the skeleton of the header). A subclass names its
 * framework, implements sync, and overrides check and setup where its framework differs.
 */
export abstract class StandIn<T extends KObject = KObject> implements KindController {
  abstract readonly framework: JobFramework;
  /** Owner references match by exact apiVersion instead of by API group (batch/v1 Job: the batch group has other kinds' versions). */
  protected readonly exactVersion: boolean = false;
  protected env!: KindEnv;
  protected objects!: Informer<T>;

  /** The key tag: the framework's name. */
  get tag(): string {
    return this.framework.name;
  }

  /** The store kind watched (several frameworks may share one kind). */
  get kind(): string {
    return this.framework.job.kind;
  }

  setup(env: KindEnv): void {
    this.env = env;
    this.objects = env.ctx.informers.for<T>(this.kind);
  }

  /** Is this object (or owner reference) of this stand-in's framework? */
  owns(ref: TypeMeta): boolean {
    const job = this.framework.job;
    if (ref.kind !== job.kind) return false;
    return this.exactVersion ? ref.apiVersion === job.apiVersion : apiGroup(ref.apiVersion) === apiGroup(job.apiVersion);
  }

  async reconcile(namespace: string, name: string): Promise<ReconcileResult | void> {
    const obj = this.objects.get(namespace, name);
    if (!obj || isDeleting(obj) || obj.apiVersion !== this.framework.job.apiVersion) return;
    const problem = this.check(obj);
    if (problem) return refuse(this.env, obj, problem);
    await this.sync(obj);
  }

  /** Why the object cannot run, refused before sync; by default the API schema's verdict (specProblem). */
  protected check(obj: T): string | undefined {
    return specProblem(obj);
  }

  /** Does what the framework's controller does for one object of the kind. */
  protected abstract sync(obj: T): Promise<void>;
}
