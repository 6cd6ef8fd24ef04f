// The `topoqueue` command line. Exit codes: 0 done (a plan was computed, fit or not),
// 2 bad input or usage (the message names file, document and field), 1 internal error.

import { Command, CommanderError, Option } from 'commander';
import { stringify } from 'yaml';
import { InputError } from '../api/errors.ts';
import { Profile } from '../placement/request.ts';
import { buildTasCluster, sortObjects } from './cluster-input.ts';
import { loadManifests } from './load.ts';
import { parseFeatureGates, plan } from './plan.ts';
import { renderTopology } from './topology-show.ts';

export interface Io {
  out: (s: string) => void;
  err: (s: string) => void;
}

const defaultIo: Io = {
  out: (s) => process.stdout.write(s),
  err: (s) => process.stderr.write(s),
};

class UsageExit extends Error {
  constructor(readonly code: number) {
    super(`exit ${code}`);
  }
}

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

function requireFiles(files: string[]): void {
  if (files.length === 0) throw new InputError({ field: '-f' }, 'at least one -f PATH (a YAML or JSON file, or a directory) is required');
}

function reportErrors(io: Io, errors: readonly InputError[]): never {
  for (const e of errors) io.err(`error: ${e.message}\n`);
  throw new UsageExit(2);
}

function positiveInt(flag: string) {
  return (v: string): number => {
    const n = Number(v);
    if (!Number.isInteger(n) || n < 1) throw new InputError({ field: flag }, `must be a positive integer, got "${v}"`);
    return n;
  };
}

export function buildProgram(io: Io): Command {
  const program = new Command('topoqueue')
    .description('Topology-aware gang scheduler for AI/ML workloads on Kubernetes')
    .configureOutput({ writeOut: io.out, writeErr: io.err })
    .exitOverride();

  program
    .command('plan')
    .description('compute where every pod of each pending Workload (or Job, JobSet, LeaderWorkerSet, Pod) goes on the topology')
    .option('-f, --filename <path>', 'YAML or JSON file, or a directory of them (repeatable, at least one)', collect, [])
    .addOption(new Option('--profile <name>', 'placement profile (short form for the profile feature gates)').choices(Object.values(Profile)))
    .option('--feature-gates <gates>', 'NAME=true|false,... (TASProfileMixed, TASBalancedPlacement, TASRespectNodeAffinityPreferred, ...)')
    .option('--replace-node <node>', 'repair the admitted Workloads that use this node instead of planning')
    .addOption(new Option('-o, --output <format>', 'output format').choices(['yaml', 'json']).default('yaml'))
    .action((opts: { filename: string[]; profile?: Profile; featureGates?: string; replaceNode?: string; output: 'yaml' | 'json' }) => {
      requireFiles(opts.filename);
      const gates = opts.featureGates ? parseFeatureGates(opts.featureGates) : {};
      const loaded = loadManifests(opts.filename);
      if (loaded.errors.length > 0) reportErrors(io, loaded.errors);
      const result = plan(loaded.objects, { gates, profile: opts.profile, replaceNode: opts.replaceNode });
      if (result.errors.length > 0) reportErrors(io, result.errors);
      for (const n of result.notes) io.err(`note: ${n}\n`);
      const list = { apiVersion: 'v1', kind: 'List', items: result.workloads };
      io.out(opts.output === 'json' ? `${JSON.stringify(list, null, 2)}\n` : stringify(list, { lineWidth: 0 }));
    });

  const topology = program.command('topology').description('inspect topologies');
  topology
    .command('show')
    .description('print the domain tree of each TAS flavor with node counts and free capacity')
    .option('-f, --filename <path>', 'YAML or JSON file, or a directory of them (repeatable, at least one)', collect, [])
    .option('--flavor <name>', 'only this ResourceFlavor')
    .option('--depth <n>', 'levels to show', positiveInt('--depth'))
    .option('--max-children <n>', 'siblings shown before collapsing', positiveInt('--max-children'), 20)
    .action((opts: { filename: string[]; flavor?: string; depth?: number; maxChildren: number }) => {
      requireFiles(opts.filename);
      const loaded = loadManifests(opts.filename);
      if (loaded.errors.length > 0) reportErrors(io, loaded.errors);
      const cluster = buildTasCluster(sortObjects(loaded.objects));
      if (cluster.errors.length > 0) reportErrors(io, cluster.errors);
      const flavors = cluster.flavors.filter((f) => opts.flavor === undefined || f.flavor.metadata.name === opts.flavor);
      if (flavors.length === 0) {
        const known = cluster.flavors.map((f) => f.flavor.metadata.name).join(', ') || '(none)';
        reportErrors(io, [new InputError({ field: '--flavor' }, opts.flavor ? `no TAS ResourceFlavor named "${opts.flavor}"; TAS flavors in the input: ${known}` : 'no TAS ResourceFlavor (with spec.topologyName) in the input')]);
      }
      for (const n of cluster.notes) io.err(`note: ${n}\n`);
      const parts = flavors.map((f) => renderTopology(f.snapshot, `ResourceFlavor ${f.flavor.metadata.name}, Topology ${f.snapshot.name}`, { depth: opts.depth, maxChildren: opts.maxChildren }));
      io.out(`${parts.join('\n\n')}\n`);
    });

  return program;
}

/** Runs the CLI; returns the exit code. */
export async function main(argv: string[], io: Io = defaultIo): Promise<number> {
  const program = buildProgram(io);
  try {
    await program.parseAsync(argv, { from: 'user' });
    return 0;
  } catch (e) {
    if (e instanceof UsageExit) return e.code;
    if (e instanceof CommanderError) return e.exitCode === 0 ? 0 : 2;
    if (e instanceof InputError) {
      io.err(`error: ${e.message}\n`);
      return 2;
    }
    io.err(`internal error: ${(e as Error).stack ?? String(e)}\n`);
    return 1;
  }
}
