// zod pieces shared by the kind modules (schemas.ts, volcano.ts, queues.ts, gang.ts): a
// custom-issue helper, Kubernetes quantities and metav1.LabelSelector with their messages.
// It imports no kind module, so every kind module can import it without a cycle.

import { z } from 'zod';
import { QuantityError, parseQuantity, showInput } from './quantity.ts';
import { resourceAmount } from './resources.ts';
import { labelKeyProblem, labelValueProblem } from './topology-request.ts';

export type Ctx = z.core.$RefinementCtx;

export const issue = (ctx: Ctx, path: (string | number)[], message: string, input?: unknown) => ctx.addIssue({ code: 'custom', path, message, input });

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
