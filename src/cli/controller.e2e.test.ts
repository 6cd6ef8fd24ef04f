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

/** A pod template asking for 4 GPUs, every pod of its PodSet in one rack, running `run` (cluster time). */
const tasTemplate = (run = '1m') => ({
  metadata: {
    annotations: { 'kueue.x-k8s.io/podset-required-topology': 'cloud.provider.com/topology-rack', 'topoqueue.io/run-duration': run },
  },
  spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'x', resources: { requests: { 'nvidia.com/gpu': '4' } } }] },
});
const queued = (name: string) => ({ name, namespace: 'default', labels: { 'kueue.x-k8s.io/queue-name': 'q' } });

/** One job of every framework but batch/v1 Job (the other tests run those), each asking for racks: 11 pods of 4 GPUs. */
const frameworkJobs = (): { group: string; version: string; plural: string; body: Record<string, unknown> }[] => [
  {
    group: 'jobset.x-k8s.io',
    version: 'v1alpha2',
    plural: 'jobsets',
    body: {
      apiVersion: 'jobset.x-k8s.io/v1alpha2',
      kind: 'JobSet',
      metadata: queued('fw-jobset'),
      spec: {
        replicatedJobs: [{ name: 'w', replicas: 2, template: { spec: { parallelism: 1, completions: 1, template: tasTemplate() } } }],
      },
    },
  },
  {
    group: 'kubeflow.org',
    version: 'v2beta1',
    plural: 'mpijobs',
    body: {
      apiVersion: 'kubeflow.org/v2beta1',
      kind: 'MPIJob',
      metadata: queued('fw-mpijob'),
      spec: { mpiReplicaSpecs: { Launcher: { replicas: 1, template: tasTemplate() }, Worker: { replicas: 2, template: tasTemplate() } } },
    },
  },
  {
    group: 'leaderworkerset.x-k8s.io',
    version: 'v1',
    plural: 'leaderworkersets',
    body: {
      apiVersion: 'leaderworkerset.x-k8s.io/v1',
      kind: 'LeaderWorkerSet',
      metadata: queued('fw-lws'),
      spec: { replicas: 1, leaderWorkerTemplate: { size: 2, workerTemplate: tasTemplate('10h') } },
    },
  },
  {
    group: 'batch.volcano.sh',
    version: 'v1alpha1',
    plural: 'jobs',
    body: {
      apiVersion: 'batch.volcano.sh/v1alpha1',
      kind: 'Job',
      metadata: queued('fw-volcano'),
      spec: { schedulerName: 'volcano', minAvailable: 2, tasks: [{ name: 'worker', replicas: 2, template: tasTemplate() }] },
    },
  },
];

/** A plain-pod group (KEP-976) of two pods. */
const groupPod = (name: string): k8s.V1Pod => {
  const t = tasTemplate();
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace: 'default',
      labels: { 'kueue.x-k8s.io/queue-name': 'q', 'kueue.x-k8s.io/pod-group-name': 'fw-pods' },
      annotations: { ...t.metadata.annotations, 'kueue.x-k8s.io/pod-group-total-count': '2' },
    },
    spec: t.spec as k8s.V1PodSpec,
  };
};

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
  /** The requests a controller sent (its topoqueue_api_requests_total) that the generated RBAC rules do not allow. */
  const deniedRequests = async (c: Controller): Promise<string[]> => {
    const started = c.log
      .map((l) => JSON.parse(l) as { msg?: string; metricsPort?: number })
      .find((l) => l.msg === 'topoqueue controller starting');
    const text = await (await fetch(`http://127.0.0.1:${started!.metricsPort}/metrics`)).text();
    const seen = [...text.matchAll(/^topoqueue_api_requests_total\{verb="([^"]*)",group="([^"]*)",resource="([^"]*)"\} (\d+)/gm)].map(
      (m) => ({ verb: m[1]!, group: m[2]!, resource: m[3]! }),
    );
    assert.ok(seen.length >= 10, `requests recorded: ${seen.length}`);
    const rules = [...clusterRules(controllerSurface().informerKinds), ...leaderElectionRules()];
    return seen
      .filter((r) => !allows(rules, r.verb, r.group, r.resource))
      .map((r) => `${r.verb} ${r.resource}${r.group ? `.${r.group}` : ''}`);
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

  const workloads = async () =>
    (
      (await custom.listNamespacedCustomObject({
        group: 'kueue.x-k8s.io',
        version: 'v1beta2',
        namespace: 'default',
        plural: 'workloads',
      })) as {
        items: {
          metadata: { name: string; ownerReferences?: { kind: string; name: string }[] };
          status?: {
            conditions?: { type: string; status: string; reason?: string }[];
            admission?: { podSetAssignments?: { name: string; topologyAssignment?: unknown }[] };
          };
        }[];
      }
    ).items;
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

  it('runs a job of every framework with rack topology requests: JobSet, MPIJob, LeaderWorkerSet, Volcano Job, a plain-pod group', async () => {
    for (const j of frameworkJobs())
      await custom.createNamespacedCustomObject({
        group: j.group,
        version: j.version,
        namespace: 'default',
        plural: j.plural,
        body: j.body,
      });
    for (const n of ['fw-pods-0', 'fw-pods-1']) await core.createNamespacedPod({ namespace: 'default', body: groupPod(n) });
    const byOwner = async (name: string) =>
      (await workloads()).find((w) => w.metadata.name === name || w.metadata.ownerReferences?.some((o) => o.name === name));
    const done = (name: string, type: string) =>
      eventually(async () => (condition(await byOwner(name), type) ? true : undefined), `${name} ${type}`, 40_000);
    // A LeaderWorkerSet serves until deleted: admitted with its pods running is its end state.
    await done('fw-lws', 'Admitted');
    await eventually(
      async () => {
        const pods = await core.listNamespacedPod({ namespace: 'default', labelSelector: 'leaderworkerset.sigs.k8s.io/name=fw-lws' });
        return pods.items.length === 2 && pods.items.every((p) => p.status?.phase === 'Running') ? pods.items : undefined;
      },
      'the LeaderWorkerSet pods running',
      40_000,
    );
    for (const name of ['fw-jobset', 'fw-mpijob', 'fw-volcano', 'fw-pods']) await done(name, 'Finished');
    // Every PodSet placed by TAS, and every Workload admitted once.
    const fw = (await workloads()).filter((x) => x.metadata.ownerReferences?.some((o) => o.name.startsWith('fw-')));
    assert.equal(
      new Set(fw.map((w) => w.metadata.ownerReferences![0]!.kind)).size,
      5,
      'JobSet, MPIJob, LeaderWorkerSet, Job (Volcano) and Pod owners',
    );
    const admitted = await admissions();
    for (const w of fw) {
      assert.ok(w.status?.admission?.podSetAssignments?.length, `${w.metadata.name} admitted`);
      for (const psa of w.status?.admission?.podSetAssignments ?? [])
        assert.ok(psa.topologyAssignment, `${w.metadata.name}/${psa.name} has a topology assignment`);
      assert.equal(admitted.get(w.metadata.name), 1, `${w.metadata.name} admitted once`);
    }
    await custom.deleteNamespacedCustomObject({
      group: 'leaderworkerset.x-k8s.io',
      version: 'v1',
      namespace: 'default',
      plural: 'leaderworkersets',
      name: 'fw-lws',
      propagationPolicy: 'Background',
    });
    await eventually(async () => ((await byOwner('fw-lws')) ? undefined : true), 'the LeaderWorkerSet Workload gone', 20_000);
  });

  it("replaces a deleted node in a running Workload's topology assignment, and the Job finishes", async () => {
    await batch.createNamespacedJob({ namespace: 'default', body: job('nf', { pods: 2, run: '4m' }) });
    const running = await eventually(async () => {
      const pods = await core.listNamespacedPod({ namespace: 'default', labelSelector: 'batch.kubernetes.io/job-name=nf' });
      return pods.items.length === 2 && pods.items.every((p) => p.status?.phase === 'Running' && p.spec?.nodeName) ? pods.items : undefined;
    }, 'the two pods of nf running');
    const victim = running[0]!.spec!.nodeName!;
    const nodeObject = await core.readNode({ name: victim });
    await core.deleteNode({ name: victim });
    const replaced = await eventually(
      async () => {
        const events = await core.listNamespacedEvent({ namespace: 'default' });
        return events.items.find((e) => e.reason === 'NodeReplaced' && e.involvedObject.kind === 'Workload');
      },
      'a NodeReplaced event on the Workload',
      20_000,
    );
    assert.equal(replaced.message, `The pods of unhealthy node(s) ${victim} have a new place in the topology assignment`);
    const w = await workload('nf');
    assert.ok(!JSON.stringify(w?.status?.admission).includes(`"${victim}"`), `the assignment no longer names ${victim}`);
    await finished('nf', 40_000);
    const pods = await core.listNamespacedPod({ namespace: 'default', labelSelector: 'batch.kubernetes.io/job-name=nf' });
    const racks = new Set(pods.items.filter((p) => p.status?.phase === 'Succeeded').map((p) => p.spec?.nodeName?.split('-')[0]));
    assert.equal(racks.size, 1, 'the replacement stayed in the rack');
    assert.ok(
      pods.items.some(
        (p) => p.status?.phase === 'Succeeded' && p.spec?.nodeName !== victim && p.metadata?.name !== running[0]!.metadata?.name,
      ),
      'a replacement pod ran elsewhere',
    );
    // The node comes back for the tests after this one.
    await core.createNode({
      body: { apiVersion: 'v1', kind: 'Node', metadata: { name: victim, labels: nodeObject.metadata?.labels }, status: nodeObject.status },
    });
    assert.equal((await core.readNode({ name: victim })).status?.allocatable?.['nvidia.com/gpu'], '8', 'back with its GPUs');
    // Failing pods is a status write (pods/status): covered by the generated rules too.
    assert.deepEqual(await deniedRequests(controllers[0]!), [], 'every request of this run is covered by a rule');
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
    assert.deepEqual(await deniedRequests(controllers.at(-1)!), [], 'every request is covered by a rule');
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
