// The V8 heap setting `topoqueue simulate` runs with (and the bench's simulate figures, which
// measure what the command does).
//
// V8 lets the old generation grow to about four times what survived its last full collection
// before collecting again, when collection is cheap next to the work: a simulation keeps its
// store, timeline and queues live (~65-70 MB for 15,000 TAS Workloads in the middle of the
// run), so it peaked at 4x that plus code and the process (bench/README.md, "Memory of a
// simulation run"). Growing by 3x instead (`--heap-growing-percent=200`, read by V8 at each
// full collection, so it can be set once the process runs) costs a few more full collections
// of a heap that stays small.

import { setFlagsFromString } from 'node:v8';

/** The V8 flags `simulate` sets when it starts. */
export const SIMULATE_HEAP_FLAGS: readonly string[] = ['--heap-growing-percent=200'];

let applied = false;

/** Sets SIMULATE_HEAP_FLAGS (once per process; `set` for tests). */
export function applySimulateHeapFlags(set: (flag: string) => void = setFlagsFromString): void {
  if (applied && set === setFlagsFromString) return;
  for (const f of SIMULATE_HEAP_FLAGS) set(f);
  if (set === setFlagsFromString) applied = true;
}

/** Whether this process runs with SIMULATE_HEAP_FLAGS. */
export function simulateHeapFlagsApplied(): boolean {
  return applied;
}
