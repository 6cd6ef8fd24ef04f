// zod pieces shared by the kind modules (schemas.ts, volcano.ts, queues.ts, gang.ts): a
// custom-issue helper, Kubernetes quantities and metav1.LabelSelector with their messages.
// It imports no kind module, so every kind module can import it without a cycle.

import { z } from 'zod';
import { QuantityError, parseQuantity, showInput } from './quantity.ts';
import { resourceAmount } from './resources.ts';
import { labelKeyProblem, labelValueProblem } from './topology-request.ts';
import { isDnsLabel, isDnsSubdomain } from './names.ts';

export type Ctx = z.core.$RefinementCtx;

export const issue = (ctx: Ctx, path: (string | number)[], message: string, input?: unknown) =>
  ctx.addIssue({ code: 'custom', path, message, input });

/** A plain description of a value that is not what was expected. */
export function describeInput(v: unknown): string {
  if (v === null) return 'null';
  if (v === undefined) return 'nothing';
  if (Array.isArray(v)) return 'a list';
  if (typeof v === 'object') return 'an object';
  if (typeof v === 'string') return `the string ${JSON.stringify(v)}`;
  return `${typeof v} ${String(v)}`;
}

/** Why `raw` is not a valid, non-negative quantity of resource `name`, or undefined. */
export function quantityProblem(name: string, raw: unknown): string | undefined {
  if (typeof raw !== 'string' && typeof raw !== 'number') {
    return `must be a quantity such as "4", "500m" or "16Gi", got ${describeInput(raw)}`;
  }
  try {
    const q = parseQuantity(raw);
    if (q.nano < 0n) return `Invalid value: ${showInput(raw)}: must be greater than or equal to 0`;
    resourceAmount(name, q);
  } catch (e) {
    if (e instanceof QuantityError) return `Invalid value: ${showInput(raw)}: ${e.detail}`;
    throw e;
  }
  return undefined;
}

export const labelSelectorRequirement = z.looseObject({
  key: z.string(),
  operator: z.enum(['In', 'NotIn', 'Exists', 'DoesNotExist']),
  values: z.array(z.string()).optional(),
});

/** A metav1.LabelSelector, with Kubernetes' own rules for keys, values and requirements. */
export const labelSelector = z
  .looseObject({
    matchLabels: z.record(z.string(), z.string()).optional(),
    matchExpressions: z.array(labelSelectorRequirement).optional(),
  })
  .superRefine((sel, ctx) => {
    for (const [k, v] of Object.entries(sel.matchLabels ?? {})) {
      const kp = labelKeyProblem(k);
      if (kp) issue(ctx, ['matchLabels', k], `key ${JSON.stringify(k)}: ${kp}`);
      const vp = labelValueProblem(v);
      if (vp) issue(ctx, ['matchLabels', k], `value ${JSON.stringify(v)}: ${vp}`);
    }
    (sel.matchExpressions ?? []).forEach((r, i) => {
      const kp = labelKeyProblem(r.key);
      if (kp) issue(ctx, ['matchExpressions', i, 'key'], `${JSON.stringify(r.key)}: ${kp}`);
      const values = r.values ?? [];
      if ((r.operator === 'In' || r.operator === 'NotIn') && values.length === 0) {
        issue(ctx, ['matchExpressions', i, 'values'], "Required value: must be specified when `operator` is 'In' or 'NotIn'");
      }
      if ((r.operator === 'Exists' || r.operator === 'DoesNotExist') && values.length > 0) {
        issue(ctx, ['matchExpressions', i, 'values'], "Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'");
      }
      values.forEach((v, j) => {
        const vp = labelValueProblem(v);
        if (vp) issue(ctx, ['matchExpressions', i, 'values', j], `${JSON.stringify(v)}: ${vp}`);
      });
    });
  });

// ---------------------------------------------------------------------------------------
// Building blocks of the kinds: object metadata, pod templates, resource lists, names
// ---------------------------------------------------------------------------------------

/** A lowercase RFC 1123 label: PodSet, replicatedJob and namespace names. */
export const dnsLabel = z.string().superRefine((s, ctx) => {
  if (!isDnsLabel(s)) {
    issue(
      ctx,
      [],
      `${JSON.stringify(s)} is not a valid name: at most 63 lowercase letters, digits or '-', starting and ending with a letter or digit`,
    );
  }
});

/** A lowercase RFC 1123 subdomain: object names. */
export const dnsSubdomain = z.string().superRefine((s, ctx) => {
  if (!isDnsSubdomain(s)) {
    issue(
      ctx,
      [],
      `${JSON.stringify(s)} is not a valid name: at most 253 lowercase letters, digits, '-' or '.', starting and ending with a letter or digit`,
    );
  }
});

export const labelKey = z.string().superRefine((s, ctx) => {
  const problem = labelKeyProblem(s);
  if (problem) issue(ctx, [], `${JSON.stringify(s)}: ${problem}`);
});

/** Labels and nodeSelectors: valid keys and values. */
export const labelMap = z.record(z.string(), z.string()).superRefine((m, ctx) => {
  for (const [k, v] of Object.entries(m)) {
    const kp = labelKeyProblem(k);
    if (kp) issue(ctx, [k], `key ${JSON.stringify(k)}: ${kp}`);
    const vp = labelValueProblem(v);
    if (vp) issue(ctx, [k], `value ${JSON.stringify(v)}: ${vp}`);
  }
});

export const annotationMap = z.record(z.string(), z.string()).superRefine((m, ctx) => {
  for (const k of Object.keys(m)) {
    const kp = labelKeyProblem(k);
    if (kp) issue(ctx, [k], `annotation key ${JSON.stringify(k)}: ${kp.replace('label key', 'key')}`);
  }
});

export function maxEntries<T extends z.ZodType<Record<string, unknown>>>(schema: T, max: number): T {
  return schema.superRefine((m, ctx) => {
    const n = Object.keys(m).length;
    if (n > max) issue(ctx, [], `must have at most ${max} entries, got ${n}`);
  }) as unknown as T;
}

/**
 * A resource list (`cpu: 4`, `memory: 16Gi`): every quantity parses. YAML numbers are
 * accepted, as Kubernetes does, and come out as strings (objects.ts ResourceList).
 */
export const resourceList = z
  .record(z.string(), z.unknown())
  .superRefine((m, ctx) => {
    for (const [name, raw] of Object.entries(m)) {
      const problem = quantityProblem(name, raw);
      if (problem) issue(ctx, [name], problem, raw);
    }
  })
  .transform((m) => Object.fromEntries(Object.entries(m).map(([k, v]) => [k, String(v)])) as Record<string, string>);

export const TAINT_EFFECTS = ['NoSchedule', 'PreferNoSchedule', 'NoExecute'] as const;

export const taint = z.looseObject({
  key: labelKey,
  value: z.string().optional(),
  effect: z.enum(TAINT_EFFECTS),
});

export const toleration = z.looseObject({
  key: z.string().optional(),
  operator: z.enum(['Exists', 'Equal']).optional(),
  value: z.string().optional(),
  effect: z.enum(['', ...TAINT_EFFECTS]).optional(),
  tolerationSeconds: z.int().optional(),
});

export const nodeSelectorRequirement = z.looseObject({
  key: z.string().min(1),
  operator: z.enum(['In', 'NotIn', 'Exists', 'DoesNotExist', 'Gt', 'Lt']),
  values: z.array(z.string()).optional(),
});

export const nodeSelectorTerm = z.looseObject({
  matchExpressions: z.array(nodeSelectorRequirement).optional(),
  matchFields: z.array(nodeSelectorRequirement).optional(),
});

export const nodeAffinity = z.looseObject({
  requiredDuringSchedulingIgnoredDuringExecution: z.looseObject({ nodeSelectorTerms: z.array(nodeSelectorTerm) }).optional(),
  preferredDuringSchedulingIgnoredDuringExecution: z
    .array(z.looseObject({ weight: z.int().min(1).max(100), preference: nodeSelectorTerm }))
    .optional(),
});

export const container = z.looseObject({
  name: z.string().min(1),
  image: z.string().optional(),
  resources: z.looseObject({ requests: resourceList.optional(), limits: resourceList.optional() }).optional(),
  restartPolicy: z.string().optional(),
});

export const podSpec = z.looseObject({
  containers: z.array(container).min(1, { error: 'a pod needs at least one container' }),
  initContainers: z.array(container).optional(),
  overhead: resourceList.optional(),
  nodeSelector: labelMap.optional(),
  tolerations: z.array(toleration).optional(),
  affinity: z.looseObject({ nodeAffinity: nodeAffinity.optional() }).optional(),
  nodeName: z.string().optional(),
  schedulingGates: z.array(z.looseObject({ name: z.string().min(1) })).optional(),
  priorityClassName: z.string().optional(),
  restartPolicy: z.string().optional(),
});

export const podTemplate = z.looseObject({
  metadata: z.looseObject({ name: z.string().optional(), labels: labelMap.optional(), annotations: annotationMap.optional() }).optional(),
  spec: podSpec,
});

export const ownerReference = z.looseObject({
  apiVersion: z.string(),
  kind: z.string(),
  name: z.string(),
  uid: z.string(),
  controller: z.boolean().optional(),
});

export const objectMeta = z.looseObject({
  name: dnsSubdomain,
  namespace: dnsLabel.optional(),
  uid: z.string().optional(),
  generateName: z.string().optional(),
  labels: labelMap.optional(),
  annotations: annotationMap.optional(),
  creationTimestamp: z.string().optional(),
  resourceVersion: z.string().optional(),
  ownerReferences: z.array(ownerReference).optional(),
  finalizers: z.array(z.string()).optional(),
  deletionTimestamp: z.string().optional(),
});

export const condition = z.looseObject({ type: z.string().min(1), status: z.string() });

/** An object of `kind` whose spec and status are given. */
export function kobject<S extends Record<string, z.ZodType>>(shape: S) {
  return z.looseObject({ apiVersion: z.string(), kind: z.string(), metadata: objectMeta, ...shape });
}
