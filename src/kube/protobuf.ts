// kubectl 1.32's typed clientset sends some bodies as protobuf (kubectl-facade.md §12).
// This reads just enough of the wire format: the `k8s\0` envelope (runtime.Unknown), and a
// Namespace (`kubectl create namespace`, the common generator command). DELETE bodies are
// DeleteOptions and are ignored; any other protobuf body is refused with the workaround.

import { badRequest, unsupportedMediaType } from './errors.ts';

export const PROTOBUF = 'application/vnd.kubernetes.protobuf';
const MAGIC = [0x6b, 0x38, 0x73, 0x00];

type Field = { no: number; wire: number; value: number | Uint8Array };

function fields(buf: Uint8Array): Field[] {
  const out: Field[] = [];
  let i = 0;
  const varint = (): number => {
    let v = 0;
    let mul = 1;
    for (;;) {
      if (i >= buf.length) throw badRequest('protobuf body ends inside a varint');
      const b = buf[i++]!;
      v += (b & 0x7f) * mul;
      if ((b & 0x80) === 0) return v;
      mul *= 128;
      if (mul > 2 ** 63) throw badRequest('protobuf varint is too long');
    }
  };
  while (i < buf.length) {
    const key = varint();
    const no = Math.floor(key / 8);
    const wire = key % 8;
    if (wire === 0) out.push({ no, wire, value: varint() });
    else if (wire === 2) {
      const len = varint();
      if (i + len > buf.length) throw badRequest('protobuf length-delimited field runs past the end of the body');
      out.push({ no, wire, value: buf.subarray(i, i + len) });
      i += len;
    } else if (wire === 1) i += 8;
    else if (wire === 5) i += 4;
    else throw badRequest(`protobuf wire type ${wire} is not supported`);
  }
  return out;
}

const text = (v: number | Uint8Array) => (typeof v === 'number' ? String(v) : new TextDecoder().decode(v));
const bytes = (v: number | Uint8Array) => (typeof v === 'number' ? new Uint8Array() : v);

export function isProtobuf(contentType: string | undefined): boolean {
  return contentType !== undefined && contentType.split(';')[0]!.trim() === PROTOBUF;
}

/** Reads the envelope; returns apiVersion, kind and the raw object message. */
export function readEnvelope(body: Buffer): { apiVersion: string; kind: string; raw: Uint8Array } {
  if (body.length < 4 || MAGIC.some((b, i) => body[i] !== b)) throw badRequest('protobuf body does not start with the k8s envelope magic');
  let apiVersion = '';
  let kind = '';
  let raw: Uint8Array = new Uint8Array();
  for (const f of fields(body.subarray(4))) {
    if (f.no === 1 && f.wire === 2) {
      for (const t of fields(bytes(f.value))) {
        if (t.no === 1) apiVersion = text(t.value);
        if (t.no === 2) kind = text(t.value);
      }
    } else if (f.no === 2 && f.wire === 2) raw = bytes(f.value);
  }
  return { apiVersion, kind, raw };
}

function stringMap(entries: Field[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const e of entries) {
    let k = '';
    let v = '';
    for (const f of fields(bytes(e.value))) {
      if (f.no === 1) k = text(f.value);
      if (f.no === 2) v = text(f.value);
    }
    out[k] = v;
  }
  return out;
}

function objectMeta(buf: Uint8Array): Record<string, unknown> {
  const md: Record<string, unknown> = {};
  const fs = fields(buf);
  for (const f of fs) {
    if (f.no === 1) md.name = text(f.value);
    if (f.no === 2) md.generateName = text(f.value);
    if (f.no === 3) md.namespace = text(f.value);
  }
  const labels = fs.filter((f) => f.no === 11);
  const annotations = fs.filter((f) => f.no === 12);
  if (labels.length > 0) md.labels = stringMap(labels);
  if (annotations.length > 0) md.annotations = stringMap(annotations);
  return md;
}

/** A protobuf POST body as a JSON object: Namespaces only; anything else is a 415 naming the workaround. */
export function decodeProtobufCreate(body: Buffer): Record<string, unknown> {
  const { apiVersion, kind, raw } = readEnvelope(body);
  if (kind !== 'Namespace' || apiVersion !== 'v1') {
    throw unsupportedMediaType(
      ['application/json', 'application/yaml'],
      ` (topoqueue decodes protobuf only for Namespace; for a ${kind || 'generated object'}, generate JSON and apply it: kubectl create ... --dry-run=client -o yaml | kubectl apply -f -)`,
    );
  }
  const ns: Record<string, unknown> = { apiVersion, kind, metadata: {} };
  for (const f of fields(raw)) {
    if (f.no === 1) ns.metadata = objectMeta(bytes(f.value));
    if (f.no === 2) {
      const finalizers = fields(bytes(f.value))
        .filter((x) => x.no === 1)
        .map((x) => text(x.value));
      if (finalizers.length > 0) ns.spec = { finalizers };
    }
  }
  return ns;
}
