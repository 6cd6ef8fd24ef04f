// A watch without a cache: list, hand every object to `add`, then watch from the list's
// resourceVersion. For observers that keep their own records (the invariant checker and
// the timeline keep one small record per pod, not the pod), an informer's cache and
// namespace index would only double the cost of every pod event.

import type { KObject } from '../api/objects.ts';
import type { EventHandler } from '../runtime/informer.ts';
import type { ObjectStore } from '../runtime/store.ts';

export async function listAndWatch<T extends KObject>(store: ObjectStore, kind: string, h: EventHandler<T>): Promise<() => void> {
  const r = await store.list<T>(kind);
  for (const o of r.items) h.add?.(o);
  return store.watch<T>(
    kind,
    (e) => {
      if (e.type === 'ADDED') h.add?.(e.object);
      else if (e.type === 'MODIFIED') h.update?.(e.old!, e.object);
      else h.delete?.(e.object);
    },
    { resourceVersion: r.resourceVersion },
  );
}
