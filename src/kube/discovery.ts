// Discovery (kubectl-facade.md §2): aggregated v2 for `/api` and `/apis` when the client
// asks for it (with the exact Content-Type kubectl requires), legacy APIVersions /
// APIGroupList otherwise, and the per-group/version APIResourceList that drain and
// client-node read directly. Every group/version served has at least one resource.

import { apiVersionOf, groupVersions, type Resource, RESOURCE_VERBS } from './resources.ts';

export const AGGREGATED_CONTENT_TYPE = 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList';

/** Does the Accept header ask for aggregated discovery (v2 or v2beta1)? */
export function wantsAggregated(accept: string | undefined): boolean {
  return accept !== undefined && /as=APIGroupDiscoveryList/.test(accept) && /g=apidiscovery\.k8s\.io/.test(accept);
}

const gvk = (r: Resource) => ({ group: r.group, version: r.version, kind: r.kind });

function aggregatedResource(r: Resource) {
  const subresources: object[] = [];
  if (r.status) subresources.push({ subresource: 'status', responseKind: gvk(r), verbs: ['get', 'patch', 'update'] });
  if (r.kind === 'Pod' && r.group === '') {
    subresources.push({ subresource: 'eviction', responseKind: { group: 'policy', version: 'v1', kind: 'Eviction' }, verbs: ['create'] });
    subresources.push({ subresource: 'log', responseKind: { group: '', version: 'v1', kind: 'Pod' }, verbs: ['get'] });
  }
  return {
    resource: r.plural,
    responseKind: gvk(r),
    scope: r.namespaced ? 'Namespaced' : 'Cluster',
    singularResource: r.singular,
    verbs: RESOURCE_VERBS,
    ...(r.shortNames.length > 0 ? { shortNames: r.shortNames } : {}),
    ...(r.categories.length > 0 ? { categories: r.categories } : {}),
    ...(subresources.length > 0 ? { subresources } : {}),
  };
}

/** `GET /api` (core) or `GET /apis` (every other group), aggregated. */
export function aggregatedDiscovery(core: boolean): object {
  const groups = new Map<string, { version: string; resources: Resource[] }[]>();
  for (const gv of groupVersions()) {
    if ((gv.group === '') !== core) continue;
    groups.set(gv.group, [...(groups.get(gv.group) ?? []), gv]);
  }
  return {
    kind: 'APIGroupDiscoveryList',
    apiVersion: 'apidiscovery.k8s.io/v2',
    metadata: {},
    items: [...groups].map(([group, versions]) => ({
      metadata: { name: group },
      versions: versions.map((v) => ({ version: v.version, freshness: 'Current', resources: v.resources.map(aggregatedResource) })),
    })),
  };
}

export function legacyApiVersions(address: string): object {
  return { kind: 'APIVersions', versions: ['v1'], serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress: address }] };
}

function apiGroup(group: string) {
  const versions = groupVersions()
    .filter((gv) => gv.group === group)
    .map((gv) => ({ groupVersion: `${group}/${gv.version}`, version: gv.version }));
  return versions.length === 0 ? undefined : { kind: 'APIGroup', apiVersion: 'v1', name: group, versions, preferredVersion: versions[0] };
}

export function legacyGroupList(): object {
  const names = [...new Set(groupVersions().map((gv) => gv.group))].filter((g) => g !== '');
  return { kind: 'APIGroupList', apiVersion: 'v1', groups: names.map((g) => apiGroup(g)!) };
}

/** `GET /apis/<group>`, or undefined for a group not served. */
export function legacyGroup(group: string): object | undefined {
  return apiGroup(group);
}

/** `GET /api/v1` or `GET /apis/<g>/<v>`, or undefined for a group/version not served. */
export function resourceList(group: string, version: string): object | undefined {
  const gv = groupVersions().find((x) => x.group === group && x.version === version);
  if (!gv) return undefined;
  const resources: object[] = [];
  for (const r of gv.resources) {
    resources.push({
      name: r.plural,
      singularName: r.singular,
      namespaced: r.namespaced,
      kind: r.kind,
      verbs: RESOURCE_VERBS,
      ...(r.shortNames.length > 0 ? { shortNames: r.shortNames } : {}),
      ...(r.categories.length > 0 ? { categories: r.categories } : {}),
    });
    if (r.status)
      resources.push({
        name: `${r.plural}/status`,
        singularName: '',
        namespaced: r.namespaced,
        kind: r.kind,
        verbs: ['get', 'patch', 'update'],
      });
    if (r.kind === 'Pod' && r.group === '') {
      resources.push({
        name: 'pods/eviction',
        singularName: '',
        namespaced: true,
        group: 'policy',
        version: 'v1',
        kind: 'Eviction',
        verbs: ['create'],
      });
      resources.push({ name: 'pods/log', singularName: '', namespaced: true, kind: 'Pod', verbs: ['get'] });
    }
  }
  return { kind: 'APIResourceList', apiVersion: 'v1', groupVersion: apiVersionOf(gv.resources[0]!), resources };
}
