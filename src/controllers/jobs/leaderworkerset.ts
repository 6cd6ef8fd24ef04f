// LeaderWorkerSet (leaderworkerset.x-k8s.io/v1): pod-gated, one Workload per group index
// (integrations/leaderworkerset.ts). The embedded cluster creates the pods directly: leader
// `<lws>-<group>` (worker index 0), workers `<lws>-<group>-<w>`, labelled with the LWS
// name, group index and worker index. A pod's PodSet: `leader` for worker index 0 and
// `worker` for the rest when the LWS has a leader template, else `main`. Serving: an LWS
// never finishes. The webhook puts `kueue.x-k8s.io/pod-index-offset: "1"` on the worker
// template when there is a leader and no PodSet group (Kueue's LWS webhook), so worker pods
// carry it for the TopologyUngater's ranks.

import { KueueAnnotation, PodIndexLabel } from '../../api/keys.ts';
import type { KObject, Pod, PodTemplateSpec } from '../../api/objects.ts';
import { LeaderWorkerSetKind, LeaderWorkerSetPodSet, leaderWorkerSetIntegration, leaderWorkerSetWorkloadName } from '../../integrations/leaderworkerset.ts';
import { type PodGatedAdapter, isRecord, readSpec, specOf, templateMeta } from './adapter.ts';

export const LWSLabel = {
  Name: 'leaderworkerset.sigs.k8s.io/name',
  GroupIndex: 'leaderworkerset.sigs.k8s.io/group-index',
  WorkerIndex: PodIndexLabel.LWSWorkerIndex,
} as const;

const index = (v: string | undefined): number | undefined => (v !== undefined && /^(0|[1-9][0-9]*)$/.test(v) ? Number(v) : undefined);

function lwt(lws: KObject): Record<string, unknown> | undefined {
  const t = readSpec(lws).leaderWorkerTemplate;
  return isRecord(t) ? t : undefined;
}

/** Group and worker index of a pod: its labels, else its name (`<lws>-<group>[-<worker>]`). */
export function lwsPodIndexes(lws: KObject, pod: Pod): { group: number; worker: number } | undefined {
  const labels = pod.metadata.labels ?? {};
  let group = index(labels[LWSLabel.GroupIndex]);
  let worker = index(labels[LWSLabel.WorkerIndex]);
  const prefix = `${lws.metadata.name}-`;
  if ((group === undefined || worker === undefined) && pod.metadata.name.startsWith(prefix)) {
    const parts = pod.metadata.name.slice(prefix.length).split('-');
    if (parts.length <= 2) {
      group ??= index(parts[0]);
      worker ??= parts.length === 1 ? 0 : index(parts[1]);
    }
  }
  return group === undefined || worker === undefined ? undefined : { group, worker };
}

export const leaderWorkerSetAdapter: PodGatedAdapter = {
  mode: 'pods',
  kind: LeaderWorkerSetKind.kind,
  apiVersion: LeaderWorkerSetKind.apiVersion,
  hookSuffix: 'leaderworkerset.kb.io',
  integration: leaderWorkerSetIntegration,
  placePod(lws, pod) {
    const at = lwsPodIndexes(lws, pod);
    if (!at) return undefined;
    const leader = lwt(lws)?.leaderTemplate;
    const hasLeader = leader !== undefined && leader !== null;
    const podSet = !hasLeader ? LeaderWorkerSetPodSet.Main : at.worker === 0 ? LeaderWorkerSetPodSet.Leader : LeaderWorkerSetPodSet.Worker;
    return { workload: leaderWorkerSetWorkloadName(lws, at.group), podSet };
  },
  defaultOnCreate(lws) {
    const t = specOf(lws).leaderWorkerTemplate;
    if (!isRecord(t) || t.leaderTemplate === undefined || t.leaderTemplate === null || !isRecord(t.workerTemplate)) return;
    const meta = templateMeta(t.workerTemplate as unknown as PodTemplateSpec);
    if (meta.annotations?.[KueueAnnotation.PodSetGroupName] !== undefined) return;
    meta.annotations = { ...meta.annotations, [KueueAnnotation.PodIndexOffset]: '1' };
  },
  finished: () => undefined,
};
