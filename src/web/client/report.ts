/// <reference lib="dom" />
// The report viewer: one `simulate` report (docs/simulate.md) in a self-contained page.
// Utilization over time per resource and queue usage over time (uPlot), a Gantt chart of
// the workloads (queued, admitted, running; evictions marked), time-to-admission per
// ClusterQueue as a distribution, and any workload's placement on the topology. Every
// chart has a table or text beside it saying the same in words.

import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import uPlot from 'uplot';
import type { ReportWorkload, SimulationReport } from '../../cluster/report.ts';
import { duration, pct, round, TIME_INCRS, workloadColour } from './format.ts';
import { workloadHistory } from './history.ts';
import { html } from './html.ts';
import { rankMarks, ThemeToggle } from './common.ts';
import { type MapNode, NodeDetails, TopologyMap } from './topology.ts';

const PALETTE = ['#1f77b4', '#d95f02', '#1b9e77', '#7570b3', '#e7298a', '#66a61e', '#a6761d', '#e6ab02', '#17becf', '#666666'];

function Chart(props: {
  title: string;
  xs: number[];
  series: { label: string; values: (number | null)[] }[];
  yLabel: string;
  yFormat: (v: number) => string;
  id: string;
}) {
  const el = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const host = el.current;
    if (!host) return;
    const width = Math.max(320, Math.min(1100, host.clientWidth || 900));
    const axisColour = getComputedStyle(document.documentElement).getPropertyValue('--fg').trim() || '#222';
    const opts: uPlot.Options = {
      width,
      height: 260,
      scales: { x: { time: false } },
      axes: [
        {
          stroke: axisColour,
          incrs: TIME_INCRS,
          values: (_u, ticks) => ticks.map((t) => duration(t)),
          grid: { stroke: 'rgba(128,128,128,0.2)' },
        },
        {
          stroke: axisColour,
          label: props.yLabel,
          values: (_u, ticks) => ticks.map(props.yFormat),
          grid: { stroke: 'rgba(128,128,128,0.2)' },
          size: 60,
        },
      ],
      series: [
        { label: 'time', value: (_u, v) => (v === null ? '–' : duration(v)) },
        ...props.series.map((s, i) => ({
          label: s.label,
          stroke: PALETTE[i % PALETTE.length],
          width: 2,
          paths: uPlot.paths.stepped!({ align: 1 }),
          value: (_u: uPlot, v: number | null) => (v === null ? '–' : props.yFormat(v)),
        })),
      ],
    };
    const plot = new uPlot(opts, [props.xs, ...props.series.map((s) => s.values)] as uPlot.AlignedData, host);
    return () => plot.destroy();
  }, [props.xs, props.series]);
  return html`<figure class="chart" id=${props.id}>
    <figcaption>${props.title}</figcaption>
    <div ref=${el} role="img" aria-label=${`${props.title}: a line chart; the table below gives the figures`}></div>
  </figure>`;
}

function UtilizationSection(props: { r: SimulationReport }) {
  const u = props.r.utilization;
  const resources = u.resources.filter((r) => r !== 'pods');
  const data = useMemo(() => {
    const xs = u.series.map((p) => p.at);
    const series = resources.map((r) => ({
      label: r,
      values: u.series.map((p) => ((p.capacity[r] ?? 0) > 0 ? (p.used[r] ?? 0) / p.capacity[r]! : null)),
    }));
    return { xs, series };
  }, [props.r]);
  return html`<section aria-labelledby="util-h">
    <h2 id="util-h">Utilization over time</h2>
    ${data.xs.length > 0 ? html`<${Chart} id="util-chart" title="requests of bound pods / allocatable of Ready nodes" xs=${data.xs} series=${data.series} yLabel="used" yFormat=${(v: number) => pct(v)} />` : html`<p>No samples.</p>`}
    <table class="figures">
      <caption>
        Mean over the run
      </caption>
      <thead>
        <tr>
          <th scope="col">resource</th>
          <th scope="col">mean utilization</th>
        </tr>
      </thead>
      <tbody>
        ${resources.map(
          (r) =>
            html`<tr>
              <th scope="row">${r}</th>
              <td>${u.mean[r] !== undefined ? pct(u.mean[r]!) : '–'}</td>
            </tr>`,
        )}
      </tbody>
    </table>
  </section>`;
}

function QueueSection(props: { r: SimulationReport }) {
  const queues = props.r.queues;
  const keys = useMemo(
    () => [...new Set(queues.flatMap((q) => [...Object.keys(q.nominal), ...q.usage.flatMap((p) => Object.keys(p.usage))]))].sort(),
    [props.r],
  );
  const [key, setKey] = useState(() => keys.find((k) => k.endsWith('/gpu')) ?? keys[0] ?? '');
  const data = useMemo(() => {
    const times = [...new Set(queues.flatMap((q) => q.usage.map((p) => p.at)))].sort((a, b) => a - b);
    const series = queues.map((q) => {
      let i = -1;
      const values = times.map((t) => {
        while (i + 1 < q.usage.length && q.usage[i + 1]!.at <= t) i++;
        return i >= 0 ? (q.usage[i]!.usage[key] ?? 0) : 0;
      });
      return { label: q.name, values };
    });
    return { xs: times, series };
  }, [props.r, key]);
  const peak = (name: string) => Math.max(0, ...(queues.find((q) => q.name === name)?.usage.map((p) => p.usage[key] ?? 0) ?? []));
  return html`<section aria-labelledby="queue-h">
    <h2 id="queue-h">Queue usage over time</h2>
    <label for="qkey"
      >flavor/resource
      <select id="qkey" value=${key} onChange=${(e: Event) => setKey((e.target as HTMLSelectElement).value)}>
        ${keys.map((k) => html`<option value=${k}>${k}</option>`)}
      </select></label
    >
    ${data.xs.length > 0 ? html`<${Chart} id="queue-chart" title=${`quota used per ClusterQueue: ${key}`} xs=${data.xs} series=${data.series} yLabel=${key} yFormat=${(v: number) => String(round(v))} />` : html`<p>No queue samples.</p>`}
    <table class="figures">
      <thead>
        <tr>
          <th scope="col">ClusterQueue</th>
          <th scope="col">cohort</th>
          <th scope="col">nominal</th>
          <th scope="col">peak usage</th>
        </tr>
      </thead>
      <tbody>
        ${queues.map(
          (q) =>
            html`<tr>
              <th scope="row">${q.name}</th>
              <td>${q.cohort ?? '–'}</td>
              <td>${q.nominal[key] ?? 0}</td>
              <td>${round(peak(q.name))}</td>
            </tr>`,
        )}
      </tbody>
    </table>
  </section>`;
}

const GANTT_ROW = 16;
const GANTT_LABEL = 220;

function Gantt(props: { r: SimulationReport; selected: string; onSelect: (key: string) => void }) {
  const { r } = props;
  const end = Math.max(r.run.end, 1);
  const width = 1000;
  const plotW = width - GANTT_LABEL - 10;
  const x = (t: number) => GANTT_LABEL + (t / end) * plotW;
  const rows = r.workloads.filter((w) => w.submittedAt !== null);
  const tickStep = TIME_INCRS.find((s) => end / s <= 8) ?? end;
  const ticks = Array.from({ length: Math.floor(end / tickStep) + 1 }, (_, i) => i * tickStep);
  const onKey = (e: KeyboardEvent, key: string) => {
    if (e.key === 'Enter' || e.key === ' ') {
      e.preventDefault();
      props.onSelect(key);
    }
  };
  return html`<section aria-labelledby="gantt-h">
    <h2 id="gantt-h">Workloads over time</h2>
    <p class="legend">
      <span class="swatch g-queued"></span><span>queued</span><span class="swatch g-admitted"></span><span>admitted, pods starting</span
      ><span class="swatch g-running"></span><span>running</span><span class="swatch g-evict"></span><span>eviction</span>
    </p>
    <div class="gantt-wrap">
      <svg
        class="gantt"
        width=${width}
        height=${rows.length * GANTT_ROW + 24}
        role="list"
        aria-label="Gantt chart: one row per workload; Enter shows its placement"
      >
        ${ticks.map((t) => html`<g><line class="tick" x1=${x(t)} x2=${x(t)} y1="0" y2=${rows.length * GANTT_ROW}></line><text class="tick-label" x=${x(t)} y=${rows.length * GANTT_ROW + 14} text-anchor="middle">${duration(t)}</text></g>`)}
        ${rows.map((w, i) => {
          const key = `${w.namespace}/${w.name}`;
          const y = i * GANTT_ROW;
          const sub = w.submittedAt!;
          const adm = w.admittedAt;
          const st = w.startedAt;
          const fin = w.finishedAt ?? end;
          const text = `${w.kind} ${key}: ${w.status}; submitted ${duration(sub)}, admitted ${duration(adm)}, started ${duration(st)}, finished ${duration(w.finishedAt)}${w.evictions.length > 0 ? `; ${w.evictions.length} eviction(s)` : ''}`;
          return html`<g
            class=${`g-row${props.selected === key ? ' selected' : ''}`}
            role="listitem"
            tabindex="0"
            aria-label=${text}
            onClick=${() => props.onSelect(key)}
            onKeyDown=${(e: KeyboardEvent) => onKey(e, key)}
            data-workload=${key}
          >
            <title>${text}</title>
            <text class="g-label" x=${GANTT_LABEL - 6} y=${y + 12} text-anchor="end"
              >${key.length > 34 ? `${key.slice(0, 33)}…` : key}</text
            >
            <rect class="g-queued" x=${x(sub)} y=${y + 3} width=${Math.max(1, x(adm ?? fin) - x(sub))} height=${GANTT_ROW - 6}></rect>
            ${adm !== null ? html`<rect class="g-admitted" x=${x(adm)} y=${y + 2} width=${Math.max(1, x(st ?? fin) - x(adm))} height=${GANTT_ROW - 4}></rect>` : null}
            ${st !== null ? html`<rect class="g-running" x=${x(st)} y=${y + 2} width=${Math.max(1, x(fin) - x(st))} height=${GANTT_ROW - 4}></rect>` : null}
            ${w.evictions.map((ev) => html`<path class="g-evict" d=${`M${x(ev.at)} ${y}l4 0l-4 ${GANTT_ROW}l-4 -${GANTT_ROW}z`}><title>${`evicted at ${duration(ev.at)}: ${ev.reason}: ${ev.message}`}</title></path>`)}
          </g>`;
        })}
      </svg>
    </div>
  </section>`;
}

function quantile(xs: number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))]!;
}

function WaitSection(props: { r: SimulationReport }) {
  const waits = new Map<string, number[]>();
  for (const w of props.r.workloads) {
    if (w.admittedAt === null || w.submittedAt === null || !w.clusterQueue) continue;
    waits.set(w.clusterQueue, [...(waits.get(w.clusterQueue) ?? []), w.admittedAt - w.submittedAt]);
  }
  const all = [...waits.values()].flat();
  const max = Math.max(1, ...all);
  const BINS = 12;
  const bw = 24;
  const h = 60;
  return html`<section aria-labelledby="wait-h">
    <h2 id="wait-h">Time to admission per ClusterQueue</h2>
    <div class="cards">
      ${[...waits.entries()]
        .sort(([a], [b]) => (a < b ? -1 : 1))
        .map(([q, xs]) => {
          const bins = new Array(BINS).fill(0) as number[];
          for (const v of xs) bins[Math.min(BINS - 1, Math.floor((v / max) * BINS))]!++;
          const top = Math.max(...bins);
          const text = `${q}: ${xs.length} admitted; wait min ${duration(Math.min(...xs))}, median ${duration(quantile(xs, 0.5))}, p90 ${duration(quantile(xs, 0.9))}, max ${duration(Math.max(...xs))}`;
          return html`<figure class="card hist" data-queue=${q}>
            <figcaption>${q}</figcaption>
            <svg width=${BINS * bw} height=${h + 16} role="img" aria-label=${text}>
              ${bins.map((b, i) => html`<rect class="hist-bar" x=${i * bw + 1} y=${h - (b / top) * h} width=${bw - 2} height=${(b / top) * h}><title>${`${b} workload(s) waited ${duration((i * max) / BINS)} to ${duration(((i + 1) * max) / BINS)}`}</title></rect>`)}
              <text class="tick-label" x="0" y=${h + 13}>0</text>
              <text class="tick-label" x=${BINS * bw} y=${h + 13} text-anchor="end">${duration(max)}</text>
            </svg>
            <p class="muted">${text}</p>
          </figure>`;
        })}
    </div>
  </section>`;
}

/**
 * The pods of a workload's last placement: after an eviction the report still lists the
 * pods of the earlier ones, so keep those whose node lies in a domain of the last
 * assignment (compared at its levels, read from the view's paths).
 */
function lastPlacementPods(w: ReportWorkload, view: { levels: string[]; paths: Record<string, string[]> }): ReportWorkload['pods'] {
  if (w.evictions.length === 0) return w.pods;
  const inDomain = (node: string | null) => {
    const path = node === null ? undefined : view.paths[node];
    if (!path) return false;
    return w.placement.some((p) => {
      const at = p.levels.map((l) => view.levels.indexOf(l));
      if (p.domains.length === 0 || at.some((i) => i < 0)) return true;
      return p.domains.some((d) => at.every((i, k) => path[i] === d.values[k]));
    });
  };
  const kept = w.pods.filter((p) => inDomain(p.node));
  return kept.length > 0 ? kept : w.pods.filter((p) => p.phase !== 'Deleted');
}

/** The chosen workload's history: why it waited, where it ran each time, who preempted it. */
function WorkloadHistory(props: { w: ReportWorkload }) {
  const tables = workloadHistory(props.w);
  return html`<div id="workload-history">
    <h3>History of ${props.w.kind} ${props.w.namespace}/${props.w.name}</h3>
    ${tables.length === 0 ? html`<p class="muted">No history recorded for it in this report.</p>` : null}
    ${tables.map(
      (t) =>
        html`<table class="history" id=${t.id}>
          <caption>
            ${t.caption}
          </caption>
          <thead>
            <tr>
              ${t.head.map((h) => html`<th scope="col">${h}</th>`)}
            </tr>
          </thead>
          <tbody>
            ${t.rows.map(
              (r) =>
                html`<tr>
                  ${r.map((c, i) => html`<td class=${i === r.length - 1 ? 'reason' : undefined}>${c}</td>`)}
                </tr>`,
            )}
          </tbody>
        </table>`,
    )}
  </div>`;
}

function PlacementSection(props: { r: SimulationReport; selected: string; onSelect: (key: string) => void }) {
  const { r } = props;
  const topo = r.topology;
  const nodes = useMemo(
    () =>
      new Map<string, MapNode>(
        (topo?.nodes ?? []).map((n) => [n.name, { name: n.name, capacity: n.capacity, ready: n.ready, unschedulable: n.unschedulable }]),
      ),
    [r],
  );
  const [node, setNode] = useState<string | null>(null);
  const w: ReportWorkload | undefined = r.workloads.find((x) => `${x.namespace}/${x.name}` === props.selected);
  const flavor = w?.placement.find((p) => p.flavor)?.flavor;
  const view = topo?.views.find((v) => v.flavor === flavor) ?? topo?.views[0];
  const marks = rankMarks(w && view ? lastPlacementPods(w, view) : []);
  const resources = [...new Set((topo?.nodes ?? []).flatMap((n) => Object.keys(n.capacity)))].sort();
  const res = resources.find((x) => x.endsWith('/gpu')) ?? 'cpu';
  const choices = r.workloads;
  return html`<section aria-labelledby="place-h">
    <h2 id="place-h">Placement on the topology, and history</h2>
    <label for="pw"
      >workload
      <select id="pw" value=${props.selected} onChange=${(e: Event) => props.onSelect((e.target as HTMLSelectElement).value)}>
        <option value="">(choose)</option>
        ${choices.map((x) => html`<option value=${`${x.namespace}/${x.name}`}>${x.kind} ${x.namespace}/${x.name}</option>`)}
      </select></label
    >
    ${
      w
        ? html`<p id="placement-text">
            ${w.kind} ${w.namespace}/${w.name}: ${w.status}; ${marks.size} node(s) shown with the ranks of their
            pods${
              w.placement.length > 0
                ? `; ` +
                  `${w.placement.map((p) => `${p.podSet}: ${p.count} on ${p.flavor ?? '–'}${p.domains.length > 0 ? ` in ${p.domains.length} domain(s) at ${p.levels[p.levels.length - 1]}` : ''}`).join('; ')}`
                : ''
            }${w.evictions.length > 0 ? `; evicted ${w.evictions.length} time(s): the pods of the last placement are shown` : ''}
          </p>`
        : html`<p class="muted">Choose a workload here or in the Gantt chart.</p>`
    }
    ${
      view && w
        ? html`<div class="split">
            <${TopologyMap}
              view=${view}
              nodes=${nodes}
              resource=${res}
              colourBy="usage"
              marks=${marks}
              markColour=${workloadColour(props.selected)}
              selected=${node}
              onSelect=${setNode}
              label=${`placement of ${props.selected}: pods by rank`}
            />
            ${node && nodes.get(node) ? html`<${NodeDetails} node=${nodes.get(node)!} path=${view.paths[node]} levels=${view.levels} resources=${resources} />` : null}
          </div>`
        : null
    }
    ${!topo ? html`<p class="muted">This report has no topology section (written by an older topoqueue).</p>` : null}
    ${w ? html`<${WorkloadHistory} w=${w} />` : null}
  </section>`;
}

export function ReportApp(props: { report: SimulationReport; title: string }) {
  const r = props.report;
  const s = r.summary;
  const first = r.workloads.find((w) => w.pods.length > 0);
  const [selected, setSelected] = useState(first ? `${first.namespace}/${first.name}` : '');
  const select = (key: string) => {
    setSelected(key);
    document.getElementById('place-h')?.scrollIntoView({ block: 'start' });
  };
  return html`
    <header class="top">
      <h1>${props.title}</h1>
      <nav aria-label="sections">
        <a href="#util-h">Utilization</a> <a href="#queue-h">Queues</a> <a href="#gantt-h">Workloads</a>
        <a href="#wait-h">Time to admission</a> <a href="#place-h">Placement</a>
      </nav>
      <${ThemeToggle} />
    </header>
    <main id="main">
      <section aria-labelledby="sum-h">
        <h2 id="sum-h">Summary</h2>
        <dl class="facts" id="summary">
          <dt>run</dt>
          <dd>${duration(r.run.end)} of virtual time from ${r.run.start} in ${r.run.steps} steps (${r.run.stop})</dd>
          <dt>workloads</dt>
          <dd>
            ${s.workloads}
            (${Object.entries(s.byStatus)
              .map(([k, v]) => `${k} ${v}`)
              .join(', ')})
          </dd>
          <dt>makespan</dt>
          <dd>${duration(s.makespan)}</dd>
          <dt>evictions</dt>
          <dd>
            ${s.evictions}${
              Object.keys(s.evictionsByReason).length > 0
                ? ` (${Object.entries(s.evictionsByReason)
                    .map(([k, v]) => `${k} ${v}`)
                    .join(', ')})`
                : ''
            }
          </dd>
          <dt>violations</dt>
          <dd>${s.violations === 0 ? 'none' : s.violations}</dd>
        </dl>
      </section>
      <${UtilizationSection} r=${r} />
      <${QueueSection} r=${r} />
      <${Gantt} r=${r} selected=${selected} onSelect=${select} />
      <${WaitSection} r=${r} />
      <${PlacementSection} r=${r} selected=${selected} onSelect=${setSelected} />
    </main>
  `;
}
