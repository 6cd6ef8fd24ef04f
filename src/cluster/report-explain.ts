// The report's `explain` for workloads still pending at the end of a run: the text of
// `plan --explain` (placement/explain.ts) against the cluster the run leaves.
//
// 1. the TAS flavors are built once, from the store at the end (nodes, ResourceFlavors,
//    Topologies, HyperNodes), with every bound, non-terminal Pod as usage (as the dashboard
//    does: a Workload admitted whose pods are not bound yet is not counted);
// 2. per pending entry, each of its live Workloads without an admission is explained, with
//    its QuotaReserved reason folded in (quota, or what else holds it back).
// At most EXPLAINED entries are explained (the first, in report order): each one costs a
// pass over every node.

import type { Node, Pod, ResourceFlavor, Topology, Workload } from '../api/objects.ts';
import { isTerminal } from '../api/objects.ts';
import { podRequests } from '../api/resources.ts';
import type { HyperNode } from '../api/volcano-objects.ts';
import { explainTopology, renderExplanation, withPendingReason } from '../placement/explain.ts';
import { buildTasFlavors } from '../placement/tas-flavors.ts';
import type { TasFlavor } from '../placement/workload-placement.ts';
import { HyperNodeTree } from '../topology/hypernode-tree.ts';
import { nodeInfoFromNode, type NodeInfo } from '../topology/source.ts';
import type { SimulationRun } from './simulation.ts';
import type { EntryRecord } from './timeline.ts';

/** Pending entries explained per report, at most. */
export const EXPLAINED = 50;

function flavorsAtEnd(run: SimulationRun): TasFlavor[] {
  const store = run.cluster.store;
  const infos: NodeInfo[] = [];
  for (const n of store.listSync<Node>('Node')) {
    try {
      infos.push(nodeInfoFromNode(n));
    } catch {
      // A node with a bad allocatable takes no part (the run reported it).
    }
  }
  const hyperNodes = store.listSync<HyperNode>('HyperNode');
  const { flavors } = buildTasFlavors({
    flavors: store.listSync<ResourceFlavor>('ResourceFlavor'),
    topologies: new Map(store.listSync<Topology>('Topology').map((t) => [t.metadata.name, t])),
    tree: hyperNodes.length > 0 ? new HyperNodeTree(hyperNodes, infos) : undefined,
    nodes: infos,
  });
  for (const p of store.listSync<Pod>('Pod')) {
    if (!p.spec?.nodeName || isTerminal(p)) continue;
    let requests;
    try {
      requests = podRequests(p.spec);
    } catch {
      continue;
    }
    for (const f of flavors) f.snapshot.addPod(`${p.metadata.namespace ?? 'default'}/${p.metadata.name}`, p.spec.nodeName, requests);
  }
  return flavors;
}

/**
 * A function giving the `explain` text of a pending entry (undefined for any other, and
 * past the first EXPLAINED): the flavors are built on the first call only.
 */
export function pendingExplainer(run: SimulationRun): (e: EntryRecord, status: string) => string | undefined {
  let flavors: TasFlavor[] | undefined;
  let explained = 0;
  return (e, status) => {
    if (status !== 'Pending' || explained >= EXPLAINED) return undefined;
    const waiting: Workload[] = [];
    for (const k of e.workloads) {
      const r = run.timeline.workloads.get(k);
      if (r && !r.deleted && !r.last.status?.admission && r.last.spec.active !== false) waiting.push(r.last);
    }
    if (waiting.length === 0) return undefined;
    explained++;
    flavors ??= flavorsAtEnd(run);
    return waiting
      .map((w) => {
        const c = w.status?.conditions?.find((x) => x.type === 'QuotaReserved' && x.status === 'False');
        return renderExplanation(withPendingReason(explainTopology(w, flavors!), c?.reason, c?.message));
      })
      .join('');
  };
}
