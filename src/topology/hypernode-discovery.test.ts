import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';
import { HOSTNAME_LABEL } from '../api/keys.ts';
import type { HyperNode } from '../api/volcano-objects.ts';
import { hyperNode, node, type NodeBuilder } from '../testing/builders.ts';
import { checkDiscoveryConfig, discoverHyperNodes, typeNamePart, type DiscoveryConfig } from './hypernode-discovery.ts';
import { HyperNodeTree } from './hypernode-tree.ts';
import { nodeInfoFromNode } from './source.ts';

const SPINE = 'example.com/spine';
const TOR = 'example.com/tor';
const LEVELS = [SPINE, TOR, HOSTNAME_LABEL];

const infos = (...ns: NodeBuilder[]) => ns.map((b) => nodeInfoFromNode(b.build()));
const hex5 = (s: string) => createHash('sha1').update(s).digest('hex').slice(0, 5);
const discover = (ns: NodeBuilder[], config: Partial<DiscoveryConfig> = {}, existing: HyperNode[] = []) =>
  discoverHyperNodes(infos(...ns), existing, { levels: LEVELS, ...config });
const byValue = (hns: HyperNode[], key: string, value: string) => hns.find((h) => h.metadata.labels?.[key] === value)!;
const members = (h: HyperNode) => h.spec.members.map((m) => `${m.type}:${m.selector.exactMatch!.name}`);
/** An existing HyperNode as label discovery would have left it. */
const discovered = (name: string, tier: number, labels: Record<string, string>): HyperNode => {
  const h = hyperNode(name).tier(tier).nodes('old-node').build();
  h.metadata.labels = { 'volcano.sh/network-topology-source': 'label', ...labels };
  return h;
};

/** Two spines, two tors each, two nodes per tor. */
const fabric = () =>
  ['s1', 's2'].flatMap((s) =>
    ['t1', 't2'].flatMap((t) => ['n1', 'n2'].map((n) => node(`${s}-${t}-${n}`).labels({ [SPINE]: s, [TOR]: `${s}-${t}` }))),
  );

describe('HyperNode label discovery (volcano-hypernode.md §6.2)', () => {
  it('tier numbering: the key above the node level is tier 1, the next tier 2; tierName is the key; labels name the source and the value', () => {
    const r = discover(fabric());
    assert.deepEqual(
      r.hyperNodes.map((h) => [h.spec.tier, h.spec.tierName, h.metadata.labels![SPINE] ?? h.metadata.labels![TOR]]),
      [
        [1, TOR, 's1-t1'],
        [1, TOR, 's1-t2'],
        [1, TOR, 's2-t1'],
        [1, TOR, 's2-t2'],
        [2, SPINE, 's1'],
        [2, SPINE, 's2'],
      ],
    );
    const tor = byValue(r.hyperNodes, TOR, 's1-t1');
    assert.deepEqual(tor.metadata.labels, { 'volcano.sh/network-topology-source': 'label', [TOR]: 's1-t1' });
    assert.equal(tor.apiVersion, 'topology.volcano.sh/v1alpha1');
    assert.deepEqual(members(tor), ['Node:s1-t1-n1', 'Node:s1-t1-n2']);
    assert.deepEqual(
      members(byValue(r.hyperNodes, SPINE, 's1')),
      [
        `HyperNode:${byValue(r.hyperNodes, TOR, 's1-t1').metadata.name}`,
        `HyperNode:${byValue(r.hyperNodes, TOR, 's1-t2').metadata.name}`,
      ].sort(),
    );
    assert.deepEqual(r.problems, []);
  });
  it('the last key is the node level: never a HyperNode, and tier-1 members are node names, not its values', () => {
    const r = discover([
      node('n1')
        .hostname('host-a')
        .labels({ [SPINE]: 's', [TOR]: 't' }),
    ]);
    assert.equal(r.hyperNodes.length, 2);
    assert.ok(r.hyperNodes.every((h) => h.spec.tierName !== HOSTNAME_LABEL));
    assert.deepEqual(members(byValue(r.hyperNodes, TOR, 't')), ['Node:n1']);
  });
  it('stops at the first missing label: a node with only a tier-2 label contributes nothing and is reported', () => {
    const r = discover([
      node('a').labels({ [SPINE]: 's', [TOR]: 't' }),
      node('b').labels({ [SPINE]: 'lonely' }),
      node('c'),
      node('d').labels({ [TOR]: 't' }),
    ]);
    assert.equal(byValue(r.hyperNodes, SPINE, 'lonely'), undefined);
    assert.deepEqual(members(byValue(r.hyperNodes, TOR, 't')), ['Node:a', 'Node:d']);
    assert.deepEqual(
      r.problems.map((p) => [p.reason, p.message]),
      [
        [
          'MissingLabel',
          `2 node(s) have no label ${TOR} (tier 1) and are in no HyperNode: b, c; 1 of them have a higher-level label too (ignored: the walk stops at the first missing label)`,
        ],
        ['MissingLabel', `1 node(s) have no label ${SPINE} (tier 2), so their HyperNodes stop at tier 1: d`],
      ],
    );
  });
  it('shared values: one HyperNode per (key, value) whatever the number of nodes carrying it', () => {
    const r = discover(fabric());
    assert.equal(r.hyperNodes.filter((h) => h.metadata.labels![TOR] === 's2-t2').length, 1);
    assert.equal(new Set(r.hyperNodes.map((h) => h.metadata.name)).size, r.hyperNodes.length);
  });
  it('a value under two parents: one HyperNode listed by both, reported with the value, both parents and their nodes, as the tree would refuse it', () => {
    const ns = [
      node('a1').labels({ [SPINE]: 'a', [TOR]: 'rack-1' }),
      node('a2').labels({ [SPINE]: 'a', [TOR]: 'rack-1' }),
      node('b1').labels({ [SPINE]: 'b', [TOR]: 'rack-1' }),
    ];
    const r = discover(ns);
    const rack = byValue(r.hyperNodes, TOR, 'rack-1').metadata.name;
    const [pa, pb] = [byValue(r.hyperNodes, SPINE, 'a').metadata.name, byValue(r.hyperNodes, SPINE, 'b').metadata.name];
    assert.deepEqual(members(byValue(r.hyperNodes, SPINE, 'a')), [`HyperNode:${rack}`]);
    assert.deepEqual(members(byValue(r.hyperNodes, SPINE, 'b')), [`HyperNode:${rack}`]);
    const [p] = r.problems;
    assert.equal(p!.reason, 'MultipleParents');
    assert.equal(
      p!.message,
      `${TOR}=rack-1 (${rack}) is under 2 parents: ${SPINE}=a (${pa}; nodes a1, a2) and ${SPINE}=b (${pb}; nodes b1). A value must be unique per label key across the cluster; the scheduler refuses the tree: HyperNode ${rack} already has a parent ${pa}, and cannot set another parent ${pb}`,
    );
    // The output fed to the tree gives the same refusal.
    assert.deepEqual(
      new HyperNodeTree(r.hyperNodes, infos(...ns)).problems.map((x) => x.message),
      [`HyperNode ${rack} already has a parent ${pa}, and cannot set another parent ${pb}`],
    );
  });
  it('deterministic names: hypernode-<type>-tier<k>-<5 hex of sha1 of key=value>, whatever the node order', () => {
    const a = discover(fabric());
    const b = discover(fabric().reverse());
    assert.deepEqual(a, b);
    assert.equal(byValue(a.hyperNodes, TOR, 's1-t1').metadata.name, `hypernode-label-tier1-${hex5(`${TOR}=s1-t1`)}`);
    assert.equal(byValue(a.hyperNodes, SPINE, 's2').metadata.name, `hypernode-label-tier2-${hex5(`${SPINE}=s2`)}`);
    assert.equal(
      byValue(discover(fabric(), { type: 'RoCE_A2' }).hyperNodes, SPINE, 's2').metadata.name,
      `hypernode-roce-a2-tier2-${hex5(`${SPINE}=s2`)}`,
    );
  });
  it('a generated name already taken (here by a hand-written HyperNode) is hashed again, deterministically', () => {
    const taken = `hypernode-label-tier2-${hex5(`${SPINE}=s1`)}`;
    const r = discover(fabric(), {}, [hyperNode(taken).tier(5).nodes('x').build()]);
    const name = byValue(r.hyperNodes, SPINE, 's1').metadata.name;
    assert.equal(name, `hypernode-label-tier2-${hex5(`${SPINE}=s1#1`)}`);
    assert.deepEqual(r.stale, []);
  });
  it('reused names: an existing label-sourced HyperNode with the same {key: value} label and tier prefix keeps its name', () => {
    const existing = [
      discovered('hypernode-label-tier1-keep1', 1, { [TOR]: 's1-t1' }),
      discovered('hypernode-other-tier1-nope1', 1, { [TOR]: 's1-t2' }), // another type
      discovered('hypernode-label-tier2-nope2', 2, { [TOR]: 's2-t1' }), // another tier
      {
        ...hyperNode('hypernode-label-tier1-hand1').nodes('x').build(),
        metadata: { name: 'hypernode-label-tier1-hand1', labels: { [TOR]: 's2-t2' } },
      }, // hand-written
    ];
    const r = discover(fabric(), {}, existing);
    assert.equal(byValue(r.hyperNodes, TOR, 's1-t1').metadata.name, 'hypernode-label-tier1-keep1');
    assert.equal(byValue(r.hyperNodes, TOR, 's1-t2').metadata.name, `hypernode-label-tier1-${hex5(`${TOR}=s1-t2`)}`);
    assert.equal(byValue(r.hyperNodes, TOR, 's2-t1').metadata.name, `hypernode-label-tier1-${hex5(`${TOR}=s2-t1`)}`);
    assert.equal(byValue(r.hyperNodes, TOR, 's2-t2').metadata.name, `hypernode-label-tier1-${hex5(`${TOR}=s2-t2`)}`);
    // The parent lists the reused child name.
    assert.ok(members(byValue(r.hyperNodes, SPINE, 's1')).includes('HyperNode:hypernode-label-tier1-keep1'));
  });
  it('tier 1 does not claim a tier-10 name (the prefix ends with a dash)', () => {
    const r = discover(fabric(), {}, [discovered('hypernode-label-tier10-abcde', 10, { [TOR]: 's1-t1' })]);
    assert.equal(byValue(r.hyperNodes, TOR, 's1-t1').metadata.name, `hypernode-label-tier1-${hex5(`${TOR}=s1-t1`)}`);
  });
  it('stale: label-sourced HyperNodes of this type no longer produced; hand-written and other types are never touched', () => {
    const existing = [
      discovered('hypernode-label-tier1-gone1', 1, { [TOR]: 'rack-gone' }),
      discovered('hypernode-label-tier2-dup00', 2, { [SPINE]: 's1' }),
      discovered('hypernode-label-tier2-dup01', 2, { [SPINE]: 's1' }), // a second one for the same value: one is kept
      discovered('hypernode-other-tier1-gone2', 1, { [TOR]: 'rack-gone' }),
      hyperNode('hand-written').nodes('x').build(),
    ];
    const r = discover(fabric(), {}, existing);
    assert.equal(byValue(r.hyperNodes, SPINE, 's1').metadata.name, 'hypernode-label-tier2-dup00');
    assert.deepEqual(r.stale, ['hypernode-label-tier1-gone1', 'hypernode-label-tier2-dup01']);
    assert.deepEqual(
      r.problems.map((p) => p.message),
      [
        'stale: hypernode-label-tier1-gone1 (would be deleted): label-sourced and no longer produced by these labels',
        'stale: hypernode-label-tier2-dup01 (would be deleted): label-sourced and no longer produced by these labels',
      ],
    );
  });
});

describe('label discovery configuration', () => {
  it('type name: at most 20 characters, with the peer\'s message; lower-cased with other characters as "-"', () => {
    assert.deepEqual(checkDiscoveryConfig({ levels: LEVELS, type: 'a'.repeat(20) }), []);
    assert.deepEqual(checkDiscoveryConfig({ levels: LEVELS, type: 'a'.repeat(21) }), [
      { field: 'type', message: `The length of topologyTypeName exceeds 20. topologyTypeName is ${'a'.repeat(21)}` },
    ]);
    assert.equal(typeNamePart('TopologyA2_x/y'), 'topologya2-x-y');
    assert.equal(checkDiscoveryConfig({ levels: LEVELS, type: 'a.-b' })[0]?.field, 'type');
  });
  it("duplicate labels are refused with the peer's message", () => {
    assert.deepEqual(checkDiscoveryConfig({ levels: [TOR, SPINE, TOR, HOSTNAME_LABEL] }), [
      { field: 'levels', message: `there are duplicate labels (${TOR} given more than once)` },
    ]);
    assert.throws(() => discover(fabric(), { levels: [TOR, TOR] }), /there are duplicate labels/);
  });
  it('at least one key above the node level, and valid label keys', () => {
    assert.match(checkDiscoveryConfig({ levels: [HOSTNAME_LABEL] })[0]!.message, /needs at least two label keys/);
    assert.match(checkDiscoveryConfig({ levels: ['bad key', HOSTNAME_LABEL] })[0]!.message, /^key 1 \("bad key"\): not a valid label key/);
  });
});
