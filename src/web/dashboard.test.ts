import assert from 'node:assert/strict';
import { createServer, get, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { Node } from '../api/objects.ts';
import { RealClock } from '../runtime/clock.ts';
import { MemoryStore } from '../runtime/memory-store.ts';
import { mutable } from '../runtime/store.ts';
import { node } from '../testing/builders.ts';
import { createDashboard, type Dashboard, isDashboardPath } from './dashboard.ts';
import type { DashboardDelta, DashboardState } from './types.ts';

/** The first `count` server-sent events of a stream, as [event, data]. */
function events(url: string, count: number): Promise<[string, unknown][]> {
  return new Promise((resolve, reject) => {
    const out: [string, unknown][] = [];
    const req = get(url, (res) => {
      let buf = '';
      res.on('data', (c: Buffer) => {
        buf += c.toString();
        for (let i = buf.indexOf('\n\n'); i >= 0; i = buf.indexOf('\n\n')) {
          const block = buf.slice(0, i);
          buf = buf.slice(i + 2);
          const ev = /^event: (.*)$/m.exec(block)?.[1];
          const data = /^data: (.*)$/m.exec(block)?.[1];
          if (ev && data) out.push([ev, JSON.parse(data)]);
          if (out.length === count) {
            req.destroy();
            resolve(out);
          }
        }
      });
    });
    req.on('error', (e) => (out.length === count ? undefined : reject(e)));
  });
}

describe('dashboard over HTTP', () => {
  const store = new MemoryStore({ clock: new RealClock() });
  let dash: Dashboard;
  let server: Server;
  let url = '';
  before(async () => {
    store.createSync(node('n1').gpu(8).build());
    dash = createDashboard({ store, title: 'serve', flushMs: 10 });
    server = createServer((req, res) => {
      if (!dash.handle(req, res)) res.writeHead(418).end();
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async () => {
    dash.close();
    await new Promise<void>((r) => server.close(() => r()));
  });

  it('answers / and /ui/ paths only, GET only', async () => {
    assert.equal(isDashboardPath('/'), true);
    assert.equal(isDashboardPath('/ui/state'), true);
    assert.equal(isDashboardPath('/api/v1/pods'), false);
    assert.equal((await fetch(`${url}/apis`)).status, 418, 'left to the API server');
    assert.equal((await fetch(`${url}/ui/nope`)).status, 404);
    const post = await fetch(`${url}/`, { method: 'POST', body: 'x' });
    assert.equal(post.status, 405);
    assert.equal(await post.text(), 'dashboard: POST not allowed on /\n');
  });

  it('the page embeds the whole state and loads the bundle from /ui/app.js', async () => {
    const html = await (await fetch(`${url}/`)).text();
    assert.match(html, /<title>topoqueue serve<\/title>/);
    assert.match(html, /<script src="\/ui\/app.js"><\/script>/);
    const data = JSON.parse(/id="tq-data">(.*?)<\/script>/s.exec(html)![1]!) as { mode: string; state: DashboardState };
    assert.equal(data.mode, 'dashboard');
    assert.deepEqual(
      data.state.nodes.map((n) => n.name),
      ['n1'],
    );
    const js = await fetch(`${url}/ui/app.js`);
    assert.equal(js.headers.get('content-type'), 'text/javascript; charset=utf-8');
    assert.ok((await js.text()).length > 10_000);
  });

  it('events: the whole state to a page whose copy is older, then one delta per change', async () => {
    const state = (await (await fetch(`${url}/ui/state`)).json()) as DashboardState;
    const stale = events(`${url}/ui/events?since=-1`, 2);
    setTimeout(() => {
      const n = mutable(store.getSync<Node>('Node', undefined, 'n1')!);
      n.spec = { ...n.spec, unschedulable: true };
      store.updateSync(n);
    }, 100);
    const [[first, s], [second, d]] = await stale;
    assert.equal(first, 'state');
    assert.equal((s as DashboardState).seq, state.seq);
    assert.equal(second, 'delta');
    assert.equal((d as DashboardDelta).seq, state.seq + 1);
    assert.deepEqual(
      (d as DashboardDelta).nodes!.map((n) => [n.name, n.unschedulable]),
      [['n1', true]],
    );
    const current = await events(`${url}/ui/events?since=${state.seq + 1}`, 1);
    assert.deepEqual(current, [['hello', { seq: state.seq + 1 }]]);
  });
});
