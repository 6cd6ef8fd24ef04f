// The fast way (js-yaml) must read every manifest exactly as the yaml package does: the
// same objects, errors, skipped kinds and start lines, or leave the text to the yaml
// package. Each test compares parseManifests both ways.

import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import jsyaml from 'js-yaml';
import { stringify } from 'yaml';
import { parseManifests, type ParseOptions } from './manifest.ts';
import { needsFullParser, readYamlFast } from './yaml-fast.ts';

const FILE = 'in.yaml';

function bothWays(text: string, options: ParseOptions = {}) {
  return { fast: parseManifests(text, FILE, options), yaml: parseManifests(text, FILE, { ...options, parser: 'yaml' }) };
}

function assertSameRead(text: string, options: ParseOptions = {}): void {
  const { fast, yaml } = bothWays(text, options);
  assert.deepEqual(fast, yaml, `read differently:\n${text}`);
}

/** A ConfigMap whose `data.v` is `value` as written. */
const configMap = (value: string) => `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  v: ${value}\n`;

function manifestFiles(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir).sort()) {
    const p = join(dir, name);
    if (name === 'node_modules' || name.startsWith('.')) continue;
    if (statSync(p).isDirectory()) manifestFiles(p, out);
    else if (/\.(ya?ml|json)$/.test(name)) out.push(p);
  }
  return out;
}

describe('the fast YAML read', () => {
  test('reads every example, deploy and test-data manifest as the yaml package does', () => {
    const files = ['examples', 'deploy', 'src'].flatMap((d) => manifestFiles(d));
    assert.ok(files.length > 20, `only ${files.length} files`);
    let fast = 0;
    for (const f of files) {
      const text = readFileSync(f, 'utf8');
      assertSameRead(text);
      if (readYamlFast(text) !== undefined) fast++;
    }
    // Most take the fast way; the rest use anchors, tags or characters that look like them.
    assert.ok(fast > files.length / 2, `${fast} of ${files.length} files read the fast way`);
  });

  test('numbers, booleans and nulls follow YAML 1.2 core as the yaml package reads it', () => {
    const scalars = [
      ...['0777', '0o17', '0x1F', '0X1F', '0O17', '1_000', '0b101', '-0x1', '+0o7', '+12', '-0', '09', '0o8', '0x'],
      ...['1e3', '1E+3', '1.', '.5', '+.5', '-.5', '1.5e-3', '6.8523015e+5', '685.230_15e+03', '1.0', '100.00', '0.'],
      ...['.inf', '-.Inf', '+.INF', '.NaN', '.nan', '.NAN', '12345678901234567890', '190:20:30.15', '1:20'],
      ...['yes', 'no', 'on', 'off', 'y', 'n', 'True', 'TRUE', 'tRue', 'false', 'FALSE', '~', 'null', 'Null', 'NULL', 'nULL', ''],
      ...['2024-01-01', '2024-01-01T00:00:00Z', '"8"', "'true'", '1Ti', '500m', '"0777"'],
    ];
    for (const s of scalars) assertSameRead(configMap(s));
    // The fast way took them (it is not the yaml package answering for both).
    assert.equal(readYamlFast(configMap('0b101'))?.documents[0]?.value && true, true);
    const data = (s: string) => (readYamlFast(configMap(s))!.documents[0]!.value as { data: { v: unknown } }).data.v;
    assert.equal(data('0b101'), '0b101');
    assert.equal(data('-0x1'), '-0x1');
    assert.equal(data('+.5'), 0.5);
    assert.equal(data('0777'), 777);
    assert.equal(data('0o17'), 15);
    assert.equal(data('yes'), 'yes');
    assert.equal(data('on'), 'on');
    assert.equal(data('2024-01-01'), '2024-01-01');
  });

  test('texts js-yaml could read otherwise go to the yaml package', () => {
    const different = [
      '%YAML 1.1\n---\na: yes\n',
      'a: !!str 1\n',
      'a: !foo x\n',
      'a: &x 1\nb: *x\n',
      '? a\n: c\n',
      '~: 1\n',
      'null: 1\n',
      ': 1\n',
      '--- a: 1\n',
      '{a: [*x]}',
    ];
    for (const t of different) {
      assert.equal(needsFullParser(t), true, t);
      assert.equal(readYamlFast(t), undefined, t);
      assertSameRead(t);
    }
    const plain = ['a: "x & y"\n', 'a: b*\n', 'url: http://x/?a=1&b=2\n', '--- |\n  x\n', '--- # c\na: 1\n', 'a: 50%\n', 'k: v\n'];
    for (const t of plain) assert.equal(needsFullParser(t), false, t);
  });

  test('what js-yaml refuses (syntax, duplicate keys, deep nesting) the yaml package reads and names', () => {
    const bad = [
      'a: 1\n b: 2\n',
      'k: v\nk: w\n',
      'a: [b\n',
      `${'['.repeat(150)}${']'.repeat(150)}\n`,
      `apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Node\n  metadata: {name: a}\n-\n- 3\n`,
    ];
    for (const t of bad) assertSameRead(t);
    assert.match(parseManifests('k: v\nk: w\n', FILE).errors[0]!.message, /Map keys must be unique/);
  });

  test('start lines of documents, List items (nested Lists too) and JSON array elements match', () => {
    const list = (items: string) => `apiVersion: v1\nkind: List\nitems:\n${items}`;
    const item = (name: string, pad = '') =>
      `${pad}- apiVersion: v1\n${pad}  kind: Node\n${pad}  metadata:\n${pad}    name: ${name}\n${pad}  spec:\n${pad}    taints: []\n`;
    const texts = [
      `# head\n\n${list(item('a') + '# between\n' + item('b'))}`,
      `${list(item('a'))}---\n---\n# only a comment\n---\n\n${list(item('b', '  '))}`,
      list(`- apiVersion: v1\n  kind: List\n  items:\n${item('c', '  ')}${item('d', '  ')}`),
      `apiVersion: v1\nkind: NodeList\nitems:\n-\n  metadata:\n    name: e\n- metadata: {name: f}\n- 7\n- [x]\n`,
      `[\n  {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "g"}},\n\n  {"apiVersion": "v1", "kind": "List", "items": [\n    {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "h"}}]}\n]\n`,
      `- apiVersion: v1\n  kind: Node\n  metadata: {name: i}\n`,
      `apiVersion: v1\nkind: Node\nmetadata:\n  name: j\n  labels: {a: b}\n---\napiVersion: v1\nkind: Node\nmetadata: {}\n---\n"just a string"\n`,
      `apiVersion: v1\r\nkind: Node\r\nmetadata:\r\n  name: k\r\n`,
      `apiVersion: v1\nkind: List\nitems: [{apiVersion: v1, kind: Node, metadata: {name: l}},\n  {apiVersion: v1, kind: Node, metadata: {name: m}}]\n`,
    ];
    for (const t of texts) {
      assert.notEqual(readYamlFast(t), undefined, t);
      assertSameRead(t, { skipKind: (k) => k === 'ConfigMap' });
    }
    const { objects } = parseManifests(texts[0]!, FILE);
    assert.deepEqual(
      objects.map((o) => o.where.line),
      [6, 13],
    );
  });

  test('random manifests, in the styles yaml and js-yaml write, read the same both ways', () => {
    const tricky = fc.constantFrom(
      'yes',
      'on',
      '0777',
      '0b1',
      '+.5',
      '1e3',
      '~',
      'null',
      '',
      ' lead',
      'a: b',
      '# c',
      '- x',
      'x\ny',
      'tab\there',
      'ünï ☃',
      '"q"',
      "it's",
      '\\',
      '12:30',
      '1Ti',
      'true',
    );
    const key = fc.oneof(fc.constantFrom('items', 'metadata', 'name', 'a-b', 'x.y/z', 'on', '1'), fc.string({ maxLength: 6 }));
    const scalar = fc.oneof(
      tricky,
      fc.string({ maxLength: 12 }),
      fc.integer(),
      fc.double({ noNaN: true }),
      fc.boolean(),
      fc.constant(null),
    );
    const { value } = fc.letrec((tie) => ({
      value: fc.oneof({ depthSize: 'small', withCrossShrink: true }, scalar, tie('array'), tie('object')),
      array: fc.array(tie('value'), { maxLength: 4 }),
      object: fc.dictionary(key, tie('value'), { maxKeys: 5 }),
    }));
    const object = (name: string, kind: fc.Arbitrary<string>) =>
      fc.record({
        apiVersion: fc.constant('v1'),
        kind,
        metadata: fc.record({ name: fc.constant(name) }),
        data: fc.dictionary(key, value, { maxKeys: 4 }),
      });
    const manifest = fc.oneof(
      object('one', fc.constantFrom('ConfigMap', 'Node')),
      fc.record({
        apiVersion: fc.constant('v1'),
        kind: fc.constant('List'),
        items: fc.array(object('item', fc.constantFrom('ConfigMap', 'Node')), { maxLength: 4 }),
      }),
    );
    const writer = fc.constantFrom(
      (v: unknown) => stringify(v),
      (v: unknown) => stringify(v, { indentSeq: false }),
      (v: unknown) => stringify(v, { collectionStyle: 'flow' }),
      (v: unknown) => stringify(v, { blockQuote: 'literal', lineWidth: 20 }),
      (v: unknown) => jsyaml.dump(v),
      (v: unknown) => jsyaml.dump(v, { noArrayIndent: true, lineWidth: 20 }),
      (v: unknown) => jsyaml.dump(v, { flowLevel: 1 }),
      (v: unknown) => JSON.stringify(v, null, 2),
    );
    fc.assert(
      fc.property(fc.array(manifest, { minLength: 1, maxLength: 3 }), writer, (docs, write) => {
        const text = docs.map((d) => write(d)).join('\n---\n');
        const { fast, yaml } = bothWays(text, { skipKind: (k) => k === 'ConfigMap' });
        assert.deepEqual(fast, yaml);
      }),
      { numRuns: 300 },
    );
  });
});
