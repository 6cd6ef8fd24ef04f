import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { TopoqueueAnnotation } from '../api/keys.ts';
import type { KObject, Workload } from '../api/objects.ts';
import type { TopoqueueConfig } from '../controllers/config.ts';
import { VirtualClock } from '../runtime/clock.ts';
import { openDurableStore } from '../runtime/durable-store.ts';
import type { Reconciler } from '../runtime/manager.ts';
import type { MemoryStore } from '../runtime/memory-store.ts';
import { objectKey } from '../runtime/store.ts';
import { cq, flavor } from '../testing/admission.ts';
import { node } from '../testing/builders.ts';
import { NAMESPACE_NAME_LABEL } from '../api/keys.ts';
import { readyNode } from '../testing/cluster.ts';
import { batchJob, localQueue, namespace, podTemplate } from '../testing/jobs.ts';
import { CLUSTER_KINDS, clusterFirst, EmbeddedCluster } from './embedded.ts';

const obj = (kind: string, name: string, namespace?: string): KObject => ({
  apiVersion: 'v1',
  kind,
  metadata: { name, ...(namespace ? { namespace } : {}) },
});

describe('the embedded cluster', () => {
  it('creates cluster objects first, in CLUSTER_KINDS order, and everything else in input order', () => {
    const input = [
      obj('Job', 'j1', 'a'),
      obj('LocalQueue', 'lq', 'a'),
      obj('Pod', 'p1', 'a'),
      obj('Node', 'n1'),
      obj('ClusterQueue', 'cq'),
      obj('Namespace', 'a'),
      obj('Job', 'j0', 'a'),
    ];
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
        ctx.store.addAdmissionHook({
          name: 'no-pods.example.com',
          kinds: ['Pod'],
          operations: ['CREATE'],
          type: 'validating',
          admit: () => ({ denied: ['spec: pods are not welcome'] }),
        });
      },
      reconcile: async () => undefined,
    };
    const c = new EmbeddedCluster({ controllers: [deny] });
    await c.start();
    assert.deepEqual(c.create(obj('Pod', 'p', 'a')), {
      error: 'admission webhook "no-pods.example.com" denied the request: spec: pods are not welcome',
    });
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
    const names = [
      'scheduler',
      'workload',
      'job',
      'pod-group',
      'topology-ungater',
      'node-failure',
      'hypernode-status',
      'podgroup-status',
      'job-controllers',
      'binder',
      'kubelet',
      'garbage-collector',
      'workload-runner',
      'scenario',
    ];
    for (const n of names) assert.ok(c.manager.queue(n), n);
  });

  it('runs on the store it is given: a cluster stopped mid-run, its durable store closed and reopened under a new cluster, resumes and admits nothing twice', async () => {
    const dir = mkdtempSync(join(os.tmpdir(), 'topoqueue-embedded-'));
    try {
      const clock = new VirtualClock(Date.UTC(2026, 0, 1));
      const admitted = new Map<string, number>();
      const countAdmissions = (store: MemoryStore) =>
        store.watch<Workload>('Workload', (e) => {
          if (e.type !== 'DELETED' && !e.old?.status?.admission && e.object.status?.admission)
            admitted.set(objectKey(e.object), (admitted.get(objectKey(e.object)) ?? 0) + 1);
        });
      const job = (name: string) =>
        batchJob(name, {
          parallelism: 2,
          completions: 2,
          template: podTemplate({ cpu: '4', annotations: { [TopoqueueAnnotation.RunDuration]: '5m' } }),
        });
      const firstStore = await openDurableStore(dir, { clock });
      const first = new EmbeddedCluster({ clock, store: firstStore });
      const stopFirst = countAdmissions(first.store);
      await first.start();
      // One node of 8 cpu: the three Jobs of 2 x 4 cpu run one after another.
      const loaded = first.load([
        namespace('ns'),
        readyNode('n1'),
        flavor('default'),
        cq('cq').quota('default', { cpu: '8' }).build(),
        localQueue('lq'),
        job('a'),
        job('b'),
        job('c'),
      ]);
      assert.deepEqual(
        loaded.filter((r) => r.error),
        [],
      );
      await first.run({ untilMs: clock.now() + 7 * 60_000 });
      assert.equal(admitted.size, 2, 'two Jobs admitted before the stop (the first finished)');
      first.stop();
      stopFirst();
      await firstStore.close();

      const store = await openDurableStore(dir, { clock });
      const second = new EmbeddedCluster({ clock, store });
      assert.equal(second.store, store);
      const stopSecond = countAdmissions(store);
      await second.start();
      const r = await second.run();
      assert.equal(r.idle, true);
      for (const name of ['a', 'b', 'c']) {
        const j = store.getSync<KObject & { status?: { conditions?: { type: string; status: string }[] } }>('Job', 'ns', name);
        assert.ok(
          j?.status?.conditions?.some((c) => c.type === 'Complete' && c.status === 'True'),
          `Job ${name} complete: ${JSON.stringify(j?.status)}`,
        );
      }
      assert.equal(store.listSync<Workload>('Workload', { namespace: 'ns' }).length, 3, 'one Workload per Job');
      assert.deepEqual([...admitted.values()], [1, 1, 1], `admitted once each: ${JSON.stringify([...admitted])}`);
      assert.deepEqual(second.manager.errors, []);
      stopSecond();
      second.stop();
      await store.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
