// JSON patch (RFC 6902), as kube-apiserver applies `application/json-patch+json` through
// evanphx/json-patch v4: the same operations, the same messages (kubectl prints them after
// "The request is invalid: "), and the library's tolerances where a real cluster has them
// (replace of a missing key adds it; test against null passes on a missing key).
import { PatchError, cloneJson, isObject, jsonEqual, setKey, type JsonObject } from './errors.js';

type Container = JsonObject | unknown[];

interface Operation {
  op: string;
  path: string | undefined;
  from: string | undefined;
  value: unknown;
}

/** RFC 6902 (add, remove, replace, move, copy, test; ~0 ~1 escapes; '-' appends). Throws PatchError (422). */
export function jsonPatch(target: unknown, operations: unknown): unknown {
  const ops = decodeOperations(operations);
  // The document lives under a holder so that the root can be replaced like any other value.
  const holder: JsonObject = { doc: cloneJson(target) };
  for (const op of ops) apply(holder, op);
  return holder.doc;
}

function decodeOperations(operations: unknown): Operation[] {
  if (!Array.isArray(operations)) {
    throw new PatchError(`json: cannot unmarshal ${goJsonKind(operations)} into Go value of type jsonpatch.Patch`, 400);
  }
  return operations.map((raw) => {
    if (!isObject(raw)) {
      throw new PatchError(`json: cannot unmarshal ${goJsonKind(raw)} into Go value of type jsonpatch.Operation`, 400);
    }
    return {
      op: typeof raw.op === 'string' ? raw.op : 'unknown',
      path: typeof raw.path === 'string' ? raw.path : undefined,
      from: typeof raw.from === 'string' ? raw.from : undefined,
      value: Object.hasOwn(raw, 'value') ? raw.value : null,
    };
  });
}

function goJsonKind(v: unknown): string {
  if (Array.isArray(v)) return 'array';
  if (v === null) return 'null';
  return typeof v === 'object' ? 'object' : typeof v;
}

function apply(holder: JsonObject, op: Operation): void {
  switch (op.op) {
    case 'add':
      return add(holder, requirePath(op, 'add'), cloneJson(op.value));
    case 'remove':
      return void remove(holder, requirePath(op, 'remove'), 'remove');
    case 'replace':
      return replace(holder, requirePath(op, 'replace'), cloneJson(op.value));
    case 'move':
      return move(holder, requireFrom(op, 'move'), requirePath(op, 'move'));
    case 'copy':
      return copy(holder, requireFrom(op, 'copy'), requirePath(op, 'copy'));
    case 'test':
      return test(holder, requirePath(op, 'test'), op.value);
    default:
      throw new PatchError(`Unexpected kind: ${op.op}`);
  }
}

function requirePath(op: Operation, name: string): string {
  if (op.path === undefined) throw new PatchError(`${name} operation failed to decode path: missing value`);
  return op.path;
}

function requireFrom(op: Operation, name: string): string {
  if (op.from === undefined) throw new PatchError(`${name} operation failed to decode from: missing value`);
  return op.from;
}

/** The container that holds the last token of `path`, and that token; undefined when the parent is missing. */
function locate(holder: JsonObject, path: string): { parent: Container; key: string } | undefined {
  if (path !== '' && !path.startsWith('/')) return undefined;
  const tokens =
    path === ''
      ? []
      : path
          .slice(1)
          .split('/')
          .map((t) => t.replace(/~1/g, '/').replace(/~0/g, '~'));
  // The root itself is not addressable as a child here (evanphx rejects "" as a target path).
  if (tokens.length === 0) return undefined;
  let node: unknown = holder.doc;
  for (const token of tokens.slice(0, -1)) {
    if (Array.isArray(node)) {
      const i = arrayIndex(token);
      if (i === undefined || i >= node.length) return undefined;
      node = node[i];
    } else if (isObject(node)) {
      if (!Object.hasOwn(node, token)) return undefined;
      node = node[token];
    } else return undefined;
  }
  if (!Array.isArray(node) && !isObject(node)) return undefined;
  return { parent: node, key: tokens[tokens.length - 1]! };
}

function arrayIndex(token: string): number | undefined {
  return /^[0-9]+$/.test(token) ? Number(token) : undefined;
}

function indexOrThrow(name: string, path: string, token: string, max: number): number {
  const i = arrayIndex(token);
  if (i === undefined) {
    throw new PatchError(
      `error in ${name} for path: '${path}': value was not a proper array index: '${token}': strconv.Atoi: parsing ${JSON.stringify(token)}: invalid syntax`,
    );
  }
  if (i > max) throw new PatchError(`error in ${name} for path: '${path}': Unable to access invalid index: ${i}: invalid index referenced`);
  return i;
}

function add(holder: JsonObject, path: string, value: unknown): void {
  const at = locate(holder, path);
  if (!at) throw new PatchError(`add operation does not apply: doc is missing path: ${JSON.stringify(path)}: missing value`);
  if (Array.isArray(at.parent)) {
    const i = at.key === '-' ? at.parent.length : indexOrThrow('add', path, at.key, at.parent.length);
    at.parent.splice(i, 0, value);
  } else setKey(at.parent, at.key, value);
}

function remove(holder: JsonObject, path: string, name: string): unknown {
  const at = locate(holder, path);
  if (!at) throw new PatchError(`${name} operation does not apply: doc is missing path: ${JSON.stringify(path)}: missing value`);
  if (Array.isArray(at.parent)) {
    if (at.key === '-' || arrayIndex(at.key) === undefined) {
      throw new PatchError(`error in ${name} for path: '${path}': strconv.Atoi: parsing ${JSON.stringify(at.key)}: invalid syntax`);
    }
    const i = indexOrThrow(name, path, at.key, at.parent.length - 1);
    return at.parent.splice(i, 1)[0];
  }
  if (!Object.hasOwn(at.parent, at.key)) {
    throw new PatchError(
      `error in ${name} for path: '${name === 'move' ? at.key : path}': Unable to remove nonexistent key: ${at.key}: missing value`,
    );
  }
  const old = at.parent[at.key];
  delete at.parent[at.key];
  return old;
}

function replace(holder: JsonObject, path: string, value: unknown): void {
  if (path === '') {
    holder.doc = value;
    return;
  }
  const at = locate(holder, path);
  if (!at) throw new PatchError(`replace operation does not apply: doc is missing path: ${path}: missing value`);
  if (Array.isArray(at.parent)) {
    const i = arrayIndex(at.key);
    if (i === undefined || i >= at.parent.length) throw new PatchError(`Object to be patched is missing field (${path}: missing value)`);
    at.parent[i] = value;
  } else setKey(at.parent, at.key, value);
}

/** The value at `path`; a token that cannot index an array is an error, as in evanphx. */
function get(holder: JsonObject, path: string, name: string): { found: boolean; value: unknown } {
  if (path === '') return { found: true, value: holder.doc };
  const at = locate(holder, path);
  if (!at) return { found: false, value: undefined };
  if (Array.isArray(at.parent)) {
    const i = arrayIndex(at.key);
    if (i === undefined)
      throw new PatchError(`error in ${name} for path: '${path}': strconv.Atoi: parsing ${JSON.stringify(at.key)}: invalid syntax`);
    return i < at.parent.length ? { found: true, value: at.parent[i] } : { found: false, value: undefined };
  }
  return Object.hasOwn(at.parent, at.key) ? { found: true, value: at.parent[at.key] } : { found: false, value: undefined };
}

function move(holder: JsonObject, from: string, path: string): void {
  if (!locate(holder, from)) throw new PatchError(`move operation does not apply: doc is missing from path: ${from}: missing value`);
  if (path.startsWith(`${from}/`))
    throw new PatchError(`move operation does not apply: doc is missing destination path: ${path}: missing value`);
  const value = remove(holder, from, 'move');
  if (!locate(holder, path)) throw new PatchError(`move operation does not apply: doc is missing destination path: ${path}: missing value`);
  add(holder, path, value);
}

function copy(holder: JsonObject, from: string, path: string): void {
  const source = from === '' ? { found: false, value: undefined } : get(holder, from, 'copy');
  // evanphx copies a missing key as null; a copy from nowhere is refused here, as RFC 6902 says.
  if (!source.found) throw new PatchError(`copy operation does not apply: doc is missing from path: ${from}: missing value`);
  if (!locate(holder, path)) throw new PatchError(`copy operation does not apply: doc is missing destination path: ${path}: missing value`);
  add(holder, path, cloneJson(source.value));
}

function test(holder: JsonObject, path: string, expected: unknown): void {
  const actual = get(holder, path, 'test');
  const ok = actual.found ? jsonEqual(actual.value, expected) : expected === null;
  if (!ok) throw new PatchError(`testing value ${path} failed: test failed`);
}
