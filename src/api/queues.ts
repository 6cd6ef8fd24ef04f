// Kueue's queue and quota kinds as topoqueue accepts them: ClusterQueue, LocalQueue and
// WorkloadPriorityClass (kueue.x-k8s.io/v1beta2 and v1beta1) and Cohort (v1beta2).
// Spec: specs/kueue-core.md §0 (v1beta1 -> v1beta2) and §1a.
//
// Each kind is checked in two steps, like every entry of schemas.ts's registry:
//   1. shape (zod): types, enums, the CRD defaults (queueingStrategy BestEffortFIFO,
//      stopPolicy None, preemption Never, flavorFungibility MayStopSearch/TryNextFlavor),
//      list bounds, names, resource names and quantities (>= 0);
//   2. rules (validateClusterQueue, validateCohort) over a shape-valid object: the
//      resource-group rules, limits without a cohort, lendingLimit <= nominalQuota, the
//      preemption CEL rule and the flavorFungibility preference rule.
// A v1beta1 ClusterQueue is then normalized to v1beta2 (normalizeClusterQueue).
//
// `namespaceSelector` keeps Kueue's distinction: absent (or null) admits no namespace,
// `{}` admits every namespace (namespaceSelectorMatches).

import { z } from 'zod';
import { InputError, type Where } from './errors.ts';
import { KueueApiVersion } from './keys.ts';
import type { KObject, Override, StringMap } from './objects.ts';
import { compareQuantity, tryParseQuantity } from './quantity.ts';
import type { KindEntry } from './schemas.ts';
import { dnsSubdomain, issue, kobject, labelSelector, quantityProblem } from './schema-parts.ts';
import { joinField, labelKeyProblem } from './topology-request.ts';
import type { LabelSelector } from './volcano-objects.ts';
import { labelSelectorMatches } from './label-selector.ts';

// ---------------------------------------------------------------------------------------
// Types (v1beta2, the shape the rest of the system reads)
// ---------------------------------------------------------------------------------------

export const QueueingStrategy = { StrictFIFO: 'StrictFIFO', BestEffortFIFO: 'BestEffortFIFO' } as const;
export type QueueingStrategy = (typeof QueueingStrategy)[keyof typeof QueueingStrategy];

export const StopPolicy = { None: 'None', Hold: 'Hold', HoldAndDrain: 'HoldAndDrain' } as const;
export type StopPolicy = (typeof StopPolicy)[keyof typeof StopPolicy];

export const ReclaimWithinCohort = { Never: 'Never', LowerPriority: 'LowerPriority', Any: 'Any' } as const;
export type ReclaimWithinCohort = (typeof ReclaimWithinCohort)[keyof typeof ReclaimWithinCohort];

export const WithinClusterQueue = {
  Never: 'Never',
  LowerPriority: 'LowerPriority',
  LowerOrNewerEqualPriority: 'LowerOrNewerEqualPriority',
} as const;
export type WithinClusterQueue = (typeof WithinClusterQueue)[keyof typeof WithinClusterQueue];

export const BorrowWithinCohortPolicy = { Never: 'Never', LowerPriority: 'LowerPriority' } as const;
export type BorrowWithinCohortPolicy = (typeof BorrowWithinCohortPolicy)[keyof typeof BorrowWithinCohortPolicy];

/** v1beta2 values; v1beta1's `Borrow` and `Preempt` are normalized to MayStopSearch. */
export const FlavorFungibilityPolicy = { MayStopSearch: 'MayStopSearch', TryNextFlavor: 'TryNextFlavor' } as const;
export type FlavorFungibilityPolicy = (typeof FlavorFungibilityPolicy)[keyof typeof FlavorFungibilityPolicy];

export const FlavorFungibilityPreference = {
  BorrowingOverPreemption: 'BorrowingOverPreemption',
  PreemptionOverBorrowing: 'PreemptionOverBorrowing',
} as const;
export type FlavorFungibilityPreference = (typeof FlavorFungibilityPreference)[keyof typeof FlavorFungibilityPreference];

export interface ResourceQuota {
  name: string;
  /** Quantities as strings (a YAML number is accepted and becomes a string). */
  nominalQuota: string;
  /** Max extra above nominal; absent = unlimited. Only with a cohort. */
  borrowingLimit?: string;
  /** Max of the unused nominal lendable to the cohort; absent = all. Only with a cohort. */
  lendingLimit?: string;
}

export interface FlavorQuotas {
  name: string;
  /** Exactly the group's coveredResources, in the same order. */
  resources: ResourceQuota[];
}

export interface ResourceGroup {
  coveredResources: string[];
  flavors: FlavorQuotas[];
}

export interface ClusterQueuePreemption {
  reclaimWithinCohort: ReclaimWithinCohort;
  withinClusterQueue: WithinClusterQueue;
  borrowWithinCohort?: { policy: BorrowWithinCohortPolicy; maxPriorityThreshold?: number };
}

export interface FlavorFungibility {
  whenCanBorrow: FlavorFungibilityPolicy;
  whenCanPreempt: FlavorFungibilityPolicy;
  /** Absent means BorrowingOverPreemption (only settable when both policies are TryNextFlavor). */
  preference?: FlavorFungibilityPreference;
}

export interface AdmissionCheckStrategyRule {
  name: string;
  /** Absent or empty: every flavor. */
  onFlavors?: string[];
}

export interface ClusterQueue extends KObject {
  kind: 'ClusterQueue';
  spec: {
    resourceGroups?: ResourceGroup[];
    cohortName?: string;
    queueingStrategy: QueueingStrategy;
    /** Absent: no namespace may submit. `{}`: every namespace. */
    namespaceSelector?: LabelSelector;
    flavorFungibility: FlavorFungibility;
    preemption: ClusterQueuePreemption;
    admissionChecksStrategy?: { admissionChecks: AdmissionCheckStrategyRule[] };
    stopPolicy: StopPolicy;
    fairSharing?: { weight?: string };
    [k: string]: unknown;
  };
  status?: Record<string, unknown>;
}

/** `fairSharing.weight` as the schema leaves it: a quantity string (YAML numbers become strings). */
type FairSharing = { weight?: string };

type LocalQueueOut = z.output<typeof localQueue>;
type CohortOut = z.output<typeof cohort>;

/**
 * The schema's output, narrowed where the schema reads loosely to word its own messages
 * (clusterQueue is refined to be present; stopPolicy and the weight are checked strings).
 */
export interface LocalQueue extends KObject {
  kind: 'LocalQueue';
  spec: Override<LocalQueueOut['spec'], { clusterQueue: string; stopPolicy: StopPolicy; fairSharing?: FairSharing }>;
  status?: LocalQueueOut['status'];
}

/** The schema's output with the checked strings narrowed (see LocalQueue) and the normalized resource groups. */
export interface Cohort extends KObject {
  kind: 'Cohort';
  spec: Override<CohortOut['spec'], { resourceGroups?: ResourceGroup[]; fairSharing?: FairSharing }>;
  status?: CohortOut['status'];
}

/** Cluster-scoped; `value` and `description` sit at the top level, as in PriorityClass. */
export type WorkloadPriorityClass = Override<z.output<typeof workloadPriorityClass>, { kind: 'WorkloadPriorityClass' }> & KObject;

// ---------------------------------------------------------------------------------------
// Limits and messages
// ---------------------------------------------------------------------------------------

/** kueue-core §2: resource groups per ClusterQueue or Cohort. */
export const MAX_RESOURCE_GROUPS = 16;
/** kueue-core §2: flavors per resource group, and over all groups. */
export const MAX_FLAVORS_PER_GROUP = 64;
export const MAX_FLAVORS = 256;
/** Covered resources per group (and so resources per flavor): the CRD's MaxItems. */
export const MAX_COVERED_RESOURCES = 64;

const INT32_MIN = -2147483648;
const INT32_MAX = 2147483647;

/**
 * Kueue's own texts for these rules (CRD CEL messages and the ClusterQueue webhook), as we
 * know them: the spec names the rules but does not quote these messages, so they were not
 * re-checked against the spec's commit. Our messages start with them, then say what is
 * accepted.
 */
export const KueueQueueMessage = {
  /** CEL on ClusterQueueSpec. */
  BorrowingLimitWithoutCohort: 'borrowingLimit must be nil when cohort is empty',
  /** CEL on ClusterQueuePreemption. */
  ReclaimNeverBorrow: 'reclaimWithinCohort=Never and borrowWithinCohort.Policy!=Never',
  /** CEL on ResourceGroup. */
  ResourceCount: 'flavors must have the same number of resources as the coveredResources',
  /** Webhook (field.Invalid on the resource name). */
  ResourceName: 'must match the name in coveredResources',
  /** Webhook (field.Invalid on lendingLimit). */
  LimitWithoutCohort: 'must be nil when cohort is empty',
  /** Webhook (field.Invalid on lendingLimit). */
  LendingAboveNominal: 'must be less than or equal to the nominalQuota',
} as const;

// ---------------------------------------------------------------------------------------
// Shapes
// ---------------------------------------------------------------------------------------

const int32 = (what: string) =>
  z
    .int({
      error: (iss) => (iss.input === undefined ? `is required: ${what}, a whole number` : `must be a whole number (${what}), an int32`),
    })
    .min(INT32_MIN, { error: `must be at least ${INT32_MIN} (int32)` })
    .max(INT32_MAX, { error: `must be at most ${INT32_MAX} (int32)` });

/** Why `raw` is not a quantity of resource `name` >= 0, worded as resources.ts words it. */

const QUOTA_FIELDS = ['nominalQuota', 'borrowingLimit', 'lendingLimit'] as const;

const resourceName = z.string().superRefine((s, ctx) => {
  const p = labelKeyProblem(s);
  if (p)
    issue(
      ctx,
      [],
      `${JSON.stringify(s)}: ${p.replaceAll('label key', 'resource name').replace(/\(e\.g\. [^)]*\)/, '(e.g. cpu or nvidia.com/gpu)')}`,
    );
});

const resourceQuota = z
  .looseObject({
    name: resourceName,
    nominalQuota: z.unknown().optional(),
    borrowingLimit: z.unknown().optional(),
    lendingLimit: z.unknown().optional(),
  })
  .superRefine((rq, ctx) => {
    if (rq.nominalQuota === undefined) {
      issue(ctx, ['nominalQuota'], `is required: the quota of ${rq.name} in this flavor, a quantity such as "10", "500m" or "64Gi"`);
    }
    for (const f of QUOTA_FIELDS) {
      if (rq[f] === undefined) continue;
      const p = quantityProblem(rq.name, rq[f]);
      if (p) issue(ctx, [f], p);
    }
  })
  .transform((rq) => {
    const out: Record<string, unknown> = { ...rq };
    for (const f of QUOTA_FIELDS) if (rq[f] !== undefined) out[f] = String(rq[f]);
    return out;
  });

/** A fairSharing block: `weight` is a quantity >= 0. */
const fairSharing = z
  .looseObject({ weight: z.unknown().optional() })
  .superRefine((fs, ctx) => {
    if (fs.weight === undefined) return;
    const p = quantityProblem('weight', fs.weight);
    if (p) issue(ctx, ['weight'], p);
  })
  .transform((fs) => (fs.weight === undefined ? fs : { ...fs, weight: String(fs.weight) }));

/** A string enum with a default, whose refusal can carry a hint for a known wrong value. */
function choice(values: readonly string[], hints: Record<string, string> = {}) {
  return z.string().superRefine((s, ctx) => {
    if (values.includes(s)) return;
    const hint = Object.hasOwn(hints, s) ? `: ${hints[s]}` : '';
    issue(ctx, [], `must be one of ${values.map((v) => JSON.stringify(v)).join(', ')}, got ${JSON.stringify(s)}${hint}`);
  });
}

const stopPolicy = choice(Object.values(StopPolicy)).default(StopPolicy.None);

const preemption = z
  .looseObject({
    reclaimWithinCohort: choice(Object.values(ReclaimWithinCohort)).default(ReclaimWithinCohort.Never),
    withinClusterQueue: choice(Object.values(WithinClusterQueue)).default(WithinClusterQueue.Never),
    borrowWithinCohort: z
      .looseObject({
        policy: choice(Object.values(BorrowWithinCohortPolicy)).default(BorrowWithinCohortPolicy.Never),
        maxPriorityThreshold: int32('a priority').optional(),
      })
      .optional(),
  })
  .prefault({});

const V1BETA1_FUNGIBILITY = { Borrow: 'Borrow', Preempt: 'Preempt' } as const;

function flavorFungibility(version: 'v1beta2' | 'v1beta1') {
  const values: string[] = Object.values(FlavorFungibilityPolicy);
  const removed = (v: string) =>
    `${JSON.stringify(v)} is ${KueueApiVersion.V1beta1}; ${KueueApiVersion.V1beta2} writes MayStopSearch (same meaning)`;
  const policy =
    version === 'v1beta2'
      ? (value: string) => choice(values, { Borrow: removed('Borrow'), Preempt: removed('Preempt') }).default(value)
      : (value: string) => choice([...values, ...Object.values(V1BETA1_FUNGIBILITY)]).default(value);
  return z
    .looseObject({
      whenCanBorrow: policy(version === 'v1beta2' ? FlavorFungibilityPolicy.MayStopSearch : V1BETA1_FUNGIBILITY.Borrow),
      whenCanPreempt: policy(FlavorFungibilityPolicy.TryNextFlavor),
      preference: choice(Object.values(FlavorFungibilityPreference)).optional(),
    })
    .prefault({});
}

// ---------------------------------------------------------------------------------------
// The registry entries
// ---------------------------------------------------------------------------------------

const flavorQuotas = z.looseObject({
  name: dnsSubdomain,
  resources: z
    .array(resourceQuota)
    .min(1, { error: 'a flavor lists the quota of every covered resource: at least one' })
    .max(MAX_COVERED_RESOURCES, { error: `must have at most ${MAX_COVERED_RESOURCES} resources` }),
});

const resourceGroup = z.looseObject({
  coveredResources: z
    .array(resourceName)
    .min(1, { error: 'a resource group covers at least one resource' })
    .max(MAX_COVERED_RESOURCES, { error: `must have at most ${MAX_COVERED_RESOURCES} resources` }),
  flavors: z
    .array(flavorQuotas)
    .min(1, { error: 'a resource group has at least one flavor' })
    .max(MAX_FLAVORS_PER_GROUP, { error: `must have at most ${MAX_FLAVORS_PER_GROUP} flavors per resource group` }),
});

const resourceGroups = z
  .array(resourceGroup)
  .max(MAX_RESOURCE_GROUPS, { error: `must have at most ${MAX_RESOURCE_GROUPS} resource groups` })
  .superRefine((groups, ctx) => {
    const n = groups.reduce((sum, g) => sum + g.flavors.length, 0);
    if (n > MAX_FLAVORS) issue(ctx, [], `must have at most ${MAX_FLAVORS} flavors over all resource groups, got ${n}`);
  });

const admissionChecksStrategy = z.looseObject({
  admissionChecks: z.array(z.looseObject({ name: z.string().min(1), onFlavors: z.array(dnsSubdomain).optional() })),
});

function clusterQueue(version: 'v1beta2' | 'v1beta1') {
  const cohortField = version === 'v1beta2' ? 'cohortName' : 'cohort';
  const otherCohortField = version === 'v1beta2' ? 'cohort' : 'cohortName';
  return kobject({
    spec: z
      .looseObject({
        resourceGroups: resourceGroups.optional(),
        [cohortField]: dnsSubdomain.optional(),
        queueingStrategy: choice(Object.values(QueueingStrategy)).default(QueueingStrategy.BestEffortFIFO),
        namespaceSelector: labelSelector.optional(),
        flavorFungibility: flavorFungibility(version),
        preemption,
        admissionChecksStrategy: admissionChecksStrategy.optional(),
        ...(version === 'v1beta1' ? { admissionChecks: z.array(z.string().min(1)).optional() } : {}),
        stopPolicy,
        fairSharing: fairSharing.optional(),
      })
      .superRefine((spec, ctx) => {
        // Fields of the other version would be dropped silently: say where they belong.
        if (spec[otherCohortField] !== undefined) {
          issue(
            ctx,
            [otherCohortField],
            version === 'v1beta2'
              ? `is ${KueueApiVersion.V1beta1}; in ${KueueApiVersion.V1beta2} the cohort is spec.cohortName`
              : `is ${KueueApiVersion.V1beta2}; in ${KueueApiVersion.V1beta1} the cohort is spec.cohort`,
          );
        }
        if (version === 'v1beta2' && spec.admissionChecks !== undefined) {
          issue(
            ctx,
            ['admissionChecks'],
            `was removed in ${KueueApiVersion.V1beta2}: write admissionChecksStrategy.admissionChecks: [{name: ...}]`,
          );
        }
        if (version === 'v1beta1' && spec.admissionChecks !== undefined && spec.admissionChecksStrategy !== undefined) {
          issue(ctx, ['admissionChecks'], 'set admissionChecks or admissionChecksStrategy, not both');
        }
      })
      .prefault({}),
    status: z.looseObject({}).optional(),
  });
}

export const localQueue = kobject({
  spec: z.looseObject({
    clusterQueue: z.union([z.undefined(), dnsSubdomain]).superRefine((v, ctx) => {
      if (v === undefined) issue(ctx, [], 'is required: the name of the ClusterQueue this LocalQueue submits Workloads to');
    }),
    stopPolicy,
    fairSharing: fairSharing.optional(),
  }),
  status: z.looseObject({}).optional(),
});

export const cohort = kobject({
  spec: z
    .looseObject({ parentName: dnsSubdomain.optional(), resourceGroups: resourceGroups.optional(), fairSharing: fairSharing.optional() })
    .prefault({}),
  status: z.looseObject({}).optional(),
});

export const workloadPriorityClass = kobject({
  value: int32('the priority of the Workloads of this class'),
  description: z.string().optional(),
});

const V1B2 = KueueApiVersion.V1beta2;
const V1B1 = KueueApiVersion.V1beta1;
const toV1beta2 = (o: KObject): KObject => (o.apiVersion === V1B2 ? o : { ...o, apiVersion: V1B2 });

/** Registry entries (see schemas.ts KINDS) for ClusterQueue, LocalQueue, Cohort and WorkloadPriorityClass. */
export function queueKindEntries(): KindEntry[] {
  return [
    {
      apiVersion: V1B2,
      kind: 'ClusterQueue',
      schema: clusterQueue('v1beta2'),
      check: (o, w) => validateClusterQueue(o as ClusterQueueInput, w),
    },
    {
      apiVersion: V1B1,
      kind: 'ClusterQueue',
      schema: clusterQueue('v1beta1'),
      check: (o, w) => validateClusterQueue(o as ClusterQueueInput, w),
      normalize: (o) => normalizeClusterQueue(o as ClusterQueueInput),
    },
    { apiVersion: V1B2, kind: 'LocalQueue', schema: localQueue },
    { apiVersion: V1B1, kind: 'LocalQueue', schema: localQueue, normalize: toV1beta2 },
    { apiVersion: V1B2, kind: 'Cohort', schema: cohort, check: (o, w) => validateCohort(o as Cohort, w) },
    { apiVersion: V1B2, kind: 'WorkloadPriorityClass', schema: workloadPriorityClass },
    { apiVersion: V1B1, kind: 'WorkloadPriorityClass', schema: workloadPriorityClass, normalize: toV1beta2 },
  ];
}

// ---------------------------------------------------------------------------------------
// Rules over shape-valid objects
// ---------------------------------------------------------------------------------------

/** A ClusterQueue of either version, as the rules read it. */
export interface ClusterQueueInput extends KObject {
  spec: Partial<ClusterQueue['spec']> & {
    cohort?: string;
    admissionChecks?: string[];
    flavorFungibility?: Partial<Omit<FlavorFungibility, 'whenCanBorrow' | 'whenCanPreempt'>> & {
      whenCanBorrow?: string;
      whenCanPreempt?: string;
    };
  };
}

type Report = (field: string, detail: string) => void;

function reporter(where: Where): { errors: InputError[]; at: Report } {
  const errors: InputError[] = [];
  return { errors, at: (field, detail) => errors.push(new InputError({ ...where, field: joinField(where.field, field) }, detail)) };
}

const list = (names: readonly string[]) => names.map((n) => JSON.stringify(n)).join(', ');

/**
 * The rules a ClusterQueue and a Cohort share, over `spec.resourceGroups`:
 *   - every flavor lists exactly the group's covered resources, in their order;
 *   - a resource is covered by one group only; a flavor appears once, in one group;
 *   - borrowingLimit and lendingLimit only with a parent (`parent` names the field that
 *     gives one: `cohortName`, `cohort` or `parentName`); lendingLimit <= nominalQuota.
 */
function checkResourceGroups(groups: readonly ResourceGroup[], parent: { field: string; set: boolean; owner: string }, at: Report): void {
  const coveredBy = new Map<string, number>();
  const flavorAt = new Map<string, string>();
  groups.forEach((g, i) => {
    const gf = `spec.resourceGroups[${i}]`;
    g.coveredResources.forEach((r, j) => {
      const first = coveredBy.get(r);
      if (first === undefined) coveredBy.set(r, i);
      else {
        const where = first === i ? 'this resource group' : `spec.resourceGroups[${first}]`;
        at(
          `${gf}.coveredResources[${j}]`,
          `Duplicate value: ${JSON.stringify(r)}: already covered by ${where}; a resource may appear in only one resource group`,
        );
      }
    });
    g.flavors.forEach((f, j) => {
      const ff = `${gf}.flavors[${j}]`;
      const first = flavorAt.get(f.name);
      if (first === undefined) flavorAt.set(f.name, ff);
      else
        at(
          `${ff}.name`,
          `Duplicate value: ${JSON.stringify(f.name)}: already in ${first}; a flavor may appear only once, in one resource group`,
        );

      const names = f.resources.map((r) => r.name);
      if (names.length !== g.coveredResources.length) {
        at(
          `${ff}.resources`,
          `${KueueQueueMessage.ResourceCount}: flavor ${JSON.stringify(f.name)} lists ${names.length} (${list(names)}), ` +
            `coveredResources has ${g.coveredResources.length} (${list(g.coveredResources)})`,
        );
      }
      f.resources.forEach((rq, k) => {
        const rf = `${ff}.resources[${k}]`;
        if (k < g.coveredResources.length && rq.name !== g.coveredResources[k]) {
          at(
            `${rf}.name`,
            `Invalid value: ${JSON.stringify(rq.name)}: ${KueueQueueMessage.ResourceName} (${gf}.coveredResources[${k}] is ${JSON.stringify(g.coveredResources[k])}); ` +
              'a flavor lists the covered resources in their order',
          );
        }
        if (rq.borrowingLimit !== undefined && !parent.set) {
          at(
            `${rf}.borrowingLimit`,
            parent.owner === 'ClusterQueue'
              ? `${KueueQueueMessage.BorrowingLimitWithoutCohort}: set spec.${parent.field} or remove borrowingLimit (without a cohort there is nothing to borrow)`
              : `must be nil when ${parent.field} is empty: a root Cohort has no parent to borrow from; set spec.${parent.field} or remove borrowingLimit`,
          );
        }
        if (rq.lendingLimit !== undefined) {
          if (!parent.set) {
            at(
              `${rf}.lendingLimit`,
              parent.owner === 'ClusterQueue'
                ? `Invalid value: ${JSON.stringify(rq.lendingLimit)}: ${KueueQueueMessage.LimitWithoutCohort}: set spec.${parent.field} or remove lendingLimit (without a cohort there is nobody to lend to)`
                : `Invalid value: ${JSON.stringify(rq.lendingLimit)}: must be nil when ${parent.field} is empty: a root Cohort has no parent to lend to; set spec.${parent.field} or remove lendingLimit`,
            );
          }
          const lend = tryParseQuantity(rq.lendingLimit);
          const nominal = tryParseQuantity(rq.nominalQuota);
          if (lend !== undefined && nominal !== undefined && compareQuantity(lend, nominal) > 0) {
            at(
              `${rf}.lendingLimit`,
              `Invalid value: ${JSON.stringify(rq.lendingLimit)}: ${KueueQueueMessage.LendingAboveNominal} (${rq.nominalQuota})`,
            );
          }
        }
      });
    });
  });
}

/**
 * ClusterQueue rules (kueue-core §1a), over a shape-valid object of either version:
 * the resource-group rules, limits only with a cohort, reclaimWithinCohort=Never forbids
 * borrowWithinCohort.policy other than Never (CEL), and flavorFungibility.preference only
 * when whenCanBorrow and whenCanPreempt are both TryNextFlavor.
 */
export function validateClusterQueue(cq: ClusterQueueInput, where: Where): InputError[] {
  const { errors, at } = reporter(where);
  const spec = cq.spec ?? {};
  const v1beta1 = cq.apiVersion === KueueApiVersion.V1beta1;
  const cohortField = v1beta1 ? 'cohort' : 'cohortName';
  const cohort = v1beta1 ? spec.cohort : spec.cohortName;
  checkResourceGroups(
    spec.resourceGroups ?? [],
    { field: cohortField, set: cohort !== undefined && cohort !== '', owner: 'ClusterQueue' },
    at,
  );

  const p = spec.preemption;
  const borrowPolicy = p?.borrowWithinCohort?.policy ?? BorrowWithinCohortPolicy.Never;
  if (
    (p?.reclaimWithinCohort ?? ReclaimWithinCohort.Never) === ReclaimWithinCohort.Never &&
    borrowPolicy !== BorrowWithinCohortPolicy.Never
  ) {
    at(
      'spec.preemption',
      `${KueueQueueMessage.ReclaimNeverBorrow}: set reclaimWithinCohort to LowerPriority or Any, or borrowWithinCohort.policy to Never`,
    );
  }

  const ff = spec.flavorFungibility;
  if (ff?.preference !== undefined) {
    const borrow = ff.whenCanBorrow ?? (v1beta1 ? V1BETA1_FUNGIBILITY.Borrow : FlavorFungibilityPolicy.MayStopSearch);
    const preempt = ff.whenCanPreempt ?? FlavorFungibilityPolicy.TryNextFlavor;
    if (borrow !== FlavorFungibilityPolicy.TryNextFlavor || preempt !== FlavorFungibilityPolicy.TryNextFlavor) {
      at(
        'spec.flavorFungibility.preference',
        `is allowed only when whenCanBorrow and whenCanPreempt are both TryNextFlavor (got whenCanBorrow ${borrow}, whenCanPreempt ${preempt}); ` +
          'remove preference or set both to TryNextFlavor',
      );
    }
  }
  return errors;
}

/** Cohort rules: the resource-group rules (limits only with a parentName), and no Cohort is its own parent. */
export function validateCohort(c: Cohort, where: Where): InputError[] {
  const { errors, at } = reporter(where);
  const spec = c.spec ?? {};
  const parent = spec.parentName;
  if (parent !== undefined && parent === c.metadata.name)
    at('spec.parentName', `${JSON.stringify(parent)} is this Cohort: a Cohort cannot be its own parent`);
  checkResourceGroups(spec.resourceGroups ?? [], { field: 'parentName', set: parent !== undefined && parent !== '', owner: 'Cohort' }, at);
  return errors;
}

/**
 * A ClusterQueue in the v1beta2 shape (kueue-core §0): `spec.cohort` becomes
 * `spec.cohortName`, `spec.admissionChecks` becomes `admissionChecksStrategy.admissionChecks`
 * (on every flavor), flavorFungibility `Borrow`/`Preempt` become `MayStopSearch`, and the
 * apiVersion becomes v1beta2. A v1beta2 object is returned unchanged; the input is never
 * modified.
 */
export function normalizeClusterQueue(cq: ClusterQueueInput): ClusterQueue {
  if (cq.apiVersion !== KueueApiVersion.V1beta1) return cq as ClusterQueue;
  const { cohort, admissionChecks, ...spec } = cq.spec;
  const out: ClusterQueueInput = { ...cq, apiVersion: KueueApiVersion.V1beta2, spec };
  if (cohort !== undefined) out.spec.cohortName = cohort;
  if (admissionChecks !== undefined && out.spec.admissionChecksStrategy === undefined) {
    out.spec.admissionChecksStrategy = { admissionChecks: admissionChecks.map((name) => ({ name })) };
  }
  const ff = spec.flavorFungibility;
  if (ff !== undefined) {
    const v2 = (v: string | undefined, dflt: FlavorFungibilityPolicy): FlavorFungibilityPolicy =>
      v === undefined
        ? dflt
        : v === V1BETA1_FUNGIBILITY.Borrow || v === V1BETA1_FUNGIBILITY.Preempt
          ? FlavorFungibilityPolicy.MayStopSearch
          : (v as FlavorFungibilityPolicy);
    out.spec.flavorFungibility = {
      ...ff,
      whenCanBorrow: v2(ff.whenCanBorrow, FlavorFungibilityPolicy.MayStopSearch),
      whenCanPreempt: v2(ff.whenCanPreempt, FlavorFungibilityPolicy.TryNextFlavor),
    };
  }
  return out as ClusterQueue;
}

// ---------------------------------------------------------------------------------------
// Helpers for admission
// ---------------------------------------------------------------------------------------

/**
 * Whether a namespace with these labels may submit to a ClusterQueue with this
 * namespaceSelector: absent admits none, `{}` admits all, otherwise Kubernetes' label
 * selector semantics (NotIn and DoesNotExist match a namespace without the key).
 */
export function namespaceSelectorMatches(selector: LabelSelector | undefined, labels: StringMap | undefined): boolean {
  return selector !== undefined && labelSelectorMatches(selector, labels);
}
