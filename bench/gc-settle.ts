// A forced full gc whose background work is over before a figure is timed.
//
// After `gc()` returns, V8 still sweeps the collected pages and hands memory back on its
// background threads. On this 2-core machine a figure timed in that window measures that
// work as well: one 5,000-ClusterQueue admission cycle read 36-74 ms (median 48) right after
// the benchmark's gc of a 400 MB heap, and 19-31 ms (median 26) once the sweeping was done, the
// same as with `--no-concurrent-sweeping`, where gc() does it all before returning. The
// larger the heap an earlier figure left, the longer the window, so the figure also grew
// with what ran before it in `npm run bench` (54-62 ms in full runs).
//
// So the benchmark's one-shot timings (a snapshot build, one cycle) wait, with the main
// thread asleep, until the process's other threads stop using CPU.

/** The main thread asleep for `ms` (the process's other threads run on). */
export function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

export interface SettleOptions {
  /** The forced collection; `globalThis.gc` (node --expose-gc) by default. */
  gc?: () => void;
  /** Sleep in steps of this many ms ... */
  stepMs?: number;
  /** ... until one step used less than this many ms of the process's CPU (all threads). */
  idleCpuMs?: number;
  /** Give up waiting after this long. */
  maxMs?: number;
}

/** gc(), then wait until its background work is over: the ms waited. */
export function settledGc(opts: SettleOptions = {}): number {
  const { gc = globalThis.gc, stepMs = 10, idleCpuMs = 1, maxMs = 3000 } = opts;
  if (!gc) throw new Error('settledGc: no gc() (run node with --expose-gc)');
  gc();
  const t0 = performance.now();
  for (;;) {
    const c = process.cpuUsage();
    sleepSync(stepMs);
    const d = process.cpuUsage(c);
    const waited = performance.now() - t0;
    if ((d.user + d.system) / 1000 < idleCpuMs || waited >= maxMs) return waited;
  }
}
