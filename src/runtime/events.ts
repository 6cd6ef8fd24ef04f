// Events: what a controller tells the user about an object (`kubectl describe` shows them).
// The recorder writes core/v1 Event objects to the store, folding repeats of the same
// (object, type, reason, message) into one Event with a count, as the client-go recorder
// does; it also keeps the recent ones in memory for tests and the simulation report.

import { CoreApiVersion } from '../api/api-versions.ts';
import type { KObject } from '../api/objects.ts';
import { formatTime } from '../api/time.ts';
import type { Clock } from './clock.ts';
import { isNotFound, type ObjectStore } from './store.ts';
import { StringTable } from './strings.ts';

export type EventType = 'Normal' | 'Warning';

export interface RecordedEvent {
  /** Milliseconds (clock time). */
  at: number;
  type: EventType;
  reason: string;
  message: string;
  /** `Kind/namespace/name` or `Kind/name`. */
  object: string;
  component: string;
}

export interface EventRecorder {
  event(obj: KObject, type: EventType, reason: string, message: string): void;
}

export interface EventSinkOptions {
  /** Write Event objects to the store (default true). */
  writeToStore?: boolean;
  /** How many recent events to keep in memory (default 10,000). */
  keep?: number;
  /**
   * Name Events `<object>.<hex of the time in ns>` as client-go's recorder does, instead of a
   * per-process counter: needed when other processes write Events to the same API server.
   */
  timeNames?: boolean;
}

export class EventSink {
  readonly recent: RecordedEvent[] = [];
  private readonly folded = new Map<string, string>();
  private seq = 0;
  private readonly keep: number;
  private readonly writeToStore: boolean;
  private readonly timeNames: boolean;
  /** Every event recorded, by reason. */
  readonly counts = new Map<string, number>();
  private readonly listeners: ((e: RecordedEvent) => void)[] = [];
  /** Messages and object references recur (the same reason about the same queue): one flat copy each, shared by the kept events and whoever folds them. */
  private readonly strings = new StringTable(16_384);

  constructor(
    private readonly store: ObjectStore,
    private readonly clock: Clock,
    opts: EventSinkOptions = {},
  ) {
    this.keep = opts.keep ?? 10_000;
    this.writeToStore = opts.writeToStore ?? true;
    this.timeNames = opts.timeNames ?? false;
  }

  recorder(component: string): EventRecorder {
    return { event: (obj, type, reason, message) => this.record(component, obj, type, reason, message) };
  }

  /** Calls `fn` with every event recorded from now on (the simulation report folds them per workload). */
  onEvent(fn: (e: RecordedEvent) => void): () => void {
    this.listeners.push(fn);
    return () => {
      const i = this.listeners.indexOf(fn);
      if (i >= 0) this.listeners.splice(i, 1);
    };
  }

  /** Recent events about one object (`Kind/ns/name`). */
  about(object: string): RecordedEvent[] {
    return this.recent.filter((e) => e.object === object);
  }

  private record(component: string, obj: KObject, type: EventType, reason: string, message: string): void {
    // Joined, not concatenated, and one copy per object however many events are about it.
    const ref = this.strings.intern(
      obj.metadata.namespace
        ? [String(obj.kind), obj.metadata.namespace, String(obj.metadata.name)].join('/')
        : [String(obj.kind), String(obj.metadata.name)].join('/'),
    );
    const at = this.clock.now();
    const recorded: RecordedEvent = { at, type, reason, message: this.strings.intern(message), object: ref, component };
    this.recent.push(recorded);
    for (const fn of this.listeners) fn(recorded);
    // Trim in batches: one splice per `keep` events, not one per event.
    if (this.recent.length >= 2 * this.keep) this.recent.splice(0, this.recent.length - this.keep);
    this.counts.set(reason, (this.counts.get(reason) ?? 0) + 1);
    if (!this.writeToStore) return;
    void this.write(component, obj, ref, type, reason, message, at).catch(() => {
      /* events are best effort, as in Kubernetes */
    });
  }

  private async write(
    component: string,
    obj: KObject,
    ref: string,
    type: EventType,
    reason: string,
    message: string,
    at: number,
  ): Promise<void> {
    const ns = obj.metadata.namespace ?? 'default';
    const fold = `${ref}\n${obj.metadata.uid ?? ''}\n${type}\n${reason}\n${message}`;
    const ts = formatTime(at / 1000);
    const existing = this.folded.get(fold);
    if (existing) {
      const e = await this.store.get<KObject & { count?: number }>('Event', ns, existing);
      if (e) {
        try {
          await this.store.update({ ...structuredClone(e), count: (e.count ?? 1) + 1, lastTimestamp: ts });
          return;
        } catch (err) {
          if (!isNotFound(err)) throw err;
        }
      }
    }
    const suffix = this.timeNames
      ? (BigInt(this.clock.now()) * 1_000_000n + BigInt(++this.seq % 1_000_000)).toString(16)
      : (++this.seq).toString(16).padStart(8, '0');
    const name = `${obj.metadata.name}.${suffix}`;
    this.folded.set(fold, name);
    await this.store.create({
      apiVersion: CoreApiVersion.V1,
      kind: 'Event',
      metadata: { name, namespace: ns },
      involvedObject: {
        apiVersion: obj.apiVersion,
        kind: obj.kind,
        name: obj.metadata.name,
        namespace: obj.metadata.namespace,
        uid: obj.metadata.uid,
      },
      type,
      reason,
      message,
      count: 1,
      firstTimestamp: ts,
      lastTimestamp: ts,
      source: { component },
    } as KObject);
  }
}
