// Fixtures for the plain-Pod and gang controllers: a pod builder, a manager over a memory
// store with virtual time, and stand-ins for what the tests do not run (the scheduler's
// admission write, the kubelet's phases).
//   const h = await podHarness();
//   await h.create(plainPod('foo').queue('user-queue').cpu('1m').build());
//   await h.run();
//   await h.admit('pod-namespace', wlName, { clusterQueue: 'cq', flavor: 'default' });
// Test-only.

import { CoreApiVersion } from '../api/api-versions.ts';
import { KueueLabel } from '../api/keys.ts';
import type { Condition, KObject, Pod, PodSetAssignment, StringMap, Workload } from '../api/objects.ts';
import { PodGroupAnnotation } from '../integrations/pod.ts';
import { defaultConfig, type TopoqueueConfig } from '../controllers/config.ts';
import { podGroupController } from '../controllers/pod-group-controller.ts';
import { nowTimestamp, VirtualClock } from '../runtime/clock.ts';
import { Manager, type Reconciler } from '../runtime/manager.ts';
import { MemoryStore } from '../runtime/memory-store.ts';
import { retryOnConflict } from '../runtime/store.ts';

export class PlainPodBuilder {
  private readonly obj: Pod;
  constructor(name: string, namespace: string) {
    this.obj = {
      apiVersion: CoreApiVersion.V1,
      kind: 'Pod',
      metadata: { name, namespace, labels: {}, annotations: {} },
      spec: { containers: [{ name: 'job', image: 'hello-world', resources: { requests: {} } }] },
    };
  }
  queue(q: string): this {
    return this.label(KueueLabel.QueueName, q);
  }
  /** `kueue.x-k8s.io/pod-group-name` label and, when given, the total count annotation. */
  group(name: string, total?: number): this {
    this.label(KueueLabel.PodGroupName, name);
    if (total !== undefined) this.annotate(PodGroupAnnotation.TotalCount, String(total));
    return this;
  }
  label(k: string, v: string): this {
    this.obj.metadata.labels![k] = v;
    return this;
  }
  annotate(k: string, v: string): this {
    this.obj.metadata.annotations![k] = v;
    return this;
  }
  request(resource: string, q: string | number): this {
    this.obj.spec.containers[0]!.resources!.requests![resource] = String(q);
    return this;
  }
  cpu(q: string | number): this {
    return this.request('cpu', q);
  }
  image(i: string): this {
    this.obj.spec.containers[0]!.image = i;
    return this;
  }
  nodeSelector(s: StringMap): this {
    this.obj.spec.nodeSelector = { ...s };
    return this;
  }
  owner(apiVersion: string, kind: string, name: string): this {
    this.obj.metadata.ownerReferences = [{ apiVersion, kind, name, uid: `uid-${name}`, controller: true }];
    return this;
  }
  build(): Pod {
    return structuredClone(this.obj);
  }
}

export function plainPod(name: string, namespace = 'pod-namespace'): PlainPodBuilder {
  return new PlainPodBuilder(name, namespace);
}

export interface AdmitOptions {
  clusterQueue?: string;
  /** Flavor of every resource of every PodSet (default `default`). */
  flavor?: string;
  /** Admitted count per PodSet (default: the PodSet's count). */
  counts?: Record<string, number>;
  /** A topologyAssignment on every PodSet's assignment (one domain, the whole count). */
  topology?: boolean;
}

export class PodHarness {
  readonly clock = new VirtualClock();
  readonly store = new MemoryStore({ clock: this.clock });
  readonly manager: Manager<TopoqueueConfig>;

  constructor(config: TopoqueueConfig, controllers: Reconciler<TopoqueueConfig>[]) {
    this.manager = new Manager({ store: this.store, clock: this.clock, config });
    for (const c of controllers) this.manager.add(c);
  }

  async create<T extends KObject>(obj: T): Promise<T> {
    return this.store.create(obj);
  }

  async run(): Promise<void> {
    await this.manager.run();
  }

  pod(name: string, ns = 'pod-namespace'): Pod | undefined {
    return this.store.getSync('Pod', ns, name);
  }

  workload(name: string, ns = 'pod-namespace'): Workload | undefined {
    return this.store.getSync('Workload', ns, name);
  }

  workloads(ns = 'pod-namespace'): Workload[] {
    return this.store.listSync('Workload', { namespace: ns });
  }

  events(reason?: string): { object: string; type: string; reason: string; message: string }[] {
    return this.manager.events.recent.filter((e) => reason === undefined || e.reason === reason);
  }

  async metric(name: string): Promise<number> {
    const m = (await this.manager.metrics.registry.getMetricsAsJSON()).find((x) => x.name === name);
    return (m?.values ?? []).reduce((n, v) => n + v.value, 0);
  }

  /** A status write of Workload ns/name, retried on conflict. */
  private writeWorkloadStatus(ns: string, name: string, change: (w: Workload) => boolean | void): Promise<unknown> {
    return retryOnConflict<Workload>(this.store, 'Workload', ns, name, change, { status: true });
  }

  /** The scheduler's part: status.admission, QuotaReserved and Admitted. */
  async admit(ns: string, name: string, opts: AdmitOptions = {}): Promise<void> {
    const cq = opts.clusterQueue ?? 'cq';
    await this.writeWorkloadStatus(ns, name, (w) => {
      const podSetAssignments: PodSetAssignment[] = w.spec.podSets.map((ps) => {
        const count = opts.counts?.[ps.name] ?? ps.count;
        const resources = Object.keys(ps.template.spec.containers[0]?.resources?.requests ?? { cpu: '0' });
        const a: PodSetAssignment = {
          name: ps.name,
          flavors: Object.fromEntries(resources.map((r) => [r, opts.flavor ?? 'default'])),
          count,
        };
        if (opts.topology)
          a.topologyAssignment = {
            levels: ['kubernetes.io/hostname'],
            slices: [{ domainCount: 1, valuesPerLevel: [{ universal: 'n1' }], podCounts: { universal: count } }],
          };
        return a;
      });
      const at = nowTimestamp(this.clock);
      w.status = {
        ...w.status,
        admission: { clusterQueue: cq, podSetAssignments },
        conditions: [
          ...(w.status?.conditions ?? []).filter((c) => c.type !== 'QuotaReserved' && c.type !== 'Admitted' && c.type !== 'Evicted'),
          {
            type: 'QuotaReserved',
            status: 'True',
            reason: 'QuotaReserved',
            message: `Quota reserved in ClusterQueue ${cq}`,
            lastTransitionTime: at,
          },
          { type: 'Admitted', status: 'True', reason: 'Admitted', message: 'The workload is admitted', lastTransitionTime: at },
        ],
      };
    });
  }

  /** The scheduler's preemption: Evicted=True (Preempted) and Preempted=True; the reservation stays. */
  async preempt(
    ns: string,
    name: string,
    message = 'Preempted to accommodate a workload (UID: x) due to prioritization in the ClusterQueue',
  ): Promise<void> {
    await this.setConditions(ns, name, [
      { type: 'Evicted', status: 'True', reason: 'Preempted', message },
      { type: 'Preempted', status: 'True', reason: 'InClusterQueue', message },
    ]);
  }

  async setConditions(ns: string, name: string, conditions: Condition[]): Promise<void> {
    const at = nowTimestamp(this.clock);
    await this.writeWorkloadStatus(ns, name, (w) => {
      const types = new Set(conditions.map((c) => c.type));
      w.status = {
        ...w.status,
        conditions: [
          ...(w.status?.conditions ?? []).filter((c) => !types.has(c.type)),
          ...conditions.map((c) => ({ ...c, lastTransitionTime: at })),
        ],
      };
    });
  }

  /** The binder's and kubelet's part: bound to `node`, Running and Ready. */
  async runPod(name: string, ns = 'pod-namespace', node = 'n1'): Promise<void> {
    await retryOnConflict(this.store, 'Pod', ns, name, (p) => {
      p.spec.nodeName = node;
    });
    await this.setPhase(name, 'Running', ns);
  }

  async setPhase(name: string, phase: 'Running' | 'Succeeded' | 'Failed', ns = 'pod-namespace', message?: string): Promise<void> {
    await retryOnConflict(
      this.store,
      'Pod',
      ns,
      name,
      (p) => {
        const ready = phase === 'Running' ? 'True' : 'False';
        p.status = {
          ...p.status,
          phase,
          conditions: [...(p.status?.conditions ?? []).filter((c) => c.type !== 'Ready'), { type: 'Ready', status: ready }],
        };
        if (message !== undefined) p.status.message = message;
      },
      { status: true },
    );
  }

  /** The kubelet ends every deleting pod that still runs (Failed), as a real kubelet does. */
  async terminateDeleting(ns = 'pod-namespace'): Promise<void> {
    for (const p of this.store.listSync('Pod', { namespace: ns })) {
      if (p.metadata.deletionTimestamp && p.spec.nodeName && p.status?.phase !== 'Succeeded' && p.status?.phase !== 'Failed')
        await this.setPhase(p.metadata.name, 'Failed', ns);
    }
  }
}

/** A started manager with the pod-group controller (and any others given). */
export async function podHarness(
  opts: { config?: Partial<TopoqueueConfig>; controllers?: Reconciler<TopoqueueConfig>[] } = {},
): Promise<PodHarness> {
  const h = new PodHarness(defaultConfig(opts.config), opts.controllers ?? [podGroupController()]);
  await h.manager.start();
  return h;
}

export const hasGate = (p: Pod | undefined, gate: string): boolean => p?.spec.schedulingGates?.some((g) => g.name === gate) ?? false;
export const conditionOf = (w: Workload | undefined, type: string): Condition | undefined =>
  w?.status?.conditions?.find((c) => c.type === type);
