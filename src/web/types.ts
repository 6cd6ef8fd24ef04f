// The JSON the dashboard's server sends its page (`/ui/state`, `/ui/events`), shared by the
// server (model.ts) and the browser code (client/). Types only: nothing here runs.
// Resource amounts are plain numbers (cpu in cores, memory in bytes), as in the report.

export interface ViewJson {
  name: string;
  flavor: string | null;
  source: string;
  levels: string[];
  /** Node name -> values per level. */
  paths: Record<string, string[]>;
}

export interface NodeJson {
  name: string;
  capacity: Record<string, number>;
  /** Requests of the bound, non-terminal pods. */
  used: Record<string, number>;
  ready: boolean;
  unschedulable: boolean;
  /** `key=value:Effect`. */
  taints: string[];
  /** `namespace/name` of the bound, non-terminal pods. */
  pods: string[];
  /** `namespace/name` of the Workloads those pods belong to. */
  workloads: string[];
}

export interface ConditionJson {
  type: string;
  status: string;
  reason: string;
  message: string;
  /** ms since the epoch. */
  at: number | null;
}

export interface PlacementJson {
  podSet: string;
  flavor: string | null;
  count: number;
  levels: string[];
  domains: { values: string[]; count: number }[];
}

export interface PodJson {
  name: string;
  podSet: string | null;
  node: string | null;
  rank: number | null;
  phase: string;
}

export interface EventJson {
  type: string;
  reason: string;
  message: string;
  /** ms since the epoch (lastTimestamp). */
  at: number | null;
  count: number;
  object: string;
}

/** What keeps a pending Workload out: quota, topology, or something else. */
export interface BlockerJson {
  kind: 'quota' | 'topology' | 'other';
  text: string;
  /** For topology: per level (lowest first) how many pods one domain holds now, and the lowest level that holds them all. */
  fit?: { podSet: string; flavor: string; count: number; levels: { level: string; fit: number }[]; best: string | null };
}

export interface WorkloadJson {
  key: string;
  namespace: string;
  name: string;
  /** The owner's kind (Job, JobSet, ...) or Workload. */
  kind: string;
  owner: string | null;
  queue: string | null;
  clusterQueue: string | null;
  status: 'Finished' | 'Admitted' | 'Pending' | 'Evicted' | 'Failed';
  priority: number;
  pods: number;
  podsRunning: number;
  /** ms since the epoch. */
  created: number | null;
  pendingReason: string | null;
  blocker: BlockerJson | null;
  gang: string | null;
  gangGroup: string[];
  conditions: ConditionJson[];
  /** Every condition transition seen (the stored ones at start, then each change). */
  history: ConditionJson[];
  placement: PlacementJson[];
  podList: PodJson[];
  events: EventJson[];
}

export interface QueueUsageJson {
  flavor: string;
  resource: string;
  nominal: number;
  borrowingLimit: number | null;
  usage: number;
  borrowed: number;
}

export interface ClusterQueueJson {
  name: string;
  cohort: string | null;
  pending: number;
  admitted: number;
  resources: QueueUsageJson[];
  localQueues: { namespace: string; name: string; pending: number; admitted: number }[];
}

export interface QueuesJson {
  clusterQueues: ClusterQueueJson[];
  cohorts: { name: string; parent: string | null; clusterQueues: string[] }[];
}

export interface DashboardState {
  /** Bumped on every change sent. */
  seq: number;
  /** Server time, ms since the epoch. */
  now: number;
  resources: string[];
  defaultResource: string;
  views: ViewJson[];
  nodes: NodeJson[];
  workloads: WorkloadJson[];
  queues: QueuesJson;
}

/** One `/ui/events` message: what changed since `seq - 1`. Absent fields did not change. */
export interface DashboardDelta {
  seq: number;
  now: number;
  resources?: string[];
  defaultResource?: string;
  views?: ViewJson[];
  nodes?: NodeJson[];
  removedNodes?: string[];
  workloads?: WorkloadJson[];
  removedWorkloads?: string[];
  queues?: QueuesJson;
}
