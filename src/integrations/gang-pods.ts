// Pods of Koordinator and scheduler-plugins gangs -> one Workload per gang, so that the
// admission cycle can admit each gang whole (spec koordinator-gang §2, §3, §5, §12; seed
// koordinator-gang-scheduling.md). Gang identity and parameters, with the peer's lookup
// order and fallbacks, come from api/gang.ts (gangsFromPods).
//
// workloadsFromGangsAndPods takes Pods and the PodGroups of both CRDs
// (scheduling.sigs.k8s.io/v1alpha1, scheduling.x-k8s.io/v1alpha1):
//   1. sort the pods: a pod naming a gang (label pod-group.scheduling.sigs.k8s.io or
//      scheduling.x-k8s.io/pod-group, label pod-group.scheduling.sigs.k8s.io/name, or
//      annotation gang.scheduling.koordinator.sh/name) is a gang pod, any other pod goes to
//      pod.ts unchanged. Succeeded/Failed gang pods are dropped (the peer's informer never
//      sees them). A gang pod also in a Kueue pod group, or carrying Volcano's topology
//      annotations, is refused: a pod belongs to one group;
//   2. resolve the gangs (gangsFromPods over the non-terminal gang pods and the PodGroups);
//      its fallback warnings become notes;
//   3. a gang group is once-satisfied when a pod of any gang sharing its group id is bound
//      (spec.nodeName; the peer keeps the flag on the group object, keyed by group id);
//   4. per gang with pending members (unbound, not finished, not deleting):
//      - not initialized (PodGroup missing, or no pod with a valid min-available): no
//        Workload; the note `gang has not init, gangName: <ns/gang>, podName: <ns/pod>`
//        (the peer's PreEnqueue message) on its first pending pod, and why;
//      - match policy once-satisfied and its group once-satisfied: no gang semantics any
//        more, each pending pod gets pod.ts's single-pod Workload (and a note says so);
//      - otherwise one Workload named after the gang, in its namespace: PodSets by role as
//        Kueue pod groups (one per role hash, count = pending pods of that role, template
//        from the first such pod by name, sorted by hash; more than 18 roles is an error);
//        at most total-number pending pods, the first by name (a note names the rest; a
//        total-number of 0 or less sets no cap); the gang annotations below; queue from
//        the pods' `kueue.x-k8s.io/queue-name` (pending members must agree); priority as
//        pod.ts; non-controller owner references to the pending pods it holds. A gang with
//        fewer pending pods than its minimum still gets its Workload: the admission cycle
//        reports that it has not collected enough pods.
//
// The Workload's annotations (what the admission cycle reads):
//   gang.scheduling.koordinator.sh/name          the gang name
//   gang.scheduling.koordinator.sh/min-available minMember; with waiting-and-running,
//                                                max(0, minMember - bound members)
//   gang.scheduling.koordinator.sh/total-number  totalNumber
//   gang.scheduling.koordinator.sh/mode          Strict | NonStrict
//   gang.scheduling.koordinator.sh/waiting-time  `<seconds>s`
//   gang.scheduling.koordinator.sh/groups        JSON array of the group's gang ids, sorted
//                                                (the gang itself only if listed; a gang
//                                                with no group: just its own id)
//   gang.scheduling.koordinator.sh/match-policy  once-satisfied | only-waiting | waiting-and-running
//   gang.scheduling.koordinator.sh/timeout       "true" when a member pod carries it
//   kueue.x-k8s.io/is-group-workload             "true"
//   topoqueue.io/gang-source                     podgroup | annotations
//   topoqueue.io/queue-timestamp                 queue order: the PodGroup's creationTimestamp,
//                                                else its earliest pod's (when known)
//   topoqueue.io/gang-min-resources              scheduler-plugins spec.minResources (JSON)
// and the label koordinator.sh/priority (sub-priority) of its first pending pod. Pods held
// by another scheduling gate (not Kueue's) are not members yet: they neither count toward
// the minimum nor are placed (a note names them).

import { KueueApiVersion } from '../api/api-versions.ts';
import { InputError, formatWhere, type Where } from '../api/errors.ts';
import {
  GangAnnotation,
  GangApiVersion,
  GangLabel,
  GangMatchPolicy,
  GangWorkloadKey,
  gangFromPod,
  gangGroupId,
  gangsFromPods,
  type GangOptions,
  type GangSpec,
} from '../api/gang.ts';
import { KueueLabel, KueueSchedulingGate } from '../api/keys.ts';
import type { KObject, Pod, StringMap, Workload } from '../api/objects.ts';
import { isTerminal } from '../api/objects.ts';
import { VolcanoAnnotation } from '../api/volcano-objects.ts';
import { DNS_SUBDOMAIN_MAX, isDnsSubdomain } from '../api/names.ts';
import { parseTime } from '../api/time.ts';
import { compareStrings, isRecord } from '../api/values.ts';
import type { SourcedObject, SourcedWorkload } from './integration.ts';
import {
  PodKind,
  groupByRole,
  isPendingPlainPod,
  podGroupName,
  podPodSet,
  podQueue,
  queueMismatch,
  singlePodWorkload,
  workloadsFromPods,
} from './pod.ts';
import {
  IS_GROUP_WORKLOAD_ANNOTATION,
  MAX_PODSETS,
  RESOURCE_IN_USE_FINALIZER,
  podPriority,
  setPriorityClassRef,
  keyField,
  namespaceOf,
  ownerReference,
  provReqAnnotations,
  whereIn,
} from './workload-name.ts';

/** Our annotations on gang Workloads. */
export const GangWorkloadAnnotation = {
  /** Where the gang's parameters came from: `podgroup` or `annotations`. */
  Source: 'topoqueue.io/gang-source',
} as const;

/** The PodGroup kinds of Koordinator and scheduler-plugins (Volcano's is volcano-podgroup.ts's). */
export const GangPodGroupKinds = [
  { apiVersion: GangApiVersion.Koordinator, kind: 'PodGroup' },
  { apiVersion: GangApiVersion.SchedulerPlugins, kind: 'PodGroup' },
] as const;

export function isGangPodGroup(obj: KObject): boolean {
  return GangPodGroupKinds.some((k) => k.apiVersion === obj.apiVersion && k.kind === obj.kind);
}

/** The gang id (`ns/name`) a pod names, if any; whether or not that gang is initialized. */
export function podGangId(pod: KObject): string | undefined {
  return gangFromPod(pod, []).gangId;
}

type Placed = SourcedWorkload & { first: number };

export interface GangPodsResult {
  workloads: Placed[];
  errors: InputError[];
  /** Scheduling states and fallbacks a user should read (not errors: nothing is wrong with the input). */
  notes: string[];
}

interface Member {
  pod: Pod;
  /** The pod's place, narrowed to the pod. */
  where: Where;
  /** The place of the document it came from (a Workload's source). */
  source: Where;
  index: number;
}

const byName = (a: Member, b: Member) => compareStrings(a.pod.metadata.name, b.pod.metadata.name);
const podRef = (m: Member) => `${namespaceOf(m.pod)}/${m.pod.metadata.name}`;
const names = (ms: readonly Member[]) => ms.map(podRef).join(', ');
const isBound = (pod: Pod) => Boolean(pod.spec?.nodeName) && !isTerminal(pod);

const OUR_GATES: ReadonlySet<string> = new Set(Object.values(KueueSchedulingGate));

/** The first scheduling gate on the pod that is not Kueue's (admission, topology). */
function foreignGate(pod: Pod): string | undefined {
  return (pod.spec.schedulingGates ?? []).find((g) => !OUR_GATES.has(g.name))?.name;
}

/** The earliest creationTimestamp among the pods (RFC 3339 in UTC orders as text), if any has one. */
function earliestCreation(ms: readonly Member[]): string | undefined {
  let out: string | undefined;
  for (const m of ms) {
    const t = m.pod.metadata.creationTimestamp;
    if (typeof t === 'string' && parseTime(t) !== undefined && (out === undefined || parseTime(t)! < parseTime(out)!)) out = t;
  }
  return out;
}

/**
 * The key that names the pod's gang, in gang.ts's lookup order, with the PodGroup API
 * version a CRD-way label points at. For error fields and explanations only: gang.ts decides.
 */
function gangKey(pod: KObject): { field: string; label?: string; podGroup?: string } {
  const labels = pod.metadata.labels ?? {};
  const keys: [string, string | undefined][] = [
    [GangLabel.PodGroup, GangApiVersion.Koordinator],
    [GangLabel.SchedulerPluginsPodGroup, GangApiVersion.SchedulerPlugins],
    [GangLabel.Name, undefined],
  ];
  for (const [key, podGroup] of keys) {
    if (labels[key]) return { field: keyField('metadata.labels', key), label: key, podGroup };
  }
  return { field: keyField('metadata.annotations', GangAnnotation.Name) };
}

// ---------------------------------------------------------------------------------------
// One gang's Workload
// ---------------------------------------------------------------------------------------

function gangWorkload(
  gang: GangSpec,
  pending: Member[],
  bound: number,
  createdAt: string | undefined,
  timedOut: boolean,
  errors: InputError[],
  notes: string[],
): { workload: Workload; kept: Member[] } | undefined {
  const id = `${gang.namespace}/${gang.name}`;
  const first = pending[0]!;
  const before = errors.length;

  if (!isDnsSubdomain(gang.name)) {
    errors.push(
      new InputError(
        { ...first.where, field: gangKey(first.pod).field },
        `gang name ${JSON.stringify(gang.name)} must be a valid object name (at most ${DNS_SUBDOMAIN_MAX} lowercase ` +
          "letters, digits, '-' and '.', starting and ending with a letter or digit): it names the gang's Workload",
      ),
    );
    return undefined;
  }

  // Pending members agree on the queue (Kueue's pod-group message).
  for (const m of pending.slice(1)) {
    const mismatch = queueMismatch(first, m);
    if (mismatch) errors.push(mismatch);
  }
  if (errors.length > before) return undefined;

  // At most total-number pending pods, the first by name.
  let kept = pending;
  if (gang.totalNumber > 0 && pending.length > gang.totalNumber) {
    kept = pending.slice(0, gang.totalNumber);
    notes.push(
      `gang ${id} has ${pending.length} pending pods, more than its ${GangAnnotation.TotalNumber} ${gang.totalNumber}: ` +
        `the first ${gang.totalNumber} by name are its Workload's, ${names(pending.slice(gang.totalNumber))} left out`,
    );
  }

  // PodSets by role, as Kueue pod groups.
  const roles = groupByRole(kept, errors);
  if (errors.length > before) return undefined;
  if (roles.size > MAX_PODSETS) {
    errors.push(
      new InputError(
        { ...first.where, field: gangKey(first.pod).field },
        `gang ${id} has ${roles.size} roles (distinct pod shapes: containers' requests and ports, node selection, ` +
          `tolerations...) among its pending pods; a Workload holds at most ${MAX_PODSETS} PodSets, one per role: ` +
          'give pods of one role the same shape, or split the gang',
      ),
    );
    return undefined;
  }
  const podSets = [...roles.keys()].sort().map((hash) => {
    const rm = roles.get(hash)!;
    return podPodSet(rm[0]!.pod, hash, rm.length, rm[0]!.where, errors);
  });
  if (errors.length > before) return undefined;

  const min = gang.matchPolicy === GangMatchPolicy.WaitingAndRunning ? Math.max(0, gang.minMember - bound) : gang.minMember;
  const annotations: StringMap = {
    ...provReqAnnotations(first.pod.metadata.annotations),
    [GangAnnotation.Name]: gang.name,
    [GangAnnotation.MinAvailable]: String(min),
    [GangAnnotation.TotalNumber]: String(gang.totalNumber),
    [GangAnnotation.Mode]: gang.mode,
    [GangAnnotation.WaitingTime]: `${gang.waitingTimeSeconds}s`,
    [GangAnnotation.Groups]: JSON.stringify(gang.groups),
    [GangAnnotation.MatchPolicy]: gang.matchPolicy,
    [IS_GROUP_WORKLOAD_ANNOTATION]: 'true',
    [GangWorkloadAnnotation.Source]: gang.source,
  };
  if (timedOut) annotations[GangAnnotation.Timeout] = 'true';
  if (createdAt !== undefined) annotations[GangWorkloadKey.QueueTimestamp] = createdAt;
  if (gang.minResources) annotations[GangWorkloadKey.MinResources] = JSON.stringify(gang.minResources);
  const wl: Workload = {
    apiVersion: KueueApiVersion.V1beta2,
    kind: 'Workload',
    metadata: {
      name: gang.name,
      namespace: gang.namespace,
      annotations,
      ownerReferences: kept.map((m) => ownerReference(m.pod, false)),
      finalizers: [RESOURCE_IN_USE_FINALIZER],
    },
    spec: { podSets },
  };
  const sub = first.pod.metadata.labels?.[GangLabel.SubPriority];
  if (sub !== undefined) wl.metadata.labels = { [GangLabel.SubPriority]: sub };
  if (podQueue(first)) wl.spec.queueName = podQueue(first);
  const priority = podPriority(first.pod, podSets);
  if (priority !== undefined) wl.spec.priority = priority;
  setPriorityClassRef(wl, first.pod);
  return { workload: wl, kept };
}

// ---------------------------------------------------------------------------------------
// Pods and PodGroups -> Workloads
// ---------------------------------------------------------------------------------------

/** gang.ts warnings that this module replaces with its own notes. */
function replacedWarning(w: string, uninitialized: ReadonlySet<string>): boolean {
  // The pod's timeout marker is acted on here (copied to the Workload), not ignored.
  if (w.startsWith(`${PodKind.kind}/`) && w.includes(`: annotation ${GangAnnotation.Timeout}="true" is ignored`)) return true;
  // Uninitialized gangs get the peer's message instead.
  const m = /^gang (\S+) is not initialized \(/.exec(w);
  return m !== null && uninitialized.has(m[1]!);
}

/**
 * Pods and Koordinator / scheduler-plugins PodGroups -> Workloads (see the header): one per
 * gang, single-pod ones for pods of once-satisfied gangs, and pod.ts's for every other pod.
 * `first` is the index in `items` of each Workload's first pod in input order.
 */
export function workloadsFromGangsAndPods(items: readonly SourcedObject[], options: GangOptions = {}): GangPodsResult {
  const out: GangPodsResult = { workloads: [], errors: [], notes: [] };
  const podGroups: KObject[] = [];
  const podGroupAt = new Map<string, Where>();
  const gangPods: Member[] = [];
  const plain: { item: SourcedObject; index: number }[] = [];

  // 1. Sort the objects.
  items.forEach((item, index) => {
    const obj = item.object;
    const where = whereIn(item.where, obj);
    if (isGangPodGroup(obj)) {
      const key = `${obj.apiVersion} ${namespaceOf(obj)}/${obj.metadata.name}`;
      const seen = podGroupAt.get(key);
      if (seen !== undefined) {
        out.errors.push(
          new InputError(
            { ...where, field: 'metadata.name' },
            `PodGroup ${namespaceOf(obj)}/${obj.metadata.name} (${obj.apiVersion}) appears twice; the first is at ${formatWhere(seen)}`,
          ),
        );
        return;
      }
      podGroupAt.set(key, where);
      podGroups.push(obj);
      return;
    }
    if (obj.kind !== PodKind.kind) return;
    const pod = obj as Pod;
    const probe = gangFromPod(pod, [], options);
    const id = probe.gangId;
    if (id === undefined) {
      // Gang keys without a gang name: gang.ts says why they do nothing.
      out.notes.push(...probe.warnings);
      plain.push({ item, index });
      return;
    }
    if (!isRecord(pod.spec) || !Array.isArray(pod.spec.containers)) {
      out.errors.push(new InputError({ ...where, field: 'spec.containers' }, 'a Pod needs spec.containers'));
      return;
    }
    if (isTerminal(pod)) return;
    const kueueGroup = podGroupName(pod);
    if (kueueGroup !== undefined) {
      out.errors.push(
        new InputError(
          { ...where, field: gangKey(pod).field },
          `the pod is in gang ${id} and in Kueue pod group ${JSON.stringify(kueueGroup)} (${KueueLabel.PodGroupName}); ` +
            'a pod belongs to one group: remove one of them',
        ),
      );
      return;
    }
    const a = pod.metadata.annotations;
    if (a?.[VolcanoAnnotation.NetworkTopologyMode] !== undefined || a?.[VolcanoAnnotation.NetworkTopologyHighestTier] !== undefined) {
      out.errors.push(
        new InputError(
          { ...where, field: 'metadata.annotations' },
          `the pod is in gang ${id} and carries ${VolcanoAnnotation.NetworkTopologyMode} or ` +
            `${VolcanoAnnotation.NetworkTopologyHighestTier}, which Volcano reads only on pods outside any group: ` +
            `remove those annotations, or the gang keys (a Koordinator gang's topology is ${GangAnnotation.NetworkTopologySpec})`,
        ),
      );
      return;
    }
    gangPods.push({ pod, where, source: item.where, index });
  });

  // 2. The gangs.
  const resolved = gangsFromPods(
    gangPods.map((m) => m.pod),
    podGroups,
    options,
  );
  const memberOf = new Map<KObject, Member>(gangPods.map((m) => [m.pod, m]));
  const uninitialized = new Set([...resolved.members.keys()].filter((id) => !resolved.gangs.has(id)));
  out.notes.push(...resolved.warnings.filter((w) => !replacedWarning(w, uninitialized)));

  // 3. Once-satisfied gang groups: a bound pod in any gang of the group.
  const satisfiedBy = new Map<string, Member>();
  for (const [id, pods] of resolved.members) {
    const gang = resolved.gangs.get(id);
    if (gang === undefined) continue;
    const bound = pods
      .map((p) => memberOf.get(p)!)
      .filter((m) => isBound(m.pod))
      .sort(byName);
    const group = gangGroupId(gang);
    if (bound.length > 0 && !satisfiedBy.has(group)) satisfiedBy.set(group, bound[0]!);
  }

  // 4. Per gang with pending pods.
  const gangWorkloads: Placed[] = [];
  for (const [id, pods] of resolved.members) {
    const all = pods.map((p) => memberOf.get(p)!);
    const waiting = all.filter((m) => isPendingPlainPod(m.pod)).sort(byName);
    // Held by another scheduling gate: not a member until that gate is removed.
    const held = waiting.filter((m) => foreignGate(m.pod) !== undefined);
    const pending = waiting.filter((m) => foreignGate(m.pod) === undefined);
    if (held.length > 0) {
      out.notes.push(
        `gang ${id}: ${names(held)} ${held.length === 1 ? 'is' : 'are'} held by another scheduling gate (${foreignGate(held[0]!.pod)}): ` +
          'not members yet, neither counted toward the minimum nor placed until the gate is removed',
      );
    }
    if (pending.length === 0) continue;
    const first = pending[0]!;
    const gang = resolved.gangs.get(id);

    if (gang === undefined) {
      const key = gangKey(first.pod);
      const why =
        key.podGroup !== undefined
          ? `PodGroup ${id} (${key.podGroup}) is not in the input: add it, or remove label ${key.label} from the pods`
          : `none of its pods carries a valid ${GangAnnotation.MinAvailable} (or label ${GangLabel.MinAvailable}): set it on at least one pod`;
      out.notes.push(
        `${formatWhere(first.where)}: gang has not init, gangName: ${id}, podName: ${podRef(first)}; ` +
          `${why}; its ${pending.length} pending pod${pending.length === 1 ? ' is' : 's are'} not scheduled`,
      );
      continue;
    }

    const satisfied = satisfiedBy.get(gangGroupId(gang));
    if (gang.matchPolicy === GangMatchPolicy.OnceSatisfied && satisfied !== undefined) {
      out.notes.push(
        `gang ${id} is once-satisfied (pod ${podRef(satisfied)} of its gang group [${gang.groups.join(' ')}] is bound): ` +
          `its pending pods ${names(pending)} are scheduled as ordinary pods`,
      );
      for (const m of pending) {
        const wl = singlePodWorkload(m.pod, m.where, out.errors);
        if (wl) out.workloads.push({ workload: wl, source: m.source, first: m.index });
      }
      continue;
    }

    const timedOut = all.filter((m) => m.pod.metadata.annotations?.[GangAnnotation.Timeout] === 'true').sort(byName);
    if (timedOut.length > 0) {
      out.notes.push(
        `gang ${id} timed out (${GangAnnotation.Timeout}="true" on ${names(timedOut)}): its Workload carries the marker ` +
          'and is not admitted until it is removed from the pods',
      );
    }
    const bound = all.filter((m) => isBound(m.pod)).length;
    const built = gangWorkload(gang, pending, bound, gang.createdAt ?? earliestCreation(all), timedOut.length > 0, out.errors, out.notes);
    if (built === undefined) continue;
    const at = built.kept.reduce((a, b) => (b.index < a.index ? b : a));
    gangWorkloads.push({ workload: built.workload, source: at.source, first: at.index });
  }

  // Every other pod: pod.ts. A Kueue pod group cannot share its Workload's name with a gang.
  const r = workloadsFromPods(plain.map((p) => p.item));
  out.errors.push(...r.errors);
  const taken = new Map(gangWorkloads.map((w) => [`${w.workload.metadata.namespace}/${w.workload.metadata.name}`, w]));
  for (const w of r.workloads) {
    const key = `${w.workload.metadata.namespace}/${w.workload.metadata.name}`;
    const gang = taken.get(key);
    if (gang !== undefined) {
      out.errors.push(
        new InputError(
          { ...w.source, field: keyField('metadata.labels', KueueLabel.PodGroupName) },
          `Workload ${key} would be built both for Kueue pod group ${JSON.stringify(w.workload.metadata.name)} and for gang ${key} ` +
            `(first pod at ${formatWhere(gang.source)}): rename one of them`,
        ),
      );
      continue;
    }
    out.workloads.push({ ...w, first: plain[w.first]!.index });
  }
  out.workloads.push(...gangWorkloads);
  out.workloads.sort((a, b) => a.first - b.first);
  return out;
}
