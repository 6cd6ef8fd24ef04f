// waitForPodsReady (kueue-core.md §1c) as pure transitions over a Workload. The job
// reconciler keeps the PodsReady condition (podsReadyCondition); the workload controller
// times an admitted workload out (checkPodsReady) and evicts it with a growing backoff, or
// deactivates it once the requeuing limit is spent; the job reconciler then clears the
// reservation (clearReservation) and the workload controller lets it back into the queue
// when the backoff is over (backoffFinished). The scheduler orders the queue by
// queueOrderTimestamp and, with blockAdmission, holds admissions (blockedByPodsReady).
// Time is seconds since the epoch, passed in as `now`; nothing here reads a clock.

import type { Condition, Workload } from '../api/objects.ts';
import { InputError, type Where } from '../api/errors.ts';
import { parseGoDuration } from '../api/gang.ts';
import { describeInput } from '../api/schema-parts.ts';
import { joinField } from '../api/topology-request.ts';
import { formatTime, parseTime } from '../api/time.ts';
import { isRecord } from '../api/values.ts';
import { WorkloadCondition, findCondition, isTrue, setCondition } from './conditions.ts';

// ---------------------------------------------------------------------------------------
// Reasons and messages (verbatim from Kueue)
// ---------------------------------------------------------------------------------------

export const PodsReadyReason = {
  WaitForStart: 'WaitForStart',
  Started: 'Started',
  WaitForRecovery: 'WaitForRecovery',
  Recovered: 'Recovered',
} as const;

export const PodsReadyMessage = {
  NotReady: 'Not all pods are ready or succeeded',
  Ready: 'All pods reached readiness and the workload is running',
  WaitingForRecovery: 'At least one pod has failed, waiting for recovery',
} as const;

export const EVICTED_BY_PODS_READY_TIMEOUT = 'PodsReadyTimeout';
export const EVICTED_BY_ADMISSION_CHECK = 'AdmissionCheck';
export const REQUEUING_LIMIT_EXCEEDED = 'RequeuingLimitExceeded';
export const REQUEUING_LIMIT_EXCEEDED_MESSAGE = 'exceeding the maximum number of re-queuing retries';
export const BACKOFF_FINISHED = 'BackoffFinished';
export const BACKOFF_FINISHED_MESSAGE = 'The workload backoff was finished';
export const WAITING_FOR_PODS_READY_MESSAGE = 'waiting for all admitted workloads to be in PodsReady condition';
export const NO_RESERVATION = 'NoReservation';
export const NO_RESERVATION_MESSAGE = 'The workload has no reservation';
export const PENDING_EVALUATION = 'PendingEvaluation';

/** Evictions after which Kueue requeues at once (Requeued=True) instead of backing off. */
const DIRECT_REQUEUE_REASONS: ReadonlySet<string> = new Set(['Preempted', 'NodeFailures']);

/** Go's zero metav1.Time: a missing timestamp sorts first and has long expired, as in Kueue. */
const GO_ZERO_TIME = parseTime('0001-01-01T00:00:00Z')!;

// ---------------------------------------------------------------------------------------
// Configuration
// ---------------------------------------------------------------------------------------

export type RequeuingTimestamp = 'Eviction' | 'Creation';

export interface WaitForPodsReadyConfig {
  timeoutSeconds: number;
  /** 0 = no recovery timeout. */
  recoveryTimeoutSeconds: number;
  blockAdmission: boolean;
  requeuingStrategy: {
    timestamp: RequeuingTimestamp;
    /** undefined = requeue forever. */
    backoffLimitCount?: number;
    backoffBaseSeconds: number;
    backoffMaxSeconds: number;
  };
}

/** On by default since v0.19 (FG DisableWaitForPodsReady turns it off). */
export const DEFAULT_WAIT_FOR_PODS_READY: WaitForPodsReadyConfig = Object.freeze({
  timeoutSeconds: 1800,
  recoveryTimeoutSeconds: 1800,
  blockAdmission: false,
  requeuingStrategy: Object.freeze({
    timestamp: 'Eviction',
    backoffLimitCount: undefined,
    backoffBaseSeconds: 60,
    backoffMaxSeconds: 3600,
  }),
});

const BLOCK_FIELDS = ['timeout', 'recoveryTimeout', 'blockAdmission', 'requeuingStrategy'];
const STRATEGY_FIELDS = ['timestamp', 'backoffLimitCount', 'backoffBaseSeconds', 'backoffMaxSeconds'];
const INT32_MAX = 2 ** 31 - 1;

/**
 * Reads the `waitForPodsReady` block of a v1beta2 Kueue Configuration. Absent (undefined
 * or null) means the defaults. `where.field` names the block (default `waitForPodsReady`).
 * Throws an InputError naming the first bad field and what it accepts.
 */
export function parseWaitForPodsReady(raw: unknown, where: Where = {}): WaitForPodsReadyConfig {
  if (raw === undefined || raw === null) return DEFAULT_WAIT_FOR_PODS_READY;
  const block = where.field ?? 'waitForPodsReady';
  const fail = (sub: string, detail: string): never => {
    throw new InputError({ ...where, field: joinField(block, sub) }, detail);
  };
  if (!isRecord(raw)) fail('', `must be a mapping with ${BLOCK_FIELDS.join(', ')}, got ${describeInput(raw)}`);
  const b = raw as Record<string, unknown>;
  for (const key of Object.keys(b)) {
    if (key === 'enable') {
      fail(
        key,
        'was removed in v1beta2: the presence of waitForPodsReady enables it (and it is on by default since v0.19); remove the field',
      );
    }
    if (!BLOCK_FIELDS.includes(key)) fail(key, `unknown field; waitForPodsReady accepts ${BLOCK_FIELDS.join(', ')}`);
  }

  const duration = (key: string, v: unknown): number => {
    const s = typeof v === 'string' ? parseGoDuration(v) : undefined;
    if (s === undefined) fail(key, `must be a Go duration such as "30m", "1h30m" or "0s", got ${describeInput(v)}`);
    if (s! < 0) fail(key, `Invalid value: ${JSON.stringify(v)}: must be greater than or equal to 0`);
    return s!;
  };
  const int32 = (key: string, v: unknown): number => {
    if (typeof v !== 'number' || !Number.isInteger(v) || v > INT32_MAX)
      fail(key, `must be an integer from 0 to ${INT32_MAX}, got ${describeInput(v)}`);
    if ((v as number) < 0) fail(key, `Invalid value: ${String(v)}: must be greater than or equal to 0`);
    return v as number;
  };

  if (b.timeout === undefined || b.timeout === null)
    fail('timeout', 'is required in v1beta2: a Go duration such as "30m" (the default when the whole block is left out)');
  const timeoutSeconds = duration('timeout', b.timeout);
  const recoveryTimeoutSeconds =
    b.recoveryTimeout === undefined || b.recoveryTimeout === null ? timeoutSeconds : duration('recoveryTimeout', b.recoveryTimeout);
  let blockAdmission = false;
  if (b.blockAdmission !== undefined && b.blockAdmission !== null) {
    if (typeof b.blockAdmission !== 'boolean') fail('blockAdmission', `must be true or false, got ${describeInput(b.blockAdmission)}`);
    blockAdmission = b.blockAdmission as boolean;
  }

  const d = DEFAULT_WAIT_FOR_PODS_READY.requeuingStrategy;
  const strategy = { ...d };
  const rs = b.requeuingStrategy;
  if (rs !== undefined && rs !== null) {
    if (!isRecord(rs)) fail('requeuingStrategy', `must be a mapping with ${STRATEGY_FIELDS.join(', ')}, got ${describeInput(rs)}`);
    const r = rs as Record<string, unknown>;
    for (const key of Object.keys(r)) {
      if (!STRATEGY_FIELDS.includes(key))
        fail(`requeuingStrategy.${key}`, `unknown field; requeuingStrategy accepts ${STRATEGY_FIELDS.join(', ')}`);
    }
    if (r.timestamp !== undefined && r.timestamp !== null) {
      if (r.timestamp !== 'Eviction' && r.timestamp !== 'Creation') {
        fail('requeuingStrategy.timestamp', `Unsupported value: ${JSON.stringify(r.timestamp)}: supported values: "Creation", "Eviction"`);
      }
      strategy.timestamp = r.timestamp as RequeuingTimestamp;
    }
    const opt = (key: 'backoffLimitCount' | 'backoffBaseSeconds' | 'backoffMaxSeconds') =>
      r[key] === undefined || r[key] === null ? undefined : int32(`requeuingStrategy.${key}`, r[key]);
    strategy.backoffLimitCount = opt('backoffLimitCount');
    strategy.backoffBaseSeconds = opt('backoffBaseSeconds') ?? d.backoffBaseSeconds;
    strategy.backoffMaxSeconds = opt('backoffMaxSeconds') ?? d.backoffMaxSeconds;
  }
  return { timeoutSeconds, recoveryTimeoutSeconds, blockAdmission, requeuingStrategy: strategy };
}

// ---------------------------------------------------------------------------------------
// Backoff and requeue state
// ---------------------------------------------------------------------------------------

/**
 * Seconds to wait before the `count`-th requeue: base·2^(count-1), capped at max; 0 for
 * count < 1. Kueue adds a jitter of 0.01 % (wait.Backoff{Jitter: 0.0001}); we add none so
 * that the core stays deterministic.
 */
export function backoffSeconds(count: number, cfg: WaitForPodsReadyConfig): number {
  const { backoffBaseSeconds: base, backoffMaxSeconds: max } = cfg.requeuingStrategy;
  if (count < 1 || base <= 0) return 0;
  return Math.min(base * 2 ** (count - 1), max);
}

/** `status.requeueState` as Kueue writes it (requeueAt in RFC 3339). */
export interface RequeueState {
  count?: number;
  requeueAt?: string;
}

/** The requeue state with requeueAt in seconds; count 0 when absent. */
export function requeueStateOf(w: Workload): { count: number; requeueAt?: number } {
  const rs = w.status?.requeueState;
  if (!isRecord(rs)) return { count: 0 };
  const count = typeof rs.count === 'number' && Number.isFinite(rs.count) ? rs.count : 0;
  const requeueAt = typeof rs.requeueAt === 'string' ? parseTime(rs.requeueAt) : undefined;
  return requeueAt === undefined ? { count } : { count, requeueAt };
}

// ---------------------------------------------------------------------------------------
// The job reconciler's PodsReady condition
// ---------------------------------------------------------------------------------------

export interface PodsState {
  /** Admitted=True on the Workload (the job runs). */
  admitted: boolean;
  /** Every pod is ready or has succeeded. */
  allReady: boolean;
}

/**
 * The PodsReady condition the job reconciler would write, or undefined when the current one
 * already has that status and reason (Kueue compares only those two). The transition time
 * is `now` when the status changes, else kept.
 *   not admitted                 -> False/WaitForStart
 *   all ready                    -> True/Started (Recovered after WaitForRecovery or Recovered)
 *   not ready, absent or False
 *     (not WaitForRecovery)      -> False/WaitForStart
 *   not ready otherwise          -> False/WaitForRecovery
 */
export function podsReadyCondition(w: Workload, pods: PodsState, now: number): Condition | undefined {
  const old = findCondition(w, WorkloadCondition.PodsReady);
  let next: Condition;
  const c = (status: 'True' | 'False', reason: string, message: string): Condition => ({
    type: WorkloadCondition.PodsReady,
    status,
    reason,
    message,
  });
  if (!pods.admitted) next = c('False', PodsReadyReason.WaitForStart, PodsReadyMessage.NotReady);
  else if (pods.allReady) {
    const recovered = old?.reason === PodsReadyReason.WaitForRecovery || old?.reason === PodsReadyReason.Recovered;
    next = c('True', recovered ? PodsReadyReason.Recovered : PodsReadyReason.Started, PodsReadyMessage.Ready);
  } else if (old === undefined || (old.status === 'False' && old.reason !== PodsReadyReason.WaitForRecovery)) {
    next = c('False', PodsReadyReason.WaitForStart, PodsReadyMessage.NotReady);
  } else next = c('False', PodsReadyReason.WaitForRecovery, PodsReadyMessage.WaitingForRecovery);
  if (old && old.status === next.status && old.reason === next.reason) return undefined;
  const lastTransitionTime =
    old && old.status === next.status && old.lastTransitionTime !== undefined ? old.lastTransitionTime : formatTime(now);
  return { ...next, lastTransitionTime };
}

/** Writes podsReadyCondition's result; true when the Workload changed. */
export function updatePodsReady(w: Workload, pods: PodsState, now: number): boolean {
  const c = podsReadyCondition(w, pods, now);
  if (!c) return false;
  setCondition(w, c, now);
  return true;
}

// ---------------------------------------------------------------------------------------
// The workload controller's timeout
// ---------------------------------------------------------------------------------------

export type PodsReadyCheck =
  | { kind: 'none' }
  /** Not expired yet: check again at `at`. */
  | { kind: 'wait'; at: number }
  | {
      kind: 'evict';
      reason: typeof EVICTED_BY_PODS_READY_TIMEOUT;
      message: string;
      underlyingCause: typeof PodsReadyReason.WaitForStart | typeof PodsReadyReason.WaitForRecovery;
      /** The new requeue state; requeueAt in seconds. */
      requeueState: { count: number; requeueAt: number };
    }
  | { kind: 'deactivate'; reason: typeof REQUEUING_LIMIT_EXCEEDED; message: typeof REQUEUING_LIMIT_EXCEEDED_MESSAGE };

export type PodsReadyEviction = Extract<PodsReadyCheck, { kind: 'evict' }>;

const timeOf = (c: Condition | undefined): number => parseTime(c?.lastTransitionTime) ?? GO_ZERO_TIME;

/**
 * The timeout check. Phases: 1. skip what is not timed (not admitted, inactive, already
 * evicted, finished, PodsReady=True, recovery timeout off); 2. pick the clock: the Admitted
 * transition and `timeout` while waiting to start, the PodsReady transition and
 * `recoveryTimeout` while waiting to recover; 3. before expiry, wait; 4. on expiry,
 * deactivate when the next requeue would exceed backoffLimitCount, else evict with the
 * next backoff. Expiry is inclusive (Kueue evicts when the time left reaches 0). A missing
 * or unreadable transition time counts as Go's zero time, i.e. long expired, as in Kueue.
 */
export function checkPodsReady(w: Workload, cfg: WaitForPodsReadyConfig, now: number): PodsReadyCheck {
  if (w.status?.admission === undefined || !isTrue(w, WorkloadCondition.Admitted)) return { kind: 'none' };
  if (w.spec.active === false || isTrue(w, WorkloadCondition.Evicted) || isTrue(w, WorkloadCondition.Finished)) return { kind: 'none' };
  const pr = findCondition(w, WorkloadCondition.PodsReady);
  if (pr?.status === 'True') return { kind: 'none' };

  let start: number;
  let timeout: number;
  let underlyingCause: PodsReadyEviction['underlyingCause'];
  if (pr?.status === 'False' && pr.reason === PodsReadyReason.WaitForRecovery) {
    if (cfg.recoveryTimeoutSeconds <= 0) return { kind: 'none' };
    start = timeOf(pr);
    timeout = cfg.recoveryTimeoutSeconds;
    underlyingCause = PodsReadyReason.WaitForRecovery;
  } else {
    start = timeOf(findCondition(w, WorkloadCondition.Admitted));
    timeout = cfg.timeoutSeconds;
    underlyingCause = PodsReadyReason.WaitForStart;
  }
  if (now < start + timeout) return { kind: 'wait', at: start + timeout };

  const count = requeueStateOf(w).count + 1;
  const limit = cfg.requeuingStrategy.backoffLimitCount;
  if (limit !== undefined && count > limit)
    return { kind: 'deactivate', reason: REQUEUING_LIMIT_EXCEEDED, message: REQUEUING_LIMIT_EXCEEDED_MESSAGE };
  const key = `${w.metadata.namespace ?? 'default'}/${w.metadata.name}`;
  return {
    kind: 'evict',
    reason: EVICTED_BY_PODS_READY_TIMEOUT,
    message: `Exceeded the PodsReady timeout ${key}`,
    underlyingCause,
    requeueState: { count, requeueAt: now + backoffSeconds(count, cfg) },
  };
}

// ---------------------------------------------------------------------------------------
// Writers
// ---------------------------------------------------------------------------------------

interface EvictionStat {
  reason: string;
  underlyingCause: string;
  count: number;
}

/**
 * Evicted=True (PodsReadyTimeout), the new requeueState, and one more eviction counted in
 * status.schedulingStats.evictions under (reason, underlyingCause). The reservation stays:
 * the job is stopped first, then clearReservation runs.
 */
export function applyPodsReadyEviction(w: Workload, result: PodsReadyEviction, now: number): void {
  setCondition(w, { type: WorkloadCondition.Evicted, status: 'True', reason: result.reason, message: result.message }, now);
  const requeueState: RequeueState = { count: result.requeueState.count, requeueAt: formatTime(result.requeueState.requeueAt) };
  const stats = isRecord(w.status!.schedulingStats) ? w.status!.schedulingStats : {};
  const evictions: EvictionStat[] = Array.isArray(stats.evictions) ? (stats.evictions as EvictionStat[]).map((e) => ({ ...e })) : [];
  const hit = evictions.find((e) => e.reason === result.reason && e.underlyingCause === result.underlyingCause);
  if (hit) hit.count += 1;
  else evictions.push({ reason: result.reason, underlyingCause: result.underlyingCause, count: 1 });
  w.status = { ...w.status, requeueState, schedulingStats: { ...stats, evictions } };
}

/**
 * After an evicted job has stopped: status.admission removed, QuotaReserved=False
 * (PendingEvaluation, with the eviction message), Admitted=False (NoReservation) if it was
 * True, and Requeued set from the Evicted condition: True only for evictions Kueue requeues
 * at once (Preempted, NodeFailures) with no backoff pending, else False until
 * backoffFinished.
 */
export function clearReservation(w: Workload, now: number): void {
  const evicted = isTrue(w, WorkloadCondition.Evicted) ? findCondition(w, WorkloadCondition.Evicted) : undefined;
  if (w.status?.admission !== undefined) {
    const { admission: _, ...rest } = w.status;
    w.status = rest;
  }
  setCondition(
    w,
    {
      type: WorkloadCondition.QuotaReserved,
      status: 'False',
      reason: PENDING_EVALUATION,
      message: evicted?.message ?? NO_RESERVATION_MESSAGE,
    },
    now,
  );
  if (isTrue(w, WorkloadCondition.Admitted)) {
    setCondition(w, { type: WorkloadCondition.Admitted, status: 'False', reason: NO_RESERVATION, message: NO_RESERVATION_MESSAGE }, now);
  }
  if (evicted) {
    const { requeueAt } = requeueStateOf(w);
    const backoffPending = requeueAt !== undefined && requeueAt > now;
    const direct = DIRECT_REQUEUE_REASONS.has(evicted.reason ?? '') && !backoffPending;
    setCondition(
      w,
      { type: WorkloadCondition.Requeued, status: direct ? 'True' : 'False', reason: evicted.reason, message: evicted.message },
      now,
    );
  }
}

/** DeactivationTarget=True (RequeuingLimitExceeded) and spec.active=false. */
export function applyDeactivation(w: Workload, now: number): void {
  setCondition(
    w,
    {
      type: WorkloadCondition.DeactivationTarget,
      status: 'True',
      reason: REQUEUING_LIMIT_EXCEEDED,
      message: REQUEUING_LIMIT_EXCEEDED_MESSAGE,
    },
    now,
  );
  w.spec = { ...w.spec, active: false };
}

/**
 * When the backoff of a pending, active Workload is over (requeueAt <= now) and Requeued is
 * not yet True, sets Requeued=True (BackoffFinished) and returns true; else changes nothing
 * and returns false (still backing off, nothing to finish, or already requeued).
 */
export function backoffFinished(w: Workload, now: number): boolean {
  if (w.status?.admission !== undefined || w.spec.active === false) return false;
  const { requeueAt } = requeueStateOf(w);
  if (requeueAt === undefined || requeueAt > now || isTrue(w, WorkloadCondition.Requeued)) return false;
  setCondition(w, { type: WorkloadCondition.Requeued, status: 'True', reason: BACKOFF_FINISHED, message: BACKOFF_FINISHED_MESSAGE }, now);
  return true;
}

// ---------------------------------------------------------------------------------------
// Queue order and blockAdmission
// ---------------------------------------------------------------------------------------

/**
 * The time a pending Workload is ordered by, in seconds: the Evicted transition of a
 * PodsReadyTimeout eviction (with timestamp Eviction) or of an AdmissionCheck eviction
 * (always), else the creation time. A missing creation time is Go's zero time (first).
 */
export function queueOrderTimestamp(w: Workload, cfg: WaitForPodsReadyConfig): number {
  const evicted = isTrue(w, WorkloadCondition.Evicted) ? findCondition(w, WorkloadCondition.Evicted) : undefined;
  const at = parseTime(evicted?.lastTransitionTime);
  if (at !== undefined) {
    if (evicted!.reason === EVICTED_BY_PODS_READY_TIMEOUT && cfg.requeuingStrategy.timestamp === 'Eviction') return at;
    if (evicted!.reason === EVICTED_BY_ADMISSION_CHECK) return at;
  }
  return parseTime(w.metadata.creationTimestamp) ?? GO_ZERO_TIME;
}

/**
 * With blockAdmission, the reason a fresh workload may not be admitted: some admitted
 * (not finished) workload is not PodsReady=True. undefined when admission may go on.
 * Second-pass workloads are exempt; that is the caller's to decide.
 */
export function blockedByPodsReady(admitted: readonly Workload[], cfg: WaitForPodsReadyConfig): string | undefined {
  if (!cfg.blockAdmission) return undefined;
  const waiting = admitted.some((w) => !isTrue(w, WorkloadCondition.Finished) && !isTrue(w, WorkloadCondition.PodsReady));
  return waiting ? WAITING_FOR_PODS_READY_MESSAGE : undefined;
}
