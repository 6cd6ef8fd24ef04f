/// <reference lib="dom" />
// The browser entry: reads the page's embedded data (#tq-data) and mounts the live
// dashboard (`serve`) or the report viewer (`report view`).

import 'uplot/dist/uPlot.min.css';
import './style.css';
import { render } from 'preact';
import type { SimulationReport } from '../../cluster/report.ts';
import type { DashboardState } from '../types.ts';
import { applyTheme } from './common.ts';
import { DashboardApp } from './dashboard.ts';
import { html } from './html.ts';
import { ReportApp } from './report.ts';

type PageData = { mode: 'dashboard'; title: string; state: DashboardState } | { mode: 'report'; title: string; report: SimulationReport };

const data = JSON.parse(document.getElementById('tq-data')!.textContent!) as PageData;
applyTheme();
const root = document.getElementById('app')!;
root.textContent = '';
render(
  data.mode === 'dashboard'
    ? html`<${DashboardApp} state=${data.state} title=${data.title} />`
    : html`<${ReportApp} report=${data.report} title=${data.title} />`,
  root,
);
document.body.dataset.ready = 'true';
// The first frame with the page drawn: what the benchmark reads as first paint.
requestAnimationFrame(() => setTimeout(() => performance.mark('tq-first-paint')));
