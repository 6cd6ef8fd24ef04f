// Test fixtures for the embedded cluster's stand-ins: a store, a virtual clock and a manager
// with the given reconcilers; helpers that play the parts a test leaves out (write a pod's
// phase as a kubelet would) and read objects back.
// Test-only: imported by *.test.ts files, never by product code.

import { CoreApiVersion } from '../api/api-versions.ts';
import type { KObject, Node, Pod, PodPhase } from '../api/objects.ts';
import { compareStrings } from '../api/values.ts';
import { defaultConfig, type TopoqueueConfig } from '../controllers/config.ts';
import { VirtualClock } from '../runtime/clock.ts';
import { Manager } from '../runtime/manager.ts';
import type { Reconciler } from '../runtime/manager.ts';
import { MemoryStore } from '../runtime/memory-store.ts';
import { type ObjectOfKind, retryOnConflict } from '../runtime/store.ts';

export interface TestCluster {
  clock: VirtualClock;
  store: MemoryStore;
  manager: Manager<TopoqueueConfig>;
  /** Runs until idle, or until `ms` from now. */
  run(ms?: number): Promise<void>;
  /** Seconds since the start. */
  elapsed(): number;
  pods(namespace?: string): Pod[];
  pod(name: string, namespace?: string): Pod | undefined;
  get<K extends string>(kind: K, name: string, namespace?: string): ObjectOfKind<K> | undefined;
  get<T extends KObject>(kind: string, name: string, namespace?: string): T | undefined;
  /** Writes a pod's phase (and Ready) as a kubelet would. */
  setPhase(name: string, phase: PodPhase, namespace?: string): Promise<void>;
}

export async function testCluster(
  reconcilers: Reconciler<TopoqueueConfig>[],
  objects: KObject[] = [],
  config: Partial<TopoqueueConfig> = {},
): Promise<TestCluster> {
  const clock = new VirtualClock();
  const start = clock.now();
  const store = new MemoryStore({ clock });
  for (const o of objects) store.createSync(o);
  const manager = new Manager<TopoqueueConfig>({ store, clock, config: defaultConfig(config), events: { writeToStore: false } });
  for (const r of reconcilers) manager.add(r);
  await manager.start();
  const c: TestCluster = {
    clock,
    store,
    manager,
    async run(ms) {
      await manager.run(ms === undefined ? {} : { untilMs: clock.now() + ms });
    },
    elapsed: () => (clock.now() - start) / 1000,
    pods: (namespace) =>
      store.listSync('Pod', namespace ? { namespace } : {}).sort((a, b) => compareStrings(a.metadata.name, b.metadata.name)),
    pod: (name, namespace = 'default') => store.getSync('Pod', namespace, name),
    get: <T extends KObject>(kind: string, name: string, namespace?: string) =>
      store.getSync<T>(kind, store.namespaced(kind) ? (namespace ?? 'default') : undefined, name),
    async setPhase(name, phase, namespace = 'default') {
      await retryOnConflict(
        store,
        'Pod',
        namespace,
        name,
        (p) => {
          const ready = phase === 'Running' ? 'True' : 'False';
          p.status = { ...p.status, phase, conditions: [{ type: 'Ready', status: ready }] };
        },
        { status: true },
      );
    },
  };
  return c;
}

/** A Ready node with cpu, memory and pods, labelled with its hostname. */
export function readyNode(
  name: string,
  allocatable: Record<string, string> = { cpu: '8', memory: '32Gi', pods: '110' },
  labels: Record<string, string> = {},
): Node {
  return {
    apiVersion: CoreApiVersion.V1,
    kind: 'Node',
    metadata: { name, labels: { 'kubernetes.io/hostname': name, ...labels } },
    spec: {},
    status: { allocatable: { ...allocatable }, conditions: [{ type: 'Ready', status: 'True' }] },
  };
}

/** A pod template with one container requesting `requests`. */
export function podTemplate(
  requests: Record<string, string> = { cpu: '1' },
  annotations: Record<string, string> = {},
  labels: Record<string, string> = {},
) {
  return {
    metadata: { labels: { app: 'test', ...labels }, annotations: { ...annotations } },
    spec: { restartPolicy: 'Never', containers: [{ name: 'main', image: 'busybox', resources: { requests: { ...requests } } }] },
  };
}
