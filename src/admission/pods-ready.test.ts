import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import type { Condition, Workload } from '../api/objects.ts';
import { InputError } from '../api/errors.ts';
import { formatTime } from '../api/time.ts';
import { findCondition, resetCondition, setCondition, WorkloadCondition } from './conditions.ts';
import {
  applyDeactivation,
  applyPodsReadyEviction,
  backoffFinished,
  backoffSeconds,
  blockedByPodsReady,
  checkPodsReady,
  clearReservation,
  DEFAULT_WAIT_FOR_PODS_READY,
  parseWaitForPodsReady,
  podsReadyCondition,
  queueOrderTimestamp,
  updatePodsReady,
  type PodsReadyEviction,
  type WaitForPodsReadyConfig,
} from './pods-ready.ts';

const T0 = 1_800_000_000;
const cfg = (
  over: Partial<Omit<WaitForPodsReadyConfig, 'requeuingStrategy'>> & {
    requeuingStrategy?: Partial<WaitForPodsReadyConfig['requeuingStrategy']>;
  } = {},
): WaitForPodsReadyConfig => ({
  ...DEFAULT_WAIT_FOR_PODS_READY,
  ...over,
  requeuingStrategy: { ...DEFAULT_WAIT_FOR_PODS_READY.requeuingStrategy, ...over.requeuingStrategy },
});

/** Fluent Workload fixture: `wl('train').created(T0).admittedAt(T0 + 10).podsReady('False', 'WaitForStart', T0 + 10)`. */
class WorkloadBuilder {
  private readonly w: Workload;
  constructor(name: string, namespace: string) {
    this.w = {
      apiVersion: 'kueue.x-k8s.io/v1beta2',
      kind: 'Workload',
      metadata: { name, namespace },
      spec: { podSets: [{ name: 'main', count: 1, template: { spec: { containers: [] } } }] },
    };
  }
  private cond(type: string, status: Condition['status'], reason: string, t: number, message = ''): this {
    setCondition(this.w, { type, status, reason, message }, t);
    return this;
  }
  created(t: number): this {
    this.w.metadata.creationTimestamp = formatTime(t);
    return this;
  }
  admittedAt(t: number): this {
    this.w.status = {
      ...this.w.status,
      admission: { clusterQueue: 'cq', podSetAssignments: [{ name: 'main', count: 1, flavors: { cpu: 'default' } }] },
    };
    return this.cond(WorkloadCondition.QuotaReserved, 'True', 'QuotaReserved', t, 'Quota reserved in ClusterQueue cq').cond(
      WorkloadCondition.Admitted,
      'True',
      'Admitted',
      t,
      'The workload is admitted',
    );
  }
  podsReady(status: Condition['status'], reason: string, t: number): this {
    return this.cond(WorkloadCondition.PodsReady, status, reason, t);
  }
  evicted(reason: string, t: number, message = `evicted: ${reason}`): this {
    return this.cond(WorkloadCondition.Evicted, 'True', reason, t, message);
  }
  finished(t: number): this {
    return this.cond(WorkloadCondition.Finished, 'True', 'Succeeded', t);
  }
  requeue(count: number, requeueAt?: number): this {
    this.w.status = { ...this.w.status, requeueState: requeueAt === undefined ? { count } : { count, requeueAt: formatTime(requeueAt) } };
    return this;
  }
  inactive(): this {
    this.w.spec.active = false;
    return this;
  }
  build(): Workload {
    return this.w;
  }
}
const wl = (name: string, namespace = 'team-a') => new WorkloadBuilder(name, namespace);

const cond = (w: Workload, type: string) => {
  const c = findCondition(w, type);
  return c && { status: c.status, reason: c.reason, message: c.message };
};

function inputError(message: string | RegExp) {
  return (e: unknown) => {
    assert.ok(e instanceof InputError, `not an InputError: ${String(e)}`);
    if (typeof message === 'string') assert.equal(e.message, message);
    else assert.match(e.message, message);
    return true;
  };
}

describe('waitForPodsReady configuration', () => {
  it('the defaults are on: timeout 30m, recovery = timeout, no blockAdmission, Eviction order, backoff 60 s to 3600 s', () => {
    assert.deepEqual(parseWaitForPodsReady(undefined), {
      timeoutSeconds: 1800,
      recoveryTimeoutSeconds: 1800,
      blockAdmission: false,
      requeuingStrategy: { timestamp: 'Eviction', backoffLimitCount: undefined, backoffBaseSeconds: 60, backoffMaxSeconds: 3600 },
    });
    assert.equal(parseWaitForPodsReady(null), DEFAULT_WAIT_FOR_PODS_READY);
  });
  it('recoveryTimeout defaults to timeout', () => {
    const c = parseWaitForPodsReady({ timeout: '5m' });
    assert.equal(c.timeoutSeconds, 300);
    assert.equal(c.recoveryTimeoutSeconds, 300);
  });
  it('durations are Go durations and requeuingStrategy fields default one by one', () => {
    const c = parseWaitForPodsReady({
      timeout: '1h30m',
      recoveryTimeout: '1.5s',
      blockAdmission: true,
      requeuingStrategy: { timestamp: 'Creation', backoffLimitCount: 3, backoffMaxSeconds: 600 },
    });
    assert.deepEqual(c, {
      timeoutSeconds: 5400,
      recoveryTimeoutSeconds: 1.5,
      blockAdmission: true,
      requeuingStrategy: { timestamp: 'Creation', backoffLimitCount: 3, backoffBaseSeconds: 60, backoffMaxSeconds: 600 },
    });
    assert.equal(parseWaitForPodsReady({ timeout: '10m', recoveryTimeout: '0s' }).recoveryTimeoutSeconds, 0);
  });
  it('a bad field is refused with its path and what would be accepted', () => {
    const at = { file: 'config.yaml', document: 1, object: 'Configuration' };
    const cases: [unknown, string | RegExp][] = [
      [
        { timeout: '30 minutes' },
        'config.yaml, document 1, Configuration, waitForPodsReady.timeout: must be a Go duration such as "30m", "1h30m" or "0s", got the string "30 minutes"',
      ],
      [{ timeout: 1800 }, /waitForPodsReady\.timeout: must be a Go duration .* got number 1800$/],
      [{ blockAdmission: true }, /waitForPodsReady\.timeout: is required in v1beta2/],
      [{ timeout: '-1s' }, /waitForPodsReady\.timeout: Invalid value: "-1s": must be greater than or equal to 0$/],
      [{ timeout: '5m', recoveryTimeout: 'soon' }, /waitForPodsReady\.recoveryTimeout: must be a Go duration/],
      [{ enable: true, timeout: '5m' }, /waitForPodsReady\.enable: was removed in v1beta2/],
      [
        { timeout: '5m', blockAdmision: true },
        /waitForPodsReady\.blockAdmision: unknown field; waitForPodsReady accepts timeout, recoveryTimeout, blockAdmission, requeuingStrategy$/,
      ],
      [{ timeout: '5m', blockAdmission: 'yes' }, /waitForPodsReady\.blockAdmission: must be true or false, got the string "yes"$/],
      [
        { timeout: '5m', requeuingStrategy: { timestamp: 'Admission' } },
        /waitForPodsReady\.requeuingStrategy\.timestamp: Unsupported value: "Admission": supported values: "Creation", "Eviction"$/,
      ],
      [
        { timeout: '5m', requeuingStrategy: { backoffLimitCount: -1 } },
        /waitForPodsReady\.requeuingStrategy\.backoffLimitCount: Invalid value: -1: must be greater than or equal to 0$/,
      ],
      [
        { timeout: '5m', requeuingStrategy: { backoffBaseSeconds: 1.5 } },
        /requeuingStrategy\.backoffBaseSeconds: must be an integer from 0 to 2147483647, got number 1.5$/,
      ],
      [
        { timeout: '5m', requeuingStrategy: { backoffLimit: 3 } },
        /requeuingStrategy\.backoffLimit: unknown field; requeuingStrategy accepts timestamp, backoffLimitCount, backoffBaseSeconds, backoffMaxSeconds$/,
      ],
      ['30m', /^config\.yaml, document 1, Configuration, waitForPodsReady: must be a mapping/],
    ];
    for (const [raw, message] of cases) assert.throws(() => parseWaitForPodsReady(raw, at), inputError(message), JSON.stringify(raw));
    assert.throws(
      () => parseWaitForPodsReady({}, { field: 'spec.waitForPodsReady' }),
      inputError(/^spec\.waitForPodsReady\.timeout: is required/),
    );
  });
});

describe('requeuing backoff', () => {
  it('backoff doubles from 60 s and caps at 3600 s', () => {
    assert.deepEqual(
      [1, 2, 3, 4, 5, 6, 7, 8, 100, 5000].map((n) => backoffSeconds(n, DEFAULT_WAIT_FOR_PODS_READY)),
      [60, 120, 240, 480, 960, 1920, 3600, 3600, 3600, 3600],
    );
    assert.equal(backoffSeconds(0, DEFAULT_WAIT_FOR_PODS_READY), 0);
  });
  it('backoff is monotone in the count, never above the cap, and exact below it (property)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 10_000 }),
        fc.integer({ min: 0, max: 100_000 }),
        fc.integer({ min: 1, max: 3000 }),
        (base, max, n) => {
          const c = cfg({ requeuingStrategy: { backoffBaseSeconds: base, backoffMaxSeconds: max } });
          const a = backoffSeconds(n, c);
          const b = backoffSeconds(n + 1, c);
          assert.ok(a <= b && b <= max && a >= 0, `${a} ${b}`);
          assert.ok(Number.isFinite(a));
          if (base * 2 ** (n - 1) <= max) assert.equal(a, base * 2 ** (n - 1));
        },
      ),
    );
  });
});

describe('PodsReady condition (job reconciler)', () => {
  it('a workload that is not admitted waits for start', () => {
    const w = wl('a').build();
    assert.deepEqual(podsReadyCondition(w, { admitted: false, allReady: false }, T0), {
      type: 'PodsReady',
      status: 'False',
      reason: 'WaitForStart',
      message: 'Not all pods are ready or succeeded',
      lastTransitionTime: formatTime(T0),
    });
  });
  it('an admitted workload whose pods are not all ready waits for start until it has started once', () => {
    assert.equal(
      podsReadyCondition(
        wl('a').admittedAt(T0).podsReady('False', 'WaitForStart', T0).build(),
        { admitted: true, allReady: false },
        T0 + 5,
      ),
      undefined,
    );
    assert.equal(podsReadyCondition(wl('a').admittedAt(T0).build(), { admitted: true, allReady: false }, T0)?.reason, 'WaitForStart');
  });
  it('all pods ready starts the workload', () => {
    const c = podsReadyCondition(
      wl('a').admittedAt(T0).podsReady('False', 'WaitForStart', T0).build(),
      { admitted: true, allReady: true },
      T0 + 30,
    );
    assert.deepEqual(c, {
      type: 'PodsReady',
      status: 'True',
      reason: 'Started',
      message: 'All pods reached readiness and the workload is running',
      lastTransitionTime: formatTime(T0 + 30),
    });
  });
  it('a started workload whose pods fail waits for recovery', () => {
    const c = podsReadyCondition(
      wl('a')
        .admittedAt(T0)
        .podsReady('True', 'Started', T0 + 30)
        .build(),
      { admitted: true, allReady: false },
      T0 + 90,
    );
    assert.deepEqual(c, {
      type: 'PodsReady',
      status: 'False',
      reason: 'WaitForRecovery',
      message: 'At least one pod has failed, waiting for recovery',
      lastTransitionTime: formatTime(T0 + 90),
    });
    assert.equal(
      podsReadyCondition(
        wl('a')
          .admittedAt(T0)
          .podsReady('False', 'WaitForRecovery', T0 + 90)
          .build(),
        { admitted: true, allReady: false },
        T0 + 95,
      ),
      undefined,
    );
  });
  it('a workload that was waiting for recovery recovers, and stays Recovered', () => {
    const w = wl('a')
      .admittedAt(T0)
      .podsReady('False', 'WaitForRecovery', T0 + 90)
      .build();
    assert.equal(podsReadyCondition(w, { admitted: true, allReady: true }, T0 + 120)?.reason, 'Recovered');
    assert.equal(updatePodsReady(w, { admitted: true, allReady: true }, T0 + 120), true);
    assert.equal(podsReadyCondition(w, { admitted: true, allReady: true }, T0 + 200), undefined);
    assert.equal(podsReadyCondition(w, { admitted: true, allReady: false }, T0 + 300)?.reason, 'WaitForRecovery');
  });
  it('the condition changes only with status or reason, and its transition time only with status', () => {
    const w = wl('a')
      .admittedAt(T0)
      .podsReady('False', 'WaitForRecovery', T0 + 90)
      .build();
    const c = podsReadyCondition(w, { admitted: false, allReady: false }, T0 + 500);
    assert.deepEqual(c && [c.reason, c.lastTransitionTime], ['WaitForStart', formatTime(T0 + 90)]);
    assert.equal(
      updatePodsReady(wl('b').podsReady('False', 'WaitForStart', T0).build(), { admitted: false, allReady: true }, T0 + 5),
      false,
    );
  });
});

describe('PodsReady timeout (workload controller)', () => {
  it('the timeout clock starts at the Admitted transition', () => {
    const w = wl('train')
      .created(T0 - 500)
      .admittedAt(T0)
      .build();
    setCondition(w, { type: WorkloadCondition.QuotaReserved, status: 'True', reason: 'QuotaReserved', message: '' }, T0 - 100);
    assert.deepEqual(checkPodsReady(w, DEFAULT_WAIT_FOR_PODS_READY, T0 + 100), { kind: 'wait', at: T0 + 1800 });
    assert.deepEqual(checkPodsReady(w, DEFAULT_WAIT_FOR_PODS_READY, T0 + 1799), { kind: 'wait', at: T0 + 1800 });
    assert.equal(checkPodsReady(w, DEFAULT_WAIT_FOR_PODS_READY, T0 + 1800).kind, 'evict');
  });
  it('a workload waiting to start is timed like one without PodsReady, whatever its old PodsReady transition', () => {
    const w = wl('train')
      .podsReady('False', 'WaitForStart', T0 - 9000)
      .admittedAt(T0)
      .build();
    assert.deepEqual(checkPodsReady(w, cfg({ timeoutSeconds: 300 }), T0), { kind: 'wait', at: T0 + 300 });
  });
  it('the eviction names the workload, the cause, and the next backoff from requeueState.count', () => {
    const w = wl('train')
      .admittedAt(T0)
      .requeue(2, T0 - 1000)
      .build();
    assert.deepEqual(checkPodsReady(w, DEFAULT_WAIT_FOR_PODS_READY, T0 + 2000), {
      kind: 'evict',
      reason: 'PodsReadyTimeout',
      message: 'Exceeded the PodsReady timeout team-a/train',
      underlyingCause: 'WaitForStart',
      requeueState: { count: 3, requeueAt: T0 + 2000 + 240 },
    });
  });
  it('the recovery clock starts at the PodsReady=False transition and runs recoveryTimeout', () => {
    const w = wl('train')
      .admittedAt(T0)
      .podsReady('False', 'WaitForRecovery', T0 + 5000)
      .build();
    const c = cfg({ recoveryTimeoutSeconds: 600 });
    assert.deepEqual(checkPodsReady(w, c, T0 + 5100), { kind: 'wait', at: T0 + 5600 });
    const r = checkPodsReady(w, c, T0 + 5600);
    assert.equal(r.kind === 'evict' && r.underlyingCause, 'WaitForRecovery');
  });
  it('recoveryTimeout 0s disables the recovery timeout', () => {
    const w = wl('train')
      .admittedAt(T0)
      .podsReady('False', 'WaitForRecovery', T0 + 5000)
      .build();
    const c = parseWaitForPodsReady({ timeout: '30m', recoveryTimeout: '0s' });
    assert.deepEqual(checkPodsReady(w, c, T0 + 1e6), { kind: 'none' });
  });
  it('a ready, unadmitted, inactive, evicted or finished workload is not timed', () => {
    const late = T0 + 1e6;
    for (const w of [
      wl('ready')
        .admittedAt(T0)
        .podsReady('True', 'Started', T0 + 10)
        .build(),
      wl('pending').created(T0).build(),
      wl('inactive').admittedAt(T0).inactive().build(),
      wl('evicted')
        .admittedAt(T0)
        .evicted('Preempted', T0 + 10)
        .build(),
      wl('finished')
        .admittedAt(T0)
        .finished(T0 + 10)
        .build(),
    ])
      assert.deepEqual(checkPodsReady(w, DEFAULT_WAIT_FOR_PODS_READY, late), { kind: 'none' }, w.metadata.name);
    const reservedOnly = wl('reserved').admittedAt(T0).build();
    setCondition(
      reservedOnly,
      { type: WorkloadCondition.Admitted, status: 'False', reason: 'UnsatisfiedAdmissionChecks', message: '' },
      T0,
    );
    assert.deepEqual(checkPodsReady(reservedOnly, DEFAULT_WAIT_FOR_PODS_READY, late), { kind: 'none' });
  });
  it('exceeding backoffLimitCount deactivates instead of evicting', () => {
    const c = cfg({ requeuingStrategy: { backoffLimitCount: 2 } });
    assert.equal(checkPodsReady(wl('a').admittedAt(T0).requeue(1).build(), c, T0 + 1800).kind, 'evict');
    assert.deepEqual(checkPodsReady(wl('a').admittedAt(T0).requeue(2).build(), c, T0 + 1800), {
      kind: 'deactivate',
      reason: 'RequeuingLimitExceeded',
      message: 'exceeding the maximum number of re-queuing retries',
    });
    assert.equal(
      checkPodsReady(wl('a').admittedAt(T0).build(), cfg({ requeuingStrategy: { backoffLimitCount: 0 } }), T0 + 1800).kind,
      'deactivate',
    );
  });
  it('without backoffLimitCount a workload is requeued forever, with the backoff capped', () => {
    const r = checkPodsReady(wl('a').admittedAt(T0).requeue(1000).build(), DEFAULT_WAIT_FOR_PODS_READY, T0 + 1800);
    assert.deepEqual(r.kind === 'evict' && r.requeueState, { count: 1001, requeueAt: T0 + 1800 + 3600 });
  });
  it("a missing Admitted transition time has long expired, as Go's zero time does", () => {
    const w = wl('a').admittedAt(T0).build();
    delete findCondition(w, WorkloadCondition.Admitted)!.lastTransitionTime;
    assert.equal(checkPodsReady(w, DEFAULT_WAIT_FOR_PODS_READY, T0).kind, 'evict');
  });
  it('nothing is decided before the clock runs out, and something always is at or after it (property)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 7200 }),
        fc.integer({ min: 0, max: 20_000 }),
        fc.boolean(),
        fc.integer({ min: 0, max: 10 }),
        (timeout, elapsed, recovering, count) => {
          const b = wl('p').admittedAt(T0).requeue(count);
          if (recovering) b.podsReady('False', 'WaitForRecovery', T0 + 100);
          const start = recovering ? T0 + 100 : T0;
          const c = cfg({ timeoutSeconds: timeout, recoveryTimeoutSeconds: timeout, requeuingStrategy: { backoffLimitCount: 5 } });
          const r = checkPodsReady(b.build(), c, start + elapsed);
          if (timeout === 0 && recovering) assert.equal(r.kind, 'none');
          else if (elapsed < timeout) assert.deepEqual(r, { kind: 'wait', at: start + timeout });
          else assert.equal(r.kind, count + 1 > 5 ? 'deactivate' : 'evict');
        },
      ),
    );
  });
});

describe('eviction, requeue and deactivation writers', () => {
  const evict = (w: Workload, now: number): PodsReadyEviction => {
    const r = checkPodsReady(w, DEFAULT_WAIT_FOR_PODS_READY, now);
    assert.equal(r.kind, 'evict');
    return r as PodsReadyEviction;
  };
  it('a PodsReadyTimeout eviction writes Evicted, requeueState and one more eviction in schedulingStats', () => {
    const w = wl('train').admittedAt(T0).build();
    w.status!.schedulingStats = { evictions: [{ reason: 'PodsReadyTimeout', underlyingCause: 'WaitForStart', count: 1 }] };
    applyPodsReadyEviction(w, evict(w, T0 + 1800), T0 + 1800);
    assert.deepEqual(cond(w, 'Evicted'), {
      status: 'True',
      reason: 'PodsReadyTimeout',
      message: 'Exceeded the PodsReady timeout team-a/train',
    });
    assert.equal(findCondition(w, 'Evicted')!.lastTransitionTime, formatTime(T0 + 1800));
    assert.deepEqual(w.status!.requeueState, { count: 1, requeueAt: formatTime(T0 + 1860) });
    assert.deepEqual(w.status!.schedulingStats, { evictions: [{ reason: 'PodsReadyTimeout', underlyingCause: 'WaitForStart', count: 2 }] });
    assert.equal(cond(w, 'QuotaReserved')?.status, 'True', 'the reservation is cleared by a later step');
  });
  it('clearing the reservation removes the admission and keeps Requeued False while the backoff is pending', () => {
    const w = wl('train').admittedAt(T0).build();
    applyPodsReadyEviction(w, evict(w, T0 + 1800), T0 + 1800);
    clearReservation(w, T0 + 1805);
    assert.equal(w.status!.admission, undefined);
    assert.deepEqual(cond(w, 'QuotaReserved'), {
      status: 'False',
      reason: 'PendingEvaluation',
      message: 'Exceeded the PodsReady timeout team-a/train',
    });
    assert.deepEqual(cond(w, 'Admitted'), { status: 'False', reason: 'NoReservation', message: 'The workload has no reservation' });
    assert.deepEqual(cond(w, 'Requeued'), {
      status: 'False',
      reason: 'PodsReadyTimeout',
      message: 'Exceeded the PodsReady timeout team-a/train',
    });
  });
  it('a workload preempted with no backoff pending is requeued at once', () => {
    const w = wl('train')
      .admittedAt(T0)
      .evicted('Preempted', T0 + 50, 'Preempted to accommodate a workload')
      .build();
    clearReservation(w, T0 + 55);
    assert.deepEqual(cond(w, 'Requeued'), { status: 'True', reason: 'Preempted', message: 'Preempted to accommodate a workload' });
  });
  it('the backoff finishes at requeueAt with Requeued=True BackoffFinished', () => {
    const w = wl('train').admittedAt(T0).build();
    applyPodsReadyEviction(w, evict(w, T0 + 1800), T0 + 1800);
    clearReservation(w, T0 + 1805);
    assert.equal(backoffFinished(w, T0 + 1859), false);
    assert.equal(cond(w, 'Requeued')?.status, 'False');
    assert.equal(backoffFinished(w, T0 + 1860), true);
    assert.deepEqual(cond(w, 'Requeued'), { status: 'True', reason: 'BackoffFinished', message: 'The workload backoff was finished' });
    assert.equal(backoffFinished(w, T0 + 1900), false, 'already requeued');
  });
  it('a reserved, inactive or never backed-off workload has no backoff to finish', () => {
    assert.equal(backoffFinished(wl('a').admittedAt(T0).requeue(1, T0).build(), T0 + 10), false);
    assert.equal(backoffFinished(wl('a').requeue(1, T0).inactive().build(), T0 + 10), false);
    assert.equal(backoffFinished(wl('a').build(), T0 + 10), false);
  });
  it('deactivation sets DeactivationTarget and spec.active=false, after which nothing is timed', () => {
    const w = wl('train').admittedAt(T0).requeue(3).build();
    assert.equal(checkPodsReady(w, cfg({ requeuingStrategy: { backoffLimitCount: 3 } }), T0 + 1800).kind, 'deactivate');
    applyDeactivation(w, T0 + 1800);
    assert.deepEqual(cond(w, 'DeactivationTarget'), {
      status: 'True',
      reason: 'RequeuingLimitExceeded',
      message: 'exceeding the maximum number of re-queuing retries',
    });
    assert.equal(w.spec.active, false);
    assert.deepEqual(checkPodsReady(w, cfg({ requeuingStrategy: { backoffLimitCount: 3 } }), T0 + 9000), { kind: 'none' });
  });
  it('a workload that never gets ready cycles through timeouts with growing backoff until the limit', () => {
    const c = cfg({ timeoutSeconds: 600, requeuingStrategy: { backoffLimitCount: 3 } });
    const w = wl('stuck').created(T0).build();
    let now = T0;
    const backoffs: number[] = [];
    for (let round = 0; round < 10; round++) {
      // The scheduler admits it, resetting Evicted as Kueue does on admission.
      resetCondition(w, 'Evicted', now);
      w.status = { ...w.status, admission: { clusterQueue: 'cq', podSetAssignments: [{ name: 'main', count: 1 }] } };
      setCondition(w, { type: 'QuotaReserved', status: 'True', reason: 'QuotaReserved', message: '' }, now);
      setCondition(w, { type: 'Admitted', status: 'True', reason: 'Admitted', message: '' }, now);
      updatePodsReady(w, { admitted: true, allReady: false }, now);
      const wait = checkPodsReady(w, c, now);
      assert.deepEqual(wait, { kind: 'wait', at: now + 600 });
      now = (wait as { at: number }).at;
      const r = checkPodsReady(w, c, now);
      if (r.kind === 'deactivate') {
        applyDeactivation(w, now);
        break;
      }
      assert.equal(r.kind, 'evict');
      applyPodsReadyEviction(w, r as PodsReadyEviction, now);
      clearReservation(w, now);
      updatePodsReady(w, { admitted: false, allReady: false }, now);
      const until = (r as PodsReadyEviction).requeueState.requeueAt;
      backoffs.push(until - now);
      assert.equal(backoffFinished(w, until - 1), false);
      assert.equal(queueOrderTimestamp(w, c), now, 'ordered by the eviction time');
      now = until;
      assert.equal(backoffFinished(w, now), true);
    }
    assert.deepEqual(backoffs, [60, 120, 240]);
    assert.equal(w.spec.active, false);
    assert.equal((w.status!.requeueState as { count: number }).count, 3);
    assert.deepEqual(cond(w, 'DeactivationTarget')?.reason, 'RequeuingLimitExceeded');
  });
});

describe('queue order', () => {
  const evictedAt = T0 + 7200;
  it('a PodsReadyTimeout eviction orders by the eviction time with timestamp Eviction', () => {
    const w = wl('a').created(T0).evicted('PodsReadyTimeout', evictedAt).build();
    assert.equal(queueOrderTimestamp(w, DEFAULT_WAIT_FOR_PODS_READY), evictedAt);
  });
  it('timestamp Creation orders a PodsReadyTimeout eviction by creation time', () => {
    const w = wl('a').created(T0).evicted('PodsReadyTimeout', evictedAt).build();
    assert.equal(queueOrderTimestamp(w, cfg({ requeuingStrategy: { timestamp: 'Creation' } })), T0);
  });
  it('an AdmissionCheck eviction orders by the eviction time with either timestamp', () => {
    const w = wl('a').created(T0).evicted('AdmissionCheck', evictedAt).build();
    assert.equal(queueOrderTimestamp(w, cfg({ requeuingStrategy: { timestamp: 'Creation' } })), evictedAt);
    assert.equal(queueOrderTimestamp(w, DEFAULT_WAIT_FOR_PODS_READY), evictedAt);
  });
  it('other evictions, past evictions and fresh workloads order by creation time', () => {
    assert.equal(queueOrderTimestamp(wl('a').created(T0).evicted('Preempted', evictedAt).build(), DEFAULT_WAIT_FOR_PODS_READY), T0);
    const past = wl('b').created(T0).evicted('PodsReadyTimeout', evictedAt).build();
    setCondition(past, { type: 'Evicted', status: 'False', reason: 'PodsReadyTimeout', message: 'Previously: x' }, evictedAt + 100);
    assert.equal(queueOrderTimestamp(past, DEFAULT_WAIT_FOR_PODS_READY), T0);
    assert.equal(queueOrderTimestamp(wl('c').created(T0).build(), DEFAULT_WAIT_FOR_PODS_READY), T0);
    assert.ok(queueOrderTimestamp(wl('d').build(), DEFAULT_WAIT_FOR_PODS_READY) < 0, 'no creation time sorts first');
  });
});

describe('blockAdmission', () => {
  const ready = wl('ready')
    .admittedAt(T0)
    .podsReady('True', 'Started', T0 + 10)
    .build();
  const starting = wl('starting').admittedAt(T0).podsReady('False', 'WaitForStart', T0).build();
  const done = wl('done')
    .admittedAt(T0)
    .podsReady('False', 'WaitForRecovery', T0 + 20)
    .finished(T0 + 30)
    .build();
  it('with blockAdmission any admitted workload not PodsReady blocks admission', () => {
    const c = cfg({ blockAdmission: true });
    assert.equal(blockedByPodsReady([ready, starting], c), 'waiting for all admitted workloads to be in PodsReady condition');
    assert.equal(
      blockedByPodsReady([ready, wl('new').admittedAt(T0).build()], c),
      'waiting for all admitted workloads to be in PodsReady condition',
    );
    assert.equal(blockedByPodsReady([ready, done], c), undefined, 'finished workloads do not block');
    assert.equal(blockedByPodsReady([], c), undefined);
  });
  it('without blockAdmission nothing blocks', () => {
    assert.equal(blockedByPodsReady([ready, starting], DEFAULT_WAIT_FOR_PODS_READY), undefined);
  });
});
