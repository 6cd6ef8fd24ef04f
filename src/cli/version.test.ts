import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { runCli as run } from '../testing/cli.ts';
import { packageVersion } from './main.ts';

describe('topoqueue --version and --help', () => {
  const version = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;
  it("--version and -V print package.json's version and exit 0", async () => {
    assert.equal(packageVersion(), version);
    for (const flag of ['--version', '-V']) {
      const r = await run([flag]);
      assert.deepEqual(r, { code: 0, out: `${version}\n`, err: '' }, flag);
    }
  });
  it('--help lists every command and --version, and exits 0', async () => {
    const r = await run(['--help']);
    assert.equal(r.code, 0, r.err);
    assert.match(r.out, /^Usage: topoqueue /);
    for (const c of ['plan', 'simulate', 'topology', 'hypernodes']) assert.match(r.out, new RegExp(`\\n  ${c}\\b`), c);
    assert.match(r.out, /-V, --version +print the version/);
  });
});
