// Server-side apply, approximated (kubectl-facade.md §7.3): create, merge, and removal of what
// the same manager applied before and no longer applies.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PatchError, serverSideApply } from './index.js';

const job = (containers: unknown[], extra: Record<string, unknown> = {}) => ({
  apiVersion: 'batch/v1',
  kind: 'Job',
  metadata: { name: 'train', namespace: 'default', ...extra },
  spec: { parallelism: 2, template: { spec: { restartPolicy: 'Never', containers } } },
});

const applyJob = (live: unknown, previous: unknown, applied: unknown) =>
  serverSideApply({ apiVersion: 'batch/v1', kind: 'Job', live, previous, applied });

test('apply to a missing object creates it from the configuration', () => {
  const applied = job([{ name: 'main', image: 'busybox:1' }]);
  const created = applyJob(undefined, undefined, applied);
  assert.deepStrictEqual(created, applied);
  assert.notEqual(created, applied);
});

test('first apply to an existing object merges and keeps fields set by others', () => {
  const live = { ...job([{ name: 'main', image: 'busybox:1' }], { labels: { owner: 'ops' } }), status: { active: 1 } };
  const out = applyJob(live, undefined, job([{ name: 'main', image: 'busybox:2' }], { labels: { app: 'x' } }));
  assert.deepStrictEqual(out, {
    ...job([{ name: 'main', image: 'busybox:2' }], { labels: { owner: 'ops', app: 'x' } }),
    status: { active: 1 },
  });
});

test('a field the manager applied before and no longer applies is removed; others stay', () => {
  const previous = { ...job([{ name: 'main', image: 'busybox:1' }], { labels: { app: 'x', tier: 'be' } }) };
  const live = job([{ name: 'main', image: 'busybox:1' }], { labels: { app: 'x', tier: 'be', owner: 'ops' } });
  const applied = job([{ name: 'main', image: 'busybox:1' }], { labels: { app: 'x' } });
  delete (applied.spec as { parallelism?: number }).parallelism;
  const out = applyJob(live, previous, applied) as { metadata: { labels: unknown }; spec: object };
  assert.deepStrictEqual(out.metadata.labels, { app: 'x', owner: 'ops' });
  assert.equal((out.spec as { parallelism?: number }).parallelism, undefined);
});

test('built-in lists merge by key: dropped elements go, elements others added stay', () => {
  const previous = job([
    {
      name: 'main',
      image: 'busybox:1',
      env: [
        { name: 'A', value: '1' },
        { name: 'B', value: '2' },
      ],
    },
    { name: 'side', image: 'busybox:1' },
  ]);
  const live = job([
    {
      name: 'main',
      image: 'busybox:1',
      env: [
        { name: 'A', value: '1' },
        { name: 'B', value: '2' },
        { name: 'INJECTED', value: 'y' },
      ],
    },
    { name: 'side', image: 'busybox:1' },
    { name: 'proxy', image: 'envoy:1' },
  ]);
  const applied = job([{ name: 'main', image: 'busybox:1', env: [{ name: 'A', value: '1' }] }]);
  const out = applyJob(live, previous, applied) as ReturnType<typeof job>;
  assert.deepStrictEqual(out.spec.template.spec.containers, [
    {
      name: 'main',
      image: 'busybox:1',
      env: [
        { name: 'A', value: '1' },
        { name: 'INJECTED', value: 'y' },
      ],
    },
    { name: 'proxy', image: 'envoy:1' },
  ]);
});

test('primitive merge lists lose only the members the manager dropped; atomic lists are replaced', () => {
  const pod = (finalizers: string[], tolerations: unknown[]) => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'p', finalizers },
    spec: { containers: [{ name: 'c', image: 'x' }], tolerations },
  });
  const out = serverSideApply({
    apiVersion: 'v1',
    kind: 'Pod',
    live: pod(['a.io/x', 'b.io/y', 'other.io/z'], [{ key: 'a' }, { key: 'b' }]),
    previous: pod(['a.io/x', 'b.io/y'], [{ key: 'a' }, { key: 'b' }]),
    applied: pod(['a.io/x'], [{ key: 'c' }]),
  });
  assert.deepStrictEqual(out, pod(['a.io/x', 'other.io/z'], [{ key: 'c' }]));
});

test('custom resources merge as RFC 7386: lists are replaced whole', () => {
  const wl = (podSets: unknown[], labels: Record<string, string>) => ({
    apiVersion: 'kueue.x-k8s.io/v1beta2',
    kind: 'Workload',
    metadata: { name: 'w', labels },
    spec: { queueName: 'lq', podSets },
  });
  const out = serverSideApply({
    apiVersion: 'kueue.x-k8s.io/v1beta2',
    kind: 'Workload',
    live: {
      ...wl(
        [
          { name: 'a', count: 1 },
          { name: 'b', count: 1 },
        ],
        { team: 'a', extra: 'e' },
      ),
      status: { admission: {} },
    },
    previous: wl(
      [
        { name: 'a', count: 1 },
        { name: 'b', count: 1 },
      ],
      { team: 'a' },
    ),
    applied: wl([{ name: 'a', count: 3 }], {}),
  });
  assert.deepStrictEqual(out, { ...wl([{ name: 'a', count: 3 }], { extra: 'e' }), status: { admission: {} } });
});

test('an applied configuration that is not an object is a 400', () => {
  assert.throws(
    () => serverSideApply({ apiVersion: 'v1', kind: 'Pod', live: {}, previous: undefined, applied: [1] }),
    (e: unknown) => e instanceof PatchError && e.code === 400,
  );
});
