// `topoqueue report view`: a simulation report (docs/simulate.md) as one self-contained
// HTML file: the bundle, its CSS and the report inlined, nothing fetched, so it opens
// offline from disk.

import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { InputError } from '../api/errors.ts';
import { REPORT_API_VERSION, type SimulationReport } from '../cluster/report.ts';
import { pageHtml, webBundle } from './build.ts';

/** Reads and checks a report file; what is wrong is an InputError naming the file and field. */
export function readReport(path: string): SimulationReport {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw new InputError({ file: path }, `cannot read the report: ${(e as Error).message}`);
  }
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (e) {
    throw new InputError({ file: path }, `not JSON: ${(e as Error).message}`);
  }
  return checkReport(data, path);
}

/** The fields the viewer draws from, checked so that a wrong file is refused with a message rather than drawn blank. */
export function checkReport(data: unknown, file?: string): SimulationReport {
  const where = (field: string) => ({ file, field });
  if (typeof data !== 'object' || data === null || Array.isArray(data))
    throw new InputError(where('kind'), 'must be a JSON object: a SimulationReport written by `topoqueue simulate --report`');
  const r = data as Record<string, unknown>;
  if (r.kind !== 'SimulationReport')
    throw new InputError(
      where('kind'),
      `must be "SimulationReport" (a file written by \`topoqueue simulate --report\`), got ${JSON.stringify(r.kind)}`,
    );
  if (r.apiVersion !== REPORT_API_VERSION)
    throw new InputError(where('apiVersion'), `must be "${REPORT_API_VERSION}", got ${JSON.stringify(r.apiVersion)}`);
  for (const f of ['workloads', 'queues'] as const) if (!Array.isArray(r[f])) throw new InputError(where(f), 'must be a list');
  for (const f of ['run', 'summary', 'utilization'] as const)
    if (typeof r[f] !== 'object' || r[f] === null) throw new InputError(where(f), 'must be an object');
  const u = r.utilization as Record<string, unknown>;
  if (!Array.isArray(u.series) || !Array.isArray(u.resources)) throw new InputError(where('utilization.series'), 'must be a list');
  return data as SimulationReport;
}

/** The viewer page for a report. */
export async function reportHtml(report: SimulationReport, opts: { title?: string } = {}): Promise<string> {
  const b = await webBundle();
  const title = opts.title ?? `topoqueue report ${report.run.start}`;
  return pageHtml({ title, css: b.css, js: b.js, data: { mode: 'report', title, report } });
}

/** The default output next to the input: report.json -> report.html. */
export function defaultHtmlPath(reportPath: string): string {
  return reportPath.endsWith('.json') ? `${reportPath.slice(0, -5)}.html` : `${reportPath}.html`;
}

export const reportTitle = (path: string) => `topoqueue report ${basename(path)}`;
