// HyperNode status (volcano-hypernode.md §1.1, §2, §6): keeps every HyperNode's
// status.nodeCount and its Ready condition in sync with the Nodes and the other HyperNodes,
// and, when configured, generates HyperNodes from node labels as Volcano's label discovery
// does (the core `topoqueue hypernodes discover` runs, topology/hypernode-discovery.ts).
//
// One key for the whole forest (a HyperNode's parent links and problems depend on all of
// them). Per reconcile:
// 1. discovery, per configured topology type: create or update the HyperNodes the node
//    labels produce, delete the label-sourced ones of that type no longer produced;
// 2. build the tree (HyperNodes in creation order: the first claimant of a child keeps it);
// 3. per HyperNode, nodeCount = the union of its direct members resolved against Node
//    names (exact names count whether or not the Node exists; a regex or label member
//    counts matching Nodes whatever the member's type, as the peer's count does), and
//    Ready: False with the problem's reason when a problem names it (MultipleParents,
//    CyclicDependency, InvalidMember), False (TreeNotReady) when another HyperNode's
//    problem stops topology scheduling cluster-wide, else True; write what changed.
//
// The peer leaves status.conditions empty; the Ready condition is topoqueue's addition, so
// `kubectl get hn` users see why jobs with a network topology stay pending.

import type { Condition, Node, StringMap } from '../api/objects.ts';
import { compileUserRegex, type UserRegex } from '../api/regex.ts';
import { formatTime } from '../api/time.ts';
import type { HyperNode, LabelSelector } from '../api/volcano-objects.ts';
import { compareStrings } from '../api/values.ts';
import { checkDiscoveryConfig, discoverHyperNodes, type DiscoveryConfig } from '../topology/hypernode-discovery.ts';
import { HyperNodeTree, literalPrefix, matchesLabelSelector, type TreeNode } from '../topology/hypernode-tree.ts';
import { nowSeconds } from '../runtime/clock.ts';
import type { Informer } from '../runtime/informer.ts';
import type { ControllerContext, Reconciler } from '../runtime/manager.ts';
import { isAlreadyExists, isNotFound, retryOnConflict } from '../runtime/store.ts';
import type { WorkQueue } from '../runtime/work-queue.ts';
import type { TopoqueueConfig } from './config.ts';

export const HYPERNODE_STATUS = 'hypernode-status';
/** The single work-queue key: the forest is recomputed as a whole. */
export const HYPERNODES_KEY = 'hypernodes';

export const HyperNodeConditionType = { Ready: 'Ready' } as const;
export const HyperNodeReason = {
  Ready: 'Ready',
  TreeNotReady: 'TreeNotReady',
} as const;
export const HYPERNODE_READY_MESSAGE = 'the HyperNode is part of a valid HyperNode tree';

export interface HyperNodeStatusOptions {
  /** Label discovery, one entry per topology type (Volcano's `networkTopologyDiscovery` with `source: label`). */
  discovery?: readonly DiscoveryConfig[];
}

/** Node names, sorted once, for regex members anchored on a literal prefix. */
class NodeNames {
  readonly sorted: string[];
  readonly nodes: readonly TreeNode[];
  private readonly regexes = new Map<string, UserRegex | undefined>();

  constructor(nodes: readonly TreeNode[]) {
    this.nodes = nodes;
    this.sorted = nodes.map((n) => n.name).sort();
  }

  /** Names matching the pattern (unanchored RE2); none for a pattern that does not compile. */
  matching(pattern: string): string[] {
    let r = this.regexes.get(pattern);
    if (!this.regexes.has(pattern)) {
      const c = compileUserRegex(pattern);
      r = c.ok ? c.regex : undefined;
      this.regexes.set(pattern, r);
    }
    if (!r) return [];
    const prefix = literalPrefix(pattern);
    const names = this.sorted;
    let lo = 0;
    if (prefix !== '') {
      let hi = names.length;
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if (names[mid]! < prefix) lo = mid + 1;
        else hi = mid;
      }
    }
    const out: string[] = [];
    for (let i = lo; i < names.length; i++) {
      const n = names[i]!;
      if (prefix !== '' && !n.startsWith(prefix)) break;
      if (r.test(n)) out.push(n);
    }
    return out;
  }

  selecting(sel: LabelSelector): string[] {
    return this.nodes.filter((n) => matchesLabelSelector(n.labels, sel)).map((n) => n.name);
  }
}

/** `status.nodeCount` as the peer computes it (spec §6.3): the union of the direct members. */
export function hyperNodeNodeCount(h: HyperNode, names: NodeNames): number {
  const set = new Set<string>();
  for (const m of h.spec.members ?? []) {
    const s = m.selector ?? {};
    if (s.exactMatch?.name) set.add(s.exactMatch.name);
    else if (s.regexMatch?.pattern) for (const n of names.matching(s.regexMatch.pattern)) set.add(n);
    else if (s.labelMatch) for (const n of names.selecting(s.labelMatch)) set.add(n);
  }
  return set.size;
}

export function nodeNamesOf(nodes: readonly TreeNode[]): NodeNames {
  return new NodeNames(nodes);
}

/** The Ready condition of one HyperNode of the tree (step 3). */
export function readyCondition(tree: HyperNodeTree, name: string): Omit<Condition, 'lastTransitionTime'> {
  const own = tree.problemsOf(name);
  if (own.length > 0)
    return { type: HyperNodeConditionType.Ready, status: 'False', reason: own[0]!.reason, message: own.map((p) => p.message).join('; ') };
  if (!tree.ready) {
    const blocking = tree.problems.filter((p) => p.reason !== 'InvalidMember').map((p) => p.message);
    return {
      type: HyperNodeConditionType.Ready,
      status: 'False',
      reason: HyperNodeReason.TreeNotReady,
      message: `hyperNodes are not ready for scheduling: ${blocking.join('; ')}`,
    };
  }
  return { type: HyperNodeConditionType.Ready, status: 'True', reason: HyperNodeReason.Ready, message: HYPERNODE_READY_MESSAGE };
}

const byCreation = (a: HyperNode, b: HyperNode): number => {
  const ta = a.metadata.creationTimestamp ?? '';
  const tb = b.metadata.creationTimestamp ?? '';
  return compareStrings(ta, tb) || compareStrings(a.metadata.name, b.metadata.name);
};

function sameLabels(a: StringMap | undefined, b: StringMap | undefined): boolean {
  const ka = Object.keys(a ?? {});
  if (ka.length !== Object.keys(b ?? {}).length) return false;
  return ka.every((k) => a![k] === b?.[k]);
}

export function hyperNodeStatusController(options: HyperNodeStatusOptions = {}): Reconciler<TopoqueueConfig> {
  return new HyperNodeStatusController(options);
}

class HyperNodeStatusController implements Reconciler<TopoqueueConfig> {
  readonly name = HYPERNODE_STATUS;
  private ctx!: ControllerContext<TopoqueueConfig>;
  private nodes!: Informer<Node>;
  private hyperNodes!: Informer<HyperNode>;
  private readonly discovery: DiscoveryConfig[] = [];

  constructor(private readonly options: HyperNodeStatusOptions = {}) {}

  setup(c: ControllerContext<TopoqueueConfig>, queue: WorkQueue): void {
    this.ctx = c;
    this.nodes = c.informers.for('Node');
    this.hyperNodes = c.informers.for('HyperNode');
    for (const d of this.options.discovery ?? []) {
      const errors = checkDiscoveryConfig(d);
      // The peer skips a type with a bad configuration; so do we, and say why.
      if (errors.length > 0)
        c.log.error(
          HYPERNODE_STATUS,
          `discovery/${d.type ?? 'label'}`,
          new Error(`label discovery skipped: ${errors.map((e) => `${e.field}: ${e.message}`).join('; ')}`),
        );
      else this.discovery.push(d);
    }
    const resync = (): void => queue.add(HYPERNODES_KEY);
    this.nodes.addHandler({
      add: resync,
      update: (old, n) => {
        if (!sameLabels(old.metadata.labels, n.metadata.labels)) resync();
      },
      delete: resync,
    });
    this.hyperNodes.addHandler({
      add: resync,
      update: (old, h) => {
        if (JSON.stringify(old.spec) !== JSON.stringify(h.spec) || !sameLabels(old.metadata.labels, h.metadata.labels)) resync();
      },
      delete: resync,
    });
    // One pass at start even with no objects (discovery may have something to create).
    resync();
  }

  async reconcile(): Promise<void> {
    const all = this.treeNodes();
    for (const d of this.discovery) await this.discover(d, all);

    const list = [...this.hyperNodes.values()].sort(byCreation);
    const tree = new HyperNodeTree(list, all);
    const names = new NodeNames(all);
    const now = nowSeconds(this.ctx.clock);
    for (const h of list) {
      const nodeCount = hyperNodeNodeCount(h, names);
      const ready = readyCondition(tree, h.metadata.name);
      const old = h.status?.conditions?.find((x) => x.type === HyperNodeConditionType.Ready);
      const sameReady =
        old !== undefined &&
        old.status === ready.status &&
        old.reason === ready.reason &&
        old.message === ready.message &&
        old.observedGeneration === h.metadata.generation;
      if (h.status?.nodeCount === nodeCount && sameReady) continue;
      await retryOnConflict(
        this.ctx.store,
        'HyperNode',
        undefined,
        h.metadata.name,
        (o) => {
          const prev = o.status?.conditions?.find((x) => x.type === HyperNodeConditionType.Ready);
          const cond: Condition = {
            ...ready,
            observedGeneration: o.metadata.generation,
            lastTransitionTime: prev && prev.status === ready.status && prev.lastTransitionTime ? prev.lastTransitionTime : formatTime(now),
          };
          const others = (o.status?.conditions ?? []).filter((x) => x.type !== HyperNodeConditionType.Ready);
          const next = { ...(o.status ?? {}), nodeCount, conditions: [...others, cond] };
          if (JSON.stringify(next) === JSON.stringify(o.status ?? {})) return false;
          o.status = next;
        },
        { status: true },
      );
    }
  }

  private treeNodes(): TreeNode[] {
    const out: TreeNode[] = [];
    for (const n of this.nodes.values()) out.push({ name: n.metadata.name, labels: n.metadata.labels ?? {} });
    return out;
  }

  private async discover(config: DiscoveryConfig, all: readonly TreeNode[]): Promise<void> {
    const result = discoverHyperNodes(all, [...this.hyperNodes.values()], config);
    for (const h of result.hyperNodes) {
      const cur = this.hyperNodes.get(h.metadata.name);
      if (!cur) {
        try {
          await this.ctx.store.create(h);
        } catch (e) {
          // A cache behind the store: the next pass sees the object.
          if (!isAlreadyExists(e)) throw e;
        }
        continue;
      }
      const labels = { ...(cur.metadata.labels ?? {}), ...(h.metadata.labels ?? {}) };
      if (JSON.stringify(cur.spec) === JSON.stringify(h.spec) && sameLabels(cur.metadata.labels, labels)) continue;
      await retryOnConflict(this.ctx.store, 'HyperNode', undefined, h.metadata.name, (o) => {
        o.metadata.labels = { ...(o.metadata.labels ?? {}), ...(h.metadata.labels ?? {}) };
        o.spec = structuredClone(h.spec);
      });
    }
    for (const name of result.stale) {
      try {
        await this.ctx.store.delete('HyperNode', undefined, name);
      } catch (e) {
        if (!isNotFound(e)) throw e;
      }
    }
  }
}
