// Nodes as written: a check that a parsed Node object is exactly what parseObject would
// return for it, so a loader that owns the object can keep it instead of a copy.
//
// The Node schema (schemas.ts `node`, over schema-parts.ts) copies every object twice
// (without nulls, then zod's output) and runs its refinements on each Node: for a List of
// 110,000 Nodes that is about a second of CPU and a second copy of every Node in memory.
// Nodes are nearly all alike, so this check passes the common case in a few microseconds
// with the same rules, remembering the label keys and quantities it has already accepted.
//
// It only ever accepts: anything it does not know to be accepted unchanged (a null
// anywhere, a number where the schema turns it into a string, a namespace, owner
// references, a field of the wrong type, any rule broken) goes to the schema, which writes
// the errors. node-check.test.ts holds the two to the same answers: keep them together
// when the Node schema changes.

import { isDnsSubdomain } from './names.ts';
import { quantityProblem, TAINT_EFFECTS } from './schema-parts.ts';
import { labelKeyProblem, labelValueProblem } from './topology-request.ts';
import { isRecord } from './values.ts';

const META_STRINGS: ReadonlySet<string> = new Set(['uid', 'generateName', 'creationTimestamp', 'resourceVersion', 'deletionTimestamp']);
const EFFECTS: ReadonlySet<string> = new Set(TAINT_EFFECTS);

/** One per load: remembers what it has accepted (label keys, quantities by resource). */
export class NodeAsWritten {
  private readonly labelKeys = new Set<string>();
  private readonly quantities = new Map<string, Set<string>>();

  /** True when parseObject would return a deep-equal copy of `obj`, a v1 Node, with no errors. */
  accepts(obj: Record<string, unknown>): boolean {
    for (const k in obj) {
      if (!Object.hasOwn(obj, k)) continue;
      const v = obj[k];
      switch (k) {
        case 'apiVersion':
        case 'kind':
          if (typeof v !== 'string') return false;
          break;
        case 'metadata':
          if (!this.metadata(v)) return false;
          break;
        case 'spec':
          if (!this.spec(v)) return false;
          break;
        case 'status':
          if (!this.status(v)) return false;
          break;
        default:
          if (!noNull(k, v)) return false;
      }
    }
    return isRecord(obj.metadata);
  }

  private metadata(m: unknown): boolean {
    if (!isRecord(m) || typeof m.name !== 'string' || !isDnsSubdomain(m.name)) return false;
    for (const k in m) {
      if (!Object.hasOwn(m, k)) continue;
      const v = m[k];
      if (k === 'name') continue;
      if (META_STRINGS.has(k)) {
        if (typeof v !== 'string') return false;
      } else if (k === 'labels') {
        if (!isRecord(v)) return false;
        for (const lk in v) {
          const lv = v[lk];
          if (!Object.hasOwn(v, lk) || typeof lv !== 'string' || !this.labelKey(lk) || labelValueProblem(lv) !== undefined) return false;
        }
      } else if (k === 'annotations') {
        if (!isRecord(v)) return false;
        for (const ak in v) if (!Object.hasOwn(v, ak) || typeof v[ak] !== 'string' || !this.labelKey(ak)) return false;
      } else if (k === 'finalizers') {
        if (!Array.isArray(v) || !v.every((f) => typeof f === 'string')) return false;
      } else if (k === 'namespace' || k === 'ownerReferences') {
        return false; // rare on a Node: the schema decides
      } else if (!noNull(k, v)) return false;
    }
    return true;
  }

  private spec(s: unknown): boolean {
    if (!isRecord(s)) return false;
    for (const k in s) {
      if (!Object.hasOwn(s, k)) continue;
      const v = s[k];
      if (k === 'unschedulable') {
        if (typeof v !== 'boolean') return false;
      } else if (k === 'taints') {
        if (!Array.isArray(v) || !v.every((t) => this.taint(t))) return false;
      } else if (!noNull(k, v)) return false;
    }
    return true;
  }

  private taint(t: unknown): boolean {
    if (!isRecord(t) || typeof t.key !== 'string' || !this.labelKey(t.key)) return false;
    if (typeof t.effect !== 'string' || !EFFECTS.has(t.effect)) return false;
    for (const k in t) {
      if (!Object.hasOwn(t, k) || k === 'key' || k === 'effect') continue;
      if (k === 'value' ? typeof t[k] !== 'string' : !noNull(k, t[k])) return false;
    }
    return true;
  }

  private status(s: unknown): boolean {
    if (!isRecord(s)) return false;
    for (const k in s) {
      if (!Object.hasOwn(s, k)) continue;
      const v = s[k];
      if (k === 'allocatable' || k === 'capacity') {
        if (!this.resources(v)) return false;
      } else if (k === 'conditions') {
        if (!Array.isArray(v) || !v.every(condition)) return false;
      } else if (!noNull(k, v)) return false;
    }
    return true;
  }

  /** A resource list of quantity strings (a number is turned into a string by the schema: not as written). */
  private resources(r: unknown): boolean {
    if (!isRecord(r)) return false;
    for (const name in r) {
      const q = r[name];
      if (!Object.hasOwn(r, name) || typeof q !== 'string' || name === '__proto__') return false;
      let seen = this.quantities.get(name);
      if (seen?.has(q)) continue;
      if (quantityProblem(name, q) !== undefined) return false;
      if (seen === undefined) this.quantities.set(name, (seen = new Set()));
      if (seen.size < 10_000) seen.add(q);
    }
    return true;
  }

  private labelKey(k: string): boolean {
    if (this.labelKeys.has(k)) return true;
    if (k === '__proto__' || labelKeyProblem(k) !== undefined) return false;
    if (this.labelKeys.size < 10_000) this.labelKeys.add(k);
    return true;
  }
}

function condition(c: unknown): boolean {
  if (!isRecord(c) || typeof c.type !== 'string' || c.type === '' || typeof c.status !== 'string') return false;
  for (const k in c) if (Object.hasOwn(c, k) && k !== 'type' && k !== 'status' && !noNull(k, c[k])) return false;
  return true;
}

/** No null anywhere in `v` (the schema drops null fields, so the object would change), and no `__proto__` key. */
function noNull(key: string, v: unknown): boolean {
  if (key === '__proto__' || v === null) return false;
  if (typeof v !== 'object') return true;
  if (Array.isArray(v)) {
    for (const x of v) if (!noNull('', x)) return false;
    return true;
  }
  for (const k in v) if (Object.hasOwn(v, k) && !noNull(k, (v as Record<string, unknown>)[k])) return false;
  return true;
}
