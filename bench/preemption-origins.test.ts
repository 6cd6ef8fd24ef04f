import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type OriginWorkload, preemptionOrigins } from './preemption-origins.ts';

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
