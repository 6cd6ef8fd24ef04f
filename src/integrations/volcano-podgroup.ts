// scheduling.volcano.sh/v1beta1 PodGroup and its member Pods -> one Workload per PodGroup
// (spec volcano-hypernode §1.2-§1.4). Annotation keys: see volcano-job.ts.
//
// A PodGroup and its pods are separate documents, so this integration takes both kinds:
// PodGroups and every Pod. Pods that are not Volcano's, with the Koordinator and
// scheduler-plugins PodGroups, go on to gang-pods.ts (gangs) and from there to the
// plain-Pods integration (pod.ts) unchanged; the registry lists this one record
// (podGroupFramework) for all of them, with no job side: the pod-group controller runs them.
//
// workloadsFromPodGroupsAndPods:
//   1. parse each PodGroup (schema and admission rules of the API layer);
//   2. sort the pods:
//      - annotation `scheduling.k8s.io/group-name` -> a member of that PodGroup (same
//        namespace). Unbound, unfinished members are what the Workload places; bound ones
//        (not Failed) already count toward the gang;
//      - no group name, no gang (gang-pods.ts), but `volcano.sh/network-topology-mode` or
//        `-highest-tier` -> the PodGroup Volcano's podgroup controller would make for it
//        (§1.4): the pod's single-pod Workload (as pod.ts builds it) with that topology,
//        gang minimum 1 and the pod's `scheduling.volcano.sh/queue-name`; unreadable
//        values are warnings (the peer logs them) and fall back as §1.4 says;
//      - anything else -> gang-pods.ts, then pod.ts;
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
//
// Sub-groups (`spec.subGroupPolicy`, §1.3), mapped onto the partitions of the contract:
//   - a member belongs to the FIRST policy whose `labelSelector` matches its labels
//     (absent selector, or an empty one as in Kubernetes: every pod) and for which it has
//     a non-empty value for every `matchLabelKeys` key; members with the same value tuple
//     form one instance. Members in no policy form the implicit default group, whose
//     PodSets are built as above;
//   - per policy and role hash, one PodSet `<policy>-<role hash>` (the policy name as is
//     when it is a DNS label of at most 54 characters, else lowercased, cut, and suffixed
//     with a hash of the name) whose count is the pending pods of that policy and role,
//     ordered instance by instance, and whose template carries
//     `topoqueue.io/partition-size: <subGroupSize>`, the policy's networkTopology and
//     `topoqueue.io/subgroup-instances` (placement/subgroups.ts: the policy's size and
//     minSubGroups, its instances already ready, and per instance its pending pods and the
//     nodes of its bound ones); the matchLabelKeys labels, which differ per instance, are
//     left out of the template. Policy PodSets follow the default group's, in policy
//     order, each by role hash;
//   - an instance may have any number of pods, pending or bound (subGroupSize is its gang,
//     placement decides what waits), but its pending pods must share one shape: an error
//     names the policy and the instance otherwise, as it does a policy with fewer
//     instances than its `minSubGroups`;
//   - gang minimum = max(minMember, sum over policies of minSubGroups x subGroupSize) less
//     the members already bound. The peer's job is ready when >= minMember pods are and
//     every policy has minSubGroups ready instances (§4.3); instances are disjoint, so
//     the sum is the least number of pods meeting the second condition and the max the
//     least meeting both.

import { InputError, formatWhere, type Where } from '../api/errors.ts';
import { KueueLabel } from '../api/keys.ts';
import type { KObject, Pod, PodSet, StringMap, Workload } from '../api/objects.ts';
import { networkTopologyOf, podGroupAnnotationsTopology } from '../api/volcano.ts';
import {
  VolcanoAnnotation,
  VolcanoApiVersion,
  type LabelSelector,
  type SubGroupPolicy,
  type VolcanoPodGroup,
} from '../api/volcano-objects.ts';
import { DNS_LABEL_PATTERN } from '../api/names.ts';
import { compareStrings, isRecord } from '../api/values.ts';
import { matchesRequirement } from '../topology/node-match.ts';
import { SUBGROUP_INSTANCES_ANNOTATION, formatSubgroupInfo, type SubgroupInfo } from '../placement/subgroups.ts';
import { GangPodGroupKinds, isGangPodGroup, podGangId, workloadsFromGangsAndPods } from './gang-pods.ts';
import { defineFramework } from './framework.ts';
import type { IntegrationContext, SourcedObject, SourcedWorkload, ToWorkloadsResult } from './integration.ts';
import { PodKind, isPendingPlainPod, podGroupName, roleHash, workloadsFromPods } from './pod.ts';
import {
  GANG_MIN_AVAILABLE_ANNOTATION,
  VOLCANO_QUEUE_ANNOTATION,
  networkTopologyAnnotations,
  parseVolcano,
  partitionAnnotations,
  tooManyPodSets,
  volcanoOwnedWorkload,
  volcanoPodSetTemplate,
  volcanoWorkloadAnnotations,
} from './volcano-job.ts';
import { MAX_PODSETS, keyField, namespaceOf, sha256Hex, whereIn } from './workload-name.ts';

export const PodGroupKind = { apiVersion: VolcanoApiVersion.PodGroup, kind: 'PodGroup' } as const;

const GROUP_NAME_FIELD = keyField('metadata.annotations', VolcanoAnnotation.PodGroupName);

type Placed = SourcedWorkload & { first: number };

export interface PodGroupWorkloads {
  workloads: Placed[];
  errors: InputError[];
  /** Pod annotations Volcano would log and fall back on (spec §1.4), with where they were read. */
  warnings: string[];
  /** What gang-pods.ts reports about Koordinator / scheduler-plugins gangs. */
  notes: string[];
}

interface Member {
  pod: Pod;
  where: Where;
}

interface Group {
  members: Member[];
  /** Members already on a node and not Failed: they count toward minMember. */
  bound: Member[];
}

function byName(a: Member, b: Member): number {
  return compareStrings(a.pod.metadata.name, b.pod.metadata.name);
}

const groupKey = (namespace: string, name: string) => `${namespace}/${name}`;

const podNames = (ms: readonly Member[]) => ms.map((m) => m.pod.metadata.name).join(', ');

function hasTopologyAnnotations(pod: KObject): boolean {
  const a = pod.metadata.annotations;
  return a?.[VolcanoAnnotation.NetworkTopologyMode] !== undefined || a?.[VolcanoAnnotation.NetworkTopologyHighestTier] !== undefined;
}

// ---------------------------------------------------------------------------------------
// Sub-groups (spec §1.3)
// ---------------------------------------------------------------------------------------

/** Kubernetes label-selector semantics: an empty selector selects everything. */
function selects(sel: LabelSelector, labels: StringMap): boolean {
  for (const [k, v] of Object.entries(sel.matchLabels ?? {})) if (labels[k] !== v) return false;
  return (sel.matchExpressions ?? []).every((e) => matchesRequirement(labels[e.key], e));
}

/**
 * The policy a pod belongs to: the first whose selector matches it (absent = every pod)
 * and whose every matchLabelKeys key has a non-empty value on it; undefined = default group.
 */
function policyOf(pod: Pod, policies: readonly SubGroupPolicy[]): { policy: number; values: string[] } | undefined {
  const labels = pod.metadata.labels ?? {};
  for (let i = 0; i < policies.length; i++) {
    const p = policies[i]!;
    if (p.labelSelector !== undefined && !selects(p.labelSelector, labels)) continue;
    const values = (p.matchLabelKeys ?? []).map((k) => labels[k] ?? '');
    if (values.some((v) => v === '')) continue;
    return { policy: i, values };
  }
  return undefined;
}

/** A pending member with its role hash. */
type Hashed = Member & { hash: string };

interface Instance {
  policy: number;
  values: string[];
  pending: Hashed[];
  bound: Member[];
}

/** `instance {key=value, ...}`: the values of the policy's matchLabelKeys. */
function instanceId(p: SubGroupPolicy, values: readonly string[]): string {
  const keys = p.matchLabelKeys ?? [];
  return keys.length === 0 ? 'its only instance (no matchLabelKeys)' : `instance {${keys.map((k, i) => `${k}=${values[i]}`).join(', ')}}`;
}

const describeInstance = (p: SubGroupPolicy, values: readonly string[]) =>
  `subGroupPolicy ${JSON.stringify(p.name)}, ${instanceId(p, values)}`;

/** Room in a 63-character PodSet name for `-` and the 8-hex role hash. */
const MAX_POLICY_PREFIX = 54;

/**
 * The PodSet name prefix of a policy: its name when that is a DNS label short enough,
 * else a lowercased, cut name with 5 hex of the name's hash (names are unique per PodGroup).
 */
function policyPrefix(name: string): string {
  if (name.length <= MAX_POLICY_PREFIX && DNS_LABEL_PATTERN.test(name)) return name;
  const base = name
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, '-')
    .slice(0, MAX_POLICY_PREFIX - 6)
    .replace(/^-+|-+$/g, '');
  return `${base || 'subgroup'}-${sha256Hex(name).slice(0, 5)}`;
}

/** One PodSet per role of `ms` (sorted by name), sorted by hash; `name` maps the hash. */
function podSetsByRole(ms: readonly Hashed[], name: (hash: string) => string, template: (pod: Pod) => PodSet['template']): PodSet[] {
  const roles = new Map<string, Member[]>();
  for (const m of ms) roles.set(m.hash, [...(roles.get(m.hash) ?? []), m]);
  return [...roles.keys()].sort().map((hash) => {
    const rm = roles.get(hash)!;
    return { name: name(hash), template: template(rm[0]!.pod), count: rm.length };
  });
}

function podGroupWorkload(pg: VolcanoPodGroup, where: Where, group: Group, errors: InputError[]): Workload | undefined {
  const members = [...group.members].sort(byName);
  const bound = group.bound.length;
  const minMember = pg.spec.minMember ?? 0;
  if (members.length < Math.max(0, minMember - bound)) {
    const boundText = bound > 0 ? ` and ${bound} already bound` : '';
    errors.push(
      new InputError(
        { ...where, field: 'spec.minMember' },
        `minMember ${minMember} cannot be met: the input has ${members.length} pending member pod${members.length === 1 ? '' : 's'}` +
          ` (${podNames(members)})${boundText}; add the missing pods or lower minMember`,
      ),
    );
    return undefined;
  }

  const hashed: Hashed[] = [];
  for (const m of members) {
    const r = roleHash(m.pod, m.where);
    if (r.error) errors.push(r.error);
    else hashed.push({ ...m, hash: r.hash! });
  }
  if (hashed.length < members.length) return undefined;

  // Sub-groups: default-group members, and the instances of each policy.
  const policies = pg.spec.subGroupPolicy ?? [];
  const inDefault: Hashed[] = [];
  const instances = new Map<string, Instance>();
  const instanceOf = (m: Member): Instance | undefined => {
    const at = policyOf(m.pod, policies);
    if (at === undefined) return undefined;
    const key = JSON.stringify([at.policy, ...at.values]);
    let inst = instances.get(key);
    if (inst === undefined) {
      inst = { policy: at.policy, values: at.values, pending: [], bound: [] };
      instances.set(key, inst);
    }
    return inst;
  };
  for (const m of hashed) {
    const inst = instanceOf(m);
    if (inst) inst.pending.push(m);
    else inDefault.push(m);
  }
  for (const m of [...group.bound].sort(byName)) instanceOf(m)?.bound.push(m);

  // An instance with pending pods must be of one role (it is placed within one PodSet).
  let failed = false;
  const byPolicy = policies.map(() => [] as Instance[]);
  for (const inst of instances.values()) {
    const p = policies[inst.policy]!;
    const at = `spec.subGroupPolicy[${inst.policy}]`;
    byPolicy[inst.policy]!.push(inst);
    if (inst.pending.length === 0) continue;
    const shapes = new Map<string, string[]>();
    for (const m of inst.pending) shapes.set(m.hash, [...(shapes.get(m.hash) ?? []), m.pod.metadata.name]);
    if (shapes.size > 1) {
      const list = [...shapes].map(([h, names]) => `${names.join(', ')}: role ${h}`).join('; ');
      errors.push(
        new InputError(
          { ...where, field: at },
          `${describeInstance(p, inst.values)} mixes pod shapes (${list}). An instance is placed as one slice of one PodSet, ` +
            'and a PodSet holds pods of one shape (containers, resources, node selection, tolerations), so an instance is ' +
            'accepted only when all its pods have the same shape: give them the same pod spec, or split them with matchLabelKeys',
        ),
      );
      failed = true;
    }
  }
  policies.forEach((p, i) => {
    const min = p.minSubGroups ?? 0;
    const have = byPolicy[i]!.length;
    if (have >= min) return;
    const list = byPolicy[i]!.map((inst) => instanceId(p, inst.values)).join('; ');
    errors.push(
      new InputError(
        { ...where, field: `spec.subGroupPolicy[${i}].minSubGroups` },
        `minSubGroups ${min} cannot be met: the input has ${have} instance${have === 1 ? '' : 's'} of subGroupPolicy ` +
          `${JSON.stringify(p.name)}${have > 0 ? ` (${list})` : ''}; add the missing pods or lower minSubGroups`,
      ),
    );
    failed = true;
  });
  if (failed) return undefined;

  const plainTemplate = (pod: Pod) => volcanoPodSetTemplate({ metadata: pod.metadata, spec: pod.spec }, {});
  const podSets = podSetsByRole(inDefault, (hash) => hash, plainTemplate);
  policies.forEach((p, i) => {
    const size = p.subGroupSize ?? 1;
    const prefix = policyPrefix(p.name);
    const mine = byPolicy[i]!;
    // Instances with nothing pending and subGroupSize pods bound are ready already.
    const ready = mine.filter((inst) => inst.pending.length === 0 && inst.bound.length >= size).length;
    const roles = new Map<string, Instance[]>();
    for (const inst of mine) {
      if (inst.pending.length === 0) continue;
      inst.pending.sort(byName);
      const hash = inst.pending[0]!.hash;
      roles.set(hash, [...(roles.get(hash) ?? []), inst]);
    }
    for (const hash of [...roles.keys()].sort()) {
      // Instances in the order of their first pod's name; pods by name within each.
      const insts = roles.get(hash)!.sort((a, b) => byName(a.pending[0]!, b.pending[0]!));
      const info: SubgroupInfo = {
        policy: p.name,
        size,
        minSubGroups: p.minSubGroups ?? 0,
        ready,
        instances: insts.map((inst) => ({
          id: (p.matchLabelKeys ?? []).map((k, j) => `${k}=${inst.values[j]}`).join(', '),
          pending: inst.pending.length,
          ...(inst.bound.length > 0 ? { bound: inst.bound.length, nodes: inst.bound.map((m) => m.pod.spec.nodeName!) } : {}),
        })),
      };
      const annotations = {
        ...partitionAnnotations(size, networkTopologyOf(p)),
        [SUBGROUP_INSTANCES_ANNOTATION]: formatSubgroupInfo(info),
      };
      // The matchLabelKeys labels tell instances apart: no one value speaks for the PodSet.
      const pod = insts[0]!.pending[0]!.pod;
      const kept: StringMap = { ...pod.metadata.labels };
      for (const k of p.matchLabelKeys ?? []) delete kept[k];
      const labels = Object.keys(kept).length > 0 ? kept : undefined;
      const template = volcanoPodSetTemplate({ metadata: { ...pod.metadata, labels }, spec: pod.spec }, {}, annotations);
      podSets.push({ name: `${prefix}-${hash}`, template, count: insts.reduce((n, inst) => n + inst.pending.length, 0) });
    }
  });
  if (podSets.length > MAX_PODSETS) {
    const what =
      policies.length > 0
        ? 'pod role (distinct pod shape) per subGroupPolicy and in the default group'
        : 'pod role (distinct pod shape) among its members';
    errors.push(tooManyPodSets(where, 'metadata.name', what, podSets.length));
    return undefined;
  }

  // Gang: max(minMember, sum of minSubGroups x subGroupSize) less the bound members (header).
  const subGroupMin = policies.reduce((n, p) => n + (p.minSubGroups ?? 0) * (p.subGroupSize ?? 1), 0);
  const gang = Math.max(0, Math.max(minMember, subGroupMin) - bound);
  const annotations = volcanoWorkloadAnnotations(networkTopologyOf(pg.spec), gang, pg.spec.queue);
  return volcanoOwnedWorkload(pg, podSets, annotations, pg.spec.priorityClassName);
}

/**
 * The PodSet a member pod of `pg` belongs to in the PodGroup's Workload (header, step 3):
 * `<policy prefix>-<role>` for a member of a subGroupPolicy, else its role hash. The
 * pod-group controller matches pods to PodSets with it at runtime.
 */
export function podGroupPodSetOf(pod: Pod, pg: VolcanoPodGroup, role: string): string {
  const at = policyOf(pod, pg.spec.subGroupPolicy ?? []);
  return at === undefined ? role : `${policyPrefix(pg.spec.subGroupPolicy![at.policy]!.name)}-${role}`;
}

/**
 * The order in which the placement fills a policy PodSet (placement/subgroups.ts), for the
 * runtime to start the admitted count of `gated` pods (one PodSet's, sorted by name) in it:
 * instance by instance (by first gated pod's name), each instance's need (subGroupSize less
 * its `others`: members past the gate or bound), then the extras in the same order. Pods
 * of an instance that cannot be ready (fewer gated pods than its need) are left out: the
 * placement never places them. Default-group pods keep their order.
 */
export function podGroupStartOrder(gated: readonly Pod[], others: readonly Pod[], pg: VolcanoPodGroup): Pod[] {
  const policies = pg.spec.subGroupPolicy ?? [];
  const instances = new Map<string, { size: number; pending: Pod[]; placed: number }>();
  for (const p of gated) {
    const at = policyOf(p, policies);
    if (at === undefined) return [...gated];
    const key = JSON.stringify([at.policy, ...at.values]);
    const inst = instances.get(key) ?? { size: policies[at.policy]!.subGroupSize ?? 1, pending: [], placed: 0 };
    inst.pending.push(p);
    instances.set(key, inst);
  }
  for (const p of others) {
    const at = policyOf(p, policies);
    const inst = at === undefined ? undefined : instances.get(JSON.stringify([at.policy, ...at.values]));
    if (inst) inst.placed++;
  }
  const ready = [...instances.values()]
    .map((inst) => ({ ...inst, need: Math.max(0, inst.size - inst.placed) }))
    .filter((inst) => inst.pending.length >= inst.need);
  return [...ready.flatMap((inst) => inst.pending.slice(0, inst.need)), ...ready.flatMap((inst) => inst.pending.slice(inst.need))];
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
  const out: PodGroupWorkloads = { workloads: [], errors: [], warnings: [], notes: [] };
  const podGroups = new Map<string, { pg: VolcanoPodGroup; where: Where; index: number }>();
  const groups = new Map<string, Group>();
  const plain: { item: SourcedObject; index: number }[] = [];
  const refused = new Set<string>();

  // 1. PodGroups.
  items.forEach((item, index) => {
    if (item.object.kind !== PodGroupKind.kind || item.object.apiVersion !== PodGroupKind.apiVersion) return;
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
    if (isGangPodGroup(pod)) plain.push({ item, index });
    if (pod.kind !== PodKind.kind) return;
    const group = pod.metadata.annotations?.[VolcanoAnnotation.PodGroupName];
    const where = whereIn(item.where, pod);
    if (group === undefined) {
      if (!hasTopologyAnnotations(pod) || podGangId(pod) !== undefined) plain.push({ item, index });
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
    const entry = groups.get(key) ?? { members: [], bound: [] };
    groups.set(key, entry);
    if (isPendingPlainPod(pod)) entry.members.push({ pod, where });
    else if (pod.spec.nodeName && pod.status?.phase !== 'Failed') entry.bound.push({ pod, where });
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

  const r = workloadsFromGangsAndPods(plain.map((p) => p.item));
  out.errors.push(...r.errors);
  out.notes.push(...r.notes);
  for (const w of r.workloads) out.workloads.push({ ...w, first: plain[w.first]!.index });

  out.workloads.sort((a, b) => a.first - b.first);
  return out;
}

export function podGroupToWorkloads(obj: KObject, ctx: IntegrationContext): ToWorkloadsResult {
  const r = workloadsFromPodGroupsAndPods([{ object: obj, where: ctx.where }]);
  return { workloads: r.workloads.map((w) => w.workload), errors: r.errors };
}

/**
 * Volcano PodGroups with their pods, and (through gang-pods.ts and pod.ts) Koordinator /
 * scheduler-plugins gangs with their PodGroups and every other plain Pod. The gang notes go
 * to the registry's notes; Volcano's `warnings` are still dropped there, as before.
 */
export const podGroupFramework = defineFramework({
  name: 'scheduling.volcano.sh/podgroup',
  kinds: [PodGroupKind, PodKind, ...GangPodGroupKinds],
  toWorkloads: podGroupToWorkloads,
  toWorkloadsAcross: (items) => {
    const r = workloadsFromPodGroupsAndPods(items);
    return { workloads: r.workloads, errors: r.errors, notes: r.notes };
  },
});
