// training.volcano.sh/v1alpha1 HyperJob -> one Workload (spec volcano-hypernode §1.5, the
// seed's "Job management"): a group of replicated Volcano Jobs, each of which should
// occupy one domain, gang-scheduled together. Annotation keys: see volcano-job.ts.
//
//   1. parse with the API layer's schema and rules (a replicatedJob's `template`, the
//      seed's spelling, is read as `templateSpec`);
//   2. one PodSet per replicatedJob, named after it; count = replicas x pods per child Job
//      (the sum of its tasks' replicas);
//   3. each child Job is one slice: the PodSet template carries
//      `topoqueue.io/partition-size` = pods per child Job and the child JobSpec's
//      networkTopology as the task-level `volcano.sh/network-topology-*` annotations;
//   4. Workload annotations: the HyperJob's own `spec.networkTopology`; the gang minimum
//      in pods = the pods of `minAvailable` child Jobs (default: all of them), counting
//      the smallest child Jobs first when replicatedJobs differ in size (no fewer pods can
//      make up that many Jobs); the child Jobs' `queue` (they must agree).
//
// Approximations, because one PodSet stands for a whole child Job (so that the slice is
// the child Job, which is what its networkTopology constrains):
//   - a child Job with several tasks is sized with the template of its largest task (most
//     replicas, the first on ties) for all of its pods: a small `master` task next to 32
//     `worker`s then counts as a 33rd worker rather than making all 33 pods masters;
//   - child Jobs' own `minAvailable` is not carried: the HyperJob's gang counts whole Jobs;
//   - the template has no `volcano.sh/job-name` label: child Job names are made per replica.
// A child task's `partitionPolicy` (a slice inside the slice) cannot be expressed here and
// is refused rather than dropped.

import { InputError } from '../api/errors.ts';
import type { KObject, Pod, PodSet } from '../api/objects.ts';
import { networkTopologyOf } from '../api/volcano.ts';
import { VolcanoApiVersion, VolcanoLabel, type HyperJob, type VolcanoJobSpec, type VolcanoTask } from '../api/volcano-objects.ts';
import { defineFramework, readSpec, trueCondition } from './framework.ts';
import type { IntegrationContext, ToWorkloadsResult } from './integration.ts';
import {
  parseVolcano,
  partitionAnnotations,
  podsOfJobSpec,
  tooManyPodSets,
  volcanoOwnedWorkload,
  volcanoPodSetTemplate,
  volcanoJobFinish,
  volcanoWorkloadAnnotations,
} from './volcano-job.ts';
import { MAX_PODSETS, ownerIdentity, whereIn, workloadNameForOwner } from './workload-name.ts';
import { isRecord } from '../api/values.ts';

export const HyperJobKind = { apiVersion: VolcanoApiVersion.HyperJob, kind: 'HyperJob' } as const;

type ReplicatedJob = HyperJob['spec']['replicatedJobs'][number];

/** The task whose template stands for a child Job's pods: most replicas, first on ties. */
function largestTask(spec: VolcanoJobSpec): VolcanoTask {
  return spec.tasks.reduce((best, t) => ((t.replicas ?? 1) > (best.replicas ?? 1) ? t : best));
}

/** Pods of `jobs` child Jobs, smallest first: the fewest pods that make up that many Jobs. */
function podsOfSmallestJobs(rjs: readonly ReplicatedJob[], jobs: number): number {
  const sizes = rjs.map((rj) => ({ size: podsOfJobSpec(rj.templateSpec), replicas: rj.replicas ?? 1 })).sort((a, b) => a.size - b.size);
  let left = jobs;
  let pods = 0;
  for (const { size, replicas } of sizes) {
    const take = Math.min(left, replicas);
    pods += take * size;
    left -= take;
  }
  return pods;
}

export function hyperJobToWorkloads(obj: KObject, ctx: IntegrationContext): ToWorkloadsResult {
  const where = whereIn(ctx.where, obj);
  const parsed = parseVolcano<HyperJob>(obj, where);
  if (parsed.object === undefined) return { workloads: [], errors: parsed.errors };
  const hj = parsed.object;
  const rjs = hj.spec.replicatedJobs;
  const errors: InputError[] = [];
  if (rjs.length > MAX_PODSETS) errors.push(tooManyPodSets(where, 'spec.replicatedJobs', 'replicatedJob', rjs.length));

  const podSets: PodSet[] = [];
  let queue: { name: string; field: string } | undefined;
  rjs.forEach((rj, i) => {
    const at = `spec.replicatedJobs[${i}].templateSpec`;
    const child = rj.templateSpec;
    child.tasks.forEach((t, j) => {
      if (t.partitionPolicy === undefined) return;
      errors.push(
        new InputError(
          { ...where, field: `${at}.tasks[${j}].partitionPolicy` },
          'a partitionPolicy inside a HyperJob child Job is not supported: each child Job already is one slice of the ' +
            'HyperJob; give the child Job a networkTopology instead, or run the Job on its own as a batch.volcano.sh/v1alpha1 Job',
        ),
      );
    });
    if (child.queue) {
      if (queue === undefined) queue = { name: child.queue, field: `${at}.queue` };
      else if (queue.name !== child.queue) {
        errors.push(
          new InputError(
            { ...where, field: `${at}.queue` },
            `queue ${JSON.stringify(child.queue)} differs from ${JSON.stringify(queue.name)} at ${queue.field}: ` +
              'the child Jobs of one HyperJob are queued together, so they must name the same queue',
          ),
        );
      }
    }

    const perJob = podsOfJobSpec(child);
    const task = largestTask(child);
    const annotations = perJob > 0 ? partitionAnnotations(perJob, networkTopologyOf(child)) : {};
    const template = volcanoPodSetTemplate(task.template, { [VolcanoLabel.TaskSpec]: task.name }, annotations);
    podSets.push({ name: rj.name.toLowerCase(), template, count: (rj.replicas ?? 1) * perJob });
  });
  if (errors.length > 0) return { workloads: [], errors };

  const totalJobs = rjs.reduce((n, rj) => n + (rj.replicas ?? 1), 0);
  const minJobs = hj.spec.minAvailable !== undefined && hj.spec.minAvailable > 0 ? hj.spec.minAvailable : totalJobs;
  const annotations = volcanoWorkloadAnnotations(networkTopologyOf(hj.spec), podsOfSmallestJobs(rjs, minJobs), queue?.name);
  const priorityClass = rjs.map((rj) => rj.templateSpec.priorityClassName).find((p) => p);
  return { workloads: [volcanoOwnedWorkload(hj, podSets, annotations, priorityClass)], errors: [] };
}

// ---------------------------------------------------------------------------------------
// The job side: pod-gated through its child Volcano Jobs. The HyperJob controller (the
// embedded cluster's stand-in; Volcano has none yet) creates child Volcano Jobs
// `<hyperjob>-<replicatedJob>-<i>` (controller: the HyperJob), labelled with the keys below,
// and their pods as for any Volcano Job. A pod's PodSet is its child Job's replicatedJob,
// lowercased: the child's label, else its name. Finished when the HyperJob reports Completed
// or Failed, else when a child Job failed (failure) or every child Job completed (success).
// ---------------------------------------------------------------------------------------

/** Labels on a HyperJob's child Volcano Jobs (topoqueue's; Volcano has no HyperJob controller yet). */
export const HyperJobLabel = {
  Name: 'training.volcano.sh/hyperjob-name',
  ReplicatedJobName: 'training.volcano.sh/replicatedjob-name',
  JobIndex: 'training.volcano.sh/job-index',
} as const;

export const HyperJobCondition = { Completed: 'Completed', Failed: 'Failed' } as const;

function replicatedJobs(hj: KObject): { name: string; replicas: number }[] {
  const rjs = readSpec(hj).replicatedJobs;
  return (Array.isArray(rjs) ? rjs : []).filter(isRecord).map((rj) => ({
    name: String(rj.name ?? ''),
    replicas: typeof rj.replicas === 'number' ? rj.replicas : 1,
  }));
}

/** The replicatedJob a child Volcano Job belongs to: its label, else its name `<hyperjob>-<replicatedJob>-<i>`. */
export function replicatedJobOfChild(hj: KObject, child: KObject): string | undefined {
  const names = replicatedJobs(hj).map((r) => r.name);
  const label = child.metadata.labels?.[HyperJobLabel.ReplicatedJobName];
  if (label !== undefined) return names.includes(label) ? label : undefined;
  const prefix = `${hj.metadata.name}-`;
  if (!child.metadata.name.startsWith(prefix)) return undefined;
  const rest = child.metadata.name.slice(prefix.length);
  return [...names].sort((a, b) => b.length - a.length).find((n) => rest.startsWith(`${n}-`) && /^[0-9]+$/.test(rest.slice(n.length + 1)));
}

export const hyperJobFramework = defineFramework({
  name: 'training.volcano.sh/hyperjob',
  kinds: [HyperJobKind],
  toWorkloads: hyperJobToWorkloads,
  job: {
    mode: 'pods',
    hookSuffix: 'hyperjob.topoqueue.io',
    placePod(hj, _pod: Pod, owner) {
      const rj = owner.kind === 'Job' ? replicatedJobOfChild(hj, owner) : undefined;
      return rj === undefined ? undefined : { workload: workloadNameForOwner(ownerIdentity(hj)), podSet: rj.toLowerCase() };
    },
    finished(hj, view) {
      const c = trueCondition(hj, [HyperJobCondition.Completed, HyperJobCondition.Failed]);
      if (c) {
        const success = c.type === HyperJobCondition.Completed;
        return { success, message: c.message || (success ? 'HyperJob completed' : 'HyperJob failed') };
      }
      const children = view.childJobs(hj);
      for (const child of children) {
        const f = volcanoJobFinish(child);
        if (f && !f.success) return { success: false, message: `Volcano Job ${child.metadata.name} of the HyperJob: ${f.message}` };
      }
      const expected = replicatedJobs(hj).reduce((n, r) => n + r.replicas, 0);
      const completed = children.filter((c) => volcanoJobFinish(c)?.success === true && replicatedJobOfChild(hj, c) !== undefined).length;
      if (expected > 0 && completed >= expected)
        return { success: true, message: `All ${expected} Volcano Jobs of the HyperJob completed` };
      return undefined;
    },
  },
});
