// Kueue's Configuration fields `integrations.frameworks` and `labelKeysToCopy`, as the job
// reconciler, the pod-group controller and their webhooks apply them.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KObject, Pod } from '../api/objects.ts';
import { LABELS_MISMATCH_MESSAGE } from '../integrations/workload-name.ts';
import { batchJob, jobEnv, jobSet, latest } from '../testing/jobs.ts';
import { hasGate, plainPod, podHarness } from '../testing/pods.ts';
import { podGroupController } from './pod-group-controller.ts';

type Suspendable = KObject & { spec: { suspend?: boolean } };

describe('integrations.frameworks', () => {
  it('a framework left out is neither suspended by the webhook nor given a Workload; a listed one is', async () => {
    const env = await jobEnv({ frameworks: ['jobset.x-k8s.io/jobset'] });
    const job = (await env.create(batchJob('train'))) as Suspendable;
    const js = (await env.create(jobSet('set', [{ name: 'w' }]))) as Suspendable;
    assert.equal(latest(env, job).spec.suspend, undefined, 'batch/job is not in the list: left alone');
    assert.equal(latest(env, js).spec.suspend, true, 'jobset.x-k8s.io/jobset is: suspended');
    assert.deepEqual(
      env.workloads().map((w) => w.metadata.ownerReferences?.[0]?.kind),
      ['JobSet'],
    );
    const all = await jobEnv({});
    await all.create(batchJob('train'));
    assert.equal(all.workloads().length, 1, 'without the field every framework is managed');
  });

  it("without 'pod' a queued plain pod is neither gated nor given a Workload", async () => {
    const off = await podHarness({ config: { frameworks: ['batch/job'] } });
    await off.create(plainPod('p').queue('q').build());
    await off.run();
    assert.equal(hasGate(off.pod('p'), 'kueue.x-k8s.io/admission'), false);
    assert.deepEqual(off.workloads(), []);
    const on = await podHarness({ config: { frameworks: ['pod'] } });
    await on.create(plainPod('p').queue('q').build());
    await on.run();
    assert.equal(hasGate(on.pod('p'), 'kueue.x-k8s.io/admission'), true);
    assert.equal(on.workloads().length, 1);
  });
});

describe('labelKeysToCopy', () => {
  it('copies the listed labels of a job onto its Workload (a key the job lacks is skipped; other labels are not copied)', async () => {
    const env = await jobEnv({ labelKeysToCopy: ['team', 'cost-center'] });
    await env.create(batchJob('train', { labels: { team: 'vision', project: 'x' } }));
    const labels = env.workload().metadata.labels ?? {};
    assert.equal(labels.team, 'vision');
    assert.equal(labels['cost-center'], undefined);
    assert.equal(labels.project, undefined);
  });

  it('copies them from a plain pod, and from the pods of a group when they agree', async () => {
    const h = await podHarness({ config: { labelKeysToCopy: ['team'] }, controllers: [podGroupController()] });
    await h.create(plainPod('single').queue('q').label('team', 'a').build());
    for (const n of ['g1', 'g2']) await h.create(plainPod(n).queue('q').group('grp', 2).label('team', 'b').build());
    await h.run();
    const byName = new Map(h.workloads().map((w) => [w.metadata.name, w]));
    assert.equal(byName.get('grp')?.metadata.labels?.team, 'b');
    const single = h.workloads().find((w) => w.metadata.name !== 'grp');
    assert.equal(single?.metadata.labels?.team, 'a');
  });

  it("a group whose pods disagree on a label to copy gets no Workload, and a Warning with Kueue's error", async () => {
    const h = await podHarness({ config: { labelKeysToCopy: ['team'] } });
    const pods: Pod[] = [
      plainPod('g1').queue('q').group('grp', 2).label('team', 'a').build(),
      plainPod('g2').queue('q').group('grp', 2).label('team', 'b').build(),
    ];
    for (const p of pods) await h.create(p);
    await h.run();
    assert.deepEqual(h.workloads(), []);
    assert.ok(
      h.events('ErrWorkloadCompose').some((e) => e.message === LABELS_MISMATCH_MESSAGE),
      JSON.stringify(h.events('ErrWorkloadCompose')),
    );
  });
});
