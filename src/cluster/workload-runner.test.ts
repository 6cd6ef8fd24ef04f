import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setCondition } from '../admission/conditions.ts';
import type { Workload } from '../api/objects.ts';
import { retryOnConflict } from '../runtime/store.ts';
import { testCluster, type TestCluster } from '../testing/cluster.ts';
import { workloadRunner } from './workload-runner.ts';

const wl = (name: string, runDuration?: string, owned = false): Workload => ({
  apiVersion: 'kueue.x-k8s.io/v1beta2',
  kind: 'Workload',
  metadata: {
    name,
    namespace: 'default',
    ...(runDuration ? { annotations: { 'topoqueue.io/run-duration': runDuration } } : {}),
    ...(owned ? { ownerReferences: [{ apiVersion: 'batch/v1', kind: 'Job', name: 'j', uid: 'u', controller: true }] } : {}),
  },
  spec: { queueName: 'q', podSets: [{ name: 'main', count: 1, template: { spec: { containers: [{ name: 'c' }] } } }] },
});

/** Plays the scheduler: Admitted=True (or an eviction: Evicted=True, Admitted=False). */
async function admit(c: TestCluster, name: string, admitted: boolean) {
  await retryOnConflict(
    c.store,
    'Workload',
    'default',
    name,
    (w) => {
      const now = c.clock.now() / 1000;
      if (admitted) {
        w.status = { ...w.status, admission: { clusterQueue: 'cq', podSetAssignments: [{ name: 'main', count: 1 }] } };
        setCondition(w, { type: 'Evicted', status: 'False', reason: 'x' }, now);
        setCondition(w, { type: 'QuotaReserved', status: 'True', reason: 'QuotaReserved' }, now);
        setCondition(w, { type: 'Admitted', status: 'True', reason: 'Admitted' }, now);
      } else {
        setCondition(w, { type: 'Evicted', status: 'True', reason: 'Preempted' }, now);
        setCondition(w, { type: 'Admitted', status: 'False', reason: 'NoReservation' }, now);
      }
    },
    { status: true },
  );
}

const finished = (c: TestCluster, name: string) => c.get('Workload', name)?.status?.conditions?.find((x) => x.type === 'Finished');

describe('workload runner', () => {
  it('a bare Workload with a run duration is Finished (Succeeded, "Job finished successfully") that long after its admission', async () => {
    const c = await testCluster([workloadRunner()], [wl('w', '5m'), wl('no-duration'), wl('owned', '1m', true)]);
    await c.run(12_500);
    for (const n of ['w', 'no-duration', 'owned']) await admit(c, n, true);
    await c.run(0);
    assert.equal(
      c.get('Workload', 'w')?.status?.conditions?.find((x) => x.type === 'PodsReady')?.status,
      'True',
      'its "pods" are ready at once',
    );
    await c.run(299_999);
    assert.equal(finished(c, 'w'), undefined);
    await c.run(1);
    assert.deepEqual(
      { ...finished(c, 'w'), lastTransitionTime: undefined },
      {
        type: 'Finished',
        status: 'True',
        reason: 'Succeeded',
        message: 'Job finished successfully',
        observedGeneration: 1,
        lastTransitionTime: undefined,
      },
    );
    assert.equal(c.elapsed(), 312.5);
    await c.run();
    assert.equal(finished(c, 'no-duration'), undefined);
    assert.equal(finished(c, 'owned'), undefined, "a Workload with an owner is its job's to finish");
  });

  it('an eviction stops the clock; the run starts over from the next admission', async () => {
    const c = await testCluster([workloadRunner()], [wl('w', '100s')]);
    await admit(c, 'w', true);
    await c.run(60_000);
    await admit(c, 'w', false);
    await c.run(100_000);
    assert.equal(finished(c, 'w'), undefined, 'not finished at the first admission + 100s');
    await admit(c, 'w', true);
    await c.run(99_000);
    assert.equal(finished(c, 'w'), undefined);
    await c.run();
    assert.equal(finished(c, 'w')?.status, 'True');
    assert.equal(c.elapsed(), 260);
  });

  it('an unreadable duration gets a Warning Event and the 60s default', async () => {
    const c = await testCluster([workloadRunner()], [wl('w', 'soon')]);
    await admit(c, 'w', true);
    await c.run();
    assert.equal(c.elapsed(), 60);
    assert.match(c.manager.events.about('Workload/default/w')[0]?.message ?? '', /topoqueue\.io\/run-duration="soon" is not a Go duration/);
  });
});
