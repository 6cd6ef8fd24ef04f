/// <reference lib="dom" />
// Numbers, times and colours as the pages show them.

const UNITS = ['', 'Ki', 'Mi', 'Gi', 'Ti', 'Pi'];

/** An amount in plain units (cpu cores, memory bytes) as a short text. */
export function amount(resource: string, n: number): string {
  if (resource === 'memory' || resource.endsWith('storage') || resource.startsWith('hugepages')) {
    let i = 0;
    let v = n;
    while (Math.abs(v) >= 1024 && i < UNITS.length - 1) {
      v /= 1024;
      i++;
    }
    return `${round(v)}${UNITS[i]}`;
  }
  return String(round(n));
}

export const round = (v: number) => (Math.abs(v) >= 100 ? Math.round(v) : Math.round(v * 10) / 10);
export const pct = (f: number) => `${Math.round(f * 100)}%`;

/** Seconds as 1h2m3s. */
export function duration(s: number | null): string {
  if (s === null || !Number.isFinite(s)) return '–';
  if (s === 0) return '0s';
  if (s < 1) return `${Math.round(s * 1000)}ms`;
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const sec = Math.round(s % 60);
  return `${h > 0 ? `${h}h` : ''}${m > 0 ? `${m}m` : ''}${sec > 0 || (h === 0 && m === 0) ? `${sec}s` : ''}`;
}

/** Age of a time (ms) relative to now (ms). */
export const age = (at: number | null, now: number) => (at === null ? '–' : duration(Math.max(0, (now - at) / 1000)));

export const clockTime = (ms: number | null) => (ms === null ? '–' : new Date(ms).toISOString().replace('T', ' ').slice(0, 19));

/** Heat colour of a used fraction (0..1): a sequential yellow-orange-red scale, readable in both themes. */
export function heat(f: number): string {
  const stops = [
    [0, [255, 247, 188]],
    [0.35, [254, 196, 79]],
    [0.7, [236, 112, 20]],
    [1, [153, 52, 4]],
  ] as const;
  const x = Math.max(0, Math.min(1, f));
  for (let i = 1; i < stops.length; i++) {
    const [x1, c1] = stops[i]!;
    const [x0, c0] = stops[i - 1]!;
    if (x <= x1) {
      const t = (x - x0) / (x1 - x0);
      return `rgb(${c0.map((c, k) => Math.round(c + (c1[k]! - c) * t)).join(',')})`;
    }
  }
  return 'rgb(153,52,4)';
}

/** A stable colour per workload key (hue from a string hash). */
export function workloadColour(key: string): string {
  let hsh = 2166136261;
  for (let i = 0; i < key.length; i++) hsh = Math.imul(hsh ^ key.charCodeAt(i), 16777619);
  const hue = (hsh >>> 0) % 360;
  return `hsl(${hue} 62% 52%)`;
}

/** The short name of a level key (`cloud.provider.com/topology-rack` -> `rack`). */
export function levelName(key: string): string {
  const last = key.slice(key.lastIndexOf('/') + 1);
  return last.replace(/^topology-/, '').replace(/^tier-/, 'tier ');
}

export const STATUS_ORDER = ['Pending', 'Admitted', 'Evicted', 'Finished', 'Failed'] as const;

/** Tick steps for a time axis in seconds: round minutes and hours. */
export const TIME_INCRS = [1, 5, 10, 30, 60, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400, 172800, 604800];
