// Fluent fixture builders shared by every suite:
//   node('x1').labels({ rack: 'r1' }).cpu('4').gpu(8).build()
// Test-only: imported by *.test.ts files and benchmarks, never by product code.

import { HOSTNAME_LABEL } from '../api/keys.ts';
import type { Node, Pod, StringMap, Taint } from '../api/objects.ts';
import { LabelTopologySource, nodeInfoFromNode } from '../topology/source.ts';
import { TopologySnapshot } from '../topology/snapshot.ts';

export class NodeBuilder {
  private readonly obj: Node;
  constructor(name: string) {
    this.obj = {
      apiVersion: 'v1',
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
      apiVersion: 'v1',
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
export function snapshotOf(levels: string[], nodes: (Node | NodeBuilder)[], opts: { name?: string; nodeLabels?: StringMap } = {}): TopologySnapshot {
  const s = new TopologySnapshot(new LabelTopologySource(opts.name ?? 'default', levels), { nodeLabels: opts.nodeLabels });
  for (const n of nodes) s.upsertNode(nodeInfoFromNode(n instanceof NodeBuilder ? n.build() : n));
  return s;
}

export const BLOCK = 'cloud.com/block';
export const RACK = 'cloud.com/rack';
export { HOSTNAME_LABEL as HOST };

/** Nodes `prefix-<i>` in one rack with the given pod capacities (1 cpu per pod). */
export function rackOf(block: string, rack: string, caps: number[], prefix = `${block}-${rack}-x`): NodeBuilder[] {
  return caps.map((c, i) => node(`${prefix}${i + 1}`).labels({ [BLOCK]: block, [RACK]: rack }).cpu(c));
}
