import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { KueueLabel, KueueRuntimeKey, KueueSchedulingGate } from '../api/keys.ts';
import type { Pod } from '../api/objects.ts';
import { PodGroupAnnotation, roleHash } from '../integrations/pod.ts';
import { InvalidError, mutable } from '../runtime/store.ts';
import { hasGate, plainPod, podHarness, type PodHarness } from '../testing/pods.ts';
import { defaultConfig } from './config.ts';
import { OWNER_MANAGED_WARNING, validatePod, type PodWebhookEnv } from './pod-webhook.ts';

const NS = 'pod-namespace';

async function denial(h: PodHarness, write: () => Promise<unknown>): Promise<string> {
  try {
    await write();
  } catch (e) {
    assert.ok(e instanceof InvalidError, String(e));
    return e.message;
  }
  assert.fail('the write was not denied');
}

async function update(h: PodHarness, name: string, change: (p: Pod) => void): Promise<Pod> {
  const p = mutable(h.pod(name)!);
  change(p);
  return h.store.update(p);
}

describe('pod webhook: mutation', () => {
  it('a managed pod gets the managed label, the finalizer, both gates, the pod index label copy and a recomputed role hash', async () => {
    const h = await podHarness();
    const created = await h.create(
      plainPod('p')
        .queue('q')
        .cpu('1')
        .label('training.example/rank', '3')
        .annotate(KueueRuntimeKey.PodGroupPodIndexLabel, 'training.example/rank')
        .annotate(PodGroupAnnotation.RoleHash, 'spoofed0')
        .build(),
    );
    assert.equal(created.metadata.labels![KueueLabel.Managed], 'true');
    assert.equal(created.metadata.labels![KueueLabel.PodGroupPodIndex], '3');
    assert.deepEqual(created.metadata.finalizers, [KueueRuntimeKey.ManagedFinalizer]);
    assert.deepEqual(created.spec.schedulingGates, [{ name: KueueSchedulingGate.Admission }, { name: KueueSchedulingGate.Topology }]);
    assert.equal(created.metadata.annotations![PodGroupAnnotation.RoleHash], roleHash(created, {}).hash);
    assert.equal(roleHash(created, {}).hash, 'dc85db45', "Kueue's hash of {cpu: 1}");
  });

  it('a pod with a suspending parent keeps its role hash and gets no finalizer', async () => {
    const h = await podHarness();
    const created = await h.create(
      plainPod('p').annotate(KueueRuntimeKey.PodSuspendingParent, 'statefulset').annotate(PodGroupAnnotation.RoleHash, 'worker').build(),
    );
    assert.equal(created.metadata.labels![KueueLabel.Managed], 'true');
    assert.equal(created.metadata.finalizers, undefined);
    assert.ok(hasGate(created, KueueSchedulingGate.Admission));
    assert.equal(created.metadata.annotations![PodGroupAnnotation.RoleHash], 'worker');
  });

  it('pods without a queue name, of unmanaged namespaces, or owned by another integration are left alone', async () => {
    const h = await podHarness({ config: { managedJobsNamespaceSelector: { matchLabels: { 'kueue-managed': 'yes' } } } });
    await h.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team-a', labels: { 'kueue-managed': 'yes' } } });
    await h.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team-b' } });
    const a = await h.create(plainPod('a', 'team-a').queue('q').build());
    const b = await h.create(plainPod('b', 'team-b').queue('q').build());
    const c = await h.create(plainPod('c', 'team-c').queue('q').build());
    const d = await h.create(plainPod('d', 'team-a').build());
    const e = await h.create(plainPod('e', 'team-a').queue('q').owner('jobset.x-k8s.io/v1alpha2', 'JobSet', 'js').build());
    assert.ok(hasGate(a, KueueSchedulingGate.Admission), 'managed namespace');
    for (const p of [b, c, d, e]) {
      assert.equal(p.spec.schedulingGates, undefined, p.metadata.name);
      assert.equal(p.metadata.labels![KueueLabel.Managed], undefined, p.metadata.name);
    }
    await h.run();
    assert.equal(h.store.listSync('Workload').length, 1);
  });

  it('kube-system and the topoqueue namespace are not managed by default (no Namespace object needed)', async () => {
    const h = await podHarness();
    const sys = await h.create(plainPod('s', 'kube-system').queue('q').build());
    const own = await h.create(plainPod('t', 'topoqueue-system').queue('q').build());
    assert.equal(sys.spec.schedulingGates, undefined);
    assert.equal(own.spec.schedulingGates, undefined);
  });

  it("a pod without a queue name gets the namespace's LocalQueue `default` when it exists", async () => {
    const h = await podHarness();
    await h.create({
      apiVersion: 'kueue.x-k8s.io/v1beta2',
      kind: 'LocalQueue',
      metadata: { name: 'default', namespace: NS },
      spec: { clusterQueue: 'cq' },
    });
    const p = await h.create(plainPod('p').build());
    assert.equal(p.metadata.labels![KueueLabel.QueueName], 'default');
    assert.ok(hasGate(p, KueueSchedulingGate.Admission));
    const other = await h.create(plainPod('p', 'elsewhere').build());
    assert.equal(other.metadata.labels![KueueLabel.QueueName], undefined);
  });
});

describe('pod webhook: validation messages (Kueue verbatim)', () => {
  const prefix = 'admission webhook "vpod.kb.io" denied the request: ';

  it('denies a managed label other than "true" (a queued pod has it set to "true" by the mutating hook)', async () => {
    const h = await podHarness();
    const msg = await denial(h, () => h.create(plainPod('p').label(KueueLabel.Managed, 'false').build()));
    assert.equal(msg, `${prefix}metadata.labels[kueue.x-k8s.io/managed]: Invalid value: "false": managed label value can only be 'true'`);
    const queued = await h.create(plainPod('q').queue('q').label(KueueLabel.Managed, 'false').build());
    assert.equal(queued.metadata.labels![KueueLabel.Managed], 'true');
    assert.equal(
      await denial(h, () => update(h, 'q', (p) => void (p.metadata.labels![KueueLabel.Managed] = 'no'))),
      `${prefix}metadata.labels[kueue.x-k8s.io/managed]: Invalid value: "no": managed label value can only be 'true'`,
    );
  });

  it('denies a group name without a total count, and a total count without a group name', async () => {
    const h = await podHarness();
    const both = "both the 'kueue.x-k8s.io/pod-group-total-count' annotation and the 'kueue.x-k8s.io/pod-group-name' label should be set";
    assert.equal(
      await denial(h, () => h.create(plainPod('p').queue('q').group('g').build())),
      `${prefix}metadata.annotations[kueue.x-k8s.io/pod-group-total-count]: Required value: ${both}`,
    );
    assert.equal(
      await denial(h, () => h.create(plainPod('p').queue('q').annotate(PodGroupAnnotation.TotalCount, '2').build())),
      `${prefix}metadata.labels[kueue.x-k8s.io/pod-group-name]: Required value: ${both}`,
    );
  });

  it('denies a total count that is not a whole number of at least 1', async () => {
    const h = await podHarness();
    for (const v of ['0', '-1', 'two']) {
      assert.equal(
        await denial(h, () => h.create(plainPod('p').queue('q').group('g').annotate(PodGroupAnnotation.TotalCount, v).build())),
        `${prefix}metadata.annotations[kueue.x-k8s.io/pod-group-total-count]: Invalid value: ${JSON.stringify(v)}: incorrect annotation value 'kueue.x-k8s.io/pod-group-total-count=${v}': group total count should be greater than zero`,
      );
    }
  });

  it('denies a group name that is not a valid object name, and a prebuilt workload other than the group', async () => {
    const h = await podHarness();
    assert.match(
      await denial(h, () => h.create(plainPod('p').queue('q').group('Bad_Name', 1).build())),
      /metadata\.labels\[kueue\.x-k8s\.io\/pod-group-name\]: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain/,
    );
    assert.equal(
      await denial(h, () =>
        h.create(plainPod('p').queue('q').group('g', 1).label('kueue.x-k8s.io/prebuilt-workload-name', 'other').build()),
      ),
      `${prefix}metadata.labels[kueue.x-k8s.io/prebuilt-workload-name]: Invalid value: "other": prebuilt workload and pod group should be equal`,
    );
  });

  it('denies required and preferred topology together', async () => {
    const h = await podHarness();
    const msg = await denial(h, () =>
      h.create(
        plainPod('p')
          .queue('q')
          .annotate('kueue.x-k8s.io/podset-required-topology', 'rack')
          .annotate('kueue.x-k8s.io/podset-preferred-topology', 'block')
          .build(),
      ),
    );
    assert.match(msg, /^admission webhook "vpod.kb.io" denied the request: metadata\.annotations.*Invalid value: /);
  });

  it('denies changing the group name, making an unretriable group retriable, and changing the role hash', async () => {
    const h = await podHarness();
    await h.create(plainPod('p').queue('q').group('g', 2).annotate(KueueRuntimeKey.RetriableInGroup, 'false').build());
    assert.equal(
      await denial(h, () => update(h, 'p', (p) => void (p.metadata.labels![KueueLabel.PodGroupName] = 'h'))),
      `${prefix}metadata.labels[kueue.x-k8s.io/pod-group-name]: Invalid value: "h": field is immutable`,
    );
    assert.equal(
      await denial(h, () => update(h, 'p', (p) => void delete p.metadata.annotations![KueueRuntimeKey.RetriableInGroup])),
      `${prefix}metadata.annotations[kueue.x-k8s.io/retriable-in-group]: Forbidden: unretriable pod group can't be converted to retriable`,
    );
    assert.equal(
      await denial(h, () => update(h, 'p', (p) => void (p.metadata.annotations![PodGroupAnnotation.RoleHash] = 'aaaaaaaa'))),
      `${prefix}metadata.annotations[kueue.x-k8s.io/role-hash]: Invalid value: "aaaaaaaa": field is immutable`,
    );
    await update(h, 'p', (p) => void (p.metadata.labels!.team = 'x'));
  });

  it('denies changing the queue name once the pod is ungated, allows it while gated', async () => {
    const h = await podHarness();
    await h.create(plainPod('p').queue('q').build());
    await update(h, 'p', (p) => void (p.metadata.labels![KueueLabel.QueueName] = 'q2'));
    await update(h, 'p', (p) => void (p.spec.schedulingGates = []));
    assert.equal(
      await denial(h, () => update(h, 'p', (p) => void (p.metadata.labels![KueueLabel.QueueName] = 'q3'))),
      `${prefix}metadata.labels[kueue.x-k8s.io/queue-name]: Invalid value: "q3": field is immutable`,
    );
  });

  it("warns (and allows) a pod of another integration's job carrying the managed label", () => {
    const env: PodWebhookEnv = { config: defaultConfig(), namespaceManaged: () => true, localQueueExists: () => false };
    const pod = plainPod('p').owner('batch/v1', 'Job', 'j').label(KueueLabel.Managed, 'true').build();
    assert.deepEqual(validatePod({ operation: 'CREATE', object: pod }, env), { warnings: [OWNER_MANAGED_WARNING] });
    assert.equal(
      OWNER_MANAGED_WARNING,
      "pod owner is managed by kueue, label 'kueue.x-k8s.io/managed=true' might lead to unexpected behaviour",
    );
    const plain = plainPod('p').owner('batch/v1', 'Job', 'j').build();
    assert.deepEqual(validatePod({ operation: 'CREATE', object: plain }, env), {});
  });

  it('accepts a group declared with pod-group-sets without a total count, and denies unreadable sets', async () => {
    const h = await podHarness();
    await h.create(plainPod('d').queue('q').group('g').annotate(KueueRuntimeKey.PodGroupSets, '[{name: driver, count: 1}]').build());
    await h.create(plainPod('w').queue('q').group('g').label('kueue.x-k8s.io/pod-group-role', 'workers').build());
    assert.match(
      await denial(h, () =>
        h.create(plainPod('x').queue('q').group('g2').annotate(KueueRuntimeKey.PodGroupSets, '[{name: Driver, count: 0}]').build()),
      ),
      /metadata\.annotations\[kueue\.x-k8s\.io\/pod-group-sets\]: Invalid value: .*entry 1: name "Driver" must be a DNS label/,
    );
  });
});
