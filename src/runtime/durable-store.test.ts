import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { asBinary, open } from 'lmdb';
import type { KObject, Pod } from '../api/objects.ts';
import { Rng } from '../testing/rng.ts';
import { VirtualClock } from './clock.ts';
import { alive, type DurableStore, DurableStoreError, openDatabase, openDurableStore, RESERVE } from './durable-store.ts';
import { runObjectStoreConformance } from './store-conformance.ts';
import { mutable } from './store.ts';

const dirs: string[] = [];
const tempDir = () => {
  const d = mkdtempSync(join(os.tmpdir(), 'topoqueue-durable-'));
  dirs.push(d);
  return d;
};
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const clock = () => new VirtualClock();
const pod = (name: string, extra: Partial<Pod['metadata']> = {}): Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: 'ns', ...extra },
  spec: { containers: [{ name: 'c', image: 'busybox' }] },
});
const rvOf = (o: KObject | undefined) => Number(o?.metadata.resourceVersion);

runObjectStoreConformance('durable', async () => {
  const dir = tempDir();
  const store = await openDurableStore(dir, { clock: clock() });
  return { store, close: () => store.close() };
});

describe('durable store', () => {
  it('reopened, returns every acknowledged object with its uid, resourceVersion and generation, and numbers later writes higher', async () => {
    const dir = tempDir();
    let store = await openDurableStore(dir, { clock: clock() });
    const a = await store.create(pod('a', { labels: { x: '1' } }));
    const n = await store.create<KObject>({ apiVersion: 'v1', kind: 'Node', metadata: { name: 'n1' } });
    const a2 = mutable(a);
    a2.spec.containers[0]!.image = 'other';
    const a3 = await store.update(a2);
    const a4 = await store.updateStatus({ ...mutable(a3), status: { phase: 'Running' } });
    const g = await store.create(pod('', { generateName: 'gen-' }));
    const rvBefore = Number(store.resourceVersion);
    await store.close();

    store = await openDurableStore(dir, { clock: clock() });
    assert.equal(store.opened.objects, 3);
    const ra = store.getSync<Pod>('Pod', 'ns', 'a')!;
    assert.deepEqual(ra, a4, 'the Pod as last acknowledged');
    assert.equal(ra.metadata.generation, 2);
    assert.deepEqual(store.getSync('Node', undefined, 'n1'), n);
    assert.deepEqual(store.getSync('Pod', 'ns', g.metadata.name), g);
    assert.ok(Object.isFrozen(ra), 'read back objects are read-only, as stored ones are');
    assert.equal(Object.getPrototypeOf(ra.metadata), Object.prototype, 'plain objects (deepCopy copies only those)');
    assert.ok(Number(store.resourceVersion) >= rvBefore);
    const b = await store.create(pod('b'));
    assert.ok(rvOf(b) > rvBefore, `a later write's resourceVersion ${rvOf(b)} > ${rvBefore}`);
    assert.ok(![a.metadata.uid, n.metadata.uid, g.metadata.uid].includes(b.metadata.uid), 'uids are not handed out again');
    const g2 = await store.create(pod('', { generateName: 'gen-' }));
    assert.notEqual(g2.metadata.name, g.metadata.name, 'generateName goes on from where it was');
    assert.equal((await store.list('Pod')).items.length, 4);
    await store.close();
  });

  it('keeps deletes, deletionTimestamps and finalizer removals across a reopen', async () => {
    const dir = tempDir();
    let store = await openDurableStore(dir, { clock: clock() });
    await store.create(pod('gone'));
    await store.create(pod('held', { finalizers: ['x/y'] }));
    await store.create(pod('released', { finalizers: ['x/y'] }));
    assert.equal(await store.delete('Pod', 'ns', 'gone'), undefined);
    const held = await store.delete<Pod>('Pod', 'ns', 'held');
    const released = await store.delete<Pod>('Pod', 'ns', 'released');
    await store.update({ ...mutable(released!), metadata: { ...released!.metadata, finalizers: [] } });
    const rv = store.resourceVersion;
    await store.close();

    store = await openDurableStore(dir, { clock: clock() });
    assert.equal(store.getSync('Pod', 'ns', 'gone'), undefined);
    assert.equal(store.getSync('Pod', 'ns', 'released'), undefined);
    assert.deepEqual(store.getSync('Pod', 'ns', 'held'), held);
    assert.ok(held?.metadata.deletionTimestamp);
    assert.ok(Number(store.resourceVersion) >= Number(rv), "the deletes' resourceVersions are not handed out again");
    // The held Pod is still being deleted: removing its finalizer completes the delete.
    await store.update({ ...mutable(held!), metadata: { ...held!.metadata, finalizers: [] } });
    await store.close();
    store = await openDurableStore(dir, { clock: clock() });
    assert.deepEqual(store.listSync('Pod'), []);
    await store.close();
  });

  it('close waits for writes nobody awaited (the synchronous ones) and later writes fail', async () => {
    const dir = tempDir();
    let store = await openDurableStore(dir, { clock: clock() });
    for (let i = 0; i < 50; i++) store.createSync(pod(`p${i}`));
    // Both wait for the writes and the close.
    await Promise.all([store.close(), store.close()]);
    assert.throws(
      () => store.createSync(pod('late')),
      (e: unknown) => e instanceof DurableStoreError && /is closed/.test(e.message),
    );
    await assert.rejects(store.create(pod('late')), /is closed/);
    await assert.rejects(store.delete('Pod', 'ns', 'p1'), /is closed/);
    store = await openDurableStore(dir, { clock: clock() });
    assert.equal(store.listSync('Pod').length, 50);
    await store.close();
  });

  it('reserves resourceVersions ahead with a synced write, so a reopened store starts above any it handed out, even unacknowledged ones', async () => {
    const dir = tempDir();
    let store = await openDurableStore(dir, { clock: clock() });
    await store.create(pod('a'));
    await store.close();
    store = await openDurableStore(dir, { clock: clock() });
    // The first process reserved [1, RESERVE]: the second starts above it.
    assert.equal(store.resourceVersion, String(RESERVE));
    const b = await store.create(pod('b'));
    assert.equal(rvOf(b), RESERVE + 1);
    await store.close();
  });

  it('a corrupt record fails the open with a message naming its key; so does a database of another format', async () => {
    const dir = tempDir();
    const store = await openDurableStore(dir, { clock: clock() });
    await store.create(pod('a'));
    await store.create(pod('b'));
    await store.close();
    const corrupt = async (key: string, value: unknown) => {
      const db = openDatabase(dir);
      await db.put(key, value);
      await db.close();
    };
    // Cut short: the MessagePack of a map that promises more than it holds.
    await corrupt('o:Pod/ns/b', asBinary(Buffer.from([0xdf, 0xff, 0xff, 0xff, 0xff])));
    await assert.rejects(
      openDurableStore(dir, { clock: clock() }),
      (e: unknown) =>
        e instanceof DurableStoreError &&
        e.message.includes('record "o:Pod/ns/b" is corrupt: not MessagePack (Unexpected end of MessagePack data)'),
    );
    await corrupt('o:Pod/ns/b', 'a string');
    await assert.rejects(openDurableStore(dir, { clock: clock() }), /record "o:Pod\/ns\/b" is corrupt: not an object with metadata/);
    await corrupt('o:Pod/ns/b', pod('c'));
    await assert.rejects(openDurableStore(dir, { clock: clock() }), /record "o:Pod\/ns\/b" is corrupt: it holds Pod ns\/c/);
    await corrupt('o:Pod/ns/b', { ...pod('b'), metadata: { ...pod('b').metadata, resourceVersion: 'x' } });
    await assert.rejects(
      openDurableStore(dir, { clock: clock() }),
      /record "o:Pod\/ns\/b" is corrupt: metadata.resourceVersion "x" is not a positive integer/,
    );
    await corrupt('m:counters', []);
    await assert.rejects(
      openDurableStore(dir, { clock: clock() }),
      /record "m:counters" is corrupt: resourceVersion is not a non-negative integer/,
    );

    const other = tempDir();
    const db = open<Buffer, string>({ path: other, encoding: 'binary', overlappingSync: false });
    await db.put('something', Buffer.from('else'));
    await db.close();
    await assert.rejects(
      openDurableStore(other, { clock: clock() }),
      /not a topoqueue data directory of format topoqueue-store\/1 \(record "m:format" is missing\)/,
    );
  });

  it("opens a data directory once: again in the same process, or while a live process holds it, is refused; a dead holder's claim is taken over", async () => {
    const dir = tempDir();
    const store = await openDurableStore(dir, { clock: clock() });
    await assert.rejects(openDurableStore(dir, { clock: clock() }), /already open in this process/);
    await store.close();
    // The parent of this test process is alive and is not us.
    writeFileSync(join(dir, 'topoqueue.pid'), String(process.ppid));
    await assert.rejects(openDurableStore(dir, { clock: clock() }), new RegExp(`in use by process ${process.ppid}`));
    // A pid that no process has (beyond the kernel's pid_max).
    writeFileSync(join(dir, 'topoqueue.pid'), '2147483646');
    const again = await openDurableStore(dir, { clock: clock() });
    await again.close();
  });
});

// ---------------------------------------------------------------------------------------
// SIGKILL: a child process writes until killed; every write it was told of is on disk.
// ---------------------------------------------------------------------------------------

const WRITER = fileURLToPath(new URL('../testing/durable-writer.ts', import.meta.url));

/** What the child said about one Pod: its state after the last acknowledged write, and a write begun since. */
interface Told {
  /** undefined: absent. */
  acked?: { rv: number; uid: string };
  inFlight?: string;
}

interface Round {
  acks: number;
  maxSeen: number;
  maxAcked: number;
}

/** Runs the writer on `dir` until it has acknowledged `killAfter` writes, then SIGKILLs it. */
function runWriter(dir: string, seed: number, killAfter: number, told: Map<string, Told>): Promise<Round> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', WRITER, dir, String(seed)], { stdio: ['ignore', 'pipe', 'pipe'] });
    const round: Round = { acks: 0, maxSeen: 0, maxAcked: 0 };
    let buf = '';
    let err = '';
    let killed = false;
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.stdout.on('data', (d: Buffer) => {
      buf += d.toString();
      const lines = buf.split('\n');
      buf = lines.pop()!;
      // Every line counts, those written between the kill decision and the kill too.
      for (const line of lines) {
        const [what, ...f] = line.split(' ');
        if (what === 'seen') round.maxSeen = Math.max(round.maxSeen, Number(f[0]));
        else if (what === 'begin') told.set(f[2]!, { ...told.get(f[2]!), inFlight: f[1]! });
        else if (what === 'ack') {
          const [, , key, rv, uid] = f;
          told.set(key!, rv === '-' ? {} : { acked: { rv: Number(rv), uid: uid! } });
          if (rv !== '-') round.maxAcked = Math.max(round.maxAcked, Number(rv));
          if (++round.acks >= killAfter && !killed) {
            killed = true;
            child.kill('SIGKILL');
          }
        } else if (what === 'fail') reject(new Error(`the writer failed: ${line}`));
      }
    });
    child.on('close', (code, signal) => {
      if (signal === 'SIGKILL' && killed) resolve(round);
      else reject(new Error(`the writer exited (${code ?? signal}) before it was killed: ${err}`));
    });
  });
}

describe('durable store: SIGKILL at random moments', () => {
  it('every write the killed process acknowledged is on disk, unacknowledged ones are all-or-nothing, and no resourceVersion is handed out twice', async () => {
    const dir = tempDir();
    const rng = new Rng(20261126);
    const told = new Map<string, Told>();
    for (const seed of [1, 2, 3]) {
      const round = await runWriter(dir, seed, rng.int(30, 400), told);
      const store: DurableStore = await openDurableStore(dir, { clock: clock() });
      const problems: string[] = [];
      for (const [name, t] of told) {
        const o = store.getSync<Pod>('Pod', 'crash', name);
        const matchesAck = t.acked ? o !== undefined && o.metadata.uid === t.acked.uid && rvOf(o) === t.acked.rv : o === undefined;
        if (matchesAck) continue;
        // Otherwise the write in flight at the kill reached the disk, whole.
        const op = t.inFlight;
        const byInFlight =
          op === undefined
            ? false
            : op === 'delete' || op === 'unfinalize'
              ? o === undefined || (op === 'delete' && o.metadata.deletionTimestamp !== undefined && o.metadata.uid === t.acked?.uid)
              : op === 'create'
                ? o !== undefined && t.acked === undefined
                : o !== undefined && t.acked !== undefined && o.metadata.uid === t.acked.uid && rvOf(o) > t.acked.rv;
        if (!byInFlight)
          problems.push(
            `${name}: on disk ${o ? `uid ${o.metadata.uid} rv ${rvOf(o)}${o.metadata.deletionTimestamp ? ' deleting' : ''}` : 'absent'}; acknowledged ${JSON.stringify(t.acked ?? 'absent')}, in flight ${op ?? 'nothing'}`,
          );
      }
      assert.deepEqual(problems, [], `round ${seed} (${round.acks} acknowledged writes)`);
      assert.ok(round.acks >= 30 && told.size > 0, `round ${seed}: the writer wrote`);
      if (process.env.DURABLE_VERBOSE)
        console.log(
          `round ${seed}: ${round.acks} acks, ${told.size} pods, max seen ${round.maxSeen}, reopened at ${store.resourceVersion}, ${store.opened.objects} objects`,
        );
      assert.ok(
        Number(store.resourceVersion) >= round.maxSeen,
        `round ${seed}: reopened at ${store.resourceVersion}, above every resourceVersion a watcher saw (${round.maxSeen})`,
      );
      const probe = await store.create({ ...pod(`probe-${seed}`), metadata: { name: `probe-${seed}`, namespace: 'crash' } });
      assert.ok(rvOf(probe) > round.maxSeen && rvOf(probe) > round.maxAcked);
      await store.delete('Pod', 'crash', `probe-${seed}`);
      // What is on disk now is what the next round starts from.
      for (const key of told.keys()) {
        const o = store.getSync<Pod>('Pod', 'crash', key);
        told.set(key, o ? { acked: { rv: rvOf(o), uid: o.metadata.uid! } } : {});
      }
      await store.close();
    }
  });
});

describe('durable store: the data directory claim', () => {
  it('a killed process that its parent has not reaped yet (a zombie) holds no claim', async () => {
    // The shell starts `sleep` in the background and then becomes a `sleep` itself, which never
    // reaps: the background sleep, once killed, stays a zombie (as after `kill -9` of a serve
    // started from a script that does not wait for it).
    const parent = spawn('sh', ['-c', 'sleep 60 & echo $!; exec sleep 60'], { stdio: ['ignore', 'pipe', 'ignore'] });
    try {
      const pid = Number(await new Promise<string>((r) => parent.stdout.once('data', (d: Buffer) => r(d.toString()))));
      assert.equal(alive(pid), true);
      process.kill(pid, 'SIGKILL');
      await new Promise((r) => setTimeout(r, 200));
      assert.equal(alive(pid), false);
      assert.equal(alive(process.pid), true);
    } finally {
      parent.kill('SIGKILL');
    }
  });
});
