import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { BLOCK, HOST, node, RACK, snapshotOf } from '../testing/builders.ts';
import { PlacementEngine } from './engine.ts';

/**
 * KEP-2724 "Balanced placement" example table. Capacities are written as in the KEP:
 * blocks of racks of hosts; `preferred = rack`; each pod takes 1 cpu.
 */
function run(capacities: number[][][], request: number, sliceSize: number): number[][][] {
  const nodes = [];
  for (const [b, racks] of capacities.entries()) {
    for (const [r, hosts] of racks.entries()) {
      for (const [h, c] of hosts.entries())
        nodes.push(
          node(`b${b}-r${r}-h${h}`)
            .labels({ [BLOCK]: `b${b}`, [RACK]: `r${r}` })
            .cpu(c),
        );
    }
  }
  const s = snapshotOf([BLOCK, RACK, HOST], nodes);
  const res = new PlacementEngine(s).place(
    {
      podSetName: 'main',
      count: request,
      requests: { cpu: 1000 },
      mode: 'preferred',
      level: RACK,
      sliceLayers: sliceSize > 1 ? [{ topology: HOST, size: sliceSize }] : [],
      tolerations: [],
    },
    { profile: 'BalancedPlacement' },
  );
  assert.ok(res.ok, res.ok ? '' : res.reason);
  const got = new Map(res.workers.domains.map((d) => [d.values[0]!, d.count]));
  return capacities.map((racks, b) => racks.map((hosts, r) => hosts.map((_, h) => got.get(`b${b}-r${r}-h${h}`) ?? 0)));
}

describe('KEP-2724 BalancedPlacement example table (preferred = rack)', () => {
  const table: [string, number[][][], number, number, number[][][]][] = [
    ['[[15], [15]], 25 -> [[13], [12]]', [[[15], [15]]], 25, 1, [[[13], [12]]]],
    ['[[15, 13, 10]], 23 -> [[12, 11, 0]]', [[[15, 13, 10]]], 23, 1, [[[12, 11, 0]]]],
    [
      '[[20, 10], [15, 15]], 22 -> [[0, 0], [11, 11]]: prefer the rack with the higher threshold',
      [
        [
          [20, 10],
          [15, 15],
        ],
      ],
      22,
      1,
      [
        [
          [0, 0],
          [11, 11],
        ],
      ],
    ],
    [
      '[[20, 10], [15, 15]], 20 -> [[20, 0], [0, 0]]',
      [
        [
          [20, 10],
          [15, 15],
        ],
      ],
      20,
      1,
      [
        [
          [20, 0],
          [0, 0],
        ],
      ],
    ],
    [
      '[[10, 5], [5, 5, 5]], 15 -> [[0, 0], [5, 5, 5]]: prefer the more balanced rack',
      [
        [
          [10, 5],
          [5, 5, 5],
        ],
      ],
      15,
      1,
      [
        [
          [0, 0],
          [5, 5, 5],
        ],
      ],
    ],
    [
      '[[15],[15]] [[15, 15]], 25 -> [[0],[0]] [[13, 12]]: prefer the block where the request fits in one rack',
      [[[15], [15]], [[15, 15]]],
      25,
      1,
      [[[0], [0]], [[13, 12]]],
    ],
    ['[[15], [15], [15, 15]], 25, slice 5 at hostname -> [[0], [0], [15, 10]]', [[[15], [15], [15, 15]]], 25, 5, [[[0], [0], [15, 10]]]],
  ];
  for (const [name, caps, req, slice, want] of table) {
    it(name, () => assert.deepEqual(run(caps, req, slice), want));
  }
});

describe('BalancedPlacement falls back to BestFit', () => {
  it('when the request fits in no single block it is placed by BestFit across blocks', () => {
    assert.deepEqual(run([[[10]], [[10]]], 15, 1), [[[10]], [[5]]]);
  });
});
