// The table of every kind the API serves: group, version, kind, plural, singular, scope,
// short names, categories, subresources. Discovery, OpenAPI, routing, tables and errors
// all read it. The kinds are those topoqueue accepts (api/schemas.ts knownKinds, at the
// version the store keeps: Kueue's v1beta2), plus the core kinds the controllers write
// (Event, Lease) and scheduling.k8s.io PriorityClass.
//
// The store is keyed by kind only: Volcano's Job (batch.volcano.sh) and batch/v1 Job share
// the kind 'Job', and three groups have a PodGroup. `sameGroup` tells them apart.

import { CLUSTER_SCOPED_KINDS } from '../runtime/memory-store.ts';

export interface Resource {
  /** '' for the core group. */
  group: string;
  version: string;
  kind: string;
  /** The URL segment: `pods`, `workloads`. */
  plural: string;
  singular: string;
  namespaced: boolean;
  shortNames: readonly string[];
  categories: readonly string[];
  /** Has a status subresource (writes to the main resource keep the live status). */
  status: boolean;
  /** A kind compiled into kubectl: strategic merge patch applies (custom resources get 415). */
  builtIn: boolean;
}

const VERBS = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'] as const;
export const RESOURCE_VERBS: readonly string[] = VERBS;

interface Row {
  gv: string;
  kind: string;
  plural?: string;
  short?: string[];
  cat?: string[];
  status?: boolean;
}

const ROWS: readonly Row[] = [
  { gv: 'v1', kind: 'Pod', short: ['po'], cat: ['all'], status: true },
  { gv: 'v1', kind: 'Node', short: ['no'], status: true },
  { gv: 'v1', kind: 'Namespace', short: ['ns'], status: true },
  { gv: 'v1', kind: 'Event', short: ['ev'] },
  { gv: 'batch/v1', kind: 'Job', cat: ['all'], status: true },
  { gv: 'coordination.k8s.io/v1', kind: 'Lease' },
  { gv: 'scheduling.k8s.io/v1', kind: 'PriorityClass', short: ['pc'] },
  { gv: 'kueue.x-k8s.io/v1beta2', kind: 'Workload', short: ['wl'], cat: ['kueue'], status: true },
  { gv: 'kueue.x-k8s.io/v1beta2', kind: 'ClusterQueue', short: ['cq'], cat: ['kueue'], status: true },
  { gv: 'kueue.x-k8s.io/v1beta2', kind: 'LocalQueue', short: ['queue', 'queues', 'lq'], cat: ['kueue'], status: true },
  { gv: 'kueue.x-k8s.io/v1beta2', kind: 'ResourceFlavor', short: ['flavor', 'flavors', 'rf'], cat: ['kueue'] },
  { gv: 'kueue.x-k8s.io/v1beta2', kind: 'Topology', plural: 'topologies', cat: ['kueue'] },
  { gv: 'kueue.x-k8s.io/v1beta2', kind: 'Cohort', cat: ['kueue'], status: true },
  { gv: 'kueue.x-k8s.io/v1beta2', kind: 'WorkloadPriorityClass', cat: ['kueue'] },
  { gv: 'jobset.x-k8s.io/v1alpha2', kind: 'JobSet', status: true },
  { gv: 'leaderworkerset.x-k8s.io/v1', kind: 'LeaderWorkerSet', short: ['lws'], status: true },
  { gv: 'kubeflow.org/v2beta1', kind: 'MPIJob', short: ['mpij'], cat: ['kubeflow'], status: true },
  { gv: 'batch.volcano.sh/v1alpha1', kind: 'Job', short: ['vcjob', 'vj'], status: true },
  { gv: 'scheduling.volcano.sh/v1beta1', kind: 'PodGroup', short: ['podgroup-v1beta1'], status: true },
  { gv: 'topology.volcano.sh/v1alpha1', kind: 'HyperNode', short: ['hn'], status: true },
  { gv: 'training.volcano.sh/v1alpha1', kind: 'HyperJob', short: ['hj'], status: true },
  { gv: 'scheduling.sigs.k8s.io/v1alpha1', kind: 'PodGroup', short: ['koord-pg'], status: true },
  { gv: 'scheduling.x-k8s.io/v1alpha1', kind: 'PodGroup', short: ['pg', 'pgs'], status: true },
  { gv: 'topoqueue.io/v1alpha1', kind: 'SimulationEvent', short: ['simev'] },
];

/** Groups whose kinds kubectl has compiled in (strategic merge patch applies). */
const BUILT_IN_GROUPS = new Set(['', 'batch', 'coordination.k8s.io', 'scheduling.k8s.io']);

function splitGv(gv: string): { group: string; version: string } {
  const i = gv.indexOf('/');
  return i < 0 ? { group: '', version: gv } : { group: gv.slice(0, i), version: gv.slice(i + 1) };
}

export const RESOURCES: readonly Resource[] = ROWS.map((r) => {
  const { group, version } = splitGv(r.gv);
  const singular = r.kind.toLowerCase();
  return {
    group,
    version,
    kind: r.kind,
    plural: r.plural ?? (singular.endsWith('s') ? `${singular}es` : `${singular}s`),
    singular,
    namespaced: !CLUSTER_SCOPED_KINDS.has(r.kind),
    shortNames: r.short ?? [],
    categories: r.cat ?? [],
    status: r.status ?? false,
    builtIn: BUILT_IN_GROUPS.has(group),
  };
});

export const apiVersionOf = (r: Resource): string => (r.group ? `${r.group}/${r.version}` : r.version);

/** `pods`, `jobs.batch`, `workloads.kueue.x-k8s.io`: how kube-apiserver names a resource in messages. */
export const qualifiedName = (r: Resource): string => (r.group ? `${r.plural}.${r.group}` : r.plural);

/** The group of an apiVersion: `batch/v1` -> `batch`, `v1` -> ''. */
export function groupOf(apiVersion: string | undefined): string {
  if (!apiVersion) return '';
  const i = apiVersion.indexOf('/');
  return i < 0 ? '' : apiVersion.slice(0, i);
}

/** Does a stored object belong to this resource (same kind, same group)? */
export function sameGroup(r: Resource, obj: { apiVersion?: string }): boolean {
  return groupOf(obj.apiVersion) === r.group;
}

const BY_PATH = new Map(RESOURCES.map((r) => [`${r.group}/${r.version}/${r.plural}`, r]));
const BY_GVK = new Map(RESOURCES.map((r) => [`${apiVersionOf(r)}\u0000${r.kind}`, r]));

export function resourceAt(group: string, version: string, plural: string): Resource | undefined {
  return BY_PATH.get(`${group}/${version}/${plural}`);
}

export function resourceFor(apiVersion: string, kind: string): Resource | undefined {
  return BY_GVK.get(`${apiVersion}\u0000${kind}`);
}

/** Served group/versions, core first, in table order. */
export function groupVersions(): { group: string; version: string; resources: Resource[] }[] {
  const out = new Map<string, { group: string; version: string; resources: Resource[] }>();
  for (const r of RESOURCES) {
    const k = apiVersionOf(r);
    const e = out.get(k) ?? { group: r.group, version: r.version, resources: [] };
    e.resources.push(r);
    out.set(k, e);
  }
  return [...out.values()];
}

/** Every kind the store holds objects of (a kind shared by groups appears once). */
export function storedKinds(): string[] {
  return [...new Set(RESOURCES.map((r) => r.kind))];
}
