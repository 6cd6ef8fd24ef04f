// The controller manager: one store, one informer factory, one clock, one event sink, one
// metrics registry, and the reconcilers that share them. Each reconciler gets its own
// work queue; the manager takes keys from the queues and runs `reconcile` one at a time.
//
// Two ways to run:
// - `run({ until })` (virtual clock; `simulate` and tests): process every ready key, round
//   robin over the controllers in registration order; when none is ready, move the clock
//   to the next timer; stop when nothing is left or `until` is reached. Deterministic.
// - `startWorkers()` (real clock; `serve`): keys are processed as they become ready.
//
// A reconcile that throws is logged, counted and retried with the queue's backoff; a
// controller never stops because of one bad object.

import type { KObject } from '../api/objects.ts';
import type { Clock } from './clock.ts';
import { VirtualClock } from './clock.ts';
import { type EventRecorder, EventSink, type EventSinkOptions } from './events.ts';
import { InformerFactory } from './informer.ts';
import { Metrics } from './metrics.ts';
import { isConflict, type ObjectStore } from './store.ts';
import { WorkQueue } from './work-queue.ts';

export interface ReconcileResult {
  /** Process the key again after this many milliseconds (a timer, not a failure). */
  requeueAfterMs?: number;
}

export interface ControllerContext<C = unknown> {
  store: ObjectStore;
  informers: InformerFactory;
  clock: Clock;
  events: EventSink;
  metrics: Metrics;
  config: C;
  log: Logger;
}

export interface Logger {
  error(controller: string, key: string, err: unknown): void;
  info(controller: string, message: string): void;
}

export interface Reconciler<C = unknown> {
  readonly name: string;
  /**
   * Called once before informers start: ask for informers, add indexes and handlers that
   * enqueue keys, register admission hooks. `recorder` writes Events as this controller.
   */
  setup(ctx: ControllerContext<C>, queue: WorkQueue, recorder: EventRecorder): void;
  reconcile(key: string): Promise<ReconcileResult | void>;
}

export interface LoggedError {
  at: number;
  controller: string;
  key: string;
  message: string;
}

export interface ManagerOptions<C> {
  store: ObjectStore;
  clock: Clock;
  config: C;
  events?: EventSinkOptions;
  /** Keep at most this many logged errors (default 1,000). */
  keepErrors?: number;
  /** Also told every reconcile error and info line (the controller command's structured log). */
  logger?: Logger;
}

interface Registered<C> {
  reconciler: Reconciler<C>;
  queue: WorkQueue;
}

export class Manager<C = unknown> {
  readonly store: ObjectStore;
  readonly clock: Clock;
  readonly informers: InformerFactory;
  readonly events: EventSink;
  readonly metrics = new Metrics();
  readonly config: C;
  readonly errors: LoggedError[] = [];
  /** Reconciles run so far, per controller. */
  readonly reconciles = new Map<string, number>();
  private readonly controllers: Registered<C>[] = [];
  private readonly afterStep: (() => void)[] = [];
  private next = 0;
  private started = false;
  private stopped = false;
  private readonly keepErrors: number;
  readonly log: Logger;

  constructor(opts: ManagerOptions<C>) {
    this.store = opts.store;
    this.clock = opts.clock;
    this.config = opts.config;
    this.informers = new InformerFactory(opts.store);
    this.events = new EventSink(opts.store, opts.clock, opts.events);
    this.keepErrors = opts.keepErrors ?? 1000;
    this.log = {
      error: (controller, key, err) => {
        this.errors.push({ at: this.clock.now(), controller, key, message: err instanceof Error ? err.message : String(err) });
        if (this.errors.length > this.keepErrors) this.errors.shift();
        opts.logger?.error(controller, key, err);
      },
      info: (controller, message) => opts.logger?.info(controller, message),
    };
  }

  get context(): ControllerContext<C> {
    return {
      store: this.store,
      informers: this.informers,
      clock: this.clock,
      events: this.events,
      metrics: this.metrics,
      config: this.config,
      log: this.log,
    };
  }

  add(reconciler: Reconciler<C>): WorkQueue {
    if (this.started) throw new Error(`controller ${reconciler.name} added after the manager started`);
    const queue = new WorkQueue(reconciler.name, this.clock);
    this.controllers.push({ reconciler, queue });
    return queue;
  }

  queue(name: string): WorkQueue | undefined {
    return this.controllers.find((c) => c.reconciler.name === name)?.queue;
  }

  /** Called after every reconcile (the simulation's invariant checker). */
  onStep(fn: () => void): void {
    this.afterStep.push(fn);
  }

  /** Sets every controller up, then lists and watches every informer they asked for. */
  async start(): Promise<void> {
    if (this.started) return;
    this.started = true;
    const ctx = this.context;
    for (const c of this.controllers) c.reconciler.setup(ctx, c.queue, this.events.recorder(c.reconciler.name));
    await this.informers.startAll();
  }

  /** Stops watching and drops every queued key and timer: what a crash loses. */
  stop(): void {
    this.stopped = true;
    this.informers.stopAll();
    for (const c of this.controllers) c.queue.shutdown();
  }

  /** Processes one ready key (round robin over controllers). Returns false when none is ready. */
  async step(): Promise<boolean> {
    const n = this.controllers.length;
    for (let i = 0; i < n; i++) {
      const c = this.controllers[(this.next + i) % n]!;
      const key = c.queue.get();
      if (key === undefined) continue;
      this.next = (this.next + i + 1) % n;
      await this.process(c, key);
      for (const fn of this.afterStep) fn();
      return true;
    }
    return false;
  }

  /** Processes keys until none is ready (the clock does not move). Returns how many. */
  async drain(maxSteps = Infinity): Promise<number> {
    let steps = 0;
    while (steps < maxSteps && (await this.step())) steps++;
    return steps;
  }

  /**
   * Virtual time: process, then jump to the next timer, until nothing is left to do or
   * the clock would pass `untilMs` (absolute). `idle` reports whether it stopped for lack
   * of work.
   */
  async run(opts: { untilMs?: number; maxSteps?: number } = {}): Promise<{ steps: number; idle: boolean }> {
    const clock = this.clock;
    if (!(clock instanceof VirtualClock)) throw new Error('run() needs a VirtualClock; use startWorkers() on the real clock');
    const until = opts.untilMs ?? Infinity;
    const max = opts.maxSteps ?? Infinity;
    let steps = 0;
    clock.fireDue();
    for (;;) {
      steps += await this.drain(max - steps);
      if (steps >= max) return { steps, idle: false };
      if (!clock.advance(until)) return { steps, idle: clock.nextAt() === undefined };
    }
  }

  /** Real time: process keys as they become ready, until stop(). */
  startWorkers(): void {
    let scheduled = false;
    const kick = () => {
      if (scheduled || this.stopped) return;
      scheduled = true;
      setImmediate(() => {
        scheduled = false;
        void this.drain(256).then((n) => {
          if (n > 0) kick();
        });
      });
    };
    for (const c of this.controllers) c.queue.onReady(kick);
    kick();
  }

  /**
   * Real time against a remote store (`topoqueue controller`): every controller runs its own
   * worker, so one controller waiting on the API server does not hold up the others (as
   * controller-runtime runs each controller in its own goroutines). Keys of one controller
   * are still processed one at a time, in queue order.
   */
  startConcurrentWorkers(): void {
    for (const c of this.controllers) {
      let running = false;
      const run = async () => {
        if (running || this.stopped) return;
        running = true;
        try {
          for (let key = c.queue.get(); key !== undefined && !this.stopped; key = c.queue.get()) {
            await this.process(c, key);
            for (const fn of this.afterStep) fn();
          }
        } finally {
          running = false;
        }
      };
      c.queue.onReady(() => void run());
      void run();
    }
  }

  private async process(c: Registered<C>, key: string): Promise<void> {
    const name = c.reconciler.name;
    this.reconciles.set(name, (this.reconciles.get(name) ?? 0) + 1);
    try {
      const r = await c.reconciler.reconcile(key);
      c.queue.forget(key);
      if (r?.requeueAfterMs !== undefined) c.queue.addAfter(key, r.requeueAfterMs);
      this.metrics.countReconcile(name, 'success');
    } catch (e) {
      // Conflicts are expected under concurrency: retry soon, do not log them as errors.
      if (!isConflict(e)) this.log.error(name, key, e);
      this.metrics.countReconcile(name, isConflict(e) ? 'conflict' : 'error');
      c.queue.addRateLimited(key);
    } finally {
      c.queue.done(key);
    }
  }
}

/** Enqueues an object's key. */
export const enqueueObject =
  (queue: WorkQueue) =>
  (obj: KObject): void =>
    queue.add(obj.metadata.namespace ? `${obj.metadata.namespace}/${obj.metadata.name}` : obj.metadata.name);
