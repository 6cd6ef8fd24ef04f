// The input figures (issue 14 §5, "scale of inputs"): `input.yaml.110k-nodes` (and `.rss`),
// `input.json.110k-nodes` and `hypernode.100k-members.heap`, on files from
// bench/input-shapes.ts written to a temporary directory.
//
//   - input.*: `topoqueue plan -f job.yaml -f nodes.yaml -o name` in a child process (the
//     CLI's main(), after one warm-up plan of the job alone so the command's modules are
//     loaded): CPU time (user + system, every thread: the GC's too) of the measured plan,
//     which reads, validates and plans over the 110,000 Nodes, and the child's peak RSS;
//   - hypernode.100k-members.heap: one HyperNode whose members are exactMatch of 100,000
//     node names (8 MB of YAML), read (parseManifests), checked (parseObject) and built into
//     a HyperNodeTree over the 100,000 nodes in a child process: the peak RSS over the
//     process before reading (an upper bound: the peak may predate the reading, kept low by
//     giving the tree bare names). `plan -f` refuses the object itself (6.6 MB as JSON, over
//     Kubernetes' 1.5 MiB per object), so the loader's size check is left out: the figure is
//     about what reading such a list costs (the yaml package alone: ~670 MB).
//
// Run alone: `node --import tsx bench/input-bench.ts` prints the four figures (or
// `npm run bench -- --only '^input|100k-members'`).

import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { peakRssBytes } from './peak-rss.ts';
import { INPUT, bigHyperNode, inputNodeName, inputNodes, listJson, listYaml, type InputSize } from './input-shapes.ts';

export const HYPERNODE_MEMBERS = 100_000;

/** The small job planned over the Nodes: a Topology on the block and rack labels, a TAS flavor, one 4 x 8-GPU Job. */
export const INPUT_JOB = `apiVersion: kueue.x-k8s.io/v1beta2
kind: Topology
metadata:
  name: default
spec:
  levels:
  - nodeLabel: cloud.provider.com/topology-block
  - nodeLabel: cloud.provider.com/topology-rack
  - nodeLabel: kubernetes.io/hostname
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata:
  name: tas
spec:
  nodeLabels:
    topology.kubernetes.io/zone: us-east5-a
  topologyName: default
  tolerations:
  - key: nvidia.com/gpu
    operator: Exists
    effect: NoSchedule
---
apiVersion: batch/v1
kind: Job
metadata:
  name: train
  namespace: research
  labels:
    kueue.x-k8s.io/queue-name: user-queue
spec:
  parallelism: 4
  completions: 4
  completionMode: Indexed
  template:
    metadata:
      annotations:
        kueue.x-k8s.io/podset-required-topology: cloud.provider.com/topology-rack
    spec:
      restartPolicy: Never
      tolerations:
      - key: nvidia.com/gpu
        operator: Exists
        effect: NoSchedule
      containers:
      - name: trainer
        image: trainer:latest
        resources:
          requests:
            cpu: "16"
            nvidia.com/gpu: "8"
`;

export interface InputFiles {
  dir: string;
  job: string;
  yaml: string;
  json: string;
  hyperNode: string;
  yamlBytes: number;
  jsonBytes: number;
  hyperNodeBytes: number;
}

/** Writes the job, the Node List as YAML and JSON, and the big HyperNode (as a one-item List) to a new temporary directory. */
export function writeInputs(size: InputSize = INPUT, members = HYPERNODE_MEMBERS): InputFiles {
  const dir = mkdtempSync(join(os.tmpdir(), 'topoqueue-bench-input-'));
  const nodes = inputNodes(size);
  const yamlText = listYaml(nodes);
  const jsonText = listJson(nodes);
  const names = Array.from({ length: members }, (_, i) => inputNodeName(i).name);
  const hnText = listYaml([bigHyperNode('big', names)]);
  const files = {
    dir,
    job: join(dir, 'job.yaml'),
    yaml: join(dir, 'nodes.yaml'),
    json: join(dir, 'nodes.json'),
    hyperNode: join(dir, 'hypernode.yaml'),
  };
  writeFileSync(files.job, INPUT_JOB);
  writeFileSync(files.yaml, yamlText);
  writeFileSync(files.json, jsonText);
  writeFileSync(files.hyperNode, hnText);
  return { ...files, yamlBytes: yamlText.length, jsonBytes: jsonText.length, hyperNodeBytes: hnText.length };
}

export interface PlanRun {
  cpuMs: number;
  maxRssMb: number;
  exitCode: number;
  /** The plan's output (`-o name`) and its notes and errors. */
  out: string;
  err: string;
}

export interface HyperNodeRun {
  /** Peak RSS over the process before reading, 10^6 bytes. */
  peakMb: number;
  cpuMs: number;
  /** Nodes under the HyperNode in the built tree. */
  members: number;
  parser: string;
}

/** What bench/main.ts' report offers the input figures. */
export interface InputReport {
  wants(name: InputFigure): boolean;
  add(name: InputFigure, value: number, detail?: string): void;
}

export const INPUT_FIGURES = [
  { name: 'input.yaml.110k-nodes', unit: 'ms' },
  { name: 'input.yaml.110k-nodes.rss', unit: 'MB' },
  { name: 'input.json.110k-nodes', unit: 'ms' },
  { name: 'hypernode.100k-members.heap', unit: 'MB' },
] as const;
export type InputFigure = (typeof INPUT_FIGURES)[number]['name'];

/** Planted mistakes would show here: the plan must admit the job and read every Node. */
function checkPlan(what: string, r: PlanRun): void {
  if (r.exitCode !== 0 || !/job-train/.test(r.out) || /error/.test(r.err))
    throw new Error(`bench: plan over ${what} did not run cleanly (exit ${r.exitCode}): ${r.err.slice(0, 500)} ${r.out.slice(0, 200)}`);
}

/** The input figures, for bench/main.ts. */
export function runInput(report: InputReport): void {
  if (!INPUT_FIGURES.some((f) => report.wants(f.name))) return;
  console.error(
    `input: writing ${INPUT.nodes.toLocaleString('en-US')} Nodes as YAML and JSON and a ${HYPERNODE_MEMBERS.toLocaleString('en-US')}-member HyperNode ...`,
  );
  const files = writeInputs();
  try {
    if (report.wants('input.yaml.110k-nodes') || report.wants('input.yaml.110k-nodes.rss')) {
      const y = measurePlan(files.job, files.yaml);
      checkPlan('the YAML Nodes', y);
      const shape = `plan -f job -f ${(files.yamlBytes / 1e6).toFixed(1)} MB YAML List`;
      report.add('input.yaml.110k-nodes', y.cpuMs, `${shape}: CPU (user + system) of the plan, child process, after a warm-up plan`);
      report.add('input.yaml.110k-nodes.rss', y.maxRssMb, `${shape}: the child's peak RSS`);
    }
    if (report.wants('input.json.110k-nodes')) {
      const j = measurePlan(files.job, files.json);
      checkPlan('the JSON Nodes', j);
      report.add(
        'input.json.110k-nodes',
        j.cpuMs,
        `plan -f job -f ${(files.jsonBytes / 1e6).toFixed(1)} MB JSON List; peak RSS ${j.maxRssMb.toFixed(0)} MB`,
      );
    }
    if (report.wants('hypernode.100k-members.heap')) {
      const h = measureHyperNode(files.hyperNode);
      if (h.members !== HYPERNODE_MEMBERS) throw new Error(`bench: the big HyperNode holds ${h.members} nodes, want ${HYPERNODE_MEMBERS}`);
      report.add(
        'hypernode.100k-members.heap',
        h.peakMb,
        `peak RSS over the process before reading ${(files.hyperNodeBytes / 1e6).toFixed(1)} MB of YAML, checking it and building the tree; CPU ${h.cpuMs.toFixed(0)} ms`,
      );
    }
  } finally {
    rmSync(files.dir, { recursive: true, force: true });
  }
}

const SELF = fileURLToPath(import.meta.url);

function child<T>(args: string[]): T {
  const dir = mkdtempSync(join(os.tmpdir(), 'topoqueue-bench-input-run-'));
  const out = join(dir, 'result.json');
  try {
    const r = spawnSync(process.execPath, ['--expose-gc', '--import', 'tsx', SELF, ...args, out], { encoding: 'utf8', maxBuffer: 1 << 26 });
    if (r.status !== 0) throw new Error(`bench/input-bench.ts ${args.join(' ')} failed (${r.status}): ${r.stderr}`);
    return JSON.parse(readFileSync(out, 'utf8')) as T;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** `plan -f job -f file -o name` in a child process. */
export function measurePlan(job: string, file: string): PlanRun {
  return child<PlanRun>(['plan', job, file]);
}

/** Reading, checking and building the tree of the big HyperNode in a child process (`parser: 'yaml'` for the old way). */
export function measureHyperNode(file: string, members = HYPERNODE_MEMBERS, parser: 'auto' | 'yaml' = 'auto'): HyperNodeRun {
  return child<HyperNodeRun>(['hypernode', file, String(members), parser]);
}

async function childPlan(job: string, file: string, result: string): Promise<void> {
  const { main } = await import('../src/cli/main.ts');
  const quiet = { out: () => {}, err: () => {} };
  await main(['plan', '-f', job, '-o', 'name'], quiet); // loads the command's modules
  let out = '';
  let err = '';
  const c0 = process.cpuUsage();
  const exitCode = await main(['plan', '-f', job, '-f', file, '-o', 'name'], { out: (s) => (out += s), err: (s) => (err += s) });
  const c = process.cpuUsage(c0);
  const run: PlanRun = { cpuMs: (c.user + c.system) / 1000, maxRssMb: peakRssBytes() / 1e6, exitCode, out, err };
  writeFileSync(result, JSON.stringify(run));
}

async function childHyperNode(file: string, members: number, parser: 'auto' | 'yaml', result: string): Promise<void> {
  const { parseManifests } = await import('../src/api/manifest.ts');
  const { parseObject } = await import('../src/api/schemas.ts');
  const { HyperNodeTree } = await import('../src/topology/hypernode-tree.ts');
  // The tree needs names and labels only: the nodes as the tree sees them, small.
  const nodes = Array.from({ length: members }, (_, i) => {
    const name = inputNodeName(i).name;
    return { name, labels: { 'kubernetes.io/hostname': name } };
  });
  const text = readFileSync(file, 'utf8');
  const gc = globalThis.gc!;
  gc();
  gc();
  const rss0 = process.memoryUsage().rss;
  const c0 = process.cpuUsage();
  const parsed = parseManifests(text, file, { parser });
  if (parsed.errors.length > 0 || parsed.objects.length !== 1)
    throw new Error(`the HyperNode file did not read: ${parsed.errors.join('; ')}`);
  const r = parseObject(parsed.objects[0]!.object, parsed.objects[0]!.where);
  if (!r.object) throw new Error(`the HyperNode is refused: ${r.errors.join('; ')}`);
  parsed.objects.length = 0;
  const tree = new HyperNodeTree([r.object as never], nodes);
  const size = tree.nodesOf('big').size;
  const c = process.cpuUsage(c0);
  const peak = peakRssBytes();

  const run: HyperNodeRun = { peakMb: (peak - rss0) / 1e6, cpuMs: (c.user + c.system) / 1000, members: size, parser };
  writeFileSync(result, JSON.stringify(run));
}

async function childMain(argv: string[]): Promise<void> {
  const [what, ...rest] = argv;
  if (what === 'plan') await childPlan(rest[0]!, rest[1]!, rest[2]!);
  else if (what === 'hypernode') await childHyperNode(rest[0]!, Number(rest[1]), rest[2] as 'auto' | 'yaml', rest[3]!);
  else runInput({ wants: () => true, add: (name, value, detail) => console.log(`${name} ${value.toFixed(0)} ${detail ?? ''}`) });
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  await childMain(process.argv.slice(2));
}
