// The report viewer in a real browser: `simulate --report --html` on the GB200 example, the
// file opened from disk with the network cut, every section drawn from the report.

import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { pathToFileURL } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import type { SimulationReport } from '../cluster/report.ts';
import { launchBrowser, NO_BROWSER, updateScreenshots } from '../testing/browser.ts';
import { runCli } from '../testing/cli.ts';

const SHOTS = new URL('../../docs/images/', import.meta.url);

describe('report viewer in Chromium', async () => {
  const browser: Browser | undefined = await launchBrowser();
  let dir = '';
  let report: SimulationReport;
  let page: Page;
  const outside: string[] = [];
  const errors: string[] = [];

  before(async () => {
    if (!browser) return;
    dir = mkdtempSync(join(tmpdir(), 'tq-report-'));
    const r = await runCli(['simulate', '-f', 'examples/gb200-day', '--report', join(dir, 'r.json'), '--html', join(dir, 'r.html')]);
    assert.equal(r.code, 0, r.err);
    report = JSON.parse(readFileSync(join(dir, 'r.json'), 'utf8')) as SimulationReport;
    const ctx = await browser.newContext({ viewport: { width: 1280, height: 900 }, offline: true });
    page = await ctx.newPage();
    page.on('pageerror', (e) => errors.push(String(e)));
    page.on('request', (req) => {
      if (!req.url().startsWith('file:') && !req.url().startsWith('data:')) outside.push(req.url());
    });
    await page.goto(pathToFileURL(join(dir, 'r.html')).href);
    await page.waitForSelector('body[data-ready]');
  });
  after(async () => {
    await browser?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('opens offline from the file: nothing fetched, no script error', { skip: !browser && NO_BROWSER }, () => {
    assert.deepEqual(outside, []);
    assert.deepEqual(errors, []);
  });

  it('draws utilization and queue usage over time, with the figures as text beside them', { skip: !browser && NO_BROWSER }, async () => {
    assert.equal(await page.locator('#util-chart canvas').count(), 1);
    assert.equal(await page.locator('#queue-chart canvas').count(), 1);
    const gpuMean = await page
      .locator('section[aria-labelledby="util-h"] table.figures tr:has(th:text-is("nvidia.com/gpu")) td')
      .textContent();
    assert.equal(gpuMean, `${Math.round(report.summary.utilization['nvidia.com/gpu']! * 100)}%`);
    assert.equal(await page.locator('#qkey').inputValue(), 'gb200/nvidia.com/gpu');
    const rows = await page.locator('section[aria-labelledby="queue-h"] table.figures tbody th').allTextContents();
    assert.deepEqual(
      rows,
      report.queues.map((q) => q.name),
    );
  });

  it('the Gantt chart has one row per submitted workload and marks every eviction', { skip: !browser && NO_BROWSER }, async () => {
    const submitted = report.workloads.filter((w) => w.submittedAt !== null);
    assert.equal(await page.locator('.g-row').count(), submitted.length);
    assert.equal(await page.locator('path.g-evict').count(), report.summary.evictions);
    assert.ok(report.summary.evictions > 0);
  });

  it(
    'time to admission: one distribution per ClusterQueue that admitted something, its count in words',
    { skip: !browser && NO_BROWSER },
    async () => {
      for (const q of Object.keys(report.summary.meanTimeToAdmission)) {
        const n = report.workloads.filter((w) => w.clusterQueue === q && w.admittedAt !== null && w.submittedAt !== null).length;
        assert.match(
          (await page.locator(`figure.hist[data-queue="${q}"] p`).textContent())!,
          new RegExp(`^${q}: ${n} admitted; wait min `),
        );
      }
    },
  );

  it(
    'a preempted workload shows who preempted it, and its pending reasons with when each started',
    { skip: !browser && NO_BROWSER },
    async () => {
      const w = report.workloads.find((x) => x.evictions.some((e) => e.preemptor !== null))!;
      await page.selectOption('#pw', `${w.namespace}/${w.name}`);
      const preemptors = await page.locator('#h-evictions tbody td:nth-child(4)').allTextContents();
      assert.ok(preemptors.includes(w.evictions.find((e) => e.preemptor !== null)!.preemptor!), preemptors.join(', '));
      assert.equal(await page.locator('#h-pending tbody tr').count(), w.pendingReasons.length);
      assert.ok((await page.locator('#h-events tbody tr').count()) > 0);
    },
  );

  it("choosing a workload in the Gantt chart draws its pods' ranks on the topology", { skip: !browser && NO_BROWSER }, async () => {
    const w = report.workloads.find((x) => x.kind === 'JobSet' && x.pods.length > 0 && x.evictions.length === 0)!;
    const key = `${w.namespace}/${w.name}`;
    await page.locator(`.g-row[data-workload="${key}"]`).focus();
    await page.keyboard.press('Enter');
    assert.equal(await page.locator('#pw').inputValue(), key);
    assert.equal(w.evictions.length, 0);
    assert.equal(await page.locator('section[aria-labelledby="place-h"] text.mark').count(), new Set(w.pods.map((p) => p.node)).size);
    const cells = await page.locator('section[aria-labelledby="place-h"] g.cell[data-node]').count();
    assert.equal(cells, report.topology.nodes.length, 'every node of the report is drawn');
    // Evicted and placed again: only the hosts of the last placement are marked.
    const again = report.workloads.find(
      (x) => x.evictions.length > 0 && x.placement.length > 0 && x.placement.every((p) => p.levels.at(-1) === 'kubernetes.io/hostname'),
    )!;
    await page.selectOption('#pw', `${again.namespace}/${again.name}`);
    // (A node deleted later in the run is not in the report's topology, so not drawn.)
    const present = new Set(report.topology.nodes.map((n) => n.name));
    const hosts = new Set(again.placement.flatMap((p) => p.domains.map((d) => d.values.at(-1)!)).filter((h) => present.has(h)));
    assert.ok(new Set(again.pods.map((p) => p.node)).size > hosts.size, 'the report lists pods of both placements');
    assert.equal(await page.locator('section[aria-labelledby="place-h"] text.mark').count(), hosts.size);
    // Its history: each admission, and the eviction.
    assert.equal(await page.locator('#h-admissions tbody tr').count(), again.admissions.length);
    assert.equal(await page.locator('#h-evictions tbody tr').count(), again.evictions.length);
    await page.evaluate(() => window.scrollTo(0, 0));
    if (updateScreenshots) await page.screenshot({ path: new URL('report-viewer.png', SHOTS).pathname, fullPage: true });
  });
});
