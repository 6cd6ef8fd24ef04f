import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { hyperNode, hyperNodeSnapshotOf, node, seedSpineLeaf } from '../testing/builders.ts';
import { HyperNodeTopologySource, HyperNodeTree, tierLevelKey, tierOfLevelKey } from './hypernode-tree.ts';
import { nodeInfoFromNode } from './source.ts';

const nodes = (n: number, prefix = 'node') => Array.from({ length: n }, (_, i) => node(`${prefix}${i}`).cpu(1));
const infos = (n: number) => nodes(n).map((b) => nodeInfoFromNode(b.build()));
const tree = (hns: ReturnType<typeof hyperNode>[], n = 8) =>
  new HyperNodeTree(
    hns.map((h) => h.build()),
    infos(n),
  );

describe('HyperNode tree (volcano-hypernode.md §2)', () => {
  it('seed example 1: tiers, parents, the virtual root one tier above the highest', () => {
    const t = tree(seedSpineLeaf());
    assert.deepEqual(t.tiers, [1, 2, 3]);
    assert.equal(t.rootTier, 4);
    assert.deepEqual(t.ancestors('s0'), ['s0', 's4', 's6']);
    assert.deepEqual([...t.nodesOf('s4')].sort(), ['node0', 'node1', 'node2', 'node3']);
    assert.equal(t.leafHyperNode('node5'), 's2');
    assert.ok(t.ready);
  });
  it('a HyperNode-type member selected by regexMatch or labelMatch is ignored, with a warning naming it', () => {
    const t = tree([
      hyperNode('leaf-a').tier(1).nodes('node0'),
      hyperNode('spine')
        .tier(2)
        .hyperNodes('leaf-a')
        .member({ type: 'HyperNode', selector: { regexMatch: { pattern: '^leaf-' } } })
        .member({ type: 'HyperNode', selector: { labelMatch: { matchLabels: { t: 'leaf' } } } }),
    ]);
    assert.ok(t.ready);
    assert.deepEqual([...t.nodesOf('spine')], ['node0']);
    assert.equal(t.warnings.length, 2);
    assert.match(
      t.warnings[0]!,
      /^HyperNode spine: spec\.members\[1\] \(type HyperNode\) uses regexMatch, which Volcano ignores for HyperNode members: the member is ignored/,
    );
    assert.match(t.warnings[1]!, /^HyperNode spine: spec\.members\[2\] \(type HyperNode\) uses labelMatch/);
  });
  it('tier levels: highest tier first, then the hostname', () => {
    const { snapshot } = hyperNodeSnapshotOf(seedSpineLeaf(), nodes(8));
    assert.deepEqual(snapshot.levels, [tierLevelKey(3), tierLevelKey(2), tierLevelKey(1), 'kubernetes.io/hostname']);
    assert.deepEqual(snapshot.values(snapshot.leafById('node3')!), ['s6', 's4', 's1', 'node3']);
    assert.equal(tierOfLevelKey('topology.volcano.sh/tier-12'), 12);
    assert.equal(tierOfLevelKey('cloud.com/rack'), undefined);
  });
  it('a HyperNode with two parents: the first claimant wins, the tree is not ready, the message names all three', () => {
    const t = tree([
      hyperNode('a').tier(1).nodes('node0'),
      hyperNode('p1').tier(2).hyperNodes('a'),
      hyperNode('p2').tier(2).hyperNodes('a'),
    ]);
    assert.equal(t.ready, false);
    assert.equal(t.parentOf('a'), 'p1');
    assert.deepEqual(
      t.problems.map((p) => p.message),
      ['HyperNode a already has a parent p1, and cannot set another parent p2'],
    );
    assert.deepEqual(
      t.problemsOf('p2').map((p) => p.reason),
      ['MultipleParents'],
    );
  });
  it('a cycle is reported and does not hang', () => {
    const t = tree([hyperNode('a').tier(1).hyperNodes('b'), hyperNode('b').tier(2).hyperNodes('a')]);
    assert.equal(t.ready, false);
    assert.match(t.problems[0]!.message, /^cyclic dependency detected: HyperNode a is already in the ancestor chain \[b a\]$/);
  });
  it('members by exact name (even without a Node), regex over node names (unanchored), labels; an empty selector selects nothing', () => {
    const ns = [node('gpu-1').labels({ pool: 'x' }), node('gpu-20'), node('xgpu-2'), node('cpu-1').labels({ pool: 'x' })].map((b) =>
      nodeInfoFromNode(b.build()),
    );
    const t = new HyperNodeTree(
      [
        hyperNode('exact').nodes('ghost', 'cpu-1').build(),
        hyperNode('rx').regex('gpu-2').build(),
        hyperNode('lbl').labelMatch({ pool: 'x' }).build(),
        hyperNode('empty').labelMatch({}).build(),
      ],
      ns,
    );
    assert.deepEqual([...t.nodesOf('exact')].sort(), ['cpu-1', 'ghost']);
    assert.deepEqual([...t.nodesOf('rx')].sort(), ['gpu-20', 'xgpu-2']);
    assert.deepEqual([...t.nodesOf('lbl')].sort(), ['cpu-1', 'gpu-1']);
    assert.deepEqual([...t.nodesOf('empty')], []);
    assert.equal(t.nodeCount('exact'), 2);
  });
  it('a node in two HyperNodes of one tier belongs to the first by name (the peer picks arbitrarily)', () => {
    const t = tree([hyperNode('b').nodes('node0'), hyperNode('a').nodes('node0')]);
    assert.equal(t.leafHyperNode('node0'), 'a');
  });
  it('trees of different depths: a skipped tier is stood in for by the HyperNode below it', () => {
    const hns = [...seedSpineLeaf(), hyperNode('s7').tier(1).nodes('node8', 'node9')];
    hns[6] = hyperNode('s6').tier(3).hyperNodes('s4', 's5', 's7');
    const { snapshot } = hyperNodeSnapshotOf(hns, nodes(10));
    assert.deepEqual(snapshot.values(snapshot.leafById('node9')!), ['s6', 's7', 's7', 'node9']);
  });
  it('a node in no HyperNode is its own domain at every tier', () => {
    const { snapshot } = hyperNodeSnapshotOf(seedSpineLeaf(), nodes(9));
    assert.deepEqual(snapshot.values(snapshot.leafById('node8')!), ['node8', 'node8', 'node8', 'node8']);
  });
  it('a source over some tiers only', () => {
    const src = new HyperNodeTopologySource('t', tree(seedSpineLeaf()), [2, 1]);
    assert.deepEqual(src.levels, [tierLevelKey(2), tierLevelKey(1), 'kubernetes.io/hostname']);
  });
  it('tierName maps to a tier; a conflict is a warning and the last one wins', () => {
    const t = tree([hyperNode('a').tier(1, 'leaf').nodes('node0'), hyperNode('b').tier(2, 'leaf').nodes('node1')]);
    assert.equal(t.tierOfName('leaf'), 2);
    assert.deepEqual(t.warnings, ['Conflicting tiers for tierName leaf: existing 1, new 2. Using 2.']);
  });
});

describe('member resolution shortcuts', () => {
  it('literal prefixes of anchored patterns', async () => {
    const { literalPrefix } = await import('./hypernode-tree.ts');
    assert.equal(literalPrefix('^gpu-12-'), 'gpu-12-');
    assert.equal(literalPrefix('^gpu\\.a-[0-9]+'), 'gpu.a-');
    assert.equal(literalPrefix('^abc*'), 'ab');
    assert.equal(literalPrefix('^ab+'), 'ab');
    assert.equal(literalPrefix('^a|b'), '');
    assert.equal(literalPrefix('gpu-1'), '');
    assert.equal(literalPrefix('^(?i)gpu'), '');
  });
  it('indexed resolution gives the same members as testing every node', () => {
    const ns = ['gpu-1-a', 'gpu-1-b', 'gpu-10-a', 'gpu-2-a', 'xgpu-1-a'].map((n, i) =>
      nodeInfoFromNode(
        node(n)
          .labels({ rack: `r${i % 2}`, pool: i < 3 ? 'p' : 'q' })
          .build(),
      ),
    );
    const t = new HyperNodeTree(
      [
        hyperNode('pre').regex('^gpu-1-').build(),
        hyperNode('alt').regex('^gpu-2|xgpu').build(),
        hyperNode('in').build(),
        hyperNode('ml').labelMatch({ rack: 'r0', pool: 'p' }).build(),
      ].map((h) => {
        if (h.metadata.name === 'in')
          h.spec.members = [
            {
              type: 'Node',
              selector: {
                labelMatch: {
                  matchExpressions: [
                    { key: 'rack', operator: 'In', values: ['r1'] },
                    { key: 'pool', operator: 'NotIn', values: ['q'] },
                  ],
                },
              },
            },
          ];
        return h;
      }),
      ns,
    );
    assert.deepEqual([...t.nodesOf('pre')].sort(), ['gpu-1-a', 'gpu-1-b']);
    assert.deepEqual([...t.nodesOf('alt')].sort(), ['gpu-2-a', 'xgpu-1-a']);
    assert.deepEqual([...t.nodesOf('in')].sort(), ['gpu-1-b']);
    assert.deepEqual([...t.nodesOf('ml')].sort(), ['gpu-1-a', 'gpu-10-a']);
  });
});
