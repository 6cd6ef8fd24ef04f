import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  cohortGaps,
  type GapQueue,
  type HoldWorkload,
  type OriginWorkload,
  preemptionOrigins,
  reservationHolds,
} from './preemption-origins.ts';

const adm = (at: number, clusterQueue: string) => ({ at, workload: '', clusterQueue, placement: [] });
const preempted = (at: number, preemptor: string) => ({ at, workload: '', reason: 'Preempted', message: '', preemptor });

describe('preemptionOrigins', () => {
  it('classifies each preemption: classes and ClusterQueues, who was pending first, how long the victim ran', () => {
    const ws: OriginWorkload[] = [
      // Admitted at 1.0 in cq-a, preempted at 1.0 by a medium of cq-b pending since 0.5: a
      // lower priority admitted while the preemptor waited, taken back at the same instant.
      {
        namespace: 'd',
        name: 'x-small-1',
        clusterQueue: 'cq-a',
        submittedAt: 0,
        admissions: [adm(1, 'cq-a')],
        evictions: [preempted(1, 'd/x-medium-1')],
      },
      { namespace: 'd', name: 'x-medium-1', clusterQueue: 'cq-b', submittedAt: 0.5, admissions: [adm(2, 'cq-b')], evictions: [] },
      // Admitted at 2, then again at 3 (after a first preemption) and preempted at 3.05 by a
      // large of its own ClusterQueue that arrived at 3.05.
      {
        namespace: 'd',
        name: 'x-medium-2',
        clusterQueue: 'cq-a',
        submittedAt: 1,
        admissions: [adm(2, 'cq-a'), adm(3, 'cq-a')],
        evictions: [preempted(2.5, 'd/x-large-1'), preempted(3.05, 'd/x-large-1')],
      },
      { namespace: 'd', name: 'x-large-1', clusterQueue: 'cq-a', submittedAt: 2.5, admissions: [adm(3.05, 'cq-a')], evictions: [] },
      // Another eviction reason is not a preemption.
      {
        namespace: 'd',
        name: 'x-small-2',
        clusterQueue: 'cq-a',
        submittedAt: 0,
        admissions: [adm(0, 'cq-a')],
        evictions: [{ ...preempted(1, 'd/x-large-1'), reason: 'NodeFailures' }],
      },
    ];
    assert.deepEqual(preemptionOrigins(ws), {
      preemptions: 3,
      pairs: { 'small <- medium otherCQ': 1, 'medium <- large sameCQ': 2 },
      preemptorPendingAtVictimAdmission: 2,
      victimRan: { '0': 1, '<1s': 1, '<100ms': 1 },
      preemptorWaited: { '<1s': 2, '0': 1 },
    });
  });
});

describe('reservationHolds', () => {
  it('per class, the mean time from admission to every pod started, from then to Finished, and the whole reservation; evicted or unfinished Workloads are left out', () => {
    const w = (name: string, admittedAt: number, startedAt: number | null, finishedAt: number | null, evicted = false): HoldWorkload => ({
      name,
      admissions: [adm(admittedAt, 'cq-a')],
      startedAt,
      finishedAt,
      evictions: evicted ? [preempted(admittedAt + 0.1, 'd/x-large-1')] : [],
    });
    const runtimeOf = (name: string) => (name.includes('-small') ? 0.2 : 1);
    const holds = reservationHolds(
      [
        // The Jobs path: the ungater's 1 s batch, the run, the Job controller's batch.
        w('x-small-1', 10, 11, 12),
        w('x-small-2', 20, 21, 22.5),
        w('x-small-3', 30, 31, null),
        w('x-small-4', 40, 41, 42, true),
        // A bare Workload: no pods, held for its run time.
        w('x-large-1', 5, null, 6),
      ],
      runtimeOf,
    );
    assert.deepEqual(holds, {
      large: { workloads: 1, run: 1, admittedToStarted: null, startedToFinished: null, held: 1 },
      small: { workloads: 2, run: 0.2, admittedToStarted: 1, startedToFinished: 1.25, held: 2.25 },
    });
  });
});

describe('cohortGaps', () => {
  it('splits a cohort quota into used (of which preempted and held beyond the run time), idle while pending, idle with nothing pending', () => {
    const queues: GapQueue[] = [
      {
        name: 'cq-a',
        cohort: 'c',
        nominal: { 'f/cpu': 10 },
        usage: [
          { at: 0, admitted: 0, pending: 1, usage: {} },
          { at: 1, admitted: 1, pending: 0, usage: { 'f/cpu': 4 } },
          { at: 3, admitted: 0, pending: 0, usage: {} },
        ],
      },
    ];
    // Admitted at 1, finished at 3 after a run of 0.5 s: 4 CPU x 1.5 s held without running.
    const ws = [
      {
        namespace: 'd',
        name: 'x-medium-1',
        clusterQueue: 'cq-a',
        submittedAt: 0,
        admissions: [adm(1, 'cq-a')],
        evictions: [],
        finishedAt: 3,
      },
    ];
    const [g] = cohortGaps(
      queues,
      ws,
      4,
      () => 4,
      10,
      () => 0.5,
    );
    assert.deepEqual(g, {
      cohort: 'c',
      nominal: 10,
      used: 8,
      preempted: 0,
      heldNotRunning: 6,
      idleWhilePending: 10,
      idleNothingPending: 22,
      idleWhilePendingByWindow: [10],
    });
    assert.equal(cohortGaps(queues, ws, 4, () => 4)[0]!.heldNotRunning, 0, 'without run times nothing is counted as held');
  });
});
