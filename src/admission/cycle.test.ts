import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { GangLabel, GangWorkloadKey } from '../api/gang.ts';
import {
  RACK,
  admissionEnv,
  admittedKeys,
  cq,
  cohort,
  decisionStatus as statusOf,
  localQueue,
  rackCluster,
  wl,
} from '../testing/admission.ts';

describe('queue order', () => {
  it('higher priority first, then earlier creation', () => {
    const env = admissionEnv({ clusterQueues: [cq('q').quota('default', { cpu: '10' }).build()] });
    env.submit(
      wl('old-low').queue('q').pods(1, { cpu: '6' }).created(0).build(),
      wl('new-high').queue('q').pods(1, { cpu: '6' }).priority(10).created(5).build(),
      wl('newer-low').queue('q').pods(1, { cpu: '4' }).created(9).build(),
    );
    const r = env.settle();
    assert.deepEqual(admittedKeys(r), ['default/new-high', 'default/newer-low']);
    assert.match(statusOf(r, 'default/old-low').message!, /insufficient unused quota for cpu in flavor default, 2 more needed/);
  });

  it("Koordinator's sub-priority label breaks ties between equal priorities (higher first), before creation time", () => {
    const env = admissionEnv({ clusterQueues: [cq('q').quota('default', { cpu: '10' }).build()] });
    const sub = (b: ReturnType<typeof wl>, v: string) => {
      const w = b.build();
      w.metadata.labels = { ...w.metadata.labels, [GangLabel.SubPriority]: v };
      return w;
    };
    env.submit(
      wl('old').queue('q').pods(1, { cpu: '6' }).created(0).build(),
      sub(wl('new-sub').queue('q').pods(1, { cpu: '6' }).created(5), '0x10'),
      sub(wl('higher').queue('q').pods(1, { cpu: '4' }).priority(1).created(9), '-5'),
    );
    const r = env.settle();
    assert.deepEqual(admittedKeys(r), ['default/higher', 'default/new-sub']);
  });

  it('a gang Workload queues by its recorded queue timestamp (PodGroup or earliest pod), not its own creation', () => {
    const env = admissionEnv({ clusterQueues: [cq('q').quota('default', { cpu: '10' }).build()] });
    const early = wl('gang').queue('q').pods(1, { cpu: '6' }).gang(1).created(9).build();
    early.metadata.annotations = { ...early.metadata.annotations, [GangWorkloadKey.QueueTimestamp]: '1970-01-01T00:00:01Z' };
    env.submit(wl('plain').queue('q').pods(1, { cpu: '6' }).created(5).build(), early);
    assert.deepEqual(admittedKeys(env.settle()), ['default/gang']);
  });

  it('StrictFIFO: a head that does not fit blocks the workloads behind it', () => {
    const env = admissionEnv({ clusterQueues: [cq('q').quota('default', { cpu: '10' }).strict().build()] });
    env.submit(
      wl('first').queue('q').pods(1, { cpu: '8' }).created(0).build(),
      wl('big').queue('q').pods(1, { cpu: '5' }).created(1).build(),
      wl('small').queue('q').pods(1, { cpu: '1' }).created(2).build(),
    );
    const r = env.settle();
    assert.deepEqual(admittedKeys(r), ['default/first']);
    assert.equal(r.workloads.has('default/small'), false, 'small is never tried while big heads the queue');
    assert.equal(env.queues.queue('q')!.pendingCount, 2);
  });

  it('BestEffortFIFO: the next head is tried when the first does not fit', () => {
    const env = admissionEnv({ clusterQueues: [cq('q').quota('default', { cpu: '10' }).build()] });
    env.submit(
      wl('first').queue('q').pods(1, { cpu: '8' }).created(0).build(),
      wl('big').queue('q').pods(1, { cpu: '5' }).created(1).build(),
      wl('small').queue('q').pods(1, { cpu: '1' }).created(2).build(),
    );
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
    const env = admissionEnv({
      clusterQueues: [cq('q').quota('small', { cpu: '8', memory: '1Gi' }).quota('big', { cpu: '8', memory: '8Gi' }).build()],
    });
    env.submit(wl('a').queue('q').pods(1, { cpu: '1', memory: '2Gi' }).build());
    const a = statusOf(env.settle(), 'default/a').w.status!.admission!.podSetAssignments[0]!;
    assert.deepEqual(a.flavors, { cpu: 'big', memory: 'big' });
    assert.deepEqual(a.resourceUsage, { cpu: '1', memory: '2Gi' });
  });

  it('whenCanBorrow MayStopSearch borrows in the first flavor; TryNextFlavor looks for one without borrowing', () => {
    const build = (policy: 'MayStopSearch' | 'TryNextFlavor') => {
      const env = admissionEnv({
        clusterQueues: [
          cq('q').cohort('c').quota('f1', { cpu: '2' }).quota('f2', { cpu: '4' }).fungibility({ whenCanBorrow: policy }).build(),
          cq('lender').cohort('c').quota('f1', { cpu: '10' }).build(),
        ],
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
    const env = admissionEnv({
      clusterQueues: [
        cq('a')
          .cohort('c')
          .quota('f', { cpu: ['4', '2'] })
          .build(),
        cq('b').cohort('c').quota('f', { cpu: '10' }).build(),
      ],
    });
    env.submit(wl('x').queue('a').pods(1, { cpu: '6' }).created(0).build(), wl('y').queue('a').pods(1, { cpu: '1' }).created(1).build());
    const r = env.settle();
    assert.equal(statusOf(r, 'default/x').admitted, true);
    assert.equal(statusOf(r, 'default/y').admitted, false, 'the borrowing limit of 2 is used up');
    assert.deepEqual(env.snap.quota.violations(), []);
  });

  it('a lending limit keeps the rest of the nominal quota private', () => {
    const env = admissionEnv({
      clusterQueues: [
        cq('a').cohort('c').quota('f', { cpu: '2' }).build(),
        cq('b')
          .cohort('c')
          .quota('f', { cpu: ['10', undefined, '3'] })
          .build(),
      ],
    });
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
      clusterQueues: [
        cq('q')
          .quota('default', { cpu: '10' })
          .namespaceSelector({ matchLabels: { team: 'ml' } })
          .build(),
      ],
      localQueues: [localQueue('q', 'q', 'ml'), localQueue('q', 'q', 'web')],
      namespaces: new Map([
        ['ml', { team: 'ml' }],
        ['web', { team: 'web' }],
      ]),
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
    env.submit(
      wl('a').queue('q').pods(8, { cpu: '2' }, { minCount: 3 }).build(),
      wl('b').queue('q').pods(8, { cpu: '2' }, { minCount: 6 }).created(1).build(),
    );
    const r = env.settle();
    assert.equal(statusOf(r, 'default/a').w.status!.admission!.podSetAssignments[0]!.count, 5);
    assert.equal(statusOf(r, 'default/b').admitted, false);
  });
});

describe('topology (TAS during flavor assignment)', () => {
  it('admits with a topology assignment inside the required rack', () => {
    const { f, tas } = rackCluster(2, 2);
    const env = admissionEnv({ clusterQueues: [cq('q').quota('tas', { cpu: '100' }).build()], flavors: [f], tas: [tas] });
    env.submit(
      wl('a')
        .queue('q')
        .pods(2, { cpu: '4' }, { topology: { required: RACK } })
        .build(),
    );
    const a = statusOf(env.settle(), 'default/a').w.status!.admission!.podSetAssignments[0]!;
    assert.equal(a.count, 2);
    assert.ok(a.topologyAssignment);
  });

  it('quota fits but no rack can hold the pods: TopologyPlacementFailed', () => {
    const { f, tas } = rackCluster(2, 2);
    const env = admissionEnv({ clusterQueues: [cq('q').quota('tas', { cpu: '100' }).build()], flavors: [f], tas: [tas] });
    env.submit(
      wl('a')
        .queue('q')
        .pods(3, { cpu: '4' }, { topology: { required: RACK } })
        .build(),
    );
    const s = statusOf(env.settle(), 'default/a');
    assert.equal(s.reason, 'TopologyPlacementFailed');
  });

  it('a second workload in the same cycle sees the first one placement', () => {
    const { f, tas } = rackCluster(2, 2);
    const env = admissionEnv({
      clusterQueues: [cq('a').quota('tas', { cpu: '100' }).build(), cq('b').quota('tas', { cpu: '100' }).build()],
      flavors: [f],
      tas: [tas],
    });
    env.submit(
      wl('x')
        .queue('a')
        .pods(2, { cpu: '4' }, { topology: { required: RACK } })
        .build(),
      wl('y')
        .queue('b')
        .pods(2, { cpu: '4' }, { topology: { required: RACK } })
        .build(),
    );
    env.submit(
      wl('z')
        .queue('a')
        .pods(1, { cpu: '4' }, { topology: { required: RACK } })
        .created(5)
        .build(),
    );
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
});

describe('preemption', () => {
  it('within the ClusterQueue: a higher priority workload preempts a lower one and is admitted', () => {
    const env = admissionEnv({
      clusterQueues: [cq('q').quota('default', { cpu: '10' }).preemption({ withinClusterQueue: 'LowerPriority' }).build()],
    });
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
    const env = admissionEnv({
      clusterQueues: [cq('q').quota('default', { cpu: '10' }).preemption({ withinClusterQueue: 'LowerPriority' }).build()],
    });
    env.submit(
      wl('low').queue('q').pods(1, { cpu: '2' }).build(),
      wl('same').queue('q').pods(1, { cpu: '8' }).priority(5).created(1).build(),
    );
    env.settle();
    env.submit(wl('high').queue('q').pods(1, { cpu: '9' }).priority(5).created(10).build());
    const r = env.settle();
    assert.equal(statusOf(r, 'default/high').admitted, false);
    assert.equal(r.preempted, 0, 'removing low alone frees 2 of the 9 needed');
  });

  it('reclaims quota lent within the cohort from a borrowing ClusterQueue', () => {
    const env = admissionEnv({
      clusterQueues: [
        cq('a').cohort('c').quota('f', { cpu: '5' }).preemption({ reclaimWithinCohort: 'Any' }).build(),
        cq('b').cohort('c').quota('f', { cpu: '5' }).build(),
      ],
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
    const env = admissionEnv({
      clusterQueues: [cq('q').quota('default', { cpu: '10' }).preemption({ withinClusterQueue: 'LowerPriority' }).build()],
    });
    env.submit(
      wl('g1').queue('q').pods(1, { cpu: '4' }).gang(1, { groups: group }).build(),
      wl('g2').queue('q').pods(1, { cpu: '4' }).gang(1, { groups: group }).build(),
    );
    env.settle();
    assert.equal(env.snap.admitted.size, 2);
    env.submit(wl('high').queue('q').pods(1, { cpu: '5' }).priority(9).created(10).build());
    const r = env.settle();
    assert.equal(statusOf(r, 'default/high').admitted, true);
    assert.equal(r.preempted, 2, 'freeing one gang of the group frees both');
  });

  it('topology-aware: frees one rack rather than scattered nodes', () => {
    const { f, tas } = rackCluster(2, 2);
    const env = admissionEnv({
      clusterQueues: [cq('q').quota('tas', { cpu: '100' }).preemption({ withinClusterQueue: 'LowerPriority' }).build()],
      flavors: [f],
      tas: [tas],
    });
    // Four one-node workloads, one per host: r0-h0, r0-h1, r1-h0, r1-h1.
    for (let i = 0; i < 4; i++)
      env.submit(
        wl(`small${i}`)
          .queue('q')
          .pods(1, { cpu: '4' }, { topology: { required: 'kubernetes.io/hostname' } })
          .created(i)
          .build(),
      );
    env.settle();
    assert.equal(env.snap.admitted.size, 4);
    env.submit(
      wl('high')
        .queue('q')
        .pods(2, { cpu: '4' }, { topology: { required: RACK } })
        .priority(9)
        .created(10)
        .build(),
    );
    const r = env.settle();
    assert.equal(statusOf(r, 'default/high').admitted, true);
    assert.equal(r.preempted, 2);
    const racks = [...env.snap.admitted.values()]
      .filter((a) => a.key !== 'default/high')
      .map((a) => a.podSets[0]!.assignment!.domains[0]!.values.at(-1)!.split('-')[0]);
    assert.equal(new Set(racks).size, 1, 'the two survivors share the rack that was not freed');
  });
});
