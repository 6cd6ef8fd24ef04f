// The layer rule of ARCHITECTURE.md, enforced by reading the import graph: a module may
// import from its own layer and the layers listed before it, never from a later one.
// `src/testing/` holds fixture builders that only tests and benchmarks may import.

import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

const SRC = dirname(fileURLToPath(import.meta.url));
const LAYERS = ['api', 'topology', 'placement', 'admission', 'integrations', 'runtime', 'controllers', 'cluster', 'kube', 'cli', 'web'];
const PURE = new Set(['api', 'topology', 'placement', 'admission', 'integrations']);

function files(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) files(p, out);
    else if (p.endsWith('.ts')) out.push(p);
  }
  return out;
}

function imports(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const out: string[] = [];
  const re = /(?:^|\n)\s*(?:import|export)\s[^'"]*?from\s+['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g;
  for (let m = re.exec(text); m; m = re.exec(text)) out.push((m[1] ?? m[2])!);
  return out;
}

function layerOf(file: string): string {
  return relative(SRC, file).split('/')[0]!;
}

/** The problem with one import edge, or undefined when the edge is allowed. */
function edgeProblem(file: string, spec: string): string | undefined {
  if (!spec.startsWith('.')) return undefined;
  const from = layerOf(file);
  const target = resolve(dirname(file), spec);
  if (!target.startsWith(SRC)) return undefined;
  const to = layerOf(target);
  if (to === 'testing') {
    return file.endsWith('.test.ts') || from === 'testing' ? undefined : `${relative(SRC, file)} imports test fixtures ${spec}`;
  }
  if (from === 'testing' || !LAYERS.includes(from)) return undefined;
  return LAYERS.indexOf(to) > LAYERS.indexOf(from) ? `${relative(SRC, file)} (${from}) imports ${spec} (${to})` : undefined;
}

describe('architecture', () => {
  const all = files(SRC);
  it('every directory under src/ is a known layer (or testing)', () => {
    for (const f of all) {
      const top = relative(SRC, f).split('/');
      if (top.length === 1) continue;
      assert.ok(LAYERS.includes(top[0]!) || top[0] === 'testing', `${relative(SRC, f)}: unknown layer ${top[0]}`);
    }
  });
  it('no lower layer imports a higher one', () => {
    const problems = all.flatMap((f) => imports(f).map((spec) => edgeProblem(f, spec)).filter((p) => p !== undefined));
    assert.deepEqual(problems, []);
  });
  it('the checker reports an upward import and product code importing fixtures', () => {
    assert.match(edgeProblem(join(SRC, 'placement/x.ts'), '../cli/main.ts') ?? '', /placement\/x.ts \(placement\) imports \.\.\/cli\/main.ts \(cli\)/);
    assert.equal(edgeProblem(join(SRC, 'cli/x.ts'), '../placement/engine.ts'), undefined);
    assert.match(edgeProblem(join(SRC, 'placement/x.ts'), '../testing/builders.ts') ?? '', /imports test fixtures/);
    assert.equal(edgeProblem(join(SRC, 'placement/x.test.ts'), '../testing/builders.ts'), undefined);
  });
  it('the pure core does no I/O and reads no clock or randomness', () => {
    const problems: string[] = [];
    for (const f of all) {
      if (!PURE.has(layerOf(f)) || f.endsWith('.test.ts')) continue;
      const text = readFileSync(f, 'utf8');
      for (const spec of imports(f)) if (spec.startsWith('node:') && spec !== 'node:crypto') problems.push(`${relative(SRC, f)} imports ${spec}`);
      for (const bad of ['Date.now(', 'Math.random(', 'new Date(', 'setTimeout(', 'setInterval(', 'process.']) {
        if (text.includes(bad)) problems.push(`${relative(SRC, f)} uses ${bad}`);
      }
    }
    assert.deepEqual(problems, []);
  });
});
