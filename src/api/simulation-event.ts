// SimulationEvent (topoqueue.io/v1alpha1, cluster-scoped): one change to one Node that the
// embedded cluster's scenario controller applies at a virtual time (docs/cluster.md).
//
//   spec.at      Go duration from the simulation start ("90s", "2h30m"), not negative;
//   spec.node    the Node's name;
//   spec.action  NotReady | Ready | Taint | Untaint | Cordon | Uncordon | Delete;
//   spec.taint   {key, value?, effect}: Taint needs key and effect; Untaint needs the key
//                (without an effect it removes the key's taints of every effect); other
//                actions take no taint.
// The simulation start is the annotation `topoqueue.io/simulation-start` (RFC 3339) when
// present, else the object's creationTimestamp.

import { z } from 'zod';
import { TopoqueueApiVersion } from './api-versions.ts';
import { parseGoDuration } from './gang.ts';
import type { KObject, Override } from './objects.ts';
import { describeInput, issue, kobject } from './schema-parts.ts';
import type { KindEntry } from './schemas.ts';
import { labelKeyProblem } from './topology-request.ts';

export const SimulationApiVersion = TopoqueueApiVersion;

export const SimulationAction = {
  NotReady: 'NotReady',
  Ready: 'Ready',
  Taint: 'Taint',
  Untaint: 'Untaint',
  Cordon: 'Cordon',
  Uncordon: 'Uncordon',
  Delete: 'Delete',
} as const;
export type SimulationAction = (typeof SimulationAction)[keyof typeof SimulationAction];

export const SimulationEventResult = { Applied: 'Applied', Failed: 'Failed' } as const;
export type SimulationEventResult = (typeof SimulationEventResult)[keyof typeof SimulationEventResult];

type SimulationEventOut = z.output<typeof simulationEvent>;

/**
 * The schema's output, narrowed where the schema reads loosely to word its own messages:
 * `spec.at` is checked to be a Go duration string; `status.applied` is RFC 3339, when the
 * event was applied (or found unusable); `status.result` is written by the simulation only.
 */
export interface SimulationEvent extends KObject {
  kind: 'SimulationEvent';
  spec: Override<SimulationEventOut['spec'], { at: string }>;
  status?: Override<NonNullable<SimulationEventOut['status']>, { result?: SimulationEventResult }>;
}

const DURATION_HINT = 'a Go duration such as "90s", "10m" or "1h30m"';

/** Why `raw` is not a usable `spec.at`, or undefined. */
export function simulationAtProblem(raw: unknown): string | undefined {
  if (typeof raw !== 'string') return `must be ${DURATION_HINT}, got ${describeInput(raw)}`;
  const s = parseGoDuration(raw);
  if (s === undefined) return `must be ${DURATION_HINT}, got ${JSON.stringify(raw)}`;
  if (s < 0) return `must not be negative (a duration from the simulation start), got ${JSON.stringify(raw)}`;
  return undefined;
}

const ACTIONS = Object.values(SimulationAction) as [SimulationAction, ...SimulationAction[]];

const taint = z.looseObject({
  key: z.string().superRefine((k, ctx) => {
    const p = labelKeyProblem(k);
    if (p) issue(ctx, [], `${JSON.stringify(k)}: ${p.replace('label key', 'taint key')}`);
  }),
  value: z.string().optional(),
  effect: z.enum(['NoSchedule', 'PreferNoSchedule', 'NoExecute']).optional(),
});
const spec = z
  .looseObject({
    at: z.unknown().superRefine((v, ctx) => {
      const p = simulationAtProblem(v);
      if (p) issue(ctx, [], p, v);
    }),
    node: z.string().min(1, { error: 'must name a Node' }),
    action: z.enum(ACTIONS),
    taint: taint.optional(),
  })
  .superRefine((s, ctx) => {
    if (s.action === SimulationAction.Taint) {
      if (s.taint === undefined) issue(ctx, ['taint'], 'the Taint action needs a taint: {key, value (optional), effect}');
      else if (s.taint.effect === undefined)
        issue(ctx, ['taint', 'effect'], 'the Taint action needs an effect: one of "NoSchedule", "PreferNoSchedule", "NoExecute"');
    } else if (s.action === SimulationAction.Untaint) {
      if (s.taint === undefined) issue(ctx, ['taint'], 'the Untaint action needs the key of the taint to remove: {key, effect (optional)}');
    } else if (s.taint !== undefined && s.action !== undefined) {
      issue(ctx, ['taint'], `only the Taint and Untaint actions take a taint; ${s.action} does not`);
    }
  });

export const simulationEvent = kobject({
  spec,
  status: z.looseObject({ applied: z.string().optional(), result: z.string().optional(), message: z.string().optional() }).optional(),
});

/** Registry entry (see schemas.ts KINDS). */
export function simulationKindEntries(): KindEntry[] {
  return [{ apiVersion: SimulationApiVersion, kind: 'SimulationEvent', schema: simulationEvent }];
}
