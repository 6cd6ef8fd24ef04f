// The embedded cluster's stand-ins for what a real cluster already has, in the order the
// embedded cluster registers them after the controllers.

import type { TopoqueueConfig } from '../controllers/config.ts';
import type { Reconciler } from '../runtime/manager.ts';
import { binder } from './binder.ts';
import { garbageCollector } from './garbage-collector.ts';
import { jobControllers } from './job-controllers.ts';
import { kubelet } from './kubelet.ts';
import { scenarioController } from './scenario.ts';
import { workloadRunner } from './workload-runner.ts';

/** `jobSyncBatchMs`: the job controllers' pod-event batch (job-controllers.ts, JobControllersOptions; default Kubernetes' 1 s). */
export function standIns(opts: { jobSyncBatchMs?: number } = {}): Reconciler<TopoqueueConfig>[] {
  const jobs = jobControllers(opts.jobSyncBatchMs === undefined ? {} : { syncBatchMs: opts.jobSyncBatchMs });
  return [jobs, binder(), kubelet(), garbageCollector(), workloadRunner(), scenarioController()];
}
