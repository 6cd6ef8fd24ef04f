// The stand-ins together: a Job's pods created, bound, run and counted, without Kueue.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KObject } from '../api/objects.ts';
import { podTemplate, readyNode, testCluster } from '../testing/cluster.ts';
import { binder } from './binder.ts';
import type { BatchJob } from './job-controller-batch.ts';
import { garbageCollector } from './garbage-collector.ts';
import { jobControllers } from './job-controllers.ts';
import { kubelet } from './kubelet.ts';
import { scenarioController } from './scenario.ts';

const standIns = () => [jobControllers(), binder(), kubelet(), garbageCollector(), scenarioController()];

const indexedJob = (name: string, parallelism: number, completions: number, runDuration: string): BatchJob => ({
  apiVersion: 'batch/v1',
  kind: 'Job',
  metadata: { name, namespace: 'default' },
  spec: {
    completionMode: 'Indexed',
    parallelism,
    completions,
    template: podTemplate({ cpu: '2' }, { 'topoqueue.io/run-duration': runDuration }),
  },
});

const completeCond = (j: BatchJob | undefined) => j?.status?.conditions?.find((c) => c.type === 'Complete');

describe('stand-ins together', () => {
  it('a Job runs in waves on the nodes it fits and completes; pods are counted once', async () => {
    const c = await testCluster(standIns(), [
      readyNode('n1', { cpu: '4', pods: '110' }),
      readyNode('n2', { cpu: '4', pods: '110' }),
      indexedJob('waves', 4, 8, '60s'),
    ]);
    await c.run();
    const j = c.get<BatchJob>('Job', 'waves')!;
    assert.equal(completeCond(j)?.status, 'True');
    assert.equal(j.status?.succeeded, 8);
    assert.equal(j.status?.completedIndexes, '0-7');
    // 0 s: 4 pods run; 60 s: they succeed; 61 s (the job controller's 1 s batch): 4 more; 121 s: done; 122 s: Complete.
    assert.equal(j.status?.completionTime, '2026-01-01T00:02:02Z');
    assert.equal(c.pods().length, 8);
    assert.deepEqual(
      c
        .pods()
        .map((p) => p.spec.nodeName)
        .sort(),
      ['n1', 'n1', 'n1', 'n1', 'n2', 'n2', 'n2', 'n2'],
    );
    assert.equal(
      c.pods().every((p) => p.status?.phase === 'Succeeded' && !p.metadata.finalizers?.length),
      true,
    );
    assert.deepEqual(c.manager.errors, []);
    await c.store.delete('Job', 'default', 'waves');
    await c.run();
    assert.equal(c.pods().length, 0, "the garbage collector removes the Job's pods");
  });

  it('a node deleted by a scenario takes its pods with it; the Job replaces them on the nodes left', async () => {
    const del = {
      apiVersion: 'topoqueue.io/v1alpha1',
      kind: 'SimulationEvent',
      metadata: { name: 'lose-n1' },
      spec: { at: '30s', node: 'n1', action: 'Delete' },
    } as KObject;
    const c = await testCluster(standIns(), [
      readyNode('n1', { cpu: '4', pods: '110' }),
      readyNode('n2', { cpu: '4', pods: '110' }),
      indexedJob('survivor', 2, 2, '60s'),
      del,
    ]);
    await c.run();
    const j = c.get<BatchJob>('Job', 'survivor')!;
    assert.equal(completeCond(j)?.status, 'True');
    assert.equal(j.status?.succeeded, 2);
    assert.equal(j.status?.failed, 2, 'first fit put both pods on n1; both count as failed when it goes');
    // n1's pods are deleted at 30 s, replaced at 31 s on n2, done at 91 s, counted at 92 s.
    assert.equal(j.status?.completionTime, '2026-01-01T00:01:32Z');
    assert.deepEqual(
      c.pods().map((p) => p.spec.nodeName),
      ['n2', 'n2'],
    );
  });

  it('a NotReady node holds its pods and new pods go elsewhere; the scenario brings it back', async () => {
    const events = [
      {
        apiVersion: 'topoqueue.io/v1alpha1',
        kind: 'SimulationEvent',
        metadata: { name: 'down' },
        spec: { at: '10s', node: 'n1', action: 'NotReady' },
      },
      {
        apiVersion: 'topoqueue.io/v1alpha1',
        kind: 'SimulationEvent',
        metadata: { name: 'up' },
        spec: { at: '5m', node: 'n1', action: 'Ready' },
      },
    ] as unknown as KObject[];
    const late = { ...indexedJob('late', 1, 1, '60s'), metadata: { name: 'late', namespace: 'default' } };
    const c = await testCluster(standIns(), [
      readyNode('n1', { cpu: '4', pods: '110' }),
      readyNode('n2', { cpu: '4', pods: '110' }),
      indexedJob('early', 1, 1, '60s'),
      ...events,
    ]);
    await c.run(20_000);
    await c.store.create(late);
    await c.run();
    const early = c.get<BatchJob>('Job', 'early')!;
    const lateJob = c.get<BatchJob>('Job', 'late')!;
    assert.equal(c.pods().find((p) => p.metadata.name.startsWith('early'))?.spec.nodeName, 'n1');
    assert.equal(c.pods().find((p) => p.metadata.name.startsWith('late'))?.spec.nodeName, 'n2');
    assert.equal(lateJob.status?.completionTime, '2026-01-01T00:01:21Z');
    assert.equal(
      early.status?.completionTime,
      '2026-01-01T00:05:01Z',
      'its 60 s ran out while n1 was NotReady: it ends when n1 is back at 300 s',
    );
  });
});
