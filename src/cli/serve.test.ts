// `topoqueue serve` as a user runs it: a child process that prints the kubectl line and
// the port it bound, answers kubectl, stops on SIGTERM with exit 0, and with --data-dir
// keeps what was written across a restart.

import assert from 'node:assert/strict';
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { eventually, KUBECTL_MISSING, raw } from '../testing/kube.ts';
import { runCli } from '../testing/cli.ts';

interface Child {
  proc: ChildProcess;
  out: () => string;
  err: () => string;
  port: number;
  exit: Promise<number | null>;
}

async function serve(args: string[]): Promise<Child> {
  const proc = spawn(process.execPath, ['bin/topoqueue.js', 'serve', '--port', '0', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  proc.stdout!.on('data', (c: Buffer) => (out += c.toString()));
  proc.stderr!.on('data', (c: Buffer) => (err += c.toString()));
  const exit = new Promise<number | null>((r) => proc.on('exit', (code) => r(code)));
  const port = await eventually(
    () => {
      const m = /\(port (\d+),/.exec(err);
      return m ? Number(m[1]) : undefined;
    },
    `serve to print its port (stderr so far: ${err})`,
    30_000,
  );
  return { proc, out: () => out, err: () => err, port, exit };
}

describe('topoqueue serve (the command)', () => {
  it('prints the kubectl line, serves the built-in data centre, and stops on SIGTERM with exit 0', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tq-cli-'));
    const kubeconfig = join(dir, 'kc');
    const s = await serve(['--kubeconfig', kubeconfig, '--time-scale', '60']);
    try {
      assert.equal(s.out(), `kubectl --kubeconfig ${kubeconfig} get workloads -A\n`);
      assert.match(readFileSync(kubeconfig, 'utf8'), new RegExp(`server: http://127.0.0.1:${s.port}`));
      assert.equal((await raw(`http://127.0.0.1:${s.port}`, 'GET', '/readyz')).text, 'ok');
      const nodes = (await raw(`http://127.0.0.1:${s.port}`, 'GET', '/api/v1/nodes')).json();
      assert.equal(nodes.items.length, 16);
      if (!KUBECTL_MISSING) {
        const r = await new Promise<string>((resolve) =>
          execFile('kubectl', ['--kubeconfig', kubeconfig, '--cache-dir', join(dir, 'cache'), 'get', 'localqueues', '-A'], (_e, stdout) =>
            resolve(stdout),
          ),
        );
        assert.match(r, /research\s+user-queue\s+cluster-queue/);
      }
    } finally {
      s.proc.kill('SIGTERM');
    }
    assert.equal(await s.exit, 0);
    assert.match(s.err(), /SIGTERM: stopping/);
  });

  it('keeps objects written through the API across a restart with --data-dir', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tq-cli-'));
    const args = ['--kubeconfig', join(dir, 'kc'), '--data-dir', join(dir, 'data'), '-f', 'examples/tas-basic/cluster.yaml'];
    const first = await serve(args);
    const url = `http://127.0.0.1:${first.port}`;
    const created = await raw(url, 'POST', '/api/v1/namespaces', {
      body: JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'kept' } }),
      headers: { 'Content-Type': 'application/json' },
    });
    assert.equal(created.status, 201);
    first.proc.kill('SIGTERM');
    assert.equal(await first.exit, 0);
    const second = await serve(args);
    try {
      const ns = await raw(`http://127.0.0.1:${second.port}`, 'GET', '/api/v1/namespaces/kept');
      assert.equal(ns.status, 200);
      assert.equal(ns.json().metadata.uid, created.json().metadata.uid);
      assert.match(second.err(), /object\(s\) read back from/);
    } finally {
      second.proc.kill('SIGTERM');
    }
    assert.equal(await second.exit, 0);
  });

  it('a new data directory without -f starts from the built-in data centre; a restart resumes it as it was', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tq-cli-'));
    const args = ['--kubeconfig', join(dir, 'kc'), '--data-dir', join(dir, 'data')];
    const first = await serve(args);
    const url = `http://127.0.0.1:${first.port}`;
    assert.equal((await raw(url, 'GET', '/api/v1/nodes')).json().items.length, 16);
    assert.match(first.err(), /loaded the built-in example data centre/);
    assert.equal((await raw(url, 'DELETE', '/api/v1/nodes/b1-r1-n1')).status, 200);
    first.proc.kill('SIGTERM');
    assert.equal(await first.exit, 0);
    const second = await serve(args);
    try {
      assert.equal((await raw(`http://127.0.0.1:${second.port}`, 'GET', '/api/v1/nodes')).json().items.length, 15);
      assert.doesNotMatch(second.err(), /built-in example data centre/);
    } finally {
      second.proc.kill('SIGTERM');
    }
    assert.equal(await second.exit, 0);
  });

  it('refuses bad flags with exit 2 and a message naming the flag', async () => {
    const scale = await runCli(['serve', '--time-scale', '0']);
    assert.equal(scale.code, 2);
    assert.match(scale.err, /--time-scale: must be a positive number/);
    const port = await runCli(['serve', '--port', 'x']);
    assert.equal(port.code, 2);
    assert.match(port.err, /--port: must be a port number/);
    const file = await runCli(['serve', '-f', '/nonexistent/x.yaml']);
    assert.equal(file.code, 2);
    assert.match(file.err, /\/nonexistent\/x.yaml: no such file or directory/);
  });
});

describe('serve on a data directory', () => {
  it('a restart resumes the cluster clock from the latest time the stored objects record', async () => {
    const { MemoryStore } = await import('../runtime/memory-store.ts');
    const { VirtualClock } = await import('../runtime/clock.ts');
    const { latestRecordedTime } = await import('./serve.ts');
    const clock = new VirtualClock(Date.parse('2030-01-01T00:00:00Z'));
    const store = new MemoryStore({ clock });
    await store.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'a' } });
    clock.advanceBy(3_600_000);
    await store.create({ apiVersion: 'v1', kind: 'Node', metadata: { name: 'n1' } });
    assert.equal(latestRecordedTime(store), Date.parse('2030-01-01T01:00:00Z'));
  });
});
