import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { HOSTNAME_LABEL, KueueAnnotation, PodIndexLabel } from '../api/keys.ts';
import type { Pod } from '../api/objects.ts';
import { hostAssignment, tasPod } from '../testing/tas-runtime.ts';
import { comparePodNames, planUngates, podSetGroupOffset, selectorLevels, type RankSettings } from './ungate-plan.ts';

const IDX = PodIndexLabel.JobCompletionIndex;
const indexed = (name: string, i: number | string): Pod => tasPod(name, 'wl').label(IDX, i).build();

function plan(pods: Pod[], hosts: [string, number][], rank: Partial<RankSettings> | undefined, count?: number) {
  const a = hostAssignment(hosts);
  return planUngates({
    levels: a.levels,
    domains: a.domains,
    count: count ?? hosts.reduce((n, [, c]) => n + c, 0),
    rank: rank && { podIndexLabel: IDX, groupOffset: 0, ...rank },
    pods,
  });
}

const placed = (p: ReturnType<typeof plan>) =>
  Object.fromEntries(p.ungate.map((u) => [u.pod.metadata.name, p.selectorOf(u.domain)[HOSTNAME_LABEL]]));

describe('ungate plan: when rank mode gives way to greedy', () => {
  const cases: { rule: string; pods: Pod[]; rank: Partial<RankSettings>; count?: number; reason: RegExp }[] = [
    {
      rule: 'an index at or above the bound',
      pods: [indexed('a', 0), indexed('b', 2)],
      rank: {},
      reason: /pod b: label .* is 2, not below 2/,
    },
    {
      rule: 'an index that is not a number',
      pods: [indexed('a', 0), indexed('b', 'x1')],
      rank: {},
      reason: /pod b: .* not a non-negative integer/,
    },
    {
      rule: 'a sub-group label without subGroupCount',
      pods: [indexed('a', 0)],
      rank: { subGroupIndexLabel: PodIndexLabel.JobSetJobIndex },
      reason: /subGroupCount is missing/,
    },
    {
      rule: 'subGroupCount 0',
      pods: [indexed('a', 0)],
      rank: { subGroupIndexLabel: PodIndexLabel.JobSetJobIndex, subGroupCount: 0 },
      reason: /subGroupCount is 0/,
    },
    {
      rule: 'a rank beyond the assignment (count larger than the assigned pods)',
      pods: [indexed('a', 0), indexed('b', 2)],
      rank: {},
      count: 3,
      reason: /pod b: rank 2 is beyond the assignment's 2 pods/,
    },
    {
      rule: 'an index below the PodSet group offset',
      pods: [indexed('a', 0), indexed('b', 1)],
      rank: { groupOffset: 1 },
      reason: /pod a: index 0 is below the offset 1/,
    },
    {
      rule: 'a pod-index-offset that is not a number',
      pods: [tasPod('a', 'wl').label(IDX, 1).annotate(KueueAnnotation.PodIndexOffset, 'one').build()],
      rank: {},
      reason: /annotation kueue.x-k8s.io\/pod-index-offset is "one"/,
    },
  ];
  for (const c of cases) {
    it(`${c.rule} -> greedy, with the reason`, () => {
      const p = plan(
        c.pods,
        [
          ['h1', 1],
          ['h2', 1],
        ],
        c.rank,
        c.count,
      );
      assert.equal(p.mode, 'greedy');
      assert.match(p.fallback ?? '', c.reason);
    });
  }

  it('a PodSet without podIndexLabel is greedy with no fallback reason', () => {
    const p = plan(
      [indexed('a', 1), indexed('b', 0)],
      [
        ['h1', 1],
        ['h2', 1],
      ],
      undefined,
    );
    assert.equal(p.mode, 'greedy');
    assert.equal(p.fallback, undefined);
    assert.deepEqual(placed(p), { a: 'h1', b: 'h2' });
  });

  it('rank mode hands out ranks in order, offset included', () => {
    const pods = [3, 1, 2].map((i) => tasPod(`w${i}`, 'wl').label(IDX, i).annotate(KueueAnnotation.PodIndexOffset, '1').build());
    const p = plan(
      pods,
      [
        ['h1', 1],
        ['h2', 2],
      ],
      {},
    );
    assert.equal(p.mode, 'rank');
    assert.deepEqual(
      p.ungate.map((u) => u.pod.metadata.name),
      ['w1', 'w2', 'w3'],
    );
    assert.deepEqual(placed(p), { w1: 'h1', w2: 'h2', w3: 'h2' });
  });

  it('pods of an unhealthy node are held, not ungated (both modes)', () => {
    for (const rank of [{}, undefined]) {
      const a = hostAssignment([
        ['h1', 1],
        ['h2', 1],
      ]);
      const p = planUngates({
        levels: a.levels,
        domains: a.domains,
        count: 2,
        rank: rank && { podIndexLabel: IDX, groupOffset: 0 },
        pods: [indexed('a', 0), indexed('b', 1)],
        unhealthyNodes: new Set(['h1']),
      });
      assert.deepEqual(placed(p), { b: 'h2' });
      assert.deepEqual(
        p.held.map((u) => u.pod.metadata.name),
        ['a'],
      );
    }
  });
});

describe('ungate plan: helpers', () => {
  it('a hostname-lowest assignment writes only the hostname; others every level', () => {
    assert.deepEqual(selectorLevels(['block', 'rack', HOSTNAME_LABEL]), [2]);
    assert.deepEqual(selectorLevels(['block', 'rack']), [0, 1]);
  });

  it('pod names are listed with digit runs compared as numbers', () => {
    const names = ['w-10', 'w-2', 'w-1', 'w-02', 'v-3', 'w-1a', 'w'];
    assert.deepEqual([...names].sort(comparePodNames), ['v-3', 'w', 'w-1', 'w-1a', 'w-02', 'w-2', 'w-10']);
  });

  it('a PodSet group: the smaller PodSet leads; the other ranks from its count; ties go to the first listed', () => {
    const g = { podSetGroupName: 'g' };
    const sets = [
      { name: 'leader', count: 1, topologyRequest: g },
      { name: 'worker', count: 3, topologyRequest: g },
    ];
    assert.equal(podSetGroupOffset(sets, 'leader'), 0);
    assert.equal(podSetGroupOffset(sets, 'worker'), 1);
    const tie = [
      { name: 'a', count: 2, topologyRequest: g },
      { name: 'b', count: 2, topologyRequest: g },
    ];
    assert.deepEqual([podSetGroupOffset(tie, 'a'), podSetGroupOffset(tie, 'b')], [0, 2]);
    assert.equal(podSetGroupOffset([{ name: 'x', count: 4 }], 'x'), 0);
  });
});
