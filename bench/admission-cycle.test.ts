// Keeps the admission-cycle benchmark from rotting: the peer shapes declare Kueue's counts,
// the virtual-time driver runs scaled-down shapes (plain and TAS) to the end with every
// Workload finished and its figures filled in, and the 1,000-ClusterQueue cycle admits one
// head per ClusterQueue on a small instance.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { PEER_RACK } from './shapes.ts';
import {
  CLASS_NAMES,
  checkPeerRun,
  cycleOnce,
  cycleShape,
  describePeerRun,
  packingBoundSeconds,
  PEER_BASELINE,
  PEER_TAS,
  type PeerRunShape,
  runPeerShape,
  workloadCount,
} from './admission-cycle.ts';
import type { Decision } from '../src/admission/cycle.ts';

/** The baseline's queues, classes and intervals with a few Workloads per class. */
const TINY: PeerRunShape = {
  ...PEER_BASELINE,
  name: 'tiny',
  cohorts: 2,
  clusterQueuesPerCohort: 2,
  classes: PEER_BASELINE.classes.map((c) => ({ ...c, count: { small: 12, medium: 4, large: 2 }[c.name] })),
};

const TINY_TAS: PeerRunShape = {
  ...PEER_TAS,
  name: 'tiny-tas',
  cohorts: 1,
  clusterQueuesPerCohort: 2,
  topology: { blocks: 1, racksPerBlock: 2, nodesPerRack: 4 },
  classes: PEER_TAS.classes.map((c) => {
    const n = { small: 9, medium: 3, large: 3 }[c.name];
    return { ...c, count: n, tas: { ...c.tas!, variants: { required: n / 3, preferred: n / 3, balanced: n / 3 } } };
  }),
};

describe('peer shapes', () => {
  it("are Kueue's baseline and tas generators", () => {
    assert.equal(workloadCount(PEER_BASELINE), 15_000);
    assert.equal(workloadCount(PEER_TAS), 15_000);
    assert.equal(PEER_BASELINE.cohorts * PEER_BASELINE.clusterQueuesPerCohort, 30);
    assert.equal(packingBoundSeconds(PEER_BASELINE), 66);
    assert.equal(PEER_TAS.topology!.blocks * PEER_TAS.topology!.racksPerBlock * PEER_TAS.topology!.nodesPerRack, 640);
    for (const c of PEER_TAS.classes) {
      const v = c.tas!.variants;
      assert.equal(v.required + v.preferred + v.balanced, c.count, c.name);
      // Every variant asks for the class's CPU in total.
      assert.equal((c.tas!.pods * Number.parseFloat(c.tas!.perPod)) / (c.tas!.perPod.endsWith('m') ? 1000 : 1), c.cpu, c.name);
    }
  });
});

describe('the virtual-time driver', () => {
  it('runs a scaled-down baseline to the end: every Workload admitted and finished', () => {
    const admitted = new Set<string>();
    let preempted = 0;
    let last = -1;
    const r = runPeerShape(TINY, {
      onCycle: (t: number, ds: readonly Decision[]) => {
        assert.ok(t >= last, 'virtual time never goes back');
        last = t;
        for (const d of ds) {
          if (d.kind === 'admit') admitted.add(d.key);
          if (d.kind === 'preempt') preempted++;
        }
      },
    });
    assert.equal(checkPeerRun(r), undefined);
    assert.equal(r.workloads, workloadCount(TINY));
    assert.equal(r.finished, r.workloads);
    assert.equal(admitted.size, r.workloads);
    assert.equal(r.preemptions, preempted);
    assert.equal(r.admissions, r.workloads + r.preemptions, 'each preempted run is admitted again');
    assert.ok(r.makespanS >= r.packingBoundS);
    assert.ok(r.cycles > 0 && r.heads >= r.admissions && r.cpuMs > 0);
    assert.ok(r.usagePct > 0 && r.usagePct <= 100 + 1e-9, `usage ${r.usagePct}`);
    for (const c of CLASS_NAMES) assert.ok(Number.isFinite(r.meanAdmissionMs[c]) && r.meanAdmissionMs[c] >= 0, c);
    assert.match(describePeerRun(r), /cycles .* admissions .* makespan .* packing bound .* mean time to admission small/);
  });

  it('is deterministic', () => {
    const a = runPeerShape(TINY);
    const b = runPeerShape(TINY);
    assert.deepEqual(
      [a.cycles, a.heads, a.admissions, a.preemptions, a.makespanS, a.meanAdmissionMs],
      [b.cycles, b.heads, b.admissions, b.preemptions, b.makespanS, b.meanAdmissionMs],
    );
  });

  it('runs a scaled-down TAS shape to the end, each admission placed within one rack when required', () => {
    let placed = 0;
    const r = runPeerShape(TINY_TAS, {
      onCycle: (_t: number, ds: readonly Decision[]) => {
        for (const d of ds) {
          if (d.kind !== 'admit') continue;
          const ps = d.admitted.podSets[0]!;
          assert.ok(ps.assignment, `${d.key} has no topology assignment`);
          placed++;
          if (d.workload.spec.podSets[0]!.topologyRequest?.required === PEER_RACK) {
            // Hostnames are `<rack>-n<i>`: one rack for a rack-required Workload.
            const racks = new Set(ps.assignment.domains.map((x) => x.values[x.values.length - 1]!.replace(/-n\d+$/, '')));
            assert.equal(racks.size, 1, `${d.key} spans racks`);
          }
        }
      },
    });
    assert.equal(checkPeerRun(r), undefined);
    assert.equal(r.finished, workloadCount(TINY_TAS));
    assert.equal(placed, r.admissions);
  });
});

describe('one cycle at scale (scaled down)', () => {
  it('admits one head per ClusterQueue, the same on every rebuild', () => {
    const b = cycleShape({ clusterQueues: 20, clusterQueuesPerCohort: 10, small: 3, medium: 1, large: 1 });
    assert.equal(b.pending, 100);
    for (let i = 0; i < 2; i++) assert.deepEqual(cycleOnce(b.build()), { admitted: 20, heads: 20, preempting: 0 });
  });
});
