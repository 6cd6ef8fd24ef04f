// `plan -o table|wide|name`: the plan as kubectl users read it. One row per Workload:
// name, status, where its pods go (domains at the level it asked for, e.g.
// `rack b1-r2 x4`; host names whole, not the compact v1beta2 encoding), and why it waits.

import type { Node, Topology, Workload } from '../api/objects.ts';
import { HOSTNAME_LABEL } from '../api/keys.ts';
import { decodeV1beta2 } from '../placement/assignment-codec.ts';
import { levelName } from '../placement/explain.ts';

function statusOf(w: Workload): string {
  const c = (type: string) => w.status?.conditions?.find((x) => x.type === type);
  if (w.spec.active === false) return 'Inactive';
  if (c('Evicted')?.status === 'True') return 'Evicted';
  if (w.status?.admission) return 'Admitted';
  return 'Pending';
}

function reasonOf(w: Workload): string {
  const status = statusOf(w);
  if (status === 'Admitted') return '';
  const c = w.status?.conditions?.find((x) => (status === 'Evicted' ? x.type === 'Evicted' : x.type === 'QuotaReserved'));
  return c?.message ?? c?.reason ?? '';
}

/**
 * Where each PodSet's pods go: per PodSet, the domains at the level it asked for (the
 * node's label for that level), with pod counts; the hosts when the level is unknown.
 */
function whereOf(
  w: Workload,
  nodeLabels: ReadonlyMap<string, Record<string, string>>,
  ancestorsOf: (level: string) => readonly string[],
): string {
  const admission = w.status?.admission;
  if (!admission) return '';
  const parts: string[] = [];
  for (const psa of admission.podSetAssignments) {
    if (!psa.topologyAssignment) continue;
    const ps = w.spec.podSets.find((p) => p.name === psa.name);
    const req = ps?.topologyRequest;
    const level = req?.required ?? req?.preferred;
    let decoded;
    try {
      decoded = decodeV1beta2(psa.topologyAssignment);
    } catch {
      continue;
    }
    const hostAt = decoded.levels.indexOf(HOSTNAME_LABEL);
    const byDomain = new Map<string, number>();
    let shownLevel = decoded.levels[decoded.levels.length - 1] ?? HOSTNAME_LABEL;
    for (const d of decoded.domains) {
      const host = hostAt >= 0 ? d.values[hostAt] : undefined;
      const at = level !== undefined ? decoded.levels.indexOf(level) : -1;
      let value = d.values[d.values.length - 1]!;
      if (at >= 0) {
        value = d.values[at]!;
        shownLevel = level!;
      } else if (level !== undefined && host !== undefined && nodeLabels.get(host)?.[level] !== undefined) {
        // A domain is named by its path: a rack's value alone may repeat in every block.
        const labels = nodeLabels.get(host)!;
        value = [...ancestorsOf(level), level].map((k) => labels[k] ?? '?').join('/');
        shownLevel = level;
      }
      byDomain.set(value, (byDomain.get(value) ?? 0) + d.count);
    }
    const domains = [...byDomain].map(([v, n]) => `${v} x${n}`).join(', ');
    parts.push(`${admission.podSetAssignments.length > 1 ? `${psa.name}: ` : ''}${levelName(shownLevel)} ${domains}`);
  }
  return parts.join('; ');
}

function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length)));
  return (
    rows
      .map((r) =>
        r
          .map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!)))
          .join('   ')
          .trimEnd(),
      )
      .join('\n') + '\n'
  );
}

/** `-o table` (and `wide`: plus ClusterQueue, owner and pod count). */
export function renderPlanTable(
  workloads: readonly Workload[],
  nodes: readonly Node[],
  topologies: readonly Topology[],
  wide: boolean,
): string {
  const ancestorsOf = (level: string): string[] => {
    for (const t of topologies) {
      const keys = t.spec.levels.map((l) => l.nodeLabel);
      const i = keys.indexOf(level);
      if (i >= 0) return keys.slice(0, i);
    }
    return [];
  };
  const labels = new Map(nodes.map((n) => [n.metadata.name, n.metadata.labels ?? {}]));
  for (const n of nodes) {
    const h = n.metadata.labels?.[HOSTNAME_LABEL];
    if (h !== undefined && !labels.has(h)) labels.set(h, n.metadata.labels ?? {});
  }
  const head = wide
    ? ['WORKLOAD', 'STATUS', 'CLUSTERQUEUE', 'OWNER', 'PODS', 'WHERE', 'REASON']
    : ['WORKLOAD', 'STATUS', 'WHERE', 'REASON'];
  const rows = workloads.map((w) => {
    const name = `${w.metadata.namespace ?? 'default'}/${w.metadata.name}`;
    const owner = w.metadata.ownerReferences?.[0];
    const pods = String(w.spec.podSets.reduce((a, p) => a + p.count, 0));
    const base = [name, statusOf(w)];
    const rest = [whereOf(w, labels, ancestorsOf) || '-', reasonOf(w)];
    return wide
      ? [...base, w.status?.admission?.clusterQueue ?? '-', owner ? `${owner.kind}/${owner.name}` : '-', pods, ...rest]
      : [...base, ...rest];
  });
  return table([head, ...rows]);
}

/** `-o name`: `workload.kueue.x-k8s.io/<name>`, one per line, as kubectl prints names. */
export function renderPlanNames(workloads: readonly Workload[]): string {
  return workloads.map((w) => `workload.kueue.x-k8s.io/${w.metadata.name}\n`).join('');
}
