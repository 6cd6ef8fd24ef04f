import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { KObject, Workload } from '../api/objects.ts';
import { VolcanoAnnotation, VolcanoLabel } from '../api/volcano-objects.ts';
import { hyperJobToWorkloads } from './hyperjob.ts';
import { RawSpecBuilder } from '../testing/builders.ts';
import { GANG_MIN_AVAILABLE_ANNOTATION, PARTITION_SIZE_ANNOTATION, VOLCANO_QUEUE_ANNOTATION } from './volcano-job.ts';

const MODE = VolcanoAnnotation.NetworkTopologyMode;
const TIER = VolcanoAnnotation.NetworkTopologyHighestTier;
const TIER_NAME = VolcanoAnnotation.NetworkTopologyHighestTierName;
const where = { file: 'hj.yaml', document: 1 };

// ---------------------------------------------------------------------------------------
// Fixtures: hyperJob('hj').replicated(childJob().task('worker', 32), 40).build()
// ---------------------------------------------------------------------------------------

class ChildJobBuilder {
  readonly spec: Record<string, unknown> & { tasks: Record<string, unknown>[] } = { tasks: [] };
  task(name: string, replicas?: number, image = name, extra: Record<string, unknown> = {}): this {
    this.spec.tasks.push({
      name,
      ...(replicas !== undefined ? { replicas } : {}),
      template: { metadata: { annotations: { [MODE]: 'soft' } }, spec: { containers: [{ name, image }] } },
      ...extra,
    });
    return this;
  }
  topology(nt: unknown): this {
    this.spec.networkTopology = nt;
    return this;
  }
  set(s: Record<string, unknown>): this {
    Object.assign(this.spec, s);
    return this;
  }
}

const childJob = () => new ChildJobBuilder();

class HyperJobBuilder extends RawSpecBuilder<Record<string, unknown> & { replicatedJobs: Record<string, unknown>[] }> {
  constructor(name: string) {
    super('training.volcano.sh/v1alpha1', 'HyperJob', name, { replicatedJobs: [] });
  }
  replicated(name: string, child: ChildJobBuilder, replicas?: number, key: 'templateSpec' | 'template' = 'templateSpec'): this {
    this.obj.spec.replicatedJobs.push({ name, ...(replicas !== undefined ? { replicas } : {}), [key]: structuredClone(child.spec) });
    return this;
  }
}

const hyperJob = (name: string) => new HyperJobBuilder(name);

function one(b: HyperJobBuilder): Workload {
  const r = hyperJobToWorkloads(b.build(), { where });
  assert.deepEqual(
    r.errors.map((e) => e.message),
    [],
  );
  assert.equal(r.workloads.length, 1);
  return r.workloads[0]!;
}

function errorsOf(obj: KObject): string[] {
  let r: ReturnType<typeof hyperJobToWorkloads> | undefined;
  assert.doesNotThrow(() => {
    r = hyperJobToWorkloads(obj, { where });
  });
  assert.equal(r!.workloads.length, 0);
  return r!.errors.map((e) => e.message);
}

// ---------------------------------------------------------------------------------------

test("HyperJob: the seed's sample -> one PodSet of 40 x 32 pods, each child Job a 32-pod slice within tier 1, all within tier 2", () => {
  // The seed writes `template` (the API's `templateSpec`), lists for networkTopology and topology.volcano.sh
  // as the apiVersion; the API group is training.volcano.sh.
  const wl = one(
    hyperJob('multi-volcano-job')
      .topology([{ mode: 'hard', highestTierAllowed: 2 }])
      .replicated(
        'volcano-job',
        childJob()
          .topology([{ mode: 'hard', highestTierAllowed: 1 }])
          .set({ schedulerName: 'volcano' })
          .task('worker', 32, 'alpine'),
        40,
        'template',
      ),
  );
  assert.match(wl.metadata.name, /^hyperjob-multi-volcano-job-[0-9a-f]{5}$/);
  assert.deepEqual(wl.metadata.annotations, { [MODE]: 'hard', [TIER]: '2', [GANG_MIN_AVAILABLE_ANNOTATION]: '1280' });
  assert.deepEqual(
    wl.spec.podSets.map((ps) => [ps.name, ps.count, ps.template.metadata]),
    [
      [
        'volcano-job',
        1280,
        { annotations: { [PARTITION_SIZE_ANNOTATION]: '32', [MODE]: 'hard', [TIER]: '1' }, labels: { [VolcanoLabel.TaskSpec]: 'worker' } },
      ],
    ],
  );
});

test('HyperJob: one PodSet per replicatedJob, count = replicas (default 1) x the sum of the child tasks replicas', () => {
  const wl = one(
    hyperJob('hj').replicated('trainer', childJob().task('master', 1).task('worker', 4), 3).replicated('eval', childJob().task('worker')),
  );
  assert.deepEqual(
    wl.spec.podSets.map((ps) => [ps.name, ps.count]),
    [
      ['trainer', 15],
      ['eval', 1],
    ],
  );
});

test('HyperJob: child networkTopology -> task-level annotations with partition-size = pods per child Job', () => {
  const wl = one(hyperJob('hj').replicated('r', childJob().topology({ mode: 'soft', highestTierName: 'leaf' }).task('w', 8), 2));
  assert.deepEqual(wl.spec.podSets[0]!.template.metadata?.annotations, {
    [PARTITION_SIZE_ANNOTATION]: '8',
    [MODE]: 'soft',
    [TIER_NAME]: 'leaf',
  });
});

test('HyperJob: a child Job without networkTopology is still one slice (partition-size only); no HyperJob topology -> no Workload topology', () => {
  const wl = one(hyperJob('hj').replicated('r', childJob().task('w', 8), 2));
  assert.deepEqual(wl.spec.podSets[0]!.template.metadata?.annotations, { [PARTITION_SIZE_ANNOTATION]: '8' });
  assert.deepEqual(wl.metadata.annotations, { [GANG_MIN_AVAILABLE_ANNOTATION]: '16' });
});

test('HyperJob: gang minimum = minAvailable child Jobs x pods per child Job (default: all child Jobs)', () => {
  const child = childJob().task('w', 32);
  assert.equal(one(hyperJob('hj').replicated('r', child, 40).minAvailable(2)).metadata.annotations?.[GANG_MIN_AVAILABLE_ANNOTATION], '64');
  assert.equal(one(hyperJob('hj').replicated('r', child, 40)).metadata.annotations?.[GANG_MIN_AVAILABLE_ANNOTATION], '1280');
});

test('HyperJob: with child Jobs of different sizes the gang minimum counts the smallest Jobs first', () => {
  const wl = one(
    hyperJob('hj').replicated('big', childJob().task('w', 16), 2).replicated('small', childJob().task('w', 4), 1).minAvailable(2),
  );
  assert.equal(wl.metadata.annotations?.[GANG_MIN_AVAILABLE_ANNOTATION], '20');
});

test("HyperJob: a multi-task child Job is sized with its largest task's template (approximation), labelled with that task", () => {
  const wl = one(hyperJob('hj').replicated('r', childJob().task('master', 1, 'launcher').task('worker', 4, 'trainer'), 2));
  const ps = wl.spec.podSets[0]!;
  assert.equal(ps.count, 10);
  assert.deepEqual(ps.template.spec.containers, [{ name: 'worker', image: 'trainer' }]);
  assert.deepEqual(ps.template.metadata?.labels, { [VolcanoLabel.TaskSpec]: 'worker' });
});

test('HyperJob: topology keys written on a child task template are removed', () => {
  const wl = one(hyperJob('hj').replicated('r', childJob().task('w', 2), 1));
  assert.equal(wl.spec.podSets[0]!.template.metadata?.annotations?.[MODE], undefined);
});

test('HyperJob: child Jobs queue -> scheduling.volcano.sh/queue-name; differing queues are an error', () => {
  const wl = one(
    hyperJob('hj')
      .replicated('a', childJob().set({ queue: 'research' }).task('w', 1))
      .replicated('b', childJob().task('w', 1)),
  );
  assert.equal(wl.metadata.annotations?.[VOLCANO_QUEUE_ANNOTATION], 'research');
  const bad = hyperJob('hj')
    .replicated('a', childJob().set({ queue: 'research' }).task('w', 1))
    .replicated('b', childJob().set({ queue: 'prod' }).task('w', 1))
    .build();
  assert.deepEqual(errorsOf(bad), [
    'hj.yaml, document 1, HyperJob/default/hj, spec.replicatedJobs[1].templateSpec.queue: queue "prod" differs from "research" at ' +
      'spec.replicatedJobs[0].templateSpec.queue: the child Jobs of one HyperJob are queued together, so they must name the same queue',
  ]);
});

test('HyperJob: a partitionPolicy inside a child Job is refused, naming its field', () => {
  const child = childJob().task('w', 4, 'w', { partitionPolicy: { totalPartitions: 2, partitionSize: 2 } });
  const errors = errorsOf(hyperJob('hj').replicated('r', child, 2).build());
  assert.equal(errors.length, 1);
  assert.match(
    errors[0]!,
    /^hj\.yaml, document 1, HyperJob\/default\/hj, spec\.replicatedJobs\[0\]\.templateSpec\.tasks\[0\]\.partitionPolicy: a partitionPolicy inside a HyperJob child Job is not supported/,
  );
});

test('HyperJob: bad input is returned as errors naming file, document, object and field', () => {
  assert.deepEqual(errorsOf(hyperJob('hj').replicated('r', childJob().task('w', 1), 2).minAvailable(3).build()), [
    'hj.yaml, document 1, HyperJob/default/hj, spec.minAvailable: 3 is more than the 2 Jobs the replicatedJobs create',
  ]);
  const bothTiers = childJob().topology({ highestTierAllowed: 1, highestTierName: 'x' }).task('w', 1);
  assert.deepEqual(errorsOf(hyperJob('hj').replicated('r', bothTiers).build()), [
    "hj.yaml, document 1, HyperJob/default/hj, spec.replicatedJobs[0].templateSpec.networkTopology: must not specify 'highestTierAllowed' and 'highestTierName' in networkTopology simultaneously",
  ]);
  const noTemplate = hyperJob('hj').build() as unknown as { spec: { replicatedJobs: unknown[] } };
  noTemplate.spec.replicatedJobs.push({ name: 'r', replicas: 1 });
  assert.deepEqual(errorsOf(noTemplate as unknown as KObject), [
    'hj.yaml, document 1, HyperJob/default/hj, spec.replicatedJobs[0].templateSpec: is required: the Volcano JobSpec each replica runs (template is accepted as an alias)',
  ]);
  assert.equal(
    errorsOf({ apiVersion: 'training.volcano.sh/v1alpha1', kind: 'HyperJob', metadata: { name: 'x' } } as KObject).length > 0,
    true,
  );
});
