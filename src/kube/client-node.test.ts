// @kubernetes/client-node 1.4 against the API server: typed list, Watch, an informer that
// relists after a 410, and a status patch with a resourceVersion precondition.

import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import * as k8s from '@kubernetes/client-node';
import { VirtualClock } from '../runtime/clock.ts';
import { MemoryStore } from '../runtime/memory-store.ts';
import { eventually } from '../testing/kube.ts';
import { ApiServer } from './server.ts';

const pod = (name: string): k8s.V1Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: 'default' },
  spec: { containers: [{ name: 'c', image: 'x' }] },
});

describe('@kubernetes/client-node against the API server', () => {
  let api: ApiServer;
  let http: Server;
  let kc: k8s.KubeConfig;
  const requests: string[] = [];
  before(async () => {
    const clock = new VirtualClock();
    const store = new MemoryStore({ clock });
    await store.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'default' } });
    api = new ApiServer({ store, clock, watchLogCapacity: 4 });
    http = createServer((req, res) => {
      requests.push(`${req.method} ${req.url}`);
      void api.handle(req, res);
    });
    await new Promise<void>((r) => http.listen(0, '127.0.0.1', r));
    kc = new k8s.KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: 'tq', server: `http://127.0.0.1:${(http.address() as AddressInfo).port}`, skipTLSVerify: true }],
      users: [{ name: 'anon' }],
      contexts: [{ name: 'tq', cluster: 'tq', user: 'anon', namespace: 'default' }],
      currentContext: 'tq',
    });
  });
  after(async () => {
    api.closeWatches();
    http.closeAllConnections();
    await new Promise<void>((r) => http.close(() => r()));
    await api.close();
  });

  it('creates and lists with the typed API', async () => {
    const core = kc.makeApiClient(k8s.CoreV1Api);
    await core.createNamespacedPod({ namespace: 'default', body: pod('listed') });
    const list = await core.listNamespacedPod({ namespace: 'default' });
    assert.deepEqual(
      list.items.map((p) => p.metadata?.name),
      ['listed'],
    );
    assert.match(list.metadata?.resourceVersion ?? '', /^\d+$/);
    assert.ok(list.items[0]!.metadata?.creationTimestamp instanceof Date);
  });

  it('watches: headers at once (an empty collection does not hang), then events', async () => {
    const events: string[] = [];
    const watch = new k8s.Watch(kc);
    const req = await watch.watch(
      '/api/v1/namespaces/empty/pods',
      {},
      (type, obj) => events.push(`${type} ${obj.metadata.name}`),
      () => {},
    );
    await kc
      .makeApiClient(k8s.CoreV1Api)
      .createNamespacedPod({ namespace: 'empty', body: { ...pod('watched'), metadata: { name: 'watched', namespace: 'empty' } } });
    await eventually(() => (events.includes('ADDED watched') ? true : undefined), 'the ADDED event');
    req.abort();
  });

  it('runs an informer that relists after a 410 and stays in step', async () => {
    const core = kc.makeApiClient(k8s.CoreV1Api);
    const informer = k8s.makeInformer(kc, '/api/v1/namespaces/default/pods', () => core.listNamespacedPod({ namespace: 'default' }));
    const seen = new Set<string>();
    informer.on('add', (p) => seen.add(p.metadata!.name!));
    informer.on('delete', (p) => seen.delete(p.metadata!.name!));
    await informer.start();
    await eventually(() => (seen.has('listed') ? true : undefined), 'the listed pod');
    // Writes of another kind push the pods' last event out of the log (capacity 4)...
    for (let i = 0; i < 8; i++) await core.createNamespace({ body: { metadata: { name: `filler-${i}` } } });
    const lists = () => requests.filter((r) => r.startsWith('GET /api/v1/namespaces/default/pods') && !r.includes('watch=true')).length;
    const before = lists();
    // ...so the re-watch after the server ends the stream gets 410 Expired, and the informer relists.
    api.closeWatches();
    await eventually(() => (lists() > before ? true : undefined), 'the relist after 410');
    assert.ok(requests.some((r) => r.includes('watch=true') && r.includes('resourceVersion=')));
    await core.createNamespacedPod({ namespace: 'default', body: pod('after-relist') });
    await core.deleteNamespacedPod({ namespace: 'default', name: 'listed' });
    await eventually(() => (seen.has('after-relist') && !seen.has('listed') ? true : undefined), 'live events after the relist');
    await informer.stop();
  });

  it('patches status with a resourceVersion precondition: 409 when stale, 200 when current', async () => {
    const custom = kc.makeApiClient(k8s.CustomObjectsApi);
    const wl = {
      apiVersion: 'kueue.x-k8s.io/v1beta2',
      kind: 'Workload',
      metadata: { name: 'wl1', namespace: 'default' },
      spec: {
        queueName: 'q',
        podSets: [
          {
            name: 'main',
            count: 1,
            template: { spec: { containers: [{ name: 'c', image: 'x', resources: { requests: { cpu: '1' } } }] } },
          },
        ],
      },
    };
    const created = (await custom.createNamespacedCustomObject({
      group: 'kueue.x-k8s.io',
      version: 'v1beta2',
      namespace: 'default',
      plural: 'workloads',
      body: wl,
    })) as k8s.KubernetesObject;
    const rv = created.metadata!.resourceVersion!;
    const merge = k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch);
    const args = (resourceVersion: string) => ({
      group: 'kueue.x-k8s.io',
      version: 'v1beta2',
      namespace: 'default',
      plural: 'workloads',
      name: 'wl1',
      body: {
        metadata: { resourceVersion },
        status: {
          conditions: [
            { type: 'QuotaReserved', status: 'False', reason: 'Pending', message: 'waiting', lastTransitionTime: '2026-01-01T00:00:00Z' },
          ],
        },
      },
    });
    const ok = (await custom.patchNamespacedCustomObjectStatus(args(rv), merge)) as k8s.KubernetesObject & {
      status: { conditions: { reason: string }[] };
    };
    assert.equal(ok.status.conditions[0]!.reason, 'Pending');
    assert.notEqual(ok.metadata!.resourceVersion, rv);
    await assert.rejects(
      () => custom.patchNamespacedCustomObjectStatus(args(rv), merge),
      (e: k8s.ApiException<string>) => {
        assert.equal(e.code, 409);
        const status = JSON.parse(e.body);
        assert.equal(status.reason, 'Conflict');
        assert.match(status.message, /^Operation cannot be fulfilled on workloads.kueue.x-k8s.io "wl1": the object has been modified/);
        return true;
      },
    );
  });
});
