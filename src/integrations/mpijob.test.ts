import { test } from 'node:test';
import assert from 'node:assert/strict';
import { KueueAnnotation, KueueLabel, PodIndexLabel } from '../api/keys.ts';
import type { KObject } from '../api/objects.ts';
import { parseObject } from '../api/schemas.ts';
import { workloadsFromObjects } from './integration.ts';
import { integrationFor } from './registry.ts';
import { mpiJobToWorkloads } from './mpijob.ts';
import { workloadNameForOwner } from './workload-name.ts';

const where = { file: 'mpi.yaml', document: 1 };

const template = (annotations?: Record<string, string>) => ({
  ...(annotations ? { metadata: { annotations } } : {}),
  spec: { containers: [{ name: 'mpi', resources: { requests: { cpu: '1' } } }] },
});

function mpiJob(spec: Record<string, unknown>, metadata: Partial<KObject['metadata']> = {}): KObject {
  return { apiVersion: 'kubeflow.org/v2beta1', kind: 'MPIJob', metadata: { name: 'pi', namespace: 'ml', ...metadata }, spec } as KObject;
}

function one(obj: KObject) {
  const r = mpiJobToWorkloads(obj, { where });
  assert.deepEqual(
    r.errors.map((e) => e.message),
    [],
  );
  assert.equal(r.workloads.length, 1);
  return r.workloads[0]!;
}

test('MPIJob: PodSets launcher then worker, counts from replicas (default 1), replica-index as the pod index label', () => {
  const wl = one(
    mpiJob(
      { mpiReplicaSpecs: { Worker: { replicas: 4, template: template() }, Launcher: { template: template() } } },
      { uid: 'u1', labels: { [KueueLabel.QueueName]: 'lq' } },
    ),
  );
  assert.deepEqual(
    wl.spec.podSets.map((ps) => [ps.name, ps.count, ps.topologyRequest?.podIndexLabel]),
    [
      ['launcher', 1, PodIndexLabel.KubeflowReplicaIndex],
      ['worker', 4, PodIndexLabel.KubeflowReplicaIndex],
    ],
  );
  assert.equal(wl.metadata.name, workloadNameForOwner({ kind: 'MPIJob', group: 'kubeflow.org', name: 'pi', uid: 'u1' }));
  assert.match(wl.metadata.name, /^mpijob-pi-[0-9a-f]{5}$/);
  assert.equal(wl.spec.queueName, 'lq');
});

test('MPIJob with runLauncherAsWorker: the worker template gets pod-index-offset "1", unless a PodSet group is named', () => {
  const offsetOf = (spec: Record<string, unknown>) =>
    one(mpiJob(spec)).spec.podSets.map((ps) => ps.template.metadata?.annotations?.[KueueAnnotation.PodIndexOffset]);
  const specs = (worker: unknown) => ({ Launcher: { replicas: 1, template: template() }, Worker: { replicas: 2, template: worker } });
  assert.deepEqual(offsetOf({ runLauncherAsWorker: true, mpiReplicaSpecs: specs(template()) }), [undefined, '1']);
  assert.deepEqual(offsetOf({ runLauncherAsWorker: false, mpiReplicaSpecs: specs(template()) }), [undefined, undefined]);
  assert.deepEqual(offsetOf({ mpiReplicaSpecs: specs(template()) }), [undefined, undefined]);
  assert.deepEqual(
    offsetOf({
      runLauncherAsWorker: true,
      mpiReplicaSpecs: specs(
        template({ [KueueAnnotation.PodSetGroupName]: 'g', [KueueAnnotation.PodSetRequiredTopology]: 'cloud.com/rack' }),
      ),
    }),
    [undefined, undefined],
  );
});

test('MPIJob: TAS annotations on a replica template become that PodSet topology request', () => {
  const wl = one(
    mpiJob({
      mpiReplicaSpecs: {
        Launcher: { template: template() },
        Worker: { replicas: 8, template: template({ [KueueAnnotation.PodSetRequiredTopology]: 'cloud.com/rack' }) },
      },
    }),
  );
  assert.equal(wl.spec.podSets[0]!.topologyRequest?.required, undefined);
  assert.equal(wl.spec.podSets[1]!.topologyRequest?.required, 'cloud.com/rack');
});

test('MPIJob: unknown replica types, a launcher with 2 replicas and a missing template are refused with the field', () => {
  const r = mpiJobToWorkloads(
    mpiJob({
      mpiReplicaSpecs: { Launcher: { replicas: 2, template: template() }, Worker: { replicas: 1 }, Chief: { template: template() } },
    }),
    { where },
  );
  assert.deepEqual(r.workloads, []);
  const msgs = r.errors.map((e) => e.message).join('\n');
  assert.match(msgs, /spec\.mpiReplicaSpecs\["Chief"\]: Unsupported value: "Chief"/);
  assert.match(msgs, /spec\.mpiReplicaSpecs\.Launcher\.replicas: Invalid value: 2: must be 1/);
  assert.match(msgs, /spec\.mpiReplicaSpecs\.Worker\.template: a pod template with spec\.containers is required/);
});

test('MPIJob is a registered integration and an accepted kind; pods of an MPIJob have a supported parent', () => {
  assert.equal(integrationFor({ apiVersion: 'kubeflow.org/v2beta1', kind: 'MPIJob' })?.name, 'kubeflow.org/mpijob');
  const obj = mpiJob({ mpiReplicaSpecs: { Launcher: { template: template() }, Worker: { replicas: 2, template: template() } } });
  assert.deepEqual(parseObject(obj, where).errors, []);
  const bad = parseObject(mpiJob({ mpiReplicaSpecs: { Worker: { template: template() } } }), where);
  assert.match(bad.errors.map((e) => e.message).join('\n'), /mpiReplicaSpecs\.Launcher: Required value/);
  const pod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: 'pi-worker-0',
      namespace: 'ml',
      ownerReferences: [{ apiVersion: 'kubeflow.org/v2beta1', kind: 'MPIJob', name: 'pi', uid: 'x', controller: true }],
    },
    spec: { containers: [{ name: 'c' }] },
  } as KObject;
  const r = workloadsFromObjects([
    { object: obj, where },
    { object: pod, where: { ...where, document: 2 } },
  ]);
  assert.deepEqual(r.errors, []);
  assert.deepEqual(
    r.workloads.map((w) => w.workload.spec.podSets.map((p) => p.name)),
    [['launcher', 'worker']],
  );
});
