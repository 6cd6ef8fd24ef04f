import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { InputError, Where } from './errors.ts';
import { HOSTNAME_LABEL, KueueAnnotation } from './keys.ts';
import { parseManifests } from './manifest.ts';
import type { KObject, PodSetTopologyRequest, Workload } from './objects.ts';
import { knownKinds, normalizeWorkload, parseObject, validateObject } from './schemas.ts';

// ---------------------------------------------------------------------------------------
// Fixture builders
// ---------------------------------------------------------------------------------------

const V1B2 = 'kueue.x-k8s.io/v1beta2';
const V1B1 = 'kueue.x-k8s.io/v1beta1';
const BLOCK = 'cloud.com/block';
const RACK = 'cloud.com/rack';

/** Any object; `set('spec.levels', [...])` writes at a dotted path. */
class ObjectBuilder {
  protected o: Record<string, unknown>;
  constructor(apiVersion: string, kind: string, name: string, namespace?: string) {
    this.o = { apiVersion, kind, metadata: namespace ? { name, namespace } : { name } };
  }
  set(path: string, value: unknown): this {
    const keys = path.split('.');
    let at = this.o;
    for (const k of keys.slice(0, -1)) at = (at[k] ??= {}) as Record<string, unknown>;
    at[keys[keys.length - 1]] = value;
    return this;
  }
  get(): KObject {
    return structuredClone(this.o) as unknown as KObject;
  }
}

const container = (requests?: Record<string, string | number>) => (requests ? { name: 'c', resources: { requests } } : { name: 'c' });
const template = (requests?: Record<string, string | number>, annotations?: Record<string, string>) => ({
  ...(annotations ? { metadata: { annotations } } : {}),
  spec: { containers: [container(requests)] },
});

const node = (name: string) => new ObjectBuilder('v1', 'Node', name);
const pod = (name: string) => new ObjectBuilder('v1', 'Pod', name, 'ns').set('spec', template().spec);
const topology = (...levels: string[]) =>
  new ObjectBuilder(V1B2, 'Topology', 'default').set(
    'spec.levels',
    levels.map((nodeLabel) => ({ nodeLabel })),
  );
const flavor = (name = 'tas') => new ObjectBuilder(V1B2, 'ResourceFlavor', name);

class PodSetBuilder {
  private ps: Record<string, unknown>;
  constructor(name?: string) {
    this.ps = { ...(name !== undefined ? { name } : {}), count: 1, template: template({ cpu: '1' }) };
  }
  count(n: unknown): this {
    this.ps.count = n;
    return this;
  }
  minCount(n: number): this {
    this.ps.minCount = n;
    return this;
  }
  without(field: string): this {
    delete this.ps[field];
    return this;
  }
  request(r: PodSetTopologyRequest): this {
    this.ps.topologyRequest = r;
    return this;
  }
  get(): Record<string, unknown> {
    return this.ps;
  }
}
const podSet = (name?: string) => new PodSetBuilder(name);
const workload = (...podSets: PodSetBuilder[]) =>
  new ObjectBuilder(V1B2, 'Workload', 'w', 'ns').set(
    'spec.podSets',
    podSets.map((p) => p.get()),
  );

const WHERE: Where = { file: 'm.yaml', document: 2, line: 5 };
const check = (b: ObjectBuilder | KObject) => validateObject(b instanceof ObjectBuilder ? b.get() : b, WHERE);
const parse = (b: ObjectBuilder) => parseObject(b.get(), WHERE);
const fields = (errors: InputError[]) => errors.map((e) => e.where.field);

function only(errors: InputError[], field: string, pattern: RegExp): InputError {
  assert.equal(errors.length, 1, errors.map((e) => e.message).join('\n'));
  assert.equal(errors[0].where.field, field);
  assert.match(errors[0].detail, pattern);
  return errors[0];
}

// ---------------------------------------------------------------------------------------

describe('registry', () => {
  test('knownKinds lists every accepted apiVersion and kind', () => {
    const kinds = knownKinds().map((k) => `${k.apiVersion} ${k.kind}`);
    for (const k of [
      'v1 Node',
      'v1 Pod',
      `${V1B2} Topology`,
      `${V1B1} Topology`,
      `${V1B2} ResourceFlavor`,
      `${V1B1} ResourceFlavor`,
      `${V1B2} Workload`,
      `${V1B1} Workload`,
      'batch/v1 Job',
      'jobset.x-k8s.io/v1alpha2 JobSet',
      'leaderworkerset.x-k8s.io/v1 LeaderWorkerSet',
    ]) {
      assert.ok(kinds.includes(k), k);
    }
  });

  test('unknown kind: the error lists what is accepted', () => {
    const e = only(check(new ObjectBuilder('x/v1', 'Foo', 'f')), 'kind', /^unknown kind "Foo" \(apiVersion "x\/v1"\); accepted: /);
    assert.match(e.detail, /Node \(v1\)/);
    assert.match(e.detail, /Topology \(kueue\.x-k8s\.io\/v1beta2, kueue\.x-k8s\.io\/v1beta1\)/);
    assert.match(e.detail, /JobSet \(jobset\.x-k8s\.io\/v1alpha2\)/);
    assert.equal(e.message.split(': ')[0], 'm.yaml:5, document 2, Foo/f, kind');
  });

  test('known kind with a wrong apiVersion: the error names the accepted versions', () => {
    only(
      check(new ObjectBuilder('kueue.x-k8s.io/v1alpha1', 'Topology', 't')),
      'apiVersion',
      /^Topology is not accepted with apiVersion "kueue.x-k8s.io\/v1alpha1"; accepted: kueue.x-k8s.io\/v1beta2, kueue.x-k8s.io\/v1beta1$/,
    );
    only(check(new ObjectBuilder('batch/v2', 'Job', 'j')), 'apiVersion', /accepted: batch\/v1, batch\.volcano\.sh\/v1alpha1$/);
  });

  test('zod issues become plain messages with Kubernetes-style field paths', () => {
    const errors = check(topology(BLOCK).set('spec.levels', [{ nodeLabel: 7 }, {}]));
    assert.deepEqual(
      errors.map((e) => `${e.where.field}: ${e.detail}`),
      ['spec.levels[0].nodeLabel: must be a string, got number 7', 'spec.levels[1].nodeLabel: is required'],
    );
    const e = check(node('n').set('metadata.labels', { [KueueAnnotation.PodSetSliceSize]: 'a b' }))[0];
    assert.equal(e.where.field, `metadata.labels["${KueueAnnotation.PodSetSliceSize}"]`);
  });

  test('where.field (a List item) prefixes every field path', () => {
    const errors = validateObject(topology('Bad Key').get(), { ...WHERE, field: 'items[3]' });
    assert.deepEqual(fields(errors), ['items[3].spec.levels[0].nodeLabel']);
  });

  test('the object is named even when where does not name it', () => {
    assert.equal(validateObject(topology().get(), {})[0].where.object, 'Topology/default');
  });

  test('unknown fields survive parsing (loose schemas)', () => {
    const obj = topology(BLOCK)
      .set('spec.extra', { a: [1] })
      .set('status', { x: 1 })
      .set('metadata.labels', { a: 'b' })
      .get();
    const { object, errors } = parseObject(obj, WHERE);
    assert.deepEqual(errors, []);
    assert.deepEqual(object, obj);
  });

  test('null fields count as unset, as in Kubernetes', () => {
    const obj = node('n').set('metadata.creationTimestamp', null).set('spec', null).set('status.capacity', null).get();
    assert.deepEqual(check(obj), []);
  });

  test('the input object is not modified', () => {
    // Defaults (name, count) and quantity strings are applied to the output only.
    const obj = workload(podSet().without('count'))
      .set('spec.podSets.0.template', template({ cpu: 2 }))
      .get();
    const copy = structuredClone(obj);
    const { object } = parseObject(obj, WHERE);
    assert.deepEqual(obj, copy);
    assert.deepEqual((object as Workload).spec.podSets[0].template.spec.containers[0].resources?.requests, { cpu: '2' });
  });

  test('object names are DNS subdomains and namespaces DNS labels', () => {
    only(check(node('Node_1')), 'metadata.name', /"Node_1" is not a valid name/);
    only(check(new ObjectBuilder('v1', 'Pod', 'p', 'Team.A').set('spec', template().spec)), 'metadata.namespace', /not a valid name/);
  });

  test('label keys and values in metadata.labels and annotation keys are valid', () => {
    assert.deepEqual(
      fields(
        check(
          node('n')
            .set('metadata.labels', { 'ok/key': 'bad value', '-bad': 'ok' })
            .set('metadata.annotations', { 'a b': 'any value at all' }),
        ),
      ),
      ['metadata.labels["ok/key"]', 'metadata.labels["-bad"]', 'metadata.annotations["a b"]'],
    );
  });
});

describe('Node', () => {
  test('Node: allocatable and capacity quantities parse (message names the resource field)', () => {
    const errors = check(
      node('n1').set('status', {
        allocatable: { cpu: '4', memory: '16Gx', 'nvidia.com/gpu': -1 },
        capacity: { pods: true, cpu: '1e3' },
      }),
    );
    assert.deepEqual(
      errors.map((e) => `${e.where.field}: ${e.detail}`),
      [
        `status.allocatable.memory: Invalid value: "16Gx": quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'`,
        'status.allocatable["nvidia.com/gpu"]: Invalid value: -1: must be greater than or equal to 0',
        'status.capacity.pods: must be a quantity such as "4", "500m" or "16Gi", got boolean true',
      ],
    );
  });

  test('Node: quantities beyond the exact range of a number are refused', () => {
    only(check(node('n').set('status.allocatable', { memory: '100Ei' })), 'status.allocatable.memory', /beyond the exact range/);
  });

  test('Node: YAML numbers are accepted as quantities and come out as strings', () => {
    const { object, errors } = parse(node('n').set('status.allocatable', { cpu: 4, memory: '16Gi', pods: 110 }));
    assert.deepEqual(errors, []);
    assert.deepEqual((object as unknown as { status: unknown }).status, { allocatable: { cpu: '4', memory: '16Gi', pods: '110' } });
  });

  test('Node: taint effects are NoSchedule, PreferNoSchedule or NoExecute', () => {
    const taints = ['NoSchedule', 'PreferNoSchedule', 'NoExecute'].map((effect, i) => ({ key: `k${i}`, effect }));
    assert.deepEqual(check(node('n').set('spec.taints', taints)), []);
    only(
      check(node('n').set('spec.taints', [{ key: 'gpu', effect: 'NoScheduling' }])),
      'spec.taints[0].effect',
      /^must be one of "NoSchedule", "PreferNoSchedule", "NoExecute", got the string "NoScheduling"$/,
    );
    only(check(node('n').set('spec.taints', [{ key: 'gpu' }])), 'spec.taints[0].effect', /is required/);
  });
});

describe('Pod and pod templates', () => {
  test('Pod: container resource quantities parse', () => {
    const p = pod('p').set('spec.containers', [{ name: 'a', resources: { requests: { cpu: '500m' }, limits: { memory: 'lots' } } }]);
    only(check(p), 'spec.containers[0].resources.limits.memory', /Invalid value: "lots"/);
    const init = pod('p').set('spec.initContainers', [{ name: 'i', resources: { requests: { cpu: '-1' } } }]);
    only(check(init), 'spec.initContainers[0].resources.requests.cpu', /greater than or equal to 0/);
    only(check(pod('p').set('spec.overhead', { cpu: 'x' })), 'spec.overhead.cpu', /Invalid value: "x"/);
  });

  test('Pod: a pod has at least one container', () => {
    only(check(pod('p').set('spec.containers', [])), 'spec.containers', /^a pod needs at least one container$/);
    only(check(new ObjectBuilder('v1', 'Pod', 'p', 'ns').set('spec', {})), 'spec.containers', /is required/);
  });

  test('Pod: tolerations and node affinity have their Kubernetes shape', () => {
    const p = pod('p')
      .set('spec.tolerations', [{ key: 'a', operator: 'Like', effect: '' }])
      .set('spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms', [
        { matchExpressions: [{ key: 'k', operator: 'Near' }] },
      ]);
    assert.deepEqual(fields(check(p)), [
      'spec.tolerations[0].operator',
      'spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].operator',
    ]);
  });

  test('pod templates of Jobs, JobSets, LWS and Workloads follow the same rules', () => {
    const bad = { spec: { containers: [{ name: 'c', resources: { requests: { cpu: 'x' } } }] } };
    const cases: [ObjectBuilder, string][] = [
      [
        new ObjectBuilder('batch/v1', 'Job', 'j', 'ns').set('spec.template', bad),
        'spec.template.spec.containers[0].resources.requests.cpu',
      ],
      [
        new ObjectBuilder('jobset.x-k8s.io/v1alpha2', 'JobSet', 'js', 'ns').set('spec.replicatedJobs', [
          { name: 'w', template: { spec: { template: bad } } },
        ]),
        'spec.replicatedJobs[0].template.spec.template.spec.containers[0].resources.requests.cpu',
      ],
      [
        new ObjectBuilder('leaderworkerset.x-k8s.io/v1', 'LeaderWorkerSet', 'l', 'ns').set('spec.leaderWorkerTemplate', {
          workerTemplate: bad,
        }),
        'spec.leaderWorkerTemplate.workerTemplate.spec.containers[0].resources.requests.cpu',
      ],
      [workload(podSet('main')).set('spec.podSets.0.template', bad), 'spec.podSets[0].template.spec.containers[0].resources.requests.cpu'],
    ];
    for (const [b, field] of cases) only(check(b), field, /Invalid value: "x"/);
  });
});

describe('Topology', () => {
  test('Topology: 1 to 16 levels (the peer allows 16; the KEP draft said 8)', () => {
    only(check(topology()), 'spec.levels', /^must have at least 1 item, got 0$/);
    const labels = Array.from({ length: 17 }, (_, i) => `x.com/l${i}`);
    only(check(topology(...labels)), 'spec.levels', /^must have at most 16 items, got 17$/);
    assert.deepEqual(check(topology(...labels.slice(0, 16))), []);
    only(check(new ObjectBuilder(V1B2, 'Topology', 't')), 'spec', /is required/);
  });

  test('Topology: each nodeLabel is a valid label key', () => {
    only(check(topology(BLOCK, 'Rack!')), 'spec.levels[1].nodeLabel', /"Rack!": not a valid label key/);
    only(check(topology('a'.repeat(64))), 'spec.levels[0].nodeLabel', /at most 63 characters/);
    only(check(topology(`${'a'.repeat(254)}/x`)), 'spec.levels[0].nodeLabel', /at most 253 characters/);
  });

  test('Topology: levels are unique', () => {
    only(check(topology(BLOCK, RACK, BLOCK)), 'spec.levels[2].nodeLabel', /already level 0 .*levels must be unique/);
  });

  test('Topology: kubernetes.io/hostname only as the last level', () => {
    assert.deepEqual(check(topology(BLOCK, RACK, HOSTNAME_LABEL)), []);
    only(
      check(topology(HOSTNAME_LABEL, RACK)),
      'spec.levels[0].nodeLabel',
      /^the kubernetes.io\/hostname label can only be used at the lowest level of topology$/,
    );
  });

  test('Topology: v1beta1 is accepted with the same rules', () => {
    const t = topology(BLOCK).get();
    t.apiVersion = V1B1;
    assert.deepEqual(check(t), []);
  });
});

describe('ResourceFlavor', () => {
  test('ResourceFlavor: topologyName requires at least one nodeLabels entry', () => {
    only(
      check(flavor().set('spec.topologyName', 'default')),
      'spec.nodeLabels',
      /^at least one nodeLabel is required when topology is set/,
    );
    only(check(flavor().set('spec', { topologyName: 'default', nodeLabels: {} })), 'spec.nodeLabels', /at least one nodeLabel/);
    assert.deepEqual(check(flavor().set('spec', { topologyName: 'default', nodeLabels: { 'cloud.com/pool': 'tas' } })), []);
  });

  test('ResourceFlavor: nodeLabels, nodeTaints and tolerations have at most 8 entries', () => {
    const nine = Array.from({ length: 9 }, (_, i) => i);
    const errors = check(
      flavor().set('spec', {
        nodeLabels: Object.fromEntries(nine.map((i) => [`k${i}`, 'v'])),
        nodeTaints: nine.map((i) => ({ key: `t${i}`, effect: 'NoSchedule' })),
        tolerations: nine.map((i) => ({ key: `t${i}`, operator: 'Exists' })),
      }),
    );
    assert.deepEqual(
      errors.map((e) => `${e.where.field}: ${e.detail}`),
      [
        'spec.nodeLabels: must have at most 8 entries, got 9',
        'spec.nodeTaints: must have at most 8 items, got 9',
        'spec.tolerations: must have at most 8 items, got 9',
      ],
    );
  });

  test('ResourceFlavor: nodeLabels keys and values are valid labels', () => {
    assert.deepEqual(fields(check(flavor().set('spec.nodeLabels', { 'Bad Key': 'v', good: 'bad value' }))), [
      'spec.nodeLabels["Bad Key"]',
      'spec.nodeLabels.good',
    ]);
  });

  test('ResourceFlavor: spec may be omitted (a default flavor)', () => {
    const { object, errors } = parse(flavor('default-flavor'));
    assert.deepEqual(errors, []);
    assert.deepEqual((object as unknown as { spec: unknown }).spec, {});
  });
});

describe('Workload', () => {
  test('Workload: 1 to 18 podSets', () => {
    only(check(workload()), 'spec.podSets', /at least 1 item, got 0/);
    const many = Array.from({ length: 19 }, (_, i) => podSet(`p${i}`));
    only(check(workload(...many)), 'spec.podSets', /at most 18 items, got 19/);
    assert.deepEqual(check(workload(...many.slice(0, 18))), []);
  });

  test('Workload: podSet names are lowercase DNS labels', () => {
    only(check(workload(podSet('Workers'))), 'spec.podSets[0].name', /"Workers" is not a valid name/);
    only(check(workload(podSet('a'.repeat(64)))), 'spec.podSets[0].name', /at most 63/);
  });

  test('Workload: podSet names are unique', () => {
    only(check(workload(podSet('a'), podSet('b'), podSet('a'))), 'spec.podSets[2].name', /already used by spec.podSets\[0\]/);
  });

  test('Workload: name defaults to "main" and count to 1', () => {
    const { object, errors } = parse(workload(podSet().without('count')));
    assert.deepEqual(errors, []);
    const ps = (object as Workload).spec.podSets[0];
    assert.equal(ps.name, 'main');
    assert.equal(ps.count, 1);
  });

  test('Workload: count >= 0', () => {
    assert.deepEqual(check(workload(podSet('a').count(0))), []);
    only(check(workload(podSet('a').count(-1))), 'spec.podSets[0].count', /^must be at least 0, got -1$/);
    only(check(workload(podSet('a').count(1.5))), 'spec.podSets[0].count', /^must be a whole number, got number 1.5$/);
    only(check(workload(podSet('a').count('4'))), 'spec.podSets[0].count', /must be a whole number, got the string "4"/);
  });

  test('Workload: minCount >= 1 and <= count', () => {
    assert.deepEqual(check(workload(podSet('a').count(4).minCount(2))), []);
    only(check(workload(podSet('a').count(4).minCount(0))), 'spec.podSets[0].minCount', /at least 1/);
    only(check(workload(podSet('a').count(4).minCount(5))), 'spec.podSets[0].minCount', /^minCount 5 must not exceed count 4$/);
  });

  test('Workload: at most one PodSet with minCount', () => {
    only(
      check(workload(podSet('a').count(4).minCount(2), podSet('b').count(4).minCount(2))),
      'spec.podSets[1].minCount',
      /only one PodSet may set minCount .*podSet "a" already does/,
    );
  });

  test('Workload: topologyRequest is checked by the topology-request rules', () => {
    const w = workload(
      podSet('leader').request({ required: RACK, podSetGroupName: 'g' }),
      podSet('workers')
        .count(8)
        .request({ required: RACK, podSetGroupName: 'g', podSetSliceRequiredTopology: HOSTNAME_LABEL, podSetSliceSize: 3 }),
    );
    only(
      check(w),
      'spec.podSets[1].topologyRequest.podSetSliceSize',
      /podSet "workers": podSetSliceSize 3 must evenly divide the PodSet count 8/,
    );
    only(
      check(workload(podSet('a').request({ required: 'not a key' }))),
      'spec.podSets[0].topologyRequest.required',
      /not a valid label key/,
    );
    only(
      check(workload(podSet('a').request({ podSetSliceSize: 'two' as unknown as number }))),
      'spec.podSets[0].topologyRequest.podSetSliceSize',
      /whole number/,
    );
  });

  test('Workload: status.admission.podSetAssignments names match podSets', () => {
    const base = () => workload(podSet('a'), podSet('b'));
    const admission = (...names: string[]) => ({ clusterQueue: 'cq', podSetAssignments: names.map((name) => ({ name, count: 1 })) });
    assert.deepEqual(check(base().set('status.admission', admission('a', 'b'))), []);
    assert.deepEqual(
      check(base().set('status.admission', admission('a', 'c', 'a'))).map((e) => `${e.where.field}: ${e.detail}`),
      [
        'status.admission.podSetAssignments[1].name: "c" is not a PodSet of this Workload; spec.podSets are "a", "b"',
        'status.admission.podSetAssignments[2].name: podSet "a" is assigned twice',
        'status.admission.podSetAssignments: no assignment for podSet "b": an admission assigns every PodSet',
      ],
    );
  });

  test('Workload: priorityClassRef needs priority (v1beta2)', () => {
    const ref = { group: 'kueue.x-k8s.io', kind: 'WorkloadPriorityClass', name: 'high' };
    only(check(workload(podSet('a')).set('spec.priorityClassRef', ref)), 'spec.priority', /required when priorityClassRef is set/);
    assert.deepEqual(check(workload(podSet('a')).set('spec.priorityClassRef', ref).set('spec.priority', 100)), []);
    only(
      check(
        workload(podSet('a'))
          .set('spec.priorityClassRef', { ...ref, kind: 'Class' })
          .set('spec.priority', 1),
      ),
      'spec.priorityClassRef.kind',
      /must be one of/,
    );
  });

  test('Workload: a v1beta2 topologyAssignment is written as slices', () => {
    const ta = (t: unknown) =>
      workload(podSet('a')).set('status.admission', { clusterQueue: 'cq', podSetAssignments: [{ name: 'a', topologyAssignment: t }] });
    const slices = {
      levels: [HOSTNAME_LABEL],
      slices: [{ domainCount: 1, valuesPerLevel: [{ universal: 'x1' }], podCounts: { universal: 1 } }],
    };
    assert.deepEqual(check(ta(slices)), []);
    only(
      check(ta({ levels: [HOSTNAME_LABEL], domains: [{ values: ['x1'], count: 1 }] })),
      'status.admission.podSetAssignments[0].topologyAssignment.slices',
      /is required: the domains form is kueue.x-k8s.io\/v1beta1/,
    );
  });
});

describe('Workload v1beta1', () => {
  const v1beta1 = () =>
    workload(podSet('main').count(2))
      .set('apiVersion', V1B1)
      .set('spec.priorityClassName', 'high')
      .set('spec.priorityClassSource', 'kueue.x-k8s.io/workloadpriorityclass')
      .set('spec.priority', 100)
      .set('status', {
        admission: {
          clusterQueue: 'cq',
          podSetAssignments: [
            { name: 'main', count: 2, topologyAssignment: { levels: [HOSTNAME_LABEL], domains: [{ values: ['x1'], count: 2 }] } },
          ],
        },
        accumulatedPastExexcutionTimeSeconds: 30,
      });

  test('v1beta1 Workloads are accepted and normalized to the v1beta2 shape', () => {
    const { object, errors } = parse(v1beta1());
    assert.deepEqual(errors, []);
    const w = object as Workload;
    assert.equal(w.apiVersion, V1B2);
    assert.deepEqual(w.spec.priorityClassRef, { group: 'kueue.x-k8s.io', kind: 'WorkloadPriorityClass', name: 'high' });
    assert.equal('priorityClassName' in w.spec, false);
    assert.equal('priorityClassSource' in w.spec, false);
    assert.equal(w.spec.priority, 100);
    // The domains form stays for placement/assignment-codec.ts decodeV1beta1.
    assert.deepEqual(w.status?.admission?.podSetAssignments[0].topologyAssignment, {
      levels: [HOSTNAME_LABEL],
      domains: [{ values: ['x1'], count: 2 }],
    });
    assert.equal(w.status?.accumulatedPastExecutionTimeSeconds, 30);
    assert.equal('accumulatedPastExexcutionTimeSeconds' in (w.status ?? {}), false);
  });

  test('v1beta1 priorityClassSource: pod PriorityClass, or none given', () => {
    for (const source of ['scheduling.k8s.io/priorityclass', '', undefined]) {
      const b = v1beta1().set('spec.priorityClassSource', source);
      const w = parse(b).object as Workload;
      assert.deepEqual(w.spec.priorityClassRef, { group: 'scheduling.k8s.io', kind: 'PriorityClass', name: 'high' }, String(source));
    }
    only(check(v1beta1().set('spec.priorityClassSource', 'x')), 'spec.priorityClassSource', /must be one of/);
  });

  test('v1beta1 Workloads follow the same PodSet rules', () => {
    only(check(v1beta1().set('spec.podSets.0.minCount', 3)), 'spec.podSets[0].minCount', /must not exceed count 2/);
  });

  test('normalizeWorkload leaves v1beta2 Workloads alone and does not modify its input', () => {
    const w2 = workload(podSet('a')).get() as Workload;
    assert.equal(normalizeWorkload(w2), w2);
    const w1 = v1beta1().get() as Workload;
    const copy = structuredClone(w1);
    normalizeWorkload(w1);
    assert.deepEqual(w1, copy);
  });
});

describe('Job, JobSet, LeaderWorkerSet (shapes for building Workloads)', () => {
  const job = () => new ObjectBuilder('batch/v1', 'Job', 'j', 'ns').set('spec.template', template({ cpu: '1' }));
  const jobSet = (...rjs: unknown[]) => new ObjectBuilder('jobset.x-k8s.io/v1alpha2', 'JobSet', 'js', 'ns').set('spec.replicatedJobs', rjs);
  const rj = (name: string, replicas: unknown = 1) => ({ name, replicas, template: { spec: { parallelism: 2, template: template() } } });
  const lws = () => new ObjectBuilder('leaderworkerset.x-k8s.io/v1', 'LeaderWorkerSet', 'l', 'ns');

  test('Job: parallelism and completions are whole numbers >= 0; a template is required', () => {
    assert.deepEqual(check(job().set('spec.parallelism', 4).set('spec.completions', 8).set('spec.completionMode', 'Indexed')), []);
    only(check(job().set('spec.parallelism', -1)), 'spec.parallelism', /at least 0/);
    only(check(job().set('spec.completions', 'all')), 'spec.completions', /whole number/);
    only(check(job().set('spec.completionMode', 'Ordered')), 'spec.completionMode', /"NonIndexed", "Indexed"/);
    only(check(new ObjectBuilder('batch/v1', 'Job', 'j', 'ns').set('spec', {})), 'spec.template', /is required/);
  });

  test('JobSet: replicatedJobs with unique DNS-label names, replicas >= 0 and a Job template', () => {
    assert.deepEqual(check(jobSet(rj('leader'), rj('workers', 4))), []);
    only(check(jobSet()), 'spec.replicatedJobs', /at least 1 item/);
    only(check(jobSet(rj('a'), rj('a'))), 'spec.replicatedJobs[1].name', /names must be unique/);
    only(check(jobSet(rj('a', -2))), 'spec.replicatedJobs[0].replicas', /at least 0/);
    only(check(jobSet({ name: 'a', template: { spec: {} } })), 'spec.replicatedJobs[0].template.spec.template', /is required/);
  });

  test('LeaderWorkerSet: leaderWorkerTemplate with size >= 1 and a worker template', () => {
    assert.deepEqual(
      check(lws().set('spec', { replicas: 2, leaderWorkerTemplate: { size: 4, leaderTemplate: template(), workerTemplate: template() } })),
      [],
    );
    only(
      check(lws().set('spec.leaderWorkerTemplate', { size: 0, workerTemplate: template() })),
      'spec.leaderWorkerTemplate.size',
      /at least 1/,
    );
    only(check(lws().set('spec.leaderWorkerTemplate', { size: 2 })), 'spec.leaderWorkerTemplate.workerTemplate', /is required/);
    only(check(lws().set('spec', {})), 'spec.leaderWorkerTemplate', /is required/);
  });

  test('template annotations are shape-checked only (TAS annotation rules run when the Workload is built)', () => {
    const annotated = job().set('spec.template', template({}, { [KueueAnnotation.PodSetSliceSize]: 'abc' }));
    assert.deepEqual(check(annotated), []);
    only(
      check(job().set('spec.template.metadata.annotations', { a: 1 })),
      'spec.template.metadata.annotations.a',
      /must be a string, got number 1/,
    );
  });
});

test('end to end: manifests in, errors naming file, document, object and field out', () => {
  const text = [
    `apiVersion: ${V1B2}\nkind: Topology\nmetadata: {name: default}\nspec:\n  levels:\n  - nodeLabel: ${HOSTNAME_LABEL}\n  - nodeLabel: ${RACK}\n`,
    'apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Node\n  metadata: {name: n1}\n  status: {allocatable: {cpu: 4x}}\n',
  ].join('---\n');
  const { objects, errors } = parseManifests(text, 'cluster.yaml');
  assert.deepEqual(errors, []);
  const messages = objects.flatMap((o) => validateObject(o.object, o.where)).map((e) => e.message);
  assert.deepEqual(messages, [
    'cluster.yaml:1, document 1, Topology/default, spec.levels[0].nodeLabel: the kubernetes.io/hostname label can only be used at the lowest level of topology',
    `cluster.yaml:12, document 2, Node/n1, items[0].status.allocatable.cpu: Invalid value: "4x": quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'`,
  ]);
});
