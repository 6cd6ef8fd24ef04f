import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KObject } from '../api/objects.ts';
import { hyperNode, node } from '../testing/builders.ts';
import { tasEnv, type TasEnv } from '../testing/tas-runtime.ts';
import { retryOnConflict } from '../runtime/store.ts';
import { HYPERNODE_READY_MESSAGE, hyperNodeStatusController, type HyperNodeStatusOptions } from './hypernode-status.ts';

const RACK = 'example.com/rack';
const HOST = 'kubernetes.io/hostname';

async function env(objects: KObject[], opts: HyperNodeStatusOptions = {}): Promise<TasEnv> {
  const e = await tasEnv(objects, [hyperNodeStatusController(opts)]);
  await e.m.run();
  return e;
}

const hn = (e: TasEnv, name: string) => e.store.getSync('HyperNode', undefined, name)!;
const count = (e: TasEnv, name: string) => hn(e, name).status?.nodeCount;
const ready = (e: TasEnv, name: string) => hn(e, name).status?.conditions?.find((c) => c.type === 'Ready');

describe('HyperNode status: nodeCount', () => {
  it('follows nodes added and deleted (exact names count even without a Node; regex members count matching Nodes)', async () => {
    const e = await env([
      hyperNode('s0').tier(1).nodes('x').regex('^gpu-').build(),
      node('gpu-1').build(),
      node('gpu-2').build(),
      node('cpu-1').build(),
    ]);
    assert.equal(count(e, 's0'), 3);
    await e.store.create(node('gpu-3').build());
    await e.m.run();
    assert.equal(count(e, 's0'), 4);
    await e.store.delete('Node', undefined, 'gpu-1');
    await e.store.delete('Node', undefined, 'gpu-2');
    await e.m.run();
    assert.equal(count(e, 's0'), 2);
    assert.deepEqual(e.m.errors, []);
  });

  it('counts direct members only: a spine over two leaves reports 2', async () => {
    const e = await env([
      hyperNode('leaf-a').tier(1).nodes('n0', 'n1', 'n2').build(),
      hyperNode('leaf-b').tier(1).nodes('n3').build(),
      hyperNode('spine').tier(2).hyperNodes('leaf-a', 'leaf-b').build(),
    ]);
    assert.deepEqual([count(e, 'leaf-a'), count(e, 'leaf-b'), count(e, 'spine')], [3, 1, 2]);
  });

  it('a label member follows node label changes; a node in two selectors counts once', async () => {
    const e = await env([
      hyperNode('r1')
        .tier(1)
        .labelMatch({ [RACK]: 'r1' })
        .nodes('a')
        .build(),
      node('a')
        .labels({ [RACK]: 'r1' })
        .build(),
      node('b')
        .labels({ [RACK]: 'r2' })
        .build(),
    ]);
    assert.equal(count(e, 'r1'), 1);
    await retryOnConflict(e.store, 'Node', undefined, 'b', (n) => void (n.metadata.labels = { ...n.metadata.labels, [RACK]: 'r1' }));
    await e.m.run();
    assert.equal(count(e, 'r1'), 2);
  });

  it('writes nothing when nothing changed', async () => {
    const e = await env([hyperNode('s0').tier(1).nodes('a').build(), node('a').build()]);
    const writes = e.store.writes.status;
    await retryOnConflict(e.store, 'Node', undefined, 'a', (n) => void (n.metadata.labels = { ...n.metadata.labels, other: 'x' }));
    await e.m.run();
    assert.equal(e.store.writes.status, writes);
  });
});

describe('HyperNode status: Ready condition', () => {
  it('a second parent makes the HyperNodes involved Ready=False (MultipleParents) and the others TreeNotReady, until fixed', async () => {
    const objects = [
      hyperNode('s0').tier(1).nodes('a').build(),
      hyperNode('p1').tier(2).hyperNodes('s0').build(),
      hyperNode('p2').tier(2).hyperNodes('s0').build(),
      hyperNode('other').tier(1).nodes('b').build(),
    ];
    const e = await env(objects);
    const message = 'HyperNode s0 already has a parent p1, and cannot set another parent p2';
    for (const name of ['s0', 'p1', 'p2'])
      assert.deepEqual(
        { ...ready(e, name), lastTransitionTime: undefined },
        { type: 'Ready', status: 'False', reason: 'MultipleParents', message, observedGeneration: 1, lastTransitionTime: undefined },
      );
    assert.equal(ready(e, 'other')!.reason, 'TreeNotReady');
    assert.equal(ready(e, 'other')!.message, `hyperNodes are not ready for scheduling: ${message}`);
    await e.store.delete('HyperNode', undefined, 'p2');
    await e.m.run();
    for (const name of ['s0', 'p1', 'other'])
      assert.deepEqual([ready(e, name)!.status, ready(e, name)!.message], ['True', HYPERNODE_READY_MESSAGE]);
  });

  it('an invalid regex member is reported on its HyperNode only', async () => {
    const e = await env([
      hyperNode('bad').tier(1).regex('gpu-(').build(),
      hyperNode('good').tier(1).nodes('a').build(),
      node('gpu-1').build(),
    ]);
    assert.equal(ready(e, 'bad')!.reason, 'InvalidMember');
    assert.match(
      ready(e, 'bad')!.message!,
      /spec.members\[0\]: member regexMatch pattern is invalid: error parsing regexp: missing closing \)/,
    );
    assert.equal(count(e, 'bad'), 0);
    assert.equal(ready(e, 'good')!.status, 'True');
  });
});

describe('HyperNode label discovery', () => {
  const discovery = { discovery: [{ levels: [RACK, HOST] }] };
  const rackNodes = () => [
    node('n1')
      .labels({ [RACK]: 'r1' })
      .build(),
    node('n2')
      .labels({ [RACK]: 'r1' })
      .build(),
    node('n3')
      .labels({ [RACK]: 'r2' })
      .build(),
  ];
  const discovered = (e: TasEnv) =>
    e.store
      .listSync('HyperNode')
      .map(
        (h) => [h.metadata.labels?.[RACK], h.spec.members.map((m) => m.selector.exactMatch?.name).join(','), h.status?.nodeCount] as const,
      )
      .sort();

  it('creates one tier-1 HyperNode per rack, with its status, and follows relabelled and deleted nodes', async () => {
    const e = await env(rackNodes(), discovery);
    assert.deepEqual(discovered(e), [
      ['r1', 'n1,n2', 2],
      ['r2', 'n3', 1],
    ]);
    const r2 = e.store.listSync('HyperNode').find((h) => h.metadata.labels?.[RACK] === 'r2')!;
    assert.equal(r2.spec.tierName, RACK);
    assert.equal(r2.metadata.labels?.['volcano.sh/network-topology-source'], 'label');
    // n3 moves to r1: r2 is no longer produced and is deleted.
    await retryOnConflict(e.store, 'Node', undefined, 'n3', (n) => void (n.metadata.labels = { ...n.metadata.labels, [RACK]: 'r1' }));
    await e.m.run();
    assert.deepEqual(discovered(e), [['r1', 'n1,n2,n3', 3]]);
    await e.store.delete('Node', undefined, 'n1');
    await e.m.run();
    assert.deepEqual(discovered(e), [['r1', 'n2,n3', 2]]);
    assert.deepEqual(e.m.errors, []);
  });

  it('never touches hand-written HyperNodes', async () => {
    const e = await env([...rackNodes(), hyperNode('mine').tier(3).nodes('n1').build()], discovery);
    assert.equal(count(e, 'mine'), 1);
    assert.deepEqual(hn(e, 'mine').spec.members, [{ type: 'Node', selector: { exactMatch: { name: 'n1' } } }]);
  });

  it('a bad discovery configuration is skipped with a logged error; status still runs', async () => {
    const e = await env([hyperNode('s0').tier(1).nodes('n1').build(), ...rackNodes()], { discovery: [{ levels: [RACK, RACK, HOST] }] });
    assert.equal(e.store.listSync('HyperNode').length, 1);
    assert.equal(count(e, 's0'), 1);
    assert.equal(e.m.errors.length, 1);
    assert.match(e.m.errors[0]!.message, /label discovery skipped: levels: there are duplicate labels/);
  });
});
