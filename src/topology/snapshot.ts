// The topology snapshot: the domain tree of one Topology (or HyperNode tree) over the
// nodes of one TAS flavor, with free capacity per leaf, maintained incrementally.
//
// Layout: every domain has a dense index; per-domain data lives in typed arrays
// (level, parent, node count) and per-leaf capacity in flat Float64Arrays indexed
// `domain * R + resource`. Node and pod events change O(R) numbers; only a node
// joining or leaving marks the level lists and path ranks for a lazy rebuild.
//
// Which nodes enter (kueue-tas.md §2): Ready, not unschedulable, carrying every flavor
// node label and a value for every level. Others are not in the tree at all (they are
// not "excluded" and do not count in "Total nodes").

import { HOSTNAME_LABEL } from '../api/keys.ts';
import type { StringMap } from '../api/objects.ts';
import type { ResourceAmounts } from '../api/resources.ts';
import { compareStrings } from '../api/values.ts';
import { ResourceIndex } from './resource-index.ts';
import type { NodeInfo, TopologySource } from './source.ts';

interface NodeRec {
  info: NodeInfo;
  /** Leaf domain index, or -1 when the node is not in the tree. */
  leaf: number;
  alloc: ResourceAmounts;
}

interface UsageRec {
  /** Node name of a non-TAS pod. */
  target: string;
  amounts: ResourceAmounts;
  /** How many pods the record stands for (one, or a group's count). */
  pods: number;
}

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
  private readonly dValues: string[][] = [];
  private readonly dId: string[] = [];
  private readonly dChildren: number[][] = [];
  private readonly dChildByValue: (Map<string, number> | undefined)[] = [];
  private readonly roots = new Map<string, number>();
  /** A leaf's first node (-1 none); further nodes of the same leaf are in leafExtra. */
  private leafFirst = new Int32Array(INITIAL).fill(-1);
  private readonly leafExtra = new Map<number, number[]>();
  /** Resource indices and values of each allocatable list (shared between nodes of a shape). */
  private readonly allocIndex = new WeakMap<ResourceAmounts, { idx: number[]; val: number[] }>();
  /** Per level: domain id -> domain index (ids are unique per level only). */
  private readonly idMaps: Map<string, number>[];

  // Per-leaf capacity, `domain * R + r`.
  private R = 1;
  private freeArr = new Float64Array(INITIAL);
  /** Per leaf: the capacity clock when its free capacity last changed (see capacityStamps). */
  private leafStampArr = new Float64Array(INITIAL);
  private capacityClock = 0;
  private tasArr = new Float64Array(INITIAL);

  // Nodes and usage records.
  private readonly nodes: (NodeRec | undefined)[] = [];
  private readonly freeSlots: number[] = [];
  private readonly nodeByName = new Map<string, number>();
  private readonly podUsage = new Map<string, UsageRec>();
  private readonly nodeUsage = new Map<string, ResourceAmounts>();
  /** The node of the last pod event (see applyPod); its usage record is never replaced. */
  private podNodeMemo: { name: string; version: number; acc: ResourceAmounts; leaf: number } | undefined;
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
    return this.dValues[d]!;
  }
  /** Domain ID: comma-joined path, or the hostname alone for hostname leaves. */
  id(d: number): string {
    return this.dId[d]!;
  }
  /** The leaf with this id (hostname, or comma-joined path), if it holds nodes. */
  leafById(id: string): number | undefined {
    const d = this.idMaps[this.levels.length - 1]!.get(id);
    return d !== undefined && this.dNodes[d]! > 0 ? d : undefined;
  }
  /** The domain at `level` with this id, if it holds nodes. */
  domainById(level: number, id: string): number | undefined {
    const d = this.idMaps[level]?.get(id);
    return d !== undefined && this.dNodes[d]! > 0 ? d : undefined;
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
    return this.nodes[n]!.info;
  }
  /** Nodes currently known (in the tree or not). */
  get nodeCount(): number {
    return this.nodeByName.size;
  }
  nodeIndex(name: string): number | undefined {
    return this.nodeByName.get(name);
  }
  /** Leaf of a node, or -1 when the node is not in the tree. */
  nodeLeaf(name: string): number {
    const n = this.nodeByName.get(name);
    return n === undefined ? -1 : this.nodes[n]!.leaf;
  }
  /**
   * Nodes that would be in the tree but for being NotReady or unschedulable (they carry the
   * flavor's labels and a value for every level), with their leaf paths: for explanations.
   */
  unreadyNodes(): { info: NodeInfo; path: string[] }[] {
    const out: { info: NodeInfo; path: string[] }[] = [];
    for (const rec of this.nodes) {
      if (!rec || rec.leaf >= 0 || (rec.info.ready && !rec.info.unschedulable)) continue;
      const path = this.admit({ ...rec.info, ready: true, unschedulable: false });
      if (path) out.push({ info: rec.info, path });
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

  private touch(leaf: number): void {
    this.leafStampArr[leaf] = ++this.capacityClock;
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
    const existing = this.nodeByName.get(info.name);
    if (existing !== undefined) {
      const rec = this.nodes[existing]!;
      const path = this.admit(info);
      if (path && rec.leaf >= 0 && this.samePlace(rec.leaf, path)) {
        this.updateInPlace(rec, info);
        return;
      }
      this.removeNode(info.name);
    }
    const rec: NodeRec = { info, leaf: -1, alloc: info.allocatable };
    const n = this.freeSlots.pop() ?? this.nodes.length;
    this.nodes[n] = rec;
    this.nodeByName.set(info.name, n);
    const path = this.admit(info);
    if (!path) return;
    const leaf = this.ensurePath(path);
    rec.leaf = leaf;
    this.addLeafNode(leaf, n);
    for (let d = leaf; d >= 0; d = this.dParent[d]!) this.dNodes[d]!++;
    this.applyAllocatable(leaf, rec.alloc, 1);
    const used = this.nodeUsage.get(info.name);
    if (used) this.applyAmounts(leaf, used, -1, false);
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
    const n = this.nodeByName.get(name);
    if (n === undefined) return;
    const rec = this.nodes[n]!;
    this.nodeByName.delete(name);
    this.nodes[n] = undefined;
    this.freeSlots.push(n);
    if (rec.leaf < 0) return;
    const leaf = rec.leaf;
    this.applyAllocatable(leaf, rec.alloc, -1);
    const used = this.nodeUsage.get(name);
    if (used) this.applyAmounts(leaf, used, +1, false);
    this.removeLeafNode(leaf, n);
    for (let d = leaf; d >= 0; d = this.dParent[d]!) this.dNodes[d]!--;
    // A hostname shared by two nodes: the leaf follows the node that remains.
    if (this.hostnameLowest && this.leafFirst[leaf]! >= 0) {
      const path = this.source.leafPath(this.nodes[this.leafFirst[leaf]!]!.info);
      if (path && !this.samePlace(leaf, path)) this.ensurePath(path);
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

  private samePlace(leaf: number, path: readonly string[]): boolean {
    const values = this.dValues[leaf]!;
    for (let i = 0; i < path.length; i++) if (values[i] !== path[i]) return false;
    return true;
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
    let e = this.allocIndex.get(alloc);
    if (!e) {
      const names = Object.keys(alloc);
      e = { idx: names.map((k) => this.resourceIndex(k)), val: names.map((k) => alloc[k]!) };
      this.allocIndex.set(alloc, e);
    }
    const base = leaf * this.R;
    this.touch(leaf);
    for (let i = 0; i < e.idx.length; i++) this.freeArr[base + e.idx[i]!]! += sign * e.val[i]!;
  }

  private updateInPlace(rec: NodeRec, info: NodeInfo): void {
    this.applyAllocatable(rec.leaf, rec.alloc, -1);
    this.applyAllocatable(rec.leaf, info.allocatable, 1);
    if (!sameMap(rec.info.labels, info.labels) || JSON.stringify(rec.info.taints) !== JSON.stringify(info.taints)) this.attributeVersion++;
    rec.info = info;
    rec.alloc = info.allocatable;
    this.usageVersion++;
  }

  // ---- usage events ---------------------------------------------------------------

  /** Usage of a non-TAS pod bound to `nodeName`, plus one `pods` (or `pods` of them when
   *  the record stands for several pods, e.g. another flavor's assignment on the node). */
  addPod(key: string, nodeName: string, requests: ResourceAmounts, pods = 1): void {
    if (this.podUsage.get(key) !== undefined) this.removePod(key);
    this.podUsage.set(key, { target: nodeName, amounts: requests, pods });
    this.applyPod(nodeName, requests, 1, pods);
  }

  removePod(key: string): void {
    const rec = this.podUsage.get(key);
    if (!rec) return;
    this.podUsage.delete(key);
    this.applyPod(rec.target, rec.amounts, -1, rec.pods);
  }

  /** A non-TAS pod's requests plus its one `pods`, on the node's record and its leaf. */
  private applyPod(nodeName: string, requests: ResourceAmounts, sign: 1 | -1, pods: number): void {
    // Pods come in runs on one node (a watch's list, a node's pods): its usage record and
    // leaf are looked up once per run, while the structure stays the same.
    let memo = this.podNodeMemo;
    if (memo === undefined || memo.name !== nodeName || memo.version !== this.structureVersion) {
      memo = { name: nodeName, version: this.structureVersion, acc: this.nodeUsageOf(nodeName), leaf: this.nodeLeaf(nodeName) };
      this.podNodeMemo = memo;
    }
    const acc = memo.acc;
    addInto(acc, requests, sign);
    acc.pods = (acc.pods ?? 0) + sign * pods;
    const leaf = memo.leaf;
    if (leaf >= 0) {
      this.applyAmounts(leaf, requests, sign === 1 ? -1 : 1, false);
      this.freeArr[leaf * this.R]! -= sign * pods; // `pods` is resource 0
    }
    this.usageVersion++;
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

  private nodeUsageOf(name: string): ResourceAmounts {
    let u = this.nodeUsage.get(name);
    if (!u) {
      u = {};
      this.nodeUsage.set(name, u);
    }
    return u;
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
   * hostname leaf is found by hostname alone (its parent's map does not hold it), and
   * re-parented when its node moved.
   */
  private ensurePath(path: string[]): number {
    let parent = -1;
    const L = path.length;
    for (let l = 0; l < L; l++) {
      const v = path[l]!;
      let d: number | undefined;
      if (l === L - 1 && this.hostnameLowest) {
        d = this.idMaps[l]!.get(v);
        if (d !== undefined && this.dParent[d] !== parent) this.reparent(d, parent, path);
      } else {
        d = (parent < 0 ? this.roots : this.dChildByValue[parent]!).get(v);
      }
      if (d === undefined) {
        const id = l === L - 1 && this.hostnameLowest ? v : path.slice(0, l + 1).join(',');
        d = this.newDomain(l, parent, l === L - 1 ? path : path.slice(0, l + 1), id);
      }
      parent = d;
    }
    return parent;
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

  private newDomain(level: number, parent: number, values: string[], id: string): number {
    if (this.dCount === this.dCap) this.growDomains();
    const d = this.dCount++;
    const leaf = level === this.levels.length - 1;
    this.dLevel[d] = level;
    this.dParent[d] = parent;
    this.dNodes[d] = 0;
    this.dValues[d] = values;
    this.dId[d] = id;
    this.dChildren[d] = leaf ? NO_CHILDREN : [];
    this.dChildByValue[d] = leaf ? undefined : new Map();
    this.leafFirst[d] = -1;
    this.idMaps[level]!.set(id, d);
    const value = values[level]!;
    if (parent >= 0) {
      this.dChildren[parent]!.push(d);
      if (!(leaf && this.hostnameLowest)) this.dChildByValue[parent]!.set(value, d);
    } else {
      this.roots.set(value, d);
    }
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
    this.freeArr = f;
    this.tasArr = t;
    this.R = R;
  }

  /**
   * Rebuilds the per-level lists in level-value order and each domain's rank in its level.
   * A depth-first walk over children sorted by their own value gives the same order as
   * sorting whole paths, but sorts only short sibling lists.
   */
  private ensureStructure(): void {
    if (this.builtVersion === this.structureVersion) return;
    const L = this.levels.length;
    const lists: number[][] = Array.from({ length: L }, () => []);
    const byOwnValue = (a: number, b: number) => {
      const x = this.dValues[a]![this.dLevel[a]!]!;
      const y = this.dValues[b]![this.dLevel[b]!]!;
      return compareStrings(x, y);
    };
    const alive = (d: number) => this.dNodes[d]! > 0;
    const visit = (domains: readonly number[]) => {
      const sorted = domains.filter(alive).sort(byOwnValue);
      for (const d of sorted) {
        const list = lists[this.dLevel[d]!]!;
        this.rankArr[d] = list.length;
        list.push(d);
        const kids = this.dChildren[d]!;
        const below = lists[this.dLevel[d]! + 1];
        this.childLoArr[d] = below ? below.length : 0;
        if (kids.length > 0) visit(kids);
        this.childHiArr[d] = below ? below.length : 0;
      }
    };
    visit([...this.roots.values()]);
    this.levelLists = lists;
    this.levelArrs = lists.map((l) => Int32Array.from(l));
    this.builtVersion = this.structureVersion;
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

function withPod(requests: ResourceAmounts, pods: number): ResourceAmounts {
  return { ...requests, pods: (requests.pods ?? 0) + pods };
}

function addInto(acc: ResourceAmounts, a: ResourceAmounts, sign: 1 | -1): void {
  for (const k in a) acc[k] = (acc[k] ?? 0) + sign * a[k]!;
}
