import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { wl } from '../testing/admission.ts';
import { belowMinimum, fullCounts, searchBelowMinimum, searchLargest, shrinkSteps } from './podset-reducer.ts';
import { workloadInfo } from './workload-info.ts';

const obj = (m: Map<string, number>) => Object.fromEntries(m);
const total = (m: Map<string, number>) => [...m.values()].reduce((a, b) => a + b, 0);

describe('PodSet reducer', () => {
  it('partial admission shrinks every PodSet with a minCount in proportion, never below its minCount', () => {
    const info = workloadInfo(
      wl('w')
        .pods(10, { cpu: '1' }, { name: 'a', minCount: 4 })
        .pods(4, { cpu: '1' }, { name: 'b', minCount: 1 })
        .pods(2, { cpu: '1' }, { name: 'c' })
        .build(),
    );
    const full = fullCounts(info);
    const steps = shrinkSteps(info, full, true);
    assert.equal(steps.n, 9);
    assert.deepEqual(obj(steps.at(steps.n)), { a: 4, b: 1, c: 2 });
    for (let i = 1; i <= steps.n; i++) {
      const c = steps.at(i);
      assert.ok(c.get('a')! >= 4 && c.get('b')! >= 1 && c.get('c') === 2, `step ${i}: ${JSON.stringify(obj(c))}`);
      if (i > 1) assert.ok(total(c) <= total(steps.at(i - 1)), 'largest first');
    }
  });

  it('without the PartialAdmission gate a Workload that is not a gang does not shrink', () => {
    const info = workloadInfo(wl('w').pods(10, { cpu: '1' }, { minCount: 4 }).build());
    assert.equal(shrinkSteps(info, fullCounts(info), false).n, 0);
  });

  it('a gang shrinks to its minimum total, never below, and to at least one pod', () => {
    const info = workloadInfo(wl('w').pods(8, { cpu: '1' }, { name: 'a' }).pods(4, { cpu: '1' }, { name: 'b' }).gang(6).build());
    const steps = shrinkSteps(info, fullCounts(info), true);
    assert.equal(steps.n, 6);
    assert.equal(total(steps.at(steps.n)), 6);
    const zero = workloadInfo(wl('z').pods(3, { cpu: '1' }).gang(0).build());
    const z = shrinkSteps(zero, fullCounts(zero), true);
    assert.equal(total(z.at(z.n)), 1);
  });

  it("a gang's total-number caps its counts, the excess taken from the last PodSets", () => {
    const info = workloadInfo(
      wl('w').pods(4, { cpu: '1' }, { name: 'a' }).pods(4, { cpu: '1' }, { name: 'b' }).gang(2, { total: 5 }).build(),
    );
    assert.deepEqual(obj(fullCounts(info)), { a: 4, b: 1 });
  });

  it('the search finds the largest candidate that fits, and nothing when the smallest does not', () => {
    const info = workloadInfo(wl('w').pods(20, { cpu: '1' }, { minCount: 2 }).build());
    const steps = shrinkSteps(info, fullCounts(info), true);
    const fitsUpTo = (n: number) => (c: Map<string, number>) => (total(c) <= n ? total(c) : undefined);
    assert.deepEqual(searchLargest(steps, fitsUpTo(7))?.a, 7);
    assert.equal(searchLargest(steps, fitsUpTo(1)), undefined);
  });

  it('a NonStrict gang below its minimum: every total from 1 to min-1, and the largest that fits', () => {
    const info = workloadInfo(wl('w').pods(10, { cpu: '1' }).gang(5, { mode: 'NonStrict' }).build());
    const below = belowMinimum(info, fullCounts(info));
    assert.deepEqual(below.map(total), [1, 2, 3, 4]);
    assert.deepEqual(
      searchBelowMinimum(below, (c) => (total(c) <= 3 ? 'fit' : undefined)),
      { k: 3, best: { a: 'fit', counts: below[2] } },
    );
    assert.deepEqual(
      searchBelowMinimum(below, () => undefined),
      { k: 0, best: undefined },
    );
  });
});
