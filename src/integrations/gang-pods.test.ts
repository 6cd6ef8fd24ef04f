import { test } from 'node:test';
import assert from 'node:assert/strict';
import { GangAnnotation, GangApiVersion, GangLabel, GangWorkloadKey } from '../api/gang.ts';
import { KueueLabel } from '../api/keys.ts';
import type { KObject, Pod } from '../api/objects.ts';
import { GangWorkloadAnnotation, workloadsFromGangsAndPods } from './gang-pods.ts';
import { type SourcedObject, workloadsFromObjects } from './integration.ts';
import { integrationFor } from './registry.ts';
import { roleHash, workloadsFromPods } from './pod.ts';
import { IS_GROUP_WORKLOAD_ANNOTATION } from './workload-name.ts';

// --- fixture builders ---------------------------------------------------------------

class PodBuilder {
  private readonly p: Pod;
  constructor(name: string, namespace: string) {
    this.p = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name, namespace },
      spec: { containers: [{ name: 'c', image: 'pause', resources: { requests: { cpu: '1' } } }] },
    };
  }
  label(k: string, v: string): this {
    this.p.metadata.labels = { ...this.p.metadata.labels, [k]: v };
    return this;
  }
  annotation(k: string, v: string): this {
    this.p.metadata.annotations = { ...this.p.metadata.annotations, [k]: v };
    return this;
  }
  /** Annotation way: gang name and min-available. */
  gang(name: string, min?: number): this {
    this.annotation(GangAnnotation.Name, name);
    return min === undefined ? this : this.annotation(GangAnnotation.MinAvailable, String(min));
  }
  /** CRD way (Koordinator's label). */
  podGroup(name: string): this {
    return this.label(GangLabel.PodGroup, name);
  }
  queue(q: string): this {
    return this.label(KueueLabel.QueueName, q);
  }
  cpu(q: string): this {
    this.p.spec.containers[0]!.resources = { requests: { cpu: q } };
    return this;
  }
  on(node: string): this {
    this.p.spec.nodeName = node;
    this.p.status = { phase: 'Running' };
    return this;
  }
  build(): Pod {
    return structuredClone(this.p);
  }
}
const pod = (name: string, namespace = 'ns') => new PodBuilder(name, namespace);

const podGroup = (
  name: string,
  spec: Record<string, unknown>,
  annotations?: Record<string, string>,
  apiVersion: string = GangApiVersion.Koordinator,
): KObject =>
  ({ apiVersion, kind: 'PodGroup', metadata: { name, namespace: 'ns', ...(annotations ? { annotations } : {}) }, spec }) as KObject;

const docs = (...objects: (PodBuilder | KObject)[]): SourcedObject[] =>
  objects.map((o, i) => ({ object: o instanceof PodBuilder ? o.build() : o, where: { file: 'gang.yaml', document: i + 1 } }));

const names = (r: { workloads: { workload: { metadata: { name: string; namespace?: string } } }[] }) =>
  r.workloads.map((w) => `${w.workload.metadata.namespace}/${w.workload.metadata.name}`);

const gangAnnotations = (r: ReturnType<typeof workloadsFromGangsAndPods>, i = 0) =>
  Object.fromEntries(Object.entries(r.workloads[i]!.workload.metadata.annotations ?? {}).filter(([k]) => k.startsWith('gang.')));

// --- rules --------------------------------------------------------------------------

test('Annotation gang: its pods become one Workload named after the gang, with the gang annotations', () => {
  const r = workloadsFromGangsAndPods(
    docs(
      pod('w-1').gang('train', 2).annotation(GangAnnotation.Mode, 'NonStrict').annotation(GangAnnotation.WaitingTime, '90s').queue('q'),
      pod('w-0').gang('train').queue('q'),
    ),
  );
  assert.deepEqual(r.errors, []);
  assert.deepEqual(r.notes, []);
  assert.equal(r.workloads.length, 1);
  const { workload: wl, source, first } = r.workloads[0]!;
  assert.deepEqual([wl.apiVersion, wl.metadata.namespace, wl.metadata.name], ['kueue.x-k8s.io/v1beta2', 'ns', 'train']);
  assert.deepEqual(wl.metadata.annotations, {
    [GangAnnotation.Name]: 'train',
    [GangAnnotation.MinAvailable]: '2',
    [GangAnnotation.TotalNumber]: '2',
    [GangAnnotation.Mode]: 'NonStrict',
    [GangAnnotation.WaitingTime]: '90s',
    [GangAnnotation.Groups]: '["ns/train"]',
    [GangAnnotation.MatchPolicy]: 'once-satisfied',
    [IS_GROUP_WORKLOAD_ANNOTATION]: 'true',
    [GangWorkloadAnnotation.Source]: 'annotations',
  });
  assert.equal(wl.spec.queueName, 'q');
  assert.equal(wl.spec.priority, 0);
  assert.deepEqual(
    wl.spec.podSets.map((ps) => [ps.name, ps.count]),
    [['dc85db45', 2]],
  );
  assert.deepEqual(
    wl.metadata.ownerReferences?.map((o) => [o.name, o.controller]),
    [
      ['w-0', false],
      ['w-1', false],
    ],
  );
  assert.deepEqual(wl.metadata.finalizers, ['kueue.x-k8s.io/resource-in-use']);
  assert.deepEqual([source.document, first], [1, 0]);
});

test("PodGroup-label gang: configured from the PodGroup only, the pods' gang annotations are ignored", () => {
  const r = workloadsFromGangsAndPods(
    docs(
      podGroup(
        'pg',
        { minMember: 3, scheduleTimeoutSeconds: 30 },
        { [GangAnnotation.TotalNumber]: '4', [GangAnnotation.Mode]: 'NonStrict' },
      ),
      pod('a').podGroup('pg').annotation(GangAnnotation.MinAvailable, '1').annotation(GangAnnotation.Mode, 'Strict'),
      pod('b').podGroup('pg'),
      pod('c').podGroup('pg'),
    ),
  );
  assert.deepEqual(r.errors, []);
  assert.deepEqual(names(r), ['ns/pg']);
  assert.deepEqual(gangAnnotations(r), {
    [GangAnnotation.Name]: 'pg',
    [GangAnnotation.MinAvailable]: '3',
    [GangAnnotation.TotalNumber]: '4',
    [GangAnnotation.Mode]: 'NonStrict',
    [GangAnnotation.WaitingTime]: '30s',
    [GangAnnotation.Groups]: '["ns/pg"]',
    [GangAnnotation.MatchPolicy]: 'once-satisfied',
  });
  assert.equal(r.workloads[0]!.workload.metadata.annotations?.[GangWorkloadAnnotation.Source], 'podgroup');
  assert.equal(r.workloads[0]!.workload.spec.podSets[0]!.count, 3);
  // gang.ts's warning that the pod's annotations are ignored reaches the notes.
  assert.deepEqual(r.notes, [
    'Pod/ns/a: annotations gang.scheduling.koordinator.sh/min-available, gang.scheduling.koordinator.sh/mode are ignored: ' +
      'label pod-group.scheduling.sigs.k8s.io="pg" makes PodGroup ns/pg alone configure the gang',
  ]);
});

test('scheduler-plugins PodGroup-label gang: configured from its PodGroup (waiting-and-running, 60 s default)', () => {
  const r = workloadsFromGangsAndPods(
    docs(
      podGroup('sp', { minMember: 2 }, undefined, GangApiVersion.SchedulerPlugins),
      pod('a').label(GangLabel.SchedulerPluginsPodGroup, 'sp'),
      pod('b').label(GangLabel.SchedulerPluginsPodGroup, 'sp'),
    ),
  );
  assert.deepEqual(r.errors, []);
  assert.deepEqual(names(r), ['ns/sp']);
  assert.equal(gangAnnotations(r)[GangAnnotation.MatchPolicy], 'waiting-and-running');
  assert.equal(gangAnnotations(r)[GangAnnotation.WaitingTime], '60s');
});

test('Roles by shape hash: one PodSet per role, count = its pods, sorted by hash, template from the first by name', () => {
  const r = workloadsFromGangsAndPods(
    docs(
      pod('worker-b').gang('g', 3).cpu('2'),
      pod('driver').gang('g').cpu('1').annotation('kueue.x-k8s.io/podset-required-topology', 'rack'),
      pod('worker-a').gang('g').cpu('2').annotation('marker', 'first-worker'),
    ),
  );
  assert.deepEqual(r.errors, []);
  const hash = (cpu: string) => roleHash(pod('x').cpu(cpu).build(), {}).hash!;
  const podSets = r.workloads[0]!.workload.spec.podSets;
  const expected: [string, number][] = [
    [hash('1'), 1],
    [hash('2'), 2],
  ];
  assert.deepEqual(
    podSets.map((ps) => [ps.name, ps.count]),
    expected.sort((a, b) => (a[0] < b[0] ? -1 : 1)),
  );
  const workers = podSets.find((ps) => ps.name === hash('2'))!;
  assert.equal(workers.template.metadata?.annotations?.marker, 'first-worker');
  // TAS annotations on the pod keep working on its PodSet.
  const driver = podSets.find((ps) => ps.name === hash('1'))!;
  assert.equal(driver.topologyRequest?.required, 'rack');
});

test('More than 18 roles: an error naming the gang', () => {
  const pods = Array.from({ length: 19 }, (_, i) =>
    pod(`p-${String(i).padStart(2, '0')}`)
      .gang('big', 19)
      .cpu(`${i + 1}`),
  );
  const r = workloadsFromGangsAndPods(docs(...pods));
  assert.equal(r.workloads.length, 0);
  assert.equal(r.errors.length, 1);
  assert.match(r.errors[0]!.message, /gang ns\/big has 19 roles .* at most 18 PodSets/);
});

test('Total-number caps members: the first by name are kept, a note names the rest', () => {
  const r = workloadsFromGangsAndPods(
    docs(pod('c').gang('g', 2).annotation(GangAnnotation.TotalNumber, '2'), pod('a').gang('g'), pod('b').gang('g')),
  );
  assert.deepEqual(r.errors, []);
  const wl = r.workloads[0]!.workload;
  assert.equal(wl.spec.podSets[0]!.count, 2);
  assert.deepEqual(
    wl.metadata.ownerReferences?.map((o) => o.name),
    ['a', 'b'],
  );
  assert.deepEqual(r.notes, [
    "gang ns/g has 3 pending pods, more than its gang.scheduling.koordinator.sh/total-number 2: the first 2 by name are its Workload's, ns/c left out",
  ]);
  // The Workload sits at the first kept pod in input order.
  assert.equal(r.workloads[0]!.first, 1);
});

test('Fewer pending pods than min-available: the Workload is still built, with the pods that exist', () => {
  const r = workloadsFromGangsAndPods(docs(pod('a').gang('g', 4)));
  assert.deepEqual(r.errors, []);
  assert.equal(r.workloads[0]!.workload.spec.podSets[0]!.count, 1);
  assert.equal(gangAnnotations(r)[GangAnnotation.MinAvailable], '4');
});

test("Once-satisfied: a bound pod in any gang of the group makes the group's pending pods ordinary pods", () => {
  const groups = JSON.stringify(['ns/a', 'ns/b']);
  const r = workloadsFromGangsAndPods(
    docs(
      pod('a-0').gang('a', 2).annotation(GangAnnotation.Groups, groups).on('n1'),
      pod('a-1').gang('a'),
      pod('b-0').gang('b', 1).annotation(GangAnnotation.Groups, groups),
      // Same group, but only-waiting ignores the once-satisfied flag.
      pod('c-0').gang('c', 1).annotation(GangAnnotation.Groups, groups).annotation(GangAnnotation.MatchPolicy, 'only-waiting'),
      // Its own group: unaffected.
      pod('d-0').gang('d', 1),
    ),
  );
  assert.deepEqual(r.errors, []);
  assert.deepEqual(
    r.workloads.map((w) => w.workload.metadata.name.replace(/-[0-9a-f]{5}$/, '')),
    ['pod-a-1', 'pod-b-0', 'c', 'd'],
  );
  const single = r.workloads[0]!.workload;
  assert.deepEqual(
    single.spec.podSets.map((ps) => [ps.name, ps.count]),
    [['main', 1]],
  );
  assert.equal(single.metadata.ownerReferences?.[0]?.controller, true);
  assert.equal(single.metadata.annotations?.[GangAnnotation.Name], undefined);
  assert.deepEqual(r.notes, [
    'gang ns/a is once-satisfied (pod ns/a-0 of its gang group [ns/a ns/b] is bound): its pending pods ns/a-1 are scheduled as ordinary pods',
    'gang ns/b is once-satisfied (pod ns/a-0 of its gang group [ns/a ns/b] is bound): its pending pods ns/b-0 are scheduled as ordinary pods',
  ]);
});

test('Waiting-and-running lowers the minimum by the bound members; only-waiting does not', () => {
  const r = workloadsFromGangsAndPods(
    docs(
      pod('w-0').gang('wr', 3).annotation(GangAnnotation.MatchPolicy, 'waiting-and-running').on('n1'),
      pod('w-1').gang('wr'),
      pod('w-2').gang('wr'),
      pod('o-0').gang('ow', 3).annotation(GangAnnotation.MatchPolicy, 'only-waiting').on('n1'),
      pod('o-1').gang('ow'),
    ),
  );
  assert.deepEqual(r.errors, []);
  assert.deepEqual(names(r), ['ns/wr', 'ns/ow']);
  assert.equal(gangAnnotations(r, 0)[GangAnnotation.MinAvailable], '2');
  assert.equal(r.workloads[0]!.workload.spec.podSets[0]!.count, 2);
  assert.equal(gangAnnotations(r, 1)[GangAnnotation.MinAvailable], '3');
});

test('Timed-out annotation carried: a member pod\'s gang.scheduling.koordinator.sh/timeout="true" goes on the Workload', () => {
  const r = workloadsFromGangsAndPods(docs(pod('a').gang('g', 2).annotation(GangAnnotation.Timeout, 'true'), pod('b').gang('g')));
  assert.deepEqual(r.errors, []);
  assert.equal(r.workloads[0]!.workload.metadata.annotations?.[GangAnnotation.Timeout], 'true');
  // gang.ts's "ignored" warning is replaced by what happens here.
  assert.deepEqual(r.notes, [
    'gang ns/g timed out (gang.scheduling.koordinator.sh/timeout="true" on ns/a): its Workload carries the marker and is not admitted until it is removed from the pods',
  ]);
  const plain = workloadsFromGangsAndPods(docs(pod('a').gang('g', 1)));
  assert.equal(plain.workloads[0]!.workload.metadata.annotations?.[GangAnnotation.Timeout], undefined);
});

test("Missing PodGroup: no Workload, a note with the peer's message on the first pod", () => {
  const r = workloadsFromGangsAndPods(docs(pod('b').podGroup('pg'), pod('a').podGroup('pg')));
  assert.deepEqual(r.errors, []);
  assert.equal(r.workloads.length, 0);
  assert.deepEqual(r.notes, [
    'gang.yaml, document 2, Pod/ns/a: gang has not init, gangName: ns/pg, podName: ns/a; PodGroup ns/pg ' +
      '(scheduling.sigs.k8s.io/v1alpha1) is not in the input: add it, or remove label pod-group.scheduling.sigs.k8s.io ' +
      'from the pods; its 2 pending pods are not scheduled',
  ]);
});

test("Annotation gang without a valid min-available: not initialized, the peer's message once", () => {
  const r = workloadsFromGangsAndPods(docs(pod('a').gang('g'), pod('b').gang('g')));
  assert.deepEqual(r.errors, []);
  assert.equal(r.workloads.length, 0);
  assert.equal(r.notes.length, 1);
  assert.match(
    r.notes[0]!,
    /^gang\.yaml, document 1, Pod\/ns\/a: gang has not init, gangName: ns\/g, podName: ns\/a; none of its pods carries a valid/,
  );
});

test('Gang across two namespaces via groups: each Workload in its own namespace, both list the group', () => {
  const groups = JSON.stringify(['team-b/gang-b', 'team-a/gang-a']);
  const r = workloadsFromGangsAndPods(
    docs(
      pod('a-0', 'team-a').gang('gang-a', 1).annotation(GangAnnotation.Groups, groups),
      pod('b-0', 'team-b').gang('gang-b', 1).annotation(GangAnnotation.Groups, groups),
    ),
  );
  assert.deepEqual(r.errors, []);
  assert.deepEqual(names(r), ['team-a/gang-a', 'team-b/gang-b']);
  for (let i = 0; i < 2; i++) assert.equal(gangAnnotations(r, i)[GangAnnotation.Groups], '["team-a/gang-a","team-b/gang-b"]');
});

test('Groups: the gang itself is listed only when its group list has it', () => {
  const r = workloadsFromGangsAndPods(docs(pod('a').gang('a', 1).annotation(GangAnnotation.Groups, '["ns/b"]')));
  assert.equal(gangAnnotations(r)[GangAnnotation.Groups], '["ns/b"]');
});

test("Pending members must agree on the queue (Kueue's message)", () => {
  const r = workloadsFromGangsAndPods(docs(pod('a').gang('g', 2).queue('q1'), pod('b').gang('g').queue('q2')));
  assert.equal(r.workloads.length, 0);
  assert.deepEqual(
    r.errors.map((e) => e.message),
    [`gang.yaml, document 2, Pod/ns/b, metadata.labels["kueue.x-k8s.io/queue-name"]: pods 'a' and 'b' has different queue names: q1!=q2`],
  );
});

test('A gang pod in a Kueue pod group too is refused', () => {
  const r = workloadsFromGangsAndPods(
    docs(pod('a').gang('g', 1).label(KueueLabel.PodGroupName, 'kg').annotation('kueue.x-k8s.io/pod-group-total-count', '1')),
  );
  assert.equal(r.workloads.length, 0);
  assert.match(r.errors[0]!.message, /the pod is in gang ns\/g and in Kueue pod group "kg" .* remove one of them/);
});

test('A gang with only bound or finished members gives no Workload', () => {
  const finished = pod('b').gang('g');
  const r = workloadsFromGangsAndPods(
    docs(pod('a').gang('g', 2).on('n1'), { ...finished.build(), status: { phase: 'Succeeded' } } as KObject),
  );
  assert.deepEqual([r.workloads.length, r.errors.length, r.notes.length], [0, 0, 0]);
});

test('Gang keys without a gang name: an ordinary pod, and a note says why', () => {
  const r = workloadsFromGangsAndPods(docs(pod('a').annotation(GangAnnotation.MinAvailable, '2')));
  assert.deepEqual(r.errors, []);
  assert.match(r.workloads[0]!.workload.metadata.name, /^pod-a-[0-9a-f]{5}$/);
  assert.equal(r.notes.length, 1);
  assert.match(r.notes[0]!, /^Pod\/ns\/a: annotation gang\.scheduling\.koordinator\.sh\/min-available is set but the pod names no gang/);
});

test("Plain pods without gang keys: unchanged (pod.ts's Workloads)", () => {
  const items = docs(
    pod('solo'),
    pod('k-1').label(KueueLabel.PodGroupName, 'kg').annotation('kueue.x-k8s.io/pod-group-total-count', '2'),
    pod('k-2').label(KueueLabel.PodGroupName, 'kg').annotation('kueue.x-k8s.io/pod-group-total-count', '2'),
  );
  const r = workloadsFromGangsAndPods(items);
  assert.deepEqual(r.notes, []);
  assert.deepEqual(r, { ...workloadsFromPods(items), notes: [] });
});

test('A gang and a Kueue pod group with one name in one namespace: refused (one Workload name)', () => {
  const r = workloadsFromGangsAndPods(
    docs(pod('a').gang('same', 1), pod('k').label(KueueLabel.PodGroupName, 'same').annotation('kueue.x-k8s.io/pod-group-total-count', '1')),
  );
  assert.equal(r.errors.length, 1);
  assert.match(r.errors[0]!.message, /Workload ns\/same would be built both for Kueue pod group "same" and for gang ns\/same/);
});

// --- the registry -------------------------------------------------------------------

test('Registry: PodGroups of both gang CRDs are accepted, gang pods give one Workload, notes are surfaced', () => {
  assert.ok(integrationFor({ apiVersion: GangApiVersion.Koordinator, kind: 'PodGroup' }));
  assert.ok(integrationFor({ apiVersion: GangApiVersion.SchedulerPlugins, kind: 'PodGroup' }));
  const r = workloadsFromObjects(
    docs(
      pod('solo'),
      podGroup('pg', { minMember: 2 }),
      pod('pg-0').podGroup('pg'),
      pod('pg-1').podGroup('pg'),
      pod('lost').podGroup('missing'),
      {
        apiVersion: 'scheduling.volcano.sh/v1beta1',
        kind: 'PodGroup',
        metadata: { name: 'vpg', namespace: 'ns' },
        spec: { minMember: 1 },
      } as KObject,
      pod('v-0').annotation('scheduling.k8s.io/group-name', 'vpg'),
    ),
  );
  assert.deepEqual(r.errors, []);
  assert.deepEqual(
    r.workloads.map((w) => w.workload.metadata.name.replace(/-[0-9a-f]{5}$/, '')),
    ['pod-solo', 'pg', 'podgroup-vpg'],
  );
  assert.equal(r.notes.length, 1);
  assert.match(r.notes[0]!, /gang has not init, gangName: ns\/missing, podName: ns\/lost/);
});

test("gang Workloads take the priority class from the pods' kueue.x-k8s.io/priority-class label", () => {
  const r = workloadsFromGangsAndPods(
    docs(
      pod('a').gang('g', 2).label('kueue.x-k8s.io/priority-class', 'standard'),
      pod('b').gang('g', 2).label('kueue.x-k8s.io/priority-class', 'standard'),
    ),
  );
  assert.deepEqual(r.errors, []);
  assert.equal(r.workloads[0]!.workload.spec.priorityClassRef?.name, 'standard');
});

test("a gang Workload's queue order is its PodGroup's creation time, else its earliest pod's", () => {
  const pg = podGroup('pg', { minMember: 1 });
  pg.metadata.creationTimestamp = '2026-01-01T10:00:00Z';
  const p1 = pod('a-0').podGroup('pg').build();
  p1.metadata.creationTimestamp = '2026-01-01T09:00:00Z';
  const fromGroup = workloadsFromGangsAndPods(docs(pg, p1));
  assert.equal(fromGroup.workloads[0]!.workload.metadata.annotations?.[GangWorkloadKey.QueueTimestamp], '2026-01-01T10:00:00Z');
  const late = pod('b-1').gang('b', 2).build();
  late.metadata.creationTimestamp = '2026-01-02T08:00:00Z';
  const early = pod('b-2').gang('b').build();
  early.metadata.creationTimestamp = '2026-01-02T07:00:00Z';
  const fromPods = workloadsFromGangsAndPods(docs(late, early));
  assert.equal(fromPods.workloads[0]!.workload.metadata.annotations?.[GangWorkloadKey.QueueTimestamp], '2026-01-02T07:00:00Z');
  assert.equal(
    workloadsFromGangsAndPods(docs(pod('c-0').gang('c', 1))).workloads[0]!.workload.metadata.annotations?.[GangWorkloadKey.QueueTimestamp],
    undefined,
  );
});

test("a gang Workload carries its first pod's Koordinator sub-priority label", () => {
  const r = workloadsFromGangsAndPods(docs(pod('a-0').gang('a', 1).label(GangLabel.SubPriority, '0x10')));
  assert.equal(r.workloads[0]!.workload.metadata.labels?.[GangLabel.SubPriority], '0x10');
});

test("a pod's own spec.priority orders its Workload when no Kueue priority class is set (plain pod, pod group, gang)", () => {
  const withPriority = (b: PodBuilder, p: number) => {
    const x = b.build();
    x.spec.priorityClassName = 'high';
    (x.spec as { priority?: number }).priority = p;
    return x;
  };
  const gang = workloadsFromGangsAndPods(docs(withPriority(pod('g-0').gang('g', 1), 900)));
  assert.equal(gang.workloads[0]!.workload.spec.priority, 900);
  const plain = workloadsFromPods(docs(withPriority(pod('p').queue('q'), 700)));
  assert.equal(plain.workloads[0]!.workload.spec.priority, 700);
  const labelled = withPriority(pod('l').queue('q').label(KueueLabel.PriorityClass, 'wpc'), 700);
  assert.equal(workloadsFromPods(docs(labelled)).workloads[0]!.workload.spec.priority, undefined, 'a WorkloadPriorityClass wins');
});

test('pods held by another scheduling gate are not gang members yet: not counted toward the minimum, not placed', () => {
  const gated = (b: PodBuilder, gate: string) => {
    const x = b.build();
    x.spec.schedulingGates = [{ name: gate }];
    return x;
  };
  const r = workloadsFromGangsAndPods(
    docs(
      pod('t-0').gang('t', 3),
      gated(pod('t-1').gang('t'), 'example.com/quota'),
      gated(pod('t-2').gang('t'), 'kueue.x-k8s.io/admission'),
    ),
  );
  assert.deepEqual(r.errors, []);
  const wl = r.workloads[0]!.workload;
  assert.equal(
    wl.spec.podSets.reduce((n, ps) => n + ps.count, 0),
    2,
    "the pod under Kueue's own gate is a member, the other is not",
  );
  assert.deepEqual(
    wl.metadata.ownerReferences?.map((o) => o.name),
    ['t-0', 't-2'],
  );
  assert.equal(wl.metadata.annotations?.[GangAnnotation.MinAvailable], '3');
  assert.match(r.notes.join('\n'), /gang ns\/t: ns\/t-1 is held by another scheduling gate \(example\.com\/quota\): not members yet/);
});

test("scheduler-plugins PodGroup minResources travel on the gang Workload; Koordinator's (ignored by the peer) do not", () => {
  const plugins = podGroup('pg', { minMember: 1, minResources: { cpu: '4' } }, undefined, GangApiVersion.SchedulerPlugins);
  const r = workloadsFromGangsAndPods(docs(plugins, pod('a').label(GangLabel.SchedulerPluginsPodGroup, 'pg')));
  assert.equal(r.workloads[0]!.workload.metadata.annotations?.[GangWorkloadKey.MinResources], '{"cpu":"4"}');
  const koord = podGroup('kg', { minMember: 1, minResources: { cpu: '4' } });
  const k = workloadsFromGangsAndPods(docs(koord, pod('b').podGroup('kg')));
  assert.equal(k.workloads[0]!.workload.metadata.annotations?.[GangWorkloadKey.MinResources], undefined);
});
