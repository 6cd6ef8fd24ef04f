// Informer caches: a kind listed once and then kept current from its watch, with indexes
// and event handlers. Controllers read from here, never from the store, on their hot
// paths; the store is read only to get the latest version before a write.
//
// The cache holds the store's own (read-only) objects. Handlers run synchronously as
// events arrive and must only look and enqueue, never write.

import type { KObject } from '../api/objects.ts';
import { labelSelectorMatches } from '../api/label-selector.ts';
import type { LabelSelector } from '../api/volcano-objects.ts';
import { objectKey, type ObjectOfKind, type ObjectStore, type WatchEvent } from './store.ts';

export interface EventHandler<T extends KObject> {
  add?(obj: T): void;
  update?(old: T, obj: T): void;
  delete?(obj: T): void;
}

export type IndexFunc<T extends KObject> = (obj: T) => readonly string[];

/** The namespace index every informer has. */
export const BY_NAMESPACE = 'namespace';

export class Informer<T extends KObject = KObject> {
  private readonly items = new Map<string, T>();
  private readonly indexers = new Map<string, IndexFunc<T>>();
  /** index name -> value -> keys */
  private readonly indexes = new Map<string, Map<string, Set<string>>>();
  private readonly handlers: EventHandler<T>[] = [];
  private stopWatch: (() => void) | undefined;
  private synced = false;

  constructor(
    private readonly store: ObjectStore,
    readonly kind: string,
  ) {}

  /**
   * The namespace index is built when first asked for (most informers are never listed by
   * namespace, and it holds a key per item), then kept like any other; its order is the
   * same as if it had been kept from the start (the items' insertion order).
   */
  private namespaceIndex(): void {
    if (!this.indexers.has(BY_NAMESPACE)) this.addIndex(BY_NAMESPACE, namespaceOf);
  }

  get hasSynced(): boolean {
    return this.synced;
  }

  /** Adds an index; items already cached are indexed at once. */
  addIndex(name: string, fn: IndexFunc<T>): void {
    if (name === BY_NAMESPACE && fn !== namespaceOf) return this.namespaceIndex();
    if (this.indexers.has(name)) return;
    this.indexers.set(name, fn);
    const idx = new Map<string, Set<string>>();
    this.indexes.set(name, idx);
    for (const [key, obj] of this.items) for (const v of fn(obj)) addTo(idx, v, key);
  }

  /** Adds a handler; with the cache already synced, `add` is called for every cached item. */
  addHandler(h: EventHandler<T>): void {
    this.handlers.push(h);
    if (this.synced && h.add) for (const obj of this.items.values()) h.add(obj);
  }

  /** Lists, then watches from the list's resourceVersion. */
  async start(): Promise<void> {
    if (this.stopWatch) return;
    const r = await this.store.list<T>(this.kind);
    for (const obj of r.items) this.apply({ type: 'ADDED', object: obj });
    this.stopWatch = this.store.watch<T>(this.kind, (e) => this.apply(e), { resourceVersion: r.resourceVersion });
    this.synced = true;
  }

  stop(): void {
    this.stopWatch?.();
    this.stopWatch = undefined;
  }

  get(key: string): T | undefined;
  get(namespace: string | undefined, name: string): T | undefined;
  get(a: string | undefined, b?: string): T | undefined {
    if (b === undefined) return this.items.get(a!);
    return this.items.get(a ? `${a}/${b}` : b);
  }

  list(namespace?: string): T[] {
    if (namespace === undefined) return [...this.items.values()];
    return this.byIndex(BY_NAMESPACE, namespace);
  }

  /** Every cached item, without copying the list (do not hold on to it). */
  values(): IterableIterator<T> {
    return this.items.values();
  }

  get size(): number {
    return this.items.size;
  }

  select(selector: LabelSelector, namespace?: string): T[] {
    return this.list(namespace).filter((o) => labelSelectorMatches(selector, o.metadata.labels));
  }

  byIndex(name: string, value: string): T[] {
    if (name === BY_NAMESPACE) this.namespaceIndex();
    const keys = this.indexes.get(name)?.get(value);
    if (!keys) return [];
    const out: T[] = [];
    for (const k of keys) {
      const o = this.items.get(k);
      if (o) out.push(o);
    }
    return out;
  }

  indexKeys(name: string, value: string): ReadonlySet<string> {
    if (name === BY_NAMESPACE) this.namespaceIndex();
    return this.indexes.get(name)?.get(value) ?? EMPTY;
  }

  private apply(e: WatchEvent<T>): void {
    let key = objectKey(e.object);
    const old = this.items.get(key);
    // A new item's key is kept (in the map and the indexes): flat, a third of the bytes.
    if (!old && e.type !== 'DELETED') key = flatKey(e.object);
    if (e.type === 'DELETED') {
      if (old) this.unindex(key, old);
      this.items.delete(key);
      for (const h of this.handlers) h.delete?.(e.object);
      return;
    }
    this.items.set(key, e.object);
    if (old) this.reindex(key, old, e.object);
    else this.index(key, e.object);
    for (const h of this.handlers) {
      if (old) h.update?.(old, e.object);
      else h.add?.(e.object);
    }
  }

  private index(key: string, obj: T): void {
    for (const [name, fn] of this.indexers) {
      const idx = this.indexes.get(name)!;
      for (const v of fn(obj)) addTo(idx, v, key);
    }
  }

  /** Moves the key only in the indexes whose values changed (most updates change none). */
  private reindex(key: string, old: T, obj: T): void {
    for (const [name, fn] of this.indexers) {
      const before = fn(old);
      const after = fn(obj);
      if (sameValues(before, after)) continue;
      const idx = this.indexes.get(name)!;
      for (const v of before) removeFrom(idx, v, key);
      for (const v of after) addTo(idx, v, key);
    }
  }

  private unindex(key: string, obj: T): void {
    for (const [name, fn] of this.indexers) {
      const idx = this.indexes.get(name)!;
      for (const v of fn(obj)) removeFrom(idx, v, key);
    }
  }
}

const EMPTY: ReadonlySet<string> = new Set();

function namespaceOf(o: KObject): readonly string[] {
  return [o.metadata.namespace ?? ''];
}

/** objectKey as one flat string (joined, not concatenated). */
function flatKey(obj: KObject): string {
  const ns = obj.metadata.namespace;
  return ns ? [ns, obj.metadata.name].join('/') : obj.metadata.name;
}

function sameValues(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

function removeFrom(idx: Map<string, Set<string>>, v: string, key: string): void {
  const s = idx.get(v);
  if (!s) return;
  s.delete(key);
  if (s.size === 0) idx.delete(v);
}

function addTo(idx: Map<string, Set<string>>, v: string, key: string): void {
  let s = idx.get(v);
  if (!s) {
    s = new Set();
    idx.set(v, s);
  }
  s.add(key);
}

/** One informer per kind, shared by every controller of a manager. */
export class InformerFactory {
  private readonly informers = new Map<string, Informer>();

  constructor(private readonly store: ObjectStore) {}

  for<K extends string>(kind: K): Informer<ObjectOfKind<K>>;
  for<T extends KObject>(kind: string): Informer<T>;
  for<T extends KObject>(kind: string): Informer<T> {
    let i = this.informers.get(kind);
    if (!i) {
      i = new Informer(this.store, kind);
      this.informers.set(kind, i);
    }
    return i as unknown as Informer<T>;
  }

  /** The kinds informers were asked for (the RBAC generator lists and watches each). */
  kinds(): string[] {
    return [...this.informers.keys()];
  }

  async startAll(): Promise<void> {
    for (const i of this.informers.values()) await i.start();
  }

  stopAll(): void {
    for (const i of this.informers.values()) i.stop();
  }
}
