import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KObject } from '../api/objects.ts';
import type { TopoqueueConfig } from '../controllers/config.ts';
import { VirtualClock } from '../runtime/clock.ts';
import type { Reconciler } from '../runtime/manager.ts';
import { node } from '../testing/builders.ts';
import { NAMESPACE_NAME_LABEL } from '../api/keys.ts';
import { CLUSTER_KINDS, clusterFirst, EmbeddedCluster } from './embedded.ts';

const obj = (kind: string, name: string, namespace?: string): KObject => ({ apiVersion: 'v1', kind, metadata: { name, ...(namespace ? { namespace } : {}) } });

describe('the embedded cluster', () => {
  it('creates cluster objects first, in CLUSTER_KINDS order, and everything else in input order', () => {
    const input = [obj('Job', 'j1', 'a'), obj('LocalQueue', 'lq', 'a'), obj('Pod', 'p1', 'a'), obj('Node', 'n1'), obj('ClusterQueue', 'cq'), obj('Namespace', 'a'), obj('Job', 'j0', 'a')];
    assert.deepEqual(
      clusterFirst(input, (o) => o.kind).map((o) => `${o.kind}/${o.metadata.name}`),
      ['Namespace/a', 'Node/n1', 'ClusterQueue/cq', 'LocalQueue/lq', 'Job/j1', 'Pod/p1', 'Job/j0'],
    );
    assert.deepEqual(CLUSTER_KINDS.slice(0, 3), ['Namespace', 'Node', 'Topology']);
  });

  it('labels a Namespace with its name and creates the missing namespace of an object first, as an API server would need', async () => {
    const c = new EmbeddedCluster({ controllers: [] });
    await c.start();
    c.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team', labels: { tier: 'gold' } } });
    const r = c.create(obj('ConfigMap', 'cm', 'research'));
    assert.equal(r.error, undefined);
    assert.deepEqual(c.store.getSync('Namespace', undefined, 'team')!.metadata.labels, { tier: 'gold', [NAMESPACE_NAME_LABEL]: 'team' });
    assert.deepEqual(c.store.getSync('Namespace', undefined, 'research')!.metadata.labels, { [NAMESPACE_NAME_LABEL]: 'research' });
    assert.equal(c.store.getSync('Namespace', undefined, 'default'), undefined, 'cluster-scoped objects need no namespace');
    c.create(node('n1').build());
    assert.equal(c.store.getSync('Namespace', undefined, 'default'), undefined);
  });

  it("returns the store's refusal (a webhook's denial, a duplicate name) instead of throwing", async () => {
    const deny: Reconciler<TopoqueueConfig> = {
      name: 'deny',
      setup(ctx) {
        ctx.store.addAdmissionHook({ name: 'no-pods.example.com', kinds: ['Pod'], operations: ['CREATE'], type: 'validating', admit: () => ({ denied: ['spec: pods are not welcome'] }) });
      },
      reconcile: async () => undefined,
    };
    const c = new EmbeddedCluster({ controllers: [deny] });
    await c.start();
    assert.deepEqual(c.create(obj('Pod', 'p', 'a')), { error: 'admission webhook "no-pods.example.com" denied the request: spec: pods are not welcome' });
    assert.equal(c.create(node('n1').build()).error, undefined);
    assert.deepEqual(c.create(node('n1').build()), { error: 'nodes "n1" already exists' });
  });

  it('runs the given controllers on the given clock, in virtual time', async () => {
    const clock = new VirtualClock(1_000_000);
    const seen: number[] = [];
    const ticker: Reconciler<TopoqueueConfig> = {
      name: 'ticker',
      setup(ctx, queue) {
        ctx.informers.for('Node').addHandler({ add: (n) => queue.add(n.metadata.name) });
      },
      reconcile: async () => {
        seen.push(clock.now());
        return seen.length < 3 ? { requeueAfterMs: 60_000 } : undefined;
      },
    };
    const c = new EmbeddedCluster({ clock, controllers: [ticker] });
    assert.equal(c.clock, clock);
    await c.start();
    c.load([node('n1').build()]);
    const r = await c.run();
    assert.deepEqual(seen, [1_000_000, 1_060_000, 1_120_000]);
    assert.equal(r.idle, true);
  });

  it('registers every controller and stand-in by default, under their fixed names', () => {
    const c = new EmbeddedCluster();
    const names = ['scheduler', 'workload', 'job', 'pod-group', 'topology-ungater', 'node-failure', 'hypernode-status', 'podgroup-status', 'job-controllers', 'binder', 'kubelet', 'garbage-collector', 'workload-runner', 'scenario'];
    for (const n of names) assert.ok(c.manager.queue(n), n);
  });
});
