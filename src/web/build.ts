// The browser bundle (client/main.ts with Preact, htm and uPlot, and client/style.css),
// made by esbuild. `npm run build` makes it once (scripts/build-web.mjs writes
// dist/web/app.js and app.css, so a production install needs no esbuild); run from the
// sources (tests, tsx) it is built on first use and kept in memory.

import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type * as Esbuild from 'esbuild';

export interface WebBundle {
  js: string;
  css: string;
}

/** The client entry: beside this file in src/web/, or in src/ when this runs from dist/web/. */
function entryPoint(): string | undefined {
  return ['./client/main.ts', '../../src/web/client/main.ts']
    .map((u) => fileURLToPath(new URL(u, import.meta.url)))
    .find((p) => existsSync(p));
}

/** Bundles the client with esbuild (a dev dependency: present at build time and in a source checkout). */
export async function buildWebBundle(): Promise<WebBundle> {
  const entry = entryPoint();
  if (!entry) throw new Error('the dashboard sources (src/web/client/main.ts) are not there to bundle');
  let esbuild: typeof Esbuild;
  try {
    esbuild = await import('esbuild');
  } catch {
    throw new Error(
      'the dashboard bundle (dist/web/app.js) is missing and esbuild is not installed to make it: run `npm run build` where dev dependencies are installed',
    );
  }
  const r = await esbuild.build({
    entryPoints: [entry],
    bundle: true,
    write: false,
    minify: true,
    format: 'iife',
    target: 'es2020',
    outdir: 'web',
    entryNames: 'app',
    legalComments: 'none',
    logLevel: 'silent',
  });
  const js = r.outputFiles.find((f) => f.path.endsWith('.js'))?.text ?? '';
  const css = r.outputFiles.find((f) => f.path.endsWith('.css'))?.text ?? '';
  return { js, css };
}

let cached: Promise<WebBundle> | undefined;

/** The bundle: prebuilt beside this module (dist/web/app.js), else built once with esbuild. */
export function webBundle(): Promise<WebBundle> {
  return (cached ??= (async () => {
    const js = fileURLToPath(new URL('./app.js', import.meta.url));
    const css = fileURLToPath(new URL('./app.css', import.meta.url));
    if (existsSync(js) && existsSync(css)) return { js: readFileSync(js, 'utf8'), css: readFileSync(css, 'utf8') };
    return buildWebBundle();
  })().catch((e: unknown) => {
    cached = undefined;
    throw e;
  }));
}

/** JSON safe inside a `<script>` element. */
export function scriptJson(value: unknown): string {
  return JSON.stringify(value)
    .replace(/</g, '\\u003c')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');
}

const escapeHtml = (s: string) => s.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]!);

/** A page: the CSS inline, the data as JSON, the script inline or by URL. */
export function pageHtml(opts: { title: string; css: string; data: unknown; js?: string; scriptSrc?: string }): string {
  const script =
    opts.js !== undefined
      ? `<script>${opts.js.replace(/<\/script/gi, '<\\/script')}</script>`
      : `<script src="${escapeHtml(opts.scriptSrc ?? '')}"></script>`;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<title>${escapeHtml(opts.title)}</title>
<style>${opts.css}</style>
</head>
<body>
<div id="app"><p class="loading">Loading…</p></div>
<script type="application/json" id="tq-data">${scriptJson(opts.data)}</script>
${script}
</body>
</html>
`;
}
