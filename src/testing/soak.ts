// Fixtures for the restart test and the random soak: a seeded PRNG, a controller-manager
// "process" that can crash (its webhooks die with it and its writes fail from the crash on),
// a step-by-step driver of a manager in virtual time that stops when asked, and the soak's
// random scenario generator with its "can this workload run at all" judge.
// Test-only.

import { CoreApiVersion, JobFrameworkApiVersion, KueueApiVersion, TopoqueueApiVersion } from '../api/api-versions.ts';
import { GangAnnotation } from '../api/gang.ts';
import { HOSTNAME_LABEL, KueueAnnotation, KueueLabel, TopoqueueAnnotation } from '../api/keys.ts';
import type { KObject, PodTemplateSpec } from '../api/objects.ts';
import type { SimulationAction } from '../api/simulation-event.ts';
import type { TopoqueueConfig } from '../controllers/config.ts';
import { defaultConfig } from '../controllers/config.ts';
import { allControllers } from '../controllers/index.ts';
import { standIns } from '../cluster/index.ts';
import type { VirtualClock } from '../runtime/clock.ts';
import { Manager } from '../runtime/manager.ts';
import type { MemoryStore } from '../runtime/memory-store.ts';
import type { AdmissionHook, ObjectStore } from '../runtime/store.ts';
import { BLOCK, cohort, cq, RACK } from './admission.ts';
import { Rng } from './rng.ts';

export { mulberry32, Rng } from './rng.ts';

const WRITES = new Set(['create', 'update', 'updateStatus', 'delete', 'createSync', 'updateSync', 'updateStatusSync', 'deleteSync']);

export class ProcessCrashed extends Error {
  constructor() {
    super('the controller process crashed: this write never reached the API server');
  }
}

/**
 * One controller-manager process over a shared store: every controller and stand-in, fresh
 * instances. `crash()` is what a kill -9 does: from that instant its writes fail (a write in
 * the middle of a reconcile is the last one that got through), its webhooks stop answering
 * (they served from its memory), and its informers, queues and timers are gone.
 */
export interface Process {
  readonly manager: Manager<TopoqueueConfig>;
  readonly crashed: boolean;
  crash(): void;
}

export interface ProcessOptions {
  config?: Partial<TopoqueueConfig>;
  /** Reconciler names left out (to check that a test notices one missing). */
  omit?: readonly string[];
}

export async function startProcess(store: MemoryStore, clock: VirtualClock, opts: ProcessOptions = {}): Promise<Process> {
  let alive = true;
  const view = new Proxy(store, {
    get(target, prop) {
      if (prop === 'addAdmissionHook') {
        return (h: AdmissionHook) => target.addAdmissionHook({ ...h, admit: (req) => (alive ? h.admit(req) : undefined) });
      }
      const v = Reflect.get(target, prop, target) as unknown;
      if (typeof v !== 'function') return v;
      if (typeof prop === 'string' && WRITES.has(prop)) {
        return (...args: unknown[]) => {
          if (!alive) throw new ProcessCrashed();
          return (v as (...a: unknown[]) => unknown).apply(target, args);
        };
      }
      return (v as (...a: unknown[]) => unknown).bind(target);
    },
  }) as ObjectStore as MemoryStore;
  const manager = new Manager<TopoqueueConfig>({ store: view, clock, config: defaultConfig(opts.config), events: { writeToStore: false } });
  for (const c of [...allControllers(), ...standIns()]) if (!opts.omit?.includes(c.name)) manager.add(c);
  await manager.start();
  return {
    manager,
    get crashed() {
      return !alive;
    },
    crash() {
      if (!alive) return;
      alive = false;
      manager.stop();
    },
  };
}

export const DriveStop = { Idle: 'idle', Until: 'until', Crashed: 'crashed', Limit: 'limit' } as const;
export type DriveStop = (typeof DriveStop)[keyof typeof DriveStop];

/**
 * Runs a process in virtual time as Manager.run does (every ready key, then the next timer),
 * one step at a time, until nothing is left (idle), the clock would pass `untilMs`, the
 * process crashed (e.g. from a watch handler in the middle of a step), or `maxSteps`.
 */
export async function drive(p: Process, clock: VirtualClock, opts: { untilMs?: number; maxSteps?: number } = {}): Promise<DriveStop> {
  const until = opts.untilMs ?? Infinity;
  const max = opts.maxSteps ?? 2_000_000;
  let steps = 0;
  clock.fireDue();
  for (;;) {
    while (!p.crashed && (await p.manager.step())) {
      if (p.crashed) return DriveStop.Crashed;
      if (++steps >= max) return DriveStop.Limit;
    }
    if (p.crashed) return DriveStop.Crashed;
    if (!clock.advance(until)) return clock.nextAt() === undefined ? DriveStop.Idle : DriveStop.Until;
  }
}

// ---------------------------------------------------------------------------------------
// The soak's random scenarios
// ---------------------------------------------------------------------------------------

export const POOL = 'cloud.com/pool';
const MEMORY_GI = 64;
/** Pods fail only when node events kill them: a Job must not give up because of that. */
const BACKOFF_LIMIT = 1000;
const MIN = 60;

export type Tas = 'required-rack' | 'required-block' | 'preferred-rack' | 'preferred-block' | 'none';

export interface NodeSpec {
  name: string;
  block: string;
  rack: string;
  pool: 'tas' | 'plain';
  cpu: number;
}

/** One submitted workload and what is needed to tell whether it can run at all. */
export interface Unit {
  kind: 'Job' | 'JobSet' | 'Pod group' | 'Gang';
  name: string;
  namespace: string;
  clusterQueue: string;
  /** Pods that must run at once (a gang: its minimum; a Job: its parallelism). */
  pods: number;
  cpu: number;
  memoryGi: number;
  tas: Tas;
}

export interface QueueSpec {
  name: string;
  /** Nominal quota per flavor: cpu and memory (Gi). */
  nominal: Map<string, { cpu: number; memoryGi: number }>;
  strictFIFO: boolean;
}

export interface Scenario {
  seed: number;
  objects: KObject[];
  nodes: NodeSpec[];
  units: Unit[];
  queues: Map<string, QueueSpec>;
  /** Nodes that end the run unusable (deleted, NotReady, cordoned or tainted). */
  lost: Set<string>;
  summary: string;
}

const duration = (s: number) => `${s}s`;

function podTemplate(cpu: number, memoryGi: number, runS: number, tas: Tas): PodTemplateSpec {
  const annotations: Record<string, string> = { [TopoqueueAnnotation.RunDuration]: duration(runS) };
  if (tas === 'required-rack') annotations[KueueAnnotation.PodSetRequiredTopology] = RACK;
  if (tas === 'required-block') annotations[KueueAnnotation.PodSetRequiredTopology] = BLOCK;
  if (tas === 'preferred-rack') annotations[KueueAnnotation.PodSetPreferredTopology] = RACK;
  if (tas === 'preferred-block') annotations[KueueAnnotation.PodSetPreferredTopology] = BLOCK;
  return {
    metadata: { annotations },
    spec: {
      restartPolicy: 'Never',
      containers: [{ name: 'main', image: 'busybox', resources: { requests: { cpu: String(cpu), memory: `${memoryGi}Gi` } } }],
    },
  };
}

export function generateScenario(seed: number): Scenario {
  const rng = new Rng(seed);
  const objects: KObject[] = [];

  // Cluster: blocks x racks x nodes, 4-30 nodes; racks of the plain pool when there is one.
  let blocks: number, racks: number, perRack: number;
  do {
    blocks = rng.int(1, 3);
    racks = rng.int(1, 3);
    perRack = rng.int(1, 6);
  } while (blocks * racks * perRack < 4 || blocks * racks * perRack > 30);
  const plainPool = blocks * racks >= 2 && rng.chance(0.35);
  const nodes: NodeSpec[] = [];
  let rackIndex = 0;
  for (let b = 1; b <= blocks; b++) {
    for (let r = 1; r <= racks; r++) {
      const pool = plainPool && rackIndex++ === 0 ? 'plain' : 'tas';
      const cpu = rng.pick([8, 16]);
      for (let n = 1; n <= perRack; n++) nodes.push({ name: `b${b}-r${r}-n${n}`, block: `b${b}`, rack: `b${b}-r${r}`, pool, cpu });
    }
  }
  for (const n of nodes) {
    objects.push({
      apiVersion: CoreApiVersion.V1,
      kind: 'Node',
      metadata: { name: n.name, labels: { [HOSTNAME_LABEL]: n.name, [BLOCK]: n.block, [RACK]: n.rack, [POOL]: n.pool } },
      spec: {},
      status: {
        allocatable: { cpu: String(n.cpu), memory: `${MEMORY_GI}Gi`, pods: '110' },
        conditions: [{ type: 'Ready', status: 'True' }],
      },
    } as KObject);
  }
  objects.push({
    apiVersion: KueueApiVersion.V1beta2,
    kind: 'Topology',
    metadata: { name: 'dc' },
    spec: { levels: [{ nodeLabel: BLOCK }, { nodeLabel: RACK }, { nodeLabel: HOSTNAME_LABEL }] },
  } as KObject);
  objects.push({
    apiVersion: KueueApiVersion.V1beta2,
    kind: 'ResourceFlavor',
    metadata: { name: 'tas' },
    spec: { nodeLabels: { [POOL]: 'tas' }, topologyName: 'dc' },
  } as KObject);
  if (plainPool)
    objects.push({
      apiVersion: KueueApiVersion.V1beta2,
      kind: 'ResourceFlavor',
      metadata: { name: 'plain' },
      spec: { nodeLabels: { [POOL]: 'plain' } },
    } as KObject);
  const poolCpu = (pool: string) => nodes.filter((n) => n.pool === pool).reduce((s, n) => s + n.cpu, 0);
  const poolMem = (pool: string) => nodes.filter((n) => n.pool === pool).length * MEMORY_GI;

  // Queues: 1-3 ClusterQueues, maybe in one cohort, each with a LocalQueue `lq` in its namespace.
  const queueCount = rng.int(1, 3);
  const inCohort = queueCount > 1 && rng.chance(0.7);
  if (inCohort) objects.push(cohort('pool') as KObject);
  const queues = new Map<string, QueueSpec>();
  for (let i = 0; i < queueCount; i++) {
    const name = `cq-${i}`;
    const b = cq(name);
    const nominal = new Map<string, { cpu: number; memoryGi: number }>();
    for (const f of plainPool ? ['tas', 'plain'] : ['tas']) {
      if (f === 'plain' && rng.chance(0.3)) continue;
      // A share of the pool; in a cohort the TAS shares may add up to more than the pool (TAS
      // admits only what fits the nodes), the plain ones to at most the pool.
      const share = inCohort ? Math.min(1, (f === 'tas' ? rng.pick([1, 1.5]) : 1) / queueCount) : rng.pick([0.5, 0.75, 1]);
      const cpu = Math.max(1, Math.floor(poolCpu(f) * share * rng.pick([0.6, 0.8, 1])));
      const memoryGi = Math.max(1, Math.floor(poolMem(f) * share));
      const borrowing = inCohort && rng.chance(0.5) ? { cpu: String(rng.int(0, cpu)), mem: `${rng.int(0, memoryGi)}Gi` } : undefined;
      b.quota(
        f,
        borrowing
          ? { cpu: [String(cpu), borrowing.cpu], memory: [`${memoryGi}Gi`, borrowing.mem] }
          : { cpu: String(cpu), memory: `${memoryGi}Gi` },
      );
      nominal.set(f, { cpu, memoryGi });
    }
    if (inCohort) b.cohort('pool');
    b.preemption({
      withinClusterQueue: rng.pick(['Never', 'LowerPriority', 'LowerOrNewerEqualPriority'] as const),
      reclaimWithinCohort: rng.pick(['Never', 'LowerPriority', 'Any'] as const),
    });
    const strictFIFO = rng.chance(0.2);
    if (strictFIFO) b.strict();
    objects.push(b.build() as KObject);
    objects.push({
      apiVersion: KueueApiVersion.V1beta2,
      kind: 'LocalQueue',
      metadata: { name: 'lq', namespace: `team-${i}` },
      spec: { clusterQueue: name },
    } as KObject);
    queues.set(name, { name, nominal, strictFIFO });
  }
  for (const [name, value] of [
    ['low', 100],
    ['high', 1000],
  ] as const) {
    objects.push({ apiVersion: KueueApiVersion.V1beta2, kind: 'WorkloadPriorityClass', metadata: { name }, value } as KObject);
  }

  // Workloads.
  const units: Unit[] = [];
  const count = rng.int(4, 14);
  for (let i = 0; i < count; i++) {
    const q = rng.int(0, queueCount - 1);
    const namespace = `team-${q}`;
    const labels: Record<string, string> = { [KueueLabel.QueueName]: 'lq' };
    const priority = rng.pick([undefined, 'low', 'high']);
    if (priority) labels[KueueLabel.PriorityClass] = priority;
    const submitAt = { [TopoqueueAnnotation.SubmitAt]: duration(rng.int(0, 20 * MIN)) };
    const runS = rng.int(1 * MIN, 20 * MIN);
    const cpu = rng.pick([1, 1, 2, 2, 4, 8]);
    const memoryGi = rng.pick([1, 4, 8]);
    const what = rng.float();
    if (what < 0.5) {
      const tas = rng.pick<Tas>(['required-rack', 'required-block', 'preferred-rack', 'preferred-block', 'none']);
      const parallelism = rng.int(1, 6);
      const completions = rng.chance(0.3) ? parallelism * 2 : parallelism;
      const name = `job-${i}`;
      objects.push({
        apiVersion: CoreApiVersion.Batch,
        kind: 'Job',
        metadata: { name, namespace, labels, annotations: submitAt },
        spec: {
          parallelism,
          completions,
          backoffLimit: BACKOFF_LIMIT,
          ...(rng.chance(0.5) ? { completionMode: 'Indexed' } : {}),
          template: podTemplate(cpu, memoryGi, runS, tas),
        },
      } as KObject);
      units.push({ kind: 'Job', name, namespace, clusterQueue: `cq-${q}`, pods: parallelism, cpu, memoryGi, tas });
    } else if (what < 0.62) {
      const tas = rng.pick<Tas>(['required-block', 'preferred-rack', 'none']);
      const replicas = rng.int(1, 2);
      const parallelism = rng.int(1, 3);
      const name = `js-${i}`;
      const template = podTemplate(cpu, memoryGi, runS, tas);
      objects.push({
        apiVersion: JobFrameworkApiVersion.JobSet,
        kind: 'JobSet',
        metadata: { name, namespace, labels, annotations: submitAt },
        spec: {
          replicatedJobs: [
            {
              name: 'w',
              replicas,
              template: {
                spec: { parallelism, completions: parallelism, backoffLimit: BACKOFF_LIMIT, completionMode: 'Indexed', template },
              },
            },
          ],
        },
      } as KObject);
      units.push({ kind: 'JobSet', name, namespace, clusterQueue: `cq-${q}`, pods: replicas * parallelism, cpu, memoryGi, tas });
    } else if (what < 0.82) {
      const tas = rng.pick<Tas>(['preferred-rack', 'required-block', 'none']);
      const total = rng.int(2, 4);
      const name = `group-${i}`;
      const t = podTemplate(cpu, memoryGi, runS, tas);
      for (let p = 0; p < total; p++) {
        objects.push({
          apiVersion: CoreApiVersion.V1,
          kind: 'Pod',
          metadata: {
            name: `${name}-${p}`,
            namespace,
            labels: { ...labels, [KueueLabel.PodGroupName]: name },
            annotations: { ...submitAt, ...t.metadata!.annotations, 'kueue.x-k8s.io/pod-group-total-count': String(total) },
          },
          spec: structuredClone(t.spec),
        } as KObject);
      }
      units.push({ kind: 'Pod group', name, namespace, clusterQueue: `cq-${q}`, pods: total, cpu, memoryGi, tas });
    } else {
      const tas = rng.pick<Tas>(['required-block', 'preferred-block', 'none']);
      const total = rng.int(2, 5);
      const min = rng.int(1, total);
      const name = `gang-${i}`;
      const t = podTemplate(cpu, memoryGi, runS, tas);
      for (let p = 0; p < total; p++) {
        objects.push({
          apiVersion: CoreApiVersion.V1,
          kind: 'Pod',
          metadata: {
            name: `${name}-${p}`,
            namespace,
            labels,
            annotations: {
              ...submitAt,
              ...t.metadata!.annotations,
              [GangAnnotation.Name]: name,
              [GangAnnotation.MinAvailable]: String(min),
              [GangAnnotation.TotalNumber]: String(total),
            },
          },
          spec: structuredClone(t.spec),
        } as KObject);
      }
      // Conservatively, every pod of the gang must fit at once.
      units.push({ kind: 'Gang', name, namespace, clusterQueue: `cq-${q}`, pods: total, cpu, memoryGi, tas });
    }
  }

  // Node events: each picks a node and an action, some undone later.
  const lost = new Set<string>();
  const events = rng.int(0, 3);
  const event = (name: string, atS: number, node: string, action: SimulationAction, taint?: { key: string; effect: string }) =>
    objects.push({
      apiVersion: TopoqueueApiVersion,
      kind: 'SimulationEvent',
      metadata: { name },
      spec: { at: duration(atS), node, action, ...(taint ? { taint } : {}) },
    } as KObject);
  const described: string[] = [];
  for (let e = 0; e < events; e++) {
    const node = rng.pick(nodes).name;
    const at = rng.int(0, 40 * MIN);
    const back = rng.chance(0.6) ? at + rng.int(30, 30 * MIN) : undefined;
    const action = rng.pick(['NotReady', 'Taint', 'Cordon', 'Delete'] as const);
    const taint = { key: 'example.com/maintenance', effect: rng.pick(['NoSchedule', 'NoExecute']) };
    event(`ev-${e}`, at, node, action, action === 'Taint' ? taint : undefined);
    described.push(`${action} ${node} at ${at}s${back !== undefined && action !== 'Delete' ? ` undone at ${back}s` : ''}`);
    if (action === 'Delete') {
      lost.add(node);
      continue;
    }
    if (back === undefined) {
      lost.add(node);
      continue;
    }
    const undo = action === 'NotReady' ? 'Ready' : action === 'Taint' ? 'Untaint' : 'Uncordon';
    event(`ev-${e}-undo`, back, node, undo, undo === 'Untaint' ? { key: taint.key, effect: taint.effect } : undefined);
  }
  // Two events on one node may undo each other's effect in any order: count such a node as lost.
  const summary = `${nodes.length} nodes (${blocks} blocks x ${racks} racks x ${perRack}${plainPool ? ', one plain rack' : ''}), ${queueCount} ClusterQueues${inCohort ? ' in a cohort' : ''}, ${units.length} workloads, events: ${described.join('; ') || 'none'}`;
  return { seed, objects, nodes, units, queues, lost: withSharedNodesLost(objects, lost), summary };
}

/** A node with more than one event counts as lost (their undos interleave). */
function withSharedNodesLost(objects: KObject[], lost: Set<string>): Set<string> {
  const seen = new Map<string, Set<string>>();
  for (const o of objects) {
    if (o.kind !== 'SimulationEvent') continue;
    const spec = (o as unknown as { spec: { node: string } }).spec;
    const base = o.metadata.name.replace(/-undo$/, '');
    const s = seen.get(spec.node) ?? new Set<string>();
    s.add(base);
    seen.set(spec.node, s);
  }
  for (const [node, s] of seen) if (s.size > 1) lost.add(node);
  return lost;
}

/** Why a unit cannot run even alone on what is left of the cluster, or undefined when it can. */
export function cannotRun(s: Scenario, u: Unit): string | undefined {
  const q = s.queues.get(u.clusterQueue)!;
  const reasons: string[] = [];
  // A PodSet without a topology request uses a TAS flavor only when every flavor of its
  // ClusterQueue is one (implicit TAS); otherwise only the flavors without topology.
  const onlyTas = [...q.nominal.keys()].every((f) => f === 'tas');
  for (const [flavor, nominal] of q.nominal) {
    if (flavor === 'plain' && u.tas !== 'none') {
      reasons.push('plain: no topology');
      continue;
    }
    if (flavor === 'tas' && u.tas === 'none' && !onlyTas) {
      reasons.push('tas: only for a topology request, the ClusterQueue has a flavor without topology');
      continue;
    }
    if (u.cpu * u.pods > nominal.cpu || u.memoryGi * u.pods > nominal.memoryGi) {
      reasons.push(`${flavor}: nominal quota ${nominal.cpu} cpu / ${nominal.memoryGi}Gi < ${u.pods} x (${u.cpu} cpu, ${u.memoryGi}Gi)`);
      continue;
    }
    const healthy = s.nodes.filter((n) => n.pool === flavor && !s.lost.has(n.name));
    const fit = (ns: NodeSpec[]) => ns.reduce((sum, n) => sum + Math.min(Math.floor(n.cpu / u.cpu), Math.floor(MEMORY_GI / u.memoryGi)), 0);
    const domains = (key: (n: NodeSpec) => string) => {
      const m = new Map<string, NodeSpec[]>();
      for (const n of healthy) m.set(key(n), [...(m.get(key(n)) ?? []), n]);
      return [...m.values()];
    };
    const room =
      u.tas === 'required-rack'
        ? Math.max(0, ...domains((n) => n.rack).map(fit))
        : u.tas === 'required-block'
          ? Math.max(0, ...domains((n) => n.block).map(fit))
          : fit(healthy);
    if (room < u.pods) {
      reasons.push(`${flavor}: room for ${room} of ${u.pods} pods (${u.tas})`);
      continue;
    }
    return undefined;
  }
  return reasons.join('; ');
}
