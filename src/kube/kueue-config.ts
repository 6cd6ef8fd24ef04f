// `topoqueue controller --config FILE`: Kueue's Configuration (config.kueue.x-k8s.io/v1beta2),
// the fields that apply to topoqueue, with Kueue's names and defaults. A field topoqueue does
// not know is refused with its path (a typo must not pass silently); a known one with a bad
// value is refused with what it accepts.

import { InputError } from '../api/errors.ts';
import { parseGoDuration } from '../api/gang.ts';
import type { LabelSelector } from '../api/volcano-objects.ts';
import { parseWaitForPodsReady } from '../admission/pods-ready.ts';
import { defaultConfig, type TopoqueueConfig } from '../controllers/config.ts';
import { DEFAULT_GATES, type FeatureGates } from '../placement/request.ts';

export interface LeaderElectionConfig {
  leaderElect: boolean;
  leaseDurationMs: number;
  renewDeadlineMs: number;
  retryPeriodMs: number;
  resourceName: string;
  resourceNamespace: string;
}

export interface ControllerConfig {
  topoqueue: TopoqueueConfig;
  leaderElection: LeaderElectionConfig;
  clientConnection: { qps: number; burst: number };
  /** integrations.frameworks: the job frameworks to manage (names as Kueue's, e.g. batch/job); also in topoqueue.frameworks when given. */
  frameworks: string[];
  labelKeysToCopy: string[];
  webhookPort: number;
  metricsPort: number;
}

/** Kueue's names of the integrations topoqueue has. */
export const FRAMEWORK_NAMES: Record<string, string> = {
  'batch/job': 'Job',
  'jobset.x-k8s.io/jobset': 'JobSet',
  'kubeflow.org/mpijob': 'MPIJob',
  'leaderworkerset.x-k8s.io/leaderworkerset': 'LeaderWorkerSet',
  pod: 'Pod',
  'batch.volcano.sh/job': 'Volcano Job',
  'training.volcano.sh/hyperjob': 'HyperJob',
};

export const KUEUE_LEADER_ELECTION_ID = 'c1f6bfd2.kueue.x-k8s.io';

const KNOWN = {
  top: [
    'apiVersion',
    'kind',
    'namespace',
    'manageJobsWithoutQueueName',
    'managedJobsNamespaceSelector',
    'waitForPodsReady',
    'featureGates',
    'integrations',
    'labelKeysToCopy',
    'clientConnection',
    'leaderElection',
    'webhook',
    'metrics',
    'health',
  ],
  integrations: ['frameworks'],
  clientConnection: ['qps', 'burst'],
  leaderElection: ['leaderElect', 'leaseDuration', 'renewDeadline', 'retryPeriod', 'resourceName', 'resourceNamespace', 'resourceLock'],
  webhook: ['port', 'host', 'certDir'],
  metrics: ['bindAddress'],
  health: ['healthProbeBindAddress', 'readinessEndpointName', 'livenessEndpointName'],
} as const;

type Rec = Record<string, unknown>;
const isRecord = (v: unknown): v is Rec => typeof v === 'object' && v !== null && !Array.isArray(v);

export function parseControllerConfig(raw: unknown, file = '--config'): ControllerConfig {
  const fail = (field: string, detail: string): never => {
    throw new InputError({ file, field }, detail);
  };
  const block = (v: unknown, field: string, known: readonly string[]): Rec => {
    if (v === undefined || v === null) return {};
    if (!isRecord(v)) fail(field, `must be a mapping, got ${JSON.stringify(v)}`);
    for (const k of Object.keys(v as Rec))
      if (!known.includes(k)) fail(field ? `${field}.${k}` : k, `unknown field (topoqueue reads: ${known.join(', ')})`);
    return v as Rec;
  };
  const top = block(raw, '', KNOWN.top);
  if (
    top.apiVersion !== undefined &&
    top.apiVersion !== 'config.kueue.x-k8s.io/v1beta2' &&
    top.apiVersion !== 'config.kueue.x-k8s.io/v1beta1'
  ) {
    fail('apiVersion', `must be config.kueue.x-k8s.io/v1beta2 (or v1beta1), got ${JSON.stringify(top.apiVersion)}`);
  }
  if (top.kind !== undefined && top.kind !== 'Configuration') fail('kind', `must be Configuration, got ${JSON.stringify(top.kind)}`);
  const str = (v: unknown, field: string, dflt: string): string =>
    v === undefined ? dflt : typeof v === 'string' && v !== '' ? v : fail(field, `must be a non-empty string, got ${JSON.stringify(v)}`);
  const bool = (v: unknown, field: string, dflt: boolean): boolean =>
    v === undefined ? dflt : typeof v === 'boolean' ? v : fail(field, `must be true or false, got ${JSON.stringify(v)}`);
  const num = (v: unknown, field: string, dflt: number, integer = false): number =>
    v === undefined
      ? dflt
      : typeof v === 'number' && v > 0 && (!integer || Number.isInteger(v))
        ? v
        : fail(field, `must be a positive ${integer ? 'integer' : 'number'}, got ${JSON.stringify(v)}`);
  const duration = (v: unknown, field: string, dfltMs: number): number => {
    if (v === undefined) return dfltMs;
    const s = typeof v === 'string' ? parseGoDuration(v) : undefined;
    if (s === undefined || s <= 0) fail(field, `must be a positive duration such as "15s" or "1m", got ${JSON.stringify(v)}`);
    return s! * 1000;
  };
  const port = (bind: unknown, field: string, dflt: number): number => {
    if (bind === undefined) return dflt;
    const m = typeof bind === 'string' ? /:(\d+)$/.exec(bind) : null;
    const p = m ? Number(m[1]) : typeof bind === 'number' ? bind : NaN;
    if (!Number.isInteger(p) || p < 0 || p > 65535) fail(field, `must be a port (or "host:port"), got ${JSON.stringify(bind)}`);
    return p;
  };

  const namespace = str(top.namespace, 'namespace', 'topoqueue-system');
  const gates: FeatureGates = { ...DEFAULT_GATES };
  let waitDisabled = false;
  let hashing = true;
  const fg = block(top.featureGates, 'featureGates', [
    ...Object.keys(DEFAULT_GATES),
    'DisableWaitForPodsReady',
    'SchedulingEquivalenceHashing',
  ]);
  for (const [k, v] of Object.entries(fg)) {
    const on = bool(v, `featureGates.${k}`, false);
    if (k === 'DisableWaitForPodsReady') waitDisabled = on;
    else if (k === 'SchedulingEquivalenceHashing') hashing = on;
    else gates[k as keyof FeatureGates] = on;
  }
  const integrations = block(top.integrations, 'integrations', KNOWN.integrations);
  let frameworks = Object.keys(FRAMEWORK_NAMES);
  if (integrations.frameworks !== undefined) {
    if (!Array.isArray(integrations.frameworks)) fail('integrations.frameworks', 'must be a list of framework names');
    frameworks = (integrations.frameworks as unknown[]).map((f, i) =>
      typeof f === 'string' && f in FRAMEWORK_NAMES
        ? f
        : fail(
            `integrations.frameworks[${i}]`,
            `unknown framework ${JSON.stringify(f)}; topoqueue has: ${Object.keys(FRAMEWORK_NAMES).join(', ')}`,
          ),
    );
  }
  let labelKeysToCopy: string[] = [];
  if (top.labelKeysToCopy !== undefined) {
    if (!Array.isArray(top.labelKeysToCopy)) fail('labelKeysToCopy', 'must be a list of label keys');
    labelKeysToCopy = (top.labelKeysToCopy as unknown[]).map((k, i) =>
      typeof k === 'string' && /^([a-z0-9.-]+\/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/.test(k)
        ? k
        : fail(`labelKeysToCopy[${i}]`, `must be a label key, got ${JSON.stringify(k)}`),
    );
  }
  let selector: LabelSelector | undefined;
  if (top.managedJobsNamespaceSelector !== undefined) {
    const s = block(top.managedJobsNamespaceSelector, 'managedJobsNamespaceSelector', ['matchLabels', 'matchExpressions']);
    selector = s as LabelSelector;
  }
  const cc = block(top.clientConnection, 'clientConnection', KNOWN.clientConnection);
  const le = block(top.leaderElection, 'leaderElection', KNOWN.leaderElection);
  const wh = block(top.webhook, 'webhook', KNOWN.webhook);
  const metrics = block(top.metrics, 'metrics', KNOWN.metrics);
  block(top.health, 'health', KNOWN.health);
  const leaderElection: LeaderElectionConfig = {
    leaderElect: bool(le.leaderElect, 'leaderElection.leaderElect', false),
    leaseDurationMs: duration(le.leaseDuration, 'leaderElection.leaseDuration', 15_000),
    renewDeadlineMs: duration(le.renewDeadline, 'leaderElection.renewDeadline', 10_000),
    retryPeriodMs: duration(le.retryPeriod, 'leaderElection.retryPeriod', 2_000),
    resourceName: str(le.resourceName, 'leaderElection.resourceName', KUEUE_LEADER_ELECTION_ID),
    resourceNamespace: str(le.resourceNamespace, 'leaderElection.resourceNamespace', namespace),
  };
  if (le.resourceLock !== undefined && le.resourceLock !== 'leases')
    fail('leaderElection.resourceLock', `must be "leases" (the only lock topoqueue takes), got ${JSON.stringify(le.resourceLock)}`);
  if (leaderElection.renewDeadlineMs >= leaderElection.leaseDurationMs)
    fail('leaderElection.renewDeadline', 'must be shorter than leaseDuration');
  if (leaderElection.retryPeriodMs >= leaderElection.renewDeadlineMs)
    fail('leaderElection.retryPeriod', 'must be shorter than renewDeadline');

  const topoqueue = defaultConfig({
    namespace,
    // Real time: a burst of watch events makes one scheduling cycle, not one per event (as serve).
    minCycleIntervalMs: 20,
    concurrentCycleWrites: true,
    gates,
    schedulingEquivalenceHashing: hashing,
    manageJobsWithoutQueueName: bool(top.manageJobsWithoutQueueName, 'manageJobsWithoutQueueName', false),
    // Without integrations.frameworks every framework is managed (Kueue's own default is batch/job alone).
    ...(integrations.frameworks !== undefined ? { frameworks } : {}),
    labelKeysToCopy,
    waitForPodsReady: waitDisabled ? undefined : parseWaitForPodsReady(top.waitForPodsReady, { file }),
    ...(selector ? { managedJobsNamespaceSelector: selector } : {}),
  });
  return {
    topoqueue,
    leaderElection,
    clientConnection: { qps: num(cc.qps, 'clientConnection.qps', 50), burst: num(cc.burst, 'clientConnection.burst', 100, true) },
    frameworks,
    labelKeysToCopy,
    webhookPort: port(wh.port, 'webhook.port', 9443),
    metricsPort: port(metrics.bindAddress, 'metrics.bindAddress', 8080),
  };
}
