// Kubernetes-shaped objects as topoqueue reads and writes them. Only the fields the
// system uses are typed; parsers keep unknown fields so objects round-trip.
//
// The parts and the Workload are the zod schemas' output types (schema-parts.ts for the
// shared blocks, schemas.ts for the kinds; Workload from the v1beta2 instance), so the
// type and the parser cannot drift. Narrowed by hand (Override), because the type says
// more than the parser checks: the objects' literal `kind` (looked up before parsing),
// `PodPhase` and `Condition.status` (the parser accepts any string there, as it must for
// objects written by others), `ObjectMeta.generation` (server-owned, passed through) and
// the v1beta2 assignment's `slices` (optional in the schema only to word its message).

import type { z } from 'zod';
import type * as parts from './schema-parts.ts';
import type * as schema from './schemas.ts';

export type StringMap = Record<string, string>;
/** Kubernetes resource list as written in manifests: name -> quantity string. */
export type ResourceList = Record<string, string>;

export type OwnerReference = z.output<typeof parts.ownerReference>;

/** `generation` is server-owned: the schema passes it through without reading it. */
export type ObjectMeta = z.output<typeof parts.objectMeta> & { generation?: number };

export interface TypeMeta {
  apiVersion: string;
  kind: string;
}

export interface KObject extends TypeMeta {
  metadata: ObjectMeta;
}

export const TaintEffect = {
  NoSchedule: 'NoSchedule',
  PreferNoSchedule: 'PreferNoSchedule',
  NoExecute: 'NoExecute',
} as const;
export type TaintEffect = (typeof TaintEffect)[keyof typeof TaintEffect];

export type Taint = z.output<typeof parts.taint>;

export type Toleration = z.output<typeof parts.toleration>;

export type NodeSelectorOperator = 'In' | 'NotIn' | 'Exists' | 'DoesNotExist' | 'Gt' | 'Lt';

export type NodeSelectorRequirement = z.output<typeof parts.nodeSelectorRequirement>;

export type NodeSelectorTerm = z.output<typeof parts.nodeSelectorTerm>;

export type PreferredSchedulingTerm = NonNullable<NodeAffinity['preferredDuringSchedulingIgnoredDuringExecution']>[number];

export type NodeAffinity = z.output<typeof parts.nodeAffinity>;

export type Container = z.output<typeof parts.container>;

export type PodSpec = z.output<typeof parts.podSpec>;

export type PodTemplateSpec = z.output<typeof parts.podTemplate>;

export interface Condition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason?: string;
  message?: string;
  lastTransitionTime?: string;
  observedGeneration?: number;
}

export interface Node extends KObject {
  kind: 'Node';
  spec?: z.output<typeof schema.node>['spec'];
  status?: {
    allocatable?: ResourceList;
    capacity?: ResourceList;
    conditions?: { type: string; status: string; reason?: string; message?: string }[];
    [k: string]: unknown;
  };
}

export type PodPhase = 'Pending' | 'Running' | 'Succeeded' | 'Failed' | 'Unknown';

export interface Pod extends KObject {
  kind: 'Pod';
  spec: PodSpec;
  status?: { phase?: PodPhase; conditions?: Condition[]; [k: string]: unknown };
}

/** Succeeded or Failed: the pod has stopped for good and holds no node resources. */
export function isTerminal(pod: Pod): boolean {
  return pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed';
}

/** The pod's Ready condition is True. */
export function isPodReady(pod: Pod): boolean {
  return pod.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true;
}

/** Succeeded, or Running with the Ready condition: what PodsReady and a PodGroup count as ready. */
export function isRunningReadyOrSucceeded(pod: Pod): boolean {
  return pod.status?.phase === 'Succeeded' || (pod.status?.phase === 'Running' && isPodReady(pod));
}

export type TopologyLevel = Topology['spec']['levels'][number];

export interface Topology extends KObject {
  kind: 'Topology';
  spec: z.output<typeof schema.topology>['spec'];
}

export interface ResourceFlavor extends KObject {
  kind: 'ResourceFlavor';
  spec: z.output<typeof schema.resourceFlavor>['spec'];
}

export type SliceLayer = z.output<typeof schema.sliceLayer>;

export type PodSetTopologyRequest = z.output<typeof schema.topologyRequest>;

export type PodSet = z.output<typeof schema.podSet>;

/** v1beta2 compact assignment (see placement/assignment-codec.ts). */
export type TopologyAssignmentSliceLevelValues = z.output<typeof schema.topologyAssignmentSliceLevelValues>;

export type TopologyAssignmentSlice = z.output<typeof schema.topologyAssignmentSlice>;

/** `slices` is required (the schema's refinement refuses an assignment without it). */
export type TopologyAssignment = z.output<typeof schema.topologyAssignmentV1beta2> & { slices: TopologyAssignmentSlice[] };

/** v1beta1 assignment: one entry per domain. */
export type TopologyAssignmentV1beta1 = z.output<typeof schema.topologyAssignmentV1beta1>;

/** `T` with the fields of `U` in place of its own (index signatures kept, unlike Omit). */
export type Override<T, U> = { [K in keyof T as K extends keyof U ? never : K]: T[K] } & U;

type WorkloadOut = z.output<typeof schema.workloadV1beta2>;
type WorkloadStatusOut = NonNullable<WorkloadOut['status']>;
type AdmissionOut = NonNullable<WorkloadStatusOut['admission']>;

export type PodSetAssignment = Override<AdmissionOut['podSetAssignments'][number], { topologyAssignment?: TopologyAssignment }>;

/** `clusterQueue` is required by Kueue; absent in `plan` output when the input has no queues. */
export type Admission = Override<AdmissionOut, { podSetAssignments: PodSetAssignment[] }>;

/** The v1beta2 schema's output (v1beta1 is normalized to it), with typed conditions. */
export interface Workload extends KObject {
  kind: 'Workload';
  spec: WorkloadOut['spec'];
  status?: Override<WorkloadStatusOut, { admission?: Admission; conditions?: Condition[] }>;
}

export interface KList extends TypeMeta {
  kind: 'List';
  items: KObject[];
  metadata?: Record<string, unknown>;
}
