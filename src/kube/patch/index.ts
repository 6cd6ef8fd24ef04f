// Patch formats of the Kubernetes API (kubectl-facade.md §7.2–7.4, §8): pure and synchronous,
// never mutating their inputs; failures are PatchError (400 malformed patch, 422 does not fit).
//  - mergePatch: RFC 7386 (label, annotate, patch --type=merge, custom resources);
//  - jsonPatch: RFC 6902 with evanphx/json-patch's messages (patch --type=json);
//  - strategicMergePatch: apimachinery's strategicpatch for the built-in kinds of shapes.ts
//    (apply, patch, cordon, taint, drain, edit); testdata/golden.json holds Go's own results;
//  - serverSideApply: apply --server-side, approximated (no managedFields, no conflicts).
// Where Go differs between runs or refuses oddly, this module picks one answer:
//  - a patch with two faults reports the first in patch order (Go: either, map order is random);
//  - a value both added to and `$deleteFromPrimitiveList`-ed from a list: added, then deleted;
//  - `$setElementOrder` of a list empty in both the object and the patch is accepted (Go:
//    "no elements in any of the given slices");
//  - JSON patch `copy` from a missing key is refused (evanphx copies null).
// The result holds what kube-apiserver would store: no `$...` directive keys, no nulls copied
// from the patch.
export { PatchError } from './errors.js';
export { mergePatch } from './merge-patch.js';
export { jsonPatch } from './json-patch.js';
export { strategicMergePatch, supportsStrategicMergePatch } from './strategic-merge-patch.js';
export { serverSideApply, type ServerSideApplyArgs } from './server-side-apply.js';
