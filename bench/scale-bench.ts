// The `scale.65k.*` figures (bench/main.ts): the scale shape of bench/scale-shapes.ts built
// and cycled once.
//
//   - build: parsed Nodes -> topology snapshot (nodeInfoFromNode, upsertNode, first
//     leaves()), the 650,000 live pods (addPod), then the admission snapshot of the 5,000
//     ClusterQueues; median of `builds`, each after a gc, from the same Node objects;
//   - heap: heapUsed + arrayBuffers retained once everything a scheduler holds is built
//     (topology with its pods, admission snapshot, queues with 250,000 pending Workloads),
//     the Node objects and pod list dropped;
//   - cycle: one schedule() over the 5,000 ClusterQueues, after `warmup` untimed cycles;
//     before each, what the previous cycle admitted is taken back (removeAdmitted, which
//     restores the topology's usage) and the queues and admission snapshot are made anew
//     (untimed); the placement engine is the same throughout, as in a running scheduler.

import { schedule } from '../src/admission/cycle.ts';
import type { AdmissionSnapshot } from '../src/admission/snapshot.ts';
import { PlacementEngine } from '../src/placement/engine.ts';
import { T0 } from '../src/testing/admission.ts';
import type { TopologySnapshot } from '../src/topology/snapshot.ts';
import {
  buildScaleTopology,
  scaleAdmission,
  scaleCluster,
  scaleNodeCount,
  scalePending,
  scaleQueueObjects,
  scaleQueues,
  scaleTasClusterQueues,
  type ScaleSize,
} from './scale-shapes.ts';

export interface ScaleResult {
  nodes: number;
  pods: number;
  domains: number;
  pending: number;
  /** Per build: topology nodes, live pods, admission snapshot (ms). */
  builds: { nodesMs: number; podsMs: number; admissionMs: number }[];
  /** Generating and reading the 250,000 pending Workloads (workloadInfo), and filling the queues, once (ms). */
  pendingMs: number;
  queuesMs: number;
  heapMB: number;
  /** Timed cycles (ms), after the warm-up. */
  cycles: number[];
  firstCycleMs: number;
  heads: number;
  admitted: number;
  tasAdmitted: number;
}

export interface ScaleOptions {
  builds: number;
  warmup: number;
  reps: number;
  gc: () => void;
  log?: (line: string) => void;
}

function retainedBytes(gc: () => void): number {
  gc();
  gc();
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
}

const msSince = (t0: bigint) => Number(process.hrtime.bigint() - t0) / 1e6;

export function runScaleBench(z: ScaleSize, opts: ScaleOptions): ScaleResult {
  const log = opts.log ?? (() => {});
  const before = retainedBytes(opts.gc);
  let cluster: ReturnType<typeof scaleCluster> | undefined = scaleCluster(z);
  const pods = cluster.pods.length;
  log(`scale: ${cluster.nodes.length.toLocaleString('en-US')} Nodes and ${pods.toLocaleString('en-US')} live pods generated`);
  const objects = scaleQueueObjects(z);
  const builds: ScaleResult['builds'] = [];
  let topology: TopologySnapshot | undefined;
  let engine: PlacementEngine | undefined;
  let snap: AdmissionSnapshot | undefined;
  for (let i = 0; i < opts.builds; i++) {
    topology = undefined;
    engine = undefined;
    snap = undefined;
    opts.gc();
    const t = buildScaleTopology(cluster.nodes, cluster.pods);
    topology = t.snapshot;
    const t0 = process.hrtime.bigint();
    engine = new PlacementEngine(topology);
    snap = scaleAdmission(objects, topology, engine);
    builds.push({ nodesMs: t.nodesMs, podsMs: t.podsMs, admissionMs: msSince(t0) });
  }
  cluster = undefined;
  const topo = topology!;
  const eng = engine!;
  let t0 = process.hrtime.bigint();
  const pending = scalePending(z);
  const pendingMs = msSince(t0);
  t0 = process.hrtime.bigint();
  let queues = scaleQueues(snap!, pending);
  const queuesMs = msSince(t0);
  const heapMB = (retainedBytes(opts.gc) - before) / 1e6;
  log(`scale: built; ${pending.length.toLocaleString('en-US')} pending Workloads queued; heap ${heapMB.toFixed(0)} MB`);

  const tasQueues = new Set([...snap!.clusterQueues.keys()].slice(0, scaleTasClusterQueues(z)));
  const cycles: number[] = [];
  let firstCycleMs = 0;
  let last = { heads: 0, admitted: 0, tasAdmitted: 0 };
  for (let i = 0; i < opts.warmup + opts.reps; i++) {
    if (i > 0) {
      for (const key of [...snap!.admitted.keys()]) snap!.removeAdmitted(key);
      snap = scaleAdmission(objects, topo, eng);
      queues = scaleQueues(snap, pending);
    }
    opts.gc();
    const c0 = process.hrtime.bigint();
    const r = schedule(snap!, queues, { now: T0 + 3600, placement: {} });
    const ms = msSince(c0);
    let tasAdmitted = 0;
    for (const a of snap!.admitted.values()) if (tasQueues.has(a.clusterQueue)) tasAdmitted++;
    last = { heads: r.heads, admitted: r.admitted, tasAdmitted };
    if (i === 0) firstCycleMs = ms;
    if (i >= opts.warmup) cycles.push(ms);
  }
  return {
    nodes: scaleNodeCount(z),
    pods,
    domains: topo.domainCount,
    pending: pending.length,
    builds,
    pendingMs,
    queuesMs,
    heapMB,
    cycles,
    firstCycleMs,
    ...last,
  };
}

/** What is wrong with a run, if anything: every ClusterQueue's head nominated and admitted, the TAS ones placed. */
export function checkScaleRun(z: ScaleSize, r: ScaleResult): string | undefined {
  if (r.heads !== z.clusterQueues) return `${r.heads} heads nominated, expected ${z.clusterQueues}`;
  if (r.admitted !== z.clusterQueues) return `${r.admitted} admitted, expected ${z.clusterQueues}`;
  if (r.tasAdmitted !== scaleTasClusterQueues(z)) return `${r.tasAdmitted} TAS heads admitted, expected ${scaleTasClusterQueues(z)}`;
  return undefined;
}
