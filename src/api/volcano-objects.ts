// Volcano's API shapes, as written: HyperNode (topology.volcano.sh/v1alpha1), Job
// (batch.volcano.sh/v1alpha1), PodGroup (scheduling.volcano.sh/v1beta1) and HyperJob
// (training.volcano.sh/v1alpha1). Only the fields topoqueue reads are typed; parsers keep
// the rest so objects round-trip.

import type { z } from 'zod';
import { VolcanoApiVersion } from './api-versions.ts';
import type * as parts from './schema-parts.ts';
import type * as volcano from './volcano.ts';
import type { Condition, KObject, Override, PodTemplateSpec } from './objects.ts';

export { VolcanoApiVersion };

export const VolcanoLabel = {
  /** On HyperNodes created by discovery: `label`, `ufm`, ... */
  NetworkTopologySource: 'volcano.sh/network-topology-source',
  TaskSpec: 'volcano.sh/task-spec',
  PartitionId: 'volcano.sh/partition-id',
  JobName: 'volcano.sh/job-name',
} as const;

export const VolcanoAnnotation = {
  /** On pods (and, in topoqueue, on Workloads): `hard` | `soft`. */
  NetworkTopologyMode: 'volcano.sh/network-topology-mode',
  /** On pods (and Workloads): the highest tier allowed, an integer. */
  NetworkTopologyHighestTier: 'volcano.sh/network-topology-highest-tier',
  /** topoqueue's extension for `highestTierName` on Workloads (the peer has no pod key for it). */
  NetworkTopologyHighestTierName: 'volcano.sh/network-topology-highest-tier-name',
  PodGroupName: 'scheduling.k8s.io/group-name',
} as const;

export type NetworkTopologyMode = 'hard' | 'soft';

export interface NetworkTopologySpec {
  mode?: NetworkTopologyMode;
  highestTierAllowed?: number;
  highestTierName?: string;
}

export type LabelSelectorRequirement = z.output<typeof parts.labelSelectorRequirement>;

export type LabelSelector = z.output<typeof parts.labelSelector>;

export interface HyperNodeMemberSelector {
  exactMatch?: { name: string };
  regexMatch?: { pattern: string };
  labelMatch?: LabelSelector;
}

export interface HyperNodeMember {
  type: 'Node' | 'HyperNode';
  selector: HyperNodeMemberSelector;
}

export interface HyperNode extends KObject {
  kind: 'HyperNode';
  spec: { tier?: number; tierName?: string; members: HyperNodeMember[] };
  status?: { nodeCount?: number; conditions?: Condition[] };
}

export interface VolcanoTask {
  name: string;
  replicas?: number;
  minAvailable?: number;
  template: PodTemplateSpec;
  partitionPolicy?: { totalPartitions: number; partitionSize: number; minPartitions?: number; networkTopology?: NetworkTopologySpec };
  [k: string]: unknown;
}

export interface VolcanoJobSpec {
  minAvailable?: number;
  schedulerName?: string;
  queue?: string;
  priorityClassName?: string;
  networkTopology?: NetworkTopologySpec;
  tasks: VolcanoTask[];
  [k: string]: unknown;
}

export interface VolcanoJob extends KObject {
  kind: 'Job';
  spec: VolcanoJobSpec;
}

export interface SubGroupPolicy {
  name: string;
  networkTopology?: NetworkTopologySpec;
  subGroupSize?: number;
  minSubGroups?: number;
  labelSelector?: LabelSelector;
  matchLabelKeys?: string[];
}

type VolcanoPodGroupOut = z.output<typeof volcano.volcanoPodGroup>;

/**
 * The schema's output, with the sub-groups and network topology as code may build them
 * (their defaults, mode hard and subGroupSize 1, not yet applied); `status` is Volcano's
 * (passed through, read by the simulation).
 */
export interface VolcanoPodGroup extends KObject {
  kind: 'PodGroup';
  spec: Override<VolcanoPodGroupOut['spec'], { networkTopology?: NetworkTopologySpec; subGroupPolicy?: SubGroupPolicy[] }>;
  status?: { phase?: string; running?: number; succeeded?: number; failed?: number; [k: string]: unknown };
}

export interface HyperJob extends KObject {
  kind: 'HyperJob';
  spec: {
    minAvailable?: number;
    networkTopology?: NetworkTopologySpec;
    replicatedJobs: { name: string; replicas?: number; templateSpec: VolcanoJobSpec; [k: string]: unknown }[];
    [k: string]: unknown;
  };
}
