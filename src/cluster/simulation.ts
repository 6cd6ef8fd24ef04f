// `simulate`: a day of traffic on the embedded cluster in virtual time.
//
// 1. input: objects (parsed, and checked as `plan` checks them: cli/simulate.ts), each
//    due at 0 or at its `topoqueue.io/submit-at` duration; at one instant, cluster objects
//    first (CLUSTER_KINDS order), then the rest in input order. SimulationEvents are
//    created at their submit time (0 by default) with `topoqueue.io/simulation-start` set to
//    the start, so their `spec.at` counts from the start whenever they are created;
// 2. the cluster starts (webhooks registered), the objects due at 0 are created, the others
//    on clock timers; the timeline recorder and the invariant checker watch the store; the
//    checker runs after every step of the manager and fully every N steps and at the end;
// 3. the run loop: process every ready key, then move the clock to the next timer; stop
//    when nothing is left (idle), at `untilMs`, or, when running to idle, at the limit
//    (something keeps setting timers forever);
// 4. progress: a callback every N steps and at every virtual hour.
// A create the store refuses (a webhook denial, a duplicate name) is recorded for that
// object and the run goes on.

import { InputError, type Where } from '../api/errors.ts';
import { parseGoDuration } from '../api/gang.ts';
import { TopoqueueAnnotation } from '../api/keys.ts';
import type { ParsedObject } from '../api/manifest.ts';
import { objectRef } from '../api/manifest.ts';
import type { KObject } from '../api/objects.ts';
import { parseObject } from '../api/schemas.ts';
import { formatTime } from '../api/time.ts';
import type { TopoqueueConfig } from '../controllers/config.ts';
import { VIRTUAL_EPOCH_MS, VirtualClock } from '../runtime/clock.ts';
import type { Reconciler } from '../runtime/manager.ts';
import { clusterRank, EmbeddedCluster } from './embedded.ts';
import { InvariantChecker } from './invariants.ts';
import { Timeline } from './timeline.ts';

export const SUBMIT_AT_FIELD = `metadata.annotations["${TopoqueueAnnotation.SubmitAt}"]`;
const HOUR_MS = 3_600_000;

export interface Submission {
  object: KObject;
  where: Where;
  /** Milliseconds from the start. */
  atMs: number;
  /** Position in the input. */
  index: number;
}

/**
 * When each object is created, in creation order: by time, then cluster objects first
 * (CLUSTER_KINDS order), then input order. A bad submit-at is an error naming the field.
 */
export function planSubmissions(objects: readonly ParsedObject[]): { submissions: Submission[]; errors: InputError[] } {
  const errors: InputError[] = [];
  const submissions: Submission[] = [];
  objects.forEach(({ object, where }, index) => {
    const raw = object.metadata.annotations?.[TopoqueueAnnotation.SubmitAt];
    let atMs = 0;
    if (raw !== undefined) {
      const s = parseGoDuration(raw);
      if (s === undefined || s < 0) {
        errors.push(
          new InputError(
            { ...where, field: SUBMIT_AT_FIELD },
            `must be a non-negative Go duration from the start of the simulation, such as "90s", "2h" or "1h30m", got ${JSON.stringify(raw)}`,
          ),
        );
        return;
      }
      atMs = Math.round(s * 1000);
    }
    submissions.push({ object, where, atMs, index });
  });
  const rank = (s: Submission) => clusterRank(s.object.kind) ?? Number.MAX_SAFE_INTEGER;
  submissions.sort((a, b) => a.atMs - b.atMs || rank(a) - rank(b) || a.index - b.index);
  return { submissions, errors };
}

/** Parses plain objects (an API caller's, e.g. the benchmark's) as `-f` files are parsed. */
export function parseSimulationObjects(objects: readonly KObject[]): { objects: ParsedObject[]; errors: InputError[] } {
  const out: ParsedObject[] = [];
  const errors: InputError[] = [];
  objects.forEach((o, i) => {
    const where: Where = { document: i + 1, object: objectRef(o) };
    const r = parseObject(o, where);
    errors.push(...r.errors);
    if (r.object) out.push({ object: r.object, where });
  });
  return { objects: out, errors };
}

export interface SimulationProgress {
  /** Milliseconds from the start. */
  atMs: number;
  steps: number;
  /** Report entries finished (or failed) so far, and in all. */
  finished: number;
  total: number;
  /** A virtual hour boundary was crossed (plain-line progress prints on these). */
  hour: boolean;
  done: boolean;
}

export interface SimulationOptions {
  /** Stop this many ms after the start; undefined: run until idle. */
  untilMs?: number;
  /** Running to idle: stop anyway this long after the last submission (default 7 days). */
  idleLimitMs?: number;
  /** Clock time of the start (default 2026-01-01T00:00:00Z). */
  startMs?: number;
  config?: Partial<TopoqueueConfig>;
  /** Default: every controller and stand-in. */
  controllers?: readonly Reconciler<TopoqueueConfig>[];
  /** A full invariant check every this many steps (default 5,000). */
  fullCheckEvery?: number;
  onProgress?: (p: SimulationProgress) => void;
  /** Progress callback every this many steps (default 2,000). */
  progressEverySteps?: number;
  /** Aborted (Ctrl-C): stop at the next turn of the run loop; the run is `interrupted`. */
  signal?: AbortSignal;
  /** Workloads and jobs the input check refused: reported as never admitted, with why. */
  refusedInput?: readonly { object: KObject; errors: readonly string[] }[];
}

export const StopReason = { Idle: 'idle', Until: 'until', Limit: 'limit', Interrupted: 'interrupted' } as const;
export type StopReason = (typeof StopReason)[keyof typeof StopReason];

export interface Refusal {
  object: string;
  where: Where;
  /** Milliseconds from the start. */
  atMs: number;
  message: string;
}

export interface SimulationRun {
  cluster: EmbeddedCluster;
  clock: VirtualClock;
  timeline: Timeline;
  checker: InvariantChecker;
  startMs: number;
  /** Clock time at the end. */
  endMs: number;
  steps: number;
  stop: StopReason;
  untilMs?: number;
  refused: Refusal[];
}

export const DEFAULT_IDLE_LIMIT_MS = 7 * 24 * HOUR_MS;

/**
 * Runs a simulation of parsed objects (checked as cli/simulate.ts checks them). The run keeps
 * an input object only until it is created (the store has its own copy): a caller that drops
 * `objects` once this has been called holds no second copy of the input during the run.
 */
export async function runSimulation(objects: readonly ParsedObject[], opts: SimulationOptions = {}): Promise<SimulationRun> {
  const startMs = opts.startMs ?? VIRTUAL_EPOCH_MS;
  const { submissions, errors } = planSubmissions(objects);
  if (errors.length > 0) throw errors[0];
  const clock = new VirtualClock(startMs);
  const cluster = new EmbeddedCluster({ clock, config: opts.config, controllers: opts.controllers, events: { writeToStore: false } });
  const timeline = new Timeline(cluster.store, clock);
  const checker = new InvariantChecker({ store: cluster.store, clock, startMs, fullEvery: opts.fullCheckEvery });
  const refused: Refusal[] = [];
  const simulationStart = formatTime(startMs / 1000);

  const submit = (s: { object: KObject; where: Where }) => {
    let obj = s.object;
    if (obj.kind === 'SimulationEvent') {
      obj = structuredClone(obj);
      obj.metadata.annotations = { ...(obj.metadata.annotations ?? {}), [TopoqueueAnnotation.SimulationStart]: simulationStart };
    }
    const r = cluster.create(obj);
    if (clusterRank(obj.kind) === undefined) timeline.submitted(obj, r.object, r.error);
    if (r.error !== undefined) refused.push({ object: objectRef(obj), where: s.where, atMs: clock.now() - startMs, message: r.error });
  };

  await cluster.start();
  await timeline.start();
  timeline.watchEvents(cluster.manager.events);
  await checker.start();
  for (const s of submissions) if (clusterRank(s.object.kind) === undefined) timeline.scheduled(s.object, s.atMs);
  const total = timeline.entries.size;
  for (const r of opts.refusedInput ?? []) timeline.refusedInput(r.object, r.errors);

  let steps = 0;
  const every = opts.progressEverySteps ?? 2000;
  let nextHour = startMs + HOUR_MS;
  const progress = (done: boolean) => {
    if (!opts.onProgress) return;
    const hour = clock.now() >= nextHour;
    while (clock.now() >= nextHour) nextHour += HOUR_MS;
    opts.onProgress({ atMs: clock.now() - startMs, steps, finished: timeline.finishedEntries, total, hour, done });
  };
  cluster.manager.onStep(() => {
    checker.step();
    steps++;
    if (steps % every === 0) progress(false);
  });

  const lastSubmission = submissions.length > 0 ? submissions[submissions.length - 1]!.atMs : 0;
  for (const { object, where, atMs } of submissions) {
    // The timer holds the object until it fires, not the list of every submission.
    if (atMs === 0) submit({ object, where });
    else clock.setTimer(atMs, () => submit({ object, where }));
  }
  submissions.length = 0;
  const until = opts.untilMs !== undefined ? startMs + opts.untilMs : undefined;
  const limit = startMs + lastSubmission + (opts.idleLimitMs ?? DEFAULT_IDLE_LIMIT_MS);

  let stop: StopReason;
  clock.fireDue();
  let turns = 0;
  for (;;) {
    await cluster.manager.drain();
    if (clock.now() >= nextHour) progress(false);
    if (opts.signal) {
      // Let a signal handler run now and then (the loop otherwise only yields to microtasks).
      if (++turns % 10 === 0) await new Promise((r) => setImmediate(r));
      if (opts.signal.aborted) {
        stop = StopReason.Interrupted;
        break;
      }
    }
    const next = clock.nextAt();
    if (next === undefined) {
      stop = StopReason.Idle;
      if (until !== undefined) clock.advanceBy(until - clock.now());
      break;
    }
    if (until !== undefined && next > until) {
      clock.advanceBy(until - clock.now());
      stop = StopReason.Until;
      break;
    }
    if (until === undefined && next > limit) {
      stop = StopReason.Limit;
      break;
    }
    clock.advance();
  }
  checker.full();
  progress(true);
  timeline.stop();
  checker.stop();
  cluster.stop();
  return { cluster, clock, timeline, checker, startMs, endMs: clock.now(), steps, stop, untilMs: opts.untilMs, refused };
}
