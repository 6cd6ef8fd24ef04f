import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { staleBuild } from './cli-start.ts';

describe('cli.start rebuilds dist/ only when it is missing or older than a source', () => {
  const dir = mkdtempSync(join(tmpdir(), 'cli-start-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const src = join(dir, 'src');
  const compiled = join(dir, 'dist/cli/main.js');
  mkdirSync(join(src, 'cli'), { recursive: true });
  writeFileSync(join(src, 'cli/main.ts'), '');
  writeFileSync(join(src, 'notes.md'), '');
  const at = (p: string, s: number) => utimesSync(p, s, s);

  it('a missing build is stale', () => {
    assert.match(staleBuild(src, compiled) ?? '', /main\.js is missing/);
  });
  it('a build newer than every source is used as it is', () => {
    mkdirSync(join(dir, 'dist/cli'), { recursive: true });
    writeFileSync(compiled, '');
    at(join(src, 'cli/main.ts'), 1000);
    at(compiled, 2000);
    assert.equal(staleBuild(src, compiled), undefined);
  });
  it('a source in a subdirectory changed after the build makes it stale; other files do not', () => {
    at(join(src, 'notes.md'), 3000);
    assert.equal(staleBuild(src, compiled), undefined);
    at(join(src, 'cli/main.ts'), 3000);
    assert.match(staleBuild(src, compiled) ?? '', /cli\/main\.ts is newer than/);
  });
});
