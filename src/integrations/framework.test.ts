import { test } from 'node:test';
import assert from 'node:assert/strict';
import { KueueAnnotation, KueueLabel, KueueRuntimeKey, KueueSchedulingGate } from '../api/keys.ts';
import type { PodSet, Workload } from '../api/objects.ts';
import { podTemplate, resourceFlavor } from '../testing/jobs.ts';
import {
  MissingFlavorError,
  PodSetInfoConflict,
  canonicalJson,
  mergePodSetInfo,
  podSetInfoOfTemplate,
  podSetInfos,
  restorePodSetInfo,
  runningPodSets,
  samePodSets,
  templateMeta,
} from './framework.ts';

function workload(podSets: PodSet[], assignments: Record<string, unknown>[]): Workload {
  return {
    apiVersion: 'kueue.x-k8s.io/v1beta2',
    kind: 'Workload',
    metadata: { name: 'wl', namespace: 'ns' },
    spec: { queueName: 'lq', podSets },
    status: { admission: { clusterQueue: 'cq', podSetAssignments: assignments as never } },
  };
}

const flavorsByName = new Map([
  ['b-flavor', resourceFlavor('b-flavor', { pool: 'b', zone: 'z' }, [{ key: 'spot', operator: 'Exists', effect: 'NoSchedule' }])],
  ['a-flavor', resourceFlavor('a-flavor', { pool: 'b', arch: 'arm' }, [{ key: 'spot', operator: 'Exists', effect: 'NoSchedule' }])],
]);
const lookup = (n: string) => flavorsByName.get(n);

test('PodSet info: every assigned flavor (by name) adds nodeLabels and tolerations once; podset and queue labels; workload annotation; admitted count', () => {
  const w = workload(
    [{ name: 'main', count: 8, minCount: 2, template: podTemplate() }],
    [{ name: 'main', count: 5, flavors: { cpu: 'b-flavor', 'nvidia.com/gpu': 'a-flavor', memory: 'b-flavor' } }],
  );
  const [info] = podSetInfos(w, lookup);
  assert.deepEqual(info, {
    name: 'main',
    count: 5,
    labels: { [KueueLabel.PodSet]: 'main', [KueueRuntimeKey.LocalQueueNameLabel]: 'lq', [KueueRuntimeKey.ClusterQueueNameLabel]: 'cq' },
    annotations: { [KueueAnnotation.Workload]: 'wl' },
    nodeSelector: { pool: 'b', arch: 'arm', zone: 'z' },
    tolerations: [{ key: 'spot', operator: 'Exists', effect: 'NoSchedule' }],
    schedulingGates: [],
  });
});

test('PodSet info: a topology (or delayed topology) assignment adds the topology gate; implicit TAS is marked unconstrained, an explicit request is not', () => {
  const ta = {
    levels: ['kubernetes.io/hostname'],
    slices: [{ domainCount: 1, valuesPerLevel: [{ universal: 'n1' }], podCounts: { universal: 1 } }],
  };
  const w = workload(
    [
      { name: 'implicit', count: 1, template: podTemplate() },
      { name: 'explicit', count: 1, template: podTemplate(), topologyRequest: { required: 'rack' } },
      { name: 'delayed', count: 1, template: podTemplate(), topologyRequest: { preferred: 'rack' } },
      { name: 'plain', count: 1, template: podTemplate() },
    ],
    [
      { name: 'implicit', count: 1, topologyAssignment: ta },
      { name: 'explicit', count: 1, topologyAssignment: ta },
      { name: 'delayed', count: 1, delayedTopologyRequest: 'Pending' },
      { name: 'plain', count: 1 },
    ],
  );
  const infos = podSetInfos(w, lookup);
  assert.deepEqual(
    infos.map((i) => [i.name, i.schedulingGates.map((g) => g.name), i.annotations[KueueAnnotation.PodSetUnconstrainedTopology]]),
    [
      ['implicit', [KueueSchedulingGate.Topology], 'true'],
      ['explicit', [KueueSchedulingGate.Topology], undefined],
      ['delayed', [KueueSchedulingGate.Topology], undefined],
      ['plain', [], undefined],
    ],
  );
});

test('PodSet info: an unknown flavor is a MissingFlavorError naming it, the PodSet and the Workload', () => {
  const w = workload([{ name: 'main', count: 1, template: podTemplate() }], [{ name: 'main', count: 1, flavors: { cpu: 'nope' } }]);
  assert.throws(
    () => podSetInfos(w, lookup),
    (e: unknown) =>
      e instanceof MissingFlavorError && e.message === 'ResourceFlavor "nope" not found (assigned to PodSet main of Workload ns/wl)',
  );
});

test("merging refuses a key the template has with another value, in Kueue's words; equal values, tolerations and gates merge once", () => {
  const info = {
    name: 'main',
    count: 1,
    labels: { a: '1' },
    annotations: { x: 'y' },
    nodeSelector: { pool: 'b' },
    tolerations: [{ key: 'spot', operator: 'Exists' as const }],
    schedulingGates: [{ name: KueueSchedulingGate.Topology }],
  };
  const t = podTemplate({ labels: { a: '1', keep: 'k' }, nodeSelector: { pool: 'b' } });
  t.spec.tolerations = [{ key: 'spot', operator: 'Exists' }];
  mergePodSetInfo(templateMeta(t), t.spec, info);
  mergePodSetInfo(templateMeta(t), t.spec, info);
  assert.deepEqual(t.metadata, { labels: { a: '1', keep: 'k' }, annotations: { x: 'y' } });
  assert.deepEqual(t.spec.tolerations, [{ key: 'spot', operator: 'Exists' }]);
  assert.deepEqual(t.spec.schedulingGates, [{ name: KueueSchedulingGate.Topology }]);

  for (const [what, tpl] of [
    ['labels', podTemplate({ labels: { a: '2' } })],
    ['annotations', podTemplate({ annotations: { x: 'z' } })],
    ['nodeSelector', podTemplate({ nodeSelector: { pool: 'c' } })],
  ] as const) {
    const copy = structuredClone(tpl);
    assert.throws(
      () => mergePodSetInfo(templateMeta(copy), copy.spec, info),
      (e: unknown) =>
        e instanceof PodSetInfoConflict &&
        e.message.startsWith(`invalid admission check PodSetUpdate: conflict for ${what}: conflict for key=`),
    );
  }
});

test("restoring sets labels, annotations, nodeSelector, tolerations and gates back to the Workload template's, and says whether anything changed", () => {
  const original = podTemplate({ labels: { app: 'x' } });
  const ps: PodSet = { name: 'main', count: 1, template: original };
  const t = structuredClone(original);
  assert.equal(restorePodSetInfo(templateMeta(t), t.spec, podSetInfoOfTemplate(ps)), false);
  mergePodSetInfo(templateMeta(t), t.spec, {
    ...podSetInfoOfTemplate(ps),
    labels: { podset: 'main' },
    nodeSelector: { pool: 'a' },
    schedulingGates: [{ name: 'g' }],
    annotations: {},
  });
  assert.equal(restorePodSetInfo(templateMeta(t), t.spec, podSetInfoOfTemplate(ps)), true);
  assert.equal(canonicalJson(t), canonicalJson(original));
  assert.equal(t.spec.nodeSelector, undefined);
  assert.equal(t.spec.schedulingGates, undefined);
});

test('PodSets compare by name, count, minCount and pod spec; key order and empty lists or maps do not matter', () => {
  const a: PodSet = {
    name: 'main',
    count: 2,
    template: { spec: { containers: [{ name: 'c', resources: { requests: { cpu: '1' } } }], tolerations: [] } },
  };
  const b: PodSet = {
    name: 'main',
    count: 2,
    template: {
      metadata: { labels: { x: 'y' } },
      spec: { tolerations: undefined, containers: [{ resources: { requests: { cpu: '1' } }, name: 'c' }] },
    },
  };
  assert.ok(samePodSets([a], [b]));
  assert.ok(!samePodSets([a], [{ ...b, count: 3 }]));
  assert.ok(!samePodSets([a], [{ ...b, minCount: 1 }]));
  assert.ok(!samePodSets([a], [{ ...b, name: 'other' }]));
  assert.ok(!samePodSets([a], [{ ...b, template: { spec: { containers: [{ name: 'c', resources: { requests: { cpu: '2' } } }] } } }]));
  assert.ok(!samePodSets([a], []));
  // The pod specs are compared through the text function given (a caller's remembered texts).
  const seen: object[] = [];
  const text = (spec: object) => {
    seen.push(spec);
    return 'same';
  };
  assert.ok(samePodSets([a], [{ ...b, template: { spec: { containers: [] } } }], text));
  assert.deepEqual(seen, [a.template.spec, { containers: [] }]);
});

test('the running PodSets of an admitted Workload carry the merged info and the admitted count of a partially admitted PodSet', () => {
  const w = workload(
    [
      { name: 'main', count: 8, minCount: 2, template: podTemplate() },
      { name: 'side', count: 3, template: podTemplate() },
    ],
    [
      { name: 'main', count: 5, flavors: { cpu: 'b-flavor' } },
      { name: 'side', count: 3, flavors: { cpu: 'b-flavor' } },
    ],
  );
  const running = runningPodSets(w, podSetInfos(w, lookup))!;
  assert.deepEqual(
    running.map((p) => [p.name, p.count, p.template.spec.nodeSelector]),
    [
      ['main', 5, { pool: 'b', zone: 'z' }],
      ['side', 3, { pool: 'b', zone: 'z' }],
    ],
  );
  const conflicting = workload(
    [{ name: 'main', count: 1, template: podTemplate({ nodeSelector: { pool: 'x' } }) }],
    [{ name: 'main', count: 1, flavors: { cpu: 'b-flavor' } }],
  );
  assert.equal(runningPodSets(conflicting, podSetInfos(conflicting, lookup)), undefined);
});
