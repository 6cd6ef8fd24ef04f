// A pending Workload as the cycle reads it: its queue, priority, queue-order timestamp,
// per-PodSet requests and, for gangs, the gang parameters that travel on the Workload as
// the seed's annotations (docs/api.md "Gangs"). Reading never throws: a Workload whose
// requests cannot be read carries `invalid` and is reported pending as Misconfigured.

import {
  GangAnnotation,
  GangLabel,
  GangMode,
  GangWorkloadKey,
  gangId,
  parseGoDuration,
  parseSubPriority,
  DEFAULT_GANG_TIMEOUT_SECONDS,
} from '../api/gang.ts';
import { KueueLabel } from '../api/keys.ts';
import type { PodSet, Workload } from '../api/objects.ts';
import { parseResourceList, podRequests, type ResourceAmounts } from '../api/resources.ts';
import { parseTime } from '../api/time.ts';
import { findCondition } from './conditions.ts';
import type { WorkloadShape } from './flavor-assigner.ts';
import { workloadKey } from './snapshot.ts';

/** Our annotation: when a gang's waiting time started (RFC 3339), written by the driver. */
export const GANG_WAITING_SINCE_ANNOTATION = 'topoqueue.io/gang-waiting-since';

export interface GangInfo {
  /** `ns/name`. */
  id: string;
  /** Members needed at once, over all PodSets (0: no minimum, whatever fits is admitted). */
  min: number;
  /** At most this many members are admitted (no cap when the annotation is absent or 0). */
  total: number;
  mode: GangMode;
  /** Every gang id of its group, sorted, itself included. */
  group: string[];
  /** The group id: `group` joined with `,`. */
  groupId: string;
  waitingSeconds: number;
  /** Annotated `gang.scheduling.koordinator.sh/timeout: "true"`: not scheduled until the user acts. */
  timedOut: boolean;
  /** When its waiting time started, if it has. */
  waitingSince?: number;
  /** scheduler-plugins `spec.minResources` of its PodGroup (topoqueue.io/gang-min-resources). */
  minResources?: ResourceAmounts;
}

export interface PodSetInfo {
  name: string;
  count: number;
  /** Partial admission: the smallest count accepted. */
  minCount?: number;
  perPod: ResourceAmounts;
  podSet: PodSet;
}

export interface WorkloadInfo {
  key: string;
  workload: Workload;
  namespace: string;
  /** LocalQueue name (spec.queueName, else the queue-name label). */
  queueName?: string;
  priority: number;
  /** Koordinator's sub-priority (label koordinator.sh/priority): breaks ties of `priority`, higher first. */
  subPriority: number;
  /**
   * Queue order: creation time (a gang's: its PodGroup's or earliest pod's, from
   * topoqueue.io/queue-timestamp), or the eviction time when requeued after a PodsReady timeout.
   */
  timestamp: number;
  podSets: PodSetInfo[];
  gang?: GangInfo;
  /** Why the Workload cannot be read (bad requests). */
  invalid?: string;
  /** Backoff: not before this time. */
  requeueAt?: number;
  /** A stable tiebreak (uid, else key). */
  uid: string;
  /** How flavor assignment reads the PodSets (flavor-assigner.ts), set there on first use. */
  shape?: WorkloadShape;
  /** placementInputsKey(info), set on first use (each memo that keys on it may swap in its interned copy). */
  placementInputs?: string;
}

/**
 * What a TAS placement reads of the Workload itself (its annotations, its owners' API
 * versions, its PodSets), as a key: the failure memo (equivalence.ts) and the placement
 * memo (flavor-assigner.ts) both tell Workloads apart by it. Kept on the info: a changed
 * Workload gets a new info.
 */
export function placementInputsKey(info: WorkloadInfo): string {
  const w = info.workload;
  return (info.placementInputs ??= JSON.stringify([
    w.metadata.annotations ?? null,
    (w.metadata.ownerReferences ?? []).map((o) => o.apiVersion),
    w.spec.podSets,
  ]));
}

/** The gang's minResources annotation as amounts; throws an Error naming the annotation when it cannot be read. */
function minResourcesOf(w: Workload): ResourceAmounts | undefined {
  const raw = w.metadata.annotations?.[GangWorkloadKey.MinResources];
  if (raw === undefined) return undefined;
  let list: unknown;
  try {
    list = JSON.parse(raw);
  } catch {
    throw new Error(`annotation ${GangWorkloadKey.MinResources} is not a JSON resource list: ${raw}`);
  }
  return parseResourceList(list as Parameters<typeof parseResourceList>[0], `metadata.annotations[${GangWorkloadKey.MinResources}]`);
}

function gangOf(w: Workload, namespace: string): GangInfo | undefined {
  const a = w.metadata.annotations ?? {};
  const rawMin = a[GangAnnotation.MinAvailable];
  if (rawMin === undefined || !/^-?[0-9]+$/.test(rawMin)) return undefined;
  const min = Math.max(0, Number(rawMin));
  const name = a[GangAnnotation.Name] || w.metadata.name;
  const id = gangId(namespace, name);
  const rawTotal = a[GangAnnotation.TotalNumber];
  // A total of 0 (min-available 0 with total-number defaulting to it) sets no cap, as for
  // the gang's pods (gang-pods.ts): min-available 0 is a gang without a minimum.
  const total =
    rawTotal !== undefined && /^[0-9]+$/.test(rawTotal) && Number(rawTotal) > 0 && Number(rawTotal) >= min
      ? Number(rawTotal)
      : Number.MAX_SAFE_INTEGER;
  let group = [id];
  try {
    const g: unknown = JSON.parse(a[GangAnnotation.Groups] ?? '[]');
    if (Array.isArray(g) && g.length > 0 && g.every((x) => typeof x === 'string')) group = [...new Set([...(g as string[]), id])].sort();
  } catch {
    // Not JSON: the gang alone, as the peer does.
  }
  const wait = parseGoDuration(a[GangAnnotation.WaitingTime] ?? '');
  const since = parseTime(a[GANG_WAITING_SINCE_ANNOTATION]);
  return {
    id,
    min,
    total,
    mode: a[GangAnnotation.Mode] === GangMode.NonStrict ? GangMode.NonStrict : GangMode.Strict,
    group,
    groupId: group.join(','),
    waitingSeconds: wait !== undefined && wait > 0 ? wait : DEFAULT_GANG_TIMEOUT_SECONDS,
    timedOut: a[GangAnnotation.Timeout] === 'true',
    ...(since !== undefined ? { waitingSince: since } : {}),
  };
}

/** The priority a Workload carries: spec.priority, else its WorkloadPriorityClass, else 0. */
export function workloadPriority(w: Workload, classes: ReadonlyMap<string, number>): number {
  if (typeof w.spec.priority === 'number') return w.spec.priority;
  const ref = w.spec.priorityClassRef;
  // Only WorkloadPriorityClasses are known here; a PriorityClass (scheduling.k8s.io) reads as 0.
  const name = ref ? (ref.kind === 'WorkloadPriorityClass' ? ref.name : undefined) : w.metadata.labels?.[KueueLabel.PriorityClass];
  return name !== undefined ? (classes.get(name) ?? 0) : 0;
}

export function workloadInfo(w: Workload, classes: ReadonlyMap<string, number> = new Map(), evictionTimestamp = true): WorkloadInfo {
  const namespace = w.metadata.namespace ?? 'default';
  const created = parseTime(w.metadata.annotations?.[GangWorkloadKey.QueueTimestamp]) ?? parseTime(w.metadata.creationTimestamp) ?? 0;
  let timestamp = created;
  const evicted = findCondition(w, 'Evicted');
  if (evictionTimestamp && evicted?.status === 'True' && (evicted.reason === 'PodsReadyTimeout' || evicted.reason === 'AdmissionCheck')) {
    timestamp = parseTime(evicted.lastTransitionTime) ?? created;
  }
  const podSets: PodSetInfo[] = [];
  let invalid: string | undefined;
  const gang = gangOf(w, namespace);
  if (gang) {
    try {
      const min = minResourcesOf(w);
      if (min) gang.minResources = min;
    } catch (e) {
      invalid = (e as Error).message;
    }
  }
  for (const [i, ps] of w.spec.podSets.entries()) {
    try {
      podSets.push({
        name: ps.name,
        count: ps.count,
        minCount: ps.minCount,
        perPod: podRequests(ps.template.spec, `spec.podSets[${i}].template.spec`),
        podSet: ps,
      });
    } catch (e) {
      invalid ??= (e as Error).message;
    }
  }
  const requeueAt = parseTime((w.status?.requeueState as { requeueAt?: string } | undefined)?.requeueAt);
  return {
    key: workloadKey(w),
    workload: w,
    namespace,
    queueName: w.spec.queueName ?? w.metadata.labels?.[KueueLabel.QueueName],
    priority: workloadPriority(w, classes),
    subPriority: parseSubPriority(w.metadata.labels?.[GangLabel.SubPriority]),
    timestamp,
    podSets,
    gang,
    ...(invalid !== undefined ? { invalid } : {}),
    ...(requeueAt !== undefined ? { requeueAt } : {}),
    uid: w.metadata.uid ?? workloadKey(w),
    shape: undefined,
  };
}

/** Pods the Workload asks for over all PodSets. */
export function totalPods(info: WorkloadInfo): number {
  return info.podSets.reduce((n, p) => n + p.count, 0);
}
