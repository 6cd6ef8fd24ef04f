// Stock kubectl against `serve` (in-process, built-in example data centre, time sped up
// 60x): the commands of the README tour and kubectl-facade.md, with kubectl's own output
// checked. Skipped, with a message, when kubectl is not on the PATH.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { eventually, KUBECTL_MISSING, startTestServer, type TestServer } from '../testing/kube.ts';

const job = (name: string, opts: { pods?: number; gpus?: number; run?: string; queue?: string } = {}) => `apiVersion: batch/v1
kind: Job
metadata:
  name: ${name}
  namespace: default
  labels:
    kueue.x-k8s.io/queue-name: ${opts.queue ?? 'user-queue'}
spec:
  parallelism: ${opts.pods ?? 2}
  completions: ${opts.pods ?? 2}
  template:
    metadata:
      annotations:
        topoqueue.io/run-duration: ${opts.run ?? '10h'}
        kueue.x-k8s.io/podset-preferred-topology: cloud.provider.com/topology-rack
    spec:
      restartPolicy: Never
      containers:
      - name: main
        image: trainer:latest
        resources:
          requests:
            cpu: "1"
            nvidia.com/gpu: "${opts.gpus ?? 1}"
`;

describe('kubectl against topoqueue serve', { skip: KUBECTL_MISSING }, () => {
  let s: TestServer;
  const k = (...args: string[]) => s.kubectl(args);
  const ok = async (...args: string[]) => {
    const r = await s.kubectl(args);
    assert.equal(r.code, 0, `kubectl ${args.join(' ')}: ${r.stderr}`);
    return r.stdout;
  };
  const file = (name: string, text: string) => {
    const p = join(s.dir, name);
    writeFileSync(p, text);
    return p;
  };
  /** The node a Job's running pod is on (another than `not`), once there is one. */
  const runningNode = (jobName: string, not?: string) =>
    eventually(
      async () => {
        const n = (
          await ok(
            'get',
            'pods',
            '-l',
            `batch.kubernetes.io/job-name=${jobName}`,
            '-o',
            'jsonpath={.items[?(@.status.phase=="Running")].spec.nodeName}',
          )
        )
          .trim()
          .split(' ')[0]!;
        return n !== '' && n !== not ? n : undefined;
      },
      `a running pod of Job ${jobName}${not ? ` on another node than ${not}` : ''}`,
      20_000,
    );
  /** The Workload of a batch/v1 Job (its name carries a hash). */
  const workloadOf = async (jobName: string) =>
    eventually(async () => {
      const out = await ok('get', 'workloads', '-o', 'name');
      return out.split('\n').find((l) => l.startsWith(`workload.kueue.x-k8s.io/job-${jobName}-`));
    }, `the Workload of Job ${jobName}`);

  before(async () => {
    s = await startTestServer({ timeScale: 60 });
  });
  after(async () => {
    await s?.stop();
  });

  it('waits for a Job to be admitted, and get -o wide shows the nodes of its pods', async () => {
    await ok('apply', '-f', file('wait.yaml', job('wait-me')));
    const wl = await workloadOf('wait-me');
    assert.match(await ok('wait', '--for=condition=Admitted', wl, '--timeout=20s'), /condition met/);
    const pods = await eventually(async () => {
      const out = await ok('get', 'pods', '-l', 'batch.kubernetes.io/job-name=wait-me', '-o', 'wide');
      return /Running/.test(out) && out.trim().split('\n').length === 3 ? out : undefined;
    }, 'two running pods');
    assert.match(pods.split('\n')[0]!, /NAME\s+READY\s+STATUS\s+RESTARTS\s+AGE\s+IP\s+NODE\s+NOMINATED NODE/);
    for (const line of pods.trim().split('\n').slice(1)) assert.match(line, / b\d-r\d-n\d /, line);
    const wlTable = await ok('get', 'workloads', wl.split('/')[1]!);
    assert.match(wlTable, /NAME\s+QUEUE\s+RESERVED IN\s+ADMITTED\s+FINISHED\s+REASON\s+AGE/);
    assert.match(wlTable, /user-queue\s+cluster-queue\s+True/);
  });

  it('streams changes with get -w', async () => {
    const child = spawn('kubectl', ['--cache-dir', join(s.dir, 'watch-cache'), 'get', 'jobs', '-w'], {
      env: { ...process.env, KUBECONFIG: s.kubeconfig },
    });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    try {
      await eventually(() => (/NAME\s+STATUS/.test(out) ? true : undefined), 'the table header');
      await ok('apply', '-f', file('watched.yaml', job('watched', { run: '1s' })));
      await eventually(() => (/watched\s+Running/.test(out) ? true : undefined), 'the new Job streamed', 15_000);
      await eventually(() => (/watched\s+Complete\s+2\/2/.test(out) ? true : undefined), 'the Job streamed as Complete', 15_000);
    } finally {
      child.kill();
    }
  });

  it('cordons a node (Ready,SchedulingDisabled) and taints one NoExecute: the pods there are evicted and replaced elsewhere', async () => {
    await ok('apply', '-f', file('tainted.yaml', job('tainted', { pods: 1 })));
    const node = await runningNode('tainted');
    assert.match(await ok('cordon', node), /cordoned/);
    assert.match(await ok('get', 'node', node), /Ready,SchedulingDisabled/);
    assert.match(await ok('taint', 'node', node, 'maintenance=now:NoExecute'), /tainted/);
    const moved = await runningNode('tainted', node);
    assert.notEqual(moved, node);
    assert.match(await ok('taint', 'node', node, 'maintenance=now:NoExecute-'), /untainted/);
    assert.match(await ok('uncordon', node), /uncordoned/);
  });

  it('drains a node through pods/eviction: the Job pods there are evicted and replaced', async () => {
    await ok('apply', '-f', file('drained.yaml', job('drained', { pods: 1 })));
    const node = await runningNode('drained');
    const r = await s.kubectl(['drain', node, '--ignore-daemonsets', '--force', '--timeout=30s'], { timeoutMs: 40_000 });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /evicted/);
    assert.match(r.stdout, new RegExp(`node/${node} drained`));
    await runningNode('drained', node);
    await ok('uncordon', node);
  });

  it('describes a pending Workload with its reason and events; delete releases the quota', async () => {
    // The ClusterQueue has 128 GPUs, 4 of them used by the Jobs above: 12 x 8 more leave 28, too few for 4 x 8.
    await ok('apply', '-f', file('hog.yaml', job('hog', { pods: 12, gpus: 8 })));
    const hog = await workloadOf('hog');
    await ok('wait', '--for=condition=Admitted', hog, '--timeout=30s');
    await ok('apply', '-f', file('waiter.yaml', job('waiter', { pods: 4, gpus: 8 })));
    const waiter = await workloadOf('waiter');
    const described = await eventually(
      async () => {
        const out = await ok('describe', waiter);
        return /Events:\s*\n\s+Type/.test(out) && /Reason:\s+WaitingForQuota/.test(out) ? out : undefined;
      },
      'the pending reason and events in describe',
      15_000,
    );
    assert.match(
      described,
      /Message:\s+couldn't assign flavors to pod set main: insufficient unused quota for nvidia.com\/gpu in flavor tas-flavor/,
    );
    assert.match(described, /Warning\s+WaitingForQuota/);
    assert.match(await ok('delete', 'job', 'hog'), /job.batch "hog" deleted/);
    assert.match(await ok('wait', '--for=condition=Admitted', waiter, '--timeout=30s'), /condition met/);
    // A spec edit bumps the generation; the conditions are stamped with it, so wait still succeeds.
    await ok('patch', waiter, '--type=merge', '-p', '{"spec":{"maximumExecutionTimeSeconds":86400}}');
    assert.match(await ok('get', waiter, '-o', 'jsonpath={.metadata.generation}'), /^2$/);
    assert.match(await ok('wait', '--for=condition=Admitted', waiter, '--timeout=20s'), /condition met/);
  });

  it('patches with each type: strategic (built-in), merge, json, status subresource, and apply --server-side', async () => {
    assert.match(await ok('patch', 'node', 'b2-r2-n4', '-p', '{"metadata":{"labels":{"smp":"yes"}}}'), /patched/);
    assert.match(await ok('patch', 'node', 'b2-r2-n4', '-p', '{"metadata":{"labels":{"smp":"yes"}}}'), /patched \(no change\)/);
    assert.match(await ok('patch', 'clusterqueue', 'cluster-queue', '--type=merge', '-p', '{"metadata":{"labels":{"m":"1"}}}'), /patched/);
    assert.match(
      await ok('patch', 'node', 'b2-r2-n4', '--type=json', '-p', '[{"op":"add","path":"/metadata/labels/j","value":"2"}]'),
      /patched/,
    );
    assert.match(await ok('get', 'node', 'b2-r2-n4', '-o', 'jsonpath={.metadata.labels.smp}{.metadata.labels.j}'), /^yes2$/);
    const lq = 'localqueue/user-queue';
    await ok('patch', lq, '--subresource=status', '--type=merge', '-p', '{"status":{"flavorsReservation":[]}}');
    const smp = await k('patch', 'clusterqueue', 'cluster-queue', '-p', '{"metadata":{"labels":{"x":"y"}}}');
    assert.notEqual(smp.code, 0);
    assert.match(smp.stderr, /application\/strategic-merge-patch\+json is not supported by kueue.x-k8s.io\/v1beta2, Kind=ClusterQueue/);
    const ssa = file(
      'ssa.yaml',
      'apiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata:\n  name: ssa-queue\n  namespace: default\nspec:\n  clusterQueue: cluster-queue\n',
    );
    assert.match(await ok('apply', '--server-side', '-f', ssa), /serverside-applied/);
    assert.match(await ok('apply', '--server-side', '-f', ssa), /serverside-applied/);
  });

  it("refuses a bad manifest with kubectl's usual error text", async () => {
    const bad = await k('apply', '-f', file('bad.yaml', 'apiVersion: v1\nkind: Pod\nmetadata:\n  name: bad\nspec: {}\n'));
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /The Pod "bad" is invalid: spec.containers: Required value/);
    // With validation on, kubectl first looks for the kind's OpenAPI (it then needs /openapi/v2, which is not served).
    const unknownFile = file('unknown.yaml', 'apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w\n');
    const unknown = await k('apply', '-f', unknownFile);
    assert.equal(unknown.code, 1);
    assert.match(
      unknown.stderr,
      /error validating ".*unknown.yaml": error validating data: the server could not find the requested resource/,
    );
    const unvalidated = await k('apply', '--validate=false', '-f', unknownFile);
    assert.match(unvalidated.stderr, /no matches for kind "Widget" in version "example.com\/v1"/);
    const missing = await k('get', 'workload', 'nosuch');
    assert.match(missing.stderr, /Error from server \(NotFound\): workloads.kueue.x-k8s.io "nosuch" not found/);
    const dup = file('dup.yaml', 'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: dup\n');
    await ok('create', '-f', dup);
    assert.match(
      (await k('create', '-f', dup)).stderr,
      /Error from server \(AlreadyExists\): error when creating ".*dup.yaml": namespaces "dup" already exists/,
    );
  });

  it('creates a namespace from kubectl create namespace (a protobuf body) and serves version and api-resources', async () => {
    assert.match(await ok('create', 'namespace', 'from-protobuf'), /namespace\/from-protobuf created/);
    assert.match(await ok('version'), /Server Version: v1.32.0-topoqueue/);
    const resources = await ok('api-resources');
    assert.match(resources, /workloads\s+wl\s+kueue.x-k8s.io\/v1beta2\s+true\s+Workload/);
    assert.match(resources, /hypernodes\s+hn\s+topology.volcano.sh\/v1alpha1\s+false\s+HyperNode/);
  });
});

describe('kubectl apply of the examples', { skip: KUBECTL_MISSING }, () => {
  let ex: TestServer;
  before(async () => {
    ex = await startTestServer({ timeScale: 60 });
  });
  after(async () => {
    await ex?.stop();
  });

  it('applies every example under examples/ with kubectl apply -f', async () => {
    const dirs = readdirSync('examples').filter((d) => !d.includes('.'));
    assert.ok(dirs.length >= 5);
    for (const d of dirs) {
      const r = await ex.kubectl(['apply', '-f', join('examples', d)], { timeoutMs: 60_000 });
      assert.equal(r.code, 0, `kubectl apply -f examples/${d}: ${r.stderr}`);
      assert.match(r.stdout, / (created|configured|unchanged)\n/);
    }
  });
});
