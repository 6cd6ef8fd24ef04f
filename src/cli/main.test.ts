import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Workload } from '../api/objects.ts';
import { decodeV1beta2 } from '../placement/assignment-codec.ts';
import { runCli as run, tmpFile } from '../testing/cli.ts';

function hosts(w: Workload): Record<string, number> {
  const ta = w.status!.admission!.podSetAssignments[0]!.topologyAssignment!;
  return Object.fromEntries(decodeV1beta2(ta).domains.map((d) => [d.values[0], d.count]));
}

describe('topoqueue plan on examples/tas-basic', () => {
  it('places each job in input order against the usage of those before it', async () => {
    const r = await run(['plan', '-f', 'examples/tas-basic', '-o', 'json']);
    assert.equal(r.code, 0, r.err);
    const items = (JSON.parse(r.out) as { items: Workload[] }).items;
    assert.deepEqual(
      items.map((w) => w.metadata.name.replace(/-[0-9a-f]{5}$/, '')),
      ['job-train-rack', 'jobset-pretrain', 'job-serve-batch', 'job-too-big'],
    );
    // rack-1 of block-1 has a notebook on n1 using 4 GPUs: the 4x8-GPU job goes to rack-2.
    assert.deepEqual(hosts(items[0]!), { 'b1-r2-n1': 1, 'b1-r2-n2': 1, 'b1-r2-n3': 1, 'b1-r2-n4': 1 });
    // Two slices of 4 pods, one rack each, inside one block (block-2 is the only one with room).
    assert.deepEqual(hosts(items[1]!), { 'b2-r1-n1': 2, 'b2-r1-n2': 2, 'b2-r1-n3': 2, 'b2-r1-n4': 2 });
    assert.equal(
      Object.values(hosts(items[2]!)).reduce((a, b) => a + b, 0),
      6,
    );
    const pending = items[3]!.status!.conditions!.find((c) => c.type === 'QuotaReserved')!;
    assert.equal(pending.status, 'False');
    assert.equal(pending.reason, 'Pending');
    assert.equal(
      pending.message,
      'couldn\'t assign flavors to pod set main: topology "default" allows to fit only 1 out of 5 pod(s). Total nodes: 16; excluded: resource "nvidia.com/gpu": 15',
    );
  });
  it('the same input gives the same output', async () => {
    const a = await run(['plan', '-f', 'examples/tas-basic']);
    const b = await run(['plan', '-f', 'examples/tas-basic']);
    assert.equal(a.out, b.out);
  });
  it("--replace-node repairs an admitted Workload, moving only that node's pods inside its required domain", async () => {
    const planned = await run(['plan', '-f', 'examples/tas-basic', '-o', 'json']);
    const first = (JSON.parse(planned.out) as { items: Workload[] }).items[0]!;
    first.spec.podSets[0]!.topologyRequest = { required: 'cloud.provider.com/topology-block' };
    const admitted = tmpFile('admitted.json', JSON.stringify(first));
    const r = await run(['plan', '-f', 'examples/tas-basic/cluster.yaml', '-f', admitted, '--replace-node', 'b1-r2-n2', '-o', 'json']);
    assert.equal(r.code, 0, r.err);
    const [repaired] = (JSON.parse(r.out) as { items: Workload[] }).items;
    assert.deepEqual(hosts(repaired!), { 'b1-r1-n2': 1, 'b1-r2-n1': 1, 'b1-r2-n3': 1, 'b1-r2-n4': 1 });
  });
  it('--replace-node given twice repairs both failed nodes together, keeping the healthy pods and the required block', async () => {
    const planned = await run(['plan', '-f', 'examples/tas-basic', '-o', 'json']);
    const first = (JSON.parse(planned.out) as { items: Workload[] }).items[0]!;
    first.spec.podSets[0]!.topologyRequest = { required: 'cloud.provider.com/topology-block' };
    const admitted = tmpFile('admitted.json', JSON.stringify(first));
    const r = await run([
      'plan',
      '-f',
      'examples/tas-basic/cluster.yaml',
      '-f',
      admitted,
      '--replace-node',
      'b1-r2-n2',
      '--replace-node',
      'b1-r2-n3',
      '-o',
      'json',
    ]);
    assert.equal(r.code, 0, r.err);
    const [repaired] = (JSON.parse(r.out) as { items: Workload[] }).items;
    const after = hosts(repaired!);
    assert.equal(after['b1-r2-n1'], 1);
    assert.equal(after['b1-r2-n4'], 1);
    assert.equal(after['b1-r2-n2'], undefined);
    assert.equal(after['b1-r2-n3'], undefined);
    assert.equal(
      Object.values(after).reduce((a, b) => a + b, 0),
      4,
    );
    assert.ok(
      Object.keys(after).every((h) => h.startsWith('b1-')),
      JSON.stringify(after),
    );
  });
  it('--replace-node with no room left in the required domain reports the eviction', async () => {
    const planned = await run(['plan', '-f', 'examples/tas-basic', '-o', 'json']);
    const first = (JSON.parse(planned.out) as { items: Workload[] }).items[0]!;
    const admitted = tmpFile('admitted.json', JSON.stringify(first));
    const r = await run(['plan', '-f', 'examples/tas-basic/cluster.yaml', '-f', admitted, '--replace-node', 'b1-r2-n2', '-o', 'json']);
    assert.equal(r.code, 0, r.err);
    const [w] = (JSON.parse(r.out) as { items: Workload[] }).items;
    const evicted = w!.status!.conditions!.find((c) => c.type === 'Evicted')!;
    assert.equal(evicted.reason, 'NodeFailures');
    // Kueue's message, the one the scheduler writes; the reason behind it is a note.
    assert.equal(evicted.message, 'Workload was evicted as there was no replacement for unhealthy node(s): b1-r2-n2');
    assert.match(r.err, /note: Workload [^:]+: cannot find replacement assignment for unhealthy node: b1-r2-n2/);
  });
});

describe('plan output is valid input', () => {
  it('a Workload planned without a queue reads back (no empty clusterQueue)', async () => {
    const planned = await run(['plan', '-f', 'examples/tas-basic', '-o', 'json']);
    const serve = (JSON.parse(planned.out) as { items: Workload[] }).items[2]!;
    assert.equal(serve.status!.admission!.clusterQueue, undefined);
    const admitted = tmpFile('serve.json', JSON.stringify(serve));
    const node = Object.keys(hosts(serve))[0]!;
    const r = await run(['plan', '-f', 'examples/tas-basic/cluster.yaml', '-f', admitted, '--replace-node', node, '-o', 'json']);
    assert.equal(r.code, 0, r.err);
    const [w] = (JSON.parse(r.out) as { items: Workload[] }).items;
    assert.equal(hosts(w!)[node], undefined);
  });
  it('a job whose PodSets break a cross-PodSet rule is refused like a Workload object', async () => {
    const f = tmpFile(
      'js.yaml',
      `apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: js, namespace: research}
spec:
  replicatedJobs:
  - name: a
    template:
      spec:
        template:
          metadata: {annotations: {kueue.x-k8s.io/podset-required-topology: cloud.provider.com/topology-rack}}
          spec: {restartPolicy: Never, containers: [{name: c, image: i}]}
  - name: b
    template:
      spec:
        template:
          spec: {restartPolicy: Never, containers: [{name: c, image: i}]}
`,
    );
    const r = await run(['plan', '-f', 'examples/tas-basic/cluster.yaml', '-f', f]);
    assert.equal(r.code, 2);
    assert.match(r.err, /js\.yaml:1, document 1, JobSet\/research\/js/);
  });
});

describe('feature gates', () => {
  it('TASFailedNodeReplacement=false evicts instead of repairing', async () => {
    const planned = await run(['plan', '-f', 'examples/tas-basic', '-o', 'json']);
    const first = (JSON.parse(planned.out) as { items: Workload[] }).items[0]!;
    first.spec.podSets[0]!.topologyRequest = { required: 'cloud.provider.com/topology-block' };
    const admitted = tmpFile('admitted.json', JSON.stringify(first));
    const r = await run([
      'plan',
      '-f',
      'examples/tas-basic/cluster.yaml',
      '-f',
      admitted,
      '--replace-node',
      'b1-r2-n2',
      '-o',
      'json',
      '--feature-gates',
      'TASFailedNodeReplacement=false',
    ]);
    const [w] = (JSON.parse(r.out) as { items: Workload[] }).items;
    assert.equal(
      w!.status!.conditions!.find((c) => c.type === 'Evicted')!.message!,
      'Workload was evicted as there was no replacement for unhealthy node(s): b1-r2-n2',
    );
    assert.match(r.err, /note: Workload [^:]+: node b1-r2-n2 failed and TASFailedNodeReplacement is off/);
  });
  it('TASProfileMixed=false places unconstrained requests with BestFit', async () => {
    const f = tmpFile(
      'w.yaml',
      `apiVersion: batch/v1
kind: Job
metadata: {name: j, namespace: research}
spec:
  parallelism: 4
  template:
    spec:
      restartPolicy: Never
      containers: [{name: c, image: i, resources: {requests: {nvidia.com/gpu: "4"}}}]
`,
    );
    const mixed = await run(['plan', '-f', 'examples/tas-basic/cluster.yaml', '-f', f, '-o', 'json']);
    const bestFit = await run([
      'plan',
      '-f',
      'examples/tas-basic/cluster.yaml',
      '-f',
      f,
      '-o',
      'json',
      '--feature-gates',
      'TASProfileMixed=false',
    ]);
    // 4 pods of 4 GPUs. LeastFreeCapacity starts from the node with 4 GPUs left (n1: 1, n2: 2, n3: 1);
    // BestFit starts from the roomiest and optimizes the last one (n2: 2, n3: 2).
    assert.equal(hosts((JSON.parse(mixed.out) as { items: Workload[] }).items[0]!)['b1-r1-n1'], 1);
    assert.equal(hosts((JSON.parse(bestFit.out) as { items: Workload[] }).items[0]!)['b1-r1-n1'], undefined);
  });
});

describe('bad input exits 2 and names file, document and field', () => {
  it('malformed YAML', async () => {
    const f = tmpFile('bad.yaml', 'apiVersion: v1\nkind: Node\nmetadata: {name: a}\n---\nkind: [unclosed\n');
    const r = await run(['plan', '-f', f]);
    assert.equal(r.code, 2);
    assert.match(r.err, /bad\.yaml:\d+, document 2/);
  });
  it('unknown kind (--strict: kinds topoqueue does not use are refused)', async () => {
    const f = tmpFile('k.yaml', 'apiVersion: example.com/v1\nkind: Gizmo\nmetadata: {name: g}\n');
    const r = await run(['plan', '-f', f, '--strict']);
    assert.equal(r.code, 2);
    assert.match(r.err, /k\.yaml:1, document 1, Gizmo\/g, kind: unknown kind "Gizmo"/);
  });
  it('a TAS flavor pointing at a missing Topology', async () => {
    const f = tmpFile(
      'f.yaml',
      'apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {name: f}\nspec: {nodeLabels: {a: b}, topologyName: nope}\n',
    );
    const r = await run(['plan', '-f', f]);
    assert.equal(r.code, 2);
    assert.match(r.err, /f\.yaml:1, document 1, ResourceFlavor\/f, spec\.topologyName: Topology "nope" is not in the input/);
  });
  it('a bad quantity in a node', async () => {
    const f = tmpFile('n.yaml', 'apiVersion: v1\nkind: Node\nmetadata: {name: n}\nstatus: {allocatable: {cpu: 1x}}\n');
    const r = await run(['plan', '-f', f]);
    assert.equal(r.code, 2);
    assert.match(r.err, /n\.yaml:1, document 1, Node\/n, status\.allocatable\.cpu/);
  });
  it('an unknown feature gate', async () => {
    const r = await run(['plan', '-f', 'examples/tas-basic', '--feature-gates', 'Nope=true']);
    assert.equal(r.code, 2);
    assert.match(r.err, /unknown feature gate "Nope"; known: TASProfileMixed/);
  });
  it('an unknown profile', async () => {
    const r = await run(['plan', '-f', 'examples/tas-basic', '--profile', 'Fastest']);
    assert.equal(r.code, 2);
    assert.match(r.err, /Allowed choices are Mixed, BestFit, LeastFreeCapacity, BalancedPlacement/);
  });
  it('no -f at all', async () => {
    const r = await run(['plan']);
    assert.equal(r.code, 2);
    assert.match(r.err, /-f: at least one -f PATH/);
  });
  it('a missing file', async () => {
    const r = await run(['plan', '-f', 'does/not/exist.yaml']);
    assert.equal(r.code, 2);
    assert.match(r.err, /does\/not\/exist\.yaml: no such file or directory/);
  });
});

describe('topoqueue topology show', () => {
  it('renders the tree with node counts and free capacity', async () => {
    const r = await run(['topology', 'show', '-f', 'examples/tas-basic']);
    assert.equal(r.code, 0, r.err);
    assert.match(r.out, /16 node\(s\) in the tree/);
    assert.match(r.out, /kubernetes\.io\/hostname=b1-r1-n1 {2}nodes=1 {2}free: pods=109 cpu=88 memory=1Ti nvidia\.com\/gpu=4/);
  });
  it('collapses siblings and limits depth', async () => {
    const r = await run(['topology', 'show', '-f', 'examples/tas-basic', '--depth', '2', '--max-children', '1']);
    assert.equal(r.code, 0, r.err);
    assert.doesNotMatch(r.out, /hostname=/);
    assert.match(r.out, /\.\.\. 1 more \(8 node\(s\)\)/);
  });
});
