// The queues: heads in ClusterQueue name order, and where each pending Workload is.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { QueueManager } from './queue.ts';
import { workloadInfo } from './workload-info.ts';
import { wl } from '../testing/admission.ts';

describe('QueueManager', () => {
  it('heads name each head its ClusterQueue at the same index, skipping empty and inactive queues', () => {
    const q = new QueueManager();
    for (const name of ['c', 'a', 'b', 'd']) q.ensure(name, 'BestEffortFIFO');
    q.add('c', workloadInfo(wl('w1').pods(1, { cpu: '1' }).build()));
    q.add('a', workloadInfo(wl('w2').pods(1, { cpu: '1' }).build()));
    q.add('d', workloadInfo(wl('w3').pods(1, { cpu: '1' }).build()));
    const names: string[] = [];
    const heads = q.heads(0, (cq) => cq !== 'd', names);
    assert.deepEqual(
      heads.map((h) => h.key),
      ['default/w2', 'default/w1'],
    );
    assert.deepEqual(names, ['a', 'c']);
    assert.deepEqual(
      heads.map((h) => q.clusterQueueOf(h.key)),
      names,
    );
  });

  it('a Workload added to another ClusterQueue moves there', () => {
    const q = new QueueManager();
    q.ensure('a', 'BestEffortFIFO');
    q.ensure('b', 'BestEffortFIFO');
    const info = workloadInfo(wl('w').pods(1, { cpu: '1' }).build());
    q.add('a', info);
    q.add('b', info);
    assert.equal(q.clusterQueueOf(info.key), 'b');
    assert.equal(q.queue('a')!.pendingCount, 0);
    assert.equal(q.get(info.key), info);
    q.delete(info.key);
    assert.equal(q.clusterQueueOf(info.key), undefined);
    assert.equal(q.queue('b')!.pendingCount, 0);
    assert.throws(() => q.add('nope', info), /no queue for ClusterQueue nope/);
  });

  it('a backoff ending is no capacity event: requeueDue moves back only the Workloads due, requeueInadmissible all', () => {
    const q = new QueueManager();
    q.ensure('a', 'BestEffortFIFO');
    const backoff = { ...workloadInfo(wl('backoff').pods(1, { cpu: '1' }).build()), requeueAt: 10 };
    const parked = workloadInfo(wl('parked').pods(1, { cpu: '1' }).build());
    q.add('a', backoff);
    q.add('a', parked);
    assert.equal(q.heads(0, () => true)[0]?.key, 'default/parked', 'the one in backoff is parked at pop');
    q.requeue(parked, false);
    assert.equal(q.queue('a')!.inadmissibleCount, 2);
    assert.equal(q.requeueDue(9), 0, 'nothing due before the backoff ends');
    assert.equal(q.requeueDue(10), 1);
    assert.deepEqual(
      q.heads(10, () => true).map((h) => h.key),
      ['default/backoff'],
    );
    assert.equal(q.queue('a')!.inadmissibleCount, 1, 'the other parked Workload waits for a capacity event');
    assert.equal(q.requeueInadmissible(10), 1);
  });
});
