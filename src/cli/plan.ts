// `topoqueue plan`: one placement pass over manifests, no controllers. Pure: objects in,
// Workloads with the status a scheduler would write out.
//
// 1. sort the objects; build a snapshot per TAS flavor with the usage of bound Pods and
//    of Workloads that already have `status.admission`;
// 2. turn Jobs, JobSets, LeaderWorkerSets and unbound Pods into Workloads (integrations);
// 3. plan every pending Workload in input order, each against the usage of those planned
//    before it; or, with `replaceNode`, repair the admitted Workloads that use that node;
//    or, when the input has ClusterQueues, run Kueue's admission cycles (plan-queues.ts).

import { InputError, type Where } from '../api/errors.ts';
import type { ParsedObject } from '../api/manifest.ts';
import type { Condition, Pod, PodSetAssignment, Workload } from '../api/objects.ts';
import { isTerminal } from '../api/objects.ts';
import { VolcanoAnnotation, VolcanoApiVersion, VolcanoLabel } from '../api/volcano-objects.ts';
import { formatResourceAmount, type ResourceAmounts } from '../api/resources.ts';
import { validatePodSetTopologyRequests } from '../api/topology-request.ts';
import { workloadsFromObjects } from '../integrations/integration.ts';
import { encodeV1beta2 } from '../placement/assignment-codec.ts';
import { workloadHasNetworkTopology } from '../placement/network-topology.ts';
import { replaceFailedNode, snapshotUsage, unknownNodeError } from '../placement/node-replacement.ts';
import { DEFAULT_GATES, type FeatureGates, type Profile, profileFromGates } from '../placement/request.ts';
import { type Explanation, explainTopology } from '../placement/explain.ts';
import { placeWorkload, type PodSetPlacement, type RunningPods, type WorkloadPlacementOptions } from '../placement/workload-placement.ts';
import { KueueApiVersion } from '../api/api-versions.ts';
import { apiGroup, manifestUid, workloadNameForOwner } from '../integrations/workload-name.ts';
import { type Refused, whereKey } from './load.ts';
import { hasQueues, planWithQueues } from './plan-queues.ts';
import { buildTasCluster, isAdmitted, isFinished, recordWorkloadUsage, sortObjects } from './cluster-input.ts';

export interface PlanOptions {
  gates?: Partial<FeatureGates>;
  /** Short form for the profile gates; wins over them. */
  profile?: Profile;
  /** Failed Nodes (by metadata.name) to repair together instead of planning. */
  replaceNode?: string | readonly string[];
  /** Objects the loader refused: each Workload or job among them is reported deactivated. */
  refused?: readonly Refused[];
  /** `--explain`: why each Workload still waits (placement/explain.ts). */
  explain?: boolean;
}

export interface PlanResult {
  workloads: Workload[];
  errors: InputError[];
  notes: string[];
  /** With `explain`: one per Workload left without an admission (not the deactivated ones), in output order. */
  explanations?: Explanation[];
}

export const KNOWN_GATES = Object.keys(DEFAULT_GATES) as (keyof FeatureGates)[];

/** Parses `NAME=true|false,...` against the known gates. */
export function parseFeatureGates(text: string): Partial<FeatureGates> {
  const out: Partial<FeatureGates> = {};
  for (const part of text
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean)) {
    const m = /^([A-Za-z0-9]+)=(true|false)$/.exec(part);
    if (!m) throw new InputError({ field: '--feature-gates' }, `"${part}" is not NAME=true|false`);
    if (!(KNOWN_GATES as string[]).includes(m[1]!)) {
      throw new InputError({ field: '--feature-gates' }, `unknown feature gate "${m[1]}"; known: ${KNOWN_GATES.join(', ')}`);
    }
    out[m[1] as keyof FeatureGates] = m[2] === 'true';
  }
  return out;
}

function condition(type: string, status: Condition['status'], reason: string, message: string): Condition {
  return { type, status, reason, message };
}

function setConditions(w: Workload, conditions: Condition[]): void {
  const kept = (w.status?.conditions ?? []).filter((c) => !conditions.some((n) => n.type === c.type));
  w.status = { ...(w.status ?? {}), conditions: [...kept, ...conditions] };
}

/** The admission a scheduler writes for a placed Workload. */
export function admit(w: Workload, placed: readonly PodSetPlacement[], gates: FeatureGates): void {
  const byName = new Map(placed.map((p) => [p.name, p]));
  const podSetAssignments: PodSetAssignment[] = w.spec.podSets.map((ps) => {
    const p = byName.get(ps.name);
    if (!p) return { name: ps.name, count: ps.count };
    return {
      name: ps.name,
      flavors: Object.fromEntries(resourceNames(p.perPod).map((r) => [r, p.flavor])),
      resourceUsage: Object.fromEntries(
        resourceNames(p.perPod).map((r) => [r, formatResourceAmount(r, (p.perPod[r] ?? (r === 'pods' ? 1 : 0)) * p.count)]),
      ),
      count: p.count,
      topologyAssignment: encodeV1beta2(p.assignment, { encodingByHostnamePrefix: gates.TASAssignmentsEncodingByHostnamePrefix }),
    };
  });
  // Without queues in the input there is no ClusterQueue to name: `plan` leaves it out.
  const cq = w.spec.queueName;
  w.status = { ...(w.status ?? {}), admission: { ...(cq ? { clusterQueue: cq } : {}), podSetAssignments } };
  setConditions(w, [
    condition('QuotaReserved', 'True', 'QuotaReserved', cq ? `Quota reserved in ClusterQueue ${cq}` : 'Quota reserved'),
    condition('Admitted', 'True', 'Admitted', 'The workload is admitted'),
  ]);
}

/** Resources the PodSet requests; a pod with no requests still takes one `pods`. */
function resourceNames(a: ResourceAmounts): string[] {
  const names = Object.keys(a)
    .filter((k) => a[k]! > 0)
    .sort();
  return names.length > 0 ? names : ['pods'];
}

export function pending(w: Workload, message: string): void {
  setConditions(w, [condition('QuotaReserved', 'False', 'Pending', message)]);
}

/**
 * A Workload that breaks a rule is deactivated, as Kueue does with one violating the TAS
 * rules (KEP-2724): `spec.active: false`, never admitted, the rule as its reason.
 */
export function deactivate(w: Workload, why: string): void {
  w.spec = { ...w.spec, active: false };
  setConditions(w, [
    condition('QuotaReserved', 'False', 'Inactive', why),
    condition('Evicted', 'True', 'Deactivated', `The workload is deactivated due to ${why}`),
  ]);
}

/** Kinds that describe the cluster rather than work: refusing one makes no Workload. */
const CLUSTER_KINDS = new Set([
  'Node',
  'Namespace',
  'Topology',
  'ResourceFlavor',
  'HyperNode',
  'ClusterQueue',
  'LocalQueue',
  'Cohort',
  'WorkloadPriorityClass',
  'SimulationEvent',
]);

/**
 * The not-admitted Workload of each refused Workload or job (a Workload object keeps its
 * name; a job's gets the name its integration would give it), with the refusal as reason.
 */
export function refusedWorkloads(refused: readonly Refused[]): Workload[] {
  const out: Workload[] = [];
  for (const { object: o, errors } of refused) {
    if (CLUSTER_KINDS.has(o.kind)) continue;
    const why = errors.map((e) => (e.where.field ? `${e.where.field}: ${e.detail}` : e.detail)).join('; ');
    const namespace = typeof o.metadata.namespace === 'string' && o.metadata.namespace !== '' ? o.metadata.namespace : 'default';
    const isWorkload = o.kind === 'Workload';
    const group = apiGroup(o.apiVersion);
    const uid = typeof o.metadata.uid === 'string' ? o.metadata.uid : manifestUid(group, o.kind, namespace, o.metadata.name);
    const w: Workload = {
      apiVersion: KueueApiVersion.V1beta2,
      kind: 'Workload',
      metadata: {
        name: isWorkload ? o.metadata.name : workloadNameForOwner({ kind: o.kind, group, name: o.metadata.name, uid }),
        namespace,
        ...(isWorkload
          ? {}
          : { ownerReferences: [{ apiVersion: o.apiVersion, kind: o.kind, name: o.metadata.name, uid, controller: true }] }),
      },
      spec: { podSets: [] },
    };
    deactivate(w, why);
    out.push(w);
  }
  return out;
}

export function plan(objects: readonly ParsedObject[], options: PlanOptions = {}): PlanResult {
  const gates: FeatureGates = { ...DEFAULT_GATES, ...(options.gates ?? {}) };
  if (options.profile === 'BalancedPlacement') gates.TASBalancedPlacement = true;
  if (options.profile === 'BestFit') gates.TASProfileMixed = false;
  const profile: Profile = options.profile ?? profileFromGates(gates);
  const placementOptions: WorkloadPlacementOptions = {
    profile,
    respectPreferredAffinity: gates.TASRespectNodeAffinityPreferred,
    multiLayerTopology: gates.TASMultiLayerTopology,
  };

  const input = sortObjects(objects);
  const queued = hasQueues(objects) && options.replaceNode === undefined;
  const cluster = buildTasCluster(input, { recordAdmitted: !queued });
  const errors = [...cluster.errors];
  const notes = [...cluster.notes];
  if (cluster.flavors.length === 0)
    notes.push('no TAS ResourceFlavor (a ResourceFlavor with spec.topologyName) in the input: nothing can be placed');

  if (options.replaceNode !== undefined) {
    const failed = typeof options.replaceNode === 'string' ? [options.replaceNode] : options.replaceNode;
    const unknown = failed.filter((node) => !input.nodes.some((n) => n.node.metadata.name === node));
    if (unknown.length > 0) {
      return {
        workloads: [],
        errors: [
          ...errors,
          ...unknown.map((node) =>
            unknownNodeError(
              node,
              input.nodes.map((n) => n.node.metadata.name),
            ),
          ),
        ],
        notes,
      };
    }
    const repaired = replaceInAdmitted(input.workloads, cluster.flavors, failed, placementOptions, gates, notes);
    return { workloads: repaired, errors, notes };
  }

  // Pending Workloads in input order: Workload objects and those built from jobs.
  const order = new Map<Where, number>(objects.map((o, i) => [o.where, i]));
  const built = workloadsFromObjects(input.others);
  errors.push(...built.errors);
  notes.push(...built.notes);
  // The cross-PodSet rules the schema checks on Workload objects hold for built ones too.
  // A job breaking them is deactivated: reported with the rule as its reason, never placed.
  const invalid = new Map<Workload, string>();
  for (const b of built.workloads) {
    const problems = validatePodSetTopologyRequests(b.workload.spec.podSets, b.source);
    if (problems.length > 0)
      invalid.set(b.workload, problems.map((e) => (e.where.field ? `${e.where.field}: ${e.detail}` : e.detail)).join('; '));
    errors.push(...problems);
  }
  const todo: { workload: Workload; where: Where; at: number }[] = [
    ...input.workloads
      .filter((w) => !isAdmitted(w.workload) && !isFinished(w.workload))
      .map((w) => ({ ...w, at: order.get(w.where) ?? 0 })),
    ...built.workloads
      .filter((b) => !invalid.has(b.workload))
      .map((b) => ({ workload: b.workload, where: b.source, at: order.get(b.source) ?? objects.length })),
  ].sort((a, b) => a.at - b.at);

  const refused = [
    ...refusedWorkloads([...(options.refused ?? []), ...refusedByIntegrations(input.others, built)]),
    ...[...invalid].map(([workload, why]) => {
      const w = structuredClone(workload);
      deactivate(w, why);
      return w;
    }),
  ];

  if (queued) {
    const r = planWithQueues({ objects, input, cluster, pending: todo, gates, placement: placementOptions, explain: options.explain });
    return {
      workloads: [...r.workloads, ...refused],
      errors: [...errors, ...r.errors],
      notes: [...notes, ...r.notes],
      ...(r.explanations ? { explanations: r.explanations } : {}),
    };
  }

  const out: Workload[] = [];
  // `--explain`: each Workload explained when it fails, against the usage it was tried on.
  const explanations: Explanation[] = [];
  for (const { workload, where } of todo) {
    const w = structuredClone(workload);
    const tree = cluster.hyperNodeTree;
    if (tree && !tree.ready && workloadHasNetworkTopology(w)) {
      // The peer skips every job with a network topology while the tree is broken.
      pending(
        w,
        `hyperNodes are not ready for scheduling: ${tree.problems
          .filter((p) => p.reason !== 'InvalidMember')
          .map((p) => p.message)
          .join('; ')}`,
      );
      if (options.explain) explanations.push(explainWaiting(w, cluster.flavors, placementOptions));
      out.push(w);
      continue;
    }
    let result;
    try {
      result = placeWorkload(
        w,
        cluster.flavors,
        placementOptions,
        runningPodsOf(
          w,
          input.pods.map((p) => p.pod),
        ),
      );
    } catch (e) {
      errors.push(
        e instanceof InputError
          ? new InputError({ ...where, field: e.where.field }, e.detail)
          : new InputError(where, (e as Error).message),
      );
      continue;
    }
    if (result.ok) {
      admit(w, result.podSets, gates);
      errors.push(...recordWorkloadUsage(cluster.flavors, w, where));
    } else {
      pending(w, result.reason);
      if (options.explain) explanations.push(explainWaiting(w, cluster.flavors, placementOptions));
    }
    out.push(w);
  }
  return { workloads: [...out, ...refused], errors, notes, ...(options.explain ? { explanations } : {}) };
}

/**
 * `--explain` without queues, for a Workload that just failed (against the usage it was
 * tried on). There is no quota: a Workload the topology would take waits for what its
 * condition says (HyperNodes not ready).
 */
function explainWaiting(w: Workload, flavors: Parameters<typeof explainTopology>[1], options: WorkloadPlacementOptions): Explanation {
  const c = w.status?.conditions?.find((x) => x.type === 'QuotaReserved' && x.status === 'False');
  const e = explainTopology(w, flavors, options);
  return e.stoppedBy.length === 0 && c?.message ? { ...e, other: c.message } : e;
}

/** The jobs an integration refused (they made no Workload), each with its errors. */
function refusedByIntegrations(others: readonly ParsedObject[], built: ReturnType<typeof workloadsFromObjects>): Refused[] {
  const key = whereKey;
  const madeWorkload = new Set(built.workloads.map((b) => key(b.source)));
  const byKey = new Map<string, InputError[]>();
  for (const e of built.errors) {
    if (e.where.object === undefined || madeWorkload.has(key(e.where))) continue;
    byKey.set(key(e.where), [...(byKey.get(key(e.where)) ?? []), e]);
  }
  const out: Refused[] = [];
  for (const o of others) {
    const errors = byKey.get(key(o.where));
    if (errors) out.push({ object: o.object, where: o.where, errors });
  }
  return out;
}

/**
 * Bound, non-terminal pods of a Volcano job (label `volcano.sh/job-name`) or PodGroup
 * (annotation `scheduling.k8s.io/group-name`): the job already runs there.
 */
export function runningPodsOf(w: Workload, pods: readonly Pod[]): RunningPods | undefined {
  const owner = w.metadata.ownerReferences?.[0];
  if (!owner || !workloadHasNetworkTopology(w)) return undefined;
  const ns = w.metadata.namespace ?? 'default';
  const byJob = owner.kind === 'Job' && owner.apiVersion === VolcanoApiVersion.Job;
  const byGroup = owner.kind === 'PodGroup';
  if (!byJob && !byGroup) return undefined;
  const nodes: string[] = [];
  const perPodSet = new Map<string, number>();
  for (const p of pods) {
    if ((p.metadata.namespace ?? 'default') !== ns || !p.spec.nodeName) continue;
    if (isTerminal(p)) continue;
    const mine = byJob
      ? p.metadata.labels?.[VolcanoLabel.JobName] === owner.name
      : p.metadata.annotations?.[VolcanoAnnotation.PodGroupName] === owner.name;
    if (!mine) continue;
    nodes.push(p.spec.nodeName);
    // A PodGroup's Workload covers only its pending pods: running ones bound the domain
    // but are not subtracted again.
    if (byGroup) continue;
    const task = p.metadata.labels?.[VolcanoLabel.TaskSpec]?.toLowerCase();
    const ps = w.spec.podSets.find((x) => x.name === task) ?? w.spec.podSets[0]!;
    perPodSet.set(ps.name, (perPodSet.get(ps.name) ?? 0) + 1);
  }
  return nodes.length > 0 ? { nodes, perPodSet } : undefined;
}

/**
 * `--replace-node` (one or more): every admitted Workload whose assignment uses the nodes, through the
 * same procedure as the scheduler's second pass (placement/node-replacement.ts): repaired,
 * kept as it is (owned by a single Pod), or with the eviction condition.
 */
function replaceInAdmitted(
  workloads: { workload: Workload; where: Where }[],
  flavors: Parameters<typeof placeWorkload>[1],
  nodes: readonly string[],
  options: WorkloadPlacementOptions,
  gates: FeatureGates,
  notes: string[],
): Workload[] {
  const out: Workload[] = [];
  for (const { workload, where } of workloads) {
    if (!isAdmitted(workload) || isFinished(workload)) continue;
    const w = structuredClone(workload);
    const r = replaceFailedNode({ workload: w, where, nodes, flavors, usage: snapshotUsage(flavors, w), placement: options, gates });
    if (r.kind === 'skip' && r.why === 'not-assigned') continue;
    const name = `Workload ${w.metadata.namespace ?? 'default'}/${w.metadata.name}`;
    if (r.kind === 'skip') notes.push(`${name} keeps its assignment: it is owned by a single Pod (SkipReassignmentForPodOwnedWorkloads)`);
    else if (r.kind === 'failed') {
      notes.push(`${name}: ${r.reason}`);
      setConditions(w, [r.condition]);
    } else w.status!.admission!.podSetAssignments = r.podSetAssignments;
    out.push(w);
  }
  if (out.length === 0)
    notes.push(
      `no admitted Workload in the input uses ${nodes.length === 1 ? `node ${nodes[0]}` : `nodes ${nodes.join(', ')}`}: nothing to repair`,
    );
  return out;
}
