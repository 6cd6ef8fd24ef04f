import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { KueueAnnotation, KueueLabel, KueueRuntimeKey, KueueSchedulingGate } from '../api/keys.ts';
import type { ResourceFlavor, Workload } from '../api/objects.ts';
import { PodGroupAnnotation } from '../integrations/pod.ts';
import { workloadNameForOwner } from '../integrations/workload-name.ts';
import { conditionOf, hasGate, plainPod, podHarness, type PodHarness } from '../testing/pods.ts';
import { POD_GROUP_ROLE_LABEL } from './pods-group-sets.ts';
import { TERMINATION_TARGET } from './pods-start.ts';

const NS = 'pod-namespace';

const flavor = (
  name: string,
  nodeLabels: Record<string, string>,
  tolerations: ResourceFlavor['spec']['tolerations'] = [],
): ResourceFlavor => ({
  apiVersion: 'kueue.x-k8s.io/v1beta2',
  kind: 'ResourceFlavor',
  metadata: { name },
  spec: { nodeLabels, tolerations },
});

async function harness(config: Parameters<typeof podHarness>[0] = {}): Promise<PodHarness> {
  const h = await podHarness(config);
  await h.create(flavor('default', { 'cloud.com/pool': 'a' }, [{ key: 'spot', operator: 'Exists', effect: 'NoSchedule' }]));
  return h;
}

function singleWorkloadName(h: PodHarness, pod: string): string {
  const p = h.pod(pod)!;
  return workloadNameForOwner({ kind: 'Pod', group: '', name: pod, uid: p.metadata.uid! });
}

describe('plain pods: single pod (KEP-976 story 1)', () => {
  it('a queued pod is gated, gets its Workload, is ungated with the podset info once admitted, and is finalized when it finishes', async () => {
    const h = await harness();
    await h.create(plainPod('foo').queue('user-queue').cpu('1m').build());
    let p = h.pod('foo')!;
    assert.equal(p.metadata.labels![KueueLabel.Managed], 'true');
    assert.deepEqual(p.metadata.finalizers, [KueueRuntimeKey.ManagedFinalizer]);
    assert.deepEqual(p.spec.schedulingGates, [{ name: KueueSchedulingGate.Admission }, { name: KueueSchedulingGate.Topology }]);
    assert.match(p.metadata.annotations![PodGroupAnnotation.RoleHash]!, /^[0-9a-f]{8}$/);

    await h.run();
    const name = singleWorkloadName(h, 'foo');
    assert.match(name, /^pod-foo-[0-9a-f]{5}$/);
    let wl = h.workload(name)!;
    assert.equal(wl.spec.queueName, 'user-queue');
    assert.deepEqual(
      wl.spec.podSets.map((ps) => [ps.name, ps.count]),
      [['main', 1]],
    );
    assert.deepEqual(
      wl.metadata.ownerReferences!.map((r) => [r.kind, r.name, r.controller]),
      [['Pod', 'foo', true]],
    );
    assert.ok(hasGate(h.pod('foo'), KueueSchedulingGate.Admission), 'still gated before admission');

    await h.admit(NS, name, { clusterQueue: 'cluster-queue' });
    await h.run();
    p = h.pod('foo')!;
    assert.equal(p.spec.schedulingGates, undefined, 'both gates lifted: the admission has no topology assignment');
    assert.deepEqual(p.spec.nodeSelector, { 'cloud.com/pool': 'a' });
    assert.deepEqual(p.spec.tolerations, [{ key: 'spot', operator: 'Exists', effect: 'NoSchedule' }]);
    assert.equal(p.metadata.labels![KueueLabel.PodSet], 'main');
    assert.equal(p.metadata.labels![KueueRuntimeKey.LocalQueueNameLabel], 'user-queue');
    assert.equal(p.metadata.labels![KueueRuntimeKey.ClusterQueueNameLabel], 'cluster-queue');
    assert.equal(p.metadata.annotations![KueueAnnotation.Workload], name);
    assert.deepEqual(
      h.events('Started').map((e) => [e.object, e.message]),
      [[`Pod/${NS}/foo`, 'Admitted by clusterQueue cluster-queue']],
    );
    assert.equal(await h.metric('kueue_pods_ungated_total'), 1);
    assert.equal(await h.metric('kueue_pods_gated_total'), 1);

    await h.runPod('foo');
    await h.run();
    wl = h.workload(name)!;
    assert.equal(conditionOf(wl, 'PodsReady')?.status, 'True');
    await h.setPhase('foo', 'Succeeded');
    await h.run();
    wl = h.workload(name)!;
    assert.equal(conditionOf(wl, 'Finished')?.status, 'True');
    assert.equal(conditionOf(wl, 'Finished')?.reason, 'Succeeded');
    assert.deepEqual(h.pod('foo')!.metadata.finalizers, []);
    assert.deepEqual(h.manager.errors, []);
  });

  it('a failed single pod finishes its Workload with reason Failed and the pod status message', async () => {
    const h = await harness();
    await h.create(plainPod('foo').queue('q').build());
    await h.run();
    const name = singleWorkloadName(h, 'foo');
    await h.admit(NS, name);
    await h.run();
    await h.runPod('foo');
    await h.setPhase('foo', 'Failed', NS, 'OOMKilled');
    await h.run();
    const finished = conditionOf(h.workload(name), 'Finished')!;
    assert.deepEqual([finished.status, finished.reason, finished.message], ['True', 'Failed', 'OOMKilled']);
    assert.deepEqual(h.pod('foo')!.metadata.finalizers, []);
  });

  it('a pod deleted while gated loses its finalizer and its Workload goes with it', async () => {
    const h = await harness();
    await h.create(plainPod('foo').queue('q').build());
    await h.run();
    assert.equal(h.workloads().length, 1);
    await h.store.delete('Pod', NS, 'foo');
    await h.run();
    assert.equal(h.pod('foo'), undefined);
    assert.deepEqual(h.workloads(), []);
  });

  it('a preempted single pod is stopped (TerminationTarget, deleted) and its quota released once it no longer runs, without a direct requeue', async () => {
    const h = await harness();
    await h.create(plainPod('foo').queue('q').build());
    await h.run();
    const name = singleWorkloadName(h, 'foo');
    await h.admit(NS, name);
    await h.run();
    await h.runPod('foo');
    await h.run();
    await h.preempt(NS, name);
    await h.run();
    const p = h.pod('foo')!;
    assert.ok(p.metadata.deletionTimestamp, 'deleted');
    const tt = p.status!.conditions!.find((c) => c.type === TERMINATION_TARGET)!;
    assert.deepEqual([tt.status, tt.reason], ['True', 'WorkloadEvicted']);
    const wl = h.workload(name)!;
    assert.equal(wl.status?.admission, undefined, 'reservation cleared (deleting pods count as inactive)');
    assert.equal(conditionOf(wl, 'QuotaReserved')?.status, 'False');
    assert.equal(conditionOf(wl, 'Requeued')?.status, 'False');
    assert.deepEqual(p.metadata.finalizers, [KueueRuntimeKey.ManagedFinalizer], 'kept until the kubelet ends it');
    await h.terminateDeleting();
    await h.run();
    assert.equal(h.pod('foo'), undefined, 'finalizer removed once terminated: the pod is gone');
    assert.deepEqual(h.workloads(), [], 'and its Workload after it');
  });

  it('the topology gate stays when the PodSet assignment has a topologyAssignment (the TopologyUngater lifts it)', async () => {
    const h = await harness();
    await h.create(plainPod('foo').queue('q').build());
    await h.run();
    await h.admit(NS, singleWorkloadName(h, 'foo'), { topology: true });
    await h.run();
    assert.deepEqual(h.pod('foo')!.spec.schedulingGates, [{ name: KueueSchedulingGate.Topology }]);
  });

  it('a nodeSelector conflicting with the flavor finishes the Workload (FailedToStart) and leaves the pod gated', async () => {
    const h = await harness();
    await h.create(plainPod('foo').queue('q').cpu('1').nodeSelector({ 'cloud.com/pool': 'b' }).build());
    await h.run();
    const name = singleWorkloadName(h, 'foo');
    await h.admit(NS, name);
    await h.run();
    const f = conditionOf(h.workload(name), 'Finished')!;
    assert.deepEqual([f.status, f.reason], ['True', 'FailedToStart']);
    assert.match(f.message!, /conflict for nodeSelector: conflict for key=cloud.com\/pool, value1=b, value2=a/);
    assert.ok(hasGate(h.pod('foo'), KueueSchedulingGate.Admission));
    assert.deepEqual(h.pod('foo')!.metadata.finalizers, [], 'finished: finalizer removed');
  });

  it('pods owned by a Job are left to the job reconciler: no gate, no Workload', async () => {
    const h = await harness();
    await h.create(plainPod('job-x-abcde').queue('q').owner('batch/v1', 'Job', 'job-x').build());
    await h.run();
    assert.equal(h.pod('job-x-abcde')!.spec.schedulingGates, undefined);
    assert.equal(h.pod('job-x-abcde')!.metadata.labels![KueueLabel.Managed], undefined);
    assert.deepEqual(h.workloads(), []);
  });

  it('with manageJobsWithoutQueueName a pod without a queue is managed too', async () => {
    const h = await harness({ config: { manageJobsWithoutQueueName: true } });
    await h.create(plainPod('foo').build());
    await h.run();
    assert.ok(hasGate(h.pod('foo'), KueueSchedulingGate.Admission));
    assert.equal(h.workloads().length, 1);
  });
});

describe('plain pods: groups (KEP-976 story 2)', () => {
  const driver = (n: number) => plainPod('job-driver').queue('user-queue').group('pod-group', n).image('driver').cpu('1m');
  const worker = (i: number, n: number) =>
    plainPod(`job-worker-${i}`).queue('user-queue').group('pod-group', n).image('worker').cpu('1m').request('vendor.com/gpu', 1);

  /** A group of 2 workers, admitted, both pods Running. */
  async function runningGroupOfTwo(): Promise<PodHarness> {
    const h = await harness();
    await h.create(worker(0, 2).build());
    await h.create(worker(1, 2).build());
    await h.run();
    await h.admit(NS, 'pod-group');
    await h.run();
    await h.runPod('job-worker-0');
    await h.runPod('job-worker-1');
    await h.run();
    return h;
  }

  it('a group of 3 waits for all 3 pods, is composed into one Workload named after the group, and all pods start together', async () => {
    const h = await harness();
    await h.create(driver(3).build());
    await h.create(worker(0, 3).build());
    await h.run();
    assert.deepEqual(h.workloads(), []);
    assert.ok(
      h
        .events('ErrWorkloadCompose')
        .some((e) => e.type === 'Warning' && e.message === "'pod-group' group has fewer runnable pods than expected"),
    );

    await h.create(worker(1, 3).build());
    await h.run();
    const wl = h.workload('pod-group')!;
    assert.equal(wl.metadata.annotations![KueueRuntimeKey.IsGroupWorkload], 'true');
    assert.deepEqual(wl.spec.podSets.map((ps) => ps.count).sort(), [1, 2]);
    assert.deepEqual(
      wl.spec.podSets.map((ps) => ps.name),
      [...wl.spec.podSets.map((ps) => ps.name)].sort(),
      'PodSets sorted by role hash',
    );
    assert.deepEqual(
      wl.metadata.ownerReferences!.map((r) => [r.name, r.controller]),
      [
        ['job-driver', false],
        ['job-worker-0', false],
        ['job-worker-1', false],
      ],
    );

    await h.admit(NS, 'pod-group');
    await h.run();
    for (const n of ['job-driver', 'job-worker-0', 'job-worker-1']) {
      const p = h.pod(n)!;
      assert.equal(p.spec.schedulingGates, undefined, n);
      assert.equal(p.metadata.labels![KueueLabel.PodSet], wl.spec.podSets.find((ps) => ps.count === (n === 'job-driver' ? 1 : 2))!.name);
    }
    assert.equal(h.events('Started').length, 3);

    for (const n of ['job-driver', 'job-worker-0', 'job-worker-1']) await h.runPod(n);
    await h.run();
    assert.equal(conditionOf(h.workload('pod-group'), 'PodsReady')?.status, 'True');
    for (const n of ['job-worker-0', 'job-worker-1']) await h.setPhase(n, 'Succeeded');
    await h.run();
    assert.equal(conditionOf(h.workload('pod-group'), 'Finished'), undefined);
    assert.deepEqual(h.workload('pod-group')!.status!.reclaimablePods, [
      { name: h.pod('job-worker-0')!.metadata.labels![KueueLabel.PodSet], count: 2 },
    ]);
    assert.deepEqual(
      h.pod('job-worker-0')!.metadata.finalizers,
      [KueueRuntimeKey.ManagedFinalizer],
      'succeeded pods are counted: finalizer kept',
    );
    await h.setPhase('job-driver', 'Succeeded');
    await h.run();
    const f = conditionOf(h.workload('pod-group'), 'Finished')!;
    assert.deepEqual([f.status, f.reason, f.message], ['True', 'Succeeded', 'Pods succeeded: 3/3.']);
    for (const n of ['job-driver', 'job-worker-0', 'job-worker-1']) assert.deepEqual(h.pod(n)!.metadata.finalizers, [], n);
    assert.deepEqual(h.manager.errors, []);
  });

  it('excess pods (the youngest) are deleted, before and after the Workload exists', async () => {
    const h = await harness();
    await h.create(worker(0, 2).build());
    h.clock.advanceBy(1000);
    await h.create(worker(1, 2).build());
    h.clock.advanceBy(1000);
    await h.create(worker(2, 2).build());
    await h.run();
    assert.equal(h.pod('job-worker-2'), undefined, 'the youngest is deleted');
    assert.equal(h.workload('pod-group')!.spec.podSets[0]!.count, 2);
    assert.deepEqual(
      h.events('ExcessPodDeleted').map((e) => [e.object, e.message]),
      [[`Pod/${NS}/job-worker-2`, 'Excess pod deleted']],
    );

    await h.create(worker(3, 2).build());
    await h.run();
    assert.equal(h.pod('job-worker-3'), undefined);
    assert.equal(await h.metric('kueue_pods_rejected_total'), 2);
  });

  it('a failed pod is replaced within the group quota: the newcomer joins the admitted Workload and is ungated with the same info', async () => {
    const h = await runningGroupOfTwo();
    await h.setPhase('job-worker-1', 'Failed');
    await h.run();
    let wl = h.workload('pod-group')!;
    const w = conditionOf(wl, 'WaitingForReplacementPods')!;
    assert.deepEqual([w.status, w.reason, w.message], ['True', 'PodsFailed', 'Some Failed pods need replacement']);
    assert.equal(conditionOf(wl, 'PodsReady')?.reason, 'WaitForRecovery');
    assert.deepEqual(h.pod('job-worker-1')!.metadata.finalizers, [KueueRuntimeKey.ManagedFinalizer], 'kept until replaced');

    await h.create(worker(2, 2).build());
    await h.run();
    const p = h.pod('job-worker-2')!;
    assert.equal(p.spec.schedulingGates, undefined, 'ungated at once: the Workload is admitted');
    assert.deepEqual(p.spec.nodeSelector, { 'cloud.com/pool': 'a' });
    assert.deepEqual(h.pod('job-worker-1')!.metadata.finalizers, [], 'the failed pod is finalized once replaced');
    wl = h.workload('pod-group')!;
    assert.deepEqual(
      [conditionOf(wl, 'WaitingForReplacementPods')?.status, conditionOf(wl, 'WaitingForReplacementPods')?.reason],
      ['False', 'PodsReady'],
    );
    assert.ok(wl.metadata.ownerReferences!.some((r) => r.name === 'job-worker-2'));
    assert.deepEqual(
      h.events('OwnerReferencesAdded').map((e) => e.message),
      ['Added 1 owner reference(s)'],
    );
    assert.equal(wl.status!.admission !== undefined, true, 'the quota was held all along');
  });

  it('a preempted group: started pods are stopped, the reservation cleared once none runs, finalizers removed as they end', async () => {
    const h = await harness();
    await h.create(worker(0, 2).build());
    await h.create(worker(1, 2).build());
    await h.run();
    await h.admit(NS, 'pod-group');
    await h.run();
    await h.runPod('job-worker-0');
    await h.run();
    await h.preempt(NS, 'pod-group');
    await h.run();
    assert.ok(h.pod('job-worker-0')!.metadata.deletionTimestamp);
    assert.equal(h.pod('job-worker-1'), undefined, 'ungated but never bound: deleted and finalized at once');
    const wl = h.workload('pod-group')!;
    assert.equal(wl.status?.admission, undefined);
    assert.equal(conditionOf(wl, 'Requeued')?.status, 'True');
    assert.equal(conditionOf(wl, 'WaitingForReplacementPods')?.reason, 'Preempted');
    await h.terminateDeleting();
    await h.run();
    assert.equal(h.pod('job-worker-0'), undefined);
    assert.equal(h.workload('pod-group'), undefined, 'no pods left: the Workload is deleted');
  });

  it('deleting the Workload stops the started pods, releases the Workload, and the pods lose their finalizers once it is gone', async () => {
    const h = await runningGroupOfTwo();
    await h.store.delete('Workload', NS, 'pod-group');
    await h.run();
    assert.equal(h.pod('job-worker-0'), undefined, 'stopped (TerminationTarget, deleted) and, the Workload gone, finalized');
    assert.equal(h.pod('job-worker-1'), undefined);
    assert.equal(h.workload('pod-group'), undefined);
    assert.ok(h.events('Stopped').some((e) => e.message === 'Workload is deleted'));
  });

  it('an unretriable group finishes when no pod runs any more; a serving group never finishes', async () => {
    for (const serving of [false, true]) {
      const h = await harness();
      for (const i of [0, 1]) {
        const b = worker(i, 2);
        b.annotate(serving ? KueueRuntimeKey.PodGroupServing : KueueRuntimeKey.RetriableInGroup, serving ? 'true' : 'false');
        await h.create(b.build());
      }
      await h.run();
      await h.admit(NS, 'pod-group');
      await h.run();
      await h.runPod('job-worker-0');
      await h.runPod('job-worker-1');
      await h.setPhase('job-worker-0', 'Failed');
      await h.setPhase('job-worker-1', 'Succeeded');
      await h.run();
      const f = conditionOf(h.workload('pod-group'), 'Finished');
      if (serving) assert.equal(f, undefined);
      else assert.deepEqual([f?.status, f?.reason, f?.message], ['True', 'Succeeded', 'Pods succeeded: 1/2.']);
    }
  });

  it('a pod of a new shape recomposes a Workload without reservation, and stays gated (Warning) once the Workload is reserved', async () => {
    const h = await harness();
    await h.create(worker(0, 2).build());
    await h.create(worker(1, 2).build());
    await h.run();
    const before = h.workload('pod-group')!.metadata.uid;
    h.clock.advanceBy(1000);
    await h.create(worker(2, 2).cpu('2').build());
    await h.run();
    assert.ok(h.events('DeletedWorkload').some((e) => e.message === `Deleted not matching Workload: ${NS}/pod-group`));
    const after = h.workload('pod-group')!;
    assert.notEqual(after.metadata.uid, before);
    assert.equal(h.pod('job-worker-2'), undefined, 'recomposed: the youngest pod is the excess');
    await h.admit(NS, 'pod-group');
    await h.run();
    await h.create(worker(3, 2).cpu('3').build());
    await h.run();
    assert.ok(hasGate(h.pod('job-worker-3'), KueueSchedulingGate.Admission));
    assert.equal(h.workload('pod-group')!.metadata.uid, after.metadata.uid);
    assert.ok(
      h
        .events('ErrWorkloadCompose')
        .some((e) => e.object === `Pod/${NS}/job-worker-3` && /which is not one of Workload pod-group's PodSets/.test(e.message)),
    );
  });

  it("pods with different queue names give no Workload and a Warning with Kueue's message", async () => {
    const h = await harness();
    await h.create(worker(0, 2).build());
    await h.create(worker(1, 2).queue('other').build());
    await h.run();
    assert.deepEqual(h.workloads(), []);
    assert.deepEqual(
      h
        .events('ErrWorkloadCompose')
        .map((e) => e.message)
        .filter((m) => m.includes('queue')),
      ["pods 'job-worker-0' and 'job-worker-1' has different queue names: user-queue!=other"],
    );
  });

  it('a Workload of the group name that is not a pod group workload blocks the group with a Warning', async () => {
    const h = await harness();
    const other: Workload = {
      apiVersion: 'kueue.x-k8s.io/v1beta2',
      kind: 'Workload',
      metadata: { name: 'pod-group', namespace: NS },
      spec: { podSets: [] },
    };
    await h.create(other);
    await h.create(worker(0, 1).build());
    await h.run();
    assert.deepEqual(
      h.events('WorkloadNameConflict').map((e) => e.message),
      ['A Workload named "pod-group" already exists but is not a pod group workload; this pod group cannot be admitted'],
    );
    assert.deepEqual(h.workload('pod-group')!.spec.podSets, []);
  });
});

describe('plain pods: driver-made workers (KEP-976 story 3, pod-group-sets)', () => {
  const sets = JSON.stringify([
    { name: 'driver', count: 1 },
    { name: 'workers', count: 2, template: { spec: { containers: [{ name: 'worker', resources: { requests: { cpu: '1m' } } }] } } },
  ]);
  const workerPod = (i: number) =>
    plainPod(`job-worker-${i}`).queue('user-queue').group('pod-group').label(POD_GROUP_ROLE_LABEL, 'workers').cpu('1m');

  it('the driver alone composes the declared PodSets; workers created later join the admitted Workload and are ungated; extra workers are deleted', async () => {
    const h = await harness();
    await h.create(
      plainPod('job-driver').queue('user-queue').group('pod-group').annotate(KueueRuntimeKey.PodGroupSets, sets).cpu('1m').build(),
    );
    await h.run();
    const wl = h.workload('pod-group')!;
    assert.deepEqual(
      wl.spec.podSets.map((ps) => [ps.name, ps.count]),
      [
        ['driver', 1],
        ['workers', 2],
      ],
    );
    assert.equal(wl.spec.podSets[1]!.template.spec.containers[0]!.name, 'worker');
    await h.admit(NS, 'pod-group');
    await h.run();
    assert.equal(h.pod('job-driver')!.spec.schedulingGates, undefined);
    assert.equal(h.pod('job-driver')!.metadata.labels![KueueLabel.PodSet], 'driver');
    await h.runPod('job-driver');

    for (const i of [0, 1]) await h.create(workerPod(i).build());
    await h.run();
    for (const i of [0, 1]) {
      assert.equal(h.pod(`job-worker-${i}`)!.spec.schedulingGates, undefined);
      assert.equal(h.pod(`job-worker-${i}`)!.metadata.labels![KueueLabel.PodSet], 'workers');
    }
    await h.create(workerPod(2).build());
    await h.run();
    assert.equal(h.pod('job-worker-2'), undefined, 'beyond the declared count: rejected');

    for (const n of ['job-driver', 'job-worker-0', 'job-worker-1']) await h.setPhase(n, 'Succeeded');
    await h.run();
    assert.equal(conditionOf(h.workload('pod-group'), 'Finished')?.message, 'Pods succeeded: 3/3.');
    assert.deepEqual(h.manager.errors, []);
  });
});

describe('gang pods (Koordinator annotations)', () => {
  const gangPod = (name: string) =>
    plainPod(name)
      .queue('user-queue')
      .cpu('1')
      .annotate('gang.scheduling.koordinator.sh/name', 'gang-a')
      .annotate('gang.scheduling.koordinator.sh/min-available', '3');

  it('gang pods are gated, wait for the whole gang, become one Workload named after the gang and start together', async () => {
    const h = await harness();
    await h.create(gangPod('p0').build());
    await h.create(gangPod('p1').build());
    await h.run();
    assert.ok(hasGate(h.pod('p0'), KueueSchedulingGate.Admission));
    assert.deepEqual(h.workloads(), []);
    assert.ok(
      h
        .events('ErrWorkloadCompose')
        .some((e) => e.message === `gang child pod not collect enough, gangName: ${NS}/gang-a, podName: ${NS}/p0`),
    );
    await h.create(gangPod('p2').build());
    await h.run();
    const wl = h.workload('gang-a')!;
    assert.equal(wl.metadata.annotations!['gang.scheduling.koordinator.sh/min-available'], '3');
    assert.deepEqual(
      wl.spec.podSets.map((ps) => ps.count),
      [3],
    );
    await h.admit(NS, 'gang-a');
    await h.run();
    for (const n of ['p0', 'p1', 'p2']) assert.equal(h.pod(n)!.spec.schedulingGates, undefined, n);
    for (const n of ['p0', 'p1', 'p2']) await h.runPod(n);
    for (const n of ['p0', 'p1', 'p2']) await h.setPhase(n, 'Succeeded');
    await h.run();
    assert.equal(conditionOf(h.workload('gang-a'), 'Finished')?.message, 'Pods succeeded: 3/3.');
    assert.deepEqual(h.manager.errors, []);
  });

  it('a gang admitted with fewer pods than it has (NonStrict minimum) starts only those and finishes when they succeed; extra pods stay gated', async () => {
    const h = await harness();
    for (const n of ['p0', 'p1', 'p2']) await h.create(gangPod(n).build());
    await h.run();
    const ps = h.workload('gang-a')!.spec.podSets[0]!.name;
    await h.admit(NS, 'gang-a', { counts: { [ps]: 2 } });
    await h.run();
    assert.deepEqual(
      ['p0', 'p1', 'p2'].map((n) => hasGate(h.pod(n), KueueSchedulingGate.Admission)),
      [false, false, true],
    );
    await h.create(gangPod('p3').build());
    await h.run();
    assert.ok(h.pod('p3'), 'a gang never deletes pods');
    assert.ok(
      h
        .events('ErrWorkloadCompose')
        .some((e) => e.object === `Pod/${NS}/p3` && e.message === `gang ${NS}/gang-a already has 3 pods of role ${ps}: pod p3 stays gated`),
    );
    for (const n of ['p0', 'p1']) await h.runPod(n);
    await h.run();
    assert.equal(conditionOf(h.workload('gang-a'), 'PodsReady')?.status, 'True');
    for (const n of ['p0', 'p1']) await h.setPhase(n, 'Succeeded');
    await h.run();
    assert.equal(conditionOf(h.workload('gang-a'), 'Finished')?.message, 'Pods succeeded: 2/2.');
  });

  it('a gang of the PodGroup way waits for its PodGroup (not initialized) and is composed when it appears', async () => {
    const h = await harness();
    for (const n of ['p0', 'p1'])
      await h.create(plainPod(n).queue('user-queue').cpu('1').label('pod-group.scheduling.sigs.k8s.io', 'pg').build());
    await h.run();
    assert.deepEqual(h.workloads(), []);
    assert.ok(h.events('ErrWorkloadCompose').some((e) => e.message === `gang has not init, gangName: ${NS}/pg, podName: ${NS}/p0`));
    await h.create({
      apiVersion: 'scheduling.sigs.k8s.io/v1alpha1',
      kind: 'PodGroup',
      metadata: { name: 'pg', namespace: NS },
      spec: { minMember: 2 },
    });
    await h.run();
    assert.deepEqual(
      h.workload('pg')!.spec.podSets.map((ps) => ps.count),
      [2],
    );
  });
});
