// JSON merge patch (RFC 7386), as kube-apiserver applies `application/merge-patch+json`:
// objects merge recursively, `null` deletes a key, arrays and scalars replace whole.
import { cloneJson, isObject, ownValue, setKey, type JsonObject } from './errors.js';

/** RFC 7386. Returns a new value; never mutates its inputs. */
export function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isObject(patch)) return cloneJson(patch);
  const out: JsonObject = isObject(target) ? cloneJson(target) : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete out[key];
    else setKey(out, key, mergePatch(ownValue(out, key), value));
  }
  return out;
}
