// The dashboard's speed in a real browser (Debian's Chromium through playwright-core):
// first paint of the topology page and how long a store change takes to show.
//
// Shape: N GPU nodes (8 GPUs, 128 CPU) in blocks of 8 racks x 18 hosts with a Topology and
// a TAS flavor, half of them running a 4-GPU pod, in a MemoryStore; the dashboard over it on
// a plain HTTP server. First paint: from navigation start to the first frame after the map
// is rendered (the page's `tq-first-paint` performance mark). Update: a node cordoned in the
// store until its cell shows it.

import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, Page } from 'playwright-core';
import type { KObject, Node } from '../src/api/objects.ts';
import { RealClock } from '../src/runtime/clock.ts';
import { MemoryStore } from '../src/runtime/memory-store.ts';
import { mutable } from '../src/runtime/store.ts';
import { BLOCK, node, pod, RACK } from '../src/testing/builders.ts';
import { createDashboard } from '../src/web/dashboard.ts';

export const PAINT_RACK = 18;
export const PAINT_BLOCK = 8;

export function paintCluster(nodes: number): KObject[] {
  const out: KObject[] = [
    {
      apiVersion: 'kueue.x-k8s.io/v1beta2',
      kind: 'Topology',
      metadata: { name: 'default' },
      spec: { levels: [{ nodeLabel: BLOCK }, { nodeLabel: RACK }, { nodeLabel: 'kubernetes.io/hostname' }] },
    } as KObject,
    {
      apiVersion: 'kueue.x-k8s.io/v1beta2',
      kind: 'ResourceFlavor',
      metadata: { name: 'gpu' },
      spec: { topologyName: 'default' },
    } as KObject,
  ];
  for (let i = 0; i < nodes; i++) {
    const rack = Math.floor(i / PAINT_RACK);
    const block = Math.floor(rack / PAINT_BLOCK);
    const name = `n${String(i).padStart(5, '0')}`;
    out.push(
      node(name)
        .labels({ [BLOCK]: `b${block}`, [RACK]: `r${rack}` })
        .gpu(8)
        .cpu(128)
        .build(),
    );
    if (i % 2 === 0) out.push(pod(`p${i}`).on(name).request('nvidia.com/gpu', 4).request('cpu', 16).build());
  }
  return out;
}

export interface PaintResult {
  nodes: number;
  /** Navigation start to the first frame with the map (ms). */
  firstPaintMs: number;
  /** Bytes of the page (the state is embedded). */
  pageBytes: number;
  /** A store change until the page shows it (ms). */
  updateMs: number;
}

/** Measures one shape in a fresh page of `browser` (median of `runs` loads for the paint); `check` looks at the loaded page first. */
export async function measurePaint(browser: Browser, nodes: number, runs = 3, check?: (page: Page) => Promise<void>): Promise<PaintResult> {
  const clock = new RealClock();
  const store = new MemoryStore({ clock });
  for (const o of paintCluster(nodes)) store.createSync(o);
  const dash = createDashboard({ store, clock });
  const server = createServer((req, res) => {
    if (!dash.handle(req, res)) res.writeHead(404).end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  try {
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    // The first load builds the bundle (from the sources) and warms the server.
    const first = await page.goto(url);
    const pageBytes = (await first!.body()).length;
    const paints: number[] = [];
    for (let i = 0; i < runs; i++) {
      await page.goto(url);
      const ms = await page.waitForFunction(() => performance.getEntriesByName('tq-first-paint')[0]?.startTime, undefined, {
        timeout: 30_000,
      });
      paints.push((await ms.jsonValue()) as number);
    }
    paints.sort((a, b) => a - b);
    await check?.(page);
    // One node cordoned in the store until its cell says so.
    const name = 'n00001';
    await page.evaluate(() => new Promise((r) => setTimeout(r, 300)));
    const n = mutable(store.getSync<Node>('Node', undefined, name)!);
    n.spec = { ...n.spec, unschedulable: true };
    const cell = nodes > 2000 ? undefined : page.locator(`g.cell[data-node="${name}"] rect.cordoned`);
    const t0 = performance.now();
    store.updateSync(n);
    if (cell) await cell.waitFor({ timeout: 10_000 });
    else
      await page.waitForFunction((x) => document.querySelector('#topo-summary')?.textContent?.includes(x), '1 cordoned', {
        timeout: 10_000,
      });
    const updateMs = performance.now() - t0;
    await page.close();
    return { nodes, firstPaintMs: paints[Math.floor(paints.length / 2)]!, pageBytes, updateMs };
  } finally {
    dash.close();
    await new Promise<void>((r) => server.close(() => r()));
  }
}
