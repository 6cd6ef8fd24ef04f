// The Node check may only accept what the Node schema returns unchanged: for every Node it
// accepts, parseObject (the schema) accepts it too and returns a deep-equal object.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { NodeAsWritten } from './node-check.ts';
import type { KObject } from './objects.ts';
import { parseObject } from './schemas.ts';

/** A Node as `kubectl get node -o yaml` prints it (trimmed), with what the check reads and what it passes through. */
function kubectlNode(): Record<string, unknown> {
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name: 'gke-a3u-0-0001',
      uid: '6c9a4b9e-0a51-4b7e-9f0e-5b1d2a3c4d5e',
      resourceVersion: '123456',
      creationTimestamp: '2026-01-02T03:04:05Z',
      labels: {
        'kubernetes.io/hostname': 'gke-a3u-0-0001',
        'cloud.provider.com/topology-rack': 'r1',
        'node.kubernetes.io/instance-type': 'a3',
      },
      annotations: { 'node.alpha.kubernetes.io/ttl': '0', 'volumes.kubernetes.io/controller-managed-attach-detach': 'true' },
      managedFields: [{ manager: 'kubelet', operation: 'Update', fieldsV1: { 'f:metadata': { 'f:labels': { '.': {} } } } }],
    },
    spec: {
      podCIDR: '10.0.1.0/24',
      podCIDRs: ['10.0.1.0/24'],
      providerID: 'gce://p/z/n',
      taints: [{ key: 'nvidia.com/gpu', value: 'present', effect: 'NoSchedule', timeAdded: '2026-01-02T03:04:05Z' }],
      unschedulable: false,
    },
    status: {
      addresses: [{ type: 'InternalIP', address: '10.0.0.1' }],
      allocatable: { cpu: '127500m', memory: '1056Gi', 'nvidia.com/gpu': '8', pods: '110', 'ephemeral-storage': '100Gi' },
      capacity: { cpu: '128', memory: '1Ti', 'nvidia.com/gpu': '8', pods: '110' },
      conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady', lastHeartbeatTime: '2026-01-02T03:04:05Z' }],
      nodeInfo: { kubeletVersion: 'v1.33.1', architecture: 'amd64' },
      images: [{ names: ['a', 'b'], sizeBytes: 123 }],
    },
  };
}

function assertSameAsSchema(obj: Record<string, unknown>, check = new NodeAsWritten()): boolean {
  const copy = structuredClone(obj);
  const accepted = check.accepts(obj);
  assert.deepEqual(obj, copy, 'the check does not modify the object');
  if (accepted) {
    const r = parseObject(structuredClone(obj) as unknown as KObject, {});
    assert.deepEqual(r.errors, [], `accepted but the schema refuses: ${JSON.stringify(obj)}`);
    assert.deepEqual(r.object, obj, 'accepted but the schema changes it');
  }
  return accepted;
}

describe('Nodes as written', () => {
  test('a kubectl Node and a minimal one are accepted, and the schema returns them unchanged', () => {
    assert.equal(assertSameAsSchema(kubectlNode()), true);
    assert.equal(assertSameAsSchema({ apiVersion: 'v1', kind: 'Node', metadata: { name: 'n' } }), true);
  });

  test('what the schema refuses or changes is left to the schema', () => {
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the cases reach into the Node freely
    const cases: [string, (n: Record<string, any>) => void][] = [
      ['a null field (dropped by the schema)', (n) => (n.spec.podCIDR = null)],
      ['a null deep in an unknown field', (n) => (n.status.nodeInfo.x = null)],
      ['a number quantity (the schema makes it a string)', (n) => (n.status.allocatable.cpu = 128)],
      ['a bad quantity', (n) => (n.status.allocatable.cpu = '12x')],
      ['a negative quantity', (n) => (n.status.capacity.memory = '-1')],
      ['a bad label key', (n) => (n.metadata.labels['bad key'] = 'x')],
      ['a bad label value', (n) => (n.metadata.labels.a = 'x y')],
      ['a bad annotation key', (n) => (n.metadata.annotations['/x'] = 'x')],
      ['a number label value', (n) => (n.metadata.labels.a = 1)],
      ['a bad name', (n) => (n.metadata.name = 'Not_A_Name')],
      ['a namespace', (n) => (n.metadata.namespace = 'default')],
      ['owner references', (n) => (n.metadata.ownerReferences = [])],
      ['a taint without effect', (n) => delete n.spec.taints[0].effect],
      ['a taint with a bad effect', (n) => (n.spec.taints[0].effect = 'Sometimes')],
      ['a taint with a bad key', (n) => (n.spec.taints[0].key = '-x')],
      ['a taint with a number value', (n) => (n.spec.taints[0].value = 1)],
      ['unschedulable as a string', (n) => (n.spec.unschedulable = 'true')],
      ['a condition without type', (n) => (n.status.conditions[0].type = '')],
      ['a condition with a boolean status', (n) => (n.status.conditions[0].status = true)],
      ['spec as a list', (n) => (n.spec = [])],
      ['status as a string', (n) => (n.status = 'x')],
      ['labels as a list', (n) => (n.metadata.labels = [])],
      ['finalizers with a number', (n) => (n.metadata.finalizers = [1])],
      ['a uid that is a number', (n) => (n.metadata.uid = 7)],
    ];
    for (const [what, change] of cases) {
      const n = kubectlNode();
      change(n);
      assert.equal(assertSameAsSchema(n), false, what);
    }
  });

  test('remembered label keys and quantities give the same answers as the first time', () => {
    const check = new NodeAsWritten();
    for (let i = 0; i < 3; i++) assert.equal(assertSameAsSchema(kubectlNode(), check), true);
    const bad = kubectlNode();
    (bad.status as { allocatable: Record<string, string> }).allocatable.pods = '1.5x';
    assert.equal(assertSameAsSchema(bad, check), false);
  });

  test('random Nodes: whatever the check accepts, the schema returns unchanged', () => {
    // Mostly valid pieces, sometimes not: each Node has a fair chance to pass.
    const mostly = <T, U>(good: fc.Arbitrary<T>, bad: fc.Arbitrary<U>) =>
      fc.oneof({ arbitrary: good, weight: 12 }, { arbitrary: bad, weight: 1 });
    const goodKey = fc.constantFrom('a', 'x.y/z', 'nvidia.com/gpu', 'kubernetes.io/hostname', 'r-1');
    const text = fc.oneof(goodKey, fc.constantFrom('', '-x', 'Bad Key', 'a/b/c', 'NoSchedule', 'True'), fc.string({ maxLength: 8 }));
    const any = fc.oneof(text, fc.integer(), fc.boolean(), fc.constant(null), fc.constant([null]), fc.constant({ a: null }));
    const resource = fc.constantFrom('cpu', 'memory', 'pods', 'nvidia.com/gpu', 'example.com/x', 'bad name');
    const quantity = mostly(
      fc.constantFrom('1', '500m', '16Gi', '1Ti', '0.5', '110'),
      fc.oneof(fc.constantFrom('-1', '1e3', 'x', ''), fc.integer({ min: -2, max: 200 })),
    );
    const node = fc.record(
      {
        apiVersion: fc.constant('v1'),
        kind: fc.constant('Node'),
        metadata: fc.record(
          {
            name: mostly(fc.constantFrom('n1', 'gpu-0-00-01', 'a.b'), text),
            labels: fc.dictionary(mostly(goodKey, text), mostly(fc.constantFrom('v', 'blk-1', ''), any), {
              maxKeys: 3,
              noNullPrototype: true,
            }),
            annotations: fc.dictionary(mostly(goodKey, text), mostly(fc.string({ maxLength: 5 }), any), {
              maxKeys: 2,
              noNullPrototype: true,
            }),
            uid: mostly(fc.string({ maxLength: 5 }), any),

            extra: mostly(fc.string({ maxLength: 3 }), any),
          },
          { requiredKeys: ['name'], noNullPrototype: true },
        ),
        spec: mostly(
          fc.record(
            {
              unschedulable: mostly(fc.boolean(), any),
              taints: fc.array(
                fc.record(
                  {
                    key: mostly(goodKey, any),
                    value: mostly(fc.string({ maxLength: 4 }), any),
                    effect: mostly(fc.constantFrom('NoSchedule', 'NoExecute', 'PreferNoSchedule'), any),
                    timeAdded: mostly(fc.string({ maxLength: 3 }), any),
                  },
                  { requiredKeys: ['key', 'effect'], noNullPrototype: true },
                ),
                { maxLength: 2 },
              ),
              podCIDR: mostly(fc.string({ maxLength: 3 }), any),
            },
            { requiredKeys: [], noNullPrototype: true },
          ),
          any,
        ),
        status: mostly(
          fc.record(
            {
              allocatable: fc.dictionary(resource, quantity, { maxKeys: 4, noNullPrototype: true }),
              capacity: fc.dictionary(resource, quantity, { maxKeys: 2, noNullPrototype: true }),
              conditions: fc.array(
                fc.record(
                  { type: mostly(fc.constantFrom('Ready', 'X'), any), status: mostly(fc.constantFrom('True', 'False'), any), reason: any },
                  { requiredKeys: ['type', 'status'], noNullPrototype: true },
                ),
                { maxLength: 2 },
              ),
              nodeInfo: fc.dictionary(text, mostly(fc.string({ maxLength: 3 }), any), { maxKeys: 2, noNullPrototype: true }),
            },
            { requiredKeys: [], noNullPrototype: true },
          ),
          any,
        ),
      },
      { requiredKeys: ['apiVersion', 'kind', 'metadata'], noNullPrototype: true },
    );
    const check = new NodeAsWritten();
    let accepted = 0;
    fc.assert(
      fc.property(node, (n) => {
        if (assertSameAsSchema(n as Record<string, unknown>, check)) accepted++;
      }),
      { numRuns: 1000 },
    );
    assert.ok(accepted > 20, `only ${accepted} of 1000 random Nodes accepted: the property says little`);
  });
});
