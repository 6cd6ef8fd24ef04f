// TEMPORARY stand-in for the patch helper's module (ISSUE11-CONTRACT.md): deleted before
// `git merge patch`. Only the signatures matter; the real engines come with that merge.

export class PatchError extends Error {
  constructor(
    message: string,
    readonly code: 400 | 422 = 422,
  ) {
    super(message);
  }
}

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

export function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isObj(patch)) return patch;
  const out: Record<string, unknown> = isObj(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = mergePatch(out[k], v);
  }
  return out;
}

export function jsonPatch(_target: unknown, _operations: unknown): unknown {
  throw new PatchError('json patch: not yet (patch module pending)');
}

export function strategicMergePatch(_apiVersion: string, _kind: string, target: unknown, patch: unknown): unknown {
  return mergePatch(target, patch);
}

export function supportsStrategicMergePatch(apiVersion: string, _kind: string): boolean {
  return ['v1', 'batch/v1', 'coordination.k8s.io/v1', 'scheduling.k8s.io/v1'].includes(apiVersion);
}

export function serverSideApply(args: { apiVersion: string; kind: string; live: unknown | undefined; previous: unknown | undefined; applied: unknown }): unknown {
  return mergePatch(args.live, args.applied);
}
