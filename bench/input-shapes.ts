// Input files of the load figures (bench/input-bench.ts, `input.*` and `hypernode.100k-members.*`)
// and their smoke test: manifests as a user hands them to `topoqueue plan -f`, generated
// from a seed like the shapes in shapes.ts.
//
//   - a kubectl List of GPU Nodes (`kubectl get nodes -o yaml` style: `kind: List`,
//     `items:` with the sequence at column 0), about 520 bytes of YAML per Node: 110,000
//     of them make the 57 MB file; the same List as JSON (`-o json`, 4 spaces);
//   - one HyperNode whose members are `exactMatch` of every Node's name.
//
// The YAML writer below is a small emitter for what these objects hold (maps, lists,
// strings, numbers): plain scalars where YAML 1.1 and 1.2 read them back as the same
// string, double quotes otherwise.

import type { Node } from '../src/api/objects.ts';
import type { HyperNode } from '../src/api/volcano-objects.ts';
import { node } from '../src/testing/builders.ts';
import { GPU_TAINT, Prng } from './shapes.ts';

export interface InputSize {
  nodes: number;
  /** Hosts per rack; racks per block is fixed (`RACKS_PER_BLOCK`). */
  hostsPerRack: number;
  seed: number;
}

/** The file: 110,000 Nodes, about 57 MB of YAML. */
export const INPUT: InputSize = { nodes: 110_000, hostsPerRack: 20, seed: 20261126 };
export const RACKS_PER_BLOCK = 50;

export const INPUT_ZONE = 'topology.kubernetes.io/zone';
export const INPUT_BLOCK = 'cloud.provider.com/topology-block';
export const INPUT_RACK = 'cloud.provider.com/topology-rack';

/** Name, block and rack of node `i`: `gpu-<block>-<rack>-<host>`. */
export function inputNodeName(i: number, size: InputSize = INPUT): { name: string; b: number; r: number } {
  const perBlock = RACKS_PER_BLOCK * size.hostsPerRack;
  const b = Math.floor(i / perBlock);
  const r = Math.floor((i % perBlock) / size.hostsPerRack);
  const h = i % size.hostsPerRack;
  return { name: `gpu-${b}-${String(r).padStart(2, '0')}-${String(h).padStart(2, '0')}`, b, r };
}

/** The input's Nodes: 8 GPUs / 128 CPU / 1Ti / 110 pods, GPU taint, zone, block and rack labels. */
export function inputNodes(size: InputSize = INPUT): Node[] {
  const rng = new Prng(size.seed);
  const out: Node[] = [];
  for (let i = 0; i < size.nodes; i++) {
    const { name, b, r } = inputNodeName(i, size);
    const zone = `us-east5-${String.fromCharCode(97 + (b % 4))}`;
    // A seeded few are cordoned, so not every object is the same shape.
    const cordoned = rng.int(0, 99) === 0;
    let n = node(name)
      .labels({
        [INPUT_ZONE]: zone,
        [INPUT_BLOCK]: `blk-${b}`,
        [INPUT_RACK]: `blk-${b}-r${r}`,
      })
      .gpu(8)
      .cpu(128)
      .memory('1Ti')
      .pods(110)
      .taint(GPU_TAINT);
    if (cordoned) n = n.unschedulable();
    out.push(n.build());
  }
  return out;
}

/** A kubectl List of the objects as YAML. */
export function listYaml(items: readonly object[]): string {
  const parts = ['apiVersion: v1\nitems:\n'];
  for (const item of items) parts.push(yamlBlock(item, 0, true));
  parts.push('kind: List\nmetadata:\n  resourceVersion: ""\n');
  return parts.join('');
}

/** The same List as JSON, as `kubectl get -o json` prints it (4 spaces). */
export function listJson(items: readonly object[]): string {
  return JSON.stringify({ apiVersion: 'v1', items, kind: 'List', metadata: { resourceVersion: '' } }, null, 4) + '\n';
}

// Plain where both YAML 1.1 and 1.2 read the text back as this string: letters, digits and
// `._/-`, starting with a letter or digit, not a number (`8`, `1.5`, `1e3`, `0x1f`, `0o7`)
// and none of the 1.1 booleans or null.
const PLAIN = /^[A-Za-z0-9][A-Za-z0-9._/-]*$/;
const NUMBER = /^([0-9._]+([eE][-+]?[0-9]+)?|0x[0-9a-fA-F_]+|0o[0-7]+|0b[01_]+)$/;
const RESERVED = /^(y|Y|yes|Yes|YES|n|N|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF|null|Null|NULL)$/;

function scalar(v: unknown): string {
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  if (v === null) return 'null';
  const s = String(v);
  return PLAIN.test(s) && !NUMBER.test(s) && !RESERVED.test(s) ? s : JSON.stringify(s);
}

/**
 * A map as block YAML at `indent`; `item` starts it with `- ` (a sequence entry at
 * `indent`, kubectl style: sequences under a key are not indented further).
 */
function yamlBlock(value: object, indent: number, item: boolean): string {
  const pad = ' '.repeat(indent);
  let out = '';
  let first = true;
  for (const [k, v] of Object.entries(value)) {
    if (v === undefined) continue;
    const lead = item ? (first ? `${pad}- ` : `${pad}  `) : pad;
    const inner = item ? indent + 2 : indent;
    first = false;
    if (Array.isArray(v)) {
      if (v.length === 0) out += `${lead}${scalar(k)}: []\n`;
      else {
        out += `${lead}${scalar(k)}:\n`;
        for (const e of v)
          out += e !== null && typeof e === 'object' ? yamlBlock(e as object, inner, true) : `${' '.repeat(inner)}- ${scalar(e)}\n`;
      }
    } else if (v !== null && typeof v === 'object') {
      if (Object.keys(v).length === 0) out += `${lead}${scalar(k)}: {}\n`;
      else out += `${lead}${scalar(k)}:\n${yamlBlock(v as object, inner + 2, false)}`;
    } else out += `${lead}${scalar(k)}: ${scalar(v)}\n`;
  }
  if (first) out += item ? `${pad}- {}\n` : '';
  return out;
}

/** One HyperNode (tier 1) whose members are `exactMatch` of each of `nodeNames`. */
export function bigHyperNode(name: string, nodeNames: readonly string[]): HyperNode {
  return {
    apiVersion: 'topology.volcano.sh/v1alpha1',
    kind: 'HyperNode',
    metadata: { name },
    spec: { tier: 1, members: nodeNames.map((n) => ({ type: 'Node', selector: { exactMatch: { name: n } } })) },
  } as HyperNode;
}
