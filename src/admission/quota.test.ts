import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { fr, FrKeys, QuotaTree, type QuotaNodeSpec, type ResourceQuota } from './quota.ts';

const CPU = fr('default', 'cpu');
const cq = (name: string, q: ResourceQuota, parent?: string): QuotaNodeSpec => ({
  name,
  kind: 'ClusterQueue',
  parent,
  quotas: new Map([[CPU, q]]),
});

describe('quota tree', () => {
  it('a ClusterQueue alone uses its nominal quota', () => {
    const t = new QuotaTree([cq('a', { nominal: 10 })]);
    assert.equal(t.available('a', CPU), 10);
    t.addUsage('a', CPU, 4);
    assert.equal(t.available('a', CPU), 6);
    assert.equal(t.potentialAvailable('a', CPU), 10);
  });
  it('in a cohort a ClusterQueue borrows what the others do not use', () => {
    const t = new QuotaTree([cq('a', { nominal: 10 }, 'c'), cq('b', { nominal: 10 }, 'c')]);
    assert.equal(t.available('a', CPU), 20);
    t.addUsage('b', CPU, 5);
    assert.equal(t.available('a', CPU), 15);
    t.addUsage('a', CPU, 12);
    assert.equal(t.borrowing('a', CPU), 2);
    assert.equal(t.available('b', CPU), 3);
    assert.equal(t.potentialAvailable('b', CPU), 20);
    assert.deepEqual(t.violations(), []);
  });
  it('potentialAvailable, remembered after its first answer, ignores usage asked before and after', () => {
    const t = new QuotaTree([cq('a', { nominal: 10, borrowingLimit: 4 }, 'c'), cq('b', { nominal: 10, lendingLimit: 3 }, 'c')]);
    t.addUsage('b', CPU, 9);
    assert.equal(t.potentialAvailable('a', CPU), 13);
    t.addUsage('a', CPU, 10);
    assert.equal(t.potentialAvailable('a', CPU), 13);
    assert.equal(t.potentialAvailable('b', CPU), 20);
    assert.equal(t.available('a', CPU), 1);
  });
  it('a lending limit keeps the rest of the nominal quota private', () => {
    const t = new QuotaTree([cq('a', { nominal: 10 }, 'c'), cq('b', { nominal: 10, lendingLimit: 3 }, 'c')]);
    assert.equal(t.available('a', CPU), 13);
    t.addUsage('b', CPU, 8);
    assert.equal(t.available('a', CPU), 12);
    assert.equal(t.available('b', CPU), 12);
  });
  it('a borrowing limit caps what comes from the cohort', () => {
    const t = new QuotaTree([cq('a', { nominal: 10, borrowingLimit: 2 }, 'c'), cq('b', { nominal: 10 }, 'c')]);
    assert.equal(t.available('a', CPU), 12);
    assert.equal(t.potentialAvailable('a', CPU), 12);
  });
  it("cohorts nest: a cohort's own quota and its children's lendable quota are shared", () => {
    const t = new QuotaTree([
      { name: 'root', kind: 'Cohort', quotas: new Map([[CPU, { nominal: 5 }]]) },
      { name: 'left', kind: 'Cohort', parent: 'root', quotas: new Map() },
      cq('a', { nominal: 10 }, 'left'),
      cq('b', { nominal: 10 }, 'root'),
    ]);
    assert.equal(t.available('a', CPU), 25);
    t.addUsage('b', CPU, 15);
    assert.equal(t.available('a', CPU), 10);
    assert.equal(t.borrowingLevel('a', CPU, 5), 0);
    assert.equal(t.borrowingLevel('a', CPU, 11), 3);
  });
});

describe('quota tree slots', () => {
  const MEM = fr('default', 'memory');
  it('a flavor-resource a ClusterQueue has no quota for is 0 there, and what its cohort has is still lent to it', () => {
    const t = new QuotaTree([{ name: 'c', kind: 'Cohort', quotas: new Map([[MEM, { nominal: 7 }]]) }, cq('a', { nominal: 10 }, 'c')]);
    assert.equal(t.nominal('a', MEM), 0);
    assert.equal(t.usage('a', MEM), 0);
    assert.equal(t.available('a', MEM), 7);
    assert.equal(t.potentialAvailable('a', MEM), 7);
    assert.equal(t.borrowingLevel('a', MEM, 5), 1);
    assert.equal(t.available('a', fr('other', 'cpu')), 0);
  });
  it('usage of a flavor-resource no quota names gets a slot up the tree, and taking it back restores every answer', () => {
    const GPU = fr('default', 'gpu');
    const t = new QuotaTree([cq('a', { nominal: 10 }, 'c'), cq('b', { nominal: 10 }, 'c')]);
    t.addUsage('a', CPU, 4);
    t.addUsage('a', GPU, 3);
    assert.equal(t.usage('a', GPU), 3);
    assert.equal(t.available('a', GPU), 0);
    assert.equal(t.available('b', GPU), 0);
    // The range of `a` moved: its other flavor-resources kept their numbers.
    assert.equal(t.usage('a', CPU), 4);
    assert.equal(t.available('a', CPU), 16);
    assert.equal(t.available('b', CPU), 16);
    t.addUsage('b', GPU, 2);
    t.addUsage('a', GPU, -3);
    t.addUsage('b', GPU, -2);
    assert.equal(t.usage('a', GPU), 0);
    assert.equal(t.available('a', CPU), 16);
    assert.deepEqual(t.violations(), []);
  });
  it('the ...At reads by node and flavor-resource index answer as the reads by name', () => {
    const t = new QuotaTree([cq('a', { nominal: 10, borrowingLimit: 4 }, 'c'), cq('b', { nominal: 10, lendingLimit: 3 }, 'c')]);
    t.addUsage('b', CPU, 9);
    t.addUsage('a', CPU, 2);
    for (const name of ['a', 'b']) {
      const i = t.clusterQueueIndex(name);
      const f = t.frIndex(CPU);
      assert.equal(t.availableAt(i, f), t.available(name, CPU));
      assert.equal(t.potentialAvailableAt(i, f), t.potentialAvailable(name, CPU));
      assert.equal(t.nominalAt(i, f), t.nominal(name, CPU));
      assert.equal(t.usageAt(i, f), t.usage(name, CPU));
      assert.equal(t.borrowingLevelAt(i, f, 12), t.borrowingLevel(name, CPU, 12));
    }
    assert.equal(t.clusterQueueIndex('nope'), -1);
    assert.equal(t.frIndex('nope/cpu'), -1);
  });
});

describe('quota invariant (property)', () => {
  it('admitting only what is available never exceeds any quota, and releasing restores availability', () => {
    const quotaArb = fc.record({
      nominal: fc.integer({ min: 0, max: 20 }),
      borrowingLimit: fc.option(fc.integer({ min: 0, max: 10 }), { nil: undefined }),
      lendingLimit: fc.option(fc.integer({ min: 0, max: 20 }), { nil: undefined }),
    });
    fc.assert(
      fc.property(
        fc.array(quotaArb, { minLength: 1, maxLength: 5 }),
        fc.array(fc.tuple(fc.nat(4), fc.integer({ min: 1, max: 15 })), { maxLength: 30 }),
        (quotas, requests) => {
          const specs = quotas.map((q, i) =>
            cq(
              `q${i}`,
              { ...q, lendingLimit: q.lendingLimit !== undefined ? Math.min(q.lendingLimit, q.nominal) : undefined },
              i % 2 === 0 ? 'even' : 'odd',
            ),
          );
          specs.push(
            { name: 'even', kind: 'Cohort', parent: 'all', quotas: new Map() },
            { name: 'odd', kind: 'Cohort', parent: 'all', quotas: new Map() },
          );
          const t = new QuotaTree(specs);
          const admitted: [string, number][] = [];
          for (const [i, amount] of requests) {
            const name = `q${i % quotas.length}`;
            if (amount <= t.available(name, CPU)) {
              t.addUsage(name, CPU, amount);
              admitted.push([name, amount]);
            } else {
              assert.ok(amount > t.available(name, CPU));
            }
            assert.deepEqual(t.violations(), []);
            assert.ok(t.available(name, CPU) <= t.potentialAvailable(name, CPU));
          }
          const before = quotas.map((_, i) => t.potentialAvailable(`q${i}`, CPU));
          for (const [name, amount] of admitted.reverse()) t.addUsage(name, CPU, -amount);
          quotas.forEach((_, i) => assert.equal(t.available(`q${i}`, CPU), before[i]));
        },
      ),
      { numRuns: 300, seed: 5 },
    );
  });
});

describe('flavor-resource keys', () => {
  it('an interned key equals fr() and is the same object for the same pair', () => {
    const keys = new FrKeys();
    const a = keys.of('default', 'cpu');
    assert.equal(a, fr('default', 'cpu'));
    assert.equal(keys.of('default', 'cpu'), a);
    assert.equal(keys.size, 1);
  });
  it('the intern table is bounded: past its size it starts over, and keys stay correct', () => {
    const keys = new FrKeys(3);
    for (const r of ['a', 'b', 'c', 'd', 'e']) assert.equal(keys.of('f', r), `f/${r}`);
    assert.ok(keys.size <= 3, `size ${keys.size}`);
    assert.equal(keys.of('g', 'a'), 'g/a');
  });
});
