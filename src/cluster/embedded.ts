// The embedded cluster: an in-memory API server (MemoryStore, or the durable store), a clock (virtual unless one
// is given), and a Manager running every topoqueue controller and every stand-in for what a
// real cluster already has (job controllers, binder, kubelet, garbage collector...).
//
// Objects are created through the store, so admission hooks (the webhooks the controllers
// register when the manager starts) see them as they would on a real API server: start the
// cluster before creating anything. Two things an API server does are done here too:
// - a Namespace gets the label `kubernetes.io/metadata.name: <name>`;
// - an object in a namespace that does not exist gets that Namespace created first (a real
//   API server refuses it; a simulation input rarely lists its namespaces).

import { CoreApiVersion } from '../api/api-versions.ts';
import { NAMESPACE_NAME_LABEL } from '../api/keys.ts';
import type { KObject } from '../api/objects.ts';
import { allControllers } from '../controllers/index.ts';
import { defaultConfig, type TopoqueueConfig } from '../controllers/config.ts';
import { type Clock, VirtualClock } from '../runtime/clock.ts';
import type { EventSinkOptions } from '../runtime/events.ts';
import { Manager, type Reconciler } from '../runtime/manager.ts';
import { MemoryStore } from '../runtime/memory-store.ts';
import { standIns } from './index.ts';

/**
 * Kinds that make up the cluster rather than its work, in the order they are created
 * when several are due at one instant (what they refer to first).
 */
export const CLUSTER_KINDS = [
  'Namespace',
  'Node',
  'Topology',
  'ResourceFlavor',
  'Cohort',
  'ClusterQueue',
  'LocalQueue',
  'WorkloadPriorityClass',
  'PriorityClass',
  'AdmissionCheck',
  'HyperNode',
  'SimulationEvent',
] as const;

const CLUSTER_RANK = new Map<string, number>(CLUSTER_KINDS.map((k, i) => [k, i]));

/** Position of a cluster kind in CLUSTER_KINDS; undefined for workloads (Jobs, Pods, Workloads...). */
export function clusterRank(kind: string): number | undefined {
  return CLUSTER_RANK.get(kind);
}

/** Cluster objects first (in CLUSTER_KINDS order), then the rest; input order otherwise. */
export function clusterFirst<T>(items: readonly T[], kindOf: (t: T) => string): T[] {
  const rank = (t: T) => clusterRank(kindOf(t)) ?? CLUSTER_KINDS.length;
  return items
    .map((t, i) => ({ t, i, r: rank(t) }))
    .sort((a, b) => a.r - b.r || a.i - b.i)
    .map((x) => x.t);
}

export interface EmbeddedClusterOptions {
  /** Default: a VirtualClock at 2026-01-01T00:00:00Z. */
  clock?: Clock;
  config?: Partial<TopoqueueConfig>;
  /** Default: allControllers() then standIns(). */
  controllers?: readonly Reconciler<TopoqueueConfig>[];
  events?: EventSinkOptions;
  /** Create missing namespaces of created objects (default true). */
  autoNamespaces?: boolean;
  keepErrors?: number;
  /**
   * The API server's store. Default: a new MemoryStore on the clock. A durable store
   * (runtime/durable-store.ts) reopened after a restart resumes the cluster where it stopped.
   */
  store?: MemoryStore;
}

export interface CreateResult {
  object?: KObject;
  /** Why the store refused the object (a webhook denial, a duplicate name...). */
  error?: string;
}

export class EmbeddedCluster {
  readonly clock: Clock;
  readonly store: MemoryStore;
  readonly manager: Manager<TopoqueueConfig>;
  private readonly autoNamespaces: boolean;

  constructor(opts: EmbeddedClusterOptions = {}) {
    this.clock = opts.clock ?? new VirtualClock();
    this.store = opts.store ?? new MemoryStore({ clock: this.clock });
    this.manager = new Manager<TopoqueueConfig>({
      store: this.store,
      clock: this.clock,
      config: defaultConfig(opts.config),
      events: opts.events,
      keepErrors: opts.keepErrors,
    });
    this.autoNamespaces = opts.autoNamespaces ?? true;
    this.store.addAdmissionHook({
      name: 'namespace-lifecycle.topoqueue.io',
      kinds: ['Namespace'],
      operations: ['CREATE', 'UPDATE'],
      type: 'mutating',
      admit: ({ object }) => {
        object.metadata.labels = { ...(object.metadata.labels ?? {}), [NAMESPACE_NAME_LABEL]: object.metadata.name };
      },
    });
    for (const c of opts.controllers ?? [...allControllers(), ...standIns()]) this.manager.add(c);
  }

  /** Sets the controllers up (webhooks included) and starts their informers. */
  async start(): Promise<void> {
    await this.manager.start();
  }

  stop(): void {
    this.manager.stop();
  }

  /** Creates an object as a user would (through the webhooks); a refusal is returned, not thrown. */
  create(obj: KObject): CreateResult {
    try {
      if (this.autoNamespaces && this.store.namespaced(obj.kind)) this.ensureNamespace(obj.metadata.namespace ?? 'default');
      return { object: this.store.createSync(obj) };
    } catch (e) {
      return { error: (e as Error).message };
    }
  }

  /** Creates objects, cluster objects first (CLUSTER_KINDS order), the rest in the given order. */
  load(objects: readonly KObject[]): CreateResult[] {
    return clusterFirst(objects, (o) => o.kind).map((o) => this.create(o));
  }

  /** Virtual time: runs until idle or `untilMs` (absolute clock time). */
  run(opts: { untilMs?: number; maxSteps?: number } = {}): Promise<{ steps: number; idle: boolean }> {
    return this.manager.run(opts);
  }

  private ensureNamespace(ns: string): void {
    if (this.store.getSync('Namespace', undefined, ns)) return;
    this.store.createSync({ apiVersion: CoreApiVersion.V1, kind: 'Namespace', metadata: { name: ns } });
  }
}
