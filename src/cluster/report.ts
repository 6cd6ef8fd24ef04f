// The simulation report (docs/simulate.md documents every field) and its human summary.
//
// buildReport: the timeline (timeline.ts), the checker's violations and the final store
// state in, one JSON-ready object out:
// 1. one entry per submitted workload (a Job, a JobSet, a plain-Pod group, a gang...),
//    with its Workloads' times folded: admitted / started / finished when all of its
//    Workloads are; status the least advanced of them;
// 2. queues: usage over time per ClusterQueue, with its nominal quota;
// 3. utilization of the whole cluster over time and its mean over the run;
// 4. violations, refusals and the controllers' logged errors.
// Every time is seconds from the start, every list in a fixed order, resource amounts in
// plain units (cpu in cores, memory in bytes): the same input gives the same bytes.

import { TopoqueueApiVersion } from '../api/api-versions.ts';
import { KueueLabel } from '../api/keys.ts';
import type { PodSetTopologyRequest, Workload } from '../api/objects.ts';
import { parseQuantity } from '../api/quantity.ts';
import { resourceAmount } from '../api/resources.ts';
import { formatTime } from '../api/time.ts';
import { podSetGroupOffset } from '../placement/ungate-plan.ts';
import { compareStrings } from '../api/values.ts';
import { decodeAssignment } from '../placement/tas-usage.ts';
import { topologyViews } from '../placement/topology-views.ts';
import type { HyperNode } from '../api/volcano-objects.ts';
import type { Node, PodSet, PodSetAssignment, ResourceFlavor, Topology } from '../api/objects.ts';
import { nodeInfoFromNode, type NodeInfo } from '../topology/source.ts';
import type { Violation } from './invariants.ts';
import { pendingExplainer } from './report-explain.ts';
import type { SimulationRun } from './simulation.ts';
import type { EntryRecord, EventFold, PodGroupPoint, PodGroupRecord, PodRecord, SeriesPoint, WorkloadRecord } from './timeline.ts';
import { entryObjects } from './timeline.ts';

export const REPORT_API_VERSION = TopoqueueApiVersion;

export const WorkloadStatus = {
  Finished: 'Finished',
  Admitted: 'Admitted',
  Pending: 'Pending',
  Evicted: 'Evicted',
  Failed: 'Failed',
} as const;
export type WorkloadStatus = (typeof WorkloadStatus)[keyof typeof WorkloadStatus];

export interface ReportEviction {
  at: number;
  workload: string;
  reason: string;
  message: string;
  /** A preemption: the preemptor Workload's `namespace/name` (as `plan`'s `topoqueue.io/preemptor` annotation); else null. */
  preemptor: string | null;
}

/**
 * One admission of one of its Workloads: when, by which ClusterQueue, and where per PodSet,
 * each domain as one string (`<value per level, joined by />` x<count>) to keep it small.
 */
export interface ReportAdmission {
  at: number;
  workload: string;
  clusterQueue: string | null;
  placement: { podSet: string; flavor: string | null; count: number; levels: string[]; domains: string[] }[];
}

/** Events about an object, folded by kind, type and reason (the timeline's fold as it is). */
export type ReportEvent = EventFold;

/** PodGroup status as the controllers wrote it (fields not written are absent): the timeline's point without its time. */
export type ReportPodGroupStatus = Omit<PodGroupPoint, 'at'>;

export interface ReportPodGroup {
  name: string;
  apiVersion: string;
  /** At the end of the run. */
  status: ReportPodGroupStatus;
  /** One point per instant the status changed (the first ones and the last, see historyDropped). */
  history: (ReportPodGroupStatus & { at: number })[];
  historyDropped: number;
}

export interface ReportHyperNode {
  name: string;
  tier: number | null;
  /** At the end (null: not written, or the HyperNode was deleted). */
  nodeCount: number | null;
  deleted: boolean;
  history: { at: number; nodeCount: number | null }[];
}

export interface ReportPlacement {
  workload: string;
  podSet: string;
  flavor: string | null;
  count: number;
  levels: string[];
  domains: { values: string[]; count: number }[];
}

export interface ReportPod {
  name: string;
  workload: string;
  podSet: string | null;
  node: string | null;
  rank: number | null;
  phase: string;
}

export interface ReportWorkload {
  namespace: string;
  name: string;
  kind: string;
  apiVersion: string;
  queue: string | null;
  clusterQueue: string | null;
  status: WorkloadStatus;
  submittedAt: number | null;
  admittedAt: number | null;
  startedAt: number | null;
  finishedAt: number | null;
  pendingReason: string | null;
  /** Finished or Failed: the Finished condition's reason and message. */
  result: string | null;
  workloads: string[];
  /** Every admission of its Workloads, by time. */
  admissions: ReportAdmission[];
  /** Each distinct consecutive pending reason of its Workloads with when it started, by time. */
  pendingReasons: { at: number; workload: string; reason: string }[];
  /** Pending reasons beyond the first MAX_PENDING_REASONS of a Workload. */
  pendingReasonsDropped: number;
  evictions: ReportEviction[];
  placement: ReportPlacement[];
  pods: ReportPod[];
  /** Events about its objects, folded by kind, type and reason, by first time. */
  events: ReportEvent[];
  /** Events of kinds, types and reasons beyond the first MAX_EVENT_FOLDS. */
  eventsDropped: number;
  /** Its PodGroups (Volcano, Koordinator, scheduler-plugins), by name. */
  podGroups: ReportPodGroup[];
  errors: string[];
  /** Pending at the end: why, as `plan --explain` words it (report-explain.ts; the first 50 pending only). */
  explain?: string;
}

export interface ReportQueue {
  name: string;
  cohort: string | null;
  /** Nominal quota, `flavor/resource` -> amount. */
  nominal: Record<string, number>;
  usage: { at: number; admitted: number; pending: number; usage: Record<string, number> }[];
}

/** The cluster's nodes at the end of the run and where each sits, per TAS flavor (for pictures). */
export interface ReportTopology {
  /** Every node at the end, by name: its allocatable (plain units), Ready and schedulable. */
  nodes: { name: string; capacity: Record<string, number>; ready: boolean; unschedulable: boolean }[];
  views: { name: string; flavor: string | null; source: string; levels: string[]; paths: Record<string, string[]> }[];
}

export interface SimulationReport {
  apiVersion: typeof REPORT_API_VERSION;
  kind: 'SimulationReport';
  run: {
    start: string;
    end: number;
    until: number | null;
    stop: string;
    /** True when the run was interrupted (Ctrl-C): the report covers the time run so far. */
    partial?: boolean;
    steps: number;
    makespan: number | null;
  };
  summary: {
    workloads: number;
    byStatus: Record<WorkloadStatus, number>;
    makespan: number | null;
    meanTimeToAdmission: Record<string, number>;
    evictions: number;
    evictionsByReason: Record<string, number>;
    utilization: Record<string, number>;
    violations: number;
    refused: number;
    controllerErrors: number;
    unmanaged: number;
  };
  workloads: ReportWorkload[];
  /** Submitted objects topoqueue does not manage (no queue name and no Workload): they still use capacity. */
  unmanaged: { kind: string; namespace: string; name: string }[];
  queues: ReportQueue[];
  utilization: {
    resources: string[];
    mean: Record<string, number>;
    series: { at: number; used: Record<string, number>; capacity: Record<string, number> }[];
  };
  topology: ReportTopology;
  /** Every HyperNode, by name: `status.nodeCount` at the end and whenever it changed. */
  hyperNodes: ReportHyperNode[];
  violations: Violation[];
  violationsDropped: number;
  refused: { at: number; object: string; file: string | null; message: string }[];
  controllerErrors: { at: number; controller: string; key: string; message: string }[];
  /**
   * What `simulate` left out of the input before the run (refused objects, with where and
   * why) and its notes (kinds skipped, silent drops); absent when the caller checked nothing.
   */
  input?: {
    errors: {
      file: string | null;
      document: number | null;
      line: number | null;
      object: string | null;
      field: string | null;
      message: string;
    }[];
    notes: string[];
  };
}

const secondsOf = (startMs: number, ms: number | undefined): number | null => (ms === undefined ? null : Math.round(ms - startMs) / 1000);
const isTrue = (w: Workload, type: string) => (w.status?.conditions ?? []).some((c) => c.type === type && c.status === 'True');
const cond = (w: Workload, type: string) => (w.status?.conditions ?? []).find((c) => c.type === type);

/** A resource amount in plain units: cpu from millicores to cores. */
export function plainAmount(resource: string, n: number): number {
  const v = resource === 'cpu' || resource.endsWith('/cpu') ? n / 1000 : n;
  return Math.round(v * 1e6) / 1e6;
}

/** Resource amounts in plain units (cores, bytes, counts), keys in order. */
export function plainMap(m: Record<string, number>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const k of Object.keys(m).sort(compareStrings)) out[k] = plainAmount(k, m[k]!);
  return out;
}

export function workloadStatus(w: Workload): WorkloadStatus {
  if (isTrue(w, 'Finished')) return cond(w, 'Finished')?.reason === 'Failed' ? WorkloadStatus.Failed : WorkloadStatus.Finished;
  if (isTrue(w, 'Evicted') || w.spec.active === false) return WorkloadStatus.Evicted;
  if (w.status?.admission) return WorkloadStatus.Admitted;
  return WorkloadStatus.Pending;
}

/** Of several Workloads, the status of the one furthest behind. */
function foldStatus(statuses: WorkloadStatus[]): WorkloadStatus {
  for (const s of [WorkloadStatus.Failed, WorkloadStatus.Pending, WorkloadStatus.Evicted, WorkloadStatus.Admitted])
    if (statuses.includes(s)) return s;
  return WorkloadStatus.Finished;
}

function allOrNull(values: (number | undefined)[]): number | undefined {
  if (values.length === 0 || values.some((v) => v === undefined)) return undefined;
  return Math.max(...(values as number[]));
}

/** The pod's rank within its PodSet as the TopologyUngater reads it in rank mode, or null. */
export function podRank(p: PodRecord, w: Workload): number | null {
  const ps = w.spec.podSets.find((x) => x.name === p.podSet);
  const tr: PodSetTopologyRequest | undefined = ps?.topologyRequest;
  if (!ps || !tr?.podIndexLabel) return null;
  const index = Number(p.labels[tr.podIndexLabel]);
  if (!Number.isInteger(index) || index < 0) return null;
  let rank =
    index - podSetGroupOffset(w.spec.podSets, ps.name) - (p.offset !== undefined && /^[0-9]+$/.test(p.offset) ? Number(p.offset) : 0);
  if (tr.subGroupIndexLabel !== undefined && tr.subGroupCount !== undefined && tr.subGroupCount > 0) {
    const sub = Number(p.labels[tr.subGroupIndexLabel]);
    if (!Number.isInteger(sub) || sub < 0) return null;
    const count = w.status?.admission?.podSetAssignments?.find((a) => a.name === ps.name)?.count ?? ps.count;
    rank += sub * Math.floor(count / tr.subGroupCount);
  }
  return rank >= 0 ? rank : null;
}

/** One PodSetAssignment as the report (and the dashboard) shows it: flavor, count, the decoded topology assignment. */
export function assignmentPlacement(psa: PodSetAssignment, podSets: readonly PodSet[]): Omit<ReportPlacement, 'workload'> {
  const ps = podSets.find((p) => p.name === psa.name);
  let levels: string[] = [];
  let domains: { values: string[]; count: number }[] = [];
  if (psa.topologyAssignment) {
    try {
      const a = decodeAssignment(psa.topologyAssignment, {});
      levels = a.levels;
      domains = a.domains.map((d) => ({ values: d.values, count: d.count }));
    } catch {
      // Undecodable: reported without domains.
    }
  }
  return { podSet: psa.name, flavor: Object.values(psa.flavors ?? {})[0] ?? null, count: psa.count ?? ps?.count ?? 0, levels, domains };
}

function placementOf(rec: WorkloadRecord): ReportPlacement[] {
  const name = rec.last.metadata.name;
  return (rec.admission?.podSetAssignments ?? []).map((psa) => ({ workload: name, ...assignmentPlacement(psa, rec.last.spec.podSets) }));
}

function podGroupReport(startMs: number, g: PodGroupRecord): ReportPodGroup {
  const history = g.history.map(({ at, ...rest }) => ({ at: secondsOf(startMs, at)!, ...rest }));
  const last = history[history.length - 1];
  const status: ReportPodGroupStatus = {};
  if (last) Object.assign(status, last);
  delete (status as { at?: number }).at;
  return { name: g.name, apiVersion: g.apiVersion, status, history, historyDropped: g.dropped };
}

function entryReport(run: SimulationRun, e: EntryRecord, podGroups: readonly PodGroupRecord[]): ReportWorkload {
  const { timeline, startMs } = run;
  const recs = e.workloads.map((k) => timeline.workloads.get(k)!).filter((r) => r !== undefined);
  const live = recs.filter((r) => !r.deleted);
  const current = live.length > 0 ? live : recs.slice(-1);
  let status: WorkloadStatus;
  let pendingReason: string | null = null;
  if (e.errors.length > 0 && recs.length === 0) {
    status = WorkloadStatus.Failed;
  } else if (current.length === 0) {
    status = WorkloadStatus.Pending;
    if (e.submittedAt === undefined)
      pendingReason =
        e.scheduledAt !== undefined && e.scheduledAt > run.endMs - startMs
          ? 'not submitted yet: the run stopped before its submit-at time'
          : 'not submitted';
    else pendingReason = noWorkloadReason(run, e);
  } else {
    // A Workload deleted before it finished (a pod group whose pods are gone) will not run again.
    status = foldStatus(current.map((r) => (r.deleted && !isTrue(r.last, 'Finished') ? WorkloadStatus.Failed : workloadStatus(r.last))));
    if (status === WorkloadStatus.Pending || status === WorkloadStatus.Evicted) {
      const reasons = current
        .filter((r) => !r.last.status?.admission)
        .map((r) => cond(r.last, 'QuotaReserved'))
        .filter((c) => c !== undefined && c.status === 'False' && c.message)
        .map((c) => (c!.reason ? `${c!.reason}: ${c!.message}` : c!.message!));
      pendingReason = reasons[0] ?? (status === WorkloadStatus.Pending ? 'not yet considered by the scheduler' : null);
    }
  }
  const evictions: ReportEviction[] = [];
  for (const r of recs)
    for (const ev of r.evictions)
      evictions.push({
        at: secondsOf(startMs, ev.at)!,
        workload: r.last.metadata.name,
        reason: ev.reason,
        message: ev.message,
        preemptor: ev.preemptor ?? null,
      });
  evictions.sort((a, b) => a.at - b.at || compareStrings(a.workload, b.workload));
  const admissions: ReportAdmission[] = [];
  const pendingReasons: ReportWorkload['pendingReasons'] = [];
  let pendingReasonsDropped = 0;
  for (const r of recs) {
    const name = r.last.metadata.name;
    for (const a of r.admissions)
      admissions.push({
        at: secondsOf(startMs, a.at)!,
        workload: name,
        clusterQueue: a.admission.clusterQueue ?? null,
        placement: (a.admission.podSetAssignments ?? []).map((psa) => {
          const p = assignmentPlacement(psa, r.last.spec.podSets);
          return { ...p, domains: p.domains.map((d) => `${d.values.join('/')} x${d.count}`) };
        }),
      });
    for (const p of r.pendingReasons) pendingReasons.push({ at: secondsOf(startMs, p.at)!, workload: name, reason: p.reason });
    pendingReasonsDropped += r.pendingDropped;
  }
  admissions.sort((a, b) => a.at - b.at || compareStrings(a.workload, b.workload));
  pendingReasons.sort((a, b) => a.at - b.at || compareStrings(a.workload, b.workload));
  const events: ReportEvent[] = [...(e.events?.values() ?? [])]
    .map((f) => ({ ...f, first: secondsOf(startMs, f.first)!, last: secondsOf(startMs, f.last)! }))
    .sort(
      (a, b) => a.first - b.first || compareStrings(a.kind, b.kind) || compareStrings(a.type, b.type) || compareStrings(a.reason, b.reason),
    );
  const pods: ReportPod[] = [];
  for (const r of recs) {
    for (const pk of r.pods) {
      const p = timeline.pods.get(pk);
      if (!p || p.node === undefined) continue;
      pods.push({
        name: p.name,
        workload: r.last.metadata.name,
        podSet: p.podSet ?? null,
        node: p.node,
        rank: podRank(p, r.last),
        phase: p.phase,
      });
    }
  }
  pods.sort(
    (a, b) =>
      compareStrings(a.workload, b.workload) ||
      compareStrings(a.podSet ?? '', b.podSet ?? '') ||
      (a.rank ?? Infinity) - (b.rank ?? Infinity) ||
      compareStrings(a.name, b.name),
  );
  const finished = current.length > 0 && current.every((r) => isTrue(r.last, 'Finished'));
  const results = current
    .map((r) => cond(r.last, 'Finished'))
    .filter((c) => c?.status === 'True')
    .map((c) => `${c!.reason ?? ''}: ${c!.message ?? ''}`);
  const gone = current
    .filter((r) => r.deleted && !isTrue(r.last, 'Finished'))
    .map((r) => {
      const ev = r.evictions[r.evictions.length - 1];
      return `Deleted: its Workload ${r.last.metadata.name} was deleted before it finished${ev ? ` (last evicted: ${ev.reason})` : ''}`;
    });
  const result = gone[0] ?? results.find((x) => x.startsWith('Failed')) ?? results[0] ?? null;
  const cq = recs.map((r) => r.admission?.clusterQueue).find((x) => x !== undefined) ?? null;
  const queue =
    e.queue ??
    current.map((r) => r.last.spec.queueName ?? r.last.metadata.labels?.[KueueLabel.QueueName]).find((x) => x !== undefined) ??
    null;
  return {
    namespace: e.namespace,
    name: e.name,
    kind: e.kind,
    apiVersion: e.apiVersion,
    queue,
    clusterQueue: cq,
    status,
    submittedAt: secondsOf(startMs, e.submittedAt),
    admittedAt: secondsOf(startMs, allOrNull(current.map((r) => r.admittedAt))),
    startedAt: secondsOf(startMs, allOrNull(current.map((r) => r.startedAt))),
    finishedAt: finished ? secondsOf(startMs, allOrNull(current.map((r) => r.finishedAt))) : null,
    pendingReason,
    result,
    workloads: recs.map((r) => r.last.metadata.name),
    admissions,
    pendingReasons,
    pendingReasonsDropped,
    evictions,
    placement: recs.flatMap(placementOf),
    pods,
    events,
    eventsDropped: e.eventsDropped,
    podGroups: podGroups.map((g) => podGroupReport(startMs, g)),
    errors: [...e.errors],
  };
}

/** Why a submitted object has no Workload: the last Warning event about one of its objects, if any. */
function noWorkloadReason(run: SimulationRun, e: EntryRecord): string {
  const events = run.cluster.manager.events;
  const objects = entryObjects(e);
  for (let i = events.recent.length - 1; i >= 0; i--) {
    const ev = events.recent[i]!;
    if (ev.type === 'Warning' && objects.includes(ev.object)) return `no Workload: ${ev.reason}: ${ev.message}`;
  }
  return 'no Workload was created for it';
}

function queuesReport(run: SimulationRun): ReportQueue[] {
  const out: ReportQueue[] = [];
  const names = new Set<string>([...run.timeline.queueSeries.keys()]);
  const cqs = new Map(run.cluster.store.listSync('ClusterQueue').map((c) => [c.metadata.name, c]));
  for (const n of cqs.keys()) names.add(n);
  for (const name of [...names].sort(compareStrings)) {
    const cq = cqs.get(name);
    const nominal: Record<string, number> = {};
    for (const g of cq?.spec.resourceGroups ?? []) {
      for (const f of g.flavors) {
        for (const r of f.resources) {
          try {
            nominal[`${f.name}/${r.name}`] = plainAmount(r.name, resourceAmount(r.name, parseQuantity(r.nominalQuota)));
          } catch {
            // A bad quantity: left out.
          }
        }
      }
    }
    const sorted: Record<string, number> = {};
    for (const k of Object.keys(nominal).sort(compareStrings)) sorted[k] = nominal[k]!;
    const usage = (run.timeline.queueSeries.get(name) ?? []).map((p) => ({
      at: secondsOf(run.startMs, p.at)!,
      admitted: p.admitted,
      pending: p.pending,
      usage: Object.fromEntries(Object.entries(p.usage).map(([k, v]) => [k, plainAmount(k.slice(k.lastIndexOf('/') + 1), v)])),
    }));
    out.push({ name, cohort: cq?.spec.cohortName ?? null, nominal: sorted, usage });
  }
  return out;
}

/** Merges the used and capacity series into one, and the mean of used / capacity over [start, end]. */
function utilizationReport(run: SimulationRun): SimulationReport['utilization'] {
  const { startMs, endMs } = run;
  const used = run.timeline.utilization;
  const cap = run.timeline.capacity;
  const times = [...new Set([...used.map((p) => p.at), ...cap.map((p) => p.at)])].sort((a, b) => a - b);
  const resources = new Set<string>();
  for (const p of cap) for (const r of Object.keys(p.values)) resources.add(r);
  const series: SimulationReport['utilization']['series'] = [];
  const usedIntegral = new Map<string, number>();
  const capIntegral = new Map<string, number>();
  let iu = -1;
  let ic = -1;
  let prev: { at: number; used: SeriesPoint['values']; cap: SeriesPoint['values'] } | undefined;
  const accumulate = (until: number) => {
    if (!prev) return;
    const dt = until - prev.at;
    if (dt <= 0) return;
    for (const r of resources) {
      usedIntegral.set(r, (usedIntegral.get(r) ?? 0) + (prev.used[r] ?? 0) * dt);
      capIntegral.set(r, (capIntegral.get(r) ?? 0) + (prev.cap[r] ?? 0) * dt);
    }
  };
  for (const t of times) {
    while (iu + 1 < used.length && used[iu + 1]!.at <= t) iu++;
    while (ic + 1 < cap.length && cap[ic + 1]!.at <= t) ic++;
    const u = iu >= 0 ? used[iu]!.values : {};
    const c = ic >= 0 ? cap[ic]!.values : {};
    accumulate(t);
    prev = { at: t, used: u, cap: c };
    series.push({ at: secondsOf(startMs, t)!, used: plainMap(u), capacity: plainMap(c) });
  }
  accumulate(endMs);
  const mean: Record<string, number> = {};
  const names = [...resources].sort(compareStrings);
  for (const r of names) {
    const c = capIntegral.get(r) ?? 0;
    if (c > 0) mean[r] = Math.round(((usedIntegral.get(r) ?? 0) / c) * 10_000) / 10_000;
  }
  return { resources: names, mean, series };
}

function topologyReport(run: SimulationRun): ReportTopology {
  const store = run.cluster.store;
  const infos: NodeInfo[] = [];
  for (const n of store.listSync<Node>('Node')) {
    try {
      infos.push(nodeInfoFromNode(n));
    } catch {
      // A node with a bad allocatable: left out of the picture (the run reported it).
    }
  }
  infos.sort((a, b) => compareStrings(a.name, b.name));
  const views = topologyViews({
    flavors: store.listSync<ResourceFlavor>('ResourceFlavor'),
    topologies: store.listSync<Topology>('Topology'),
    hyperNodes: store.listSync<HyperNode>('HyperNode'),
    nodes: infos,
  });
  return {
    nodes: infos.map((n) => ({ name: n.name, capacity: plainMap(n.allocatable), ready: n.ready, unschedulable: n.unschedulable })),
    views: views.map((v) => ({ name: v.name, flavor: v.flavor, source: v.source, levels: v.levels, paths: Object.fromEntries(v.paths) })),
  };
}

/** No queue name, no Workload, nothing refused: left to the cluster as it is. */
function unmanaged(e: EntryRecord): boolean {
  return e.queue === undefined && e.workloads.length === 0 && e.errors.length === 0 && e.submittedAt !== undefined;
}

export function buildReport(run: SimulationRun): SimulationReport {
  const entries = [...run.timeline.entries.values()];
  const explain = pendingExplainer(run);
  const groups = run.timeline.podGroupsByEntry();
  const workloads = entries
    .filter((e) => !unmanaged(e))
    .map((e) => {
      const w = entryReport(run, e, groups.get(e.key) ?? []);
      const text = explain(e, w.status);
      return text === undefined ? w : { ...w, explain: text };
    });
  const others = entries.filter(unmanaged).map((e) => ({ kind: e.kind, namespace: e.namespace, name: e.name }));
  const byStatus = { Finished: 0, Admitted: 0, Pending: 0, Evicted: 0, Failed: 0 } as Record<WorkloadStatus, number>;
  for (const w of workloads) byStatus[w.status]++;
  const finishes = workloads.map((w) => w.finishedAt).filter((t): t is number => t !== null);
  const makespan = finishes.length > 0 ? Math.max(...finishes) : null;
  const waits = new Map<string, number[]>();
  for (const w of workloads) {
    if (w.admittedAt === null || w.submittedAt === null || w.clusterQueue === null) continue;
    waits.set(w.clusterQueue, [...(waits.get(w.clusterQueue) ?? []), w.admittedAt - w.submittedAt]);
  }
  const meanTimeToAdmission: Record<string, number> = {};
  for (const q of [...waits.keys()].sort(compareStrings)) {
    const xs = waits.get(q)!;
    meanTimeToAdmission[q] = Math.round((xs.reduce((a, b) => a + b, 0) / xs.length) * 1000) / 1000;
  }
  const evictionsByReason: Record<string, number> = {};
  let evictions = 0;
  for (const w of workloads) {
    for (const ev of w.evictions) {
      evictions++;
      evictionsByReason[ev.reason] = (evictionsByReason[ev.reason] ?? 0) + 1;
    }
  }
  const utilization = utilizationReport(run);
  const controllerErrors = run.cluster.manager.errors.map((e) => ({
    at: secondsOf(run.startMs, e.at)!,
    controller: e.controller,
    key: e.key,
    message: e.message,
  }));
  return {
    apiVersion: REPORT_API_VERSION,
    kind: 'SimulationReport',
    run: {
      start: formatTime(run.startMs / 1000),
      end: secondsOf(run.startMs, run.endMs)!,
      until: run.untilMs !== undefined ? run.untilMs / 1000 : null,
      stop: run.stop,
      ...(run.stop === 'interrupted' ? { partial: true } : {}),
      steps: run.steps,
      makespan,
    },
    summary: {
      workloads: workloads.length,
      byStatus,
      makespan,
      meanTimeToAdmission,
      evictions,
      evictionsByReason: Object.fromEntries(Object.entries(evictionsByReason).sort(([a], [b]) => compareStrings(a, b))),
      utilization: utilization.mean,
      violations: run.checker.violations.length + run.checker.dropped,
      refused: run.refused.length,
      controllerErrors: controllerErrors.length,
      unmanaged: others.length,
    },
    workloads,
    unmanaged: others,
    queues: queuesReport(run),
    utilization,
    topology: topologyReport(run),
    hyperNodes: [...run.timeline.hyperNodes.values()]
      .sort((a, b) => compareStrings(a.name, b.name))
      .map((h) => {
        const last = h.history[h.history.length - 1];
        return {
          name: h.name,
          tier: h.tier,
          nodeCount: h.deleted ? null : (last?.nodeCount ?? null),
          deleted: h.deleted,
          history: h.history.map((p) => ({ at: secondsOf(run.startMs, p.at)!, nodeCount: p.nodeCount })),
        };
      }),
    violations: [...run.checker.violations],
    violationsDropped: run.checker.dropped,
    refused: run.refused.map((r) => ({ at: r.atMs / 1000, object: r.object, file: r.where.file ?? null, message: r.message })),
    controllerErrors,
  };
}

/**
 * The report as the file holds it: indented JSON, with every object or list whose members
 * are all plain values (a history point, an event, a placement's levels) on one line. The
 * same data as `JSON.stringify(report, null, 2)`, a fifth smaller and easier to scan.
 */
export function reportJson(report: SimulationReport): string {
  const parts: string[] = [];
  const plain = (v: unknown) => v === null || typeof v !== 'object';
  const write = (v: unknown, indent: string): void => {
    if (plain(v)) {
      parts.push(JSON.stringify(v) ?? 'null');
      return;
    }
    const list = Array.isArray(v);
    const entries: [string | undefined, unknown][] = list
      ? (v as unknown[]).map((x) => [undefined, x === undefined ? null : x])
      : Object.entries(v as Record<string, unknown>).filter(([, x]) => x !== undefined);
    if (entries.every(([, x]) => plain(x))) {
      parts.push(JSON.stringify(v));
      return;
    }
    const inner = `${indent}  `;
    parts.push(list ? '[\n' : '{\n');
    entries.forEach(([k, x], i) => {
      parts.push(k === undefined ? inner : `${inner}${JSON.stringify(k)}: `);
      write(x, inner);
      parts.push(i < entries.length - 1 ? ',\n' : '\n');
    });
    parts.push(`${indent}${list ? ']' : '}'}`);
  };
  write(report, '');
  return `${parts.join('')}\n`;
}

/** Seconds as a Go duration: 0s, 45s, 12m3s, 4h51m10.5s. */
export function formatDuration(seconds: number): string {
  if (seconds === 0) return '0s';
  const neg = seconds < 0;
  let s = Math.abs(seconds);
  const h = Math.floor(s / 3600);
  s -= h * 3600;
  const m = Math.floor(s / 60);
  s = Math.round((s - m * 60) * 1000) / 1000;
  return `${neg ? '-' : ''}${h > 0 ? `${h}h` : ''}${h > 0 || m > 0 ? `${m}m` : ''}${s}s`;
}

const pct = (f: number) => `${(f * 100).toFixed(1)}%`;

/** The human summary printed on stdout. */
export function summarize(r: SimulationReport): string {
  const lines: string[] = [];
  const s = r.summary;
  const stop =
    r.run.stop === 'idle'
      ? 'nothing left to do'
      : r.run.stop === 'until'
        ? '--until reached'
        : r.run.stop === 'interrupted'
          ? 'interrupted (Ctrl-C): a partial report'
          : 'stopped 7 days after the last submission: something keeps setting timers, e.g. serving pods with a run-duration restarted forever';
  lines.push(`simulated ${formatDuration(r.run.end)} of virtual time in ${r.run.steps} steps (${stop})`);
  const counts = (Object.keys(s.byStatus) as WorkloadStatus[]).map((k) => `${k} ${s.byStatus[k]}`).join(', ');
  lines.push(`workloads: ${s.workloads} (${counts})`);
  const notDone = r.workloads.filter((w) => w.status !== WorkloadStatus.Finished);
  for (const w of notDone.slice(0, 10)) {
    const why = w.errors[0] ?? w.pendingReason ?? (w.status === WorkloadStatus.Admitted ? 'still running' : (w.result ?? ''));
    lines.push(`  ${w.status} ${w.kind} ${w.namespace}/${w.name}${why ? `: ${why}` : ''}`);
  }
  if (notDone.length > 10) lines.push(`  ... and ${notDone.length - 10} more (see the report)`);
  lines.push(`makespan: ${s.makespan === null ? 'nothing finished' : formatDuration(s.makespan)}`);
  const waits = Object.entries(s.meanTimeToAdmission);
  lines.push(
    `mean time to admission: ${waits.length === 0 ? 'nothing admitted' : waits.map(([q, t]) => `${q} ${formatDuration(t)}`).join(', ')}`,
  );
  const reasons = Object.entries(s.evictionsByReason);
  lines.push(`evictions: ${s.evictions}${reasons.length > 0 ? ` (${reasons.map(([k, v]) => `${k} ${v}`).join(', ')})` : ''}`);
  const util = Object.entries(s.utilization).filter(([k]) => k !== 'pods');
  lines.push(
    `utilization (mean over the run): ${r.run.end === 0 ? 'no virtual time passed' : util.length === 0 ? 'no capacity' : util.map(([k, v]) => `${k} ${pct(v)}`).join(', ')}`,
  );
  if (s.unmanaged > 0)
    lines.push(
      `not managed by topoqueue (no queue name): ${s.unmanaged} (${r.unmanaged
        .slice(0, 5)
        .map((u) => `${u.kind} ${u.namespace}/${u.name}`)
        .join(', ')}${s.unmanaged > 5 ? ', ...' : ''})`,
    );
  if (s.violations === 0) lines.push('violations: none');
  else {
    lines.push(`violations: ${s.violations}`);
    for (const v of r.violations.slice(0, 10)) lines.push(`  at ${formatDuration(v.at)}: ${v.invariant} ${v.object}: ${v.message}`);
  }
  if (s.refused > 0) {
    lines.push(`refused by the API server: ${s.refused}`);
    for (const x of r.refused.slice(0, 10)) lines.push(`  at ${formatDuration(x.at)}: ${x.object}: ${x.message}`);
  }
  if (s.controllerErrors > 0) lines.push(`controller errors (retried): ${s.controllerErrors}; see controllerErrors in the report`);
  return `${lines.join('\n')}\n`;
}
