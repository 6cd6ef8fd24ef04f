// The binder: the embedded cluster's stand-in for kube-scheduler. It binds every pod that
// has no scheduling gate and no node (whatever its schedulerName: the embedded cluster has
// one scheduler) to a node that passes kube-scheduler's filters, in their order:
//   NodeUnschedulable (spec.unschedulable, unless the pod tolerates
//   node.kubernetes.io/unschedulable), TaintToleration (NoSchedule/NoExecute taints; a node
//   that is not Ready counts as tainted node.kubernetes.io/not-ready:NoSchedule, as the node
//   lifecycle controller would taint it), NodeAffinity (nodeSelector and required node
//   affinity: matchExpressions In/NotIn/Exists/DoesNotExist/Gt/Lt, matchFields
//   metadata.name), NodeResourcesFit (allocatable minus the requests of the bound pods that
//   have not finished, `pods` included; a node that reports no `pods` allows 110).
// The choice: the first fitting node in name order (first fit: it packs nodes in order, so
// later large pods still find empty nodes). A pod that fits nowhere gets PodScheduled=False,
// reason Unschedulable, with kube-scheduler's message (`0/N nodes are available: 2
// Insufficient cpu, 1 node(s) were unschedulable.`, reasons sorted; the preemption sentence
// is left out: there is no preemption here), and waits until capacity frees or a node changes.
//
// The hot path, per pod:
//   1. its class = (nodeSelector, required affinity, tolerations, requests): pods of one class
//      share everything below;
//   2. the class's candidates: the nodes that pass the static filters, found through an
//      index of node labels (a hostname selector looks at one node), sorted by name, kept
//      until a node changes;
//   3. first fit from the class's cursor: nodes before the cursor were full for this class
//      and only a release can change that; releases are logged by node, and a class catching
//      up moves its cursor back to the earliest released candidate. So a burst of identical
//      pods scans each node about once, not once per pod;
//   4. free capacity per node and resource lives in typed arrays indexed by node number,
//      updated from pod events (bound pods are accounted as the informer shows them; the
//      embedded store's watch is synchronous, so a bind is accounted before the next one).
// Waiting pods are parked per class; a release or node change wakes each class that now has
// room, one pod at a time (a pod that binds wakes the next), so a backlog costs nothing
// until capacity frees.

import type { NodeSelectorTerm, Node, Pod, StringMap, Taint, Toleration } from '../api/objects.ts';
import { podRequests } from '../api/resources.ts';
import { compareStrings } from '../api/values.ts';
import type { TopoqueueConfig } from '../controllers/config.ts';
import { nowTimestamp } from '../runtime/clock.ts';
import type { EventRecorder } from '../runtime/events.ts';
import type { Informer } from '../runtime/informer.ts';
import type { ControllerContext, Reconciler } from '../runtime/manager.ts';
import { objectKey, retryOnConflict } from '../runtime/store.ts';
import type { WorkQueue } from '../runtime/work-queue.ts';
import { formatTaint, matchesRequiredAffinity, tolerates } from '../topology/node-match.ts';
import { ResourceIndex } from '../topology/resource-index.ts';
import { AllocatableCache } from '../topology/source.ts';

export const NOT_READY_TAINT: Taint = { key: 'node.kubernetes.io/not-ready', effect: 'NoSchedule' };
export const UNSCHEDULABLE_TAINT: Taint = { key: 'node.kubernetes.io/unschedulable', effect: 'NoSchedule' };
/** Pods a node allows when its allocatable has no `pods` (the kubelet's default maxPods). */
export const DEFAULT_MAX_PODS = 110;

export const FitReason = {
  Unschedulable: 'node(s) were unschedulable',
  NodeAffinity: "node(s) didn't match Pod's node affinity/selector",
  TooManyPods: 'Too many pods',
  Insufficient: (resource: string) => `Insufficient ${resource}`,
  Taint: (t: Taint) => `node(s) had untolerated taint {${t.key}: ${t.value ?? ''}}`,
} as const;

const WAKE_KEY = '\u0000wake';
const LOG_LIMIT = 1 << 20;

/** A pod's requests as (resource index, amount) pairs; index 0 (`pods`) is always 1. */
interface Req {
  idx: Int32Array;
  amt: Float64Array;
}

interface PodClass {
  nodeSelector: StringMap | undefined;
  terms: NodeSelectorTerm[] | undefined;
  tolerations: Toleration[];
  tolerationsKey: string;
  req: Req;
  gen: number;
  cand: Int32Array;
  cursor: number;
  logEpoch: number;
  logPos: number;
  parked: Set<string>;
  /** The unschedulable message, valid for (gen, usage version). */
  diag?: { gen: number; usage: number; message: string };
}

// ---------------------------------------------------------------------------------------
// Nodes: static facts and free capacity, by node number.
// ---------------------------------------------------------------------------------------

class NodeTable {
  readonly names: string[] = [];
  private readonly byName = new Map<string, number>();
  exists = new Uint8Array(16);
  ready = new Uint8Array(16);
  unschedulable = new Uint8Array(16);
  labels: StringMap[] = [];
  taints: Taint[][] = [];
  readonly resources = new ResourceIndex();
  alloc: Float64Array[] = [new Float64Array(16)];
  used: Float64Array[] = [new Float64Array(16)];
  /** Bumped on every change of a node's static facts or allocatable. */
  gen = 0;
  /** Bumped on every change of usage. */
  usage = 0;
  count = 0;
  private rank = new Int32Array(16);
  private rankGen = -1;
  private readonly postings = new Map<string, Set<number>>();
  private readonly allocatable = new AllocatableCache();

  get capacity(): number {
    return this.exists.length;
  }

  /** The node's number, allocating a slot for a name not seen before. */
  slot(name: string): number {
    let n = this.byName.get(name);
    if (n !== undefined) return n;
    n = this.names.length;
    if (n >= this.capacity) this.grow(this.capacity * 2);
    this.names.push(name);
    this.byName.set(name, n);
    this.labels[n] = {};
    this.taints[n] = [];
    return n;
  }

  find(name: string): number | undefined {
    return this.byName.get(name);
  }

  resource(name: string): number {
    const r = this.resources.intern(name);
    while (this.alloc.length <= r) {
      this.alloc.push(new Float64Array(this.capacity));
      this.used.push(new Float64Array(this.capacity));
    }
    return r;
  }

  upsert(node: Node): void {
    const n = this.slot(node.metadata.name);
    this.unpost(n);
    if (!this.exists[n]) this.count++;
    this.exists[n] = 1;
    this.labels[n] = node.metadata.labels ?? {};
    this.taints[n] = node.spec?.taints ?? [];
    this.ready[n] = node.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ? 1 : 0;
    this.unschedulable[n] = node.spec?.unschedulable === true ? 1 : 0;
    let amounts: Record<string, number>;
    try {
      amounts = this.allocatable.parse(node.status?.allocatable);
    } catch {
      amounts = {};
    }
    for (const col of this.alloc) col[n] = 0;
    for (const [name, v] of Object.entries(amounts)) this.alloc[this.resource(name)]![n] = v;
    if (amounts.pods === undefined) this.alloc[0]![n] = DEFAULT_MAX_PODS;
    this.post(n);
    this.gen++;
  }

  remove(name: string): void {
    const n = this.byName.get(name);
    if (n === undefined || !this.exists[n]) return;
    this.unpost(n);
    this.exists[n] = 0;
    this.count--;
    this.gen++;
  }

  /** Nodes with label k=v. */
  posting(k: string, v: string): ReadonlySet<number> | undefined {
    return this.postings.get(`${k}\u0000${v}`);
  }

  /** Node numbers ordered by name (recomputed after nodes change). */
  ranks(): Int32Array {
    if (this.rankGen !== this.gen) {
      const order = this.names.map((_, i) => i).sort((a, b) => compareStrings(this.names[a]!, this.names[b]!));
      for (let r = 0; r < order.length; r++) this.rank[order[r]!] = r;
      this.rankGen = this.gen;
    }
    return this.rank;
  }

  fits(n: number, req: Req): boolean {
    for (let i = 0; i < req.idx.length; i++) {
      const r = req.idx[i]!;
      if (this.alloc[r]![n]! - this.used[r]![n]! < req.amt[i]!) return false;
    }
    return true;
  }

  add(n: number, req: Req, sign: 1 | -1): void {
    for (let i = 0; i < req.idx.length; i++) this.used[req.idx[i]!]![n]! += sign * req.amt[i]!;
    this.usage++;
  }

  private post(n: number): void {
    const l = this.labels[n]!;
    for (const k in l) {
      const key = `${k}\u0000${l[k]}`;
      let s = this.postings.get(key);
      if (!s) this.postings.set(key, (s = new Set()));
      s.add(n);
    }
  }

  private unpost(n: number): void {
    if (!this.exists[n]) return;
    const l = this.labels[n]!;
    for (const k in l) this.postings.get(`${k}\u0000${l[k]}`)?.delete(n);
  }

  private grow(cap: number): void {
    const g8 = (a: Uint8Array) => {
      const b = new Uint8Array(cap);
      b.set(a);
      return b;
    };
    this.exists = g8(this.exists);
    this.ready = g8(this.ready);
    this.unschedulable = g8(this.unschedulable);
    const r = new Int32Array(cap);
    r.set(this.rank);
    this.rank = r;
    const gf = (a: Float64Array) => {
      const b = new Float64Array(cap);
      b.set(a);
      return b;
    };
    this.alloc = this.alloc.map(gf);
    this.used = this.used.map(gf);
  }
}

// ---------------------------------------------------------------------------------------
// Filters
// ---------------------------------------------------------------------------------------

const tolerated = (taint: Taint, tolerations: readonly Toleration[]): boolean => tolerations.some((t) => tolerates(t, taint));

/** The first of the filters before NodeAffinity that node `n` fails, or undefined. */
function taintFailure(nodes: NodeTable, n: number, tolerations: readonly Toleration[]): string | undefined {
  if (nodes.unschedulable[n] && !tolerated(UNSCHEDULABLE_TAINT, tolerations)) return FitReason.Unschedulable;
  if (!nodes.ready[n] && !tolerated(NOT_READY_TAINT, tolerations)) return FitReason.Taint(NOT_READY_TAINT);
  for (const taint of nodes.taints[n]!) {
    if ((taint.effect === 'NoSchedule' || taint.effect === 'NoExecute') && !tolerated(taint, tolerations)) return FitReason.Taint(taint);
  }
  return undefined;
}

/** The first filter node `n` fails for the class (resources aside), or undefined. */
function staticFailure(nodes: NodeTable, n: number, c: PodClass): string | undefined {
  const t = taintFailure(nodes, n, c.tolerations);
  if (t) return t;
  const labels = nodes.labels[n]!;
  if (c.nodeSelector) for (const k in c.nodeSelector) if (labels[k] !== c.nodeSelector[k]) return FitReason.NodeAffinity;
  if (!matchesRequiredAffinity(labels, nodes.names[n]!, c.terms)) return FitReason.NodeAffinity;
  return undefined;
}

/** Per node: the taint filters' verdicts for one set of tolerations (they do not depend on the rest of the pod). */
interface TaintHistogram {
  gen: number;
  hist: Map<string, number>;
  /** Nodes that pass them. */
  pass: number;
}

function taintHistogram(nodes: NodeTable, tolerations: readonly Toleration[]): TaintHistogram {
  const hist = new Map<string, number>();
  let pass = 0;
  for (let n = 0; n < nodes.names.length; n++) {
    if (!nodes.exists[n]) continue;
    const t = taintFailure(nodes, n, tolerations);
    if (t) hist.set(t, (hist.get(t) ?? 0) + 1);
    else pass++;
  }
  return { gen: nodes.gen, hist, pass };
}

/**
 * kube-scheduler's FitError message for a pod of class `c`, whose candidates are current:
 * the taint filters' histogram (shared by the classes with the same tolerations), the nodes
 * that pass them but are not candidates failed NodeAffinity, and the candidates are short of
 * some resource.
 */
function unschedulableMessage(nodes: NodeTable, c: PodClass, taints: TaintHistogram): string {
  if (nodes.count === 0) return 'no nodes available to schedule pods';
  const hist = new Map(taints.hist);
  const bump = (r: string, k = 1) => hist.set(r, (hist.get(r) ?? 0) + k);
  if (taints.pass > c.cand.length) bump(FitReason.NodeAffinity, taints.pass - c.cand.length);
  for (const n of c.cand) {
    for (let i = 0; i < c.req.idx.length; i++) {
      const r = c.req.idx[i]!;
      if (nodes.alloc[r]![n]! - nodes.used[r]![n]! < c.req.amt[i]!)
        bump(r === 0 ? FitReason.TooManyPods : FitReason.Insufficient(nodes.resources.names[r]!));
    }
  }
  const parts = [...hist].map(([r, k]) => `${k} ${r}`).sort();
  return `0/${nodes.count} nodes are available: ${parts.join(', ')}.`;
}

// ---------------------------------------------------------------------------------------
// The binder
// ---------------------------------------------------------------------------------------

export function bindable(p: Pod): boolean {
  const phase = p.status?.phase;
  if (typeof p.spec !== 'object' || p.spec === null) return false;
  return (
    !p.spec.nodeName &&
    (p.spec.schedulingGates?.length ?? 0) === 0 &&
    !p.metadata.deletionTimestamp &&
    phase !== 'Succeeded' &&
    phase !== 'Failed'
  );
}

/** Does the pod hold capacity on a node (bound and not finished)? */
const holds = (p: Pod): boolean => !!p.spec?.nodeName && p.status?.phase !== 'Succeeded' && p.status?.phase !== 'Failed';

export class Binder {
  readonly nodes = new NodeTable();
  private readonly classes = new Map<string, PodClass>();
  /** Classes with parked pods, in the order they first parked one. */
  private readonly waiting = new Set<PodClass>();
  private readonly parkedIn = new Map<string, PodClass>();
  private readonly bound = new Map<string, { node: number; req: Req }>();
  private readonly reqCache = new Map<string, Req | string>();
  private readonly taintHistograms = new Map<string, TaintHistogram>();
  private log: number[] = [];
  private logEpoch = 0;
  private ctx!: ControllerContext<TopoqueueConfig>;
  private queue!: WorkQueue;
  private recorder!: EventRecorder;
  private pods!: Informer<Pod>;

  setup(ctx: ControllerContext<TopoqueueConfig>, queue: WorkQueue, recorder: EventRecorder): void {
    this.ctx = ctx;
    this.queue = queue;
    this.recorder = recorder;
    this.pods = ctx.informers.for('Pod');
    const nodes = ctx.informers.for('Node');
    nodes.addHandler({
      add: (n) => this.nodeChanged(n),
      update: (_, n) => this.nodeChanged(n),
      delete: (n) => {
        this.nodes.remove(n.metadata.name);
        queue.add(WAKE_KEY);
      },
    });
    this.pods.addHandler({
      add: (p) => this.podChanged(objectKey(p), p),
      update: (_, p) => this.podChanged(objectKey(p), p),
      delete: (p) => this.podChanged(objectKey(p), undefined),
    });
  }

  private nodeChanged(n: Node): void {
    this.nodes.upsert(n);
    this.queue.add(WAKE_KEY);
  }

  private podChanged(key: string, p: Pod | undefined): void {
    const prev = this.bound.get(key);
    const nodeNow = p && holds(p) ? this.nodes.slot(p.spec.nodeName!) : undefined;
    if (prev && prev.node !== nodeNow) {
      this.nodes.add(prev.node, prev.req, -1);
      this.bound.delete(key);
      this.released(prev.node);
    }
    if (nodeNow !== undefined && (!prev || prev.node !== nodeNow)) {
      const req = this.requestsOf(p!);
      const r = typeof req === 'string' ? this.podsOnly() : req;
      this.nodes.add(nodeNow, r, 1);
      this.bound.set(key, { node: nodeNow, req: r });
    }
    if (p && bindable(p)) this.queue.add(key);
    else if (!p) this.unpark(key);
  }

  private released(n: number): void {
    if (this.log.length >= LOG_LIMIT) {
      this.log = [];
      this.logEpoch++;
    }
    this.log.push(n);
    if (this.waiting.size > 0) this.queue.add(WAKE_KEY);
  }

  private park(key: string, c: PodClass): void {
    const was = this.parkedIn.get(key);
    if (was === c) return;
    if (was) this.unpark(key);
    if (c.parked.size === 0) this.waiting.add(c);
    c.parked.add(key);
    this.parkedIn.set(key, c);
  }

  /** Takes `key` off its class's waiting list; returns the class. */
  private unpark(key: string): PodClass | undefined {
    const c = this.parkedIn.get(key);
    if (!c) return undefined;
    this.parkedIn.delete(key);
    c.parked.delete(key);
    if (c.parked.size === 0) this.waiting.delete(c);
    return c;
  }

  async reconcile(key: string): Promise<void> {
    if (key === WAKE_KEY) return this.wake();
    const pod = this.pods.get(key);
    if (!pod || !bindable(pod)) return this.next(key);
    const c = this.classOf(pod);
    if (typeof c === 'string') {
      this.unpark(key);
      await this.markUnschedulable(pod, 'SchedulerError', c);
      return;
    }
    const n = this.findNode(c);
    if (n < 0) {
      this.park(key, c);
      if (!c.diag || c.diag.gen !== this.nodes.gen || c.diag.usage !== this.nodes.usage) {
        let th = this.taintHistograms.get(c.tolerationsKey);
        if (!th || th.gen !== this.nodes.gen) this.taintHistograms.set(c.tolerationsKey, (th = taintHistogram(this.nodes, c.tolerations)));
        c.diag = { gen: this.nodes.gen, usage: this.nodes.usage, message: unschedulableMessage(this.nodes, c, th) };
      }
      await this.markUnschedulable(pod, 'Unschedulable', c.diag.message);
      return;
    }
    // The informer's copy is current (resourceVersion precondition; a conflict is retried
    // by the manager); the store copies what it is given, so a shallow copy will do.
    await this.ctx.store.update<Pod>({ ...pod, spec: { ...pod.spec, nodeName: this.nodes.names[n]! } });
    this.next(key);
  }

  /** `key` is bound or no longer waits: if it was parked, wake the next waiting pod of its class. */
  private next(key: string): void {
    const c = this.unpark(key);
    const first = c?.parked.values().next();
    if (first && !first.done) this.queue.add(first.value);
  }

  /** For each class with waiting pods that now has room somewhere, retry its first pod. */
  private wake(): void {
    for (const c of this.waiting) {
      const first = c.parked.values().next();
      if (first.done) {
        this.waiting.delete(c);
        continue;
      }
      if (this.findNode(c) >= 0) this.queue.add(first.value);
    }
  }

  private async markUnschedulable(pod: Pod, reason: string, message: string): Promise<void> {
    const have = pod.status?.conditions?.find((x) => x.type === 'PodScheduled');
    if (have?.status === 'False' && have.reason === reason && have.message === message) return;
    const now = nowTimestamp(this.ctx.clock);
    await retryOnConflict(
      this.ctx.store,
      'Pod',
      pod.metadata.namespace,
      pod.metadata.name,
      (p) => {
        if (!bindable(p) || p.metadata.uid !== pod.metadata.uid) return false;
        const conditions = (p.status?.conditions ?? []).filter((x) => x.type !== 'PodScheduled');
        conditions.push({
          type: 'PodScheduled',
          status: 'False',
          reason,
          message,
          lastTransitionTime: have?.status === 'False' ? (have.lastTransitionTime ?? now) : now,
        });
        p.status = { ...p.status, phase: p.status?.phase ?? 'Pending', conditions };
      },
      { status: true },
    );
    this.recorder.event(pod, 'Warning', 'FailedScheduling', message);
  }

  // -- classes --------------------------------------------------------------------------

  private podsOnly(): Req {
    return { idx: Int32Array.of(0), amt: Float64Array.of(1) };
  }

  /** The pod's requests, or why they cannot be read. */
  private requestsOf(p: Pod): Req | string {
    const key = requestKey(p);
    let r = this.reqCache.get(key);
    if (r === undefined) {
      try {
        const amounts = podRequests(p.spec);
        const entries = Object.entries(amounts).filter(([name, v]) => name !== 'pods' && v > 0);
        const idx = new Int32Array(entries.length + 1);
        const amt = new Float64Array(entries.length + 1);
        amt[0] = 1;
        entries.forEach(([name, v], i) => {
          idx[i + 1] = this.nodes.resource(name);
          amt[i + 1] = v;
        });
        r = { idx, amt };
      } catch (e) {
        r = `the pod's resource requests cannot be read: ${e instanceof Error ? e.message : String(e)}`;
      }
      if (this.reqCache.size > 50_000) this.reqCache.clear();
      this.reqCache.set(key, r);
    }
    return r;
  }

  private classOf(p: Pod): PodClass | string {
    const req = this.requestsOf(p);
    if (typeof req === 'string') return req;
    const terms = p.spec.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms;
    const tolerationsKey = JSON.stringify(p.spec.tolerations ?? null);
    const key = `${requestKey(p)}\u0001${JSON.stringify(p.spec.nodeSelector ?? null)}\u0001${JSON.stringify(terms ?? null)}\u0001${tolerationsKey}`;
    let c = this.classes.get(key);
    if (!c) {
      if (this.classes.size > 100_000) for (const [k, old] of this.classes) if (old.parked.size === 0) this.classes.delete(k);
      c = {
        nodeSelector: p.spec.nodeSelector,
        terms,
        tolerations: p.spec.tolerations ?? [],
        tolerationsKey,
        req,
        gen: -1,
        cand: new Int32Array(0),
        cursor: 0,
        logEpoch: -1,
        logPos: 0,
        parked: new Set(),
      };
      this.classes.set(key, c);
    }
    return c;
  }

  /** Nodes that pass the class's static filters, in name order. */
  private candidates(c: PodClass): Int32Array {
    const nodes = this.nodes;
    let base: Iterable<number> | undefined;
    if (c.nodeSelector) {
      let best: ReadonlySet<number> | undefined;
      for (const k in c.nodeSelector) {
        const s = nodes.posting(k, c.nodeSelector[k]!);
        if (!s) return new Int32Array(0);
        if (!best || s.size < best.size) best = s;
      }
      base = best;
    }
    const out: number[] = [];
    if (base) {
      for (const n of base) if (nodes.exists[n] && staticFailure(nodes, n, c) === undefined) out.push(n);
    } else {
      for (let n = 0; n < nodes.names.length; n++) if (nodes.exists[n] && staticFailure(nodes, n, c) === undefined) out.push(n);
    }
    const rank = nodes.ranks();
    out.sort((a, b) => rank[a]! - rank[b]!);
    return Int32Array.from(out);
  }

  /** First fit from the class's cursor (see the header); -1 when nothing fits. */
  private findNode(c: PodClass): number {
    const nodes = this.nodes;
    if (c.gen !== nodes.gen) {
      c.cand = this.candidates(c);
      c.gen = nodes.gen;
      c.cursor = 0;
    } else if (c.logEpoch !== this.logEpoch || this.log.length - c.logPos > c.cand.length || c.cand.length <= 8) {
      c.cursor = 0;
    } else if (c.cursor > 0) {
      const rank = nodes.ranks();
      for (let i = c.logPos; i < this.log.length; i++) {
        const pos = lowerBound(c.cand, rank, rank[this.log[i]!]!);
        if (pos < c.cand.length && c.cand[pos] === this.log[i] && pos < c.cursor) c.cursor = pos;
      }
    }
    c.logEpoch = this.logEpoch;
    c.logPos = this.log.length;
    for (let pos = c.cursor; pos < c.cand.length; pos++) {
      const n = c.cand[pos]!;
      if (nodes.fits(n, c.req)) {
        c.cursor = pos;
        return n;
      }
    }
    c.cursor = c.cand.length;
    return -1;
  }

  /** Free capacity of a node per resource (tests and reports). */
  free(node: string): Record<string, number> | undefined {
    const n = this.nodes.find(node);
    if (n === undefined || !this.nodes.exists[n]) return undefined;
    const out: Record<string, number> = {};
    this.nodes.resources.names.forEach((name, r) => (out[name] = this.nodes.alloc[r]![n]! - this.nodes.used[r]![n]!));
    return out;
  }
}

/** The first position in `cand` (sorted by rank) whose rank is >= r. */
function lowerBound(cand: Int32Array, rank: Int32Array, r: number): number {
  let lo = 0;
  let hi = cand.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (rank[cand[mid]!]! < r) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** What a pod's effective request depends on, as a string. */
function requestKey(p: Pod): string {
  let s = '';
  for (const c of p.spec.containers ?? []) s += `c${JSON.stringify(c.resources ?? null)}`;
  for (const c of p.spec.initContainers ?? []) s += `i${c.restartPolicy ?? ''}${JSON.stringify(c.resources ?? null)}`;
  if (p.spec.overhead) s += `o${JSON.stringify(p.spec.overhead)}`;
  return s;
}

export function binder(): Reconciler<TopoqueueConfig> & { readonly state: Binder } {
  const state = new Binder();
  return {
    name: 'binder',
    state,
    setup: (ctx, queue, recorder) => state.setup(ctx, queue, recorder),
    reconcile: (key) => state.reconcile(key),
  };
}

export { formatTaint };
