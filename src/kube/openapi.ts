// The OpenAPI v3 stub (kubectl-facade.md §3): an index of every served group/version and,
// per group/version, one PATCH operation per kind carrying x-kubernetes-group-version-kind
// and a fieldValidation query parameter. That is what kubectl's create/apply/replace look
// for before sending `fieldValidation=Strict`; no schemas are needed. The hash in each URL
// changes whenever the document does (kubectl caches these URLs as immutable).

import { createHash } from 'node:crypto';
import { groupVersions, type Resource } from './resources.ts';

const gvPath = (group: string, version: string) => (group === '' ? `api/${version}` : `apis/${group}/${version}`);

function itemPath(r: Resource): string {
  const base = `/${gvPath(r.group, r.version)}`;
  return r.namespaced ? `${base}/namespaces/{namespace}/${r.plural}/{name}` : `${base}/${r.plural}/{name}`;
}

function operation(r: Resource, verb: string, kind = r.kind) {
  return {
    operationId: `${verb}${kind}`,
    'x-kubernetes-action': verb === 'patch' ? 'patch' : 'put',
    'x-kubernetes-group-version-kind': { group: r.group, version: r.version, kind },
    parameters: [
      { name: 'dryRun', in: 'query', schema: { type: 'string' } },
      { name: 'fieldManager', in: 'query', schema: { type: 'string' } },
      { name: 'fieldValidation', in: 'query', schema: { type: 'string' } },
    ],
    responses: { '200': { description: 'OK' } },
  };
}

function document(group: string, version: string, resources: readonly Resource[]): object {
  const paths: Record<string, object> = {};
  for (const r of resources) {
    paths[itemPath(r)] = { patch: operation(r, 'patch'), put: operation(r, 'replace') };
    // kubectl validates a `<Kind>List` document (e.g. a NodeList file) as its own kind before applying the items.
    paths[itemPath(r).replace(/\/\{name\}$/, '')] = { patch: operation(r, 'patch', `${r.kind}List`) };
  }
  return { openapi: '3.0.0', info: { title: 'topoqueue', version: `${group || 'core'}/${version}` }, paths };
}

interface Built {
  index: object;
  docs: Map<string, string>;
}

let built: Built | undefined;

function build(): Built {
  if (built) return built;
  const docs = new Map<string, string>();
  const paths: Record<string, object> = {};
  for (const gv of groupVersions()) {
    const key = gvPath(gv.group, gv.version);
    const text = JSON.stringify(document(gv.group, gv.version, gv.resources));
    const hash = createHash('sha256').update(text).digest('hex').slice(0, 32).toUpperCase();
    docs.set(key, text);
    paths[key] = { serverRelativeURL: `/openapi/v3/${key}?hash=${hash}` };
  }
  built = { index: { paths }, docs };
  return built;
}

/** `GET /openapi/v3`. */
export function openApiIndex(): object {
  return build().index;
}

/** `GET /openapi/v3/<api/v1 | apis/g/v>` as JSON text, or undefined. */
export function openApiDocument(path: string): string | undefined {
  return build().docs.get(path);
}
