// An invariant-checked random soak of the whole embedded cluster in virtual time.
//
// Per seed (mulberry32, printed in every failure):
//   1. generate a scenario: a cluster of 4-30 nodes in blocks and racks (a TAS pool, and
//      sometimes a plain pool with a flavor without topology), 1-3 ClusterQueues with random
//      quotas, cohort, borrowing limits and preemption, priority classes, and a random mix of
//      Jobs (required / preferred / no topology), JobSets, plain-Pod groups and Koordinator
//      gangs with random sizes, priorities, submit times and run durations, plus random
//      SimulationEvents (NotReady / Ready, Taint / Untaint, Cordon / Uncordon, Delete);
//   2. simulate it (runSimulation + buildReport, as `topoqueue simulate` does);
//   3. assert: no invariant violation, no controller error, no refused object, the run stops
//      by itself (idle or the idle limit), and every workload that fits the cluster as it is
//      at the end (nodes deleted, left NotReady, cordoned or tainted are not counted) and
//      whose ClusterQueue's nominal quota covers it on some flavor it can use, Finished.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { cannotRun, generateScenario, Rng, type Scenario, type Unit } from '../testing/soak.ts';
import { buildReport, type SimulationReport } from './report.ts';
import { parseSimulationObjects, runSimulation } from './simulation.ts';

interface SoakResult {
  report: SimulationReport;
  scenario: Scenario;
}

async function soak(seed: number): Promise<SoakResult> {
  const scenario = generateScenario(seed);
  const parsed = parseSimulationObjects(scenario.objects);
  assert.deepEqual(parsed.errors.map((e) => e.message), [], `seed ${seed}: the generated input parses`);
  const run = await runSimulation(parsed.objects, { idleLimitMs: 2 * 24 * 3_600_000, fullCheckEvery: 500 });
  return { report: buildReport(run), scenario };
}

/**
 * Why a workload may legitimately never finish, or undefined when it must:
 * - it cannot run even alone on what is left of the cluster (cannotRun);
 * - a plain-Pod group or gang that was evicted or lost a pod (Failed, or deleted with its
 *   node): nothing recreates plain pods (KEP-976: preemption deletes all pods of the
 *   workload), so it waits for replacements that never come;
 * - a gang that timed out (not satisfied within its waiting time): it leaves the queue until
 *   the user acts (docs/design.md "Waiting time");
 * - it sits in a StrictFIFO ClusterQueue behind one of those (the head blocks the queue).
 */
function excused(s: Scenario, report: SimulationReport): Map<string, string> {
  const out = new Map<string, string>();
  const key = (u: Unit) => `${u.kind} ${u.namespace}/${u.name}`;
  const entry = (u: Unit) => report.workloads.find((w) => w.kind === u.kind && w.name === u.name && w.namespace === u.namespace);
  for (const u of s.units) {
    const why = cannotRun(s, u);
    if (why !== undefined) {
      out.set(key(u), why);
      continue;
    }
    const e = entry(u);
    if (u.kind === 'Gang' && e?.pendingReason?.startsWith('GangTimeout')) {
      out.set(key(u), 'gang timed out: it waits for the user (docs/design.md, "Waiting time")');
      continue;
    }
    if ((u.kind === 'Pod group' || u.kind === 'Gang') && e) {
      const lost = e.pods.filter((p) => p.phase === 'Failed' || p.phase === 'Deleted').map((p) => `${p.name} ${p.phase}`);
      if (e.evictions.length > 0 || lost.length > 0) out.set(key(u), `plain pods stopped (${[...e.evictions.map((x) => x.reason), ...lost].join(', ')}) are never recreated`);
    }
  }
  for (const u of s.units) {
    if (out.has(key(u)) || !s.queues.get(u.clusterQueue)!.strictFIFO) continue;
    const blocker = s.units.find((o) => o.clusterQueue === u.clusterQueue && out.has(key(o)));
    if (blocker) out.set(key(u), `StrictFIFO ${u.clusterQueue}: may wait behind ${key(blocker)}`);
  }
  return out;
}

function check({ report, scenario }: SoakResult): void {
  const seed = scenario.seed;
  const at = `seed ${seed} (${scenario.summary})`;
  assert.deepEqual(report.violations, [], `${at}: invariant violations`);
  assert.equal(report.violationsDropped, 0, `${at}: violations dropped`);
  assert.deepEqual(report.controllerErrors, [], `${at}: controller errors`);
  assert.deepEqual(report.refused, [], `${at}: refused objects`);
  assert.ok(report.run.stop === 'idle' || report.run.stop === 'limit', `${at}: the run stops by itself, got ${report.run.stop}`);
  const excuses = excused(scenario, report);
  const stuck: string[] = [];
  for (const u of scenario.units) {
    const entry = report.workloads.find((w) => w.kind === u.kind && w.name === u.name && w.namespace === u.namespace);
    assert.ok(entry, `${at}: ${u.kind} ${u.namespace}/${u.name} is in the report`);
    if (excuses.has(`${u.kind} ${u.namespace}/${u.name}`)) continue;
    if (entry.status !== 'Finished') stuck.push(`${u.kind} ${u.namespace}/${u.name} (${u.pods} x ${u.cpu} cpu, ${u.tas}, ${u.clusterQueue}): ${entry.status}${entry.pendingReason ? ` - ${entry.pendingReason}` : ''}${entry.result ? ` - ${entry.result}` : ''}`);
  }
  assert.deepEqual(stuck, [], `${at}: workloads that fit did not finish (run stopped: ${report.run.stop} at ${report.run.end}s)`);
}

// 20 seeds by default (about 6 s); SOAK_SEEDS=<n> [SOAK_FIRST=<seed>] runs n seeds from another start.
const SEED_COUNT = Number(process.env.SOAK_SEEDS ?? 20);
const FIRST_SEED = Number(process.env.SOAK_FIRST ?? 1000);
const SEEDS = Array.from({ length: SEED_COUNT }, (_, i) => FIRST_SEED + i * 7919);

describe('random soak of the embedded cluster (virtual time, seeded)', () => {
  it('mulberry32 is deterministic per seed and spread over [0, 1)', () => {
    const a = new Rng(42);
    const b = new Rng(42);
    const xs = Array.from({ length: 1000 }, () => a.float());
    assert.deepEqual(xs.slice(0, 5), Array.from({ length: 5 }, () => b.float()));
    assert.ok(xs.every((x) => x >= 0 && x < 1));
    assert.ok(Math.abs(xs.reduce((s, x) => s + x, 0) / xs.length - 0.5) < 0.05);
    const c = new Rng(43);
    assert.notDeepEqual(xs.slice(0, 5), Array.from({ length: 5 }, () => c.float()));
  });

  for (const seed of SEEDS) {
    it(`seed ${seed}: no invariant violation, no controller error, every workload that fits finishes`, async () => {
      check(await soak(seed));
    });
  }
});

describe('soak findings', () => {
  it(
    'seed 2122297: a preempted gang re-admitted partially at once while its old pods are still terminating',
    {
      todo:
        'pod-group-controller releases a preempted gang\'s reservation as soon as its pods are deleting (isRunning excludes deleting pods: FastQuotaReleaseInPodIntegration, kueue-core §1e IsActive) and before the kubelet marked them Failed; the scheduler re-admits gang-1 in the same instant with 3 of 5 pods while its 5 old pods are still bound and Running; invariants.ts counts deleting pods in "more bound pods than admitted" and reports AdmittedTwice at 1132 s',
    },
    async () => {
      check(await soak(2122297));
    },
  );
});
