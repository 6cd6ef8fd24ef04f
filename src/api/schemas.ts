// Shapes and rules of the kinds topoqueue accepts, as a registry keyed by apiVersion +
// kind: a later kind (HyperNode, ClusterQueue, PodGroup, Volcano Job...) is one more
// entry in KINDS.
//
// parseObject:
//   1. look the kind up; an unknown kind, or a known kind under another apiVersion, is
//      refused with the list of what is accepted;
//   2. drop null-valued fields (in Kubernetes `field: null` means unset) and parse the
//      shape with zod; schemas are loose, so unknown fields survive for writing back;
//   3. the schemas' own refinements carry the per-kind rules (quantities parse, label
//      keys are valid, levels unique...); zod issues become InputErrors with the field
//      written Kubernetes-style (`spec.levels[0].nodeLabel`) and a plain message;
//   4. rules that need the whole object (Workload topology requests) run last;
//   5. v1beta1 objects are normalized to the v1beta2 shape.

import { z } from 'zod';
import { CoreApiVersion, JobFrameworkApiVersion } from './api-versions.ts';
import { InputError, type Where } from './errors.ts';
import { HOSTNAME_LABEL, KueueApiVersion } from './keys.ts';
import { objectRef } from './manifest.ts';
import type { NodeAsWritten } from './node-check.ts';
import {
  type Ctx,
  describeInput,
  issue,
  annotationMap,
  condition,
  dnsLabel,
  kobject,
  labelKey,
  labelMap,
  maxEntries,
  podSpec,
  podTemplate,
  resourceList,
  taint,
  toleration,
} from './schema-parts.ts';
import type { KObject, TypeMeta, Workload } from './objects.ts';
import { formatFieldPath, joinField, validatePodSetTopologyRequests } from './topology-request.ts';
import { gangKindEntries } from './gang.ts';
import { queueKindEntries } from './queues.ts';
import { simulationKindEntries } from './simulation-event.ts';
import { volcanoKindEntries } from './volcano.ts';

// ---------------------------------------------------------------------------------------
// Core kinds
// ---------------------------------------------------------------------------------------

/** Loading keeps a Node as written when node-check.ts says this schema would not change it: change both together. */
export const node = kobject({
  spec: z.looseObject({ unschedulable: z.boolean().optional(), taints: z.array(taint).optional() }).optional(),
  status: z
    .looseObject({
      allocatable: resourceList.optional(),
      capacity: resourceList.optional(),
      conditions: z.array(condition).optional(),
    })
    .optional(),
});

const pod = kobject({
  spec: podSpec,
  status: z.looseObject({ phase: z.string().optional(), conditions: z.array(condition).optional() }).optional(),
});

// ---------------------------------------------------------------------------------------
// Kueue: Topology, ResourceFlavor, Workload
// ---------------------------------------------------------------------------------------

/**
 * Levels per Topology. The KEP draft said at most 8; the peer today allows 16 (and so
 * does the v1beta2 assignment's valuesPerLevel): we follow the peer.
 */
export const MAX_TOPOLOGY_LEVELS = 16;

export const topology = kobject({
  spec: z.looseObject({
    levels: z
      .array(z.looseObject({ nodeLabel: labelKey }))
      .min(1)
      .max(MAX_TOPOLOGY_LEVELS)
      .superRefine((levels, ctx) => {
        const first = new Map<string, number>();
        levels.forEach((l, i) => {
          const seen = first.get(l.nodeLabel);
          if (seen !== undefined) {
            issue(
              ctx,
              [i, 'nodeLabel'],
              `${JSON.stringify(l.nodeLabel)} is already level ${seen} (spec.levels[${seen}]): levels must be unique`,
            );
          } else first.set(l.nodeLabel, i);
          if (l.nodeLabel === HOSTNAME_LABEL && i !== levels.length - 1) {
            issue(ctx, [i, 'nodeLabel'], `the ${HOSTNAME_LABEL} label can only be used at the lowest level of topology`);
          }
        });
      }),
  }),
});

/** Entries in ResourceFlavor nodeLabels, nodeTaints and tolerations. */
const MAX_FLAVOR_ENTRIES = 8;

export const resourceFlavor = kobject({
  spec: z
    .looseObject({
      nodeLabels: maxEntries(labelMap, MAX_FLAVOR_ENTRIES).optional(),
      nodeTaints: z.array(taint).max(MAX_FLAVOR_ENTRIES).optional(),
      tolerations: z.array(toleration).max(MAX_FLAVOR_ENTRIES).optional(),
      topologyName: z.string().min(1).optional(),
    })
    .superRefine((spec, ctx) => {
      // KEP-2724 "Validation": the creation-time rule, in the peer's CEL wording.
      if (spec.topologyName !== undefined && Object.keys(spec.nodeLabels ?? {}).length === 0) {
        issue(
          ctx,
          ['nodeLabels'],
          `at least one nodeLabel is required when topology is set (topologyName ${JSON.stringify(spec.topologyName)})`,
        );
      }
    })
    .default({}),
});

/** PodSets per Workload (and roles per pod group). */
export const MAX_PODSETS = 18;

export const sliceLayer = z.looseObject({ topology: z.string(), size: z.int() });

// Label keys, slice rules and the 3-layer limit are checked by validatePodSetTopologyRequests.
export const topologyRequest = z.looseObject({
  required: z.string().optional(),
  preferred: z.string().optional(),
  unconstrained: z.boolean().optional(),
  podIndexLabel: z.string().optional(),
  subGroupIndexLabel: z.string().optional(),
  subGroupCount: z.int().optional(),
  podSetGroupName: z.string().optional(),
  podSetSliceRequiredTopology: z.string().optional(),
  podSetSliceSize: z.int().optional(),
  podsetSliceRequiredTopologyConstraints: z.array(sliceLayer).optional(),
});

export const podSet = z.looseObject({
  name: dnsLabel.default('main'),
  template: podTemplate,
  count: z.int().min(0).default(1),
  minCount: z.int().min(1).optional(),
  topologyRequest: topologyRequest.optional(),
});

type PodSetShape = { name: string; count: number; minCount?: number };

function checkPodSets(podSets: PodSetShape[], ctx: Ctx): void {
  const first = new Map<string, number>();
  let withMin: number | undefined;
  podSets.forEach((ps, i) => {
    const seen = first.get(ps.name);
    if (seen !== undefined) {
      issue(
        ctx,
        ['podSets', i, 'name'],
        `podSet name ${JSON.stringify(ps.name)} is already used by spec.podSets[${seen}]: names must be unique`,
      );
    } else first.set(ps.name, i);
    if (ps.minCount !== undefined) {
      if (ps.minCount > ps.count) {
        issue(ctx, ['podSets', i, 'minCount'], `minCount ${ps.minCount} must not exceed count ${ps.count}`);
      }
      if (withMin !== undefined) {
        issue(
          ctx,
          ['podSets', i, 'minCount'],
          `only one PodSet may set minCount (partial admission), but podSet ${JSON.stringify(podSets[withMin].name)} already does`,
        );
      } else withMin = i;
    }
  });
}

const levelsOfAssignment = z.array(z.string().min(1)).min(1).max(MAX_TOPOLOGY_LEVELS);

export const topologyAssignmentSliceLevelValues = z.looseObject({
  universal: z.string().optional(),
  individual: z.looseObject({ prefix: z.string().optional(), suffix: z.string().optional(), roots: z.array(z.string()) }).optional(),
});

export const topologyAssignmentSlice = z.looseObject({
  domainCount: z.int().min(1),
  valuesPerLevel: z.array(topologyAssignmentSliceLevelValues),
  podCounts: z.looseObject({ universal: z.int().min(0).optional(), individual: z.array(z.int().min(0)).optional() }),
});

/**
 * v1beta2 compact assignment; its internal consistency is checked by the codec when decoding.
 * `slices` is optional here only so that its absence gets the message below.
 */
export const topologyAssignmentV1beta2 = z
  .looseObject({
    levels: levelsOfAssignment,
    slices: z.array(topologyAssignmentSlice).max(1000).optional(),
  })
  .superRefine((t, ctx) => {
    if (t.slices === undefined) {
      const hint = 'domains' in t ? ': the domains form is kueue.x-k8s.io/v1beta1, v1beta2 writes slices' : '';
      issue(ctx, ['slices'], `is required${hint}`);
    }
  });

/** v1beta1 assignment: one entry per domain (converted by placement/assignment-codec.ts decodeV1beta1). */
export const topologyAssignmentV1beta1 = z.looseObject({
  levels: levelsOfAssignment,
  domains: z.array(z.looseObject({ values: z.array(z.string()), count: z.int().min(0) })),
});

const PRIORITY_CLASS_SOURCE = {
  WorkloadPriorityClass: 'kueue.x-k8s.io/workloadpriorityclass',
  PodPriorityClass: 'scheduling.k8s.io/priorityclass',
} as const;

const PRIORITY_FIELDS = {
  v1beta2: {
    priorityClassRef: z
      .looseObject({
        group: z.enum(['kueue.x-k8s.io', 'scheduling.k8s.io']),
        kind: z.enum(['WorkloadPriorityClass', 'PriorityClass']),
        name: z.string().min(1),
      })
      .optional(),
  },
  v1beta1: {
    priorityClassName: z.string().optional(),
    priorityClassSource: z.enum(['', PRIORITY_CLASS_SOURCE.WorkloadPriorityClass, PRIORITY_CLASS_SOURCE.PodPriorityClass]).optional(),
  },
};
const ASSIGNMENT = { v1beta2: topologyAssignmentV1beta2, v1beta1: topologyAssignmentV1beta1 };

/** The Workload of one version; generic in the version so that each instance's output type is exact. */
function workloadSchema<V extends 'v1beta2' | 'v1beta1'>(version: V) {
  const priority = PRIORITY_FIELDS[version] as (typeof PRIORITY_FIELDS)[V];
  const assignment = ASSIGNMENT[version] as (typeof ASSIGNMENT)[V];
  return kobject({
    spec: z
      .looseObject({
        podSets: z.array(podSet).min(1).max(MAX_PODSETS),
        queueName: z.string().optional(),
        priority: z.int().optional(),
        active: z.boolean().optional(),
        ...priority,
      })
      .superRefine((parsed, ctx) => {
        // The shape above is generic in the version: read the fields every version has.
        const spec = parsed as { podSets: PodSetShape[]; priority?: number; priorityClassRef?: unknown };
        checkPodSets(spec.podSets, ctx);
        if (version === 'v1beta2' && 'priorityClassRef' in spec && spec.priorityClassRef !== undefined && spec.priority === undefined) {
          issue(ctx, ['priority'], 'priority is required when priorityClassRef is set');
        }
      }),
    status: z
      .looseObject({
        admission: z
          .looseObject({
            // Optional here (Kueue requires it): `plan` without queues writes none.
            clusterQueue: z.string().min(1).optional(),
            podSetAssignments: z.array(
              z.looseObject({
                name: z.string(),
                flavors: z.record(z.string(), z.string()).optional(),
                resourceUsage: resourceList.optional(),
                count: z.int().min(0).optional(),
                topologyAssignment: assignment.optional(),
              }),
            ),
          })
          .optional(),
        conditions: z.array(condition).optional(),
        unhealthyNodes: z.array(z.looseObject({ name: z.string() })).optional(),
      })
      .optional(),
  });
}

/** The Workload of each served version; objects.ts infers the Workload type from the v1beta2 one. */
export const workloadV1beta2 = workloadSchema('v1beta2');
export const workloadV1beta1 = workloadSchema('v1beta1');

/**
 * A Workload in the v1beta2 shape. For v1beta1 (kueue-core §0): `spec.priorityClassName`
 * + `priorityClassSource` become `spec.priorityClassRef` (an empty source means a pod
 * PriorityClass), the `accumulatedPastExexcutionTimeSeconds` typo is fixed, and the
 * apiVersion becomes v1beta2. A v1beta1 `topologyAssignment.domains` is kept as it is:
 * placement/assignment-codec.ts decodeV1beta1 converts it. A v1beta2 Workload is returned
 * unchanged; the input is never modified.
 */
export function normalizeWorkload(w: Workload): Workload {
  if (w.apiVersion !== KueueApiVersion.V1beta1) return w;
  const { priorityClassName, priorityClassSource, ...spec } = w.spec as Workload['spec'] & {
    priorityClassName?: string;
    priorityClassSource?: string;
  };
  const out: Workload = { ...w, apiVersion: KueueApiVersion.V1beta2, spec };
  if (priorityClassName !== undefined && priorityClassName !== '' && spec.priorityClassRef === undefined) {
    out.spec.priorityClassRef =
      priorityClassSource === PRIORITY_CLASS_SOURCE.WorkloadPriorityClass
        ? { group: 'kueue.x-k8s.io', kind: 'WorkloadPriorityClass', name: priorityClassName }
        : { group: 'scheduling.k8s.io', kind: 'PriorityClass', name: priorityClassName };
  }
  const status = w.status as Record<string, unknown> | undefined;
  if (status !== undefined && 'accumulatedPastExexcutionTimeSeconds' in status) {
    const { accumulatedPastExexcutionTimeSeconds, ...rest } = status;
    out.status = { ...rest, accumulatedPastExecutionTimeSeconds: accumulatedPastExexcutionTimeSeconds };
  }
  return out;
}

// ---------------------------------------------------------------------------------------
// Jobs: only what turning them into Workloads needs
// ---------------------------------------------------------------------------------------

const jobSpec = z.looseObject({
  parallelism: z.int().min(0).optional(),
  completions: z.int().min(0).optional(),
  completionMode: z.enum(['NonIndexed', 'Indexed']).optional(),
  suspend: z.boolean().optional(),
  template: podTemplate,
});

const job = kobject({ spec: jobSpec });

const jobSet = kobject({
  spec: z
    .looseObject({
      replicatedJobs: z
        .array(
          z.looseObject({
            name: dnsLabel,
            replicas: z.int().min(0).optional(),
            template: z.looseObject({
              metadata: z.looseObject({ labels: labelMap.optional(), annotations: annotationMap.optional() }).optional(),
              spec: jobSpec,
            }),
          }),
        )
        .min(1),
      suspend: z.boolean().optional(),
    })
    .superRefine((spec, ctx) => {
      const first = new Map<string, number>();
      spec.replicatedJobs.forEach((rj, i) => {
        const seen = first.get(rj.name);
        if (seen !== undefined) {
          issue(
            ctx,
            ['replicatedJobs', i, 'name'],
            `${JSON.stringify(rj.name)} is already spec.replicatedJobs[${seen}]: names must be unique`,
          );
        } else first.set(rj.name, i);
      });
    }),
});

const leaderWorkerSet = kobject({
  spec: z.looseObject({
    replicas: z.int().min(0).optional(),
    leaderWorkerTemplate: z.looseObject({
      size: z.int().min(1).optional(),
      leaderTemplate: podTemplate.optional(),
      workerTemplate: podTemplate,
      subGroupPolicy: z.looseObject({ subGroupSize: z.int().min(1).optional() }).optional(),
    }),
  }),
});

// Kubeflow MPIJob v2beta1: replica specs Launcher and Worker (the MPI operator's rules).
const MPI_REPLICA_TYPES = ['Launcher', 'Worker'];
const mpiReplicaSpec = z.looseObject({ replicas: z.int().min(0).optional(), template: podTemplate });

const mpiJob = kobject({
  spec: z.looseObject({
    mpiReplicaSpecs: z.looseObject({ Launcher: mpiReplicaSpec.optional(), Worker: mpiReplicaSpec.optional() }).superRefine((specs, ctx) => {
      for (const t of Object.keys(specs)) {
        if (!MPI_REPLICA_TYPES.includes(t))
          issue(ctx, [t], `Unsupported value: ${JSON.stringify(t)}: supported values: "Launcher", "Worker"`);
      }
      if (specs.Launcher === undefined) issue(ctx, ['Launcher'], 'Required value: an MPIJob needs a Launcher replica spec');
      else if ((specs.Launcher.replicas ?? 1) !== 1)
        issue(ctx, ['Launcher', 'replicas'], `Invalid value: ${specs.Launcher.replicas}: must be 1`);
    }),
    runPolicy: z.looseObject({ suspend: z.boolean().optional() }).optional(),
    runLauncherAsWorker: z.boolean().optional(),
    slotsPerWorker: z.int().min(0).optional(),
  }),
});

// ---------------------------------------------------------------------------------------
// The registry
// ---------------------------------------------------------------------------------------

export interface KindEntry {
  apiVersion: string;
  kind: string;
  schema: z.ZodType;
  /** Rules over the whole parsed object, run once its shape is valid. */
  check?: (obj: KObject, where: Where) => InputError[];
  /** Turns the parsed object into the shape the rest of the system reads. */
  normalize?: (obj: KObject) => KObject;
}

const workloadEntry = (apiVersion: string, schema: z.ZodType): KindEntry => ({
  apiVersion,
  kind: 'Workload',
  schema,
  check: (obj, where) => [
    ...validatePodSetTopologyRequests((obj as Workload).spec.podSets, where),
    ...checkAdmission(obj as Workload, where),
  ],
  normalize: (obj) => normalizeWorkload(obj as Workload),
});

/** `status.admission.podSetAssignments` names the Workload's PodSets, each exactly once. */
function checkAdmission(w: Workload, where: Where): InputError[] {
  const assignments = w.status?.admission?.podSetAssignments;
  if (assignments === undefined) return [];
  const errors: InputError[] = [];
  const at = (field: string, detail: string) => errors.push(new InputError({ ...where, field: joinField(where.field, field) }, detail));
  const names = w.spec.podSets.map((ps) => ps.name);
  const seen = new Set<string>();
  assignments.forEach((a, i) => {
    const field = `status.admission.podSetAssignments[${i}].name`;
    if (!names.includes(a.name)) {
      at(
        field,
        `${JSON.stringify(a.name)} is not a PodSet of this Workload; spec.podSets are ${names.map((n) => JSON.stringify(n)).join(', ')}`,
      );
    } else if (seen.has(a.name)) {
      at(field, `podSet ${JSON.stringify(a.name)} is assigned twice`);
    }
    seen.add(a.name);
  });
  for (const n of names) {
    if (!seen.has(n))
      at('status.admission.podSetAssignments', `no assignment for podSet ${JSON.stringify(n)}: an admission assigns every PodSet`);
  }
  return errors;
}

const KINDS: readonly KindEntry[] = [
  { apiVersion: CoreApiVersion.V1, kind: 'Node', schema: node },
  { apiVersion: CoreApiVersion.V1, kind: 'Pod', schema: pod },
  // Only its labels matter: ClusterQueue namespaceSelectors match them.
  { apiVersion: CoreApiVersion.V1, kind: 'Namespace', schema: kobject({}) },
  { apiVersion: KueueApiVersion.V1beta2, kind: 'Topology', schema: topology },
  { apiVersion: KueueApiVersion.V1beta1, kind: 'Topology', schema: topology },
  { apiVersion: KueueApiVersion.V1beta2, kind: 'ResourceFlavor', schema: resourceFlavor },
  { apiVersion: KueueApiVersion.V1beta1, kind: 'ResourceFlavor', schema: resourceFlavor },
  workloadEntry(KueueApiVersion.V1beta2, workloadV1beta2),
  workloadEntry(KueueApiVersion.V1beta1, workloadV1beta1),
  { apiVersion: CoreApiVersion.Batch, kind: 'Job', schema: job },
  { apiVersion: JobFrameworkApiVersion.JobSet, kind: 'JobSet', schema: jobSet },
  { apiVersion: JobFrameworkApiVersion.LeaderWorkerSet, kind: 'LeaderWorkerSet', schema: leaderWorkerSet },
  { apiVersion: JobFrameworkApiVersion.MPIJob, kind: 'MPIJob', schema: mpiJob },
  // HyperNode, Job (batch.volcano.sh), PodGroup, HyperJob: shapes and rules in volcano.ts.
  ...volcanoKindEntries(),
  // ClusterQueue, LocalQueue, Cohort, WorkloadPriorityClass: shapes and rules in queues.ts.
  ...queueKindEntries(),
  // PodGroup (scheduling.sigs.k8s.io, scheduling.x-k8s.io): shapes in gang.ts.
  ...gangKindEntries(),
  // SimulationEvent (topoqueue.io/v1alpha1): shape and rules in simulation-event.ts.
  ...simulationKindEntries(),
];

const BY_KEY: ReadonlyMap<string, KindEntry> = new Map(KINDS.map((e) => [`${e.apiVersion}\u0000${e.kind}`, e]));

/** Every accepted apiVersion + kind, in registry order. */
export function knownKinds(): TypeMeta[] {
  return KINDS.map((e) => ({ apiVersion: e.apiVersion, kind: e.kind }));
}

export function kindEntry(apiVersion: string, kind: string): KindEntry | undefined {
  return BY_KEY.get(`${apiVersion}\u0000${kind}`);
}

/** `Node (v1), Topology (kueue.x-k8s.io/v1beta2, kueue.x-k8s.io/v1beta1), ...` */
function acceptedList(): string {
  const byKind = new Map<string, string[]>();
  for (const e of KINDS) byKind.set(e.kind, [...(byKind.get(e.kind) ?? []), e.apiVersion]);
  return [...byKind].map(([kind, versions]) => `${kind} (${versions.join(', ')})`).join(', ');
}

// ---------------------------------------------------------------------------------------
// Parsing and validating one object
// ---------------------------------------------------------------------------------------

export interface ParseObjectOptions {
  /**
   * The caller owns `obj` and takes it back as the result when it is what the schema would
   * return (Nodes, checked by this; loading 100,000 Nodes from a file): no copy.
   */
  asWritten?: NodeAsWritten;
}

/**
 * Checks `obj` against its kind and returns the parsed object (defaults filled in,
 * quantities as strings, v1beta1 normalized to v1beta2, unknown fields kept) or the
 * errors. `where` names the object; `where.field` (e.g. `items[3]` for a List item)
 * prefixes every field path. The input is not modified (with `asWritten`, a Node may come back as the input itself).
 */
export function parseObject(obj: KObject, where: Where, options: ParseObjectOptions = {}): { object?: KObject; errors: InputError[] } {
  const base: Where = { ...where, object: where.object ?? objectRef(obj) };
  const at = (field: string): Where => ({ ...base, field: joinField(where.field, field) });
  const { apiVersion, kind } = obj as { apiVersion: unknown; kind: unknown };

  const entry = typeof apiVersion === 'string' && typeof kind === 'string' ? kindEntry(apiVersion, kind) : undefined;
  if (entry === undefined) {
    const versions = KINDS.filter((e) => e.kind === kind).map((e) => e.apiVersion);
    if (versions.length > 0) {
      return {
        errors: [
          new InputError(
            at('apiVersion'),
            `${String(kind)} is not accepted with apiVersion ${JSON.stringify(apiVersion)}; accepted: ${versions.join(', ')}`,
          ),
        ],
      };
    }
    return {
      errors: [
        new InputError(
          at('kind'),
          `unknown kind ${JSON.stringify(kind)} (apiVersion ${JSON.stringify(apiVersion)}); accepted: ${acceptedList()}`,
        ),
      ],
    };
  }

  // A Node the schema would return unchanged is kept as written (see node-check.ts).
  if (
    options.asWritten !== undefined &&
    entry.kind === 'Node' &&
    entry.apiVersion === CoreApiVersion.V1 &&
    options.asWritten.accepts(obj as never)
  )
    return { object: obj, errors: [] };
  const result = entry.schema.safeParse(withoutNulls(obj), { error: plainMessage });
  if (!result.success) {
    return { errors: result.error.issues.map((i) => new InputError(at(formatFieldPath(i.path as (string | number)[])), i.message)) };
  }
  const parsed = result.data as KObject;
  const errors = entry.check?.(parsed, base) ?? [];
  if (errors.length > 0) return { errors };
  return { object: entry.normalize ? entry.normalize(parsed) : parsed, errors };
}

/** The errors of parseObject: an empty list means the object is accepted. */
export function validateObject(obj: KObject, where: Where): InputError[] {
  return parseObject(obj, where).errors;
}

/** A copy without null-valued object fields: Kubernetes reads `field: null` as unset. */
function withoutNulls(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(withoutNulls);
  if (typeof v !== 'object' || v === null) return v;
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) if (x !== null) out[k] = withoutNulls(x);
  return out;
}

// ---------------------------------------------------------------------------------------
// zod issues in plain words (used only where a schema gives no message of its own)
// ---------------------------------------------------------------------------------------

const EXPECTED: Record<string, string> = {
  string: 'a string',
  number: 'a number',
  int: 'a whole number',
  boolean: 'true or false',
  object: 'an object',
  record: 'an object',
  array: 'a list',
};

type RawIssue = z.core.$ZodRawIssue;

function plainMessage(iss: RawIssue): string {
  const i = iss as RawIssue & Record<string, unknown>;
  const input = iss.input;
  switch (iss.code) {
    case 'invalid_type': {
      if (input === undefined) return 'is required';
      // z.int() reports a non-number as expecting "number"; its definition says safeint.
      const def = (iss.inst as { _zod?: { def?: { format?: string } } } | undefined)?._zod?.def;
      const expected = def?.format === 'safeint' ? 'int' : String(i.expected);
      return `must be ${EXPECTED[expected] ?? expected}, got ${describeInput(input)}`;
    }
    case 'too_small':
    case 'too_big': {
      const small = iss.code === 'too_small';
      const bound = Number(small ? i.minimum : i.maximum);
      const inclusive = i.inclusive !== false;
      const cmp = small ? (inclusive ? 'at least' : 'more than') : inclusive ? 'at most' : 'less than';
      switch (i.origin) {
        case 'array':
          return `must have ${cmp} ${bound} item${bound === 1 ? '' : 's'}, got ${(input as unknown[]).length}`;
        case 'string':
          return small && bound === 1 ? 'must not be empty' : `must be ${cmp} ${bound} characters long`;
        default:
          return `must be ${cmp} ${bound}, got ${String(input)}`;
      }
    }
    case 'invalid_value': {
      if (input === undefined) return 'is required';
      const values = (i.values as unknown[]).map((v) => JSON.stringify(v)).join(', ');
      return `must be one of ${values}, got ${describeInput(input)}`;
    }
    case 'invalid_union':
      return `does not match any accepted form, got ${describeInput(input)}`;
    case 'invalid_format':
      return `must be a valid ${String(i.format)}, got ${describeInput(input)}`;
    default:
      return iss.message ?? `is not valid (${iss.code})`;
  }
}
