// The 'podgroup-status' controller: status of the three PodGroup CRDs, each as its peer's
// controller writes it (spec koordinator-gang §8; Volcano's scheduler session `jobStatus`).
// Keys: `<namespace>/<name>` of the PodGroup (one store kind, `PodGroup`, for all three
// API groups); pod and Workload events enqueue the PodGroups they concern.
//
// Koordinator (scheduling.sigs.k8s.io/v1alpha1), children = pods of the namespace labelled
// `pod-group.scheduling.sigs.k8s.io: <name>`, scheduled = children bound to a node;
// rules in order:
//   ""        -> Pending
//   Pending   -> PreScheduling when children >= minMember > 0 (occupiedBy set)
//   otherwise -> no children: Pending; else counts filled, scheduled < minMember:
//                Scheduling (scheduleStartTime set once) else Scheduled; Scheduled and
//                running+succeeded >= min: Running; failed > 0 and
//                failed+running+succeeded >= min: Failed; succeeded >= min: Finished
//   Finished and Failed are final; a group whose scheduling started more than 48 h after
//   its creation, fully scheduled and with nothing running, is left alone.
// scheduler-plugins (scheduling.x-k8s.io/v1alpha1), pods = pods labelled
// `scheduling.x-k8s.io/pod-group: <name>` in every namespace (as the peer lists them):
//   Finished / Failed final; Scheduling or Pending with nothing running and scheduling
//   started more than 48 h after creation -> skipped (Warning `Timeout`);
//   ""        -> Pending
//   Pending   -> Scheduling when pods >= minMember (occupiedBy set)
//   otherwise -> counts filled; pods < min: Pending; running+succeeded < min: Scheduling,
//                else Running; failed > 0 and failed+running+succeeded >= min: Failed;
//                succeeded >= min: Finished.
// Volcano (scheduling.volcano.sh/v1beta1), members = pods of the namespace annotated
// `scheduling.k8s.io/group-name: <name>`:
//   Pending -> Inqueue when the PodGroup's Workload (owned by it, or by its controller, the
//   Volcano Job) holds a quota reservation (Volcano's enqueue action);
//   allocated = members bound and not finished + Succeeded ones; allocated >= minMember
//   (and at least one member) -> Running, and Completed when every allocated member has
//   succeeded; otherwise Pending unless Inqueue. Completed is final.
//   running / succeeded / failed from the members' phases.
// occupiedBy: the first member's (by name) owner references as sorted `ns/ownerName`
// joined by `,`. Terminal pods count (the peers' unit tests see them; their scheduler
// informers filter them, which makes Finished/Failed unreachable there).
//
// Writes are coalesced: a status that changes nothing is not written; one whose only change
// is in the counters (scheduled, running, succeeded, failed) waits until `podBatchMs` has
// passed since the PodGroup's last write, and then carries every pod event of that time in
// one write (Volcano writes a session's counts once a session, every second). A change of
// phase or any other field is written at once. A 500-pod gang going Running is a handful of
// status writes, not one per pod event.

import { GangApiVersion, GangLabel, PodGroupPhase, type PodGroup } from '../api/gang.ts';
import type { Pod, Workload } from '../api/objects.ts';
import { parseTime } from '../api/time.ts';
import { VolcanoAnnotation, VolcanoApiVersion, type VolcanoPodGroup } from '../api/volcano-objects.ts';
import { compareStrings } from '../api/values.ts';
import { namespaceOf } from '../integrations/workload-name.ts';
import { nowTimestamp } from '../runtime/clock.ts';
import type { EventRecorder } from '../runtime/events.ts';
import type { Informer } from '../runtime/informer.ts';
import type { ControllerContext, Reconciler } from '../runtime/manager.ts';
import { objectKey, retryOnConflict, splitKey } from '../runtime/store.ts';
import type { WorkQueue } from '../runtime/work-queue.ts';
import type { TopoqueueConfig } from './config.ts';

export const PODGROUP_STATUS_CONTROLLER = 'podgroup-status';

export const VolcanoPodGroupPhase = {
  Pending: 'Pending',
  Inqueue: 'Inqueue',
  Running: 'Running',
  Unknown: 'Unknown',
  Completed: 'Completed',
} as const;

const SCHEDULE_TIMEOUT_SECONDS = 48 * 3600;
export const TIMEOUT_MESSAGE = 'schedule time longer than 48 hours';

const BY_KOORDINATOR = 'pg-koordinator';
const BY_SCHEDULER_PLUGINS = 'pg-scheduler-plugins';
const BY_VOLCANO = 'pg-volcano';
const BY_OWNER_UID = 'owner-uid';
const BY_NAME = 'pg-name';

type AnyPodGroup = PodGroup | VolcanoPodGroup;
type Status = NonNullable<PodGroup['status']>;

interface Counts {
  pods: number;
  scheduled: number;
  running: number;
  succeeded: number;
  failed: number;
}

function countPods(pods: readonly Pod[]): Counts {
  const c: Counts = { pods: pods.length, scheduled: 0, running: 0, succeeded: 0, failed: 0 };
  for (const p of pods) {
    if (p.spec?.nodeName) c.scheduled++;
    const phase = p.status?.phase;
    if (phase === 'Running') c.running++;
    else if (phase === 'Succeeded') c.succeeded++;
    else if (phase === 'Failed') c.failed++;
  }
  return c;
}

/** occupiedBy: the first pod's owners as sorted `ns/name`, joined by `,`; undefined without owners. */
export function occupiedBy(pods: readonly Pod[]): string | undefined {
  const first = [...pods].sort((a, b) => compareStrings(a.metadata.name, b.metadata.name))[0];
  const refs = first?.metadata.ownerReferences ?? [];
  if (refs.length === 0) return undefined;
  return refs
    .map((r) => `${namespaceOf(first!)}/${r.name}`)
    .sort()
    .join(',');
}

const scheduledLate = (pg: AnyPodGroup, status: Status): boolean => {
  const start = parseTime(typeof status.scheduleStartTime === 'string' ? status.scheduleStartTime : undefined);
  const created = parseTime(pg.metadata.creationTimestamp);
  return start !== undefined && created !== undefined && start - created > SCHEDULE_TIMEOUT_SECONDS;
};

/** Koordinator's next status, or undefined to leave it alone. `now` is an RFC 3339 time. */
export function koordinatorStatus(pg: PodGroup, pods: readonly Pod[], now: string): Status | undefined {
  const old: Status = { ...(pg.status ?? {}) };
  const phase = old.phase ?? '';
  const min = pg.spec?.minMember ?? 0;
  const c = countPods(pods);
  if (phase === PodGroupPhase.Finished || phase === PodGroupPhase.Failed) return undefined;
  if (c.scheduled === min && c.running === 0 && scheduledLate(pg, old)) return undefined;
  const next: Status = { ...old };
  if (phase === '') {
    next.phase = PodGroupPhase.Pending;
    return next;
  }
  if (phase === PodGroupPhase.Pending) {
    if (c.pods >= min && min > 0) {
      next.phase = PodGroupPhase.PreScheduling;
      const by = occupiedBy(pods);
      if (by !== undefined) next.occupiedBy = by;
    }
    return next;
  }
  if (c.pods === 0) {
    next.phase = PodGroupPhase.Pending;
    return next;
  }
  Object.assign(next, { scheduled: c.scheduled, running: c.running, succeeded: c.succeeded, failed: c.failed });
  if (c.scheduled < min) {
    next.phase = PodGroupPhase.Scheduling;
    if (!next.scheduleStartTime) next.scheduleStartTime = now;
  } else next.phase = PodGroupPhase.Scheduled;
  if (next.phase === PodGroupPhase.Scheduled && c.running + c.succeeded >= min) next.phase = PodGroupPhase.Running;
  if (c.failed > 0 && c.failed + c.running + c.succeeded >= min) next.phase = PodGroupPhase.Failed;
  if (c.succeeded >= min) next.phase = PodGroupPhase.Finished;
  return next;
}

/** scheduler-plugins' next status; `timedOut` when skipped by the 48 h rule. */
export function schedulerPluginsStatus(pg: PodGroup, pods: readonly Pod[]): { status?: Status; timedOut?: boolean } {
  const old: Status = { ...(pg.status ?? {}) };
  const phase = old.phase ?? '';
  const min = pg.spec?.minMember ?? 0;
  const c = countPods(pods);
  if (phase === PodGroupPhase.Finished || phase === PodGroupPhase.Failed) return {};
  if ((phase === PodGroupPhase.Scheduling || phase === PodGroupPhase.Pending) && c.running === 0 && scheduledLate(pg, old))
    return { timedOut: true };
  const next: Status = { ...old };
  if (phase === '') next.phase = PodGroupPhase.Pending;
  else if (phase === PodGroupPhase.Pending) {
    if (c.pods >= min) {
      next.phase = PodGroupPhase.Scheduling;
      const by = occupiedBy(pods);
      if (by !== undefined) next.occupiedBy = by;
    }
  } else {
    Object.assign(next, { running: c.running, succeeded: c.succeeded, failed: c.failed });
    if (c.pods < min) next.phase = PodGroupPhase.Pending;
    else next.phase = c.running + c.succeeded < min ? PodGroupPhase.Scheduling : PodGroupPhase.Running;
    if (c.failed > 0 && c.failed + c.running + c.succeeded >= min) next.phase = PodGroupPhase.Failed;
    if (c.succeeded >= min) next.phase = PodGroupPhase.Finished;
  }
  return { status: next };
}

/** Volcano's next status (see the header). */
export function volcanoStatus(
  pg: VolcanoPodGroup,
  pods: readonly Pod[],
  reserved: boolean,
): NonNullable<VolcanoPodGroup['status']> | undefined {
  const old = { ...(pg.status ?? {}) };
  const phase = old.phase ?? VolcanoPodGroupPhase.Pending;
  if (phase === VolcanoPodGroupPhase.Completed) return undefined;
  const min = pg.spec?.minMember ?? 0;
  const c = countPods(pods);
  const allocated = pods.filter(
    (p) => (p.spec?.nodeName && p.status?.phase !== 'Failed' && p.status?.phase !== 'Succeeded') || p.status?.phase === 'Succeeded',
  ).length;
  let next: string = phase === VolcanoPodGroupPhase.Pending && reserved ? VolcanoPodGroupPhase.Inqueue : phase;
  if (pods.length > 0 && allocated >= min) {
    next = c.succeeded === allocated && allocated > 0 ? VolcanoPodGroupPhase.Completed : VolcanoPodGroupPhase.Running;
  } else if (next !== VolcanoPodGroupPhase.Inqueue) next = VolcanoPodGroupPhase.Pending;
  return { ...old, phase: next, running: c.running, succeeded: c.succeeded, failed: c.failed };
}

const COUNTERS = new Set(['scheduled', 'running', 'succeeded', 'failed']);

/** The two statuses differ only in their pod counters (phase and every other field the same). */
export function countersOnly(old: Record<string, unknown>, next: Record<string, unknown>): boolean {
  for (const k of new Set([...Object.keys(old), ...Object.keys(next)]))
    if (!COUNTERS.has(k) && JSON.stringify(old[k]) !== JSON.stringify(next[k])) return false;
  return true;
}

export function podGroupStatusController(): Reconciler<TopoqueueConfig> {
  return new PodGroupStatusController();
}

class PodGroupStatusController implements Reconciler<TopoqueueConfig> {
  readonly name = PODGROUP_STATUS_CONTROLLER;
  private ctx!: ControllerContext<TopoqueueConfig>;
  private recorder!: EventRecorder;
  private podGroups!: Informer<AnyPodGroup>;
  private pods!: Informer<Pod>;
  private workloads!: Informer<Workload>;
  private queue!: WorkQueue;
  /** When each PodGroup's status was last written (clock ms), for coalescing counter-only changes. */
  private readonly lastWrite = new Map<string, number>();

  setup(ctx: ControllerContext<TopoqueueConfig>, queue: WorkQueue, recorder: EventRecorder): void {
    this.ctx = ctx;
    this.recorder = recorder;
    this.queue = queue;
    this.podGroups = ctx.informers.for<AnyPodGroup>('PodGroup');
    this.podGroups.addIndex(BY_NAME, (pg) => [pg.metadata.name]);
    this.podGroups.addIndex(BY_OWNER_UID, (pg) => (pg.metadata.ownerReferences ?? []).filter((r) => r.controller).map((r) => r.uid));
    this.pods = ctx.informers.for('Pod');
    const label = (p: Pod, key: string) => p.metadata.labels?.[key];
    this.pods.addIndex(BY_KOORDINATOR, (p) => (label(p, GangLabel.PodGroup) ? [`${namespaceOf(p)}/${label(p, GangLabel.PodGroup)}`] : []));
    this.pods.addIndex(BY_SCHEDULER_PLUGINS, (p) =>
      label(p, GangLabel.SchedulerPluginsPodGroup) ? [label(p, GangLabel.SchedulerPluginsPodGroup)!] : [],
    );
    const volcanoGroup = (p: Pod) => p.metadata.annotations?.[VolcanoAnnotation.PodGroupName];
    this.pods.addIndex(BY_VOLCANO, (p) => (volcanoGroup(p) ? [`${namespaceOf(p)}/${volcanoGroup(p)}`] : []));
    this.workloads = ctx.informers.for('Workload');
    this.workloads.addIndex(BY_OWNER_UID, (w) => (w.metadata.ownerReferences ?? []).map((r) => r.uid));

    const enqueueForPod = (p: Pod) => {
      const koord = label(p, GangLabel.PodGroup);
      if (koord) queue.add(`${namespaceOf(p)}/${koord}`);
      const sp = label(p, GangLabel.SchedulerPluginsPodGroup);
      if (sp) for (const pg of this.podGroups.byIndex(BY_NAME, sp)) queue.add(objectKey(pg));
      const v = volcanoGroup(p);
      if (v) queue.add(`${namespaceOf(p)}/${v}`);
    };
    this.pods.addHandler({ add: enqueueForPod, update: (o, p) => (enqueueForPod(o), enqueueForPod(p)), delete: enqueueForPod });
    const enqueueForWorkload = (w: Workload) => {
      for (const r of w.metadata.ownerReferences ?? []) {
        if (r.kind === 'PodGroup') queue.add(`${namespaceOf(w)}/${r.name}`);
        for (const pg of this.podGroups.byIndex(BY_OWNER_UID, r.uid)) queue.add(objectKey(pg));
      }
    };
    this.workloads.addHandler({ add: enqueueForWorkload, update: (_, w) => enqueueForWorkload(w), delete: enqueueForWorkload });
    this.podGroups.addHandler({
      add: (pg) => queue.add(objectKey(pg)),
      update: (_, pg) => queue.add(objectKey(pg)),
      delete: (pg) => this.lastWrite.delete(objectKey(pg)),
    });
  }

  async reconcile(key: string): Promise<void> {
    const pg = this.podGroups.get(key);
    if (!pg) return;
    const ns = namespaceOf(pg);
    let next: unknown;
    switch (pg.apiVersion) {
      case GangApiVersion.Koordinator:
        next = koordinatorStatus(pg as PodGroup, this.pods.byIndex(BY_KOORDINATOR, key), nowTimestamp(this.ctx.clock));
        break;
      case GangApiVersion.SchedulerPlugins: {
        const r = schedulerPluginsStatus(pg as PodGroup, this.pods.byIndex(BY_SCHEDULER_PLUGINS, pg.metadata.name));
        if (r.timedOut) this.recorder.event(pg, 'Warning', 'Timeout', TIMEOUT_MESSAGE);
        next = r.status;
        break;
      }
      case VolcanoApiVersion.PodGroup:
        next = volcanoStatus(pg as VolcanoPodGroup, this.pods.byIndex(BY_VOLCANO, key), this.reserved(pg));
        break;
      default:
        return;
    }
    if (next === undefined || JSON.stringify(next) === JSON.stringify(pg.status ?? {})) return;
    if (countersOnly(pg.status ?? {}, next as Record<string, unknown>)) {
      const wait = (this.lastWrite.get(key) ?? -Infinity) + this.ctx.config.podBatchMs - this.ctx.clock.now();
      if (wait > 0) {
        this.queue.addAfter(key, wait);
        return;
      }
    }
    const { namespace, name } = splitKey(key);
    await retryOnConflict<AnyPodGroup>(
      this.ctx.store,
      'PodGroup',
      namespace ?? ns,
      name,
      (o) => {
        if (o.metadata.uid !== pg.metadata.uid) return false;
        o.status = next as AnyPodGroup['status'];
      },
      { status: true },
    );
    this.lastWrite.set(key, this.ctx.clock.now());
  }

  /** The PodGroup's Workload (owned by it, or by its controller) holds a quota reservation. */
  private reserved(pg: AnyPodGroup): boolean {
    const uids = [pg.metadata.uid, ...(pg.metadata.ownerReferences ?? []).filter((r) => r.controller).map((r) => r.uid)].filter(
      (u): u is string => Boolean(u),
    );
    return uids.some((uid) => this.workloads.byIndex(BY_OWNER_UID, uid).some((w) => w.status?.admission !== undefined));
  }
}
