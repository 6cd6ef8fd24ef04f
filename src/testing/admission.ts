// Fixtures for the admission cycle: ClusterQueues, Workloads, and a ready snapshot + queues.
//   const env = admissionEnv({ clusterQueues: [cq('a').quota('default', { cpu: '10' }).build()] });
//   env.submit(wl('w1').queue('a').pods(2, { cpu: '3' }).build());
//   const r = env.settle();
// Test-only.

import assert from 'node:assert/strict';
import { KueueApiVersion } from '../api/api-versions.ts';
import { GangAnnotation } from '../api/gang.ts';
import { HOSTNAME_LABEL } from '../api/keys.ts';
import type { Node, PodSet, PodSetTopologyRequest, ResourceFlavor, StringMap, Topology, Workload } from '../api/objects.ts';
import type { ClusterQueue, Cohort, LocalQueue, ResourceGroup } from '../api/queues.ts';
import { formatTime } from '../api/time.ts';
import { QueueManager } from '../admission/queue.ts';
import { settle, type SettleOptions, type SettleResult } from '../admission/settle.ts';
import { AdmissionSnapshot } from '../admission/snapshot.ts';
import { workloadInfo } from '../admission/workload-info.ts';
import { PlacementEngine } from '../placement/engine.ts';
import type { TasFlavor } from '../placement/workload-placement.ts';
import { LabelTopologySource, nodeInfoFromNode } from '../topology/source.ts';
import { TopologySnapshot } from '../topology/snapshot.ts';
import { node } from './builders.ts';

export const T0 = 1_795_219_200; // 2026-11-21T00:00:00Z

export class ClusterQueueBuilder {
  private readonly obj: ClusterQueue;
  constructor(name: string) {
    this.obj = {
      apiVersion: KueueApiVersion.V1beta2,
      kind: 'ClusterQueue',
      metadata: { name },
      spec: {
        resourceGroups: [],
        queueingStrategy: 'BestEffortFIFO',
        namespaceSelector: {},
        flavorFungibility: { whenCanBorrow: 'MayStopSearch', whenCanPreempt: 'TryNextFlavor' },
        preemption: { reclaimWithinCohort: 'Never', withinClusterQueue: 'Never' },
        stopPolicy: 'None',
      },
    };
  }
  /**
   * Adds a flavor with quotas to the resource group covering the same resources (a new
   * group when none does). `{ cpu: '10' }` or `{ cpu: ['10', borrowingLimit, lendingLimit] }`.
   */
  quota(flavor: string, quotas: Record<string, string | [string, string?, string?]>): this {
    const names = Object.keys(quotas).sort();
    const groups = this.obj.spec.resourceGroups!;
    let g: ResourceGroup | undefined = groups.find((x) => x.coveredResources.join() === names.join());
    if (!g) {
      g = { coveredResources: names, flavors: [] };
      groups.push(g);
    }
    g.flavors.push({
      name: flavor,
      resources: names.map((r) => {
        const v = quotas[r]!;
        const [nominal, borrowing, lending] = Array.isArray(v) ? v : [v];
        return {
          name: r,
          nominalQuota: nominal,
          ...(borrowing !== undefined ? { borrowingLimit: borrowing } : {}),
          ...(lending !== undefined ? { lendingLimit: lending } : {}),
        };
      }),
    });
    return this;
  }
  cohort(name: string): this {
    this.obj.spec.cohortName = name;
    return this;
  }
  strict(): this {
    this.obj.spec.queueingStrategy = 'StrictFIFO';
    return this;
  }
  preemption(p: Partial<ClusterQueue['spec']['preemption']>): this {
    Object.assign(this.obj.spec.preemption, p);
    return this;
  }
  fungibility(f: Partial<ClusterQueue['spec']['flavorFungibility']>): this {
    Object.assign(this.obj.spec.flavorFungibility, f);
    return this;
  }
  namespaceSelector(s: ClusterQueue['spec']['namespaceSelector']): this {
    if (s === undefined) delete this.obj.spec.namespaceSelector;
    else this.obj.spec.namespaceSelector = s;
    return this;
  }
  stop(p: 'Hold' | 'HoldAndDrain'): this {
    this.obj.spec.stopPolicy = p;
    return this;
  }
  build(): ClusterQueue {
    return structuredClone(this.obj);
  }
}

export const cq = (name: string) => new ClusterQueueBuilder(name);

export function cohort(name: string, parent?: string): Cohort {
  return { apiVersion: KueueApiVersion.V1beta2, kind: 'Cohort', metadata: { name }, spec: parent ? { parentName: parent } : {} };
}

export function flavor(name: string, opts: { topology?: string; nodeLabels?: StringMap } = {}): ResourceFlavor {
  return {
    apiVersion: KueueApiVersion.V1beta2,
    kind: 'ResourceFlavor',
    metadata: { name },
    spec: { ...(opts.nodeLabels ? { nodeLabels: opts.nodeLabels } : {}), ...(opts.topology ? { topologyName: opts.topology } : {}) },
  };
}

export class WorkloadBuilder {
  private readonly obj: Workload;
  constructor(name: string, namespace = 'default') {
    this.obj = {
      apiVersion: KueueApiVersion.V1beta2,
      kind: 'Workload',
      metadata: { name, namespace, creationTimestamp: formatTime(T0), uid: `uid-${namespace}-${name}` },
      spec: { podSets: [] },
    };
  }
  queue(lq: string): this {
    this.obj.spec.queueName = lq;
    return this;
  }
  /** Adds a PodSet (named `main`, then `ps1`, `ps2`...). */
  pods(
    count: number,
    requests: Record<string, string>,
    opts: { name?: string; minCount?: number; topology?: PodSetTopologyRequest } = {},
  ): this {
    const ps: PodSet = {
      name: opts.name ?? (this.obj.spec.podSets.length === 0 ? 'main' : `ps${this.obj.spec.podSets.length}`),
      count,
      template: { spec: { containers: [{ name: 'c', resources: { requests } }] } },
    };
    if (opts.minCount !== undefined) ps.minCount = opts.minCount;
    if (opts.topology) ps.topologyRequest = opts.topology;
    this.obj.spec.podSets.push(ps);
    return this;
  }
  priority(p: number): this {
    this.obj.spec.priority = p;
    return this;
  }
  /** Created `s` seconds after T0. */
  created(s: number): this {
    this.obj.metadata.creationTimestamp = formatTime(T0 + s);
    return this;
  }
  annotate(a: StringMap): this {
    this.obj.metadata.annotations = { ...(this.obj.metadata.annotations ?? {}), ...a };
    return this;
  }
  gang(
    min: number,
    opts: { mode?: 'Strict' | 'NonStrict'; groups?: string[]; total?: number; waitingTime?: string; name?: string } = {},
  ): this {
    return this.annotate({
      [GangAnnotation.MinAvailable]: String(min),
      ...(opts.mode ? { [GangAnnotation.Mode]: opts.mode } : {}),
      ...(opts.groups ? { [GangAnnotation.Groups]: JSON.stringify(opts.groups) } : {}),
      ...(opts.total !== undefined ? { [GangAnnotation.TotalNumber]: String(opts.total) } : {}),
      ...(opts.waitingTime ? { [GangAnnotation.WaitingTime]: opts.waitingTime } : {}),
      ...(opts.name ? { [GangAnnotation.Name]: opts.name } : {}),
    });
  }
  build(): Workload {
    return structuredClone(this.obj);
  }
}

export const wl = (name: string, namespace?: string) => new WorkloadBuilder(name, namespace);

export function localQueue(name: string, clusterQueue: string, namespace = 'default'): LocalQueue {
  return {
    apiVersion: KueueApiVersion.V1beta2,
    kind: 'LocalQueue',
    metadata: { name, namespace },
    spec: { clusterQueue, stopPolicy: 'None' },
  };
}

/** A TAS flavor over `nodes` with a label Topology. */
export function tasFlavor(f: ResourceFlavor, levels: string[], nodes: readonly Node[]): TasFlavor {
  const topo: Topology = {
    apiVersion: KueueApiVersion.V1beta2,
    kind: 'Topology',
    metadata: { name: f.spec.topologyName ?? f.metadata.name },
    spec: { levels: levels.map((nodeLabel) => ({ nodeLabel })) },
  };
  const snapshot = new TopologySnapshot(LabelTopologySource.fromTopology(topo), { nodeLabels: f.spec.nodeLabels });
  for (const n of nodes) snapshot.upsertNode(nodeInfoFromNode(n));
  return { flavor: f, snapshot, engine: new PlacementEngine(snapshot) };
}

export const BLOCK = 'cloud.com/block';
export const RACK = 'cloud.com/rack';
export const TAS_LEVELS = [BLOCK, RACK, HOSTNAME_LABEL];

export interface AdmissionEnvInput {
  clusterQueues: ClusterQueue[];
  cohorts?: Cohort[];
  /** Default: one LocalQueue per ClusterQueue, same name, namespace `default`. */
  localQueues?: LocalQueue[];
  flavors?: ResourceFlavor[];
  tas?: TasFlavor[];
  namespaces?: Map<string, StringMap>;
}

export interface AdmissionEnv {
  snap: AdmissionSnapshot;
  queues: QueueManager;
  submit(...w: Workload[]): void;
  settle(opts?: Partial<SettleOptions>): SettleResult;
}

export function admissionEnv(input: AdmissionEnvInput): AdmissionEnv {
  const flavorNames = new Set(
    input.clusterQueues.flatMap((c) => (c.spec.resourceGroups ?? []).flatMap((g) => g.flavors.map((f) => f.name))),
  );
  const flavors = input.flavors ?? [...flavorNames].map((n) => flavor(n));
  const localQueues = input.localQueues ?? input.clusterQueues.map((c) => localQueue(c.metadata.name, c.metadata.name));
  const snap = new AdmissionSnapshot({
    clusterQueues: input.clusterQueues.map((object) => ({ object })),
    cohorts: (input.cohorts ?? []).map((object) => ({ object })),
    localQueues,
    flavors,
    tasFlavors: input.tas ?? [],
    namespaces: input.namespaces,
  });
  const queues = new QueueManager();
  for (const c of snap.clusterQueues.values()) queues.ensure(c.name, c.strategy);
  return {
    snap,
    queues,
    submit(...ws) {
      for (const w of ws) {
        const info = workloadInfo(w);
        const lq = snap.localQueues.get(`${info.namespace}/${info.queueName}`);
        if (!lq) throw new Error(`no LocalQueue ${info.namespace}/${info.queueName}`);
        queues.add(lq.spec.clusterQueue, info);
      }
    },
    settle(opts = {}) {
      return settle(snap, queues, { now: T0 + 1000, ...opts });
    },
  };
}

/** A Workload's outcome after settle(): admitted, or the pending reason and message. */
export function decisionStatus(r: SettleResult, key: string): { admitted: boolean; reason?: string; message?: string; w: Workload } {
  const w = r.workloads.get(key);
  assert.ok(w, `no decision for ${key}`);
  const qr = w.status?.conditions?.find((c) => c.type === 'QuotaReserved');
  const adm = w.status?.conditions?.find((c) => c.type === 'Admitted');
  return {
    admitted: adm?.status === 'True',
    reason: qr?.status === 'False' ? qr.reason : adm?.status === 'False' ? adm.reason : undefined,
    message: qr?.message,
    w,
  };
}

/** Keys of the admitted Workloads after settle(), sorted. */
export const admittedKeys = (r: SettleResult) => [...r.workloads.keys()].filter((k) => decisionStatus(r, k).admitted).sort();

/** A TAS flavor `tas` over `racks` racks of `hostsPerRack` nodes (`r<i>-h<j>`) in block b0. */
export function rackCluster(racks: number, hostsPerRack: number, cpu = '4') {
  const nodes = [];
  for (let r = 0; r < racks; r++)
    for (let h = 0; h < hostsPerRack; h++)
      nodes.push(
        node(`r${r}-h${h}`)
          .labels({ [BLOCK]: 'b0', [RACK]: `r${r}` })
          .cpu(cpu)
          .build(),
      );
  const f = flavor('tas', { topology: 'default' });
  return { f, tas: tasFlavor(f, TAS_LEVELS, nodes) };
}
