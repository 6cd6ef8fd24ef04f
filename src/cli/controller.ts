// `topoqueue controller`: topoqueue's own controllers (scheduler, workload and job
// reconcilers, ungater, node failure, PodGroup and HyperNode status) on a real Kubernetes
// API server, beside kube-scheduler, as Kueue and Volcano run. Nothing of the embedded
// cluster runs here: the cluster has its own job controllers, scheduler and kubelets.
//
// 1. read --config (Kueue's Configuration fields that apply), the kubeconfig (--kubeconfig,
//    KUBECONFIG, ~/.kube/config, or the pod's service account) and --context;
// 2. serve /metrics, /healthz and /readyz on --metrics-port, and the dashboard at /;
// 3. with --leader-elect, campaign for the Lease and run the controllers only while holding
//    it (losing it ends the process, as Kueue's manager does); without, run at once;
// 4. on SIGTERM/SIGINT: stop the controllers, release the lease, close the watches.

import { createServer, type Server } from 'node:http';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { collectDefaultMetrics, Counter } from 'prom-client';
import { parse } from 'yaml';
import { InputError } from '../api/errors.ts';
import { allControllers } from '../controllers/index.ts';
import type { TopoqueueConfig } from '../controllers/config.ts';
import { ClientStore, loadKubeConfig } from '../kube/client-store.ts';
import { type ControllerConfig, parseControllerConfig } from '../kube/kueue-config.ts';
import { LeaderElector, leaseClient } from '../kube/leader-election.ts';
import { requestAttributes } from '../kube/rbac.ts';
import { MUTATING_CONFIGURATION, type TlsMaterial, VALIDATING_CONFIGURATION, WebhookServer, webhookTls } from '../kube/webhook-server.ts';
import { objectValidationHooks } from '../controllers/object-webhook.ts';
import { RealClock } from '../runtime/clock.ts';
import { Manager } from '../runtime/manager.ts';
import { createDashboard } from '../web/dashboard.ts';

export interface ControllerArgs {
  kubeconfig?: string;
  context?: string;
  namespace?: string;
  config?: string;
  leaderElect?: boolean;
  webhookPort?: number;
  metricsPort?: number;
  qps?: number;
  burst?: number;
  /** The lease holder's name (default: host name and a random suffix, as client-go's). */
  identity?: string;
  /** The webhook certificate's directory (tls.crt, tls.key[, ca.crt]: cert-manager's layout); none: generated at start. */
  certDir?: string;
  /** Log format: json (default when stderr is not a terminal) or text. */
  logFormat?: 'json' | 'text';
}

export interface ControllerIo {
  err: (s: string) => void;
  errIsTTY?: boolean;
}

export interface RunningController {
  metricsPort: number;
  webhookPort: number;
  tls: TlsMaterial;
  store: ClientStore;
  manager: Manager<TopoqueueConfig>;
  elector?: LeaderElector;
  config: ControllerConfig;
  /** Resolves when the process should end on its own (the lease was lost): with the exit code. */
  lost: Promise<number>;
  stop(): Promise<void>;
}

/** The --config file (YAML or JSON), merged with the flags (flags win). */
export function controllerConfig(args: ControllerArgs): ControllerConfig {
  let raw: unknown = undefined;
  if (args.config !== undefined) {
    let text: string;
    try {
      text = readFileSync(args.config, 'utf8');
    } catch (e) {
      throw new InputError({ field: '--config' }, `cannot read ${args.config}: ${(e as Error).message}`);
    }
    try {
      raw = parse(text);
    } catch (e) {
      throw new InputError({ file: args.config }, `not YAML: ${(e as Error).message}`);
    }
  }
  const cfg = parseControllerConfig(raw, args.config ?? '--config');
  if (args.namespace !== undefined) {
    cfg.topoqueue = { ...cfg.topoqueue, namespace: args.namespace };
    cfg.leaderElection.resourceNamespace = args.namespace;
  }
  if (args.leaderElect !== undefined) cfg.leaderElection.leaderElect = args.leaderElect;
  if (args.webhookPort !== undefined) cfg.webhookPort = args.webhookPort;
  if (args.metricsPort !== undefined) cfg.metricsPort = args.metricsPort;
  if (args.qps !== undefined) cfg.clientConnection.qps = args.qps;
  if (args.burst !== undefined) cfg.clientConnection.burst = args.burst;
  return cfg;
}

/** pino, JSON lines by default; `level msg key=value` lines on a terminal. */
function makeLogger(io: ControllerIo, format: 'json' | 'text') {
  const write = (line: string) => {
    if (format === 'json') return io.err(line);
    const { level, time, msg, ...rest } = JSON.parse(line) as Record<string, unknown>;
    delete rest.pid;
    delete rest.hostname;
    const name = pino.levels.labels[level as number] ?? String(level);
    const fields = Object.entries(rest)
      .map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`)
      .join(' ');
    io.err(`${new Date(time as number).toISOString()} ${name.toUpperCase().padEnd(5)} ${msg as string}${fields ? ` ${fields}` : ''}\n`);
  };
  return pino({ base: undefined }, { write });
}

export async function startController(args: ControllerArgs, io: ControllerIo): Promise<RunningController> {
  const config = controllerConfig(args);
  const log = makeLogger(io, args.logFormat ?? (io.errIsTTY ? 'text' : 'json'));
  let kubeConfig;
  try {
    kubeConfig = loadKubeConfig({ kubeconfig: args.kubeconfig, context: args.context });
  } catch (e) {
    throw new InputError({ field: args.kubeconfig ? '--kubeconfig' : args.context ? '--context' : 'kubeconfig' }, (e as Error).message);
  }
  const requests = new Counter({
    name: 'topoqueue_api_requests_total',
    help: 'Requests sent to the API server, by RBAC verb, group and resource',
    labelNames: ['verb', 'group', 'resource'],
    registers: [],
  });
  const store = new ClientStore({
    kubeConfig,
    qps: config.clientConnection.qps,
    burst: config.clientConnection.burst,
    onRequest: (method, path) => requests.inc(requestAttributes(method, path)),
    onReflectorError: (resource, err) => log.warn({ resource, err: (err as Error).message }, 'list/watch failed; retrying'),
  });
  const clock = new RealClock();
  const manager = new Manager<TopoqueueConfig>({
    store,
    clock,
    config: config.topoqueue,
    events: { timeNames: true, keep: 1000 },
    logger: {
      error: (controller, key, err) =>
        log.error({ controller, key, err: err instanceof Error ? err.message : String(err) }, 'reconcile failed'),
      info: (controller, message) => log.info({ controller }, message),
    },
  });
  manager.metrics.registry.registerMetric(requests);
  collectDefaultMetrics({ register: manager.metrics.registry });
  for (const c of allControllers()) manager.add(c);
  for (const h of objectValidationHooks()) store.addAdmissionHook(h);

  // Every replica keeps its caches and serves the webhooks; only the leader reconciles.
  let ready = false;
  let synced = false;
  const t0 = performance.now();
  const caches = manager.start().then(() => {
    synced = true;
    log.info({ ms: Math.round(performance.now() - t0) }, 'caches synced');
  });
  const startControllers = async () => {
    await caches;
    manager.startConcurrentWorkers();
    ready = true;
    log.info({ controllers: allControllers().length }, 'controllers running');
  };

  const service = 'topoqueue-webhook-service';
  let tls: TlsMaterial;
  try {
    tls = await webhookTls({ certDir: args.certDir, service, namespace: config.topoqueue.namespace });
  } catch (e) {
    throw new InputError({ field: '--cert-dir' }, (e as Error).message);
  }
  const webhooks = new WebhookServer(() => store.admissionHooks(), tls);
  let webhookPort: number;
  try {
    webhookPort = await webhooks.listen(config.webhookPort);
  } catch (e) {
    throw new InputError({ field: '--webhook-port' }, `cannot listen on port ${config.webhookPort}: ${(e as Error).message}`);
  }
  if (tls.generated) void patchCaBundle(store, tls.ca, (msg, fields) => log.info(fields, msg));

  // The dashboard (docs/dashboard.md) on the same port: it starts watching on its first request.
  const dashboard = createDashboard({ store, title: 'controller' });
  const http: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path === '/metrics') {
      void manager.metrics.text().then((text) => {
        res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4' });
        res.end(text);
      });
    } else if (path === '/healthz' || path === '/livez') {
      res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
    } else if (path === '/readyz') {
      // Ready once the caches synced (the webhooks answer from them); a leader once it also reconciles.
      const ok = synced && (ready || config.leaderElection.leaderElect);
      res.writeHead(ok ? 200 : 503, { 'content-type': 'text/plain' }).end(ok ? 'ok' : 'caches not synced');
    } else if (!dashboard.handle(req, res)) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
    }
  });
  const metricsPort = await new Promise<number>((resolve, reject) => {
    http.once('error', (e) =>
      reject(new InputError({ field: '--metrics-port' }, `cannot listen on port ${config.metricsPort}: ${e.message}`)),
    );
    http.listen(config.metricsPort, () => resolve((http.address() as AddressInfo).port));
  });

  let endLost!: (code: number) => void;
  const lost = new Promise<number>((r) => (endLost = r));
  let elector: LeaderElector | undefined;
  const le = config.leaderElection;
  const identity = args.identity ?? `${hostname()}_${randomUUID()}`;
  log.info(
    {
      server: kubeConfig.getCurrentCluster()?.server,
      namespace: config.topoqueue.namespace,
      metricsPort,
      webhookPort,
      certificate: tls.generated ? 'generated' : args.certDir,
      leaderElect: le.leaderElect,
      identity,
    },
    'topoqueue controller starting',
  );
  if (le.leaderElect) {
    elector = new LeaderElector({
      leases: leaseClient((method, path, body) => store.request(method, path, body)),
      namespace: le.resourceNamespace,
      name: le.resourceName,
      identity,
      leaseDurationMs: le.leaseDurationMs,
      renewDeadlineMs: le.renewDeadlineMs,
      retryPeriodMs: le.retryPeriodMs,
      onStartedLeading: startControllers,
      onStoppedLeading: () => endLost(1),
      log: (msg, fields) => log.info(fields ?? {}, msg),
    });
    elector.run();
  } else {
    await startControllers();
  }

  let stopping: Promise<void> | undefined;
  const stop = () =>
    (stopping ??= (async () => {
      log.info('stopping');
      manager.stop();
      await elector?.stop();
      store.close();
      await webhooks.close();
      // The dashboard's event streams first: the server waits for open connections to end.
      dashboard.close();
      await new Promise<void>((r) => http.close(() => r()));
      http.closeAllConnections();
    })());
  return { metricsPort, webhookPort, tls, store, manager, elector, config, lost, stop };
}

/** Puts a generated CA into topoqueue's webhook configurations (when they are installed). */
async function patchCaBundle(store: ClientStore, ca: string, log: (msg: string, fields: Record<string, unknown>) => void): Promise<void> {
  const caBundle = Buffer.from(ca).toString('base64');
  for (const [plural, name] of [
    ['mutatingwebhookconfigurations', MUTATING_CONFIGURATION],
    ['validatingwebhookconfigurations', VALIDATING_CONFIGURATION],
  ] as const) {
    const path = `/apis/admissionregistration.k8s.io/v1/${plural}/${name}`;
    try {
      const cfg = await store.request<{ webhooks?: { clientConfig?: { caBundle?: string } }[] }>('GET', path);
      for (const w of cfg.webhooks ?? []) w.clientConfig = { ...w.clientConfig, caBundle };
      await store.request('PUT', path, cfg);
      log('webhook CA patched in', { configuration: name });
    } catch (e) {
      log('webhook CA not patched in (is deploy/ installed?)', { configuration: name, err: (e as Error).message });
    }
  }
}

/** `topoqueue controller`: runs until SIGTERM/SIGINT (exit 0) or until the lease is lost (exit 1). */
export async function controllerCommand(args: ControllerArgs, io: ControllerIo): Promise<number> {
  const running = await startController(args, io);
  return new Promise<number>((done) => {
    const onSignal = () => {
      process.off('SIGTERM', onSignal);
      process.off('SIGINT', onSignal);
      void running.stop().then(() => done(0));
    };
    process.on('SIGTERM', onSignal);
    process.on('SIGINT', onSignal);
    void running.lost.then((code) => {
      process.off('SIGTERM', onSignal);
      process.off('SIGINT', onSignal);
      void running.stop().then(() => done(code));
    });
  });
}
