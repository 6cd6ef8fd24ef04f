// The scheduler's in-memory view (Kueue's cache and queue manager): an AdmissionSnapshot
// and a QueueManager kept in step with the informer caches. Event handlers only mark what
// changed; `sync` applies the marks, in this order:
//
//   1. configuration (ClusterQueues, LocalQueues, Cohorts, ResourceFlavors, Topologies,
//      WorkloadPriorityClasses, Namespaces, HyperNodes): rebuild the snapshot, the TAS
//      flavors and the queues from scratch, then re-read every Workload;
//   2. nodes: upsert / remove on every TAS flavor snapshot (a HyperNode tree whose
//      membership may change is rebuilt instead);
//   3. Workloads: admitted (status.admission) -> reservation in the snapshot; pending ->
//      queued in its LocalQueue's ClusterQueue; finished, deleted or admission cleared ->
//      reservation released (capacity freed); a pending Workload whose LocalQueue or
//      ClusterQueue is missing is reported for a QuotaReserved=False write;
//   4. pods: bound, non-terminal pods not placed by a TAS assignment are non-TAS usage
//      on every TAS flavor snapshot.
//
// Nothing here writes to the store: the controller (scheduler.ts) does the writes.

import { InputError, type Where } from '../api/errors.ts';
import { GangAnnotation } from '../api/gang.ts';
import { HOSTNAME_LABEL, KueueAnnotation, KueueLabel } from '../api/keys.ts';
import type { KObject, Node, Pod, ResourceFlavor, StringMap, Topology, Workload } from '../api/objects.ts';
import { isTerminal } from '../api/objects.ts';
import type { ClusterQueue, Cohort, LocalQueue, WorkloadPriorityClass } from '../api/queues.ts';
import { podRequests, type ResourceAmounts } from '../api/resources.ts';
import { parseObject } from '../api/schemas.ts';
import type { HyperNode } from '../api/volcano-objects.ts';
import { compareStrings } from '../api/values.ts';
import { admittedFromStatus, isFinished, isReservedOnly } from '../admission/admitted.ts';
import { findCondition, WorkloadCondition } from '../admission/conditions.ts';
import { PendingReason } from '../admission/flavor-assigner.ts';
import { QueueManager } from '../admission/queue.ts';
import { AdmissionSnapshot, type AdmittedWorkload, workloadKey } from '../admission/snapshot.ts';
import { workloadInfo, type WorkloadInfo } from '../admission/workload-info.ts';
import { isVolcanoWorkload } from '../placement/network-topology.ts';
import { buildTasFlavors } from '../placement/tas-flavors.ts';
import type { TasFlavor } from '../placement/workload-placement.ts';
import type { Informer } from '../runtime/informer.ts';
import { HyperNodeTree, TIER_LEVEL_PREFIX, tierOfLevelKey } from '../topology/hypernode-tree.ts';
import { AllocatableCache, nodeInfoFromNode, type NodeInfo } from '../topology/source.ts';

/** Index of pods by the Workload they belong to (`ns/name` from kueue.x-k8s.io/workload). */
export const POD_WORKLOAD_INDEX = 'scheduler:workload';

export function podWorkloadKeys(p: Pod): string[] {
  const w = p.metadata.annotations?.[KueueAnnotation.Workload];
  return w === undefined ? [] : [`${p.metadata.namespace ?? 'default'}/${w}`];
}

export interface SchedulerCaches {
  clusterQueues: Informer<ClusterQueue>;
  localQueues: Informer<LocalQueue>;
  cohorts: Informer<Cohort>;
  flavors: Informer<ResourceFlavor>;
  topologies: Informer<Topology>;
  priorityClasses: Informer<WorkloadPriorityClass>;
  namespaces: Informer<KObject>;
  nodes: Informer<Node>;
  hyperNodes: Informer<HyperNode>;
  pods: Informer<Pod>;
  workloads: Informer<Workload>;
}

/** A pending Workload that cannot be queued: the QuotaReserved=False the controller writes. */
export interface Unqueued {
  key: string;
  reason: string;
  message: string;
}

/** A problem with a configuration object, told once per version as a Warning event. */
export interface ConfigProblem {
  object: KObject;
  message: string;
}

export interface SyncResult {
  /** Something a cycle could act on changed (a Workload queued, capacity or quota moved). */
  changed: boolean;
  unqueued: Unqueued[];
  problems: ConfigProblem[];
  /** Reservations released because their Workload finished (finished_workloads_total). */
  finished: { clusterQueue: string; result: string }[];
}

interface Entry {
  a: AdmittedWorkload;
  /** status.admission (and reserved-only) as last read: unchanged means nothing to redo. */
  sig: string;
}

export interface SchedulerStateOptions {
  /** waitForPodsReady requeuingStrategy.timestamp is Eviction (queue order by eviction time). */
  evictionTimestamp: boolean;
  /** waitForPodsReady.blockAdmission: a PodsReady change of an admitted Workload may unblock the queues. */
  blockAdmission: boolean;
  /** Kueue's SchedulingEquivalenceHashing gate. */
  equivalenceHashing?: boolean;
}

/** Whether a Workload waits for a reservation (or, reserved-only, to grow one). */
export function isPendingCandidate(w: Workload): boolean {
  if (w.status?.admission !== undefined && (!isReservedOnly(w) || findCondition(w, WorkloadCondition.Evicted)?.status === 'True'))
    return false;
  if (isFinished(w) || w.spec.active === false || w.metadata.deletionTimestamp !== undefined) return false;
  if (findCondition(w, WorkloadCondition.Requeued)?.status === 'False') return false;
  return w.metadata.annotations?.[GangAnnotation.Timeout] !== 'true';
}

export class SchedulerState {
  snap: AdmissionSnapshot;
  queues: QueueManager;
  tasFlavors: TasFlavor[] = [];
  tree: HyperNodeTree | undefined;
  classes = new Map<string, number>();
  /** Rebuilds so far (the gauges are reset on each). */
  generation = 0;

  configDirty = true;
  readonly dirtyWorkloads = new Set<string>();
  readonly dirtyNodes = new Set<string>();
  readonly dirtyPods = new Set<string>();
  /**
   * ClusterQueues where capacity or quota was freed since the last look: the parked
   * Workloads of their root cohorts should be requeued (kueue-core §1b "Moving back").
   */
  readonly freedQueues = new Set<string>();
  /** Capacity was freed for every ClusterQueue (nodes, non-TAS pods, a rebuild). */
  freedAll = false;
  /** Admitted Workloads with one unhealthy node: candidates for the failed-node second pass. */
  readonly secondPass = new Set<string>();
  /** ClusterQueues whose reservations changed (for the usage gauges). */
  readonly touched = new Set<string>();

  private readonly entries = new Map<string, Entry>();
  private readonly pendingSig = new Map<string, string>();
  private readonly nodeInfos = new Map<string, NodeInfo>();
  /** Node name -> hostname label, for the nodes whose label differs, kept after the node is gone (its unhealthy entry outlives it). */
  private readonly hostnames = new Map<string, string>();
  private readonly countedPods = new Map<string, { node: string; req: ResourceAmounts }>();
  private readonly invalidClusterQueues = new Map<string, string>();
  private readonly allocatable = new AllocatableCache();
  private volcanoSeen = false;

  constructor(
    private readonly caches: SchedulerCaches,
    private readonly options: SchedulerStateOptions,
  ) {
    this.snap = new AdmissionSnapshot({ clusterQueues: [], flavors: [] });
    this.queues = new QueueManager({ equivalenceHashing: options.equivalenceHashing === true });
  }

  /** Applies every mark (see the header). */
  sync(): SyncResult {
    const out: SyncResult = { changed: false, unqueued: [], problems: [], finished: [] };
    for (
      let guard = 0;
      guard < 4 && (this.configDirty || this.dirtyNodes.size > 0 || this.dirtyWorkloads.size > 0 || this.dirtyPods.size > 0);
      guard++
    ) {
      if (this.configDirty) {
        this.rebuild(out);
        out.changed = true;
      }
      for (const name of this.dirtyNodes) {
        this.dirtyNodes.delete(name);
        if (this.syncNode(name, out)) out.changed = true;
      }
      if (this.configDirty) continue;
      for (const key of this.dirtyWorkloads) {
        this.dirtyWorkloads.delete(key);
        if (this.guarded(key, out, () => this.syncWorkload(key, out))) out.changed = true;
      }
      if (this.configDirty) continue;
      for (const key of this.dirtyPods) {
        this.dirtyPods.delete(key);
        if (this.guarded(key, out, () => this.syncPod(key))) out.changed = true;
      }
    }
    this.finishRebuild();
    return out;
  }

  /**
   * One object's sync; an object that cannot be read (a shape no webhook checked) is
   * reported and left out instead of stopping the others.
   */
  private guarded(key: string, out: SyncResult, fn: () => boolean): boolean {
    try {
      return fn();
    } catch (e) {
      const w = this.caches.workloads.get(key);
      const o = w ?? this.caches.pods.get(key);
      if (w) {
        this.dequeue(key);
        this.release(key);
      }
      if (o) out.problems.push({ object: o, message: `cannot be read by the scheduler: ${e instanceof Error ? e.message : String(e)}` });
      return true;
    }
  }

  /** A reservation the cycle made and the store now holds (`written` is the stored Workload). */
  assumed(a: AdmittedWorkload, written: Workload): void {
    a.workload = written;
    this.entries.set(a.key, { a, sig: this.signature(written) });
    this.touched.add(a.clusterQueue);
    this.markPodsOf(a.key);
  }

  /** Replaces a reservation (failed-node replacement written). */
  replaced(a: AdmittedWorkload, written: Workload): void {
    this.assumed(a, written);
  }

  /** Drops what is held for a Workload and reads it again from the cache (a write failed). */
  forget(key: string): void {
    const old = this.snap.removeAdmitted(key);
    if (old) {
      this.freedQueues.add(old.clusterQueue);
      this.touched.add(old.clusterQueue);
    }
    this.entries.delete(key);
    this.pendingSig.delete(key);
    this.queues.delete(key);
    this.dirtyWorkloads.add(key);
  }

  /**
   * The requeue scopes where capacity was freed since the last look, then forgotten: each
   * freed ClusterQueue's root cohort (`Cohort/<name>`), or the ClusterQueue itself
   * (`ClusterQueue/<name>`) when it is in no cohort; Kueue batches its requeues per scope.
   */
  takeFreed(): string[] {
    const out = new Set<string>();
    const quota = this.snap.quota;
    if (this.freedAll) for (const name of this.snap.clusterQueues.keys()) out.add(quota.rootOf(name));
    else for (const name of this.freedQueues) if (quota.hasClusterQueue(name)) out.add(quota.rootOf(name));
    this.freedAll = false;
    this.freedQueues.clear();
    return [...out].sort();
  }

  /** Moves the parked Workloads of every ClusterQueue in a requeue scope (takeFreed) back to their heaps. */
  requeueScope(now: number, scope: string): number {
    let cache = this.scopes;
    if (cache?.snap !== this.snap) {
      const members = new Map<string, string[]>();
      for (const name of this.snap.clusterQueues.keys()) {
        const root = this.snap.quota.rootOf(name);
        let m = members.get(root);
        if (!m) members.set(root, (m = []));
        m.push(name);
      }
      cache = this.scopes = { snap: this.snap, members };
    }
    const members = cache.members.get(scope);
    return members ? this.queues.requeueInadmissible(now, members) : 0;
  }

  /** The ClusterQueues of each requeue scope, for the current snapshot. */
  private scopes: { snap: AdmissionSnapshot; members: Map<string, string[]> } | undefined;

  // ---- 1. configuration ------------------------------------------------------------

  private rebuild(out: SyncResult): void {
    this.generation++;
    const c = this.caches;
    const parsed = <T extends KObject>(inf: Informer<T>): T[] => {
      const ok: T[] = [];
      for (const o of sorted(inf.list())) {
        const r = parseObject(o, { object: `${o.kind}/${o.metadata.name}` });
        if (r.object) ok.push(r.object as T);
        else {
          out.problems.push({ object: o, message: r.errors.map((e) => e.message).join('; ') });
          if (o.kind === 'ClusterQueue') this.invalidClusterQueues.set(o.metadata.name, r.errors.map((e) => e.detail).join('; '));
        }
      }
      return ok;
    };
    this.invalidClusterQueues.clear();
    const clusterQueues = parsed(c.clusterQueues);
    const localQueues = parsed(c.localQueues);
    const cohorts = parsed(c.cohorts);
    const flavors = parsed(c.flavors);
    const topologies = parsed(c.topologies);
    const hyperNodes = parsed(c.hyperNodes);
    this.classes = new Map(parsed(c.priorityClasses).map((p) => [p.metadata.name, p.value]));
    const namespaces = new Map<string, StringMap>(sorted(c.namespaces.list()).map((n) => [n.metadata.name, n.metadata.labels ?? {}]));

    this.nodeInfos.clear();
    for (const n of sorted(c.nodes.list())) {
      const info = this.nodeInfo(n, out);
      if (info) this.nodeInfos.set(n.metadata.name, info);
      if (info) this.noteHostname(info);
    }
    this.dirtyNodes.clear();
    const nodeList = [...this.nodeInfos.values()];
    const tierLevels = topologies.some((t) => t.spec.levels.some((l) => tierOfLevelKey(l.nodeLabel) !== undefined));
    this.tree = hyperNodes.length > 0 || tierLevels || this.volcanoSeen ? new HyperNodeTree(hyperNodes, nodeList) : undefined;
    for (const p of this.tree?.problems ?? []) {
      const h = hyperNodes.find((x) => p.hyperNodes.includes(x.metadata.name));
      if (h) out.problems.push({ object: h, message: `HyperNode ${p.hyperNodes.join(', ')}: ${p.message}` });
    }
    const topoMap = new Map(topologies.map((t) => [t.metadata.name, t]));
    const built = buildTasFlavors({ flavors, topologies: topoMap, tree: this.tree, nodes: nodeList });
    for (const p of built.problems) {
      if (p.kind === 'missing-topology') continue; // the ClusterQueue's Active condition says it (TopologyNotFound)
      out.problems.push({
        object: topoMap.get(p.topology)!,
        message:
          p.kind === 'mixed-levels'
            ? `spec.levels: a Topology takes its levels either from node labels or from HyperNode tiers (${TIER_LEVEL_PREFIX}<N>, then optionally kubernetes.io/hostname), not both`
            : `spec.levels: levels ${TIER_LEVEL_PREFIX}<N> come from HyperNodes, and there are none`,
      });
    }
    this.tasFlavors = built.flavors;
    this.snap = new AdmissionSnapshot({
      clusterQueues: clusterQueues.map((object) => ({ object, where: { object: `ClusterQueue/${object.metadata.name}` } })),
      cohorts: cohorts.map((object) => ({ object, where: { object: `Cohort/${object.metadata.name}` } })),
      localQueues,
      flavors,
      tasFlavors: this.tasFlavors,
      namespaces,
      priorityClasses: this.classes,
    });
    for (const e of this.snap.errors) {
      const cq =
        clusterQueues.find((x) => e.where.object === `ClusterQueue/${x.metadata.name}`) ??
        cohorts.find((x) => e.where.object === `Cohort/${x.metadata.name}`);
      if (cq) out.problems.push({ object: cq, message: e.message });
    }
    for (const [key, p] of this.countedPods) for (const f of this.tasFlavors) f.snapshot.addPod(key, p.node, p.req);

    const old = this.queues;
    this.queues = new QueueManager({ equivalenceHashing: this.options.equivalenceHashing === true });
    for (const cq of this.snap.clusterQueues.values()) {
      this.queues.ensure(cq.name, cq.strategy);
      this.touched.add(cq.name);
    }
    for (const k of old.preemptors) this.queues.preemptors.add(k);
    const sticky = new Map<string, string>();
    for (const name of old.names()) {
      const s = old.queue(name)?.sticky;
      if (s !== undefined) sticky.set(name, s);
    }
    this.entries.clear();
    this.pendingSig.clear();
    for (const w of c.workloads.values()) this.dirtyWorkloads.add(workloadKey(w));
    // The sticky preemptor of each queue is restored once it is queued again (end of sync).
    this.restoreSticky = sticky;
    this.freedAll = true;
    this.configDirty = false;
  }

  private restoreSticky: Map<string, string> | undefined;

  /** Restores the sticky heads a rebuild dropped (after the Workloads are queued again). */
  private finishRebuild(): void {
    const sticky = this.restoreSticky;
    this.restoreSticky = undefined;
    if (!sticky) return;
    for (const [cq, key] of sticky) {
      const q = this.queues.queue(cq);
      if (q && q.has(key)) q.setSticky(key);
    }
    for (const k of [...this.queues.preemptors]) if (this.queues.clusterQueueOf(k) === undefined) this.queues.preemptors.delete(k);
  }

  // ---- 2. nodes --------------------------------------------------------------------

  private nodeInfo(n: Node, out: SyncResult): NodeInfo | undefined {
    try {
      return nodeInfoFromNode(n, this.allocatable);
    } catch (e) {
      out.problems.push({
        object: n,
        message: `${e instanceof InputError ? e.message : String(e)}: the node takes no part in topology-aware placement`,
      });
      return undefined;
    }
  }

  private noteHostname(info: NodeInfo): void {
    const h = info.labels[HOSTNAME_LABEL];
    if (h !== undefined && h !== info.name) this.hostnames.set(info.name, h);
    else this.hostnames.delete(info.name);
  }

  /** The hostname label a Node (by name) has or last had, when it differs from the name. */
  hostnameOf(name: string): string | undefined {
    return this.hostnames.get(name);
  }

  private syncNode(name: string, out: SyncResult): boolean {
    const n = this.caches.nodes.get(name);
    const prev = this.nodeInfos.get(name);
    const info = n ? this.nodeInfo(n, out) : undefined;
    if (info) this.noteHostname(info);
    if (!info && !prev) return false;
    if (info && prev && sameNode(prev, info)) return false;
    // HyperNode membership follows node names and labels: rebuild the tree.
    if (this.tree && (!info || !prev || !sameLabels(prev.labels, info.labels))) {
      this.configDirty = true;
      return true;
    }
    if (info) {
      this.nodeInfos.set(name, info);
      for (const f of this.tasFlavors) f.snapshot.upsertNode(info);
    } else {
      this.nodeInfos.delete(name);
      for (const f of this.tasFlavors) f.snapshot.removeNode(name);
    }
    this.freedAll = true;
    return true;
  }

  // ---- 3. Workloads ----------------------------------------------------------------

  private syncWorkload(key: string, out: SyncResult): boolean {
    const w = this.caches.workloads.get(key);
    if (!w) {
      this.secondPass.delete(key);
      this.dequeue(key);
      return this.release(key);
    }
    if (!this.tree && !this.volcanoSeen && isVolcanoWorkload(w)) {
      // Volcano jobs need the HyperNode tree (the whole cluster as tier 1 when there are no HyperNodes).
      this.volcanoSeen = true;
      this.configDirty = true;
      this.dirtyWorkloads.add(key);
      return true;
    }
    let changed = false;
    if (w.status?.admission !== undefined && !isFinished(w)) {
      const sig = this.signature(w);
      const e = this.entries.get(key);
      if (e && e.sig === sig) {
        e.a.workload = w;
      } else {
        const errors: InputError[] = [];
        const a = admittedFromStatus(w, { object: `Workload/${key}` } satisfies Where, this.classes, errors);
        const old = this.snap.removeAdmitted(key);
        if (old) {
          this.freedQueues.add(old.clusterQueue);
          this.touched.add(old.clusterQueue);
        }
        if (a) {
          this.touched.add(a.clusterQueue);
          this.snap.addAdmitted(a);
          this.entries.set(key, { a, sig });
        } else {
          this.entries.delete(key);
          for (const err of errors) out.problems.push({ object: w, message: `${err.message}: the reservation is not counted` });
        }
        this.markPodsOf(key);
        changed = true;
      }
      const unhealthy = w.status.unhealthyNodes ?? [];
      if (unhealthy.length > 0 && findCondition(w, WorkloadCondition.Evicted)?.status !== 'True') this.secondPass.add(key);
      else this.secondPass.delete(key);
    } else {
      this.secondPass.delete(key);
      const held = this.entries.get(key)?.a.clusterQueue;
      if (this.release(key)) {
        changed = true;
        if (held !== undefined && isFinished(w))
          out.finished.push({ clusterQueue: held, result: findCondition(w, WorkloadCondition.Finished)?.reason ?? 'Succeeded' });
      }
    }
    if (isPendingCandidate(w)) {
      if (this.enqueue(w, out)) changed = true;
    } else {
      this.dequeue(key);
    }
    return changed;
  }

  /** Takes a reservation back; true when there was one. */
  private release(key: string): boolean {
    if (!this.entries.has(key) && !this.snap.admitted.has(key)) return false;
    const old = this.snap.removeAdmitted(key) ?? this.entries.get(key)?.a;
    if (old) {
      this.touched.add(old.clusterQueue);
      this.freedQueues.add(old.clusterQueue);
    } else this.freedAll = true;
    this.entries.delete(key);
    this.markPodsOf(key);
    return true;
  }

  private dequeue(key: string): void {
    this.queues.delete(key);
    this.pendingSig.delete(key);
  }

  /** Queues (or re-reads) a pending Workload; true when it is new or changed. */
  private enqueue(w: Workload, out: SyncResult): boolean {
    const info = this.infoOf(w);
    const key = info.key;
    const unqueued = (reason: string, message: string) => {
      this.dequeue(key);
      out.unqueued.push({ key, reason, message });
      return false;
    };
    if (info.queueName === undefined)
      return unqueued(PendingReason.Inadmissible, 'the Workload names no LocalQueue (kueue.x-k8s.io/queue-name): Kueue leaves it alone');
    const lq = this.snap.localQueues.get(`${info.namespace}/${info.queueName}`);
    if (!lq) return unqueued(PendingReason.Inadmissible, `LocalQueue ${info.queueName} doesn't exist`);
    const cqName = lq.spec.clusterQueue;
    const invalid = this.invalidClusterQueues.get(cqName);
    if (invalid !== undefined) return unqueued(PendingReason.Misconfigured, `ClusterQueue ${cqName} is invalid: ${invalid}`);
    if (!this.snap.clusterQueues.has(cqName)) return unqueued(PendingReason.Inadmissible, `ClusterQueue ${cqName} doesn't exist`);
    const sig = JSON.stringify([
      cqName,
      w.metadata.generation,
      w.metadata.annotations,
      w.metadata.labels,
      w.status?.requeueState,
      info.timestamp,
      info.priority,
    ]);
    const q = this.queues.queue(cqName)!;
    if (this.pendingSig.get(key) === sig && this.queues.clusterQueueOf(key) === cqName && q.has(key)) {
      // Nothing the cycle reads changed (e.g. our own pending message): a parked Workload stays parked.
      if (q.isLive(key)) this.queues.add(cqName, info);
      else this.queues.requeue(info, false);
      return false;
    }
    this.queues.add(cqName, info);
    this.pendingSig.set(key, sig);
    return true;
  }

  /**
   * The queue's reading of a pending Workload. A queued one whose new version changed
   * nothing workloadInfo reads (a status write: our pending message, the job reconciler's
   * conditions) keeps its reading with the new object: the PodSets are not parsed again,
   * and flavor assignment's shape of them (kept on the info) survives the write instead
   * of being rebuilt at its next turn as a head. Gangs are read afresh (the cycle notes
   * their waiting time on the info).
   */
  private infoOf(w: Workload): WorkloadInfo {
    const prev = this.queues.get(workloadKey(w));
    if (prev && prev.gang === undefined && sameInfoInputs(prev.workload, w)) return { ...prev, workload: w };
    return workloadInfo(w, this.classes, this.options.evictionTimestamp);
  }

  private signature(w: Workload): string {
    const ready = this.options.blockAdmission ? findCondition(w, WorkloadCondition.PodsReady)?.status : undefined;
    return JSON.stringify([w.status?.admission, isReservedOnly(w), ready]);
  }

  private markPodsOf(key: string): void {
    for (const p of this.caches.pods.indexKeys(POD_WORKLOAD_INDEX, key)) this.dirtyPods.add(p);
  }

  // ---- 4. pods ---------------------------------------------------------------------

  private syncPod(key: string): boolean {
    const p = this.caches.pods.get(key);
    const node = p?.spec.nodeName;
    let req: ResourceAmounts | undefined;
    if (p && node && !isTerminal(p) && !this.placedByAssignment(p)) {
      try {
        req = podRequests(p.spec);
      } catch {
        req = undefined;
      }
    }
    const prev = this.countedPods.get(key);
    if (!req || !node) {
      if (!prev) return false;
      this.countedPods.delete(key);
      for (const f of this.tasFlavors) f.snapshot.removePod(key);
      this.freedAll = true;
      return true;
    }
    if (prev && prev.node === node && sameAmounts(prev.req, req)) return false;
    this.countedPods.set(key, { node, req });
    for (const f of this.tasFlavors) f.snapshot.addPod(key, node, req);
    if (prev) this.freedAll = true;
    return true;
  }

  /** A pod of an admitted Workload whose PodSet has a topology assignment: counted through the assignment. */
  private placedByAssignment(p: Pod): boolean {
    const [wkey] = podWorkloadKeys(p);
    if (wkey === undefined) return false;
    const a = this.snap.admitted.get(wkey);
    if (!a) return false;
    const ps = p.metadata.labels?.[KueueLabel.PodSet];
    return ps !== undefined
      ? a.podSets.some((x) => x.name === ps && x.assignment !== undefined)
      : a.podSets.some((x) => x.assignment !== undefined);
  }
}

/**
 * Whether workloadInfo reads the same from both versions of a Workload: identity and
 * creation, spec (by reference: a status write shares it), annotations, labels, owners,
 * requeueState and the Evicted condition (the queue-order timestamp).
 */
export function sameInfoInputs(a: Workload, b: Workload): boolean {
  const ma = a.metadata;
  const mb = b.metadata;
  if (a.spec !== b.spec || ma.uid !== mb.uid || ma.name !== mb.name || ma.namespace !== mb.namespace) return false;
  if (ma.creationTimestamp !== mb.creationTimestamp) return false;
  if (!sameJson(ma.annotations, mb.annotations) || !sameJson(ma.labels, mb.labels) || !sameJson(ma.ownerReferences, mb.ownerReferences))
    return false;
  if (!sameJson(a.status?.requeueState, b.status?.requeueState)) return false;
  const ea = findCondition(a, WorkloadCondition.Evicted);
  const eb = findCondition(b, WorkloadCondition.Evicted);
  return ea?.status === eb?.status && ea?.reason === eb?.reason && ea?.lastTransitionTime === eb?.lastTransitionTime;
}

function sameJson(a: unknown, b: unknown): boolean {
  return a === b || JSON.stringify(a) === JSON.stringify(b);
}

function sorted<T extends KObject>(xs: T[]): T[] {
  const k = (o: KObject) => `${o.metadata.namespace ?? ''}/${o.metadata.name}`;
  return xs.sort((a, b) => compareStrings(k(a), k(b)));
}

function sameLabels(a: StringMap, b: StringMap): boolean {
  const ka = Object.keys(a);
  if (ka.length !== Object.keys(b).length) return false;
  for (const k of ka) if (a[k] !== b[k]) return false;
  return true;
}

function sameAmounts(a: ResourceAmounts, b: ResourceAmounts): boolean {
  return sameLabels(a as unknown as StringMap, b as unknown as StringMap);
}

function sameNode(a: NodeInfo, b: NodeInfo): boolean {
  return (
    a.ready === b.ready &&
    a.unschedulable === b.unschedulable &&
    sameLabels(a.labels, b.labels) &&
    sameAmounts(a.allocatable, b.allocatable) &&
    JSON.stringify(a.taints) === JSON.stringify(b.taints)
  );
}
