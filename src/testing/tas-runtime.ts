// Fixtures for the TAS runtime controllers (TopologyUngater, node failures, HyperNode
// status): admitted Workloads with topology assignments, the pods their jobs create, a
// manager over a memory store, and a store whose watch events can be held back (a stale
// informer cache). Test-only.

import { CoreApiVersion, KueueApiVersion } from '../api/api-versions.ts';
import { HOSTNAME_LABEL, KueueAnnotation, KueueLabel, KueueSchedulingGate } from '../api/keys.ts';
import type {
  KObject,
  Node,
  Pod,
  PodPhase,
  PodSetAssignment,
  PodSetTopologyRequest,
  StringMap,
  Toleration,
  Workload,
} from '../api/objects.ts';
import type { Assignment } from '../placement/assignment.ts';
import { encodeV1beta2 } from '../placement/assignment-codec.ts';
import { VirtualClock } from '../runtime/clock.ts';
import { Manager, type Reconciler } from '../runtime/manager.ts';
import { MemoryStore } from '../runtime/memory-store.ts';
import type { AdmissionHook, DeleteOptions, ListOptions, ListResult, ObjectStore, WatchHandler, WatchOptions } from '../runtime/store.ts';
import { defaultConfig, type TopoqueueConfig } from '../controllers/config.ts';

/** `[host, count]` pairs: a hostname-lowest assignment. */
export type HostCounts = readonly (readonly [string, number])[];

export function hostAssignment(hosts: HostCounts): Assignment {
  return { levels: [HOSTNAME_LABEL], domains: hosts.map(([h, count]) => ({ values: [h], count })) };
}

/**
 * `tasWorkload('wl').podSet('main', 4, { podIndexLabel: ... }).assign('main', [['h1', 2], ['h2', 2]]).build()`:
 * a Workload admitted (QuotaReserved, Admitted) with a topology assignment per PodSet.
 */
export class TasWorkloadBuilder {
  private readonly obj: Workload;
  private readonly psas: PodSetAssignment[] = [];
  constructor(name: string, namespace = 'default') {
    this.obj = {
      apiVersion: KueueApiVersion.V1beta2,
      kind: 'Workload',
      metadata: { name, namespace },
      spec: { podSets: [], queueName: 'lq' },
    };
  }
  podSet(
    name: string,
    count: number,
    topology: PodSetTopologyRequest = { required: HOSTNAME_LABEL },
    opts: { tolerations?: Toleration[] } = {},
  ): this {
    this.obj.spec.podSets.push({
      name,
      count,
      topologyRequest: topology,
      template: {
        spec: {
          containers: [{ name: 'c', resources: { requests: { cpu: '1' } } }],
          ...(opts.tolerations ? { tolerations: opts.tolerations } : {}),
        },
      },
    });
    return this;
  }
  /** Assigns a PodSet: host counts, or a full Assignment (other levels). */
  assign(podSet: string, a: HostCounts | Assignment, opts: { flavor?: string; count?: number } = {}): this {
    const assignment = 'levels' in a ? a : hostAssignment(a);
    const count = opts.count ?? assignment.domains.reduce((n, d) => n + d.count, 0);
    this.psas.push({
      name: podSet,
      flavors: { cpu: opts.flavor ?? 'tas' },
      resourceUsage: { cpu: String(count) },
      count,
      topologyAssignment: encodeV1beta2(assignment),
    });
    return this;
  }
  unhealthy(...nodes: string[]): this {
    this.obj.status = { ...(this.obj.status ?? {}), unhealthyNodes: nodes.map((name) => ({ name })) };
    return this;
  }
  annotate(a: StringMap): this {
    this.obj.metadata.annotations = { ...(this.obj.metadata.annotations ?? {}), ...a };
    return this;
  }
  build(): Workload {
    const w = structuredClone(this.obj);
    const byName = new Map(this.psas.map((p) => [p.name, p]));
    w.status = {
      ...(w.status ?? {}),
      admission: {
        clusterQueue: 'cq',
        podSetAssignments: w.spec.podSets.map((ps) => structuredClone(byName.get(ps.name)) ?? { name: ps.name, count: ps.count }),
      },
      conditions: [
        { type: 'QuotaReserved', status: 'True', reason: 'QuotaReserved', message: 'Quota reserved in ClusterQueue cq' },
        { type: 'Admitted', status: 'True', reason: 'Admitted', message: 'The workload is admitted' },
      ],
    };
    return w;
  }
}

export const tasWorkload = (name: string, namespace?: string) => new TasWorkloadBuilder(name, namespace);

/** A pod of a TAS Workload's PodSet, as the job reconciler starts it: gated, annotated, labelled. */
export class TasPodBuilder {
  private readonly obj: Pod;
  constructor(name: string, workload: string, podSet: string, namespace = 'default') {
    this.obj = {
      apiVersion: CoreApiVersion.V1,
      kind: 'Pod',
      metadata: { name, namespace, labels: { [KueueLabel.PodSet]: podSet }, annotations: { [KueueAnnotation.Workload]: workload } },
      spec: {
        containers: [{ name: 'c', resources: { requests: { cpu: '1' } } }],
        schedulingGates: [{ name: KueueSchedulingGate.Topology }],
      },
      status: { phase: 'Pending' },
    };
  }
  label(k: string, v: string | number): this {
    this.obj.metadata.labels![k] = String(v);
    return this;
  }
  annotate(k: string, v: string): this {
    this.obj.metadata.annotations![k] = v;
    return this;
  }
  /** Already ungated onto a host (nodeSelector), not bound. */
  ungatedOn(host: string): this {
    delete this.obj.spec.schedulingGates;
    this.obj.spec.nodeSelector = { ...(this.obj.spec.nodeSelector ?? {}), [HOSTNAME_LABEL]: host };
    return this;
  }
  /** Ungated, bound and Running on a node. */
  runningOn(node: string): this {
    this.ungatedOn(node);
    this.obj.spec.nodeName = node;
    this.obj.status = { phase: 'Running' };
    return this;
  }
  phase(p: PodPhase): this {
    this.obj.status = { ...(this.obj.status ?? {}), phase: p };
    return this;
  }
  build(): Pod {
    return structuredClone(this.obj);
  }
}

export const tasPod = (name: string, workload: string, podSet = 'main', namespace?: string) =>
  new TasPodBuilder(name, workload, podSet, namespace);

/** Where a pod went: its hostname selector, or `gated`. */
export function placement(p: Pod | undefined): string {
  if (!p) return 'gone';
  if ((p.spec.schedulingGates ?? []).some((g) => g.name === KueueSchedulingGate.Topology)) return 'gated';
  return p.spec.nodeSelector?.[HOSTNAME_LABEL] ?? '?';
}

/** A Ready node with a hostname label. */
export function readyNode(name: string, opts: { labels?: StringMap } = {}): Node {
  return {
    apiVersion: CoreApiVersion.V1,
    kind: 'Node',
    metadata: { name, labels: { [HOSTNAME_LABEL]: name, ...(opts.labels ?? {}) } },
    spec: {},
    status: { allocatable: { cpu: '8', pods: '110' }, conditions: [{ type: 'Ready', status: 'True' }] },
  };
}

export interface TasEnv {
  clock: VirtualClock;
  store: MemoryStore;
  m: Manager<TopoqueueConfig>;
}

/**
 * A manager over a memory store holding `objects`, with the given controllers, started (not
 * run). `wrap` puts a store in front of the memory store (e.g. a PausableWatchStore).
 */
export async function tasEnv(
  objects: readonly KObject[],
  reconcilers: readonly Reconciler<TopoqueueConfig>[],
  opts: { config?: Partial<TopoqueueConfig>; wrap?: (mem: MemoryStore) => ObjectStore } = {},
): Promise<TasEnv> {
  const clock = new VirtualClock();
  const store = new MemoryStore({ clock });
  for (const o of objects) store.createSync(o);
  const m = new Manager<TopoqueueConfig>({ store: opts.wrap ? opts.wrap(store) : store, clock, config: defaultConfig(opts.config) });
  for (const r of reconcilers) m.add(r);
  await m.start();
  return { clock, store, m };
}

/**
 * A store whose watch events can be held back and released in order: an informer that
 * lags behind the store, as a real client's does.
 */
export class PausableWatchStore implements ObjectStore {
  private paused = false;
  private readonly held: (() => void)[] = [];
  constructor(readonly inner: MemoryStore) {}
  pause(): void {
    this.paused = true;
  }
  /** Delivers up to `n` held events, in order. */
  deliver(n = Infinity): void {
    for (let i = 0; i < n && this.held.length > 0; i++) this.held.shift()!();
  }
  resume(): void {
    this.paused = false;
    this.deliver();
  }
  get heldEvents(): number {
    return this.held.length;
  }
  namespaced(kind: string): boolean {
    return this.inner.namespaced(kind);
  }
  get<T extends KObject>(kind: string, namespace: string | undefined, name: string): Promise<T | undefined> {
    return this.inner.get<T>(kind, namespace, name);
  }
  list<T extends KObject>(kind: string, opts?: ListOptions): Promise<ListResult<T>> {
    return this.inner.list<T>(kind, opts);
  }
  watch<T extends KObject>(kind: string, handler: WatchHandler<T>, opts?: WatchOptions): () => void {
    return this.inner.watch<T>(kind, (e) => (this.paused ? this.held.push(() => handler(e)) : handler(e)), opts);
  }
  create<T extends KObject>(obj: T): Promise<T> {
    return this.inner.create(obj);
  }
  update<T extends KObject>(obj: T): Promise<T> {
    return this.inner.update(obj);
  }
  updateStatus<T extends KObject>(obj: T): Promise<T> {
    return this.inner.updateStatus(obj);
  }
  delete<T extends KObject>(kind: string, namespace: string | undefined, name: string, opts?: DeleteOptions): Promise<T | undefined> {
    return this.inner.delete<T>(kind, namespace, name, opts);
  }
  addAdmissionHook(hook: AdmissionHook): void {
    this.inner.addAdmissionHook(hook);
  }
}
