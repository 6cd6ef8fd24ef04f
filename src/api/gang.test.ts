import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Where } from './errors.ts';
import {
  DEFAULT_GANG_TIMEOUT_SECONDS,
  GangAnnotation as A,
  GangApiVersion,
  GangLabel as L,
  gangFromPod,
  gangFromPodGroup,
  gangGroupId,
  gangsFromPods,
  parseGoDuration,
  parseInt32,
  type GangSpec,
  type PodGroup,
} from './gang.ts';
import { parseManifests } from './manifest.ts';
import type { KObject } from './objects.ts';
import { parseObject } from './schemas.ts';

// ---------------------------------------------------------------------------------------
// Fixture builders
// ---------------------------------------------------------------------------------------

type Raw = Record<string, unknown>;

class PodBuilder {
  private readonly o: {
    apiVersion: string;
    kind: string;
    metadata: { name: string; namespace?: string; labels?: Raw; annotations?: Raw };
    spec: Raw;
  };
  constructor(name: string, namespace: string | undefined) {
    this.o = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name, ...(namespace !== undefined ? { namespace } : {}) },
      spec: { containers: [{ name: 'c' }] },
    };
  }
  label(key: string, value: unknown): this {
    (this.o.metadata.labels ??= {})[key] = value;
    return this;
  }
  annotate(key: string, value: unknown): this {
    (this.o.metadata.annotations ??= {})[key] = value;
    return this;
  }
  /** The annotation way: gang name and min-available. */
  gang(name: string, minAvailable?: string): this {
    this.annotate(A.Name, name);
    return minAvailable === undefined ? this : this.annotate(A.MinAvailable, minAvailable);
  }
  get(): KObject {
    return structuredClone(this.o) as unknown as KObject;
  }
}
/** A pod in namespace `ns`, or (null) without a namespace. */
const pod = (name = 'p', namespace: string | null = 'ns') => new PodBuilder(name, namespace ?? undefined);

class PodGroupBuilder {
  private readonly o: PodGroup;
  constructor(name: string, apiVersion: string, namespace: string) {
    this.o = { apiVersion, kind: 'PodGroup', metadata: { name, namespace }, spec: {} };
  }
  minMember(n: number): this {
    this.o.spec.minMember = n;
    return this;
  }
  timeout(s: unknown): this {
    this.o.spec.scheduleTimeoutSeconds = s as number;
    return this;
  }
  annotate(key: string, value: string): this {
    (this.o.metadata.annotations ??= {})[key] = value;
    return this;
  }
  get(): PodGroup {
    return structuredClone(this.o);
  }
}
/** Koordinator's PodGroup (scheduling.sigs.k8s.io/v1alpha1). */
const podGroup = (name = 'pg', namespace = 'ns') => new PodGroupBuilder(name, GangApiVersion.Koordinator, namespace);
/** scheduler-plugins' PodGroup (scheduling.x-k8s.io/v1alpha1). */
const pluginsPodGroup = (name = 'pg', namespace = 'ns') => new PodGroupBuilder(name, GangApiVersion.SchedulerPlugins, namespace);

const resolve = (p: PodBuilder, ...pgs: PodGroupBuilder[]) =>
  gangFromPod(
    p.get(),
    pgs.map((g) => g.get()),
  );

/** The gang of a pod, which must have one, with its warnings. */
function gangOf(p: PodBuilder, ...pgs: PodGroupBuilder[]): { gang: GangSpec; warnings: string[] } {
  const r = resolve(p, ...pgs);
  assert.ok(r.gang, `expected a gang, got ${JSON.stringify(r)}`);
  return { gang: r.gang, warnings: r.warnings };
}

/** One field of the gang of a pod in gang ns/g with min-available 3 plus `key: value`. */
function withAnnotation<K extends keyof GangSpec>(key: string, value: string, field: K): { value: GangSpec[K]; warnings: string[] } {
  const { gang, warnings } = gangOf(pod().gang('g', '3').annotate(key, value));
  return { value: gang[field], warnings };
}

function oneWarning(warnings: string[], pattern: string | RegExp): void {
  assert.equal(warnings.length, 1, `expected one warning, got ${JSON.stringify(warnings, null, 1)}`);
  if (typeof pattern === 'string') assert.equal(warnings[0], pattern);
  else assert.match(warnings[0], pattern);
}

const WHERE: Where = { file: 'g.yaml', document: 1 };

// ---------------------------------------------------------------------------------------
// Identity
// ---------------------------------------------------------------------------------------

describe('gang identity', () => {
  test('a pod naming no gang is not a gang member', () => {
    assert.deepEqual(resolve(pod()), { warnings: [] });
  });

  test('identity: label pod-group.scheduling.sigs.k8s.io wins over the name label and the annotation', () => {
    const r = resolve(pod().label(L.PodGroup, 'crd').label(L.Name, 'light').gang('anno', '2'), podGroup('crd').minMember(4));
    assert.equal(r.gangId, 'ns/crd');
    assert.equal(r.gang?.minMember, 4);
    assert.equal(r.gang?.source, 'podgroup');
  });

  test('identity: label pod-group.scheduling.sigs.k8s.io/name wins over annotation gang.scheduling.koordinator.sh/name', () => {
    const { gang } = gangOf(pod().label(L.Name, 'light').gang('anno', '2'));
    assert.equal(gang.name, 'light');
  });

  test('identity: the first non-empty value wins', () => {
    const { gang } = gangOf(pod().label(L.PodGroup, '').label(L.Name, '').gang('anno', '2'));
    assert.equal(gang.name, 'anno');
  });

  test('identity: the gang id is <pod namespace>/<name>; a pod without a namespace is in default', () => {
    assert.equal(resolve(pod('p', 'team-a').gang('g', '1')).gangId, 'team-a/g');
    const r = resolve(pod('p', null).gang('g', '1'));
    assert.equal(r.gangId, 'default/g');
    assert.equal(r.gang?.namespace, 'default');
  });

  test('gang parameters without a gang name: not a gang member, with a warning', () => {
    const r = resolve(pod().annotate(A.MinAvailable, '3'));
    assert.equal(r.gangId, undefined);
    oneWarning(r.warnings, /^Pod\/ns\/p: annotation gang\.scheduling\.koordinator\.sh\/min-available is set but the pod names no gang/);
  });
});

// ---------------------------------------------------------------------------------------
// CRD way
// ---------------------------------------------------------------------------------------

describe('gang: PodGroup (CRD) way', () => {
  test('rule: with label pod-group.scheduling.sigs.k8s.io the PodGroup alone configures the gang; pod annotations are ignored', () => {
    const { gang, warnings } = gangOf(
      pod().label(L.PodGroup, 'pg').annotate(A.MinAvailable, '9').annotate(A.Mode, 'NonStrict'),
      podGroup('pg').minMember(3).annotate(A.Mode, 'Strict'),
    );
    assert.deepEqual(gang, {
      name: 'pg',
      namespace: 'ns',
      minMember: 3,
      totalNumber: 3,
      mode: 'Strict',
      groups: ['ns/pg'],
      waitingTimeSeconds: DEFAULT_GANG_TIMEOUT_SECONDS,
      source: 'podgroup',
      matchPolicy: 'once-satisfied',
    });
    oneWarning(
      warnings,
      'Pod/ns/p: annotations gang.scheduling.koordinator.sh/min-available, gang.scheduling.koordinator.sh/mode are ignored: ' +
        'label pod-group.scheduling.sigs.k8s.io="pg" makes PodGroup ns/pg alone configure the gang',
    );
  });

  test('rule: a missing PodGroup leaves the gang not initialized ("gang has not init")', () => {
    const r = resolve(pod().label(L.PodGroup, 'pg'));
    assert.equal(r.gang, undefined);
    assert.equal(r.gangId, 'ns/pg');
    oneWarning(
      r.warnings,
      'Pod/ns/p: label pod-group.scheduling.sigs.k8s.io="pg" names scheduling.sigs.k8s.io/v1alpha1 PodGroup ns/pg, which does not exist: ' +
        'gang has not init, gangName: ns/pg, podName: ns/p',
    );
  });

  test("rule: a PodGroup is looked up in the pod's namespace and in the label's API group (with a hint)", () => {
    assert.equal(resolve(pod().label(L.PodGroup, 'pg'), podGroup('pg', 'other').minMember(2)).gang, undefined);
    const r = resolve(pod().label(L.PodGroup, 'pg'), pluginsPodGroup('pg').minMember(2));
    assert.equal(r.gang, undefined);
    assert.match(
      r.warnings[0],
      /; a scheduling\.x-k8s\.io\/v1alpha1 PodGroup ns\/pg exists: its pods carry label scheduling\.x-k8s\.io\/pod-group$/,
    );
  });

  test('rule: label scheduling.x-k8s.io/pod-group joins a scheduler-plugins PodGroup; missing -> "PodGroup not found"', () => {
    const { gang } = gangOf(pod().label(L.SchedulerPluginsPodGroup, 'pg'), pluginsPodGroup('pg').minMember(4));
    assert.equal(gang.minMember, 4);
    const r = resolve(pod().label(L.SchedulerPluginsPodGroup, 'pg'));
    assert.equal(r.gangId, 'ns/pg');
    assert.match(r.warnings[0], /which does not exist: PodGroup not found$/);
  });

  test('rule: a Koordinator PodGroup of the same id takes an annotation gang over', () => {
    const { gang, warnings } = gangOf(pod().gang('g', '5').annotate(A.Mode, 'NonStrict'), podGroup('g').minMember(2));
    assert.equal(gang.source, 'podgroup');
    assert.equal(gang.minMember, 2);
    assert.equal(gang.mode, 'Strict');
    oneWarning(
      warnings,
      /^Pod\/ns\/p: gang ns\/g is configured by PodGroup ns\/g, which takes over a gang of the same name: the pod's .*min-available.*mode are ignored$/,
    );
  });

  test('rule: a scheduler-plugins PodGroup does not take an annotation gang over', () => {
    const { gang } = gangOf(pod().gang('g', '5'), pluginsPodGroup('g').minMember(2));
    assert.equal(gang.source, 'annotations');
    assert.equal(gang.minMember, 5);
  });
});

// ---------------------------------------------------------------------------------------
// Annotation way
// ---------------------------------------------------------------------------------------

describe('gang: annotation way', () => {
  test("the seed's gang-a of a two-gang group", () => {
    const { gang, warnings } = gangOf(
      pod('a-0', 'namespaceA')
        .gang('gang-a', '5')
        .annotate(A.WaitingTime, '3600s')
        .annotate(A.TotalNumber, '5')
        .annotate(A.Mode, 'Strict')
        .annotate(A.Groups, '["namespaceB/gang-b", "namespaceA/gang-a"]'),
    );
    assert.deepEqual(gang, {
      name: 'gang-a',
      namespace: 'namespaceA',
      minMember: 5,
      totalNumber: 5,
      mode: 'Strict',
      groups: ['namespaceA/gang-a', 'namespaceB/gang-b'],
      waitingTimeSeconds: 3600,
      source: 'annotations',
      matchPolicy: 'once-satisfied',
    });
    assert.deepEqual(warnings, []);
  });

  test('defaults: totalNumber = min-available, Strict, the gang alone as its group, 600 s, once-satisfied', () => {
    const { gang, warnings } = gangOf(pod().gang('g', '3'));
    assert.deepEqual(gang, {
      name: 'g',
      namespace: 'ns',
      minMember: 3,
      totalNumber: 3,
      mode: 'Strict',
      groups: ['ns/g'],
      waitingTimeSeconds: 600,
      source: 'annotations',
      matchPolicy: 'once-satisfied',
    });
    assert.deepEqual(warnings, []);
  });

  test('options: the plugin arguments defaultTimeout and defaultMatchPolicy give the defaults', () => {
    const r = gangFromPod(pod().gang('g', '3').get(), [], { defaultTimeoutSeconds: 120, defaultMatchPolicy: 'only-waiting' });
    assert.equal(r.gang?.waitingTimeSeconds, 120);
    assert.equal(r.gang?.matchPolicy, 'only-waiting');
  });

  test('rule: min-available is required; without it this pod does not initialize the gang', () => {
    const r = resolve(pod().gang('g'));
    assert.equal(r.gang, undefined);
    assert.equal(r.gangId, 'ns/g');
    oneWarning(
      r.warnings,
      'Pod/ns/p: annotation gang.scheduling.koordinator.sh/name="g" puts the pod in gang ns/g, but it has no gang.scheduling.koordinator.sh/min-available: this pod does not initialize the gang',
    );
  });

  test('fallback: an unparsable min-available does not initialize the gang', () => {
    for (const raw of ['five', '1.5', ' 5', '0x10', '1_000', '2147483648', '-2147483649']) {
      const r = resolve(pod().gang('g', raw));
      assert.equal(r.gang, undefined, raw);
      assert.equal(r.gangId, 'ns/g');
      oneWarning(
        r.warnings,
        `Pod/ns/p: annotation gang.scheduling.koordinator.sh/min-available=${JSON.stringify(raw)} is not a base-10 int32: this pod does not initialize gang ns/g`,
      );
    }
  });

  test('rule: min-available is a base-10 int32; 0 and negative values are accepted as they are', () => {
    assert.equal(withAnnotation(A.MinAvailable, '+5', 'minMember').value, 5);
    assert.equal(withAnnotation(A.MinAvailable, '007', 'minMember').value, 7);
    assert.equal(withAnnotation(A.MinAvailable, '0', 'minMember').value, 0);
    const negative = gangOf(pod().gang('g', '-2'));
    assert.equal(negative.gang.minMember, -2);
    assert.equal(negative.gang.totalNumber, -2);
    assert.deepEqual(negative.warnings, []);
  });

  test('rule: label pod-group.scheduling.sigs.k8s.io/min-available wins over the annotation, even when it does not parse', () => {
    assert.equal(gangOf(pod().gang('g', '5').label(L.MinAvailable, '2')).gang.minMember, 2);
    const r = resolve(pod().gang('g', '5').label(L.MinAvailable, 'two'));
    assert.equal(r.gang, undefined);
    oneWarning(
      r.warnings,
      'Pod/ns/p: label pod-group.scheduling.sigs.k8s.io/min-available="two" is not a base-10 int32 ' +
        '(annotation gang.scheduling.koordinator.sh/min-available is not consulted when this label is set): this pod does not initialize gang ns/g',
    );
    // The deprecated name label with the deprecated min-available label: the lightweight way.
    assert.equal(gangOf(pod().label(L.Name, 'g').label(L.MinAvailable, '4')).gang.minMember, 4);
  });

  test('fallback: total-number empty, unparsable, 0 or below min-available -> min-available', () => {
    assert.deepEqual(withAnnotation(A.TotalNumber, '', 'totalNumber'), { value: 3, warnings: [] });
    const bad = withAnnotation(A.TotalNumber, 'ten', 'totalNumber');
    assert.equal(bad.value, 3);
    oneWarning(
      bad.warnings,
      'Pod/ns/p: annotation gang.scheduling.koordinator.sh/total-number="ten" is not a base-10 int32: using min-available 3',
    );
    const zero = withAnnotation(A.TotalNumber, '0', 'totalNumber');
    assert.equal(zero.value, 3);
    oneWarning(zero.warnings, 'Pod/ns/p: annotation gang.scheduling.koordinator.sh/total-number="0" reads as unset: using min-available 3');
    const low = withAnnotation(A.TotalNumber, '2', 'totalNumber');
    assert.equal(low.value, 3);
    oneWarning(low.warnings, 'Pod/ns/p: annotation gang.scheduling.koordinator.sh/total-number="2" is less than min-available 3: using 3');
    assert.deepEqual(withAnnotation(A.TotalNumber, '8', 'totalNumber'), { value: 8, warnings: [] });
  });

  test('fallback: mode other than exactly Strict or NonStrict -> Strict', () => {
    assert.deepEqual(withAnnotation(A.Mode, 'NonStrict', 'mode'), { value: 'NonStrict', warnings: [] });
    assert.deepEqual(withAnnotation(A.Mode, '', 'mode'), { value: 'Strict', warnings: [] });
    for (const raw of ['nonstrict', 'NONSTRICT', 'strict', 'Lenient']) {
      const r = withAnnotation(A.Mode, raw, 'mode');
      assert.equal(r.value, 'Strict', raw);
      oneWarning(
        r.warnings,
        `Pod/ns/p: annotation gang.scheduling.koordinator.sh/mode=${JSON.stringify(raw)} is not "Strict" or "NonStrict" (case-sensitive): using Strict`,
      );
    }
  });

  test('rule: waiting-time is a Go duration', () => {
    for (const [raw, seconds] of [
      ['30s', 30],
      ['10m', 600],
      ['1h30m', 5400],
      ['1.5m', 90],
      ['500ms', 0.5],
      ['.5s', 0.5],
      ['+2s', 2],
    ] as const) {
      assert.deepEqual(withAnnotation(A.WaitingTime, raw, 'waitingTimeSeconds'), { value: seconds, warnings: [] }, raw);
    }
  });

  test('fallback: waiting-time empty, zero, negative or unparsable -> the default timeout', () => {
    assert.deepEqual(withAnnotation(A.WaitingTime, '', 'waitingTimeSeconds'), { value: 600, warnings: [] });
    for (const raw of ['0', '0s', '-0s']) {
      const r = withAnnotation(A.WaitingTime, raw, 'waitingTimeSeconds');
      assert.equal(r.value, 600, raw);
      oneWarning(
        r.warnings,
        `Pod/ns/p: annotation gang.scheduling.koordinator.sh/waiting-time=${JSON.stringify(raw)} is zero, which means the default, not "no wait": using 600s`,
      );
    }
    const negative = withAnnotation(A.WaitingTime, '-5s', 'waitingTimeSeconds');
    assert.equal(negative.value, 600);
    oneWarning(
      negative.warnings,
      'Pod/ns/p: annotation gang.scheduling.koordinator.sh/waiting-time="-5s" is negative: using the default 600s',
    );
    for (const raw of ['30', '1.5', '5 s', '1d', 'abc', 's']) {
      const r = withAnnotation(A.WaitingTime, raw, 'waitingTimeSeconds');
      assert.equal(r.value, 600, raw);
      oneWarning(
        r.warnings,
        `Pod/ns/p: annotation gang.scheduling.koordinator.sh/waiting-time=${JSON.stringify(raw)} is not a Go duration such as "30s", "10m" or "1h30m": using the default 600s`,
      );
    }
  });

  test('rule: groups is a JSON array of gang ids, stored sorted; it need not contain the gang itself', () => {
    assert.deepEqual(withAnnotation(A.Groups, '["ns/b", "other/a"]', 'groups'), { value: ['ns/b', 'other/a'], warnings: [] });
    assert.deepEqual(withAnnotation(A.Groups, '["other/z", "ns/g", "ns/a"]', 'groups').value, ['ns/a', 'ns/g', 'other/z']);
  });

  test('fallback: groups empty, [] or null -> the gang alone, without a warning', () => {
    for (const raw of ['', '[]', 'null']) assert.deepEqual(withAnnotation(A.Groups, raw, 'groups'), { value: ['ns/g'], warnings: [] }, raw);
  });

  test('fallback: groups that are not a JSON array of strings -> the gang alone', () => {
    for (const raw of ['a,b', '[a,b]', 'ns/a']) {
      const r = withAnnotation(A.Groups, raw, 'groups');
      assert.deepEqual(r.value, ['ns/g'], raw);
      oneWarning(
        r.warnings,
        `Pod/ns/p: annotation gang.scheduling.koordinator.sh/groups=${JSON.stringify(raw)} is not a JSON array of gang ids such as ["ns-a/gang-a","ns-b/gang-b"]: the gang group is ns/g alone`,
      );
    }
    for (const raw of ['[1,2]', '{"a":"ns/a"}', '"ns/a"', '["ns/a", null]']) {
      const r = withAnnotation(A.Groups, raw, 'groups');
      assert.deepEqual(r.value, ['ns/g'], raw);
      oneWarning(r.warnings, /is not a JSON array of strings such as .*: the gang group is ns\/g alone$/);
    }
  });

  test('rule: group ids are not validated; one that is not "namespace/name" is kept, with a warning', () => {
    const r = withAnnotation(A.Groups, '["gang-b", "ns/g"]', 'groups');
    assert.deepEqual(r.value, ['gang-b', 'ns/g']);
    oneWarning(
      r.warnings,
      /lists "gang-b", which is not a gang id "namespace\/name": that gang can never be found, so the group can never be satisfied$/,
    );
  });

  test('rule: the gang group id is the sorted ids joined with ","', () => {
    const a = gangOf(pod().gang('a', '1').annotate(A.Groups, '["nsB/b","nsA/a"]')).gang;
    const b = gangOf(pod().gang('a', '1').annotate(A.Groups, '["nsA/a","nsB/b"]')).gang;
    assert.equal(gangGroupId(a), 'nsA/a,nsB/b');
    assert.equal(gangGroupId(a), gangGroupId(b));
    assert.equal(gangGroupId(gangOf(pod().gang('g', '1')).gang), 'ns/g');
  });

  test('rule: match-policy, read from the alias key pod-group.scheduling.sigs.k8s.io/match-policy when the primary is empty', () => {
    assert.deepEqual(withAnnotation(A.MatchPolicy, 'waiting-and-running', 'matchPolicy'), { value: 'waiting-and-running', warnings: [] });
    assert.deepEqual(withAnnotation(A.PodGroupMatchPolicy, 'only-waiting', 'matchPolicy'), { value: 'only-waiting', warnings: [] });
    const both = gangOf(
      pod().gang('g', '1').annotate(A.MatchPolicy, 'only-waiting').annotate(A.PodGroupMatchPolicy, 'waiting-and-running'),
    );
    assert.equal(both.gang.matchPolicy, 'only-waiting');
  });

  test('fallback: an unknown match-policy -> the default (once-satisfied)', () => {
    const r = withAnnotation(A.MatchPolicy, 'always', 'matchPolicy');
    assert.equal(r.value, 'once-satisfied');
    oneWarning(
      r.warnings,
      'Pod/ns/p: annotation gang.scheduling.koordinator.sh/match-policy="always" is not once-satisfied, only-waiting or waiting-and-running: using once-satisfied',
    );
  });

  test('rule: the timeout annotation is ignored (the peer never writes or acts on it)', () => {
    const { gang, warnings } = gangOf(pod().gang('g', '2').annotate(A.Timeout, 'true'));
    assert.equal(gang.minMember, 2);
    oneWarning(warnings, /annotation gang\.scheduling\.koordinator\.sh\/timeout="true" is ignored/);
  });

  test('never throws: malformed pods and PodGroups read as far as they go', () => {
    const junk: unknown[] = [{}, { metadata: null }, { metadata: { labels: 'x', annotations: [] } }, null, 42];
    for (const p of junk) assert.deepEqual(gangFromPod(p as KObject, [null, {}, 7] as unknown as KObject[]), { warnings: [] });
    // Raw YAML numbers (the seed writes `min-available: 5`) read as their text.
    const raw = pod().gang('g').annotate(A.MinAvailable, 5).annotate(A.TotalNumber, 6);
    assert.deepEqual([gangOf(raw).gang.minMember, gangOf(raw).gang.totalNumber], [5, 6]);
    assert.doesNotThrow(() =>
      gangFromPodGroup({ apiVersion: GangApiVersion.Koordinator, kind: 'PodGroup', metadata: { name: 'x' } } as PodGroup),
    );
    assert.deepEqual(gangsFromPods(null as unknown as KObject[], null as unknown as KObject[]).warnings, []);
  });
});

// ---------------------------------------------------------------------------------------
// PodGroup
// ---------------------------------------------------------------------------------------

describe('PodGroup', () => {
  test('gangFromPodGroup: minMember from spec; total-number, mode, groups and match-policy from its annotations', () => {
    const { gang, warnings } = gangFromPodGroup(
      podGroup('gang-a', 'namespaceA')
        .minMember(5)
        .timeout(300)
        .annotate(A.TotalNumber, '6')
        .annotate(A.Mode, 'NonStrict')
        .annotate(A.Groups, '["namespaceA/gang-a", "namespaceB/gang-b"]')
        .annotate(A.PodGroupMatchPolicy, 'waiting-and-running')
        .get(),
    );
    assert.deepEqual(gang, {
      name: 'gang-a',
      namespace: 'namespaceA',
      minMember: 5,
      totalNumber: 6,
      mode: 'NonStrict',
      groups: ['namespaceA/gang-a', 'namespaceB/gang-b'],
      waitingTimeSeconds: 300,
      source: 'podgroup',
      matchPolicy: 'waiting-and-running',
    });
    assert.deepEqual(warnings, []);
  });

  test('rule: an absent minMember reads as 0', () => {
    assert.equal(gangFromPodGroup(podGroup().get()).gang.minMember, 0);
  });

  test('fallback: scheduleTimeoutSeconds absent, 0 or negative -> Koordinator defaultTimeout 600 s', () => {
    assert.deepEqual(gangFromPodGroup(podGroup().get()), { gang: gangFromPodGroup(podGroup().get()).gang, warnings: [] });
    assert.equal(gangFromPodGroup(podGroup().get()).gang.waitingTimeSeconds, 600);
    for (const t of [0, -5]) {
      const r = gangFromPodGroup(podGroup().timeout(t).get());
      assert.equal(r.gang.waitingTimeSeconds, 600);
      oneWarning(
        r.warnings,
        `PodGroup/ns/pg: spec.scheduleTimeoutSeconds ${t} is not a positive number of seconds: using the default 600s`,
      );
    }
    assert.equal(gangFromPodGroup(podGroup().get(), { defaultTimeoutSeconds: 30 }).gang.waitingTimeSeconds, 30);
  });

  test('fallback: a scheduler-plugins PodGroup waits permitWaitingTimeSeconds (60 s) and counts waiting and running members', () => {
    const r = gangFromPodGroup(pluginsPodGroup().minMember(2).get());
    assert.equal(r.gang.waitingTimeSeconds, 60);
    assert.equal(r.gang.matchPolicy, 'waiting-and-running');
    assert.equal(gangFromPodGroup(pluginsPodGroup().timeout(0).get()).gang.waitingTimeSeconds, 60);
    assert.equal(gangFromPodGroup(pluginsPodGroup().timeout(90).get()).gang.waitingTimeSeconds, 90);
    assert.equal(gangFromPodGroup(pluginsPodGroup().get(), { permitWaitingTimeSeconds: 20 }).gang.waitingTimeSeconds, 20);
  });

  test('rule: the waiting-time annotation is ignored on a PodGroup', () => {
    const r = gangFromPodGroup(podGroup().timeout(30).annotate(A.WaitingTime, '1h').get());
    assert.equal(r.gang.waitingTimeSeconds, 30);
    oneWarning(
      r.warnings,
      'PodGroup/ns/pg: annotation gang.scheduling.koordinator.sh/waiting-time="1h" is ignored on a PodGroup: the wait is spec.scheduleTimeoutSeconds',
    );
  });

  test('fallback: invalid PodGroup annotations fall back as on pods', () => {
    const r = gangFromPodGroup(
      podGroup().minMember(4).annotate(A.TotalNumber, '1').annotate(A.Mode, 'loose').annotate(A.Groups, 'x').get(),
    );
    assert.deepEqual([r.gang.totalNumber, r.gang.mode, r.gang.groups], [4, 'Strict', ['ns/pg']]);
    assert.equal(r.warnings.length, 3);
    assert.ok(r.warnings.every((w) => w.startsWith('PodGroup/ns/pg: annotation gang.scheduling.koordinator.sh/')));
  });

  test("registry: both PodGroup API groups are accepted, beside Volcano's", () => {
    const pg = parseObject(podGroup().minMember(2).get(), WHERE);
    assert.deepEqual(pg.errors, []);
    assert.deepEqual(parseObject(pluginsPodGroup().minMember(2).get(), WHERE).errors, []);
    const wrong = parseObject({ ...podGroup().get(), apiVersion: 'scheduling.sigs.k8s.io/v1beta1' } as KObject, WHERE).errors;
    assert.equal(
      wrong[0].detail,
      'PodGroup is not accepted with apiVersion "scheduling.sigs.k8s.io/v1beta1"; accepted: scheduling.volcano.sh/v1beta1, scheduling.sigs.k8s.io/v1alpha1, scheduling.x-k8s.io/v1alpha1',
    );
  });

  test('rule: scheduler-plugins minMember is at least 1; Koordinator accepts any int32', () => {
    const e = parseObject(pluginsPodGroup().minMember(0).get(), WHERE).errors;
    assert.deepEqual(
      e.map((x) => `${x.where.field}: ${x.detail}`),
      ['spec.minMember: must be at least 1: the number of pods that must be scheduled together'],
    );
    assert.deepEqual(parseObject(podGroup().minMember(0).get(), WHERE).errors, []);
    assert.deepEqual(parseObject(podGroup().minMember(-1).get(), WHERE).errors, []);
    assert.match(parseObject(podGroup().minMember(1.5).get(), WHERE).errors[0].detail, /whole number/);
  });

  test('rule: minResources is a resource list; scheduleTimeoutSeconds an int32; status counters whole numbers >= 0', () => {
    const ok = parseObject(
      { ...podGroup().get(), spec: { minMember: 2, minResources: { cpu: 5, memory: '2048Mi' }, scheduleTimeoutSeconds: 600 } } as KObject,
      WHERE,
    );
    assert.deepEqual(ok.errors, []);
    assert.deepEqual((ok.object as PodGroup).spec.minResources, { cpu: '5', memory: '2048Mi' });
    const bad = parseObject(
      { ...podGroup().get(), spec: { minResources: { cpu: '-1' }, scheduleTimeoutSeconds: '10m' }, status: { running: -1 } } as KObject,
      WHERE,
    );
    assert.deepEqual(bad.errors.map((x) => x.where.field).sort(), [
      'spec.minResources.cpu',
      'spec.scheduleTimeoutSeconds',
      'status.running',
    ]);
  });

  test("the seed's PodGroup (written with its full apiVersion and quoted annotation values)", () => {
    const yaml = `
apiVersion: scheduling.sigs.k8s.io/v1alpha1
kind: PodGroup
metadata:
  creationTimestamp: "2022-07-11T18:26:33Z"
  name: gang-a
  namespace: namespaceA
  annotations:
    gang.scheduling.koordinator.sh/total-number: "5"
    gang.scheduling.koordinator.sh/mode: Strict
    gang.scheduling.koordinator.sh/groups: '["namespaceA/gang-a", "namespaceB/gang-b"]'
spec:
  minMember: 5
  minResources:
    cpu: "5"
    memory: "2048Mi"
  scheduleTimeoutSeconds: 600
`
      .replaceAll('namespaceA', 'namespace-a')
      .replaceAll('namespaceB', 'namespace-b');
    const { objects, errors } = parseManifests(yaml, 'pg.yaml');
    assert.deepEqual(errors, []);
    const parsed = parseObject(objects[0].object, objects[0].where);
    assert.deepEqual(parsed.errors, []);
    const { gang, warnings } = gangFromPodGroup(parsed.object as PodGroup);
    assert.deepEqual(warnings, []);
    assert.deepEqual([gang.minMember, gang.totalNumber, gang.mode, gang.waitingTimeSeconds], [5, 5, 'Strict', 600]);
    assert.equal(gangGroupId(gang), 'namespace-a/gang-a,namespace-b/gang-b');
  });
});

// ---------------------------------------------------------------------------------------
// Many pods
// ---------------------------------------------------------------------------------------

describe('gangsFromPods', () => {
  test("rule: the first pod with a valid min-available initializes an annotation gang; later pods' annotations are ignored", () => {
    const r = gangsFromPods(
      [pod('p0').gang('g', '3').get(), pod('p1').gang('g', '5').annotate(A.Mode, 'NonStrict').get(), pod('p2').gang('g', '3').get()],
      [],
    );
    assert.equal(r.gangs.get('ns/g')?.minMember, 3);
    assert.equal(r.gangs.get('ns/g')?.mode, 'Strict');
    assert.equal(r.members.get('ns/g')?.length, 3);
    assert.deepEqual(r.warnings, [
      'Pod/ns/p1: gang ns/g was initialized by Pod/ns/p0; this pod\'s different gang annotations are ignored (minMember 5 instead of 3, totalNumber 5 instead of 3, mode "NonStrict" instead of "Strict")',
    ]);
  });

  test('rule: a pod without a valid min-available does not initialize the gang; the next pod with one does', () => {
    const r = gangsFromPods([pod('p0').gang('g').get(), pod('p1').gang('g', 'x').get(), pod('p2').gang('g', '2').get()], []);
    assert.equal(r.gangs.get('ns/g')?.minMember, 2);
    assert.equal(r.members.get('ns/g')?.length, 3);
    // The invalid value is reported; the missing one is not (another pod initialized the gang).
    assert.deepEqual(r.warnings, [
      'Pod/ns/p1: annotation gang.scheduling.koordinator.sh/min-available="x" is not a base-10 int32: this pod does not initialize gang ns/g',
    ]);
  });

  test('rule: a gang no pod initializes is reported once, with its members listed', () => {
    const r = gangsFromPods([pod('p0').gang('g').get(), pod('p1').gang('g').get()], []);
    assert.equal(r.gangs.has('ns/g'), false);
    assert.equal(r.members.get('ns/g')?.length, 2);
    assert.deepEqual(r.warnings, [
      'gang ns/g is not initialized (2 pods): none of its pods carries a valid gang.scheduling.koordinator.sh/min-available; its pods cannot be placed',
    ]);
  });

  test('rule: a missing PodGroup is reported once per gang ("gang has not init")', () => {
    const r = gangsFromPods([pod('p0').label(L.PodGroup, 'pg').get(), pod('p1').label(L.PodGroup, 'pg').get()], []);
    assert.deepEqual(r.warnings, [
      'gang ns/pg is not initialized (2 pods): label pod-group.scheduling.sigs.k8s.io="pg" names scheduling.sigs.k8s.io/v1alpha1 PodGroup ns/pg, which does not exist: gang has not init, gangName: ns/pg, podName: ns/p0',
    ]);
  });

  test('rule: every PodGroup is a gang, with or without pods, and configures its pods and namesakes', () => {
    const r = gangsFromPods(
      [pod('p0').label(L.PodGroup, 'a').get(), pod('p1').gang('b', '9').get()],
      [podGroup('a').minMember(1).get(), podGroup('b').minMember(2).get(), podGroup('c').minMember(3).get()],
    );
    assert.deepEqual([...r.gangs.keys()], ['ns/a', 'ns/b', 'ns/c']);
    assert.equal(r.gangs.get('ns/b')?.minMember, 2);
    assert.deepEqual([...r.members.keys()], ['ns/a', 'ns/b']);
  });
});

// ---------------------------------------------------------------------------------------
// Value parsers
// ---------------------------------------------------------------------------------------

describe('value parsers', () => {
  test('parseInt32 reads as Go strconv.ParseInt(s, 10, 32)', () => {
    assert.deepEqual(['0', '-0', '+7', '2147483647', '-2147483648'].map(parseInt32), [0, 0, 7, 2147483647, -2147483648]);
    assert.deepEqual(['', '+', '1e3', '0x1', '1.0', '2147483648', ' 1'].map(parseInt32), [
      undefined,
      undefined,
      undefined,
      undefined,
      undefined,
      undefined,
      undefined,
    ]);
    assert.ok(Object.is(parseInt32('-0'), 0));
  });

  test('parseGoDuration reads as Go time.ParseDuration', () => {
    assert.equal(parseGoDuration('0'), 0);
    assert.equal(parseGoDuration('1h2m3s4ms5us6ns'), 3723.004005006);
    assert.equal(parseGoDuration('1\u00b5s'), 1e-6);
    assert.equal(parseGoDuration('1\u03bcs'), 1e-6);
    assert.equal(parseGoDuration('-1.5h'), -5400);
    assert.equal(parseGoDuration('5.s'), 5);
    assert.equal(parseGoDuration('2562047h'), 2562047 * 3600);
    for (const bad of ['', '1', '.s', '1x', '1hh', '2562048h', '1.5.5s', '-', 'h1']) assert.equal(parseGoDuration(bad), undefined, bad);
  });
});
