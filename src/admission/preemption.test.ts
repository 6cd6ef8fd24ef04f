import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import type { ResourceFlavor, Workload } from '../api/objects.ts';
import type { ClusterQueue, ClusterQueuePreemption } from '../api/queues.ts';
import { PlacementEngine } from '../placement/engine.ts';
import { placeWorkload, type TasFlavor } from '../placement/workload-placement.ts';
import { BLOCK, HOST, node, RACK, snapshotOf } from '../testing/builders.ts';
import { assignFlavors } from './flavor-assigner.ts';
import {
  findPreemptionTargets,
  preemptionMessage,
  preemptorOfMessage,
  PreemptedReason,
  type PreemptionRequest,
  type PreemptionTarget,
} from './preemption.ts';
import { fr } from './quota.ts';
import { AdmissionSnapshot, type AdmittedWorkload, type ClusterQueueInfo } from './snapshot.ts';
import { workloadInfo, type WorkloadInfo } from './workload-info.ts';

// ---- fixtures ------------------------------------------------------------------------------

const CPU = fr('default', 'cpu');
const TAS_CPU = fr('tas', 'cpu');
const NS = 'ns';

/** RFC 3339 time `s` seconds into 2024 (s < 86,400). */
function at(s: number): string {
  const hh = String(Math.floor(s / 3600)).padStart(2, '0');
  const mm = String(Math.floor((s % 3600) / 60)).padStart(2, '0');
  const ss = String(s % 60).padStart(2, '0');
  return `2024-01-01T${hh}:${mm}:${ss}Z`;
}

class WorkloadBuilder {
  private readonly obj: Workload;
  constructor(name: string) {
    this.obj = {
      apiVersion: 'kueue.x-k8s.io/v1beta2',
      kind: 'Workload',
      metadata: { name, namespace: NS, uid: `uid-${name}`, creationTimestamp: at(0) },
      spec: {
        podSets: [{ name: 'main', count: 1, template: { spec: { containers: [{ name: 'c', resources: { requests: { cpu: '1' } } }] } } }],
      },
    };
  }
  priority(p: number): this {
    this.obj.spec.priority = p;
    return this;
  }
  /** `count` pods of `cpu` each. */
  pods(count: number, cpu: string | number = 1): this {
    const ps = this.obj.spec.podSets[0]!;
    ps.count = count;
    ps.template.spec.containers[0]!.resources!.requests = { cpu: String(cpu) };
    return this;
  }
  requests(r: Record<string, string>): this {
    this.obj.spec.podSets[0]!.template.spec.containers[0]!.resources!.requests = r;
    return this;
  }
  created(s: number): this {
    this.obj.metadata.creationTimestamp = at(s);
    return this;
  }
  required(level: string): this {
    this.obj.spec.podSets[0]!.topologyRequest = { required: level };
    return this;
  }
  preferred(level: string): this {
    this.obj.spec.podSets[0]!.topologyRequest = { preferred: level };
    return this;
  }
  build(): Workload {
    return structuredClone(this.obj);
  }
}
const workload = (name: string) => new WorkloadBuilder(name);

interface CqOptions {
  cohort?: string;
  /** Flavor -> resource -> nominal quota. */
  quotas: Record<string, Record<string, string | number>>;
  preemption?: Partial<ClusterQueuePreemption>;
}

/** A ClusterQueue in the normalized v1beta2 shape, one resource group. */
function clusterQueue(name: string, o: CqOptions): ClusterQueue {
  const flavors = Object.entries(o.quotas).map(([f, rs]) => ({
    name: f,
    resources: Object.entries(rs).map(([r, q]) => ({ name: r, nominalQuota: String(q) })),
  }));
  return {
    apiVersion: 'kueue.x-k8s.io/v1beta2',
    kind: 'ClusterQueue',
    metadata: { name },
    spec: {
      resourceGroups: [{ coveredResources: flavors[0]!.resources.map((r) => r.name), flavors }],
      ...(o.cohort !== undefined ? { cohortName: o.cohort } : {}),
      queueingStrategy: 'BestEffortFIFO',
      namespaceSelector: {},
      flavorFungibility: { whenCanBorrow: 'MayStopSearch', whenCanPreempt: 'TryNextFlavor' },
      preemption: { reclaimWithinCohort: 'Never', withinClusterQueue: 'Never', ...o.preemption },
      stopPolicy: 'None',
    },
  };
}

const DEFAULT_FLAVOR: ResourceFlavor = {
  apiVersion: 'kueue.x-k8s.io/v1beta2',
  kind: 'ResourceFlavor',
  metadata: { name: 'default' },
  spec: {},
};
const TAS_FLAVOR: ResourceFlavor = {
  apiVersion: 'kueue.x-k8s.io/v1beta2',
  kind: 'ResourceFlavor',
  metadata: { name: 'tas' },
  spec: { topologyName: 'default' },
};

function snapshot(cqs: ClusterQueue[], nodes: ReturnType<typeof node>[] = []): AdmissionSnapshot {
  const tasFlavors: TasFlavor[] = [];
  if (nodes.length > 0) {
    const s = snapshotOf([BLOCK, RACK, HOST], nodes);
    tasFlavors.push({ flavor: TAS_FLAVOR, snapshot: s, engine: new PlacementEngine(s) });
  }
  return new AdmissionSnapshot({ clusterQueues: cqs.map((object) => ({ object })), flavors: [DEFAULT_FLAVOR, TAS_FLAVOR], tasFlavors });
}

interface AdmitOptions {
  reservedAt?: number;
  /** One pod per entry: the Workload is placed on these hosts of the TAS flavor. */
  hosts?: string[];
  gang?: string;
  reservedOnly?: boolean;
}

/** Records a reservation of `w` in `cq` (flavor `tas` when placed on hosts, else `default`). */
function admit(snap: AdmissionSnapshot, cq: string, w: Workload, o: AdmitOptions = {}): AdmittedWorkload {
  const info = workloadInfo(w);
  const ps = info.podSets[0]!;
  const flavor = o.hosts ? 'tas' : 'default';
  const usage: Record<string, number> = {};
  for (const [r, v] of Object.entries(ps.perPod)) usage[r] = v * ps.count;
  const perHost = new Map<string, number>();
  for (const h of o.hosts ?? []) perHost.set(h, (perHost.get(h) ?? 0) + 1);
  const podSets = [
    {
      name: ps.name,
      count: ps.count,
      flavors: Object.fromEntries(Object.keys(usage).map((r) => [r, flavor])),
      perPod: ps.perPod,
      usage,
      ...(o.hosts
        ? { tasFlavor: 'tas', assignment: { levels: [HOST], domains: [...perHost].map(([h, count]) => ({ values: [h], count })) } }
        : {}),
    },
  ];
  const a: AdmittedWorkload = {
    key: info.key,
    workload: w,
    clusterQueue: cq,
    priority: info.priority,
    reservedAt: o.reservedAt ?? 0,
    podSets,
    usage: AdmissionSnapshot.usageOf(podSets),
    ...(o.gang !== undefined ? { gangGroup: o.gang } : {}),
    ...(o.reservedOnly ? { reservedOnly: true } : {}),
  };
  snap.addAdmitted(a);
  return a;
}

/** Whether `info` fits now: quota in its ClusterQueue, then the TAS placement of its TAS PodSets. */
function fitsNow(snap: AdmissionSnapshot, cq: ClusterQueueInfo, info: WorkloadInfo, a: ReturnType<typeof assignFlavors>): boolean {
  for (const [f, v] of a.usage) if (v > snap.quota.available(cq.name, f)) return false;
  const flavorOf = new Map(a.podSets.flatMap((p) => (p.tasFlavor !== undefined ? [[p.name, p.tasFlavor] as const] : [])));
  if (flavorOf.size === 0) return true;
  return placeWorkload(info.workload, snap.tasList, { flavorOf, counts: new Map(a.podSets.map((p) => [p.name, p.count])) }).ok;
}

interface Probe {
  req: PreemptionRequest;
  calls: () => number;
}

/** The preemption request of `w` in `cqName`, with its flavor assignment and a counting fits(). */
function preemptor(snap: AdmissionSnapshot, cqName: string, w: Workload, exclude?: ReadonlySet<string>): Probe {
  const info = workloadInfo(w);
  const cq = snap.clusterQueues.get(cqName)!;
  const assignment = assignFlavors(snap, cq, info, { placement: {} });
  let calls = 0;
  const fits = () => {
    calls++;
    return fitsNow(snap, cq, info, assignment);
  };
  return { req: { info, cq, assignment, fits, ...(exclude ? { exclude } : {}) }, calls: () => calls };
}

/** What preemption may change and must put back (the reservations, not the map's insertion order: nothing reads it). */
function state(snap: AdmissionSnapshot): unknown {
  const cqs = [...snap.clusterQueues.keys()].sort();
  const quota = cqs.map((q) => [
    q,
    snap.quota.usage(q, CPU),
    snap.quota.usage(q, TAS_CPU),
    snap.quota.available(q, CPU),
    snap.quota.available(q, TAS_CPU),
  ]);
  const tas = snap.tasList.map((t) =>
    t.snapshot.leaves().map((l) => [t.snapshot.id(l), t.snapshot.free(l, 0), t.snapshot.free(l, t.snapshot.resources.get('cpu') ?? 0)]),
  );
  return { keys: [...snap.admitted.keys()].sort(), quota, tas };
}

/** Runs the search and checks that the snapshot comes back as it was. */
function targetsOf(snap: AdmissionSnapshot, p: Probe): PreemptionTarget[] {
  const before = state(snap);
  const t = findPreemptionTargets(snap, p.req);
  assert.deepEqual(state(snap), before, 'the snapshot is restored');
  return t;
}

const keys = (t: PreemptionTarget[]) => t.map((x) => x.key.slice(NS.length + 1));
const wl = (name: string, prio: number, cpu: number | string = 1) => workload(name).priority(prio).pods(1, cpu).build();

// ---- rules -----------------------------------------------------------------------------------

describe('rule 1: candidates follow the ClusterQueue preemption policy', () => {
  it('withinClusterQueue LowerPriority: only lower priorities of the own ClusterQueue', () => {
    const snap = snapshot([clusterQueue('a', { quotas: { default: { cpu: 4 } }, preemption: { withinClusterQueue: 'LowerPriority' } })]);
    admit(snap, 'a', wl('p5', 5, 2));
    admit(snap, 'a', wl('p1', 1, 2));
    const t = targetsOf(snap, preemptor(snap, 'a', wl('new', 5, 2)));
    assert.deepEqual(keys(t), ['p1']);
    assert.equal(t[0]!.reason, PreemptedReason.InClusterQueue);
    assert.equal(t[0]!.clusterQueue, 'a');
    // Needing both: the equal priority one is not a candidate, so preemption would not help.
    assert.deepEqual(targetsOf(snap, preemptor(snap, 'a', wl('big', 5, 4))), []);
  });

  it('withinClusterQueue LowerOrNewerEqualPriority: an equal priority only when created after the preemptor', () => {
    const snap = snapshot([
      clusterQueue('a', { quotas: { default: { cpu: 2 } }, preemption: { withinClusterQueue: 'LowerOrNewerEqualPriority' } }),
    ]);
    admit(snap, 'a', workload('old').priority(5).pods(1, 1).created(10).build());
    admit(snap, 'a', workload('young').priority(5).pods(1, 1).created(30).build());
    const t = targetsOf(snap, preemptor(snap, 'a', workload('new').priority(5).pods(1, 1).created(20).build()));
    assert.deepEqual(keys(t), ['young']);
    assert.deepEqual(targetsOf(snap, preemptor(snap, 'a', workload('new').priority(5).pods(1, 2).created(20).build())), []);
  });

  it('withinClusterQueue Never: nothing in the own ClusterQueue', () => {
    const snap = snapshot([clusterQueue('a', { quotas: { default: { cpu: 2 } } })]);
    admit(snap, 'a', wl('low', 0, 2));
    assert.deepEqual(targetsOf(snap, preemptor(snap, 'a', wl('new', 9, 2))), []);
  });

  it('reclaimWithinCohort: only from ClusterQueues that borrow; LowerPriority takes lower priorities, Any every priority', () => {
    const make = (reclaim: 'LowerPriority' | 'Any') => {
      const snap = snapshot([
        clusterQueue('a', { cohort: 'c', quotas: { default: { cpu: 4 } }, preemption: { reclaimWithinCohort: reclaim } }),
        clusterQueue('b', { cohort: 'c', quotas: { default: { cpu: 4 } } }),
        clusterQueue('c', { cohort: 'c', quotas: { default: { cpu: 4 } } }),
      ]);
      admit(snap, 'b', wl('b-lo', 1, 3));
      admit(snap, 'b', wl('b-hi', 20, 3)); // b uses 6 of 4: borrows
      admit(snap, 'c', wl('c-lo', 0, 4)); // c uses its nominal: not a candidate
      return snap;
    };
    let snap = make('LowerPriority');
    let t = targetsOf(snap, preemptor(snap, 'a', wl('new', 10, 4)));
    assert.deepEqual(keys(t), ['b-lo']);
    assert.equal(t[0]!.reason, PreemptedReason.InCohortReclamation);
    assert.deepEqual(targetsOf(snap, preemptor(snap, 'a', wl('new', 0, 4))), []);
    snap = make('Any');
    t = targetsOf(snap, preemptor(snap, 'a', wl('new', 0, 4)));
    assert.deepEqual(keys(t), ['b-lo']);
  });

  it('borrowWithinCohort: while borrowing, other ClusterQueues lose only Workloads below the threshold', () => {
    const make = (borrowWithinCohort?: ClusterQueuePreemption['borrowWithinCohort']) => {
      const snap = snapshot([
        clusterQueue('a', {
          cohort: 'c',
          quotas: { default: { cpu: 2 } },
          preemption: { reclaimWithinCohort: 'LowerPriority', ...(borrowWithinCohort ? { borrowWithinCohort } : {}) },
        }),
        clusterQueue('b', { cohort: 'c', quotas: { default: { cpu: 6 } } }),
      ]);
      admit(snap, 'b', wl('b-lo', 1, 4));
      admit(snap, 'b', wl('b-mid', 5, 4));
      return snap;
    };
    // The preemptor needs 4 with a nominal of 2: it would borrow.
    let snap = make({ policy: 'LowerPriority', maxPriorityThreshold: 3 });
    const t = targetsOf(snap, preemptor(snap, 'a', wl('new', 10, 4)));
    assert.deepEqual(keys(t), ['b-lo']);
    assert.equal(t[0]!.reason, PreemptedReason.InCohortReclaimWhileBorrowing);
    snap = make({ policy: 'LowerPriority', maxPriorityThreshold: 0 });
    assert.deepEqual(targetsOf(snap, preemptor(snap, 'a', wl('new', 10, 4))), []);
    snap = make();
    assert.deepEqual(
      targetsOf(snap, preemptor(snap, 'a', wl('new', 10, 4))),
      [],
      'without borrowWithinCohort, reclaiming never lets the preemptor borrow',
    );
  });

  it('reservedOnly Workloads are candidates like others', () => {
    const snap = snapshot([clusterQueue('a', { quotas: { default: { cpu: 2 } }, preemption: { withinClusterQueue: 'LowerPriority' } })]);
    admit(snap, 'a', wl('accumulating', 0, 2), { reservedOnly: true });
    assert.deepEqual(keys(targetsOf(snap, preemptor(snap, 'a', wl('new', 5, 2)))), ['accumulating']);
  });

  it('only Workloads holding a needed flavor-resource are considered', () => {
    const snap = snapshot([
      clusterQueue('a', { quotas: { default: { cpu: 2, memory: '100Gi' } }, preemption: { withinClusterQueue: 'LowerPriority' } }),
    ]);
    for (let i = 0; i < 50; i++) admit(snap, 'a', workload(`mem-${i}`).priority(0).requests({ memory: '1Gi' }).build());
    admit(snap, 'a', wl('cpu-user', 1, 2));
    const p = preemptor(snap, 'a', wl('new', 5, 2));
    assert.deepEqual(keys(targetsOf(snap, p)), ['cpu-user']);
    assert.ok(p.calls() <= 3, `the memory-only Workloads are not tried (${p.calls()} fits() calls)`);
  });

  it('excluded keys are never chosen', () => {
    const snap = snapshot([clusterQueue('a', { quotas: { default: { cpu: 2 } }, preemption: { withinClusterQueue: 'LowerPriority' } })]);
    admit(snap, 'a', wl('x', 0, 1), { reservedAt: 2 });
    admit(snap, 'a', wl('y', 0, 1), { reservedAt: 1 });
    assert.deepEqual(keys(targetsOf(snap, preemptor(snap, 'a', wl('new', 5, 1)))), ['x']);
    assert.deepEqual(keys(targetsOf(snap, preemptor(snap, 'a', wl('new', 5, 1), new Set(['ns/x'])))), ['y']);
    assert.deepEqual(targetsOf(snap, preemptor(snap, 'a', wl('new', 5, 1), new Set(['ns/x', 'ns/y']))), []);
  });
});

describe('rule 2: a gang is preempted whole', () => {
  it('every Workload of the gang group is a target, though one would free enough', () => {
    const snap = snapshot([clusterQueue('a', { quotas: { default: { cpu: 6 } }, preemption: { withinClusterQueue: 'LowerPriority' } })]);
    admit(snap, 'a', wl('g-1', 1, 2), { gang: 'ns/g' });
    admit(snap, 'a', wl('g-2', 1, 2), { gang: 'ns/g' });
    admit(snap, 'a', wl('solo', 2, 2));
    assert.deepEqual(keys(targetsOf(snap, preemptor(snap, 'a', wl('new', 10, 2)))), ['g-1', 'g-2']);
  });
  it('gang groups declared one-sidedly are preempted together', () => {
    const snap = snapshot([clusterQueue('a', { quotas: { default: { cpu: 6 } }, preemption: { withinClusterQueue: 'LowerPriority' } })]);
    admit(snap, 'a', wl('leader', 0, 2), { gang: 'ns/leader' });
    admit(snap, 'a', wl('follower', 3, 2), { gang: 'ns/follower,ns/leader' }); // admitted only with the leader
    admit(snap, 'a', wl('solo', 5, 2));
    // Taking the leader alone (priority 0) would strand the follower: both go, as one unit of priority 3.
    assert.deepEqual(keys(targetsOf(snap, preemptor(snap, 'a', wl('new', 10, 2)))), ['follower', 'leader']);
  });
  it('a gang with one member the policy protects is not a candidate', () => {
    const snap = snapshot([clusterQueue('a', { quotas: { default: { cpu: 6 } }, preemption: { withinClusterQueue: 'LowerPriority' } })]);
    admit(snap, 'a', wl('g-1', 1, 2), { gang: 'ns/g' });
    admit(snap, 'a', wl('g-2', 20, 2), { gang: 'ns/g' });
    admit(snap, 'a', wl('solo', 2, 2));
    assert.deepEqual(keys(targetsOf(snap, preemptor(snap, 'a', wl('new', 10, 2)))), ['solo']);
  });
});

describe('rule 0: Workloads already being evicted are candidates first', () => {
  const evicting = (w: Workload): Workload => ({
    ...w,
    status: { conditions: [{ type: 'Evicted', status: 'True', reason: 'Preempted', message: 'm', lastTransitionTime: at(1) }] },
  });
  it('an evicted Workload still holding its reservation goes before a lower priority one', () => {
    const snap = snapshot([clusterQueue('a', { quotas: { default: { cpu: 4 } }, preemption: { withinClusterQueue: 'LowerPriority' } })]);
    admit(snap, 'a', evicting(wl('stopping', 3, 2)), { reservedAt: 1 });
    admit(snap, 'a', wl('low', 1, 2), { reservedAt: 2 });
    assert.deepEqual(keys(targetsOf(snap, preemptor(snap, 'a', wl('new', 5, 2)))), ['stopping']);
    // Without the condition the lower priority goes first.
    const plain = snapshot([clusterQueue('a', { quotas: { default: { cpu: 4 } }, preemption: { withinClusterQueue: 'LowerPriority' } })]);
    admit(plain, 'a', wl('stopping', 3, 2), { reservedAt: 1 });
    admit(plain, 'a', wl('low', 1, 2), { reservedAt: 2 });
    assert.deepEqual(keys(targetsOf(plain, preemptor(plain, 'a', wl('new', 5, 2)))), ['low']);
  });
  it('before other ClusterQueues, and only when the policy allows it', () => {
    const cqs = () => [
      clusterQueue('a', {
        cohort: 'c',
        quotas: { default: { cpu: 4 } },
        preemption: { reclaimWithinCohort: 'Any', withinClusterQueue: 'LowerPriority' },
      }),
      clusterQueue('b', { cohort: 'c', quotas: { default: { cpu: 0 } } }),
    ];
    const snap = snapshot(cqs());
    admit(snap, 'a', evicting(wl('own-stopping', 3, 2)));
    admit(snap, 'b', wl('b-borrower', 0, 2));
    const t = targetsOf(snap, preemptor(snap, 'a', wl('new', 5, 2)));
    assert.deepEqual(keys(t), ['own-stopping']);
    assert.equal(t[0]!.reason, PreemptedReason.InClusterQueue);
    // An evicted Workload of equal priority is still protected by LowerPriority.
    const eq = snapshot(cqs());
    admit(eq, 'a', evicting(wl('own-stopping', 5, 2)));
    admit(eq, 'b', wl('b-borrower', 0, 2));
    assert.deepEqual(keys(targetsOf(eq, preemptor(eq, 'a', wl('new', 5, 2)))), ['b-borrower']);
  });
});

describe('rule 3: order', () => {
  it('other ClusterQueues before the own one, then lower priority, then most recently reserved', () => {
    const snap = snapshot([
      clusterQueue('a', {
        cohort: 'c',
        quotas: { default: { cpu: 4 } },
        preemption: { reclaimWithinCohort: 'LowerPriority', withinClusterQueue: 'LowerPriority' },
      }),
      clusterQueue('b', { cohort: 'c', quotas: { default: { cpu: 4 } } }),
    ]);
    admit(snap, 'a', wl('a-lowest', 0, 2), { reservedAt: 9 });
    admit(snap, 'b', wl('b-early', 1, 2), { reservedAt: 1 });
    admit(snap, 'b', wl('b-late', 1, 2), { reservedAt: 2 });
    admit(snap, 'b', wl('b-latest-higher', 2, 2), { reservedAt: 3 });
    assert.deepEqual(keys(targetsOf(snap, preemptor(snap, 'a', wl('new', 10, 2)))), ['b-late']);
  });
  it('then the key', () => {
    const snap = snapshot([clusterQueue('a', { quotas: { default: { cpu: 2 } }, preemption: { withinClusterQueue: 'LowerPriority' } })]);
    admit(snap, 'a', wl('x-b', 0, 1), { reservedAt: 1 });
    admit(snap, 'a', wl('x-a', 0, 1), { reservedAt: 1 });
    assert.deepEqual(keys(targetsOf(snap, preemptor(snap, 'a', wl('new', 5, 1)))), ['x-a']);
  });
});

describe('rule 4: greedy with fill-back, snapshot restored', () => {
  it('a target whose removal turned out unnecessary is filled back', () => {
    const snap = snapshot([clusterQueue('a', { quotas: { default: { cpu: 10 } }, preemption: { withinClusterQueue: 'LowerPriority' } })]);
    admit(snap, 'a', wl('small', 1, 1));
    admit(snap, 'a', wl('big', 2, 6));
    admit(snap, 'a', wl('other', 5, 3));
    // Greedy removes small (1 free), then big (7 free); small goes back (6 free still fits).
    assert.deepEqual(keys(targetsOf(snap, preemptor(snap, 'a', wl('new', 10, 6)))), ['big']);
  });
  it('never preempts when removing every candidate would not make the preemptor fit', () => {
    const snap = snapshot([clusterQueue('a', { quotas: { default: { cpu: 10 } }, preemption: { withinClusterQueue: 'LowerPriority' } })]);
    admit(snap, 'a', wl('small', 1, 1));
    admit(snap, 'a', wl('big', 2, 6));
    admit(snap, 'a', wl('other', 5, 3));
    const p = preemptor(snap, 'a', wl('new', 3, 8));
    assert.equal(p.req.assignment.mode, 'Preempt');
    assert.deepEqual(targetsOf(snap, p), []);
  });
  it('nothing is preempted when the preemptor fits already', () => {
    const snap = snapshot([clusterQueue('a', { quotas: { default: { cpu: 10 } }, preemption: { withinClusterQueue: 'LowerPriority' } })]);
    admit(snap, 'a', wl('small', 1, 8));
    const p = preemptor(snap, 'a', wl('new', 10, 4));
    assert.equal(p.req.assignment.mode, 'Preempt');
    snap.removeAdmitted('ns/small'); // the snapshot moved on since the assignment
    assert.deepEqual(targetsOf(snap, p), []);
  });
});

describe('rule 5: topology-aware preemption frees one compact domain', () => {
  // 2 racks x 4 nodes of 1 cpu, each node holding one victim; victims reserved so that the
  // global order alternates between the racks.
  const setup = () => {
    const nodes = ['r1', 'r2'].flatMap((r) =>
      [1, 2, 3, 4].map((i) =>
        node(`${r}-x${i}`)
          .labels({ [BLOCK]: 'b1', [RACK]: r })
          .cpu(1),
      ),
    );
    const snap = snapshot(
      [clusterQueue('a', { quotas: { tas: { cpu: 100 } }, preemption: { withinClusterQueue: 'LowerPriority' } })],
      nodes,
    );
    let t = 0;
    for (const i of [1, 2, 3, 4])
      for (const r of ['r1', 'r2']) admit(snap, 'a', wl(`v-${r}-${i}`, 0, 1), { hosts: [`${r}-x${i}`], reservedAt: 100 - t++ });
    return snap;
  };
  const racks = (t: PreemptionTarget[]) => [...new Set(keys(t).map((k) => k.split('-')[1]))].sort();

  it('with victims spread over racks, a preferred-rack preemptor frees one rack rather than scattered nodes', () => {
    const snap = setup();
    const p = preemptor(snap, 'a', workload('new').priority(5).pods(4, 1).preferred(RACK).build());
    assert.equal(p.req.assignment.preemptTopology, true);
    const t = targetsOf(snap, p);
    assert.deepEqual(keys(t), ['v-r1-1', 'v-r1-2', 'v-r1-3', 'v-r1-4']);
    // Without a level the global order is all there is: the most recently reserved victims, in both racks.
    const g = targetsOf(snap, preemptor(snap, 'a', workload('new').priority(5).pods(4, 1).build()));
    assert.equal(g.length, 4);
    assert.deepEqual(racks(g), ['r1', 'r2']);
  });

  it('a required-rack preemptor picks the rack whose victims have the lowest priority', () => {
    const snap = setup();
    for (const i of [1, 2, 3, 4]) {
      const k = `ns/v-r1-${i}`;
      const a = snap.removeAdmitted(k)!;
      snap.addAdmitted({ ...a, priority: 2 });
    }
    const t = targetsOf(snap, preemptor(snap, 'a', workload('new').priority(5).pods(4, 1).required(RACK).build()));
    assert.deepEqual(racks(t), ['r2']);
    assert.equal(t.length, 4);
  });
});

describe('rule 6: the first fitting prefix is found by binary search', () => {
  it('300 useless candidates before the one that helps cost a few dozen fits() calls, not 300', () => {
    const snap = snapshot([
      clusterQueue('a', { quotas: { default: { cpu: '2300m' } }, preemption: { withinClusterQueue: 'LowerPriority' } }),
    ]);
    for (let i = 0; i < 300; i++) admit(snap, 'a', wl(`tiny-${String(i).padStart(3, '0')}`, 0, '1m'));
    admit(snap, 'a', wl('big', 1, 2));
    const p = preemptor(snap, 'a', wl('new', 5, 1));
    assert.deepEqual(keys(targetsOf(snap, p)), ['big']);
    assert.ok(p.calls() < 40, `${p.calls()} fits() calls`);
  });
});

describe('search costs', () => {
  /** 2 racks x 4 nodes of 1 cpu, one victim per node, equal priorities: the racks tie on their estimates, r1 ranks first. */
  const racks = () => {
    const nodes = ['r1', 'r2'].flatMap((r) =>
      [1, 2, 3, 4].map((i) =>
        node(`${r}-x${i}`)
          .labels({ [BLOCK]: 'b1', [RACK]: r })
          .cpu(1),
      ),
    );
    const snap = snapshot(
      [clusterQueue('a', { quotas: { tas: { cpu: 100 } }, preemption: { withinClusterQueue: 'LowerPriority' } })],
      nodes,
    );
    for (const r of ['r1', 'r2']) for (const i of [1, 2, 3, 4]) admit(snap, 'a', wl(`v-${r}-${i}`, 0, 1), { hosts: [`${r}-x${i}`] });
    return snap;
  };
  /** The request of a 4-pod required-rack preemptor whose fits() records the reservations removed at each call; `refuse` vetoes states. */
  const probe = (snap: AdmissionSnapshot, refuse: (removed: string[]) => boolean = () => false) => {
    const p = preemptor(snap, 'a', workload('new').priority(5).pods(4, 1).required(RACK).build());
    const all = [...snap.admitted.keys()];
    const seen: string[][] = [];
    const fits = p.req.fits;
    const req: PreemptionRequest = {
      ...p.req,
      fits: () => {
        const removed = all.filter((k) => !snap.admitted.has(k)).map((k) => k.slice(NS.length + 1));
        seen.push(removed);
        return fits() && !refuse(removed);
      },
    };
    return { req, seen };
  };

  it('a domain whose estimate fits is probed before every candidate is removed', () => {
    const snap = racks();
    const { req, seen } = probe(snap);
    const t = targetsOf(snap, { req, calls: () => seen.length });
    assert.deepEqual(keys(t).sort(), ['v-r1-1', 'v-r1-2', 'v-r1-3', 'v-r1-4']);
    assert.ok(
      seen.every((r) => r.length <= 4),
      `no fits() call saw more than the rack's 4 victims removed: ${JSON.stringify(seen.map((r) => r.length))}`,
    );
  });

  it('when the estimate does not fit, the whole prefix is tested as before', () => {
    const snap = racks();
    // fits() refuses rack r1 freed alone (as a node filter the estimate ignores would): r2 must go.
    const { req, seen } = probe(snap, (removed) => !removed.some((k) => k.startsWith('v-r2-')));
    const t = targetsOf(snap, { req, calls: () => seen.length });
    assert.deepEqual(keys(t).sort(), ['v-r2-1', 'v-r2-2', 'v-r2-3', 'v-r2-4']);
    assert.ok(
      seen.some((r) => r.length === 8),
      'r1 first: its guess failed, so every candidate was removed to learn whether the order holds a solution',
    );
  });

  it('each prefix of one ordering is tested once', () => {
    const snap = racks();
    const { req, seen } = probe(snap);
    targetsOf(snap, { req, calls: () => seen.length });
    const states = seen.map((r) => [...r].sort().join(','));
    assert.equal(new Set(states).size, states.length, `fits() states: ${JSON.stringify(states)}`);
  });

  it('a ClusterQueue of the cohort that does not borrow is not looked at; once it borrows, its Workloads are candidates', () => {
    const make = (bUses: number) => {
      const snap = snapshot([
        clusterQueue('a', { cohort: 'c', quotas: { default: { cpu: 4 } }, preemption: { reclaimWithinCohort: 'Any' } }),
        clusterQueue('b', { cohort: 'c', quotas: { default: { cpu: 4 } } }),
      ]);
      for (let i = 0; i < bUses; i++) admit(snap, 'b', wl(`b-${i}`, 0, 1), { reservedAt: i });
      const looked: string[] = [];
      const admittedIn = snap.admittedIn.bind(snap);
      snap.admittedIn = (q: string) => {
        looked.push(q);
        return admittedIn(q);
      };
      return { snap, looked };
    };
    // b uses its nominal 4 of the cohort's 8: a cannot get 5 without b lending, and b does not borrow.
    let { snap, looked } = make(4);
    assert.deepEqual(targetsOf(snap, preemptor(snap, 'a', wl('new', 10, 5))), []);
    assert.ok(!looked.includes('b'), `looked at ${JSON.stringify(looked)}`);
    // b borrows 2: its Workloads are candidates again (the most recently reserved first).
    ({ snap, looked } = make(6));
    assert.deepEqual(keys(targetsOf(snap, preemptor(snap, 'a', wl('new', 10, 4)))), ['b-5', 'b-4']);
    assert.ok(looked.includes('b'));
  });
});

describe('rule 7: messages', () => {
  it("name the preemptor UID and the reason in the peer's words", () => {
    assert.equal(
      preemptionMessage('uid-1', PreemptedReason.InClusterQueue),
      'Preempted to accommodate a workload (UID: uid-1) due to prioritization in the ClusterQueue',
    );
    assert.equal(
      preemptionMessage('uid-1', PreemptedReason.InCohortReclamation),
      'Preempted to accommodate a workload (UID: uid-1) due to reclamation within the cohort',
    );
    assert.equal(
      preemptionMessage('uid-1', PreemptedReason.InCohortReclaimWhileBorrowing),
      'Preempted to accommodate a workload (UID: uid-1) due to reclamation within the cohort while borrowing',
    );
    assert.equal(
      preemptionMessage(undefined, PreemptedReason.InClusterQueue),
      'Preempted to accommodate a workload (UID: UNKNOWN) due to prioritization in the ClusterQueue',
    );
    const snap = snapshot([clusterQueue('a', { quotas: { default: { cpu: 1 } }, preemption: { withinClusterQueue: 'LowerPriority' } })]);
    admit(snap, 'a', wl('old', 0, 1));
    const [t] = targetsOf(snap, preemptor(snap, 'a', wl('new', 1, 1)));
    assert.equal(t!.message, 'Preempted to accommodate a workload (UID: uid-new) due to prioritization in the ClusterQueue');
  });

  it("the preemptor's UID is read back from the message (the peer's newer form with a JobUID too); none from other texts", () => {
    assert.equal(preemptorOfMessage(preemptionMessage('uid-1', PreemptedReason.InCohortReclamation)), 'uid-1');
    assert.equal(preemptorOfMessage(preemptionMessage('ns/name', PreemptedReason.InClusterQueue)), 'ns/name');
    assert.equal(
      preemptorOfMessage('Preempted to accommodate a workload (UID: uid-2, JobUID: job-9) due to prioritization in the ClusterQueue'),
      'uid-2',
    );
    assert.equal(preemptorOfMessage(preemptionMessage(undefined, PreemptedReason.InClusterQueue)), undefined);
    assert.equal(preemptorOfMessage('Exceeded the PodsReady timeout ns/w'), undefined);
  });
});

// ---- properties ------------------------------------------------------------------------------

/** The gang component of a Workload: every admitted Workload whose group shares a gang id with it, transitively. */
function component(snap: AdmissionSnapshot, a: AdmittedWorkload): AdmittedWorkload[] {
  if (a.gangGroup === undefined) return [a];
  const ids = new Set(a.gangGroup.split(','));
  const out = new Set<AdmittedWorkload>([a]);
  for (let grew = true; grew;) {
    grew = false;
    for (const b of snap.admitted.values()) {
      if (out.has(b) || b.gangGroup === undefined || !b.gangGroup.split(',').some((id) => ids.has(id))) continue;
      out.add(b);
      for (const id of b.gangGroup.split(',')) ids.add(id);
      grew = true;
    }
  }
  return [...out];
}

/** Units of the targets: gang components, else one Workload. */
function unitsOf(snap: AdmissionSnapshot, t: PreemptionTarget[]): AdmittedWorkload[][] {
  const seen = new Set<string>();
  const out: AdmittedWorkload[][] = [];
  for (const x of t) {
    if (seen.has(x.key)) continue;
    const u = component(snap, snap.admitted.get(x.key)!);
    for (const a of u) seen.add(a.key);
    out.push(u);
  }
  return out;
}

/**
 * The targets make the preemptor fit; putting any unit back makes it not fit (or makes it
 * exceed its nominal quota, for the attempts that reclaim without borrowing); the snapshot
 * is unchanged (targetsOf checks it); gangs are whole.
 */
function checkTargets(snap: AdmissionSnapshot, p: Probe, t: PreemptionTarget[]): void {
  if (t.length === 0) return;
  const { cq, assignment } = p.req;
  const withinNominal = () => [...assignment.usage].every(([f, v]) => snap.quota.usage(cq.name, f) + v <= snap.quota.nominal(cq.name, f));
  const units = unitsOf(snap, t);
  const targeted = new Set(t.map((x) => x.key));
  for (const u of units) for (const a of u) assert.ok(targeted.has(a.key), `${a.key} is in a targeted gang group`);
  for (const u of units) for (const a of u) snap.removeAdmitted(a.key);
  try {
    assert.ok(p.req.fits(), 'the targets make the preemptor fit');
    for (const u of units) {
      for (const a of u) snap.addAdmitted(a);
      assert.ok(!(p.req.fits() && withinNominal()), `removing ${u.map((a) => a.key).join(', ')} was needed`);
      for (const a of u) snap.removeAdmitted(a.key);
    }
  } finally {
    for (const u of units) for (const a of u) snap.addAdmitted(a);
  }
}

describe('properties', () => {
  const policyArb = fc.record({
    withinClusterQueue: fc.constantFrom('Never', 'LowerPriority', 'LowerOrNewerEqualPriority' as const),
    reclaimWithinCohort: fc.constantFrom('Never', 'LowerPriority', 'Any' as const),
    threshold: fc.option(fc.option(fc.integer({ min: 0, max: 4 }), { nil: undefined }), { nil: null }),
  });
  const admittedArb = fc.array(
    fc.record({
      cq: fc.constantFrom('a', 'b'),
      prio: fc.integer({ min: 0, max: 4 }),
      cpu: fc.integer({ min: 1, max: 4 }),
      reservedAt: fc.nat(5),
      created: fc.nat(5),
      gang: fc.option(fc.constantFrom('g0', 'g1', 'g2', 'g0,g1'), { nil: undefined }),
      reservedOnly: fc.boolean(),
    }),
    { maxLength: 12 },
  );

  it('quota: targets make the preemptor fit, are each needed, follow the policy, and the snapshot is unchanged', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 8 }),
        fc.integer({ min: 0, max: 8 }),
        policyArb,
        admittedArb,
        fc.record({ prio: fc.integer({ min: 0, max: 5 }), cpu: fc.integer({ min: 1, max: 6 }), created: fc.nat(5) }),
        (na, nb, pol, admitted, pre) => {
          const bwc =
            pol.threshold !== null && pol.reclaimWithinCohort !== 'Never'
              ? { policy: 'LowerPriority' as const, ...(pol.threshold !== undefined ? { maxPriorityThreshold: pol.threshold } : {}) }
              : undefined;
          const snap = snapshot([
            clusterQueue('a', {
              cohort: 'c',
              quotas: { default: { cpu: na } },
              preemption: {
                withinClusterQueue: pol.withinClusterQueue,
                reclaimWithinCohort: pol.reclaimWithinCohort,
                ...(bwc ? { borrowWithinCohort: bwc } : {}),
              },
            }),
            clusterQueue('b', { cohort: 'c', quotas: { default: { cpu: nb } } }),
          ]);
          admitted.forEach((x, i) => {
            if (x.cpu * 1000 > snap.quota.available(x.cq, CPU)) return;
            admit(snap, x.cq, workload(`w${i}`).priority(x.prio).pods(1, x.cpu).created(x.created).build(), {
              reservedAt: x.reservedAt,
              ...(x.gang !== undefined ? { gang: x.gang } : {}),
              reservedOnly: x.reservedOnly,
            });
          });
          const borrowingBefore = new Map(['a', 'b'].map((q) => [q, snap.quota.borrowing(q, CPU) > 0]));
          const p = preemptor(snap, 'a', workload('new').priority(pre.prio).pods(1, pre.cpu).created(pre.created).build());
          if (p.req.assignment.mode !== 'Preempt') return;
          const t = targetsOf(snap, p);
          for (const x of t) {
            const a = snap.admitted.get(x.key)!;
            if (a.clusterQueue === 'a') {
              assert.equal(x.reason, 'InClusterQueue');
              const newer = a.priority === pre.prio && Date.parse(a.workload.metadata.creationTimestamp!) > Date.parse(at(pre.created));
              if (pol.withinClusterQueue === 'LowerPriority') assert.ok(a.priority < pre.prio);
              else if (pol.withinClusterQueue === 'LowerOrNewerEqualPriority') assert.ok(a.priority < pre.prio || newer);
              else assert.fail(`${x.key} taken with withinClusterQueue Never`);
            } else {
              assert.notEqual(pol.reclaimWithinCohort, 'Never');
              assert.ok(borrowingBefore.get(a.clusterQueue), `${x.key}: its ClusterQueue did not borrow`);
              if (pol.reclaimWithinCohort === 'LowerPriority') assert.ok(a.priority < pre.prio);
              assert.ok(x.reason === 'InCohortReclamation' || (x.reason === 'InCohortReclaimWhileBorrowing' && bwc !== undefined));
            }
          }
          checkTargets(snap, p, t);
        },
      ),
      { numRuns: 400, seed: 11 },
    );
  });

  it('topology: targets make the preemptor fit on the racks, are each needed, and the snapshot is unchanged', () => {
    const hosts = ['r1', 'r2'].flatMap((r) => [1, 2, 3].map((i) => `${r}-x${i}`));
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            prio: fc.integer({ min: 0, max: 4 }),
            hosts: fc.array(fc.constantFrom(...hosts), { minLength: 1, maxLength: 3 }),
            reservedAt: fc.nat(5),
            gang: fc.option(fc.nat(1), { nil: undefined }),
          }),
          { maxLength: 10 },
        ),
        fc.record({
          prio: fc.integer({ min: 0, max: 5 }),
          count: fc.integer({ min: 1, max: 6 }),
          mode: fc.constantFrom('required', 'preferred', 'none' as const),
        }),
        (victims, pre) => {
          const nodes = hosts.map((h) =>
            node(h)
              .labels({ [BLOCK]: 'b1', [RACK]: h.slice(0, 2) })
              .cpu(2),
          );
          const snap = snapshot(
            [clusterQueue('a', { quotas: { tas: { cpu: 100 } }, preemption: { withinClusterQueue: 'LowerPriority' } })],
            nodes,
          );
          const used = new Map<string, number>();
          victims.forEach((v, i) => {
            if (v.hosts.some((h) => (used.get(h) ?? 0) + v.hosts.filter((x) => x === h).length > 2)) return;
            for (const h of v.hosts) used.set(h, (used.get(h) ?? 0) + 1);
            admit(snap, 'a', workload(`v${i}`).priority(v.prio).pods(v.hosts.length, 1).build(), {
              hosts: v.hosts,
              reservedAt: v.reservedAt,
              ...(v.gang !== undefined ? { gang: `g${v.gang}` } : {}),
            });
          });
          let w = workload('new').priority(pre.prio).pods(pre.count, 1);
          if (pre.mode === 'required') w = w.required(RACK);
          if (pre.mode === 'preferred') w = w.preferred(RACK);
          const p = preemptor(snap, 'a', w.build());
          if (p.req.assignment.mode !== 'Preempt') return;
          const t = targetsOf(snap, p);
          for (const x of t) assert.ok(snap.admitted.get(x.key)!.priority < pre.prio);
          checkTargets(snap, p, t);
        },
      ),
      { numRuns: 300, seed: 12 },
    );
  });
});
