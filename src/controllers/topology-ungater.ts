// The TopologyUngater (kueue-core §1f, kueue-tas §14): gives each pod of an admitted TAS
// Workload its domain and lifts the `kueue.x-k8s.io/topology` scheduling gate.
//
// Per Workload key:
// 1. wait while ungates issued earlier are not yet seen by the pod informer (Expectations:
//    a stale cache would hand the same domain slot out twice);
// 2. for each PodSetAssignment with a topologyAssignment: the PodSet's pods from the index
//    (namespace, `kueue.x-k8s.io/workload` annotation, `kueue.x-k8s.io/podset` label), not
//    Succeeded/Failed, in name order; plan rank or greedy (placement/ungate-plan.ts);
// 3. record the pods to ungate as expected, then one update per pod: remove the gate and
//    merge the domain's nodeSelector. Pod events mark them observed; a failed or no-op
//    update is observed at once.
// Pod events enqueue the Workload after config.podBatchMs (batching, as Kueue's 1 s).

import { WorkloadCondition, isTrue } from '../admission/conditions.ts';
import { InputError } from '../api/errors.ts';
import { HOSTNAME_LABEL, KueueAnnotation, KueueLabel, KueueRuntimeKey, KueueSchedulingGate } from '../api/keys.ts';
import type { Node, Pod, StringMap, Workload } from '../api/objects.ts';
import { isTerminal } from '../api/objects.ts';
import { parseTime } from '../api/time.ts';
import { decodeAssignment } from '../placement/tas-usage.ts';
import type { Assignment } from '../placement/assignment.ts';
import { nowSeconds } from '../runtime/clock.ts';
import type { EventRecorder } from '../runtime/events.ts';
import { Expectations } from '../runtime/expectations.ts';
import type { Informer } from '../runtime/informer.ts';
import type { ControllerContext, Reconciler, ReconcileResult } from '../runtime/manager.ts';
import { isConflict, isNotFound, retryOnConflict, splitKey } from '../runtime/store.ts';
import type { WorkQueue } from '../runtime/work-queue.ts';
import type { TopoqueueConfig } from './config.ts';
import {
  comparePodNames,
  hasTopologyGate,
  planUngates,
  podSetGroupOffset,
  rankSettings,
  type UngatePlan,
} from '../placement/ungate-plan.ts';

export const TOPOLOGY_UNGATER = 'topology-ungater';
/** Pod index: `<namespace>/<workload>/<podset>`. */
export const POD_BY_WORKLOAD_PODSET = 'topology-ungater/workload-podset';
/** How soon a Workload with unobserved ungates is looked at again. */
export const EXPECTATIONS_RETRY_MS = 50;

export const UngaterEventReason = {
  InvalidTopologyAssignment: 'InvalidTopologyAssignment',
} as const;

/** `ns/workload/podset` of a pod that carries both keys, else undefined. */
export function podWorkloadPodSet(pod: Pod): string | undefined {
  const wl = pod.metadata.annotations?.[KueueAnnotation.Workload];
  const ps = pod.metadata.labels?.[KueueLabel.PodSet];
  if (wl === undefined || ps === undefined) return undefined;
  return `${pod.metadata.namespace ?? 'default'}/${wl}/${ps}`;
}

/** `ns/workload` of a pod with the workload annotation. */
function podWorkloadKey(pod: Pod): string | undefined {
  const wl = pod.metadata.annotations?.[KueueAnnotation.Workload];
  return wl === undefined ? undefined : `${pod.metadata.namespace ?? 'default'}/${wl}`;
}

/** Admitted with at least one topology assignment, and neither evicted nor finished. */
export function admittedByTAS(w: Workload): boolean {
  const psas = w.status?.admission?.podSetAssignments;
  if (!psas || !psas.some((p) => p.topologyAssignment !== undefined)) return false;
  return isTrue(w, WorkloadCondition.Admitted) && !isTrue(w, WorkloadCondition.Evicted) && !isTrue(w, WorkloadCondition.Finished);
}

export function topologyUngater(): Reconciler<TopoqueueConfig> {
  return new TopologyUngater();
}

class TopologyUngater implements Reconciler<TopoqueueConfig> {
  readonly name = TOPOLOGY_UNGATER;
  private ctx!: ControllerContext<TopoqueueConfig>;
  private recorder!: EventRecorder;
  private workloads!: Informer<Workload>;
  private pods!: Informer<Pod>;
  private nodes!: Informer<Node>;
  private readonly expectations = new Expectations();
  /**
   * Decoded topology assignments by the assignment object: the informer's Workload is read
   * by every reconcile its pods' events cause, and its assignment does not change in place.
   */
  private readonly decoded = new WeakMap<object, Assignment>();

  setup(c: ControllerContext<TopoqueueConfig>, queue: WorkQueue, rec: EventRecorder): void {
    this.ctx = c;
    this.recorder = rec;
    this.workloads = c.informers.for('Workload');
    this.pods = c.informers.for('Pod');
    this.nodes = c.informers.for('Node');
    this.pods.addIndex(POD_BY_WORKLOAD_PODSET, (p) => {
      const k = podWorkloadPodSet(p);
      return k === undefined ? [] : [k];
    });
    const batch = (p: Pod): void => {
      const k = podWorkloadKey(p);
      if (k !== undefined) queue.addAfter(k, c.config.podBatchMs);
    };
    this.pods.addHandler({
      add: batch,
      update: (_old, p) => {
        const k = podWorkloadKey(p);
        if (k === undefined) return;
        if (!hasTopologyGate(p) && p.metadata.uid) this.expectations.observe(k, p.metadata.uid);
        queue.addAfter(k, c.config.podBatchMs);
      },
      delete: (p) => {
        const k = podWorkloadKey(p);
        if (k === undefined) return;
        if (p.metadata.uid) this.expectations.observe(k, p.metadata.uid);
        queue.addAfter(k, c.config.podBatchMs);
      },
    });
    const enqueue = (w: Workload): void => {
      if (admittedByTAS(w)) queue.add(`${w.metadata.namespace ?? 'default'}/${w.metadata.name}`);
    };
    this.workloads.addHandler({
      add: enqueue,
      update: (_old, w) => enqueue(w),
      delete: (w) => this.expectations.forget(`${w.metadata.namespace ?? 'default'}/${w.metadata.name}`),
    });
  }

  async reconcile(key: string): Promise<ReconcileResult | void> {
    if (!this.expectations.satisfied(key)) return { requeueAfterMs: EXPECTATIONS_RETRY_MS };
    const w = this.workloads.get(key);
    if (!w) {
      this.expectations.forget(key);
      return;
    }
    if (!admittedByTAS(w)) return;
    const { namespace } = splitKey(key);
    const ns = namespace ?? 'default';
    // unhealthyNodes names Nodes; domains name hosts by their hostname label (it may differ).
    const unhealthy = new Set<string>();
    for (const { name } of w.status?.unhealthyNodes ?? []) {
      unhealthy.add(name);
      const host = this.nodes.get(name)?.metadata.labels?.[HOSTNAME_LABEL];
      if (host !== undefined) unhealthy.add(host);
    }

    const todo: UngatePlan[] = [];
    for (const [i, psa] of w.status!.admission!.podSetAssignments.entries()) {
      if (!psa.topologyAssignment) continue;
      const ps = w.spec.podSets.find((p) => p.name === psa.name);
      if (!ps) continue;
      let a = this.decoded.get(psa.topologyAssignment);
      try {
        if (a === undefined) {
          a = decodeAssignment(psa.topologyAssignment, { field: `status.admission.podSetAssignments[${i}].topologyAssignment` });
          this.decoded.set(psa.topologyAssignment, a);
        }
      } catch (e) {
        // Permanent until the Workload changes: say so and leave the pods gated.
        const msg = e instanceof InputError ? e.message : String(e);
        this.recorder.event(w, 'Warning', UngaterEventReason.InvalidTopologyAssignment, `PodSet ${psa.name}: ${msg}; its pods stay gated`);
        continue;
      }
      const listed = this.pods
        .byIndex(POD_BY_WORKLOAD_PODSET, `${ns}/${w.metadata.name}/${psa.name}`)
        .filter((p) => !isTerminal(p) && !(hasTopologyGate(p) && p.metadata.deletionTimestamp));
      // Only gated pods are ungated: without one there is nothing to plan (most reconciles,
      // caused by the events of pods already ungated, bound, running or finishing).
      if (!listed.some(hasTopologyGate)) continue;
      listed.sort((x, y) => comparePodNames(x.metadata.name, y.metadata.name));
      const plan = planUngates({
        levels: a.levels,
        domains: a.domains,
        count: psa.count ?? ps.count,
        rank: rankSettings(ps.topologyRequest, podSetGroupOffset(w.spec.podSets, ps.name)),
        pods: listed,
        unhealthyNodes: unhealthy,
      });
      if (plan.ungate.length > 0) todo.push(plan);
    }
    if (todo.length === 0) return;

    const uids: string[] = [];
    for (const plan of todo) for (const u of plan.ungate) uids.push(u.pod.metadata.uid!);
    this.expectations.expect(key, uids);

    const now = nowSeconds(this.ctx.clock);
    const cq = w.status!.admission!.clusterQueue ?? '';
    const isGroup = w.metadata.annotations?.[KueueRuntimeKey.IsGroupWorkload] === 'true' ? 'true' : 'false';
    let firstError: unknown;
    const one = async (plan: (typeof todo)[number], u: (typeof todo)[number]['ungate'][number]) => {
      const uid = u.pod.metadata.uid!;
      const selector = plan.selectorOf(u.domain);
      let changed = false;
      try {
        changed = await ungatePod(this.ctx, u.pod, selector);
      } catch (e) {
        firstError ??= e;
      }
      if (!changed) {
        // Nothing will show this pod ungated by us: do not wait for it.
        this.expectations.observe(key, uid);
        return;
      }
      const created = parseTime(u.pod.metadata.creationTimestamp);
      const seconds = created === undefined ? 0 : Math.max(0, now - created);
      this.ctx.metrics.podSchedulingGateRemoval.observe(
        { name: KueueSchedulingGate.Topology, cluster_queue: cq, is_group: isGroup },
        seconds,
      );
    };
    const items = todo.flatMap((plan) => plan.ungate.map((u) => [plan, u] as const));
    if (this.ctx.config.concurrentCycleWrites) {
      // Against a remote API server: UNGATE_IN_FLIGHT pod writes at once (a 5,000-pod gang is
      // 5,000 round trips), in order of the plan.
      let next = 0;
      const worker = async () => {
        while (next < items.length) {
          const [plan, u] = items[next++]!;
          await one(plan, u);
        }
      };
      await Promise.all(Array.from({ length: Math.min(UNGATE_IN_FLIGHT, items.length) }, worker));
    } else {
      for (const [plan, u] of items) await one(plan, u);
    }
    if (firstError !== undefined) throw firstError;
  }
}

/** Pod writes the ungater keeps in flight against a remote API server. */
const UNGATE_IN_FLIGHT = 64;

function withoutTopologyGate(p: Pod, selector: StringMap): Pod['spec'] {
  const spec = { ...p.spec, nodeSelector: { ...(p.spec.nodeSelector ?? {}), ...selector } };
  const gates = (p.spec.schedulingGates ?? []).filter((g) => g.name !== KueueSchedulingGate.Topology);
  if (gates.length > 0) spec.schedulingGates = gates;
  else delete spec.schedulingGates;
  return spec;
}

/**
 * Removes the gate and merges the selector: one update built from the cached pod (a
 * shallow copy: the store copies what it keeps); on a conflict, read-modify-write. False
 * when nothing was written (the pod is gone, replaced, or no longer gated).
 */
async function ungatePod(ctx: ControllerContext<TopoqueueConfig>, pod: Pod, selector: StringMap): Promise<boolean> {
  try {
    await ctx.store.update({ ...pod, spec: withoutTopologyGate(pod, selector) });
    return true;
  } catch (e) {
    if (isNotFound(e)) return false;
    if (!isConflict(e)) throw e;
  }
  const r = await retryOnConflict(ctx.store, 'Pod', pod.metadata.namespace, pod.metadata.name, (p) => {
    if (p.metadata.uid !== pod.metadata.uid || !hasTopologyGate(p)) return false;
    p.spec = withoutTopologyGate(p, selector);
  });
  return r.outcome === 'written';
}
