// Two small helpers over plain values that every layer needs, defined once: a guard for
// parsed input of unknown shape, and the one string order used wherever ties break on
// names (code-unit order, as Go's `<` on strings: `x10 < x2`, independent of locale).

/** A plain mapping (not null, not an array): parsed YAML/JSON read field by field. */
export function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Orders strings by UTF-16 code units, as `Array.prototype.sort()` does; equal strings give 0. */
export function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
