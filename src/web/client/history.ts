// A workload's history in the report viewer, as tables: every admission (when, where), its
// pending reasons with when each started, its evictions with the preemptor, its Events
// folded by reason, its PodGroups' status over time, and why the input was refused. Pure
// (rows of text), so that the page and the tests read the same words.

import type { ReportWorkload } from '../../cluster/report.ts';
import { duration } from './format.ts';

export interface HistoryTable {
  id: string;
  caption: string;
  head: string[];
  rows: string[][];
}

const at = (s: number | null) => (s === null ? '–' : duration(s));
const opt = (v: string | number | undefined) => (v === undefined ? '–' : String(v));

/** The workload's history tables; a table with no row is left out. Reports from older topoqueues lack these fields: no table. */
export function workloadHistory(w: ReportWorkload): HistoryTable[] {
  const tables: HistoryTable[] = [];
  const add = (t: HistoryTable) => {
    if (t.rows.length > 0) tables.push(t);
  };
  if (w.errors.length > 0) add({ id: 'h-errors', caption: 'refused (never admitted)', head: ['why'], rows: w.errors.map((e) => [e]) });
  add({
    id: 'h-admissions',
    caption: 'admissions',
    head: ['at', 'Workload', 'ClusterQueue', 'where'],
    rows: (w.admissions ?? []).map((a) => [
      at(a.at),
      a.workload,
      a.clusterQueue ?? '–',
      a.placement
        .map((p) => `${p.podSet}: ${p.count} on ${p.flavor ?? '–'}${p.domains.length > 0 ? ` (${p.domains.join(', ')})` : ''}`)
        .join('; '),
    ]),
  });
  const pending = w.pendingReasons ?? [];
  add({
    id: 'h-pending',
    caption: `pending reasons, each from when it started${w.pendingReasonsDropped ? ` (${w.pendingReasonsDropped} later change(s) not kept)` : ''}`,
    head: ['since', 'Workload', 'reason'],
    rows: pending.map((p) => [at(p.at), p.workload, p.reason]),
  });
  add({
    id: 'h-evictions',
    caption: 'evictions',
    head: ['at', 'Workload', 'reason', 'preempted by', 'message'],
    rows: w.evictions.map((e) => [at(e.at), e.workload, e.reason, e.preemptor ?? '–', e.message]),
  });
  add({
    id: 'h-events',
    caption: `Events, folded by reason${w.eventsDropped ? ` (${w.eventsDropped} of further reasons not kept)` : ''}`,
    head: ['object', 'type', 'reason', 'count', 'first', 'last', 'last message'],
    rows: (w.events ?? []).map((e) => [e.kind, e.type, e.reason, String(e.count), at(e.first), at(e.last), e.message]),
  });
  add({
    id: 'h-podgroups',
    caption: 'PodGroup status over time',
    head: ['PodGroup', 'at', 'phase', 'scheduled', 'running', 'succeeded', 'failed', 'occupiedBy', 'scheduleStartTime'],
    rows: (w.podGroups ?? []).flatMap((g) =>
      g.history.map((p) => [
        g.name,
        at(p.at),
        opt(p.phase),
        opt(p.scheduled),
        opt(p.running),
        opt(p.succeeded),
        opt(p.failed),
        opt(p.occupiedBy),
        opt(p.scheduleStartTime),
      ]),
    ),
  });
  return tables;
}
