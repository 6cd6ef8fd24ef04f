// A real browser for the web tests: Debian's Chromium driven by playwright-core (which
// downloads no browser). `launchBrowser` resolves to undefined, with the reason, when no
// Chromium is installed, so a test can skip saying why.

import { existsSync } from 'node:fs';
import type { Browser } from 'playwright-core';

const CANDIDATES = [
  process.env.CHROMIUM_PATH,
  '/usr/bin/chromium',
  '/usr/bin/chromium-browser',
  '/usr/bin/google-chrome',
  '/usr/bin/google-chrome-stable',
];

/** The Chromium executable, or undefined. `CHROMIUM_PATH` overrides the usual places. */
export function chromiumPath(): string | undefined {
  return CANDIDATES.find((p): p is string => p !== undefined && p !== '' && existsSync(p));
}

export const NO_BROWSER =
  'no Chromium found (install it with `apt-get install --no-install-recommends chromium`, or set CHROMIUM_PATH): browser tests skipped';

/** Flags for a headless Chromium run as root on a closed network. */
const ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-dev-shm-usage',
];

/** A headless Chromium with a fresh profile (playwright makes a temporary user-data-dir), or undefined when there is none. */
export async function launchBrowser(): Promise<Browser | undefined> {
  const executablePath = chromiumPath();
  if (!executablePath) return undefined;
  const { chromium } = await import('playwright-core');
  return chromium.launch({ executablePath, headless: true, args: ARGS });
}

/** Screenshots are written only when UPDATE_SCREENSHOTS=1 (to docs/images/). */
export const updateScreenshots = process.env.UPDATE_SCREENSHOTS === '1';
