// Resource amounts as numbers for the hot path, and a pod's effective request.
//
// Convention for the whole project: `cpu` is held in millicores (Kubernetes MilliValue),
// every other resource in integer base units (Kubernetes Value: bytes, devices, pods),
// both rounded up. A ResourceAmounts object maps a resource name to that number; the
// numbers are safe integers (see milliValue in quantity.ts for the limit).
//
// A pod's request is computed with exact quantities and converted once at the end, so a
// total is rounded once, as Kubernetes does, not once per container.

import { InputError } from './errors.ts';
import type { Container, PodSpec, ResourceList } from './objects.ts';
import {
  QuantityError,
  QuantityFormat,
  addQuantity,
  compareQuantity,
  formatQuantity,
  milliValue,
  parseQuantity,
  quantityFromMilli,
  quantityFromValue,
  showInput,
  value,
  type Quantity,
} from './quantity.ts';

export type ResourceAmounts = Record<string, number>;

export const ResourceName = {
  CPU: 'cpu',
  Memory: 'memory',
  EphemeralStorage: 'ephemeral-storage',
  Pods: 'pods',
} as const;

const HUGEPAGES_PREFIX = 'hugepages-';

/** A resource list as found in a manifest: values may be YAML numbers as well as strings. */
export type ResourceListInput = Record<string, string | number>;

// ---------------------------------------------------------------------------------------
// One amount

/** A quantity as the project's number for `name`: millicores for cpu, base units otherwise. */
export function resourceAmount(name: string, q: Quantity): number {
  return name === ResourceName.CPU ? milliValue(q) : value(q);
}

/**
 * The quantity a number stands for. cpu comes from millis; byte-valued resources (memory,
 * ephemeral-storage, hugepages-*) are BinarySI when they are a whole multiple of 1024;
 * everything else is DecimalSI.
 */
export function amountQuantity(name: string, n: number): Quantity {
  if (name === ResourceName.CPU) return quantityFromMilli(n, QuantityFormat.DecimalSI);
  const binary = isByteResource(name) && n !== 0 && n % 1024 === 0;
  return quantityFromValue(n, binary ? QuantityFormat.BinarySI : QuantityFormat.DecimalSI);
}

/** A number back to a canonical quantity string: cpu 500 -> `500m`, memory 2^30 -> `1Gi`. */
export function formatResourceAmount(name: string, n: number): string {
  return formatQuantity(amountQuantity(name, n));
}

/** Amounts back to a resource list of canonical strings, in resource-name order. */
export function formatResourceList(amounts: ResourceAmounts): ResourceList {
  const out: ResourceList = {};
  for (const name of Object.keys(amounts).sort()) out[name] = formatResourceAmount(name, amounts[name]);
  return out;
}

function isByteResource(name: string): boolean {
  return name === ResourceName.Memory || name === ResourceName.EphemeralStorage || name.startsWith(HUGEPAGES_PREFIX);
}

// ---------------------------------------------------------------------------------------
// Resource lists. Errors are InputErrors whose field is `${where}.${name}`, worded as the
// Kubernetes API server words them (`Invalid value: "-1": must be greater than or equal to 0`).

/** Parses a resource list exactly. Refuses unparseable and negative quantities. */
export function parseResourceQuantities(list: ResourceListInput | undefined | null, where: string): Map<string, Quantity> {
  const out = new Map<string, Quantity>();
  if (list === undefined || list === null) return out;
  if (typeof list !== 'object' || Array.isArray(list)) {
    throw new InputError({ field: where }, `must be a map from resource name to quantity, got ${showInput(list)}`);
  }
  for (const [name, raw] of Object.entries(list)) {
    let q: Quantity;
    try {
      q = parseQuantity(raw);
    } catch (e) {
      if (e instanceof QuantityError) throw invalid(`${where}.${name}`, raw, e.detail);
      throw e;
    }
    if (q.nano < 0n) throw invalid(`${where}.${name}`, raw, 'must be greater than or equal to 0');
    out.set(name, q);
  }
  return out;
}

/** Parses a resource list into the project's numbers (see the file header). */
export function parseResourceList(list: ResourceListInput | undefined | null, where: string): ResourceAmounts {
  const out: ResourceAmounts = {};
  for (const [name, q] of parseResourceQuantities(list, where)) {
    out[name] = toAmount(name, q, `${where}.${name}`, () => `Invalid value: ${showInput(list![name])}: `);
  }
  return out;
}

function invalid(field: string, raw: unknown, detail: string): InputError {
  return new InputError({ field }, `Invalid value: ${showInput(raw)}: ${detail}`);
}

/** The message is built only on failure: this runs for every node and pod on ingest. */
function toAmount(name: string, q: Quantity, field: string, prefix: () => string): number {
  try {
    return resourceAmount(name, q);
  } catch (e) {
    if (e instanceof QuantityError) throw new InputError({ field }, `${prefix()}${e.detail}`);
    throw e;
  }
}

// ---------------------------------------------------------------------------------------
// The pod's effective request (Kubernetes' resource helpers PodRequests, without pod-level
// resources), per resource:
//   1. app total = sum over app containers + sum over sidecars (init containers with
//      `restartPolicy: Always`, which keep running beside the app);
//   2. each init container's effective request = its own + the sidecars started before
//      it; a sidecar's is the sum of the sidecars up to and including itself;
//   3. request = max(app total, max over init containers' effective requests);
//   4. plus `spec.overhead`.
// A container's request for a resource defaults to its limit when only the limit is given
// (Kubernetes' Pod defaulting; Kueue applies the same to pod templates).

/** The pod's effective request as exact quantities. `where` prefixes error fields. */
export function podRequestQuantities(spec: PodSpec, where = 'spec'): Map<string, Quantity> {
  const total = new Map<string, Quantity>();
  (spec.containers ?? []).forEach((c, i) => addInto(total, containerRequests(c, `${where}.containers[${i}]`)));

  const sidecars = new Map<string, Quantity>();
  const initMax = new Map<string, Quantity>();
  (spec.initContainers ?? []).forEach((c, i) => {
    const own = containerRequests(c, `${where}.initContainers[${i}]`);
    if (c.restartPolicy === 'Always') {
      addInto(total, own);
      addInto(sidecars, own);
      maxInto(initMax, sidecars);
    } else {
      const effective = new Map(own);
      addInto(effective, sidecars);
      maxInto(initMax, effective);
    }
  });
  maxInto(total, initMax);

  addInto(total, parseResourceQuantities(spec.overhead, `${where}.overhead`));
  return total;
}

/** The pod's effective request in the project's numbers (see the file header). */
export function podRequests(spec: PodSpec, where = 'spec'): ResourceAmounts {
  const out: ResourceAmounts = {};
  for (const [name, q] of podRequestQuantities(spec, where)) {
    out[name] = toAmount(name, q, where, () => `the pod's effective ${name} request ${formatQuantity(q)}: `);
  }
  return out;
}

function containerRequests(c: Container, where: string): Map<string, Quantity> {
  const requests = parseResourceQuantities(c.resources?.requests, `${where}.resources.requests`);
  const limits = parseResourceQuantities(c.resources?.limits, `${where}.resources.limits`);
  for (const [name, q] of limits) if (!requests.has(name)) requests.set(name, q);
  return requests;
}

function addInto(into: Map<string, Quantity>, add: Map<string, Quantity>): void {
  for (const [name, q] of add) {
    const have = into.get(name);
    into.set(name, have === undefined ? q : addQuantity(have, q));
  }
}

function maxInto(into: Map<string, Quantity>, other: Map<string, Quantity>): void {
  for (const [name, q] of other) {
    const have = into.get(name);
    if (have === undefined || compareQuantity(q, have) > 0) into.set(name, q);
  }
}

// ---------------------------------------------------------------------------------------
// Amount helpers: pure, return new objects, and refuse to leave the exact range of a number.

/** Per-resource sum; a resource missing on one side counts as 0. */
export function addAmounts(a: ResourceAmounts, b: ResourceAmounts): ResourceAmounts {
  const out: ResourceAmounts = { ...a };
  for (const name of Object.keys(b)) out[name] = checked(name, (out[name] ?? 0) + b[name]);
  return out;
}

/** Every amount multiplied by the integer `n` (e.g. a pod count). */
export function scaleAmounts(a: ResourceAmounts, n: number): ResourceAmounts {
  if (!Number.isSafeInteger(n)) throw new RangeError(`scaleAmounts: expected an integer factor, got ${n}`);
  const out: ResourceAmounts = {};
  for (const name of Object.keys(a)) out[name] = checked(name, a[name] * n);
  return out;
}

function checked(name: string, n: number): number {
  if (!Number.isSafeInteger(n)) {
    throw new RangeError(`${name}: ${n} is beyond the exact range of a JavaScript number (±${Number.MAX_SAFE_INTEGER})`);
  }
  return n;
}
