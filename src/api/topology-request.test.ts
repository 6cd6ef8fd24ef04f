import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { InputError, Where } from './errors.ts';
import { KueueAnnotation as A, PodIndexLabel } from './keys.ts';
import type { PodSet, PodSetTopologyRequest } from './objects.ts';
import {
  formatFieldPath,
  hasTopologyConstraint,
  labelKeyProblem,
  labelValueProblem,
  topologyRequestFromAnnotations,
  validatePodSetTopologyRequests,
} from './topology-request.ts';

const BLOCK = 'cloud.com/block';
const RACK = 'cloud.com/rack';
const HOST = 'kubernetes.io/hostname';
const where: Where = { file: 'job.yaml', document: 1, object: 'Job/ns/train', field: 'spec.template' };

const fromAnn = (annotations: Record<string, string>, count = 8, opts = {}) =>
  topologyRequestFromAnnotations(annotations, count, opts, where);

function only(errors: InputError[]): InputError {
  assert.equal(errors.length, 1, errors.map((e) => e.message).join('\n'));
  return errors[0];
}

/** Asserts one error that names the annotation key (in the field and the message) and the value. */
function oneAnnotationError(errors: InputError[], key: string, value: string, pattern: RegExp, shown?: string): void {
  const e = only(errors);
  assert.equal(e.where.field, `spec.template.metadata.annotations[${JSON.stringify(key)}]`);
  assert.ok(e.detail.includes(shown ?? `${key}=${JSON.stringify(value)}`), e.detail);
  assert.match(e.detail, pattern);
  assert.ok(e.message.startsWith('job.yaml, document 1, Job/ns/train, spec.template.metadata.annotations'), e.message);
}

class PodSetBuilder {
  private ps: PodSet;
  constructor(name: string) {
    this.ps = { name, count: 1, template: { spec: { containers: [{ name: 'c' }] } } };
  }
  count(n: number): this {
    this.ps.count = n;
    return this;
  }
  request(r: PodSetTopologyRequest): this {
    this.ps.topologyRequest = { ...this.ps.topologyRequest, ...r };
    return this;
  }
  required(level: string): this {
    return this.request({ required: level });
  }
  preferred(level: string): this {
    return this.request({ preferred: level });
  }
  group(name: string): this {
    return this.request({ podSetGroupName: name });
  }
  get(): PodSet {
    return this.ps;
  }
}
const podSet = (name: string) => new PodSetBuilder(name);
const wl: Where = { file: 'wl.yaml', document: 2, object: 'Workload/ns/w' };
const validate = (...b: PodSetBuilder[]) =>
  validatePodSetTopologyRequests(
    b.map((x) => x.get()),
    wl,
  );

describe('topologyRequestFromAnnotations', () => {
  test('maps each TAS annotation to its request field', () => {
    const { request, errors } = fromAnn(
      {
        [A.PodSetPreferredTopology]: BLOCK,
        [A.PodSetSliceRequiredTopology]: RACK,
        [A.PodSetSliceSize]: '4',
        [A.PodSetGroupName]: 'g',
        [A.PodIndexOffset]: '1',
        'other/annotation': 'x',
      },
      8,
      { podIndexLabel: PodIndexLabel.JobCompletionIndex },
    );
    assert.deepEqual(errors, []);
    assert.deepEqual(request, {
      preferred: BLOCK,
      podSetSliceRequiredTopology: RACK,
      podSetSliceSize: 4,
      podSetGroupName: 'g',
      podIndexLabel: PodIndexLabel.JobCompletionIndex,
    });
  });

  test('no TAS annotation and no index label: no request', () => {
    assert.deepEqual(fromAnn({ 'a/b': 'c' }), { errors: [] });
    assert.deepEqual(fromAnn({}), { errors: [] });
    assert.deepEqual(topologyRequestFromAnnotations(undefined, 1, {}, where), { errors: [] });
  });

  test('pod-index-offset alone creates no request (it stays an annotation for the ungater)', () => {
    assert.deepEqual(fromAnn({ [A.PodIndexOffset]: '1' }), { errors: [] });
  });

  test('implied TAS: an index label alone gives a request with only the index fields', () => {
    const { request, errors } = fromAnn({}, 8, {
      podIndexLabel: PodIndexLabel.JobCompletionIndex,
      subGroupIndexLabel: PodIndexLabel.JobSetJobIndex,
      subGroupCount: 2,
    });
    assert.deepEqual(errors, []);
    assert.deepEqual(request, {
      podIndexLabel: PodIndexLabel.JobCompletionIndex,
      subGroupIndexLabel: PodIndexLabel.JobSetJobIndex,
      subGroupCount: 2,
    });
    assert.equal(hasTopologyConstraint(request), false);
  });

  test('unconstrained must be "true" or "false"', () => {
    assert.deepEqual(fromAnn({ [A.PodSetUnconstrainedTopology]: 'true' }).request, { unconstrained: true });
    assert.deepEqual(fromAnn({ [A.PodSetUnconstrainedTopology]: 'false' }).request, { unconstrained: false });
    const r = fromAnn({ [A.PodSetUnconstrainedTopology]: 'yes' });
    assert.equal(r.request, undefined);
    oneAnnotationError(r.errors, A.PodSetUnconstrainedTopology, 'yes', /must be "true" or "false"/);
  });

  test('required, preferred and unconstrained are mutually exclusive', () => {
    const r = fromAnn({ [A.PodSetRequiredTopology]: RACK, [A.PodSetPreferredTopology]: BLOCK });
    oneAnnotationError(r.errors, A.PodSetPreferredTopology, BLOCK, /mutually exclusive/);
    assert.ok(r.errors[0].detail.includes(`${A.PodSetRequiredTopology}="${RACK}"`));
    // Presence counts, as in the peer: even "false" conflicts with required.
    const r2 = fromAnn({ [A.PodSetRequiredTopology]: RACK, [A.PodSetUnconstrainedTopology]: 'false' });
    oneAnnotationError(r2.errors, A.PodSetUnconstrainedTopology, 'false', /mutually exclusive/);
  });

  test('level annotations must be valid label keys', () => {
    const r = fromAnn({ [A.PodSetRequiredTopology]: 'Bad Key!' });
    oneAnnotationError(r.errors, A.PodSetRequiredTopology, 'Bad Key!', /not a valid label key/);
    const r2 = fromAnn({ [A.PodSetSliceRequiredTopology]: '', [A.PodSetSliceSize]: '1' });
    oneAnnotationError(r2.errors, A.PodSetSliceRequiredTopology, '', /must not be empty/);
  });

  test('slice topology needs a slice size', () => {
    const r = fromAnn({ [A.PodSetRequiredTopology]: BLOCK, [A.PodSetSliceRequiredTopology]: RACK });
    oneAnnotationError(r.errors, A.PodSetSliceRequiredTopology, RACK, new RegExp(`needs ${A.PodSetSliceSize}`));
  });

  test('slice topology without a slice size takes defaultSliceSize (JobSet parallelism)', () => {
    const r = fromAnn({ [A.PodSetSliceRequiredTopology]: RACK }, 8, { defaultSliceSize: 4 });
    assert.deepEqual(r, { request: { podSetSliceRequiredTopology: RACK, podSetSliceSize: 4 }, errors: [] });
    // An explicit size wins over the default.
    const r2 = fromAnn({ [A.PodSetSliceRequiredTopology]: RACK, [A.PodSetSliceSize]: '2' }, 8, { defaultSliceSize: 4 });
    assert.equal(r2.request?.podSetSliceSize, 2);
    // A default that does not divide the count is reported on the slice topology.
    const r3 = fromAnn({ [A.PodSetSliceRequiredTopology]: RACK }, 8, { defaultSliceSize: 3 });
    oneAnnotationError(r3.errors, A.PodSetSliceRequiredTopology, RACK, /default slice size 3 .* evenly divide the PodSet count 8/);
  });

  test('slice size without slice topology is refused', () => {
    const r = fromAnn({ [A.PodSetRequiredTopology]: BLOCK, [A.PodSetSliceSize]: '2' });
    oneAnnotationError(r.errors, A.PodSetSliceSize, '2', new RegExp(`without ${A.PodSetSliceRequiredTopology}`));
  });

  test('slice size is a number of at least 1', () => {
    for (const bad of ['abc', '0', '-2', '1.5', '']) {
      const r = fromAnn({ [A.PodSetSliceRequiredTopology]: RACK, [A.PodSetSliceSize]: bad });
      oneAnnotationError(r.errors, A.PodSetSliceSize, bad, /whole number of at least 1/);
    }
  });

  test('slice size evenly divides the PodSet count', () => {
    const r = fromAnn({ [A.PodSetSliceRequiredTopology]: RACK, [A.PodSetSliceSize]: '3' }, 8);
    oneAnnotationError(r.errors, A.PodSetSliceSize, '3', /evenly divide the PodSet count 8/);
    assert.deepEqual(fromAnn({ [A.PodSetSliceRequiredTopology]: RACK, [A.PodSetSliceSize]: '8' }, 8).errors, []);
  });

  describe('slice constraints', () => {
    const C = A.PodSetSliceRequiredTopologyConstraints;
    const json = (v: unknown) => JSON.stringify(v);
    // Entry messages name the annotation and the entry as written.
    const entry = (i: number, v: unknown) => `${C} entry ${i} ${JSON.stringify(v)}`;

    test('parse: size may be a string or a number', () => {
      const v = json([
        { topology: BLOCK, size: '8' },
        { topology: RACK, size: 4 },
      ]);
      const r = fromAnn({ [A.PodSetRequiredTopology]: BLOCK, [C]: v }, 16);
      assert.deepEqual(r.errors, []);
      assert.deepEqual(r.request, {
        required: BLOCK,
        podsetSliceRequiredTopologyConstraints: [
          { topology: BLOCK, size: 8 },
          { topology: RACK, size: 4 },
        ],
      });
      assert.equal(hasTopologyConstraint(r.request), true);
    });

    test('malformed JSON names the annotation and the parse problem', () => {
      const v = '[{"topology": "x", size: 2}]';
      const r = fromAnn({ [C]: v });
      oneAnnotationError(r.errors, C, v, /not valid JSON \(.+\)/);
    });

    test('must be an array of objects', () => {
      oneAnnotationError(fromAnn({ [C]: '{"topology":"x"}' }).errors, C, '{"topology":"x"}', /JSON array/);
      oneAnnotationError(fromAnn({ [C]: '["x"]' }).errors, C, '["x"]', /entry 1 "x" must be an object/);
    });

    test('constraints are exclusive with slice topology and slice size', () => {
      const v = json([{ topology: RACK, size: 2 }]);
      const r = fromAnn({ [C]: v, [A.PodSetSliceRequiredTopology]: RACK, [A.PodSetSliceSize]: '2' });
      oneAnnotationError(r.errors, C, v, /cannot be combined with/);
    });

    test('1 to 3 layers', () => {
      oneAnnotationError(fromAnn({ [C]: '[]' }).errors, C, '[]', /1 to 3 layers, got 0/);
      const four = json([HOST, RACK, BLOCK, 'x/y'].map((topology) => ({ topology, size: 1 })));
      oneAnnotationError(fromAnn({ [C]: four }).errors, C, four, /1 to 3 layers, got 4/);
    });

    test('each entry needs a topology and a size of at least 1', () => {
      const noTopology = json([{ size: 2 }]);
      oneAnnotationError(fromAnn({ [C]: noTopology }).errors, C, noTopology, /needs a "topology"/, entry(1, { size: 2 }));
      const noSize = json([{ topology: RACK }]);
      oneAnnotationError(fromAnn({ [C]: noSize }).errors, C, noSize, /needs a "size"/, entry(1, { topology: RACK }));
      for (const size of [0, '0', 'x', 1.5]) {
        const v = json([{ topology: RACK, size }]);
        oneAnnotationError(
          fromAnn({ [C]: v }).errors,
          C,
          v,
          /size must be a whole number of at least 1/,
          entry(1, { topology: RACK, size }),
        );
      }
      const badKey = json([{ topology: 'no spaces', size: 1 }]);
      oneAnnotationError(
        fromAnn({ [C]: badKey }).errors,
        C,
        badKey,
        /topology not a valid label key/,
        entry(1, { topology: 'no spaces', size: 1 }),
      );
    });

    test('the first layer size evenly divides the PodSet count', () => {
      const v = json([{ topology: RACK, size: 3 }]);
      oneAnnotationError(
        fromAnn({ [C]: v }, 8).errors,
        C,
        v,
        /size 3 must evenly divide the PodSet count 8/,
        entry(1, { topology: RACK, size: 3 }),
      );
    });

    test('each size evenly divides the previous layer size', () => {
      const v = json([
        { topology: BLOCK, size: 16 },
        { topology: RACK, size: 6 },
      ]);
      oneAnnotationError(
        fromAnn({ [C]: v }, 32).errors,
        C,
        v,
        /size 6 must evenly divide the previous layer's size 16/,
        entry(2, { topology: RACK, size: 6 }),
      );
    });
  });

  test('group name requires required or preferred on the PodSet', () => {
    const r = fromAnn({ [A.PodSetGroupName]: 'g', [A.PodSetUnconstrainedTopology]: 'true' });
    oneAnnotationError(r.errors, A.PodSetGroupName, 'g', new RegExp(`needs ${A.PodSetRequiredTopology} or ${A.PodSetPreferredTopology}`));
    assert.deepEqual(fromAnn({ [A.PodSetGroupName]: 'g', [A.PodSetRequiredTopology]: RACK }).errors, []);
  });

  test('pod-index-offset is a non-negative whole number', () => {
    for (const bad of ['-1', 'one', '1.0', '']) {
      oneAnnotationError(fromAnn({ [A.PodIndexOffset]: bad }).errors, A.PodIndexOffset, bad, /non-negative whole number/);
    }
    assert.deepEqual(fromAnn({ [A.PodIndexOffset]: '0', [A.PodSetRequiredTopology]: RACK }).errors, []);
  });

  test('every problem is reported, not only the first', () => {
    const r = fromAnn({
      [A.PodSetRequiredTopology]: RACK,
      [A.PodSetPreferredTopology]: RACK,
      [A.PodSetSliceRequiredTopology]: HOST,
      [A.PodSetSliceSize]: '3',
      [A.PodIndexOffset]: 'x',
    });
    assert.equal(r.errors.length, 3, r.errors.map((e) => e.message).join('\n'));
  });

  test('without where.field the annotation path stands alone', () => {
    const r = topologyRequestFromAnnotations({ [A.PodSetUnconstrainedTopology]: '1' }, 1, {}, { file: 'p.yaml' });
    assert.equal(only(r.errors).where.field, `metadata.annotations["${A.PodSetUnconstrainedTopology}"]`);
  });
});

describe('validatePodSetTopologyRequests', () => {
  test('a valid leader + workers group passes', () => {
    assert.deepEqual(validate(podSet('leader').required(RACK).group('g'), podSet('workers').count(4).required(RACK).group('g')), []);
  });

  test('per-PodSet rules apply to topologyRequest fields, named by field', () => {
    const errs = validate(podSet('main').count(8).request({ required: RACK, podSetSliceRequiredTopology: HOST, podSetSliceSize: 3 }));
    const e = only(errs);
    assert.equal(e.where.field, 'spec.podSets[0].topologyRequest.podSetSliceSize');
    assert.equal(e.detail, 'podSet "main": podSetSliceSize 3 must evenly divide the PodSet count 8');
    assert.equal(e.where.file, 'wl.yaml');
  });

  test('required, preferred and unconstrained are mutually exclusive (unconstrained: false does not count)', () => {
    assert.match(only(validate(podSet('a').request({ required: RACK, unconstrained: true }))).detail, /mutually exclusive/);
    assert.deepEqual(validate(podSet('a').request({ required: RACK, unconstrained: false })), []);
  });

  test('slice constraint entries are reported at their own field', () => {
    const e = only(
      validate(
        podSet('a')
          .count(16)
          .request({
            required: BLOCK,
            podsetSliceRequiredTopologyConstraints: [
              { topology: BLOCK, size: 8 },
              { topology: RACK, size: 3 },
            ],
          }),
      ),
    );
    assert.equal(e.where.field, 'spec.podSets[0].topologyRequest.podsetSliceRequiredTopologyConstraints[1].size');
    assert.match(e.detail, /size 3 must evenly divide the previous layer's size 8/);
  });

  test('sub-group index label and count go together; the count is >= 0', () => {
    const e = only(validate(podSet('a').request({ subGroupIndexLabel: PodIndexLabel.JobSetJobIndex })));
    assert.match(e.detail, /subGroupIndexLabel and subGroupCount must be set together/);
    assert.match(only(validate(podSet('a').request({ subGroupIndexLabel: 'x', subGroupCount: -1 }))).detail, /at least 0/);
    // A JobSet replicatedJob with 0 replicas has a sub-group count of 0.
    assert.deepEqual(validate(podSet('a').count(0).request({ subGroupIndexLabel: 'x', subGroupCount: 0 })), []);
  });

  test('required or preferred on one PodSet must be set on every PodSet', () => {
    const e = only(validate(podSet('launcher'), podSet('worker').count(4).preferred(RACK)));
    assert.equal(e.where.field, 'spec.podSets[0].topologyRequest');
    assert.match(
      e.detail,
      /podSet "launcher": sets neither required nor preferred topology, but podSet "worker" does \(preferred "cloud.com\/rack"\)/,
    );
    // Unconstrained on the other PodSet is not enough.
    assert.equal(validate(podSet('a').request({ unconstrained: true }), podSet('b').required(RACK)).length, 1);
    // Mixing required and preferred across PodSets is allowed.
    assert.deepEqual(validate(podSet('a').required(RACK), podSet('b').preferred(BLOCK)), []);
  });

  test('a PodSet group members must have the same required/preferred value', () => {
    const e = only(validate(podSet('leader').required(RACK).group('g'), podSet('workers').count(4).required(BLOCK).group('g')));
    assert.equal(e.where.field, 'spec.podSets[1].topologyRequest.required');
    assert.match(
      e.detail,
      /required "cloud.com\/block" differs from podSet "leader" \(required "cloud.com\/rack"\) in podSetGroupName "g"/,
    );
    assert.equal(validate(podSet('leader').required(RACK).group('g'), podSet('workers').count(4).preferred(RACK).group('g')).length, 1);
  });

  test('a podSetGroupName group must contain exactly two PodSets', () => {
    const e = only(validate(podSet('a').required(RACK).group('g'), podSet('b').required(RACK)));
    assert.equal(e.where.field, 'spec.podSets[0].topologyRequest.podSetGroupName');
    assert.match(e.detail, /must name exactly two PodSets .*found 1: "a"/);
    assert.equal(
      validate(podSet('a').required(RACK).group('g'), podSet('b').required(RACK).group('g'), podSet('c').required(RACK).group('g')).length,
      1,
    );
  });

  test('where.field prefixes the PodSet path', () => {
    const e = only(validatePodSetTopologyRequests([podSet('a').request({ required: 'x y' }).get()], { field: 'items[2]' }));
    assert.equal(e.where.field, 'items[2].spec.podSets[0].topologyRequest.required');
  });
});

describe('label keys and values', () => {
  test('label keys: regex, 316 characters, name part <= 63, prefix <= 253', () => {
    for (const ok of [RACK, HOST, 'rack', 'a.b-c/N_a.m-e', 'x/1']) assert.equal(labelKeyProblem(ok), undefined, ok);
    for (const bad of ['', '/rack', 'a/', 'A.com/rack', 'a/b/c', '-a', 'a_', 'a b']) assert.ok(labelKeyProblem(bad), bad);
    assert.match(labelKeyProblem('a'.repeat(64))!, /at most 63/);
    assert.equal(labelKeyProblem('a'.repeat(63)), undefined);
    assert.match(labelKeyProblem(`${'a'.repeat(254)}/b`)!, /at most 253/);
    // 316 = a 252-character prefix, "/" and a 63-character name (the CRD's MaxLength).
    assert.equal(labelKeyProblem(`${'a.'.repeat(125)}aa/${'b'.repeat(63)}`), undefined);
    assert.match(labelKeyProblem(`${'a.'.repeat(126)}a/${'b'.repeat(63)}`)!, /at most 316 characters, got 317/);
    assert.match(labelKeyProblem(`${'a'.repeat(254)}/${'b'.repeat(63)}`)!, /at most 316/);
  });

  test('label values', () => {
    for (const ok of ['', 'a', 'A-b_c.d', '1']) assert.equal(labelValueProblem(ok), undefined, ok);
    for (const bad of ['-a', 'a/b', 'a b', 'x'.repeat(64)]) assert.ok(labelValueProblem(bad), bad);
  });

  test('field paths are written Kubernetes-style', () => {
    assert.equal(formatFieldPath(['spec', 'levels', 0, 'nodeLabel']), 'spec.levels[0].nodeLabel');
    assert.equal(formatFieldPath(['metadata', 'annotations', A.PodSetSliceSize]), `metadata.annotations["${A.PodSetSliceSize}"]`);
    assert.equal(formatFieldPath([]), '');
  });
});
