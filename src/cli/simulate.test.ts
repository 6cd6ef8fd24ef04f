import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, it } from 'node:test';
import type { Workload } from '../api/objects.ts';
import type { SimulationReport } from '../cluster/report.ts';
import { decodeV1beta2 } from '../placement/assignment-codec.ts';
import { ONE_NODE_YAML, runCli as run, tmpFile } from '../testing/cli.ts';
import { main } from './main.ts';
import { clockText, parseUntil, simulateCommand } from './simulate.ts';

const CLUSTER = ONE_NODE_YAML;

describe('topoqueue simulate: arguments', () => {
  it('needs at least one -f', async () => {
    const r = await run(['simulate']);
    assert.equal(r.code, 2);
    assert.equal(r.err, 'error: -f: at least one -f PATH (a YAML or JSON file, or a directory) is required\n');
  });

  it('--until takes idle or a Go duration, and says so otherwise', async () => {
    const f = tmpFile('c.yaml', CLUSTER);
    for (const bad of ['tomorrow', '24', '-1h']) {
      const r = await run(['simulate', '-f', f, '--until', bad]);
      assert.equal(r.code, 2, bad);
      assert.equal(
        r.err,
        `error: --until: must be "idle" or a non-negative Go duration such as "24h", "90m" or "1h30m", got ${JSON.stringify(bad)}\n`,
      );
    }
    assert.equal(parseUntil('idle'), undefined);
    assert.equal(parseUntil(undefined), undefined);
    assert.equal(parseUntil('1h30m'), 5_400_000);
    assert.equal(parseUntil('250ms'), 250);
  });

  it('an unknown flag is a usage error', async () => {
    const r = await run(['simulate', '-f', 'x.yaml', '--speed', '10']);
    assert.equal(r.code, 2);
    assert.match(r.err, /unknown option '--speed'/);
  });
});

describe('topoqueue simulate: bad input is refused as plan refuses it', () => {
  it('a missing file', async () => {
    const r = await run(['simulate', '-f', '/nonexistent/cluster.yaml']);
    assert.equal(r.code, 2);
    assert.equal(r.err, 'error: /nonexistent/cluster.yaml: no such file or directory\n');
  });

  it('malformed YAML and a bad field name the file, line, document and field; nothing runs', async () => {
    const f = tmpFile(
      'bad.yaml',
      `${CLUSTER}---\napiVersion: v1\nkind: Node\nmetadata: {name: n2}\nstatus:\n  allocatable: {cpu: "9x6"}\n---\nkind: [\n`,
    );
    const r = await run(['simulate', '-f', f, '--strict']);
    assert.equal(r.code, 2);
    const lines = r.err.trim().split('\n');
    assert.equal(lines.length, 2, r.err);
    assert.match(lines[0]!, new RegExp(`^error: ${f}:17, document 3: malformed YAML`));
    assert.match(lines[1]!, new RegExp(`^error: ${f}:10, document 2, Node/n2, status.allocatable.cpu: Invalid value: "9x6"`));
    assert.equal(r.out, '');
  });

  it('a bad submit-at annotation, and a SimulationEvent naming an unknown node', async () => {
    const f = tmpFile(
      'w.yaml',
      `${CLUSTER}---
apiVersion: batch/v1
kind: Job
metadata:
  name: j
  namespace: team
  annotations: {topoqueue.io/submit-at: soon}
spec:
  template:
    spec:
      restartPolicy: Never
      containers: [{name: c}]
---
apiVersion: topoqueue.io/v1alpha1
kind: SimulationEvent
metadata: {name: e1}
spec: {at: 1h, node: n7, action: NotReady}
`,
    );
    const r = await run(['simulate', '-f', f, '--strict']);
    assert.equal(r.code, 2);
    assert.equal(
      r.err,
      `error: ${f}:10, document 2, Job/team/j, metadata.annotations["topoqueue.io/submit-at"]: must be a non-negative Go duration from the start of the simulation, such as "90s", "2h" or "1h30m", got "soon"\n` +
        `error: ${f}:22, document 3, SimulationEvent/e1, spec.node: no Node named "n7" in the input\n`,
    );
  });

  it('a job plan would refuse (a cross-PodSet rule) is refused before the run', async () => {
    const f = tmpFile(
      'js.yaml',
      `apiVersion: batch/v1
kind: Job
metadata:
  name: j
  namespace: team
spec:
  template:
    metadata:
      annotations:
        kueue.x-k8s.io/podset-required-topology: rack
        kueue.x-k8s.io/podset-preferred-topology: block
    spec:
      restartPolicy: Never
      containers: [{name: c}]
`,
    );
    const r = await run(['simulate', '-f', f]);
    assert.equal(r.code, 2);
    assert.match(r.err, /^error: .*js\.yaml.*Job\/team\/j/);
  });
});

describe('topoqueue simulate: output', () => {
  it('prints the summary, writes the report, and reports progress as plain lines off a terminal', async () => {
    const f = tmpFile('c.yaml', CLUSTER);
    const report = join(dirname(f), 'report.json');
    const r = await run(['simulate', '-f', f, '--until', '2h', '--report', report]);
    assert.equal(r.code, 0, r.err);
    assert.match(
      r.out,
      /^simulated 2h0m0s of virtual time in \d+ steps \(nothing left to do\)\nworkloads: 0 \(Finished 0, Admitted 0, Pending 0, Evicted 0, Failed 0\)\n/,
    );
    assert.match(r.out, /\nviolations: none\n/);
    assert.ok(existsSync(report));
    const json = JSON.parse(readFileSync(report, 'utf8')) as { kind: string; run: { end: number; until: number } };
    assert.equal(json.kind, 'SimulationReport');
    assert.deepEqual([json.run.end, json.run.until], [7200, 7200]);
    assert.equal(r.err, 'simulate: 02:00:00 virtual, 0/0 workloads finished\n');
  });

  it('on a terminal, progress is one line updated in place, ended at the end', async () => {
    const f = tmpFile('c.yaml', CLUSTER);
    let err = '';
    const code = await main(['simulate', '-f', f, '--until', '90m'], { out: () => {}, err: (s) => (err += s), errIsTTY: true });
    assert.equal(code, 0);
    const ERASE_LINE = '\x1b[K';
    assert.ok(err.startsWith('\rsimulate: 01:30:00 virtual, 0/0 workloads finished, '), JSON.stringify(err));
    assert.ok(err.endsWith(` steps${ERASE_LINE}\n`), JSON.stringify(err));
    assert.equal(err.split('\n').length, 2);
  });

  it('a report that cannot be written is a usage error naming --report', async () => {
    const f = tmpFile('c.yaml', CLUSTER);
    const r = await run(['simulate', '-f', f, '--report', '/nonexistent/dir/r.json']);
    assert.equal(r.code, 2);
    assert.match(r.err, /error: --report: \/nonexistent\/dir\/r\.json: the directory \/nonexistent\/dir does not exist/);
  });

  it('virtual time is shown as h:mm:ss, hours past a day included', () => {
    assert.equal(clockText(0), '00:00:00');
    assert.equal(clockText(3_723_000), '01:02:03');
    assert.equal(clockText(26 * 3_600_000), '26:00:00');
  });
});

describe("topoqueue simulate -f examples/gb200-day (the README's main command)", async () => {
  const dir = dirname(tmpFile('x', ''));
  const first = await run(['simulate', '-f', 'examples/gb200-day', '--report', join(dir, 'a.json')]);
  const second = await run(['simulate', '-f', 'examples/gb200-day', '--report', join(dir, 'b.json')]);
  const report = JSON.parse(readFileSync(join(dir, 'a.json'), 'utf8')) as SimulationReport;
  const byName = new Map(report.workloads.map((w) => [`${w.kind} ${w.namespace}/${w.name}`, w]));

  it('runs a day of mixed traffic to idle with no invariant violation', () => {
    assert.equal(report.run.stop, 'idle');
    assert.deepEqual(report.violations, []);
    assert.equal(first.code, 0, first.err);
    assert.match(first.out, /\nviolations: none\n/);
    // Jobs, JobSets, a LeaderWorkerSet, plain-Pod groups, a Koordinator gang and a gang group.
    assert.deepEqual([...new Set(report.workloads.map((w) => w.kind))].sort(), ['Gang', 'Job', 'JobSet', 'LeaderWorkerSet', 'Pod group']);
    assert.ok(report.run.end > 20 * 3600 && report.run.end < 26 * 3600, String(report.run.end));
  });

  it('the same input gives a byte-identical report', () => {
    assert.equal(readFileSync(join(dir, 'a.json'), 'utf8'), readFileSync(join(dir, 'b.json'), 'utf8'));
    assert.equal(first.out, second.out);
  });

  it('rack-required jobs run inside one NVL72 rack; the node failures evict and the reclaim preempts', () => {
    const rackJobs = report.workloads.filter((x) => x.kind === 'Job' && /^(pretrain|finetune)-/.test(x.name));
    assert.equal(rackJobs.length, 18);
    for (const w of rackJobs) {
      const racks = new Set(w.pods.filter((p) => p.phase === 'Succeeded').map((p) => p.node!.replace(/-n\d+$/, '')));
      if (w.status === 'Finished') assert.equal(racks.size, 1, `${w.name}: ${[...racks].join(', ')}`);
      for (const p of w.placement)
        assert.equal(new Set(p.domains.map((d) => d.values[0]!.replace(/-n\d+$/, ''))).size, 1, `${w.name}: ${JSON.stringify(p.domains)}`);
    }
    assert.equal(report.summary.evictionsByReason.NodeFailures, 1);
    assert.ok((report.summary.evictionsByReason.Preempted ?? 0) > 0);
    assert.ok(report.summary.meanTimeToAdmission.research! > 0);
  });

  it('two trays failing together under sweep-5 are repaired together: its pods there fail, the Workload is not evicted', () => {
    const sweep = byName.get('Job research/sweep-5')!;
    assert.deepEqual(
      sweep.evictions.filter((e) => e.reason === 'NodeFailures'),
      [],
    );
    for (const tray of ['b2-r4-n01', 'b2-r4-n02'])
      assert.deepEqual(
        sweep.pods.filter((p) => p.node === tray).map((p) => p.phase),
        ['Failed'],
        tray,
      );
    assert.equal(sweep.status, 'Finished');
  });

  it('the serving LeaderWorkerSet never finishes: it is still Admitted at the end, its pods running', () => {
    const lws = byName.get('LeaderWorkerSet inference/llm-serve')!;
    assert.equal(lws.status, 'Admitted');
    assert.equal(lws.pods.length, 8);
    assert.ok(lws.pods.every((p) => p.phase === 'Running'));
  });

  it("a preemption names its preemptor's namespace/name; every admission and each pending reason's start are listed (issue 14 §3)", () => {
    const workloadKeys = new Set(report.workloads.flatMap((w) => w.workloads.map((n) => `${w.namespace}/${n}`)));
    const preempted = report.workloads.flatMap((w) => w.evictions.filter((e) => e.reason === 'Preempted'));
    assert.ok(preempted.length > 0);
    for (const e of preempted) {
      assert.ok(e.preemptor !== null && workloadKeys.has(e.preemptor), `${e.workload}: ${e.preemptor}`);
      // The preemptor is admitted once its victims are gone, not before the eviction.
      const by = report.workloads.find((w) => w.workloads.some((n) => `${w.namespace}/${n}` === e.preemptor))!;
      assert.ok(by.admissions.some((a) => a.at >= e.at));
    }
    for (const e of report.workloads.flatMap((w) => w.evictions.filter((x) => x.reason !== 'Preempted'))) assert.equal(e.preemptor, null);
    // The node failure: evicted once, admitted twice (the first admission and the one after).
    const failed = byName.get('Job training/pretrain-1')!;
    assert.deepEqual(
      failed.admissions.map((a) => a.clusterQueue),
      ['training', 'training'],
    );
    assert.ok(failed.admissions[1]!.at >= failed.evictions[0]!.at);
    assert.ok(failed.admissions.every((a) => a.placement.length > 0 && a.placement.every((p) => p.domains.length > 0)));
    for (const w of report.workloads) {
      const reasons = w.pendingReasons;
      for (let i = 1; i < reasons.length; i++) {
        assert.ok(reasons[i]!.at >= reasons[i - 1]!.at);
        if (
          reasons[i]!.workload === reasons[i - 1]!.workload &&
          w.admissions.every((a) => a.at > reasons[i]!.at || a.at < reasons[i - 1]!.at)
        )
          assert.notEqual(reasons[i]!.reason, reasons[i - 1]!.reason, `${w.name}: a reason repeated without an admission between`);
      }
    }
    const waited = report.workloads.find((w) => w.admittedAt !== null && w.submittedAt !== null && w.admittedAt > w.submittedAt)!;
    assert.ok(waited.pendingReasons.length > 0 && waited.pendingReasons[0]!.at < waited.admittedAt!, waited.name);
  });

  it("a workload's Events are folded by kind, type and reason with counts", () => {
    const failed = byName.get('Job training/pretrain-1')!;
    const admitted = failed.events.find((e) => e.kind === 'Workload' && e.reason === 'Admitted')!;
    assert.equal(admitted.count, 2);
    assert.ok(admitted.first < admitted.last);
    assert.ok(failed.events.some((e) => e.type === 'Warning' && e.reason === 'EvictedDueToNodeFailures'));
    for (const w of report.workloads) assert.ok(w.events.length <= 16);
  });

  it('every other workload finishes', () => {
    const notFinished = report.workloads.filter((w) => w.status !== 'Finished' && w.kind !== 'LeaderWorkerSet');
    assert.deepEqual(
      notFinished.map((w) => `${w.kind} ${w.namespace}/${w.name}: ${w.status}`),
      [],
    );
  });
});

describe('plan and simulate agree on the same input (issue 14 §2)', () => {
  it('without ClusterQueues, simulate runs what plan places, through the same implicit queue', async () => {
    const planned = await run(['plan', '-f', 'examples/tas-basic', '-o', 'json']);
    const placed = (JSON.parse(planned.out) as { items: { metadata: { name: string }; status?: { admission?: unknown } }[] }).items
      .filter((w) => w.status?.admission)
      .map((w) => w.metadata.name)
      .sort();
    assert.equal(placed.length, 3);
    const r = await run(['simulate', '-f', 'examples/tas-basic']);
    assert.equal(r.code, 0, r.err);
    assert.match(r.err, /note: no ClusterQueue in the input: jobs and pods go through the implicit ClusterQueue topoqueue-implicit/);
    assert.match(r.out, /workloads: 4 \(Finished 3, /);
    assert.doesNotMatch(r.out, /LocalQueue user-queue doesn't exist/);
    assert.match(r.out, /Pending Job research\/too-big: TopologyPlacementFailed/);
  });

  it('Volcano Jobs and HyperJobs are placed by topoqueue in simulate on the nodes plan gives them', async () => {
    for (const example of ['examples/volcano-spine-leaf', 'examples/volcano-roce-nvlink']) {
      const planned = await run(['plan', '-f', example, '-o', 'json']);
      const planNodes = new Map<string, string[]>();
      for (const w of (JSON.parse(planned.out) as { items: Workload[] }).items) {
        const owner = w.metadata.ownerReferences?.[0]?.name ?? w.metadata.name;
        const a = w.status?.admission;
        if (a)
          planNodes.set(
            owner,
            a.podSetAssignments
              .flatMap((p) => decodeV1beta2(p.topologyAssignment!).domains.flatMap((d) => Array<string>(d.count).fill(d.values.at(-1)!)))
              .sort(),
          );
      }
      const report = join(dirname(tmpFile('x', '')), 'report.json');
      const r = await run(['simulate', '-f', example, '--report', report]);
      assert.equal(r.code, 0, r.err);
      const simulated = (JSON.parse(readFileSync(report, 'utf8')) as SimulationReport).workloads;
      assert.ok(planNodes.size > 0);
      for (const [name, nodes] of planNodes) {
        const w = simulated.find((x) => x.name === name)!;
        assert.deepEqual(w.pods.map((p) => p.node).sort(), nodes, `${example} ${name}`);
      }
    }
  });

  it('a pod already Running in the input keeps its node and never keeps --until idle from ending', async () => {
    for (const example of ['examples/tas-basic', 'examples/queues-gangs']) {
      const r = await run(['simulate', '-f', example]);
      assert.match(r.out, /\(nothing left to do\)/, example);
      assert.doesNotMatch(r.out, /stopped 7 days/, example);
    }
  });

  it('run-duration on a pod already Running is honoured', async () => {
    const f = tmpFile(
      'p.yaml',
      `${CLUSTER}---
apiVersion: v1
kind: Pod
metadata: {name: nb, namespace: team, annotations: {topoqueue.io/run-duration: 2h}}
spec: {nodeName: n1, containers: [{name: c, resources: {requests: {cpu: "1"}}}]}
status: {phase: Running}
`,
    );
    const dirPath = dirname(f);
    const report = join(dirPath, 'report.json');
    const r = await run(['simulate', '-f', f, '--report', report]);
    assert.equal(r.code, 0, r.err);
    assert.match(r.out, /simulated 2h0m[0-9]s of virtual time/);
    assert.ok(existsSync(report));
    assert.ok(readFileSync(report, 'utf8').includes('"SimulationReport"'));
  });
});

describe('--report is checked before the run', () => {
  it('a missing directory, a directory, and one of the inputs are refused at once', async () => {
    const f = tmpFile('c.yaml', CLUSTER);
    const cases: [string, RegExp][] = [
      [join(dirname(f), 'nope', 'r.json'), /--report: .*nope\/r\.json: the directory .*nope does not exist/],
      [dirname(f), /--report: .*: is a directory; give a file name/],
      [f, /--report: .*c\.yaml: is one of the inputs \(-f\); write the report elsewhere/],
    ];
    for (const [report, message] of cases) {
      const r = await run(['simulate', '-f', f, '--report', report]);
      assert.equal(r.code, 2, report);
      assert.match(r.err, message);
      assert.equal(r.out, '', 'nothing ran');
    }
    assert.equal(readFileSync(f, 'utf8'), CLUSTER, 'the input is untouched');
  });
});

describe('simulate: one bad object never sinks the rest', () => {
  it('a bad Node is left out, the rest runs, the report lists what was refused; exit 2', async () => {
    const f = tmpFile(
      'bad.yaml',
      `${CLUSTER}---\napiVersion: v1\nkind: Node\nmetadata: {name: n2}\nstatus:\n  allocatable: {cpu: "9x6"}\n`,
    );
    const report = join(dirname(f), 'report.json');
    const r = await run(['simulate', '-f', f, '-f', 'examples/tas-basic', '--report', report]);
    assert.equal(r.code, 2);
    assert.match(r.err, /error: .*bad\.yaml:\d+, document 2, Node\/n2, status\.allocatable\.cpu/);
    assert.match(r.err, /the objects they name were left out of the run/);
    assert.match(r.out, /Finished 3/);
    const json = JSON.parse(readFileSync(report, 'utf8')) as SimulationReport;
    assert.equal(json.input!.errors.length, 1);
    assert.equal(json.input!.errors[0]!.object, 'Node/n2');
    assert.equal(json.input!.errors[0]!.field, 'status.allocatable.cpu');
  });
});

describe('simulate: a refused Workload or job is a row of the report, never admitted, with the rule (issue 14 §1)', () => {
  it('a job breaking a topology rule and a Workload failing its schema are Failed rows with the rule; the rest runs', async () => {
    const f = tmpFile(
      'refused.yaml',
      `apiVersion: batch/v1
kind: Job
metadata:
  name: j
  namespace: team
  labels: {kueue.x-k8s.io/queue-name: lq}
spec:
  template:
    metadata:
      annotations:
        kueue.x-k8s.io/podset-required-topology: rack
        kueue.x-k8s.io/podset-preferred-topology: block
    spec:
      restartPolicy: Never
      containers: [{name: c}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: Workload
metadata: {name: w, namespace: team}
spec:
  podSets: [{name: main, count: -1, template: {spec: {containers: [{name: c}]}}}]
`,
    );
    const report = join(dirname(f), 'refused.json');
    const r = await run(['simulate', '-f', f, '-f', 'examples/tas-basic', '--report', report]);
    assert.equal(r.code, 2);
    const json = JSON.parse(readFileSync(report, 'utf8')) as SimulationReport;
    const rows = json.workloads.filter((w) => w.namespace === 'team');
    assert.deepEqual(
      rows.map((w) => [w.kind, w.name, w.status, w.queue, w.admittedAt, w.submittedAt]),
      [
        ['Workload', 'w', 'Failed', null, null, null],
        ['Job', 'j', 'Failed', 'lq', null, null],
      ],
    );
    assert.match(rows[0]!.errors[0]!, /^Workload\/team\/w: spec\.podSets\[0\]\.count: /);
    assert.match(rows[1]!.errors.join('\n'), /^Job\/team\/j: .*podset-(required|preferred)-topology/m);
    assert.match(r.out, /Failed Job team\/j: Job\/team\/j: /);
    assert.equal(json.summary.byStatus.Finished, 3);
  });
});

describe('simulate: PodGroup and HyperNode status as the controllers write them, at the end and over time (issue 14 §3)', () => {
  it("a PodGroup's phase and counts are its workload's, at the end and at each change", async () => {
    const f = join(dirname(tmpFile('x', '')), 'pg.json');
    const r = await run(['simulate', '-f', 'examples/queues-gangs', '--report', f]);
    assert.notEqual(r.code, 1, r.err);
    const json = JSON.parse(readFileSync(f, 'utf8')) as SimulationReport;
    const w = json.workloads.find((x) => x.kind === 'PodGroup' && x.name === 'eval')!;
    assert.equal(w.podGroups.length, 1);
    const g = w.podGroups[0]!;
    assert.equal(g.apiVersion, 'scheduling.x-k8s.io/v1alpha1');
    const { at: _at, ...last } = g.history.at(-1)!;
    assert.deepEqual(g.status, last);
    assert.equal(g.status.phase, 'Finished');
    assert.equal(g.status.succeeded, 2);
    assert.ok(g.history.some((p) => p.phase === 'Running'));
    for (let i = 1; i < g.history.length; i++) assert.ok(g.history[i]!.at > g.history[i - 1]!.at);
    for (const x of json.workloads.filter((y) => y.kind !== 'PodGroup')) assert.deepEqual(x.podGroups, [], x.name);
  });

  it("a HyperNode's nodeCount drops when one of the nodes it selects is deleted", async () => {
    const node = (name: string) => `---
apiVersion: v1
kind: Node
metadata: {name: ${name}, labels: {kubernetes.io/hostname: ${name}}}
status:
  allocatable: {cpu: "8", pods: "110"}
  conditions: [{type: Ready, status: "True"}]
`;
    const f = tmpFile(
      'hn.yaml',
      `${node('n1')}${node('n2')}---
apiVersion: topology.volcano.sh/v1alpha1
kind: HyperNode
metadata: {name: h}
spec:
  tier: 1
  members: [{type: Node, selector: {regexMatch: {pattern: "^n"}}}]
---
apiVersion: topoqueue.io/v1alpha1
kind: SimulationEvent
metadata: {name: gone}
spec: {at: 1h, node: n2, action: Delete}
`,
    );
    const out = join(dirname(f), 'hn.json');
    const r = await run(['simulate', '-f', f, '--until', '2h', '--report', out]);
    assert.notEqual(r.code, 1, r.err);
    const json = JSON.parse(readFileSync(out, 'utf8')) as SimulationReport;
    assert.deepEqual(json.hyperNodes, [
      {
        name: 'h',
        tier: 1,
        nodeCount: 1,
        deleted: false,
        history: [
          { at: 0, nodeCount: 2 },
          { at: json.hyperNodes[0]!.history[1]!.at, nodeCount: 1 },
        ],
      },
    ]);
    assert.ok(json.hyperNodes[0]!.history[1]!.at >= 3600);
  });
});

describe('simulate: Ctrl-C writes the report so far, marked partial', () => {
  it('an interrupted run still writes the report and the summary; run.partial is true; exit 130', async () => {
    const report = join(dirname(tmpFile('x', '')), 'partial.json');
    const signal = AbortSignal.abort();
    let out = '';
    const r = await simulateCommand({ filename: ['examples/gb200-day'], report, signal }, { out: (s) => (out += s), err: () => {} });
    assert.equal(r.code, 130);
    assert.match(out, /\(interrupted \(Ctrl-C\): a partial report\)/);
    const json = JSON.parse(readFileSync(report, 'utf8')) as SimulationReport;
    assert.equal(json.run.stop, 'interrupted');
    assert.equal(json.run.partial, true);
    assert.ok(json.workloads.length > 0);
  });
});
