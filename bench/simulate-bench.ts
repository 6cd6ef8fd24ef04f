// `simulate` figures (bench/main.ts, `simulate.*`): the peer's scheduler performance
// shapes end to end through the embedded cluster in virtual time, and the live 10,000-node
// shape.
//
//   1. peer baseline / tas: every Job submitted at its generator time, run to idle with every
//      controller and stand-in; CPU time of the whole run (process.cpuUsage), the simulated
//      makespan against the packing bound, mean time to admission per class, mean queue usage;
//   2. live: 10,000 nodes and 100,000 running pods (20 Jobs of 5,000), heap after a gc;
//   3. ungate: one admitted 5,000-pod Job on that cluster: CPU of the TopologyUngater's
//      reconciles that lift its gates;
//   4. burst: 20,000 nodes and 2,000 Jobs (82,820 pods) all submitted at t = 0, run to idle
//      (CPU and peak RSS), and the same Jobs spread over 24 h for comparison.

import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { TopoqueueAnnotation } from '../src/api/keys.ts';
import type { KObject } from '../src/api/objects.ts';
import { buildReport, type SimulationReport } from '../src/cluster/report.ts';
import { parseSimulationObjects, runSimulation, type SimulationRun } from '../src/cluster/simulation.ts';
import { applySimulateHeapFlags } from '../src/cli/simulate-heap.ts';
import { allControllers } from '../src/controllers/index.ts';
import { standIns } from '../src/cluster/index.ts';
import type { TopoqueueConfig } from '../src/controllers/config.ts';
import type { Reconciler } from '../src/runtime/manager.ts';
import { CLASS_NAMES, PEER_BASELINE, PEER_TAS, packingBoundSeconds, type PeerRunShape, workloadCount } from './admission-cycle.ts';
import { scaledShape } from './admission-digest.ts';
import { peakRssBytes } from './peak-rss.ts';
import { peerWorkloads } from './serve-bench.ts';
import {
  BURST_20K,
  type BurstSize,
  burstObjects,
  scaledBurst,
  gangJob,
  largeLiveObjects,
  peerSimulationObjects,
} from './simulate-shapes.ts';

/** What `simulate` runs with in these figures (documented in bench/README.md). */
export const BENCH_CONFIG: Partial<TopoqueueConfig> = {};

export interface PeerSimulationResult {
  cpuMs: number;
  wallMs: number;
  makespanS: number | null;
  boundS: number;
  workloads: number;
  finished: number;
  violations: number;
  errors: number;
  meanAdmissionS: Record<string, number>;
  meanUsagePct: number;
  steps: number;
  heapMB: number;
  /** sha256 of the report JSON without `run.steps`: two trees that print the same hash decided the same way. */
  reportSha256: string;
}

/** sha256 of a report without `run.steps` (the decisions, their times and the usage series). */
export function reportDigest(report: SimulationReport): string {
  const { steps: _steps, ...runNoSteps } = report.run;
  return createHash('sha256')
    .update(JSON.stringify({ ...report, run: runNoSteps }))
    .digest('hex');
}

function cpuMsSince(start: NodeJS.CpuUsage): number {
  const u = process.cpuUsage(start);
  return (u.user + u.system) / 1000;
}

async function simulate(
  objects: KObject[],
  opts: Parameters<typeof runSimulation>[1],
): Promise<{ run: SimulationRun; cpuMs: number; wallMs: number }> {
  const parsed = parseSimulationObjects(objects);
  if (parsed.errors.length > 0) throw new Error(`bench input refused: ${parsed.errors[0]!.message}`);
  const t0 = process.hrtime.bigint();
  const c0 = process.cpuUsage();
  const run = await runSimulation(parsed.objects, opts);
  return { run, cpuMs: cpuMsSince(c0), wallMs: Number(process.hrtime.bigint() - t0) / 1e6 };
}

function classOf(name: string): string {
  return CLASS_NAMES.find((c) => name.includes(`-${c}`)) ?? 'other';
}

/** Mean time from submission to admission per workload class (seconds), over the admitted. */
function meanAdmissionByClass(report: SimulationReport): Record<string, number> {
  const sums = new Map<string, { n: number; s: number }>();
  for (const w of report.workloads) {
    if (w.admittedAt === null || w.submittedAt === null) continue;
    const c = classOf(w.name);
    const e = sums.get(c) ?? { n: 0, s: 0 };
    e.n++;
    e.s += w.admittedAt - w.submittedAt;
    sums.set(c, e);
  }
  return Object.fromEntries([...sums].map(([c, e]) => [c, e.s / e.n]));
}

export async function runPeerSimulation(
  shape: PeerRunShape,
  config: Partial<TopoqueueConfig> = BENCH_CONFIG,
): Promise<PeerSimulationResult> {
  const objects = peerSimulationObjects(shape);
  const { run, cpuMs, wallMs } = await simulate(objects, { config });
  const report: SimulationReport = buildReport(run);
  const meanAdmissionS = meanAdmissionByClass(report);
  // Mean quota usage over the run, % of nominal, averaged over ClusterQueues (the peer's clusterQueueClassesMinUsage).
  const makespan = report.summary.makespan;
  let usageSum = 0;
  let usageN = 0;
  for (const q of report.queues) {
    const nominal = Object.values(q.nominal).reduce((a, b) => a + b, 0);
    if (nominal <= 0 || q.usage.length === 0 || !makespan) continue;
    // Time-weighted mean of the step function.
    let area = 0;
    for (let i = 0; i < q.usage.length; i++) {
      const u = q.usage[i]!;
      const end = i + 1 < q.usage.length ? q.usage[i + 1]!.at : makespan;
      const used = Object.values(u.usage).reduce((a, b) => a + b, 0);
      area += used * Math.max(0, Math.min(end, makespan) - u.at);
    }
    usageSum += (100 * area) / (nominal * makespan);
    usageN++;
  }
  const heapMB = process.memoryUsage().heapUsed / 1e6;
  return {
    cpuMs,
    wallMs,
    makespanS: makespan,
    boundS: packingBoundSeconds(shape),
    workloads: workloadCount(shape),
    finished: report.summary.byStatus.Finished ?? 0,
    violations: report.summary.violations,
    errors: report.summary.controllerErrors,
    meanAdmissionS,
    meanUsagePct: usageN > 0 ? usageSum / usageN : 0,
    steps: run.steps,
    heapMB,
    reportSha256: reportDigest(report),
  };
}

export interface LiveResult {
  heapMB: number;
  running: number;
  nodes: number;
  cpuMs: number;
  ungateCpuMs: number;
  ungatedPods: number;
}

/**
 * 10,000 nodes, 100,000 pods running; then a 5,000-pod Job admitted and its gates lifted,
 * with the ungater's reconciles timed on their own.
 */
export async function runLive(gc: () => void): Promise<LiveResult> {
  let ungateCpuMs = 0;
  const controllers: Reconciler<TopoqueueConfig>[] = [...allControllers(), ...standIns()].map((c) => {
    if (c.name !== 'topology-ungater') return c;
    return {
      name: c.name,
      setup: (ctx, q, r) => c.setup(ctx, q, r),
      reconcile: async (key: string) => {
        const c0 = process.cpuUsage();
        try {
          return await c.reconcile(key);
        } finally {
          if (key.includes('job-train-gang-')) ungateCpuMs += cpuMsSince(c0);
        }
      },
    };
  });
  const objects = [...largeLiveObjects(20, 5000)];
  const gang = gangJob('train-gang', 5000, 'all');
  gang.metadata.annotations = { 'topoqueue.io/submit-at': '10m' };
  objects.push(gang);
  const { run, cpuMs } = await simulate(objects, { untilMs: 15 * 60_000, controllers, config: BENCH_CONFIG, fullCheckEvery: 1_000_000 });
  const pods = (run.cluster.store as unknown as { listSync(kind: string): KObject[] }).listSync('Pod') as (KObject & {
    status?: { phase?: string };
    spec?: { schedulingGates?: unknown[] };
  })[];
  const running = pods.filter((p) => p.status?.phase === 'Running').length;
  const gangPods = pods.filter((p) => p.metadata.name.startsWith('train-gang-'));
  const ungatedPods = gangPods.filter((p) => (p.spec?.schedulingGates ?? []).length === 0).length;
  gc();
  gc();
  const heapMB = (process.memoryUsage().heapUsed + process.memoryUsage().arrayBuffers) / 1e6;
  const nodes = (run.cluster.store as unknown as { listSync(kind: string): KObject[] }).listSync('Node').length;
  // Keep the run alive until measured.
  if (run.steps < 0) console.log(run);
  return { heapMB, running, nodes, cpuMs, ungateCpuMs, ungatedPods };
}

// ---- bare Workloads (Kueue's own runner) ---------------------------------------------------
//
// `simulate.peer-baseline.15k.bare` / `simulate.peer-tas.15k.bare`: the same shapes as bare
// Workloads (no Job: the workload runner finishes each its run time after admission, as
// Kueue's performance runner does), each created at its generator time. Run in a child
// process (`npx tsx bench/simulate-bench.ts --bare baseline|tas [--scale s]`), so its peak
// RSS is the run's own; `--cpu-prof` on that command profiles it.

export interface BareSimulationResult extends PeerSimulationResult {
  /** Peak resident set of the child process (10⁶ bytes). */
  rssMB: number;
  /** The same before the run (after the two runs that measure bytesPerPending). */
  rssBeforeRunMB: number;
  preemptions: number;
  /** Heap per Workload: after every Workload is created and pending (none admitted), and after the run with all finished (bytes). */
  bytesPerPending: number;
  bytesPerFinished: number;
  /** The report's JSON text per Workload (bytes). */
  reportBytesPerWorkload: number;
}

/** The shape's cluster with its Workloads as bare Workloads, each submitted at its generator time. */
export function peerBareObjects(shape: PeerRunShape): KObject[] {
  const cluster = peerSimulationObjects(shape).filter((o) => o.kind !== 'Job');
  const wls = peerWorkloads(shape).map(({ at, wl }) => {
    wl.metadata.annotations = { ...wl.metadata.annotations, [TopoqueueAnnotation.SubmitAt]: `${at}ms` };
    return wl;
  });
  return [...cluster, ...wls];
}

function heapBytes(): number {
  globalThis.gc?.();
  globalThis.gc?.();
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
}

/** One bare run in this process (the child's side). */
export async function runBareInProcess(shape: PeerRunShape): Promise<BareSimulationResult> {
  const n = peerBareObjects(shape).filter((o) => o.kind === 'Workload').length;
  // Heap per pending Workload: the Workloads all created at 0 into a cluster that admits
  // nothing (no controllers), against the same cluster without them: the store's copy, the
  // timeline's entry and the invariant checker's view.
  const pending = async (withWorkloads: boolean) => {
    const os = peerBareObjects(shape)
      .filter((o) => withWorkloads || o.kind !== 'Workload')
      .map((o) => {
        if (o.metadata.annotations) delete o.metadata.annotations[TopoqueueAnnotation.SubmitAt];
        return o;
      });
    const parsed = parseSimulationObjects(os);
    const running = runSimulation(parsed.objects, { untilMs: 0, controllers: [], config: BENCH_CONFIG });
    // Only what the cluster keeps: the input and its parsed copies go (the run keeps an object until it is created).
    os.length = 0;
    parsed.objects.length = 0;
    const r = await running;
    const h = heapBytes();
    if (r.steps < 0) console.log(r);
    return h;
  };
  const h0 = await pending(false);
  const h1 = await pending(true);
  const bytesPerPending = (h1 - h0) / n;

  const base = heapBytes();
  const rssBeforeRun = peakRssBytes() / 1e6;
  const objects = peerBareObjects(shape);
  const parsed = parseSimulationObjects(objects);
  if (parsed.errors.length > 0) throw new Error(`bench input refused: ${parsed.errors[0]!.message}`);
  const t0 = process.hrtime.bigint();
  const c0 = process.cpuUsage();
  const running = runSimulation(parsed.objects, { config: BENCH_CONFIG });
  // The run holds each input object until it creates it; the bench holds no other copy.
  objects.length = 0;
  parsed.objects.length = 0;
  const run = await running;
  const cpuMs = cpuMsSince(c0);
  const wallMs = Number(process.hrtime.bigint() - t0) / 1e6;
  const after = heapBytes();
  const report = buildReport(run);
  const text = JSON.stringify(report);
  const reportSha256 = reportDigest(report);
  const makespan = report.summary.makespan;
  const result: BareSimulationResult = {
    cpuMs,
    wallMs,
    makespanS: makespan,
    boundS: packingBoundSeconds(shape),
    workloads: n,
    finished: report.summary.byStatus.Finished ?? 0,
    violations: report.summary.violations,
    errors: report.summary.controllerErrors,
    meanAdmissionS: meanAdmissionByClass(report),
    meanUsagePct: 0,
    steps: run.steps,
    heapMB: after / 1e6,
    rssMB: peakRssBytes() / 1e6,
    rssBeforeRunMB: rssBeforeRun,
    preemptions: report.summary.evictionsByReason.Preempted ?? 0,
    reportSha256,
    bytesPerPending,
    bytesPerFinished: (after - base) / n,
    reportBytesPerWorkload: Buffer.byteLength(text) / n,
  };
  if (run.steps < 0) console.log(run);
  return result;
}

/** One bare run in a child process (its own peak RSS); `nodeArgs` e.g. ['--cpu-prof']. */
export function runPeerSimulationBare(shapeName: 'baseline' | 'tas', scale = 1, nodeArgs: string[] = []): BareSimulationResult {
  const self = fileURLToPath(import.meta.url);
  const r = spawnSync(
    process.execPath,
    ['--expose-gc', ...nodeArgs, '--import', 'tsx', self, '--bare', shapeName, '--scale', String(scale), '--json'],
    { encoding: 'utf8', maxBuffer: 1 << 24, stdio: ['ignore', 'pipe', 'inherit'] },
  );
  if (r.status !== 0) throw new Error(`simulate bare ${shapeName}: child exited ${r.status ?? r.signal}`);
  return JSON.parse(r.stdout.trim().split('\n').pop()!) as BareSimulationResult;
}

/**
 * One burst run in a child process, as `topoqueue simulate` runs it (its heap setting, its
 * own peak RSS): in the benchmark process the peak included every earlier figure's memory.
 */
export function runBurstInChild(spreadMs: number): BurstResult {
  const self = fileURLToPath(import.meta.url);
  const r = spawnSync(process.execPath, ['--expose-gc', '--import', 'tsx', self, '--burst', '--spread-ms', String(spreadMs), '--json'], {
    encoding: 'utf8',
    maxBuffer: 1 << 24,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  if (r.status !== 0) throw new Error(`simulate burst: child exited ${r.status ?? r.signal}`);
  return JSON.parse(r.stdout.trim().split('\n').pop()!) as BurstResult;
}

/** What runBareFigures needs of bench/main.ts' Report. */
interface FigureSink {
  wants(name: string): boolean;
  add(name: string, value: number, detail?: string): void;
}

const kb = (b: number) => `${(b / 1024).toFixed(1)} KiB`;

/** `simulate.peer-{baseline,tas}.15k.bare` and their `.rss`: one child process each. */
export function runBareFigures(report: FigureSink): void {
  for (const shape of ['baseline', 'tas'] as const) {
    const cpu = `simulate.peer-${shape}.15k.bare`;
    const rss = `${cpu}.rss`;
    if (!report.wants(cpu) && !report.wants(rss)) continue;
    console.error(`simulate: Kueue's ${shape} shape as 15,000 bare Workloads (Kueue's own runner), in a child process ...`);
    const r = runPeerSimulationBare(shape);
    const classes = Object.entries(r.meanAdmissionS)
      .map(([c, s]) => `${c} ${s.toFixed(2)} s`)
      .join(', ');
    const makespan =
      r.makespanS !== null
        ? `makespan ${r.makespanS.toFixed(1)} s (${(r.makespanS / r.boundS).toFixed(2)}x the packing bound)`
        : 'no makespan';
    report.add(
      cpu,
      r.cpuMs,
      `CPU of the run (wall ${(r.wallMs / 1000).toFixed(1)} s); ${r.finished.toLocaleString('en-US')}/${r.workloads.toLocaleString('en-US')} finished, ` +
        `${r.preemptions.toLocaleString('en-US')} preemptions, ${r.steps.toLocaleString('en-US')} reconciles, ${r.violations} violations, ${r.errors} controller errors; ` +
        `${makespan}; mean time to admission ${classes}; report sha256 ${r.reportSha256.slice(0, 16)}`,
    );
    report.add(
      rss,
      r.rssMB,
      `peak RSS of the child; heap after the run ${r.heapMB.toFixed(0)} MB; per Workload: ${kb(r.bytesPerPending)} pending in the store, ` +
        `${kb(r.bytesPerFinished)} finished (whole cluster: store, caches, timeline), ${kb(r.reportBytesPerWorkload)} of report JSON`,
    );
  }
}

export interface BurstResult {
  cpuMs: number;
  wallMs: number;
  /** Highest resident set size of the process (its VmHWM, and sampled at every progress callback), 10^6 bytes. */
  peakRssMB: number;
  jobs: number;
  pods: number;
  finished: number;
  violations: number;
  steps: number;
  makespanS: number | null;
  /** Store writes (create, update, status, delete) per Job. */
  writesPerJob: number;
  reportSha256: string;
}

/** The burst shape (simulate-shapes.ts) run to idle with every controller and stand-in. */
export async function runBurst(size: BurstSize, config: Partial<TopoqueueConfig> = BENCH_CONFIG): Promise<BurstResult> {
  const objects = burstObjects(size);
  let peak = process.memoryUsage().rss;
  const onProgress = () => {
    peak = Math.max(peak, process.memoryUsage().rss);
  };
  const { run, cpuMs, wallMs } = await simulate(objects, { config, onProgress, progressEverySteps: 5000 });
  peak = Math.max(peak, process.memoryUsage().rss, peakRssBytes());
  const report = buildReport(run);
  const w = (run.cluster.store as unknown as { writes: Record<string, number> }).writes;
  const writes = Object.values(w).reduce((a, b) => a + b, 0);
  return {
    cpuMs,
    wallMs,
    peakRssMB: peak / 1e6,
    jobs: size.jobs,
    pods: size.pods,
    finished: report.summary.byStatus.Finished ?? 0,
    violations: report.summary.violations,
    steps: run.steps,
    makespanS: report.summary.makespan,
    writesPerJob: writes / size.jobs,
    reportSha256: reportDigest(report),
  };
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  // One run in this process, for profiling (`node --cpu-prof --import tsx bench/simulate-bench.ts ...`):
  //   --bare baseline|tas [--scale s]   the peer shape as bare Workloads (the default)
  //   --jobs baseline|tas [--scale s]   the peer shape as batch Jobs, every controller and stand-in
  //   --burst [--scale s] [--spread-ms n]  the burst shape (20,000 nodes, 2,000 Jobs at scale 1)
  const { values } = parseArgs({
    options: {
      bare: { type: 'string' },
      jobs: { type: 'string' },
      burst: { type: 'boolean' },
      scale: { type: 'string', default: '1' },
      'spread-ms': { type: 'string', default: '0' },
      json: { type: 'boolean' },
    },
    strict: true,
  });
  const scale = Number(values.scale);
  if (!(scale > 0)) throw new Error(`--scale must be a positive number, got ${values.scale}`);
  // One run, as `topoqueue simulate` runs it: with its heap setting (cli/simulate-heap.ts).
  applySimulateHeapFlags();
  const pick = (name: string | undefined, flag: string): PeerRunShape => {
    const shape = name === 'tas' ? PEER_TAS : name === 'baseline' ? PEER_BASELINE : undefined;
    if (!shape) throw new Error(`${flag} must be baseline or tas, got ${name}`);
    return scale === 1 ? shape : scaledShape(shape, scale);
  };
  let r: unknown;
  if (values.burst)
    r = await runBurst(
      scale === 1 ? { ...BURST_20K, spreadMs: Number(values['spread-ms']) } : scaledBurst(scale, Number(values['spread-ms'])),
    );
  else if (values.jobs !== undefined) r = await runPeerSimulation(pick(values.jobs, '--jobs'));
  else r = await runBareInProcess(pick(values.bare ?? 'baseline', '--bare'));
  if (values.json) console.log(JSON.stringify(r));
  else console.log(r);
}
