// The highest resident set size of this process, in bytes.
//
// `process.resourceUsage().maxRSS` (getrusage's ru_maxrss) is not the child's own peak when
// a large process spawned it: Linux carries the RSS the forked copy had at exec into the
// child's ru_maxrss. Spawned from the benchmark process at 1.2 GB, a child that never held
// more than 40 MB reported 475 MB; each bare simulate run read 354.8 MB, to the byte, the
// parent's RSS at the spawn. /proc/self/status' VmHWM is the high-water mark of the process's
// own memory map, made anew at exec, so it is used where it exists (Linux); elsewhere maxRSS.

import { readFileSync } from 'node:fs';

/** Peak RSS of this process since it was exec'd: VmHWM on Linux, else getrusage's maxRSS. */
export function peakRssBytes(): number {
  try {
    const m = /^VmHWM:\s+(\d+)\s+kB$/m.exec(readFileSync('/proc/self/status', 'utf8'));
    if (m) return Number(m[1]) * 1024;
  } catch {
    // no procfs: fall through
  }
  return process.resourceUsage().maxRSS * 1024;
}
