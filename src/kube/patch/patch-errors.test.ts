// Which kinds take SMP, and the status code each refusal carries (400 malformed, 422 does not fit).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PatchError, jsonPatch, mergePatch, strategicMergePatch, supportsStrategicMergePatch } from './index.js';

const isPatchError = (code: number, text?: RegExp) => (e: unknown) =>
  e instanceof PatchError && e.code === code && (text === undefined || text.test(e.message));

test('SMP applies to built-in kinds only; custom resources must get 415 from the server', () => {
  for (const [apiVersion, kind] of [
    ['v1', 'Pod'],
    ['v1', 'Node'],
    ['v1', 'Namespace'],
    ['v1', 'Event'],
    ['batch/v1', 'Job'],
    ['coordination.k8s.io/v1', 'Lease'],
    ['scheduling.k8s.io/v1', 'PriorityClass'],
    ['events.k8s.io/v1', 'Event'],
  ]) {
    assert.equal(supportsStrategicMergePatch(apiVersion!, kind!), true, `${apiVersion} ${kind}`);
  }
  for (const [apiVersion, kind] of [
    ['kueue.x-k8s.io/v1beta2', 'Workload'],
    ['kueue.x-k8s.io/v1beta2', 'Topology'],
    ['v1', 'Workload'],
    ['batch/v2', 'Job'],
    ['v1', 'toString'],
  ]) {
    assert.equal(supportsStrategicMergePatch(apiVersion!, kind!), false, `${apiVersion} ${kind}`);
  }
  assert.throws(() => strategicMergePatch('kueue.x-k8s.io/v1beta2', 'Workload', {}, {}), isPatchError(400, /not supported/));
});

test('a failed JSON patch is a 422 with the library text; a patch that is not a list is a 400', () => {
  assert.throws(
    () => jsonPatch({ a: 1 }, [{ op: 'test', path: '/a', value: 2 }]),
    isPatchError(422, /^testing value \/a failed: test failed$/),
  );
  assert.throws(() => jsonPatch({ a: 1 }, [{ op: 'remove', path: '/b' }]), isPatchError(422));
  assert.throws(() => jsonPatch({ a: 1 }, { op: 'add' }), isPatchError(400, /cannot unmarshal object/));
  assert.throws(() => jsonPatch({ a: 1 }, [7]), isPatchError(400, /cannot unmarshal number/));
});

test('a malformed strategic merge patch is a 400 with Go text; a list of lists is a 422', () => {
  assert.throws(() => strategicMergePatch('v1', 'Pod', {}, [1]), isPatchError(400, /cannot unmarshal array/));
  assert.throws(
    () => strategicMergePatch('v1', 'Pod', { spec: { containers: [{ name: 'c' }] } }, { spec: { containers: [{ image: 'z' }] } }),
    isPatchError(400, /^map: map\[image:z\] does not contain declared merge key: name$/),
  );
  assert.throws(
    () => strategicMergePatch('v1', 'Pod', { metadata: { finalizers: ['a'] } }, { metadata: { finalizers: [['b']] } }),
    isPatchError(422, /lists of lists/),
  );
  assert.throws(
    () => strategicMergePatch('v1', 'Pod', { metadata: {} }, { metadata: { '$setElementOrder/finalizers': 'x' } }),
    isPatchError(400, /expected a slice, but received a string/),
  );
});

test('the whole JSON root can be replaced or tested', () => {
  assert.deepStrictEqual(jsonPatch({ a: 1 }, [{ op: 'test', path: '', value: { a: 1 } }]), { a: 1 });
  assert.deepStrictEqual(mergePatch({ a: 1 }, 'x'), 'x');
  assert.deepStrictEqual(mergePatch('x', { a: { b: null, c: 1 } }), { a: { c: 1 } });
});

test('a "__proto__" key is data, never the prototype', () => {
  const patch = JSON.parse('{"metadata":{"labels":{"__proto__":{"polluted":"yes"}}}}') as unknown;
  for (const out of [mergePatch({}, patch), strategicMergePatch('v1', 'Pod', {}, patch)] as Array<{
    metadata: { labels: Record<string, unknown> };
  }>) {
    assert.deepStrictEqual(Object.keys(out.metadata.labels), ['__proto__']);
    assert.equal(Object.getPrototypeOf(out.metadata.labels), Object.prototype);
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
  }
  const added = jsonPatch({ a: {} }, [{ op: 'add', path: '/a/__proto__', value: { x: 1 } }]) as { a: object };
  assert.deepStrictEqual(Object.keys(added.a), ['__proto__']);
});
