// `topoqueue manifests`: prints the install (what deploy/ holds) as one YAML stream, for
// `topoqueue manifests | kubectl apply --server-side -f -`.

import { manifestsText } from '../kube/manifests.ts';

export function manifestsCommand(opts: { foreignCrds?: boolean; namespace?: string }, io: { out: (s: string) => void }): void {
  io.out(manifestsText(opts));
}
