// The dashboard's live model: informer caches over the store, turned into the JSON the page
// draws (types.ts). Watch events only mark what changed; `flush` turns the marks into one
// delta (changed nodes, Workloads, the queues, the topology views when nodes or topology
// objects changed), so a burst of writes costs one message.
//
// 1. nodes: capacity, the requests of their bound non-terminal pods, Ready / cordoned /
//    taints, the pods and Workloads on them;
// 2. Workloads: status, queue, pending reason and what blocks it, conditions and every
//    transition seen, placement (decoded topology assignment), pods by rank, events;
// 3. queues: per ClusterQueue and flavor/resource the nominal quota, usage of admitted
//    Workloads and borrowing; pending and admitted counts; LocalQueues; cohorts;
// 4. views: where each node sits per TAS flavor (placement/topology-views.ts).

import { GangAnnotation } from '../api/gang.ts';
import { KueueAnnotation, KueueLabel } from '../api/keys.ts';
import {
  isTerminal,
  type Condition,
  type KObject,
  type Node,
  type Pod,
  type ResourceFlavor,
  type Topology,
  type Workload,
} from '../api/objects.ts';
import { parseQuantity } from '../api/quantity.ts';
import type { ClusterQueue, Cohort, LocalQueue } from '../api/queues.ts';
import { podRequests, resourceAmount, type ResourceAmounts } from '../api/resources.ts';
import { parseTime } from '../api/time.ts';
import { compareStrings } from '../api/values.ts';
import type { HyperNode } from '../api/volcano-objects.ts';
import { assignmentPlacement, plainAmount, plainMap, podRank, workloadStatus } from '../cluster/report.ts';
import { fitByLevel } from '../placement/fit-levels.ts';
import { buildTasFlavors } from '../placement/tas-flavors.ts';
import type { TasFlavor } from '../placement/workload-placement.ts';
import { HyperNodeTree } from '../topology/hypernode-tree.ts';
import { topologyViews } from '../placement/topology-views.ts';
import type { Clock } from '../runtime/clock.ts';
import { Informer } from '../runtime/informer.ts';
import { objectKey, type ObjectStore } from '../runtime/store.ts';
import { AllocatableCache, nodeInfoFromNode, type NodeInfo } from '../topology/source.ts';
import type {
  BlockerJson,
  ClusterQueueJson,
  ConditionJson,
  DashboardDelta,
  DashboardState,
  EventJson,
  NodeJson,
  QueuesJson,
  ViewJson,
  WorkloadJson,
} from './types.ts';

const POD_NODE = 'dashboard:node';
const POD_WORKLOAD = 'dashboard:workload';
const EVENT_OBJECT = 'dashboard:object';
const WORKLOAD_QUEUE = 'dashboard:queue';

type AnyEvent = KObject & {
  involvedObject?: { kind?: string; namespace?: string; name?: string };
  type?: string;
  reason?: string;
  message?: string;
  count?: number;
  lastTimestamp?: string;
  firstTimestamp?: string;
  eventTime?: string;
};

const timeMs = (s: string | undefined): number | null => {
  const t = parseTime(s);
  return t === undefined ? null : t * 1000;
};

/** The quota amount of a quantity string in plain units, or 0 when it cannot be read. */
function quotaAmount(resource: string, q: string | number | undefined): number {
  if (q === undefined) return 0;
  try {
    return plainAmount(resource, resourceAmount(resource, parseQuantity(q)));
  } catch {
    return 0;
  }
}

/** What keeps a pending Workload out, from its QuotaReserved=False message. */
export function blockerOf(message: string): BlockerJson {
  if (/topology "[^"]*" (allows to fit only|doesn't allow to fit)/.test(message)) return { kind: 'topology', text: message };
  if (/quota|borrow|Cohort|ClusterQueue .* (is inactive|doesn't exist)/i.test(message)) return { kind: 'quota', text: message };
  return { kind: 'other', text: message };
}

export interface DashboardModelOptions {
  store: ObjectStore;
  clock: Clock;
}

export class DashboardModel {
  readonly nodes: Informer<Node>;
  readonly pods: Informer<Pod>;
  readonly workloads: Informer<Workload>;
  readonly clusterQueues: Informer<ClusterQueue>;
  readonly localQueues: Informer<LocalQueue>;
  readonly cohorts: Informer<Cohort>;
  readonly flavors: Informer<ResourceFlavor>;
  readonly topologies: Informer<Topology>;
  readonly hyperNodes: Informer<HyperNode>;
  readonly events: Informer<AnyEvent>;
  private readonly clock: Clock;
  private readonly allocatable = new AllocatableCache();
  private readonly requests = new WeakMap<Pod, ResourceAmounts>();
  /** Condition transitions seen per Workload key. */
  private readonly history = new Map<string, ConditionJson[]>();

  private readonly dirtyNodes = new Set<string>();
  private readonly dirtyWorkloads = new Set<string>();
  private viewsDirty = true;
  private queuesDirty = true;
  private resourcesCache: string[] = [];
  private viewsCache: ViewJson[] = [];
  private seqNo = 0;
  /** TAS flavors with every bound pod's usage, for what would fit (built when first asked after a change). */
  private fitFlavors: TasFlavor[] | undefined;
  /** Pending Workloads the topology keeps out: redone when capacity changes. */
  private readonly topologyBlocked = new Set<string>();
  private readonly listeners = new Set<() => void>();

  constructor(opts: DashboardModelOptions) {
    const s = opts.store;
    this.clock = opts.clock;
    this.nodes = new Informer<Node>(s, 'Node');
    this.pods = new Informer<Pod>(s, 'Pod');
    this.workloads = new Informer<Workload>(s, 'Workload');
    this.clusterQueues = new Informer<ClusterQueue>(s, 'ClusterQueue');
    this.localQueues = new Informer<LocalQueue>(s, 'LocalQueue');
    this.cohorts = new Informer<Cohort>(s, 'Cohort');
    this.flavors = new Informer<ResourceFlavor>(s, 'ResourceFlavor');
    this.topologies = new Informer<Topology>(s, 'Topology');
    this.hyperNodes = new Informer<HyperNode>(s, 'HyperNode');
    this.events = new Informer<AnyEvent>(s, 'Event');

    this.pods.addIndex(POD_NODE, (p) => (p.spec?.nodeName ? [p.spec.nodeName] : []));
    this.pods.addIndex(POD_WORKLOAD, (p) => {
      const w = p.metadata.annotations?.[KueueAnnotation.Workload];
      return w === undefined ? [] : [`${p.metadata.namespace ?? 'default'}/${w}`];
    });
    this.events.addIndex(EVENT_OBJECT, (e) => {
      const o = e.involvedObject;
      return o?.kind && o.name ? [`${o.kind}/${o.namespace ?? ''}/${o.name}`] : [];
    });
    this.workloads.addIndex(WORKLOAD_QUEUE, (w) => [
      `${w.metadata.namespace ?? ''}/${w.spec?.queueName ?? w.metadata.labels?.[KueueLabel.QueueName] ?? ''}`,
    ]);

    const changed = () => this.notify();
    this.nodes.addHandler({
      add: (n) => this.markNode(n.metadata.name, true),
      update: (o, n) => this.markNode(n.metadata.name, !sameLabels(o, n)),
      delete: (n) => this.markNode(n.metadata.name, true),
    });
    const podMark = (p: Pod) => {
      if (p.spec?.nodeName) {
        this.dirtyNodes.add(p.spec.nodeName);
        this.capacityChanged();
      }
      const w = p.metadata.annotations?.[KueueAnnotation.Workload];
      if (w !== undefined) this.dirtyWorkloads.add(`${p.metadata.namespace ?? 'default'}/${w}`);
      changed();
    };
    this.pods.addHandler({
      add: podMark,
      update: (o, n) => {
        if (o.spec?.nodeName && o.spec.nodeName !== n.spec?.nodeName) this.dirtyNodes.add(o.spec.nodeName);
        podMark(n);
      },
      delete: podMark,
    });
    const wlMark = (w: Workload, old?: Workload) => {
      const key = objectKey(w);
      this.dirtyWorkloads.add(key);
      this.recordHistory(key, old, w);
      this.queuesDirty = true;
      changed();
    };
    this.workloads.addHandler({ add: (w) => wlMark(w), update: (o, n) => wlMark(n, o), delete: (w) => wlMark(w) });
    const queueMark = () => {
      this.queuesDirty = true;
      changed();
    };
    for (const i of [this.clusterQueues, this.localQueues, this.cohorts] as unknown as Informer[])
      i.addHandler({ add: queueMark, update: queueMark, delete: queueMark });
    const viewMark = () => {
      this.viewsDirty = true;
      this.capacityChanged();
      changed();
    };
    for (const i of [this.flavors, this.topologies, this.hyperNodes] as unknown as Informer[])
      i.addHandler({ add: viewMark, update: viewMark, delete: viewMark });
    const eventMark = (e: AnyEvent) => {
      const o = e.involvedObject;
      if (!o?.name) return;
      if (o.kind === 'Workload') this.dirtyWorkloads.add(`${o.namespace ?? ''}/${o.name}`);
      else for (const w of this.workloadsOwnedBy(o.kind ?? '', o.namespace, o.name)) this.dirtyWorkloads.add(w);
      changed();
    };
    this.events.addHandler({ add: eventMark, update: (_o, n) => eventMark(n) });
  }

  async start(): Promise<void> {
    for (const i of this.informers()) await i.start();
  }

  stop(): void {
    for (const i of this.informers()) i.stop();
    this.listeners.clear();
  }

  /** Calls `fn` (synchronously, from the watch) whenever something was marked. */
  onChange(fn: () => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  get seq(): number {
    return this.seqNo;
  }

  /** Everything, for a page that just opened. Clears no marks. */
  state(): DashboardState {
    this.refreshViews();
    return {
      seq: this.seqNo,
      now: this.clock.now(),
      resources: this.resourcesCache,
      defaultResource: defaultResource(this.resourcesCache),
      views: this.viewsCache,
      nodes: [...this.nodes.values()].map((n) => this.nodeJson(n.metadata.name)!).sort((a, b) => compareStrings(a.name, b.name)),
      workloads: [...this.workloads.values()].map((w) => this.workloadJson(objectKey(w))!).sort((a, b) => compareStrings(a.key, b.key)),
      queues: this.queuesJson(),
    };
  }

  /** What changed since the last flush, or undefined when nothing did. */
  flush(): DashboardDelta | undefined {
    if (this.dirtyNodes.size === 0 && this.dirtyWorkloads.size === 0 && !this.viewsDirty && !this.queuesDirty) return undefined;
    const d: DashboardDelta = { seq: ++this.seqNo, now: this.clock.now() };
    if (this.viewsDirty) {
      this.refreshViews();
      d.views = this.viewsCache;
      d.resources = this.resourcesCache;
      d.defaultResource = defaultResource(this.resourcesCache);
    }
    if (this.dirtyNodes.size > 0) {
      d.nodes = [];
      d.removedNodes = [];
      for (const name of this.dirtyNodes) {
        const j = this.nodeJson(name);
        if (j) d.nodes.push(j);
        else d.removedNodes.push(name);
      }
      this.dirtyNodes.clear();
    }
    if (this.dirtyWorkloads.size > 0) {
      d.workloads = [];
      d.removedWorkloads = [];
      for (const key of this.dirtyWorkloads) {
        const j = this.workloadJson(key);
        if (j) d.workloads.push(j);
        else {
          d.removedWorkloads.push(key);
          this.history.delete(key);
          this.topologyBlocked.delete(key);
        }
      }
      this.dirtyWorkloads.clear();
    }
    if (this.queuesDirty) {
      d.queues = this.queuesJson();
      this.queuesDirty = false;
    }
    return d;
  }

  // ---- marks ------------------------------------------------------------------------

  private informers(): Informer[] {
    return [
      this.nodes,
      this.pods,
      this.workloads,
      this.clusterQueues,
      this.localQueues,
      this.cohorts,
      this.flavors,
      this.topologies,
      this.hyperNodes,
      this.events,
    ] as unknown as Informer[];
  }

  private capacityChanged(): void {
    this.fitFlavors = undefined;
    for (const k of this.topologyBlocked) this.dirtyWorkloads.add(k);
  }

  private tasFlavors(): TasFlavor[] {
    if (this.fitFlavors) return this.fitFlavors;
    const infos: NodeInfo[] = [];
    for (const n of this.nodes.values()) {
      const info = this.nodeInfo(n);
      if (info) infos.push(info);
    }
    const hns = this.hyperNodes.list();
    const tree = hns.length > 0 ? new HyperNodeTree(hns, infos) : undefined;
    const { flavors } = buildTasFlavors({
      flavors: this.flavors.list(),
      topologies: new Map(this.topologies.list().map((t) => [t.metadata.name, t])),
      tree,
      nodes: infos,
    });
    for (const p of this.pods.values()) {
      if (!p.spec?.nodeName || isTerminal(p)) continue;
      const { pods: _pods, ...requests } = this.podRequests(p);
      for (const f of flavors) f.snapshot.addPod(objectKey(p), p.spec.nodeName, requests);
    }
    return (this.fitFlavors = flavors);
  }

  /** What blocks a pending Workload; for topology, what one domain of each level holds now. */
  private blocker(key: string, w: Workload, message: string | null): BlockerJson | null {
    this.topologyBlocked.delete(key);
    if (message === null) return null;
    const b = blockerOf(message);
    if (b.kind !== 'topology') return b;
    this.topologyBlocked.add(key);
    try {
      const fit = fitByLevel(w, this.tasFlavors());
      return fit ? { ...b, fit } : b;
    } catch {
      return b;
    }
  }

  private notify(): void {
    for (const fn of this.listeners) fn();
  }

  private markNode(name: string, structural: boolean): void {
    this.dirtyNodes.add(name);
    this.capacityChanged();
    if (structural) this.viewsDirty = true;
    this.notify();
  }

  private recordHistory(key: string, old: Workload | undefined, w: Workload): void {
    let h = this.history.get(key);
    const before = new Map((old?.status?.conditions ?? []).map((c) => [c.type, c]));
    if (!h) {
      h = [];
      this.history.set(key, h);
      for (const c of w.status?.conditions ?? []) if (!before.has(c.type)) h.push(conditionJson(c));
      if (!old) {
        h.sort((a, b) => (a.at ?? 0) - (b.at ?? 0));
        return;
      }
    }
    for (const c of w.status?.conditions ?? []) {
      const o = before.get(c.type);
      if (!o || o.status !== c.status || o.reason !== c.reason || o.message !== c.message)
        h.push({ ...conditionJson(c), at: timeMs(c.lastTransitionTime) ?? this.clock.now() });
    }
    if (h.length > 200) h.splice(0, h.length - 200);
  }

  private workloadsOwnedBy(kind: string, namespace: string | undefined, name: string): string[] {
    const out: string[] = [];
    for (const w of namespace === undefined ? this.workloads.values() : this.workloads.list(namespace)) {
      if ((w.metadata.ownerReferences ?? []).some((r) => r.kind === kind && r.name === name)) out.push(objectKey(w));
    }
    return out;
  }

  // ---- JSON -------------------------------------------------------------------------

  private nodeInfo(n: Node): NodeInfo | undefined {
    try {
      return nodeInfoFromNode(n, this.allocatable);
    } catch {
      return undefined;
    }
  }

  private refreshViews(): void {
    if (!this.viewsDirty) return;
    this.viewsDirty = false;
    const infos: NodeInfo[] = [];
    const resources = new Set<string>();
    for (const n of this.nodes.values()) {
      const info = this.nodeInfo(n);
      if (!info) continue;
      infos.push(info);
      for (const r in info.allocatable) resources.add(r);
    }
    this.resourcesCache = [...resources].sort(compareStrings);
    this.viewsCache = topologyViews({
      flavors: this.flavors.list(),
      topologies: this.topologies.list(),
      hyperNodes: this.hyperNodes.list(),
      nodes: infos,
    }).map((v) => ({
      name: v.name,
      flavor: v.flavor,
      source: v.source,
      levels: v.levels,
      paths: Object.fromEntries(v.paths),
    }));
  }

  private podRequests(p: Pod): ResourceAmounts {
    let r = this.requests.get(p);
    if (!r) {
      try {
        r = { ...podRequests(p.spec), pods: 1 };
      } catch {
        r = { pods: 1 };
      }
      this.requests.set(p, r);
    }
    return r;
  }

  nodeJson(name: string): NodeJson | undefined {
    const n = this.nodes.get(undefined, name);
    if (!n) return undefined;
    const info = this.nodeInfo(n);
    const used: ResourceAmounts = {};
    const pods: string[] = [];
    const workloads = new Set<string>();
    for (const p of this.pods.byIndex(POD_NODE, name)) {
      if (isTerminal(p)) continue;
      pods.push(objectKey(p));
      const r = this.podRequests(p);
      for (const k in r) used[k] = (used[k] ?? 0) + r[k]!;
      const w = p.metadata.annotations?.[KueueAnnotation.Workload];
      if (w !== undefined) workloads.add(`${p.metadata.namespace ?? 'default'}/${w}`);
    }
    pods.sort(compareStrings);
    return {
      name,
      capacity: plainMap(info?.allocatable ?? {}),
      used: plainMap(used),
      ready: info?.ready ?? false,
      unschedulable: info?.unschedulable ?? false,
      taints: (n.spec?.taints ?? []).map((t) => `${t.key}${t.value ? `=${t.value}` : ''}:${t.effect}`),
      pods,
      workloads: [...workloads].sort(compareStrings),
    };
  }

  workloadJson(key: string): WorkloadJson | undefined {
    const w = this.workloads.get(key);
    if (!w) return undefined;
    const ns = w.metadata.namespace ?? 'default';
    const owner = w.metadata.ownerReferences?.[0];
    const conditions = (w.status?.conditions ?? []).map(conditionJson);
    const status = workloadStatus(w);
    const qr = (w.status?.conditions ?? []).find((c) => c.type === 'QuotaReserved');
    const pending = status === 'Pending' || status === 'Evicted';
    const pendingReason = pending && qr?.status === 'False' && qr.message ? qr.message : null;
    const pods = this.pods.byIndex(POD_WORKLOAD, key);
    const podList = pods
      .map((p) => {
        const rank = podRank(
          {
            key: objectKey(p),
            name: p.metadata.name,
            workload: key,
            podSet: p.metadata.labels?.[KueueLabel.PodSet],
            phase: p.status?.phase ?? 'Pending',
            labels: p.metadata.labels ?? {},
            offset: p.metadata.annotations?.[KueueAnnotation.PodIndexOffset],
          },
          w,
        );
        return {
          name: p.metadata.name,
          podSet: p.metadata.labels?.[KueueLabel.PodSet] ?? null,
          node: p.spec?.nodeName ?? null,
          rank,
          phase: p.status?.phase ?? 'Pending',
        };
      })
      .sort(
        (a, b) =>
          compareStrings(a.podSet ?? '', b.podSet ?? '') || (a.rank ?? Infinity) - (b.rank ?? Infinity) || compareStrings(a.name, b.name),
      );
    const placement = (w.status?.admission?.podSetAssignments ?? []).map((psa) => assignmentPlacement(psa, w.spec.podSets));
    const refs = [`Workload/${ns}/${w.metadata.name}`, ...(owner ? [`${owner.kind}/${ns}/${owner.name}`] : [])];
    const events: EventJson[] = [];
    for (const ref of refs) {
      for (const e of this.events.byIndex(EVENT_OBJECT, ref)) {
        events.push({
          type: e.type ?? 'Normal',
          reason: e.reason ?? '',
          message: e.message ?? '',
          at: timeMs(e.lastTimestamp ?? e.eventTime ?? e.firstTimestamp),
          count: e.count ?? 1,
          object: ref.slice(0, ref.indexOf('/')),
        });
      }
    }
    events.sort((a, b) => (a.at ?? 0) - (b.at ?? 0));
    const ann = w.metadata.annotations ?? {};
    let gangGroup: string[] = [];
    try {
      const g = ann[GangAnnotation.Groups];
      if (g) gangGroup = (JSON.parse(g) as unknown[]).map(String);
    } catch {
      gangGroup = [];
    }
    return {
      key,
      namespace: ns,
      name: w.metadata.name,
      kind: owner?.kind ?? 'Workload',
      owner: owner ? `${owner.kind}/${owner.name}` : null,
      queue: w.spec.queueName ?? w.metadata.labels?.[KueueLabel.QueueName] ?? null,
      clusterQueue: w.status?.admission?.clusterQueue ?? this.clusterQueueOf(ns, w.spec.queueName),
      status,
      priority: w.spec.priority ?? 0,
      pods: w.spec.podSets.reduce((n, p) => n + (p.count ?? 0), 0),
      podsRunning: pods.filter((p) => p.status?.phase === 'Running').length,
      created: timeMs(w.metadata.creationTimestamp),
      pendingReason,
      blocker: this.blocker(key, w, pendingReason),
      gang: ann[GangAnnotation.Name] ?? null,
      gangGroup,
      conditions,
      history: [...(this.history.get(key) ?? conditions)],
      placement,
      podList,
      events: events.slice(-50),
    };
  }

  private clusterQueueOf(namespace: string, queue: string | undefined): string | null {
    if (!queue) return null;
    return this.localQueues.get(namespace, queue)?.spec.clusterQueue ?? null;
  }

  queuesJson(): QueuesJson {
    const cqs: ClusterQueueJson[] = [];
    const usage = new Map<string, Map<string, number>>();
    const counts = new Map<string, { pending: number; admitted: number }>();
    const lqCounts = new Map<string, { pending: number; admitted: number }>();
    for (const w of this.workloads.values()) {
      const status = workloadStatus(w);
      if (status === 'Finished' || status === 'Failed') continue;
      const ns = w.metadata.namespace ?? 'default';
      const lq = w.spec.queueName;
      const admitted = w.status?.admission;
      const cq = admitted?.clusterQueue ?? this.clusterQueueOf(ns, lq);
      const field = admitted ? 'admitted' : 'pending';
      if (cq) {
        const c = counts.get(cq) ?? { pending: 0, admitted: 0 };
        c[field]++;
        counts.set(cq, c);
      }
      if (lq) {
        const k = `${ns}/${lq}`;
        const c = lqCounts.get(k) ?? { pending: 0, admitted: 0 };
        c[field]++;
        lqCounts.set(k, c);
      }
      if (!admitted?.clusterQueue) continue;
      const u = usage.get(admitted.clusterQueue) ?? new Map<string, number>();
      usage.set(admitted.clusterQueue, u);
      for (const psa of admitted.podSetAssignments ?? []) {
        for (const [r, q] of Object.entries(psa.resourceUsage ?? {})) {
          const flavor = psa.flavors?.[r];
          if (flavor === undefined) continue;
          const k = `${flavor}/${r}`;
          u.set(k, (u.get(k) ?? 0) + quotaAmount(r, q as string));
        }
      }
    }
    const localQueues = [...this.localQueues.values()].sort((a, b) => compareStrings(objectKey(a), objectKey(b)));
    for (const cq of [...this.clusterQueues.values()].sort((a, b) => compareStrings(a.metadata.name, b.metadata.name))) {
      const name = cq.metadata.name;
      const u = usage.get(name) ?? new Map<string, number>();
      const resources = [];
      const seen = new Set<string>();
      for (const g of cq.spec.resourceGroups ?? []) {
        for (const f of g.flavors) {
          for (const r of f.resources) {
            const k = `${f.name}/${r.name}`;
            seen.add(k);
            const nominal = quotaAmount(r.name, r.nominalQuota);
            const used = u.get(k) ?? 0;
            resources.push({
              flavor: f.name,
              resource: r.name,
              nominal,
              borrowingLimit: r.borrowingLimit === undefined ? null : quotaAmount(r.name, r.borrowingLimit),
              usage: used,
              borrowed: Math.max(0, used - nominal),
            });
          }
        }
      }
      for (const [k, used] of u) {
        if (seen.has(k)) continue;
        const i = k.lastIndexOf('/');
        resources.push({ flavor: k.slice(0, i), resource: k.slice(i + 1), nominal: 0, borrowingLimit: null, usage: used, borrowed: used });
      }
      const c = counts.get(name) ?? { pending: 0, admitted: 0 };
      cqs.push({
        name,
        cohort: cq.spec.cohortName ?? null,
        pending: c.pending,
        admitted: c.admitted,
        resources,
        localQueues: localQueues
          .filter((l) => l.spec.clusterQueue === name)
          .map((l) => ({
            namespace: l.metadata.namespace ?? 'default',
            name: l.metadata.name,
            ...(lqCounts.get(objectKey(l)) ?? { pending: 0, admitted: 0 }),
          })),
      });
    }
    const cohortNames = new Set<string>([...this.cohorts.values()].map((c) => c.metadata.name));
    for (const c of cqs) if (c.cohort) cohortNames.add(c.cohort);
    const cohorts = [...cohortNames].sort(compareStrings).map((name) => ({
      name,
      parent: this.cohorts.get(undefined, name)?.spec.parentName ?? null,
      clusterQueues: cqs.filter((c) => c.cohort === name).map((c) => c.name),
    }));
    return { clusterQueues: cqs, cohorts };
  }
}

function sameLabels(a: Node, b: Node): boolean {
  const x = a.metadata.labels ?? {};
  const y = b.metadata.labels ?? {};
  const kx = Object.keys(x);
  if (kx.length !== Object.keys(y).length) return false;
  return kx.every((k) => x[k] === y[k]);
}

function conditionJson(c: Condition): ConditionJson {
  return { type: c.type, status: c.status, reason: c.reason ?? '', message: c.message ?? '', at: timeMs(c.lastTransitionTime) };
}

/** The scarce resource shown by default: GPUs when some node has them, else cpu. */
export function defaultResource(resources: readonly string[]): string {
  return resources.find((r) => r.endsWith('/gpu')) ?? resources.find((r) => r === 'cpu') ?? resources[0] ?? 'pods';
}
