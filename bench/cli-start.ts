// cli.start: the wall time of `node bin/topoqueue.js --help` on the compiled CLI (dist/), as
// a user's shell pays it. 1. make sure dist/ is there and newer than every source under
// src/ (else `npm run build`); 2. spawn `node -e 0` for the bare cost of a Node start;
// 3. spawn the CLI a few times to warm the file cache, then time RUNS spawns.

import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const CLI_START = { warmup: 3, runs: 15 } as const;

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** The first source file under `srcDir` modified after `compiled` was written, or the reason `compiled` cannot be used; undefined when it is up to date. */
export function staleBuild(srcDir: string, compiled: string): string | undefined {
  if (!existsSync(compiled)) return `${compiled} is missing`;
  const built = statSync(compiled).mtimeMs;
  const newer = (dir: string): string | undefined => {
    for (const name of readdirSync(dir)) {
      const p = join(dir, name);
      const st = statSync(p);
      const found = st.isDirectory() ? newer(p) : name.endsWith('.ts') && st.mtimeMs > built ? p : undefined;
      if (found) return found;
    }
    return undefined;
  };
  const file = newer(srcDir);
  return file && `${file} is newer than ${compiled}`;
}

function wallMs(args: readonly string[], check: (stdout: string) => string | undefined): number {
  const t0 = process.hrtime.bigint();
  const r = spawnSync(process.execPath, args, { cwd: ROOT, encoding: 'utf8' });
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  if (r.error) throw r.error;
  const wrong = r.status !== 0 ? `exit ${r.status}: ${r.stderr}` : check(r.stdout);
  if (wrong) throw new Error(`node ${args.join(' ')}: ${wrong}`);
  return ms;
}

export interface CliStart {
  /** Wall times of the timed `--help` runs, in ms. */
  runs: number[];
  /** Wall times of as many `node -e 0`, in ms. */
  nodeRuns: number[];
  /** What was rebuilt first, if anything. */
  rebuilt: string | undefined;
}

export function measureCliStart(log: (s: string) => void): CliStart {
  const stale = staleBuild(join(ROOT, 'src'), join(ROOT, 'dist/cli/main.js'));
  if (stale) {
    log(`cli.start: ${stale}; npm run build ...`);
    const b = spawnSync('npm', ['run', 'build'], { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] });
    if (b.status !== 0) throw new Error(`npm run build failed (exit ${b.status})`);
  }
  const help = (out: string) => (out.startsWith('Usage: topoqueue') ? undefined : `unexpected output: ${out.slice(0, 80)}`);
  const timed = (args: readonly string[], check: (stdout: string) => string | undefined): number[] => {
    const out: number[] = [];
    for (let i = 0; i < CLI_START.warmup + CLI_START.runs; i++) {
      const ms = wallMs(args, check);
      if (i >= CLI_START.warmup) out.push(ms);
    }
    return out;
  };
  const nodeRuns = timed(['-e', '0'], () => undefined);
  return { runs: timed(['bin/topoqueue.js', '--help'], help), nodeRuns, rebuilt: stale };
}
