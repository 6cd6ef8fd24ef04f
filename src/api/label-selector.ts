// Kubernetes label selector semantics (metav1.LabelSelector): every matchLabels pair and
// every matchExpressions requirement must hold; NotIn and DoesNotExist match objects
// without the key; an empty selector matches everything.

import type { StringMap } from './objects.ts';
import type { LabelSelector } from './volcano-objects.ts';

export function labelSelectorMatches(selector: LabelSelector, labels: StringMap | undefined): boolean {
  const l = labels ?? {};
  // Called per head and ClusterQueue in every cycle: no entry arrays for the common empty selector.
  const ml = selector.matchLabels;
  if (ml) for (const k in ml) if (l[k] !== ml[k]) return false;
  const exprs = selector.matchExpressions;
  if (!exprs) return true;
  for (const r of exprs) {
    const has = Object.hasOwn(l, r.key);
    const values = r.values ?? [];
    switch (r.operator) {
      case 'In':
        if (!has || !values.includes(l[r.key]!)) return false;
        break;
      case 'NotIn':
        if (has && values.includes(l[r.key]!)) return false;
        break;
      case 'Exists':
        if (!has) return false;
        break;
      case 'DoesNotExist':
        if (has) return false;
        break;
    }
  }
  return true;
}
