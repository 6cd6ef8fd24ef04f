import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ReportWorkload } from '../../cluster/report.ts';
import { workloadHistory } from './history.ts';

const base: ReportWorkload = {
  namespace: 'team',
  name: 'j',
  kind: 'Job',
  apiVersion: 'batch/v1',
  queue: 'lq',
  clusterQueue: 'q',
  status: 'Finished',
  submittedAt: 0,
  admittedAt: 60,
  startedAt: 61,
  finishedAt: 3600,
  pendingReason: null,
  result: 'Succeeded: done',
  workloads: ['job-j-1'],
  admissions: [],
  pendingReasons: [],
  pendingReasonsDropped: 0,
  evictions: [],
  placement: [],
  pods: [],
  events: [],
  eventsDropped: 0,
  podGroups: [],
  errors: [],
};

describe('report viewer: a workload page tells why it waited and who preempted it', () => {
  it('admissions, pending reasons, evictions with the preemptor, folded Events and PodGroup status are tables', () => {
    const w: ReportWorkload = {
      ...base,
      admissions: [
        {
          at: 60,
          workload: 'job-j-1',
          clusterQueue: 'q',
          placement: [{ podSet: 'main', flavor: 'gb200', count: 2, levels: ['rack'], domains: ['r1 x2'] }],
        },
        {
          at: 900,
          workload: 'job-j-1',
          clusterQueue: 'q',
          placement: [{ podSet: 'main', flavor: 'gb200', count: 2, levels: ['rack'], domains: ['r2 x2'] }],
        },
      ],
      pendingReasons: [
        { at: 0, workload: 'job-j-1', reason: 'Pending: insufficient unused quota' },
        {
          at: 600,
          workload: 'job-j-1',
          reason: 'PendingEvaluation: Preempted to accommodate a workload (UID: u-9) due to prioritization in the ClusterQueue',
        },
      ],
      evictions: [
        { at: 600, workload: 'job-j-1', reason: 'Preempted', message: 'Preempted to accommodate ...', preemptor: 'team/job-big-2' },
      ],
      events: [
        { kind: 'Workload', type: 'Normal', reason: 'Admitted', count: 2, first: 60, last: 900, message: 'Admitted by ClusterQueue q' },
      ],
      eventsDropped: 3,
      podGroups: [
        {
          name: 'pg',
          apiVersion: 'scheduling.sigs.k8s.io/v1alpha1',
          status: { phase: 'Running', running: 2 },
          history: [{ at: 61, phase: 'Running', running: 2 }],
          historyDropped: 0,
        },
      ],
    };
    const t = new Map(workloadHistory(w).map((x) => [x.id, x]));
    assert.deepEqual([...t.keys()], ['h-admissions', 'h-pending', 'h-evictions', 'h-events', 'h-podgroups']);
    assert.deepEqual(t.get('h-admissions')!.rows[1], ['15m', 'job-j-1', 'q', 'main: 2 on gb200 (r2 x2)']);
    assert.deepEqual(
      t.get('h-pending')!.rows.map((r) => r[0]),
      ['0s', '10m'],
    );
    assert.deepEqual(t.get('h-evictions')!.rows[0]!.slice(0, 4), ['10m', 'job-j-1', 'Preempted', 'team/job-big-2']);
    assert.deepEqual(t.get('h-events')!.rows[0]!.slice(0, 6), ['Workload', 'Normal', 'Admitted', '2', '1m', '15m']);
    assert.match(t.get('h-events')!.caption, /3 of further reasons not kept/);
    assert.deepEqual(t.get('h-podgroups')!.rows[0], ['pg', '1m1s', 'Running', '–', '2', '–', '–', '–', '–']);
  });

  it('a refused job shows why; a report from an older topoqueue (no history fields) shows no table', () => {
    assert.deepEqual(
      workloadHistory({ ...base, status: 'Failed', errors: ['Job/team/j: spec.x: bad'] }).map((x) => [x.id, x.rows]),
      [['h-errors', [['Job/team/j: spec.x: bad']]]],
    );
    const old = { ...base } as Partial<ReportWorkload>;
    delete old.admissions;
    delete old.pendingReasons;
    delete old.events;
    delete old.podGroups;
    assert.deepEqual(workloadHistory(old as ReportWorkload), []);
  });
});
