import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KObject } from '../api/objects.ts';
import { resourceFor } from './resources.ts';
import { humanDuration, table } from './table.ts';

describe('server-side tables', () => {
  it('renders ages as kube duration.HumanDuration does', () => {
    const s = 1000;
    const cases: [number, string][] = [
      [45 * s, '45s'],
      [119 * s, '119s'],
      [5 * 60 * s + 30 * s, '5m30s'],
      [17 * 60 * s, '17m'],
      [3 * 3600 * s + 20 * 60 * s, '3h20m'],
      [30 * 3600 * s, '30h'],
      [2 * 86400 * s + 5 * 3600 * s, '2d5h'],
      [40 * 86400 * s, '40d'],
      [(3 * 365 + 12) * 86400 * s, '3y12d'],
      [-5 * s, '<invalid>'],
    ];
    for (const [ms, want] of cases) assert.equal(humanDuration(ms), want, `${ms} ms`);
  });

  it('prints a Workload with its queue, admission and pending reason, and a Pod with its node in -o wide', () => {
    const now = Date.UTC(2026, 0, 1, 1);
    const wl = {
      apiVersion: 'kueue.x-k8s.io/v1beta2',
      kind: 'Workload',
      metadata: { name: 'w', namespace: 'd', creationTimestamp: '2026-01-01T00:00:00Z' },
      spec: { queueName: 'lq' },
      status: { conditions: [{ type: 'QuotaReserved', status: 'False', reason: 'WaitingForQuota', message: 'no room' }] },
    } as KObject;
    const t = table(resourceFor('kueue.x-k8s.io/v1beta2', 'Workload')!, [wl], { now, resourceVersion: '7' }) as {
      columnDefinitions: { name: string; priority: number }[];
      rows: { cells: unknown[] }[];
      metadata: unknown;
    };
    assert.deepEqual(
      t.columnDefinitions.map((c) => c.name),
      ['Name', 'Queue', 'Reserved in', 'Admitted', 'Finished', 'Reason', 'Age', 'Message'],
    );
    assert.deepEqual(t.rows[0]!.cells, ['w', 'lq', '', '', '', 'WaitingForQuota', '60m', 'no room']);
    assert.deepEqual(t.metadata, { resourceVersion: '7' });
    const pod = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'p', creationTimestamp: '2026-01-01T00:59:00Z' },
      spec: { nodeName: 'n1', containers: [{ name: 'c' }] },
      status: { phase: 'Running' },
    } as KObject;
    const pt = table(resourceFor('v1', 'Pod')!, [pod], { now, resourceVersion: '7' }) as {
      columnDefinitions: { name: string; priority: number }[];
      rows: { cells: unknown[] }[];
    };
    const node = pt.columnDefinitions.findIndex((c) => c.name === 'Node');
    assert.equal(pt.columnDefinitions[node]!.priority, 1);
    assert.deepEqual(pt.rows[0]!.cells.slice(0, 5), ['p', '1/1', 'Running', '0', '60s']);
    assert.equal(pt.rows[0]!.cells[node], 'n1');
  });

  it('says Ready,SchedulingDisabled for a cordoned node', () => {
    const n = {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name: 'n' },
      spec: { unschedulable: true },
      status: { conditions: [{ type: 'Ready', status: 'True' }] },
    } as KObject;
    const t = table(resourceFor('v1', 'Node')!, [n], { now: 0, resourceVersion: '1' }) as { rows: { cells: unknown[] }[] };
    assert.equal(t.rows[0]!.cells[1], 'Ready,SchedulingDisabled');
  });
});
