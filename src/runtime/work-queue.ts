// A per-key coalescing work queue (client-go's workqueue): a key waits in the queue at most
// once; a key added while it is being processed is processed again after; delayed adds go
// through the Clock; failures back off per key, exponentially (5 ms doubling up to 1000 s,
// client-go's default item limiter).

import type { Clock, Timer } from './clock.ts';

export interface RateLimit {
  baseMs: number;
  maxMs: number;
}

export const DEFAULT_RATE_LIMIT: RateLimit = { baseMs: 5, maxMs: 1_000_000 };

export class WorkQueue {
  private readonly queue: string[] = [];
  private head = 0;
  private readonly queued = new Set<string>();
  private readonly processing = new Set<string>();
  private readonly dirty = new Set<string>();
  private readonly failures = new Map<string, number>();
  private readonly delayed = new Map<string, { at: number; timer: Timer }>();
  private listener: (() => void) | undefined;

  constructor(
    readonly name: string,
    private readonly clock: Clock,
    private readonly rateLimit: RateLimit = DEFAULT_RATE_LIMIT,
  ) {}

  /** Called when a key becomes ready (the manager's wake-up in real time). */
  onReady(fn: () => void): void {
    this.listener = fn;
  }

  add(key: string): void {
    if (this.processing.has(key)) {
      this.dirty.add(key);
      return;
    }
    if (this.queued.has(key)) return;
    this.queued.add(key);
    this.queue.push(key);
    this.listener?.();
  }

  /** Adds the key after `ms`; an earlier pending delayed add of the same key wins. */
  addAfter(key: string, ms: number): void {
    if (ms <= 0) {
      this.add(key);
      return;
    }
    const at = this.clock.now() + ms;
    const prev = this.delayed.get(key);
    if (prev && prev.at <= at) return;
    prev?.timer.cancel();
    const timer = this.clock.setTimer(ms, () => {
      this.delayed.delete(key);
      this.add(key);
    });
    this.delayed.set(key, { at, timer });
  }

  /** Adds the key after its next backoff step. */
  addRateLimited(key: string): void {
    const n = this.failures.get(key) ?? 0;
    this.failures.set(key, n + 1);
    this.addAfter(key, Math.min(this.rateLimit.maxMs, this.rateLimit.baseMs * 2 ** n));
  }

  /** Clears the key's backoff (after a success). */
  forget(key: string): void {
    this.failures.delete(key);
  }

  retries(key: string): number {
    return this.failures.get(key) ?? 0;
  }

  /** The next key to process, or undefined when none is ready. Call `done` after. */
  get(): string | undefined {
    if (this.head >= this.queue.length) return undefined;
    const key = this.queue[this.head++]!;
    if (this.head > 1024 && this.head * 2 > this.queue.length) {
      this.queue.splice(0, this.head);
      this.head = 0;
    }
    this.queued.delete(key);
    this.processing.add(key);
    return key;
  }

  done(key: string): void {
    this.processing.delete(key);
    if (this.dirty.delete(key)) this.add(key);
  }

  get length(): number {
    return this.queue.length - this.head;
  }

  /** Keys waiting on a timer. */
  get waiting(): number {
    return this.delayed.size;
  }

  shutdown(): void {
    for (const d of this.delayed.values()) d.timer.cancel();
    this.delayed.clear();
    this.queue.length = 0;
    this.head = 0;
    this.queued.clear();
    this.listener = undefined;
  }
}
