import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { HOSTNAME_LABEL } from '../api/keys.ts';
import type { TopologyAssignment, TopologyAssignmentV1beta1 } from '../api/objects.ts';
import type { Assignment } from './assignment.ts';
import {
  MAX_DOMAINS_PER_SLICE,
  decodeV1beta1,
  decodeV1beta2,
  encodeByHostnamePrefix,
  encodeV1beta1,
  encodeV1beta2,
  encodedSize,
} from './assignment-codec.ts';

// --- fixture builders ---------------------------------------------------------------

class AssignmentBuilder {
  private readonly a: Assignment;
  constructor(levels: string[]) {
    this.a = { levels, domains: [] };
  }
  domain(count: number, ...values: string[]): this {
    this.a.domains.push({ values, count });
    return this;
  }
  build(): Assignment {
    return this.a;
  }
}
const assignment = (...levels: string[]) => new AssignmentBuilder(levels);

/** Hostname-lowest assignment, one pod per hostname unless counts are given. */
function hosts(names: string[], counts?: number[]): Assignment {
  return { levels: [HOSTNAME_LABEL], domains: names.map((h, i) => ({ values: [h], count: counts?.[i] ?? 1 })) };
}

const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => String(from + i));
const hostnamesOf = (t: TopologyAssignment) => decodeV1beta2(t).domains.map((d) => d.values[0]);
const sliceSizes = (t: TopologyAssignment) => t.slices.map((s) => s.domainCount);

/** Deterministic generator for realistic node names (tests stay reproducible). */
function lcg(seed: number): () => number {
  let x = seed >>> 0;
  return () => {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
    return x;
  };
}

// --- seed examples (KEP-2724 "Topology assignment representation") --------------------

test('seed v1beta2 example: block universal, rack individual with prefix "rack-", individual pod counts', () => {
  const a = assignment('cloud.provider.com/topology-block', 'cloud.provider.com/topology-rack')
    .domain(4, 'block-1', 'rack-1')
    .domain(2, 'block-1', 'rack-2')
    .build();
  const want: TopologyAssignment = {
    levels: ['cloud.provider.com/topology-block', 'cloud.provider.com/topology-rack'],
    slices: [
      {
        domainCount: 2,
        valuesPerLevel: [{ universal: 'block-1' }, { individual: { prefix: 'rack-', roots: ['1', '2'] } }],
        podCounts: { individual: [4, 2] },
      },
    ],
  };
  assert.deepEqual(encodeV1beta2(a), want);
  assert.deepEqual(decodeV1beta2(want), a);
});

test('seed v1beta2 pools example: hostname-prefix slicing gives one slice per pool, in the seed shape', () => {
  const a = hosts([...range(1, 5).map((i) => `pool-1-node-${i}`), ...range(1, 7).map((i) => `pool-2-node-${i}`)]);
  const seed: TopologyAssignment = {
    levels: ['kubernetes.io/hostname'],
    slices: [
      { domainCount: 5, valuesPerLevel: [{ individual: { prefix: 'pool-1-node-', roots: range(1, 5) } }], podCounts: { universal: 1 } },
      { domainCount: 7, valuesPerLevel: [{ individual: { prefix: 'pool-2-node-', roots: range(1, 7) } }], podCounts: { universal: 1 } },
    ],
  };
  assert.deepEqual(encodeByHostnamePrefix(a), seed);
  assert.deepEqual(decodeV1beta2(seed), a);
});

test('smaller JSON wins: at 12 hosts the single slice (290 B) beats the seed two-slice form (328 B)', () => {
  // The seed shows the format, not the encoder's choice: per spec §15 the encoder keeps
  // the smaller of the prefix form and the single slice, and at this size one slice wins.
  const a = hosts([...range(1, 5).map((i) => `pool-1-node-${i}`), ...range(1, 7).map((i) => `pool-2-node-${i}`)]);
  const got = encodeV1beta2(a);
  assert.equal(encodedSize(encodeByHostnamePrefix(a)), 328);
  assert.equal(encodedSize(got), 290);
  assert.deepEqual(got.slices, [
    {
      domainCount: 12,
      valuesPerLevel: [
        { individual: { prefix: 'pool-', roots: [...range(1, 5).map((i) => `1-node-${i}`), ...range(1, 7).map((i) => `2-node-${i}`)] } },
      ],
      podCounts: { universal: 1 },
    },
  ]);
});

test('smaller JSON wins: with larger pools the per-pool slices are kept', () => {
  const a = hosts([...range(1, 50).map((i) => `pool-1-node-${i}`), ...range(1, 70).map((i) => `pool-2-node-${i}`)]);
  const got = encodeV1beta2(a);
  assert.deepEqual(got, encodeByHostnamePrefix(a));
  assert.deepEqual(sliceSizes(got), [50, 70]);
  assert.deepEqual(got.slices[1].valuesPerLevel, [{ individual: { prefix: 'pool-2-node-', roots: range(1, 70) } }]);
  assert.ok(encodedSize(got) < encodedSize(encodeV1beta2(a, { encodingByHostnamePrefix: false })));
});

test('seed v1beta1 example encodes to the domain list and round-trips', () => {
  const a = assignment('cloud.provider.com/topology-block', 'cloud.provider.com/topology-rack')
    .domain(4, 'block-1', 'rack-1')
    .domain(2, 'block-1', 'rack-2')
    .build();
  const want: TopologyAssignmentV1beta1 = {
    levels: ['cloud.provider.com/topology-block', 'cloud.provider.com/topology-rack'],
    domains: [
      { values: ['block-1', 'rack-1'], count: 4 },
      { values: ['block-1', 'rack-2'], count: 2 },
    ],
  };
  assert.deepEqual(encodeV1beta1(a), want);
  assert.deepEqual(decodeV1beta1(want), a);
});

// --- per-level values and pod counts ---------------------------------------------------

test('universal per level when every domain has the same value, individual otherwise', () => {
  const t = encodeV1beta2(assignment('zone', 'block', 'rack').domain(3, 'z1', 'b1', 'r1').domain(3, 'z1', 'b1', 'r2').build());
  assert.deepEqual(t.slices[0].valuesPerLevel, [
    { universal: 'z1' },
    { universal: 'b1' },
    { individual: { prefix: 'r', roots: ['1', '2'] } },
  ]);
  assert.deepEqual(t.slices[0].podCounts, { universal: 3 });
});

test('pod counts: universal when all equal, individual (one per domain) otherwise', () => {
  assert.deepEqual(encodeV1beta2(hosts(['a', 'b'], [2, 2])).slices[0].podCounts, { universal: 2 });
  assert.deepEqual(encodeV1beta2(hosts(['a', 'b', 'c'], [2, 1, 2])).slices[0].podCounts, { individual: [2, 1, 2] });
});

test('prefix and suffix are the longest common ones; empty ones are omitted', () => {
  const level = (values: string[]) =>
    encodeV1beta2({ levels: ['rack'], domains: values.map((v) => ({ values: [v], count: 1 })) }).slices[0].valuesPerLevel[0];
  assert.deepEqual(level(['a-1-x', 'a-22-x', 'a-3-x']), { individual: { prefix: 'a-', suffix: '-x', roots: ['1', '22', '3'] } });
  assert.deepEqual(level(['1.ec2', '22.ec2']), { individual: { suffix: '.ec2', roots: ['1', '22'] } });
  assert.deepEqual(level(['x', 'y']), { individual: { roots: ['x', 'y'] } });
  assert.deepEqual(level(['a', 'a-1']), { individual: { prefix: 'a', roots: ['', '-1'] } });
});

test('overlapping prefix and suffix: the prefix is shortened to fit the shortest value', () => {
  const level = (values: string[]) =>
    encodeV1beta2({ levels: ['rack'], domains: values.map((v) => ({ values: [v], count: 1 })) }).slices[0].valuesPerLevel[0];
  // common prefix "ab" + common suffix "ba" = 4 > 3 = len("aba"): prefix becomes "a".
  assert.deepEqual(level(['aba', 'abba']), { individual: { prefix: 'a', suffix: 'ba', roots: ['', 'b'] } });
  // common prefix "ab" and suffix "ab" both span all of "ab": the prefix disappears.
  assert.deepEqual(level(['ab', 'abab']), { individual: { suffix: 'ab', roots: ['', 'ab'] } });
});

test('prefix and suffix never split a surrogate pair', () => {
  const a = assignment('rack').domain(1, 'x\u{1F600}y').domain(1, 'x\u{1F601}y').build();
  const t = encodeV1beta2(a);
  assert.deepEqual(t.slices[0].valuesPerLevel[0], { individual: { prefix: 'x', suffix: 'y', roots: ['\u{1F600}', '\u{1F601}'] } });
  assert.deepEqual(decodeV1beta2(t), a);
});

// --- hostname-prefix slicing -------------------------------------------------------------

test('hostname key is the longest "-"-terminated prefix shared with another hostname', () => {
  // "gpu-a-1" and "gpu-a-2" share "gpu-a-"; "gpu-b-1" shares only "gpu-" with anyone.
  const a = hosts(['gpu-a-1', 'gpu-a-2', 'gpu-b-1', 'cpu-1', 'cpu-2', 'solo']);
  assert.deepEqual(sliceSizes(encodeByHostnamePrefix(a)), [2, 1, 2, 1]);
  assert.deepEqual(
    hostnamesOf(encodeByHostnamePrefix(a)),
    a.domains.map((d) => d.values[0]),
  );
});

test('domain order never changes: interleaved pools make one slice per consecutive run', () => {
  const a = hosts(['pool-a-1', 'pool-a-2', 'pool-b-1', 'pool-b-2', 'pool-a-3', 'pool-a-4']);
  const t = encodeByHostnamePrefix(a);
  assert.deepEqual(sliceSizes(t), [2, 2, 2]);
  assert.deepEqual(decodeV1beta2(t), a);
});

test('more than 1000 slices at the deepest prefix: a shorter prefix depth is used', () => {
  // 2 zones x 600 racks x 2 hosts: "zone-Z-rack-R-" gives 1200 runs, "zone-Z-rack-" gives 2.
  const names: string[] = [];
  for (let z = 1; z <= 2; z++) for (let r = 1; r <= 600; r++) for (let h = 1; h <= 2; h++) names.push(`zone-${z}-rack-${r}-${h}`);
  const t = encodeV1beta2(hosts(names));
  assert.deepEqual(sliceSizes(t), [1200, 1200]);
  assert.deepEqual(t.slices[1].valuesPerLevel[0].individual?.prefix, 'zone-2-rack-');
  assert.deepEqual(hostnamesOf(t), names);
});

test('more than 1000 slices at every prefix depth: everything is one run', () => {
  const names: string[] = [];
  for (let g = 1; g <= 1001; g++) names.push(`g${g}-1`, `g${g}-2`);
  const t = encodeByHostnamePrefix(hosts(names));
  assert.deepEqual(sliceSizes(t), [2002]);
  assert.deepEqual(hostnamesOf(t), names);
});

test('exactly 1000 slices still fit', () => {
  const names: string[] = [];
  for (let g = 1; g <= 1000; g++) names.push(`g${g}-1`, `g${g}-2`);
  assert.equal(encodeByHostnamePrefix(hosts(names)).slices.length, 1000);
});

test('runs are chunked at 100,000 domains', () => {
  const names = Array.from({ length: 2 * MAX_DOMAINS_PER_SLICE + 1 }, (_, i) => `node-${i}`);
  const a = hosts(names);
  for (const t of [encodeV1beta2(a), encodeV1beta2(a, { encodingByHostnamePrefix: false })]) {
    assert.deepEqual(sliceSizes(t), [100_000, 100_000, 1]);
    assert.deepEqual(t.slices[2].valuesPerLevel, [{ universal: names[200_000] }]);
    assert.deepEqual(hostnamesOf(t), names);
  }
  const racks = { levels: ['rack'], domains: names.map((n) => ({ values: [n], count: 2 })) };
  assert.deepEqual(sliceSizes(encodeV1beta2(racks)), [100_000, 100_000, 1]);
});

test('gate TASAssignmentsEncodingByHostnamePrefix off: one slice', () => {
  const a = hosts([...range(1, 50).map((i) => `pool-1-node-${i}`), ...range(1, 70).map((i) => `pool-2-node-${i}`)]);
  const t = encodeV1beta2(a, { encodingByHostnamePrefix: false });
  assert.deepEqual(sliceSizes(t), [120]);
  assert.equal(t.slices[0].valuesPerLevel[0].individual?.prefix, 'pool-');
});

test('prefix slicing applies only to hostname-only levels', () => {
  const a = assignment('rack').domain(1, 'pool-1-r-1').domain(1, 'pool-1-r-2').domain(1, 'pool-2-r-1').build();
  assert.deepEqual(sliceSizes(encodeV1beta2(a)), [3]);
});

test('empty assignment has zero slices and decodes back', () => {
  const a = hosts([]);
  assert.deepEqual(encodeV1beta2(a), { levels: [HOSTNAME_LABEL], slices: [] });
  assert.deepEqual(decodeV1beta2(encodeV1beta2(a)), a);
});

// --- round trips -------------------------------------------------------------------------

const piece = fc.constantFrom('a', 'b', '-', 'node-', 'pool-1-', 'pool-2-', '-x', '.internal', '1', '22');
const value = fc.oneof(
  fc.array(piece, { minLength: 0, maxLength: 5 }).map((p) => p.join('')),
  fc.string({ maxLength: 8 }),
);
const randomAssignment: fc.Arbitrary<Assignment> = fc
  .oneof(fc.constant([HOSTNAME_LABEL]), fc.uniqueArray(fc.constantFrom('zone', 'block', 'rack', 'host'), { minLength: 1, maxLength: 4 }))
  .chain((levels) =>
    fc.record({
      levels: fc.constant(levels),
      domains: fc.array(
        fc.record({
          values: fc.tuple(...levels.map(() => value)),
          count: fc.oneof(fc.constant(1), fc.integer({ min: 1, max: 1000 })),
        }),
        { maxLength: 40 },
      ),
    }),
  )
  // fc.record builds null-prototype objects; the codec returns plain ones.
  .map(({ levels, domains }) => ({ levels: [...levels], domains: domains.map((d) => ({ values: [...d.values], count: d.count })) }));

test('round trip: decodeV1beta2(encodeV1beta2(a)) equals a, and never exceeds the single-slice size', () => {
  fc.assert(
    fc.property(randomAssignment, (a) => {
      const t = encodeV1beta2(a);
      assert.deepEqual(decodeV1beta2(t), a);
      assert.deepEqual(decodeV1beta2(encodeByHostnamePrefix(a)), a);
      const off = encodeV1beta2(a, { encodingByHostnamePrefix: false });
      assert.deepEqual(decodeV1beta2(off), a);
      assert.ok(encodedSize(t) <= encodedSize(off));
      assert.deepEqual(decodeV1beta2(JSON.parse(JSON.stringify(t)) as TopologyAssignment), a);
    }),
    { numRuns: 500 },
  );
});

test('round trip: decodeV1beta1(encodeV1beta1(a)) equals a', () => {
  fc.assert(
    fc.property(randomAssignment, (a) => {
      assert.deepEqual(decodeV1beta1(JSON.parse(JSON.stringify(encodeV1beta1(a))) as TopologyAssignmentV1beta1), a);
    }),
    { numRuns: 200 },
  );
});

// --- malformed input ----------------------------------------------------------------------

const slice = (over: Record<string, unknown> = {}) => ({
  domainCount: 2,
  valuesPerLevel: [{ individual: { prefix: 'h-', roots: ['1', '2'] } }],
  podCounts: { universal: 1 },
  ...over,
});
const v2 = (slices: unknown[], levels: string[] = [HOSTNAME_LABEL]) => ({ levels, slices }) as unknown as TopologyAssignment;

const malformed: [string, TopologyAssignment, RegExp][] = [
  [
    'universal and individual both set',
    v2([slice(), slice({ valuesPerLevel: [{ universal: 'h', individual: { roots: ['1', '2'] } }] })]),
    /topologyAssignment\.slices\[1\]\.valuesPerLevel\[0\]: has both universal and individual; exactly one must be set/,
  ],
  [
    'neither universal nor individual',
    v2([slice({ valuesPerLevel: [{}] })]),
    /slices\[0\]\.valuesPerLevel\[0\]: has neither universal and individual/,
  ],
  [
    'roots length differs from domainCount',
    v2([slice({ domainCount: 3 })]),
    /slices\[0\]\.valuesPerLevel\[0\]\.individual\.roots: has 2 entries; it must have domainCount \(3\)/,
  ],
  [
    'podCounts.individual length differs from domainCount',
    v2([slice({ podCounts: { individual: [1] } })]),
    /slices\[0\]\.podCounts\.individual: has 1 entries; it must have domainCount \(2\)/,
  ],
  [
    'podCounts both set',
    v2([slice({ podCounts: { universal: 1, individual: [1, 1] } })]),
    /slices\[0\]\.podCounts: has both universal and individual/,
  ],
  [
    'valuesPerLevel length differs from levels',
    v2([slice()], ['block', 'rack']),
    /slices\[0\]\.valuesPerLevel: is 1 entries; one entry per level \(2, at least 1\) is required/,
  ],
  [
    'individual count < 1',
    v2([slice({ podCounts: { individual: [1, 0] } })]),
    /slices\[0\]\.podCounts\.individual\[1\]: is 0; an integer >= 1 is required/,
  ],
  [
    'universal count < 1',
    v2([slice({ podCounts: { universal: 0 } })]),
    /slices\[0\]\.podCounts\.universal: is 0; an integer >= 1 is required/,
  ],
  ['domainCount < 1', v2([slice({ domainCount: 0 })]), /slices\[0\]\.domainCount: is 0; an integer >= 1 is required/],
  [
    'more than 1000 slices',
    v2(Array.from({ length: 1001 }, () => slice())),
    /topologyAssignment\.slices: has 1001 slices; at most 1000 are accepted/,
  ],
  [
    'more than 16 levels',
    v2(
      [],
      Array.from({ length: 17 }, (_, i) => `l${i}`),
    ),
    /topologyAssignment\.levels: has 17 entries; at most 16 are accepted/,
  ],
  [
    'empty prefix',
    v2([slice({ valuesPerLevel: [{ individual: { prefix: '', roots: ['1', '2'] } }] })]),
    /valuesPerLevel\[0\]\.individual\.prefix: is ""; omit it or give a non-empty string/,
  ],
  [
    'numeric root (unquoted YAML)',
    v2([slice({ valuesPerLevel: [{ individual: { prefix: 'rack-', roots: [1, 2] } }] })]),
    /individual\.roots\[0\]: is number 1; a string is required \(quote numeric roots\)/,
  ],
];

for (const [name, t, message] of malformed) {
  test(`malformed v1beta2 is refused naming slice and field: ${name}`, () => {
    assert.throws(() => decodeV1beta2(t), message);
  });
}

test("malformed v1beta2 errors carry the caller's location", () => {
  const where = { object: 'Workload/ns/w', field: 'status.admission.podSetAssignments[0].topologyAssignment' };
  assert.throws(() => decodeV1beta2(v2([slice({ domainCount: 3 })]), where), {
    name: 'InputError',
    message:
      /^Workload\/ns\/w, status\.admission\.podSetAssignments\[0\]\.topologyAssignment\.slices\[0\]\.valuesPerLevel\[0\]\.individual\.roots: /,
  });
});

test('malformed v1beta1 is refused naming domain and field', () => {
  const t = (domains: unknown[]) => ({ levels: ['block', 'rack'], domains }) as unknown as TopologyAssignmentV1beta1;
  assert.throws(
    () => decodeV1beta1(t([{ values: ['b'], count: 1 }])),
    /topologyAssignment\.domains\[0\]\.values: has 1 entries; one per level \(2\) is required/,
  );
  assert.throws(
    () =>
      decodeV1beta1(
        t([
          { values: ['b', 'r'], count: 1 },
          { values: ['b', 'r'], count: 0 },
        ]),
      ),
    /domains\[1\]\.count: is 0; an integer >= 1 is required/,
  );
});

// --- size goal -----------------------------------------------------------------------------

const ONE_POINT_FIVE_MB = 1_500_000;

/** GKE-style names: gke-tpu-pool-<k>-<8 hex instance group>-<4 alnum>, 4 pools x 5 groups. */
function gkeHostnames(n: number): string[] {
  const next = lcg(2724);
  const alnum = 'abcdefghijklmnopqrstuvwxyz0123456789';
  const groups = Array.from({ length: 20 }, (_, g) => `gke-tpu-pool-${(g % 4) + 1}-${next().toString(16).padStart(8, '0')}`);
  const seen = new Set<string>();
  while (seen.size < n) {
    // High bits only: the low bits of an LCG cycle quickly.
    const group = groups[(next() >>> 16) % groups.length];
    let tail = '';
    for (let i = 0, x = next() >>> 8; i < 4; i++, x = Math.floor(x / 36)) tail += alnum[x % 36];
    seen.add(`${group}-${tail}`);
  }
  return [...seen].sort();
}

/** AWS-style names: ip-10-<a>-<b>-<c>.ec2.internal. */
function awsHostnames(n: number): string[] {
  return Array.from({ length: n }, (_, i) => `ip-10-${Math.floor(i / 65536)}-${Math.floor(i / 256) % 256}-${i % 256}.ec2.internal`).sort();
}

const nodeHostnames = (n: number) => Array.from({ length: n }, (_, i) => `node-${i}`).sort();

for (const [scheme, names] of [
  ['gke-tpu-pool-<k>-<8 hex>-<4 alnum>', gkeHostnames(40_000)],
  ['ip-10-<a>-<b>-<c>.ec2.internal', awsHostnames(40_000)],
  ['node-<n>', nodeHostnames(40_000)],
] as const) {
  test(`size goal: 40,000 single-pod hostnames (${scheme}) encode under 1.5 MB of JSON`, (t) => {
    const a = hosts([...names]);
    const started = performance.now();
    const enc = encodeV1beta2(a);
    const ms = performance.now() - started;
    const size = encodedSize(enc);
    t.diagnostic(
      `${scheme}: ${enc.slices.length} slices, ${size} B v1beta2 (v1beta1 ${encodedSize(encodeV1beta1(a))} B), encode ${ms.toFixed(1)} ms`,
    );
    assert.ok(size < ONE_POINT_FIVE_MB, `${size} B`);
    assert.deepEqual(decodeV1beta2(enc), a);
  });
}

test('encodedSize counts UTF-8 bytes', () => {
  const t: TopologyAssignment = { levels: ['é'], slices: [] };
  assert.equal(encodedSize(t), JSON.stringify(t).length + 1);
});
