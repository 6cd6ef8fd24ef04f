import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KObject } from '../api/objects.ts';
import { ApiError } from './errors.ts';
import { fieldsMatch, labelsMatch, parseFieldSelector, parseLabelSelector } from './selectors.ts';

const matches = (sel: string, labels: Record<string, string>) => labelsMatch(parseLabelSelector(sel), labels);
const refused = (f: () => unknown, message: RegExp) =>
  assert.throws(f, (e: unknown) => e instanceof ApiError && e.code === 400 && message.test(e.message));

describe('label selector strings', () => {
  it('parses every operator kubectl sends, with spaces as the query decodes them', () => {
    assert.deepEqual(parseLabelSelector('app in (db, web),!canary,tier!=fe,env==prod,k'), [
      { key: 'app', op: 'in', values: ['db', 'web'] },
      { key: 'canary', op: '!exists', values: [] },
      { key: 'tier', op: '!=', values: ['fe'] },
      { key: 'env', op: '=', values: ['prod'] },
      { key: 'k', op: 'exists', values: [] },
    ]);
    assert.deepEqual(parseLabelSelector(''), []);
  });
  it('matches as labels.Selector does: != and notin match objects without the key', () => {
    assert.ok(matches('a!=x', {}));
    assert.ok(matches('a notin (x,y)', { a: 'z' }));
    assert.ok(!matches('a notin (x,y)', { a: 'x' }));
    assert.ok(matches('kubernetes.io/hostname=n1', { 'kubernetes.io/hostname': 'n1' }));
    assert.ok(matches('a=', { a: '' }));
    assert.ok(matches('n>3', { n: '4' }) && !matches('n<3', { n: '4' }));
  });
  it('refuses what does not parse with a 400 naming the part', () => {
    refused(() => parseLabelSelector('app in web'), /found 'web', expected: '\('/);
    refused(() => parseLabelSelector('a=b,'), /expected: identifier/);
    refused(() => parseLabelSelector('a b'), /found 'b', expected/);
    refused(() => parseLabelSelector('Bad Key!=x'), /found 'Key'/);
    refused(() => parseLabelSelector('a=b c'), /found 'c'/);
    refused(() => parseLabelSelector('a=' + 'x'.repeat(64)), /invalid label value/);
    refused(() => parseLabelSelector('n>x'), /must be an integer/);
  });
});

describe('field selector strings', () => {
  const p = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'p1', namespace: 'ns' },
    spec: { nodeName: 'n1' },
    status: { phase: 'Running' },
  } as KObject;
  it('selects on metadata fields of every kind and the fields kube-apiserver allows per kind', () => {
    assert.ok(fieldsMatch(parseFieldSelector('spec.nodeName=n1,status.phase!=Succeeded,status.phase!=Failed', 'Pod'), p));
    assert.ok(!fieldsMatch(parseFieldSelector('metadata.name==p2', 'Pod'), p));
    assert.ok(fieldsMatch(parseFieldSelector('metadata.namespace=ns', 'Workload'), p));
    const ev = {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name: 'e', namespace: 'default' },
      involvedObject: { kind: 'Node', name: 'n1' },
    } as KObject;
    assert.ok(fieldsMatch(parseFieldSelector('involvedObject.kind=Node,involvedObject.name=n1,involvedObject.namespace=', 'Event'), ev));
  });
  it('refuses unknown fields and unreadable terms with 400', () => {
    refused(() => parseFieldSelector('spec.nodeName=n1', 'Workload'), /^field label not supported: spec.nodeName$/);
    refused(() => parseFieldSelector('metadata.name', 'Pod'), /can't understand 'metadata.name'/);
  });
});
