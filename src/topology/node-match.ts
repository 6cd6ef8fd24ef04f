// Kubernetes node-matching rules used by the placement filters: taints against
// tolerations, nodeSelector, required and preferred node affinity. Pure functions over
// a node's labels, name and taints.

import type { NodeSelectorRequirement, NodeSelectorTerm, PreferredSchedulingTerm, StringMap, Taint, Toleration } from '../api/objects.ts';

/** Standard toleration semantics (empty key + Exists tolerates everything). */
export function tolerates(t: Toleration, taint: Taint): boolean {
  if (t.effect && t.effect !== taint.effect) return false;
  const op = t.operator ?? 'Equal';
  if (!t.key) return op === 'Exists';
  if (t.key !== taint.key) return false;
  if (op === 'Exists') return true;
  return (t.value ?? '') === (taint.value ?? '');
}

/** The first NoSchedule/NoExecute taint none of the tolerations tolerate, if any. */
export function untoleratedTaint(taints: readonly Taint[], tolerations: readonly Toleration[]): Taint | undefined {
  for (const taint of taints) {
    if (taint.effect !== 'NoSchedule' && taint.effect !== 'NoExecute') continue;
    if (!tolerations.some((t) => tolerates(t, taint))) return taint;
  }
  return undefined;
}

/** `key=value:Effect`, or `key:Effect` without a value, as the peer prints taints. */
export function formatTaint(t: Taint): string {
  return t.value ? `${t.key}=${t.value}:${t.effect}` : `${t.key}:${t.effect}`;
}

export function matchesNodeSelector(labels: StringMap, selector: StringMap | undefined): boolean {
  if (!selector) return true;
  for (const k in selector) if (labels[k] !== selector[k]) return false;
  return true;
}

/** One selector requirement against a label value (undefined when the label is absent). */
export function matchesRequirement(value: string | undefined, r: NodeSelectorRequirement): boolean {
  const vals = r.values ?? [];
  switch (r.operator) {
    case 'In':
      return value !== undefined && vals.includes(value);
    case 'NotIn':
      return value === undefined || !vals.includes(value);
    case 'Exists':
      return value !== undefined;
    case 'DoesNotExist':
      return value === undefined;
    case 'Gt':
    case 'Lt': {
      if (value === undefined || vals.length !== 1) return false;
      const a = Number.parseInt(value, 10);
      const b = Number.parseInt(vals[0]!, 10);
      if (!Number.isInteger(a) || !Number.isInteger(b)) return false;
      return r.operator === 'Gt' ? a > b : a < b;
    }
    default:
      return false;
  }
}

/** A term matches when all its expressions and fields match; an empty term matches nothing. */
export function matchesTerm(labels: StringMap, nodeName: string, term: NodeSelectorTerm): boolean {
  const exprs = term.matchExpressions ?? [];
  const fields = term.matchFields ?? [];
  if (exprs.length === 0 && fields.length === 0) return false;
  for (const e of exprs) if (!matchesRequirement(labels[e.key], e)) return false;
  for (const f of fields) if (!matchesRequirement(f.key === 'metadata.name' ? nodeName : undefined, f)) return false;
  return true;
}

/** Required node affinity: OR of terms. No terms means no constraint. */
export function matchesRequiredAffinity(labels: StringMap, nodeName: string, terms: readonly NodeSelectorTerm[] | undefined): boolean {
  if (!terms || terms.length === 0) return true;
  return terms.some((t) => matchesTerm(labels, nodeName, t));
}

/** Preferred node affinity score: sum of the weights of matching terms. */
export function preferredAffinityScore(labels: StringMap, nodeName: string, terms: readonly PreferredSchedulingTerm[] | undefined): number {
  if (!terms) return 0;
  let s = 0;
  for (const t of terms) if (matchesTerm(labels, nodeName, t.preference)) s += t.weight;
  return s;
}

/** Checks a selector for the things Kubernetes rejects; returns a message or undefined. */
export function validateNodeSelectorTerms(terms: readonly NodeSelectorTerm[]): string | undefined {
  for (const [i, t] of terms.entries()) {
    for (const [j, e] of (t.matchExpressions ?? []).entries()) {
      const n = e.values?.length ?? 0;
      const where = `nodeSelectorTerms[${i}].matchExpressions[${j}]`;
      if ((e.operator === 'In' || e.operator === 'NotIn') && n === 0)
        return `${where}.values: Required value: must be specified when \`operator\` is 'In' or 'NotIn'`;
      if ((e.operator === 'Exists' || e.operator === 'DoesNotExist') && n > 0)
        return `${where}.values: Forbidden: may not be specified when \`operator\` is 'Exists' or 'DoesNotExist'`;
      if ((e.operator === 'Gt' || e.operator === 'Lt') && (n !== 1 || !/^-?\d+$/.test(e.values![0]!)))
        return `${where}.values: Required value: must be specified single value when \`operator\` is 'Lt' or 'Gt'`;
      if (!['In', 'NotIn', 'Exists', 'DoesNotExist', 'Gt', 'Lt'].includes(e.operator))
        return `${where}.operator: Invalid value: "${e.operator}": not a valid selector operator`;
    }
  }
  return undefined;
}
