import assert from 'node:assert/strict';
import { beforeEach, describe, it } from 'node:test';
import { KueueAnnotation, KueueLabel } from '../api/keys.ts';
import type { Pod, Workload } from '../api/objects.ts';
import { cq, cohort, wl } from '../testing/admission.ts';
import { node, pod } from '../testing/builders.ts';
import { VirtualClock } from '../runtime/clock.ts';
import { MemoryStore } from '../runtime/memory-store.ts';
import { mutable } from '../runtime/store.ts';
import { Invariant, InvariantChecker } from './invariants.ts';

const RACK = 'example.com/rack';
const HOST = 'kubernetes.io/hostname';

interface PsAdmission {
  name?: string;
  count: number;
  gpus: number;
  /** host -> pods (a v1beta1 assignment over the hostname level). */
  hosts?: Record<string, number>;
}

function admit(w: Workload, clusterQueue: string, podSets: PsAdmission[]): Workload {
  w.status = {
    admission: {
      clusterQueue,
      podSetAssignments: podSets.map((p) => ({
        name: p.name ?? 'main',
        count: p.count,
        flavors: { 'nvidia.com/gpu': 'gpu' },
        resourceUsage: { 'nvidia.com/gpu': String(p.gpus) },
        ...(p.hosts
          ? {
              topologyAssignment: {
                levels: [HOST],
                domains: Object.entries(p.hosts).map(([h, count]) => ({ values: [h], count })),
              } as never,
            }
          : {}),
      })),
    },
    conditions: [{ type: 'QuotaReserved', status: 'True', reason: 'QuotaReserved', message: '' }],
  };
  return w;
}

function wlPod(
  name: string,
  workload: string,
  nodeName: string | undefined,
  opts: { gpu?: number; gated?: boolean; phase?: Pod['status'] } = {},
): Pod {
  const b = pod(name).request('nvidia.com/gpu', opts.gpu ?? 1);
  if (nodeName) b.on(nodeName);
  const p = b.build();
  p.metadata.annotations = { [KueueAnnotation.Workload]: workload };
  p.metadata.labels = { [KueueLabel.PodSet]: 'main' };
  if (opts.gated) p.spec.schedulingGates = [{ name: 'kueue.x-k8s.io/topology' }];
  if (opts.phase) p.status = opts.phase;
  return p;
}

describe('the invariant checker', () => {
  let clock: VirtualClock;
  let store: MemoryStore;
  let checker: InvariantChecker;
  const kinds = () => checker.violations.map((v) => v.invariant);

  beforeEach(async () => {
    clock = new VirtualClock();
    store = new MemoryStore({ clock });
    checker = new InvariantChecker({ store, clock });
    await checker.start();
    for (const r of ['r1', 'r2'])
      for (const n of [1, 2])
        store.createSync(
          node(`${r}-n${n}`)
            .labels({ [RACK]: r })
            .gpu(4)
            .pods(3)
            .build(),
        );
  });

  it('a consistent cluster has no violation, in step and full checks', () => {
    store.createSync(cq('team').quota('gpu', { 'nvidia.com/gpu': '8' }).build());
    store.createSync(
      admit(
        wl('w1')
          .pods(2, { 'nvidia.com/gpu': '4' }, { topology: { required: RACK } })
          .build(),
        'team',
        [{ count: 2, gpus: 8, hosts: { 'r1-n1': 1, 'r1-n2': 1 } }],
      ),
    );
    store.createSync(wlPod('p0', 'w1', 'r1-n1', { gpu: 4 }));
    store.createSync(wlPod('p1', 'w1', 'r1-n2', { gpu: 4 }));
    checker.step();
    checker.full();
    assert.equal(checker.violations.length, 0, JSON.stringify(checker.violations));
  });

  it('a node whose bound pods request more than its allocatable is over capacity, terminal pods do not count', () => {
    store.createSync(pod('a').request('nvidia.com/gpu', 3).on('r1-n1').build());
    store.createSync(pod('done').request('nvidia.com/gpu', 3).on('r1-n1').phase('Succeeded').build());
    checker.step();
    assert.equal(checker.violations.length, 0, JSON.stringify(checker.violations));
    store.createSync(pod('b').request('nvidia.com/gpu', 2).on('r1-n1').build());
    checker.step();
    assert.deepEqual(kinds(), [Invariant.NodeCapacity]);
    assert.equal(checker.violations[0]!.object, 'Node/r1-n1');
    assert.match(checker.violations[0]!.message, /nvidia\.com\/gpu 5 > 4/);
  });

  it('a bound pod whose requests cannot be read is reported, not counted as requesting nothing', () => {
    const bad = pod('bad').on('r1-n1').build();
    bad.spec.containers[0]!.resources = { requests: { 'nvidia.com/gpu': 'lots' } };
    store.createSync(bad);
    const pending = pod('pending-bad').build();
    pending.spec.containers[0]!.resources = { requests: { cpu: '1x' } };
    store.createSync(pending);
    checker.step();
    assert.deepEqual(kinds(), [Invariant.UnreadablePodRequests]);
    assert.equal(checker.violations[0]!.object, 'Pod/default/bad');
    assert.match(
      checker.violations[0]!.message,
      /pod default\/bad runs on node r1-n1, but its requests cannot be read \(.*spec\.containers\[0\]\.resources\.requests.*lots.*\)/,
    );
    checker.full();
    assert.equal(checker.violations.length, 1, 'reported once while it stands');
    store.deleteSync('Pod', 'default', 'bad');
    checker.step();
    assert.equal(checker.violations.length, 1);
  });

  it('a node with more bound pods than its pods allocatable is over capacity', () => {
    for (const n of ['a', 'b', 'c', 'd']) store.createSync(pod(n).on('r2-n2').build());
    checker.step();
    assert.deepEqual(kinds(), [Invariant.NodeCapacity]);
    assert.match(checker.violations[0]!.message, /pods 4 > 3/);
  });

  it('a violation is reported once while it stands, and again when it comes back', () => {
    store.createSync(pod('a').request('nvidia.com/gpu', 5).on('r1-n1').build());
    checker.step();
    checker.step();
    checker.full();
    assert.equal(checker.violations.length, 1);
    store.deleteSync('Pod', 'default', 'a');
    checker.step();
    store.createSync(pod('b').request('nvidia.com/gpu', 5).on('r1-n1').build());
    checker.step();
    assert.equal(checker.violations.length, 2);
  });

  it('a ClusterQueue using more than nominal without a cohort, or more than nominal + borrowingLimit, is over quota', () => {
    store.createSync(cq('alone').quota('gpu', { 'nvidia.com/gpu': '8' }).build());
    store.createSync(cq('lender').cohort('org').quota('gpu', { 'nvidia.com/gpu': '16' }).build());
    store.createSync(
      cq('borrower')
        .cohort('org')
        .quota('gpu', { 'nvidia.com/gpu': ['4', '2'] })
        .build(),
    );
    store.createSync(admit(wl('a1').pods(2, { 'nvidia.com/gpu': '4' }).build(), 'alone', [{ count: 2, gpus: 8 }]));
    store.createSync(admit(wl('b1').pods(6, { 'nvidia.com/gpu': '1' }).build(), 'borrower', [{ count: 6, gpus: 6 }]));
    checker.step();
    assert.equal(checker.violations.length, 0, JSON.stringify(checker.violations));
    store.createSync(admit(wl('a2').pods(1, { 'nvidia.com/gpu': '1' }).build(), 'alone', [{ count: 1, gpus: 1 }]));
    store.createSync(admit(wl('b2').pods(1, { 'nvidia.com/gpu': '1' }).build(), 'borrower', [{ count: 1, gpus: 1 }]));
    checker.step();
    assert.deepEqual(kinds(), [Invariant.ClusterQueueQuota, Invariant.ClusterQueueQuota]);
    assert.deepEqual(checker.violations.map((v) => v.object).sort(), ['ClusterQueue/alone', 'ClusterQueue/borrower']);
  });

  it('ClusterQueues of a cohort together using more than the cohort has are over quota; finished Workloads release theirs', () => {
    store.createSync(cohort('org'));
    store.createSync(cq('a').cohort('org').quota('gpu', { 'nvidia.com/gpu': '4' }).build());
    store.createSync(cq('b').cohort('org').quota('gpu', { 'nvidia.com/gpu': '4' }).build());
    store.createSync(admit(wl('w1').pods(6, { 'nvidia.com/gpu': '1' }).build(), 'a', [{ count: 6, gpus: 6 }]));
    const done = admit(wl('w2').pods(4, { 'nvidia.com/gpu': '1' }).build(), 'b', [{ count: 4, gpus: 4 }]);
    done.status!.conditions!.push({ type: 'Finished', status: 'True', reason: 'Succeeded', message: '' });
    store.createSync(done);
    checker.step();
    assert.equal(checker.violations.length, 0, JSON.stringify(checker.violations));
    store.createSync(admit(wl('w3').pods(3, { 'nvidia.com/gpu': '1' }).build(), 'b', [{ count: 3, gpus: 3 }]));
    checker.step();
    assert.deepEqual(kinds(), [Invariant.ClusterQueueQuota]);
    assert.equal(checker.violations[0]!.object, 'Cohort/org');
  });

  it('a gang admitted below its minimum, or a PodSet below its minCount, breaks the gang rule', () => {
    store.createSync(admit(wl('gang').pods(4, { 'nvidia.com/gpu': '1' }).gang(3).build(), 'q', [{ count: 2, gpus: 2 }]));
    store.createSync(admit(wl('partial').pods(4, { 'nvidia.com/gpu': '1' }, { minCount: 3 }).build(), 'q', [{ count: 2, gpus: 2 }]));
    store.createSync(admit(wl('ok').pods(4, { 'nvidia.com/gpu': '1' }, { minCount: 3 }).gang(3).build(), 'q', [{ count: 3, gpus: 3 }]));
    checker.step();
    assert.deepEqual(kinds(), [Invariant.GangMinimum, Invariant.GangMinimum]);
    assert.deepEqual(
      checker.violations.map((v) => v.object),
      ['Workload/default/gang', 'Workload/default/partial'],
    );
  });

  it('an assignment or pods spanning two domains of the required level break it', () => {
    store.createSync(
      admit(
        wl('split')
          .pods(2, { 'nvidia.com/gpu': '1' }, { topology: { required: RACK } })
          .build(),
        'q',
        [{ count: 2, gpus: 2, hosts: { 'r1-n1': 1, 'r2-n1': 1 } }],
      ),
    );
    checker.step();
    assert.deepEqual(kinds(), [Invariant.RequiredTopology]);
    assert.match(checker.violations[0]!.message, /spans 2 domains of required level example\.com\/rack: r1, r2/);
  });

  it("a pod bound outside its PodSet's assignment, or outside the required domain, is caught", () => {
    store.createSync(
      admit(
        wl('w')
          .pods(2, { 'nvidia.com/gpu': '1' }, { topology: { required: RACK } })
          .build(),
        'q',
        [{ count: 2, gpus: 2, hosts: { 'r1-n1': 2 } }],
      ),
    );
    store.createSync(wlPod('p0', 'w', 'r1-n1'));
    store.createSync(wlPod('p1', 'w', 'r1-n2'));
    checker.step();
    assert.deepEqual(kinds(), [Invariant.PodOutsideAssignment]);
    store.createSync(wlPod('p2', 'w', 'r2-n1'));
    checker.step();
    assert.deepEqual(
      kinds().sort(),
      [Invariant.AdmittedTwice, Invariant.PodOutsideAssignment, Invariant.PodOutsideAssignment, Invariant.RequiredTopology].sort(),
    );
    assert.ok(
      checker.violations.some(
        (v) =>
          v.invariant === Invariant.AdmittedTwice &&
          /3 pods of PodSet main of Workload default\/w are bound, more than the 2/.test(v.message),
      ),
    );
  });

  it('the full check counts pods per domain against the assignment', () => {
    store.createSync(
      admit(wl('w').pods(2, { 'nvidia.com/gpu': '1' }).build(), 'q', [{ count: 2, gpus: 2, hosts: { 'r1-n1': 1, 'r1-n2': 1 } }]),
    );
    store.createSync(wlPod('p0', 'w', 'r1-n1'));
    store.createSync(wlPod('p1', 'w', 'r1-n1'));
    checker.step();
    assert.equal(checker.violations.length, 0, JSON.stringify(checker.violations));
    checker.full();
    assert.deepEqual(kinds(), [Invariant.PodOutsideAssignment]);
    assert.match(checker.violations[0]!.message, /2 pods of PodSet main of Workload default\/w run in domain r1-n1, assigned 1/);
  });

  it('pods on a failed node are not judged against the replacement assignment', () => {
    store.createSync(admit(wl('w').pods(1, { 'nvidia.com/gpu': '1' }).build(), 'q', [{ count: 1, gpus: 1, hosts: { 'r1-n2': 1 } }]));
    store.createSync(wlPod('p0', 'w', 'r1-n1'));
    const n = mutable(store.getSync('Node', undefined, 'r1-n1')!) as ReturnType<ReturnType<typeof node>['build']>;
    n.status!.conditions = [{ type: 'Ready', status: 'False' }];
    store.updateStatusSync(n);
    checker.step();
    assert.equal(checker.violations.length, 0, JSON.stringify(checker.violations));
  });

  it('a Workload re-admitted without its admission cleared is admitted twice; a failed-node replacement is not', () => {
    store.createSync(admit(wl('w').pods(1, { 'nvidia.com/gpu': '1' }).build(), 'q', [{ count: 1, gpus: 1, hosts: { 'r1-n1': 1 } }]));
    checker.step();
    const cur = () => mutable(store.getSync('Workload', 'default', 'w')!);
    const replaced = cur();
    replaced.status!.unhealthyNodes = [{ name: 'r1-n1' }];
    store.updateStatusSync(replaced);
    const moved = admit(cur(), 'q', [{ count: 1, gpus: 1, hosts: { 'r1-n2': 1 } }]);
    store.updateStatusSync(moved);
    checker.step();
    assert.equal(checker.violations.length, 0, JSON.stringify(checker.violations));
    const again = admit(cur(), 'other', [{ count: 1, gpus: 1, hosts: { 'r2-n1': 1 } }]);
    store.updateStatusSync(again);
    checker.step();
    assert.deepEqual(kinds(), [Invariant.AdmittedTwice]);
    assert.match(
      checker.violations[0]!.message,
      /admitted again \(ClusterQueue other, main: 1 on gpu\) while still admitted \(ClusterQueue q/,
    );
  });

  it('a running pod of a Workload without admission, and a bound pod that is still gated, are caught', () => {
    store.createSync(wl('pending').pods(1, { 'nvidia.com/gpu': '1' }).build());
    store.createSync(wlPod('p0', 'pending', 'r1-n1'));
    store.createSync(wlPod('g0', 'other', 'r2-n1', { gated: true }));
    store.createSync(wlPod('g1', 'other', undefined, { gated: true, phase: { phase: 'Pending' } }));
    checker.step();
    assert.deepEqual(kinds().sort(), [Invariant.GatedPodBound, Invariant.PodWithoutAdmission]);
    assert.deepEqual(checker.violations.map((v) => v.object).sort(), ['Pod/default/g0', 'Pod/default/p0']);
  });

  it('times are seconds from the start', () => {
    clock.advanceBy(90_500);
    store.createSync(pod('a').request('nvidia.com/gpu', 5).on('r1-n1').build());
    checker.step();
    assert.equal(checker.violations[0]!.at, 90.5);
  });

  it('full checks come every 5,000 steps, or every as many steps as there are subjects in a larger cluster', async () => {
    const run = (c: InvariantChecker, steps: number) => {
      for (let i = 0; i < steps; i++) c.step();
      return c.fullChecks;
    };
    // The 4 nodes of this cluster: every 5,000 steps.
    assert.equal(run(checker, 4999), 0);
    assert.equal(run(checker, 1), 1);
    // 8,000 subjects: every 8,000 steps, so a run's full checks cost about one check per step.
    const big = new MemoryStore({ clock });
    for (let i = 0; i < 8000; i++) big.createSync(node(`n${i}`).gpu(4).build());
    const adaptive = new InvariantChecker({ store: big, clock });
    await adaptive.start();
    assert.equal(run(adaptive, 7999), 0);
    assert.equal(run(adaptive, 1), 1);
    // A fixed `fullEvery` is kept whatever the size.
    const fixed = new InvariantChecker({ store: big, clock, fullEvery: 5000 });
    await fixed.start();
    assert.equal(run(fixed, 5000), 1);
  });
});
