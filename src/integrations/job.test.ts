import { test } from 'node:test';
import assert from 'node:assert/strict';
import { KueueAnnotation, KueueLabel, PodIndexLabel } from '../api/keys.ts';
import type { KObject } from '../api/objects.ts';
import { JOB_MIN_PARALLELISM_ANNOTATION, jobToWorkloads } from './job.ts';
import { workloadNameForOwner } from './workload-name.ts';

const where = { file: 'job.yaml', document: 1 };

function job(
  spec: Record<string, unknown>,
  metadata: Partial<KObject['metadata']> = {},
  templateAnnotations?: Record<string, string>,
): KObject {
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name: 'train', namespace: 'tas', ...metadata },
    spec: {
      ...spec,
      template: {
        metadata: { labels: { app: 'train' }, ...(templateAnnotations ? { annotations: templateAnnotations } : {}) },
        spec: { containers: [{ name: 'w', resources: { requests: { cpu: '4' } } }], restartPolicy: 'Never' },
      },
    },
  } as KObject;
}

function one(obj: KObject) {
  const r = jobToWorkloads(obj, { where });
  assert.deepEqual(
    r.errors.map((e) => e.message),
    [],
  );
  assert.equal(r.workloads.length, 1);
  return r.workloads[0]!;
}

test('Job: one PodSet `main`, count = min(parallelism, completions)', () => {
  const cases: [Record<string, unknown>, number][] = [
    [{}, 1],
    [{ parallelism: 10, completions: 10 }, 10],
    [{ parallelism: 10, completions: 4 }, 4],
    [{ parallelism: 3, completions: 8 }, 3],
    [{ parallelism: 5 }, 5],
    [{ completions: 5 }, 1],
    [{ parallelism: 0 }, 0],
  ];
  for (const [spec, count] of cases) {
    const wl = one(job(spec));
    assert.deepEqual(
      wl.spec.podSets.map((ps) => [ps.name, ps.count]),
      [['main', count]],
      JSON.stringify(spec),
    );
  }
});

test('Job: Workload named job-<name>-<hash>, in the Job namespace, with queue name and owner', () => {
  const wl = one(job({ parallelism: 2 }, { uid: 'uid-1', labels: { [KueueLabel.QueueName]: 'user-queue' } }));
  assert.equal(wl.metadata.name, workloadNameForOwner({ kind: 'Job', group: 'batch', name: 'train', uid: 'uid-1' }));
  assert.match(wl.metadata.name, /^job-train-[0-9a-f]{5}$/);
  assert.equal(wl.metadata.namespace, 'tas');
  assert.equal(wl.spec.queueName, 'user-queue');
  assert.equal(wl.metadata.labels?.[KueueLabel.JobUID], 'uid-1');
  assert.deepEqual(wl.metadata.ownerReferences?.[0], {
    apiVersion: 'batch/v1',
    kind: 'Job',
    name: 'train',
    uid: 'uid-1',
    controller: true,
  });
});

test('Job: the PodSet template is the pod template, labels and annotations kept', () => {
  const obj = job({}, {}, { [KueueAnnotation.PodSetRequiredTopology]: 'rack' });
  const wl = one(obj);
  const template = wl.spec.podSets[0]!.template;
  assert.deepEqual(template.metadata, { labels: { app: 'train' }, annotations: { [KueueAnnotation.PodSetRequiredTopology]: 'rack' } });
  assert.deepEqual(template.spec.containers[0]!.resources, { requests: { cpu: '4' } });
  assert.equal(template.spec.restartPolicy, 'Never');
});

test('Job: minCount from kueue.x-k8s.io/job-min-parallelism, an integer in 1..count', () => {
  const wl = one(job({ parallelism: 8 }, { annotations: { [JOB_MIN_PARALLELISM_ANNOTATION]: '3' } }));
  assert.equal(wl.spec.podSets[0]!.minCount, 3);
  assert.equal(one(job({ parallelism: 8 })).spec.podSets[0]!.minCount, undefined);

  for (const bad of ['0', '9', 'abc', '-1', '2.5']) {
    const r = jobToWorkloads(job({ parallelism: 8 }, { annotations: { [JOB_MIN_PARALLELISM_ANNOTATION]: bad } }), { where });
    assert.equal(r.workloads.length, 0, bad);
    assert.equal(r.errors.length, 1, bad);
    assert.equal(r.errors[0]!.where.field, 'metadata.annotations["kueue.x-k8s.io/job-min-parallelism"]');
    assert.equal(r.errors[0]!.where.object, 'Job/tas/train');
    assert.equal(r.errors[0]!.where.file, 'job.yaml');
    assert.match(r.errors[0]!.detail, /between 1 and the Job's pod count 8/);
  }
});

test('Job: pod index label batch.kubernetes.io/job-completion-index only for completionMode Indexed', () => {
  const indexed = one(job({ parallelism: 4, completionMode: 'Indexed' }));
  assert.deepEqual(indexed.spec.podSets[0]!.topologyRequest, { podIndexLabel: PodIndexLabel.JobCompletionIndex });
  const nonIndexed = one(job({ parallelism: 4 }));
  assert.equal(nonIndexed.spec.podSets[0]!.topologyRequest, undefined);
  const tas = one(job({ parallelism: 4 }, {}, { [KueueAnnotation.PodSetPreferredTopology]: 'block' }));
  assert.deepEqual(tas.spec.podSets[0]!.topologyRequest, { preferred: 'block' });
});

test('Job: topology request from the pod template annotations (KEP-2724 Job example)', () => {
  const wl = one(
    job(
      { parallelism: 10, completions: 10, completionMode: 'Indexed' },
      {},
      {
        [KueueAnnotation.PodSetRequiredTopology]: 'cloud.provider.com/topology-rack',
      },
    ),
  );
  assert.deepEqual(wl.spec.podSets[0]!.topologyRequest, {
    required: 'cloud.provider.com/topology-rack',
    podIndexLabel: PodIndexLabel.JobCompletionIndex,
  });
});

test('Job: an invalid TAS annotation is an error naming the template field; no Workload', () => {
  const r = jobToWorkloads(
    job(
      { parallelism: 4 },
      {},
      {
        [KueueAnnotation.PodSetRequiredTopology]: 'rack',
        [KueueAnnotation.PodSetPreferredTopology]: 'block',
      },
    ),
    { where },
  );
  assert.equal(r.workloads.length, 0);
  assert.ok(r.errors.length >= 1);
  assert.match(r.errors[0]!.where.field!, /^spec\.template\.metadata\.annotations\["kueue\.x-k8s\.io\/podset-/);
});

test('Job: bad input is returned as errors, never thrown', () => {
  const cases: [unknown, string][] = [
    [undefined, 'spec'],
    [5, 'spec'],
    [{ parallelism: 2 }, 'spec.template'],
    [{ template: { spec: {} } }, 'spec.template'],
    [{ parallelism: -1, template: { spec: { containers: [] } } }, 'spec.parallelism'],
    [{ parallelism: '2', template: { spec: { containers: [] } } }, 'spec.parallelism'],
    [{ completions: 1.5, template: { spec: { containers: [] } } }, 'spec.completions'],
  ];
  for (const [spec, field] of cases) {
    const obj = { apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'j' }, spec } as KObject;
    const r = jobToWorkloads(obj, { where });
    assert.equal(r.workloads.length, 0, JSON.stringify(spec));
    assert.deepEqual(
      r.errors.map((e) => e.where.field),
      [field],
      JSON.stringify(spec),
    );
    assert.equal(r.errors[0]!.where.object, 'Job/default/j');
  }
});
