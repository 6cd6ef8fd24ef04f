import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { admissionEnv, cq, RACK, BLOCK, rackCluster, wl } from '../testing/admission.ts';
import { renderExplanation } from '../placement/explain.ts';
import { explainPending } from './explain.ts';

// 2 racks x 4 hosts of 4 cpu in one block; 1 pod per host.
function env(quotaCpu: string) {
  const { f, tas } = rackCluster(2, 4);
  return admissionEnv({ clusterQueues: [cq('q').quota(f.metadata.name, { cpu: quotaCpu }).build()], flavors: [f], tas: [tas] });
}

describe('explain with quota', () => {
  it('quota stops it when the flavors from quota alone do not fit; the quota message is kept', () => {
    const e = explainPending(
      env('8').snap,
      'q',
      wl('w')
        .queue('q')
        .pods(6, { cpu: '4' }, { topology: { required: BLOCK } })
        .build(),
      {},
    );
    assert.deepEqual(e.stoppedBy, ['quota']);
    assert.match(e.quota!, /^couldn't assign flavors to pod set main: insufficient quota for cpu in flavor tas/);
  });

  it('quota and topology: the quota is short and no rack holds the pods', () => {
    const e = explainPending(
      env('8').snap,
      'q',
      wl('w')
        .queue('q')
        .pods(6, { cpu: '4' }, { topology: { required: RACK } })
        .build(),
      {},
    );
    assert.deepEqual(e.stoppedBy, ['quota', 'topology']);
    assert.match(renderExplanation(e), /^default\/w: stopped by quota and topology\n/);
  });

  it('topology alone: the quota fits and no rack holds the pods', () => {
    const e = explainPending(
      env('100').snap,
      'q',
      wl('w')
        .queue('q')
        .pods(6, { cpu: '4' }, { topology: { required: RACK } })
        .build(),
      {},
    );
    assert.deepEqual(e.stoppedBy, ['topology']);
    assert.equal(e.quota, undefined);
  });

  it('neither: what its condition says holds it back (a gang group, a queue) becomes `waits for`', () => {
    const w = wl('w').queue('q').pods(2, { cpu: '4' }).build();
    w.status = {
      conditions: [{ type: 'QuotaReserved', status: 'False', reason: 'GangNotReady', message: 'gangGroup [default/w] basic check' }],
    };
    const e = explainPending(env('100').snap, 'q', w, {});
    assert.deepEqual(e.stoppedBy, []);
    assert.equal(e.other, 'GangNotReady: gangGroup [default/w] basic check');
    assert.match(renderExplanation(e), /stopped by neither quota nor topology on its own\n {2}waits for: GangNotReady/);
  });
});
