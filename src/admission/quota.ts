// Quotas of ClusterQueues and cohorts as a tree, per flavor-resource (kueue-core.md §1a,
// §1b "Flavor assignment"): what a ClusterQueue may use now (`available`) and at most
// (`potentialAvailable`), with borrowing and lending limits, in a tree of cohorts.
//
// Per node and flavor-resource (FR):
// - guaranteed = nominal - lendingLimit when a lending limit is set (private to the node,
//   never lent), else 0;
// - subtreeQuota = own nominal, plus for a cohort what its children lend: the sum of
//   (child.subtreeQuota - child.guaranteed);
// - usage of a cohort = what its children use beyond their guaranteed share;
// - available(node) = subtreeQuota - usage at the root; below it, what is left of the
//   guaranteed share plus what the parent has available, capped by the borrowing limit
//   (subtree quota stored in the parent, minus what is already used there, plus the limit);
// - potentialAvailable: the same with no usage anywhere.
// Amounts are numbers in the project's units (cpu in millicores).

export type FR = string;

/** `flavor/resource`, the key of every quota map. */
export function fr(flavor: string, resource: string): FR {
  return `${flavor}/${resource}`;
}

/**
 * The same keys, interned: the same string object for the same pair, so the hot path's map
 * lookups reuse its hash instead of building and hashing a new string. Owned by the
 * AdmissionSnapshot (it lives as long as the quota maps it serves), and bounded: after
 * `max` pairs the table starts over (requests may name any resource).
 */
export class FrKeys {
  private readonly byFlavor = new Map<string, Map<string, FR>>();
  private count = 0;

  constructor(private readonly max = 65_536) {}

  of(flavor: string, resource: string): FR {
    let byResource = this.byFlavor.get(flavor);
    if (!byResource) this.byFlavor.set(flavor, (byResource = new Map()));
    let k = byResource.get(resource);
    if (k === undefined) {
      if (this.count >= this.max) {
        this.byFlavor.clear();
        this.count = 0;
        this.byFlavor.set(flavor, (byResource = new Map()));
      }
      byResource.set(resource, (k = fr(flavor, resource)));
      this.count++;
    }
    return k;
  }

  /** Pairs interned now. */
  get size(): number {
    return this.count;
  }
}

export interface ResourceQuota {
  nominal: number;
  /** Undefined: unlimited (only with a parent). */
  borrowingLimit?: number;
  /** Undefined: everything can be lent. */
  lendingLimit?: number;
}

export interface QuotaNodeSpec {
  name: string;
  kind: 'ClusterQueue' | 'Cohort';
  /** Cohort name, if any. */
  parent?: string;
  quotas: Map<FR, ResourceQuota>;
}

class QuotaNode {
  readonly children: QuotaNode[] = [];
  parent: QuotaNode | undefined;
  /** Position in the tree's node arrays (QuotaTree.parentOf, the slot ranges). */
  index = -1;

  constructor(readonly spec: QuotaNodeSpec) {}
}

/**
 * Every number the tree keeps per node and flavor-resource, in one set of typed arrays (the
 * hot path reads a few doubles instead of probing a Map per node and quantity). A node owns
 * a range of slots, one per flavor-resource it has (its own quotas and its descendants'),
 * looked up by a short scan of the range; a flavor-resource a node does not have is 0 there
 * (no quota, no usage, no limit). A ClusterQueue given usage of a flavor-resource it has no
 * slot for (a quota missing from its spec) gets one: its range moves to the end.
 */
class Slots {
  /** Flavor-resource id (QuotaTree.frIds) of each slot. */
  fr = new Int32Array(0);
  usage = new Float64Array(0);
  subtree = new Float64Array(0);
  /** nominal - lendingLimit when a lending limit is set (private, never lent), else 0. */
  guaranteed = new Float64Array(0);
  nominal = new Float64Array(0);
  /** NaN: no borrowing limit. */
  borrowingLimit = new Float64Array(0);
  /** potentialAvailable of a ClusterQueue's slot, NaN until first asked (fixed, as the tree is). */
  potential = new Float64Array(0);
  length = 0;

  /** Room for `n` more slots. */
  reserve(n: number): void {
    const need = this.length + n;
    if (need <= this.fr.length) return;
    const cap = Math.max(need, 2 * this.fr.length, 16);
    const grow = <T extends Int32Array | Float64Array>(a: T, make: (n: number) => T): T => {
      const b = make(cap);
      b.set(a.subarray(0, this.length) as never);
      return b;
    };
    this.fr = grow(this.fr, (k) => new Int32Array(k));
    this.usage = grow(this.usage, (k) => new Float64Array(k));
    this.subtree = grow(this.subtree, (k) => new Float64Array(k));
    this.guaranteed = grow(this.guaranteed, (k) => new Float64Array(k));
    this.nominal = grow(this.nominal, (k) => new Float64Array(k));
    this.borrowingLimit = grow(this.borrowingLimit, (k) => new Float64Array(k));
    this.potential = grow(this.potential, (k) => new Float64Array(k));
  }

  /** A new slot with nothing in it (the caller reserved room). */
  push(fr: number): number {
    const s = this.length++;
    this.fr[s] = fr;
    this.usage[s] = 0;
    this.subtree[s] = 0;
    this.guaranteed[s] = 0;
    this.nominal[s] = 0;
    this.borrowingLimit[s] = NaN;
    this.potential[s] = NaN;
    return s;
  }

  /** A copy of slot `from` at the end (the caller reserved room). */
  copy(from: number): number {
    const s = this.length++;
    this.fr[s] = this.fr[from]!;
    this.usage[s] = this.usage[from]!;
    this.subtree[s] = this.subtree[from]!;
    this.guaranteed[s] = this.guaranteed[from]!;
    this.nominal[s] = this.nominal[from]!;
    this.borrowingLimit[s] = this.borrowingLimit[from]!;
    this.potential[s] = this.potential[from]!;
    return s;
  }
}

export class QuotaTree {
  private readonly nodes = new Map<string, QuotaNode>();
  /** ClusterQueue nodes by name (the hot lookups; `nodes` is keyed by kind and name). */
  private readonly cqs = new Map<string, QuotaNode>();
  /** The flavor-resources of the quotas, in the order first met (what violations() checks). */
  private readonly frs: FR[] = [];
  /** Flavor-resource -> id; ids past frs.length name flavor-resources met only in usage. */
  private readonly frIds = new Map<FR, number>();
  /** Per node index: its parent's index (-1 for a root), its slot range. */
  private readonly parentOf: Int32Array;
  private readonly start: Int32Array;
  private readonly count: Int32Array;
  private readonly slots = new Slots();
  /** The ClusterQueue node cq() found last, and its name. */
  private lastName: string | undefined;
  private lastIndex = -1;
  /** Root cohort -> its ClusterQueues, sorted (the tree is fixed after construction). */
  private readonly membersOfRoot = new Map<QuotaNode, { list: readonly string[]; set: ReadonlySet<string> }>();

  /** Builds the tree; an unknown parent cohort is created empty (as Kueue does implicitly). */
  constructor(specs: readonly QuotaNodeSpec[]) {
    for (const s of specs) this.nodes.set(key(s.kind, s.name), new QuotaNode(s));
    for (const n of [...this.nodes.values()]) {
      if (n.spec.parent === undefined) continue;
      let p = this.nodes.get(key('Cohort', n.spec.parent));
      if (!p) {
        p = new QuotaNode({ name: n.spec.parent, kind: 'Cohort', quotas: new Map() });
        this.nodes.set(key('Cohort', n.spec.parent), p);
      }
      // A cohort cycle would loop forever: a node never becomes its own ancestor.
      let a: QuotaNode | undefined = p;
      let cyclic = false;
      for (; a; a = a.parent) if (a === n) cyclic = true;
      if (cyclic) continue;
      n.parent = p;
      p.children.push(n);
    }
    for (const n of this.nodes.values()) {
      for (const f of n.spec.quotas.keys()) {
        if (this.frIds.has(f)) continue;
        this.frIds.set(f, this.frs.length);
        this.frs.push(f);
      }
    }
    const list = [...this.nodes.values()];
    list.forEach((n, i) => (n.index = i));
    this.parentOf = new Int32Array(list.length);
    this.start = new Int32Array(list.length);
    this.count = new Int32Array(list.length);
    // Each node's flavor-resources: its own quotas' and its children's (in frs order).
    const has: number[][] = new Array<number[]>(list.length);
    const collect = (n: QuotaNode): number[] => {
      let own: number[] = [];
      for (const f of n.spec.quotas.keys()) own.push(this.frIds.get(f)!);
      if (n.children.length > 0) {
        const all = new Set(own);
        for (const c of n.children) for (const f of collect(c)) all.add(f);
        own = [...all];
      }
      if (own.length > 1) own.sort((a, b) => a - b);
      has[n.index] = own;
      return own;
    };
    for (const n of list) if (!n.parent) collect(n);
    let total = 0;
    for (const h of has) total += h.length;
    this.slots.reserve(total);
    for (const n of list) {
      const i = n.index;
      this.parentOf[i] = n.parent ? n.parent.index : -1;
      this.start[i] = this.slots.length;
      const ids = has[i] ?? [];
      this.count[i] = ids.length;
      for (const f of ids) {
        const s = this.slots.push(f);
        const q = n.spec.quotas.get(this.frs[f]!);
        if (q) {
          this.slots.nominal[s] = q.nominal;
          if (q.borrowingLimit !== undefined) this.slots.borrowingLimit[s] = q.borrowingLimit;
        }
      }
    }
    for (const n of list) if (!n.parent) this.computeSubtree(n);
    for (const n of list) if (n.spec.kind === 'ClusterQueue') this.cqs.set(n.spec.name, n);
  }

  /** subtreeQuota and guaranteed of every slot, children first. */
  private computeSubtree(n: QuotaNode): void {
    for (const c of n.children) this.computeSubtree(c);
    const sl = this.slots;
    const end = this.start[n.index]! + this.count[n.index]!;
    for (let s = this.start[n.index]!; s < end; s++) {
      const f = sl.fr[s]!;
      let v = sl.nominal[s]!;
      for (const c of n.children) {
        const cs = this.slotOf(c.index, f);
        // A child without the flavor-resource has none of it (adds nothing).
        if (cs >= 0) v += sl.subtree[cs]! - sl.guaranteed[cs]!;
      }
      sl.subtree[s] = v;
      const lendingLimit = n.spec.quotas.get(this.frs[f]!)?.lendingLimit;
      sl.guaranteed[s] = lendingLimit === undefined ? 0 : Math.max(0, v - lendingLimit);
    }
  }

  /** The id of a flavor-resource, made when first met (in usage: no quota names it). */
  private frId(f: FR): number {
    let id = this.frIds.get(f);
    if (id === undefined) this.frIds.set(f, (id = this.frIds.size));
    return id;
  }

  /** The id of a flavor-resource for the `...At` methods; -1 when the tree has never met it (nothing anywhere). */
  frIndex(f: FR): number {
    return this.frIds.get(f) ?? -1;
  }

  /** The node index of a ClusterQueue for the `...At` methods, or -1. */
  clusterQueueIndex(name: string): number {
    const n = this.cqs.get(name);
    return n ? n.index : -1;
  }

  /** The slot of flavor-resource `f` at node `i`, or -1. */
  private slotOf(i: number, f: number): number {
    const fr = this.slots.fr;
    const s0 = this.start[i]!;
    const end = s0 + this.count[i]!;
    for (let s = s0; s < end; s++) if (fr[s] === f) return s;
    return -1;
  }

  /** The slot of `f` at node `i`, made (the node's range moved to the end) when missing. */
  private ensureSlot(i: number, f: number): number {
    const s = this.slotOf(i, f);
    if (s >= 0) return s;
    const sl = this.slots;
    const n = this.count[i]!;
    sl.reserve(n + 1);
    const from = this.start[i]!;
    this.start[i] = sl.length;
    for (let k = 0; k < n; k++) sl.copy(from + k);
    this.count[i] = n + 1;
    return sl.push(f);
  }

  hasClusterQueue(name: string): boolean {
    return this.cqs.has(name);
  }

  private cq(name: string): number {
    // Flavor assignment asks about one ClusterQueue several times in a row (the tree is
    // fixed after construction: the last node found stays right).
    if (name === this.lastName) return this.lastIndex;
    const n = this.cqs.get(name);
    if (!n) throw new Error(`unknown ClusterQueue ${name}`);
    this.lastName = name;
    this.lastIndex = n.index;
    return n.index;
  }

  /** Adds (or with a negative amount removes) usage of a ClusterQueue, up the tree. */
  addUsage(cq: string, f: FR, amount: number): void {
    this.addUsageAt(this.cq(cq), this.frId(f), amount);
  }

  /**
   * Adds (sign 1) or removes (sign -1) a whole reservation's usage, as addUsage per
   * flavor-resource in the map's order; nothing for a ClusterQueue the tree does not have.
   */
  addUsageOf(cq: string, usage: ReadonlyMap<FR, number>, sign: 1 | -1): void {
    const n = this.cqs.get(cq);
    if (n !== undefined) this.addUsageOfAt(n.index, usage, sign);
  }

  /** addUsageOf by node index (clusterQueueIndex). */
  addUsageOfAt(i: number, usage: ReadonlyMap<FR, number>, sign: 1 | -1): void {
    for (const [f, v] of usage) this.addUsageAt(i, this.frId(f), sign === 1 ? v : -v);
  }

  /** Adds usage of a ClusterQueue node, up the tree. */
  private addUsageAt(i: number, f: number, amount: number): void {
    let s = this.ensureSlot(i, f);
    let usage = this.slots.usage;
    let before = usage[s]!;
    let after = before + amount;
    usage[s] = after;
    // A cohort's usage is what its children use beyond their guaranteed share.
    for (let c = i; this.parentOf[c]! >= 0; c = this.parentOf[c]!) {
      const g = this.slots.guaranteed[s]!;
      const delta = Math.max(0, after - g) - Math.max(0, before - g);
      if (delta === 0) break;
      s = this.ensureSlot(this.parentOf[c]!, f);
      usage = this.slots.usage;
      before = usage[s]!;
      after = before + delta;
      usage[s] = after;
    }
  }

  usage(cq: string, f: FR): number {
    return this.usageAt(this.cq(cq), this.frIndex(f));
  }

  usageAt(i: number, f: number): number {
    const s = this.slotOf(i, f);
    return s >= 0 ? this.slots.usage[s]! : 0;
  }

  nominal(cq: string, f: FR): number {
    return this.nominalAt(this.cq(cq), this.frIndex(f));
  }

  nominalAt(i: number, f: number): number {
    const s = this.slotOf(i, f);
    return s >= 0 ? this.slots.nominal[s]! : 0;
  }

  /** What the ClusterQueue can still use of `f` now. */
  available(cq: string, f: FR): number {
    return this.availableOf(this.cq(cq), this.frIndex(f), true);
  }

  availableAt(i: number, f: number): number {
    return this.availableOf(i, f, true);
  }

  /** What it could use at most, with nothing used anywhere. */
  potentialAvailable(cq: string, f: FR): number {
    return this.potentialAvailableAt(this.cq(cq), this.frIndex(f));
  }

  potentialAvailableAt(i: number, f: number): number {
    const s = this.slotOf(i, f);
    if (s < 0) return this.availableOf(i, f, false);
    let v = this.slots.potential[s]!;
    if (Number.isNaN(v)) this.slots.potential[s] = v = this.availableOf(i, f, false);
    return v;
  }

  /** Usage above the nominal quota: how much the ClusterQueue borrows. */
  borrowing(cq: string, f: FR): number {
    return Math.max(0, this.usage(cq, f) - this.nominal(cq, f));
  }

  /**
   * How far up the tree the request must reach: 0 when the ClusterQueue's own unused
   * nominal covers it, else the height of the lowest cohort whose subtree can.
   */
  borrowingLevel(cq: string, f: FR, amount: number): number {
    return this.borrowingLevelAt(this.cq(cq), this.frIndex(f), amount);
  }

  borrowingLevelAt(i: number, f: number, amount: number): number {
    const sl = this.slots;
    let level = 0;
    let need = amount;
    for (let n = i; n >= 0; n = this.parentOf[n]!, level++) {
      const s = this.slotOf(n, f);
      const used = s >= 0 ? sl.usage[s]! : 0;
      const free = (s >= 0 ? sl.subtree[s]! : 0) - used;
      if (free >= need) return level;
      // The private (guaranteed, not lent) part left here is used first; only the rest
      // must come from the parent.
      need -= Math.max(0, (s >= 0 ? sl.guaranteed[s]! : 0) - used);
    }
    return level;
  }

  /** Every ClusterQueue in the same root cohort (itself included). */
  cohortMembers(cq: string): string[] {
    return [...this.members(cq).list];
  }

  /**
   * The root of a ClusterQueue's cohort tree, as `Cohort/<name>`, or `ClusterQueue/<name>`
   * for one in no cohort: the scope of Kueue's requeue of inadmissible Workloads.
   */
  rootOf(cq: string): string {
    const root = this.rootNode(cq);
    return `${root.spec.kind}/${root.spec.name}`;
  }

  /** The same as a set (shared: do not change it). */
  cohortMemberSet(cq: string): ReadonlySet<string> {
    return this.members(cq).set;
  }

  private rootNode(cq: string): QuotaNode {
    let root = this.cqs.get(cq);
    if (!root) throw new Error(`unknown ClusterQueue ${cq}`);
    while (root.parent) root = root.parent;
    return root;
  }

  private members(cq: string): { list: readonly string[]; set: ReadonlySet<string> } {
    const root = this.rootNode(cq);
    let m = this.membersOfRoot.get(root);
    if (!m) {
      const out: string[] = [];
      const walk = (n: QuotaNode) => {
        if (n.spec.kind === 'ClusterQueue') out.push(n.spec.name);
        for (const c of n.children) walk(c);
      };
      walk(root);
      out.sort();
      m = { list: out, set: new Set(out) };
      this.membersOfRoot.set(root, m);
    }
    return m;
  }

  /** Checks the invariant: no ClusterQueue above nominal + borrowing limit, no root over its subtree. */
  violations(): string[] {
    const out: string[] = [];
    const sl = this.slots;
    for (const n of this.nodes.values()) {
      for (let f = 0; f < this.frs.length; f++) {
        const s = this.slotOf(n.index, f);
        const u = s >= 0 ? sl.usage[s]! : 0;
        const subtree = s >= 0 ? sl.subtree[s]! : 0;
        const name = this.frs[f]!;
        if (!n.parent && u > subtree + 1e-9) out.push(`${n.spec.kind} ${n.spec.name} uses ${u} of ${name}, more than its ${subtree}`);
        const q = n.spec.quotas.get(name);
        if (n.parent && q?.borrowingLimit !== undefined && u > subtree + q.borrowingLimit + 1e-9) {
          out.push(
            `${n.spec.kind} ${n.spec.name} uses ${u} of ${name}, more than its quota ${subtree} plus borrowing limit ${q.borrowingLimit}`,
          );
        }
      }
    }
    return out;
  }

  /**
   * available (withUsage) or potentialAvailable of `f` at node `i`: at the root, subtree
   * quota minus usage; below, what is left of the guaranteed share plus what the parent has
   * available, capped by the borrowing limit.
   */
  private availableOf(i: number, f: number, withUsage: boolean): number {
    const sl = this.slots;
    const s = this.slotOf(i, f);
    const used = withUsage && s >= 0 ? sl.usage[s]! : 0;
    const subtree = s >= 0 ? sl.subtree[s]! : 0;
    const parent = this.parentOf[i]!;
    if (parent < 0) return Math.max(0, subtree - used);
    const guaranteed = s >= 0 ? sl.guaranteed[s]! : 0;
    const local = Math.max(0, guaranteed - used);
    let fromParent = this.availableOf(parent, f, withUsage);
    const limit = s >= 0 ? sl.borrowingLimit[s]! : NaN;
    if (!Number.isNaN(limit)) {
      const storedInParent = subtree - guaranteed;
      const usedInParent = Math.max(0, used - guaranteed);
      fromParent = Math.min(fromParent, storedInParent - usedInParent + limit);
    }
    return local + Math.max(0, fromParent);
  }
}

function key(kind: string, name: string): string {
  return `${kind}/${name}`;
}
