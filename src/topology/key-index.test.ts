import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { fnv1a, KeyIndex, type KeyHash } from './key-index.ts';

/** The ids a KeyIndex must hand out: dense, a freed id reused last-freed first. */
class Model {
  readonly ids = new Map<string, number>();
  private readonly free: number[] = [];
  private next = 0;
  intern(k: string): number {
    let id = this.ids.get(k);
    if (id === undefined) {
      id = this.free.pop() ?? this.next++;
      this.ids.set(k, id);
    }
    return id;
  }
  delete(k: string): number {
    const id = this.ids.get(k);
    if (id === undefined) return -1;
    this.ids.delete(k);
    this.free.push(id);
    return id;
  }
}

describe('KeyIndex', () => {
  it("hands out dense ids, and a deleted key's id serves the next key", () => {
    const t = new KeyIndex();
    assert.deepEqual(
      ['a', 'b', 'c'].map((k) => t.intern(k)),
      [0, 1, 2],
    );
    assert.equal(t.intern('b'), 1);
    assert.equal(t.size, 3);
    assert.equal(t.delete('b'), 1);
    assert.equal(t.delete('b'), -1);
    assert.equal(t.find('b'), -1);
    assert.equal(t.intern('d'), 1);
    assert.equal(t.key(1), 'd');
    assert.equal(t.find('c'), 2);
    assert.equal(t.size, 3);
  });

  it('keeps every key through growth: 100,000 keys, half deleted, found by the ids they were given', () => {
    const t = new KeyIndex();
    const keys = Array.from({ length: 100_000 }, (_, i) => `ns-${i % 97}/pod-${i}`);
    keys.forEach((k, i) => assert.equal(t.intern(k), i));
    for (let i = 0; i < keys.length; i += 2) t.delete(keys[i]!);
    assert.equal(t.size, 50_000);
    for (let i = 0; i < keys.length; i++) assert.equal(t.find(keys[i]!), i % 2 === 0 ? -1 : i);
  });

  it('agrees with a Map under any sequence of interning and deleting, hashes colliding or not (property)', async () => {
    const fc = (await import('fast-check')).default;
    // Few distinct hashes make long runs that wrap past the table's end, so deletion's
    // backward shift is exercised; the identity-free hash is the normal case.
    const hashes: [string, KeyHash][] = [
      ['fnv1a', fnv1a],
      ['8 values near the end', (k) => 1020 + (k.length % 8)],
      ['2 values', (k) => (k.charCodeAt(k.length - 1) % 2) * 1023],
    ];
    for (const [, hash] of hashes) {
      fc.assert(
        fc.property(fc.array(fc.record({ del: fc.boolean(), k: fc.integer({ min: 0, max: 60 }) }), { maxLength: 200 }), (ops) => {
          const t = new KeyIndex(hash);
          const m = new Model();
          for (const { del, k } of ops) {
            const key = `k${'x'.repeat(k % 5)}${k}`;
            if (del) assert.equal(t.delete(key), m.delete(key));
            else assert.equal(t.intern(key), m.intern(key));
          }
          assert.equal(t.size, m.ids.size);
          assert.equal(t.degraded, false); // the table itself answered
          for (let k = 0; k <= 60; k++) {
            const key = `k${'x'.repeat(k % 5)}${k}`;
            assert.equal(t.find(key), m.ids.get(key) ?? -1);
          }
        }),
        { numRuns: 200, seed: 16 },
      );
    }
  });

  it('keys whose hashes all collide move to a Map past the probe limit, with the ids they had', () => {
    const t = new KeyIndex(() => 7);
    const m = new Model();
    for (let i = 0; i < 100; i++) assert.equal(t.intern(`k${i}`), m.intern(`k${i}`));
    assert.equal(t.degraded, false);
    for (let i = 100; i < 300; i++) assert.equal(t.intern(`k${i}`), m.intern(`k${i}`));
    assert.equal(t.degraded, true);
    for (let i = 0; i < 300; i += 3) assert.equal(t.delete(`k${i}`), m.delete(`k${i}`));
    for (let i = 300; i < 350; i++) assert.equal(t.intern(`k${i}`), m.intern(`k${i}`));
    assert.equal(t.size, m.ids.size);
    for (let i = 0; i < 350; i++) assert.equal(t.find(`k${i}`), m.ids.get(`k${i}`) ?? -1);
  });
});
