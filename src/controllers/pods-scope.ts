// Which pods are plain Pods (KEP-976, kueue-core §1e) and which reconcile key each belongs
// to. Shared by the pod webhook and the pod-group controller.
//
// Keys of the 'pod-group' controller:
//   pod/<ns>/<name>    a single pod (no group, no gang)
//   group/<ns>/<name>  a Kueue pod group (`kueue.x-k8s.io/pod-group-name`)
//   gang/<ns>/<name>   a Koordinator / scheduler-plugins gang (gang-pods.ts's identity)
//   podgroup/<ns>/<name>  a member of Volcano PodGroup <name> (annotation
//                      `scheduling.k8s.io/group-name`; volcano-podgroup.ts)
// A pod is ours when it carries `kueue.x-k8s.io/managed: "true"` and its controller owner
// is not a kind another integration runs (the job frameworks of integrations/registry.ts:
// the job reconciler gates and starts those pods).

import { labelSelectorMatches } from '../api/label-selector.ts';
import { KueueLabel, NAMESPACE_NAME_LABEL } from '../api/keys.ts';
import type { KObject, Pod, StringMap } from '../api/objects.ts';
import { VolcanoAnnotation, type LabelSelector } from '../api/volcano-objects.ts';
import { podGangId } from '../integrations/gang-pods.ts';
import { LWSLabel } from '../integrations/leaderworkerset.ts';
import { podGroupName } from '../integrations/pod.ts';
import { JOB_ADAPTERS } from '../integrations/registry.ts';
import { apiGroup, namespaceOf } from '../integrations/workload-name.ts';
import type { Informer } from '../runtime/informer.ts';

/** LeaderWorkerSet's label on its pods (they are owned by a StatefulSet, not by the LWS). */
export const LWS_NAME_LABEL = LWSLabel.Name;

/** Owner kinds whose pods another integration gates and starts (by API group and kind): the job frameworks'. */
export const KNOWN_OWNER_KINDS: readonly { group: string; kind: string }[] = JOB_ADAPTERS.map((a) => ({
  group: apiGroup(a.apiVersion),
  kind: a.kind,
}));

export const PodKeyPrefix = { Pod: 'pod', Group: 'group', Gang: 'gang', Volcano: 'podgroup' } as const;
export type PodKeyKind = (typeof PodKeyPrefix)[keyof typeof PodKeyPrefix];

/** The pod's controller owner is a kind another integration runs (or the pod is an LWS pod). */
export function ownedByKnownIntegration(pod: KObject): boolean {
  if (pod.metadata.labels?.[LWS_NAME_LABEL] !== undefined) return true;
  const owner = pod.metadata.ownerReferences?.find((r) => r.controller);
  if (!owner) return false;
  const group = apiGroup(owner.apiVersion);
  return KNOWN_OWNER_KINDS.some((k) => k.group === group && k.kind === owner.kind);
}

export function isManagedPod(pod: Pod): boolean {
  return pod.metadata.labels?.[KueueLabel.Managed] === 'true' && !ownedByKnownIntegration(pod);
}

/** The 'pod-group' reconcile key of a managed pod, undefined for any other pod. */
export function podReconcileKey(pod: Pod): string | undefined {
  if (!isManagedPod(pod)) return undefined;
  const ns = namespaceOf(pod);
  const volcano = pod.metadata.annotations?.[VolcanoAnnotation.PodGroupName];
  if (volcano !== undefined) return `${PodKeyPrefix.Volcano}/${ns}/${volcano}`;
  const gang = podGangId(pod);
  if (gang !== undefined) return `${PodKeyPrefix.Gang}/${gang}`;
  const group = podGroupName(pod);
  if (group !== undefined) return `${PodKeyPrefix.Group}/${ns}/${group}`;
  return `${PodKeyPrefix.Pod}/${ns}/${pod.metadata.name}`;
}

export function parseReconcileKey(key: string): { kind: PodKeyKind; namespace: string; name: string } | undefined {
  const [kind, namespace, ...rest] = key.split('/');
  const name = rest.join('/');
  if (!namespace || !name) return undefined;
  if (kind !== PodKeyPrefix.Pod && kind !== PodKeyPrefix.Group && kind !== PodKeyPrefix.Gang && kind !== PodKeyPrefix.Volcano)
    return undefined;
  return { kind, namespace, name };
}

/**
 * A namespace's labels as the API server keeps them: the Namespace object's labels plus
 * `kubernetes.io/metadata.name` (always set by the API server); the name label alone when
 * no Namespace object exists.
 */
export function namespaceLabels(namespaces: Informer | undefined, name: string): StringMap {
  const ns = namespaces?.get(name);
  return { ...(ns?.metadata.labels ?? {}), [NAMESPACE_NAME_LABEL]: name };
}

/** The namespace is managed (Kueue's managedJobsNamespaceSelector). */
export function namespaceManaged(selector: LabelSelector, namespaces: Informer | undefined, name: string): boolean {
  return labelSelectorMatches(selector, namespaceLabels(namespaces, name));
}
