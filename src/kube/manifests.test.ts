// deploy/ as generated: up to date with the generator, rendered by `kubectl kustomize`, and
// the CRD schemas (from the zod schemas) accepting every example manifest and refusing
// objects of the wrong shape, checked with a small structural-schema validator.

import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { parseAllDocuments } from 'yaml';
import { KUBECTL_MISSING } from '../testing/kube.ts';
import { crdFor, foreignResources, ownedResources, structural } from './crds.ts';
import { deployFiles, manifestsText } from './manifests.ts';
import { apiVersionOf, RESOURCES } from './resources.ts';

type Schema = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** The problems of `v` against a structural schema (the subset crds.ts emits). */
function validate(schema: Schema, v: unknown, path = ''): string[] {
  if (v === null) return schema.nullable ? [] : [`${path}: null`];
  if (schema['x-kubernetes-int-or-string']) return typeof v === 'string' || Number.isInteger(v) ? [] : [`${path}: not int-or-string`];
  const t = schema.type as string | undefined;
  const type = Array.isArray(v) ? 'array' : typeof v === 'number' ? (Number.isInteger(v) ? 'integer' : 'number') : typeof v;
  if (t && !(t === type || (t === 'number' && type === 'integer'))) return [`${path}: expected ${t}, got ${type}`];
  const out: string[] = [];
  if (schema.enum && !(schema.enum as unknown[]).includes(v))
    out.push(`${path}: ${JSON.stringify(v)} not in ${JSON.stringify(schema.enum)}`);
  if (type === 'array') {
    const a = v as unknown[];
    if (schema.minItems !== undefined && a.length < schema.minItems) out.push(`${path}: fewer than ${schema.minItems} items`);
    if (schema.maxItems !== undefined && a.length > schema.maxItems) out.push(`${path}: more than ${schema.maxItems} items`);
    if (schema.items) a.forEach((x, i) => out.push(...validate(schema.items, x, `${path}[${i}]`)));
  }
  if (type === 'object') {
    const o = v as Record<string, unknown>;
    for (const r of (schema.required as string[] | undefined) ?? []) if (!(r in o)) out.push(`${path}.${r}: required`);
    for (const [k, x] of Object.entries(o)) {
      const p = schema.properties?.[k];
      if (p) out.push(...validate(p, x, `${path}.${k}`));
      else if (schema.additionalProperties) out.push(...validate(schema.additionalProperties, x, `${path}.${k}`));
      else if (!schema['x-kubernetes-preserve-unknown-fields'] && schema.properties) out.push(`${path}.${k}: unknown field`);
    }
  }
  if (type === 'string') {
    if (schema.pattern && !new RegExp(schema.pattern as string, 'u').test(v as string))
      out.push(`${path}: does not match ${schema.pattern}`);
    if (schema.minLength !== undefined && (v as string).length < schema.minLength) out.push(`${path}: shorter than ${schema.minLength}`);
  }
  if (typeof v === 'number') {
    if (schema.minimum !== undefined && (schema.exclusiveMinimum ? v <= schema.minimum : v < schema.minimum))
      out.push(`${path}: below ${schema.minimum}`);
    if (schema.maximum !== undefined && (schema.exclusiveMaximum ? v >= schema.maximum : v > schema.maximum))
      out.push(`${path}: above ${schema.maximum}`);
  }
  return out;
}

/** Every node of a schema tree. */
function* nodes(s: Schema): Generator<Schema> {
  yield s;
  for (const p of Object.values((s.properties as Record<string, Schema> | undefined) ?? {})) yield* nodes(p);
  if (s.items) yield* nodes(s.items as Schema);
  if (s.additionalProperties && typeof s.additionalProperties === 'object') yield* nodes(s.additionalProperties as Schema);
}

const schemaOf = (apiVersion: string, kind: string): Schema | undefined => {
  const r = RESOURCES.find((x) => apiVersionOf(x) === apiVersion && x.kind === kind);
  if (!r || (!ownedResources().includes(r) && !foreignResources().includes(r))) return undefined;
  return ((crdFor(r) as unknown as Schema).spec as Schema).versions[0].schema.openAPIV3Schema as Schema;
};

describe('deploy/ manifests', () => {
  it('deploy/ is what the generator writes (run `npm run manifests` after a change)', () => {
    for (const [path, text] of deployFiles()) assert.equal(readFileSync(join('deploy', path), 'utf8'), text, `deploy/${path} is stale`);
  });

  it('every CRD schema is structural: a type (or int-or-string / preserve-unknown-fields) at every node, no $ref, no properties beside additionalProperties', () => {
    for (const r of [...ownedResources(), ...foreignResources()]) {
      const root = schemaOf(apiVersionOf(r), r.kind)!;
      assert.ok(!JSON.stringify(root).includes('$ref'), `${r.kind}: $ref`);
      for (const n of nodes(root)) {
        assert.ok(
          n.type || n['x-kubernetes-int-or-string'] || n['x-kubernetes-preserve-unknown-fields'],
          `${r.kind}: a node without a type: ${JSON.stringify(n).slice(0, 200)}`,
        );
        assert.ok(!(n.properties && n.additionalProperties), `${r.kind}: properties and additionalProperties together`);
      }
    }
    assert.deepEqual(structural({ anyOf: [{ type: 'string' }, { type: 'number' }] }), { 'x-kubernetes-int-or-string': true }, 'a quantity');
    assert.deepEqual(
      structural({ type: 'object', properties: { a: { type: 'string' } }, additionalProperties: {} }),
      { type: 'object', properties: { a: { type: 'string' } }, 'x-kubernetes-preserve-unknown-fields': true },
      'a loose object keeps unknown fields',
    );
  });

  it('the CRD schemas accept every example manifest of their kinds', () => {
    let checked = 0;
    for (const dir of readdirSync('examples')) {
      for (const f of readdirSync(join('examples', dir)).filter((n) => n.endsWith('.yaml'))) {
        for (const doc of parseAllDocuments(readFileSync(join('examples', dir, f), 'utf8'))) {
          const obj = doc.toJS() as { apiVersion?: string; kind?: string } | null;
          if (!obj?.apiVersion || !obj.kind) continue;
          const schema = schemaOf(obj.apiVersion, obj.kind);
          if (!schema) continue;
          assert.deepEqual(validate(schema, obj), [], `examples/${dir}/${f}: ${obj.kind}`);
          checked++;
        }
      }
    }
    assert.ok(checked >= 20, `example objects checked: ${checked}`);
  });

  it('the CRD schemas refuse objects of the wrong shape', () => {
    const topology = schemaOf('kueue.x-k8s.io/v1beta2', 'Topology')!;
    assert.notDeepEqual(
      validate(topology, { apiVersion: 'kueue.x-k8s.io/v1beta2', kind: 'Topology', metadata: { name: 't' }, spec: { levels: [] } }),
      [],
    );
    assert.notDeepEqual(
      validate(topology, {
        apiVersion: 'kueue.x-k8s.io/v1beta2',
        kind: 'Topology',
        metadata: { name: 't' },
        spec: { levels: [{ nodeLabel: 7 }] },
      }),
      [],
    );
    const cq = schemaOf('kueue.x-k8s.io/v1beta2', 'ClusterQueue')!;
    assert.deepEqual(
      validate(cq, {
        apiVersion: 'kueue.x-k8s.io/v1beta2',
        kind: 'ClusterQueue',
        metadata: { name: 'c' },
        spec: { resourceGroups: [{ coveredResources: ['cpu'], flavors: [{ name: 'f', resources: [{ name: 'cpu', nominalQuota: 8 }] }] }] },
      }),
      [],
      'a quantity as a number',
    );
  });

  it('`kubectl kustomize deploy/` renders the install; the foreign CRDs are a separate component', { skip: KUBECTL_MISSING }, () => {
    const out = execFileSync('kubectl', ['kustomize', 'deploy/'], { encoding: 'utf8' });
    const kinds = [...out.matchAll(/^kind: (\w+)$/gm)].map((m) => m[1]);
    for (const k of [
      'Namespace',
      'CustomResourceDefinition',
      'ClusterRole',
      'Deployment',
      'Service',
      'MutatingWebhookConfiguration',
      'ValidatingWebhookConfiguration',
    ])
      assert.ok(kinds.includes(k), k);
    assert.match(out, /name: workloads\.kueue\.x-k8s\.io/);
    assert.doesNotMatch(out, /podgroups\.scheduling\.volcano\.sh/, "Volcano's CRDs are not in the default install");
    const r = spawnSync('kubectl', ['kustomize', 'deploy/components/foreign-crds'], { encoding: 'utf8' });
    // A Component renders only from a kustomization that includes it; the file itself must be valid.
    assert.ok(r.status === 0 || /Component/.test(r.stderr), r.stderr);
    assert.match(manifestsText({ foreignCrds: true }), /podgroups\.scheduling\.volcano\.sh/);
  });
});
