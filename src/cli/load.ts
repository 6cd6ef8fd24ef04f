// Reading manifests from files and directories (the only I/O of `plan`): YAML or JSON,
// multi-document or kubectl List, every file of a directory in name order.

import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { InputError } from '../api/errors.ts';
import { parseManifests, type ParsedObject } from '../api/manifest.ts';
import { parseObject } from '../api/schemas.ts';

const MANIFEST = /\.(ya?ml|json)$/i;

export interface Loaded {
  objects: ParsedObject[];
  errors: InputError[];
}

function expand(path: string, out: string[], errors: InputError[]): void {
  let st;
  try {
    st = statSync(path);
  } catch {
    errors.push(new InputError({ file: path }, 'no such file or directory'));
    return;
  }
  if (!st.isDirectory()) {
    out.push(path);
    return;
  }
  for (const name of readdirSync(path).sort()) {
    const p = join(path, name);
    if (statSync(p).isDirectory()) expand(p, out, errors);
    else if (MANIFEST.test(name)) out.push(p);
  }
}

/** Loads and validates every object; objects with errors are left out and reported. */
export function loadManifests(paths: readonly string[]): Loaded {
  const files: string[] = [];
  const errors: InputError[] = [];
  for (const p of paths) expand(p, files, errors);
  const objects: ParsedObject[] = [];
  for (const file of files) {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (e) {
      errors.push(new InputError({ file }, `cannot read: ${(e as Error).message}`));
      continue;
    }
    const parsed = parseManifests(text, file);
    errors.push(...parsed.errors);
    for (const p of parsed.objects) {
      const r = parseObject(p.object, p.where);
      errors.push(...r.errors);
      if (r.object) objects.push({ object: r.object, where: p.where });
    }
  }
  return { objects, errors };
}
