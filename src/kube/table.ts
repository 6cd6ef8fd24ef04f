// Server-side printing (`Accept: application/json;as=Table;v=v1;g=meta.k8s.io`): the
// columns kube-apiserver 1.32 prints for the core kinds and Job, Kueue's printer columns
// for its kinds, and a column or two a user of topoqueue wants (a Workload's pending
// reason). kubectl prints cells as given, so times are already human durations.

import type { KObject } from '../api/objects.ts';
import { parseTime } from '../api/time.ts';
import type { Resource } from './resources.ts';

export interface ColumnDefinition {
  name: string;
  type: string;
  format: string;
  description: string;
  priority: number;
}

interface Column {
  name: string;
  /** Shown only with `-o wide`. */
  wide?: boolean;
  type?: string;
  cell: (o: Any, now: number) => string | number;
}

// Objects come from users: every read below tolerates any shape.
type Any = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** kube's duration.HumanDuration: `45s`, `5m30s`, `17m`, `3h20m`, `2d5h`, `40d`, `3y12d`. */
export function humanDuration(ms: number): string {
  const seconds = Math.floor(ms / 1000);
  if (seconds < -1) return '<invalid>';
  if (seconds < 0) return '0s';
  if (seconds < 120) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 10) return seconds % 60 === 0 ? `${minutes}m` : `${minutes}m${seconds % 60}s`;
  if (minutes < 180) return `${minutes}m`;
  const hours = Math.floor(minutes / 60);
  if (hours < 8) return minutes % 60 === 0 ? `${hours}h` : `${hours}h${minutes % 60}m`;
  if (hours < 48) return `${hours}h`;
  if (hours < 24 * 8) return hours % 24 === 0 ? `${Math.floor(hours / 24)}d` : `${Math.floor(hours / 24)}d${hours % 24}h`;
  if (hours < 24 * 365 * 2) return `${Math.floor(hours / 24)}d`;
  if (hours < 24 * 365 * 8) {
    const d = Math.floor(hours / 24) % 365;
    return d === 0 ? `${Math.floor(hours / 24 / 365)}y` : `${Math.floor(hours / 24 / 365)}y${d}d`;
  }
  return `${Math.floor(hours / 24 / 365)}y`;
}

const since = (ts: unknown, now: number): string => {
  const t = typeof ts === 'string' ? parseTime(ts) : undefined;
  return t === undefined ? '<unknown>' : humanDuration(now - t * 1000);
};

const condition = (o: Any, type: string): Any | undefined =>
  Array.isArray(o.status?.conditions) ? o.status.conditions.find((c: Any) => c?.type === type) : undefined;
const condStatus = (o: Any, type: string): string => String(condition(o, type)?.status ?? '');
const str = (v: unknown): string => (v === undefined || v === null ? '' : typeof v === 'object' ? JSON.stringify(v) : String(v));
const orNone = (v: unknown): string => (str(v) === '' ? '<none>' : str(v));

const age: Column = { name: 'Age', cell: (o, now) => since(o.metadata?.creationTimestamp, now) };

function podStatus(p: Any): string {
  if (p.metadata?.deletionTimestamp) return 'Terminating';
  const phase = str(p.status?.phase) || 'Pending';
  if (phase === 'Pending' && Array.isArray(p.spec?.schedulingGates) && p.spec.schedulingGates.length > 0) return 'SchedulingGated';
  if (phase === 'Succeeded') return 'Completed';
  if (phase === 'Failed') return str(p.status?.reason) || 'Error';
  if (phase === 'Pending' && !p.spec?.nodeName) return 'Pending';
  return str(p.status?.reason) || phase;
}

function podReady(p: Any): string {
  const n = Array.isArray(p.spec?.containers) ? p.spec.containers.length : 0;
  const statuses: Any[] = Array.isArray(p.status?.containerStatuses) ? p.status.containerStatuses : [];
  const ready =
    statuses.length > 0
      ? statuses.filter((s) => s?.ready === true).length
      : str(p.status?.phase) === 'Running' && condStatus(p, 'Ready') !== 'False'
        ? n
        : 0;
  return `${ready}/${n}`;
}

function nodeStatus(n: Any): string {
  const ready = condStatus(n, 'Ready');
  const parts = [ready === 'True' ? 'Ready' : ready === 'False' ? 'NotReady' : 'Unknown'];
  if (n.spec?.unschedulable === true) parts.push('SchedulingDisabled');
  return parts.join(',');
}

function nodeRoles(n: Any): string {
  const roles = Object.keys(n.metadata?.labels ?? {})
    .filter((k) => k.startsWith('node-role.kubernetes.io/'))
    .map((k) => k.slice('node-role.kubernetes.io/'.length));
  return roles.length > 0 ? roles.sort().join(',') : '<none>';
}

const address = (n: Any, type: string) =>
  orNone((Array.isArray(n.status?.addresses) ? n.status.addresses : []).find((a: Any) => a?.type === type)?.address);

function jobStatus(j: Any): string {
  for (const t of ['Complete', 'Failed', 'FailureTarget', 'SuccessCriteriaMet']) if (condStatus(j, t) === 'True') return t;
  if (j.spec?.suspend === true || condStatus(j, 'Suspended') === 'True') return 'Suspended';
  return 'Running';
}

function jobDuration(j: Any, now: number): string {
  const start = parseTime(j.status?.startTime);
  if (start === undefined) return '';
  const end = parseTime(j.status?.completionTime);
  return humanDuration((end !== undefined ? end * 1000 : now) - start * 1000);
}

/** Why a Workload waits (or what it is now): the reason of its latest meaningful condition. */
function workloadReason(w: Any): string {
  for (const t of ['Finished', 'Evicted', 'Admitted', 'QuotaReserved']) {
    const c = condition(w, t);
    if (c && (t === 'QuotaReserved' || c.status === 'True')) return str(c.reason);
  }
  return '';
}

function workloadMessage(w: Any): string {
  for (const t of ['Finished', 'Evicted', 'Admitted', 'QuotaReserved']) {
    const c = condition(w, t);
    if (c && (t === 'QuotaReserved' || c.status === 'True')) return str(c.message);
  }
  return '';
}

const images = (j: Any) =>
  Array.isArray(j.spec?.template?.spec?.containers) ? j.spec.template.spec.containers.map((c: Any) => str(c?.image)).join(',') : '';
const containers = (j: Any) =>
  Array.isArray(j.spec?.template?.spec?.containers) ? j.spec.template.spec.containers.map((c: Any) => str(c?.name)).join(',') : '';
const matchLabels = (sel: Any | undefined) =>
  sel?.matchLabels
    ? Object.entries(sel.matchLabels as Record<string, string>)
        .map(([k, v]) => `${k}=${v}`)
        .join(',')
    : '<none>';

const COLUMNS: Record<string, Column[]> = {
  Pod: [
    { name: 'Ready', cell: podReady },
    { name: 'Status', cell: podStatus },
    {
      name: 'Restarts',
      type: 'string',
      cell: (p) =>
        String(
          (Array.isArray(p.status?.containerStatuses) ? p.status.containerStatuses : []).reduce(
            (n: number, s: Any) => n + (Number(s?.restartCount) || 0),
            0,
          ),
        ),
    },
    age,
    { name: 'IP', wide: true, cell: (p) => orNone(p.status?.podIP) },
    { name: 'Node', wide: true, cell: (p) => orNone(p.spec?.nodeName) },
    { name: 'Nominated Node', wide: true, cell: (p) => orNone(p.status?.nominatedNodeName) },
    {
      name: 'Readiness Gates',
      wide: true,
      cell: (p) => orNone(Array.isArray(p.spec?.readinessGates) && p.spec.readinessGates.length > 0 ? p.spec.readinessGates.length : ''),
    },
  ],
  Node: [
    { name: 'Status', cell: nodeStatus },
    { name: 'Roles', cell: nodeRoles },
    age,
    { name: 'Version', cell: (n) => str(n.status?.nodeInfo?.kubeletVersion) },
    { name: 'Internal-IP', wide: true, cell: (n) => address(n, 'InternalIP') },
    { name: 'External-IP', wide: true, cell: (n) => address(n, 'ExternalIP') },
    { name: 'OS-Image', wide: true, cell: (n) => orNone(n.status?.nodeInfo?.osImage) },
    { name: 'Kernel-Version', wide: true, cell: (n) => orNone(n.status?.nodeInfo?.kernelVersion) },
    { name: 'Container-Runtime', wide: true, cell: (n) => orNone(n.status?.nodeInfo?.containerRuntimeVersion) },
  ],
  Namespace: [{ name: 'Status', cell: (n) => str(n.status?.phase) || 'Active' }, age],
  Event: [
    { name: 'Last Seen', cell: (e, now) => since(e.lastTimestamp ?? e.eventTime ?? e.metadata?.creationTimestamp, now) },
    { name: 'Type', cell: (e) => str(e.type) },
    { name: 'Reason', cell: (e) => str(e.reason) },
    { name: 'Object', cell: (e) => `${str(e.involvedObject?.kind).toLowerCase()}/${str(e.involvedObject?.name)}` },
    { name: 'Message', cell: (e) => str(e.message) },
    { name: 'Source', wide: true, cell: (e) => str(e.source?.component) },
    { name: 'First Seen', wide: true, cell: (e, now) => since(e.firstTimestamp ?? e.metadata?.creationTimestamp, now) },
    { name: 'Count', wide: true, cell: (e) => str(e.count ?? 1) },
  ],
  'batch/Job': [
    { name: 'Status', cell: jobStatus },
    { name: 'Completions', cell: (j) => `${Number(j.status?.succeeded) || 0}/${str(j.spec?.completions ?? j.spec?.parallelism ?? 1)}` },
    { name: 'Duration', cell: jobDuration },
    age,
    { name: 'Containers', wide: true, cell: containers },
    { name: 'Images', wide: true, cell: images },
    { name: 'Selector', wide: true, cell: (j) => matchLabels(j.spec?.selector) },
  ],
  Workload: [
    { name: 'Queue', cell: (w) => str(w.spec?.queueName) },
    { name: 'Reserved in', cell: (w) => str(w.status?.admission?.clusterQueue) },
    { name: 'Admitted', cell: (w) => condStatus(w, 'Admitted') },
    { name: 'Finished', cell: (w) => condStatus(w, 'Finished') },
    { name: 'Reason', cell: workloadReason },
    age,
    { name: 'Message', wide: true, cell: workloadMessage },
  ],
  ClusterQueue: [
    { name: 'Cohort', cell: (q) => str(q.spec?.cohortName ?? q.spec?.cohort) },
    { name: 'Strategy', wide: true, cell: (q) => str(q.spec?.queueingStrategy ?? 'BestEffortFIFO') },
    { name: 'Pending Workloads', type: 'integer', cell: (q) => Number(q.status?.pendingWorkloads) || 0 },
    { name: 'Admitted Workloads', type: 'integer', cell: (q) => Number(q.status?.admittedWorkloads) || 0 },
    age,
  ],
  LocalQueue: [
    { name: 'ClusterQueue', cell: (q) => str(q.spec?.clusterQueue) },
    { name: 'Pending Workloads', type: 'integer', cell: (q) => Number(q.status?.pendingWorkloads) || 0 },
    { name: 'Admitted Workloads', type: 'integer', cell: (q) => Number(q.status?.admittedWorkloads) || 0 },
    age,
  ],
  ResourceFlavor: [{ name: 'Topology', cell: (f) => str(f.spec?.topologyName) }, age],
};

function columnsFor(r: Resource): Column[] {
  return COLUMNS[`${r.group}/${r.kind}`] ?? COLUMNS[r.kind] ?? [age];
}

export function columnDefinitions(r: Resource): ColumnDefinition[] {
  return [
    { name: 'Name', type: 'string', format: 'name', description: 'Name must be unique within a namespace.', priority: 0 },
    ...columnsFor(r).map((c) => ({ name: c.name, type: c.type ?? 'string', format: '', description: '', priority: c.wide ? 1 : 0 })),
  ];
}

export interface TableOptions {
  now: number;
  /** `includeObject=Object` (kubectl --sort-by): the whole object in each row. */
  includeObject?: 'Object' | 'Metadata' | 'None';
  resourceVersion: string;
}

export function tableRow(r: Resource, obj: KObject, opts: TableOptions): { cells: (string | number)[]; object?: unknown } {
  const o = obj as unknown as Any;
  const cells = [str(obj.metadata?.name), ...columnsFor(r).map((c) => safeCell(c, o, opts.now))];
  const inc = opts.includeObject ?? 'Metadata';
  if (inc === 'None') return { cells };
  if (inc === 'Object') return { cells, object: obj };
  return { cells, object: { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: obj.metadata } };
}

function safeCell(c: Column, o: Any, now: number): string | number {
  try {
    return c.cell(o, now);
  } catch {
    return '<error>';
  }
}

export function table(r: Resource, objs: readonly KObject[], opts: TableOptions): object {
  return {
    kind: 'Table',
    apiVersion: 'meta.k8s.io/v1',
    metadata: { resourceVersion: opts.resourceVersion },
    columnDefinitions: columnDefinitions(r),
    rows: objs.map((o) => tableRow(r, o, opts)),
  };
}
