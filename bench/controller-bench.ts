// `controller.peer-tas.15k` (bench/main.ts): the peer's TAS shape (640 nodes in the peer's
// blocks and racks, 15,000 Workloads of 2, 4 or 8 pods with required, preferred or
// slice-balanced rack requests) in real time through @kubernetes/client-node over HTTP:
// `serve --controllers=none` in one child process plays the cluster (API server, workload
// runner), `topoqueue controller` in another schedules, and this process creates the
// Workloads at the peer's arrival times and watches them. Kueue took 401 s of wall time.
//
// Reported: wall time from the first create to the last finish; the controller's CPU time
// (from /proc), its heap (nodejs_heap_size_used_bytes from its /metrics at the end), and the
// requests it sent to the API server (topoqueue_api_requests_total).

import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { type PeerRunShape, workloadCount } from './admission-cycle.ts';
import { condTrue, peerWorkloads, postAtArrivals, serveChild, serverCpuS, watch } from './serve-bench.ts';
import { peerSimulationObjects } from './simulate-shapes.ts';

const BIN = fileURLToPath(new URL('../bin/topoqueue.js', import.meta.url));

/**
 * The client's token bucket for the run. Kueue's defaults (50 QPS, burst 100) cap a
 * controller at about ten admissions a second here (each is a status write plus its Events
 * and the queue status updates); Kueue's performance runs raise them the same way.
 */
export const QPS = 1000;
export const BURST = 2000;

export interface ControllerBenchResult {
  wallMs: number;
  workloads: number;
  /** Workloads seen Admitted at least once. */
  admitted: number;
  finished: number;
  failedCreates: number;
  controllerCpuS: number;
  serverCpuS: number;
  heapMB: number;
  requests: number;
  requestsByVerb: Record<string, number>;
}

export async function runControllerBench(shape: PeerRunShape, log: (s: string) => void): Promise<ControllerBenchResult> {
  const cluster = peerSimulationObjects(shape).filter((o) => o.kind !== 'Job');
  const served = await serveChild(cluster, ['--controllers', 'none']);
  const ctl = spawn(
    process.execPath,
    [
      BIN,
      'controller',
      '--kubeconfig',
      served.kubeconfig,
      '--metrics-port',
      '0',
      '--webhook-port',
      '0',
      '--log-format',
      'json',
      '--kube-api-qps',
      String(QPS),
      '--kube-api-burst',
      String(BURST),
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  const exited = new Promise<void>((r) => ctl.on('exit', () => r()));
  try {
    let err = '';
    const metricsPort = await new Promise<number>((resolve, reject) => {
      ctl.stderr!.on('data', (c: Buffer) => {
        err += c.toString();
        const m = /"metricsPort":(\d+)/.exec(err);
        if (m && err.includes('controllers running')) resolve(Number(m[1]));
      });
      ctl.on('exit', (code) => reject(new Error(`controller exited with ${code}: ${err}`)));
    });
    const wls = peerWorkloads(shape);
    const finished = new Set<string>();
    let admitted = 0;
    const seenAdmitted = new Set<string>();
    let allDone: () => void = () => {};
    const done = new Promise<void>((r) => (allDone = r));
    const w = watch(served.url, '/apis/kueue.x-k8s.io/v1beta2/namespaces/default/workloads?watch=true', (e) => {
      const name = e.object.metadata.name;
      if (!seenAdmitted.has(name) && condTrue(e.object, 'Admitted')) {
        seenAdmitted.add(name);
        admitted++;
      }
      if (!finished.has(name) && condTrue(e.object, 'Finished')) {
        finished.add(name);
        if (finished.size === wls.length) allDone();
      }
    });
    await w.open;
    const t0 = performance.now();
    let failedCreates = 0;
    let created = 0;
    const progress = setInterval(
      () =>
        log(
          `controller bench: ${created} created, ${admitted} admitted, ${finished.size} finished after ${((performance.now() - t0) / 1000).toFixed(0)} s`,
        ),
      Number(process.env.TOPOQUEUE_BENCH_PROGRESS_MS ?? 15_000),
    );
    await postAtArrivals(served.url, wls, t0, (_wl, ok) => {
      if (ok) created++;
      else failedCreates++;
    });
    const limit = setTimeout(allDone, Number(process.env.TOPOQUEUE_BENCH_CONTROLLER_LIMIT_MS ?? 900_000));
    await done;
    clearTimeout(limit);
    clearInterval(progress);
    const wallMs = performance.now() - t0;
    w.stop();
    const controllerCpuS = serverCpuS(ctl.pid);
    const metrics = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
    const heap = /^nodejs_heap_size_used_bytes (\d+(?:\.\d+)?(?:e\+\d+)?)/m.exec(metrics);
    const requestsByVerb: Record<string, number> = {};
    for (const m of metrics.matchAll(/^topoqueue_api_requests_total\{verb="([^"]*)"[^}]*\} (\d+)/gm))
      requestsByVerb[m[1]!] = (requestsByVerb[m[1]!] ?? 0) + Number(m[2]);
    return {
      wallMs,
      workloads: workloadCount(shape),
      admitted,
      finished: finished.size,
      failedCreates,
      controllerCpuS,
      serverCpuS: served.cpuS(),
      heapMB: heap ? Number(heap[1]) / 2 ** 20 : NaN,
      requests: Object.values(requestsByVerb).reduce((a, b) => a + b, 0),
      requestsByVerb,
    };
  } finally {
    ctl.kill('SIGTERM');
    await exited;
    await served.stop();
  }
}
