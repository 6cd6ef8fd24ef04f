import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Workload } from '../api/objects.ts';
import { VirtualClock } from './clock.ts';
import { MemoryStore } from './memory-store.ts';
import { SharedValues } from './shared-values.ts';

const workload = (name: string, cpu: string): Workload =>
  ({
    apiVersion: 'kueue.x-k8s.io/v1beta2',
    kind: 'Workload',
    metadata: { name, namespace: 'ns', annotations: { a: 'x' } },
    spec: {
      queueName: 'q',
      podSets: [{ name: 'main', count: 1, template: { spec: { containers: [{ name: 'c', resources: { requests: { cpu } } }] } } }],
    },
  }) as Workload;

describe('SharedValues', () => {
  it('equal parts below the second level of two stored objects are one frozen object', () => {
    const store = new MemoryStore({ clock: new VirtualClock() });
    const a = store.createSync(workload('a', '1'));
    const b = store.createSync(workload('b', '1'));
    assert.equal(a.spec.podSets, b.spec.podSets);
    assert.equal(a.metadata.annotations, b.metadata.annotations);
    assert.ok(Object.isFrozen(a.spec.podSets[0]!.template));
    const c = store.createSync(workload('c', '2'));
    assert.notEqual(c.spec.podSets, a.spec.podSets);
    assert.deepEqual(c.spec.podSets[0]!.template.spec.containers[0]!.resources, { requests: { cpu: '2' } });
  });

  it("an object's own first and second levels (metadata, spec, status) stay its own", () => {
    const store = new MemoryStore({ clock: new VirtualClock() });
    const a = store.createSync(workload('a', '1'));
    const b = store.createSync(workload('b', '1'));
    assert.notEqual(a.spec, b.spec);
    assert.notEqual(a.metadata, b.metadata);
    const status = {
      conditions: [{ type: 'Finished', status: 'True', reason: 'Succeeded', message: '', lastTransitionTime: '2026-01-01T00:00:00Z' }],
    };
    const a2 = store.updateStatusSync({ ...a, status: structuredClone(status) } as Workload);
    const b2 = store.updateStatusSync({ ...b, status: structuredClone(status) } as Workload);
    assert.notEqual(a2.status, b2.status);
    assert.equal(a2.status!.conditions, b2.status!.conditions);
  });

  it('parts equal as text but not as values are not shared (a number and a string, a list and an object, keys and values moved)', () => {
    const t = new SharedValues();
    const parts = [
      { v: { a: 1 } },
      { v: { a: '1' } },
      { v: ['1'] },
      { v: { 0: '1' } },
      { v: { ab: 'c' } },
      { v: { a: 'bc' } },
      { v: { a: 1, b: 2 } },
      { v: { a: 12 } },
    ];
    for (const p of parts) t.shareBelowSecondLevel({ p });
    const kept = parts.map((p) => p.v);
    for (let i = 0; i < kept.length; i++) for (let j = i + 1; j < kept.length; j++) assert.notEqual(kept[i], kept[j], `${i} ${j}`);
    const again = { v: { a: 12 } };
    t.shareBelowSecondLevel({ p: again });
    assert.equal(again.v, kept[7]);
  });

  it("metadata's name, uid and resourceVersion are not kept (each is one object's)", () => {
    const t = new SharedValues();
    for (let i = 0; i < 100; i++) t.shareBelowSecondLevel({ metadata: { name: `w-${i}`, uid: `u-${i}`, resourceVersion: String(i) } });
    assert.equal(t.size, 0);
  });

  it('keeps at most two generations of its limit; a part asked for again moves to the young one and stays shared', () => {
    const t = new SharedValues(4);
    const hot = () => ({ x: { y: { kind: 'hot' } } });
    const first = hot();
    t.shareBelowSecondLevel(first);
    for (let i = 0; i < 50; i++) {
      t.shareBelowSecondLevel({ x: { y: { n: `cold-${i}` } } });
      const h = hot();
      t.shareBelowSecondLevel(h);
      assert.equal(h.x.y, first.x.y, `round ${i}`);
      assert.ok(t.size <= 8, `size ${t.size}`);
    }
    assert.deepEqual(first.x.y, { kind: 'hot' });
  });
});
