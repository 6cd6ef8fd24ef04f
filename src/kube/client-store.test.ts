// The client-backed store against the API server over HTTP, through @kubernetes/client-node:
// the ObjectStore conformance suite (a fresh API server and store per case), then what only
// a remote store has: a kind the server does not serve, relisting after the server lost the
// watch history, and the request log the RBAC rules are checked against.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Pod } from '../api/objects.ts';
import { RealClock } from '../runtime/clock.ts';
import { MemoryStore } from '../runtime/memory-store.ts';
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
