// The caches behind the client-backed store (client-store.ts): one per kind, fed by one
// reflector per group serving the kind, after client-go's Reflector.
//
// A reflector lists (in pages of `limit`, following `continue`), then watches from the
// list's resourceVersion with bookmarks and a server-side timeout, and re-watches from the
// last resourceVersion it saw when the stream ends. A 410 Gone (on the request or as an
// ERROR event) means the server no longer has that history: it lists again, and the cache
// turns the difference into events (what vanished is DELETED). Other failures back off
// exponentially (0.8 s doubling to 30 s, with jitter), as client-go's does. A kind the
// server does not serve (404: its CRD is not installed) counts as synced and empty, and is
// tried again after the longest backoff.
//
// Subscribers (the store's watch handlers) get events in the order the server sent them,
// each with the object before it. A write through the store puts its answer into the cache
// at once and resolves when the reflector has delivered that resourceVersion, so the
// writer's next read and its informers agree with what it wrote.

import type { KObject } from '../api/objects.ts';
import { labelSelectorMatches } from '../api/label-selector.ts';
import type { LabelSelector } from '../api/volcano-objects.ts';
import type { ListResult, WatchEventType, WatchHandler } from '../runtime/store.ts';
import type { Resource } from './resources.ts';

type Json = Record<string, unknown>;

export interface Reflected {
  resource: Resource;
  /** GET of the collection with this query string (`?limit=...`). */
  list(query: string): Promise<{ items?: KObject[]; metadata?: { resourceVersion?: string; continue?: string } }>;
  /** Opens a watch; `done` is called once when it ends (null: closed by the server). */
  watch(query: Record<string, string>, onEvent: (type: string, obj: Json) => void, done: (err: unknown) => void): Promise<AbortController>;
}

export interface KindCacheOptions {
  pageSize: number;
  onError?: (resource: string, err: unknown) => void;
  /** How long a write waits for its event before resolving anyway (default 5 s). */
  writeWaitMs?: number;
}

/** The annotation `kubectl apply` keeps the whole applied object in (often the largest field of an object). */
export const LAST_APPLIED_ANNOTATION = 'kubectl.kubernetes.io/last-applied-configuration';

/**
 * Fields no controller reads, dropped on ingest, per kind (`*`: every kind). Only whole
 * fields, never a part of a list: a write from a stripped object is sent as a merge patch of
 * what the controller changed (client-store.ts), and a list in a merge patch replaces the
 * server's list whole.
 */
export const STRIPPED: Readonly<
  Record<string, { metadata?: readonly string[]; annotations?: readonly string[]; status?: readonly string[] }>
> = {
  '*': { metadata: ['managedFields'], annotations: [LAST_APPLIED_ANNOTATION] },
  // Read of a Pod's status: phase, conditions, message, reason, startTime, nominatedNodeName.
  Pod: {
    status: [
      'containerStatuses',
      'initContainerStatuses',
      'ephemeralContainerStatuses',
      'podIP',
      'podIPs',
      'hostIP',
      'hostIPs',
      'qosClass',
      'resourceClaimStatuses',
    ],
  },
  // Read of a Node's status: capacity, allocatable, conditions (and its labels, taints, unschedulable).
  Node: {
    status: [
      'images',
      'volumesInUse',
      'volumesAttached',
      'daemonEndpoints',
      'nodeInfo',
      'addresses',
      'config',
      'features',
      'runtimeHandlers',
    ],
  },
};

/**
 * What the caches keep of an object: without the fields of STRIPPED (nobody here reads them).
 * Writes never lose them on the server: managedFields are kept by the server on any write
 * without them, and every other write from a cached object is a merge patch of what changed.
 */
export function ingest<T extends KObject>(obj: T): T {
  const md = obj.metadata as T['metadata'] & Record<string, unknown>;
  for (const rule of [STRIPPED['*']!, STRIPPED[obj.kind]]) {
    if (!rule) continue;
    for (const f of rule.metadata ?? []) if (md[f] !== undefined) delete md[f];
    const ann = md.annotations;
    if (ann) {
      for (const a of rule.annotations ?? []) if (ann[a] !== undefined) delete ann[a];
      if (Object.keys(ann).length === 0) delete md.annotations;
    }
    const status = (obj as { status?: Record<string, unknown> }).status;
    if (status) for (const f of rule.status ?? []) if (status[f] !== undefined) delete status[f];
  }
  return obj;
}

const BACKOFF_START_MS = 800;
const BACKOFF_MAX_MS = 30_000;

const rvNumber = (rv: string | undefined): number => {
  const n = Number(rv);
  return Number.isFinite(n) ? n : -1;
};

const statusCode = (err: unknown): number | undefined => {
  const e = err as { statusCode?: number; code?: number };
  return typeof e?.statusCode === 'number' ? e.statusCode : typeof e?.code === 'number' ? e.code : undefined;
};

interface Subscriber {
  handler: WatchHandler;
  namespace: string | undefined;
}

interface Waiter {
  group: string;
  rv: number;
  key?: string;
  resolve: () => void;
}

export class KindCache {
  readonly synced: Promise<void>;
  /** Freshest known object per `group|namespace/name` (writes' answers included). */
  private readonly objects = new Map<string, KObject>();
  /** The object as subscribers last saw it (the `old` of the next event). */
  private readonly delivered = new Map<string, KObject>();
  private readonly subscribers = new Set<Subscriber>();
  /** Highest resourceVersion delivered, per group. */
  private readonly seen = new Map<string, number>();
  private readonly waiters = new Set<Waiter>();
  private readonly aborts = new Set<AbortController>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private stopped = false;
  private markSynced!: () => void;
  private pendingSync: number;

  constructor(
    readonly kind: string,
    private readonly reflected: readonly Reflected[],
    private readonly opts: KindCacheOptions,
  ) {
    this.pendingSync = reflected.length;
    this.synced = new Promise((r) => (this.markSynced = r));
    if (this.pendingSync === 0) this.markSynced();
  }

  start(): void {
    for (const r of this.reflected) void this.run(r);
  }

  stop(): void {
    this.stopped = true;
    for (const a of this.aborts) a.abort();
    this.aborts.clear();
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    for (const w of this.waiters) w.resolve();
    this.waiters.clear();
    this.markSynced();
  }

  get(namespace: string | undefined, name: string): KObject | undefined {
    for (const r of this.reflected) {
      const o = this.objects.get(this.key(r.resource.group, namespace, name));
      if (o) return o;
    }
    return undefined;
  }

  list(namespace: string | undefined, selector: LabelSelector | undefined): ListResult<KObject> {
    const items: KObject[] = [];
    for (const o of this.objects.values()) {
      if (namespace !== undefined && o.metadata.namespace !== namespace) continue;
      if (selector && !labelSelectorMatches(selector, o.metadata.labels)) continue;
      items.push(o);
    }
    return { items, resourceVersion: String(Math.max(0, ...this.seen.values())) };
  }

  subscribe(handler: WatchHandler, namespace: string | undefined): () => void {
    const s: Subscriber = { handler, namespace };
    this.subscribers.add(s);
    return () => void this.subscribers.delete(s);
  }

  /** A write's answer: cached at once; resolves once the reflector has delivered it (or after writeWaitMs). */
  noteWrite(r: Resource, obj: KObject): Promise<void> {
    const key = this.key(r.group, obj.metadata.namespace, obj.metadata.name);
    const rv = rvNumber(obj.metadata.resourceVersion);
    const cur = this.objects.get(key);
    if (!cur || rvNumber(cur.metadata.resourceVersion) < rv) this.objects.set(key, obj);
    if ((this.seen.get(r.group) ?? -1) >= rv) return Promise.resolve();
    return this.wait({ group: r.group, rv });
  }

  /** A delete's answer (the object is gone): dropped at once; resolves once the reflector has delivered the deletion. */
  forget(r: Resource, namespace: string | undefined, name: string): Promise<void> {
    const key = this.key(r.group, namespace, name);
    this.objects.delete(key);
    if (!this.delivered.has(key)) return Promise.resolve();
    return this.wait({ group: r.group, rv: Infinity, key });
  }

  private wait(w: Omit<Waiter, 'resolve'>): Promise<void> {
    return new Promise((resolve) => {
      const waiter: Waiter = {
        ...w,
        resolve: () => {
          clearTimeout(timer);
          this.timers.delete(timer);
          this.waiters.delete(waiter);
          resolve();
        },
      };
      const timer = setTimeout(() => waiter.resolve(), this.opts.writeWaitMs ?? 5000);
      this.timers.add(timer);
      this.waiters.add(waiter);
    });
  }

  private settle(group: string): void {
    const seen = this.seen.get(group) ?? -1;
    for (const w of [...this.waiters]) {
      if (w.group !== group) continue;
      if (w.key !== undefined ? !this.delivered.has(w.key) : seen >= w.rv) w.resolve();
    }
  }

  private key(group: string, namespace: string | undefined, name: string): string {
    return `${group}|${namespace ? `${namespace}/` : ''}${name}`;
  }

  private keyOf(group: string, o: KObject): string {
    return this.key(group, o.metadata.namespace, o.metadata.name);
  }

  private emit(type: WatchEventType, object: KObject, old: KObject | undefined): void {
    for (const s of [...this.subscribers]) {
      if (s.namespace !== undefined && object.metadata.namespace !== s.namespace) continue;
      s.handler(old ? { type, object, old } : { type, object });
    }
  }

  private apply(group: string, type: WatchEventType, obj: KObject): void {
    const key = this.keyOf(group, obj);
    const old = this.delivered.get(key);
    const rv = rvNumber(obj.metadata.resourceVersion);
    if (type === 'DELETED') {
      this.delivered.delete(key);
      const cur = this.objects.get(key);
      if (cur && rvNumber(cur.metadata.resourceVersion) <= rv) this.objects.delete(key);
      this.emit('DELETED', obj, old ?? obj);
    } else {
      this.delivered.set(key, obj);
      const cur = this.objects.get(key);
      if (!cur || rvNumber(cur.metadata.resourceVersion) <= rv) this.objects.set(key, obj);
      this.emit(old ? 'MODIFIED' : 'ADDED', obj, old);
    }
    this.bump(group, rv);
  }

  private bump(group: string, rv: number): void {
    if (rv > (this.seen.get(group) ?? -1)) this.seen.set(group, rv);
    this.settle(group);
  }

  /** A fresh list: what changed since the last delivery becomes events; what vanished is DELETED. */
  private replace(group: string, items: readonly KObject[], rv: string): void {
    const present = new Set<string>();
    for (const raw of items) {
      const obj = ingest(raw);
      const key = this.keyOf(group, obj);
      present.add(key);
      const old = this.delivered.get(key);
      if (old && old.metadata.resourceVersion === obj.metadata.resourceVersion) continue;
      this.apply(group, old ? 'MODIFIED' : 'ADDED', obj);
    }
    for (const [key, obj] of [...this.delivered]) if (key.startsWith(`${group}|`) && !present.has(key)) this.apply(group, 'DELETED', obj);
    this.bump(group, rvNumber(rv));
  }

  private async sleep(ms: number): Promise<void> {
    await new Promise<void>((r) => {
      const t = setTimeout(() => {
        this.timers.delete(t);
        r();
      }, ms);
      this.timers.add(t);
    });
  }

  private async run(r: Reflected): Promise<void> {
    const group = r.resource.group;
    const name = r.resource.group ? `${r.resource.plural}.${r.resource.group}` : r.resource.plural;
    let backoff = BACKOFF_START_MS;
    let first = true;
    const synced = () => {
      if (!first) return;
      first = false;
      if (--this.pendingSync === 0) this.markSynced();
    };
    while (!this.stopped) {
      let rv: string;
      try {
        rv = await this.listAll(r, group);
      } catch (e) {
        if (this.stopped) return;
        if (statusCode(e) === 404) {
          // Not served here (the CRD is not installed): empty, and look again later.
          synced();
          await this.sleep(BACKOFF_MAX_MS);
          continue;
        }
        this.opts.onError?.(name, e);
        await this.sleep(jitter(backoff));
        backoff = Math.min(BACKOFF_MAX_MS, backoff * 2);
        continue;
      }
      synced();
      backoff = BACKOFF_START_MS;
      // Watch until the history is gone (410), re-watching from the last resourceVersion seen.
      for (;;) {
        if (this.stopped) return;
        const outcome = await this.watchOnce(r, group, rv);
        if (outcome.kind === 'gone') break;
        if (outcome.rv) rv = outcome.rv;
        if (outcome.kind === 'error') {
          this.opts.onError?.(name, outcome.err);
          await this.sleep(jitter(backoff));
          backoff = Math.min(BACKOFF_MAX_MS, backoff * 2);
        } else {
          backoff = BACKOFF_START_MS;
        }
      }
    }
  }

  private async listAll(r: Reflected, group: string): Promise<string> {
    const items: KObject[] = [];
    let cont: string | undefined;
    let rv = '';
    do {
      const q = `?limit=${this.opts.pageSize}${cont ? `&continue=${encodeURIComponent(cont)}` : ''}`;
      const page = await r.list(q);
      for (const it of page.items ?? []) items.push(it);
      rv = page.metadata?.resourceVersion ?? rv;
      cont = page.metadata?.continue || undefined;
    } while (cont);
    // List items may come without kind/apiVersion: put them back.
    const apiVersion = r.resource.group ? `${r.resource.group}/${r.resource.version}` : r.resource.version;
    for (const it of items) {
      it.kind ??= r.resource.kind;
      it.apiVersion ??= apiVersion;
    }
    if (!this.stopped) this.replace(group, items, rv);
    return rv;
  }

  private watchOnce(
    r: Reflected,
    group: string,
    fromRv: string,
  ): Promise<{ kind: 'closed' | 'gone' | 'error'; rv?: string; err?: unknown }> {
    return new Promise((resolve) => {
      let rv = fromRv;
      let gone = false;
      let abort: AbortController | undefined;
      const query = { resourceVersion: fromRv, allowWatchBookmarks: 'true', timeoutSeconds: String(300 + Math.floor(Math.random() * 300)) };
      const onEvent = (type: string, obj: Json) => {
        if (this.stopped || gone) return;
        if (type === 'ERROR') {
          if ((obj as { code?: number }).code === 410) {
            gone = true;
            abort?.abort();
          }
          return;
        }
        const o = obj as unknown as KObject;
        const eventRv = o?.metadata?.resourceVersion;
        if (eventRv) rv = eventRv;
        if (type === 'BOOKMARK') {
          this.bump(group, rvNumber(eventRv));
          return;
        }
        if (type !== 'ADDED' && type !== 'MODIFIED' && type !== 'DELETED') return;
        this.apply(group, type, ingest(o));
      };
      const done = (err: unknown) => {
        if (abort) this.aborts.delete(abort);
        if (gone || statusCode(err) === 410) resolve({ kind: 'gone' });
        else if (err && !this.stopped) resolve({ kind: 'error', rv, err });
        else resolve({ kind: 'closed', rv });
      };
      r.watch(query, onEvent, done).then(
        (a) => {
          abort = a;
          if (this.stopped || gone) a.abort();
          else this.aborts.add(a);
        },
        (err: unknown) => done(err),
      );
    });
  }
}

const jitter = (ms: number): number => ms * (1 + Math.random() * 0.2);
