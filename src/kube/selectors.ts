// Selectors as they come on the wire (`?labelSelector=app in (db,web),!canary`,
// `?fieldSelector=spec.nodeName=n1,status.phase!=Failed`), parsed the way
// k8s.io/apimachinery's labels.Parse and fields.ParseSelector do. A selector that does
// not parse is a 400 naming the part that did not.

import { labelSelectorMatches } from '../api/label-selector.ts';
import type { KObject } from '../api/objects.ts';
import type { LabelSelector } from '../api/volcano-objects.ts';
import { badRequest } from './errors.ts';

export type LabelOp = '=' | '!=' | 'in' | 'notin' | 'exists' | '!exists' | 'gt' | 'lt';

export interface LabelRequirement {
  key: string;
  op: LabelOp;
  values: string[];
}

const KEY = /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;
const VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

function checkKey(key: string): void {
  const name = key.includes('/') ? key.slice(key.indexOf('/') + 1) : key;
  if (!KEY.test(key) || name.length > 63 || key.length - name.length > 254) {
    throw badRequest(
      `unable to parse requirement: invalid label key "${key}": name part must consist of alphanumeric characters, '-', '_' or '.', ` +
        `and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`,
    );
  }
}

function checkValue(v: string): void {
  if (v.length > 63 || !VALUE.test(v)) {
    throw badRequest(
      `unable to parse requirement: invalid label value: "${v}": at key: a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character`,
    );
  }
}

/** Tokens: identifiers/values, operators, parentheses, commas. */
function tokenize(s: string): string[] {
  const out: string[] = [];
  let i = 0;
  while (i < s.length) {
    const c = s[i]!;
    if (c === ' ' || c === '\t') {
      i++;
    } else if (c === '(' || c === ')' || c === ',') {
      out.push(c);
      i++;
    } else if (s.startsWith('==', i) || s.startsWith('!=', i)) {
      out.push(s.slice(i, i + 2));
      i += 2;
    } else if (c === '=' || c === '!' || c === '<' || c === '>') {
      out.push(c);
      i++;
    } else {
      let j = i;
      while (j < s.length && !' \t(),=!<>'.includes(s[j]!)) j++;
      out.push(s.slice(i, j));
      i = j;
    }
  }
  return out;
}

const isWord = (t: string | undefined) => t !== undefined && !['(', ')', ',', '=', '==', '!=', '!', '<', '>'].includes(t);

/** Parses a label selector string; '' selects everything. */
export function parseLabelSelector(text: string): LabelRequirement[] {
  const toks = tokenize(text);
  const reqs: LabelRequirement[] = [];
  let i = 0;
  const expect = (what: string): never => {
    throw badRequest(`unable to parse requirement: found '${toks[i] ?? ''}', expected: ${what}`);
  };
  while (i < toks.length) {
    let req: LabelRequirement;
    if (toks[i] === '!') {
      i++;
      if (!isWord(toks[i])) expect("identifier after '!'");
      req = { key: toks[i++]!, op: '!exists', values: [] };
    } else {
      if (!isWord(toks[i])) expect('identifier');
      const key = toks[i++]!;
      const op = toks[i];
      if (op === undefined || op === ',') {
        req = { key, op: 'exists', values: [] };
      } else if (op === '=' || op === '==' || op === '!=') {
        i++;
        const v = isWord(toks[i]) ? toks[i++]! : '';
        req = { key, op: op === '!=' ? '!=' : '=', values: [v] };
      } else if (op === '<' || op === '>') {
        i++;
        const v = toks[i++];
        if (!isWord(v) || !/^-?\d+$/.test(v!))
          throw badRequest(`unable to parse requirement: for 'Gt', 'Lt' operators, the value must be an integer, got "${v ?? ''}"`);
        req = { key, op: op === '>' ? 'gt' : 'lt', values: [v!] };
      } else if (op === 'in' || op === 'notin') {
        i++;
        if (toks[i] !== '(') expect("'('");
        i++;
        const values: string[] = [];
        for (;;) {
          if (toks[i] === ')') {
            if (values.length === 0) values.push('');
            i++;
            break;
          }
          values.push(isWord(toks[i]) ? toks[i++]! : '');
          if (toks[i] === ',') i++;
          else if (toks[i] !== ')') expect("',' or ')'");
        }
        req = { key, op, values };
      } else {
        expect("'=', '!=', '==', 'in', 'notin'");
        throw new Error('unreachable');
      }
    }
    checkKey(req.key);
    if (req.op !== 'gt' && req.op !== 'lt') req.values.forEach(checkValue);
    reqs.push(req);
    if (i < toks.length) {
      if (toks[i] !== ',') expect("','");
      i++;
      if (i >= toks.length) expect('identifier');
    }
  }
  return reqs;
}

const EXPRESSION = { '=': 'In', in: 'In', '!=': 'NotIn', notin: 'NotIn', exists: 'Exists', '!exists': 'DoesNotExist' } as const;

/** The requirements as a metav1.LabelSelector (all but the numeric `>`/`<`), made once per parsed selector. */
const compiled = new WeakMap<readonly LabelRequirement[], { selector: LabelSelector; numeric: LabelRequirement[] }>();

function compile(reqs: readonly LabelRequirement[]): { selector: LabelSelector; numeric: LabelRequirement[] } {
  let c = compiled.get(reqs);
  if (!c) {
    const numeric = reqs.filter((r) => r.op === 'gt' || r.op === 'lt');
    const matchExpressions = reqs
      .filter((r) => r.op !== 'gt' && r.op !== 'lt')
      .map((r) => ({ key: r.key, operator: EXPRESSION[r.op as keyof typeof EXPRESSION], values: r.values }));
    c = { selector: { matchExpressions }, numeric };
    compiled.set(reqs, c);
  }
  return c;
}

export function labelsMatch(reqs: readonly LabelRequirement[], labels: Record<string, string> | undefined): boolean {
  if (reqs.length === 0) return true;
  const { selector, numeric } = compile(reqs);
  if (!labelSelectorMatches(selector, labels)) return false;
  for (const r of numeric) {
    const v = labels?.[r.key];
    if (v === undefined || !/^-?\d+$/.test(v)) return false;
    const n = Number(v);
    if (r.op === 'gt' ? !(n > Number(r.values[0])) : !(n < Number(r.values[0]))) return false;
  }
  return true;
}

// ---------------------------------------------------------------------------------------
// Field selectors
// ---------------------------------------------------------------------------------------

export interface FieldRequirement {
  field: string;
  equal: boolean;
  value: string;
}

/** Fields each kind may be selected on, beyond metadata.name and metadata.namespace (as kube-apiserver's). */
const FIELDS: Record<string, readonly string[]> = {
  Pod: [
    'spec.nodeName',
    'spec.restartPolicy',
    'spec.schedulerName',
    'spec.serviceAccountName',
    'spec.hostNetwork',
    'status.phase',
    'status.podIP',
    'status.nominatedNodeName',
  ],
  Node: ['spec.unschedulable'],
  Namespace: ['status.phase'],
  Event: [
    'involvedObject.kind',
    'involvedObject.namespace',
    'involvedObject.name',
    'involvedObject.uid',
    'involvedObject.apiVersion',
    'involvedObject.resourceVersion',
    'involvedObject.fieldPath',
    'reason',
    'reportingComponent',
    'source',
    'type',
  ],
  Job: ['status.successful'],
};

/** Splits on unescaped commas; `\,` `\=` `\\` are escapes, as fields.ParseSelector reads them. */
function splitUnescaped(s: string, sep: string): string[] {
  const out: string[] = [];
  let cur = '';
  for (let i = 0; i < s.length; i++) {
    const c = s[i]!;
    if (c === '\\' && i + 1 < s.length) {
      cur += c + s[i + 1];
      i++;
    } else if (c === sep) {
      out.push(cur);
      cur = '';
    } else cur += c;
  }
  out.push(cur);
  return out;
}

const unescape = (s: string) => s.replace(/\\(.)/g, '$1');

/** Parses a field selector for a kind; unknown fields are a 400 as kube-apiserver's. */
export function parseFieldSelector(text: string, kind: string): FieldRequirement[] {
  if (text.trim() === '') return [];
  const allowed = FIELDS[kind] ?? [];
  return splitUnescaped(text, ',').map((part) => {
    const m = /^([^=!]+?)\s*(==|=|!=)\s*(.*)$/.exec(part.trim());
    if (!m) throw badRequest(`invalid selector: '${text}'; can't understand '${part}'`);
    const field = m[1]!.trim();
    if (field !== 'metadata.name' && field !== 'metadata.namespace' && !allowed.includes(field)) {
      throw badRequest(`field label not supported: ${field}`);
    }
    return { field, equal: m[2] !== '!=', value: unescape(m[3]!) };
  });
}

function fieldValue(obj: KObject, field: string): string {
  if (field === 'source') return String((obj as { source?: { component?: string } }).source?.component ?? '');
  let v: unknown = obj;
  for (const p of field.split('.')) {
    if (v === null || typeof v !== 'object') return '';
    v = (v as Record<string, unknown>)[p];
  }
  if (field === 'spec.unschedulable' || field === 'spec.hostNetwork') return v === true ? 'true' : 'false';
  if (field === 'status.successful') return String(v ?? 0);
  return v === undefined || v === null ? '' : String(v);
}

export function fieldsMatch(reqs: readonly FieldRequirement[], obj: KObject): boolean {
  for (const r of reqs) if ((fieldValue(obj, r.field) === r.value) !== r.equal) return false;
  return true;
}
