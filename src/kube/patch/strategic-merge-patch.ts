// Strategic merge patch (`application/strategic-merge-patch+json`) for built-in kinds, as
// k8s.io/apimachinery's strategicpatch applies it on the server (StrategicMergeMapPatch):
//  1. a map's `$patch` directive (replace / delete) short-cuts the whole map;
//  2. `$retainKeys` drops the live keys it does not list;
//  3. each `$setElementOrder/<f>` merges list f and orders it: the directive's order for the
//     patched items, the live order for server-only items, interleaved as Go does;
//  4. every other key: null deletes, maps merge, lists follow the field's strategy (merge by
//     key with `$patch: delete|replace` elements, primitive set union with
//     `$deleteFromPrimitiveList/<f>`, or atomic replace), scalars replace.
// Values that arrive from the patch where the live object has nothing are merged into an empty
// value, so no directive (no `$...` key) and no null survives into the result.
// Messages are Go's (`map: map[image:z] does not contain declared merge key: name`).
import { PatchError, cloneJson, goFormat, isObject, setKey, type JsonObject } from './errors.js';
import { fieldShape, shapeOf, type Shape } from './shapes.js';

const DIRECTIVE = '$patch';
const RETAIN_KEYS = '$retainKeys';
const SET_ELEMENT_ORDER = '$setElementOrder';
const DELETE_FROM_PRIMITIVE_LIST = '$deleteFromPrimitiveList';

/** Does SMP apply to this kind (a built-in), or must the server answer 415? */
export function supportsStrategicMergePatch(apiVersion: string, kind: string): boolean {
  return shapeOf(apiVersion, kind) !== undefined;
}

/** Strategic merge patch of a built-in kind. Returns a new object; never mutates its inputs. Throws PatchError. */
export function strategicMergePatch(apiVersion: string, kind: string, target: unknown, patch: unknown): unknown {
  const shape = shapeOf(apiVersion, kind);
  if (shape === undefined) {
    throw new PatchError(`strategic merge patch is not supported for ${apiVersion}, Kind=${kind}: use a merge or JSON patch`, 400);
  }
  return strategicMergeWithShape(shape, target, patch);
}

/** The engine behind strategicMergePatch, for any shape (server-side apply reuses it). */
export function strategicMergeWithShape(shape: Shape | undefined, target: unknown, patch: unknown): unknown {
  if (!isObject(patch)) {
    throw new PatchError(`json: cannot unmarshal ${Array.isArray(patch) ? 'array' : typeof patch} into Go value of type map[string]interface {}`, 400);
  }
  const original = isObject(target) ? cloneJson(target) : {};
  return mergeMap(original, cloneJson(patch), shape);
}

// ---- errors with Go's text -------------------------------------------------------------

function bad(message: string): PatchError {
  return new PatchError(message, 400);
}

function noMergeKey(m: JsonObject, key: string): PatchError {
  return bad(`map: ${goFormat(m)} does not contain declared merge key: ${key}`);
}

function goKind(v: unknown): string {
  if (Array.isArray(v)) return 'slice';
  if (isObject(v)) return 'map';
  if (v === null || v === undefined) return 'nil';
  return typeof v === 'number' ? 'float64' : typeof v === 'boolean' ? 'bool' : 'string';
}

function badArgType(expected: 'map' | 'slice', actual: unknown): PatchError {
  return bad(`expected a ${expected}, but received a ${goKind(actual)}`);
}

// ---- maps ------------------------------------------------------------------------------

/** Merges `patch` into `original`; both are private copies and may be changed. */
function mergeMap(original: JsonObject, patch: JsonObject, shape: Shape | undefined): JsonObject {
  if (Object.hasOwn(patch, DIRECTIVE)) {
    const directive = patch[DIRECTIVE];
    if (directive === 'replace') {
      delete patch[DIRECTIVE];
      return mergeMap({}, patch, shape);
    }
    if (directive === 'delete') return {};
    throw bad(`unknown patch type: ${goFormat(directive)} in map: ${goFormat(patch)}`);
  }
  applyRetainKeys(original, patch);
  applySetElementOrder(original, patch, shape);

  for (const [patchKey, value] of Object.entries(patch)) {
    let key = patchKey;
    const deleteList = patchKey.startsWith(DELETE_FROM_PRIMITIVE_LIST);
    if (deleteList) key = directiveField(patchKey, DELETE_FROM_PRIMITIVE_LIST, 'invalid patch format of primitive list');
    else if (patchKey.startsWith('$')) continue; // unknown directive: dropped, never stored
    const child = fieldShape(shape, key);
    if (value === null) {
      delete original[key];
      continue;
    }
    if (!Object.hasOwn(original, key)) {
      if (!deleteList) setKey(original, key, fromPatch(value, child));
      continue;
    }
    const current = original[key];
    if (deleteList) {
      if (!Array.isArray(value)) throw bad('invalid patch format of primitive list');
      if (Array.isArray(current)) setKey(original, key, current.filter((v) => !value.includes(v)));
    } else if (isObject(current) && isObject(value)) setKey(original, key, mergeMap(current, value, child));
    else if (Array.isArray(current) && Array.isArray(value)) setKey(original, key, mergeListField(current, value, child));
    else setKey(original, key, fromPatch(value, child));
  }
  return original;
}

/** A value from the patch where the live object has none: merged into an empty value, so directives apply and vanish. */
function fromPatch(value: unknown, shape: Shape | undefined): unknown {
  if (isObject(value)) return mergeMap({}, value, shape);
  if (Array.isArray(value)) return mergeListField([], value, shape);
  return value;
}

function directiveField(key: string, prefix: string, message: string): string {
  const slash = key.indexOf('/');
  if (slash < 0 || key.slice(0, slash) !== prefix) throw bad(message);
  return key.slice(slash + 1);
}

function applyRetainKeys(original: JsonObject, patch: JsonObject): void {
  if (!Object.hasOwn(patch, RETAIN_KEYS)) return;
  const retain = patch[RETAIN_KEYS];
  delete patch[RETAIN_KEYS];
  if (!Array.isArray(retain)) throw bad('invalid patch format of retainKeys');
  const keep = new Set<unknown>(retain);
  for (const [k, v] of Object.entries(patch)) {
    if (v === null || k.startsWith(DELETE_FROM_PRIMITIVE_LIST) || k.startsWith(SET_ELEMENT_ORDER)) continue;
    if (!keep.has(k)) throw bad('invalid patch format of retainKeys');
  }
  for (const k of Object.keys(original)) if (!keep.has(k)) delete original[k];
}

// ---- lists -----------------------------------------------------------------------------

type ElementKind = 'map' | 'scalar';

function mergeListField(current: unknown[], patch: unknown[], shape: Shape | undefined): unknown[] {
  if (shape?.mergeKey === undefined && !shape?.primitiveMerge) return patch; // atomic
  return mergeSlice(current, patch, shape);
}

function elementKind(...lists: unknown[][]): ElementKind {
  let first: string | undefined;
  for (const list of lists) {
    for (const v of list) {
      const kind = Array.isArray(v) ? 'list' : isObject(v) ? 'map' : v === null ? 'null' : typeof v;
      if (kind === 'list') throw new PatchError('lists of lists are not supported', 422);
      if (first === undefined) first = kind;
      else if (first !== kind) throw bad(`list element types are not identical: ${goFormat(lists)}`);
    }
  }
  return first === 'map' ? 'map' : 'scalar';
}

function mergeSlice(original: unknown[], patch: unknown[], shape: Shape): unknown[] {
  if (original.length === 0 && patch.length === 0) return original;
  const kind = elementKind(original, patch);
  const key = kind === 'map' ? shape.mergeKey : undefined;
  let merged: unknown[];
  if (kind === 'scalar') {
    merged = [...new Set([...original, ...patch])];
  } else {
    if (key === undefined) throw bad('cannot merge lists without merge key for type map');
    const split = applySpecialElements(original as JsonObject[], patch as JsonObject[], key, shape);
    original = split.original;
    patch = split.patch;
    merged = mergeByKey(split.original, split.patch, key, shape);
  }
  const { inPatch, serverOnly } = partition(merged, patch, key);
  return normalizeElementOrder(inPatch, serverOnly, patch, original, key);
}

/** `$patch: delete` removes live elements by key, `$patch: replace` makes the list the other patch elements. */
function applySpecialElements(original: JsonObject[], patch: JsonObject[], key: string, shape: Shape): { original: JsonObject[]; patch: JsonObject[] } {
  const plain: JsonObject[] = [];
  let replace = false;
  for (const element of patch) {
    if (!Object.hasOwn(element, DIRECTIVE)) {
      plain.push(element);
      continue;
    }
    const directive = element[DIRECTIVE];
    if (directive === 'delete') {
      if (!Object.hasOwn(element, key)) throw noMergeKey(element, key);
      original = original.filter((o) => !(Object.hasOwn(o, key) && o[key] === element[key]));
    } else if (directive === 'replace') replace = true;
    else if (directive === 'merge') throw bad('merging lists cannot yet be specified in the patch');
    else throw bad(`unknown patch type: ${goFormat(directive)} in map: ${goFormat(element)}`);
  }
  if (replace) return { original: plain.map((e) => fromPatch(e, shape) as JsonObject), patch: [] };
  return { original, patch: plain };
}

function mergeByKey(original: JsonObject[], patch: JsonObject[], key: string, shape: Shape): unknown[] {
  const merged: JsonObject[] = [...original];
  for (const element of patch) {
    if (!Object.hasOwn(element, key)) throw noMergeKey(element, key);
    const at = merged.findIndex((o) => Object.hasOwn(o, key) && o[key] === element[key]);
    if (at >= 0) merged[at] = mergeMap(merged[at]!, element, shape);
    else merged.push(fromPatch(element, shape) as JsonObject);
  }
  return merged;
}

function keyValue(item: unknown, key: string | undefined): unknown {
  if (key === undefined) return item;
  return isObject(item) ? item[key] : undefined;
}

/** Splits `merged` into the items named by `by` (by merge key, or by value for scalars) and the rest. */
function partition(merged: unknown[], by: unknown[], key: string | undefined): { inPatch: unknown[]; serverOnly: unknown[] } {
  const inPatch: unknown[] = [];
  const serverOnly: unknown[] = [];
  for (const item of merged) {
    if (key !== undefined) {
      if (!isObject(item)) throw badArgType('map', item);
      if (!Object.hasOwn(item, key)) throw noMergeKey(item, key);
    }
    const value = keyValue(item, key);
    const found = by.some((b) => {
      if (key !== undefined && !isObject(b)) throw bad(`value for key ${goFormat(b)} is not a map.`);
      return (key === undefined || Object.hasOwn(b as JsonObject, key)) && keyValue(b, key) === value;
    });
    (found ? inPatch : serverOnly).push(item);
  }
  return { inPatch, serverOnly };
}

function indexIn(list: unknown[], item: unknown, key: string | undefined): number {
  const value = keyValue(item, key);
  return list.findIndex((x) => keyValue(x, key) === value);
}

/** Patched items in `patchOrder`, server-only items in `serverOrder`, interleaved as Go's mergeSortedSlice does. */
function normalizeElementOrder(inPatch: unknown[], serverOnly: unknown[], patchOrder: unknown[], serverOrder: unknown[], key: string | undefined): unknown[] {
  const right = sortByOrder(inPatch, patchOrder, key);
  const left = sortByOrder(serverOnly, serverOrder, key);
  // Walk both: a server-only item goes first only when both it and the next patched item
  // sit in the live list and it sat earlier; new items therefore come before server-only ones.
  const out: unknown[] = [];
  let i = 0;
  let j = 0;
  while (i < left.length || j < right.length) {
    if (j >= right.length) out.push(left[i++]);
    else if (i >= left.length) out.push(right[j++]);
    else {
      const li = indexIn(serverOrder, left[i], key);
      const ri = indexIn(serverOrder, right[j], key);
      if (li >= 0 && ri >= 0 && li < ri) out.push(left[i++]);
      else out.push(right[j++]);
    }
  }
  return out;
}

function sortByOrder(items: unknown[], order: unknown[], key: string | undefined): unknown[] {
  if (key !== undefined) {
    for (const item of [...items, ...order]) {
      if (!isObject(item)) throw badArgType('map', item);
      if (!Object.hasOwn(item, key)) throw noMergeKey(item, key);
    }
  }
  const rank = (item: unknown): number => {
    const i = indexIn(order, item, key);
    return i < 0 ? Number.POSITIVE_INFINITY : i;
  };
  return items
    .map((item, at) => ({ item, at, rank: rank(item) }))
    .sort((a, b) => (a.rank === b.rank ? a.at - b.at : a.rank - b.rank))
    .map((x) => x.item);
}

// ---- $setElementOrder ------------------------------------------------------------------

function applySetElementOrder(original: JsonObject, patch: JsonObject, shape: Shape | undefined): void {
  for (const directiveKey of Object.keys(patch)) {
    if (!directiveKey.startsWith(SET_ELEMENT_ORDER)) continue;
    const order = patch[directiveKey];
    delete patch[directiveKey];
    if (!Array.isArray(order)) throw badArgType('slice', order);
    const field = directiveField(directiveKey, SET_ELEMENT_ORDER, 'invalid patch format of setElementOrder list');
    const hasLive = Object.hasOwn(original, field);
    const hasPatch = Object.hasOwn(patch, field);
    const live = hasLive ? original[field] : [];
    const patched = hasPatch ? patch[field] : [];
    if (!Array.isArray(live)) throw badArgType('slice', live);
    if (!Array.isArray(patched)) throw badArgType('slice', patched);
    const child = fieldShape(shape, field);
    const key = child?.mergeKey;
    validateAgainstOrder(patched, order, key);
    let merged: unknown[];
    if (hasLive && !hasPatch) merged = live;
    else if (!hasLive && hasPatch) merged = fromPatch(patched, child) as unknown[];
    else if (hasLive && hasPatch) merged = mergeListField(live, patched, child);
    else continue;
    const kind = live.length + patched.length > 0 ? elementKind(live, patched) : 'scalar';
    const listKey = kind === 'map' ? key : undefined;
    const { inPatch, serverOnly } = partition(merged, order, listKey);
    setKey(original, field, normalizeElementOrder(inPatch, serverOnly, order, live, listKey));
    delete patch[field];
  }
}

/** The patch's items (deletions aside) must appear in the same relative order in `$setElementOrder`. */
function validateAgainstOrder(patchList: unknown[], order: unknown[], key: string | undefined): void {
  if (order.length === 0 || patchList.length === 0) return;
  let items = patchList;
  if (key !== undefined) {
    items = patchList.filter((v) => {
      if (!isObject(v)) throw badArgType('map', v);
      return v[DIRECTIVE] !== 'delete';
    });
  }
  let p = 0;
  let s = 0;
  while (p < items.length && s < order.length) {
    const item = items[p];
    if (isObject(item) && Object.hasOwn(item, DIRECTIVE)) {
      p++;
      continue;
    }
    if (keyEqual(item, order[s], key)) p++;
    s++;
  }
  if (p < items.length && s >= order.length) {
    throw bad(`The order in patch list:\n${goFormat(patchList)}\n doesn't match ${SET_ELEMENT_ORDER} list:\n${goFormat(order)}\n`);
  }
}

function keyEqual(left: unknown, right: unknown, key: string | undefined): boolean {
  if (key === undefined) return left === right;
  if (!isObject(left)) throw badArgType('map', left);
  if (!isObject(right)) throw badArgType('map', right);
  if (!Object.hasOwn(left, key)) throw noMergeKey(left, key);
  if (!Object.hasOwn(right, key)) throw noMergeKey(right, key);
  return left[key] === right[key];
}
