import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { pod } from '../testing/builders.ts';
import { PodRequestReader } from './pod-requests.ts';

describe('the pod-request reader', () => {
  it('reads the effective requests, with the pod slot when asked', () => {
    const p = pod('a').request('cpu', '1500m').request('memory', '1Gi').build();
    assert.deepEqual(new PodRequestReader().read(p), { ok: true, requests: { cpu: 1500, memory: 1024 ** 3 } });
    assert.deepEqual(new PodRequestReader({ countPodSlot: true }).read(p), {
      ok: true,
      requests: { cpu: 1500, memory: 1024 ** 3, pods: 1 },
    });
  });
  it('a pod whose requests cannot be read is refused with the reason, not read as requesting nothing', () => {
    const p = pod('bad').build();
    p.spec.containers[0]!.resources = { requests: { cpu: 'lots' } };
    const read = new PodRequestReader({ countPodSlot: true }).read(p);
    assert.equal(read.ok, false);
    assert.match(read.ok ? '' : read.problem, /spec\.containers\[0\]\.resources\.requests.*lots/);
  });
  it('pods of one shape share one read, and the memory of shapes is bounded', () => {
    const r = new PodRequestReader({ maxShapes: 2 });
    const a1 = r.read(pod('a1').request('cpu', 1).build());
    assert.equal(r.read(pod('a2').request('cpu', 1).build()), a1);
    r.read(pod('b').request('cpu', 2).build());
    assert.equal(r.size, 2);
    r.read(pod('c').request('cpu', 3).build());
    assert.ok(r.size <= 2);
  });
});
