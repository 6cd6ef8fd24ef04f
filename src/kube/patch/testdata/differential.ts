// Differential check of strategicMergePatch against the real Go implementation on random
// kubectl-apply-like patches (keyed containers with nested env, `$patch: delete`,
// `$setElementOrder`, finalizers with `$deleteFromPrimitiveList`). Needs kubectl; not part of
// the test suite (golden.json holds the cases worth keeping). Run by hand:
//   node --import tsx src/kube/patch/testdata/differential.ts [runs=150] [seed=1]
// Differences that are Go's randomness, not ours, are skipped: when a patch has two faults Go
// reports either (it walks maps in random order), and a value both added to and deleted from
// a primitive list ends up either way.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { PatchError, strategicMergePatch } from '../index.js';

const names = fc.constantFrom('a', 'b', 'c', 'd', 'e');
const env = fc.uniqueArray(fc.record({ name: fc.constantFrom('A', 'B', 'C', 'D'), value: fc.constantFrom('1', '2') }), {
  selector: (e) => e.name,
  maxLength: 3,
});
const container = fc.record({ name: names, image: fc.constantFrom('x:1', 'y:2'), env }, { requiredKeys: ['name'] });
const live = fc.record({
  containers: fc.uniqueArray(container, { selector: (c) => c.name, minLength: 1, maxLength: 4 }),
  finalizers: fc.uniqueArray(fc.constantFrom('f1', 'f2', 'f3', 'f4'), { minLength: 1, maxLength: 3 }),
});
const patchElement = fc.oneof(
  fc.record({ name: names, image: fc.constantFrom('z:9') }),
  fc.record({
    name: names,
    env: fc.array(
      fc.oneof(
        fc.record({ name: fc.constantFrom('A', 'B', 'E'), value: fc.constantFrom('9') }),
        fc.record({ $patch: fc.constant('delete'), name: fc.constantFrom('A', 'B') }),
      ),
      { maxLength: 2 },
    ),
  }),
  fc.record({ $patch: fc.constant('delete'), name: names }),
);
const patch = fc.record({
  containers: fc.array(patchElement, { maxLength: 4 }),
  order: fc.option(fc.uniqueArray(names, { maxLength: 5 })),
  finalizers: fc.option(fc.uniqueArray(fc.constantFrom('f1', 'f2', 'f5'), { maxLength: 2 })),
  deleteFinalizers: fc.option(fc.uniqueArray(fc.constantFrom('f1', 'f3'), { maxLength: 2 })),
  finalizerOrder: fc.option(fc.uniqueArray(fc.constantFrom('f1', 'f2', 'f3', 'f4', 'f5'), { maxLength: 5 })),
});

/** What kube-apiserver stores of Go's result: its typed decoding drops `$...` keys and nulls. */
function stored(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(stored);
  if (v !== null && typeof v === 'object') {
    return Object.fromEntries(
      Object.keys(v)
        .sort()
        .filter((k) => !k.startsWith('$') && (v as Record<string, unknown>)[k] !== null)
        .map((k) => [k, stored((v as Record<string, unknown>)[k])]),
    );
  }
  return v;
}

const runs = Number(process.argv[2] ?? 150);
const seed = Number(process.argv[3] ?? 1);
const dir = mkdtempSync(join(tmpdir(), 'smp-differential-'));
let mismatches = 0;
try {
  for (const [l, p] of fc.sample(fc.tuple(live, patch), { numRuns: runs, seed })) {
    const object = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', finalizers: l.finalizers }, spec: { containers: l.containers } };
    const spec: Record<string, unknown> = { containers: p.containers };
    const metadata: Record<string, unknown> = {};
    if (p.order) spec['$setElementOrder/containers'] = p.order.map((name) => ({ name }));
    if (p.finalizers) metadata.finalizers = p.finalizers;
    if (p.deleteFinalizers) metadata['$deleteFromPrimitiveList/finalizers'] = p.deleteFinalizers;
    if (p.finalizerOrder) metadata['$setElementOrder/finalizers'] = p.finalizerOrder;
    const body = { spec, metadata };
    const file = join(dir, 'live.json');
    writeFileSync(file, JSON.stringify(object));
    let go: unknown;
    try {
      const out = execFileSync('kubectl', ['patch', '--local', '-f', file, '-p', JSON.stringify(body), '-o', 'json'], {
        env: { ...process.env, KUBECONFIG: '/dev/null' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      go = stored(JSON.parse(out.toString()));
    } catch (e) {
      go = `error: ${(e as { stderr: Buffer }).stderr
        .toString()
        .trim()
        .replace(/^error: /, '')}`;
    }
    let ours: unknown;
    try {
      ours = stored(strategicMergePatch('v1', 'Pod', object, body));
    } catch (e) {
      if (!(e instanceof PatchError)) throw e;
      ours = `error: ${e.message.trim()}`;
    }
    const goText = JSON.stringify(go);
    if (goText === JSON.stringify(ours)) continue;
    if (goText.includes('no elements in any of the given slices')) continue; // Go's refusal of an empty ordered list; ours merges
    if (typeof go === 'string' && typeof ours === 'string') continue;
    const both = (p.finalizers ?? []).filter((f) => (p.deleteFinalizers ?? []).some((d) => d === f));
    if (both.length > 0) continue;
    mismatches++;
    console.log(
      `mismatch\n live  ${JSON.stringify(object)}\n patch ${JSON.stringify(body)}\n go    ${goText}\n ours  ${JSON.stringify(ours)}`,
    );
  }
} finally {
  rmSync(dir, { recursive: true });
}
console.log(`${mismatches} mismatches in ${runs} random patches (seed ${seed})`);
process.exitCode = mismatches === 0 ? 0 : 1;
