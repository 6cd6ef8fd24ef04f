import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { formatTime, parseTime } from './time.ts';

describe('time', () => {
  it('formats the epoch and a known instant', () => {
    assert.equal(formatTime(0), '1970-01-01T00:00:00Z');
    assert.equal(formatTime(1795219200), '2026-11-21T00:00:00Z');
  });
  it('parses zones and fractions', () => {
    assert.equal(parseTime('2026-11-21T00:00:00Z'), 1795219200);
    assert.equal(parseTime('2026-11-21T01:00:00+01:00'), 1795219200);
    assert.equal(parseTime('2026-11-21T00:00:00.5Z'), 1795219200.5);
    assert.equal(parseTime('yesterday'), undefined);
    assert.equal(parseTime('2026-13-01T00:00:00Z'), undefined);
  });
  it('round-trips whole seconds and agrees with Date', () => {
    fc.assert(
      fc.property(fc.integer({ min: -2_000_000_000, max: 8_000_000_000 }), (t) => {
        assert.equal(parseTime(formatTime(t)), t);
        assert.equal(formatTime(t), new Date(t * 1000).toISOString().replace('.000Z', 'Z'));
      }),
    );
  });
});
