// Measures the two embedded crash-safe databases that install offline on Node 20 (lmdb and
// classic-level) for the durable object store (src/runtime/durable-store.ts), the way the
// store uses them: Pod-sized JSON records (about 3 KiB), each write acknowledged only once
// it is on disk.
//
//   node --import tsx bench/durable-choice.ts [--objects 100000] [--sequential 300] [--concurrent 5000]
//
// Figures per database (lmdb in several configurations; the last is the durable store's): acknowledged writes/s one at a time (await each), acknowledged
// writes/s with many in flight (batched by the database or by us: one synced batch per
// turn), the reopen of `--objects` records (open + read and parse every value) and the size
// of the files. The result and the choice are in docs/design.md, "The durable store".

import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { ClassicLevel } from 'classic-level';
import { open as openLmdb, type RootDatabase } from 'lmdb';
import { openDatabase } from '../src/runtime/durable-store.ts';
import { podRecord } from './restart-bench.ts';

const { values: args } = parseArgs({
  options: {
    objects: { type: 'string', default: '100000' },
    sequential: { type: 'string', default: '300' },
    concurrent: { type: 'string', default: '5000' },
  },
});
const OBJECTS = Number(args.objects);
const SEQUENTIAL = Number(args.sequential);
const CONCURRENT = Number(args.concurrent);
const IN_FLIGHT = 100;

const key = (i: number) => `o:Pod/team-a/p-${i}`;

function dirSize(dir: string): number {
  let n = 0;
  for (const f of readdirSync(dir, { withFileTypes: true }))
    n += f.isDirectory() ? dirSize(join(dir, f.name)) : statSync(join(dir, f.name)).size;
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
      const db: RootDatabase<Buffer, string> = openLmdb({
        path: dir,
        encoding: 'binary',
        overlappingSync: opts.overlappingSync,
        compression: opts.compression ?? false,
      });
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

/** lmdb as the durable store opens it: MessagePack with shared structures, values are objects. */
function lmdbMsgpack() {
  return {
    async open(dir: string): Promise<Db> {
      const db = openDatabase(dir);
      return {
        async put(k, v) {
          await db.put(k, JSON.parse(v));
        },
        async readAll() {
          let n = 0;
          for (const { value } of db.getRange({ start: 'o:', end: 'o;' })) if ((value as { kind?: string }).kind) n++;
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
results.push(await measure('lmdb (overlappingSync: false, msgpack records)', lmdbMsgpack()));
results.push(await measure('classic-level (batch {sync: true} per turn)', classicLevel()));
console.log(
  `record ${podRecord(1).length} bytes; ${SEQUENTIAL} sequential, ${CONCURRENT} concurrent (${IN_FLIGHT} in flight), reopen of ${OBJECTS}`,
);
for (const r of results) {
  console.log(
    `${r.name.padEnd(46)} sequential ${r.sequential.toFixed(0).padStart(6)} writes/s  concurrent ${r.concurrent.toFixed(0).padStart(6)} writes/s  reopen ${r.reopenMs.toFixed(0).padStart(5)} ms  size ${r.sizeMB.toFixed(0)} MB`,
  );
}
