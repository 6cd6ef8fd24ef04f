import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';
import { parse } from 'yaml';
import { HOSTNAME_LABEL } from '../api/keys.ts';
import type { KObject } from '../api/objects.ts';
import type { HyperNode } from '../api/volcano-objects.ts';
import { hyperNode, hyperNodeSnapshotOf, node, seedSpineLeaf, type HyperNodeBuilder, type NodeBuilder } from '../testing/builders.ts';
import { runCli as run, tmpFile } from '../testing/cli.ts';
import { renderTopology } from './topology-show.ts';

/** A kubectl List file of built objects. */
function listFile(name: string, objects: (NodeBuilder | HyperNodeBuilder | KObject)[]): string {
  const items = objects.map((o) => ('build' in o ? o.build() : o));
  return tmpFile(name, JSON.stringify({ apiVersion: 'v1', kind: 'List', items }));
}

const SPINE = 'example.com/spine';
const TOR = 'example.com/tor';
const LEVELS = `${SPINE},${TOR},${HOSTNAME_LABEL}`;
const hex5 = (s: string) => createHash('sha1').update(s).digest('hex').slice(0, 5);
const items = (out: string) => (JSON.parse(out) as { items: HyperNode[] }).items;
const byValue = (hns: HyperNode[], key: string, value: string) => hns.find((h) => h.metadata.labels?.[key] === value)!;

/** `spines` x `tors` x `perTor` nodes with 8 GPUs each. */
const fabric = (spines = 2, tors = 2, perTor = 2) =>
  Array.from({ length: spines }, (_, s) =>
    Array.from({ length: tors }, (_, t) =>
      Array.from({ length: perTor }, (_, n) =>
        node(`s${s}-t${t}-n${n}`)
          .labels({ [SPINE]: `s${s}`, [TOR]: `s${s}-t${t}` })
          .cpu(16)
          .gpu(8),
      ),
    ),
  ).flat(2);

describe('topoqueue hypernodes discover', () => {
  it('tier numbering: -o json gives a List, the key above the node level is tier 1 with node members, the next tier 2 with HyperNode members', async () => {
    const r = await run(['hypernodes', 'discover', '-f', listFile('nodes.json', fabric()), '--levels', LEVELS, '-o', 'json']);
    assert.equal(r.code, 0, r.err);
    const list = JSON.parse(r.out) as { apiVersion: string; kind: string; items: HyperNode[] };
    assert.equal(list.kind, 'List');
    assert.deepEqual(
      list.items.map((h) => `${h.spec.tier} ${h.spec.tierName} ${h.metadata.labels![TOR] ?? h.metadata.labels![SPINE]}`),
      [`1 ${TOR} s0-t0`, `1 ${TOR} s0-t1`, `1 ${TOR} s1-t0`, `1 ${TOR} s1-t1`, `2 ${SPINE} s0`, `2 ${SPINE} s1`],
    );
    const tor = byValue(list.items, TOR, 's0-t0');
    assert.deepEqual(tor.spec.members, [
      { type: 'Node', selector: { exactMatch: { name: 's0-t0-n0' } } },
      { type: 'Node', selector: { exactMatch: { name: 's0-t0-n1' } } },
    ]);
    assert.deepEqual(
      byValue(list.items, SPINE, 's0').spec.members.map((m) => `${m.type}:${m.selector.exactMatch?.name}`),
      [`HyperNode:${tor.metadata.name}`, `HyperNode:${byValue(list.items, TOR, 's0-t1').metadata.name}`].sort(),
    );
    assert.equal(r.err, '');
  });
  it('YAML by default, the same List', async () => {
    const f = listFile('nodes.json', fabric());
    const yaml = await run(['hypernodes', 'discover', '-f', f, '--levels', LEVELS]);
    const json = await run(['hypernodes', 'discover', '-f', f, '--levels', LEVELS, '-o', 'json']);
    assert.equal(yaml.code, 0, yaml.err);
    assert.deepEqual(parse(yaml.out), JSON.parse(json.out));
  });
  it('deterministic names: hypernode-<type>-tier<k>-<5 hex of sha1 of key=value>; --type is lower-cased, other characters as "-"', async () => {
    const f = listFile('nodes.json', fabric());
    const a = await run(['hypernodes', 'discover', '-f', f, '--levels', LEVELS, '-o', 'json']);
    const b = await run(['hypernodes', 'discover', '-f', listFile('nodes.json', fabric().reverse()), '--levels', LEVELS, '-o', 'json']);
    assert.equal(a.out, b.out);
    assert.equal(byValue(items(a.out), SPINE, 's1').metadata.name, `hypernode-label-tier2-${hex5(`${SPINE}=s1`)}`);
    const typed = await run(['hypernodes', 'discover', '-f', f, '--levels', LEVELS, '--type', 'NVL_72', '-o', 'json']);
    assert.equal(byValue(items(typed.out), TOR, 's0-t0').metadata.name, `hypernode-nvl-72-tier1-${hex5(`${TOR}=s0-t0`)}`);
  });
  it('stops at the first missing label: the node is in no HyperNode, and --check reports it by key with its name', async () => {
    const f = listFile('nodes.json', [...fabric(), node('cpu-0'), node('odd').labels({ [SPINE]: 's0' })]);
    const r = await run(['hypernodes', 'discover', '-f', f, '--levels', LEVELS, '-o', 'json']);
    assert.equal(r.code, 0);
    assert.ok(items(r.out).every((h) => h.spec.members.every((m) => !['cpu-0', 'odd'].includes(m.selector.exactMatch!.name))));
    assert.match(
      r.err,
      /^note: 2 node\(s\) have no label example\.com\/tor \(tier 1\) and are in no HyperNode: cpu-0, odd; 1 of them have a higher-level label too/,
    );
    const check = await run(['hypernodes', 'discover', '-f', f, '--levels', LEVELS, '--check']);
    assert.equal(check.code, 1);
    assert.match(check.out, /^! 2 node\(s\) have no label example\.com\/tor \(tier 1\)/);
  });
  it('shared values and a double parent reported by --check: rack labels unique only within a block (examples/tas-basic)', async () => {
    const levels = 'cloud.provider.com/topology-block,cloud.provider.com/topology-rack,kubernetes.io/hostname';
    const r = await run(['hypernodes', 'discover', '-f', 'examples/tas-basic/cluster.yaml', '--levels', levels, '--check']);
    assert.equal(r.code, 1);
    const rack1 = `hypernode-label-tier1-${hex5('cloud.provider.com/topology-rack=rack-1')}`;
    const [b1, b2] = ['block-1', 'block-2'].map((b) => `hypernode-label-tier2-${hex5(`cloud.provider.com/topology-block=${b}`)}`);
    assert.ok(
      r.out.includes(
        `! cloud.provider.com/topology-rack=rack-1 (${rack1}) is under 2 parents: cloud.provider.com/topology-block=block-1 (${b1}; nodes b1-r1-n1, b1-r1-n2, b1-r1-n3, ... (1 more)) and cloud.provider.com/topology-block=block-2 (${b2}; nodes b2-r1-n1, b2-r1-n2, b2-r1-n3, ... (1 more))`,
      ),
      r.out,
    );
    assert.match(r.out, new RegExp(`HyperNode ${rack1} already has a parent ${b1}, and cannot set another parent ${b2}`));
    assert.match(r.out, /\n2 problem\(s\); 4 HyperNode\(s\) \(tier 1: 2, tier 2: 2\) from 16 node\(s\)\n$/);
    // Without --check: the manifests (one rack-1 shared by both blocks), the problem as a note.
    const m = await run(['hypernodes', 'discover', '-f', 'examples/tas-basic/cluster.yaml', '--levels', levels, '-o', 'json']);
    assert.equal(m.code, 0);
    assert.equal(byValue(items(m.out), 'cloud.provider.com/topology-rack', 'rack-1').spec.members.length, 8);
    assert.match(m.err, /^note: cloud\.provider\.com\/topology-rack=rack-1 .* is under 2 parents/);
  });
  it('--check on a clean fabric exits 0 with a summary', async () => {
    const r = await run(['hypernodes', 'discover', '-f', listFile('nodes.json', fabric()), '--levels', LEVELS, '--check']);
    assert.equal(r.code, 0, r.err);
    assert.equal(r.out, 'ok: 6 HyperNode(s) (tier 1: 4, tier 2: 2) from 8 node(s); no problems\n');
  });
  it("reused names: a re-run over its own output changes nothing; an existing label-sourced name (the peer's random suffix) is kept", async () => {
    const nodes = listFile('nodes.json', fabric());
    const first = await run(['hypernodes', 'discover', '-f', nodes, '--levels', LEVELS]);
    const again = await run(['hypernodes', 'discover', '-f', nodes, '-f', tmpFile('hn.yaml', first.out), '--levels', LEVELS]);
    assert.equal(again.code, 0, again.err);
    assert.equal(again.out, first.out);
    const peer = hyperNode('hypernode-label-tier1-x7k2q').nodes('s0-t0-n0').build();
    peer.metadata.labels = { 'volcano.sh/network-topology-source': 'label', [TOR]: 's0-t0' };
    const r = await run(['hypernodes', 'discover', '-f', nodes, '-f', listFile('peer.json', [peer]), '--levels', LEVELS, '-o', 'json']);
    assert.equal(byValue(items(r.out), TOR, 's0-t0').metadata.name, 'hypernode-label-tier1-x7k2q');
    assert.ok(byValue(items(r.out), SPINE, 's0').spec.members.some((m) => m.selector.exactMatch?.name === 'hypernode-label-tier1-x7k2q'));
  });
  it('stale: a label-sourced HyperNode no longer produced is a "# stale" comment, a note with -o json, a problem for --check; hand-written ones are never touched', async () => {
    const before = await run(['hypernodes', 'discover', '-f', listFile('nodes.json', fabric()), '--levels', LEVELS, '-o', 'json']);
    const old = byValue(items(before.out), TOR, 's1-t1').metadata.name;
    const moved = fabric().map((n) => (n.build().metadata.name.startsWith('s1-t1-') ? n.labels({ [TOR]: 's1-t9' }) : n));
    const existing = listFile('hn.json', [...items(before.out), hyperNode('hand-made').tier(1).nodes('s0-t0-n0')]);
    const args = ['hypernodes', 'discover', '-f', listFile('nodes.json', moved), '-f', existing, '--levels', LEVELS];
    const yaml = await run(args);
    assert.equal(yaml.code, 0, yaml.err);
    assert.ok(yaml.out.startsWith(`# stale: ${old} (would be deleted)\napiVersion: v1\n`), yaml.out);
    assert.doesNotMatch(yaml.out, /hand-made/);
    const json = await run([...args, '-o', 'json']);
    assert.match(json.err, new RegExp(`note: stale: ${old} \\(would be deleted\\)`));
    const check = await run([...args, '--check']);
    assert.equal(check.code, 1);
    assert.match(check.out, new RegExp(`^! stale: ${old} \\(would be deleted\\)`));
  });
  it("type name length: more than 20 characters is refused with the peer's message (exit 2)", async () => {
    const r = await run([
      'hypernodes',
      'discover',
      '-f',
      listFile('nodes.json', fabric()),
      '--levels',
      LEVELS,
      '--type',
      'a-very-long-type-name-x',
    ]);
    assert.equal(r.code, 2);
    assert.equal(r.err, 'error: --type: The length of topologyTypeName exceeds 20. topologyTypeName is a-very-long-type-name-x\n');
  });
  it("duplicate labels are refused with the peer's message (exit 2)", async () => {
    const r = await run([
      'hypernodes',
      'discover',
      '-f',
      listFile('nodes.json', fabric()),
      '--levels',
      `${TOR},${SPINE},${TOR},${HOSTNAME_LABEL}`,
    ]);
    assert.equal(r.code, 2);
    assert.equal(r.err, `error: --levels: there are duplicate labels (${TOR} given more than once)\n`);
  });
  it('usage: --levels and -f are required, and the input needs Nodes (exit 2)', async () => {
    assert.match((await run(['hypernodes', 'discover', '-f', listFile('nodes.json', fabric())])).err, /^error: --levels: required/);
    assert.match((await run(['hypernodes', 'discover', '--levels', LEVELS])).err, /^error: -f: at least one -f PATH/);
    const none = await run([
      'hypernodes',
      'discover',
      '-f',
      tmpFile(
        'topology.yaml',
        'apiVersion: kueue.x-k8s.io/v1beta2\nkind: Topology\nmetadata: {name: t}\nspec: {levels: [{nodeLabel: kubernetes.io/hostname}]}\n',
      ),
      '--levels',
      LEVELS,
    ]);
    assert.equal(none.code, 2);
    assert.match(none.err, /no Node in the input/);
    const empty = await run(['hypernodes', 'discover', '-f', tmpFile('empty.yaml', ''), '--levels', LEVELS]);
    assert.equal(empty.code, 2);
    assert.match(empty.err, /empty\.yaml: the input is empty: no object in it/);
  });
});

describe('topology show over HyperNodes', () => {
  const view = (tree: ReturnType<typeof hyperNodeSnapshotOf>['tree'], tierNames: [string, string][] = []) => ({
    tree,
    tierNames: new Map(tierNames),
  });
  it('one line per HyperNode: tier, tierName when known, name, node count, free capacity', () => {
    const { snapshot, tree } = hyperNodeSnapshotOf(
      seedSpineLeaf(),
      Array.from({ length: 8 }, (_, i) => node(`node${i}`).cpu(4)),
    );
    const out = renderTopology(snapshot, 'HyperNodes', { hyperNodes: view(tree, [['s6', 'roce']]) });
    assert.equal(
      out.split('\n').slice(0, 5).join('\n'),
      [
        'HyperNodes: HyperNode tiers 3, 2, 1, then kubernetes.io/hostname; 7 HyperNode(s), 8 node(s) in the tree',
        '  tier 3 (roce) s6  nodes=8  free: pods=880 cpu=32',
        '    tier 2 s4  nodes=4  free: pods=440 cpu=16',
        '      tier 1 s0  nodes=2  free: pods=220 cpu=8',
        '        kubernetes.io/hostname=node0  nodes=1  free: pods=110 cpu=4',
      ].join('\n'),
    );
  });
  it('a HyperNode standing in for a skipped tier and a node in no HyperNode are shown once; HyperNodes before nodes', () => {
    const hns = [
      ...seedSpineLeaf().slice(0, 6),
      hyperNode('s6').tier(3).hyperNodes('s4', 's5', 's7'),
      hyperNode('s7').tier(1, 'leaf').nodes('node8'),
      hyperNode('s8').tier(2).nodes('node9'),
    ];
    const { snapshot, tree } = hyperNodeSnapshotOf(
      hns,
      Array.from({ length: 11 }, (_, i) => node(`node${i}`).cpu(1)),
    );
    const out = renderTopology(snapshot, 'T', { hyperNodes: view(tree, [['s7', 'leaf']]) });
    assert.match(out, /\n {4}tier 1 \(leaf\) s7 \(also tier 2\) {2}nodes=1 /);
    assert.match(
      out,
      /\n {2}tier 2 s8 \(also tier 3\) {2}nodes=1 .*\n {4}kubernetes\.io\/hostname=node9 \(in no HyperNode of tier 1\) {2}nodes=1 /,
    );
    assert.match(out, /\n {2}kubernetes\.io\/hostname=node10 \(in no HyperNode\) {2}nodes=1 [^\n]*$/);
    assert.equal(out.match(/s7/g)!.length, 1);
    assert.equal(out.match(/node10/g)!.length, 1);
    assert.match(out.split('\n')[0]!, /9 HyperNode\(s\), 11 node\(s\) in the tree \(1 in no HyperNode\)$/);
  });
  it('problems of the tree (double parent, cycle) come first, with "!"', () => {
    const hns = [
      hyperNode('a').tier(1).nodes('node0'),
      hyperNode('p1').tier(2).hyperNodes('a'),
      hyperNode('p2').tier(2).hyperNodes('a'),
      hyperNode('x').tier(1).hyperNodes('y'),
      hyperNode('y').tier(2).hyperNodes('x'),
    ];
    const { snapshot, tree } = hyperNodeSnapshotOf(hns, [node('node0').cpu(1)]);
    const lines = renderTopology(snapshot, 'T', { hyperNodes: view(tree) }).split('\n');
    assert.deepEqual(lines.slice(1, 5), [
      '! HyperNode a already has a parent p1, and cannot set another parent p2',
      '! cyclic dependency detected: HyperNode x is already in the ancestor chain [y x]',
      '! hyperNodes are not ready for scheduling: jobs with a network topology stay pending until the HyperNodes are fixed',
      '  not shown, no node of the tree under them: p2, x, y',
    ]);
  });
  it('--depth and --max-children keep working', () => {
    const { snapshot, tree } = hyperNodeSnapshotOf(
      seedSpineLeaf(),
      Array.from({ length: 9 }, (_, i) => node(`node${i}`).cpu(1)),
    );
    const out = renderTopology(snapshot, 'T', { depth: 2, maxChildren: 1, hyperNodes: view(tree) });
    assert.deepEqual(out.split('\n').slice(1), [
      '  tier 3 s6  nodes=8  free: pods=880 cpu=8',
      '    tier 2 s4  nodes=4  free: pods=440 cpu=4',
      '    ... 1 more (4 node(s)); raise --max-children to see them',
      '  ... 1 more (1 node(s)); raise --max-children to see them',
    ]);
  });
  it('from the command line: discover, then show the nodes with the HyperNodes (implicit flavor)', async () => {
    const nodes = listFile('nodes.json', fabric());
    const hns = await run(['hypernodes', 'discover', '-f', nodes, '--levels', LEVELS]);
    const r = await run(['topology', 'show', '-f', nodes, '-f', tmpFile('hn.yaml', hns.out)]);
    assert.equal(r.code, 0, r.err);
    assert.match(
      r.out,
      /^HyperNodes \(implicit ResourceFlavor hypernodes\): HyperNode tiers 2, 1, then kubernetes\.io\/hostname; 6 HyperNode\(s\), 8 node\(s\) in the tree\n/,
    );
    assert.ok(
      r.out.includes(
        `\n  tier 2 (${SPINE}) hypernode-label-tier2-${hex5(`${SPINE}=s0`)}  nodes=4  free: pods=440 cpu=64 nvidia.com/gpu=32  used: pods=0 cpu=0 nvidia.com/gpu=0  total: pods=440 cpu=64 nvidia.com/gpu=32\n`,
      ),
      r.out,
    );
  });
  it('from the command line: the double parent of examples/tas-basic is printed first', async () => {
    const levels = 'cloud.provider.com/topology-block,cloud.provider.com/topology-rack,kubernetes.io/hostname';
    const hns = await run(['hypernodes', 'discover', '-f', 'examples/tas-basic/cluster.yaml', '--levels', levels]);
    const r = await run([
      'topology',
      'show',
      '-f',
      'examples/tas-basic/cluster.yaml',
      '-f',
      tmpFile('hn.yaml', hns.out),
      '--flavor',
      'hypernodes',
    ]);
    assert.equal(r.code, 0, r.err);
    assert.match(
      r.out.split('\n')[1]!,
      /^! HyperNode hypernode-label-tier1-\w{5} already has a parent hypernode-label-tier2-\w{5}, and cannot set another parent hypernode-label-tier2-\w{5}$/,
    );
  });
  it('a 1,000-node tree stays readable: siblings past --max-children collapse', async () => {
    const nodes = listFile('nodes.json', fabric(5, 25, 8));
    const hns = await run(['hypernodes', 'discover', '-f', nodes, '--levels', LEVELS]);
    const r = await run(['topology', 'show', '-f', nodes, '-f', tmpFile('hn.yaml', hns.out), '--max-children', '5']);
    assert.equal(r.code, 0, r.err);
    const lines = r.out.trimEnd().split('\n');
    assert.match(lines[0]!, /130 HyperNode\(s\), 1000 node\(s\) in the tree$/);
    assert.ok(lines.length < 200, `${lines.length} lines`);
    assert.match(r.out, /\n {4}\.\.\. 20 more \(160 node\(s\)\); raise --max-children to see them\n/);
  });
});
