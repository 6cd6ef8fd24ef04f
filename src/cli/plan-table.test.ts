import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { runCli as run } from '../testing/cli.ts';
import { levelName } from '../placement/explain.ts';

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

describe('topology show: used, total and free; -o json|yaml', () => {
  it('the text view shows free, used and total per domain, in human units', async () => {
    const r = await run(['topology', 'show', '-f', 'examples/tas-basic', '--depth', '2']);
    assert.equal(r.code, 0, r.err);
    // The notebook uses 8 CPUs and 4 GPUs of rack-1 in block-1.
    assert.match(
      r.out,
      /topology-rack=rack-1 {2}nodes=4 {2}free: pods=439 cpu=376 memory=4Ti nvidia\.com\/gpu=28 {2}used: pods=1 cpu=8 memory=0 nvidia\.com\/gpu=4 {2}total: pods=440 cpu=384 memory=4Ti nvidia\.com\/gpu=32/,
    );
  });

  it('-o json: the tree with free, used and total per domain, and HyperNode nodeCount', async () => {
    const r = await run(['topology', 'show', '-f', 'examples/volcano-spine-leaf', '-o', 'json']);
    assert.equal(r.code, 0, r.err);
    const data = JSON.parse(r.out) as {
      flavors: { domains: { value: string; nodes: number; total: Record<string, string>; children?: unknown[] }[] }[];
      hyperNodes: { name: string; nodeCount: number; nodes: number }[];
    };
    const root = data.flavors[0]!.domains[0]!;
    assert.equal(root.value, 's6');
    assert.equal(root.nodes, 8);
    assert.equal(root.total['nvidia.com/gpu'], '64');
    assert.ok(root.children && root.children.length > 0);
    // status.nodeCount as the peer writes it counts direct members (two HyperNodes); nodes counts every node under it.
    assert.deepEqual(
      data.hyperNodes.find((h) => h.name === 's6'),
      { name: 's6', tier: 3, nodeCount: 2, nodes: 8 },
    );
    const yaml = await run(['topology', 'show', '-f', 'examples/tas-basic', '-o', 'yaml', '--depth', '1']);
    assert.match(yaml.out, /value: block-1\n/);
  });
});
