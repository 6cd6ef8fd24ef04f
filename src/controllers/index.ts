// Every topoqueue controller, in the order the embedded cluster registers them (the
// manager round-robins over controllers in registration order, so the order is part of
// what makes a simulation deterministic).

import type { Reconciler } from '../runtime/manager.ts';
import type { TopoqueueConfig } from './config.ts';

export function allControllers(): Reconciler<TopoqueueConfig>[] {
  return [];
}
