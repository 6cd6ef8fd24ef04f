// The preemption shape of the benchmark (bench/main.ts, figure
// `admission.preempt.2000-nodes-700-victims`): kubernetes-sigs/kueue#13148, where TAS
// cycles took up to 40 s simulating preemptions on ~2,000 nodes with ~700 victims.
//
// 4 blocks x 10 racks x 50 nodes (8 GPU, 128 CPU each), levels block/rack/hostname, one TAS
// flavor. 700 admitted Workloads of 4-7 half-node pods (4 GPU + 48 CPU) packed rack by rack
// as TAS would place them; a seeded 40% are in the preemptor's ClusterQueue `research`,
// the rest in `batch`, which borrows from `research` in the cohort. The preemptor: 50
// whole-node pods, required rack, priority above every victim; quota fits, the topology
// does not, so a whole rack must be freed. fits() is what the cycle would pass: the quota
// check, then placeWorkload on the 2,000 nodes.

import { KueueApiVersion } from '../src/api/api-versions.ts';
import { HOSTNAME_LABEL } from '../src/api/keys.ts';
import type { ResourceFlavor, Workload } from '../src/api/objects.ts';
import type { ClusterQueue } from '../src/api/queues.ts';
import { assignFlavors } from '../src/admission/flavor-assigner.ts';
import { findPreemptionTargets, type PreemptionRequest, type PreemptionTarget } from '../src/admission/preemption.ts';
import { AdmissionSnapshot, type AdmittedWorkload } from '../src/admission/snapshot.ts';
import { workloadInfo } from '../src/admission/workload-info.ts';
import { PlacementEngine } from '../src/placement/engine.ts';
import { placeWorkload } from '../src/placement/workload-placement.ts';
import { node } from '../src/testing/builders.ts';
import { LabelTopologySource, nodeInfoFromNode } from '../src/topology/source.ts';
import { TopologySnapshot } from '../src/topology/snapshot.ts';
import { BLOCK, GPU, Prng, RACK } from './shapes.ts';

export interface PreemptionSize {
  blocks: number;
  racksPerBlock: number;
  nodesPerRack: number;
  victims: number;
  seed: number;
}

export const PREEMPTION: PreemptionSize = { blocks: 4, racksPerBlock: 10, nodesPerRack: 50, victims: 700, seed: 13148 };

/**
 * Ten times the scale (issue 16): 7,000 victims, the same preemptor, on 5 blocks x
 * 79 racks x 50 nodes = 19,750 nodes. Packed rack by rack, the 7,000 victims fill 395 racks
 * (the last one half): with 400 racks (20,000 nodes) five would stay empty and the preemptor
 * would fit without preempting anyone, so the topology is sized, as the 2,000-node shape's
 * is, for every rack to hold victims.
 */
export const PREEMPTION_20K: PreemptionSize = { blocks: 5, racksPerBlock: 79, nodesPerRack: 50, victims: 7000, seed: 13148 };

const FLAVOR: ResourceFlavor = {
  apiVersion: KueueApiVersion.V1beta2,
  kind: 'ResourceFlavor',
  metadata: { name: 'tas-gpu' },
  spec: { topologyName: 'gpu' },
};

function clusterQueue(name: string, gpus: number): ClusterQueue {
  return {
    apiVersion: KueueApiVersion.V1beta2,
    kind: 'ClusterQueue',
    metadata: { name },
    spec: {
      cohortName: 'all',
      resourceGroups: [
        {
          coveredResources: ['cpu', GPU],
          flavors: [
            {
              name: 'tas-gpu',
              resources: [
                { name: 'cpu', nominalQuota: String(gpus * 16) },
                { name: GPU, nominalQuota: String(gpus) },
              ],
            },
          ],
        },
      ],
      queueingStrategy: 'BestEffortFIFO',
      namespaceSelector: {},
      flavorFungibility: { whenCanBorrow: 'MayStopSearch', whenCanPreempt: 'TryNextFlavor' },
      preemption: { reclaimWithinCohort: 'Any', withinClusterQueue: 'LowerPriority' },
      stopPolicy: 'None',
    },
  };
}

function gpuWorkload(name: string, priority: number, pods: number, gpus: number, cpu: number, rack?: string): Workload {
  return {
    apiVersion: KueueApiVersion.V1beta2,
    kind: 'Workload',
    metadata: { name, namespace: 'bench', uid: `uid-${name}`, creationTimestamp: '2026-01-01T00:00:00Z' },
    spec: {
      priority,
      podSets: [
        {
          name: 'main',
          count: pods,
          template: { spec: { containers: [{ name: 'c', resources: { requests: { cpu: String(cpu), [GPU]: String(gpus) } } }] } },
          ...(rack ? { topologyRequest: { required: rack } } : {}),
        },
      ],
    },
  };
}

export interface PreemptionBench {
  snap: AdmissionSnapshot;
  request: PreemptionRequest;
  /** fits() calls so far. */
  calls: () => number;
  nodes: number;
  victims: number;
}

export function preemptionShape(size: PreemptionSize = PREEMPTION): PreemptionBench {
  const rng = new Prng(size.seed);
  const source = new LabelTopologySource('gpu', [BLOCK, RACK, HOSTNAME_LABEL]);
  const topo = new TopologySnapshot(source);
  const racks: string[][] = [];
  for (let b = 0; b < size.blocks; b++) {
    for (let r = 0; r < size.racksPerBlock; r++) {
      const hosts: string[] = [];
      for (let n = 0; n < size.nodesPerRack; n++) {
        const name = `b${b}-r${r}-n${n}`;
        topo.upsertNode(
          nodeInfoFromNode(
            node(name)
              .labels({ [BLOCK]: `b${b}`, [RACK]: `b${b}-r${r}` })
              .gpu(8)
              .cpu(128)
              .build(),
          ),
        );
        hosts.push(name);
      }
      racks.push(hosts);
    }
  }
  const nodes = racks.length * size.nodesPerRack;
  const snap = new AdmissionSnapshot({
    clusterQueues: [{ object: clusterQueue('research', (nodes * 8 * 5) / 8) }, { object: clusterQueue('batch', (nodes * 8 * 3) / 8) }],
    flavors: [FLAVOR],
    tasFlavors: [{ flavor: FLAVOR, snapshot: topo, engine: new PlacementEngine(topo) }],
  });

  // Victims packed rack by rack in half-node slots.
  let rack = 0;
  let slot = 0;
  for (let i = 0; i < size.victims; i++) {
    const pods = rng.int(4, 7);
    if (slot + pods > size.nodesPerRack * 2) {
      rack++;
      slot = 0;
    }
    if (rack >= racks.length) throw new Error(`preemption shape: ${size.victims} victims do not fit on ${nodes} nodes`);
    const perHost = new Map<string, number>();
    for (let p = 0; p < pods; p++, slot++) {
      const h = racks[rack]![slot >> 1]!;
      perHost.set(h, (perHost.get(h) ?? 0) + 1);
    }
    const cq = rng.int(0, 9) < 4 ? 'research' : 'batch';
    const w = gpuWorkload(`victim-${String(i).padStart(3, '0')}`, rng.int(0, 99), pods, 4, 48);
    const info = workloadInfo(w);
    const ps = info.podSets[0]!;
    const podSets = [
      {
        name: ps.name,
        count: pods,
        flavors: { cpu: 'tas-gpu', [GPU]: 'tas-gpu' },
        perPod: ps.perPod,
        usage: { cpu: ps.perPod.cpu! * pods, [GPU]: ps.perPod[GPU]! * pods },
        tasFlavor: 'tas-gpu',
        assignment: { levels: [HOSTNAME_LABEL], domains: [...perHost].map(([h, count]) => ({ values: [h], count })) },
      },
    ];
    const a: AdmittedWorkload = {
      key: info.key,
      workload: w,
      clusterQueue: cq,
      priority: info.priority,
      reservedAt: rng.int(0, 100_000),
      podSets,
      usage: AdmissionSnapshot.usageOf(podSets),
    };
    snap.addAdmitted(a);
  }

  return { ...preemptor(snap, gpuWorkload('preemptor', 1000, size.nodesPerRack, 8, 96, RACK)), nodes, victims: size.victims };
}

/** The request of a preemptor in `research`, with the fits() the cycle would pass. */
function preemptor(snap: AdmissionSnapshot, w: Workload): { snap: AdmissionSnapshot; request: PreemptionRequest; calls: () => number } {
  const info = workloadInfo(w);
  const cq = snap.clusterQueues.get('research')!;
  const assignment = assignFlavors(snap, cq, info, { placement: {} });
  const flavorOf = new Map(assignment.podSets.flatMap((p) => (p.tasFlavor !== undefined ? [[p.name, p.tasFlavor] as const] : [])));
  const counts = new Map(assignment.podSets.map((p) => [p.name, p.count]));
  let calls = 0;
  const fits = (): boolean => {
    calls++;
    for (const [f, v] of assignment.usage) if (v > snap.quota.available(cq.name, f)) return false;
    return placeWorkload(w, snap.tasList, { flavorOf, counts }).ok;
  };
  return { snap, request: { info, cq, assignment, fits }, calls: () => calls };
}

/**
 * The same cluster with a preemptor of 300 whole-node pods and no level (TAS implied by
 * the ClusterQueue): no domain goes first, so this is the global order, its binary search
 * and the fill-back of ~100 targets.
 */
export function unconstrainedVariant(b: PreemptionBench): PreemptionBench {
  return { ...b, ...preemptor(b.snap, gpuWorkload('preemptor-300', 1000, 300, 8, 96)) };
}

/** What is wrong with the result, if anything: it must free one rack and let the preemptor fit. */
export function checkPreemption(b: PreemptionBench, targets: readonly PreemptionTarget[]): string | undefined {
  const { snap, request } = b;
  if (request.assignment.mode !== 'Preempt' || !request.assignment.preemptTopology)
    return `the preemptor's assignment is ${request.assignment.mode}, expected Preempt for topology`;
  if (targets.length === 0) return 'no preemption targets';
  if (request.fits()) return 'the preemptor fits before preemption';
  const removed = targets.map((t) => snap.removeAdmitted(t.key)!);
  try {
    if (!request.fits()) return `the preemptor does not fit after preempting ${targets.length} Workloads`;
    const racks = new Set(
      removed.flatMap((a) => a.podSets.flatMap((p) => p.assignment!.domains.map((d) => d.values[0]!.replace(/-n\d+$/, '')))),
    );
    if (racks.size !== 1) return `the targets span ${racks.size} racks, expected one`;
  } finally {
    for (const a of removed) snap.addAdmitted(a);
  }
  return undefined;
}

/** One search, for timing. */
export function preemptOnce(b: PreemptionBench): PreemptionTarget[] {
  return findPreemptionTargets(b.snap, b.request);
}
