// A process that does what `serve --data-dir DIR` does before it listens: read the durable
// store back and start the embedded cluster (every controller set up, every informer
// listed). Prints `ready <objects> <open ms> <start ms> <CPU ms since the process began>`, closes and exits. Used by
// bench/restart-bench.ts.

import { EmbeddedCluster } from '../src/cluster/embedded.ts';
import { RealClock } from '../src/runtime/clock.ts';
import { openDurableStore } from '../src/runtime/durable-store.ts';

const dir = process.argv[2];
if (!dir) {
  console.error('usage: restart-child.ts DIR');
  process.exit(2);
}
const clock = new RealClock();
const store = await openDurableStore(dir, { clock });
const t0 = performance.now();
const cluster = new EmbeddedCluster({ clock, store });
await cluster.start();
const cpu = process.cpuUsage();
process.stdout.write(`ready ${store.opened.objects} ${store.opened.ms.toFixed(0)} ${(performance.now() - t0).toFixed(0)} ${((cpu.user + cpu.system) / 1000).toFixed(0)}\n`);
cluster.stop();
await store.close();
process.exit(0);
