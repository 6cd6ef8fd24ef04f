// CustomResourceDefinitions generated from the zod schemas topoqueue parses objects with
// (api/schemas.ts), never copied by hand: `z.toJSONSchema` gives JSON Schema, which is then
// cut down to the structural subset a CRD accepts:
// - no $ref / $defs (a recursive part becomes an object that keeps unknown fields);
// - a loose object (the parser keeps unknown fields) gets x-kubernetes-preserve-unknown-fields;
// - a union of a string and a number (quantities, int-or-string) gets x-kubernetes-int-or-string;
//   other unions keep unknown fields; `null` in a union becomes nullable;
// - metadata is left to the API server (a CRD may not constrain it);
// - defaults, propertyNames and the safe-integer bounds of z.int() are dropped.
// Kinds topoqueue owns (kueue.x-k8s.io, topoqueue.io) are one list; the kinds of other
// systems (Volcano, JobSet, LeaderWorkerSet, MPIJob, the scheduler-plugins and Koordinator
// PodGroups) another, installed only where those systems are not.

import { z } from 'zod';
import type { KObject } from '../api/objects.ts';
import { kindEntry } from '../api/schemas.ts';
import { apiVersionOf, RESOURCES, type Resource } from './resources.ts';

type Schema = Record<string, unknown>;

const OWNED_GROUPS = new Set(['kueue.x-k8s.io', 'topoqueue.io']);
const BUILT_IN_GROUPS = new Set(['', 'batch', 'coordination.k8s.io', 'scheduling.k8s.io']);

export const ownedResources = (): Resource[] => RESOURCES.filter((r) => OWNED_GROUPS.has(r.group));
export const foreignResources = (): Resource[] => RESOURCES.filter((r) => !OWNED_GROUPS.has(r.group) && !BUILT_IN_GROUPS.has(r.group));

const SAFE = Number.MAX_SAFE_INTEGER;

/** One JSON Schema node as a structural OpenAPI v3 schema node. */
export function structural(node: unknown): Schema {
  if (typeof node !== 'object' || node === null) return { 'x-kubernetes-preserve-unknown-fields': true };
  const s = node as Schema;
  if (s.$ref !== undefined) return { type: 'object', 'x-kubernetes-preserve-unknown-fields': true };
  const union = (s.anyOf ?? s.oneOf) as Schema[] | undefined;
  if (union) {
    const nonNull = union.filter((b) => b.type !== 'null');
    const nullable = nonNull.length < union.length ? { nullable: true } : {};
    if (nonNull.length === 1) return { ...structural(nonNull[0]), ...nullable, ...describe(s) };
    const types = new Set(nonNull.map((b) => b.type));
    if (types.size === 2 && types.has('string') && (types.has('number') || types.has('integer')))
      return { 'x-kubernetes-int-or-string': true, ...nullable, ...describe(s) };
    if (types.size === 1 && types.has('string')) {
      const en = nonNull.flatMap((b) => (b.const !== undefined ? [b.const] : Array.isArray(b.enum) ? (b.enum as unknown[]) : [undefined]));
      return en.includes(undefined)
        ? { type: 'string', ...nullable, ...describe(s) }
        : { type: 'string', enum: en, ...nullable, ...describe(s) };
    }
    if (types.size === 1 && types.has('object'))
      return { type: 'object', 'x-kubernetes-preserve-unknown-fields': true, ...nullable, ...describe(s) };
    return { 'x-kubernetes-preserve-unknown-fields': true, ...nullable, ...describe(s) };
  }
  if (s.allOf) return { type: 'object', 'x-kubernetes-preserve-unknown-fields': true, ...describe(s) };
  const out: Schema = {};
  const type = Array.isArray(s.type) ? (s.type as string[]).filter((t) => t !== 'null') : s.type;
  if (Array.isArray(s.type) && (s.type as string[]).includes('null')) out.nullable = true;
  if (Array.isArray(type)) {
    if (type.length === 1) out.type = type[0];
    else return { 'x-kubernetes-preserve-unknown-fields': true, ...describe(s) };
  } else if (typeof type === 'string') out.type = type;
  Object.assign(out, describe(s));
  if (s.const !== undefined) {
    out.enum = [s.const];
    out.type ??= typeof s.const === 'number' ? 'number' : typeof s.const === 'boolean' ? 'boolean' : 'string';
  }
  if (Array.isArray(s.enum)) out.enum = s.enum;
  for (const k of ['pattern', 'format', 'minLength', 'maxLength', 'minItems', 'maxItems', 'minProperties', 'maxProperties'] as const)
    if (s[k] !== undefined) out[k] = s[k];
  for (const k of ['minimum', 'maximum'] as const) if (typeof s[k] === 'number' && Math.abs(s[k]) < SAFE) out[k] = s[k];
  if (typeof s.exclusiveMinimum === 'number') Object.assign(out, { minimum: s.exclusiveMinimum, exclusiveMinimum: true });
  if (typeof s.exclusiveMaximum === 'number') Object.assign(out, { maximum: s.exclusiveMaximum, exclusiveMaximum: true });
  if (
    out.format !== undefined &&
    !['date-time', 'int32', 'int64', 'byte', 'uri', 'email', 'hostname', 'ipv4', 'ipv6', 'uuid', 'date', 'duration'].includes(
      out.format as string,
    )
  )
    delete out.format;
  if (out.type === 'array') {
    out.items = s.items !== undefined && !Array.isArray(s.items) ? structural(s.items) : { 'x-kubernetes-preserve-unknown-fields': true };
  }
  if (out.type === 'object' || s.properties !== undefined) {
    out.type = 'object';
    const props = s.properties as Record<string, unknown> | undefined;
    const extra = s.additionalProperties;
    if (props && Object.keys(props).length > 0) {
      out.properties = Object.fromEntries(Object.entries(props).map(([k, v]) => [k, structural(v)]));
      const req = (s.required as string[] | undefined)?.filter((r) => r in props);
      if (req && req.length > 0) out.required = req;
      if (extra !== false && extra !== undefined) out['x-kubernetes-preserve-unknown-fields'] = true;
    } else if (typeof extra === 'object' && extra !== null && Object.keys(extra).length > 0) {
      out.additionalProperties = structural(extra);
    } else if (extra !== false) {
      out['x-kubernetes-preserve-unknown-fields'] = true;
    }
  }
  if (out.type === undefined && out['x-kubernetes-int-or-string'] === undefined) out['x-kubernetes-preserve-unknown-fields'] = true;
  return out;
}

const describe = (s: Schema): Schema => (typeof s.description === 'string' ? { description: s.description } : {});

/** The openAPIV3Schema of a kind at an apiVersion, from its zod schema. */
export function openApiSchema(apiVersion: string, kind: string): Schema {
  const entry = kindEntry(apiVersion, kind);
  if (!entry) return { type: 'object', 'x-kubernetes-preserve-unknown-fields': true };
  const json = z.toJSONSchema(entry.schema, { io: 'input', unrepresentable: 'any', reused: 'inline', cycles: 'ref' }) as Schema;
  const root = structural(json);
  const props = { ...((root.properties as Record<string, Schema> | undefined) ?? {}) };
  props.apiVersion = { type: 'string' };
  props.kind = { type: 'string' };
  props.metadata = { type: 'object' };
  const required = ((root.required as string[] | undefined) ?? []).filter((r) => r !== 'metadata' && r !== 'apiVersion' && r !== 'kind');
  const out: Schema = { type: 'object', properties: props, ...(required.length > 0 ? { required } : {}) };
  if (root['x-kubernetes-preserve-unknown-fields']) out['x-kubernetes-preserve-unknown-fields'] = true;
  return out;
}

/** The CRD of one resource (one served and stored version). */
export function crdFor(r: Resource): KObject {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${r.plural}.${r.group}`, labels: { 'app.kubernetes.io/name': 'topoqueue' } },
    spec: {
      group: r.group,
      names: {
        kind: r.kind,
        listKind: `${r.kind}List`,
        plural: r.plural,
        singular: r.singular,
        ...(r.shortNames.length > 0 ? { shortNames: [...r.shortNames] } : {}),
        ...(r.categories.length > 0 ? { categories: [...r.categories] } : {}),
      },
      scope: r.namespaced ? 'Namespaced' : 'Cluster',
      versions: [
        {
          name: r.version,
          served: true,
          storage: true,
          schema: { openAPIV3Schema: openApiSchema(apiVersionOf(r), r.kind) },
          ...(r.status ? { subresources: { status: {} } } : {}),
        },
      ],
    },
  } as KObject;
}
