import { test } from 'node:test';
import assert from 'node:assert/strict';
import { KueueLabel } from '../api/keys.ts';
import type { KObject, PodSet, PodTemplateSpec } from '../api/objects.ts';
import {
  MAX_WORKLOAD_NAME_PREFIX,
  RESOURCE_IN_USE_FINALIZER,
  apiGroup,
  manifestUid,
  ownedWorkload,
  ownerUid,
  podSetTemplate,
  sha1Hex,
  workloadNameForOwner,
} from './workload-name.ts';
import { isLabelValue } from '../api/names.ts';

const job = (metadata: Partial<KObject['metadata']> = {}): KObject => ({
  apiVersion: 'batch/v1',
  kind: 'Job',
  metadata: { name: 'train', ...metadata },
});

const mainPodSet = (spec: Partial<PodTemplateSpec['spec']> = {}): PodSet => ({
  name: 'main',
  count: 1,
  template: { spec: { containers: [{ name: 'c' }], ...spec } },
});

test('Workload naming: Job, group batch, name `name`, uid `uid` -> job-name-ef3a1', () => {
  assert.equal(workloadNameForOwner({ kind: 'Job', group: 'batch', name: 'name', uid: 'uid' }), 'job-name-ef3a1');
  // The hash input is Kind \n Group \n name \n uid, verbatim.
  assert.equal(sha1Hex('Job\nbatch\nname\nuid').slice(0, 5), 'ef3a1');
});

test('Workload naming: the prefix is cut to 253-6 characters, then -hash', () => {
  const name = 'a'.repeat(300);
  const wl = workloadNameForOwner({ kind: 'Job', group: 'batch', name, uid: 'uid' });
  assert.equal(MAX_WORKLOAD_NAME_PREFIX, 247);
  assert.equal(wl.length, 253);
  assert.equal(wl.slice(0, 247), `job-${name}`.slice(0, 247));
  // The hash is over the full owner name, not the cut one.
  assert.equal(wl.slice(248), sha1Hex(`Job\nbatch\n${name}\nuid`).slice(0, 5));
});

test('Workload naming: the core group is empty in the hash (Pod)', () => {
  assert.equal(apiGroup('v1'), '');
  assert.equal(apiGroup('jobset.x-k8s.io/v1alpha2'), 'jobset.x-k8s.io');
  const name = workloadNameForOwner({ kind: 'Pod', group: '', name: 'p', uid: 'u' });
  assert.equal(name, `pod-p-${sha1Hex('Pod\n\np\nu').slice(0, 5)}`);
});

test('Owner uid: metadata.uid when set, else derived from group, kind, namespace and name', () => {
  assert.equal(ownerUid(job({ uid: 'abc' })), 'abc');
  const derived = ownerUid(job());
  assert.match(derived, /^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  assert.ok(isLabelValue(derived));
  // Stable, and the namespace defaults to `default`.
  assert.equal(derived, ownerUid(job({ namespace: 'default' })));
  assert.equal(derived, manifestUid('batch', 'Job', 'default', 'train'));
  assert.notEqual(derived, ownerUid(job({ namespace: 'team-a' })));
  assert.notEqual(derived, manifestUid('jobset.x-k8s.io', 'JobSet', 'default', 'train'));
});

test('Owned Workload: job-uid label, controller owner reference, finalizer, queue name, namespace default', () => {
  const owner = job({ uid: 'u-1', labels: { [KueueLabel.QueueName]: 'user-queue' } });
  const wl = ownedWorkload(owner, [mainPodSet()]);
  assert.equal(wl.apiVersion, 'kueue.x-k8s.io/v1beta2');
  assert.equal(wl.kind, 'Workload');
  assert.equal(wl.metadata.name, workloadNameForOwner({ kind: 'Job', group: 'batch', name: 'train', uid: 'u-1' }));
  assert.equal(wl.metadata.namespace, 'default');
  assert.deepEqual(wl.metadata.labels, { [KueueLabel.JobUID]: 'u-1' });
  assert.deepEqual(wl.metadata.ownerReferences, [{ apiVersion: 'batch/v1', kind: 'Job', name: 'train', uid: 'u-1', controller: true }]);
  assert.deepEqual(wl.metadata.finalizers, [RESOURCE_IN_USE_FINALIZER]);
  assert.equal(wl.spec.queueName, 'user-queue');
});

test('Owned Workload: a uid that is not a label value gets no job-uid label', () => {
  const wl = ownedWorkload(job({ uid: 'not a label value!' }), [mainPodSet()]);
  assert.deepEqual(wl.metadata.labels, {});
});

test('Owned Workload: provreq annotations are copied, others are not', () => {
  const wl = ownedWorkload(job({ annotations: { 'provreq.kueue.x-k8s.io/maxRunDurationSeconds': '60', other: 'x' } }), [mainPodSet()]);
  assert.deepEqual(wl.metadata.annotations, { 'provreq.kueue.x-k8s.io/maxRunDurationSeconds': '60' });
});

test('Priority: 0 with no class anywhere, undefined when a class must be resolved', () => {
  assert.equal(ownedWorkload(job(), [mainPodSet()]).spec.priority, 0);
  assert.equal(ownedWorkload(job({ labels: { [KueueLabel.PriorityClass]: 'high' } }), [mainPodSet()]).spec.priority, undefined);
  assert.equal(ownedWorkload(job(), [mainPodSet({ priorityClassName: 'high' })]).spec.priority, undefined);
});

test('PodSet templates: a deep copy keeping labels and annotations only', () => {
  const original: PodTemplateSpec = {
    metadata: { name: 'dropped', labels: { a: '1' }, annotations: { b: '2' } },
    spec: { containers: [{ name: 'c', resources: { requests: { cpu: '1' } } }], nodeSelector: { zone: 'z1' } },
  };
  const copy = podSetTemplate(original, { extra: 'x' });
  assert.deepEqual(copy, {
    metadata: { labels: { a: '1' }, annotations: { b: '2', extra: 'x' } },
    spec: original.spec,
  });
  copy.spec.containers[0]!.resources!.requests!.cpu = '2';
  copy.metadata!.labels!.a = 'changed';
  assert.equal(original.spec.containers[0]!.resources!.requests!.cpu, '1');
  assert.equal(original.metadata!.labels!.a, '1');
  assert.equal(original.metadata!.annotations!.extra, undefined);
});
