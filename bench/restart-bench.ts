// The restart figure (`serve.restart.100k`): a data directory holding 100,000 objects (5
// Namespaces, 1,000 Nodes and 98,995 finished Pods of about 3 KiB), and the time from starting
// `topoqueue serve --data-dir` on it to the process being ready: store read back into
// memory, every controller's informers listed, the API listening. The figure is the wall
// time from spawn to serve's "serving the Kubernetes API" line (Node and module start-up
// included), median of RESTART_RUNS.

import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { KObject } from '../src/api/objects.ts';
import { RealClock } from '../src/runtime/clock.ts';
import { openDurableStore } from '../src/runtime/durable-store.ts';
import { readyNode } from '../src/testing/cluster.ts';

export const RESTART_OBJECTS = 100_000;
export const RESTART_NODES = 1_000;
export const RESTART_RUNS = 3;

/** A bound Pod of about 3 KiB, as the API server stores it. */
export function podRecord(i: number): string {
  const name = `job-${Math.floor(i / 8)}-worker-${i % 8}`;
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace: 'team-a',
      uid: `00000000-0000-4000-8000-${i.toString(16).padStart(12, '0')}`,
      resourceVersion: String(i + 1),
      generation: 1,
      creationTimestamp: '2026-01-01T00:00:00Z',
      labels: {
        'batch.kubernetes.io/job-name': `job-${Math.floor(i / 8)}`,
        'kueue.x-k8s.io/queue-name': 'lq',
        'kueue.x-k8s.io/podset': 'workers',
        'batch.kubernetes.io/job-completion-index': String(i % 8),
      },
      annotations: {
        'kueue.x-k8s.io/workload': `job-job-${Math.floor(i / 8)}-3f2a1`,
        'kueue.x-k8s.io/podset-required-topology': 'cloud.provider.com/topology-rack',
        'topoqueue.io/run-duration': '10m',
      },
      ownerReferences: [
        {
          apiVersion: 'batch/v1',
          kind: 'Job',
          name: `job-${Math.floor(i / 8)}`,
          uid: '00000000-0000-4000-8000-00000000beef',
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
      finalizers: ['batch.kubernetes.io/job-tracking'],
    },
    spec: {
      restartPolicy: 'Never',
      nodeName: `b${i % 4}-r${i % 25}-n${i % 20}`,
      nodeSelector: { 'cloud.provider.com/topology-block': `b${i % 4}`, 'cloud.provider.com/topology-rack': `b${i % 4}-r${i % 25}` },
      tolerations: [{ key: 'nvidia.com/gpu', operator: 'Exists', effect: 'NoSchedule' }],
      containers: [
        {
          name: 'trainer',
          image: 'registry.example.com/ml/trainer:2026.01.1',
          command: ['python', '-m', 'trainer', '--epochs', '10', '--batch-size', '512'],
          env: Array.from({ length: 8 }, (_, k) => ({ name: `ENV_${k}`, value: `value-${k}-${'x'.repeat(40)}` })),
          resources: { requests: { cpu: '96', memory: '768Gi', 'nvidia.com/gpu': '8' }, limits: { 'nvidia.com/gpu': '8' } },
          volumeMounts: [
            { name: 'data', mountPath: '/data' },
            { name: 'scratch', mountPath: '/scratch' },
          ],
        },
      ],
      volumes: [
        { name: 'data', persistentVolumeClaim: { claimName: 'dataset' } },
        { name: 'scratch', emptyDir: {} },
      ],
    },
    status: {
      phase: 'Running',
      hostIP: `10.0.${i % 256}.${(i >> 8) % 256}`,
      podIP: `10.128.${i % 256}.${(i >> 8) % 256}`,
      startTime: '2026-01-01T00:00:05Z',
      conditions: ['PodScheduled', 'Initialized', 'ContainersReady', 'Ready'].map((type) => ({
        type,
        status: 'True',
        lastTransitionTime: '2026-01-01T00:00:05Z',
      })),
      containerStatuses: [
        {
          name: 'trainer',
          ready: true,
          restartCount: 0,
          image: 'registry.example.com/ml/trainer:2026.01.1',
          imageID: 'sha256:' + 'a'.repeat(64),
          started: true,
          state: { running: { startedAt: '2026-01-01T00:00:06Z' } },
        },
      ],
    },
  });
}

/** Writes `objects` objects (5 Namespaces, RESTART_NODES Nodes, then Pods) into a new store in `dir`. */
export async function fillDataDir(dir: string, objects = RESTART_OBJECTS): Promise<void> {
  const store = await openDurableStore(dir, { clock: new RealClock(), freeze: false });
  // The namespaces serve would create, so that every run reads the same 100,000 objects.
  const namespaces = ['default', 'kube-system', 'kube-public', 'kube-node-lease', 'team-a'];
  for (const name of namespaces) store.createSync({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
  for (let i = 0; i < RESTART_NODES; i++)
    store.createSync(readyNode(`b${i % 4}-r${i % 25}-n${i % 20}-${i}`, { cpu: '128', memory: '1Ti', pods: '110', 'nvidia.com/gpu': '8' }));
  for (let i = RESTART_NODES + namespaces.length; i < objects; i++) {
    const pod = JSON.parse(podRecord(i)) as KObject & { status: { phase: string } };
    // Finished and unowned: nothing for the controllers to do when they start.
    delete pod.metadata.ownerReferences;
    delete pod.metadata.finalizers;
    pod.status.phase = 'Succeeded';
    store.createSync(pod);
    if (i % 5000 === 0) await new Promise((r) => setImmediate(r));
  }
  await store.close();
}

export interface RestartRun {
  /** Spawn to ready, wall. */
  wallMs: number;
  /** serve's own figure: reading the store back. */
  openMs: number;
  /** CPU time of the process from its start to ready (Linux /proc; NaN elsewhere). */
  cpuMs: number;
  objects: number;
}

const BIN = fileURLToPath(new URL('../bin/topoqueue.js', import.meta.url));

/** CPU time of a live process so far, from /proc (Linux), in ms. */
function cpuOf(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    // utime and stime (fields 14 and 15 of stat; 12 and 13 after the command), in clock ticks of 10 ms.
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return NaN;
  }
}

/** Starts `topoqueue serve --data-dir dir` and times it to ready; stops it with SIGTERM. */
export function restartOnce(dir: string): Promise<RestartRun> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const child = spawn(process.execPath, [BIN, 'serve', '--data-dir', dir, '--port', '0', '--kubeconfig', join(dir, 'kubeconfig')], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let err = '';
    let run: RestartRun | undefined;
    child.stderr.on('data', (d: Buffer) => {
      err += d.toString();
      if (run || !/serving the Kubernetes API/.test(err)) return;
      const wallMs = performance.now() - t0;
      const read = /(\d+) object\(s\) read back from .* in (\d+) ms/.exec(err);
      run = { wallMs, cpuMs: cpuOf(child.pid!), objects: Number(read?.[1] ?? 0), openMs: Number(read?.[2] ?? NaN) };
      child.kill('SIGTERM');
    });
    child.on('close', (code, signal) =>
      run ? resolve(run) : reject(new Error(`serve exited (${code ?? signal}) before it was ready: ${err}`)),
    );
  });
}
