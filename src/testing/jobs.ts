// Fixtures for the job reconciler's suites: an environment with the store, a virtual clock
// and a manager running only the job reconciler, and helpers that play the parts of the
// scheduler (admit, evict) and of the cluster's job controllers (pods, conditions).
// Test-only.

import { CoreApiVersion, JobFrameworkApiVersion, KueueApiVersion, VolcanoApiVersion } from '../api/api-versions.ts';
import { KueueLabel, NAMESPACE_NAME_LABEL } from '../api/keys.ts';
import type { Condition, KObject, Pod, PodTemplateSpec, ResourceFlavor, StringMap, Toleration, Workload } from '../api/objects.ts';
import { formatTime } from '../api/time.ts';
import { compareStrings } from '../api/values.ts';
import { WorkloadCondition, resetCondition, setCondition } from '../admission/conditions.ts';
import { type TopoqueueConfig, defaultConfig } from '../controllers/config.ts';
import { jobReconciler } from '../controllers/job-reconciler.ts';
import { VirtualClock } from '../runtime/clock.ts';
import type { RecordedEvent } from '../runtime/events.ts';
import { Manager, type Reconciler } from '../runtime/manager.ts';
import { allControllers } from '../controllers/index.ts';
import { binder } from '../cluster/binder.ts';
import { garbageCollector } from '../cluster/garbage-collector.ts';
import { jobControllers } from '../cluster/job-controllers.ts';
import { kubelet } from '../cluster/kubelet.ts';
import { MemoryStore } from '../runtime/memory-store.ts';
import { mutable, type ObjectOfKind } from '../runtime/store.ts';

export interface JobEnv {
  store: MemoryStore;
  clock: VirtualClock;
  manager: Manager<TopoqueueConfig>;
  /** Runs the controllers until idle (virtual time). */
  settle(): Promise<void>;
  create<T extends KObject>(obj: T): Promise<T>;
  get<K extends string>(kind: K, name: string, namespace?: string): ObjectOfKind<K> | undefined;
  get<T extends KObject>(kind: string, name: string, namespace?: string): T | undefined;
  /** Workloads in a namespace, by name. */
  workloads(namespace?: string): Workload[];
  workload(namespace?: string): Workload;
  pods(namespace?: string): Pod[];
  events(reason?: string): RecordedEvent[];
}

export async function jobEnv(config: Partial<TopoqueueConfig> = {}, objects: KObject[] = []): Promise<JobEnv> {
  const clock = new VirtualClock();
  const store = new MemoryStore({ clock });
  const manager = new Manager<TopoqueueConfig>({ store, clock, config: defaultConfig(config), events: { writeToStore: false } });
  manager.add(jobReconciler());
  for (const o of objects) store.createSync(o);
  await manager.start();
  const env: JobEnv = {
    store,
    clock,
    manager,
    settle: async () => {
      await manager.run();
    },
    create: async (obj) => {
      const created = await store.create(obj);
      await manager.run();
      return created;
    },
    get: <T extends KObject>(kind: string, name: string, namespace = 'ns') =>
      store.getSync<T>(kind, store.namespaced(kind) ? namespace : undefined, name),
    workloads: (namespace = 'ns') =>
      store.listSync('Workload', { namespace }).sort((a, b) => compareStrings(a.metadata.name, b.metadata.name)),
    workload: (namespace = 'ns') => {
      const all = env.workloads(namespace);
      if (all.length !== 1)
        throw new Error(`expected one Workload in ${namespace}, found ${all.map((w) => w.metadata.name).join(', ') || 'none'}`);
      return all[0]!;
    },
    pods: (namespace = 'ns') => store.listSync('Pod', { namespace }).sort((a, b) => compareStrings(a.metadata.name, b.metadata.name)),
    events: (reason) => manager.events.recent.filter((e) => reason === undefined || e.reason === reason),
  };
  return env;
}

// ---------------------------------------------------------------------------------------
// Objects
// ---------------------------------------------------------------------------------------

export function namespace(name: string, labels: StringMap = {}): KObject {
  return { apiVersion: CoreApiVersion.V1, kind: 'Namespace', metadata: { name, labels: { [NAMESPACE_NAME_LABEL]: name, ...labels } } };
}

export function resourceFlavor(name: string, nodeLabels: StringMap = {}, tolerations: Toleration[] = []): ResourceFlavor {
  return {
    apiVersion: KueueApiVersion.V1beta2,
    kind: 'ResourceFlavor',
    metadata: { name },
    spec: { nodeLabels, ...(tolerations.length ? { tolerations } : {}) },
  };
}

export function localQueue(name: string, namespace = 'ns'): KObject {
  return {
    apiVersion: KueueApiVersion.V1beta2,
    kind: 'LocalQueue',
    metadata: { name, namespace },
    spec: { clusterQueue: 'cq' },
  } as KObject;
}

export interface TemplateOptions {
  cpu?: string;
  labels?: StringMap;
  annotations?: StringMap;
  nodeSelector?: StringMap;
}

export function podTemplate(o: TemplateOptions = {}): PodTemplateSpec {
  const metadata: NonNullable<PodTemplateSpec['metadata']> = {};
  if (o.labels) metadata.labels = { ...o.labels };
  if (o.annotations) metadata.annotations = { ...o.annotations };
  return {
    metadata,
    spec: {
      containers: [{ name: 'c', resources: { requests: { cpu: o.cpu ?? '1' } } }],
      restartPolicy: 'Never',
      ...(o.nodeSelector ? { nodeSelector: { ...o.nodeSelector } } : {}),
    },
  };
}

export interface MetaOptions {
  namespace?: string;
  queue?: string | null;
  labels?: StringMap;
  annotations?: StringMap;
}

function meta(name: string, o: MetaOptions): KObject['metadata'] {
  const labels: StringMap = { ...o.labels };
  if (o.queue !== null) labels[KueueLabel.QueueName] = o.queue ?? 'lq';
  return { name, namespace: o.namespace ?? 'ns', labels, ...(o.annotations ? { annotations: { ...o.annotations } } : {}) };
}

export function batchJob(
  name: string,
  o: MetaOptions & { parallelism?: number; completions?: number; indexed?: boolean; suspend?: boolean; template?: PodTemplateSpec } = {},
): KObject {
  return {
    apiVersion: CoreApiVersion.Batch,
    kind: 'Job',
    metadata: meta(name, o),
    spec: {
      parallelism: o.parallelism ?? 1,
      ...(o.completions !== undefined ? { completions: o.completions } : {}),
      ...(o.indexed ? { completionMode: 'Indexed' } : {}),
      ...(o.suspend !== undefined ? { suspend: o.suspend } : {}),
      template: o.template ?? podTemplate(),
    },
  } as KObject;
}

export function jobSet(
  name: string,
  replicatedJobs: { name: string; replicas?: number; parallelism?: number; template?: PodTemplateSpec }[],
  o: MetaOptions = {},
): KObject {
  return {
    apiVersion: JobFrameworkApiVersion.JobSet,
    kind: 'JobSet',
    metadata: meta(name, o),
    spec: {
      replicatedJobs: replicatedJobs.map((rj) => ({
        name: rj.name,
        replicas: rj.replicas ?? 1,
        template: {
          spec: {
            parallelism: rj.parallelism ?? 1,
            completions: rj.parallelism ?? 1,
            completionMode: 'Indexed',
            template: rj.template ?? podTemplate(),
          },
        },
      })),
    },
  } as KObject;
}

export function mpiJob(
  name: string,
  o: MetaOptions & { workers?: number; runLauncherAsWorker?: boolean; launcher?: PodTemplateSpec; worker?: PodTemplateSpec } = {},
): KObject {
  return {
    apiVersion: JobFrameworkApiVersion.MPIJob,
    kind: 'MPIJob',
    metadata: meta(name, o),
    spec: {
      ...(o.runLauncherAsWorker !== undefined ? { runLauncherAsWorker: o.runLauncherAsWorker } : {}),
      mpiReplicaSpecs: {
        Launcher: { replicas: 1, template: o.launcher ?? podTemplate() },
        Worker: { replicas: o.workers ?? 2, template: o.worker ?? podTemplate() },
      },
    },
  } as KObject;
}

export function leaderWorkerSet(
  name: string,
  o: MetaOptions & { replicas?: number; size?: number; leader?: PodTemplateSpec | null; worker?: PodTemplateSpec } = {},
): KObject {
  const lwt: Record<string, unknown> = { size: o.size ?? 3, workerTemplate: o.worker ?? podTemplate() };
  if (o.leader !== null) lwt.leaderTemplate = o.leader ?? podTemplate();
  return {
    apiVersion: JobFrameworkApiVersion.LeaderWorkerSet,
    kind: 'LeaderWorkerSet',
    metadata: meta(name, o),
    spec: { replicas: o.replicas ?? 1, leaderWorkerTemplate: lwt },
  } as KObject;
}

export function volcanoJob(
  name: string,
  tasks: { name: string; replicas?: number; template?: PodTemplateSpec }[],
  o: MetaOptions = {},
): KObject {
  return {
    apiVersion: VolcanoApiVersion.Job,
    kind: 'Job',
    metadata: meta(name, o),
    spec: {
      schedulerName: 'volcano',
      tasks: tasks.map((t) => ({ name: t.name, replicas: t.replicas ?? 1, template: t.template ?? podTemplate() })),
    },
  } as KObject;
}

export function hyperJob(
  name: string,
  replicatedJobs: { name: string; replicas?: number; tasks: { name: string; replicas?: number; template?: PodTemplateSpec }[] }[],
  o: MetaOptions = {},
): KObject {
  return {
    apiVersion: VolcanoApiVersion.HyperJob,
    kind: 'HyperJob',
    metadata: meta(name, o),
    spec: {
      replicatedJobs: replicatedJobs.map((rj) => ({
        name: rj.name,
        replicas: rj.replicas ?? 1,
        templateSpec: { tasks: rj.tasks.map((t) => ({ name: t.name, replicas: t.replicas ?? 1, template: t.template ?? podTemplate() })) },
      })),
    },
  } as KObject;
}

// ---------------------------------------------------------------------------------------
// Playing the scheduler
// ---------------------------------------------------------------------------------------

export interface AdmitOptions {
  clusterQueue?: string;
  /** Flavor for every resource of every PodSet (default `default-flavor`). */
  flavor?: string;
  /** PodSets given a topology assignment (one domain on `node-1`). */
  topology?: string[];
  /** Admitted counts (partial admission). */
  counts?: Record<string, number>;
  /** QuotaReserved only (a NonStrict gang accumulating). */
  reserveOnly?: boolean;
}

export function admit(env: JobEnv, w: Workload, o: AdmitOptions = {}): Workload {
  const now = env.clock.now() / 1000;
  const x = mutable(env.store.getSync('Workload', w.metadata.namespace, w.metadata.name)!);
  const cq = o.clusterQueue ?? 'cq';
  x.status = {
    ...x.status,
    admission: {
      clusterQueue: cq,
      podSetAssignments: x.spec.podSets.map((ps) => {
        const count = o.counts?.[ps.name] ?? ps.count;
        return {
          name: ps.name,
          flavors: { cpu: o.flavor ?? 'default-flavor' },
          resourceUsage: { cpu: String(count) },
          count,
          ...(o.topology?.includes(ps.name)
            ? {
                topologyAssignment: {
                  levels: ['kubernetes.io/hostname'],
                  slices: [{ domainCount: 1, valuesPerLevel: [{ universal: 'node-1' }], podCounts: { universal: count } }],
                },
              }
            : {}),
        };
      }),
    },
  };
  setCondition(
    x,
    { type: WorkloadCondition.QuotaReserved, status: 'True', reason: 'QuotaReserved', message: `Quota reserved in ClusterQueue ${cq}` },
    now,
  );
  if (!o.reserveOnly)
    setCondition(x, { type: WorkloadCondition.Admitted, status: 'True', reason: 'Admitted', message: 'The workload is admitted' }, now);
  for (const t of [WorkloadCondition.Evicted, WorkloadCondition.Preempted]) resetCondition(x, t, now);
  return env.store.updateStatusSync(x);
}

export function evict(
  env: JobEnv,
  w: Workload,
  reason = 'Preempted',
  message = 'Preempted to accommodate a workload (UID: x) due to prioritization in the ClusterQueue',
): Workload {
  const x = mutable(env.store.getSync('Workload', w.metadata.namespace, w.metadata.name)!);
  setCondition(x, { type: WorkloadCondition.Evicted, status: 'True', reason, message }, env.clock.now() / 1000);
  return env.store.updateStatusSync(x);
}

// ---------------------------------------------------------------------------------------
// Playing the cluster's job controllers and kubelet
// ---------------------------------------------------------------------------------------

export interface PodOptions {
  labels?: StringMap;
  annotations?: StringMap;
  template?: PodTemplateSpec;
}

/** Creates a pod controlled by `owner` from `template` (metadata and spec copied, as a controller does). */
export function createPod(env: JobEnv, owner: KObject, name: string, o: PodOptions = {}): Pod {
  const t = o.template ?? podTemplate();
  const pod: Pod = {
    apiVersion: CoreApiVersion.V1,
    kind: 'Pod',
    metadata: {
      name,
      namespace: owner.metadata.namespace,
      labels: { ...t.metadata?.labels, ...o.labels },
      annotations: { ...t.metadata?.annotations, ...o.annotations },
      ownerReferences: [
        { apiVersion: owner.apiVersion, kind: owner.kind, name: owner.metadata.name, uid: owner.metadata.uid!, controller: true },
      ],
    },
    spec: structuredClone(t.spec),
    status: { phase: 'Pending' },
  };
  return env.store.createSync(pod);
}

/** Creates a child object (a JobSet's Job, a HyperJob's Volcano Job) controlled by `owner`. */
export function createChild<T extends KObject>(env: JobEnv, owner: KObject, child: T): T {
  const c = structuredClone(child);
  c.metadata.namespace = owner.metadata.namespace;
  c.metadata.ownerReferences = [
    { apiVersion: owner.apiVersion, kind: owner.kind, name: owner.metadata.name, uid: owner.metadata.uid!, controller: true },
  ];
  return env.store.createSync(c);
}

export function setPodPhase(
  env: JobEnv,
  pod: Pod,
  phase: 'Pending' | 'Running' | 'Succeeded' | 'Failed',
  ready = phase === 'Running',
): Pod {
  const p = mutable(env.store.getSync('Pod', pod.metadata.namespace, pod.metadata.name)!);
  const conditions: Condition[] = [{ type: 'Ready', status: ready ? 'True' : 'False' }];
  p.status = { ...p.status, phase, conditions };
  return env.store.updateStatusSync(p);
}

/** Sets a True condition on a job's status (Complete, Failed, Completed, Succeeded...). */
export function setJobCondition(env: JobEnv, job: KObject, type: string, message?: string): KObject {
  const j = mutable(env.store.getSync<KObject>(job.kind, job.metadata.namespace, job.metadata.name)!) as KObject & {
    status?: Record<string, unknown>;
  };
  const conditions = [
    ...((j.status?.conditions as Condition[] | undefined) ?? []),
    { type, status: 'True' as const, ...(message ? { message } : {}), lastTransitionTime: formatTime(env.clock.now() / 1000) },
  ];
  j.status = { ...j.status, conditions };
  return env.store.updateStatusSync(j);
}

/** Writes a status on any object (Volcano Job phases). */
export function setStatus(env: JobEnv, obj: KObject, status: Record<string, unknown>): KObject {
  const j = mutable(env.store.getSync<KObject>(obj.kind, obj.metadata.namespace, obj.metadata.name)!) as KObject & { status?: unknown };
  j.status = status;
  return env.store.updateStatusSync(j);
}

/** Updates an object's spec (what a user's `kubectl edit` does). */
export function editJob(env: JobEnv, job: KObject, change: (j: KObject & { spec: Record<string, unknown> }) => void): KObject {
  const j = mutable(env.store.getSync<KObject>(job.kind, job.metadata.namespace, job.metadata.name)!) as KObject & {
    spec: Record<string, unknown>;
  };
  change(j);
  return env.store.updateSync(j);
}

export function latest<T extends KObject>(env: JobEnv, obj: T): T {
  return env.store.getSync<T>(obj.kind, obj.metadata.namespace, obj.metadata.name)!;
}

// ---------------------------------------------------------------------------------------
// The whole embedded cluster (end-to-end suites)
// ---------------------------------------------------------------------------------------

/** Every topoqueue controller and every stand-in, as the embedded cluster runs them. */
export function embeddedControllers(): Reconciler<TopoqueueConfig>[] {
  return [...allControllers(), jobControllers(), binder(), kubelet(), garbageCollector()];
}
