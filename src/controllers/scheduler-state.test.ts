import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Workload } from '../api/objects.ts';
import { wl } from '../testing/admission.ts';
import { sameInfoInputs } from './scheduler-state.ts';

/** A status write as the store makes it: spec and metadata maps shared, a new status. */
const statusWrite = (w: Workload, status: Workload['status']): Workload => ({ ...w, metadata: { ...w.metadata }, status });

describe('scheduler state: a queued Workload keeps its reading across writes that change nothing it reads', () => {
  const built = wl('w1').queue('a').pods(2, { cpu: '1' }).build();
  const base: Workload = { ...built, metadata: { ...built.metadata, uid: 'u1', labels: { team: 'x' } } };

  it('sameInfoInputs: a status write of other conditions reads the same', () => {
    const pending = statusWrite(base, {
      conditions: [
        { type: 'QuotaReserved', status: 'False', reason: 'Pending', message: 'waiting', lastTransitionTime: '2026-01-01T00:00:00Z' },
      ],
    });
    assert.equal(sameInfoInputs(base, pending), true);
    // Equal maps that are not the same objects (a metadata update) read the same too.
    assert.equal(sameInfoInputs(base, { ...base, metadata: { ...base.metadata, labels: { ...base.metadata.labels } } }), true);
  });

  it('sameInfoInputs: a new spec, uid, annotation, label, owner, requeueState or Evicted condition is read afresh', () => {
    assert.equal(sameInfoInputs(base, { ...base, spec: { ...base.spec } }), false, 'spec: compared by reference');
    assert.equal(sameInfoInputs(base, { ...base, metadata: { ...base.metadata, uid: 'u2' } }), false);
    assert.equal(sameInfoInputs(base, { ...base, metadata: { ...base.metadata, annotations: { a: '1' } } }), false);
    assert.equal(
      sameInfoInputs(base, { ...base, metadata: { ...base.metadata, labels: { 'kueue.x-k8s.io/priority-class': 'high' } } }),
      false,
    );
    assert.equal(
      sameInfoInputs(base, {
        ...base,
        metadata: { ...base.metadata, ownerReferences: [{ apiVersion: 'batch/v1', kind: 'Job', name: 'j', uid: 'j1' }] },
      }),
      false,
    );
    assert.equal(sameInfoInputs(base, statusWrite(base, { requeueState: { count: 1, requeueAt: '2026-01-01T00:01:00Z' } })), false);
    const evicted = statusWrite(base, {
      conditions: [
        { type: 'Evicted', status: 'True', reason: 'PodsReadyTimeout', message: 'x', lastTransitionTime: '2026-01-01T00:00:05Z' },
      ],
    });
    assert.equal(sameInfoInputs(base, evicted), false);
    assert.equal(sameInfoInputs(evicted, statusWrite(evicted, evicted.status)), true);
  });
});
