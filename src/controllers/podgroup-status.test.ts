import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { PodGroup } from '../api/gang.ts';
import type { KObject, Workload } from '../api/objects.ts';
import { plainPod, podHarness, type PodHarness } from '../testing/pods.ts';
import { koordinatorStatus, podGroupStatusController, schedulerPluginsStatus, TIMEOUT_MESSAGE, volcanoStatus } from './podgroup-status.ts';

const NS = 'pod-namespace';

const podGroup = (apiVersion: string, name: string, minMember: number, ns = NS): KObject & { spec: { minMember: number } } => ({
  apiVersion,
  kind: 'PodGroup',
  metadata: { name, namespace: ns },
  spec: { minMember },
});

async function harness(): Promise<PodHarness> {
  return podHarness({ controllers: [podGroupStatusController()] });
}

const statusOf = (h: PodHarness, name: string) => h.store.getSync<PodGroup>('PodGroup', NS, name)?.status ?? {};

describe('PodGroup status: Koordinator (scheduling.sigs.k8s.io)', () => {
  it('goes Pending -> PreScheduling -> Scheduling -> Scheduled -> Running -> Finished as its pods are created, bound, run and succeed', async () => {
    const h = await harness();
    await h.create(podGroup('scheduling.sigs.k8s.io/v1alpha1', 'pg', 2));
    await h.run();
    assert.equal(statusOf(h, 'pg').phase, 'Pending');
    for (const n of ['a', 'b'])
      await h.create(plainPod(n).label('pod-group.scheduling.sigs.k8s.io', 'pg').owner('apps/v1', 'ReplicaSet', 'rs').build());
    await h.run();
    let s = statusOf(h, 'pg');
    assert.equal(s.phase, 'Scheduling', 'through PreScheduling: children >= minMember, none bound');
    assert.equal(s.occupiedBy, `${NS}/rs`);
    assert.equal(s.scheduleStartTime, '2026-01-01T00:00:00Z');
    assert.equal(s.scheduled, 0);
    await h.runPod('a');
    await h.run();
    assert.equal(statusOf(h, 'pg').phase, 'Scheduling');
    await h.runPod('b');
    await h.run();
    s = statusOf(h, 'pg');
    assert.deepEqual([s.phase, s.scheduled, s.running], ['Running', 2, 2]);
    await h.setPhase('a', 'Succeeded');
    await h.setPhase('b', 'Succeeded');
    await h.run();
    s = statusOf(h, 'pg');
    assert.deepEqual([s.phase, s.succeeded, s.running], ['Finished', 2, 0]);
    await h.store.delete('Pod', NS, 'a');
    await h.run();
    assert.equal(statusOf(h, 'pg').phase, 'Finished', 'final');
  });

  it('a failed member with the rest running makes the group Failed', () => {
    const pg = { ...podGroup('scheduling.sigs.k8s.io/v1alpha1', 'pg', 2), status: { phase: 'Running' } } as PodGroup;
    const pods = [plainPod('a').build(), plainPod('b').build()].map((p, i) => ({
      ...p,
      spec: { ...p.spec, nodeName: 'n1' },
      status: { phase: i === 0 ? ('Failed' as const) : ('Running' as const) },
    }));
    assert.equal(koordinatorStatus(pg, pods, 'now')?.phase, 'Failed');
  });

  it('a PodGroup with minMember 0 stays Pending (PreScheduling needs minMember > 0); no children sends it back to Pending', () => {
    const pg = { ...podGroup('scheduling.sigs.k8s.io/v1alpha1', 'pg', 0), status: { phase: 'Pending' } } as PodGroup;
    assert.equal(koordinatorStatus(pg, [plainPod('a').build()], 'now')?.phase, 'Pending');
    const scheduling = { ...podGroup('scheduling.sigs.k8s.io/v1alpha1', 'pg', 2), status: { phase: 'Scheduling' } } as PodGroup;
    assert.equal(koordinatorStatus(scheduling, [], 'now')?.phase, 'Pending');
  });
});

describe('PodGroup status: scheduler-plugins (scheduling.x-k8s.io)', () => {
  it('counts labelled pods in every namespace and goes Pending -> Scheduling -> Running -> Finished (no scheduled count)', async () => {
    const h = await harness();
    await h.create(podGroup('scheduling.x-k8s.io/v1alpha1', 'pg', 2));
    await h.create(plainPod('a').label('scheduling.x-k8s.io/pod-group', 'pg').build());
    await h.create(plainPod('b', 'other').label('scheduling.x-k8s.io/pod-group', 'pg').build());
    await h.run();
    assert.equal(statusOf(h, 'pg').phase, 'Scheduling');
    await h.runPod('a');
    await h.runPod('b', 'other');
    await h.run();
    const s = statusOf(h, 'pg');
    assert.deepEqual([s.phase, s.running, s.scheduled], ['Running', 2, undefined]);
    await h.setPhase('a', 'Succeeded');
    await h.setPhase('b', 'Succeeded', 'other');
    await h.run();
    assert.equal(statusOf(h, 'pg').phase, 'Finished');
  });

  it('a group whose scheduling started more than 48 hours after its creation is skipped with a Timeout warning', async () => {
    const h = await harness();
    const pg = podGroup('scheduling.x-k8s.io/v1alpha1', 'pg', 1);
    await h.create(pg);
    const stored = h.store.getSync<PodGroup>('PodGroup', NS, 'pg')!;
    await h.store.updateStatus({ ...structuredClone(stored), status: { phase: 'Scheduling', scheduleStartTime: '2026-01-03T00:00:01Z' } });
    await h.create(plainPod('a').label('scheduling.x-k8s.io/pod-group', 'pg').build());
    await h.run();
    assert.equal(statusOf(h, 'pg').phase, 'Scheduling');
    assert.deepEqual(
      h
        .events('Timeout')
        .map((e) => [e.type, e.message])
        .slice(0, 1),
      [['Warning', TIMEOUT_MESSAGE]],
    );
    assert.deepEqual(schedulerPluginsStatus({ ...(pg as PodGroup), status: { phase: 'Finished' } }, []), {}, 'Finished is final');
  });
});

describe('PodGroup status: Volcano (scheduling.volcano.sh)', () => {
  it('goes Pending -> Inqueue once its Workload holds a reservation -> Running when minMember are allocated -> Completed', async () => {
    const h = await harness();
    const pg = await h.create(podGroup('scheduling.volcano.sh/v1beta1', 'pg', 2));
    for (const n of ['a', 'b']) await h.create(plainPod(n).annotate('scheduling.k8s.io/group-name', 'pg').build());
    await h.run();
    assert.equal(statusOf(h, 'pg').phase, 'Pending');
    const wl: Workload = {
      apiVersion: 'kueue.x-k8s.io/v1beta2',
      kind: 'Workload',
      metadata: {
        name: 'podgroup-pg-00000',
        namespace: NS,
        ownerReferences: [{ apiVersion: pg.apiVersion, kind: 'PodGroup', name: 'pg', uid: pg.metadata.uid!, controller: true }],
      },
      spec: { podSets: [{ name: 'main', count: 2, template: { spec: { containers: [{ name: 'c' }] } } }] },
    };
    await h.create(wl);
    await h.admit(NS, 'podgroup-pg-00000');
    await h.run();
    assert.equal(statusOf(h, 'pg').phase, 'Inqueue');
    await h.runPod('a');
    await h.run();
    assert.equal(statusOf(h, 'pg').phase, 'Inqueue', 'one of two allocated');
    await h.runPod('b');
    await h.run();
    assert.deepEqual([statusOf(h, 'pg').phase, statusOf(h, 'pg').running], ['Running', 2]);
    await h.setPhase('a', 'Succeeded');
    await h.run();
    assert.equal(statusOf(h, 'pg').phase, 'Running');
    await h.setPhase('b', 'Succeeded');
    await h.run();
    assert.deepEqual([statusOf(h, 'pg').phase, statusOf(h, 'pg').succeeded], ['Completed', 2]);
  });

  it('without a reservation a PodGroup whose members are not allocated stays Pending', () => {
    const pg = podGroup('scheduling.volcano.sh/v1beta1', 'pg', 2) as never;
    assert.equal(volcanoStatus(pg, [plainPod('a').build()], false)?.phase, 'Pending');
  });
});

describe('PodGroup status writes are coalesced', () => {
  /** A 500-pod Koordinator gang bound and started one pod every 10 ms (5 s), the controller running between pod events; its status writes counted. */
  async function gangGoingRunning(podBatchMs: number): Promise<{ writes: number; status: PodGroup['status'] }> {
    const N = 500;
    const h = await podHarness({ controllers: [podGroupStatusController()], config: { podBatchMs } });
    let writes = 0;
    const updateStatus = h.store.updateStatus.bind(h.store);
    h.store.updateStatus = (o) => {
      if (o.kind === 'PodGroup') writes++;
      return updateStatus(o);
    };
    await h.create(podGroup('scheduling.sigs.k8s.io/v1alpha1', 'gang', N));
    const names = Array.from({ length: N }, (_, i) => `p${String(i).padStart(3, '0')}`);
    for (const n of names) await h.create(plainPod(n).label('pod-group.scheduling.sigs.k8s.io', 'gang').build());
    await h.run();
    for (const n of names) {
      await h.runPod(n);
      await h.manager.run({ untilMs: h.clock.now() + 10 });
    }
    await h.run();
    return { writes, status: statusOf(h, 'gang') };
  }

  it('a 500-pod gang going Running: counter-only changes wait podBatchMs, so a handful of writes instead of one per pod event', async () => {
    const unbatched = await gangGoingRunning(0);
    const batched = await gangGoingRunning(1000);
    for (const r of [unbatched, batched])
      assert.deepEqual([r.status?.phase, r.status?.scheduled, r.status?.running], ['Running', 500, 500]);
    assert.ok(unbatched.writes >= 500, `without batching: ${unbatched.writes} writes`);
    assert.ok(batched.writes <= 12, `batched: ${batched.writes} writes (without: ${unbatched.writes})`);
  });

  it('a change of phase is written at once, not held back by the batch', async () => {
    const h = await podHarness({ controllers: [podGroupStatusController()], config: { podBatchMs: 60_000 } });
    await h.create(podGroup('scheduling.sigs.k8s.io/v1alpha1', 'pg', 2));
    await h.run();
    for (const n of ['a', 'b']) await h.create(plainPod(n).label('pod-group.scheduling.sigs.k8s.io', 'pg').build());
    await h.manager.run({ untilMs: h.clock.now() });
    await h.manager.run({ untilMs: h.clock.now() });
    assert.equal(statusOf(h, 'pg').phase, 'Scheduling');
    await h.runPod('a');
    await h.manager.run({ untilMs: h.clock.now() + 1000 });
    assert.equal(statusOf(h, 'pg').scheduled, 0, 'one bound pod only changes a counter: it waits');
    await h.runPod('b');
    await h.manager.run({ untilMs: h.clock.now() + 1000 });
    assert.deepEqual([statusOf(h, 'pg').phase, statusOf(h, 'pg').running], ['Running', 2], 'Running at once, with the counters');
  });
});
