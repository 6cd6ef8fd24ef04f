// The embedded cluster's stand-ins for what a real cluster already has, in the order the
// embedded cluster registers them after the controllers.

import type { TopoqueueConfig } from '../controllers/config.ts';
import type { Reconciler } from '../runtime/manager.ts';
import { binder } from './binder.ts';
import { jobControllers } from './job-controllers.ts';

export function standIns(): Reconciler<TopoqueueConfig>[] {
  return [jobControllers(), binder()];
}
