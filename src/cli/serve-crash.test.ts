// `topoqueue serve --data-dir` killed with SIGKILL at random moments of a running scenario,
// restarted on the same directory each time, then left to finish; after that the store is
// opened in this process and compared with what the clients were told.
//
// Clients (plain HTTP) create Jobs and bare Workloads into one ClusterQueue with less quota
// than the nodes have, and watch Workloads. Checked:
//   - every object whose create got a 201 is in the final store, with the uid it was given;
//   - no Workload admitted twice: in the Workload events known to be on disk (those at or
//     below the highest resourceVersion the round acknowledged: LMDB keeps a prefix of the
//     commits) and the data directory as each kill left it, an admission is never replaced
//     without being cleared, each Workload is admitted once, and the admitted quota never
//     exceeds the ClusterQueue's nominal;
//   - resourceVersions keep increasing: everything a round sees is above all the round before saw;
//   - a watch from a resourceVersion of before a restart gets 410 Expired;
//   - at the end: the invariant checker over the reopened store, one Workload per Job, every
//     Job complete and every Workload finished, and the store equal to the final lists.

import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { stringify } from 'yaml';
import { KueueLabel, TopoqueueAnnotation } from '../api/keys.ts';
import type { KObject, Workload } from '../api/objects.ts';
import { InvariantChecker, usageOf } from '../cluster/invariants.ts';
import { RealClock } from '../runtime/clock.ts';
import { openDurableStore } from '../runtime/durable-store.ts';
import { objectKey } from '../runtime/store.ts';
import { cq, flavor } from '../testing/admission.ts';
import { readyNode } from '../testing/cluster.ts';
import { batchJob, localQueue, namespace, podTemplate } from '../testing/jobs.ts';
import { eventually, raw, watchLines } from '../testing/kube.ts';
import { Rng } from '../testing/rng.ts';

const BIN = fileURLToPath(new URL('../../bin/topoqueue.js', import.meta.url));
const NS = 'crash';
const NOMINAL_MILLI_CPU = 16_000;
const WORKLOADS = `/apis/kueue.x-k8s.io/v1beta2/namespaces/${NS}/workloads`;
const JOBS = `/apis/batch/v1/namespaces/${NS}/jobs`;

function scenario(): KObject[] {
  return [
    namespace(NS),
    ...[1, 2, 3, 4].map((i) => readyNode(`n${i}`, { cpu: '8', memory: '32Gi', pods: '110' })),
    flavor('default'),
    cq('cq')
      .quota('default', { cpu: String(NOMINAL_MILLI_CPU / 1000), memory: '512Gi' })
      .build(),
    localQueue('lq', NS),
  ];
}

interface Serve {
  proc: ChildProcess;
  url: string;
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  err: () => string;
}

async function serve(dir: string, file: string): Promise<Serve> {
  const proc = spawn(
    process.execPath,
    [BIN, 'serve', '--data-dir', dir, '--port', '0', '--kubeconfig', join(dir, 'kubeconfig'), '--time-scale', '60', '-f', file],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let err = '';
  proc.stderr!.on('data', (c: Buffer) => (err += c.toString()));
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) =>
    proc.on('exit', (code, signal) => r({ code, signal })),
  );
  let exited = false;
  void exit.then(() => (exited = true));
  const url = await eventually(
    () => {
      if (exited) throw new Error(`serve exited before listening: ${err}`);
      return /serving the Kubernetes API on (http:\/\/\S+) /.exec(err)?.[1];
    },
    'serve to listen',
    60_000,
  );
  return { proc, url, exit, err: () => err };
}

/** What a client was told about one object it created: 201 with this uid, or no answer. */
interface Told {
  kind: 'Job' | 'Workload';
  name: string;
  uid?: string;
  rv?: number;
}

/** Per Workload, from the events known to be on disk. */
interface AdmissionState {
  admission?: string;
  admissions: number;
  finished: boolean;
  usage: number;
}

class AdmissionHistory {
  readonly problems: string[] = [];
  readonly state = new Map<string, AdmissionState>();

  /** A list: every item, then the quota once (the items are one instant, not a sequence). */
  applyList(items: readonly Workload[], at: string): void {
    for (const w of items) this.apply(w, false, at, false);
    this.checkQuota(at, 'the list');
  }

  /** A Workload as an event showed it. */
  apply(w: Workload, deleted: boolean, at: string, quota = true): void {
    const key = objectKey(w);
    const s = this.state.get(key) ?? { admissions: 0, finished: false, usage: 0 };
    const admission = deleted || !w.status?.admission ? undefined : JSON.stringify(w.status.admission);
    if (s.admission && admission && s.admission !== admission)
      this.problems.push(`${at}: Workload ${key} admitted again without its admission being cleared: ${s.admission} -> ${admission}`);
    if (!s.admission && admission) s.admissions++;
    s.admission = admission;
    s.finished = (w.status?.conditions ?? []).some((c) => c.type === 'Finished' && c.status === 'True');
    let cpu = 0;
    for (const [fr, n] of usageOf(w)) if (fr.endsWith('cpu')) cpu += n;
    s.usage = admission && !s.finished ? cpu : 0;
    this.state.set(key, s);
    if (quota) this.checkQuota(at, `Workload ${key}`);
  }

  private checkQuota(at: string, after: string): void {
    const used = [...this.state.values()].reduce((n, x) => n + x.usage, 0);
    if (used > NOMINAL_MILLI_CPU)
      this.problems.push(`${at}: ClusterQueue cq has ${used}m cpu admitted, over its nominal ${NOMINAL_MILLI_CPU}m (after ${after})`);
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('serve --data-dir under SIGKILL', () => {
  it('killed at random moments of a running scenario and restarted on the same directory: nothing acknowledged is lost, no Workload is admitted twice, resourceVersions keep increasing, old watches get 410', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tq-serve-crash-'));
    const data = join(dir, 'data');
    const file = join(dir, 'cluster.yaml');
    writeFileSync(
      file,
      scenario()
        .map((o) => stringify(o))
        .join('---\n'),
    );
    const rng = new Rng(11_2026);
    const told: Told[] = [];
    const history = new AdmissionHistory();
    const KILLS = 4;
    let maxSeenBefore = 0;
    let lastListRv: number | undefined;
    let created = 0;
    try {
      for (let round = 0; round <= KILLS; round++) {
        const s = await serve(data, file);
        const last = round === KILLS;
        // What this round is told, and the highest resourceVersion it saw.
        let maxSeen = 0;
        let minSeen = Infinity;
        const seen = (rv: number) => {
          maxSeen = Math.max(maxSeen, rv);
          minSeen = Math.min(minSeen, rv);
        };
        // 1. A watch from before the restart is too old.
        if (lastListRv !== undefined) {
          const old = await raw(s.url, 'GET', `${WORKLOADS}?watch=1&resourceVersion=${maxSeenBefore}`);
          const first = JSON.parse(old.text.split('\n')[0]!) as { type: string; object: { code?: number; reason?: string } };
          assert.deepEqual(
            [first.type, first.object.code, first.object.reason],
            ['ERROR', 410, 'Expired'],
            `round ${round}: a watch from ${maxSeenBefore} (before the restart): ${old.text}`,
          );
        }
        // 2. List, then watch from the list.
        const list = (await raw(s.url, 'GET', WORKLOADS)).json() as { metadata: { resourceVersion: string }; items: Workload[] };
        const listRv = Number(list.metadata.resourceVersion);
        seen(listRv);
        const watch = watchLines(s.url, `${WORKLOADS}?watch=1&resourceVersion=${listRv}`);
        // 3. Clients create Jobs and Workloads until the kill (or, in the last round, for a while).
        let dead = false;
        const acked: number[] = [];
        const client = async (c: number) => {
          for (let i = 0; !dead && (!last || i < 3); i++) {
            const job = rng.chance(0.6);
            const name = `r${round}-c${c}-${i}`;
            const obj = job
              ? batchJob(name, {
                  namespace: NS,
                  parallelism: 2,
                  completions: 2,
                  template: podTemplate({ cpu: '2', annotations: { [TopoqueueAnnotation.RunDuration]: '30s' } }),
                })
              : ({
                  apiVersion: 'kueue.x-k8s.io/v1beta2',
                  kind: 'Workload',
                  metadata: { name, namespace: NS, annotations: { [TopoqueueAnnotation.RunDuration]: '40s' } },
                  spec: {
                    queueName: 'lq',
                    podSets: [
                      {
                        name: 'main',
                        count: 1,
                        template: {
                          spec: {
                            restartPolicy: 'Never',
                            containers: [{ name: 'c', image: 'busybox', resources: { requests: { cpu: '2' } } }],
                          },
                        },
                      },
                    ],
                  },
                } as KObject);
            const t: Told = { kind: job ? 'Job' : 'Workload', name };
            told.push(t);
            try {
              const r = await raw(s.url, 'POST', job ? JOBS : WORKLOADS, {
                body: JSON.stringify(obj),
                headers: { 'Content-Type': 'application/json' },
              });
              assert.equal(r.status, 201, `create ${t.kind} ${name}: ${r.text}`);
              const o = r.json() as KObject;
              t.uid = o.metadata.uid;
              t.rv = Number(o.metadata.resourceVersion);
              acked.push(t.rv);
              seen(t.rv);
              created++;
            } catch (e) {
              if (!dead) throw e;
              // Killed before it answered: the object may or may not exist.
            }
            await sleep(rng.int(20, 120));
          }
        };
        const clients = [0, 1, 2].map((c) => client(c));
        if (!last) {
          await sleep(rng.int(300, 2500));
          dead = true;
          s.proc.kill('SIGKILL');
          assert.equal((await s.exit).signal, 'SIGKILL');
          await Promise.all(clients);
        } else {
          await Promise.all(clients);
          // Everything runs to the end: every Workload Finished.
          await eventually(
            async () => {
              const l = (await raw(s.url, 'GET', WORKLOADS)).json() as { items: Workload[] };
              return l.items.length > 0 &&
                l.items.every((w) => (w.status?.conditions ?? []).some((c) => c.type === 'Finished' && c.status === 'True'))
                ? true
                : undefined;
            },
            'every Workload to finish',
            120_000,
          );
        }
        watch.stop();
        await watch.ended;
        // 4. The Workload history known to be on disk: what the list and the events showed up
        // to the highest resourceVersion a create of this round was acknowledged with (all of
        // it after a clean stop). The list too: the controllers write before serve listens.
        const horizon = last ? Infinity : acked.length > 0 ? Math.max(...acked) : -Infinity;
        history.applyList(
          list.items.filter((w) => Number(w.metadata.resourceVersion) <= horizon),
          `round ${round} list`,
        );
        for (const line of watch.lines) {
          if (!line) continue;
          const e = JSON.parse(line) as { type: string; object: Workload };
          const rv = Number(e.object.metadata.resourceVersion);
          seen(rv);
          if (rv <= horizon) history.apply(e.object, e.type === 'DELETED', `round ${round} rv ${rv}`);
        }
        // 5. After a kill, what is really on disk: read the data directory itself. Writes the
        // clients saw past the horizon may have reached the disk too (a Workload finished then
        // touched again after the restart would otherwise keep its quota in the history).
        if (!last) {
          const disk = await openDurableStore(data, { clock: new RealClock() });
          try {
            history.applyList(disk.listSync('Workload', { namespace: NS }), `round ${round} on disk`);
          } finally {
            await disk.close();
          }
        }
        if (process.env.CRASH_VERBOSE)
          console.log(
            `round ${round}: list at ${listRv} with ${list.items.length} Workloads, ${acked.length} creates acknowledged, ${watch.lines.length} events up to ${maxSeen}, on disk up to ${horizon}`,
          );
        // 6. Everything this round saw is above everything the rounds before saw.
        if (round > 0)
          assert.ok(
            minSeen > maxSeenBefore,
            `round ${round}: resourceVersions from ${minSeen}, not above ${maxSeenBefore} seen before the restart`,
          );
        maxSeenBefore = Math.max(maxSeenBefore, maxSeen);
        lastListRv = listRv;
        if (last) {
          // The final lists, for the comparison with the store.
          const jobs = (await raw(s.url, 'GET', JOBS)).json() as { items: KObject[] };
          const workloads = (await raw(s.url, 'GET', WORKLOADS)).json() as { items: Workload[] };
          s.proc.kill('SIGTERM');
          assert.deepEqual(await s.exit, { code: 0, signal: null }, s.err());
          await verify(data, told, history, [...jobs.items, ...workloads.items]);
        }
      }
      assert.ok(created >= 20, `the clients created ${created} objects`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

async function verify(data: string, told: readonly Told[], history: AdmissionHistory, finalLists: readonly KObject[]): Promise<void> {
  const clock = new RealClock();
  const store = await openDurableStore(data, { clock });
  try {
    // Acknowledged creates are there, as they were given.
    const lost = told
      .filter((t) => t.uid !== undefined && store.getSync(t.kind, NS, t.name)?.metadata.uid !== t.uid)
      .map((t) => `${t.kind} ${t.name}`);
    assert.deepEqual(lost, [], 'acknowledged creates missing from the store (or with another uid)');
    // The store is what the clients were last told.
    const differ = finalLists.filter((o) => {
      const s = store.getSync(o.kind, NS, o.metadata.name);
      return s?.metadata.uid !== o.metadata.uid || s?.metadata.resourceVersion !== o.metadata.resourceVersion;
    });
    assert.deepEqual(
      differ.map((o) => `${o.kind} ${o.metadata.name}`),
      [],
      'objects whose stored uid or resourceVersion differs from the final list',
    );
    // No double admission, each Workload admitted once, quota respected.
    assert.deepEqual(history.problems, []);
    const workloads = store.listSync<Workload>('Workload', { namespace: NS });
    const admittedTimes = workloads
      .map((w) => [objectKey(w), history.state.get(objectKey(w))?.admissions ?? 0] as const)
      .filter(([, n]) => n !== 1);
    assert.deepEqual(admittedTimes, [], 'Workloads not admitted exactly once in the history on disk');
    // One Workload per Job, every Job complete, every Workload finished.
    const jobs = store.listSync<KObject & { status?: { conditions?: { type: string; status: string }[] } }>('Job', { namespace: NS });
    for (const j of jobs) {
      const owned = workloads.filter((w) =>
        w.metadata.ownerReferences?.some((o) => o.kind === 'Job' && o.name === j.metadata.name && o.uid === j.metadata.uid),
      );
      assert.equal(owned.length, 1, `Job ${j.metadata.name} has one Workload: ${owned.map((w) => w.metadata.name).join(', ')}`);
      assert.ok(
        j.status?.conditions?.some((c) => c.type === 'Complete' && c.status === 'True'),
        `Job ${j.metadata.name} complete: ${JSON.stringify(j.status)}`,
      );
    }
    const unfinished = workloads
      .filter((w) => !(w.status?.conditions ?? []).some((c) => c.type === 'Finished' && c.status === 'True'))
      .map(objectKey);
    assert.deepEqual(unfinished, []);
    const bare = workloads.filter((w) => !w.metadata.ownerReferences?.length).length;
    assert.equal(bare + jobs.length, workloads.length);
    assert.ok(jobs.length > 0 && bare > 0, `Jobs (${jobs.length}) and bare Workloads (${bare}) ran`);
    assert.equal(workloads.filter((w) => w.metadata.labels?.[KueueLabel.QueueName] === undefined && !w.spec.queueName).length, 0);
    // The invariants over the store as it ended.
    const checker = new InvariantChecker({ store, clock });
    await checker.start();
    checker.full();
    assert.deepEqual(checker.violations, []);
    checker.stop();
  } finally {
    await store.close();
  }
}
