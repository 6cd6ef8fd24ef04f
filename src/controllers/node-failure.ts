// Node failures for TAS Workloads (kueue-core §1f "Node failure handling", kueue-tas §13):
// a failed node assigned to an admitted Workload goes into its status.unhealthyNodes, where
// the scheduler's second pass finds a replacement for all of them together (with
// TASFailedNodeReplacement off, Kueue's rule: a second failed node evicts the Workload).
//
// Per node key:
// 1. the node's state: deleted or without a Ready condition -> failed at once; NotReady for
//    config.nodeFailureDelayMs (since the Ready condition's lastTransitionTime, else since
//    first seen) -> failed, before that a timer; Ready -> its NoSchedule/NoExecute taints
//    (`spec.unschedulable` as the unschedulable taint; the not-ready/unreachable lifecycle
//    taints are left to the Ready rule);
// 2. per Workload whose hostname-lowest assignment names the node (or whose unhealthyNodes
//    does): a tainted node fails for a Workload when a PodSet assigned there does not
//    tolerate a taint (template + flavor + admission-check tolerations; a NoExecute taint
//    tolerated only for tolerationSeconds counts as untolerated) and none of the Workload's
//    pods bound there is still running (TASReplaceNodeOnNodeTaints); failed -> add to
//    unhealthyNodes (beside the nodes already there), or, with the replacement gate off and
//    a different node already there, Evicted=True NodeFailures;
//    healthy again (or no longer assigned) -> removed from unhealthyNodes;
// 3. pods of the Workload on a failed node that are not terminal (bound there, or ungated
//    and pending with the node's hostname selector) are marked Failed with the
//    TerminatedByKueue condition, so their job controller replaces them; pending ungated
//    pods whose hostname is no longer in their PodSet's assignment (strays after a
//    replacement) likewise.
// Pod events that stop pods on an unhealthy-looking node enqueue it after NODE_BATCH_MS.
// Keys are Node names, and so are unhealthyNodes; assignments and the pods' hostname
// selectors record the node's `kubernetes.io/hostname` label, which may differ (a cloud's
// `pool-a-7f3a` labelled `gpu-017`): NodeNames translates, remembering deleted nodes.

import { WorkloadCondition, isTrue, setCondition } from '../admission/conditions.ts';
import { HOSTNAME_LABEL, KueueAnnotation, KueueLabel, KueueSchedulingGate } from '../api/keys.ts';
import type { Condition, Node, Pod, PodSetAssignment, ResourceFlavor, Taint, Toleration, Workload } from '../api/objects.ts';
import { isTerminal } from '../api/objects.ts';
import { formatTime, parseTime } from '../api/time.ts';
import { compareStrings } from '../api/values.ts';
import { decodeAssignment } from '../placement/tas-usage.ts';
import { nowSeconds } from '../runtime/clock.ts';
import type { EventRecorder } from '../runtime/events.ts';
import type { Informer } from '../runtime/informer.ts';
import type { ControllerContext, Reconciler, ReconcileResult } from '../runtime/manager.ts';
import { objectKey, retryOnConflict } from '../runtime/store.ts';
import type { WorkQueue } from '../runtime/work-queue.ts';
import { formatTaint, tolerates } from '../topology/node-match.ts';
import type { TopoqueueConfig } from './config.ts';

export const NODE_FAILURE = 'node-failure';
/** Workload index: node names of hostname-lowest assignments, and of status.unhealthyNodes. */
export const WORKLOAD_BY_NODE = 'node-failure/node';
/** Pod index: spec.nodeName and the hostname nodeSelector. */
export const POD_BY_NODE = 'node-failure/pod-node';
/** Pod index: `ns/workload` from the workload annotation. */
export const POD_BY_WORKLOAD = 'node-failure/workload';
/** Batching of pod events (Kueue's TAS node controller: 100 ms). */
export const NODE_BATCH_MS = 100;

export const NODE_FAILURES = 'NodeFailures';
export const TERMINATED_BY_KUEUE = 'TerminatedByKueue';
export const UNSCHEDULABLE_ON_ASSIGNED_NODE = 'UnschedulableOnAssignedNode';
export const POD_TERMINATED_BY_KUEUE = 'PodTerminatedByKueue';
export const TAINT_TERMINATION_MESSAGE = 'Pod terminated by Kueue NodeController due to node taint';
export const UNSCHEDULABLE_TAINT = 'node.kubernetes.io/unschedulable';
/** Taints the node lifecycle controller puts on NotReady nodes: the Ready rule owns them. */
const LIFECYCLE_TAINTS: ReadonlySet<string> = new Set(['node.kubernetes.io/not-ready', 'node.kubernetes.io/unreachable']);

export function multipleNodeFailuresMessage(nodes: readonly string[]): string {
  return `Workload eviction triggered due to multiple TAS assigned node failures, including: ${nodes.join(', ')}`;
}

export type NodeState = { kind: 'failed'; why: string } | { kind: 'notReady'; remainingMs: number } | { kind: 'ready'; taints: Taint[] };

/** Which PodSets of a Workload are assigned to each node (hostname-lowest assignments only). */
export type HostsOfWorkload = ReadonlyMap<string, ReadonlySet<string>>;

const EMPTY_HOSTS: HostsOfWorkload = new Map();
const hostsCache = new WeakMap<object, HostsOfWorkload>();

/**
 * Node -> PodSets of the Workload's hostname-lowest topology assignments. Cached per
 * status.admission object: pass only objects from the store or an informer (read-only,
 * replaced on change). The embedded store shares an unchanged admission between versions
 * of a Workload, so a status write of other fields (conditions) reads the same answer,
 * the same Map, without decoding the assignments again.
 */
export function hostsOf(w: Workload): HostsOfWorkload {
  const admission = w.status?.admission;
  if (admission === undefined || admission === null) return EMPTY_HOSTS;
  const cached = hostsCache.get(admission);
  if (cached) return cached;
  const result = assignedHosts(w);
  hostsCache.set(admission, result);
  return result;
}

/** hostsOf without the cache (for private copies). */
export function assignedHosts(w: Workload): HostsOfWorkload {
  let out: Map<string, Set<string>> | undefined;
  for (const psa of w.status?.admission?.podSetAssignments ?? []) {
    const levels = psa.topologyAssignment?.levels;
    if (!levels || levels[levels.length - 1] !== HOSTNAME_LABEL) continue;
    let domains;
    try {
      domains = decodeAssignment(psa.topologyAssignment!, {}).domains;
    } catch {
      continue; // the ungater reports a malformed assignment
    }
    out ??= new Map();
    for (const d of domains) {
      const host = d.values[d.values.length - 1]!;
      let s = out.get(host);
      if (!s) out.set(host, (s = new Set()));
      s.add(psa.name);
    }
  }
  return out ?? EMPTY_HOSTS;
}

export function unhealthyNodeNames(w: Workload): string[] {
  return (w.status?.unhealthyNodes ?? []).map((n) => n.name);
}

/** A node's state for TAS (step 1). `firstNotReady` keeps when a NotReady without a transition time was first seen. */
export function nodeState(
  name: string,
  node: Node | undefined,
  nowMs: number,
  delayMs: number,
  firstNotReady: Map<string, number>,
): NodeState {
  if (!node) return { kind: 'failed', why: `node ${name} was deleted` };
  const ready = node.status?.conditions?.find((c) => c.type === 'Ready');
  if (!ready) return { kind: 'failed', why: `node ${name} has no Ready condition` };
  if (ready.status !== 'True') {
    const t = parseTime((ready as { lastTransitionTime?: string }).lastTransitionTime);
    let since = t === undefined ? firstNotReady.get(name) : t * 1000;
    if (since === undefined) {
      since = nowMs;
      firstNotReady.set(name, nowMs);
    }
    const elapsed = nowMs - since;
    if (elapsed >= delayMs) return { kind: 'failed', why: `node ${name} is NotReady for ${Math.floor(elapsed / 1000)}s` };
    return { kind: 'notReady', remainingMs: Math.min(delayMs, delayMs - elapsed) };
  }
  firstNotReady.delete(name);
  return { kind: 'ready', taints: schedulingTaints(node) };
}

/** NoSchedule/NoExecute taints, the unschedulable flag as its taint, lifecycle taints left out. */
export function schedulingTaints(node: Node): Taint[] {
  const out: Taint[] = [];
  for (const t of node.spec?.taints ?? []) {
    if ((t.effect === 'NoSchedule' || t.effect === 'NoExecute') && !LIFECYCLE_TAINTS.has(t.key)) out.push(t);
  }
  if (node.spec?.unschedulable === true && !out.some((t) => t.key === UNSCHEDULABLE_TAINT))
    out.push({ key: UNSCHEDULABLE_TAINT, effect: 'NoSchedule' });
  return out;
}

/** What a node looks like from a handler: nothing to do for TAS when true. */
function looksHealthy(node: Node | undefined): boolean {
  if (!node) return false;
  if (node.status?.conditions?.find((c) => c.type === 'Ready')?.status !== 'True') return false;
  return schedulingTaints(node).length === 0;
}

/**
 * The first taint the pods cannot stay under for good: none of the tolerations matches it,
 * or (NoExecute) each match is only for tolerationSeconds. It answers "must the pods leave
 * this node?"; topology/node-match.ts's `untoleratedTaint` answers "may a pod be placed
 * here?", for which a time-limited toleration is enough.
 */
export function taintNotToleratedForGood(taints: readonly Taint[], tolerations: readonly Toleration[]): Taint | undefined {
  for (const taint of taints) {
    const matching = tolerations.filter((t) => tolerates(t, taint));
    if (matching.length === 0) return taint;
    if (taint.effect === 'NoExecute' && matching.every((t) => t.tolerationSeconds !== undefined)) return taint;
  }
  return undefined;
}

interface PodSetUpdate {
  name: string;
  tolerations?: Toleration[];
}

/** Template + flavor + admission-check tolerations of one PodSet (the pods' effective ones). */
export function effectiveTolerations(
  w: Workload,
  psa: PodSetAssignment,
  flavor: (name: string) => ResourceFlavor | undefined,
): Toleration[] {
  const ps = w.spec.podSets.find((p) => p.name === psa.name);
  const out: Toleration[] = [...(ps?.template.spec.tolerations ?? [])];
  for (const f of new Set(Object.values(psa.flavors ?? {}))) out.push(...(flavor(f)?.spec.tolerations ?? []));
  const checks = w.status?.admissionChecks;
  if (Array.isArray(checks)) {
    for (const c of checks as { podSetUpdates?: PodSetUpdate[] }[]) {
      for (const u of c.podSetUpdates ?? []) if (u.name === psa.name) out.push(...(u.tolerations ?? []));
    }
  }
  return out;
}

const gated = (p: Pod): boolean => (p.spec.schedulingGates ?? []).some((g) => g.name === KueueSchedulingGate.Topology);
/** Ungated, unbound and Pending: waiting for a binder that will never place it on `node`. */
const pendingOn = (p: Pod, node: string): boolean =>
  !isTerminal(p) && !p.spec.nodeName && !gated(p) && p.spec.nodeSelector?.[HOSTNAME_LABEL] === node;

function podNodes(p: Pod): string[] {
  const a = p.spec.nodeName;
  const b = p.spec.nodeSelector?.[HOSTNAME_LABEL];
  if (a && b && a !== b) return [a, b];
  return a ? [a] : b ? [b] : [];
}

function podWorkloadKey(p: Pod): string | undefined {
  const wl = p.metadata.annotations?.[KueueAnnotation.Workload];
  return wl === undefined ? undefined : `${p.metadata.namespace ?? 'default'}/${wl}`;
}

const workloadKey = (w: Workload): string => `${w.metadata.namespace ?? 'default'}/${w.metadata.name}`;

/** Node name <-> hostname label, for the nodes whose label differs from the name; kept after a node is deleted. */
export class NodeNames {
  private readonly hostnameByName = new Map<string, string>();
  private readonly namesByHostname = new Map<string, Set<string>>();

  /** Records a node's hostname label as seen now. */
  see(n: Node): void {
    const name = n.metadata.name;
    const h = n.metadata.labels?.[HOSTNAME_LABEL];
    const prev = this.hostnameByName.get(name);
    if (prev === h) return;
    if (prev !== undefined) {
      const s = this.namesByHostname.get(prev);
      s?.delete(name);
      if (s?.size === 0) this.namesByHostname.delete(prev);
    }
    if (h === undefined || h === name) {
      this.hostnameByName.delete(name);
      return;
    }
    this.hostnameByName.set(name, h);
    let s = this.namesByHostname.get(h);
    if (!s) this.namesByHostname.set(h, (s = new Set()));
    s.add(name);
  }

  /** The hostname value assignments record for the Node `name`. */
  hostname(name: string): string {
    return this.hostnameByName.get(name) ?? name;
  }

  /** The Node names (queue keys) behind a value from an assignment or a pod: a name, or a hostname label. */
  names(value: string, isNode: (name: string) => boolean): string[] {
    if (isNode(value) || this.hostnameByName.has(value)) return [value];
    const s = this.namesByHostname.get(value);
    return s ? [...s].sort() : [value];
  }
}

export function nodeFailureController(): Reconciler<TopoqueueConfig> {
  return new NodeFailureController();
}

class NodeFailureController implements Reconciler<TopoqueueConfig> {
  readonly name = NODE_FAILURE;
  private ctx!: ControllerContext<TopoqueueConfig>;
  private recorder!: EventRecorder;
  private nodes!: Informer<Node>;
  private workloads!: Informer<Workload>;
  private pods!: Informer<Pod>;
  private flavors!: Informer<ResourceFlavor>;
  private readonly firstNotReady = new Map<string, number>();
  private readonly names = new NodeNames();

  setup(c: ControllerContext<TopoqueueConfig>, queue: WorkQueue, rec: EventRecorder): void {
    this.ctx = c;
    this.recorder = rec;
    this.nodes = c.informers.for('Node');
    this.workloads = c.informers.for('Workload');
    this.pods = c.informers.for('Pod');
    this.flavors = c.informers.for('ResourceFlavor');

    this.workloads.addIndex(WORKLOAD_BY_NODE, (w) => {
      const hosts = hostsOf(w);
      const bad = unhealthyNodeNames(w);
      if (bad.length === 0) return [...hosts.keys()];
      return [...new Set([...hosts.keys(), ...bad])];
    });
    this.pods.addIndex(POD_BY_NODE, podNodes);
    this.pods.addIndex(POD_BY_WORKLOAD, (p) => {
      const k = podWorkloadKey(p);
      return k === undefined ? [] : [k];
    });

    const health = (n: Node | undefined): string => {
      if (!n) return 'gone';
      const r = n.status?.conditions?.find((x) => x.type === 'Ready') as { status?: string; lastTransitionTime?: string } | undefined;
      return JSON.stringify([r?.status, r?.lastTransitionTime, n.spec?.taints, n.spec?.unschedulable]);
    };
    this.nodes.addHandler({
      add: (n) => {
        this.names.see(n);
        queue.add(n.metadata.name);
      },
      update: (old, n) => {
        this.names.see(n);
        if (health(old) !== health(n) || old.metadata.labels?.[HOSTNAME_LABEL] !== n.metadata.labels?.[HOSTNAME_LABEL])
          queue.add(n.metadata.name);
      },
      delete: (n) => queue.add(n.metadata.name),
    });
    /** Queue keys (node names) for a value from an assignment or a pod. */
    const keysOf = (value: string): string[] => this.names.names(value, (name) => this.nodes.get(name) !== undefined);

    const enqueueWorkloadNodes = (old: Workload | undefined, w: Workload): void => {
      const hosts = hostsOf(w);
      const oldHosts = old ? hostsOf(old) : EMPTY_HOSTS;
      for (const name of unhealthyNodeNames(w)) queue.add(name);
      if (old) for (const name of unhealthyNodeNames(old)) queue.add(name);
      if (hosts === oldHosts || hosts.size === 0) return;
      for (const h of hosts.keys()) if (!oldHosts.has(h)) for (const n of keysOf(h)) if (!looksHealthy(this.nodes.get(n))) queue.add(n);
      // Pending ungated pods whose host the assignment dropped (a replacement) are strays.
      let dropped = false;
      for (const h of oldHosts.keys()) {
        if (!hosts.has(h)) {
          dropped = true;
          break;
        }
      }
      if (!dropped) return;
      for (const p of this.pods.byIndex(POD_BY_WORKLOAD, workloadKey(w))) {
        const h = p.spec.nodeSelector?.[HOSTNAME_LABEL];
        const ps = p.metadata.labels?.[KueueLabel.PodSet];
        if (h !== undefined && ps !== undefined && pendingOn(p, h) && !hosts.get(h)?.has(ps)) for (const n of keysOf(h)) queue.add(n);
      }
    };
    this.workloads.addHandler({
      add: (w) => enqueueWorkloadNodes(undefined, w),
      update: (old, w) => enqueueWorkloadNodes(old, w),
      delete: (w) => {
        for (const name of unhealthyNodeNames(w)) queue.add(name);
      },
    });

    const stopped = (p: Pod): boolean => isTerminal(p) || p.metadata.deletionTimestamp !== undefined;
    const onPod = (old: Pod | undefined, p: Pod, deleted: boolean): void => {
      const key = podWorkloadKey(p);
      if (key === undefined) return;
      const changed = deleted || !old || stopped(old) !== stopped(p) || gated(old) !== gated(p) || old.spec.nodeName !== p.spec.nodeName;
      if (!changed) return;
      for (const n of new Set([...(old ? podNodes(old) : []), ...podNodes(p)].flatMap(keysOf))) {
        if (!looksHealthy(this.nodes.get(n))) {
          queue.addAfter(n, NODE_BATCH_MS);
          continue;
        }
        // Ungated onto a host its PodSet's assignment does not name: a stray.
        const w = this.workloads.get(key);
        const ps = p.metadata.labels?.[KueueLabel.PodSet];
        const h = this.names.hostname(n);
        if (!deleted && w && ps !== undefined && pendingOn(p, h) && hostsOf(w).size > 0 && !hostsOf(w).get(h)?.has(ps))
          queue.addAfter(n, NODE_BATCH_MS);
      }
    };
    this.pods.addHandler({
      add: (p) => onPod(undefined, p, false),
      update: (old, p) => onPod(old, p, false),
      delete: (p) => onPod(undefined, p, true),
    });
  }

  async reconcile(name: string): Promise<ReconcileResult | void> {
    const current = this.nodes.get(name);
    if (current) this.names.see(current);
    const state = nodeState(name, current, this.ctx.clock.now(), this.ctx.config.nodeFailureDelayMs, this.firstNotReady);
    const affected = [...new Set(this.valuesOf(name).flatMap((v) => this.workloads.byIndex(WORKLOAD_BY_NODE, v)))].sort((a, b) =>
      compareStrings(objectKey(a), objectKey(b)),
    );
    for (const w of affected) await this.handle(w, name, state);
    await this.failStrays(name);
    if (state.kind === 'notReady' && affected.length > 0) return { requeueAfterMs: state.remainingMs };
  }

  /** Values indexed for a node: its name, and its hostname label when that differs. */
  private valuesOf(node: string): string[] {
    const h = this.names.hostname(node);
    return h === node ? [node] : [node, h];
  }

  /** Pods of `w` on `node` (bound there, or with its hostname selector). */
  private podsAt(w: Workload, node: string): Pod[] {
    const key = workloadKey(w);
    const out = new Set<Pod>();
    for (const v of this.valuesOf(node)) for (const p of this.pods.byIndex(POD_BY_NODE, v)) if (podWorkloadKey(p) === key) out.add(p);
    return [...out];
  }

  private async failPod(p: Pod, message: string): Promise<void> {
    const uid = p.metadata.uid;
    const now = nowSeconds(this.ctx.clock);
    const r = await retryOnConflict(
      this.ctx.store,
      'Pod',
      p.metadata.namespace,
      p.metadata.name,
      (cur) => {
        if (cur.metadata.uid !== uid || isTerminal(cur)) return false;
        const conditions: Condition[] = (cur.status?.conditions ?? []).filter((c) => c.type !== TERMINATED_BY_KUEUE);
        conditions.push({
          type: TERMINATED_BY_KUEUE,
          status: 'True',
          reason: UNSCHEDULABLE_ON_ASSIGNED_NODE,
          message,
          lastTransitionTime: formatTime(now),
        });
        cur.status = { ...(cur.status ?? {}), phase: 'Failed', conditions };
      },
      { status: true },
    );
    if (r.outcome === 'written') this.recorder.event(r.object, 'Warning', POD_TERMINATED_BY_KUEUE, message);
  }

  /** Adds `node` to unhealthyNodes; without TASFailedNodeReplacement, evicts when another node is there already. */
  private async markUnhealthy(w: Workload, node: string, why: string): Promise<void> {
    const now = nowSeconds(this.ctx.clock);
    let evicted: string | undefined;
    const r = await retryOnConflict(
      this.ctx.store,
      'Workload',
      w.metadata.namespace,
      w.metadata.name,
      (cur) => {
        evicted = undefined;
        if (
          cur.metadata.uid !== w.metadata.uid ||
          isTrue(cur, WorkloadCondition.Evicted) ||
          isTrue(cur, WorkloadCondition.Finished) ||
          !cur.status?.admission
        )
          return false;
        const listed = unhealthyNodeNames(cur);
        if (listed.includes(node) || !assignedHosts(cur).has(this.names.hostname(node))) return false;
        if (listed.length > 0 && !this.ctx.config.gates.TASFailedNodeReplacement) {
          evicted = multipleNodeFailuresMessage([...listed, node]);
          setCondition(cur, { type: WorkloadCondition.Evicted, status: 'True', reason: NODE_FAILURES, message: evicted }, now);
          countEviction(cur);
          return;
        }
        cur.status = { ...cur.status, unhealthyNodes: [...(cur.status.unhealthyNodes ?? []), { name: node }] };
      },
      { status: true },
    );
    if (r.outcome !== 'written') return;
    if (evicted !== undefined) {
      this.ctx.metrics.evictedWorkloads.inc({
        cluster_queue: r.object.status?.admission?.clusterQueue ?? '',
        reason: NODE_FAILURES,
        underlying_cause: '',
      });
      this.recorder.event(r.object, 'Normal', `EvictedDueTo${NODE_FAILURES}`, evicted);
    } else {
      this.recorder.event(r.object, 'Warning', 'UnhealthyNode', `${why}; looking for a replacement for the node's pods`);
    }
  }

  private async clearUnhealthy(w: Workload, node: string): Promise<void> {
    await retryOnConflict(
      this.ctx.store,
      'Workload',
      w.metadata.namespace,
      w.metadata.name,
      (cur) => {
        const list = cur.status?.unhealthyNodes ?? [];
        if (!list.some((n) => n.name === node)) return false;
        const rest = list.filter((n) => n.name !== node);
        const { unhealthyNodes: _, ...status } = cur.status!;
        cur.status = rest.length > 0 ? { ...status, unhealthyNodes: rest } : status;
      },
      { status: true },
    );
  }

  /** Step 2 and 3 for one Workload. */
  private async handle(w: Workload, node: string, state: NodeState): Promise<void> {
    const hostname = this.names.hostname(node);
    const podSets = hostsOf(w).get(hostname);
    const listed = unhealthyNodeNames(w).includes(node);
    if (!podSets || isTrue(w, WorkloadCondition.Finished)) {
      if (listed) await this.clearUnhealthy(w, node);
      return;
    }
    let why: string | undefined;
    let message = '';
    if (state.kind === 'failed') {
      why = state.why;
      message = `Pod terminated by Kueue NodeController due to node failure: ${state.why}`;
    } else if (state.kind === 'ready') {
      const psas = w.status!.admission!.podSetAssignments.filter((p) => podSets.has(p.name));
      let taint: Taint | undefined;
      for (const psa of psas) {
        taint = taintNotToleratedForGood(
          state.taints,
          effectiveTolerations(w, psa, (f) => this.flavors.get(f)),
        );
        if (taint) break;
      }
      if (!taint) {
        if (listed) await this.clearUnhealthy(w, node);
        return;
      }
      const running = this.podsAt(w, node).some((p) => p.spec.nodeName === node && !isTerminal(p) && !p.metadata.deletionTimestamp);
      if (running) return;
      why = `node ${node} has the taint ${formatTaint(taint)}, not tolerated by the Workload`;
      message = TAINT_TERMINATION_MESSAGE;
    }
    if (why === undefined) return; // NotReady, not for long yet
    if (!isTrue(w, WorkloadCondition.Evicted)) await this.markUnhealthy(w, node, why);
    for (const p of this.podsAt(w, node)) {
      if (isTerminal(p)) continue;
      if (p.spec.nodeName === node || pendingOn(p, hostname)) await this.failPod(p, message);
    }
  }

  /** Pending ungated pods pointed at `node` that their PodSet's assignment no longer names. */
  private async failStrays(node: string): Promise<void> {
    const hostname = this.names.hostname(node);
    for (const p of this.pods.byIndex(POD_BY_NODE, hostname)) {
      if (!pendingOn(p, hostname)) continue;
      const key = podWorkloadKey(p);
      const ps = p.metadata.labels?.[KueueLabel.PodSet];
      const w = key === undefined ? undefined : this.workloads.get(key);
      if (!w || ps === undefined || !w.status?.admission || isTrue(w, WorkloadCondition.Finished)) continue;
      const psa = w.status.admission.podSetAssignments.find((a) => a.name === ps);
      const levels = psa?.topologyAssignment?.levels;
      if (!levels || levels[levels.length - 1] !== HOSTNAME_LABEL) continue;
      if (hostsOf(w).get(hostname)?.has(ps)) continue;
      await this.failPod(p, `Pod terminated by Kueue NodeController: node ${node} is no longer in the topology assignment of PodSet ${ps}`);
    }
  }
}

/** One more NodeFailures eviction in status.schedulingStats.evictions. */
function countEviction(w: Workload): void {
  const stats = (w.status?.schedulingStats ?? {}) as { evictions?: { reason: string; underlyingCause: string; count: number }[] };
  const evictions = (stats.evictions ?? []).map((e) => ({ ...e }));
  const hit = evictions.find((e) => e.reason === NODE_FAILURES && e.underlyingCause === '');
  if (hit) hit.count += 1;
  else evictions.push({ reason: NODE_FAILURES, underlyingCause: '', count: 1 });
  w.status = { ...w.status, schedulingStats: { ...stats, evictions } };
}
