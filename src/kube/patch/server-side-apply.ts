// Server-side apply, approximated as kubectl-facade.md §7.3 allows (no managedFields, no
// conflicts): per field manager, the configuration it applied last is kept by the caller.
//  1. create: the applied configuration is the object;
//  2. remove from the live object what the manager applied before and no longer applies
//     (keys, keyed list elements, primitive set members; atomic lists are replaced anyway);
//  3. merge the new configuration: strategic merge for built-ins (their list keys),
//     RFC 7386 merge patch for custom resources (lists replace whole).
import { PatchError, cloneJson, isObject, ownValue, setKey, type JsonObject } from './errors.js';
import { mergePatch } from './merge-patch.js';
import { fieldShape, shapeOf, type Shape } from './shapes.js';
import { strategicMergeWithShape } from './strategic-merge-patch.js';

export interface ServerSideApplyArgs {
  apiVersion: string;
  kind: string;
  /** The stored object; undefined when the apply creates it. */
  live: unknown | undefined;
  /** What this field manager applied last time; undefined on its first apply. */
  previous: unknown | undefined;
  /** The configuration applied now. */
  applied: unknown;
}

/** Server-side apply (approximated). Returns the new object; never mutates its inputs. Throws PatchError. */
export function serverSideApply(args: ServerSideApplyArgs): unknown {
  if (!isObject(args.applied)) throw new PatchError('the applied configuration must be a JSON or YAML object', 400);
  if (args.live === undefined) return cloneJson(args.applied);
  const shape = shapeOf(args.apiVersion, args.kind);
  const live = cloneJson(args.live);
  if (isObject(live) && isObject(args.previous)) removeDropped(live, args.previous, args.applied, shape, shape !== undefined);
  return shape !== undefined ? strategicMergeWithShape(shape, live, args.applied) : mergePatch(live, args.applied);
}

/** Removes from `live` (in place) what `previous` set and `applied` no longer sets. */
function removeDropped(live: JsonObject, previous: JsonObject, applied: JsonObject, shape: Shape | undefined, builtIn: boolean): void {
  for (const [key, before] of Object.entries(previous)) {
    if (!Object.hasOwn(applied, key) || applied[key] === null) {
      delete live[key];
      continue;
    }
    const now = applied[key];
    const current = ownValue(live, key);
    const child = fieldShape(shape, key);
    if (isObject(before) && isObject(now) && isObject(current)) {
      removeDropped(current, before, now, child, builtIn);
    } else if (builtIn && Array.isArray(before) && Array.isArray(now) && Array.isArray(current)) {
      setKey(live, key, removeDroppedElements(current, before, now, child, builtIn));
    }
  }
}

function removeDroppedElements(
  current: unknown[],
  before: unknown[],
  now: unknown[],
  shape: Shape | undefined,
  builtIn: boolean,
): unknown[] {
  if (shape?.primitiveMerge) return current.filter((v) => !(before.includes(v) && !now.includes(v)));
  const key = shape?.mergeKey;
  if (key === undefined) return current; // atomic: the new list replaces it whole
  const find = (list: unknown[], value: unknown): JsonObject | undefined =>
    list.find((x): x is JsonObject => isObject(x) && Object.hasOwn(x, key) && x[key] === value);
  const dropped = new Set<unknown>();
  for (const b of before) {
    if (!isObject(b) || !Object.hasOwn(b, key)) continue;
    const n = find(now, b[key]);
    if (n === undefined) dropped.add(b[key]);
    else {
      const c = find(current, b[key]);
      if (c !== undefined) removeDropped(c, b, n, shape, builtIn);
    }
  }
  return current.filter((c) => !(isObject(c) && Object.hasOwn(c, key) && dropped.has(c[key])));
}
