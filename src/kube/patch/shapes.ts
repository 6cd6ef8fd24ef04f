// The per-field list strategies of the built-in kinds, as their Go struct tags declare them
// (`patchStrategy:"merge" patchMergeKey:"name"` and friends), for strategic merge patch.
// Only what SMP needs is described: struct fields that hold lists or lead to one. A field
// not described merges as a map or replaces as a list (atomic), which is Go's default.

/** How SMP treats one field: a struct (maps merge), a list merged by key, or a primitive list merged as a set. */
export interface Shape {
  /** Sub-fields of a struct, or of each element of a list merged by key. */
  readonly fields?: Readonly<Record<string, Shape>>;
  /** For lists: merge by this key (elements are maps). */
  readonly mergeKey?: string;
  /** For lists of scalars: merge as a set union (`$deleteFromPrimitiveList` removes). */
  readonly primitiveMerge?: boolean;
}

const struct = (fields: Record<string, Shape>): Shape => ({ fields });
const byKey = (mergeKey: string, fields: Record<string, Shape> = {}): Shape => ({ mergeKey, fields });
const primitiveSet: Shape = { primitiveMerge: true };

const objectMeta = struct({ ownerReferences: byKey('uid'), finalizers: primitiveSet });

const containerFields: Record<string, Shape> = {
  ports: byKey('containerPort'),
  env: byKey('name'),
  volumeMounts: byKey('mountPath'),
  volumeDevices: byKey('devicePath'),
};

const podSpec = struct({
  volumes: byKey('name'),
  initContainers: byKey('name', containerFields),
  containers: byKey('name', containerFields),
  ephemeralContainers: byKey('name', containerFields),
  imagePullSecrets: byKey('name'),
  hostAliases: byKey('ip'),
  topologySpreadConstraints: byKey('topologyKey'),
  schedulingGates: byKey('name'),
  resourceClaims: byKey('name'),
});

const podStatus = struct({
  conditions: byKey('type'),
  podIPs: byKey('ip'),
  hostIPs: byKey('ip'),
  resourceClaimStatuses: byKey('name'),
});

const podTemplateSpec = struct({ metadata: objectMeta, spec: podSpec });

const conditionsByType = struct({ conditions: byKey('type') });

const jobSpec = struct({ template: podTemplateSpec });

const workloadWithTemplate = struct({ metadata: objectMeta, spec: jobSpec, status: conditionsByType });

const serviceSpec = struct({ ports: byKey('port') });

const onlyMeta = struct({ metadata: objectMeta });

/** Shapes by `apiVersion` then kind. Custom resources are absent: they take merge patch, and SMP is a 415. */
const SHAPES: Readonly<Record<string, Readonly<Record<string, Shape>>>> = {
  v1: {
    Pod: struct({ metadata: objectMeta, spec: podSpec, status: podStatus }),
    PodTemplate: struct({ metadata: objectMeta, template: podTemplateSpec }),
    ReplicationController: struct({ metadata: objectMeta, spec: jobSpec, status: conditionsByType }),
    Node: struct({
      metadata: objectMeta,
      spec: struct({ podCIDRs: primitiveSet }),
      status: struct({ conditions: byKey('type'), addresses: byKey('type') }),
    }),
    Namespace: struct({ metadata: objectMeta, status: conditionsByType }),
    Event: onlyMeta,
    ConfigMap: onlyMeta,
    Secret: onlyMeta,
    Service: struct({ metadata: objectMeta, spec: serviceSpec, status: conditionsByType }),
    ServiceAccount: struct({ metadata: objectMeta, secrets: byKey('name') }),
  },
  'batch/v1': {
    Job: workloadWithTemplate,
    CronJob: struct({ metadata: objectMeta, spec: struct({ jobTemplate: struct({ metadata: objectMeta, spec: jobSpec }) }) }),
  },
  'apps/v1': {
    Deployment: workloadWithTemplate,
    ReplicaSet: workloadWithTemplate,
    StatefulSet: workloadWithTemplate,
    DaemonSet: workloadWithTemplate,
  },
  'coordination.k8s.io/v1': { Lease: onlyMeta },
  'events.k8s.io/v1': { Event: onlyMeta },
  'scheduling.k8s.io/v1': { PriorityClass: onlyMeta },
  'policy/v1': { PodDisruptionBudget: struct({ metadata: objectMeta, status: conditionsByType }) },
};

export function shapeOf(apiVersion: string, kind: string): Shape | undefined {
  return Object.hasOwn(SHAPES, apiVersion) && Object.hasOwn(SHAPES[apiVersion]!, kind) ? SHAPES[apiVersion]![kind] : undefined;
}

/** The shape of a field within a struct (or within each element of a keyed list). */
export function fieldShape(parent: Shape | undefined, field: string): Shape | undefined {
  const fields = parent?.fields;
  return fields && Object.hasOwn(fields, field) ? fields[field] : undefined;
}
