import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { StringTable } from './strings.ts';

describe('StringTable', () => {
  it('equal texts get one copy: a text built again is answered with the first one', () => {
    const t = new StringTable();
    const parts = ['Quota reserved in ClusterQueue ', 'cq-1', ', wait time since queued was ', '7', 's'];
    const a = t.intern(parts.join(''));
    const b = t.intern(parts[0]! + parts[1]! + parts[2]! + parts[3]! + parts[4]!);
    assert.equal(a, b);
    assert.equal(t.size, 1);
  });

  it('keeps at most its limit: when full it starts afresh, and what it handed out stays equal to its text', () => {
    const t = new StringTable(3);
    const out = ['a', 'b', 'c', 'd', 'e'].map((s) => t.intern(`x-${s}`));
    assert.deepEqual(out, ['x-a', 'x-b', 'x-c', 'x-d', 'x-e']);
    assert.ok(t.size <= 3, `size ${t.size}`);
  });

  it('never changes a text: one not in Unicode normal form is kept as it was', () => {
    const t = new StringTable();
    const decomposed = 'caf\u0065\u0301 queue';
    assert.equal(t.intern(decomposed), decomposed);
    assert.notEqual(t.intern(decomposed), decomposed.normalize());
  });
});
