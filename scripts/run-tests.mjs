// Runs every *.test.ts under src/ (and scripts/, bench/) with node:test through tsx.
// Node 20's test runner has no glob support, so the file list is built here. The
// reporter is node's default: spec on a terminal, TAP otherwise (CI reads its summary).
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { URL } from 'node:url';

function collect(dir, out) {
  for (const name of readdirSync(dir).sort()) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) collect(p, out);
    else if (name.endsWith('.test.ts')) out.push(p);
  }
  return out;
}

const filter = process.argv[2];
const files = ['src', 'bench'].flatMap((d) => collect(d, [])).filter((f) => !filter || f.includes(filter));
if (files.length === 0) {
  console.error('no test files found');
  process.exit(1);
}
const setup = new URL('./fast-check-setup.mjs', import.meta.url).href;
const r = spawnSync(process.execPath, ['--import', 'tsx', '--import', setup, '--test', ...files], {
  stdio: 'inherit',
});
process.exit(r.status ?? 1);
