import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Pod } from '../api/objects.ts';
import { VirtualClock } from './clock.ts';
import { MemoryStore } from './memory-store.ts';
import { runObjectStoreConformance } from './store-conformance.ts';

runObjectStoreConformance('memory', async () => ({ store: new MemoryStore({ clock: new VirtualClock() }), close: async () => {} }));

const pod = (name: string): Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: 'ns' },
  spec: { containers: [{ name: 'c' }] },
});

describe('memory store: what the contract leaves to the implementation', () => {
  it('numbers resourceVersions from 1 and stamps creationTimestamp from its clock', async () => {
    const store = new MemoryStore({ clock: new VirtualClock() });
    const p = await store.create(pod('a'));
    assert.equal(p.metadata.resourceVersion, '1');
    assert.equal(p.metadata.creationTimestamp, '2026-01-01T00:00:00Z');
  });

  it('stored objects are read-only', async () => {
    const store = new MemoryStore({ clock: new VirtualClock() });
    const p = await store.create(pod('a'));
    assert.throws(() => {
      (p.metadata as { name: string }).name = 'b';
    });
  });

  it('keeps no watch history: a watch from an older resourceVersion is refused', async () => {
    const store = new MemoryStore({ clock: new VirtualClock() });
    await store.create(pod('a'));
    await store.create(pod('b'));
    assert.throws(() => store.watch('Pod', () => {}, { resourceVersion: '1' }), /too old resource version: 1 \(2\)/);
  });

  it('reads are typed by kind, and kinds outside the map take a type argument (checked by tsc)', async () => {
    const store = new MemoryStore({ clock: new VirtualClock() });
    await store.create(pod('a'));
    const got = await store.get('Pod', 'ns', 'a');
    const containers: string[] = got?.spec.containers.map((c) => c.name) ?? [];
    assert.deepEqual(containers, ['c']);
    const listed: Pod[] = (await store.list('Pod')).items;
    assert.equal(listed.length, 1);
    // @ts-expect-error a Node has no containers
    assert.equal((await store.get('Node', undefined, 'a'))?.spec.containers, undefined);
    const other = await store.get<Pod>('Job', 'ns', 'a');
    assert.equal(other, undefined);
  });
});
