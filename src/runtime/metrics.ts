// Prometheus metrics through prom-client, on a registry of their own per manager (so two
// embedded clusters in one process, or two tests, never share counters). Names are
// Kueue's where Kueue has the metric (kueue-core.md §1g), plus the plain Pods seed's
// pods_gated_total, pods_ungated_total and pods_rejected_total under the same prefix.

import { Counter, Gauge, Histogram, Registry } from 'prom-client';

const WAIT_BUCKETS = [1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, 3600, 7200, 14400];
const ATTEMPT_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];

export class Metrics {
  readonly registry = new Registry();

  readonly admissionAttempts = this.counter(
    'kueue_admission_attempts_total',
    'Scheduling cycles, by result: success (at least one Workload admitted) or inadmissible',
    ['result'],
  );
  readonly admissionAttemptDuration = this.histogram(
    'kueue_admission_attempt_duration_seconds',
    'Time of one scheduling cycle, by result',
    ['result'],
    ATTEMPT_BUCKETS,
  );
  readonly pendingWorkloads = this.gauge(
    'kueue_pending_workloads',
    'Pending Workloads per ClusterQueue, active (in the heap) or inadmissible',
    ['cluster_queue', 'status'],
  );
  readonly quotaReservedWorkloads = this.counter('kueue_quota_reserved_workloads_total', 'Workloads that got a quota reservation', [
    'cluster_queue',
  ]);
  readonly quotaReservedWaitTime = this.histogram(
    'kueue_quota_reserved_wait_time_seconds',
    'Time from creation (or requeue) to quota reservation',
    ['cluster_queue'],
    WAIT_BUCKETS,
  );
  readonly admittedWorkloads = this.counter('kueue_admitted_workloads_total', 'Workloads admitted', ['cluster_queue']);
  readonly admissionWaitTime = this.histogram(
    'kueue_admission_wait_time_seconds',
    'Time from creation (or requeue) to admission',
    ['cluster_queue'],
    WAIT_BUCKETS,
  );
  readonly reservingActiveWorkloads = this.gauge('kueue_reserving_active_workloads', 'Workloads holding a quota reservation', [
    'cluster_queue',
  ]);
  readonly admittedActiveWorkloads = this.gauge('kueue_admitted_active_workloads', 'Workloads admitted and not finished', [
    'cluster_queue',
  ]);
  readonly evictedWorkloads = this.counter('kueue_evicted_workloads_total', 'Evictions, by reason and underlying cause', [
    'cluster_queue',
    'reason',
    'underlying_cause',
  ]);
  readonly preemptedWorkloads = this.counter(
    'kueue_preempted_workloads_total',
    'Workloads preempted, by the preempting ClusterQueue and reason',
    ['preempting_cluster_queue', 'reason'],
  );
  readonly finishedWorkloads = this.counter('kueue_finished_workloads_total', 'Workloads finished', ['cluster_queue', 'result']);
  readonly unadmittedWorkloads = this.gauge('kueue_unadmitted_workloads', 'Pending Workloads by why they are pending', [
    'cluster_queue',
    'reason',
    'underlying_cause',
  ]);
  readonly readyWaitTime = this.histogram(
    'kueue_ready_wait_time_seconds',
    'Time from creation to PodsReady (first start only)',
    ['cluster_queue'],
    WAIT_BUCKETS,
  );
  readonly admittedUntilReadyWaitTime = this.histogram(
    'kueue_admitted_until_ready_wait_time_seconds',
    'Time from admission to PodsReady (first start only)',
    ['cluster_queue'],
    WAIT_BUCKETS,
  );
  readonly podsReadyToEvictedTime = this.histogram(
    'kueue_pods_ready_to_evicted_time_seconds',
    'Time from PodsReady to eviction',
    ['cluster_queue', 'reason'],
    WAIT_BUCKETS,
  );
  readonly clusterQueueResourceUsage = this.gauge(
    'kueue_cluster_queue_resource_usage',
    'Resources used by admitted Workloads, per ClusterQueue, flavor and resource',
    ['cluster_queue', 'flavor', 'resource'],
  );
  readonly clusterQueueNominalQuota = this.gauge(
    'kueue_cluster_queue_nominal_quota',
    'Nominal quota per ClusterQueue, flavor and resource',
    ['cluster_queue', 'flavor', 'resource'],
  );
  readonly clusterQueueStatus = this.gauge('kueue_cluster_queue_status', 'ClusterQueue status (1 for the current one)', [
    'cluster_queue',
    'status',
  ]);
  readonly podSchedulingGateRemoval = this.histogram(
    'kueue_pod_scheduling_gate_removal_seconds',
    'Time from pod creation to the removal of a Kueue scheduling gate',
    ['name', 'cluster_queue', 'is_group'],
    WAIT_BUCKETS,
  );
  readonly podsGated = this.counter(
    'kueue_pods_gated_total',
    'Pods that got the kueue.x-k8s.io/admission scheduling gate (plain Pods)',
    [],
  );
  readonly podsUngated = this.counter(
    'kueue_pods_ungated_total',
    'Pods whose kueue.x-k8s.io/admission scheduling gate was removed (plain Pods)',
    [],
  );
  readonly podsRejected = this.counter('kueue_pods_rejected_total', 'Pods rejected because a group had more pods than its total count', []);
  /**
   * Reconciles per controller and result, counted in a plain map (one count per reconcile: a
   * labelled inc would hash its labels each time) and added to topoqueue_reconcile_total
   * whenever the counter is read.
   */
  private readonly reconciled = new Map<string, { labels: { controller: string; result: string }; n: number; told: number }>();
  readonly reconcileTotal = new Counter({
    name: 'topoqueue_reconcile_total',
    help: 'Reconciles per controller and result',
    labelNames: ['controller', 'result'],
    registers: [this.registry],
    collect: () => {
      for (const r of this.reconciled.values()) {
        if (r.n > r.told) this.reconcileTotal.inc(r.labels, r.n - r.told);
        r.told = r.n;
      }
    },
  });

  /** One reconcile of `controller` ended with `result` (topoqueue_reconcile_total). */
  countReconcile(controller: string, result: 'success' | 'conflict' | 'error'): void {
    const key = `${controller}\u0000${result}`;
    const r = this.reconciled.get(key);
    if (r) r.n++;
    else this.reconciled.set(key, { labels: { controller, result }, n: 1, told: 0 });
  }

  private counter(name: string, help: string, labelNames: string[]) {
    return new Counter({ name, help, labelNames, registers: [this.registry] });
  }
  private gauge(name: string, help: string, labelNames: string[]) {
    return new Gauge({ name, help, labelNames, registers: [this.registry] });
  }
  private histogram(name: string, help: string, labelNames: string[], buckets: number[]) {
    return new Histogram({ name, help, labelNames, buckets, registers: [this.registry] });
  }

  /** The text exposition format (`/metrics`). */
  text(): Promise<string> {
    return this.registry.metrics();
  }
}
