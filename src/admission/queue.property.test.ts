// The queues (one key -> slot Map shared by every ClusterQueue's queue, each slot its own
// heap element and parked-list node) against a plain model: a Map of key -> { queue, info,
// state } where the head is found by sorting, over random sequences of adds (some moving a
// Workload to another ClusterQueue), heads, takes, requeues, requeues of the parked,
// deletes and sticky heads.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { wl } from '../testing/admission.ts';
import { QueueManager, queueOrder } from './queue.ts';
import { workloadInfo, type WorkloadInfo } from './workload-info.ts';

const CQS = ['a', 'b'];

type Op =
  | { op: 'add'; w: number; cq: number; version: number }
  | { op: 'heads'; now: number }
  | { op: 'take'; w: number }
  | { op: 'requeue'; w: number; immediate: boolean }
  | { op: 'requeueInadmissible'; now: number; cq: number | undefined }
  | { op: 'delete'; w: number }
  | { op: 'sticky'; w: number | undefined; cq: number };

const W = 16;
const op: fc.Arbitrary<Op> = fc.oneof(
  {
    arbitrary: fc.record({ op: fc.constant('add' as const), w: fc.nat(W - 1), cq: fc.nat(CQS.length - 1), version: fc.nat(3) }),
    weight: 8,
  },
  fc.record({ op: fc.constant('heads' as const), now: fc.nat(10) }),
  fc.record({ op: fc.constant('take' as const), w: fc.nat(W - 1) }),
  { arbitrary: fc.record({ op: fc.constant('requeue' as const), w: fc.nat(W - 1), immediate: fc.boolean() }), weight: 2 },
  fc.record({
    op: fc.constant('requeueInadmissible' as const),
    now: fc.nat(10),
    cq: fc.option(fc.nat(CQS.length - 1), { nil: undefined }),
  }),
  fc.record({ op: fc.constant('delete' as const), w: fc.nat(W - 1) }),
  fc.record({ op: fc.constant('sticky' as const), w: fc.option(fc.nat(W - 1), { nil: undefined }), cq: fc.nat(CQS.length - 1) }),
);

/** Workload `w` as of `version` (a new version may change its priority, time and backoff). */
function infoOf(w: number, version: number): WorkloadInfo {
  const base = workloadInfo(
    wl(`w${w}`)
      .pods(1, { cpu: '1' })
      .priority((w * 7 + version * 3) % 5)
      .created((w * 5 + version) % 6)
      .build(),
  );
  return (w + version) % 5 === 0 ? { ...base, requeueAt: 5 } : base;
}

interface ModelSlot {
  cq: string;
  info: WorkloadInfo;
  state: 'live' | 'parked' | 'out';
}

/** Kueue's queue rules written the plain way: a Map, a sort per head. */
class Model {
  readonly slots = new Map<string, ModelSlot>();
  readonly sticky = new Map<string, string | undefined>();

  add(cq: string, info: WorkloadInfo): void {
    const s = this.slots.get(info.key);
    if (s && s.cq !== cq) this.delete(info.key);
    this.push(cq, info);
  }

  private push(cq: string, info: WorkloadInfo): void {
    const s = this.slots.get(info.key);
    if (s) {
      s.info = info;
      s.state = 'live';
    } else this.slots.set(info.key, { cq, info, state: 'live' });
  }

  private park(cq: string, info: WorkloadInfo): void {
    const s = this.slots.get(info.key);
    if (s) {
      s.info = info;
      s.state = 'parked';
    } else this.slots.set(info.key, { cq, info, state: 'parked' });
  }

  delete(key: string): void {
    const s = this.slots.get(key);
    if (!s) return;
    this.slots.delete(key);
    if (this.sticky.get(s.cq) === key) this.sticky.set(s.cq, undefined);
  }

  pending(cq: string): WorkloadInfo[] {
    return [...this.slots.values()]
      .filter((s) => s.cq === cq && s.state !== 'out')
      .map((s) => s.info)
      .sort(queueOrder(this.sticky.get(cq)));
  }

  heads(now: number): WorkloadInfo[] {
    const out: WorkloadInfo[] = [];
    for (const cq of CQS) {
      for (;;) {
        const live = [...this.slots.values()]
          .filter((s) => s.cq === cq && s.state === 'live')
          .map((s) => s.info)
          .sort(queueOrder(this.sticky.get(cq)));
        const h = live[0];
        if (!h) break;
        const s = this.slots.get(h.key)!;
        if (h.requeueAt !== undefined && h.requeueAt > now) {
          s.state = 'parked';
          continue;
        }
        s.state = 'out';
        out.push(h);
        break;
      }
    }
    return out;
  }

  take(key: string): { info: WorkloadInfo; live: boolean } | undefined {
    const s = this.slots.get(key);
    if (!s || s.state === 'out') return undefined;
    const live = s.state === 'live';
    s.state = 'parked';
    return { info: s.info, live };
  }

  requeue(info: WorkloadInfo, immediate: boolean): void {
    const s = this.slots.get(info.key);
    if (!s) return;
    if (immediate) this.push(s.cq, info);
    else this.park(s.cq, info);
  }

  requeueInadmissible(now: number, cqs: readonly string[]): number {
    let n = 0;
    for (const s of this.slots.values()) {
      if (!cqs.includes(s.cq) || s.state !== 'parked') continue;
      if (s.info.requeueAt !== undefined && s.info.requeueAt > now) continue;
      s.state = 'live';
      n++;
    }
    return n;
  }
}

describe('queue (property)', () => {
  it('the queues agree with a plain Map model over random add, heads, take, requeue, delete and sticky sequences', () => {
    fc.assert(
      fc.property(fc.array(op, { maxLength: 80, size: 'max' }), (ops) => {
        const q = new QueueManager();
        const m = new Model();
        for (const cq of CQS) q.ensure(cq, 'BestEffortFIFO');
        const version = new Map<number, number>();
        const current = (w: number) => infoOf(w, version.get(w) ?? 0);
        for (const o of ops) {
          switch (o.op) {
            case 'add': {
              version.set(o.w, o.version);
              const info = current(o.w);
              q.add(CQS[o.cq]!, info);
              m.add(CQS[o.cq]!, info);
              break;
            }
            case 'heads': {
              const names: string[] = [];
              const got = q.heads(o.now, () => true, names);
              const want = m.heads(o.now);
              assert.deepEqual(
                got.map((h) => h.key),
                want.map((h) => h.key),
              );
              assert.deepEqual(
                names,
                want.map((h) => m.slots.get(h.key)!.cq),
              );
              break;
            }
            case 'take': {
              const key = current(o.w).key;
              const got = q.take(key);
              const want = m.take(key);
              assert.deepEqual(got && { key: got.info.key, live: got.live }, want && { key: want.info.key, live: want.live });
              break;
            }
            case 'requeue': {
              const info = current(o.w);
              q.requeue(info, o.immediate);
              m.requeue(info, o.immediate);
              break;
            }
            case 'requeueInadmissible': {
              const cqs = o.cq === undefined ? CQS : [CQS[o.cq]!];
              assert.equal(q.requeueInadmissible(o.now, o.cq === undefined ? undefined : cqs), m.requeueInadmissible(o.now, cqs));
              break;
            }
            case 'delete': {
              const key = current(o.w).key;
              q.delete(key);
              m.delete(key);
              break;
            }
            case 'sticky': {
              const cq = CQS[o.cq]!;
              const key = o.w === undefined ? undefined : current(o.w).key;
              // The cycle makes a pending head of this queue sticky, or clears it.
              if (key !== undefined && m.slots.get(key)?.cq !== cq) break;
              q.queue(cq)!.setSticky(key);
              m.sticky.set(cq, key);
              break;
            }
          }
          for (let w = 0; w < W; w++) {
            const key = current(w).key;
            const s = m.slots.get(key);
            assert.equal(q.clusterQueueOf(key), s?.cq, `clusterQueueOf ${key}`);
            assert.equal(q.get(key)?.key, s && s.state !== 'out' ? key : undefined, `get ${key}`);
            for (const cq of CQS) {
              const own = s?.cq === cq ? s : undefined;
              assert.equal(q.queue(cq)!.isLive(key), own?.state === 'live', `isLive ${key} in ${cq}`);
              assert.equal(q.queue(cq)!.has(key), own !== undefined && own.state !== 'out', `has ${key} in ${cq}`);
            }
          }
          for (const cq of CQS) {
            const queue = q.queue(cq)!;
            const want = m.pending(cq);
            assert.deepEqual(
              queue.pending().map((i) => i.key),
              want.map((i) => i.key),
              `pending of ${cq}`,
            );
            assert.equal(
              queue.activeCount,
              [...m.slots.values()].filter((s) => s.cq === cq && s.state === 'live').length,
              `active in ${cq}`,
            );
            assert.equal(queue.pendingCount, want.length, `pending count of ${cq}`);
          }
        }
        // Drained, every queue gives up its Workloads in the model's order (a heap out of
        // order shows here, if not at an earlier head).
        for (let now = 10; ;) {
          const got = q.heads(now, () => true).map((h) => h.key);
          assert.deepEqual(
            got,
            m.heads(now).map((h) => h.key),
          );
          if (got.length === 0) break;
        }
      }),
      { numRuns: 200 },
    );
  });
});
