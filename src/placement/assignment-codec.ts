// Topology assignment codecs: the internal (levels, domains) form to and from the
// Workload's v1beta2 slices and the v1beta1 domain list (spec kueue-tas §15, KEP-2724
// "Topology assignment representation"). Pure: no I/O, no clock, no randomness.
//
// Prefixes and suffixes are computed on UTF-16 code units. Label values are ASCII, where
// code units are bytes, so this is Kueue's byte rule; for other strings the cut backs
// off rather than split a surrogate pair, so every emitted string stays well formed.

import { InputError, type Where } from '../api/errors.ts';
import { HOSTNAME_LABEL } from '../api/keys.ts';
import type {
  TopologyAssignment,
  TopologyAssignmentSlice,
  TopologyAssignmentSliceLevelValues,
  TopologyAssignmentV1beta1,
} from '../api/objects.ts';
import type { Assignment, DomainAssignment } from './assignment.ts';

/** `slices` MaxItems in the v1beta2 API. */
export const MAX_SLICES = 1000;
/** `roots` and `podCounts.individual` MaxItems: runs longer than this are chunked. */
export const MAX_DOMAINS_PER_SLICE = 100_000;
/** `valuesPerLevel` MaxItems. */
export const MAX_LEVELS = 16;

export interface EncodeV1beta2Options {
  /**
   * Feature gate `TASAssignmentsEncodingByHostnamePrefix` (default on). Off: every
   * assignment is encoded as a single run of domains (chunked at MAX_DOMAINS_PER_SLICE).
   */
  encodingByHostnamePrefix?: boolean;
}

// ---------------------------------------------------------------------------------------
// v1beta2 encoding
// ---------------------------------------------------------------------------------------

// Encoder choice:
//   1. an empty assignment has zero slices; with the gate off, or levels other than
//      [hostname], or a single domain, encode everything as one run;
//   2. otherwise split the domains into runs by hostname prefix (hostnamePrefixRuns);
//   3. if that gave more than one slice and the assignment fits in one slice, also
//      encode it as one run and keep the smaller JSON (tie: the prefix form).
// Every run is chunked at MAX_DOMAINS_PER_SLICE; the domain order never changes.
export function encodeV1beta2(a: Assignment, options: EncodeV1beta2Options = {}): TopologyAssignment {
  const n = a.domains.length;
  if (n === 0) return { levels: [...a.levels], slices: [] };
  const gate = options.encodingByHostnamePrefix ?? true;
  if (!gate || n === 1 || !isHostnameOnly(a.levels)) return encodeRuns(a, [0, n]);
  const byPrefix = encodeByHostnamePrefix(a);
  if (byPrefix.slices.length > 1 && n <= MAX_DOMAINS_PER_SLICE) {
    const single = encodeRuns(a, [0, n]);
    if (encodedSize(single) < encodedSize(byPrefix)) return single;
  }
  return byPrefix;
}

/**
 * The hostname-prefix form alone (phase 2 of encodeV1beta2, without the size comparison
 * against one slice). Meant for hostname-lowest assignments; any other levels give one run.
 */
export function encodeByHostnamePrefix(a: Assignment): TopologyAssignment {
  const n = a.domains.length;
  if (n <= 1 || !isHostnameOnly(a.levels)) return encodeRuns(a, n === 0 ? [0] : [0, n]);
  return encodeRuns(a, hostnamePrefixRuns(a.domains));
}

function isHostnameOnly(levels: readonly string[]): boolean {
  return levels.length === 1 && levels[0] === HOSTNAME_LABEL;
}

// Hostname-prefix runs, O(n·m·k) with one Map (k = dashes per hostname):
//   1. index: intern every `-`-terminated prefix of every hostname, counting the
//      hostnames it occurs in; the prefixes a hostname shares with the previous one are
//      found with one native startsWith and copied, so sorted input rarely hits the Map;
//   2. shared depth: the prefixes occurring in ≥ 2 hostnames are a leading range of a
//      hostname's prefixes (a prefix of a shared prefix is shared), so a hostname's key
//      at depth d is its min(d, shared)-th prefix, or none;
//   3. from the deepest depth up, cut the domain list where consecutive keys differ and
//      take the first depth whose runs fit in MAX_SLICES slices; if none fits, one run.
// Returns run boundaries: [0, b1, ..., n].
function hostnamePrefixRuns(domains: readonly DomainAssignment[]): number[] {
  const n = domains.length;
  const idOf = new Map<string, number>();
  const prefixOf: string[] = [];
  const hostnamesWith: number[] = [];
  let ids = new Int32Array(4 * n + 16);
  let used = 0;
  const add = (id: number): void => {
    if (used === ids.length) {
      const grown = new Int32Array(2 * used);
      grown.set(ids);
      ids = grown;
    }
    ids[used++] = id;
    hostnamesWith[id]++;
  };
  const first = new Int32Array(n + 1);
  for (let i = 0; i < n; i++) {
    first[i] = used;
    const h = domains[i].values[0];
    let from = 0;
    if (i > 0) {
      for (let k = first[i] - 1; k >= first[i - 1]; k--) {
        if (!h.startsWith(prefixOf[ids[k]])) continue;
        for (let c = first[i - 1]; c <= k; c++) add(ids[c]);
        from = prefixOf[ids[k]].length;
        break;
      }
    }
    for (let j = h.indexOf('-', from); j !== -1; j = h.indexOf('-', j + 1)) {
      const p = h.slice(0, j + 1);
      let id = idOf.get(p);
      if (id === undefined) {
        id = prefixOf.length;
        idOf.set(p, id);
        prefixOf.push(p);
        hostnamesWith.push(0);
      }
      add(id);
    }
  }
  first[n] = used;

  const shared = new Int32Array(n);
  let maxDepth = 0;
  for (let i = 0; i < n; i++) {
    let k = 0;
    while (first[i] + k < first[i + 1] && hostnamesWith[ids[first[i] + k]] >= 2) k++;
    shared[i] = k;
    if (k > maxDepth) maxDepth = k;
  }

  const keyAt = (i: number, depth: number): number => {
    const k = Math.min(depth, shared[i]);
    return k === 0 ? -1 : ids[first[i] + k - 1];
  };
  for (let depth = maxDepth; depth >= 1; depth--) {
    const bounds = [0];
    let slices = 0;
    for (let i = 1; i <= n && slices <= MAX_SLICES; i++) {
      if (i === n || keyAt(i, depth) !== keyAt(i - 1, depth)) {
        slices += Math.ceil((i - bounds[bounds.length - 1]) / MAX_DOMAINS_PER_SLICE);
        bounds.push(i);
      }
    }
    if (slices <= MAX_SLICES) return bounds;
  }
  return [0, n];
}

/** Encodes runs given by boundaries [0, b1, ..., n], chunking each at MAX_DOMAINS_PER_SLICE. */
function encodeRuns(a: Assignment, bounds: readonly number[]): TopologyAssignment {
  const slices: TopologyAssignmentSlice[] = [];
  for (let r = 0; r + 1 < bounds.length; r++) {
    for (let s = bounds[r]; s < bounds[r + 1]; s += MAX_DOMAINS_PER_SLICE) {
      slices.push(encodeSlice(a.domains, s, Math.min(bounds[r + 1], s + MAX_DOMAINS_PER_SLICE), a.levels.length));
    }
  }
  return { levels: [...a.levels], slices };
}

function encodeSlice(domains: readonly DomainAssignment[], start: number, end: number, levelCount: number): TopologyAssignmentSlice {
  const valuesPerLevel: TopologyAssignmentSliceLevelValues[] = [];
  for (let l = 0; l < levelCount; l++) valuesPerLevel.push(encodeLevel(domains, start, end, l));
  const count = domains[start].count;
  let same = true;
  for (let i = start + 1; i < end && same; i++) same = domains[i].count === count;
  const podCounts = same ? { universal: count } : { individual: domains.slice(start, end).map((d) => d.count) };
  return { domainCount: end - start, valuesPerLevel, podCounts };
}

// One level of a slice: universal when every domain has the same value; otherwise the
// longest common prefix and suffix, the prefix shortened so the two do not overlap
// within the shortest value, empty ones omitted, and the roots in between.
function encodeLevel(domains: readonly DomainAssignment[], start: number, end: number, level: number): TopologyAssignmentSliceLevelValues {
  const v0 = domains[start].values[level];
  let prefix = v0.length;
  let suffix = v0.length;
  let shortest = v0.length;
  let same = true;
  let commonPrefix = v0;
  let commonSuffix = v0;
  for (let i = start + 1; i < end; i++) {
    const v = domains[i].values[level];
    if (v === v0) continue;
    same = false;
    if (v.length < shortest) shortest = v.length;
    if (!v.startsWith(commonPrefix)) {
      prefix = commonPrefixLength(v0, v, prefix);
      commonPrefix = v0.slice(0, prefix);
    }
    if (!v.endsWith(commonSuffix)) {
      suffix = commonSuffixLength(v0, v, suffix);
      commonSuffix = v0.slice(v0.length - suffix);
    }
  }
  if (same) return { universal: v0 };

  if (suffix > 0 && isLowSurrogate(v0.charCodeAt(v0.length - suffix))) suffix--;
  if (prefix + suffix > shortest) prefix = shortest - suffix;
  if (prefix > 0 && isHighSurrogate(v0.charCodeAt(prefix - 1))) prefix--;

  const roots = new Array<string>(end - start);
  for (let i = start; i < end; i++) {
    const v = domains[i].values[level];
    roots[i - start] = v.slice(prefix, v.length - suffix);
  }
  return {
    individual: {
      ...(prefix > 0 ? { prefix: v0.slice(0, prefix) } : {}),
      ...(suffix > 0 ? { suffix: v0.slice(v0.length - suffix) } : {}),
      roots,
    },
  };
}

function commonPrefixLength(a: string, b: string, limit: number): number {
  const max = Math.min(limit, b.length);
  let k = 0;
  while (k < max && a.charCodeAt(k) === b.charCodeAt(k)) k++;
  return k;
}

function commonSuffixLength(a: string, b: string, limit: number): number {
  const max = Math.min(limit, b.length);
  let k = 0;
  while (k < max && a.charCodeAt(a.length - 1 - k) === b.charCodeAt(b.length - 1 - k)) k++;
  return k;
}

function isHighSurrogate(c: number): boolean {
  return c >= 0xd800 && c <= 0xdbff;
}

function isLowSurrogate(c: number): boolean {
  return c >= 0xdc00 && c <= 0xdfff;
}

// ---------------------------------------------------------------------------------------
// v1beta2 decoding
// ---------------------------------------------------------------------------------------

/**
 * Expands the slices in order into one domain per entry. Malformed input throws an
 * InputError naming the field (e.g. `topologyAssignment.slices[2].podCounts.individual`).
 * `where.field`, if given, replaces the `topologyAssignment` root of the field paths.
 */
export function decodeV1beta2(t: TopologyAssignment, where: Where = {}): Assignment {
  const root = where.field ?? 'topologyAssignment';
  const fail = (field: string, detail: string): never => {
    throw new InputError({ ...where, field: `${root}.${field}` }, detail);
  };
  const levels = stringList(t.levels, 'levels', fail);
  if (levels.length > MAX_LEVELS) fail('levels', `has ${levels.length} entries; at most ${MAX_LEVELS} are accepted`);
  if (!Array.isArray(t.slices)) fail('slices', 'must be a list of slices');
  if (t.slices.length > MAX_SLICES) {
    fail('slices', `has ${t.slices.length} slices; at most ${MAX_SLICES} are accepted`);
  }

  const domains: DomainAssignment[] = [];
  t.slices.forEach((slice, si) => {
    const at = `slices[${si}]`;
    const n = slice.domainCount;
    if (!Number.isInteger(n) || n < 1) fail(`${at}.domainCount`, `is ${String(n)}; an integer >= 1 is required`);
    const perLevel = slice.valuesPerLevel;
    if (!Array.isArray(perLevel) || perLevel.length !== levels.length || perLevel.length === 0) {
      const got = Array.isArray(perLevel) ? `${perLevel.length} entries` : 'missing';
      fail(`${at}.valuesPerLevel`, `is ${got}; one entry per level (${levels.length}, at least 1) is required`);
    }
    const valueAt = perLevel.map((lv, l) => levelValues(lv, n, `${at}.valuesPerLevel[${l}]`, fail));
    const countAt = podCounts(slice.podCounts, n, `${at}.podCounts`, fail);
    for (let i = 0; i < n; i++) {
      domains.push({ values: valueAt.map((f) => f(i)), count: countAt(i) });
    }
  });
  return { levels, domains };
}

type Fail = (field: string, detail: string) => never;

function levelValues(lv: TopologyAssignmentSliceLevelValues, n: number, at: string, fail: Fail): (i: number) => string {
  const hasU = lv?.universal !== undefined && lv.universal !== null;
  const hasI = lv?.individual !== undefined && lv.individual !== null;
  if (hasU === hasI) {
    fail(at, `${hasU ? 'has both' : 'has neither'} universal and individual; exactly one must be set`);
  }
  if (hasU) {
    const u = lv.universal;
    if (typeof u !== 'string') fail(`${at}.universal`, `is ${typeof u}; a string is required`);
    return () => u!;
  }
  const { prefix = '', suffix = '', roots } = lv.individual!;
  for (const [name, v] of [
    ['prefix', lv.individual!.prefix],
    ['suffix', lv.individual!.suffix],
  ] as const) {
    if (v === undefined) continue;
    if (typeof v !== 'string' || v === '') {
      fail(`${at}.individual.${name}`, `is ${JSON.stringify(v)}; omit it or give a non-empty string`);
    }
  }
  if (!Array.isArray(roots)) fail(`${at}.individual.roots`, 'is missing; a list of strings is required');
  if (roots.length !== n) {
    fail(`${at}.individual.roots`, `has ${roots.length} entries; it must have domainCount (${n})`);
  }
  roots.forEach((r, i) => {
    if (typeof r !== 'string') {
      fail(`${at}.individual.roots[${i}]`, `is ${typeof r} ${String(r)}; a string is required (quote numeric roots)`);
    }
  });
  return (i) => prefix + roots[i] + suffix;
}

function podCounts(pc: TopologyAssignmentSlice['podCounts'], n: number, at: string, fail: Fail): (i: number) => number {
  const hasU = pc?.universal !== undefined && pc.universal !== null;
  const hasI = pc?.individual !== undefined && pc.individual !== null;
  if (hasU === hasI) {
    fail(at, `${hasU ? 'has both' : 'has neither'} universal and individual; exactly one must be set`);
  }
  if (hasU) {
    const u = pc.universal!;
    if (!Number.isInteger(u) || u < 1) fail(`${at}.universal`, `is ${String(u)}; an integer >= 1 is required`);
    return () => u;
  }
  const counts = pc.individual!;
  if (!Array.isArray(counts)) fail(`${at}.individual`, 'must be a list of integers >= 1');
  if (counts.length !== n) fail(`${at}.individual`, `has ${counts.length} entries; it must have domainCount (${n})`);
  counts.forEach((c, i) => {
    if (!Number.isInteger(c) || c < 1) fail(`${at}.individual[${i}]`, `is ${String(c)}; an integer >= 1 is required`);
  });
  return (i) => counts[i];
}

function stringList(v: unknown, field: string, fail: Fail): string[] {
  if (!Array.isArray(v)) return fail(field, 'must be a list of node label keys');
  v.forEach((s, i) => {
    if (typeof s !== 'string') fail(`${field}[${i}]`, `is ${typeof s}; a string is required`);
  });
  return [...(v as string[])];
}

// ---------------------------------------------------------------------------------------
// v1beta1
// ---------------------------------------------------------------------------------------

export function encodeV1beta1(a: Assignment): TopologyAssignmentV1beta1 {
  return { levels: [...a.levels], domains: a.domains.map((d) => ({ values: [...d.values], count: d.count })) };
}

/** Checks every domain has one value per level and a count >= 1; errors name the field. */
export function decodeV1beta1(t: TopologyAssignmentV1beta1, where: Where = {}): Assignment {
  const root = where.field ?? 'topologyAssignment';
  const fail = (field: string, detail: string): never => {
    throw new InputError({ ...where, field: `${root}.${field}` }, detail);
  };
  const levels = stringList(t.levels, 'levels', fail);
  if (!Array.isArray(t.domains)) fail('domains', 'must be a list of domains');
  const domains = t.domains.map((d, i) => {
    const values = stringList(d?.values, `domains[${i}].values`, fail);
    if (values.length !== levels.length) {
      fail(`domains[${i}].values`, `has ${values.length} entries; one per level (${levels.length}) is required`);
    }
    if (!Number.isInteger(d.count) || d.count < 1) {
      fail(`domains[${i}].count`, `is ${String(d.count)}; an integer >= 1 is required`);
    }
    return { values, count: d.count };
  });
  return { levels, domains };
}

// ---------------------------------------------------------------------------------------
// Size
// ---------------------------------------------------------------------------------------

/** Byte length of JSON.stringify(t) in UTF-8: the figure the etcd object limit applies to. */
export function encodedSize(t: TopologyAssignment | TopologyAssignmentV1beta1): number {
  return utf8Length(JSON.stringify(t));
}

function utf8Length(s: string): number {
  if (!/[\u0080-\uffff]/.test(s)) return s.length;
  let bytes = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) bytes += 1;
    else if (c < 0x800) bytes += 2;
    else if (isHighSurrogate(c) && i + 1 < s.length && isLowSurrogate(s.charCodeAt(i + 1))) {
      bytes += 4;
      i++;
    } else bytes += 3;
  }
  return bytes;
}
