import { test } from 'node:test';
import assert from 'node:assert/strict';
import { KueueAnnotation, KueueLabel, PodIndexLabel } from '../api/keys.ts';
import type { KObject } from '../api/objects.ts';
import { leaderWorkerSetToWorkloads, leaderWorkerSetWorkloadName } from './leaderworkerset.ts';
import { IS_GROUP_WORKLOAD_ANNOTATION, sha1Hex } from './workload-name.ts';

const where = { file: 'lws.yaml', document: 1 };

const template = (name: string, annotations?: Record<string, string>) => ({
  metadata: annotations ? { annotations } : {},
  spec: { containers: [{ name, image: 'agnhost' }] },
});

function lws(spec: Record<string, unknown>, lwt: Record<string, unknown>): KObject {
  return {
    apiVersion: 'leaderworkerset.x-k8s.io/v1',
    kind: 'LeaderWorkerSet',
    metadata: { name: 'tas-example-lws', uid: 'lws-uid', labels: { [KueueLabel.QueueName]: 'user-queue' } },
    spec: { ...spec, leaderWorkerTemplate: lwt },
  } as KObject;
}

function run(obj: KObject) {
  const r = leaderWorkerSetToWorkloads(obj, { where });
  assert.deepEqual(
    r.errors.map((e) => e.message),
    [],
  );
  return r.workloads;
}

test('LeaderWorkerSet: one Workload per group, named leaderworkerset-<name>-<i>-<hash of name-i and uid>', () => {
  const wls = run(lws({ replicas: 3 }, { size: 2, workerTemplate: template('w') }));
  assert.equal(wls.length, 3);
  wls.forEach((wl, i) => {
    const hash = sha1Hex(`LeaderWorkerSet\nleaderworkerset.x-k8s.io\ntas-example-lws-${i}\nlws-uid`).slice(0, 5);
    assert.equal(wl.metadata.name, `leaderworkerset-tas-example-lws-${i}-${hash}`);
    assert.equal(wl.metadata.name, leaderWorkerSetWorkloadName(lws({}, {}), i));
    assert.equal(wl.spec.queueName, 'user-queue');
    assert.equal(wl.metadata.annotations?.[IS_GROUP_WORKLOAD_ANNOTATION], 'true');
    assert.deepEqual(wl.metadata.ownerReferences?.[0], {
      apiVersion: 'leaderworkerset.x-k8s.io/v1',
      kind: 'LeaderWorkerSet',
      name: 'tas-example-lws',
      uid: 'lws-uid',
      controller: true,
    });
  });
  // PodSets are separate copies per Workload.
  wls[0]!.spec.podSets[0]!.count = 99;
  assert.equal(wls[1]!.spec.podSets[0]!.count, 2);
});

test('LeaderWorkerSet: leader (1) + worker (size-1) with a leader template; worker index label and offset "1"', () => {
  // KEP-2724 "Respect Pod Index order within Workers".
  const [wl] = run(lws({ replicas: 2 }, { size: 3, leaderTemplate: template('leader'), workerTemplate: template('worker') }));
  assert.deepEqual(
    wl!.spec.podSets.map((ps) => [ps.name, ps.count]),
    [
      ['leader', 1],
      ['worker', 2],
    ],
  );
  const [leader, worker] = wl!.spec.podSets;
  assert.equal(leader!.topologyRequest, undefined);
  assert.equal(leader!.template.metadata?.annotations, undefined);
  assert.deepEqual(worker!.topologyRequest, { podIndexLabel: PodIndexLabel.LWSWorkerIndex });
  assert.deepEqual(worker!.template.metadata?.annotations, { [KueueAnnotation.PodIndexOffset]: '1' });
});

test('LeaderWorkerSet: with podset-group-name the worker gets no offset (KEP-2724 co-locate leader with workers)', () => {
  const tas = {
    [KueueAnnotation.PodSetGroupName]: 'lws-group',
    [KueueAnnotation.PodSetRequiredTopology]: 'cloud.provider.com/topology-host',
  };
  const [wl] = run(lws({ replicas: 2 }, { size: 3, leaderTemplate: template('leader', tas), workerTemplate: template('worker', tas) }));
  const [leader, worker] = wl!.spec.podSets;
  assert.deepEqual(leader!.topologyRequest, { required: 'cloud.provider.com/topology-host', podSetGroupName: 'lws-group' });
  assert.deepEqual(worker!.topologyRequest, {
    required: 'cloud.provider.com/topology-host',
    podSetGroupName: 'lws-group',
    podIndexLabel: PodIndexLabel.LWSWorkerIndex,
  });
  assert.deepEqual(worker!.template.metadata?.annotations, tas);
});

test('LeaderWorkerSet: without a leader template one PodSet `main` of count size, no offset', () => {
  const [wl] = run(lws({}, { size: 4, workerTemplate: template('w') }));
  assert.deepEqual(
    wl!.spec.podSets.map((ps) => [ps.name, ps.count]),
    [['main', 4]],
  );
  assert.deepEqual(wl!.spec.podSets[0]!.topologyRequest, { podIndexLabel: PodIndexLabel.LWSWorkerIndex });
  assert.equal(wl!.spec.podSets[0]!.template.metadata?.annotations, undefined);
});

test('LeaderWorkerSet: replicas and size default to 1; replicas 0 gives no Workload', () => {
  const wls = run(lws({}, { workerTemplate: template('w') }));
  assert.equal(wls.length, 1);
  assert.deepEqual(
    wls[0]!.spec.podSets.map((ps) => [ps.name, ps.count]),
    [['main', 1]],
  );
  assert.equal(run(lws({ replicas: 0 }, { workerTemplate: template('w') })).length, 0);
});

test('LeaderWorkerSet: the input object is not changed', () => {
  const obj = lws({}, { size: 2, leaderTemplate: template('l'), workerTemplate: template('w') });
  const before = structuredClone(obj);
  run(obj);
  assert.deepEqual(obj, before);
});

test('LeaderWorkerSet: errors name the field; none are thrown', () => {
  const cases: [Record<string, unknown>, Record<string, unknown> | undefined, string[]][] = [
    [{}, undefined, ['spec.leaderWorkerTemplate']],
    [{}, { size: 2 }, ['spec.leaderWorkerTemplate.workerTemplate']],
    [{}, { size: 0, workerTemplate: template('w') }, ['spec.leaderWorkerTemplate.size']],
    [{ replicas: 'two' }, { workerTemplate: template('w') }, ['spec.replicas']],
    [{}, { leaderTemplate: {}, workerTemplate: template('w') }, ['spec.leaderWorkerTemplate.leaderTemplate']],
    [
      {},
      { workerTemplate: template('w', { [KueueAnnotation.PodSetRequiredTopology]: 'a', [KueueAnnotation.PodSetPreferredTopology]: 'b' }) },
      ['spec.leaderWorkerTemplate.workerTemplate.metadata.annotations["kueue.x-k8s.io/podset-preferred-topology"]'],
    ],
  ];
  for (const [spec, lwt, fields] of cases) {
    const obj = { ...lws(spec, {}), spec: lwt === undefined ? spec : { ...spec, leaderWorkerTemplate: lwt } } as KObject;
    const r = leaderWorkerSetToWorkloads(obj, { where });
    assert.equal(r.workloads.length, 0, JSON.stringify(lwt));
    assert.deepEqual(
      r.errors.map((e) => e.where.field),
      fields,
      JSON.stringify(lwt),
    );
    assert.equal(r.errors[0]!.where.object, 'LeaderWorkerSet/default/tas-example-lws');
  }
});
