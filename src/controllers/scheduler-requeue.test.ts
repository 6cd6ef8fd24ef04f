// Kueue's requeue of parked (inadmissible) Workloads, as the scheduler controller runs it
// (kueue-core.md §1b "Requeue and the inadmissible list", "Moving back": "Requests are
// batched per CQ or per **root cohort** with a 1 s delay"; §2 "inadmissible requeue
// batching | 1 s per CQ / root cohort"; §4.5 "parks it in inadmissible until a capacity
// event (batched 1 s, cohort-wide)"). Kueue's requeuer adds a delayed work-queue key per
// scope; a key already waiting keeps its earlier time, so the first event of a window
// decides when it fires. Scheduling equivalence hashing (§1b, "FG
// SchedulingEquivalenceHashing, beta on, BestEffortFIFO only": "newcomers with that hash skip
// the heap until the next requeue-all") keeps newcomers of a shape that found no fit out of
// the heap until that requeue.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KObject } from '../api/objects.ts';
import { cohort, cq, flavor, localQueue, wl } from '../testing/admission.ts';
import { runtimeEnv, type RuntimeEnv } from '../testing/runtime.ts';
import { clearAfterEviction, finish } from '../testing/scheduler.ts';
import { schedulerController } from './scheduler.ts';

const admitted = (env: RuntimeEnv, name: string): boolean => env.get('Workload', 'default', name)?.status?.admission !== undefined;

/**
 * Two ClusterQueues of 6 CPU each; `cohorts` puts them in one cohort, in two, or in two
 * child cohorts of one root.
 */
function twoQueues(cohorts: 'one' | 'two' | 'tree'): KObject[] {
  const c1 = 'c1';
  const c2 = cohorts === 'one' ? 'c1' : 'c2';
  return [
    flavor('default'),
    ...(cohorts === 'tree' ? [cohort('root'), cohort('c1', 'root'), cohort('c2', 'root')] : [cohort('c1')]),
    ...(cohorts === 'two' ? [cohort('c2')] : []),
    cq('a')
      .cohort(c1)
      .quota('default', { cpu: ['6', '0'] })
      .build(),
    cq('b')
      .cohort(c2)
      .quota('default', { cpu: ['6', '0'] })
      .build(),
    localQueue('a', 'a'),
    localQueue('b', 'b'),
  ];
}

/** In each queue one 6-CPU Workload admitted and one parked behind it. */
async function fullAndParked(env: RuntimeEnv): Promise<void> {
  await env.start();
  env.seed(wl('a-run').queue('a').pods(1, { cpu: '6' }).build(), wl('b-run').queue('b').pods(1, { cpu: '6' }).build());
  await env.run();
  env.seed(wl('a-wait').queue('a').pods(1, { cpu: '6' }).build(), wl('b-wait').queue('b').pods(1, { cpu: '6' }).build());
  await env.run();
  assert.equal(admitted(env, 'a-wait'), false);
  assert.equal(admitted(env, 'b-wait'), false);
}

describe('scheduler controller: requeue of parked Workloads (Kueue: 1 s batch per root cohort)', () => {
  it('requeue batch is per root cohort: a capacity event in one cohort does not requeue another cohort early', async () => {
    const env = runtimeEnv({ controllers: [schedulerController()], objects: twoQueues('two') });
    await fullAndParked(env);
    finish(env, 'a-run');
    await env.run(500);
    finish(env, 'b-run');
    await env.run(499);
    assert.deepEqual([admitted(env, 'a-wait'), admitted(env, 'b-wait')], [false, false], 't0 + 999 ms');
    await env.run(1);
    // c1's batch started at t0, c2's at t0 + 500 ms: each fires 1 s after its own first event.
    assert.deepEqual([admitted(env, 'a-wait'), admitted(env, 'b-wait')], [true, false], 't0 + 1 s: c1 only');
    await env.run(499);
    assert.equal(admitted(env, 'b-wait'), false, 't0 + 1,499 ms');
    await env.run(1);
    assert.equal(admitted(env, 'b-wait'), true, 't0 + 1.5 s: c2, 1 s after its own first event');
  });

  for (const shape of ['one', 'tree'] as const) {
    it(`requeue batch is per root cohort: ClusterQueues of one ${shape === 'one' ? 'cohort' : 'cohort tree (two children of one root)'} share it`, async () => {
      const env = runtimeEnv({ controllers: [schedulerController()], objects: twoQueues(shape) });
      await fullAndParked(env);
      finish(env, 'a-run');
      await env.run(500);
      finish(env, 'b-run');
      await env.run(499);
      assert.deepEqual([admitted(env, 'a-wait'), admitted(env, 'b-wait')], [false, false], 't0 + 999 ms');
      await env.run(1);
      // One key for the cohort, armed at t0: b's finish falls inside that window.
      assert.deepEqual([admitted(env, 'a-wait'), admitted(env, 'b-wait')], [true, true], 't0 + 1 s: both');
    });
  }

  it('requeue batch is leading-edge: events inside the window do not push the requeue back', async () => {
    const objects: KObject[] = [flavor('default'), cq('a').quota('default', { cpu: '6' }).build(), localQueue('a', 'a')];
    const env = runtimeEnv({ controllers: [schedulerController()], objects });
    await env.start();
    env.seed(wl('r1').queue('a').pods(1, { cpu: '3' }).build(), wl('r2').queue('a').pods(1, { cpu: '3' }).build());
    await env.run();
    env.seed(wl('wait').queue('a').pods(1, { cpu: '6' }).build());
    await env.run();
    finish(env, 'r1');
    await env.run(900);
    finish(env, 'r2');
    await env.run(99);
    assert.equal(admitted(env, 'wait'), false, 't0 + 999 ms');
    await env.run(1);
    // A trailing (reset) timer would fire at t0 + 1,900 ms.
    assert.equal(admitted(env, 'wait'), true, 't0 + 1 s: 1 s after the first event of the window');
  });

  for (const hashing of [true, false]) {
    it(`equivalence hashing ${hashing ? 'on (Kueue default)' : 'off'}: a newcomer of a shape that found no fit ${hashing ? 'waits for the requeue batch' : 'takes freed capacity at once'}`, async () => {
      const objects: KObject[] = [flavor('default'), cq('a').quota('default', { cpu: '6' }).build(), localQueue('a', 'a')];
      const env = runtimeEnv({ controllers: [schedulerController()], objects, config: { schedulingEquivalenceHashing: hashing } });
      await env.start();
      env.seed(wl('run').queue('a').pods(1, { cpu: '6' }).build());
      await env.run();
      env.seed(wl('w1').queue('a').pods(1, { cpu: '3' }).build());
      await env.run();
      assert.equal(admitted(env, 'w1'), false, 'w1 found no fit: parked, its shape remembered');
      finish(env, 'run');
      env.seed(wl('w2').queue('a').pods(1, { cpu: '3' }).build());
      await env.run(0);
      assert.equal(admitted(env, 'w2'), !hashing, 'at the instant capacity was freed');
      await env.run(1_000);
      assert.deepEqual([admitted(env, 'w1'), admitted(env, 'w2')], [true, true], 'after the requeue batch');
    });
  }

  it("a preempted victim's release is batched like any capacity event; its preemptor goes at once", async () => {
    const objects: KObject[] = [
      flavor('default'),
      cq('a').quota('default', { cpu: '6' }).preemption({ withinClusterQueue: 'LowerPriority' }).build(),
      localQueue('a', 'a'),
    ];
    const env = runtimeEnv({ controllers: [schedulerController()], objects });
    await env.start();
    env.seed(
      wl('low').queue('a').pods(1, { cpu: '4' }).priority(1).build(),
      wl('low2').queue('a').pods(1, { cpu: '2' }).priority(1).build(),
    );
    await env.run();
    env.seed(wl('x').queue('a').pods(1, { cpu: '1' }).priority(1).build());
    await env.run();
    assert.equal(admitted(env, 'x'), false, 'x is parked: nothing to preempt at its priority');
    env.seed(wl('high').queue('a').pods(1, { cpu: '3' }).priority(10).build());
    await env.run();
    assert.equal(admitted(env, 'high'), false, 'high preempts low and waits for it');
    clearAfterEviction(env, 'low');
    await env.run(0);
    assert.deepEqual([admitted(env, 'high'), admitted(env, 'x')], [true, false], 'at the release: the preemptor, not the parked x');
    await env.run(999);
    assert.equal(admitted(env, 'x'), false);
    // At t + 1 s both parked Workloads go back: low (4 CPU, older) heads and is parked again,
    // x takes the CPU left over in the next cycle, 1 ms later.
    await env.run(10);
    assert.equal(admitted(env, 'x'), true, '1 s after the release: the CPU left over');
    assert.equal(admitted(env, 'low'), false);
  });

  it('newly created Workloads bypass the requeue batch: they go straight to the heap', async () => {
    const objects: KObject[] = [flavor('default'), cq('a').quota('default', { cpu: '6' }).build(), localQueue('a', 'a')];
    const env = runtimeEnv({ controllers: [schedulerController()], objects });
    await env.start();
    env.seed(wl('run').queue('a').pods(1, { cpu: '3' }).build());
    await env.run();
    env.seed(wl('fresh').queue('a').pods(1, { cpu: '3' }).build());
    await env.run(0);
    assert.equal(admitted(env, 'fresh'), true, 'at the instant it was created');
  });
});
