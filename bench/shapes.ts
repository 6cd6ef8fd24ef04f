// Cluster shapes and workloads for the placement benchmark (bench/main.ts) and its smoke
// test. Everything is generated from a seed with our own PRNG, so two runs measure the
// same cluster. Nodes come out as parsed Kubernetes Node objects (labels, allocatable,
// Ready condition), so the build figure covers nodeInfoFromNode + upsertNode exactly as
// the watch loop will.
//
// Shapes:
//   - peer: Kueue's TAS performance-test topology (test/performance/scheduler/configs/tas):
//     1 block x 10 racks x 64 nodes of 96 CPU / 256Gi, levels block/rack/hostname, flavor
//     node label `tas-node-group`. No bound pods (Kueue's runner creates none).
//   - large: 100,000 GPU hosts in 4 levels zone/block/rack/hostname, 8 GPUs / 128 CPU /
//     1Ti / 110 pods each, tainted `nvidia.com/gpu:NoSchedule`; exactly half of the hosts
//     (chosen by a seeded shuffle) carry one bound pod of 1-7 GPUs.

import { HOSTNAME_LABEL } from '../src/api/keys.ts';
import type { Node, StringMap, Taint, Toleration } from '../src/api/objects.ts';
import type { ResourceAmounts } from '../src/api/resources.ts';
import type { Assignment } from '../src/placement/assignment.ts';
import type { PlacementResult } from '../src/placement/engine.ts';
import type { PlacementRequest } from '../src/placement/request.ts';
import { node } from '../src/testing/builders.ts';
import { TopologySnapshot } from '../src/topology/snapshot.ts';
import { AllocatableCache, LabelTopologySource, nodeInfoFromNode } from '../src/topology/source.ts';

// ---- PRNG ---------------------------------------------------------------------------

/** mulberry32: small, fast, good enough to spread usage; never Math.random. */
export class Prng {
  private state: number;
  constructor(seed: number) {
    this.state = seed >>> 0;
  }
  /** Next uint32. */
  next(): number {
    let t = (this.state = (this.state + 0x6d2b79f5) >>> 0);
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (t ^ (t >>> 14)) >>> 0;
  }
  /** Integer in [lo, hi]. */
  int(lo: number, hi: number): number {
    return lo + Math.floor((this.next() / 4294967296) * (hi - lo + 1));
  }
}

// ---- shapes -------------------------------------------------------------------------

export interface BoundPod {
  key: string;
  nodeName: string;
  /** Requests of the pod (without the implicit `pods: 1`). */
  requests: ResourceAmounts;
}

export interface Shape {
  name: string;
  /** Topology level keys, outermost first. */
  levels: string[];
  /** The flavor's nodeLabels. */
  nodeLabels: StringMap;
  nodes: Node[];
  pods: BoundPod[];
}

const GI = 1024 ** 3;

export const PEER_BLOCK = 'cloud.provider.com/topology-block';
export const PEER_RACK = 'cloud.provider.com/topology-rack';
export const PEER_NODE_LABELS: StringMap = { 'tas-node-group': 'tas-group' };

export interface PeerSize {
  blocks: number;
  racksPerBlock: number;
  nodesPerRack: number;
}
/** Kueue's configs/tas: 1 block x 10 racks x 64 nodes = 640 nodes. */
export const PEER: PeerSize = { blocks: 1, racksPerBlock: 10, nodesPerRack: 64 };

export function peerShape(size: PeerSize = PEER): Shape {
  const nodes: Node[] = [];
  for (let b = 0; b < size.blocks; b++) {
    for (let r = 0; r < size.racksPerBlock; r++) {
      for (let n = 0; n < size.nodesPerRack; n++) {
        const name = `b${b}-r${r}-n${n}`;
        nodes.push(
          node(name)
            .labels({ [PEER_BLOCK]: `b${b}`, [PEER_RACK]: `b${b}-r${r}`, ...PEER_NODE_LABELS })
            .cpu(96)
            .memory('256Gi')
            .build(),
        );
      }
    }
  }
  return { name: 'peer', levels: [PEER_BLOCK, PEER_RACK, HOSTNAME_LABEL], nodeLabels: PEER_NODE_LABELS, nodes, pods: [] };
}

export const ZONE = 'topology.kubernetes.io/zone';
export const BLOCK = 'cloud.provider.com/topology-block';
export const RACK = 'cloud.provider.com/topology-rack';
export const GPU = 'nvidia.com/gpu';
export const GPU_TAINT: Taint = { key: GPU, value: 'present', effect: 'NoSchedule' };
export const GPU_TOLERATION: Toleration = { key: GPU, operator: 'Exists', effect: 'NoSchedule' };
export const LARGE_NODE_LABELS: StringMap = { 'cloud.google.com/gke-nodepool': 'a3-ultra' };

export interface LargeSize {
  zones: number;
  blocksPerZone: number;
  racksPerBlock: number;
  hostsPerRack: number;
  seed: number;
}

/**
 * 4 zones x 2 blocks x 625 racks x 20 hosts = 100,000 hosts. Blocks are this large (12,500
 * hosts, about 6,250 of them free) so the 5,000-pod whole-host workload fits in one block:
 * with 25 blocks per zone (4,000 hosts per block) `required: block` could never fit.
 */
export const LARGE: LargeSize = { zones: 4, blocksPerZone: 2, racksPerBlock: 625, hostsPerRack: 20, seed: 20260823 };

export function largeHostCount(size: LargeSize): number {
  return size.zones * size.blocksPerZone * size.racksPerBlock * size.hostsPerRack;
}

export function largeShape(size: LargeSize = LARGE): Shape {
  const rng = new Prng(size.seed);
  const nodes: Node[] = [];
  const rw = String(size.racksPerBlock - 1).length;
  const hw = String(size.hostsPerRack - 1).length;
  for (let z = 0; z < size.zones; z++) {
    const zone = `us-east5-${String.fromCharCode(97 + z)}`;
    for (let b = 0; b < size.blocksPerZone; b++) {
      const block = `${zone}-blk${b}`;
      for (let r = 0; r < size.racksPerBlock; r++) {
        const rack = `${block}-r${String(r).padStart(rw, '0')}`;
        for (let h = 0; h < size.hostsPerRack; h++) {
          const name = `gke-a3u-${z}${b}-${String(r).padStart(rw, '0')}-${String(h).padStart(hw, '0')}`;
          nodes.push(gpuHost(name, { [ZONE]: zone, [BLOCK]: block, [RACK]: rack, ...LARGE_NODE_LABELS }));
        }
      }
    }
  }
  return { name: 'large', levels: [ZONE, BLOCK, RACK, HOSTNAME_LABEL], nodeLabels: LARGE_NODE_LABELS, nodes, pods: halfBusy(nodes, rng) };
}

/** A GPU host of the large and hypernode shapes: 8 GPUs, 128 CPU, 1Ti, 110 pods, GPU taint. */
export function gpuHost(name: string, labels: StringMap): Node {
  return node(name)
    .labels({
      ...labels,
      'node.kubernetes.io/instance-type': 'a3-ultragpu-8g',
      'kubernetes.io/arch': 'amd64',
      'kubernetes.io/os': 'linux',
    })
    .gpu(8)
    .cpu(128)
    .memory('1Ti')
    .pods(110)
    .taint(GPU_TAINT)
    .build();
}

/** Seeded Fisher-Yates shuffle of `0 .. n-1`. */
export function shuffledIndices(n: number, rng: Prng): Int32Array {
  const order = new Int32Array(n);
  for (let i = 0; i < n; i++) order[i] = i;
  for (let i = n - 1; i > 0; i--) {
    const j = rng.int(0, i);
    const t = order[i]!;
    order[i] = order[j]!;
    order[j] = t;
  }
  return order;
}

/**
 * Exactly half of the hosts, chosen by a seeded shuffle, run one bound pod of 1-7 GPUs
 * (16 CPU and 128Gi per GPU); pods come out in node order.
 */
export function halfBusy(nodes: readonly Node[], rng: Prng): BoundPod[] {
  const order = shuffledIndices(nodes.length, rng);
  const pods: BoundPod[] = [];
  const used = Array.from(order.subarray(0, Math.floor(nodes.length / 2))).sort((a, b) => a - b);
  for (const i of used) {
    const gpus = rng.int(1, 7);
    const nodeName = nodes[i]!.metadata.name;
    pods.push({ key: `team-${i % 97}/train-${i}`, nodeName, requests: { [GPU]: gpus, cpu: gpus * 16_000, memory: gpus * 128 * GI } });
  }
  return pods;
}

/**
 * A snapshot of the shape, ready for placement: Nodes stripped and added, the tree's
 * structure built (first leaves()), then the bound pods recorded. Returns the time of
 * each phase: `nodesMs` is "building the snapshot from parsed Node objects".
 */
export function buildSnapshotTimed(shape: Shape): { snapshot: TopologySnapshot; nodesMs: number; podsMs: number } {
  const t0 = process.hrtime.bigint();
  const s = new TopologySnapshot(new LabelTopologySource(shape.name, shape.levels), { nodeLabels: shape.nodeLabels });
  const cache = new AllocatableCache();
  for (const n of shape.nodes) s.upsertNode(nodeInfoFromNode(n, cache));
  s.leaves();
  const t1 = process.hrtime.bigint();
  for (const p of shape.pods) s.addPod(p.key, p.nodeName, p.requests);
  const t2 = process.hrtime.bigint();
  return { snapshot: s, nodesMs: Number(t1 - t0) / 1e6, podsMs: Number(t2 - t1) / 1e6 };
}

export function buildSnapshot(shape: Shape): TopologySnapshot {
  return buildSnapshotTimed(shape).snapshot;
}

// ---- workloads ----------------------------------------------------------------------

export const LARGE_WORKLOAD_PODS = 5000;
/** One whole host per pod: 8 GPUs, 96 CPU, 768Gi. */
export const WHOLE_HOST: ResourceAmounts = { [GPU]: 8, cpu: 96_000, memory: 768 * GI };

export function largeWorkloads(pods: number = LARGE_WORKLOAD_PODS): { requiredBlock: PlacementRequest; preferredRack: PlacementRequest } {
  const base = { podSetName: 'workers', count: pods, requests: WHOLE_HOST, sliceLayers: [], tolerations: [GPU_TOLERATION] };
  return {
    requiredBlock: { ...base, mode: 'required', level: BLOCK },
    preferredRack: { ...base, mode: 'preferred', level: RACK },
  };
}

/** Kueue's `large` TAS class: 8 pods x 2500m. */
export function peerWorkloads(): { requiredRack: PlacementRequest; preferredBlock: PlacementRequest } {
  const base = { podSetName: 'main', count: 8, requests: { cpu: 2500 }, sliceLayers: [], tolerations: [] };
  return {
    requiredRack: { ...base, mode: 'required', level: PEER_RACK },
    preferredBlock: { ...base, mode: 'preferred', level: PEER_BLOCK },
  };
}

/**
 * Checks a placement result: it succeeded, placed exactly `count` pods, and all of them
 * sit under one domain of `withinLevel` (when given). Returns what is wrong, if anything.
 */
export function checkPlacement(s: TopologySnapshot, req: PlacementRequest, r: PlacementResult, withinLevel?: string): string | undefined {
  if (!r.ok) return `${req.mode} ${req.level ?? ''} placement of ${req.count} pods failed: ${r.reason}`;
  let pods = 0;
  const roots = new Set<number>();
  const level = withinLevel === undefined ? -1 : s.levels.indexOf(withinLevel);
  for (const d of r.workers.domains) {
    pods += d.count;
    const leaf = s.leafById(d.values.join(','));
    if (leaf === undefined) return `placement names unknown leaf ${d.values.join(',')}`;
    if (level >= 0) {
      let a = leaf;
      while (s.level(a) > level) a = s.parent(a);
      roots.add(a);
    }
  }
  if (pods !== req.count) return `placement has ${pods} pods, want ${req.count}`;
  if (roots.size > 1) return `placement spans ${roots.size} domains of ${withinLevel}, want 1`;
  return undefined;
}

/** TAS usage records (`addWorkloadUsage` input) of an assignment. */
export function usageDomains(a: Assignment): { leafId: string; count: number }[] {
  return a.domains.map((d) => ({ leafId: d.values.join(','), count: d.count }));
}

// ---- hostnames for the encoding figure ----------------------------------------------

/**
 * GKE-style hostnames `gke-<cluster>-np-<pool>-<8 hex>-<4 chars>`, `perPool` per node pool,
 * sorted (assignments list domains in level-value order). Kueue's
 * tas_assignment_performance_test.go asserts 40,000 such single-pod hosts in 1,000 pools
 * encode to at most 1,500,000 bytes.
 */
export function gkeHostnames(count: number, perPool: number, seed: number): string[] {
  const rng = new Prng(seed);
  const alphabet = 'abcdefghijklmnopqrstuvwxyz0123456789';
  const out: string[] = [];
  const pools = Math.ceil(count / perPool);
  const pw = String(pools - 1).length;
  for (let p = 0; p < pools; p++) {
    const hash = rng.next().toString(16).padStart(8, '0');
    const seen = new Set<string>();
    for (let i = 0; i < perPool && out.length < count;) {
      let suffix = '';
      for (let k = 0; k < 4; k++) suffix += alphabet[rng.int(0, alphabet.length - 1)];
      if (seen.has(suffix)) continue;
      seen.add(suffix);
      out.push(`gke-tq-prod-np-${String(p).padStart(pw, '0')}-${hash}-${suffix}`);
      i++;
    }
  }
  return out.sort();
}

/** A single-pod-per-host assignment over `hostnames`, at the hostname level. */
export function singlePodAssignment(hostnames: readonly string[]): Assignment {
  return { levels: [HOSTNAME_LABEL], domains: hostnames.map((h) => ({ values: [h], count: 1 })) };
}
