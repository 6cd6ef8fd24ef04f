// Pod groups whose workers a driver creates later (KEP-976 story 3, "Groups of pods where
// driver generates workers"): the driver pod declares every PodSet of the group in the
// annotation `kueue.x-k8s.io/pod-group-sets`, a YAML or JSON list of
// `{name, count, template?}` (the Workload PodSet fields). A set without a template is
// shaped like the pods already there (the driver); a set with one is filled later by pods
// labelled `kueue.x-k8s.io/pod-group-role: <set name>`.
//
// Choices where the KEP is silent (Kueue never implemented the annotation):
//   - a pod's set: its role label when present; else, for the pod carrying the annotation,
//     the first set without a template;
//   - the group's Workload is composed once every set without a template has its count of
//     runnable pods; its PodSets are the declared sets, in declared order;
//   - the total count annotation is not needed on such a group (the sets give the total);
//   - a template must be a pod template (`spec.containers`); its metadata labels and
//     annotations are kept (TAS annotations there ask for topology).

import { CoreApiVersion } from '../api/api-versions.ts';
import { parse as parseYaml } from 'yaml';
import { InputError, type Where } from '../api/errors.ts';
import { KueueRuntimeKey } from '../api/keys.ts';
import type { Pod, PodSet, PodTemplateSpec } from '../api/objects.ts';
import { isDnsLabel } from '../api/names.ts';
import { compareStrings, isRecord } from '../api/values.ts';
import { podPodSet } from '../integrations/pod.ts';
import { MAX_PODSETS } from '../integrations/workload-name.ts';

/** Label naming the set (role) of a pod in a group declared with pod-group-sets. */
export const POD_GROUP_ROLE_LABEL = 'kueue.x-k8s.io/pod-group-role';

export interface PodGroupSet {
  name: string;
  count: number;
  template?: PodTemplateSpec;
}

export function hasPodGroupSets(pod: Pod): boolean {
  return pod.metadata.annotations?.[KueueRuntimeKey.PodGroupSets] !== undefined;
}

/** The declared sets, or the first problem found (a sentence naming the entry and field). */
export function parsePodGroupSets(raw: string): { sets?: PodGroupSet[]; error?: string } {
  let doc: unknown;
  try {
    doc = parseYaml(raw);
  } catch (e) {
    return { error: `is not YAML or JSON: ${(e as Error).message.split('\n')[0]}` };
  }
  if (!Array.isArray(doc) || doc.length === 0) return { error: 'must be a non-empty list of {name, count, template?}' };
  if (doc.length > MAX_PODSETS) return { error: `declares ${doc.length} sets; a Workload holds at most ${MAX_PODSETS} PodSets` };
  const sets: PodGroupSet[] = [];
  const seen = new Set<string>();
  for (const [i, e] of doc.entries()) {
    const at = `entry ${i + 1}`;
    if (!isRecord(e)) return { error: `${at} must be a mapping {name, count, template?}` };
    const name = e.name;
    if (typeof name !== 'string' || !isDnsLabel(name)) {
      return {
        error: `${at}: name ${JSON.stringify(name)} must be a DNS label (lowercase letters, digits and '-', at most 63 characters): it names a PodSet`,
      };
    }
    if (seen.has(name)) return { error: `${at}: name ${JSON.stringify(name)} is declared twice` };
    seen.add(name);
    const count = e.count;
    if (typeof count !== 'number' || !Number.isInteger(count) || count < 1 || count > 2 ** 31 - 1) {
      return { error: `${at} (${name}): count must be a whole number of at least 1, got ${JSON.stringify(count)}` };
    }
    const set: PodGroupSet = { name, count };
    if (e.template !== undefined && e.template !== null) {
      const t = e.template;
      if (!isRecord(t) || !isRecord(t.spec) || !Array.isArray(t.spec.containers) || t.spec.containers.length === 0) {
        return {
          error: `${at} (${name}): template must be a pod template with spec.containers (leave it out to take the shape of the pod that declares the sets)`,
        };
      }
      set.template = t as unknown as PodTemplateSpec;
    }
    sets.push(set);
  }
  return { sets };
}

/** The set a pod fills: its role label, or (for the declaring pod) the first set without a template. */
export function setOfPod(pod: Pod, sets: readonly PodGroupSet[]): PodGroupSet | undefined {
  const role = pod.metadata.labels?.[POD_GROUP_ROLE_LABEL];
  if (role !== undefined) return sets.find((s) => s.name === role);
  if (hasPodGroupSets(pod)) return sets.find((s) => s.template === undefined);
  return undefined;
}

/**
 * The PodSets of a sets group: declared order; a set without a template takes the shape
 * of its first pod (by name) among `pods`. Undefined (with errors) when a set without a
 * template has no pod.
 */
export function podSetsFromSets(
  sets: readonly PodGroupSet[],
  pods: readonly Pod[],
  where: Where,
  errors: InputError[],
): PodSet[] | undefined {
  const before = errors.length;
  const out: PodSet[] = [];
  for (const s of sets) {
    let shape: Pod | undefined;
    if (s.template) {
      shape = {
        apiVersion: CoreApiVersion.V1,
        kind: 'Pod',
        metadata: { name: s.name, labels: s.template.metadata?.labels, annotations: s.template.metadata?.annotations },
        spec: s.template.spec,
      };
    } else {
      shape = [...pods].filter((p) => setOfPod(p, sets) === s).sort((a, b) => compareStrings(a.metadata.name, b.metadata.name))[0];
    }
    if (!shape) {
      errors.push(new InputError(where, `set ${s.name} has no template and no pod yet`));
      continue;
    }
    out.push(podPodSet(shape, s.name, s.count, where, errors));
  }
  return errors.length > before ? undefined : out;
}
