// What happened during a simulation, recorded from the store's events as it happens (the
// report is built from it at the end, report.ts):
//
// 1. entries: the submitted objects, grouped as the report lists them (a Job, a JobSet, a
//    plain-Pod group by group name, a gang by gang name or PodGroup...);
// 2. Workloads: mapped to an entry through their owner references (walked up through
//    intermediate owners, e.g. a HyperJob's Volcano Jobs), with the times of their
//    transitions: first admission, all pods started, finished, evictions;
// 3. pods: the last node each pod of a Workload was bound to, its phase and the labels
//    that give its rank;
// 4. usage over time: per ClusterQueue (quota used by admitted Workloads, admitted and
//    pending counts) and for the whole cluster (requests of bound pods against the
//    allocatable of Ready nodes), one point per instant at which they changed;
// 5. per Workload, every admission, its pending reasons as they changed and, for a
//    preemption, the preemptor (from the UID its Preempted condition names); per entry, the
//    Events about its objects folded by kind, type and reason; PodGroup status (all three
//    API groups) and HyperNode `nodeCount` as the controllers write them, when they change.
// Histories are capped (MAX_*) so that a big run stays small: what is beyond is counted.
//
// Times are milliseconds of the clock; the report turns them into seconds from the start.

import { preemptorOfMessage } from '../admission/preemption.ts';
import { CoreApiVersion, KueueApiVersion } from '../api/api-versions.ts';
import { GangLabel, type PodGroup } from '../api/gang.ts';
import { KueueAnnotation, KueueLabel } from '../api/keys.ts';
import type { Admission, KObject, Node, Pod, Workload } from '../api/objects.ts';
import { isTerminal } from '../api/objects.ts';
import type { ClusterQueue, LocalQueue } from '../api/queues.ts';
import { parseResourceList, type ResourceAmounts } from '../api/resources.ts';
import { compareStrings } from '../api/values.ts';
import type { HyperNode } from '../api/volcano-objects.ts';
import { podGangId } from '../integrations/gang-pods.ts';
import { VolcanoAnnotation } from '../api/volcano-objects.ts';
import type { Clock } from '../runtime/clock.ts';
import type { EventSink, RecordedEvent } from '../runtime/events.ts';
import { Informer } from '../runtime/informer.ts';
import type { MemoryStore } from '../runtime/memory-store.ts';
import { objectKey, sharedKey } from '../runtime/store.ts';
import { StringTable } from '../runtime/strings.ts';
import { usageOf } from './invariants.ts';
import { PodRequestReader } from './pod-requests.ts';
import { listAndWatch } from './watch.ts';

export interface EntryRecord {
  /** Grouping key, e.g. `Job/ns/name`, `Pod group/ns/group`. */
  key: string;
  /** The submitted object's kind; `Pod group` for a Kueue plain-pod group, `Gang` for pods of a Koordinator annotation gang. */
  kind: string;
  apiVersion: string;
  namespace: string;
  name: string;
  /** LocalQueue (label kueue.x-k8s.io/queue-name). */
  queue?: string;
  /** Clock ms of the first object's creation. */
  submittedAt?: number;
  /**
   * Objects submitted for it (`Kind/ns/name`), the entry's own object (the one its kind,
   * namespace and name name) as OWN_OBJECT: read them with `entryObjects`.
   */
  objects: string[];
  /** Workload keys, in the order they appeared. */
  workloads: string[];
  /** Why the store refused (one of) its objects. */
  errors: string[];
  /** When it was to be submitted (ms; objects not yet created at the end). */
  scheduledAt?: number;
  /** Events about its objects, folded by kind, type and reason, in the order first seen; at most MAX_EVENT_FOLDS. */
  events?: EventFold[];
  /** Events of further kinds, types and reasons, not folded. */
  eventsDropped: number;
}

export interface EventFold {
  /** The kind of the object the events are about. */
  kind: string;
  type: string;
  reason: string;
  count: number;
  first: number;
  last: number;
  /** The last one's. */
  message: string;
}

export interface EvictionRecord {
  at: number;
  reason: string;
  message: string;
  /** A preemption: the preemptor Workload's key (`namespace/name`), when it can be told. */
  preemptor?: string;
}

/** Caps of the per-object histories (beyond them, the rest is counted). */
export const MAX_PENDING_REASONS = 32;
export const MAX_EVENT_FOLDS = 16;
export const MAX_PODGROUP_POINTS = 32;

/** PodGroup status as the controllers write it (fields not written are absent). */
export interface PodGroupPoint {
  at: number;
  phase?: string;
  scheduled?: number;
  running?: number;
  succeeded?: number;
  failed?: number;
  occupiedBy?: string;
  scheduleStartTime?: string;
}

export interface PodGroupRecord {
  key: string;
  name: string;
  apiVersion: string;
  entry?: string;
  /** One point per instant its status changed; the first MAX_PODGROUP_POINTS - 1 and the last. */
  history: PodGroupPoint[];
  dropped: number;
  last: KObject;
}

export interface HyperNodeRecord {
  name: string;
  tier: number | null;
  /** `status.nodeCount` whenever it changed (absent: null). */
  history: { at: number; nodeCount: number | null }[];
  deleted: boolean;
}

export interface WorkloadRecord {
  key: string;
  entry?: string;
  createdAt: number;
  admittedAt?: number;
  /** Every pod admitted had started (Running or later) since the latest admission. */
  startedAt?: number;
  finishedAt?: number;
  evictions: EvictionRecord[];
  /** The latest non-empty admission (kept after the Workload is evicted or finishes). */
  admission?: Admission;
  /** Every admission (a transition to holding one), with when. */
  admissions: { at: number; admission: Admission }[];
  /** `QuotaReserved=False` reason and message, each distinct consecutive one with when it started; the first MAX_PENDING_REASONS. */
  pendingReasons: { at: number; reason: string }[];
  pendingDropped: number;
  /** The current pending reason (undefined while admitted: the next one starts afresh). */
  lastPending?: string;
  /** The last version seen (the final one, or the one before deletion). */
  last: Workload;
  deleted: boolean;
  /** Pods that started since the latest admission. */
  started: Set<string>;
  admittedCount: number;
  pods: Set<string>;
}

export interface PodRecord {
  key: string;
  name: string;
  workload: string;
  podSet?: string;
  node?: string;
  phase: string;
  labels: Record<string, string>;
  offset?: string;
}

export interface SeriesPoint {
  at: number;
  values: Record<string, number>;
}

export interface QueuePoint {
  at: number;
  admitted: number;
  pending: number;
  usage: Record<string, number>;
}

const POD_SLOT_ONLY: ResourceAmounts = { pods: 1 };
const cond = (w: Workload, type: string) => (w.status?.conditions ?? []).find((c) => c.type === type);
const isTrue = (w: Workload, type: string) => cond(w, type)?.status === 'True';
// Joined, not concatenated: kept as keys and in lists for the whole run, a flat string is a
// third of the bytes of a concatenation's tree.
const refOf = (o: KObject) =>
  // (String(): a refused input may lack a kind or name; join would write nothing for it.)
  o.metadata.namespace
    ? [String(o.kind), o.metadata.namespace, String(o.metadata.name)].join('/')
    : [String(o.kind), String(o.metadata.name)].join('/');

/** The report entry a submitted object belongs to: its own, or its group's. */
export function entryIdentity(o: KObject): { key: string; kind: string; name: string } {
  const ns = o.metadata.namespace ?? 'default';
  if (o.kind === 'Pod' && o.apiVersion === CoreApiVersion.V1) {
    const group = o.metadata.labels?.[KueueLabel.PodGroupName];
    if (group !== undefined) return { key: `Pod group/${ns}/${group}`, kind: 'Pod group', name: group };
    // Members of a Volcano PodGroup join its entry (pods a Volcano Job makes are not submitted).
    const volcano = o.metadata.annotations?.[VolcanoAnnotation.PodGroupName];
    if (volcano !== undefined && !o.metadata.ownerReferences?.some((r) => r.controller))
      return { key: `PodGroup/${ns}/${volcano}`, kind: 'PodGroup', name: volcano };
    const gang = podGangId(o);
    if (gang !== undefined) {
      const name = gang.slice(gang.indexOf('/') + 1);
      const crd = o.metadata.labels?.[GangLabel.PodGroup] ?? o.metadata.labels?.[GangLabel.SchedulerPluginsPodGroup];
      // Pods of a PodGroup object join its entry; annotation gangs have none.
      return crd !== undefined
        ? { key: `PodGroup/${ns}/${crd}`, kind: 'PodGroup', name: crd }
        : { key: `Gang/${gang}`, kind: 'Gang', name };
    }
  }
  if (o.kind === 'PodGroup') return { key: `PodGroup/${ns}/${o.metadata.name}`, kind: 'PodGroup', name: o.metadata.name };
  // Joined, not concatenated: the key is kept (map key, each record's entry) for the whole run.
  return { key: [String(o.kind), String(o.apiVersion), ns, String(o.metadata.name)].join('/'), kind: o.kind, name: o.metadata.name };
}

export class Timeline {
  readonly entries = new Map<string, EntryRecord>();
  readonly workloads = new Map<string, WorkloadRecord>();
  readonly pods = new Map<string, PodRecord>();
  readonly queueSeries = new Map<string, QueuePoint[]>();
  readonly utilization: SeriesPoint[] = [];
  readonly capacity: SeriesPoint[] = [];
  /** Finished (or Failed) entries, for the progress line. */
  finishedEntries = 0;

  readonly podGroups = new Map<string, PodGroupRecord>();
  readonly hyperNodes = new Map<string, HyperNodeRecord>();

  private readonly uidToEntry = new Map<string, string>();
  private readonly uidToWorkload = new Map<string, string>();
  /** `Kind/ns/name` of objects whose entry is known (submitted ones, owned ones found by a walk). */
  private readonly refToEntry = new Map<string, string>();
  private stopEvents: (() => void) | undefined;
  /** Workloads whose owner is not (yet) a submitted object. */
  private readonly unmapped = new Set<string>();
  private readonly informers: Informer[] = [];
  private stopPods: (() => void) | undefined;
  private stopWorkloads: (() => void) | undefined;
  private readonly used = new Map<string, number>();
  private readonly cap = new Map<string, number>();
  private readonly nodeCap = new Map<string, ResourceAmounts>();
  private readonly podUse = new Map<string, ResourceAmounts>();
  private readonly requests = new PodRequestReader({ countPodSlot: true });
  private readonly cqUsage = new Map<string, Map<string, number>>();
  private readonly cqAdmitted = new Map<string, Set<string>>();
  private readonly cqPending = new Map<string, Set<string>>();
  private readonly lqToCq = new Map<string, string>();
  private readonly workloadCq = new Map<string, { cq?: string; admitted: boolean }>();
  private readonly cqStatesAdmitted = new Map<string, { cq?: string; admitted: boolean }>();
  private readonly cqStatesPending = new Map<string, { cq?: string; admitted: boolean }>();
  private readonly finishedSet = new Set<string>();
  /** Quota each admitted Workload counts for, as last added to its ClusterQueue. */
  private readonly lastUsage = new Map<string, Map<string, number>>();
  private readonly strings = new StringTable();

  constructor(
    private readonly store: MemoryStore,
    private readonly clock: Clock,
  ) {
    const nodes = this.informer<Node>('Node');
    nodes.addHandler({ add: (n) => this.onNode(n), update: (_, n) => this.onNode(n), delete: (n) => this.onNode(n, true) });
    const cqs = this.informer<ClusterQueue>('ClusterQueue');
    cqs.addHandler({ add: (cq) => this.touchQueue(cq.metadata.name) });
    const lqs = this.informer<LocalQueue>('LocalQueue');
    lqs.addHandler({
      add: (lq) => this.onLocalQueue(lq),
      update: (_, lq) => this.onLocalQueue(lq),
    });
    const pgs = this.informer<PodGroup>('PodGroup');
    pgs.addHandler({ add: (g) => this.onPodGroup(g), update: (_, g) => this.onPodGroup(g) });
    const hns = this.informer<HyperNode>('HyperNode');
    hns.addHandler({ add: (h) => this.onHyperNode(h), update: (_, h) => this.onHyperNode(h), delete: (h) => this.onHyperNode(h, true) });
  }

  async start(): Promise<void> {
    for (const i of this.informers) await i.start();
    // Workloads without an informer's cache: the record keeps the last version, and a
    // cache (a map entry and a key per Workload) would only be a second index of the store.
    this.stopWorkloads = await listAndWatch<Workload>(this.store, 'Workload', {
      add: (w) => this.onWorkload(undefined, w),
      update: (o, w) => this.onWorkload(o, w),
      delete: (w) => this.onWorkload(w, undefined),
    });
    this.stopPods = await listAndWatch<Pod>(this.store, 'Pod', {
      add: (p) => this.onPod(p),
      update: (_, p) => this.onPod(p),
      delete: (p) => this.onPod(p, true),
    });
  }

  stop(): void {
    for (const i of this.informers) i.stop();
    this.stopWorkloads?.();
    this.stopPods?.();
    this.stopEvents?.();
  }

  /** PodGroups by entry key (those not mapped yet are tried again), each list by name. */
  podGroupsByEntry(): Map<string, PodGroupRecord[]> {
    const out = new Map<string, PodGroupRecord[]>();
    for (const rec of this.podGroups.values()) {
      rec.entry ??= this.findEntry(rec.last);
      if (rec.entry === undefined) continue;
      let list = out.get(rec.entry);
      if (!list) out.set(rec.entry, (list = []));
      list.push(rec);
    }
    for (const list of out.values()) list.sort((a, b) => compareStrings(a.key, b.key));
    return out;
  }

  /** Folds the events recorded from now on into the entries of the objects they are about. */
  watchEvents(sink: EventSink): void {
    this.stopEvents = sink.onEvent((e) => this.onEvent(e));
  }

  /** Records a submission: the object as the store returned it (uid set), or the refusal. */
  submitted(input: KObject, created: KObject | undefined, error?: string): void {
    const e = this.entryFor(input);
    const ref = refOf(input);
    e.objects = withObject(e, ref);
    // (A Workload's events find its entry through its record: entryOfRef never looks it up here.)
    if (input.kind !== 'Workload') this.refToEntry.set(ref, e.key);
    if (created) {
      e.submittedAt ??= this.clock.now();
      if (created.metadata.uid) {
        this.uidToEntry.set(created.metadata.uid, e.key);
      }
      // A Workload seen before its owner was submitted is mapped now.
      for (const key of this.unmapped) {
        const w = this.workloads.get(key);
        if (w && !w.deleted) this.mapWorkload(w, w.last);
      }
    }
    if (error !== undefined) e.errors = appended(e.errors, `${refOf(input)}: ${error}`);
  }

  /** An object the input check refused (never submitted): its entry is reported with why. */
  refusedInput(input: KObject, errors: readonly string[]): void {
    const e = this.entryFor(input);
    e.objects = withObject(e, refOf(input));
    for (const err of errors) e.errors = appended(e.errors, err);
  }

  /** An object to be submitted later (known from the start: the report lists it even if the run stops first). */
  scheduled(input: KObject, atMs: number): void {
    const e = this.entryFor(input);
    e.scheduledAt ??= atMs;
  }

  private entryFor(o: KObject): EntryRecord {
    const id = entryIdentity(o);
    let e = this.entries.get(id.key);
    if (!e) {
      // Every field in the literal (one shape for every entry, no out-of-object properties),
      // the empty lists shared until a first item is appended.
      e = {
        key: id.key,
        kind: id.kind,
        apiVersion: o.apiVersion,
        namespace: o.metadata.namespace ?? 'default',
        name: id.name,
        queue: undefined,
        submittedAt: undefined,
        objects: none(),
        workloads: none(),
        errors: none(),
        scheduledAt: undefined,
        events: undefined,
        eventsDropped: 0,
      };
      this.entries.set(id.key, e);
    }
    e.queue ??= o.metadata.labels?.[KueueLabel.QueueName];
    return e;
  }

  /** One copy of a string seen again and again (event kinds, pending reasons); bounded. */
  private intern(s: string): string {
    return this.strings.intern(s);
  }

  private informer<T extends KObject>(kind: string): Informer<T> {
    const i = new Informer<T>(this.store, kind);
    this.informers.push(i as unknown as Informer);
    return i;
  }

  // ---------------------------------------------------------------------------------------
  // Workloads

  private onWorkload(old: Workload | undefined, w: Workload | undefined): void {
    const now = this.clock.now();
    const cur = (w ?? old)!;
    const key = objectKey(cur);
    let rec = this.workloads.get(key);
    if (!rec || (w && rec.last.metadata.uid !== w.metadata.uid)) {
      // Pods seen before their Workload (a placeholder without uid) are kept; a recreated Workload starts afresh.
      const pods = rec && rec.last.metadata.uid === undefined ? rec.pods : NO_PODS;
      rec = workloadRecord(key, now, cur, false, pods);
      this.workloads.set(key, rec);
      if (cur.metadata.uid) this.uidToWorkload.set(cur.metadata.uid, key);
    }
    if (!w) {
      rec.deleted = true;
      this.unmapped.delete(key);
      this.updateQueues(key, undefined);
      this.updateFinished(rec);
      return;
    }
    rec.last = w;
    if (rec.entry === undefined) this.mapWorkload(rec, w);
    const adm = w.status?.admission;
    const had = old?.status?.admission;
    if (adm) {
      // The same admission in a later version of the Workload: keep only the newest copy
      // (the store's), not one per version recorded.
      const lastAdmission = rec.admissions[rec.admissions.length - 1];
      if (had && lastAdmission && lastAdmission.admission !== adm && sameValue(lastAdmission.admission, adm)) lastAdmission.admission = adm;
      rec.admission = adm;
      rec.lastPending = undefined;
      if (!had) {
        rec.admissions = appended(rec.admissions, { at: now, admission: adm });
        rec.admittedAt ??= now;
        rec.started = rec.pods.size > 0 ? new Set() : NO_PODS;
        rec.admittedCount = (adm.podSetAssignments ?? []).reduce(
          (n, p) => n + (p.count ?? w.spec.podSets.find((ps) => ps.name === p.name)?.count ?? 0),
          0,
        );
        // Pods already running count (a restart of the recorder; or pods faster than the status write).
        for (const pk of rec.pods) {
          const p = this.pods.get(pk);
          if (p && (p.phase === 'Running' || p.phase === 'Succeeded')) rec.started.add(pk);
        }
        this.checkStarted(rec, now);
      }
    } else {
      const qr = cond(w, 'QuotaReserved');
      if (qr?.status === 'False' && qr.message) {
        // Interned: the same reason recurs across Workloads and over time.
        const text = this.intern(qr.reason ? [qr.reason, qr.message].join(': ') : qr.message);
        if (text !== rec.lastPending) {
          rec.lastPending = text;
          if (rec.pendingReasons.length < MAX_PENDING_REASONS) rec.pendingReasons = appended(rec.pendingReasons, { at: now, reason: text });
          else rec.pendingDropped++;
        }
      }
    }
    const ev = cond(w, 'Evicted');
    const oldEv = old ? cond(old, 'Evicted') : undefined;
    if (
      ev?.status === 'True' &&
      (oldEv?.status !== 'True' || oldEv.reason !== ev.reason || oldEv.lastTransitionTime !== ev.lastTransitionTime)
    ) {
      const record: EvictionRecord = { at: now, reason: ev.reason ?? '', message: ev.message ?? '' };
      if (ev.reason === 'Preempted') {
        const by = preemptorOfMessage(cond(w, 'Preempted')?.message ?? record.message);
        const preemptor = by === undefined ? undefined : (this.uidToWorkload.get(by) ?? (this.workloads.has(by) ? by : undefined));
        if (preemptor !== undefined) record.preemptor = preemptor;
      }
      rec.evictions = appended(rec.evictions, record);
    }
    if (isTrue(w, 'Finished') && rec.finishedAt === undefined) rec.finishedAt = now;
    this.updateQueues(key, w);
    this.updateFinished(rec);
  }

  /** Finds the entry of a Workload through its owner references (walking up owners the store still has). */
  private mapWorkload(rec: WorkloadRecord, w: Workload): void {
    const entry = this.findEntry(w);
    if (entry === undefined) {
      this.unmapped.add(rec.key);
      return;
    }
    this.unmapped.delete(rec.key);
    rec.entry = entry;
    const e = this.entries.get(entry)!;
    if (!e.workloads.includes(rec.key)) e.workloads = appended(e.workloads, rec.key);
  }

  /** The entry of an object: its own uid's, or its owners' (walking up owners the store still has). */
  private findEntry(o0: KObject): string | undefined {
    let entry = this.uidToEntry.get(o0.metadata.uid ?? '');
    const seen = new Set<string>();
    let frontier: KObject[] = [o0];
    for (let depth = 0; entry === undefined && depth < 4 && frontier.length > 0; depth++) {
      const next: KObject[] = [];
      for (const o of frontier) {
        for (const r of o.metadata.ownerReferences ?? []) {
          if (seen.has(r.uid)) continue;
          seen.add(r.uid);
          const hit = this.uidToEntry.get(r.uid);
          if (hit !== undefined) {
            entry = hit;
            break;
          }
          const owner = this.store.getSync(r.kind, o.metadata.namespace, r.name);
          if (owner && owner.metadata.uid === r.uid) next.push(owner);
        }
        if (entry !== undefined) break;
      }
      frontier = next;
    }
    return entry;
  }

  private checkStarted(rec: WorkloadRecord, now: number): void {
    if (rec.startedAt === undefined && rec.admittedCount > 0 && rec.started.size >= rec.admittedCount && rec.last.status?.admission)
      rec.startedAt = now;
  }

  private updateFinished(rec: WorkloadRecord): void {
    if (rec.entry === undefined) return;
    const e = this.entries.get(rec.entry)!;
    // As the report folds them: the Workloads still there, else the last one seen.
    const recs = e.workloads.map((k) => this.workloads.get(k)!);
    const live = recs.filter((r) => !r.deleted);
    const current = live.length > 0 ? live : recs.slice(-1);
    const done = current.length > 0 && current.every((r) => isTrue(r.last, 'Finished'));
    if (done && !this.finishedSet.has(e.key)) {
      this.finishedSet.add(e.key);
      this.finishedEntries++;
    } else if (!done && this.finishedSet.has(e.key)) {
      this.finishedSet.delete(e.key);
      this.finishedEntries--;
    }
  }

  // ---------------------------------------------------------------------------------------
  // Events, PodGroups, HyperNodes

  /** The entry an object (`Kind/ns/name`) belongs to: its Workload's, its pod's Workload's, its own or its owners'. */
  private entryOfRef(ref: string): string | undefined {
    const parts = ref.split('/');
    if (parts.length !== 3) return undefined; // cluster-scoped: no entry
    const [kind, ns, name] = parts as [string, string, string];
    const key = `${ns}/${name}`;
    if (kind === 'Workload') return this.workloads.get(key)?.entry;
    if (kind === 'Pod') {
      const p = this.pods.get(key);
      const e = p ? this.workloads.get(p.workload)?.entry : undefined;
      if (e !== undefined) return e;
    }
    const hit = this.refToEntry.get(ref);
    if (hit !== undefined) return hit;
    const o = this.store.getSync(kind, ns, name);
    const e = o ? this.findEntry(o) : undefined;
    if (e !== undefined) this.refToEntry.set(ref, e);
    return e;
  }

  private onEvent(ev: RecordedEvent): void {
    const key = this.entryOfRef(ev.object);
    const e = key === undefined ? undefined : this.entries.get(key);
    if (!e) return;
    // Kinds are few: one copy of each, shared by every entry. The folds are a short list
    // (at most MAX_EVENT_FOLDS), searched in order: a map per entry cost more than its folds.
    const kind = this.intern(ev.object.slice(0, ev.object.indexOf('/')));
    const folds = e.events;
    const f = folds?.find((x) => x.reason === ev.reason && x.type === ev.type && x.kind === kind);
    if (f) {
      f.count++;
      f.last = ev.at;
      f.message = ev.message;
    } else if ((folds?.length ?? 0) < MAX_EVENT_FOLDS) {
      const fold: EventFold = { kind, type: ev.type, reason: ev.reason, count: 1, first: ev.at, last: ev.at, message: ev.message };
      // A new list of exactly the new size (a push, or a spread, grows a short list's storage to 17 slots).
      e.events = folds ? folds.concat([fold]) : [fold];
    } else e.eventsDropped++;
  }

  private onPodGroup(g: PodGroup): void {
    const key = objectKey(g);
    let rec = this.podGroups.get(key);
    if (!rec || rec.last.metadata.uid !== g.metadata.uid) {
      rec = { key, name: g.metadata.name, apiVersion: g.apiVersion, history: [], dropped: 0, last: g };
      this.podGroups.set(key, rec);
    }
    rec.last = g;
    rec.entry ??= this.findEntry(g);
    const st = g.status ?? {};
    const point: PodGroupPoint = { at: this.clock.now() };
    if (typeof st.phase === 'string') point.phase = st.phase;
    for (const f of ['scheduled', 'running', 'succeeded', 'failed'] as const) if (typeof st[f] === 'number') point[f] = st[f];
    if (typeof st.occupiedBy === 'string') point.occupiedBy = st.occupiedBy;
    if (typeof st.scheduleStartTime === 'string') point.scheduleStartTime = st.scheduleStartTime;
    const h = rec.history;
    const last = h[h.length - 1];
    const same = (a: PodGroupPoint, b: PodGroupPoint) =>
      a.phase === b.phase &&
      a.scheduled === b.scheduled &&
      a.running === b.running &&
      a.succeeded === b.succeeded &&
      a.failed === b.failed &&
      a.occupiedBy === b.occupiedBy &&
      a.scheduleStartTime === b.scheduleStartTime;
    if (last && same(last, point)) return;
    if (last && last.at === point.at) h[h.length - 1] = point;
    else if (h.length < MAX_PODGROUP_POINTS) h.push(point);
    else {
      // Keep the first ones and the latest: the status at the end is always there.
      h[h.length - 1] = point;
      rec.dropped++;
    }
  }

  private onHyperNode(h: HyperNode, deleted = false): void {
    const name = h.metadata.name;
    let rec = this.hyperNodes.get(name);
    if (!rec) {
      rec = { name, tier: typeof h.spec?.tier === 'number' ? h.spec.tier : null, history: [], deleted: false };
      this.hyperNodes.set(name, rec);
    }
    rec.deleted = deleted;
    if (deleted) return;
    rec.tier = typeof h.spec?.tier === 'number' ? h.spec.tier : null;
    const nodeCount = typeof h.status?.nodeCount === 'number' ? h.status.nodeCount : null;
    const now = this.clock.now();
    const last = rec.history[rec.history.length - 1];
    if (last && last.nodeCount === nodeCount) return;
    if (last && last.at === now) last.nodeCount = nodeCount;
    else rec.history.push({ at: now, nodeCount });
  }

  // ---------------------------------------------------------------------------------------
  // Pods

  private onPod(p: Pod, deleted = false): void {
    const key = objectKey(p);
    const now = this.clock.now();
    const old = this.podUse.get(key);
    if (old) {
      this.podUse.delete(key);
      this.addUsed(old, -1);
    }
    const active = !deleted && Boolean(p.spec.nodeName) && !isTerminal(p);
    if (active) {
      const req = this.requestsOf(p);
      this.podUse.set(key, req);
      this.addUsed(req, 1);
    }
    if (old || active) this.point(this.utilization, now, this.used);

    const wl = p.metadata.annotations?.[KueueAnnotation.Workload];
    if (wl === undefined) return;
    const wkey = sharedKey(p.metadata.namespace ?? 'default', wl);
    let rec = this.pods.get(key);
    if (!rec || rec.workload !== wkey) {
      rec = { key, name: p.metadata.name, workload: wkey, phase: 'Pending', labels: {} };
      this.pods.set(key, rec);
    }
    rec.podSet = p.metadata.labels?.[KueueLabel.PodSet] ?? rec.podSet;
    if (p.spec.nodeName) rec.node = p.spec.nodeName;
    rec.phase = deleted ? (isTerminal(p) ? (p.status!.phase as string) : 'Deleted') : (p.status?.phase ?? 'Pending');
    rec.labels = p.metadata.labels ?? {};
    rec.offset = p.metadata.annotations?.[KueueAnnotation.PodIndexOffset];
    const w = this.workloads.get(wkey);
    if (w) {
      if (w.pods === NO_PODS) w.pods = new Set();
      w.pods.add(key);
      if (rec.phase === 'Running' || rec.phase === 'Succeeded') {
        if (w.started === NO_PODS) w.started = new Set();
        w.started.add(key);
        this.checkStarted(w, now);
      }
    } else {
      // The Workload is not seen yet: keep the pod for it.
      const placeholder: Workload = {
        apiVersion: KueueApiVersion.V1beta2,
        kind: 'Workload',
        metadata: { name: wl, namespace: p.metadata.namespace },
        spec: { podSets: [] },
      };
      const pending = workloadRecord(wkey, now, placeholder, true, new Set([key]));
      pending.started = new Set();
      this.workloads.set(wkey, pending);
    }
  }

  /** What a bound pod uses: its requests and one of the node's `pods`; only the pod slot when its requests cannot be read (the invariant checker reports such a pod). */
  private requestsOf(p: Pod): ResourceAmounts {
    const read = this.requests.read(p);
    return read.ok ? read.requests : POD_SLOT_ONLY;
  }

  private addUsed(r: ResourceAmounts, sign: number): void {
    for (const res in r) this.used.set(res, (this.used.get(res) ?? 0) + sign * r[res]!);
  }

  // ---------------------------------------------------------------------------------------
  // Nodes: capacity of Ready nodes

  private onNode(n: Node, deleted = false): void {
    const name = n.metadata.name;
    const before = this.nodeCap.get(name);
    if (before) {
      for (const res in before) this.cap.set(res, (this.cap.get(res) ?? 0) - before[res]!);
      this.nodeCap.delete(name);
    }
    const ready = (n.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');
    if (!deleted && ready) {
      let alloc: ResourceAmounts = {};
      try {
        alloc = parseResourceList(n.status?.allocatable, 'status.allocatable');
      } catch {
        // Counts as nothing.
      }
      this.nodeCap.set(name, alloc);
      for (const res in alloc) this.cap.set(res, (this.cap.get(res) ?? 0) + alloc[res]!);
    }
    this.point(this.capacity, this.clock.now(), this.cap);
  }

  // ---------------------------------------------------------------------------------------
  // Queues

  private onLocalQueue(lq: LocalQueue): void {
    this.lqToCq.set(`${lq.metadata.namespace ?? 'default'}/${lq.metadata.name}`, lq.spec.clusterQueue);
  }

  private touchQueue(cq: string): void {
    if (!this.queueSeries.has(cq)) this.queueSeries.set(cq, []);
  }

  private updateQueues(key: string, w: Workload | undefined): void {
    const prev = this.workloadCq.get(key);
    let next: { cq?: string; admitted: boolean } | undefined;
    if (w && !isTrue(w, 'Finished')) {
      const adm = w.status?.admission;
      if (adm?.clusterQueue !== undefined) next = this.cqState(adm.clusterQueue, true);
      else if (w.spec.active !== false) {
        const lq = w.spec.queueName ?? w.metadata.labels?.[KueueLabel.QueueName];
        const cq = lq !== undefined ? this.lqToCq.get(`${w.metadata.namespace ?? 'default'}/${lq}`) : undefined;
        if (cq !== undefined) next = this.cqState(cq, false);
      }
    }
    const touched = new Set<string>();
    if (prev?.cq !== undefined) {
      (prev.admitted ? this.cqAdmitted : this.cqPending).get(prev.cq)?.delete(key);
      touched.add(prev.cq);
    }
    const oldUsage = prev?.admitted ? this.lastUsage.get(key) : undefined;
    if (oldUsage && prev?.cq !== undefined) this.addCqUsage(prev.cq, oldUsage, -1);
    this.lastUsage.delete(key);
    if (next?.cq !== undefined) {
      const m = next.admitted ? this.cqAdmitted : this.cqPending;
      let s = m.get(next.cq);
      if (!s) m.set(next.cq, (s = new Set()));
      s.add(key);
      touched.add(next.cq);
      if (next.admitted) {
        const u = new Map<string, number>();
        for (const [f, n] of usageOf(w!)) u.set(f, n);
        this.lastUsage.set(key, u);
        this.addCqUsage(next.cq, u, 1);
      }
      this.workloadCq.set(key, next);
    } else {
      this.workloadCq.delete(key);
    }
    const now = this.clock.now();
    for (const cq of touched) {
      this.touchQueue(cq);
      const usage: Record<string, number> = {};
      for (const [f, n] of [...(this.cqUsage.get(cq) ?? new Map<string, number>())].sort(([a], [b]) => compareStrings(a, b)))
        if (n !== 0) usage[f] = n;
      const series = this.queueSeries.get(cq)!;
      const p: QueuePoint = { at: now, admitted: this.cqAdmitted.get(cq)?.size ?? 0, pending: this.cqPending.get(cq)?.size ?? 0, usage };
      const last = series[series.length - 1];
      // Usage changes less often than the counts: a point with the same usage shares the one before's.
      const sameUsage = last !== undefined && JSON.stringify(last.usage) === JSON.stringify(p.usage);
      if (sameUsage) p.usage = last.usage;
      if (last && last.at === now) series[series.length - 1] = p;
      else if (!last || last.admitted !== p.admitted || last.pending !== p.pending || !sameUsage) series.push(p);
    }
  }

  /** One frozen `{ cq, admitted }` per ClusterQueue and state, shared by every Workload in it. */
  private cqState(cq: string, admitted: boolean): { cq?: string; admitted: boolean } {
    const states = admitted ? this.cqStatesAdmitted : this.cqStatesPending;
    let s = states.get(cq);
    if (!s) states.set(cq, (s = Object.freeze({ cq, admitted })));
    return s;
  }

  private addCqUsage(cq: string, u: Map<string, number>, sign: number): void {
    let m = this.cqUsage.get(cq);
    if (!m) this.cqUsage.set(cq, (m = new Map()));
    for (const [f, n] of u) m.set(f, (m.get(f) ?? 0) + sign * n);
  }

  /** Appends (or, at the same instant, replaces) a point of a series. */
  private point(series: SeriesPoint[], at: number, values: Map<string, number>): void {
    const v: Record<string, number> = {};
    for (const k of [...values.keys()].sort()) {
      const n = values.get(k)!;
      if (Math.abs(n) > 1e-9) v[k] = n;
    }
    const last = series[series.length - 1];
    if (last && last.at === at) last.values = v;
    else series.push({ at, values: v });
  }
}

/**
 * A list with one more item, exactly its size (a push grows a short list's storage to 17
 * slots; these lists are short and most stay at one or two): a new list each time.
 */
function appended<T>(list: T[], v: T): T[] {
  return list.length === 0 ? [v] : list.concat([v]);
}

/** The entry's own object in its `objects` (most entries are one object: their list is ONLY_OWN, shared). */
const OWN_OBJECT = '\u0000own';
const ONLY_OWN: readonly string[] = Object.freeze([OWN_OBJECT]);

/** The entry's own object's reference, as refOf writes it for an object in a namespace. */
const ownRef = (e: EntryRecord) => [e.kind, e.namespace, e.name].join('/');

/** `e.objects` with `ref` added (the entry's own object as OWN_OBJECT). */
function withObject(e: EntryRecord, ref: string): string[] {
  if (ref !== ownRef(e)) return appended(e.objects, ref);
  return e.objects.length === 0 ? (ONLY_OWN as string[]) : appended(e.objects, OWN_OBJECT);
}

/** The objects submitted for an entry (`Kind/ns/name`). */
export function entryObjects(e: EntryRecord): string[] {
  return e.objects.map((o) => (o === OWN_OBJECT ? ownRef(e) : o));
}

/** The one empty list records share until `appended` gives them their own (frozen: a push to it fails loudly). */
const NONE: readonly never[] = Object.freeze([]);
function none<T>(): T[] {
  return NONE as unknown as T[];
}

/**
 * A Workload record with every field set (one shape for all, no out-of-object properties);
 * its empty histories shared until something is appended.
 */
function workloadRecord(key: string, now: number, last: Workload, deleted: boolean, pods: Set<string>): WorkloadRecord {
  return {
    key,
    entry: undefined,
    createdAt: now,
    admittedAt: undefined,
    startedAt: undefined,
    finishedAt: undefined,
    evictions: none(),
    admission: undefined,
    admissions: none(),
    pendingReasons: none(),
    pendingDropped: 0,
    lastPending: undefined,
    last,
    deleted,
    started: NO_PODS,
    admittedCount: 0,
    pods,
  };
}

/** Deep equality of JSON values, keys in the same order (the same admission in two versions of a Workload). */
function sameValue(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  if (ka.length !== kb.length) return false;
  // Keys in the same order too: the report writes the one kept.
  for (let i = 0; i < ka.length; i++) {
    const k = ka[i]!;
    if (k !== kb[i]) return false;
    if (!sameValue((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k])) return false;
  }
  return true;
}

/** The pod sets of a Workload record without pods: shared, so adding to it is a mistake (a record gets its own set). */
class NoPods extends Set<string> {
  override add(): this {
    throw new Error('the shared empty pod set of a Workload record takes no pods');
  }
}
const NO_PODS: Set<string> = new NoPods();
