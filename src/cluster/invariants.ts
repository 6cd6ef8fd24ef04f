// The simulation's invariant checker: what must hold after every step of the embedded
// cluster, whatever the controllers do. It watches the store through its own informers and
// keeps aggregates up to date from events, so a check after a step looks only at what the
// step touched:
//
// 1. events: pods, nodes, Workloads, ClusterQueues and Cohorts update the aggregates (per
//    node: requests of bound, non-terminal pods; per ClusterQueue: usage of admitted,
//    unfinished Workloads; per Workload PodSet: bound pods) and mark subjects dirty;
//    transitions (a Workload re-admitted without its admission being cleared) are judged
//    on the event itself;
// 2. step(): each dirty subject is checked (a node, a pod, a Workload, the quota tree);
// 3. full(): every subject, plus the per-domain pod counts of every Workload (run every
//    `fullEvery` steps and at the end). By default every 5,000 steps, or, in a cluster of more
//    subjects (pods, nodes, Workloads) than that, every as many steps as it has subjects: a
//    full check costs about one check per subject, so its cost stays about one check per step
//    whatever the size (every 5,000 steps over 80,000 pods made a run quadratic in its size).
//
// A violation is reported when it appears; while it persists it is not reported again.
//
// Checked (docs/simulate.md "Invariants"):
//   NodeCapacity         requests of bound non-terminal pods <= allocatable (and the pod count)
//   ClusterQueueQuota    usage <= nominal + borrowingLimit; a root cohort within its subtree quota
//   GangMinimum          an admitted gang admits at least its minimum; each PodSet within [minCount, count]
//   RequiredTopology     an assignment and the pods of a PodSet with a required level sit in one domain of it
//   PodOutsideAssignment a pod of a TAS PodSet runs on a node of its assignment's domains, at most count per domain
//   AdmittedTwice        an admission replaced without being cleared (except a failed-node replacement);
//                        more running pods in a PodSet than it was admitted with
//   PodWithoutAdmission  a running pod (not being deleted) of a Workload that holds no quota
//   GatedPodBound        a pod bound to a node while it still has scheduling gates
//   UnreadablePodRequests a bound, non-terminal pod whose requests cannot be read (a bad
//                        quantity): its node's capacity cannot be checked for it

import { KueueAnnotation, KueueLabel } from '../api/keys.ts';
import { GangAnnotation } from '../api/gang.ts';
import type { Admission, KObject, Node, Pod, Workload } from '../api/objects.ts';
import { isTerminal } from '../api/objects.ts';
import type { ClusterQueue, Cohort, ResourceGroup } from '../api/queues.ts';
import { parseQuantity } from '../api/quantity.ts';
import { parseResourceList, podRequests, resourceAmount, type ResourceAmounts } from '../api/resources.ts';
import { compareStrings } from '../api/values.ts';
import { fr, QuotaTree, type FR, type QuotaNodeSpec, type ResourceQuota } from '../admission/quota.ts';
import type { Assignment } from '../placement/assignment.ts';
import { decodeAssignment } from '../placement/tas-usage.ts';
import type { Clock } from '../runtime/clock.ts';
import { Informer } from '../runtime/informer.ts';
import { objectKey, type ObjectStore } from '../runtime/store.ts';
import { PodRequestReader, type PodRequestsRead } from './pod-requests.ts';
import { listAndWatch } from './watch.ts';

export const Invariant = {
  NodeCapacity: 'NodeCapacity',
  ClusterQueueQuota: 'ClusterQueueQuota',
  GangMinimum: 'GangMinimum',
  RequiredTopology: 'RequiredTopology',
  PodOutsideAssignment: 'PodOutsideAssignment',
  AdmittedTwice: 'AdmittedTwice',
  PodWithoutAdmission: 'PodWithoutAdmission',
  GatedPodBound: 'GatedPodBound',
  UnreadablePodRequests: 'UnreadablePodRequests',
} as const;
export type Invariant = (typeof Invariant)[keyof typeof Invariant];

export interface Violation {
  /** Seconds from the start of the run. */
  at: number;
  invariant: Invariant;
  /** `Kind/ns/name` or `Kind/name` of the object at fault. */
  object: string;
  message: string;
}

/** Steps between full checks in a cluster of up to this many subjects. */
export const DEFAULT_FULL_EVERY = 5000;

export interface InvariantCheckerOptions {
  store: ObjectStore;
  clock: Clock;
  /** Clock time (ms) that `at` counts from (default: the clock's time at construction). */
  startMs?: number;
  /**
   * A full check every this many steps. Default: every 5,000 steps, or every as many steps as
   * there are subjects (pods, nodes, Workloads) when there are more.
   */
  fullEvery?: number;
  /** Violations kept (default 1,000); `dropped` counts the rest. */
  keep?: number;
}

interface PodRec {
  node?: string;
  /** Bound and not Succeeded/Failed. */
  active: boolean;
  /** Its requests, or why they cannot be read (then it is reported, and counted only as a pod). */
  requests: PodRequestsRead;
  /** `ns/name` of its Workload (annotation kueue.x-k8s.io/workload). */
  workload?: string;
  podSet?: string;
  gated: boolean;
  running: boolean;
  /** Has a deletionTimestamp: being stopped. */
  deleting: boolean;
}

interface NodeRec {
  labels: Record<string, string>;
  allocatable: ResourceAmounts;
  ready: boolean;
}

interface PodSetPlan {
  count: number;
  minCount?: number;
  specCount: number;
  assignment?: Assignment;
  /** `values.join('\0')` -> count. */
  domains?: Map<string, number>;
  required?: string;
  /** Values of the required level over the assignment's domains. */
  requiredValues?: Set<string>;
}

interface WorkloadPlan {
  rv: string | undefined;
  podSets: Map<string, PodSetPlan>;
  unhealthy: ReadonlySet<string>;
}

const SEP = '\u0000';
const isFinished = (w: Workload) => (w.status?.conditions ?? []).some((c) => c.type === 'Finished' && c.status === 'True');
const holdsQuota = (w: Workload) => w.status?.admission !== undefined && !isFinished(w);
const ref = (o: KObject) =>
  o.metadata.namespace ? `${o.kind}/${o.metadata.namespace}/${o.metadata.name}` : `${o.kind}/${o.metadata.name}`;

export class InvariantChecker {
  readonly violations: Violation[] = [];
  /** Violations found beyond `keep`. */
  dropped = 0;
  steps = 0;
  private readonly store: ObjectStore;
  private readonly clock: Clock;
  private readonly startMs: number;
  private readonly fullEvery: number;
  /** fullEvery was not given: at least one step per subject between full checks. */
  private readonly adaptive: boolean;
  private sinceFull = 0;
  /** Full checks run so far. */
  fullChecks = 0;
  private readonly keep: number;

  private stopPods: (() => void) | undefined;
  private readonly nodes: Informer<Node>;
  private readonly workloads: Informer<Workload>;
  private readonly clusterQueues: Informer<ClusterQueue>;
  private readonly cohorts: Informer<Cohort>;

  private readonly podRecs = new Map<string, PodRec>();
  private readonly nodeRecs = new Map<string, NodeRec>();
  private readonly nodeUsed = new Map<string, { amounts: Map<string, number>; pods: number }>();
  /** Workload key -> PodSet -> pod keys that are active. */
  private readonly activeByPodSet = new Map<string, Map<string, Set<string>>>();
  private readonly plans = new Map<string, WorkloadPlan>();
  private readonly requests = new PodRequestReader();

  private quota: QuotaTree | undefined;
  private quotaConfigDirty = true;
  private quotaDirty = true;
  private readonly dirtyPods = new Set<string>();
  private readonly dirtyNodes = new Set<string>();
  private readonly dirtyWorkloads = new Set<string>();
  /** Subject -> keys of the violations currently standing for it. */
  private readonly standing = new Map<string, Set<string>>();

  constructor(opts: InvariantCheckerOptions) {
    this.store = opts.store;
    this.clock = opts.clock;
    this.startMs = opts.startMs ?? opts.clock.now();
    this.fullEvery = opts.fullEvery ?? DEFAULT_FULL_EVERY;
    this.adaptive = opts.fullEvery === undefined;
    this.keep = opts.keep ?? 1000;
    this.nodes = new Informer<Node>(this.store, 'Node');
    this.workloads = new Informer<Workload>(this.store, 'Workload');
    this.clusterQueues = new Informer<ClusterQueue>(this.store, 'ClusterQueue');
    this.cohorts = new Informer<Cohort>(this.store, 'Cohort');
    this.nodes.addHandler({
      add: (n) => this.onNode(n),
      update: (_, n) => this.onNode(n),
      delete: (n) => {
        this.nodeRecs.delete(n.metadata.name);
        this.dirtyNodes.add(n.metadata.name);
      },
    });
    this.workloads.addHandler({
      add: (w) => this.onWorkload(undefined, w),
      update: (o, w) => this.onWorkload(o, w),
      delete: (w) => this.onWorkload(w, undefined),
    });
    const quotaChanged = () => {
      this.quotaConfigDirty = true;
    };
    this.clusterQueues.addHandler({ add: quotaChanged, update: quotaChanged, delete: quotaChanged });
    this.cohorts.addHandler({ add: quotaChanged, update: quotaChanged, delete: quotaChanged });
  }

  /** Lists and watches (call before the objects to check are written, or at any time: it lists first). */
  async start(): Promise<void> {
    for (const i of this.all()) await i.start();
    this.stopPods = await listAndWatch<Pod>(this.store, 'Pod', {
      add: (p) => this.onPod(p),
      update: (_, p) => this.onPod(p),
      delete: (p) => this.onPod(p, true),
    });
  }

  stop(): void {
    for (const i of this.all()) i.stop();
    this.stopPods?.();
  }

  private all(): { start(): Promise<void>; stop(): void }[] {
    return [this.nodes, this.clusterQueues, this.cohorts, this.workloads];
  }

  /** After a step: checks what changed; every `fullEvery` steps, everything. */
  step(): void {
    this.steps++;
    if (this.fullEvery > 0 && ++this.sinceFull >= this.fullInterval()) {
      this.sinceFull = 0;
      this.full();
    } else this.incremental();
  }

  /** Steps between full checks (see the header). */
  private fullInterval(): number {
    if (!this.adaptive) return this.fullEvery;
    return Math.max(this.fullEvery, this.podRecs.size + this.nodes.size + this.workloads.size);
  }

  /** Checks every subject, including per-domain pod counts. */
  full(): void {
    this.fullChecks++;
    for (const name of this.nodeUsed.keys()) this.dirtyNodes.add(name);
    for (const key of this.podRecs.keys()) this.dirtyPods.add(key);
    for (const key of this.workloads.values()) this.dirtyWorkloads.add(objectKey(key));
    this.quotaDirty = true;
    this.incremental(true);
  }

  // ---------------------------------------------------------------------------------------
  // Events

  private onNode(n: Node): void {
    let allocatable: ResourceAmounts = {};
    try {
      allocatable = parseResourceList(n.status?.allocatable, 'status.allocatable');
    } catch {
      // A node with a bad quantity counts as having none of it.
    }
    const ready = (n.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');
    this.nodeRecs.set(n.metadata.name, { labels: n.metadata.labels ?? {}, allocatable, ready });
    this.dirtyNodes.add(n.metadata.name);
  }

  private onPod(p: Pod, deleted = false): void {
    const key = objectKey(p);
    const old = this.podRecs.get(key);
    if (old) this.unaccount(key, old);
    if (deleted) {
      this.podRecs.delete(key);
      this.dirtyPods.delete(key);
      return;
    }
    const ns = p.metadata.namespace ?? 'default';
    const wl = p.metadata.annotations?.[KueueAnnotation.Workload];
    const rec: PodRec = {
      node: p.spec.nodeName || undefined,
      active: Boolean(p.spec.nodeName) && !isTerminal(p),
      // A pod's resources never change: they are read once.
      requests: old?.requests ?? this.requests.read(p),
      workload: wl !== undefined ? `${ns}/${wl}` : undefined,
      podSet: p.metadata.labels?.[KueueLabel.PodSet],
      gated: (p.spec.schedulingGates ?? []).length > 0,
      running: p.status?.phase === 'Running',
      deleting: p.metadata.deletionTimestamp !== undefined,
    };
    this.podRecs.set(key, rec);
    this.account(key, rec);
    this.dirtyPods.add(key);
  }

  private account(key: string, r: PodRec): void {
    if (!r.active || !r.node) return;
    let u = this.nodeUsed.get(r.node);
    if (!u) this.nodeUsed.set(r.node, (u = { amounts: new Map(), pods: 0 }));
    if (r.requests.ok) for (const [res, n] of Object.entries(r.requests.requests)) u.amounts.set(res, (u.amounts.get(res) ?? 0) + n);
    u.pods++;
    this.dirtyNodes.add(r.node);
    if (r.workload !== undefined && r.podSet !== undefined) {
      let byPs = this.activeByPodSet.get(r.workload);
      if (!byPs) this.activeByPodSet.set(r.workload, (byPs = new Map()));
      let s = byPs.get(r.podSet);
      if (!s) byPs.set(r.podSet, (s = new Set()));
      s.add(key);
    }
  }

  private unaccount(key: string, r: PodRec): void {
    if (!r.active || !r.node) return;
    const u = this.nodeUsed.get(r.node);
    if (u) {
      if (r.requests.ok) for (const [res, n] of Object.entries(r.requests.requests)) u.amounts.set(res, (u.amounts.get(res) ?? 0) - n);
      u.pods--;
      if (u.pods === 0) this.nodeUsed.delete(r.node);
    }
    this.dirtyNodes.add(r.node);
    if (r.workload !== undefined && r.podSet !== undefined) {
      const byPs = this.activeByPodSet.get(r.workload);
      const s = byPs?.get(r.podSet);
      s?.delete(key);
      if (s && s.size === 0) byPs!.delete(r.podSet);
      if (byPs && byPs.size === 0) this.activeByPodSet.delete(r.workload);
    }
  }

  private onWorkload(old: Workload | undefined, w: Workload | undefined): void {
    const key = objectKey((w ?? old)!);
    if (old && holdsQuota(old)) this.addQuotaUsage(old, -1);
    if (w && holdsQuota(w)) this.addQuotaUsage(w, 1);
    if ((old && holdsQuota(old)) || (w && holdsQuota(w))) this.quotaDirty = true;
    if (!w) {
      this.plans.delete(key);
      this.dirtyWorkloads.delete(key);
      return;
    }
    this.dirtyWorkloads.add(key);
    // Pods of this Workload are judged against its (new) admission.
    const byPs = this.activeByPodSet.get(key);
    if (byPs) for (const s of byPs.values()) for (const p of s) this.dirtyPods.add(p);
    if (old?.status?.admission && w.status?.admission && admissionReplaced(old, w)) {
      // A transition, not a state: reported each time it happens.
      this.push({
        key: `transition/${key}`,
        invariant: Invariant.AdmittedTwice,
        object: ref(w),
        message: `Workload ${key} was admitted again (${describeAdmission(w.status.admission)}) while still admitted (${describeAdmission(old.status.admission)}), without its admission being cleared first`,
      });
    }
  }

  private addQuotaUsage(w: Workload, sign: 1 | -1): void {
    if (!this.quota || this.quotaConfigDirty) return;
    const cq = w.status!.admission!.clusterQueue;
    if (cq === undefined || !this.quota.hasClusterQueue(cq)) return;
    for (const [f, n] of usageOf(w)) this.quota.addUsage(cq, f, sign * n);
  }

  // ---------------------------------------------------------------------------------------
  // Checks

  private incremental(full = false): void {
    if (this.quotaConfigDirty) this.rebuildQuota();
    if (this.quotaDirty) {
      this.quotaDirty = false;
      this.checkQuota();
    }
    for (const name of this.dirtyNodes) this.checkNode(name);
    this.dirtyNodes.clear();
    for (const key of this.dirtyWorkloads) this.checkWorkload(key, full);
    this.dirtyWorkloads.clear();
    for (const key of this.dirtyPods) this.checkPod(key);
    this.dirtyPods.clear();
  }

  private rebuildQuota(): void {
    this.quotaConfigDirty = false;
    this.quotaDirty = true;
    const specs: QuotaNodeSpec[] = [];
    for (const c of this.cohorts.values())
      specs.push({
        name: c.metadata.name,
        kind: 'Cohort',
        parent: c.spec.parentName || undefined,
        quotas: quotasOf(c.spec.resourceGroups),
      });
    for (const cq of this.clusterQueues.values()) {
      const cohort = (cq.spec.cohortName ?? (cq.spec as { cohort?: string }).cohort) || undefined;
      specs.push({ name: cq.metadata.name, kind: 'ClusterQueue', parent: cohort, quotas: quotasOf(cq.spec.resourceGroups) });
    }
    this.quota = new QuotaTree(specs);
    for (const w of this.workloads.values()) if (holdsQuota(w)) this.addQuotaUsage(w, 1);
  }

  private checkQuota(): void {
    const found: Found[] = [];
    for (const message of this.quota?.violations() ?? []) {
      const m = /^(ClusterQueue|Cohort) (\S+) /.exec(message);
      found.push({
        key: message.replace(/ uses [0-9.e+-]+ /, ' uses '),
        invariant: Invariant.ClusterQueueQuota,
        object: m ? `${m[1]}/${m[2]}` : 'ClusterQueue',
        message,
      });
    }
    this.settle('quota', found);
  }

  private checkNode(name: string): void {
    const found: Found[] = [];
    const node = this.nodeRecs.get(name);
    const used = this.nodeUsed.get(name);
    if (node && used) {
      const over: string[] = [];
      for (const [res, n] of [...used.amounts].sort(([a], [b]) => compareStrings(a, b))) {
        const cap = node.allocatable[res] ?? 0;
        if (n > cap + 1e-9) over.push(`${res} ${fmt(res, n)} > ${fmt(res, cap)}`);
      }
      const podCap = node.allocatable.pods;
      if (podCap !== undefined && used.pods > podCap) over.push(`pods ${used.pods} > ${podCap}`);
      if (over.length > 0)
        found.push({
          key: 'capacity',
          invariant: Invariant.NodeCapacity,
          object: `Node/${name}`,
          message: `node ${name} is over capacity: requests of its bound pods exceed allocatable: ${over.join(', ')}`,
        });
    }
    this.settle(`node/${name}`, found);
  }

  private planOf(key: string, w: Workload): WorkloadPlan | undefined {
    const adm = w.status?.admission;
    if (!adm || isFinished(w)) {
      this.plans.delete(key);
      return undefined;
    }
    const cached = this.plans.get(key);
    if (cached && cached.rv === w.metadata.resourceVersion) return cached;
    const podSets = new Map<string, PodSetPlan>();
    for (const [i, psa] of (adm.podSetAssignments ?? []).entries()) {
      const ps = w.spec.podSets.find((p) => p.name === psa.name);
      if (!ps) continue;
      const plan: PodSetPlan = {
        count: psa.count ?? ps.count,
        specCount: ps.count,
        minCount: ps.minCount,
        required: ps.topologyRequest?.required,
      };
      if (psa.topologyAssignment) {
        try {
          plan.assignment = decodeAssignment(psa.topologyAssignment, {
            field: `status.admission.podSetAssignments[${i}].topologyAssignment`,
          });
          plan.domains = new Map();
          for (const d of plan.assignment.domains)
            plan.domains.set(d.values.join(SEP), (plan.domains.get(d.values.join(SEP)) ?? 0) + d.count);
          if (plan.required !== undefined) plan.requiredValues = this.requiredValues(plan.assignment, plan.required);
        } catch {
          // An undecodable assignment: nothing to compare pods with.
        }
      }
      podSets.set(ps.name, plan);
    }
    const plan: WorkloadPlan = {
      rv: w.metadata.resourceVersion,
      podSets,
      unhealthy: new Set((w.status?.unhealthyNodes ?? []).map((n) => n.name)),
    };
    this.plans.set(key, plan);
    return plan;
  }

  private checkWorkload(key: string, full: boolean): void {
    const w = this.workloads.get(key);
    const found: Found[] = [];
    const plan = w ? this.planOf(key, w) : undefined;
    if (w && plan) {
      const what = ref(w);
      let admitted = 0;
      for (const [name, ps] of plan.podSets) {
        admitted += ps.count;
        if (ps.count > ps.specCount)
          found.push({
            key: `count/${name}`,
            invariant: Invariant.GangMinimum,
            object: what,
            message: `PodSet ${name} of Workload ${key} is admitted with ${ps.count} pods, more than its count ${ps.specCount}`,
          });
        if (ps.minCount !== undefined && ps.count < ps.minCount)
          found.push({
            key: `min/${name}`,
            invariant: Invariant.GangMinimum,
            object: what,
            message: `PodSet ${name} of Workload ${key} is admitted with ${ps.count} pods, below its minCount ${ps.minCount}`,
          });
        if (ps.assignment) {
          const n = ps.assignment.domains.reduce((s, d) => s + d.count, 0);
          if (n !== ps.count)
            found.push({
              key: `assigned/${name}`,
              invariant: Invariant.PodOutsideAssignment,
              object: what,
              message: `the topology assignment of PodSet ${name} of Workload ${key} places ${n} pods, not the ${ps.count} admitted`,
            });
          if (ps.required !== undefined) {
            const values = ps.requiredValues ?? new Set<string>();
            if (values.size > 1)
              found.push({
                key: `required/${name}`,
                invariant: Invariant.RequiredTopology,
                object: what,
                message: `the topology assignment of PodSet ${name} of Workload ${key} spans ${values.size} domains of required level ${ps.required}: ${[...values].sort().join(', ')}`,
              });
          }
        }
        if (full) found.push(...this.checkPodSetPods(key, what, name, ps, plan));
      }
      const min = gangMinimum(w);
      if (min !== undefined && admitted < min)
        found.push({
          key: 'gang',
          invariant: Invariant.GangMinimum,
          object: what,
          message: `gang Workload ${key} is admitted with ${admitted} pods, below its minimum ${min}`,
        });
    }
    this.settle(`workload/${key}`, found);
  }

  /** Values of `level` over an assignment's domains (through node labels when the level is above the assignment's levels). */
  private requiredValues(a: Assignment, level: string): Set<string> {
    const out = new Set<string>();
    const i = a.levels.indexOf(level);
    for (const d of a.domains) {
      if (i >= 0) out.add(d.values[i]!);
      else {
        const v = this.nodeRecs.get(d.values[d.values.length - 1]!)?.labels[level];
        if (v !== undefined) out.add(v);
      }
    }
    return out;
  }

  /** Full check only: pods per domain and the required level over all of a PodSet's pods. */
  private checkPodSetPods(key: string, what: string, name: string, ps: PodSetPlan, plan: WorkloadPlan): Found[] {
    const found: Found[] = [];
    const pods = this.activeByPodSet.get(key)?.get(name);
    if (!pods || !ps.assignment || !ps.domains) return found;
    const perDomain = new Map<string, number>();
    const required = new Set<string>();
    for (const pk of pods) {
      const r = this.podRecs.get(pk);
      const node = r?.node !== undefined ? this.nodeRecs.get(r.node) : undefined;
      if (!r || !node || !node.ready || plan.unhealthy.has(r.node!) || r.deleting) continue;
      const dk = ps.assignment.levels.map((l) => (l === 'kubernetes.io/hostname' ? (node.labels[l] ?? r.node!) : node.labels[l])).join(SEP);
      perDomain.set(dk, (perDomain.get(dk) ?? 0) + 1);
      if (ps.required !== undefined && node.labels[ps.required] !== undefined) required.add(node.labels[ps.required]!);
    }
    for (const [dk, n] of perDomain) {
      const cap = ps.domains.get(dk) ?? 0;
      if (n > cap)
        found.push({
          key: `domain/${name}/${dk}`,
          invariant: Invariant.PodOutsideAssignment,
          object: what,
          message: `${n} pods of PodSet ${name} of Workload ${key} run in domain ${dk.split(SEP).join('/')}, assigned ${cap}`,
        });
    }
    if (required.size > 1)
      found.push({
        key: `pods-required/${name}`,
        invariant: Invariant.RequiredTopology,
        object: what,
        message: `pods of PodSet ${name} of Workload ${key} run in ${required.size} domains of required level ${ps.required}: ${[...required].sort().join(', ')}`,
      });
    return found;
  }

  private checkPod(key: string): void {
    const r = this.podRecs.get(key);
    const found: Found[] = [];
    const what = `Pod/${key}`;
    if (r?.node && r.gated && r.active)
      found.push({
        key: 'gated',
        invariant: Invariant.GatedPodBound,
        object: what,
        message: `pod ${key} is bound to node ${r.node} while it still has scheduling gates`,
      });
    if (r?.node && r.active && !r.requests.ok) {
      found.push({
        key: 'requests',
        invariant: Invariant.UnreadablePodRequests,
        object: what,
        message: `pod ${key} runs on node ${r.node}, but its requests cannot be read (${r.requests.problem}): the node's capacity is checked without them`,
      });
    }
    if (r?.active && r.node && r.workload !== undefined) {
      const w = this.workloads.get(r.workload);
      // A pod being deleted is being stopped: Kueue releases the quota once the job has no active pod, and a terminating pod is not active.
      if (w && !w.status?.admission && !w.metadata.deletionTimestamp && !r.deleting) {
        found.push({
          key: 'noquota',
          invariant: Invariant.PodWithoutAdmission,
          object: what,
          message: `pod ${key} runs on node ${r.node} while its Workload ${r.workload} holds no quota (no status.admission)`,
        });
      }
      const plan = w ? this.planOf(r.workload, w) : undefined;
      const ps = r.podSet !== undefined ? plan?.podSets.get(r.podSet) : undefined;
      if (plan && ps) {
        const n = this.activeByPodSet.get(r.workload)?.get(r.podSet!)?.size ?? 0;
        if (n > ps.count)
          found.push({
            key: 'over',
            invariant: Invariant.AdmittedTwice,
            object: `Workload/${r.workload}`,
            message: `${n} pods of PodSet ${r.podSet} of Workload ${r.workload} are bound, more than the ${ps.count} it was admitted with`,
          });
        const node = this.nodeRecs.get(r.node);
        // A pod on a node that failed is being replaced, and a pod being deleted belongs to an
        // admission being stopped: the assignment may already point elsewhere.
        if (ps.assignment && ps.domains && node && node.ready && !plan.unhealthy.has(r.node) && !r.deleting) {
          const dk = ps.assignment.levels
            .map((l) => (l === 'kubernetes.io/hostname' ? (node.labels[l] ?? r.node!) : (node.labels[l] ?? '<none>')))
            .join(SEP);
          if (!ps.domains.has(dk))
            found.push({
              key: 'outside',
              invariant: Invariant.PodOutsideAssignment,
              object: what,
              message: `pod ${key} of PodSet ${r.podSet} runs on node ${r.node} (${dk.split(SEP).join('/')}), which is not in its Workload's topology assignment`,
            });
          if (ps.required !== undefined && ps.requiredValues?.size === 1) {
            const want = [...ps.requiredValues];
            const have = node.labels[ps.required];
            if (have !== want[0])
              found.push({
                key: 'required',
                invariant: Invariant.RequiredTopology,
                object: what,
                message: `pod ${key} runs on node ${r.node} in ${ps.required}=${have ?? '<none>'}, outside the required domain ${ps.required}=${want[0]} of PodSet ${r.podSet}`,
              });
          }
        }
      }
    }
    this.settle(`pod/${key}`, found);
  }

  // ---------------------------------------------------------------------------------------
  // Reporting

  /** Replaces the standing violations of one subject; new ones are reported. */
  private settle(subject: string, found: Found[]): void {
    const before = this.standing.get(subject);
    if (found.length === 0) {
      if (before) this.standing.delete(subject);
      return;
    }
    const now = new Set<string>();
    for (const f of found) {
      const k = `${f.invariant}/${f.key}`;
      now.add(k);
      if (!before?.has(k)) this.push(f);
    }
    this.standing.set(subject, now);
  }

  private push(f: Found): void {
    if (this.violations.length >= this.keep) {
      this.dropped++;
      return;
    }
    this.violations.push({
      at: Math.round(this.clock.now() - this.startMs) / 1000,
      invariant: f.invariant,
      object: f.object,
      message: f.message,
    });
  }
}

interface Found {
  key: string;
  invariant: Invariant;
  object: string;
  message: string;
}

function fmt(res: string, n: number): string {
  return res === 'cpu' ? `${n / 1000}` : `${n}`;
}

function quotasOf(groups: readonly ResourceGroup[] | undefined): Map<FR, ResourceQuota> {
  const out = new Map<FR, ResourceQuota>();
  const amount = (res: string, q: string | undefined) => {
    if (q === undefined) return undefined;
    try {
      return resourceAmount(res, parseQuantity(q));
    } catch {
      return undefined;
    }
  };
  for (const g of groups ?? []) {
    for (const f of g.flavors) {
      for (const r of f.resources) {
        out.set(fr(f.name, r.name), {
          nominal: amount(r.name, r.nominalQuota) ?? 0,
          borrowingLimit: amount(r.name, r.borrowingLimit),
          lendingLimit: amount(r.name, r.lendingLimit),
        });
      }
    }
  }
  return out;
}

/** Quota a Workload's admission uses, per flavor/resource. */
export function usageOf(w: Workload): Map<FR, number> {
  const out = new Map<FR, number>();
  for (const psa of w.status?.admission?.podSetAssignments ?? []) {
    const flavors = psa.flavors ?? {};
    let usage: ResourceAmounts;
    try {
      if (psa.resourceUsage) usage = parseResourceList(psa.resourceUsage, 'resourceUsage');
      else {
        const ps = w.spec.podSets.find((p) => p.name === psa.name);
        const per = ps ? podRequests(ps.template.spec) : {};
        const count = psa.count ?? ps?.count ?? 0;
        usage = Object.fromEntries(Object.entries(per).map(([r, v]) => [r, v * count]));
      }
    } catch {
      continue;
    }
    for (const [res, n] of Object.entries(usage)) {
      const flavor = flavors[res];
      if (flavor === undefined) continue;
      const k = fr(flavor, res);
      out.set(k, (out.get(k) ?? 0) + n);
    }
  }
  return out;
}

/** A gang Workload's minimum (annotation gang.scheduling.koordinator.sh/min-available), if it is one. */
function gangMinimum(w: Workload): number | undefined {
  const raw = w.metadata.annotations?.[GangAnnotation.MinAvailable];
  if (raw === undefined || !/^-?[0-9]+$/.test(raw)) return undefined;
  return Math.max(0, Number(raw));
}

function describeAdmission(a: Admission): string {
  return `ClusterQueue ${a.clusterQueue ?? ''}, ${(a.podSetAssignments ?? []).map((p) => `${p.name}: ${p.count ?? '?'} on ${Object.values(p.flavors ?? {})[0] ?? '?'}`).join(', ')}`;
}

/**
 * True when `w`'s admission is a new one rather than the same one kept: another
 * ClusterQueue, flavors or counts, or another topology assignment while no node of the
 * old one was reported unhealthy (the failed-node replacement may rewrite the assignment).
 */
function admissionReplaced(old: Workload, w: Workload): boolean {
  const a = old.status!.admission!;
  const b = w.status!.admission!;
  if (a.clusterQueue !== b.clusterQueue) return true;
  const pa = a.podSetAssignments ?? [];
  const pb = b.podSetAssignments ?? [];
  if (pa.length !== pb.length) return true;
  const replacing = (old.status?.unhealthyNodes ?? []).length > 0;
  for (let i = 0; i < pa.length; i++) {
    const x = pa[i]!;
    const y = pb[i]!;
    if (x.name !== y.name || x.count !== y.count || JSON.stringify(x.flavors ?? {}) !== JSON.stringify(y.flavors ?? {})) return true;
    if (!replacing && JSON.stringify(x.topologyAssignment ?? null) !== JSON.stringify(y.topologyAssignment ?? null)) return true;
  }
  return false;
}
