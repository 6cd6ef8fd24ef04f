// Golden cases from the real Go implementation (testdata/generate.mjs ran
// `kubectl patch --local --type=strategic|merge|json` on each): same result, or the same error
// text (kubectl's output cannot tell Go's own trailing newline from the one it adds).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { PatchError, jsonPatch, mergePatch, strategicMergePatch } from './index.js';

interface GoldenCase {
  name: string;
  live: { apiVersion: string; kind: string };
  patch: unknown;
  expected?: unknown;
  error?: string;
}

const golden = JSON.parse(readFileSync(new URL('./testdata/golden.json', import.meta.url), 'utf8')) as Record<
  'strategic' | 'merge' | 'json',
  GoldenCase[]
>;

const apply: Record<keyof typeof golden, (c: GoldenCase) => unknown> = {
  strategic: (c) => strategicMergePatch(c.live.apiVersion, c.live.kind, c.live, c.patch),
  merge: (c) => mergePatch(c.live, c.patch),
  json: (c) => jsonPatch(c.live, c.patch),
};

for (const type of ['strategic', 'merge', 'json'] as const) {
  for (const c of golden[type]) {
    test(`${type} patch matches Go: ${c.name}`, () => {
      const before = JSON.stringify([c.live, c.patch]);
      if (c.error !== undefined) {
        assert.throws(
          () => apply[type](c),
          (e: unknown) => e instanceof PatchError && e.message.trimEnd() === c.error,
        );
      } else {
        assert.deepStrictEqual(apply[type](c), c.expected);
      }
      assert.equal(JSON.stringify([c.live, c.patch]), before, 'inputs are not mutated');
    });
  }
}
