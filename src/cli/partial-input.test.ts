// Issue 14 §1: one bad object never sinks the rest.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { Workload } from '../api/objects.ts';
import { runCli as run, tmpFile } from '../testing/cli.ts';
import { loadManifests } from './load.ts';

const JOB = (name: string, extra = '') => `apiVersion: batch/v1
kind: Job
metadata: {name: ${name}, namespace: research}
spec:
  parallelism: 1
  template:
    metadata:
      annotations: {kueue.x-k8s.io/podset-required-topology: cloud.provider.com/topology-rack${extra}}
    spec:
      restartPolicy: Never
      containers: [{name: c, image: i, resources: {requests: {nvidia.com/gpu: "1"}}}]
`;

function items(out: string): Workload[] {
  return (JSON.parse(out) as { items: Workload[] }).items;
}

function dir(): string {
  return mkdtempSync(join(tmpdir(), 'tq-dir-'));
}

describe('one bad object never sinks the rest', () => {
  it('a bad Node is reported and left out; the jobs are still planned; exit 2', async () => {
    const f = tmpFile('n.yaml', 'apiVersion: v1\nkind: Node\nmetadata: {name: bad}\nstatus: {allocatable: {cpu: 1x}}\n');
    const r = await run(['plan', '-f', 'examples/tas-basic', '-f', f, '-o', 'json']);
    assert.equal(r.code, 2);
    assert.match(r.err, /n\.yaml:1, document 1, Node\/bad, status\.allocatable\.cpu/);
    assert.equal(items(r.out).length, 4);
    assert.ok(items(r.out)[0]!.status!.admission, 'the first job is still placed');
  });

  it('--strict keeps all or nothing: no plan is printed', async () => {
    const f = tmpFile('n.yaml', 'apiVersion: v1\nkind: Node\nmetadata: {name: bad}\nstatus: {allocatable: {cpu: 1x}}\n');
    const r = await run(['plan', '-f', 'examples/tas-basic', '-f', f, '--strict']);
    assert.equal(r.code, 2);
    assert.equal(r.out, '');
  });

  it('a job breaking a TAS rule appears deactivated, with the rule as its reason', async () => {
    const f = tmpFile(
      'bad-job.yaml',
      JOB('both', ',\n        kueue.x-k8s.io/podset-preferred-topology: cloud.provider.com/topology-block'),
    );
    const r = await run(['plan', '-f', 'examples/tas-basic/cluster.yaml', '-f', f, '-f', tmpFile('ok.yaml', JOB('fine')), '-o', 'json']);
    assert.equal(r.code, 2);
    const all = items(r.out);
    const fine = all.find((w) => w.metadata.ownerReferences?.[0]?.name === 'fine')!;
    assert.ok(fine.status!.admission);
    const bad = all.find((w) => w.metadata.ownerReferences?.[0]?.name === 'both')!;
    assert.equal(bad.spec.active, false);
    assert.equal(bad.status!.admission, undefined);
    const evicted = bad.status!.conditions!.find((c) => c.type === 'Evicted')!;
    assert.equal(evicted.reason, 'Deactivated');
    assert.match(evicted.message!, /^The workload is deactivated due to /);
    assert.match(r.err, /bad-job\.yaml:1, document 1, Job\/research\/both/);
  });

  it('a Workload failing its schema is reported deactivated under its own name', async () => {
    const f = tmpFile(
      'w.yaml',
      'apiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\nmetadata: {name: w, namespace: research}\nspec: {podSets: [{name: main, count: -1, template: {spec: {containers: [{name: c}]}}}]}\n',
    );
    const r = await run(['plan', '-f', 'examples/tas-basic', '-f', f, '-o', 'json']);
    assert.equal(r.code, 2);
    const w = items(r.out).find((x) => x.metadata.name === 'w')!;
    assert.equal(w.spec.active, false);
    assert.match(w.status!.conditions!.find((c) => c.type === 'Evicted')!.message!, /count/);
  });

  it('kinds topoqueue does not use are skipped with one note per kind; exit 0', async () => {
    const d = dir();
    writeFileSync(
      join(d, 'cm.yaml'),
      'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: b}\n',
    );
    writeFileSync(
      join(d, 'kustomization.yaml'),
      'apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: [cm.yaml]\n',
    );
    const r = await run(['plan', '-f', 'examples/tas-basic', '-f', d, '-o', 'json']);
    assert.equal(r.code, 0, r.err);
    assert.equal(r.err.match(/note: skipped 2 ConfigMap \(v1\) object\(s\)/g)?.length, 1);
    assert.match(r.err, /note: skipped 1 Kustomization \(kustomize\.config\.k8s\.io\/v1beta1\) object\(s\)/);
    assert.equal(items(r.out).length, 4);
  });

  it('two Nodes with the same name: the second is refused, not merged', () => {
    const f = tmpFile('n.yaml', 'apiVersion: v1\nkind: Node\nmetadata: {name: n}\n---\napiVersion: v1\nkind: Node\nmetadata: {name: n}\n');
    const l = loadManifests([f]);
    assert.equal(l.objects.length, 1);
    assert.equal(l.errors.length, 1);
    assert.match(
      l.errors[0]!.message,
      /document 2, Node\/n: a second Node with this name \(the first is at .*document 1, Node\/n\); the second is refused/,
    );
  });

  it('a batch Job and a Volcano Job of the same name are different objects', () => {
    const f = tmpFile(
      'j.yaml',
      `${JOB('same')}---\napiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata: {name: same, namespace: research}\nspec:\n  minAvailable: 1\n  tasks: [{name: t, replicas: 1, template: {spec: {containers: [{name: c}]}}}]\n`,
    );
    const l = loadManifests([f]);
    assert.deepEqual(
      l.errors.map((e) => e.message),
      [],
    );
    assert.equal(l.objects.length, 2);
  });
});

describe('inputs that crashed are refused with a message', () => {
  it('a dangling symlink and a symlink loop in an input directory', () => {
    const d = dir();
    writeFileSync(join(d, 'a.yaml'), 'apiVersion: v1\nkind: Node\nmetadata: {name: n}\n');
    symlinkSync(join(d, 'missing.yaml'), join(d, 'dangling.yaml'));
    symlinkSync(join(d, 'self.yaml'), join(d, 'self.yaml'));
    mkdirSync(join(d, 'sub'));
    symlinkSync(d, join(d, 'sub', 'up'));
    const l = loadManifests([d]);
    assert.equal(l.objects.length, 1);
    const text = l.errors.map((e) => e.message).join('\n');
    assert.match(text, /dangling\.yaml: dangling symlink: its target does not exist/);
    assert.match(text, /self\.yaml: symlink loop/);
    assert.match(text, /sub\/up: symlink loop: this directory is .*, already being read/);
  });

  it('objects nested deeper than the limit', () => {
    const f = tmpFile(
      'deep.json',
      `{"apiVersion":"v1","kind":"Node","metadata":{"name":"n"},"spec":${'{"a":'.repeat(5000)}{}${'}'.repeat(5000)}}`,
    );
    const l = loadManifests([f]);
    assert.equal(l.objects.length, 0);
    assert.match(l.errors[0]!.message, /deep\.json, document 1: nested deeper than 100 levels; the document is skipped/);
    const g = tmpFile('deep.yaml', `apiVersion: v1\nkind: Node\nmetadata: {name: n}\nspec: ${'['.repeat(300)}${']'.repeat(300)}\n`);
    assert.match(loadManifests([g]).errors[0]!.message, /nested deeper than 100 levels/);
  });

  it('annotations over 256 KiB and objects over 1.5 MiB', () => {
    const big = 'x'.repeat(300 * 1024);
    const f = tmpFile('a.yaml', `apiVersion: v1\nkind: Node\nmetadata: {name: n, annotations: {a: "${big}"}}\n`);
    assert.match(
      loadManifests([f]).errors[0]!.message,
      /Node\/n, metadata\.annotations: annotations take \d+ bytes; Kubernetes allows at most 262144/,
    );
    const g = tmpFile(
      'b.yaml',
      `apiVersion: v1\nkind: Node\nmetadata: {name: n, labels: {a: b}}\nstatus: {images: [${Array.from({ length: 20 }, () => `{names: ["${'y'.repeat(100 * 1024)}"]}`).join(', ')}]}\n`,
    );
    assert.match(loadManifests([g]).errors[0]!.message, /Node\/n: the object takes \d+ bytes; Kubernetes allows at most 1572864/);
  });

  it('a binary file: a short excerpt, not the whole file', () => {
    const f = tmpFile('bin.yaml', '');
    writeFileSync(f, Buffer.concat([Buffer.from([0x7f, 0x45, 0x4c, 0x46, 0, 1, 2]), Buffer.alloc(10_000, 0xff)]));
    const [e] = loadManifests([f]).errors;
    assert.match(e!.message, /bin\.yaml: not a YAML or JSON text \(binary data; it starts with "\\x7fELF\\x00\\x01\\x02/);
    assert.ok(e!.message.length < 200, e!.message);
  });

  it('-f - reads standard input; an empty input says so; a directory without manifests says so', () => {
    const l = loadManifests(['-'], { readStdin: () => 'apiVersion: v1\nkind: Node\nmetadata: {name: n}\n' });
    assert.equal(l.objects[0]!.where.file, '<stdin>');
    assert.match(loadManifests(['-'], { readStdin: () => '' }).errors[0]!.message, /^<stdin>: the input is empty: no object in it/);
    const d = dir();
    writeFileSync(join(d, 'README.md'), '# nothing');
    assert.match(loadManifests([d]).errors[0]!.message, /the directory holds no manifest \(no \.yaml, \.yml or \.json file\)/);
  });
});

describe('silent drops get a note', () => {
  it('--replace-node naming a node no admitted Workload uses', async () => {
    const r = await run(['plan', '-f', 'examples/tas-basic/cluster.yaml', '--replace-node', 'b1-r2-n2']);
    assert.equal(r.code, 0, r.err);
    assert.match(r.err, /note: no admitted Workload in the input uses node b1-r2-n2: nothing to repair/);
  });

  it('nodes without a level label, and a level no node carries', async () => {
    const f = tmpFile(
      't.yaml',
      `apiVersion: kueue.x-k8s.io/v1beta2
kind: Topology
metadata: {name: t}
spec: {levels: [{nodeLabel: example.com/rack}, {nodeLabel: example.com/zone}]}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: f}
spec: {nodeLabels: {pool: a}, topologyName: t}
---
apiVersion: v1
kind: Node
metadata: {name: n1, labels: {pool: a, example.com/rack: r1}}
status: {allocatable: {cpu: "4"}, conditions: [{type: Ready, status: "True"}]}
---
apiVersion: v1
kind: Node
metadata: {name: n2, labels: {pool: a}}
status: {allocatable: {cpu: "4"}, conditions: [{type: Ready, status: "True"}]}
`,
    );
    const r = await run(['plan', '-f', f]);
    assert.equal(r.code, 0, r.err);
    assert.match(
      r.err,
      /note: Topology t: no node of ResourceFlavor f carries the level label "example\.com\/zone"; levels: example\.com\/rack, example\.com\/zone/,
    );
    assert.match(
      r.err,
      /note: ResourceFlavor f: 2 node\(s\) lack a level label of Topology t and take no part in placement: n1 \(no example\.com\/zone\), n2 \(no example\.com\/rack, example\.com\/zone\)/,
    );
  });
});
