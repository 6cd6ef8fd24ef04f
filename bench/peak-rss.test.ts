import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { describe, it } from 'node:test';
import { peakRssBytes } from './peak-rss.ts';

describe('peakRssBytes', () => {
  it('is at least the RSS the process has now', () => {
    assert.ok(peakRssBytes() >= process.memoryUsage().rss * 0.9);
  });

  it(
    "a child spawned by a large process reports its own peak, not the parent's RSS at the spawn (getrusage's maxRSS can carry it)",
    { skip: existsSync('/proc/self/status') ? false : 'no /proc/self/status (not Linux): peakRssBytes is maxRSS there' },
    () => {
      const held = Buffer.alloc(400e6, 1); // touched: resident in this process
      const own = spawnSync(
        process.execPath,
        ['--import', 'tsx', '-e', `import('./bench/peak-rss.ts').then((m) => console.log(m.peakRssBytes()))`],
        { encoding: 'utf8' },
      );
      assert.equal(own.status, 0, own.stderr);
      assert.equal(held[held.length - 1], 1);
      const peak = Number(own.stdout.trim());
      assert.ok(peak > 10e6 && peak < 300e6, `child's own peak ${peak} bytes`);
    },
  );
});
