import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { readFileSync } from 'node:fs';
import { runCli as run, tmpFile } from '../testing/cli.ts';

// One block of 2 racks x 4 hosts of 8 GPUs: r1-h1 tainted, r2-h1 NotReady; a 6-pod Job
// that requires one rack.
function node(name: string, rack: string, extra = ''): string {
  return `apiVersion: v1
kind: Node
metadata:
  name: ${name}
  labels: { kubernetes.io/hostname: ${name}, example.com/block: b1, example.com/rack: ${rack} }
${extra}status:
  allocatable: { nvidia.com/gpu: "8", pods: "110" }
  conditions: [{ type: Ready, status: "${name === 'r2-h1' ? 'False' : 'True'}" }]
`;
}

const cluster = [
  `apiVersion: kueue.x-k8s.io/v1beta2
kind: Topology
metadata: { name: dc }
spec:
  levels: [{ nodeLabel: example.com/block }, { nodeLabel: example.com/rack }, { nodeLabel: kubernetes.io/hostname }]
`,
  `apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: { name: gpu }
spec: { topologyName: dc, nodeLabels: { example.com/block: b1 } }
`,
  ...['r1', 'r2'].flatMap((r) =>
    [1, 2, 3, 4].map((h) =>
      node(`${r}-h${h}`, r, r === 'r1' && h === 1 ? 'spec:\n  taints: [{ key: maintenance, value: "true", effect: NoSchedule }]\n' : ''),
    ),
  ),
  `apiVersion: batch/v1
kind: Job
metadata: { name: train, namespace: ml }
spec:
  parallelism: 6
  completions: 6
  template:
    metadata:
      annotations: { kueue.x-k8s.io/podset-required-topology: example.com/rack }
    spec:
      restartPolicy: Never
      containers: [{ name: t, image: t, resources: { requests: { nvidia.com/gpu: "8" } } }]
`,
].join('---\n');

describe('plan --explain', () => {
  const file = tmpFile('cluster.yaml', cluster);

  it('after the table, per level what the best domain holds, what excludes the nodes, and that the required rack stops it', async () => {
    const r = await run(['plan', '-f', file, '--explain', '-o', 'table']);
    assert.equal(r.code, 0, r.err);
    const text = r.out.slice(r.out.indexOf('why they wait (--explain):'));
    assert.match(text, /\nml\/job-train-[0-9a-f]{5}: stopped by topology\n/);
    assert.match(text, /\n {4}nodes: 8; excluded: not ready or unschedulable 1, untolerated taint maintenance=true:NoSchedule 1\n/);
    assert.match(text, /\n {4}host: {2}1 of 6 fit in host r1-h2\n/);
    assert.match(text, /\n {4}rack: {2}3 of 6 fit in rack b1\/r1 \(excluded there: untolerated taint maintenance=true:NoSchedule 1\)\n/);
    assert.match(text, /\n {4}block: 6 of 6 fit in block b1 \(excluded there: not ready or unschedulable 1, untolerated taint/);
    assert.match(
      text,
      /\n {4}topology stops it: topology "dc" allows to fit only 3 out of 6 pod\(s\); the lowest level one domain of which holds them all is block\n/,
    );
  });

  it('-o yaml and json carry the explanation as a list `explain` beside the Workloads', async () => {
    const r = await run(['plan', '-f', file, '--explain', '-o', 'json']);
    const list = JSON.parse(r.out) as { items: unknown[]; explain: { stoppedBy: string[]; podSets: { levels: { fit: number }[] }[] }[] };
    assert.equal(list.items.length, 1);
    assert.deepEqual(list.explain[0]!.stoppedBy, ['topology']);
    assert.deepEqual(
      list.explain[0]!.podSets[0]!.levels.map((l) => l.fit),
      [1, 3, 6],
    );
    const y = await run(['plan', '-f', file, '--explain']);
    assert.match(y.out, /\nexplain:\n {2}- workload: ml\/job-train-[0-9a-f]{5}\n/);
  });

  it("a Volcano job's explanation reads its network topology, and its counts agree with its message (tried in input order)", async () => {
    const r = await run(['plan', '-f', 'examples/volcano-spine-leaf', '--explain', '-o', 'table']);
    assert.match(r.out, /team-a\/job-too-tight-[0-9a-f]{5} +Pending .*allows to fit only 2 out of 3 pod\(s\)/);
    assert.match(r.out, /\n {2}pod set worker: 3 pods, network topology hard, highest tier 1, flavor hypernodes, /);
    assert.match(r.out, /\n {4}tier-1: 2 of 3 fit in tier-1 s6\/s4\/s1\n/);
    assert.match(
      r.out,
      /\n {4}topology stops it: topology "hypernodes" allows to fit only 2 out of 3 pod\(s\); no single domain holds them all\n/,
    );
  });

  it('without --explain the output has no explanation', async () => {
    const r = await run(['plan', '-f', file, '-o', 'json']);
    assert.equal((JSON.parse(r.out) as { explain?: unknown }).explain, undefined);
    const t = await run(['plan', '-f', file, '-o', 'table']);
    assert.doesNotMatch(t.out, /--explain/);
  });

  it('with queues, a Workload quota stops says quota, with the quota message', async () => {
    const queues = `apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: { name: cq }
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [nvidia.com/gpu]
    flavors: [{ name: gpu, resources: [{ name: nvidia.com/gpu, nominalQuota: "16" }] }]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: { name: lq, namespace: ml }
spec: { clusterQueue: cq }
`;
    const withQueue = cluster.replace(
      'metadata: { name: train, namespace: ml }',
      'metadata: { name: train, namespace: ml, labels: { kueue.x-k8s.io/queue-name: lq } }',
    );
    const r = await run(['plan', '-f', tmpFile('q.yaml', `${withQueue}---\n${queues}`), '--explain', '-o', 'table']);
    assert.equal(r.code, 0, r.err);
    assert.match(
      r.out,
      /: stopped by quota and topology\n {2}quota: couldn't assign flavors to pod set main: insufficient quota for nvidia.com\/gpu in flavor gpu/,
    );
  });

  it("simulate: a workload still pending at the end carries `explain`, the same text as plan's, the same on every run", async () => {
    const report = (path: string) => JSON.parse(readFileSync(path, 'utf8')) as { workloads: { status: string; explain?: string }[] };
    const a = tmpFile('a.json', '');
    const b = tmpFile('b.json', '');
    assert.equal((await run(['simulate', '-f', file, '--report', a])).code, 0);
    assert.equal((await run(['simulate', '-f', file, '--report', b])).code, 0);
    assert.equal(readFileSync(a, 'utf8'), readFileSync(b, 'utf8'));
    const w = report(a).workloads[0]!;
    assert.equal(w.status, 'Pending');
    const plan = await run(['plan', '-f', file, '--explain', '-o', 'table']);
    // The Workload's name hashes the Job's uid, which the embedded cluster sets.
    const anon = (t: string) => t.replace(/job-train-[0-9a-f]{5}/g, 'job-train-*');
    assert.ok(anon(plan.out).endsWith(anon(w.explain!)), w.explain);
  });
});
