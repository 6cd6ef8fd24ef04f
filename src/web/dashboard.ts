// The dashboard's HTTP side, mounted beside the Kubernetes API on the same port (the API
// server hands it every path it does not serve):
//
//   GET /                 the page (the whole state embedded, so the first paint needs no
//                         second request); pages are client-side routes (#/topology, ...)
//   GET /ui/app.js        the browser bundle (build.ts)
//   GET /ui/state         the state as JSON (types.ts DashboardState)
//   GET /ui/events?since=N  server-sent events: `state` (everything) when the page's copy
//                         is older than N, then one `delta` per flush; a comment every 15 s
//
// Store changes are marked by the model's watches and flushed at most every 50 ms, so a
// change reaches an open page well within a second. The model starts (lists every kind and
// watches) on the first request, so a server nobody looks at pays nothing for it.

import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Clock } from '../runtime/clock.ts';
import { RealClock } from '../runtime/clock.ts';
import type { ObjectStore } from '../runtime/store.ts';
import { pageHtml, webBundle } from './build.ts';
import { DashboardModel } from './model.ts';

export interface DashboardOptions {
  store: ObjectStore;
  clock?: Clock;
  /** Shown in the page title and header (e.g. "serve", "controller"). */
  title?: string;
  /** Flush interval in ms (default 50). */
  flushMs?: number;
}

export interface Dashboard {
  /** Serves a dashboard path and returns true, or returns false for a path that is not its own. */
  handle(req: IncomingMessage, res: ServerResponse): boolean;
  readonly model: DashboardModel;
  /** Starts the model (lists every kind once, then watches); the first request does it too. */
  ready(): Promise<void>;
  close(): void;
}

const HEARTBEAT_MS = 15_000;

/** Paths the dashboard answers: `/` and everything under `/ui/`. */
export function isDashboardPath(pathname: string): boolean {
  return pathname === '/' || pathname === '/index.html' || pathname.startsWith('/ui/') || pathname === '/favicon.ico';
}

/** The handler; the model starts on the first request (or `ready()`). */
export function createDashboard(opts: DashboardOptions): Dashboard {
  const clock = opts.clock ?? new RealClock();
  const model = new DashboardModel({ store: opts.store, clock });
  let started: Promise<void> | undefined;
  const ready = () => (started ??= model.start());
  const title = opts.title ? `topoqueue ${opts.title}` : 'topoqueue';
  const clients = new Set<ServerResponse>();
  const flushMs = opts.flushMs ?? 50;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let closed = false;

  const flush = () => {
    timer = undefined;
    if (clients.size === 0) return;
    const d = model.flush();
    if (!d) return;
    const msg = `event: delta\ndata: ${JSON.stringify(d)}\n\n`;
    for (const c of clients) c.write(msg);
  };
  const stopListening = model.onChange(() => {
    if (timer === undefined && !closed && clients.size > 0) timer = setTimeout(flush, flushMs);
  });
  const heartbeat = setInterval(() => {
    for (const c of clients) c.write(': keep-alive\n\n');
  }, HEARTBEAT_MS);
  heartbeat.unref();

  const send = (res: ServerResponse, code: number, type: string, body: string, cache = 'no-store') => {
    res.writeHead(code, { 'content-type': type, 'cache-control': cache, 'content-length': Buffer.byteLength(body) });
    res.end(body);
  };
  const fail = (res: ServerResponse, e: unknown) =>
    send(res, 500, 'text/plain; charset=utf-8', `dashboard: ${e instanceof Error ? e.message : String(e)}\n`);

  const events = (req: IncomingMessage, res: ServerResponse, since: number) => {
    res.writeHead(200, {
      'content-type': 'text/event-stream',
      'cache-control': 'no-store',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
    });
    res.flushHeaders();
    // Pending marks belong to changes the page's copy may lack: flush them to everyone first.
    if (clients.size > 0) flush();
    else model.flush();
    if (since !== model.seq) res.write(`event: state\ndata: ${JSON.stringify(model.state())}\n\n`);
    else res.write(`event: hello\ndata: ${JSON.stringify({ seq: model.seq })}\n\n`);
    clients.add(res);
    const drop = () => clients.delete(res);
    req.on('close', drop);
    res.on('close', drop);
  };

  const handle = (req: IncomingMessage, res: ServerResponse): boolean => {
    const url = new URL(req.url ?? '/', 'http://dashboard');
    if (!isDashboardPath(url.pathname)) return false;
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      send(res, 405, 'text/plain; charset=utf-8', `dashboard: ${req.method} not allowed on ${url.pathname}\n`);
      return true;
    }
    ready().then(
      () => route(req, res, url),
      (e) => fail(res, e),
    );
    return true;
  };

  const route = (req: IncomingMessage, res: ServerResponse, url: URL): void => {
    if (closed) {
      send(res, 503, 'text/plain; charset=utf-8', 'dashboard: stopping\n');
      return;
    }
    switch (url.pathname) {
      case '/':
      case '/index.html':
        webBundle().then(
          (b) => {
            // The state read after the model's pending marks are flushed, so `seq` matches it.
            if (clients.size > 0) flush();
            else model.flush();
            send(
              res,
              200,
              'text/html; charset=utf-8',
              pageHtml({ title, css: b.css, data: { mode: 'dashboard', title, state: model.state() }, scriptSrc: '/ui/app.js' }),
            );
          },
          (e) => fail(res, e),
        );
        return;
      case '/ui/app.js':
        webBundle().then(
          (b) => send(res, 200, 'text/javascript; charset=utf-8', b.js, 'no-cache'),
          (e) => fail(res, e),
        );
        return;
      case '/ui/state':
        send(res, 200, 'application/json', JSON.stringify(model.state()));
        return;
      case '/ui/events':
        events(req, res, Number(url.searchParams.get('since') ?? -1));
        return;
      case '/favicon.ico':
        res.writeHead(204).end();
        return;
      default:
        send(res, 404, 'text/plain; charset=utf-8', `dashboard: no page ${url.pathname}\n`);
    }
  };

  return {
    handle,
    model,
    ready,
    close() {
      closed = true;
      if (timer !== undefined) clearTimeout(timer);
      clearInterval(heartbeat);
      stopListening();
      for (const c of clients) c.end();
      clients.clear();
      model.stop();
    },
  };
}
