// The garbage collector stand-in: Kubernetes' background cascading deletion by
// ownerReferences, over a fixed list of kinds (the ones topoqueue's objects own or are owned
// by; garbageCollector({kinds}) changes it).
//   1. every watched object's uid is known while it exists; an object's deletion enqueues its
//      dependents (an index of the watched kinds by owner uid), and an object that names an
//      owner not known is enqueued when it appears (an owner of a kind not watched is looked
//      up in the store);
//   2. a dependent none of whose owners exists any more (same uid) is deleted, background
//      propagation (its own dependents follow when it is gone); one that still has an owner
//      loses the references to the owners that are gone.
// Not modelled: foreground deletion and orphan propagation (the `foregroundDeletion` and
// `orphan` finalizers), blockOwnerDeletion.

import type { KObject, OwnerReference } from '../api/objects.ts';
import type { TopoqueueConfig } from '../controllers/config.ts';
import { JOB_KINDS } from '../integrations/registry.ts';
import type { EventRecorder } from '../runtime/events.ts';
import type { Informer } from '../runtime/informer.ts';
import type { ControllerContext, Reconciler } from '../runtime/manager.ts';
import { isNotFound, retryOnConflict } from '../runtime/store.ts';

/** Pods, the job frameworks' kinds (their child Jobs, pods), Workloads and PodGroups. */
export const DEFAULT_GC_KINDS: readonly string[] = ['Pod', ...JOB_KINDS, 'Workload', 'PodGroup'];

/** Informer index: objects by the uids of their owners. */
export const BY_OWNER_UID = 'cluster/owner-uid';

const gcKey = (kind: string, o: KObject): string => `${kind}/${o.metadata.namespace ?? ''}/${o.metadata.name}`;

function splitGcKey(key: string): { kind: string; namespace: string | undefined; name: string } {
  const a = key.indexOf('/');
  const b = key.indexOf('/', a + 1);
  const ns = key.slice(a + 1, b);
  return { kind: key.slice(0, a), namespace: ns === '' ? undefined : ns, name: key.slice(b + 1) };
}

export class GarbageCollector {
  private ctx!: ControllerContext<TopoqueueConfig>;
  private recorder!: EventRecorder;
  private readonly informers = new Map<string, Informer>();
  /** uids of the watched objects that exist. */
  private readonly alive = new Set<string>();
  /** Objects deleted so far (for reports and tests). */
  deleted = 0;

  constructor(private readonly kinds: readonly string[]) {}

  setup(ctx: ControllerContext<TopoqueueConfig>, queue: { add(key: string): void }, recorder: EventRecorder): void {
    this.ctx = ctx;
    this.recorder = recorder;
    for (const kind of this.kinds) {
      const inf = ctx.informers.for(kind);
      this.informers.set(kind, inf);
      inf.addIndex(BY_OWNER_UID, (o) => (o.metadata.ownerReferences ?? []).map((r) => r.uid));
      const seen = (o: KObject) => {
        this.alive.add(o.metadata.uid!);
        if ((o.metadata.ownerReferences ?? []).some((r) => !this.alive.has(r.uid))) queue.add(gcKey(kind, o));
      };
      inf.addHandler({
        add: seen,
        update: (_, o) => seen(o),
        delete: (o) => {
          this.alive.delete(o.metadata.uid!);
          for (const [k, dep] of this.informers) for (const d of dep.byIndex(BY_OWNER_UID, o.metadata.uid!)) queue.add(gcKey(k, d));
        },
      });
    }
  }

  async reconcile(key: string): Promise<void> {
    const { kind, namespace, name } = splitGcKey(key);
    const obj = this.informers.get(kind)?.get(namespace, name);
    if (!obj || obj.metadata.deletionTimestamp) return;
    const refs = obj.metadata.ownerReferences ?? [];
    if (refs.length === 0) return;
    const gone: OwnerReference[] = [];
    for (const r of refs) if (!(await this.ownerExists(r, obj.metadata.namespace))) gone.push(r);
    if (gone.length === 0) return;
    if (gone.length === refs.length) {
      try {
        await this.ctx.store.delete(kind, obj.metadata.namespace, name, { uid: obj.metadata.uid });
        this.deleted++;
      } catch (e) {
        if (!isNotFound(e)) throw e;
      }
      return;
    }
    const goneUids = new Set(gone.map((r) => r.uid));
    await retryOnConflict(this.ctx.store, kind, obj.metadata.namespace, name, (o) => {
      if (o.metadata.uid !== obj.metadata.uid) return false;
      o.metadata.ownerReferences = (o.metadata.ownerReferences ?? []).filter((r) => !goneUids.has(r.uid));
    });
    this.recorder.event(
      obj,
      'Normal',
      'OwnerRefsRemoved',
      `removed references to owners that no longer exist: ${gone.map((r) => `${r.kind}/${r.name}`).join(', ')}`,
    );
  }

  private async ownerExists(r: OwnerReference, namespace: string | undefined): Promise<boolean> {
    if (this.alive.has(r.uid)) return true;
    if (this.informers.has(r.kind) && this.informers.get(r.kind)!.hasSynced) return false;
    const owner = await this.ctx.store.get(r.kind, this.ctx.store.namespaced(r.kind) ? namespace : undefined, r.name);
    return owner?.metadata.uid === r.uid;
  }
}

export function garbageCollector(
  opts: { kinds?: readonly string[] } = {},
): Reconciler<TopoqueueConfig> & { readonly state: GarbageCollector } {
  const state = new GarbageCollector(opts.kinds ?? DEFAULT_GC_KINDS);
  return {
    name: 'garbage-collector',
    state,
    setup: (ctx, queue, recorder) => state.setup(ctx, queue, recorder),
    reconcile: (key) => state.reconcile(key),
  };
}
