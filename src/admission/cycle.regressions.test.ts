// Regressions found in review of the admission cycle: each test states a rule the cycle
// must keep (fungibility never prefers a flavor that does not fit, borrowing levels with
// lending limits, gang minimum vs minCount, StrictFIFO with NonStrict gangs, groups
// decided in one cycle, waiting time after admission and for parked reservations, a
// NonStrict gang's own reservation during preemption).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { GangAnnotation } from '../api/gang.ts';
import { formatTime } from '../api/time.ts';
import type { Workload } from '../api/objects.ts';
import { T0, TAS_LEVELS, BLOCK, RACK, admissionEnv, cq, flavor, tasFlavor, wl } from '../testing/admission.ts';
import { node } from '../testing/builders.ts';
import { schedule } from './cycle.ts';
import type { SettleResult } from './settle.ts';
import { GANG_WAITING_SINCE_ANNOTATION } from './workload-info.ts';

function statusOf(r: SettleResult, key: string): { admitted: boolean; reserved: boolean; reason?: string; message?: string; w: Workload } {
  const w = r.workloads.get(key);
  assert.ok(w, `no decision for ${key}`);
  const qr = w.status?.conditions?.find((c) => c.type === 'QuotaReserved');
  const adm = w.status?.conditions?.find((c) => c.type === 'Admitted');
  return {
    admitted: adm?.status === 'True',
    reserved: qr?.status === 'True',
    reason: qr?.status === 'False' ? qr.reason : adm?.status === 'False' ? adm.reason : undefined,
    message: qr?.message,
    w,
  };
}
const admittedCount = (r: SettleResult, key: string) =>
  statusOf(r, key).w.status!.admission!.podSetAssignments.reduce((n, p) => n + (p.count ?? 0), 0);

describe('regression: flavor fungibility', () => {
  it('PreemptionOverBorrowing never prefers a NoFit flavor to a flavor that fits by borrowing', () => {
    // f1 fits by borrowing (level 1); f2 cannot hold the workload at all (NoFit, borrowing 0).
    const env = admissionEnv({
      clusterQueues: [
        cq('q')
          .cohort('c')
          .quota('f1', { cpu: '2' })
          .quota('f2', { cpu: '1' })
          .fungibility({ whenCanBorrow: 'TryNextFlavor', whenCanPreempt: 'TryNextFlavor', preference: 'PreemptionOverBorrowing' })
          .build(),
        cq('lender').cohort('c').quota('f1', { cpu: '10' }).build(),
      ],
    });
    env.submit(wl('a').queue('q').pods(1, { cpu: '3' }).build());
    const s = statusOf(env.settle(), 'default/a');
    assert.equal(s.admitted, true, `expected admitted on f1 by borrowing, got ${s.reason}: ${s.message}`);
    assert.equal(s.w.status!.admission!.podSetAssignments[0]!.flavors!.cpu, 'f1');
  });

  it('borrowing level with a lending limit: a request that borrows only from the cohort is level 1, not beyond the root', () => {
    // q/f1: nominal 10, lendingLimit 0 (all 10 private) -> 12 needs 2 from the cohort (level 1).
    // q/f2: nominal 2 -> 12 needs 10 from the cohort (level 1 too). Both borrow at the same
    // level, so with TryNextFlavor the first flavor in order (f1) must be kept.
    const env = admissionEnv({
      clusterQueues: [
        cq('q')
          .cohort('c')
          .quota('f1', { cpu: ['10', undefined, '0'] })
          .quota('f2', { cpu: '2' })
          .fungibility({ whenCanBorrow: 'TryNextFlavor' })
          .build(),
        cq('lender').cohort('c').quota('f1', { cpu: '5' }).quota('f2', { cpu: '20' }).build(),
      ],
    });
    env.submit(wl('a').queue('q').pods(1, { cpu: '12' }).build());
    const s = statusOf(env.settle(), 'default/a');
    assert.equal(s.w.status!.admission!.podSetAssignments[0]!.flavors!.cpu, 'f1');
  });

  it('QuotaTree.borrowingLevel subtracts the private (guaranteed) part before climbing to the cohort', () => {
    const env = admissionEnv({
      clusterQueues: [
        cq('q')
          .cohort('c')
          .quota('f1', { cpu: ['10', undefined, '0'] })
          .build(),
        cq('lender').cohort('c').quota('f1', { cpu: '5' }).build(),
      ],
    });
    assert.equal(env.snap.quota.available('q', 'f1/cpu'), 15_000);
    // Flat cohort: anything that fits and borrows is level 1; 2 is above the root.
    assert.equal(env.snap.quota.borrowingLevel('q', 'f1/cpu', 12_000), 1);
  });
});

describe('regression: gang minimum and partial admission', () => {
  it('a gang whose min equals its pod count is never admitted below min through a PodSet minCount', () => {
    const env = admissionEnv({ clusterQueues: [cq('q').quota('default', { cpu: '10' }).build()] });
    env.submit(wl('g').queue('q').pods(4, { cpu: '3' }, { minCount: 1 }).gang(4).build());
    const r = env.settle();
    const s = statusOf(r, 'default/g');
    assert.ok(
      !s.admitted || admittedCount(r, 'default/g') >= 4,
      `gang of min 4 admitted with ${s.admitted ? admittedCount(r, 'default/g') : 0} pods`,
    );
  });

  it('a gang shrink never goes below a PodSet minCount', () => {
    const env = admissionEnv({ clusterQueues: [cq('q').quota('default', { cpu: '4' }).build()] });
    // min-available 2 over all pods, but the PodSet itself accepts no fewer than 3.
    env.submit(wl('g').queue('q').pods(4, { cpu: '2' }, { minCount: 3 }).gang(2).build());
    const r = env.settle();
    const s = statusOf(r, 'default/g');
    assert.ok(!s.admitted || admittedCount(r, 'default/g') >= 3, 'admitted below minCount 3');
  });

  it('a gang with min-available 0 is not admitted with zero pods', () => {
    const env = admissionEnv({ clusterQueues: [cq('q').quota('default', { cpu: '10' }).build()] });
    env.submit(wl('g').queue('q').pods(2, { cpu: '20' }).gang(0).build());
    const r = env.settle();
    const s = statusOf(r, 'default/g');
    assert.ok(!s.admitted || admittedCount(r, 'default/g') > 0, 'admitted with 0 pods');
  });
});

describe('regression: StrictFIFO', () => {
  it('a NonStrict gang accumulating at the head of a StrictFIFO queue still blocks newer workloads', () => {
    const env = admissionEnv({ clusterQueues: [cq('q').quota('default', { cpu: '10' }).strict().build()] });
    env.submit(
      wl('running').queue('q').pods(1, { cpu: '5' }).created(0).build(),
      wl('g').queue('q').pods(5, { cpu: '2' }).gang(5, { mode: 'NonStrict' }).created(1).build(),
      wl('late').queue('q').pods(1, { cpu: '1' }).created(2).build(),
    );
    const r = env.settle();
    assert.equal(statusOf(r, 'default/g').admitted, false);
    assert.equal(
      r.workloads.has('default/late') && statusOf(r, 'default/late').admitted,
      false,
      'StrictFIFO let a newer workload past a head that is not admitted',
    );
  });
});

describe('regression: gang groups', () => {
  it('a gang naming another gang admitted in the same cycle (other ClusterQueue) is admitted too', () => {
    // a goes alone (its list is itself); b lists [a, b]. Both are heads of their queues.
    const env = admissionEnv({
      clusterQueues: [cq('qa').quota('default', { cpu: '10' }).build(), cq('qb').quota('default', { cpu: '10' }).build()],
    });
    env.submit(
      wl('a').queue('qa').pods(2, { cpu: '1' }).gang(2).build(),
      wl('b')
        .queue('qb')
        .pods(2, { cpu: '1' })
        .gang(2, { groups: ['default/a', 'default/b'] })
        .build(),
    );
    const r = env.settle();
    assert.equal(statusOf(r, 'default/a').admitted, true);
    const b = statusOf(r, 'default/b');
    assert.equal(b.admitted, true, `b: ${b.reason}: ${b.message}`.replace(/\n/g, ' '));
  });
});

describe('regression: gang waiting time', () => {
  it('a gang admitted and later preempted is not timed out on its old waiting-since', () => {
    const env = admissionEnv({
      clusterQueues: [cq('q').quota('default', { cpu: '4' }).preemption({ withinClusterQueue: 'LowerPriority' }).build()],
    });
    // The gang had waited 10s (annotation written by the scheduler) and is admitted now.
    const g = wl('g')
      .queue('q')
      .pods(2, { cpu: '2' })
      .gang(2, { waitingTime: '30s' })
      .annotate({ [GANG_WAITING_SINCE_ANNOTATION]: formatTime(T0 + 990) })
      .build();
    env.submit(g);
    const r1 = env.settle({ now: T0 + 1000 });
    assert.equal(statusOf(r1, 'default/g').admitted, true);
    // An hour later a higher-priority workload preempts it.
    env.submit(wl('p').queue('q').pods(1, { cpu: '4' }).priority(100).created(4000).build());
    const r2 = env.settle({ now: T0 + 4600 });
    assert.equal(statusOf(r2, 'default/p').admitted, true);
    const s = statusOf(r2, 'default/g');
    assert.notEqual(s.reason, 'GangTimeout', `preempted gang timed out: ${s.message}`);
    assert.notEqual(s.w.metadata.annotations?.[GangAnnotation.Timeout], 'true');
  });

  it('a NonStrict gang holding a partial reservation is released when its waiting time runs out', () => {
    const env = admissionEnv({ clusterQueues: [cq('q').quota('default', { cpu: '10' }).build()] });
    env.submit(
      wl('running').queue('q').pods(1, { cpu: '6' }).priority(10).build(),
      wl('g').queue('q').pods(5, { cpu: '2' }).gang(5, { mode: 'NonStrict', waitingTime: '30s' }).build(),
    );
    const r1 = env.settle({ now: T0 + 1000 });
    assert.equal(statusOf(r1, 'default/g').reason, 'GangAccumulating');
    assert.ok(env.snap.admitted.has('default/g'));
    // 10 minutes later (30s waiting time long gone), a cycle runs.
    env.settle({ now: T0 + 1600 });
    assert.equal(env.snap.admitted.has('default/g'), false, 'the NonStrict reservation is still held after its waiting time');
  });
});

describe('regression: NonStrict reservation and preemption', () => {
  /** Lowers the priority of an admitted Workload in the snapshot (its priority class changed). */
  function lowerPriority(env: ReturnType<typeof admissionEnv>, key: string, p: number) {
    const a = env.snap.removeAdmitted(key)!;
    env.snap.addAdmitted({ ...a, priority: p, workload: { ...a.workload, spec: { ...a.workload.spec, priority: p } } });
  }

  it('a NonStrict gang holding a partial reservation can preempt to reach its minimum (its own reservation is not counted twice)', () => {
    const env = admissionEnv({
      clusterQueues: [cq('q').quota('default', { cpu: '10' }).preemption({ withinClusterQueue: 'LowerPriority' }).build()],
    });
    env.submit(
      wl('r').queue('q').pods(1, { cpu: '6' }).priority(10).build(),
      wl('g').queue('q').pods(5, { cpu: '2' }).priority(5).gang(5, { mode: 'NonStrict' }).build(),
    );
    const r1 = env.settle();
    assert.equal(statusOf(r1, 'default/g').reason, 'GangAccumulating');
    assert.equal(admittedCount(r1, 'default/g'), 2);
    // r's priority drops below g's: g may now preempt it, and r's 6 cpu + g's 4 held = 10 = g's full need.
    lowerPriority(env, 'default/r', 0);
    env.queues.requeueInadmissible(T0 + 1000);
    const r2 = env.settle();
    const d = r2.last.get('default/g')!;
    assert.equal(d.kind === 'admit' && !d.reservedOnly, true, `g: ${d.kind} ${'message' in d ? d.message : ''}`);
    assert.equal(env.snap.admitted.has('default/r'), false, 'r was not preempted');
  });
});

describe('regression: TAS usage restored after a preemptor hold', () => {
  it('the stand-in hold of a NonStrict preemptor does not erase the TAS usage of its own partial reservation', () => {
    const nodes = [];
    for (let h = 0; h < 10; h++)
      nodes.push(
        node(`n${h}`)
          .labels({ [BLOCK]: 'b0', [RACK]: 'r0' })
          .cpu('4')
          .build(),
      );
    const f = flavor('tas', { topology: 'default' });
    const tas = tasFlavor(f, TAS_LEVELS, nodes);
    const env = admissionEnv({
      clusterQueues: [cq('q').quota('tas', { cpu: '100' }).preemption({ withinClusterQueue: 'LowerPriority' }).build()],
      flavors: [f],
      tas: [tas],
    });
    env.submit(
      wl('h').queue('q').pods(4, { cpu: '4' }).priority(10).created(0).build(),
      wl('x').queue('q').pods(2, { cpu: '4' }).priority(10).created(1).build(),
      wl('y').queue('q').pods(2, { cpu: '4' }).priority(10).created(2).build(),
      wl('g').queue('q').pods(6, { cpu: '4' }).priority(5).gang(6, { mode: 'NonStrict' }).created(3).build(),
    );
    const r1 = env.settle();
    assert.equal(admittedCount(r1, 'default/g'), 2, 'g holds 2 of its 6 pods');
    // x finishes; h's priority drops below g's.
    env.snap.removeAdmitted('default/x');
    const h = env.snap.removeAdmitted('default/h')!;
    env.snap.addAdmitted({ ...h, priority: 0 });
    env.queues.requeueInadmissible(T0 + 1000);
    const cpu = tas.snapshot.resourceIndex('cpu');
    const used = () => tas.snapshot.leaves().reduce((n, l) => n + (4000 - tas.snapshot.free(l, cpu)), 0);
    const before = used();
    assert.equal(before, (4 + 2 + 2) * 4000, 'h, y and g hold 8 nodes');
    const r = schedule(env.snap, env.queues, { now: T0 + 1000 });
    assert.ok(
      r.decisions.some((d) => d.kind === 'preempt' && d.key === 'default/h'),
      'g preempts h',
    );
    assert.ok(env.snap.admitted.has('default/g'), 'g still holds its reservation');
    assert.equal(used(), before, 'TAS usage after the cycle differs from before although nothing was admitted or evicted');
  });
});
