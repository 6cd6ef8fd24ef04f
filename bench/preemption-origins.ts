// Where the preemptions of a simulate run come from (issue 16: is the churn Kueue's policy or
// ours?). For every eviction with reason Preempted in a report: the victim's and preemptor's
// classes and whether they share a ClusterQueue, whether the preemptor was already pending
// when the victim was admitted (a lower priority admitted ahead of it), how long the victim
// ran, and how long the preemptor had waited.
//
//   npx tsx bench/preemption-origins.ts [--scale 0.1] [--requeue-batch-ms 1000]
//
// runs Kueue's baseline shape as bare Workloads (bench/simulate-bench.ts, `simulate --bare`)
// and prints the counts, the makespan and the mean time to admission per class; bench/README.md
// ("Preemptions and makespan of the bare baseline") has the figures and what they show.

import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import type { ReportWorkload } from '../src/cluster/report.ts';
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

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  const { values } = parseArgs({
    options: { scale: { type: 'string', default: '0.1' }, 'requeue-batch-ms': { type: 'string' } },
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
  const config = batch !== undefined ? { ...BENCH_CONFIG, requeueBatchMs: Number(batch) } : BENCH_CONFIG;
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
  console.log(
    JSON.stringify({ scale, makespanS: report.summary.makespan, meanAdmissionS, ...preemptionOrigins(report.workloads) }, null, 2),
  );
}
