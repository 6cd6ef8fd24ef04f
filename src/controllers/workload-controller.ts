// The Workload lifecycle controller (Kueue's workload controller, the parts the scheduler
// does not own). Per Workload, in order:
//
//   1. deleting: a Workload with no owner lets go of its finalizer (nothing else will);
//   2. admitted and already evicted: a Workload with no owner has no job to stop, so its
//      reservation is cleared here (admission/pods-ready.ts clearReservation);
//   3. admitted: evict when deactivated (Deactivated), when its ClusterQueue or LocalQueue
//      has stopPolicy HoldAndDrain (or Hold, for a reservation not yet admitted), or on the
//      waitForPodsReady timeout (PodsReadyTimeout with a growing backoff, or deactivation
//      once backoffLimitCount is spent); otherwise wake up when the timeout would expire;
//   4. pending after an eviction: Requeued=True when its queue was restarted
//      (ClusterQueueRestarted / LocalQueueRestarted), when it was reactivated, or when its
//      backoff is over (BackoffFinished); otherwise wake up at requeueAt.
//
// Evictions keep the reservation: whoever stops the pods clears it afterwards.

import { KueueLabel, KueueRuntimeKey } from '../api/keys.ts';
import type { Workload } from '../api/objects.ts';
import type { ClusterQueue, LocalQueue } from '../api/queues.ts';
import { parseTime } from '../api/time.ts';
import { isFinished, isReservedOnly } from '../admission/admitted.ts';
import {
  findCondition,
  isTrue,
  setCondition,
  staleConditions,
  stampObservedGeneration,
  WorkloadCondition,
} from '../admission/conditions.ts';
import {
  applyDeactivation,
  applyPodsReadyEviction,
  backoffFinished,
  checkPodsReady,
  clearReservation,
  requeueStateOf,
  type WaitForPodsReadyConfig,
} from '../admission/pods-ready.ts';
import { writeEvicted } from '../admission/status.ts';
import { nowSeconds } from '../runtime/clock.ts';
import type { EventRecorder } from '../runtime/events.ts';
import type { Informer } from '../runtime/informer.ts';
import type { ControllerContext, ReconcileResult, Reconciler } from '../runtime/manager.ts';
import { objectKey, retryOnConflict, splitKey } from '../runtime/store.ts';
import type { WorkQueue } from '../runtime/work-queue.ts';
import type { TopoqueueConfig } from './config.ts';

export const WorkloadEvictionReason = {
  Deactivated: 'Deactivated',
  ClusterQueueStopped: 'ClusterQueueStopped',
  LocalQueueStopped: 'LocalQueueStopped',
} as const;

export const WorkloadMessage = {
  ClusterQueueStopped: 'The ClusterQueue is stopped',
  LocalQueueStopped: 'The LocalQueue is stopped',
  Deactivated: 'The workload is deactivated',
  ClusterQueueRestarted: 'The ClusterQueue was restarted after being stopped',
  LocalQueueRestarted: 'The LocalQueue was restarted after being stopped',
  Reactivated: 'The workload was reactivated',
} as const;

const BY_CLUSTER_QUEUE = 'workload:cluster-queue';
const BY_LOCAL_QUEUE = 'workload:local-queue';

export function workloadController(): Reconciler<TopoqueueConfig> {
  return new WorkloadController();
}

type StopPolicy = ClusterQueue['spec']['stopPolicy'];

class WorkloadController implements Reconciler<TopoqueueConfig> {
  readonly name = 'workload';
  private ctx!: ControllerContext<TopoqueueConfig>;
  private recorder!: EventRecorder;
  private workloads!: Informer<Workload>;
  private clusterQueues!: Informer<ClusterQueue>;
  private localQueues!: Informer<LocalQueue>;

  setup(ctx: ControllerContext<TopoqueueConfig>, queue: WorkQueue, recorder: EventRecorder): void {
    this.ctx = ctx;
    this.recorder = recorder;
    this.workloads = ctx.informers.for('Workload');
    this.clusterQueues = ctx.informers.for('ClusterQueue');
    this.localQueues = ctx.informers.for('LocalQueue');
    const wl = this.workloads;
    wl.addIndex(BY_CLUSTER_QUEUE, (w) => (w.status?.admission?.clusterQueue !== undefined ? [w.status.admission.clusterQueue] : []));
    wl.addIndex(BY_LOCAL_QUEUE, (w) => {
      const q = queueNameOf(w);
      return q !== undefined ? [`${w.metadata.namespace ?? 'default'}/${q}`] : [];
    });
    const enqueue = (w: Workload) => queue.add(objectKey(w));
    wl.addHandler({ add: enqueue, update: (_, w) => enqueue(w), delete: () => {} });
    const byLocalQueue = (lqKey: string) => {
      for (const k of wl.indexKeys(BY_LOCAL_QUEUE, lqKey)) queue.add(k);
    };
    const cqChanged = (cq: ClusterQueue) => {
      for (const k of wl.indexKeys(BY_CLUSTER_QUEUE, cq.metadata.name)) queue.add(k);
      // Pending Workloads reach it through their LocalQueues (a restart requeues them).
      for (const lq of this.localQueues.values()) if (lq.spec.clusterQueue === cq.metadata.name) byLocalQueue(objectKey(lq));
    };
    this.clusterQueues.addHandler({
      add: cqChanged,
      update: (a, b) => stopOf(a.spec.stopPolicy) !== stopOf(b.spec.stopPolicy) && cqChanged(b),
      delete: cqChanged,
    });
    const lqChanged = (lq: LocalQueue) => byLocalQueue(objectKey(lq));
    this.localQueues.addHandler({
      add: lqChanged,
      update: (a, b) =>
        (stopOf(a.spec.stopPolicy) !== stopOf(b.spec.stopPolicy) || a.spec.clusterQueue !== b.spec.clusterQueue) && lqChanged(b),
      delete: lqChanged,
    });
  }

  async reconcile(key: string): Promise<ReconcileResult | void> {
    const w = this.workloads.get(key);
    if (!w) return;
    const now = nowSeconds(this.ctx.clock);
    const bare = (w.metadata.ownerReferences ?? []).length === 0;
    if (w.metadata.deletionTimestamp !== undefined) {
      if (bare) await this.releaseFinalizer(key);
      return;
    }
    // A spec edit: the conditions were reviewed at this generation (the next steps change what no longer holds).
    if (staleConditions(w)) await this.write(key, (x) => stampObservedGeneration(x));
    if (isFinished(w)) return;
    if (w.status?.admission !== undefined) return this.admitted(key, w, bare, now);
    return this.pending(key, w, now);
  }

  private async admitted(key: string, w: Workload, bare: boolean, now: number): Promise<ReconcileResult | void> {
    if (isTrue(w, WorkloadCondition.Evicted)) {
      if (bare)
        await this.write(key, (x) =>
          x.status?.admission !== undefined && isTrue(x, WorkloadCondition.Evicted) ? (clearReservation(x, now), true) : false,
        );
      return;
    }
    if (w.spec.active === false) {
      const target = isTrue(w, WorkloadCondition.DeactivationTarget) ? findCondition(w, WorkloadCondition.DeactivationTarget) : undefined;
      const message = target ? `${WorkloadMessage.Deactivated} due to ${target.message ?? target.reason}` : WorkloadMessage.Deactivated;
      await this.evict(key, w, WorkloadEvictionReason.Deactivated, message, target?.reason ?? '', now, (x) => {
        x.status = { ...x.status, conditions: (x.status?.conditions ?? []).filter((c) => c.type !== WorkloadCondition.DeactivationTarget) };
      });
      return;
    }
    const stopped = this.stoppedBy(w);
    if (stopped) {
      await this.evict(key, w, stopped.reason, stopped.message, '', now);
      return;
    }
    const cfg = this.ctx.config.waitForPodsReady;
    if (!cfg) return;
    const check = checkPodsReady(w, cfg, now);
    switch (check.kind) {
      case 'none':
        return;
      case 'wait':
        return { requeueAfterMs: Math.max(1, Math.ceil((check.at - now) * 1000)) };
      case 'evict':
        await this.evict(key, w, check.reason, check.message, check.underlyingCause, now, undefined, cfg);
        return;
      case 'deactivate': {
        const wrote = await this.write(key, (x) =>
          checkPodsReady(x, cfg, now).kind === 'deactivate' ? (applyDeactivation(x, now), true) : false,
        );
        if (!wrote) return;
        const { namespace, name } = splitKey(key);
        await retryOnConflict(this.ctx.store, 'Workload', namespace, name, (x) => {
          if (x.spec.active === false) return false;
          x.spec = { ...x.spec, active: false };
        });
        this.recorder.event(w, 'Warning', 'Deactivated', `${WorkloadMessage.Deactivated} due to ${check.message}`);
        return;
      }
    }
  }

  private async pending(key: string, w: Workload, now: number): Promise<ReconcileResult | void> {
    const requeued = findCondition(w, WorkloadCondition.Requeued);
    if (requeued?.status === 'False') {
      if (requeued.reason === WorkloadEvictionReason.ClusterQueueStopped || requeued.reason === WorkloadEvictionReason.LocalQueueStopped) {
        const lq = this.localQueueOf(w);
        const cq = lq ? this.clusterQueues.get(lq.spec.clusterQueue) : undefined;
        const restarted =
          requeued.reason === WorkloadEvictionReason.ClusterQueueStopped
            ? cq !== undefined && stopOf(cq.spec.stopPolicy) === 'None'
            : lq !== undefined && stopOf(lq.spec.stopPolicy) === 'None';
        if (restarted) {
          const reason = requeued.reason === WorkloadEvictionReason.ClusterQueueStopped ? 'ClusterQueueRestarted' : 'LocalQueueRestarted';
          await this.requeue(
            w,
            reason,
            WorkloadMessage[reason],
            now,
            (x) => findCondition(x, WorkloadCondition.Requeued)?.reason === requeued.reason,
          );
        }
        return;
      }
      if (requeued.reason === WorkloadEvictionReason.Deactivated) {
        if (w.spec.active === false) return;
        await this.requeue(
          w,
          'Reactivated',
          WorkloadMessage.Reactivated,
          now,
          (x) => x.spec.active !== false && findCondition(x, WorkloadCondition.Requeued)?.reason === WorkloadEvictionReason.Deactivated,
          (x) => {
            if (x.status?.requeueState !== undefined) {
              const { requeueState: _, ...rest } = x.status;
              x.status = rest;
            }
          },
        );
        return;
      }
    }
    if (w.spec.active === false) return;
    const { requeueAt } = requeueStateOf(w);
    if (requeueAt === undefined || isTrue(w, WorkloadCondition.Requeued)) return;
    if (requeueAt > now) return { requeueAfterMs: Math.max(1, Math.ceil((requeueAt - now) * 1000)) };
    await this.write(key, (x) => backoffFinished(x, now));
  }

  /** The stop policy that evicts this admitted Workload, if any. */
  private stoppedBy(w: Workload): { reason: string; message: string } | undefined {
    const cqName = w.status!.admission!.clusterQueue;
    const cq = cqName !== undefined ? this.clusterQueues.get(cqName) : undefined;
    const lq = this.localQueueOf(w);
    // Hold stops reservations that are not admitted yet; HoldAndDrain every one.
    const stops = (p: StopPolicy | undefined) =>
      stopOf(p) === 'HoldAndDrain' || (stopOf(p) === 'Hold' && (isReservedOnly(w) || !isTrue(w, WorkloadCondition.Admitted)));
    if (cq && stops(cq.spec.stopPolicy))
      return { reason: WorkloadEvictionReason.ClusterQueueStopped, message: WorkloadMessage.ClusterQueueStopped };
    if (lq && stops(lq.spec.stopPolicy))
      return { reason: WorkloadEvictionReason.LocalQueueStopped, message: WorkloadMessage.LocalQueueStopped };
    return undefined;
  }

  private localQueueOf(w: Workload): LocalQueue | undefined {
    const q = queueNameOf(w);
    return q !== undefined ? this.localQueues.get(w.metadata.namespace ?? 'default', q) : undefined;
  }

  /** Evicted=True on an admitted Workload not yet evicted; the reservation stays. */
  private async evict(
    key: string,
    w: Workload,
    reason: string,
    message: string,
    underlyingCause: string,
    now: number,
    extra?: (x: Workload) => void,
    podsReady?: WaitForPodsReadyConfig,
  ): Promise<void> {
    const wrote = await this.write(key, (x) => {
      if (x.status?.admission === undefined || isTrue(x, WorkloadCondition.Evicted) || isFinished(x)) return false;
      if (podsReady) {
        const c = checkPodsReady(x, podsReady, now);
        if (c.kind !== 'evict') return false;
        applyPodsReadyEviction(x, c, now);
      } else {
        writeEvicted(x, reason, message, { now });
      }
      extra?.(x);
      return true;
    });
    if (!wrote) return;
    const cq = w.status?.admission?.clusterQueue ?? '';
    const m = this.ctx.metrics;
    m.evictedWorkloads.inc({ cluster_queue: cq, reason, underlying_cause: underlyingCause });
    const ready = findCondition(w, WorkloadCondition.PodsReady);
    const readySince = ready?.status === 'True' ? parseTime(ready.lastTransitionTime) : undefined;
    if (readySince !== undefined) m.podsReadyToEvictedTime.observe({ cluster_queue: cq, reason }, Math.max(0, now - readySince));
    this.recorder.event(w, 'Normal', `EvictedDueTo${reason}`, message);
  }

  private async requeue(
    w: Workload,
    reason: string,
    message: string,
    now: number,
    still: (x: Workload) => boolean,
    extra?: (x: Workload) => void,
  ): Promise<void> {
    const wrote = await this.write(objectKey(w), (x) => {
      if (x.status?.admission !== undefined || !still(x)) return false;
      setCondition(x, { type: WorkloadCondition.Requeued, status: 'True', reason, message }, now);
      extra?.(x);
      return true;
    });
    if (wrote) this.recorder.event(w, 'Normal', reason, message);
  }

  /** A status write through retryOnConflict; `change` returns whether it changed anything. */
  private async write(key: string, change: (x: Workload) => boolean): Promise<boolean> {
    const { namespace, name } = splitKey(key);
    const r = await retryOnConflict(this.ctx.store, 'Workload', namespace, name, change, { status: true });
    return r.outcome === 'written';
  }

  private async releaseFinalizer(key: string): Promise<void> {
    const { namespace, name } = splitKey(key);
    await retryOnConflict(this.ctx.store, 'Workload', namespace, name, (x) => {
      const f = x.metadata.finalizers ?? [];
      if (!f.includes(KueueRuntimeKey.ResourceInUseFinalizer)) return false;
      x.metadata.finalizers = f.filter((y) => y !== KueueRuntimeKey.ResourceInUseFinalizer);
    });
  }
}

function queueNameOf(w: Workload): string | undefined {
  return w.spec.queueName ?? w.metadata.labels?.[KueueLabel.QueueName];
}

/** A stored queue may leave stopPolicy out: None. */
function stopOf(p: StopPolicy | undefined): StopPolicy {
  return p ?? 'None';
}
