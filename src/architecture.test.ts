// The layer rule of ARCHITECTURE.md, enforced by reading the import graph: a module may
// import from its own layer and the layers listed before it, never from a later one.
// `src/testing/` holds fixture builders that only tests and benchmarks may import.
// The pure layers keep no state of their own: no I/O, clock or randomness, and no
// module-level mutable collection (a cache belongs to the snapshot it serves, or to an
// object the caller owns; a constant lookup table is typed ReadonlyMap / ReadonlySet).

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

/** A mutable Map, Set, WeakMap or WeakSet made at module level (column 0), one problem per declaration. */
function moduleStateProblems(file: string, text: string): string[] {
  const out: string[] = [];
  const re = /^(?:export\s+)?(const|let|var)\s+([A-Za-z_$][\w$]*)\s*(?::\s*([^=]+?))?\s*=\s*new\s+(Map|Set|WeakMap|WeakSet)\b/gm;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    const [, binding, name, type, kind] = m;
    const constantTable = binding === 'const' && (kind === 'Map' || kind === 'Set') && type?.trim().startsWith(`Readonly${kind}<`);
    if (constantTable) continue;
    const line = text.slice(0, m.index).split('\n').length;
    out.push(`${relative(SRC, file)}:${line}: module-level mutable ${kind} ${name}: a cache belongs to the snapshot it serves (or another owner); a constant table is typed Readonly${kind === 'WeakMap' ? 'Map' : kind === 'WeakSet' ? 'Set' : kind}`);
  }
  return out;
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
  it('the pure core keeps no module-level mutable Map, Set, WeakMap or WeakSet', () => {
    const problems = all.filter((f) => PURE.has(layerOf(f)) && !f.endsWith('.test.ts')).flatMap((f) => moduleStateProblems(f, readFileSync(f, 'utf8')));
    assert.deepEqual(problems, []);
  });
  it('the state checker reports module-level collections, not constant tables or locals', () => {
    const f = join(SRC, 'admission/x.ts');
    const report = (text: string) => moduleStateProblems(f, text);
    assert.match(report('const cache = new Map<string, number>();')[0] ?? '', /^admission\/x\.ts:1: module-level mutable Map cache: a cache belongs to the snapshot/);
    assert.match(report('\nexport const memo = new WeakMap<object, string>();')[0] ?? '', /^admission\/x\.ts:2: module-level mutable WeakMap memo/);
    assert.equal(report('let seen = new Set();').length, 1);
    assert.equal(report('const typed: Map<string, number> = new Map();').length, 1);
    assert.equal(report('let table: ReadonlyMap<string, number> = new Map();').length, 1, 'a let can be reassigned');
    assert.deepEqual(report('const UNITS: ReadonlyMap<string, number> = new Map([["k", 3]]);\nconst NONE: ReadonlySet<string> = new Set();'), []);
    assert.deepEqual(report('function f() {\n  const local = new Map();\n  return local;\n}'), []);
  });
});
