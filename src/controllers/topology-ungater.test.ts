import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { BLOCK, node, RACK } from '../testing/builders.ts';
import { HOSTNAME_LABEL, KueueAnnotation, KueueSchedulingGate, PodIndexLabel } from '../api/keys.ts';
import type { Node, Pod, Workload } from '../api/objects.ts';
import { PausableWatchStore, placement, tasEnv, tasPod, tasWorkload, type TasEnv } from '../testing/tas-runtime.ts';
import { retryOnConflict } from '../runtime/store.ts';
import { topologyUngater } from './topology-ungater.ts';

const JOB_INDEX = PodIndexLabel.JobCompletionIndex;

function where(env: TasEnv, names: readonly string[]): Record<string, string> {
  return Object.fromEntries(names.map((n) => [n, placement(env.store.getSync('Pod', 'default', n))]));
}

async function ungate(objects: (Workload | Pod | Node)[]): Promise<TasEnv> {
  const env = await tasEnv(objects, [topologyUngater()]);
  await env.m.run();
  assert.deepEqual(env.m.errors, []);
  return env;
}

describe('TopologyUngater: rank order', () => {
  it('a Job pod goes to the domain of its completion index, whatever its name', async () => {
    const w = tasWorkload('job')
      .podSet('main', 4, { required: HOSTNAME_LABEL, podIndexLabel: JOB_INDEX })
      .assign('main', [
        ['h1', 2],
        ['h2', 2],
      ])
      .build();
    // Name order (greedy) would be a, b, c, d: a and b on h1.
    const idx: Record<string, number> = { 'p-a': 2, 'p-b': 0, 'p-c': 3, 'p-d': 1 };
    const pods = Object.entries(idx).map(([n, i]) => tasPod(n, 'job').label(JOB_INDEX, i).build());
    const env = await ungate([w, ...pods]);
    assert.deepEqual(where(env, Object.keys(idx)), { 'p-a': 'h2', 'p-b': 'h1', 'p-c': 'h2', 'p-d': 'h1' });
    const p = env.store.getSync('Pod', 'default', 'p-b')!;
    assert.equal(p.spec.schedulingGates, undefined);
    assert.deepEqual(p.spec.nodeSelector, { [HOSTNAME_LABEL]: 'h1' });
  });

  it('a JobSet pod ranks by job-index x pods per job + completion index', async () => {
    const w = tasWorkload('js')
      .podSet('workers', 4, {
        required: HOSTNAME_LABEL,
        podIndexLabel: JOB_INDEX,
        subGroupIndexLabel: PodIndexLabel.JobSetJobIndex,
        subGroupCount: 2,
      })
      .assign('workers', [
        ['h1', 2],
        ['h2', 2],
      ])
      .build();
    const jobIdx: Record<string, [number, number]> = { 'js-w': [1, 1], 'js-x': [1, 0], 'js-y': [0, 1], 'js-z': [0, 0] };
    const pods = Object.entries(jobIdx).map(([n, [j, i]]) =>
      tasPod(n, 'js', 'workers').label(PodIndexLabel.JobSetJobIndex, j).label(JOB_INDEX, i).build(),
    );
    const env = await ungate([w, ...pods]);
    assert.deepEqual(where(env, Object.keys(jobIdx)), { 'js-w': 'h2', 'js-x': 'h2', 'js-y': 'h1', 'js-z': 'h1' });
  });

  it('MPIJob workers with pod-index-offset 1 rank from replica-index 1', async () => {
    const w = tasWorkload('mpi')
      .podSet('launcher', 1)
      .podSet('worker', 3, { required: HOSTNAME_LABEL, podIndexLabel: PodIndexLabel.KubeflowReplicaIndex })
      .assign('launcher', [['h0', 1]])
      .assign('worker', [
        ['h1', 1],
        ['h2', 2],
      ])
      .build();
    const replica: Record<string, number> = { 'w-a': 3, 'w-b': 1, 'w-c': 2 };
    const pods = Object.entries(replica).map(([n, i]) =>
      tasPod(n, 'mpi', 'worker').label(PodIndexLabel.KubeflowReplicaIndex, i).annotate(KueueAnnotation.PodIndexOffset, '1').build(),
    );
    const env = await ungate([w, tasPod('launcher', 'mpi', 'launcher').build(), ...pods]);
    assert.deepEqual(where(env, ['launcher', ...Object.keys(replica)]), { launcher: 'h0', 'w-a': 'h2', 'w-b': 'h1', 'w-c': 'h2' });
  });

  it('an LWS group: the leader PodSet ranks from 0, the workers from the leader count (no offset annotation)', async () => {
    const group = { required: HOSTNAME_LABEL, podIndexLabel: PodIndexLabel.LWSWorkerIndex, podSetGroupName: 'g' };
    const w = tasWorkload('lws')
      .podSet('leader', 1, group)
      .podSet('worker', 3, group)
      .assign('leader', [['h1', 1]])
      .assign('worker', [
        ['h1', 1],
        ['h2', 2],
      ])
      .build();
    const workerIdx: Record<string, number> = { 'lws-0-a': 3, 'lws-0-b': 1, 'lws-0-c': 2 };
    const leader = tasPod('lws-0', 'lws', 'leader').label(PodIndexLabel.LWSWorkerIndex, 0).build();
    const pods = Object.entries(workerIdx).map(([n, i]) => tasPod(n, 'lws', 'worker').label(PodIndexLabel.LWSWorkerIndex, i).build());
    const env = await ungate([w, leader, ...pods]);
    assert.deepEqual(where(env, ['lws-0', ...Object.keys(workerIdx)]), {
      'lws-0': 'h1',
      'lws-0-a': 'h2',
      'lws-0-b': 'h1',
      'lws-0-c': 'h2',
    });
  });

  it('writes a nodeSelector entry for every level of a block/rack assignment', async () => {
    const a = {
      levels: [BLOCK, RACK],
      domains: [
        { values: ['b1', 'r1'], count: 1 },
        { values: ['b1', 'r2'], count: 1 },
      ],
    };
    const w = tasWorkload('wl').podSet('main', 2, { required: RACK, podIndexLabel: JOB_INDEX }).assign('main', a).build();
    const env = await ungate([w, tasPod('p-0', 'wl').label(JOB_INDEX, 1).build(), tasPod('p-1', 'wl').label(JOB_INDEX, 0).build()]);
    assert.deepEqual(env.store.getSync('Pod', 'default', 'p-0')!.spec.nodeSelector, { [BLOCK]: 'b1', [RACK]: 'r2' });
    assert.deepEqual(env.store.getSync('Pod', 'default', 'p-1')!.spec.nodeSelector, { [BLOCK]: 'b1', [RACK]: 'r1' });
  });
});

describe('TopologyUngater: greedy fallback', () => {
  const job3 = () =>
    tasWorkload('job')
      .podSet('main', 3, { required: HOSTNAME_LABEL, podIndexLabel: JOB_INDEX })
      .assign('main', [
        ['h1', 1],
        ['h2', 2],
      ])
      .build();

  it('a pod without its index label sends the PodSet to greedy: domains filled in name order', async () => {
    // Ranks would put p-c (index 0) on h1.
    const env = await ungate([
      job3(),
      tasPod('p-a', 'job').label(JOB_INDEX, 2).build(),
      tasPod('p-b', 'job').build(),
      tasPod('p-c', 'job').label(JOB_INDEX, 0).build(),
    ]);
    assert.deepEqual(where(env, ['p-a', 'p-b', 'p-c']), { 'p-a': 'h1', 'p-b': 'h2', 'p-c': 'h2' });
  });

  it('a duplicated index sends the PodSet to greedy', async () => {
    const env = await ungate([
      job3(),
      tasPod('p-a', 'job').label(JOB_INDEX, 1).build(),
      tasPod('p-b', 'job').label(JOB_INDEX, 1).build(),
      tasPod('p-c', 'job').label(JOB_INDEX, 0).build(),
    ]);
    assert.deepEqual(where(env, ['p-a', 'p-b', 'p-c']), { 'p-a': 'h1', 'p-b': 'h2', 'p-c': 'h2' });
  });

  it('an already-ungated pod outside its rank domain sends the PodSet to greedy, which counts it where it is', async () => {
    // p-x has rank 0 (h1) but sits on h2: greedy gives h1 one pod and h2 one more.
    const env = await ungate([
      job3(),
      tasPod('p-x', 'job').label(JOB_INDEX, 0).ungatedOn('h2').build(),
      tasPod('p-a', 'job').label(JOB_INDEX, 2).build(),
      tasPod('p-b', 'job').label(JOB_INDEX, 1).build(),
    ]);
    assert.deepEqual(where(env, ['p-x', 'p-a', 'p-b']), { 'p-x': 'h2', 'p-a': 'h1', 'p-b': 'h2' });
  });

  it('an already-ungated pod in its rank domain keeps rank mode', async () => {
    const env = await ungate([
      job3(),
      tasPod('p-x', 'job').label(JOB_INDEX, 0).ungatedOn('h1').build(),
      tasPod('p-a', 'job').label(JOB_INDEX, 2).build(),
      tasPod('p-b', 'job').label(JOB_INDEX, 1).build(),
    ]);
    assert.deepEqual(where(env, ['p-x', 'p-a', 'p-b']), { 'p-x': 'h1', 'p-a': 'h2', 'p-b': 'h2' });
  });

  it('surplus gated pods stay gated; a failed pod is ignored and its replacement takes its domain', async () => {
    const w = tasWorkload('wl')
      .podSet('main', 2)
      .assign('main', [
        ['h1', 1],
        ['h2', 1],
      ])
      .build();
    const env = await ungate([
      w,
      tasPod('p-1', 'wl').runningOn('h1').build(),
      tasPod('p-2', 'wl').runningOn('h2').phase('Failed').build(),
      tasPod('p-3', 'wl').build(),
      tasPod('p-4', 'wl').build(),
    ]);
    assert.deepEqual(where(env, ['p-1', 'p-2', 'p-3', 'p-4']), { 'p-1': 'h1', 'p-2': 'h2', 'p-3': 'h2', 'p-4': 'gated' });
  });
});

describe('TopologyUngater: runtime', () => {
  it('pods whose domain is an unhealthy node stay gated until the replacement assignment arrives', async () => {
    const w = tasWorkload('wl')
      .podSet('main', 2)
      .assign('main', [
        ['h1', 1],
        ['h2', 1],
      ])
      .unhealthy('h2')
      .build();
    const env = await ungate([w, tasPod('p-1', 'wl').build(), tasPod('p-2', 'wl').build()]);
    assert.deepEqual(where(env, ['p-1', 'p-2']), { 'p-1': 'h1', 'p-2': 'gated' });
    const replaced = tasWorkload('wl')
      .podSet('main', 2)
      .assign('main', [
        ['h1', 1],
        ['h3', 1],
      ])
      .build();
    await retryOnConflict(env.store, 'Workload', 'default', 'wl', (o) => void (o.status = replaced.status), { status: true });
    await env.m.run();
    assert.deepEqual(where(env, ['p-1', 'p-2']), { 'p-1': 'h1', 'p-2': 'h3' });
  });

  it('an unhealthy Node whose hostname label differs from its name holds the pods of its host domain', async () => {
    const w = tasWorkload('wl')
      .podSet('main', 2)
      .assign('main', [
        ['h1', 1],
        ['gpu-017', 1],
      ])
      .unhealthy('pool-a-7f3a')
      .build();
    const env = await ungate([
      node('pool-a-7f3a').hostname('gpu-017').build(),
      w,
      tasPod('p-1', 'wl').build(),
      tasPod('p-2', 'wl').build(),
    ]);
    assert.deepEqual(where(env, ['p-1', 'p-2']), { 'p-1': 'h1', 'p-2': 'gated' });
  });

  it('pod events enqueue the Workload after podBatchMs', async () => {
    const w = tasWorkload('wl')
      .podSet('main', 1)
      .assign('main', [['h1', 1]])
      .build();
    const env = await ungate([w]);
    const t0 = env.clock.now();
    await env.store.create(tasPod('late', 'wl').build());
    await env.m.run({ untilMs: t0 + 999 });
    assert.equal(where(env, ['late']).late, 'gated');
    await env.m.run({ untilMs: t0 + 1000 });
    assert.equal(where(env, ['late']).late, 'h1');
  });

  it('a Workload that is not admitted, or evicted, gets no pod ungated', async () => {
    const pending = tasWorkload('a')
      .podSet('main', 1)
      .assign('main', [['h1', 1]])
      .build();
    pending.status!.conditions = pending.status!.conditions!.filter((c) => c.type !== 'Admitted');
    const evicted = tasWorkload('b')
      .podSet('main', 1)
      .assign('main', [['h1', 1]])
      .build();
    evicted.status!.conditions!.push({ type: 'Evicted', status: 'True', reason: 'Preempted', message: 'x' });
    const env = await ungate([pending, evicted, tasPod('pa', 'a').build(), tasPod('pb', 'b').build()]);
    assert.deepEqual(where(env, ['pa', 'pb']), { pa: 'gated', pb: 'gated' });
  });

  it('a malformed assignment is reported as an event and leaves the pods gated, without a reconcile error', async () => {
    const w = tasWorkload('wl')
      .podSet('main', 1)
      .assign('main', [['h1', 1]])
      .build();
    w.status!.admission!.podSetAssignments[0]!.topologyAssignment!.slices[0]!.domainCount = 0;
    const env = await ungate([w, tasPod('p', 'wl').build()]);
    assert.equal(where(env, ['p']).p, 'gated');
    const ev = env.m.events.about('Workload/default/wl');
    assert.ok(ev.length >= 1);
    assert.ok(ev.every((e) => e.reason === 'InvalidTopologyAssignment' && e.type === 'Warning'));
    assert.match(ev[0]!.message, /PodSet main: .*slices\[0\]\.domainCount.*its pods stay gated/);
  });

  it('a decoded assignment is kept per assignment object: a malformed one is reported again at the next reconcile, a replaced one read afresh', async () => {
    const w = tasWorkload('wl')
      .podSet('main', 2)
      .assign('main', [['h1', 2]])
      .build();
    w.status!.admission!.podSetAssignments[0]!.topologyAssignment!.slices[0]!.domainCount = 0;
    const env = await ungate([w, tasPod('p-1', 'wl').build()]);
    const reported = () => env.m.events.about('Workload/default/wl').filter((e) => e.reason === 'InvalidTopologyAssignment').length;
    const first = reported();
    assert.ok(first >= 1);
    env.store.createSync(tasPod('p-2', 'wl').build());
    await env.m.run();
    assert.ok(reported() > first, 'not remembered as decoded');
    const fixed = tasWorkload('wl')
      .podSet('main', 2)
      .assign('main', [['h2', 2]])
      .build();
    await retryOnConflict(env.store, 'Workload', 'default', 'wl', (o) => void (o.status = fixed.status), { status: true });
    await env.m.run();
    assert.deepEqual(where(env, ['p-1', 'p-2']), { 'p-1': 'h2', 'p-2': 'h2' });
  });

  it('records the time from pod creation to gate removal in kueue_pod_scheduling_gate_removal_seconds{name="kueue.x-k8s.io/topology"}', async () => {
    const admitted = tasWorkload('wl')
      .podSet('main', 2)
      .assign('main', [['h1', 2]])
      .build();
    const pending = structuredClone(admitted);
    pending.status!.conditions = pending.status!.conditions!.filter((c) => c.type !== 'Admitted');
    const env = await ungate([pending, tasPod('p-1', 'wl').build(), tasPod('p-2', 'wl').build()]);
    env.clock.advanceBy(5000);
    await retryOnConflict(env.store, 'Workload', 'default', 'wl', (o) => void (o.status = admitted.status), { status: true });
    await env.m.run();
    assert.deepEqual(where(env, ['p-1', 'p-2']), { 'p-1': 'h1', 'p-2': 'h1' });
    const text = await env.m.metrics.text();
    const labels = `name="${KueueSchedulingGate.Topology}",cluster_queue="cq",is_group="false"`;
    assert.ok(text.includes(`kueue_pod_scheduling_gate_removal_seconds_count{${labels}} 2\n`), text);
    // Both pods waited at least the 5 s before admission (plus the pod batch).
    const prefix = `kueue_pod_scheduling_gate_removal_seconds_sum{${labels}} `;
    const sum = Number(
      text
        .split('\n')
        .find((l) => l.startsWith(prefix))
        ?.slice(prefix.length),
    );
    assert.ok(sum >= 10 && sum <= 14, `sum ${sum}`);
  });

  it('expectations prevent double ungating while the pod cache is stale', async () => {
    // Greedy, one pod per host. p-0 sorts first but is not in the cache at the first reconcile.
    const w = tasWorkload('wl')
      .podSet('main', 2)
      .assign('main', [
        ['h1', 1],
        ['h2', 1],
      ])
      .build();
    let watch!: PausableWatchStore;
    const ungater = topologyUngater();
    const env = await tasEnv([w, tasPod('p-a', 'wl').build(), tasPod('p-b', 'wl').build()], [ungater], {
      wrap: (mem) => (watch = new PausableWatchStore(mem)),
    });
    watch.pause();
    await env.store.create(tasPod('p-0', 'wl').build());
    await ungater.reconcile('default/wl');
    assert.deepEqual(where(env, ['p-0', 'p-a', 'p-b']), { 'p-0': 'gated', 'p-a': 'h1', 'p-b': 'h2' });
    // The cache now shows p-0, but not yet the two ungates: a plan from it would put p-0 on h1 too.
    watch.deliver(1);
    const r = await ungater.reconcile('default/wl');
    assert.ok(r && r.requeueAfterMs !== undefined, 'requeued while ungates are unobserved');
    assert.equal(where(env, ['p-0'])['p-0'], 'gated');
    watch.resume();
    await env.m.run();
    assert.deepEqual(where(env, ['p-0', 'p-a', 'p-b']), { 'p-0': 'gated', 'p-a': 'h1', 'p-b': 'h2' });
    assert.deepEqual(env.m.errors, []);
  });

  it('a 5,000-pod gang is ungated in one reconcile, well under 1 s of CPU', async () => {
    const n = 5000;
    const hosts: [string, number][] = Array.from({ length: n / 8 }, (_, i) => [`node-${i}`, 8]);
    const w = tasWorkload('big').podSet('main', n, { required: HOSTNAME_LABEL, podIndexLabel: JOB_INDEX }).assign('main', hosts).build();
    const pods = Array.from({ length: n }, (_, i) =>
      tasPod(`big-${(i * 7919) % n}`, 'big')
        .label(JOB_INDEX, i)
        .build(),
    );
    const ungater = topologyUngater();
    const env = await tasEnv([w, ...pods], [ungater]);
    const cpu = process.cpuUsage();
    await ungater.reconcile('default/big');
    const used = process.cpuUsage(cpu);
    const ms = (used.user + used.system) / 1000;
    let ungated = 0;
    for (let i = 0; i < n; i++) {
      const p = env.store.getSync('Pod', 'default', `big-${(i * 7919) % n}`)!;
      if (placement(p) === `node-${Math.floor(i / 8)}`) ungated++;
    }
    assert.equal(ungated, n);
    assert.ok(ms < 1000, `ungating ${n} pods took ${ms.toFixed(0)} ms of CPU`);
    process.stdout.write(`# ungating ${n} pods: ${ms.toFixed(0)} ms of CPU\n`);
  });
});

describe('TopologyUngater: writes in flight together against a remote store', () => {
  it('with concurrentCycleWrites, a 200-pod gang is ungated onto the same domains as one write at a time', async () => {
    const hosts = Array.from({ length: 20 }, (_, i) => [`h${i}`, 10] as [string, number]);
    const objects = () => [
      tasWorkload('gang').podSet('main', 200, { required: HOSTNAME_LABEL, podIndexLabel: JOB_INDEX }).assign('main', hosts).build(),
      ...Array.from({ length: 200 }, (_, i) => tasPod(`p-${i}`, 'gang').label(JOB_INDEX, i).build()),
    ];
    const names = Array.from({ length: 200 }, (_, i) => `p-${i}`);
    const sequential = await ungate(objects());
    // Each write yields first, as a round trip to an API server would: many are in flight at once.
    let inFlight = 0;
    let most = 0;
    const env = await tasEnv(objects(), [topologyUngater()], {
      config: { concurrentCycleWrites: true },
      wrap: (mem) =>
        new Proxy(mem, {
          get(target, prop) {
            if (prop === 'update')
              return async (obj: Pod) => {
                inFlight++;
                most = Math.max(most, inFlight);
                await new Promise((r) => setImmediate(r));
                inFlight--;
                return target.update(obj);
              };
            const v = Reflect.get(target, prop, target) as unknown;
            return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
          },
        }),
    });
    await env.m.run();
    assert.deepEqual(env.m.errors, []);
    assert.deepEqual(where(env, names), where(sequential, names));
    assert.ok(most > 1 && most <= 64, `writes in flight at once: ${most}`);
    assert.ok(names.every((n) => env.store.getSync('Pod', 'default', n)!.spec.schedulingGates === undefined));
  });
});
