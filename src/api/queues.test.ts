import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Where } from './errors.ts';
import { KueueApiVersion } from './keys.ts';
import { parseManifests } from './manifest.ts';
import type { KObject } from './objects.ts';
import {
  KueueQueueMessage,
  MAX_FLAVORS,
  MAX_RESOURCE_GROUPS,
  namespaceSelectorMatches,
  normalizeClusterQueue,
  validateClusterQueue,
  type ClusterQueue,
  type Cohort,
  type LocalQueue,
  type WorkloadPriorityClass,
} from './queues.ts';
import { knownKinds, parseObject } from './schemas.ts';

// ---------------------------------------------------------------------------------------
// Fixture builders
// ---------------------------------------------------------------------------------------

type Raw = Record<string, unknown>;
const V1B2 = KueueApiVersion.V1beta2;
const V1B1 = KueueApiVersion.V1beta1;

class ObjectBuilder {
  protected o: Raw;
  constructor(apiVersion: string, kind: string, name: string, namespace?: string) {
    this.o = { apiVersion, kind, metadata: namespace ? { name, namespace } : { name } };
  }
  /** Writes `value` at a dotted path, e.g. `spec.preemption.reclaimWithinCohort`. */
  set(path: string, value: unknown): this {
    const keys = path.split('.');
    let at = this.o;
    for (const k of keys.slice(0, -1)) at = (at[k] ??= {}) as Raw;
    at[keys[keys.length - 1]] = value;
    return this;
  }
  get(): KObject {
    return structuredClone(this.o) as unknown as KObject;
  }
}

/** A quota: a nominal quantity, or the nominal with limits. */
type Quota = string | number | { nominalQuota?: unknown; borrowingLimit?: unknown; lendingLimit?: unknown };

class ResourceGroupBuilder {
  readonly g: { coveredResources: string[]; flavors: Raw[] };
  constructor(covered: string[]) {
    this.g = { coveredResources: covered, flavors: [] };
  }
  /** A flavor with its quotas, in the order given (write them in coveredResources order). */
  flavor(name: string, quotas: Record<string, Quota>): this {
    const resources = Object.entries(quotas).map(([r, q]) => (typeof q === 'object' ? { name: r, ...q } : { name: r, nominalQuota: q }));
    this.g.flavors.push({ name, resources });
    return this;
  }
}
const group = (...covered: string[]) => new ResourceGroupBuilder(covered);

class ClusterQueueBuilder extends ObjectBuilder {
  constructor(
    name: string,
    private readonly version: string,
  ) {
    super(version, 'ClusterQueue', name);
    this.o.spec = {};
  }
  cohort(name: string): this {
    return this.set(this.version === V1B1 ? 'spec.cohort' : 'spec.cohortName', name);
  }
  groups(...gs: ResourceGroupBuilder[]): this {
    return this.set(
      'spec.resourceGroups',
      gs.map((g) => g.g),
    );
  }
  preemption(p: Raw): this {
    return this.set('spec.preemption', p);
  }
  fungibility(f: Raw): this {
    return this.set('spec.flavorFungibility', f);
  }
}
const cq = (name = 'cq', version: string = V1B2) => new ClusterQueueBuilder(name, version);

const cohortObject = (name = 'team') => new ObjectBuilder(V1B2, 'Cohort', name).set('spec', {});
const localQueue = (name = 'lq', version: string = V1B2) =>
  new ObjectBuilder(version, 'LocalQueue', name, 'ns').set('spec.clusterQueue', 'cq');
const priorityClass = (name = 'high', version: string = V1B2) =>
  new ObjectBuilder(version, 'WorkloadPriorityClass', name).set('value', 1000);

const cpuMem = () => group('cpu', 'memory').flavor('on-demand', { cpu: '10', memory: '64Gi' });

const WHERE: Where = { file: 'q.yaml', document: 1 };

function errorsOf(o: ObjectBuilder | KObject): { field: string | undefined; detail: string }[] {
  const obj = o instanceof ObjectBuilder ? o.get() : o;
  return parseObject(obj, WHERE).errors.map((e) => ({ field: e.where.field, detail: e.detail }));
}

function accepted<T = KObject>(o: ObjectBuilder | KObject): T {
  const r = parseObject(o instanceof ObjectBuilder ? o.get() : o, WHERE);
  assert.deepEqual(
    r.errors.map((e) => e.message),
    [],
  );
  return r.object as T;
}

/** Exactly one error, at `field`, whose detail is `detail` (string: equal; RegExp: match). */
function refused(o: ObjectBuilder | KObject, field: string, detail: string | RegExp): void {
  const errors = errorsOf(o);
  assert.equal(errors.length, 1, `expected one error, got ${JSON.stringify(errors, null, 1)}`);
  assert.equal(errors[0].field, field);
  if (typeof detail === 'string') assert.equal(errors[0].detail, detail);
  else assert.match(errors[0].detail, detail);
}

// ---------------------------------------------------------------------------------------
// ClusterQueue
// ---------------------------------------------------------------------------------------

describe('ClusterQueue', () => {
  test('two resource groups with a cohort and limits are accepted; quotas become strings', () => {
    const q = accepted<ClusterQueue>(
      cq()
        .cohort('research')
        .groups(
          group('cpu', 'memory')
            .flavor('on-demand', { cpu: { nominalQuota: 10, borrowingLimit: '4', lendingLimit: '2' }, memory: '64Gi' })
            .flavor('spot', { cpu: '20', memory: '128Gi' }),
          group('nvidia.com/gpu').flavor('a100', { 'nvidia.com/gpu': 8 }),
        ),
    );
    assert.equal(q.spec.cohortName, 'research');
    assert.deepEqual(q.spec.resourceGroups![0].flavors[0].resources[0], {
      name: 'cpu',
      nominalQuota: '10',
      borrowingLimit: '4',
      lendingLimit: '2',
    });
    assert.equal(q.spec.resourceGroups![1].flavors[0].resources[0].nominalQuota, '8');
  });

  test('defaults: BestEffortFIFO, stopPolicy None, preemption Never/Never, flavorFungibility MayStopSearch/TryNextFlavor', () => {
    const q = accepted<ClusterQueue>(cq().groups(cpuMem()));
    assert.equal(q.spec.queueingStrategy, 'BestEffortFIFO');
    assert.equal(q.spec.stopPolicy, 'None');
    assert.deepEqual(q.spec.preemption, { reclaimWithinCohort: 'Never', withinClusterQueue: 'Never' });
    assert.deepEqual(q.spec.flavorFungibility, { whenCanBorrow: 'MayStopSearch', whenCanPreempt: 'TryNextFlavor' });
    // Without a spec at all, too.
    const bare = accepted<ClusterQueue>(new ObjectBuilder(V1B2, 'ClusterQueue', 'bare'));
    assert.equal(bare.spec.queueingStrategy, 'BestEffortFIFO');
    // borrowWithinCohort, when given, defaults its policy to Never.
    const b = accepted<ClusterQueue>(cq().preemption({ reclaimWithinCohort: 'Any', borrowWithinCohort: {} }));
    assert.deepEqual(b.spec.preemption.borrowWithinCohort, { policy: 'Never' });
  });

  test('the values given are kept', () => {
    const q = accepted<ClusterQueue>(
      cq()
        .cohort('c')
        .set('spec.queueingStrategy', 'StrictFIFO')
        .set('spec.stopPolicy', 'HoldAndDrain')
        .preemption({
          reclaimWithinCohort: 'LowerPriority',
          withinClusterQueue: 'LowerOrNewerEqualPriority',
          borrowWithinCohort: { policy: 'LowerPriority', maxPriorityThreshold: 100 },
        })
        .fungibility({ whenCanBorrow: 'TryNextFlavor', whenCanPreempt: 'TryNextFlavor', preference: 'PreemptionOverBorrowing' }),
    );
    assert.equal(q.spec.queueingStrategy, 'StrictFIFO');
    assert.equal(q.spec.stopPolicy, 'HoldAndDrain');
    assert.deepEqual(q.spec.preemption.borrowWithinCohort, { policy: 'LowerPriority', maxPriorityThreshold: 100 });
    assert.equal(q.spec.flavorFungibility.preference, 'PreemptionOverBorrowing');
  });

  test('namespaceSelector: absent (or null) admits no namespace, {} admits every namespace; the distinction is kept', () => {
    const none = accepted<ClusterQueue>(cq());
    assert.equal('namespaceSelector' in none.spec, false);
    const nulled = accepted<ClusterQueue>(cq().set('spec.namespaceSelector', null));
    assert.equal(nulled.spec.namespaceSelector, undefined);
    const all = accepted<ClusterQueue>(cq().set('spec.namespaceSelector', {}));
    assert.deepEqual(all.spec.namespaceSelector, {});
    assert.equal(namespaceSelectorMatches(none.spec.namespaceSelector, { team: 'a' }), false);
    assert.equal(namespaceSelectorMatches(all.spec.namespaceSelector, undefined), true);
  });

  test('namespaceSelectorMatches: matchLabels and In/NotIn/Exists/DoesNotExist as Kubernetes reads them', () => {
    const sel = {
      matchLabels: { team: 'ml' },
      matchExpressions: [
        { key: 'tier', operator: 'In' as const, values: ['gold', 'silver'] },
        { key: 'env', operator: 'NotIn' as const, values: ['dev'] },
        { key: 'quota', operator: 'Exists' as const },
        { key: 'frozen', operator: 'DoesNotExist' as const },
      ],
    };
    assert.equal(namespaceSelectorMatches(sel, { team: 'ml', tier: 'gold', quota: '' }), true);
    assert.equal(namespaceSelectorMatches(sel, { team: 'ml', tier: 'gold', quota: '', env: 'prod' }), true);
    assert.equal(namespaceSelectorMatches(sel, { team: 'ml', tier: 'gold', quota: '', env: 'dev' }), false);
    assert.equal(namespaceSelectorMatches(sel, { team: 'ml', tier: 'bronze', quota: '' }), false);
    assert.equal(namespaceSelectorMatches(sel, { team: 'ml', tier: 'gold' }), false);
    assert.equal(namespaceSelectorMatches(sel, { team: 'ml', tier: 'gold', quota: '', frozen: 'yes' }), false);
    assert.equal(namespaceSelectorMatches(sel, { team: 'web', tier: 'gold', quota: '' }), false);
  });

  test('namespaceSelector: requirements follow Kubernetes rules', () => {
    refused(
      cq().set('spec.namespaceSelector', { matchExpressions: [{ key: 'team', operator: 'In' }] }),
      'spec.namespaceSelector.matchExpressions[0].values',
      "Required value: must be specified when `operator` is 'In' or 'NotIn'",
    );
    refused(
      cq().set('spec.namespaceSelector', { matchLabels: { 'bad key!': 'x' } }),
      'spec.namespaceSelector.matchLabels["bad key!"]',
      /not a valid label key/,
    );
  });

  test('rule: at most 16 resource groups', () => {
    const groups = Array.from({ length: MAX_RESOURCE_GROUPS + 1 }, (_, i) =>
      group(`example.com/r${i}`).flavor(`f${i}`, { [`example.com/r${i}`]: 1 }),
    );
    accepted(cq().groups(...groups.slice(0, MAX_RESOURCE_GROUPS)));
    refused(cq().groups(...groups), 'spec.resourceGroups', 'must have at most 16 resource groups');
  });

  test('rule: at most 64 flavors per resource group and 256 over all groups', () => {
    const many = (prefix: string, n: number, r: string) => {
      const g = group(r);
      for (let i = 0; i < n; i++) g.flavor(`${prefix}${i}`, { [r]: 1 });
      return g;
    };
    refused(cq().groups(many('f', 65, 'cpu')), 'spec.resourceGroups[0].flavors', 'must have at most 64 flavors per resource group');
    const five = ['a', 'b', 'c', 'd', 'e'].map((p, i) => many(p, i < 4 ? 64 : 1, `example.com/r${i}`));
    accepted(cq().groups(...five.slice(0, 4)));
    refused(cq().groups(...five), 'spec.resourceGroups', `must have at most ${MAX_FLAVORS} flavors over all resource groups, got 257`);
  });

  test('rule: a resource group covers at least one resource and has at least one flavor', () => {
    refused(
      cq().set('spec.resourceGroups', [{ coveredResources: [], flavors: [{ name: 'f', resources: [{ name: 'cpu', nominalQuota: 1 }] }] }]),
      'spec.resourceGroups[0].coveredResources',
      'a resource group covers at least one resource',
    );
    refused(
      cq().set('spec.resourceGroups', [{ coveredResources: ['cpu'], flavors: [{ name: 'f', resources: [] }] }]),
      'spec.resourceGroups[0].flavors[0].resources',
      'a flavor lists the quota of every covered resource: at least one',
    );
    refused(
      cq().set('spec.resourceGroups', [{ coveredResources: ['cpu'], flavors: [] }]),
      'spec.resourceGroups[0].flavors',
      'a resource group has at least one flavor',
    );
  });

  test('rule: every flavor lists exactly the covered resources (count: the CEL message)', () => {
    refused(
      cq().groups(group('cpu', 'memory').flavor('on-demand', { cpu: '10' })),
      'spec.resourceGroups[0].flavors[0].resources',
      `${KueueQueueMessage.ResourceCount}: flavor "on-demand" lists 1 ("cpu"), coveredResources has 2 ("cpu", "memory")`,
    );
    const errors = errorsOf(cq().groups(group('cpu').flavor('on-demand', { cpu: '10', memory: '1Gi' })));
    assert.deepEqual(
      errors.map((e) => e.field),
      ['spec.resourceGroups[0].flavors[0].resources'],
    );
  });

  test('rule: every flavor lists the covered resources in their order (the webhook message)', () => {
    refused(
      cq().groups(group('cpu', 'memory').flavor('on-demand', { cpu: '10', 'nvidia.com/gpu': '8' })),
      'spec.resourceGroups[0].flavors[0].resources[1].name',
      `Invalid value: "nvidia.com/gpu": ${KueueQueueMessage.ResourceName} (spec.resourceGroups[0].coveredResources[1] is "memory"); a flavor lists the covered resources in their order`,
    );
    const swapped = errorsOf(cq().groups(group('cpu', 'memory').flavor('on-demand', { memory: '1Gi', cpu: '10' })));
    assert.deepEqual(
      swapped.map((e) => e.field),
      ['spec.resourceGroups[0].flavors[0].resources[0].name', 'spec.resourceGroups[0].flavors[0].resources[1].name'],
    );
  });

  test('rule: a resource appears in only one resource group', () => {
    refused(
      cq().groups(cpuMem(), group('cpu').flavor('spot', { cpu: '5' })),
      'spec.resourceGroups[1].coveredResources[0]',
      'Duplicate value: "cpu": already covered by spec.resourceGroups[0]; a resource may appear in only one resource group',
    );
    const twice = errorsOf(cq().groups(group('cpu', 'cpu').flavor('f', { cpu: '1' }).flavor('g', { cpu: '1' })));
    assert.ok(
      twice.some(
        (e) => e.field === 'spec.resourceGroups[0].coveredResources[1]' && /already covered by this resource group/.test(e.detail),
      ),
    );
  });

  test('rule: a flavor appears only once, in one resource group', () => {
    refused(
      cq().groups(cpuMem(), group('nvidia.com/gpu').flavor('on-demand', { 'nvidia.com/gpu': 8 })),
      'spec.resourceGroups[1].flavors[0].name',
      'Duplicate value: "on-demand": already in spec.resourceGroups[0].flavors[0]; a flavor may appear only once, in one resource group',
    );
    refused(
      cq().groups(cpuMem().flavor('on-demand', { cpu: '1', memory: '1Gi' })),
      'spec.resourceGroups[0].flavors[1].name',
      /^Duplicate value: "on-demand"/,
    );
  });

  test('rule: borrowingLimit must be nil without a cohort (the CEL message)', () => {
    refused(
      cq().groups(group('cpu').flavor('f', { cpu: { nominalQuota: '10', borrowingLimit: '5' } })),
      'spec.resourceGroups[0].flavors[0].resources[0].borrowingLimit',
      'borrowingLimit must be nil when cohort is empty: set spec.cohortName or remove borrowingLimit (without a cohort there is nothing to borrow)',
    );
    accepted(
      cq()
        .cohort('c')
        .groups(group('cpu').flavor('f', { cpu: { nominalQuota: '10', borrowingLimit: '5' } })),
    );
    // "0" is a limit too: it must be absent, not zero.
    refused(
      cq().groups(group('cpu').flavor('f', { cpu: { nominalQuota: '10', borrowingLimit: 0 } })),
      'spec.resourceGroups[0].flavors[0].resources[0].borrowingLimit',
      /^borrowingLimit must be nil when cohort is empty/,
    );
  });

  test('rule: lendingLimit must be nil without a cohort', () => {
    refused(
      cq().groups(group('cpu').flavor('f', { cpu: { nominalQuota: '10', lendingLimit: '5' } })),
      'spec.resourceGroups[0].flavors[0].resources[0].lendingLimit',
      'Invalid value: "5": must be nil when cohort is empty: set spec.cohortName or remove lendingLimit (without a cohort there is nobody to lend to)',
    );
  });

  test('rule: lendingLimit <= nominalQuota (compared as quantities)', () => {
    refused(
      cq()
        .cohort('c')
        .groups(group('memory').flavor('f', { memory: { nominalQuota: '1Gi', lendingLimit: '1025Mi' } })),
      'spec.resourceGroups[0].flavors[0].resources[0].lendingLimit',
      'Invalid value: "1025Mi": must be less than or equal to the nominalQuota (1Gi)',
    );
    accepted(
      cq()
        .cohort('c')
        .groups(group('memory').flavor('f', { memory: { nominalQuota: '1Gi', lendingLimit: '1024Mi' } })),
    );
  });

  test('rule: quotas are quantities >= 0 and nominalQuota is required', () => {
    refused(
      cq().groups(group('cpu').flavor('f', { cpu: '-1' })),
      'spec.resourceGroups[0].flavors[0].resources[0].nominalQuota',
      'Invalid value: "-1": must be greater than or equal to 0',
    );
    refused(
      cq().groups(group('cpu').flavor('f', { cpu: '10ki' })),
      'spec.resourceGroups[0].flavors[0].resources[0].nominalQuota',
      /^Invalid value: "10ki": unable to parse quantity's suffix/,
    );
    refused(
      cq().groups(group('cpu').flavor('f', { cpu: {} })),
      'spec.resourceGroups[0].flavors[0].resources[0].nominalQuota',
      /^is required: the quota of cpu in this flavor/,
    );
    refused(
      cq()
        .cohort('c')
        .groups(group('cpu').flavor('f', { cpu: { nominalQuota: '1', borrowingLimit: true } })),
      'spec.resourceGroups[0].flavors[0].resources[0].borrowingLimit',
      'must be a quantity such as "4", "500m" or "16Gi", got boolean true',
    );
  });

  test('rule: resource names are qualified names', () => {
    const errors = errorsOf(cq().groups(group('bad name').flavor('f', { 'bad name': 1 })));
    assert.deepEqual(
      errors.map((e) => e.field),
      ['spec.resourceGroups[0].coveredResources[0]', 'spec.resourceGroups[0].flavors[0].resources[0].name'],
    );
    assert.match(errors[0].detail, /^"bad name": not a valid resource name: .* \(e\.g\. cpu or nvidia\.com\/gpu\)$/);
  });

  test('rule: flavor and cohort names are RFC 1123 subdomains', () => {
    refused(cq().groups(group('cpu').flavor('On-Demand', { cpu: 1 })), 'spec.resourceGroups[0].flavors[0].name', /is not a valid name/);
    refused(cq().cohort('Team_A'), 'spec.cohortName', /is not a valid name/);
  });

  test('rule (CEL): reclaimWithinCohort=Never forbids borrowWithinCohort.policy other than Never', () => {
    const message =
      'reclaimWithinCohort=Never and borrowWithinCohort.Policy!=Never: set reclaimWithinCohort to LowerPriority or Any, or borrowWithinCohort.policy to Never';
    refused(
      cq()
        .cohort('c')
        .preemption({ borrowWithinCohort: { policy: 'LowerPriority' } }),
      'spec.preemption',
      message,
    );
    refused(
      cq()
        .cohort('c')
        .preemption({ reclaimWithinCohort: 'Never', borrowWithinCohort: { policy: 'LowerPriority' } }),
      'spec.preemption',
      message,
    );
    accepted(
      cq()
        .cohort('c')
        .preemption({ reclaimWithinCohort: 'Never', borrowWithinCohort: { policy: 'Never' } }),
    );
    accepted(
      cq()
        .cohort('c')
        .preemption({ reclaimWithinCohort: 'LowerPriority', borrowWithinCohort: { policy: 'LowerPriority' } }),
    );
  });

  test('rule: flavorFungibility.preference only when whenCanBorrow and whenCanPreempt are both TryNextFlavor', () => {
    refused(
      cq().fungibility({ preference: 'BorrowingOverPreemption' }),
      'spec.flavorFungibility.preference',
      'is allowed only when whenCanBorrow and whenCanPreempt are both TryNextFlavor (got whenCanBorrow MayStopSearch, whenCanPreempt TryNextFlavor); remove preference or set both to TryNextFlavor',
    );
    accepted(cq().fungibility({ whenCanBorrow: 'TryNextFlavor', preference: 'BorrowingOverPreemption' }));
  });

  test('enums: a wrong value is refused with the accepted values', () => {
    refused(
      cq().set('spec.queueingStrategy', 'FIFO'),
      'spec.queueingStrategy',
      'must be one of "StrictFIFO", "BestEffortFIFO", got "FIFO"',
    );
    refused(cq().set('spec.stopPolicy', 'Drain'), 'spec.stopPolicy', 'must be one of "None", "Hold", "HoldAndDrain", got "Drain"');
    refused(
      cq().preemption({ reclaimWithinCohort: 'Always' }),
      'spec.preemption.reclaimWithinCohort',
      'must be one of "Never", "LowerPriority", "Any", got "Always"',
    );
    refused(
      cq().preemption({ withinClusterQueue: 'Any' }),
      'spec.preemption.withinClusterQueue',
      'must be one of "Never", "LowerPriority", "LowerOrNewerEqualPriority", got "Any"',
    );
    refused(
      cq().preemption({ reclaimWithinCohort: 'Any', borrowWithinCohort: { policy: 'Any' } }),
      'spec.preemption.borrowWithinCohort.policy',
      'must be one of "Never", "LowerPriority", got "Any"',
    );
    refused(
      cq().fungibility({ preference: 'Cheapest' }),
      'spec.flavorFungibility.preference',
      /^must be one of "BorrowingOverPreemption", "PreemptionOverBorrowing"/,
    );
  });

  test('v1beta2: the removed v1beta1 fields and values are refused with where they went', () => {
    refused(
      cq().fungibility({ whenCanBorrow: 'Borrow' }),
      'spec.flavorFungibility.whenCanBorrow',
      'must be one of "MayStopSearch", "TryNextFlavor", got "Borrow": "Borrow" is kueue.x-k8s.io/v1beta1; kueue.x-k8s.io/v1beta2 writes MayStopSearch (same meaning)',
    );
    refused(
      cq().fungibility({ whenCanPreempt: 'Preempt' }),
      'spec.flavorFungibility.whenCanPreempt',
      /"Preempt" is kueue.x-k8s.io\/v1beta1/,
    );
    refused(
      cq().set('spec.cohort', 'c'),
      'spec.cohort',
      'is kueue.x-k8s.io/v1beta1; in kueue.x-k8s.io/v1beta2 the cohort is spec.cohortName',
    );
    refused(
      cq().set('spec.admissionChecks', ['prov']),
      'spec.admissionChecks',
      /^was removed in kueue.x-k8s.io\/v1beta2: write admissionChecksStrategy/,
    );
  });

  test('v1beta1 is normalized to v1beta2: cohort -> cohortName, admissionChecks -> admissionChecksStrategy, Borrow/Preempt -> MayStopSearch', () => {
    const q = accepted<ClusterQueue>(
      cq('cq', V1B1)
        .cohort('research')
        .set('spec.admissionChecks', ['prov'])
        .fungibility({ whenCanPreempt: 'Preempt' })
        .groups(group('cpu').flavor('f', { cpu: { nominalQuota: 4, borrowingLimit: 2 } })),
    );
    assert.equal(q.apiVersion, V1B2);
    assert.equal(q.spec.cohortName, 'research');
    assert.equal('cohort' in q.spec, false);
    assert.equal('admissionChecks' in q.spec, false);
    assert.deepEqual(q.spec.admissionChecksStrategy, { admissionChecks: [{ name: 'prov' }] });
    assert.deepEqual(q.spec.flavorFungibility, { whenCanBorrow: 'MayStopSearch', whenCanPreempt: 'MayStopSearch' });
    // A v1beta2 object is returned as it is.
    const v2 = accepted<ClusterQueue>(cq());
    assert.equal(normalizeClusterQueue(v2), v2);
  });

  test('v1beta1: messages name spec.cohort, and spec.cohortName is refused', () => {
    refused(
      cq('cq', V1B1).groups(group('cpu').flavor('f', { cpu: { nominalQuota: '10', borrowingLimit: '5' } })),
      'spec.resourceGroups[0].flavors[0].resources[0].borrowingLimit',
      /^borrowingLimit must be nil when cohort is empty: set spec.cohort or remove borrowingLimit/,
    );
    refused(
      cq('cq', V1B1).set('spec.cohortName', 'c'),
      'spec.cohortName',
      'is kueue.x-k8s.io/v1beta2; in kueue.x-k8s.io/v1beta1 the cohort is spec.cohort',
    );
  });

  test('v1beta1: admissionChecks and admissionChecksStrategy are not both set', () => {
    refused(
      cq('cq', V1B1)
        .set('spec.admissionChecks', ['a'])
        .set('spec.admissionChecksStrategy', { admissionChecks: [{ name: 'b' }] }),
      'spec.admissionChecks',
      'set admissionChecks or admissionChecksStrategy, not both',
    );
  });

  test('errors name the file, document, object and field', () => {
    const r = parseObject(
      cq()
        .cohort('c')
        .preemption({ borrowWithinCohort: { policy: 'LowerPriority' } })
        .get(),
      WHERE,
    );
    assert.match(r.errors[0].message, /^q\.yaml, document 1, ClusterQueue\/cq, spec\.preemption: reclaimWithinCohort=Never/);
  });

  test('every rule is reported, not only the first', () => {
    const errors = errorsOf(
      cq()
        .preemption({ borrowWithinCohort: { policy: 'LowerPriority' } })
        .groups(
          group('cpu', 'memory').flavor('f', { cpu: { nominalQuota: '1', borrowingLimit: '1' } }),
          group('cpu').flavor('f', { cpu: '1' }),
        ),
    );
    assert.deepEqual(errors.map((e) => e.field).sort(), [
      'spec.preemption',
      'spec.resourceGroups[0].flavors[0].resources',
      'spec.resourceGroups[0].flavors[0].resources[0].borrowingLimit',
      'spec.resourceGroups[1].coveredResources[0]',
      'spec.resourceGroups[1].flavors[0].name',
    ]);
  });

  test('validateClusterQueue takes a typed ClusterQueue', () => {
    const q: ClusterQueue = {
      apiVersion: V1B2,
      kind: 'ClusterQueue',
      metadata: { name: 'cq' },
      spec: {
        queueingStrategy: 'BestEffortFIFO',
        stopPolicy: 'None',
        flavorFungibility: { whenCanBorrow: 'MayStopSearch', whenCanPreempt: 'TryNextFlavor' },
        preemption: { reclaimWithinCohort: 'Never', withinClusterQueue: 'Never' },
        resourceGroups: [
          { coveredResources: ['cpu'], flavors: [{ name: 'f', resources: [{ name: 'cpu', nominalQuota: '1', borrowingLimit: '1' }] }] },
        ],
      },
    };
    assert.deepEqual(
      validateClusterQueue(q, {}).map((e) => e.where.field),
      ['spec.resourceGroups[0].flavors[0].resources[0].borrowingLimit'],
    );
  });

  test("Kueue's sample ClusterQueue and LocalQueue (YAML, v1beta1) are accepted", () => {
    const yaml = `
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata:
  name: "cluster-queue"
spec:
  namespaceSelector: {} # match all.
  resourceGroups:
  - coveredResources: ["cpu", "memory", "pods"]
    flavors:
    - name: "default-flavor"
      resources:
      - name: "cpu"
        nominalQuota: 9
      - name: "memory"
        nominalQuota: 36Gi
      - name: "pods"
        nominalQuota: 5
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata:
  namespace: "default"
  name: "user-queue"
spec:
  clusterQueue: "cluster-queue"
`;
    const { objects, errors } = parseManifests(yaml, 'queues.yaml');
    assert.deepEqual(errors, []);
    const q = accepted<ClusterQueue>(objects[0].object);
    assert.deepEqual(q.spec.namespaceSelector, {});
    assert.deepEqual(
      q.spec.resourceGroups![0].flavors[0].resources.map((r) => r.nominalQuota),
      ['9', '36Gi', '5'],
    );
    const lq = accepted<LocalQueue>(objects[1].object);
    assert.equal(lq.apiVersion, V1B2);
    assert.equal(lq.spec.clusterQueue, 'cluster-queue');
  });
});

// ---------------------------------------------------------------------------------------
// LocalQueue, Cohort, WorkloadPriorityClass
// ---------------------------------------------------------------------------------------

describe('LocalQueue', () => {
  test('spec.clusterQueue is kept; stopPolicy defaults to None; v1beta1 becomes v1beta2', () => {
    const lq = accepted<LocalQueue>(localQueue());
    assert.deepEqual(lq.spec, { clusterQueue: 'cq', stopPolicy: 'None' });
    assert.equal(accepted<LocalQueue>(localQueue('lq', V1B1)).apiVersion, V1B2);
    assert.equal(accepted<LocalQueue>(localQueue().set('spec.stopPolicy', 'Hold')).spec.stopPolicy, 'Hold');
  });

  test('rule: spec.clusterQueue is required', () => {
    refused(
      localQueue().set('spec', {}),
      'spec.clusterQueue',
      'is required: the name of the ClusterQueue this LocalQueue submits Workloads to',
    );
    refused(localQueue().set('spec.clusterQueue', 'CQ'), 'spec.clusterQueue', /is not a valid name/);
  });

  test('rule: stopPolicy is None, Hold or HoldAndDrain', () => {
    refused(localQueue().set('spec.stopPolicy', 'Stop'), 'spec.stopPolicy', 'must be one of "None", "Hold", "HoldAndDrain", got "Stop"');
  });

  test('rule: fairSharing.weight is a quantity >= 0', () => {
    assert.deepEqual(accepted<LocalQueue>(localQueue().set('spec.fairSharing', { weight: 2 })).spec.fairSharing, { weight: '2' });
    refused(
      localQueue().set('spec.fairSharing', { weight: '-1' }),
      'spec.fairSharing.weight',
      'Invalid value: "-1": must be greater than or equal to 0',
    );
  });
});

describe('Cohort (kueue.x-k8s.io/v1beta2)', () => {
  test('a Cohort with a parent and resource groups with limits is accepted', () => {
    const c = accepted<Cohort>(
      cohortObject()
        .set('spec.parentName', 'org')
        .set('spec.resourceGroups', [group('cpu').flavor('f', { cpu: { nominalQuota: '10', borrowingLimit: '5', lendingLimit: '5' } }).g]),
    );
    assert.equal(c.spec.parentName, 'org');
    accepted(new ObjectBuilder(V1B2, 'Cohort', 'root'));
  });

  test('rule: borrowingLimit and lendingLimit only with a parentName', () => {
    const errors = errorsOf(
      cohortObject().set('spec.resourceGroups', [
        group('cpu').flavor('f', { cpu: { nominalQuota: '10', borrowingLimit: '5', lendingLimit: '5' } }).g,
      ]),
    );
    assert.deepEqual(errors, [
      {
        field: 'spec.resourceGroups[0].flavors[0].resources[0].borrowingLimit',
        detail:
          'must be nil when parentName is empty: a root Cohort has no parent to borrow from; set spec.parentName or remove borrowingLimit',
      },
      {
        field: 'spec.resourceGroups[0].flavors[0].resources[0].lendingLimit',
        detail:
          'Invalid value: "5": must be nil when parentName is empty: a root Cohort has no parent to lend to; set spec.parentName or remove lendingLimit',
      },
    ]);
  });

  test('rule: the resource-group rules of a ClusterQueue apply', () => {
    refused(
      cohortObject().set('spec.resourceGroups', [group('cpu', 'memory').flavor('f', { cpu: '1' }).g]),
      'spec.resourceGroups[0].flavors[0].resources',
      /^flavors must have the same number of resources as the coveredResources/,
    );
  });

  test('rule: a Cohort is not its own parent', () => {
    refused(
      cohortObject('team').set('spec.parentName', 'team'),
      'spec.parentName',
      '"team" is this Cohort: a Cohort cannot be its own parent',
    );
  });

  test('only v1beta2 is accepted', () => {
    refused(
      new ObjectBuilder(V1B1, 'Cohort', 'c'),
      'apiVersion',
      'Cohort is not accepted with apiVersion "kueue.x-k8s.io/v1beta1"; accepted: kueue.x-k8s.io/v1beta2',
    );
  });
});

describe('WorkloadPriorityClass', () => {
  test('value and description sit at the top level; v1beta1 becomes v1beta2', () => {
    const wpc = accepted<WorkloadPriorityClass>(priorityClass().set('description', 'production jobs'));
    assert.equal(wpc.value, 1000);
    assert.equal(wpc.description, 'production jobs');
    assert.equal(accepted<WorkloadPriorityClass>(priorityClass('p', V1B1).set('value', -5)).apiVersion, V1B2);
  });

  test('rule: value is a required int32', () => {
    const noValue = priorityClass().get() as unknown as Raw;
    delete noValue.value;
    refused(noValue as unknown as KObject, 'value', 'is required: the priority of the Workloads of this class, a whole number');
    refused(
      priorityClass().set('value', 1.5),
      'value',
      /^must be a whole number \(the priority of the Workloads of this class\), an int32/,
    );
    refused(priorityClass().set('value', '10'), 'value', /^must be a whole number/);
    refused(priorityClass().set('value', 2 ** 31), 'value', 'must be at most 2147483647 (int32)');
    accepted(priorityClass().set('value', -(2 ** 31)));
  });
});

describe('registry', () => {
  test('the queue kinds are accepted kinds', () => {
    const kinds = knownKinds().map((k) => `${k.apiVersion} ${k.kind}`);
    for (const k of [
      `${V1B2} ClusterQueue`,
      `${V1B1} ClusterQueue`,
      `${V1B2} LocalQueue`,
      `${V1B1} LocalQueue`,
      `${V1B2} Cohort`,
      `${V1B2} WorkloadPriorityClass`,
      `${V1B1} WorkloadPriorityClass`,
    ]) {
      assert.ok(kinds.includes(k), k);
    }
  });
});
