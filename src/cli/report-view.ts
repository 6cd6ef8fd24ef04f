// `topoqueue report view REPORT.json [-o report.html]`: the report viewer (web/report-view.ts)
// written to a file.

import { writeFileSync } from 'node:fs';
import { InputError } from '../api/errors.ts';
import { defaultHtmlPath, readReport, reportHtml, reportTitle } from '../web/report-view.ts';

/** Writes the viewer for `file`; returns the path written. Bad input throws InputError (exit 2). */
export async function writeReportHtml(file: string, output?: string): Promise<string> {
  const report = readReport(file);
  const out = output ?? defaultHtmlPath(file);
  const page = await reportHtml(report, { title: reportTitle(file) });
  try {
    writeFileSync(out, page);
  } catch (e) {
    throw new InputError({ field: '-o' }, `cannot write ${out}: ${(e as Error).message}`);
  }
  return out;
}
