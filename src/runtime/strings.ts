// One copy of a string seen again and again (event messages, reasons, object references):
// a bounded table, so that a run that keeps many records holds each recurring text once,
// and as one flat string (a message built with `+` or a template is a tree of pieces that
// the records would otherwise keep, piece by piece).

/** A bounded intern table: `intern(s)` is a string equal to `s`, the same object for equal strings while both are in the table. */
export class StringTable {
  private readonly table = new Map<string, string>();

  /** At most `limit` strings are kept; when full, the table starts afresh (what was handed out stays valid). */
  constructor(private readonly limit = 4096) {}

  intern(s: string): string {
    const hit = this.table.get(s);
    if (hit !== undefined) return hit;
    if (this.table.size >= this.limit) this.table.clear();
    // normalize() returns the text as one flat string (the tree of a concatenation goes);
    // a text it would change (not in NFC) is copied through JSON instead, unchanged.
    let flat = s.normalize();
    if (flat !== s) flat = JSON.parse(JSON.stringify(s)) as string;
    this.table.set(flat, flat);
    return flat;
  }

  get size(): number {
    return this.table.size;
  }
}
