import { test } from 'node:test';
import assert from 'node:assert/strict';
import { KueueAnnotation, KueueLabel, PodIndexLabel } from '../api/keys.ts';
import type { KObject } from '../api/objects.ts';
import { jobSetToWorkloads } from './jobset.ts';
import { workloadNameForOwner } from './workload-name.ts';

const where = { file: 'jobset.yaml', document: 2 };

interface RJ {
  name: string;
  replicas?: number;
  parallelism?: number;
  completions?: number;
  annotations?: Record<string, string>;
}

function replicatedJob({ name, replicas, parallelism, completions, annotations }: RJ) {
  return {
    name,
    ...(replicas !== undefined ? { replicas } : {}),
    template: {
      spec: {
        ...(parallelism !== undefined ? { parallelism } : {}),
        ...(completions !== undefined ? { completions } : {}),
        template: {
          metadata: annotations ? { annotations } : {},
          spec: { containers: [{ name: name, image: 'agnhost' }] },
        },
      },
    },
  };
}

function jobSet(rjs: unknown[], metadata: Partial<KObject['metadata']> = {}): KObject {
  return {
    apiVersion: 'jobset.x-k8s.io/v1alpha2',
    kind: 'JobSet',
    metadata: { name: 'tas-example-jobset', labels: { [KueueLabel.QueueName]: 'user-queue' }, ...metadata },
    spec: { replicatedJobs: rjs },
  } as KObject;
}

function one(obj: KObject) {
  const r = jobSetToWorkloads(obj, { where });
  assert.deepEqual(
    r.errors.map((e) => e.message),
    [],
  );
  assert.equal(r.workloads.length, 1);
  return r.workloads[0]!;
}

const subGroup = (replicas: number) => ({
  podIndexLabel: PodIndexLabel.JobCompletionIndex,
  subGroupIndexLabel: PodIndexLabel.JobSetJobIndex,
  subGroupCount: replicas,
});

test('JobSet: one PodSet per replicatedJob, named by it (lowercased), count = replicas x pods per Job', () => {
  const wl = one(
    jobSet([
      replicatedJob({ name: 'Leader', replicas: 1, parallelism: 1, completions: 1 }),
      replicatedJob({ name: 'workers', replicas: 2, parallelism: 4, completions: 4 }),
      replicatedJob({ name: 'short', replicas: 3, parallelism: 4, completions: 2 }),
      replicatedJob({ name: 'defaults' }),
    ]),
  );
  assert.deepEqual(
    wl.spec.podSets.map((ps) => [ps.name, ps.count]),
    [
      ['leader', 1],
      ['workers', 8],
      ['short', 6],
      ['defaults', 1],
    ],
  );
  assert.equal(wl.spec.queueName, 'user-queue');
  assert.equal(wl.spec.podSets[0]!.template.spec.containers[0]!.name, 'Leader');
});

test('JobSet: Workload named jobset-<name>-<hash> over group jobset.x-k8s.io', () => {
  const wl = one(jobSet([replicatedJob({ name: 'w' })], { uid: 'js-uid' }));
  assert.equal(
    wl.metadata.name,
    workloadNameForOwner({ kind: 'JobSet', group: 'jobset.x-k8s.io', name: 'tas-example-jobset', uid: 'js-uid' }),
  );
  assert.match(wl.metadata.name, /^jobset-tas-example-jobset-[0-9a-f]{5}$/);
  assert.equal(wl.metadata.ownerReferences?.[0]?.kind, 'JobSet');
});

test('JobSet: every PodSet has pod index label job-completion-index, sub-group job-index, subGroupCount = replicas', () => {
  const wl = one(
    jobSet([
      replicatedJob({ name: 'leader', replicas: 1, annotations: { [KueueAnnotation.PodSetRequiredTopology]: 'rack' } }),
      replicatedJob({ name: 'workers', replicas: 2, parallelism: 2, completions: 2 }),
    ]),
  );
  assert.deepEqual(wl.spec.podSets[0]!.topologyRequest, { required: 'rack', ...subGroup(1) });
  assert.deepEqual(wl.spec.podSets[1]!.topologyRequest, subGroup(2));
});

test('JobSet: slice size defaults to parallelism when podset-slice-required-topology has no size', () => {
  // KEP-2724 "JobSet with two-level scheduling", without the slice-size annotation.
  const wl = one(
    jobSet([
      replicatedJob({
        name: 'workers',
        replicas: 2,
        parallelism: 4,
        completions: 4,
        annotations: {
          [KueueAnnotation.PodSetPreferredTopology]: 'cloud.provider.com/topology-block',
          [KueueAnnotation.PodSetSliceRequiredTopology]: 'cloud.provider.com/topology-host',
        },
      }),
    ]),
  );
  assert.deepEqual(wl.spec.podSets[0]!.topologyRequest, {
    preferred: 'cloud.provider.com/topology-block',
    podSetSliceRequiredTopology: 'cloud.provider.com/topology-host',
    podSetSliceSize: 4,
    ...subGroup(2),
  });
  assert.equal(wl.spec.podSets[0]!.count, 8);
});

test('JobSet: an explicit slice size wins over the default', () => {
  const wl = one(
    jobSet([
      replicatedJob({
        name: 'workers',
        replicas: 2,
        parallelism: 4,
        annotations: {
          [KueueAnnotation.PodSetSliceRequiredTopology]: 'host',
          [KueueAnnotation.PodSetSliceSize]: '2',
        },
      }),
    ]),
  );
  assert.equal(wl.spec.podSets[0]!.topologyRequest?.podSetSliceSize, 2);
});

test('JobSet: errors name the replicatedJob field; none are thrown', () => {
  const cases: [unknown[], string[]][] = [
    [[], ['spec.replicatedJobs']],
    [[replicatedJob({ name: 'a' }), replicatedJob({ name: 'A' })], ['spec.replicatedJobs[1].name']],
    [[replicatedJob({ name: 'bad_name' })], ['spec.replicatedJobs[0].name']],
    [[{ name: 'x' }], ['spec.replicatedJobs[0].template.spec']],
    [[7], ['spec.replicatedJobs[0]']],
    [[replicatedJob({ name: 'a', replicas: -2 })], ['spec.replicatedJobs[0].replicas']],
    [
      [
        replicatedJob({
          name: 'a',
          parallelism: 4,
          annotations: { [KueueAnnotation.PodSetSliceSize]: '3', [KueueAnnotation.PodSetSliceRequiredTopology]: 'host' },
        }),
      ],
      ['spec.replicatedJobs[0].template.spec.template.metadata.annotations["kueue.x-k8s.io/podset-slice-size"]'],
    ],
  ];
  for (const [rjs, fields] of cases) {
    const r = jobSetToWorkloads(jobSet(rjs), { where });
    assert.equal(r.workloads.length, 0, JSON.stringify(rjs));
    assert.deepEqual(
      r.errors.map((e) => e.where.field),
      fields,
      JSON.stringify(rjs),
    );
    assert.equal(r.errors[0]!.where.object, 'JobSet/default/tas-example-jobset');
    assert.equal(r.errors[0]!.where.document, 2);
  }
});

test('JobSet: at most 18 PodSets', () => {
  const rjs = Array.from({ length: 19 }, (_, i) => replicatedJob({ name: `r${i}` }));
  const r = jobSetToWorkloads(jobSet(rjs), { where });
  assert.equal(r.workloads.length, 0);
  assert.match(r.errors[0]!.message, /at most 18 PodSets.*has 19/);
});
