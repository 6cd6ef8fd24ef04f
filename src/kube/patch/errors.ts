// The one error every patch format throws, and Go's `%v` rendering of decoded JSON, so
// messages match kube-apiserver's text (users and tooling match on it).

/** A patch that cannot be applied: 400 for a malformed patch body, 422 for one that does not fit the object. */
export class PatchError extends Error {
  constructor(
    message: string,
    readonly code: 400 | 422 = 422,
  ) {
    super(message);
    this.name = 'PatchError';
  }
}

export type JsonObject = { [key: string]: unknown };

export function isObject(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Deep copy of a JSON value (the patch functions work on copies and never mutate their inputs). */
export function cloneJson<T>(v: T): T {
  if (Array.isArray(v)) return v.map(cloneJson) as T;
  if (isObject(v)) {
    const out: JsonObject = {};
    for (const [k, x] of Object.entries(v)) setKey(out, k, cloneJson(x));
    return out as T;
  }
  return v;
}

/** `obj[key] = value` that also stores a `__proto__` key as data (JSON.parse can produce one). */
export function setKey(obj: JsonObject, key: string, value: unknown): void {
  if (key === '__proto__') Object.defineProperty(obj, key, { value, writable: true, enumerable: true, configurable: true });
  else obj[key] = value;
}

/** An own property's value, never one inherited from Object.prototype. */
export function ownValue(obj: JsonObject, key: string): unknown {
  return Object.hasOwn(obj, key) ? obj[key] : undefined;
}

export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) return Array.isArray(b) && a.length === b.length && a.every((x, i) => jsonEqual(x, b[i]));
  if (isObject(a)) {
    if (!isObject(b)) return false;
    const ka = Object.keys(a);
    if (ka.length !== Object.keys(b).length) return false;
    return ka.every((k) => Object.hasOwn(b, k) && jsonEqual(a[k], b[k]));
  }
  return false;
}

/** Go's `fmt.Sprintf("%v", x)` of a value decoded by encoding/json (maps print with sorted keys). */
export function goFormat(v: unknown): string {
  if (v === null || v === undefined) return '<nil>';
  if (Array.isArray(v)) return `[${v.map(goFormat).join(' ')}]`;
  if (isObject(v)) {
    const keys = Object.keys(v).sort();
    return `map[${keys.map((k) => `${k}:${goFormat(v[k])}`).join(' ')}]`;
  }
  if (typeof v === 'number') return goFloat(v);
  return String(v);
}

/** Go's `%v` of a float64: shortest digits, exponent form below 1e-4 and from 1e21 on. */
function goFloat(x: number): string {
  if (!Number.isFinite(x)) return x > 0 ? '+Inf' : x < 0 ? '-Inf' : 'NaN';
  if (x === 0) return Object.is(x, -0) ? '-0' : '0';
  const [mantissa, expText] = x.toExponential().split('e');
  const exp = Number(expText);
  if (exp < -4 || exp >= 21) return `${mantissa}e${exp < 0 ? '-' : '+'}${String(Math.abs(exp)).padStart(2, '0')}`;
  return String(x);
}
