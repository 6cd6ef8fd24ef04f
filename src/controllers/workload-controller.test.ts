import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { KueueRuntimeKey } from '../api/keys.ts';
import type { KObject, Workload } from '../api/objects.ts';
import type { WaitForPodsReadyConfig } from '../admission/pods-ready.ts';
import { setCondition } from '../admission/conditions.ts';
import { nowSeconds } from '../runtime/clock.ts';
import { cq, flavor, localQueue, wl } from '../testing/admission.ts';
import { runtimeEnv, type RuntimeEnv } from '../testing/runtime.ts';
import { clearAfterEviction, condition } from '../testing/scheduler.ts';
import { schedulerController } from './scheduler.ts';
import { workloadController } from './workload-controller.ts';

const get = (env: RuntimeEnv, name: string) => env.get('Workload', 'default', name)!;
const queueObjects = (): KObject[] => [flavor('default'), cq('a').quota('default', { cpu: '10' }).build(), localQueue('a', 'a')];
const secondsSinceStart = (env: RuntimeEnv, t: string | undefined) => (Date.parse(t ?? '') - Date.UTC(2026, 0, 1)) / 1000;

const podsReady = (over: Partial<WaitForPodsReadyConfig['requeuingStrategy']> = {}): WaitForPodsReadyConfig => ({
  timeoutSeconds: 60,
  recoveryTimeoutSeconds: 60,
  blockAdmission: false,
  requeuingStrategy: { timestamp: 'Eviction', backoffBaseSeconds: 10, backoffMaxSeconds: 100, ...over },
});

/** A Workload owned by a job: its job reconciler (left out here) stops it and clears the reservation. */
const owned = (w: Workload): Workload => ({
  ...w,
  metadata: {
    ...w.metadata,
    ownerReferences: [{ apiVersion: 'batch/v1', kind: 'Job', name: w.metadata.name, uid: 'job-uid', controller: true }],
  },
});

describe('workload controller: waitForPodsReady', () => {
  it('PodsReady timeout -> eviction -> backoff -> BackoffFinished -> readmitted', async () => {
    const env = runtimeEnv({
      controllers: [schedulerController(), workloadController()],
      objects: queueObjects(),
      config: { waitForPodsReady: podsReady() },
    });
    await env.start();
    env.seed(wl('w1').queue('a').pods(1, { cpu: '4' }).build());
    await env.run(1);
    assert.equal(condition(get(env, 'w1'), 'Admitted')?.status, 'True');

    // No pod ever gets ready: evicted at 60 s, cleared (no owner), back after a 10 s backoff.
    await env.run(60_000);
    let w = get(env, 'w1');
    assert.equal(condition(w, 'Evicted')?.reason, 'PodsReadyTimeout');
    assert.equal(condition(w, 'Evicted')?.message, 'Exceeded the PodsReady timeout default/w1');
    assert.equal(secondsSinceStart(env, condition(w, 'Evicted')?.lastTransitionTime), 60);
    assert.equal(w.status?.admission, undefined);
    assert.deepEqual(w.status?.requeueState, { count: 1, requeueAt: '2026-01-01T00:01:10Z' });
    assert.equal(condition(w, 'Requeued')?.status, 'False');
    assert.deepEqual((w.status?.schedulingStats as { evictions: unknown }).evictions, [
      { reason: 'PodsReadyTimeout', underlyingCause: 'WaitForStart', count: 1 },
    ]);

    await env.run(10_000);
    w = get(env, 'w1');
    assert.equal(condition(w, 'Requeued')?.reason, 'BackoffFinished');
    assert.equal(condition(w, 'Requeued')?.message, 'The workload backoff was finished');
    assert.equal(condition(w, 'Admitted')?.status, 'True');
    assert.equal(secondsSinceStart(env, condition(w, 'Admitted')?.lastTransitionTime), 70);
    assert.equal(condition(w, 'Evicted')?.status, 'False');
    assert.equal(condition(w, 'Evicted')?.message, 'Previously: Exceeded the PodsReady timeout default/w1');
    assert.match(
      await env.manager.metrics.text(),
      /kueue_evicted_workloads_total\{cluster_queue="a",reason="PodsReadyTimeout",underlying_cause="WaitForStart"\} 1/,
    );
  });

  it('a Workload whose pods got ready is not evicted', async () => {
    const env = runtimeEnv({
      controllers: [schedulerController(), workloadController()],
      objects: queueObjects(),
      config: { waitForPodsReady: podsReady() },
    });
    await env.start();
    env.seed(wl('w1').queue('a').pods(1, { cpu: '4' }).build());
    await env.run(30_000);
    env.patch(
      'Workload',
      'default',
      'w1',
      (w) =>
        setCondition(
          w,
          { type: 'PodsReady', status: 'True', reason: 'Started', message: 'All pods reached readiness and the workload is running' },
          nowSeconds(env.clock),
        ),
      { status: true },
    );
    const r = await env.run();
    assert.ok(r.idle);
    assert.equal(condition(get(env, 'w1'), 'Evicted'), undefined);
  });

  it('once backoffLimitCount is spent the Workload is deactivated, evicted and stays out of the queue', async () => {
    const env = runtimeEnv({
      controllers: [schedulerController(), workloadController()],
      objects: queueObjects(),
      config: { waitForPodsReady: podsReady({ backoffLimitCount: 1 }) },
    });
    await env.start();
    env.seed(wl('w1').queue('a').pods(1, { cpu: '4' }).build());
    // 60 s timeout, 10 s backoff, readmitted at 70 s, times out again at 130 s: over the limit.
    const r = await env.run(3_600_000);
    assert.ok(r.idle, 'nothing left to do');
    const w = get(env, 'w1');
    assert.equal(w.spec.active, false);
    assert.equal(w.status?.admission, undefined);
    assert.equal(condition(w, 'Evicted')?.reason, 'Deactivated');
    assert.equal(condition(w, 'Evicted')?.message, 'The workload is deactivated due to exceeding the maximum number of re-queuing retries');
    assert.equal(condition(w, 'DeactivationTarget'), undefined);
    assert.equal(condition(w, 'Requeued')?.status, 'False');

    // Reactivated by the user: requeued at once, with a fresh backoff.
    env.patch('Workload', 'default', 'w1', (x) => (x.spec.active = true));
    await env.run(1000);
    const again = get(env, 'w1');
    assert.equal(condition(again, 'Requeued')?.reason, 'Reactivated');
    assert.equal(again.status?.requeueState, undefined);
    assert.equal(again.status?.admission?.clusterQueue, 'a');
  });

  it('an owned Workload keeps its reservation after the eviction: its job reconciler clears it', async () => {
    const env = runtimeEnv({
      controllers: [schedulerController(), workloadController()],
      objects: queueObjects(),
      config: { waitForPodsReady: podsReady() },
    });
    await env.start();
    env.seed(owned(wl('w1').queue('a').pods(1, { cpu: '4' }).build()));
    await env.run(61_000);
    const w = get(env, 'w1');
    assert.equal(condition(w, 'Evicted')?.reason, 'PodsReadyTimeout');
    assert.equal(w.status?.admission?.clusterQueue, 'a');
    clearAfterEviction(env, 'w1');
    await env.run(10_000);
    assert.equal(condition(get(env, 'w1'), 'Admitted')?.status, 'True', 'readmitted after its backoff');
  });
});

describe('workload controller: stopped queues', () => {
  it('ClusterQueue HoldAndDrain evicts the admitted Workloads; restarting it requeues them', async () => {
    const env = runtimeEnv({
      controllers: [schedulerController(), workloadController()],
      objects: queueObjects(),
      config: { waitForPodsReady: undefined },
    });
    await env.start();
    env.seed(wl('w1').queue('a').pods(1, { cpu: '4' }).build());
    await env.run();
    env.patch('ClusterQueue', undefined, 'a', (c) => (c.spec.stopPolicy = 'HoldAndDrain'));
    await env.run();
    let w = get(env, 'w1');
    assert.equal(condition(w, 'Evicted')?.reason, 'ClusterQueueStopped');
    assert.equal(condition(w, 'Evicted')?.message, 'The ClusterQueue is stopped');
    assert.equal(w.status?.admission, undefined);
    assert.equal(condition(w, 'Requeued')?.status, 'False');

    env.patch('ClusterQueue', undefined, 'a', (c) => (c.spec.stopPolicy = 'None'));
    await env.run();
    w = get(env, 'w1');
    assert.equal(condition(w, 'Requeued')?.reason, 'ClusterQueueRestarted');
    assert.equal(w.status?.admission?.clusterQueue, 'a');
  });

  it('LocalQueue HoldAndDrain evicts only the Workloads of that LocalQueue', async () => {
    const env = runtimeEnv({
      controllers: [schedulerController(), workloadController()],
      objects: [...queueObjects(), localQueue('other', 'a')],
      config: { waitForPodsReady: undefined },
    });
    await env.start();
    env.seed(wl('w1').queue('a').pods(1, { cpu: '4' }).build(), wl('w2').queue('other').pods(1, { cpu: '4' }).build());
    await env.run();
    env.patch('LocalQueue', 'default', 'a', (q) => (q.spec.stopPolicy = 'HoldAndDrain'));
    await env.run();
    assert.equal(condition(get(env, 'w1'), 'Evicted')?.reason, 'LocalQueueStopped');
    assert.equal(condition(get(env, 'w1'), 'Evicted')?.message, 'The LocalQueue is stopped');
    assert.equal(get(env, 'w1').status?.admission, undefined);
    assert.equal(condition(get(env, 'w2'), 'Evicted'), undefined);
    assert.equal(get(env, 'w2').status?.admission?.clusterQueue, 'a');
  });
});

describe('workload controller: deletion', () => {
  it('deleting a bare Workload lets go of its finalizer and releases its quota', async () => {
    const env = runtimeEnv({
      controllers: [schedulerController(), workloadController()],
      objects: queueObjects(),
      config: { waitForPodsReady: undefined },
    });
    await env.start();
    const big = wl('w1').queue('a').pods(1, { cpu: '8' }).build();
    big.metadata.finalizers = [KueueRuntimeKey.ResourceInUseFinalizer];
    env.seed(big, wl('w2').queue('a').pods(1, { cpu: '8' }).build());
    await env.run();
    assert.equal(get(env, 'w2').status?.admission, undefined);
    await env.store.delete('Workload', 'default', 'w1');
    await env.run();
    assert.equal(get(env, 'w1'), undefined);
    assert.equal(get(env, 'w2').status?.admission?.clusterQueue, 'a');
  });

  it('an owned Workload being deleted keeps its finalizer (its job reconciler removes it)', async () => {
    const env = runtimeEnv({ controllers: [workloadController()], config: { waitForPodsReady: undefined } });
    await env.start();
    const w = owned(wl('w1').queue('a').pods(1, { cpu: '8' }).build());
    w.metadata.finalizers = [KueueRuntimeKey.ResourceInUseFinalizer];
    env.seed(w);
    await env.store.delete('Workload', 'default', 'w1');
    await env.run();
    assert.deepEqual(get(env, 'w1').metadata.finalizers, [KueueRuntimeKey.ResourceInUseFinalizer]);
  });
});
