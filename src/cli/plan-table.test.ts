import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { runCli as run } from '../testing/cli.ts';
import { levelName } from './plan-table.ts';

describe('plan -o table|wide|name (kubectl conventions)', () => {
  it('table: workload, status, where (domains at the requested level, by path, with pod counts) and reason', async () => {
    const r = await run(['plan', '-f', 'examples/tas-basic', '-o', 'table']);
    assert.equal(r.code, 0, r.err);
    const lines = r.out.trimEnd().split('\n');
    assert.match(lines[0]!, /^WORKLOAD +STATUS +WHERE +REASON$/);
    assert.match(lines[1]!, /^research\/job-train-rack-[0-9a-f]{5} +Admitted +rack block-1\/rack-2 x4$/);
    assert.match(lines[2]!, /^research\/jobset-pretrain-[0-9a-f]{5} +Admitted +block block-2 x8$/);
    assert.match(lines[4]!, /^research\/job-too-big-[0-9a-f]{5} +Pending +- +couldn't assign flavors to pod set main: /);
  });

  it('host names are shown whole, not in the compact v1beta2 encoding', async () => {
    const r = await run(['plan', '-f', 'examples/volcano-spine-leaf', '-o', 'table']);
    assert.match(r.out, /worker: host node5 x1, node6 x1, node7 x1/);
  });

  it('wide adds ClusterQueue, owner and pod count; name prints kubectl names', async () => {
    const wide = await run(['plan', '-f', 'examples/tas-basic', '-o', 'wide']);
    assert.match(wide.out.split('\n')[0]!, /^WORKLOAD +STATUS +CLUSTERQUEUE +OWNER +PODS +WHERE +REASON$/);
    assert.match(wide.out, /JobSet\/pretrain +8 +block block-2 x8/);
    const names = await run(['plan', '-f', 'examples/tas-basic', '-o', 'name']);
    assert.match(names.out, /^workload\.kueue\.x-k8s\.io\/job-train-rack-[0-9a-f]{5}\n/);
    assert.equal(names.out.trim().split('\n').length, 4);
  });

  it('an evicted Workload shows as Evicted with its message', async () => {
    const r = await run(['plan', '-f', 'examples/queues-gangs', '-o', 'table']);
    assert.match(r.out, /Evicted +- +Preempted to accommodate a workload/);
  });

  it('level names: the key without its prefix', () => {
    assert.equal(levelName('cloud.provider.com/topology-rack'), 'rack');
    assert.equal(levelName('kubernetes.io/hostname'), 'host');
    assert.equal(levelName('topology.volcano.sh/tier-1'), 'tier-1');
  });
});
