// scheduling.volcano.sh/v1beta1 PodGroup and its member Pods -> one Workload per PodGroup
// (spec volcano-hypernode §1.2-§1.4). Annotation keys: see volcano-job.ts.
//
// A PodGroup and its pods are separate documents, so this integration takes both kinds:
// PodGroups and every Pod. Pods that are not Volcano's go on to the plain-Pods
// integration (pod.ts) unchanged; the registry lists this integration in its place.
//
// workloadsFromPodGroupsAndPods:
//   1. parse each PodGroup (schema and admission rules of the API layer); a PodGroup with
//      `subGroupPolicy` is refused (sub-group gangs have no place in the contract yet);
//   2. sort the pods:
//      - annotation `scheduling.k8s.io/group-name` -> a member of that PodGroup (same
//        namespace). Unbound, unfinished members are what the Workload places; bound ones
//        (not Failed) already count toward the gang;
//      - no group name but `volcano.sh/network-topology-mode` or `-highest-tier` -> the
//        PodGroup Volcano's podgroup controller would make for it (§1.4): the pod's
//        single-pod Workload (as pod.ts builds it) with that topology, gang minimum 1 and
//        the pod's `scheduling.volcano.sh/queue-name`; unreadable values are warnings
//        (the peer logs them) and fall back as §1.4 says;
//      - anything else -> pod.ts;
//      a pod naming both a Volcano and a Kueue pod group, or in a Kueue pod group with
//      the Volcano topology annotations, is refused;
//   3. per PodGroup with at least one pending member: PodSets by role as pod.ts's pod
//      groups (one per role hash, count = pods with that hash, template from the first
//      such pod by name, sorted by hash); Workload named after the PodGroup
//      (`podgroup-<name>-<hash>`), owned by it; annotations: the PodGroup's
//      networkTopology, its queue, and the gang minimum = `minMember` (unset: 0, as in
//      Volcano) less the members already bound. A PodGroup without pending members gives
//      no Workload; a gang its pending members cannot fill, and members of a PodGroup
//      missing from the input, are errors (members of a refused PodGroup add none).
// Topology annotations on member pods are ignored, as Volcano does (the PodGroup rules).

import { InputError, formatWhere, type Where } from '../api/errors.ts';
import { KueueLabel } from '../api/keys.ts';
import type { KObject, Pod, PodSet, StringMap, Workload } from '../api/objects.ts';
import { networkTopologyOf, podGroupAnnotationsTopology } from '../api/volcano.ts';
import { VolcanoAnnotation, VolcanoApiVersion, type VolcanoPodGroup } from '../api/volcano-objects.ts';
import type { Integration, IntegrationContext, SourcedObject, SourcedWorkload, ToWorkloadsResult } from './integration.ts';
import { PodKind, isPendingPlainPod, podGroupName, roleHash, workloadsFromPods } from './pod.ts';
import {
  GANG_MIN_AVAILABLE_ANNOTATION,
  VOLCANO_QUEUE_ANNOTATION,
  networkTopologyAnnotations,
  parseVolcano,
  tooManyPodSets,
  volcanoOwnedWorkload,
  volcanoPodSetTemplate,
  volcanoWorkloadAnnotations,
} from './volcano-job.ts';
import { MAX_PODSETS, isRecord, keyField, namespaceOf, whereIn } from './workload-name.ts';

export const PodGroupKind = { apiVersion: VolcanoApiVersion.PodGroup, kind: 'PodGroup' } as const;

const GROUP_NAME_FIELD = keyField('metadata.annotations', VolcanoAnnotation.PodGroupName);

type Placed = SourcedWorkload & { first: number };

export interface PodGroupWorkloads {
  workloads: Placed[];
  errors: InputError[];
  /** Pod annotations Volcano would log and fall back on (spec §1.4), with where they were read. */
  warnings: string[];
}

interface Member {
  pod: Pod;
  where: Where;
}

interface Group {
  members: Member[];
  /** Members already on a node and not Failed: they count toward minMember. */
  bound: number;
}

function byName(a: Member, b: Member): number {
  const x = a.pod.metadata.name;
  const y = b.pod.metadata.name;
  return x < y ? -1 : x > y ? 1 : 0;
}

const groupKey = (namespace: string, name: string) => `${namespace}/${name}`;

function hasTopologyAnnotations(pod: KObject): boolean {
  const a = pod.metadata.annotations;
  return a?.[VolcanoAnnotation.NetworkTopologyMode] !== undefined || a?.[VolcanoAnnotation.NetworkTopologyHighestTier] !== undefined;
}

function podGroupWorkload(pg: VolcanoPodGroup, where: Where, group: Group, errors: InputError[]): Workload | undefined {
  const members = [...group.members].sort(byName);
  const minMember = pg.spec.minMember ?? 0;
  const gang = Math.max(0, minMember - group.bound);
  if (members.length < gang) {
    const bound = group.bound > 0 ? ` and ${group.bound} already bound` : '';
    errors.push(
      new InputError(
        { ...where, field: 'spec.minMember' },
        `minMember ${minMember} cannot be met: the input has ${members.length} pending member pod${members.length === 1 ? '' : 's'}` +
          ` (${members.map((m) => m.pod.metadata.name).join(', ')})${bound}; add the missing pods or lower minMember`,
      ),
    );
    return undefined;
  }

  const roles = new Map<string, Member[]>();
  let failed = false;
  for (const m of members) {
    const r = roleHash(m.pod, m.where);
    if (r.error) {
      errors.push(r.error);
      failed = true;
      continue;
    }
    roles.set(r.hash!, [...(roles.get(r.hash!) ?? []), m]);
  }
  if (failed) return undefined;
  if (roles.size > MAX_PODSETS) {
    errors.push(tooManyPodSets(where, 'metadata.name', 'pod role (distinct pod shape) among its members', roles.size));
    return undefined;
  }
  const podSets: PodSet[] = [...roles.keys()].sort().map((hash) => {
    const rm = roles.get(hash)!;
    const pod = rm[0]!.pod;
    return { name: hash, template: volcanoPodSetTemplate({ metadata: pod.metadata, spec: pod.spec }, {}), count: rm.length };
  });
  const annotations = volcanoWorkloadAnnotations(networkTopologyOf(pg.spec), gang, pg.spec.queue);
  return volcanoOwnedWorkload(pg, podSets, annotations, pg.spec.priorityClassName);
}

/** pod.ts's single-pod Workload for `item`, with the topology its annotations ask for (§1.4). */
function annotatedPodWorkloads(item: SourcedObject, index: number, out: PodGroupWorkloads): void {
  const r = workloadsFromPods([item]);
  out.errors.push(...r.errors);
  if (r.workloads.length === 0) return;
  const pod = item.object;
  const t = podGroupAnnotationsTopology(pod.metadata.annotations);
  for (const w of t.warnings) out.warnings.push(`${formatWhere(whereIn(item.where, pod))}: ${w}`);
  for (const { workload, source } of r.workloads) {
    const annotations: StringMap = {
      ...workload.metadata.annotations,
      ...networkTopologyAnnotations(t.topology),
      [GANG_MIN_AVAILABLE_ANNOTATION]: '1',
    };
    const queue = pod.metadata.annotations?.[VOLCANO_QUEUE_ANNOTATION];
    if (queue) annotations[VOLCANO_QUEUE_ANNOTATION] = queue;
    workload.metadata.annotations = annotations;
    for (const ps of workload.spec.podSets) {
      ps.template = volcanoPodSetTemplate(ps.template, {});
    }
    out.workloads.push({ workload, source, first: index });
  }
}

/**
 * PodGroups and Pods of a manifest set -> Workloads (see the header). `first` is the index
 * in `items` of the object each Workload is placed at: the PodGroup, or the pod.
 */
export function workloadsFromPodGroupsAndPods(items: readonly SourcedObject[]): PodGroupWorkloads {
  const out: PodGroupWorkloads = { workloads: [], errors: [], warnings: [] };
  const podGroups = new Map<string, { pg: VolcanoPodGroup; where: Where; index: number }>();
  const groups = new Map<string, Group>();
  const plain: { item: SourcedObject; index: number }[] = [];
  const refused = new Set<string>();

  // 1. PodGroups.
  items.forEach((item, index) => {
    if (item.object.kind !== PodGroupKind.kind) return;
    const where = whereIn(item.where, item.object);
    const parsed = parseVolcano<VolcanoPodGroup>(item.object, where);
    out.errors.push(...parsed.errors);
    const pg = parsed.object;
    const name = item.object.metadata?.name;
    // A refused PodGroup's members get no error of their own: the PodGroup's says it all.
    if (pg === undefined) {
      if (typeof name === 'string') refused.add(groupKey(namespaceOf(item.object), name));
      return;
    }
    if (pg.spec.subGroupPolicy !== undefined && pg.spec.subGroupPolicy.length > 0) {
      refused.add(groupKey(namespaceOf(pg), pg.metadata.name));
      out.errors.push(
        new InputError(
          { ...where, field: 'spec.subGroupPolicy' },
          'subGroupPolicy is not supported on a PodGroup yet; for task-level topology use a batch.volcano.sh/v1alpha1 Job ' +
            'whose tasks have a partitionPolicy, or remove subGroupPolicy',
        ),
      );
      return;
    }
    const key = groupKey(namespaceOf(pg), pg.metadata.name);
    const seen = podGroups.get(key);
    if (seen !== undefined) {
      const detail = `PodGroup ${key} appears twice; the first is at ${formatWhere(seen.where)}`;
      out.errors.push(new InputError({ ...where, field: 'metadata.name' }, detail));
      return;
    }
    podGroups.set(key, { pg, where, index });
  });

  // 2. Pods.
  items.forEach((item, index) => {
    const pod = item.object as Pod;
    if (pod.kind !== PodKind.kind) return;
    const group = pod.metadata.annotations?.[VolcanoAnnotation.PodGroupName];
    const where = whereIn(item.where, pod);
    if (group === undefined) {
      if (!hasTopologyAnnotations(pod)) plain.push({ item, index });
      else if (podGroupName(pod) === undefined) annotatedPodWorkloads(item, index, out);
      else {
        out.errors.push(
          new InputError(
            { ...where, field: 'metadata.annotations' },
            `the pod is in Kueue pod group ${JSON.stringify(podGroupName(pod))} and carries ` +
              `${VolcanoAnnotation.NetworkTopologyMode} or ${VolcanoAnnotation.NetworkTopologyHighestTier}, ` +
              'which Volcano reads only on pods outside any group: ' +
              'remove those annotations, or the Kueue pod group keys',
          ),
        );
      }
      return;
    }
    if (!isRecord(pod.spec) || !Array.isArray(pod.spec.containers)) {
      out.errors.push(new InputError({ ...where, field: 'spec.containers' }, 'a Pod needs spec.containers'));
      return;
    }
    if (podGroupName(pod) !== undefined) {
      out.errors.push(
        new InputError(
          { ...where, field: GROUP_NAME_FIELD },
          `the pod names Volcano PodGroup ${JSON.stringify(group)} and Kueue pod group ${JSON.stringify(podGroupName(pod))} ` +
            `(${KueueLabel.PodGroupName}); a pod belongs to one group: remove one of them`,
        ),
      );
      return;
    }
    const key = groupKey(namespaceOf(pod), group);
    const entry = groups.get(key) ?? { members: [], bound: 0 };
    groups.set(key, entry);
    if (isPendingPlainPod(pod)) entry.members.push({ pod, where });
    else if (pod.spec.nodeName && pod.status?.phase !== 'Failed') entry.bound++;
  });

  // Members of PodGroups the input does not have.
  for (const [key, group] of groups) {
    if (podGroups.has(key) || refused.has(key) || group.members.length === 0) continue;
    const first = group.members[0]!;
    out.errors.push(
      new InputError(
        { ...first.where, field: GROUP_NAME_FIELD },
        `PodGroup ${key} (${VolcanoApiVersion.PodGroup}) is not in the input, so the gang of ` +
          `${group.members.map((m) => m.pod.metadata.name).join(', ')} is unknown; add the PodGroup or remove the annotation`,
      ),
    );
  }

  // 3. A Workload per PodGroup with pending members.
  for (const [key, { pg, where, index }] of podGroups) {
    const group = groups.get(key);
    if (group === undefined || group.members.length === 0) continue;
    const wl = podGroupWorkload(pg, where, group, out.errors);
    if (wl) out.workloads.push({ workload: wl, source: items[index]!.where, first: index });
  }

  const r = workloadsFromPods(plain.map((p) => p.item));
  out.errors.push(...r.errors);
  for (const w of r.workloads) out.workloads.push({ ...w, first: plain[w.first]!.index });

  out.workloads.sort((a, b) => a.first - b.first);
  return out;
}

export function podGroupToWorkloads(obj: KObject, ctx: IntegrationContext): ToWorkloadsResult {
  const r = workloadsFromPodGroupsAndPods([{ object: obj, where: ctx.where }]);
  return { workloads: r.workloads.map((w) => w.workload), errors: r.errors };
}

/**
 * Volcano PodGroups with their pods, and (through pod.ts) every other plain Pod. The
 * Integration interface has no warnings: workloadsFromPodGroupsAndPods returns them, the
 * registry drops them.
 */
export const volcanoPodGroupIntegration: Integration = {
  name: 'scheduling.volcano.sh/podgroup',
  kinds: [PodGroupKind, PodKind],
  toWorkloads: podGroupToWorkloads,
  toWorkloadsAcross: (items) => {
    const r = workloadsFromPodGroupsAndPods(items);
    return { workloads: r.workloads, errors: r.errors };
  },
};
