// Fixtures for the scheduler and workload controller tests: Topology objects, and writes
// that act as the controllers those tests leave out (the job reconciler's finish and
// clearReservation, the node-failure controller's unhealthyNodes). Test-only.

import { KueueApiVersion } from '../api/api-versions.ts';
import type { Topology, Workload } from '../api/objects.ts';
import { setCondition } from '../admission/conditions.ts';
import { clearReservation } from '../admission/pods-ready.ts';
import { nowSeconds } from '../runtime/clock.ts';
import type { RuntimeEnv } from './runtime.ts';

export function topology(name: string, levels: readonly string[]): Topology {
  return {
    apiVersion: KueueApiVersion.V1beta2,
    kind: 'Topology',
    metadata: { name },
    spec: { levels: levels.map((nodeLabel) => ({ nodeLabel })) },
  };
}

/** The job reconciler's part: the job finished, Finished=True. */
export function finish(env: RuntimeEnv, name: string, namespace = 'default'): Workload {
  return env.patch(
    'Workload',
    namespace,
    name,
    (w) =>
      setCondition(
        w,
        { type: 'Finished', status: 'True', reason: 'Succeeded', message: 'Job finished successfully' },
        nowSeconds(env.clock),
      ),
    { status: true },
  );
}

/** The job reconciler's part after an eviction: the pods are gone, the reservation is cleared. */
export function clearAfterEviction(env: RuntimeEnv, name: string, namespace = 'default'): Workload {
  return env.patch('Workload', namespace, name, (w) => clearReservation(w, nowSeconds(env.clock)), { status: true });
}

/** The node-failure controller's part: a node of the Workload's assignment failed. */
export function markUnhealthy(env: RuntimeEnv, name: string, nodes: string[], namespace = 'default'): Workload {
  return env.patch('Workload', namespace, name, (w) => (w.status = { ...w.status, unhealthyNodes: nodes.map((n) => ({ name: n })) }), {
    status: true,
  });
}

export function condition(w: Workload | undefined, type: string) {
  return w?.status?.conditions?.find((c) => c.type === type);
}
