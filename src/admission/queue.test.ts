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

  it('queues added in any order are walked in name order (code units, as a default sort), a re-ensured one not twice', () => {
    const q = new QueueManager();
    const names = ['cohort-2-cq-0', 'cohort-10-cq-1', 'Zeta', 'cohort-10-cq-0', 'alpha', 'cohort-1', 'é', 'cohort-2-cq-0'];
    for (const name of names) q.ensure(name, 'BestEffortFIFO');
    const sorted = [...new Set(names)].sort();
    assert.deepEqual(q.names(), sorted);
    for (const name of sorted) q.add(name, workloadInfo(wl(`w-${name}`).pods(1, { cpu: '1' }).build()));
    const got: string[] = [];
    q.heads(0, () => true, got);
    assert.deepEqual(got, sorted);
  });

  it("a Workload pushed straight into another ClusterQueue's queue moves there too (no queue keeps a slot the map lost)", () => {
    const q = new QueueManager();
    const a = q.ensure('a', 'BestEffortFIFO');
    const b = q.ensure('b', 'BestEffortFIFO');
    const info = workloadInfo(wl('w').pods(1, { cpu: '1' }).build());
    q.add('a', info);
    b.push(info);
    assert.equal(q.clusterQueueOf(info.key), 'b');
    assert.equal(a.pendingCount, 0);
    assert.equal(a.has(info.key), false);
    assert.deepEqual(
      b.pending().map((i) => i.key),
      [info.key],
    );
    assert.deepEqual(
      q.heads(0, () => true).map((h) => h.key),
      [info.key],
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

  describe('scheduling equivalence hashing (Kueue gate SchedulingEquivalenceHashing, BestEffortFIFO)', () => {
    const same = (name: string) => workloadInfo(wl(name).pods(1, { cpu: '2' }).priority(10).build());
    const other = workloadInfo(wl('other').pods(1, { cpu: '1' }).priority(1).build());
    const keys = (xs: { key: string }[]) => xs.map((x) => x.key);

    it('a NoFit parks the queued Workloads of its shape and newcomers of it, until the next requeue', () => {
      const q = new QueueManager({ equivalenceHashing: true });
      q.ensure('a', 'BestEffortFIFO');
      const s1 = same('s1');
      q.add('a', s1);
      q.add('a', same('s2'));
      q.add('a', other);
      assert.deepEqual(keys(q.heads(0, () => true)), ['default/s1']);
      q.requeue(s1, false, true);
      assert.deepEqual(keys(q.heads(0, () => true)), ['default/other'], 's2 has the shape that did not fit: skipped');
      q.requeue(other, false);
      q.add('a', same('s3'));
      assert.equal(q.queue('a')!.inadmissibleCount, 4, 'the newcomer of that shape is parked at once');
      assert.deepEqual(keys(q.heads(0, () => true)), []);
      assert.equal(q.requeueInadmissible(0), 4);
      q.add('a', same('s4'));
      assert.equal(q.queue('a')!.activeCount, 5, 'the requeue forgot the shape');
    });

    it('a failure for another reason (immediate, or not NoFit) remembers no shape', () => {
      const q = new QueueManager({ equivalenceHashing: true });
      q.ensure('a', 'BestEffortFIFO');
      const s1 = same('s1');
      q.add('a', s1);
      q.add('a', same('s2'));
      q.heads(0, () => true);
      q.requeue(s1, false);
      assert.deepEqual(keys(q.heads(0, () => true)), ['default/s2']);
    });

    it('is off without the gate, and under StrictFIFO', () => {
      for (const [opts, strategy] of [
        [{}, 'BestEffortFIFO'],
        [{ equivalenceHashing: true }, 'StrictFIFO'],
      ] as const) {
        const q = new QueueManager(opts);
        q.ensure('a', strategy);
        const s1 = same('s1');
        q.add('a', s1);
        q.add('a', same('s2'));
        q.heads(0, () => true);
        q.requeue(s1, strategy === 'StrictFIFO', true);
        q.add('a', same('s3'));
        assert.equal(q.queue('a')!.inadmissibleCount, strategy === 'StrictFIFO' ? 0 : 1, strategy);
      }
    });
  });
});
