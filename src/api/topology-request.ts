// The TAS annotations of KEP-2724 as a PodSetTopologyRequest, and the rules a request must
// follow before it reaches placement. Two front-ends share one set of rules:
//   - topologyRequestFromAnnotations: a pod template's annotations (what users write on
//     Jobs, JobSets, LWS...), messages name the annotation key and its value;
//   - validatePodSetTopologyRequests: Workload.spec.podSets[].topologyRequest, messages
//     name the field, plus the cross-PodSet rules.
// Rules that need the Topology's levels are checked at placement time, by the engine
// (src/placement/engine.ts), in the peer's words.
//
// Label-key and label-value validation lives here too because every other validator in
// src/api needs it and this file sits below schemas.ts in the import order.

import { InputError, type Where } from './errors.ts';
import { KueueAnnotation } from './keys.ts';
import type { topologyRequest as topologyRequestSchema } from './schemas.ts';
import type { PodSet, PodSetTopologyRequest, SliceLayer, StringMap } from './objects.ts';
import { DNS_SUBDOMAIN_PATTERN, LABEL_VALUE_MAX, LABEL_VALUE_PATTERN } from './names.ts';

export interface TopologyRequestOptions {
  podIndexLabel?: string;
  subGroupIndexLabel?: string;
  subGroupCount?: number;
  /** JobSet: parallelism */
  defaultSliceSize?: number;
}

/** Multi-layer slice constraints allow at most this many layers (KEP-2724, spec kueue-tas §1). */
export const MAX_SLICE_LAYERS = 3;

// ---------------------------------------------------------------------------------------
// Label keys, label values, field paths
// ---------------------------------------------------------------------------------------

/** An optional DNS-subdomain prefix and `/`, then a name (a non-empty label value). */
const LABEL_KEY_RE = new RegExp(`^(${DNS_SUBDOMAIN_PATTERN.source.slice(1, -1)}\\/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$`);
const LABEL_KEY_MAX = 316;
const LABEL_NAME_MAX = 63;
const LABEL_PREFIX_MAX = 253;

/** Why `key` is not a valid label key (qualified name), or undefined when it is. */
export function labelKeyProblem(key: string): string | undefined {
  if (key === '') return 'a label key must not be empty';
  if (key.length > LABEL_KEY_MAX) return `a label key must be at most ${LABEL_KEY_MAX} characters, got ${key.length}`;
  const slash = key.indexOf('/');
  const prefix = slash >= 0 ? key.slice(0, slash) : undefined;
  const name = slash >= 0 ? key.slice(slash + 1) : key;
  if (prefix !== undefined && prefix.length > LABEL_PREFIX_MAX) {
    return `the prefix of a label key (before "/") must be at most ${LABEL_PREFIX_MAX} characters, got ${prefix.length}`;
  }
  if (name.length > LABEL_NAME_MAX) {
    return `the name of a label key (after any "/") must be at most ${LABEL_NAME_MAX} characters, got ${name.length}`;
  }
  if (!LABEL_KEY_RE.test(key)) {
    return (
      'not a valid label key: an optional DNS-subdomain prefix and "/", then a name of letters, digits, ' +
      "'-', '_' or '.' that starts and ends with a letter or digit (e.g. cloud.provider.com/topology-rack)"
    );
  }
  return undefined;
}

/** Why `value` is not a valid label value, or undefined when it is. */
export function labelValueProblem(value: string): string | undefined {
  if (value.length > LABEL_VALUE_MAX) return `a label value must be at most ${LABEL_VALUE_MAX} characters, got ${value.length}`;
  if (!LABEL_VALUE_PATTERN.test(value)) {
    return "not a valid label value: letters, digits, '-', '_' or '.', starting and ending with a letter or digit (or empty)";
  }
  return undefined;
}

const IDENT_RE = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/** `prefix` + `sub` as a Kubernetes-style field path: `a.b`, `a[0]`, `a["x/y"]`. */
export function joinField(prefix: string | undefined, sub: string): string {
  if (!prefix) return sub;
  if (sub === '') return prefix;
  return sub.startsWith('[') ? `${prefix}${sub}` : `${prefix}.${sub}`;
}

/** One path segment: `.name`, `[3]` or `["kueue.x-k8s.io/podset"]`. */
export function fieldSegment(seg: string | number): string {
  if (typeof seg === 'number') return `[${seg}]`;
  return IDENT_RE.test(seg) ? seg : `[${JSON.stringify(seg)}]`;
}

/** A path (as zod reports it) in Kubernetes style: `spec.levels[0].nodeLabel`. */
export function formatFieldPath(path: readonly (string | number)[]): string {
  let out = '';
  for (const seg of path) out = joinField(out, fieldSegment(seg));
  return out;
}

// ---------------------------------------------------------------------------------------
// Rules shared by both front-ends
// ---------------------------------------------------------------------------------------

/** The request's own fields (its type also admits unknown ones, which pass through). */
type ReqField = keyof (typeof topologyRequestSchema)['shape'];

/** How one front-end names fields and reports problems. */
interface Naming {
  /** Whether the user set the field (an annotation counts when present, whatever its value). */
  has(f: ReqField): boolean;
  /** The field's name as the user wrote it (annotation key or field name). */
  name(f: ReqField): string;
  /** Name and value, e.g. `kueue.x-k8s.io/podset-slice-size="5"`. */
  show(f: ReqField): string;
  /** Entry `i` of the slice constraints, named with its value. */
  layer(i: number): string;
  /** Fields whose value already failed to parse: rules about them are skipped. */
  invalid: ReadonlySet<ReqField>;
  report(f: ReqField, detail: string, sub?: string): void;
}

const isWhole = (n: unknown): n is number => typeof n === 'number' && Number.isSafeInteger(n);

const LABEL_KEY_FIELDS: readonly ReqField[] = [
  'required',
  'preferred',
  'podSetSliceRequiredTopology',
  'podIndexLabel',
  'subGroupIndexLabel',
];

// The per-PodSet rules of KEP-2724 "Validation" and "PodSet Slice size validation":
//   1. required / preferred / unconstrained are mutually exclusive;
//   2. level keys are valid label keys;
//   3. the slice topology and the slice size come together, size >= 1, size divides count;
//   4. the constraints list replaces that pair: 1..3 layers, each with a topology and a
//      size >= 1, the first dividing count and each dividing the previous one;
//   5. a group name needs required or preferred on the same PodSet;
//   6. sub-group index label and count come together; the count is >= 0.
function checkRequest(r: PodSetTopologyRequest, count: number, n: Naming): void {
  const ok = (f: ReqField) => n.has(f) && !n.invalid.has(f);

  const modes = (['required', 'preferred', 'unconstrained'] as const).filter((f) => n.has(f));
  if (modes.length > 1) {
    n.report(
      modes[1],
      `${modes.map((f) => n.show(f)).join(' and ')} are mutually exclusive: ` +
        `set only one of ${n.name('required')}, ${n.name('preferred')} and ${n.name('unconstrained')}`,
    );
  }

  for (const f of LABEL_KEY_FIELDS) {
    const v = r[f];
    if (!ok(f) || typeof v !== 'string') continue;
    const problem = labelKeyProblem(v);
    if (problem) n.report(f, `${n.show(f)}: ${problem}`);
  }

  const hasConstraints = n.has('podsetSliceRequiredTopologyConstraints');
  if (hasConstraints && (n.has('podSetSliceRequiredTopology') || n.has('podSetSliceSize'))) {
    n.report(
      'podsetSliceRequiredTopologyConstraints',
      `${n.show('podsetSliceRequiredTopologyConstraints')} cannot be combined with ` +
        `${n.name('podSetSliceRequiredTopology')} or ${n.name('podSetSliceSize')}: write every slice layer in the constraints`,
    );
  }

  if (n.has('podSetSliceRequiredTopology') && r.podSetSliceSize === undefined && !n.invalid.has('podSetSliceSize')) {
    n.report(
      'podSetSliceRequiredTopology',
      `${n.show('podSetSliceRequiredTopology')} needs ${n.name('podSetSliceSize')}: the number of pods in each slice`,
    );
  }
  if (n.has('podSetSliceSize') && !n.has('podSetSliceRequiredTopology')) {
    n.report(
      'podSetSliceSize',
      `${n.show('podSetSliceSize')} cannot be set without ${n.name('podSetSliceRequiredTopology')}: the level each slice must fit in`,
    );
  }
  if (r.podSetSliceSize !== undefined && !n.invalid.has('podSetSliceSize')) {
    const size = r.podSetSliceSize;
    // A default slice size (JobSet parallelism) was not written by the user: name the
    // slice topology it applies to instead.
    const at: ReqField = n.has('podSetSliceSize') ? 'podSetSliceSize' : 'podSetSliceRequiredTopology';
    const what = n.has('podSetSliceSize') ? n.show('podSetSliceSize') : `the default slice size ${size} for ${n.show(at)}`;
    if (!isWhole(size) || size < 1) n.report(at, `${what} must be a whole number of at least 1`);
    else if (count % size !== 0) n.report(at, `${what} must evenly divide the PodSet count ${count}`);
  }

  const layers = r.podsetSliceRequiredTopologyConstraints;
  if (ok('podsetSliceRequiredTopologyConstraints') && layers !== undefined) {
    const f = 'podsetSliceRequiredTopologyConstraints';
    if (layers.length < 1 || layers.length > MAX_SLICE_LAYERS) {
      n.report(f, `${n.show(f)} must have 1 to ${MAX_SLICE_LAYERS} layers, got ${layers.length}`);
    }
    let prev: number | undefined;
    layers.forEach((layer, i) => {
      const topology: unknown = layer.topology;
      const size: unknown = layer.size;
      if (typeof topology !== 'string' || topology === '') {
        n.report(f, `${n.layer(i)} needs a "topology": the level key of this layer`, `[${i}].topology`);
      } else {
        const problem = labelKeyProblem(topology);
        if (problem) n.report(f, `${n.layer(i)}: topology ${problem}`, `[${i}].topology`);
      }
      if (size === undefined) {
        n.report(f, `${n.layer(i)} needs a "size": the number of pods in each slice of this layer`, `[${i}].size`);
        prev = undefined;
        return;
      }
      if (!isWhole(size) || size < 1) {
        n.report(f, `${n.layer(i)}: size must be a whole number of at least 1`, `[${i}].size`);
        prev = undefined;
        return;
      }
      if (i === 0 && count % size !== 0) {
        n.report(f, `${n.layer(i)}: size ${size} must evenly divide the PodSet count ${count}`, `[${i}].size`);
      }
      if (i > 0 && prev !== undefined && prev % size !== 0) {
        n.report(f, `${n.layer(i)}: size ${size} must evenly divide the previous layer's size ${prev}`, `[${i}].size`);
      }
      prev = size;
    });
  }

  if (n.has('podSetGroupName')) {
    if (r.podSetGroupName === '') n.report('podSetGroupName', `${n.show('podSetGroupName')} must not be empty`);
    if (!n.has('required') && !n.has('preferred')) {
      n.report('podSetGroupName', `${n.show('podSetGroupName')} needs ${n.name('required')} or ${n.name('preferred')} on the same PodSet`);
    }
  }

  // 0 is allowed: a JobSet replicatedJob may have 0 replicas (the ungater then ranks greedily).
  if (ok('subGroupCount') && (!isWhole(r.subGroupCount) || r.subGroupCount < 0)) {
    n.report('subGroupCount', `${n.show('subGroupCount')} must be a whole number of at least 0`);
  }
  if (n.has('subGroupIndexLabel') !== n.has('subGroupCount')) {
    const f = n.has('subGroupIndexLabel') ? 'subGroupIndexLabel' : 'subGroupCount';
    n.report(f, `${n.show(f)}: ${n.name('subGroupIndexLabel')} and ${n.name('subGroupCount')} must be set together`);
  }
}

// ---------------------------------------------------------------------------------------
// Front-end 1: pod template annotations
// ---------------------------------------------------------------------------------------

const A = KueueAnnotation;

const ANNOTATION_OF: Partial<Record<ReqField, string>> = {
  required: A.PodSetRequiredTopology,
  preferred: A.PodSetPreferredTopology,
  unconstrained: A.PodSetUnconstrainedTopology,
  podSetSliceRequiredTopology: A.PodSetSliceRequiredTopology,
  podSetSliceSize: A.PodSetSliceSize,
  podsetSliceRequiredTopologyConstraints: A.PodSetSliceRequiredTopologyConstraints,
  podSetGroupName: A.PodSetGroupName,
};

/**
 * The annotations that ask for TAS. `pod-index-offset` is not one of them: it only shifts
 * ranks for the TopologyUngater and stays on the template, so it is validated but creates
 * no request on its own.
 */
const TAS_ANNOTATIONS: readonly string[] = Object.values(ANNOTATION_OF);

/** Fields that come from TopologyRequestOptions rather than annotations, by name. */
const OPTION_NAME: Partial<Record<ReqField, string>> = {
  podIndexLabel: 'pod index label',
  subGroupIndexLabel: 'sub-group index label',
  subGroupCount: 'sub-group count',
};

const DECIMAL_RE = /^[+-]?[0-9]+$/;

function parseDecimal(s: string): number | undefined {
  if (!DECIMAL_RE.test(s)) return undefined;
  const v = Number(s);
  return Number.isSafeInteger(v) ? v : undefined;
}

/**
 * The PodSetTopologyRequest that a pod template's annotations ask for.
 *
 * A request is produced when any TAS annotation is present, or when `opts` carries an
 * index label (an implied-TAS PodSet that still has ranks: only the index fields are
 * set). Any error means no request. `where` names the pod template; when `where.field`
 * is set it is the template's path and annotation fields are appended to it
 * (`spec.template.metadata.annotations["kueue.x-k8s.io/podset-slice-size"]`).
 * Without a `podset-slice-size`, `opts.defaultSliceSize` (JobSet: parallelism) is used.
 */
export function topologyRequestFromAnnotations(
  annotations: StringMap | undefined,
  count: number,
  opts: TopologyRequestOptions,
  where: Where,
): { request?: PodSetTopologyRequest; errors: InputError[] } {
  const a = annotations ?? {};
  const errors: InputError[] = [];
  const has = (key: string) => Object.prototype.hasOwnProperty.call(a, key);
  const fieldOf = (key: string) => joinField(where.field, `metadata.annotations${fieldSegment(key)}`);
  const fail = (key: string, detail: string) => errors.push(new InputError({ ...where, field: fieldOf(key) }, detail));
  const show = (key: string) => `${key}=${JSON.stringify(a[key])}`;
  const invalid = new Set<ReqField>();

  const offset = a[A.PodIndexOffset];
  if (has(A.PodIndexOffset) && (!/^[0-9]+$/.test(offset) || !Number.isSafeInteger(Number(offset)))) {
    fail(A.PodIndexOffset, `${show(A.PodIndexOffset)} must be a non-negative whole number`);
  }

  const tas = TAS_ANNOTATIONS.some(has);
  if (!tas && opts.podIndexLabel === undefined && opts.subGroupIndexLabel === undefined) return { errors };

  const r: PodSetTopologyRequest = {};
  if (has(A.PodSetRequiredTopology)) r.required = a[A.PodSetRequiredTopology];
  if (has(A.PodSetPreferredTopology)) r.preferred = a[A.PodSetPreferredTopology];
  if (has(A.PodSetUnconstrainedTopology)) {
    const v = a[A.PodSetUnconstrainedTopology];
    if (v === 'true' || v === 'false') r.unconstrained = v === 'true';
    else {
      invalid.add('unconstrained');
      fail(A.PodSetUnconstrainedTopology, `${show(A.PodSetUnconstrainedTopology)} must be "true" or "false"`);
    }
  }
  if (has(A.PodSetSliceRequiredTopology)) r.podSetSliceRequiredTopology = a[A.PodSetSliceRequiredTopology];
  if (has(A.PodSetSliceSize)) {
    const v = parseDecimal(a[A.PodSetSliceSize]);
    if (v === undefined) {
      invalid.add('podSetSliceSize');
      fail(A.PodSetSliceSize, `${show(A.PodSetSliceSize)} must be a whole number of at least 1`);
    } else r.podSetSliceSize = v;
  } else if (r.podSetSliceRequiredTopology !== undefined && opts.defaultSliceSize !== undefined) {
    r.podSetSliceSize = opts.defaultSliceSize;
  }
  if (has(A.PodSetSliceRequiredTopologyConstraints)) {
    const layers = parseSliceConstraints(a[A.PodSetSliceRequiredTopologyConstraints]);
    if (typeof layers === 'string') {
      invalid.add('podsetSliceRequiredTopologyConstraints');
      fail(A.PodSetSliceRequiredTopologyConstraints, `${show(A.PodSetSliceRequiredTopologyConstraints)}: ${layers}`);
    } else r.podsetSliceRequiredTopologyConstraints = layers;
  }
  if (has(A.PodSetGroupName)) r.podSetGroupName = a[A.PodSetGroupName];
  if (opts.podIndexLabel !== undefined) r.podIndexLabel = opts.podIndexLabel;
  if (opts.subGroupIndexLabel !== undefined) r.subGroupIndexLabel = opts.subGroupIndexLabel;
  if (opts.subGroupCount !== undefined) r.subGroupCount = opts.subGroupCount;

  const rawLayers = layerTexts(a[A.PodSetSliceRequiredTopologyConstraints]);
  checkRequest(r, count, {
    has: (f) => {
      const key = ANNOTATION_OF[f];
      return key !== undefined ? has(key) : r[f] !== undefined;
    },
    name: (f) => ANNOTATION_OF[f] ?? OPTION_NAME[f] ?? f,
    show: (f) => {
      const key = ANNOTATION_OF[f];
      return key !== undefined ? show(key) : `${OPTION_NAME[f] ?? f} ${JSON.stringify(r[f])}`;
    },
    layer: (i) => `${A.PodSetSliceRequiredTopologyConstraints} entry ${i + 1} ${rawLayers[i] ?? ''}`.trimEnd(),
    invalid,
    report: (f, detail) => {
      const key = ANNOTATION_OF[f];
      // Option-borne fields are set by the integration, not the user: no annotation to name.
      if (key !== undefined) fail(key, detail);
      else errors.push(new InputError(where, detail));
    },
  });

  return errors.length === 0 ? { request: r, errors } : { errors };
}

/**
 * `podset-slice-required-topology-constraints`: a JSON array of `{"topology", "size"}`
 * where size is a number or a decimal string. Returns the layers, or why they do not parse.
 * Entries with a missing or bad topology/size are kept (size NaN when unparseable) so the
 * shared rules report them one by one.
 */
function parseSliceConstraints(text: string): SliceLayer[] | string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (e) {
    return `not valid JSON (${(e as Error).message}); expected e.g. [{"topology": "cloud.provider.com/block", "size": "32"}]`;
  }
  if (!Array.isArray(parsed)) {
    return 'must be a JSON array of {"topology": "<level key>", "size": "<pods per slice>"} entries';
  }
  const layers: SliceLayer[] = [];
  for (let i = 0; i < parsed.length; i++) {
    const e: unknown = parsed[i];
    if (typeof e !== 'object' || e === null || Array.isArray(e)) {
      return `entry ${i + 1} ${JSON.stringify(e)} must be an object {"topology": "<level key>", "size": "<pods per slice>"}`;
    }
    const { topology, size } = e as { topology?: unknown; size?: unknown };
    if (topology !== undefined && typeof topology !== 'string') {
      return `entry ${i + 1} ${JSON.stringify(e)}: topology must be a string`;
    }
    let n: number | undefined;
    if (typeof size === 'number') n = size;
    else if (typeof size === 'string') n = parseDecimal(size) ?? Number.NaN;
    else if (size !== undefined) return `entry ${i + 1} ${JSON.stringify(e)}: size must be a number or a string of digits`;
    layers.push({ topology: topology as string, size: n as number });
  }
  return layers;
}

/** Each constraint entry as the user wrote it (re-serialized), for messages. */
function layerTexts(text: string | undefined): string[] {
  if (text === undefined) return [];
  try {
    const parsed: unknown = JSON.parse(text);
    return Array.isArray(parsed) ? parsed.map((e) => JSON.stringify(e)) : [];
  } catch {
    return [];
  }
}

// ---------------------------------------------------------------------------------------
// Front-end 2: Workload PodSets
// ---------------------------------------------------------------------------------------

/**
 * The per-PodSet and cross-PodSet rules on `spec.podSets[].topologyRequest`. `where`
 * names the Workload (or the object the PodSets were built from); errors carry the field
 * `spec.podSets[i].topologyRequest...` appended to `where.field`, and name the PodSet.
 *
 * Cross-PodSet rules (KEP-2724 "Validation"):
 *   1. if one PodSet sets required or preferred, every PodSet sets one of them;
 *   2. a podSetGroupName names exactly two PodSets;
 *   3. the PodSets of a group request the same required / preferred level.
 */
export function validatePodSetTopologyRequests(podSets: PodSet[], where: Where): InputError[] {
  const errors: InputError[] = [];
  const base = (i: number) => joinField(where.field, `spec.podSets[${i}].topologyRequest`);
  const add = (i: number, sub: string, detail: string) =>
    errors.push(new InputError({ ...where, field: joinField(base(i), sub) }, `podSet ${JSON.stringify(podSets[i].name)}: ${detail}`));

  podSets.forEach((ps, i) => {
    const r = ps.topologyRequest;
    if (r === undefined) return;
    const show = (f: ReqField) => `${f} ${JSON.stringify(r[f])}`;
    checkRequest(r, ps.count, {
      has: (f) => r[f] !== undefined && (f !== 'unconstrained' || r.unconstrained === true),
      name: (f) => f,
      show,
      layer: (i2) => `podsetSliceRequiredTopologyConstraints[${i2}] ${JSON.stringify(r.podsetSliceRequiredTopologyConstraints?.[i2])}`,
      invalid: new Set(),
      report: (f, detail, sub) => add(i, `${f}${sub ?? ''}`, detail),
    });
  });

  const level = (ps: PodSet) => {
    const r = ps.topologyRequest;
    if (r?.required !== undefined) return `required ${JSON.stringify(r.required)}`;
    if (r?.preferred !== undefined) return `preferred ${JSON.stringify(r.preferred)}`;
    return undefined;
  };
  const first = podSets.findIndex((ps) => level(ps) !== undefined);
  if (first >= 0) {
    podSets.forEach((ps, i) => {
      if (level(ps) !== undefined) return;
      add(
        i,
        '',
        `sets neither required nor preferred topology, but podSet ${JSON.stringify(podSets[first].name)} does ` +
          `(${level(podSets[first])}): when one PodSet sets required or preferred, every PodSet must set one of them`,
      );
    });
  }

  const groups = new Map<string, number[]>();
  podSets.forEach((ps, i) => {
    const g = ps.topologyRequest?.podSetGroupName;
    if (g === undefined || g === '') return;
    const members = groups.get(g) ?? [];
    members.push(i);
    groups.set(g, members);
  });
  for (const [g, members] of groups) {
    const names = members.map((i) => JSON.stringify(podSets[i].name)).join(', ');
    if (members.length !== 2) {
      add(
        members[0],
        'podSetGroupName',
        `podSetGroupName ${JSON.stringify(g)} must name exactly two PodSets (a leader and its workers), found ${members.length}: ${names}`,
      );
    }
    // A member without required/preferred is already reported above (and per PodSet).
    const lead = podSets[members[0]];
    for (const i of members.slice(1)) {
      const mine = level(podSets[i]);
      const theirs = level(lead);
      if (mine === undefined || theirs === undefined || mine === theirs) continue;
      add(
        i,
        podSets[i].topologyRequest!.required !== undefined ? 'required' : 'preferred',
        `${mine} differs from podSet ${JSON.stringify(lead.name)} (${theirs}) in podSetGroupName ${JSON.stringify(g)}: ` +
          'the PodSets of a group must request the same topology',
      );
    }
  }
  return errors;
}

// ---------------------------------------------------------------------------------------
// Against the Topology's levels (used at placement time)
// ---------------------------------------------------------------------------------------

/** Whether the request constrains placement: required, preferred, unconstrained: true, or slices. */
export function hasTopologyConstraint(r: PodSetTopologyRequest | undefined): boolean {
  if (r === undefined) return false;
  return (
    r.required !== undefined ||
    r.preferred !== undefined ||
    r.unconstrained === true ||
    r.podSetSliceRequiredTopology !== undefined ||
    (r.podsetSliceRequiredTopologyConstraints?.length ?? 0) > 0
  );
}
