// Patch formats of the Kubernetes API (kubectl-facade.md §7.2–7.4, §8): pure and synchronous.
export { PatchError } from './errors.js';
export { mergePatch } from './merge-patch.js';
export { jsonPatch } from './json-patch.js';
export { strategicMergePatch, supportsStrategicMergePatch } from './strategic-merge-patch.js';
export { serverSideApply } from './server-side-apply.js';
