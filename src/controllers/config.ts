// The configuration every controller reads (Kueue's Configuration, the parts topoqueue
// honours), with Kueue's defaults.

import type { LabelSelector } from '../api/volcano-objects.ts';
import { NAMESPACE_NAME_LABEL, TOPOQUEUE_NAMESPACE } from '../api/keys.ts';
import { DEFAULT_WAIT_FOR_PODS_READY, type WaitForPodsReadyConfig } from '../admission/pods-ready.ts';
import { DEFAULT_GATES, type FeatureGates } from '../placement/request.ts';

export interface TopoqueueConfig {
  /** Where topoqueue itself runs (excluded from managed namespaces). */
  namespace: string;
  /** waitForPodsReady; undefined disables it. */
  waitForPodsReady?: WaitForPodsReadyConfig;
  /** Namespaces whose jobs and pods are managed (Kueue's managedJobsNamespaceSelector). */
  managedJobsNamespaceSelector: LabelSelector;
  /** Manage jobs and pods without a queue-name label (Kueue's manageJobsWithoutQueueName). */
  manageJobsWithoutQueueName: boolean;
  /** Placement feature gates (TAS profiles, assignment encoding). */
  gates: FeatureGates;
  /** Batching of inadmissible requeues after capacity is freed (Kueue: 1 s). */
  requeueBatchMs: number;
  /**
   * Kueue's SchedulingEquivalenceHashing gate (beta, on): under BestEffortFIFO a Workload
   * that fails with NoFit or no preemption candidates parks the pending Workloads of the same
   * shape with it, and newcomers of that shape are parked at once, until the next requeue.
   */
  schedulingEquivalenceHashing: boolean;
  /** Batching of pod events for the ungater and job reconcilers (Kueue: 1 s). */
  podBatchMs: number;
  /** A node NotReady this long counts as failed (the 30 s rule). */
  nodeFailureDelayMs: number;
  /**
   * Fewest milliseconds between the starts of two scheduling cycles (0: a cycle whenever
   * something changed). `serve` on the real clock sets it so that a burst of API writes
   * is one cycle, as Kueue's scheduler loop batches what arrives during a cycle.
   */
  minCycleIntervalMs: number;
  /**
   * Write a scheduling cycle's decisions, and the pod updates that ungate a gang, several at
   * a time instead of one after another (false: the embedded cluster, whose runs must be
   * deterministic; true: `topoqueue controller`, where every write is a round trip to the
   * API server).
   */
  concurrentCycleWrites: boolean;
  /**
   * integrations.frameworks: Kueue's names of the frameworks to manage (`batch/job`, `pod`,
   * ...); undefined: every framework. A framework left out is neither reconciled nor changed
   * by the webhooks (its hooks still answer, allowing everything).
   */
  frameworks?: readonly string[];
  /** labelKeysToCopy: label keys copied from a job (or the pods of a group) onto the Workload made for it. */
  labelKeysToCopy: readonly string[];
}

/** Kueue's name of the plain-pod integration; topoqueue's pod groups, gangs and Volcano PodGroups go with it. */
export const POD_FRAMEWORK = 'pod';

/** The framework of this Kueue name is managed (integrations.frameworks lists it, or lists nothing). */
export function frameworkEnabled(config: TopoqueueConfig, name: string): boolean {
  return config.frameworks === undefined || config.frameworks.includes(name);
}

export function defaultConfig(overrides: Partial<TopoqueueConfig> = {}): TopoqueueConfig {
  const namespace = overrides.namespace ?? TOPOQUEUE_NAMESPACE;
  return {
    namespace,
    waitForPodsReady: DEFAULT_WAIT_FOR_PODS_READY,
    managedJobsNamespaceSelector: {
      matchExpressions: [{ key: NAMESPACE_NAME_LABEL, operator: 'NotIn', values: ['kube-system', namespace] }],
    },
    manageJobsWithoutQueueName: false,
    gates: { ...DEFAULT_GATES },
    requeueBatchMs: 1000,
    schedulingEquivalenceHashing: true,
    podBatchMs: 1000,
    nodeFailureDelayMs: 30_000,
    minCycleIntervalMs: 0,
    concurrentCycleWrites: false,
    labelKeysToCopy: [],
    ...overrides,
  };
}
