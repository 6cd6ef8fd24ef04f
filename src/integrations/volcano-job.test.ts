import { test } from 'node:test';
import { SUBGROUP_INSTANCES_ANNOTATION, subgroupInfoOf } from '../placement/subgroups.ts';
import assert from 'node:assert/strict';
import { KueueLabel } from '../api/keys.ts';
import type { KObject, StringMap, Workload } from '../api/objects.ts';
import { VolcanoAnnotation, VolcanoLabel } from '../api/volcano-objects.ts';
import { jobToWorkloads } from './job.ts';
import {
  GANG_MIN_AVAILABLE_ANNOTATION,
  PARTITION_SIZE_ANNOTATION,
  VOLCANO_QUEUE_ANNOTATION,
  volcanoJobToWorkloads,
} from './volcano-job.ts';
import { workloadNameForOwner } from './workload-name.ts';
import { RawSpecBuilder } from '../testing/builders.ts';

const MODE = VolcanoAnnotation.NetworkTopologyMode;
const TIER = VolcanoAnnotation.NetworkTopologyHighestTier;
const TIER_NAME = VolcanoAnnotation.NetworkTopologyHighestTierName;
const where = { file: 'vcjob.yaml', document: 3 };

// ---------------------------------------------------------------------------------------
// Fixtures: vcjob('train').task('worker', 4).topology({ highestTierAllowed: 1 }).build()
// ---------------------------------------------------------------------------------------

interface TaskOpts {
  minAvailable?: number;
  partition?: Record<string, unknown>;
  annotations?: StringMap;
  labels?: StringMap;
  gpu?: number;
}

class VcJobBuilder extends RawSpecBuilder<Record<string, unknown> & { tasks: unknown[] }> {
  constructor(name: string) {
    super('batch.volcano.sh/v1alpha1', 'Job', name, { schedulerName: 'volcano', tasks: [] });
  }
  task(name: string | undefined, replicas?: number, o: TaskOpts = {}): this {
    const metadata: Record<string, unknown> = {};
    if (o.annotations) metadata.annotations = o.annotations;
    if (o.labels) metadata.labels = o.labels;
    const resources = o.gpu !== undefined ? { requests: { 'nvidia.com/gpu': String(o.gpu) } } : undefined;
    this.obj.spec.tasks.push({
      ...(name !== undefined ? { name } : {}),
      ...(replicas !== undefined ? { replicas } : {}),
      ...(o.minAvailable !== undefined ? { minAvailable: o.minAvailable } : {}),
      ...(o.partition ? { partitionPolicy: o.partition } : {}),
      template: { metadata, spec: { containers: [{ name: name ?? 'c', image: 'pause', ...(resources ? { resources } : {}) }] } },
    });
    return this;
  }
}

const vcjob = (name: string) => new VcJobBuilder(name);

function one(b: VcJobBuilder | KObject): Workload {
  const r = volcanoJobToWorkloads(b instanceof VcJobBuilder ? b.build() : b, { where });
  assert.deepEqual(
    r.errors.map((e) => e.message),
    [],
  );
  assert.equal(r.workloads.length, 1);
  return r.workloads[0]!;
}

function errorsOf(b: VcJobBuilder | KObject): string[] {
  const obj = b instanceof VcJobBuilder ? b.build() : b;
  let r: ReturnType<typeof volcanoJobToWorkloads> | undefined;
  assert.doesNotThrow(() => {
    r = volcanoJobToWorkloads(obj, { where });
  });
  assert.equal(r!.workloads.length, 0);
  return r!.errors.map((e) => e.message);
}

const volcanoAnnotations = (wl: Workload) =>
  Object.fromEntries(Object.entries(wl.metadata.annotations ?? {}).filter(([k]) => k.startsWith('volcano.sh/')));

// ---------------------------------------------------------------------------------------
// Job-level networkTopology -> Workload annotations
// ---------------------------------------------------------------------------------------

test('Volcano Job: networkTopology hard with highestTierAllowed -> Workload mode and highest-tier annotations', () => {
  const wl = one(vcjob('train').task('worker', 2).topology({ mode: 'hard', highestTierAllowed: 1 }));
  assert.deepEqual(volcanoAnnotations(wl), { [MODE]: 'hard', [TIER]: '1' });
});

test('Volcano Job: networkTopology written as a one-element list (the seed) reads as the object', () => {
  const wl = one(
    vcjob('train')
      .task('worker', 2)
      .topology([{ mode: 'soft', highestTierAllowed: 2 }]),
  );
  assert.deepEqual(volcanoAnnotations(wl), { [MODE]: 'soft', [TIER]: '2' });
});

test('Volcano Job: highestTierName -> highest-tier-name annotation; mode defaults to hard', () => {
  const wl = one(vcjob('train').task('worker', 2).topology({ highestTierName: 'volcano.sh/hypernode' }));
  assert.deepEqual(volcanoAnnotations(wl), { [MODE]: 'hard', [TIER_NAME]: 'volcano.sh/hypernode' });
});

test('Volcano Job: no networkTopology -> no network-topology annotations on the Workload', () => {
  const wl = one(vcjob('train').task('worker', 2));
  assert.deepEqual(volcanoAnnotations(wl), {});
});

// ---------------------------------------------------------------------------------------
// Gang minimum
// ---------------------------------------------------------------------------------------

test('Volcano Job: gang minimum annotation = spec.minAvailable as written', () => {
  const wl = one(vcjob('train').task('master', 1).task('worker', 4).minAvailable(3));
  assert.equal(wl.metadata.annotations?.[GANG_MIN_AVAILABLE_ANNOTATION], '3');
});

test('Volcano Job: gang minimum defaults to the sum of task replicas', () => {
  const wl = one(vcjob('train').task('master', 1).task('worker', 4).task('ps'));
  assert.equal(wl.metadata.annotations?.[GANG_MIN_AVAILABLE_ANNOTATION], '6');
});

test("Volcano Job: default gang minimum counts a task's own minAvailable in place of its replicas (Volcano's webhook)", () => {
  const wl = one(vcjob('train').task('master', 1).task('worker', 4, { minAvailable: 2 }));
  assert.equal(wl.metadata.annotations?.[GANG_MIN_AVAILABLE_ANNOTATION], '3');
});

test('Volcano Job: minAvailable 0 reads as unset (int32 omitempty) and gets the default', () => {
  const wl = one(vcjob('train').task('worker', 4).minAvailable(0));
  assert.equal(wl.metadata.annotations?.[GANG_MIN_AVAILABLE_ANNOTATION], '4');
});

// ---------------------------------------------------------------------------------------
// PodSets
// ---------------------------------------------------------------------------------------

test('Volcano Job: one PodSet per task, count = replicas (default 1), template labelled task-spec and job-name', () => {
  const wl = one(
    vcjob('train')
      .task('master')
      .task('worker', 4, { labels: { app: 'llm' } }),
  );
  assert.deepEqual(
    wl.spec.podSets.map((ps) => [ps.name, ps.count, ps.template.metadata?.labels]),
    [
      ['master', 1, { [VolcanoLabel.TaskSpec]: 'master', [VolcanoLabel.JobName]: 'train' }],
      ['worker', 4, { app: 'llm', [VolcanoLabel.TaskSpec]: 'worker', [VolcanoLabel.JobName]: 'train' }],
    ],
  );
  assert.deepEqual(wl.spec.podSets[0]!.template.spec.containers, [{ name: 'master', image: 'pause' }]);
});

test('Volcano Job: the spec names no pod index label, so PodSets have no topologyRequest (no podIndexLabel)', () => {
  const wl = one(vcjob('train').task('worker', 4).topology({ highestTierAllowed: 1 }));
  assert.equal(wl.spec.podSets[0]!.topologyRequest, undefined);
});

test("Volcano Job: an unnamed task gets Volcano's default name default<index>", () => {
  const wl = one(vcjob('train').task('master', 1).task(undefined, 2));
  assert.deepEqual(
    wl.spec.podSets.map((ps) => [ps.name, ps.template.metadata?.labels?.[VolcanoLabel.TaskSpec]]),
    [
      ['master', 'master'],
      ['default1', 'default1'],
    ],
  );
});

// ---------------------------------------------------------------------------------------
// partitionPolicy -> task-level annotations
// ---------------------------------------------------------------------------------------

function noSubgroups(a: Record<string, string> | undefined): Record<string, string> {
  const { [SUBGROUP_INSTANCES_ANNOTATION]: _, ...rest } = a ?? {};
  return rest;
}

test('Volcano Job: partitionPolicy -> partition-size and the partition networkTopology on the PodSet template', () => {
  const wl = one(
    vcjob('train')
      .task('master', 1)
      .task('worker', 8, { partition: { totalPartitions: 2, partitionSize: 4, networkTopology: { mode: 'hard', highestTierAllowed: 1 } } })
      .topology({ mode: 'hard', highestTierAllowed: 2 }),
  );
  assert.equal(wl.spec.podSets[0]!.template.metadata?.annotations, undefined);
  assert.deepEqual(noSubgroups(wl.spec.podSets[1]!.template.metadata?.annotations), {
    [PARTITION_SIZE_ANNOTATION]: '4',
    [MODE]: 'hard',
    [TIER]: '1',
  });
  assert.deepEqual(volcanoAnnotations(wl), { [MODE]: 'hard', [TIER]: '2' });
});

test('Volcano Job: partitionPolicy with highestTierName or a listed networkTopology', () => {
  const wl = one(
    vcjob('train')
      .task('a', 4, { partition: { totalPartitions: 2, partitionSize: 2, networkTopology: { mode: 'soft', highestTierName: 'leaf' } } })
      .task('b', 4, { partition: { totalPartitions: 1, partitionSize: 4, networkTopology: [{ highestTierAllowed: 0 }] } }),
  );
  assert.deepEqual(
    wl.spec.podSets.map((ps) => noSubgroups(ps.template.metadata?.annotations)),
    [
      { [PARTITION_SIZE_ANNOTATION]: '2', [MODE]: 'soft', [TIER_NAME]: 'leaf' },
      { [PARTITION_SIZE_ANNOTATION]: '4', [MODE]: 'hard', [TIER]: '0' },
    ],
  );
});

test('Volcano Job: partitionPolicy without networkTopology -> partition size only', () => {
  const wl = one(vcjob('train').task('worker', 6, { partition: { totalPartitions: 3, partitionSize: 2 } }));
  assert.deepEqual(noSubgroups(wl.spec.podSets[0]!.template.metadata?.annotations), { [PARTITION_SIZE_ANNOTATION]: '2' });
});

test('Volcano Job: partitions are sub-group instances: totalPartitions instances of partitionSize pods, minPartitions as minSubGroups', () => {
  const wl = one(
    vcjob('train')
      .task('worker', 6, { partition: { totalPartitions: 3, partitionSize: 2, minPartitions: 1 }, minAvailable: 2 })
      .minAvailable(2),
  );
  assert.deepEqual(subgroupInfoOf(wl.spec.podSets[0]!.template.metadata?.annotations), {
    policy: 'worker',
    size: 2,
    minSubGroups: 1,
    ready: 0,
    instances: [0, 1, 2].map((k) => ({ id: `volcano.sh/partition-id=${k}`, pending: 2 })),
  });
});

test('Volcano Job: topology and partition keys written on a task template are removed (Volcano ignores them on Job pods)', () => {
  const wl = one(
    vcjob('train').task('worker', 2, {
      annotations: { [MODE]: 'soft', [TIER]: '3', [PARTITION_SIZE_ANNOTATION]: '1', 'example.com/keep': 'yes' },
    }),
  );
  assert.deepEqual(wl.spec.podSets[0]!.template.metadata?.annotations, { 'example.com/keep': 'yes' });
});

// ---------------------------------------------------------------------------------------
// The Workload around the PodSets
// ---------------------------------------------------------------------------------------

test('Volcano Job: Workload named job-<name>-<hash> over the Volcano group, owned by the Job', () => {
  const obj = vcjob('train').task('worker', 2).meta({ namespace: 'ml', uid: 'u-1' }).build();
  const wl = one(obj);
  assert.equal(wl.metadata.name, workloadNameForOwner({ kind: 'Job', group: 'batch.volcano.sh', name: 'train', uid: 'u-1' }));
  assert.match(wl.metadata.name, /^job-train-[0-9a-f]{5}$/);
  assert.equal(wl.metadata.namespace, 'ml');
  assert.deepEqual(wl.metadata.ownerReferences, [
    { apiVersion: 'batch.volcano.sh/v1alpha1', kind: 'Job', name: 'train', uid: 'u-1', controller: true },
  ]);
  const batchJob = {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name: 'train', namespace: 'ml', uid: 'u-1' },
    spec: { template: { spec: { containers: [{ name: 'c' }] } } },
  } as KObject;
  assert.notEqual(jobToWorkloads(batchJob, { where }).workloads[0]!.metadata.name, wl.metadata.name);
});

test('Volcano Job: spec.queue -> scheduling.volcano.sh/queue-name; the Kueue queue-name label -> spec.queueName', () => {
  const wl = one(
    vcjob('train')
      .task('worker', 2)
      .spec({ queue: 'research' })
      .meta({ labels: { [KueueLabel.QueueName]: 'user-queue' } }),
  );
  assert.equal(wl.metadata.annotations?.[VOLCANO_QUEUE_ANNOTATION], 'research');
  assert.equal(wl.spec.queueName, 'user-queue');
  assert.equal(one(vcjob('train').task('worker', 2)).metadata.annotations?.[VOLCANO_QUEUE_ANNOTATION], undefined);
});

test('Volcano Job: spec.priorityClassName leaves the priority to the class; none -> priority 0', () => {
  assert.equal(one(vcjob('train').task('worker', 2).spec({ priorityClassName: 'high' })).spec.priority, undefined);
  assert.equal(one(vcjob('train').task('worker', 2)).spec.priority, 0);
});

test("Volcano Job: the seed's pytorch-job sample (apiVersion corrected to batch.volcano.sh/v1alpha1)", () => {
  const image = 'gcr.io/kubeflow-ci/pytorch-dist-sendrecv-test:1.0';
  const wl = one({
    apiVersion: 'batch.volcano.sh/v1alpha1',
    kind: 'Job',
    metadata: { name: 'pytorch-job' },
    spec: {
      minAvailable: 1,
      schedulerName: 'volcano',
      networkTopology: [{ mode: 'hard', highestTierAllowed: 1 }],
      plugins: { pytorch: ['--master=master', '--worker=worker', '--port=23456'] },
      tasks: [
        {
          replicas: 1,
          name: 'master',
          policies: [{ event: 'TaskCompleted', action: 'CompleteJob' }],
          template: { spec: { containers: [{ image, name: 'master' }], restartPolicy: 'OnFailure' } },
        },
        {
          replicas: 2,
          name: 'worker',
          template: { spec: { containers: [{ image, name: 'worker', workingDir: '/home' }], restartPolicy: 'OnFailure' } },
        },
      ],
    },
  } as KObject);
  assert.deepEqual(wl.metadata.annotations, { [MODE]: 'hard', [TIER]: '1', [GANG_MIN_AVAILABLE_ANNOTATION]: '1' });
  assert.deepEqual(
    wl.spec.podSets.map((ps) => [ps.name, ps.count]),
    [
      ['master', 1],
      ['worker', 2],
    ],
  );
});

// ---------------------------------------------------------------------------------------
// Bad input: errors returned (never thrown), naming file, document, object and field
// ---------------------------------------------------------------------------------------

test("Volcano Job: both highestTierAllowed and highestTierName -> Volcano's message at spec.networkTopology", () => {
  assert.deepEqual(errorsOf(vcjob('train').task('worker', 2).topology({ highestTierAllowed: 1, highestTierName: 'leaf' })), [
    "vcjob.yaml, document 3, Job/default/train, spec.networkTopology: must not specify 'highestTierAllowed' and 'highestTierName' in networkTopology simultaneously",
  ]);
});

test("Volcano Job: partitionPolicy rules in Volcano's words, at the task's field", () => {
  assert.deepEqual(errorsOf(vcjob('train').task('worker', 5, { partition: { totalPartitions: 2, partitionSize: 2 } })), [
    "vcjob.yaml, document 3, Job/default/train, spec.tasks[0].replicas: 'Replicas' are not equal to TotalPartitions*PartitionSize in task: worker, job: train",
  ]);
  assert.deepEqual(errorsOf(vcjob('train').task('worker', 4, { partition: { totalPartitions: 2, partitionSize: 0 } })), [
    "vcjob.yaml, document 3, Job/default/train, spec.tasks[0].partitionPolicy.partitionSize: 'PartitionSize' must be greater than 0 in task: worker, job: train",
  ]);
});

test('Volcano Job: no tasks, a non-object spec, a bad template, a bad minAvailable are errors, not exceptions', () => {
  assert.deepEqual(errorsOf(vcjob('train')), ['vcjob.yaml, document 3, Job/default/train, spec.tasks: No task specified in job spec']);
  const noSpec = { apiVersion: 'batch.volcano.sh/v1alpha1', kind: 'Job', metadata: { name: 'x' }, spec: 3 } as unknown as KObject;
  assert.match(errorsOf(noSpec)[0]!, /^vcjob\.yaml, document 3, Job\/default\/x, spec: /);
  const badTemplate = vcjob('train').task('worker', 2).build() as unknown as { spec: { tasks: { template: unknown }[] } };
  badTemplate.spec.tasks[0]!.template = 'pod';
  assert.match(
    errorsOf(badTemplate as unknown as KObject)[0]!,
    /^vcjob\.yaml, document 3, Job\/default\/train, spec\.tasks\[0\]\.template: /,
  );
  assert.deepEqual(errorsOf(vcjob('train').task('worker', 2).minAvailable(3)), [
    "vcjob.yaml, document 3, Job/default/train, spec.minAvailable: job 'minAvailable' should not be greater than total replicas in tasks",
  ]);
});

test('Volcano Job: more tasks than a Workload has PodSets is an error naming spec.tasks', () => {
  const b = vcjob('train');
  for (let i = 0; i < 19; i++) b.task(`t${i}`, 1);
  const errors = errorsOf(b);
  assert.equal(errors.length, 1);
  assert.match(
    errors[0]!,
    /^vcjob\.yaml, document 3, Job\/default\/train, spec\.tasks: a Workload holds at most 18 PodSets, one per task; this object has 19$/,
  );
});
