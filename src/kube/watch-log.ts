// The API server's watch history: one bounded, in-memory log of every write to every
// served kind, in resourceVersion order. A watch from resourceVersion N replays the
// events after N and then follows live ones; a watch from before the oldest event the log
// still holds gets `410 Expired` and the client lists again. The log starts empty at the
// store's resourceVersion when the server starts (after a restart, clients relist).

import type { KObject } from '../api/objects.ts';
import type { ObjectStore, WatchEventType } from '../runtime/store.ts';

export interface LogEvent {
  rv: number;
  type: WatchEventType;
  /** The object after the write; for DELETED its last state, with the deletion's resourceVersion. */
  object: KObject;
  /** The object before the write (MODIFIED, DELETED). */
  old?: KObject;
}

export type LogListener = (e: LogEvent) => void;

/** The store's current resourceVersion (a MemoryStore getter, or a method on other stores). */
export function storeResourceVersion(store: ObjectStore): number {
  const v = (store as unknown as { resourceVersion?: string | (() => string) }).resourceVersion;
  const s = typeof v === 'function' ? v.call(store) : v;
  return Number(s ?? 0) || 0;
}

export class WatchLog {
  private events: LogEvent[] = [];
  /** Events with rv > floor are all in the log: a watch from floor or later can be served. */
  private floor: number;
  private readonly listeners = new Set<LogListener>();
  private readonly stops: (() => void)[] = [];

  constructor(
    private readonly store: ObjectStore,
    kinds: readonly string[],
    private readonly capacity = 100_000,
  ) {
    this.floor = storeResourceVersion(store);
    for (const kind of kinds) this.stops.push(store.watch(kind, (e) => this.append(e.type, e.object, e.old)));
  }

  /** The oldest resourceVersion a watch may start from. */
  get oldest(): number {
    return this.floor;
  }

  get size(): number {
    return this.events.length;
  }

  private append(type: WatchEventType, object: KObject, old: KObject | undefined): void {
    let rv = Number(object.metadata.resourceVersion);
    if (type === 'DELETED') {
      rv = storeResourceVersion(this.store);
      object = { ...object, metadata: { ...object.metadata, resourceVersion: String(rv) } };
    }
    const e: LogEvent = { rv, type, object, ...(old ? { old } : {}) };
    this.events.push(e);
    // Trim in batches, so a full log costs one splice per capacity/4 writes.
    if (this.events.length > this.capacity + (this.capacity >> 2)) {
      const drop = this.events.length - this.capacity;
      this.floor = this.events[drop - 1]!.rv;
      this.events.splice(0, drop);
    }
    for (const l of this.listeners) l(e);
  }

  /** The events after `rv`, or undefined when some of them are no longer kept. */
  since(rv: number): LogEvent[] | undefined {
    if (rv < this.floor) return undefined;
    let lo = 0;
    let hi = this.events.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.events[mid]!.rv <= rv) lo = mid + 1;
      else hi = mid;
    }
    return this.events.slice(lo);
  }

  subscribe(l: LogListener): () => void {
    this.listeners.add(l);
    return () => this.listeners.delete(l);
  }

  /** Stops following the store (listeners get nothing more). */
  close(): void {
    for (const s of this.stops) s();
    this.stops.length = 0;
    this.listeners.clear();
  }
}
