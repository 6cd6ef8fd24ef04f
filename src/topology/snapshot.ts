// The topology snapshot: the domain tree of one Topology (or HyperNode tree) over the
// nodes of one TAS flavor, with free capacity per leaf, maintained incrementally.
//
// Layout: every domain has a dense index; per-domain data lives in typed arrays
// (level, parent, node count) and per-leaf capacity in flat Float64Arrays indexed
// `domain * R + resource`. Node and pod events change O(R) numbers; only a node
// joining or leaving marks the level lists and path ranks for a lazy rebuild.
// Strings are looked up once per event: node names and hostnames share one table of
// dense name ids (KeyIndex), pod keys another of pod slots; what hangs off a name or a
// slot (its node, its hostname leaf, its pods' usage) is in typed arrays by id.
//
// Which nodes enter (kueue-tas.md §2): Ready, not unschedulable, carrying every flavor
// node label and a value for every level. Others are not in the tree at all (they are
// not "excluded" and do not count in "Total nodes").

import { HOSTNAME_LABEL } from '../api/keys.ts';
import type { StringMap } from '../api/objects.ts';
import type { ResourceAmounts } from '../api/resources.ts';
import { compareStrings } from '../api/values.ts';
import { KeyIndex } from './key-index.ts';
import { ResourceIndex } from './resource-index.ts';
import type { NodeInfo, TopologySource } from './source.ts';

interface WorkloadUsageRec {
  /** One pod's requests, `pods: 1` included. */
  perPod: ResourceAmounts;
  /** Leaf ids (hostname, or comma-joined path) and pod counts. */
  domains: { leafId: string; count: number }[];
}

export interface SnapshotOptions {
  /** The flavor's `nodeLabels`: a node must carry each pair to enter the tree. */
  nodeLabels?: StringMap;
}

const INITIAL = 64;
/** Capacity changes the snapshot lists (capacityChangesSince); a power of two. */
export const CHANGE_LOG = 8192;

export class TopologySnapshot {
  readonly name: string;
  readonly levels: readonly string[];
  readonly hostnameLowest: boolean;
  readonly resources = new ResourceIndex();
  private readonly nodeLabels: StringMap;
  private readonly source: TopologySource;

  // Domains.
  private dCount = 0;
  private dCap = INITIAL;
  private dLevel = new Int32Array(INITIAL);
  private dParent = new Int32Array(INITIAL);
  private dNodes = new Int32Array(INITIAL);
  /** Level values of a domain, outermost first; a leaf's are made when first asked for
   *  (a leaf per node: keeping each node's path would be 80 bytes a node). */
  private readonly dValues: (string[] | undefined)[] = [];
  /** A domain's own value (its level's). */
  private readonly dOwn: string[] = [];
  private readonly dId: string[] = [];
  private readonly dChildren: number[][] = [];
  private readonly dChildByValue: (Map<string, number> | undefined)[] = [];
  private readonly roots = new Map<string, number>();
  /** A leaf's first node (-1 none); further nodes of the same leaf are in leafExtra. */
  private leafFirst = new Int32Array(INITIAL).fill(-1);
  private readonly leafExtra = new Map<number, number[]>();
  /** Resource indices and values of each allocatable list (shared between nodes of a shape). */
  private readonly allocIndex = new WeakMap<ResourceAmounts, { idx: number[]; val: number[] }>();
  /** The list applied last and its entry: a fleet's nodes come in runs of one shape. */
  private lastAlloc: ResourceAmounts | undefined;
  private lastAllocIndex: { idx: number[]; val: number[] } | undefined;
  /** The parent of the last leaf found or made by ensurePath (-1 none). */
  private lastParent = -1;
  /** Per level: domain id -> domain index (ids are unique per level only). A hostname
   *  level's leaves are found through the name table instead (nameLeaf). */
  private readonly idMaps: Map<string, number>[];

  // Per-leaf capacity, `domain * R + r`.
  private R = 1;
  private freeArr = new Float64Array(INITIAL);
  /** Per leaf: the capacity clock when its free capacity last changed (see capacityStamps). */
  private leafStampArr = new Float64Array(INITIAL);
  private capacityClock = 0;
  /** The leaf of each of the last CHANGE_LOG capacity changes: clock value c at `(c - 1) & (CHANGE_LOG - 1)`. */
  private readonly changeLog = new Int32Array(CHANGE_LOG);
  private tasArr = new Float64Array(INITIAL);

  // Names: node names, hostname values and pods' node names share one table of dense
  // ids, so a node event looks its name up once (not once per map keyed by it). A name
  // keeps its id for the snapshot's life, as a hostname keeps its leaf domain: a node
  // that returns finds its leaf and its pods' usage through the same id.
  private readonly nameIds = new KeyIndex();
  private nameCount = 0;
  private nameCap = INITIAL;
  /** Per name: the node (index into `node()`) of that name, or -1. */
  private nameNode = new Int32Array(INITIAL).fill(-1);
  /** Per name: the hostname leaf of that value, or -1 (hostname-lowest topologies only). */
  private nameLeaf = new Int32Array(INITIAL).fill(-1);
  /** Per name: usage of the non-TAS pods bound to the node of that name, `k * R + r`
   *  (`pods` included), kept whether or not the node is in the tree... */
  private usedArr = new Float64Array(INITIAL);
  /** ...and, while the node is not in the tree, of resources the snapshot has not named
   *  yet (interned, as before, only when the node joins). */
  private readonly usedExtra: (ResourceAmounts | undefined)[] = [];
  /** Per name: 1 once a pod was recorded on it. */
  private hasUsage = new Uint8Array(INITIAL);
  /** The name of the last pod event and its id: pods come in runs on one node. */
  private lastPodNode: string | undefined;
  private lastPodNodeId = -1;

  // Nodes: dense indices, a removed node's index reused by the next node added.
  private nodeSlots = 0;
  private nodeCap = INITIAL;
  private liveNodes = 0;
  private readonly nodeInfos: (NodeInfo | undefined)[] = [];
  /** Per node: its leaf, or -1 when it is not in the tree. */
  private nodeLeafArr = new Int32Array(INITIAL);
  /** Per node: its name's id. */
  private nodeNameArr = new Int32Array(INITIAL);
  private readonly freeSlots: number[] = [];

  // Non-TAS pods: key -> slot (KeyIndex: a removed pod's slot is reused by the next pod).
  private readonly podSlots = new KeyIndex();
  private podCap = INITIAL;
  /** Per slot: the name id of the pod's node. */
  private podTarget = new Int32Array(INITIAL);
  /** Per slot: how many pods the record stands for (one, or a group's count). */
  private podCountArr = new Float64Array(INITIAL);
  private readonly podAmounts: (ResourceAmounts | undefined)[] = [];
  private readonly workloadUsage = new Map<string, WorkloadUsageRec[]>();
  /** TAS usage of leaves not in the tree (node gone or NotReady), by leaf id; it is
   *  applied again when a node brings the leaf back. */
  private readonly tasParked = new Map<string, ResourceAmounts>();

  // Lazily rebuilt structure.
  private structureVersion = 0;
  private builtVersion = -1;
  private levelLists: number[][] = [];
  private rankArr = new Int32Array(INITIAL);
  /** Per domain: its live children's positions in the next level's list, [childLo, childHi). */
  private childLoArr = new Int32Array(INITIAL);
  private childHiArr = new Int32Array(INITIAL);
  private levelArrs: Int32Array[] = [];
  /** Bumped on every capacity change; consumers key caches on it. */
  usageVersion = 0;

  constructor(source: TopologySource, options: SnapshotOptions = {}) {
    this.source = source;
    this.name = source.name;
    this.levels = source.levels;
    this.hostnameLowest = source.levels[source.levels.length - 1] === HOSTNAME_LABEL;
    this.nodeLabels = options.nodeLabels ?? {};
    this.idMaps = source.levels.map(() => new Map());
  }

  // ---- structure accessors -------------------------------------------------------

  get domainCount(): number {
    return this.dCount;
  }
  get resourceCount(): number {
    return this.R;
  }
  get version(): number {
    return this.structureVersion;
  }
  level(d: number): number {
    return this.dLevel[d]!;
  }
  parent(d: number): number {
    return this.dParent[d]!;
  }
  children(d: number): readonly number[] {
    return this.dChildren[d]!;
  }
  values(d: number): readonly string[] {
    return this.dValues[d] ?? this.makeValues(d);
  }
  /** Domain ID: comma-joined path, or the hostname alone for hostname leaves. */
  id(d: number): string {
    return this.dId[d]!;
  }
  /** The leaf with this id (hostname, or comma-joined path), if it holds nodes. */
  leafById(id: string): number | undefined {
    return this.domainById(this.levels.length - 1, id);
  }
  /** The domain at `level` with this id, if it holds nodes. */
  domainById(level: number, id: string): number | undefined {
    let d: number | undefined;
    if (level === this.levels.length - 1 && this.hostnameLowest) {
      const k = this.nameIds.find(id);
      d = k < 0 ? -1 : this.nameLeaf[k]!;
    } else d = this.idMaps[level]?.get(id);
    return d !== undefined && d >= 0 && this.dNodes[d]! > 0 ? d : undefined;
  }
  /** Number of nodes of a leaf (one, unless the topology's lowest level is not the hostname). */
  leafNodeCount(d: number): number {
    return this.leafFirst[d]! < 0 ? 0 : 1 + (this.leafExtra.get(d)?.length ?? 0);
  }
  /** The first node (index into `node()`) of a leaf, or -1. */
  leafFirstNode(d: number): number {
    return this.leafFirst[d]!;
  }
  node(n: number): NodeInfo {
    return this.nodeInfos[n]!;
  }
  /** Nodes currently known (in the tree or not). */
  get nodeCount(): number {
    return this.liveNodes;
  }
  nodeIndex(name: string): number | undefined {
    const k = this.nameIds.find(name);
    const n = k < 0 ? -1 : this.nameNode[k]!;
    return n >= 0 ? n : undefined;
  }
  /** Leaf of a node, or -1 when the node is not in the tree. */
  nodeLeaf(name: string): number {
    const k = this.nameIds.find(name);
    const n = k < 0 ? -1 : this.nameNode[k]!;
    return n >= 0 ? this.nodeLeafArr[n]! : -1;
  }
  /**
   * Nodes that would be in the tree but for being NotReady or unschedulable (they carry the
   * flavor's labels and a value for every level), with their leaf paths: for explanations.
   */
  unreadyNodes(): { info: NodeInfo; path: string[] }[] {
    const out: { info: NodeInfo; path: string[] }[] = [];
    for (let n = 0; n < this.nodeSlots; n++) {
      const info = this.nodeInfos[n];
      if (!info || this.nodeLeafArr[n]! >= 0 || (info.ready && !info.unschedulable)) continue;
      const path = this.admit({ ...info, ready: true, unschedulable: false });
      if (path) out.push({ info, path });
    }
    return out;
  }
  /** Domains at a level that hold at least one node, sorted by level values. */
  domainsAt(level: number): readonly number[] {
    this.ensureStructure();
    return this.levelLists[level] ?? [];
  }
  leaves(): readonly number[] {
    return this.domainsAt(this.levels.length - 1);
  }
  /** Position of a domain among its level's domains sorted by level values. */
  rank(d: number): number {
    this.ensureStructure();
    return this.rankArr[d]!;
  }
  /** The rank array itself, for hot loops (valid until the next structural change). */
  ranks(): Int32Array {
    this.ensureStructure();
    return this.rankArr;
  }

  /**
   * The tree in level order for hot loops (valid until the next structural change):
   * `lists[l]` holds the live domains of level l sorted by level values, and the live
   * children of domain d are `lists[level(d) + 1][childLo[d] .. childHi[d] - 1]`, in the
   * same order (a depth-first walk lays every parent's children side by side).
   */
  tree(): { lists: readonly Int32Array[]; childLo: Int32Array; childHi: Int32Array } {
    this.ensureStructure();
    return { lists: this.levelArrs, childLo: this.childLoArr, childHi: this.childHiArr };
  }

  /** Remaining capacity of leaf `d` for resource index `r`. */
  free(d: number, r: number): number {
    return this.freeArr[d * this.R + r]!;
  }
  /** Capacity taken by admitted TAS workloads on leaf `d`. */
  tasUsage(d: number, r: number): number {
    return this.tasArr[d * this.R + r]!;
  }
  /**
   * Which leaves' free capacity changed since a moment: `stamps[leaf] > clock` (the
   * clock read back then) when it did. Consumers that cache per-leaf results (the
   * placement engine's count pass) recompute only those leaves, as long as the structure
   * (`version`) is the same.
   */
  capacityStamps(): { stamps: Float64Array; clock: number } {
    return { stamps: this.leafStampArr, clock: this.capacityClock };
  }

  /**
   * The same changes as a list, for consumers that would otherwise scan every leaf for a
   * handful of stamps: the leaves whose capacity changed since `clock` (a value read from
   * `capacityStamps`), each once, written to `out` from index 0; returns how many, or -1
   * when more changes were made since than the log keeps (scan the stamps instead).
   */
  capacityChangesSince(clock: number, out: Int32Array): number {
    const now = this.capacityClock;
    if (now - clock > CHANGE_LOG || now - clock > out.length) return -1;
    const log = this.changeLog;
    const stamps = this.leafStampArr;
    let n = 0;
    // Clock value c touched log[(c - 1) & mask]; a leaf touched again later is listed at its last touch only.
    for (let c = clock + 1; c <= now; c++) {
      const leaf = log[(c - 1) & (CHANGE_LOG - 1)]!;
      if (stamps[leaf] === c) out[n++] = leaf;
    }
    return n;
  }

  private touch(leaf: number): void {
    const c = ++this.capacityClock;
    this.leafStampArr[leaf] = c;
    this.changeLog[(c - 1) & (CHANGE_LOG - 1)] = leaf;
  }

  /** Flat arrays for hot loops: `[free, tas]`, both `domain * R + r`. */
  capacityArrays(): { free: Float64Array; tas: Float64Array; R: number } {
    return { free: this.freeArr, tas: this.tasArr, R: this.R };
  }

  /** The id of a resource already named (by a node or a request), without interning it. */
  knownResourceIndex(name: string): number | undefined {
    return this.resources.get(name);
  }

  /** Interns a resource name, growing the capacity arrays when it is new. */
  resourceIndex(name: string): number {
    const before = this.resources.size;
    const r = this.resources.intern(name);
    if (this.resources.size !== before) this.growResources();
    return r;
  }

  // ---- node events ----------------------------------------------------------------

  /** Nodes whose leaf, labels or taints changed bump this (eligibility caches key on it). */
  attributeVersion = 0;

  /**
   * Adds a node, or updates it. An update that keeps the node's place in the tree (the
   * common case: a status heartbeat, allocatable or taint change) is applied in place and
   * does not mark the structure for a rebuild.
   */
  upsertNode(info: NodeInfo): void {
    const names = this.nameIds.size;
    const k = this.nameId(info.name);
    let path: string[] | undefined;
    if (this.nameIds.size !== names) {
      path = this.admit(info);
    } else {
      path = this.admit(info);
      const existing = this.nameNode[k]!;
      if (existing >= 0) {
        const leaf = this.nodeLeafArr[existing]!;
        if (path && leaf >= 0 && this.samePlace(leaf, path)) {
          this.updateInPlace(existing, leaf, info);
          return;
        }
        this.removeNodeAt(existing);
      }
    }
    const n = this.freeSlots.pop() ?? this.newNodeSlot();
    this.nodeInfos[n] = info;
    this.nodeNameArr[n] = k;
    this.nodeLeafArr[n] = -1;
    this.nameNode[k] = n;
    this.liveNodes++;
    if (!path) return;
    const leaf = this.ensurePath(path, info.name, k);
    this.nodeLeafArr[n] = leaf;
    this.addLeafNode(leaf, n);
    for (let d = leaf; d >= 0; d = this.dParent[d]!) this.dNodes[d]!++;
    this.applyAllocatable(leaf, info.allocatable, 1);
    if (this.hasUsage[k]) this.applyUsage(leaf, k, -1);
    if (this.dNodes[leaf] === 1) {
      const parked = this.tasParked.get(this.dId[leaf]!);
      if (parked) {
        this.tasParked.delete(this.dId[leaf]!);
        this.applyAmounts(leaf, parked, -1, true);
      }
    }
    this.structureVersion++;
    this.attributeVersion++;
    this.usageVersion++;
  }

  removeNode(name: string): void {
    const k = this.nameIds.find(name);
    const n = k < 0 ? -1 : this.nameNode[k]!;
    if (n >= 0) this.removeNodeAt(n);
  }

  private removeNodeAt(n: number): void {
    const info = this.nodeInfos[n]!;
    const k = this.nodeNameArr[n]!;
    const leaf = this.nodeLeafArr[n]!;
    this.nameNode[k] = -1;
    this.nodeInfos[n] = undefined;
    this.nodeLeafArr[n] = -1;
    this.freeSlots.push(n);
    this.liveNodes--;
    if (leaf < 0) return;
    this.applyAllocatable(leaf, info.allocatable, -1);
    if (this.hasUsage[k]) this.applyUsage(leaf, k, 1);
    this.removeLeafNode(leaf, n);
    for (let d = leaf; d >= 0; d = this.dParent[d]!) this.dNodes[d]!--;
    // A hostname shared by two nodes: the leaf follows the node that remains.
    if (this.hostnameLowest && this.leafFirst[leaf]! >= 0) {
      const m = this.leafFirst[leaf]!;
      const path = this.source.leafPath(this.nodeInfos[m]!);
      if (path && !this.samePlace(leaf, path)) this.ensurePath(path, this.nodeInfos[m]!.name, this.nodeNameArr[m]!);
    }
    if (this.dNodes[leaf] === 0) {
      // An empty leaf keeps no capacity; its TAS usage is parked until a node returns.
      const base = leaf * this.R;
      this.touch(leaf);
      const parked: ResourceAmounts = {};
      let any = false;
      for (let r = 0; r < this.R; r++) {
        const v = this.tasArr[base + r]!;
        if (v !== 0) {
          parked[this.resources.names[r]!] = v;
          any = true;
        }
        this.freeArr[base + r] = 0;
        this.tasArr[base + r] = 0;
      }
      if (any) this.tasParked.set(this.dId[leaf]!, parked);
    }
    this.structureVersion++;
    this.attributeVersion++;
    this.usageVersion++;
  }

  /** The id of a name, interned when new. */
  private nameId(name: string): number {
    const k = this.nameIds.intern(name);
    if (k === this.nameCount) this.newName();
    return k;
  }

  /** Room for name id `nameCount` (names are never deleted, so ids come in order). */
  private newName(): void {
    if (this.nameCount === this.nameCap) {
      const cap = this.nameCap * 2;
      this.nameNode = growFilled(this.nameNode, cap);
      this.nameLeaf = growFilled(this.nameLeaf, cap);
      const u = new Float64Array(cap * this.R);
      u.set(this.usedArr);
      this.usedArr = u;
      const h = new Uint8Array(cap);
      h.set(this.hasUsage);
      this.hasUsage = h;
      this.nameCap = cap;
    }
    this.nameCount++;
  }

  private newNodeSlot(): number {
    if (this.nodeSlots === this.nodeCap) {
      const cap = this.nodeCap * 2;
      this.nodeLeafArr = grow(this.nodeLeafArr, cap);
      this.nodeNameArr = grow(this.nodeNameArr, cap);
      this.nodeCap = cap;
    }
    return this.nodeSlots++;
  }

  /** Whether the leaf's values are `path`: its own value and its ancestors'. */
  private samePlace(leaf: number, path: readonly string[]): boolean {
    let d = leaf;
    for (let l = path.length - 1; l >= 0; l--, d = this.dParent[d]!) if (this.dOwn[d] !== path[l]) return false;
    return true;
  }

  private makeValues(d: number): string[] {
    const values = new Array<string>(this.dLevel[d]! + 1);
    for (let a = d, l = values.length - 1; l >= 0; l--, a = this.dParent[a]!) values[l] = this.dOwn[a]!;
    this.dValues[d] = values;
    return values;
  }

  private addLeafNode(leaf: number, n: number): void {
    if (this.leafFirst[leaf]! < 0) {
      this.leafFirst[leaf] = n;
      return;
    }
    const extra = this.leafExtra.get(leaf);
    if (extra) extra.push(n);
    else this.leafExtra.set(leaf, [n]);
  }

  private removeLeafNode(leaf: number, n: number): void {
    const extra = this.leafExtra.get(leaf);
    if (this.leafFirst[leaf] === n) {
      this.leafFirst[leaf] = extra && extra.length > 0 ? extra.shift()! : -1;
    } else if (extra) {
      extra.splice(extra.indexOf(n), 1);
    }
    if (extra && extra.length === 0) this.leafExtra.delete(leaf);
  }

  /** free += sign * allocatable, with the list's resource indices cached per list. */
  private applyAllocatable(leaf: number, alloc: ResourceAmounts, sign: 1 | -1): void {
    let e = alloc === this.lastAlloc ? this.lastAllocIndex : this.allocIndex.get(alloc);
    if (!e) {
      const names = Object.keys(alloc);
      e = { idx: names.map((k) => this.resourceIndex(k)), val: names.map((k) => alloc[k]!) };
      this.allocIndex.set(alloc, e);
    }
    this.lastAlloc = alloc;
    this.lastAllocIndex = e;
    const base = leaf * this.R;
    this.touch(leaf);
    for (let i = 0; i < e.idx.length; i++) this.freeArr[base + e.idx[i]!]! += sign * e.val[i]!;
  }

  private updateInPlace(n: number, leaf: number, info: NodeInfo): void {
    const old = this.nodeInfos[n]!;
    this.applyAllocatable(leaf, old.allocatable, -1);
    this.applyAllocatable(leaf, info.allocatable, 1);
    if (!sameMap(old.labels, info.labels) || JSON.stringify(old.taints) !== JSON.stringify(info.taints)) this.attributeVersion++;
    this.nodeInfos[n] = info;
    this.usageVersion++;
  }

  // ---- usage events ---------------------------------------------------------------

  /** Usage of a non-TAS pod bound to `nodeName`, plus one `pods` (or `pods` of them when
   *  the record stands for several pods, e.g. another flavor's assignment on the node). */
  addPod(key: string, nodeName: string, requests: ResourceAmounts, pods = 1): void {
    const before = this.podSlots.size;
    const slot = this.podSlots.intern(key);
    // A pod recorded again replaces its record: the old one is taken back first.
    if (this.podSlots.size === before) this.applyPod(this.podTarget[slot]!, this.podAmounts[slot]!, -1, this.podCountArr[slot]!);
    else if (slot >= this.podCap) this.growPodSlots();
    let k: number;
    if (nodeName === this.lastPodNode) k = this.lastPodNodeId;
    else {
      k = this.nameId(nodeName);
      this.lastPodNode = nodeName;
      this.lastPodNodeId = k;
    }
    this.podTarget[slot] = k;
    this.podCountArr[slot] = pods;
    this.podAmounts[slot] = requests;
    this.applyPod(k, requests, 1, pods);
  }

  removePod(key: string): void {
    const slot = this.podSlots.delete(key);
    if (slot < 0) return;
    const amounts = this.podAmounts[slot]!;
    this.podAmounts[slot] = undefined;
    this.applyPod(this.podTarget[slot]!, amounts, -1, this.podCountArr[slot]!);
  }

  private growPodSlots(): void {
    const cap = this.podCap * 2;
    this.podTarget = grow(this.podTarget, cap);
    const c = new Float64Array(cap);
    c.set(this.podCountArr);
    this.podCountArr = c;
    this.podCap = cap;
  }

  /** A non-TAS pod's requests plus its one `pods`, on its node's usage record and leaf. */
  private applyPod(k: number, requests: ResourceAmounts, sign: 1 | -1, pods: number): void {
    this.hasUsage[k] = 1;
    const n = this.nameNode[k]!;
    const leaf = n >= 0 ? this.nodeLeafArr[n]! : -1;
    if (leaf >= 0) this.touch(leaf);
    // Each amount is read once (a double read by name is boxed on every read).
    for (const name in requests) {
      const v = requests[name]!;
      const r = leaf >= 0 ? this.resourceIndex(name) : this.resources.get(name);
      if (r === undefined) {
        let extra = this.usedExtra[k];
        if (extra === undefined) {
          extra = {};
          this.usedExtra[k] = extra;
        }
        extra[name] = (extra[name] ?? 0) + sign * v;
        continue;
      }
      this.usedArr[k * this.R + r]! += sign * v;
      if (leaf >= 0) this.freeArr[leaf * this.R + r]! -= sign * v;
    }
    this.usedArr[k * this.R]! += sign * pods; // `pods` is resource 0
    if (leaf >= 0) this.freeArr[leaf * this.R]! -= sign * pods;
    this.usageVersion++;
  }

  /** free += sign * the usage of name `k`'s pods, on its node's leaf. Resources first
   *  named by those pods are interned now, in the order the pods named them. */
  private applyUsage(leaf: number, k: number, sign: 1 | -1): void {
    this.touch(leaf);
    const extra = this.usedExtra[k];
    if (extra !== undefined) {
      this.usedExtra[k] = undefined;
      for (const name in extra) {
        const r = this.resourceIndex(name);
        this.usedArr[k * this.R + r]! += extra[name]!;
      }
    }
    const R = this.R;
    for (let r = 0; r < R; r++) {
      const v = this.usedArr[k * R + r]!;
      if (v !== 0) this.freeArr[leaf * R + r]! += sign * v;
    }
  }

  /**
   * TAS usage of an admitted PodSet: `count` pods of `perPod` in each domain. Domains are
   * leaf ids (hostname for hostname-lowest topologies, else the comma-joined path).
   * Usage for a domain not in the tree is kept and applies if its node arrives.
   */
  addWorkloadUsage(key: string, domains: readonly { leafId: string; count: number }[], perPod: ResourceAmounts): void {
    let recs = this.workloadUsage.get(key);
    if (!recs) {
      recs = [];
      this.workloadUsage.set(key, recs);
    }
    const rec: WorkloadUsageRec = { perPod: withPod(perPod, 1), domains: domains.map((d) => ({ ...d })) };
    recs.push(rec);
    this.applyWorkloadUsage(rec, 1);
    this.usageVersion++;
  }

  removeWorkloadUsage(key: string): void {
    const recs = this.workloadUsage.get(key);
    if (!recs) return;
    this.workloadUsage.delete(key);
    for (const rec of recs) this.applyWorkloadUsage(rec, -1);
    this.usageVersion++;
  }

  /** Adds (sign 1) or takes back (sign -1) a PodSet's usage, O(domains x resources). */
  private applyWorkloadUsage(rec: WorkloadUsageRec, sign: 1 | -1): void {
    const names = Object.keys(rec.perPod);
    const idx = names.map((n) => this.resourceIndex(n));
    const vals = names.map((n) => rec.perPod[n]!);
    const R = this.R;
    for (const { leafId, count } of rec.domains) {
      const d = this.leafById(leafId);
      if (d === undefined) {
        this.park(leafId, names, vals, sign * count);
        continue;
      }
      const base = d * R;
      this.touch(d);
      for (let i = 0; i < idx.length; i++) {
        const v = sign * vals[i]! * count;
        this.freeArr[base + idx[i]!]! -= v;
        this.tasArr[base + idx[i]!]! += v;
      }
    }
  }

  private park(leafId: string, names: string[], vals: number[], times: number): void {
    const acc = this.tasParked.get(leafId) ?? {};
    let any = false;
    for (let i = 0; i < names.length; i++) {
      const v = (acc[names[i]!] ?? 0) + vals[i]! * times;
      acc[names[i]!] = v;
      if (v !== 0) any = true;
    }
    if (any) this.tasParked.set(leafId, acc);
    else this.tasParked.delete(leafId);
  }

  hasWorkloadUsage(key: string): boolean {
    return this.workloadUsage.has(key);
  }

  /** Leaf id for an assignment domain's values: the hostname alone for hostname-lowest
   *  topologies (assignments carry only that level), else the comma-joined path. */
  leafIdOf(values: readonly string[]): string {
    return this.hostnameLowest ? values[values.length - 1]! : values.join(',');
  }

  // ---- internals --------------------------------------------------------------------

  private admit(info: NodeInfo): string[] | undefined {
    if (!info.ready || info.unschedulable) return undefined;
    for (const k in this.nodeLabels) if (info.labels[k] !== this.nodeLabels[k]) return undefined;
    return this.source.leafPath(info);
  }

  /** free -= sign * amounts (sign -1 subtracts usage); `tas` also tracks the TAS share. */
  private applyAmounts(leaf: number, amounts: ResourceAmounts, sign: 1 | -1, tas: boolean): void {
    this.touch(leaf);
    for (const name in amounts) {
      const r = this.resourceIndex(name);
      const i = leaf * this.R + r;
      this.freeArr[i]! += sign * amounts[name]!;
      if (tas) this.tasArr[i]! -= sign * amounts[name]!;
    }
  }

  /**
   * The leaf for a node's path, creating domains on the way. Inner levels are found
   * through each parent's value -> child map (no id strings built per node); a
   * hostname leaf is found by hostname alone, through the name table (`name` and its id
   * `k` spare the look-up when the hostname is the node's name), and re-parented when
   * its node moved.
   */
  private ensurePath(path: string[], name: string, k: number): number {
    let parent = -1;
    const L = path.length;
    let l = 0;
    // Nodes come in runs of one rack: the last node's parent is tried first.
    const last = this.lastParent;
    if (last >= 0 && this.dLevel[last] === L - 2 && this.chainIs(last, path)) {
      parent = last;
      l = L - 1;
    }
    for (; l < L; l++) {
      const v = path[l]!;
      if (l === L - 1 && this.hostnameLowest) {
        const h = v === name ? k : this.nameId(v);
        let d = this.nameLeaf[h]!;
        if (d >= 0) {
          if (this.dParent[d] !== parent) this.reparent(d, parent, path);
        } else {
          d = this.newDomain(l, parent, v, v);
          this.nameLeaf[h] = d;
        }
        return d;
      }
      let d = (parent < 0 ? this.roots : this.dChildByValue[parent])?.get(v);
      if (d === undefined) d = this.newDomain(l, parent, v, path.slice(0, l + 1).join(','));
      parent = d;
      if (l === L - 2) this.lastParent = d;
    }
    return parent;
  }

  /** Whether `d`'s own value and its ancestors' are the first values of `path`. Inner
   *  domains never move, so this is the domain a walk from the roots would find. */
  private chainIs(d: number, path: readonly string[]): boolean {
    for (let l = this.dLevel[d]!; l >= 0; l--, d = this.dParent[d]!) if (this.dOwn[d] !== path[l]) return false;
    return true;
  }

  /**
   * A hostname leaf whose node moved to another rack (or whose hostname a new node in
   * another rack reuses). The leaf moves with the node counts it holds, so the ancestors'
   * counts stay equal to those of a tree built afresh.
   */
  private reparent(d: number, parent: number, path: string[]): void {
    const held = this.dNodes[d]!;
    const oldParent = this.dParent[d]!;
    for (let a = oldParent; a >= 0; a = this.dParent[a]!) this.dNodes[a]! -= held;
    if (oldParent >= 0) {
      const siblings = this.dChildren[oldParent]!;
      siblings.splice(siblings.indexOf(d), 1);
    }
    this.dParent[d] = parent;
    this.dValues[d] = path;
    if (parent >= 0) this.dChildren[parent]!.push(d);
    for (let a = parent; a >= 0; a = this.dParent[a]!) this.dNodes[a]! += held;
    this.structureVersion++;
  }

  /** A domain with its own value `value` under `parent`; an inner domain's values are
   *  made now (a leaf's when asked for). */
  private newDomain(level: number, parent: number, value: string, id: string): number {
    if (this.dCount === this.dCap) this.growDomains();
    const d = this.dCount++;
    const leaf = level === this.levels.length - 1;
    this.dLevel[d] = level;
    this.dParent[d] = parent;
    this.dNodes[d] = 0;
    this.dOwn[d] = value;
    this.dValues[d] = undefined;
    this.dId[d] = id;
    this.dChildren[d] = leaf ? NO_CHILDREN : [];
    // Made when a child is keyed by value (never for the parents of hostname leaves).
    this.dChildByValue[d] = undefined;
    this.leafFirst[d] = -1;
    if (!(leaf && this.hostnameLowest)) this.idMaps[level]!.set(id, d);
    if (parent >= 0) {
      this.dChildren[parent]!.push(d);
      if (!(leaf && this.hostnameLowest)) {
        let byValue = this.dChildByValue[parent];
        if (byValue === undefined) {
          byValue = new Map();
          this.dChildByValue[parent] = byValue;
        }
        byValue.set(value, d);
      }
    } else {
      this.roots.set(value, d);
    }
    if (!leaf) this.makeValues(d);
    return d;
  }

  private growDomains(): void {
    const cap = this.dCap * 2;
    this.dLevel = grow(this.dLevel, cap);
    this.dParent = grow(this.dParent, cap);
    this.dNodes = grow(this.dNodes, cap);
    this.rankArr = grow(this.rankArr, cap);
    this.childLoArr = grow(this.childLoArr, cap);
    this.childHiArr = grow(this.childHiArr, cap);
    const st = new Float64Array(cap);
    st.set(this.leafStampArr);
    this.leafStampArr = st;
    const lf = new Int32Array(cap).fill(-1);
    lf.set(this.leafFirst);
    this.leafFirst = lf;
    const f = new Float64Array(cap * this.R);
    f.set(this.freeArr);
    this.freeArr = f;
    const t = new Float64Array(cap * this.R);
    t.set(this.tasArr);
    this.tasArr = t;
    this.dCap = cap;
  }

  private growResources(): void {
    const oldR = this.R;
    const R = this.resources.size;
    const f = new Float64Array(this.dCap * R);
    const t = new Float64Array(this.dCap * R);
    for (let d = 0; d < this.dCount; d++) {
      for (let r = 0; r < oldR; r++) {
        f[d * R + r] = this.freeArr[d * oldR + r]!;
        t[d * R + r] = this.tasArr[d * oldR + r]!;
      }
    }
    const u = new Float64Array(this.nameCap * R);
    for (let k = 0; k < this.nameCount; k++) for (let r = 0; r < oldR; r++) u[k * R + r] = this.usedArr[k * oldR + r]!;
    this.freeArr = f;
    this.tasArr = t;
    this.usedArr = u;
    this.R = R;
  }

  /**
   * Rebuilds the per-level lists in level-value order and each domain's rank in its level.
   * A depth-first walk over children sorted by their own value gives the same order as
   * sorting whole paths, but sorts only short sibling lists.
   */
  private ensureStructure(): void {
    if (this.builtVersion === this.structureVersion) return;
    const lists: number[][] = Array.from({ length: this.levels.length }, () => []);
    this.visit([...this.roots.values()], lists);
    this.levelLists = lists;
    this.levelArrs = lists.map((l) => new Int32Array(l));
    this.builtVersion = this.structureVersion;
  }

  /** Appends the live `domains` in value order to their level's list, each followed by its subtree. */
  private visit(domains: readonly number[], lists: number[][]): void {
    const order = this.liveSorted(domains);
    const L = lists.length;
    for (let i = 0; i < order.length; i++) {
      const d = order[i]!;
      const level = this.dLevel[d]!;
      const list = lists[level]!;
      this.rankArr[d] = list.length;
      list.push(d);
      if (level + 1 < L) {
        const below = lists[level + 1]!;
        this.childLoArr[d] = below.length;
        const kids = this.dChildren[d]!;
        if (kids.length > 0) this.visit(kids, lists);
        this.childHiArr[d] = below.length;
      } else {
        this.childLoArr[d] = 0;
        this.childHiArr[d] = 0;
      }
    }
  }

  /** The live domains of a sibling list by own value: the list itself when it already is
   *  (nodes usually arrive in name order), else a sorted copy. */
  private liveSorted(domains: readonly number[]): readonly number[] {
    const own = this.dOwn;
    let ok = true;
    for (let i = 0; i < domains.length && ok; i++) {
      const d = domains[i]!;
      ok = this.dNodes[d]! > 0 && (i === 0 || compareStrings(own[domains[i - 1]!]!, own[d]!) < 0);
    }
    if (ok) return domains;
    return domains.filter((d) => this.dNodes[d]! > 0).sort((a, b) => compareStrings(own[a]!, own[b]!));
  }
}

/** Shared by every leaf: leaves have no children. */
const NO_CHILDREN: number[] = [];

/** Element-wise byte comparison of level-value paths (`x10` < `x2`). */
export function compareValues(a: readonly string[], b: readonly string[]): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const c = compareStrings(a[i]!, b[i]!);
    if (c !== 0) return c;
  }
  return a.length - b.length;
}

function sameMap(a: StringMap, b: StringMap): boolean {
  if (a === b) return true;
  let n = 0;
  for (const k in a) {
    if (a[k] !== b[k]) return false;
    n++;
  }
  return n === Object.keys(b).length;
}

function grow<T extends Int32Array>(a: T, cap: number): T {
  const b = new Int32Array(cap);
  b.set(a);
  return b as T;
}

/** `grow`, the new entries -1. */
function growFilled<T extends Int32Array>(a: T, cap: number): T {
  const b = new Int32Array(cap).fill(-1, a.length);
  b.set(a);
  return b as T;
}

function withPod(requests: ResourceAmounts, pods: number): ResourceAmounts {
  return { ...requests, pods: (requests.pods ?? 0) + pods };
}
