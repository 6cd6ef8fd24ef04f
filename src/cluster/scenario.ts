// The scenario controller: applies SimulationEvent objects (topoqueue.io/v1alpha1, see
// api/simulation-event.ts) to Nodes at their virtual time.
//   1. check the event with the API layer's schema; a bad one gets status result Failed and
//      the schema's messages (and a Warning Event), never a retry;
//   2. its time = the simulation start + spec.at, the start being the annotation
//      `topoqueue.io/simulation-start` (RFC 3339) or else the event's creationTimestamp;
//      before that, wait (requeueAfter);
//   3. apply it to the Node as it is then:
//        NotReady  Ready=False, reason NodeStatusUnknown, "Kubelet stopped posting node status."
//        Ready     Ready=True, reason KubeletReady, "kubelet is posting ready status"
//        Taint     spec.taints gets the taint (one of the same key and effect is replaced;
//                  NoExecute taints get timeAdded, as the API server sets it)
//        Untaint   removes the key's taints (of the given effect only, when one is given)
//        Cordon    spec.unschedulable = true;   Uncordon: unset
//        Delete    the Node is deleted
//      a missing Node fails the event with a message naming it;
//   4. status: applied (the time), result Applied | Failed, message; an Event on the
//      SimulationEvent says the same. An applied event is never applied again.

import type { Node, Taint } from '../api/objects.ts';
import { parseGoDuration } from '../api/gang.ts';
import { TopoqueueAnnotation } from '../api/keys.ts';
import { parseObject } from '../api/schemas.ts';
import { SimulationAction, SimulationEventResult, type SimulationEvent } from '../api/simulation-event.ts';
import { parseTime } from '../api/time.ts';
import type { TopoqueueConfig } from '../controllers/config.ts';
import { nowTimestamp } from '../runtime/clock.ts';
import type { EventRecorder } from '../runtime/events.ts';
import type { Informer } from '../runtime/informer.ts';
import type { ControllerContext, ReconcileResult, Reconciler } from '../runtime/manager.ts';
import { isNotFound, objectKey, retryOnConflict } from '../runtime/store.ts';

export const NodeReadyReason = {
  NotReady: 'NodeStatusUnknown',
  NotReadyMessage: 'Kubelet stopped posting node status.',
  Ready: 'KubeletReady',
  ReadyMessage: 'kubelet is posting ready status',
} as const;

type NodeCondition = NonNullable<NonNullable<Node['status']>['conditions']>[number] & {
  lastTransitionTime?: string;
  lastHeartbeatTime?: string;
};

const formatTaint = (t: Partial<Taint> & { key: string }): string =>
  `${t.key}${t.value ? `=${t.value}` : ''}${t.effect ? `:${t.effect}` : ''}`;

export class ScenarioController {
  private ctx!: ControllerContext<TopoqueueConfig>;
  private recorder!: EventRecorder;
  private events!: Informer<SimulationEvent>;
  /** Events applied (or failed) so far, in order: for reports and tests. */
  readonly log: { name: string; at: number; result: SimulationEventResult; message: string }[] = [];

  setup(ctx: ControllerContext<TopoqueueConfig>, queue: { add(key: string): void }, recorder: EventRecorder): void {
    this.ctx = ctx;
    this.recorder = recorder;
    this.events = ctx.informers.for('SimulationEvent');
    const enqueue = (e: SimulationEvent) => {
      if (!e.status?.applied) queue.add(objectKey(e));
    };
    this.events.addHandler({ add: enqueue, update: (_, e) => enqueue(e) });
  }

  async reconcile(key: string): Promise<ReconcileResult | void> {
    const ev = this.events.get(key);
    if (!ev || ev.status?.applied) return;
    const parsed = parseObject(ev, {});
    if (!parsed.object) return this.done(ev, SimulationEventResult.Failed, parsed.errors.map((e) => e.message).join('; '));
    const e = parsed.object as SimulationEvent;

    const startRaw = e.metadata.annotations?.[TopoqueueAnnotation.SimulationStart];
    const start = startRaw !== undefined ? parseTime(startRaw) : parseTime(e.metadata.creationTimestamp);
    if (start === undefined) {
      return this.done(
        ev,
        SimulationEventResult.Failed,
        `${TopoqueueAnnotation.SimulationStart}=${JSON.stringify(startRaw)} is not an RFC 3339 time such as "2026-01-01T00:00:00Z"`,
      );
    }
    const due = (start + parseGoDuration(e.spec.at)!) * 1000;
    const now = this.ctx.clock.now();
    if (now < due) return { requeueAfterMs: due - now };

    const node = await this.ctx.store.get('Node', undefined, e.spec.node);
    if (!node)
      return this.done(
        ev,
        SimulationEventResult.Failed,
        `Node ${JSON.stringify(e.spec.node)} not found: nothing to apply ${e.spec.action} to`,
      );
    const message = await this.apply(e);
    return this.done(
      ev,
      message === undefined ? SimulationEventResult.Failed : SimulationEventResult.Applied,
      message ?? `Node ${JSON.stringify(e.spec.node)} not found: nothing to apply ${e.spec.action} to`,
    );
  }

  /** Applies the event; returns what was done, or undefined when the Node is gone. */
  private async apply(e: SimulationEvent): Promise<string | undefined> {
    const { store } = this.ctx;
    const name = e.spec.node;
    const stamp = nowTimestamp(this.ctx.clock);
    const ready = async (status: 'True' | 'False', reason: string, message: string) => {
      const r = await retryOnConflict(
        store,
        'Node',
        undefined,
        name,
        (n) => {
          const conditions = [...((n.status?.conditions ?? []) as NodeCondition[])];
          const i = conditions.findIndex((c) => c.type === 'Ready');
          const old = i >= 0 ? conditions[i] : undefined;
          const next: NodeCondition = {
            type: 'Ready',
            status,
            reason,
            message,
            lastHeartbeatTime: stamp,
            lastTransitionTime: old?.status === status ? (old.lastTransitionTime ?? stamp) : stamp,
          };
          if (i >= 0) conditions[i] = next;
          else conditions.push(next);
          n.status = { ...n.status, conditions };
        },
        { status: true },
      );
      return r.outcome !== 'gone' ? `Node ${name}: Ready=${status} (${reason})` : undefined;
    };
    const spec = async (change: (n: Node) => void) =>
      (await retryOnConflict(store, 'Node', undefined, name, (n) => void change(n))).outcome !== 'gone';

    switch (e.spec.action) {
      case SimulationAction.NotReady:
        return ready('False', NodeReadyReason.NotReady, NodeReadyReason.NotReadyMessage);
      case SimulationAction.Ready:
        return ready('True', NodeReadyReason.Ready, NodeReadyReason.ReadyMessage);
      case SimulationAction.Taint: {
        const t = e.spec.taint!;
        const taint: Taint & { timeAdded?: string } = { key: t.key, effect: t.effect! };
        if (t.value) taint.value = t.value;
        if (taint.effect === 'NoExecute') taint.timeAdded = stamp;
        const ok = await spec((n) => {
          const taints = (n.spec?.taints ?? []).filter((x) => !(x.key === taint.key && x.effect === taint.effect));
          n.spec = { ...n.spec, taints: [...taints, taint] };
        });
        return ok ? `Node ${name}: tainted ${formatTaint(taint)}` : undefined;
      }
      case SimulationAction.Untaint: {
        const t = e.spec.taint!;
        let removed = 0;
        const ok = await spec((n) => {
          const before = n.spec?.taints ?? [];
          const taints = before.filter((x) => !(x.key === t.key && (t.effect === undefined || x.effect === t.effect)));
          removed = before.length - taints.length;
          n.spec = { ...n.spec, taints };
          if (taints.length === 0) delete n.spec.taints;
        });
        if (!ok) return undefined;
        return removed > 0
          ? `Node ${name}: removed ${removed} taint(s) ${formatTaint(t)}`
          : `Node ${name}: no taint ${formatTaint(t)} to remove`;
      }
      case SimulationAction.Cordon:
        return (await spec((n) => void (n.spec = { ...n.spec, unschedulable: true })))
          ? `Node ${name}: cordoned (spec.unschedulable=true)`
          : undefined;
      case SimulationAction.Uncordon:
        return (await spec((n) => {
          n.spec = { ...n.spec };
          delete n.spec.unschedulable;
        }))
          ? `Node ${name}: uncordoned`
          : undefined;
      case SimulationAction.Delete:
        try {
          await store.delete('Node', undefined, name);
          return `Node ${name}: deleted`;
        } catch (err) {
          if (isNotFound(err)) return undefined;
          throw err;
        }
    }
  }

  private async done(ev: SimulationEvent, result: SimulationEventResult, message: string): Promise<void> {
    const applied = nowTimestamp(this.ctx.clock);
    await retryOnConflict(
      this.ctx.store,
      'SimulationEvent',
      undefined,
      ev.metadata.name,
      (x) => {
        if (x.metadata.uid !== ev.metadata.uid || x.status?.applied) return false;
        x.status = { applied, result, message };
      },
      { status: true },
    );
    this.log.push({ name: ev.metadata.name, at: this.ctx.clock.now(), result, message });
    this.recorder.event(ev, result === SimulationEventResult.Applied ? 'Normal' : 'Warning', result, message);
  }
}

export function scenarioController(): Reconciler<TopoqueueConfig> & { readonly state: ScenarioController } {
  const state = new ScenarioController();
  return {
    name: 'scenario',
    state,
    setup: (ctx, queue, recorder) => state.setup(ctx, queue, recorder),
    reconcile: (key) => state.reconcile(key),
  };
}
