// The 'pod-group' controller: plain Pods (KEP-976, kueue-core §1e), Koordinator /
// scheduler-plugins gang pods and the bare pods of Volcano PodGroups at runtime. It also
// registers the pod webhook (pod-webhook.ts).
//
// Keys (pods-scope.ts): `pod/<ns>/<name>` single pods, `group/<ns>/<group>` Kueue pod
// groups, `gang/<ns>/<gang>` gangs, `podgroup/<ns>/<name>` Volcano PodGroups. Pod, Workload
// and PodGroup events enqueue the key they belong to.
//
// A Volcano PodGroup runs as a gang: its Workload (`podgroup-<name>-<hash>`, owned by the
// PodGroup) is built by volcano-podgroup.ts, the integration `plan` uses, from the
// PodGroup and every member of the namespace (members bound before, which the webhook does
// not manage, count toward the gang and hold their instance's domain); pods match PodSets
// by sub-group policy and role; then as a gang below (excess pods stay gated).
//
// Single pod:
//   1. stale Workloads (owner uid of an earlier pod of that name) are deleted; no pod ->
//      its Workload goes too (what the garbage collector does for a controller owner);
//   2. Workload Finished -> the pod's finalizer is removed; Workload deleting -> stop;
//   3. pod terminal -> Workload Finished (Succeeded/Failed, the pod's status message), then
//      finalizer removed; deleting and never bound -> finalizer removed;
//   4. no Workload -> build it (pod.ts, `pod-<name>-<5hex>`, controller owner ref) and create;
//   5. PodsReady (waitForPodsReady on); Evicted -> stop the started pod (TerminationTarget +
//      delete), and once nothing runs clear the reservation (Requeued=False: pod-owned
//      Workloads are not reassigned); Admitted -> start (ungate, event Started); no
//      reservation and started -> stop (NotAdmitted).
// Groups and gangs (one Workload named after the group):
//   1. no pods -> Workload deleted; Workload Finished -> every finalizer removed; deleting ->
//      stop and release it;
//   2. no Workload -> compose: finalize inactive pods; a group needs its total count of
//      runnable pods (Warning ErrWorkloadCompose otherwise; `pod-group-fast-admission`
//      needs one), a gang its total-number of pending pods (Koordinator's message);
//      excess youngest pods are finalized and deleted (ExcessPodDeleted,
//      kueue_pods_rejected_total); groups with `kueue.x-k8s.io/pod-group-sets` wait for
//      the pods of their sets without a template (pods-group-sets.ts); create;
//   3. Workload there -> per PodSet (role: role hash, or set): active pods beyond the count
//      are excess (groups: deleted; gangs: left gated with a Warning), inactive pods that
//      a newcomer replaced are finalized, absent = count - active; owner references for
//      newcomers (OwnerReferencesAdded); a pod of an unknown role makes a Workload without
//      reservation be recomposed (DeletedWorkload), and stays gated with a Warning once
//      reserved;
//   4. Finished when succeeded == total, or a pod is `retriable-in-group: "false"` and no
//      pod runs any more (reason Succeeded, `Pods succeeded: <n>/<total>.`); serving groups
//      (`pod-group-serving: "true"`) never finish; reclaimablePods = succeeded per role;
//   5. PodsReady; Evicted -> stop started pods, clear the reservation once none runs;
//      Admitted -> ungate gated pods up to the PodSet's admitted count (Expectations
//      guard against a stale cache); WaitingForReplacementPods while pods are absent.
// Finalizers come off deleting pods that never ran, Failed ones, pods stopped by an eviction
// once terminal, and every pod once the Workload is finished or gone; Succeeded pods keep
// theirs until the group finishes (they are counted).

import { CoreApiVersion, KueueApiVersion } from '../api/api-versions.ts';
import { gangsFromPods, type PodGroup } from '../api/gang.ts';
import type { InputError } from '../api/errors.ts';
import { KueueLabel, KueueRuntimeKey, KueueSchedulingGate } from '../api/keys.ts';
import { parseTime } from '../api/time.ts';
import type { KObject, Pod, PodSet, ResourceFlavor, Workload } from '../api/objects.ts';
import { isRunningReadyOrSucceeded, isTerminal } from '../api/objects.ts';
import { compareStrings } from '../api/values.ts';
import { WorkloadCondition, findCondition, isTrue, setCondition } from '../admission/conditions.ts';
import { clearReservation, updatePodsReady } from '../admission/pods-ready.ts';
import { GangWorkloadAnnotation, isGangPodGroup, workloadsFromGangsAndPods } from '../integrations/gang-pods.ts';
import type { SourcedObject } from '../integrations/integration.ts';
import { PodGroupKind, podGroupPodSetOf, podGroupStartOrder, workloadsFromPodGroupsAndPods } from '../integrations/volcano-podgroup.ts';
import { parseVolcano } from '../integrations/volcano-job.ts';
import { VolcanoAnnotation, type VolcanoPodGroup } from '../api/volcano-objects.ts';
import {
  PodGroupAnnotation,
  isPendingPlainPod,
  podKeepOrder,
  queueMismatch,
  roleHash,
  singlePodWorkload,
  workloadsFromPods,
} from '../integrations/pod.ts';
import {
  IS_GROUP_WORKLOAD_ANNOTATION,
  LABELS_MISMATCH_MESSAGE,
  RESOURCE_IN_USE_FINALIZER,
  labelsToCopy,
  defaultPriority,
  namespaceOf,
  ownerReference,
  provReqAnnotations,
} from '../integrations/workload-name.ts';
import { nowSeconds } from '../runtime/clock.ts';
import type { EventRecorder } from '../runtime/events.ts';
import { Expectations } from '../runtime/expectations.ts';
import type { Informer } from '../runtime/informer.ts';
import type { ControllerContext, Reconciler } from '../runtime/manager.ts';
import { isAlreadyExists, isNotFound, retryOnConflict } from '../runtime/store.ts';
import type { WorkQueue } from '../runtime/work-queue.ts';
import { POD_FRAMEWORK, type TopoqueueConfig, frameworkEnabled } from './config.ts';
import { registerPodWebhook } from './pod-webhook.ts';
import {
  POD_GROUP_ROLE_LABEL,
  type PodGroupSet,
  hasPodGroupSets,
  parsePodGroupSets,
  podSetsFromSets,
  setOfPod,
} from './pods-group-sets.ts';
import { PodKeyPrefix, isManagedPod, parseReconcileKey, podReconcileKey } from './pods-scope.ts';
import { resolvePriority } from './workload-priority.ts';
import {
  NOT_ADMITTED_MESSAGE,
  StopReason,
  TERMINATION_TARGET,
  WORKLOAD_DELETED_MESSAGE,
  finalizePod,
  hasAdmissionGate,
  podSetInfo,
  startPod,
  stopPod,
  type PodSetInfo,
} from './pods-start.ts';

export const POD_GROUP_CONTROLLER = 'pod-group';
const KEY_INDEX = 'pod-group-key';

/** Event reasons and messages (Kueue's, verbatim where Kueue has them). */
export const PodEventReason = {
  CreatedWorkload: 'CreatedWorkload',
  DeletedWorkload: 'DeletedWorkload',
  Started: 'Started',
  Stopped: 'Stopped',
  ErrWorkloadCompose: 'ErrWorkloadCompose',
  ExcessPodDeleted: 'ExcessPodDeleted',
  OwnerReferencesAdded: 'OwnerReferencesAdded',
  WorkloadNameConflict: 'WorkloadNameConflict',
  FailedToStart: 'FailedToStart',
} as const;

export const WaitingForReplacementPods = {
  Type: 'WaitingForReplacementPods',
  PodsFailedReason: 'PodsFailed',
  PodsFailedMessage: 'Some Failed pods need replacement',
  PodsReadyReason: 'PodsReady',
  PodsReadyMessage: 'No pods need replacement',
} as const;

export const FinishedReason = { Succeeded: 'Succeeded', Failed: 'Failed', FailedToStart: 'FailedToStart' } as const;

// ---------------------------------------------------------------------------------------
// Pod and Workload predicates
// ---------------------------------------------------------------------------------------

const isDeleting = (o: KObject) => o.metadata.deletionTimestamp !== undefined;
/** Kueue's "runnable or succeeded": not Failed, and not deleting before it was ever bound. */
const isActive = (p: Pod) => p.status?.phase !== 'Failed' && !(isDeleting(p) && !p.spec.nodeName);
/** Counts for quota release (FastQuotaReleaseInPodIntegration: deleting pods do not). */
const isRunning = (p: Pod) => p.status?.phase === 'Running' && !isDeleting(p);
const stoppedByKueue = (p: Pod) => (p.status?.conditions ?? []).some((c) => c.type === TERMINATION_TARGET && c.status === 'True');
const byName = (a: KObject, b: KObject) => compareStrings(a.metadata.name, b.metadata.name);
const podRef = (p: KObject) => `${namespaceOf(p)}/${p.metadata.name}`;

/** A deleting pod whose finalizer tracks nothing any more. Succeeded pods keep it: they are counted. */
const finalizable = (p: Pod) => isDeleting(p) && (!p.spec.nodeName || p.status?.phase === 'Failed' || (isTerminal(p) && stoppedByKueue(p)));

const hasReservation = (w: Workload) => w.status?.admission !== undefined;
const isVolcanoPodGroup = (o: KObject) => o.kind === PodGroupKind.kind && o.apiVersion === PodGroupKind.apiVersion;
const isFinished = (w: Workload) => isTrue(w, WorkloadCondition.Finished);

/** The 'pod-group' key of a Workload this controller owns, undefined for others'. */
export function workloadReconcileKey(wl: Workload): string | undefined {
  const ns = namespaceOf(wl);
  const refs = wl.metadata.ownerReferences ?? [];
  if (wl.metadata.annotations?.[IS_GROUP_WORKLOAD_ANNOTATION] === 'true') {
    if (refs.length === 0 || !refs.every((r) => r.kind === 'Pod' && r.apiVersion === CoreApiVersion.V1 && !r.controller)) return undefined;
    const prefix = wl.metadata.annotations[GangWorkloadAnnotation.Source] !== undefined ? PodKeyPrefix.Gang : PodKeyPrefix.Group;
    return `${prefix}/${ns}/${wl.metadata.name}`;
  }
  const owner = refs.find((r) => r.controller);
  if (owner?.kind === 'Pod' && owner.apiVersion === CoreApiVersion.V1) return `${PodKeyPrefix.Pod}/${ns}/${owner.name}`;
  if (owner?.kind === PodGroupKind.kind && owner.apiVersion === PodGroupKind.apiVersion)
    return `${PodKeyPrefix.Volcano}/${ns}/${owner.name}`;
  return undefined;
}

// ---------------------------------------------------------------------------------------
// The controller
// ---------------------------------------------------------------------------------------

export function podGroupController(): Reconciler<TopoqueueConfig> {
  return new PodGroupController();
}

type GroupKind = typeof PodKeyPrefix.Group | typeof PodKeyPrefix.Gang | typeof PodKeyPrefix.Volcano;

interface Role {
  podSet: PodSet;
  pods: Pod[];
  active: Pod[];
}

class PodGroupController implements Reconciler<TopoqueueConfig> {
  readonly name = POD_GROUP_CONTROLLER;
  private ctx!: ControllerContext<TopoqueueConfig>;
  private queue!: WorkQueue;
  private recorder!: EventRecorder;
  private pods!: Informer<Pod>;
  private workloads!: Informer<Workload>;
  private flavors!: Informer<ResourceFlavor>;
  private podGroups!: Informer<PodGroup>;
  /** Ungates issued and not yet seen by the pod informer, per key. */
  private readonly ungates = new Expectations();
  /** Warnings already given for a pod (uid + reason): the same problem is said once. */
  private readonly warned = new Set<string>();

  setup(ctx: ControllerContext<TopoqueueConfig>, queue: WorkQueue, recorder: EventRecorder): void {
    this.ctx = ctx;
    this.queue = queue;
    this.recorder = recorder;
    registerPodWebhook(ctx);
    this.flavors = ctx.informers.for('ResourceFlavor');
    ctx.informers.for('WorkloadPriorityClass');
    ctx.informers.for('PriorityClass');
    this.podGroups = ctx.informers.for<PodGroup>('PodGroup');
    this.pods = ctx.informers.for('Pod');
    this.pods.addIndex(KEY_INDEX, (p) => {
      const k = podReconcileKey(p);
      return k === undefined ? [] : [k];
    });
    const enqueuePod = (p: Pod) => {
      const k = podReconcileKey(p);
      if (k !== undefined) queue.add(k);
    };
    this.pods.addHandler({
      add: (p) => {
        if (isManagedPod(p) && hasAdmissionGate(p)) ctx.metrics.podsGated.inc();
        enqueuePod(p);
      },
      update: (old, p) => {
        const k = podReconcileKey(p);
        if (k !== undefined && hasAdmissionGate(old) && !hasAdmissionGate(p)) this.ungates.observe(k, p.metadata.uid ?? '');
        enqueuePod(old);
        enqueuePod(p);
      },
      delete: (p) => {
        const k = podReconcileKey(p);
        if (k !== undefined) this.ungates.observe(k, p.metadata.uid ?? '');
        enqueuePod(p);
      },
    });
    this.workloads = ctx.informers.for('Workload');
    this.workloads.addIndex(KEY_INDEX, (w) => {
      const k = workloadReconcileKey(w);
      return k === undefined ? [] : [k];
    });
    const enqueueWorkload = (w: Workload) => {
      const k = workloadReconcileKey(w);
      if (k !== undefined) queue.add(k);
    };
    this.workloads.addHandler({ add: enqueueWorkload, update: (_, w) => enqueueWorkload(w), delete: enqueueWorkload });
    const enqueuePodGroup = (pg: PodGroup) => {
      if (isGangPodGroup(pg)) queue.add(`${PodKeyPrefix.Gang}/${namespaceOf(pg)}/${pg.metadata.name}`);
      else if (isVolcanoPodGroup(pg)) queue.add(`${PodKeyPrefix.Volcano}/${namespaceOf(pg)}/${pg.metadata.name}`);
    };
    this.podGroups.addHandler({ add: enqueuePodGroup, update: (_, pg) => enqueuePodGroup(pg), delete: enqueuePodGroup });
  }

  async reconcile(key: string): Promise<void> {
    const k = parseReconcileKey(key);
    if (!k || !frameworkEnabled(this.ctx.config, POD_FRAMEWORK)) return;
    if (k.kind === PodKeyPrefix.Pod) await this.reconcileSingle(key, k.namespace, k.name);
    else await this.reconcileGroup(key, k.kind, k.namespace, k.name);
  }

  private get now(): number {
    return nowSeconds(this.ctx.clock);
  }

  // -------------------------------------------------------------------------------------
  // Single pods
  // -------------------------------------------------------------------------------------

  private async reconcileSingle(key: string, ns: string, name: string): Promise<void> {
    const pod = this.pods.get(ns, name);
    const owned = this.workloads.byIndex(KEY_INDEX, key);
    const current = pod && isManagedPod(pod) ? pod : undefined;
    const wl = current
      ? owned.find((w) => w.metadata.ownerReferences?.some((r) => r.controller && r.uid === current.metadata.uid))
      : undefined;
    for (const stale of owned) if (stale !== wl) await this.deleteWorkload(stale);
    if (!current) return;

    if (wl && isFinished(wl)) {
      await finalizePod(this.ctx.store, current);
      return;
    }
    if (wl && isDeleting(wl)) {
      await this.stopStarted(wl, [current], StopReason.WorkloadDeleted, WORKLOAD_DELETED_MESSAGE);
      await this.removeWorkloadFinalizer(wl);
      return;
    }
    if (isTerminal(current)) {
      if (wl) {
        const succeeded = current.status?.phase === 'Succeeded';
        const message =
          typeof current.status?.message === 'string' && current.status.message
            ? current.status.message
            : succeeded
              ? 'Pod succeeded'
              : 'Pod failed';
        await this.setFinished(wl, succeeded ? FinishedReason.Succeeded : FinishedReason.Failed, message);
      }
      await finalizePod(this.ctx.store, current);
      return;
    }
    if (isDeleting(current) && (!current.spec.nodeName || !wl)) {
      await finalizePod(this.ctx.store, current);
      return;
    }
    if (!wl) {
      const errors: InputError[] = [];
      const built = singlePodWorkload(current, { object: `Pod/${ns}/${name}` }, errors);
      if (!built) {
        this.warnOnce(current, PodEventReason.ErrWorkloadCompose, errors.map((e) => e.detail).join('; '));
        return;
      }
      await this.createWorkload(built, current, [current]);
      return;
    }

    await this.maintainPodsReady(wl, [current], 1);
    if (isTrue(wl, WorkloadCondition.Evicted)) {
      await this.evict(wl, [current], true);
      return;
    }
    if (isTrue(wl, WorkloadCondition.Admitted) && hasAdmissionGate(current) && !isDeleting(current)) {
      await this.start(key, wl, [{ pod: current, podSet: wl.spec.podSets[0]?.name ?? 'main' }], false);
      return;
    }
    if (!hasReservation(wl) && !hasAdmissionGate(current) && !isDeleting(current)) {
      await this.stopStarted(wl, [current], StopReason.NotAdmitted, NOT_ADMITTED_MESSAGE);
    }
  }

  // -------------------------------------------------------------------------------------
  // Groups and gangs
  // -------------------------------------------------------------------------------------

  private async reconcileGroup(key: string, kind: GroupKind, ns: string, name: string): Promise<void> {
    const all = this.pods.byIndex(KEY_INDEX, key).sort(byName);
    // A Volcano PodGroup's Workload is `podgroup-<name>-<hash>`, owned by the PodGroup.
    const existing = kind === PodKeyPrefix.Volcano ? this.workloads.byIndex(KEY_INDEX, key)[0] : this.workloads.get(ns, name);
    if (existing && workloadReconcileKey(existing) !== key) {
      if (all.length > 0) {
        const what = kind === PodKeyPrefix.Gang ? 'gang' : 'pod group';
        this.warnOnce(
          all[0]!,
          PodEventReason.WorkloadNameConflict,
          `A Workload named "${name}" already exists but is not a ${what} workload; this ${what} cannot be admitted`,
        );
      }
      return;
    }
    const wl = existing;
    if (all.length === 0) {
      if (wl) await this.deleteWorkload(wl);
      return;
    }
    if (wl && isFinished(wl)) {
      for (const p of all) await finalizePod(this.ctx.store, p);
      return;
    }
    if (wl && isDeleting(wl)) {
      await this.stopStarted(wl, all, StopReason.WorkloadDeleted, WORKLOAD_DELETED_MESSAGE);
      await this.removeWorkloadFinalizer(wl);
      for (const p of all) if (finalizable(p)) await finalizePod(this.ctx.store, p);
      return;
    }
    for (const p of all) if (finalizable(p) || (!wl && isDeleting(p))) await finalizePod(this.ctx.store, p);
    if (!wl) {
      if (kind === PodKeyPrefix.Gang) await this.composeGang(ns, name, all);
      else if (kind === PodKeyPrefix.Volcano) await this.composeVolcano(ns, name, all);
      else await this.composeGroup(ns, name, all);
      return;
    }
    await this.runGroup(key, kind, wl, all);
  }

  /** The sets of a group: from its Workload once there, else from its first pod declaring them. */
  private setsOf(wl: Workload | undefined, pods: readonly Pod[]): PodGroupSet[] | undefined {
    const raw = wl
      ? wl.metadata.annotations?.[KueueRuntimeKey.PodGroupSets]
      : pods.find(hasPodGroupSets)?.metadata.annotations?.[KueueRuntimeKey.PodGroupSets];
    return raw === undefined ? undefined : parsePodGroupSets(raw).sets;
  }

  private async composeGroup(ns: string, group: string, all: Pod[]): Promise<void> {
    const active = all.filter((p) => isActive(p) && !isDeleting(p));
    if (active.length === 0) return;
    const first = active[0]!;
    const sets = this.setsOf(undefined, active);
    if (hasPodGroupSets(first) || active.some(hasPodGroupSets)) {
      if (!sets) return; // the webhook refuses unreadable sets; nothing to build from
      await this.composeFromSets(ns, group, active, sets);
      return;
    }

    const total = Number(first.metadata.annotations?.[PodGroupAnnotation.TotalCount]);
    for (const p of active.slice(1)) {
      const other = Number(p.metadata.annotations?.[PodGroupAnnotation.TotalCount]);
      if (other !== total) {
        this.warnOnce(
          p,
          PodEventReason.ErrWorkloadCompose,
          `pods '${first.metadata.name}' and '${p.metadata.name}' has different '${PodGroupAnnotation.TotalCount}' values: ${total}!=${other}`,
        );
        return;
      }
      const mismatch = queueMismatch({ pod: first, where: {} }, { pod: p, where: {} });
      if (mismatch) {
        this.warnOnce(p, PodEventReason.ErrWorkloadCompose, mismatch.detail);
        return;
      }
    }
    const fast = first.metadata.annotations?.[PodGroupAnnotation.FastAdmission] === 'true';
    if (!fast && active.length < total) {
      this.recorder.event(first, 'Warning', PodEventReason.ErrWorkloadCompose, `'${group}' group has fewer runnable pods than expected`);
      return;
    }
    let kept = active;
    if (active.length > total) {
      const order = [...active].sort(podKeepOrder);
      await this.deleteExcess(order.slice(total));
      kept = order.slice(0, total).sort(byName);
    }
    const r = workloadsFromPods(kept.map((p): SourcedObject => ({ object: p, where: { object: `Pod/${ns}/${p.metadata.name}` } })));
    const built = r.workloads[0]?.workload;
    if (r.errors.length > 0 || !built) {
      this.warnOnce(
        kept[0]!,
        PodEventReason.ErrWorkloadCompose,
        r.errors.map((e) => e.detail).join('; ') || `'${group}' group gives no Workload`,
      );
      return;
    }
    await this.createWorkload(built, kept[0]!, kept);
  }

  private async composeFromSets(ns: string, group: string, active: Pod[], sets: PodGroupSet[]): Promise<void> {
    const declaring = active.find(hasPodGroupSets)!;
    const kept: Pod[] = [];
    for (const s of sets) {
      const members = active.filter((p) => setOfPod(p, sets) === s);
      if (s.template === undefined && members.length < s.count) {
        this.recorder.event(
          declaring,
          'Warning',
          PodEventReason.ErrWorkloadCompose,
          `'${group}' group has fewer runnable pods than expected`,
        );
        return;
      }
      const order = [...members].sort(podKeepOrder);
      await this.deleteExcess(order.slice(s.count));
      kept.push(...order.slice(0, s.count));
    }
    for (const p of active) {
      if (setOfPod(p, sets) === undefined) this.warnOnce(p, PodEventReason.ErrWorkloadCompose, unknownSetMessage(p, sets));
    }
    for (const p of kept) {
      const mismatch = queueMismatch({ pod: declaring, where: {} }, { pod: p, where: {} });
      if (mismatch) {
        this.warnOnce(p, PodEventReason.ErrWorkloadCompose, mismatch.detail);
        return;
      }
    }
    const errors: InputError[] = [];
    const podSets = podSetsFromSets(sets, kept, { object: `Pod/${ns}/${declaring.metadata.name}` }, errors);
    if (!podSets) {
      this.warnOnce(declaring, PodEventReason.ErrWorkloadCompose, errors.map((e) => e.detail).join('; '));
      return;
    }
    const wl: Workload = {
      apiVersion: KueueApiVersion.V1beta2,
      kind: 'Workload',
      metadata: {
        name: group,
        namespace: ns,
        annotations: {
          ...provReqAnnotations(declaring.metadata.annotations),
          [IS_GROUP_WORKLOAD_ANNOTATION]: 'true',
          [KueueRuntimeKey.PodGroupSets]: declaring.metadata.annotations![KueueRuntimeKey.PodGroupSets]!,
        },
        ownerReferences: kept.sort(byName).map((p) => ownerReference(p, false)),
        finalizers: [RESOURCE_IN_USE_FINALIZER],
      },
      spec: { podSets },
    };
    const queueName = declaring.metadata.labels?.[KueueLabel.QueueName];
    if (queueName) wl.spec.queueName = queueName;
    const priority = defaultPriority(declaring, podSets);
    if (priority !== undefined) wl.spec.priority = priority;
    await this.createWorkload(wl, declaring, kept);
  }

  private async composeGang(ns: string, gang: string, all: Pod[]): Promise<void> {
    const live = all.filter((p) => !isTerminal(p) && !isDeleting(p));
    const pending = live.filter(isPendingPlainPod);
    if (pending.length === 0) return;
    const first = pending[0]!;
    const podGroups = this.podGroups.list(ns).filter(isGangPodGroup);
    const id = `${ns}/${gang}`;
    const spec = gangsFromPods(live, podGroups).gangs.get(id);
    if (!spec) {
      this.recorder.event(
        first,
        'Warning',
        PodEventReason.ErrWorkloadCompose,
        `gang has not init, gangName: ${id}, podName: ${podRef(first)}`,
      );
      return;
    }
    if (pending.length < spec.totalNumber) {
      this.recorder.event(
        first,
        'Warning',
        PodEventReason.ErrWorkloadCompose,
        `gang child pod not collect enough, gangName: ${id}, podName: ${podRef(first)}`,
      );
      return;
    }
    const items: SourcedObject[] = [...live, ...podGroups].map((o) => ({
      object: o,
      where: { object: `${o.kind}/${namespaceOf(o)}/${o.metadata.name}` },
    }));
    const r = workloadsFromGangsAndPods(items);
    const built = r.workloads.find(
      (w) => w.workload.metadata.name === gang && w.workload.metadata.annotations?.[GangWorkloadAnnotation.Source] !== undefined,
    )?.workload;
    if (!built) {
      const why = r.errors.map((e) => e.detail).join('; ') || `gang ${id} gives no gang Workload: ${r.notes.join('; ')}`;
      this.warnOnce(first, PodEventReason.ErrWorkloadCompose, why);
      return;
    }
    await this.createWorkload(built, first, live);
  }

  /**
   * A Volcano PodGroup's Workload, built by the integration `plan` uses
   * (volcano-podgroup.ts) from the PodGroup and every member pod of the namespace: bound
   * ones (running before the run, not ours) count toward the gang and hold their
   * instance's domain.
   */
  private async composeVolcano(ns: string, name: string, all: Pod[]): Promise<void> {
    const live = all.filter((p) => !isTerminal(p) && !isDeleting(p));
    const pending = live.filter(isPendingPlainPod);
    if (pending.length === 0) return;
    const first = pending[0]!;
    const pg = this.podGroups.get(ns, name);
    if (!pg || !isVolcanoPodGroup(pg)) {
      this.warnOnce(
        first,
        PodEventReason.ErrWorkloadCompose,
        `PodGroup ${ns}/${name} (${PodGroupKind.apiVersion}) is not found: the pod waits for it`,
      );
      return;
    }
    const members = this.pods
      .list(ns)
      .filter((p) => p.metadata.annotations?.[VolcanoAnnotation.PodGroupName] === name)
      .sort(byName);
    const items: SourcedObject[] = [pg, ...members].map((o) => ({
      object: o,
      where: { object: `${o.kind}/${namespaceOf(o)}/${o.metadata.name}` },
    }));
    const r = workloadsFromPodGroupsAndPods(items);
    const built = r.workloads.find((w) => w.workload.metadata.ownerReferences?.some((o) => o.uid === pg.metadata.uid))?.workload;
    if (!built) {
      const why = r.errors.map((e) => e.detail).join('; ') || `PodGroup ${ns}/${name} gives no Workload`;
      this.warnOnce(first, PodEventReason.ErrWorkloadCompose, why);
      return;
    }
    // The queue: the PodGroup's own label, else its pending members' (the pod webhook's default).
    const queue = built.metadata.labels?.[KueueLabel.QueueName] ?? first.metadata.labels?.[KueueLabel.QueueName];
    if (queue !== undefined) built.metadata.labels = { ...built.metadata.labels, [KueueLabel.QueueName]: queue };
    await this.createWorkload(built, first, live);
  }

  /** The Volcano PodGroup owning a Workload, parsed; undefined when gone or unreadable. */
  private volcanoPodGroupOf(wl: Workload): VolcanoPodGroup | undefined {
    const ref = wl.metadata.ownerReferences?.find((o) => o.controller);
    const raw = ref ? this.podGroups.get(namespaceOf(wl), ref.name) : undefined;
    return raw && isVolcanoPodGroup(raw) ? parseVolcano<VolcanoPodGroup>(raw, { object: 'PodGroup' }).object : undefined;
  }

  /** The PodSet of a Volcano PodGroup's member (its policy and role), undefined without the PodGroup. */
  private volcanoRoleOf(pg: VolcanoPodGroup | undefined): (p: Pod) => string | undefined {
    return (p) => {
      const role = podRole(p);
      return pg === undefined || role === undefined ? undefined : podGroupPodSetOf(p, pg, role);
    };
  }

  /** Members of a Volcano PodGroup past the gate or bound before, and not Failed or deleting. */
  private volcanoStarted(wl: Workload, pg: VolcanoPodGroup): Pod[] {
    return this.pods
      .list(namespaceOf(wl))
      .filter(
        (p) =>
          p.metadata.annotations?.[VolcanoAnnotation.PodGroupName] === pg.metadata.name &&
          !hasAdmissionGate(p) &&
          !isDeleting(p) &&
          p.status?.phase !== 'Failed',
      );
  }

  private async runGroup(key: string, kind: GroupKind, wl: Workload, all: Pod[]): Promise<void> {
    const sets = kind === PodKeyPrefix.Volcano ? undefined : this.setsOf(wl, all);
    const volcano = kind === PodKeyPrefix.Volcano ? this.volcanoPodGroupOf(wl) : undefined;
    const volcanoRole = kind === PodKeyPrefix.Volcano ? this.volcanoRoleOf(volcano) : undefined;
    const roleOf = (p: Pod): string | undefined => (volcanoRole ? volcanoRole(p) : sets ? setOfPod(p, sets)?.name : podRole(p));
    const roles = new Map<string, Role>(wl.spec.podSets.map((ps) => [ps.name, { podSet: ps, pods: [], active: [] }]));
    const strangers: Pod[] = [];
    for (const p of all) {
      const role = roleOf(p);
      const r = role === undefined ? undefined : roles.get(role);
      if (!r) {
        if (isActive(p) && !isTerminal(p)) strangers.push(p);
        continue;
      }
      r.pods.push(p);
      if (isActive(p)) r.active.push(p);
    }

    // 3. Match: strangers, excess, replaced, absent, owner references.
    if (strangers.length > 0 && !hasReservation(wl) && !isTrue(wl, WorkloadCondition.Evicted)) {
      this.recorder.event(
        wl,
        'Normal',
        PodEventReason.DeletedWorkload,
        `Deleted not matching Workload: ${namespaceOf(wl)}/${wl.metadata.name}`,
      );
      await this.deleteWorkload(wl);
      return;
    }
    for (const p of strangers) {
      const why = sets
        ? unknownSetMessage(p, sets)
        : `pod ${p.metadata.name} has role ${roleOf(p)}, which is not one of Workload ${wl.metadata.name}'s PodSets (${[...roles.keys()].join(', ')}): it stays gated`;
      this.warnOnce(p, PodEventReason.ErrWorkloadCompose, why);
    }
    let absent = 0;
    for (const r of roles.values()) {
      const count = r.podSet.count;
      if (r.active.length > count) {
        const order = [...r.active].sort(podKeepOrder);
        const excess = order.slice(count);
        if (kind === PodKeyPrefix.Group) await this.deleteExcess(excess);
        else
          for (const p of excess)
            this.warnOnce(
              p,
              PodEventReason.ErrWorkloadCompose,
              `gang ${namespaceOf(wl)}/${wl.metadata.name} already has ${count} pods of role ${r.podSet.name}: pod ${p.metadata.name} stays gated`,
            );
        r.active = order.slice(0, count);
      }
      const inactive = r.pods.filter((p) => !isActive(p));
      const replaced = Math.max(0, inactive.length + r.active.length - count);
      for (const p of [...inactive].sort(podKeepOrder).slice(0, replaced)) await finalizePod(this.ctx.store, p);
      absent += Math.max(0, count - r.active.length);
    }
    const members = [...roles.values()].flatMap((r) => r.active);
    await this.addOwnerReferences(wl, members);

    // 4. Finished, reclaimable pods. The total is what was admitted (a NonStrict gang may
    // run fewer than its PodSets' counts; pod groups are admitted whole).
    const admittedOf = (ps: PodSet) => wl.status?.admission?.podSetAssignments.find((a) => a.name === ps.name)?.count ?? ps.count;
    const total = wl.spec.podSets.reduce((n, ps) => n + admittedOf(ps), 0);
    const rolePods = [...roles.values()].flatMap((r) => r.pods);
    const succeeded = rolePods.filter((p) => p.status?.phase === 'Succeeded').length;
    const serving = all.some((p) => p.metadata.annotations?.[KueueRuntimeKey.PodGroupServing] === 'true');
    if (!serving) {
      const unretriable = all.some((p) => p.metadata.annotations?.[KueueRuntimeKey.RetriableInGroup] === 'false');
      if (succeeded >= total || (unretriable && all.every(isTerminal))) {
        await this.setFinished(wl, FinishedReason.Succeeded, `Pods succeeded: ${succeeded}/${total}.`);
        for (const p of all) await finalizePod(this.ctx.store, p);
        return;
      }
      await this.writeReclaimable(wl, roles);
    }

    // 5. PodsReady, eviction, start, replacement condition.
    await this.maintainPodsReady(wl, members, total);
    await this.writeWaitingForReplacement(wl, absent);
    if (isTrue(wl, WorkloadCondition.Evicted)) {
      await this.evict(wl, all, false);
      return;
    }
    if (isTrue(wl, WorkloadCondition.Admitted)) {
      if (!this.ungates.satisfied(key)) {
        // Our earlier ungates are not in the cache yet; their events requeue the key.
        return;
      }
      const todo: { pod: Pod; podSet: string }[] = [];
      for (const r of roles.values()) {
        const admitted = admittedOf(r.podSet);
        const started = r.active.filter((p) => !hasAdmissionGate(p)).length;
        let gated = r.active.filter((p) => hasAdmissionGate(p) && !isDeleting(p) && !isTerminal(p)).sort(podKeepOrder);
        // A Volcano PodGroup's instances: the pods the placement filled, in its order.
        if (volcano) gated = podGroupStartOrder([...gated].sort(byName), this.volcanoStarted(wl, volcano), volcano);
        for (const p of gated.slice(0, Math.max(0, admitted - started))) todo.push({ pod: p, podSet: r.podSet.name });
      }
      await this.start(key, wl, todo, true);
      return;
    }
    if (!hasReservation(wl)) {
      const started = all.filter((p) => !hasAdmissionGate(p) && !isDeleting(p) && !isTerminal(p));
      if (started.length > 0) await this.stopStarted(wl, started, StopReason.NotAdmitted, NOT_ADMITTED_MESSAGE);
    }
  }

  // -------------------------------------------------------------------------------------
  // Steps shared by single pods and groups
  // -------------------------------------------------------------------------------------

  /** Ungates pods with their PodSet's info; a merge conflict finishes the Workload (permanent). */
  private async start(key: string, wl: Workload, todo: readonly { pod: Pod; podSet: string }[], group: boolean): Promise<void> {
    if (todo.length === 0) return;
    const infos = new Map<string, PodSetInfo>();
    for (const { podSet } of todo) {
      if (infos.has(podSet)) continue;
      const r = podSetInfo(wl, podSet, (n) => this.flavors.get(n));
      if (r.error) throw new Error(r.error);
      infos.set(podSet, r.info!);
    }
    const cq = wl.status?.admission?.clusterQueue ?? '';
    this.ungates.expect(
      key,
      todo.map((t) => t.pod.metadata.uid ?? ''),
    );
    for (const { pod, podSet } of todo) {
      let r: Awaited<ReturnType<typeof startPod>>;
      try {
        r = await startPod(this.ctx.store, pod, infos.get(podSet)!);
      } catch (e) {
        this.ungates.observe(key, pod.metadata.uid ?? '');
        throw e;
      }
      if (r.status !== 'started') this.ungates.observe(key, pod.metadata.uid ?? '');
      if (r.status === 'conflict') {
        await this.setFinished(wl, FinishedReason.FailedToStart, r.conflict);
        this.recorder.event(pod, 'Warning', PodEventReason.FailedToStart, r.conflict);
        return;
      }
      if (r.status !== 'started') continue;
      this.ctx.metrics.podsUngated.inc();
      const created = parseTime(pod.metadata.creationTimestamp);
      if (created !== undefined) {
        this.ctx.metrics.podSchedulingGateRemoval.observe(
          { name: KueueSchedulingGate.Admission, cluster_queue: cq, is_group: String(group) },
          Math.max(0, this.now - created),
        );
      }
      this.recorder.event(pod, 'Normal', PodEventReason.Started, `Admitted by clusterQueue ${cq}`);
    }
  }

  /** Stops every started (ungated), running, not yet deleting pod. */
  private async stopStarted(wl: Workload, pods: readonly Pod[], reason: string, message: string): Promise<void> {
    const started = pods.filter((p) => !hasAdmissionGate(p) && !isDeleting(p) && !isTerminal(p));
    for (const p of started) await stopPod(this.ctx.store, this.ctx.clock, p, reason, message);
    if (started.length > 0) this.recorder.event(wl, 'Normal', PodEventReason.Stopped, message);
  }

  /** Evicted: stop what was started; once nothing runs, clear the reservation. */
  private async evict(wl: Workload, pods: readonly Pod[], singlePod: boolean): Promise<void> {
    const evicted = findCondition(wl, WorkloadCondition.Evicted)!;
    await this.stopStarted(wl, pods, StopReason.WorkloadEvicted, evicted.message ?? '');
    for (const p of pods) {
      const fresh = this.pods.get(namespaceOf(p), p.metadata.name);
      if (fresh && finalizable(fresh)) await finalizePod(this.ctx.store, fresh);
    }
    const running = pods.some((p) => {
      const fresh = this.pods.get(namespaceOf(p), p.metadata.name);
      return fresh !== undefined && isRunning(fresh);
    });
    if (running || !hasReservation(wl)) return;
    await this.writeStatus(wl, (w) => {
      if (!hasReservation(w)) return false;
      clearReservation(w, this.now);
      if (singlePod) {
        const r = findCondition(w, WorkloadCondition.Requeued);
        if (r?.status === 'True') setCondition(w, { ...r, status: 'False' }, this.now);
      }
    });
  }

  private async maintainPodsReady(wl: Workload, members: readonly Pod[], expected: number): Promise<void> {
    if (!this.ctx.config.waitForPodsReady) return;
    const ready = members.filter((p) => !hasAdmissionGate(p) && isRunningReadyOrSucceeded(p)).length;
    const state = { admitted: isTrue(wl, WorkloadCondition.Admitted), allReady: ready >= expected && expected > 0 };
    await this.writeStatus(wl, (w) => updatePodsReady(w, state, this.now));
  }

  private async writeWaitingForReplacement(wl: Workload, absent: number): Promise<void> {
    const evicted = isTrue(wl, WorkloadCondition.Evicted) ? findCondition(wl, WorkloadCondition.Evicted) : undefined;
    if (!hasReservation(wl) && !evicted) return;
    const W = WaitingForReplacementPods;
    await this.writeStatus(wl, (w) => {
      const old = findCondition(w, W.Type);
      if (absent > 0) {
        const reason = evicted?.reason ?? W.PodsFailedReason;
        const message = evicted?.message ?? W.PodsFailedMessage;
        if (old?.status === 'True' && old.reason === reason && old.message === message) return false;
        setCondition(w, { type: W.Type, status: 'True', reason, message }, this.now);
        return;
      }
      if (old?.status !== 'True') return false;
      setCondition(w, { type: W.Type, status: 'False', reason: W.PodsReadyReason, message: W.PodsReadyMessage }, this.now);
    });
  }

  private async writeReclaimable(wl: Workload, roles: ReadonlyMap<string, Role>): Promise<void> {
    const reclaimable = [...roles.values()]
      .map((r) => ({ name: r.podSet.name, count: r.pods.filter((p) => p.status?.phase === 'Succeeded').length }))
      .filter((r) => r.count > 0);
    const old = JSON.stringify(wl.status?.reclaimablePods ?? []);
    if (old === JSON.stringify(reclaimable)) return;
    await this.writeStatus(wl, (w) => {
      if (JSON.stringify(w.status?.reclaimablePods ?? []) === JSON.stringify(reclaimable)) return false;
      const { reclaimablePods: _, ...rest } = w.status ?? {};
      w.status = reclaimable.length > 0 ? { ...rest, reclaimablePods: reclaimable } : rest;
    });
  }

  private async setFinished(wl: Workload, reason: string, message: string): Promise<void> {
    await this.writeStatus(wl, (w) => {
      if (isFinished(w)) return false;
      setCondition(w, { type: WorkloadCondition.Finished, status: 'True', reason, message }, this.now);
    });
  }

  private async addOwnerReferences(wl: Workload, pods: readonly Pod[]): Promise<void> {
    const have = new Set((wl.metadata.ownerReferences ?? []).map((r) => r.uid));
    const missing = pods.filter((p) => p.metadata.uid && !have.has(p.metadata.uid));
    if (missing.length === 0) return;
    await retryOnConflict(this.ctx.store, 'Workload', wl.metadata.namespace, wl.metadata.name, (w) => {
      const refs = w.metadata.ownerReferences ?? [];
      const known = new Set(refs.map((r) => r.uid));
      const add = missing.filter((p) => !known.has(p.metadata.uid!));
      if (add.length === 0) return false;
      w.metadata.ownerReferences = [...refs, ...add.map((p) => ownerReference(p, false))];
    });
    this.recorder.event(wl, 'Normal', PodEventReason.OwnerReferencesAdded, `Added ${missing.length} owner reference(s)`);
  }

  private async deleteExcess(pods: readonly Pod[]): Promise<void> {
    for (const p of pods) {
      if (isDeleting(p)) {
        await finalizePod(this.ctx.store, p);
        continue;
      }
      await finalizePod(this.ctx.store, p);
      try {
        await this.ctx.store.delete('Pod', p.metadata.namespace, p.metadata.name, { uid: p.metadata.uid });
      } catch (e) {
        if (!isNotFound(e)) throw e;
      }
      this.ctx.metrics.podsRejected.inc();
      this.recorder.event(p, 'Normal', PodEventReason.ExcessPodDeleted, 'Excess pod deleted');
    }
  }

  /** Creates the Workload, with the labels of labelKeysToCopy its pods carry (which must agree). */
  private async createWorkload(wl: Workload, eventOn: Pod, pods: readonly Pod[]): Promise<void> {
    const copied = labelsToCopy(this.ctx.config.labelKeysToCopy, pods);
    if (!copied) {
      this.warnOnce(eventOn, PodEventReason.ErrWorkloadCompose, LABELS_MISMATCH_MESSAGE);
      return;
    }
    if (Object.keys(copied).length > 0) wl = { ...wl, metadata: { ...wl.metadata, labels: { ...copied, ...wl.metadata.labels } } };
    resolvePriority(wl, this.ctx.informers);
    try {
      await this.ctx.store.create(wl);
    } catch (e) {
      if (isAlreadyExists(e)) return;
      throw e;
    }
    this.recorder.event(eventOn, 'Normal', PodEventReason.CreatedWorkload, `Created Workload: ${namespaceOf(wl)}/${wl.metadata.name}`);
  }

  private async removeWorkloadFinalizer(wl: Workload): Promise<void> {
    if (!(wl.metadata.finalizers ?? []).includes(RESOURCE_IN_USE_FINALIZER)) return;
    await retryOnConflict(this.ctx.store, 'Workload', wl.metadata.namespace, wl.metadata.name, (w) => {
      if (w.metadata.uid !== wl.metadata.uid || !(w.metadata.finalizers ?? []).includes(RESOURCE_IN_USE_FINALIZER)) return false;
      w.metadata.finalizers = w.metadata.finalizers!.filter((f) => f !== RESOURCE_IN_USE_FINALIZER);
    });
  }

  /** Deletes a Workload whose pods are gone (the garbage collector's part) and releases it. */
  private async deleteWorkload(wl: Workload): Promise<void> {
    await this.removeWorkloadFinalizer(wl);
    if (isDeleting(wl)) return;
    try {
      await this.ctx.store.delete('Workload', wl.metadata.namespace, wl.metadata.name, { uid: wl.metadata.uid });
    } catch (e) {
      if (!isNotFound(e)) throw e;
    }
  }

  private async writeStatus(wl: Workload, change: (w: Workload) => boolean | void): Promise<void> {
    await retryOnConflict(
      this.ctx.store,
      'Workload',
      wl.metadata.namespace,
      wl.metadata.name,
      (w) => (w.metadata.uid !== wl.metadata.uid ? false : change(w)),
      { status: true },
    );
  }

  private warnOnce(pod: KObject, reason: string, message: string): void {
    const k = `${pod.metadata.uid ?? podRef(pod)}\n${reason}\n${message}`;
    if (this.warned.has(k)) return;
    this.warned.add(k);
    if (this.warned.size > 100_000) this.warned.clear();
    this.recorder.event(pod, 'Warning', reason, message);
  }
}

/**
 * A pod's role hash: the webhook's annotation (computed at creation, before the start
 * merged flavor selectors and tolerations into the spec), else computed now.
 */
function podRole(p: Pod): string | undefined {
  return p.metadata.annotations?.[PodGroupAnnotation.RoleHash] ?? roleHash(p, {}).hash;
}

function unknownSetMessage(p: Pod, sets: readonly PodGroupSet[]): string {
  const role = p.metadata.labels?.[POD_GROUP_ROLE_LABEL];
  const names = sets.map((s) => s.name).join(', ');
  return role === undefined
    ? `pod ${p.metadata.name} names no set of its group (label ${POD_GROUP_ROLE_LABEL}: one of ${names}): it stays gated`
    : `pod ${p.metadata.name} has ${POD_GROUP_ROLE_LABEL}=${role}, which is not a set of its group (${names}): it stays gated`;
}
