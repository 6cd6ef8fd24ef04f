// The client-backed store against the API server over HTTP, through @kubernetes/client-node:
// the ObjectStore conformance suite (a fresh API server and store per case), then what only
// a remote store has: a kind the server does not serve, relisting after the server lost the
// watch history, and the request log the RBAC rules are checked against.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Pod } from '../api/objects.ts';
import { RealClock } from '../runtime/clock.ts';
import { MemoryStore } from '../runtime/memory-store.ts';
import { isConflict, retryOnConflict } from '../runtime/store.ts';
import { runObjectStoreConformance } from '../runtime/store-conformance.ts';
import { ClientStore, kubeConfigFor } from './client-store.ts';
import { TokenBucket } from './rate-limiter.ts';
import { ApiServer } from './server.ts';

async function serverAndStore(opts: { watchLogCapacity?: number } = {}) {
  const clock = new RealClock();
  const memory = new MemoryStore({ clock });
  const api = new ApiServer({ store: memory, clock, watchLogCapacity: opts.watchLogCapacity, bookmarkMs: 200 });
  const port = await api.listen(0);
  const store = new ClientStore({ kubeConfig: kubeConfigFor(`http://127.0.0.1:${port}`), qps: 1000, burst: 1000, writeWaitMs: 2000 });
  return {
    memory,
    api,
    store,
    close: async () => {
      store.close();
      await api.close();
    },
  };
}

const ADMISSION =
  'admission runs in the API server, which calls the webhooks the controller serves (webhook-server.ts); this store only collects the hooks';

runObjectStoreConformance('client-node over HTTP', serverAndStore, {
  unsupported: {
    'admission runs every mutating hook in registration order, then every validating hook': ADMISSION,
    'an admission denial is Invalid (422) naming the hook, and writes nothing': ADMISSION,
    'admission hooks see the operation, the old object, and only their kinds and operations': ADMISSION,
    'admission skips status writes unless a hook includes status, which sees the subresource': ADMISSION,
  },
});

const pod = (name: string): Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: 'ns' },
  spec: { containers: [{ name: 'c', image: 'x' }] },
});

describe('client-backed store', () => {
  it('a kind of two groups reads as the union of both (batch/v1 and Volcano Jobs)', async () => {
    const { memory, store, close } = await serverAndStore();
    try {
      await memory.create({
        apiVersion: 'batch/v1',
        kind: 'Job',
        metadata: { name: 'plain', namespace: 'ns' },
        spec: { template: { spec: { containers: [] } } },
      });
      await memory.create({
        apiVersion: 'batch.volcano.sh/v1alpha1',
        kind: 'Job',
        metadata: { name: 'vc', namespace: 'ns' },
        spec: { tasks: [] },
      });
      const jobs = await store.list('Job');
      assert.deepEqual(jobs.items.map((j) => `${j.apiVersion} ${j.metadata.name}`).sort(), [
        'batch.volcano.sh/v1alpha1 vc',
        'batch/v1 plain',
      ]);
      assert.equal((await store.get('Job', 'ns', 'vc'))?.apiVersion, 'batch.volcano.sh/v1alpha1');
    } finally {
      await close();
    }
  });

  it('relists after the server lost the watch history (410) and turns what vanished into DELETED', async () => {
    const { memory, api, store, close } = await serverAndStore({ watchLogCapacity: 2 });
    try {
      await memory.create(pod('a'));
      await memory.create(pod('b'));
      const seen: string[] = [];
      await store.list('Pod');
      store.watch('Pod', (e) => seen.push(`${e.type}:${e.object.metadata.name}`));
      api.closeWatches();
      // While the reflector is away, more happens than the server's log keeps.
      await memory.delete('Pod', 'ns', 'a');
      for (const n of ['c', 'd', 'e', 'f']) await memory.create(pod(n));
      const deadline = Date.now() + 5000;
      while (!seen.includes('ADDED:f') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      assert.ok(seen.includes('DELETED:a'), `a vanished while the watch was down: ${seen.join(' ')}`);
      assert.deepEqual((await store.list('Pod')).items.map((p) => p.metadata.name).sort(), ['b', 'c', 'd', 'e', 'f']);
    } finally {
      await close();
    }
  });

  it('counts its requests per verb and resource, and the token bucket throttles past the burst', async () => {
    const { store, close } = await serverAndStore();
    try {
      await store.list('Pod');
      await store.create(pod('a'));
      assert.equal(store.requests.get('GET v1/pods'), 1);
      assert.equal(store.requests.get('POST v1/pods'), 1);
      assert.equal(store.requests.get('WATCH v1/pods'), 1);
    } finally {
      await close();
    }
    let t = 0;
    const bucket = new TokenBucket(10, 2, () => t);
    assert.deepEqual(
      [bucket.reserve(), bucket.reserve(), bucket.reserve()],
      [0, 0, 100],
      'the third request in the same instant waits 1/qps',
    );
    t = 1000;
    assert.equal(bucket.reserve(), 0, 'tokens come back at qps');
  });
});

/** A Pod as a real cluster holds one once kubectl applied it and the kubelet started it: managedFields, the last-applied annotation, container statuses, IPs. */
function clusterPod(name: string): Pod {
  const applied = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'ns', labels: { app: 'trainer', 'kueue.x-k8s.io/queue-name': 'q' } },
    spec: {
      schedulingGates: [{ name: 'kueue.x-k8s.io/admission' }],
      containers: [
        { name: 'c', image: 'registry.example.com/team/trainer:v1.2.3', resources: { requests: { cpu: '4', 'nvidia.com/gpu': '8' } } },
      ],
    },
  };
  const fields = (manager: string, operation: string, subresource?: string) => ({
    manager,
    operation,
    apiVersion: 'v1',
    time: '2026-01-01T00:00:00Z',
    fieldsType: 'FieldsV1',
    ...(subresource ? { subresource } : {}),
    fieldsV1: {
      'f:metadata': { 'f:labels': { '.': {}, 'f:app': {}, 'f:kueue.x-k8s.io/queue-name': {} } },
      'f:spec': {
        'f:containers': { 'k:{"name":"c"}': { '.': {}, 'f:image': {}, 'f:imagePullPolicy': {}, 'f:name': {}, 'f:resources': {} } },
      },
      'f:status': {
        'f:conditions': {},
        'f:containerStatuses': {},
        'f:hostIP': {},
        'f:hostIPs': {},
        'f:phase': {},
        'f:podIP': {},
        'f:podIPs': {},
      },
    },
  });
  return {
    ...(applied as Pod),
    metadata: {
      ...applied.metadata,
      annotations: { 'kubectl.kubernetes.io/last-applied-configuration': JSON.stringify(applied) + '\n', 'example.com/owner': 'team-a' },
      managedFields: [fields('kubectl-client-side-apply', 'Update'), fields('kubelet', 'Update', 'status')],
    } as Pod['metadata'],
    status: {
      phase: 'Running',
      conditions: [{ type: 'Ready', status: 'True' }],
      hostIP: '10.0.3.17',
      hostIPs: [{ ip: '10.0.3.17' }],
      podIP: '10.244.3.9',
      podIPs: [{ ip: '10.244.3.9' }, { ip: 'fd00:10:244:3::9' }],
      qosClass: 'Burstable',
      startTime: '2026-01-01T00:00:01Z',
      containerStatuses: [
        {
          name: 'c',
          ready: true,
          restartCount: 0,
          started: true,
          image: 'registry.example.com/team/trainer:v1.2.3',
          imageID: 'registry.example.com/team/trainer@sha256:5f0c1f6b4b3e0e8d2f9a7c6b5a4d3c2b1a0f9e8d7c6b5a4d3c2b1a0f9e8d7c6b',
          containerID: 'containerd://8d7c6b5a4d3c2b1a0f9e8d7c6b5a4d3c2b1a0f9e8d7c6b5a4d3c2b1a0f9e8d7c',
          state: { running: { startedAt: '2026-01-01T00:00:02Z' } },
          lastState: {},
          volumeMounts: [
            {
              name: 'kube-api-access-x7k2p',
              mountPath: '/var/run/secrets/kubernetes.io/serviceaccount',
              readOnly: true,
              recursiveReadOnly: 'Disabled',
            },
          ],
          allocatedResources: { cpu: '4', 'nvidia.com/gpu': '8' },
          resources: { requests: { cpu: '4', 'nvidia.com/gpu': '8' } },
        },
      ],
    } as Pod['status'],
  };
}

describe('client-backed store: stripping on ingest', () => {
  it('caches objects without what no controller reads (managedFields, last-applied, container statuses, IPs): fewer bytes per Pod', async () => {
    const { memory, store, close } = await serverAndStore();
    try {
      const full = await memory.create(clusterPod('p'));
      const cached = (await store.get<Pod>('Pod', 'ns', 'p'))!;
      const before = JSON.stringify(full).length;
      const after = JSON.stringify(cached).length;
      const md = cached.metadata as Pod['metadata'] & { managedFields?: unknown };
      assert.equal(md.managedFields, undefined);
      assert.deepEqual(md.annotations, { 'example.com/owner': 'team-a' }, 'other annotations stay');
      const status = cached.status as Record<string, unknown>;
      for (const f of ['containerStatuses', 'podIP', 'podIPs', 'hostIP', 'hostIPs', 'qosClass']) assert.equal(status[f], undefined, f);
      assert.deepEqual(
        [cached.status?.phase, cached.status?.conditions],
        ['Running', [{ type: 'Ready', status: 'True' }]],
        'what the controllers read stays',
      );
      assert.deepEqual(cached.spec, full.spec);
      assert.ok(after * 3 < before, `bytes per cached Pod: ${before} -> ${after}`);
    } finally {
      await close();
    }
  });

  it('a write from a stripped object loses nothing on the server (a merge patch of the change)', async () => {
    const { memory, store, close } = await serverAndStore();
    try {
      const full = await memory.create(clusterPod('p'));
      // The ungater's write: gates lifted, a node selector and a label added.
      await retryOnConflict<Pod>(store, 'Pod', 'ns', 'p', (p) => {
        p.spec.schedulingGates = [];
        p.spec.nodeSelector = { 'kubernetes.io/hostname': 'n1' };
        p.metadata.labels = { ...p.metadata.labels, 'kueue.x-k8s.io/podset': 'main' };
        delete p.metadata.labels!.app;
      });
      // A status write: a condition added.
      await retryOnConflict<Pod>(
        store,
        'Pod',
        'ns',
        'p',
        (p) => {
          p.status = { ...p.status, conditions: [...(p.status?.conditions ?? []), { type: 'TerminationTarget', status: 'True' }] };
        },
        { status: true },
      );
      const server = memory.getSync<Pod>('Pod', 'ns', 'p')!;
      const md = server.metadata as Pod['metadata'] & { managedFields?: unknown };
      assert.deepEqual(md.managedFields, (full.metadata as typeof md).managedFields, 'managedFields kept');
      assert.deepEqual(md.annotations, full.metadata.annotations, 'the last-applied annotation kept');
      const status = server.status as Record<string, unknown>;
      const was = full.status as Record<string, unknown>;
      for (const f of ['containerStatuses', 'podIP', 'podIPs', 'hostIP', 'hostIPs', 'qosClass', 'startTime'])
        assert.deepEqual(status[f], was[f], f);
      assert.deepEqual(
        server.status?.conditions?.map((c) => c.type),
        ['Ready', 'TerminationTarget'],
        'the status write applied',
      );
      assert.deepEqual(server.spec.schedulingGates, [], 'the update applied');
      assert.deepEqual(server.spec.nodeSelector, { 'kubernetes.io/hostname': 'n1' });
      assert.deepEqual(
        server.metadata.labels,
        { 'kueue.x-k8s.io/queue-name': 'q', 'kueue.x-k8s.io/podset': 'main' },
        'a removed label removed',
      );
      assert.deepEqual(
        [store.requests.get('PATCH v1/pods/p'), store.requests.get('PATCH v1/pods/p/status'), store.requests.get('PUT v1/pods/p')],
        [1, 1, undefined],
        'both writes went as merge patches',
      );
      // A stale resourceVersion is still a conflict.
      const stale = structuredClone((await store.get<Pod>('Pod', 'ns', 'p'))!);
      await memory.update({
        ...memory.getSync<Pod>('Pod', 'ns', 'p')!,
        metadata: { ...memory.getSync<Pod>('Pod', 'ns', 'p')!.metadata, labels: { x: 'y' } },
      });
      await new Promise((r) => setTimeout(r, 200));
      stale.metadata.labels = { z: 'z' };
      await assert.rejects(store.update(stale), (e: Error) => isConflict(e));
    } finally {
      await close();
    }
  });
});
