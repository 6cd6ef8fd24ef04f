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
// value, so no directive (no `$...` key) and no null survives into the result; `$patch:
// replace` keeps the rest of the patch as Go does, minus directive keys and nulls.
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
    throw new PatchError(
      `json: cannot unmarshal ${Array.isArray(patch) ? 'array' : typeof patch} into Go value of type map[string]interface {}`,
      400,
    );
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
      return verbatim(patch) as JsonObject;
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
      if (!deleteList && !hasDirective(value)) setKey(original, key, fromPatch(value));
      continue;
    }
    const current = original[key];
    if (deleteList) {
      if (!Array.isArray(value)) throw bad('invalid patch format of primitive list');
      if (Array.isArray(current))
        setKey(
          original,
          key,
          current.filter((v) => !value.includes(v)),
        );
    } else if (isObject(current) && isObject(value)) setKey(original, key, mergeMap(current, value, child));
    else if (Array.isArray(current) && Array.isArray(value)) setKey(original, key, mergeListField(current, value, child).merged);
    else if (hasDirective(value)) delete original[key];
    else setKey(original, key, fromPatch(value));
  }
  return original;
}

/**
 * A value from the patch where the live object has none (or one of another type). Go drops
 * its nulls and every map that carries `$patch` (a list element or a map value), and keeps the
 * rest as it is; kube-apiserver's typed decoding then drops the other `$...` keys.
 */
function fromPatch(value: unknown): unknown {
  if (Array.isArray(value)) return value.filter((v) => !hasDirective(v)).map(fromPatch);
  if (!isObject(value)) return value;
  const out: JsonObject = {};
  for (const [k, v] of Object.entries(value)) {
    if (k.startsWith('$') || v === null || hasDirective(v)) continue;
    setKey(out, k, fromPatch(v));
  }
  return out;
}

function hasDirective(value: unknown): boolean {
  return isObject(value) && Object.hasOwn(value, DIRECTIVE);
}

/**
 * A value Go copies from the patch untouched (a `$patch: replace` map or list, an element new
 * to a keyed list, an atomic list): nested directives are not applied (a nested
 * `{"$patch":"delete","name":"A"}` stays as the element `{"name":"A"}`), and kube-apiserver's
 * typed decoding then drops the `$...` keys and the nulls; so does this.
 */
function verbatim(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(verbatim);
  if (!isObject(value)) return value;
  const out: JsonObject = {};
  for (const [k, v] of Object.entries(value)) if (!k.startsWith('$') && v !== null) setKey(out, k, verbatim(v));
  return out;
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

/**
 * A merged list, and the live list as Go's caller sees it afterwards. Go's mergeSlice deletes
 * and appends inside the live list's backing array: deleting element k shifts the later ones
 * left (the last slot keeps its old value) and an append after a deletion lands in a freed
 * slot. `$setElementOrder` then reads that array as "the live order", which decides where
 * server-only items go (a server-added container ends up before a renamed one), so the array
 * is modelled here as `backing`.
 */
interface MergedList {
  merged: unknown[];
  backing: unknown[];
}

function mergeListField(current: unknown[], patch: unknown[], shape: Shape | undefined): MergedList {
  if (shape?.mergeKey === undefined && !shape?.primitiveMerge) return { merged: patch.map(verbatim), backing: current }; // atomic
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

function mergeSlice(original: unknown[], patch: unknown[], shape: Shape): MergedList {
  if (original.length === 0 && patch.length === 0) return { merged: original, backing: original };
  const kind = elementKind(original, patch);
  if (kind === 'scalar') {
    const merged = [...new Set([...original, ...patch])];
    const { inPatch, serverOnly } = partition(merged, patch, undefined);
    return { merged: normalizeElementOrder(inPatch, serverOnly, patch, original, undefined), backing: original };
  }
  const key = shape.mergeKey;
  if (key === undefined) throw bad('cannot merge lists without merge key for type map');
  const backing = [...original];
  let live = backing.length;
  const plain: JsonObject[] = [];
  let replace = false;
  // 1. `$patch` elements: delete removes every live element with that key; replace makes the
  //    list the other patch elements.
  for (const element of patch as JsonObject[]) {
    if (!Object.hasOwn(element, DIRECTIVE)) {
      plain.push(element);
      continue;
    }
    const directive = element[DIRECTIVE];
    if (directive === 'delete') {
      if (!Object.hasOwn(element, key)) throw noMergeKey(element, key);
      for (let k = findByKey(backing, live, key, element[key]); k >= 0; k = findByKey(backing, live, key, element[key])) {
        backing.copyWithin(k, k + 1, live);
        live--;
      }
    } else if (directive === 'replace') replace = true;
    else if (directive === 'merge') throw bad('merging lists cannot yet be specified in the patch');
    else throw bad(`unknown patch type: ${goFormat(directive)} in map: ${goFormat(element)}`);
  }
  if (replace) {
    const replaced = plain.map(verbatim);
    return { merged: normalizeElementOrder([], replaced, [], replaced, key), backing };
  }
  // 2. the other elements merge into the live element with the same key, or are appended.
  const remaining = backing.slice(0, live);
  const merged = [...remaining];
  for (const element of plain) {
    if (!Object.hasOwn(element, key)) throw noMergeKey(element, key);
    const at = findByKey(merged, merged.length, key, element[key]);
    if (at >= 0) merged[at] = mergeMap(merged[at] as JsonObject, element, shape);
    else {
      merged.push(verbatim(element));
      if (merged.length <= backing.length) backing[merged.length - 1] = merged[merged.length - 1];
    }
  }
  // 3. order: patched items in patch order, interleaved with the remaining live ones.
  const { inPatch, serverOnly } = partition(merged, plain, key);
  return { merged: normalizeElementOrder(inPatch, serverOnly, plain, remaining, key), backing };
}

function findByKey(list: unknown[], length: number, key: string, value: unknown): number {
  for (let i = 0; i < length; i++) {
    const item = list[i];
    if (isObject(item) && Object.hasOwn(item, key) && item[key] === value) return i;
  }
  return -1;
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
function normalizeElementOrder(
  inPatch: unknown[],
  serverOnly: unknown[],
  patchOrder: unknown[],
  serverOrder: unknown[],
  key: string | undefined,
): unknown[] {
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

/**
 * Go's normalizeSliceOrder: sorts `items` by their place in `order`, with `$patch: delete`
 * elements moved last. Go's comparator calls a pair "less" whenever either item is missing
 * from `order`, so where some are missing the result is what Go's insertion sort (the whole of
 * sort.SliceStable up to 20 items) makes of it; that is reproduced. Beyond 20 items, with some
 * missing, Go's block merge is not reproduced and missing items go last.
 */
function sortByOrder(items: unknown[], order: unknown[], key: string | undefined): unknown[] {
  let rest = items;
  let deletions: unknown[] = [];
  if (key !== undefined) {
    for (const item of [...items, ...order]) {
      if (!isObject(item)) throw badArgType('map', item);
      if (!Object.hasOwn(item, key)) throw noMergeKey(item, key);
    }
    rest = items.filter((item) => (item as JsonObject)[DIRECTIVE] !== 'delete');
    deletions = items.filter((item) => (item as JsonObject)[DIRECTIVE] === 'delete');
  }
  const ranked = rest.map((item, at) => ({ item, at, rank: indexIn(order, item, key) }));
  if (ranked.length <= 20) {
    const less = (a: (typeof ranked)[number], b: (typeof ranked)[number]): boolean => (a.rank >= 0 && b.rank >= 0 ? a.rank < b.rank : true);
    for (let i = 1; i < ranked.length; i++) {
      for (let j = i; j > 0 && less(ranked[j]!, ranked[j - 1]!); j--) [ranked[j], ranked[j - 1]] = [ranked[j - 1]!, ranked[j]!];
    }
  } else {
    const rank = (r: (typeof ranked)[number]): number => (r.rank < 0 ? Number.POSITIVE_INFINITY : r.rank);
    ranked.sort((a, b) => (rank(a) === rank(b) ? a.at - b.at : rank(a) - rank(b)));
  }
  return [...ranked.map((r) => r.item), ...deletions];
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
    let liveOrder = live;
    if (hasLive && !hasPatch) merged = live;
    else if (!hasLive && hasPatch) merged = fromPatch(patched) as unknown[];
    else if (hasLive && hasPatch) ({ merged, backing: liveOrder } = mergeListField(live, patched, child));
    else continue;
    const kind = live.length + patched.length > 0 ? elementKind(live, patched) : 'scalar';
    const listKey = kind === 'map' ? key : undefined;
    const { inPatch, serverOnly } = partition(merged, order, listKey);
    setKey(original, field, normalizeElementOrder(inPatch, serverOnly, order, liveOrder, listKey));
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
