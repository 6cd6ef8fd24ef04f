import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KObject, Workload } from '../api/objects.ts';
import { pod } from '../testing/builders.ts';
import { cq, flavor, localQueue, wl } from '../testing/admission.ts';
import { runtimeEnv, type RuntimeEnv } from '../testing/runtime.ts';
import { Manager } from '../runtime/manager.ts';
import type { DeleteOptions, ListOptions, ObjectStore, WatchHandler, WatchOptions } from '../runtime/store.ts';
import { defaultConfig } from './config.ts';
import { clearAfterEviction, condition, finish } from '../testing/scheduler.ts';
import { podMoved, schedulerController } from './scheduler.ts';
import { workloadController } from './workload-controller.ts';

const get = (env: RuntimeEnv, name: string) => env.get('Workload', 'default', name)!;
const admitted = (env: RuntimeEnv) =>
  env.store
    .listSync('Workload')
    .filter((w) => w.status?.admission !== undefined)
    .map((w) => w.metadata.name)
    .sort();
const queueObjects = (quota = '10'): KObject[] => [
  flavor('default'),
  cq('a').quota('default', { cpu: quota }).build(),
  localQueue('a', 'a'),
];

describe('scheduler controller: admission', () => {
  it('admits a pending Workload: admission, QuotaReserved and Admitted written, events recorded', async () => {
    const env = runtimeEnv({ controllers: [schedulerController()], objects: queueObjects() });
    await env.start();
    env.seed(wl('w1').queue('a').pods(2, { cpu: '3' }).build());
    await env.run();
    const w = get(env, 'w1');
    assert.equal(w.status?.admission?.clusterQueue, 'a');
    assert.deepEqual(w.status?.admission?.podSetAssignments, [
      { name: 'main', flavors: { cpu: 'default' }, resourceUsage: { cpu: '6' }, count: 2 },
    ]);
    assert.equal(condition(w, 'QuotaReserved')?.status, 'True');
    assert.equal(condition(w, 'QuotaReserved')?.message, 'Quota reserved in ClusterQueue a');
    assert.equal(condition(w, 'Admitted')?.status, 'True');
    assert.equal(condition(w, 'Admitted')?.lastTransitionTime, '2026-01-01T00:00:00Z');
    const events = env.manager.events.about('Workload/default/w1').map((e) => `${e.reason}: ${e.message}`);
    assert.deepEqual(events, [
      'QuotaReserved: Quota reserved in ClusterQueue a, wait time since queued was 0s',
      'Admitted: Admitted by ClusterQueue a, wait time since reservation was 0s',
    ]);
    const metrics = await env.manager.metrics.text();
    assert.match(metrics, /kueue_admitted_workloads_total\{cluster_queue="a"\} 1/);
    assert.match(metrics, /kueue_cluster_queue_resource_usage\{cluster_queue="a",flavor="default",resource="cpu"\} 6/);
    assert.match(metrics, /kueue_admission_attempts_total\{result="success"\} 1/);
    assert.deepEqual(env.manager.errors, []);
  });

  it('takes only one head per ClusterQueue per cycle', async () => {
    const objects = [...queueObjects('100'), cq('b').quota('default', { cpu: '100' }).build(), localQueue('b', 'b')];
    const env = runtimeEnv({ controllers: [schedulerController()], objects });
    env.seed(
      wl('a1').queue('a').pods(1, { cpu: '1' }).build(),
      wl('a2').queue('a').pods(1, { cpu: '1' }).build(),
      wl('a3').queue('a').pods(1, { cpu: '1' }).build(),
    );
    env.seed(wl('b1').queue('b').pods(1, { cpu: '1' }).build(), wl('b2').queue('b').pods(1, { cpu: '1' }).build());
    await env.start();
    // What each step admits (a step runs one key: a sync or a cycle), at the end of the
    // instant (the first cycle) and then cycle after cycle at once.
    const seen: string[][] = [];
    await env.manager.drain();
    env.clock.advanceBy(0);
    while (await env.manager.step()) {
      const now = admitted(env);
      if (now.length !== (seen.at(-1)?.length ?? 0)) seen.push(now);
    }
    assert.deepEqual(seen, [
      ['a1', 'b1'],
      ['a1', 'a2', 'b1', 'b2'],
      ['a1', 'a2', 'a3', 'b1', 'b2'],
    ]);
  });

  it('starts cycles at least minCycleIntervalMs apart: what arrives in between waits for the next one', async () => {
    const objects = [...queueObjects('100')];
    const env = runtimeEnv({ controllers: [schedulerController()], objects, config: { minCycleIntervalMs: 500 } });
    await env.start();
    const t0 = env.clock.now();
    env.seed(wl('w1').queue('a').pods(1, { cpu: '1' }).build());
    await env.manager.drain();
    assert.deepEqual(admitted(env), [], 'the first cycle waits for the end of the instant');
    env.clock.advanceBy(0);
    await env.manager.drain();
    assert.deepEqual(admitted(env), ['w1'], 'the first cycle, at the end of the instant');
    env.clock.advanceBy(100);
    env.seed(wl('w2').queue('a').pods(1, { cpu: '1' }).build());
    await env.manager.drain();
    assert.deepEqual(admitted(env), ['w1'], '100 ms later: no cycle yet');
    env.clock.advanceBy(399);
    await env.manager.drain();
    assert.deepEqual(admitted(env), ['w1'], '499 ms after the first cycle: still none');
    env.clock.advanceBy(1);
    await env.manager.drain();
    assert.deepEqual(admitted(env), ['w1', 'w2'], 'the next cycle, 500 ms after the first');
    assert.equal(env.clock.now() - t0, 500);
  });

  it('writes the pending message once, however many cycles look at the Workload again', async () => {
    const env = runtimeEnv({ controllers: [schedulerController()], objects: queueObjects(), config: { requeueBatchMs: 0 } });
    await env.start();
    env.seed(wl('w1').queue('a').pods(2, { cpu: '3' }).build(), wl('w2').queue('a').pods(2, { cpu: '3' }).build());
    await env.run();
    assert.deepEqual(admitted(env), ['w1']);
    let writes = 0;
    env.store.watch('Workload', (e) => e.object.metadata.name === 'w2' && writes++);
    // Capacity events requeue w2 again and again; it still does not fit.
    for (let i = 0; i < 5; i++) {
      env.seed(pod(`p${i}`).build());
      env.patch('Workload', 'default', 'w1', (w) => (w.metadata.labels = { round: String(i) }));
      // A new shape each round (equivalence hashing parks a newcomer of a shape that found no fit untried).
      env.seed(
        wl(`x${i}`)
          .queue('a')
          .pods(1, { cpu: String(5 + i) })
          .build(),
      );
      await env.run();
    }
    const w2 = get(env, 'w2');
    assert.equal(condition(w2, 'QuotaReserved')?.status, 'False');
    assert.equal(condition(w2, 'QuotaReserved')?.reason, 'WaitingForQuota');
    assert.equal(writes, 0);
    const attempts = /kueue_admission_attempts_total\{result="inadmissible"\} (\d+)/.exec(await env.manager.metrics.text());
    assert.ok(Number(attempts?.[1]) >= 5, 'cycles did look at it again');
    const warnings = env.manager.events.about('Workload/default/w2').filter((e) => e.type === 'Warning');
    assert.equal(warnings.length, 1);
    assert.match(warnings[0]!.message, /insufficient unused quota for cpu in flavor default, 2 more needed/);
  });

  it('usage gauges are set only when they move, and follow every reservation, release and rebuild', async () => {
    const env = runtimeEnv({ controllers: [schedulerController()], objects: queueObjects(), config: { requeueBatchMs: 0 } });
    await env.start();
    const usage = async () => {
      const text = await env.manager.metrics.text();
      const one = (re: RegExp) => re.exec(text)?.[1];
      return {
        cpu: one(/kueue_cluster_queue_resource_usage\{cluster_queue="a",flavor="default",resource="cpu"\} (\S+)/),
        nominal: one(/kueue_cluster_queue_nominal_quota\{cluster_queue="a",flavor="default",resource="cpu"\} (\S+)/),
        reserving: one(/kueue_reserving_active_workloads\{cluster_queue="a"\} (\S+)/),
        admitted: one(/kueue_admitted_active_workloads\{cluster_queue="a"\} (\S+)/),
      };
    };
    env.seed(wl('w1').queue('a').pods(2, { cpu: '3' }).build(), wl('w2').queue('a').pods(2, { cpu: '3' }).build());
    await env.run();
    assert.deepEqual(await usage(), { cpu: '6', nominal: '10', reserving: '1', admitted: '1' });
    // w1 finishes and w2 takes its place: back to the same values (the gauges stay set).
    finish(env, 'w1');
    await env.run();
    assert.equal(get(env, 'w2').status?.admission?.clusterQueue, 'a');
    assert.deepEqual(await usage(), { cpu: '6', nominal: '10', reserving: '1', admitted: '1' });
    finish(env, 'w2');
    await env.run();
    assert.deepEqual(await usage(), { cpu: '0', nominal: '10', reserving: '0', admitted: '0' });
    // A configuration change resets the gauges: every value is set again, not only the moved ones.
    env.seed(wl('w3').queue('a').pods(1, { cpu: '2' }).build());
    await env.run();
    env.patch('ClusterQueue', undefined, 'a', (c) => {
      (
        c as unknown as { spec: { resourceGroups: { flavors: { resources: { nominalQuota: string }[] }[] }[] } }
      ).spec.resourceGroups[0]!.flavors[0]!.resources[0]!.nominalQuota = '12';
    });
    await env.run();
    assert.deepEqual(await usage(), { cpu: '2', nominal: '12', reserving: '1', admitted: '1' });
  });

  it('pending_workloads: each status is set when its count moves (a park, an admission after a finish, a rebuild)', async () => {
    const env = runtimeEnv({ controllers: [schedulerController()], objects: queueObjects(), config: { requeueBatchMs: 0 } });
    await env.start();
    const pending = async () => {
      const text = await env.manager.metrics.text();
      const one = (status: string) =>
        new RegExp(`kueue_pending_workloads\\{cluster_queue="a",status="${status}"\\} (\\S+)`).exec(text)?.[1];
      return { active: one('active'), inadmissible: one('inadmissible') };
    };
    env.seed(wl('w1').queue('a').pods(2, { cpu: '3' }).build(), wl('w2').queue('a').pods(2, { cpu: '3' }).build());
    await env.run();
    assert.deepEqual(await pending(), { active: '0', inadmissible: '1' });
    finish(env, 'w1');
    await env.run();
    assert.deepEqual(await pending(), { active: '0', inadmissible: '0' });
    env.seed(wl('w3').queue('a').pods(2, { cpu: '3' }).build());
    await env.run();
    assert.deepEqual(await pending(), { active: '0', inadmissible: '1' });
    env.patch('ClusterQueue', undefined, 'a', (c) => (c.metadata.labels = { rebuilt: 'yes' }));
    await env.run();
    assert.deepEqual(await pending(), { active: '0', inadmissible: '1' }, 'after the rebuild');
  });

  it('Finished releases the quota and wakes the parked Workloads after the requeue batch (1 s)', async () => {
    const env = runtimeEnv({ controllers: [schedulerController()], objects: queueObjects() });
    await env.start();
    env.seed(wl('w1').queue('a').pods(2, { cpu: '3' }).build(), wl('w2').queue('a').pods(2, { cpu: '3' }).build());
    await env.run();
    assert.deepEqual(admitted(env), ['w1']);
    finish(env, 'w1');
    await env.run(999);
    assert.equal(get(env, 'w2').status?.admission, undefined, 'not before the batch');
    await env.run(2);
    assert.equal(get(env, 'w2').status?.admission?.clusterQueue, 'a');
    const metrics = await env.manager.metrics.text();
    assert.match(metrics, /kueue_cluster_queue_resource_usage\{cluster_queue="a",flavor="default",resource="cpu"\} 6/);
    assert.match(metrics, /kueue_finished_workloads_total\{cluster_queue="a",result="Succeeded"\} 1/);
    assert.match(metrics, /kueue_cluster_queue_status\{cluster_queue="a",status="active"\} 1/);
  });

  it('a cycle asked for by an event runs at the end of its instant, after every event of that instant', async () => {
    const objects = [
      flavor('default'),
      cq('a').quota('default', { cpu: '10' }).preemption({ withinClusterQueue: 'LowerPriority' }).build(),
      localQueue('a', 'a'),
    ];
    const env = runtimeEnv({ controllers: [schedulerController()], objects });
    await env.start();
    env.seed(wl('running').queue('a').pods(1, { cpu: '6' }).priority(50).build());
    await env.run();
    assert.deepEqual(admitted(env), ['running']);
    // One instant: low is created (and its event handled), then running finishes and high
    // is created. A cycle at low's event would admit low into the 4 CPUs left, for high to
    // preempt it at the same instant.
    env.seed(wl('low').queue('a').pods(1, { cpu: '4' }).priority(1).build());
    await env.manager.drain();
    assert.deepEqual(admitted(env), ['running'], 'no cycle before the end of the instant');
    finish(env, 'running');
    env.seed(wl('high').queue('a').pods(1, { cpu: '10' }).priority(100).build());
    await env.manager.drain();
    await env.run(0);
    assert.equal(get(env, 'high').status?.admission?.clusterQueue, 'a', 'the cycle at the end of the instant admits high');
    assert.equal(get(env, 'low').status?.admission, undefined);
    assert.equal(condition(get(env, 'low'), 'Evicted'), undefined, 'low was never admitted, so never preempted');
  });

  it('Workloads finishing one by one at one instant after a cycle that admitted nothing are seen by one cycle at its end', async () => {
    const objects = [flavor('default'), cq('a').strict().quota('default', { cpu: '10' }).build(), localQueue('a', 'a')];
    const env = runtimeEnv({ controllers: [schedulerController()], objects });
    await env.start();
    env.seed(wl('w1').queue('a').pods(1, { cpu: '5' }).build(), wl('w2').queue('a').pods(1, { cpu: '5' }).build());
    await env.run();
    env.seed(wl('big').queue('a').pods(1, { cpu: '10' }).build());
    await env.run();
    assert.deepEqual(admitted(env), ['w1', 'w2'], 'big waits at the head of its StrictFIFO queue');
    const inadmissible = async () =>
      Number(/kueue_admission_attempts_total\{result="inadmissible"\} (\d+)/.exec(await env.manager.metrics.text())?.[1] ?? 0);
    const before = await inadmissible();
    const t = env.clock.now();
    finish(env, 'w1');
    await env.manager.drain();
    assert.equal(await inadmissible(), before, 'no cycle while the instant is not over');
    finish(env, 'w2');
    await env.run();
    assert.deepEqual(admitted(env), ['big', 'w1', 'w2']);
    assert.equal(await inadmissible(), before, 'one cycle, once both had finished, admitted big');
    assert.equal(Date.parse(condition(get(env, 'big'), 'Admitted')!.lastTransitionTime!), t - (t % 1000), 'at the same instant');
  });

  it('a Workload whose LocalQueue is missing says so, and is admitted once the LocalQueue is created', async () => {
    const env = runtimeEnv({
      controllers: [schedulerController()],
      objects: [flavor('default'), cq('a').quota('default', { cpu: '10' }).build()],
    });
    await env.start();
    env.seed(wl('w1').queue('late').pods(1, { cpu: '1' }).build());
    await env.run();
    assert.equal(condition(get(env, 'w1'), 'QuotaReserved')?.message, "LocalQueue late doesn't exist");
    env.seed(localQueue('late', 'missing'));
    await env.run();
    assert.equal(condition(get(env, 'w1'), 'QuotaReserved')?.message, "ClusterQueue missing doesn't exist");
    env.patch('LocalQueue', 'default', 'late', (lq: KObject & { spec: { clusterQueue: string } }) => (lq.spec.clusterQueue = 'a'));
    await env.run();
    assert.equal(get(env, 'w1').status?.admission?.clusterQueue, 'a');
  });

  it('a failed admission write takes the assumed usage back and retries with a growing backoff', async () => {
    const env = runtimeEnv({ controllers: [schedulerController()], objects: queueObjects() });
    let deny = true;
    env.store.addAdmissionHook({
      name: 'deny-w1',
      kinds: ['Workload'],
      operations: ['UPDATE'],
      type: 'validating',
      includeStatus: true,
      admit: (r) =>
        deny && r.object.metadata.name === 'w1' && (r.object as Workload).status?.admission
          ? { denied: ['w1 may not be admitted yet'] }
          : undefined,
    });
    await env.start();
    env.seed(wl('w1').queue('a').pods(1, { cpu: '6' }).build());
    const r = await env.run(600_000);
    assert.deepEqual(admitted(env), []);
    const errors = env.manager.errors.length;
    assert.ok(errors >= 3 && errors < 40, `retried a few times in 10 minutes, not spinning: ${errors}`);
    assert.match(env.manager.errors[0]!.message, /admission webhook "deny-w1" denied the request: w1 may not be admitted yet/);
    assert.ok(r.steps < 200, `steps ${r.steps}`);
    const metrics = await env.manager.metrics.text();
    assert.match(metrics, /kueue_cluster_queue_resource_usage\{cluster_queue="a",flavor="default",resource="cpu"\} 0/);
    assert.match(metrics, /kueue_reserving_active_workloads\{cluster_queue="a"\} 0/);
    deny = false;
    await env.run(120_000);
    assert.deepEqual(admitted(env), ['w1']);
  });
  it('a Workload it cannot read is reported and the others are admitted', async () => {
    const env = runtimeEnv({ controllers: [schedulerController()], objects: queueObjects() });
    await env.start();
    const broken = {
      apiVersion: 'kueue.x-k8s.io/v1beta2',
      kind: 'Workload',
      metadata: { name: 'broken', namespace: 'default' },
      spec: { queueName: 'a' },
    } as unknown as Workload;
    env.seed(broken, wl('w1').queue('a').pods(1, { cpu: '1' }).build());
    await env.run();
    assert.deepEqual(admitted(env), ['w1']);
    const warning = env.manager.events.about('Workload/default/broken')[0];
    assert.equal(warning?.type, 'Warning');
    assert.match(warning?.message ?? '', /cannot be read by the scheduler/);
  });
});

describe('scheduler controller: preemption', () => {
  const objects = (): KObject[] => [
    flavor('default'),
    cq('a').quota('default', { cpu: '10' }).preemption({ withinClusterQueue: 'LowerPriority' }).build(),
    localQueue('a', 'a'),
  ];

  it('a preempted Workload keeps its quota until its reservation is cleared; then the preemptor is admitted', async () => {
    const env = runtimeEnv({ controllers: [schedulerController()], objects: objects() });
    await env.start();
    env.seed(wl('low').queue('a').pods(1, { cpu: '8' }).priority(1).build());
    await env.run();
    env.seed(wl('high').queue('a').pods(1, { cpu: '8' }).priority(100).build());
    const r = await env.run();
    assert.ok(r.idle);
    const low = get(env, 'low');
    assert.equal(condition(low, 'Evicted')?.status, 'True');
    assert.equal(condition(low, 'Evicted')?.reason, 'Preempted');
    assert.equal(condition(low, 'Preempted')?.reason, 'InClusterQueue');
    assert.match(
      condition(low, 'Preempted')?.message ?? '',
      /^Preempted to accommodate a workload \(UID: .*\) due to prioritization in the ClusterQueue$/,
    );
    assert.equal(low.status?.admission?.clusterQueue, 'a', 'the victim keeps its reservation while its pods stop');
    assert.equal(get(env, 'high').status?.admission, undefined);
    assert.equal(condition(get(env, 'high'), 'QuotaReserved')?.reason, 'WaitingForPreemptedWorkloads');
    assert.equal(
      env.manager.events.about('Workload/default/low').filter((e) => e.reason === 'Preempted').length,
      1,
      'evicted once, not once per cycle',
    );

    clearAfterEviction(env, 'low');
    await env.run();
    assert.equal(get(env, 'high').status?.admission?.clusterQueue, 'a');
    const lowAfter = get(env, 'low');
    assert.equal(lowAfter.status?.admission, undefined);
    assert.equal(condition(lowAfter, 'Requeued')?.status, 'True');
    assert.equal(condition(lowAfter, 'QuotaReserved')?.reason, 'WaitingForQuota', 'requeued and waiting again');
    assert.match(
      await env.manager.metrics.text(),
      /kueue_preempted_workloads_total\{preempting_cluster_queue="a",reason="InClusterQueue"\} 1/,
    );
  });

  it('a bare Workload (no owner) is cleared by the workload controller after its preemption', async () => {
    const env = runtimeEnv({
      controllers: [schedulerController(), workloadController()],
      objects: objects(),
      config: { waitForPodsReady: undefined },
    });
    await env.start();
    env.seed(wl('low').queue('a').pods(1, { cpu: '8' }).priority(1).build());
    await env.run();
    env.seed(wl('high').queue('a').pods(1, { cpu: '8' }).priority(100).build());
    await env.run();
    assert.equal(get(env, 'high').status?.admission?.clusterQueue, 'a');
    assert.equal(get(env, 'low').status?.admission, undefined);
    assert.equal(condition(get(env, 'low'), 'Evicted')?.reason, 'Preempted');
  });

  it('preemption victims letting go one by one at one instant are seen by one cycle at its end, not by a cycle each', async () => {
    const env = runtimeEnv({
      controllers: [schedulerController(), workloadController()],
      objects: objects(),
      config: { waitForPodsReady: undefined },
    });
    await env.start();
    const names = ['low1', 'low2', 'low3', 'low4', 'low5'];
    for (const n of names) env.seed(wl(n).queue('a').pods(1, { cpu: '2' }).priority(1).build());
    await env.run();
    const t0 = env.clock.now();
    env.seed(wl('high').queue('a').pods(1, { cpu: '10' }).priority(100).build());
    await env.run();
    const high = get(env, 'high');
    assert.equal(high.status?.admission?.clusterQueue, 'a');
    const lows = names.filter((n) => condition(get(env, n), 'Evicted')?.reason === 'Preempted');
    assert.equal(lows.length, 5, 'every victim was needed');
    // The cycle that preempted admitted nothing: the victims' releases at that instant wait
    // for one cycle at its end, which sees every victim gone. Before, each release started
    // a cycle that re-ran the search and wrote the preemptor's message again (5, 4, 3, 2,
    // then 1 workload(s) to wait for).
    assert.equal(Date.parse(condition(high, 'Admitted')!.lastTransitionTime!) - t0, 0, 'admitted in the same second');
    const waiting = env.manager.events.about('Workload/default/high').filter((e) => e.reason === 'WaitingForPreemptedWorkloads');
    assert.deepEqual(
      waiting.map((e) => /Pending the preemption of (\d+)/.exec(e.message)?.[1]),
      ['5'],
      'one cycle preempted, the next admitted: none in between',
    );
  });
});

describe('scheduler controller: restart and determinism', () => {
  it('a new manager on the same store rebuilds from it and admits no Workload twice', async () => {
    const env = runtimeEnv({ controllers: [schedulerController()], objects: queueObjects() });
    await env.start();
    env.seed(wl('w1').queue('a').pods(1, { cpu: '4' }).build(), wl('w2').queue('a').pods(1, { cpu: '4' }).build());
    await env.run();
    assert.deepEqual(admitted(env), ['w1', 'w2']);
    const before = env.store.listSync('Workload').map((w) => w.metadata.resourceVersion);
    env.manager.stop();

    env.seed(wl('w3').queue('a').pods(1, { cpu: '4' }).build());
    const again = runtimeEnv({ store: env.store, clock: env.clock, controllers: [schedulerController()] });
    await again.start();
    await again.run();
    assert.deepEqual(
      env.store
        .listSync('Workload')
        .slice(0, 2)
        .map((w) => w.metadata.resourceVersion),
      before,
      'admitted Workloads untouched',
    );
    assert.deepEqual(admitted(again), ['w1', 'w2']);
    assert.equal(condition(get(again, 'w3'), 'QuotaReserved')?.reason, 'WaitingForQuota', 'the quota of w1 and w2 counts');
    assert.equal(again.manager.events.recent.filter((e) => e.reason === 'QuotaReserved').length, 0);
  });

  it('a Workload admitted in the store but not yet seen by the cache is not admitted again', async () => {
    const env = runtimeEnv({ objects: queueObjects() });
    env.seed(wl('w1').queue('a').pods(1, { cpu: '4' }).build());
    // A store whose watch events wait until flushed: the scheduler's caches lag behind it.
    const held: (() => void)[] = [];
    const s = env.store;
    const lagging: ObjectStore = {
      namespaced: (k) => s.namespaced(k),
      get: <T extends KObject>(k: string, ns: string | undefined, n: string) => s.get<T>(k, ns, n),
      list: <T extends KObject>(k: string, o?: ListOptions) => s.list<T>(k, o),
      watch: <T extends KObject>(kind: string, h: WatchHandler<T>, o?: WatchOptions) => s.watch<T>(kind, (e) => held.push(() => h(e)), o),
      create: (o) => s.create(o),
      update: (o) => s.update(o),
      updateStatus: (o) => s.updateStatus(o),
      delete: <T extends KObject>(k: string, ns: string | undefined, n: string, o?: DeleteOptions) => s.delete<T>(k, ns, n, o),
      addAdmissionHook: (h) => s.addAdmissionHook(h),
    };
    const m = new Manager({ store: lagging, clock: env.clock, config: defaultConfig({ waitForPodsReady: undefined }) });
    m.add(schedulerController());
    await m.start();
    for (const f of held.splice(0)) f();
    // Someone else (a previous leader) admits w1; the cache has not seen it yet.
    env.patch(
      'Workload',
      'default',
      'w1',
      (w) => (w.status = { admission: { clusterQueue: 'other', podSetAssignments: [{ name: 'main', count: 1 }] } }),
      { status: true },
    );
    m.queue('scheduler')!.add('cycle');
    const r = await m.run({ untilMs: env.clock.now() + 1000 });
    assert.ok(r.steps < 20, `backs off while the cache is behind, no spinning: ${r.steps} steps`);
    assert.equal(get(env, 'w1').status?.admission?.clusterQueue, 'other', 'the store read before the write refuses the stale decision');
    assert.equal(m.events.recent.filter((e) => e.reason === 'QuotaReserved').length, 0);
    for (const f of held.splice(0)) f();
    await m.drain();
    assert.equal(get(env, 'w1').status?.admission?.clusterQueue, 'other');
    assert.deepEqual(m.errors, []);
  });

  it('the same input gives the same statuses and events', async () => {
    const scenario = async () => {
      const env = runtimeEnv({
        controllers: [schedulerController(), workloadController()],
        config: { waitForPodsReady: undefined },
        objects: [
          flavor('default'),
          cq('a').quota('default', { cpu: '10' }).preemption({ withinClusterQueue: 'LowerPriority' }).build(),
          localQueue('a', 'a'),
          cq('b').quota('default', { cpu: '4' }).build(),
          localQueue('b', 'b'),
        ],
      });
      await env.start();
      for (let i = 0; i < 12; i++)
        env.seed(
          wl(`w${i}`)
            .queue(i % 3 === 0 ? 'b' : 'a')
            .pods(1 + (i % 2), { cpu: String(1 + (i % 4)) })
            .priority(i % 5)
            .created(i)
            .build(),
        );
      await env.run();
      finish(env, 'w1');
      env.seed(wl('late').queue('a').pods(1, { cpu: '9' }).priority(50).build());
      await env.run();
      const statuses = env.store.listSync('Workload').map((w) => [w.metadata.name, w.status]);
      return JSON.stringify({ statuses, events: env.manager.events.recent.map((e) => [e.at, e.object, e.reason, e.message]) });
    };
    const a = await scenario();
    const b = await scenario();
    assert.equal(a, b);
    assert.match(a, /Preempted/);
  });
});

describe('scheduler controller: pod events', () => {
  it('podMoved: only a change of node, phase, Workload or PodSet moves a pod (null and absent alike)', () => {
    const base = pod('p').build();
    const withNode = { ...base, spec: { ...base.spec, nodeName: 'n1' } };
    assert.equal(podMoved(base, { ...base, metadata: { ...base.metadata, labels: { other: 'x' } } }), false);
    assert.equal(podMoved(base, { ...base, spec: { ...base.spec, nodeName: null as unknown as string } }), false);
    assert.equal(podMoved(base, withNode), true);
    assert.equal(podMoved(withNode, { ...withNode, status: { phase: 'Succeeded' } }), true);
    assert.equal(podMoved(base, { ...base, metadata: { ...base.metadata, annotations: { 'kueue.x-k8s.io/workload': 'w' } } }), true);
    assert.equal(podMoved(base, { ...base, metadata: { ...base.metadata, labels: { 'kueue.x-k8s.io/podset': 'main' } } }), true);
  });
});
