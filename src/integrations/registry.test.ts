import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CoreApiVersion, JobFrameworkApiVersion, VolcanoApiVersion } from '../api/api-versions.ts';
import { kindEntry } from '../api/schemas.ts';
import type { KObject } from '../api/objects.ts';
import { defineFramework } from './framework.ts';
import { FRAMEWORKS, JOB_ADAPTERS, JOB_FRAMEWORKS, JOB_KINDS, adapterFor, integrationFor, managedRoot } from './registry.ts';

test('Framework record: every kind names its API schema, the one api/schemas.ts parses it with', () => {
  for (const f of FRAMEWORKS) {
    assert.equal(f.schemas.length, f.kinds.length, f.name);
    f.kinds.forEach((k, i) => assert.equal(f.schemas[i], kindEntry(k.apiVersion, k.kind), `${f.name}: ${k.kind}`));
  }
});

test('Framework record: a kind without an API schema is refused when the framework is defined', () => {
  assert.throws(
    () =>
      defineFramework({
        name: 'example.com/widget',
        kinds: [{ apiVersion: 'example.com/v1', kind: 'Widget' }],
        toWorkloads: () => ({ workloads: [], errors: [] }),
      }),
    /framework example\.com\/widget: no API schema for Widget \(example\.com\/v1\)/,
  );
});

test('Framework record: the job side serves the first kind and builds its Workloads with the record', () => {
  for (const f of JOB_FRAMEWORKS) {
    assert.equal(f.job.kind, f.kinds[0]!.kind, f.name);
    assert.equal(f.job.apiVersion, f.kinds[0]!.apiVersion, f.name);
    assert.equal(f.job.integration, f);
  }
});

test('Registry: one kind belongs to one framework; names and webhook names are unique', () => {
  const kinds = FRAMEWORKS.flatMap((f) => f.kinds.map((k) => `${k.apiVersion} ${k.kind}`));
  assert.equal(new Set(kinds).size, kinds.length);
  assert.equal(new Set(FRAMEWORKS.map((f) => f.name)).size, FRAMEWORKS.length);
  assert.equal(new Set(JOB_ADAPTERS.map((a) => a.hookSuffix)).size, JOB_ADAPTERS.length);
});

test('Registry: the job frameworks, their adapters and watched kinds derive from the one list, in its order', () => {
  assert.deepEqual(
    JOB_FRAMEWORKS.map((f) => f.name),
    [
      'batch/job',
      'jobset.x-k8s.io/jobset',
      'kubeflow.org/mpijob',
      'leaderworkerset.x-k8s.io/leaderworkerset',
      'batch.volcano.sh/job',
      'training.volcano.sh/hyperjob',
    ],
  );
  assert.deepEqual(JOB_KINDS, ['Job', 'JobSet', 'MPIJob', 'LeaderWorkerSet', 'HyperJob']);
  // Plain Pods and PodGroups have no job side: the pod-group controller runs them.
  assert.equal(integrationFor({ apiVersion: CoreApiVersion.V1, kind: 'Pod' })?.job, undefined);
  assert.equal(integrationFor({ apiVersion: VolcanoApiVersion.PodGroup, kind: 'PodGroup' })?.job, undefined);
});

test('Registry: a batch Job and a Volcano Job share the kind Job and are told apart by apiVersion', () => {
  assert.equal(adapterFor({ apiVersion: CoreApiVersion.Batch, kind: 'Job' })?.hookSuffix, 'job.kb.io');
  assert.equal(adapterFor({ apiVersion: VolcanoApiVersion.Job, kind: 'Job' })?.hookSuffix, 'volcanojob.topoqueue.io');
  assert.equal(adapterFor({ apiVersion: 'batch/v2', kind: 'Job' }), undefined);
});

test("Registry: the managed root of a pod of a JobSet's Job is the JobSet, its owner the Job", () => {
  const ref = (o: KObject) => [{ apiVersion: o.apiVersion, kind: o.kind, name: o.metadata.name, uid: o.metadata.uid!, controller: true }];
  const js: KObject = { apiVersion: JobFrameworkApiVersion.JobSet, kind: 'JobSet', metadata: { name: 'js', namespace: 'ns', uid: 'u1' } };
  const job: KObject = {
    apiVersion: CoreApiVersion.Batch,
    kind: 'Job',
    metadata: { name: 'js-w-0', namespace: 'ns', uid: 'u2', ownerReferences: ref(js) },
  };
  const pod: KObject = { apiVersion: CoreApiVersion.V1, kind: 'Pod', metadata: { name: 'p', namespace: 'ns', ownerReferences: ref(job) } };
  const byKind = new Map([
    ['JobSet', js],
    ['Job', job],
  ]);
  const r = managedRoot(pod, (kind) => byKind.get(kind));
  assert.equal(r?.root, js);
  assert.equal(r?.owner, job);
});
