// The scale shape of the benchmark (bench/scale-bench.ts, figures `scale.65k.*`): a cluster
// past today's largest (65,000 nodes exist), with everything a scheduler holds at once.
//
//   - 65,000 nodes in 4 levels: 4 zones x 13 blocks x 50 racks x 25 hosts (zone, block,
//     rack, hostname), each 64 CPU / 256Gi / 110 pods, no taint;
//   - 650,000 live pods: 10 bound, running pods per node (1-4 CPU, 4Gi per CPU, seeded),
//     recorded with addPod as the pod watch does (about half of every node's CPU);
//   - 5,000 ClusterQueues in 500 cohorts of 10 (nominal 20 CPU, borrowingLimit 100,
//     reclaimWithinCohort Any, withinClusterQueue LowerPriority), each with Kueue's
//     large-scale mix of 50 pending Workloads (35 small, 11 medium, 4 large: 250,000).
//     The first `tasCohorts` cohorts (5, 50 ClusterQueues) are training queues on the TAS
//     flavor over the 65,000 nodes; their Workloads are one PodSet at rack level (the
//     peer's tas classes: 2 x 500m, 4 x 1250m, 8 x 2500m; required, preferred or
//     slice-balanced). The other 4,950 are batch queues on a flavor without a topology.
//
// One cycle nominates one head per ClusterQueue: 4,950 quota-only heads and 50 placements
// on the 65,000-node topology (with its 650,000 pods), then admits them all.

import { KueueApiVersion } from '../src/api/api-versions.ts';
import { HOSTNAME_LABEL } from '../src/api/keys.ts';
import type { Node, PodSetTopologyRequest, ResourceFlavor, Workload } from '../src/api/objects.ts';
import type { ClusterQueue, LocalQueue } from '../src/api/queues.ts';
import type { ResourceAmounts } from '../src/api/resources.ts';
import { formatTime } from '../src/api/time.ts';
import { AdmissionSnapshot } from '../src/admission/snapshot.ts';
import { QueueManager } from '../src/admission/queue.ts';
import { workloadInfo, type WorkloadInfo } from '../src/admission/workload-info.ts';
import { PlacementEngine } from '../src/placement/engine.ts';
import type { TasFlavor } from '../src/placement/workload-placement.ts';
import { cq, flavor, localQueue, T0 } from '../src/testing/admission.ts';
import { node } from '../src/testing/builders.ts';
import { TopologySnapshot } from '../src/topology/snapshot.ts';
import { AllocatableCache, LabelTopologySource, nodeInfoFromNode } from '../src/topology/source.ts';
import { BLOCK, Prng, RACK, ZONE } from './shapes.ts';

export interface ScaleSize {
  zones: number;
  blocksPerZone: number;
  racksPerBlock: number;
  hostsPerRack: number;
  podsPerNode: number;
  clusterQueues: number;
  clusterQueuesPerCohort: number;
  /** Cohorts (the first ones) whose ClusterQueues use the TAS flavor. */
  tasCohorts: number;
  /** Pending Workloads per ClusterQueue: Kueue's large-scale mix. */
  small: number;
  medium: number;
  large: number;
  seed: number;
}

/** 65,000 nodes (4 x 13 x 50 x 25), 650,000 pods, 5,000 ClusterQueues, 250,000 pending. */
export const SCALE_65K: ScaleSize = {
  zones: 4,
  blocksPerZone: 13,
  racksPerBlock: 50,
  hostsPerRack: 25,
  podsPerNode: 10,
  clusterQueues: 5000,
  clusterQueuesPerCohort: 10,
  tasCohorts: 5,
  small: 35,
  medium: 11,
  large: 4,
  seed: 65000,
};

export const SCALE_LEVELS = [ZONE, BLOCK, RACK, HOSTNAME_LABEL];
export const TAS_FLAVOR = 'scale-tas';
export const BATCH_FLAVOR = 'scale-batch';
const GI = 1024 ** 3;

export function scaleNodeCount(z: ScaleSize): number {
  return z.zones * z.blocksPerZone * z.racksPerBlock * z.hostsPerRack;
}
export function scalePendingCount(z: ScaleSize): number {
  return z.clusterQueues * (z.small + z.medium + z.large);
}

export interface ScalePod {
  key: string;
  nodeName: string;
  requests: ResourceAmounts;
}

/** The nodes and their live pods (pods in node order; request objects shared by shape). */
export function scaleCluster(z: ScaleSize): { nodes: Node[]; pods: ScalePod[] } {
  const rng = new Prng(z.seed);
  const shapes: ResourceAmounts[] = [1, 2, 3, 4].map((c) => ({ cpu: c * 1000, memory: c * 4 * GI }));
  const nodes: Node[] = [];
  const pods: ScalePod[] = [];
  const rw = String(z.racksPerBlock - 1).length;
  const hw = String(z.hostsPerRack - 1).length;
  for (let zi = 0; zi < z.zones; zi++) {
    const zone = `zone-${String.fromCharCode(97 + zi)}`;
    for (let b = 0; b < z.blocksPerZone; b++) {
      const block = `${zone}-b${String(b).padStart(2, '0')}`;
      for (let r = 0; r < z.racksPerBlock; r++) {
        const rack = `${block}-r${String(r).padStart(rw, '0')}`;
        for (let h = 0; h < z.hostsPerRack; h++) {
          const name = `n-${zi}-${String(b).padStart(2, '0')}-${String(r).padStart(rw, '0')}-${String(h).padStart(hw, '0')}`;
          nodes.push(
            node(name)
              .labels({ [ZONE]: zone, [BLOCK]: block, [RACK]: rack, 'node.kubernetes.io/instance-type': 'n2-standard-64' })
              .cpu(64)
              .memory('256Gi')
              .pods(110)
              .build(),
          );
          for (let p = 0; p < z.podsPerNode; p++) {
            pods.push({
              key: `ns-${(nodes.length * 7 + p) % 1000}/live-${nodes.length - 1}-${p}`,
              nodeName: name,
              requests: shapes[rng.int(0, 3)]!,
            });
          }
        }
      }
    }
  }
  return { nodes, pods };
}

/** The topology snapshot of the TAS flavor: Nodes stripped and added, first leaves(), then the live pods. */
export function buildScaleTopology(
  nodes: readonly Node[],
  pods: readonly ScalePod[],
): { snapshot: TopologySnapshot; nodesMs: number; podsMs: number } {
  const t0 = process.hrtime.bigint();
  const s = new TopologySnapshot(new LabelTopologySource('scale', SCALE_LEVELS));
  const cache = new AllocatableCache();
  for (const n of nodes) s.upsertNode(nodeInfoFromNode(n, cache));
  s.leaves();
  const t1 = process.hrtime.bigint();
  for (const p of pods) s.addPod(p.key, p.nodeName, p.requests);
  const t2 = process.hrtime.bigint();
  return { snapshot: s, nodesMs: Number(t1 - t0) / 1e6, podsMs: Number(t2 - t1) / 1e6 };
}

const clusterQueueName = (i: number) => `cq-${String(i).padStart(4, '0')}`;

function isTas(z: ScaleSize, cqIndex: number): boolean {
  return Math.floor(cqIndex / z.clusterQueuesPerCohort) < z.tasCohorts;
}

/** The parsed objects of the admission snapshot: 5,000 ClusterQueues, their LocalQueues, the two flavors. */
export interface ScaleQueueObjects {
  clusterQueues: ClusterQueue[];
  localQueues: LocalQueue[];
  tasFlavor: ResourceFlavor;
  flavors: ResourceFlavor[];
}

export function scaleQueueObjects(z: ScaleSize): ScaleQueueObjects {
  if (z.clusterQueues % z.clusterQueuesPerCohort !== 0)
    throw new Error(`scale shape: ${z.clusterQueues} ClusterQueues do not split into cohorts of ${z.clusterQueuesPerCohort}`);
  const tasFlavor: ResourceFlavor = flavor(TAS_FLAVOR, { topology: 'scale' });
  const clusterQueues: ClusterQueue[] = [];
  for (let i = 0; i < z.clusterQueues; i++) {
    clusterQueues.push(
      cq(clusterQueueName(i))
        .cohort(`cohort-${Math.floor(i / z.clusterQueuesPerCohort)}`)
        .quota(isTas(z, i) ? TAS_FLAVOR : BATCH_FLAVOR, { cpu: ['20', '100'] })
        .preemption({ reclaimWithinCohort: 'Any', withinClusterQueue: 'LowerPriority' })
        .build(),
    );
  }
  return {
    clusterQueues,
    localQueues: clusterQueues.map((c) => localQueue(c.metadata.name, c.metadata.name)),
    tasFlavor,
    flavors: [tasFlavor, flavor(BATCH_FLAVOR)],
  };
}

/** The admission snapshot over a built topology, from the parsed objects. */
export function scaleAdmission(
  objects: ScaleQueueObjects,
  topology: TopologySnapshot,
  engine = new PlacementEngine(topology),
): AdmissionSnapshot {
  const tas: TasFlavor = { flavor: objects.tasFlavor, snapshot: topology, engine };
  return new AdmissionSnapshot({
    clusterQueues: objects.clusterQueues.map((object) => ({ object })),
    localQueues: objects.localQueues,
    flavors: objects.flavors,
    tasFlavors: [tas],
  });
}

interface PendingClass {
  name: string;
  count: number;
  cpu: string;
  priority: number;
  everyMs: number;
  tas: { pods: number; perPod: string; sliceSize: number };
}

function classes(z: ScaleSize): PendingClass[] {
  return [
    { name: 'small', count: z.small, cpu: '1', priority: 50, everyMs: 60, tas: { pods: 2, perPod: '500m', sliceSize: 1 } },
    { name: 'medium', count: z.medium, cpu: '5', priority: 100, everyMs: 300, tas: { pods: 4, perPod: '1250m', sliceSize: 2 } },
    { name: 'large', count: z.large, cpu: '20', priority: 200, everyMs: 700, tas: { pods: 8, perPod: '2500m', sliceSize: 4 } },
  ];
}

function topologyRequest(i: number, sliceSize: number): PodSetTopologyRequest {
  const v = i % 3;
  if (v === 0) return { required: RACK };
  if (v === 1) return { preferred: RACK };
  return { podSetSliceRequiredTopology: RACK, podSetSliceSize: sliceSize };
}

/** RFC 3339 with milliseconds: queue order follows the exact creation instant. */
function createdAt(ms: number): string {
  return formatTime(T0 + Math.floor(ms / 1000)).replace('Z', `.${String(ms % 1000).padStart(3, '0')}Z`);
}

/** Every pending Workload, read once (workloadInfo), with its ClusterQueue. */
export function scalePending(z: ScaleSize): { cq: string; info: WorkloadInfo }[] {
  const out: { cq: string; info: WorkloadInfo; atMs: number }[] = [];
  for (let q = 0; q < z.clusterQueues; q++) {
    const cqName = clusterQueueName(q);
    const tas = isTas(z, q);
    for (const c of classes(z)) {
      for (let i = 0; i < c.count; i++) {
        const name = `${cqName}-${c.name}-${String(i).padStart(3, '0')}`;
        const atMs = i * c.everyMs;
        const w: Workload = {
          apiVersion: KueueApiVersion.V1beta2,
          kind: 'Workload',
          metadata: { name, namespace: 'default', uid: `uid-${name}`, creationTimestamp: createdAt(atMs) },
          spec: {
            queueName: cqName,
            priority: c.priority,
            podSets: [
              tas
                ? {
                    name: 'main',
                    count: c.tas.pods,
                    template: { spec: { containers: [{ name: 'c', resources: { requests: { cpu: c.tas.perPod } } }] } },
                    topologyRequest: topologyRequest(i, c.tas.sliceSize),
                  }
                : { name: 'main', count: 1, template: { spec: { containers: [{ name: 'c', resources: { requests: { cpu: c.cpu } } }] } } },
            ],
          },
        };
        out.push({ cq: cqName, info: workloadInfo(w), atMs });
      }
    }
  }
  return out.sort((a, b) => a.atMs - b.atMs).map(({ cq: c, info }) => ({ cq: c, info }));
}

/** Fresh queues holding every pending Workload. */
export function scaleQueues(snap: AdmissionSnapshot, pending: readonly { cq: string; info: WorkloadInfo }[]): QueueManager {
  const queues = new QueueManager();
  for (const c of snap.clusterQueues.values()) queues.ensure(c.name, c.strategy);
  for (const p of pending) queues.add(p.cq, p.info);
  return queues;
}

/** How many of the ClusterQueues place on the topology. */
export function scaleTasClusterQueues(z: ScaleSize): number {
  return Math.min(z.clusterQueues, z.tasCohorts * z.clusterQueuesPerCohort);
}
