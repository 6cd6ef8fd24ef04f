// Where the preemptions of a simulate run come from (issue 16: is the churn Kueue's policy or
// ours?). For every eviction with reason Preempted in a report: the victim's and preemptor's
// classes and whether they share a ClusterQueue, whether the preemptor was already pending
// when the victim was admitted (a lower priority admitted ahead of it), how long the victim
// ran, and how long the preemptor had waited.
//
//   npx tsx bench/preemption-origins.ts [--scale 0.1] [--shape baseline|tas] [--jobs]
//       [--requeue-batch-ms 1000] [--equivalence-hashing true|false]
//       [--pod-batch-ms 1000] [--job-sync-batch-ms 1000]
//
// runs one of Kueue's shapes (baseline by default) as bare Workloads (bench/simulate-bench.ts,
// `simulate --bare`), or with --jobs as the Jobs of `simulate.peer-*.15k` (pods, every
// controller and stand-in), and prints the counts, the makespan and the mean time to admission
// per class, how long each class held its reservation against its run time
// (reservationHolds: admission -> every pod started -> Finished), and per root cohort where
// its quota went (cohortGaps: used, of which lost to preemption and held by Workloads not
// running, idle while Workloads were pending, idle with nothing pending; the
// idle-while-pending CPU-seconds per 10 s window). The last two options change the 1 s
// batches of the Jobs path for what-if runs: the TopologyUngater's and job reconciler's
// pod-event batch (config podBatchMs, Kueue's ungateBatchPeriod) and the Job controller's
// (Kubernetes' syncJobBatchPeriod). bench/README.md ("Preemptions and makespan of the bare
// baseline", "The TAS shape as Jobs") has the figures and what they show.

import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import type { ReportQueue, ReportWorkload } from '../src/cluster/report.ts';
import { CLASS_NAMES, packingBoundSeconds } from './admission-cycle.ts';

export type OriginWorkload = Pick<ReportWorkload, 'namespace' | 'name' | 'clusterQueue' | 'submittedAt' | 'admissions' | 'evictions'>;

export interface PreemptionOrigins {
  preemptions: number;
  /** `<victim class> <- <preemptor class> <sameCQ|otherCQ>` -> count. */
  pairs: Record<string, number>;
  /** The preemptor was pending (submitted) at or before the victim's admission. */
  preemptorPendingAtVictimAdmission: number;
  /** Victim run before the preemption: `0` (admitted at the same instant), `<100ms`, `<1s`, `>=1s`. */
  victimRan: Record<string, number>;
  /** Preemptor's wait from submission to the preemption: `0`, `<100ms`, `<1s`, `>=1s`. */
  preemptorWaited: Record<string, number>;
}

const classOf = (name: string): string => CLASS_NAMES.find((c) => name.includes(`-${c}`)) ?? 'other';

const bucket = (s: number): string => (s <= 0 ? '0' : s < 0.1 ? '<100ms' : s < 1 ? '<1s' : '>=1s');

const inc = (m: Record<string, number>, k: string) => (m[k] = (m[k] ?? 0) + 1);

/** The origins of every preemption in a report's Workloads (times in seconds, as the report's). */
export function preemptionOrigins(workloads: readonly OriginWorkload[]): PreemptionOrigins {
  const byKey = new Map(workloads.map((w) => [`${w.namespace}/${w.name}`, w]));
  const out: PreemptionOrigins = { preemptions: 0, pairs: {}, preemptorPendingAtVictimAdmission: 0, victimRan: {}, preemptorWaited: {} };
  for (const w of workloads) {
    for (const ev of w.evictions) {
      if (ev.reason !== 'Preempted') continue;
      out.preemptions++;
      const p = ev.preemptor !== null ? byKey.get(ev.preemptor) : undefined;
      // The admission the eviction ended: the last one at or before it.
      const admitted = w.admissions.filter((a) => a.at <= ev.at).pop();
      const victimCq = admitted?.clusterQueue ?? w.clusterQueue;
      const same = p !== undefined && victimCq === p.clusterQueue ? 'sameCQ' : 'otherCQ';
      inc(out.pairs, `${classOf(w.name)} <- ${ev.preemptor !== null ? classOf(ev.preemptor) : 'unknown'} ${same}`);
      if (admitted) inc(out.victimRan, bucket(ev.at - admitted.at));
      if (p?.submittedAt != null) {
        inc(out.preemptorWaited, bucket(ev.at - p.submittedAt));
        if (admitted && p.submittedAt <= admitted.at) out.preemptorPendingAtVictimAdmission++;
      }
    }
  }
  return out;
}

export type GapQueue = Pick<ReportQueue, 'name' | 'cohort' | 'nominal' | 'usage'>;

/** Where a cohort's quota went over the run (CPU-seconds; the makespan times nominal is their sum). */
export interface CohortGap {
  cohort: string;
  nominal: number;
  /** Reserved and in use: the demand, plus the runs preemption cut short. */
  used: number;
  /** Part of `used` lost to preemption: each victim's CPU times how long it had run. */
  preempted: number;
  /**
   * Part of `used` reserved by finished Workloads beyond their run time (from their last
   * admission to Finished, less the run): the Job path's latency, 0 for bare Workloads.
   * Only with `runtimeOf`; 0 without.
   */
  heldNotRunning: number;
  /** Not reserved while Workloads of the cohort were pending (parked or waiting for a head slot). */
  idleWhilePending: number;
  /** Not reserved with nothing pending (before arrivals, the tail, after its last finish). */
  idleNothingPending: number;
  /** idleWhilePending per window of `windowS` seconds from 0 (CPU-seconds). */
  idleWhilePendingByWindow: number[];
}

/**
 * The quota of each root cohort over time, from a report's queue series (usage and pending
 * per ClusterQueue, step functions) up to `end`: how much was used, how much stood idle while
 * Workloads waited, and how much of the use went to runs later preempted (`cpuOf` a
 * Workload's reservation, by name).
 */
export function cohortGaps(
  queues: readonly GapQueue[],
  workloads: readonly (OriginWorkload & Partial<Pick<ReportWorkload, 'finishedAt'>>)[],
  end: number,
  cpuOf: (name: string) => number,
  windowS = 10,
  runtimeOf?: (name: string) => number,
): CohortGap[] {
  const byCohort = new Map<string, GapQueue[]>();
  for (const q of queues) {
    const c = q.cohort ?? q.name;
    byCohort.set(c, [...(byCohort.get(c) ?? []), q]);
  }
  const cohortOfQueue = new Map(queues.map((q) => [q.name, q.cohort ?? q.name]));
  const preempted = new Map<string, number>();
  for (const w of workloads) {
    for (const ev of w.evictions) {
      if (ev.reason !== 'Preempted') continue;
      const a = w.admissions.filter((x) => x.at <= ev.at).pop();
      if (!a) continue;
      const c = cohortOfQueue.get(a.clusterQueue ?? w.clusterQueue ?? '') ?? '?';
      preempted.set(c, (preempted.get(c) ?? 0) + cpuOf(w.name) * (ev.at - a.at));
    }
  }
  const held = new Map<string, number>();
  if (runtimeOf)
    for (const w of workloads) {
      const a = w.admissions.at(-1);
      if (w.finishedAt == null || !a) continue;
      const c = cohortOfQueue.get(a.clusterQueue ?? w.clusterQueue ?? '') ?? '?';
      held.set(c, (held.get(c) ?? 0) + cpuOf(w.name) * Math.max(0, w.finishedAt - a.at - runtimeOf(w.name)));
    }
  const cpu = (u: Record<string, number>) => Object.entries(u).reduce((s, [k, v]) => (k.endsWith('/cpu') ? s + v : s), 0);
  const out: CohortGap[] = [];
  for (const [cohort, qs] of [...byCohort].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    const nominal = qs.reduce((s, q) => s + cpu(q.nominal), 0);
    // Every change of any member, in time order; each member's last value holds until its next.
    const points = qs.flatMap((q, i) => q.usage.map((u) => ({ at: u.at, i, used: cpu(u.usage), pending: u.pending })));
    points.sort((a, b) => a.at - b.at);
    const used = qs.map(() => 0);
    const pending = qs.map(() => 0);
    const g: CohortGap = {
      cohort,
      nominal,
      used: 0,
      preempted: preempted.get(cohort) ?? 0,
      heldNotRunning: held.get(cohort) ?? 0,
      idleWhilePending: 0,
      idleNothingPending: 0,
      idleWhilePendingByWindow: [],
    };
    let t = 0;
    const span = (to: number) => {
      if (to <= t) return;
      const u = used.reduce((s, x) => s + x, 0);
      const p = pending.reduce((s, x) => s + x, 0);
      const idle = Math.max(0, nominal - u);
      g.used += u * (to - t);
      if (p > 0) {
        g.idleWhilePending += idle * (to - t);
        // Split across the windows the span covers.
        for (let a = t; a < to;) {
          const w = Math.floor(a / windowS);
          const b = Math.min(to, (w + 1) * windowS);
          g.idleWhilePendingByWindow[w] = (g.idleWhilePendingByWindow[w] ?? 0) + idle * (b - a);
          a = b;
        }
      } else g.idleNothingPending += idle * (to - t);
      t = to;
    };
    for (const x of points) {
      span(Math.min(x.at, end));
      used[x.i] = x.used;
      pending[x.i] = x.pending;
    }
    span(end);
    for (let w = 0; w < Math.ceil(end / windowS); w++) g.idleWhilePendingByWindow[w] = +(g.idleWhilePendingByWindow[w] ?? 0).toFixed(1);
    for (const k of ['used', 'preempted', 'heldNotRunning', 'idleWhilePending', 'idleNothingPending'] as const) g[k] = +g[k].toFixed(1);
    out.push(g);
  }
  return out;
}

export type HoldWorkload = Pick<ReportWorkload, 'name' | 'admissions' | 'startedAt' | 'finishedAt' | 'evictions'>;

/** How long the Workloads of one class held their reservation (seconds, means). */
export interface ClassHold {
  /** Finished Workloads never evicted (the ones measured). */
  workloads: number;
  /** The class's run time (what a bare Workload holds). */
  run: number;
  /** Admission to every pod started (null: no pods, bare Workloads). */
  admittedToStarted: number | null;
  /** Every pod started to Finished (null: no pods). */
  startedToFinished: number | null;
  /** Admission to Finished: how long the quota was reserved. */
  held: number;
}

/**
 * Per class (`classOf` its name), how long its finished, never evicted Workloads held their
 * reservation and where that time went, against the class's run time (`runtimeOf`).
 */
export function reservationHolds(workloads: readonly HoldWorkload[], runtimeOf: (name: string) => number): Record<string, ClassHold> {
  const acc = new Map<string, { n: number; run: number; toStart: number; started: number; toFinish: number; held: number }>();
  for (const w of workloads) {
    const a = w.admissions.at(-1);
    if (w.finishedAt == null || !a || w.evictions.length > 0) continue;
    const c = classOf(w.name);
    const e = acc.get(c) ?? { n: 0, run: runtimeOf(w.name), toStart: 0, started: 0, toFinish: 0, held: 0 };
    e.n++;
    e.held += w.finishedAt - a.at;
    if (w.startedAt != null) {
      e.started++;
      e.toStart += w.startedAt - a.at;
      e.toFinish += w.finishedAt - w.startedAt;
    }
    acc.set(c, e);
  }
  const r = (x: number) => +x.toFixed(3);
  const out: Record<string, ClassHold> = {};
  for (const c of [...acc.keys()].sort()) {
    const e = acc.get(c)!;
    out[c] = {
      workloads: e.n,
      run: e.run,
      admittedToStarted: e.started > 0 ? r(e.toStart / e.started) : null,
      startedToFinished: e.started > 0 ? r(e.toFinish / e.started) : null,
      held: r(e.held / e.n),
    };
  }
  return out;
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  const { values } = parseArgs({
    options: {
      scale: { type: 'string', default: '0.1' },
      shape: { type: 'string', default: 'baseline' },
      jobs: { type: 'boolean', default: false },
      'requeue-batch-ms': { type: 'string' },
      'equivalence-hashing': { type: 'string' },
      'pod-batch-ms': { type: 'string' },
      'job-sync-batch-ms': { type: 'string' },
    },
    strict: true,
  });
  const { PEER_BASELINE, PEER_TAS } = await import('./admission-cycle.ts');
  const { scaledShape } = await import('./admission-digest.ts');
  const { BENCH_CONFIG, peerBareObjects } = await import('./simulate-bench.ts');
  const { peerSimulationObjects } = await import('./simulate-shapes.ts');
  const { parseSimulationObjects, runSimulation } = await import('../src/cluster/simulation.ts');
  const { buildReport } = await import('../src/cluster/report.ts');
  const { allControllers } = await import('../src/controllers/index.ts');
  const { standIns } = await import('../src/cluster/index.ts');
  if (values.shape !== 'baseline' && values.shape !== 'tas') throw new Error(`--shape: baseline or tas, not ${values.shape}`);
  const scale = Number(values.scale);
  const peer = values.shape === 'tas' ? PEER_TAS : PEER_BASELINE;
  const shape = scale === 1 ? peer : scaledShape(peer, scale);
  const batch = values['requeue-batch-ms'];
  const hashing = values['equivalence-hashing'];
  const podBatch = values['pod-batch-ms'];
  const jobSync = values['job-sync-batch-ms'];
  const config = {
    ...BENCH_CONFIG,
    ...(batch !== undefined ? { requeueBatchMs: Number(batch) } : {}),
    ...(hashing !== undefined ? { schedulingEquivalenceHashing: hashing === 'true' } : {}),
    ...(podBatch !== undefined ? { podBatchMs: Number(podBatch) } : {}),
  };
  const controllers = jobSync !== undefined ? [...allControllers(), ...standIns({ jobSyncBatchMs: Number(jobSync) })] : undefined;
  const parsed = parseSimulationObjects(values.jobs ? peerSimulationObjects(shape) : peerBareObjects(shape));
  const report = buildReport(await runSimulation(parsed.objects, { config, ...(controllers ? { controllers } : {}) }));
  const sums = new Map<string, { n: number; s: number }>();
  for (const w of report.workloads) {
    if (w.admittedAt === null || w.submittedAt === null) continue;
    const e = sums.get(classOf(w.name)) ?? { n: 0, s: 0 };
    e.n++;
    e.s += w.admittedAt - w.submittedAt;
    sums.set(classOf(w.name), e);
  }
  const meanAdmissionS = Object.fromEntries(
    CLASS_NAMES.map((c) => [c, sums.has(c) ? +(sums.get(c)!.s / sums.get(c)!.n).toFixed(3) : null]),
  );
  const classOfShape = (name: string) => shape.classes.find((c) => c.name === classOf(name));
  const cpuOf = (name: string) => classOfShape(name)?.cpu ?? 0;
  const runtimeOf = (name: string) => (classOfShape(name)?.runtimeMs ?? 0) / 1000;
  const makespanS = report.summary.makespan ?? 0;
  const gaps = cohortGaps(report.queues, report.workloads, makespanS, cpuOf, 10, runtimeOf);
  // What the makespan would be with every cohort's quota packed perfectly: its demand
  // (shape.classes' run times, packingBoundSeconds) and its reservations as held.
  const boundS = +packingBoundSeconds(shape).toFixed(3);
  const heldBoundS = +Math.max(0, ...gaps.map((g) => g.used / g.nominal)).toFixed(3);
  console.log(
    JSON.stringify(
      {
        shape: shape.name,
        jobs: values.jobs,
        scale,
        makespanS,
        boundS,
        overBound: +(makespanS / boundS).toFixed(2),
        heldBoundS,
        overHeldBound: heldBoundS > 0 ? +(makespanS / heldBoundS).toFixed(2) : null,
        meanAdmissionS,
        reservations: reservationHolds(report.workloads, runtimeOf),
        ...preemptionOrigins(report.workloads),
        cohorts: gaps,
      },
      null,
      2,
    ),
  );
}
