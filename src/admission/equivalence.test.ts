import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Workload } from '../api/objects.ts';
import { node } from '../testing/builders.ts';
import { admissionEnv, cq, flavor, RACK, T0, TAS_LEVELS, tasFlavor, wl } from '../testing/admission.ts';
import type { Entry } from './entry.ts';
import { nominate, type NominationContext } from './nominate.ts';
import { nodeInfoFromNode } from '../topology/source.ts';
import type { AdmissionSnapshot } from './snapshot.ts';
import { workloadInfo } from './workload-info.ts';

/** Nominates `w` (a head of ClusterQueue `q`) and says how often flavor assignment read the quota. */
function nominateCounting(snap: AdmissionSnapshot, w: Workload, q = 'q', placement = {}): { entry: Entry; quotaReads: number } {
  const env = { queues: admissionEnv({ clusterQueues: [] }).queues };
  const ctx: NominationContext = {
    snap,
    queues: env.queues,
    cfg: { now: T0 + 10, placement },
    decided: new Map(),
    findGang: () => undefined,
    lqStopped: false,
  };
  let quotaReads = 0;
  const available = snap.quota.availableAt.bind(snap.quota);
  snap.quota.availableAt = (c, f) => {
    quotaReads++;
    return available(c, f);
  };
  try {
    return { entry: nominate(ctx, workloadInfo(w), q), quotaReads };
  } finally {
    snap.quota.availableAt = available;
  }
}

/** ClusterQueue `q` with 4 cpu of `default`, its own lower priorities preemptible, holding `big` (4 cpu, priority 10). */
function full() {
  const env = admissionEnv({
    clusterQueues: [
      cq('q').quota('default', { cpu: '4' }).preemption({ withinClusterQueue: 'LowerPriority' }).build(),
      cq('other').quota('default', { cpu: '4' }).preemption({ withinClusterQueue: 'LowerPriority' }).build(),
    ],
  });
  env.submit(wl('big').queue('q').pods(1, { cpu: '4' }).priority(10).build());
  env.settle();
  assert.ok(env.snap.admitted.has('default/big'));
  return env;
}

const head = (name: string, cpu = '2', priority = 0) => wl(name).queue('q').pods(1, { cpu }).priority(priority).build();

describe('scheduling equivalence', () => {
  it('a lone head that failed on a state: an equal head (ClusterQueue, shape, priority) gets the same failure without being assigned again', () => {
    const { snap } = full();
    const a = nominateCounting(snap, head('a'));
    assert.equal(a.entry.status, 'fail');
    assert.match(a.entry.message, /insufficient unused quota for cpu in flavor default, 2 more needed/);
    assert.ok(a.quotaReads > 0);
    const b = nominateCounting(snap, head('b'));
    assert.equal(b.entry.status, 'fail');
    assert.equal(b.entry.reason, a.entry.reason);
    assert.equal(b.entry.message, a.entry.message);
    assert.equal(b.quotaReads, 0, 'answered from memory');
  });

  it('a reservation taken or freed since: the head is assigned again, and the answer follows the new state', () => {
    const { snap } = full();
    nominateCounting(snap, head('a'));
    const big = snap.removeAdmitted('default/big')!;
    const freed = nominateCounting(snap, head('b'));
    assert.ok(freed.quotaReads > 0);
    assert.equal(freed.entry.status, 'fit');
    snap.addAdmitted(big);
    const again = nominateCounting(snap, head('c'));
    assert.ok(again.quotaReads > 0, 'the failure before the change was forgotten');
    assert.equal(again.entry.status, 'fail');
  });

  it('another ClusterQueue, shape or priority is another question', () => {
    const { snap } = full();
    nominateCounting(snap, head('a'));
    assert.ok(nominateCounting(snap, head('b', '3')).quotaReads > 0, 'shape');
    assert.ok(nominateCounting(snap, head('c', '2', 5)).quotaReads > 0, 'priority');
    const elsewhere = wl('d').queue('other').pods(1, { cpu: '2' }).build();
    assert.ok(nominateCounting(snap, elsewhere, 'other').quotaReads > 0, 'ClusterQueue');
    assert.ok(nominateCounting(snap, head('e'), 'q', { profile: 'BestFit' }).quotaReads > 0, 'placement options');
  });

  it('a failure whose preemption search had candidates, a gang and partial admission are never answered from memory', () => {
    const { snap } = full();
    // `mid` (priority 5) and `top` (priority 30) hold the 4 cpu: a priority-20 head of 4 cpu
    // may take only `mid`, which is not enough: candidates, and no solution.
    const env2 = admissionEnv({
      clusterQueues: [cq('q').quota('default', { cpu: '4' }).preemption({ withinClusterQueue: 'LowerPriority' }).build()],
    });
    env2.submit(
      wl('mid').queue('q').pods(1, { cpu: '2' }).priority(5).build(),
      wl('top').queue('q').pods(1, { cpu: '2' }).priority(30).build(),
    );
    env2.settle();
    assert.equal(env2.snap.admitted.size, 2);
    const tooBig = (n: string) => wl(n).queue('q').pods(1, { cpu: '4' }).priority(20).build();
    assert.equal(nominateCounting(env2.snap, tooBig('a')).entry.status, 'fail');
    assert.ok(nominateCounting(env2.snap, tooBig('b')).quotaReads > 0, 'candidates');
    const gang = (n: string) => wl(n).queue('q').pods(1, { cpu: '2' }).gang(1).build();
    nominateCounting(snap, gang('g1'));
    assert.ok(nominateCounting(snap, gang('g2')).quotaReads > 0, 'gang');
    const partial = (n: string) => wl(n).queue('q').pods(2, { cpu: '2' }, { minCount: 1 }).build();
    nominateCounting(snap, partial('p1'));
    assert.ok(nominateCounting(snap, partial('p2')).quotaReads > 0, 'minCount');
  });

  it('a change on the topology (a node added) forgets the failures of TAS heads', () => {
    const nodes = [1, 2].map((i) =>
      node(`n${i}`)
        .labels({ 'cloud.com/block': 'b', [RACK]: 'r1' })
        .cpu(2)
        .build(),
    );
    const tf = tasFlavor(flavor('tas', { topology: 'topo' }), TAS_LEVELS, nodes);
    const env = admissionEnv({ clusterQueues: [cq('q').quota('tas', { cpu: '100' }).build()], flavors: [tf.flavor], tas: [tf] });
    const rack = (n: string) =>
      wl(n)
        .queue('q')
        .pods(3, { cpu: '2' }, { topology: { required: RACK } })
        .build();
    const a = nominateCounting(env.snap, rack('a'));
    assert.equal(a.entry.status, 'fail');
    assert.equal(nominateCounting(env.snap, rack('b')).quotaReads, 0);
    env.snap.tasList[0]!.snapshot.upsertNode(
      nodeInfoFromNode(
        node('n3')
          .labels({ 'cloud.com/block': 'b', [RACK]: 'r1' })
          .cpu(2)
          .build(),
      ),
    );
    const c = nominateCounting(env.snap, rack('c'));
    assert.ok(c.quotaReads > 0);
    assert.equal(c.entry.status, 'fit');
  });

  it("a head's shape key is made only when a failure is looked up or kept: a head that fits while nothing failed never builds it", () => {
    const { snap } = full();
    const other = (n: string) => wl(n).queue('other').pods(1, { cpu: '1' }).build();
    const fits = workloadInfo(other('fits'));
    const ctx: NominationContext = {
      snap,
      queues: admissionEnv({ clusterQueues: [] }).queues,
      cfg: { now: T0 + 10, placement: {} },
      decided: new Map(),
      findGang: () => undefined,
      lqStopped: false,
    };
    assert.equal(nominate(ctx, fits, 'other').status, 'fit');
    assert.equal(fits.placementInputs, undefined);
    // Once a failure is kept, an equal head looks it up by its key.
    assert.equal(nominateCounting(snap, head('a')).entry.status, 'fail');
    const looked = workloadInfo(head('b'));
    assert.equal(nominate(ctx, looked, 'q').status, 'fail');
    assert.equal(typeof looked.placementInputs, 'string');
  });
});
