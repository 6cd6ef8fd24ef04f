// Decision digests of the scaled admission runs: a sha256 over every decision that
// `schedule()` returns while bench/admission-cycle.ts replays Kueue's baseline and tas
// shapes, with the virtual time of its cycle. Two trees that decide the same way print the
// same digest, so a refactoring that claims to change no behaviour can be checked on
// thousands of decisions (admissions, preemptions, pending reasons and their messages).
//
//   npx tsx bench/admission-digest.ts [--scale 0.1]    (or: npm run bench -- --digest)
//
// The serialization is canonical: object keys sorted, Maps and Sets as sorted entries,
// undefined fields left out, so only a change in what was decided changes the digest.

import { createHash, type Hash } from 'node:crypto';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { PEER_BASELINE, PEER_TAS, type PeerRunShape, runPeerShape, type TasVariant } from './admission-cycle.ts';

/** The shape with every class's Workload count (and TAS variant counts) times `scale`, rounded. */
export function scaledShape(shape: PeerRunShape, scale: number): PeerRunShape {
  if (!(scale > 0 && scale <= 1)) throw new Error(`digest: --scale must be in (0, 1], got ${scale}`);
  return {
    ...shape,
    classes: shape.classes.map((c) => {
      if (!c.tas) return { ...c, count: Math.max(1, Math.round(c.count * scale)) };
      const variants = Object.fromEntries(
        Object.entries(c.tas.variants).map(([v, n]) => [v, Math.max(1, Math.round(n * scale))]),
      ) as Record<TasVariant, number>;
      const count = Object.values(variants).reduce((a, b) => a + b, 0);
      return { ...c, count, tas: { ...c.tas, variants } };
    }),
  };
}

/** A canonical JSON text of a value: sorted keys, Maps and Sets as sorted entries, no undefined. */
export function canonical(v: unknown): string {
  if (v === undefined) return 'null';
  if (v === null || typeof v !== 'object') return JSON.stringify(v);
  if (v instanceof Map)
    return canonical([...v.entries()].map(([k, x]) => [canonical(k), x]).sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0)));
  if (v instanceof Set) return `[${[...v].map(canonical).sort().join(',')}]`;
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  const o = v as Record<string, unknown>;
  const keys = Object.keys(o)
    .filter((k) => o[k] !== undefined)
    .sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonical(o[k])}`).join(',')}}`;
}

export interface DecisionDigest {
  shape: string;
  workloads: number;
  decisions: number;
  /** sha256 hex of the canonical decisions, one line per decision prefixed with its cycle's virtual ms. */
  sha256: string;
}

/** Runs the shape and digests every decision of every cycle. */
export function decisionDigest(shape: PeerRunShape): DecisionDigest {
  const h: Hash = createHash('sha256');
  let decisions = 0;
  const run = runPeerShape(shape, {
    onCycle: (tMs, ds) => {
      for (const d of ds) {
        decisions++;
        h.update(`${tMs} ${canonical(d)}\n`);
      }
    },
  });
  return { shape: shape.name, workloads: run.workloads, decisions, sha256: h.digest('hex') };
}

/** The digests of the baseline and tas shapes at `scale`. */
export function peerDigests(scale: number): DecisionDigest[] {
  return [PEER_BASELINE, PEER_TAS].map((s) => decisionDigest(scaledShape(s, scale)));
}

export function printDigests(scale: number): void {
  for (const d of peerDigests(scale)) {
    console.log(`admission.peer-${d.shape}.digest scale ${scale}: ${d.workloads} Workloads, ${d.decisions} decisions, sha256 ${d.sha256}`);
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  const { values } = parseArgs({ options: { scale: { type: 'string', default: '0.1' } }, strict: true });
  printDigests(Number(values.scale));
}
