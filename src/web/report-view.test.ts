import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { runCli, tmpFile } from '../testing/cli.ts';
import { checkReport, defaultHtmlPath, reportHtml } from './report-view.ts';

const MINIMAL = {
  apiVersion: 'topoqueue.io/v1alpha1',
  kind: 'SimulationReport',
  run: { start: '2026-01-01T00:00:00Z', end: 0, until: null, stop: 'idle', steps: 0, makespan: null },
  summary: {
    workloads: 0,
    byStatus: {},
    makespan: null,
    meanTimeToAdmission: {},
    evictions: 0,
    evictionsByReason: {},
    utilization: {},
    violations: 0,
    refused: 0,
    controllerErrors: 0,
    unmanaged: 0,
  },
  workloads: [],
  queues: [],
  utilization: { resources: [], mean: {}, series: [] },
};

describe('report view', () => {
  it('refuses what is not a simulation report, naming the file and the field', () => {
    assert.throws(() => checkReport([], 'r.json'), /^InputError: r.json, kind: must be a JSON object/);
    assert.throws(
      () => checkReport({ kind: 'List' }, 'r.json'),
      /r.json, kind: must be "SimulationReport" \(a file written by `topoqueue simulate --report`\), got "List"/,
    );
    assert.throws(
      () => checkReport({ ...MINIMAL, apiVersion: 'v2' }, 'r.json'),
      /r.json, apiVersion: must be "topoqueue.io\/v1alpha1", got "v2"/,
    );
    assert.throws(() => checkReport({ ...MINIMAL, workloads: {} }, 'r.json'), /r.json, workloads: must be a list/);
    assert.throws(() => checkReport({ ...MINIMAL, utilization: { resources: [] } }, 'r.json'), /utilization.series: must be a list/);
    assert.equal(checkReport(MINIMAL).kind, 'SimulationReport');
  });

  it('one self-contained page: the script, its CSS and the report inline, nothing fetched', async () => {
    const page = await reportHtml(checkReport({ ...MINIMAL, run: { ...MINIMAL.run, start: '</script><b>' } }));
    assert.match(page, /^<!doctype html>/);
    const fetches = page.match(/<script src=|<link |(?:src|href)="https?:|url\(["']?https?:|fetch\(/g);
    assert.equal(fetches, null, `the page would fetch: ${fetches?.join(', ')}`);
    assert.equal(page.match(/<script/g)!.length, 2, 'the data and the bundle');
    assert.ok(!page.includes('</script><b>'), 'report text cannot close the data element');
    const data = JSON.parse(/<script type="application\/json" id="tq-data">(.*?)<\/script>/s.exec(page)![1]!);
    assert.equal(data.mode, 'report');
    assert.equal(data.report.run.start, '</script><b>');
  });

  it('the command writes next to the report by default, and exits 2 on a file that is not one', async () => {
    const f = tmpFile('r.json', JSON.stringify(MINIMAL));
    const ok = await runCli(['report', 'view', f]);
    assert.equal(ok.code, 0, ok.err);
    assert.equal(ok.err, `topoqueue: wrote ${defaultHtmlPath(f)}\n`);
    assert.match(readFileSync(defaultHtmlPath(f), 'utf8'), /id="tq-data"/);
    const bad = await runCli(['report', 'view', tmpFile('x.json', '{"kind": 3')]);
    assert.equal(bad.code, 2);
    assert.match(bad.err, /^error: .*x.json: not JSON: /);
    assert.equal(defaultHtmlPath('out/report'), 'out/report.html');
  });
});
