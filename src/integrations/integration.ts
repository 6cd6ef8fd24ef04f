// Integrations turn a framework's object (Job, JobSet, LeaderWorkerSet, plain Pods) into
// the Kueue Workloads Kueue's job framework would build for it: the Workload-building part
// of each framework record (framework.ts), behind the interface below; the registry
// (registry.ts) dispatches objects to them.
//
// workloadsFromObjects:
//   1. drop children of a supported parent (a Job owned by a JobSet, a Pod owned by a
//      Job): the parent's Workload already covers them, as in Kueue;
//   2. per object, find the integration by apiVersion and kind; a known group with an
//      unknown version is an error, anything else (Nodes, Topologies...) is not ours;
//   3. integrations that group objects across documents (plain Pods: pod groups, gangs)
//      get all their objects at once;
//   4. Workloads come out in input order, a group at the place of its first member;
//      `notes` are what a user should read that is not an error (e.g. a gang not yet
//      initialized: its pods wait, nothing is wrong with the input).

import { InputError, type Where } from '../api/errors.ts';
import type { KObject, Workload } from '../api/objects.ts';
import { integrationFor, supportedVersionsOf } from './registry.ts';

export interface IntegrationKind {
  apiVersion: string;
  kind: string;
}

export interface IntegrationContext {
  /** Where the object was read: file, document, and optionally object and line. */
  where: Where;
}

export interface ToWorkloadsResult {
  workloads: Workload[];
  errors: InputError[];
}

export interface SourcedObject {
  object: KObject;
  where: Where;
}

export interface SourcedWorkload {
  workload: Workload;
  /** The object (for a pod group: its first member in input order) the Workload came from. */
  source: Where;
}

export interface Integration {
  /** Framework name as Kueue's configuration spells it, e.g. `batch/job`. */
  name: string;
  kinds: readonly IntegrationKind[];
  /** Never throws: bad input comes back in `errors`, naming file, document, object and field. */
  toWorkloads(obj: KObject, ctx: IntegrationContext): ToWorkloadsResult;
  /**
   * For integrations whose Workloads span objects (plain Pods: pod groups). Called once
   * with all of the integration's objects; `first` is the index in `items` of the first
   * object each Workload came from.
   */
  toWorkloadsAcross?(items: readonly SourcedObject[]): {
    workloads: (SourcedWorkload & { first: number })[];
    errors: InputError[];
    notes?: string[];
  };
}

/** True when the object's controller is itself handled by an integration (Kueue skips such children). */
export function hasSupportedParent(obj: KObject): boolean {
  const owner = obj.metadata.ownerReferences?.find((r) => r.controller);
  return owner !== undefined && integrationFor(owner) !== undefined;
}

export function workloadsFromObjects(objects: readonly SourcedObject[]): {
  workloads: SourcedWorkload[];
  errors: InputError[];
  notes: string[];
} {
  const errors: InputError[] = [];
  const notes: string[] = [];
  const placed: { at: number; w: SourcedWorkload }[] = [];
  const across = new Map<Integration, { items: SourcedObject[]; index: number[] }>();

  objects.forEach(({ object, where }, index) => {
    if (hasSupportedParent(object)) return;
    const integration = integrationFor(object);
    if (integration === undefined) {
      const versions = supportedVersionsOf(object);
      if (versions.length > 0) {
        errors.push(
          new InputError(
            { ...where, field: 'apiVersion' },
            `unsupported apiVersion ${JSON.stringify(object.apiVersion)} for ${object.kind}; accepted: ${versions.join(', ')}`,
          ),
        );
      }
      return;
    }
    if (integration.toWorkloadsAcross) {
      const batch = across.get(integration) ?? { items: [], index: [] };
      batch.items.push({ object, where });
      batch.index.push(index);
      across.set(integration, batch);
      return;
    }
    const r = integration.toWorkloads(object, { where });
    errors.push(...r.errors);
    for (const workload of r.workloads) placed.push({ at: index, w: { workload, source: where } });
  });

  for (const [integration, batch] of across) {
    const r = integration.toWorkloadsAcross!(batch.items);
    errors.push(...r.errors);
    notes.push(...(r.notes ?? []));
    for (const { workload, source, first } of r.workloads) {
      placed.push({ at: batch.index[first]!, w: { workload, source } });
    }
  }

  // Stable sort: several Workloads from one object (LWS groups) keep their order.
  placed.sort((a, b) => a.at - b.at);
  return { workloads: placed.map((p) => p.w), errors, notes };
}
