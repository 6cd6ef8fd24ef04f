// The API server over HTTP, without kubectl: what kube-apiserver answers (codes, Status
// reasons and messages), watch replay and expiry, no-op writes, dry runs, the status
// subresource, and bad requests of every kind, none of which may hurt the server.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { raw, startTestServer, type TestServer, watchLines, eventually } from '../testing/kube.ts';
import { MemoryStore } from '../runtime/memory-store.ts';
import { VirtualClock } from '../runtime/clock.ts';
import { ApiServer, MAX_BODY_BYTES } from './server.ts';
import { AGGREGATED_CONTENT_TYPE } from './discovery.ts';

const JSON_CT = { 'Content-Type': 'application/json' };
const pod = (name: string, extra: Record<string, unknown> = {}) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: 'default', labels: { app: 'web' } },
  spec: { containers: [{ name: 'c', image: 'x', resources: { requests: { cpu: '1' } } }] },
  ...extra,
});

describe('API server', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer({ timeScale: 1 });
  });
  after(async () => {
    await s.stop();
  });

  it('/version says 1.32 so the kubectl dispatcher runs kubectl 1.32', async () => {
    const v = (await raw(s.url, 'GET', '/version')).json();
    assert.equal(v.major, '1');
    assert.equal(v.minor, '32');
  });

  it('serves aggregated discovery with its exact Content-Type when asked, legacy otherwise', async () => {
    const agg = await raw(s.url, 'GET', '/apis', {
      headers: { Accept: 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json' },
    });
    assert.equal(agg.headers['content-type'], AGGREGATED_CONTENT_TYPE);
    const kueue = agg.json().items.find((g: { metadata: { name: string } }) => g.metadata.name === 'kueue.x-k8s.io');
    const wl = kueue.versions[0].resources.find((r: { resource: string }) => r.resource === 'workloads');
    assert.deepEqual(wl.shortNames, ['wl']);
    assert.equal(wl.subresources[0].subresource, 'status');
    const legacy = await raw(s.url, 'GET', '/apis');
    assert.equal(legacy.json().kind, 'APIGroupList');
  });

  it('lists pods/eviction in /api/v1 with group policy (drain reads it there)', async () => {
    const list = (await raw(s.url, 'GET', '/api/v1')).json();
    assert.deepEqual(
      list.resources.find((r: { name: string }) => r.name === 'pods/eviction'),
      { name: 'pods/eviction', singularName: '', namespaced: true, group: 'policy', version: 'v1', kind: 'Eviction', verbs: ['create'] },
    );
  });

  it('serves an OpenAPI v3 document per group/version with a fieldValidation parameter on each PATCH', async () => {
    const index = (await raw(s.url, 'GET', '/openapi/v3')).json();
    const ref = index.paths['apis/kueue.x-k8s.io/v1beta2'].serverRelativeURL as string;
    assert.match(ref, /\?hash=[0-9A-F]+$/);
    const doc = (await raw(s.url, 'GET', ref)).json();
    const op = doc.paths['/apis/kueue.x-k8s.io/v1beta2/namespaces/{namespace}/workloads/{name}'].patch;
    assert.deepEqual(op['x-kubernetes-group-version-kind'], { group: 'kueue.x-k8s.io', version: 'v1beta2', kind: 'Workload' });
    assert.ok(op.parameters.some((p: { name: string; in: string }) => p.name === 'fieldValidation' && p.in === 'query'));
  });

  it('answers 404 NotFound with the resource named as kube-apiserver does', async () => {
    const r = await raw(s.url, 'GET', '/apis/kueue.x-k8s.io/v1beta2/namespaces/default/workloads/nosuch');
    assert.equal(r.status, 404);
    assert.deepEqual(r.json(), {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'workloads.kueue.x-k8s.io "nosuch" not found',
      reason: 'NotFound',
      details: { name: 'nosuch', group: 'kueue.x-k8s.io', kind: 'workloads' },
      code: 404,
    });
  });

  it('answers unknown kinds and versions with 404 "the server could not find the requested resource"', async () => {
    for (const path of [
      '/apis/kueue.x-k8s.io/v9/workloads',
      '/api/v1/foos',
      '/apis/nosuch.io/v1/things',
      '/api/v1/namespaces/default/pods/p/exec',
    ]) {
      const r = await raw(s.url, 'GET', path);
      assert.equal(r.status, 404, path);
      assert.equal(r.json().message, 'the server could not find the requested resource');
    }
  });

  it('refuses malformed JSON and YAML bodies with 400 naming the problem', async () => {
    const j = await raw(s.url, 'POST', '/api/v1/namespaces/default/pods', { body: '{"apiVersion": "v1", "kind": ', headers: JSON_CT });
    assert.equal(j.status, 400);
    assert.equal(j.json().reason, 'BadRequest');
    assert.match(j.json().message, /^the request body is not valid JSON: /);
    const y = await raw(s.url, 'POST', '/api/v1/namespaces/default/pods', {
      body: 'a: [b\n c: :',
      headers: { 'Content-Type': 'application/yaml' },
    });
    assert.equal(y.status, 400);
    assert.match(y.json().message, /^the request body is not valid YAML: /);
    const arr = await raw(s.url, 'POST', '/api/v1/namespaces/default/pods', { body: '[1,2]', headers: JSON_CT });
    assert.equal(arr.status, 400);
    assert.match(arr.json().message, /must be a JSON object .*got a list/);
  });

  it('refuses a body of another kind or version than the URL with 400', async () => {
    const r = await raw(s.url, 'POST', '/api/v1/namespaces/default/pods', {
      body: JSON.stringify({ ...pod('p'), kind: 'Node' }),
      headers: JSON_CT,
    });
    assert.equal(r.status, 400);
    assert.match(r.json().message, /kind \(Node\) do not match the expected v1, Kind=Pod/);
  });

  it('refuses unknown Content-Types with 415 listing what is accepted', async () => {
    const r = await raw(s.url, 'POST', '/api/v1/namespaces/default/pods', { body: 'x', headers: { 'Content-Type': 'text/plain' } });
    assert.equal(r.status, 415);
    assert.equal(r.json().reason, 'UnsupportedMediaType');
    assert.match(r.json().message, /accepted media types include: application\/json, application\/yaml/);
    const smp = await raw(s.url, 'PATCH', '/apis/kueue.x-k8s.io/v1beta2/clusterqueues/cluster-queue', {
      body: '{}',
      headers: { 'Content-Type': 'application/strategic-merge-patch+json' },
    });
    assert.equal(smp.status, 415, 'strategic merge patch of a custom resource');
    assert.equal(
      smp.json().message,
      'the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml',
    );
  });

  it('refuses bodies over 3 MiB with 413 like kube-apiserver', async () => {
    const r = await raw(s.url, 'POST', '/api/v1/namespaces/default/pods', {
      body: Buffer.alloc(MAX_BODY_BYTES + 1, 0x20),
      headers: JSON_CT,
    });
    assert.equal(r.status, 413);
    assert.deepEqual([r.json().reason, r.json().message], ['RequestEntityTooLarge', 'Request entity too large: limit is 3145728']);
  });

  it('refuses selectors that do not parse with 400', async () => {
    const l = await raw(s.url, 'GET', `/api/v1/pods?labelSelector=${encodeURIComponent('app in web')}`);
    assert.equal(l.status, 400);
    assert.match(l.json().message, /unable to parse requirement: found 'web', expected: '\('/);
    const f = await raw(s.url, 'GET', `/api/v1/pods?fieldSelector=${encodeURIComponent('spec.foo=bar')}`);
    assert.equal(f.status, 400);
    assert.equal(f.json().message, 'field label not supported: spec.foo');
    const k = await raw(s.url, 'GET', `/api/v1/pods?labelSelector=${encodeURIComponent('-bad=x')}`);
    assert.equal(k.status, 400);
  });

  it('selects by label (=, !=, in, notin, exists, !exists) and by field', async () => {
    for (const [name, tier] of [
      ['sel-a', 'fe'],
      ['sel-b', 'be'],
      ['sel-c', undefined],
    ] as const) {
      const p = pod(name);
      p.metadata.labels = { app: 'sel', ...(tier ? { tier } : {}) } as { app: string };
      assert.equal(
        (await raw(s.url, 'POST', '/api/v1/namespaces/default/pods', { body: JSON.stringify(p), headers: JSON_CT })).status,
        201,
      );
    }
    const names = async (q: string) =>
      (await raw(s.url, 'GET', `/api/v1/namespaces/default/pods?${q}`))
        .json()
        .items.map((i: { metadata: { name: string } }) => i.metadata.name)
        .sort();
    const ls = (sel: string) => `labelSelector=${encodeURIComponent(`app=sel,${sel}`)}`;
    assert.deepEqual(await names(ls('tier=fe')), ['sel-a']);
    assert.deepEqual(await names(ls('tier!=fe')), ['sel-b', 'sel-c']);
    assert.deepEqual(await names(ls('tier in (fe,be)')), ['sel-a', 'sel-b']);
    assert.deepEqual(await names(ls('tier notin (fe)')), ['sel-b', 'sel-c']);
    assert.deepEqual(await names(ls('tier')), ['sel-a', 'sel-b']);
    assert.deepEqual(await names(ls('!tier')), ['sel-c']);
    assert.deepEqual(await names(`${ls('tier')}&fieldSelector=${encodeURIComponent('metadata.name!=sel-a')}`), ['sel-b']);
  });

  it('replays a watch from a resourceVersion, and turns leaving the selector into DELETED', async () => {
    const created = (
      await raw(s.url, 'POST', '/api/v1/namespaces/default/pods', { body: JSON.stringify(pod('w1')), headers: JSON_CT })
    ).json();
    const rv = created.metadata.resourceVersion;
    await raw(s.url, 'PATCH', '/api/v1/namespaces/default/pods/w1', {
      body: '{"metadata":{"labels":{"app":"other"}}}',
      headers: { 'Content-Type': 'application/merge-patch+json' },
    });
    const w = watchLines(
      s.url,
      `/api/v1/namespaces/default/pods?watch=true&resourceVersion=${Number(rv) - 1}&labelSelector=app%3Dweb&fieldSelector=metadata.name%3Dw1`,
    );
    await eventually(() => (w.lines.some((l) => l.includes('"type":"DELETED"')) ? true : undefined), 'the DELETED event');
    w.stop();
    const events = w.lines.map((l) => JSON.parse(l));
    assert.equal(events[0].type, 'ADDED');
    assert.equal(events[0].object.metadata.resourceVersion, rv);
    const deleted = events.find((e) => e.type === 'DELETED');
    assert.equal(deleted.object.metadata.labels.app, 'other', 'DELETED carries the state that left the selector');
    assert.ok(events.slice(1).every((e) => e.type === 'MODIFIED' || e.type === 'DELETED'));
  });

  it('sends synthetic ADDED events for a watch without a resourceVersion, then live ones', async () => {
    const w = watchLines(s.url, '/apis/kueue.x-k8s.io/v1beta2/clusterqueues?watch=true');
    assert.equal(await w.status, 200);
    await eventually(() => (w.lines.length >= 1 ? true : undefined), 'the ADDED event');
    await raw(s.url, 'PATCH', '/apis/kueue.x-k8s.io/v1beta2/clusterqueues/cluster-queue', {
      body: '{"metadata":{"labels":{"seen":"yes"}}}',
      headers: { 'Content-Type': 'application/merge-patch+json' },
    });
    await eventually(() => (w.lines.some((l) => l.includes('"seen":"yes"')) ? true : undefined), 'the MODIFIED event');
    w.stop();
    assert.equal(JSON.parse(w.lines[0]!).type, 'ADDED');
  });

  it('does not bump the resourceVersion for a no-op patch or replace', async () => {
    const live = (await raw(s.url, 'GET', '/api/v1/nodes/b1-r1-n1')).json();
    const p = await raw(s.url, 'PATCH', '/api/v1/nodes/b1-r1-n1', {
      body: JSON.stringify({ metadata: { labels: live.metadata.labels } }),
      headers: { 'Content-Type': 'application/merge-patch+json' },
    });
    assert.equal(p.json().metadata.resourceVersion, live.metadata.resourceVersion);
    const put = await raw(s.url, 'PUT', '/api/v1/nodes/b1-r1-n1', { body: JSON.stringify(live), headers: JSON_CT });
    assert.equal(put.status, 200);
    assert.equal(put.json().metadata.resourceVersion, live.metadata.resourceVersion);
  });

  it('answers a stale resourceVersion on PUT with 409 Conflict and its exact message', async () => {
    const live = (await raw(s.url, 'GET', '/api/v1/nodes/b1-r1-n2')).json();
    await raw(s.url, 'PATCH', '/api/v1/nodes/b1-r1-n2', {
      body: '{"metadata":{"labels":{"bump":"1"}}}',
      headers: { 'Content-Type': 'application/merge-patch+json' },
    });
    const r = await raw(s.url, 'PUT', '/api/v1/nodes/b1-r1-n2', {
      body: JSON.stringify({ ...live, metadata: { ...live.metadata, labels: { x: 'y' } } }),
      headers: JSON_CT,
    });
    assert.equal(r.status, 409);
    assert.equal(
      r.json().message,
      'Operation cannot be fulfilled on nodes "b1-r1-n2": the object has been modified; please apply your changes to the latest version and try again',
    );
  });

  it('stores nothing on dryRun=All', async () => {
    const r = await raw(s.url, 'POST', '/api/v1/namespaces/default/pods?dryRun=All', {
      body: JSON.stringify(pod('dry')),
      headers: JSON_CT,
    });
    assert.equal(r.status, 201);
    assert.equal(r.json().metadata.name, 'dry');
    assert.equal((await raw(s.url, 'GET', '/api/v1/namespaces/default/pods/dry')).status, 404);
  });

  it('bumps generation on spec changes only; the status subresource changes only status', async () => {
    const base = '/apis/kueue.x-k8s.io/v1beta2/clusterqueues/cluster-queue';
    const g0 = (await raw(s.url, 'GET', base)).json().metadata.generation;
    const lbl = (
      await raw(s.url, 'PATCH', base, {
        body: '{"metadata":{"labels":{"g":"1"}}}',
        headers: { 'Content-Type': 'application/merge-patch+json' },
      })
    ).json();
    assert.equal(lbl.metadata.generation, g0);
    const spec = (
      await raw(s.url, 'PATCH', base, {
        body: '{"spec":{"cohortName":"gen-test"}}',
        headers: { 'Content-Type': 'application/merge-patch+json' },
      })
    ).json();
    assert.equal(spec.metadata.generation, g0 + 1);
    const st = await raw(s.url, 'PATCH', `${base}/status`, {
      body: '{"spec":{"cohortName":"zzz"},"status":{"x":1}}',
      headers: { 'Content-Type': 'application/merge-patch+json' },
    });
    assert.equal(st.status, 200);
    assert.equal(st.json().spec.cohortName, 'gen-test', 'spec is not written through /status');
    assert.equal(st.json().metadata.generation, g0 + 1);
  });

  it('evicts a pod through pods/eviction (201 Success, the pod deleted)', async () => {
    await raw(s.url, 'POST', '/api/v1/namespaces/default/pods', { body: JSON.stringify(pod('ev1')), headers: JSON_CT });
    const r = await raw(s.url, 'POST', '/api/v1/namespaces/default/pods/ev1/eviction', {
      body: JSON.stringify({
        kind: 'Eviction',
        apiVersion: 'policy/v1',
        metadata: { name: 'ev1', namespace: 'default' },
        deleteOptions: {},
      }),
      headers: JSON_CT,
    });
    assert.equal(r.status, 201);
    assert.deepEqual(r.json(), { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 201 });
    await eventually(
      async () => ((await raw(s.url, 'GET', '/api/v1/namespaces/default/pods/ev1')).status === 404 ? true : undefined),
      'the evicted pod gone',
    );
  });

  it('decodes a protobuf Namespace (kubectl create namespace) and refuses other protobuf bodies with the workaround', async () => {
    // k8s\0 + Unknown{typeMeta{apiVersion v1, kind Namespace}, raw Namespace{metadata{name "pb"}}}
    const str = (no: number, s: Buffer) => Buffer.concat([Buffer.from([(no << 3) | 2, s.length]), s]);
    const typeMeta = Buffer.concat([str(1, Buffer.from('v1')), str(2, Buffer.from('Namespace'))]);
    const ns = str(1, str(1, Buffer.from('pb')));
    const body = Buffer.concat([Buffer.from([0x6b, 0x38, 0x73, 0x00]), str(1, typeMeta), str(2, ns)]);
    const r = await raw(s.url, 'POST', '/api/v1/namespaces', { body, headers: { 'Content-Type': 'application/vnd.kubernetes.protobuf' } });
    assert.equal(r.status, 201, r.text);
    assert.equal(r.json().metadata.name, 'pb');
    const jobMeta = Buffer.concat([str(1, Buffer.from('batch/v1')), str(2, Buffer.from('Job'))]);
    const job = await raw(s.url, 'POST', '/apis/batch/v1/namespaces/default/jobs', {
      body: Buffer.concat([Buffer.from([0x6b, 0x38, 0x73, 0x00]), str(1, jobMeta)]),
      headers: { 'Content-Type': 'application/vnd.kubernetes.protobuf' },
    });
    assert.equal(job.status, 415);
    assert.match(job.json().message, /--dry-run=client -o yaml \| kubectl apply -f -/);
  });

  it('runs the job webhook on API writes: a queued Job is stored suspended', async () => {
    const job = {
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: { name: 'hooked', namespace: 'default', labels: { 'kueue.x-k8s.io/queue-name': 'user-queue' } },
      spec: {
        parallelism: 1,
        completions: 1,
        template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'x', resources: { requests: { cpu: '1' } } }] } },
      },
    };
    const r = await raw(s.url, 'POST', '/apis/batch/v1/namespaces/default/jobs', { body: JSON.stringify(job), headers: JSON_CT });
    assert.equal(r.status, 201, r.text);
    assert.equal(r.json().spec.suspend, true);
  });

  it('answers an invalid object with 422 Invalid, one cause per field', async () => {
    const r = await raw(s.url, 'POST', '/api/v1/namespaces/default/pods', {
      body: JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'bad' }, spec: {} }),
      headers: JSON_CT,
    });
    assert.equal(r.status, 422);
    const st = r.json();
    assert.equal(st.reason, 'Invalid');
    assert.equal(st.details.kind, 'Pod');
    assert.equal(st.details.name, 'bad');
    assert.deepEqual(st.details.causes[0], { reason: 'FieldValueRequired', message: 'Required value', field: 'spec.containers' });
    assert.equal(st.message, 'Pod "bad" is invalid: spec.containers: Required value');
  });

  it('applies server-side: 201 on create, 200 on update, fields dropped from the configuration removed; 422 without fieldManager', async () => {
    const path = '/apis/kueue.x-k8s.io/v1beta2/namespaces/default/localqueues/ssa';
    const cfg = (labels: Record<string, string>) =>
      JSON.stringify({
        apiVersion: 'kueue.x-k8s.io/v1beta2',
        kind: 'LocalQueue',
        metadata: { name: 'ssa', labels },
        spec: { clusterQueue: 'cluster-queue' },
      });
    const ct = { 'Content-Type': 'application/apply-patch+yaml' };
    const c = await raw(s.url, 'PATCH', `${path}?fieldManager=me`, { body: cfg({ a: '1', b: '2' }), headers: ct });
    assert.equal(c.status, 201, c.text);
    const u = await raw(s.url, 'PATCH', `${path}?fieldManager=me`, { body: cfg({ a: '1' }), headers: ct });
    assert.equal(u.status, 200);
    assert.deepEqual(u.json().metadata.labels, { a: '1' });
    const m = await raw(s.url, 'PATCH', path, { body: cfg({}), headers: ct });
    assert.equal(m.status, 422);
    assert.equal(m.json().message, 'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch');
  });

  it('survives garbage: random bodies, methods and paths never crash it', async () => {
    const paths = [
      '/api/v1/namespaces/default/pods',
      '/api/v1/namespaces/default/pods/x',
      '/api/v1/nodes/b1-r1-n1',
      '/apis/kueue.x-k8s.io/v1beta2/namespaces/default/workloads/x/status',
      '/apis',
      '/%zz',
      '/api/v1/namespaces/default/pods/x/eviction',
    ];
    const types = [
      'application/json',
      'application/yaml',
      'application/merge-patch+json',
      'application/json-patch+json',
      'application/strategic-merge-patch+json',
      'application/apply-patch+yaml',
      'application/vnd.kubernetes.protobuf',
    ];
    const bodies = [
      'null',
      '"x"',
      '{"metadata":[]}',
      '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"x","labels":{"a":1}}}',
      '[{"op":"remove","path":"/nope"}]',
      '\u0000\u00ff',
      'k8s\u0000\u0008\u00ff',
      '{"metadata":{"name":"other"}}',
    ];
    let n = 0;
    for (const path of paths) {
      for (const method of ['POST', 'PUT', 'PATCH', 'DELETE']) {
        for (const t of types) {
          const r = await raw(s.url, method, path, { body: bodies[n++ % bodies.length], headers: { 'Content-Type': t } });
          assert.ok(r.status >= 200 && r.status < 500, `${method} ${path} ${t}: ${r.status} ${r.text}`);
          if (r.status >= 400) assert.equal(JSON.parse(r.text || '{}').kind, 'Status', `${method} ${path} ${t}: ${r.status} ${r.text}`);
        }
      }
    }
    assert.equal((await raw(s.url, 'GET', '/healthz')).text, 'ok');
    assert.ok((await raw(s.url, 'GET', '/metrics')).text.includes('kueue_admission_attempts_total'));
  });
});

describe('API server watch history', () => {
  it('answers a watch from a resourceVersion older than the log with ERROR 410 Expired', async () => {
    const clock = new VirtualClock();
    const store = new MemoryStore({ clock });
    const server = new ApiServer({ store, clock, watchLogCapacity: 4 });
    const port = await server.listen(0);
    const url = `http://127.0.0.1:${port}`;
    try {
      for (let i = 0; i < 10; i++) await store.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: `n${i}` } });
      const w = watchLines(url, '/api/v1/namespaces?watch=true&resourceVersion=1');
      await w.ended;
      const e = JSON.parse(w.lines[0]!);
      assert.equal(e.type, 'ERROR');
      assert.equal(e.object.code, 410);
      assert.equal(e.object.reason, 'Expired');
      assert.match(e.object.message, /^too old resource version: 1 \(\d+\)$/);
      const ok = watchLines(url, '/api/v1/namespaces?watch=true&resourceVersion=9');
      await eventually(() => (ok.lines.length >= 1 ? true : undefined), 'the replayed event');
      ok.stop();
      assert.equal(JSON.parse(ok.lines[0]!).object.metadata.name, 'n9');
    } finally {
      await server.close();
    }
  });
});
