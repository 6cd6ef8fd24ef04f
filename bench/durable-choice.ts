// Measures the two embedded crash-safe databases that install offline on Node 20 (lmdb and
// classic-level) for the durable object store (src/runtime/durable-store.ts), the way the
// store uses them: Pod-sized JSON records (about 3 KiB), each write acknowledged only once
// it is on disk.
//
//   node --import tsx bench/durable-choice.ts [--objects 100000] [--sequential 300] [--concurrent 5000]
//
// Figures per database: acknowledged writes/s one at a time (await each), acknowledged
// writes/s with many in flight (batched by the database or by us: one synced batch per
// turn), the reopen of `--objects` records (open + read and parse every value) and the size
// of the files. The result and the choice are in docs/design.md, "The durable store".

import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { ClassicLevel } from 'classic-level';
import { open as openLmdb, type RootDatabase } from 'lmdb';

const { values: args } = parseArgs({ options: { objects: { type: 'string', default: '100000' }, sequential: { type: 'string', default: '300' }, concurrent: { type: 'string', default: '5000' } } });
const OBJECTS = Number(args.objects);
const SEQUENTIAL = Number(args.sequential);
const CONCURRENT = Number(args.concurrent);
const IN_FLIGHT = 100;

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
      labels: { 'batch.kubernetes.io/job-name': `job-${Math.floor(i / 8)}`, 'kueue.x-k8s.io/queue-name': 'lq', 'kueue.x-k8s.io/podset': 'workers', 'batch.kubernetes.io/job-completion-index': String(i % 8) },
      annotations: { 'kueue.x-k8s.io/workload': `job-job-${Math.floor(i / 8)}-3f2a1`, 'kueue.x-k8s.io/podset-required-topology': 'cloud.provider.com/topology-rack', 'topoqueue.io/run-duration': '10m' },
      ownerReferences: [{ apiVersion: 'batch/v1', kind: 'Job', name: `job-${Math.floor(i / 8)}`, uid: '00000000-0000-4000-8000-00000000beef', controller: true, blockOwnerDeletion: true }],
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
          volumeMounts: [{ name: 'data', mountPath: '/data' }, { name: 'scratch', mountPath: '/scratch' }],
        },
      ],
      volumes: [{ name: 'data', persistentVolumeClaim: { claimName: 'dataset' } }, { name: 'scratch', emptyDir: {} }],
    },
    status: {
      phase: 'Running',
      hostIP: `10.0.${i % 256}.${(i >> 8) % 256}`,
      podIP: `10.128.${i % 256}.${(i >> 8) % 256}`,
      startTime: '2026-01-01T00:00:05Z',
      conditions: ['PodScheduled', 'Initialized', 'ContainersReady', 'Ready'].map((type) => ({ type, status: 'True', lastTransitionTime: '2026-01-01T00:00:05Z' })),
      containerStatuses: [{ name: 'trainer', ready: true, restartCount: 0, image: 'registry.example.com/ml/trainer:2026.01.1', imageID: 'sha256:' + 'a'.repeat(64), started: true, state: { running: { startedAt: '2026-01-01T00:00:06Z' } } }],
    },
  });
}

const key = (i: number) => `o:Pod/team-a/p-${i}`;

function dirSize(dir: string): number {
  let n = 0;
  for (const f of readdirSync(dir, { withFileTypes: true })) n += f.isDirectory() ? dirSize(join(dir, f.name)) : statSync(join(dir, f.name)).size;
  return n;
}

interface Figures {
  name: string;
  sequential: number;
  concurrent: number;
  reopenMs: number;
  sizeMB: number;
}

const ms = (t0: bigint) => Number(process.hrtime.bigint() - t0) / 1e6;

/** Sequential (await each), concurrent (IN_FLIGHT at a time), fill to OBJECTS, reopen. */
async function measure(name: string, impl: { open(dir: string): Promise<Db> }): Promise<Figures> {
  const dir = mkdtempSync(join(os.tmpdir(), 'durable-choice-'));
  try {
    let db = await impl.open(dir);
    let t0 = process.hrtime.bigint();
    for (let i = 0; i < SEQUENTIAL; i++) await db.put(key(i), podRecord(i));
    const sequential = SEQUENTIAL / (ms(t0) / 1000);
    t0 = process.hrtime.bigint();
    for (let i = 0; i < CONCURRENT; i += IN_FLIGHT) {
      const batch = [];
      for (let j = i; j < Math.min(CONCURRENT, i + IN_FLIGHT); j++) batch.push(db.put(key(j), podRecord(j)));
      await Promise.all(batch);
    }
    const concurrent = CONCURRENT / (ms(t0) / 1000);
    for (let i = CONCURRENT; i < OBJECTS; i += 5000) {
      const batch = [];
      for (let j = i; j < Math.min(OBJECTS, i + 5000); j++) batch.push(db.put(key(j), podRecord(j)));
      await Promise.all(batch);
    }
    await db.close();
    t0 = process.hrtime.bigint();
    db = await impl.open(dir);
    const n = await db.readAll();
    const reopenMs = ms(t0);
    if (n !== OBJECTS) throw new Error(`${name}: reopened ${n} records, wrote ${OBJECTS}`);
    await db.close();
    return { name, sequential, concurrent, reopenMs, sizeMB: dirSize(dir) / 1e6 };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

interface Db {
  /** Resolves once the record is on disk. */
  put(key: string, value: string): Promise<void>;
  /** Reads and parses every record; returns how many. */
  readAll(): Promise<number>;
  close(): Promise<void>;
}

function lmdb(opts: { overlappingSync: boolean; compression?: boolean }) {
  return {
    async open(dir: string): Promise<Db> {
      const db: RootDatabase<Buffer, string> = openLmdb({ path: dir, encoding: 'binary', overlappingSync: opts.overlappingSync, compression: opts.compression ?? false });
      return {
        async put(k, v) {
          await db.put(k, Buffer.from(v));
          // With overlappingSync the put resolves at commit; the flush comes after.
          if (opts.overlappingSync) await db.flushed;
        },
        async readAll() {
          let n = 0;
          for (const { value } of db.getRange({ start: 'o:', end: 'o;' })) {
            JSON.parse(value.toString('utf8'));
            n++;
          }
          return n;
        },
        close: () => db.close(),
      };
    },
  };
}

/** classic-level with our group commit: every put of a turn goes into one synced batch. */
function classicLevel() {
  return {
    async open(dir: string): Promise<Db> {
      const db = new ClassicLevel<string, string>(dir, { valueEncoding: 'utf8' });
      await db.open();
      let queue: { key: string; value: string; done: () => void; fail: (e: unknown) => void }[] = [];
      let writing = false;
      const drain = async () => {
        writing = true;
        while (queue.length > 0) {
          const ops = queue;
          queue = [];
          try {
            await db.batch(
              ops.map((o) => ({ type: 'put' as const, key: o.key, value: o.value })),
              { sync: true },
            );
            for (const o of ops) o.done();
          } catch (e) {
            for (const o of ops) o.fail(e);
          }
        }
        writing = false;
      };
      return {
        put(k, v) {
          return new Promise<void>((done, fail) => {
            queue.push({ key: k, value: v, done, fail });
            if (!writing) void drain();
          });
        },
        async readAll() {
          let n = 0;
          for await (const [, value] of db.iterator({ gte: 'o:', lt: 'o;' })) {
            JSON.parse(value);
            n++;
          }
          return n;
        },
        close: () => db.close(),
      };
    },
  };
}

const results = [];
results.push(await measure('lmdb (overlappingSync, await db.flushed)', lmdb({ overlappingSync: true })));
results.push(await measure('lmdb (overlappingSync: false, synced commit)', lmdb({ overlappingSync: false })));
results.push(await measure('lmdb (overlappingSync: false, lz4 compression)', lmdb({ overlappingSync: false, compression: true })));
results.push(await measure('classic-level (batch {sync: true} per turn)', classicLevel()));
console.log(`record ${podRecord(1).length} bytes; ${SEQUENTIAL} sequential, ${CONCURRENT} concurrent (${IN_FLIGHT} in flight), reopen of ${OBJECTS}`);
for (const r of results) {
  console.log(`${r.name.padEnd(46)} sequential ${r.sequential.toFixed(0).padStart(6)} writes/s  concurrent ${r.concurrent.toFixed(0).padStart(6)} writes/s  reopen ${r.reopenMs.toFixed(0).padStart(5)} ms  size ${r.sizeMB.toFixed(0)} MB`);
}
