// Every apiVersion topoqueue reads or writes, defined once (`as const`): product code names
// these constants, never the strings. Grouped by owner; a group with several versions lists
// the one topoqueue writes first.

/** Kubernetes' own groups. */
export const CoreApiVersion = {
  /** The core group: Pod, Node, Namespace, Event, List. */
  V1: 'v1',
  /** batch/v1: Job. */
  Batch: 'batch/v1',
} as const;

export const KueueApiVersion = {
  V1beta2: 'kueue.x-k8s.io/v1beta2',
  V1beta1: 'kueue.x-k8s.io/v1beta1',
} as const;

/** The job frameworks Kueue integrates besides batch/v1 Job. */
export const JobFrameworkApiVersion = {
  JobSet: 'jobset.x-k8s.io/v1alpha2',
  LeaderWorkerSet: 'leaderworkerset.x-k8s.io/v1',
  MPIJob: 'kubeflow.org/v2beta1',
} as const;

export const VolcanoApiVersion = {
  HyperNode: 'topology.volcano.sh/v1alpha1',
  Job: 'batch.volcano.sh/v1alpha1',
  PodGroup: 'scheduling.volcano.sh/v1beta1',
  HyperJob: 'training.volcano.sh/v1alpha1',
} as const;

export const GangApiVersion = {
  /** Koordinator's copy of the PodGroup CRD. */
  Koordinator: 'scheduling.sigs.k8s.io/v1alpha1',
  /** scheduler-plugins' PodGroup CRD (short names pg, pgs). */
  SchedulerPlugins: 'scheduling.x-k8s.io/v1alpha1',
} as const;
export type GangApiVersion = (typeof GangApiVersion)[keyof typeof GangApiVersion];

/** topoqueue's own kinds: SimulationEvent, the simulation report. */
export const TopoqueueApiVersion = 'topoqueue.io/v1alpha1';
