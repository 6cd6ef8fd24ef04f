import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KObject, OwnerReference } from '../api/objects.ts';
import { testCluster } from '../testing/cluster.ts';
import { garbageCollector } from './garbage-collector.ts';

const obj = (kind: string, name: string, owners: KObject[] = [], apiVersion = 'v1'): KObject => ({
  apiVersion,
  kind,
  metadata: {
    name,
    namespace: 'default',
    ownerReferences: owners.map((o): OwnerReference => ({
      apiVersion: o.apiVersion,
      kind: o.kind,
      name: o.metadata.name,
      uid: o.metadata.uid!,
      controller: false,
    })),
  },
});

describe('garbage collector', () => {
  it('deleting an owner deletes its dependents, and theirs in turn (JobSet -> Job -> Pod)', async () => {
    const c = await testCluster([garbageCollector()]);
    const js = c.store.createSync(obj('JobSet', 'js', [], 'jobset.x-k8s.io/v1alpha2'));
    const job = c.store.createSync(obj('Job', 'js-a-0', [js], 'batch/v1'));
    c.store.createSync(obj('Pod', 'js-a-0-0-abcde', [job]));
    const held = obj('Pod', 'held', [job]);
    held.metadata.finalizers = ['example.com/hold'];
    c.store.createSync(held);
    c.store.createSync(obj('Pod', 'unrelated'));
    await c.run();
    assert.equal(c.pods().length, 3, 'nothing is collected while owners exist');
    await c.store.delete('JobSet', 'default', 'js');
    await c.run();
    assert.equal(c.get('Job', 'js-a-0'), undefined);
    assert.equal(c.pod('js-a-0-0-abcde'), undefined);
    assert.ok(c.pod('held')?.metadata.deletionTimestamp, 'a finalizer holds its pod in deletion');
    assert.ok(c.pod('unrelated'));
  });

  it('a dependent with another owner left only loses the reference to the one that is gone', async () => {
    const c = await testCluster([garbageCollector()]);
    const a = c.store.createSync(obj('Workload', 'a'));
    const b = c.store.createSync(obj('Workload', 'b'));
    c.store.createSync(obj('Pod', 'shared', [a, b]));
    await c.run();
    await c.store.delete('Workload', 'default', 'a');
    await c.run();
    assert.deepEqual(
      c.pod('shared')?.metadata.ownerReferences?.map((r) => r.name),
      ['b'],
    );
    await c.store.delete('Workload', 'default', 'b');
    await c.run();
    assert.equal(c.pod('shared'), undefined);
  });

  it('a dependent whose owner never existed (or was replaced under the same name) is deleted', async () => {
    const c = await testCluster([garbageCollector()]);
    const ghost = { ...obj('Job', 'ghost', [], 'batch/v1'), metadata: { name: 'ghost', namespace: 'default', uid: 'no-such-uid' } };
    c.store.createSync(obj('Pod', 'orphan', [ghost]));
    const old = c.store.createSync(obj('Job', 'j', [], 'batch/v1'));
    c.store.createSync(obj('Pod', 'of-old', [old]));
    await c.run();
    c.store.deleteSync('Job', 'default', 'j');
    c.store.createSync(obj('Job', 'j', [], 'batch/v1'));
    await c.run();
    assert.equal(c.pod('orphan'), undefined);
    assert.equal(c.pod('of-old'), undefined, 'the new Job of the same name is another owner');
  });

  it('an owner of a kind it does not watch is looked up in the store', async () => {
    const c = await testCluster([garbageCollector()]);
    const cm = c.store.createSync(obj('ConfigMap', 'cfg'));
    c.store.createSync(obj('Pod', 'uses-cfg', [cm]));
    const gone = { ...cm, metadata: { ...cm.metadata, name: 'gone', uid: 'u-gone' } };
    c.store.createSync(obj('Pod', 'uses-gone', [gone]));
    await c.run();
    assert.ok(c.pod('uses-cfg'));
    assert.equal(c.pod('uses-gone'), undefined);
  });
});
