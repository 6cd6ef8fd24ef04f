// The dashboard in a real browser against `serve` (in-process, built-in example data centre,
// time sped up 60x): the heat-map against the store, a Job applied with kubectl appearing
// and placed without a reload, a pending Workload's reason read in full, and how long a
// store change takes to show. Skipped, with a message, without Chromium or kubectl.

import assert from 'node:assert/strict';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import type { KObject, Node, Pod, Workload } from '../api/objects.ts';
import { podRequests } from '../api/resources.ts';
import { mutable } from '../runtime/store.ts';
import { launchBrowser, NO_BROWSER, updateScreenshots } from '../testing/browser.ts';
import { batchJob, podTemplate } from '../testing/jobs.ts';
import { eventually, KUBECTL_MISSING, startTestServer, type TestServer } from '../testing/kube.ts';

const SHOTS = new URL('../../docs/images/', import.meta.url);
const GPU = 'nvidia.com/gpu';

/** A Job of `pods` pods of `gpus` GPUs each in the example's LocalQueue, with a topology request at `level`. */
function job(name: string, opts: { pods: number; gpus: number; level: string; mode: 'required' | 'preferred' }): KObject {
  const template = podTemplate({
    cpu: '4',
    annotations: { 'topoqueue.io/run-duration': '10h', [`kueue.x-k8s.io/podset-${opts.mode}-topology`]: opts.level },
  });
  template.spec.containers[0]!.resources!.requests![GPU] = String(opts.gpus);
  return batchJob(name, {
    namespace: 'default',
    queue: 'user-queue',
    parallelism: opts.pods,
    completions: opts.pods,
    indexed: true,
    template,
  });
}

describe('dashboard in Chromium against serve', async () => {
  const browser: Browser | undefined = KUBECTL_MISSING ? undefined : await launchBrowser();
  const skip = KUBECTL_MISSING || (!browser && NO_BROWSER);
  let s: TestServer;
  let page: Page;
  const errors: string[] = [];

  const apply = async (name: string, obj: KObject) => {
    const f = join(s.dir, `${name}.json`);
    writeFileSync(f, JSON.stringify(obj));
    const r = await s.kubectl(['apply', '-f', f]);
    assert.equal(r.code, 0, r.stderr);
  };
  const workloadOf = (job: string) =>
    s.cluster.store
      .listSync<Workload>('Workload', { namespace: 'default' })
      .find((w) => w.metadata.ownerReferences?.some((o) => o.name === job));
  const shot = async (name: string) => {
    if (updateScreenshots) await page.screenshot({ path: new URL(name, SHOTS).pathname, fullPage: true });
  };

  before(async () => {
    if (skip) return;
    s = await startTestServer({ timeScale: 60 });
    page = await browser!.newPage({ viewport: { width: 1280, height: 820 } });
    page.on('pageerror', (e) => errors.push(String(e)));
    await page.goto(`${s.url}/`);
    await page.waitForSelector('body[data-ready]');
  });
  after(async () => {
    await browser?.close();
    if (s) {
      await s.stop();
      rmSync(s.dir, { recursive: true, force: true });
    }
  });

  it("the heat-map has a cell per node of the store, each with its GPUs used as the store's pods say", { skip }, async () => {
    await apply('warm', job('warm', { pods: 3, gpus: 8, level: 'cloud.provider.com/topology-rack', mode: 'required' }));
    const expected = () => {
      const used = new Map<string, number>();
      for (const p of s.cluster.store.listSync<Pod>('Pod')) {
        if (!p.spec.nodeName || p.status?.phase === 'Succeeded' || p.status?.phase === 'Failed') continue;
        used.set(p.spec.nodeName, (used.get(p.spec.nodeName) ?? 0) + (podRequests(p.spec)[GPU] ?? 0));
      }
      return s.cluster.store
        .listSync<Node>('Node')
        .map((n) => `${n.metadata.name}: ${GPU} ${used.get(n.metadata.name) ?? 0}/${n.status!.allocatable![GPU]} used`)
        .sort();
    };
    const drawn = async () =>
      (await page.locator('g.cell[data-node] title').allTextContents()).map((t) => t.slice(0, t.indexOf(' used') + 5)).sort();
    await eventually(async () => {
      const want = expected();
      return want.some((x) => / [1-9]\d*\/8 used/.test(x)) && JSON.stringify(await drawn()) === JSON.stringify(want) ? true : undefined;
    }, 'the heat-map to match the store with the Job warm running');
    assert.equal(await page.locator('g.cell[data-node]').count(), s.cluster.store.listSync('Node').length);
    await shot('dashboard-topology.png');
  });

  it('a Job applied with kubectl appears in the table and gets placed, without a reload', { skip }, async () => {
    await page.evaluate(() => ((window as unknown as { tqMarker: number }).tqMarker = 42));
    await page.click('nav a[href="#/workloads"]');
    await apply('demo', job('demo', { pods: 2, gpus: 4, level: 'cloud.provider.com/topology-rack', mode: 'preferred' }));
    const w = await eventually(() => workloadOf('demo'), 'the Workload of Job demo');
    const row = page.locator(`tr[data-workload="default/${w.metadata.name}"]`);
    await row.waitFor({ timeout: 5000 });
    await row.locator('a').click();
    await page.locator('h2#wl-h .badge', { hasText: 'Admitted' }).waitFor({ timeout: 10_000 });
    await eventually(async () => ((await page.locator('text.mark').count()) > 0 ? true : undefined), 'the placement drawn');
    const nodes = new Set(
      s.cluster.store
        .listSync<Pod>('Pod', { namespace: 'default' })
        .filter((p) => p.metadata.annotations?.['kueue.x-k8s.io/workload'] === w.metadata.name && p.spec.nodeName)
        .map((p) => p.spec.nodeName),
    );
    assert.equal(await page.locator('text.mark').count(), nodes.size);
    assert.equal(await page.evaluate(() => (window as unknown as { tqMarker?: number }).tqMarker), 42, 'the page was not reloaded');
    await shot('dashboard-workload.png');
  });

  it('a pending Workload shows its reason in full, as the store has it', { skip }, async () => {
    await apply('too-big', job('too-big', { pods: 5, gpus: 8, level: 'cloud.provider.com/topology-rack', mode: 'required' }));
    const message = await eventually(
      () => workloadOf('too-big')?.status?.conditions?.find((c) => c.type === 'QuotaReserved' && c.status === 'False')?.message,
      'the pending reason of too-big',
    );
    const w = workloadOf('too-big')!;
    await page.goto(`${s.url}/#/workloads/default/${w.metadata.name}`);
    await page.waitForSelector('body[data-ready]');
    const shown = await eventually(async () => {
      const t = await page
        .locator('#pending-reason')
        .textContent({ timeout: 2000 })
        .catch(() => null);
      return t === workloadOf('too-big')?.status?.conditions?.find((c) => c.type === 'QuotaReserved')?.message ? t : undefined;
    }, 'the reason on the page');
    assert.match(shown, /topology "default" allows to fit only 4 out of 5 pod\(s\)/);
    assert.ok(message.length > 0);
    assert.match((await page.locator('.blocker h3').textContent())!, /topology/);
    // Block 2 is idle: one of its racks holds 4 of the 5 pods, the block all of them.
    assert.equal(await page.locator('#best-level').textContent(), 'The lowest level where one domain holds all 5 pods of main now: block.');
    assert.equal(await page.locator('table.fit tr:has(th:text-is("rack")) td').textContent(), '4 of 5');
    await shot('dashboard-pending.png');
    await page.goto(`${s.url}/#/workloads`);
    await page.locator(`tr[data-workload="default/${w.metadata.name}"] td.reason`).waitFor();
    await shot('dashboard-workloads.png');
    await page.click('nav a[href="#/queues"]');
    await page.locator('article[data-cq="cluster-queue"]').waitFor();
    assert.match((await page.locator('article[data-cq="cluster-queue"] .badge').first().textContent())!, /^[1-9]\d* pending$/);
    await shot('dashboard-queues.png');
  });

  it('a store change shows in the open page within a second (server-sent events)', { skip }, async (t) => {
    await page.click('nav a[href="#/topology"]');
    await page.locator('g.cell[data-node="b2-r2-n4"]').waitFor();
    const n = mutable(s.cluster.store.getSync<Node>('Node', undefined, 'b2-r2-n4')!);
    n.spec = { ...n.spec, unschedulable: true };
    const t0 = performance.now();
    s.cluster.store.updateSync(n);
    await page.locator('g.cell[data-node="b2-r2-n4"] rect.cordoned').waitFor({ timeout: 5000 });
    const ms = performance.now() - t0;
    t.diagnostic(`store change visible in the page after ${Math.round(ms)} ms`);
    assert.ok(ms < 1000, `took ${ms} ms`);
    assert.deepEqual(errors, []);
  });
});
