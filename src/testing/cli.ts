// Running the CLI in-process for tests, and temporary input files.

import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { main } from '../cli/main.ts';

export async function runCli(args: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await main(args, { out: (s) => (out += s), err: (s) => (err += s) });
  return { code, out, err };
}

/** Writes `text` to a fresh temporary directory and returns the file's path. */
export function tmpFile(name: string, text: string): string {
  const p = join(mkdtempSync(join(tmpdir(), 'tq-')), name);
  writeFileSync(p, text);
  return p;
}

/** One Ready Node of 8 CPU: the smallest cluster `plan` and `simulate` accept. */
export const ONE_NODE_YAML = `apiVersion: v1
kind: Node
metadata:
  name: n1
  labels: {kubernetes.io/hostname: n1}
status:
  allocatable: {cpu: "8", pods: "110"}
  conditions: [{type: Ready, status: "True"}]
`;
