// What a simulation input would silently do nothing with, told as notes: a run-duration
// that is not a Go duration (the pods run the default instead), a gang whose min-available
// is below 1 (no minimum, as `plan` notes too), and SimulationEvents that change nothing
// (the node is already in that state, is gone by then, or the event comes after --until).

import { formatWhere } from '../api/errors.ts';
import { gangsFromPods, parseGoDuration } from '../api/gang.ts';
import { TopoqueueAnnotation } from '../api/keys.ts';
import type { ParsedObject } from '../api/manifest.ts';
import type { Node } from '../api/objects.ts';
import { SimulationAction, type SimulationEvent } from '../api/simulation-event.ts';
import { DEFAULT_RUN_DURATION_S } from '../cluster/kubelet.ts';

/** Every `topoqueue.io/run-duration` in the object (its own, its pod templates') that does not parse. */
function badRunDurations(o: ParsedObject): string[] {
  const out: string[] = [];
  const stack: [unknown, string][] = [[o.object, '']];
  while (stack.length > 0) {
    const [v, path] = stack.pop()!;
    if (v === null || typeof v !== 'object' || Array.isArray(v)) continue;
    for (const [k, child] of Object.entries(v)) {
      const p = path === '' ? k : `${path}.${k}`;
      if (k === 'annotations' && child !== null && typeof child === 'object') {
        const raw = (child as Record<string, unknown>)[TopoqueueAnnotation.RunDuration];
        if (raw !== undefined && (typeof raw !== 'string' || (parseGoDuration(raw) ?? -1) < 0)) {
          out.push(
            `${formatWhere({ ...o.where, field: `${p}["${TopoqueueAnnotation.RunDuration}"]` })}: ${JSON.stringify(raw)} is not a Go duration such as "90s" or "1h30m": its pods run the default ${DEFAULT_RUN_DURATION_S}s`,
          );
        }
      } else if (k !== 'status' && child !== null && typeof child === 'object') {
        if (Array.isArray(child)) child.forEach((c, i) => stack.push([c, `${p}[${i}]`]));
        else stack.push([child, p]);
      }
    }
  }
  return out.reverse();
}

interface NodeState {
  ready: boolean;
  cordoned: boolean;
  taints: Set<string>;
  deleted: boolean;
}

/** Notes for the simulation input (see the header); `untilMs` undefined: run to idle. */
export function simulationNotes(objects: readonly ParsedObject[], untilMs?: number): string[] {
  const notes: string[] = [];
  for (const o of objects) notes.push(...badRunDurations(o));
  const pods = objects.filter((o) => o.object.kind === 'Pod').map((o) => o.object);
  const podGroups = objects.filter((o) => o.object.kind === 'PodGroup').map((o) => o.object);
  if (pods.length > 0) notes.push(...gangsFromPods(pods, podGroups).noMinimum);

  const nodes = new Map<string, NodeState>();
  for (const { object } of objects) {
    if (object.kind !== 'Node') continue;
    const n = object as Node;
    nodes.set(n.metadata.name, {
      ready: (n.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True'),
      cordoned: n.spec?.unschedulable === true,
      taints: new Set((n.spec?.taints ?? []).map((t) => `${t.key}\u0000${t.effect}`)),
      deleted: false,
    });
  }
  const events = objects
    .filter((o) => o.object.kind === 'SimulationEvent')
    .map((o, i) => ({
      o,
      e: o.object as SimulationEvent,
      atMs: Math.round((parseGoDuration((o.object as SimulationEvent).spec.at) ?? 0) * 1000),
      i,
    }))
    .sort((a, b) => a.atMs - b.atMs || a.i - b.i);
  for (const { o, e, atMs } of events) {
    const at = formatWhere(o.where);
    if (untilMs !== undefined && atMs > untilMs) {
      notes.push(`${at}: comes at ${e.spec.at}, after --until: it does nothing`);
      continue;
    }
    const n = nodes.get(e.spec.node);
    if (!n) continue; // an unknown node is an error (checkSimulationInput)
    const nothing = (why: string) => notes.push(`${at}: ${e.spec.action} on node ${e.spec.node} does nothing: ${why}`);
    if (n.deleted) {
      nothing('the node is deleted by then');
      continue;
    }
    const taintKey = `${e.spec.taint?.key ?? ''}\u0000${e.spec.taint?.effect ?? ''}`;
    switch (e.spec.action) {
      case SimulationAction.NotReady:
        if (!n.ready) nothing('it is already NotReady');
        n.ready = false;
        break;
      case SimulationAction.Ready:
        if (n.ready) nothing('it is already Ready');
        n.ready = true;
        break;
      case SimulationAction.Cordon:
        if (n.cordoned) nothing('it is already cordoned (unschedulable)');
        n.cordoned = true;
        break;
      case SimulationAction.Uncordon:
        if (!n.cordoned) nothing('it is not cordoned');
        n.cordoned = false;
        break;
      case SimulationAction.Taint:
        if (n.taints.has(taintKey)) nothing(`it already has the taint ${e.spec.taint!.key}:${e.spec.taint!.effect}`);
        n.taints.add(taintKey);
        break;
      case SimulationAction.Untaint: {
        const key = e.spec.taint?.key ?? '';
        const matching = [...n.taints].filter(
          (t) => t.startsWith(`${key}\u0000`) && (e.spec.taint?.effect === undefined || t === taintKey),
        );
        if (matching.length === 0)
          nothing(`it has no taint with key ${key}${e.spec.taint?.effect ? ` and effect ${e.spec.taint.effect}` : ''}`);
        for (const t of matching) n.taints.delete(t);
        break;
      }
      case SimulationAction.Delete:
        n.deleted = true;
        break;
    }
  }
  return notes;
}
