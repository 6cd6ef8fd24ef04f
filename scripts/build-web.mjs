// The dashboard's browser bundle, made at build time (`npm run build`, after tsc): writes
// dist/web/app.js and dist/web/app.css with the bundler in dist/web/build.js, so the
// compiled CLI serves and inlines them without esbuild (a dev dependency) at run time.
import { mkdirSync, writeFileSync } from 'node:fs';
import { URL } from 'node:url';

const { buildWebBundle } = await import(new URL('../dist/web/build.js', import.meta.url).href);
const b = await buildWebBundle();
const dir = new URL('../dist/web/', import.meta.url);
mkdirSync(dir, { recursive: true });
writeFileSync(new URL('app.js', dir), b.js);
writeFileSync(new URL('app.css', dir), b.css);
console.log(`dist/web: app.js ${Math.round(b.js.length / 1024)} KiB, app.css ${Math.round(b.css.length / 1024)} KiB`);
