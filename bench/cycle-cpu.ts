// A driver for profiling one admission cycle (issue 16): `admission.cycle.5000cq-250k` or
// `scale.65k.cycle`, each cycle on fresh queues after a settled gc (gc-settle.ts), timed in
// CPU time (user+system) as well as wall time, so runs on a busy machine can be compared.
//
//   node --expose-gc --import tsx bench/cycle-cpu.ts [cycle|scale] [reps]
//   node --expose-gc --cpu-prof --import tsx bench/cycle-cpu.ts cycle 20
//
// Prints one line per timed cycle and the medians.

import { schedule } from '../src/admission/cycle.ts';
import { T0 } from '../src/testing/admission.ts';
import { CYCLE_5000, cycleOnce, cycleShape } from './admission-cycle.ts';
import {
  SCALE_65K,
  buildScaleTopology,
  scaleAdmission,
  scaleCluster,
  scalePending,
  scaleQueueObjects,
  scaleQueues,
} from './scale-shapes.ts';
import { PlacementEngine } from '../src/placement/engine.ts';
import { settledGc } from './gc-settle.ts';

const which = process.argv[2] ?? 'cycle';
const reps = Number(process.argv[3] ?? 15);
const warmup = 3;
const gc = () => settledGc();

function timed(fn: () => void): { cpu: number; wall: number } {
  const c0 = process.cpuUsage();
  const w0 = process.hrtime.bigint();
  fn();
  const c = process.cpuUsage(c0);
  return { cpu: (c.user + c.system) / 1000, wall: Number(process.hrtime.bigint() - w0) / 1e6 };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
const cpus: number[] = [];
const walls: number[] = [];

if (which === 'cycle') {
  const b = cycleShape(CYCLE_5000);
  for (let i = 0; i < warmup + reps; i++) {
    const env = b.build();
    gc();
    let r = { admitted: 0, heads: 0, preempting: 0 };
    const t = timed(() => (r = cycleOnce(env)));
    if (r.admitted !== 5000) throw new Error(`admitted ${r.admitted}`);
    if (i >= warmup) {
      cpus.push(t.cpu);
      walls.push(t.wall);
    }
  }
} else if (which === 'queue') {
  // The queue side alone: pop one head per ClusterQueue, then delete the 5,000 heads.
  const b = cycleShape(CYCLE_5000);
  const pops: number[] = [];
  const dels: number[] = [];
  for (let i = 0; i < warmup + reps; i++) {
    const env = b.build();
    gc();
    let heads: { key: string }[] = [];
    const t1 = timed(() => (heads = env.queues.heads(T0 + 3600, () => true)));
    const t2 = timed(() => {
      for (const h of heads) env.queues.delete(h.key);
    });
    if (heads.length !== 5000) throw new Error(`heads ${heads.length}`);
    if (i >= warmup) {
      pops.push(t1.cpu);
      dels.push(t2.cpu);
      cpus.push(t1.cpu + t2.cpu);
      walls.push(t1.wall + t2.wall);
    }
  }
  console.log(
    `queue: median cpu heads ${median(pops).toFixed(1)} ms (min ${Math.min(...pops).toFixed(1)}), delete ${median(dels).toFixed(1)} ms (min ${Math.min(...dels).toFixed(1)})`,
  );
} else {
  const z = SCALE_65K;
  const cluster = scaleCluster(z);
  const objects = scaleQueueObjects(z);
  const topo = buildScaleTopology(cluster.nodes, cluster.pods).snapshot;
  const engine = new PlacementEngine(topo);
  let snap = scaleAdmission(objects, topo, engine);
  const pending = scalePending(z);
  for (let i = 0; i < warmup + reps; i++) {
    if (i > 0) {
      for (const key of [...snap.admitted.keys()]) snap.removeAdmitted(key);
      snap = scaleAdmission(objects, topo, engine);
    }
    const queues = scaleQueues(snap, pending);
    gc();
    let admitted = 0;
    const t = timed(() => (admitted = schedule(snap, queues, { now: T0 + 3600, placement: {} }).admitted));
    if (admitted !== z.clusterQueues) throw new Error(`admitted ${admitted}`);
    if (i >= warmup) {
      cpus.push(t.cpu);
      walls.push(t.wall);
    }
  }
}
console.log(`${which}: cpu ${cpus.map((x) => x.toFixed(1)).join(' ')}`);
console.log(
  `${which}: median cpu ${median(cpus).toFixed(1)} ms (min ${Math.min(...cpus).toFixed(1)}), wall ${median(walls).toFixed(1)} ms`,
);
