import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KObject } from './objects.ts';
import { parseObject } from './schemas.ts';

const ev = (spec: Record<string, unknown>): KObject =>
  ({ apiVersion: 'topoqueue.io/v1alpha1', kind: 'SimulationEvent', metadata: { name: 'e1' }, spec }) as KObject;
const problems = (spec: Record<string, unknown>) => parseObject(ev(spec), {}).errors.map((e) => e.message);

describe('SimulationEvent schema', () => {
  it('accepts each action with what it needs', () => {
    for (const spec of [
      { at: '90s', node: 'n1', action: 'NotReady' },
      { at: '0s', node: 'n1', action: 'Ready' },
      { at: '1h30m', node: 'n1', action: 'Taint', taint: { key: 'example.com/broken', value: 'yes', effect: 'NoExecute' } },
      { at: '2h', node: 'n1', action: 'Untaint', taint: { key: 'example.com/broken' } },
      { at: '1m', node: 'n1', action: 'Cordon' },
      { at: '1m', node: 'n1', action: 'Uncordon' },
      { at: '24h', node: 'n1', action: 'Delete' },
    ]) {
      assert.deepEqual(problems(spec), [], JSON.stringify(spec));
    }
  });

  it('refuses a spec.at that is not a non-negative Go duration, naming the field', () => {
    assert.deepEqual(problems({ at: '90', node: 'n1', action: 'Ready' }), [
      'SimulationEvent/e1, spec.at: must be a Go duration such as "90s", "10m" or "1h30m", got "90"',
    ]);
    assert.deepEqual(problems({ at: 90, node: 'n1', action: 'Ready' }), [
      'SimulationEvent/e1, spec.at: must be a Go duration such as "90s", "10m" or "1h30m", got number 90',
    ]);
    assert.deepEqual(problems({ at: '-5s', node: 'n1', action: 'Ready' }), [
      'SimulationEvent/e1, spec.at: must not be negative (a duration from the simulation start), got "-5s"',
    ]);
    assert.deepEqual(problems({ node: 'n1', action: 'Ready' }), [
      'SimulationEvent/e1, spec.at: must be a Go duration such as "90s", "10m" or "1h30m", got nothing',
    ]);
  });

  it('refuses an unknown action with the list of actions', () => {
    const [p] = problems({ at: '1s', node: 'n1', action: 'Reboot' });
    assert.match(
      p!,
      /spec\.action: must be one of "NotReady", "Ready", "Taint", "Untaint", "Cordon", "Uncordon", "Delete", got the string "Reboot"/,
    );
  });

  it('Taint needs a taint with an effect; Untaint needs a key; other actions take none', () => {
    assert.deepEqual(problems({ at: '1s', node: 'n1', action: 'Taint' }), [
      'SimulationEvent/e1, spec.taint: the Taint action needs a taint: {key, value (optional), effect}',
    ]);
    assert.deepEqual(problems({ at: '1s', node: 'n1', action: 'Taint', taint: { key: 'k' } }), [
      'SimulationEvent/e1, spec.taint.effect: the Taint action needs an effect: one of "NoSchedule", "PreferNoSchedule", "NoExecute"',
    ]);
    assert.deepEqual(problems({ at: '1s', node: 'n1', action: 'Untaint' }), [
      'SimulationEvent/e1, spec.taint: the Untaint action needs the key of the taint to remove: {key, effect (optional)}',
    ]);
    assert.deepEqual(problems({ at: '1s', node: 'n1', action: 'Cordon', taint: { key: 'k', effect: 'NoSchedule' } }), [
      'SimulationEvent/e1, spec.taint: only the Taint and Untaint actions take a taint; Cordon does not',
    ]);
    assert.match(
      problems({ at: '1s', node: 'n1', action: 'Taint', taint: { key: 'bad key', effect: 'NoSchedule' } })[0]!,
      /spec\.taint\.key: "bad key": .*taint key/,
    );
  });

  it('a SimulationEvent needs a node', () => {
    assert.deepEqual(problems({ at: '1s', node: '', action: 'Ready' }), ['SimulationEvent/e1, spec.node: must name a Node']);
  });
});
