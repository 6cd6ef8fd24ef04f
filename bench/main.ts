// The benchmark of the topology snapshot and placement engine: `npm run bench`.
//
//   npm run bench [-- --json FILE] [-- --only PATTERN]
//   npm run bench -- --digest [--scale 0.1]   (decision digests of the admission runs, bench/admission-digest.ts)
//
// Prints one line per figure (name, value, unit, goal, met) with goals read from
// bench/goals.json. A missed goal never fails the run: the exit code is 0 unless the
// benchmark crashes (1) or a placement it relies on (or the HyperNode tree) fails or comes
// out wrong (2).
//
// Phases: 0. start of the compiled CLI (`--help`, bench/cli-start.ts); 1. peer shape (640 nodes): placements; 2. large shape (100,000 hosts): build and
// retained heap, placements, update events; 3. hypernodes shape (11,008 HyperNodes over
// 100,000 hosts): tree build, snapshot build, Volcano hard/soft placements; 4. v1beta2
// encoding of a 40,000-host assignment; 5. admission preemption on 2,000 nodes with 700
// victims (bench/admission-preemption.ts); 6. the admission cycle: Kueue's baseline and tas
// scheduler tests (15,000 Workloads each) replayed in virtual time, and one cycle over
// 1,000 and 5,000 ClusterQueues with 50,000 and 250,000 pending (bench/admission-cycle.ts);
// 6b. the scale shape: 65,000 nodes, 650,000 pods, 5,000 ClusterQueues (bench/scale-bench.ts); 7. a restart on a
// durable store of 100,000 objects (bench/restart-bench.ts). The heap figure needs
// `global.gc`; without `--expose-gc` the script runs itself again with it.

import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { Bench } from 'tinybench';
import { CLI_START, measureCliStart } from './cli-start.ts';
import { fillDataDir, RESTART_NODES, RESTART_OBJECTS, RESTART_RUNS, restartOnce } from './restart-bench.ts';
import { runApiThroughput, runServeBaseline } from './serve-bench.ts';
import { measurePaint } from './dashboard-paint.ts';
import { launchBrowser, NO_BROWSER } from '../src/testing/browser.ts';
import { runControllerBench } from './controller-bench.ts';
import { INPUT_FIGURES, runInput } from './input-bench.ts';
import { runBareFigures, runBurstInChild, runLive, runPeerSimulation } from './simulate-bench.ts';
import {
  checkPeerRun,
  CYCLE,
  CYCLE_5000,
  cycleOnce,
  cycleShape,
  describePeerRun,
  PEER_BASELINE,
  PEER_TAS,
  runPeerShape,
  workloadCount,
} from './admission-cycle.ts';
import { printDigests } from './admission-digest.ts';
import { checkPreemption, PREEMPTION, PREEMPTION_20K, preemptionShape, preemptOnce, unconstrainedVariant } from './admission-preemption.ts';
import { checkScaleRun, runScaleBench } from './scale-bench.ts';
import { SCALE_65K, scaleNodeCount, scaleTasClusterQueues } from './scale-shapes.ts';
import type { PreemptionTarget } from '../src/admission/preemption.ts';
import { decodeV1beta2, encodedSize, encodeV1beta2 } from '../src/placement/assignment-codec.ts';
import { PlacementEngine, type PlacementResult } from '../src/placement/engine.ts';
import type { PlacementRequest } from '../src/placement/request.ts';
import { tierLevelKey } from '../src/topology/hypernode-tree.ts';
import type { TopologySnapshot } from '../src/topology/snapshot.ts';
import type { NodeInfo } from '../src/topology/source.ts';
import { settledGc } from './gc-settle.ts';
import {
  buildHyperNodeSnapshotTimed,
  buildTreeTimed,
  checkTree,
  HYPERNODE,
  HYPERNODE_JOB_TIER,
  hyperNodeHostCount,
  hyperNodeInfos,
  hyperNodeRequest,
  hyperNodeShape,
} from './hypernode-shapes.ts';
import {
  BLOCK,
  buildSnapshot,
  buildSnapshotTimed,
  checkPlacement,
  GPU,
  gkeHostnames,
  LARGE,
  LARGE_WORKLOAD_PODS,
  largeHostCount,
  largeShape,
  largeWorkloads,
  PEER,
  PEER_BLOCK,
  peerShape,
  peerWorkloads,
  type Shape,
  singlePodAssignment,
  usageDomains,
  WHOLE_HOST,
} from './shapes.ts';

/** Every figure the benchmark prints, in order. Names are stable: tooling keys on them. */
export const FIGURES = [
  { name: 'cli.start', unit: 'ms' },
  { name: 'peer.place.required-rack', unit: 'ms' },
  { name: 'peer.place.preferred-block', unit: 'ms' },
  { name: 'large.snapshot.build', unit: 'ms' },
  { name: 'large.snapshot.pods', unit: 'ms' },
  { name: 'large.snapshot.heap', unit: 'MB' },
  { name: 'large.place.required-block', unit: 'ms' },
  { name: 'large.place.preferred-rack', unit: 'ms' },
  { name: 'large.place.after-node-update', unit: 'ms' },
  { name: 'large.update.pod', unit: 'µs' },
  { name: 'large.update.node', unit: 'µs' },
  { name: 'large.update.workload', unit: 'µs' },
  { name: 'hypernode.tree.build', unit: 'ms' },
  { name: 'hypernode.snapshot.build', unit: 'ms' },
  { name: 'hypernode.place.hard-tier3', unit: 'ms' },
  { name: 'hypernode.place.soft', unit: 'ms' },
  { name: 'encode.v1beta2.40k', unit: 'ms' },
  { name: 'encode.v1beta2.40k.bytes', unit: 'bytes' },
  { name: 'admission.preempt.2000-nodes-700-victims', unit: 'ms' },
  { name: 'admission.preempt.20000-nodes-7000-victims', unit: 'ms' },
  { name: 'admission.peer-baseline.15k', unit: 'ms' },
  { name: 'admission.peer-tas.15k', unit: 'ms' },
  { name: 'admission.cycle.1000cq-50k', unit: 'ms' },
  { name: 'admission.cycle.5000cq-250k', unit: 'ms' },
  { name: 'scale.65k.snapshot.build', unit: 'ms' },
  { name: 'scale.65k.cycle', unit: 'ms' },
  { name: 'scale.65k.heap', unit: 'MB' },
  { name: 'simulate.peer-baseline.15k', unit: 'ms' },
  { name: 'simulate.peer-baseline.15k.makespan', unit: 'x' },
  { name: 'simulate.peer-tas.15k', unit: 'ms' },
  { name: 'simulate.peer-tas.15k.makespan', unit: 'x' },
  { name: 'simulate.peer-baseline.15k.bare', unit: 'ms' },
  { name: 'simulate.peer-baseline.15k.bare.rss', unit: 'MB' },
  { name: 'simulate.peer-tas.15k.bare', unit: 'ms' },
  { name: 'simulate.peer-tas.15k.bare.rss', unit: 'MB' },
  { name: 'simulate.live.10k-nodes-100k-pods.heap', unit: 'MB' },
  { name: 'simulate.ungate.5000-pod-gang', unit: 'ms' },
  { name: 'simulate.all-at-once.20k-nodes-2k-jobs', unit: 'ms' },
  { name: 'simulate.all-at-once.20k-nodes-2k-jobs.rss', unit: 'MB' },
  { name: 'simulate.spread-24h.20k-nodes-2k-jobs', unit: 'ms' },
  { name: 'serve.peer-baseline.15k', unit: 's' },
  { name: 'serve.peer-baseline.15k.cpu-per-admission', unit: 'ms' },
  { name: 'serve.peer-tas.15k', unit: 's' },
  { name: 'serve.peer-tas.15k.cpu-per-admission', unit: 'ms' },
  { name: 'serve.api.create-pods.10k', unit: '/s', higher: true },
  { name: 'serve.api.watch-events.10k', unit: '/s', higher: true },
  { name: 'serve.api.get.p99', unit: 'ms' },
  { name: 'web.paint.topology.1k', unit: 'ms' },
  { name: 'web.paint.topology.10k', unit: 'ms' },
  { name: 'web.update.visible', unit: 'ms' },
  { name: 'serve.restart.100k', unit: 'ms' },
  { name: 'controller.peer-tas.15k', unit: 's' },
  { name: 'controller.peer-tas.15k.cpu-per-admission', unit: 'ms' },
  ...INPUT_FIGURES,
] as const;

/** Is a larger value better for this figure (throughputs)? */
const higherIsBetter = (name: string): boolean => FIGURES.some((f) => f.name === name && 'higher' in f && f.higher);
type FigureName = (typeof FIGURES)[number]['name'];

export interface Goal {
  name: string;
  goal: number;
  unit: string;
  shape: string;
  note: string;
}

export const GOALS_FILE = fileURLToPath(new URL('./goals.json', import.meta.url));

export function loadGoals(file = GOALS_FILE): Map<string, Goal> {
  const goals = JSON.parse(readFileSync(file, 'utf8')) as Goal[];
  return new Map(goals.map((g) => [g.name, g]));
}

interface Figure {
  name: FigureName;
  value: number;
  unit: string;
  goal: number;
  detail: string;
}

/** Builds of the large snapshot; the median is reported. */
const BUILDS = 3;

/** A tree build slower than this is measured once (it is far over its goal anyway). */
const SLOW_TREE_BUILD_MS = 2000;

/** Pods of the soft figure's job: more than any block's ~6,250 free hosts. */
const SOFT_JOB_PODS = 10_000;

/** How many distinct nodes and pod keys the update figures cycle through. */
const ROTATION = 1024;

/** A placement the benchmark needs did not succeed (or succeeded wrongly). */
class PlacementFailed extends Error {}

interface Timing {
  median: number;
  p95: number;
  n: number;
}

/** Repeated timing through tinybench; results in milliseconds. */
function measure(fn: () => void, opts: { time: number; iterations: number }): Timing {
  const bench = new Bench({
    time: opts.time,
    iterations: opts.iterations,
    warmupTime: Math.min(200, opts.time / 4),
    warmupIterations: 3,
    throws: true,
  });
  bench.add('task', fn);
  bench.runSync();
  const lat = bench.tasks[0]!.result!.latency;
  return { median: lat.p50!, p95: quantile(lat.samples, 0.95), n: lat.samples.length };
}

/** Linear-interpolated quantile of ascending samples (tinybench's own rule). */
function quantile(sorted: readonly number[], q: number): number {
  const i = (sorted.length - 1) * q;
  const lo = Math.floor(i);
  return lo + 1 < sorted.length ? sorted[lo]! + (i - lo) * (sorted[lo + 1]! - sorted[lo]!) : sorted[lo]!;
}

function retainedBytes(): number {
  globalThis.gc!();
  globalThis.gc!();
  const m = process.memoryUsage();
  // Typed-array backing stores live outside the JS heap; the snapshot's capacity arrays do.
  return m.heapUsed + m.arrayBuffers;
}

function fmt(v: number): string {
  const a = Math.abs(v);
  const digits = a >= 1000 ? 0 : a >= 100 ? 1 : a >= 1 ? 2 : 3;
  return v.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

class Report {
  readonly figures: Figure[] = [];
  constructor(
    private readonly goals: Map<string, Goal>,
    private readonly only: RegExp | undefined,
    /** Print each figure as it comes (the scale child only collects them for its parent). */
    private readonly print = true,
  ) {}

  wants(name: FigureName): boolean {
    return !this.only || this.only.test(name);
  }
  wantsAny(prefix: string): boolean {
    return FIGURES.some((f) => f.name.startsWith(prefix) && this.wants(f.name));
  }

  header(): void {
    console.log(`${'figure'.padEnd(32)} ${'value'.padStart(12)} ${'unit'.padEnd(5)} ${'goal'.padStart(14)}  met  detail`);
  }

  add(name: FigureName, value: number, detail = ''): void {
    if (!this.wants(name)) return;
    const declared = FIGURES.find((f) => f.name === name)!;
    const goal = this.goals.get(name);
    if (!goal) throw new Error(`bench/goals.json has no goal for ${name}`);
    if (goal.unit !== declared.unit)
      throw new Error(`bench/goals.json: ${name} has unit ${goal.unit}, the benchmark measures ${declared.unit}`);
    this.figures.push({ name, value, unit: declared.unit, goal: goal.goal, detail });
    const higher = higherIsBetter(name);
    const met = (higher ? value >= goal.goal : value <= goal.goal) ? 'yes' : 'NO ';
    if (this.print)
      console.log(
        `${name.padEnd(32)} ${fmt(value).padStart(12)} ${declared.unit.padEnd(5)} ${`${higher ? '>=' : '<='} ${fmt(goal.goal)}`.padStart(14)}  ${met}  ${detail}`,
      );
  }

  addTiming(name: FigureName, t: Timing, scale: number, extra = ''): void {
    const unit = FIGURES.find((f) => f.name === name)!.unit;
    this.add(name, t.median * scale, `median; p95 ${fmt(t.p95 * scale)} ${unit}, n=${t.n}${extra}`);
  }
}

function placeChecked(engine: PlacementEngine, req: PlacementRequest, withinLevel: string | undefined): PlacementResult & { ok: true } {
  const r = engine.place(req);
  const problem = checkPlacement(engine.snapshot, req, r, withinLevel);
  if (problem) throw new PlacementFailed(`${engine.snapshot.name}: ${problem}`);
  return r as PlacementResult & { ok: true };
}

function placeTimed(engine: PlacementEngine, req: PlacementRequest): () => void {
  return () => {
    const r = engine.place(req);
    if (!r.ok) throw new PlacementFailed(`${engine.snapshot.name}: placement failed while timing: ${r.reason}`);
  };
}

function timeFirst(fn: () => void): number {
  const t0 = process.hrtime.bigint();
  fn();
  return Number(process.hrtime.bigint() - t0) / 1e6;
}

// ---- phases ---------------------------------------------------------------------------

function runCliStart(report: Report): void {
  if (!report.wants('cli.start')) return;
  const r = measureCliStart((s) => console.error(s));
  const sorted = [...r.runs].sort((a, b) => a - b);
  report.add(
    'cli.start',
    median(r.runs),
    `wall, median of ${r.runs.length} after ${CLI_START.warmup} warm-up; p95 ${fmt(quantile(sorted, 0.95))} ms; node -e 0 alone ${fmt(median(r.nodeRuns))} ms${r.rebuilt ? '; dist/ rebuilt first' : ''}`,
  );
}

function runPeer(report: Report): void {
  if (!report.wantsAny('peer.')) return;
  const shape = peerShape(PEER);
  const snap = buildSnapshot(shape);
  const engine = new PlacementEngine(snap);
  const w = peerWorkloads();
  console.error(
    `peer: ${shape.nodes.length} nodes (${PEER.blocks} block x ${PEER.racksPerBlock} racks x ${PEER.nodesPerRack} nodes, 96 CPU / 256Gi)`,
  );
  const cases: [FigureName, PlacementRequest, string][] = [
    ['peer.place.required-rack', w.requiredRack, w.requiredRack.level!],
    ['peer.place.preferred-block', w.preferredBlock, PEER_BLOCK],
  ];
  for (const [name, req, within] of cases) {
    if (!report.wants(name)) continue;
    const first = timeFirst(() => placeChecked(engine, req, within));
    report.addTiming(name, measure(placeTimed(engine, req), { time: 500, iterations: 200 }), 1, `; first call ${fmt(first)} ms`);
  }
}

function runLarge(report: Report): void {
  if (!report.wantsAny('large.')) return;
  const hosts = largeHostCount(LARGE);
  console.error(
    `large: generating ${hosts.toLocaleString('en-US')} Nodes (${LARGE.zones} zones x ${LARGE.blocksPerZone} blocks x ${LARGE.racksPerBlock} racks x ${LARGE.hostsPerRack} hosts, seed ${LARGE.seed}) ...`,
  );

  // 1. Build from parsed Nodes; the retained heap is measured after the Nodes are dropped,
  //    so it counts what the snapshot keeps of them (labels, taints) and nothing else.
  const before = retainedBytes();
  let shape: Shape | undefined = largeShape(LARGE);
  const podCount = shape.pods.length;
  // Update events rotate over many nodes and keys: hammering one Map key with delete+set
  // makes V8 walk every deleted entry in its bucket until the next rehash (tens of µs at
  // 50,000 entries), which no real event stream does.
  const usedHosts = shape.pods.slice(0, ROTATION).map((p) => p.nodeName);
  const busy = new Set(shape.pods.map((p) => p.nodeName));
  const freeHosts = shape.nodes
    .filter((n) => !busy.has(n.metadata.name))
    .slice(0, ROTATION)
    .map((n) => n.metadata.name);
  busy.clear();
  // Built BUILDS times from the same Node objects (each build strips them afresh), a gc
  // before each; the median is the figure. Only the last snapshot is kept.
  let snap: TopologySnapshot | undefined;
  const buildRuns: number[] = [];
  const podRuns: number[] = [];
  for (let i = 0; i < BUILDS; i++) {
    snap = undefined;
    settledGc();
    const r = buildSnapshotTimed(shape!);
    snap = r.snapshot;
    buildRuns.push(r.nodesMs);
    podRuns.push(r.podsMs);
  }
  shape = undefined;
  const heapMB = (retainedBytes() - before) / 1e6;
  const s = snap!;
  const buildMs = [...buildRuns].sort((a, b) => a - b)[Math.floor(BUILDS / 2)]!;
  report.add(
    'large.snapshot.build',
    buildMs,
    `median of ${buildRuns.map((r) => fmt(r)).join(', ')} ms; ${hosts.toLocaleString('en-US')} parsed Nodes stripped and added + first leaves(); ${s.domainCount.toLocaleString('en-US')} domains`,
  );
  const podsMs = [...podRuns].sort((a, b) => a - b)[Math.floor(BUILDS / 2)]!;
  report.add(
    'large.snapshot.pods',
    podsMs,
    `median of ${podRuns.map((r) => fmt(r)).join(', ')} ms; ${podCount.toLocaleString('en-US')} bound pods recorded (${fmt((podsMs * 1000) / podCount)} µs each)`,
  );
  report.add('large.snapshot.heap', heapMB, 'heapUsed + arrayBuffers after gc, Nodes dropped');

  // 2. Placements: checked once, then timed (the engine caches eligibility per version).
  const engine = new PlacementEngine(s);
  const w = largeWorkloads(LARGE_WORKLOAD_PODS);
  let requiredResult: (PlacementResult & { ok: true }) | undefined;
  const cases: [FigureName, PlacementRequest][] = [
    ['large.place.required-block', w.requiredBlock],
    ['large.place.preferred-rack', w.preferredRack],
  ];
  for (const [name, req] of cases) {
    const first = timeFirst(() => {
      const r = placeChecked(engine, req, BLOCK);
      if (req === w.requiredBlock) requiredResult = r;
    });
    if (!report.wants(name)) continue;
    report.addTiming(name, measure(placeTimed(engine, req), { time: 2000, iterations: 30 }), 1, `; first call ${fmt(first)} ms`);
  }

  // 3. A node status update (re-sent as stored: same labels, same allocatable) marks the
  //    structure dirty: the next placement rebuilds the level lists and the eligibility
  //    of every leaf.
  const nodeInfos: NodeInfo[] = usedHosts.map((h) => s.node(s.nodeIndex(h)!));
  let next = 0;
  if (report.wants('large.place.after-node-update')) {
    const place = placeTimed(engine, w.requiredBlock);
    const t = measure(
      () => {
        s.upsertNode(nodeInfos[next++ % ROTATION]!);
        place();
      },
      { time: 2000, iterations: 20 },
    );
    report.addTiming('large.place.after-node-update', t, 1, '; upsertNode + required-block place');
  }

  // 4. Update events, each a do/undo pair so the snapshot stays as built.
  if (report.wants('large.update.pod')) {
    const requests = { [GPU]: 1, cpu: 16_000, memory: 128 * 1024 ** 3 };
    const keys = freeHosts.map((h) => `bench/probe-on-${h}`);
    const t = measure(
      () => {
        const i = next++ % ROTATION;
        s.addPod(keys[i]!, freeHosts[i]!, requests);
        s.removePod(keys[i]!);
      },
      { time: 500, iterations: 1000 },
    );
    report.addTiming('large.update.pod', t, 1000, `; addPod + removePod, ${ROTATION} free hosts in turn`);
  }
  if (report.wants('large.update.node')) {
    const t = measure(() => s.upsertNode(nodeInfos[next++ % ROTATION]!), { time: 500, iterations: 1000 });
    report.addTiming('large.update.node', t, 1000, `; upsertNode, same labels, ${ROTATION} nodes with a bound pod in turn`);
  }
  if (report.wants('large.update.workload')) {
    const domains = usageDomains(requiredResult!.workers);
    const t = measure(
      () => {
        s.addWorkloadUsage('bench/workload', domains, WHOLE_HOST);
        s.removeWorkloadUsage('bench/workload');
      },
      { time: 1000, iterations: 100 },
    );
    report.addTiming('large.update.workload', t, 1000, `; add+remove, ${domains.length.toLocaleString('en-US')} domains`);
  }
}

function median(xs: readonly number[]): number {
  return [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
}

function runHyperNode(report: Report): void {
  if (!['hypernode.tree', 'hypernode.snapshot', 'hypernode.place'].some((p) => report.wantsAny(p))) return; // not hypernode.100k-members (input-bench.ts)
  const hosts = hyperNodeHostCount(HYPERNODE);
  const shape = hyperNodeShape(HYPERNODE);
  const infos = hyperNodeInfos(shape);
  const m = shape.leafMembers;
  console.error(
    `hypernode: ${hosts.toLocaleString('en-US')} hosts, ${shape.hyperNodes.length.toLocaleString('en-US')} HyperNodes (${HYPERNODE.blocks} blocks x ${HYPERNODE.spinesPerBlock} spines x ${HYPERNODE.racksPerSpine} leaves x ${HYPERNODE.hostsPerRack} hosts; ` +
      `leaves by exactMatch ${m.exact}, regexMatch ${m.regex}, labelMatch ${m.label}; seed ${HYPERNODE.seed}) ...`,
  );

  // 1. The tree from parsed HyperNodes and NodeInfos, after a gc; repeated (median of
  //    BUILDS) only when one build is quick.
  const treeRuns: number[] = [];
  let built: ReturnType<typeof buildTreeTimed> | undefined;
  do {
    built = undefined;
    settledGc();
    built = buildTreeTimed(shape, infos);
    treeRuns.push(built.ms);
  } while (treeRuns.length < BUILDS && treeRuns[0]! < SLOW_TREE_BUILD_MS);
  const tree = built.tree;
  const wrong = checkTree(shape, tree);
  if (wrong) throw new PlacementFailed(`hypernodes: ${wrong}`);
  report.add(
    'hypernode.tree.build',
    median(treeRuns),
    `${treeRuns.length === 1 ? 'one build' : `median of ${treeRuns.map((r) => fmt(r)).join(', ')} ms`}; ${shape.hyperNodes.length.toLocaleString('en-US')} HyperNodes (${m.regex} regexMatch, ${m.label} labelMatch leaves) over ${hosts.toLocaleString('en-US')} NodeInfos`,
  );

  // 2. The snapshot over the tree, from the NodeInfos (the tree is shared, as in the
  //    scheduler); then the bound pods, untimed.
  const snapRuns: number[] = [];
  let snap: TopologySnapshot | undefined;
  for (let i = 0; i < BUILDS; i++) {
    snap = undefined;
    settledGc();
    const r = buildHyperNodeSnapshotTimed(shape, tree, infos);
    snap = r.snapshot;
    snapRuns.push(r.nodesMs);
  }
  const s = snap!;
  report.add(
    'hypernode.snapshot.build',
    median(snapRuns),
    `median of ${snapRuns.map((r) => fmt(r)).join(', ')} ms; ${hosts.toLocaleString('en-US')} NodeInfos added + first leaves(); ${s.domainCount.toLocaleString('en-US')} domains`,
  );

  // 3. Volcano networkTopology placements of whole-host jobs: checked once, then timed.
  const engine = new PlacementEngine(s);
  const cases: [FigureName, PlacementRequest, string | undefined, string][] = [
    [
      'hypernode.place.hard-tier3',
      hyperNodeRequest(s, tree, LARGE_WORKLOAD_PODS, { mode: 'hard', highestTier: HYPERNODE_JOB_TIER }),
      tierLevelKey(HYPERNODE_JOB_TIER),
      `; ${LARGE_WORKLOAD_PODS.toLocaleString('en-US')} pods, hard, highestTier ${HYPERNODE_JOB_TIER}`,
    ],
    [
      'hypernode.place.soft',
      hyperNodeRequest(s, tree, SOFT_JOB_PODS, { mode: 'soft' }),
      undefined,
      `; ${SOFT_JOB_PODS.toLocaleString('en-US')} pods, soft: no block holds them, split at the root`,
    ],
  ];
  for (const [name, req, within, what] of cases) {
    if (!report.wants(name)) continue;
    const first = timeFirst(() => placeChecked(engine, req, within));
    report.addTiming(name, measure(placeTimed(engine, req), { time: 2000, iterations: 30 }), 1, `${what}; first call ${fmt(first)} ms`);
  }
}

function runEncode(report: Report): void {
  if (!report.wantsAny('encode.')) return;
  const hostnames = gkeHostnames(40_000, 40, 7);
  const a = singlePodAssignment(hostnames);
  const encoded = encodeV1beta2(a);
  const back = decodeV1beta2(encoded);
  if (back.domains.length !== a.domains.length || back.domains.some((d, i) => d.values[0] !== hostnames[i] || d.count !== 1)) {
    throw new Error('encode.v1beta2.40k: the encoding does not decode back to the assignment');
  }
  const bytes = encodedSize(encoded);
  if (report.wants('encode.v1beta2.40k')) {
    report.addTiming(
      'encode.v1beta2.40k',
      measure(() => encodeV1beta2(a), { time: 1000, iterations: 20 }),
      1,
      `; ${encoded.slices.length} slices`,
    );
  }
  report.add('encode.v1beta2.40k.bytes', bytes, `JSON bytes; ${(bytes / hostnames.length).toFixed(1)} per host; 1,000 GKE pools x 40`);
}

function runPreemption(report: Report): void {
  const shapes: [FigureName, typeof PREEMPTION, number][] = [
    ['admission.preempt.2000-nodes-700-victims', PREEMPTION, 20],
    ['admission.preempt.20000-nodes-7000-victims', PREEMPTION_20K, 10],
  ];
  for (const [name, size, iterations] of shapes) {
    if (!report.wants(name)) continue;
    const b = preemptionShape(size);
    console.error(
      `preemption: ${b.nodes.toLocaleString('en-US')} nodes (${size.blocks} blocks x ${size.racksPerBlock} racks x ${size.nodesPerRack}), ${b.victims} victims, seed ${size.seed}`,
    );
    let result: PreemptionTarget[] = [];
    const before = b.calls();
    const first = timeFirst(() => (result = preemptOnce(b)));
    const calls = b.calls() - before;
    const wrong = checkPreemption(b, result);
    if (wrong) throw new PlacementFailed(`preemption: ${wrong}`);
    const t = measure(() => preemptOnce(b), { time: 2000, iterations });
    // The same search without a level: the global order, binary search and fill-back.
    const g = unconstrainedVariant(b);
    const gTargets = preemptOnce(g).length;
    const gt = measure(() => preemptOnce(g), { time: 2000, iterations: Math.max(3, iterations / 2) });
    report.addTiming(
      name,
      t,
      1,
      `; required rack: ${result.length} targets, ${calls} fits() calls; first call ${fmt(first)} ms; no level (${g.request.info.podSets[0]!.count} pods): ${gTargets} targets, median ${fmt(gt.median)} ms`,
    );
  }
}

/** Cycles of the 1,000-ClusterQueue figure: untimed warm-up (the JIT settles after about five), then timed; each on freshly filled queues. */
const CYCLE_WARMUP = 5;
const CYCLE_REPS = 7;
/** Cycles after those, timed right after a gc whose sweep is still running (the details only). */
const CYCLE_UNSETTLED = 3;

function runAdmissionCycle(report: Report): void {
  // 1. Kueue's baseline and tas shapes, one run each (a run is long): CPU time of the driver.
  const runs: [FigureName, typeof PEER_BASELINE][] = [
    ['admission.peer-baseline.15k', PEER_BASELINE],
    ['admission.peer-tas.15k', PEER_TAS],
  ];
  for (const [name, shape] of runs) {
    if (!report.wants(name)) continue;
    console.error(
      `admission ${shape.name}: ${shape.cohorts} cohorts x ${shape.clusterQueuesPerCohort} ClusterQueues, ${workloadCount(shape).toLocaleString('en-US')} Workloads${shape.topology ? `, ${shape.topology.blocks * shape.topology.racksPerBlock * shape.topology.nodesPerRack} nodes` : ''} ...`,
    );
    globalThis.gc!();
    const r = runPeerShape(shape);
    const wrong = checkPeerRun(r);
    if (wrong) throw new PlacementFailed(`admission: ${wrong}`);
    report.add(name, r.cpuMs, `CPU (user+system), one run; ${describePeerRun(r)}`);
  }

  // 2. One schedule() over 1,000 (5,000) ClusterQueues and 50,000 (250,000) pending
  //    Workloads: the queues and the snapshot are rebuilt before every timed cycle (a cycle
  //    admits into them).
  const sizes: [FigureName, typeof CYCLE][] = [
    ['admission.cycle.1000cq-50k', CYCLE],
    ['admission.cycle.5000cq-250k', CYCLE_5000],
  ];
  for (const [name, size] of sizes) {
    if (!report.wants(name)) continue;
    const b = cycleShape(size);
    console.error(
      `admission cycle: ${size.clusterQueues} ClusterQueues in cohorts of ${size.clusterQueuesPerCohort}, ${b.pending.toLocaleString('en-US')} pending Workloads`,
    );
    const times: number[] = [];
    const unsettled: number[] = [];
    let first = 0;
    let last = { admitted: 0, heads: 0, preempting: 0 };
    // The last CYCLE_UNSETTLED cycles are timed right after the gc, its sweep still running
    // on the other core (as every cycle was before gc-settle.ts): reported, not the figure.
    for (let i = 0; i < CYCLE_WARMUP + CYCLE_REPS + CYCLE_UNSETTLED; i++) {
      const env = b.build();
      if (i < CYCLE_WARMUP + CYCLE_REPS) settledGc();
      else globalThis.gc!();
      const t = timeFirst(() => (last = cycleOnce(env)));
      if (last.heads !== size.clusterQueues || last.admitted !== size.clusterQueues) {
        throw new PlacementFailed(
          `admission cycle: ${last.heads} heads and ${last.admitted} admissions, expected ${size.clusterQueues} of each`,
        );
      }
      if (i === 0) first = t;
      if (i >= CYCLE_WARMUP + CYCLE_REPS) unsettled.push(t);
      else if (i >= CYCLE_WARMUP) times.push(t);
    }
    const sorted = [...times].sort((x, y) => x - y);
    report.add(
      name,
      median(times),
      `median of ${times.length} (${sorted.map((t) => fmt(t)).join(', ')} ms) after ${CYCLE_WARMUP} warm-up cycles, each on fresh queues after a settled gc; ` +
        `timed right after the gc instead (its sweep running), median of ${unsettled.length} ${fmt(median(unsettled))} ms; first cycle ${fmt(first)} ms; ${last.heads} heads nominated, ${last.admitted} admitted`,
    );
  }
}

/** Builds of the scale shape (median reported) and its cycles: untimed warm-up, then timed. */
const SCALE_BUILDS = 3;
const SCALE_WARMUP = 3;
const SCALE_REPS = 5;

/**
 * The scale figures run in a child process of their own: the 65,000-node shape grows this
 * process's heap by about 500 MB, which slowed every figure after it (one 5,000-queue cycle
 * 47 -> 56 ms), and a figure before it could leave memory the heap figure then counted.
 */
function runScale(report: Report, only: string | undefined): void {
  if (!report.wantsAny('scale.65k.')) return;
  const args = [...process.execArgv, process.argv[1]!, '--scale-child', ...(only === undefined ? [] : ['--only', only])];
  const r = spawnSync(process.execPath, args, {
    encoding: 'utf8',
    maxBuffer: 1 << 24,
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, TOPOQUEUE_BENCH_CHILD: '1' },
  });
  if (r.status === 2) throw new PlacementFailed('scale: the child process found a wrong result (above)');
  if (r.status !== 0) throw new Error(`scale: the child process exited ${r.status ?? r.signal}`);
  for (const f of JSON.parse(r.stdout.trim().split('\n').pop()!) as { name: FigureName; value: number; detail: string }[])
    report.add(f.name, f.value, f.detail);
}

/** The scale figures in this process (the child of runScale): one JSON line of figures on stdout. */
function runScaleHere(report: Report): void {
  const z = SCALE_65K;
  console.error(
    `scale: ${scaleNodeCount(z).toLocaleString('en-US')} nodes (${z.zones} zones x ${z.blocksPerZone} blocks x ${z.racksPerBlock} racks x ${z.hostsPerRack} hosts), ` +
      `${(scaleNodeCount(z) * z.podsPerNode).toLocaleString('en-US')} live pods, ${z.clusterQueues.toLocaleString('en-US')} ClusterQueues (${scaleTasClusterQueues(z)} on the topology), seed ${z.seed} ...`,
  );
  const r = runScaleBench(z, {
    builds: SCALE_BUILDS,
    warmup: SCALE_WARMUP,
    reps: SCALE_REPS,
    gc: () => settledGc(),
    log: (l) => console.error(l),
  });
  const wrong = checkScaleRun(z, r);
  if (wrong) throw new PlacementFailed(`scale: ${wrong}`);
  const totals = r.builds.map((b) => b.nodesMs + b.podsMs + b.admissionMs);
  const mid = r.builds[totals.indexOf(median(totals))]!;
  report.add(
    'scale.65k.snapshot.build',
    median(totals),
    `median of ${totals.map((t) => fmt(t)).join(', ')} ms; that build: ${r.nodes.toLocaleString('en-US')} parsed Nodes stripped and added + first leaves() ${fmt(mid.nodesMs)} ms, ` +
      `${r.pods.toLocaleString('en-US')} live pods ${fmt(mid.podsMs)} ms, admission snapshot of ${z.clusterQueues.toLocaleString('en-US')} ClusterQueues ${fmt(mid.admissionMs)} ms; ${r.domains.toLocaleString('en-US')} domains`,
  );
  const sorted = [...r.cycles].sort((x, y) => x - y);
  report.add(
    'scale.65k.cycle',
    median(r.cycles),
    `median of ${r.cycles.length} (${sorted.map((t) => fmt(t)).join(', ')} ms) after ${SCALE_WARMUP} warm-up cycles; first cycle ${fmt(r.firstCycleMs)} ms; ${r.heads} heads nominated, ${r.admitted} admitted (${r.tasAdmitted} placed on the topology)`,
  );
  report.add(
    'scale.65k.heap',
    r.heapMB,
    `heapUsed + arrayBuffers after gc: topology with ${r.pods.toLocaleString('en-US')} pods, admission snapshot, queues with ${r.pending.toLocaleString('en-US')} pending Workloads (read in ${fmt(r.pendingMs)} ms, queued in ${fmt(r.queuesMs)} ms); Nodes dropped`,
  );
}

// ---- entry point ------------------------------------------------------------------------

async function runSimulate(report: Report): Promise<void> {
  for (const [shape, cpu, mk] of [
    [PEER_BASELINE, 'simulate.peer-baseline.15k', 'simulate.peer-baseline.15k.makespan'],
    [PEER_TAS, 'simulate.peer-tas.15k', 'simulate.peer-tas.15k.makespan'],
  ] as const) {
    if (!report.wants(cpu) && !report.wants(mk)) continue;
    console.error(`simulate: Kueue's ${shape.name} shape end to end (${workloadCount(shape).toLocaleString('en-US')} Jobs) ...`);
    globalThis.gc!();
    const r = await runPeerSimulation(shape);
    const classes = Object.entries(r.meanAdmissionS)
      .map(([c, s]) => `${c} ${s.toFixed(1)} s`)
      .join(', ');
    report.add(
      cpu,
      r.cpuMs,
      `CPU of the whole run (wall ${fmt(r.wallMs / 1000)} s); ${r.finished.toLocaleString('en-US')}/${r.workloads.toLocaleString('en-US')} finished, ${r.steps.toLocaleString('en-US')} reconciles, ` +
        `${r.violations} violations, ${r.errors} controller errors; mean time to admission ${classes}; mean CQ usage ${r.meanUsagePct.toFixed(1)}% of nominal`,
    );
    if (r.makespanS !== null)
      report.add(mk, r.makespanS / r.boundS, `makespan ${fmt(r.makespanS)} s simulated vs packing bound ${fmt(r.boundS)} s`);
  }
  runBareFigures(report);
  if (report.wants('simulate.live.10k-nodes-100k-pods.heap') || report.wants('simulate.ungate.5000-pod-gang')) {
    console.error('simulate: 10,000 nodes, 100,000 running pods, then a 5,000-pod gang ...');
    globalThis.gc!();
    const live = await runLive(() => globalThis.gc!());
    report.add(
      'simulate.live.10k-nodes-100k-pods.heap',
      live.heapMB,
      `heapUsed + arrayBuffers after gc; ${live.nodes.toLocaleString('en-US')} nodes, ${live.running.toLocaleString('en-US')} pods Running; run CPU ${fmt(live.cpuMs / 1000)} s`,
    );
    report.add(
      'simulate.ungate.5000-pod-gang',
      live.ungateCpuMs,
      `CPU of the TopologyUngater's reconciles for the gang; ${live.ungatedPods.toLocaleString('en-US')} of 5,000 pods ungated`,
    );
  }
}

async function runBurstFigures(report: Report): Promise<void> {
  for (const [name, rss, spreadMs] of [
    ['simulate.all-at-once.20k-nodes-2k-jobs', 'simulate.all-at-once.20k-nodes-2k-jobs.rss', 0],
    ['simulate.spread-24h.20k-nodes-2k-jobs', undefined, 24 * 3_600_000],
  ] as const) {
    if (!report.wants(name) && !(rss !== undefined && report.wants(rss))) continue;
    console.error(`simulate: 20,000 nodes, 2,000 Jobs (82,820 pods) ${spreadMs === 0 ? 'all at t = 0' : 'spread over 24 h'} ...`);
    const r = runBurstInChild(spreadMs);
    report.add(
      name,
      r.cpuMs,
      `CPU of the whole run (wall ${fmt(r.wallMs / 1000)} s); ${r.finished.toLocaleString('en-US')}/${r.jobs.toLocaleString('en-US')} finished, ` +
        `${r.steps.toLocaleString('en-US')} reconciles, ${r.violations} violations, ${fmt(r.writesPerJob)} store writes per Job, makespan ${fmt((r.makespanS ?? 0) / 3600)} h simulated`,
    );
    if (rss !== undefined)
      report.add(rss, r.peakRssMB, 'peak RSS of the child (VmHWM), which runs it as topoqueue simulate does (its heap setting)');
  }
}

async function runServe(report: Report): Promise<void> {
  const peerRuns = [
    [PEER_BASELINE, 'serve.peer-baseline.15k', 'serve.peer-baseline.15k.cpu-per-admission', 351],
    [PEER_TAS, 'serve.peer-tas.15k', 'serve.peer-tas.15k.cpu-per-admission', 401],
  ] as const;
  for (const [shape, name, cpuName, peerS] of peerRuns) {
    if (!report.wants(name) && !report.wants(cpuName)) continue;
    console.error(
      `serve: Kueue's ${shape.name} shape in real time through the API (${workloadCount(shape).toLocaleString('en-US')} Workloads; Kueue took ${peerS} s) ...`,
    );
    const r = await runServeBaseline(shape, (line) => console.error(line));
    const classes = Object.entries(r.meanAdmissionS)
      .map(([c, s]) => `${c} ${s.toFixed(2)} s`)
      .join(', ');
    report.add(
      name,
      r.wallMs / 1000,
      `wall, first create to last finish (Kueue: ${peerS} s; server CPU ${fmt(r.serverCpuS)} s, ${r.rewatches} re-watches); ${r.finished.toLocaleString('en-US')}/${r.workloads.toLocaleString('en-US')} finished, ${r.failedCreates} creates refused; mean time to admission ${classes}`,
    );
    report.add(
      cpuName,
      (r.serverCpuS * 1000) / r.admitted,
      `server CPU (user + system, /proc) ${fmt(r.serverCpuS)} s over ${r.admitted.toLocaleString('en-US')} Workloads admitted; everything serve does (API, watches, every controller, scheduling cycles, workload runner)`,
    );
  }
  if (report.wantsAny('serve.api.')) {
    console.error('serve: API throughput, 10,000 Pods ...');
    const r = await runApiThroughput();
    report.add(
      'serve.api.create-pods.10k',
      r.createsPerS,
      `${r.pods.toLocaleString('en-US')} Pods created by 32 concurrent clients over HTTP (server in a child process)`,
    );
    report.add(
      'serve.api.watch-events.10k',
      r.watchEventsPerS,
      `one watch replaying the ${r.pods.toLocaleString('en-US')} ADDED events from the watch log`,
    );
    report.add(
      'serve.api.get.p99',
      r.getP99Ms,
      `2,000 sequential GETs of single Pods among ${r.pods.toLocaleString('en-US')}; median ${fmt(r.getMedianMs)} ms`,
    );
  }
}

async function runWeb(report: Report): Promise<void> {
  if (!report.wantsAny('web.')) return;
  const browser = await launchBrowser();
  if (!browser) {
    console.error(`web: ${NO_BROWSER}`);
    return;
  }
  try {
    console.error('web: the dashboard in Chromium, 1,000 and 10,000 nodes ...');
    const small = await measurePaint(browser, 1000);
    report.add(
      'web.paint.topology.1k',
      small.firstPaintMs,
      `navigation start to the first frame with the map, median of 3 loads; page ${Math.round(small.pageBytes / 1024)} KiB (state embedded)`,
    );
    const large = await measurePaint(browser, 10_000);
    report.add(
      'web.paint.topology.10k',
      large.firstPaintMs,
      `as web.paint.topology.1k, aggregated to racks; page ${Math.round(large.pageBytes / 1024)} KiB`,
    );
    report.add(
      'web.update.visible',
      Math.max(small.updateMs, large.updateMs),
      `a node cordoned in the store until the page shows it: ${fmt(small.updateMs)} ms at 1,000 nodes, ${fmt(large.updateMs)} ms at 10,000`,
    );
  } finally {
    await browser.close();
  }
}

async function runController(report: Report): Promise<void> {
  const name = 'controller.peer-tas.15k';
  const cpuName = 'controller.peer-tas.15k.cpu-per-admission';
  if (!report.wants(name) && !report.wants(cpuName)) return;
  console.error(
    `controller: the peer's TAS shape in real time, topoqueue controller on client-node over HTTP against serve --controllers=none (${workloadCount(PEER_TAS).toLocaleString('en-US')} Workloads; Kueue took 401 s) ...`,
  );
  const r = await runControllerBench(PEER_TAS, (line) => console.error(line));
  const verbs = Object.entries(r.requestsByVerb)
    .sort(([, a], [, b]) => b - a)
    .map(([v, n]) => `${v} ${n.toLocaleString('en-US')}`)
    .join(', ');
  report.add(
    name,
    r.wallMs / 1000,
    `wall, first create to last finish (Kueue: 401 s); ${r.finished.toLocaleString('en-US')}/${r.workloads.toLocaleString('en-US')} finished, ${r.failedCreates} creates refused; ` +
      `controller CPU ${fmt(r.controllerCpuS)} s, heap ${fmt(r.heapMB)} MB, ${r.requests.toLocaleString('en-US')} API requests (${verbs}); server CPU ${fmt(r.serverCpuS)} s`,
  );
  report.add(
    cpuName,
    ((r.controllerCpuS + r.serverCpuS) * 1000) / r.admitted,
    `CPU (user + system, /proc) of both processes, controller ${fmt(r.controllerCpuS)} s + serve --controllers none ${fmt(r.serverCpuS)} s, over ${r.admitted.toLocaleString('en-US')} Workloads admitted`,
  );
}

async function runRestart(report: Report): Promise<void> {
  const name = 'serve.restart.100k';
  if (!report.wants(name)) return;
  const dir = mkdtempSync(join(os.tmpdir(), 'topoqueue-bench-restart-'));
  try {
    console.error(`serve.restart: writing ${RESTART_OBJECTS.toLocaleString('en-US')} objects to ${dir} ...`);
    await fillDataDir(dir);
    const bytes = readdirSync(dir).reduce((n, f) => n + statSync(join(dir, f)).size, 0);
    const runs = [];
    for (let i = 0; i < RESTART_RUNS; i++) runs.push(await restartOnce(dir));
    const mid = [...runs].sort((a, b) => a.wallMs - b.wallMs)[Math.floor(runs.length / 2)]!;
    report.add(
      name,
      mid.wallMs,
      `median of ${runs.length} (${runs.map((r) => fmt(r.wallMs)).join(', ')} ms), spawn of serve --data-dir to listening; that run: CPU ${fmt(mid.cpuMs)} ms, ` +
        `store read back ${fmt(mid.openMs)} ms; ${mid.objects.toLocaleString('en-US')} objects (${RESTART_NODES.toLocaleString('en-US')} Nodes, the rest ~2.8 KiB Pods), ${fmt(bytes / 1e6)} MB on disk`,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Runs figures; 2 (after saying why) when one found a wrong result, 0 otherwise; other errors propagate. */
async function exitOnWrongResult(run: () => void | Promise<void>): Promise<number> {
  try {
    await run();
    return 0;
  } catch (e) {
    if (!(e instanceof PlacementFailed)) throw e;
    console.error(`bench: ${e.message}`);
    return 2;
  }
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      json: { type: 'string' },
      only: { type: 'string' },
      digest: { type: 'boolean' },
      scale: { type: 'string', default: '0.1' },
      'scale-child': { type: 'boolean' },
    },
    strict: true,
  });
  if (values.digest) {
    // The decision digests only (bench/admission-digest.ts): no timing, no gc needed.
    printDigests(Number(values.scale));
    return 0;
  }
  if (typeof globalThis.gc !== 'function') {
    if (process.env.TOPOQUEUE_BENCH_CHILD) throw new Error('global.gc is still missing after re-running with --expose-gc');
    const r = spawnSync(process.execPath, ['--expose-gc', ...process.execArgv, ...process.argv.slice(1)], {
      stdio: 'inherit',
      env: { ...process.env, TOPOQUEUE_BENCH_CHILD: '1' },
    });
    return r.status ?? 1;
  }
  const only = values.only === undefined ? undefined : new RegExp(values.only);
  if (values['scale-child']) {
    const report = new Report(loadGoals(), only, false);
    if ((await exitOnWrongResult(() => runScaleHere(report))) !== 0) return 2;
    console.log(JSON.stringify(report.figures.map(({ name, value, detail }) => ({ name, value, detail }))));
    return 0;
  }
  const report = new Report(loadGoals(), only);
  const cpus = os.cpus();
  console.log(
    `topoqueue bench: node ${process.version}, ${cpus.length} x ${cpus[0]?.model ?? 'unknown CPU'}, ${os.platform()}/${os.arch()}`,
  );
  report.header();
  const wrong = await exitOnWrongResult(async () => {
    runCliStart(report);
    runPeer(report);
    runLarge(report);
    runHyperNode(report);
    runEncode(report);
    runPreemption(report);
    runAdmissionCycle(report);
    runScale(report, values.only);
    await runSimulate(report);
    await runBurstFigures(report);
    await runServe(report);
    await runWeb(report);
    await runRestart(report);
    await runController(report);
    runInput(report);
  });
  if (wrong !== 0) return wrong;
  if (report.figures.length === 0) console.error(`bench: no figure matches --only ${values.only}`);
  if (values.json) {
    writeFileSync(
      values.json,
      `${JSON.stringify(
        report.figures.map(({ name, value, unit, goal }) => ({ name, value, unit, goal })),
        null,
        2,
      )}\n`,
    );
  }
  const missed = report.figures.filter((f) => (higherIsBetter(f.name) ? f.value < f.goal : f.value > f.goal)).length;
  console.log(`${report.figures.length} figures, ${missed} over goal (goals: bench/goals.json; a missed goal does not fail the run)`);
  return 0;
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  process.exitCode = await main();
}
