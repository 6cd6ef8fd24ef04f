// `topoqueue serve`: the embedded cluster (store, every controller, the stand-ins) on the
// real clock, behind a Kubernetes REST API that stock kubectl and client-node talk to.
//
// 1. load the manifests (-f, the same loader as `plan`), or the built-in example data
//    centre when there is no -f;
// 2. start the cluster (webhooks, informers, workers) on a clock sped up --time-scale times;
// 3. create the objects, then serve the API on --address:--port and write a kubeconfig;
//    the dashboard (web/dashboard.ts) answers the paths the API does not, `/` first;
// 4. on SIGTERM/SIGINT: stop accepting requests, let in-flight writes finish, stop.

import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { stringify } from 'yaml';
import { InputError } from '../api/errors.ts';
import type { KObject } from '../api/objects.ts';
import { EmbeddedCluster } from '../cluster/embedded.ts';
import { RESOURCES } from '../kube/resources.ts';
import { standIns } from '../cluster/index.ts';
import { defaultConfig, type TopoqueueConfig } from '../controllers/config.ts';
import { jobReconciler } from '../controllers/job-reconciler.ts';
import { podGroupController } from '../controllers/pod-group-controller.ts';
import type { Clock } from '../runtime/clock.ts';
import { Manager } from '../runtime/manager.ts';
import { ApiServer } from '../kube/server.ts';
import { ScaledClock } from '../runtime/clock.ts';
import type { MemoryStore } from '../runtime/memory-store.ts';
import { DurableStoreError, openDurableStore, type DurableStore } from '../runtime/durable-store.ts';
import { createDashboard, type Dashboard } from '../web/dashboard.ts';
import { loadManifests } from './load.ts';
import { exampleDataCentre } from './serve-example.ts';

export interface ServeArgs {
  port: number;
  address: string;
  kubeconfig?: string;
  dataDir?: string;
  filename: string[];
  timeScale: number;
  /** none: only the stand-ins (job controllers, binder, kubelets...) and topoqueue's webhooks run; `topoqueue controller` schedules. Default all. */
  controllers?: 'all' | 'none';
}

export interface ServeIo {
  out: (s: string) => void;
  err: (s: string) => void;
}

export interface RunningServe {
  port: number;
  kubeconfig: string;
  cluster: EmbeddedCluster;
  server: ApiServer;
  dashboard: Dashboard;
  /** Graceful stop: no new requests, in-flight writes finish, controllers stop. */
  stop(): Promise<void>;
}

/** serve's config.minCycleIntervalMs (cluster time). */
export const SERVE_CYCLE_INTERVAL_MS = 20;

/** Namespaces every cluster has. */
const SYSTEM_NAMESPACES = ['default', 'kube-system', 'kube-public', 'kube-node-lease'];

export function kubeconfigText(server: string): string {
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'topoqueue', cluster: { server, 'insecure-skip-tls-verify': true } }],
    contexts: [{ name: 'topoqueue', context: { cluster: 'topoqueue', user: 'anon', namespace: 'default' } }],
    'current-context': 'topoqueue',
    users: [{ name: 'anon', user: {} }],
  });
}

export function parseTimeScale(v: string): number {
  const n = Number(v);
  if (!Number.isFinite(n) || n <= 0)
    throw new InputError(
      { field: '--time-scale' },
      `must be a positive number (1 is real time, 60 makes an hour pass in a minute), got ${JSON.stringify(v)}`,
    );
  return n;
}

export function parsePort(v: string): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0 || n > 65535)
    throw new InputError({ field: '--port' }, `must be a port number from 0 to 65535 (0 picks a free one), got ${JSON.stringify(v)}`);
  return n;
}

/**
 * The latest time the stored objects record (creation, deletion, condition transitions), in
 * ms: where the cluster clock resumes after a restart, so that times never go backwards.
 */
export function latestRecordedTime(store: MemoryStore): number {
  let latest = 0;
  const see = (t: unknown) => {
    const ms = typeof t === 'string' ? Date.parse(t) : NaN;
    if (ms > latest) latest = ms;
  };
  for (const kind of new Set(RESOURCES.map((r) => r.kind))) {
    for (const o of store.listSync(kind)) {
      see(o.metadata.creationTimestamp);
      see(o.metadata.deletionTimestamp);
      const conditions = (o as { status?: { conditions?: unknown } }).status?.conditions;
      if (Array.isArray(conditions)) for (const c of conditions) see((c as { lastTransitionTime?: unknown }).lastTransitionTime);
    }
  }
  return latest;
}

/** Starts everything and resolves once the API is listening. Bad input throws InputError (exit 2). */
export async function startServe(args: ServeArgs, io: ServeIo): Promise<RunningServe> {
  let objects: KObject[] = [];
  if (args.filename.length > 0) {
    const loaded = loadManifests(args.filename);
    if (loaded.errors.length > 0) {
      for (const e of loaded.errors.slice(1)) io.err(`error: ${e.message}\n`);
      throw loaded.errors[0]!;
    }
    objects = loaded.objects.map((o) => o.object);
  }

  const clock = new ScaledClock(args.timeScale);
  let store: DurableStore | undefined;
  if (args.dataDir !== undefined) {
    try {
      store = await openDurableStore(args.dataDir, { clock });
    } catch (e) {
      if (e instanceof DurableStoreError) throw new InputError({ field: '--data-dir' }, e.message);
      throw e;
    }
    clock.resumeFrom(latestRecordedTime(store));
    if (store.opened.objects > 0)
      io.err(`topoqueue: ${store.opened.objects} object(s) read back from ${args.dataDir} in ${Math.round(store.opened.ms)} ms\n`);
  }
  // No -f: the built-in example data centre, unless the data directory already holds a
  // cluster (a restart resumes its own state; a new, empty directory starts like memory).
  if (args.filename.length === 0 && (store === undefined || store.opened.objects === 0)) {
    objects = exampleDataCentre();
    io.err(
      'note: no -f given: loaded the built-in example data centre (16 GPU nodes in 2 blocks x 2 racks, ClusterQueue "cluster-queue", LocalQueue "user-queue" in namespaces default and research)\n',
    );
  }
  // Real time: a burst of API writes makes one scheduling cycle, not one per write.
  const cluster = new EmbeddedCluster({
    clock,
    config: { minCycleIntervalMs: SERVE_CYCLE_INTERVAL_MS },
    ...(store ? { store } : {}),
    ...(args.controllers === 'none' ? { controllers: standIns() } : {}),
  });
  await cluster.start();
  // --controllers=none: the API server still calls topoqueue's webhooks (as a cluster's
  // webhook configurations make kube-apiserver do), hosted here on caches of their own.
  const webhooks = args.controllers === 'none' ? await startWebhookHost(cluster.store, clock) : undefined;
  // Objects already in the data directory stay as they are: -f adds only what is missing.
  const missing = (o: KObject) =>
    !cluster.store.getSync(o.kind, cluster.store.namespaced(o.kind) ? (o.metadata.namespace ?? 'default') : undefined, o.metadata.name);
  for (const ns of SYSTEM_NAMESPACES) {
    const obj = { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } };
    if (missing(obj)) cluster.create(obj);
  }
  for (const r of cluster.load(objects.filter(missing))) if (r.error) io.err(`note: not loaded: ${r.error}\n`);
  cluster.manager.startWorkers();

  const dashboard = createDashboard({ store: cluster.store, clock, title: 'serve' });
  const server = new ApiServer({
    store: cluster.store,
    clock,
    metrics: () => cluster.manager.metrics.text(),
    fallback: (req, res) => dashboard.handle(req, res),
  });
  let port: number;
  try {
    port = await server.listen(args.port, args.address);
  } catch (e) {
    dashboard.close();
    cluster.stop();
    await store?.close();
    throw new InputError({ field: '--port' }, `cannot listen on ${args.address}:${args.port}: ${(e as Error).message}`);
  }
  const host = args.address.includes(':') ? `[${args.address}]` : args.address;
  const url = `http://${host === '0.0.0.0' ? '127.0.0.1' : host}:${port}`;
  const kubeconfig = resolve(args.kubeconfig ?? 'topoqueue.kubeconfig');
  writeFileSync(kubeconfig, kubeconfigText(url));
  io.err(`topoqueue: serving the Kubernetes API on ${url} (port ${port}, time scale ${args.timeScale}); kubeconfig ${kubeconfig}\n`);
  io.err(`topoqueue: dashboard on ${url}/\n`);
  io.out(`kubectl --kubeconfig ${kubeconfig} get workloads -A\n`);

  let stopping: Promise<void> | undefined;
  const stop = () =>
    (stopping ??= (async () => {
      // The dashboard's event streams first: the server waits for open connections to end.
      dashboard.close();
      await server.close();
      webhooks?.stop();
      cluster.stop();
      await store?.close();
    })());
  return { port, kubeconfig, cluster, server, dashboard, stop };
}

/** `topoqueue serve`: runs until SIGTERM or SIGINT. */
export async function serveCommand(args: ServeArgs, io: ServeIo): Promise<void> {
  const running = await startServe(args, io);
  await new Promise<void>((done) => {
    const onSignal = (sig: string) => {
      io.err(`topoqueue: ${sig}: stopping (in-flight requests finish first)\n`);
      process.off('SIGTERM', onSignal);
      process.off('SIGINT', onSignal);
      void running.stop().then(done);
    };
    process.on('SIGTERM', onSignal);
    process.on('SIGINT', onSignal);
  });
}

/**
 * The controllers that register topoqueue's admission hooks (job and pod webhooks), set up on
 * `store` with their informers but never run: only their hooks act.
 */
async function startWebhookHost(store: MemoryStore, clock: Clock): Promise<Manager<TopoqueueConfig>> {
  const host = new Manager<TopoqueueConfig>({ store, clock, config: defaultConfig() });
  host.add(jobReconciler());
  host.add(podGroupController());
  await host.start();
  return host;
}
