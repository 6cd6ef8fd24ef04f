import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { GangAnnotation } from '../api/gang.ts';
import type { Workload } from '../api/objects.ts';
import { BLOCK, RACK, TAS_LEVELS, admissionEnv, cq, cohort, flavor, localQueue, tasFlavor, wl } from '../testing/admission.ts';
import { node } from '../testing/builders.ts';
import type { SettleResult } from './settle.ts';

function statusOf(r: SettleResult, key: string): { admitted: boolean; reason?: string; message?: string; w: Workload } {
  const w = r.workloads.get(key);
  assert.ok(w, `no decision for ${key}`);
  const qr = w.status?.conditions?.find((c) => c.type === 'QuotaReserved');
  const adm = w.status?.conditions?.find((c) => c.type === 'Admitted');
  return { admitted: adm?.status === 'True', reason: qr?.status === 'False' ? qr.reason : adm?.status === 'False' ? adm.reason : undefined, message: qr?.message, w };
}

const admittedKeys = (r: SettleResult) => [...r.workloads.keys()].filter((k) => statusOf(r, k).admitted).sort();

describe('queue order', () => {
  it('higher priority first, then earlier creation', () => {
    const env = admissionEnv({ clusterQueues: [cq('q').quota('default', { cpu: '10' }).build()] });
    env.submit(wl('old-low').queue('q').pods(1, { cpu: '6' }).created(0).build(), wl('new-high').queue('q').pods(1, { cpu: '6' }).priority(10).created(5).build(), wl('newer-low').queue('q').pods(1, { cpu: '4' }).created(9).build());
    const r = env.settle();
    assert.deepEqual(admittedKeys(r), ['default/new-high', 'default/newer-low']);
    assert.match(statusOf(r, 'default/old-low').message!, /insufficient unused quota for cpu in flavor default, 2 more needed/);
  });

  it('StrictFIFO: a head that does not fit blocks the workloads behind it', () => {
    const env = admissionEnv({ clusterQueues: [cq('q').quota('default', { cpu: '10' }).strict().build()] });
    env.submit(wl('first').queue('q').pods(1, { cpu: '8' }).created(0).build(), wl('big').queue('q').pods(1, { cpu: '5' }).created(1).build(), wl('small').queue('q').pods(1, { cpu: '1' }).created(2).build());
    const r = env.settle();
    assert.deepEqual(admittedKeys(r), ['default/first']);
    assert.equal(r.workloads.has('default/small'), false, 'small is never tried while big heads the queue');
    assert.equal(env.queues.queue('q')!.pendingCount, 2);
  });

  it('BestEffortFIFO: the next head is tried when the first does not fit', () => {
    const env = admissionEnv({ clusterQueues: [cq('q').quota('default', { cpu: '10' }).build()] });
    env.submit(wl('first').queue('q').pods(1, { cpu: '8' }).created(0).build(), wl('big').queue('q').pods(1, { cpu: '5' }).created(1).build(), wl('small').queue('q').pods(1, { cpu: '1' }).created(2).build());
    const r = env.settle();
    assert.deepEqual(admittedKeys(r), ['default/first', 'default/small']);
    assert.equal(statusOf(r, 'default/big').reason, 'WaitingForQuota');
  });

  it('a workload above the maximum capacity reports ExceedsMaxQuota with the peer message', () => {
    const env = admissionEnv({ clusterQueues: [cq('q').quota('default', { cpu: '10' }).build()] });
    env.submit(wl('huge').queue('q').pods(3, { cpu: '4' }).build());
    const s = statusOf(env.settle(), 'default/huge');
    assert.equal(s.reason, 'ExceedsMaxQuota');
    assert.equal(
      s.message,
      "couldn't assign flavors to pod set main: insufficient quota for cpu in flavor default, previously considered podsets requests (0) + current podset request (12) > maximum capacity (10)",
    );
  });
});

describe('flavor assignment', () => {
  it('flavors are tried in ClusterQueue order; the first that fits wins', () => {
    const env = admissionEnv({ clusterQueues: [cq('q').quota('on-demand', { cpu: '4' }).quota('spot', { cpu: '10' }).build()] });
    env.submit(wl('a').queue('q').pods(1, { cpu: '3' }).created(0).build(), wl('b').queue('q').pods(1, { cpu: '3' }).created(1).build());
    const r = env.settle();
    assert.equal(statusOf(r, 'default/a').w.status!.admission!.podSetAssignments[0]!.flavors!.cpu, 'on-demand');
    assert.equal(statusOf(r, 'default/b').w.status!.admission!.podSetAssignments[0]!.flavors!.cpu, 'spot');
  });

  it('all resources of one resource group get the same flavor', () => {
    const env = admissionEnv({ clusterQueues: [cq('q').quota('small', { cpu: '8', memory: '1Gi' }).quota('big', { cpu: '8', memory: '8Gi' }).build()] });
    env.submit(wl('a').queue('q').pods(1, { cpu: '1', memory: '2Gi' }).build());
    const a = statusOf(env.settle(), 'default/a').w.status!.admission!.podSetAssignments[0]!;
    assert.deepEqual(a.flavors, { cpu: 'big', memory: 'big' });
    assert.deepEqual(a.resourceUsage, { cpu: '1', memory: '2Gi' });
  });

  it('whenCanBorrow MayStopSearch borrows in the first flavor; TryNextFlavor looks for one without borrowing', () => {
    const build = (policy: 'MayStopSearch' | 'TryNextFlavor') => {
      const env = admissionEnv({
        clusterQueues: [cq('q').cohort('c').quota('f1', { cpu: '2' }).quota('f2', { cpu: '4' }).fungibility({ whenCanBorrow: policy }).build(), cq('lender').cohort('c').quota('f1', { cpu: '10' }).build()],
      });
      env.submit(wl('a').queue('q').pods(1, { cpu: '3' }).build());
      return statusOf(env.settle(), 'default/a').w.status!.admission!.podSetAssignments[0]!.flavors!.cpu;
    };
    assert.equal(build('MayStopSearch'), 'f1');
    assert.equal(build('TryNextFlavor'), 'f2');
  });

  it('a resource no flavor covers is NoMatchingFlavor', () => {
    const env = admissionEnv({ clusterQueues: [cq('q').quota('default', { cpu: '10' }).build()] });
    env.submit(wl('gpu').queue('q').pods(1, { cpu: '1', 'nvidia.com/gpu': '1' }).build());
    const s = statusOf(env.settle(), 'default/gpu');
    assert.equal(s.reason, 'NoMatchingFlavor');
    assert.match(s.message!, /resource nvidia.com\/gpu unavailable in ClusterQueue/);
  });
});

describe('cohorts', () => {
  it('borrows unused quota of the cohort up to the borrowing limit', () => {
    const env = admissionEnv({ clusterQueues: [cq('a').cohort('c').quota('f', { cpu: ['4', '2'] }).build(), cq('b').cohort('c').quota('f', { cpu: '10' }).build()] });
    env.submit(wl('x').queue('a').pods(1, { cpu: '6' }).created(0).build(), wl('y').queue('a').pods(1, { cpu: '1' }).created(1).build());
    const r = env.settle();
    assert.equal(statusOf(r, 'default/x').admitted, true);
    assert.equal(statusOf(r, 'default/y').admitted, false, 'the borrowing limit of 2 is used up');
    assert.deepEqual(env.snap.quota.violations(), []);
  });

  it('a lending limit keeps the rest of the nominal quota private', () => {
    const env = admissionEnv({ clusterQueues: [cq('a').cohort('c').quota('f', { cpu: '2' }).build(), cq('b').cohort('c').quota('f', { cpu: ['10', undefined, '3'] }).build()] });
    env.submit(wl('x').queue('a').pods(1, { cpu: '6' }).build());
    const s = statusOf(env.settle(), 'default/x');
    assert.equal(s.reason, 'ExceedsMaxQuota', 'a can reach its 2 plus the 3 b lends, not 6');
  });

  it('hierarchical cohorts lend through the tree', () => {
    const env = admissionEnv({
      cohorts: [cohort('root'), cohort('left', 'root'), cohort('right', 'root')],
      clusterQueues: [cq('a').cohort('left').quota('f', { cpu: '1' }).build(), cq('b').cohort('right').quota('f', { cpu: '8' }).build()],
    });
    env.submit(wl('x').queue('a').pods(1, { cpu: '7' }).build());
    assert.equal(statusOf(env.settle(), 'default/x').admitted, true);
  });
});

describe('namespaces and stopped queues', () => {
  it('a namespace the ClusterQueue does not select is inadmissible', () => {
    const env = admissionEnv({
      clusterQueues: [cq('q').quota('default', { cpu: '10' }).namespaceSelector({ matchLabels: { team: 'ml' } }).build()],
      localQueues: [localQueue('q', 'q', 'ml'), localQueue('q', 'q', 'web')],
      namespaces: new Map([['ml', { team: 'ml' }], ['web', { team: 'web' }]]),
    });
    env.submit(wl('a', 'ml').queue('q').pods(1, { cpu: '1' }).build(), wl('b', 'web').queue('q').pods(1, { cpu: '1' }).build());
    const r = env.settle();
    assert.equal(statusOf(r, 'ml/a').admitted, true);
    assert.equal(statusOf(r, 'web/b').message, "Workload namespace doesn't match ClusterQueue selector");
  });

  it('a ClusterQueue with stopPolicy Hold admits nothing new', () => {
    const env = admissionEnv({ clusterQueues: [cq('q').quota('default', { cpu: '10' }).stop('Hold').build()] });
    env.submit(wl('a').queue('q').pods(1, { cpu: '1' }).build());
    const s = statusOf(env.settle(), 'default/a');
    assert.equal(s.reason, 'Suspended');
    assert.equal(s.message, 'ClusterQueue q is inactive');
  });
});

describe('partial admission', () => {
  it('shrinks to the largest count that fits, not below minCount', () => {
    const env = admissionEnv({ clusterQueues: [cq('q').quota('default', { cpu: '10' }).build()] });
    env.submit(wl('a').queue('q').pods(8, { cpu: '2' }, { minCount: 3 }).build(), wl('b').queue('q').pods(8, { cpu: '2' }, { minCount: 6 }).created(1).build());
    const r = env.settle();
    assert.equal(statusOf(r, 'default/a').w.status!.admission!.podSetAssignments[0]!.count, 5);
    assert.equal(statusOf(r, 'default/b').admitted, false);
  });
});

function rackCluster(racks: number, hostsPerRack: number, cpu = '4') {
  const nodes = [];
  for (let r = 0; r < racks; r++) for (let h = 0; h < hostsPerRack; h++) nodes.push(node(`r${r}-h${h}`).labels({ [BLOCK]: 'b0', [RACK]: `r${r}` }).cpu(cpu).build());
  const f = flavor('tas', { topology: 'default' });
  return { f, tas: tasFlavor(f, TAS_LEVELS, nodes) };
}

describe('topology (TAS during flavor assignment)', () => {
  it('admits with a topology assignment inside the required rack', () => {
    const { f, tas } = rackCluster(2, 2);
    const env = admissionEnv({ clusterQueues: [cq('q').quota('tas', { cpu: '100' }).build()], flavors: [f], tas: [tas] });
    env.submit(wl('a').queue('q').pods(2, { cpu: '4' }, { topology: { required: RACK } }).build());
    const a = statusOf(env.settle(), 'default/a').w.status!.admission!.podSetAssignments[0]!;
    assert.equal(a.count, 2);
    assert.ok(a.topologyAssignment);
  });

  it('quota fits but no rack can hold the pods: TopologyPlacementFailed', () => {
    const { f, tas } = rackCluster(2, 2);
    const env = admissionEnv({ clusterQueues: [cq('q').quota('tas', { cpu: '100' }).build()], flavors: [f], tas: [tas] });
    env.submit(wl('a').queue('q').pods(3, { cpu: '4' }, { topology: { required: RACK } }).build());
    const s = statusOf(env.settle(), 'default/a');
    assert.equal(s.reason, 'TopologyPlacementFailed');
  });

  it('a second workload in the same cycle sees the first one placement', () => {
    const { f, tas } = rackCluster(2, 2);
    const env = admissionEnv({ clusterQueues: [cq('a').quota('tas', { cpu: '100' }).build(), cq('b').quota('tas', { cpu: '100' }).build()], flavors: [f], tas: [tas] });
    env.submit(wl('x').queue('a').pods(2, { cpu: '4' }, { topology: { required: RACK } }).build(), wl('y').queue('b').pods(2, { cpu: '4' }, { topology: { required: RACK } }).build());
    env.submit(wl('z').queue('a').pods(1, { cpu: '4' }, { topology: { required: RACK } }).created(5).build());
    const r = env.settle();
    assert.deepEqual(admittedKeys(r), ['default/x', 'default/y']);
    for (const leaf of tas.snapshot.leaves()) assert.ok(tas.snapshot.free(leaf, tas.snapshot.resourceIndex('cpu')) >= 0);
  });
});

describe('gangs', () => {
  it('a gang is admitted only with at least its minimum placed at once', () => {
    const { f, tas } = rackCluster(2, 2);
    const env = admissionEnv({ clusterQueues: [cq('q').quota('tas', { cpu: '100' }).build()], flavors: [f], tas: [tas] });
    env.submit(wl('g').queue('q').pods(6, { cpu: '4' }).gang(4).build());
    const a = statusOf(env.settle(), 'default/g').w.status!.admission!.podSetAssignments[0]!;
    assert.equal(a.count, 4, '4 nodes hold 4 of the 6 pods, its minimum');
  });

  /** 4 nodes of 4 cpu, 2 of them taken by a higher-priority workload. */
  function halfFull(gang: (b: ReturnType<typeof wl>) => ReturnType<typeof wl>) {
    const { f, tas } = rackCluster(2, 2);
    const env = admissionEnv({ clusterQueues: [cq('q').quota('tas', { cpu: '100' }).build()], flavors: [f], tas: [tas] });
    env.submit(wl('other').queue('q').pods(2, { cpu: '4' }).priority(10).build(), gang(wl('g').queue('q').pods(4, { cpu: '4' })).build());
    return { env, r: env.settle() };
  }

  it('a gang whose minimum does not fit holds nothing (Strict)', () => {
    const { env, r } = halfFull((b) => b.gang(3));
    const s = statusOf(r, 'default/g');
    assert.equal(s.admitted, false);
    assert.equal(s.w.status?.admission, undefined);
    assert.deepEqual([...env.snap.admitted.keys()], ['default/other']);
  });

  it('NonStrict holds what it has reserved while it accumulates', () => {
    const { env, r } = halfFull((b) => b.gang(3, { mode: 'NonStrict' }));
    const s = statusOf(r, 'default/g');
    assert.equal(s.admitted, false);
    assert.equal(s.reason, 'GangAccumulating');
    assert.equal(s.w.status!.admission!.podSetAssignments[0]!.count, 2);
    assert.ok(env.snap.admitted.get('default/g')?.reservedOnly);
    assert.ok(s.w.metadata.annotations?.['topoqueue.io/gang-waiting-since']);
  });

  it('a NonStrict gang is admitted once its minimum is reserved', () => {
    const { env } = halfFull((b) => b.gang(3, { mode: 'NonStrict' }));
    env.snap.removeAdmitted('default/other');
    env.queues.requeueInadmissible(0);
    const r = env.settle();
    const s = statusOf(r, 'default/g');
    assert.equal(s.admitted, true);
    assert.equal(s.w.status!.admission!.podSetAssignments[0]!.count, 4);
  });

  it('total-number bounds how many members may come', () => {
    const env = admissionEnv({ clusterQueues: [cq('q').quota('default', { cpu: '100' }).build()] });
    env.submit(wl('g').queue('q').pods(6, { cpu: '1' }).gang(2, { total: 4 }).build());
    assert.equal(statusOf(env.settle(), 'default/g').w.status!.admission!.podSetAssignments[0]!.count, 4);
  });

  it('a gang short of members waits with the peer basic-check message', () => {
    const env2 = admissionEnv({ clusterQueues: [cq('q').quota('default', { cpu: '100' }).build()], localQueues: [localQueue('q', 'q', 'ns')] });
    env2.submit(wl('g', 'ns').queue('q').pods(2, { cpu: '1' }).gang(3).build());
    const s = statusOf(env2.settle(), 'ns/g');
    assert.equal(s.reason, 'GangNotReady');
    assert.equal(s.message, 'gangGroup [ns/g] basic check: memberGangs [ns/g] child pod not collect enough, current gang: ns/g');
  });

  it('a gang group is admitted together, across namespaces, or not at all', () => {
    const group = ['ns-a/a', 'ns-b/b'];
    const mk = (bCpu: string) => {
      const env = admissionEnv({
        clusterQueues: [cq('qa').quota('default', { cpu: '10' }).build(), cq('qb').quota('default', { cpu: '10' }).build()],
        localQueues: [localQueue('qa', 'qa', 'ns-a'), localQueue('qb', 'qb', 'ns-b')],
      });
      env.submit(wl('a', 'ns-a').queue('qa').pods(2, { cpu: '2' }).gang(2, { groups: group }).build(), wl('b', 'ns-b').queue('qb').pods(2, { cpu: bCpu }).gang(2, { groups: group }).build());
      return env.settle();
    };
    const ok = mk('2');
    assert.deepEqual(admittedKeys(ok), ['ns-a/a', 'ns-b/b']);
    const no = mk('6');
    assert.deepEqual(admittedKeys(no), []);
    assert.match(statusOf(no, 'ns-a/a').message!, /ns-b\/b/);
  });

  it('a group naming a gang that does not exist waits: memberGangs doesn\'t exists', () => {
    const env = admissionEnv({ clusterQueues: [cq('q').quota('default', { cpu: '10' }).build()] });
    env.submit(wl('a').queue('q').pods(1, { cpu: '1' }).gang(1, { groups: ['default/a', 'default/typo'] }).build());
    assert.equal(statusOf(env.settle(), 'default/a').message, "gangGroup [default/a default/typo] basic check: memberGangs [default/typo] doesn't exists, current gang: default/a");
  });

  it('when the waiting time runs out the gang releases everything and is timed out', () => {
    const { f, tas } = rackCluster(2, 2);
    const env = admissionEnv({ clusterQueues: [cq('q').quota('tas', { cpu: '100' }).build()], flavors: [f], tas: [tas] });
    const g = wl('g').queue('q').pods(4, { cpu: '4' }).gang(3, { mode: 'NonStrict', waitingTime: '30s' }).build();
    g.metadata.ownerReferences = ['p0', 'p1', 'p2', 'p3'].map((name) => ({ apiVersion: 'v1', kind: 'Pod', name, uid: name }));
    env.submit(wl('other').queue('q').pods(2, { cpu: '4' }).priority(10).build(), g);
    const t = 1_795_220_000;
    env.settle({ now: t });
    assert.ok(env.snap.admitted.get('default/g')?.reservedOnly);
    env.queues.requeueInadmissible(t + 31);
    const r = env.settle({ now: t + 31 });
    const d = r.last.get('default/g');
    assert.equal(d?.kind, 'gangTimeout');
    assert.deepEqual(d.kind === 'gangTimeout' && d.pods, ['default/p0', 'default/p1', 'default/p2', 'default/p3']);
    const w = r.workloads.get('default/g')!;
    assert.equal(w.metadata.annotations?.[GangAnnotation.Timeout], 'true');
    assert.equal(w.status?.admission, undefined);
    assert.deepEqual([...env.snap.admitted.keys()], ['default/other'], 'the reservation is released');
    assert.equal(env.queues.pendingCount, 0, 'not scheduled again');
  });

  it('a timed-out gang is not scheduled until the user acts', () => {
    const env = admissionEnv({ clusterQueues: [cq('q').quota('default', { cpu: '10' }).build()] });
    env.submit(wl('g').queue('q').pods(1, { cpu: '1' }).gang(1).annotate({ [GangAnnotation.Timeout]: 'true' }).build());
    const s = statusOf(env.settle(), 'default/g');
    assert.equal(s.reason, 'GangTimeout');
  });
});

describe('preemption', () => {
  it('within the ClusterQueue: a higher priority workload preempts a lower one and is admitted', () => {
    const env = admissionEnv({ clusterQueues: [cq('q').quota('default', { cpu: '10' }).preemption({ withinClusterQueue: 'LowerPriority' }).build()] });
    env.submit(wl('low').queue('q').pods(1, { cpu: '8' }).build());
    env.settle();
    env.submit(wl('high').queue('q').pods(1, { cpu: '6' }).priority(5).created(10).build());
    const r = env.settle();
    assert.equal(statusOf(r, 'default/high').admitted, true);
    const low = statusOf(r, 'default/low').w;
    const preempted = low.status!.conditions!.find((c) => c.type === 'Preempted')!;
    assert.equal(preempted.reason, 'InClusterQueue');
    assert.equal(low.status!.conditions!.find((c) => c.type === 'Evicted')!.reason, 'Preempted');
    assert.equal(low.status?.admission, undefined);
    assert.deepEqual(env.snap.quota.violations(), []);
  });

  it('never preempts when it would not make the preemptor fit', () => {
    const env = admissionEnv({ clusterQueues: [cq('q').quota('default', { cpu: '10' }).preemption({ withinClusterQueue: 'LowerPriority' }).build()] });
    env.submit(wl('low').queue('q').pods(1, { cpu: '2' }).build(), wl('same').queue('q').pods(1, { cpu: '8' }).priority(5).created(1).build());
    env.settle();
    env.submit(wl('high').queue('q').pods(1, { cpu: '9' }).priority(5).created(10).build());
    const r = env.settle();
    assert.equal(statusOf(r, 'default/high').admitted, false);
    assert.equal(r.preempted, 0, 'removing low alone frees 2 of the 9 needed');
  });

  it('reclaims quota lent within the cohort from a borrowing ClusterQueue', () => {
    const env = admissionEnv({
      clusterQueues: [cq('a').cohort('c').quota('f', { cpu: '5' }).preemption({ reclaimWithinCohort: 'Any' }).build(), cq('b').cohort('c').quota('f', { cpu: '5' }).build()],
    });
    env.submit(wl('borrower').queue('b').pods(1, { cpu: '8' }).build());
    env.settle();
    env.submit(wl('owner').queue('a').pods(1, { cpu: '5' }).created(10).build());
    const r = env.settle();
    assert.equal(statusOf(r, 'default/owner').admitted, true);
    assert.equal(statusOf(r, 'default/borrower').w.status!.conditions!.find((c) => c.type === 'Preempted')!.reason, 'InCohortReclamation');
  });

  it('a gang is preempted whole', () => {
    const group = ['default/g1', 'default/g2'];
    const env = admissionEnv({ clusterQueues: [cq('q').quota('default', { cpu: '10' }).preemption({ withinClusterQueue: 'LowerPriority' }).build()] });
    env.submit(wl('g1').queue('q').pods(1, { cpu: '4' }).gang(1, { groups: group }).build(), wl('g2').queue('q').pods(1, { cpu: '4' }).gang(1, { groups: group }).build());
    env.settle();
    assert.equal(env.snap.admitted.size, 2);
    env.submit(wl('high').queue('q').pods(1, { cpu: '5' }).priority(9).created(10).build());
    const r = env.settle();
    assert.equal(statusOf(r, 'default/high').admitted, true);
    assert.equal(r.preempted, 2, 'freeing one gang of the group frees both');
  });

  it('topology-aware: frees one rack rather than scattered nodes', () => {
    const { f, tas } = rackCluster(2, 2);
    const env = admissionEnv({ clusterQueues: [cq('q').quota('tas', { cpu: '100' }).preemption({ withinClusterQueue: 'LowerPriority' }).build()], flavors: [f], tas: [tas] });
    // Four one-node workloads, one per host: r0-h0, r0-h1, r1-h0, r1-h1.
    for (let i = 0; i < 4; i++) env.submit(wl(`small${i}`).queue('q').pods(1, { cpu: '4' }, { topology: { required: 'kubernetes.io/hostname' } }).created(i).build());
    env.settle();
    assert.equal(env.snap.admitted.size, 4);
    env.submit(wl('high').queue('q').pods(2, { cpu: '4' }, { topology: { required: RACK } }).priority(9).created(10).build());
    const r = env.settle();
    assert.equal(statusOf(r, 'default/high').admitted, true);
    assert.equal(r.preempted, 2);
    const racks = [...env.snap.admitted.values()].filter((a) => a.key !== 'default/high').map((a) => a.podSets[0]!.assignment!.domains[0]!.values.at(-1)!.split('-')[0]);
    assert.equal(new Set(racks).size, 1, 'the two survivors share the rack that was not freed');
  });
});
