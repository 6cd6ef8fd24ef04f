// Every topoqueue controller, in the order the embedded cluster registers them (the
// manager round-robins over controllers in registration order, so the order is part of
// what makes a simulation deterministic).

import type { Reconciler } from '../runtime/manager.ts';
import type { TopoqueueConfig } from './config.ts';
import { hyperNodeStatusController } from './hypernode-status.ts';
import { jobReconciler } from './job-reconciler.ts';
import { nodeFailureController } from './node-failure.ts';
import { podGroupController } from './pod-group-controller.ts';
import { podGroupStatusController } from './podgroup-status.ts';
import { schedulerController } from './scheduler.ts';
import { topologyUngater } from './topology-ungater.ts';
import { workloadController } from './workload-controller.ts';

export function allControllers(): Reconciler<TopoqueueConfig>[] {
  return [
    schedulerController(),
    workloadController(),
    jobReconciler(),
    podGroupController(),
    topologyUngater(),
    nodeFailureController(),
    hyperNodeStatusController(),
    podGroupStatusController(),
  ];
}
