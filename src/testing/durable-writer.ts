// A child process for the durable store's crash test (src/runtime/durable-store.test.ts):
// opens the store in DIR and writes to it until it is killed, telling its parent on stdout,
// one line each, what it does:
//
//   begin <worker> <op> <key>              a write is about to start
//   ack <worker> <op> <key> <rv> <uid>     that write is acknowledged (on disk); rv/uid "-" once gone
//   fail <worker> <op> <key> <message>     that write was refused (a bug: the test fails)
//   seen <rv>                              a watcher saw this resourceVersion
//
// Workers write concurrently, each to its own Pods, one write at a time per Pod, choosing
// (from SEED) creates, spec updates, status updates, deletes, and finalizer removals.
//
//   node --import tsx src/testing/durable-writer.ts DIR SEED

import type { KObject } from '../api/objects.ts';
import { RealClock } from '../runtime/clock.ts';
import { openDurableStore } from '../runtime/durable-store.ts';
import { mutable } from '../runtime/store.ts';
import { Rng } from './rng.ts';

export const WRITER_FINALIZER = 'test.topoqueue.io/hold';
const WORKERS = 6;
const PODS_PER_WORKER = 4;

const [dir, seedArg] = process.argv.slice(2);
if (!dir || !seedArg) {
  console.error('usage: durable-writer.ts DIR SEED');
  process.exit(2);
}
const seed = Number(seedArg);
const store = await openDurableStore(dir, { clock: new RealClock() });
const say = (line: string) => process.stdout.write(line + '\n');
for (const kind of ['Pod'])
  store.watch(kind, (e) => say(`seen ${e.type === 'DELETED' ? store.resourceVersion : e.object.metadata.resourceVersion}`));

async function worker(w: number): Promise<void> {
  const rng = new Rng(seed * 1000 + w);
  const name = (i: number) => `s${seed}-w${w}-p${i}`;
  for (;;) {
    const n = name(rng.int(0, PODS_PER_WORKER - 1));
    const cur = store.getSync<KObject & { spec: { n?: number }; status?: { n?: number } }>('Pod', 'crash', n);
    let op: string;
    let run: () => Promise<KObject | undefined>;
    if (!cur) {
      op = 'create';
      const finalizers = rng.chance(0.5) ? [WRITER_FINALIZER] : [];
      const pod = {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: n, namespace: 'crash', finalizers },
        spec: { n: 0, containers: [{ name: 'c', image: 'x'.repeat(rng.int(100, 3000)) }] },
      };
      run = () => store.create<KObject>(pod);
    } else if (cur.metadata.deletionTimestamp) {
      op = 'unfinalize';
      const x = mutable(cur);
      x.metadata.finalizers = [];
      run = () => store.update(x);
    } else {
      const r = rng.int(0, 9);
      const x = mutable(cur);
      if (r < 4) {
        op = 'update';
        x.spec.n = (x.spec.n ?? 0) + 1;
        run = () => store.update(x);
      } else if (r < 8) {
        op = 'status';
        x.status = { n: (cur.status?.n ?? 0) + 1 };
        run = () => store.updateStatus(x);
      } else {
        op = 'delete';
        run = () => store.delete('Pod', 'crash', n);
      }
    }
    say(`begin ${w} ${op} ${n}`);
    try {
      let o = await run();
      if (op === 'unfinalize') o = undefined; // the deletion completed: the object is gone
      say(`ack ${w} ${op} ${n} ${o?.metadata.resourceVersion ?? '-'} ${o?.metadata.uid ?? '-'}`);
    } catch (e) {
      say(`fail ${w} ${op} ${n} ${(e as Error).message}`);
      process.exit(1);
    }
  }
}

await Promise.all(Array.from({ length: WORKERS }, (_, w) => worker(w)));
