// The dashboard's speed goals, checked in Chromium on the benchmark's shapes (skipped, with
// a message, without a browser): first paint under 1 s at 1,000 nodes and under 3 s at
// 10,000 (aggregated to racks), a store change visible under 1 s; and at 10,000 nodes a
// rack chosen with the keyboard zooms into its block.

import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import type { Browser } from 'playwright-core';
import { launchBrowser, NO_BROWSER, updateScreenshots } from '../src/testing/browser.ts';
import { measurePaint, PAINT_BLOCK, PAINT_RACK } from './dashboard-paint.ts';

describe('dashboard speed in Chromium', async () => {
  const browser: Browser | undefined = await launchBrowser();
  const skip = !browser && NO_BROWSER;
  after(async () => browser?.close());

  it('1,000 nodes: first paint under 1 s, a store change visible under 1 s', { skip }, async (t) => {
    const r = await measurePaint(browser!, 1000, 1);
    t.diagnostic(
      `first paint ${Math.round(r.firstPaintMs)} ms, update ${Math.round(r.updateMs)} ms, page ${Math.round(r.pageBytes / 1024)} KiB`,
    );
    assert.ok(r.firstPaintMs < 1000, `first paint ${r.firstPaintMs} ms`);
    assert.ok(r.updateMs < 1000, `update ${r.updateMs} ms`);
  });

  it('10,000 nodes: first paint under 3 s, aggregated to racks; Enter on a rack zooms into its block', { skip }, async (t) => {
    const r = await measurePaint(browser!, 10_000, 1, async (page) => {
      const racks = Math.ceil(10_000 / PAINT_RACK);
      assert.equal(await page.locator('g.cell[data-rack]').count(), racks);
      await page.locator('.topo-map').focus();
      await page.keyboard.press('Enter');
      assert.equal(await page.locator('g.cell[data-node]').count(), PAINT_BLOCK * PAINT_RACK, 'the hosts of the first block');
      if (updateScreenshots) await page.screenshot({ path: new URL('../docs/images/dashboard-zoomed-10k.png', import.meta.url).pathname });
      await page.keyboard.press('Escape');
      assert.equal(await page.locator('g.cell[data-rack]').count(), racks);
    });
    t.diagnostic(
      `first paint ${Math.round(r.firstPaintMs)} ms, update ${Math.round(r.updateMs)} ms, page ${Math.round(r.pageBytes / 1024)} KiB`,
    );
    assert.ok(r.firstPaintMs < 3000, `first paint ${r.firstPaintMs} ms`);
    assert.ok(r.updateMs < 1000, `update ${r.updateMs} ms`);
  });
});
