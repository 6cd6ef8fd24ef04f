// `topoqueue simulate`: the embedded cluster runs the input in virtual time and reports.
//
// 1. load and check the input as `plan` does (file, document and field in every error),
//    plus what only a simulation reads: `topoqueue.io/submit-at` and SimulationEvents;
// 2. run (cluster/simulation.ts), with a progress line on stderr: one updating line on a
//    terminal, a plain line per virtual hour otherwise;
// 3. write the JSON report (`--report`) and its viewer (`--html`), print the human summary
//    on stdout.
// Exit 0 when the run completed with no invariant violation, 1 when there were
// violations (a bug: the report lists them), 2 on bad input.

import { writeFileSync } from 'node:fs';
import { InputError } from '../api/errors.ts';
import { parseGoDuration } from '../api/gang.ts';
import type { ParsedObject } from '../api/manifest.ts';
import type { KObject } from '../api/objects.ts';
import { validatePodSetTopologyRequests } from '../api/topology-request.ts';
import { workloadsFromObjects } from '../integrations/integration.ts';
import { buildReport, summarize, type SimulationReport } from '../cluster/report.ts';
import { planSubmissions, runSimulation, type SimulationProgress } from '../cluster/simulation.ts';
import { buildTasCluster, sortObjects } from './cluster-input.ts';
import { loadManifests } from './load.ts';

export interface SimulateIo {
  out: (s: string) => void;
  err: (s: string) => void;
  /** stderr is a terminal: progress as one updating line. */
  errIsTTY?: boolean;
}

export interface SimulateArgs {
  filename: string[];
  /** `idle` or a Go duration. */
  until?: string;
  report?: string;
  /** Also write the report viewer (one self-contained HTML file) here. */
  html?: string;
}

/** `--until`: milliseconds, or undefined for `idle`. */
export function parseUntil(v: string | undefined): number | undefined {
  if (v === undefined || v === 'idle') return undefined;
  const s = parseGoDuration(v);
  if (s === undefined || s < 0) throw new InputError({ field: '--until' }, `must be "idle" or a non-negative Go duration such as "24h", "90m" or "1h30m", got ${JSON.stringify(v)}`);
  return Math.round(s * 1000);
}

/**
 * What `plan` would refuse in the same input, plus what only a simulation reads: bad
 * submit-at annotations and SimulationEvents naming a Node the input does not have.
 */
export function checkSimulationInput(objects: readonly ParsedObject[]): InputError[] {
  const errors = [...planSubmissions(objects).errors];
  const input = sortObjects(objects);
  errors.push(...buildTasCluster(input).errors);
  const built = workloadsFromObjects(input.others);
  errors.push(...built.errors);
  for (const b of built.workloads) errors.push(...validatePodSetTopologyRequests(b.workload.spec.podSets, b.source));
  const nodes = new Set(input.nodes.map((n) => n.node.metadata.name));
  for (const { object, where } of objects) {
    if (object.kind !== 'SimulationEvent') continue;
    const node = (object as KObject & { spec?: { node?: string } }).spec?.node;
    if (node !== undefined && !nodes.has(node)) errors.push(new InputError({ ...where, field: 'spec.node' }, `no Node named ${JSON.stringify(node)} in the input`));
  }
  return errors;
}

/** Virtual time as h:mm:ss (hours past 24 keep counting). */
export function clockText(ms: number): string {
  const t = Math.floor(ms / 1000);
  const p = (n: number) => String(n).padStart(2, '0');
  return `${p(Math.floor(t / 3600))}:${p(Math.floor((t % 3600) / 60))}:${p(t % 60)}`;
}

function progressPrinter(io: SimulateIo): (p: SimulationProgress) => void {
  if (io.errIsTTY) {
    return (p) => {
      io.err(`\rsimulate: ${clockText(p.atMs)} virtual, ${p.finished}/${p.total} workloads finished, ${p.steps} steps\x1b[K${p.done ? '\n' : ''}`);
    };
  }
  return (p) => {
    if (p.hour || p.done) io.err(`simulate: ${clockText(p.atMs)} virtual, ${p.finished}/${p.total} workloads finished\n`);
  };
}

export interface SimulateOutcome {
  code: number;
  report?: SimulationReport;
}

/** Runs the command; bad input throws InputError (or returns code 2 with the errors printed). */
export async function simulateCommand(args: SimulateArgs, io: SimulateIo): Promise<SimulateOutcome> {
  const untilMs = parseUntil(args.until);
  const loaded = loadManifests(args.filename);
  const errors = [...loaded.errors];
  if (errors.length === 0) errors.push(...checkSimulationInput(loaded.objects));
  if (errors.length > 0) {
    for (const e of errors) io.err(`error: ${e.message}\n`);
    return { code: 2 };
  }
  const run = await runSimulation(loaded.objects, { untilMs, onProgress: progressPrinter(io) });
  const report = buildReport(run);
  if (args.report !== undefined) {
    try {
      writeFileSync(args.report, `${JSON.stringify(report, null, 2)}\n`);
    } catch (e) {
      throw new InputError({ field: '--report' }, `cannot write ${args.report}: ${(e as Error).message}`);
    }
  }
  if (args.html !== undefined) {
    const { reportHtml } = await import('../web/report-view.ts');
    const page = await reportHtml(report, { title: `topoqueue report ${args.filename.join(', ')}` });
    try {
      writeFileSync(args.html, page);
    } catch (e) {
      throw new InputError({ field: '--html' }, `cannot write ${args.html}: ${(e as Error).message}`);
    }
  }
  io.out(summarize(report));
  if (report.summary.violations > 0) {
    io.err(`error: ${report.summary.violations} invariant violation(s): a bug in topoqueue; the report lists them\n`);
    return { code: 1, report };
  }
  return { code: 0, report };
}
