// The flavor assigner's remembered answers (what a Workload could get on an empty
// topology) must follow every change that matters: bound pods and nodes, not the TAS
// Workloads admitted and taken back.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { schedule } from './cycle.ts';
import { type FlavorAssignment, PendingReason } from './flavor-assigner.ts';
import { assignFlavors, quotaFitHolds } from './flavor-assigner.ts';
import { workloadInfo } from './workload-info.ts';
import {
  type AdmissionEnv,
  RACK,
  T0,
  TAS_LEVELS,
  type WorkloadBuilder,
  admissionEnv,
  cq,
  flavor,
  rackCluster,
  tasFlavor,
  wl,
} from '../testing/admission.ts';
import { node } from '../testing/builders.ts';

function env() {
  const nodes = ['n1', 'n2'].map((n) =>
    node(n)
      .labels({ 'cloud.com/block': 'b', [RACK]: 'r' })
      .cpu('4')
      .build(),
  );
  const f = flavor('tas', { topology: 'default' });
  const tas = tasFlavor(f, TAS_LEVELS, nodes);
  const e = admissionEnv({
    clusterQueues: [cq('q').quota('tas', { cpu: '8' }).preemption({ withinClusterQueue: 'LowerPriority' }).build()],
    flavors: [f],
    tas: [tas],
  });
  return { ...e, tas, cq: e.snap.clusterQueues.get('q')! };
}

describe('assignFlavors: the placement on an empty topology', () => {
  it('follows bound pods, and not the TAS Workloads admitted and taken back', () => {
    const { snap, submit, settle, tas, cq: q } = env();
    // The rack is full of a low-priority Workload: the whole-rack one is short of quota.
    submit(
      wl('low')
        .queue('q')
        .pods(2, { cpu: '4' }, { topology: { required: RACK } })
        .priority(0)
        .build(),
    );
    assert.equal(settle().admitted, 1);
    const big = workloadInfo(
      wl('big')
        .queue('q')
        .pods(2, { cpu: '4' }, { topology: { required: RACK } })
        .priority(5)
        .build(),
    );
    const assign = () => assignFlavors(snap, q, big, { placement: {} });
    assert.equal(assign().mode, 'Preempt', 'the rack would hold it once emptied');
    assert.equal(assign().preemptTopology, true);

    // A bound pod on n1: even an empty rack no longer holds two 4-CPU pods.
    tas.snapshot.addPod('ns/bound', 'n1', { cpu: 1000 });
    const blocked = assign();
    assert.equal(blocked.mode, 'NoFit');
    assert.equal(blocked.reason, PendingReason.TopologyPlacementFailed);

    // TAS usage alone changing (taking the admitted one back and forth) keeps that answer.
    const low = snap.removeAdmitted('default/low')!;
    assert.equal(assign().mode, 'NoFit', 'quota fits now, the rack still does not');
    snap.addAdmitted(low);
    assert.equal(assign().mode, 'NoFit');

    // The pod goes: the rack is big enough again.
    tas.snapshot.removePod('ns/bound');
    assert.equal(assign().mode, 'Preempt');
  });

  it('gives the same answer to Workloads of the same shape, and another to a bigger one', () => {
    const { snap, submit, settle, cq: q } = env();
    submit(
      wl('low')
        .queue('q')
        .pods(2, { cpu: '4' }, { topology: { required: RACK } })
        .priority(0)
        .build(),
    );
    settle();
    const shaped = (name: string, pods: number) =>
      workloadInfo(
        wl(name)
          .queue('q')
          .pods(pods, { cpu: '4' }, { topology: { required: RACK } })
          .priority(5)
          .build(),
      );
    assert.equal(assignFlavors(snap, q, shaped('a', 2), { placement: {} }).mode, 'Preempt');
    assert.equal(assignFlavors(snap, q, shaped('b', 2), { placement: {} }).mode, 'Preempt');
    // Three pods never fit the two-node rack (quota says at most 8 CPU anyway: ExceedsMaxQuota first).
    assert.equal(assignFlavors(snap, q, shaped('c', 3), { placement: {} }).reason, PendingReason.ExceedsMaxQuota);
    assert.equal(assignFlavors(snap, q, shaped('d', 2), { placement: {}, counts: new Map([['main', 1]]) }).mode, 'Preempt');
  });
});

describe('quotaFitHolds: the quota-only re-check of a nominated Fit', () => {
  const quotaEnv = (flavors: string[]) =>
    admissionEnv({
      clusterQueues: ['a', 'b'].map((n) => {
        let c = cq(n).cohort('co');
        for (const f of flavors) c = c.quota(f, { cpu: ['4', '4'] });
        return c.build();
      }),
    });
  const infoOf = (name: string, queue: string, cpu: string) => workloadInfo(wl(name).queue(queue).pods(1, { cpu }).build());

  it('answers as assigning again would, as the cohort fills up', () => {
    const { snap } = quotaEnv(['default']);
    const a = snap.clusterQueues.get('a')!;
    const b = snap.clusterQueues.get('b')!;
    const head = infoOf('head', 'a', '3');
    const nominated = assignFlavors(snap, a, head, { placement: {} });
    assert.equal(nominated.mode, 'Fit');
    // Another queue of the cohort takes 1, 3, 5, then 6 of the 8 CPUs.
    for (const [i, cpu] of ['1', '2', '2', '1'].entries()) {
      const other = assignFlavors(snap, b, infoOf(`o${i}`, 'b', cpu), { placement: {} });
      snap.addAdmitted({
        key: `default/o${i}`,
        workload: head.workload,
        clusterQueue: 'b',
        priority: 0,
        reservedAt: 0,
        podSets: other.podSets,
        usage: other.usage,
      });
      const again = assignFlavors(snap, a, head, { placement: {} });
      assert.equal(quotaFitHolds(snap, a, nominated), again.mode === 'Fit', `after ${cpu} more CPUs in b`);
    }
    assert.equal(quotaFitHolds(snap, a, nominated), false, 'only 2 of 8 CPUs are left');
  });

  it('does not answer when a resource group has a flavor to choose', () => {
    const { snap } = quotaEnv(['one', 'two']);
    const a = snap.clusterQueues.get('a')!;
    const nominated = assignFlavors(snap, a, infoOf('head', 'a', '3'), { placement: {} });
    assert.equal(nominated.mode, 'Fit');
    assert.equal(quotaFitHolds(snap, a, nominated), undefined);
  });

  it('does not answer for a PodSet placed on a topology', () => {
    const { snap, cq: q } = env();
    const info = workloadInfo(
      wl('t')
        .queue('q')
        .pods(1, { cpu: '1' }, { topology: { required: RACK } })
        .build(),
    );
    const nominated = assignFlavors(snap, q, info, { placement: {} });
    assert.equal(nominated.mode, 'Fit');
    assert.equal(quotaFitHolds(snap, q, nominated), undefined);
  });
});

describe('assignFlavors: a Workload info is read once', () => {
  it('keeps its reading of the PodSets across snapshots, and reads new PodSets afresh', () => {
    const mk = () => admissionEnv({ clusterQueues: [cq('a').quota('default', { cpu: '4' }).build()] }).snap;
    const info = workloadInfo(wl('w').queue('a').pods(2, { cpu: '1' }).build());
    const s1 = mk();
    assert.equal(assignFlavors(s1, s1.clusterQueues.get('a')!, info, { placement: {} }).mode, 'Fit');
    const shape = info.shape;
    assert.ok(shape);
    const s2 = mk();
    assert.equal(assignFlavors(s2, s2.clusterQueues.get('a')!, info, { placement: {} }).mode, 'Fit');
    assert.equal(info.shape, shape);
    // The same info with other PodSets (as a changed Workload reads): a new reading, and its answer.
    const bigger = { ...info, podSets: [{ ...info.podSets[0]!, count: 8 }] };
    assert.equal(assignFlavors(s2, s2.clusterQueues.get('a')!, bigger, { placement: {} }).mode, 'NoFit');
    assert.notEqual(bigger.shape, shape);
  });
});

describe('assignFlavors: the placement on the topology as it is, remembered', () => {
  /** Two ClusterQueues on a TAS flavor of two racks of two 4-CPU hosts; engine.place calls counted. */
  function placedEnv() {
    const { f, tas } = rackCluster(2, 2);
    const e = admissionEnv({
      clusterQueues: ['a', 'b'].map((n) => cq(n).quota('tas', { cpu: '16' }).build()),
      flavors: [f],
      tas: [tas],
    });
    const place = tas.engine.place.bind(tas.engine);
    const calls = { n: 0 };
    tas.engine.place = (req, opts) => {
      calls.n++;
      return place(req, opts);
    };
    return { ...e, tas, calls };
  }
  const rackHead = (name: string, queue: string) =>
    wl(name)
      .queue(queue)
      .pods(2, { cpu: '2' }, { topology: { required: RACK } })
      .build();
  const hosts = (a: FlavorAssignment) =>
    a.podSets.flatMap((p) => p.assignment?.domains.map((d) => `${d.values.join('/')}x${d.count}`) ?? []);

  it('places Workloads of the same shape once while the snapshot is unchanged, each with its own copy', () => {
    const { snap, calls } = placedEnv();
    const a = snap.clusterQueues.get('a')!;
    const b = snap.clusterQueues.get('b')!;
    const first = assignFlavors(snap, a, workloadInfo(rackHead('x', 'a')), { placement: {} });
    const second = assignFlavors(snap, b, workloadInfo(rackHead('y', 'b')), { placement: {} });
    assert.equal(first.mode, 'Fit');
    assert.equal(calls.n, 1, 'the second Workload of the same shape is not placed again');
    assert.deepEqual(second.podSets, first.podSets);
    assert.notEqual(second.podSets[0]!.assignment, first.podSets[0]!.assignment, 'a copy, not the same assignment');
    // Other options, or other counts, are another question.
    assignFlavors(snap, a, workloadInfo(rackHead('z', 'a')), { placement: { respectPreferredAffinity: true } });
    assignFlavors(snap, a, workloadInfo(rackHead('z', 'a')), { placement: {}, counts: new Map([['main', 1]]) });
    assert.equal(calls.n, 3);
  });

  it('places again once the topology snapshot changed (a bound pod, a Workload admitted)', () => {
    const { snap, tas, calls } = placedEnv();
    const a = snap.clusterQueues.get('a')!;
    const info = workloadInfo(rackHead('x', 'a'));
    const before = assignFlavors(snap, a, info, { placement: {} });
    // The hosts it chose are taken by bound pods: it is placed again, elsewhere.
    const used = new Set(before.podSets[0]!.assignment!.domains.map((d) => d.values.at(-1)!));
    for (const h of used) tas.snapshot.addPod(`ns/bound-${h}`, h, { cpu: 4000 });
    const after = assignFlavors(snap, a, info, { placement: {} });
    assert.equal(calls.n, 2);
    assert.equal(after.mode, 'Fit');
    for (const h of after.podSets[0]!.assignment!.domains.map((d) => d.values.at(-1)!)) assert.ok(!used.has(h), `${h} is full`);
    // Admitting it changes the snapshot too: the same question is placed again.
    snap.addAdmitted({ ...toAdmittedOf(after, info, 'a'), key: 'default/x' });
    assignFlavors(snap, a, info, { placement: {} });
    assert.equal(calls.n, 3);
  });

  it('in a cycle: heads of one shape are placed once when nominated, and again at admission only after the snapshot changed', () => {
    const { snap, queues, submit, calls } = placedEnv();
    submit(rackHead('x', 'a'), rackHead('y', 'b'));
    const r = schedule(snap, queues, { now: T0 + 1000, placement: {} });
    assert.equal(r.admitted, 2);
    // One placement for both nominations; the first admitted keeps its own; the second is
    // placed again on the snapshot the first changed.
    assert.equal(calls.n, 2);
    const x = hosts(assignedOf(snap, 'default/x'));
    const y = hosts(assignedOf(snap, 'default/y'));
    assert.notDeepEqual(x, y, 'the second does not reuse the placement made before the first took its hosts');
    assert.deepEqual(snap.quota.violations(), []);
  });
});

function toAdmittedOf(a: FlavorAssignment, info: ReturnType<typeof workloadInfo>, clusterQueue: string) {
  return { key: info.key, workload: info.workload, clusterQueue, priority: 0, reservedAt: 0, podSets: a.podSets, usage: a.usage };
}

function assignedOf(snap: AdmissionEnv['snap'], key: string): FlavorAssignment {
  const adm = snap.admitted.get(key);
  assert.ok(adm, `${key} is admitted`);
  return { mode: 'Fit', podSets: adm.podSets } as FlavorAssignment;
}

describe('assignFlavors: flavor mismatches of plain PodSets, remembered per flavor', () => {
  it('answers PodSets without selectors or tolerations once per flavor, and reads the others', () => {
    const tainted = flavor('tainted');
    tainted.spec.nodeTaints = [{ key: 'gpu', value: 'true', effect: 'NoSchedule' }];
    const { snap } = admissionEnv({
      clusterQueues: [cq('a').quota('tainted', { cpu: '8' }).quota('plain', { cpu: '8' }).build()],
      flavors: [tainted, flavor('plain')],
    });
    const a = snap.clusterQueues.get('a')!;
    const flavorOf = (w: ReturnType<WorkloadBuilder['build']>) =>
      assignFlavors(snap, a, workloadInfo(w), { placement: {} }).podSets[0]!.flavors.cpu;
    assert.equal(flavorOf(wl('p1').queue('a').pods(1, { cpu: '1' }).build()), 'plain', 'the taint is not tolerated');
    const tolerating = wl('t').queue('a').pods(1, { cpu: '1' }).build();
    tolerating.spec.podSets[0]!.template.spec.tolerations = [{ key: 'gpu', operator: 'Exists', effect: 'NoSchedule' }];
    assert.equal(flavorOf(tolerating), 'tainted', 'a PodSet with tolerations is not given the plain answer');
    assert.equal(flavorOf(wl('p2').queue('a').pods(1, { cpu: '1' }).build()), 'plain');
  });
});

describe('assignFlavors: a lone PodSet uses its request', () => {
  it("a lone PodSet's usage is its request at its count (with pods when covered), the same answer at every assignment", () => {
    const { snap } = admissionEnv({
      clusterQueues: [cq('a').quota('default', { cpu: '8', memory: '8Gi', pods: '10' }).build()],
      flavors: [flavor('default')],
    });
    const a = snap.clusterQueues.get('a')!;
    const info = workloadInfo(wl('w').queue('a').pods(3, { cpu: '500m', memory: '1Gi' }).build());
    const first = assignFlavors(snap, a, info, { placement: {} });
    assert.equal(first.mode, 'Fit');
    assert.deepEqual(first.podSets[0]!.usage, { cpu: 1500, memory: 3 * 1024 ** 3, pods: 3 });
    assert.deepEqual(
      [...first.usage],
      [
        ['default/cpu', 1500],
        ['default/memory', 3 * 1024 ** 3],
        ['default/pods', 3],
      ],
    );
    // At another count (partial admission) the usage follows the count, and the first answer is unchanged.
    const two = assignFlavors(snap, a, info, { placement: {}, counts: new Map([['main', 2]]) });
    assert.deepEqual(two.podSets[0]!.usage, { cpu: 1000, memory: 2 * 1024 ** 3, pods: 2 });
    assert.deepEqual(first.podSets[0]!.usage, { cpu: 1500, memory: 3 * 1024 ** 3, pods: 3 });
    assert.deepEqual(assignFlavors(snap, a, info, { placement: {} }).podSets[0]!.usage, first.podSets[0]!.usage);
  });
});
