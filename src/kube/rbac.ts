// The RBAC rules of `topoqueue controller`, least privilege: list and watch for every kind a
// controller keeps an informer of (asked of the controllers themselves, by setting them up
// on an empty store), and the writes each controller makes (the table below, one line per
// resource with the reason). The end-to-end test records every request the controller sends
// over HTTP and checks each against these rules (`allows`).

import type { KObject } from '../api/objects.ts';
import { defaultConfig } from '../controllers/config.ts';
import { allControllers } from '../controllers/index.ts';
import { objectValidationHooks } from '../controllers/object-webhook.ts';
import { VirtualClock } from '../runtime/clock.ts';
import { Manager } from '../runtime/manager.ts';
import { MemoryStore } from '../runtime/memory-store.ts';
import type { AdmissionHook } from '../runtime/store.ts';
import { RESOURCES } from './resources.ts';

export interface PolicyRule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
  resourceNames?: string[];
}

/** Writes, by resource (`plural.group`, '' group for core), with why. */
const WRITES: readonly { resource: string; group: string; verbs: string[]; why: string }[] = [
  {
    group: 'kueue.x-k8s.io',
    resource: 'workloads',
    verbs: ['create', 'update', 'delete'],
    why: 'job reconcilers create, adopt, finish and delete Workloads',
  },
  { group: 'kueue.x-k8s.io', resource: 'workloads/status', verbs: ['update'], why: 'admission, eviction, PodsReady, Finished' },
  { group: 'kueue.x-k8s.io', resource: 'clusterqueues/status', verbs: ['update'], why: 'usage and pending counts' },
  { group: 'kueue.x-k8s.io', resource: 'localqueues/status', verbs: ['update'], why: 'usage and pending counts' },
  { group: 'kueue.x-k8s.io', resource: 'cohorts/status', verbs: ['update'], why: 'usage' },
  {
    group: '',
    resource: 'pods',
    verbs: ['update', 'delete'],
    why: 'ungating (scheduling gates, node selectors), replacing pods of failed nodes, excess pods',
  },
  {
    group: '',
    resource: 'pods/status',
    verbs: ['update'],
    why: 'TerminationTarget before stopping a pod; Failed with TerminatedByKueue on a failed node',
  },
  { group: '', resource: 'events', verbs: ['create', 'update'], why: 'Events (repeats update the count)' },
  { group: 'batch', resource: 'jobs', verbs: ['update'], why: 'suspend and resume with the admitted node selectors' },
  { group: 'jobset.x-k8s.io', resource: 'jobsets', verbs: ['update'], why: 'suspend and resume' },
  { group: 'kubeflow.org', resource: 'mpijobs', verbs: ['update'], why: 'suspend and resume' },
  { group: 'leaderworkerset.x-k8s.io', resource: 'leaderworkersets', verbs: ['update'], why: 'pod-group integration' },
  { group: 'batch.volcano.sh', resource: 'jobs', verbs: ['update'], why: 'suspend and resume' },
  { group: 'training.volcano.sh', resource: 'hyperjobs', verbs: ['update'], why: 'suspend and resume' },
  { group: 'scheduling.volcano.sh', resource: 'podgroups/status', verbs: ['update'], why: 'PodGroup phase and conditions' },
  { group: 'scheduling.x-k8s.io', resource: 'podgroups/status', verbs: ['update'], why: 'PodGroup phase' },
  { group: 'scheduling.sigs.k8s.io', resource: 'podgroups/status', verbs: ['update'], why: 'PodGroup phase' },
  { group: 'topology.volcano.sh', resource: 'hypernodes/status', verbs: ['update'], why: 'HyperNode node counts' },
];

/** The controllers set up on an empty in-memory store: the kinds they watch and the admission hooks they register. */
export function controllerSurface(): { informerKinds: string[]; hooks: AdmissionHook[] } {
  const hooks: AdmissionHook[] = [];
  const memory = new MemoryStore({ clock: new VirtualClock() });
  const store = new Proxy(memory, {
    get(target, prop) {
      if (prop === 'addAdmissionHook') return (h: AdmissionHook) => hooks.push(h);
      const v = Reflect.get(target, prop, target) as unknown;
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
  const manager = new Manager({ store, clock: new VirtualClock(), config: defaultConfig() });
  const ctx = manager.context;
  // setup only (no informers started): what each controller asks for.
  for (const c of allControllers()) c.setup(ctx, manager.add(c), manager.events.recorder(c.name));
  // The event recorder reads Events back to fold repeats (leader election reads its Lease directly).
  const informerKinds = [...new Set([...manager.informers.kinds(), 'Event'])];
  return { informerKinds, hooks: [...hooks, ...objectValidationHooks()] };
}

/** The ClusterRole's rules: list/watch of every informer kind (every group serving it), then the writes. */
export function clusterRules(informerKinds: readonly string[]): PolicyRule[] {
  const byGroup = new Map<string, Map<string, Set<string>>>();
  const add = (group: string, resource: string, verbs: readonly string[]) => {
    const g = byGroup.get(group) ?? new Map<string, Set<string>>();
    byGroup.set(group, g);
    const v = g.get(resource) ?? new Set<string>();
    g.set(resource, v);
    for (const x of verbs) v.add(x);
  };
  for (const kind of informerKinds) {
    for (const r of RESOURCES.filter((x) => x.kind === kind)) add(r.group, r.plural, ['list', 'watch']);
  }
  // An update from a cached object goes as a merge patch (client-store.ts): `patch` beside every `update`.
  for (const w of WRITES) add(w.group, w.resource, w.verbs.includes('update') ? [...w.verbs, 'patch'] : w.verbs);
  const rules: PolicyRule[] = [];
  for (const [group, resources] of [...byGroup].sort(([a], [b]) => a.localeCompare(b))) {
    // One rule per distinct verb set in the group.
    const bySet = new Map<string, string[]>();
    for (const [resource, verbs] of [...resources].sort(([a], [b]) => a.localeCompare(b))) {
      const key = [...verbs].sort().join(',');
      bySet.set(key, [...(bySet.get(key) ?? []), resource]);
    }
    for (const [verbs, res] of bySet) rules.push({ apiGroups: [group], resources: res, verbs: verbs.split(',') });
  }
  rules.push({
    apiGroups: ['admissionregistration.k8s.io'],
    resources: ['mutatingwebhookconfigurations', 'validatingwebhookconfigurations'],
    verbs: ['get', 'update'],
    resourceNames: ['topoqueue-mutating-webhook-configuration', 'topoqueue-validating-webhook-configuration'],
  });
  return rules;
}

/** The leader-election Role (in topoqueue's namespace). */
export function leaderElectionRules(): PolicyRule[] {
  return [{ apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['create', 'get', 'update'] }];
}

/** Does one of the rules allow this request (`verb`, group, `resource[/subresource]`)? */
export function allows(rules: readonly PolicyRule[], verb: string, group: string, resource: string): boolean {
  return rules.some(
    (r) =>
      (r.apiGroups.includes(group) || r.apiGroups.includes('*')) &&
      (r.resources.includes(resource) || r.resources.includes('*')) &&
      (r.verbs.includes(verb) || r.verbs.includes('*')),
  );
}

export const SERVICE_ACCOUNT = 'topoqueue-controller-manager';

export function rbacObjects(namespace: string, rules = clusterRules(controllerSurface().informerKinds)): KObject[] {
  const labels = { 'app.kubernetes.io/name': 'topoqueue' };
  const subject = [{ kind: 'ServiceAccount', name: SERVICE_ACCOUNT, namespace }];
  return [
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: SERVICE_ACCOUNT, namespace, labels } },
    { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: 'topoqueue-manager-role', labels }, rules },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: 'topoqueue-manager-rolebinding', labels },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'topoqueue-manager-role' },
      subjects: subject,
    },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'Role',
      metadata: { name: 'topoqueue-leader-election-role', namespace, labels },
      rules: leaderElectionRules(),
    },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name: 'topoqueue-leader-election-rolebinding', namespace, labels },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'topoqueue-leader-election-role' },
      subjects: subject,
    },
  ] as KObject[];
}

/** An API request as RBAC sees it: `GET /apis/kueue.x-k8s.io/v1beta2/namespaces/a/workloads/w/status` -> update-less `get`, group, `workloads/status`. */
export function requestAttributes(method: string, path: string): { verb: string; group: string; resource: string } {
  const parts = path.split('?')[0]!.split('/').filter(Boolean);
  let group = '';
  let rest: string[];
  if (parts[0] === 'api') rest = parts.slice(2);
  else {
    group = parts[1] ?? '';
    rest = parts.slice(3);
  }
  if (rest[0] === 'namespaces' && rest.length >= 3) rest = rest.slice(2);
  const [resource = '', name, sub] = rest;
  const verb =
    method === 'WATCH'
      ? 'watch'
      : method === 'GET'
        ? name
          ? 'get'
          : 'list'
        : method === 'POST'
          ? 'create'
          : method === 'PUT'
            ? 'update'
            : method === 'DELETE'
              ? name
                ? 'delete'
                : 'deletecollection'
              : method === 'PATCH'
                ? 'patch'
                : method.toLowerCase();
  return { verb, group, resource: sub ? `${resource}/${sub}` : resource };
}
