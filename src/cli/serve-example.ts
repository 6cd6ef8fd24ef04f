// The data centre `serve` starts with when given no -f: the GPU cluster of
// examples/tas-basic (2 blocks x 2 racks x 4 hosts, 8 GPUs each, labels for Kueue's
// Topology) with one ClusterQueue owning all of it and a LocalQueue `user-queue` in the
// `default` and `research` namespaces, so `kubectl apply -f examples/tas-basic/workloads.yaml`
// is queued, admitted and placed at once.

import type { KObject } from '../api/objects.ts';

const BLOCK = 'cloud.provider.com/topology-block';
const RACK = 'cloud.provider.com/topology-rack';
const HOST = 'kubernetes.io/hostname';

export function exampleDataCentre(): KObject[] {
  const objects: KObject[] = [
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'research' } },
    {
      apiVersion: 'kueue.x-k8s.io/v1beta2',
      kind: 'Topology',
      metadata: { name: 'default' },
      spec: { levels: [{ nodeLabel: BLOCK }, { nodeLabel: RACK }, { nodeLabel: HOST }] },
    } as KObject,
    {
      apiVersion: 'kueue.x-k8s.io/v1beta2',
      kind: 'ResourceFlavor',
      metadata: { name: 'tas-flavor' },
      spec: { nodeLabels: { 'cloud.provider.com/node-group': 'tas' }, topologyName: 'default' },
    } as KObject,
  ];
  for (let b = 1; b <= 2; b++) {
    for (let r = 1; r <= 2; r++) {
      for (let n = 1; n <= 4; n++) {
        const name = `b${b}-r${r}-n${n}`;
        objects.push({
          apiVersion: 'v1',
          kind: 'Node',
          metadata: { name, labels: { [HOST]: name, 'cloud.provider.com/node-group': 'tas', [BLOCK]: `block-${b}`, [RACK]: `rack-${r}` } },
          status: {
            allocatable: { cpu: '96', memory: '1Ti', 'nvidia.com/gpu': '8', pods: '110' },
            capacity: { cpu: '96', memory: '1Ti', 'nvidia.com/gpu': '8', pods: '110' },
            conditions: [{ type: 'Ready', status: 'True' }],
            nodeInfo: { kubeletVersion: 'v1.32.0-topoqueue' },
          },
        } as KObject);
      }
    }
  }
  objects.push({
    apiVersion: 'kueue.x-k8s.io/v1beta2',
    kind: 'ClusterQueue',
    metadata: { name: 'cluster-queue' },
    spec: {
      namespaceSelector: {},
      resourceGroups: [
        {
          coveredResources: ['cpu', 'memory', 'nvidia.com/gpu'],
          flavors: [
            {
              name: 'tas-flavor',
              resources: [
                { name: 'cpu', nominalQuota: '1536' },
                { name: 'memory', nominalQuota: '16Ti' },
                { name: 'nvidia.com/gpu', nominalQuota: '128' },
              ],
            },
          ],
        },
      ],
    },
  } as KObject);
  for (const ns of ['default', 'research']) {
    objects.push({
      apiVersion: 'kueue.x-k8s.io/v1beta2',
      kind: 'LocalQueue',
      metadata: { name: 'user-queue', namespace: ns },
      spec: { clusterQueue: 'cluster-queue' },
    } as KObject);
  }
  return objects;
}
