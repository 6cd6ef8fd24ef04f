// The scheduler loop (kueue-core.md §1b): the pure admission cycle (admission/cycle.ts)
// driven by store events, its decisions written back on the Workloads.
//
// One reconcile:
//   1. sync the in-memory view from what changed (scheduler-state.ts), and write
//      QuotaReserved=False on pending Workloads whose LocalQueue or ClusterQueue is missing;
//   2. requeue the parked Workloads when capacity was freed (at once, or batched by
//      config.requeueBatchMs per root cohort on the `requeue/<scope>` keys), and the ones
//      whose backoff or gang waiting time ended (`backoff` key);
//   3. the failed-node second pass (scheduler-replace.ts) for Workloads with one unhealthy node;
//   4. one cycle when something changed or one was asked for, and its decisions written.
//      A cycle asked for by an event (`sync`, `requeue`) runs at the end of its virtual
//      instant, after every event of that instant (a 0 ms timer), so it sees everything that
//      happened at that instant together: the Workloads created, the finishes, the
//      reservations let go. Its decisions:
//      admit (writeAdmission; the usage is assumed at once and rolled back if the write
//      fails), pending (QuotaReserved=False only when reason or message changed), preempt
//      (Evicted + Preempted on the victim, which keeps its reservation until its job has
//      stopped), gang timeout (released; the Workload and its pods annotated);
//   5. the next cycle: at once after an admission, after 1 ms doubling to 10 ms while
//      cycles only park or evict, never while nothing moves (the next event, backoff end or
//      gang deadline wakes it).
//
// Keys: `sync` (an event), `cycle` (a cycle asked for), `requeue/<scope>` (a root cohort's
// parked Workloads back), `backoff` (parked Workloads due back).

import { GangAnnotation } from '../api/gang.ts';
import { HOSTNAME_LABEL, KueueAnnotation, KueueLabel } from '../api/keys.ts';
import type { KObject, Node, Pod, StringMap, Workload } from '../api/objects.ts';
import { formatTime, parseTime } from '../api/time.ts';
import { isFinished, isReservedOnly } from '../admission/admitted.ts';
import { findCondition, isTrue, WorkloadCondition } from '../admission/conditions.ts';
import { type Decision, schedule } from '../admission/cycle.ts';
import { blockedByPodsReady } from '../admission/pods-ready.ts';
import { fr } from '../admission/quota.ts';
import { writeAdmission, writeEvicted, writeGangTimeout, writePending, writePreemptionEviction } from '../admission/status.ts';
import { GANG_WAITING_SINCE_ANNOTATION } from '../admission/workload-info.ts';
import { profileFromGates } from '../placement/request.ts';
import type { WorkloadPlacementOptions } from '../placement/workload-placement.ts';
import { nowSeconds } from '../runtime/clock.ts';
import type { EventRecorder } from '../runtime/events.ts';
import type { Informer } from '../runtime/informer.ts';
import type { ControllerContext, Reconciler } from '../runtime/manager.ts';
import { objectKey, type RetryResult, retryOnConflict, splitKey } from '../runtime/store.ts';
import type { WorkQueue } from '../runtime/work-queue.ts';
import type { TopoqueueConfig } from './config.ts';
import { replaceFailedNodes } from './scheduler-replace.ts';
import {
  type ConfigProblem,
  isPendingCandidate,
  POD_WORKLOAD_INDEX,
  podWorkloadKeys,
  type SchedulerCaches,
  SchedulerState,
  type Unqueued,
} from './scheduler-state.ts';

export const SchedulerKey = { Sync: 'sync', Cycle: 'cycle', Backoff: 'backoff' } as const;
/** `requeue/<scope>`: the parked Workloads of a root cohort (`Cohort/<name>`) or of a ClusterQueue in none. */
export const REQUEUE_KEY_PREFIX = 'requeue/';

/** Kueue's idle backoff between cycles that admit nothing (1 ms doubling to 10 ms). */
const IDLE_BACKOFF_MIN_MS = 1;
const IDLE_BACKOFF_MAX_MS = 10;
/** Retry of a Workload whose write failed (other than a conflict): 5 ms doubling to 1 min. */
const ERROR_BACKOFF_MIN_MS = 5;
const ERROR_BACKOFF_MAX_MS = 60_000;

export function schedulerController(): Reconciler<TopoqueueConfig> {
  return new SchedulerController();
}

interface CycleOutcome {
  admitted: number;
  evicted: number;
  timedOut: number;
}

class SchedulerController implements Reconciler<TopoqueueConfig> {
  readonly name = 'scheduler';
  private ctx!: ControllerContext<TopoqueueConfig>;
  private queue!: WorkQueue;
  private recorder!: EventRecorder;
  private caches!: SchedulerCaches;
  private state!: SchedulerState;
  private placement: WorkloadPlacementOptions = {};
  private idleMs = 0;
  /** When the last cycle started (clock ms): cycles are at least config.minCycleIntervalMs apart. */
  private lastCycleAt = -Infinity;
  private endOfInstantArmed = false;
  private errorBackoffMs = 0;
  private gaugeGeneration = -1;
  private readonly reported = new Set<string>();
  /** pending_workloads last set per ClusterQueue: [active, inadmissible]. */
  private readonly pendingGauges = new Map<string, [number, number]>();
  /**
   * The usage gauges last set per ClusterQueue, in the order updateGauges sets them
   * (reserving, admitted, then usage and nominal quota per flavor and resource).
   */
  private readonly usageGauges = new Map<string, number[]>();

  setup(ctx: ControllerContext<TopoqueueConfig>, queue: WorkQueue, recorder: EventRecorder): void {
    this.ctx = ctx;
    this.queue = queue;
    this.recorder = recorder;
    const inf = ctx.informers;
    const c: SchedulerCaches = {
      clusterQueues: inf.for('ClusterQueue'),
      localQueues: inf.for('LocalQueue'),
      cohorts: inf.for('Cohort'),
      flavors: inf.for('ResourceFlavor'),
      topologies: inf.for('Topology'),
      priorityClasses: inf.for('WorkloadPriorityClass'),
      namespaces: inf.for('Namespace'),
      nodes: inf.for('Node'),
      hyperNodes: inf.for('HyperNode'),
      pods: inf.for('Pod'),
      workloads: inf.for('Workload'),
    };
    this.caches = c;
    c.pods.addIndex(POD_WORKLOAD_INDEX, podWorkloadKeys);
    const wfr = ctx.config.waitForPodsReady;
    const state = new SchedulerState(c, {
      evictionTimestamp: !wfr || wfr.requeuingStrategy.timestamp === 'Eviction',
      blockAdmission: wfr?.blockAdmission === true,
      equivalenceHashing: ctx.config.schedulingEquivalenceHashing,
    });
    this.state = state;
    const gates = ctx.config.gates;
    this.placement = {
      profile: profileFromGates(gates),
      respectPreferredAffinity: gates.TASRespectNodeAffinityPreferred,
      multiLayerTopology: gates.TASMultiLayerTopology,
    };

    const kick = () => queue.add(SchedulerKey.Sync);
    const config = () => {
      state.configDirty = true;
      kick();
    };
    const configHandler = { add: config, update: (a: KObject, b: KObject) => configSig(a) !== configSig(b) && config(), delete: config };
    for (const i of [c.clusterQueues, c.localQueues, c.cohorts, c.flavors, c.topologies, c.priorityClasses, c.namespaces, c.hyperNodes]) {
      (i as unknown as Informer<KObject>).addHandler(configHandler);
    }
    const node = (n: Node) => {
      state.dirtyNodes.add(n.metadata.name);
      kick();
    };
    c.nodes.addHandler({ add: node, update: (_, n) => node(n), delete: node });
    const pod = (p: Pod) => {
      state.dirtyPods.add(objectKey(p));
      kick();
    };
    c.pods.addHandler({ add: pod, update: (a, b) => podMoved(a, b) && pod(b), delete: pod });
    const workload = (w: Workload) => {
      state.dirtyWorkloads.add(objectKey(w));
      kick();
    };
    c.workloads.addHandler({ add: workload, update: (_, w) => workload(w), delete: workload });
  }

  async reconcile(key: string): Promise<void> {
    const now = nowSeconds(this.ctx.clock);
    const s = this.state;
    const r = s.sync();
    await this.report(r.problems);
    for (const f of r.finished) this.ctx.metrics.finishedWorkloads.inc({ cluster_queue: f.clusterQueue, result: f.result });
    for (const u of r.unqueued) {
      try {
        await this.writePending(u.key, undefined, u, now);
      } catch (e) {
        this.ctx.log.error(this.name, u.key, e);
        s.dirtyWorkloads.add(u.key);
        this.queue.addAfter(SchedulerKey.Sync, ERROR_BACKOFF_MAX_MS);
      }
    }
    let changed = r.changed;

    // Kueue's requeue of parked Workloads (kueue-core §1b "Moving back"): one delayed key
    // per root cohort (or ClusterQueue in no cohort), armed by the first capacity event and
    // not pushed back by later ones; when it fires, that scope's parked Workloads go back.
    const batch = this.ctx.config.requeueBatchMs;
    const firing = key.startsWith(REQUEUE_KEY_PREFIX) ? key.slice(REQUEUE_KEY_PREFIX.length) : undefined;
    if (firing !== undefined && s.requeueScope(now, firing) > 0) changed = true;
    for (const scope of s.takeFreed()) {
      if (batch <= 0) {
        if (s.requeueScope(now, scope) > 0) changed = true;
      } else if (scope !== firing) this.queue.addAfter(REQUEUE_KEY_PREFIX + scope, batch);
    }
    if (key === SchedulerKey.Backoff && s.queues.requeueDue(now) > 0) changed = true;

    if (await this.secondPass(now)) changed = true;
    if (key === SchedulerKey.Cycle || changed) {
      const wait = this.lastCycleAt + this.ctx.config.minCycleIntervalMs - this.ctx.clock.now();
      if (wait > 0) this.queue.addAfter(SchedulerKey.Cycle, wait);
      // A cycle asked for by an event runs at the end of its instant, after every event of
      // that instant: it sees the Workloads created, the finishes and the reservations let
      // go at that instant together, rather than a cluster before that instant's finishes
      // (admitting lower priorities to reclaim them at once, parking what would fit).
      // Kueue's loop does not cycle per event either. A Cycle key (the next cycle, a timer)
      // runs at once.
      else if (key !== SchedulerKey.Cycle) this.endOfInstant();
      else await this.cycle(now);
    }
    this.updateGauges();
  }

  // ---- the cycle ---------------------------------------------------------------------

  private async cycle(now: number): Promise<void> {
    const s = this.state;
    const started = this.ctx.clock.now();
    this.lastCycleAt = started;
    const wfr = this.ctx.config.waitForPodsReady;
    const blocked = wfr?.blockAdmission
      ? blockedByPodsReady(
          [...s.snap.admitted.values()].map((a) => a.workload),
          wfr,
        )
      : undefined;
    const r = schedule(s.snap, s.queues, {
      now,
      placement: this.placement,
      partialAdmission: true,
      ...(blocked !== undefined ? { admissionBlocked: blocked } : {}),
    });
    const out: CycleOutcome = { admitted: 0, evicted: 0, timedOut: 0 };
    // In order on the embedded cluster (deterministic runs); at once against a remote API
    // server, where each write is a round trip (the decisions are about distinct Workloads).
    // A pending decision whose condition already says it (a parked head seen again: most
    // decisions of a saturated cluster) writes nothing: skipped at once, without the
    // asynchronous write path.
    if (this.ctx.config.concurrentCycleWrites) await Promise.all(r.decisions.map((d) => this.apply(d, now, out)));
    else
      for (const d of r.decisions) {
        if (d.kind === 'pending' && this.pendingIsNoop(d)) continue;
        await this.apply(d, now, out);
      }

    if (r.heads > 0) {
      const result = out.admitted > 0 ? 'success' : 'inadmissible';
      const m = this.ctx.metrics;
      m.admissionAttempts.inc({ result });
      m.admissionAttemptDuration.observe({ result }, (this.ctx.clock.now() - started) / 1000);
    }
    // The next cycle.
    if (out.admitted > 0) {
      this.idleMs = 0;
      this.queue.add(SchedulerKey.Cycle);
    } else if (r.parked > 0 || out.evicted > 0 || out.timedOut > 0) {
      this.idleMs = this.idleMs === 0 ? IDLE_BACKOFF_MIN_MS : Math.min(this.idleMs * 2, IDLE_BACKOFF_MAX_MS);
      this.queue.addAfter(SchedulerKey.Cycle, this.idleMs);
    } else {
      this.idleMs = 0;
    }
    const next = s.queues.nextBackoff(now);
    if (next !== undefined) this.queue.addAfter(SchedulerKey.Backoff, Math.max(1, Math.ceil((next - now) * 1000)));
  }

  /** One cycle once every key ready at this instant has run (a timer of 0 ms fires after them). */
  private endOfInstant(): void {
    if (this.endOfInstantArmed) return;
    this.endOfInstantArmed = true;
    this.ctx.clock.setTimer(0, () => {
      this.endOfInstantArmed = false;
      this.queue.add(SchedulerKey.Cycle);
    });
  }

  private async apply(d: Decision, now: number, out: CycleOutcome): Promise<void> {
    try {
      switch (d.kind) {
        case 'admit':
          if (await this.admit(d, now)) {
            out.admitted++;
            this.errorBackoffMs = 0;
          }
          return;
        case 'pending':
          await this.pending(d, now);
          return;
        case 'preempt':
          if (await this.preempt(d, now)) out.evicted++;
          return;
        case 'gangTimeout':
          await this.gangTimeout(d, now);
          out.timedOut++;
          return;
      }
    } catch (e) {
      // One Workload's failed write never stops the others.
      this.ctx.log.error(this.name, d.key, e);
      this.retryLater(d.key);
    }
  }

  /** A status write of the Workload `key` (`ns/name`), retried on conflict; `change` returns false to skip it. */
  private writeWorkloadStatus(key: string, change: (w: Workload) => boolean | void): Promise<RetryResult<Workload>> {
    const { namespace, name } = splitKey(key);
    return retryOnConflict<Workload>(this.ctx.store, 'Workload', namespace, name, change, { status: true });
  }

  /** Writes the reservation; false (and rolled back) when the Workload is gone or no longer pending. */
  private async admit(d: Extract<Decision, { kind: 'admit' }>, now: number): Promise<boolean> {
    const before = d.workload;
    const encodingByHostnamePrefix = this.ctx.config.gates.TASAssignmentsEncodingByHostnamePrefix;
    let wasReserved = false;
    const r = await this.writeWorkloadStatus(d.key, (w) => {
      if (w.metadata.uid !== before.metadata.uid || w.metadata.generation !== before.metadata.generation || !isPendingCandidate(w))
        return false;
      wasReserved = isReservedOnly(w);
      writeAdmission(w, d.admitted, { now, encodingByHostnamePrefix });
    });
    if (r.outcome !== 'written') {
      // Gone, or no longer pending in the store: the cache is behind, and its event is on the way.
      this.retryLater(d.key);
      return false;
    }
    let written = r.object;
    // Our gang annotation: set when the waiting time starts, dropped once satisfied.
    const ann = { ...(written.metadata.annotations ?? {}) };
    if (d.gangWaitingSince !== undefined) ann[GANG_WAITING_SINCE_ANNOTATION] = formatTime(d.gangWaitingSince);
    if (!d.reservedOnly) delete ann[GANG_WAITING_SINCE_ANNOTATION];
    if (!sameMap(ann, written.metadata.annotations ?? {})) {
      written = (await this.annotate(d.key, { [GANG_WAITING_SINCE_ANNOTATION]: ann[GANG_WAITING_SINCE_ANNOTATION] })) ?? written;
    }
    this.state.assumed(d.admitted, written);

    const cq = d.clusterQueue;
    const m = this.ctx.metrics;
    const waited = Math.max(0, now - queuedAt(before, now));
    if (!wasReserved) {
      this.recorder.event(
        written,
        'Normal',
        'QuotaReserved',
        `Quota reserved in ClusterQueue ${cq}, wait time since queued was ${Math.round(waited)}s`,
      );
      m.quotaReservedWorkloads.inc({ cluster_queue: cq });
      m.quotaReservedWaitTime.observe({ cluster_queue: cq }, waited);
    }
    if (!d.reservedOnly) {
      const reservedFor = wasReserved
        ? Math.max(0, now - (parseTime(findCondition(before, WorkloadCondition.QuotaReserved)?.lastTransitionTime) ?? now))
        : 0;
      this.recorder.event(
        written,
        'Normal',
        'Admitted',
        `Admitted by ClusterQueue ${cq}, wait time since reservation was ${Math.round(reservedFor)}s`,
      );
      m.admittedWorkloads.inc({ cluster_queue: cq });
      m.admissionWaitTime.observe({ cluster_queue: cq }, waited);
    }
    return true;
  }

  /**
   * Whether a pending decision writes nothing (what pending() would conclude without a
   * write): no gang time to record, and the reservation kept or QuotaReserved=False with
   * that reason and message already on the cached Workload.
   */
  private pendingIsNoop(d: Extract<Decision, { kind: 'pending' }>): boolean {
    if (d.gangWaitingSince !== undefined) return false;
    if (this.state.snap.admitted.has(d.key)) return true;
    const cached = this.caches.workloads.get(d.key);
    return cached === undefined || hasPendingCondition(cached, d.reason, d.message);
  }

  private async pending(d: Extract<Decision, { kind: 'pending' }>, now: number): Promise<void> {
    if (d.gangWaitingSince !== undefined) {
      const info = this.state.queues.get(d.key);
      if (info?.gang) info.gang.waitingSince = d.gangWaitingSince;
      await this.annotate(d.key, { [GANG_WAITING_SINCE_ANNOTATION]: formatTime(d.gangWaitingSince) });
    }
    // A NonStrict gang keeps its partial reservation while it waits.
    if (this.state.snap.admitted.has(d.key)) return;
    await this.writePending(d.key, d.workload, d, now);
  }

  /** QuotaReserved=False with the reason and message, only when either changed (Kueue #8095). */
  private async writePending(
    key: string,
    expected: Workload | undefined,
    p: Pick<Unqueued, 'reason' | 'message'>,
    now: number,
  ): Promise<void> {
    const cached = this.caches.workloads.get(key);
    if (!cached || hasPendingCondition(cached, p.reason, p.message)) return;
    const r = await this.writeWorkloadStatus(key, (w) => {
      if (
        (expected && w.metadata.uid !== expected.metadata.uid) ||
        !isPendingCandidate(w) ||
        w.status?.admission !== undefined ||
        hasPendingCondition(w, p.reason, p.message)
      )
        return false;
      writePending(w, p.reason, p.message, { now });
    });
    if (r.outcome === 'written') this.recorder.event(r.object, 'Warning', p.reason, p.message);
  }

  /** Evicted + Preempted on the victim; its reservation stays until its job has stopped. */
  private async preempt(d: Extract<Decision, { kind: 'preempt' }>, now: number): Promise<boolean> {
    // A victim already being evicted (its preemptor re-runs the search while it stops)
    // needs no write: the copy the snapshot holds (the latest seen or written) says so
    // without a read and copy of the stored one (Kueue's IssuePreemptions skips IsEvicted
    // targets the same way).
    const held = this.state.snap.admitted.get(d.key)?.workload;
    if (held && (isTrue(held, WorkloadCondition.Evicted) || isFinished(held))) return false;
    const r = await this.writeWorkloadStatus(d.key, (w) => {
      if (w.status?.admission === undefined || isTrue(w, WorkloadCondition.Evicted) || isFinished(w)) return false;
      writePreemptionEviction(w, d.target, { now });
    });
    if (r.outcome !== 'written') return false;
    const m = this.ctx.metrics;
    this.recorder.event(r.object, 'Normal', 'Preempted', d.target.message);
    m.preemptedWorkloads.inc({ preempting_cluster_queue: this.state.queues.clusterQueueOf(d.by) ?? '', reason: d.target.reason });
    m.evictedWorkloads.inc({ cluster_queue: d.clusterQueue, reason: 'Preempted', underlying_cause: d.target.reason });
    return true;
  }

  /** The seed's timeout: released, the Workload and each of its pods annotated timeout=true. */
  private async gangTimeout(d: Extract<Decision, { kind: 'gangTimeout' }>, now: number): Promise<void> {
    const { object: w } = await this.writeWorkloadStatus(d.key, (w) => {
      if (w.metadata.uid !== d.workload.metadata.uid) return false;
      writeGangTimeout(w, d.message, { now });
    });
    if (!w) return;
    await this.annotate(d.key, { [GangAnnotation.Timeout]: 'true' });
    for (const p of d.pods) {
      const ref = splitKey(p);
      await retryOnConflict(this.ctx.store, 'Pod', ref.namespace, ref.name, (pod) => {
        if (pod.metadata.annotations?.[GangAnnotation.Timeout] === 'true') return false;
        pod.metadata.annotations = { ...(pod.metadata.annotations ?? {}), [GangAnnotation.Timeout]: 'true' };
      });
    }
    this.recorder.event(w, 'Warning', 'GangTimeout', d.message);
  }

  /**
   * Drops what the cycle assumed for a Workload whose write failed or was refused, and reads
   * it again from the cache after a backoff that grows while writes keep failing (its own
   * event usually comes first; no spinning in virtual time while the cache is behind).
   */
  private retryLater(key: string): void {
    this.state.forget(key);
    this.errorBackoffMs = Math.min(ERROR_BACKOFF_MAX_MS, this.errorBackoffMs === 0 ? ERROR_BACKOFF_MIN_MS : this.errorBackoffMs * 2);
    this.queue.addAfter(SchedulerKey.Sync, this.errorBackoffMs);
  }

  /** Sets (or, with undefined, removes) Workload annotations; the Workload as left, or undefined when gone. */
  private async annotate(key: string, values: Record<string, string | undefined>): Promise<Workload | undefined> {
    const { namespace, name } = splitKey(key);
    const r = await retryOnConflict(this.ctx.store, 'Workload', namespace, name, (w) => {
      const ann = { ...(w.metadata.annotations ?? {}) };
      for (const [k, v] of Object.entries(values)) {
        if (v === undefined) delete ann[k];
        else ann[k] = v;
      }
      if (sameMap(ann, w.metadata.annotations ?? {})) return false;
      w.metadata.annotations = ann;
    });
    return r.object;
  }

  // ---- the failed-node second pass -----------------------------------------------------

  private async secondPass(now: number): Promise<boolean> {
    const s = this.state;
    if (s.secondPass.size === 0) return false;
    const keys = [...s.secondPass].sort();
    s.secondPass.clear();
    if (!this.ctx.config.gates.TASFailedNodeReplacement) return false;
    let changed = false;
    for (const key of keys) {
      const w = this.caches.workloads.get(key);
      const nodes = (w?.status?.unhealthyNodes ?? []).map((n) => n.name);
      if (!w || nodes.length === 0 || !s.snap.admitted.has(key)) continue;
      // A kept node still in the cluster but NotReady is usually failing too: wait for it.
      const notReady = (host: string) =>
        this.caches.nodes.get(host) !== undefined ||
        [...this.caches.nodes.values()].some((n) => n.metadata.labels?.[HOSTNAME_LABEL] === host);
      const rep = replaceFailedNodes(s.snap, key, nodes, this.placement, this.ctx.config.gates, (n) => s.hostnameOf(n), notReady);
      if (rep.kind === 'skip') continue;
      changed = true;
      const seen = JSON.stringify(w.status!.admission);
      try {
        if (rep.kind === 'replaced') {
          const r = await this.writeWorkloadStatus(key, (x) => {
            if (JSON.stringify(x.status?.admission) !== seen || isTrue(x, WorkloadCondition.Evicted)) return false;
            x.status = { ...x.status!, admission: { ...x.status!.admission!, podSetAssignments: rep.podSetAssignments } };
            // Nodes listed since this pass read the Workload stay for the next one.
            const rest = (x.status.unhealthyNodes ?? []).filter((n) => !nodes.includes(n.name));
            if (rest.length > 0) x.status.unhealthyNodes = rest;
            else delete x.status.unhealthyNodes;
          });
          if (r.outcome !== 'written') {
            this.retryLater(key);
            continue;
          }
          s.replaced(rep.admitted, r.object);
          this.recorder.event(
            r.object,
            'Normal',
            'NodeReplaced',
            `The pods of unhealthy node(s) ${nodes.join(', ')} have a new place in the topology assignment`,
          );
        } else {
          const r = await this.writeWorkloadStatus(key, (x) => {
            if (x.status?.admission === undefined || isTrue(x, WorkloadCondition.Evicted)) return false;
            writeEvicted(x, rep.reason, rep.message, { now });
          });
          if (r.outcome === 'written') {
            this.recorder.event(r.object, 'Warning', `EvictedDueTo${rep.reason}`, rep.message);
            this.ctx.metrics.evictedWorkloads.inc({
              cluster_queue: w.status!.admission!.clusterQueue ?? '',
              reason: rep.reason,
              underlying_cause: '',
            });
          }
        }
      } catch (e) {
        this.ctx.log.error(this.name, key, e);
        this.retryLater(key);
      }
    }
    return changed;
  }

  // ---- gauges and problems -------------------------------------------------------------

  private updateGauges(): void {
    const s = this.state;
    const m = this.ctx.metrics;
    if (s.generation !== this.gaugeGeneration) {
      this.gaugeGeneration = s.generation;
      m.pendingWorkloads.reset();
      this.pendingGauges.clear();
      this.usageGauges.clear();
      m.clusterQueueResourceUsage.reset();
      m.reservingActiveWorkloads.reset();
      m.admittedActiveWorkloads.reset();
      m.clusterQueueNominalQuota.reset();
      m.clusterQueueStatus.reset();
      for (const cq of s.snap.clusterQueues.values()) {
        m.clusterQueueStatus.set({ cluster_queue: cq.name, status: cq.inactive ? 'pending' : 'active' }, 1);
        m.clusterQueueStatus.set({ cluster_queue: cq.name, status: cq.inactive ? 'active' : 'pending' }, 0);
      }
    }
    // Only the counts that moved: a gauge set hashes its labels, and this runs on every reconcile.
    for (const name of s.queues.names()) {
      const q = s.queues.queue(name)!;
      const active = q.activeCount;
      const inadmissible = q.inadmissibleCount;
      let last = this.pendingGauges.get(name);
      if (last && last[0] === active && last[1] === inadmissible) continue;
      if (!last) this.pendingGauges.set(name, (last = [-1, -1]));
      if (last[0] !== active) m.pendingWorkloads.set({ cluster_queue: name, status: 'active' }, (last[0] = active));
      if (last[1] !== inadmissible) m.pendingWorkloads.set({ cluster_queue: name, status: 'inadmissible' }, (last[1] = inadmissible));
    }
    for (const name of s.touched) {
      const cq = s.snap.clusterQueues.get(name);
      if (!cq) continue;
      let reserving = 0;
      let admitted = 0;
      for (const a of s.snap.admittedIn(name)) {
        reserving++;
        if (!a.reservedOnly) admitted++;
      }
      const values = [reserving, admitted];
      for (const g of cq.resourceGroups) {
        for (const flavor of g.flavors) {
          for (const resource of g.covered) {
            const f = fr(flavor, resource);
            values.push(gaugeAmount(resource, s.snap.quota.usage(name, f)), gaugeAmount(resource, s.snap.quota.nominal(name, f)));
          }
        }
      }
      // Only the values that moved (a gauge set hashes its labels; a ClusterQueue is touched
      // by every reservation and release in it, often back to the same counts).
      const last = this.usageGauges.get(name);
      this.usageGauges.set(name, values);
      if (moved(last, values, 0)) m.reservingActiveWorkloads.set({ cluster_queue: name }, reserving);
      if (moved(last, values, 1)) m.admittedActiveWorkloads.set({ cluster_queue: name }, admitted);
      let i = 2;
      for (const g of cq.resourceGroups) {
        for (const flavor of g.flavors) {
          for (const resource of g.covered) {
            if (moved(last, values, i)) m.clusterQueueResourceUsage.set({ cluster_queue: name, flavor, resource }, values[i]!);
            if (moved(last, values, i + 1)) m.clusterQueueNominalQuota.set({ cluster_queue: name, flavor, resource }, values[i + 1]!);
            i += 2;
          }
        }
      }
    }
    s.touched.clear();
  }

  /** A Warning event per problem with a configuration object, once per version of it. */
  private async report(problems: readonly ConfigProblem[]): Promise<void> {
    for (const p of problems) {
      const id = `${p.object.kind}/${objectKey(p.object)}@${p.object.metadata.resourceVersion ?? ''}: ${p.message}`;
      if (this.reported.has(id)) continue;
      this.reported.add(id);
      this.recorder.event(p.object, 'Warning', 'InvalidConfiguration', p.message);
    }
  }
}

/** What of a configuration object the snapshot reads (status writes do not rebuild it). */
function configSig(o: KObject): string {
  const x = o as KObject & { spec?: unknown; value?: unknown };
  return JSON.stringify([o.metadata.labels, x.spec, x.value, o.metadata.deletionTimestamp]);
}

/** Whether what of a pod the non-TAS usage reads changed (node, phase, Workload, PodSet). */
export function podMoved(a: Pod, b: Pod): boolean {
  // null and absent alike (as the JSON signature this replaces read them).
  return (
    (a.spec.nodeName ?? null) !== (b.spec.nodeName ?? null) ||
    (a.status?.phase ?? null) !== (b.status?.phase ?? null) ||
    (a.metadata.annotations?.[KueueAnnotation.Workload] ?? null) !== (b.metadata.annotations?.[KueueAnnotation.Workload] ?? null) ||
    (a.metadata.labels?.[KueueLabel.PodSet] ?? null) !== (b.metadata.labels?.[KueueLabel.PodSet] ?? null)
  );
}

/** Whether the value at `i` differs from the one last set (all differ without a last set of the same shape). */
function moved(last: readonly number[] | undefined, values: readonly number[], i: number): boolean {
  return last === undefined || last.length !== values.length || last[i] !== values[i];
}

/** QuotaReserved=False with this reason and message (nothing to write). */
function hasPendingCondition(w: Workload, reason: string, message: string): boolean {
  const c = findCondition(w, WorkloadCondition.QuotaReserved);
  return c?.status === 'False' && c.reason === reason && c.message === message;
}

/** When the Workload was (last) queued: its Requeued=True transition, else its creation. */
function queuedAt(w: Workload, now: number): number {
  const rq = findCondition(w, WorkloadCondition.Requeued);
  const t = rq?.status === 'True' ? parseTime(rq.lastTransitionTime) : undefined;
  return t ?? parseTime(w.metadata.creationTimestamp) ?? now;
}

/** Gauge values in Kubernetes units (cpu in cores). */
function gaugeAmount(resource: string, n: number): number {
  return resource === 'cpu' ? n / 1000 : n;
}

function sameMap(a: StringMap, b: StringMap): boolean {
  const ka = Object.keys(a);
  if (ka.length !== Object.keys(b).length) return false;
  for (const k of ka) if (a[k] !== b[k]) return false;
  return true;
}
