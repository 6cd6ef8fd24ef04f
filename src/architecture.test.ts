// The layer rule of ARCHITECTURE.md, enforced by reading the import graph: a module may
// import from its own layer and the layers listed before it, never from a later one.
// `src/testing/` holds fixture builders that only tests and benchmarks may import.
// The pure layers keep no state of their own: no I/O, clock or randomness, and no
// module-level mutable collection (a cache belongs to the snapshot it serves, or to an
// object the caller owns; a constant lookup table is typed ReadonlyMap / ReadonlySet).

import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

const SRC = dirname(fileURLToPath(import.meta.url));
/** Every layer in import order, lowest first: those that exist under src/ and the planned ones (in their place, so the order is fixed before they arrive). */
const LAYERS = ['api', 'topology', 'placement', 'admission', 'integrations', 'runtime', 'controllers', 'cluster', 'kube', 'web', 'cli'];
/** Layers of ARCHITECTURE.md with no directory yet. The first file of one must take it off this list (and docs/design.md's). */
const PLANNED: ReadonlySet<string> = new Set<string>();
const PURE = new Set(['api', 'topology', 'placement', 'admission', 'integrations']);

function files(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) files(p, out);
    else if (p.endsWith('.ts')) out.push(p);
  }
  return out;
}

interface ImportEdge {
  spec: string;
  /** Loaded when the importing module loads: not `import type`, not a dynamic `import()`. */
  atLoad: boolean;
}

function importEdges(file: string): ImportEdge[] {
  const text = readFileSync(file, 'utf8');
  const out: ImportEdge[] = [];
  const re = /(?:^|\n)\s*((?:import|export)\s[^'"]*?)from\s+['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    out.push(m[2] !== undefined ? { spec: m[2], atLoad: !/^(?:import|export)\s+type\s/.test(m[1]!) } : { spec: m[3]!, atLoad: false });
  }
  return out;
}

function imports(file: string): string[] {
  return importEdges(file).map((e) => e.spec);
}

/** The source files and packages a module loads before its first line runs: the closure of its load-time imports. */
function loadedAtStart(file: string): { files: string[]; packages: string[] } {
  const seen = new Set<string>();
  const packages = new Set<string>();
  const visit = (f: string): void => {
    if (seen.has(f)) return;
    seen.add(f);
    for (const e of importEdges(f)) {
      if (!e.atLoad) continue;
      if (e.spec.startsWith('.')) visit(resolve(dirname(f), e.spec));
      else packages.add(e.spec);
    }
  };
  visit(file);
  return { files: [...seen].map((f) => relative(SRC, f)).sort(), packages: [...packages].sort() };
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

/** Problems of the layer list against the directories under src/: an unlisted directory, an existing layer without one, a planned layer with one. */
function layerListProblems(dirs: readonly string[], planned: ReadonlySet<string> = PLANNED): string[] {
  const here = 'in src/architecture.test.ts and docs/design.md';
  const problems: string[] = [];
  for (const d of dirs) {
    if (d === 'testing') continue;
    if (!LAYERS.includes(d)) {
      problems.push(`src/${d}/ is not a layer: add it to LAYERS (in import order) ${here}`);
    } else if (planned.has(d)) {
      problems.push(`src/${d}/ exists but layer ${d} is marked planned: take it off PLANNED ${here}`);
    }
  }
  for (const l of LAYERS) {
    if (!planned.has(l) && !dirs.includes(l)) problems.push(`layer ${l} has no directory src/${l}/: mark it planned or drop it ${here}`);
  }
  return problems;
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
    out.push(
      `${relative(SRC, file)}:${line}: module-level mutable ${kind} ${name}: a cache belongs to the snapshot it serves (or another owner); a constant table is typed Readonly${kind === 'WeakMap' ? 'Map' : kind === 'WeakSet' ? 'Set' : kind}`,
    );
  }
  return out;
}

describe('architecture', () => {
  const all = files(SRC);
  it('the layer list names exactly the directories under src/, the planned layers having none', () => {
    const dirs = readdirSync(SRC).filter((d) => statSync(join(SRC, d)).isDirectory());
    assert.deepEqual(layerListProblems(dirs), []);
  });
  it('the layer-list check reports an unknown directory, a planned layer that arrived and an existing one that left', () => {
    const existing = LAYERS.filter((l) => !PLANNED.has(l));
    assert.deepEqual(layerListProblems([...existing, 'testing']), []);
    assert.match(layerListProblems([...existing, 'util']).join('\n'), /src\/util\/ is not a layer/);
    assert.match(layerListProblems(existing, new Set(['web'])).join('\n'), /src\/web\/ exists but layer web is marked planned/);
    assert.match(layerListProblems(existing.filter((l) => l !== 'runtime')).join('\n'), /layer runtime has no directory src\/runtime\//);
  });
  it('no lower layer imports a higher one', () => {
    const problems = all.flatMap((f) =>
      imports(f)
        .map((spec) => edgeProblem(f, spec))
        .filter((p) => p !== undefined),
    );
    assert.deepEqual(problems, []);
  });
  it('the checker reports an upward import and product code importing fixtures', () => {
    assert.match(
      edgeProblem(join(SRC, 'placement/x.ts'), '../cli/main.ts') ?? '',
      /placement\/x.ts \(placement\) imports \.\.\/cli\/main.ts \(cli\)/,
    );
    assert.equal(edgeProblem(join(SRC, 'cli/x.ts'), '../placement/engine.ts'), undefined);
    assert.match(edgeProblem(join(SRC, 'placement/x.ts'), '../testing/builders.ts') ?? '', /imports test fixtures/);
    assert.equal(edgeProblem(join(SRC, 'placement/x.test.ts'), '../testing/builders.ts'), undefined);
  });
  it('the CLI entry loads only commander and a few small modules at start-up (each command imports the rest when it runs)', () => {
    const start = loadedAtStart(join(SRC, 'cli/main.ts'));
    assert.deepEqual(
      start.packages.filter((p) => !p.startsWith('node:')),
      ['commander'],
    );
    const commandModules = start.files.filter((f) => f.startsWith('cli/') && f !== 'cli/main.ts');
    assert.deepEqual(commandModules, [], 'cli/main.ts imports another command module statically');
    assert.ok(start.files.length <= 12, `cli/main.ts loads ${start.files.length} source files at start-up: ${start.files.join(', ')}`);
  });
  it('load-time imports leave out `import type` and dynamic imports', () => {
    const dir = mkdtempSync(join(tmpdir(), 'arch-'));
    try {
      const a = [
        "import type { X } from './types.ts';",
        "import { y } from './b.ts';",
        "export { z } from 'zod';",
        "const c = () => import('./c.ts');",
      ];
      writeFileSync(join(dir, 'a.ts'), `${a.join('\n')}\n`);
      writeFileSync(join(dir, 'b.ts'), "import { stringify } from 'yaml';\n");
      const start = loadedAtStart(join(dir, 'a.ts'));
      assert.deepEqual(start.packages, ['yaml', 'zod']);
      const names = start.files.map((f) => f.split('/').pop());
      assert.deepEqual(names, ['a.ts', 'b.ts']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
  it('the pure core does no I/O and reads no clock or randomness', () => {
    const problems: string[] = [];
    for (const f of all) {
      if (!PURE.has(layerOf(f)) || f.endsWith('.test.ts')) continue;
      const text = readFileSync(f, 'utf8');
      for (const spec of imports(f))
        if (spec.startsWith('node:') && spec !== 'node:crypto') problems.push(`${relative(SRC, f)} imports ${spec}`);
      for (const bad of ['Date.now(', 'Math.random(', 'new Date(', 'setTimeout(', 'setInterval(', 'process.']) {
        if (text.includes(bad)) problems.push(`${relative(SRC, f)} uses ${bad}`);
      }
    }
    assert.deepEqual(problems, []);
  });
  it('the pure core keeps no module-level mutable Map, Set, WeakMap or WeakSet', () => {
    const problems = all
      .filter((f) => PURE.has(layerOf(f)) && !f.endsWith('.test.ts'))
      .flatMap((f) => moduleStateProblems(f, readFileSync(f, 'utf8')));
    assert.deepEqual(problems, []);
  });
  it('the state checker reports module-level collections, not constant tables or locals', () => {
    const f = join(SRC, 'admission/x.ts');
    const report = (text: string) => moduleStateProblems(f, text);
    assert.match(
      report('const cache = new Map<string, number>();')[0] ?? '',
      /^admission\/x\.ts:1: module-level mutable Map cache: a cache belongs to the snapshot/,
    );
    assert.match(
      report('\nexport const memo = new WeakMap<object, string>();')[0] ?? '',
      /^admission\/x\.ts:2: module-level mutable WeakMap memo/,
    );
    assert.equal(report('let seen = new Set();').length, 1);
    assert.equal(report('const typed: Map<string, number> = new Map();').length, 1);
    assert.equal(report('let table: ReadonlyMap<string, number> = new Map();').length, 1, 'a let can be reassigned');
    assert.deepEqual(
      report('const UNITS: ReadonlyMap<string, number> = new Map([["k", 3]]);\nconst NONE: ReadonlySet<string> = new Set();'),
      [],
    );
    assert.deepEqual(report('function f() {\n  const local = new Map();\n  return local;\n}'), []);
  });
});
