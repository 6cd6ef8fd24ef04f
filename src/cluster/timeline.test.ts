import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Admission, Workload } from '../api/objects.ts';
import { VirtualClock } from '../runtime/clock.ts';
import { EventSink } from '../runtime/events.ts';
import { MemoryStore } from '../runtime/memory-store.ts';
import { entryObjects, Timeline } from './timeline.ts';

const admission = (flavor: string): Admission => ({
  clusterQueue: 'cq',
  podSetAssignments: [{ name: 'main', flavors: { cpu: flavor }, resourceUsage: { cpu: '1' }, count: 1 }],
});

async function recorded(opts: { freeze?: boolean } = {}): Promise<{ store: MemoryStore; timeline: Timeline; wl: Workload }> {
  const clock = new VirtualClock();
  const store = new MemoryStore({ clock, ...opts });
  const timeline = new Timeline(store, clock);
  await timeline.start();
  const wl = store.createSync<Workload>({
    apiVersion: 'kueue.x-k8s.io/v1beta1',
    kind: 'Workload',
    metadata: { name: 'w', namespace: 'ns' },
    spec: { queueName: 'q', podSets: [{ name: 'main', count: 1, template: { spec: { containers: [] } } }] },
  } as Workload);
  return { store, timeline, wl };
}

function withStatus(w: Workload, status: Workload['status']): Workload {
  return { ...structuredClone(w), status };
}

describe('Timeline admissions', () => {
  it('a later version of a Workload with the same admission keeps one copy of it (the newest)', async () => {
    // A store that does not freeze (so shares no equal parts) hands out a new copy per version.
    const { store, timeline, wl } = await recorded({ freeze: false });
    const admitted = store.updateStatusSync(withStatus(wl, { admission: admission('default') }));
    const later = store.updateStatusSync(
      withStatus(admitted, {
        admission: admission('default'),
        conditions: [{ type: 'Admitted', status: 'True', reason: 'Admitted', message: '', lastTransitionTime: '2026-01-01T00:00:00Z' }],
      }),
    );
    const rec = timeline.workloads.get('ns/w')!;
    assert.equal(rec.admissions.length, 1);
    assert.notEqual(admitted.status!.admission, later.status!.admission);
    assert.equal(rec.admissions[0]!.admission, later.status!.admission);
    timeline.stop();
  });

  it('an admission whose content changes while held is recorded as it first was', async () => {
    const { store, timeline, wl } = await recorded();
    store.updateStatusSync(withStatus(wl, { admission: admission('default') }));
    const w2 = store.getSync<Workload>('Workload', 'ns', 'w')!;
    store.updateStatusSync(withStatus(w2, { admission: admission('other') }));
    const rec = timeline.workloads.get('ns/w')!;
    assert.equal(rec.admissions.length, 1);
    assert.deepEqual(rec.admissions[0]!.admission, admission('default'));
    assert.deepEqual(rec.admission, admission('other'));
    timeline.stop();
  });
});

describe('Timeline memory', () => {
  it("a Workload record's histories are one shared, frozen empty list until something is appended", async () => {
    const { store, timeline, wl } = await recorded();
    store.createSync<Workload>({ ...structuredClone(wl), metadata: { name: 'w2', namespace: 'ns' } });
    const a = timeline.workloads.get('ns/w')!;
    const b = timeline.workloads.get('ns/w2')!;
    assert.equal(a.evictions, b.evictions);
    assert.equal(a.admissions, b.pendingReasons);
    assert.ok(Object.isFrozen(a.admissions));
    store.updateStatusSync(withStatus(wl, { admission: admission('default') }));
    assert.equal(a.admissions.length, 1);
    assert.equal(b.admissions.length, 0);
    assert.notEqual(a.admissions, b.admissions);
    timeline.stop();
  });

  it("the timeline follows Workloads without a cache of its own: a record holds the store's own last version", async () => {
    const { store, timeline, wl } = await recorded();
    const admitted = store.updateStatusSync(withStatus(wl, { admission: admission('default') }));
    assert.equal(timeline.workloads.get('ns/w')!.last, admitted);
    store.deleteSync('Workload', 'ns', 'w');
    assert.equal(timeline.workloads.get('ns/w')!.deleted, true);
    timeline.stop();
  });

  it("an entry's events are folded by kind, type and reason into a list of exactly its folds", async () => {
    const clock = new VirtualClock();
    const store = new MemoryStore({ clock });
    const sink = new EventSink(store, clock, { writeToStore: false });
    const timeline = new Timeline(store, clock);
    await timeline.start();
    timeline.watchEvents(sink);
    const input = {
      apiVersion: 'kueue.x-k8s.io/v1beta1',
      kind: 'Workload',
      metadata: { name: 'w', namespace: 'ns' },
      spec: { queueName: 'q', podSets: [{ name: 'main', count: 1, template: { spec: { containers: [] } } }] },
    } as Workload;
    const wl = store.createSync<Workload>(input);
    timeline.submitted(input, wl);
    const rec = sink.recorder('test');
    rec.event(wl, 'Warning', 'Pending', 'waiting 1');
    clock.advanceBy(1000);
    rec.event(wl, 'Warning', 'Pending', 'waiting 2');
    rec.event(wl, 'Normal', 'QuotaReserved', 'reserved');
    const e = [...timeline.entries.values()][0]!;
    assert.deepEqual(
      e.events!.map((f) => [f.kind, f.type, f.reason, f.count, f.message]),
      [
        ['Workload', 'Warning', 'Pending', 2, 'waiting 2'],
        ['Workload', 'Normal', 'QuotaReserved', 1, 'reserved'],
      ],
    );
    assert.equal(e.events!.length, 2);
    timeline.stop();
  });

  it("an entry's own object is not kept as a reference of its own: entries of one object share one list, and entryObjects gives the reference back", async () => {
    const { store, timeline } = await recorded();
    const input = (name: string, namespace?: string) =>
      ({
        apiVersion: 'kueue.x-k8s.io/v1beta1',
        kind: 'Workload',
        metadata: { name, ...(namespace ? { namespace } : {}) },
        spec: { queueName: 'q', podSets: [{ name: 'main', count: 1, template: { spec: { containers: [] } } }] },
      }) as Workload;
    for (const name of ['a', 'b']) timeline.submitted(input(name, 'ns'), store.createSync<Workload>(input(name, 'ns')));
    // Without a namespace the reference has none (`Kind/name`): it is kept as written.
    timeline.submitted(input('c'), undefined, 'refused');
    const [a, b, c] = [...timeline.entries.values()];
    assert.equal(a!.objects, b!.objects);
    assert.deepEqual(entryObjects(a!), ['Workload/ns/a']);
    assert.deepEqual(entryObjects(b!), ['Workload/ns/b']);
    assert.deepEqual(entryObjects(c!), ['Workload/c']);
    timeline.stop();
  });
});
