// `topoqueue plan` on Volcano PodGroups with sub-groups (issue 15 §1): uneven instances,
// partly running instances, several policies; and examples/volcano-partitions (with a
// Volcano Job whose partitions do not all fit, in plan and simulate).

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import type { Workload } from '../api/objects.ts';
import { decodeV1beta2 } from '../placement/assignment-codec.ts';
import { runCli, tmpFile } from '../testing/cli.ts';

async function plan(...args: string[]): Promise<{ code: number; items: Workload[]; err: string }> {
  const { code, out, err } = await runCli(['plan', ...args, '-o', 'json']);
  return { code, items: code === 0 ? (JSON.parse(out) as { items: Workload[] }).items : [], err };
}

/** Nodes per PodSet, sorted. */
function hosts(w: Workload): Record<string, string[]> {
  return Object.fromEntries(
    (w.status?.admission?.podSetAssignments ?? []).map((p) => [
      p.name.replace(/-[0-9a-f]{8}$/, ''),
      p.topologyAssignment
        ? decodeV1beta2(p.topologyAssignment)
            .domains.flatMap((d) => Array<string>(d.count).fill(d.values[0]!))
            .sort()
        : [],
    ]),
  );
}
const message = (w: Workload) => w.status!.conditions!.find((c) => c.type === 'QuotaReserved')!.message ?? '';

const CLUSTER = 'examples/volcano-spine-leaf/cluster.yaml';

function podGroup(name: string, spec: string, pods: [string, string, string?][]): string {
  const head = `apiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\nmetadata: {name: ${name}, namespace: team-a}\nspec:\n${spec}`;
  const docs = pods.map(
    ([pod, labels, node]) =>
      `apiVersion: v1\nkind: Pod\nmetadata:\n  name: ${pod}\n  namespace: team-a\n  labels: ${labels}\n  annotations: {scheduling.k8s.io/group-name: ${name}}\n` +
      `spec:\n${node ? `  nodeName: ${node}\n` : ''}  containers: [{name: w, image: i, resources: {requests: {nvidia.com/gpu: "8"}}}]\n` +
      (node ? 'status: {phase: Running}\n' : ''),
  );
  return [head, ...docs].join('---\n');
}

describe('plan: Volcano PodGroup sub-groups', () => {
  it('uneven instances are scheduled: an instance of 3 places 2 as its gang and the extra where it fits; an instance of 1 waits', async () => {
    const f = tmpFile(
      'uneven.yaml',
      podGroup(
        'uneven',
        '  minMember: 2\n  networkTopology: {mode: soft}\n  subGroupPolicy:\n' +
          '  - {name: part, subGroupSize: 2, minSubGroups: 1, matchLabelKeys: [p], networkTopology: {mode: hard, highestTierAllowed: 2}}\n',
        [
          ['a0', '{p: "0"}'],
          ['a1', '{p: "0"}'],
          ['a2', '{p: "0"}'],
          ['b0', '{p: "1"}'],
        ],
      ),
    );
    const r = await plan('-f', CLUSTER, '-f', f);
    assert.equal(r.code, 0, r.err);
    // a0, a1 in leaf s0; the extra a2 inside the instance's spine s4; b0 waits for its partner.
    assert.deepEqual(hosts(r.items[0]!), { part: ['node0', 'node1', 'node2'] });
  });

  it('a partly running instance keeps its pending pods inside the leaf it runs in (its tier-1 limit)', async () => {
    const f = tmpFile(
      'partly.yaml',
      podGroup(
        'partly',
        '  networkTopology: {mode: hard, highestTierAllowed: 2}\n  subGroupPolicy:\n' +
          '  - {name: part, subGroupSize: 2, minSubGroups: 2, matchLabelKeys: [p], networkTopology: {mode: hard, highestTierAllowed: 1}}\n',
        [
          ['r0-a', '{p: "0"}'],
          ['r0-b', '{p: "0"}'],
          ['r1-a', '{p: "1"}', 'node2'],
          ['r1-b', '{p: "1"}'],
        ],
      ),
    );
    const r = await plan('-f', CLUSTER, '-f', f);
    assert.equal(r.code, 0, r.err);
    // r1-b joins r1-a in leaf s1; the new instance stays in spine s4 with them (the job's tier 2).
    assert.deepEqual(hosts(r.items[0]!), { part: ['node0', 'node1', 'node3'] });
  });

  it('several policies: the minimum is placed subgroup by subgroup and the rest where it fits, not all or nothing', async () => {
    const pods: [string, string][] = [];
    for (const [role, groups] of [
      ['prefill', 2],
      ['decode', 3],
    ] as const)
      for (let g = 0; g < groups; g++) for (const k of 'ab') pods.push([`${role}-${g}-${k}`, `{role: ${role}, g: "${g}"}`]);
    const policy = (name: string, min: number) =>
      `  - {name: ${name}, subGroupSize: 2, minSubGroups: ${min}, labelSelector: {matchLabels: {role: ${name}}}, matchLabelKeys: [g], networkTopology: {mode: hard, highestTierAllowed: 1}}\n`;
    const f = tmpFile(
      'multi.yaml',
      podGroup(
        'multi',
        `  minMember: 6\n  networkTopology: {mode: soft}\n  subGroupPolicy:\n${policy('prefill', 1)}${policy('decode', 2)}`,
        pods,
      ),
    );
    const r = await plan('-f', CLUSTER, '-f', f);
    assert.equal(r.code, 0, r.err);
    const got = hosts(r.items[0]!);
    // 10 pods on 8 nodes: 4 whole instances, each in one leaf; at least 1 prefill and 2 decode.
    assert.equal(got.prefill!.length + got.decode!.length, 8);
    assert.ok(got.prefill!.length >= 2 && got.decode!.length >= 4, JSON.stringify(got));
    const big = tmpFile('big.yaml', readFileSync(f, 'utf8').replace('minSubGroups: 2', 'minSubGroups: 4'));
    const r2 = await plan('-f', CLUSTER, '-f', big);
    assert.equal(r2.code, 2, 'minSubGroups 4 with 3 decode instances is refused at the input');
  });
});

describe('examples/volcano-partitions', () => {
  it('plan: prefill instance 0 gets 2 pods in a leaf and its extra in the same spine; prefill instance 1 waits; the running decode instance grows in its leaf', async () => {
    const r = await plan('-f', 'examples/volcano-partitions');
    assert.equal(r.code, 0, r.err);
    const pg = r.items.find((w) => w.metadata.name.startsWith('podgroup-llm-serve'))!;
    assert.equal(message(pg), 'Quota reserved');
    assert.deepEqual(hosts(pg), { prefill: ['node0', 'node1', 'node2'], decode: ['node5'] });
    // The Volcano Job after it: its minimum (one partition and the head) in the nodes left.
    const job = r.items.find((w) => w.metadata.name.startsWith('job-encoder'))!;
    assert.deepEqual(hosts(job), { encoder: ['node6', 'node7'], head: ['node3'] });
  });

  it('plan and simulate agree on a Volcano Job with more partitions than fit: the minimum, then whole partitions where a leaf has room', async () => {
    const files = ['-f', 'examples/volcano-partitions/cluster.yaml', '-f', 'examples/volcano-partitions/vcjob.yaml'];
    const r = await plan(...files);
    assert.equal(r.code, 0, r.err);
    const planned = hosts(r.items[0]!);
    assert.deepEqual(planned, { encoder: ['node0', 'node1', 'node4', 'node5', 'node6', 'node7'], head: ['node2'] });
    const report = tmpFile('report.json', '');
    const sim = await runCli(['simulate', ...files, '--report', report]);
    assert.equal(sim.code, 0, sim.err);
    const job = (
      JSON.parse(readFileSync(report, 'utf8')) as {
        workloads: { name: string; placement: { podSet: string; domains: { values: string[]; count: number }[] }[] }[];
      }
    ).workloads.find((w) => w.name === 'encoder')!;
    const simulated = Object.fromEntries(
      job.placement.map((p) => [p.podSet, p.domains.flatMap((d) => Array<string>(d.count).fill(d.values[0]!)).sort()]),
    );
    assert.deepEqual(simulated, planned);
  });
});

describe('simulate: a Volcano PodGroup of bare pods', () => {
  it('simulate runs the example PodGroup as one gang where plan places it: the instances plan picks, the PodGroup managed, the run idle', async () => {
    const files = ['-f', 'examples/volcano-partitions/cluster.yaml', '-f', 'examples/volcano-partitions/podgroup.yaml'];
    const r = await plan(...files);
    assert.equal(r.code, 0, r.err);
    const planned = hosts(r.items[0]!);
    assert.deepEqual(planned, { prefill: ['node0', 'node1', 'node2'], decode: ['node5'] });
    const report = tmpFile('report.json', '');
    const sim = await runCli(['simulate', ...files, '--until', 'idle', '--report', report]);
    assert.equal(sim.code, 0, sim.err);
    assert.match(sim.out, /nothing left to do/);
    const rep = JSON.parse(readFileSync(report, 'utf8')) as {
      workloads: {
        kind: string;
        name: string;
        status: string;
        workloads: string[];
        pods: { name: string; podSet: string; node: string | null }[];
      }[];
      unmanaged: { kind: string; name: string }[];
    };
    assert.deepEqual(rep.unmanaged, [], 'the PodGroup and its running pod are not "not managed"');
    assert.equal(rep.workloads.length, 1);
    const pg = rep.workloads[0]!;
    assert.equal(pg.kind, 'PodGroup');
    assert.equal(pg.workloads.length, 1, 'one gang Workload, not one per pod');
    assert.equal(pg.status, 'Finished');
    // Prefill instance 0 (3 pods) where plan puts it; instance 1 (1 of 2) waits; decode-0-b joins decode-0-a's leaf.
    const nodes = Object.fromEntries(pg.pods.map((p) => [p.name, p.node]));
    assert.deepEqual(nodes, { 'prefill-0-a': 'node0', 'prefill-0-b': 'node1', 'prefill-0-c': 'node2', 'decode-0-b': 'node5' });
    const simulated: Record<string, string[]> = {};
    for (const p of pg.pods) (simulated[p.podSet.replace(/-[0-9a-f]{8}$/, '')] ??= []).push(p.node!);
    for (const v of Object.values(simulated)) v.sort();
    assert.deepEqual(simulated, planned);
  });

  it('simulate starts the pods of the instances the placement filled, not an instance that cannot be ready', async () => {
    // Instance p=1 has one pod of 2 (it waits); its pod sorts first by name and creation.
    const f = tmpFile(
      'skip.yaml',
      podGroup(
        'skip',
        '  minMember: 2\n  subGroupPolicy:\n' +
          '  - {name: part, subGroupSize: 2, minSubGroups: 1, matchLabelKeys: [p], networkTopology: {mode: hard, highestTierAllowed: 1}}\n',
        [
          ['a-lone', '{p: "1"}'],
          ['z-0', '{p: "0"}'],
          ['z-1', '{p: "0"}'],
        ],
      ),
    );
    const r = await plan('-f', CLUSTER, '-f', f);
    assert.equal(r.code, 0, r.err);
    const report = tmpFile('report.json', '');
    const sim = await runCli(['simulate', '-f', CLUSTER, '-f', f, '--until', 'idle', '--report', report]);
    assert.equal(sim.code, 0, sim.err);
    const pg = (JSON.parse(readFileSync(report, 'utf8')) as { workloads: { pods: { name: string; node: string }[] }[] }).workloads[0]!;
    assert.deepEqual(
      pg.pods.map((p) => p.name),
      ['z-0', 'z-1'],
    );
    assert.deepEqual(pg.pods.map((p) => p.node).sort(), hosts(r.items[0]!).part);
  });
});

describe('simulate: a partially admitted Volcano Job', () => {
  it('runs the pods its admission left out in the places of those that succeed, and finishes', async () => {
    const files = ['-f', 'examples/volcano-partitions/cluster.yaml', '-f', 'examples/volcano-partitions/vcjob.yaml'];
    const report = tmpFile('report.json', '');
    const sim = await runCli(['simulate', ...files, '--until', 'idle', '--report', report]);
    assert.equal(sim.code, 0, sim.err);
    const job = (
      JSON.parse(readFileSync(report, 'utf8')) as {
        workloads: {
          name: string;
          status: string;
          placement: { podSet: string; count: number }[];
          pods: { name: string; node: string; phase: string }[];
        }[];
      }
    ).workloads.find((w) => w.name === 'encoder')!;
    // Admitted with 6 of 8 encoder pods (3 partitions) and the head: the last partition waits for room.
    assert.deepEqual(
      job.placement.map((p) => [p.podSet, p.count]),
      [
        ['encoder', 6],
        ['head', 1],
      ],
    );
    assert.equal(job.status, 'Finished');
    assert.equal(job.pods.length, 9);
    assert.ok(
      job.pods.every((p) => p.phase === 'Succeeded'),
      JSON.stringify(job.pods),
    );
    // encoder-6 and encoder-7 run after the first pods, on nodes the admission reserved.
    const reserved = new Set(job.pods.filter((p) => !['encoder-encoder-6', 'encoder-encoder-7'].includes(p.name)).map((p) => p.node));
    for (const late of ['encoder-encoder-6', 'encoder-encoder-7'])
      assert.ok(reserved.has(job.pods.find((p) => p.name === late)!.node), `${late} runs on a reserved node`);
  });
});
