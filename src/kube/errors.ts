// Status objects, as kube-apiserver writes them (kubectl-facade.md §10): kubectl prints
// `Error from server (<reason>): <message>`, and for 422 builds the text from
// details.kind, details.name and the causes, so those must be exact.

import type { InputError } from '../api/errors.ts';
import { StoreError } from '../runtime/store.ts';
import { type Resource, qualifiedName } from './resources.ts';

export interface StatusCause {
  reason: string;
  message: string;
  field?: string;
}

export interface Status {
  kind: 'Status';
  apiVersion: 'v1';
  metadata: Record<string, never>;
  status: 'Failure' | 'Success';
  message?: string;
  reason?: string;
  details?: { name?: string; group?: string; kind?: string; uid?: string; causes?: StatusCause[]; retryAfterSeconds?: number };
  code: number;
}

/** An error that becomes a Status reply. */
export class ApiError extends Error {
  constructor(
    readonly code: number,
    readonly reason: string,
    message: string,
    readonly details?: Status['details'],
  ) {
    super(message);
    this.name = 'ApiError';
  }

  status(): Status {
    return {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: this.message,
      reason: this.reason,
      ...(this.details ? { details: this.details } : {}),
      code: this.code,
    };
  }
}

const ref = (r: Resource, name: string) => ({ name, group: r.group, kind: r.plural });

export const notFound = (r: Resource, name: string) =>
  new ApiError(404, 'NotFound', `${qualifiedName(r)} "${name}" not found`, ref(r, name));
export const alreadyExists = (r: Resource, name: string) =>
  new ApiError(409, 'AlreadyExists', `${qualifiedName(r)} "${name}" already exists`, ref(r, name));
export const conflict = (r: Resource, name: string) =>
  new ApiError(
    409,
    'Conflict',
    `Operation cannot be fulfilled on ${qualifiedName(r)} "${name}": the object has been modified; please apply your changes to the latest version and try again`,
    ref(r, name),
  );
export const noSuchPath = () => new ApiError(404, 'NotFound', 'the server could not find the requested resource', {});
export const badRequest = (message: string) => new ApiError(400, 'BadRequest', message);
export const methodNotAllowed = (method: string) =>
  new ApiError(405, 'MethodNotAllowed', `the server does not allow this method on the requested resource (${method})`, {});
export const tooLarge = (limit: number) => new ApiError(413, 'RequestEntityTooLarge', `Request entity too large: limit is ${limit}`);
export const expired = (rv: string, current: string) => new ApiError(410, 'Expired', `too old resource version: ${rv} (${current})`);
export const internal = (message: string) => new ApiError(500, 'InternalError', `Internal error occurred: ${message}`);

export function unsupportedMediaType(accepted: readonly string[], extra = ''): ApiError {
  return new ApiError(
    415,
    'UnsupportedMediaType',
    `the body of the request was in an unknown format - accepted media types include: ${accepted.join(', ')}${extra}`,
  );
}

/** `Pod "bad"` / `Workload.kueue.x-k8s.io "x"`: the subject of an Invalid message. */
export function invalidKind(r: Resource): string {
  return r.group ? `${r.kind}.${r.group}` : r.kind;
}

/** 422 Invalid with one cause per problem: kubectl prints `The <Kind> "<name>" is invalid: <field>: <message>`. */
export function invalid(r: Resource, name: string, causes: StatusCause[]): ApiError {
  const kind = invalidKind(r);
  const text = causes.map((c) => (c.field ? `${c.field}: ${c.message}` : c.message));
  const message = `${kind} "${name}" is invalid: ${text.length === 1 ? text[0] : `[${text.join(', ')}]`}`;
  return new ApiError(422, 'Invalid', message, { name, group: r.group, kind, causes });
}

/** A cause from a validation message `Required value: ...` / `Invalid value: ...`. */
export function causeOf(field: string | undefined, text: string): StatusCause {
  // The schemas say "is required"; kube-apiserver says "Required value".
  const message = text === 'is required' ? 'Required value' : text.replace(/^is required: /, 'Required value: ');
  const reason = /^Required value/.test(message)
    ? 'FieldValueRequired'
    : /^Unsupported value/.test(message)
      ? 'FieldValueNotSupported'
      : /^Forbidden/.test(message)
        ? 'FieldValueForbidden'
        : /^Duplicate value/.test(message)
          ? 'FieldValueDuplicate'
          : 'FieldValueInvalid';
  return { reason, message, ...(field !== undefined ? { field } : {}) };
}

/** The schema's errors for one object as a 422. */
export function invalidFromInput(r: Resource, name: string, errors: readonly InputError[]): ApiError {
  return invalid(
    r,
    name,
    errors.map((e) => causeOf(e.where.field, e.detail)),
  );
}

/**
 * A store error as the API server would report it: webhook denials are 403 Forbidden
 * (what controller-runtime answers for a denied request), other errors keep their code.
 */
export function fromStoreError(e: StoreError, r: Resource, name: string): ApiError {
  switch (e.reason) {
    case 'NotFound':
      return notFound(r, name);
    case 'AlreadyExists':
      return alreadyExists(r, name);
    case 'Conflict':
      return conflict(r, name);
    case 'Invalid':
      if (e.message.startsWith('admission webhook'))
        return new ApiError(403, 'Forbidden', e.message, { name, group: r.group, kind: r.plural });
      return invalid(r, name, [causeOf(undefined, e.message)]);
    default:
      return badRequest(e.message);
  }
}

/** Any thrown value as an ApiError (unknown ones are 500s, never a crash). */
export function toApiError(e: unknown, r?: Resource, name = ''): ApiError {
  if (e instanceof ApiError) return e;
  if (e instanceof StoreError) return r ? fromStoreError(e, r, name) : new ApiError(e.code, e.reason, e.message);
  return internal(e instanceof Error ? e.message : String(e));
}
