import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Worker } from 'node:worker_threads';
import { settledGc } from './gc-settle.ts';

// A thread that burns CPU for `ms` once started: stands in for V8's background sweeping.
const BUSY = `const { workerData, parentPort } = require('node:worker_threads');
parentPort.postMessage('started');
const end = Date.now() + workerData;
while (Date.now() < end) {}
parentPort.postMessage('done');`;

describe('settledGc', () => {
  it('waits until the other threads of the process stop using CPU', async () => {
    const w = new Worker(BUSY, { eval: true, workerData: 300 });
    await new Promise((resolve) => w.once('message', resolve));
    let done = false;
    w.on('message', (m) => (done = m === 'done'));
    const waited = settledGc({ gc: () => {} });
    // The worker's last message is delivered once this thread is back in its event loop.
    await new Promise((resolve) => w.once('exit', resolve));
    assert.ok(waited >= 200, `waited ${waited} ms while a thread was busy for 300 ms`);
    assert.equal(done, true);
  });

  it('returns after one quiet step when nothing runs in the background', () => {
    let collected = 0;
    const waited = settledGc({ gc: () => collected++ });
    assert.equal(collected, 1);
    assert.ok(waited < 1000, `waited ${waited} ms with nothing to wait for`);
  });

  it('gives up after maxMs', async () => {
    const w = new Worker(BUSY, { eval: true, workerData: 2000 });
    await new Promise((resolve) => w.once('message', resolve));
    const waited = settledGc({ gc: () => {}, maxMs: 100 });
    await w.terminate();
    assert.ok(waited >= 100 && waited < 1000, `waited ${waited} ms with maxMs 100`);
  });
});
