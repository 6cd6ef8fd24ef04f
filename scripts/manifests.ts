// `npm run manifests`: writes deploy/ from src/kube/manifests.ts (a test fails when deploy/ is stale).
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { deployFiles } from '../src/kube/manifests.ts';

for (const [path, text] of deployFiles()) {
  const file = join('deploy', path);
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, text);
  process.stdout.write(`wrote ${file}\n`);
}
