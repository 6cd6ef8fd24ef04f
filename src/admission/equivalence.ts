// Scheduling equivalence (Kueue's SchedulingEquivalenceHashing, made exact): a lone head
// that failed nomination fails again, with the same reason and message, when another head
// of the same ClusterQueue, shape and priority is nominated on the same snapshot state.
// Heads of one ClusterQueue are mostly alike (a Job controller's replicas, a benchmark's
// classes), and a parked head is followed by the next one at the same instant, so most
// nominations of a busy cluster repeat one that just failed.
//
// What a lone head's nomination reads (nominate.ts, nominateMember): flavor assignment
// (the ClusterQueue, the PodSets and what placement reads of the Workload, quota usage,
// the TAS snapshots), then the preemption search (also its priority, and its creation time
// under LowerOrNewerEqualPriority). The snapshot's own configuration (ClusterQueues,
// flavors) never changes; its reservations and quota usage change only through
// addAdmitted / removeAdmitted (`admittedVersion`), and the TAS snapshots count every
// change in their versions. So a failure is remembered under its key while that state
// stamp holds; any change forgets every failure.
//
// Only failures are remembered, and only those whose preemption search had no candidate
// at all: candidates' order reads their Evicted condition, which the scheduler may update
// on a reservation without taking it out of the snapshot.

import type { Member } from './entry.ts';
import type { PendingReason } from './flavor-assigner.ts';
import type { AdmissionSnapshot } from './snapshot.ts';
import { placementInputsKey } from './workload-info.ts';

export interface Failure {
  reason: PendingReason;
  message: string;
}

interface Remembered extends Failure {
  priority: number;
  created: number;
}

/** What nomination remembers on a snapshot (`snap.nominationMemo`), each part bounded. */
export interface NominationMemo {
  /** The state stamp the failures hold for (see stampHolds). */
  stamp: number[];
  /** Placement options object -> ClusterQueue -> shape -> failures (by priority and timestamp). */
  failures: WeakMap<object, Map<string, Map<string, Remembered[]>>>;
  /** Failures kept since they were last forgotten. */
  size: number;
  /** Shape keys, interned: a head keeps the shared string (not a copy of its own), equal shapes compare as one object. */
  shapes: Map<string, string>;
  /** The options looked up last, and their failures (most cycles share one options object). */
  lastOptions: object | undefined;
  lastFailures: Map<string, Map<string, Remembered[]>> | undefined;
}

/** Shape keys interned before the table is forgotten (bounded memory; heads keep theirs). */
const MAX_SHAPES = 4096;

/** Failures remembered before they are forgotten (bounded memory). */
const MAX_FAILURES = 4096;

const NO_OPTIONS = {};

function memoOf(snap: AdmissionSnapshot): NominationMemo {
  return (snap.nominationMemo ??= {
    stamp: [],
    failures: new WeakMap(),
    size: 0,
    shapes: new Map(),
    lastOptions: undefined,
    lastFailures: undefined,
  });
}

/** Whether the state a nomination reads (besides the head and the fixed configuration) is the one `stamp` recorded. */
function stampHolds(snap: AdmissionSnapshot, stamp: readonly number[]): boolean {
  const list = snap.tasList;
  if (stamp.length !== 1 + 5 * list.length || stamp[0] !== snap.admittedVersion) return false;
  for (let i = 0; i < list.length; i++) {
    const s = list[i]!.snapshot;
    const b = 1 + 5 * i;
    if (
      stamp[b] !== s.version ||
      stamp[b + 1] !== s.usageVersion ||
      stamp[b + 2] !== s.attributeVersion ||
      stamp[b + 3] !== s.resourceCount ||
      stamp[b + 4] !== s.domainCount
    )
      return false;
  }
  return true;
}

function stampOf(snap: AdmissionSnapshot): number[] {
  const out = [snap.admittedVersion];
  for (const t of snap.tasList) {
    const s = t.snapshot;
    out.push(s.version, s.usageVersion, s.attributeVersion, s.resourceCount, s.domainCount);
  }
  return out;
}

/**
 * Whether a member's nomination is remembered: alone (not a gang group), not a gang, no
 * partial admission (minCount), no held reservation. Heads are told apart by their
 * ClusterQueue, their shape (shapeOf), their priority and, under LowerOrNewerEqualPriority
 * (the search reads it then), their queue timestamp.
 */
export function equivalenceApplies(m: Member, alone: boolean): boolean {
  const info = m.info;
  if (!alone || info.gang !== undefined || m.held !== undefined) return false;
  for (const p of info.podSets) if (p.minCount !== undefined) return false;
  return true;
}

/**
 * What placement reads of a member's Workload, as a key (kept on the head, interned, so
 * nothing is built per nomination and its hash is computed once). Made only when a failure
 * is looked up or kept: a head that fits while nothing failed never builds it.
 */
function shapeOf(memo: NominationMemo, m: Member): string {
  const info = m.info;
  const own = placementInputsKey(info);
  const shapes = memo.shapes;
  let shape = shapes.get(own);
  if (shape === undefined) {
    if (shapes.size >= MAX_SHAPES) shapes.clear();
    shapes.set(own, (shape = own));
  }
  info.placementInputs = shape;
  return shape;
}

/** The queue timestamp when the search reads it (LowerOrNewerEqualPriority), else 0. */
function createdOf(m: Member): number {
  return m.cq.preemption.withinClusterQueue === 'LowerOrNewerEqualPriority' ? m.info.timestamp : 0;
}

/** The failure remembered for an equal head (equivalenceApplies) on the snapshot as it is, if any. */
export function recallFailure(snap: AdmissionSnapshot, options: object | undefined, m: Member): Failure | undefined {
  const memo = snap.nominationMemo;
  if (!memo || memo.size === 0 || !stampHolds(snap, memo.stamp)) return undefined;
  const byShape = failuresOf(memo, options)?.get(m.cq.name);
  if (byShape === undefined) return undefined;
  const list = byShape.get(shapeOf(memo, m));
  if (list === undefined) return undefined;
  const priority = m.info.priority;
  const created = createdOf(m);
  for (const r of list) if (r.priority === priority && r.created === created) return r;
  return undefined;
}

/** Remembers a failure found on the snapshot as it is now (after the nomination put it back). */
export function rememberFailure(snap: AdmissionSnapshot, options: object | undefined, m: Member, failure: Failure): void {
  const memo = memoOf(snap);
  const shape = shapeOf(memo, m);
  if (!stampHolds(snap, memo.stamp) || memo.size >= MAX_FAILURES) {
    memo.stamp = stampOf(snap);
    memo.failures = new WeakMap();
    memo.size = 0;
    memo.lastOptions = memo.lastFailures = undefined;
  }
  let byCq = failuresOf(memo, options);
  if (!byCq) {
    memo.failures.set(optionsKey(options), (byCq = new Map()));
    memo.lastOptions = memo.lastFailures = undefined;
  }
  let byShape = byCq.get(m.cq.name);
  if (!byShape) byCq.set(m.cq.name, (byShape = new Map()));
  let list = byShape.get(shape);
  if (!list) byShape.set(shape, (list = []));
  list.push({ priority: m.info.priority, created: createdOf(m), reason: failure.reason, message: failure.message });
  memo.size++;
}

function failuresOf(memo: NominationMemo, options: object | undefined): Map<string, Map<string, Remembered[]>> | undefined {
  if (options !== undefined && options === memo.lastOptions) return memo.lastFailures;
  const found = memo.failures.get(optionsKey(options));
  if (options !== undefined && found !== undefined) {
    memo.lastOptions = options;
    memo.lastFailures = found;
  }
  return found;
}

/** Placement options are told apart by identity; any empty set of them is the same. */
function optionsKey(options: object | undefined): object {
  if (options) for (const k in options) if ((options as Record<string, unknown>)[k] !== undefined) return options;
  return NO_OPTIONS;
}
