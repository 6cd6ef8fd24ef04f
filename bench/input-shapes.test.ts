// Keeps the input figures from rotting: the generated files read back as the Nodes they
// were written from (YAML and JSON, with lines), every Node is one the loader keeps as
// written, and the figures' child processes run on a small shape.

import assert from 'node:assert/strict';
import { readFileSync, rmSync } from 'node:fs';
import { describe, it } from 'node:test';
import { parse } from 'yaml';
import { parseManifests } from '../src/api/manifest.ts';
import { NodeAsWritten } from '../src/api/node-check.ts';
import { measureHyperNode, measurePlan, writeInputs } from './input-bench.ts';
import { INPUT, bigHyperNode, inputNodes, listJson, listYaml, type InputSize } from './input-shapes.ts';

const SMALL: InputSize = { nodes: 2_500, hostsPerRack: 20, seed: 7 };

describe('input shape', () => {
  const nodes = inputNodes(SMALL);
  const yaml = listYaml(nodes);

  it('is the same Nodes for the same seed, and others for another seed', () => {
    assert.deepEqual(inputNodes(SMALL), nodes);
    assert.notDeepEqual(
      inputNodes({ ...SMALL, seed: 8 }).map((n) => n.spec?.unschedulable),
      nodes.map((n) => n.spec?.unschedulable),
    );
    assert.equal(new Set(nodes.map((n) => n.metadata.name)).size, nodes.length);
  });

  it('reads back, as YAML and as JSON, to the Nodes it was written from', () => {
    const list = { apiVersion: 'v1', items: nodes, kind: 'List', metadata: { resourceVersion: '' } };
    assert.deepEqual(parse(yaml), list);
    assert.deepEqual(JSON.parse(listJson(nodes)), list);
    const { objects, errors } = parseManifests(yaml, 'nodes.yaml');
    assert.deepEqual(errors, []);
    assert.equal(objects.length, nodes.length);
    // kubectl's layout: `items:` then `- apiVersion` at column 0, 23 lines per Node.
    assert.deepEqual(
      objects.slice(0, 3).map((o) => o.where.line),
      [3, 26, 49],
    );
  });

  it('is about 520 bytes of YAML per Node (110,000 of them: the issue 57 MB)', () => {
    const perNode = yaml.length / nodes.length;
    assert.ok(perNode > 500 && perNode < 540, `${perNode} bytes per Node`);
    assert.equal(INPUT.nodes, 110_000);
  });

  it('every Node is one the loader keeps as written', () => {
    const check = new NodeAsWritten();
    for (const n of nodes) assert.equal(check.accepts(structuredClone(n) as unknown as Record<string, unknown>), true, n.metadata.name);
  });

  it('the big HyperNode lists every node by exactMatch', () => {
    const h = bigHyperNode('big', ['a', 'b']);
    assert.deepEqual(h.spec.members, [
      { type: 'Node', selector: { exactMatch: { name: 'a' } } },
      { type: 'Node', selector: { exactMatch: { name: 'b' } } },
    ]);
  });

  it('the figures run: plan over the YAML and JSON Nodes admits the job; the tree holds every member', () => {
    const files = writeInputs(SMALL, 500);
    try {
      assert.match(readFileSync(files.yaml, 'utf8'), /^apiVersion: v1\nitems:\n- apiVersion: v1\n {2}kind: Node\n/);
      for (const f of [files.yaml, files.json]) {
        const r = measurePlan(files.job, f);
        assert.equal(r.exitCode, 0, r.err);
        assert.match(r.out, /job-train/);
        assert.ok(r.cpuMs > 0 && r.maxRssMb > 0);
      }
      const h = measureHyperNode(files.hyperNode, 500);
      assert.equal(h.members, 500);
      assert.ok(h.peakMb >= 0);
    } finally {
      rmSync(files.dir, { recursive: true, force: true });
    }
  });
});
