import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { GangAnnotation, GangWorkloadKey } from '../api/gang.ts';
import { admissionEnv, admittedKeys, cq, decisionStatus as statusOf, localQueue, rackCluster, wl } from '../testing/admission.ts';

// Gang groups in the cycle (gang-group.ts): closure, basic check, waiting time, timeout.
describe('gang groups', () => {
  it('a gang short of members waits with the peer basic-check message', () => {
    const env2 = admissionEnv({
      clusterQueues: [cq('q').quota('default', { cpu: '100' }).build()],
      localQueues: [localQueue('q', 'q', 'ns')],
    });
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
      env.submit(
        wl('a', 'ns-a').queue('qa').pods(2, { cpu: '2' }).gang(2, { groups: group }).build(),
        wl('b', 'ns-b').queue('qb').pods(2, { cpu: bCpu }).gang(2, { groups: group }).build(),
      );
      return env.settle();
    };
    const ok = mk('2');
    assert.deepEqual(admittedKeys(ok), ['ns-a/a', 'ns-b/b']);
    const no = mk('6');
    assert.deepEqual(admittedKeys(no), []);
    assert.match(statusOf(no, 'ns-a/a').message!, /ns-b\/b/);
  });

  it("a gang group's pending message names a gang of Pods by its pods and pod set, not by a role hash alone", () => {
    const group = ['ns-a/a', 'ns-b/b'];
    const env = admissionEnv({
      clusterQueues: [cq('qa').quota('default', { cpu: '10' }).build(), cq('qb').quota('default', { cpu: '10' }).build()],
      localQueues: [localQueue('qa', 'qa', 'ns-a'), localQueue('qb', 'qb', 'ns-b')],
    });
    const owned = (w: ReturnType<ReturnType<typeof wl>['build']>, pods: string[]) => {
      w.metadata.ownerReferences = pods.map((name) => ({ apiVersion: 'v1', kind: 'Pod', name, uid: name }));
      return w;
    };
    env.submit(
      owned(wl('a', 'ns-a').queue('qa').pods(2, { cpu: '2' }, { name: '1a2b3c4d' }).gang(2, { groups: group }).build(), ['a-0', 'a-1']),
      owned(wl('b', 'ns-b').queue('qb').pods(6, { cpu: '6' }, { name: '5e6f7a8b' }).gang(6, { groups: group }).build(), [
        'b-0',
        'b-1',
        'b-2',
        'b-3',
        'b-4',
        'b-5',
      ]),
    );
    const r = env.settle();
    for (const k of group)
      assert.match(
        statusOf(r, k).message!,
        /^gang group \[ns-a\/a ns-b\/b\] is admitted whole or not at all; member ns-b\/b \(pods b-0, b-1, b-2, b-3, \.\.\. \(6 in all\) in pod set 5e6f7a8b\): couldn't assign flavors to pod set 5e6f7a8b: /,
      );
  });

  it("a lone gang of Pods that does not fit names its pods beside its pod set's role hash", () => {
    const env = admissionEnv({ clusterQueues: [cq('q').quota('default', { cpu: '1' }).build()] });
    const w = wl('g').queue('q').pods(2, { cpu: '1' }, { name: '1a2b3c4d' }).gang(2).build();
    w.metadata.ownerReferences = ['g-0', 'g-1'].map((name) => ({ apiVersion: 'v1', kind: 'Pod', name, uid: name }));
    env.submit(w);
    assert.match(
      statusOf(env.settle(), 'default/g').message!,
      /^gang default\/g \(pods g-0, g-1 in pod set 1a2b3c4d\): couldn't assign flavors to pod set 1a2b3c4d: insufficient quota for cpu/,
    );
  });

  it("in a gang group, each member's pending message names that member as the current gang", () => {
    const group = ['default/a', 'default/b'];
    const env = admissionEnv({ clusterQueues: [cq('q').quota('default', { cpu: '10' }).build()] });
    env.submit(
      wl('a').queue('q').pods(2, { cpu: '1' }).gang(2, { groups: group }).build(),
      wl('b').queue('q').pods(1, { cpu: '1' }).gang(2, { groups: group }).build(),
    );
    const r = env.settle();
    const prefix =
      'gangGroup [default/a default/b] basic check: memberGangs [default/a default/b] child pod not collect enough, current gang: ';
    assert.equal(statusOf(r, 'default/a').message, `${prefix}default/a`);
    assert.equal(statusOf(r, 'default/b').message, `${prefix}default/b`);
  });

  it('min-available 0 is a gang without a minimum (as the peer reads it): the pods that fit are admitted, none is dropped by a total of 0', () => {
    const env = admissionEnv({ clusterQueues: [cq('q').quota('default', { cpu: '3' }).build()] });
    env.submit(wl('g').queue('q').pods(4, { cpu: '1' }).gang(0, { total: 0 }).build());
    env.settle();
    assert.deepEqual(
      env.snap.admitted.get('default/g')?.podSets.map((p) => p.count),
      [3],
    );
  });

  it('a gang whose PodGroup minResources exceed what its ClusterQueue can ever give is not admitted, with the resource gap', () => {
    const mk = (min: string) => {
      const env = admissionEnv({ clusterQueues: [cq('q').quota('default', { cpu: '10' }).build()] });
      env.submit(
        wl('g')
          .queue('q')
          .pods(2, { cpu: '1' })
          .gang(2)
          .annotate({ [GangWorkloadKey.MinResources]: JSON.stringify({ cpu: min, memory: '1Gi' }) })
          .build(),
      );
      return env.settle();
    };
    const no = mk('12500m');
    assert.deepEqual(admittedKeys(no), []);
    const s = statusOf(no, 'default/g');
    assert.equal(s.reason, 'ExceedsMaxQuota');
    assert.equal(
      s.message,
      "gang default/g: its PodGroup's spec.minResources exceeds what ClusterQueue q can ever give (its quota with everything it may borrow); resource gap: cpu=2500m",
    );
    assert.deepEqual(admittedKeys(mk('10')), ['default/g'], "within the quota (memory is not the ClusterQueue's: left to placement)");
  });

  it("a group naming a gang that does not exist waits: memberGangs doesn't exists", () => {
    const env = admissionEnv({ clusterQueues: [cq('q').quota('default', { cpu: '10' }).build()] });
    env.submit(
      wl('a')
        .queue('q')
        .pods(1, { cpu: '1' })
        .gang(1, { groups: ['default/a', 'default/typo'] })
        .build(),
    );
    assert.equal(
      statusOf(env.settle(), 'default/a').message,
      "gangGroup [default/a default/typo] basic check: memberGangs [default/typo] doesn't exists, current gang: default/a",
    );
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
    env.submit(
      wl('g')
        .queue('q')
        .pods(1, { cpu: '1' })
        .gang(1)
        .annotate({ [GangAnnotation.Timeout]: 'true' })
        .build(),
    );
    const s = statusOf(env.settle(), 'default/g');
    assert.equal(s.reason, 'GangTimeout');
  });
});
