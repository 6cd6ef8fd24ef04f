import { test } from 'node:test';
import assert from 'node:assert/strict';
import { KueueAnnotation, KueueLabel, KueueSchedulingGate } from '../api/keys.ts';
import type { Pod, PodSpec } from '../api/objects.ts';
import type { SourcedObject } from './integration.ts';
import {
  MANAGED_POD_FINALIZER,
  PodGroupAnnotation,
  podToWorkloads,
  roleHash,
  roleHashOfShape,
  roleShapeJSON,
  workloadsFromPods,
} from './pod.ts';
import { IS_GROUP_WORKLOAD_ANNOTATION, sha1Hex } from './workload-name.ts';

// --- fixture builder ----------------------------------------------------------------

class PodBuilder {
  private readonly p: Pod;
  constructor(name: string, namespace = 'ns') {
    this.p = { apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace }, spec: { containers: [{ name: 'c', image: 'pause' }] } };
  }
  uid(uid: string): this {
    this.p.metadata.uid = uid;
    return this;
  }
  label(k: string, v: string): this {
    this.p.metadata.labels = { ...this.p.metadata.labels, [k]: v };
    return this;
  }
  annotation(k: string, v: string): this {
    this.p.metadata.annotations = { ...this.p.metadata.annotations, [k]: v };
    return this;
  }
  queue(q: string): this {
    return this.label(KueueLabel.QueueName, q);
  }
  group(name: string, total?: number | string): this {
    this.label(KueueLabel.PodGroupName, name);
    return total === undefined ? this : this.annotation(PodGroupAnnotation.TotalCount, String(total));
  }
  requests(r: Record<string, string>): this {
    this.p.spec.containers[0]!.resources = { requests: r };
    return this;
  }
  spec(s: Partial<PodSpec>): this {
    Object.assign(this.p.spec, s);
    return this;
  }
  phase(phase: NonNullable<Pod['status']>['phase']): this {
    this.p.status = { phase };
    return this;
  }
  meta(m: Partial<Pod['metadata']>): this {
    Object.assign(this.p.metadata, m);
    return this;
  }
  build(): Pod {
    return this.p;
  }
}
const pod = (name: string, namespace?: string) => new PodBuilder(name, namespace);

const docs = (...pods: PodBuilder[]): SourcedObject[] =>
  pods.map((p, i) => ({ object: p.build(), where: { file: 'pods.yaml', document: i + 1 } }));

const hashOf = (p: PodBuilder) => roleHash(p.build(), {}).hash!;

// --- role hash ----------------------------------------------------------------------

test('Role hash: Kueue test facts dc85db45 ({cpu: 1}) and 4ebdd4a6 ({cpu: 1, memory: 1Gi})', () => {
  assert.equal(hashOf(pod('a').requests({ cpu: '1' })), 'dc85db45');
  assert.equal(hashOf(pod('a').requests({ cpu: '1', memory: '1Gi' })), '4ebdd4a6');
});

test('Role hash: Kueue test fact a9f06f3a is the shape with an empty (non-nil) requests map', () => {
  const shape =
    '{"spec":{"affinity":null,"containers":[{"ports":null,"resources":{"requests":{}}}],"initContainers":null,' +
    '"nodeSelector":null,"overhead":null,"priority":null,"resourceClaims":null,"runtimeClassName":null,' +
    '"tolerations":null,"topologySpreadConstraints":null}}';
  assert.equal(roleHashOfShape(shape), 'a9f06f3a');
  // A pod read from a manifest with no requests encodes them as null (the API server drops
  // empty omitempty maps before Kueue's webhook sees the pod), one byte pattern away:
  const none = roleShapeJSON(pod('a').build().spec);
  assert.equal(none, shape.replace('"requests":{}', '"requests":null'));
  assert.equal(roleHashOfShape(none), '7aa6c7b8');
  assert.equal(hashOf(pod('a').requests({})), '7aa6c7b8');
});

test('Role hash: quantities are canonical, requests default from limits', () => {
  const one = hashOf(pod('a').requests({ cpu: '1', memory: '1Gi' }));
  assert.equal(hashOf(pod('b').requests({ cpu: '1000m', memory: '1024Mi' })), one);
  const limitsOnly = pod('c').build();
  limitsOnly.spec.containers[0]!.resources = { limits: { cpu: '1', memory: '1Gi' } };
  assert.equal(roleHash(limitsOnly, {}).hash, one);
});

test('Role hash: names, images, env, labels and gates do not count; placement fields do', () => {
  const base = hashOf(pod('a').requests({ cpu: '1' }));
  const renamed = pod('zzz')
    .requests({ cpu: '1' })
    .label('x', 'y')
    .spec({ containers: [{ name: 'other', image: 'busybox', resources: { requests: { cpu: '1' } } }], schedulingGates: [{ name: 'g' }] });
  assert.equal(hashOf(renamed), base);
  assert.notEqual(
    hashOf(
      pod('a')
        .requests({ cpu: '1' })
        .spec({ nodeSelector: { zone: 'a' } }),
    ),
    base,
  );
  assert.notEqual(
    hashOf(
      pod('a')
        .requests({ cpu: '1' })
        .spec({ tolerations: [{ key: 'gpu', operator: 'Exists' }] }),
    ),
    base,
  );
  // Empty lists are what the API server drops: the same role as absent.
  assert.equal(hashOf(pod('a').requests({ cpu: '1' }).spec({ tolerations: [], nodeSelector: {} })), base);
});

test('Role hash: Go field order and omitempty inside typed structs; ports default to TCP', () => {
  const json = roleShapeJSON(
    pod('a')
      .spec({
        tolerations: [{ effect: 'NoSchedule', key: 'k', operator: 'Equal', value: 'v' }],
        containers: [{ name: 'c', ports: [{ containerPort: 8080 }] } as PodSpec['containers'][number]],
        affinity: {
          nodeAffinity: {
            requiredDuringSchedulingIgnoredDuringExecution: {
              nodeSelectorTerms: [{ matchExpressions: [{ values: ['a'], operator: 'In', key: 'zone' }] }],
            },
          },
        },
      })
      .build().spec,
  );
  assert.match(json, /"tolerations":\[\{"key":"k","operator":"Equal","value":"v","effect":"NoSchedule"\}\]/);
  assert.match(json, /"ports":\[\{"containerPort":8080,"protocol":"TCP"\}\]/);
  assert.match(
    json,
    /"affinity":\{"nodeAffinity":\{"requiredDuringSchedulingIgnoredDuringExecution":\{"nodeSelectorTerms":\[\{"matchExpressions":\[\{"key":"zone","operator":"In","values":\["a"\]\}\]\}\]\}\}\}/,
  );
});

test('Role hash: a bad quantity is an error, not a throw', () => {
  const r = roleHash(pod('a').requests({ cpu: 'lots' }).build(), { file: 'f' });
  assert.equal(r.hash, undefined);
  assert.match(r.error!.message, /^f, spec: cannot compute the pod's role hash: invalid quantity/);
});

// --- single pods --------------------------------------------------------------------

test('Single pod: Workload pod-<name>-<hash>, one PodSet main of count 1, pod-group-pod-index label', () => {
  const r = podToWorkloads(pod('p1').uid('u1').queue('q').requests({ cpu: '2' }).label('app', 'x').build(), { where: { file: 'p.yaml' } });
  assert.deepEqual(r.errors, []);
  const [wl] = r.workloads;
  assert.equal(wl!.metadata.name, `pod-p1-${sha1Hex('Pod\n\np1\nu1').slice(0, 5)}`);
  assert.equal(wl!.metadata.namespace, 'ns');
  assert.equal(wl!.spec.queueName, 'q');
  assert.equal(wl!.metadata.labels?.[KueueLabel.JobUID], 'u1');
  assert.deepEqual(wl!.metadata.ownerReferences, [{ apiVersion: 'v1', kind: 'Pod', name: 'p1', uid: 'u1', controller: true }]);
  assert.equal(wl!.spec.podSets.length, 1);
  const ps = wl!.spec.podSets[0]!;
  assert.equal(ps.name, 'main');
  assert.equal(ps.count, 1);
  assert.deepEqual(ps.template.metadata?.labels, { [KueueLabel.QueueName]: 'q', app: 'x' });
  assert.deepEqual(ps.template.spec.containers[0]!.resources, { requests: { cpu: '2' } });
  assert.deepEqual(ps.topologyRequest, { podIndexLabel: KueueLabel.PodGroupPodIndex });
});

test('Single pod: TAS annotations on the pod give its topology request', () => {
  const r = podToWorkloads(pod('p').annotation(KueueAnnotation.PodSetRequiredTopology, 'rack').build(), { where: {} });
  assert.deepEqual(r.workloads[0]!.spec.podSets[0]!.topologyRequest, { required: 'rack', podIndexLabel: KueueLabel.PodGroupPodIndex });
});

test('Plain pods: bound pods, finished pods and deleting pods make no Workload', () => {
  const r = workloadsFromPods(
    docs(
      pod('bound').spec({ nodeName: 'n1' }),
      pod('done').phase('Succeeded'),
      pod('failed').phase('Failed'),
      pod('deleting').meta({ deletionTimestamp: '2025-01-01T00:00:00Z' }),
      pod('pending').phase('Pending'),
    ),
  );
  assert.deepEqual(r.errors, []);
  assert.deepEqual(
    r.workloads.map((w) => w.workload.spec.podSets.length),
    [1],
  );
  assert.match(r.workloads[0]!.workload.metadata.name, /^pod-pending-/);
  assert.equal(r.workloads[0]!.first, 4);
});

// --- pod groups ---------------------------------------------------------------------

test('Pod groups: one Workload named after the group, PodSets by role hash sorted by name, counts per role', () => {
  const driver = pod('driver').uid('u-d').queue('q').group('g1', 3).requests({ cpu: '1' });
  const w1 = pod('w1').uid('u-1').queue('q').group('g1', 3).requests({ cpu: '1', memory: '1Gi' });
  const other = pod('single').requests({ cpu: '1' });
  const w2 = pod('w2').uid('u-2').queue('q').group('g1', 3).requests({ cpu: '1', memory: '1Gi' });
  const r = workloadsFromPods(docs(other, w2, driver, w1));
  assert.deepEqual(r.errors, []);
  assert.equal(r.workloads.length, 2);
  assert.equal(r.workloads[0]!.workload.metadata.name.startsWith('pod-single-'), true);
  const g = r.workloads[1]!;
  assert.equal(g.first, 1);
  assert.deepEqual(g.source, { file: 'pods.yaml', document: 2 });
  const wl = g.workload;
  assert.equal(wl.metadata.name, 'g1');
  assert.equal(wl.metadata.namespace, 'ns');
  assert.equal(wl.spec.queueName, 'q');
  assert.equal(wl.metadata.annotations?.[IS_GROUP_WORKLOAD_ANNOTATION], 'true');
  assert.equal(wl.metadata.labels, undefined);
  assert.deepEqual(
    wl.spec.podSets.map((ps) => [ps.name, ps.count]),
    [
      ['4ebdd4a6', 2],
      ['dc85db45', 1],
    ],
  );
  assert.deepEqual(wl.spec.podSets[0]!.topologyRequest, { podIndexLabel: KueueLabel.PodGroupPodIndex });
  assert.deepEqual(
    wl.metadata.ownerReferences?.map((o) => [o.name, o.uid, o.controller]),
    [
      ['driver', 'u-d', false],
      ['w1', 'u-1', false],
      ['w2', 'u-2', false],
    ],
  );
});

test('Pod groups: the group name annotation wins over the label; groups are per namespace', () => {
  const a = pod('a', 'ns1').group('g', 2).annotation(KueueLabel.PodGroupName, 'h');
  const b = pod('b', 'ns1').group('h', 2);
  const c = pod('c', 'ns2').group('h', 1);
  const r = workloadsFromPods(docs(a, b, c));
  assert.deepEqual(r.errors, []);
  assert.deepEqual(
    r.workloads.map((w) => [w.workload.metadata.namespace, w.workload.metadata.name, w.workload.metadata.ownerReferences?.length]),
    [
      ['ns1', 'h', 2],
      ['ns2', 'h', 1],
    ],
  );
});

test('Pod groups: total count disagreement is an error naming both pods (Kueue message)', () => {
  const r = workloadsFromPods(docs(pod('a').group('g', 2), pod('b').group('g', 3)));
  assert.equal(r.workloads.length, 0);
  assert.deepEqual(
    r.errors.map((e) => e.message),
    [
      `pods.yaml, document 2, Pod/ns/b, metadata.annotations["kueue.x-k8s.io/pod-group-total-count"]: ` +
        `pods 'a' and 'b' has different 'kueue.x-k8s.io/pod-group-total-count' values: 2!=3`,
    ],
  );
});

test('Pod groups: queue name disagreement is an error (Kueue message)', () => {
  const r = workloadsFromPods(docs(pod('a').group('g', 2).queue('q1'), pod('b').group('g', 2).queue('q2')));
  assert.equal(r.workloads.length, 0);
  assert.deepEqual(
    r.errors.map((e) => e.detail),
    [`pods 'a' and 'b' has different queue names: q1!=q2`],
  );
  assert.equal(r.errors[0]!.where.field, 'metadata.labels["kueue.x-k8s.io/queue-name"]');
});

test('Pod groups: missing or invalid total count is an error (webhook messages); the group is not built', () => {
  const both = `both the 'kueue.x-k8s.io/pod-group-total-count' annotation and the 'kueue.x-k8s.io/pod-group-name' label should be set`;
  const cases: [PodBuilder[], [string, string][]][] = [
    [[pod('a').group('g')], [[both, 'metadata.annotations["kueue.x-k8s.io/pod-group-total-count"]']]],
    [[pod('a').annotation(PodGroupAnnotation.TotalCount, '2')], [[both, 'metadata.labels["kueue.x-k8s.io/pod-group-name"]']]],
    [
      [pod('a').group('g', 0)],
      [
        [
          `incorrect annotation value 'kueue.x-k8s.io/pod-group-total-count=0': group total count should be greater than zero`,
          'metadata.annotations["kueue.x-k8s.io/pod-group-total-count"]',
        ],
      ],
    ],
    [
      [pod('a').group('g', 'x'), pod('b').group('g', 1)],
      [
        [
          `incorrect annotation value 'kueue.x-k8s.io/pod-group-total-count=x': group total count should be greater than zero`,
          'metadata.annotations["kueue.x-k8s.io/pod-group-total-count"]',
        ],
      ],
    ],
    [[pod('a').group('Bad_Name', 1)], [[/must be a valid object name/.source, 'metadata.labels["kueue.x-k8s.io/pod-group-name"]']]],
  ];
  for (const [pods, expected] of cases) {
    const r = workloadsFromPods(docs(...pods));
    assert.equal(r.workloads.length, 0);
    assert.equal(r.errors.length, expected.length);
    r.errors.forEach((e, i) => {
      assert.ok(e.detail === expected[i]![0] || new RegExp(expected[i]![0]).test(e.detail), e.detail);
      assert.equal(e.where.field, expected[i]![1]);
      assert.equal(e.where.object, 'Pod/ns/a');
    });
  }
});

test('Pod groups: fewer pods than the total count -> no Workload, Kueue message naming the pods', () => {
  const r = workloadsFromPods(docs(pod('a').group('g', 3), pod('b').group('g', 3), pod('c').group('g', 3).spec({ nodeName: 'n1' })));
  assert.equal(r.workloads.length, 0);
  assert.equal(r.errors.length, 1);
  assert.match(
    r.errors[0]!.detail,
    /^'g' group has fewer runnable pods than expected: 2 of kueue.x-k8s.io\/pod-group-total-count=3 pending \(a, b\)/,
  );
});

test('Pod groups: more pods than the total count -> the excess is dropped in Kueue order', () => {
  const gated = { schedulingGates: [{ name: KueueSchedulingGate.Admission }] };
  const r = workloadsFromPods(
    docs(
      pod('a').group('g', 2).spec(gated).meta({ creationTimestamp: '2025-01-01T00:00:03Z' }),
      pod('b').group('g', 2).spec(gated).meta({ creationTimestamp: '2025-01-01T00:00:01Z' }),
      pod('c').group('g', 2).spec(gated).meta({ creationTimestamp: '2025-01-01T00:00:02Z' }),
      pod('d')
        .group('g', 2)
        .spec(gated)
        .meta({ finalizers: [MANAGED_POD_FINALIZER], creationTimestamp: '2025-01-01T00:00:09Z' }),
    ),
  );
  assert.deepEqual(r.errors, []);
  const wl = r.workloads[0]!.workload;
  assert.deepEqual(
    wl.spec.podSets.map((ps) => ps.count),
    [2],
  );
  assert.deepEqual(
    wl.metadata.ownerReferences?.map((o) => o.name),
    ['b', 'd'],
  );
});

test('Pod groups: fast admission builds from the first pod with count = total count', () => {
  const r = workloadsFromPods(docs(pod('a').group('g', 4).annotation(PodGroupAnnotation.FastAdmission, 'true').requests({ cpu: '1' })));
  assert.deepEqual(r.errors, []);
  assert.deepEqual(
    r.workloads[0]!.workload.spec.podSets.map((ps) => [ps.name, ps.count]),
    [['dc85db45', 4]],
  );
});

test('Pod groups: more than 18 roles is an error', () => {
  const pods = Array.from({ length: 19 }, (_, i) =>
    pod(`p${i}`)
      .group('g', 19)
      .requests({ cpu: `${i + 1}` }),
  );
  const r = workloadsFromPods(docs(...pods));
  assert.equal(r.workloads.length, 0);
  assert.deepEqual(
    r.errors.map((e) => e.detail),
    [`pod group can't include more than 18 roles`],
  );
});

test('Pod groups: a group whose pods are all bound or finished makes nothing and is no error', () => {
  const r = workloadsFromPods(docs(pod('a').group('g', 2).spec({ nodeName: 'n' }), pod('b').group('g', 2).phase('Succeeded')));
  assert.deepEqual(r, { workloads: [], errors: [] });
});

test("Pod groups: the pods' kueue.x-k8s.io/priority-class label names the Workload's priority class, as for Jobs", () => {
  const a = pod('a').uid('u-a').queue('q').group('g', 2).label(KueueLabel.PriorityClass, 'high');
  const b = pod('b').uid('u-b').queue('q').group('g', 2).label(KueueLabel.PriorityClass, 'high');
  const r = workloadsFromPods(docs(a, b));
  assert.deepEqual(r.errors, []);
  assert.deepEqual(r.workloads[0]!.workload.spec.priorityClassRef, {
    group: 'kueue.x-k8s.io',
    kind: 'WorkloadPriorityClass',
    name: 'high',
  });
});

test('Pod groups: a pod-group-pod-index that is not an unsigned integer below the total count makes the group invalid', () => {
  for (const bad of ['3', '-1', 'x', '01', '1.0']) {
    const r = workloadsFromPods(
      docs(
        pod('a').group('g', 3).label('kueue.x-k8s.io/pod-group-pod-index', '0'),
        pod('b').group('g', 3).label('kueue.x-k8s.io/pod-group-pod-index', bad),
        pod('c').group('g', 3),
      ),
    );
    assert.equal(r.workloads.length, 0, bad);
    assert.equal(r.errors.length, 1, bad);
    assert.equal(r.errors[0]!.where.field, 'metadata.labels["kueue.x-k8s.io/pod-group-pod-index"]');
    assert.equal(
      r.errors[0]!.detail,
      `Invalid value: ${JSON.stringify(bad)}: the pod index of group 'g' must be an unsigned integer below its kueue.x-k8s.io/pod-group-total-count (3)`,
    );
  }
  const ok = workloadsFromPods(
    docs(
      pod('a').group('g', 2).label('kueue.x-k8s.io/pod-group-pod-index', '1'),
      pod('b').group('g', 2).label('kueue.x-k8s.io/pod-group-pod-index', '0'),
    ),
  );
  assert.deepEqual(ok.errors, []);
  assert.equal(ok.workloads.length, 1);
});
