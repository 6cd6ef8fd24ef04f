// Reading manifests from files, directories and standard input (`-f -`): YAML or JSON,
// multi-document or kubectl List, every file of a directory in name order.
//
// One bad object never sinks the rest: every object that cannot be used is an error
// (file, document, object, field, why) and is left out; the others load. Kinds topoqueue
// does not use (ConfigMap, Deployment, Kustomization...) are skipped with one note per
// kind. A second object with the kind, namespace and name of an earlier one is refused.
// What would crash a parser (binary files, symlink loops, objects over Kubernetes' size
// limits, deep nesting) is refused with a message.

import { lstatSync, readdirSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { InputError, formatWhere, type Where } from '../api/errors.ts';
import { parseManifests, type ParsedObject } from '../api/manifest.ts';
import type { KObject } from '../api/objects.ts';
import { NodeAsWritten } from '../api/node-check.ts';
import { knownKinds, parseObject } from '../api/schemas.ts';

const MANIFEST = /\.(ya?ml|json)$/i;

/** `-f -`: the manifests come from standard input. */
export const STDIN = '-';
const STDIN_NAME = '<stdin>';

/** Kubernetes' limits: the total size of an object's annotations, and of one object. */
export const MAX_ANNOTATIONS_BYTES = 256 * 1024;
export const MAX_OBJECT_BYTES = 1.5 * 1024 * 1024;

export interface Refused {
  /** The object as written (it did not pass its schema). */
  object: KObject;
  where: Where;
  errors: InputError[];
}

export interface Loaded {
  objects: ParsedObject[];
  errors: InputError[];
  /** Things worth telling the user: kinds skipped, one note per kind. */
  notes: string[];
  /** Objects with a name that failed their kind's checks (a subset of what `errors` names). */
  refused: Refused[];
}

export interface LoadOptions {
  /** Today's all-or-nothing: kinds topoqueue does not use are errors, not notes. */
  strict?: boolean;
  /** Reads standard input (tests give their own). */
  readStdin?: () => string;
}

function expand(path: string, out: string[], errors: InputError[], seen: Set<string>, top: boolean): void {
  if (path === STDIN && top) {
    out.push(STDIN);
    return;
  }
  let st;
  try {
    st = statSync(path);
  } catch (e) {
    errors.push(new InputError({ file: path }, fileProblem(path, e as NodeJS.ErrnoException)));
    return;
  }
  if (!st.isDirectory()) {
    out.push(path);
    return;
  }
  let real: string;
  try {
    real = realpathSync(path);
  } catch (e) {
    errors.push(new InputError({ file: path }, fileProblem(path, e as NodeJS.ErrnoException)));
    return;
  }
  if (seen.has(real)) {
    errors.push(new InputError({ file: path }, `symlink loop: this directory is ${real}, already being read; it is skipped`));
    return;
  }
  seen.add(real);
  const before = out.length;
  const errorsBefore = errors.length;
  let names: string[];
  try {
    names = readdirSync(path).sort();
  } catch (e) {
    errors.push(new InputError({ file: path }, `cannot read the directory: ${(e as Error).message}`));
    return;
  }
  for (const name of names) {
    const p = join(path, name);
    let isDir: boolean;
    try {
      isDir = statSync(p).isDirectory();
    } catch (e) {
      // Only a file that looks like a manifest is worth an error; other broken entries are not ours.
      if (MANIFEST.test(name) || isSymlink(p)) errors.push(new InputError({ file: p }, fileProblem(p, e as NodeJS.ErrnoException)));
      continue;
    }
    if (isDir) expand(p, out, errors, seen, false);
    else if (MANIFEST.test(name)) out.push(p);
  }
  seen.delete(real);
  if (top && out.length === before && errors.length === errorsBefore) {
    errors.push(new InputError({ file: path }, 'the directory holds no manifest (no .yaml, .yml or .json file)'));
  }
}

function isSymlink(p: string): boolean {
  try {
    return lstatSync(p).isSymbolicLink();
  } catch {
    return false;
  }
}

function fileProblem(path: string, e: NodeJS.ErrnoException): string {
  if (e.code === 'ELOOP') return 'symlink loop: the link points back at itself';
  if (e.code === 'ENOENT' && isSymlink(path)) return 'dangling symlink: its target does not exist';
  if (e.code === 'ENOENT') return 'no such file or directory';
  return `cannot read: ${e.message}`;
}

/** A file that is not text: a NUL byte, or bytes that are not UTF-8. */
function binaryExcerpt(buf: Buffer): string | undefined {
  const head = buf.subarray(0, 8192);
  const text = head.toString('utf8');
  if (!head.includes(0) && !text.includes('\uFFFD')) return undefined;
  const shown = [...buf.subarray(0, 16)]
    .map((b) => (b >= 0x20 && b < 0x7f ? String.fromCharCode(b) : `\\x${b.toString(16).padStart(2, '0')}`))
    .join('');
  return shown;
}

function readText(file: string, options: LoadOptions, errors: InputError[]): string | undefined {
  let buf: Buffer;
  try {
    buf = file === STDIN ? Buffer.from(options.readStdin ? options.readStdin() : readFileSync(0)) : readFileSync(file);
  } catch (e) {
    errors.push(new InputError({ file: file === STDIN ? STDIN_NAME : file }, `cannot read: ${(e as Error).message}`));
    return undefined;
  }
  const binary = binaryExcerpt(buf);
  if (binary !== undefined) {
    errors.push(
      new InputError(
        { file: file === STDIN ? STDIN_NAME : file },
        `not a YAML or JSON text (binary data; it starts with "${binary}"); the file is skipped`,
      ),
    );
    return undefined;
  }
  return buf.toString('utf8');
}

/** Kubernetes' size limits, measured on the object as JSON (the API server's measure). */
function sizeProblem(object: KObject, where: Where): InputError | undefined {
  const annotations = object.metadata?.annotations;
  if (annotations && typeof annotations === 'object') {
    let bytes = 0;
    for (const [k, v] of Object.entries(annotations)) bytes += Buffer.byteLength(k) + (typeof v === 'string' ? Buffer.byteLength(v) : 0);
    if (bytes > MAX_ANNOTATIONS_BYTES)
      return new InputError(
        { ...where, field: 'metadata.annotations' },
        `annotations take ${bytes} bytes; Kubernetes allows at most 262144 (256 KiB) in total`,
      );
  }
  if (jsonBytesAtMost(object, MAX_OBJECT_BYTES) >= 0) return undefined;
  const size = Buffer.byteLength(JSON.stringify(object));
  if (size > MAX_OBJECT_BYTES)
    return new InputError(where, `the object takes ${size} bytes; Kubernetes allows at most 1572864 (1.5 MiB) per object`);
  return undefined;
}

/**
 * `budget` minus an upper bound of the bytes of `v` as JSON (UTF-8), or a negative number
 * once the bound passes `budget`. A string counts 6 bytes per UTF-16 unit (`\u0000`, the
 * longest escape), a number 24: loose, but it spares a JSON.stringify of every object of a
 * large list whose objects are all far below Kubernetes' limit.
 */
function jsonBytesAtMost(v: unknown, budget: number): number {
  if (typeof v === 'string') return budget - 2 - 6 * v.length;
  if (v === null || typeof v !== 'object') return budget - 24;
  budget -= 2;
  if (Array.isArray(v)) {
    for (const x of v) if ((budget = jsonBytesAtMost(x, budget - 1)) < 0) return budget;
    return budget;
  }
  for (const k in v) {
    budget -= 4 + 6 * k.length;
    if ((budget = jsonBytesAtMost((v as Record<string, unknown>)[k], budget)) < 0) return budget;
  }
  return budget;
}

/** `Kind` with its API group: a Volcano Job and a batch Job are different kinds. */
function identity(o: KObject): string {
  const group = o.apiVersion.includes('/') ? o.apiVersion.slice(0, o.apiVersion.lastIndexOf('/')) : '';
  return `${o.kind}.${group}/${o.metadata.namespace ?? ''}/${o.metadata.name}`;
}

/** Identifies an object by where it was read (file, document, object): errors name it so. */
export function whereKey(w: Where): string {
  return `${w.file ?? ''}\u0000${w.document ?? ''}\u0000${w.object ?? ''}`;
}

/** Loads and validates every object; objects with errors are left out and reported. */
export function loadManifests(paths: readonly string[], options: LoadOptions = {}): Loaded {
  const files: string[] = [];
  const errors: InputError[] = [];
  const notes: string[] = [];
  const refused: Refused[] = [];
  for (const p of paths) expand(p, files, errors, new Set(), true);
  const used = new Set(knownKinds().map((k) => k.kind));
  const skipKind = options.strict ? undefined : (kind: string) => !used.has(kind);
  const skipped = new Map<string, { count: number; first: Where }>();
  const objects: ParsedObject[] = [];
  const byIdentity = new Map<string, Where>();
  // The parsed objects are ours: a Node the schema would not change is kept, not copied.
  const asWritten = new NodeAsWritten();
  let documents = 0;
  for (const file of files) {
    const text = readText(file, options, errors);
    if (text === undefined) continue;
    const name = file === STDIN ? STDIN_NAME : file;
    const parsed = parseManifests(text, name, { skipKind });
    documents += parsed.objects.length + parsed.errors.length + parsed.skipped.length;
    errors.push(...parsed.errors);
    for (const s of parsed.skipped) {
      const key = `${s.kind} (${s.apiVersion || 'no apiVersion'})`;
      const seen = skipped.get(key);
      if (seen) seen.count++;
      else skipped.set(key, { count: 1, first: s.where });
    }
    for (const p of parsed.objects) {
      const tooBig = sizeProblem(p.object, p.where);
      if (tooBig) {
        errors.push(tooBig);
        continue;
      }
      const r = parseObject(p.object, p.where, { asWritten });
      if (r.errors.length > 0) {
        errors.push(...r.errors);
        refused.push({ object: p.object, where: p.where, errors: r.errors });
        continue;
      }
      if (!r.object) continue;
      const id = identity(r.object);
      const first = byIdentity.get(id);
      if (first) {
        const e = new InputError(
          p.where,
          `a second ${r.object.kind} with this name (the first is at ${formatWhere(first)}); the second is refused`,
        );
        errors.push(e);
        continue;
      }
      byIdentity.set(id, p.where);
      objects.push({ object: r.object, where: p.where });
    }
  }
  for (const [key, s] of skipped)
    notes.push(`skipped ${s.count} ${key} object(s), first at ${formatWhere(s.first)}: topoqueue does not use this kind`);
  if (files.length > 0 && documents === 0 && errors.length === 0) {
    errors.push(
      new InputError({ file: files.map((f) => (f === STDIN ? STDIN_NAME : f)).join(', ') }, 'the input is empty: no object in it'),
    );
  }
  return { objects, errors, notes, refused };
}
