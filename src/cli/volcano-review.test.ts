// Regressions from the review of the Volcano / HyperNode support (inputs in testdata/).

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Workload } from '../api/objects.ts';
import { decodeV1beta2 } from '../placement/assignment-codec.ts';
import { runCli } from '../testing/cli.ts';

async function plan(file: string): Promise<Workload[]> {
  const r = await runCli(['plan', '-f', `src/cli/testdata/${file}`, '-o', 'json']);
  assert.equal(r.code, 0, r.err);
  return (JSON.parse(r.out) as { items: Workload[] }).items;
}
const hosts = (w: Workload) =>
  (w.status?.admission?.podSetAssignments ?? []).flatMap((p) =>
    p.topologyAssignment ? decodeV1beta2(p.topologyAssignment).domains.map((d) => d.values[0]!) : [],
  );
const admitted = (w: Workload) => w.status?.conditions?.some((c) => c.type === 'Admitted' && c.status === 'True') ?? false;

describe('Volcano review regressions', () => {
  it("a Kueue job's assignment is usage in the implicit HyperNode flavor too: no GPU is given twice", async () => {
    const [kueue, volcano] = await plan('volcano-and-kueue-share-nodes.yaml');
    assert.ok(admitted(kueue!));
    assert.equal(admitted(volcano!), false);
  });
  it("a Volcano job sees every node and tier (the implicit flavor first), not a declared flavor's subset", async () => {
    const [w] = await plan('volcano-prefers-implicit-flavor.yaml');
    assert.ok(admitted(w!));
  });
  it('a parent of the same tier as its child is the wider domain of that tier, whatever the names', async () => {
    const [w] = await plan('equal-tier-parent.yaml');
    assert.deepEqual(hosts(w!), ['n0', 'n1', 'n2', 'n3']);
  });
  it('a flag group before a quantifier does not narrow the regex shortcut wrongly', async () => {
    const [w] = await plan('regex-flag-group.yaml');
    assert.equal(hosts(w!).length, 2);
  });
  it('several PodSets try sibling domains of the tightest tier before climbing', async () => {
    const [w] = await plan('multi-podset-sibling-leaf.yaml');
    assert.deepEqual(hosts(w!).sort(), ['n2', 'n3', 'n4']);
  });
});
