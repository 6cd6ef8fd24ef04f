// The job reconciler ('job'): Kueue's ReconcileGenericJob over the job side of each framework
// record (integrations/registry.ts). Keys are `Kind/namespace/name` of the job (a JobSet's Jobs and a HyperJob's
// Volcano Jobs are reconciled through their parent). It watches the job kinds, Workloads
// (controller owner -> job) and Pods (controller chain -> job, batched by podBatchMs), and
// registers the job webhooks (job-webhook.ts).
//
// Per job: the job gone or deleting -> drop the resource-in-use finalizer of its Workloads
// and leave them to garbage collection; unmanaged -> nothing. Otherwise its Workloads are
// built with the integration and paired with the existing ones (by owner; a
// `kueue.x-k8s.io/prebuilt-workload-name` label adopts that Workload; LWS: one per group,
// by name; extra ones are deleted), and each pair is synced in Kueue's order:
//   1. Workload not matching the job's PodSets -> stop the job, delete the Workload
//      (a prebuilt one is finished OutOfSync instead);
//   2. Workload finished -> drop its finalizer; Workload deleting -> stop, drop the finalizer;
//   3. job finished -> Workload Finished=True (Succeeded/Failed + the job's message);
//   4. no Workload -> once no pod is active, create it;
//   6. waitForPodsReady -> keep the PodsReady condition from the pods;
//   7. Evicted=True -> stop the job; once no pod is active, clear the reservation;
//   8. admitted -> start the job (merge the PodSet info, unsuspend / lift the pods' gate);
//      a conflicting key finishes the Workload (FailedToStart), as Kueue does;
//      running and not admitted -> stop.
// Step 5 (reclaimablePods) is not done.

import { KueueLabel, KueueAnnotation, KueueRuntimeKey, KueueSchedulingGate } from '../api/keys.ts';
import type { Condition, KObject, Pod, PodSet, ResourceFlavor, Workload } from '../api/objects.ts';
import { parseTime } from '../api/time.ts';
import { compareStrings } from '../api/values.ts';
import { WorkloadCondition, findCondition, isTrue, setCondition } from '../admission/conditions.ts';
import { PodsReadyReason, type PodsState, clearReservation, podsReadyCondition, updatePodsReady } from '../admission/pods-ready.ts';
import { nowSeconds } from '../runtime/clock.ts';
import type { EventRecorder } from '../runtime/events.ts';
import type { Informer } from '../runtime/informer.ts';
import { resolvePriority } from './workload-priority.ts';
import type { ControllerContext, Reconciler } from '../runtime/manager.ts';
import { InvalidError, isAlreadyExists, isConflict, isNotFound, type RetryResult, retryOnConflict } from '../runtime/store.ts';
import type { WorkQueue } from '../runtime/work-queue.ts';
import { type TopoqueueConfig, frameworkEnabled } from './config.ts';
import { labelsToCopy } from '../integrations/workload-name.ts';
import { type JobWebhookDeps, cacheLookup, jobManaged, registerJobWebhooks } from './job-webhook.ts';
import {
  type AdapterView,
  type Finish,
  type PodGatedAdapter,
  type PodSetInfo,
  type SuspendingAdapter,
  PodSetInfoConflict,
  MissingFlavorError,
  hasGate,
  isActivePod,
  isReadyOrSucceeded,
  podSetInfoOfTemplate,
  podSetInfos,
  restorePodSetInfo,
  runningPodSets,
  samePodSets,
  canonicalJson,
  templateMeta,
  mergePodSetInfo,
  type JobAdapter,
} from '../integrations/framework.ts';
import type { ToWorkloadsResult } from '../integrations/integration.ts';
import { JOB_KINDS, type Lookup, adapterFor, controllerOf, jobKey, managedRoot } from '../integrations/registry.ts';
import { isTerminal } from '../api/objects.ts';

/** Index of Workloads, Jobs and Pods by their controller: `Kind/namespace/name`. */
const OWNER_INDEX = 'job-reconciler/controller';
/** Index of jobs by the prebuilt Workload they name: `namespace/name`. */
const PREBUILT_INDEX = 'job-reconciler/prebuilt';

export const JobReason = {
  CreatedWorkload: 'CreatedWorkload',
  DeletedWorkload: 'DeletedWorkload',
  FinishedWorkload: 'FinishedWorkload',
  Started: 'Started',
  Stopped: 'Stopped',
  ErrWorkloadCompose: 'ErrWorkloadCompose',
  FailedToStart: 'FailedToStart',
} as const;

export const FinishedReason = {
  Succeeded: 'Succeeded',
  Failed: 'Failed',
  OutOfSync: 'OutOfSync',
  FailedToStart: 'FailedToStart',
} as const;

export const StopMessage = {
  NoMatchingWorkload: 'No matching Workload; restoring pod templates according to existent Workload',
  WorkloadDeleted: 'Workload is deleted',
  NotAdmitted: 'Not admitted by cluster queue',
  MissingWorkload: 'missing workload',
} as const;

export const OUT_OF_SYNC_MESSAGE = 'The prebuilt workload is out of sync with its user job';

const nsName = (o: KObject): string => `${o.metadata.namespace ?? 'default'}/${o.metadata.name}`;

function ownerIndex(o: KObject): string[] {
  const ref = controllerOf(o);
  return ref ? [`${ref.kind}/${o.metadata.namespace ?? 'default'}/${ref.name}`] : [];
}

/** The prebuilt Workload a job names (label, or the annotation of the same key, which wins). */
export function prebuiltWorkloadName(o: KObject): string | undefined {
  return (
    o.metadata.annotations?.[KueueAnnotation.PrebuiltWorkloadName] || o.metadata.labels?.[KueueAnnotation.PrebuiltWorkloadName] || undefined
  );
}

function prebuiltIndex(o: KObject): string[] {
  const name = prebuiltWorkloadName(o);
  return name ? [`${o.metadata.namespace ?? 'default'}/${name}`] : [];
}

function parseKey(key: string): { kind: string; namespace: string; name: string } {
  const [kind = '', namespace = '', ...rest] = key.split('/');
  return { kind, namespace, name: rest.join('/') };
}

const hasReservation = (w: Workload): boolean => w.status?.admission !== undefined || isTrue(w, WorkloadCondition.QuotaReserved);
const isAdmitted = (w: Workload): boolean => w.status?.admission !== undefined && isTrue(w, WorkloadCondition.Admitted);

interface OwnedPod {
  pod: Pod;
  /** The pod's controller: the job or one of its child Jobs. */
  owner: KObject;
}

/** One Workload of a job and what the generic sync asks of the job for it. */
interface Unit {
  job: KObject;
  expected: Workload;
  existing: Workload | undefined;
  prebuilt: boolean;
  pods: Pod[];
  matches(w: Workload): boolean;
  finished(): Finish | undefined;
  /** Runs pods (unsuspended, or pods past the admission gate). */
  running(): boolean;
  needsStart(): boolean;
  /** Returns whether anything was started. Throws PodSetInfoConflict. */
  start(w: Workload, infos: PodSetInfo[]): Promise<boolean>;
  stop(w: Workload | undefined, message: string): Promise<void>;
}

class JobReconciler implements Reconciler<TopoqueueConfig> {
  readonly name = 'job';
  private ctx!: ControllerContext<TopoqueueConfig>;
  private queue!: WorkQueue;
  private recorder!: EventRecorder;
  private deps!: JobWebhookDeps;
  private lookup!: Lookup;
  private workloads!: Informer<Workload>;
  private pods!: Informer<Pod>;
  private flavors!: Informer<ResourceFlavor>;
  private readonly view: AdapterView = { childJobs: (owner) => this.childJobs(owner) };
  /**
   * Keys whose last reconcile ran to the end (no error, no Event) and that nothing the
   * reconcile reads has touched since: the job, its child jobs and pods, its Workloads
   * (jobReadsChange), the flavors, namespaces, queues and priority classes. Reconciling one
   * again reads what the last run read, so it writes nothing: it returns at once. The key
   * is still enqueued and processed (the manager's order of every controller's work, and
   * with it every decision, stays as it was); the scheduler's pending rewrites, each an
   * update of the Workload, thus cost a lookup instead of a rebuild and comparison of the
   * job's PodSets. Writes, timers and the clock play no part: a reconcile's writes touch
   * its key again, and what it decides does not depend on the time.
   */
  private readonly settled = new Set<string>();
  private eventsRecorded = 0;

  setup(ctx: ControllerContext<TopoqueueConfig>, queue: WorkQueue, recorder: EventRecorder): void {
    this.ctx = ctx;
    this.queue = queue;
    this.recorder = {
      event: (obj, type, reason, message) => {
        this.eventsRecorded++;
        recorder.event(obj, type, reason, message);
      },
    };
    this.deps = { config: ctx.config, informers: ctx.informers };
    this.lookup = cacheLookup(ctx.informers);
    for (const kind of JOB_KINDS) {
      const inf = ctx.informers.for(kind);
      inf.addIndex(OWNER_INDEX, ownerIndex);
      inf.addIndex(PREBUILT_INDEX, prebuiltIndex);
      const on = (o: KObject) => this.enqueueJob(o);
      inf.addHandler({ add: on, update: (_, o) => on(o), delete: on });
    }
    this.workloads = ctx.informers.for('Workload');
    this.workloads.addIndex(OWNER_INDEX, ownerIndex);
    const onWorkload = (w: Workload) => this.enqueueWorkload(w);
    this.workloads.addHandler({ add: onWorkload, update: (old, w) => this.enqueueWorkload(w, jobReadsChange(old, w)), delete: onWorkload });
    this.pods = ctx.informers.for('Pod');
    this.pods.addIndex(OWNER_INDEX, ownerIndex);
    const onPod = (p: Pod) => this.enqueuePod(p);
    this.pods.addHandler({ add: onPod, update: (_, p) => onPod(p), delete: onPod });
    this.flavors = ctx.informers.for('ResourceFlavor');
    // What every job's reconcile may read besides its own objects: any change unsettles them all.
    const unsettle = () => this.settled.clear();
    for (const kind of ['ResourceFlavor', 'Namespace', 'LocalQueue', 'WorkloadPriorityClass', 'PriorityClass']) {
      ctx.informers.for(kind).addHandler({ add: unsettle, update: unsettle, delete: unsettle });
    }
    registerJobWebhooks(ctx.store, this.deps);
  }

  // -------------------------------------------------------------------------------------
  // Event handlers: look and enqueue
  // -------------------------------------------------------------------------------------

  /** Enqueues a key; `touched`: something its reconcile reads changed (see `settled`). */
  private add(key: string, touched = true): void {
    if (touched) this.settled.delete(key);
    this.queue.add(key);
  }

  private enqueueJob(o: KObject): void {
    const ref = controllerOf(o);
    if (ref && adapterFor(ref)) this.add(`${ref.kind}/${o.metadata.namespace ?? 'default'}/${ref.name}`);
    else if (adapterFor(o)) this.add(jobKey(o));
  }

  private enqueueWorkload(w: Workload, touched = true): void {
    const ref = controllerOf(w);
    const ns = w.metadata.namespace ?? 'default';
    if (ref && JOB_KINDS.includes(ref.kind)) this.add(`${ref.kind}/${ns}/${ref.name}`, touched);
    for (const kind of JOB_KINDS) {
      for (const job of this.ctx.informers.for(kind).byIndex(PREBUILT_INDEX, `${ns}/${w.metadata.name}`)) this.add(jobKey(job), touched);
    }
  }

  private enqueuePod(p: Pod): void {
    const r = managedRoot(p, this.lookup);
    if (!r) return;
    // Unsettled now, processed after the batch: a reconcile of the key before then reads the pod.
    const key = jobKey(r.root);
    this.settled.delete(key);
    this.queue.addAfter(key, this.ctx.config.podBatchMs);
  }

  // -------------------------------------------------------------------------------------
  // Reconcile
  // -------------------------------------------------------------------------------------

  async reconcile(key: string): Promise<void> {
    if (this.settled.has(key)) return;
    this.settled.add(key);
    const events = this.eventsRecorded;
    try {
      await this.reconcileJob(key);
    } catch (e) {
      this.settled.delete(key);
      throw e;
    }
    if (this.eventsRecorded !== events) this.settled.delete(key);
  }

  private async reconcileJob(key: string): Promise<void> {
    const { kind, namespace, name } = parseKey(key);
    if (!JOB_KINDS.includes(kind)) return;
    const job = this.ctx.informers.for(kind).get(namespace, name);
    if (!job || job.metadata.deletionTimestamp) {
      await this.releaseWorkloads(key, undefined);
      if (!job) this.settled.delete(key);
      return;
    }
    const adapter = adapterFor(job);
    if (!adapter || !frameworkEnabled(this.ctx.config, adapter.integration.name) || !jobManaged(this.deps, job)) return;
    await this.releaseWorkloads(key, job.metadata.uid);

    const built = buildWorkloads(adapter, job);
    if (built.errors.length > 0) {
      this.recorder.event(job, 'Warning', JobReason.ErrWorkloadCompose, built.errors.map((e) => e.message).join('; '));
      return;
    }
    const owned = this.workloads.byIndex(OWNER_INDEX, key).filter((w) => controllerOf(w)?.uid === job.metadata.uid);
    if (adapter.mode === 'suspend') await this.reconcileSuspending(job, adapter, built.workloads[0]!, owned);
    else await this.reconcilePodGated(job, adapter, built.workloads, owned);
  }

  private async reconcileSuspending(job: KObject, adapter: SuspendingAdapter, expected: Workload, owned: Workload[]): Promise<void> {
    const prebuilt = prebuiltWorkloadName(job);
    let existing: Workload | undefined;
    if (prebuilt) {
      existing = this.workloads.get(job.metadata.namespace, prebuilt);
      const ref = existing ? controllerOf(existing) : undefined;
      if (existing && !ref) {
        await this.adopt(job, existing);
        return;
      }
      if (existing && ref?.uid !== job.metadata.uid) {
        this.recorder.event(
          job,
          'Warning',
          JobReason.ErrWorkloadCompose,
          `prebuilt Workload ${nsName(existing)} is controlled by ${ref!.kind} ${ref!.name}`,
        );
        return;
      }
    } else {
      existing = this.pick(job, adapter, expected, owned);
      for (const w of owned) if (w !== existing) await this.deleteWorkload(job, w);
    }
    const pods = this.podsOf(job).map((p) => p.pod);
    await this.sync(this.suspendingUnit(job, adapter, expected, existing, pods, prebuilt !== undefined));
  }

  /** The owned Workload to keep: one that matches, else the one with the expected name, else the oldest (then by name). */
  private pick(job: KObject, adapter: SuspendingAdapter, expected: Workload, owned: Workload[]): Workload | undefined {
    if (owned.length <= 1) return owned[0];
    const sorted = [...owned].sort(
      (a, b) =>
        (parseTime(a.metadata.creationTimestamp) ?? 0) - (parseTime(b.metadata.creationTimestamp) ?? 0) ||
        compareStrings(a.metadata.name, b.metadata.name),
    );
    const unit = this.suspendingUnit(job, adapter, expected, undefined, [], false);
    return sorted.find((w) => unit.matches(w)) ?? sorted.find((w) => w.metadata.name === expected.metadata.name) ?? sorted[0];
  }

  private async reconcilePodGated(job: KObject, adapter: PodGatedAdapter, expected: Workload[], owned: Workload[]): Promise<void> {
    const placed = new Map<string, Pod[]>();
    for (const { pod, owner } of this.podsOf(job)) {
      const at = adapter.placePod(job, pod, owner);
      if (!at) continue;
      const list = placed.get(at.workload) ?? [];
      list.push(pod);
      placed.set(at.workload, list);
    }
    const wanted = new Set(expected.map((w) => w.metadata.name));
    let failure: unknown;
    const guard = async (fn: () => Promise<void>) => {
      try {
        await fn();
      } catch (e) {
        failure ??= e;
      }
    };
    for (const w of owned) {
      if (wanted.has(w.metadata.name)) continue;
      await guard(async () => {
        await this.deletePods(job, placed.get(w.metadata.name) ?? [], StopMessage.NoMatchingWorkload);
        await this.deleteWorkload(job, w);
      });
    }
    for (const e of expected) {
      const existing = owned.find((w) => w.metadata.name === e.metadata.name);
      await guard(() => this.sync(this.podGatedUnit(job, adapter, e, existing, placed.get(e.metadata.name) ?? [])));
    }
    if (failure !== undefined) throw failure;
  }

  // -------------------------------------------------------------------------------------
  // The generic sync of one job/Workload pair (Kueue's order; see the header)
  // -------------------------------------------------------------------------------------

  private async sync(u: Unit): Promise<void> {
    const w = u.existing;
    if (w && !u.matches(w)) {
      if (u.prebuilt) {
        await this.writeFinished(w, FinishedReason.OutOfSync, OUT_OF_SYNC_MESSAGE);
        return;
      }
      await u.stop(w, StopMessage.NoMatchingWorkload);
      await this.deleteWorkload(u.job, w);
      return;
    }
    if (w && isTrue(w, WorkloadCondition.Finished)) {
      if (await this.removeFinalizer(w)) {
        this.recorder.event(u.job, 'Normal', JobReason.FinishedWorkload, `Workload '${nsName(w)}' is declared finished`);
      }
      return;
    }
    if (w && w.metadata.deletionTimestamp) {
      await u.stop(w, StopMessage.WorkloadDeleted);
      await this.removeFinalizer(w);
      return;
    }
    const finish = u.finished();
    if (finish) {
      if (w) await this.writeFinished(w, finish.success ? FinishedReason.Succeeded : FinishedReason.Failed, finish.message);
      return;
    }
    if (!w) {
      if (u.prebuilt) await u.stop(undefined, StopMessage.MissingWorkload);
      else if (!u.pods.some(isActivePod)) await this.createWorkload(u.job, u.expected);
      return;
    }
    const evicted = isTrue(w, WorkloadCondition.Evicted);
    // Evicted, stopped and no pod active: the reservation is cleared now. With waitForPodsReady
    // that is one status write with the PodsReady condition (which the next reconcile would
    // otherwise move again, to WaitForStart, at the same instant).
    let cleared = false;
    if (this.ctx.config.waitForPodsReady) {
      const clear = evicted && !u.running() && !u.pods.some(isActivePod) && hasReservation(w);
      cleared = (await this.updatePodsReady(w, u.pods, clear)) && clear;
    }
    if (evicted) {
      if (u.running()) await u.stop(w, findCondition(w, WorkloadCondition.Evicted)?.message || 'The workload was evicted');
      if (!cleared && !u.pods.some(isActivePod) && hasReservation(w)) await this.clearReservation(w);
      return;
    }
    if (isAdmitted(w)) {
      if (!u.needsStart()) return;
      const infos = podSetInfos(w, (name) => this.flavors.get(undefined, name));
      try {
        if (await u.start(w, infos)) {
          this.recorder.event(u.job, 'Normal', JobReason.Started, `Admitted by clusterQueue ${w.status!.admission!.clusterQueue ?? ''}`);
        }
      } catch (e) {
        if (!(e instanceof PodSetInfoConflict)) throw e;
        this.recorder.event(u.job, 'Warning', JobReason.FailedToStart, e.message);
        await this.writeFinished(w, FinishedReason.FailedToStart, e.message);
      }
      return;
    }
    if (u.running()) await u.stop(w, StopMessage.NotAdmitted);
  }

  // -------------------------------------------------------------------------------------
  // Units: a suspending job, a group of gated pods
  // -------------------------------------------------------------------------------------

  private suspendingUnit(
    job: KObject,
    adapter: SuspendingAdapter,
    expected: Workload,
    existing: Workload | undefined,
    pods: Pod[],
    prebuilt: boolean,
  ): Unit {
    const store = this.ctx.store;
    const ns = job.metadata.namespace ?? 'default';
    const updateJob = (change: (j: KObject) => boolean) =>
      retryOnConflict<KObject>(
        store,
        job.kind,
        ns,
        job.metadata.name,
        (j) => j.metadata.uid === job.metadata.uid && j.apiVersion === job.apiVersion && change(j),
      );
    return {
      job,
      expected,
      existing,
      prebuilt,
      pods,
      matches: (w) => {
        const jobPodSets = expected.spec.podSets;
        if (!hasReservation(w)) return sameSpecPodSets(jobPodSets, w.spec.podSets);
        const running = this.runningVerdict(jobPodSets, w);
        if (running === RunningVerdict.MissingFlavor) return true; // cannot tell yet: never destroy on a missing flavor
        if (running === RunningVerdict.Same) return true;
        if (running === RunningVerdict.Unknown) return sameSpecPodSets(jobPodSets, w.spec.podSets);
        return adapter.isSuspended(job) && sameSpecPodSets(jobPodSets, w.spec.podSets);
      },
      finished: () => adapter.finished(job, this.view),
      running: () => !adapter.isSuspended(job),
      needsStart: () => adapter.isSuspended(job),
      start: async (w, infos) => {
        const counted = new Set(w.spec.podSets.filter((ps) => ps.minCount !== undefined).map((ps) => ps.name));
        const r = await updateJob((j) => {
          if (!adapter.isSuspended(j)) return false;
          const templates = adapter.templates(j);
          for (const info of infos) {
            const t = templates.get(info.name);
            if (!t) throw new Error(`${job.kind} ${nsName(job)} has no pod template for PodSet ${info.name}`);
            mergePodSetInfo(templateMeta(t), t.spec, info);
            if (counted.has(info.name)) adapter.setCount?.(j, info.name, info.count);
          }
          adapter.setSuspended(j, false);
          return true;
        });
        return r.outcome === 'written';
      },
      stop: async (w, message) => {
        const r = await updateJob((j) => {
          if (adapter.isSuspended(j)) return false;
          adapter.setSuspended(j, true);
          if (w) {
            const templates = adapter.templates(j);
            for (const ps of w.spec.podSets) {
              const t = templates.get(ps.name);
              if (!t) continue;
              restorePodSetInfo(templateMeta(t), t.spec, podSetInfoOfTemplate(ps));
              if (ps.minCount !== undefined) adapter.setCount?.(j, ps.name, ps.count);
            }
          }
          return true;
        });
        if (r.outcome === 'written') this.recorder.event(job, 'Normal', JobReason.Stopped, message);
      },
    };
  }

  /**
   * Whether a reserved Workload's running PodSets (its PodSets with the PodSet info merged in:
   * Kueue's expectedRunningPodSets) are the job's. Remembered per Workload spec (shared by
   * the store across status writes) while the job's PodSets, the Workload's name and
   * admission and the ResourceFlavors it names are the same: the merge clones every pod
   * template and the comparison writes each as canonical JSON, and the job is reconciled
   * about a dozen times over its life.
   */
  private runningVerdict(jobPodSets: readonly PodSet[], w: Workload): RunningVerdict {
    const admission = w.status?.admission;
    const hit = runningVerdicts.get(w.spec);
    const same =
      hit !== undefined &&
      hit.name === w.metadata.name &&
      jsonEqual(hit.admission, admission) &&
      hit.flavors.every(([name, rf]) => this.flavors.get(undefined, name) === rf);
    if (same && hit.jobPodSets === jobPodSets) return hit.verdict;
    if (same && hit.verdict !== RunningVerdict.MissingFlavor) {
      // Only the job's PodSets are new (the job was started or stopped): the running PodSets are the same.
      const verdict = verdictOf(jobPodSets, hit.running);
      runningVerdicts.set(w.spec, { ...hit, jobPodSets, verdict });
      return verdict;
    }
    const flavors: [string, ResourceFlavor | undefined][] = [];
    let verdict: RunningVerdict;
    let running: PodSet[] | undefined;
    try {
      const infos = podSetInfos(w, (name) => {
        const rf = this.flavors.get(undefined, name);
        flavors.push([name, rf]);
        return rf;
      });
      running = runningPodSets(w, infos);
      verdict = verdictOf(jobPodSets, running);
    } catch (e) {
      if (!(e instanceof MissingFlavorError)) throw e;
      verdict = RunningVerdict.MissingFlavor;
    }
    runningVerdicts.set(w.spec, { jobPodSets, name: w.metadata.name, admission, flavors, running, verdict });
    return verdict;
  }

  private podGatedUnit(job: KObject, adapter: PodGatedAdapter, expected: Workload, existing: Workload | undefined, pods: Pod[]): Unit {
    const gated = () => pods.filter((p) => hasGate(p, KueueSchedulingGate.Admission) && !isTerminal(p) && !p.metadata.deletionTimestamp);
    return {
      job,
      expected,
      existing,
      prebuilt: false,
      pods,
      matches: (w) => samePodSets(expected.spec.podSets, w.spec.podSets),
      finished: () => adapter.finished(job, this.view),
      running: () => pods.some(isActivePod),
      needsStart: () => gated().length > 0,
      start: (w, infos) => this.ungatePods(job, w, infos, pods, gated()),
      stop: (_w, message) => this.deletePods(job, pods, message),
    };
  }

  /**
   * Lifts the admission gate of gated pods, at most the admitted count per PodSet (counting
   * pods past the gate that have not finished), in name order, merging the PodSet info into
   * each. A partially admitted PodSet (a Volcano Job admitted with its minimum) thus runs its
   * other pods in the places of those that succeeded, as a partially admitted batch Job runs
   * its completions with the admitted parallelism; the reservation stays until the job ends.
   */
  private async ungatePods(job: KObject, w: Workload, infos: PodSetInfo[], pods: Pod[], gated: Pod[]): Promise<boolean> {
    const byPodSet = new Map(infos.map((i) => [i.name, i]));
    const podSetOf = (p: Pod) => p.metadata.labels?.[KueueLabel.PodSet];
    const now = this.ctx.clock.now();
    const cq = w.status?.admission?.clusterQueue ?? '';
    const isGroup = w.metadata.annotations?.[KueueRuntimeKey.IsGroupWorkload] === 'true' ? 'true' : 'false';
    let started = false;
    for (const info of infos) {
      const through = pods.filter(
        (p) =>
          podSetOf(p) === info.name &&
          !hasGate(p, KueueSchedulingGate.Admission) &&
          !p.metadata.deletionTimestamp &&
          p.status?.phase !== 'Failed' &&
          p.status?.phase !== 'Succeeded',
      ).length;
      const candidates = gated.filter((p) => podSetOf(p) === info.name).sort((a, b) => compareStrings(a.metadata.name, b.metadata.name));
      const room = Math.max(0, info.count - through);
      for (const pod of candidates.slice(0, room)) {
        const { object: after } = await retryOnConflict(this.ctx.store, 'Pod', pod.metadata.namespace, pod.metadata.name, (p) => {
          if (p.metadata.uid !== pod.metadata.uid || !hasGate(p, KueueSchedulingGate.Admission) || p.metadata.deletionTimestamp)
            return false;
          mergePodSetInfo(p.metadata, p.spec, byPodSet.get(info.name)!);
          const keepTopology = info.schedulingGates.some((g) => g.name === KueueSchedulingGate.Topology);
          p.spec.schedulingGates = (p.spec.schedulingGates ?? []).filter(
            (g) => g.name !== KueueSchedulingGate.Admission && (keepTopology || g.name !== KueueSchedulingGate.Topology),
          );
          return true;
        });
        if (after && !hasGate(after, KueueSchedulingGate.Admission)) {
          started = true;
          const created = parseTime(pod.metadata.creationTimestamp);
          if (created !== undefined) {
            this.ctx.metrics.podSchedulingGateRemoval.observe(
              { name: KueueSchedulingGate.Admission, cluster_queue: cq, is_group: isGroup },
              Math.max(0, now / 1000 - created),
            );
          }
        }
      }
    }
    return started;
  }

  /** Deletes the pods that run or may run (ungated, not finished, not deleting). */
  private async deletePods(job: KObject, pods: Pod[], message: string): Promise<void> {
    let deleted = 0;
    for (const p of pods) {
      if (!isActivePod(p)) continue;
      try {
        await this.ctx.store.delete('Pod', p.metadata.namespace, p.metadata.name, { uid: p.metadata.uid });
        deleted++;
      } catch (e) {
        if (!isNotFound(e) && !isConflict(e)) throw e;
      }
    }
    if (deleted > 0) this.recorder.event(job, 'Normal', JobReason.Stopped, message);
  }

  // -------------------------------------------------------------------------------------
  // Lookups
  // -------------------------------------------------------------------------------------

  private childJobs(owner: KObject): KObject[] {
    return this.ctx.informers
      .for('Job')
      .byIndex(OWNER_INDEX, jobKey(owner))
      .filter((j) => controllerOf(j)?.uid === owner.metadata.uid)
      .sort((a, b) => compareStrings(a.metadata.name, b.metadata.name));
  }

  /** The job's pods and those of its child Jobs, with their controller. */
  private podsOf(job: KObject): OwnedPod[] {
    const out: OwnedPod[] = [];
    for (const owner of [job, ...this.childJobs(job)]) {
      for (const pod of this.pods.byIndex(OWNER_INDEX, jobKey(owner))) {
        if (controllerOf(pod)?.uid === owner.metadata.uid) out.push({ pod, owner });
      }
    }
    return out.sort((a, b) => compareStrings(a.pod.metadata.name, b.pod.metadata.name));
  }

  // -------------------------------------------------------------------------------------
  // Writes
  // -------------------------------------------------------------------------------------

  private async createWorkload(job: KObject, wl: Workload): Promise<void> {
    resolvePriority(wl, this.ctx.informers);
    const copied = labelsToCopy(this.ctx.config.labelKeysToCopy, [job]) ?? {};
    if (Object.keys(copied).length > 0) wl = { ...wl, metadata: { ...wl.metadata, labels: { ...copied, ...wl.metadata.labels } } };
    if (this.ctx.config.waitForPodsReady) {
      // The PodsReady condition the next reconcile would write at once (not admitted: False), created with the Workload.
      const ready: Workload = { ...wl, status: { ...wl.status, conditions: [...(wl.status?.conditions ?? [])] } };
      if (updatePodsReady(ready, { admitted: false, allReady: false }, nowSeconds(this.ctx.clock))) wl = ready;
    }
    try {
      const created = await this.ctx.store.create(wl);
      this.recorder.event(job, 'Normal', JobReason.CreatedWorkload, `Created Workload: ${nsName(created)}`);
    } catch (e) {
      if (isAlreadyExists(e)) return;
      if (e instanceof InvalidError) {
        this.recorder.event(job, 'Warning', JobReason.ErrWorkloadCompose, e.message);
        return;
      }
      throw e;
    }
  }

  private async deleteWorkload(job: KObject, w: Workload): Promise<void> {
    await this.removeFinalizer(w);
    try {
      await this.ctx.store.delete('Workload', w.metadata.namespace, w.metadata.name, { uid: w.metadata.uid });
    } catch (e) {
      if (!isNotFound(e)) throw e;
      return;
    }
    this.recorder.event(job, 'Normal', JobReason.DeletedWorkload, `Deleted not matching Workload: ${nsName(w)}`);
  }

  private async adopt(job: KObject, w: Workload): Promise<void> {
    const ref = { apiVersion: job.apiVersion, kind: job.kind, name: job.metadata.name, uid: job.metadata.uid ?? '', controller: true };
    await retryOnConflict(this.ctx.store, 'Workload', w.metadata.namespace, w.metadata.name, (x) => {
      if (x.metadata.uid !== w.metadata.uid || controllerOf(x)) return false;
      x.metadata.ownerReferences = [...(x.metadata.ownerReferences ?? []), ref];
      return true;
    });
  }

  /** Drops the resource-in-use finalizer; true when it was there. */
  private async removeFinalizer(w: Workload): Promise<boolean> {
    const has = (x: Workload) => (x.metadata.finalizers ?? []).includes(KueueRuntimeKey.ResourceInUseFinalizer);
    if (!has(w)) return false;
    try {
      // Only metadata changes: the rest of the stored Workload is passed on as it is, so the
      // new version shares its (frozen) spec instead of a copy (no deep copy of the pod
      // templates; what is remembered per spec stays remembered).
      for (let attempt = 1; ; attempt++) {
        const x = await this.ctx.store.get('Workload', w.metadata.namespace, w.metadata.name);
        if (!x || x.metadata.uid !== w.metadata.uid || !has(x)) return false;
        const finalizers = x.metadata.finalizers!.filter((f) => f !== KueueRuntimeKey.ResourceInUseFinalizer);
        try {
          await this.ctx.store.update<Workload>({ ...x, metadata: { ...x.metadata, finalizers } });
          return true;
        } catch (e) {
          if (!isConflict(e) || attempt >= UPDATE_ATTEMPTS) throw e;
        }
      }
    } catch (e) {
      // Gone between the read and the write: the finalizer went with it.
      if (!isNotFound(e)) throw e;
      return true;
    }
  }

  /** Workloads of a job that is gone (or of an earlier job of that name) lose their finalizer; garbage collection deletes them. */
  private async releaseWorkloads(key: string, keepUid: string | undefined): Promise<void> {
    for (const w of this.workloads.byIndex(OWNER_INDEX, key)) {
      if (keepUid !== undefined && controllerOf(w)?.uid === keepUid) continue;
      await this.removeFinalizer(w);
    }
  }

  private writeStatus(w: Workload, change: (x: Workload) => boolean): Promise<RetryResult<Workload>> {
    return retryOnConflict(
      this.ctx.store,
      'Workload',
      w.metadata.namespace,
      w.metadata.name,
      (x) => x.metadata.uid === w.metadata.uid && change(x),
      { status: true },
    );
  }

  private async writeFinished(w: Workload, reason: string, message: string): Promise<void> {
    const now = nowSeconds(this.ctx.clock);
    await this.writeStatus(w, (x) => {
      if (isTrue(x, WorkloadCondition.Finished)) return false;
      setCondition(x, { type: WorkloadCondition.Finished, status: 'True', reason, message }, now);
      return true;
    });
  }

  private async clearReservation(w: Workload): Promise<void> {
    const now = nowSeconds(this.ctx.clock);
    await this.writeStatus(w, (x) => {
      if (!isTrue(x, WorkloadCondition.Evicted) || !hasReservation(x)) return false;
      this.clearReservationOf(x, now);
      return true;
    });
  }

  /**
   * Clears an evicted Workload's reservation; with waitForPodsReady, PodsReady then reads as
   * for a Workload not admitted (False, WaitForStart) in the same write: the job is stopped
   * (a stopped job does not finish), so the next reconcile would write exactly that, at the
   * same instant, as its own write's echo.
   */
  private clearReservationOf(x: Workload, now: number): void {
    clearReservation(x, now);
    if (this.ctx.config.waitForPodsReady) updatePodsReady(x, { admitted: false, allReady: false }, now);
  }

  /**
   * Keeps the PodsReady condition from the pods. `clear`: the Workload is evicted and its job
   * stopped, so its reservation is cleared in the same write (clearReservation), with
   * PodsReady then as for a Workload not admitted. Returns whether the reservation was cleared.
   */
  private async updatePodsReady(w: Workload, pods: Pod[], clear = false): Promise<boolean> {
    const counts = new Map((w.status?.admission?.podSetAssignments ?? []).map((a) => [a.name, a.count]));
    const expected = w.spec.podSets.reduce((n, ps) => n + (counts.get(ps.name) ?? ps.count), 0);
    const state: PodsState = { admitted: isAdmitted(w), allReady: pods.filter(isReadyOrSucceeded).length >= expected };
    const now = nowSeconds(this.ctx.clock);
    if (!clear && !podsReadyCondition(w, state, now)) return false;
    let started = false;
    let cleared = false;
    const written = await this.writeStatus(w, (x) => {
      const s: PodsState = { ...state, admitted: isAdmitted(x) };
      const c = podsReadyCondition(x, s, now);
      started = c?.status === 'True' && c.reason === PodsReadyReason.Started;
      let changed = updatePodsReady(x, s, now);
      started &&= changed;
      cleared = clear && !started && isTrue(x, WorkloadCondition.Evicted) && hasReservation(x);
      if (cleared) {
        this.clearReservationOf(x, now);
        changed = true;
      }
      return changed;
    });
    if (started && written.outcome === 'written') this.observeReady(written.object, now);
    return cleared && written.outcome === 'written';
  }

  /** kueue_ready_wait_time_seconds and kueue_admitted_until_ready_wait_time_seconds, on the first start. */
  private observeReady(w: Workload, now: number): void {
    const cq = w.status?.admission?.clusterQueue ?? '';
    const created = parseTime(w.metadata.creationTimestamp);
    if (created !== undefined) this.ctx.metrics.readyWaitTime.observe({ cluster_queue: cq }, Math.max(0, now - created));
    const admitted = parseTime(findCondition(w, WorkloadCondition.Admitted)?.lastTransitionTime);
    if (admitted !== undefined) this.ctx.metrics.admittedUntilReadyWaitTime.observe({ cluster_queue: cq }, Math.max(0, now - admitted));
  }
}

/** Attempts of a write that meets conflicts (as retryOnConflict). */
const UPDATE_ATTEMPTS = 5;

const RunningVerdict = { Same: 0, Differs: 1, Unknown: 2, MissingFlavor: 3 } as const;
type RunningVerdict = (typeof RunningVerdict)[keyof typeof RunningVerdict];

/** runningVerdict's memo, by Workload spec. */
const runningVerdicts = new WeakMap<
  object,
  {
    jobPodSets: readonly PodSet[];
    name: string;
    admission: unknown;
    flavors: [string, ResourceFlavor | undefined][];
    /** The running PodSets (undefined: they cannot be built). */
    running: PodSet[] | undefined;
    verdict: RunningVerdict;
  }
>();

function verdictOf(jobPodSets: readonly PodSet[], running: readonly PodSet[] | undefined): RunningVerdict {
  if (running === undefined) return RunningVerdict.Unknown;
  return samePodSets(jobPodSets, running, podSpecText) ? RunningVerdict.Same : RunningVerdict.Differs;
}

/**
 * canonicalJson of a pod spec, remembered per object: the job's built PodSets, the running
 * PodSets of the memo above and stored Workloads' (frozen) PodSets are not changed once
 * made, and each is compared on many reconciles.
 */
const podSpecTexts = new WeakMap<object, string>();

function podSpecText(spec: object): string {
  let t = podSpecTexts.get(spec);
  if (t === undefined) {
    t = canonicalJson(spec);
    podSpecTexts.set(spec, t);
  }
  return t;
}

/** samePodSets of the job's PodSets and a Workload's spec PodSets, remembered while both are the same objects. */
const samePodSetsMemo = new WeakMap<object, { b: readonly PodSet[]; same: boolean }>();

function sameSpecPodSets(a: readonly PodSet[], b: readonly PodSet[]): boolean {
  const hit = samePodSetsMemo.get(a);
  if (hit && hit.b === b) return hit.same;
  const same = samePodSets(a, b, podSpecText);
  samePodSetsMemo.set(a, { b, same });
  return same;
}

/** The job reconciler (name 'job'); its setup registers the job webhooks. */
export function jobReconciler(): Reconciler<TopoqueueConfig> {
  return new JobReconciler();
}

/**
 * The Workloads an integration builds for a job, remembered while the job's spec, labels and
 * annotations are the same objects (the store shares unchanged parts between versions, so a
 * status write does not rebuild them).
 */
const built = new WeakMap<object, { labels: unknown; annotations: unknown; uid: unknown; result: ToWorkloadsResult }>();

function buildWorkloads(adapter: JobAdapter, job: KObject): ToWorkloadsResult {
  const spec = (job as { spec?: object }).spec;
  const hit = spec ? built.get(spec) : undefined;
  if (hit && hit.labels === job.metadata.labels && hit.annotations === job.metadata.annotations && hit.uid === job.metadata.uid)
    return hit.result;
  const result = adapter.integration.toWorkloads(job, { where: { object: `${job.kind}/${nsName(job)}` } });
  if (spec) built.set(spec, { labels: job.metadata.labels, annotations: job.metadata.annotations, uid: job.metadata.uid, result });
  return result;
}

/** Equal as JSON data (plain objects, arrays, primitives); a shared (frozen) part is equal at once. */
function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!jsonEqual(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  const x = a as Record<string, unknown>;
  const y = b as Record<string, unknown>;
  let n = 0;
  for (const k in x) {
    if (x[k] === undefined) continue;
    n++;
    if (!jsonEqual(x[k], y[k])) return false;
  }
  for (const k in y) if (y[k] !== undefined) n--;
  return n === 0;
}

/**
 * Whether a Workload update changes anything the job reconciler reads of it: its spec, its
 * metadata (owners, finalizers, deletion, labels and annotations), any status field, and
 * every condition except QuotaReserved while it stays False (the scheduler's pending reason
 * and message, rewritten as the count in "N more needed" moves: the reconciler only asks
 * whether QuotaReserved is True).
 */
export function jobReadsChange(a: Workload, b: Workload): boolean {
  if (!jsonEqual(a.spec, b.spec)) return true;
  const ma = a.metadata as unknown as Record<string, unknown>;
  const mb = b.metadata as unknown as Record<string, unknown>;
  for (const k in ma) if (k !== 'resourceVersion' && k !== 'managedFields' && !jsonEqual(ma[k], mb[k])) return true;
  for (const k in mb) if (!(k in ma) && mb[k] !== undefined) return true;
  const sa = (a.status ?? {}) as Record<string, unknown>;
  const sb = (b.status ?? {}) as Record<string, unknown>;
  for (const k in sa) if (k !== 'conditions' && !jsonEqual(sa[k], sb[k])) return true;
  for (const k in sb) if (k !== 'conditions' && !(k in sa) && sb[k] !== undefined) return true;
  // Conditions are read by type: compared by type, QuotaReserved other than True left out (absent reads the same).
  const ca = readConditions(a);
  const cb = readConditions(b);
  if (ca.length !== cb.length) return true;
  for (const x of ca) {
    const y = cb.find((c) => c.type === x.type);
    if (!y || !jsonEqual(x, y)) return true;
  }
  return false;
}

function readConditions(w: Workload): readonly Condition[] {
  const cs = w.status?.conditions ?? [];
  return cs.some((c) => c.type === WorkloadCondition.QuotaReserved && c.status !== 'True')
    ? cs.filter((c) => c.type !== WorkloadCondition.QuotaReserved || c.status === 'True')
    : cs;
}
