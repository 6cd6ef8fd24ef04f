// The ObjectStore conformance suite: the contract written at the top of store.ts as cases
// that every implementation runs (the in-memory store, the durable one, the client-backed
// one), after Hono's `common.case.test.ts`. An implementation that cannot do a case lists
// it in `unsupported` with the reason; the suite skips it and says why, and refuses names
// that are not cases (so a renamed case cannot be skipped silently).
//
// Each case gets a fresh, empty store from the factory and closes it afterwards. The
// cases use Pods (namespaced, core group) and Nodes (cluster-scoped). resourceVersions
// are compared as numbers: the contract's store-wide write counter. Messages are checked
// word for word where the API server's are fixed (conflict on a stale resourceVersion,
// not found, already exists, admission denial); precondition failures only by reason.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Node, Pod } from '../api/objects.ts';
import {
  AlreadyExistsError,
  ConflictError,
  InvalidError,
  NotFoundError,
  type ObjectStore,
  retryOnConflict,
  StoreError,
  type WatchEvent,
} from './store.ts';

export interface ConformanceStore {
  store: ObjectStore;
  close(): Promise<void>;
}

export interface ConformanceOptions {
  /** Case name -> why this implementation cannot do it. */
  unsupported?: Record<string, string>;
}

interface Case {
  name: string;
  run(store: ObjectStore): Promise<void>;
}

const pod = (name: string, labels: Record<string, string> = {}, namespace = 'ns'): Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace, labels },
  spec: { containers: [{ name: 'c', image: 'busybox' }] },
});

const node = (name: string, labels: Record<string, string> = {}): Node => ({
  apiVersion: 'v1',
  kind: 'Node',
  metadata: { name, labels },
  spec: {},
});

const rv = (o: { metadata: { resourceVersion?: string } }): number => Number(o.metadata.resourceVersion);

const CONFLICT_A =
  'Operation cannot be fulfilled on pods "a": the object has been modified; please apply your changes to the latest version and try again';

const isStoreError = (code: number, reason: StoreError['reason'], message?: string) => (e: unknown) =>
  e instanceof StoreError && e.code === code && e.reason === reason && (message === undefined || e.message === message);

/** A view of `store` whose first `update`/`updateStatus` lets `race` write first (a competing writer). */
function racing(store: ObjectStore, race: () => Promise<void>): ObjectStore {
  let raced = false;
  const first = async () => {
    if (raced) return;
    raced = true;
    await race();
  };
  return new Proxy(store, {
    get(target, prop) {
      if (prop === 'update' || prop === 'updateStatus') {
        return async (obj: Pod) => {
          await first();
          return prop === 'update' ? target.update(obj) : target.updateStatus(obj);
        };
      }
      const v = Reflect.get(target, prop, target) as unknown;
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
}

const CASES: Case[] = [
  // --- scope -----------------------------------------------------------------------------
  {
    name: 'Pods are namespaced, Nodes are cluster-scoped',
    async run(store) {
      assert.equal(store.namespaced('Pod'), true);
      assert.equal(store.namespaced('Node'), false);
    },
  },
  {
    name: 'create puts a namespaced object without a namespace in "default" and drops the namespace of a cluster-scoped one',
    async run(store) {
      const p = await store.create<Pod>({ ...pod('a'), metadata: { name: 'a' } });
      assert.equal(p.metadata.namespace, 'default');
      assert.equal((await store.get('Pod', 'default', 'a'))?.metadata.name, 'a');
      const n = await store.create({ ...node('n1'), metadata: { name: 'n1', namespace: 'ns' } });
      assert.equal(n.metadata.namespace, undefined);
      assert.equal((await store.get('Node', undefined, 'n1'))?.metadata.name, 'n1');
    },
  },

  // --- create ----------------------------------------------------------------------------
  {
    name: 'create sets uid, resourceVersion, creationTimestamp and generation 1',
    async run(store) {
      const p = await store.create(pod('a'));
      assert.ok(p.metadata.uid, 'uid');
      assert.ok(p.metadata.resourceVersion, 'resourceVersion');
      assert.match(p.metadata.creationTimestamp ?? '', /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
      assert.equal(p.metadata.generation, 1);
      assert.equal(p.metadata.deletionTimestamp, undefined);
      const q = await store.create(pod('b'));
      assert.notEqual(q.metadata.uid, p.metadata.uid, 'every object has its own uid');
    },
  },
  {
    name: 'create ignores server-owned metadata the caller set',
    async run(store) {
      const p = await store.create({
        ...pod('a'),
        metadata: {
          ...pod('a').metadata,
          uid: 'mine',
          generation: 7,
          creationTimestamp: '2000-01-01T00:00:00Z',
          deletionTimestamp: '2000-01-01T00:00:00Z',
        },
      });
      assert.notEqual(p.metadata.uid, 'mine');
      assert.equal(p.metadata.generation, 1);
      assert.notEqual(p.metadata.creationTimestamp, '2000-01-01T00:00:00Z');
      assert.equal(p.metadata.deletionTimestamp, undefined);
    },
  },
  {
    name: 'create of an existing name is AlreadyExists (409) naming the resource',
    async run(store) {
      await store.create(pod('a'));
      await assert.rejects(
        store.create(pod('a')),
        (e: unknown) => e instanceof AlreadyExistsError && isStoreError(409, 'AlreadyExists', 'pods "a" already exists')(e),
      );
      // The same name in another namespace is another object.
      await store.create(pod('a', {}, 'other'));
    },
  },
  {
    name: 'create honours generateName with a distinct suffix per object',
    async run(store) {
      const input: Pod = { ...pod(''), metadata: { generateName: 'worker-', namespace: 'ns' } as Pod['metadata'] };
      const a = await store.create(input);
      const b = await store.create(input);
      assert.match(a.metadata.name, /^worker-[a-z0-9]{5}$/);
      assert.match(b.metadata.name, /^worker-[a-z0-9]{5}$/);
      assert.notEqual(a.metadata.name, b.metadata.name);
      assert.equal((await store.get('Pod', 'ns', a.metadata.name))?.metadata.uid, a.metadata.uid);
    },
  },
  {
    name: 'create without a name or generateName is Invalid (422)',
    async run(store) {
      await assert.rejects(
        store.create({ ...pod(''), metadata: { namespace: 'ns' } as Pod['metadata'] }),
        (e: unknown) => e instanceof InvalidError && e.code === 422 && /metadata\.name/.test(e.message),
      );
    },
  },

  // --- get and list ----------------------------------------------------------------------
  {
    name: 'get returns the stored object, or undefined when there is none',
    async run(store) {
      const p = await store.create(pod('a', { app: 'x' }));
      const got = await store.get('Pod', 'ns', 'a');
      assert.equal(got?.metadata.uid, p.metadata.uid);
      assert.deepEqual(got?.metadata.labels, { app: 'x' });
      assert.equal(got?.spec.containers[0]?.image, 'busybox');
      assert.equal(await store.get('Pod', 'ns', 'zzz'), undefined);
      assert.equal(await store.get('Pod', 'other', 'a'), undefined, 'another namespace');
      assert.equal(await store.get('Node', undefined, 'a'), undefined, 'another kind');
    },
  },
  {
    name: 'list filters by namespace and by label selector',
    async run(store) {
      await store.create(pod('a', { app: 'x', tier: 'web' }));
      await store.create(pod('b', { app: 'y' }));
      await store.create(pod('c', { app: 'x' }, 'other'));
      const names = (items: readonly Pod[]) => items.map((p) => `${p.metadata.namespace}/${p.metadata.name}`).sort();
      assert.deepEqual(names((await store.list('Pod')).items), ['ns/a', 'ns/b', 'other/c']);
      assert.deepEqual(names((await store.list('Pod', { namespace: 'ns' })).items), ['ns/a', 'ns/b']);
      assert.deepEqual(names((await store.list('Pod', { labelSelector: { matchLabels: { app: 'x' } } })).items), ['ns/a', 'other/c']);
      assert.deepEqual(names((await store.list('Pod', { namespace: 'ns', labelSelector: { matchLabels: { app: 'x' } } })).items), ['ns/a']);
      assert.deepEqual(
        names((await store.list('Pod', { labelSelector: { matchExpressions: [{ key: 'tier', operator: 'Exists' }] } })).items),
        ['ns/a'],
      );
      assert.deepEqual(
        names((await store.list('Pod', { labelSelector: { matchExpressions: [{ key: 'app', operator: 'NotIn', values: ['x'] }] } })).items),
        ['ns/b'],
      );
      assert.deepEqual((await store.list('Node')).items, [], 'a kind with no objects lists empty');
    },
  },
  {
    name: 'list of a cluster-scoped kind ignores the namespace option',
    async run(store) {
      await store.create(node('n1'));
      await store.create(node('n2', { zone: 'a' }));
      assert.deepEqual((await store.list('Node', { namespace: 'ns' })).items.map((n) => n.metadata.name).sort(), ['n1', 'n2']);
      assert.deepEqual(
        (await store.list('Node', { labelSelector: { matchLabels: { zone: 'a' } } })).items.map((n) => n.metadata.name),
        ['n2'],
      );
    },
  },

  // --- resourceVersion -------------------------------------------------------------------
  {
    name: 'every write bumps one store-wide resourceVersion, across kinds',
    async run(store) {
      const a = await store.create(pod('a'));
      const n = await store.create(node('n1'));
      assert.ok(rv(n) > rv(a), 'a write of another kind takes a later resourceVersion');
      const u = await store.update({ ...pod('a'), metadata: { ...pod('a').metadata, labels: { x: '1' } } });
      assert.ok(rv(u) > rv(n));
      const s = await store.updateStatus({ ...u, status: { phase: 'Running' } });
      assert.ok(rv(s) > rv(u));
      const listed = await store.list('Pod');
      assert.equal(Number(listed.resourceVersion), rv(s), 'a list is consistent with the last write');
      await store.delete('Node', undefined, 'n1');
      const after = await store.list('Node');
      assert.ok(Number(after.resourceVersion) > rv(s), 'a delete is a write too');
    },
  },

  // --- update, conflicts -----------------------------------------------------------------
  {
    name: 'update with a stale resourceVersion is a Conflict (409) with the API server message',
    async run(store) {
      const p = await store.create(pod('a'));
      await store.update({ ...p, metadata: { ...p.metadata, labels: { x: '1' } } });
      await assert.rejects(
        store.update({ ...p, metadata: { ...p.metadata, labels: { x: '2' } } }),
        (e: unknown) => e instanceof ConflictError && isStoreError(409, 'Conflict', CONFLICT_A)(e),
      );
      await assert.rejects(
        store.updateStatus({ ...p, status: { phase: 'Running' } }),
        (e: unknown) => e instanceof ConflictError && isStoreError(409, 'Conflict', CONFLICT_A)(e),
      );
      assert.deepEqual((await store.get('Pod', 'ns', 'a'))?.metadata.labels, { x: '1' }, 'the refused write changed nothing');
    },
  },
  {
    name: 'update with another uid is a Conflict',
    async run(store) {
      const p = await store.create(pod('a'));
      await assert.rejects(
        store.update({ ...p, metadata: { ...p.metadata, resourceVersion: undefined, uid: 'someone-else' } }),
        isStoreError(409, 'Conflict'),
      );
    },
  },
  {
    name: 'update without a resourceVersion is unconditional',
    async run(store) {
      await store.create(pod('a'));
      await store.update({ ...pod('a'), metadata: { ...pod('a').metadata, labels: { x: '1' } } });
      const u = await store.update({ ...pod('a'), metadata: { ...pod('a').metadata, labels: { x: '2' } } });
      assert.deepEqual(u.metadata.labels, { x: '2' });
    },
  },
  {
    name: 'update and updateStatus of a missing object are NotFound (404) naming it',
    async run(store) {
      const notFound = (e: unknown) =>
        e instanceof NotFoundError && isStoreError(404, 'NotFound', 'pods "zzz" not found in namespace "ns"')(e);
      await assert.rejects(store.update(pod('zzz')), notFound);
      await assert.rejects(store.updateStatus(pod('zzz')), notFound);
      await assert.rejects(store.update(node('zzz')), isStoreError(404, 'NotFound', 'nodes "zzz" not found'));
    },
  },

  // --- status subresource ----------------------------------------------------------------
  {
    name: 'update never changes status',
    async run(store) {
      const p = await store.create(pod('a'));
      const u = await store.update({ ...p, metadata: { ...p.metadata, labels: { x: '1' } }, status: { phase: 'Running' } });
      assert.equal(u.status, undefined);
      assert.deepEqual(u.metadata.labels, { x: '1' }, 'the rest of the update went through');
      const s = await store.updateStatus({ ...u, status: { phase: 'Running' } });
      const v = await store.update({ ...s, status: { phase: 'Failed' } });
      assert.equal(v.status?.phase, 'Running', 'the stored status stays');
      assert.equal((await store.get('Pod', 'ns', 'a'))?.status?.phase, 'Running');
    },
  },
  {
    name: 'updateStatus changes only status',
    async run(store) {
      const p = await store.create(pod('a', { app: 'x' }));
      const s = await store.updateStatus({
        ...p,
        metadata: { ...p.metadata, labels: { changed: 'yes' } },
        spec: { containers: [{ name: 'other' }] },
        status: { phase: 'Running' },
      });
      assert.equal(s.status?.phase, 'Running');
      assert.deepEqual(s.metadata.labels, { app: 'x' });
      assert.equal(s.spec.containers[0]?.name, 'c');
      const got = await store.get('Pod', 'ns', 'a');
      assert.equal(got?.status?.phase, 'Running');
      assert.deepEqual(got?.metadata.labels, { app: 'x' });
    },
  },

  // --- server-owned metadata, generation ---------------------------------------------------
  {
    name: 'update and updateStatus ignore server-owned metadata the caller set',
    async run(store) {
      const p = await store.create(pod('a'));
      const fake = { creationTimestamp: '2000-01-01T00:00:00Z', generation: 99, deletionTimestamp: '2000-01-01T00:00:00Z' };
      const u = await store.update({ ...p, metadata: { ...p.metadata, ...fake, labels: { x: '1' } } });
      assert.equal(u.metadata.uid, p.metadata.uid);
      assert.equal(u.metadata.creationTimestamp, p.metadata.creationTimestamp);
      assert.equal(u.metadata.generation, 1);
      assert.equal(u.metadata.deletionTimestamp, undefined);
      const s = await store.updateStatus({ ...u, metadata: { ...u.metadata, ...fake }, status: { phase: 'Running' } });
      assert.equal(s.metadata.creationTimestamp, p.metadata.creationTimestamp);
      assert.equal(s.metadata.generation, 1);
      assert.equal(s.metadata.deletionTimestamp, undefined);
      assert.ok(await store.get('Pod', 'ns', 'a'), 'a deletionTimestamp from the caller deletes nothing');
    },
  },
  {
    name: 'generation goes up on a spec change only',
    async run(store) {
      const p = await store.create(pod('a'));
      const labels = await store.update({ ...p, metadata: { ...p.metadata, labels: { x: '1' } } });
      assert.equal(labels.metadata.generation, 1, 'metadata change');
      const status = await store.updateStatus({ ...labels, status: { phase: 'Running' } });
      assert.equal(status.metadata.generation, 1, 'status change');
      const same = await store.update({ ...status, spec: { containers: [{ name: 'c', image: 'busybox' }] } });
      assert.equal(same.metadata.generation, 1, 'an equal spec');
      const spec = await store.update({ ...same, spec: { containers: [{ name: 'c', image: 'alpine' }] } });
      assert.equal(spec.metadata.generation, 2, 'spec change');
    },
  },

  // --- delete, finalizers ----------------------------------------------------------------
  {
    name: 'delete without finalizers removes the object and returns undefined',
    async run(store) {
      await store.create(pod('a'));
      assert.equal(await store.delete('Pod', 'ns', 'a'), undefined);
      assert.equal(await store.get('Pod', 'ns', 'a'), undefined);
      await store.create(pod('a'));
      assert.ok(await store.get('Pod', 'ns', 'a'), 'the name is free again');
    },
  },
  {
    name: 'delete of a missing object is NotFound (404)',
    async run(store) {
      await assert.rejects(
        store.delete('Pod', 'ns', 'zzz'),
        (e: unknown) => e instanceof NotFoundError && isStoreError(404, 'NotFound', 'pods "zzz" not found in namespace "ns"')(e),
      );
      await assert.rejects(store.delete('Node', undefined, 'zzz'), isStoreError(404, 'NotFound', 'nodes "zzz" not found'));
    },
  },
  {
    name: 'delete preconditions on resourceVersion and uid are Conflicts',
    async run(store) {
      const p = await store.create(pod('a'));
      await store.update({ ...p, metadata: { ...p.metadata, labels: { x: '1' } } });
      await assert.rejects(store.delete('Pod', 'ns', 'a', { resourceVersion: p.metadata.resourceVersion }), isStoreError(409, 'Conflict'));
      await assert.rejects(store.delete('Pod', 'ns', 'a', { uid: 'someone-else' }), isStoreError(409, 'Conflict'));
      assert.ok(await store.get('Pod', 'ns', 'a'), 'still there');
      await store.delete('Pod', 'ns', 'a', { uid: p.metadata.uid });
      assert.equal(await store.get('Pod', 'ns', 'a'), undefined);
    },
  },
  {
    name: 'delete with finalizers sets deletionTimestamp; removing the last finalizer removes the object',
    async run(store) {
      await store.create({ ...pod('a'), metadata: { ...pod('a').metadata, finalizers: ['f', 'g'] } });
      const left = await store.delete('Pod', 'ns', 'a');
      assert.ok(left?.metadata.deletionTimestamp, 'the deletion is marked');
      assert.deepEqual(left?.metadata.finalizers, ['f', 'g']);
      const again = await store.delete('Pod', 'ns', 'a');
      assert.equal(again?.metadata.deletionTimestamp, left?.metadata.deletionTimestamp, 'a second delete changes nothing');
      const cleared = await store.update({ ...left!, metadata: { ...left!.metadata, deletionTimestamp: undefined } });
      assert.equal(cleared.metadata.deletionTimestamp, left?.metadata.deletionTimestamp, 'a writer cannot take the deletionTimestamp away');
      const one = await store.update({ ...cleared, metadata: { ...cleared.metadata, finalizers: ['g'] } });
      assert.deepEqual(one.metadata.finalizers, ['g']);
      assert.ok(await store.get('Pod', 'ns', 'a'), 'one finalizer still holds it');
      await store.update({ ...one, metadata: { ...one.metadata, finalizers: [] } });
      assert.equal(await store.get('Pod', 'ns', 'a'), undefined);
    },
  },

  // --- watch -----------------------------------------------------------------------------
  {
    name: 'watch sees ADDED, MODIFIED and DELETED in resourceVersion order, with the old object',
    async run(store) {
      const seen: WatchEvent<Pod>[] = [];
      const stop = store.watch('Pod', (e) => seen.push(e));
      try {
        const p = await store.create(pod('a'));
        const s = await store.updateStatus({ ...p, status: { phase: 'Running' } });
        await store.update({ ...s, metadata: { ...s.metadata, labels: { x: '1' } } });
        await store.delete('Pod', 'ns', 'a');
      } finally {
        stop();
      }
      assert.deepEqual(
        seen.map((e) => `${e.type}:${e.object.metadata.name}`),
        ['ADDED:a', 'MODIFIED:a', 'MODIFIED:a', 'DELETED:a'],
      );
      for (let i = 1; i < 3; i++) assert.ok(rv(seen[i]!.object) > rv(seen[i - 1]!.object), `event ${i} after event ${i - 1}`);
      assert.equal(seen[1]!.old?.status, undefined, 'MODIFIED carries the object before the write');
      assert.equal(seen[1]!.object.status?.phase, 'Running');
      assert.deepEqual(seen[2]!.old?.metadata.labels, {});
      assert.equal(seen[3]!.object.metadata.name, 'a');
      assert.ok(seen[3]!.old, 'DELETED carries the object');
    },
  },
  {
    name: 'watch events come after the write is committed',
    async run(store) {
      const reads: Promise<string | undefined>[] = [];
      const stop = store.watch('Pod', (e) => {
        if (e.type !== 'DELETED') reads.push(store.get('Pod', 'ns', e.object.metadata.name).then((o) => o?.metadata.resourceVersion));
      });
      let written: string[];
      try {
        const p = await store.create(pod('a'));
        const u = await store.update({ ...p, metadata: { ...p.metadata, labels: { x: '1' } } });
        written = [p.metadata.resourceVersion!, u.metadata.resourceVersion!];
      } finally {
        stop();
      }
      const got = await Promise.all(reads);
      // A read started from the handler sees at least the version the event carries.
      assert.equal(got.length, 2);
      assert.ok(Number(got[0]) >= Number(written[0]));
      assert.equal(got[1], written[1]);
    },
  },
  {
    name: 'watch from a list resourceVersion misses nothing written after the list',
    async run(store) {
      await store.create(pod('a'));
      const listed = await store.list('Pod');
      const seen: string[] = [];
      const stop = store.watch('Pod', (e) => seen.push(`${e.type}:${e.object.metadata.name}`), { resourceVersion: listed.resourceVersion });
      try {
        await store.create(pod('b'));
        await store.delete('Pod', 'ns', 'a');
      } finally {
        stop();
      }
      assert.deepEqual(seen, ['ADDED:b', 'DELETED:a']);
    },
  },
  {
    name: 'watch is per kind and per namespace, and stops when told',
    async run(store) {
      const all: string[] = [];
      const inNs: string[] = [];
      const nodes: string[] = [];
      const stopAll = store.watch('Pod', (e) => all.push(`${e.object.metadata.namespace}/${e.object.metadata.name}`));
      const stopNs = store.watch('Pod', (e) => inNs.push(`${e.object.metadata.namespace}/${e.object.metadata.name}`), { namespace: 'ns' });
      const stopNodes = store.watch('Node', (e) => nodes.push(e.object.metadata.name));
      try {
        await store.create(pod('a'));
        await store.create(pod('b', {}, 'other'));
        await store.create(node('n1'));
        stopNs();
        await store.create(pod('c'));
      } finally {
        stopAll();
        stopNs();
        stopNodes();
      }
      await store.create(pod('d'));
      assert.deepEqual(all, ['ns/a', 'other/b', 'ns/c']);
      assert.deepEqual(inNs, ['ns/a']);
      assert.deepEqual(nodes, ['n1']);
    },
  },

  // --- admission hooks -------------------------------------------------------------------
  {
    name: 'admission runs every mutating hook in registration order, then every validating hook',
    async run(store) {
      const order: string[] = [];
      const stamp = (name: string) => (r: { object: Pod | { metadata: Pod['metadata'] } }) => {
        order.push(name);
        r.object.metadata.annotations = { ...r.object.metadata.annotations, seen: `${r.object.metadata.annotations?.seen ?? ''}${name};` };
      };
      store.addAdmissionHook({
        name: 'v1',
        kinds: ['Pod'],
        operations: ['CREATE'],
        type: 'validating',
        admit: (r) => void order.push(`v1 saw ${r.object.metadata.annotations?.seen}`),
      });
      store.addAdmissionHook({ name: 'm1', kinds: ['Pod'], operations: ['CREATE'], type: 'mutating', admit: stamp('m1') });
      store.addAdmissionHook({
        name: 'v2',
        kinds: ['Pod'],
        operations: ['CREATE'],
        type: 'validating',
        admit: () => void order.push('v2'),
      });
      store.addAdmissionHook({ name: 'm2', kinds: ['Pod'], operations: ['CREATE'], type: 'mutating', admit: stamp('m2') });
      const p = await store.create(pod('a'));
      assert.deepEqual(order, ['m1', 'm2', 'v1 saw m1;m2;', 'v2']);
      assert.equal(p.metadata.annotations?.seen, 'm1;m2;', 'mutations are stored');
    },
  },
  {
    name: 'an admission denial is Invalid (422) naming the hook, and writes nothing',
    async run(store) {
      store.addAdmissionHook({
        name: 'v',
        kinds: ['Pod'],
        operations: ['CREATE', 'UPDATE', 'DELETE'],
        type: 'validating',
        admit: (r) => (r.object.metadata.labels?.ok ? undefined : { denied: ['metadata.labels.ok: Required value', 'second problem'] }),
      });
      const before = (await store.list('Pod')).resourceVersion;
      await assert.rejects(
        store.create(pod('a')),
        (e: unknown) =>
          e instanceof InvalidError &&
          isStoreError(422, 'Invalid', 'admission webhook "v" denied the request: metadata.labels.ok: Required value; second problem')(e) &&
          e.problems.length === 2,
      );
      assert.equal(await store.get('Pod', 'ns', 'a'), undefined);
      assert.equal((await store.list('Pod')).resourceVersion, before, 'no write happened');
      const p = await store.create(pod('a', { ok: 'yes' }));
      await assert.rejects(store.update({ ...p, metadata: { ...p.metadata, labels: {} } }), /admission webhook "v" denied the request/);
      assert.deepEqual((await store.get('Pod', 'ns', 'a'))?.metadata.labels, { ok: 'yes' });
    },
  },
  {
    name: 'admission hooks see the operation, the old object, and only their kinds and operations',
    async run(store) {
      const seen: string[] = [];
      store.addAdmissionHook({
        name: 'spy',
        kinds: ['Pod'],
        operations: ['CREATE', 'UPDATE', 'DELETE'],
        type: 'validating',
        admit: (r) =>
          void seen.push(
            `${r.operation} ${r.object.metadata.name} old=${r.old?.metadata.labels?.x ?? '-'} new=${r.object.metadata.labels?.x ?? '-'}`,
          ),
      });
      store.addAdmissionHook({
        name: 'never',
        kinds: ['Node'],
        operations: ['CREATE'],
        type: 'validating',
        admit: () => ({ denied: ['not for pods'] }),
      });
      store.addAdmissionHook({
        name: 'create-only',
        kinds: ['Pod'],
        operations: ['CREATE'],
        type: 'validating',
        admit: (r) => (r.object.metadata.labels?.x ? { denied: ['x is set'] } : undefined),
      });
      const p = await store.create(pod('a'));
      await store.update({ ...p, metadata: { ...p.metadata, labels: { x: '1' } } });
      await store.delete('Pod', 'ns', 'a');
      assert.deepEqual(seen, ['CREATE a old=- new=-', 'UPDATE a old=- new=1', 'DELETE a old=1 new=1']);
    },
  },
  {
    name: 'admission skips status writes unless a hook includes status, which sees the subresource',
    async run(store) {
      const seen: string[] = [];
      store.addAdmissionHook({
        name: 'plain',
        kinds: ['Pod'],
        operations: ['UPDATE'],
        type: 'validating',
        admit: (r) => void seen.push(`plain ${r.subresource ?? 'main'}`),
      });
      store.addAdmissionHook({
        name: 'status',
        kinds: ['Pod'],
        operations: ['UPDATE'],
        type: 'validating',
        includeStatus: true,
        admit: (r) => void seen.push(`status ${r.subresource ?? 'main'}`),
      });
      const p = await store.create(pod('a'));
      const u = await store.update({ ...p, metadata: { ...p.metadata, labels: { x: '1' } } });
      await store.updateStatus({ ...u, status: { phase: 'Running' } });
      assert.deepEqual(seen, ['plain main', 'status main', 'status status']);
    },
  },

  // --- retryOnConflict -------------------------------------------------------------------
  {
    name: 'retryOnConflict writes the change and returns the written object',
    async run(store) {
      await store.create(pod('a'));
      const r = await retryOnConflict(store, 'Pod', 'ns', 'a', (o) => {
        o.metadata.labels = { x: '1' };
      });
      assert.equal(r.outcome, 'written');
      assert.deepEqual(r.object?.metadata.labels, { x: '1' });
      assert.deepEqual((await store.get('Pod', 'ns', 'a'))?.metadata.labels, { x: '1' });
      const s = await retryOnConflict(
        store,
        'Pod',
        'ns',
        'a',
        (o) => {
          o.status = { phase: 'Running' };
        },
        { status: true },
      );
      assert.equal(s.outcome, 'written');
      assert.equal(s.object?.status?.phase, 'Running');
      assert.equal((await store.get('Pod', 'ns', 'a'))?.status?.phase, 'Running', 'status: true writes the status subresource');
    },
  },
  {
    name: 'retryOnConflict writes nothing when the change returns false, and reports a missing object',
    async run(store) {
      const p = await store.create(pod('a'));
      const r = await retryOnConflict(store, 'Pod', 'ns', 'a', () => false);
      assert.equal(r.outcome, 'unchanged');
      assert.equal(r.object?.metadata.resourceVersion, p.metadata.resourceVersion);
      assert.equal((await store.get('Pod', 'ns', 'a'))?.metadata.resourceVersion, p.metadata.resourceVersion);
      let called = false;
      const gone = await retryOnConflict(store, 'Pod', 'ns', 'zzz', () => {
        called = true;
      });
      assert.equal(gone.outcome, 'gone');
      assert.equal(gone.object, undefined);
      assert.equal(called, false, 'no change is tried on a missing object');
    },
  },
  {
    name: 'retryOnConflict reads again and redoes the change after a conflict',
    async run(store) {
      await store.create(pod('a', { n: '0' }));
      const view = racing(store, async () => {
        const cur = await store.get('Pod', 'ns', 'a');
        await store.update({ ...cur!, metadata: { ...cur!.metadata, labels: { ...cur!.metadata.labels, other: 'writer' } } });
      });
      let calls = 0;
      const r = await retryOnConflict(view, 'Pod', 'ns', 'a', (o) => {
        calls++;
        o.metadata.labels = { ...o.metadata.labels, n: String(Number(o.metadata.labels?.n) + 1) };
      });
      assert.equal(r.outcome, 'written');
      assert.deepEqual(r.object?.metadata.labels, { n: '1', other: 'writer' });
      assert.equal(calls, 2, 'the change ran again on the fresh object');
      assert.deepEqual((await store.get('Pod', 'ns', 'a'))?.metadata.labels, { n: '1', other: 'writer' }, 'both writes kept');
    },
  },
  {
    name: 'retryOnConflict gives up after its attempts with the Conflict',
    async run(store) {
      await store.create(pod('a'));
      let n = 0;
      const always: ObjectStore = new Proxy(store, {
        get(target, prop) {
          if (prop === 'update') {
            return async (obj: Pod) => {
              const cur = await target.get('Pod', 'ns', 'a');
              await target.update({ ...cur!, metadata: { ...cur!.metadata, labels: { n: String(++n) } } });
              return target.update(obj);
            };
          }
          const v = Reflect.get(target, prop, target) as unknown;
          return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
        },
      });
      await assert.rejects(
        retryOnConflict(always, 'Pod', 'ns', 'a', (o) => void (o.metadata.annotations = { mine: 'yes' }), { attempts: 3 }),
        isStoreError(409, 'Conflict', CONFLICT_A),
      );
      assert.equal(n, 3, 'three attempts');
      assert.equal((await store.get('Pod', 'ns', 'a'))?.metadata.annotations, undefined);
    },
  },
];

/** The names of the cases, for implementations to list what they do not support. */
export const CONFORMANCE_CASES: readonly string[] = CASES.map((c) => c.name);

/** Runs every case against fresh stores from `factory`. */
export function runObjectStoreConformance(name: string, factory: () => Promise<ConformanceStore>, opts: ConformanceOptions = {}): void {
  const unsupported = opts.unsupported ?? {};
  const unknown = Object.keys(unsupported).filter((n) => !CONFORMANCE_CASES.includes(n));
  if (unknown.length > 0)
    throw new Error(`${name}: unsupported lists cases that do not exist: ${unknown.map((n) => JSON.stringify(n)).join(', ')}`);
  describe(`ObjectStore conformance: ${name}`, () => {
    for (const c of CASES) {
      const reason = unsupported[c.name];
      if (reason !== undefined) {
        it(c.name, { skip: `unsupported: ${reason}` }, () => {});
        continue;
      }
      it(c.name, async () => {
        const { store, close } = await factory();
        try {
          await c.run(store);
        } finally {
          await close();
        }
      });
    }
  });
}
