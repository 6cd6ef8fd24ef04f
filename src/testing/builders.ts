// Fluent fixture builders shared by every suite:
//   node('x1').labels({ rack: 'r1' }).cpu('4').gpu(8).build()
// Test-only: imported by *.test.ts files and benchmarks, never by product code.

import { CoreApiVersion, VolcanoApiVersion } from '../api/api-versions.ts';
import { HOSTNAME_LABEL } from '../api/keys.ts';
import type { KObject, Node, Pod, StringMap, Taint } from '../api/objects.ts';
import type { HyperNode } from '../api/volcano-objects.ts';
import { HyperNodeTopologySource, HyperNodeTree } from '../topology/hypernode-tree.ts';
import { LabelTopologySource, nodeInfoFromNode } from '../topology/source.ts';
import { TopologySnapshot } from '../topology/snapshot.ts';

export class NodeBuilder {
  private readonly obj: Node;
  constructor(name: string) {
    this.obj = {
      apiVersion: CoreApiVersion.V1,
      kind: 'Node',
      metadata: { name, labels: { [HOSTNAME_LABEL]: name } },
      spec: {},
      status: { allocatable: { pods: '110' }, conditions: [{ type: 'Ready', status: 'True' }] },
    };
  }
  labels(l: StringMap): this {
    Object.assign(this.obj.metadata.labels!, l);
    return this;
  }
  hostname(h: string): this {
    this.obj.metadata.labels![HOSTNAME_LABEL] = h;
    return this;
  }
  resource(name: string, q: string | number): this {
    this.obj.status!.allocatable![name] = String(q);
    return this;
  }
  cpu(q: string | number): this {
    return this.resource('cpu', q);
  }
  memory(q: string): this {
    return this.resource('memory', q);
  }
  gpu(n: number): this {
    return this.resource('nvidia.com/gpu', n);
  }
  pods(n: number): this {
    return this.resource('pods', n);
  }
  taint(t: Taint): this {
    (this.obj.spec!.taints ??= []).push(t);
    return this;
  }
  notReady(): this {
    this.obj.status!.conditions = [{ type: 'Ready', status: 'False' }];
    return this;
  }
  unschedulable(): this {
    this.obj.spec!.unschedulable = true;
    return this;
  }
  build(): Node {
    return structuredClone(this.obj);
  }
}

export function node(name: string): NodeBuilder {
  return new NodeBuilder(name);
}

export class PodBuilder {
  private readonly obj: Pod;
  constructor(name: string) {
    this.obj = {
      apiVersion: CoreApiVersion.V1,
      kind: 'Pod',
      metadata: { name, namespace: 'default' },
      spec: { containers: [{ name: 'c', resources: { requests: {} } }] },
      status: { phase: 'Running' },
    };
  }
  on(nodeName: string): this {
    this.obj.spec.nodeName = nodeName;
    return this;
  }
  request(name: string, q: string | number): this {
    this.obj.spec.containers[0]!.resources!.requests![name] = String(q);
    return this;
  }
  phase(p: NonNullable<Pod['status']>['phase']): this {
    this.obj.status = { phase: p };
    return this;
  }
  build(): Pod {
    return structuredClone(this.obj);
  }
}

export function pod(name: string): PodBuilder {
  return new PodBuilder(name);
}

/** A snapshot over label levels from built nodes. */
export function snapshotOf(
  levels: string[],
  nodes: (Node | NodeBuilder)[],
  opts: { name?: string; nodeLabels?: StringMap } = {},
): TopologySnapshot {
  const s = new TopologySnapshot(new LabelTopologySource(opts.name ?? 'default', levels), { nodeLabels: opts.nodeLabels });
  for (const n of nodes) s.upsertNode(nodeInfoFromNode(n instanceof NodeBuilder ? n.build() : n));
  return s;
}

export const BLOCK = 'cloud.com/block';
export const RACK = 'cloud.com/rack';
export { HOSTNAME_LABEL as HOST };

/** Nodes `prefix-<i>` in one rack with the given pod capacities (1 cpu per pod). */
export function rackOf(block: string, rack: string, caps: number[], prefix = `${block}-${rack}-x`): NodeBuilder[] {
  return caps.map((c, i) =>
    node(`${prefix}${i + 1}`)
      .labels({ [BLOCK]: block, [RACK]: rack })
      .cpu(c),
  );
}

/** `hyperNode('s0').tier(1).nodes('n0', 'n1')`, `.hyperNodes('s0', 's1')`, `.regex('gpu-.*')`. */
export class HyperNodeBuilder {
  private readonly obj: HyperNode;
  constructor(name: string) {
    this.obj = { apiVersion: VolcanoApiVersion.HyperNode, kind: 'HyperNode', metadata: { name }, spec: { tier: 1, members: [] } };
  }
  tier(t: number, tierName?: string): this {
    this.obj.spec.tier = t;
    if (tierName !== undefined) this.obj.spec.tierName = tierName;
    return this;
  }
  nodes(...names: string[]): this {
    for (const name of names) this.obj.spec.members.push({ type: 'Node', selector: { exactMatch: { name } } });
    return this;
  }
  hyperNodes(...names: string[]): this {
    for (const name of names) this.obj.spec.members.push({ type: 'HyperNode', selector: { exactMatch: { name } } });
    return this;
  }
  regex(pattern: string): this {
    this.obj.spec.members.push({ type: 'Node', selector: { regexMatch: { pattern } } });
    return this;
  }
  labelMatch(matchLabels: StringMap): this {
    this.obj.spec.members.push({ type: 'Node', selector: { labelMatch: { matchLabels } } });
    return this;
  }
  /** Any member, as written. */
  member(m: HyperNode['spec']['members'][number]): this {
    this.obj.spec.members.push(m);
    return this;
  }
  build(): HyperNode {
    return structuredClone(this.obj);
  }
}

export function hyperNode(name: string): HyperNodeBuilder {
  return new HyperNodeBuilder(name);
}

/** A snapshot over a HyperNode tree (every tier, then the hostname). */
export function hyperNodeSnapshotOf(
  hyperNodes: (HyperNode | HyperNodeBuilder)[],
  nodes: (Node | NodeBuilder)[],
): { snapshot: TopologySnapshot; tree: HyperNodeTree } {
  const infos = nodes.map((n) => nodeInfoFromNode(n instanceof NodeBuilder ? n.build() : n));
  const tree = new HyperNodeTree(
    hyperNodes.map((h) => (h instanceof HyperNodeBuilder ? h.build() : h)),
    infos,
  );
  const snapshot = new TopologySnapshot(new HyperNodeTopologySource('hypernodes', tree));
  for (const i of infos) snapshot.upsertNode(i);
  return { snapshot, tree };
}

/** The seed's example 1: a spine-leaf tree of three tiers over node0..node7. */
export function seedSpineLeaf(): HyperNodeBuilder[] {
  return [
    hyperNode('s0').tier(1).nodes('node0', 'node1'),
    hyperNode('s1').tier(1).nodes('node2', 'node3'),
    hyperNode('s2').tier(1).nodes('node4', 'node5'),
    hyperNode('s3').tier(1).nodes('node6', 'node7'),
    hyperNode('s4').tier(2).hyperNodes('s0', 's1'),
    hyperNode('s5').tier(2).hyperNodes('s2', 's3'),
    hyperNode('s6').tier(3).hyperNodes('s4', 's5'),
  ];
}

/**
 * A raw (unparsed) object with a free-form spec, as the Volcano Job, PodGroup and HyperJob
 * suites feed their readers: `.topology()`, `.minAvailable()`, `.spec()`, `.meta()`, and
 * `build()` returns a deep copy. Subclasses add the kind's own fields.
 */
export class RawSpecBuilder<S extends Record<string, unknown> = Record<string, unknown>> {
  protected readonly obj: { apiVersion: string; kind: string; metadata: KObject['metadata']; spec: S };
  constructor(apiVersion: string, kind: string, name: string, spec: S) {
    this.obj = { apiVersion, kind, metadata: { name }, spec };
  }
  /** `spec.networkTopology`. */
  topology(nt: unknown): this {
    (this.obj.spec as Record<string, unknown>).networkTopology = nt;
    return this;
  }
  minAvailable(n: number): this {
    (this.obj.spec as Record<string, unknown>).minAvailable = n;
    return this;
  }
  spec(s: Record<string, unknown>): this {
    Object.assign(this.obj.spec, s);
    return this;
  }
  meta(m: Partial<KObject['metadata']>): this {
    Object.assign(this.obj.metadata, m);
    return this;
  }
  build(): KObject {
    return structuredClone(this.obj) as KObject;
  }
}
