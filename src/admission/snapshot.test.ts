import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { admissionEnv, cq, flavor, wl } from '../testing/admission.ts';
import { type AdmittedWorkload } from './snapshot.ts';

function reservation(key: string, clusterQueue: string, cpu: number): AdmittedWorkload {
  const [namespace, name] = key.split('/') as [string, string];
  return {
    key,
    workload: wl(name, namespace)
      .queue(clusterQueue)
      .pods(1, { cpu: String(cpu / 1000) })
      .build(),
    clusterQueue,
    priority: 0,
    reservedAt: 0,
    podSets: [],
    usage: new Map([['default/cpu', cpu]]),
  };
}

describe('admission snapshot: reservations by ClusterQueue', () => {
  it('a reservation counts against its ClusterQueue up the cohort, and is listed under it until taken back', () => {
    const { snap } = admissionEnv({
      clusterQueues: [
        cq('a').cohort('c').quota('default', { cpu: '4' }).build(),
        cq('b').cohort('c').quota('default', { cpu: '4' }).build(),
      ],
      flavors: [flavor('default')],
    });
    snap.addAdmitted(reservation('default/x', 'a', 3000));
    assert.deepEqual(
      [...snap.admittedIn('a')].map((r) => r.key),
      ['default/x'],
    );
    assert.equal(snap.quota.usage('a', 'default/cpu'), 3000);
    assert.equal(snap.quota.available('b', 'default/cpu'), 5000);
    snap.removeAdmitted('default/x');
    assert.deepEqual([...snap.admittedIn('a')], []);
    assert.equal(snap.quota.available('b', 'default/cpu'), 8000);
  });
  it('a reservation of a ClusterQueue the snapshot does not know is listed under it and touches no quota', () => {
    const { snap } = admissionEnv({ clusterQueues: [cq('a').quota('default', { cpu: '4' }).build()], flavors: [flavor('default')] });
    snap.addAdmitted(reservation('default/y', 'gone', 2000));
    assert.deepEqual(
      [...snap.admittedIn('gone')].map((r) => r.key),
      ['default/y'],
    );
    assert.equal(snap.quota.available('a', 'default/cpu'), 4000);
    snap.removeAdmitted('default/y');
    assert.deepEqual([...snap.admittedIn('gone')], []);
    assert.equal(snap.quota.available('a', 'default/cpu'), 4000);
  });
});
