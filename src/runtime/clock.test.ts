import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ScaledClock } from './clock.ts';

describe('ScaledClock', () => {
  it('time passes N times faster than the wall clock, from the wall time at start', () => {
    let wall = 1_000_000;
    const clock = new ScaledClock(60, () => wall);
    assert.equal(clock.now(), 1_000_000);
    wall += 1_000;
    assert.equal(clock.now(), 1_000_000 + 60_000);
  });

  it('a restart resumes from the latest recorded time, never going backwards', () => {
    let wall = 1_000_000;
    const clock = new ScaledClock(60, () => wall);
    clock.resumeFrom(5_000_000);
    assert.equal(clock.now(), 5_000_000);
    wall += 1_000;
    assert.equal(clock.now(), 5_060_000);
    clock.resumeFrom(10); // earlier than now: no change
    assert.equal(clock.now(), 5_060_000);
  });

  it('refuses a scale that is not a positive number', () => {
    assert.throws(() => new ScaledClock(0), /positive number/);
    assert.throws(() => new ScaledClock(Number.NaN), /positive number/);
  });
});
