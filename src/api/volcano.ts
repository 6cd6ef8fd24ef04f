// Volcano's kinds as topoqueue accepts them: HyperNode (topology.volcano.sh/v1alpha1), Job
// (batch.volcano.sh/v1alpha1), PodGroup (scheduling.volcano.sh/v1beta1) and HyperJob
// (training.volcano.sh/v1alpha1). Spec: specs/volcano-hypernode.md §1 (API) and §7
// (admission messages, reused verbatim so users' tooling keeps matching on them).
//
// Each kind is checked in two steps, like every entry of schemas.ts's registry:
//   1. shape (zod): types, enums, bounds, defaults (tier 0, mode hard, replicas 1,
//      subGroupSize 1...), label selectors and quantities; the schemas are built from
//      the shared blocks of schema-parts.ts (object metadata, pod templates, resource
//      lists) so every kind reads those the same way;
//   2. rules (validateHyperNode, validateVolcanoJob, validateVolcanoPodGroup,
//      validateHyperJob): the peer's admission rules, over a shape-valid object.
//
// Forms the design seed writes and the API does not, accepted and normalized:
//   - `networkTopology` as a one-element list -> the object (errors inside such a list are
//     reported at `networkTopology.<field>`, without the `[0]`);
//   - a HyperJob replicatedJob's `template` -> `templateSpec`.

import { z } from 'zod';
import { InputError, type Where } from './errors.ts';
import type { KObject, StringMap } from './objects.ts';
import { compileUserRegex } from './regex.ts';
import { dnsLabel, kobject, labelKey, labelSelector, podTemplate, resourceList } from './schema-parts.ts';
import type { KindEntry } from './schemas.ts';
import { joinField } from './topology-request.ts';
import {
  VolcanoAnnotation,
  VolcanoApiVersion,
  type LabelSelector,
  type NetworkTopologyMode,
  type NetworkTopologySpec,
} from './volcano-objects.ts';
import { isRecord } from './values.ts';
import { DNS_SUBDOMAIN_MAX, DNS_SUBDOMAIN_PATTERN, DNS_SUBDOMAIN_PROBLEM } from './names.ts';

// ---------------------------------------------------------------------------------------
// Messages
// ---------------------------------------------------------------------------------------

/** The peer's admission messages (spec §7), verbatim. */
export const VolcanoMessage = {
  // HyperNode (§7.1: webhook / ValidatingAdmissionPolicy texts)
  NoMembers: 'member must have at least one member',
  NoSelector: 'member selector must have one of exactMatch, regexMatch, or labelMatch',
  SeveralSelectors: 'cannot specify more than one selector type (exactMatch, regexMatch, labelMatch)',
  ExactNameRequired: 'member exactMatch name is required',
  RegexPatternRequired: 'member regexMatch pattern is required',
  // Job (§7.2)
  JobTierConflict: "must not specify 'highestTierAllowed' and 'highestTierName' in networkTopology simultaneously",
  // PodGroup (§7.2): the same rule, worded with a final period
  PodGroupTierConflict: "must not specify 'highestTierAllowed' and 'highestTierName' in networkTopology simultaneously.",
} as const;

export const regexInvalidMessage = (error: string) => `member regexMatch pattern is invalid: ${error}`;
export const exactNameInvalidMessage = (problem: string) => `member exactMatch validate failed [${problem}]`;
export const subGroupTierConflictMessage = (policy: string) => `in subGroupPolicy '${policy}': ${VolcanoMessage.PodGroupTierConflict}`;

const inTask = (task: string, job: string) => `in task: ${task}, job: ${job}`;
export const partitionMessage = {
  partitionSize: (task: string, job: string) => `'PartitionSize' must be greater than 0 ${inTask(task, job)}`,
  totalPartitions: (task: string, job: string) => `'TotalPartitions' must be greater than 0 ${inTask(task, job)}`,
  replicas: (task: string, job: string) => `'Replicas' are not equal to TotalPartitions*PartitionSize ${inTask(task, job)}`,
  minAvailable: (task: string, job: string) => `'MinAvailable' is not equal to MinPartitions*PartitionSize ${inTask(task, job)}`,
} as const;

/**
 * Job rules §7.2 does not quote, in the wording of Volcano's Job webhook (admit_job.go) as
 * we know it; not re-checked against the spec's commit.
 */
export const jobMessage = {
  noTasks: 'No task specified in job spec',
  duplicatedTask: (task: string) => `duplicated task name ${task}`,
  taskMinAvailable: (task: string, job: string) => `'minAvailable' is greater than 'replicas' ${inTask(task, job)}`,
  jobMinAvailable: "job 'minAvailable' should not be greater than total replicas in tasks",
} as const;

// ---------------------------------------------------------------------------------------
// Shapes shared by the four kinds
// ---------------------------------------------------------------------------------------

const networkTopologyObject = z.looseObject({
  mode: z.enum(['hard', 'soft']).default('hard'),
  highestTierAllowed: z.int().min(0).optional(),
  highestTierName: z.string().min(1).max(253).optional(),
});

/** `networkTopology`: the object, or (as the design seed writes it) a list of exactly one. */
const networkTopology = z.preprocess((v, ctx) => {
  if (!Array.isArray(v)) return v;
  if (v.length === 1) return v[0];
  ctx.addIssue({
    code: 'custom',
    input: v,
    message: `must be one object {mode, highestTierAllowed or highestTierName}; a list is accepted only with exactly one element, got ${v.length}`,
  });
  return v;
}, networkTopologyObject);

// ---------------------------------------------------------------------------------------
// The registry entries
// ---------------------------------------------------------------------------------------

const member = z.looseObject({
  // Required; checked by the rules so a member in the seed's draft form gets one clear message.
  type: z.enum(['Node', 'HyperNode']).optional(),
  selector: z
    .looseObject({
      exactMatch: z.looseObject({ name: z.string().optional() }).optional(),
      regexMatch: z.looseObject({ pattern: z.string().optional() }).optional(),
      labelMatch: labelSelector.optional(),
    })
    .optional(),
});

export const hyperNode = kobject({
  spec: z
    .looseObject({
      tier: z.int().min(0).default(0),
      tierName: z.string().max(253).optional(),
      members: z.array(member).default([]),
    })
    .prefault({}),
  status: z
    .looseObject({
      nodeCount: z.int().min(0).optional(),
      conditions: z.array(z.looseObject({ type: z.string().min(1), status: z.string() })).optional(),
    })
    .optional(),
});

const task = z.looseObject({
  name: dnsLabel.optional(),
  replicas: z.int().min(0).default(1),
  minAvailable: z.int().min(0).optional(),
  template: podTemplate,
  partitionPolicy: z
    .looseObject({
      totalPartitions: z.int().optional(),
      partitionSize: z.int().optional(),
      minPartitions: z.int().min(0).default(0),
      networkTopology: networkTopology.optional(),
    })
    .optional(),
});

const jobSpec = z.looseObject({
  minAvailable: z.int().min(0).optional(),
  schedulerName: z.string().optional(),
  queue: z.string().optional(),
  priorityClassName: z.string().optional(),
  networkTopology: networkTopology.optional(),
  // Volcano's mutating webhook names unnamed tasks `default<index>`.
  tasks: z
    .array(task)
    .default([])
    .transform((tasks) => tasks.map((t, i) => (t.name === undefined ? { ...t, name: `default${i}` } : t))),
});

export const volcanoJob = kobject({ spec: jobSpec });

export const volcanoPodGroup = kobject({
  spec: z
    .looseObject({
      minMember: z.int().min(0).optional(),
      minResources: resourceList.optional(),
      queue: z.string().optional(),
      priorityClassName: z.string().optional(),
      networkTopology: networkTopology.optional(),
      subGroupPolicy: z
        .array(
          z.looseObject({
            name: z.string().min(1),
            networkTopology: networkTopology.optional(),
            subGroupSize: z.int().min(1).default(1),
            minSubGroups: z.int().min(0).default(0),
            labelSelector: labelSelector.optional(),
            matchLabelKeys: z.array(labelKey).optional(),
          }),
        )
        .optional(),
    })
    .prefault({}),
  status: z.looseObject({}).optional(),
});

export const hyperJob = kobject({
  spec: z.looseObject({
    minAvailable: z.int().min(0).optional(),
    networkTopology: networkTopology.optional(),
    replicatedJobs: z
      .array(
        z.looseObject({
          name: dnsLabel,
          replicas: z.int().min(0).default(1),
          templateSpec: jobSpec.optional(),
          // The design seed's spelling; normalized to templateSpec.
          template: jobSpec.optional(),
        }),
      )
      .default([]),
  }),
});

/** Registry entries (see schemas.ts KINDS) for Volcano's HyperNode, Job, PodGroup and HyperJob. */
export function volcanoKindEntries(): KindEntry[] {
  return [
    {
      apiVersion: VolcanoApiVersion.HyperNode,
      kind: 'HyperNode',
      schema: hyperNode,
      check: (o, w) => validateHyperNode(o as HyperNodeInput, w),
    },
    { apiVersion: VolcanoApiVersion.Job, kind: 'Job', schema: volcanoJob, check: (o, w) => validateVolcanoJob(o as VolcanoJobInput, w) },
    {
      apiVersion: VolcanoApiVersion.PodGroup,
      kind: 'PodGroup',
      schema: volcanoPodGroup,
      check: (o, w) => validateVolcanoPodGroup(o as VolcanoPodGroupInput, w),
    },
    {
      apiVersion: VolcanoApiVersion.HyperJob,
      kind: 'HyperJob',
      schema: hyperJob,
      check: (o, w) => validateHyperJob(o as HyperJobInput, w),
      normalize: (o) => normalizeHyperJob(o as HyperJobInput),
    },
  ];
}

// ---------------------------------------------------------------------------------------
// Rules over shape-valid objects. The input types say what the rules may find missing.
// ---------------------------------------------------------------------------------------

export interface HyperNodeMemberInput {
  type?: string;
  selector?: { exactMatch?: { name?: string }; regexMatch?: { pattern?: string }; labelMatch?: LabelSelector };
}

export interface HyperNodeInput extends KObject {
  spec: { tier?: number; tierName?: string; members?: HyperNodeMemberInput[] };
}

export interface VolcanoTaskInput {
  name?: string;
  replicas?: number;
  minAvailable?: number;
  partitionPolicy?: { totalPartitions?: number; partitionSize?: number; minPartitions?: number; networkTopology?: NetworkTopologySpec };
}

export interface VolcanoJobSpecInput {
  minAvailable?: number;
  networkTopology?: NetworkTopologySpec;
  tasks?: VolcanoTaskInput[];
}

export interface VolcanoJobInput extends KObject {
  spec: VolcanoJobSpecInput;
}

export interface VolcanoPodGroupInput extends KObject {
  spec: { networkTopology?: NetworkTopologySpec; subGroupPolicy?: { name: string; networkTopology?: NetworkTopologySpec }[] };
}

export interface ReplicatedJobInput {
  name: string;
  replicas?: number;
  templateSpec?: VolcanoJobSpecInput;
  template?: VolcanoJobSpecInput;
}

export interface HyperJobInput extends KObject {
  spec: { minAvailable?: number; networkTopology?: NetworkTopologySpec; replicatedJobs?: ReplicatedJobInput[] };
}

type Report = (field: string, detail: string) => void;

function reporter(where: Where): { errors: InputError[]; at: Report } {
  const errors: InputError[] = [];
  return { errors, at: (field, detail) => errors.push(new InputError({ ...where, field: joinField(where.field, field) }, detail)) };
}

const bothTiers = (nt: NetworkTopologySpec | undefined) => nt?.highestTierAllowed !== undefined && nt.highestTierName !== undefined;

/**
 * HyperNode admission (spec §7.1). A HyperNode-type member with regexMatch or labelMatch is
 * accepted, as the peer does; the tree ignores it with a warning (hypernode-tree.ts).
 */
export function validateHyperNode(hn: HyperNodeInput, where: Where): InputError[] {
  const { errors, at } = reporter(where);
  const members = hn.spec.members ?? [];
  if (members.length === 0) at('spec.members', VolcanoMessage.NoMembers);
  members.forEach((m, i) => {
    const field = `spec.members[${i}]`;
    if (m.type === undefined) at(`${field}.type`, 'is required: "Node" (a Kubernetes node) or "HyperNode" (a child HyperNode)');
    const sel = m.selector ?? {};
    const given = (['exactMatch', 'regexMatch', 'labelMatch'] as const).filter((k) => sel[k] !== undefined);
    if (given.length === 0) {
      // The design seed's draft writes members as `- name: node0`.
      const draft =
        'name' in m && typeof m.name === 'string'
          ? `; a member is written {type: Node, selector: {exactMatch: {name: ${JSON.stringify(m.name)}}}}, not with a name of its own`
          : '';
      at(`${field}.selector`, `${VolcanoMessage.NoSelector}${draft}`);
    } else if (given.length > 1) {
      at(`${field}.selector`, VolcanoMessage.SeveralSelectors);
    }
    if (sel.exactMatch !== undefined) {
      const name = sel.exactMatch.name ?? '';
      const f = `${field}.selector.exactMatch.name`;
      if (name === '') at(f, VolcanoMessage.ExactNameRequired);
      else if (name.length > DNS_SUBDOMAIN_MAX) at(f, exactNameInvalidMessage(`must be no more than ${DNS_SUBDOMAIN_MAX} characters`));
      else if (!DNS_SUBDOMAIN_PATTERN.test(name)) at(f, exactNameInvalidMessage(DNS_SUBDOMAIN_PROBLEM));
    }
    if (sel.regexMatch !== undefined) {
      const pattern = sel.regexMatch.pattern ?? '';
      const f = `${field}.selector.regexMatch.pattern`;
      if (pattern === '') at(f, VolcanoMessage.RegexPatternRequired);
      else {
        const compiled = compileUserRegex(pattern);
        if (!compiled.ok) at(f, regexInvalidMessage(compiled.error));
      }
    }
  });
  return errors;
}

/** Job admission (spec §7.2 and Volcano's admit_job.go) for one JobSpec at `prefix`. */
function checkJobSpec(spec: VolcanoJobSpecInput, job: string, prefix: string, at: Report): void {
  const f = (sub: string) => joinField(prefix, sub);
  if (bothTiers(spec.networkTopology)) at(f('networkTopology'), VolcanoMessage.JobTierConflict);
  const tasks = spec.tasks ?? [];
  if (tasks.length === 0) {
    at(f('tasks'), jobMessage.noTasks);
    return;
  }
  const seen = new Set<string>();
  let total = 0;
  tasks.forEach((t, i) => {
    const tf = (sub: string) => f(`tasks[${i}].${sub}`);
    const name = t.name ?? `default${i}`;
    const replicas = t.replicas ?? 1;
    total += replicas;
    if (seen.has(name)) at(tf('name'), jobMessage.duplicatedTask(name));
    seen.add(name);
    if (t.minAvailable !== undefined && t.minAvailable > replicas) at(tf('minAvailable'), jobMessage.taskMinAvailable(name, job));

    const pp = t.partitionPolicy;
    if (pp === undefined) return;
    if (bothTiers(pp.networkTopology)) at(tf('partitionPolicy.networkTopology'), VolcanoMessage.JobTierConflict);
    const size = pp.partitionSize ?? 0;
    const count = pp.totalPartitions ?? 0;
    if (size <= 0) at(tf('partitionPolicy.partitionSize'), partitionMessage.partitionSize(name, job));
    if (count <= 0) at(tf('partitionPolicy.totalPartitions'), partitionMessage.totalPartitions(name, job));
    if (size > 0 && count > 0 && replicas !== count * size) at(tf('replicas'), partitionMessage.replicas(name, job));
    // Volcano defaults a task's minAvailable to its replicas before validating.
    const minPartitions = pp.minPartitions ?? 0;
    if (size > 0 && minPartitions > 0 && (t.minAvailable ?? replicas) !== minPartitions * size) {
      at(tf(t.minAvailable === undefined ? 'partitionPolicy.minPartitions' : 'minAvailable'), partitionMessage.minAvailable(name, job));
    }
  });
  if (spec.minAvailable !== undefined && spec.minAvailable > total) at(f('minAvailable'), jobMessage.jobMinAvailable);
}

/** Volcano Job admission: spec §7.2 (networkTopology, partitionPolicy) and the task rules. */
export function validateVolcanoJob(job: VolcanoJobInput, where: Where): InputError[] {
  const { errors, at } = reporter(where);
  checkJobSpec(job.spec, job.metadata.name, 'spec', at);
  return errors;
}

/** PodGroup admission (spec §7.2), plus unique subGroupPolicy names. */
export function validateVolcanoPodGroup(pg: VolcanoPodGroupInput, where: Where): InputError[] {
  const { errors, at } = reporter(where);
  if (bothTiers(pg.spec.networkTopology)) at('spec.networkTopology', VolcanoMessage.PodGroupTierConflict);
  const first = new Map<string, number>();
  (pg.spec.subGroupPolicy ?? []).forEach((p, i) => {
    if (bothTiers(p.networkTopology)) at(`spec.subGroupPolicy[${i}].networkTopology`, subGroupTierConflictMessage(p.name));
    const seen = first.get(p.name);
    if (seen !== undefined) {
      at(
        `spec.subGroupPolicy[${i}].name`,
        `${JSON.stringify(p.name)} is already spec.subGroupPolicy[${seen}]: subGroupPolicy names must be unique`,
      );
    } else first.set(p.name, i);
  });
  return errors;
}

/**
 * HyperJob: every replicatedJob's template is a Volcano JobSpec under the Job rules (its
 * messages name the replicatedJob as the job); names are unique; `minAvailable` (child
 * Jobs) is at most the Jobs the replicatedJobs create; a HyperJob-level networkTopology
 * (the seed's; the peer's API has none) follows the Job rule.
 */
export function validateHyperJob(hj: HyperJobInput, where: Where): InputError[] {
  const { errors, at } = reporter(where);
  if (bothTiers(hj.spec.networkTopology)) at('spec.networkTopology', VolcanoMessage.JobTierConflict);
  const rjs = hj.spec.replicatedJobs ?? [];
  if (rjs.length === 0) at('spec.replicatedJobs', 'a HyperJob needs at least one replicatedJob {name, replicas, templateSpec}');
  const first = new Map<string, number>();
  let jobs = 0;
  rjs.forEach((rj, i) => {
    const field = `spec.replicatedJobs[${i}]`;
    jobs += rj.replicas ?? 1;
    const seen = first.get(rj.name);
    if (seen !== undefined) {
      at(`${field}.name`, `${JSON.stringify(rj.name)} is already spec.replicatedJobs[${seen}]: replicatedJob names must be unique`);
    } else first.set(rj.name, i);
    if (rj.templateSpec !== undefined && rj.template !== undefined) {
      at(`${field}.template`, 'set templateSpec or its alias template, not both');
    } else if (rj.templateSpec === undefined && rj.template === undefined) {
      at(`${field}.templateSpec`, 'is required: the Volcano JobSpec each replica runs (template is accepted as an alias)');
    } else {
      const key = rj.templateSpec !== undefined ? 'templateSpec' : 'template';
      checkJobSpec((rj.templateSpec ?? rj.template)!, rj.name, `${field}.${key}`, at);
    }
  });
  if (hj.spec.minAvailable !== undefined && rjs.length > 0 && hj.spec.minAvailable > jobs) {
    at('spec.minAvailable', `${hj.spec.minAvailable} is more than the ${jobs} Job${jobs === 1 ? '' : 's'} the replicatedJobs create`);
  }
  return errors;
}

/** The seed's `template` becomes `templateSpec`; the input is not modified. */
export function normalizeHyperJob<T extends HyperJobInput>(hj: T): T {
  const rjs = hj.spec.replicatedJobs;
  if (rjs === undefined || !rjs.some((rj) => rj.template !== undefined)) return hj;
  const replicatedJobs = rjs.map(({ template, ...rj }) => (template === undefined ? rj : { ...rj, templateSpec: template }));
  return { ...hj, spec: { ...hj.spec, replicatedJobs } };
}

// ---------------------------------------------------------------------------------------
// Helpers for the adapters
// ---------------------------------------------------------------------------------------

/**
 * A spec's `networkTopology`, normalized: a one-element list becomes its element, mode
 * defaults to hard. Meant for parsed specs; on raw input, unreadable fields are dropped.
 */
export function networkTopologyOf(spec: { networkTopology?: unknown } | undefined): NetworkTopologySpec | undefined {
  let nt = spec?.networkTopology;
  if (Array.isArray(nt)) nt = nt.length === 1 ? nt[0] : undefined;
  if (!isRecord(nt)) return undefined;
  const out: NetworkTopologySpec = { mode: nt.mode === 'soft' ? 'soft' : 'hard' };
  const tier = nt.highestTierAllowed;
  if (typeof tier === 'number' && Number.isSafeInteger(tier) && tier >= 0) out.highestTierAllowed = tier;
  if (typeof nt.highestTierName === 'string' && nt.highestTierName !== '') out.highestTierName = nt.highestTierName;
  return out;
}

const WHOLE_RE = /^[+-]?[0-9]+$/;

/**
 * The PodGroup topology Volcano's podgroup controller derives from a plain pod's
 * annotations (spec §1.4): `volcano.sh/network-topology-mode` (hard|soft, any case; any
 * other value warns and means hard) and `volcano.sh/network-topology-highest-tier` (a whole
 * number >= 0; anything else warns and sets no tier). Either annotation present gives a
 * topology; a mode alone gives a hard topology with no tier (which constrains nothing).
 */
export function podGroupAnnotationsTopology(annotations: StringMap | undefined): { topology?: NetworkTopologySpec; warnings: string[] } {
  const warnings: string[] = [];
  const modeKey = VolcanoAnnotation.NetworkTopologyMode;
  const tierKey = VolcanoAnnotation.NetworkTopologyHighestTier;
  const rawMode = annotations?.[modeKey];
  const rawTier = annotations?.[tierKey];
  if (rawMode === undefined && rawTier === undefined) return { warnings };

  let mode: NetworkTopologyMode = 'hard';
  if (rawMode !== undefined) {
    const lower = rawMode.toLowerCase();
    if (lower === 'hard' || lower === 'soft') mode = lower;
    else warnings.push(`annotation ${modeKey}=${JSON.stringify(rawMode)} is neither hard nor soft (any case): using hard`);
  }
  const topology: NetworkTopologySpec = { mode };
  if (rawTier !== undefined) {
    const n = WHOLE_RE.test(rawTier) ? Number(rawTier) : NaN;
    if (Number.isSafeInteger(n) && n >= 0)
      topology.highestTierAllowed = Math.max(0, n); // not -0
    else warnings.push(`annotation ${tierKey}=${JSON.stringify(rawTier)} is not a whole number >= 0: no highest tier is set`);
  }
  return { topology, warnings };
}
