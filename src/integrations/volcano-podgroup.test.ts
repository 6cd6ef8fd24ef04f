import { test } from 'node:test';
import assert from 'node:assert/strict';
import { KueueLabel } from '../api/keys.ts';
import type { KObject, Pod, PodPhase, StringMap } from '../api/objects.ts';
import { VolcanoAnnotation } from '../api/volcano-objects.ts';
import { type SourcedObject, integrationFor, workloadsFromObjects } from './integration.ts';
import { roleHash } from './pod.ts';
import { GANG_MIN_AVAILABLE_ANNOTATION, VOLCANO_QUEUE_ANNOTATION } from './volcano-job.ts';
import { volcanoPodGroupIntegration, workloadsFromPodGroupsAndPods } from './volcano-podgroup.ts';
import { workloadNameForOwner } from './workload-name.ts';

const MODE = VolcanoAnnotation.NetworkTopologyMode;
const TIER = VolcanoAnnotation.NetworkTopologyHighestTier;
const GROUP = VolcanoAnnotation.PodGroupName;

// ---------------------------------------------------------------------------------------
// Fixtures: podGroup('pg').minMember(2).topology({...}).build(); vpod('p0').group('pg').cpu('2').build()
// ---------------------------------------------------------------------------------------

class PodGroupBuilder {
  private readonly obj: { apiVersion: string; kind: string; metadata: KObject['metadata']; spec: Record<string, unknown> };
  constructor(name: string) {
    this.obj = { apiVersion: 'scheduling.volcano.sh/v1beta1', kind: 'PodGroup', metadata: { name }, spec: {} };
  }
  minMember(n: number): this {
    this.obj.spec.minMember = n;
    return this;
  }
  topology(nt: unknown): this {
    this.obj.spec.networkTopology = nt;
    return this;
  }
  spec(s: Record<string, unknown>): this {
    Object.assign(this.obj.spec, s);
    return this;
  }
  meta(m: Partial<KObject['metadata']>): this {
    Object.assign(this.obj.metadata, m);
    return this;
  }
  build(): KObject {
    return structuredClone(this.obj) as KObject;
  }
}

class VPodBuilder {
  private readonly obj: Pod;
  constructor(name: string) {
    this.obj = { apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec: { containers: [{ name: 'c', resources: { requests: { cpu: '1' } } }] } };
  }
  group(g: string): this {
    return this.annotate({ [GROUP]: g });
  }
  annotate(a: StringMap): this {
    this.obj.metadata.annotations = { ...this.obj.metadata.annotations, ...a };
    return this;
  }
  label(l: StringMap): this {
    this.obj.metadata.labels = { ...this.obj.metadata.labels, ...l };
    return this;
  }
  cpu(q: string): this {
    this.obj.spec.containers[0]!.resources = { requests: { cpu: q } };
    return this;
  }
  meta(m: Partial<KObject['metadata']>): this {
    Object.assign(this.obj.metadata, m);
    return this;
  }
  on(node: string, phase: PodPhase = 'Running'): this {
    this.obj.spec.nodeName = node;
    this.obj.status = { phase };
    return this;
  }
  build(): KObject {
    return structuredClone(this.obj);
  }
}

const podGroup = (name: string) => new PodGroupBuilder(name);
const vpod = (name: string) => new VPodBuilder(name);

const docs = (...objects: (KObject | PodGroupBuilder | VPodBuilder)[]): SourcedObject[] =>
  objects.map((o, i) => ({
    object: o instanceof PodGroupBuilder || o instanceof VPodBuilder ? o.build() : o,
    where: { file: 'pg.yaml', document: i + 1 },
  }));

function run(...objects: (KObject | PodGroupBuilder | VPodBuilder)[]) {
  let r: ReturnType<typeof workloadsFromPodGroupsAndPods> | undefined;
  assert.doesNotThrow(() => {
    r = workloadsFromPodGroupsAndPods(docs(...objects));
  });
  return r!;
}

function ok(...objects: (KObject | PodGroupBuilder | VPodBuilder)[]) {
  const r = run(...objects);
  assert.deepEqual(r.errors.map((e) => e.message), []);
  return r;
}

const hashOf = (b: VPodBuilder) => roleHash(b.build() as Pod, {}).hash!;

// ---------------------------------------------------------------------------------------
// PodGroup grouping
// ---------------------------------------------------------------------------------------

test('PodGroup: pods naming a PodGroup by scheduling.k8s.io/group-name form one Workload podgroup-<name>-<hash>, owned by the PodGroup', () => {
  const r = ok(podGroup('pg').minMember(2).meta({ uid: 'pg-uid' }), vpod('p1').group('pg'), vpod('p0').group('pg'));
  assert.equal(r.workloads.length, 1);
  const { workload: wl, source, first } = r.workloads[0]!;
  assert.equal(wl.metadata.name, workloadNameForOwner({ kind: 'PodGroup', group: 'scheduling.volcano.sh', name: 'pg', uid: 'pg-uid' }));
  assert.match(wl.metadata.name, /^podgroup-pg-[0-9a-f]{5}$/);
  assert.deepEqual(wl.metadata.ownerReferences, [
    { apiVersion: 'scheduling.volcano.sh/v1beta1', kind: 'PodGroup', name: 'pg', uid: 'pg-uid', controller: true },
  ]);
  assert.deepEqual([source, first], [{ file: 'pg.yaml', document: 1 }, 0]);
  assert.deepEqual(wl.spec.podSets.map((ps) => [ps.name, ps.count]), [[hashOf(vpod('p0')), 2]]);
});

test('PodGroup: PodSets by role as pod.ts groups them: one per role hash, count per role, sorted by hash', () => {
  const small = vpod('a').group('pg');
  const big = vpod('b').group('pg').cpu('4');
  const r = ok(podGroup('pg').minMember(3), small, big, vpod('c').group('pg').cpu('4'));
  const expected = [
    [hashOf(small), 1],
    [hashOf(big), 2],
  ].sort((x, y) => (x[0]! < y[0]! ? -1 : 1));
  assert.deepEqual(r.workloads[0]!.workload.spec.podSets.map((ps) => [ps.name, ps.count]), expected);
});

test('PodGroup: networkTopology, minMember and queue -> Workload annotations', () => {
  const r = ok(
    podGroup('pg').minMember(2).topology({ mode: 'hard', highestTierAllowed: 1 }).spec({ queue: 'research' }),
    vpod('p0').group('pg'),
    vpod('p1').group('pg'),
  );
  assert.deepEqual(r.workloads[0]!.workload.metadata.annotations, {
    [MODE]: 'hard',
    [TIER]: '1',
    [GANG_MIN_AVAILABLE_ANNOTATION]: '2',
    [VOLCANO_QUEUE_ANNOTATION]: 'research',
  });
});

test('PodGroup: minMember unset -> gang minimum 0 (Volcano reads int32 omitempty as 0); no networkTopology -> no topology annotations', () => {
  const r = ok(podGroup('pg'), vpod('p0').group('pg'));
  assert.deepEqual(r.workloads[0]!.workload.metadata.annotations, { [GANG_MIN_AVAILABLE_ANNOTATION]: '0' });
});

test('PodGroup: members already bound count toward minMember; the Workload covers only pending pods', () => {
  const r = ok(
    podGroup('pg').minMember(3),
    vpod('run0').group('pg').on('n1'),
    vpod('p0').group('pg'),
    vpod('p1').group('pg'),
    vpod('dead').group('pg').on('n2', 'Failed'),
  );
  const wl = r.workloads[0]!.workload;
  assert.equal(wl.metadata.annotations?.[GANG_MIN_AVAILABLE_ANNOTATION], '2');
  assert.equal(wl.spec.podSets.reduce((n, ps) => n + ps.count, 0), 2);
});

test('PodGroup: a PodGroup with no pending pods in the input yields no Workload', () => {
  assert.deepEqual(ok(podGroup('pg').minMember(1)).workloads, []);
  assert.deepEqual(ok(podGroup('pg').minMember(1), vpod('p0').group('pg').on('n1')).workloads, []);
});

test('PodGroup: groups are per namespace; a PodGroup in another namespace does not collect the pods', () => {
  const r = run(podGroup('pg').meta({ namespace: 'a' }), vpod('p0').group('pg'));
  assert.deepEqual(r.workloads, []);
  assert.equal(r.errors.length, 1);
  assert.match(r.errors[0]!.message, /PodGroup default\/pg \(scheduling\.volcano\.sh\/v1beta1\) is not in the input/);
});

test('PodGroup: topology annotations on member pods are ignored (the PodGroup decides) and dropped from templates', () => {
  const r = ok(podGroup('pg'), vpod('p0').group('pg').annotate({ [MODE]: 'soft', [TIER]: '3' }));
  const wl = r.workloads[0]!.workload;
  assert.equal(wl.metadata.annotations?.[MODE], undefined);
  assert.deepEqual(wl.spec.podSets[0]!.template.metadata?.annotations, { [GROUP]: 'pg' });
});

test('PodGroup: spec.priorityClassName leaves the priority to the class; the Kueue queue-name label sets spec.queueName', () => {
  const r = ok(podGroup('pg').spec({ priorityClassName: 'high' }).meta({ labels: { [KueueLabel.QueueName]: 'lq' } }), vpod('p0').group('pg'));
  assert.equal(r.workloads[0]!.workload.spec.priority, undefined);
  assert.equal(r.workloads[0]!.workload.spec.queueName, 'lq');
});

// ---------------------------------------------------------------------------------------
// Pods with topology annotations and no PodGroup (spec §1.4)
// ---------------------------------------------------------------------------------------

test('Pods with network-topology annotations and no PodGroup: their own single-pod Workload with that topology', () => {
  const r = ok(vpod('solo').annotate({ [MODE]: 'Soft', [TIER]: '2', [VOLCANO_QUEUE_ANNOTATION]: 'q' }));
  const wl = r.workloads[0]!.workload;
  assert.match(wl.metadata.name, /^pod-solo-[0-9a-f]{5}$/);
  assert.deepEqual(
    Object.fromEntries(Object.entries(wl.metadata.annotations ?? {})),
    { [MODE]: 'soft', [TIER]: '2', [GANG_MIN_AVAILABLE_ANNOTATION]: '1', [VOLCANO_QUEUE_ANNOTATION]: 'q' },
  );
  assert.deepEqual(wl.spec.podSets[0]!.template.metadata?.annotations, { [VOLCANO_QUEUE_ANNOTATION]: 'q' });
  assert.deepEqual(r.warnings, []);
});

test('Pods with unreadable topology annotations: warnings (not errors), falling back as Volcano does', () => {
  const r = ok(vpod('solo').annotate({ [MODE]: 'strict', [TIER]: 'one' }));
  assert.deepEqual(
    Object.fromEntries(Object.entries(r.workloads[0]!.workload.metadata.annotations ?? {}).filter(([k]) => k.startsWith('volcano.sh/'))),
    { [MODE]: 'hard' },
  );
  assert.equal(r.warnings.length, 2);
  assert.match(r.warnings[0]!, /^pg\.yaml, document 1, Pod\/default\/solo: annotation volcano\.sh\/network-topology-mode="strict"/);
});

test('Plain pods and Kueue pod groups still go to the plain-Pods integration unchanged', () => {
  const kueue = (name: string) =>
    vpod(name).label({ [KueueLabel.PodGroupName]: 'kg' }).annotate({ 'kueue.x-k8s.io/pod-group-total-count': '2' });
  const r = ok(vpod('single'), kueue('k1'), podGroup('pg'), kueue('k0'), vpod('v0').group('pg'));
  assert.deepEqual(
    r.workloads.map((w) => [w.workload.metadata.name.replace(/-[0-9a-f]{5}$/, ''), w.first]),
    [
      ['pod-single', 0],
      ['kg', 1],
      ['podgroup-pg', 2],
    ],
  );
  assert.equal(r.workloads[0]!.workload.metadata.annotations, undefined);
});

// ---------------------------------------------------------------------------------------
// Bad input: errors returned (never thrown), naming file, document, object and field
// ---------------------------------------------------------------------------------------

test('PodGroup: pods naming a PodGroup missing from the input -> error at their group-name annotation', () => {
  const r = run(vpod('p0').group('ghost'), vpod('p1').group('ghost'));
  assert.deepEqual(r.workloads, []);
  assert.deepEqual(
    r.errors.map((e) => e.message),
    [
      'pg.yaml, document 1, Pod/default/p0, metadata.annotations["scheduling.k8s.io/group-name"]: PodGroup default/ghost ' +
        '(scheduling.volcano.sh/v1beta1) is not in the input, so the gang of p0, p1 is unknown; add the PodGroup or remove the annotation',
    ],
  );
});

test('PodGroup: minMember more than the pending and bound members -> error at spec.minMember', () => {
  const r = run(podGroup('pg').minMember(4), vpod('p0').group('pg'), vpod('r0').group('pg').on('n1'), vpod('p1').group('pg'));
  assert.deepEqual(r.workloads, []);
  assert.deepEqual(
    r.errors.map((e) => e.message),
    [
      'pg.yaml, document 1, PodGroup/default/pg, spec.minMember: minMember 4 cannot be met: the input has 2 pending member pods (p0, p1) ' +
        'and 1 already bound; add the missing pods or lower minMember',
    ],
  );
});

test("PodGroup: both highestTierAllowed and highestTierName -> Volcano's PodGroup message", () => {
  const r = run(podGroup('pg').topology({ highestTierAllowed: 1, highestTierName: 'x' }), vpod('p0').group('pg'));
  assert.deepEqual(
    r.errors.map((e) => e.message),
    [
      "pg.yaml, document 1, PodGroup/default/pg, spec.networkTopology: must not specify 'highestTierAllowed' and 'highestTierName' in networkTopology simultaneously.",
    ],
  );
});

test('PodGroup: subGroupPolicy is refused rather than ignored', () => {
  const r = run(podGroup('pg').spec({ subGroupPolicy: [{ name: 'dp', subGroupSize: 2 }] }), vpod('p0').group('pg'));
  assert.deepEqual(r.workloads, []);
  assert.equal(r.errors.length, 1);
  assert.match(r.errors[0]!.message, /^pg\.yaml, document 1, PodGroup\/default\/pg, spec\.subGroupPolicy: subGroupPolicy is not supported on a PodGroup yet/);
});

test('PodGroup: a pod in both a Volcano and a Kueue group, or in a Kueue group with Volcano topology, is refused', () => {
  const r = run(
    podGroup('pg'),
    vpod('both').group('pg').label({ [KueueLabel.PodGroupName]: 'kg' }),
    vpod('topo').annotate({ [MODE]: 'hard', 'kueue.x-k8s.io/pod-group-total-count': '1' }).label({ [KueueLabel.PodGroupName]: 'kg2' }),
  );
  assert.deepEqual(
    r.errors.map((e) => [e.where.document, e.where.field]),
    [
      [2, 'metadata.annotations["scheduling.k8s.io/group-name"]'],
      [3, 'metadata.annotations'],
    ],
  );
});

test('PodGroup: a duplicate PodGroup, a member pod without containers: errors, not exceptions', () => {
  const noSpec = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'x', annotations: { [GROUP]: 'pg' } } } as KObject;
  const r = run(podGroup('pg'), podGroup('pg'), noSpec);
  assert.deepEqual(
    r.errors.map((e) => [e.where.document, e.where.field]),
    [
      [2, 'metadata.name'],
      [3, 'spec.containers'],
    ],
  );
});

// ---------------------------------------------------------------------------------------
// Registry
// ---------------------------------------------------------------------------------------

test('Registry: Volcano kinds are registered; the PodGroup integration takes Pods too', () => {
  assert.equal(integrationFor({ apiVersion: 'scheduling.volcano.sh/v1beta1', kind: 'PodGroup' }), volcanoPodGroupIntegration);
  assert.equal(integrationFor({ apiVersion: 'v1', kind: 'Pod' }), volcanoPodGroupIntegration);
  assert.equal(integrationFor({ apiVersion: 'batch.volcano.sh/v1alpha1', kind: 'Job' })?.name, 'batch.volcano.sh/job');
  assert.equal(integrationFor({ apiVersion: 'training.volcano.sh/v1alpha1', kind: 'HyperJob' })?.name, 'training.volcano.sh/hyperjob');
});

test('Registry: a Volcano Job covers its PodGroup and pods; a HyperJob covers its child Jobs; Workloads in input order', () => {
  const owned = (kind: string, apiVersion: string) => ({ ownerReferences: [{ apiVersion, kind, name: 'parent', uid: 'p', controller: true }] });
  const job: KObject & { spec: unknown } = {
    apiVersion: 'batch.volcano.sh/v1alpha1',
    kind: 'Job',
    metadata: { name: 'parent' },
    spec: { tasks: [{ name: 'w', replicas: 2, template: { spec: { containers: [{ name: 'c' }] } } }] },
  };
  const childJob = { ...structuredClone(job), metadata: { name: 'child', ...owned('HyperJob', 'training.volcano.sh/v1alpha1') } } as KObject;
  const hj = {
    apiVersion: 'training.volcano.sh/v1alpha1',
    kind: 'HyperJob',
    metadata: { name: 'hj' },
    spec: { replicatedJobs: [{ name: 'r', replicas: 2, templateSpec: structuredClone(job.spec) }] },
  } as KObject;
  const r = workloadsFromObjects(
    docs(
      vpod('single'),
      job,
      podGroup('parent-pg').meta(owned('Job', 'batch.volcano.sh/v1alpha1')),
      vpod('parent-w-0').group('parent-pg').meta(owned('Job', 'batch.volcano.sh/v1alpha1')),
      hj,
      childJob,
      podGroup('own'),
      vpod('own-0').group('own'),
    ),
  );
  assert.deepEqual(r.errors.map((e) => e.message), []);
  assert.deepEqual(
    r.workloads.map((w) => [w.workload.metadata.name.replace(/-[0-9a-f]{5}$/, ''), w.source.document]),
    [
      ['pod-single', 1],
      ['job-parent', 2],
      ['hyperjob-hj', 5],
      ['podgroup-own', 7],
    ],
  );
});
