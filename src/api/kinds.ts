// The object type of each kind the store holds, so that `store.get('Pod', ns, name)` is a
// `Pod` without a type argument. Kinds outside the map read as KObject; kinds that two API
// groups share (`Job`: batch/v1 and Volcano's batch.volcano.sh; `PodGroup`: Koordinator's or
// scheduler-plugins' and Volcano's) are left out on purpose: the caller says which it means
// with a type argument (`store.get<BatchJob>('Job', ...)`).

import type { KObject, Node, Pod, ResourceFlavor, Topology, Workload } from './objects.ts';
import type { ClusterQueue, Cohort, LocalQueue, WorkloadPriorityClass } from './queues.ts';
import type { SimulationEvent } from './simulation-event.ts';
import type { HyperJob, HyperNode } from './volcano-objects.ts';

export interface KindMap {
  Pod: Pod;
  Node: Node;
  Workload: Workload;
  Topology: Topology;
  ResourceFlavor: ResourceFlavor;
  ClusterQueue: ClusterQueue;
  LocalQueue: LocalQueue;
  Cohort: Cohort;
  WorkloadPriorityClass: WorkloadPriorityClass;
  HyperNode: HyperNode;
  HyperJob: HyperJob;
  SimulationEvent: SimulationEvent;
}

/** The object type of kind `K`: its KindMap entry, or KObject for a kind outside the map. */
export type ObjectOfKind<K extends string> = K extends keyof KindMap ? KindMap[K] : KObject;
