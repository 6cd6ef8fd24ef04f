// The requests of a pod as the simulation's observers count them (the invariant checker,
// invariants.ts, and the timeline, timeline.ts): api/resources.ts's podRequests of its
// spec, remembered by the shape of its resources (the pods of one template share it).
//
// A pod whose requests cannot be read (a bad quantity) is not taken as requesting nothing:
// the read says why, and the observer decides what to report (the checker reports it as a
// violation; the timeline counts only the pod's slot and leaves the reporting to it).

import type { Pod } from '../api/objects.ts';
import { podRequests, type ResourceAmounts } from '../api/resources.ts';

export type PodRequestsRead = { ok: true; requests: ResourceAmounts } | { ok: false; problem: string };

export interface PodRequestReaderOptions {
  /** Add `pods: 1` to every read: the pod takes one of its node's `pods` (an unreadable pod too). */
  countPodSlot?: boolean;
  /** Shapes remembered before the memory is cleared (default 10,000). */
  maxShapes?: number;
}

export class PodRequestReader {
  private readonly byShape = new Map<string, PodRequestsRead>();
  private readonly countPodSlot: boolean;
  private readonly maxShapes: number;

  constructor(opts: PodRequestReaderOptions = {}) {
    this.countPodSlot = opts.countPodSlot === true;
    this.maxShapes = opts.maxShapes ?? 10_000;
  }

  /** Shapes remembered now. */
  get size(): number {
    return this.byShape.size;
  }

  read(p: Pod): PodRequestsRead {
    let shape = '';
    for (const c of p.spec.containers ?? []) shape += JSON.stringify(c.resources ?? {});
    for (const c of p.spec.initContainers ?? []) shape += `i${c.restartPolicy ?? ''}${JSON.stringify(c.resources ?? {})}`;
    if (p.spec.overhead) shape += `o${JSON.stringify(p.spec.overhead)}`;
    let read = this.byShape.get(shape);
    if (!read) {
      read = this.readSpec(p);
      if (this.byShape.size >= this.maxShapes) this.byShape.clear();
      this.byShape.set(shape, read);
    }
    return read;
  }

  private readSpec(p: Pod): PodRequestsRead {
    let requests: ResourceAmounts;
    try {
      requests = podRequests(p.spec);
    } catch (e) {
      return { ok: false, problem: (e as Error).message };
    }
    return { ok: true, requests: this.countPodSlot ? { ...requests, pods: 1 } : requests };
  }
}
