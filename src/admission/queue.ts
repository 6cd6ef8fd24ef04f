// Pending Workloads per ClusterQueue (kueue-core.md §1b step 1, "Requeue and the
// inadmissible list"): a heap ordered sticky preemptor first (BestEffortFIFO), higher
// priority, earlier queue timestamp, uid; and an inadmissible set that waits for capacity
// to be freed. StrictFIFO puts a failed head straight back (it blocks newer ones);
// BestEffortFIFO parks it so the next head can be tried.

import type { QueueingStrategy } from '../api/queues.ts';
import type { WorkloadInfo } from './workload-info.ts';

/** Binary heap with removal by key (lazy: stale entries are skipped on pop). */
class Heap<T> {
  private items: T[] = [];
  constructor(private readonly less: (a: T, b: T) => boolean) {}

  get size(): number {
    return this.items.length;
  }

  push(x: T): void {
    const a = this.items;
    a.push(x);
    let i = a.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!this.less(a[i]!, a[p]!)) break;
      [a[i], a[p]] = [a[p]!, a[i]!];
      i = p;
    }
  }

  pop(): T | undefined {
    const a = this.items;
    if (a.length === 0) return undefined;
    const top = a[0]!;
    const last = a.pop()!;
    if (a.length > 0) {
      a[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < a.length && this.less(a[l]!, a[m]!)) m = l;
        if (r < a.length && this.less(a[r]!, a[m]!)) m = r;
        if (m === i) break;
        [a[i], a[m]] = [a[m]!, a[i]!];
        i = m;
      }
    }
    return top;
  }

  peek(): T | undefined {
    return this.items[0];
  }

  /** Rebuilds from the items that pass (used when the sticky head changes). */
  rebuild(keep: (x: T) => boolean): void {
    const old = this.items.filter(keep);
    this.items = [];
    for (const x of old) this.push(x);
  }
}

interface Entry {
  info: WorkloadInfo;
  /** Bumped on every (re)insertion: heap entries with an older version are stale. */
  version: number;
}

/** The heap order: sticky first, then priority, timestamp, uid. */
export function queueOrder(sticky: string | undefined) {
  return (a: WorkloadInfo, b: WorkloadInfo): number => {
    if (sticky !== undefined && (a.key === sticky) !== (b.key === sticky)) return a.key === sticky ? -1 : 1;
    return b.priority - a.priority || a.timestamp - b.timestamp || (a.uid < b.uid ? -1 : a.uid > b.uid ? 1 : 0);
  };
}

export class ClusterQueueQueue {
  readonly name: string;
  strategy: QueueingStrategy;
  private readonly heap: Heap<Entry>;
  private readonly live = new Map<string, Entry>();
  private readonly inadmissible = new Map<string, WorkloadInfo>();
  /** Parked gangs by the end of their waiting time. */
  private readonly deadlines = new Map<string, number>();
  private version = 0;
  /** A preempting head under BestEffortFIFO, kept first until admitted or deleted. */
  sticky: string | undefined;

  constructor(name: string, strategy: QueueingStrategy) {
    this.name = name;
    this.strategy = strategy;
    const order = (a: Entry, b: Entry) => queueOrder(this.sticky)(a.info, b.info) < 0;
    this.heap = new Heap(order);
  }

  get pendingCount(): number {
    return this.live.size + this.inadmissible.size;
  }

  isLive(key: string): boolean {
    return this.live.has(key);
  }

  has(key: string): boolean {
    return this.live.has(key) || this.inadmissible.has(key);
  }

  get(key: string): WorkloadInfo | undefined {
    return this.live.get(key)?.info ?? this.inadmissible.get(key);
  }

  /** Adds or replaces a pending Workload in the heap. */
  push(info: WorkloadInfo): void {
    this.inadmissible.delete(info.key);
    const e = { info, version: ++this.version };
    this.live.set(info.key, e);
    this.heap.push(e);
  }

  /** Parks a Workload until capacity is freed (BestEffortFIFO). */
  park(info: WorkloadInfo): void {
    this.live.delete(info.key);
    this.inadmissible.set(info.key, info);
    // A gang whose waiting time runs must be looked at when it runs out, freed or not.
    const g = info.gang;
    if (g?.waitingSince !== undefined) this.deadlines.set(info.key, g.waitingSince + g.waitingSeconds);
  }

  delete(key: string): void {
    this.live.delete(key);
    this.inadmissible.delete(key);
    this.deadlines.delete(key);
    if (this.sticky === key) this.setSticky(undefined);
  }

  setSticky(key: string | undefined): void {
    if (this.sticky === key) return;
    this.sticky = key;
    this.heap.rebuild((e) => this.live.get(e.info.key) === e);
  }

  /**
   * Pops the head ready at `now`; Workloads still in backoff are parked (they come back on
   * the next requeue-all after their backoff).
   */
  pop(now: number): WorkloadInfo | undefined {
    if (this.deadlines.size > 0) {
      for (const [key, at] of [...this.deadlines]) {
        const info = this.inadmissible.get(key);
        if (!info) this.deadlines.delete(key);
        else if (at <= now) {
          this.deadlines.delete(key);
          this.push(info);
        }
      }
    }
    for (;;) {
      const e = this.heap.pop();
      if (!e) return undefined;
      if (this.live.get(e.info.key) !== e) continue;
      this.live.delete(e.info.key);
      if (e.info.requeueAt !== undefined && e.info.requeueAt > now) {
        this.inadmissible.set(e.info.key, e.info);
        continue;
      }
      return e.info;
    }
  }

  /** Moves every parked Workload (backoff over at `now`) back into the heap. */
  requeueInadmissible(now: number): number {
    let n = 0;
    for (const info of [...this.inadmissible.values()]) {
      if (info.requeueAt !== undefined && info.requeueAt > now) continue;
      this.push(info);
      n++;
    }
    return n;
  }

  /** Every pending Workload, heap and parked, in queue order. */
  pending(): WorkloadInfo[] {
    return [...[...this.live.values()].map((e) => e.info), ...this.inadmissible.values()].sort(queueOrder(this.sticky));
  }

  /** The earliest time a parked Workload needs looking at (backoff over, gang waiting time out), if any. */
  nextBackoff(now: number): number | undefined {
    let t: number | undefined;
    for (const info of this.inadmissible.values()) if (info.requeueAt !== undefined && info.requeueAt > now && (t === undefined || info.requeueAt < t)) t = info.requeueAt;
    for (const at of this.deadlines.values()) if (at > now && (t === undefined || at < t)) t = at;
    return t;
  }
}

/** The queues of every ClusterQueue, and where each pending Workload is. */
export class QueueManager {
  private readonly queues = new Map<string, ClusterQueueQueue>();
  private readonly where = new Map<string, string>();
  /** Pending Workloads by gang id (gang groups span queues). */
  private readonly byGang = new Map<string, string>();
  /** Workloads waiting for the preemptions they issued: decided first in the next cycles. */
  readonly preemptors = new Set<string>();

  ensure(cq: string, strategy: QueueingStrategy): ClusterQueueQueue {
    let q = this.queues.get(cq);
    if (!q) {
      q = new ClusterQueueQueue(cq, strategy);
      this.queues.set(cq, q);
    } else {
      q.strategy = strategy;
    }
    return q;
  }

  queue(cq: string): ClusterQueueQueue | undefined {
    return this.queues.get(cq);
  }

  names(): string[] {
    return [...this.queues.keys()].sort();
  }

  /** Adds or updates a pending Workload in its ClusterQueue's heap. */
  add(cq: string, info: WorkloadInfo): void {
    const prev = this.where.get(info.key);
    if (prev !== undefined && prev !== cq) this.queues.get(prev)?.delete(info.key);
    const q = this.queues.get(cq);
    if (!q) throw new Error(`no queue for ClusterQueue ${cq}`);
    q.push(info);
    this.where.set(info.key, cq);
    if (info.gang) this.byGang.set(info.gang.id, info.key);
  }

  delete(key: string): void {
    const cq = this.where.get(key);
    if (cq === undefined) return;
    const info = this.queues.get(cq)?.get(key);
    this.queues.get(cq)?.delete(key);
    this.where.delete(key);
    this.preemptors.delete(key);
    if (info?.gang && this.byGang.get(info.gang.id) === key) this.byGang.delete(info.gang.id);
  }

  clusterQueueOf(key: string): string | undefined {
    return this.where.get(key);
  }

  get(key: string): WorkloadInfo | undefined {
    const cq = this.where.get(key);
    return cq === undefined ? undefined : this.queues.get(cq)?.get(key);
  }

  /** The pending Workload of a gang, by gang id. */
  gang(id: string): WorkloadInfo | undefined {
    const key = this.byGang.get(id);
    return key === undefined ? undefined : this.get(key);
  }

  /**
   * Takes a Workload out of its heap for this cycle (a gang group member decided with its
   * head); `live` says whether it was in the heap (not parked), to put it back the same way.
   */
  take(key: string): { info: WorkloadInfo; live: boolean } | undefined {
    const cq = this.where.get(key);
    if (cq === undefined) return undefined;
    const q = this.queues.get(cq)!;
    const info = q.get(key);
    if (!info) return undefined;
    const live = q.isLive(key);
    q.park(info);
    return { info, live };
  }

  /** After a failed attempt: back into the heap, or parked until capacity is freed. */
  requeue(info: WorkloadInfo, immediate: boolean): void {
    const cq = this.where.get(info.key);
    if (cq === undefined) return;
    const q = this.queues.get(cq)!;
    if (immediate) q.push(info);
    else q.park(info);
  }

  /** Capacity was freed in these ClusterQueues (or everywhere): parked Workloads go back. */
  requeueInadmissible(now: number, cqs?: Iterable<string>): number {
    let n = 0;
    for (const name of cqs ?? this.queues.keys()) n += this.queues.get(name)?.requeueInadmissible(now) ?? 0;
    return n;
  }

  /** One head per ClusterQueue, in name order (the caller skips inactive ones). */
  heads(now: number, active: (cq: string) => boolean): WorkloadInfo[] {
    const out: WorkloadInfo[] = [];
    for (const name of this.names()) {
      if (!active(name)) continue;
      const h = this.queues.get(name)!.pop(now);
      if (h) out.push(h);
    }
    return out;
  }

  get pendingCount(): number {
    let n = 0;
    for (const q of this.queues.values()) n += q.pendingCount;
    return n;
  }

  /** The earliest end of a backoff over all queues. */
  nextBackoff(now: number): number | undefined {
    let t: number | undefined;
    for (const q of this.queues.values()) {
      const x = q.nextBackoff(now);
      if (x !== undefined && (t === undefined || x < t)) t = x;
    }
    return t;
  }
}
