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

import { accessSync, constants, existsSync, statSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { InputError } from '../api/errors.ts';
import { parseGoDuration } from '../api/gang.ts';
import type { ParsedObject } from '../api/manifest.ts';
import type { KObject } from '../api/objects.ts';
import { validatePodSetTopologyRequests } from '../api/topology-request.ts';
import { workloadsFromObjects } from '../integrations/integration.ts';
import { buildReport, reportJson, summarize, type SimulationReport } from '../cluster/report.ts';
import { clusterRank } from '../cluster/embedded.ts';
import { planSubmissions, runSimulation, type SimulationProgress } from '../cluster/simulation.ts';
import { isRecord } from '../api/values.ts';
import { buildTasCluster, sortObjects } from './cluster-input.ts';
import { IMPLICIT_CLUSTER_QUEUE, withImplicitQueue } from './implicit-queue.ts';
import { loadManifests, type Refused, whereKey } from './load.ts';
import { simulationNotes } from './simulation-notes.ts';
import { applySimulateHeapFlags } from './simulate-heap.ts';

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
  /** All or nothing: any refused object stops the command before the run. */
  strict?: boolean;
  /** Stops the run (default: Ctrl-C, SIGINT). */
  signal?: AbortSignal;
}

/** `--until`: milliseconds, or undefined for `idle`. */
export function parseUntil(v: string | undefined): number | undefined {
  if (v === undefined || v === 'idle') return undefined;
  const s = parseGoDuration(v);
  if (s === undefined || s < 0)
    throw new InputError(
      { field: '--until' },
      `must be "idle" or a non-negative Go duration such as "24h", "90m" or "1h30m", got ${JSON.stringify(v)}`,
    );
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
    if (node !== undefined && !nodes.has(node))
      errors.push(new InputError({ ...where, field: 'spec.node' }, `no Node named ${JSON.stringify(node)} in the input`));
  }
  return errors;
}

/**
 * `--report` is checked before the run: a missing directory, a directory, an unwritable
 * path, or one of the input files is refused at once (not after an hour of simulation).
 */
export function checkReportPath(report: string, inputs: readonly string[]): void {
  const refuse = (why: string) => {
    throw new InputError({ field: '--report' }, `${report}: ${why}`);
  };
  const target = resolve(report);
  for (const f of inputs) if (f !== '-' && resolve(f) === target) refuse('is one of the inputs (-f); write the report elsewhere');
  const dir = dirname(target);
  if (!existsSync(dir)) refuse(`the directory ${dir} does not exist`);
  if (!statSync(dir).isDirectory()) refuse(`${dir} is not a directory`);
  if (existsSync(target)) {
    if (statSync(target).isDirectory()) refuse('is a directory; give a file name');
    try {
      accessSync(target, constants.W_OK);
    } catch {
      refuse('is not writable');
    }
  } else {
    try {
      accessSync(dir, constants.W_OK);
    } catch {
      refuse(`cannot create files in ${dir}`);
    }
  }
}

/** The objects no error names (by file, document and object). */
export function withoutRefused(objects: readonly ParsedObject[], errors: readonly InputError[]): ParsedObject[] {
  const key = whereKey;
  const named = new Set(errors.filter((e) => e.where.object !== undefined).map((e) => key(e.where)));
  return named.size === 0 ? [...objects] : objects.filter((o) => !named.has(key(o.where)));
}

/**
 * The Workloads and jobs left out of the run (refused by the loader, or named by an
 * input error), each with its errors as `<object>: <field>: <what is wrong>`: the report
 * lists them as never admitted, with the rule as the reason (as `plan` does).
 */
export function refusedInputRows(
  loaded: { objects: readonly ParsedObject[]; refused: readonly Refused[] },
  errors: readonly InputError[],
): { object: KObject; errors: string[] }[] {
  const text = (e: InputError) =>
    `${e.where.object ?? ''}${e.where.object ? ': ' : ''}${e.where.field ? `${e.where.field}: ` : ''}${e.detail}`;
  const byKey = new Map<string, InputError[]>();
  for (const e of errors) {
    if (e.where.object === undefined) continue;
    const k = whereKey(e.where);
    byKey.set(k, [...(byKey.get(k) ?? []), e]);
  }
  const out: { object: KObject; errors: string[] }[] = [];
  const add = (o: unknown, errs: readonly InputError[]) => {
    const object = workloadIdentity(o);
    if (object && errs.length > 0) out.push({ object, errors: errs.map(text) });
  };
  for (const r of loaded.refused) add(r.object, r.errors);
  for (const o of loaded.objects) {
    const errs = byKey.get(whereKey(o.where));
    if (errs) add(o.object, errs);
  }
  return out;
}

/** Kind, apiVersion, name, namespace and labels of a (possibly malformed) Workload or job; undefined for a cluster object or one without a name. */
function workloadIdentity(o: unknown): KObject | undefined {
  if (!isRecord(o) || typeof o.kind !== 'string' || clusterRank(o.kind) !== undefined || !isRecord(o.metadata)) return undefined;
  const m = o.metadata;
  if (typeof m.name !== 'string' || m.name === '') return undefined;
  const labels = isRecord(m.labels)
    ? Object.fromEntries(Object.entries(m.labels).filter((e): e is [string, string] => typeof e[1] === 'string'))
    : undefined;
  return {
    apiVersion: typeof o.apiVersion === 'string' ? o.apiVersion : '',
    kind: o.kind,
    metadata: {
      name: m.name,
      ...(typeof m.namespace === 'string' && m.namespace !== '' ? { namespace: m.namespace } : {}),
      ...(labels ? { labels } : {}),
    },
  };
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
      io.err(
        `\rsimulate: ${clockText(p.atMs)} virtual, ${p.finished}/${p.total} workloads finished, ${p.steps} steps\x1b[K${p.done ? '\n' : ''}`,
      );
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
  applySimulateHeapFlags();
  const untilMs = parseUntil(args.until);
  if (args.report !== undefined) checkReportPath(args.report, args.filename);
  const loaded = loadManifests(args.filename, { strict: args.strict });
  const errors = [...loaded.errors];
  if (!args.strict || errors.length === 0) errors.push(...checkSimulationInput(loaded.objects));
  for (const e of errors) io.err(`error: ${e.message}\n`);
  const notes = [...loaded.notes, ...simulationNotes(loaded.objects, untilMs)];
  for (const n of notes) io.err(`note: ${n}\n`);
  // Nothing to run (every input refused) or all-or-nothing asked: stop here.
  if (errors.length > 0 && (args.strict || loaded.objects.length === 0)) return { code: 2 };
  // One bad object never sinks the rest: the objects an error names are left out.
  const kept = withoutRefused(loaded.objects, errors);
  // Without ClusterQueues, the same implicit queue as `plan`: what plan places, simulate runs.
  const { objects, implicit } = withImplicitQueue(kept);
  if (implicit) {
    const note = `no ClusterQueue in the input: jobs and pods go through the implicit ClusterQueue ${IMPLICIT_CLUSTER_QUEUE} (quota: the nodes' capacity), in input order as plan places them`;
    notes.push(note);
    io.err(`note: ${note}\n`);
  }
  // Ctrl-C stops the run: the report so far and the summary are still written, marked partial.
  const interrupt = new AbortController();
  const onSigint = () => interrupt.abort();
  const signal = args.signal ?? interrupt.signal;
  if (!args.signal) process.once('SIGINT', onSigint);
  let run;
  try {
    const running = runSimulation(objects, {
      untilMs,
      onProgress: progressPrinter(io),
      signal,
      refusedInput: refusedInputRows(loaded, errors),
    });
    // The run holds each input object until it creates it (the store keeps its own copy):
    // the lists read from the files are let go, so a long run does not carry the input twice.
    for (const list of [objects, kept, loaded.objects]) list.length = 0;
    run = await running;
  } finally {
    process.removeListener('SIGINT', onSigint);
  }
  const report = buildReport(run);
  report.input = {
    errors: errors.map((e) => ({
      file: e.where.file ?? null,
      document: e.where.document ?? null,
      line: e.where.line ?? null,
      object: e.where.object ?? null,
      field: e.where.field ?? null,
      message: e.detail,
    })),
    notes,
  };
  if (args.report !== undefined) {
    try {
      writeFileSync(args.report, reportJson(report));
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
  if (run.stop === 'interrupted') {
    io.err('error: interrupted: the report and the summary cover the run so far (run.partial)\n');
    return { code: 130, report };
  }
  if (errors.length > 0)
    io.err(`error: ${errors.length} problem(s) in the input (above): the objects they name were left out of the run\n`);
  return { code: errors.length > 0 ? 2 : 0, report };
}
