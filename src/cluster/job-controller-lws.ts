// LeaderWorkerSet (leaderworkerset.x-k8s.io/v1), pods made directly (the real controller goes
// through a StatefulSet per group; the embedded cluster has none):
//   1. per group g < replicas (default 1): leader `<lws>-<g>` from the leaderTemplate (the
//      workerTemplate when there is none) and workers `<lws>-<g>-<w>`, w = 1..size-1 (size
//      default 1), owned (controller) by the LWS, labels `leaderworkerset.sigs.k8s.io/name`,
//      `group-index`, `worker-index` (0 for the leader), annotations
//      `leaderworkerset.sigs.k8s.io/size` and, on workers, `leader-name`;
//   2. serving: a missing pod is created again, a finished one (Succeeded or Failed) is
//      deleted so that it is created again: an LWS never finishes. The kubelet stand-in runs
//      LWS pods until they are deleted unless they name a run duration (docs/cluster.md);
//   3. pods of groups or worker indexes beyond the spec are deleted (scale down);
//   4. status: replicas, readyReplicas (groups whose pods all exist and are Ready), condition
//      Available.
// Not modelled: rolling updates, startup policy, RecreateGroupOnPodRestart, subGroupPolicy.

import type { Condition, KObject, PodTemplateSpec } from '../api/objects.ts';
import { LWSLabel, leaderWorkerSetFramework } from '../integrations/leaderworkerset.ts';
import { nowTimestamp } from '../runtime/clock.ts';
import { StandIn, createPod, deleteQuietly, isDeleting, podFromTemplate, withCondition, writeStatus } from './job-controller-common.ts';
import { isPodReady, isTerminal } from '../api/objects.ts';

export const LWSAnnotation = {
  Size: 'leaderworkerset.sigs.k8s.io/size',
  LeaderName: 'leaderworkerset.sigs.k8s.io/leader-name',
} as const;

export interface LeaderWorkerSet extends KObject {
  kind: 'LeaderWorkerSet';
  spec: {
    replicas?: number;
    leaderWorkerTemplate: { size?: number; leaderTemplate?: PodTemplateSpec; workerTemplate: PodTemplateSpec };
    [k: string]: unknown;
  };
  status?: { replicas?: number; readyReplicas?: number; conditions?: Condition[]; [k: string]: unknown };
}

const count = (v: unknown, dflt: number, min: number): number => (typeof v === 'number' && Number.isSafeInteger(v) && v >= min ? v : dflt);

export const lwsPodName = (lws: string, group: number, worker: number): string =>
  worker === 0 ? `${lws}-${group}` : `${lws}-${group}-${worker}`;

export class LeaderWorkerSetController extends StandIn<LeaderWorkerSet> {
  readonly framework = leaderWorkerSetFramework;

  protected async sync(lws: LeaderWorkerSet): Promise<void> {
    const name = lws.metadata.name;
    const { ctx } = this.env;
    const replicas = count(lws.spec.replicas, 1, 0);
    const lwt = lws.spec.leaderWorkerTemplate;
    const size = count(lwt.size, 1, 1);
    const pods = this.env.podsOf(lws.metadata.uid);
    const byName = new Map(pods.map((p) => [p.metadata.name, p]));
    const wanted = new Set<string>();

    for (let g = 0; g < replicas; g++) {
      for (let w = 0; w < size; w++) {
        const podName = lwsPodName(name, g, w);
        wanted.add(podName);
        const have = byName.get(podName);
        if (have) {
          if (isTerminal(have)) await deleteQuietly(ctx, have);
          continue;
        }
        const template = w === 0 ? (lwt.leaderTemplate ?? lwt.workerTemplate) : lwt.workerTemplate;
        const annotations: Record<string, string> = { [LWSAnnotation.Size]: String(size) };
        if (w > 0) annotations[LWSAnnotation.LeaderName] = lwsPodName(name, g, 0);
        const pod = podFromTemplate(lws, template, {
          name: podName,
          labels: { [LWSLabel.Name]: name, [LWSLabel.GroupIndex]: String(g), [LWSLabel.WorkerIndex]: String(w) },
          annotations,
        });
        await createPod(this.env, lws, pod);
      }
    }
    for (const p of pods) if (!wanted.has(p.metadata.name)) await deleteQuietly(ctx, p);

    const readyByGroup = new Map<string, number>();
    for (const p of this.env.podsOf(lws.metadata.uid)) {
      if (!isDeleting(p) && isPodReady(p) && wanted.has(p.metadata.name)) {
        const g = p.metadata.labels?.[LWSLabel.GroupIndex] ?? '';
        readyByGroup.set(g, (readyByGroup.get(g) ?? 0) + 1);
      }
    }
    const readyReplicas = [...readyByGroup.values()].filter((n) => n === size).length;
    const status = structuredClone(lws.status ?? {});
    status.replicas = replicas;
    status.readyReplicas = readyReplicas;
    const available = readyReplicas === replicas;
    status.conditions = withCondition(
      status.conditions,
      available
        ? { type: 'Available', status: 'True', reason: 'AllGroupsReady', message: 'All replicas are ready' }
        : { type: 'Available', status: 'False', reason: 'GroupsNotReady', message: `${readyReplicas} of ${replicas} groups are ready` },
      nowTimestamp(ctx.clock),
    );
    await writeStatus(ctx, lws, status);
  }
}
