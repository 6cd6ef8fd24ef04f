import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KObject } from '../api/objects.ts';
import { VirtualClock } from './clock.ts';
import { EventSink } from './events.ts';
import { MemoryStore } from './memory-store.ts';

const pod = (name: string): KObject => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'ns' } });

describe('EventSink memory', () => {
  it('recurring messages and object references are kept once (interned) and each event keeps its own text', () => {
    const clock = new VirtualClock();
    const sink = new EventSink(new MemoryStore({ clock }), clock, { writeToStore: false });
    const r = sink.recorder('test');
    // More distinct texts than the sink's table keeps: interning never mixes them up.
    for (let i = 0; i < 20_000; i++) r.event(pod(`p-${i % 3}`), 'Normal', 'Waiting', `waited ${i}s in ClusterQueue ${'cq-' + (i % 7)}`);
    const last = sink.recent[sink.recent.length - 1]!;
    assert.equal(last.object, 'Pod/ns/p-' + (19_999 % 3));
    assert.equal(last.message, `waited 19999s in ClusterQueue cq-${19_999 % 7}`);
    assert.deepEqual(
      sink
        .about('Pod/ns/p-0')
        .slice(-2)
        .map((e) => e.message),
      ['waited 19995s in ClusterQueue cq-3', 'waited 19998s in ClusterQueue cq-6'],
    );
  });

  it('a cluster-scoped object is named Kind/name', () => {
    const clock = new VirtualClock();
    const sink = new EventSink(new MemoryStore({ clock }), clock, { writeToStore: false });
    sink.recorder('test').event({ apiVersion: 'v1', kind: 'Node', metadata: { name: 'n1' } }, 'Warning', 'NotReady', 'down');
    assert.equal(sink.recent[0]!.object, 'Node/n1');
  });
});
