// The peer's scheduler performance shapes (specs/performance-anchors.md §1.1 baseline, §1.3
// tas) as `simulate` input: Kueue's generator's ClusterQueues, cohorts and classes, each
// Workload submitted as a batch/v1 Job whose pods run for the class's runtime on the
// embedded cluster (the peer's runner marks Workloads finished instead; here the job
// reconciler, job controller, binder, kubelet and, for tas, the TopologyUngater all run).
//
// Also the large live shape: 10,000 nodes with 100,000 running pods.

import { CoreApiVersion, KueueApiVersion } from '../src/api/api-versions.ts';
import type { KObject, Node } from '../src/api/objects.ts';
import { CLASS_NAMES, clusterQueueName, type PeerRunShape, type TasVariant, variants } from './admission-cycle.ts';
import { PEER_BLOCK, PEER_NODE_LABELS, PEER_RACK, Prng } from './shapes.ts';

const NS = 'default';
const TAS_FLAVOR = 'tas-flavor';
const FLAVOR = 'default';
const TOPOLOGY = 'tas-topology';
const HOSTNAME = 'kubernetes.io/hostname';

function nodeObj(name: string, labels: Record<string, string>, cpu: string, memory: string, pods = '110'): Node {
  return {
    apiVersion: CoreApiVersion.V1,
    kind: 'Node',
    metadata: { name, labels: { ...labels, [HOSTNAME]: name } },
    status: { allocatable: { cpu, memory, pods }, conditions: [{ type: 'Ready', status: 'True' }] },
  };
}

function tasAnnotations(v: TasVariant, sliceSize: number): Record<string, string> {
  if (v === 'required') return { 'kueue.x-k8s.io/podset-required-topology': PEER_RACK };
  if (v === 'preferred') return { 'kueue.x-k8s.io/podset-preferred-topology': PEER_RACK };
  return { 'kueue.x-k8s.io/podset-slice-required-topology': PEER_RACK, 'kueue.x-k8s.io/podset-slice-size': String(sliceSize) };
}

/** Every object of a peer run, cluster first, Jobs in submission order. */
export function peerSimulationObjects(shape: PeerRunShape): KObject[] {
  const out: KObject[] = [];
  const tas = shape.topology !== undefined;
  const flavorName = tas ? TAS_FLAVOR : FLAVOR;
  // Nodes: the peer's 640 for tas; for baseline (the peer has none) enough CPU for every cohort's quota.
  if (tas) {
    const t = shape.topology!;
    for (let b = 0; b < t.blocks; b++)
      for (let r = 0; r < t.racksPerBlock; r++)
        for (let n = 0; n < t.nodesPerRack; n++) {
          const name = `node-b${b}-r${r}-n${String(n).padStart(2, '0')}`;
          out.push(nodeObj(name, { ...PEER_NODE_LABELS, [PEER_BLOCK]: `b${b}`, [PEER_RACK]: `b${b}-r${r}` }, '96', '256Gi'));
        }
    out.push({
      apiVersion: KueueApiVersion.V1beta2,
      kind: 'Topology',
      metadata: { name: TOPOLOGY },
      spec: { levels: [{ nodeLabel: PEER_BLOCK }, { nodeLabel: PEER_RACK }, { nodeLabel: HOSTNAME }] },
    } as KObject);
    out.push({
      apiVersion: KueueApiVersion.V1beta2,
      kind: 'ResourceFlavor',
      metadata: { name: TAS_FLAVOR },
      spec: { nodeLabels: PEER_NODE_LABELS, topologyName: TOPOLOGY },
    } as KObject);
  } else {
    const cpu = shape.cohorts * shape.clusterQueuesPerCohort * shape.nominal;
    for (let i = 0; i < Math.ceil(cpu / 96) + 1; i++) out.push(nodeObj(`node-${String(i).padStart(2, '0')}`, {}, '96', '256Gi', '1000'));
    out.push({ apiVersion: KueueApiVersion.V1beta2, kind: 'ResourceFlavor', metadata: { name: FLAVOR }, spec: {} } as KObject);
  }
  shape.classes.forEach((c) =>
    out.push({
      apiVersion: KueueApiVersion.V1beta2,
      kind: 'WorkloadPriorityClass',
      metadata: { name: c.name },
      value: c.priority,
    } as unknown as KObject),
  );
  for (let c = 0; c < shape.cohorts; c++)
    for (let q = 0; q < shape.clusterQueuesPerCohort; q++) {
      const name = clusterQueueName(c, q);
      out.push({
        apiVersion: KueueApiVersion.V1beta2,
        kind: 'ClusterQueue',
        metadata: { name },
        spec: {
          cohortName: `cohort-${c}`,
          namespaceSelector: {},
          preemption: { reclaimWithinCohort: 'Any', withinClusterQueue: 'LowerPriority' },
          resourceGroups: [
            {
              coveredResources: ['cpu'],
              flavors: [
                {
                  name: flavorName,
                  resources: [{ name: 'cpu', nominalQuota: String(shape.nominal), borrowingLimit: String(shape.borrowingLimit) }],
                },
              ],
            },
          ],
        },
      } as unknown as KObject);
      out.push({
        apiVersion: KueueApiVersion.V1beta2,
        kind: 'LocalQueue',
        metadata: { name, namespace: NS },
        spec: { clusterQueue: name },
      } as unknown as KObject);
    }
  const jobs: { at: number; job: KObject }[] = [];
  for (let c = 0; c < shape.cohorts; c++)
    for (let q = 0; q < shape.clusterQueuesPerCohort; q++) {
      const cqName = clusterQueueName(c, q);
      for (const cls of shape.classes) {
        const vs = cls.tas ? variants(cls.tas.variants) : undefined;
        for (let i = 0; i < cls.count; i++) {
          const v = vs?.[i];
          const pods = cls.tas ? cls.tas.pods : 1;
          const cpu = cls.tas ? cls.tas.perPod : String(cls.cpu);
          const at = i * cls.everyMs;
          const name = `${cqName}-${cls.name}${v ? `-${v}` : ''}-${String(i).padStart(4, '0')}`;
          jobs.push({
            at,
            job: {
              apiVersion: CoreApiVersion.Batch,
              kind: 'Job',
              metadata: {
                name,
                namespace: NS,
                labels: { 'kueue.x-k8s.io/queue-name': cqName, 'kueue.x-k8s.io/priority-class': cls.name },
                annotations: { 'topoqueue.io/submit-at': `${at}ms` },
              },
              spec: {
                parallelism: pods,
                completions: pods,
                completionMode: 'Indexed',
                template: {
                  metadata: {
                    annotations: {
                      'topoqueue.io/run-duration': `${cls.runtimeMs}ms`,
                      ...(v && cls.tas ? tasAnnotations(v, cls.tas.sliceSize) : {}),
                    },
                  },
                  spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox', resources: { requests: { cpu } } }] },
                },
              },
            } as unknown as KObject,
          });
        }
      }
    }
  jobs.sort((a, b) => a.at - b.at);
  return [...out, ...jobs.map((j) => j.job)];
}

export { CLASS_NAMES };

/**
 * 10,000 nodes (10 blocks x 25 racks x 40 hosts, 128 CPU / 1Ti each) and `jobs`
 * Jobs of `podsPerJob` pods (8 CPU each, required block) that run for a day: 100,000 pods live.
 */
export function largeLiveObjects(jobs = 20, podsPerJob = 5000): KObject[] {
  const out: KObject[] = [];
  const blocks = 10;
  const racks = 25;
  const hosts = 40;
  for (let b = 0; b < blocks; b++)
    for (let r = 0; r < racks; r++)
      for (let h = 0; h < hosts; h++) {
        const name = `h-${b}-${r}-${h}`;
        out.push(nodeObj(name, { pool: 'gpu', [PEER_BLOCK]: `b${b}`, [PEER_RACK]: `b${b}-r${r}` }, '128', '1Ti', '110'));
      }
  out.push({
    apiVersion: KueueApiVersion.V1beta2,
    kind: 'Topology',
    metadata: { name: TOPOLOGY },
    spec: { levels: [{ nodeLabel: PEER_BLOCK }, { nodeLabel: PEER_RACK }, { nodeLabel: HOSTNAME }] },
  } as KObject);
  out.push({
    apiVersion: KueueApiVersion.V1beta2,
    kind: 'ResourceFlavor',
    metadata: { name: 'gpu' },
    spec: { nodeLabels: { pool: 'gpu' }, topologyName: TOPOLOGY },
  } as KObject);
  out.push({
    apiVersion: KueueApiVersion.V1beta2,
    kind: 'ClusterQueue',
    metadata: { name: 'all' },
    spec: {
      namespaceSelector: {},
      resourceGroups: [{ coveredResources: ['cpu'], flavors: [{ name: 'gpu', resources: [{ name: 'cpu', nominalQuota: '1280000' }] }] }],
    },
  } as unknown as KObject);
  out.push({
    apiVersion: KueueApiVersion.V1beta2,
    kind: 'LocalQueue',
    metadata: { name: 'all', namespace: NS },
    spec: { clusterQueue: 'all' },
  } as unknown as KObject);
  for (let j = 0; j < jobs; j++) out.push(gangJob(`train-${String(j).padStart(2, '0')}`, podsPerJob, 'all'));
  return out;
}

/** One Indexed Job of `pods` 8-CPU pods, required block, running for a day. */
export function gangJob(name: string, pods: number, queue: string): KObject {
  return {
    apiVersion: CoreApiVersion.Batch,
    kind: 'Job',
    metadata: { name, namespace: NS, labels: { 'kueue.x-k8s.io/queue-name': queue } },
    spec: {
      parallelism: pods,
      completions: pods,
      completionMode: 'Indexed',
      template: {
        metadata: { annotations: { 'topoqueue.io/run-duration': '24h', 'kueue.x-k8s.io/podset-required-topology': PEER_BLOCK } },
        spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'trainer', resources: { requests: { cpu: '8' } } }] },
      },
    },
  } as unknown as KObject;
}

/** The all-at-once shape (issue 16): nodes in blocks x racks x hosts, Jobs of seeded sizes. */
export interface BurstSize {
  blocks: number;
  racksPerBlock: number;
  hostsPerRack: number;
  jobs: number;
  /** Pods over every Job (the sizes are drawn, then nudged to sum to this). */
  pods: number;
  /** 0: every Job at t = 0; otherwise Job i at i * spreadMs / jobs. */
  spreadMs: number;
  seed: number;
}

/** 20,000 nodes (10 x 40 x 50) and 2,000 Jobs of 82,820 pods, all submitted at t = 0. */
export const BURST_20K: BurstSize = {
  blocks: 10,
  racksPerBlock: 40,
  hostsPerRack: 50,
  jobs: 2000,
  pods: 82_820,
  spreadMs: 0,
  seed: 20261126,
};

/** The same shape scaled by `f` (nodes, Jobs and pods; racks per block scaled, hosts kept). */
export function scaledBurst(f: number, spreadMs = 0): BurstSize {
  return {
    ...BURST_20K,
    racksPerBlock: Math.max(1, Math.round(BURST_20K.racksPerBlock * f)),
    jobs: Math.max(1, Math.round(BURST_20K.jobs * f)),
    pods: Math.max(1, Math.round(BURST_20K.pods * f)),
    spreadMs,
  };
}

export const BURST_QUEUES = ['train', 'tune', 'eval', 'batch'] as const;

/** Seeded Job sizes: mostly small, a tail of large gangs; nudged so they sum to `pods` exactly. */
export function burstJobSizes(jobs: number, pods: number, seed: number): number[] {
  const rng = new Prng(seed);
  const ladder = [1, 2, 4, 8, 16, 32, 64, 128, 256];
  const weights = [10, 10, 14, 16, 16, 14, 10, 6, 4];
  const total = weights.reduce((a, b) => a + b, 0);
  const sizes: number[] = [];
  for (let i = 0; i < jobs; i++) {
    let r = rng.next() % total;
    let k = 0;
    while (r >= weights[k]!) r -= weights[k++]!;
    sizes.push(ladder[k]!);
  }
  let sum = sizes.reduce((a, b) => a + b, 0);
  // Nudge seeded Jobs by one pod until the total is exact (never below one pod).
  while (sum !== pods) {
    const i = rng.next() % jobs;
    if (sum < pods) {
      sizes[i]!++;
      sum++;
    } else if (sizes[i]! > 1) {
      sizes[i]!--;
      sum--;
    }
  }
  return sizes;
}

/**
 * The burst shape: hosts of 32 CPU / 256Gi in blocks and racks (a Topology and a TAS flavor),
 * four ClusterQueues in one cohort sharing the whole cluster's CPU, and `jobs` Indexed Jobs of
 * 16-CPU pods (two per host), sizes from `burstJobSizes`: a Job up to 64 pods requires one rack
 * (a rack holds 100 such pods), a larger one one block, every fifth one only prefers a rack.
 * Each runs a seeded 30 min - 4 h. All at t = 0 the pods ask for about twice the cluster, so
 * about half the Jobs wait for others to finish; spread evenly over `spreadMs` (24 h) they
 * rarely wait.
 */
export function burstObjects(size: BurstSize = BURST_20K): KObject[] {
  const out: KObject[] = [];
  for (let b = 0; b < size.blocks; b++)
    for (let r = 0; r < size.racksPerBlock; r++)
      for (let h = 0; h < size.hostsPerRack; h++) {
        const name = `n-${b}-${String(r).padStart(2, '0')}-${String(h).padStart(2, '0')}`;
        out.push(nodeObj(name, { pool: 'cpu', [PEER_BLOCK]: `b${b}`, [PEER_RACK]: `b${b}-r${r}` }, '32', '256Gi', '110'));
      }
  out.push({
    apiVersion: KueueApiVersion.V1beta2,
    kind: 'Topology',
    metadata: { name: TOPOLOGY },
    spec: { levels: [{ nodeLabel: PEER_BLOCK }, { nodeLabel: PEER_RACK }, { nodeLabel: HOSTNAME }] },
  } as KObject);
  out.push({
    apiVersion: KueueApiVersion.V1beta2,
    kind: 'ResourceFlavor',
    metadata: { name: 'cpu' },
    spec: { nodeLabels: { pool: 'cpu' }, topologyName: TOPOLOGY },
  } as KObject);
  const nodes = size.blocks * size.racksPerBlock * size.hostsPerRack;
  // Each queue may use the whole cluster (quota is not the limit: the nodes are, through TAS placement).
  const share = String(nodes * 32);
  for (const q of BURST_QUEUES) {
    out.push({
      apiVersion: KueueApiVersion.V1beta2,
      kind: 'ClusterQueue',
      metadata: { name: q },
      spec: {
        cohortName: 'all',
        namespaceSelector: {},
        resourceGroups: [{ coveredResources: ['cpu'], flavors: [{ name: 'cpu', resources: [{ name: 'cpu', nominalQuota: share }] }] }],
      },
    } as unknown as KObject);
    out.push({
      apiVersion: KueueApiVersion.V1beta2,
      kind: 'LocalQueue',
      metadata: { name: q, namespace: NS },
      spec: { clusterQueue: q },
    } as unknown as KObject);
  }
  const sizes = burstJobSizes(size.jobs, size.pods, size.seed);
  const rng = new Prng(size.seed ^ 0x5eed);
  sizes.forEach((pods, i) => {
    const runMin = 30 + (rng.next() % 211);
    const level = pods > 64 ? PEER_BLOCK : PEER_RACK;
    const tas =
      i % 5 === 4 ? { 'kueue.x-k8s.io/podset-preferred-topology': PEER_RACK } : { 'kueue.x-k8s.io/podset-required-topology': level };
    const at = size.spreadMs > 0 ? Math.floor((i * size.spreadMs) / size.jobs) : 0;
    out.push({
      apiVersion: CoreApiVersion.Batch,
      kind: 'Job',
      metadata: {
        name: `job-${String(i).padStart(4, '0')}`,
        namespace: NS,
        labels: { 'kueue.x-k8s.io/queue-name': BURST_QUEUES[i % BURST_QUEUES.length]! },
        ...(at > 0 ? { annotations: { 'topoqueue.io/submit-at': `${at}ms` } } : {}),
      },
      spec: {
        parallelism: pods,
        completions: pods,
        completionMode: 'Indexed',
        template: {
          metadata: { annotations: { 'topoqueue.io/run-duration': `${runMin}m`, ...tas } },
          spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'worker', resources: { requests: { cpu: '16' } } }] },
        },
      },
    } as unknown as KObject);
  });
  return out;
}
