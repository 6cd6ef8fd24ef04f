/// <reference lib="dom" />
// The topology heat-map, shared by the dashboard and the report viewer.
//
// Layout: the levels above the last two make panels (blocks), the level above the hosts
// makes rows (racks), the hosts are cells, left to right in the order of their level values.
// A one-level topology is one row of hosts. Past AGGREGATE_AT nodes the map starts
// aggregated: one cell per rack, coloured by the rack's total; choosing one zooms into its
// block. Colours always have a text alternative: each cell's <title> (hover), the legend,
// and the line read out (aria-live) as the keyboard cursor moves (arrows, Home/End, Enter
// selects, Escape zooms out).

import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import type { ViewJson } from '../types.ts';
import { amount, heat, levelName, pct, workloadColour } from './format.ts';
import { html } from './html.ts';

export interface MapNode {
  name: string;
  capacity: Record<string, number>;
  used?: Record<string, number>;
  ready: boolean;
  unschedulable: boolean;
  taints?: string[];
  pods?: string[];
  workloads?: string[];
}

export type ColourBy = 'usage' | 'workload';

export interface TopologyMapProps {
  view: ViewJson;
  nodes: ReadonlyMap<string, MapNode>;
  resource: string;
  colourBy: ColourBy;
  /** Node -> text drawn in the cell (pod ranks); other nodes are dimmed. */
  marks?: ReadonlyMap<string, string>;
  /** Colour of marked cells (a workload's). */
  markColour?: string;
  selected?: string | null;
  onSelect?: (node: string) => void;
  label: string;
}

export const AGGREGATE_AT = 2000;
const PER_LINE = 36;
const LABEL_W = 64;

interface Row {
  key: string;
  label: string;
  hosts: string[];
}

interface Panel {
  key: string;
  label: string;
  rows: Row[];
}

const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** Panels of rows of hosts (see the header); nodes outside the view come last, in their own panel. */
export function layout(view: ViewJson, nodes: ReadonlyMap<string, MapNode>): Panel[] {
  const L = view.levels.length;
  const entries = Object.entries(view.paths).filter(([n]) => nodes.has(n));
  entries.sort((a, b) => {
    for (let i = 0; i < L; i++) {
      const c = cmp(a[1][i] ?? '', b[1][i] ?? '');
      if (c !== 0) return c;
    }
    return cmp(a[0], b[0]);
  });
  const panels = new Map<string, Panel>();
  const rows = new Map<string, Row>();
  for (const [node, path] of entries) {
    const pk = L >= 3 ? path.slice(0, L - 2).join(' / ') : '';
    const rk = L >= 2 ? path.slice(0, L - 1).join(' / ') : '';
    let p = panels.get(pk);
    if (!p) {
      p = { key: pk, label: L >= 3 ? path.slice(0, L - 2).join(' / ') : view.name, rows: [] };
      panels.set(pk, p);
    }
    let r = rows.get(rk);
    if (!r) {
      r = { key: rk, label: L >= 2 ? path[L - 2]! : '', hosts: [] };
      rows.set(rk, r);
      p.rows.push(r);
    }
    r.hosts.push(node);
  }
  const outside = [...nodes.keys()].filter((n) => !(n in view.paths)).sort(cmp);
  if (outside.length > 0)
    panels.set('\u0000outside', {
      key: '\u0000outside',
      label: `not in ${view.name}`,
      rows: [{ key: '\u0000outside', label: '', hosts: outside }],
    });
  return [...panels.values()];
}

/** Used / total of a resource over some nodes. */
export function totals(names: readonly string[], nodes: ReadonlyMap<string, MapNode>, resource: string): { used: number; total: number } {
  let used = 0;
  let total = 0;
  for (const n of names) {
    const x = nodes.get(n);
    if (!x) continue;
    used += x.used?.[resource] ?? 0;
    total += x.capacity[resource] ?? 0;
  }
  return { used, total };
}

/** A cell's text alternative: what hover and the screen reader say. */
export function describeNode(n: MapNode, resource: string, mark?: string): string {
  const cap = n.capacity[resource] ?? 0;
  const used = n.used?.[resource] ?? 0;
  const state = [!n.ready && 'NotReady', n.unschedulable && 'cordoned', (n.taints?.length ?? 0) > 0 && `taints ${n.taints!.join(', ')}`]
    .filter(Boolean)
    .join(', ');
  const usage =
    cap > 0
      ? `${resource} ${amount(resource, used)}/${amount(resource, cap)} used (${pct(used / cap)}), ${amount(resource, cap - used)} free`
      : `no ${resource}`;
  const pods = n.pods ? `, ${n.pods.length} pod(s)` : '';
  const wl = n.workloads && n.workloads.length > 0 ? `, workloads ${n.workloads.join(', ')}` : '';
  return `${n.name}: ${usage}${pods}${wl}${state ? `; ${state}` : ''}${mark ? `; ranks ${mark}` : ''}`;
}

function fillOf(n: MapNode, props: TopologyMapProps): string {
  if (props.marks?.has(n.name)) return props.markColour ?? 'var(--accent)';
  if (props.colourBy === 'workload') return n.workloads && n.workloads.length > 0 ? workloadColour(n.workloads[0]!) : 'var(--empty)';
  const cap = n.capacity[props.resource] ?? 0;
  if (cap <= 0) return 'var(--na)';
  return heat((n.used?.[props.resource] ?? 0) / cap);
}

interface Item {
  id: string;
  /** A host's node name, or a rack row key. */
  key: string;
  panel: number;
  x: number;
  y: number;
  text: string;
}

export function TopologyMap(props: TopologyMapProps) {
  const { view, nodes } = props;
  const panels = useMemo(() => layout(view, nodes), [view, nodes]);
  const big = nodes.size > AGGREGATE_AT && !props.marks;
  const [aggregated, setAggregated] = useState(big);
  const [zoom, setZoom] = useState<string | null>(null);
  const [cursor, setCursor] = useState(0);
  const [focused, setFocused] = useState(false);
  const live = useRef<HTMLDivElement>(null);
  useEffect(() => setAggregated(big), [big, view]);

  const shown = zoom !== null ? panels.filter((p) => p.key === zoom) : panels;
  const rackMode = aggregated && zoom === null;
  const cs = props.marks ? 24 : rackMode ? 18 : nodes.size <= 512 ? 22 : 14;
  const gap = 2;
  const step = cs + gap;

  // Positions of every cell, for drawing and for the keyboard cursor.
  const items: Item[] = [];
  const drawn = shown.map((p, pi) => {
    let y = 2;
    const cells: { item: Item; node?: MapNode; row?: Row }[] = [];
    const labels: { y: number; text: string }[] = [];
    if (rackMode) {
      p.rows.forEach((r, ri) => {
        const item = {
          id: `c${items.length}`,
          key: r.key,
          panel: pi,
          x: (ri % PER_LINE) * step,
          y: y + Math.floor(ri / PER_LINE) * step,
          text: '',
        };
        const t = totals(r.hosts, nodes, props.resource);
        item.text = `${levelName(view.levels[view.levels.length - 2] ?? 'rack')} ${r.label}: ${r.hosts.length} hosts, ${props.resource} ${amount(props.resource, t.used)}/${amount(props.resource, t.total)} used${t.total > 0 ? ` (${pct(t.used / t.total)})` : ''}`;
        items.push(item);
        cells.push({ item, row: r });
      });
      y += Math.ceil(p.rows.length / PER_LINE) * step;
    } else {
      for (const r of p.rows) {
        labels.push({ y, text: r.label });
        r.hosts.forEach((h, hi) => {
          const n = nodes.get(h)!;
          const item = {
            id: `c${items.length}`,
            key: h,
            panel: pi,
            x: LABEL_W + (hi % PER_LINE) * step,
            y: y + Math.floor(hi / PER_LINE) * step,
            text: describeNode(n, props.resource, props.marks?.get(h)),
          };
          items.push(item);
          cells.push({ item, node: n });
        });
        y += Math.max(1, Math.ceil(r.hosts.length / PER_LINE)) * step;
      }
    }
    const perRow = rackMode ? Math.min(PER_LINE, p.rows.length) : Math.min(PER_LINE, Math.max(1, ...p.rows.map((r) => r.hosts.length)));
    const width = (rackMode ? 0 : LABEL_W) + perRow * step + 4;
    return { p, cells, labels, width: Math.max(width, 120), height: y + 4 };
  });
  const cur = Math.min(cursor, Math.max(0, items.length - 1));

  const choose = (it: Item | undefined) => {
    if (!it) return;
    if (rackMode) {
      const p = shown[it.panel]!;
      setZoom(p.key);
      setCursor(0);
    } else props.onSelect?.(it.key);
  };
  const say = (i: number) => {
    if (live.current && items[i]) live.current.textContent = items[i]!.text;
  };
  const onKey = (e: KeyboardEvent) => {
    let next = cur;
    const it = items[cur];
    if (!it) return;
    if (e.key === 'ArrowRight') next = Math.min(items.length - 1, cur + 1);
    else if (e.key === 'ArrowLeft') next = Math.max(0, cur - 1);
    else if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
      const down = e.key === 'ArrowDown';
      let best = -1;
      let bestScore = Infinity;
      items.forEach((o, i) => {
        const dy = (o.panel - it.panel) * 1e6 + (o.y - it.y);
        if (down ? dy <= 0 : dy >= 0) return;
        const score = Math.abs(dy) * 1000 + Math.abs(o.x - it.x);
        if (score < bestScore) {
          bestScore = score;
          best = i;
        }
      });
      if (best >= 0) next = best;
    } else if (e.key === 'Home') next = 0;
    else if (e.key === 'End') next = items.length - 1;
    else if (e.key === 'Enter' || e.key === ' ') {
      choose(it);
      e.preventDefault();
      return;
    } else if (e.key === 'Escape' && zoom !== null) {
      setZoom(null);
      setCursor(0);
      return;
    } else return;
    e.preventDefault();
    setCursor(next);
    say(next);
  };

  const selectedItem = props.selected ? items.find((i) => i.key === props.selected) : undefined;
  return html`
    <div class="topo">
      <div class="topo-bar">
        ${
          zoom !== null
            ? html`<button type="button" onClick=${() => setZoom(null)}>← all ${levelName(view.levels[0] ?? '')}s</button>
                <span>${shown[0]?.label}</span>`
            : html`<label
                ><input
                  type="checkbox"
                  checked=${aggregated}
                  onChange=${(e: Event) => setAggregated((e.target as HTMLInputElement).checked)}
                />
                aggregate to ${levelName(view.levels[view.levels.length - 2] ?? 'rack')}s</label
              >`
        }
        <span class="muted">${nodes.size} nodes</span>
      </div>
      <div
        class=${`topo-map${focused ? ' focused' : ''}`}
        tabindex="0"
        role="group"
        aria-label=${`${props.label}. Arrow keys move, Enter ${rackMode ? 'zooms in' : 'selects'}, Escape zooms out.`}
        onKeyDown=${onKey}
        onFocus=${() => {
          setFocused(true);
          say(cur);
        }}
        onBlur=${() => setFocused(false)}
      >
        ${drawn.map(
          (d) => html`
            <figure class="panel" key=${d.p.key}>
              <figcaption>
                ${d.p.label}${
                  rackMode
                    ? ''
                    : ` · ${totalsText(
                        d.p.rows.flatMap((r) => r.hosts),
                        nodes,
                        props.resource,
                      )}`
                }
              </figcaption>
              <svg width=${d.width} height=${d.height} role="presentation">
                ${d.labels.map((l) => html`<text class="row-label" x="0" y=${l.y + cs - 3}>${l.text}</text>`)}
                ${d.cells.map((c) => cell(c, cs, props, nodes, c.item === items[cur] && focused, selectedItem === c.item, choose))}
              </svg>
            </figure>
          `,
        )}
      </div>
      <div class="sr-only" aria-live="polite" ref=${live}></div>
    </div>
  `;
}

function totalsText(hosts: string[], nodes: ReadonlyMap<string, MapNode>, resource: string): string {
  const t = totals(hosts, nodes, resource);
  return t.total > 0
    ? `${resource} ${amount(resource, t.used)}/${amount(resource, t.total)} (${pct(t.used / t.total)})`
    : `${hosts.length} hosts`;
}

function cell(
  c: { item: Item; node?: MapNode; row?: Row },
  cs: number,
  props: TopologyMapProps,
  nodes: ReadonlyMap<string, MapNode>,
  isCursor: boolean,
  isSelected: boolean,
  choose: (it: Item) => void,
) {
  const { item } = c;
  const onClick = () => choose(item);
  if (c.row) {
    const t = totals(c.row.hosts, nodes, props.resource);
    const anyDown = c.row.hosts.some((h) => !nodes.get(h)?.ready);
    return html`<g class="cell" data-rack=${c.row.key} onClick=${onClick}>
      <rect
        x=${item.x}
        y=${item.y}
        width=${cs}
        height=${cs}
        rx="2"
        fill=${t.total > 0 ? heat(t.used / t.total) : 'var(--na)'}
        class=${`${anyDown ? 'down' : ''}${isCursor ? ' cursor' : ''}`}
        ><title>${item.text}</title></rect
      >
    </g>`;
  }
  const n = c.node!;
  const mark = props.marks?.get(n.name);
  const dim = props.marks !== undefined && mark === undefined;
  const cls = ['node', !n.ready && 'down', n.unschedulable && 'cordoned', dim && 'dim', isCursor && 'cursor', isSelected && 'selected']
    .filter(Boolean)
    .join(' ');
  return html`<g class="cell" data-node=${n.name} onClick=${onClick}>
    <rect x=${item.x} y=${item.y} width=${cs} height=${cs} rx="2" fill=${fillOf(n, props)} class=${cls}><title>${item.text}</title></rect>
    ${!n.ready ? html`<path class="x" d=${`M${item.x + 3} ${item.y + 3}L${item.x + cs - 3} ${item.y + cs - 3}M${item.x + cs - 3} ${item.y + 3}L${item.x + 3} ${item.y + cs - 3}`} />` : null}
    ${(n.taints?.length ?? 0) > 0 ? html`<path class="taint" d=${`M${item.x + cs - 6} ${item.y}L${item.x + cs} ${item.y}L${item.x + cs} ${item.y + 6}Z`} />` : null}
    ${mark !== undefined ? html`<text class="mark" x=${item.x + cs / 2} y=${item.y + cs / 2 + 3} text-anchor="middle">${mark}</text>` : null}
  </g>`;
}

/** The legend: what each colour and mark means, in words. */
export function Legend(props: { resource: string; colourBy: ColourBy }) {
  const steps = [0, 0.25, 0.5, 0.75, 1];
  return html`<div class="legend" aria-label="legend">
    ${
      props.colourBy === 'usage'
        ? html`<span>${props.resource} used:</span
            >${steps.map((s) => html`<span class="swatch" style=${`background:${heat(s)}`}></span><span>${pct(s)}</span>`)}
            <span class="swatch" style="background:var(--na)"></span><span>none of it</span>`
        : html`<span>each workload its own colour;</span><span class="swatch" style="background:var(--empty)"></span
            ><span>no workload</span>`
    }
    <span class="swatch down-swatch">✕</span><span>NotReady</span> <span class="swatch cordoned-swatch"></span><span>cordoned</span>
    <span class="swatch taint-swatch"></span><span>tainted</span>
  </div>`;
}

/** Free / used / total per resource, and what else is known of a node. */
export function NodeDetails(props: {
  node: MapNode;
  path?: string[];
  levels?: string[];
  resources: string[];
  onWorkload?: (key: string) => void;
}) {
  const n = props.node;
  return html`<section class="details" aria-label=${`node ${n.name}`}>
    <h3>${n.name}</h3>
    ${props.path ? html`<p class="muted">${props.path.map((v, i) => `${levelName(props.levels?.[i] ?? '')} ${v}`).join(' › ')}</p>` : null}
    <p>
      ${n.ready ? html`<span class="badge ok">Ready</span>` : html`<span class="badge bad">NotReady</span>`}
      ${n.unschedulable ? html` <span class="badge warn">cordoned</span>` : null}
      ${(n.taints ?? []).map((t) => html` <span class="badge warn">taint ${t}</span>`)}
    </p>
    <table>
      <thead>
        <tr>
          <th scope="col">resource</th>
          <th scope="col">free</th>
          <th scope="col">used</th>
          <th scope="col">total</th>
        </tr>
      </thead>
      <tbody>
        ${props.resources
          .filter((r) => (n.capacity[r] ?? 0) > 0 || (n.used?.[r] ?? 0) > 0)
          .map((r) => {
            const cap = n.capacity[r] ?? 0;
            const used = n.used?.[r] ?? 0;
            return html`<tr>
              <th scope="row">${r}</th>
              <td>${amount(r, cap - used)}</td>
              <td>${amount(r, used)}</td>
              <td>${amount(r, cap)}</td>
            </tr>`;
          })}
      </tbody>
    </table>
    ${
      n.workloads && n.workloads.length > 0
        ? html`<h4>Workloads</h4>
            <ul>
              ${n.workloads.map((w) => html`<li><span class="swatch" style=${`background:${workloadColour(w)}`}></span> ${props.onWorkload ? html`<a href=${`#/workloads/${w}`}>${w}</a>` : w}</li>`)}
            </ul>`
        : null
    }
    ${
      n.pods
        ? html`<h4>Pods (${n.pods.length})</h4>
            <ul class="pods">
              ${n.pods.map((p) => html`<li>${p}</li>`)}
            </ul>`
        : null
    }
  </section>`;
}
