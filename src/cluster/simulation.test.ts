import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import v8 from 'node:v8';
import { runInNewContext } from 'node:vm';
import { KueueAnnotation, KueueLabel, TopoqueueAnnotation } from '../api/keys.ts';
import type { KObject, Pod, Workload } from '../api/objects.ts';
import type { TopoqueueConfig } from '../controllers/config.ts';
import type { Clock } from '../runtime/clock.ts';
import type { Reconciler } from '../runtime/manager.ts';
import { mutable, type ObjectStore, objectKey } from '../runtime/store.ts';
import { cq, localQueue } from '../testing/admission.ts';
import { node } from '../testing/builders.ts';
import { buildReport, reportJson } from './report.ts';
import { parseSimulationObjects, planSubmissions, runSimulation, type SimulationOptions } from './simulation.ts';

const HOST = 'kubernetes.io/hostname';

/**
 * A stand-in for the whole of Kueue and the cluster, so these tests pin the simulation's
 * own behaviour: a Job gets a Workload at once, is admitted 10 s later on nodes n1 and n2
 * (pods created bound and Running), and finishes 60 s after that. A Job named `hog-*`
 * binds a pod asking for more than a node has.
 */
function fakeKueue(opts: { tickForeverMs?: number } = {}): Reconciler<TopoqueueConfig> {
  let store: ObjectStore;
  let clock: Clock;
  return {
    name: 'fake-kueue',
    setup(ctx, queue) {
      store = ctx.store;
      clock = ctx.clock;
      ctx.informers.for('Job').addHandler({ add: (j) => queue.add(objectKey(j)) });
      if (opts.tickForeverMs) ctx.informers.for('Node').addHandler({ add: (n) => queue.add(`tick/${n.metadata.name}`) });
    },
    async reconcile(key) {
      if (key.startsWith('tick/')) return { requeueAfterMs: opts.tickForeverMs };
      const [ns, name] = key.split('/') as [string, string];
      const job = await store.get<KObject & { spec: { parallelism?: number } }>('Job', ns, name);
      if (!job) return;
      const wname = `job-${name}`;
      const w = await store.get('Workload', ns, wname);
      const count = job.spec.parallelism ?? 1;
      if (!w) {
        await store.create<Workload>({
          apiVersion: 'kueue.x-k8s.io/v1beta2',
          kind: 'Workload',
          metadata: {
            name: wname,
            namespace: ns,
            ownerReferences: [{ apiVersion: 'batch/v1', kind: 'Job', name, uid: job.metadata.uid!, controller: true }],
          },
          spec: {
            queueName: job.metadata.labels?.[KueueLabel.QueueName],
            podSets: [{ name: 'main', count, template: { spec: { containers: [{ name: 'c', resources: { requests: { cpu: '1' } } }] } } }],
          },
        });
        return { requeueAfterMs: 10_000 };
      }
      if (!w.status?.admission) {
        const hosts = ['n1', 'n2'].slice(0, count);
        const a = mutable(w);
        a.status = {
          admission: {
            clusterQueue: 'q',
            podSetAssignments: [
              {
                name: 'main',
                count,
                flavors: { cpu: 'default' },
                resourceUsage: { cpu: String(count) },
                topologyAssignment: { levels: [HOST], domains: hosts.map((h) => ({ values: [h], count: 1 })) } as never,
              },
            ],
          },
          conditions: [{ type: 'QuotaReserved', status: 'True', reason: 'QuotaReserved', message: 'ok' }],
        };
        await store.updateStatus(a);
        for (const [i, h] of hosts.entries()) {
          const cpu = name.startsWith('hog-') ? '100' : '1';
          await store.create<Pod>({
            apiVersion: 'v1',
            kind: 'Pod',
            metadata: {
              name: `${name}-${i}`,
              namespace: ns,
              labels: { [KueueLabel.PodSet]: 'main', idx: String(i) },
              annotations: { [KueueAnnotation.Workload]: wname },
            },
            spec: { nodeName: h, containers: [{ name: 'c', resources: { requests: { cpu } } }] },
            status: { phase: 'Running' },
          });
        }
        return { requeueAfterMs: 60_000 };
      }
      if (w.status.conditions?.some((c) => c.type === 'Finished')) return;
      for (let i = 0; i < count; i++) {
        const p = await store.get('Pod', ns, `${name}-${i}`);
        if (p) await store.updateStatus({ ...mutable(p), status: { phase: 'Succeeded' } });
      }
      const f = mutable(w);
      f.status!.conditions = [
        ...(f.status!.conditions ?? []),
        { type: 'Finished', status: 'True', reason: 'Succeeded', message: 'done', lastTransitionTime: new Date(clock.now()).toISOString() },
      ];
      await store.updateStatus(f);
    },
  };
}

function job(name: string, opts: { at?: string; parallelism?: number; queue?: string } = {}): KObject {
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: {
      name,
      namespace: 'team',
      labels: { [KueueLabel.QueueName]: opts.queue ?? 'lq' },
      ...(opts.at ? { annotations: { [TopoqueueAnnotation.SubmitAt]: opts.at } } : {}),
    },
    spec: {
      parallelism: opts.parallelism ?? 2,
      completions: opts.parallelism ?? 2,
      template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', resources: { requests: { cpu: '1' } } }] } },
    },
  } as unknown as KObject;
}

const cluster = (): KObject[] => [
  node('n1').cpu(4).build(),
  node('n2').cpu(4).build(),
  { apiVersion: 'kueue.x-k8s.io/v1beta2', kind: 'ResourceFlavor', metadata: { name: 'default' }, spec: {} } as KObject,
  cq('q').quota('default', { cpu: '8' }).build(),
  localQueue('lq', 'q', 'team'),
];

async function simulate(objects: KObject[], opts: SimulationOptions = {}) {
  const parsed = parseSimulationObjects(objects);
  assert.deepEqual(
    parsed.errors.map((e) => e.message),
    [],
  );
  const run = await runSimulation(parsed.objects, { controllers: [fakeKueue()], ...opts });
  return { run, report: buildReport(run) };
}

describe('simulation', () => {
  it('objects are created at their submit-at; at one instant cluster objects first, then input order', () => {
    const objs = parseSimulationObjects([
      job('late', { at: '1h' }),
      job('a'),
      ...cluster(),
      job('b', { at: '0s' }),
      job('mid', { at: '90s' }),
      node('n3').build(),
    ]).objects;
    const { submissions, errors } = planSubmissions(objs);
    assert.deepEqual(errors, []);
    assert.deepEqual(
      submissions.map((s) => `${s.atMs / 1000}:${s.object.kind}/${s.object.metadata.name}`),
      [
        '0:Node/n1',
        '0:Node/n2',
        '0:Node/n3',
        '0:ResourceFlavor/default',
        '0:ClusterQueue/q',
        '0:LocalQueue/lq',
        '0:Job/a',
        '0:Job/b',
        '90:Job/mid',
        '3600:Job/late',
      ],
    );
  });

  it('a bad submit-at names the object and the annotation', () => {
    const objs = parseSimulationObjects([job('x', { at: 'tomorrow' }), job('y', { at: '-5m' })]).objects;
    assert.deepEqual(
      planSubmissions(objs).errors.map((e) => e.message),
      [
        'document 1, Job/team/x, metadata.annotations["topoqueue.io/submit-at"]: must be a non-negative Go duration from the start of the simulation, such as "90s", "2h" or "1h30m", got "tomorrow"',
        'document 2, Job/team/y, metadata.annotations["topoqueue.io/submit-at"]: must be a non-negative Go duration from the start of the simulation, such as "90s", "2h" or "1h30m", got "-5m"',
      ],
    );
  });

  it("a workload's submission, admission, start and finish are reported in seconds from the start, with its placement and pods", async () => {
    const { report } = await simulate([...cluster(), job('train', { at: '30s' })]);
    assert.equal(report.run.stop, 'idle');
    assert.equal(report.run.end, 100);
    assert.equal(report.workloads.length, 1);
    const w = report.workloads[0]!;
    assert.deepEqual(
      {
        kind: w.kind,
        ns: w.namespace,
        name: w.name,
        queue: w.queue,
        cq: w.clusterQueue,
        status: w.status,
        times: [w.submittedAt, w.admittedAt, w.startedAt, w.finishedAt],
      },
      { kind: 'Job', ns: 'team', name: 'train', queue: 'lq', cq: 'q', status: 'Finished', times: [30, 40, 40, 100] },
    );
    assert.deepEqual(w.workloads, ['job-train']);
    assert.deepEqual(w.placement, [
      {
        workload: 'job-train',
        podSet: 'main',
        flavor: 'default',
        count: 2,
        levels: [HOST],
        domains: [
          { values: ['n1'], count: 1 },
          { values: ['n2'], count: 1 },
        ],
      },
    ]);
    assert.deepEqual(
      w.pods.map((p) => [p.name, p.node, p.phase]),
      [
        ['train-0', 'n1', 'Succeeded'],
        ['train-1', 'n2', 'Succeeded'],
      ],
    );
    assert.equal(report.summary.makespan, 100);
    assert.deepEqual(report.summary.meanTimeToAdmission, { q: 10 });
    assert.deepEqual(report.summary.byStatus, { Finished: 1, Admitted: 0, Pending: 0, Evicted: 0, Failed: 0 });
    // Queue usage: pending from 30 s, admitted (2 cpu) from 40 s, released at 100 s.
    assert.deepEqual(
      report.queues.map((q) => [q.name, q.nominal, q.usage]),
      [
        [
          'q',
          { 'default/cpu': 8 },
          [
            { at: 30, admitted: 0, pending: 1, usage: {} },
            { at: 40, admitted: 1, pending: 0, usage: { 'default/cpu': 2 } },
            { at: 100, admitted: 0, pending: 0, usage: {} },
          ],
        ],
      ],
    );
    // 2 of 8 cpus used from 40 s to 100 s of 100 s.
    assert.equal(report.utilization.mean.cpu, 0.15);
    assert.deepEqual(
      report.utilization.series.map((p) => [p.at, p.used.cpu ?? 0, p.capacity.cpu]),
      [
        [0, 0, 8],
        [40, 2, 8],
        [100, 0, 8],
      ],
    );
    assert.deepEqual(report.violations, []);
  });

  it('--until stops at that virtual time: what runs is Admitted, what was not yet submitted is Pending and says so', async () => {
    const { report } = await simulate([...cluster(), job('a', { at: '30s' }), job('b', { at: '2h' })], { untilMs: 50_000 });
    assert.equal(report.run.stop, 'until');
    assert.equal(report.run.end, 50);
    assert.equal(report.run.until, 50);
    assert.deepEqual(
      report.workloads.map((w) => [w.name, w.status, w.pendingReason]),
      [
        ['a', 'Admitted', null],
        ['b', 'Pending', 'not submitted yet: the run stopped before its submit-at time'],
      ],
    );
  });

  it('--until past the point where nothing is left still ends at that time', async () => {
    const { report } = await simulate([...cluster(), job('a')], { untilMs: 3_600_000 });
    assert.equal(report.run.end, 3600);
    assert.equal(report.run.stop, 'idle');
    assert.equal(report.summary.makespan, 70);
  });

  it('a run that never goes idle stops at the limit after the last submission', async () => {
    const parsed = parseSimulationObjects([...cluster(), job('a', { at: '1h' })]);
    const run = await runSimulation(parsed.objects, { controllers: [fakeKueue({ tickForeverMs: 600_000 })], idleLimitMs: 2 * 3_600_000 });
    assert.equal(run.stop, 'limit');
    assert.equal(run.endMs - run.startMs, 3 * 3_600_000);
    assert.equal(buildReport(run).workloads[0]!.status, 'Finished');
  });

  it('a run keeps an input object only until it is created: one the caller lets go is collected during the run', async () => {
    v8.setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const parsed = parseSimulationObjects([...cluster(), job('early', { at: '10s' }), job('late', { at: '2h' })]);
    const early = new WeakRef(parsed.objects.find((o) => o.object.metadata.name === 'early')!.object);
    const late = new WeakRef(parsed.objects.find((o) => o.object.metadata.name === 'late')!.object);
    const running = runSimulation(parsed.objects, { controllers: [fakeKueue()], untilMs: 100_000 });
    parsed.objects.length = 0;
    const run = await running;
    await new Promise((r) => setImmediate(r));
    gc();
    assert.equal(early.deref(), undefined, "a created object is the store's copy, not the input");
    assert.ok(late.deref() !== undefined, 'an object not yet created is still held (by its timer)');
    assert.equal(buildReport(run).workloads.find((w) => w.name === 'early')!.status, 'Finished');
  });

  it('a create the API server refuses is reported for that object and the run goes on', async () => {
    const denyBad: Reconciler<TopoqueueConfig> = {
      name: 'deny',
      setup(ctx) {
        ctx.store.addAdmissionHook({
          name: 'deny.example.com',
          kinds: ['Job'],
          operations: ['CREATE'],
          type: 'validating',
          admit: (r) => (r.object.metadata.name === 'bad' ? { denied: ['spec: no thanks'] } : undefined),
        });
      },
      reconcile: async () => undefined,
    };
    const parsed = parseSimulationObjects([...cluster(), job('bad', { at: '10s' }), job('good', { at: '20s' })]);
    const run = await runSimulation(parsed.objects, { controllers: [denyBad, fakeKueue()] });
    const report = buildReport(run);
    assert.deepEqual(report.refused, [
      { at: 10, object: 'Job/team/bad', file: null, message: 'admission webhook "deny.example.com" denied the request: spec: no thanks' },
    ]);
    assert.deepEqual(
      report.workloads.map((w) => [w.name, w.status, w.errors]),
      [
        ['bad', 'Failed', ['Job/team/bad: admission webhook "deny.example.com" denied the request: spec: no thanks']],
        ['good', 'Finished', []],
      ],
    );
  });

  it("the invariant checker runs on every step: a pod bound over a node's capacity is a violation in the report", async () => {
    const { report } = await simulate([...cluster(), job('hog-1', { parallelism: 1 })]);
    assert.deepEqual(
      report.violations.map((v) => [v.at, v.invariant, v.object]),
      [[10, 'NodeCapacity', 'Node/n1']],
    );
    assert.equal(report.summary.violations, 1);
  });

  it('objects without a queue name and without a Workload are listed as unmanaged, not as workloads', async () => {
    const free = node('n9').build();
    const bare = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'notebook', namespace: 'team' },
      spec: { containers: [{ name: 'c' }] },
    } as KObject;
    const { report } = await simulate([...cluster(), free, bare]);
    assert.deepEqual(report.workloads, []);
    assert.deepEqual(report.unmanaged, [{ kind: 'Pod', namespace: 'team', name: 'notebook' }]);
  });

  it('the same input gives the same report, byte for byte', async () => {
    const input = () => [...cluster(), job('a', { at: '5s' }), job('b', { at: '5s' }), job('c', { at: '1m', parallelism: 1 })];
    const one = JSON.stringify((await simulate(input())).report);
    const two = JSON.stringify((await simulate(input())).report);
    assert.equal(one, two);
  });

  it('the report file is indented JSON with each flat object or list on one line, the same data as the report', async () => {
    const { report } = await simulate([...cluster(), job('a'), job('b', { at: '5s' })]);
    const text = reportJson(report);
    assert.deepEqual(JSON.parse(text), JSON.parse(JSON.stringify(report)));
    assert.ok(text.endsWith('}\n'));
    assert.match(text, /^ {2}"run": \{"start":"2026-01-01T00:00:00Z",.*\},$/m);
    assert.match(text, /^ {6}"workloads": \["job-a"\],$/m);
    assert.ok(text.length < JSON.stringify(report, null, 2).length);
    assert.equal(
      reportJson({ a: [undefined, 1], b: undefined, c: [{ d: 1 }], e: [] } as never),
      '{\n  "a": [null,1],\n  "c": [\n    {"d":1}\n  ],\n  "e": []\n}\n',
    );
  });
});
