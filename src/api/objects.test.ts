import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isTerminal, type Pod, type PodPhase } from './objects.ts';

const pod = (phase?: PodPhase): Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'p' },
  spec: { containers: [] },
  status: phase ? { phase } : undefined,
});

describe('pods', () => {
  it('a pod is terminal when Succeeded or Failed, and only then', () => {
    assert.equal(isTerminal(pod('Succeeded')), true);
    assert.equal(isTerminal(pod('Failed')), true);
    for (const p of ['Pending', 'Running', 'Unknown', undefined] as const) assert.equal(isTerminal(pod(p)), false, String(p));
  });
});
