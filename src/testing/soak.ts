// Fixtures for the restart test and the random soak: a seeded PRNG, a controller-manager
// "process" that can crash (its webhooks die with it and its writes fail from the crash on),
// and a step-by-step driver of a manager in virtual time that stops when asked.
// Test-only.

import type { TopoqueueConfig } from '../controllers/config.ts';
import { defaultConfig } from '../controllers/config.ts';
import { allControllers } from '../controllers/index.ts';
import { standIns } from '../cluster/index.ts';
import type { VirtualClock } from '../runtime/clock.ts';
import { Manager } from '../runtime/manager.ts';
import type { MemoryStore } from '../runtime/memory-store.ts';
import type { AdmissionHook, ObjectStore } from '../runtime/store.ts';

/** mulberry32: a 32-bit seeded PRNG, uniform in [0, 1). */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export class Rng {
  private readonly next: () => number;
  constructor(readonly seed: number) {
    this.next = mulberry32(seed);
  }
  float(): number {
    return this.next();
  }
  /** An integer in [lo, hi]. */
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.next() * (hi - lo + 1));
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new Error('pick from an empty list');
    return items[Math.floor(this.next() * items.length)]!;
  }
}

const WRITES = new Set(['create', 'update', 'updateStatus', 'delete', 'createSync', 'updateSync', 'updateStatusSync', 'deleteSync']);

export class ProcessCrashed extends Error {
  constructor() {
    super('the controller process crashed: this write never reached the API server');
  }
}

/**
 * One controller-manager process over a shared store: every controller and stand-in, fresh
 * instances. `crash()` is what a kill -9 does: from that instant its writes fail (a write in
 * the middle of a reconcile is the last one that got through), its webhooks stop answering
 * (they served from its memory), and its informers, queues and timers are gone.
 */
export interface Process {
  readonly manager: Manager<TopoqueueConfig>;
  readonly crashed: boolean;
  crash(): void;
}

export interface ProcessOptions {
  config?: Partial<TopoqueueConfig>;
  /** Reconciler names left out (to check that a test notices one missing). */
  omit?: readonly string[];
}

export async function startProcess(store: MemoryStore, clock: VirtualClock, opts: ProcessOptions = {}): Promise<Process> {
  let alive = true;
  const view = new Proxy(store, {
    get(target, prop) {
      if (prop === 'addAdmissionHook') {
        return (h: AdmissionHook) => target.addAdmissionHook({ ...h, admit: (req) => (alive ? h.admit(req) : undefined) });
      }
      const v = Reflect.get(target, prop, target) as unknown;
      if (typeof v !== 'function') return v;
      if (typeof prop === 'string' && WRITES.has(prop)) {
        return (...args: unknown[]) => {
          if (!alive) throw new ProcessCrashed();
          return (v as (...a: unknown[]) => unknown).apply(target, args);
        };
      }
      return (v as (...a: unknown[]) => unknown).bind(target);
    },
  }) as ObjectStore as MemoryStore;
  const manager = new Manager<TopoqueueConfig>({ store: view, clock, config: defaultConfig(opts.config), events: { writeToStore: false } });
  for (const c of [...allControllers(), ...standIns()]) if (!opts.omit?.includes(c.name)) manager.add(c);
  await manager.start();
  return {
    manager,
    get crashed() {
      return !alive;
    },
    crash() {
      if (!alive) return;
      alive = false;
      manager.stop();
    },
  };
}

export const DriveStop = { Idle: 'idle', Until: 'until', Crashed: 'crashed', Limit: 'limit' } as const;
export type DriveStop = (typeof DriveStop)[keyof typeof DriveStop];

/**
 * Runs a process in virtual time as Manager.run does (every ready key, then the next timer),
 * one step at a time, until nothing is left (idle), the clock would pass `untilMs`, the
 * process crashed (e.g. from a watch handler in the middle of a step), or `maxSteps`.
 */
export async function drive(p: Process, clock: VirtualClock, opts: { untilMs?: number; maxSteps?: number } = {}): Promise<DriveStop> {
  const until = opts.untilMs ?? Infinity;
  const max = opts.maxSteps ?? 2_000_000;
  let steps = 0;
  clock.fireDue();
  for (;;) {
    while (!p.crashed && (await p.manager.step())) {
      if (p.crashed) return DriveStop.Crashed;
      if (++steps >= max) return DriveStop.Limit;
    }
    if (p.crashed) return DriveStop.Crashed;
    if (!clock.advance(until)) return clock.nextAt() === undefined ? DriveStop.Idle : DriveStop.Until;
  }
}
