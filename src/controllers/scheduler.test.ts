import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Workload } from '../api/objects.ts';
import { cq, flavor, localQueue, wl } from '../testing/admission.ts';
import { runtimeEnv } from '../testing/runtime.ts';
import { schedulerController } from './scheduler.ts';

const get = (env: ReturnType<typeof runtimeEnv>, name: string) => env.get<Workload>('Workload', 'default', name)!;
const cond = (w: Workload, type: string) => w.status?.conditions?.find((c) => c.type === type);

describe('scheduler controller', () => {
  it('admits a pending Workload: admission, QuotaReserved and Admitted written, events recorded', async () => {
    const env = runtimeEnv({ controllers: [schedulerController()], objects: [flavor('default'), cq('a').quota('default', { cpu: '10' }).build(), localQueue('a', 'a')] });
    await env.start();
    env.seed(wl('w1').queue('a').pods(2, { cpu: '3' }).build());
    await env.run();
    const w = get(env, 'w1');
    assert.equal(w.status?.admission?.clusterQueue, 'a');
    assert.deepEqual(w.status?.admission?.podSetAssignments, [{ name: 'main', flavors: { cpu: 'default' }, resourceUsage: { cpu: '6' }, count: 2 }]);
    assert.equal(cond(w, 'QuotaReserved')?.status, 'True');
    assert.equal(cond(w, 'Admitted')?.status, 'True');
    const events = env.manager.events.about('Workload/default/w1').map((e) => `${e.reason}: ${e.message}`);
    assert.deepEqual(events, ['QuotaReserved: Quota reserved in ClusterQueue a, wait time since queued was 0s', 'Admitted: Admitted by ClusterQueue a, wait time since reservation was 0s']);
    assert.deepEqual(env.manager.errors, []);
  });
});
