#!/usr/bin/env node
// Entry point for `npx topoqueue`: registers tsx so the TypeScript sources run
// directly, with no build step to remember.
import { register } from 'tsx/esm/api';
register();
const { main } = await import('../src/cli/main.ts');
process.exitCode = await main(process.argv.slice(2));
