// Laws every patch format keeps, on random JSON (fast-check, fixed seed).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { PatchError, jsonPatch, mergePatch, strategicMergePatch, serverSideApply } from './index.js';

const jsonObject = fc.dictionary(fc.string(), fc.jsonValue()) as fc.Arbitrary<Record<string, unknown>>;

/** Maps of maps with scalar or null leaves: no lists, no `$` keys. */
const plainTree = fc.letrec((tie) => ({
  tree: fc.dictionary(
    fc.string().filter((k) => !k.startsWith('$')),
    fc.oneof({ depthSize: 'small' }, fc.string(), fc.integer(), fc.constant(null), tie('tree')),
    { maxKeys: 4 },
  ),
})).tree as fc.Arbitrary<Record<string, unknown>>;

const podLike = fc.record({
  apiVersion: fc.constant('v1'),
  kind: fc.constant('Pod'),
  metadata: fc.record({ name: fc.string(), labels: fc.dictionary(fc.string(), fc.string()), finalizers: fc.uniqueArray(fc.string()) }),
  spec: fc.record({
    containers: fc.uniqueArray(
      fc.record({
        name: fc.string(),
        image: fc.string(),
        env: fc.uniqueArray(fc.record({ name: fc.string(), value: fc.string() }), { selector: (e) => e.name }),
      }),
      { selector: (c) => c.name },
    ),
    tolerations: fc.array(fc.record({ key: fc.string() })),
  }),
});

const jsonOps = fc.array(
  fc.record({
    op: fc.constantFrom('add', 'remove', 'replace', 'move', 'copy', 'test'),
    path: fc.constantFrom('', '/a', '/a/b', '/0', '/a/-', '/b'),
    from: fc.constantFrom('/a', '/b', '/a/0'),
    value: fc.jsonValue(),
  }),
  { maxLength: 4 },
);

/** fast-check builds some objects without a prototype; the patch functions return plain ones. */
const plain = (x: unknown): unknown =>
  Array.isArray(x)
    ? x.map(plain)
    : typeof x === 'object' && x !== null
      ? Object.fromEntries(Object.entries(x).map(([k, v]) => [k, plain(v)]))
      : x;

function attempt(f: () => unknown): void {
  try {
    f();
  } catch (e) {
    if (!(e instanceof PatchError)) throw e;
  }
}

test('mergePatch with an empty patch returns the object unchanged', () => {
  fc.assert(fc.property(jsonObject, (x) => assert.deepStrictEqual(mergePatch(x, {}), plain(x))));
});

test('mergePatch is idempotent', () => {
  fc.assert(fc.property(jsonObject, jsonObject, (x, p) => assert.deepStrictEqual(mergePatch(mergePatch(x, p), p), mergePatch(x, p))));
});

test('jsonPatch with no operations is the identity', () => {
  fc.assert(fc.property(fc.jsonValue(), (x) => assert.deepStrictEqual(jsonPatch(x, []), plain(x))));
});

test('strategic merge patch with an empty patch is the identity', () => {
  fc.assert(fc.property(podLike, (x) => assert.deepStrictEqual(strategicMergePatch('v1', 'Pod', x, {}), plain(x))));
  fc.assert(fc.property(jsonObject, (x) => assert.deepStrictEqual(strategicMergePatch('batch/v1', 'Job', x, {}), plain(x))));
});

test('strategic merge patch of maps without lists or directives is RFC 7386 merge patch', () => {
  fc.assert(fc.property(plainTree, plainTree, (x, p) => assert.deepStrictEqual(strategicMergePatch('v1', 'Node', x, p), mergePatch(x, p))));
});

test('strategic merge patch of an object onto itself changes nothing', () => {
  fc.assert(fc.property(podLike, (x) => assert.deepStrictEqual(strategicMergePatch('v1', 'Pod', x, x), plain(x))));
});

test('no patch function mutates its inputs', () => {
  fc.assert(
    fc.property(jsonObject, jsonObject, jsonOps, podLike, podLike, (x, p, ops, live, applied) => {
      const before = JSON.stringify([x, p, ops, live, applied]);
      attempt(() => mergePatch(x, p));
      attempt(() => jsonPatch(x, ops));
      attempt(() => strategicMergePatch('v1', 'Pod', x, p));
      attempt(() => strategicMergePatch('v1', 'Pod', live, applied));
      attempt(() => serverSideApply({ apiVersion: 'v1', kind: 'Pod', live, previous: live, applied }));
      assert.equal(JSON.stringify([x, p, ops, live, applied]), before);
    }),
  );
});

test('a result never shares structure with the inputs (changing it leaves them alone)', () => {
  const live = { metadata: { labels: { a: '1' } }, spec: { containers: [{ name: 'c', env: [{ name: 'A' }] }] } };
  const snapshot = JSON.stringify(live);
  for (const out of [mergePatch(live, {}), jsonPatch(live, []), strategicMergePatch('v1', 'Pod', live, {})] as Array<typeof live>) {
    out.metadata.labels.a = 'changed';
    out.spec.containers[0]!.env.push({ name: 'B' });
  }
  assert.equal(JSON.stringify(live), snapshot);
});
