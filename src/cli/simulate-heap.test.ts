import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ONE_NODE_YAML, runCli as run, tmpFile } from '../testing/cli.ts';
import { applySimulateHeapFlags, SIMULATE_HEAP_FLAGS, simulateHeapFlagsApplied } from './simulate-heap.ts';

describe('simulate heap flags', () => {
  it("simulate lets the old generation grow by 3x, not V8's 4x (heap-growing-percent 200)", () => {
    const set: string[] = [];
    applySimulateHeapFlags((f) => set.push(f));
    assert.deepEqual(set, ['--heap-growing-percent=200']);
    assert.deepEqual(SIMULATE_HEAP_FLAGS, set);
  });

  it('topoqueue simulate sets them when it starts', async () => {
    const f = tmpFile('c.yaml', ONE_NODE_YAML);
    assert.equal(simulateHeapFlagsApplied(), false);
    const r = await run(['simulate', '-f', f]);
    assert.equal(r.code, 0, r.err);
    assert.equal(simulateHeapFlagsApplied(), true);
  });
});
