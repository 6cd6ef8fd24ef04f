// The admission-cycle shapes of the benchmark (bench/main.ts, figures `admission.peer-*`
// and `admission.cycle.*`): Kueue's scheduler performance test (specs/performance-anchors.md
// §1.1 baseline, §1.3 tas) replayed through `schedule()` alone, in virtual time.
//
// The driver, per run:
//   1. submit each Workload at its creation time (per ClusterQueue and class, one every
//      `everyMs`, as Kueue's generator does: the classes of a ClusterQueue are created
//      side by side, the first of each at t = 0);
//   2. run `schedule()` and apply its decisions: an admitted Workload runs for its class's
//      runtime (a min-heap of finish times); a preempted one leaves the snapshot, is
//      requeued and its run is void (it starts again from zero when readmitted); its
//      cohort's parked Workloads are requeued, as capacity was freed;
//   3. cycle again at the same instant while the cycle changed something (admitted,
//      preempted or parked a head, as settle() does); otherwise advance virtual time to the
//      next event: a finish (removeAdmitted, then requeue the cohort's parked Workloads), a
//      creation, or the end of a backoff;
//   4. stop when every Workload has finished.
// Cycles take no virtual time: the makespan is what a scheduler infinitely fast would
// achieve, so the figure is the CPU time the cycles cost, not the wall time of the peer.

import { KueueApiVersion } from '../src/api/api-versions.ts';
import type { PodSetTopologyRequest, ResourceFlavor, Workload } from '../src/api/objects.ts';
import { formatTime } from '../src/api/time.ts';
import { type Decision, schedule } from '../src/admission/cycle.ts';
import type { QueueManager } from '../src/admission/queue.ts';
import type { AdmissionSnapshot } from '../src/admission/snapshot.ts';
import { workloadInfo, type WorkloadInfo } from '../src/admission/workload-info.ts';
import { admissionEnv, cq, flavor, T0, tasFlavor } from '../src/testing/admission.ts';
import { PEER, PEER_NODE_LABELS, PEER_RACK, peerShape, type PeerSize } from './shapes.ts';

// ---- shapes ---------------------------------------------------------------------------

export type ClassName = 'small' | 'medium' | 'large';
export type TasVariant = 'required' | 'preferred' | 'balanced';
export const CLASS_NAMES: readonly ClassName[] = ['small', 'medium', 'large'];

export interface WorkloadClass {
  name: ClassName;
  /** Workloads of the class per ClusterQueue. */
  count: number;
  /** Total CPU request in cores (the quota usage of one Workload). */
  cpu: number;
  runtimeMs: number;
  priority: number;
  /** One created every `everyMs` per ClusterQueue. */
  everyMs: number;
  /** TAS variant: one PodSet of `pods` pods at rack level, `variants` counts per ClusterQueue. */
  tas?: { pods: number; perPod: string; variants: Record<TasVariant, number>; sliceSize: number };
}

export interface PeerRunShape {
  name: string;
  cohorts: number;
  clusterQueuesPerCohort: number;
  /** CPU cores per ClusterQueue. */
  nominal: number;
  borrowingLimit: number;
  classes: WorkloadClass[];
  /** TAS: the topology (Kueue's 1 x 10 x 64, 96 CPU / 256Gi nodes). */
  topology?: PeerSize;
}

/** Kueue configs/baseline (anchors §1.1): 5 cohorts x 6 ClusterQueues x 500 Workloads. */
export const PEER_BASELINE: PeerRunShape = {
  name: 'baseline',
  cohorts: 5,
  clusterQueuesPerCohort: 6,
  nominal: 20,
  borrowingLimit: 100,
  classes: [
    { name: 'small', count: 350, cpu: 1, runtimeMs: 200, priority: 50, everyMs: 100 },
    { name: 'medium', count: 100, cpu: 5, runtimeMs: 500, priority: 100, everyMs: 500 },
    { name: 'large', count: 50, cpu: 20, runtimeMs: 1000, priority: 200, everyMs: 1200 },
  ],
};

/**
 * Kueue configs/tas (anchors §1.3): the baseline's queues and classes, each Workload one
 * PodSet at rack level on 640 nodes. The anchors give no creation intervals for tas: the
 * baseline's are used, and the variants of a class are interleaved round-robin.
 */
export const PEER_TAS: PeerRunShape = {
  ...PEER_BASELINE,
  name: 'tas',
  classes: [
    {
      ...PEER_BASELINE.classes[0]!,
      tas: { pods: 2, perPod: '500m', variants: { required: 120, preferred: 120, balanced: 110 }, sliceSize: 1 },
    },
    {
      ...PEER_BASELINE.classes[1]!,
      tas: { pods: 4, perPod: '1250m', variants: { required: 34, preferred: 33, balanced: 33 }, sliceSize: 2 },
    },
    {
      ...PEER_BASELINE.classes[2]!,
      tas: { pods: 8, perPod: '2500m', variants: { required: 17, preferred: 17, balanced: 16 }, sliceSize: 4 },
    },
  ],
  topology: PEER,
};

export function workloadCount(shape: PeerRunShape): number {
  return shape.cohorts * shape.clusterQueuesPerCohort * shape.classes.reduce((n, c) => n + c.count, 0);
}

/** Demand per cohort over its quota: the makespan if every cohort were perfectly packed. */
export function packingBoundSeconds(shape: PeerRunShape): number {
  const cpuSeconds = shape.classes.reduce((s, c) => s + c.count * c.cpu * (c.runtimeMs / 1000), 0);
  return cpuSeconds / shape.nominal;
}

const TAS_FLAVOR = 'tas-flavor';
const FLAVOR = 'default';

/** The variant of the i-th Workload of a class: round-robin over the variants with some left. */
export function variants(counts: Record<TasVariant, number>): TasVariant[] {
  const left = { ...counts };
  const out: TasVariant[] = [];
  const order: TasVariant[] = ['required', 'preferred', 'balanced'];
  while (order.some((v) => left[v] > 0)) {
    for (const v of order) {
      if (left[v] > 0) {
        out.push(v);
        left[v]--;
      }
    }
  }
  return out;
}

function topologyRequest(v: TasVariant, sliceSize: number): PodSetTopologyRequest {
  if (v === 'required') return { required: PEER_RACK };
  if (v === 'preferred') return { preferred: PEER_RACK };
  return { podSetSliceRequiredTopology: PEER_RACK, podSetSliceSize: sliceSize };
}

/** RFC 3339 with milliseconds: queue order follows the exact creation instant. */
function createdAt(ms: number): string {
  return formatTime(T0 + Math.floor(ms / 1000)).replace('Z', `.${String(ms % 1000).padStart(3, '0')}Z`);
}

export const clusterQueueName = (cohort: number, q: number) => `cohort-${cohort}-cq-${q}`;

interface Submission {
  atMs: number;
  workload: Workload;
  clusterQueue: string;
  cls: number;
}

function podSetOf(
  c: WorkloadClass,
  tas: TasVariant | undefined,
): { count: number; requests: Record<string, string>; topology?: PodSetTopologyRequest } {
  if (!c.tas || !tas) return { count: 1, requests: { cpu: String(c.cpu) } };
  return { count: c.tas.pods, requests: { cpu: c.tas.perPod }, topology: topologyRequest(tas, c.tas.sliceSize) };
}

/** Every Workload of the run with its creation time, in creation order (ties: generation order). */
function submissions(shape: PeerRunShape): Submission[] {
  const out: Submission[] = [];
  for (let c = 0; c < shape.cohorts; c++) {
    for (let q = 0; q < shape.clusterQueuesPerCohort; q++) {
      const cqName = clusterQueueName(c, q);
      shape.classes.forEach((cls, ci) => {
        const vs = cls.tas ? variants(cls.tas.variants) : undefined;
        if (vs && vs.length !== cls.count)
          throw new Error(`${shape.name}: class ${cls.name} has ${cls.count} Workloads but ${vs.length} TAS variants`);
        for (let i = 0; i < cls.count; i++) {
          const v = vs?.[i];
          const ps = podSetOf(cls, v);
          const name = `${cqName}-${cls.name}${v ? `-${v}` : ''}-${String(i).padStart(4, '0')}`;
          const atMs = i * cls.everyMs;
          const w: Workload = {
            apiVersion: KueueApiVersion.V1beta2,
            kind: 'Workload',
            metadata: { name, namespace: 'default', uid: `uid-${name}`, creationTimestamp: createdAt(atMs) },
            spec: {
              queueName: cqName,
              priority: cls.priority,
              podSets: [
                {
                  name: 'main',
                  count: ps.count,
                  template: { spec: { containers: [{ name: 'c', resources: { requests: ps.requests } }] } },
                  ...(ps.topology ? { topologyRequest: ps.topology } : {}),
                },
              ],
            },
          };
          out.push({ atMs, workload: w, clusterQueue: cqName, cls: ci });
        }
      });
    }
  }
  // Stable: equal times keep generation order.
  return out.sort((a, b) => a.atMs - b.atMs);
}

function environment(shape: PeerRunShape): { snap: AdmissionSnapshot; queues: QueueManager } {
  const flavorName = shape.topology ? TAS_FLAVOR : FLAVOR;
  const clusterQueues = [];
  for (let c = 0; c < shape.cohorts; c++) {
    for (let q = 0; q < shape.clusterQueuesPerCohort; q++) {
      clusterQueues.push(
        cq(clusterQueueName(c, q))
          .cohort(`cohort-${c}`)
          .quota(flavorName, { cpu: [String(shape.nominal), String(shape.borrowingLimit)] })
          .preemption({ reclaimWithinCohort: 'Any', withinClusterQueue: 'LowerPriority' })
          .build(),
      );
    }
  }
  let flavors: ResourceFlavor[] = [flavor(FLAVOR)];
  let tas;
  if (shape.topology) {
    const f = flavor(TAS_FLAVOR, { topology: 'tas-topology', nodeLabels: PEER_NODE_LABELS });
    const nodes = peerShape(shape.topology);
    flavors = [f];
    tas = [tasFlavor(f, nodes.levels, nodes.nodes)];
  }
  const env = admissionEnv({ clusterQueues, flavors, ...(tas ? { tas } : {}) });
  return { snap: env.snap, queues: env.queues };
}

// ---- the driver -----------------------------------------------------------------------

/** Min-heap of finish events by time, then sequence. */
class FinishHeap {
  private readonly at: number[] = [];
  private readonly seq: number[] = [];
  private readonly keys: string[] = [];
  private n = 0;
  private next = 0;

  get size(): number {
    return this.n;
  }
  peekAt(): number | undefined {
    return this.n > 0 ? this.at[0] : undefined;
  }
  private less(i: number, j: number): boolean {
    return this.at[i]! < this.at[j]! || (this.at[i] === this.at[j] && this.seq[i]! < this.seq[j]!);
  }
  private swap(i: number, j: number): void {
    [this.at[i], this.at[j]] = [this.at[j]!, this.at[i]!];
    [this.seq[i], this.seq[j]] = [this.seq[j]!, this.seq[i]!];
    [this.keys[i], this.keys[j]] = [this.keys[j]!, this.keys[i]!];
  }
  push(at: number, key: string): number {
    const s = this.next++;
    let i = this.n++;
    this.at[i] = at;
    this.seq[i] = s;
    this.keys[i] = key;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!this.less(i, p)) break;
      this.swap(i, p);
      i = p;
    }
    return s;
  }
  /** The earliest event: [time, key, sequence]. */
  pop(): [number, string, number] {
    const top: [number, string, number] = [this.at[0]!, this.keys[0]!, this.seq[0]!];
    this.n--;
    if (this.n > 0) {
      this.at[0] = this.at[this.n]!;
      this.seq[0] = this.seq[this.n]!;
      this.keys[0] = this.keys[this.n]!;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < this.n && this.less(l, m)) m = l;
        if (r < this.n && this.less(r, m)) m = r;
        if (m === i) break;
        this.swap(i, m);
        i = m;
      }
    }
    this.at.length = this.keys.length = this.seq.length = this.n;
    return top;
  }
}

export interface PeerRun {
  shape: string;
  workloads: number;
  finished: number;
  /** CPU time of the driver loop (process.cpuUsage, user + system), ms. */
  cpuMs: number;
  wallMs: number;
  cycles: number;
  /** Heads nominated over all cycles (a parked head is nominated again after a requeue). */
  heads: number;
  /** Admit decisions, readmissions after preemption included. */
  admissions: number;
  preemptions: number;
  /** Virtual time from the first creation to the last finish, s. */
  makespanS: number;
  packingBoundS: number;
  /** Mean create -> first admission per class, virtual ms. */
  meanAdmissionMs: Record<ClassName, number>;
  /** Time-weighted CPU held over the makespan, % of the nominal quota of all ClusterQueues. */
  usagePct: number;
}

const sec = (ms: number) => T0 + ms / 1000;

export interface RunOptions {
  /** Guards against a run that never ends (default 50,000,000 cycles). */
  maxCycles?: number;
  /** Called after each cycle with the virtual time (ms) and its decisions (tests, traces). */
  onCycle?: (tMs: number, decisions: readonly Decision[]) => void;
}

/** Runs the shape to the end (see the file comment). */
export function runPeerShape(shape: PeerRunShape, opts: RunOptions = {}): PeerRun {
  const maxCycles = opts.maxCycles ?? 50_000_000;
  const subs = submissions(shape);
  const { snap, queues } = environment(shape);
  const byKey = new Map<string, { sub: Submission; info?: WorkloadInfo; firstAdmitMs?: number; runStartMs?: number; runSeq?: number }>();
  for (const s of subs) byKey.set(`default/${s.workload.metadata.name}`, { sub: s });
  const cohortOf = new Map<string, string[]>();
  const membersOf = (cqName: string): string[] => {
    let m = cohortOf.get(cqName);
    if (!m) cohortOf.set(cqName, (m = snap.quota.cohortMembers(cqName)));
    return m;
  };
  const placement = {};
  const finishes = new FinishHeap();

  const cpu0 = process.cpuUsage();
  const wall0 = process.hrtime.bigint();
  let t = 0;
  let nextSub = 0;
  let cycles = 0;
  let heads = 0;
  let admissions = 0;
  let preemptions = 0;
  let finished = 0;
  let cpuMsHeld = 0;
  let lastFinish = 0;

  const submitUpTo = (ms: number) => {
    for (; nextSub < subs.length && subs[nextSub]!.atMs <= ms; nextSub++) {
      const s = subs[nextSub]!;
      const info = workloadInfo(s.workload);
      byKey.get(info.key)!.info = info;
      queues.add(s.clusterQueue, info);
    }
  };
  const release = (key: string, cqName: string, ms: number, freed: Set<string>) => {
    const st = byKey.get(key)!;
    cpuMsHeld += shape.classes[st.sub.cls]!.cpu * (ms - st.runStartMs!);
    st.runStartMs = undefined;
    st.runSeq = undefined;
    snap.removeAdmitted(key);
    for (const m of membersOf(cqName)) freed.add(m);
  };

  submitUpTo(0);
  while (finished < subs.length) {
    if (++cycles > maxCycles) throw new Error(`${shape.name}: no end after ${maxCycles} cycles (${finished} of ${subs.length} finished)`);
    const now = sec(t);
    const r = schedule(snap, queues, { now, placement });
    opts.onCycle?.(t, r.decisions);
    heads += r.heads;
    const freed = new Set<string>();
    for (const d of r.decisions) {
      if (d.kind === 'admit') {
        if (d.reservedOnly) continue;
        const st = byKey.get(d.key)!;
        admissions++;
        st.firstAdmitMs ??= t;
        st.runStartMs = t;
        st.runSeq = finishes.push(t + shape.classes[st.sub.cls]!.runtimeMs, d.key);
      } else if (d.kind === 'preempt') {
        const victim = snap.admitted.get(d.key);
        if (!victim) continue;
        preemptions++;
        release(d.key, victim.clusterQueue, t, freed);
        queues.add(victim.clusterQueue, byKey.get(d.key)!.info!);
      }
    }
    if (freed.size > 0) queues.requeueInadmissible(now, freed);
    if (r.admitted > 0 || r.preempting > 0 || r.parked > 0) continue;

    // Nothing changed at this instant: advance to the next event.
    const candidates = [finishes.peekAt(), nextSub < subs.length ? subs[nextSub]!.atMs : undefined];
    const backoff = queues.nextBackoff(now);
    if (backoff !== undefined) candidates.push(Math.ceil((backoff - T0) * 1000));
    const next = candidates.filter((x): x is number => x !== undefined).reduce((a, b) => Math.min(a, b), Infinity);
    if (next === Infinity)
      throw new Error(
        `${shape.name}: ${queues.pendingCount} Workloads pending with nothing running or coming (${finished} of ${subs.length} finished)`,
      );
    t = Math.max(t, next);
    const after = new Set<string>();
    while (finishes.size > 0 && finishes.peekAt()! <= t) {
      const [at, key, seq] = finishes.pop();
      const st = byKey.get(key)!;
      if (st.runSeq !== seq) continue; // preempted since
      const a = snap.admitted.get(key)!;
      release(key, a.clusterQueue, at, after);
      finished++;
      lastFinish = Math.max(lastFinish, at);
    }
    submitUpTo(t);
    if (after.size > 0) queues.requeueInadmissible(sec(t), after);
    if (backoff !== undefined && backoff <= sec(t)) queues.requeueInadmissible(sec(t));
  }
  const cpu = process.cpuUsage(cpu0);
  const wallMs = Number(process.hrtime.bigint() - wall0) / 1e6;

  const sums = CLASS_NAMES.map(() => ({ n: 0, total: 0 }));
  for (const st of byKey.values()) {
    const c = sums[CLASS_NAMES.indexOf(shape.classes[st.sub.cls]!.name)]!;
    c.n++;
    c.total += st.firstAdmitMs! - st.sub.atMs;
  }
  const meanAdmissionMs = Object.fromEntries(CLASS_NAMES.map((n, i) => [n, sums[i]!.n > 0 ? sums[i]!.total / sums[i]!.n : 0])) as Record<
    ClassName,
    number
  >;
  const quotaCpu = shape.nominal * shape.cohorts * shape.clusterQueuesPerCohort;
  return {
    shape: shape.name,
    workloads: subs.length,
    finished,
    cpuMs: (cpu.user + cpu.system) / 1000,
    wallMs,
    cycles,
    heads,
    admissions,
    preemptions,
    makespanS: lastFinish / 1000,
    packingBoundS: packingBoundSeconds(shape),
    meanAdmissionMs,
    usagePct: lastFinish > 0 ? (100 * cpuMsHeld) / (quotaCpu * lastFinish) : 0,
  };
}

/** What is wrong with a run, if anything: every Workload finished, the quota never exceeded. */
export function checkPeerRun(r: PeerRun): string | undefined {
  if (r.finished !== r.workloads) return `${r.shape}: ${r.finished} of ${r.workloads} Workloads finished`;
  if (r.admissions < r.workloads) return `${r.shape}: ${r.admissions} admissions for ${r.workloads} Workloads`;
  if (r.makespanS + 1e-9 < r.packingBoundS) return `${r.shape}: makespan ${r.makespanS} s is below the packing bound ${r.packingBoundS} s`;
  return undefined;
}

export function describePeerRun(r: PeerRun): string {
  const f = (x: number, d = 0) => x.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d });
  const cpuS = r.cpuMs / 1000;
  return (
    `${f(r.workloads)} Workloads, ${f(r.cycles)} cycles (${f(r.cycles / cpuS)}/CPU-s) nominating ${f(r.heads)} heads (${f((1000 * r.cpuMs) / r.heads, 1)} µs CPU each), ${f(r.admissions)} admissions (${f(r.admissions / cpuS)}/CPU-s), ` +
    `${f(r.preemptions)} preemptions; makespan ${f(r.makespanS, 1)} s virtual vs packing bound ${f(r.packingBoundS, 1)} s; usage ${f(r.usagePct, 1)}% of nominal; ` +
    `mean time to admission small ${f(r.meanAdmissionMs.small)} / medium ${f(r.meanAdmissionMs.medium)} / large ${f(r.meanAdmissionMs.large)} ms virtual; wall ${f(r.wallMs)} ms`
  );
}

// ---- one cycle at scale -----------------------------------------------------------------

export interface CycleSize {
  clusterQueues: number;
  clusterQueuesPerCohort: number;
  /** Per ClusterQueue, Kueue's large-scale mix (anchors §1.2). */
  small: number;
  medium: number;
  large: number;
}

/** 1,000 ClusterQueues in cohorts of 10, 50 pending Workloads each (35 small, 11 medium, 4 large). */
export const CYCLE: CycleSize = { clusterQueues: 1000, clusterQueuesPerCohort: 10, small: 35, medium: 11, large: 4 };

/** Five times that (issue 16): 5,000 ClusterQueues in cohorts of 10, 250,000 pending Workloads. */
export const CYCLE_5000: CycleSize = { ...CYCLE, clusterQueues: 5000 };

export interface CycleBench {
  /** A fresh snapshot (nothing admitted) and queues holding every pending Workload. */
  build(): { snap: AdmissionSnapshot; queues: QueueManager };
  pending: number;
}

/** The pending Workloads are read once (workloadInfo); each build only fills fresh queues. */
export function cycleShape(size: CycleSize = CYCLE): CycleBench {
  const shape: PeerRunShape = {
    name: 'large-scale',
    cohorts: size.clusterQueues / size.clusterQueuesPerCohort,
    clusterQueuesPerCohort: size.clusterQueuesPerCohort,
    nominal: 20,
    borrowingLimit: 100,
    classes: [
      { name: 'small', count: size.small, cpu: 1, runtimeMs: 150, priority: 50, everyMs: 60 },
      { name: 'medium', count: size.medium, cpu: 5, runtimeMs: 350, priority: 100, everyMs: 300 },
      { name: 'large', count: size.large, cpu: 20, runtimeMs: 700, priority: 200, everyMs: 700 },
    ],
  };
  if (!Number.isInteger(shape.cohorts))
    throw new Error(`cycle shape: ${size.clusterQueues} ClusterQueues do not split into cohorts of ${size.clusterQueuesPerCohort}`);
  const pending = submissions(shape).map((s) => ({ cq: s.clusterQueue, info: workloadInfo(s.workload) }));
  return {
    pending: pending.length,
    build() {
      const env = environment(shape);
      for (const p of pending) env.queues.add(p.cq, p.info);
      return env;
    },
  };
}

/** One cycle, with what it decided. */
export function cycleOnce(env: { snap: AdmissionSnapshot; queues: QueueManager }): { admitted: number; heads: number; preempting: number } {
  const r = schedule(env.snap, env.queues, { now: T0 + 3600, placement: {} });
  return { admitted: r.admitted, heads: r.heads, preempting: r.preempting };
}
