// Regenerates golden.json: every case below is run through the real Go implementation,
// `kubectl patch --local -f live.json --type=<type> -p <patch> -o json` (offline, no server).
// Run once by hand (node src/kube/patch/testdata/generate.mjs) and commit golden.json; the
// unit tests read golden.json and need no kubectl. Where Go leaves a `$...` directive key in
// a value it copied from the patch verbatim, the expected result strips it, and nulls too
// (kube-apiserver's typed decoding drops unknown fields and never stores a null), and the case
// says so in `note`.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { URL } from 'node:url';

const container = (name, extra = {}) => ({ name, image: `${name}:1`, ...extra });

const pod = () => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: {
    name: 'p',
    namespace: 'default',
    labels: { app: 'web', tier: 'be' },
    annotations: { keep: 'k', drop: 'd' },
    finalizers: ['a.io/x', 'b.io/y'],
    ownerReferences: [{ apiVersion: 'batch/v1', kind: 'Job', name: 'j', uid: 'u1', controller: true }],
  },
  spec: {
    containers: [
      {
        name: 'c',
        image: 'nginx:1',
        ports: [{ containerPort: 80 }],
        env: [
          { name: 'A', value: '1' },
          { name: 'B', value: '2' },
        ],
        volumeMounts: [
          { name: 'data', mountPath: '/data' },
          { name: 'cache', mountPath: '/cache' },
        ],
        args: ['--a', '--b'],
      },
    ],
    volumes: [
      { name: 'data', emptyDir: {} },
      { name: 'cache', emptyDir: {} },
    ],
    tolerations: [
      { key: 'a', operator: 'Exists' },
      { key: 'b', operator: 'Exists' },
    ],
    hostAliases: [{ ip: '10.0.0.1', hostnames: ['one'] }],
    topologySpreadConstraints: [{ topologyKey: 'zone', maxSkew: 1, whenUnsatisfiable: 'DoNotSchedule' }],
    schedulingGates: [{ name: 'kueue.x-k8s.io/topology' }],
  },
  status: {
    phase: 'Running',
    conditions: [
      { type: 'Ready', status: 'False' },
      { type: 'PodScheduled', status: 'True' },
    ],
    podIPs: [{ ip: '10.1.0.5' }],
    containerStatuses: [{ name: 'c', ready: false, restartCount: 0 }],
  },
});

const threeContainers = () => {
  const p = pod();
  p.spec.containers = [container('c1'), container('c2'), container('c3')];
  return p;
};

const job = () => ({
  apiVersion: 'batch/v1',
  kind: 'Job',
  metadata: { name: 'train', namespace: 'default', annotations: { 'kubectl.kubernetes.io/last-applied-configuration': '{}\n' } },
  spec: {
    parallelism: 2,
    template: {
      metadata: { labels: { app: 'train' } },
      spec: {
        restartPolicy: 'Never',
        containers: [
          {
            name: 'main',
            image: 'busybox:1',
            env: [
              { name: 'A', value: '1' },
              { name: 'B', value: '2' },
            ],
          },
          { name: 'side', image: 'busybox:1' },
        ],
        tolerations: [{ key: 'gpu', operator: 'Exists' }],
      },
    },
    podFailurePolicy: { rules: [{ action: 'FailJob', onExitCodes: { operator: 'In', values: [1] } }] },
  },
  status: { conditions: [{ type: 'Suspended', status: 'False' }], active: 2 },
});

const node = () => ({
  apiVersion: 'v1',
  kind: 'Node',
  metadata: { name: 'node-a', labels: { 'topology.kubernetes.io/zone': 'z1' } },
  spec: { taints: [{ key: 'k1', effect: 'NoSchedule' }], podCIDRs: ['10.0.0.0/24'] },
  status: {
    conditions: [
      { type: 'Ready', status: 'True' },
      { type: 'MemoryPressure', status: 'False' },
    ],
    addresses: [
      { type: 'InternalIP', address: '10.0.0.1' },
      { type: 'Hostname', address: 'node-a' },
    ],
    images: [{ names: ['a'], sizeBytes: 1 }],
  },
});

const cordoned = () => {
  const n = node();
  n.spec.unschedulable = true;
  return n;
};

const namespace = () => ({
  apiVersion: 'v1',
  kind: 'Namespace',
  metadata: { name: 'team-a', labels: { team: 'a' } },
  spec: { finalizers: ['kubernetes'] },
  status: { phase: 'Active', conditions: [{ type: 'NamespaceDeletionDiscoveryFailure', status: 'False' }] },
});

const lease = () => ({
  apiVersion: 'coordination.k8s.io/v1',
  kind: 'Lease',
  metadata: { name: 'node-a', namespace: 'kube-node-lease' },
  spec: { holderIdentity: 'node-a', leaseDurationSeconds: 40, renewTime: '2026-11-21T05:09:41.000000Z' },
});

const event = () => ({
  apiVersion: 'v1',
  kind: 'Event',
  metadata: { name: 'p.1', namespace: 'default' },
  involvedObject: { kind: 'Pod', name: 'p', namespace: 'default', uid: 'u1' },
  reason: 'Scheduled',
  message: 'assigned',
  count: 1,
  type: 'Normal',
  source: { component: 'topoqueue' },
});

const workload = () => ({
  apiVersion: 'kueue.x-k8s.io/v1beta2',
  kind: 'Workload',
  metadata: { name: 'wl1', namespace: 'default', labels: { team: 'a' } },
  spec: {
    queueName: 'lq',
    podSets: [
      { name: 'main', count: 2 },
      { name: 'aux', count: 1 },
    ],
  },
});

const strategic = [
  // §7.2: kubectl apply's real bodies.
  [
    'job-second-apply-renamed-container',
    job(),
    {
      metadata: { annotations: { 'kubectl.kubernetes.io/last-applied-configuration': '{"new":true}\n' } },
      spec: {
        template: {
          spec: {
            '$setElementOrder/containers': [{ name: 'main' }, { name: 'side2' }],
            containers: [
              { '$setElementOrder/env': [{ name: 'A' }, { name: 'B' }], env: [{ name: 'B', value: '3' }], name: 'main' },
              { image: 'busybox:1', name: 'side2' },
              { $patch: 'delete', name: 'side' },
            ],
          },
        },
      },
    },
  ],
  [
    'pod-label-removed-image-changed-port-added',
    pod(),
    {
      metadata: { annotations: { 'kubectl.kubernetes.io/last-applied-configuration': '{}\n' }, labels: { app: null, tier: 'fe' } },
      spec: {
        '$setElementOrder/containers': [{ name: 'c' }],
        containers: [
          {
            '$setElementOrder/ports': [{ containerPort: 80 }, { containerPort: 443 }],
            image: 'nginx:2',
            name: 'c',
            ports: [{ containerPort: 443 }],
          },
        ],
        tolerations: [{ key: 'a', operator: 'Exists' }],
      },
    },
  ],
  [
    'pod-finalizers-annotations-volumes-retainkeys',
    pod(),
    {
      metadata: {
        '$deleteFromPrimitiveList/finalizers': ['b.io/y'],
        '$setElementOrder/finalizers': ['a.io/x'],
        annotations: { drop: null },
      },
      spec: {
        '$setElementOrder/containers': [{ name: 'c' }],
        containers: [
          {
            '$setElementOrder/volumeMounts': [{ mountPath: '/data' }],
            name: 'c',
            volumeMounts: [{ $patch: 'delete', mountPath: '/cache' }],
          },
        ],
        '$setElementOrder/volumes': [{ name: 'data' }],
        volumes: [
          { $retainKeys: ['hostPath', 'name'], emptyDir: null, hostPath: { path: '/tmp' }, name: 'data' },
          { $patch: 'delete', name: 'cache' },
        ],
      },
    },
  ],
  ['node-taints-atomic', node(), { spec: { taints: [{ effect: 'NoSchedule', key: 'k2' }] } }],
  [
    'node-taint-removed-shorter-list',
    (() => {
      const n = node();
      n.spec.taints.push({ key: 'k2', effect: 'NoExecute' });
      return n;
    })(),
    { spec: { taints: [{ effect: 'NoExecute', key: 'k2' }] } },
  ],
  ['node-cordon', node(), { spec: { unschedulable: true } }],
  ['node-uncordon', cordoned(), { spec: { unschedulable: null } }],
  ['node-already-cordoned', cordoned(), { spec: { unschedulable: true } }],
  // Directives in maps.
  ['map-patch-replace', pod(), { metadata: { labels: { $patch: 'replace', z: '9' } } }],
  ['map-patch-delete', pod(), { metadata: { labels: { $patch: 'delete' } } }],
  [
    'map-patch-replace-nested-struct',
    job(),
    { spec: { template: { spec: { $patch: 'replace', restartPolicy: 'OnFailure', containers: [{ name: 'only', image: 'x' }] } } } },
  ],
  ['map-patch-merge-is-an-error', pod(), { metadata: { $patch: 'merge', labels: { q: '1' } } }],
  ['map-unknown-patch-type', pod(), { metadata: { labels: { $patch: 'bogus', q: '1' } } }],
  // Directives in lists.
  ['list-patch-replace', threeContainers(), { spec: { containers: [{ $patch: 'replace' }, { name: 'new', image: 'new:1' }] } }],
  ['list-patch-delete', threeContainers(), { spec: { containers: [{ $patch: 'delete', name: 'c2' }] } }],
  ['list-patch-delete-missing-element', threeContainers(), { spec: { containers: [{ $patch: 'delete', name: 'zz' }] } }],
  ['list-patch-delete-without-merge-key', threeContainers(), { spec: { containers: [{ $patch: 'delete', image: 'c2:1' }] } }],
  ['list-patch-merge-is-an-error', threeContainers(), { spec: { containers: [{ $patch: 'merge', name: 'c1' }] } }],
  // Ordering.
  [
    'new-elements-first-without-set-element-order',
    threeContainers(),
    {
      spec: {
        containers: [
          { name: 'c2', image: 'c2:2' },
          { name: 'new', image: 'new:1' },
        ],
      },
    },
  ],
  [
    'only-new-elements-go-first',
    threeContainers(),
    {
      spec: {
        containers: [
          { name: 'n1', image: 'n:1' },
          { name: 'n2', image: 'n:2' },
        ],
      },
    },
  ],
  [
    'set-element-order-keeps-server-only-items',
    threeContainers(),
    { spec: { '$setElementOrder/containers': [{ name: 'c2' }, { name: 'c1' }], containers: [{ name: 'c1', image: 'c1:2' }] } },
  ],
  [
    'set-element-order-with-new-and-server-only',
    threeContainers(),
    { spec: { '$setElementOrder/containers': [{ name: 'c1' }, { name: 'n' }, { name: 'c2' }], containers: [{ name: 'n', image: 'n:1' }] } },
  ],
  [
    'set-element-order-only-reorders',
    threeContainers(),
    { spec: { '$setElementOrder/containers': [{ name: 'c3' }, { name: 'c2' }, { name: 'c1' }] } },
  ],
  [
    'set-element-order-mismatch-is-an-error',
    threeContainers(),
    { spec: { '$setElementOrder/containers': [{ name: 'c1' }], containers: [{ name: 'c2', image: 'x' }] } },
  ],
  [
    'set-element-order-primitive-list',
    pod(),
    { metadata: { '$setElementOrder/finalizers': ['c.io/z', 'b.io/y', 'a.io/x'], finalizers: ['c.io/z'] } },
  ],
  // Merge keys.
  ['missing-merge-key-is-an-error', pod(), { spec: { containers: [{ image: 'z' }] } }],
  ['missing-merge-key-in-nested-list', pod(), { spec: { containers: [{ name: 'c', env: [{ value: 'v' }] }] } }],
  [
    'nested-env-ports-volume-mounts',
    pod(),
    {
      spec: {
        containers: [
          {
            name: 'c',
            env: [
              { name: 'B', value: '22' },
              { name: 'C', value: '3' },
            ],
            ports: [{ containerPort: 80, name: 'http' }, { containerPort: 8080 }],
            volumeMounts: [{ mountPath: '/logs', name: 'logs' }],
          },
        ],
      },
    },
  ],
  ['container-args-atomic', pod(), { spec: { containers: [{ name: 'c', args: ['--c'] }] } }],
  [
    'job-template-spec-env-merge',
    job(),
    { spec: { template: { spec: { containers: [{ name: 'main', env: [{ name: 'C', value: '3' }] }] } } } },
  ],
  ['job-template-metadata-labels', job(), { spec: { template: { metadata: { labels: { app: null, role: 'w' } } } } }],
  ['job-template-tolerations-atomic', job(), { spec: { template: { spec: { tolerations: [{ key: 'tpu', operator: 'Exists' }] } } } }],
  [
    'job-pod-failure-policy-rules-atomic',
    job(),
    { spec: { podFailurePolicy: { rules: [{ action: 'Ignore', onPodConditions: [{ type: 'DisruptionTarget' }] }] } } },
  ],
  [
    'job-status-conditions-by-type',
    job(),
    {
      status: {
        conditions: [
          { type: 'Complete', status: 'True' },
          { type: 'Suspended', status: 'True' },
        ],
      },
    },
  ],
  ['pod-tolerations-atomic', pod(), { spec: { tolerations: [{ key: 'c', operator: 'Exists' }] } }],
  ['pod-finalizers-union', pod(), { metadata: { finalizers: ['c.io/z', 'a.io/x'] } }],
  ['pod-delete-from-primitive-list', pod(), { metadata: { '$deleteFromPrimitiveList/finalizers': ['a.io/x', 'nope'] } }],
  [
    'pod-owner-references-by-uid',
    pod(),
    {
      metadata: {
        ownerReferences: [
          { uid: 'u1', blockOwnerDeletion: true },
          { apiVersion: 'v1', kind: 'ConfigMap', name: 'cm', uid: 'u2' },
        ],
      },
    },
  ],
  [
    'pod-status-conditions-by-type',
    pod(),
    {
      status: {
        conditions: [
          { type: 'Ready', status: 'True' },
          { type: 'ContainersReady', status: 'True' },
        ],
        podIPs: [{ ip: '10.1.0.6' }],
        containerStatuses: [{ name: 'c', ready: true, restartCount: 0 }],
      },
    },
  ],
  [
    'pod-host-aliases-topology-spread-gates',
    pod(),
    {
      spec: {
        hostAliases: [
          { ip: '10.0.0.1', hostnames: ['uno'] },
          { ip: '10.0.0.2', hostnames: ['two'] },
        ],
        topologySpreadConstraints: [{ topologyKey: 'zone', maxSkew: 2 }],
        schedulingGates: [{ $patch: 'delete', name: 'kueue.x-k8s.io/topology' }],
      },
    },
  ],
  [
    'pod-volumes-add-and-retain-keys-error',
    pod(),
    { spec: { volumes: [{ $retainKeys: ['name'], name: 'data', hostPath: { path: '/x' } }] } },
  ],
  [
    'null-deletes-and-null-for-absent-key',
    pod(),
    { metadata: { labels: { app: null, nope: null }, annotations: null }, spec: { nodeName: null } },
  ],
  [
    'new-map-with-nulls-and-directives',
    pod(),
    { spec: { nodeSelector: { a: '1', b: null }, securityContext: { runAsUser: 1000, sysctls: null } } },
  ],
  [
    'new-list-with-nested-directives',
    pod(),
    {
      spec: {
        initContainers: [
          {
            name: 'i',
            '$setElementOrder/env': [{ name: 'A' }],
            env: [
              { name: 'A', value: '1' },
              { $patch: 'delete', name: 'B' },
            ],
          },
        ],
      },
    },
  ],
  ['delete-from-primitive-list-without-live-list', node(), { metadata: { '$deleteFromPrimitiveList/finalizers': ['x'] } }],
  ['type-change-scalar-to-map', pod(), { spec: { containers: [{ name: 'c', resources: 'bad' }] }, metadata: { labels: 'x' } }],
  [
    'namespace-spec-finalizers-atomic',
    namespace(),
    { spec: { finalizers: ['example.com/x'] }, status: { conditions: [{ type: 'NamespaceDeletionContentFailure', status: 'True' }] } },
  ],
  [
    'node-pod-cidrs-union-status-by-type',
    node(),
    {
      spec: { podCIDRs: ['10.0.1.0/24'] },
      status: {
        conditions: [{ type: 'Ready', status: 'False', reason: 'KubeletDown' }],
        addresses: [{ type: 'ExternalIP', address: '1.2.3.4' }],
        images: [{ names: ['b'], sizeBytes: 2 }],
      },
    },
  ],
  ['lease-renew', lease(), { spec: { renewTime: '2026-11-21T05:10:21.000000Z', holderIdentity: 'node-a' } }],
  ['event-count', event(), { count: 2, lastTimestamp: '2026-11-21T05:10:21Z', metadata: { annotations: { a: 'b' } } }],
  [
    'set-element-order-delete-in-middle-with-server-only',
    (() => {
      const p = pod();
      p.spec.containers = [container('a'), container('b'), container('c'), container('d')];
      return p;
    })(),
    {
      spec: {
        '$setElementOrder/containers': [{ name: 'a' }, { name: 'n' }, { name: 'c' }],
        containers: [
          { name: 'n', image: 'n:1' },
          { $patch: 'delete', name: 'b' },
        ],
      },
    },
  ],
  [
    'job-second-apply-with-server-added-container',
    (() => {
      const j = job();
      j.spec.template.spec.containers.push({ name: 'injected', image: 'proxy:1' });
      return j;
    })(),
    {
      spec: {
        template: {
          spec: {
            '$setElementOrder/containers': [{ name: 'main' }, { name: 'side2' }],
            containers: [
              { '$setElementOrder/env': [{ name: 'A' }, { name: 'B' }], env: [{ name: 'B', value: '3' }], name: 'main' },
              { image: 'busybox:1', name: 'side2' },
              { $patch: 'delete', name: 'side' },
            ],
          },
        },
      },
    },
  ],
  [
    'new-elements-first-with-several-server-items',
    threeContainers(),
    {
      spec: {
        containers: [
          { name: 'c3', image: 'c3:2' },
          { name: 'n', image: 'n:1' },
          { name: 'c1', image: 'c1:2' },
        ],
      },
    },
  ],
  [
    'list-patch-replace-with-nested-directives',
    threeContainers(),
    {
      spec: {
        containers: [
          { $patch: 'replace' },
          { name: 'x', image: 'x:1', '$setElementOrder/env': [{ name: 'A' }], env: [{ name: 'A', value: '1' }] },
        ],
      },
    },
  ],
  [
    'map-patch-replace-with-nested-directives',
    pod(),
    {
      spec: {
        $patch: 'replace',
        containers: [
          {
            name: 'c',
            image: 'i',
            env: [
              { $patch: 'delete', name: 'A' },
              { name: 'Z', value: 'z' },
            ],
          },
        ],
      },
    },
  ],
  [
    'map-patch-replace-keeps-the-rest-verbatim',
    pod(),
    {
      metadata: { labels: { $patch: 'replace', a: null, z: '9' } },
      spec: { containers: [{ $patch: 'replace' }, { name: 'c', x: null, env: [{ $patch: 'delete', name: 'A' }] }] },
    },
  ],
  [
    'list-delete-then-re-add-same-key',
    threeContainers(),
    {
      spec: {
        containers: [
          { name: 'c2', image: 'fresh' },
          { $patch: 'delete', name: 'c2' },
        ],
      },
    },
  ],
  [
    'volume-retain-keys-drops-unlisted-source',
    pod(),
    { spec: { volumes: [{ $retainKeys: ['configMap', 'name'], name: 'cache', configMap: { name: 'cm' } }] } },
  ],
  [
    'ports-merge-by-numeric-key',
    pod(),
    { spec: { containers: [{ name: 'c', ports: [{ containerPort: 80, protocol: 'UDP' }, { containerPort: 9090 }] }] } },
  ],
  ['primitive-union-order', pod(), { metadata: { finalizers: ['c.io/z', 'b.io/y', 'd.io/w'] } }],
  [
    'set-element-order-for-list-absent-in-live',
    pod(),
    {
      spec: {
        '$setElementOrder/initContainers': [{ name: 'i1' }, { name: 'i2' }],
        initContainers: [
          { name: 'i1', image: 'i:1' },
          { name: 'i2', image: 'i:2' },
        ],
      },
    },
  ],
  [
    'ephemeral-containers-and-resource-claims',
    pod(),
    {
      spec: {
        ephemeralContainers: [{ name: 'dbg', image: 'busybox', env: [{ name: 'X', value: '1' }] }],
        resourceClaims: [{ name: 'gpu', resourceClaimName: 'rc' }],
      },
    },
  ],
  [
    'pod-status-host-ips',
    (() => {
      const p = pod();
      p.status.hostIPs = [{ ip: '10.0.0.1' }];
      return p;
    })(),
    { status: { hostIPs: [{ ip: '10.0.0.2' }], containerStatuses: [{ name: 'c', ready: true }] } },
  ],
  ['node-delete-from-pod-cidrs', node(), { spec: { '$deleteFromPrimitiveList/podCIDRs': ['10.0.0.0/24'], podCIDRs: ['10.0.2.0/24'] } }],
  ['owner-reference-without-uid-is-an-error', pod(), { metadata: { ownerReferences: [{ name: 'x', kind: 'Job' }] } }],
  ['node-condition-without-type-is-an-error', node(), { status: { conditions: [{ status: 'False' }] } }],
  [
    'deployment-template-containers',
    {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'd' },
      spec: { replicas: 1, template: { spec: { containers: [container('a'), container('b')] } } },
    },
    { spec: { replicas: 2, template: { spec: { containers: [{ name: 'b', image: 'b:2' }] } } } },
  ],
  [
    'events-k8s-io-event',
    {
      apiVersion: 'events.k8s.io/v1',
      kind: 'Event',
      metadata: { name: 'e', namespace: 'default' },
      reason: 'R',
      note: 'n',
      series: { count: 1 },
    },
    { series: { count: 2 }, note: null },
  ],
  [
    'priority-class',
    { apiVersion: 'scheduling.k8s.io/v1', kind: 'PriorityClass', metadata: { name: 'high' }, value: 1000, globalDefault: false },
    { value: 2000, description: 'd' },
  ],
  [
    'element-new-to-a-keyed-list-is-taken-as-it-is',
    threeContainers(),
    {
      spec: {
        containers: [
          {
            name: 'b',
            env: [
              { $patch: 'delete', name: 'B' },
              { name: 'C', value: null },
            ],
          },
        ],
      },
    },
  ],
  [
    'empty-set-element-order-with-new-items',
    threeContainers(),
    {
      spec: {
        '$setElementOrder/containers': [],
        containers: [
          { name: 'e', image: 'e:1' },
          { name: 'b', image: 'b:1' },
        ],
      },
    },
  ],
  ['empty-set-element-order-primitive-list', pod(), { metadata: { '$setElementOrder/finalizers': [], finalizers: ['f2', 'f5'] } }],
  [
    'new-field-drops-maps-with-patch-directives',
    (() => {
      const p = pod();
      delete p.metadata.labels;
      delete p.spec.volumes;
      return p;
    })(),
    {
      metadata: { labels: { $patch: 'replace', z: '9' } },
      spec: {
        volumes: [{ $patch: 'replace' }, { name: 'x', emptyDir: {} }, { $patch: 'delete', name: 'y' }],
        initContainers: [{ name: 'i', resources: { $patch: 'delete' }, env: [{ name: 'A', value: null }] }],
      },
    },
  ],
  [
    'set-element-order-new-list-drops-delete-elements',
    (() => {
      const p = pod();
      delete p.spec.volumes;
      return p;
    })(),
    {
      spec: {
        '$setElementOrder/volumes': [{ name: 'b' }, { name: 'a' }],
        volumes: [
          { $patch: 'delete', name: 'z' },
          { name: 'b', emptyDir: {} },
          { name: 'a', emptyDir: {} },
        ],
      },
    },
  ],
  ['empty-patch-is-identity', pod(), {}],
];

const merge = [
  ['label-added', pod(), { metadata: { labels: { tier: 'fe' } } }],
  ['label-removed', pod(), { metadata: { labels: { tier: null } } }],
  ['lists-replace-whole', pod(), { spec: { containers: [{ name: 'only', image: 'x' }] } }],
  ['nested-nulls-in-new-map', pod(), { spec: { nodeSelector: { a: '1', b: null } } }],
  [
    'workload-podsets-replaced',
    workload(),
    { metadata: { labels: { team: 'b' } }, spec: { podSets: [{ name: 'main', count: 4 }], queueName: 'lq2' } },
  ],
  ['workload-status-added', workload(), { status: { conditions: [{ type: 'Admitted', status: 'True' }] } }],
];

const json = [
  [
    'add-replace-remove',
    pod(),
    [
      { op: 'add', path: '/metadata/labels/new', value: 'v' },
      { op: 'replace', path: '/spec/containers/0/image', value: 'nginx:3' },
      { op: 'remove', path: '/metadata/annotations/drop' },
    ],
  ],
  [
    'append-and-insert',
    pod(),
    [
      { op: 'add', path: '/spec/containers/-', value: { name: 'd', image: 'd:1' } },
      { op: 'add', path: '/spec/tolerations/0', value: { key: 'z', operator: 'Exists' } },
    ],
  ],
  [
    'move-copy-test',
    pod(),
    [
      { op: 'test', path: '/metadata/labels/app', value: 'web' },
      { op: 'copy', from: '/metadata/labels/app', path: '/metadata/labels/app2' },
      { op: 'move', from: '/metadata/labels/tier', path: '/metadata/annotations/tier' },
    ],
  ],
  [
    'pointer-escapes',
    pod(),
    [
      { op: 'add', path: '/metadata/labels/a~1b~0c', value: '1' },
      { op: 'test', path: '/metadata/labels/a~1b~0c', value: '1' },
    ],
  ],
  ['replace-of-missing-key-adds-it', pod(), [{ op: 'replace', path: '/metadata/labels/nope', value: 'x' }]],
  ['test-failed', pod(), [{ op: 'test', path: '/metadata/name', value: 'q' }]],
  ['remove-missing-key', pod(), [{ op: 'remove', path: '/metadata/nope' }]],
  ['add-missing-parent', pod(), [{ op: 'add', path: '/metadata/nope/x', value: 1 }]],
  ['replace-missing-parent', pod(), [{ op: 'replace', path: '/metadata/nope/x', value: 1 }]],
  ['replace-index-out-of-range', pod(), [{ op: 'replace', path: '/spec/containers/3', value: 1 }]],
  ['add-index-out-of-range', pod(), [{ op: 'add', path: '/spec/containers/5', value: 1 }]],
  ['remove-index-out-of-range', pod(), [{ op: 'remove', path: '/spec/containers/3' }]],
  ['add-not-an-index', pod(), [{ op: 'add', path: '/spec/containers/x', value: 1 }]],
  ['move-from-missing', pod(), [{ op: 'move', from: '/metadata/nope', path: '/metadata/x' }]],
  ['move-into-itself', pod(), [{ op: 'move', from: '/metadata/labels', path: '/metadata/labels/x' }]],
  ['copy-from-missing-parent', pod(), [{ op: 'copy', from: '/metadata/nope/y', path: '/metadata/x' }]],
  ['unknown-op', pod(), [{ op: 'bogus', path: '/spec' }]],
  ['op-without-path', pod(), [{ op: 'add', value: 1 }]],
  ['replace-the-root', pod(), [{ op: 'replace', path: '', value: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'q' } } }]],
  ['test-the-root-failed', pod(), [{ op: 'test', path: '', value: 1 }]],
  ['test-dash-is-not-an-index', pod(), [{ op: 'test', path: '/spec/containers/-', value: 1 }]],
  ['copy-from-the-root', pod(), [{ op: 'copy', from: '', path: '/metadata/x' }]],
  ['remove-the-root', pod(), [{ op: 'remove', path: '' }]],
  [
    'copy-element-to-end',
    pod(),
    [
      { op: 'copy', from: '/spec/containers/0', path: '/spec/containers/-' },
      { op: 'replace', path: '/spec/containers/1/name', value: 'c2' },
    ],
  ],
  ['empty-operations-is-identity', pod(), []],
];

function stripDirectives(v) {
  if (Array.isArray(v)) return v.map(stripDirectives);
  if (v && typeof v === 'object') {
    return Object.fromEntries(
      Object.entries(v)
        .filter(([k, x]) => !k.startsWith('$') && x !== null)
        .map(([k, x]) => [k, stripDirectives(x)]),
    );
  }
  return v;
}

const dir = mkdtempSync(join(tmpdir(), 'patch-golden-'));
function run(type, [name, live, patch]) {
  const file = join(dir, 'live.json');
  writeFileSync(file, JSON.stringify(live));
  const out = { name, live, patch };
  try {
    const stdout = execFileSync('kubectl', ['patch', '--local', '-f', file, `--type=${type}`, '-p', JSON.stringify(patch), '-o', 'json'], {
      env: { ...process.env, KUBECONFIG: '/dev/null' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const oracle = JSON.parse(stdout.toString());
    out.expected = stripDirectives(oracle);
    if (JSON.stringify(out.expected) !== JSON.stringify(oracle))
      out.note = 'Go kept $-directive keys or nulls in a value copied from the patch; stripped here';
  } catch (e) {
    out.error = e.stderr
      .toString()
      .replace(/^error: /, '')
      .replace(/\n$/, '');
  }
  return out;
}

try {
  const golden = {
    generatedBy: `kubectl patch --local (${
      execFileSync('kubectl', ['version', '--client', '-o', 'json'], { env: { ...process.env, KUBECONFIG: '/dev/null' } })
        .toString()
        .match(/"gitVersion": "([^"]+)"/)?.[1]
    })`,
    strategic: strategic.map((c) => run('strategic', c)),
    merge: merge.map((c) => run('merge', c)),
    json: json.map((c) => run('json', c)),
  };
  writeFileSync(new URL('./golden.json', import.meta.url), `${JSON.stringify(golden, null, 1)}\n`);
  console.log(`golden.json: ${golden.strategic.length} strategic, ${golden.merge.length} merge, ${golden.json.length} json cases`);
} finally {
  rmSync(dir, { recursive: true });
}
