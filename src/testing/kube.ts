// The API server for tests: `serve` started in-process on a free port (built-in example
// data centre unless objects are given), the stock kubectl run against it with a fresh
// --cache-dir, and plain HTTP requests.

import { execFile, spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type RunningServe, startServe } from '../cli/serve.ts';

/** Is the stock kubectl on the PATH? (Tests that need it skip with this message when not.) */
export const KUBECTL_MISSING: string | false = (() => {
  const r = spawnSync('kubectl', ['version', '--client'], { encoding: 'utf8' });
  return r.error || r.status !== 0 ? 'kubectl is not on the PATH: the kubectl end-to-end tests are skipped' : false;
})();

export interface TestServer extends RunningServe {
  url: string;
  dir: string;
  kubectl(args: string[], opts?: { input?: string; timeoutMs?: number }): Promise<{ code: number; stdout: string; stderr: string }>;
}

export async function startTestServer(opts: { timeScale?: number; files?: string[] } = {}): Promise<TestServer> {
  const dir = mkdtempSync(join(tmpdir(), 'tq-serve-'));
  const running = await startServe(
    { port: 0, address: '127.0.0.1', kubeconfig: join(dir, 'kubeconfig'), filename: opts.files ?? [], timeScale: opts.timeScale ?? 1 },
    { out: () => {}, err: () => {} },
  );
  const cache = mkdtempSync(join(dir, 'cache-'));
  const kubectl = (args: string[], o: { input?: string; timeoutMs?: number } = {}) =>
    new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
      const child = execFile(
        'kubectl',
        ['--cache-dir', cache, ...args],
        { env: { ...process.env, KUBECONFIG: running.kubeconfig }, timeout: o.timeoutMs ?? 30_000, cwd: process.cwd() },
        (err, stdout, stderr) => resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr }),
      );
      if (o.input !== undefined) child.stdin!.end(o.input);
    });
  return { ...running, url: `http://127.0.0.1:${running.port}`, dir, kubectl };
}

export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  json: () => any; // eslint-disable-line @typescript-eslint/no-explicit-any
}

/** One HTTP request to the server. */
export function raw(
  url: string,
  method: string,
  path: string,
  opts: { body?: string | Buffer; headers?: Record<string, string> } = {},
): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const headers = { ...opts.headers, ...(opts.body !== undefined ? { 'Content-Length': String(Buffer.byteLength(opts.body)) } : {}) };
    const req = request(`${url}${path}`, { method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json: () => JSON.parse(text) });
      });
    });
    req.on('error', reject);
    if (opts.body !== undefined) req.end(opts.body);
    else req.end();
  });
}

/** Polls `check` until it returns a value (not undefined) or the time runs out. */
export async function eventually<T>(check: () => Promise<T | undefined> | T | undefined, what: string, timeoutMs = 10_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** A watch request: collects event lines until `stop()`. */
export function watchLines(
  url: string,
  path: string,
  headers: Record<string, string> = {},
): { lines: string[]; status: Promise<number>; ended: Promise<void>; stop: () => void } {
  const lines: string[] = [];
  let buf = '';
  let stop = () => {};
  let setStatus: (n: number) => void = () => {};
  const status = new Promise<number>((r) => (setStatus = r));
  const ended = new Promise<void>((done) => {
    const req = request(`${url}${path}`, { headers }, (res) => {
      setStatus(res.statusCode ?? 0);
      res.on('data', (c: Buffer) => {
        buf += c.toString('utf8');
        let i: number;
        while ((i = buf.indexOf('\n')) >= 0) {
          lines.push(buf.slice(0, i));
          buf = buf.slice(i + 1);
        }
      });
      res.on('end', () => done());
      res.on('close', () => done());
    });
    req.on('error', () => done());
    req.end();
    stop = () => req.destroy();
  });
  return { lines, status, ended, stop: () => stop() };
}
