import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Condition, Workload } from '../api/objects.ts';
import { readFileSync } from 'node:fs';
import { runCli as run, tmpFile } from '../testing/cli.ts';
import { PreemptedReason, preemptionMessage } from '../admission/preemption.ts';
import { namePreemptors } from './plan-queues.ts';

const cond = (w: Workload, type: string): Condition | undefined => w.status?.conditions?.find((c) => c.type === type);

async function planItems(args: string[]): Promise<{ items: Map<string, Workload>; err: string }> {
  const r = await run(['plan', ...args, '-o', 'json']);
  assert.equal(r.code, 0, r.err);
  const items = (JSON.parse(r.out) as { items: Workload[] }).items;
  return { items: new Map(items.map((w) => [`${w.metadata.namespace}/${w.metadata.name.replace(/-[0-9a-f]{5}$/, '')}`, w])), err: r.err };
}

describe('topoqueue plan with queues (examples/queues-gangs)', () => {
  it('prints every Workload with its status: admitted, pending with why, or preempted', async () => {
    const { items, err } = await planItems(['-f', 'examples/queues-gangs']);
    assert.deepEqual(
      [...items.keys()],
      [
        'research/job-sweep',
        'research/job-finetune',
        'prod/job-nightly',
        'prod/encoder',
        'prod/embed',
        'research/retrieval',
        'research/eval',
      ],
    );
    const admitted = [...items].filter(([, w]) => cond(w, 'Admitted')?.status === 'True').map(([k]) => k);
    assert.deepEqual(admitted, ['research/job-finetune', 'prod/job-nightly', 'prod/encoder', 'research/eval']);
    // The running low-priority sweep is preempted in its own ClusterQueue.
    const sweep = items.get('research/job-sweep')!;
    assert.equal(cond(sweep, 'Preempted')?.reason, 'InClusterQueue');
    assert.equal(cond(sweep, 'Evicted')?.reason, 'Preempted');
    assert.equal(sweep.status?.admission, undefined);
    // The fine-tune lands in one rack, with its class's priority resolved.
    const ft = items.get('research/job-finetune')!;
    assert.equal(ft.spec.priority, 1000);
    assert.equal(ft.status!.admission!.clusterQueue, 'research');
    // The gang group across namespaces waits together, with one reason.
    for (const k of ['prod/embed', 'research/retrieval']) {
      assert.match(
        cond(items.get(k)!, 'QuotaReserved')!.message!,
        /^gang group \[prod\/embed research\/retrieval\] is admitted whole or not at all/,
      );
    }
    // Gang Workloads carry the seed's annotations.
    assert.equal(items.get('prod/encoder')!.metadata.annotations?.['gang.scheduling.koordinator.sh/min-available'], '2');
    assert.match(err, /admitted, 1 preempted/);
  });

  it("a preempted Workload names its preemptor's namespace/name in topoqueue.io/preemptor, as the simulation report does", async () => {
    const { items } = await planItems(['-f', 'examples/queues-gangs']);
    const sweep = items.get('research/job-sweep')!;
    const ft = items.get('research/job-finetune')!;
    assert.equal(sweep.metadata.annotations?.['topoqueue.io/preemptor'], `research/${ft.metadata.name}`);
    for (const [k, w] of items)
      if (k !== 'research/job-sweep') assert.equal(w.metadata.annotations?.['topoqueue.io/preemptor'], undefined, k);
  });

  it('the preemptor named by a UID in the message is found by that UID', () => {
    const wl = (name: string, uid: string, conditions: Condition[] = []): Workload => ({
      apiVersion: 'kueue.x-k8s.io/v1beta2',
      kind: 'Workload',
      metadata: { name, namespace: 'ns', uid },
      spec: { podSets: [] },
      status: { conditions },
    });
    const message = preemptionMessage('uid-big', PreemptedReason.InClusterQueue);
    const victim = wl('small', 'uid-small', [{ type: 'Preempted', status: 'True', reason: 'InClusterQueue', message }]);
    const input = [victim, wl('big', 'uid-big')];
    namePreemptors(input);
    assert.equal(input[0]!.metadata.annotations?.['topoqueue.io/preemptor'], 'ns/big');
    assert.equal(victim.metadata.annotations, undefined, 'the input object is not changed');
    assert.equal(input[1]!.metadata.annotations, undefined);
  });

  it('is deterministic', async () => {
    const a = await run(['plan', '-f', 'examples/queues-gangs']);
    const b = await run(['plan', '-f', 'examples/queues-gangs']);
    assert.equal(a.out, b.out);
  });

  it('a Workload whose LocalQueue does not exist is pending with the reason', async () => {
    const job = tmpFile(
      'job.yaml',
      `apiVersion: batch/v1
kind: Job
metadata: {name: lost, namespace: research, labels: {kueue.x-k8s.io/queue-name: nope}}
spec:
  parallelism: 1
  template:
    spec:
      restartPolicy: Never
      containers: [{name: c, image: x, resources: {requests: {cpu: "1"}}}]
`,
    );
    const { items } = await planItems(['-f', 'examples/queues-gangs/cluster.yaml', '-f', 'examples/queues-gangs/queues.yaml', '-f', job]);
    assert.equal(cond(items.get('research/job-lost')!, 'QuotaReserved')?.message, "LocalQueue nope doesn't exist");
  });

  it('a Koordinator gang whose pods are short of its minimum waits with the peer message', async () => {
    const pods = tmpFile(
      'pods.yaml',
      [0, 1]
        .map(
          (i) => `apiVersion: v1
kind: Pod
metadata:
  name: p${i}
  namespace: research
  labels: {kueue.x-k8s.io/queue-name: user-queue}
  annotations: {gang.scheduling.koordinator.sh/name: g, gang.scheduling.koordinator.sh/min-available: "3"}
spec:
  containers: [{name: c, image: x, resources: {requests: {cpu: "1"}}}]
`,
        )
        .join('---\n'),
    );
    const { items } = await planItems(['-f', 'examples/queues-gangs/cluster.yaml', '-f', 'examples/queues-gangs/queues.yaml', '-f', pods]);
    assert.equal(
      cond(items.get('research/g')!, 'QuotaReserved')?.message,
      'gangGroup [research/g] basic check: memberGangs [research/g] child pod not collect enough, current gang: research/g',
    );
  });

  it('stopPolicy HoldAndDrain evicts what the ClusterQueue admitted and admits nothing new', async () => {
    const queues = readFileSync('examples/queues-gangs/queues.yaml', 'utf8').replace(
      '  queueingStrategy: BestEffortFIFO',
      '  queueingStrategy: BestEffortFIFO\n  stopPolicy: HoldAndDrain',
    );
    const q = tmpFile('queues.yaml', queues);
    const { items } = await planItems(['-f', 'examples/queues-gangs/cluster.yaml', '-f', q, '-f', 'examples/queues-gangs/workloads.yaml']);
    const sweep = items.get('research/job-sweep')!;
    assert.equal(cond(sweep, 'Evicted')?.reason, 'ClusterQueueStopped');
    assert.equal(sweep.status?.admission, undefined);
    assert.equal(cond(items.get('research/job-finetune')!, 'QuotaReserved')?.message, 'ClusterQueue research is inactive');
  });
});
