// Where a topology comes from. A source names the levels (outermost first) and says
// where each node sits in the tree; label-level Topologies and HyperNode trees are two
// implementations of this one interface, and the snapshot and placement engine never
// know which they have.

import { HOSTNAME_LABEL } from '../api/keys.ts';
import type { Node, StringMap, Taint, Topology } from '../api/objects.ts';
import { parseResourceList, type ResourceAmounts } from '../api/resources.ts';

/** A Node stripped to what scheduling needs (a whole Node object is ~16 KiB). */
export interface NodeInfo {
  name: string;
  labels: StringMap;
  taints: Taint[];
  allocatable: ResourceAmounts;
  ready: boolean;
  unschedulable: boolean;
}

export interface TopologySource {
  /** The Topology's name, quoted in failure messages. */
  readonly name: string;
  /** Level keys, outermost first. */
  readonly levels: readonly string[];
  /** The node's values per level, or undefined when it has no place in the tree. */
  leafPath(node: NodeInfo): string[] | undefined;
}

/** Kueue's Topology: levels are node label keys; a node missing any of them is left out. */
export class LabelTopologySource implements TopologySource {
  readonly name: string;
  readonly levels: readonly string[];

  constructor(name: string, levels: readonly string[]) {
    this.name = name;
    this.levels = levels;
  }

  static fromTopology(t: Topology): LabelTopologySource {
    return new LabelTopologySource(
      t.metadata.name,
      t.spec.levels.map((l) => l.nodeLabel),
    );
  }

  leafPath(node: NodeInfo): string[] | undefined {
    // Sized up front: a leaf keeps its path, and a list grown by push reserves 17 slots.
    const L = this.levels.length;
    const path = new Array<string>(L);
    for (let l = 0; l < L; l++) {
      const v = node.labels[this.levels[l]!];
      if (v === undefined) return undefined;
      path[l] = v;
    }
    return path;
  }
}

/**
 * Parsed allocatable lists, shared between nodes that report the same one (a fleet has a
 * handful of node shapes; parsing quantities exactly is the costly part of ingest).
 */
export class AllocatableCache {
  private readonly byText = new Map<string, ResourceAmounts>();
  /** The list parsed last and its amounts: a fleet's nodes come in runs of one shape. */
  private lastList: Record<string, string> | undefined;
  private lastNames: string[] = [];
  private lastAmounts: ResourceAmounts = {};

  parse(list: Record<string, string> | undefined): ResourceAmounts {
    if (!list) return {};
    if (this.lastList !== undefined && sameList(list, this.lastList, this.lastNames)) return this.lastAmounts;
    const amounts = this.lookUp(list);
    // A copy: the caller may change its list afterwards.
    this.lastList = { ...list };
    this.lastNames = Object.keys(list);
    this.lastAmounts = amounts;
    return amounts;
  }

  private lookUp(list: Record<string, string>): ResourceAmounts {
    let key = '';
    for (const k in list) key += `${k}=${list[k]};`;
    let amounts = this.byText.get(key);
    if (!amounts) {
      amounts = parseResourceList(list, 'status.allocatable');
      if (this.byText.size >= 4096) this.byText.clear();
      this.byText.set(key, amounts);
    }
    return amounts;
  }
}

/** The same names (`names`: b's, in order) with the same quantity texts, in the same order. */
function sameList(a: Record<string, string>, b: Record<string, string>, names: readonly string[]): boolean {
  let i = 0;
  for (const k in a) {
    if (k !== names[i] || a[k] !== b[k]) return false;
    i++;
  }
  return i === names.length;
}

/** Strips a Node to a NodeInfo. Throws an InputError naming the field on a bad quantity. */
export function nodeInfoFromNode(node: Node, cache?: AllocatableCache): NodeInfo {
  let ready = false;
  for (const c of node.status?.conditions ?? [])
    if (c.type === 'Ready' && c.status === 'True') {
      ready = true;
      break;
    }
  return {
    name: node.metadata.name,
    labels: node.metadata.labels ?? {},
    taints: node.spec?.taints ?? [],
    allocatable: cache ? cache.parse(node.status?.allocatable) : parseResourceList(node.status?.allocatable, 'status.allocatable'),
    ready,
    unschedulable: node.spec?.unschedulable === true,
  };
}

export { HOSTNAME_LABEL };
