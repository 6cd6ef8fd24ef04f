import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Where } from './errors.ts';
import { parseManifests } from './manifest.ts';
import type { KObject } from './objects.ts';
import { parseObject } from './schemas.ts';
import {
  VolcanoMessage,
  networkTopologyOf,
  podGroupAnnotationsTopology,
  validateHyperJob,
  validateHyperNode,
  validateVolcanoJob,
  validateVolcanoPodGroup,
} from './volcano.ts';
import {
  VolcanoAnnotation,
  VolcanoApiVersion,
  type HyperJob,
  type HyperNode,
  type VolcanoJob,
  type VolcanoPodGroup,
} from './volcano-objects.ts';

// ---------------------------------------------------------------------------------------
// Fixture builders
// ---------------------------------------------------------------------------------------

type Raw = Record<string, unknown>;

class ObjectBuilder {
  protected o: Raw;
  constructor(apiVersion: string, kind: string, name: string, namespace?: string) {
    this.o = { apiVersion, kind, metadata: namespace ? { name, namespace } : { name }, spec: {} };
  }
  protected get spec(): Raw {
    return this.o.spec as Raw;
  }
  /** Writes `value` at a dotted path under the object, e.g. `spec.tier`. */
  set(path: string, value: unknown): this {
    const keys = path.split('.');
    let at = this.o;
    for (const k of keys.slice(0, -1)) at = (at[k] ??= {}) as Raw;
    at[keys[keys.length - 1]] = value;
    return this;
  }
  without(path: string): this {
    const keys = path.split('.');
    let at = this.o;
    for (const k of keys.slice(0, -1)) at = at[k] as Raw;
    delete at[keys[keys.length - 1]];
    return this;
  }
  get(): KObject {
    return structuredClone(this.o) as unknown as KObject;
  }
}

class HyperNodeBuilder extends ObjectBuilder {
  constructor(name: string) {
    super(VolcanoApiVersion.HyperNode, 'HyperNode', name);
    this.spec.members = [];
  }
  tier(t: unknown): this {
    return this.set('spec.tier', t);
  }
  member(m: Raw): this {
    (this.spec.members as Raw[]).push(m);
    return this;
  }
  node(name: string): this {
    return this.member({ type: 'Node', selector: { exactMatch: { name } } });
  }
  nodes(pattern: string): this {
    return this.member({ type: 'Node', selector: { regexMatch: { pattern } } });
  }
  labelled(labelMatch: Raw): this {
    return this.member({ type: 'Node', selector: { labelMatch } });
  }
  child(name: string): this {
    return this.member({ type: 'HyperNode', selector: { exactMatch: { name } } });
  }
}
const hyperNode = (name: string) => new HyperNodeBuilder(name);

const podTemplate = { spec: { containers: [{ name: 'c', resources: { requests: { cpu: '1' } } }] } };

class TaskBuilder {
  readonly t: Raw;
  constructor(name?: string) {
    this.t = { ...(name !== undefined ? { name } : {}), template: podTemplate };
  }
  replicas(n: unknown): this {
    this.t.replicas = n;
    return this;
  }
  minAvailable(n: number): this {
    this.t.minAvailable = n;
    return this;
  }
  partitions(p: Raw): this {
    this.t.partitionPolicy = p;
    return this;
  }
}
const task = (name?: string) => new TaskBuilder(name);

/** A Volcano JobSpec, used by Job and by HyperJob replicatedJobs. */
const jobSpec = (...tasks: TaskBuilder[]): Raw => ({ tasks: tasks.map((t) => t.t) });

class VolcanoJobBuilder extends ObjectBuilder {
  constructor(name: string) {
    super(VolcanoApiVersion.Job, 'Job', name, 'ns');
    this.spec.tasks = [];
  }
  tasks(...ts: TaskBuilder[]): this {
    this.spec.tasks = ts.map((t) => t.t);
    return this;
  }
  topology(nt: unknown): this {
    return this.set('spec.networkTopology', nt);
  }
  minAvailable(n: number): this {
    return this.set('spec.minAvailable', n);
  }
}
const vcjob = (name = 'job') => new VolcanoJobBuilder(name);

class PodGroupBuilder extends ObjectBuilder {
  constructor(name: string) {
    super(VolcanoApiVersion.PodGroup, 'PodGroup', name, 'ns');
  }
  subGroup(p: Raw): this {
    ((this.spec.subGroupPolicy ??= []) as Raw[]).push(p);
    return this;
  }
}
const podGroup = (name = 'pg') => new PodGroupBuilder(name);

class HyperJobBuilder extends ObjectBuilder {
  constructor(name: string) {
    super(VolcanoApiVersion.HyperJob, 'HyperJob', name, 'ns');
    this.spec.replicatedJobs = [];
  }
  replicated(rj: Raw): this {
    (this.spec.replicatedJobs as Raw[]).push(rj);
    return this;
  }
}
const hyperJob = (name = 'hj') => new HyperJobBuilder(name);

const WHERE: Where = { file: 'v.yaml', document: 1 };

function errorsOf(o: KObject): { field: string | undefined; detail: string }[] {
  return parseObject(o, WHERE).errors.map((e) => ({ field: e.where.field, detail: e.detail }));
}

function accepted(o: KObject): KObject {
  const r = parseObject(o, WHERE);
  assert.deepEqual(
    r.errors.map((e) => e.message),
    [],
  );
  return r.object!;
}

/** Exactly one error, at `field`, whose detail is `detail` (string: equal; RegExp: match). */
function refused(o: KObject, field: string, detail: string | RegExp): void {
  const errors = errorsOf(o);
  assert.equal(errors.length, 1, `expected one error, got ${JSON.stringify(errors, null, 1)}`);
  assert.equal(errors[0].field, field);
  if (typeof detail === 'string') assert.equal(errors[0].detail, detail);
  else assert.match(errors[0].detail, detail);
}

// ---------------------------------------------------------------------------------------
// HyperNode
// ---------------------------------------------------------------------------------------

describe('HyperNode', () => {
  test('a HyperNode of node members and one of HyperNode members are accepted', () => {
    accepted(
      hyperNode('leaf-a')
        .tier(1)
        .node('node-0')
        .nodes('^gpu-[0-9]+$')
        .labelled({ matchLabels: { rack: 'r1' } })
        .get(),
    );
    accepted(hyperNode('spine').tier(2).set('spec.tierName', 'volcano.sh/spine').child('leaf-a').child('leaf-b').get());
  });

  test('tier: absent reads as 0', () => {
    const hn = accepted(hyperNode('s').node('n').without('spec.tier').get()) as HyperNode;
    assert.equal(hn.spec.tier, 0);
    assert.equal((accepted(hyperNode('s').tier(0).node('n').get()) as HyperNode).spec.tier, 0);
  });

  test('tier: a whole number >= 0', () => {
    refused(hyperNode('s').tier(-1).node('n').get(), 'spec.tier', 'must be at least 0, got -1');
    refused(hyperNode('s').tier(1.5).node('n').get(), 'spec.tier', /must be a whole number/);
    refused(hyperNode('s').tier('1').node('n').get(), 'spec.tier', 'must be a whole number, got the string "1"');
  });

  test('tierName: at most 253 characters', () => {
    accepted(hyperNode('s').set('spec.tierName', 'x'.repeat(253)).node('n').get());
    refused(hyperNode('s').set('spec.tierName', 'x'.repeat(254)).node('n').get(), 'spec.tierName', 'must be at most 253 characters long');
  });

  test('members: at least one (member must have at least one member)', () => {
    refused(hyperNode('s').get(), 'spec.members', VolcanoMessage.NoMembers);
    refused(hyperNode('s').without('spec.members').get(), 'spec.members', 'member must have at least one member');
    refused(hyperNode('s').without('spec').get(), 'spec.members', 'member must have at least one member');
  });

  test('member type: Node or HyperNode, required', () => {
    refused(
      hyperNode('s')
        .member({ selector: { exactMatch: { name: 'n' } } })
        .get(),
      'spec.members[0].type',
      /is required: "Node" .* or "HyperNode"/,
    );
    refused(
      hyperNode('s')
        .member({ type: 'node', selector: { exactMatch: { name: 'n' } } })
        .get(),
      'spec.members[0].type',
      'must be one of "Node", "HyperNode", got the string "node"',
    );
  });

  test('member selector: one of exactMatch, regexMatch or labelMatch is required', () => {
    refused(
      hyperNode('s').member({ type: 'Node' }).get(),
      'spec.members[0].selector',
      'member selector must have one of exactMatch, regexMatch, or labelMatch',
    );
    refused(hyperNode('s').member({ type: 'Node', selector: {} }).get(), 'spec.members[0].selector', VolcanoMessage.NoSelector);
  });

  test("member selector: the seed's draft form (`- name: node0`) is refused with the API form", () => {
    const errors = errorsOf(hyperNode('s0').tier(1).member({ name: 'node0' }).get());
    assert.deepEqual(
      errors.map((e) => e.field),
      ['spec.members[0].type', 'spec.members[0].selector'],
    );
    assert.equal(
      errors[1].detail,
      'member selector must have one of exactMatch, regexMatch, or labelMatch; a member is written {type: Node, selector: {exactMatch: {name: "node0"}}}, not with a name of its own',
    );
  });

  test('member selector: more than one selector type is refused', () => {
    refused(
      hyperNode('s')
        .member({ type: 'Node', selector: { exactMatch: { name: 'n' }, regexMatch: { pattern: 'n' } } })
        .get(),
      'spec.members[0].selector',
      'cannot specify more than one selector type (exactMatch, regexMatch, labelMatch)',
    );
    refused(
      hyperNode('s')
        .member({ type: 'Node', selector: { regexMatch: { pattern: 'n' }, labelMatch: { matchLabels: { a: 'b' } } } })
        .get(),
      'spec.members[0].selector',
      VolcanoMessage.SeveralSelectors,
    );
  });

  test('exactMatch name: required', () => {
    refused(
      hyperNode('s')
        .member({ type: 'Node', selector: { exactMatch: {} } })
        .get(),
      'spec.members[0].selector.exactMatch.name',
      'member exactMatch name is required',
    );
    refused(hyperNode('s').node('').get(), 'spec.members[0].selector.exactMatch.name', VolcanoMessage.ExactNameRequired);
  });

  test('exactMatch name: a DNS subdomain of at most 253 characters', () => {
    accepted(
      hyperNode('s')
        .node('ip-10-0-0-1.ec2.internal')
        .node(`${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(61)}`)
        .get(),
    );
    for (const bad of ['Node_1', 'node-', '-node', 'NODE', 'a..b']) {
      refused(
        hyperNode('s').node(bad).get(),
        'spec.members[0].selector.exactMatch.name',
        /^member exactMatch validate failed \[a lowercase RFC 1123 subdomain must consist of/,
      );
    }
    refused(
      hyperNode('s').node('a'.repeat(254)).get(),
      'spec.members[0].selector.exactMatch.name',
      'member exactMatch validate failed [must be no more than 253 characters]',
    );
  });

  test('regexMatch pattern: required', () => {
    refused(hyperNode('s').nodes('').get(), 'spec.members[0].selector.regexMatch.pattern', 'member regexMatch pattern is required');
    refused(
      hyperNode('s')
        .member({ type: 'Node', selector: { regexMatch: {} } })
        .get(),
      'spec.members[0].selector.regexMatch.pattern',
      VolcanoMessage.RegexPatternRequired,
    );
  });

  test('regexMatch pattern: must compile as Go RE2 (the error is the Go regexp error)', () => {
    refused(
      hyperNode('s').nodes('node-(').get(),
      'spec.members[0].selector.regexMatch.pattern',
      'member regexMatch pattern is invalid: error parsing regexp: missing closing ): `node-(`',
    );
    refused(
      hyperNode('s').nodes('node-[0-9').get(),
      'spec.members[0].selector.regexMatch.pattern',
      'member regexMatch pattern is invalid: error parsing regexp: missing closing ]: `[0-9`',
    );
  });

  test('regexMatch pattern: RE2-unsupported syntax (backreference, lookahead) is refused', () => {
    refused(
      hyperNode('s').nodes('(a)\\1').get(),
      'spec.members[0].selector.regexMatch.pattern',
      'member regexMatch pattern is invalid: error parsing regexp: invalid escape sequence: `\\1`',
    );
    refused(
      hyperNode('s').nodes('node(?=-gpu)').get(),
      'spec.members[0].selector.regexMatch.pattern',
      /^member regexMatch pattern is invalid: error parsing regexp: invalid or unsupported Perl syntax: `\(\?=`$/,
    );
    // Go-only syntax is accepted.
    accepted(hyperNode('s').nodes('^(?P<rack>r[0-9]+)-[[:digit:]]+\\z').get());
  });

  test('HyperNode members with regexMatch or labelMatch are accepted, as Volcano does (the tree ignores them with a note)', () => {
    accepted(
      hyperNode('spine')
        .tier(2)
        .member({ type: 'HyperNode', selector: { regexMatch: { pattern: '^leaf-' } } })
        .get(),
    );
    accepted(
      hyperNode('spine')
        .tier(2)
        .member({ type: 'HyperNode', selector: { labelMatch: { matchLabels: { tier: 'leaf' } } } })
        .get(),
    );
  });

  test('labelMatch: a valid label selector', () => {
    accepted(
      hyperNode('s')
        .labelled({
          matchExpressions: [
            { key: 'cloud.com/rack', operator: 'In', values: ['r1', 'r2'] },
            { key: 'gpu', operator: 'Exists' },
          ],
        })
        .get(),
    );
    // An empty selector is accepted, as by the peer (where it selects no node).
    accepted(hyperNode('s').labelled({}).get());
    refused(
      hyperNode('s')
        .labelled({ matchLabels: { 'bad key!': 'v' } })
        .get(),
      'spec.members[0].selector.labelMatch.matchLabels["bad key!"]',
      /^key "bad key!": not a valid label key/,
    );
    refused(
      hyperNode('s')
        .labelled({ matchLabels: { rack: 'bad value!' } })
        .get(),
      'spec.members[0].selector.labelMatch.matchLabels.rack',
      /^value "bad value!": not a valid label value/,
    );
    refused(
      hyperNode('s')
        .labelled({ matchExpressions: [{ key: 'rack', operator: 'In' }] })
        .get(),
      'spec.members[0].selector.labelMatch.matchExpressions[0].values',
      "Required value: must be specified when `operator` is 'In' or 'NotIn'",
    );
    refused(
      hyperNode('s')
        .labelled({ matchExpressions: [{ key: 'rack', operator: 'DoesNotExist', values: ['x'] }] })
        .get(),
      'spec.members[0].selector.labelMatch.matchExpressions[0].values',
      "Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
    );
    refused(
      hyperNode('s')
        .labelled({ matchExpressions: [{ key: 'rack', operator: 'Gt', values: ['1'] }] })
        .get(),
      'spec.members[0].selector.labelMatch.matchExpressions[0].operator',
      /^must be one of "In", "NotIn", "Exists", "DoesNotExist"/,
    );
  });

  test('every problem of every member is reported at once', () => {
    const errors = errorsOf(hyperNode('s').node('Bad_Name').nodes('(').member({ type: 'Node' }).get());
    assert.deepEqual(
      errors.map((e) => e.field),
      ['spec.members[0].selector.exactMatch.name', 'spec.members[1].selector.regexMatch.pattern', 'spec.members[2].selector'],
    );
  });

  test('validateHyperNode takes the typed HyperNode', () => {
    const hn: HyperNode = { apiVersion: VolcanoApiVersion.HyperNode, kind: 'HyperNode', metadata: { name: 's' }, spec: { members: [] } };
    assert.deepEqual(
      validateHyperNode(hn, { object: 'HyperNode/s' }).map((e) => e.message),
      ['HyperNode/s, spec.members: member must have at least one member'],
    );
  });
});

// ---------------------------------------------------------------------------------------
// networkTopology (Job, partitionPolicy, PodGroup, subGroupPolicy, HyperJob)
// ---------------------------------------------------------------------------------------

describe('networkTopology', () => {
  const withTopology = (nt: unknown) => vcjob().tasks(task('worker')).topology(nt).get();

  test('networkTopology mode: hard or soft, default hard', () => {
    assert.deepEqual((accepted(withTopology({ highestTierAllowed: 1 })) as VolcanoJob).spec.networkTopology, {
      mode: 'hard',
      highestTierAllowed: 1,
    });
    assert.deepEqual((accepted(withTopology({ mode: 'soft' })) as VolcanoJob).spec.networkTopology, { mode: 'soft' });
    refused(withTopology({ mode: 'Hard' }), 'spec.networkTopology.mode', 'must be one of "hard", "soft", got the string "Hard"');
  });

  test('networkTopology highestTierAllowed: a whole number >= 0', () => {
    accepted(withTopology({ highestTierAllowed: 0 }));
    refused(withTopology({ highestTierAllowed: -1 }), 'spec.networkTopology.highestTierAllowed', 'must be at least 0, got -1');
  });

  test('networkTopology highestTierName: 1 to 253 characters', () => {
    accepted(withTopology({ highestTierName: 'volcano.sh/hypernode' }));
    refused(
      withTopology({ highestTierName: 'x'.repeat(254) }),
      'spec.networkTopology.highestTierName',
      'must be at most 253 characters long',
    );
  });

  test("networkTopology: the seed's one-element list is normalized to the object", () => {
    const job = accepted(withTopology([{ mode: 'hard', highestTierAllowed: 1 }])) as VolcanoJob;
    assert.deepEqual(job.spec.networkTopology, { mode: 'hard', highestTierAllowed: 1 });
    refused(
      withTopology([{ mode: 'hard' }, { mode: 'soft' }]),
      'spec.networkTopology',
      'must be one object {mode, highestTierAllowed or highestTierName}; a list is accepted only with exactly one element, got 2',
    );
    refused(withTopology([]), 'spec.networkTopology', /a list is accepted only with exactly one element, got 0/);
  });

  test('networkTopology: highestTierAllowed and highestTierName together are refused (Job)', () => {
    refused(
      withTopology({ highestTierAllowed: 1, highestTierName: 'volcano.sh/hypernode' }),
      'spec.networkTopology',
      "must not specify 'highestTierAllowed' and 'highestTierName' in networkTopology simultaneously",
    );
  });

  test('networkTopologyOf: the normalized spec', () => {
    assert.equal(networkTopologyOf(undefined), undefined);
    assert.equal(networkTopologyOf({}), undefined);
    assert.deepEqual(networkTopologyOf({ networkTopology: {} }), { mode: 'hard' });
    assert.deepEqual(networkTopologyOf({ networkTopology: [{ mode: 'soft', highestTierAllowed: 2 }] }), {
      mode: 'soft',
      highestTierAllowed: 2,
    });
    assert.deepEqual(networkTopologyOf({ networkTopology: { highestTierName: 'volcano.sh/tor' } }), {
      mode: 'hard',
      highestTierName: 'volcano.sh/tor',
    });
    assert.equal(networkTopologyOf({ networkTopology: [{}, {}] }), undefined);
    assert.equal(networkTopologyOf({ networkTopology: 'hard' }), undefined);
    // Raw input: unreadable fields are dropped.
    assert.deepEqual(networkTopologyOf({ networkTopology: { mode: 'HARD', highestTierAllowed: '1' } }), { mode: 'hard' });
  });
});

// ---------------------------------------------------------------------------------------
// Volcano Job
// ---------------------------------------------------------------------------------------

describe('Volcano Job (batch.volcano.sh/v1alpha1)', () => {
  test('Job is keyed by apiVersion: batch/v1 and batch.volcano.sh/v1alpha1 are different kinds', () => {
    accepted(vcjob().tasks(task('worker').replicas(2)).get());
    // The same body as a batch/v1 Job lacks batch/v1's template.
    refused(vcjob().tasks(task('worker')).set('apiVersion', 'batch/v1').get(), 'spec.template', 'is required');
    refused(
      vcjob().set('apiVersion', 'topology.volcano.sh/v1alpha1').get(),
      'apiVersion',
      'Job is not accepted with apiVersion "topology.volcano.sh/v1alpha1"; accepted: batch/v1, batch.volcano.sh/v1alpha1',
    );
  });

  test('tasks: at least one', () => {
    refused(vcjob().get(), 'spec.tasks', 'No task specified in job spec');
    refused(vcjob().without('spec.tasks').get(), 'spec.tasks', 'No task specified in job spec');
  });

  test('task replicas: default 1, a whole number >= 0', () => {
    const job = accepted(vcjob().tasks(task('a'), task('b').replicas(0)).get()) as VolcanoJob;
    assert.deepEqual(
      job.spec.tasks.map((t) => t.replicas),
      [1, 0],
    );
    refused(vcjob().tasks(task('a').replicas(-1)).get(), 'spec.tasks[0].replicas', 'must be at least 0, got -1');
  });

  test('task name: default default<index>, a DNS label, unique', () => {
    const job = accepted(vcjob().tasks(task(), task('worker'), task()).get()) as VolcanoJob;
    assert.deepEqual(
      job.spec.tasks.map((t) => t.name),
      ['default0', 'worker', 'default2'],
    );
    refused(vcjob().tasks(task('Worker')).get(), 'spec.tasks[0].name', /is not a valid name/);
    refused(vcjob().tasks(task('w'), task('w')).get(), 'spec.tasks[1].name', 'duplicated task name w');
  });

  test('task template: a pod template', () => {
    const t = task('w');
    t.t.template = { spec: { containers: [] } };
    refused(vcjob().tasks(t).get(), 'spec.tasks[0].template.spec.containers', 'a pod needs at least one container');
  });

  test("task minAvailable: at most the task's replicas", () => {
    accepted(vcjob().tasks(task('w').replicas(4).minAvailable(4)).get());
    refused(
      vcjob().tasks(task('w').replicas(4).minAvailable(5)).get(),
      'spec.tasks[0].minAvailable',
      "'minAvailable' is greater than 'replicas' in task: w, job: job",
    );
  });

  test("job minAvailable: at most the tasks' total replicas", () => {
    accepted(vcjob().tasks(task('a').replicas(2), task('b').replicas(2)).minAvailable(4).get());
    refused(
      vcjob().tasks(task('a').replicas(2), task('b').replicas(2)).minAvailable(5).get(),
      'spec.minAvailable',
      "job 'minAvailable' should not be greater than total replicas in tasks",
    );
    refused(vcjob().tasks(task('a')).minAvailable(-1).get(), 'spec.minAvailable', 'must be at least 0, got -1');
  });

  test('partitionPolicy: a consistent policy is accepted (minPartitions defaults to 0)', () => {
    const job = accepted(
      vcjob()
        .tasks(
          task('w')
            .replicas(8)
            .partitions({ totalPartitions: 4, partitionSize: 2, networkTopology: { highestTierAllowed: 1 } }),
        )
        .get(),
    ) as VolcanoJob;
    assert.deepEqual(job.spec.tasks[0].partitionPolicy, {
      totalPartitions: 4,
      partitionSize: 2,
      minPartitions: 0,
      networkTopology: { mode: 'hard', highestTierAllowed: 1 },
    });
  });

  test("partitionPolicy: 'PartitionSize' must be greater than 0", () => {
    refused(
      vcjob('train')
        .tasks(task('w').replicas(0).partitions({ totalPartitions: 4, partitionSize: 0 }))
        .get(),
      'spec.tasks[0].partitionPolicy.partitionSize',
      "'PartitionSize' must be greater than 0 in task: w, job: train",
    );
    refused(
      vcjob('train')
        .tasks(task('w').replicas(0).partitions({ totalPartitions: 4 }))
        .get(),
      'spec.tasks[0].partitionPolicy.partitionSize',
      "'PartitionSize' must be greater than 0 in task: w, job: train",
    );
  });

  test("partitionPolicy: 'TotalPartitions' must be greater than 0", () => {
    refused(
      vcjob('train')
        .tasks(task('w').replicas(0).partitions({ totalPartitions: -1, partitionSize: 2 }))
        .get(),
      'spec.tasks[0].partitionPolicy.totalPartitions',
      "'TotalPartitions' must be greater than 0 in task: w, job: train",
    );
  });

  test("partitionPolicy: 'Replicas' must equal TotalPartitions*PartitionSize", () => {
    refused(
      vcjob('train')
        .tasks(task('w').replicas(7).partitions({ totalPartitions: 4, partitionSize: 2 }))
        .get(),
      'spec.tasks[0].replicas',
      "'Replicas' are not equal to TotalPartitions*PartitionSize in task: w, job: train",
    );
    // replicas defaults to 1
    refused(
      vcjob('train')
        .tasks(task('w').partitions({ totalPartitions: 4, partitionSize: 2 }))
        .get(),
      'spec.tasks[0].replicas',
      /^'Replicas' are not equal/,
    );
  });

  test("partitionPolicy: 'MinAvailable' must equal MinPartitions*PartitionSize when minPartitions > 0", () => {
    accepted(
      vcjob()
        .tasks(task('w').replicas(8).minAvailable(4).partitions({ totalPartitions: 4, partitionSize: 2, minPartitions: 2 }))
        .get(),
    );
    refused(
      vcjob('train')
        .tasks(task('w').replicas(8).minAvailable(5).partitions({ totalPartitions: 4, partitionSize: 2, minPartitions: 2 }))
        .get(),
      'spec.tasks[0].minAvailable',
      "'MinAvailable' is not equal to MinPartitions*PartitionSize in task: w, job: train",
    );
    // A task's minAvailable defaults to its replicas.
    accepted(
      vcjob()
        .tasks(task('w').replicas(8).partitions({ totalPartitions: 4, partitionSize: 2, minPartitions: 4 }))
        .get(),
    );
    refused(
      vcjob('train')
        .tasks(task('w').replicas(8).partitions({ totalPartitions: 4, partitionSize: 2, minPartitions: 2 }))
        .get(),
      'spec.tasks[0].partitionPolicy.minPartitions',
      "'MinAvailable' is not equal to MinPartitions*PartitionSize in task: w, job: train",
    );
    // Not checked when minPartitions is 0.
    accepted(
      vcjob()
        .tasks(task('w').replicas(8).minAvailable(3).partitions({ totalPartitions: 4, partitionSize: 2 }))
        .get(),
    );
    refused(
      vcjob()
        .tasks(task('w').replicas(8).partitions({ totalPartitions: 4, partitionSize: 2, minPartitions: -1 }))
        .get(),
      'spec.tasks[0].partitionPolicy.minPartitions',
      'must be at least 0, got -1',
    );
  });

  test('partitionPolicy networkTopology: highestTierAllowed and highestTierName together are refused', () => {
    refused(
      vcjob()
        .tasks(
          task('w')
            .replicas(4)
            .partitions({ totalPartitions: 2, partitionSize: 2, networkTopology: [{ highestTierAllowed: 1, highestTierName: 'x' }] }),
        )
        .get(),
      'spec.tasks[0].partitionPolicy.networkTopology',
      "must not specify 'highestTierAllowed' and 'highestTierName' in networkTopology simultaneously",
    );
  });

  test("the seed's Volcano Job sample (with the real apiVersion) is accepted", () => {
    const yaml = `
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata:
  name: pytorch-job
spec:
  minAvailable: 1
  schedulerName: volcano
  networkTopology:
  - mode: hard
    highestTierAllowed: 1
  plugins:
    pytorch: ["--master=master","--worker=worker","--port=23456"]
  tasks:
    - replicas: 1
      name: master
      policies:
        - event: TaskCompleted
          action: CompleteJob
      template:
        spec:
          containers:
            - image: gcr.io/kubeflow-ci/pytorch-dist-sendrecv-test:1.0
              imagePullPolicy: IfNotPresent
              name: master
          restartPolicy: OnFailure
    - replicas: 2
      name: worker
      template:
        spec:
          containers:
            - image: gcr.io/kubeflow-ci/pytorch-dist-sendrecv-test:1.0
              imagePullPolicy: IfNotPresent
              name: worker
              workingDir: /home
          restartPolicy: OnFailure
`;
    const { objects, errors } = parseManifests(yaml, 'job.yaml');
    assert.deepEqual(errors, []);
    const job = accepted(objects[0].object) as VolcanoJob;
    assert.deepEqual(job.spec.networkTopology, { mode: 'hard', highestTierAllowed: 1 });
    assert.deepEqual(job.spec.plugins, { pytorch: ['--master=master', '--worker=worker', '--port=23456'] });
    assert.deepEqual(job.spec.tasks[0].policies, [{ event: 'TaskCompleted', action: 'CompleteJob' }]);
  });

  test('validateVolcanoJob takes the typed Job', () => {
    const job: VolcanoJob = {
      apiVersion: VolcanoApiVersion.Job,
      kind: 'Job',
      metadata: { name: 'j' },
      spec: { networkTopology: { highestTierAllowed: 1, highestTierName: 't' }, tasks: [{ name: 'w', template: podTemplate }] },
    };
    assert.deepEqual(
      validateVolcanoJob(job, {}).map((e) => e.message),
      [`spec.networkTopology: ${VolcanoMessage.JobTierConflict}`],
    );
  });
});

// ---------------------------------------------------------------------------------------
// PodGroup
// ---------------------------------------------------------------------------------------

describe('PodGroup (scheduling.volcano.sh/v1beta1)', () => {
  test('minMember: a whole number >= 0', () => {
    accepted(podGroup().set('spec.minMember', 4).get());
    refused(podGroup().set('spec.minMember', -1).get(), 'spec.minMember', 'must be at least 0, got -1');
  });

  test('minResources: quantities', () => {
    const pg = accepted(podGroup().set('spec.minResources', { cpu: 4, memory: '16Gi', 'nvidia.com/gpu': '8' }).get()) as VolcanoPodGroup;
    assert.deepEqual(pg.spec.minResources, { cpu: '4', memory: '16Gi', 'nvidia.com/gpu': '8' });
    refused(podGroup().set('spec.minResources', { cpu: 'lots' }).get(), 'spec.minResources.cpu', /^Invalid value: "lots"/);
  });

  test('PodGroup networkTopology: highestTierAllowed and highestTierName together are refused', () => {
    refused(
      podGroup().set('spec.networkTopology', { mode: 'hard', highestTierAllowed: 2, highestTierName: 'volcano.sh/spine' }).get(),
      'spec.networkTopology',
      "must not specify 'highestTierAllowed' and 'highestTierName' in networkTopology simultaneously.",
    );
  });

  test('subGroupPolicy networkTopology: highestTierAllowed and highestTierName together are refused', () => {
    refused(
      podGroup()
        .subGroup({ name: 'worker', networkTopology: { highestTierAllowed: 1, highestTierName: 'volcano.sh/tor' } })
        .get(),
      'spec.subGroupPolicy[0].networkTopology',
      "in subGroupPolicy 'worker': must not specify 'highestTierAllowed' and 'highestTierName' in networkTopology simultaneously.",
    );
  });

  test('subGroupPolicy: subGroupSize default 1 and >= 1, minSubGroups default 0 and >= 0', () => {
    const pg = accepted(podGroup().subGroup({ name: 'w' }).get()) as VolcanoPodGroup;
    assert.deepEqual(pg.spec.subGroupPolicy, [{ name: 'w', subGroupSize: 1, minSubGroups: 0 }]);
    refused(podGroup().subGroup({ name: 'w', subGroupSize: 0 }).get(), 'spec.subGroupPolicy[0].subGroupSize', 'must be at least 1, got 0');
    refused(
      podGroup().subGroup({ name: 'w', minSubGroups: -1 }).get(),
      'spec.subGroupPolicy[0].minSubGroups',
      'must be at least 0, got -1',
    );
  });

  test('subGroupPolicy: name required and unique', () => {
    refused(podGroup().subGroup({}).get(), 'spec.subGroupPolicy[0].name', 'is required');
    refused(
      podGroup().subGroup({ name: 'w' }).subGroup({ name: 'w' }).get(),
      'spec.subGroupPolicy[1].name',
      '"w" is already spec.subGroupPolicy[0]: subGroupPolicy names must be unique',
    );
  });

  test('subGroupPolicy: labelSelector is a valid label selector, matchLabelKeys are label keys', () => {
    const policy = {
      name: 'w',
      subGroupSize: 2,
      minSubGroups: 4,
      labelSelector: { matchLabels: { 'volcano.sh/task-spec': 'w' } },
      matchLabelKeys: ['volcano.sh/partition-id'],
      networkTopology: [{ mode: 'hard', highestTierAllowed: 1 }],
    };
    const pg = accepted(podGroup().set('spec.minMember', 8).subGroup(policy).get()) as VolcanoPodGroup;
    assert.deepEqual(pg.spec.subGroupPolicy![0].networkTopology, { mode: 'hard', highestTierAllowed: 1 });
    refused(
      podGroup()
        .subGroup({ name: 'w', labelSelector: { matchExpressions: [{ key: 'a', operator: 'NotIn', values: [] }] } })
        .get(),
      'spec.subGroupPolicy[0].labelSelector.matchExpressions[0].values',
      /^Required value/,
    );
    refused(
      podGroup()
        .subGroup({ name: 'w', matchLabelKeys: ['not a key'] })
        .get(),
      'spec.subGroupPolicy[0].matchLabelKeys[0]',
      /^"not a key": not a valid label key/,
    );
  });

  test('validateVolcanoPodGroup takes the typed PodGroup', () => {
    const pg: VolcanoPodGroup = {
      apiVersion: VolcanoApiVersion.PodGroup,
      kind: 'PodGroup',
      metadata: { name: 'pg' },
      spec: { subGroupPolicy: [{ name: 'a' }, { name: 'a' }] },
    };
    assert.equal(validateVolcanoPodGroup(pg, {}).length, 1);
  });
});

// ---------------------------------------------------------------------------------------
// HyperJob
// ---------------------------------------------------------------------------------------

describe('HyperJob (training.volcano.sh/v1alpha1)', () => {
  const worker = () => task('worker').replicas(4);

  test('replicatedJobs: replicas default 1; templateSpec is a Volcano JobSpec', () => {
    const hj = accepted(
      hyperJob()
        .replicated({ name: 'trainer', templateSpec: jobSpec(worker()) })
        .get(),
    ) as HyperJob;
    assert.equal(hj.spec.replicatedJobs[0].replicas, 1);
    assert.equal(hj.spec.replicatedJobs[0].templateSpec.tasks[0].replicas, 4);
  });

  test('replicatedJobs: at least one', () => {
    refused(hyperJob().get(), 'spec.replicatedJobs', /^a HyperJob needs at least one replicatedJob/);
  });

  test('replicatedJob name: a DNS label, unique', () => {
    refused(
      hyperJob()
        .replicated({ name: 'Trainer', templateSpec: jobSpec(worker()) })
        .get(),
      'spec.replicatedJobs[0].name',
      /is not a valid name/,
    );
    refused(
      hyperJob()
        .replicated({ name: 'a', templateSpec: jobSpec(worker()) })
        .replicated({ name: 'a', templateSpec: jobSpec(worker()) })
        .get(),
      'spec.replicatedJobs[1].name',
      '"a" is already spec.replicatedJobs[0]: replicatedJob names must be unique',
    );
  });

  test("replicatedJob template: the seed's alias of templateSpec, normalized", () => {
    const hj = accepted(
      hyperJob()
        .replicated({ name: 'a', replicas: 2, template: jobSpec(worker()) })
        .get(),
    ) as HyperJob;
    assert.equal('template' in hj.spec.replicatedJobs[0], false);
    assert.equal(hj.spec.replicatedJobs[0].templateSpec.tasks[0].name, 'worker');
    refused(
      hyperJob()
        .replicated({ name: 'a', template: jobSpec(worker()), templateSpec: jobSpec(worker()) })
        .get(),
      'spec.replicatedJobs[0].template',
      'set templateSpec or its alias template, not both',
    );
    refused(hyperJob().replicated({ name: 'a' }).get(), 'spec.replicatedJobs[0].templateSpec', /^is required/);
  });

  test('replicatedJob templateSpec: the Job rules apply, naming the replicatedJob', () => {
    refused(
      hyperJob()
        .replicated({ name: 'slice', template: jobSpec(task('w').replicas(3).partitions({ totalPartitions: 2, partitionSize: 2 })) })
        .get(),
      'spec.replicatedJobs[0].template.tasks[0].replicas',
      "'Replicas' are not equal to TotalPartitions*PartitionSize in task: w, job: slice",
    );
    refused(
      hyperJob()
        .replicated({ name: 'slice', templateSpec: { tasks: [] } })
        .get(),
      'spec.replicatedJobs[0].templateSpec.tasks',
      'No task specified in job spec',
    );
  });

  test('HyperJob networkTopology: accepted at HyperJob level (list form too), tier conflict refused', () => {
    const hj = accepted(
      hyperJob()
        .set('spec.networkTopology', [{ mode: 'hard', highestTierAllowed: 2 }])
        .replicated({ name: 'a', templateSpec: jobSpec(worker()) })
        .get(),
    ) as HyperJob;
    assert.deepEqual(hj.spec.networkTopology, { mode: 'hard', highestTierAllowed: 2 });
    refused(
      hyperJob()
        .set('spec.networkTopology', { highestTierAllowed: 2, highestTierName: 'spine' })
        .replicated({ name: 'a', templateSpec: jobSpec(worker()) })
        .get(),
      'spec.networkTopology',
      VolcanoMessage.JobTierConflict,
    );
  });

  test('HyperJob minAvailable: at most the Jobs the replicatedJobs create', () => {
    accepted(
      hyperJob()
        .set('spec.minAvailable', 3)
        .replicated({ name: 'a', replicas: 2, templateSpec: jobSpec(worker()) })
        .replicated({ name: 'b', templateSpec: jobSpec(worker()) })
        .get(),
    );
    refused(
      hyperJob()
        .set('spec.minAvailable', 4)
        .replicated({ name: 'a', replicas: 2, templateSpec: jobSpec(worker()) })
        .replicated({ name: 'b', templateSpec: jobSpec(worker()) })
        .get(),
      'spec.minAvailable',
      '4 is more than the 3 Jobs the replicatedJobs create',
    );
  });

  test("the seed's HyperJob sample (real apiVersion, prose removed) is accepted and normalized", () => {
    const yaml = `
apiVersion: training.volcano.sh/v1alpha1
kind: HyperJob
metadata:
  name: multi-volcano-job
spec:
  networkTopology:
  - mode: hard
    highestTierAllowed: 2
  replicatedJobs:
  - replicas: 40
    name: volcano-job
    template:
      networkTopology:
      - mode: hard
        highestTierAllowed: 1
      schedulerName: volcano
      tasks:
      - replicas: 32
        name: "worker"
        template:
          spec:
            containers:
            - name: worker
              image: alpine
              command: ["/bin/sh", "-c", "sleep 3600"]
              imagePullPolicy: IfNotPresent
              resources:
                requests:
                  gpu: 8
                limits:
                  gpu: 8
`;
    const { objects, errors } = parseManifests(yaml, 'hyperjob.yaml');
    assert.deepEqual(errors, []);
    const hj = accepted(objects[0].object) as HyperJob;
    assert.deepEqual(hj.spec.networkTopology, { mode: 'hard', highestTierAllowed: 2 });
    const rj = hj.spec.replicatedJobs[0];
    assert.equal(rj.replicas, 40);
    assert.deepEqual(rj.templateSpec.networkTopology, { mode: 'hard', highestTierAllowed: 1 });
    assert.equal(rj.templateSpec.tasks[0].template.spec.containers[0].resources?.requests?.gpu, '8');
  });

  test('validateHyperJob takes the typed HyperJob', () => {
    const hj: HyperJob = {
      apiVersion: VolcanoApiVersion.HyperJob,
      kind: 'HyperJob',
      metadata: { name: 'h' },
      spec: { replicatedJobs: [] },
    };
    assert.equal(validateHyperJob(hj, {}).length, 1);
  });
});

// ---------------------------------------------------------------------------------------
// Pod annotations -> PodGroup topology (spec §1.4)
// ---------------------------------------------------------------------------------------

describe('podGroupAnnotationsTopology', () => {
  const MODE = VolcanoAnnotation.NetworkTopologyMode;
  const TIER = VolcanoAnnotation.NetworkTopologyHighestTier;

  test('no annotation: no topology', () => {
    assert.deepEqual(podGroupAnnotationsTopology(undefined), { warnings: [] });
    assert.deepEqual(podGroupAnnotationsTopology({ other: 'x' }), { warnings: [] });
  });

  test('mode annotation: hard or soft, any case', () => {
    assert.deepEqual(podGroupAnnotationsTopology({ [MODE]: 'Soft', [TIER]: '2' }), {
      topology: { mode: 'soft', highestTierAllowed: 2 },
      warnings: [],
    });
    assert.deepEqual(podGroupAnnotationsTopology({ [MODE]: 'HARD', [TIER]: '1' }), {
      topology: { mode: 'hard', highestTierAllowed: 1 },
      warnings: [],
    });
  });

  test('mode annotation: any other value warns and falls back to hard', () => {
    const r = podGroupAnnotationsTopology({ [MODE]: 'strict', [TIER]: '1' });
    assert.deepEqual(r.topology, { mode: 'hard', highestTierAllowed: 1 });
    assert.deepEqual(r.warnings, ['annotation volcano.sh/network-topology-mode="strict" is neither hard nor soft (any case): using hard']);
  });

  test('mode annotation alone: a hard topology with no tier', () => {
    assert.deepEqual(podGroupAnnotationsTopology({ [MODE]: 'hard' }), { topology: { mode: 'hard' }, warnings: [] });
  });

  test('highest-tier annotation alone: hard with that tier', () => {
    assert.deepEqual(podGroupAnnotationsTopology({ [TIER]: '3' }), { topology: { mode: 'hard', highestTierAllowed: 3 }, warnings: [] });
    assert.deepEqual(podGroupAnnotationsTopology({ [TIER]: '+0' }).topology, { mode: 'hard', highestTierAllowed: 0 });
    assert.ok(Object.is(podGroupAnnotationsTopology({ [TIER]: '-0' }).topology?.highestTierAllowed, 0));
  });

  test('highest-tier annotation: not a whole number >= 0 warns and leaves the tier unset', () => {
    for (const bad of ['two', '1.5', '', ' 1', '-1', '99999999999999999999']) {
      const r = podGroupAnnotationsTopology({ [MODE]: 'soft', [TIER]: bad });
      assert.deepEqual(r.topology, { mode: 'soft' }, bad);
      assert.deepEqual(r.warnings, [
        `annotation volcano.sh/network-topology-highest-tier=${JSON.stringify(bad)} is not a whole number >= 0: no highest tier is set`,
      ]);
    }
  });
});
