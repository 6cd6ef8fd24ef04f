// The embedded cluster's job controllers, as one reconciler ('job-controllers'): what the
// real controllers of each framework do, with their pod names and labels (the job reconciler
// and the TopologyUngater rely on them). One stand-in (job-controller-common.ts's skeleton)
// per job framework of the registry (integrations/registry.ts), each in its file:
//   batch/v1 Job          job-controller-batch.ts
//   JobSet                job-controller-jobset.ts
//   MPIJob                job-controller-mpijob.ts
//   LeaderWorkerSet       job-controller-lws.ts
//   Volcano Job, HyperJob job-controller-volcano.ts
// A job framework without a stand-in in STAND_INS is an error when the reconciler is built.
//
// Keys are `<framework>/<namespace>/<name>`. A change to a job object enqueues it at once, and its
// controller owner (a JobSet's Jobs, a HyperJob's Volcano Jobs). Pod events enqueue the pod's
// controller owner after JOB_SYNC_BATCH_MS, as Kubernetes' job controller batches them
// (syncJobBatchPeriod, 1 s): a Job with thousands of pods is synced once per batch, not once
// per pod event.

import type { KObject, Pod, TypeMeta } from '../api/objects.ts';
import type { TopoqueueConfig } from '../controllers/config.ts';
import { JOB_FRAMEWORKS } from '../integrations/registry.ts';
import type { Reconciler } from '../runtime/manager.ts';
import { BatchJobController, JOB_TRACKING_FINALIZER } from './job-controller-batch.ts';
import {
  BY_CONTROLLER_UID,
  ORPHAN_POD_TAG,
  controllerRef,
  controllerUidIndex,
  isDeleting,
  jobKey,
  splitJobKey,
  type KindController,
  type KindEnv,
} from './job-controller-common.ts';
import { JobSetController } from './job-controller-jobset.ts';
import { LeaderWorkerSetController } from './job-controller-lws.ts';
import { MPIJobController } from './job-controller-mpijob.ts';
import { HyperJobController, VolcanoJobController } from './job-controller-volcano.ts';
import { isTerminal } from '../api/objects.ts';

/** Pod events reach a job's controller batched over this long (Kubernetes' syncJobBatchPeriod). */
export const JOB_SYNC_BATCH_MS = 1000;

export interface JobControllersOptions {
  /**
   * The pod-event batch (default JOB_SYNC_BATCH_MS, Kubernetes' value). Only for what-if
   * analyses (bench/preemption-origins.ts): 0 syncs a Job at every pod event.
   */
  syncBatchMs?: number;
}

/** The stand-ins, one line per job framework; which run, and in what order, is the registry's. */
const STAND_INS: readonly (new () => KindController)[] = [
  BatchJobController,
  JobSetController,
  MPIJobController,
  LeaderWorkerSetController,
  VolcanoJobController,
  HyperJobController,
];

/** A stand-in for every job framework of the registry, in its order. */
export function standIns(): KindController[] {
  const all = STAND_INS.map((make) => new make());
  return JOB_FRAMEWORKS.map((f) => {
    const s = all.find((c) => c.framework === f);
    if (!s) throw new Error(`job framework ${f.name} has no stand-in in cluster/job-controllers.ts`);
    return s;
  });
}

export function jobControllers(opts: JobControllersOptions = {}): Reconciler<TopoqueueConfig> {
  const syncBatchMs = opts.syncBatchMs ?? JOB_SYNC_BATCH_MS;
  const controllers = standIns();
  const batch = controllers.find((c): c is BatchJobController => c instanceof BatchJobController)!;
  const byTag = new Map<string, KindController>(controllers.map((c) => [c.tag, c]));
  const kinds = [...new Set(controllers.map((c) => c.kind))];
  /** The stand-in of an object or owner reference (its framework's), or undefined. */
  const standInOf = (ref: TypeMeta): KindController | undefined => controllers.find((c) => c.owns(ref));
  let env: KindEnv | undefined;

  return {
    name: 'job-controllers',
    setup(ctx, queue, recorder) {
      const pods = ctx.informers.for('Pod');
      pods.addIndex(BY_CONTROLLER_UID, controllerUidIndex);
      env = { ctx, queue, recorder, pods, podsOf: (uid) => (uid ? pods.byIndex(BY_CONTROLLER_UID, uid) : []) };
      for (const c of controllers) c.setup(env);

      const jobs = ctx.informers.for(batch.kind);
      const self = (o: KObject): void => {
        const tag = standInOf(o)?.tag;
        if (tag) queue.add(jobKey(tag, o.metadata.namespace, o.metadata.name));
      };
      const owner = (o: KObject, delayMs = 0): void => {
        const ref = controllerRef(o);
        const tag = ref ? standInOf(ref)?.tag : undefined;
        if (tag) queue.addAfter(jobKey(tag, o.metadata.namespace, ref!.name), delayMs);
      };
      /** A tracked pod whose Job is gone keeps its finalizer until released. */
      const orphan = (p: Pod): void => {
        if (!p.metadata.finalizers?.includes(JOB_TRACKING_FINALIZER) || !(isTerminal(p) || isDeleting(p))) return;
        const ref = controllerRef(p);
        const job = ref ? jobs.get(p.metadata.namespace, ref.name) : undefined;
        if (!job || job.metadata.uid !== ref!.uid) queue.add(jobKey(ORPHAN_POD_TAG, p.metadata.namespace, p.metadata.name));
      };
      pods.addHandler({
        add: (p) => {
          owner(p, syncBatchMs);
          orphan(p);
        },
        update: (_, p) => {
          owner(p, syncBatchMs);
          orphan(p);
        },
        delete: (p) => owner(p, syncBatchMs),
      });
      for (const kind of kinds) {
        const informer = kind === batch.kind ? jobs : ctx.informers.for(kind);
        informer.addHandler({
          add: (o) => {
            self(o);
            owner(o);
          },
          update: (_, o) => {
            self(o);
            owner(o);
          },
          delete: (o) => {
            owner(o);
            if (standInOf(o) === batch) for (const p of pods.byIndex(BY_CONTROLLER_UID, o.metadata.uid!)) orphan(p);
          },
        });
      }
    },
    async reconcile(key) {
      const { tag, namespace, name } = splitJobKey(key);
      if (tag === ORPHAN_POD_TAG) return batch.releaseOrphan(namespace, name);
      return byTag.get(tag)?.reconcile(namespace, name);
    },
  };
}

export { JOB_TRACKING_FINALIZER };
