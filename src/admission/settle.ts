// Cycles at one instant until nothing more changes (`topoqueue plan` with queues, and the
// tests): every decision is written on a copy of its Workload; preemptions take effect at
// once (no pods to stop), the victims are requeued and the capacity they free is offered
// to every parked Workload.

import type { Workload } from '../api/objects.ts';
import { schedule, type CycleConfig, type Decision } from './cycle.ts';
import type { QueueManager } from './queue.ts';
import type { AdmissionSnapshot } from './snapshot.ts';
import { type StatusOptions, writeAdmission, writeGangTimeout, writeGangWaitingSince, writePending, writePreempted } from './status.ts';
import { workloadInfo } from './workload-info.ts';

export interface SettleOptions extends CycleConfig {
  status?: StatusOptions;
  /** Guard against a cycle that never settles (default 100,000). */
  maxCycles?: number;
}

export interface SettleResult {
  /** Every Workload a decision touched, with its final status, by key. */
  workloads: Map<string, Workload>;
  /** The last decision per Workload. */
  last: Map<string, Decision>;
  cycles: number;
  admitted: number;
  preempted: number;
}

export function settle(snap: AdmissionSnapshot, queues: QueueManager, opts: SettleOptions): SettleResult {
  const workloads = new Map<string, Workload>();
  const last = new Map<string, Decision>();
  const copy = (key: string, w: Workload): Workload => {
    let c = workloads.get(key);
    if (!c) {
      c = structuredClone(w);
      workloads.set(key, c);
    }
    return c;
  };
  const status = opts.status ?? {};
  let cycles = 0;
  let admitted = 0;
  let preempted = 0;
  const max = opts.maxCycles ?? 100_000;
  while (cycles < max) {
    cycles++;
    const r = schedule(snap, queues, opts);
    let freed = false;
    for (const d of r.decisions) {
      last.set(d.key, d);
      switch (d.kind) {
        case 'admit': {
          const w = copy(d.key, d.workload);
          if (d.gangWaitingSince !== undefined) writeGangWaitingSince(w, d.gangWaitingSince);
          writeAdmission(w, d.admitted, status);
          // The snapshot keeps the Workload as written, so an eviction starts from it.
          d.admitted.workload = w;
          if (!d.reservedOnly) admitted++;
          break;
        }
        case 'pending': {
          const w = copy(d.key, d.workload);
          if (d.gangWaitingSince !== undefined) {
            writeGangWaitingSince(w, d.gangWaitingSince);
            const info = queues.get(d.key);
            if (info?.gang) info.gang.waitingSince = d.gangWaitingSince;
          }
          // A NonStrict gang keeps its partial reservation while it waits.
          if (!snap.admitted.has(d.key)) writePending(w, d.reason, d.message, status);
          break;
        }
        case 'gangTimeout': {
          const w = copy(d.key, d.workload);
          writeGangTimeout(w, d.message, status);
          break;
        }
        case 'preempt': {
          const victim = snap.removeAdmitted(d.key);
          if (!victim) break;
          preempted++;
          freed = true;
          const w = copy(d.key, victim.workload);
          writePreempted(w, d.target, status);
          if (queues.queue(victim.clusterQueue)) queues.add(victim.clusterQueue, workloadInfo(w, snap.priorityClasses));
          break;
        }
      }
    }
    if (freed) queues.requeueInadmissible(opts.now);
    if (r.admitted === 0 && r.preempting === 0 && r.parked === 0) break;
  }
  return { workloads, last, cycles, admitted, preempted };
}
