/// <reference lib="dom" />
// The live dashboard: Topology, Queues, Workloads and a page per Workload, as hash routes
// (#/topology, #/queues, #/workloads, #/workloads/NS/NAME). The state comes embedded in the
// page, then `/ui/events` sends deltas (types.ts); nothing reloads.

import { useEffect, useMemo, useState } from 'preact/hooks';
import type { ClusterQueueJson, DashboardDelta, DashboardState, NodeJson, PodJson, ViewJson, WorkloadJson } from '../types.ts';
import { age, amount, clockTime, levelName, STATUS_ORDER } from './format.ts';
import { html } from './html.ts';
import { type ColourBy, Legend, NodeDetails, TopologyMap } from './topology.ts';
import { rankMarks, ThemeToggle } from './common.ts';

interface Live {
  seq: number;
  now: number;
  resources: string[];
  defaultResource: string;
  views: ViewJson[];
  nodes: Map<string, NodeJson>;
  workloads: Map<string, WorkloadJson>;
  queues: DashboardState['queues'];
}

function fromState(s: DashboardState): Live {
  return {
    seq: s.seq,
    now: s.now,
    resources: s.resources,
    defaultResource: s.defaultResource,
    views: s.views,
    nodes: new Map(s.nodes.map((n) => [n.name, n])),
    workloads: new Map(s.workloads.map((w) => [w.key, w])),
    queues: s.queues,
  };
}

/** A delta applied to a copy (maps copied only when they change, so unchanged pages skip work). */
export function applyDelta(l: Live, d: DashboardDelta): Live {
  const out: Live = { ...l, seq: d.seq, now: d.now };
  if (d.views) out.views = d.views;
  if (d.resources) out.resources = d.resources;
  if (d.defaultResource) out.defaultResource = d.defaultResource;
  if (d.nodes?.length || d.removedNodes?.length) {
    out.nodes = new Map(l.nodes);
    for (const n of d.nodes ?? []) out.nodes.set(n.name, n);
    for (const n of d.removedNodes ?? []) out.nodes.delete(n);
  }
  if (d.workloads?.length || d.removedWorkloads?.length) {
    out.workloads = new Map(l.workloads);
    for (const w of d.workloads ?? []) out.workloads.set(w.key, w);
    for (const k of d.removedWorkloads ?? []) out.workloads.delete(k);
  }
  if (d.queues) out.queues = d.queues;
  return out;
}

function useHash(): string {
  const [hash, setHash] = useState(location.hash || '#/topology');
  useEffect(() => {
    const on = () => setHash(location.hash || '#/topology');
    addEventListener('hashchange', on);
    return () => removeEventListener('hashchange', on);
  }, []);
  return hash;
}

export function DashboardApp(props: { state: DashboardState; title: string }) {
  const [live, setLive] = useState(() => fromState(props.state));
  const [connected, setConnected] = useState(false);
  useEffect(() => {
    let seq = props.state.seq;
    const es = new EventSource(`/ui/events?since=${seq}`);
    es.addEventListener('open', () => setConnected(true));
    es.addEventListener('error', () => setConnected(false));
    es.addEventListener('state', (e) => {
      const s = JSON.parse((e as MessageEvent).data) as DashboardState;
      seq = s.seq;
      setLive(fromState(s));
    });
    es.addEventListener('delta', (e) => {
      const d = JSON.parse((e as MessageEvent).data) as DashboardDelta;
      seq = d.seq;
      setLive((l) => applyDelta(l, d));
    });
    return () => es.close();
  }, []);
  useEffect(() => {
    document.body.dataset.seq = String(live.seq);
  }, [live.seq]);
  const hash = useHash();
  const [, page, ns, name] = hash.split('/');
  const tab = page === 'workloads' && ns ? 'workload' : (page ?? 'topology');
  const nav = (id: string, label: string) =>
    html`<a href=${`#/${id}`} aria-current=${tab === id || (id === 'workloads' && tab === 'workload') ? 'page' : undefined}>${label}</a>`;
  return html`
    <header class="top">
      <h1>${props.title}</h1>
      <nav aria-label="pages">${nav('topology', 'Topology')} ${nav('queues', 'Queues')} ${nav('workloads', 'Workloads')}</nav>
      <span class=${`conn ${connected ? 'ok' : 'bad'}`} role="status">${connected ? 'live' : 'reconnecting…'}</span>
      <${ThemeToggle} />
    </header>
    <main id="main">
      ${tab === 'topology' ? html`<${TopologyPage} live=${live} />` : null}
      ${tab === 'queues' ? html`<${QueuesPage} live=${live} />` : null}
      ${tab === 'workloads' ? html`<${WorkloadsPage} live=${live} />` : null}
      ${tab === 'workload' ? html`<${WorkloadPage} live=${live} wkey=${`${decodeURIComponent(ns!)}/${decodeURIComponent(name ?? '')}`} />` : null}
    </main>
  `;
}

function Select(props: {
  label: string;
  value: string;
  options: { value: string; label: string }[];
  onChange: (v: string) => void;
  id: string;
}) {
  return html`<label for=${props.id}
    >${props.label}
    <select id=${props.id} value=${props.value} onChange=${(e: Event) => props.onChange((e.target as HTMLSelectElement).value)}>
      ${props.options.map((o) => html`<option value=${o.value}>${o.label}</option>`)}
    </select></label
  >`;
}

function TopologyPage(props: { live: Live }) {
  const { live } = props;
  const [viewIdx, setViewIdx] = useState(0);
  const [resource, setResource] = useState<string | null>(null);
  const [colourBy, setColourBy] = useState<ColourBy>('usage');
  const [selected, setSelected] = useState<string | null>(null);
  const view = live.views[Math.min(viewIdx, live.views.length - 1)];
  const res = resource ?? live.defaultResource;
  const nodes = live.nodes;
  let down = 0;
  let cordoned = 0;
  for (const n of nodes.values()) {
    if (!n.ready) down++;
    if (n.unschedulable) cordoned++;
  }
  const sel = selected ? nodes.get(selected) : undefined;
  return html`
    <section aria-labelledby="topo-h">
      <h2 id="topo-h">Topology</h2>
      <div class="controls">
        ${
          live.views.length > 1
            ? html`<${Select}
                id="view"
                label="topology"
                value=${String(viewIdx)}
                onChange=${(v: string) => setViewIdx(Number(v))}
                options=${live.views.map((v, i) => ({ value: String(i), label: v.flavor && v.flavor !== v.name ? `${v.flavor} (${v.name})` : v.name }))}
              />`
            : null
        }
        <${Select}
          id="resource"
          label="resource"
          value=${res}
          onChange=${setResource}
          options=${live.resources.map((r) => ({ value: r, label: r }))}
        />
        <${Select}
          id="colour"
          label="colour by"
          value=${colourBy}
          onChange=${(v: string) => setColourBy(v as ColourBy)}
          options=${[
            { value: 'usage', label: 'usage (heat-map)' },
            { value: 'workload', label: 'workload' },
          ]}
        />
        <span class="muted" id="topo-summary"
          >${nodes.size} nodes${down ? `, ${down} NotReady` : ''}${cordoned ? `, ${cordoned} cordoned` : ''}</span
        >
      </div>
      <${Legend} resource=${res} colourBy=${colourBy} />
      <div class="split">
        ${view ? html`<${TopologyMap} view=${view} nodes=${nodes} resource=${res} colourBy=${colourBy} selected=${selected} onSelect=${setSelected} label=${`topology ${view.name}`} />` : html`<p>No nodes.</p>`}
        ${sel ? html`<${NodeDetails} node=${sel} path=${view?.paths[sel.name]} levels=${view?.levels} resources=${live.resources} onWorkload=${() => undefined} />` : html`<p class="details muted">Choose a host (click, or arrows and Enter) to see its pods and free capacity.</p>`}
      </div>
    </section>
  `;
}

function Bar(props: { r: ClusterQueueJson['resources'][number] }) {
  const { r } = props;
  const limit = r.nominal + (r.borrowingLimit ?? Math.max(0, r.usage - r.nominal));
  const scale = Math.max(limit, r.usage, 1e-9);
  const inQuota = Math.min(r.usage, r.nominal);
  const text = `${r.flavor}/${r.resource}: ${amount(r.resource, r.usage)} used of ${amount(r.resource, r.nominal)} nominal${r.borrowed > 0 ? `, ${amount(r.resource, r.borrowed)} borrowed` : ''}${r.borrowingLimit !== null ? `, borrowing limit ${amount(r.resource, r.borrowingLimit)}` : ''}`;
  return html`<div class="bar-row">
    <span class="bar-label">${r.flavor}/${r.resource}</span>
    <div class="bar" role="img" aria-label=${text} title=${text}>
      <div class="bar-nominal" style=${`width:${(r.nominal / scale) * 100}%`}></div>
      <div class="bar-used" style=${`width:${(inQuota / scale) * 100}%`}></div>
      ${r.borrowed > 0 ? html`<div class="bar-borrowed" style=${`left:${(r.nominal / scale) * 100}%;width:${(r.borrowed / scale) * 100}%`}></div>` : null}
    </div>
    <span class="bar-text"
      >${amount(r.resource, r.usage)} /
      ${amount(r.resource, r.nominal)}${r.borrowed > 0 ? ` (+${amount(r.resource, r.borrowed)} borrowed)` : ''}</span
    >
  </div>`;
}

function QueueCard(props: { cq: ClusterQueueJson }) {
  const { cq } = props;
  return html`<article class="card" aria-labelledby=${`cq-${cq.name}`} data-cq=${cq.name}>
    <h4 id=${`cq-${cq.name}`}>${cq.name}</h4>
    <p><span class="badge">${cq.pending} pending</span> <span class="badge">${cq.admitted} admitted</span></p>
    ${cq.resources.map((r) => html`<${Bar} r=${r} />`)}
    ${
      cq.localQueues.length > 0
        ? html`<p class="muted">
            fed by
            ${cq.localQueues.map((l, i) => html`${i > 0 ? ', ' : ''}<a href=${`#/workloads?queue=${l.namespace}/${l.name}`}>${l.namespace}/${l.name}</a> (${l.pending} pending)`)}
          </p>`
        : html`<p class="muted">no LocalQueue feeds it</p>`
    }
  </article>`;
}

function QueuesPage(props: { live: Live }) {
  const q = props.live.queues;
  const loose = q.clusterQueues.filter((c) => !c.cohort);
  return html`<section aria-labelledby="q-h">
    <h2 id="q-h">Queues</h2>
    <p class="legend">
      <span class="swatch bar-nominal-swatch"></span><span>nominal quota</span><span class="swatch bar-used-swatch"></span><span>used</span
      ><span class="swatch bar-borrowed-swatch"></span><span>borrowed</span>
    </p>
    ${q.cohorts.map(
      (c) =>
        html`<section class="cohort" aria-label=${`cohort ${c.name}`}>
          <h3>cohort ${c.name}${c.parent ? html` <span class="muted">in ${c.parent}</span>` : null}</h3>
          <div class="cards">${q.clusterQueues.filter((x) => x.cohort === c.name).map((cq) => html`<${QueueCard} cq=${cq} />`)}</div>
        </section>`,
    )}
    ${
      loose.length > 0
        ? html`<section class="cohort">
            <h3>no cohort</h3>
            <div class="cards">${loose.map((cq) => html`<${QueueCard} cq=${cq} />`)}</div>
          </section>`
        : null
    }
    ${q.clusterQueues.length === 0 ? html`<p>No ClusterQueues.</p>` : null}
  </section>`;
}

type SortKey = 'namespace' | 'name' | 'kind' | 'queue' | 'status' | 'priority' | 'pods' | 'age';

function WorkloadsPage(props: { live: Live }) {
  const { live } = props;
  const initialQueue = new URLSearchParams(location.hash.split('?')[1] ?? '').get('queue') ?? '';
  const [text, setText] = useState(initialQueue);
  const [status, setStatus] = useState('');
  const [sort, setSort] = useState<{ key: SortKey; desc: boolean }>({ key: 'age', desc: false });
  const rows = useMemo(() => {
    const t = text.trim().toLowerCase();
    const list = [...live.workloads.values()].filter(
      (w) =>
        (!status || w.status === status) &&
        (!t ||
          `${w.namespace}/${w.name} ${w.kind} ${w.namespace}/${w.queue ?? ''} ${w.clusterQueue ?? ''} ${w.pendingReason ?? ''}`
            .toLowerCase()
            .includes(t)),
    );
    const val = (w: WorkloadJson): string | number => {
      switch (sort.key) {
        case 'age':
          return -(w.created ?? 0);
        case 'status':
          return STATUS_ORDER.indexOf(w.status);
        case 'priority':
          return w.priority;
        case 'pods':
          return w.pods;
        case 'queue':
          return w.queue ?? '';
        default:
          return w[sort.key];
      }
    };
    list.sort((a, b) => {
      const x = val(a);
      const y = val(b);
      const c = x < y ? -1 : x > y ? 1 : a.key < b.key ? -1 : 1;
      return sort.desc ? -c : c;
    });
    return list;
  }, [live.workloads, text, status, sort]);
  const th = (key: SortKey, label: string) =>
    html`<th scope="col" aria-sort=${sort.key === key ? (sort.desc ? 'descending' : 'ascending') : 'none'}>
      <button type="button" class="th" onClick=${() => setSort({ key, desc: sort.key === key ? !sort.desc : false })}>
        ${label}${sort.key === key ? (sort.desc ? ' ▼' : ' ▲') : ''}
      </button>
    </th>`;
  return html`<section aria-labelledby="w-h">
    <h2 id="w-h">Workloads</h2>
    <div class="controls">
      <label for="wsearch"
        >search
        <input
          id="wsearch"
          type="search"
          value=${text}
          onInput=${(e: Event) => setText((e.target as HTMLInputElement).value)}
          placeholder="name, queue, reason…"
      /></label>
      <${Select}
        id="wstatus"
        label="status"
        value=${status}
        onChange=${setStatus}
        options=${[{ value: '', label: 'any' }, ...STATUS_ORDER.map((s) => ({ value: s, label: s }))]}
      />
      <span class="muted" role="status">${rows.length} of ${live.workloads.size}</span>
    </div>
    <table class="workloads">
      <thead>
        <tr>
          ${th('namespace', 'namespace')}${th('name', 'name')}${th('kind', 'kind')}${th('queue', 'queue')}${th('status', 'status')}${th('priority', 'priority')}${th('pods', 'pods')}${th('age', 'age')}
          <th scope="col">pending reason</th>
        </tr>
      </thead>
      <tbody>
        ${rows.map(
          (w) =>
            html`<tr key=${w.key} data-workload=${w.key}>
              <td>${w.namespace}</td>
              <td><a href=${`#/workloads/${encodeURIComponent(w.namespace)}/${encodeURIComponent(w.name)}`}>${w.name}</a></td>
              <td>${w.kind}</td>
              <td>${w.queue ?? '–'}</td>
              <td><span class=${`badge st-${w.status}`}>${w.status}</span></td>
              <td>${w.priority}</td>
              <td>${w.podsRunning}/${w.pods}</td>
              <td>${age(w.created, live.now)}</td>
              <td class="reason">${w.pendingReason ?? ''}</td>
            </tr>`,
        )}
      </tbody>
    </table>
  </section>`;
}

function PodsTable(props: { pods: PodJson[] }) {
  if (props.pods.length === 0) return html`<p class="muted">No pods yet.</p>`;
  return html`<table>
    <thead>
      <tr>
        <th scope="col">rank</th>
        <th scope="col">pod</th>
        <th scope="col">pod set</th>
        <th scope="col">node</th>
        <th scope="col">phase</th>
      </tr>
    </thead>
    <tbody>
      ${props.pods.map(
        (p) =>
          html`<tr>
            <td>${p.rank ?? '–'}</td>
            <td>${p.name}</td>
            <td>${p.podSet ?? '–'}</td>
            <td>${p.node ?? '–'}</td>
            <td>${p.phase}</td>
          </tr>`,
      )}
    </tbody>
  </table>`;
}

/** Per level, how many pods one domain holds now, and the lowest level that holds them all. */
function FitTable(props: { fit: NonNullable<NonNullable<WorkloadJson['blocker']>['fit']> }) {
  const f = props.fit;
  return html`<p id="best-level">
      ${
        f.best !== null
          ? `The lowest level where one domain holds all ${f.count} pods of ${f.podSet} now: ${levelName(f.best)}.`
          : `No single domain holds all ${f.count} pods of ${f.podSet} now.`
      }
    </p>
    <table class="fit">
      <caption>
        pods of ${f.podSet} that one domain holds now (flavor ${f.flavor})
      </caption>
      <thead>
        <tr>
          <th scope="col">level</th>
          <th scope="col">in the best domain</th>
        </tr>
      </thead>
      <tbody>
        ${f.levels.map(
          (l) =>
            html`<tr>
              <th scope="row">${levelName(l.level)}</th>
              <td>${l.fit} of ${f.count}${l.fit >= f.count ? ' ✓' : ''}</td>
            </tr>`,
        )}
      </tbody>
    </table>`;
}

function WorkloadPage(props: { live: Live; wkey: string }) {
  const { live } = props;
  const w = live.workloads.get(props.wkey);
  const [selected, setSelected] = useState<string | null>(null);
  if (!w)
    return html`<section>
      <h2>Workload ${props.wkey}</h2>
      <p>Not found (deleted, or not created yet). <a href="#/workloads">All workloads</a></p>
    </section>`;
  const flavor = w.placement.find((p) => p.flavor)?.flavor;
  const view = live.views.find((v) => v.flavor === flavor) ?? live.views[0];
  const marks = rankMarks(w.podList);
  const sel = selected ? live.nodes.get(selected) : undefined;
  const res = live.defaultResource;
  return html`<section aria-labelledby="wl-h" class="workload">
    <p><a href="#/workloads">← Workloads</a></p>
    <h2 id="wl-h">${w.kind} ${w.namespace}/${w.name} <span class=${`badge st-${w.status}`}>${w.status}</span></h2>
    <dl class="facts">
      <dt>Workload</dt>
      <dd>${w.name}</dd>
      <dt>owner</dt>
      <dd>${w.owner ?? '–'}</dd>
      <dt>queue</dt>
      <dd>${w.queue ?? '–'} → ${w.clusterQueue ?? '–'}</dd>
      <dt>priority</dt>
      <dd>${w.priority}</dd>
      <dt>pods</dt>
      <dd>${w.podsRunning} running of ${w.pods}</dd>
      <dt>age</dt>
      <dd>${age(w.created, live.now)}</dd>
      <dt>gang</dt>
      <dd>${w.gang ?? '–'}</dd>
      <dt>gang group</dt>
      <dd>${w.gangGroup.length > 0 ? w.gangGroup.join(', ') : '–'}</dd>
    </dl>
    ${
      w.blocker
        ? html`<div class="blocker" role="note" aria-label="why it is pending">
            <h3>
              What stands in the way:
              ${w.blocker.kind === 'quota' ? 'quota' : w.blocker.kind === 'topology' ? 'the topology' : 'see the reason'}
            </h3>
            <p class="reason" id="pending-reason">${w.blocker.text}</p>
            ${w.blocker.fit ? html`<${FitTable} fit=${w.blocker.fit} />` : null}
            ${w.blocker.kind === 'quota' && w.clusterQueue ? html`${live.queues.clusterQueues.filter((c) => c.name === w.clusterQueue).map((cq) => html`<${QueueCard} cq=${cq} />`)}` : null}
          </div>`
        : null
    }
    <h3>Placement</h3>
    ${
      w.placement.length === 0
        ? html`<p class="muted">Not placed.</p>`
        : html`<ul>
            ${w.placement.map((p) => html`<li>${p.podSet}: ${p.count} pod(s) on flavor ${p.flavor ?? '–'}${p.domains.length > 0 ? `, ${p.domains.length} domain(s) at ${p.levels[p.levels.length - 1] ?? ''}` : ''}</li>`)}
          </ul>`
    }
    ${
      view && marks.size > 0
        ? html`<div class="split">
            <${TopologyMap}
              view=${view}
              nodes=${live.nodes}
              resource=${res}
              colourBy="usage"
              marks=${marks}
              markColour="var(--accent)"
              selected=${selected}
              onSelect=${setSelected}
              label=${`placement of ${w.name}: pods by rank`}
            />
            ${sel ? html`<${NodeDetails} node=${sel} path=${view.paths[sel.name]} levels=${view.levels} resources=${live.resources} />` : null}
          </div>`
        : null
    }
    <h3>Pods by rank</h3>
    <${PodsTable} pods=${w.podList} />
    <h3>Conditions over time</h3>
    <table>
      <thead>
        <tr>
          <th scope="col">at</th>
          <th scope="col">type</th>
          <th scope="col">status</th>
          <th scope="col">reason</th>
          <th scope="col">message</th>
        </tr>
      </thead>
      <tbody>
        ${w.history.map(
          (c) =>
            html`<tr>
              <td>${clockTime(c.at)}</td>
              <td>${c.type}</td>
              <td>${c.status}</td>
              <td>${c.reason}</td>
              <td class="reason">${c.message}</td>
            </tr>`,
        )}
      </tbody>
    </table>
    <h3>Events</h3>
    ${
      w.events.length === 0
        ? html`<p class="muted">No events.</p>`
        : html`<table>
            <thead>
              <tr>
                <th scope="col">at</th>
                <th scope="col">object</th>
                <th scope="col">type</th>
                <th scope="col">reason</th>
                <th scope="col">message</th>
                <th scope="col">count</th>
              </tr>
            </thead>
            <tbody>
              ${w.events.map(
                (e) =>
                  html`<tr>
                    <td>${clockTime(e.at)}</td>
                    <td>${e.object}</td>
                    <td>${e.type}</td>
                    <td>${e.reason}</td>
                    <td class="reason">${e.message}</td>
                    <td>${e.count}</td>
                  </tr>`,
              )}
            </tbody>
          </table>`
    }
  </section>`;
}
