// The fast way to read YAML manifests: js-yaml, about ten times faster than the yaml
// package on large files (a 57 MB List of 110,000 Nodes: ~2.5 s instead of ~25 s of CPU,
// a third of the peak RSS; bench/input-bench.ts), read exactly as the yaml package reads it
// (YAML 1.2 core schema), or not at all.
//
// What yaml and js-yaml read differently is kept out in two ways:
//   - the schema: yaml's core schema rules for null, bool, int and float (js-yaml's own
//     differ: `0b101`, `-0x1` and `+0o7` are strings in YAML 1.2 core, `+.5` a number);
//   - a look at the text (`needsFullParser`): directives (`%YAML 1.1` changes the schema),
//     tags, anchors and aliases (shared objects, alias limits), explicit and empty keys
//     (js-yaml names a null key "null", yaml ""), content on a `---` line (yaml refuses a
//     map there). Such a text, or one that js-yaml refuses, is read by the yaml package,
//     whose errors name line and column: the fast way never writes an error message.
//
// Start lines come from js-yaml's listener, which sees every node open with its line:
// the line of each document's content, and of each element of the arrays that can hold
// objects (the document itself, and every value of an `items` key).

import jsyaml from 'js-yaml';

const INT = /^[-+]?[0-9]+$/;
const OCT = /^0o[0-7]+$/;
const HEX = /^0x[0-9a-fA-F]+$/;
const FLOAT_SPECIAL = /^(?:[-+]?\.(?:inf|Inf|INF)|\.nan|\.NaN|\.NAN)$/;
const FLOAT_EXP = /^[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)[eE][-+]?[0-9]+$/;
const FLOAT = /^[-+]?(?:\.[0-9]+|[0-9]+\.[0-9]*)$/;

/** Could the plain scalar be a number at all (digit, sign or dot first)? Most are not. */
function numberish(s: string | null): s is string {
  if (s === null || s.length === 0) return false;
  const c = s.charCodeAt(0);
  return (c >= 48 && c <= 57) || c === 43 || c === 45 || c === 46;
}

const nullType = new jsyaml.Type('tag:yaml.org,2002:null', {
  kind: 'scalar',
  resolve: (s: string | null) => s === null || s === '~' || s === 'null' || s === 'Null' || s === 'NULL',
  construct: () => null,
});

const boolType = new jsyaml.Type('tag:yaml.org,2002:bool', {
  kind: 'scalar',
  resolve: (s: string | null) => s !== null && /^(?:[Tt]rue|TRUE|[Ff]alse|FALSE)$/.test(s),
  construct: (s: string) => s === 'true' || s === 'True' || s === 'TRUE',
});

const intType = new jsyaml.Type('tag:yaml.org,2002:int', {
  kind: 'scalar',
  resolve: (s: string | null) => numberish(s) && (INT.test(s) || OCT.test(s) || HEX.test(s)),
  construct: (s: string) => (OCT.test(s) ? parseInt(s.slice(2), 8) : HEX.test(s) ? parseInt(s.slice(2), 16) : parseInt(s, 10)),
});

const floatType = new jsyaml.Type('tag:yaml.org,2002:float', {
  kind: 'scalar',
  resolve: (s: string | null) => numberish(s) && (FLOAT.test(s) || FLOAT_EXP.test(s) || FLOAT_SPECIAL.test(s)),
  construct: (s: string) =>
    FLOAT_SPECIAL.test(s)
      ? s.slice(-3).toLowerCase() === 'nan'
        ? NaN
        : s.startsWith('-')
          ? Number.NEGATIVE_INFINITY
          : Number.POSITIVE_INFINITY
      : parseFloat(s),
});

/** The yaml package's core schema (YAML 1.2), in js-yaml. */
const CORE_AS_YAML = jsyaml.FAILSAFE_SCHEMA.extend({ implicit: [nullType, boolType, intType, floatType] });

/** A space, a line break, or the text's start or end (NaN). */
function blank(c: number): boolean {
  return c === 32 || c === 9 || c === 10 || c === 13 || Number.isNaN(c);
}

/** Where a YAML node or key can start: after a space, a line break, `[`, `{` or `,`, or at the start. */
function tokenStart(c: number): boolean {
  return blank(c) || c === 0x5b || c === 0x7b || c === 0x2c;
}

/**
 * Something js-yaml could read otherwise than yaml: a directive, a tag, an anchor or alias,
 * an explicit (`? `) or empty/null key, or content on a `---` line. Also true of harmless
 * texts that merely contain such characters (`"a & b"`, `"x : y"`): those only take the
 * slower way. One indexOf scan per character of interest (a regular expression over a
 * 57 MB text costs several times more).
 */
export function needsFullParser(text: string): boolean {
  const at = (i: number) => text.charCodeAt(i);
  // Tags (`!`), anchors (`&`) and aliases (`*`) at the start of a token, followed by a name.
  for (const ch of ['!', '&', '*']) {
    for (let i = text.indexOf(ch); i !== -1; i = text.indexOf(ch, i + 1)) if (tokenStart(at(i - 1)) && !blank(at(i + 1))) return true;
  }
  // Explicit keys: `? ` as a token.
  for (let i = text.indexOf('?'); i !== -1; i = text.indexOf('?', i + 1)) if (tokenStart(at(i - 1)) && blank(at(i + 1))) return true;
  // Directives: `%` at the start of a line.
  for (let i = text.indexOf('%'); i !== -1; i = text.indexOf('%', i + 1)) if (i === 0 || at(i - 1) === 10 || at(i - 1) === 13) return true;
  // Content on a `---` line (`--- a: 1`; a block scalar header or a comment is fine).
  for (let i = text.indexOf('---'); i !== -1; i = text.indexOf('---', i + 3)) {
    if (i !== 0 && at(i - 1) !== 10 && at(i - 1) !== 13) continue;
    let j = i + 3;
    if (at(j) !== 32 && at(j) !== 9) continue;
    while (at(j) === 32 || at(j) === 9) j++;
    const c = at(j);
    if (!blank(c) && c !== 0x23 /* # */ && c !== 0x7c /* | */ && c !== 0x3e /* > */) return true;
  }
  // Empty and null keys: `: ` as a token, or after `~`, `null`, `Null` or `NULL`.
  for (let i = text.indexOf(':'); i !== -1; i = text.indexOf(':', i + 1)) {
    if (!blank(at(i + 1))) continue;
    const p = at(i - 1);
    if (tokenStart(p)) return true;
    if (p === 0x7e /* ~ */ && tokenStart(at(i - 2))) return true;
    if ((p === 0x6c /* l */ || p === 0x4c) /* L */ && i >= 4 && /^(?:null|Null|NULL)$/.test(text.slice(i - 4, i)) && tokenStart(at(i - 5)))
      return true;
  }
  return false;
}

export interface FastDocument {
  /** The document's value (null for an empty document). */
  value: unknown;
  /** 1-based line where the document's content starts. */
  line: number;
  /** The document is a flow sequence (`[...]`, a JSON array). */
  flowSequence: boolean;
}

export interface FastYaml {
  documents: FastDocument[];
  /** 1-based start line of every element of the arrays that are a document or the value of an `items` key. */
  elementLines: Map<unknown[], number[]>;
}

/** js-yaml's loader state, as far as the listener reads it. */
interface ListenerState {
  depth: number;
  line: number;
  position: number;
  input: string;
  result: unknown;
}

/**
 * Every document of `text` with its start line, or undefined when the yaml package must
 * read it (see `needsFullParser`, or js-yaml refused it: a syntax error, a duplicate key,
 * too deep a nesting).
 */
export function readYamlFast(text: string): FastYaml | undefined {
  if (needsFullParser(text)) return undefined;
  const documents: FastDocument[] = [];
  const elementLines = new Map<unknown[], number[]>();
  // Nodes opened and not yet dropped, as (depth, line) pairs: a node's record stays until
  // its parent closes, so at an array's close its elements are the records of depth + 1
  // after its own. Descendants are dropped at each close, so this stays as long as the
  // widest array.
  const depths: number[] = [];
  const lines: number[] = [];
  let top = 0; // records in use (the arrays are never shrunk: setting length costs more)
  /** Index of the open node's own record, per depth. */
  const ownRecord: number[] = [];
  /** The last scalar closed at each depth: the key of the value that closes next. */
  const lastScalar: unknown[] = [];
  let docLine = 1;
  let flowSequence = false;
  const listener = (event: 'open' | 'close', state: ListenerState) => {
    const d = state.depth;
    if (event === 'open') {
      ownRecord[d] = top;
      depths[top] = d;
      lines[top] = state.line + 1;
      top++;
      if (d === 1) {
        docLine = state.line + 1;
        flowSequence = state.input.charCodeAt(state.position) === 0x5b; /* [ */
      }
      return;
    }
    const own = ownRecord[d]!;
    const result = state.result;
    if (Array.isArray(result) && (d === 1 || lastScalar[d] === 'items')) {
      const children: number[] = [];
      for (let i = own + 1; i < top; i++) if (depths[i] === d + 1) children.push(lines[i]!);
      elementLines.set(result, children);
    }
    top = own + 1;
    lastScalar[d] = result !== null && typeof result === 'object' ? undefined : result;
    if (d === 1) {
      documents.push({ value: result, line: docLine, flowSequence });
      top = 0;
    }
  };
  try {
    jsyaml.loadAll(text, undefined, { schema: CORE_AS_YAML, listener: listener as unknown as jsyaml.LoadOptions['listener'] });
  } catch {
    return undefined;
  }
  return { documents, elementLines };
}
