// topoqueue's admission webhooks over HTTPS (AdmissionReview admission.k8s.io/v1): the
// hooks the controllers register on the store (job and pod defaulting and validation:
// suspend, scheduling gates, labels, finalizers; Topology, ResourceFlavor, HyperNode and
// gang-annotation validation) served to a real kube-apiserver, one path per hook:
// `/mutate/<hook name>` and `/validate/<hook name>`.
//
// - A mutating hook's changes go back as a JSONPatch of the object the API server sent.
// - A denial is `allowed: false` with the problems as the status message (kube-apiserver
//   prefixes `admission webhook "<name>" denied the request: `, so the user reads the same
//   words as on the embedded cluster).
// - A hook that throws is answered with code 500 (failurePolicy Fail makes the API server
//   refuse the write, as Kueue ships its webhooks).
// - The certificate comes from files (cert-manager's layout: tls.crt, tls.key, ca.crt in
//   one directory), or is generated at start with its own CA, which the caller then patches
//   into the webhook configurations (webhookConfigurations() below makes those).

import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { KObject } from '../api/objects.ts';
import type { AdmissionHook, AdmissionRequest } from '../runtime/store.ts';
import { RESOURCES } from './resources.ts';

type Json = Record<string, unknown>;

export interface TlsMaterial {
  cert: string;
  key: string;
  /** The CA that signed `cert` (the configurations' caBundle). */
  ca: string;
  /** Generated at start (the caBundle must be patched in) or read from files. */
  generated: boolean;
}

export interface AdmissionReviewRequest {
  uid: string;
  kind?: { group: string; version: string; kind: string };
  subResource?: string;
  operation: 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT';
  object?: KObject | null;
  oldObject?: KObject | null;
}

export interface AdmissionReviewResponse {
  uid: string;
  allowed: boolean;
  status?: { code: number; message: string; reason?: string };
  patchType?: 'JSONPatch';
  patch?: string;
  warnings?: string[];
}

export type JsonPatchOp = { op: 'add' | 'replace'; path: string; value: unknown } | { op: 'remove'; path: string };

const pointer = (s: string) => s.replace(/~/g, '~0').replace(/\//g, '~1');
const isObj = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** RFC 6902 operations turning `a` into `b` (objects key by key; a changed array is replaced whole). */
export function jsonPatchDiff(a: unknown, b: unknown, path = ''): JsonPatchOp[] {
  if (isObj(a) && isObj(b)) {
    const ops: JsonPatchOp[] = [];
    for (const k of Object.keys(a))
      if (!(k in b) || b[k] === undefined) if (a[k] !== undefined) ops.push({ op: 'remove', path: `${path}/${pointer(k)}` });
    for (const [k, v] of Object.entries(b)) {
      if (v === undefined) continue;
      if (!(k in a) || a[k] === undefined) ops.push({ op: 'add', path: `${path}/${pointer(k)}`, value: v });
      else ops.push(...jsonPatchDiff(a[k], v, `${path}/${pointer(k)}`));
    }
    return ops;
  }
  if (JSON.stringify(a) === JSON.stringify(b)) return [];
  return [{ op: 'replace', path: path || '', value: b }];
}

/** One hook's answer to one AdmissionReview request. */
export function review(hook: AdmissionHook, req: AdmissionReviewRequest): AdmissionReviewResponse {
  const uid = req.uid;
  if (req.operation === 'CONNECT') return { uid, allowed: true };
  const sent = (req.operation === 'DELETE' ? req.oldObject : req.object) ?? undefined;
  if (!sent) return { uid, allowed: false, status: { code: 400, message: 'the AdmissionReview has no object' } };
  const object = structuredClone(sent);
  const request: AdmissionRequest = {
    operation: req.operation,
    object,
    ...(req.oldObject ? { old: req.oldObject } : {}),
    ...(req.subResource === 'status' ? { subresource: 'status' as const } : {}),
  };
  if (request.subresource === 'status' && !hook.includeStatus) return { uid, allowed: true };
  let answer;
  try {
    answer = hook.admit(request) ?? {};
  } catch (e) {
    return { uid, allowed: false, status: { code: 500, message: `webhook ${hook.name} failed: ${(e as Error).message}` } };
  }
  const warnings = answer.warnings?.length ? { warnings: answer.warnings } : {};
  if (answer.denied && answer.denied.length > 0)
    return { uid, allowed: false, status: { code: 403, reason: 'Forbidden', message: answer.denied.join('; ') }, ...warnings };
  if (hook.type === 'mutating' && req.operation !== 'DELETE') {
    const ops = jsonPatchDiff(sent, object);
    if (ops.length > 0)
      return { uid, allowed: true, patchType: 'JSONPatch', patch: Buffer.from(JSON.stringify(ops)).toString('base64'), ...warnings };
  }
  return { uid, allowed: true, ...warnings };
}

export const hookPath = (h: AdmissionHook): string => `/${h.type === 'mutating' ? 'mutate' : 'validate'}/${h.name}`;

export class WebhookServer {
  private server?: Server;
  /** Reviews answered, per hook and verdict (for /metrics and the tests). */
  readonly answered = new Map<string, number>();

  constructor(
    private readonly hooks: () => readonly AdmissionHook[],
    private readonly tls: TlsMaterial,
  ) {}

  listen(port: number, host = '0.0.0.0'): Promise<number> {
    const server = createServer({ cert: this.tls.cert, key: this.tls.key }, (req, res) => {
      const path = (req.url ?? '/').split('?')[0]!;
      const hook = this.hooks().find((h) => hookPath(h) === path);
      if (!hook || req.method !== 'POST') {
        res.writeHead(404, { 'content-type': 'text/plain' }).end(`no webhook at ${req.method} ${path}`);
        return;
      }
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        let body: { apiVersion?: string; request?: AdmissionReviewRequest };
        try {
          body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as typeof body;
        } catch (e) {
          res.writeHead(400, { 'content-type': 'text/plain' }).end(`not JSON: ${(e as Error).message}`);
          return;
        }
        if (!body.request || typeof body.request.uid !== 'string') {
          res
            .writeHead(400, { 'content-type': 'text/plain' })
            .end('an AdmissionReview with a request (uid, operation, object) is expected');
          return;
        }
        const response = review(hook, body.request);
        const key = `${hook.name} ${response.allowed ? 'allowed' : 'denied'}`;
        this.answered.set(key, (this.answered.get(key) ?? 0) + 1);
        res
          .writeHead(200, { 'content-type': 'application/json' })
          .end(JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response }));
      });
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

  async close(): Promise<void> {
    const s = this.server;
    if (!s) return;
    await new Promise<void>((r) => s.close(() => r()));
    s.closeAllConnections();
  }
}

/** The certificate: from `certDir` (tls.crt, tls.key, and ca.crt when there is one) or generated for the Service's DNS names. */
export async function webhookTls(opts: { certDir?: string; service: string; namespace: string }): Promise<TlsMaterial> {
  if (opts.certDir) {
    const read = (f: string) => {
      try {
        return readFileSync(join(opts.certDir!, f), 'utf8');
      } catch (e) {
        throw new Error(`webhook certificate: cannot read ${join(opts.certDir!, f)}: ${(e as Error).message}`);
      }
    };
    const cert = read('tls.crt');
    return { cert, key: read('tls.key'), ca: existsSync(join(opts.certDir, 'ca.crt')) ? read('ca.crt') : cert, generated: false };
  }
  const { generate } = await import('selfsigned');
  const dns = [
    opts.service,
    `${opts.service}.${opts.namespace}`,
    `${opts.service}.${opts.namespace}.svc`,
    `${opts.service}.${opts.namespace}.svc.cluster.local`,
    'localhost',
  ];
  const now = new Date();
  const ca = await generate([{ name: 'commonName', value: 'topoqueue-webhook-ca' }], {
    keyType: 'ec',
    algorithm: 'sha256',
    curve: 'P-256',
    notBeforeDate: now,
    notAfterDate: new Date(now.getTime() + 10 * 365 * 86_400_000),
    extensions: [
      { name: 'basicConstraints', cA: true, critical: true },
      { name: 'keyUsage', keyCertSign: true, cRLSign: true, digitalSignature: true, critical: true },
    ],
  });
  const leaf = await generate([{ name: 'commonName', value: `${opts.service}.${opts.namespace}.svc` }], {
    keyType: 'ec',
    algorithm: 'sha256',
    curve: 'P-256',
    notBeforeDate: now,
    notAfterDate: new Date(now.getTime() + 10 * 365 * 86_400_000),
    ca: { key: ca.private, cert: ca.cert },
    extensions: [
      { name: 'basicConstraints', cA: false },
      { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
      { name: 'extKeyUsage', serverAuth: true },
      { name: 'subjectAltName', altNames: [...dns.map((value) => ({ type: 2 as const, value })), { type: 7 as const, ip: '127.0.0.1' }] },
    ],
  });
  return { cert: leaf.cert, key: leaf.private, ca: ca.cert, generated: true };
}

export const MUTATING_CONFIGURATION = 'topoqueue-mutating-webhook-configuration';
export const VALIDATING_CONFIGURATION = 'topoqueue-validating-webhook-configuration';

/**
 * The MutatingWebhookConfiguration and ValidatingWebhookConfiguration for these hooks: one
 * webhook per hook, rules for every group serving its kinds, failurePolicy Fail, sideEffects
 * None; pods and jobs in kube-system and topoqueue's own namespace are left alone.
 */
export function webhookConfigurations(
  hooks: readonly AdmissionHook[],
  opts: { namespace: string; service: string; caBundle?: string },
): KObject[] {
  const webhook = (h: AdmissionHook) => {
    const rules = [...new Set(h.kinds)].flatMap((kind) =>
      RESOURCES.filter((r) => r.kind === kind).map((r) => ({
        apiGroups: [r.group],
        apiVersions: [r.version],
        operations: [...h.operations],
        resources: h.includeStatus && r.status ? [r.plural, `${r.plural}/status`] : [r.plural],
        scope: r.namespaced ? 'Namespaced' : 'Cluster',
      })),
    );
    const namespaced = h.kinds.some((k) => RESOURCES.some((r) => r.kind === k && r.namespaced));
    return {
      name: h.name,
      admissionReviewVersions: ['v1'],
      sideEffects: 'None',
      failurePolicy: 'Fail',
      timeoutSeconds: 10,
      clientConfig: {
        service: { name: opts.service, namespace: opts.namespace, path: hookPath(h), port: 443 },
        ...(opts.caBundle ? { caBundle: Buffer.from(opts.caBundle).toString('base64') } : {}),
      },
      rules,
      ...(namespaced
        ? {
            namespaceSelector: {
              matchExpressions: [{ key: 'kubernetes.io/metadata.name', operator: 'NotIn', values: ['kube-system', opts.namespace] }],
            },
          }
        : {}),
      ...(h.type === 'mutating' ? { reinvocationPolicy: 'Never' } : {}),
    };
  };
  const of = (type: AdmissionHook['type']) => hooks.filter((h) => h.type === type).map(webhook);
  return [
    {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'MutatingWebhookConfiguration',
      metadata: { name: MUTATING_CONFIGURATION },
      webhooks: of('mutating'),
    } as KObject,
    {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingWebhookConfiguration',
      metadata: { name: VALIDATING_CONFIGURATION },
      webhooks: of('validating'),
    } as KObject,
  ];
}
