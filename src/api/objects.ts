// Kubernetes-shaped objects as topoqueue reads and writes them. Only the fields the
// system uses are typed; parsers keep unknown fields so objects round-trip.

export type StringMap = Record<string, string>;
/** Kubernetes resource list as written in manifests: name -> quantity string. */
export type ResourceList = Record<string, string>;

export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
}

export interface ObjectMeta {
  name: string;
  namespace?: string;
  uid?: string;
  generateName?: string;
  labels?: StringMap;
  annotations?: StringMap;
  creationTimestamp?: string;
  resourceVersion?: string;
  ownerReferences?: OwnerReference[];
  finalizers?: string[];
  deletionTimestamp?: string;
  generation?: number;
}

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

export interface Taint {
  key: string;
  value?: string;
  effect: TaintEffect;
}

export interface Toleration {
  key?: string;
  operator?: 'Exists' | 'Equal';
  value?: string;
  effect?: TaintEffect | '';
  tolerationSeconds?: number;
}

export type NodeSelectorOperator = 'In' | 'NotIn' | 'Exists' | 'DoesNotExist' | 'Gt' | 'Lt';

export interface NodeSelectorRequirement {
  key: string;
  operator: NodeSelectorOperator;
  values?: string[];
}

export interface NodeSelectorTerm {
  matchExpressions?: NodeSelectorRequirement[];
  matchFields?: NodeSelectorRequirement[];
}

export interface PreferredSchedulingTerm {
  weight: number;
  preference: NodeSelectorTerm;
}

export interface NodeAffinity {
  requiredDuringSchedulingIgnoredDuringExecution?: { nodeSelectorTerms: NodeSelectorTerm[] };
  preferredDuringSchedulingIgnoredDuringExecution?: PreferredSchedulingTerm[];
}

export interface Container {
  name: string;
  image?: string;
  resources?: { requests?: ResourceList; limits?: ResourceList };
  /** `Always` marks a sidecar init container (counted with the app containers). */
  restartPolicy?: string;
}

export interface PodSpec {
  containers: Container[];
  initContainers?: Container[];
  overhead?: ResourceList;
  nodeSelector?: StringMap;
  tolerations?: Toleration[];
  affinity?: { nodeAffinity?: NodeAffinity; [k: string]: unknown };
  nodeName?: string;
  schedulingGates?: { name: string }[];
  priorityClassName?: string;
  restartPolicy?: string;
  [k: string]: unknown;
}

export interface PodTemplateSpec {
  metadata?: { labels?: StringMap; annotations?: StringMap; name?: string };
  spec: PodSpec;
}

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
  spec?: { unschedulable?: boolean; taints?: Taint[]; [k: string]: unknown };
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

export interface TopologyLevel {
  nodeLabel: string;
}

export interface Topology extends KObject {
  kind: 'Topology';
  spec: { levels: TopologyLevel[] };
}

export interface ResourceFlavor extends KObject {
  kind: 'ResourceFlavor';
  spec: {
    nodeLabels?: StringMap;
    nodeTaints?: Taint[];
    tolerations?: Toleration[];
    topologyName?: string;
  };
}

export interface SliceLayer {
  topology: string;
  size: number;
}

export interface PodSetTopologyRequest {
  required?: string;
  preferred?: string;
  unconstrained?: boolean;
  podIndexLabel?: string;
  subGroupIndexLabel?: string;
  subGroupCount?: number;
  podSetGroupName?: string;
  podSetSliceRequiredTopology?: string;
  podSetSliceSize?: number;
  podsetSliceRequiredTopologyConstraints?: SliceLayer[];
}

export interface PodSet {
  name: string;
  template: PodTemplateSpec;
  count: number;
  minCount?: number;
  topologyRequest?: PodSetTopologyRequest;
}

/** v1beta2 compact assignment (see placement/assignment-codec.ts). */
export interface TopologyAssignmentSliceLevelValues {
  universal?: string;
  individual?: { prefix?: string; suffix?: string; roots: string[] };
}

export interface TopologyAssignmentSlice {
  domainCount: number;
  valuesPerLevel: TopologyAssignmentSliceLevelValues[];
  podCounts: { universal?: number; individual?: number[] };
}

export interface TopologyAssignment {
  levels: string[];
  slices: TopologyAssignmentSlice[];
}

/** v1beta1 assignment: one entry per domain. */
export interface TopologyAssignmentV1beta1 {
  levels: string[];
  domains: { values: string[]; count: number }[];
}

export interface PodSetAssignment {
  name: string;
  flavors?: StringMap;
  resourceUsage?: ResourceList;
  count?: number;
  topologyAssignment?: TopologyAssignment;
}

export interface Admission {
  /** Required by Kueue; absent in `plan` output when the input has no queues. */
  clusterQueue?: string;
  podSetAssignments: PodSetAssignment[];
}

export interface Workload extends KObject {
  kind: 'Workload';
  spec: {
    podSets: PodSet[];
    queueName?: string;
    priority?: number;
    priorityClassRef?: { group: string; kind: string; name: string };
    active?: boolean;
    [k: string]: unknown;
  };
  status?: {
    admission?: Admission;
    conditions?: Condition[];
    unhealthyNodes?: { name: string }[];
    [k: string]: unknown;
  };
}

export interface KList extends TypeMeta {
  kind: 'List';
  items: KObject[];
  metadata?: Record<string, unknown>;
}
