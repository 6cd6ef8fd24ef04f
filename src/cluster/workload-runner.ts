// Kueue's performance runner (test/performance/scheduler/runner), as a stand-in: bare
// Workloads (no ownerReferences, so no job will run them) that carry
// `topoqueue.io/run-duration` are run by this controller instead of by pods.
//   1. admitted (Admitted=True, not Evicted): the "job" starts at once, so PodsReady=True
//      (reason Started) is written: waitForPodsReady, on by default, would otherwise evict it;
//   2. the run duration after its Admitted=True transition: Finished=True, reason Succeeded,
//      message `Job finished successfully` (status write, retried on conflict);
//   3. evicted before that: nothing; the workload controller clears a bare Workload's
//      reservation, and the run starts over from its next admission.
// The admission instant is taken from the Admitted transition this controller saw happen
// (ms); after a restart, from the condition's lastTransitionTime (whole seconds). An
// unreadable duration gets a Warning Event and the kubelet's default (60 s).

import { parseGoDuration } from '../api/gang.ts';
import { TopoqueueAnnotation } from '../api/keys.ts';
import type { Workload } from '../api/objects.ts';
import { parseTime } from '../api/time.ts';
import { findCondition, isTrue, setCondition, WorkloadCondition } from '../admission/conditions.ts';
import { podsReadyCondition } from '../admission/pods-ready.ts';
import type { TopoqueueConfig } from '../controllers/config.ts';
import { nowSeconds } from '../runtime/clock.ts';
import type { EventRecorder } from '../runtime/events.ts';
import type { Informer } from '../runtime/informer.ts';
import type { ControllerContext, ReconcileResult, Reconciler } from '../runtime/manager.ts';
import { objectKey, retryOnConflict, splitKey } from '../runtime/store.ts';
import { DEFAULT_RUN_DURATION_S } from './kubelet.ts';

export const FINISHED_REASON = 'Succeeded';
export const FINISHED_MESSAGE = 'Job finished successfully';

const runnable = (w: Workload): boolean =>
  (w.metadata.ownerReferences ?? []).length === 0 &&
  w.metadata.annotations?.[TopoqueueAnnotation.RunDuration] !== undefined &&
  !isTrue(w, WorkloadCondition.Finished);

const running = (w: Workload): boolean => isTrue(w, WorkloadCondition.Admitted) && !isTrue(w, WorkloadCondition.Evicted);

export class WorkloadRunner {
  private ctx!: ControllerContext<TopoqueueConfig>;
  private recorder!: EventRecorder;
  private workloads!: Informer<Workload>;
  /** When the current admission was seen (ms), by `uid\0lastTransitionTime`. */
  private readonly admittedAt = new Map<string, number>();
  private readonly warned = new Set<string>();
  /** Workloads finished so far (reports and tests). */
  finished = 0;

  setup(ctx: ControllerContext<TopoqueueConfig>, queue: { add(key: string): void }, recorder: EventRecorder): void {
    this.ctx = ctx;
    this.recorder = recorder;
    this.workloads = ctx.informers.for('Workload');
    const seen = (old: Workload | undefined, w: Workload) => {
      if (!runnable(w)) return;
      if (running(w) && !(old && running(old))) this.admittedAt.set(this.admissionId(w), ctx.clock.now());
      queue.add(objectKey(w));
    };
    this.workloads.addHandler({
      add: (w) => seen(undefined, w),
      update: (old, w) => seen(old, w),
      delete: (w) => {
        for (const k of this.admittedAt.keys()) if (k.startsWith(`${w.metadata.uid}\u0000`)) this.admittedAt.delete(k);
      },
    });
  }

  private admissionId(w: Workload): string {
    return `${w.metadata.uid}\u0000${findCondition(w, WorkloadCondition.Admitted)?.lastTransitionTime ?? ''}`;
  }

  async reconcile(key: string): Promise<ReconcileResult | void> {
    const w = this.workloads.get(key);
    if (!w || !runnable(w) || !running(w)) return;
    const now = this.ctx.clock.now();
    const id = this.admissionId(w);
    const since =
      this.admittedAt.get(id) ?? (parseTime(findCondition(w, WorkloadCondition.Admitted)?.lastTransitionTime) ?? now / 1000) * 1000;
    const finishAt = since + this.durationMs(w);
    const { namespace, name } = splitKey(key);
    const done = now >= finishAt;
    const ready = podsReadyCondition(w, { admitted: true, allReady: true }, nowSeconds(this.ctx.clock));
    let r: Workload | undefined;
    if (done || ready) {
      ({ object: r } = await retryOnConflict(
        this.ctx.store,
        'Workload',
        namespace,
        name,
        (x) => {
          if (x.metadata.uid !== w.metadata.uid || !runnable(x) || !running(x) || this.admissionId(x) !== id) return false;
          const t = nowSeconds(this.ctx.clock);
          const c = podsReadyCondition(x, { admitted: true, allReady: true }, t);
          if (c) setCondition(x, c, t);
          if (done)
            setCondition(x, { type: WorkloadCondition.Finished, status: 'True', reason: FINISHED_REASON, message: FINISHED_MESSAGE }, t);
          return c !== undefined || done;
        },
        { status: true },
      ));
    }
    if (done) {
      if (r && isTrue(r, WorkloadCondition.Finished)) this.finished++;
      this.admittedAt.delete(id);
      return;
    }
    return { requeueAfterMs: finishAt - now };
  }

  private durationMs(w: Workload): number {
    const raw = w.metadata.annotations![TopoqueueAnnotation.RunDuration]!;
    const s = parseGoDuration(raw);
    if (s !== undefined && s >= 0) return s * 1000;
    if (!this.warned.has(w.metadata.uid!)) {
      this.warned.add(w.metadata.uid!);
      this.recorder.event(
        w,
        'Warning',
        'InvalidAnnotation',
        `${TopoqueueAnnotation.RunDuration}=${JSON.stringify(raw)} is not a Go duration such as "90s" or "1h30m": using the default ${DEFAULT_RUN_DURATION_S}s`,
      );
    }
    return DEFAULT_RUN_DURATION_S * 1000;
  }
}

export function workloadRunner(): Reconciler<TopoqueueConfig> & { readonly state: WorkloadRunner } {
  const state = new WorkloadRunner();
  return {
    name: 'workload-runner',
    state,
    setup: (ctx, queue, recorder) => state.setup(ctx, queue, recorder),
    reconcile: (key) => state.reconcile(key),
  };
}
