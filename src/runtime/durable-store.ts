// The durable object store (`serve --data-dir DIR`): a MemoryStore whose every committed
// write also goes to an embedded LMDB database in DIR, and which reads the database back
// into memory when it opens. Why LMDB, the figures, and what is and is not guaranteed:
// docs/design.md, "The durable store".
//
// - Records: `o:<kind>/<namespace>/<name>` (`o:<kind>/<name>` for cluster-scoped kinds) ->
//   the object, in LMDB's MessagePack encoding with shared structures (each object shape's
//   keys stored once: reading 100,000 Pods back takes a third of the CPU that JSON.parse
//   does, in a third less space); `m:counters` -> the store's counters after the last write;
//   `m:format` -> FORMAT; `m:ceiling` -> a resourceVersion and uid no earlier process went
//   past (below).
// - A write commits in memory first (watchers hear of it at once, as in the memory store),
//   is queued to LMDB in commit order, and its promise resolves once LMDB's transaction
//   holding it is committed and synced (`overlappingSync: false`). LMDB commits the queue
//   in order, one transaction per event turn, so after a crash the database holds a prefix
//   of the writes: every acknowledged one, and perhaps some later ones.
// - Watchers may have seen writes that a crash then lost. So that no resourceVersion or uid
//   is ever handed out twice, the store first reserves a block of them with a synchronous,
//   synced write of `m:ceiling`, and a reopened store starts above the ceiling.
// - A write that fails to reach the disk fails every later write too: memory is then ahead
//   of the disk and only a restart (which reads the disk) brings them together.

import { readFileSync, writeFileSync, mkdirSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { open, type RootDatabase } from 'lmdb';
import type { KObject } from '../api/objects.ts';
import type { Clock } from './clock.ts';
import { MemoryStore, type StoreCounters, type StorePersister } from './memory-store.ts';

/** The layout of the records; a database written with another one is refused. */
export const FORMAT = 'topoqueue-store/1';

/** resourceVersions (and uids) reserved per synced write of the ceiling. */
export const RESERVE = 10_000;

const OBJECT_PREFIX = 'o:';
const COUNTERS = 'm:counters';
const CEILING = 'm:ceiling';
const FORMAT_KEY = 'm:format';
const OWNER_FILE = 'topoqueue.pid';
/** Where msgpackr keeps the shared structures (object shapes) in the database. */
const STRUCTURES = Symbol.for('topoqueue.structures');

type Db = RootDatabase<unknown, string | symbol>;

/** One LMDB environment as the store uses it: every write synced at commit. */
export function openDatabase(dir: string): Db {
  // freezeData: objects come back frozen (the memory store's seal then has nothing to do).
  return open<unknown, string | symbol>({
    path: dir,
    encoding: 'msgpack',
    sharedStructuresKey: STRUCTURES,
    overlappingSync: false,
    encoder: { freezeData: true },
  });
}

export class DurableStoreError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DurableStoreError';
  }
}

export interface DurableStoreOptions {
  clock: Clock;
  /** As MemoryStoreOptions.freeze. */
  freeze?: boolean;
}

export class DurableStore extends MemoryStore {
  /** How many objects were read back at open, and how long that took (ms). */
  readonly opened: { objects: number; ms: number };

  constructor(
    readonly dir: string,
    private readonly db: LmdbPersister,
    loaded: { objects: KObject[]; counters: StoreCounters; ms: number },
    opts: DurableStoreOptions,
  ) {
    super({ clock: opts.clock, freeze: opts.freeze, persister: db, restore: loaded });
    this.opened = { objects: loaded.objects.length, ms: loaded.ms };
  }

  /** Waits for every write so far to be on disk, then closes the database; later writes fail. */
  async close(): Promise<void> {
    await this.db.close();
  }
}

/** Opens (creating it if need be) the store in `dir`. A corrupt record fails the open, naming its key. */
export async function openDurableStore(dir: string, opts: DurableStoreOptions): Promise<DurableStore> {
  const t0 = performance.now();
  mkdirSync(dir, { recursive: true });
  claim(dir);
  let db: Db;
  try {
    db = openDatabase(dir);
  } catch (e) {
    release(dir);
    throw new DurableStoreError(`cannot open the data directory ${dir}: ${(e as Error).message}`);
  }
  try {
    const loaded = load(dir, db);
    const persister = new LmdbPersister(dir, db, loaded.counters, loaded.ceiling);
    return new DurableStore(dir, persister, { ...loaded, ms: performance.now() - t0 }, opts);
  } catch (e) {
    await db.close();
    release(dir);
    throw e;
  }
}

/** Reads every record back: the objects, and counters at or above every one handed out before. */
function load(dir: string, db: Db): { objects: KObject[]; counters: StoreCounters; ceiling: StoreCounters } {
  const bad = (key: string, why: string) =>
    new DurableStoreError(`${dir}: record "${key}" is corrupt: ${why}; the store cannot open (move the directory away to start empty)`);
  const empty = db.getKeysCount() === 0;
  if (empty) db.putSync(FORMAT_KEY, FORMAT);
  const format = decoded(db, FORMAT_KEY, bad);
  if (format !== FORMAT)
    throw new DurableStoreError(
      `${dir}: not a topoqueue data directory of format ${FORMAT} (record "${FORMAT_KEY}" is ${format === undefined ? 'missing' : JSON.stringify(format)})`,
    );
  const counters = readCounters(db, COUNTERS, bad);
  const ceiling = readCounters(db, CEILING, bad);
  const objects: KObject[] = [];
  try {
    for (const { key, value } of db.getRange({ start: OBJECT_PREFIX, end: 'o;' })) {
      const k = String(key);
      const obj = value as KObject;
      const md = obj?.metadata as KObject['metadata'] | undefined;
      if (typeof obj !== 'object' || obj === null || Array.isArray(obj) || typeof md !== 'object' || md === null)
        throw bad(k, 'not an object with metadata');
      const expected = recordKey(obj.kind, md.namespace ? `${md.namespace}/${md.name}` : String(md.name));
      if (expected !== k) throw bad(k, `it holds ${obj.kind} ${md.namespace ? `${md.namespace}/` : ''}${md.name}`);
      const rv = Number(md.resourceVersion);
      if (!Number.isSafeInteger(rv) || rv <= 0)
        throw bad(k, `metadata.resourceVersion ${JSON.stringify(md.resourceVersion)} is not a positive integer`);
      if (rv > counters.resourceVersion) counters.resourceVersion = rv;
      objects.push(obj);
    }
  } catch (e) {
    if (e instanceof DurableStoreError) throw e;
    // A record that does not decode: find it, one by one, to name it.
    for (const k of db.getKeys({ start: OBJECT_PREFIX, end: 'o;' })) decoded(db, k as string, bad);
    throw new DurableStoreError(`${dir}: reading the records failed (${(e as Error).message}), yet each one decodes alone`);
  }
  // Everything handed out before (even writes a crash lost) is at or below the ceiling.
  counters.resourceVersion = Math.max(counters.resourceVersion, ceiling.resourceVersion);
  counters.uid = Math.max(counters.uid, ceiling.uid);
  return { objects, counters, ceiling };
}

/** The value of `key`; a value that does not decode is `bad`. */
function decoded(db: Db, key: string, bad: (key: string, why: string) => Error): unknown {
  try {
    return db.get(key);
  } catch (e) {
    throw bad(key, `not MessagePack (${(e as Error).message})`);
  }
}

function readCounters(db: Db, key: string, bad: (key: string, why: string) => Error): StoreCounters {
  const raw = decoded(db, key, bad);
  if (raw === undefined) return { resourceVersion: 0, uid: 0, generated: 0 };
  const r = raw as Partial<StoreCounters> | null;
  for (const f of ['resourceVersion', 'uid', 'generated'] as const) {
    if (!Number.isSafeInteger(r?.[f]) || r![f]! < 0) throw bad(key, `${f} is not a non-negative integer`);
  }
  return { resourceVersion: r!.resourceVersion!, uid: r!.uid!, generated: r!.generated! };
}

const recordKey = (kind: string, key: string) => `${OBJECT_PREFIX}${kind}/${key}`;

/** Hands the memory store's commits to LMDB, in order; knows when they are on disk. */
class LmdbPersister implements StorePersister {
  private last: Promise<unknown> = Promise.resolve();
  private failure: Error | undefined;
  private closed = false;
  private closing: Promise<void> | undefined;

  constructor(
    private readonly dir: string,
    private readonly db: Db,
    /** As of the last commit. */
    private counters: StoreCounters,
    private ceiling: StoreCounters,
  ) {}

  /** A write adds at most one resourceVersion and one uid: reserve more first if the ceiling is that close. */
  writable(): void {
    if (this.failure) throw this.failure;
    if (this.closed) throw new DurableStoreError(`the store in ${this.dir} is closed`);
    if (this.counters.resourceVersion >= this.ceiling.resourceVersion || this.counters.uid >= this.ceiling.uid) this.raiseCeiling();
  }

  commit(kind: string, key: string, object: KObject | undefined, counters: StoreCounters): void {
    this.counters = counters;
    const k = recordKey(kind, key);
    const p = object ? this.db.put(k, object) : this.db.remove(k);
    const q = this.db.put(COUNTERS, counters);
    // Writes of one event turn share one promise (one transaction): watch each promise once.
    for (const w of p === q ? [q] : [p, q]) {
      if (w === this.last) continue;
      this.last = w;
      w.then(undefined, (e: unknown) => this.fail(e));
    }
  }

  async flushed(): Promise<void> {
    try {
      await this.last;
    } catch {
      // fail() has recorded it
    }
    if (this.failure) throw this.failure;
  }

  /** Every caller waits for the one closing. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      this.closed = true;
      await this.flushed().catch(() => {});
      await this.db.close();
      release(this.dir);
    })();
    return this.closing;
  }

  /** Reserves RESERVE more resourceVersions and uids with a synced write, before handing any out. */
  private raiseCeiling(): void {
    const next = { resourceVersion: this.counters.resourceVersion + RESERVE, uid: this.counters.uid + RESERVE, generated: 0 };
    try {
      this.db.putSync(CEILING, next);
    } catch (e) {
      this.fail(e);
      throw this.failure;
    }
    this.ceiling = next;
  }

  private fail(e: unknown): void {
    this.failure ??= new DurableStoreError(
      `a write to the store in ${this.dir} failed (${(e as Error)?.message ?? String(e)}); memory is now ahead of the disk: restart to continue from what is on disk`,
    );
  }
}

// One process per data directory: a second `serve` on it would keep its own memory and
// overwrite the first one's records. A pid file; one left by a killed process is taken over.
const openDirs = new Set<string>();

function claim(dir: string): void {
  if (openDirs.has(resolve(dir))) throw new DurableStoreError(`the data directory ${dir} is already open in this process`);
  const file = join(dir, OWNER_FILE);
  let pid: number | undefined;
  try {
    pid = Number(readFileSync(file, 'utf8').trim());
  } catch {
    pid = undefined;
  }
  if (pid !== undefined && pid !== process.pid && Number.isSafeInteger(pid) && pid > 0 && alive(pid)) {
    throw new DurableStoreError(`the data directory ${dir} is in use by process ${pid} (${file})`);
  }
  writeFileSync(file, String(process.pid));
  openDirs.add(resolve(dir));
}

function release(dir: string): void {
  openDirs.delete(resolve(dir));
  const file = join(dir, OWNER_FILE);
  try {
    if (Number(readFileSync(file, 'utf8').trim()) === process.pid) rmSync(file);
  } catch {
    // already gone
  }
}

/** Is process `pid` running? A zombie (killed, not yet reaped by its parent) holds nothing: not alive. */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
  try {
    // /proc/<pid>/stat: "pid (comm) S ...": the state follows the last ')'.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return true; // no /proc (not Linux): trust kill(0)
  }
}
