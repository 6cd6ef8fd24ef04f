// Gangs as Koordinator and scheduler-plugins declare them, read into one record (GangSpec).
// Spec: specs/koordinator-gang.md §2 (keys, defaults, parsing and fallbacks); seed:
// seeds/koordinator-gang-scheduling.md.
//
// Two ways to declare a gang:
//   - the CRD way: a PodGroup (scheduling.sigs.k8s.io/v1alpha1, Koordinator's copy, or
//     scheduling.x-k8s.io/v1alpha1, scheduler-plugins') and pods labelled with its name;
//     the PodGroup alone configures the gang (spec + its own annotations);
//   - the annotation way: the pods' own gang annotations (and the deprecated
//     pod-group.scheduling.sigs.k8s.io/* labels).
//
// gangFromPod resolves one pod:
//   1. identity: the first non-empty of label pod-group.scheduling.sigs.k8s.io, label
//      scheduling.x-k8s.io/pod-group (scheduler-plugins), label
//      pod-group.scheduling.sigs.k8s.io/name, annotation gang.scheduling.koordinator.sh/name;
//      the gang id is `<pod namespace>/<name>`;
//   2. a CRD-way label: the PodGroup of that API group configures the gang; without it the
//      gang is not initialized and its pods cannot be scheduled;
//   3. otherwise a Koordinator PodGroup of the same id takes the gang over; else the pod's
//      annotations configure it, when it carries a parsable min-available.
// gangsFromPods adds the multi-pod rule: the first pod (in the order given) with a valid
// min-available initializes an annotation gang; later pods' annotations are ignored.
//
// Invalid values never throw and never refuse a pod: each falls back exactly as the peer
// does (mode -> Strict, waiting-time -> the default timeout, groups -> the gang alone,
// total-number -> min-available, match-policy -> the default), with a warning naming the
// object, the key and the value.

import { z } from 'zod';
import { GangApiVersion } from './api-versions.ts';
import { objectRef } from './manifest.ts';
import type { KObject, ObjectMeta, ResourceList } from './objects.ts';
import { kobject, resourceList } from './schema-parts.ts';
import type { KindEntry } from './schemas.ts';
import { isRecord } from './values.ts';

// ---------------------------------------------------------------------------------------
// Keys, API versions, defaults
// ---------------------------------------------------------------------------------------

export { GangApiVersion };

/** Koordinator's gang annotations (prefix gang.scheduling.koordinator.sh/). */
export const GangAnnotation = {
  Name: 'gang.scheduling.koordinator.sh/name',
  MinAvailable: 'gang.scheduling.koordinator.sh/min-available',
  TotalNumber: 'gang.scheduling.koordinator.sh/total-number',
  Mode: 'gang.scheduling.koordinator.sh/mode',
  WaitingTime: 'gang.scheduling.koordinator.sh/waiting-time',
  Groups: 'gang.scheduling.koordinator.sh/groups',
  MatchPolicy: 'gang.scheduling.koordinator.sh/match-policy',
  /** Declared by the peer as a timed-out marker, never written by any version. */
  Timeout: 'gang.scheduling.koordinator.sh/timeout',
  /** Read by the network-topology-aware gang (not part of GangSpec). */
  NetworkTopologySpec: 'gang.scheduling.koordinator.sh/network-topology-spec',
  NetworkTopologyIndex: 'gang.scheduling.koordinator.sh/network-topology-index',
  /** Alias of MatchPolicy, read when MatchPolicy is empty. */
  PodGroupMatchPolicy: 'pod-group.scheduling.sigs.k8s.io/match-policy',
} as const;

/** Labels that put a pod in a gang. */
export const GangLabel = {
  /** Koordinator's CRD way: the value is the PodGroup name. */
  PodGroup: 'pod-group.scheduling.sigs.k8s.io',
  /** scheduler-plugins' CRD way (since Feb 2023): the value is the PodGroup name. */
  SchedulerPluginsPodGroup: 'scheduling.x-k8s.io/pod-group',
  /** Deprecated "lightweight coscheduling" name. */
  Name: 'pod-group.scheduling.sigs.k8s.io/name',
  /** Deprecated; takes precedence over the min-available annotation when set. */
  MinAvailable: 'pod-group.scheduling.sigs.k8s.io/min-available',
  /** Koordinator's sub-priority: breaks ties between equal priorities in its queue order (higher first). */
  SubPriority: 'koordinator.sh/priority',
} as const;

/** Our annotations on gang Workloads that the admission cycle reads. */
export const GangWorkloadKey = {
  /** RFC 3339: the gang's queue order, its PodGroup's creationTimestamp or its earliest pod's. */
  QueueTimestamp: 'topoqueue.io/queue-timestamp',
  /** JSON ResourceList: scheduler-plugins `spec.minResources` of the gang's PodGroup. */
  MinResources: 'topoqueue.io/gang-min-resources',
} as const;

/**
 * A sub-priority label value as Koordinator reads it (Go's ParseInt with base 0: decimal,
 * `0x`, `0o` or a leading `0` for octal, `0b`, with `_` between digits after a prefix);
 * 0 when absent or not an integer.
 */
export function parseSubPriority(raw: string | undefined): number {
  if (raw === undefined) return 0;
  const m = /^([+-]?)(?:0[xX]((?:_?[0-9a-fA-F])+)|0[bB]((?:_?[01])+)|0[oO]?((?:_?[0-7])+)|([1-9][0-9]*|0))$/.exec(raw);
  if (!m) return 0;
  const [, sign, hex, bin, oct, dec] = m;
  const value =
    hex !== undefined
      ? parseInt(hex.replaceAll('_', ''), 16)
      : bin !== undefined
        ? parseInt(bin.replaceAll('_', ''), 2)
        : oct !== undefined
          ? parseInt(oct.replaceAll('_', ''), 8)
          : Number(dec);
  return Number.isSafeInteger(value) ? (sign === '-' ? -value : value) : 0;
}

export const GangMode = { Strict: 'Strict', NonStrict: 'NonStrict' } as const;
export type GangMode = (typeof GangMode)[keyof typeof GangMode];

export const GangMatchPolicy = {
  OnceSatisfied: 'once-satisfied',
  OnlyWaiting: 'only-waiting',
  WaitingAndRunning: 'waiting-and-running',
} as const;
export type GangMatchPolicy = (typeof GangMatchPolicy)[keyof typeof GangMatchPolicy];

/** Koordinator's plugin arg `defaultTimeout`. */
export const DEFAULT_GANG_TIMEOUT_SECONDS = 600;
/** scheduler-plugins' `permitWaitingTimeSeconds`. */
export const DEFAULT_PERMIT_WAITING_TIME_SECONDS = 60;

/** Phases the PodGroup controllers write. */
export const PodGroupPhase = {
  Pending: 'Pending',
  /** Koordinator only. */
  PreScheduling: 'PreScheduling',
  Scheduling: 'Scheduling',
  /** Koordinator only. */
  Scheduled: 'Scheduled',
  Running: 'Running',
  Unknown: 'Unknown',
  Finished: 'Finished',
  Failed: 'Failed',
} as const;

// ---------------------------------------------------------------------------------------
// Types
// ---------------------------------------------------------------------------------------

export interface PodGroup extends KObject {
  kind: 'PodGroup';
  spec: {
    /** Absent reads as 0. */
    minMember?: number;
    /** Ignored by Koordinator; scheduler-plugins checks it against the cluster's free total. */
    minResources?: ResourceList;
    scheduleTimeoutSeconds?: number;
    [k: string]: unknown;
  };
  status?: {
    phase?: string;
    occupiedBy?: string;
    /** Koordinator only. */
    scheduled?: number;
    running?: number;
    succeeded?: number;
    failed?: number;
    scheduleStartTime?: string;
    [k: string]: unknown;
  };
}

export interface GangSpec {
  name: string;
  namespace: string;
  /** Members that must be placed together; may be 0 or (annotation way) negative, as the peer accepts. */
  minMember: number;
  /** Koordinator's total-number: at least minMember. */
  totalNumber: number;
  mode: GangMode;
  /** Gang ids `ns/name` bundled into this gang's group, sorted; need not contain this gang. */
  groups: string[];
  waitingTimeSeconds: number;
  source: 'annotations' | 'podgroup';
  /** When a gang counts as satisfied at Permit (spec §5). */
  matchPolicy: GangMatchPolicy;
  /** The PodGroup's creationTimestamp (its queue order); annotation gangs have none. */
  createdAt?: string;
  /** scheduler-plugins `spec.minResources` (Koordinator ignores the field). */
  minResources?: ResourceList;
}

/** The peer's plugin arguments that give defaults. */
export interface GangOptions {
  /** Koordinator `defaultTimeout` (600 s). */
  defaultTimeoutSeconds?: number;
  /** scheduler-plugins `permitWaitingTimeSeconds` (60 s), for scheduling.x-k8s.io PodGroups. */
  permitWaitingTimeSeconds?: number;
  /** Koordinator `defaultMatchPolicy` (once-satisfied). */
  defaultMatchPolicy?: GangMatchPolicy;
}

/** `ns/name`. */
export const gangId = (namespace: string, name: string): string => `${namespace}/${name}`;

/** Koordinator's gang group id: the group's gang ids, sorted, joined with `,`. */
export const gangGroupId = (gang: Pick<GangSpec, 'groups'>): string => [...gang.groups].sort().join(',');

// ---------------------------------------------------------------------------------------
// The registry entries
// ---------------------------------------------------------------------------------------

const INT32_MIN = -2147483648;
const INT32_MAX = 2147483647;
const int32 = () =>
  z
    .int()
    .min(INT32_MIN)
    .max(INT32_MAX, { error: `must be at most ${INT32_MAX} (int32)` });

const podGroup = (minMember: z.ZodType) =>
  kobject({
    spec: z
      .looseObject({ minMember: minMember.optional(), minResources: resourceList.optional(), scheduleTimeoutSeconds: int32().optional() })
      .prefault({}),
    status: z
      .looseObject({
        phase: z.string().optional(),
        occupiedBy: z.string().optional(),
        scheduled: z.int().min(0).optional(),
        running: z.int().min(0).optional(),
        succeeded: z.int().min(0).optional(),
        failed: z.int().min(0).optional(),
        scheduleStartTime: z.string().optional(),
      })
      .optional(),
  });

/** Registry entries (see schemas.ts KINDS) for both PodGroup CRDs. */
export function gangKindEntries(): KindEntry[] {
  return [
    // Koordinator's copy has no bound on minMember (a negative minimum is always met).
    { apiVersion: GangApiVersion.Koordinator, kind: 'PodGroup', schema: podGroup(int32()) },
    // scheduler-plugins' CRD: minMember >= 1.
    {
      apiVersion: GangApiVersion.SchedulerPlugins,
      kind: 'PodGroup',
      schema: podGroup(int32().min(1, { error: 'must be at least 1: the number of pods that must be scheduled together' })),
    },
  ];
}

// ---------------------------------------------------------------------------------------
// Parsing values as the peer does
// ---------------------------------------------------------------------------------------

const INT_RE = /^[+-]?[0-9]+$/;

/** Go's strconv.ParseInt(s, 10, 32), or undefined. */
export function parseInt32(s: string): number | undefined {
  if (!INT_RE.test(s)) return undefined;
  const n = Number(s);
  return n >= INT32_MIN && n <= INT32_MAX ? n + 0 : undefined; // + 0: no -0
}

const NS = 1n;
const DURATION_UNITS: ReadonlyMap<string, bigint> = new Map([
  ['ns', NS],
  ['us', 1000n],
  ['\u00b5s', 1000n], // micro sign
  ['\u03bcs', 1000n], // Greek mu
  ['ms', 1_000_000n],
  ['s', 1_000_000_000n],
  ['m', 60_000_000_000n],
  ['h', 3_600_000_000_000n],
]);
const MAX_DURATION = (1n << 63n) - 1n;

/**
 * Go's time.ParseDuration, in seconds, or undefined: `[-+]?([0-9]*(\.[0-9]*)?unit)+` with
 * units ns us µs ms s m h, or a bare `0`; at most 2^63-1 ns.
 */
export function parseGoDuration(s: string): number | undefined {
  let rest = s;
  let neg = false;
  if (rest.startsWith('-') || rest.startsWith('+')) {
    neg = rest[0] === '-';
    rest = rest.slice(1);
  }
  if (rest === '0') return 0;
  if (rest === '') return undefined;
  let total = 0n;
  while (rest !== '') {
    const m = /^([0-9]*)(?:\.([0-9]*))?/.exec(rest)!;
    const [all, whole, frac] = m;
    if (whole === '' && (frac === undefined || frac === '')) return undefined;
    rest = rest.slice(all.length);
    const unitMatch = /^[^0-9.]+/.exec(rest);
    if (unitMatch === null) return undefined; // missing unit
    const unit = DURATION_UNITS.get(unitMatch[0]);
    if (unit === undefined) return undefined;
    rest = rest.slice(unitMatch[0].length);
    let v = BigInt(whole === '' ? '0' : whole) * unit;
    if (frac) v += (BigInt(frac) * unit) / 10n ** BigInt(frac.length);
    total += v;
    if (total > MAX_DURATION + 1n) return undefined;
  }
  if (!neg && total > MAX_DURATION) return undefined;
  const seconds = Number(total) / 1e9;
  return neg ? -seconds : seconds;
}

// ---------------------------------------------------------------------------------------
// One gang's parameters from a set of annotations (pod or PodGroup)
// ---------------------------------------------------------------------------------------

type Warn = (text: string) => void;

/** A string-valued map entry; numbers and booleans (raw YAML) read as their text. */
function entry(m: unknown, key: string): string | undefined {
  if (!isRecord(m)) return undefined;
  const v = m[key];
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  return undefined;
}

const nonEmpty = (s: string | undefined): string | undefined => (s === undefined || s === '' ? undefined : s);

const show = (key: string, raw: string, kind: 'annotation' | 'label' = 'annotation') => `${kind} ${key}=${JSON.stringify(raw)}`;

function parseTotalNumber(raw: string | undefined, min: number, warn: Warn): number {
  if (raw === undefined || raw === '') return min;
  const n = parseInt32(raw);
  const at = show(GangAnnotation.TotalNumber, raw);
  if (n === undefined) warn(`${at} is not a base-10 int32: using min-available ${min}`);
  else if (n === 0 && min !== 0) warn(`${at} reads as unset: using min-available ${min}`);
  else if (n < min) warn(`${at} is less than min-available ${min}: using ${min}`);
  else return n;
  return min;
}

function parseMode(raw: string | undefined, warn: Warn): GangMode {
  if (raw === GangMode.Strict || raw === GangMode.NonStrict) return raw;
  if (raw !== undefined && raw !== '')
    warn(`${show(GangAnnotation.Mode, raw)} is not "Strict" or "NonStrict" (case-sensitive): using Strict`);
  return GangMode.Strict;
}

const GROUP_EXAMPLE = '["ns-a/gang-a","ns-b/gang-b"]';

/** The group's gang ids, sorted; the gang alone when the value is empty, `[]` or not a JSON array of strings. */
function parseGroups(raw: string | undefined, self: string, warn: Warn): string[] {
  if (raw === undefined || raw === '') return [self];
  let ids: unknown;
  try {
    ids = JSON.parse(raw);
  } catch {
    warn(`${show(GangAnnotation.Groups, raw)} is not a JSON array of gang ids such as ${GROUP_EXAMPLE}: the gang group is ${self} alone`);
    return [self];
  }
  if (ids === null) return [self]; // Go reads JSON null into an empty list
  if (!Array.isArray(ids) || !ids.every((x) => typeof x === 'string')) {
    warn(`${show(GangAnnotation.Groups, raw)} is not a JSON array of strings such as ${GROUP_EXAMPLE}: the gang group is ${self} alone`);
    return [self];
  }
  if (ids.length === 0) return [self];
  for (const id of ids) {
    const slash = id.indexOf('/');
    if (slash <= 0 || slash === id.length - 1 || id.indexOf('/', slash + 1) >= 0) {
      warn(
        `${show(GangAnnotation.Groups, raw)} lists ${JSON.stringify(id)}, which is not a gang id "namespace/name": that gang can never be found, so the group can never be satisfied`,
      );
    }
  }
  return [...(ids as string[])].sort();
}

function parseMatchPolicy(annotations: unknown, fallback: GangMatchPolicy, warn: Warn): GangMatchPolicy {
  const primary = nonEmpty(entry(annotations, GangAnnotation.MatchPolicy));
  const key = primary !== undefined ? GangAnnotation.MatchPolicy : GangAnnotation.PodGroupMatchPolicy;
  const raw = primary ?? nonEmpty(entry(annotations, GangAnnotation.PodGroupMatchPolicy));
  if (raw === undefined) return fallback;
  if ((Object.values(GangMatchPolicy) as string[]).includes(raw)) return raw as GangMatchPolicy;
  warn(`${show(key, raw)} is not once-satisfied, only-waiting or waiting-and-running: using ${fallback}`);
  return fallback;
}

/**
 * A gang's spec from its identity and the annotations both ways share (total-number, mode,
 * groups, match-policy); the wait is read between groups and match-policy, so warnings
 * keep the order of the fields.
 */
function gangSpec(
  annotations: unknown,
  g: {
    name: string;
    namespace: string;
    minMember: number;
    id: string;
    source: GangSpec['source'];
    waitingTimeSeconds: () => number;
    defaultPolicy: GangMatchPolicy;
  },
  warn: Warn,
): GangSpec {
  return {
    name: g.name,
    namespace: g.namespace,
    minMember: g.minMember,
    totalNumber: parseTotalNumber(entry(annotations, GangAnnotation.TotalNumber), g.minMember, warn),
    mode: parseMode(entry(annotations, GangAnnotation.Mode), warn),
    groups: parseGroups(entry(annotations, GangAnnotation.Groups), g.id, warn),
    waitingTimeSeconds: g.waitingTimeSeconds(),
    source: g.source,
    matchPolicy: parseMatchPolicy(annotations, g.defaultPolicy, warn),
  };
}

function parseWaitingTime(raw: string | undefined, fallback: number, warn: Warn): number {
  if (raw === undefined || raw === '') return fallback;
  const s = parseGoDuration(raw);
  const at = show(GangAnnotation.WaitingTime, raw);
  if (s === undefined) warn(`${at} is not a Go duration such as "30s", "10m" or "1h30m": using the default ${fallback}s`);
  else if (s === 0) warn(`${at} is zero, which means the default, not "no wait": using ${fallback}s`);
  else if (s < 0) warn(`${at} is negative: using the default ${fallback}s`);
  else return s;
  return fallback;
}

function warnIgnoredTimeout(annotations: unknown, warn: Warn): void {
  const raw = entry(annotations, GangAnnotation.Timeout);
  if (raw !== undefined) {
    warn(
      `${show(GangAnnotation.Timeout, raw)} is ignored: the peer never writes or acts on it; a gang that times out is rejected and tried again`,
    );
  }
}

// ---------------------------------------------------------------------------------------
// PodGroup way
// ---------------------------------------------------------------------------------------

function meta(o: unknown): Partial<ObjectMeta> {
  return isRecord(o) && isRecord(o.metadata) ? (o.metadata as Partial<ObjectMeta>) : {};
}

const namespaceOf = (o: unknown): string => {
  const ns = meta(o).namespace;
  return typeof ns === 'string' && ns !== '' ? ns : 'default';
};

const isGangPodGroup = (o: unknown): o is PodGroup =>
  isRecord(o) && o.kind === 'PodGroup' && (o.apiVersion === GangApiVersion.Koordinator || o.apiVersion === GangApiVersion.SchedulerPlugins);

/**
 * The gang a PodGroup declares: minMember from spec (absent = 0); total-number, mode,
 * groups and match-policy from its annotations; the wait from spec.scheduleTimeoutSeconds
 * when > 0, else the default (Koordinator `defaultTimeout` 600 s; scheduler-plugins
 * `permitWaitingTimeSeconds` 60 s, whose PodGroups also default to waiting-and-running,
 * the way scheduler-plugins counts members). Never throws.
 */
export function gangFromPodGroup(pg: PodGroup, options: GangOptions = {}): { gang: GangSpec; warnings: string[] } {
  const warnings: string[] = [];
  const ref = objectRef(pg);
  const warn: Warn = (t) => warnings.push(`${ref}: ${t}`);
  const m = meta(pg);
  const annotations = m.annotations;
  const name = typeof m.name === 'string' ? m.name : '';
  const namespace = namespaceOf(pg);
  const pluginsGroup = isRecord(pg) && pg.apiVersion === GangApiVersion.SchedulerPlugins;
  const spec = isRecord(pg) && isRecord(pg.spec) ? pg.spec : {};

  const minMember = typeof spec.minMember === 'number' && Number.isSafeInteger(spec.minMember) ? spec.minMember : 0;
  const defaultWait = pluginsGroup
    ? (options.permitWaitingTimeSeconds ?? DEFAULT_PERMIT_WAITING_TIME_SECONDS)
    : (options.defaultTimeoutSeconds ?? DEFAULT_GANG_TIMEOUT_SECONDS);
  let waitingTimeSeconds = defaultWait;
  const timeout = spec.scheduleTimeoutSeconds;
  if (typeof timeout === 'number' && timeout > 0) waitingTimeSeconds = timeout;
  else if (timeout !== undefined)
    warn(`spec.scheduleTimeoutSeconds ${JSON.stringify(timeout)} is not a positive number of seconds: using the default ${defaultWait}s`);
  const ignoredWait = entry(annotations, GangAnnotation.WaitingTime);
  if (ignoredWait !== undefined) {
    warn(`${show(GangAnnotation.WaitingTime, ignoredWait)} is ignored on a PodGroup: the wait is spec.scheduleTimeoutSeconds`);
  }
  warnIgnoredTimeout(annotations, warn);

  const defaultPolicy = pluginsGroup ? GangMatchPolicy.WaitingAndRunning : (options.defaultMatchPolicy ?? GangMatchPolicy.OnceSatisfied);
  const gang = gangSpec(
    annotations,
    {
      name,
      namespace,
      minMember,
      id: gangId(namespace, name),
      source: 'podgroup',
      waitingTimeSeconds: () => waitingTimeSeconds,
      defaultPolicy,
    },
    warn,
  );
  if (typeof m.creationTimestamp === 'string') gang.createdAt = m.creationTimestamp;
  if (pluginsGroup && isRecord(spec.minResources) && Object.keys(spec.minResources).length > 0)
    gang.minResources = spec.minResources as ResourceList;
  return { gang, warnings };
}

// ---------------------------------------------------------------------------------------
// One pod
// ---------------------------------------------------------------------------------------

/** Keys on a pod that only the annotation way reads. */
const POD_PARAMETER_KEYS = [
  GangAnnotation.MinAvailable,
  GangAnnotation.TotalNumber,
  GangAnnotation.Mode,
  GangAnnotation.WaitingTime,
  GangAnnotation.Groups,
  GangAnnotation.MatchPolicy,
  GangAnnotation.PodGroupMatchPolicy,
] as const;

type Resolution =
  | { kind: 'none' }
  /** Configured by this PodGroup. */
  | { kind: 'podgroup'; id: string; podGroup: PodGroup }
  /** CRD way, but the PodGroup does not exist: the gang is not initialized (`why` says so). */
  | { kind: 'missing'; id: string; why: string }
  /** Annotation way: `gang` when this pod's min-available parses; `why` when it has none. */
  | { kind: 'annotations'; id: string; gang?: GangSpec; why?: string };

/** Finds the gang PodGroup of an API version by namespace and name. */
type PodGroupLookup = (apiVersion: string, namespace: string, name: string) => PodGroup | undefined;

/** An index of the gang PodGroups among `podGroups`; the first given wins a duplicate. */
function podGroupLookup(podGroups: readonly unknown[]): PodGroupLookup {
  const index = new Map<string, PodGroup>();
  for (const pg of podGroups) {
    if (!isGangPodGroup(pg)) continue;
    const key = `${pg.apiVersion}\u0000${namespaceOf(pg)}\u0000${String(meta(pg).name)}`;
    if (!index.has(key)) index.set(key, pg);
  }
  return (apiVersion, namespace, name) => index.get(`${apiVersion}\u0000${namespace}\u0000${name}`);
}

function resolvePod(pod: unknown, findPodGroup: PodGroupLookup, options: GangOptions, warn: Warn): Resolution {
  const m = meta(pod);
  const labels = m.labels;
  const annotations = m.annotations;
  const namespace = namespaceOf(pod);
  const podRef = `${namespace}/${typeof m.name === 'string' ? m.name : '<no name>'}`;

  // 1-2. CRD way.
  const crd: [string, GangApiVersion][] = [
    [GangLabel.PodGroup, GangApiVersion.Koordinator],
    [GangLabel.SchedulerPluginsPodGroup, GangApiVersion.SchedulerPlugins],
  ];
  for (const [label, apiVersion] of crd) {
    const name = nonEmpty(entry(labels, label));
    if (name === undefined) continue;
    const id = gangId(namespace, name);
    const ignored = POD_PARAMETER_KEYS.filter((k) => entry(annotations, k) !== undefined);
    if (ignored.length > 0) {
      warn(
        `annotations ${ignored.join(', ')} are ignored: label ${label}=${JSON.stringify(name)} makes PodGroup ${id} alone configure the gang`,
      );
    }
    const pg = findPodGroup(apiVersion, namespace, name);
    if (pg !== undefined) return { kind: 'podgroup', id, podGroup: pg };
    const other = apiVersion === GangApiVersion.Koordinator ? GangApiVersion.SchedulerPlugins : GangApiVersion.Koordinator;
    const otherLabel = apiVersion === GangApiVersion.Koordinator ? GangLabel.SchedulerPluginsPodGroup : GangLabel.PodGroup;
    const hint = findPodGroup(other, namespace, name) ? `; a ${other} PodGroup ${id} exists: its pods carry label ${otherLabel}` : '';
    // The peer's messages: Koordinator's PreEnqueue, scheduler-plugins' Permit.
    const peer =
      apiVersion === GangApiVersion.Koordinator ? `gang has not init, gangName: ${id}, podName: ${podRef}` : 'PodGroup not found';
    return {
      kind: 'missing',
      id,
      why: `${show(label, name, 'label')} names ${apiVersion} PodGroup ${id}, which does not exist: ${peer}${hint}`,
    };
  }

  // 3. Annotation way.
  let name = nonEmpty(entry(labels, GangLabel.Name));
  let named = name === undefined ? '' : show(GangLabel.Name, name, 'label');
  if (name === undefined) {
    name = nonEmpty(entry(annotations, GangAnnotation.Name));
    if (name !== undefined) named = show(GangAnnotation.Name, name);
  }
  if (name === undefined) {
    for (const k of POD_PARAMETER_KEYS) {
      if (entry(annotations, k) !== undefined) {
        warn(
          `annotation ${k} is set but the pod names no gang (label ${GangLabel.PodGroup}, label ${GangLabel.Name} or annotation ${GangAnnotation.Name}): it is not a gang member`,
        );
        break;
      }
    }
    return { kind: 'none' };
  }
  const id = gangId(namespace, name);
  const takeover = findPodGroup(GangApiVersion.Koordinator, namespace, name);
  if (takeover !== undefined) {
    const ignored = POD_PARAMETER_KEYS.filter(
      (k) =>
        entry(annotations, k) !== undefined || (k === GangAnnotation.MinAvailable && entry(labels, GangLabel.MinAvailable) !== undefined),
    );
    if (ignored.length > 0)
      warn(
        `gang ${id} is configured by PodGroup ${id}, which takes over a gang of the same name: the pod's ${ignored.join(', ')} are ignored`,
      );
    return { kind: 'podgroup', id, podGroup: takeover };
  }

  // min-available: the deprecated label wins when set, even when it does not parse.
  const fromLabel = nonEmpty(entry(labels, GangLabel.MinAvailable));
  const rawMin = fromLabel ?? nonEmpty(entry(annotations, GangAnnotation.MinAvailable));
  if (rawMin === undefined) {
    return {
      kind: 'annotations',
      id,
      why: `${named} puts the pod in gang ${id}, but it has no ${GangAnnotation.MinAvailable}: this pod does not initialize the gang`,
    };
  }
  const minMember = parseInt32(rawMin);
  if (minMember === undefined) {
    const what =
      fromLabel !== undefined
        ? `${show(GangLabel.MinAvailable, rawMin, 'label')} is not a base-10 int32 (annotation ${GangAnnotation.MinAvailable} is not consulted when this label is set)`
        : `${show(GangAnnotation.MinAvailable, rawMin)} is not a base-10 int32`;
    warn(`${what}: this pod does not initialize gang ${id}`);
    return { kind: 'annotations', id };
  }
  warnIgnoredTimeout(annotations, warn);
  const gang = gangSpec(
    annotations,
    {
      name,
      namespace,
      minMember,
      id,
      source: 'annotations',
      waitingTimeSeconds: () =>
        parseWaitingTime(
          entry(annotations, GangAnnotation.WaitingTime),
          options.defaultTimeoutSeconds ?? DEFAULT_GANG_TIMEOUT_SECONDS,
          warn,
        ),
      defaultPolicy: options.defaultMatchPolicy ?? GangMatchPolicy.OnceSatisfied,
    },
    warn,
  );
  return { kind: 'annotations', id, gang };
}

/**
 * The gang of one pod (see the file header), or none for a pod outside any gang. `gangId`
 * is set whenever the pod names a gang; `gangId` without `gang` means the gang is not
 * initialized (missing PodGroup, or no valid min-available on this pod): the pod must not
 * be placed on its own. Never throws; every fallback adds a warning.
 */
export function gangFromPod(
  pod: KObject,
  podGroups: readonly KObject[],
  options: GangOptions = {},
): { gang?: GangSpec; gangId?: string; warnings: string[] } {
  const warnings: string[] = [];
  const ref = isRecord(pod) ? objectRef(pod) : 'Pod';
  const r = resolvePod(pod, podGroupLookup(podGroups ?? []), options, (t) => warnings.push(`${ref}: ${t}`));
  switch (r.kind) {
    case 'none':
      return { warnings };
    case 'missing':
      return { gangId: r.id, warnings: [...warnings, `${ref}: ${r.why}`] };
    case 'podgroup': {
      const pg = gangFromPodGroup(r.podGroup, options);
      return { gang: pg.gang, gangId: r.id, warnings: [...warnings, ...pg.warnings] };
    }
    case 'annotations':
      if (r.why !== undefined) warnings.push(`${ref}: ${r.why}`);
      return r.gang ? { gang: r.gang, gangId: r.id, warnings } : { gangId: r.id, warnings };
  }
}

/**
 * Every gang of a set of pods and PodGroups: each Koordinator or scheduler-plugins PodGroup
 * is a gang (with or without pods); an annotation gang is initialized by the first pod, in
 * the order given, whose min-available parses, and later pods' gang annotations are
 * ignored (a warning says so when they differ). `members` lists the pods of every gang id,
 * initialized or not; a gang id in `members` but not in `gangs` is not initialized.
 * Never throws.
 */
export function gangsFromPods(
  pods: readonly KObject[],
  podGroups: readonly KObject[],
  options: GangOptions = {},
): { gangs: Map<string, GangSpec>; members: Map<string, KObject[]>; warnings: string[]; noMinimum: string[] } {
  const gangs = new Map<string, GangSpec>();
  const members = new Map<string, KObject[]>();
  const warnings: string[] = [];
  const initializedBy = new Map<string, string>();
  const missing = new Map<string, string>();
  const declaredBy = new Map<string, KObject>();

  for (const pg of podGroups ?? []) {
    if (!isGangPodGroup(pg)) continue;
    const id = gangId(namespaceOf(pg), String(meta(pg).name ?? ''));
    const r = gangFromPodGroup(pg, options);
    warnings.push(...r.warnings);
    // Both API groups may declare the same id: the Koordinator one configures it.
    if (!gangs.has(id) || pg.apiVersion === GangApiVersion.Koordinator) {
      gangs.set(id, r.gang);
      declaredBy.set(id, pg);
    }
  }

  const findPodGroup = podGroupLookup(podGroups ?? []);
  for (const pod of pods ?? []) {
    const ref = isRecord(pod) ? objectRef(pod) : 'Pod';
    const podWarnings: string[] = [];
    const r = resolvePod(pod, findPodGroup, options, (t) => podWarnings.push(`${ref}: ${t}`));
    if (r.kind !== 'none') {
      const list = members.get(r.id);
      if (list === undefined) members.set(r.id, [pod]);
      else list.push(pod);
    }
    if (r.kind === 'missing' && !missing.has(r.id)) missing.set(r.id, r.why);
    if (r.kind !== 'annotations') {
      warnings.push(...podWarnings);
      continue;
    }
    const first = initializedBy.get(r.id);
    if (first === undefined) {
      // Fallback warnings of a pod that does not initialize the gang are still worth
      // reading (its values were invalid); a missing min-available is reported per gang.
      warnings.push(...podWarnings);
      if (r.gang !== undefined) {
        gangs.set(r.id, r.gang);
        initializedBy.set(r.id, ref);
      }
      continue;
    }
    // Already initialized: this pod's annotations are not read.
    const g = gangs.get(r.id)!;
    if (r.gang !== undefined && !sameParameters(g, r.gang)) {
      warnings.push(
        `${ref}: gang ${r.id} was initialized by ${first}; this pod's different gang annotations are ignored (${differences(g, r.gang)})`,
      );
    }
  }

  for (const [id, pods] of members) {
    if (gangs.has(id)) continue;
    const n = `${pods.length} pod${pods.length === 1 ? '' : 's'}`;
    warnings.push(
      missing.has(id)
        ? `gang ${id} is not initialized (${n}): ${missing.get(id)}`
        : `gang ${id} is not initialized (${n}): none of its pods carries a valid ${GangAnnotation.MinAvailable}; its pods cannot be placed`,
    );
  }
  // A minimum below 1 is no minimum (issue 15): said once per gang that has pods.
  const noMinimum: string[] = [];
  for (const [id, g] of gangs) {
    if (g.minMember >= 1 || !members.has(id)) continue;
    const pg = declaredBy.get(id);
    const what =
      g.source === 'podgroup' && pg
        ? `${objectRef(pg)}: spec.minMember ${isRecord((pg as PodGroup).spec) && (pg as PodGroup).spec.minMember !== undefined ? g.minMember : '(unset, reads as 0)'}`
        : `${initializedBy.get(id) ?? 'Pod'}: ${GangAnnotation.MinAvailable} ${g.minMember}`;
    noMinimum.push(`${what} is below 1: gang ${id} has no minimum: whatever fits is admitted, at least one pod`);
  }
  warnings.push(...noMinimum);
  return { gangs, members, warnings, noMinimum };
}

const PARAMETERS = ['minMember', 'totalNumber', 'mode', 'groups', 'waitingTimeSeconds', 'matchPolicy'] as const;

function sameParameters(a: GangSpec, b: GangSpec): boolean {
  return PARAMETERS.every((k) => JSON.stringify(a[k]) === JSON.stringify(b[k]));
}

function differences(kept: GangSpec, ignored: GangSpec): string {
  return PARAMETERS.filter((k) => JSON.stringify(kept[k]) !== JSON.stringify(ignored[k]))
    .map((k) => `${k} ${JSON.stringify(ignored[k])} instead of ${JSON.stringify(kept[k])}`)
    .join(', ');
}
