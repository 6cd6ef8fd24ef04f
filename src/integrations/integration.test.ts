import { test } from 'node:test';
import assert from 'node:assert/strict';
import { KueueLabel } from '../api/keys.ts';
import type { KObject } from '../api/objects.ts';
import { type SourcedObject, workloadsFromObjects } from './integration.ts';
import { FRAMEWORKS, integrationFor } from './registry.ts';
import { volcanoJobFramework } from './volcano-job.ts';

const container = { name: 'c', image: 'pause' };
const podTemplate = { spec: { containers: [container] } };

const job = (name: string, extra: Partial<KObject['metadata']> = {}): KObject =>
  ({ apiVersion: 'batch/v1', kind: 'Job', metadata: { name, ...extra }, spec: { parallelism: 2, template: podTemplate } }) as KObject;
const jobSet = (name: string, apiVersion = 'jobset.x-k8s.io/v1alpha2'): KObject =>
  ({
    apiVersion,
    kind: 'JobSet',
    metadata: { name, uid: `${name}-uid` },
    spec: { replicatedJobs: [{ name: 'w', replicas: 2, template: { spec: { parallelism: 2, template: podTemplate } } }] },
  }) as KObject;
const lws = (name: string): KObject =>
  ({
    apiVersion: 'leaderworkerset.x-k8s.io/v1',
    kind: 'LeaderWorkerSet',
    metadata: { name },
    spec: { replicas: 2, leaderWorkerTemplate: { size: 2, workerTemplate: podTemplate } },
  }) as KObject;
const pod = (name: string, extra: Partial<KObject['metadata']> = {}): KObject =>
  ({ apiVersion: 'v1', kind: 'Pod', metadata: { name, ...extra }, spec: { containers: [container] } }) as KObject;
const groupPod = (name: string) =>
  pod(name, {
    labels: { [KueueLabel.PodGroupName]: 'grp' },
    annotations: { 'kueue.x-k8s.io/pod-group-total-count': '2' },
  });
const node: KObject = { apiVersion: 'v1', kind: 'Node', metadata: { name: 'n1' } };

const docs = (...objects: KObject[]): SourcedObject[] =>
  objects.map((object, i) => ({ object, where: { file: 'all.yaml', document: i + 1 } }));

test('Registry: every integration is found by its apiVersion and kind', () => {
  for (const i of FRAMEWORKS) for (const k of i.kinds) assert.equal(integrationFor(k), i);
  assert.equal(integrationFor({ apiVersion: 'v1', kind: 'Node' }), undefined);
  assert.equal(integrationFor({ apiVersion: 'batch.volcano.sh/v1alpha1', kind: 'Job' })?.name, volcanoJobFramework.name);
  assert.equal(integrationFor({ apiVersion: 'batch/v2', kind: 'Job' }), undefined);
});

test('Registry: Workloads in input order, a pod group at its first member, other kinds ignored', () => {
  const r = workloadsFromObjects(docs(groupPod('b'), node, job('j'), jobSet('js'), pod('single'), lws('l'), groupPod('a')));
  assert.deepEqual(r.errors, []);
  assert.deepEqual(
    r.workloads.map((w) => [w.workload.metadata.name.replace(/-[0-9a-f]{5}$/, ''), w.source.document]),
    [
      ['grp', 1],
      ['job-j', 3],
      ['jobset-js', 4],
      ['pod-single', 5],
      ['leaderworkerset-l-0', 6],
      ['leaderworkerset-l-1', 6],
    ],
  );
});

test('Registry: children of a supported parent are covered by the parent', () => {
  const owned = (kind: string, apiVersion: string) => ({
    ownerReferences: [{ apiVersion, kind, name: 'parent', uid: 'p', controller: true }],
  });
  const r = workloadsFromObjects(
    docs(
      job('child', owned('JobSet', 'jobset.x-k8s.io/v1alpha2')),
      pod('job-pod', owned('Job', 'batch/v1')),
      pod('rs-pod', owned('ReplicaSet', 'apps/v1')),
    ),
  );
  assert.deepEqual(r.errors, []);
  assert.deepEqual(
    r.workloads.map((w) => w.workload.metadata.name.replace(/-[0-9a-f]{5}$/, '')),
    ['pod-rs-pod'],
  );
});

test('Registry: a supported kind at an unsupported version is an error naming what is accepted', () => {
  const r = workloadsFromObjects(docs(jobSet('old', 'jobset.x-k8s.io/v1alpha1')));
  assert.equal(r.workloads.length, 0);
  assert.deepEqual(
    r.errors.map((e) => e.message),
    ['all.yaml, document 1, apiVersion: unsupported apiVersion "jobset.x-k8s.io/v1alpha1" for JobSet; accepted: jobset.x-k8s.io/v1alpha2'],
  );
});

test('Registry: errors from every integration are collected, good objects still give Workloads', () => {
  const bad = { apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'bad' }, spec: 3 } as unknown as KObject;
  const r = workloadsFromObjects(docs(bad, job('ok'), groupPod('lonely')));
  assert.equal(r.workloads.length, 1);
  assert.deepEqual(
    r.errors.map((e) => [e.where.document, e.where.object]),
    [
      [1, 'Job/default/bad'],
      [3, 'Pod/default/lonely'],
    ],
  );
});
