import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KObject, Pod } from '../api/objects.ts';
import { VirtualClock } from './clock.ts';
import { Informer } from './informer.ts';
import { Manager } from './manager.ts';
import { MemoryStore } from './memory-store.ts';
import { ConflictError, InvalidError, isNotFound, NotFoundError, retryOnConflict, type WatchEvent } from './store.ts';

const pod = (name: string, labels: Record<string, string> = {}): Pod => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'ns', labels }, spec: { containers: [{ name: 'c' }] } });

function setup() {
  const clock = new VirtualClock();
  return { clock, store: new MemoryStore({ clock }) };
}

describe('memory store: Kubernetes semantics', () => {
  it('create sets uid, resourceVersion, creationTimestamp and refuses a duplicate', async () => {
    const { store } = setup();
    const p = await store.create(pod('a'));
    assert.ok(p.metadata.uid);
    assert.equal(p.metadata.resourceVersion, '1');
    assert.equal(p.metadata.creationTimestamp, '2026-01-01T00:00:00Z');
    await assert.rejects(store.create(pod('a')), /pods "a" already exists/);
  });

  it('update with a stale resourceVersion is a conflict', async () => {
    const { store } = setup();
    const p = await store.create(pod('a'));
    await store.update({ ...structuredClone(p), metadata: { ...structuredClone(p.metadata), labels: { x: '1' } } });
    await assert.rejects(store.update(structuredClone(p)), ConflictError);
  });

  it('update never changes status; updateStatus changes only status', async () => {
    const { store } = setup();
    const p = await store.create(pod('a'));
    const u = await store.update({ ...structuredClone(p), status: { phase: 'Running' } });
    assert.equal(u.status, undefined);
    const s = await store.updateStatus({ ...structuredClone(u), metadata: { ...structuredClone(u.metadata), labels: { changed: 'yes' } }, status: { phase: 'Running' } });
    assert.equal(s.status?.phase, 'Running');
    assert.deepEqual(s.metadata.labels, {});
  });

  it('delete with finalizers sets deletionTimestamp; removing the last finalizer removes the object', async () => {
    const { store } = setup();
    await store.create({ ...pod('a'), metadata: { ...pod('a').metadata, finalizers: ['f'] } });
    const left = await store.delete<Pod>('Pod', 'ns', 'a');
    assert.ok(left?.metadata.deletionTimestamp);
    await retryOnConflict<Pod>(store, 'Pod', 'ns', 'a', (o) => {
      o.metadata.finalizers = [];
    });
    assert.equal(await store.get('Pod', 'ns', 'a'), undefined);
  });

  it('stored objects are read-only', async () => {
    const { store } = setup();
    const p = await store.create(pod('a'));
    assert.throws(() => {
      (p.metadata as { name: string }).name = 'b';
    });
  });

  it('admission hooks mutate, then validate; a denial names the hook', async () => {
    const { store } = setup();
    store.addAdmissionHook({ name: 'v', kinds: ['Pod'], operations: ['CREATE'], type: 'validating', admit: (r) => (r.object.metadata.labels?.ok ? undefined : { denied: ['metadata.labels.ok: Required value'] }) });
    store.addAdmissionHook({ name: 'm', kinds: ['Pod'], operations: ['CREATE'], type: 'mutating', admit: (r) => void (r.object.metadata.labels = { ...r.object.metadata.labels, ok: 'yes' }) });
    const p = await store.create(pod('a'));
    assert.equal(p.metadata.labels?.ok, 'yes');
    const { store: s2 } = setup();
    s2.addAdmissionHook({ name: 'v', kinds: ['Pod'], operations: ['CREATE'], type: 'validating', admit: () => ({ denied: ['nope'] }) });
    await assert.rejects(s2.create(pod('a')), (e: unknown) => e instanceof InvalidError && e.message === 'admission webhook "v" denied the request: nope');
  });

  it('list filters by namespace and label selector; get of a missing object is undefined, delete is NotFound', async () => {
    const { store } = setup();
    await store.create(pod('a', { app: 'x' }));
    await store.create(pod('b', { app: 'y' }));
    const r = await store.list<Pod>('Pod', { namespace: 'ns', labelSelector: { matchLabels: { app: 'x' } } });
    assert.deepEqual(r.items.map((p) => p.metadata.name), ['a']);
    assert.equal(await store.get('Pod', 'ns', 'zzz'), undefined);
    await assert.rejects(store.delete('Pod', 'ns', 'zzz'), (e: unknown) => isNotFound(e) && e instanceof NotFoundError);
  });

  it('watch sees ADDED, MODIFIED and DELETED in commit order', async () => {
    const { store } = setup();
    const seen: string[] = [];
    store.watch('Pod', (e: WatchEvent<KObject>) => seen.push(`${e.type}:${e.object.metadata.name}`));
    const p = await store.create(pod('a'));
    await store.updateStatus({ ...structuredClone(p), status: { phase: 'Running' } });
    await store.delete('Pod', 'ns', 'a');
    assert.deepEqual(seen, ['ADDED:a', 'MODIFIED:a', 'DELETED:a']);
  });
});

describe('informer', () => {
  it('lists then follows the watch, with indexes', async () => {
    const { store } = setup();
    await store.create(pod('a', { app: 'x' }));
    const inf = new Informer<Pod>(store, 'Pod');
    inf.addIndex('app', (p) => [p.metadata.labels?.app ?? '']);
    await inf.start();
    await store.create(pod('b', { app: 'x' }));
    assert.deepEqual(inf.byIndex('app', 'x').map((p) => p.metadata.name).sort(), ['a', 'b']);
    await store.delete('Pod', 'ns', 'a');
    assert.deepEqual(inf.byIndex('app', 'x').map((p) => p.metadata.name), ['b']);
    assert.equal(inf.get('ns/b')?.metadata.name, 'b');
  });
});

describe('manager', () => {
  it('coalesces keys, retries failures with backoff in virtual time, and timers move the clock', async () => {
    const { store, clock } = setup();
    const m = new Manager({ store, clock, config: {} });
    const calls: string[] = [];
    let fail = 2;
    m.add({
      name: 'c',
      setup: (ctx, q) => ctx.informers.for<Pod>('Pod').addHandler({ add: (p) => q.add(p.metadata.name) }),
      reconcile: async (key) => {
        calls.push(`${key}@${clock.now() - Date.UTC(2026, 0, 1)}`);
        if (fail-- > 0) throw new Error('boom');
        return key === 'a' && calls.length < 4 ? { requeueAfterMs: 1000 } : undefined;
      },
    });
    await m.start();
    await store.create(pod('a'));
    await m.run();
    assert.deepEqual(calls, ['a@0', 'a@5', 'a@15', 'a@1015']);
    assert.equal(m.errors.length, 2);
  });
});
