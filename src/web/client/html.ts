/// <reference lib="dom" />
// htm bound to Preact's h: tagged templates instead of JSX, so the client needs no JSX build step.
import { h } from 'preact';
import htmModule from 'htm';

// htm's typings describe its CommonJS build (the default is the module object under
// NodeNext resolution); esbuild bundles the ES module, whose default is the function.
type Htm = { bind(fn: typeof h): (strings: TemplateStringsArray, ...values: unknown[]) => ReturnType<typeof h> };
const htm = ((htmModule as unknown as { default?: Htm }).default ?? htmModule) as unknown as Htm;

export const html = htm.bind(h);
