import { test } from 'node:test';
import assert from 'node:assert/strict';
import { KueueLabel } from '../api/keys.ts';
import type { KObject, Pod, PodPhase, StringMap } from '../api/objects.ts';
import { VolcanoAnnotation } from '../api/volcano-objects.ts';
import { type SourcedObject, workloadsFromObjects } from './integration.ts';
import { integrationFor } from './registry.ts';
import { roleHash } from './pod.ts';
import { GANG_MIN_AVAILABLE_ANNOTATION, PARTITION_SIZE_ANNOTATION, VOLCANO_QUEUE_ANNOTATION } from './volcano-job.ts';
import { podGroupFramework, workloadsFromPodGroupsAndPods } from './volcano-podgroup.ts';
import { workloadNameForOwner } from './workload-name.ts';
import { RawSpecBuilder } from '../testing/builders.ts';
import { SUBGROUP_INSTANCES_ANNOTATION, formatSubgroupInfo, subgroupInfoOf, type SubgroupInfo } from '../placement/subgroups.ts';

const MODE = VolcanoAnnotation.NetworkTopologyMode;
const TIER = VolcanoAnnotation.NetworkTopologyHighestTier;
const TIER_NAME = VolcanoAnnotation.NetworkTopologyHighestTierName;
const GROUP = VolcanoAnnotation.PodGroupName;
const SG = SUBGROUP_INSTANCES_ANNOTATION;

// ---------------------------------------------------------------------------------------
// Fixtures: podGroup('pg').minMember(2).topology({...}).build(); vpod('p0').group('pg').cpu('2').build()
// ---------------------------------------------------------------------------------------

class PodGroupBuilder extends RawSpecBuilder {
  constructor(name: string) {
    super('scheduling.volcano.sh/v1beta1', 'PodGroup', name, {});
  }
  minMember(n: number): this {
    this.obj.spec.minMember = n;
    return this;
  }
}

class VPodBuilder {
  private readonly obj: Pod;
  constructor(name: string) {
    this.obj = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name },
      spec: { containers: [{ name: 'c', resources: { requests: { cpu: '1' } } }] },
    };
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
  assert.deepEqual(
    r.errors.map((e) => e.message),
    [],
  );
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
  assert.deepEqual(
    wl.spec.podSets.map((ps) => [ps.name, ps.count]),
    [[hashOf(vpod('p0')), 2]],
  );
});

test('PodGroup: PodSets by role as pod.ts groups them: one per role hash, count per role, sorted by hash', () => {
  const small = vpod('a').group('pg');
  const big = vpod('b').group('pg').cpu('4');
  const r = ok(podGroup('pg').minMember(3), small, big, vpod('c').group('pg').cpu('4'));
  const expected = [
    [hashOf(small), 1],
    [hashOf(big), 2],
  ].sort((x, y) => (x[0]! < y[0]! ? -1 : 1));
  assert.deepEqual(
    r.workloads[0]!.workload.spec.podSets.map((ps) => [ps.name, ps.count]),
    expected,
  );
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
  assert.equal(
    wl.spec.podSets.reduce((n, ps) => n + ps.count, 0),
    2,
  );
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
  const r = ok(
    podGroup('pg'),
    vpod('p0')
      .group('pg')
      .annotate({ [MODE]: 'soft', [TIER]: '3' }),
  );
  const wl = r.workloads[0]!.workload;
  assert.equal(wl.metadata.annotations?.[MODE], undefined);
  assert.deepEqual(wl.spec.podSets[0]!.template.metadata?.annotations, { [GROUP]: 'pg' });
});

test('PodGroup: spec.priorityClassName leaves the priority to the class; the Kueue queue-name label sets spec.queueName', () => {
  const r = ok(
    podGroup('pg')
      .spec({ priorityClassName: 'high' })
      .meta({ labels: { [KueueLabel.QueueName]: 'lq' } }),
    vpod('p0').group('pg'),
  );
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
  assert.deepEqual(Object.fromEntries(Object.entries(wl.metadata.annotations ?? {})), {
    [MODE]: 'soft',
    [TIER]: '2',
    [GANG_MIN_AVAILABLE_ANNOTATION]: '1',
    [VOLCANO_QUEUE_ANNOTATION]: 'q',
  });
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
    vpod(name)
      .label({ [KueueLabel.PodGroupName]: 'kg' })
      .annotate({ 'kueue.x-k8s.io/pod-group-total-count': '2' });
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

test('PodGroup: a pod in both a Volcano and a Kueue group, or in a Kueue group with Volcano topology, is refused', () => {
  const r = run(
    podGroup('pg'),
    vpod('both')
      .group('pg')
      .label({ [KueueLabel.PodGroupName]: 'kg' }),
    vpod('topo')
      .annotate({ [MODE]: 'hard', 'kueue.x-k8s.io/pod-group-total-count': '1' })
      .label({ [KueueLabel.PodGroupName]: 'kg2' }),
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
// Sub-groups: spec.subGroupPolicy (spec §1.3)
// ---------------------------------------------------------------------------------------

/** [PodSet name, count] of the single Workload of `r`. */
const podSetCounts = (r: ReturnType<typeof run>) => r.workloads[0]!.workload.spec.podSets.map((ps) => [ps.name, ps.count]);
const h = hashOf(vpod('any'));
/** A member of pg with the given labels (same shape for all: one role). */
const member = (name: string, labels: StringMap = {}) => vpod(name).group('pg').label(labels);

test('subGroupPolicy first-matching policy: a pod matching several policies belongs to the first one only', () => {
  const r = ok(
    podGroup('pg').spec({
      subGroupPolicy: [
        { name: 'first', subGroupSize: 2, labelSelector: { matchLabels: { role: 'worker' } } },
        { name: 'second', subGroupSize: 2, labelSelector: { matchExpressions: [{ key: 'role', operator: 'Exists' }] } },
      ],
    }),
    member('a', { role: 'worker' }),
    member('b', { role: 'worker' }),
    member('c', { role: 'ps' }),
    member('d', { role: 'ps' }),
  );
  assert.deepEqual(podSetCounts(r), [
    [`first-${h}`, 2],
    [`second-${h}`, 2],
  ]);
});

test('subGroupPolicy first-matching policy: a pod missing a matchLabelKeys value (or with an empty one) falls through to the next policy', () => {
  const r = ok(
    podGroup('pg').spec({
      subGroupPolicy: [
        { name: 'keyed', subGroupSize: 1, matchLabelKeys: ['rank'] },
        { name: 'rest', subGroupSize: 2 },
      ],
    }),
    member('a', { rank: '0' }),
    member('b', { rank: '' }),
    member('c'),
  );
  assert.deepEqual(podSetCounts(r), [
    [`keyed-${h}`, 1],
    [`rest-${h}`, 2],
  ]);
});

test('subGroupPolicy absent selector: every pod matches (an empty selector too, as in Kubernetes)', () => {
  for (const policy of [
    { name: 'all', subGroupSize: 3 },
    { name: 'all', subGroupSize: 3, labelSelector: {} },
  ]) {
    const r = ok(podGroup('pg').spec({ subGroupPolicy: [policy] }), member('a', { x: '1' }), member('b'), member('c', { y: '2' }));
    assert.deepEqual(podSetCounts(r), [[`all-${h}`, 3]]);
  }
});

test('subGroupPolicy matchLabelKeys grouping: pods with the same value tuple form one instance; one PodSet per policy and role holds all its instances', () => {
  const small = (name: string, a: string, b: string) => member(name, { a, b });
  const big = (name: string, a: string, b: string) => member(name, { a, b }).cpu('4');
  const r = ok(
    podGroup('pg').spec({ subGroupPolicy: [{ name: 'dp', subGroupSize: 2, matchLabelKeys: ['a', 'b'] }] }),
    // instances (0,0) and (0,1) of one shape, (1,0) of another: tuples, not single keys, tell them apart
    small('p0', '0', '0'),
    small('p1', '0', '0'),
    small('p2', '0', '1'),
    small('p3', '0', '1'),
    big('p4', '1', '0'),
    big('p5', '1', '0'),
  );
  const hb = hashOf(vpod('x').cpu('4'));
  const expected = [
    [`dp-${h}`, 4],
    [`dp-${hb}`, 2],
  ].sort((x, y) => (x[0]! < y[0]! ? -1 : 1));
  assert.deepEqual(podSetCounts(r), expected);
  // Every PodSet count is a whole number of subGroupSize slices.
  for (const ps of r.workloads[0]!.workload.spec.podSets) assert.equal(ps.count % 2, 0);
});

test('subGroupPolicy pods in no policy: they form the default group, PodSets by role hash as without subGroupPolicy, before the policy PodSets', () => {
  const r = ok(
    podGroup('pg')
      .minMember(4)
      .spec({
        subGroupPolicy: [{ name: 'workers', subGroupSize: 2, labelSelector: { matchLabels: { role: 'worker' } } }],
      }),
    member('w0', { role: 'worker' }),
    member('w1', { role: 'worker' }),
    member('launcher', { role: 'launcher' }).cpu('2'),
    member('other'),
  );
  const hl = hashOf(vpod('x').cpu('2'));
  const defaults = [
    [hl, 1],
    [h, 1],
  ].sort((x, y) => (x[0]! < y[0]! ? -1 : 1));
  assert.deepEqual(podSetCounts(r), [...defaults, [`workers-${h}`, 2]]);
  const wl = r.workloads[0]!.workload;
  for (const ps of wl.spec.podSets.slice(0, 2)) assert.equal(ps.template.metadata?.annotations?.[PARTITION_SIZE_ANNOTATION], undefined);
  assert.equal(wl.metadata.annotations?.[GANG_MIN_AVAILABLE_ANNOTATION], '4');
});

const instancesOf = (r: ReturnType<typeof run>, podSet: number) =>
  subgroupInfoOf(r.workloads[0]!.workload.spec.podSets[podSet]!.template.metadata?.annotations) as SubgroupInfo;

test('subGroupPolicy uneven instances: an instance of more or fewer pods than subGroupSize is accepted, its pending count recorded for placement', () => {
  const r = ok(
    podGroup('pg').spec({
      subGroupPolicy: [{ name: 'dp', subGroupSize: 2, minSubGroups: 1, matchLabelKeys: ['volcano.sh/partition-id'] }],
    }),
    member('p0', { 'volcano.sh/partition-id': '0' }),
    member('p2', { 'volcano.sh/partition-id': '1' }),
    member('p3', { 'volcano.sh/partition-id': '1' }),
    member('p4', { 'volcano.sh/partition-id': '1' }),
  );
  assert.deepEqual(podSetCounts(r), [[`dp-${h}`, 4]]);
  assert.deepEqual(instancesOf(r, 0), {
    policy: 'dp',
    size: 2,
    minSubGroups: 1,
    ready: 0,
    instances: [
      { id: 'volcano.sh/partition-id=0', pending: 1 },
      { id: 'volcano.sh/partition-id=1', pending: 3 },
    ],
  });
});

test('subGroupPolicy partly running instance: its bound pods and their nodes are recorded; a wholly bound instance of subGroupSize pods counts as ready', () => {
  const pid = (v: string) => ({ rank: v });
  const pg = podGroup('pg').spec({ subGroupPolicy: [{ name: 'dp', subGroupSize: 2, minSubGroups: 2, matchLabelKeys: ['rank'] }] });
  const r = ok(pg, member('a0', pid('0')), member('a1', pid('0')), member('b0', pid('1')), member('b1', pid('1')).on('n1'));
  assert.deepEqual(instancesOf(r, 0).instances, [
    { id: 'rank=0', pending: 2 },
    { id: 'rank=1', pending: 1, bound: 1, nodes: ['n1'] },
  ]);
  const done = ok(pg, member('a0', pid('0')), member('a1', pid('0')), member('b0', pid('1')).on('n1'), member('b1', pid('1')).on('n2'));
  assert.deepEqual(podSetCounts(done), [[`dp-${h}`, 2]]);
  assert.equal(instancesOf(done, 0).ready, 1);
});

test('subGroupPolicy instance of mixed pod shapes: error naming the policy, the instance and the roles', () => {
  const r = run(
    podGroup('pg').spec({ subGroupPolicy: [{ name: 'dp', subGroupSize: 2, matchLabelKeys: ['rank'] }] }),
    member('a', { rank: '0' }),
    member('b', { rank: '0' }).cpu('4'),
  );
  assert.deepEqual(r.workloads, []);
  assert.equal(r.errors.length, 1);
  assert.equal(r.errors[0]!.where.field, 'spec.subGroupPolicy[0]');
  assert.match(
    r.errors[0]!.message,
    new RegExp(
      `^pg\\.yaml, document 1, PodGroup/default/pg, spec\\.subGroupPolicy\\[0\\]: subGroupPolicy "dp", instance \\{rank=0\\} mixes pod shapes ` +
        `\\((a: role ${h}; b: role ${hashOf(vpod('x').cpu('4'))}|b: role ${hashOf(vpod('x').cpu('4'))}; a: role ${h})\\)\\. .*accepted only when all its pods have the same shape`,
    ),
  );
});

test('subGroupPolicy minSubGroups in the gang minimum: max(minMember, sum of minSubGroups x subGroupSize), less the members already bound', () => {
  const policies = [
    { name: 'dp', subGroupSize: 2, minSubGroups: 2, matchLabelKeys: ['dp'] },
    { name: 'pp', subGroupSize: 3, minSubGroups: 1, matchLabelKeys: ['pp'] },
  ];
  const pods = [
    member('d0', { dp: '0' }),
    member('d1', { dp: '0' }),
    member('d2', { dp: '1' }),
    member('d3', { dp: '1' }),
    member('q0', { pp: '0' }),
    member('q1', { pp: '0' }),
    member('q2', { pp: '0' }),
    member('x'),
  ];
  const gang = (r: ReturnType<typeof run>) => r.workloads[0]!.workload.metadata.annotations?.[GANG_MIN_AVAILABLE_ANNOTATION];
  // 2 x 2 + 1 x 3 = 7 > minMember 5
  assert.equal(gang(ok(podGroup('pg').minMember(5).spec({ subGroupPolicy: policies }), ...pods)), '7');
  // minMember 8 > 7
  assert.equal(gang(ok(podGroup('pg').minMember(8).spec({ subGroupPolicy: policies }), ...pods)), '8');
  // minMember unset, minSubGroups default 0 -> 0
  assert.equal(gang(ok(podGroup('pg').spec({ subGroupPolicy: policies.map((p) => ({ ...p, minSubGroups: undefined })) }), ...pods)), '0');
  // a wholly bound dp instance counts toward minSubGroups and is subtracted like any bound member
  const r = ok(
    podGroup('pg').spec({ subGroupPolicy: policies }),
    ...pods,
    member('d4', { dp: '2' }).on('n1'),
    member('d5', { dp: '2' }).on('n2'),
  );
  assert.equal(gang(r), '5');
});

test('subGroupPolicy minSubGroups more than the instances in the input: error at the policy minSubGroups', () => {
  const r = run(
    podGroup('pg').spec({ subGroupPolicy: [{ name: 'dp', subGroupSize: 1, minSubGroups: 3, matchLabelKeys: ['rank'] }] }),
    member('a', { rank: '0' }),
    member('b', { rank: '1' }),
  );
  assert.deepEqual(r.workloads, []);
  assert.deepEqual(
    r.errors.map((e) => e.message),
    [
      'pg.yaml, document 1, PodGroup/default/pg, spec.subGroupPolicy[0].minSubGroups: minSubGroups 3 cannot be met: the input has 2 instances ' +
        'of subGroupPolicy "dp" (instance {rank=0}; instance {rank=1}); add the missing pods or lower minSubGroups',
    ],
  );
});

test('subGroupPolicy the annotations written: partition size and the policy topology on each policy PodSet template, the PodGroup topology on the Workload', () => {
  const r = ok(
    podGroup('pg')
      .minMember(4)
      .topology({ mode: 'hard', highestTierAllowed: 2 })
      .spec({
        queue: 'research',
        subGroupPolicy: [
          {
            name: 'dp',
            subGroupSize: 2,
            matchLabelKeys: ['rank'],
            labelSelector: { matchLabels: { app: 'dp' } },
            networkTopology: { mode: 'hard', highestTierAllowed: 1 },
          },
          {
            name: 'tp',
            subGroupSize: 1,
            labelSelector: { matchLabels: { app: 'tp' } },
            networkTopology: [{ mode: 'soft', highestTierName: 'leaf' }],
          },
          { name: 'plain', subGroupSize: 1, labelSelector: { matchLabels: { app: 'none' } } },
        ],
      }),
    // user-written derived keys on pods are dropped; the matchLabelKeys label differs per instance and is dropped too
    member('d0', { app: 'dp', rank: '0' }).annotate({ [PARTITION_SIZE_ANNOTATION]: '99', [MODE]: 'soft' }),
    member('d1', { app: 'dp', rank: '0' }),
    member('t0', { app: 'tp' }),
    member('n0', { app: 'none' }),
  );
  const wl = r.workloads[0]!.workload;
  const sg = (policy: string, size: number, id: string, pending: number) =>
    formatSubgroupInfo({ policy, size, minSubGroups: 0, ready: 0, instances: [{ id, pending }] });
  assert.deepEqual(wl.metadata.annotations, {
    [MODE]: 'hard',
    [TIER]: '2',
    [GANG_MIN_AVAILABLE_ANNOTATION]: '4',
    [VOLCANO_QUEUE_ANNOTATION]: 'research',
  });
  assert.deepEqual(
    wl.spec.podSets.map((ps) => [ps.name, ps.count, ps.template.metadata?.labels, ps.template.metadata?.annotations]),
    [
      [
        `dp-${h}`,
        2,
        { app: 'dp' },
        { [GROUP]: 'pg', [PARTITION_SIZE_ANNOTATION]: '2', [MODE]: 'hard', [TIER]: '1', [SG]: sg('dp', 2, 'rank=0', 2) },
      ],
      [
        `tp-${h}`,
        1,
        { app: 'tp' },
        { [GROUP]: 'pg', [PARTITION_SIZE_ANNOTATION]: '1', [MODE]: 'soft', [TIER_NAME]: 'leaf', [SG]: sg('tp', 1, '', 1) },
      ],
      [`plain-${h}`, 1, { app: 'none' }, { [GROUP]: 'pg', [PARTITION_SIZE_ANNOTATION]: '1', [SG]: sg('plain', 1, '', 1) }],
    ],
  );
});

test('subGroupPolicy PodSet names: a policy name that is no DNS label (or too long) is lowercased, cut and suffixed with a hash of the name', () => {
  const long = 'x'.repeat(60);
  const r = ok(
    podGroup('pg').spec({
      subGroupPolicy: [
        { name: 'Data_Parallel', labelSelector: { matchLabels: { k: 'a' } } },
        { name: 'data-parallel', labelSelector: { matchLabels: { k: 'b' } } },
        { name: long },
      ],
    }),
    member('a', { k: 'a' }),
    member('b', { k: 'b' }),
    member('c'),
  );
  const names = r.workloads[0]!.workload.spec.podSets.map((ps) => ps.name);
  assert.match(names[0]!, new RegExp(`^data-parallel-[0-9a-f]{5}-${h}$`));
  assert.equal(names[1], `data-parallel-${h}`);
  assert.match(names[2]!, new RegExp(`^x{48}-[0-9a-f]{5}-${h}$`));
  for (const n of names) assert.ok(n.length <= 63 && /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(n), n);
});

// ---------------------------------------------------------------------------------------
// Registry
// ---------------------------------------------------------------------------------------

test('Registry: Volcano kinds are registered; the PodGroup integration takes Pods too', () => {
  assert.equal(integrationFor({ apiVersion: 'scheduling.volcano.sh/v1beta1', kind: 'PodGroup' }), podGroupFramework);
  assert.equal(integrationFor({ apiVersion: 'v1', kind: 'Pod' }), podGroupFramework);
  assert.equal(integrationFor({ apiVersion: 'batch.volcano.sh/v1alpha1', kind: 'Job' })?.name, 'batch.volcano.sh/job');
  assert.equal(integrationFor({ apiVersion: 'training.volcano.sh/v1alpha1', kind: 'HyperJob' })?.name, 'training.volcano.sh/hyperjob');
});

test('Registry: a Volcano Job covers its PodGroup and pods; a HyperJob covers its child Jobs; Workloads in input order', () => {
  const owned = (kind: string, apiVersion: string) => ({
    ownerReferences: [{ apiVersion, kind, name: 'parent', uid: 'p', controller: true }],
  });
  const job: KObject & { spec: unknown } = {
    apiVersion: 'batch.volcano.sh/v1alpha1',
    kind: 'Job',
    metadata: { name: 'parent' },
    spec: { tasks: [{ name: 'w', replicas: 2, template: { spec: { containers: [{ name: 'c' }] } } }] },
  };
  const childJob = {
    ...structuredClone(job),
    metadata: { name: 'child', ...owned('HyperJob', 'training.volcano.sh/v1alpha1') },
  } as KObject;
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
  assert.deepEqual(
    r.errors.map((e) => e.message),
    [],
  );
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
