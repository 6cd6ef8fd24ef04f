import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { objectRef, parseManifests } from './manifest.ts';

const FILE = 'cluster.yaml';

const node = (name: string) => `apiVersion: v1\nkind: Node\nmetadata:\n  name: ${name}\n`;

describe('parseManifests', () => {
  test('multi-document YAML: one object per document, with document index and start line', () => {
    const text = `# nodes\n${node('n1')}---\n${node('n2')}---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\nmetadata:\n  name: w\n  namespace: team\nspec: {}\n`;
    const { objects, errors } = parseManifests(text, FILE);
    assert.deepEqual(errors, []);
    assert.deepEqual(
      objects.map((o) => o.where),
      [
        { file: FILE, document: 1, line: 2, object: 'Node/n1' },
        { file: FILE, document: 2, line: 7, object: 'Node/n2' },
        { file: FILE, document: 3, line: 12, object: 'Workload/team/w' },
      ],
    );
    assert.equal(objects[2].object.metadata.namespace, 'team');
  });

  test('empty documents are skipped but still counted', () => {
    const { objects, errors } = parseManifests(`---\n---\n# only a comment\n---\n${node('n1')}---\n~\n---\n`, FILE);
    assert.deepEqual(errors, []);
    assert.equal(objects.length, 1);
    assert.equal(objects[0].where.document, 3);
    assert.deepEqual(parseManifests('', FILE), { objects: [], errors: [], skipped: [] });
    assert.deepEqual(parseManifests('\n# nothing\n', FILE), { objects: [], errors: [], skipped: [] });
  });

  test('a malformed document is an error naming file:line and the document; the others still parse', () => {
    const text = `${node('n1')}---\napiVersion: v1\nkind: Node\nmetadata:\n  name: [n2\n---\n${node('n3')}`;
    const { objects, errors } = parseManifests(text, FILE);
    assert.deepEqual(
      objects.map((o) => o.object.metadata.name),
      ['n1', 'n3'],
    );
    assert.equal(errors.length, 1);
    const e = errors[0];
    assert.equal(e.where.document, 2);
    assert.equal(e.where.file, FILE);
    assert.ok(e.where.line !== undefined && e.where.line >= 8 && e.where.line <= 10, `line ${e.where.line}`);
    assert.match(e.message, /^cluster\.yaml:\d+, document 2: malformed YAML, column \d+: .+; the document is skipped$/);
    assert.doesNotMatch(e.detail, /\n/);
  });

  test('duplicate keys make a document malformed', () => {
    const { objects, errors } = parseManifests('apiVersion: v1\nkind: Node\nkind: Pod\nmetadata: {name: x}\n', FILE);
    assert.equal(objects.length, 0);
    assert.equal(errors[0].where.line, 3);
    assert.match(errors[0].detail, /Map keys must be unique/);
  });

  test('an alias to a missing anchor is an error for its document only', () => {
    const { objects, errors } = parseManifests(`${node('n1')}---\napiVersion: v1\nkind: Node\nmetadata: *missing\n`, FILE);
    assert.equal(objects.length, 1);
    assert.equal(errors.length, 1);
    assert.equal(errors[0].where.document, 2);
  });

  test('JSON: a single object', () => {
    const { objects, errors } = parseManifests(
      '{"apiVersion": "v1", "kind": "Pod",\n "metadata": {"name": "p", "namespace": "ns"}}',
      'pod.json',
    );
    assert.deepEqual(errors, []);
    assert.deepEqual(objects[0].where, { file: 'pod.json', document: 1, line: 1, object: 'Pod/ns/p' });
  });

  test('JSON: an array of objects, each at field [i] with its own line', () => {
    const text =
      '[\n  {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "a"}},\n  {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "b"}},\n  {"kind": "Node", "metadata": {"name": "c"}}\n]';
    const { objects, errors } = parseManifests(text, 'nodes.json');
    assert.deepEqual(
      objects.map((o) => o.where),
      [
        { file: 'nodes.json', document: 1, line: 2, field: '[0]', object: 'Node/a' },
        { file: 'nodes.json', document: 1, line: 3, field: '[1]', object: 'Node/b' },
      ],
    );
    assert.equal(errors.length, 1);
    assert.equal(
      errors[0].message,
      'nodes.json:4, document 1, Node/c, [2].apiVersion: apiVersion is required: e.g. "v1" or "kueue.x-k8s.io/v1beta2"',
    );
  });

  test("JSON List read by JSON.parse keeps each item's line (strings with brackets and escapes do not confuse it); typed lists fill apiVersion and kind", () => {
    const text =
      '{\n  "apiVersion": "v1",\n  "kind": "NodeList",\n  "metadata": {"note": "[{\\"x\\"]"},\n  "items": [\n    {"metadata": {"name": "a", "labels": {"k": "}]"}}},\n\n    {\n      "metadata": {"name": "b"}\n    }\n  ]\n}\n';
    const { objects, errors } = parseManifests(text, 'nodes.json');
    assert.deepEqual(errors, []);
    assert.deepEqual(
      objects.map((o) => [o.where.line, o.where.field, o.object.kind, o.object.apiVersion]),
      [
        [6, 'items[0]', 'Node', 'v1'],
        [8, 'items[1]', 'Node', 'v1'],
      ],
    );
    // Not valid JSON: the YAML way, with line and column.
    const bad = parseManifests('{"apiVersion": "v1",\n "kind": [}', 'bad.json');
    assert.match(bad.errors[0]!.message, /^bad\.json:2, document 1: malformed JSON/);
  });

  test('kubectl List: each item is an object, document = the List document, field items[i]', () => {
    const text = `${node('first')}---\napiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Node\n  metadata: {name: a}\n- apiVersion: v1\n  kind: Pod\n  metadata: {name: p, namespace: ns}\nmetadata: {resourceVersion: ""}\n`;
    const { objects, errors } = parseManifests(text, FILE);
    assert.deepEqual(errors, []);
    assert.deepEqual(
      objects.slice(1).map((o) => o.where),
      [
        { file: FILE, document: 2, line: 9, field: 'items[0]', object: 'Node/a' },
        { file: FILE, document: 2, line: 12, field: 'items[1]', object: 'Pod/ns/p' },
      ],
    );
  });

  test('typed *List kinds: items without apiVersion and kind take them from the list', () => {
    const text = 'apiVersion: v1\nkind: NodeList\nitems:\n- metadata: {name: a}\n- apiVersion: v1\n  kind: Node\n  metadata: {name: b}\n';
    const { objects, errors } = parseManifests(text, FILE);
    assert.deepEqual(errors, []);
    assert.deepEqual(
      objects.map((o) => [o.object.apiVersion, o.object.kind, o.where.object]),
      [
        ['v1', 'Node', 'Node/a'],
        ['v1', 'Node', 'Node/b'],
      ],
    );
  });

  test('a List item that is not an object, or lacks a name, is an error at items[i]; the other items still parse', () => {
    const text =
      'apiVersion: v1\nkind: List\nitems:\n- 42\n- apiVersion: v1\n  kind: Node\n  metadata: {}\n- apiVersion: v1\n  kind: Node\n  metadata: {name: ok}\n';
    const { objects, errors } = parseManifests(text, FILE);
    assert.deepEqual(
      objects.map((o) => o.object.metadata.name),
      ['ok'],
    );
    assert.deepEqual(
      errors.map((e) => [e.where.field, e.where.line]),
      [
        ['items[0]', 4],
        ['items[1].metadata.name', 5],
      ],
    );
    assert.match(errors[0].detail, /got the number 42/);
  });

  test('a document that is not a mapping is an error', () => {
    for (const [text, what] of [
      ['just a string\n', /got the string "just a string"/],
      ['- a\n- b\n', /got a YAML sequence/],
      ['42\n', /got the number 42/],
    ] as const) {
      const { objects, errors } = parseManifests(text, FILE);
      assert.equal(objects.length, 0);
      assert.equal(errors.length, 1);
      assert.match(errors[0].detail, /a document must be a mapping/);
      assert.match(errors[0].detail, what);
      assert.deepEqual(errors[0].where, { file: FILE, document: 1, line: 1 });
    }
  });

  test('apiVersion, kind and metadata.name are required', () => {
    const { objects, errors } = parseManifests(
      'kind: Node\nmetadata: {name: a}\n---\napiVersion: v1\nmetadata: {name: b}\n---\napiVersion: v1\nkind: Node\n---\napiVersion: v1\nkind: Node\nmetadata: {generateName: x-}\n---\napiVersion: 1\nkind: Node\nmetadata: {name: ""}\n',
      FILE,
    );
    assert.equal(objects.length, 0);
    assert.deepEqual(
      errors.map((e) => `${e.where.document} ${e.where.object} ${e.where.field}: ${e.detail}`),
      [
        '1 Node/a apiVersion: apiVersion is required: e.g. "v1" or "kueue.x-k8s.io/v1beta2"',
        '2 <no kind>/b kind: kind is required: e.g. "Node" or "Topology"',
        '3 Node/<no name> metadata: metadata is required, with at least a name',
        "4 Node/<no name> metadata.name: metadata.name is required: the object's name (generateName is not supported in manifests: give a name)",
        '5 Node/<no name> apiVersion: apiVersion must be a non-empty string, got the number 1',
        '5 Node/<no name> metadata.name: metadata.name must be a non-empty string, got the string ""',
      ],
    );
  });

  test('unknown fields and quoted values are kept as written', () => {
    const { objects } = parseManifests(
      'apiVersion: v1\nkind: Node\nmetadata: {name: a, annotations: {x/y: "true"}}\nextra: {deep: [1, 2]}\n',
      FILE,
    );
    assert.deepEqual(objects[0].object, {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name: 'a', annotations: { 'x/y': 'true' } },
      extra: { deep: [1, 2] },
    });
  });
});

test('objectRef: Kind/namespace/name or Kind/name', () => {
  assert.equal(objectRef({ kind: 'Pod', metadata: { name: 'p', namespace: 'ns' } }), 'Pod/ns/p');
  assert.equal(objectRef({ kind: 'Node', metadata: { name: 'n' } }), 'Node/n');
  assert.equal(objectRef({}), '<no kind>/<no name>');
});
