// Label and annotation keys, defined once. Values are the peers' keys verbatim so
// existing manifests work unchanged.

export const HOSTNAME_LABEL = 'kubernetes.io/hostname';

/** Set by the API server on every Namespace to its own name, so selectors can match namespaces by name. */
export const NAMESPACE_NAME_LABEL = 'kubernetes.io/metadata.name';

export const KueueAnnotation = {
  PodSetRequiredTopology: 'kueue.x-k8s.io/podset-required-topology',
  PodSetPreferredTopology: 'kueue.x-k8s.io/podset-preferred-topology',
  PodSetUnconstrainedTopology: 'kueue.x-k8s.io/podset-unconstrained-topology',
  PodSetSliceRequiredTopology: 'kueue.x-k8s.io/podset-slice-required-topology',
  PodSetSliceSize: 'kueue.x-k8s.io/podset-slice-size',
  PodSetSliceRequiredTopologyConstraints: 'kueue.x-k8s.io/podset-slice-required-topology-constraints',
  PodSetGroupName: 'kueue.x-k8s.io/podset-group-name',
  PodIndexOffset: 'kueue.x-k8s.io/pod-index-offset',
  Workload: 'kueue.x-k8s.io/workload',
  PrebuiltWorkloadName: 'kueue.x-k8s.io/prebuilt-workload-name',
} as const;

export const KueueLabel = {
  QueueName: 'kueue.x-k8s.io/queue-name',
  PodSet: 'kueue.x-k8s.io/podset',
  TAS: 'kueue.x-k8s.io/tas',
  JobUID: 'kueue.x-k8s.io/job-uid',
  PriorityClass: 'kueue.x-k8s.io/priority-class',
  PodGroupName: 'kueue.x-k8s.io/pod-group-name',
  PodGroupPodIndex: 'kueue.x-k8s.io/pod-group-pod-index',
  Managed: 'kueue.x-k8s.io/managed',
} as const;

export const KueueSchedulingGate = {
  Topology: 'kueue.x-k8s.io/topology',
  Admission: 'kueue.x-k8s.io/admission',
} as const;

export const PodIndexLabel = {
  JobCompletionIndex: 'batch.kubernetes.io/job-completion-index',
  JobSetJobIndex: 'jobset.sigs.k8s.io/job-index',
  JobSetReplicatedJobReplicas: 'jobset.sigs.k8s.io/replicatedjob-replicas',
  KubeflowReplicaIndex: 'training.kubeflow.org/replica-index',
  LWSWorkerIndex: 'leaderworkerset.sigs.k8s.io/worker-index',
} as const;

export const KUEUE_GROUP = 'kueue.x-k8s.io';
export { KueueApiVersion } from './api-versions.ts';

/** Keys the runtime writes or reads on pods and Workloads (kueue-core.md §1d, §1e). */
export const KueueRuntimeKey = {
  LocalQueueNameLabel: 'kueue.x-k8s.io/local-queue-name',
  ClusterQueueNameLabel: 'kueue.x-k8s.io/cluster-queue-name',
  PodSuspendingParent: 'kueue.x-k8s.io/pod-suspending-parent',
  PodGroupPodIndexLabel: 'kueue.x-k8s.io/pod-group-pod-index-label',
  PodGroupSets: 'kueue.x-k8s.io/pod-group-sets',
  PodGroupServing: 'kueue.x-k8s.io/pod-group-serving',
  RetriableInGroup: 'kueue.x-k8s.io/retriable-in-group',
  IsGroupWorkload: 'kueue.x-k8s.io/is-group-workload',
  /** Workload finalizer (Kueue's resource-in-use). */
  ResourceInUseFinalizer: 'kueue.x-k8s.io/resource-in-use',
  /** Pod finalizer on managed plain pods. */
  ManagedFinalizer: 'kueue.x-k8s.io/managed',
} as const;

/** topoqueue's own keys for the embedded cluster and `simulate`. */
export const TopoqueueAnnotation = {
  /** Pod template annotation: how long the kubelet stand-in runs the pod (Go duration; default in docs/cluster.md). */
  RunDuration: 'topoqueue.io/run-duration',
  /** Pod template annotation: the kubelet stand-in fails the pod after this long (a scenario's failure). */
  FailAfter: 'topoqueue.io/fail-after',
  /** On any submitted object: when `simulate` creates it, as a duration from the start. */
  SubmitAt: 'topoqueue.io/submit-at',
  /** On a SimulationEvent: the simulation start (RFC 3339) its `spec.at` counts from (default: its creationTimestamp). */
  SimulationStart: 'topoqueue.io/simulation-start',
  /** On a Workload `plan` prints as preempted: its preemptor's `namespace/name` (the simulation report's `evictions[].preemptor`). */
  Preemptor: 'topoqueue.io/preemptor',
} as const;

export const TOPOQUEUE_NAMESPACE = 'topoqueue-system';
