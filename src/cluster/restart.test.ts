// Crash and restart of the whole controller manager: nothing important lives only in memory.
//
// A small TAS cluster (2 blocks x 2 racks x 4 nodes of 8 cpu) gets more Jobs, JobSets,
// plain-Pod groups and a Koordinator gang than it can run at once. The process runs
// part-way, crashes (its informers, queues, timers, webhooks and caches are gone; a crash
// inside a reconcile lets the writes before it through and fails the rest), and a brand-new
// process with fresh controller instances starts on the same store and clock and runs to idle.
//
// Watched across both processes, straight on the store:
//   - admissions: a Workload whose status.admission changes from one value to another
//     without being cleared in between was admitted twice; admitted quota over the
//     ClusterQueue's nominal at any write is a double admission too;
//   - the invariant checker (node capacity, pods within their assignment, gated pods bound...);
//   - Workload creations: one per job, none made again by the new process.
// At the end: every Workload Finished, every job complete, no pod gated, one Workload per job.
// The same on the durable store: at each crash the store is closed and read back from disk.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { GangAnnotation } from '../api/gang.ts';
import { HOSTNAME_LABEL, KueueAnnotation, KueueLabel, KueueSchedulingGate, TopoqueueAnnotation } from '../api/keys.ts';
import type { Admission, KObject, Pod, PodTemplateSpec, Workload } from '../api/objects.ts';
import { parseQuantity } from '../api/quantity.ts';
import { resourceAmount } from '../api/resources.ts';
import { findCondition } from '../admission/conditions.ts';
import { fr } from '../admission/quota.ts';
import { VirtualClock } from '../runtime/clock.ts';
import { type DurableStore, openDurableStore } from '../runtime/durable-store.ts';
import { MemoryStore } from '../runtime/memory-store.ts';
import { objectKey } from '../runtime/store.ts';
import { BLOCK, cq, flavor, RACK } from '../testing/admission.ts';
import { readyNode } from '../testing/cluster.ts';
import { batchJob, jobSet, localQueue, namespace, podTemplate } from '../testing/jobs.ts';
import { cannotRun, drive, DriveStop, generateScenario, type Process, Rng, startProcess } from '../testing/soak.ts';
import { InvariantChecker, usageOf, type Violation } from './invariants.ts';
import { parseSimulationObjects, planSubmissions } from './simulation.ts';

const NS = 'ns';
const FLAVOR = 'tas';
const NOMINAL_CPU = '96';
const MIN = 60_000;

function clusterObjects(): KObject[] {
  const nodes = [];
  for (const b of ['b1', 'b2']) {
    for (const r of ['r1', 'r2']) {
      for (let i = 1; i <= 4; i++)
        nodes.push(
          readyNode(`${b}-${r}-n${i}`, { cpu: '8', memory: '32Gi', pods: '110' }, { [BLOCK]: b, [RACK]: `${b}-${r}`, pool: 'tas' }),
        );
    }
  }
  return [
    namespace(NS),
    ...nodes,
    {
      apiVersion: 'kueue.x-k8s.io/v1beta2',
      kind: 'Topology',
      metadata: { name: 'dc' },
      spec: { levels: [{ nodeLabel: BLOCK }, { nodeLabel: RACK }, { nodeLabel: HOSTNAME_LABEL }] },
    } as KObject,
    flavor(FLAVOR, { topology: 'dc', nodeLabels: { pool: 'tas' } }),
    cq('cq').quota(FLAVOR, { cpu: NOMINAL_CPU, memory: '512Gi' }).build(),
    localQueue('lq', NS),
  ];
}

function template(cpu: string, runFor: string, topology?: { required?: string; preferred?: string }): PodTemplateSpec {
  const annotations: Record<string, string> = { [TopoqueueAnnotation.RunDuration]: runFor };
  if (topology?.required) annotations[KueueAnnotation.PodSetRequiredTopology] = topology.required;
  if (topology?.preferred) annotations[KueueAnnotation.PodSetPreferredTopology] = topology.preferred;
  return podTemplate({ cpu, annotations });
}

function groupPods(group: string, count: number, cpu: string, runFor: string): KObject[] {
  return Array.from(
    { length: count },
    (_, i) =>
      ({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: {
          name: `${group}-${i}`,
          namespace: NS,
          labels: { [KueueLabel.QueueName]: 'lq', [KueueLabel.PodGroupName]: group },
          annotations: {
            'kueue.x-k8s.io/pod-group-total-count': String(count),
            [TopoqueueAnnotation.RunDuration]: runFor,
            [KueueAnnotation.PodSetPreferredTopology]: RACK,
          },
        },
        spec: { restartPolicy: 'Never', containers: [{ name: 'c', resources: { requests: { cpu } } }] },
      }) as KObject,
  );
}

/** A Koordinator gang (annotation way): `count` pods, at least `min` at once. */
function gangPods(gang: string, count: number, min: number, cpu: string, runFor: string): KObject[] {
  return Array.from(
    { length: count },
    (_, i) =>
      ({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: {
          name: `${gang}-${i}`,
          namespace: NS,
          labels: { [KueueLabel.QueueName]: 'lq' },
          annotations: {
            [GangAnnotation.Name]: gang,
            [GangAnnotation.MinAvailable]: String(min),
            [GangAnnotation.TotalNumber]: String(count),
            [TopoqueueAnnotation.RunDuration]: runFor,
            [KueueAnnotation.PodSetRequiredTopology]: RACK,
          },
        },
        spec: { restartPolicy: 'Never', containers: [{ name: 'c', resources: { requests: { cpu } } }] },
      }) as KObject,
  );
}

/** 140 cpu wanted at once on 128 cpu of nodes and 96 of quota: some of it waits. */
function workloadObjects(): KObject[] {
  return [
    batchJob('rack-a', { parallelism: 8, completions: 8, indexed: true, template: template('4', '10m', { required: RACK }) }),
    batchJob('rack-b', { parallelism: 8, completions: 8, indexed: true, template: template('4', '7m', { required: RACK }) }),
    batchJob('spread', { parallelism: 6, completions: 6, template: template('2', '5m', { preferred: BLOCK }) }),
    jobSet('js', [
      { name: 'driver', template: template('1', '8m', { required: BLOCK }) },
      { name: 'workers', replicas: 2, parallelism: 2, template: template('3', '8m', { required: BLOCK }) },
    ]),
    batchJob('small-1', { parallelism: 2, completions: 4, template: template('2', '3m') }),
    batchJob('small-2', { parallelism: 3, completions: 3, template: template('1', '4m') }),
    batchJob('block', { parallelism: 4, completions: 4, indexed: true, template: template('6', '6m', { required: BLOCK }) }),
    ...groupPods('group', 4, '2', '9m'),
    ...gangPods('gang', 3, 2, '2', '8m'),
    batchJob('late', { parallelism: 4, completions: 4, template: template('3', '2m', { preferred: RACK }) }),
  ];
}

/** What a test submitted: Jobs, JobSets, and plain-Pod groups and gangs with their sizes. */
interface Submitted {
  jobs: string[];
  jobSets: string[];
  groups: Map<string, number>;
}

function submitted(objects: readonly KObject[]): Submitted {
  const groups = new Map<string, number>();
  for (const o of objects) {
    const g = o.metadata.labels?.[KueueLabel.PodGroupName] ?? o.metadata.annotations?.[GangAnnotation.Name];
    if (o.kind === 'Pod' && g !== undefined) groups.set(g, (groups.get(g) ?? 0) + 1);
  }
  return {
    jobs: objects.filter((o) => o.kind === 'Job').map((o) => o.metadata.name),
    jobSets: objects.filter((o) => o.kind === 'JobSet').map((o) => o.metadata.name),
    groups,
  };
}

/** Watches every Workload write across processes for double admissions and quota overuse. */
class AdmissionWatch {
  readonly problems: string[] = [];
  readonly created = new Map<string, number>();
  readonly admissions = new Map<string, number>();
  private readonly holding = new Map<string, { cq: string; usage: Map<string, number> }>();
  private readonly nominal = new Map<string, number>([[fr(FLAVOR, 'cpu'), resourceAmount('cpu', parseQuantity(NOMINAL_CPU))]]);
  private stop: () => void = () => {};

  constructor(
    store: MemoryStore,
    private readonly clock: VirtualClock,
  ) {
    this.attach(store);
  }

  /** Watches `store` (instead of the one before: a durable store reopened holds what it held). */
  attach(store: MemoryStore): void {
    this.stop();
    this.stop = store.watch('Workload', (e) => this.onEvent(e.type, e.old, e.object));
  }

  close(): void {
    this.stop();
  }

  private onEvent(type: string, old: Workload | undefined, w: Workload): void {
    const key = objectKey(w);
    const at = `${(this.clock.now() - START) / 1000}s`;
    if (type === 'ADDED') this.created.set(key, (this.created.get(key) ?? 0) + 1);
    const before = type === 'ADDED' ? undefined : old?.status?.admission;
    const after = type === 'DELETED' ? undefined : w.status?.admission;
    if (before && after && JSON.stringify(before) !== JSON.stringify(after)) {
      this.problems.push(
        `${at}: Workload ${key} admitted again without its admission being cleared: ${JSON.stringify(before)} -> ${JSON.stringify(after)}`,
      );
    }
    if (!before && after) this.admissions.set(key, (this.admissions.get(key) ?? 0) + 1);
    const finished = findCondition(w, 'Finished')?.status === 'True';
    if (after && !finished && type !== 'DELETED') this.holding.set(key, { cq: after.clusterQueue ?? '', usage: usageOf(w) });
    else this.holding.delete(key);
    const total = new Map<string, number>();
    for (const h of this.holding.values()) for (const [k, n] of h.usage) total.set(`${h.cq}/${k}`, (total.get(`${h.cq}/${k}`) ?? 0) + n);
    for (const [k, nominal] of this.nominal) {
      const used = total.get(`cq/${k}`) ?? 0;
      if (used > nominal)
        this.problems.push(`${at}: ClusterQueue cq uses ${used} of ${k}, over its nominal ${nominal} (after a write to ${key})`);
    }
  }
}

const START = Date.UTC(2026, 0, 1);
/** Everything is done within an hour; a run still busy at 6 h never ends. */
const LIMIT = START + 6 * 60 * MIN;

const finish = (w: World) => drive(w.process, w.clock, { untilMs: LIMIT, maxSteps: 200_000 });

interface World {
  clock: VirtualClock;
  store: MemoryStore;
  watch: AdmissionWatch;
  checker: InvariantChecker;
  /** Violations found by the checkers of stores closed since (a durable store reopened gets a new one). */
  pastViolations: Violation[];
  process: Process;
  /** Processes started so far, the current one last. */
  processes: Process[];
  submitted: KObject[];
}

async function world(opts: { clock?: VirtualClock; store?: MemoryStore } = {}): Promise<World> {
  const clock = opts.clock ?? new VirtualClock(START);
  const store = opts.store ?? new MemoryStore({ clock });
  for (const o of clusterObjects()) store.createSync(o);
  const watch = new AdmissionWatch(store, clock);
  const checker = new InvariantChecker({ store, clock, startMs: START, fullEvery: 200 });
  await checker.start();
  const process = await begin(store, clock, checker);
  const w: World = { clock, store, watch, checker, pastViolations: [], process, processes: [process], submitted: [] };
  submit(w, workloadObjects());
  return w;
}

/** Creates objects as a user would, while a process (and so its webhooks) is up. */
function submit(w: World, objects: readonly KObject[]): void {
  assert.ok(!w.process.crashed, 'objects are submitted while the webhooks answer');
  for (const o of objects) w.store.createSync(o);
  w.submitted.push(...objects);
}

async function begin(store: MemoryStore, clock: VirtualClock, checker: InvariantChecker): Promise<Process> {
  const p = await startProcess(store, clock);
  p.manager.onStep(() => checker.step());
  return p;
}

/**
 * Crashes the current process (if it is not down already) and starts a new one on the same
 * store and clock, or on the store `reopen` gives (a durable store closed and read back).
 */
async function restart(w: World, reopen?: () => Promise<MemoryStore>): Promise<void> {
  w.process.crash();
  if (reopen) {
    w.checker.full();
    w.pastViolations.push(...w.checker.violations);
    w.checker.stop();
    w.store = await reopen();
    w.watch.attach(w.store);
    w.checker = new InvariantChecker({ store: w.store, clock: w.clock, startMs: START, fullEvery: 200 });
    await w.checker.start();
  }
  w.process = await begin(w.store, w.clock, w.checker);
  w.processes.push(w.process);
}

/** The end state after the run stopped (`stop`); double admissions are reported first. */
function verify(w: World, label: string, stop: DriveStop): void {
  const { store, watch, checker } = w;
  checker.full();
  assert.deepEqual(watch.problems, [], `${label}: double admissions or quota overuse`);
  assert.deepEqual([...w.pastViolations, ...checker.violations], [], `${label}: invariant violations`);
  assert.equal(stop, DriveStop.Idle, `${label}: the run ends (nothing left to do)`);
  // The current process logged nothing; the crashed ones only what the crash failed.
  assert.deepEqual(w.process.manager.errors, [], `${label}: errors of the process that finished the run`);
  for (const p of w.processes.slice(0, -1)) {
    const other = p.manager.errors.filter((e) => !e.message.startsWith('the controller process crashed'));
    assert.deepEqual(other, [], `${label}: errors of a crashed process other than its failed writes`);
  }

  const workloads = store.listSync('Workload', { namespace: NS });
  const unfinished = workloads
    .filter((x) => findCondition(x, 'Finished')?.status !== 'True')
    .map((x) => `${x.metadata.name}: ${JSON.stringify(x.status?.conditions?.map((c) => [c.type, c.status, c.reason]))}`);
  assert.deepEqual(unfinished, [], `${label}: every Workload finished`);
  const failed = workloads.filter((x) => findCondition(x, 'Finished')?.reason !== 'Succeeded').map((x) => x.metadata.name);
  assert.deepEqual(failed, [], `${label}: every Workload succeeded`);
  // One Workload per job, JobSet and pod group, none created twice.
  const { jobs, jobSets, groups } = submitted(w.submitted);
  const units = jobs.length + jobSets.length + groups.size;
  assert.equal(workloads.length, units, `${label}: Workloads ${workloads.map((x) => x.metadata.name).join(', ')}`);
  assert.deepEqual(
    [...watch.created.values()].filter((n) => n !== 1),
    [],
    `${label}: a Workload created twice`,
  );
  assert.equal(watch.created.size, units, `${label}: Workloads created ${[...watch.created.keys()].join(', ')}`);
  const owners = workloads.map((x) => {
    const o = x.metadata.ownerReferences?.find((r) => r.controller);
    return `${o?.kind}/${o?.name}`;
  });
  for (const j of jobs) assert.equal(owners.filter((o) => o === `Job/${j}`).length, 1, `${label}: one Workload owned by Job ${j}`);
  for (const j of jobSets) assert.equal(owners.filter((o) => o === `JobSet/${j}`).length, 1, `${label}: one Workload owned by JobSet ${j}`);

  for (const j of jobs) {
    const job = store.getSync<KObject & { status?: { conditions?: { type: string; status: string }[]; succeeded?: number } }>(
      'Job',
      NS,
      j,
    )!;
    assert.ok(
      job.status?.conditions?.some((c) => c.type === 'Complete' && c.status === 'True'),
      `${label}: Job ${j} complete: ${JSON.stringify(job.status)}`,
    );
  }
  for (const j of jobSets) {
    const js = store.getSync<KObject & { status?: { conditions?: { type: string; status: string }[] } }>('JobSet', NS, j)!;
    assert.ok(
      js.status?.conditions?.some((c) => c.type === 'Completed' && c.status === 'True'),
      `${label}: JobSet ${j} completed: ${JSON.stringify(js.status)}`,
    );
  }
  const pods = store.listSync('Pod', { namespace: NS });
  for (const [g, n] of groups) {
    const phases = pods
      .filter((p) => (p.metadata.labels?.[KueueLabel.PodGroupName] ?? p.metadata.annotations?.[GangAnnotation.Name]) === g)
      .map((p) => p.status?.phase);
    assert.deepEqual(phases, Array(n).fill('Succeeded'), `${label}: the pods of group ${g} ran`);
    assert.ok(
      workloads.some((x) => x.metadata.name === g),
      `${label}: group ${g} has its Workload`,
    );
  }
  const gated = pods
    .filter((p) => (p.spec.schedulingGates ?? []).length > 0)
    .map((p) => `${p.metadata.name}: ${p.spec.schedulingGates!.map((g) => g.name).join(',')}`);
  assert.deepEqual(gated, [], `${label}: no pod left gated`);
  const notDone = pods.filter((p) => p.status?.phase !== 'Succeeded').map((p) => `${p.metadata.name} ${p.status?.phase}`);
  assert.deepEqual(notDone, [], `${label}: every pod left succeeded`);
}

const hasGate = (p: Pod, gate: string) => (p.spec.schedulingGates ?? []).some((g) => g.name === gate);

const admittedWaitingForPods = (store: MemoryStore) =>
  store.listSync('Workload', { namespace: NS }).some((x) => {
    if (!x.status?.admission) return false;
    const owner = x.metadata.ownerReferences?.find((o) => o.controller);
    if (owner?.kind !== 'Job') return false;
    const job = store.getSync<KObject & { spec: { suspend?: boolean } }>('Job', NS, owner.name);
    return job?.spec.suspend === true;
  });

describe('restart of the controller manager', () => {
  it('a crash mid-run loses no workload and admits none twice: the new process rebuilds from the store and finishes everything', async () => {
    const w = await world();
    assert.equal(await drive(w.process, w.clock, { untilMs: START + 3 * MIN }), DriveStop.Until);
    submit(w, [
      ...groupPods('group-2', 4, '3', '5m'),
      batchJob('mid', { parallelism: 4, completions: 4, indexed: true, template: template('4', '4m', { required: RACK }) }),
    ]);
    assert.equal(await drive(w.process, w.clock, { untilMs: START + 7.5 * MIN }), DriveStop.Until);
    // Part-way: some Workloads run (a pod group among them), some wait for quota or capacity.
    const workloads = w.store.listSync('Workload', { namespace: NS });
    const running = (x: Workload) => x.status?.admission !== undefined && findCondition(x, 'Finished')?.status !== 'True';
    assert.ok(
      workloads.some((x) => running(x) && x.metadata.name === 'group'),
      'a pod group runs at the crash',
    );
    assert.ok(
      workloads.some((x) => running(x) && x.metadata.ownerReferences?.[0]?.kind === 'Job'),
      'a Job runs at the crash',
    );
    assert.ok(
      workloads.some((x) => !x.status?.admission),
      'something waits at the crash',
    );
    await restart(w);
    submit(w, [
      ...groupPods('group-3', 2, '1', '3m'),
      batchJob('after', { parallelism: 2, completions: 2, template: template('2', '3m', { required: RACK }) }),
    ]);
    verify(w, 'crash at 7m30s', await finish(w));
    // Each Workload was admitted once: none was evicted, none admitted again by the new process.
    assert.deepEqual(
      [...w.watch.admissions].filter(([, n]) => n !== 1),
      [],
      'admitted once each',
    );
    assert.equal(w.watch.admissions.size, w.store.listSync('Workload', { namespace: NS }).length);
    w.watch.close();
    w.checker.stop();
  });

  it('a crash right after an admission was written, before the job was started and its pods created, loses nothing', async () => {
    const w = await world();
    // The first admission write is the last write of the process: the rest of that cycle fails.
    const stop = w.store.watch('Workload', (e) => {
      if (e.type === 'MODIFIED' && !e.old?.status?.admission && e.object.status?.admission) w.process.crash();
    });
    assert.equal(await drive(w.process, w.clock, { untilMs: LIMIT }), DriveStop.Crashed);
    stop();
    assert.ok(admittedWaitingForPods(w.store), 'at the crash an admitted Job is still suspended');
    assert.equal(
      w.store
        .listSync('Pod', { namespace: NS })
        .filter((p) => !p.metadata.labels?.[KueueLabel.PodGroupName] && !p.metadata.annotations?.[GangAnnotation.Name]).length,
      0,
      'no job pod yet',
    );
    await restart(w);
    verify(w, 'crash after the first admission', await finish(w));
    w.watch.close();
    w.checker.stop();
  });

  it("crashes in the middle of ungating a Workload's pods (the TopologyUngater's topology gate, the pod group's admission gate) lose nothing", async () => {
    const w = await world();
    const crashes: string[] = [];
    // A gate lifted from the second (or a later) pod of a Workload, with more of its pods
    // still carrying that gate, is the last write of the process.
    const lifted = new Map<string, number>();
    const owner = (p: Pod) => p.metadata.annotations?.[KueueAnnotation.Workload] ?? p.metadata.labels?.[KueueLabel.PodGroupName] ?? '';
    const stop = w.store.watch('Pod', (e) => {
      if (e.type !== 'MODIFIED' || !e.old || crashes.length >= 4 || w.process.crashed) return;
      for (const gate of [KueueSchedulingGate.Topology, KueueSchedulingGate.Admission]) {
        if (!hasGate(e.old, gate) || hasGate(e.object, gate)) continue;
        const key = `${owner(e.object)} ${gate}`;
        const n = (lifted.get(key) ?? 0) + 1;
        lifted.set(key, n);
        const rest = w.store.listSync('Pod', { namespace: NS }).filter((p) => owner(p) === owner(e.object) && hasGate(p, gate));
        if (n >= 2 && rest.length > 0) {
          crashes.push(key);
          w.process.crash();
        }
      }
    });
    let r: DriveStop;
    for (;;) {
      r = await drive(w.process, w.clock, { untilMs: LIMIT, maxSteps: 200_000 });
      if (r !== DriveStop.Crashed) break;
      await restart(w);
    }
    stop();
    assert.equal(crashes.length, 4, `four crashes mid-ungating: ${crashes.join('; ')}`);
    assert.ok(
      crashes.some((c) => c.endsWith(KueueSchedulingGate.Topology)) && crashes.some((c) => c.endsWith(KueueSchedulingGate.Admission)),
      `both gates: ${crashes.join('; ')}`,
    );
    verify(w, 'crashes mid-ungating', r);
    w.watch.close();
    w.checker.stop();
  });

  it('a crash at every tenth step of the first minutes never double-admits and still finishes everything', async () => {
    const w = await world();
    let restarts = 0;
    while (restarts < 12) {
      const r = await drive(w.process, w.clock, { maxSteps: 10 });
      if (r === DriveStop.Idle) break;
      await restart(w);
      restarts++;
    }
    verify(w, `${restarts} restarts every 10 steps`, await finish(w));
    w.watch.close();
    w.checker.stop();
  });

  it('the admission watch itself flags a Workload re-admitted without being cleared, and quota admitted over nominal', () => {
    const clock = new VirtualClock(START);
    const store = new MemoryStore({ clock });
    const watch = new AdmissionWatch(store, clock);
    const admission = (cpu: string, node: string): Admission => ({
      clusterQueue: 'cq',
      podSetAssignments: [
        {
          name: 'main',
          count: 1,
          flavors: { cpu: FLAVOR },
          resourceUsage: { cpu },
          topologyAssignment: {
            levels: [HOSTNAME_LABEL],
            slices: [{ domainCount: 1, valuesPerLevel: [{ universal: node }], podCounts: { universal: 1 } }],
          },
        },
      ],
    });
    const wl = (name: string): Workload => ({
      apiVersion: 'kueue.x-k8s.io/v1beta2',
      kind: 'Workload',
      metadata: { name, namespace: NS },
      spec: { podSets: [{ name: 'main', count: 1, template: { spec: { containers: [] } } }] },
    });
    const setAdmission = (name: string, a: Admission | undefined) => {
      const x = structuredClone(store.getSync('Workload', NS, name)!);
      x.status = { ...x.status, admission: a };
      if (a === undefined) delete x.status.admission;
      store.updateStatusSync(x);
    };
    store.createSync(wl('a'));
    store.createSync(wl('b'));
    setAdmission('a', admission('40', 'n1'));
    setAdmission('a', undefined);
    setAdmission('a', admission('40', 'n2'));
    assert.deepEqual(watch.problems, [], 'cleared in between: admitted twice in a row, not at once');
    setAdmission('a', admission('40', 'n3'));
    setAdmission('b', admission('60', 'n4'));
    assert.equal(watch.problems.length, 2, watch.problems.join('\n'));
    assert.match(watch.problems[0]!, /Workload ns\/a admitted again without its admission being cleared/);
    assert.match(watch.problems[1]!, /ClusterQueue cq uses 100000 of tas\/cpu, over its nominal 96000/);
    assert.deepEqual(
      [...watch.admissions],
      [
        ['ns/a', 2],
        ['ns/b', 1],
      ],
    );
    watch.close();
  });

  // Three soak seeds by default; CRASH_SEEDS=<n> [CRASH_FIRST=<seed>] runs n others.
  const crashSeeds = process.env.CRASH_SEEDS
    ? Array.from({ length: Number(process.env.CRASH_SEEDS) }, (_, i) => Number(process.env.CRASH_FIRST ?? 1) + i * 7919)
    : [1000, 88109, 119785];
  for (const seed of crashSeeds) {
    it(`seed ${seed}: random crashes during a soak scenario: no invariant violation, no double admission, every Job and JobSet that fits is queued once and completes`, async () => {
      const scenario = generateScenario(seed);
      const parsed = parseSimulationObjects(scenario.objects);
      assert.deepEqual(parsed.errors, []);
      const { submissions } = planSubmissions(parsed.objects);
      const clock = new VirtualClock(START);
      const store = new MemoryStore({ clock });
      const checker = new InvariantChecker({ store, clock, startMs: START, fullEvery: 200 });
      await checker.start();
      const transitions: string[] = [];
      const stopWatch = store.watch('Workload', (e) => {
        const a = e.old?.status?.admission;
        const b = e.type === 'DELETED' ? undefined : e.object.status?.admission;
        if (a && b && JSON.stringify(a) !== JSON.stringify(b) && (e.old?.status?.unhealthyNodes ?? []).length === 0)
          transitions.push(`${objectKey(e.object)} at ${(clock.now() - START) / 1000}s`);
      });
      let current = await begin(store, clock, checker);
      const crashed: Process[] = [];
      const create = (o: KObject) => {
        const obj = structuredClone(o);
        if (obj.kind === 'SimulationEvent')
          obj.metadata.annotations = {
            ...obj.metadata.annotations,
            [TopoqueueAnnotation.SimulationStart]: new Date(START).toISOString().replace('.000Z', 'Z'),
          };
        const ns = obj.metadata.namespace;
        if (ns && !store.getSync('Namespace', undefined, ns)) store.createSync(namespace(ns));
        store.createSync(obj);
      };
      for (const sub of submissions) {
        if (sub.atMs === 0) create(sub.object);
        else clock.setTimer(sub.atMs, () => create(sub.object));
      }
      const rng = new Rng(seed);
      let r: DriveStop;
      for (;;) {
        r = await drive(current, clock, { untilMs: START + 2 * 24 * 60 * MIN, maxSteps: crashed.length < 15 ? rng.int(20, 300) : 500_000 });
        if (r !== DriveStop.Limit || crashed.length >= 15) break;
        current.crash();
        crashed.push(current);
        current = await begin(store, clock, checker);
      }
      stopWatch();
      checker.full();
      const at = `seed ${seed} with ${crashed.length} crashes (${scenario.summary})`;
      assert.deepEqual(checker.violations, [], `${at}: invariant violations`);
      assert.deepEqual(transitions, [], `${at}: admissions replaced without being cleared`);
      assert.deepEqual(current.manager.errors, [], `${at}: errors of the last process`);
      for (const p of crashed)
        assert.deepEqual(
          p.manager.errors.filter((e) => !e.message.startsWith('the controller process crashed')),
          [],
          `${at}: errors of a crashed process`,
        );
      const strictBlocked = new Set(
        scenario.units
          .filter((u) => cannotRun(scenario, u) !== undefined && scenario.queues.get(u.clusterQueue)!.strictFIFO)
          .map((u) => u.clusterQueue),
      );
      for (const u of scenario.units) {
        if ((u.kind !== 'Job' && u.kind !== 'JobSet') || cannotRun(scenario, u) !== undefined || strictBlocked.has(u.clusterQueue))
          continue;
        const job = store.getSync<KObject & { status?: { conditions?: { type: string; status: string }[] } }>(u.kind, u.namespace, u.name);
        const done = u.kind === 'Job' ? 'Complete' : 'Completed';
        assert.ok(
          job?.status?.conditions?.some((c) => c.type === done && c.status === 'True'),
          `${at}: ${u.kind} ${u.namespace}/${u.name} fits and completes: ${JSON.stringify(job?.status)}`,
        );
        // Queued, not run around the queue: one Workload, admitted and finished.
        const owned = store
          .listSync('Workload', { namespace: u.namespace })
          .filter((w) => w.metadata.ownerReferences?.some((o) => o.controller && o.kind === u.kind && o.name === u.name));
        assert.deepEqual(
          owned.map((w) => findCondition(w, 'Finished')?.reason),
          ['Succeeded'],
          `${at}: ${u.kind} ${u.namespace}/${u.name} has one Workload, finished`,
        );
      }
      // The run ends, unless a plain-Pod group or gang that lost pods (nothing recreates them)
      // keeps being re-admitted and timed out, as in the soak without crashes.
      const unfinished = store.listSync('Workload').filter((w) => findCondition(w, 'Finished')?.status !== 'True');
      const podOwned = (w: Workload) => (w.metadata.ownerReferences ?? []).every((o) => o.kind === 'Pod');
      if (r !== DriveStop.Idle)
        assert.ok(unfinished.some(podOwned), `${at}: the run ends (stopped: ${r}; unfinished: ${unfinished.map(objectKey).join(', ')})`);
      checker.stop();
    });
  }
});

/** Every object of every kind, by kind and key: what a store holds. */
function contents(store: MemoryStore): Map<string, KObject[]> {
  return new Map(
    [...store.counts().keys()].sort().map((k) => [k, store.listSync(k).sort((a, b) => (objectKey(a) < objectKey(b) ? -1 : 1))]),
  );
}

describe('restart of the controller manager on a durable store', () => {
  it('crashes at random steps, each followed by the store closed and read back from disk: the store comes back whole, resourceVersions keep growing, nothing is admitted twice, everything finishes', async () => {
    const dir = mkdtempSync(join(os.tmpdir(), 'topoqueue-restart-'));
    try {
      const clock = new VirtualClock(START);
      const w = await world({ clock, store: await openDurableStore(dir, { clock }) });
      const rng = new Rng(20261126);
      let reopens = 0;
      for (;;) {
        const r = await drive(w.process, w.clock, { maxSteps: rng.int(5, 120) });
        if (r === DriveStop.Idle || reopens >= 8) break;
        const before = contents(w.store);
        const rv = Number(w.store.resourceVersion);
        await restart(w, async () => {
          await (w.store as DurableStore).close();
          return openDurableStore(dir, { clock });
        });
        reopens++;
        assert.deepEqual(contents(w.store), before, `reopen ${reopens}: the store read back is the one closed`);
        assert.ok(Number(w.store.resourceVersion) >= rv, `reopen ${reopens}: resourceVersion ${w.store.resourceVersion} >= ${rv}`);
        if (reopens === 4)
          submit(w, [
            ...groupPods('group-2', 2, '2', '3m'),
            batchJob('mid', { parallelism: 2, completions: 2, template: template('2', '3m', { required: RACK }) }),
          ]);
      }
      assert.ok(reopens >= 4, `reopened ${reopens} times`);
      verify(w, `${reopens} reopens of the durable store`, await finish(w));
      assert.deepEqual(
        [...w.watch.admissions].filter(([, n]) => n !== 1),
        [],
        'admitted once each',
      );
      w.watch.close();
      w.checker.stop();
      await (w.store as DurableStore).close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
