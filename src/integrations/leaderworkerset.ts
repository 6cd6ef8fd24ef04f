// LeaderWorkerSet (leaderworkerset.x-k8s.io/v1), as Kueue's LWS integration
// (pkg/controller/jobs/leaderworkerset) and KEP-2724 "LeaderWorkerSet". Its Workloads:
//   - one Workload per group (replica) i = 0..replicas-1 (replicas default 1), named
//     `leaderworkerset-<name>-<i>-<hash>` where the hash is taken over the owner name
//     `<name>-<i>` and the LWS uid (GetWorkloadName passes `<name>-<i>` as the owner name);
//   - with a leaderTemplate: PodSets `leader` (count 1) and `worker` (size-1); without one,
//     `main` (size); size defaults to 1;
//   - worker/main PodSets use the pod index label `leaderworkerset.sigs.k8s.io/worker-index`,
//     the leader none;
//   - with a leader and no `kueue.x-k8s.io/podset-group-name` on the worker template, the
//     worker template gets `kueue.x-k8s.io/pod-index-offset: "1"` (worker indexes start at
//     1; Kueue's webhook sets it, overwriting any value). With a group name, offsets are
//     the PodSet group's business;
//   - the LWS pods run as a pod group with this prebuilt Workload, so the Workload carries
//     `kueue.x-k8s.io/is-group-workload: "true"`.

import { JobFrameworkApiVersion } from '../api/api-versions.ts';
import { InputError } from '../api/errors.ts';
import { KueueAnnotation, PodIndexLabel } from '../api/keys.ts';
import type { KObject, Pod, PodSet, PodTemplateSpec, StringMap } from '../api/objects.ts';
import { topologyRequestFromAnnotations } from '../api/topology-request.ts';
import { defineFramework, readSpec, specOf, templateMeta } from './framework.ts';
import type { IntegrationContext, ToWorkloadsResult } from './integration.ts';
import {
  IS_GROUP_WORKLOAD_ANNOTATION,
  ownedWorkload,
  ownerIdentity,
  podSetTemplate,
  readInt,
  readPodTemplate,
  whereIn,
  workloadNameForOwner,
} from './workload-name.ts';
import { isRecord } from '../api/values.ts';

export const LeaderWorkerSetKind = { apiVersion: JobFrameworkApiVersion.LeaderWorkerSet, kind: 'LeaderWorkerSet' } as const;

export const LeaderWorkerSetPodSet = { Leader: 'leader', Worker: 'worker', Main: 'main' } as const;

/** Workload name of LWS group `index` (GetWorkloadName in Kueue's LWS integration). */
export function leaderWorkerSetWorkloadName(lws: KObject, index: number): string {
  const id = ownerIdentity(lws);
  return workloadNameForOwner({ ...id, name: `${id.name}-${index}` });
}

export function leaderWorkerSetToWorkloads(obj: KObject, ctx: IntegrationContext): ToWorkloadsResult {
  const errors: InputError[] = [];
  const where = whereIn(ctx.where, obj);
  const spec = (obj as { spec?: unknown }).spec;
  const lwt = isRecord(spec) ? spec.leaderWorkerTemplate : undefined;
  if (!isRecord(spec) || !isRecord(lwt)) {
    errors.push(
      new InputError(
        { ...where, field: 'spec.leaderWorkerTemplate' },
        'a LeaderWorkerSet needs spec.leaderWorkerTemplate with a workerTemplate',
      ),
    );
    return { workloads: [], errors };
  }
  const replicas = readInt(spec.replicas, 1, 0, { ...where, field: 'spec.replicas' }, errors);
  const size = readInt(lwt.size, 1, 1, { ...where, field: 'spec.leaderWorkerTemplate.size' }, errors);
  const worker = readPodTemplate(lwt.workerTemplate, { ...where, field: 'spec.leaderWorkerTemplate.workerTemplate' }, errors);
  const leader =
    lwt.leaderTemplate === undefined || lwt.leaderTemplate === null
      ? undefined
      : readPodTemplate(lwt.leaderTemplate, { ...where, field: 'spec.leaderWorkerTemplate.leaderTemplate' }, errors);
  if (worker === undefined || errors.length > 0) return { workloads: [], errors };

  const podSet = (name: string, t: PodTemplateSpec, count: number, field: string, podIndexLabel?: string, extra?: StringMap) => {
    const template = podSetTemplate(t, extra);
    const tr = topologyRequestFromAnnotations(template.metadata?.annotations, count, podIndexLabel ? { podIndexLabel } : {}, {
      ...where,
      field,
    });
    errors.push(...tr.errors);
    const ps: PodSet = { name, template, count };
    if (tr.request) ps.topologyRequest = tr.request;
    return ps;
  };

  const podSets: PodSet[] = [];
  if (lwt.leaderTemplate !== undefined && lwt.leaderTemplate !== null) {
    podSets.push(podSet(LeaderWorkerSetPodSet.Leader, leader!, 1, 'spec.leaderWorkerTemplate.leaderTemplate'));
    const grouped = worker.metadata?.annotations?.[KueueAnnotation.PodSetGroupName] !== undefined;
    podSets.push(
      podSet(
        LeaderWorkerSetPodSet.Worker,
        worker,
        size - 1,
        'spec.leaderWorkerTemplate.workerTemplate',
        PodIndexLabel.LWSWorkerIndex,
        grouped ? undefined : { [KueueAnnotation.PodIndexOffset]: '1' },
      ),
    );
  } else {
    podSets.push(
      podSet(LeaderWorkerSetPodSet.Main, worker, size, 'spec.leaderWorkerTemplate.workerTemplate', PodIndexLabel.LWSWorkerIndex),
    );
  }
  if (errors.length > 0) return { workloads: [], errors };

  const workloads = [];
  for (let i = 0; i < replicas; i++) {
    workloads.push(
      ownedWorkload(obj, structuredClone(podSets), {
        name: leaderWorkerSetWorkloadName(obj, i),
        annotations: { [IS_GROUP_WORKLOAD_ANNOTATION]: 'true' },
      }),
    );
  }
  return { workloads, errors };
}

// ---------------------------------------------------------------------------------------
// The job side: pod-gated, one Workload per group index. The LWS controller (the embedded
// cluster's stand-in too) creates the pods: leader `<lws>-<group>` (worker index 0), workers
// `<lws>-<group>-<w>`, labelled with the LWS name, group index and worker index. A pod's
// PodSet: `leader` for worker index 0 and `worker` for the rest when the LWS has a leader
// template, else `main`. Serving: an LWS never finishes. The webhook puts the pod-index
// offset on the worker template (see the header), so worker pods carry it for the
// TopologyUngater's ranks.
// ---------------------------------------------------------------------------------------

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

export const leaderWorkerSetFramework = defineFramework({
  name: 'leaderworkerset.x-k8s.io/leaderworkerset',
  kinds: [LeaderWorkerSetKind],
  toWorkloads: leaderWorkerSetToWorkloads,
  job: {
    mode: 'pods',
    hookSuffix: 'leaderworkerset.kb.io',
    placePod(lws, pod) {
      const at = lwsPodIndexes(lws, pod);
      if (!at) return undefined;
      const leader = lwt(lws)?.leaderTemplate;
      const hasLeader = leader !== undefined && leader !== null;
      const podSet = !hasLeader
        ? LeaderWorkerSetPodSet.Main
        : at.worker === 0
          ? LeaderWorkerSetPodSet.Leader
          : LeaderWorkerSetPodSet.Worker;
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
  },
});
