// Pending Workloads per ClusterQueue (kueue-core.md §1b step 1, "Requeue and the
// inadmissible list"): a heap ordered sticky preemptor first (BestEffortFIFO), higher
// priority, higher sub-priority (Koordinator's koordinator.sh/priority), earlier queue
// timestamp, uid; and an inadmissible set that waits for capacity
// to be freed. StrictFIFO puts a failed head straight back (it blocks newer ones);
// BestEffortFIFO parks it so the next head can be tried.

import type { QueueingStrategy } from '../api/queues.ts';
import { compareStrings } from '../api/values.ts';
import type { WorkloadInfo } from './workload-info.ts';

/**
 * One queued Workload, intrusive: it is its own heap element (`at`, its index in the heap,
 * and the order fields read once, as infos are not changed while queued) and its own
 * parked-list node, and the QueueManager's one Map from key to slot names its queue. So a
 * Workload costs one object and one Map entry however it moves, and following a key to its
 * queue and state is one lookup. `state`: 1 in the heap (live), 2 parked (inadmissible), 0
 * out (popped or taken for the current cycle). Parked slots form a list in the order they
 * were parked, as an insertion-ordered Map would keep them.
 */
interface Slot {
  readonly key: string;
  readonly queue: ClusterQueueQueue;
  info: WorkloadInfo;
  state: 0 | 1 | 2;
  /** Index in the queue's heap while live, -1 otherwise. */
  at: number;
  priority: number;
  subPriority: number;
  timestamp: number;
  uid: string;
  /** When it last became live (pending() lists live Workloads in that order before sorting). */
  liveSeq: number;
  prev: Slot | undefined;
  next: Slot | undefined;
  /** schedulingHash(info) for `hashOf` (computed when first needed). */
  hash: string | null | undefined;
}

/**
 * Kueue's scheduling equivalence hash (kueue-core §1b, FG SchedulingEquivalenceHashing):
 * what decides a Workload's nomination (priority; per PodSet its name, count, minCount,
 * per-pod requests, the pod spec fields scheduling reads, topology request). Gangs have
 * none (their decision depends on their group, not only on their shape).
 */
export function schedulingHash(info: WorkloadInfo): string | null {
  if (info.gang) return null;
  return JSON.stringify([
    info.priority,
    info.podSets.map((ps) => {
      const spec = ps.podSet.template.spec;
      return [
        ps.name,
        ps.count,
        ps.minCount ?? null,
        ps.perPod,
        spec.nodeSelector ?? null,
        spec.affinity ?? null,
        spec.tolerations ?? null,
        spec.runtimeClassName ?? null,
        ps.podSet.topologyRequest ?? null,
        ps.podSet.template.metadata?.annotations ?? null,
      ];
    }),
  ]);
}

/** Whether `a` goes before `b`: the queue order (compareInQueue) on slots, without a call per comparison. */
function before(a: Slot, b: Slot, sticky: string | undefined): boolean {
  if (sticky !== undefined && (a.key === sticky) !== (b.key === sticky)) return a.key === sticky;
  return (b.priority - a.priority || b.subPriority - a.subPriority || a.timestamp - b.timestamp || compareStrings(a.uid, b.uid)) < 0;
}

// A binary heap of slots in queue order, each slot knowing its index (`at`), so that a slot
// leaving the heap (parked, deleted, taken) is removed at once instead of left behind stale.

function siftUp(a: Slot[], i: number, sticky: string | undefined): void {
  const x = a[i]!;
  while (i > 0) {
    const p = (i - 1) >> 1;
    const parent = a[p]!;
    if (!before(x, parent, sticky)) break;
    a[i] = parent;
    parent.at = i;
    i = p;
  }
  a[i] = x;
  x.at = i;
}

function siftDown(a: Slot[], i: number, sticky: string | undefined): void {
  const n = a.length;
  const x = a[i]!;
  for (;;) {
    const l = 2 * i + 1;
    if (l >= n) break;
    const r = l + 1;
    let m = l;
    let c = a[l]!;
    if (r < n) {
      const rc = a[r]!;
      if (before(rc, c, sticky)) {
        m = r;
        c = rc;
      }
    }
    if (!before(c, x, sticky)) break;
    a[i] = c;
    c.at = i;
    i = m;
  }
  a[i] = x;
  x.at = i;
}

/** Takes the slot at index `i` out of the heap. */
function removeAt(a: Slot[], i: number, sticky: string | undefined): void {
  const gone = a[i]!;
  gone.at = -1;
  const last = a.pop()!;
  if (last === gone) return;
  a[i] = last;
  if (i > 0 && before(last, a[(i - 1) >> 1]!, sticky)) siftUp(a, i, sticky);
  else siftDown(a, i, sticky);
}

/** The heap order: sticky first, then priority, sub-priority, timestamp, uid. */
export function queueOrder(sticky: string | undefined) {
  return (a: WorkloadInfo, b: WorkloadInfo): number => compareInQueue(a, b, sticky);
}

function compareInQueue(a: WorkloadInfo, b: WorkloadInfo, sticky: string | undefined): number {
  if (sticky !== undefined && (a.key === sticky) !== (b.key === sticky)) return a.key === sticky ? -1 : 1;
  return b.priority - a.priority || b.subPriority - a.subPriority || a.timestamp - b.timestamp || compareStrings(a.uid, b.uid);
}

export class ClusterQueueQueue {
  readonly name: string;
  strategy: QueueingStrategy;
  /** The live slots, a binary heap in queue order. */
  private heap: Slot[] = [];
  /** Every queued Workload by key, this queue's and the other queues' of its manager (`slot.queue` says whose). */
  private readonly slots: Map<string, Slot>;
  private parkedCount = 0;
  /** Parked slots whose Workload has a requeueAt (nextBackoff looks at these only). */
  private readonly backingOff = new Set<Slot>();
  private first: Slot | undefined;
  private last: Slot | undefined;
  private liveSeq = 0;
  /**
   * Parked gangs by the end of their waiting time; made when the first is parked and
   * dropped when empty (a pop reads this field, not a Map of its own, on most queues).
   */
  private deadlines: Map<Slot, number> | undefined;
  /** A preempting head under BestEffortFIFO, kept first until admitted or deleted. */
  sticky: string | undefined;
  /** Scheduling equivalence hashing (Kueue's gate, BestEffortFIFO only). */
  hashing = false;
  /**
   * Hashes that failed with NoFit / no preemption candidates since the last requeue of
   * the parked Workloads, with the liveSeq when they did: Workloads live then are parked
   * at their pop (Kueue bulk-moves them), newcomers with the hash are parked at once.
   * Made with the first such hash and dropped by the requeue, as `deadlines`.
   */
  private noFit: Map<string, number> | undefined;

  /** `slots`: the manager's map of every queued Workload (shared by its queues). */
  constructor(name: string, strategy: QueueingStrategy, slots: Map<string, Slot> = new Map()) {
    this.name = name;
    this.strategy = strategy;
    this.slots = slots;
  }

  private hashOf(slot: Slot): string | null {
    if (slot.hash === undefined) slot.hash = schedulingHash(slot.info);
    return slot.hash;
  }

  private hashingOn(): boolean {
    return this.hashing && this.strategy === 'BestEffortFIFO';
  }

  get pendingCount(): number {
    return this.heap.length + this.parkedCount;
  }

  /** Workloads in the heap (kueue_pending_workloads{status="active"}). */
  get activeCount(): number {
    return this.heap.length;
  }

  /** Workloads parked until capacity is freed (kueue_pending_workloads{status="inadmissible"}). */
  get inadmissibleCount(): number {
    return this.parkedCount;
  }

  /** This queue's slot for `key`, in any state. */
  private own(key: string): Slot | undefined {
    const slot = this.slots.get(key);
    return slot !== undefined && slot.queue === this ? slot : undefined;
  }

  isLive(key: string): boolean {
    return this.own(key)?.state === 1;
  }

  has(key: string): boolean {
    const st = this.own(key)?.state;
    return st === 1 || st === 2;
  }

  get(key: string): WorkloadInfo | undefined {
    const slot = this.own(key);
    return slot && slot.state !== 0 ? slot.info : undefined;
  }

  private slotOf(info: WorkloadInfo): Slot {
    let slot = this.slots.get(info.key);
    if (slot !== undefined && slot.queue !== this) {
      // Queued here directly while another queue holds it (the manager moves it first): it
      // moves, so that the shared map never names a slot its queue has lost.
      slot.queue.drop(slot);
      slot = undefined;
    }
    if (!slot) {
      slot = {
        key: info.key,
        queue: this,
        info,
        state: 0,
        at: -1,
        priority: 0,
        subPriority: 0,
        timestamp: 0,
        uid: '',
        liveSeq: 0,
        prev: undefined,
        next: undefined,
        hash: undefined,
      };
      this.slots.set(info.key, slot);
    }
    return slot;
  }

  private unlink(slot: Slot): void {
    if (slot.prev) slot.prev.next = slot.next;
    else this.first = slot.next;
    if (slot.next) slot.next.prev = slot.prev;
    else this.last = slot.prev;
    slot.prev = slot.next = undefined;
    this.parkedCount--;
    this.backingOff.delete(slot);
  }

  /** Parks a slot at the end of the list (or leaves it where it is when parked already). */
  private toParked(slot: Slot): void {
    if (slot.state === 2) return;
    if (slot.state === 1) removeAt(this.heap, slot.at, this.sticky);
    slot.state = 2;
    slot.prev = this.last;
    slot.next = undefined;
    if (this.last) this.last.next = slot;
    else this.first = slot;
    this.last = slot;
    this.parkedCount++;
    if (slot.info.requeueAt !== undefined) this.backingOff.add(slot);
  }

  /** Adds or replaces a pending Workload in the heap. */
  push(info: WorkloadInfo): void {
    this.pushSlot(this.slotOf(info), info);
  }

  private pushSlot(slot: Slot, info: WorkloadInfo): void {
    if (slot.info !== info) slot.hash = undefined;
    if (slot.state === 2) this.unlink(slot);
    slot.info = info;
    slot.priority = info.priority;
    slot.subPriority = info.subPriority;
    slot.timestamp = info.timestamp;
    slot.uid = info.uid;
    const heap = this.heap;
    if (slot.state === 1) {
      // Replaced in place: its order fields may have changed either way.
      const i = slot.at;
      if (i > 0 && before(slot, heap[(i - 1) >> 1]!, this.sticky)) siftUp(heap, i, this.sticky);
      else siftDown(heap, i, this.sticky);
      return;
    }
    slot.liveSeq = ++this.liveSeq;
    slot.state = 1;
    heap.push(slot);
    siftUp(heap, heap.length - 1, this.sticky);
  }

  /**
   * A Workload created or changed: into the heap, unless (equivalence hashing) a Workload
   * of the same shape failed with NoFit since the last requeue and it is not live already.
   */
  offer(info: WorkloadInfo): void {
    const slot = this.slotOf(info);
    if (this.noFit !== undefined && this.hashingOn() && slot.state !== 1) {
      if (slot.info !== info) slot.hash = undefined;
      slot.info = info;
      const h = this.hashOf(slot);
      if (h !== null && this.noFit.has(h)) {
        this.parkSlot(slot, info, false);
        return;
      }
    }
    this.pushSlot(slot, info);
  }

  /**
   * Parks a Workload until capacity is freed (BestEffortFIFO). `noFit`: it failed with NoFit
   * or no preemption candidates; with equivalence hashing its shape is remembered.
   */
  park(info: WorkloadInfo, noFit = false): void {
    this.parkSlot(this.slotOf(info), info, noFit);
  }

  private parkSlot(slot: Slot, info: WorkloadInfo, noFit: boolean): void {
    if (slot.info !== info) slot.hash = undefined;
    slot.info = info;
    if (noFit && this.hashingOn()) {
      const h = this.hashOf(slot);
      if (h !== null) (this.noFit ??= new Map()).set(h, this.liveSeq);
    }
    if (slot.state === 2) {
      if (info.requeueAt !== undefined) this.backingOff.add(slot);
      else this.backingOff.delete(slot);
    }
    this.toParked(slot);
    // A gang whose waiting time runs must be looked at when it runs out, freed or not.
    const g = info.gang;
    if (g?.waitingSince !== undefined) (this.deadlines ??= new Map()).set(slot, g.waitingSince + g.waitingSeconds);
  }

  /** Removes a Workload; what get() returned for it just before (one lookup for both). */
  delete(key: string): WorkloadInfo | undefined {
    const slot = this.own(key);
    if (slot) {
      this.slots.delete(key);
      return this.drop(slot);
    }
    if (this.sticky === key) this.setSticky(undefined);
    return undefined;
  }

  /** Takes a slot out of the queue (its manager has taken it out of the map). */
  drop(slot: Slot): WorkloadInfo | undefined {
    let info: WorkloadInfo | undefined;
    if (slot.state !== 0) info = slot.info;
    if (slot.state === 1) removeAt(this.heap, slot.at, this.sticky);
    else if (slot.state === 2) this.unlink(slot);
    slot.state = 0;
    if (this.deadlines !== undefined) this.forgetDeadline(slot);
    if (this.sticky === slot.key) this.setSticky(undefined);
    return info;
  }

  private forgetDeadline(slot: Slot): void {
    const d = this.deadlines!;
    d.delete(slot);
    if (d.size === 0) this.deadlines = undefined;
  }

  setSticky(key: string | undefined): void {
    if (this.sticky === key) return;
    this.sticky = key;
    const old = this.heap;
    this.heap = [];
    for (const slot of old) {
      this.heap.push(slot);
      siftUp(this.heap, this.heap.length - 1, key);
    }
  }

  /**
   * Pops the head ready at `now`; Workloads still in backoff are parked (they come back on
   * the next requeue-all after their backoff).
   */
  pop(now: number): WorkloadInfo | undefined {
    if (this.deadlines !== undefined) {
      for (const [slot, at] of [...this.deadlines]) {
        if (slot.state !== 2) this.forgetDeadline(slot);
        else if (at <= now) {
          this.forgetDeadline(slot);
          this.pushSlot(slot, slot.info);
        }
      }
    }
    const heap = this.heap;
    while (heap.length > 0) {
      const slot = heap[0]!;
      removeAt(heap, 0, this.sticky);
      const info = slot.info;
      slot.state = 0;
      if (info.requeueAt !== undefined && info.requeueAt > now) {
        this.toParked(slot);
        continue;
      }
      if (this.noFit !== undefined) {
        const h = this.hashOf(slot);
        const since = h === null ? undefined : this.noFit.get(h);
        // Live when its shape failed: Kueue moved it to the inadmissible set then.
        if (since !== undefined && slot.liveSeq <= since) {
          this.toParked(slot);
          continue;
        }
      }
      return info;
    }
    return undefined;
  }

  /** Moves every parked Workload (backoff over at `now`) back into the heap. */
  requeueInadmissible(now: number): number {
    this.noFit = undefined;
    let n = 0;
    for (let slot = this.first; slot;) {
      const next = slot.next;
      const info = slot.info;
      if (!(info.requeueAt !== undefined && info.requeueAt > now)) {
        this.pushSlot(slot, info);
        n++;
      }
      slot = next;
    }
    return n;
  }

  /**
   * Moves back only the parked Workloads that are due at `now`: backoff over, or a gang's
   * waiting time out. Kueue requeues a Workload at the end of its backoff by itself (its
   * Requeued condition turns True); that is no capacity event, the others stay parked.
   */
  requeueDue(now: number): number {
    let n = 0;
    for (const slot of [...this.backingOff]) {
      const at = slot.info.requeueAt;
      if (slot.state === 2 && at !== undefined && at <= now) {
        this.pushSlot(slot, slot.info);
        n++;
      }
    }
    for (const [slot, at] of this.deadlines ? [...this.deadlines] : []) {
      if (slot.state === 2 && at <= now) {
        this.pushSlot(slot, slot.info);
        n++;
      }
    }
    return n;
  }

  private parkedInfos(): WorkloadInfo[] {
    const out: WorkloadInfo[] = [];
    for (let slot = this.first; slot; slot = slot.next) out.push(slot.info);
    return out;
  }

  /** Every pending Workload, heap and parked, in queue order. */
  pending(): WorkloadInfo[] {
    const live = [...this.heap].sort((a, b) => a.liveSeq - b.liveSeq);
    return [...live.map((x) => x.info), ...this.parkedInfos()].sort(queueOrder(this.sticky));
  }

  /** The earliest time a parked Workload needs looking at (backoff over, gang waiting time out), if any. */
  nextBackoff(now: number): number | undefined {
    let t: number | undefined;
    for (const slot of this.backingOff) {
      const info = slot.info;
      if (info.requeueAt !== undefined && info.requeueAt > now && (t === undefined || info.requeueAt < t)) t = info.requeueAt;
    }
    if (this.deadlines) for (const at of this.deadlines.values()) if (at > now && (t === undefined || at < t)) t = at;
    return t;
  }
}

/** The queues of every ClusterQueue, and where each pending Workload is. */
export class QueueManager {
  private readonly queues = new Map<string, ClusterQueueQueue>();
  /** The queues in name order (heads() walks them), and their names at the same index; kept sorted as queues are added. */
  private readonly sortedNames: string[] = [];
  private readonly sortedQueues: ClusterQueueQueue[] = [];
  /**
   * Every pending Workload (and every head out with the current cycle) by key: its slot,
   * which names its queue, so that following a key to its queue and state is one lookup,
   * and the name handed out is the queue's own string (a caller's copy of the name would be
   * hashed and compared afresh on every lookup). Shared by the queues: one entry per Workload.
   */
  private readonly slots = new Map<string, Slot>();
  /** Pending Workloads by gang id (gang groups span queues). */
  private readonly byGang = new Map<string, string>();
  /** Workloads waiting for the preemptions they issued: decided first in the next cycles. */
  readonly preemptors = new Set<string>();

  /** `equivalenceHashing`: Kueue's SchedulingEquivalenceHashing gate (BestEffortFIFO queues). */
  constructor(private readonly opts: { equivalenceHashing?: boolean } = {}) {}

  ensure(cq: string, strategy: QueueingStrategy): ClusterQueueQueue {
    let q = this.queues.get(cq);
    if (!q) {
      q = new ClusterQueueQueue(cq, strategy, this.slots);
      q.hashing = this.opts.equivalenceHashing === true;
      this.queues.set(cq, q);
      // Binary insertion (code-unit order, as a default sort): a queue added is rare, a
      // cycle reads the order every time.
      const names = this.sortedNames;
      let lo = 0;
      let hi = names.length;
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if (names[mid]! < cq) lo = mid + 1;
        else hi = mid;
      }
      names.splice(lo, 0, cq);
      this.sortedQueues.splice(lo, 0, q);
    } else {
      q.strategy = strategy;
    }
    return q;
  }

  queue(cq: string): ClusterQueueQueue | undefined {
    return this.queues.get(cq);
  }

  names(): string[] {
    return [...this.sortedNames];
  }

  /** Adds or updates a pending Workload in its ClusterQueue's heap. */
  add(cq: string, info: WorkloadInfo): void {
    const prev = this.slots.get(info.key)?.queue;
    const q = this.queues.get(cq);
    if (prev !== undefined && prev !== q) prev.delete(info.key);
    if (!q) throw new Error(`no queue for ClusterQueue ${cq}`);
    q.offer(info);
    if (info.gang) this.byGang.set(info.gang.id, info.key);
  }

  delete(key: string): void {
    const slot = this.slots.get(key);
    if (slot === undefined) return;
    this.slots.delete(key);
    const info = slot.queue.drop(slot);
    if (this.preemptors.size > 0) this.preemptors.delete(key);
    if (info?.gang && this.byGang.get(info.gang.id) === key) this.byGang.delete(info.gang.id);
  }

  clusterQueueOf(key: string): string | undefined {
    return this.slots.get(key)?.queue.name;
  }

  get(key: string): WorkloadInfo | undefined {
    const slot = this.slots.get(key);
    return slot !== undefined && slot.state !== 0 ? slot.info : undefined;
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
    const slot = this.slots.get(key);
    if (slot === undefined || slot.state === 0) return undefined;
    const info = slot.info;
    const live = slot.state === 1;
    slot.queue.park(info);
    return { info, live };
  }

  /**
   * After a failed attempt: back into the heap, or parked until capacity is freed; `noFit`
   * when it failed with NoFit or no preemption candidates (equivalence hashing).
   */
  requeue(info: WorkloadInfo, immediate: boolean, noFit = false): void {
    const q = this.slots.get(info.key)?.queue;
    if (q === undefined) return;
    if (immediate) q.push(info);
    else q.park(info, noFit);
  }

  /** Capacity was freed in these ClusterQueues (or everywhere): parked Workloads go back. */
  requeueInadmissible(now: number, cqs?: Iterable<string>): number {
    let n = 0;
    for (const name of cqs ?? this.queues.keys()) n += this.queues.get(name)?.requeueInadmissible(now) ?? 0;
    return n;
  }

  /** Moves back the parked Workloads due at `now` (backoff over, gang waiting time out) in every queue. */
  requeueDue(now: number): number {
    let n = 0;
    for (const q of this.queues.values()) n += q.requeueDue(now);
    return n;
  }

  /**
   * One head per ClusterQueue, in name order (the caller skips inactive ones); `names`, when
   * given, receives each head's ClusterQueue name at the same index (no lookup by key later).
   */
  heads(now: number, active: (cq: string) => boolean, names?: string[]): WorkloadInfo[] {
    const out: WorkloadInfo[] = [];
    const ordered = this.sortedNames;
    const queues = this.sortedQueues;
    for (let i = 0; i < ordered.length; i++) {
      const name = ordered[i]!;
      if (!active(name)) continue;
      const h = queues[i]!.pop(now);
      if (h) {
        out.push(h);
        names?.push(name);
      }
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
