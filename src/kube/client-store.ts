// An ObjectStore backed by a Kubernetes API server, through @kubernetes/client-node: the
// store `topoqueue controller` runs the controllers on, beside kube-scheduler on a real
// cluster (or against `topoqueue serve` in the tests).
//
// - Reads (get, list, watch) come from caches, one per kind, fed by reflectors
//   (reflector.ts: paged LIST, WATCH with bookmarks, relist on 410, backoff). A kind's
//   cache starts on its first read and the read waits for its first list. A kind the
//   server does not serve (no such CRD installed) reads as empty.
// - Writes go to the server: create is a POST; update (updateStatus: to the status
//   subresource) of an object read from the cache is a JSON merge patch (RFC 7386) of what
//   the controller changed against the cached object of that resourceVersion, carrying the
//   resourceVersion (a precondition: a stale one is a 409 Conflict), so the fields the
//   caches drop on ingest (reflector.ts, STRIPPED) stay on the server; an update of any other
//   object is a PUT with its resourceVersion. Delete is a DELETE with resourceVersion/uid
//   preconditions. Each write's answer goes into the cache at once, so a controller reads
//   its own writes.
// - Every request goes through a token bucket (rate-limiter.ts) and auth from the kubeconfig
//   (client-node's `applySecurityAuthentication`: tokens, client certificates, exec plugins,
//   in-cluster service accounts).
// - Admission hooks are not run here: on a cluster, the API server calls topoqueue's webhooks
//   (webhook-server.ts), which serve the hooks registered on this store.
// - The store is keyed by kind, like the in-memory one; a kind served by several groups
//   (batch/v1 and Volcano's Job, three PodGroups) reads as the union of its groups.

import * as k8s from '@kubernetes/client-node';
import type { KObject } from '../api/objects.ts';
import { CLUSTER_SCOPED_KINDS } from '../runtime/memory-store.ts';
import {
  AlreadyExistsError,
  BadRequestError,
  ConflictError,
  type AdmissionHook,
  type DeleteOptions,
  InvalidError,
  type ListOptions,
  type ListResult,
  NotFoundError,
  type ObjectStore,
  StoreError,
  type WatchHandler,
  type WatchOptions,
} from '../runtime/store.ts';
import { TokenBucket } from './rate-limiter.ts';
import { ingest, KindCache, type Reflected } from './reflector.ts';
import { apiVersionOf, RESOURCES, type Resource, resourceFor } from './resources.ts';

export interface ClientStoreOptions {
  kubeConfig: k8s.KubeConfig;
  /** Requests per second and burst (client-go's token bucket; default 5 and 10, client-go's). */
  qps?: number;
  burst?: number;
  /** LIST page size (default 500, client-go's reflector default). */
  pageSize?: number;
  /** Called for every request sent (verb, path): the RBAC check and the bench count them. */
  onRequest?: (verb: string, path: string) => void;
  /** How long a write waits for its watch event before resolving anyway (default 5 s). */
  writeWaitMs?: number;
  /** Called when a reflector loses its list or watch and retries. */
  onReflectorError?: (resource: string, err: unknown) => void;
}

type Json = Record<string, unknown>;

/** An HTTP error answer as a store error (the Status' reason and message, word for word). */
export function statusError(code: number, body: string, fallback: string): StoreError {
  let status: { reason?: string; message?: string } = {};
  try {
    status = JSON.parse(body) as typeof status;
  } catch {
    // not a Status: keep the fallback message
  }
  const message = status.message ?? fallback;
  let e: StoreError;
  if (code === 404) e = new NotFoundError('', undefined, '');
  else if (code === 409 && status.reason === 'AlreadyExists') e = new AlreadyExistsError('', '');
  else if (code === 409) e = new ConflictError('', '');
  else if (code === 422) e = new InvalidError(message);
  else if (code === 400) e = new BadRequestError(message);
  else e = new StoreError(code, 'BadRequest', message);
  e.message = message;
  return e;
}

const MERGE_PATCH = 'application/merge-patch+json';

const isPlainObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The JSON merge patch (RFC 7386) turning `base` into `next`: changed and added fields, `null` for removed ones; lists whole. */
export function mergeDiff(base: Json, next: Json): Json {
  const patch: Json = {};
  for (const k of new Set([...Object.keys(base), ...Object.keys(next)])) {
    const a = base[k];
    const b = next[k];
    if (b === undefined) {
      if (a !== undefined) patch[k] = null;
    } else if (a === undefined) patch[k] = b;
    else if (isPlainObject(a) && isPlainObject(b)) {
      const sub = mergeDiff(a, b);
      if (Object.keys(sub).length > 0) patch[k] = sub;
    } else if (JSON.stringify(a) !== JSON.stringify(b)) patch[k] = b;
  }
  return patch;
}

/** An update as a merge patch against the cached object, the resourceVersion as its precondition. */
function mergePatchOf(base: KObject, next: KObject, resourceVersion: string): Json {
  const patch = mergeDiff(base as unknown as Json, next as unknown as Json);
  const metadata = isPlainObject(patch.metadata) ? patch.metadata : {};
  return { ...patch, metadata: { ...metadata, resourceVersion } };
}

const SERVER_OWNED = ['uid', 'resourceVersion', 'creationTimestamp', 'deletionTimestamp', 'generation'] as const;

export class ClientStore implements ObjectStore {
  readonly limiter: TokenBucket;
  /** Requests sent, per `VERB resource` (the bench and the RBAC check read it). */
  readonly requests = new Map<string, number>();
  private readonly kc: k8s.KubeConfig;
  private readonly server: string;
  private readonly http = new k8s.IsomorphicFetchHttpLibrary();
  private readonly caches = new Map<string, KindCache>();
  private readonly hooks: AdmissionHook[] = [];
  private readonly pageSize: number;
  private closed = false;

  constructor(private readonly opts: ClientStoreOptions) {
    this.kc = opts.kubeConfig;
    const cluster = this.kc.getCurrentCluster();
    if (!cluster) throw new Error('the kubeconfig has no current cluster');
    this.server = cluster.server.replace(/\/+$/, '');
    this.limiter = new TokenBucket(opts.qps, opts.burst);
    this.pageSize = opts.pageSize ?? 500;
  }

  namespaced(kind: string): boolean {
    return !CLUSTER_SCOPED_KINDS.has(kind);
  }

  /** The admission hooks the controllers registered: webhook-server.ts serves them. */
  admissionHooks(): readonly AdmissionHook[] {
    return this.hooks;
  }

  addAdmissionHook(hook: AdmissionHook): void {
    this.hooks.push(hook);
  }

  /** Starts the caches of these kinds and waits for their first lists. */
  async prime(kinds: readonly string[]): Promise<void> {
    await Promise.all(kinds.map((k) => this.cache(k).synced));
  }

  /** Stops every reflector (open watches are aborted). */
  close(): void {
    this.closed = true;
    for (const c of this.caches.values()) c.stop();
  }

  // --- reads, from the caches ----------------------------------------------------------

  get<T extends KObject>(kind: string, namespace: string | undefined, name: string): Promise<T | undefined>;
  async get(kind: string, namespace: string | undefined, name: string): Promise<KObject | undefined> {
    const c = this.cache(kind);
    await c.synced;
    return c.get(this.namespaced(kind) ? (namespace ?? 'default') : undefined, name);
  }

  list<T extends KObject>(kind: string, opts?: ListOptions): Promise<ListResult<T>>;
  async list(kind: string, opts: ListOptions = {}): Promise<ListResult<KObject>> {
    const c = this.cache(kind);
    await c.synced;
    return c.list(this.namespaced(kind) ? opts.namespace : undefined, opts.labelSelector);
  }

  watch<T extends KObject>(kind: string, handler: WatchHandler<T>, opts?: WatchOptions): () => void;
  watch(kind: string, handler: WatchHandler, opts: WatchOptions = {}): () => void {
    return this.cache(kind).subscribe(handler, this.namespaced(kind) ? opts.namespace : undefined);
  }

  // --- writes, to the server -----------------------------------------------------------

  async create<T extends KObject>(obj: T): Promise<T> {
    const r = this.resourceOf(obj);
    const body = structuredClone(obj) as T;
    for (const f of SERVER_OWNED) delete body.metadata[f];
    if (r.namespaced) body.metadata.namespace ??= 'default';
    else delete body.metadata.namespace;
    if (!body.metadata.name && !body.metadata.generateName)
      throw new InvalidError(`${r.kind} "" is invalid: metadata.name: Required value: name or generateName is required`);
    const out = await this.send<T>('POST', this.path(r, body.metadata.namespace), body);
    return this.noteWrite(r, out);
  }

  update<T extends KObject>(obj: T): Promise<T> {
    return this.put(obj, false);
  }

  updateStatus<T extends KObject>(obj: T): Promise<T> {
    return this.put(obj, true);
  }

  private async put<T extends KObject>(obj: T, status: boolean): Promise<T> {
    const r = this.resourceOf(obj);
    const ns = this.ns(r, obj);
    const c = this.caches.get(r.kind);
    const cached = c?.get(ns, obj.metadata.name);
    const path = this.path(r, ns, obj.metadata.name) + (status && r.status ? '/status' : '');
    const target = { kind: r.kind, namespace: ns, name: obj.metadata.name };
    // From the cache (the same version): a merge patch of the change, which cannot drop what the cache stripped.
    const base =
      cached &&
      cached.apiVersion === obj.apiVersion &&
      obj.metadata.resourceVersion &&
      cached.metadata.resourceVersion === obj.metadata.resourceVersion
        ? cached
        : undefined;
    const out = base
      ? await this.send<T>('PATCH', path, mergePatchOf(base, obj, obj.metadata.resourceVersion!), target, MERGE_PATCH)
      : await this.send<T>('PUT', path, obj, target);
    // Removing the last finalizer of an object being deleted removes it.
    if (!status && c && cached?.metadata.deletionTimestamp && (obj.metadata.finalizers?.length ?? 0) === 0) {
      await c.forget(r, ns, obj.metadata.name);
      return ingest(out);
    }
    return this.noteWrite(r, out);
  }

  delete<T extends KObject>(kind: string, namespace: string | undefined, name: string, opts?: DeleteOptions): Promise<T | undefined>;
  async delete(kind: string, namespace: string | undefined, name: string, opts: DeleteOptions = {}): Promise<KObject | undefined> {
    const ns = this.namespaced(kind) ? (namespace ?? 'default') : undefined;
    const c = this.cache(kind);
    await c.synced;
    // The group: the cached object's, else the kind's first (a miss is the server's 404).
    const cached = c.get(ns, name);
    const r = (cached && resourceFor(cached.apiVersion, kind)) ?? this.resourcesOf(kind)[0]!;
    const preconditions: Json = {};
    if (opts.resourceVersion !== undefined) preconditions.resourceVersion = opts.resourceVersion;
    if (opts.uid !== undefined) preconditions.uid = opts.uid;
    const body = { apiVersion: 'v1', kind: 'DeleteOptions', ...(Object.keys(preconditions).length > 0 ? { preconditions } : {}) };
    const out = await this.send<KObject & { status?: unknown }>('DELETE', this.path(r, ns, name), body, { kind, namespace: ns, name });
    const left = out && out.kind === r.kind && out.metadata?.deletionTimestamp && (out.metadata.finalizers?.length ?? 0) > 0;
    if (left) return this.noteWrite(r, out);
    await c.forget(r, ns, name);
    return undefined;
  }

  // --- plumbing ------------------------------------------------------------------------

  private cache(kind: string): KindCache {
    let c = this.caches.get(kind);
    if (!c) {
      if (this.closed) throw new Error('the client store is closed');
      const reflected: Reflected[] = this.resourcesOf(kind).map((r) => ({
        resource: r,
        list: (query) =>
          this.send<{ items?: KObject[]; metadata?: { resourceVersion?: string; continue?: string } }>(
            'GET',
            this.path(r, undefined) + query,
          ),
        watch: (query, onEvent, done) => this.watchPath(r, query, onEvent, done),
      }));
      c = new KindCache(kind, reflected, {
        pageSize: this.pageSize,
        onError: this.opts.onReflectorError,
        writeWaitMs: this.opts.writeWaitMs,
      });
      this.caches.set(kind, c);
      c.start();
    }
    return c;
  }

  private resourcesOf(kind: string): Resource[] {
    const rs = RESOURCES.filter((r) => r.kind === kind);
    if (rs.length === 0)
      throw new BadRequestError(`the server could not find the requested resource: no kind "${kind}" is known to topoqueue`);
    return rs;
  }

  private resourceOf(obj: KObject): Resource {
    const r = resourceFor(obj.apiVersion, obj.kind) ?? RESOURCES.find((x) => x.kind === obj.kind && !obj.apiVersion);
    if (!r) throw new BadRequestError(`no matches for kind "${obj.kind}" in version "${obj.apiVersion}"`);
    return r;
  }

  private ns(r: Resource, obj: KObject): string | undefined {
    return r.namespaced ? (obj.metadata.namespace ?? 'default') : undefined;
  }

  private path(r: Resource, namespace: string | undefined, name?: string): string {
    const base = r.group ? `/apis/${apiVersionOf(r)}` : `/api/${r.version}`;
    const ns = r.namespaced && namespace !== undefined ? `/namespaces/${encodeURIComponent(namespace)}` : '';
    return `${base}${ns}/${r.plural}${name !== undefined ? `/${encodeURIComponent(name)}` : ''}`;
  }

  private count(verb: string, path: string): void {
    const resource = path
      .split('?')[0]!
      .replace(/\/namespaces\/[^/]+/, '')
      .replace(/^\/apis?\//, '');
    const key = `${verb} ${resource}`;
    this.requests.set(key, (this.requests.get(key) ?? 0) + 1);
    this.opts.onRequest?.(verb, path);
  }

  /** A request to any path (kinds outside the store: webhook configurations...), through the same limiter and auth. */
  request<T>(method: 'GET' | 'POST' | 'PUT' | 'DELETE', path: string, body?: unknown): Promise<T> {
    return this.send<T>(method, path, body);
  }

  /** One request through the rate limiter and the kubeconfig's auth; a non-2xx answer throws the StoreError its Status names. */
  private async send<T>(
    method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE',
    path: string,
    body?: unknown,
    target?: { kind: string; namespace: string | undefined; name: string },
    contentType = 'application/json',
  ): Promise<T> {
    await this.limiter.take();
    this.count(method, path);
    const ctx = new k8s.RequestContext(this.server + path, method as k8s.HttpMethod);
    ctx.setHeaderParam('Accept', 'application/json');
    if (body !== undefined) {
      ctx.setHeaderParam('Content-Type', contentType);
      ctx.setBody(JSON.stringify(body));
    }
    await this.kc.applySecurityAuthentication(ctx);
    const res = await this.http.send(ctx).toPromise();
    const text = await res.body.text();
    if (res.httpStatusCode >= 200 && res.httpStatusCode < 300) return (text ? JSON.parse(text) : undefined) as T;
    // A missing named object: the store contract's NotFound, which names the namespace.
    if (res.httpStatusCode === 404 && target) throw new NotFoundError(target.kind, target.namespace, target.name);
    throw statusError(res.httpStatusCode, text, `${method} ${path}: HTTP ${res.httpStatusCode}`);
  }

  private async watchPath(
    r: Resource,
    query: Record<string, string>,
    onEvent: (type: string, obj: Json) => void,
    done: (err: unknown) => void,
  ): Promise<AbortController> {
    await this.limiter.take();
    const path = this.path(r, undefined);
    this.count('WATCH', path);
    return new k8s.Watch(this.kc).watch(path, query, (type, obj) => onEvent(type, obj as Json), done);
  }

  /** Puts a write's answer in the kind's cache (when it has one) and waits until its watch has delivered it. */
  private async noteWrite<T extends KObject>(r: Resource, obj: T): Promise<T> {
    const kept = ingest(obj);
    await this.caches.get(r.kind)?.noteWrite(r, kept);
    return kept;
  }
}

/** A kubeconfig from a file, the default places (KUBECONFIG, ~/.kube/config), or the pod's service account. */
export function loadKubeConfig(opts: { kubeconfig?: string; context?: string }): k8s.KubeConfig {
  const kc = new k8s.KubeConfig();
  if (opts.kubeconfig) kc.loadFromFile(opts.kubeconfig);
  else if (process.env.KUBERNETES_SERVICE_HOST && !process.env.KUBECONFIG) kc.loadFromCluster();
  else kc.loadFromDefault();
  if (opts.context) {
    if (!kc.getContextObject(opts.context))
      throw new Error(
        `context "${opts.context}" is not in the kubeconfig (contexts: ${
          kc
            .getContexts()
            .map((c) => c.name)
            .join(', ') || 'none'
        })`,
      );
    kc.setCurrentContext(opts.context);
  }
  if (!kc.getCurrentCluster()) throw new Error('the kubeconfig names no current cluster');
  return kc;
}

/** A kubeconfig for one server URL without credentials (client-node needs skipTLSVerify for an http:// one). */
export function kubeConfigFor(server: string): k8s.KubeConfig {
  const kc = new k8s.KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'tq', server, skipTLSVerify: true }],
    users: [{ name: 'anon' }],
    contexts: [{ name: 'tq', cluster: 'tq', user: 'anon', namespace: 'default' }],
    currentContext: 'tq',
  });
  return kc;
}
