// Where the preemptions of a simulate run come from (issue 16: is the churn Kueue's policy or
// ours?). For every eviction with reason Preempted in a report: the victim's and preemptor's
// classes and whether they share a ClusterQueue, whether the preemptor was already pending
// when the victim was admitted (a lower priority admitted ahead of it), how long the victim
// ran, and how long the preemptor had waited.
//
//   npx tsx bench/preemption-origins.ts [--scale 0.1] [--requeue-batch-ms 1000] [--equivalence-hashing true|false]
//
// runs Kueue's baseline shape as bare Workloads (bench/simulate-bench.ts, `simulate --bare`)
// and prints the counts, the makespan and the mean time to admission per class, and per root
// cohort where its quota went (cohortGaps: used, of which lost to preemption, idle while
// Workloads were pending, idle with nothing pending; the idle-while-pending CPU-seconds per
// 10 s window); bench/README.md ("Preemptions and makespan of the bare baseline") has the
// figures and what they show.

import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import type { ReportQueue, ReportWorkload } from '../src/cluster/report.ts';
import { CLASS_NAMES } from './admission-cycle.ts';

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
  workloads: readonly OriginWorkload[],
  end: number,
  cpuOf: (name: string) => number,
  windowS = 10,
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
    for (const k of ['used', 'preempted', 'idleWhilePending', 'idleNothingPending'] as const) g[k] = +g[k].toFixed(1);
    out.push(g);
  }
  return out;
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  const { values } = parseArgs({
    options: {
      scale: { type: 'string', default: '0.1' },
      'requeue-batch-ms': { type: 'string' },
      'equivalence-hashing': { type: 'string' },
    },
    strict: true,
  });
  const { PEER_BASELINE } = await import('./admission-cycle.ts');
  const { scaledShape } = await import('./admission-digest.ts');
  const { BENCH_CONFIG, peerBareObjects } = await import('./simulate-bench.ts');
  const { parseSimulationObjects, runSimulation } = await import('../src/cluster/simulation.ts');
  const { buildReport } = await import('../src/cluster/report.ts');
  const scale = Number(values.scale);
  const shape = scale === 1 ? PEER_BASELINE : scaledShape(PEER_BASELINE, scale);
  const batch = values['requeue-batch-ms'];
  const hashing = values['equivalence-hashing'];
  const config = {
    ...BENCH_CONFIG,
    ...(batch !== undefined ? { requeueBatchMs: Number(batch) } : {}),
    ...(hashing !== undefined ? { schedulingEquivalenceHashing: hashing === 'true' } : {}),
  };
  const parsed = parseSimulationObjects(peerBareObjects(shape));
  const report = buildReport(await runSimulation(parsed.objects, { config }));
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
  const cpuOf = (name: string) => PEER_BASELINE.classes.find((c) => c.name === classOf(name))?.cpu ?? 0;
  const gaps = cohortGaps(report.queues, report.workloads, report.summary.makespan ?? 0, cpuOf);
  console.log(
    JSON.stringify(
      { scale, makespanS: report.summary.makespan, meanAdmissionS, ...preemptionOrigins(report.workloads), cohorts: gaps },
      null,
      2,
    ),
  );
}
