// Invariants of the admission cycle over random clusters, queues and gangs (issue 4 §3):
// quota never exceeded (borrowing counted), no node over capacity, every admitted gang at
// or above its minimum and inside its required domain, a gang group never partly
// admitted, the same input gives the same decisions, and under BestEffortFIFO nothing that
// fits is left pending behind a workload that does not.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import type { Workload } from '../api/objects.ts';
import { decodeV1beta2 } from '../placement/assignment-codec.ts';
import { RACK, TAS_LEVELS, admissionEnv, cq, flavor, tasFlavor, wl } from '../testing/admission.ts';
import { node } from '../testing/builders.ts';
import { assignFlavors } from './flavor-assigner.ts';
import { workloadInfo } from './workload-info.ts';

interface Scenario {
  racks: number;
  hosts: number;
  cpuPerNode: number;
  queues: { tas: boolean; nominal: number; borrowing?: number; lending?: number; cohort: boolean; strict: boolean; preempt: boolean }[];
  workloads: {
    q: number;
    count: number;
    cpu: number;
    priority: number;
    created: number;
    topology: 'none' | 'required' | 'preferred';
    gang?: { min: number; nonStrict: boolean; partner?: number };
  }[];
}

const scenario: fc.Arbitrary<Scenario> = fc.record({
  racks: fc.integer({ min: 1, max: 3 }),
  hosts: fc.integer({ min: 1, max: 3 }),
  cpuPerNode: fc.integer({ min: 2, max: 8 }),
  queues: fc.array(
    fc.record({
      tas: fc.boolean(),
      nominal: fc.integer({ min: 0, max: 20 }),
      borrowing: fc.option(fc.integer({ min: 0, max: 10 }), { nil: undefined }),
      lending: fc.option(fc.integer({ min: 0, max: 10 }), { nil: undefined }),
      cohort: fc.boolean(),
      strict: fc.boolean(),
      preempt: fc.boolean(),
    }),
    { minLength: 1, maxLength: 4 },
  ),
  workloads: fc.array(
    fc.record({
      q: fc.nat(),
      count: fc.integer({ min: 1, max: 4 }),
      cpu: fc.integer({ min: 1, max: 4 }),
      priority: fc.integer({ min: 0, max: 3 }),
      created: fc.integer({ min: 0, max: 100 }),
      topology: fc.constantFrom('none' as const, 'required' as const, 'preferred' as const),
      gang: fc.option(
        fc.record({ min: fc.integer({ min: 1, max: 4 }), nonStrict: fc.boolean(), partner: fc.option(fc.nat(), { nil: undefined }) }),
        { nil: undefined },
      ),
    }),
    { minLength: 1, maxLength: 12 },
  ),
});

function build(s: Scenario) {
  const nodes = [];
  for (let r = 0; r < s.racks; r++)
    for (let h = 0; h < s.hosts; h++)
      nodes.push(
        node(`r${r}-h${h}`)
          .labels({ 'cloud.com/block': 'b0', [RACK]: `r${r}` })
          .cpu(String(s.cpuPerNode))
          .build(),
      );
  const tasF = flavor('tas', { topology: 'default' });
  const plain = flavor('plain');
  const tas = tasFlavor(tasF, TAS_LEVELS, nodes);
  const clusterQueues = s.queues.map((q, i) => {
    const b = cq(`q${i}`);
    const limits: [string, string?, string?] = [
      String(q.nominal),
      q.cohort && q.borrowing !== undefined ? String(q.borrowing) : undefined,
      q.cohort && q.lending !== undefined ? String(Math.min(q.lending, q.nominal)) : undefined,
    ];
    b.quota(q.tas ? 'tas' : 'plain', { cpu: limits });
    if (q.cohort) b.cohort('c');
    if (q.strict) b.strict();
    if (q.preempt) b.preemption({ withinClusterQueue: 'LowerPriority', reclaimWithinCohort: q.cohort ? 'Any' : 'Never' });
    return b.build();
  });
  const env = admissionEnv({ clusterQueues, flavors: [tasF, plain], tas: [tas] });
  const workloads: Workload[] = s.workloads.map((w, i) => {
    const qi = w.q % s.queues.length;
    const topo = s.queues[qi]!.tas && w.topology !== 'none' ? { [w.topology]: RACK } : undefined;
    const b = wl(`w${i}`)
      .queue(`q${qi}`)
      .pods(w.count, { cpu: String(w.cpu) }, topo ? { topology: topo } : {})
      .priority(w.priority)
      .created(w.created);
    if (w.gang) {
      const partner = w.gang.partner !== undefined ? w.gang.partner % s.workloads.length : undefined;
      const groups =
        partner !== undefined && partner !== i && s.workloads[partner]!.gang ? [`default/w${i}`, `default/w${partner}`].sort() : undefined;
      b.gang(Math.min(w.gang.min, w.count), { mode: w.gang.nonStrict ? 'NonStrict' : 'Strict', ...(groups ? { groups } : {}) });
    }
    return b.build();
  });
  env.submit(...workloads);
  return { env, tas, workloads };
}

function run(s: Scenario) {
  const b = build(s);
  const r = b.env.settle();
  return { ...b, r };
}

describe('admission cycle invariants', () => {
  it('quota is never exceeded and no node is over capacity', () => {
    fc.assert(
      fc.property(scenario, (s) => {
        const { env, tas } = run(s);
        assert.deepEqual(env.snap.quota.violations(), []);
        const cpu = tas.snapshot.resourceIndex('cpu');
        for (const leaf of tas.snapshot.leaves())
          assert.ok(tas.snapshot.free(leaf, cpu) >= -1e-9, `leaf ${tas.snapshot.id(leaf)} over capacity`);
      }),
      { numRuns: 150 },
    );
  });

  it('every admitted gang is at or above its minimum and inside its required domain', () => {
    fc.assert(
      fc.property(scenario, (s) => {
        const { env } = run(s);
        for (const a of env.snap.admitted.values()) {
          const info = workloadInfo(a.workload);
          const pods = a.podSets.reduce((n, p) => n + p.count, 0);
          if (info.gang && !a.reservedOnly) assert.ok(pods >= info.gang.min, `${a.key}: ${pods} < min ${info.gang.min}`);
          for (const ps of a.podSets) {
            const req = info.podSets.find((p) => p.name === ps.name)!.podSet.topologyRequest;
            if (req?.required === RACK && ps.assignment) {
              // Hostnames are `r<rack>-h<host>` (assignments carry only the hostname level).
              const racks = new Set(ps.assignment.domains.map((d) => d.values[d.values.length - 1]!.split('-')[0]));
              assert.ok(racks.size <= 1, `${a.key} spans racks ${[...racks].join(',')}`);
            }
          }
        }
      }),
      { numRuns: 150 },
    );
  });

  it('a gang group is never partly admitted', () => {
    fc.assert(
      fc.property(scenario, (s) => {
        const { env, workloads } = run(s);
        const submitted = new Set(workloads.map((w) => `default/${w.metadata.name}`));
        for (const a of env.snap.admitted.values()) {
          const g = workloadInfo(a.workload).gang;
          if (!g || a.reservedOnly) continue;
          for (const id of g.group)
            if (submitted.has(id))
              assert.ok(env.snap.admitted.has(id) && !env.snap.admitted.get(id)!.reservedOnly, `${a.key} admitted without ${id}`);
        }
      }),
      { numRuns: 150 },
    );
  });

  it('the same input gives the same decisions', () => {
    fc.assert(
      fc.property(scenario, (s) => {
        const show = (x: ReturnType<typeof run>) =>
          JSON.stringify(
            [...x.r.workloads.entries()].sort(([a], [b]) => (a < b ? -1 : 1)).map(([k, w]) => [k, w.status, w.metadata.annotations]),
          );
        assert.equal(show(run(s)), show(run(s)));
      }),
      { numRuns: 75 },
    );
  });

  it('BestEffortFIFO: nothing that fits stays pending behind a workload that cannot', () => {
    fc.assert(
      fc.property(scenario, (s) => {
        const { env } = run(s);
        for (const name of env.queues.names()) {
          const q = env.queues.queue(name)!;
          if (q.strategy !== 'BestEffortFIFO') continue;
          for (const info of q.pending()) {
            if (info.gang) continue;
            const a = assignFlavors(env.snap, env.snap.clusterQueues.get(name)!, info, { placement: {} });
            assert.notEqual(a.mode, 'Fit', `${info.key} fits but was left pending`);
          }
        }
      }),
      { numRuns: 150 },
    );
  });

  it('admitted assignments decode and add up to the admitted counts', () => {
    fc.assert(
      fc.property(scenario, (s) => {
        const { r } = run(s);
        for (const w of r.workloads.values()) {
          for (const psa of w.status?.admission?.podSetAssignments ?? []) {
            if (!psa.topologyAssignment) continue;
            const a = decodeV1beta2(psa.topologyAssignment, {});
            assert.equal(
              a.domains.reduce((n, d) => n + d.count, 0),
              psa.count,
            );
          }
        }
      }),
      { numRuns: 100 },
    );
  });
});
