// The TopologySource conformance suite (Hono's `src/router/common.case.test.ts` style): one
// shared list of placement-rule cases, run against every source over the same tree. A
// source that cannot express a case lists it in `unsupported` with the reason; the runner
// reports it as skipped, and refuses an `unsupported` entry that names no case.
//
// The shared tree: blocks of racks of hosts, the same nodes and capacities for every
// source; only how the tree is described differs (node labels, HyperNodes).

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { HOSTNAME_LABEL } from '../api/keys.ts';
import type { Taint } from '../api/objects.ts';
import { AssumedUsage, PlacementEngine, type PlacementOptions } from './engine.ts';
import type { PlacementRequest } from './request.ts';
import type { TopologySnapshot } from '../topology/snapshot.ts';

/** A host of the shared tree: `cpu` whole cpus (one pod of 1 cpu each). */
export interface HostSpec {
  name: string;
  cpu: number;
  taints?: Taint[];
}

/** Blocks of racks of hosts; rack names are unique across blocks. */
export interface TreeSpec {
  blocks: { name: string; racks: { name: string; hosts: HostSpec[] }[] }[];
}

/** What a source builds from a TreeSpec: the snapshot and its keys for the block and rack levels. */
export interface BuiltTopology {
  snapshot: TopologySnapshot;
  block: string;
  rack: string;
}

export interface SourceUnderTest {
  name: string;
  /** The tree, with every level down to the hostname (`hostLevel` false: racks are the leaves). */
  build(tree: TreeSpec, opts?: { hostLevel?: boolean; orphan?: HostSpec }): BuiltTopology;
  /** Case name -> why this source cannot run it. */
  unsupported?: Readonly<Record<string, string>>;
}

/** The topology's name in messages: every source builds it as `default`. */
export const TOPOLOGY_NAME = 'default';

const hosts = (prefix: string, caps: number[]): HostSpec[] => caps.map((cpu, i) => ({ name: `${prefix}${i + 1}`, cpu }));

/** b1: r1 (a1 4, a2 4), r2 (b1 4, b2 4); b2: r3 (c1 2, c2 2). */
export const SMALL: TreeSpec = {
  blocks: [
    {
      name: 'b1',
      racks: [
        { name: 'r1', hosts: hosts('a', [4, 4]) },
        { name: 'r2', hosts: hosts('b', [4, 4]) },
      ],
    },
    { name: 'b2', racks: [{ name: 'r3', hosts: hosts('c', [2, 2]) }] },
  ],
};

/** KEP-2724's "Computing the assignment" rack of 3, 3, 2, 1, with a second, roomier rack. */
const KEP_RACK: TreeSpec = {
  blocks: [
    {
      name: 'b1',
      racks: [
        { name: 'r1', hosts: hosts('x', [3, 3, 2, 1]) },
        { name: 'r2', hosts: hosts('y', [8, 8]) },
      ],
    },
  ],
};

function request(p: Partial<PlacementRequest>): PlacementRequest {
  return { podSetName: 'main', count: 1, requests: { cpu: 1000 }, mode: 'required', sliceLayers: [], tolerations: [], ...p };
}

/** `{host: count}` (values joined by `/` when the leaves are not hosts), or the failure reason. */
function place(t: BuiltTopology, p: Partial<PlacementRequest>, o: PlacementOptions = {}): Record<string, number> | string {
  const r = new PlacementEngine(t.snapshot).place(request(p), o);
  if (!r.ok) return r.reason;
  return Object.fromEntries(r.workers.domains.map((d) => [d.values.join('/'), d.count]));
}

interface Case {
  name: string;
  run(src: SourceUnderTest): void;
}

/** The shared cases: the placement rules of kueue-tas.md §6-§7 on a three-level tree. */
export const CASES: readonly Case[] = [
  {
    name: 'required: every pod inside one domain of the level',
    run(src) {
      const t = src.build(SMALL);
      assert.deepEqual(place(t, { count: 8, level: t.rack }), { a1: 4, a2: 4 });
    },
  },
  {
    name: 'required never leaves its level, and says how much fits',
    run(src) {
      const t = src.build(SMALL);
      assert.equal(place(t, { count: 9, level: t.rack }), `topology "${TOPOLOGY_NAME}" allows to fit only 8 out of 9 pod(s)`);
    },
  },
  {
    name: 'preferred climbs one level at a time until one domain fits',
    run(src) {
      const t = src.build(SMALL);
      assert.deepEqual(place(t, { count: 9, mode: 'preferred', level: t.rack }), { a1: 4, a2: 4, b1: 1 });
    },
  },
  {
    name: 'preferred splits across the top level when nothing fits',
    run(src) {
      const t = src.build(SMALL);
      assert.deepEqual(place(t, { count: 20, mode: 'preferred', level: t.rack }), { a1: 4, a2: 4, b1: 4, b2: 4, c1: 2, c2: 2 });
      assert.equal(
        place(t, { count: 21, mode: 'preferred', level: t.rack }),
        `topology "${TOPOLOGY_NAME}" allows to fit only 20 out of 21 pod(s)`,
      );
    },
  },
  {
    name: 'an unknown level gives the peer message',
    run(src) {
      assert.equal(place(src.build(SMALL), { level: 'example.com/nope' }), 'no requested topology level: example.com/nope');
    },
  },
  {
    name: 'BestFit takes the fullest domains and optimizes the last one (KEP-2724 3,3,2,1)',
    run(src) {
      const t = src.build(KEP_RACK);
      assert.deepEqual(place(t, { count: 7, level: t.rack }, { profile: 'BestFit' }), { x1: 3, x2: 3, x4: 1 });
    },
  },
  {
    name: 'LeastFreeCapacity takes the domains with the least room first and reserves the rest on the last (KEP-2724 3,3,2,1)',
    run(src) {
      const t = src.build(KEP_RACK);
      assert.deepEqual(place(t, { count: 4, level: t.rack }, { profile: 'LeastFreeCapacity' }), { x1: 1, x3: 2, x4: 1 });
    },
  },
  {
    name: 'slices: each slice inside one domain of its level, BestFit takes the tightest domain for one slice',
    run(src) {
      const t = src.build(SMALL);
      assert.deepEqual(place(t, { count: 8, level: t.block, sliceLayers: [{ topology: t.rack, size: 4 }] }), { a1: 4, a2: 4 });
      assert.deepEqual(place(t, { count: 12, mode: 'preferred', level: t.block, sliceLayers: [{ topology: t.rack, size: 4 }] }), {
        a1: 4,
        a2: 4,
        b1: 4,
      });
      assert.deepEqual(place(t, { count: 4, level: t.block, sliceLayers: [{ topology: t.rack, size: 4 }] }, { profile: 'BestFit' }), {
        c1: 2,
        c2: 2,
      });
    },
  },
  {
    name: 'bound pods are usage; removing them frees the capacity',
    run(src) {
      const t = src.build(SMALL);
      t.snapshot.addPod('p', 'a1', { cpu: 3000 });
      assert.deepEqual(place(t, { count: 8, level: t.rack }), { b1: 4, b2: 4 });
      t.snapshot.removePod('p');
      assert.deepEqual(place(t, { count: 8, level: t.rack }), { a1: 4, a2: 4 });
    },
  },
  {
    name: 'assumed usage of an earlier PodSet counts',
    run(src) {
      const t = src.build(SMALL);
      const assumed = new AssumedUsage();
      const leaf = t.snapshot.leafById(t.snapshot.leafIdOf(['a1']))!;
      assumed.add(leaf, { cpu: 1000 }, 4);
      assert.deepEqual(place(t, { count: 4, level: t.rack }, { assumed }), { a2: 4 });
    },
  },
  {
    name: 'a node removed leaves the tree; upserted again it is back',
    run(src) {
      const t = src.build(SMALL);
      const info = t.snapshot.node(t.snapshot.nodeIndex('a2')!);
      t.snapshot.removeNode('a2');
      assert.deepEqual(place(t, { count: 8, level: t.rack }), { b1: 4, b2: 4 });
      t.snapshot.upsertNode(info);
      assert.deepEqual(place(t, { count: 8, level: t.rack }), { a1: 4, a2: 4 });
    },
  },
  {
    name: 'untolerated NoSchedule taints exclude a host, listed in the message',
    run(src) {
      const tree: TreeSpec = {
        blocks: [
          {
            name: 'b1',
            racks: [
              {
                name: 'r1',
                hosts: [
                  { name: 'a1', cpu: 4, taints: [{ key: 'gpu', value: 'bad', effect: 'NoSchedule' }] },
                  { name: 'a2', cpu: 4 },
                ],
              },
            ],
          },
        ],
      };
      const t = src.build(tree);
      assert.equal(
        place(t, { count: 5, level: t.rack }),
        `topology "${TOPOLOGY_NAME}" allows to fit only 4 out of 5 pod(s). Total nodes: 2; excluded: taint "gpu=bad:NoSchedule": 1`,
      );
      assert.deepEqual(place(t, { count: 5, level: t.rack, tolerations: [{ key: 'gpu', operator: 'Exists' }] }), { a1: 4, a2: 1 });
    },
  },
  {
    name: 'assignments of a hostname-lowest topology name the hosts only',
    run(src) {
      const t = src.build(SMALL);
      const r = new PlacementEngine(t.snapshot).place(request({ count: 2, level: t.rack }));
      assert.ok(r.ok);
      assert.deepEqual(r.workers.levels, [HOSTNAME_LABEL]);
      assert.ok(r.workers.domains.every((d) => d.values.length === 1));
    },
  },
  {
    name: 'racks as leaves (no hostname level): the nodes of a rack share one leaf, capacity summed',
    run(src) {
      const t = src.build(SMALL, { hostLevel: false });
      assert.deepEqual(place(t, { count: 8, level: t.rack }), { 'b1/r1': 8 });
    },
  },
  {
    name: 'a node with no place at a level is left out of the tree',
    run(src) {
      const t = src.build(SMALL, { orphan: { name: 'z1', cpu: 16 } });
      assert.equal(t.snapshot.nodeIndex('z1') === undefined || t.snapshot.leafById(t.snapshot.leafIdOf(['z1'])) === undefined, true);
      assert.equal(place(t, { count: 9, level: t.rack }), `topology "${TOPOLOGY_NAME}" allows to fit only 8 out of 9 pod(s)`);
    },
  },
];

/** Runs every case against `src`; the unsupported ones are reported as skipped with their reason. */
export function runTopologySourceCases(src: SourceUnderTest): void {
  describe(`TopologySource conformance: ${src.name}`, () => {
    it('every unsupported entry names a case', () => {
      const names = new Set(CASES.map((c) => c.name));
      for (const k of Object.keys(src.unsupported ?? {})) assert.ok(names.has(k), `unsupported names no case: ${k}`);
    });
    for (const c of CASES) {
      const why = src.unsupported?.[c.name];
      it(c.name, why !== undefined ? { skip: `not supported: ${why}` } : {}, () => c.run(src));
    }
  });
}
