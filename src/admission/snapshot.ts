// What one scheduling cycle reads and assumes into (kueue-core.md §1b step 2): the
// ClusterQueues with their quotas as a tree, the flavors, the TAS snapshots, and every
// Workload holding a quota reservation with its usage. Built once from objects and then
// kept up to date (admit, evict, finish), like Kueue's cache; a cycle adds what it admits.
//
// Quota amounts are numbers in the project's units (cpu in millicores; api/resources.ts).

import type { KObject, ResourceFlavor, StringMap, Workload } from '../api/objects.ts';
import { InputError, type Where } from '../api/errors.ts';
import { parseQuantity } from '../api/quantity.ts';
import type {
  ClusterQueue,
  ClusterQueuePreemption,
  Cohort,
  FlavorFungibility,
  LocalQueue,
  QueueingStrategy,
  ResourceGroup,
  StopPolicy,
} from '../api/queues.ts';
import { resourceAmount, type ResourceAmounts } from '../api/resources.ts';
import type { LabelSelector } from '../api/volcano-objects.ts';
import type { Assignment } from '../placement/assignment.ts';
import { forgetWorkloadUsage, recordAssignmentUsage, usageKey } from '../placement/tas-usage.ts';
import type { TasFlavor } from '../placement/workload-placement.ts';
import type { NominationMemo } from './equivalence.ts';
import type { FlavorAssignerMemo } from './flavor-assigner.ts';
import { fr, type FR, FrKeys, QuotaTree, type QuotaNodeSpec, type ResourceQuota } from './quota.ts';

export interface ResourceGroupInfo {
  covered: string[];
  /** Flavor names in the ClusterQueue's order. */
  flavors: string[];
}

export interface ClusterQueueInfo {
  name: string;
  cohort?: string;
  strategy: QueueingStrategy;
  namespaceSelector?: LabelSelector;
  /** The selector is `{}` (matches every namespace): read once, every head asks. */
  everyNamespace: boolean;
  preemption: ClusterQueuePreemption;
  fungibility: FlavorFungibility;
  stopPolicy: StopPolicy;
  resourceGroups: ResourceGroupInfo[];
  /** Resource name -> index in resourceGroups. */
  groupOf: Map<string, number>;
  /** Every flavor is a TAS flavor: PodSets without a topology request use TAS implicitly. */
  allTas: boolean;
  /** Every resource group has exactly one flavor: flavor assignment has no choice to make. */
  oneFlavorPerGroup: boolean;
  /** Some resource group covers `pods` (groupOf.has('pods'), read once: every head asks). */
  coversPods: boolean;
  /** Set when the ClusterQueue admits nothing new (reason, message), as its Active condition says. */
  inactive?: { reason: string; message: string };
  /** Its node in the snapshot's quota tree (QuotaTree.clusterQueueIndex), for the `...At` reads. */
  quotaIndex: number;
}

/** One PodSet of a reservation: what the admission says, and the TAS usage behind it. */
export interface PodSetAdmission {
  name: string;
  count: number;
  /** Resource -> flavor. */
  flavors: Record<string, string>;
  /** Per-pod requests (without `pods`). */
  perPod: ResourceAmounts;
  /** Total quota usage of the PodSet per resource (with `pods` when the ClusterQueue covers it). */
  usage: ResourceAmounts;
  /** TAS flavor and assignment, when the PodSet is placed on a topology. */
  tasFlavor?: string;
  assignment?: Assignment;
}

/** The reservations of one ClusterQueue, and its node in the quota tree (-1: none). */
interface Reservations {
  quotaIndex: number;
  admitted: Map<string, AdmittedWorkload>;
}

/** A Workload holding a quota reservation. */
export interface AdmittedWorkload {
  key: string;
  workload: Workload;
  clusterQueue: string;
  priority: number;
  /** When the reservation was made (seconds); preemption prefers the most recent. */
  reservedAt: number;
  podSets: PodSetAdmission[];
  /** Quota usage per flavor-resource. */
  usage: Map<FR, number>;
  /** Gang group id, when the Workload is a gang: its group is preempted whole. */
  gangGroup?: string;
  /** Gang id (`ns/name`). */
  gangId?: string;
  /** A NonStrict gang accumulating below its minimum: holds quota, is not admitted. */
  reservedOnly?: boolean;
}

export interface SnapshotInput {
  clusterQueues: readonly { object: ClusterQueue; where?: Where }[];
  cohorts?: readonly { object: Cohort; where?: Where }[];
  localQueues?: readonly LocalQueue[];
  flavors: readonly ResourceFlavor[];
  tasFlavors?: readonly TasFlavor[];
  /** Namespace name -> labels (Namespace objects); namespaces not listed have no labels. */
  namespaces?: ReadonlyMap<string, StringMap>;
  /** WorkloadPriorityClass name -> value. */
  priorityClasses?: ReadonlyMap<string, number>;
}

export const workloadKey = (w: KObject): string => `${w.metadata.namespace ?? 'default'}/${w.metadata.name}`;

function amount(resource: string, q: string | undefined, where: Where | undefined, field: string): number | undefined {
  if (q === undefined) return undefined;
  try {
    return resourceAmount(resource, parseQuantity(q));
  } catch (e) {
    throw new InputError({ ...(where ?? {}), field }, `${JSON.stringify(q)} is not a quantity of ${resource}: ${(e as Error).message}`);
  }
}

function quotaSpecs(groups: readonly ResourceGroup[] | undefined, where: Where | undefined, keys: FrKeys): Map<FR, ResourceQuota> {
  const out = new Map<FR, ResourceQuota>();
  (groups ?? []).forEach((g, i) =>
    g.flavors.forEach((f, j) =>
      f.resources.forEach((r, k) => {
        const field = `spec.resourceGroups[${i}].flavors[${j}].resources[${k}]`;
        out.set(keys.of(f.name, r.name), {
          nominal: amount(r.name, r.nominalQuota, where, `${field}.nominalQuota`) ?? 0,
          borrowingLimit: amount(r.name, r.borrowingLimit, where, `${field}.borrowingLimit`),
          lendingLimit: amount(r.name, r.lendingLimit, where, `${field}.lendingLimit`),
        });
      }),
    ),
  );
  return out;
}

/** Integer per-pod amounts and counts: recording them changes free and TAS usage by exactly opposite amounts. */
function integral(ps: PodSetAdmission): boolean {
  for (const r in ps.perPod) if (!Number.isSafeInteger(ps.perPod[r])) return false;
  for (const d of ps.assignment?.domains ?? []) if (!Number.isSafeInteger(d.count)) return false;
  return true;
}

export class AdmissionSnapshot {
  readonly quota: QuotaTree;
  readonly clusterQueues = new Map<string, ClusterQueueInfo>();
  /** `ns/name` -> LocalQueue. */
  readonly localQueues = new Map<string, LocalQueue>();
  readonly flavors = new Map<string, ResourceFlavor>();
  readonly tas = new Map<string, TasFlavor>();
  readonly tasList: TasFlavor[];
  readonly namespaces: ReadonlyMap<string, StringMap>;
  readonly priorityClasses: ReadonlyMap<string, number>;
  readonly admitted = new Map<string, AdmittedWorkload>();
  /**
   * The same reservations by ClusterQueue (with its quota tree node: one lookup per
   * reservation), and the gang ones by gang id and with a gang group (kept by addAdmitted /
   * removeAdmitted). Every ClusterQueue has its entry from the start.
   */
  private readonly byClusterQueue = new Map<string, Reservations>();
  private readonly byGangId = new Map<string, Map<string, AdmittedWorkload>>();
  private readonly inGangGroups = new Map<string, AdmittedWorkload>();
  /** Per TAS snapshot: the latest run of usage versions made only by TAS usage recorded here (tasUsageOnlySince). */
  private readonly tasRuns = new Map<TasFlavor['snapshot'], { start: number; end: number }>();
  /** Problems found while building (bad quantities): the ClusterQueue is left inactive. */
  readonly errors: InputError[] = [];
  /** Interned `flavor/resource` keys of the quota maps, for lookups in a loop. */
  readonly frKeys = new FrKeys();
  /** What flavor assignment (flavor-assigner.ts) remembers between calls on this snapshot; set there on first use. */
  assignerMemo: FlavorAssignerMemo | undefined;
  /** What nomination remembers between cycles on this snapshot (equivalence.ts); set there on first use. */
  nominationMemo: NominationMemo | undefined;
  /** Bumped by every addAdmitted and removeAdmitted: the reservations and quota usage change only with it. */
  admittedVersion = 0;

  constructor(input: SnapshotInput) {
    for (const f of input.flavors) this.flavors.set(f.metadata.name, f);
    this.tasList = [...(input.tasFlavors ?? [])];
    for (const t of this.tasList) this.tas.set(t.flavor.metadata.name, t);
    this.namespaces = input.namespaces ?? new Map();
    this.priorityClasses = input.priorityClasses ?? new Map();
    for (const lq of input.localQueues ?? []) this.localQueues.set(workloadKey(lq), lq);

    const specs: QuotaNodeSpec[] = [];
    for (const { object: c, where } of input.cohorts ?? []) {
      let quotas = new Map<FR, ResourceQuota>();
      try {
        quotas = quotaSpecs(c.spec.resourceGroups, where, this.frKeys);
      } catch (e) {
        this.errors.push(e as InputError);
      }
      specs.push({ name: c.metadata.name, kind: 'Cohort', parent: c.spec.parentName || undefined, quotas });
    }
    for (const { object: cq, where } of input.clusterQueues) {
      const info = this.clusterQueueInfo(cq);
      let quotas = new Map<FR, ResourceQuota>();
      try {
        quotas = quotaSpecs(cq.spec.resourceGroups, where, this.frKeys);
      } catch (e) {
        this.errors.push(e as InputError);
        info.inactive ??= { reason: 'Misconfigured', message: (e as InputError).detail };
      }
      this.clusterQueues.set(info.name, info);
      specs.push({ name: info.name, kind: 'ClusterQueue', parent: info.cohort, quotas });
    }
    this.quota = new QuotaTree(specs);
    for (const info of this.clusterQueues.values()) {
      info.quotaIndex = this.quota.clusterQueueIndex(info.name);
      this.byClusterQueue.set(info.name, { quotaIndex: info.quotaIndex, admitted: new Map() });
    }
  }

  private clusterQueueInfo(cq: ClusterQueue): ClusterQueueInfo {
    const s = cq.spec;
    const groups: ResourceGroupInfo[] = (s.resourceGroups ?? []).map((g) => ({
      covered: [...g.coveredResources],
      flavors: g.flavors.map((f) => f.name),
    }));
    const groupOf = new Map<string, number>();
    groups.forEach((g, i) => g.covered.forEach((r) => groupOf.set(r, i)));
    const flavorNames = groups.flatMap((g) => g.flavors);
    const info: ClusterQueueInfo = {
      name: cq.metadata.name,
      cohort: s.cohortName || undefined,
      strategy: s.queueingStrategy,
      namespaceSelector: s.namespaceSelector,
      everyNamespace:
        s.namespaceSelector !== undefined &&
        s.namespaceSelector.matchLabels === undefined &&
        s.namespaceSelector.matchExpressions === undefined,
      preemption: s.preemption,
      fungibility: s.flavorFungibility,
      stopPolicy: s.stopPolicy,
      resourceGroups: groups,
      groupOf,
      allTas: flavorNames.length > 0 && flavorNames.every((f) => this.flavors.get(f)?.spec.topologyName !== undefined),
      oneFlavorPerGroup: groups.every((g) => g.flavors.length === 1),
      coversPods: groupOf.has('pods'),
      quotaIndex: -1,
    };
    // The Active condition (kueue-core §1a): stopped, or a flavor / topology missing.
    const missing = flavorNames.filter((f) => !this.flavors.has(f));
    const noTopology = flavorNames.filter((f) => this.flavors.get(f)?.spec.topologyName !== undefined && !this.tas.has(f));
    if (s.stopPolicy !== 'None')
      info.inactive = { reason: 'Stopped', message: `ClusterQueue ${info.name} is inactive: stopPolicy is ${s.stopPolicy}` };
    else if (missing.length > 0)
      info.inactive = {
        reason: 'FlavorNotFound',
        message: `ClusterQueue ${info.name} is inactive: references missing ResourceFlavor(s): ${missing.join(', ')}`,
      };
    else if (noTopology.length > 0)
      info.inactive = {
        reason: 'TopologyNotFound',
        message: `ClusterQueue ${info.name} is inactive: the Topology of flavor(s) ${noTopology.join(', ')} is missing`,
      };
    return info;
  }

  /** An admitted (not merely reserving) gang, by gang id: a satisfied member of a group. */
  admittedGang(id: string): AdmittedWorkload | undefined {
    const byKey = this.byGangId.get(id);
    if (byKey) for (const a of byKey.values()) if (!a.reservedOnly) return a;
    return undefined;
  }

  /** The reservations of one ClusterQueue (any order). */
  admittedIn(cq: string): Iterable<AdmittedWorkload> {
    return this.byClusterQueue.get(cq)?.admitted.values() ?? [];
  }

  /** The reservations that belong to a gang group (any order). */
  admittedInGangGroups(): Iterable<AdmittedWorkload> {
    return this.inGangGroups.values();
  }

  /** Indexes a reservation; its ClusterQueue's entry (made for one the snapshot does not know). */
  private index(a: AdmittedWorkload): Reservations {
    let r = this.byClusterQueue.get(a.clusterQueue);
    if (!r)
      this.byClusterQueue.set(a.clusterQueue, (r = { quotaIndex: this.quota.clusterQueueIndex(a.clusterQueue), admitted: new Map() }));
    r.admitted.set(a.key, a);
    if (a.gangId !== undefined) {
      let g = this.byGangId.get(a.gangId);
      if (!g) this.byGangId.set(a.gangId, (g = new Map()));
      g.set(a.key, a);
    }
    if (a.gangGroup !== undefined) this.inGangGroups.set(a.key, a);
    return r;
  }

  private unindex(a: AdmittedWorkload): Reservations | undefined {
    const r = this.byClusterQueue.get(a.clusterQueue);
    r?.admitted.delete(a.key);
    if (a.gangId !== undefined) {
      const g = this.byGangId.get(a.gangId);
      g?.delete(a.key);
      if (g?.size === 0) this.byGangId.delete(a.gangId);
    }
    if (a.gangGroup !== undefined) this.inGangGroups.delete(a.key);
    return r;
  }

  /** Records a reservation: quota usage up the cohort tree and TAS usage on the snapshots. */
  addAdmitted(a: AdmittedWorkload): void {
    const prev = this.admitted.get(a.key);
    if (prev) this.removeAdmitted(a.key);
    this.admittedVersion++;
    this.admitted.set(a.key, a);
    const r = this.index(a);
    if (r.quotaIndex >= 0) this.quota.addUsageOfAt(r.quotaIndex, a.usage, 1);
    for (const ps of a.podSets) {
      const tf = ps.tasFlavor !== undefined ? this.tas.get(ps.tasFlavor) : undefined;
      if (!tf || !ps.assignment) continue;
      const before = this.tasVersions();
      recordAssignmentUsage(this.tasList, tf, usageKey(a.workload, ps.name), ps.assignment, ps.perPod);
      this.noteTasUsage(tf, before, integral(ps));
    }
  }

  /** Takes a reservation back (eviction, finish, or a preemption simulation). */
  removeAdmitted(key: string): AdmittedWorkload | undefined {
    const a = this.admitted.get(key);
    if (!a) return undefined;
    this.admittedVersion++;
    this.admitted.delete(key);
    const r = this.unindex(a);
    if (r !== undefined && r.quotaIndex >= 0) this.quota.addUsageOfAt(r.quotaIndex, a.usage, -1);
    for (const ps of a.podSets) {
      const tf = ps.tasFlavor !== undefined ? this.tas.get(ps.tasFlavor) : undefined;
      if (!tf || !ps.assignment) continue;
      const before = this.tasVersions();
      forgetWorkloadUsage(this.tasList, tf, usageKey(a.workload, ps.name), ps.assignment);
      this.noteTasUsage(tf, before, integral(ps));
    }
    return a;
  }

  private tasVersions(): number[] {
    const out: number[] = [];
    for (const t of this.tasList) out.push(t.snapshot.usageVersion);
    return out;
  }

  /**
   * After recording or forgetting one assignment: on its own flavor's snapshot, TAS usage
   * alone moved (free + TAS usage per domain is unchanged, exactly so for integer amounts),
   * which extends the run of such usage versions; any other change (another flavor's
   * snapshot, where the usage is recorded as pods) ends it.
   */
  private noteTasUsage(owner: TasFlavor, before: readonly number[], exact: boolean): void {
    this.tasList.forEach((t, i) => {
      const s = t.snapshot;
      const from = before[i]!;
      const to = s.usageVersion;
      if (to === from) return;
      const run = this.tasRuns.get(s);
      if (t !== owner || !exact) this.tasRuns.set(s, { start: to, end: to });
      else if (run && run.end === from) run.end = to;
      else this.tasRuns.set(s, { start: from, end: to });
    });
  }

  /**
   * Whether every usage change of `s` since its usage version `since` was TAS usage recorded
   * or forgotten here in integer amounts: what the domains offer with no TAS Workload
   * (free + TAS usage) is then exactly what it was.
   */
  tasUsageOnlySince(s: TasFlavor['snapshot'], since: number): boolean {
    const run = this.tasRuns.get(s);
    return run !== undefined && run.start <= since && run.end === s.usageVersion;
  }

  /** Quota usage per flavor-resource of a set of PodSet admissions. */
  static usageOf(podSets: readonly PodSetAdmission[]): Map<FR, number> {
    const out = new Map<FR, number>();
    for (const ps of podSets) {
      for (const [r, v] of Object.entries(ps.usage)) {
        const flavor = ps.flavors[r];
        if (flavor === undefined) continue;
        const k = fr(flavor, r);
        out.set(k, (out.get(k) ?? 0) + v);
      }
    }
    return out;
  }
}
