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
  /** Own usage for a ClusterQueue; derived for a cohort. */
  readonly usage = new Map<FR, number>();
  readonly subtree = new Map<FR, number>();
  /** guaranteed() per flavor-resource, fixed once the subtree quotas are (construction). */
  readonly guaranteedOf = new Map<FR, number>();
  /** Some guaranteed() is not 0 (a lending limit): without one, no lookup is needed. */
  private anyGuaranteed = false;
  /** potentialAvailable per flavor-resource (a ClusterQueue's; fixed, as the tree is), filled on first use. */
  readonly potential = new Map<FR, number>();

  constructor(readonly spec: QuotaNodeSpec) {}

  guaranteed(f: FR): number {
    return this.anyGuaranteed ? (this.guaranteedOf.get(f) ?? 0) : 0;
  }

  computeGuaranteed(frs: Iterable<FR>): void {
    for (const f of frs) {
      const q = this.spec.quotas.get(f);
      const subtree = this.subtree.get(f) ?? 0;
      const g = !q || q.lendingLimit === undefined ? 0 : Math.max(0, subtree - q.lendingLimit);
      this.guaranteedOf.set(f, g);
      if (g !== 0) this.anyGuaranteed = true;
    }
  }
}

export class QuotaTree {
  private readonly nodes = new Map<string, QuotaNode>();
  /** ClusterQueue nodes by name (the hot lookups; `nodes` is keyed by kind and name). */
  private readonly cqs = new Map<string, QuotaNode>();
  private readonly frs = new Set<FR>();
  /** The ClusterQueue node cq() found last, and its name. */
  private lastName: string | undefined;
  private lastNode: QuotaNode | undefined;
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
    for (const n of this.nodes.values()) for (const f of n.spec.quotas.keys()) this.frs.add(f);
    for (const n of this.nodes.values()) if (!n.parent) this.computeSubtree(n);
    for (const n of this.nodes.values()) if (n.spec.kind === 'ClusterQueue') this.cqs.set(n.spec.name, n);
  }

  private computeSubtree(n: QuotaNode): void {
    for (const c of n.children) this.computeSubtree(c);
    for (const f of this.frs) {
      let v = n.spec.quotas.get(f)?.nominal ?? 0;
      for (const c of n.children) v += (c.subtree.get(f) ?? 0) - c.guaranteed(f);
      n.subtree.set(f, v);
    }
    n.computeGuaranteed(this.frs);
  }

  hasClusterQueue(name: string): boolean {
    return this.cqs.has(name);
  }

  private cq(name: string): QuotaNode {
    // Flavor assignment asks about one ClusterQueue several times in a row (the tree is
    // fixed after construction: the last node found stays right).
    if (name === this.lastName) return this.lastNode!;
    const n = this.cqs.get(name);
    if (!n) throw new Error(`unknown ClusterQueue ${name}`);
    this.lastName = name;
    this.lastNode = n;
    return n;
  }

  /** Adds (or with a negative amount removes) usage of a ClusterQueue, up the tree. */
  addUsage(cq: string, f: FR, amount: number): void {
    addUsageAt(this.cq(cq), f, amount);
  }

  /**
   * Adds (sign 1) or removes (sign -1) a whole reservation's usage, as addUsage per
   * flavor-resource in the map's order; nothing for a ClusterQueue the tree does not have.
   */
  addUsageOf(cq: string, usage: ReadonlyMap<FR, number>, sign: 1 | -1): void {
    const n = this.cqs.get(cq);
    if (n === undefined) return;
    for (const [f, v] of usage) addUsageAt(n, f, sign === 1 ? v : -v);
  }

  usage(cq: string, f: FR): number {
    return this.cq(cq).usage.get(f) ?? 0;
  }

  nominal(cq: string, f: FR): number {
    return this.cq(cq).spec.quotas.get(f)?.nominal ?? 0;
  }

  /** What the ClusterQueue can still use of `f` now. */
  available(cq: string, f: FR): number {
    return availableOf(this.cq(cq), f, true);
  }

  /** What it could use at most, with nothing used anywhere. */
  potentialAvailable(cq: string, f: FR): number {
    const n = this.cq(cq);
    let v = n.potential.get(f);
    if (v === undefined) n.potential.set(f, (v = availableOf(n, f, false)));
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
    let n: QuotaNode | undefined = this.cq(cq);
    let level = 0;
    let need = amount;
    for (; n; n = n.parent, level++) {
      const free = (n.subtree.get(f) ?? 0) - (n.usage.get(f) ?? 0);
      if (free >= need) return level;
      // The private (guaranteed, not lent) part left here is used first; only the rest
      // must come from the parent.
      need -= Math.max(0, n.guaranteed(f) - (n.usage.get(f) ?? 0));
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
    let root = this.cq(cq);
    while (root.parent) root = root.parent;
    return `${root.spec.kind}/${root.spec.name}`;
  }

  /** The same as a set (shared: do not change it). */
  cohortMemberSet(cq: string): ReadonlySet<string> {
    return this.members(cq).set;
  }

  private members(cq: string): { list: readonly string[]; set: ReadonlySet<string> } {
    let root = this.cq(cq);
    while (root.parent) root = root.parent;
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
    for (const n of this.nodes.values()) {
      for (const f of this.frs) {
        const u = n.usage.get(f) ?? 0;
        if (!n.parent && u > (n.subtree.get(f) ?? 0) + 1e-9)
          out.push(`${n.spec.kind} ${n.spec.name} uses ${u} of ${f}, more than its ${n.subtree.get(f) ?? 0}`);
        const q = n.spec.quotas.get(f);
        if (n.parent && q?.borrowingLimit !== undefined && u > (n.subtree.get(f) ?? 0) + q.borrowingLimit + 1e-9) {
          out.push(
            `${n.spec.kind} ${n.spec.name} uses ${u} of ${f}, more than its quota ${n.subtree.get(f)} plus borrowing limit ${q.borrowingLimit}`,
          );
        }
      }
    }
    return out;
  }
}

/** Adds usage of a ClusterQueue node, up the tree. */
function addUsageAt(n: QuotaNode, f: FR, amount: number): void {
  let before = n.usage.get(f) ?? 0;
  let after = before + amount;
  n.usage.set(f, after);
  // A cohort's usage is what its children use beyond their guaranteed share.
  for (let c = n; c.parent; c = c.parent) {
    const g = c.guaranteed(f);
    const delta = Math.max(0, after - g) - Math.max(0, before - g);
    if (delta === 0) break;
    const p = c.parent;
    before = p.usage.get(f) ?? 0;
    after = before + delta;
    p.usage.set(f, after);
  }
}

function key(kind: string, name: string): string {
  return `${kind}/${name}`;
}

function availableOf(n: QuotaNode, f: FR, withUsage: boolean): number {
  const used = withUsage ? (n.usage.get(f) ?? 0) : 0;
  const subtree = n.subtree.get(f) ?? 0;
  if (!n.parent) return Math.max(0, subtree - used);
  const guaranteed = n.guaranteed(f);
  const local = Math.max(0, guaranteed - used);
  let fromParent = availableOf(n.parent, f, withUsage);
  const limit = n.spec.quotas.get(f)?.borrowingLimit;
  if (limit !== undefined) {
    const storedInParent = subtree - guaranteed;
    const usedInParent = Math.max(0, used - guaranteed);
    fromParent = Math.min(fromParent, storedInParent - usedInParent + limit);
  }
  return local + Math.max(0, fromParent);
}
