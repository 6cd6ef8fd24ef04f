/// <reference lib="dom" />
// Pieces both apps use: the theme switch and pod ranks as cell marks.

import { useState } from 'preact/hooks';
import { html } from './html.ts';

/** Ranks as short ranges: [0,1,2,3,7] -> "0-3,7". */
export function rankText(ranks: number[]): string {
  const r = [...ranks].sort((a, b) => a - b);
  const parts: string[] = [];
  for (let i = 0; i < r.length;) {
    let j = i;
    while (j + 1 < r.length && r[j + 1] === r[j]! + 1) j++;
    parts.push(j > i ? `${r[i]}-${r[j]}` : String(r[i]));
    i = j + 1;
  }
  return parts.join(',');
}

/** Node -> the ranks of the pods on it (`·` for pods without a rank). */
export function rankMarks(pods: readonly { node: string | null; rank: number | null }[]): Map<string, string> {
  const by = new Map<string, { ranks: number[]; other: number }>();
  for (const p of pods) {
    if (!p.node) continue;
    const e = by.get(p.node) ?? { ranks: [], other: 0 };
    if (p.rank === null) e.other++;
    else e.ranks.push(p.rank);
    by.set(p.node, e);
  }
  const out = new Map<string, string>();
  for (const [n, e] of by) out.set(n, e.ranks.length > 0 ? rankText(e.ranks) : '·'.repeat(Math.min(3, e.other)));
  return out;
}

type Theme = 'auto' | 'light' | 'dark';

function storedTheme(): Theme {
  try {
    const t = localStorage.getItem('tq-theme');
    return t === 'light' || t === 'dark' ? t : 'auto';
  } catch {
    return 'auto';
  }
}

export function applyTheme(t: Theme = storedTheme()): void {
  if (t === 'auto') delete document.documentElement.dataset.theme;
  else document.documentElement.dataset.theme = t;
}

export function ThemeToggle() {
  const [theme, setTheme] = useState<Theme>(storedTheme);
  const next: Record<Theme, Theme> = { auto: 'light', light: 'dark', dark: 'auto' };
  const change = () => {
    const t = next[theme];
    setTheme(t);
    try {
      localStorage.setItem('tq-theme', t);
    } catch {
      // No storage (a file opened with strict settings): the choice lasts for this page.
    }
    applyTheme(t);
  };
  return html`<button type="button" class="theme" onClick=${change} aria-label=${`theme: ${theme}; switch to ${next[theme]}`}>
    theme: ${theme}
  </button>`;
}
