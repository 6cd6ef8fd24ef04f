import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { compareStrings, isRecord } from './values.ts';

describe('plain values', () => {
  it('isRecord accepts mappings only: not null, arrays or scalars', () => {
    assert.equal(isRecord({}), true);
    assert.equal(isRecord({ a: 1 }), true);
    for (const v of [null, undefined, [], [1], 'x', 1, true]) assert.equal(isRecord(v), false, String(v));
  });
  it('strings order by code units, whatever the locale: x10 before x2, Z before a', () => {
    assert.deepEqual(['x2', 'a', 'x10', 'Z', 'b-1', 'b.1', 'b1'].sort(compareStrings), ['Z', 'a', 'b-1', 'b.1', 'b1', 'x10', 'x2']);
    assert.deepEqual(['x2', 'a', 'x10', 'Z'].sort(compareStrings), ['x2', 'a', 'x10', 'Z'].sort());
  });
  it('equal strings compare as 0, and the order is antisymmetric', () => {
    assert.equal(compareStrings('a', 'a'), 0);
    assert.equal(compareStrings('a', 'b'), -1);
    assert.equal(compareStrings('b', 'a'), 1);
  });
});
