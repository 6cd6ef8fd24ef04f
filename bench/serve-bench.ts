// `serve` figures (bench/main.ts, `serve.*`): `topoqueue serve` in a child process on the
// real clock, driven over HTTP by a client in this process, as Kueue's performance runner
// drives a real API server.
//
//   1. peer baseline in real time: the cluster of Kueue's configs/baseline loaded with -f;
//      15,000 bare Workloads POSTed at the peer's arrival times (the workload runner
//      finishes each its run time after admission); one watch on Workloads records each
//      one's admission and finish. Wall time from the first create to the last finish,
//      mean time to admission per class (from the create's reply to the Admitted event).
//   2. API throughput on an empty cluster (no nodes: pods stay pending): 10,000 Pods
//      created by 32 concurrent clients (creates/s); a watch replaying those 10,000 ADDED
//      events from the log (events/s); 2,000 sequential GETs of single Pods (p99 ms).

import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { stringify } from 'yaml';
import type { KObject } from '../src/api/objects.ts';
import { CLASS_NAMES, clusterQueueName, type PeerRunShape, type TasVariant, variants, workloadCount } from './admission-cycle.ts';
import { PEER_RACK } from './shapes.ts';
import { peerSimulationObjects } from './simulate-shapes.ts';

const BIN = fileURLToPath(new URL('../bin/topoqueue.js', import.meta.url));

interface Served {
  url: string;
  proc: ChildProcess;
  /** CPU seconds (user + system) the server has used so far; NaN where /proc is missing. */
  cpuS: () => number;
  stop: () => Promise<void>;
}

/** Starts `topoqueue serve --port 0 -f <objects> [args]` in a child process. */
export async function serveChild(objects: KObject[], args: string[] = []): Promise<Served & { kubeconfig: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'tq-bench-serve-'));
  const file = join(dir, 'cluster.yaml');
  writeFileSync(file, objects.map((o) => stringify(o)).join('---\n'));
  // TOPOQUEUE_BENCH_PROF=DIR: a CPU profile of the server, written when it stops.
  const prof = process.env.TOPOQUEUE_BENCH_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.TOPOQUEUE_BENCH_PROF}`] : [];
  const proc = spawn(
    process.execPath,
    [...prof, BIN, 'serve', '--port', '0', '--kubeconfig', join(dir, 'kubeconfig'), '-f', file, '--time-scale', '1', ...args],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let err = '';
  // Never leave the server running when the benchmark itself fails.
  const orphan = () => proc.kill('SIGKILL');
  process.once('exit', orphan);
  const exited = new Promise<void>((r) =>
    proc.on('exit', () => {
      process.off('exit', orphan);
      r();
    }),
  );
  const port = await new Promise<number>((resolve, reject) => {
    proc.stderr!.on('data', (c: Buffer) => {
      err += c.toString();
      const m = /\(port (\d+),/.exec(err);
      if (m) resolve(Number(m[1]));
    });
    proc.on('exit', (code) => reject(new Error(`serve exited with ${code}: ${err}`)));
  });
  return {
    url: `http://127.0.0.1:${port}`,
    kubeconfig: join(dir, 'kubeconfig'),
    proc,
    cpuS: () => serverCpuS(proc.pid),
    stop: async () => {
      proc.kill('SIGTERM');
      await exited;
    },
  };
}

export function serverCpuS(pid: number | undefined): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return NaN;
  }
}

const agent = new Agent({ keepAlive: true, maxSockets: 32 });

export function call(url: string, method: string, path: string, body?: unknown): Promise<{ status: number; json: () => unknown }> {
  return new Promise((resolve, reject) => {
    const data = body === undefined ? undefined : JSON.stringify(body);
    const req = request(
      `${url}${path}`,
      { method, agent, headers: data ? { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(data) } : {} },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          resolve({ status: res.statusCode ?? 0, json: () => JSON.parse(text) });
        });
      },
    );
    req.on('error', reject);
    req.end(data);
  });
}

/**
 * A watch: `onEvent` per line until `stop()`. When the server ends the stream (it cuts off
 * a client that falls 64 MiB behind), it watches again from the last resourceVersion seen,
 * as an informer does.
 */
export function watch(
  url: string,
  path: string,
  onEvent: (e: { type: string; object: KObject }) => void,
): { stop: () => void; open: Promise<void>; rewatches: () => number } {
  let stopped = false;
  let current: ReturnType<typeof request> | undefined;
  let rv: string | undefined;
  let rewatches = 0;
  const connect = (first: (e?: Error) => void) => {
    const u = new URL(`${url}${path}`);
    if (rv) u.searchParams.set('resourceVersion', rv);
    const req = request(u, (res) => {
      first();
      let buf = '';
      res.on('data', (c: Buffer) => {
        buf += c.toString('utf8');
        let i: number;
        while ((i = buf.indexOf('\n')) >= 0) {
          const e = JSON.parse(buf.slice(0, i)) as { type: string; object: KObject };
          buf = buf.slice(i + 1);
          if (e.type === 'ERROR') throw new Error(`watch: ${JSON.stringify(e.object)}`);
          rv = e.object.metadata.resourceVersion;
          onEvent(e);
        }
      });
      res.on('error', () => {});
      res.on('close', () => {
        if (stopped) return;
        rewatches++;
        connect(() => {});
      });
    });
    req.on('error', (e) => first(e));
    req.end();
    current = req;
  };
  const open = new Promise<void>((resolve, reject) => connect((e) => (e ? reject(e) : resolve())));
  return {
    stop: () => {
      stopped = true;
      current?.destroy();
    },
    open,
    rewatches: () => rewatches,
  };
}

export function metricsText(url: string): Promise<string> {
  return new Promise((resolve) => {
    request(`${url}/metrics`, { agent }, (res) => {
      let t = '';
      res.on('data', (c: Buffer) => (t += c.toString()));
      res.on('end', () => resolve(t));
    })
      .on('error', () => resolve(''))
      .end();
  });
}

/** Scheduling cycles so far (kueue_admission_attempts_total over both results). */
function cycles(metrics: string): number {
  let n = 0;
  for (const m of metrics.matchAll(/^kueue_admission_attempts_total\{[^}]*\} (\d+)/gm)) n += Number(m[1]);
  return n;
}

export const condTrue = (o: KObject, type: string) =>
  ((o as { status?: { conditions?: { type: string; status: string }[] } }).status?.conditions ?? []).some(
    (c) => c.type === type && c.status === 'True',
  );

/**
 * POSTs one Workload. A connection reset (a keep-alive socket the server closed as the
 * request went out, seen on a machine loaded far past its cores) is retried once, and a
 * 409 then means the first attempt got through; any other failure counts as a refused
 * create rather than ending the run.
 */
async function createOnce(url: string, wl: KObject): Promise<boolean> {
  const path = `/apis/kueue.x-k8s.io/v1beta2/namespaces/${wl.metadata.namespace ?? 'default'}/workloads`;
  try {
    return (await call(url, 'POST', path, wl)).status === 201;
  } catch {
    try {
      const r = await call(url, 'POST', path, wl);
      return r.status === 201 || r.status === 409;
    } catch {
      return false;
    }
  }
}

/** POSTs each Workload at its arrival time (ms after `t0`; a timer per due batch), replies awaited in parallel. */
export async function postAtArrivals<T extends { at: number; wl: KObject }>(
  url: string,
  items: readonly T[],
  t0: number,
  onReply: (wl: KObject, ok: boolean, item: T) => void,
): Promise<void> {
  const creates: Promise<void>[] = [];
  let next = 0;
  await new Promise<void>((resolve) => {
    const tick = () => {
      const now = performance.now() - t0;
      while (next < items.length && items[next]!.at <= now) {
        const item = items[next++]!;
        creates.push(createOnce(url, item.wl).then((ok) => onReply(item.wl, ok, item)));
      }
      if (next >= items.length) resolve();
      else setTimeout(tick, Math.max(0, items[next]!.at - (performance.now() - t0)));
    };
    tick();
  });
  await Promise.all(creates);
}

export interface ServeBaselineResult {
  wallMs: number;
  serverCpuS: number;
  /** Times the server ended the benchmark's watch (a slow reader) and it watched again. */
  rewatches: number;
  workloads: number;
  /** Workloads seen Admitted at least once. */
  admitted: number;
  finished: number;
  failedCreates: number;
  meanAdmissionS: Record<string, number>;
}

/** A Workload pod set's rack request for a tas variant. */
const topologyRequest = (v: TasVariant, sliceSize: number) =>
  v === 'required'
    ? { required: PEER_RACK }
    : v === 'preferred'
      ? { preferred: PEER_RACK }
      : { podSetSliceRequiredTopology: PEER_RACK, podSetSliceSize: sliceSize };

/** The shape's Workloads with their arrival times (TAS pod sets and rack requests for a tas shape). */
export function peerWorkloads(shape: PeerRunShape): { at: number; cls: string; wl: KObject }[] {
  const out: { at: number; cls: string; wl: KObject }[] = [];
  for (let c = 0; c < shape.cohorts; c++)
    for (let q = 0; q < shape.clusterQueuesPerCohort; q++) {
      const cq = clusterQueueName(c, q);
      for (const cls of shape.classes) {
        const vs = cls.tas ? variants(cls.tas.variants) : undefined;
        for (let i = 0; i < cls.count; i++) {
          const v = vs?.[i];
          out.push({
            at: i * cls.everyMs,
            cls: cls.name,
            wl: {
              apiVersion: 'kueue.x-k8s.io/v1beta2',
              kind: 'Workload',
              metadata: {
                name: `${cq}-${cls.name}-${String(i).padStart(4, '0')}`,
                namespace: 'default',
                annotations: { 'topoqueue.io/run-duration': `${cls.runtimeMs}ms` },
              },
              spec: {
                queueName: cq,
                priorityClassRef: { group: 'kueue.x-k8s.io', kind: 'WorkloadPriorityClass', name: cls.name },
                priority: cls.priority,
                podSets: [
                  {
                    name: 'main',
                    count: cls.tas?.pods ?? 1,
                    template: {
                      spec: {
                        restartPolicy: 'Never',
                        containers: [{ name: 'c', image: 'busybox', resources: { requests: { cpu: cls.tas?.perPod ?? String(cls.cpu) } } }],
                      },
                    },
                    ...(v && cls.tas ? { topologyRequest: topologyRequest(v, cls.tas.sliceSize) } : {}),
                  },
                ],
              },
            } as unknown as KObject,
          });
        }
      }
    }
  return out.sort((a, b) => a.at - b.at);
}

export async function runServeBaseline(shape: PeerRunShape, log: (s: string) => void): Promise<ServeBaselineResult> {
  const cluster = peerSimulationObjects(shape).filter((o) => o.kind !== 'Job');
  const served = await serveChild(cluster);
  try {
    const wls = peerWorkloads(shape);
    const created = new Map<string, { at: number; cls: string }>();
    const admitted = new Map<string, number>();
    const finished = new Set<string>();
    let allDone: () => void = () => {};
    const done = new Promise<void>((r) => (allDone = r));
    const w = watch(served.url, '/apis/kueue.x-k8s.io/v1beta2/namespaces/default/workloads?watch=true', (e) => {
      const name = e.object.metadata.name;
      if (!admitted.has(name) && condTrue(e.object, 'Admitted')) admitted.set(name, performance.now());
      if (!finished.has(name) && condTrue(e.object, 'Finished')) {
        finished.add(name);
        if (finished.size === wls.length) allDone();
      }
    });
    await w.open;
    const t0 = performance.now();
    let failedCreates = 0;
    const progress = setInterval(
      () => {
        const line = `serve ${shape.name}: ${created.size} created, ${admitted.size} admitted, ${finished.size} finished after ${((performance.now() - t0) / 1000).toFixed(0)} s`;
        void metricsText(served.url).then((m) => log(`${line}; ${cycles(m)} scheduling cycles`));
      },
      Number(process.env.TOPOQUEUE_BENCH_PROGRESS_MS ?? 15_000),
    );
    await postAtArrivals(served.url, wls, t0, (wl, ok, item) => {
      if (ok) created.set(wl.metadata.name, { at: performance.now(), cls: item.cls });
      else failedCreates++;
    });
    const limit = setTimeout(allDone, 600_000);
    await done;
    clearTimeout(limit);
    clearInterval(progress);
    const wallMs = performance.now() - t0;
    const serverCpuS = served.cpuS();
    const rewatches = w.rewatches();
    w.stop();
    const sums = new Map<string, { n: number; s: number }>();
    for (const [name, c] of created) {
      const a = admitted.get(name);
      if (a === undefined) continue;
      const e = sums.get(c.cls) ?? { n: 0, s: 0 };
      e.n++;
      e.s += Math.max(0, a - c.at) / 1000;
      sums.set(c.cls, e);
    }
    const meanAdmissionS = Object.fromEntries(CLASS_NAMES.filter((c) => sums.has(c)).map((c) => [c, sums.get(c)!.s / sums.get(c)!.n]));
    return {
      wallMs,
      serverCpuS,
      rewatches,
      workloads: workloadCount(shape),
      admitted: admitted.size,
      finished: finished.size,
      failedCreates,
      meanAdmissionS,
    };
  } finally {
    await served.stop();
  }
}

export interface ApiThroughputResult {
  pods: number;
  createsPerS: number;
  watchEventsPerS: number;
  getP99Ms: number;
  getMedianMs: number;
}

export async function runApiThroughput(pods = 10_000, gets = 2000): Promise<ApiThroughputResult> {
  const served = await serveChild([{ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'bench' } }]);
  try {
    const list = (await call(served.url, 'GET', '/api/v1/namespaces/bench/pods')).json() as { metadata: { resourceVersion: string } };
    const startRv = list.metadata.resourceVersion;
    // 1. creates: 32 clients, each creating its share in sequence.
    const t0 = performance.now();
    let i = 0;
    const worker = async () => {
      while (i < pods) {
        const n = i++;
        const r = await call(served.url, 'POST', '/api/v1/namespaces/bench/pods', {
          apiVersion: 'v1',
          kind: 'Pod',
          metadata: { name: `p-${n}`, namespace: 'bench', labels: { app: 'bench' } },
          spec: { containers: [{ name: 'c', image: 'busybox', resources: { requests: { cpu: '100m' } } }] },
        });
        if (r.status !== 201) throw new Error(`create p-${n}: HTTP ${r.status}`);
      }
    };
    await Promise.all(Array.from({ length: 32 }, worker));
    const createsPerS = pods / ((performance.now() - t0) / 1000);
    // 2. a watch replaying every ADDED event since before the creates.
    let added = 0;
    let finish: () => void = () => {};
    const all = new Promise<void>((r) => (finish = r));
    const t1 = performance.now();
    const w = watch(served.url, `/api/v1/namespaces/bench/pods?watch=true&resourceVersion=${startRv}`, (e) => {
      if (e.type === 'ADDED' && ++added === pods) finish();
    });
    await all;
    const watchEventsPerS = pods / ((performance.now() - t1) / 1000);
    w.stop();
    // 3. single GETs, one at a time.
    const lat: number[] = [];
    for (let g = 0; g < gets; g++) {
      const s = performance.now();
      const r = await call(served.url, 'GET', `/api/v1/namespaces/bench/pods/p-${(g * 7919) % pods}`);
      if (r.status !== 200) throw new Error(`GET: HTTP ${r.status}`);
      lat.push(performance.now() - s);
    }
    lat.sort((a, b) => a - b);
    return {
      pods,
      createsPerS,
      watchEventsPerS,
      getP99Ms: lat[Math.floor(lat.length * 0.99)]!,
      getMedianMs: lat[Math.floor(lat.length / 2)]!,
    };
  } finally {
    await served.stop();
  }
}
