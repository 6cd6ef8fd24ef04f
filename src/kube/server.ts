// The Kubernetes REST API over an ObjectStore (kubectl-facade.md): discovery, the OpenAPI
// stub, GET/LIST with selectors and tables, watch with replay, create/update/delete with
// dryRun, merge/JSON/strategic/apply patches, the status subresource, pods/eviction, and
// Status errors as kube-apiserver writes them. Plain node:http, JSON on the wire.
//
// Every write goes through the store, so its admission hooks (the pod and job webhooks)
// run as they would on a real API server. Every handler runs inside one try/catch that
// answers a Status: nothing a client sends can crash the server, and a request is either
// written whole or not at all.

import { DNS_SUBDOMAIN_PROBLEM, isDnsSubdomain } from '../api/names.ts';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parse as parseYaml } from 'yaml';
import type { KObject } from '../api/objects.ts';
import { kindEntry, parseObject } from '../api/schemas.ts';
import type { Clock } from '../runtime/clock.ts';
import { isConflict, isNotFound, type ObjectStore } from '../runtime/store.ts';
import {
  aggregatedDiscovery,
  AGGREGATED_CONTENT_TYPE,
  legacyApiVersions,
  legacyGroup,
  legacyGroupList,
  resourceList,
  wantsAggregated,
} from './discovery.ts';
import {
  alreadyExists,
  ApiError,
  badRequest,
  causeOf,
  conflict,
  expired,
  invalid,
  invalidFromInput,
  methodNotAllowed,
  noSuchPath,
  notFound,
  type StatusCause,
  toApiError,
  tooLarge,
  unsupportedMediaType,
} from './errors.ts';
import { openApiDocument, openApiIndex } from './openapi.ts';
import { jsonPatch, mergePatch, PatchError, serverSideApply, strategicMergePatch } from './patch/index.ts';
import { decodeProtobufCreate, isProtobuf } from './protobuf.ts';
import { apiVersionOf, type Resource, resourceAt, sameGroup, storedKinds } from './resources.ts';
import { fieldsMatch, labelsMatch, parseFieldSelector, parseLabelSelector } from './selectors.ts';
import { table, type TableOptions } from './table.ts';
import { type LogEvent, storeResourceVersion, WatchLog } from './watch-log.ts';

/** kube-apiserver's request body limit. */
export const MAX_BODY_BYTES = 3 * 1024 * 1024;
/** Bytes a watch may have waiting for a client that does not read before it is cut off. */
const MAX_WATCH_BUFFER = 64 * 1024 * 1024;
/** kube-apiserver's limit on the total size of an object's annotations. */
const MAX_ANNOTATION_BYTES = 256 * 1024;

export const VERSION_INFO = {
  major: '1',
  minor: '32',
  gitVersion: 'v1.32.0-topoqueue',
  gitCommit: '0000000000000000000000000000000000000000',
  gitTreeState: 'clean',
  buildDate: '2026-01-01T00:00:00Z',
  goVersion: 'go1.23.0',
  compiler: 'gc',
  platform: 'linux/amd64',
} as const;

const MERGE = 'application/merge-patch+json';
const JSON_PATCH = 'application/json-patch+json';
const SMP = 'application/strategic-merge-patch+json';
const APPLY = 'application/apply-patch+yaml';
const PATCH_TYPES_CR = [JSON_PATCH, MERGE, APPLY];
const PATCH_TYPES_BUILTIN = [...PATCH_TYPES_CR, SMP];
const BODY_TYPES = ['application/json', 'application/yaml', 'application/vnd.kubernetes.protobuf'];

/** Where SSA keeps each field manager's last applied configuration (see docs/serve.md). */
export const APPLIED_ANNOTATION_PREFIX = 'apply.topoqueue.io/';

export interface ApiServerOptions {
  store: ObjectStore;
  clock: Clock;
  /** The `/metrics` text (Prometheus exposition format). */
  metrics?: () => Promise<string>;
  /** Create a missing namespace when an object is created in it, with a Warning (default true). */
  autoNamespaces?: boolean;
  /** Events the watch log keeps (default 100,000). */
  watchLogCapacity?: number;
  maxBodyBytes?: number;
  /** Bookmark interval for watches that allow them, in ms (default 30 s). */
  bookmarkMs?: number;
  /** Warnings added to every write's response (e.g. that the cluster is simulated). */
  writeWarnings?: readonly string[];
  /** Asked for a GET of a path the API does not serve (e.g. the dashboard's `/`); true when it answered. */
  fallback?: (req: IncomingMessage, res: ServerResponse) => boolean;
}

type Any = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

interface Target {
  r: Resource;
  namespace?: string;
  name?: string;
  sub?: string;
}

class Reply {
  readonly warnings: string[] = [];
  constructor(readonly res: ServerResponse) {}
}

const isRecord = (v: unknown): v is Any => typeof v === 'object' && v !== null && !Array.isArray(v);
const mediaType = (h: string | undefined) => (h ?? '').split(';')[0]!.trim().toLowerCase();

export class ApiServer {
  readonly log: WatchLog;
  private readonly store: ObjectStore;
  private readonly clock: Clock;
  private readonly opts: ApiServerOptions;
  private readonly maxBody: number;
  private server?: Server;
  private readonly streams = new Set<ServerResponse>();
  private inFlight = 0;
  private idle?: () => void;
  /** Requests answered so far (for /metrics and the benchmark). */
  requests = 0;

  constructor(opts: ApiServerOptions) {
    this.opts = opts;
    this.store = opts.store;
    this.clock = opts.clock;
    this.maxBody = opts.maxBodyBytes ?? MAX_BODY_BYTES;
    this.log = new WatchLog(opts.store, storedKinds(), opts.watchLogCapacity);
  }

  /** Listens; resolves with the bound port (port 0 picks a free one). */
  listen(port: number, host = '127.0.0.1'): Promise<number> {
    const server = createServer({ keepAlive: true }, (req, res) => void this.handle(req, res));
    server.requestTimeout = 0;
    server.on('clientError', (_err, socket) => {
      if (socket.writable) socket.end('HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n');
      else socket.destroy();
    });
    this.server = server;
    return new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => {
        server.off('error', reject);
        resolve((server.address() as AddressInfo).port);
      });
    });
  }

  /** Stops accepting requests, ends every watch, waits for in-flight writes, stops following the store. */
  /** Ends every open watch (clients re-watch from their last resourceVersion). */
  closeWatches(): void {
    for (const s of [...this.streams]) s.end();
    this.streams.clear();
  }

  async close(): Promise<void> {
    const server = this.server;
    this.closeWatches();
    if (server) {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      });
    }
    if (this.inFlight > 0) await new Promise<void>((resolve) => (this.idle = resolve));
    this.log.close();
  }

  /** The request handler (usable with any node:http server). */
  async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    this.requests++;
    this.inFlight++;
    const reply = new Reply(res);
    let target: Target | undefined;
    try {
      const url = new URL(req.url ?? '/', 'http://localhost');
      target = this.target(url.pathname);
      await this.route(req, reply, url, target);
    } catch (e) {
      this.fail(reply, e, target);
    } finally {
      if (--this.inFlight === 0 && this.idle) this.idle();
    }
  }

  // -------------------------------------------------------------------------------------
  // Routing
  // -------------------------------------------------------------------------------------

  /** The resource a path names, or undefined for the non-resource paths. Throws 404 for unknown resources. */
  private target(pathname: string): Target | undefined {
    const segs = pathname
      .split('/')
      .filter((s) => s !== '')
      .map(decodeSegment);
    let group: string;
    let version: string;
    let rest: string[];
    if (segs[0] === 'api' && segs.length >= 3) {
      group = '';
      version = segs[1]!;
      rest = segs.slice(2);
    } else if (segs[0] === 'apis' && segs.length >= 4) {
      group = segs[1]!;
      version = segs[2]!;
      rest = segs.slice(3);
    } else return undefined;
    let namespace: string | undefined;
    if (rest[0] === 'namespaces' && rest.length >= 3 && rest[2] !== 'status' && rest[2] !== 'finalize') {
      namespace = rest[1];
      rest = rest.slice(2);
    }
    if (rest.length > 3) throw noSuchPath();
    const r = resourceAt(group, version, rest[0]!);
    if (!r) throw noSuchPath();
    if (namespace !== undefined && !r.namespaced) throw noSuchPath();
    return { r, namespace, name: rest[1], sub: rest[2] };
  }

  private async route(req: IncomingMessage, reply: Reply, url: URL, t: Target | undefined): Promise<void> {
    const method = req.method ?? 'GET';
    const path = url.pathname.replace(/\/+$/, '') || '/';
    const accept = req.headers.accept;
    if (!t) {
      if (method !== 'GET' && method !== 'HEAD') {
        await this.readBody(req);
        throw noSuchPath();
      }
      return this.nonResource(req, reply, path, accept);
    }
    const { r, name, sub } = t;
    if (r.namespaced && name !== undefined && t.namespace === undefined) throw noSuchPath();
    if (
      sub !== undefined &&
      !(sub === 'status' && r.status) &&
      !(r.kind === 'Pod' && r.group === '' && (sub === 'eviction' || sub === 'log'))
    )
      throw noSuchPath();
    const q = url.searchParams;
    switch (method) {
      case 'GET':
        if (name === undefined)
          return q.get('watch') === 'true' || q.get('watch') === '1' ? this.watch(reply, t, q, accept) : this.list(reply, t, q, accept);
        if (sub === 'log') return this.podLog(reply, t);
        if (sub === 'eviction') throw methodNotAllowed(method);
        return this.getOne(reply, t, q, accept);
      case 'POST': {
        const body = await this.readBody(req);
        if (name === undefined) return this.create(reply, t, q, body, req.headers['content-type']);
        if (sub === 'eviction') return this.evict(reply, t, q, body, req.headers['content-type']);
        throw methodNotAllowed(method);
      }
      case 'PUT': {
        const body = await this.readBody(req);
        if (name === undefined || sub === 'eviction' || sub === 'log') throw methodNotAllowed(method);
        return this.replace(reply, t, q, body, req.headers['content-type']);
      }
      case 'PATCH': {
        const body = await this.readBody(req);
        if (name === undefined || sub === 'eviction' || sub === 'log') throw methodNotAllowed(method);
        return this.patch(reply, t, q, body, req.headers['content-type']);
      }
      case 'DELETE': {
        const body = await this.readBody(req);
        if (sub !== undefined) throw methodNotAllowed(method);
        return name === undefined ? this.deleteCollection(reply, t, q) : this.deleteOne(reply, t, q, body, req.headers['content-type']);
      }
      default:
        await this.readBody(req);
        throw methodNotAllowed(method);
    }
  }

  private async nonResource(req: IncomingMessage, reply: Reply, path: string, accept: string | undefined): Promise<void> {
    switch (path) {
      case '/version':
        return this.json(reply, 200, VERSION_INFO);
      case '/healthz':
      case '/readyz':
      case '/livez':
        return this.text(reply, 200, 'ok');
      case '/metrics':
        return this.text(reply, 200, this.opts.metrics ? await this.opts.metrics() : '', 'text/plain; version=0.0.4; charset=utf-8');
      case '/api':
        if (wantsAggregated(accept)) return this.json(reply, 200, aggregatedDiscovery(true), AGGREGATED_CONTENT_TYPE);
        return this.json(
          reply,
          200,
          legacyApiVersions(req.socket.localAddress ? `${req.socket.localAddress}:${req.socket.localPort}` : '127.0.0.1'),
        );
      case '/apis':
        if (wantsAggregated(accept)) return this.json(reply, 200, aggregatedDiscovery(false), AGGREGATED_CONTENT_TYPE);
        return this.json(reply, 200, legacyGroupList());
      case '/openapi/v3':
        return this.json(reply, 200, openApiIndex());
    }
    const segs = path.split('/').filter((s) => s !== '');
    if (segs[0] === 'api' && segs.length === 2) return this.jsonOr404(reply, resourceList('', segs[1]!));
    if (segs[0] === 'apis' && segs.length === 3) return this.jsonOr404(reply, resourceList(segs[1]!, segs[2]!));
    if (segs[0] === 'apis' && segs.length === 2) return this.jsonOr404(reply, legacyGroup(segs[1]!));
    if (segs[0] === 'openapi' && segs[1] === 'v3') {
      const doc = openApiDocument(segs.slice(2).join('/'));
      if (doc !== undefined) return this.text(reply, 200, doc, 'application/json');
    }
    if (this.opts.fallback?.(req, reply.res)) return;
    throw noSuchPath();
  }

  // -------------------------------------------------------------------------------------
  // Reads
  // -------------------------------------------------------------------------------------

  /** The stored object of this resource (same kind and group), or undefined. */
  private async live(r: Resource, namespace: string | undefined, name: string): Promise<KObject | undefined> {
    const o = await this.store.get(r.kind, r.namespaced ? namespace : undefined, name);
    return o && sameGroup(r, o) ? o : undefined;
  }

  private async mustLive(r: Resource, namespace: string | undefined, name: string): Promise<KObject> {
    const o = await this.live(r, namespace, name);
    if (!o) throw notFound(r, name);
    return o;
  }

  private tableOptions(q: URLSearchParams, rv: string): TableOptions {
    const inc = q.get('includeObject');
    return { now: this.clock.now(), resourceVersion: rv, includeObject: inc === 'Object' || inc === 'None' ? inc : 'Metadata' };
  }

  private async getOne(reply: Reply, t: Target, q: URLSearchParams, accept: string | undefined): Promise<void> {
    const o = await this.mustLive(t.r, t.namespace, t.name!);
    if (wantsTable(accept)) return this.json(reply, 200, table(t.r, [o], this.tableOptions(q, o.metadata.resourceVersion ?? '')));
    return this.json(reply, 200, o);
  }

  private selectors(t: Target, q: URLSearchParams): (o: KObject) => boolean {
    const labels = parseLabelSelector(q.get('labelSelector') ?? '');
    const fields = parseFieldSelector(q.get('fieldSelector') ?? '', t.r.kind);
    const r = t.r;
    const ns = r.namespaced ? t.namespace : undefined;
    return (o) =>
      o.kind === r.kind &&
      sameGroup(r, o) &&
      (ns === undefined || o.metadata.namespace === ns) &&
      labelsMatch(labels, o.metadata.labels) &&
      fieldsMatch(fields, o);
  }

  private async selected(t: Target, q: URLSearchParams): Promise<{ items: KObject[]; resourceVersion: string }> {
    const match = this.selectors(t, q);
    const list = await this.store.list(t.r.kind, t.r.namespaced && t.namespace !== undefined ? { namespace: t.namespace } : {});
    const items = list.items.filter(match);
    items.sort((a, b) => compareKeys(a, b));
    return { items, resourceVersion: list.resourceVersion };
  }

  private async list(reply: Reply, t: Target, q: URLSearchParams, accept: string | undefined): Promise<void> {
    const { items, resourceVersion } = await this.selected(t, q);
    if (wantsTable(accept)) return this.json(reply, 200, table(t.r, items, this.tableOptions(q, resourceVersion)));
    return this.json(reply, 200, { kind: `${t.r.kind}List`, apiVersion: apiVersionOf(t.r), metadata: { resourceVersion }, items });
  }

  private async podLog(reply: Reply, t: Target): Promise<void> {
    const p = (await this.mustLive(t.r, t.namespace, t.name!)) as Any;
    const node = p.spec?.nodeName ? ` on node ${p.spec.nodeName}` : ', not bound to a node yet';
    const started = p.status?.startTime ? `, started ${p.status.startTime}` : '';
    return this.text(
      reply,
      200,
      `topoqueue simulates pods: no container runs, so there is no log.\npod ${t.namespace}/${t.name}: phase ${p.status?.phase ?? 'Pending'}${node}${started}\n`,
    );
  }

  // -------------------------------------------------------------------------------------
  // Watch
  // -------------------------------------------------------------------------------------

  private async watch(reply: Reply, t: Target, q: URLSearchParams, accept: string | undefined): Promise<void> {
    const match = this.selectors(t, q);
    const asTable = wantsTable(accept);
    const rvParam = q.get('resourceVersion') ?? '';
    if (rvParam !== '' && !/^\d+$/.test(rvParam))
      throw badRequest(`invalid resource version "${rvParam}": a resourceVersion is a decimal number`);
    const timeout = Number(q.get('timeoutSeconds') ?? '');
    const initial: KObject[] = [];
    let from: number;
    if (rvParam === '' || rvParam === '0') {
      const { items, resourceVersion } = await this.selected(t, q);
      initial.push(...items);
      from = Number(resourceVersion);
    } else from = Number(rvParam);

    const res = reply.res;
    res.writeHead(200, {
      'Content-Type': asTable ? 'application/json;as=Table;v=v1;g=meta.k8s.io' : 'application/json',
      'Cache-Control': 'no-cache, private',
    });
    res.flushHeaders();
    const r = t.r;
    const send = (type: string, object: unknown) => {
      // A client that stops reading is cut off (it relists) rather than buffered without bound.
      if (res.writableLength > MAX_WATCH_BUFFER) {
        res.destroy();
        return;
      }
      if (asTable && type !== 'ERROR' && type !== 'BOOKMARK')
        object = table(r, [object as KObject], this.tableOptions(q, (object as KObject).metadata.resourceVersion ?? ''));
      res.write(`${JSON.stringify({ type, object })}\n`);
    };
    const replay = this.log.since(from);
    if (replay === undefined) {
      send('ERROR', expired(String(from), String(this.log.oldest)).status());
      res.end();
      return;
    }
    for (const o of initial) send('ADDED', o);
    const deliver = (e: LogEvent) => {
      if (e.object.kind !== r.kind) return;
      const now = match(e.object);
      if (e.type === 'ADDED') {
        if (now) send('ADDED', e.object);
      } else if (e.type === 'DELETED') {
        if (now) send('DELETED', e.object);
      } else {
        const was = e.old !== undefined && match(e.old);
        if (now) send(was ? 'MODIFIED' : 'ADDED', e.object);
        else if (was) send('DELETED', e.object);
      }
    };
    for (const e of replay) deliver(e);
    const unsubscribe = this.log.subscribe(deliver);
    this.streams.add(res);
    const timers: NodeJS.Timeout[] = [];
    const stop = () => {
      unsubscribe();
      for (const tm of timers) clearTimeout(tm);
      this.streams.delete(res);
      if (!res.writableEnded) res.end();
    };
    if (Number.isFinite(timeout) && timeout > 0) timers.push(setTimeout(stop, timeout * 1000));
    if (q.get('allowWatchBookmarks') === 'true' && !asTable) {
      const every = this.opts.bookmarkMs ?? 30_000;
      const tick = () => {
        res.write(
          `${JSON.stringify({ type: 'BOOKMARK', object: { kind: r.kind, apiVersion: apiVersionOf(r), metadata: { resourceVersion: String(storeResourceVersion(this.store)) } } })}\n`,
        );
        timers.push(setTimeout(tick, every));
      };
      timers.push(setTimeout(tick, every));
    }
    res.on('close', stop);
    res.on('error', stop);
  }

  // -------------------------------------------------------------------------------------
  // Writes
  // -------------------------------------------------------------------------------------

  /** Reads the body, up to the limit (a larger body is read to its end and refused with 413). */
  private readBody(req: IncomingMessage): Promise<Buffer> {
    return new Promise((resolve, reject) => {
      const chunks: Buffer[] = [];
      let size = 0;
      let over = false;
      req.on('data', (c: Buffer) => {
        size += c.length;
        if (size > this.maxBody) over = true;
        else chunks.push(c);
      });
      req.on('end', () => (over ? reject(tooLarge(this.maxBody)) : resolve(Buffer.concat(chunks))));
      req.on('error', reject);
    });
  }

  /** A create/update body as an object: JSON, YAML, or (for a Namespace) protobuf. */
  private decodeObject(body: Buffer, contentType: string | undefined): Any {
    const type = mediaType(contentType);
    if (isProtobuf(contentType)) return decodeProtobufCreate(body);
    let v: unknown;
    if (type === 'application/json' || type === '') v = parseJson(body);
    else if (type === 'application/yaml' || type === 'application/x-yaml' || type === 'text/yaml') v = parseYamlBody(body);
    else throw unsupportedMediaType(BODY_TYPES);
    if (!isRecord(v)) throw badRequest(`the request body must be a JSON object (a Kubernetes object), got ${describe(v)}`);
    return v;
  }

  private checkTypeMeta(r: Resource, obj: Any): void {
    const want = apiVersionOf(r);
    if (obj.apiVersion === undefined && obj.kind === undefined) {
      obj.apiVersion = want;
      obj.kind = r.kind;
    }
    if (typeof obj.kind !== 'string' || obj.kind === '')
      throw badRequest(`Object 'Kind' is missing in the request body; expected kind ${r.kind}`);
    if (typeof obj.apiVersion !== 'string' || obj.apiVersion === '')
      throw badRequest(`Object 'apiVersion' is missing in the request body; expected apiVersion ${want}`);
    if (obj.apiVersion !== want || obj.kind !== r.kind) {
      throw badRequest(
        `the API version in the data (${obj.apiVersion}) and kind (${obj.kind}) do not match the expected ${want}, Kind=${r.kind} of this URL`,
      );
    }
    if (obj.metadata === undefined) obj.metadata = {};
    if (!isRecord(obj.metadata))
      throw invalid(r, '', [causeOf('metadata', `Invalid value: ${describe(obj.metadata)}: metadata must be an object`)]);
  }

  /** A body's object checked against the URL: kind and version, namespace, and (for an item URL) name. */
  private incoming(t: Target, obj: Any): Any {
    this.checkTypeMeta(t.r, obj);
    this.placeIn(t.r, t, obj);
    if (t.name !== undefined) {
      const md = obj.metadata as Any;
      if (md.name !== undefined && md.name !== t.name)
        throw badRequest(`the name of the object (${String(md.name)}) does not match the name on the URL (${t.name})`);
      md.name = t.name;
    }
    return obj;
  }

  /** The namespace from the URL, checked against the body's. */
  private placeIn(r: Resource, t: Target, obj: Any): void {
    const md = obj.metadata as Any;
    if (!r.namespaced) {
      delete md.namespace;
      return;
    }
    if (md.namespace !== undefined && md.namespace !== '' && md.namespace !== t.namespace) {
      throw badRequest('the namespace of the provided object does not match the namespace sent on the request');
    }
    md.namespace = t.namespace;
  }

  /** Metadata checks for every kind, then the kind's schema (api/schemas.ts) where it has one. Returns the object to store. */
  private validate(r: Resource, obj: Any): KObject {
    const md = obj.metadata as Any;
    const name = typeof md.name === 'string' ? md.name : '';
    const causes: StatusCause[] = [];
    const bad = (field: string, message: string) => causes.push(causeOf(field, message));
    if (md.name !== undefined && typeof md.name !== 'string') bad('metadata.name', `Invalid value: ${describe(md.name)}: must be a string`);
    else if (name === '') bad('metadata.name', 'Required value: name or generateName is required');
    else if (!isDnsSubdomain(name)) bad('metadata.name', `Invalid value: "${name}": ${DNS_SUBDOMAIN_PROBLEM}`);
    for (const key of ['labels', 'annotations'] as const) {
      const m = md[key];
      if (m === undefined || m === null) continue;
      if (!isRecord(m)) bad(`metadata.${key}`, `Invalid value: ${describe(m)}: must be a map of strings`);
      else
        for (const [k, v] of Object.entries(m))
          if (typeof v !== 'string') bad(`metadata.${key}[${k}]`, `Invalid value: ${describe(v)}: must be a string`);
    }
    if (isRecord(md.annotations) && Buffer.byteLength(JSON.stringify(md.annotations)) > MAX_ANNOTATION_BYTES)
      bad('metadata.annotations', `Too long: must have at most ${MAX_ANNOTATION_BYTES} bytes`);
    if (md.finalizers !== undefined && (!Array.isArray(md.finalizers) || md.finalizers.some((f: unknown) => typeof f !== 'string')))
      bad('metadata.finalizers', 'Invalid value: must be a list of strings');
    if (md.ownerReferences !== undefined && (!Array.isArray(md.ownerReferences) || md.ownerReferences.some((o: unknown) => !isRecord(o))))
      bad('metadata.ownerReferences', 'Invalid value: must be a list of owner references');
    if (causes.length > 0) throw invalid(r, name, causes);
    if (!kindEntry(obj.apiVersion, obj.kind)) return obj as KObject;
    const parsed = parseObject(obj as KObject, {});
    if (parsed.errors.length > 0) throw invalidFromInput(r, name, parsed.errors);
    return parsed.object!;
  }

  private async ensureNamespace(reply: Reply, ns: string | undefined): Promise<void> {
    if (ns === undefined || (await this.store.get('Namespace', undefined, ns))) return;
    if (this.opts.autoNamespaces === false)
      throw new ApiError(404, 'NotFound', `namespaces "${ns}" not found`, { name: ns, kind: 'namespaces' });
    try {
      await this.store.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
      reply.warnings.push(`namespace "${ns}" did not exist: topoqueue created it`);
    } catch (e) {
      if (!(e instanceof Error && /already exists/.test(e.message))) throw e;
    }
  }

  private async create(reply: Reply, t: Target, q: URLSearchParams, body: Buffer, contentType: string | undefined): Promise<void> {
    const r = t.r;
    const obj = this.incoming(t, this.decodeObject(body, contentType));
    const md = obj.metadata as Any;
    if ((md.name === undefined || md.name === '') && typeof md.generateName === 'string' && md.generateName !== '')
      md.name = `${md.generateName}xxxxx`;
    for (const k of ['uid', 'resourceVersion', 'creationTimestamp', 'deletionTimestamp', 'generation']) delete md[k];
    // A custom resource with a status subresource drops status on create (kube-apiserver's rule).
    if (r.status && !r.builtIn) delete obj.status;
    const stored = this.validate(r, obj);
    if (md.generateName && md.name === `${md.generateName}xxxxx`) (stored.metadata as Any).name = undefined;
    if (isDryRun(q)) {
      if (stored.metadata.name && (await this.live(r, t.namespace, stored.metadata.name))) throw alreadyExists(r, stored.metadata.name);
      return this.json(reply, 201, dryRunObject(stored, this.clock), undefined, reply.warnings);
    }
    await this.ensureNamespace(reply, r.namespaced ? t.namespace : undefined);
    let created: KObject;
    try {
      created = await this.store.create(stored);
    } catch (e) {
      throw toApiError(e, r, stored.metadata.name ?? '');
    }
    return this.json(reply, 201, created);
  }

  private async replace(reply: Reply, t: Target, q: URLSearchParams, body: Buffer, contentType: string | undefined): Promise<void> {
    const r = t.r;
    const obj = this.incoming(t, this.decodeObject(body, contentType));
    const md = obj.metadata as Any;
    const live = await this.mustLive(r, t.namespace, t.name!);
    const precondition = typeof md.resourceVersion === 'string' && md.resourceVersion !== '' ? md.resourceVersion : undefined;
    if (precondition !== undefined && precondition !== live.metadata.resourceVersion) throw conflict(r, t.name!);
    const written = await this.write(reply, t, q, live, obj, precondition);
    return this.json(reply, 200, written);
  }

  /**
   * Writes `next` over `live` (main resource or status subresource): validates, skips a
   * no-op (no new resourceVersion, no event), honours dryRun. Returns what is stored.
   */
  private async write(
    reply: Reply,
    t: Target,
    q: URLSearchParams,
    live: KObject,
    next: Any,
    precondition: string | undefined,
  ): Promise<KObject> {
    const r = t.r;
    // kube-apiserver makes a uid in the body a precondition (rest.defaultUpdatedObjectInfo).
    if (typeof next.metadata?.uid === 'string' && next.metadata.uid !== '' && next.metadata.uid !== live.metadata.uid)
      throw conflict(r, t.name!);
    let candidate: Any;
    if (t.sub === 'status') {
      candidate = { ...live, status: next.status };
      if (next.status === undefined) delete candidate.status;
    } else {
      candidate = { ...next, metadata: { ...next.metadata } };
      if (r.status || 'status' in live) {
        if ('status' in live) candidate.status = (live as Any).status;
        else delete candidate.status;
      }
      for (const k of ['uid', 'creationTimestamp', 'deletionTimestamp', 'generation', 'resourceVersion'] as const) {
        if (live.metadata[k] !== undefined) candidate.metadata[k] = live.metadata[k];
        else delete candidate.metadata[k];
      }
    }
    const stored = this.validate(r, candidate);
    if (sameJson(stored, live)) return live;
    if (isDryRun(q)) return stored;
    const out = { ...stored, metadata: { ...stored.metadata, resourceVersion: precondition ?? '' } } as KObject;
    if (precondition === undefined) delete out.metadata.resourceVersion;
    try {
      return t.sub === 'status' ? await this.store.updateStatus(out) : await this.store.update(out);
    } catch (e) {
      if (isNotFound(e)) throw notFound(r, t.name!);
      throw e;
    }
  }

  private async patch(reply: Reply, t: Target, q: URLSearchParams, body: Buffer, contentType: string | undefined): Promise<void> {
    const r = t.r;
    const type = mediaType(contentType);
    const accepted = r.builtIn ? PATCH_TYPES_BUILTIN : PATCH_TYPES_CR;
    if (!accepted.includes(type)) throw unsupportedMediaType(accepted);
    if (type === APPLY) return this.apply(reply, t, q, body);
    const patch = parseJson(body);
    if (type === JSON_PATCH ? !Array.isArray(patch) : !isRecord(patch)) {
      throw badRequest(
        type === JSON_PATCH
          ? `a JSON patch must be a list of operations, got ${describe(patch)}`
          : `a ${type === SMP ? 'strategic merge' : 'merge'} patch must be a JSON object, got ${describe(patch)}`,
      );
    }
    const ownRv =
      type === JSON_PATCH
        ? (patch as Any[]).some((op) => isRecord(op) && typeof op.path === 'string' && op.path.startsWith('/metadata/resourceVersion'))
        : isRecord(patch) && isRecord(patch.metadata) && patch.metadata.resourceVersion !== undefined;
    // Without a resourceVersion in the patch, a concurrent write is retried on the new state (as kube-apiserver does).
    for (let attempt = 0; ; attempt++) {
      const live = await this.mustLive(r, t.namespace, t.name!);
      let patched: unknown;
      try {
        const base = structuredClone(live) as unknown;
        patched =
          type === MERGE
            ? mergePatch(base, patch)
            : type === SMP
              ? strategicMergePatch(apiVersionOf(r), r.kind, base, patch)
              : jsonPatch(base, patch);
      } catch (e) {
        if (e instanceof PatchError) throw e.code === 400 ? badRequest(e.message) : new ApiError(422, 'Invalid', e.message);
        throw e;
      }
      if (!isRecord(patched)) throw new ApiError(422, 'Invalid', `the patched object is not an object (${describe(patched)})`);
      this.checkPatched(r, t, live, patched);
      const precondition = String(patched.metadata?.resourceVersion ?? live.metadata.resourceVersion);
      if (precondition !== live.metadata.resourceVersion) throw conflict(r, t.name!);
      try {
        const written = await this.write(reply, t, q, live, patched, precondition);
        return this.json(reply, 200, written, undefined, reply.warnings);
      } catch (e) {
        if (!isConflict(e) || ownRv || attempt >= 4) throw e;
      }
    }
  }

  /** A patch may not rename, move or retype the object. */
  private checkPatched(r: Resource, t: Target, live: KObject, patched: Any): void {
    if (!isRecord(patched.metadata)) throw invalid(r, t.name!, [causeOf('metadata', 'Required value: the patch removed metadata')]);
    if (patched.metadata.name !== live.metadata.name)
      throw badRequest(`the name of the object (${String(patched.metadata.name)}) does not match the name on the URL (${t.name})`);
    if (r.namespaced && patched.metadata.namespace !== live.metadata.namespace)
      throw badRequest('the namespace of the provided object does not match the namespace sent on the request');
    if (patched.kind !== live.kind || patched.apiVersion !== live.apiVersion)
      throw badRequest(`a patch may not change apiVersion or kind (${apiVersionOf(r)}, Kind=${r.kind})`);
  }

  /** Server-side apply, approximated (kubectl-facade.md §7.3): each manager's last applied configuration is kept in an annotation. */
  private async apply(reply: Reply, t: Target, q: URLSearchParams, body: Buffer): Promise<void> {
    const r = t.r;
    const manager = q.get('fieldManager') ?? '';
    if (manager === '') {
      throw new ApiError(
        422,
        'Invalid',
        'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch',
        {
          kind: 'PatchOptions.meta.k8s.io',
          name: '',
          group: 'meta.k8s.io',
          causes: [{ reason: 'FieldValueRequired', message: 'Required value: is required for apply patch', field: 'fieldManager' }],
        },
      );
    }
    const applied = parseYamlBody(body);
    if (!isRecord(applied)) throw badRequest(`an apply patch must be an object, got ${describe(applied)}`);
    this.incoming(t, applied);
    const md = applied.metadata as Any;
    const key = appliedAnnotation(manager);
    if (isRecord(md.annotations)) delete md.annotations[key];
    reply.warnings.push('topoqueue approximates server-side apply: field ownership conflicts are not detected');
    const record = JSON.stringify(applied);
    for (let attempt = 0; ; attempt++) {
      const live = await this.live(r, t.namespace, t.name!);
      let previous: unknown;
      const text = live?.metadata.annotations?.[key];
      if (text !== undefined) {
        try {
          previous = JSON.parse(text);
        } catch {
          previous = undefined;
        }
      }
      let merged: unknown;
      try {
        merged = serverSideApply({
          apiVersion: apiVersionOf(r),
          kind: r.kind,
          live: live ? structuredClone(live) : undefined,
          previous,
          applied: structuredClone(applied),
        });
      } catch (e) {
        if (e instanceof PatchError) throw e.code === 400 ? badRequest(e.message) : new ApiError(422, 'Invalid', e.message);
        throw e;
      }
      if (!isRecord(merged) || !isRecord(merged.metadata)) throw new ApiError(422, 'Invalid', 'server-side apply produced no object');
      merged.metadata.annotations = { ...(isRecord(merged.metadata.annotations) ? merged.metadata.annotations : {}), [key]: record };
      if (!live) {
        if (r.status && !r.builtIn) delete merged.status;
        for (const k of ['uid', 'resourceVersion', 'creationTimestamp', 'deletionTimestamp', 'generation']) delete merged.metadata[k];
        const stored = this.validate(r, merged);
        if (isDryRun(q)) return this.json(reply, 201, dryRunObject(stored, this.clock), undefined, reply.warnings);
        await this.ensureNamespace(reply, r.namespaced ? t.namespace : undefined);
        try {
          return this.json(reply, 201, await this.store.create(stored), undefined, reply.warnings);
        } catch (e) {
          if (attempt >= 4 || !(e instanceof Error && /already exists/.test(e.message))) throw e;
          continue;
        }
      }
      this.checkPatched(r, t, live, merged);
      const precondition =
        typeof md.resourceVersion === 'string' && md.resourceVersion !== '' ? md.resourceVersion : live.metadata.resourceVersion;
      if (precondition !== live.metadata.resourceVersion) throw conflict(r, t.name!);
      try {
        return this.json(reply, 200, await this.write(reply, t, q, live, merged, precondition), undefined, reply.warnings);
      } catch (e) {
        if (!isConflict(e) || md.resourceVersion !== undefined || attempt >= 4) throw e;
      }
    }
  }

  private deleteOptions(
    body: Buffer,
    contentType: string | undefined,
    q: URLSearchParams,
  ): { uid?: string; resourceVersion?: string; dryRun: boolean } {
    let opts: Any = {};
    if (body.length > 0 && !isProtobuf(contentType)) {
      const v = mediaType(contentType) === 'application/yaml' ? parseYamlBody(body) : parseJson(body);
      if (v !== null && !isRecord(v)) throw badRequest(`DeleteOptions must be an object, got ${describe(v)}`);
      opts = v ?? {};
    }
    const pre = isRecord(opts.preconditions) ? opts.preconditions : {};
    const dry = isDryRun(q) || (Array.isArray(opts.dryRun) && opts.dryRun.includes('All'));
    return {
      ...(typeof pre.uid === 'string' ? { uid: pre.uid } : {}),
      ...(typeof pre.resourceVersion === 'string' ? { resourceVersion: pre.resourceVersion } : {}),
      dryRun: dry,
    };
  }

  private async deleteOne(reply: Reply, t: Target, q: URLSearchParams, body: Buffer, contentType: string | undefined): Promise<void> {
    const r = t.r;
    const opts = this.deleteOptions(body, contentType, q);
    const live = await this.mustLive(r, t.namespace, t.name!);
    if (
      (opts.uid !== undefined && opts.uid !== live.metadata.uid) ||
      (opts.resourceVersion !== undefined && opts.resourceVersion !== live.metadata.resourceVersion)
    ) {
      throw conflict(r, t.name!);
    }
    if (opts.dryRun) return this.json(reply, 200, live);
    try {
      const left = await this.store.delete(r.kind, r.namespaced ? t.namespace : undefined, t.name!, { uid: live.metadata.uid });
      return this.json(reply, 200, left ?? live);
    } catch (e) {
      if (isNotFound(e)) throw notFound(r, t.name!);
      throw e;
    }
  }

  private async deleteCollection(reply: Reply, t: Target, q: URLSearchParams): Promise<void> {
    const r = t.r;
    const { items, resourceVersion } = await this.selected(t, q);
    const deleted: KObject[] = [];
    if (!isDryRun(q)) {
      for (const o of items) {
        try {
          deleted.push((await this.store.delete(r.kind, o.metadata.namespace, o.metadata.name, { uid: o.metadata.uid })) ?? o);
        } catch (e) {
          if (!isNotFound(e) && !isConflict(e)) throw e;
        }
      }
    }
    return this.json(reply, 200, {
      kind: `${r.kind}List`,
      apiVersion: apiVersionOf(r),
      metadata: { resourceVersion },
      items: isDryRun(q) ? items : deleted,
    });
  }

  /** `POST pods/<name>/eviction`: the pod is deleted (no PodDisruptionBudgets here). */
  private async evict(reply: Reply, t: Target, q: URLSearchParams, body: Buffer, contentType: string | undefined): Promise<void> {
    const r = t.r;
    if (body.length > 0 && !isProtobuf(contentType)) {
      const ev = parseJson(body);
      if (!isRecord(ev)) throw badRequest(`an Eviction must be an object, got ${describe(ev)}`);
      if (isRecord(ev.metadata) && ev.metadata.name !== undefined && ev.metadata.name !== t.name)
        throw badRequest(`name in URL does not match name in Eviction object`);
    }
    const live = await this.mustLive(r, t.namespace, t.name!);
    if (!isDryRun(q) && !live.metadata.deletionTimestamp) {
      try {
        await this.store.delete('Pod', t.namespace, t.name!, { uid: live.metadata.uid });
      } catch (e) {
        if (isNotFound(e)) throw notFound(r, t.name!);
        throw e;
      }
    }
    return this.json(reply, 201, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 201 });
  }

  // -------------------------------------------------------------------------------------
  // Responses
  // -------------------------------------------------------------------------------------

  private headers(reply: Reply, contentType: string, extra: readonly string[] = []): Record<string, string | string[]> {
    const warnings = [...(this.opts.writeWarnings ?? []), ...reply.warnings, ...extra].filter((w, i, a) => a.indexOf(w) === i);
    const h: Record<string, string | string[]> = { 'Content-Type': contentType, 'Cache-Control': 'no-cache, private' };
    if (warnings.length > 0) h.Warning = warnings.map((w) => `299 - ${JSON.stringify(w.replace(/[\r\n]+/g, ' '))}`);
    return h;
  }

  private json(reply: Reply, code: number, body: unknown, contentType = 'application/json', extraWarnings: readonly string[] = []): void {
    const text = JSON.stringify(body);
    reply.res.writeHead(code, this.headers(reply, contentType, code >= 200 && code < 300 ? extraWarnings : []));
    reply.res.end(text);
  }

  private jsonOr404(reply: Reply, body: object | undefined): void {
    if (body === undefined) throw noSuchPath();
    this.json(reply, 200, body);
  }

  private text(reply: Reply, code: number, body: string, contentType = 'text/plain; charset=utf-8'): void {
    reply.res.writeHead(code, { 'Content-Type': contentType });
    reply.res.end(body);
  }

  private fail(reply: Reply, e: unknown, t: Target | undefined): void {
    const err = toApiError(e, t?.r, t?.name ?? '');
    const res = reply.res;
    if (res.headersSent) {
      if (!res.writableEnded) res.end();
      return;
    }
    try {
      res.writeHead(err.code, { 'Content-Type': 'application/json', 'Cache-Control': 'no-cache, private' });
      res.end(JSON.stringify(err.status()));
    } catch {
      res.destroy();
    }
  }
}

// ---------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------

function decodeSegment(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    throw badRequest(`the request path has a malformed percent-encoding: ${JSON.stringify(s)}`);
  }
}

function wantsTable(accept: string | undefined): boolean {
  return accept !== undefined && /as=Table/.test(accept);
}

function isDryRun(q: URLSearchParams): boolean {
  return q.getAll('dryRun').includes('All');
}

function describe(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'a list';
  if (typeof v === 'string') return `the string ${JSON.stringify(v.length > 40 ? `${v.slice(0, 40)}...` : v)}`;
  return typeof v === 'object' ? 'an object' : `${typeof v} ${String(v)}`;
}

function parseJson(body: Buffer): unknown {
  const text = body.toString('utf8');
  if (text.trim() === '') throw badRequest('the request body is empty; a JSON document was expected');
  try {
    return JSON.parse(text);
  } catch (e) {
    throw badRequest(`the request body is not valid JSON: ${(e as Error).message}`);
  }
}

function parseYamlBody(body: Buffer): unknown {
  const text = body.toString('utf8');
  if (text.trim() === '') throw badRequest('the request body is empty; a YAML or JSON document was expected');
  try {
    return parseYaml(text, { maxAliasCount: 100 });
  } catch (e) {
    throw badRequest(`the request body is not valid YAML: ${(e as Error).message.split('\n')[0]}`);
  }
}

function compareKeys(a: KObject, b: KObject): number {
  const an = a.metadata.namespace ?? '';
  const bn = b.metadata.namespace ?? '';
  if (an !== bn) return an < bn ? -1 : 1;
  return a.metadata.name < b.metadata.name ? -1 : a.metadata.name > b.metadata.name ? 1 : 0;
}

/** Deep equality of JSON values, key order ignored. */
export function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const bb = b as unknown[];
    return a.length === bb.length && a.every((x, i) => sameJson(x, bb[i]));
  }
  const ak = Object.keys(a).filter((k) => (a as Any)[k] !== undefined);
  const bk = Object.keys(b).filter((k) => (b as Any)[k] !== undefined);
  return ak.length === bk.length && ak.every((k) => sameJson((a as Any)[k], (b as Any)[k]));
}

/** The annotation holding a field manager's last applied configuration. */
export function appliedAnnotation(manager: string): string {
  const clean =
    manager
      .toLowerCase()
      .replace(/[^a-z0-9._-]+/g, '-')
      .replace(/^[^a-z0-9]+|[^a-z0-9]+$/g, '') || 'manager';
  return APPLIED_ANNOTATION_PREFIX + clean.slice(0, 63).replace(/[^a-z0-9]+$/, '');
}

function dryRunObject(obj: KObject, clock: Clock): KObject {
  const out = structuredClone(obj);
  const md = out.metadata;
  if (!md.name && md.generateName) md.name = `${md.generateName}dryrun`;
  md.creationTimestamp = new Date(Math.floor(clock.now() / 1000) * 1000).toISOString().replace('.000Z', 'Z');
  md.generation = 1;
  return out;
}
