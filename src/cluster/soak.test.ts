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
//      whose ClusterQueue's nominal quota covers it on some flavor it can use, Finished
//      (the legitimate exceptions are in excused()).
// 20 seeds by default; SOAK_SEEDS / SOAK_FIRST run others. Findings are at the end, as todos.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { GangAnnotation } from '../api/gang.ts';
import { HOSTNAME_LABEL, KueueLabel, TopoqueueAnnotation } from '../api/keys.ts';
import type { KObject } from '../api/objects.ts';
import { cq } from '../testing/admission.ts';
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
  assert.deepEqual(
    parsed.errors.map((e) => e.message),
    [],
    `seed ${seed}: the generated input parses`,
  );
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
      if (e.evictions.length > 0 || lost.length > 0)
        out.set(key(u), `plain pods stopped (${[...e.evictions.map((x) => x.reason), ...lost].join(', ')}) are never recreated`);
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
    if (entry.status !== 'Finished')
      stuck.push(
        `${u.kind} ${u.namespace}/${u.name} (${u.pods} x ${u.cpu} cpu, ${u.tas}, ${u.clusterQueue}): ${entry.status}${entry.pendingReason ? ` - ${entry.pendingReason}` : ''}${entry.result ? ` - ${entry.result}` : ''}`,
      );
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
    assert.deepEqual(
      xs.slice(0, 5),
      Array.from({ length: 5 }, () => b.float()),
    );
    assert.ok(xs.every((x) => x >= 0 && x < 1));
    assert.ok(Math.abs(xs.reduce((s, x) => s + x, 0) / xs.length - 0.5) < 0.05);
    const c = new Rng(43);
    assert.notDeepEqual(
      xs.slice(0, 5),
      Array.from({ length: 5 }, () => c.float()),
    );
  });

  for (const seed of SEEDS) {
    it(`seed ${seed}: no invariant violation, no controller error, every workload that fits finishes`, async () => {
      check(await soak(seed));
    });
  }
});

describe('soak findings', () => {
  // Found by seeds 2122297, 63429, 166376, 736544, 6524917, 9304486, 11339669 of the first
  // generator (same mechanism each time); reduced to one node, one queue, one gang.
  it(
    'a preempted gang is not re-admitted while its old pods are still bound and running (AdmittedTwice: more bound pods than admitted)',
    {
      todo:
        "pod-group-controller evict() deletes the gang's pods and, in the same reconcile, clears its reservation " +
        '(isRunning excludes deleting pods: FastQuotaReleaseInPodIntegration, kueue-core §1e IsActive); ' +
        'the scheduler re-admits the gang at once with 4 of 8 pods while most of its old pods are still bound and Running ' +
        '(the kubelet fails them one per turn), the new admission even gets PodsReady=True from them, and invariants.ts reports ' +
        'AdmittedTwice "6 pods of PodSet ... are bound, more than the 4 it was admitted with"',
    },
    async () => {
      const pod = (i: number): KObject =>
        ({
          apiVersion: 'v1',
          kind: 'Pod',
          metadata: {
            name: `g-${i}`,
            namespace: 'team',
            labels: { [KueueLabel.QueueName]: 'lq', [KueueLabel.PriorityClass]: 'low' },
            annotations: {
              [TopoqueueAnnotation.RunDuration]: '10m',
              [GangAnnotation.Name]: 'g',
              [GangAnnotation.MinAvailable]: '2',
              [GangAnnotation.TotalNumber]: '8',
            },
          },
          spec: { restartPolicy: 'Never', containers: [{ name: 'c', resources: { requests: { cpu: '1' } } }] },
        }) as KObject;
      const objects: KObject[] = [
        {
          apiVersion: 'v1',
          kind: 'Node',
          metadata: { name: 'n1', labels: { [HOSTNAME_LABEL]: 'n1' } },
          spec: {},
          status: { allocatable: { cpu: '16', pods: '110' }, conditions: [{ type: 'Ready', status: 'True' }] },
        } as KObject,
        { apiVersion: 'kueue.x-k8s.io/v1beta2', kind: 'ResourceFlavor', metadata: { name: 'default' }, spec: {} } as KObject,
        cq('cq').quota('default', { cpu: '10' }).preemption({ withinClusterQueue: 'LowerPriority' }).build() as KObject,
        {
          apiVersion: 'kueue.x-k8s.io/v1beta2',
          kind: 'LocalQueue',
          metadata: { name: 'lq', namespace: 'team' },
          spec: { clusterQueue: 'cq' },
        } as KObject,
        { apiVersion: 'kueue.x-k8s.io/v1beta2', kind: 'WorkloadPriorityClass', metadata: { name: 'low' }, value: 100 } as KObject,
        { apiVersion: 'kueue.x-k8s.io/v1beta2', kind: 'WorkloadPriorityClass', metadata: { name: 'high' }, value: 1000 } as KObject,
        ...[0, 1, 2, 3, 4, 5, 6, 7].map(pod),
        // At 60 s: 6 cpu at high priority; 2 are free, so the gang (8 x 1 cpu) is preempted.
        {
          apiVersion: 'batch/v1',
          kind: 'Job',
          metadata: {
            name: 'urgent',
            namespace: 'team',
            labels: { [KueueLabel.QueueName]: 'lq', [KueueLabel.PriorityClass]: 'high' },
            annotations: { [TopoqueueAnnotation.SubmitAt]: '60s' },
          },
          spec: {
            parallelism: 1,
            completions: 1,
            template: {
              metadata: { annotations: { [TopoqueueAnnotation.RunDuration]: '1m' } },
              spec: { restartPolicy: 'Never', containers: [{ name: 'c', resources: { requests: { cpu: '6' } } }] },
            },
          },
        } as KObject,
      ];
      const run = await runSimulation(parseSimulationObjects(objects).objects, { idleLimitMs: 3_600_000 });
      const report = buildReport(run);
      assert.equal(report.workloads.find((w) => w.name === 'g')?.evictions[0]?.reason, 'Preempted', 'the gang was preempted');
      assert.deepEqual(report.violations, []);
    },
  );
});
