// `topoqueue plan` when the input has ClusterQueues: Kueue's admission at one instant.
//
// 1. the admission snapshot: ClusterQueues, Cohorts, LocalQueues, ResourceFlavors, the TAS
//    snapshots, namespaces, WorkloadPriorityClasses, and every Workload already admitted;
// 2. every pending Workload (objects and those built from jobs, pods and gangs) resolved
//    through its LocalQueue to a ClusterQueue and queued;
// 3. cycles until nothing more changes (admission/settle.ts);
// 4. every Workload printed with its status: admitted with its assignment, pending with
//    why, or preempted.
//
// `now` is the latest creation time in the input (nothing is in the future); statuses carry
// no transition times, so the output is the same on every run.

import type { InputError, Where } from '../api/errors.ts';
import type { ParsedObject } from '../api/manifest.ts';
import type { StringMap, Workload } from '../api/objects.ts';
import {
  type ClusterQueue,
  type ClusterQueueInput,
  type Cohort,
  type LocalQueue,
  normalizeClusterQueue,
  type WorkloadPriorityClass,
} from '../api/queues.ts';
import { parseTime } from '../api/time.ts';
import { admittedFromStatus } from '../admission/admitted.ts';
import { explainPending } from '../admission/explain.ts';
import type { Explanation } from '../placement/explain.ts';
import { PendingReason } from '../admission/flavor-assigner.ts';
import { preemptorOfMessage } from '../admission/preemption.ts';
import { TopoqueueAnnotation } from '../api/keys.ts';
import { QueueManager } from '../admission/queue.ts';
import { settle } from '../admission/settle.ts';
import { AdmissionSnapshot, workloadKey } from '../admission/snapshot.ts';
import { clearAdmission, writePending } from '../admission/status.ts';
import { setCondition } from '../admission/conditions.ts';
import { workloadInfo } from '../admission/workload-info.ts';
import type { FeatureGates } from '../placement/request.ts';
import type { WorkloadPlacementOptions } from '../placement/workload-placement.ts';
import { isAdmitted, isFinished, type ClusterInput, type TasCluster } from './cluster-input.ts';

export interface QueuedPlanInput {
  objects: readonly ParsedObject[];
  input: ClusterInput;
  cluster: TasCluster;
  /** Pending Workloads in input order (objects and built ones). */
  pending: { workload: Workload; where: Where }[];
  gates: FeatureGates;
  placement: WorkloadPlacementOptions;
  /** `--explain`: explain every Workload left without an admission (admission/explain.ts). */
  explain?: boolean;
}

export function hasQueues(objects: readonly ParsedObject[]): boolean {
  return objects.some((o) => o.object.kind === 'ClusterQueue');
}

export function planWithQueues(p: QueuedPlanInput): {
  workloads: Workload[];
  errors: InputError[];
  notes: string[];
  explanations?: Explanation[];
} {
  const errors: InputError[] = [];
  const notes: string[] = [];
  const byKind = (k: string) => p.objects.filter((o) => o.object.kind === k);
  const classes = new Map(byKind('WorkloadPriorityClass').map((o) => [o.object.metadata.name, (o.object as WorkloadPriorityClass).value]));
  const namespaces = new Map<string, StringMap>(byKind('Namespace').map((o) => [o.object.metadata.name, o.object.metadata.labels ?? {}]));
  const snap = new AdmissionSnapshot({
    clusterQueues: byKind('ClusterQueue').map((o) => ({
      object: normalizeClusterQueue(o.object as ClusterQueueInput) as ClusterQueue,
      where: o.where,
    })),
    cohorts: byKind('Cohort').map((o) => ({ object: o.object as Cohort, where: o.where })),
    localQueues: byKind('LocalQueue').map((o) => o.object as LocalQueue),
    flavors: p.input.flavors.map((f) => f.flavor),
    tasFlavors: p.cluster.flavors,
    namespaces,
    priorityClasses: classes,
  });
  errors.push(...snap.errors);

  // Admitted Workloads: usage, and candidates for preemption.
  const admittedOut: Workload[] = [];
  const drained = new Map<string, Workload>();
  for (const { workload, where } of p.input.workloads) {
    if (!isAdmitted(workload) || isFinished(workload)) continue;
    admittedOut.push(workload);
    // stopPolicy HoldAndDrain evicts what the queue has admitted (kueue-core §1a).
    const cqName = workload.status!.admission!.clusterQueue;
    const cqObj = cqName !== undefined ? snap.clusterQueues.get(cqName) : undefined;
    const lq =
      workload.spec.queueName !== undefined
        ? snap.localQueues.get(`${workload.metadata.namespace ?? 'default'}/${workload.spec.queueName}`)
        : undefined;
    const stopped =
      cqObj?.stopPolicy === 'HoldAndDrain'
        ? 'ClusterQueueStopped'
        : lq?.spec.stopPolicy === 'HoldAndDrain'
          ? 'LocalQueueStopped'
          : undefined;
    if (stopped) {
      const w = structuredClone(workload);
      const message = stopped === 'ClusterQueueStopped' ? 'The ClusterQueue is stopped' : 'The LocalQueue is stopped';
      setCondition(w, { type: 'Evicted', status: 'True', reason: stopped, message });
      clearAdmission(w, 'Pending', message);
      drained.set(workloadKey(w), w);
      continue;
    }
    const a = admittedFromStatus(workload, where, classes, errors);
    if (a) snap.addAdmitted(a);
  }

  const queues = new QueueManager();
  for (const cq of snap.clusterQueues.values()) queues.ensure(cq.name, cq.strategy);
  const direct = new Map<string, Workload>();
  let now = 0;
  for (const { workload } of p.pending) now = Math.max(now, parseTime(workload.metadata.creationTimestamp) ?? 0);
  for (const [index, { workload }] of p.pending.entries()) {
    const info = workloadInfo(workload, classes);
    // Without a creation time, input order stands for it.
    if (workload.metadata.creationTimestamp === undefined) info.timestamp = index;
    // A named class resolves to spec.priority, as Kueue writes it.
    if (workload.spec.priority === undefined && workload.spec.priorityClassRef !== undefined)
      info.workload = { ...workload, spec: { ...workload.spec, priority: info.priority } };
    const key = info.key;
    const lqName = info.queueName;
    const unqueued = (message: string) => {
      const w = structuredClone(info.workload);
      writePending(w, PendingReason.Inadmissible, message);
      direct.set(key, w);
    };
    if (lqName === undefined) {
      unqueued('the Workload names no LocalQueue (kueue.x-k8s.io/queue-name): Kueue leaves it alone');
      continue;
    }
    const lq = snap.localQueues.get(`${info.namespace}/${lqName}`);
    if (!lq) {
      unqueued(`LocalQueue ${lqName} doesn't exist`);
      continue;
    }
    const cq = snap.clusterQueues.get(lq.spec.clusterQueue);
    if (!cq) {
      unqueued(`ClusterQueue ${lq.spec.clusterQueue} doesn't exist`);
      continue;
    }
    queues.add(cq.name, info);
  }

  const r = settle(snap, queues, {
    now,
    placement: p.placement,
    partialAdmission: true,
    status: { encodingByHostnamePrefix: p.gates.TASAssignmentsEncodingByHostnamePrefix },
  });

  // Workloads no cycle reached (behind a StrictFIFO head that cannot be admitted).
  for (const name of queues.names()) {
    const q = queues.queue(name)!;
    const waiting = q.pending();
    for (const info of waiting) {
      if (r.workloads.has(info.key)) continue;
      const head = waiting.find((x) => r.workloads.has(x.key));
      const w = structuredClone(info.workload);
      writePending(
        w,
        PendingReason.Inadmissible,
        head ? `waiting in ClusterQueue ${name} behind ${head.key} (StrictFIFO)` : `waiting in ClusterQueue ${name}`,
      );
      r.workloads.set(info.key, w);
    }
  }

  const out: Workload[] = [];
  for (const w of admittedOut) out.push(drained.get(workloadKey(w)) ?? r.workloads.get(workloadKey(w)) ?? w);
  for (const { workload } of p.pending) {
    const key = workloadKey(workload);
    out.push(direct.get(key) ?? r.workloads.get(key) ?? workload);
  }
  notes.push(`${r.admitted} admitted, ${r.preempted} preempted in ${r.cycles} cycle(s)`);
  namePreemptors(out);
  if (!p.explain) return { workloads: out, errors, notes };
  const explanations: Explanation[] = [];
  for (const w of out) {
    if (w.status?.admission || w.spec.active === false) continue;
    const lq = workloadInfo(w).queueName;
    const cq = lq !== undefined ? snap.localQueues.get(`${w.metadata.namespace ?? 'default'}/${lq}`)?.spec.clusterQueue : undefined;
    explanations.push(explainPending(snap, cq, w, p.placement));
  }
  return { workloads: out, errors, notes, explanations };
}

/**
 * Each preempted Workload gets its preemptor's `namespace/name` in the annotation
 * `topoqueue.io/preemptor`, as the simulation report's `evictions[].preemptor`: the
 * message names it by UID (by key when the input gave it none).
 */
export function namePreemptors(workloads: Workload[]): void {
  const byUid = new Map<string, string>();
  const keys = new Set<string>();
  for (const w of workloads) {
    keys.add(workloadKey(w));
    if (w.metadata.uid) byUid.set(w.metadata.uid, workloadKey(w));
  }
  for (const [i, w] of workloads.entries()) {
    const c = w.status?.conditions?.find((x) => x.type === 'Preempted' && x.status === 'True');
    const token = c?.message !== undefined ? preemptorOfMessage(c.message) : undefined;
    const by = token === undefined ? undefined : (byUid.get(token) ?? (keys.has(token) ? token : undefined));
    if (by === undefined) continue;
    workloads[i] = {
      ...w,
      metadata: { ...w.metadata, annotations: { ...(w.metadata.annotations ?? {}), [TopoqueueAnnotation.Preemptor]: by } },
    };
  }
}
