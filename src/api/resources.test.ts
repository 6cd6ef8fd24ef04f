import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { InputError } from './errors.ts';
import type { Container, PodSpec, ResourceList } from './objects.ts';
import { formatQuantity, parseQuantity } from './quantity.ts';
import {
  addAmounts,
  formatResourceAmount,
  formatResourceList,
  parseResourceList,
  podRequestQuantities,
  podRequests,
  resourceAmount,
  scaleAmounts,
} from './resources.ts';

// --- fixture builders ---------------------------------------------------------------

class ContainerBuilder {
  readonly c: Container;
  constructor(name: string) {
    this.c = { name };
  }
  requests(r: ResourceList): this {
    this.c.resources = { ...this.c.resources, requests: r };
    return this;
  }
  limits(l: ResourceList): this {
    this.c.resources = { ...this.c.resources, limits: l };
    return this;
  }
  cpu(q: string): this {
    return this.requests({ ...this.c.resources?.requests, cpu: q });
  }
  memory(q: string): this {
    return this.requests({ ...this.c.resources?.requests, memory: q });
  }
  /** An init container that keeps running: `restartPolicy: Always`. */
  sidecar(): this {
    this.c.restartPolicy = 'Always';
    return this;
  }
}
const container = (name: string) => new ContainerBuilder(name);

class PodBuilder {
  readonly spec: PodSpec = { containers: [] };
  containers(...cs: ContainerBuilder[]): this {
    this.spec.containers.push(...cs.map((b) => b.c));
    return this;
  }
  init(...cs: ContainerBuilder[]): this {
    (this.spec.initContainers ??= []).push(...cs.map((b) => b.c));
    return this;
  }
  overhead(o: ResourceList): this {
    this.spec.overhead = o;
    return this;
  }
}
const pod = () => new PodBuilder();

/** Asserts an InputError whose message is exactly `message`. */
const inputError = (message: string) => (e: unknown) => {
  assert.ok(e instanceof InputError, `expected an InputError, got ${String(e)}`);
  assert.equal(e.message, message);
  return true;
};

// --- amounts ------------------------------------------------------------------------

describe('resourceAmount: cpu in millicores, everything else in base units, rounded up', () => {
  const cases: [string, string, number][] = [
    ['cpu', '1', 1000],
    ['cpu', '500m', 500],
    ['cpu', '0.5m', 1],
    ['cpu', '1.5', 1500],
    ['memory', '1Gi', 1073741824],
    ['memory', '1G', 1_000_000_000],
    ['memory', '1.5', 2],
    ['memory', '100m', 1],
    ['nvidia.com/gpu', '8', 8],
    ['pods', '110', 110],
    ['ephemeral-storage', '10Gi', 10 * 2 ** 30],
  ];
  for (const [name, q, want] of cases) {
    test(`${name} ${q} -> ${want}`, () => assert.equal(resourceAmount(name, parseQuantity(q)), want));
  }
});

describe('formatResourceAmount: back to a canonical quantity', () => {
  const cases: [string, number, string][] = [
    ['cpu', 500, '500m'],
    ['cpu', 2000, '2'],
    ['cpu', 1500, '1500m'],
    ['cpu', 0, '0'],
    ['memory', 2 ** 30, '1Gi'],
    ['memory', 1536 * 2 ** 20, '1536Mi'],
    ['memory', 1_000_000_000, '1G'], // not a multiple of 1024: DecimalSI
    ['memory', 4_000_000_000, '3906250Ki'], // a multiple of 1024: BinarySI
    ['memory', 1500, '1500'],
    ['memory', 0, '0'],
    ['ephemeral-storage', 10 * 2 ** 30, '10Gi'],
    ['hugepages-2Mi', 2 ** 21, '2Mi'],
    ['nvidia.com/gpu', 8, '8'],
    ['pods', 1024, '1024'], // only byte-valued resources use binary suffixes
    ['example.com/foo', 3000, '3k'],
  ];
  for (const [name, n, want] of cases) {
    test(`${name} ${n} -> ${want}`, () => assert.equal(formatResourceAmount(name, n), want));
  }
  test('formatResourceAmount inverts resourceAmount on canonical quantities', () => {
    fc.assert(
      fc.property(
        fc.constantFrom('cpu', 'memory', 'ephemeral-storage', 'nvidia.com/gpu'),
        fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }),
        (name, n) => resourceAmount(name, parseQuantity(formatResourceAmount(name, n))) === n,
      ),
    );
  });
  test('formatResourceList prints every amount, in resource-name order', () => {
    assert.deepEqual(formatResourceList({ memory: 2 ** 31, cpu: 250, 'nvidia.com/gpu': 1 }), {
      cpu: '250m',
      memory: '2Gi',
      'nvidia.com/gpu': '1',
    });
    assert.deepEqual(Object.keys(formatResourceList({ memory: 1, cpu: 1 })), ['cpu', 'memory']);
  });
});

describe('parseResourceList', () => {
  test('parses strings and YAML numbers into amounts', () => {
    assert.deepEqual(parseResourceList({ cpu: '4', memory: '16Gi', 'nvidia.com/gpu': 8, pods: '110' }, 'status.allocatable'), {
      cpu: 4000,
      memory: 16 * 2 ** 30,
      'nvidia.com/gpu': 8,
      pods: 110,
    });
    assert.deepEqual(parseResourceList({ cpu: 0.5 }, 'x'), { cpu: 500 });
  });
  test('an absent list is empty', () => {
    assert.deepEqual(parseResourceList(undefined, 'status.allocatable'), {});
    assert.deepEqual(parseResourceList(null, 'status.allocatable'), {});
  });
  test('an unparseable quantity names the field and the value, and says what is accepted', () => {
    assert.throws(
      () => parseResourceList({ cpu: '1', memory: '1gi' }, 'status.allocatable'),
      inputError(
        `status.allocatable.memory: Invalid value: "1gi": quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'`,
      ),
    );
    assert.throws(
      () => parseResourceList({ cpu: '2K' }, 'spec.containers[0].resources.requests'),
      inputError(
        'spec.containers[0].resources.requests.cpu: Invalid value: "2K": unable to parse quantity\'s suffix; accepted suffixes are n, u, m, k, M, G, T, P, E (decimal), Ki, Mi, Gi, Ti, Pi, Ei (binary) or an exponent such as e3 or E-6',
      ),
    );
  });
  test('a negative quantity names the field: must be greater than or equal to 0', () => {
    assert.throws(
      () => parseResourceList({ 'nvidia.com/gpu': -1 }, 'status.allocatable'),
      inputError('status.allocatable.nvidia.com/gpu: Invalid value: -1: must be greater than or equal to 0'),
    );
    assert.throws(
      () => parseResourceList({ cpu: '-100m' }, 'spec.overhead'),
      inputError('spec.overhead.cpu: Invalid value: "-100m": must be greater than or equal to 0'),
    );
  });
  test('an amount beyond the exact range of a number names the field', () => {
    assert.throws(
      () => parseResourceList({ memory: '8Pi' }, 'status.allocatable'),
      inputError(
        'status.allocatable.memory: Invalid value: "8Pi": 9007199254740992 units is beyond the exact range of a JavaScript number (±9007199254740991)',
      ),
    );
  });
  test('a list that is not a map is refused', () => {
    assert.throws(
      () => parseResourceList('4' as unknown as ResourceList, 'status.allocatable'),
      inputError('status.allocatable: must be a map from resource name to quantity, got "4"'),
    );
  });
});

// --- the pod's effective request ----------------------------------------------------

describe('podRequests: Kubernetes effective pod request', () => {
  test('no containers with resources: empty', () => {
    assert.deepEqual(podRequests(pod().containers(container('a')).spec), {});
  });

  test('app containers: sum per resource', () => {
    const spec = pod().containers(
      container('a').cpu('1').memory('1Gi'),
      container('b').cpu('500m').requests({ cpu: '500m', 'nvidia.com/gpu': '1' }),
    ).spec;
    assert.deepEqual(podRequests(spec), { cpu: 1500, memory: 2 ** 30, 'nvidia.com/gpu': 1 });
  });

  test('rounding happens once, on the total (two 0.5m containers request 1m, not 2m)', () => {
    const spec = pod().containers(container('a').cpu('0.5m').memory('0.5'), container('b').cpu('0.5m').memory('0.5')).spec;
    assert.deepEqual(podRequests(spec), { cpu: 1, memory: 1 });
  });

  test('init containers: max of the largest init container and the app sum', () => {
    const spec = pod()
      .init(container('i1').cpu('2').memory('100Mi'), container('i2').cpu('500m').memory('3Gi'))
      .containers(container('a').cpu('1').memory('1Gi'), container('b').cpu('1').memory('1Gi')).spec;
    // cpu: max(2, 1+1) = 2; memory: max(3Gi, 2Gi) = 3Gi
    assert.deepEqual(podRequests(spec), { cpu: 2000, memory: 3 * 2 ** 30 });
  });

  test('init containers: a resource only an init container requests still counts', () => {
    const spec = pod()
      .init(container('i').requests({ 'example.com/dongle': '1' }))
      .containers(container('a').cpu('1')).spec;
    assert.deepEqual(podRequests(spec), { cpu: 1000, 'example.com/dongle': 1 });
  });

  test('sidecars: counted with the app containers', () => {
    const spec = pod().init(container('proxy').cpu('200m').sidecar()).containers(container('a').cpu('1')).spec;
    assert.deepEqual(podRequests(spec), { cpu: 1200 });
  });

  test('sidecars: an init container after a sidecar runs beside it (own + earlier sidecars)', () => {
    const spec = pod()
      .init(container('proxy').cpu('500m').sidecar(), container('migrate').cpu('2'), container('log').cpu('100m').sidecar())
      .containers(container('a').cpu('1')).spec;
    // migrate runs with proxy: 2 + 0.5 = 2.5; app: 1 + 0.5 + 0.1 = 1.6
    assert.deepEqual(podRequests(spec), { cpu: 2500 });
  });

  test('sidecars: an init container before a sidecar does not add it', () => {
    const spec = pod()
      .init(container('migrate').cpu('2'), container('proxy').cpu('500m').sidecar())
      .containers(container('a').cpu('1')).spec;
    // migrate alone: 2; app: 1 + 0.5 = 1.5
    assert.deepEqual(podRequests(spec), { cpu: 2000 });
  });

  test('sidecars: the sidecars started so far bound the request on their own', () => {
    // Only sidecars and an app container asking for nothing of that resource: the
    // cumulative sidecar sum is both an init-phase and a running-phase requirement.
    const spec = pod()
      .init(container('s1').memory('1Gi').sidecar(), container('s2').memory('1Gi').sidecar())
      .containers(container('a').cpu('1')).spec;
    assert.deepEqual(podRequests(spec), { memory: 2 * 2 ** 30, cpu: 1000 });
  });

  test('overhead: added to the effective request', () => {
    const spec = pod()
      .init(container('i').cpu('4'))
      .containers(container('a').cpu('1').memory('1Gi'))
      .overhead({ cpu: '250m', memory: '120Mi', pods: '1' }).spec;
    assert.deepEqual(podRequests(spec), { cpu: 4250, memory: 2 ** 30 + 120 * 2 ** 20, pods: 1 });
  });

  test('limits only: the request defaults to the limit, per resource', () => {
    const spec = pod()
      .containers(
        container('a').limits({ cpu: '2', memory: '4Gi' }),
        container('b').requests({ cpu: '100m' }).limits({ cpu: '1', memory: '1Gi' }),
      )
      .init(container('i').limits({ 'nvidia.com/gpu': '1' })).spec;
    // a: cpu 2 (limit), memory 4Gi (limit); b: cpu 100m (request wins), memory 1Gi (limit)
    assert.deepEqual(podRequests(spec), { cpu: 2100, memory: 5 * 2 ** 30, 'nvidia.com/gpu': 1 });
  });

  test('exact quantities are available, keeping the first container’s format', () => {
    const spec = pod().containers(container('a').memory('1.5Gi'), container('b').memory('512Mi')).spec;
    assert.equal(formatQuantity(podRequestQuantities(spec).get('memory')!), '2Gi');
  });

  test('errors name the container field', () => {
    assert.throws(
      () => podRequests(pod().containers(container('a').cpu('1'), container('b').cpu('one')).spec),
      inputError(
        `spec.containers[1].resources.requests.cpu: Invalid value: "one": quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'`,
      ),
    );
    assert.throws(
      () => podRequests(pod().init(container('i').limits({ memory: '-1Gi' })).spec, 'spec.podSets[0].template.spec'),
      inputError(
        'spec.podSets[0].template.spec.initContainers[0].resources.limits.memory: Invalid value: "-1Gi": must be greater than or equal to 0',
      ),
    );
    assert.throws(
      () => podRequests(pod().overhead({ cpu: 'x' }).spec),
      (e: unknown) => e instanceof InputError && e.where.field === 'spec.overhead.cpu',
    );
  });

  test('errors name the pod when the total is beyond the exact range of a number', () => {
    const spec = pod().containers(container('a').memory('4Pi'), container('b').memory('4Pi')).spec;
    assert.throws(
      () => podRequests(spec),
      inputError(
        "spec: the pod's effective memory request 8Pi: 9007199254740992 units is beyond the exact range of a JavaScript number (±9007199254740991)",
      ),
    );
  });
});

// --- helpers ------------------------------------------------------------------------

describe('addAmounts and scaleAmounts', () => {
  test('addAmounts sums per resource, a missing resource counting as 0, and returns a new object', () => {
    const a = { cpu: 1000, memory: 1024 };
    const b = { cpu: 500, 'nvidia.com/gpu': 1 };
    assert.deepEqual(addAmounts(a, b), { cpu: 1500, memory: 1024, 'nvidia.com/gpu': 1 });
    assert.deepEqual(a, { cpu: 1000, memory: 1024 });
    assert.deepEqual(b, { cpu: 500, 'nvidia.com/gpu': 1 });
  });
  test('scaleAmounts multiplies every amount by an integer and returns a new object', () => {
    const a = { cpu: 1500, memory: 2 ** 30 };
    assert.deepEqual(scaleAmounts(a, 4), { cpu: 6000, memory: 2 ** 32 });
    assert.deepEqual(scaleAmounts(a, 0), { cpu: 0, memory: 0 });
    assert.deepEqual(a, { cpu: 1500, memory: 2 ** 30 });
    assert.throws(() => scaleAmounts(a, 1.5), /scaleAmounts: expected an integer factor, got 1.5/);
  });
  test('both refuse to leave the exact range of a number', () => {
    assert.throws(
      () => addAmounts({ memory: Number.MAX_SAFE_INTEGER }, { memory: 1 }),
      /memory: 9007199254740992 is beyond the exact range/,
    );
    assert.throws(() => scaleAmounts({ memory: 2 ** 40 }, 2 ** 14), /memory: .* is beyond the exact range/);
  });
  test('addAmounts agrees with exact quantity addition', () => {
    const amounts = fc.dictionary(fc.constantFrom('cpu', 'memory', 'pods'), fc.integer({ min: 0, max: 2 ** 40 }));
    fc.assert(
      fc.property(amounts, amounts, (a, b) => {
        const sum = addAmounts(a, b);
        for (const name of new Set([...Object.keys(a), ...Object.keys(b)])) {
          const exact =
            parseQuantity(formatResourceAmount(name, a[name] ?? 0)).nano + parseQuantity(formatResourceAmount(name, b[name] ?? 0)).nano;
          assert.equal(parseQuantity(formatResourceAmount(name, sum[name])).nano, exact);
        }
      }),
    );
  });
});
