// The kubelet stand-in (with the parts of the node lifecycle controller, the taint manager
// and PodGC that act on pods). Per pod, in this order:
//   1. being deleted (deletionTimestamp, held by a finalizer) and not finished -> phase
//      Failed, containers terminated (bound or not: PodGC does this for unbound pods);
//   2. bound to a node that does not exist -> deleted (PodGC): at once when the node was
//      deleted, after 40 s (PodGC's quarantine) when it was never seen;
//   3. the node has a NoExecute taint the pod does not tolerate -> deleted (taint manager,
//      event TaintManagerEviction); tolerated for tolerationSeconds -> deleted that long
//      after the taint's timeAdded (or after the kubelet first saw it);
//   4. Pending on a Ready node -> Running: startTime, conditions Initialized, Ready,
//      ContainersReady, PodScheduled (True), a running state per container;
//   5. Running: the node NotReady -> Ready=False and ContainersReady=False (reason
//      NodeNotReady) and the pod does not progress; Ready again -> Ready=True;
//      `topoqueue.io/fail-after` from the start -> Failed (containers terminated, reason
//      Error, exit code 1); `topoqueue.io/run-duration` from the start -> Succeeded
//      (reason Completed, exit code 0); whichever comes first. A pod whose end comes while
//      its node is NotReady ends when the node is Ready again.
// Run duration: the annotation (Go duration), else DEFAULT_RUN_DURATION_S (60 s); serving pods
// (owned by a LeaderWorkerSet, or `kueue.x-k8s.io/pod-group-serving: "true"`) and pods found
// already Running (input pods such as notebooks: cluster usage) without the annotation run
// until deleted. An unreadable annotation gets a Warning Event and the default.
// Pods start the moment they are bound (no image pulls, no startup probes); restartPolicy is
// not honoured (a container that ends ends its pod).

import { parseGoDuration } from '../api/gang.ts';
import { KueueRuntimeKey, TopoqueueAnnotation } from '../api/keys.ts';
import type { Condition, Node, Pod, Taint, Toleration } from '../api/objects.ts';
import { isPodReady, isTerminal } from '../api/objects.ts';
import { parseTime } from '../api/time.ts';
import type { TopoqueueConfig } from '../controllers/config.ts';
import { LeaderWorkerSetKind } from '../integrations/leaderworkerset.ts';
import { nowTimestamp } from '../runtime/clock.ts';
import type { EventRecorder } from '../runtime/events.ts';
import type { Informer } from '../runtime/informer.ts';
import type { ControllerContext, ReconcileResult, Reconciler } from '../runtime/manager.ts';
import { isNotFound, objectKey } from '../runtime/store.ts';
import type { WorkQueue } from '../runtime/work-queue.ts';
import { tolerates } from '../topology/node-match.ts';

/** How long a pod runs when it does not say (seconds). */
export const DEFAULT_RUN_DURATION_S = 60;
/** PodGC's quarantine before deleting a pod bound to a node never seen. */
export const ORPHAN_QUARANTINE_MS = 40_000;

/** Informer index: pods by spec.nodeName. */
export const BY_NODE_NAME = 'cluster/node-name';

const nodeReady = (n: Node): boolean => n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true;

interface Durations {
  runMs?: number;
  failMs?: number;
}

/** The requeue at the earlier of `ms` and the taint eviction (absolute ms), if either. */
function later(ms: number | undefined, evictAt: number | undefined, now: number): ReconcileResult | void {
  const at = Math.min(ms ?? Infinity, evictAt ?? Infinity);
  return at === Infinity ? undefined : { requeueAfterMs: Math.max(0, at - now) };
}

function setConditions(
  conditions: readonly Condition[] | undefined,
  updates: Omit<Condition, 'lastTransitionTime'>[],
  now: string,
): Condition[] {
  const out = conditions ? conditions.slice() : [];
  for (const u of updates) {
    let i = 0;
    while (i < out.length && out[i]!.type !== u.type) i++;
    const old = out[i];
    // Built key by key in the order {...u, lastTransitionTime} gives, without the empty
    // reason and message (no `delete`: a deleted key turns the object into a slow
    // dictionary for every later copy of the pod).
    const next = { type: u.type, status: u.status } as Condition;
    if (u.reason) next.reason = u.reason;
    if (u.message) next.message = u.message;
    next.lastTransitionTime = old && old.status === u.status && old.lastTransitionTime ? old.lastTransitionTime : now;
    out[i] = next;
  }
  return out;
}

export class Kubelet {
  private ctx!: ControllerContext<TopoqueueConfig>;
  private queue!: WorkQueue;
  private recorder!: EventRecorder;
  private pods!: Informer<Pod>;
  private nodes!: Informer<Node>;
  /** Precise start times (status.startTime has whole seconds), by pod uid. */
  private readonly startedAt = new Map<string, number>();
  /** Pods found Running (not started here): they run until deleted unless they say how long. */
  private readonly runningAtStart = new Set<string>();
  private readonly deletedNodes = new Set<string>();
  private readonly missingSince = new Map<string, number>();
  /** When a NoExecute taint without timeAdded was first seen, by `node\0key\0value`. */
  private readonly taintSeen = new Map<string, number>();
  private readonly warned = new Set<string>();

  setup(ctx: ControllerContext<TopoqueueConfig>, queue: WorkQueue, recorder: EventRecorder): void {
    this.ctx = ctx;
    this.queue = queue;
    this.recorder = recorder;
    this.pods = ctx.informers.for('Pod');
    this.pods.addIndex(BY_NODE_NAME, (p) => (p.spec?.nodeName ? [p.spec.nodeName] : []));
    this.nodes = ctx.informers.for('Node');
    const enqueue = (p: Pod) => {
      if (!isTerminal(p) && (p.spec?.nodeName || p.metadata.deletionTimestamp)) queue.add(objectKey(p));
    };
    this.pods.addHandler({
      add: enqueue,
      update: (_, p) => enqueue(p),
      delete: (p) => {
        this.startedAt.delete(p.metadata.uid ?? '');
        this.runningAtStart.delete(p.metadata.uid ?? '');
        this.missingSince.delete(objectKey(p));
      },
    });
    const podsOn = (n: Node) => {
      for (const p of this.pods.byIndex(BY_NODE_NAME, n.metadata.name)) enqueue(p);
    };
    this.nodes.addHandler({
      add: (n) => {
        this.deletedNodes.delete(n.metadata.name);
        podsOn(n);
      },
      update: (old, n) => {
        if (nodeReady(old) !== nodeReady(n) || JSON.stringify(old.spec?.taints ?? []) !== JSON.stringify(n.spec?.taints ?? [])) podsOn(n);
      },
      delete: (n) => {
        this.deletedNodes.add(n.metadata.name);
        podsOn(n);
      },
    });
  }

  async reconcile(key: string): Promise<ReconcileResult | void> {
    const pod = this.pods.get(key);
    if (!pod || isTerminal(pod) || typeof pod.spec !== 'object' || pod.spec === null) return;
    const now = this.ctx.clock.now();

    // 1. Being deleted: terminate.
    if (pod.metadata.deletionTimestamp) {
      await this.finish(pod, 'Failed', { exitCode: 137, reason: 'Error', message: 'the pod was deleted' });
      return;
    }
    const nodeName = pod.spec.nodeName;
    if (!nodeName) return;

    // 2. Its node is gone.
    const node = this.nodes.get(nodeName);
    if (!node) {
      const since = this.missingSince.get(key) ?? now;
      this.missingSince.set(key, since);
      if (this.deletedNodes.has(nodeName) || now - since >= ORPHAN_QUARANTINE_MS) {
        this.recorder.event(pod, 'Normal', 'PodGC', `deleting pod ${key}: node ${nodeName} does not exist`);
        await this.deletePod(pod);
        return;
      }
      return { requeueAfterMs: since + ORPHAN_QUARANTINE_MS - now };
    }
    this.missingSince.delete(key);

    // 3. NoExecute taints.
    const evictAt = this.noExecuteEviction(node, pod.spec.tolerations ?? [], now);
    if (evictAt !== undefined && evictAt <= now) {
      this.recorder.event(pod, 'Normal', 'TaintManagerEviction', `Marking for deletion Pod ${key}`);
      await this.deletePod(pod);
      return;
    }

    const ready = nodeReady(node);
    const phase = pod.status?.phase ?? 'Pending';
    const stamp = nowTimestamp(this.ctx.clock);
    const d = this.durations(pod);

    // 4. Start.
    if (phase === 'Pending') {
      if (!ready) return later(undefined, evictAt, now);
      this.startedAt.set(pod.metadata.uid!, now);
      await this.writeStatus(pod, (p) => {
        p.status = {
          ...p.status,
          phase: 'Running',
          startTime: stamp,
          conditions: setConditions(
            p.status?.conditions,
            [
              { type: 'PodReadyToStartContainers', status: 'True' },
              { type: 'Initialized', status: 'True' },
              { type: 'Ready', status: 'True' },
              { type: 'ContainersReady', status: 'True' },
              { type: 'PodScheduled', status: 'True' },
            ],
            stamp,
          ),
          containerStatuses: (p.spec.containers ?? []).map((c) => ({
            name: c.name,
            image: c.image ?? '',
            ready: true,
            started: true,
            restartCount: 0,
            state: { running: { startedAt: stamp } },
          })),
        };
      });
      return later(Math.min(now + (d.failMs ?? Infinity), now + (d.runMs ?? Infinity)), evictAt, now);
    }
    if (phase !== 'Running') return later(undefined, evictAt, now);

    // 5. Running.
    let start = this.startedAt.get(pod.metadata.uid!);
    if (start === undefined) {
      // Running before this kubelet saw it (an input pod such as a notebook): cluster usage
      // from its startTime (or now) on; without a run-duration it runs until deleted.
      start = (parseTime(pod.status?.startTime as string | undefined) ?? now / 1000) * 1000;
      this.startedAt.set(pod.metadata.uid!, start);
      this.runningAtStart.add(pod.metadata.uid!);
    }
    if (this.runningAtStart.has(pod.metadata.uid!) && pod.metadata.annotations?.[TopoqueueAnnotation.RunDuration] === undefined)
      d.runMs = undefined;
    const podReady = isPodReady(pod);
    if (!ready) {
      if (podReady) {
        const msg = `Node ${nodeName} is not ready`;
        await this.writeStatus(pod, (p) => {
          p.status = {
            ...p.status,
            conditions: setConditions(
              p.status?.conditions,
              [
                { type: 'Ready', status: 'False', reason: 'NodeNotReady', message: msg },
                { type: 'ContainersReady', status: 'False', reason: 'NodeNotReady', message: msg },
              ],
              stamp,
            ),
          };
        });
      }
      return later(undefined, evictAt, now);
    }
    const failAt = d.failMs === undefined ? Infinity : start + d.failMs;
    const endAt = d.runMs === undefined ? Infinity : start + d.runMs;
    if (failAt <= now && failAt <= endAt) {
      await this.finish(pod, 'Failed', { exitCode: 1, reason: 'Error', message: `${TopoqueueAnnotation.FailAfter} elapsed` });
      return;
    }
    if (endAt <= now) {
      await this.finish(pod, 'Succeeded', { exitCode: 0, reason: 'Completed' });
      return;
    }
    if (!podReady) {
      await this.writeStatus(pod, (p) => {
        p.status = {
          ...p.status,
          conditions: setConditions(
            p.status?.conditions,
            [
              { type: 'Ready', status: 'True' },
              { type: 'ContainersReady', status: 'True' },
            ],
            stamp,
          ),
        };
      });
    }
    return later(Math.min(failAt, endAt), evictAt, now);
  }

  /** When the node's NoExecute taints evict the pod (ms), or undefined if they never do. */
  private noExecuteEviction(node: Node, tolerations: readonly Toleration[], now: number): number | undefined {
    let at: number | undefined;
    for (const taint of node.spec?.taints ?? []) {
      if (taint.effect !== 'NoExecute') continue;
      const matching = tolerations.filter((t) => tolerates(t, taint));
      if (matching.length === 0) return now;
      if (matching.some((t) => t.tolerationSeconds === undefined || t.tolerationSeconds === null)) continue;
      const secs = Math.max(0, Math.min(...matching.map((t) => t.tolerationSeconds!)));
      const added = this.taintAdded(node.metadata.name, taint, now);
      at = Math.min(at ?? Infinity, added + secs * 1000);
    }
    return at;
  }

  private taintAdded(node: string, taint: Taint, now: number): number {
    const timeAdded = (taint as Taint & { timeAdded?: string }).timeAdded;
    const t = timeAdded ? parseTime(timeAdded) : undefined;
    if (t !== undefined) return t * 1000;
    const k = `${node}\u0000${taint.key}\u0000${taint.value ?? ''}`;
    let seen = this.taintSeen.get(k);
    if (seen === undefined) this.taintSeen.set(k, (seen = now));
    return seen;
  }

  private durations(pod: Pod): Durations {
    const a = pod.metadata.annotations ?? {};
    const serving =
      a[KueueRuntimeKey.PodGroupServing] === 'true' ||
      pod.metadata.ownerReferences?.some((r) => r.controller === true && r.kind === LeaderWorkerSetKind.kind) === true;
    const run = this.readDuration(pod, a, TopoqueueAnnotation.RunDuration);
    const fail = this.readDuration(pod, a, TopoqueueAnnotation.FailAfter);
    return {
      runMs: run ?? (serving && a[TopoqueueAnnotation.RunDuration] === undefined ? undefined : DEFAULT_RUN_DURATION_S * 1000),
      failMs: fail,
    };
  }

  /** A duration annotation in ms; undefined when absent or unreadable (a Warning event, once per pod and key). */
  private readDuration(pod: Pod, a: Record<string, string>, key: string): number | undefined {
    const raw = a[key];
    if (raw === undefined) return undefined;
    const s = parseGoDuration(raw);
    if (s !== undefined && s >= 0) return s * 1000;
    const warnKey = `${pod.metadata.uid}\u0000${key}`;
    if (!this.warned.has(warnKey)) {
      this.warned.add(warnKey);
      const fallback = key === TopoqueueAnnotation.RunDuration ? `the default ${DEFAULT_RUN_DURATION_S}s` : 'no failure';
      this.recorder.event(
        pod,
        'Warning',
        'InvalidAnnotation',
        `${key}=${JSON.stringify(raw)} is not a Go duration such as "90s" or "1h30m": using ${fallback}`,
      );
    }
    return undefined;
  }

  private async finish(
    pod: Pod,
    phase: 'Succeeded' | 'Failed',
    terminated: { exitCode: number; reason: string; message?: string },
  ): Promise<void> {
    const stamp = nowTimestamp(this.ctx.clock);
    await this.writeStatus(pod, (p) => {
      if (isTerminal(p)) return false;
      const started = (p.status?.startTime as string | undefined) ?? stamp;
      p.status = {
        ...p.status,
        phase,
        conditions: setConditions(
          p.status?.conditions,
          [
            { type: 'Ready', status: 'False', reason: 'PodCompleted' },
            { type: 'ContainersReady', status: 'False', reason: 'PodCompleted' },
          ],
          stamp,
        ),
        containerStatuses: (p.spec.containers ?? []).map((c) => ({
          name: c.name,
          image: c.image ?? '',
          ready: false,
          started: false,
          restartCount: 0,
          state: { terminated: { ...terminated, startedAt: started, finishedAt: stamp } },
        })),
      };
    });
    this.startedAt.delete(pod.metadata.uid!);
  }

  /**
   * Writes the status `change` makes to a shallow copy of the informer's pod (current: this
   * reconcile has not awaited since reading it). The resourceVersion is a precondition: a
   * conflict is retried by the manager. The store copies what it is given, so no deep copy.
   */
  private async writeStatus(pod: Pod, change: (p: Pod) => boolean | void): Promise<void> {
    const copy: Pod = { ...pod };
    if (change(copy) === false) return;
    await this.ctx.store.updateStatus(copy);
  }

  private async deletePod(pod: Pod): Promise<void> {
    try {
      await this.ctx.store.delete('Pod', pod.metadata.namespace, pod.metadata.name, { uid: pod.metadata.uid });
    } catch (e) {
      if (!isNotFound(e)) throw e;
    }
  }
}

export function kubelet(): Reconciler<TopoqueueConfig> & { readonly state: Kubelet } {
  const state = new Kubelet();
  return {
    name: 'kubelet',
    state,
    setup: (ctx, queue, recorder) => state.setup(ctx, queue, recorder),
    reconcile: (key) => state.reconcile(key),
  };
}
