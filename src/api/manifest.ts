// Reading manifests: text in, Kubernetes objects out, each with where it came from.
//
// 1. split the text into YAML documents (JSON is YAML, so a JSON object or array parses
//    the same way and keeps its line numbers). JSON goes through JSON.parse, YAML through
//    js-yaml when it reads the text as the yaml package would (yaml-fast.ts), each with the
//    start lines of documents and List items; anything else, and any text with an error,
//    through the yaml package, whose errors name line and column;
// 2. a malformed document becomes one error naming its line; the other documents still
//    parse; empty documents are skipped;
// 3. a document is an object, a JSON array of objects, or a kubectl List (`kind: List`,
//    or any `*List` kind with `items`), whose items become objects of their own;
// 4. every object must have apiVersion, kind and metadata.name.
// Shapes per kind are checked later, by schemas.ts.

import { LineCounter, isMap, isSeq, parseAllDocuments, type Document, type Node as YamlNode } from 'yaml';
import { InputError, type Where } from './errors.ts';
import { readYamlFast, type FastYaml } from './yaml-fast.ts';
import type { KObject } from './objects.ts';
import { joinField } from './topology-request.ts';
import { isRecord } from './values.ts';

export interface ParsedObject {
  object: KObject;
  /** file, 1-based document index, line where the object starts, `Kind/ns/name`, and
   *  for List items the field `items[i]` (a prefix for every field path of this object). */
  where: Where;
}

/** `Kind/namespace/name`, or `Kind/name` for objects without a namespace. */
export function objectRef(obj: { kind?: unknown; metadata?: { name?: unknown; namespace?: unknown } }): string {
  const kind = typeof obj.kind === 'string' && obj.kind !== '' ? obj.kind : '<no kind>';
  const name = typeof obj.metadata?.name === 'string' && obj.metadata.name !== '' ? obj.metadata.name : '<no name>';
  const ns = obj.metadata?.namespace;
  return typeof ns === 'string' && ns !== '' ? `${kind}/${ns}/${name}` : `${kind}/${name}`;
}

/** An object of a kind topoqueue does not use (ConfigMap, Deployment, Kustomization...). */
export interface SkippedObject {
  apiVersion: string;
  kind: string;
  where: Where;
}

export interface ParseOptions {
  /** Kinds for which this returns true are set aside in `skipped`, unchecked. */
  skipKind?: (kind: string) => boolean;
  /** `yaml`: YAML through the yaml package only, never js-yaml (tests compare the two ways). */
  parser?: 'auto' | 'yaml';
}

/** The fast read (js-yaml) could not place something: the yaml package reads the text again. */
class NeedsFullParser extends Error {}

/** Stands for a node of the fast read, whose lines come from its element-lines map. */
const FAST = Symbol('fast');

/** Deepest nesting of maps and lists accepted in an object (an API server refuses deeper ones too). */
export const MAX_NESTING_DEPTH = 100;

/** Parses every object in a YAML (multi-document) or JSON text. Never throws. */
export function parseManifests(
  text: string,
  file: string,
  options: ParseOptions = {},
): { objects: ParsedObject[]; errors: InputError[]; skipped: SkippedObject[] } {
  const objects: ParsedObject[] = [];
  const errors: InputError[] = [];
  const skipped: SkippedObject[] = [];
  // JSON through JSON.parse (several times faster than the YAML parser on large lists);
  // anything it does not take (a syntax error, for one) goes the YAML way, whose errors
  // name line and column.
  if (/^\s*[[{]/.test(text)) {
    const fast = parseJsonList(text);
    if (fast !== undefined) {
      for (const { value, line, field } of fast)
        addObject(value, { file, document: 1, line, ...(field !== undefined ? { field } : {}) }, null);
      return { objects, errors, skipped };
    }
  }
  // YAML through js-yaml when it reads the text as the yaml package would (yaml-fast.ts);
  // otherwise, or on any problem, the yaml package reads it all again and names the line.
  let fastLines: Map<unknown[], number[]> | undefined;
  const lines = new LineCounter();
  const lineAt = (offset: number) => lines.linePos(offset).line;
  const fast = options.parser === 'yaml' ? undefined : readYamlFast(text);
  if (fast !== undefined) {
    try {
      readFast(fast);
      return { objects, errors, skipped };
    } catch (e) {
      if (!(e instanceof NeedsFullParser)) throw e;
      objects.length = 0;
      errors.length = 0;
      skipped.length = 0;
    }
  }
  readYaml();
  return { objects, errors, skipped };

  function readFast(read: FastYaml): void {
    fastLines = read.elementLines;
    read.documents.forEach(({ value, line, flowSequence }, i) => {
      const document = i + 1;
      if (value === null) return;
      const at: Where = { file, document, line };
      // No depth check: js-yaml refuses nesting of 100 (its maxDepth; one level per
      // collection at least), and a refusal sends the text to the yaml way, which names it.
      if (Array.isArray(value) && flowSequence) {
        const starts = elementLinesOf(value);
        value.forEach((item, j) => addObject(item, { file, document, line: starts[j], field: `[${j}]` }, FAST));
        return;
      }
      if (!isRecord(value)) {
        const what = Array.isArray(value) ? 'a YAML sequence (a JSON array of objects is accepted)' : describe(value);
        errors.push(new InputError(at, `a document must be a mapping (an object with apiVersion, kind and metadata), got ${what}`));
        return;
      }
      addObject(value, at, FAST);
    });
  }

  /** Start lines of an array's elements from the fast read; the yaml package's when it has none. */
  function elementLinesOf(items: unknown[]): number[] {
    const starts = fastLines?.get(items);
    if (starts === undefined || starts.length !== items.length) throw new NeedsFullParser();
    return starts;
  }

  function readYaml(): void {
    const docs = parseAllDocuments(text, { lineCounter: lines });
    const syntax = /\.json$/i.test(file) ? 'JSON' : 'YAML';

    Array.from(docs).forEach((doc: Document.Parsed, i) => {
      const document = i + 1;
      const contents = doc.contents as YamlNode | null;
      const start = contents?.range ? lineAt(contents.range[0]) : lineAt(doc.range[0]);
      const at: Where = { file, document, line: start };

      if (doc.errors.length > 0) {
        const e = doc.errors[0];
        const line = e.linePos?.[0].line ?? start;
        const column = e.linePos?.[0].col;
        if (/Maximum call stack size exceeded/.test(e.message)) {
          errors.push(new InputError({ file, document }, `nested deeper than ${MAX_NESTING_DEPTH} levels; the document is skipped`));
          return;
        }
        const more =
          doc.errors.length > 1 ? ` (and ${doc.errors.length - 1} more problem${doc.errors.length > 2 ? 's' : ''} after it)` : '';
        const col = column !== undefined ? `, column ${column}` : '';
        errors.push(
          new InputError({ file, document, line }, `malformed ${syntax}${col}: ${yamlReason(e.message)}${more}; the document is skipped`),
        );
        return;
      }
      if (contents === null || isEmptyScalar(contents)) return;

      let value: unknown;
      try {
        value = doc.toJS({ maxAliasCount: 1000 });
      } catch (e) {
        const deep = e instanceof RangeError && /call stack/.test(e.message);
        errors.push(
          new InputError(
            at,
            deep
              ? `nested deeper than ${MAX_NESTING_DEPTH} levels; the document is skipped`
              : `cannot read the document: ${(e as Error).message}`,
          ),
        );
        return;
      }
      if (nestingDepth(value) > MAX_NESTING_DEPTH) {
        errors.push(new InputError(at, `nested deeper than ${MAX_NESTING_DEPTH} levels; the document is skipped`));
        return;
      }

      if (isSeq(contents) && contents.flow) {
        // A JSON array of objects: each element is read like a List item.
        contents.items.forEach((item, j) => {
          const line = (item as YamlNode | null)?.range ? lineAt((item as YamlNode).range![0]) : start;
          addObject((value as unknown[])[j], { file, document, line, field: `[${j}]` }, item as YamlNode | null);
        });
        return;
      }
      if (!isMap(contents)) {
        const what = isSeq(contents) ? 'a YAML sequence (a JSON array of objects is accepted)' : describe(value);
        errors.push(new InputError(at, `a document must be a mapping (an object with apiVersion, kind and metadata), got ${what}`));
        return;
      }
      addObject(value, at, contents);
    });
  }

  function addObject(
    value: unknown,
    where: Where,
    node: YamlNode | typeof FAST | null,
    defaults?: { apiVersion: string; kind: string },
  ): void {
    if (!isRecord(value)) {
      errors.push(new InputError(where, `expected an object with apiVersion, kind and metadata, got ${describe(value)}`));
      return;
    }
    if (defaults !== undefined) {
      // Typed lists from the API (e.g. NodeList) leave apiVersion and kind off their items.
      if (value.apiVersion === undefined) value.apiVersion = defaults.apiVersion;
      if (value.kind === undefined) value.kind = defaults.kind;
    }
    const kind = value.kind;
    if (typeof kind === 'string' && (kind === 'List' || kind.endsWith('List')) && Array.isArray(value.items)) {
      addList(value, kind, where, node);
      return;
    }

    const here: Where = { ...where, object: objectRef(value as Partial<KObject>) };
    if (typeof kind === 'string' && options.skipKind?.(kind) === true) {
      skipped.push({ apiVersion: typeof value.apiVersion === 'string' ? value.apiVersion : '', kind, where: here });
      return;
    }
    const field = (f: string) => ({ ...here, field: joinField(where.field, f) });
    let ok = true;
    const need = (f: string, v: unknown, what: string) => {
      if (typeof v === 'string' && v !== '') return;
      ok = false;
      errors.push(
        new InputError(field(f), v === undefined ? `${f} is required: ${what}` : `${f} must be a non-empty string, got ${describe(v)}`),
      );
    };
    need('apiVersion', value.apiVersion, 'e.g. "v1" or "kueue.x-k8s.io/v1beta2"');
    need('kind', value.kind, 'e.g. "Node" or "Topology"');
    const metadata = value.metadata;
    if (!isRecord(metadata)) {
      ok = false;
      errors.push(
        new InputError(
          field('metadata'),
          metadata === undefined ? 'metadata is required, with at least a name' : `metadata must be an object, got ${describe(metadata)}`,
        ),
      );
    } else {
      const hint = metadata.generateName !== undefined ? ' (generateName is not supported in manifests: give a name)' : '';
      need('metadata.name', metadata.name, `the object's name${hint}`);
    }
    if (ok) objects.push({ object: value as unknown as KObject, where: here });
  }

  function addList(list: Record<string, unknown>, kind: string, where: Where, node: YamlNode | typeof FAST | null): void {
    const items = list.items as unknown[];
    const defaults = listItemDefaults(list, kind);
    if (node === FAST) {
      const starts = elementLinesOf(items);
      items.forEach((item, j) =>
        addObject(item, { ...where, line: starts[j], field: joinField(where.field, `items[${j}]`) }, FAST, defaults),
      );
      return;
    }
    const itemNodes = node !== null && isMap(node) ? node.get('items', true) : undefined;
    items.forEach((item, j) => {
      const itemNode = isSeq(itemNodes) ? (itemNodes.items[j] as YamlNode | null) : null;
      const line = itemNode?.range ? lineAt(itemNode.range[0]) : where.line;
      addObject(item, { ...where, line, field: joinField(where.field, `items[${j}]`) }, itemNode, defaults);
    });
  }
}

/** Typed lists from the API (e.g. NodeList) leave apiVersion and kind off their items. */
function listItemDefaults(list: Record<string, unknown>, kind: string): { apiVersion: string; kind: string } | undefined {
  return kind !== 'List' && typeof list.apiVersion === 'string'
    ? { apiVersion: list.apiVersion, kind: kind.slice(0, -'List'.length) }
    : undefined;
}

/**
 * A JSON text as objects with their start lines, or undefined to take the YAML way: a
 * JSON array of objects (`[i]`), or one object, or a List (`items[i]`, typed-list defaults
 * applied). Lines come from one scan that records where each element of the outer array
 * (or of the top object's `items`) starts.
 */
function parseJsonList(text: string): { value: unknown; line: number; field?: string }[] | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (nestingDepth(value) > MAX_NESTING_DEPTH) return undefined;
  const starts = elementLines(text);
  if (Array.isArray(value)) {
    if (starts.length !== value.length) return undefined;
    return value.map((v, i) => ({ value: v, line: starts[i]!, field: `[${i}]` }));
  }
  if (!isRecord(value)) return undefined;
  const kind = value.kind;
  const first = text.slice(0, text.search(/\S/) + 1).split('\n').length;
  if (typeof kind === 'string' && (kind === 'List' || kind.endsWith('List')) && Array.isArray(value.items)) {
    const items = value.items as unknown[];
    if (
      starts.length !== items.length ||
      items.some((i) => isRecord(i) && typeof i.kind === 'string' && i.kind.endsWith('List') && Array.isArray(i.items))
    )
      return undefined;
    const defaults = listItemDefaults(value, kind);
    return items.map((item, i) => {
      if (defaults !== undefined && isRecord(item)) {
        if (item.apiVersion === undefined) item.apiVersion = defaults.apiVersion;
        if (item.kind === undefined) item.kind = defaults.kind;
      }
      return { value: item, line: starts[i]!, field: `items[${i}]` };
    });
  }
  return [{ value, line: first }];
}

/**
 * Start lines of the elements of the outer array, or of the array under the top object's
 * `items` key, in one pass over the text (strings skipped, escapes honoured).
 */
function elementLines(text: string): number[] {
  const out: number[] = [];
  const stack: string[] = []; // '[' or '{'
  let line = 1;
  let key: string | undefined; // the last key read directly in the top object
  let expectKey = false;
  let itemsArray = false; // the array at depth 2 is the top object's `items`
  let awaitingValue = true; // the next token starts a value of the innermost array
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 10) {
      line++;
      continue;
    }
    if (c === 32 || c === 9 || c === 13) continue;
    const depth = stack.length;
    const inTarget = (depth === 1 && stack[0] === '[') || (depth === 2 && stack[0] === '{' && stack[1] === '[' && itemsArray);
    if (inTarget && awaitingValue && c !== 93 /* ] */) out.push(line);
    awaitingValue = false;
    if (c === 34 /* " */) {
      let j = i + 1;
      while (j < text.length && text.charCodeAt(j) !== 34) j += text.charCodeAt(j) === 92 ? 2 : 1;
      if (depth === 1 && stack[0] === '{' && expectKey) key = text.slice(i + 1, j);
      expectKey = false;
      i = j;
    } else if (c === 91 /* [ */ || c === 123 /* { */) {
      if (c === 91 && depth === 1 && stack[0] === '{') itemsArray = key === 'items';
      stack.push(c === 91 ? '[' : '{');
      awaitingValue = c === 91;
      expectKey = c === 123;
    } else if (c === 93 || c === 125) {
      stack.pop();
    } else if (c === 44 /* , */) {
      awaitingValue = stack[stack.length - 1] === '[';
      expectKey = stack[stack.length - 1] === '{';
    }
  }
  return out;
}

/**
 * Depth of nested maps and lists, exact up to MAX_NESTING_DEPTH and some larger number
 * beyond: the recursion stops one level past the limit, so a deep input cannot overflow
 * the stack (and nothing is allocated on the way).
 */
export function nestingDepth(value: unknown): number {
  return depthBelow(value, 0);
}

function depthBelow(v: unknown, above: number): number {
  if (v === null || typeof v !== 'object') return 0;
  if (above >= MAX_NESTING_DEPTH) return 1;
  let deepest = 0;
  if (Array.isArray(v)) {
    for (const c of v) {
      if (c === null || typeof c !== 'object') continue;
      const d = depthBelow(c, above + 1);
      if (d > deepest) deepest = d;
      if (above + 1 + deepest > MAX_NESTING_DEPTH) break;
    }
  } else {
    for (const k in v) {
      const c = (v as Record<string, unknown>)[k];
      if (c === null || typeof c !== 'object') continue;
      const d = depthBelow(c, above + 1);
      if (d > deepest) deepest = d;
      if (above + 1 + deepest > MAX_NESTING_DEPTH) break;
    }
  }
  return deepest + 1;
}

/** The yaml package's message without its own position and source excerpt (Where has them). */
function yamlReason(message: string): string {
  return message.split('\n')[0].replace(/ at line \d+, column \d+:?$/, '');
}

function isEmptyScalar(node: YamlNode): boolean {
  return !isMap(node) && !isSeq(node) && (node as { value?: unknown }).value === null;
}

function describe(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'a list';
  if (typeof v === 'object') return 'an object';
  if (typeof v === 'string') return `the string ${JSON.stringify(v)}`;
  return `the ${typeof v} ${String(v)}`;
}
