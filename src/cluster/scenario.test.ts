import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KObject } from '../api/objects.ts';
import { readyNode, testCluster, type TestCluster } from '../testing/cluster.ts';
import { scenarioController } from './scenario.ts';

const ev = (name: string, spec: Record<string, unknown>, annotations?: Record<string, string>): KObject =>
  ({
    apiVersion: 'topoqueue.io/v1alpha1',
    kind: 'SimulationEvent',
    metadata: { name, ...(annotations ? { annotations } : {}) },
    spec,
  }) as KObject;

const node = (c: TestCluster, name: string) => c.get('Node', name);
const ready = (c: TestCluster, name: string) => node(c, name)?.status?.conditions?.find((x) => x.type === 'Ready');
const status = (c: TestCluster, name: string) => c.get('SimulationEvent', name)?.status;

describe('scenario controller', () => {
  it('applies each action to its Node at spec.at from the simulation start', async () => {
    const s = scenarioController();
    const c = await testCluster(
      [s],
      [
        readyNode('n1'),
        readyNode('n2'),
        ev('down', { at: '30s', node: 'n1', action: 'NotReady' }),
        ev('up', { at: '2m', node: 'n1', action: 'Ready' }),
        ev('taint', { at: '1m', node: 'n2', action: 'Taint', taint: { key: 'example.com/maint', value: 'yes', effect: 'NoExecute' } }),
        ev('cordon', { at: '1m10s', node: 'n2', action: 'Cordon' }),
        ev('untaint', { at: '3m', node: 'n2', action: 'Untaint', taint: { key: 'example.com/maint' } }),
        ev('uncordon', { at: '4m', node: 'n2', action: 'Uncordon' }),
        ev('delete', { at: '5m', node: 'n1', action: 'Delete' }),
      ],
    );
    await c.run(29_999);
    assert.equal(ready(c, 'n1')?.status, 'True');
    assert.equal(status(c, 'down'), undefined);
    await c.run(1);
    assert.deepEqual(
      { ...ready(c, 'n1') },
      {
        type: 'Ready',
        status: 'False',
        reason: 'NodeStatusUnknown',
        message: 'Kubelet stopped posting node status.',
        lastHeartbeatTime: '2026-01-01T00:00:30Z',
        lastTransitionTime: '2026-01-01T00:00:30Z',
      },
    );
    assert.deepEqual(status(c, 'down'), {
      applied: '2026-01-01T00:00:30Z',
      result: 'Applied',
      message: 'Node n1: Ready=False (NodeStatusUnknown)',
    });
    await c.run(30_000);
    assert.deepEqual(node(c, 'n2')?.spec?.taints, [
      { key: 'example.com/maint', value: 'yes', effect: 'NoExecute', timeAdded: '2026-01-01T00:01:00Z' },
    ]);
    await c.run(10_000);
    assert.equal(node(c, 'n2')?.spec?.unschedulable, true);
    await c.run(50_000);
    assert.equal(ready(c, 'n1')?.reason, 'KubeletReady');
    await c.run(60_000);
    assert.equal(node(c, 'n2')?.spec?.taints, undefined);
    await c.run(60_000);
    assert.equal(node(c, 'n2')?.spec?.unschedulable, undefined);
    await c.run();
    assert.equal(node(c, 'n1'), undefined);
    assert.equal(c.elapsed(), 300);
    assert.deepEqual(
      s.state.log.map((l) => [l.name, (l.at - c.clock.now()) / 1000 + 300]),
      [
        ['down', 30],
        ['taint', 60],
        ['cordon', 70],
        ['up', 120],
        ['untaint', 180],
        ['uncordon', 240],
        ['delete', 300],
      ],
    );
  });

  it('counts from the simulation-start annotation when given; an event already due applies at once', async () => {
    const d = await testCluster(
      [scenarioController()],
      [
        readyNode('n1'),
        ev('late', { at: '10s', node: 'n1', action: 'Cordon' }, { 'topoqueue.io/simulation-start': '2025-12-31T23:00:00Z' }),
        ev('rel', { at: '10s', node: 'n1', action: 'NotReady' }),
      ],
    );
    await d.run(0);
    assert.equal(status(d, 'late')?.result, 'Applied');
    assert.equal(status(d, 'rel'), undefined);
    await d.run();
    assert.equal(d.elapsed(), 10);
  });

  it('a bad event gets result Failed and a clear message, never a crash or a retry', async () => {
    const c = await testCluster(
      [scenarioController()],
      [
        readyNode('n1'),
        ev('no-node', { at: '1s', node: 'n9', action: 'NotReady' }),
        ev('bad-at', { at: 'soon', node: 'n1', action: 'NotReady' }),
        ev('bad-action', { at: '1s', node: 'n1', action: 'Reboot' }),
        ev('bad-start', { at: '1s', node: 'n1', action: 'Ready' }, { 'topoqueue.io/simulation-start': 'yesterday' }),
        ev('untaint-none', { at: '1s', node: 'n1', action: 'Untaint', taint: { key: 'k' } }),
      ],
    );
    await c.run();
    assert.deepEqual(status(c, 'no-node'), {
      applied: '2026-01-01T00:00:01Z',
      result: 'Failed',
      message: 'Node "n9" not found: nothing to apply NotReady to',
    });
    assert.equal(status(c, 'bad-at')?.result, 'Failed');
    assert.equal(
      status(c, 'bad-at')?.message,
      'SimulationEvent/bad-at, spec.at: must be a Go duration such as "90s", "10m" or "1h30m", got "soon"',
    );
    assert.match(status(c, 'bad-action')?.message ?? '', /spec\.action: must be one of "NotReady", .*got the string "Reboot"/);
    assert.equal(
      status(c, 'bad-start')?.message,
      'topoqueue.io/simulation-start="yesterday" is not an RFC 3339 time such as "2026-01-01T00:00:00Z"',
    );
    assert.deepEqual(status(c, 'untaint-none'), {
      applied: '2026-01-01T00:00:01Z',
      result: 'Applied',
      message: 'Node n1: no taint k to remove',
    });
    assert.deepEqual(c.manager.errors, []);
    assert.equal(ready(c, 'n1')?.status, 'True');
  });
});
