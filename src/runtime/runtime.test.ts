import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Pod } from '../api/objects.ts';
import { VirtualClock } from './clock.ts';
import { Informer } from './informer.ts';
import { Manager } from './manager.ts';
import { MemoryStore } from './memory-store.ts';

const pod = (name: string, labels: Record<string, string> = {}): Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: 'ns', labels },
  spec: { containers: [{ name: 'c' }] },
});

function setup() {
  const clock = new VirtualClock();
  return { clock, store: new MemoryStore({ clock }) };
}

// The store's contract is checked by the conformance suite (store-conformance.ts, run by memory-store.test.ts).

describe('informer', () => {
  it('lists then follows the watch, with indexes', async () => {
    const { store } = setup();
    await store.create(pod('a', { app: 'x' }));
    const inf = new Informer<Pod>(store, 'Pod');
    inf.addIndex('app', (p) => [p.metadata.labels?.app ?? '']);
    await inf.start();
    await store.create(pod('b', { app: 'x' }));
    assert.deepEqual(
      inf
        .byIndex('app', 'x')
        .map((p) => p.metadata.name)
        .sort(),
      ['a', 'b'],
    );
    await store.delete('Pod', 'ns', 'a');
    assert.deepEqual(
      inf.byIndex('app', 'x').map((p) => p.metadata.name),
      ['b'],
    );
    assert.equal(inf.get('ns/b')?.metadata.name, 'b');
  });

  it('lists by namespace in the order the items came, first asked late, then kept current', async () => {
    const { store } = setup();
    const inf = new Informer<Pod>(store, 'Pod');
    await inf.start();
    for (const n of ['c', 'a', 'b']) await store.create(pod(n));
    await store.create({ ...pod('z'), metadata: { name: 'z', namespace: 'other' } });
    await store.delete('Pod', 'ns', 'a');
    await store.create(pod('a'));
    assert.deepEqual(
      inf.list('ns').map((p) => p.metadata.name),
      ['c', 'b', 'a'],
    );
    await store.create(pod('d'));
    await store.delete('Pod', 'ns', 'c');
    assert.deepEqual([...inf.indexKeys('namespace', 'ns')], ['ns/b', 'ns/a', 'ns/d']);
    assert.deepEqual(
      inf.list('other').map((p) => p.metadata.name),
      ['z'],
    );
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
      setup: (ctx, q) => ctx.informers.for('Pod').addHandler({ add: (p) => q.add(p.metadata.name) }),
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

  it('topoqueue_reconcile_total counts every reconcile by controller and result when read, and goes on counting', async () => {
    const { store, clock } = setup();
    const m = new Manager({ store, clock, config: {} });
    let fail = 1;
    m.add({
      name: 'c',
      setup: (ctx, q) => ctx.informers.for('Pod').addHandler({ add: (p) => q.add(p.metadata.name) }),
      reconcile: async () => {
        if (fail-- > 0) throw new Error('boom');
      },
    });
    await m.start();
    const counts = async () =>
      (await m.metrics.reconcileTotal.get()).values.map((v) => `${v.labels.controller}/${v.labels.result}=${v.value}`);
    assert.deepEqual(await counts(), []);
    await store.create(pod('a'));
    await m.run();
    assert.deepEqual(await counts(), ['c/error=1', 'c/success=1']);
    await store.create(pod('b'));
    await m.run();
    assert.deepEqual(await counts(), ['c/error=1', 'c/success=2']);
    assert.match(await m.metrics.text(), /topoqueue_reconcile_total\{controller="c",result="success"\} 2/);
  });
});
