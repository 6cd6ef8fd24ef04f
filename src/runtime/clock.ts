// Time for everything above the pure core: every timer goes through a Clock, so the same
// controllers run on the wall clock (`serve`) or on a virtual one (`simulate`, tests) that
// jumps from one timer to the next: a day of traffic runs in seconds, and the same input
// gives the same run.

import { formatTime } from '../api/time.ts';

export interface Timer {
  cancel(): void;
}

export interface Clock {
  /** Milliseconds since the Unix epoch. */
  now(): number;
  /** Runs `fn` once, `delayMs` from now (0: at the next turn, never synchronously). */
  setTimer(delayMs: number, fn: () => void): Timer;
}

/** Seconds since the epoch, as the pure core counts time. */
export const nowSeconds = (clock: Clock): number => clock.now() / 1000;

/** RFC 3339, whole seconds, as Kubernetes writes metav1.Time. */
export const nowTimestamp = (clock: Clock): string => formatTime(clock.now() / 1000);

export class RealClock implements Clock {
  now(): number {
    return Date.now();
  }
  setTimer(delayMs: number, fn: () => void): Timer {
    const t = setTimeout(fn, Math.max(0, delayMs));
    return { cancel: () => clearTimeout(t) };
  }
}

/**
 * The wall clock, sped up N times from its start (`serve --time-scale N`): now() = start +
 * elapsed x N, and a timer of d ms fires after d / N real ms. A pod that runs for an hour
 * finishes in a minute at 60. N = 1 is the wall clock.
 */
export class ScaledClock implements Clock {
  private start: number;
  constructor(
    readonly scale: number,
    private readonly wall: () => number = Date.now,
  ) {
    if (!(scale > 0) || !Number.isFinite(scale)) throw new Error(`time scale must be a positive number, got ${scale}`);
    this.start = wall();
  }
  now(): number {
    return Math.floor(this.start + this.offset + (this.wall() - this.start) * this.scale);
  }
  private offset = 0;
  /**
   * Never earlier than `ms` from now on: a restart on a data directory resumes from the
   * latest time its objects record, which at a scale above 1 runs ahead of the wall clock.
   */
  resumeFrom(ms: number): void {
    const behind = ms - this.now();
    if (behind > 0) this.offset += behind;
  }
  setTimer(delayMs: number, fn: () => void): Timer {
    const t = setTimeout(fn, Math.max(0, delayMs) / this.scale);
    return { cancel: () => clearTimeout(t) };
  }
}

/** A timer of the virtual clock: its own handle (no closure and handle object per timer: a run sets one per submission and per delayed key). */
class Pending implements Timer {
  cancelled = false;
  constructor(
    readonly at: number,
    readonly seq: number,
    readonly fn: () => void,
  ) {}

  cancel(): void {
    this.cancelled = true;
  }
}

/** 2026-01-01T00:00:00Z: where virtual time starts unless told otherwise. */
export const VIRTUAL_EPOCH_MS = Date.UTC(2026, 0, 1);

/**
 * Time that moves only when told. Timers due at the same instant fire in the order they
 * were set. `advance()` moves to the next due timer and fires everything due then.
 */
export class VirtualClock implements Clock {
  private t: number;
  private seq = 0;
  /** Binary min-heap on (at, seq). */
  private heap: Pending[] = [];

  constructor(startMs: number = VIRTUAL_EPOCH_MS) {
    this.t = startMs;
  }

  now(): number {
    return this.t;
  }

  setTimer(delayMs: number, fn: () => void): Timer {
    const p = new Pending(this.t + Math.max(0, delayMs), this.seq++, fn);
    this.push(p);
    return p;
  }

  /** When the next live timer is due, or undefined when none is set. */
  nextAt(): number | undefined {
    while (this.heap.length > 0 && this.heap[0]!.cancelled) this.pop();
    return this.heap[0]?.at;
  }

  /** Timers still set (cancelled ones excluded lazily; an upper bound). */
  get pending(): number {
    return this.heap.length;
  }

  /**
   * Fires every timer due at or before `now()` (timers set while firing, due now, fire
   * too). Returns how many fired.
   */
  fireDue(): number {
    let n = 0;
    while (this.heap.length > 0 && this.heap[0]!.at <= this.t) {
      const p = this.pop()!;
      if (p.cancelled) continue;
      p.cancelled = true;
      p.fn();
      n++;
    }
    return n;
  }

  /** Moves time to the next due timer (never backwards, at most to `limit`) and fires what is due. Returns false when nothing is set before `limit`. */
  advance(limit = Infinity): boolean {
    const at = this.nextAt();
    if (at === undefined || at > limit) {
      if (limit !== Infinity && limit > this.t) this.t = limit;
      return false;
    }
    if (at > this.t) this.t = at;
    this.fireDue();
    return true;
  }

  /** Moves time forward by `ms`, firing timers as they come due. */
  advanceBy(ms: number): void {
    const end = this.t + ms;
    while (this.advance(end)) {
      /* fire in order */
    }
    this.t = Math.max(this.t, end);
  }

  private less(a: Pending, b: Pending): boolean {
    return a.at < b.at || (a.at === b.at && a.seq < b.seq);
  }

  private push(p: Pending): void {
    const h = this.heap;
    h.push(p);
    let i = h.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.less(h[i]!, h[parent]!)) break;
      [h[i], h[parent]] = [h[parent]!, h[i]!];
      i = parent;
    }
  }

  private pop(): Pending | undefined {
    const h = this.heap;
    if (h.length === 0) return undefined;
    const top = h[0]!;
    const last = h.pop()!;
    if (h.length > 0) {
      h[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < h.length && this.less(h[l]!, h[m]!)) m = l;
        if (r < h.length && this.less(h[r]!, h[m]!)) m = r;
        if (m === i) break;
        [h[i], h[m]] = [h[m]!, h[i]!];
        i = m;
      }
    }
    return top;
  }
}
