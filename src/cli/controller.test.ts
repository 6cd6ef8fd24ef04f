// `topoqueue controller` in-process against the API server: Kueue's Configuration checked
// field by field, /healthz /readyz /metrics, and the webhooks over TLS (a generated
// certificate verified with its CA, or one from a cert-manager directory) answering
// AdmissionReview v1 with the patches and denials of the embedded cluster.

import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { InputError } from '../api/errors.ts';
import { parseControllerConfig } from '../kube/kueue-config.ts';
import { webhookTls } from '../kube/webhook-server.ts';
import { ApiServer } from '../kube/server.ts';
import { RealClock } from '../runtime/clock.ts';
import { MemoryStore } from '../runtime/memory-store.ts';
import { type RunningController, startController } from './controller.ts';
import { kubeconfigText } from './serve.ts';

function review(
  port: number,
  ca: string,
  path: string,
  req: object,
): Promise<{ status: number; body: { response?: { allowed: boolean; patch?: string; status?: { message: string } } } }> {
  const body = JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request: { uid: 'u1', ...req } });
  return new Promise((resolve, reject) => {
    const r = request(
      { host: '127.0.0.1', port, path, method: 'POST', ca, servername: 'localhost', headers: { 'content-type': 'application/json' } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          resolve({
            status: res.statusCode ?? 0,
            body: (res.headers['content-type'] === 'application/json' ? JSON.parse(text) : {}) as never,
          });
        });
      },
    );
    r.on('error', reject);
    r.end(body);
  });
}

const patchOf = (b: { response?: { patch?: string } }) =>
  JSON.parse(Buffer.from(b.response?.patch ?? 'W10=', 'base64').toString('utf8')) as { op: string; path: string; value?: unknown }[];

describe('Kueue Configuration for topoqueue controller', () => {
  it('reads the fields that apply, with Kueue defaults', () => {
    const c = parseControllerConfig({
      apiVersion: 'config.kueue.x-k8s.io/v1beta2',
      kind: 'Configuration',
      namespace: 'tq',
      manageJobsWithoutQueueName: true,
      waitForPodsReady: { timeout: '5m', blockAdmission: true },
      featureGates: { TASBalancedPlacement: true },
      integrations: { frameworks: ['batch/job', 'pod'] },
      labelKeysToCopy: ['team'],
      clientConnection: { qps: 20, burst: 40 },
      leaderElection: { leaderElect: true, leaseDuration: '30s' },
    });
    assert.equal(c.topoqueue.namespace, 'tq');
    assert.equal(c.topoqueue.manageJobsWithoutQueueName, true);
    assert.equal(c.topoqueue.waitForPodsReady?.timeoutSeconds, 300);
    assert.equal(c.topoqueue.gates.TASBalancedPlacement, true);
    assert.deepEqual(c.frameworks, ['batch/job', 'pod']);
    assert.deepEqual(c.topoqueue.frameworks, ['batch/job', 'pod'], 'handed to the controllers');
    assert.deepEqual(c.topoqueue.labelKeysToCopy, ['team']);
    assert.deepEqual(c.clientConnection, { qps: 20, burst: 40 });
    assert.equal(c.leaderElection.leaseDurationMs, 30_000);
    assert.equal(c.leaderElection.resourceNamespace, 'tq');
    const d = parseControllerConfig(undefined);
    assert.deepEqual(d.clientConnection, { qps: 50, burst: 100 }, "Kueue's clientConnection defaults");
    assert.equal(d.leaderElection.leaderElect, false, 'off unless asked for (--leader-elect or the config)');
    assert.equal(d.topoqueue.frameworks, undefined, 'without integrations.frameworks every framework is managed');
    assert.equal(parseControllerConfig({ featureGates: { DisableWaitForPodsReady: true } }).topoqueue.waitForPodsReady, undefined);
  });

  it("featureGates.SchedulingEquivalenceHashing: on by default (Kueue's beta default), false turns it off", () => {
    assert.equal(parseControllerConfig(undefined).topoqueue.schedulingEquivalenceHashing, true);
    const off = parseControllerConfig({ featureGates: { SchedulingEquivalenceHashing: false } });
    assert.equal(off.topoqueue.schedulingEquivalenceHashing, false);
  });

  it('refuses unknown fields and bad values, naming the field', () => {
    const bad = (raw: unknown, re: RegExp) =>
      assert.throws(
        () => parseControllerConfig(raw, 'cfg.yaml'),
        (e: unknown) => e instanceof InputError && re.test(e.message),
      );
    bad({ waitForPodReady: {} }, /cfg\.yaml.*waitForPodReady: unknown field/);
    bad({ integrations: { frameworks: ['batch/jobz'] } }, /integrations\.frameworks\[0\]: unknown framework "batch\/jobz"/);
    bad({ featureGates: { NoSuchGate: true } }, /featureGates\.NoSuchGate: unknown field/);
    bad({ leaderElection: { leaseDuration: 'soon' } }, /leaderElection\.leaseDuration: must be a positive duration/);
    bad({ leaderElection: { leaseDuration: '5s', renewDeadline: '10s' } }, /renewDeadline: must be shorter than leaseDuration/);
    bad({ clientConnection: { burst: 1.5 } }, /clientConnection\.burst: must be a positive integer/);
    bad({ kind: 'Config' }, /kind: must be Configuration/);
    bad({ labelKeysToCopy: ['bad key'] }, /labelKeysToCopy\[0\]: must be a label key/);
  });
});

describe('topoqueue controller in-process', () => {
  let api: ApiServer;
  let running: RunningController;
  let memory: MemoryStore;
  before(async () => {
    const clock = new RealClock();
    memory = new MemoryStore({ clock });
    api = new ApiServer({ store: memory, clock });
    const port = await api.listen(0);
    const dir = mkdtempSync(join(tmpdir(), 'tq-ctl-'));
    writeFileSync(join(dir, 'kubeconfig'), kubeconfigText(`http://127.0.0.1:${port}`));
    running = await startController(
      { kubeconfig: join(dir, 'kubeconfig'), metricsPort: 0, webhookPort: 0, logFormat: 'json' },
      { err: () => {} },
    );
  });
  after(async () => {
    await running.stop();
    await api.close();
  });

  it('serves /healthz, /readyz once the caches synced, and /metrics', async () => {
    const get = (p: string) => fetch(`http://127.0.0.1:${running.metricsPort}${p}`);
    assert.equal((await get('/healthz')).status, 200);
    for (let i = 0; i < 50 && (await get('/readyz')).status !== 200; i++) await new Promise((r) => setTimeout(r, 50));
    assert.equal((await get('/readyz')).status, 200);
    assert.match(await (await get('/metrics')).text(), /kueue_admission_attempts_total/);
  });

  it('serves the dashboard on the metrics port, fed by the cluster it watches', async () => {
    await memory.create({ apiVersion: 'v1', kind: 'Node', metadata: { name: 'dash-node' }, status: { allocatable: { cpu: '4' } } });
    const page = await fetch(`http://127.0.0.1:${running.metricsPort}/`);
    assert.equal(page.status, 200);
    assert.match(await page.text(), /topoqueue controller/);
    let state = '';
    for (let i = 0; i < 50 && !state.includes('dash-node'); i++) {
      state = await (await fetch(`http://127.0.0.1:${running.metricsPort}/ui/state`)).text();
      if (!state.includes('dash-node')) await new Promise((r) => setTimeout(r, 50));
    }
    assert.match(state, /dash-node/);
  });

  it('answers AdmissionReview over TLS with a generated certificate: a Job is suspended, a Pod of a queue gated', async () => {
    assert.equal(running.tls.generated, true);
    const job = {
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: { name: 'j', namespace: 'default', labels: { 'kueue.x-k8s.io/queue-name': 'q' } },
      spec: { parallelism: 1, template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'x' }] } } },
    };
    const r = await review(running.webhookPort, running.tls.ca, '/mutate/mjob.kb.io', {
      kind: { group: 'batch', version: 'v1', kind: 'Job' },
      operation: 'CREATE',
      object: job,
    });
    assert.equal(r.status, 200);
    assert.equal(r.body.response?.allowed, true);
    assert.deepEqual(
      patchOf(r.body).find((o) => o.path === '/spec/suspend'),
      { op: 'add', path: '/spec/suspend', value: true },
    );
    const pod = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'p', namespace: 'default', labels: { 'kueue.x-k8s.io/queue-name': 'q' } },
      spec: { containers: [{ name: 'c', image: 'x' }] },
    };
    const p = await review(running.webhookPort, running.tls.ca, '/mutate/mpod.kb.io', {
      kind: { group: '', version: 'v1', kind: 'Pod' },
      operation: 'CREATE',
      object: pod,
    });
    const gates = patchOf(p.body).find((o) => o.path === '/spec/schedulingGates');
    assert.deepEqual(
      gates?.value,
      [{ name: 'kueue.x-k8s.io/admission' }, { name: 'kueue.x-k8s.io/topology' }],
      JSON.stringify(patchOf(p.body)),
    );
    assert.ok(
      patchOf(p.body).some((o) => o.path === '/metadata/finalizers'),
      'the managed finalizer',
    );
  });

  it('denies an invalid Topology with the parser message, and 404s an unknown path', async () => {
    const topology = { apiVersion: 'kueue.x-k8s.io/v1beta2', kind: 'Topology', metadata: { name: 't' }, spec: { levels: [] } };
    const r = await review(running.webhookPort, running.tls.ca, '/validate/vtopology.kb.io', { operation: 'CREATE', object: topology });
    assert.equal(r.body.response?.allowed, false);
    assert.match(r.body.response?.status?.message ?? '', /spec\.levels/);
    const none = await review(running.webhookPort, running.tls.ca, '/validate/nothing', { operation: 'CREATE', object: topology });
    assert.equal(none.status, 404);
  });

  it('reads a certificate from a cert-manager directory', async () => {
    const made = await webhookTls({ service: 's', namespace: 'n' });
    const dir = mkdtempSync(join(tmpdir(), 'tq-certs-'));
    writeFileSync(join(dir, 'tls.crt'), made.cert);
    writeFileSync(join(dir, 'tls.key'), made.key);
    writeFileSync(join(dir, 'ca.crt'), made.ca);
    const read = await webhookTls({ certDir: dir, service: 's', namespace: 'n' });
    assert.deepEqual(read, { ...made, generated: false });
    await assert.rejects(webhookTls({ certDir: join(dir, 'missing'), service: 's', namespace: 'n' }), /cannot read .*tls\.crt/);
  });
});
