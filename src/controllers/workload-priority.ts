// spec.priority of a Workload about to be created, resolved from its priorityClassRef as
// Kueue's jobframework does before the create: Kueue's Workload CRD refuses a
// priorityClassRef without a priority ("priority is required when priorityClassRef is set").
// The in-memory store does not check that, but a real API server does.

import type { Workload } from '../api/objects.ts';
import type { InformerFactory } from '../runtime/informer.ts';

/** Fills spec.priority from the referenced WorkloadPriorityClass or PriorityClass (cached) when it is unset; a class not (yet) cached leaves it unset. */
export function resolvePriority(wl: Workload, informers: InformerFactory): void {
  const ref = wl.spec.priorityClassRef;
  if (wl.spec.priority !== undefined || !ref) return;
  const kind = ref.kind === 'WorkloadPriorityClass' ? 'WorkloadPriorityClass' : ref.kind === 'PriorityClass' ? 'PriorityClass' : undefined;
  if (!kind) return;
  const cls = informers.for(kind).get(undefined, ref.name) as { value?: unknown } | undefined;
  if (typeof cls?.value === 'number') wl.spec.priority = cls.value;
}
