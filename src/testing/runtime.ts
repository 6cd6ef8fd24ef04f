// Controller test fixtures: a MemoryStore on a VirtualClock with a Manager over
// defaultConfig(), seeded with objects. Test-only.
//   const env = runtimeEnv({ controllers: [schedulerController()], objects: [cq, lq, node] });
//   await env.start();
//   env.seed(workload);            // as another controller or a user would create it
//   await env.run();               // virtual time, until idle
//   env.get('Workload', 'default', 'w1')
// A restart: `env.manager.stop()`, then runtimeEnv({ store: env.store, clock: env.clock, ... }).

import type { KObject } from '../api/objects.ts';
import { defaultConfig, type TopoqueueConfig } from '../controllers/config.ts';
import { VirtualClock } from '../runtime/clock.ts';
import { Manager, type Reconciler } from '../runtime/manager.ts';
import { MemoryStore } from '../runtime/memory-store.ts';
import { mutable, type ObjectOfKind } from '../runtime/store.ts';

export interface RuntimeEnvOptions {
  config?: Partial<TopoqueueConfig>;
  controllers?: Reconciler<TopoqueueConfig>[];
  /** Created (status kept) before the manager starts. */
  objects?: readonly KObject[];
  /** Share a store and clock (a restart). */
  store?: MemoryStore;
  clock?: VirtualClock;
  /** Virtual start time (ms since the epoch) of a new clock. */
  startMs?: number;
}

export interface RuntimeEnv {
  clock: VirtualClock;
  store: MemoryStore;
  manager: Manager<TopoqueueConfig>;
  /** Creates objects as given (status included), in order. */
  seed(...objects: KObject[]): KObject[];
  /** Read-modify-write of a stored object; `status` writes the status subresource. */
  patch<K extends string>(
    kind: K,
    namespace: string | undefined,
    name: string,
    change: (obj: ObjectOfKind<K>) => void,
    opts?: { status?: boolean },
  ): ObjectOfKind<K>;
  patch<T extends KObject>(
    kind: string,
    namespace: string | undefined,
    name: string,
    change: (obj: T) => void,
    opts?: { status?: boolean },
  ): T;
  get<K extends string>(kind: K, namespace: string | undefined, name: string): ObjectOfKind<K> | undefined;
  get<T extends KObject>(kind: string, namespace: string | undefined, name: string): T | undefined;
  start(): Promise<void>;
  /** Runs in virtual time until idle, or for `forMs` more milliseconds. */
  run(forMs?: number): Promise<{ steps: number; idle: boolean }>;
}

export function runtimeEnv(opts: RuntimeEnvOptions = {}): RuntimeEnv {
  const clock = opts.clock ?? new VirtualClock(opts.startMs);
  const store = opts.store ?? new MemoryStore({ clock });
  const manager = new Manager<TopoqueueConfig>({ store, clock, config: defaultConfig(opts.config) });
  for (const c of opts.controllers ?? []) manager.add(c);
  const seed = (...objects: KObject[]) => objects.map((o) => store.createSync(o));
  seed(...(opts.objects ?? []));
  return {
    clock,
    store,
    manager,
    seed,
    patch<T extends KObject>(
      kind: string,
      namespace: string | undefined,
      name: string,
      change: (obj: T) => void,
      o: { status?: boolean } = {},
    ): T {
      const current = store.getSync<T>(kind, namespace, name);
      if (!current) throw new Error(`${kind} ${namespace ?? ''}/${name} not found`);
      const copy = mutable(current);
      change(copy);
      return o.status ? store.updateStatusSync(copy) : store.updateSync(copy);
    },
    get: <T extends KObject>(kind: string, namespace: string | undefined, name: string) => store.getSync<T>(kind, namespace, name),
    start: () => manager.start(),
    run: (forMs) => manager.run({ ...(forMs !== undefined ? { untilMs: clock.now() + forMs } : {}), maxSteps: 200_000 }),
  };
}
