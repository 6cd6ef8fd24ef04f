// The HyperNode shape of the benchmark (bench/main.ts, `hypernode.*` figures) and its smoke
// test: a Volcano HyperNode forest over GPU hosts, generated from a seed like the shapes in
// shapes.ts.
//
//   - nodes: blocks x racks x hosts GPU hosts named `gpu-<block>-<rack>-<host>` (zero-padded),
//     labelled with their rack and pool, 8 GPUs / 128 CPU / 1Ti / 110 pods each and the GPU
//     taint (the large shape's host); exactly half (a seeded shuffle) carry one bound pod
//     of 1-7 GPUs;
//   - tier 1, one leaf per rack: most list their hosts by exactMatch, a seeded tenth by
//     regexMatch on the name prefix (`^gpu-3-0042-`) and another tenth by labelMatch on
//     the rack label;
//   - tier 2, one spine per `racksPerSpine` leaves; tier 3, one per block, over its spines.
//
// HyperNodes come out sorted by name, as a list from the API server returns them.

import type { Node } from '../src/api/objects.ts';
import type { HyperNode } from '../src/api/volcano-objects.ts';
import { applyNetworkTopology, type NetworkTopologyRequest } from '../src/placement/network-topology.ts';
import type { PlacementRequest } from '../src/placement/request.ts';
import { hyperNode } from '../src/testing/builders.ts';
import { HyperNodeTopologySource, HyperNodeTree } from '../src/topology/hypernode-tree.ts';
import { TopologySnapshot } from '../src/topology/snapshot.ts';
import { AllocatableCache, type NodeInfo, nodeInfoFromNode } from '../src/topology/source.ts';
import { type BoundPod, GPU_TOLERATION, gpuHost, halfBusy, Prng, shuffledIndices, WHOLE_HOST } from './shapes.ts';
import { compareStrings } from '../src/api/values.ts';

export const HN_RACK = 'example.com/rack';
export const HN_POOL = 'example.com/pool';

export interface HyperNodeSize {
  blocks: number;
  spinesPerBlock: number;
  racksPerSpine: number;
  hostsPerRack: number;
  seed: number;
}

/**
 * 8 blocks x 125 spines x 10 racks x 10 hosts = 100,000 hosts under 11,008 HyperNodes
 * (10,000 leaves, 1,000 spines, 8 blocks). A block holds 12,500 hosts, about 6,250 of
 * them free, so the 5,000-pod whole-host job fits in one tier-3 HyperNode; a spine (100
 * hosts) cannot hold it, so `highestTier` must be 3: no tier-2 domain of a tree with
 * ~10-host leaves and ~10-leaf spines can hold 5,000 whole-host pods.
 */
export const HYPERNODE: HyperNodeSize = { blocks: 8, spinesPerBlock: 125, racksPerSpine: 10, hostsPerRack: 10, seed: 20261121 };

/** The tier whose domains hold the benchmark's job (blocks). */
export const HYPERNODE_JOB_TIER = 3;

export function hyperNodeHostCount(size: HyperNodeSize): number {
  return size.blocks * size.spinesPerBlock * size.racksPerSpine * size.hostsPerRack;
}

export interface HyperNodeShape {
  name: string;
  nodes: Node[];
  pods: BoundPod[];
  hyperNodes: HyperNode[];
  /** Leaf HyperNode of each host, by host name (what the tree must resolve). */
  leafOfHost: Map<string, string>;
  /** Tier-1 leaves by how they select their hosts. */
  leafMembers: { exact: number; regex: number; label: number };
}

export function hyperNodeShape(size: HyperNodeSize = HYPERNODE): HyperNodeShape {
  const rng = new Prng(size.seed);
  const racksPerBlock = size.spinesPerBlock * size.racksPerSpine;
  const bw = String(size.blocks - 1).length;
  const sw = String(size.spinesPerBlock - 1).length;
  const rw = String(racksPerBlock - 1).length;
  const hw = String(size.hostsPerRack - 1).length;
  const pad = (n: number, w: number) => String(n).padStart(w, '0');

  // Which leaves select by regex (the first tenth of a seeded shuffle) and by label (the next).
  const leafCount = size.blocks * racksPerBlock;
  const tenth = Math.floor(leafCount / 10);
  const kind = new Uint8Array(leafCount);
  const order = shuffledIndices(leafCount, rng);
  for (let i = 0; i < 2 * tenth; i++) kind[order[i]!] = i < tenth ? 1 : 2;

  const nodes: Node[] = [];
  const hyperNodes: HyperNode[] = [];
  const leafOfHost = new Map<string, string>();
  const leafMembers = { exact: 0, regex: 0, label: 0 };
  for (let b = 0; b < size.blocks; b++) {
    const block = pad(b, bw);
    const spines: string[] = [];
    for (let s = 0; s < size.spinesPerBlock; s++) {
      const leaves: string[] = [];
      for (let k = 0; k < size.racksPerSpine; k++) {
        const r = s * size.racksPerSpine + k;
        const rack = `${block}-${pad(r, rw)}`;
        const leaf = `t1-${rack}`;
        const hosts: string[] = [];
        for (let h = 0; h < size.hostsPerRack; h++) {
          const name = `gpu-${rack}-${pad(h, hw)}`;
          nodes.push(gpuHost(name, { [HN_RACK]: rack, [HN_POOL]: `pool-${block}` }));
          hosts.push(name);
          leafOfHost.set(name, leaf);
        }
        const hn = hyperNode(leaf).tier(1, 'leaf');
        switch (kind[b * racksPerBlock + r]) {
          case 1:
            hn.regex(`^gpu-${rack}-`);
            leafMembers.regex++;
            break;
          case 2:
            hn.labelMatch({ [HN_RACK]: rack });
            leafMembers.label++;
            break;
          default:
            hn.nodes(...hosts);
            leafMembers.exact++;
        }
        hyperNodes.push(hn.build());
        leaves.push(leaf);
      }
      const spine = `t2-${block}-${pad(s, sw)}`;
      hyperNodes.push(
        hyperNode(spine)
          .tier(2, 'spine')
          .hyperNodes(...leaves)
          .build(),
      );
      spines.push(spine);
    }
    hyperNodes.push(
      hyperNode(`t3-${block}`)
        .tier(3, 'block')
        .hyperNodes(...spines)
        .build(),
    );
  }
  hyperNodes.sort((a, b) => compareStrings(a.metadata.name, b.metadata.name));
  return { name: 'hypernodes', nodes, pods: halfBusy(nodes, rng), hyperNodes, leafOfHost, leafMembers };
}

/** The Nodes stripped to NodeInfos, as the watch loop keeps them (the tree's input). */
export function hyperNodeInfos(shape: HyperNodeShape): NodeInfo[] {
  const cache = new AllocatableCache();
  return shape.nodes.map((n) => nodeInfoFromNode(n, cache));
}

/** `new HyperNodeTree` over the HyperNodes and NodeInfos, timed. */
export function buildTreeTimed(shape: HyperNodeShape, infos: readonly NodeInfo[]): { tree: HyperNodeTree; ms: number } {
  const t0 = process.hrtime.bigint();
  const tree = new HyperNodeTree(shape.hyperNodes, infos);
  return { tree, ms: Number(process.hrtime.bigint() - t0) / 1e6 };
}

/**
 * A snapshot over the tree (every tier, then the hostname): NodeInfos added and the first
 * leaves() (level lists and ranks) timed as `nodesMs`; then the bound pods recorded.
 */
export function buildHyperNodeSnapshotTimed(
  shape: HyperNodeShape,
  tree: HyperNodeTree,
  infos: readonly NodeInfo[],
): { snapshot: TopologySnapshot; nodesMs: number } {
  const t0 = process.hrtime.bigint();
  const s = new TopologySnapshot(new HyperNodeTopologySource(shape.name, tree));
  for (const i of infos) s.upsertNode(i);
  s.leaves();
  const nodesMs = Number(process.hrtime.bigint() - t0) / 1e6;
  for (const p of shape.pods) s.addPod(p.key, p.nodeName, p.requests);
  return { snapshot: s, nodesMs };
}

/**
 * Checks that the tree put every host under its rack's leaf (exact, regex and label members
 * alike) with the leaf's spine and block above it. Returns what is wrong, if anything.
 */
export function checkTree(shape: HyperNodeShape, tree: HyperNodeTree): string | undefined {
  if (!tree.ready) return `tree not ready: ${tree.problems.map((p) => p.message).join('; ')}`;
  if (tree.problems.length > 0) return `tree has problems: ${tree.problems.map((p) => p.message).join('; ')}`;
  for (const [host, leaf] of shape.leafOfHost) {
    const got = tree.leafHyperNode(host);
    if (got !== leaf) return `host ${host} is under ${got ?? 'no HyperNode'}, want ${leaf}`;
    const chain = tree.ancestors(leaf);
    if (chain.length !== 3) return `leaf ${leaf} has ancestors [${chain.join(' ')}], want leaf, spine, block`;
  }
  return undefined;
}

/** A Volcano networkTopology on the snapshot's levels (the tree's tierNames resolve names). */
export function hyperNodeRequest(
  s: TopologySnapshot,
  tree: HyperNodeTree,
  pods: number,
  topology: NetworkTopologyRequest,
): PlacementRequest {
  const base: PlacementRequest = {
    podSetName: 'workers',
    count: pods,
    requests: WHOLE_HOST,
    mode: 'unconstrained',
    sliceLayers: [],
    tolerations: [GPU_TOLERATION],
  };
  const req = applyNetworkTopology(base, s.levels, topology, {}, (n) => tree.tierOfName(n));
  if (typeof req === 'string') throw new Error(`networkTopology ${JSON.stringify(topology)}: ${req}`);
  return req;
}
