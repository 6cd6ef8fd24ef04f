#!/usr/bin/env node
// Entry point for `npx topoqueue`: runs the compiled CLI in dist/, which `npm ci` builds
// (the `prepare` script; `npm run build` rebuilds it after a change to src/). A checkout
// without dist/ (installed with --ignore-scripts, or a fresh worktree) runs the TypeScript
// sources through tsx instead, when tsx (a dev dependency) is there.
import { existsSync } from 'node:fs';
import { URL } from 'node:url';

const compiled = new URL('../dist/cli/main.js', import.meta.url);

async function load() {
  if (existsSync(compiled)) return import(compiled.href);
  try {
    const { register } = await import('tsx/esm/api');
    register();
  } catch (e) {
    if (e?.code !== 'ERR_MODULE_NOT_FOUND') throw e;
    process.stderr.write('error: dist/cli/main.js is missing and tsx is not installed: run `npm run build` (or `npm ci`) first\n');
    process.exit(1);
  }
  return import('../src/cli/main.ts');
}

const { main } = await load();
process.exitCode = await main(process.argv.slice(2));
