// The two-process setup of a real cluster: `serve --controllers=none` plays the cluster (its
// job controllers, binder, kubelets, and topoqueue's webhooks as kube-apiserver would call
// them), and `topoqueue controller` runs as a child process, talking to it over HTTP with a
// kubeconfig through @kubernetes/client-node. Time in the cluster runs 60x (a pod's 2m runs
// 2 s); the controller is on the real clock.
//
// Checked: a Job with a rack topology request admitted once and finished on one rack; a
// preemption; the controller SIGKILLed mid-run and restarted (nothing admitted twice); two
// replicas with leader election, the leader SIGKILLed and the standby taking over; the API
// server restarted under the controller (its watches relist, a Job created after is
// scheduled); and the RBAC rules of deploy/ covering every request the controller made.

import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import * as k8s from '@kubernetes/client-node';
import { kubeConfigFor } from '../kube/client-store.ts';
import { allows, clusterRules, controllerSurface, leaderElectionRules } from '../kube/rbac.ts';
import { eventually } from '../testing/kube.ts';
import { type RunningServe, startServe } from './serve.ts';

const RACKS = 2;
const HOSTS = 4;

function clusterYaml(): string {
  const docs: string[] = [
    `apiVersion: kueue.x-k8s.io/v1beta2
kind: Topology
metadata: {name: default}
spec:
  levels: [{nodeLabel: cloud.provider.com/topology-rack}, {nodeLabel: kubernetes.io/hostname}]`,
    `apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: tas}
spec: {nodeLabels: {pool: tas}, topologyName: default}`,
    `apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: cq}
spec:
  namespaceSelector: {}
  preemption: {withinClusterQueue: LowerPriority}
  resourceGroups:
  - coveredResources: [nvidia.com/gpu]
    flavors: [{name: tas, resources: [{name: nvidia.com/gpu, nominalQuota: "${RACKS * HOSTS * 8}"}]}]`,
    `apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: q, namespace: default}
spec: {clusterQueue: cq}`,
    `apiVersion: kueue.x-k8s.io/v1beta2
kind: WorkloadPriorityClass
metadata: {name: high}
value: 1000`,
    `apiVersion: kueue.x-k8s.io/v1beta2
kind: WorkloadPriorityClass
metadata: {name: low}
value: 10`,
  ];
  for (let r = 1; r <= RACKS; r++) {
    for (let h = 1; h <= HOSTS; h++) {
      const name = `r${r}-n${h}`;
      docs.push(`apiVersion: v1
kind: Node
metadata:
  name: ${name}
  labels: {kubernetes.io/hostname: ${name}, pool: tas, cloud.provider.com/topology-rack: rack-${r}}
status:
  allocatable: {cpu: "96", memory: 1Ti, nvidia.com/gpu: "8", pods: "110"}
  conditions: [{type: Ready, status: "True"}]`);
    }
  }
  return docs.join('\n---\n') + '\n';
}

const job = (name: string, opts: { pods: number; run?: string; priority?: string }): k8s.V1Job => ({
  apiVersion: 'batch/v1',
  kind: 'Job',
  metadata: {
    name,
    namespace: 'default',
    labels: { 'kueue.x-k8s.io/queue-name': 'q', ...(opts.priority ? { 'kueue.x-k8s.io/priority-class': opts.priority } : {}) },
  },
  spec: {
    parallelism: opts.pods,
    completions: opts.pods,
    template: {
      metadata: {
        annotations: {
          'kueue.x-k8s.io/podset-required-topology': 'cloud.provider.com/topology-rack',
          'topoqueue.io/run-duration': opts.run ?? '2m',
        },
      },
      spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'x', resources: { requests: { 'nvidia.com/gpu': '8' } } }] },
    },
  },
});

interface Controller {
  proc: ChildProcess;
  identity: string;
  log: string[];
  exited: Promise<number | null>;
}

describe('topoqueue controller against serve --controllers=none over HTTP', { timeout: 120_000 }, () => {
  let dir: string;
  let serve: RunningServe;
  let port: number;
  let kc: k8s.KubeConfig;
  let batch: k8s.BatchV1Api;
  let custom: k8s.CustomObjectsApi;
  let core: k8s.CoreV1Api;
  const controllers: Controller[] = [];

  const startServer = async (p = 0) => {
    serve = await startServe(
      {
        port: p,
        address: '127.0.0.1',
        kubeconfig: join(dir, 'kubeconfig'),
        filename: p === 0 ? [join(dir, 'cluster.yaml')] : [],
        timeScale: 60,
        controllers: 'none',
        dataDir: join(dir, 'data'),
      },
      { out: () => {}, err: () => {} },
    );
    port = serve.port;
  };

  const startController = (identity: string, extra: string[] = []): Controller => {
    const proc = spawn(
      process.execPath,
      [
        'bin/topoqueue.js',
        'controller',
        '--kubeconfig',
        join(dir, 'kubeconfig'),
        '--metrics-port',
        '0',
        '--webhook-port',
        '0',
        '--log-format',
        'json',
        '--identity',
        identity,
        ...extra,
      ],
      {
        stdio: ['ignore', 'ignore', 'pipe'],
      },
    );
    const c: Controller = { proc, identity, log: [], exited: new Promise((r) => proc.on('exit', (code) => r(code))) };
    proc.stderr!.setEncoding('utf8');
    proc.stderr!.on('data', (s: string) => c.log.push(...s.split('\n').filter(Boolean)));
    controllers.push(c);
    return c;
  };
  const leading = (c: Controller) =>
    eventually(
      () => (c.log.some((l) => l.includes('controllers running')) ? true : undefined),
      `${c.identity} running its controllers`,
      20_000,
    );
  const kill = async (c: Controller, signal: NodeJS.Signals = 'SIGKILL') => {
    c.proc.kill(signal);
    return c.exited;
  };

  const workload = async (jobName: string) => {
    const list = (await custom.listNamespacedCustomObject({
      group: 'kueue.x-k8s.io',
      version: 'v1beta2',
      namespace: 'default',
      plural: 'workloads',
    })) as {
      items: {
        metadata: { name: string; ownerReferences?: { name: string }[] };
        status?: { conditions?: { type: string; status: string; reason?: string }[]; admission?: unknown };
      }[];
    };
    return list.items.find((w) => w.metadata.ownerReferences?.some((o) => o.name === jobName));
  };
  const condition = (w: Awaited<ReturnType<typeof workload>>, type: string) =>
    w?.status?.conditions?.find((c) => c.type === type && c.status === 'True');
  const finished = (jobName: string, timeoutMs = 30_000) =>
    eventually(async () => (condition(await workload(jobName), 'Finished') ? true : undefined), `Job ${jobName} finished`, timeoutMs);
  const admitted = (jobName: string, timeoutMs = 30_000) =>
    eventually(async () => (condition(await workload(jobName), 'Admitted') ? true : undefined), `Job ${jobName} admitted`, timeoutMs);
  /** Admitted events per workload name, counting repeats (an aggregated Event's count). */
  const admissions = async (): Promise<Map<string, number>> => {
    const events = await core.listNamespacedEvent({ namespace: 'default' });
    const out = new Map<string, number>();
    for (const e of events.items)
      if (e.reason === 'Admitted' && e.involvedObject.kind === 'Workload')
        out.set(e.involvedObject.name!, (out.get(e.involvedObject.name!) ?? 0) + (e.count ?? 1));
    return out;
  };

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'tq-controller-'));
    writeFileSync(join(dir, 'cluster.yaml'), clusterYaml());
    await startServer();
    kc = kubeConfigFor(`http://127.0.0.1:${port}`);
    batch = kc.makeApiClient(k8s.BatchV1Api);
    custom = kc.makeApiClient(k8s.CustomObjectsApi);
    core = kc.makeApiClient(k8s.CoreV1Api);
  });
  after(async () => {
    for (const c of controllers) if (c.proc.exitCode === null && c.proc.signalCode === null) await kill(c);
    await serve?.stop();
  });

  it('schedules a Job with a rack topology request: admitted once, on one rack, finished', async () => {
    const c = startController('solo');
    await leading(c);
    await batch.createNamespacedJob({ namespace: 'default', body: job('tas', { pods: 4 }) });
    await finished('tas');
    const pods = await core.listNamespacedPod({ namespace: 'default', labelSelector: 'batch.kubernetes.io/job-name=tas' });
    const racks = new Set(pods.items.map((p) => p.spec?.nodeName?.split('-')[0]));
    assert.equal(pods.items.length, 4);
    assert.equal(racks.size, 1, `one rack: ${[...racks].join(', ')}`);
    const w = await workload('tas');
    assert.equal((await admissions()).get(w!.metadata.name), 1);
  });

  it('preempts a low-priority Job for a high-priority one', async () => {
    // Two low-priority Jobs fill the quota, a rack each; the high-priority one needs a rack.
    for (const name of ['low-a', 'low-b'])
      await batch.createNamespacedJob({ namespace: 'default', body: job(name, { pods: HOSTS, run: '10h', priority: 'low' }) });
    await admitted('low-a');
    await admitted('low-b');
    await batch.createNamespacedJob({ namespace: 'default', body: job('high', { pods: HOSTS, run: '10h', priority: 'high' }) });
    await admitted('high', 30_000);
    const lows = [await workload('low-a'), await workload('low-b')];
    const preempted = lows.filter((w) => w?.status?.conditions?.some((x) => x.type === 'Evicted' && x.reason === 'Preempted'));
    assert.equal(preempted.length, 1, 'one low-priority Job was preempted');
    assert.ok(!condition(preempted[0], 'Admitted'), 'and lost its admission');
    for (const name of ['low-a', 'low-b', 'high'])
      await batch.deleteNamespacedJob({ name, namespace: 'default', propagationPolicy: 'Background' });
    await eventually(
      async () => ((await workload('low-a')) || (await workload('low-b')) || (await workload('high')) ? undefined : true),
      'the Workloads of deleted Jobs gone',
    );
  });

  it('restarted after a SIGKILL mid-run, the controller admits nothing twice', async () => {
    // Every transition of a Workload to Admitted=True, as a watcher of the API server sees them.
    const admittedNow = new Map<string, boolean>();
    const transitions = new Map<string, number>();
    const watch = await new k8s.Watch(kc).watch(
      '/apis/kueue.x-k8s.io/v1beta2/namespaces/default/workloads',
      {},
      (
        _type,
        obj: {
          metadata: { name: string; ownerReferences?: { name: string }[] };
          status?: { conditions?: { type: string; status: string }[] };
        },
      ) => {
        const job = obj.metadata.ownerReferences?.[0]?.name ?? obj.metadata.name;
        const now = obj.status?.conditions?.some((c) => c.type === 'Admitted' && c.status === 'True') ?? false;
        if (now && !admittedNow.get(job)) transitions.set(job, (transitions.get(job) ?? 0) + 1);
        admittedNow.set(job, now);
      },
      () => {},
    );
    try {
      for (let i = 0; i < 6; i++)
        await batch.createNamespacedJob({ namespace: 'default', body: job(`burst-${i}`, { pods: 4, run: '1m' }) });
      await admitted('burst-0');
      await kill(controllers[0]!);
      startController('solo-again');
      for (let i = 0; i < 6; i++) await finished(`burst-${i}`, 40_000);
    } finally {
      watch.abort();
    }
    for (let i = 0; i < 6; i++) assert.equal(transitions.get(`burst-${i}`), 1, `burst-${i} admitted once`);
  });

  it('with two replicas and leader election, the standby takes over within the lease when the leader dies', async () => {
    await kill(controllers.at(-1)!);
    const cfg = join(dir, 'config.yaml');
    writeFileSync(
      cfg,
      'apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\nleaderElection:\n  leaderElect: true\n  leaseDuration: 3s\n  renewDeadline: 2s\n  retryPeriod: 500ms\n',
    );
    const a = startController('replica-a', ['--config', cfg]);
    await leading(a);
    const b = startController('replica-b', ['--config', cfg]);
    await eventually(() => (b.log.some((l) => l.includes('topoqueue controller starting')) ? true : undefined), 'the standby started');
    await new Promise((r) => setTimeout(r, 1000));
    assert.ok(
      b.log.some((l) => l.includes('caches synced')),
      'the standby keeps its caches (and serves the webhooks)',
    );
    assert.ok(!b.log.some((l) => l.includes('controllers running')), 'but waits while the leader renews');
    const t0 = Date.now();
    await kill(a);
    await leading(b);
    const took = Date.now() - t0;
    assert.ok(took < 3000 + 2000, `took over in ${took} ms (lease 3 s)`);
    await batch.createNamespacedJob({ namespace: 'default', body: job('after-failover', { pods: 2 }) });
    await finished('after-failover');
    const lease = (await kc
      .makeApiClient(k8s.CoordinationV1Api)
      .readNamespacedLease({ name: 'c1f6bfd2.kueue.x-k8s.io', namespace: 'topoqueue-system' })) as k8s.V1Lease;
    assert.equal(lease.spec?.holderIdentity, 'replica-b');
  });

  it('keeps scheduling after the API server restarts under it (watches relist)', async () => {
    const b = controllers.at(-1)!;
    await serve.stop();
    await startServer(port);
    await batch.createNamespacedJob({ namespace: 'default', body: job('after-restart', { pods: 2 }) });
    await finished('after-restart', 30_000);
    assert.equal(b.proc.exitCode, null, 'the controller rode the restart out');
  });

  it('sent only requests the generated RBAC rules allow (deploy/rbac.yaml)', async () => {
    const b = controllers.at(-1)!;
    const started = b.log
      .map((l) => JSON.parse(l) as { msg?: string; metricsPort?: number })
      .find((l) => l.msg === 'topoqueue controller starting');
    const text = await (await fetch(`http://127.0.0.1:${started!.metricsPort}/metrics`)).text();
    const seen = [...text.matchAll(/^topoqueue_api_requests_total\{verb="([^"]*)",group="([^"]*)",resource="([^"]*)"\} (\d+)/gm)].map(
      (m) => ({ verb: m[1]!, group: m[2]!, resource: m[3]! }),
    );
    assert.ok(seen.length >= 10, `requests recorded: ${seen.length}`);
    const rules = [...clusterRules(controllerSurface().informerKinds), ...leaderElectionRules()];
    const denied = seen
      .filter((r) => !allows(rules, r.verb, r.group, r.resource))
      .map((r) => `${r.verb} ${r.resource}${r.group ? `.${r.group}` : ''}`);
    assert.deepEqual(denied, [], 'every request is covered by a rule');
  });

  it('a graceful stop releases the lease', async () => {
    const b = controllers.at(-1)!;
    assert.equal(await kill(b, 'SIGTERM'), 0);
    const lease = (await kc
      .makeApiClient(k8s.CoordinationV1Api)
      .readNamespacedLease({ name: 'c1f6bfd2.kueue.x-k8s.io', namespace: 'topoqueue-system' })) as k8s.V1Lease;
    assert.equal(lease.spec?.holderIdentity ?? '', '');
  });
});
