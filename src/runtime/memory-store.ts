// The in-memory object store: the embedded cluster's API server. It keeps one map per kind,
// numbers every write with a store-wide resourceVersion, runs admission hooks, honours
// finalizers, and tells watchers after each commit (synchronously, in commit order).
// See store.ts for the contract.

import { labelSelectorMatches } from '../api/label-selector.ts';
import type { KObject } from '../api/objects.ts';
import { formatTime } from '../api/time.ts';
import type { Clock } from './clock.ts';
import { SharedValues } from './shared-values.ts';
import {
  AlreadyExistsError,
  type AdmissionHook,
  type AdmissionRequest,
  BadRequestError,
  deepCopy,
  ConflictError,
  type DeleteOptions,
  InvalidError,
  type ListOptions,
  copyUnfrozen,
  type ListResult,
  type ObjectOfKind,
  NotFoundError,
  type ObjectStore,
  type Operation,
  type WatchEvent,
  type WatchHandler,
  type WatchOptions,
  sharedKey,
} from './store.ts';

/** Kinds without a namespace (Kubernetes' cluster-scoped resources that topoqueue uses). */
export const CLUSTER_SCOPED_KINDS: ReadonlySet<string> = new Set([
  'Node',
  'Namespace',
  'ClusterQueue',
  'Cohort',
  'ResourceFlavor',
  'Topology',
  'WorkloadPriorityClass',
  'PriorityClass',
  'AdmissionCheck',
  'HyperNode',
  'SimulationEvent',
]);

export interface MemoryStoreOptions {
  clock: Clock;
  /** Deep-freeze stored objects so a caller that changes a shared object fails loudly (default true). */
  freeze?: boolean;
  /** Where committed writes go besides memory (the durable store's database). */
  persister?: StorePersister;
  /** Objects and counters to start from (what a durable store read back at open). */
  restore?: { objects: Iterable<KObject>; counters: StoreCounters };
}

/** The store's counters: last resourceVersion, last uid, generateName suffixes handed out. */
export interface StoreCounters {
  resourceVersion: number;
  uid: number;
  generated: number;
}

/**
 * Takes every committed write, in commit order, synchronously at the commit (before the
 * watchers hear of it). The async write methods resolve only after `flushed()` does.
 */
export interface StorePersister {
  /** Throws when no write may start (closed, or an earlier write failed to reach the disk). */
  writable(): void;
  /** `object` as stored, or undefined when the write removed it; `key` as `objectKey`. */
  commit(kind: string, key: string, object: KObject | undefined, counters: StoreCounters): void;
  /** Resolves once every write handed to `commit` so far is on disk; rejects if one failed. */
  flushed(): Promise<void>;
}

interface Watcher {
  handler: WatchHandler;
  namespace?: string;
}

export class MemoryStore implements ObjectStore {
  private rv = 0;
  private uid = 0;
  private generated = 0;
  private readonly kinds = new Map<string, Map<string, KObject>>();
  private readonly watchers = new Map<string, Watcher[]>();
  private readonly hooks: AdmissionHook[] = [];
  private readonly clock: Clock;
  private readonly freeze: boolean;
  private readonly persister: StorePersister | undefined;
  /** Equal parts of the stored objects, kept once (they are frozen, so they may be shared). */
  private readonly shared = new SharedValues();
  /** Writes so far, by operation (for the benchmark and the report). */
  readonly writes = { create: 0, update: 0, status: 0, delete: 0 };

  constructor(opts: MemoryStoreOptions) {
    this.clock = opts.clock;
    this.freeze = opts.freeze ?? true;
    this.persister = opts.persister;
    if (opts.restore) {
      for (const o of opts.restore.objects) {
        this.seal(o);
        this.bucket(o.kind).set(this.key(o.kind, o.metadata.namespace, o.metadata.name), o);
      }
      ({ resourceVersion: this.rv, uid: this.uid, generated: this.generated } = opts.restore.counters);
    }
  }

  namespaced(kind: string): boolean {
    return !CLUSTER_SCOPED_KINDS.has(kind);
  }

  get resourceVersion(): string {
    return String(this.rv);
  }

  get<K extends string>(kind: K, namespace: string | undefined, name: string): Promise<ObjectOfKind<K> | undefined>;
  get<T extends KObject>(kind: string, namespace: string | undefined, name: string): Promise<T | undefined>;
  async get(kind: string, namespace: string | undefined, name: string): Promise<KObject | undefined> {
    return this.getSync(kind, namespace, name);
  }

  /** The stored object, read synchronously (the embedded cluster's stand-ins and tests). */
  getSync<K extends string>(kind: K, namespace: string | undefined, name: string): ObjectOfKind<K> | undefined;
  getSync<T extends KObject>(kind: string, namespace: string | undefined, name: string): T | undefined;
  getSync<T extends KObject>(kind: string, namespace: string | undefined, name: string): T | undefined {
    return this.kinds.get(kind)?.get(this.key(kind, namespace, name)) as T | undefined;
  }

  list<K extends string>(kind: K, opts?: ListOptions): Promise<ListResult<ObjectOfKind<K>>>;
  list<T extends KObject>(kind: string, opts?: ListOptions): Promise<ListResult<T>>;
  async list(kind: string, opts: ListOptions = {}): Promise<ListResult<KObject>> {
    return { items: this.listSync(kind, opts), resourceVersion: String(this.rv) };
  }

  listSync<K extends string>(kind: K, opts?: ListOptions): ObjectOfKind<K>[];
  listSync<T extends KObject>(kind: string, opts?: ListOptions): T[];
  listSync<T extends KObject>(kind: string, opts: ListOptions = {}): T[] {
    const all = this.kinds.get(kind);
    if (!all) return [];
    const out: T[] = [];
    const ns = this.namespaced(kind) ? opts.namespace : undefined;
    for (const o of all.values()) {
      if (ns !== undefined && o.metadata.namespace !== ns) continue;
      if (opts.labelSelector && !labelSelectorMatches(opts.labelSelector, o.metadata.labels)) continue;
      out.push(o as T);
    }
    return out;
  }

  /** Every kind that has objects, with how many. */
  counts(): Map<string, number> {
    return new Map([...this.kinds].map(([k, m]) => [k, m.size]));
  }

  watch<K extends string>(kind: K, handler: WatchHandler<ObjectOfKind<K>>, opts?: WatchOptions): () => void;
  watch<T extends KObject>(kind: string, handler: WatchHandler<T>, opts?: WatchOptions): () => void;
  watch<T extends KObject>(kind: string, handler: WatchHandler<T>, opts: WatchOptions = {}): () => void {
    if (opts.resourceVersion !== undefined && opts.resourceVersion !== '' && opts.resourceVersion !== String(this.rv)) {
      throw new BadRequestError(
        `too old resource version: ${opts.resourceVersion} (${this.rv}); list again and watch from the list's resourceVersion`,
      );
    }
    const w: Watcher = { handler: handler as WatchHandler, namespace: this.namespaced(kind) ? opts.namespace : undefined };
    const list = this.watchers.get(kind) ?? [];
    list.push(w);
    this.watchers.set(kind, list);
    return () => {
      const l = this.watchers.get(kind);
      if (!l) return;
      const i = l.indexOf(w);
      if (i >= 0) l.splice(i, 1);
    };
  }

  addAdmissionHook(hook: AdmissionHook): void {
    this.hooks.push(hook);
  }

  async create<T extends KObject>(input: T): Promise<T> {
    return this.persisted(this.createSync(input));
  }

  createSync<T extends KObject>(input: T): T {
    this.persister?.writable();
    const obj = deepCopy(input);
    const kind = obj.kind;
    if (!kind || !obj.apiVersion) throw new BadRequestError('the object has no apiVersion or kind');
    const md = obj.metadata ?? (obj.metadata = { name: '' });
    if (!md.name && md.generateName) md.name = md.generateName + this.suffix();
    if (!md.name)
      throw new InvalidError(`${kind} is invalid: metadata.name: Required value: name or generateName is required`, ['metadata.name']);
    if (this.namespaced(kind)) md.namespace ??= 'default';
    else delete md.namespace;
    const key = this.key(kind, md.namespace, md.name);
    const all = this.bucket(kind);
    if (all.has(key)) throw new AlreadyExistsError(kind, md.name);
    this.admit('CREATE', obj, undefined, false);
    md.uid = this.newUid();
    md.creationTimestamp = formatTime(this.clock.now() / 1000);
    delete md.deletionTimestamp;
    md.generation = 1;
    md.resourceVersion = String(++this.rv);
    this.seal(obj);
    all.set(key, obj);
    this.writes.create++;
    this.commit(kind, key, obj);
    this.notify(kind, { type: 'ADDED', object: obj });
    return obj;
  }

  async update<T extends KObject>(input: T): Promise<T> {
    return this.persisted(this.write(input, false));
  }

  async updateStatus<T extends KObject>(input: T): Promise<T> {
    return this.persisted(this.write(input, true));
  }

  updateSync<T extends KObject>(input: T): T {
    return this.write(input, false);
  }

  updateStatusSync<T extends KObject>(input: T): T {
    return this.write(input, true);
  }

  delete<K extends string>(
    kind: K,
    namespace: string | undefined,
    name: string,
    opts?: DeleteOptions,
  ): Promise<ObjectOfKind<K> | undefined>;
  delete<T extends KObject>(kind: string, namespace: string | undefined, name: string, opts?: DeleteOptions): Promise<T | undefined>;
  async delete(kind: string, namespace: string | undefined, name: string, opts: DeleteOptions = {}): Promise<KObject | undefined> {
    return this.persisted(this.deleteSync(kind, namespace, name, opts));
  }

  deleteSync<K extends string>(kind: K, namespace: string | undefined, name: string, opts?: DeleteOptions): ObjectOfKind<K> | undefined;
  deleteSync<T extends KObject>(kind: string, namespace: string | undefined, name: string, opts?: DeleteOptions): T | undefined;
  deleteSync<T extends KObject>(kind: string, namespace: string | undefined, name: string, opts: DeleteOptions = {}): T | undefined {
    this.persister?.writable();
    const ns = this.namespaced(kind) ? (namespace ?? 'default') : undefined;
    const key = this.key(kind, ns, name);
    const all = this.bucket(kind);
    const old = all.get(key);
    if (!old) throw new NotFoundError(kind, ns, name);
    if (
      (opts.resourceVersion !== undefined && opts.resourceVersion !== old.metadata.resourceVersion) ||
      (opts.uid !== undefined && opts.uid !== old.metadata.uid)
    ) {
      throw new ConflictError(kind, name);
    }
    this.admit('DELETE', old, old, false);
    if ((old.metadata.finalizers ?? []).length > 0) {
      if (old.metadata.deletionTimestamp) return old as T;
      const obj = deepCopy(old);
      obj.metadata.deletionTimestamp = formatTime(this.clock.now() / 1000);
      obj.metadata.resourceVersion = String(++this.rv);
      this.seal(obj);
      all.set(key, obj);
      this.writes.delete++;
      this.commit(kind, key, obj);
      this.notify(kind, { type: 'MODIFIED', object: obj, old });
      return obj as T;
    }
    all.delete(key);
    this.rv++;
    this.writes.delete++;
    this.commit(kind, key, undefined);
    this.notify(kind, { type: 'DELETED', object: old, old });
    return undefined;
  }

  private write<T extends KObject>(input: T, status: boolean): T {
    this.persister?.writable();
    const kind = input.kind;
    const md = input.metadata;
    const ns = this.namespaced(kind) ? (md.namespace ?? 'default') : undefined;
    const key = this.key(kind, ns, md.name);
    const all = this.bucket(kind);
    const old = all.get(key);
    if (!old) throw new NotFoundError(kind, ns, md.name);
    if (md.resourceVersion !== undefined && md.resourceVersion !== '' && md.resourceVersion !== old.metadata.resourceVersion) {
      throw new ConflictError(kind, md.name);
    }
    if (md.uid !== undefined && md.uid !== old.metadata.uid) throw new ConflictError(kind, md.name);
    // One copy per write: the caller's part is cloned, the stored part is shared (it is frozen).
    const prev = old as unknown as Record<string, unknown>;
    const given = input as unknown as Record<string, unknown>;
    let obj: KObject;
    let copy: Record<string, unknown>;
    if (status) {
      // The status subresource: only status changes.
      copy = { ...prev, metadata: { ...old.metadata }, status: copyUnfrozen(given.status) };
      if (given.status === undefined) delete copy.status;
      obj = copy as unknown as KObject;
    } else {
      const { status: _ignored, ...rest } = given;
      // The top level and metadata are the store's to set (below); the rest may share what is frozen.
      copy = {};
      for (const k in rest) if (rest[k] !== undefined) copy[k] = copyUnfrozen(rest[k]);
      copy.metadata = { ...copyUnfrozen(input.metadata) };
      if ('status' in prev) copy.status = prev.status;
      obj = copy as unknown as KObject;
      obj.metadata.namespace = ns;
      if (ns === undefined) delete obj.metadata.namespace;
    }
    // Server-owned metadata.
    obj.metadata.uid = old.metadata.uid;
    obj.metadata.creationTimestamp = old.metadata.creationTimestamp;
    if (old.metadata.deletionTimestamp) obj.metadata.deletionTimestamp = old.metadata.deletionTimestamp;
    else delete obj.metadata.deletionTimestamp;
    const gen = old.metadata.generation;
    obj.metadata.generation = !status && specChanged(prev, copy) ? (gen ?? 0) + 1 : gen;
    this.admit('UPDATE', obj, old, status);
    if (old.metadata.deletionTimestamp && (obj.metadata.finalizers ?? []).length === 0) {
      // The last finalizer is gone: the deletion completes.
      all.delete(key);
      this.rv++;
      this.writes.delete++;
      this.commit(kind, key, undefined);
      this.notify(kind, { type: 'DELETED', object: old, old });
      return old as T;
    }
    obj.metadata.resourceVersion = String(++this.rv);
    this.seal(obj);
    all.set(key, obj);
    if (status) this.writes.status++;
    else this.writes.update++;
    this.commit(kind, key, obj);
    this.notify(kind, { type: 'MODIFIED', object: obj, old });
    return obj as T;
  }

  private admit(op: Operation, obj: KObject, old: KObject | undefined, status: boolean): void {
    if (this.hooks.length === 0) return;
    const req: AdmissionRequest = {
      operation: op,
      object: obj,
      ...(old ? { old } : {}),
      ...(status ? { subresource: 'status' as const } : {}),
    };
    const applicable = (h: AdmissionHook) =>
      h.kinds.includes(obj.kind) && h.operations.includes(op) && (!status || h.includeStatus === true);
    for (const type of ['mutating', 'validating'] as const) {
      for (const h of this.hooks) {
        if (h.type !== type || !applicable(h)) continue;
        const r = h.admit(req);
        if (r?.denied && r.denied.length > 0) {
          throw new InvalidError(`admission webhook "${h.name}" denied the request: ${r.denied.join('; ')}`, r.denied);
        }
      }
    }
  }

  private commit(kind: string, key: string, obj: KObject | undefined): void {
    this.persister?.commit(kind, key, obj, { resourceVersion: this.rv, uid: this.uid, generated: this.generated });
  }

  /** `result` once the write that made it is on disk (at once, not even a tick later, without a persister). */
  private persisted<T>(result: T): T | Promise<T> {
    return this.persister ? this.persister.flushed().then(() => result) : result;
  }

  private notify(kind: string, e: WatchEvent): void {
    const ws = this.watchers.get(kind);
    if (!ws || ws.length === 0) return;
    for (const w of [...ws]) {
      if (w.namespace !== undefined && w.namespace !== e.object.metadata.namespace) continue;
      w.handler(e);
    }
  }

  private seal(obj: KObject): void {
    if (!this.freeze) return;
    this.shared.shareBelowSecondLevel(obj);
    deepFreeze(obj);
  }

  private bucket(kind: string): Map<string, KObject> {
    let m = this.kinds.get(kind);
    if (!m) {
      m = new Map();
      this.kinds.set(kind, m);
    }
    return m;
  }

  // Keys are the ones objectKey hands out (one copy for the store and every cache); uids are
  // joined, not concatenated: each is kept for the object's life, and a flat string is a
  // third of the size of a concatenation's tree.
  private key(kind: string, namespace: string | undefined, name: string): string {
    return this.namespaced(kind) ? sharedKey(namespace ?? 'default', name) : name;
  }

  private newUid(): string {
    const n = (++this.uid).toString(16).padStart(12, '0');
    return ['00000000-0000-4000-8000-', n].join('');
  }

  /** generateName suffix: 5 characters from Kubernetes' alphabet, deterministic per store. */
  private suffix(): string {
    const alphabet = 'bcdfghjklmnpqrstvwxz2456789';
    let x = Math.imul(++this.generated, 2654435761) >>> 0;
    let s = '';
    for (let i = 0; i < 5; i++) {
      s += alphabet[x % alphabet.length];
      x = Math.floor(x / alphabet.length);
    }
    return s;
  }
}

function specChanged(a: Record<string, unknown>, b: Record<string, unknown>): boolean {
  if (a.spec === b.spec) return false;
  return JSON.stringify(a.spec) !== JSON.stringify(b.spec);
}

function deepFreeze(o: unknown): void {
  if (o === null || typeof o !== 'object' || Object.isFrozen(o)) return;
  Object.freeze(o);
  // for-in, not Object.values: no array per object (a durable store freezes 100,000 at open).
  for (const k in o) deepFreeze((o as Record<string, unknown>)[k]);
}
