// Equal parts of stored objects kept once (hash-consing). The store freezes what it keeps, so
// two stored objects may share any part that is equal in content: 15,000 Workloads of a few
// shapes carry a few distinct pod templates, a few hundred distinct conditions (one per
// reason, ClusterQueue and second) and a few thousand distinct admissions (one per node and
// count), each of them otherwise a copy of 10 to 20 small objects.
//
// 1. below an object's second level (its `metadata`, `spec`, `status` stay its own: caches
//    and write checks key on them by identity), every new (unfrozen) part is replaced, leaves
//    first, by the equal part already kept, or kept and frozen; strings too;
// 2. a part is known by a short key: its field names and its children's ids (a kept part's
//    number) or primitive values, so no part is written out in full;
// 3. the table is bounded: two generations of at most `limit` parts each; a part asked for
//    moves to the young one, and when that is full the old one is dropped. What was handed
//    out stays valid (parts no longer kept are only no longer shared).

type Part = object | string;

/** Metadata fields unique to one object (or one version): not kept, they would only fill the table. */
const IDENTITY: ReadonlySet<string> = new Set(['name', 'uid', 'resourceVersion']);

export class SharedValues {
  private young = new Map<string, Part>();
  private old = new Map<string, Part>();
  /** The key of each kept part (objects: their children are named by these). */
  private youngIds = new Map<object, string>();
  private oldIds = new Map<object, string>();
  private nextId = 0;

  constructor(private readonly limit = 2048) {}

  /** Shares the parts of `obj` below its second level with equal kept ones (`obj` and its children stay its own). */
  shareBelowSecondLevel(obj: object): void {
    if (Object.isFrozen(obj)) return;
    const o = obj as Record<string, unknown>;
    for (const k in o) {
      const v = o[k];
      if (typeof v === 'string') o[k] = this.string(v);
      else if (v !== null && typeof v === 'object' && !Object.isFrozen(v)) {
        const child = v as Record<string, unknown>;
        const identity = k === 'metadata' ? IDENTITY : undefined;
        for (const k2 in child) {
          const x = child[k2];
          if (x === null || (typeof x !== 'object' && typeof x !== 'string') || identity?.has(k2)) continue;
          child[k2] = this.shared(x).value;
        }
      }
    }
  }

  /** The kept string equal to `s` (or `s`, now kept). */
  string(s: string): string {
    return this.lookup('s' + s, s) as string;
  }

  /** How many parts are kept (both generations). */
  get size(): number {
    return this.young.size + this.old.size;
  }

  /** The kept value equal to `v`, with its key; key undefined for what cannot be shared (not JSON-shaped). */
  private shared(v: unknown): { value: unknown; key: string | undefined } {
    if (typeof v === 'string') return { value: this.string(v), key: 's' + v.length + ':' + v };
    if (v === null || typeof v !== 'object') return { value: v, key: primitiveKey(v) };
    const frozen = Object.isFrozen(v);
    if (frozen) {
      const known = this.idOf(v);
      if (known !== undefined) return { value: v, key: known };
    }
    const isArray = Array.isArray(v);
    if (!isArray && Object.getPrototypeOf(v) !== Object.prototype) return { value: v, key: undefined };
    const o = v as Record<string, unknown>;
    let key = isArray ? '[' : '{';
    let shareable = true;
    for (const k in o) {
      const c = this.shared(o[k]);
      if (!frozen && c.value !== o[k]) o[k] = c.value;
      if (c.key === undefined) shareable = false;
      else if (shareable) key += isArray ? c.key : k.length + ':' + k + c.key;
    }
    if (!shareable) {
      if (!frozen) Object.freeze(v);
      return { value: v, key: undefined };
    }
    const kept = this.lookup(key + (isArray ? ']' : '}'), v) as object;
    if (kept === v && !frozen) Object.freeze(v);
    return { value: kept, key: this.idOf(kept)! };
  }

  /** The part kept under `key`, or `part`, kept now; either is in the young generation afterwards. */
  private lookup(key: string, part: Part): Part {
    const hit = this.young.get(key);
    if (hit !== undefined) return hit;
    const kept = this.old.get(key) ?? part;
    this.roll();
    this.young.set(key, kept);
    if (typeof kept === 'object') this.youngIds.set(kept, this.oldIds.get(kept) ?? '#' + (this.nextId++).toString(36) + ',');
    return kept;
  }

  /** The id of a kept part (one asked for from the old generation keeps its id in the young one). */
  private idOf(o: object): string | undefined {
    const id = this.youngIds.get(o);
    if (id !== undefined) return id;
    const old = this.oldIds.get(o);
    if (old !== undefined) {
      this.roll();
      this.youngIds.set(o, old);
    }
    return old;
  }

  /** A full young generation becomes the old one (the old one is dropped). */
  private roll(): void {
    if (this.young.size < this.limit && this.youngIds.size < 2 * this.limit) return;
    this.old = this.young;
    this.oldIds = this.youngIds;
    this.young = new Map();
    this.youngIds = new Map();
  }
}

function primitiveKey(v: unknown): string | undefined {
  switch (typeof v) {
    case 'number':
      return 'n' + String(v) + ';';
    case 'boolean':
      return v ? 't' : 'f';
    default:
      return v === null ? 'z' : undefined;
  }
}
