// Validating webhooks for the kinds a user writes by hand and the scheduler reads as they
// are: Topology, ResourceFlavor, HyperNode and the gang PodGroups (whose annotations carry
// the gang's minimum, timeout and topology). On a real cluster the CRD schema checks
// structure only; these run the same parser topoqueue reads objects with (api/schemas.ts),
// so the API server refuses what the scheduler would refuse, with the same words.
// (The embedded cluster and `serve` parse every write already.)

import { parseObject } from '../api/schemas.ts';
import type { AdmissionHook } from '../runtime/store.ts';

export const OBJECT_WEBHOOKS: readonly { name: string; kinds: readonly string[] }[] = [
  { name: 'vtopology.kb.io', kinds: ['Topology'] },
  { name: 'vresourceflavor.kb.io', kinds: ['ResourceFlavor'] },
  { name: 'vhypernode.topoqueue.io', kinds: ['HyperNode'] },
  { name: 'vpodgroup.topoqueue.io', kinds: ['PodGroup'] },
];

export function objectValidationHooks(): AdmissionHook[] {
  return OBJECT_WEBHOOKS.map(({ name, kinds }) => ({
    name,
    kinds,
    operations: ['CREATE', 'UPDATE'],
    type: 'validating',
    admit: ({ object }) => {
      const { errors } = parseObject(object, {});
      return errors.length > 0 ? { denied: errors.map((e) => e.message) } : undefined;
    },
  }));
}
