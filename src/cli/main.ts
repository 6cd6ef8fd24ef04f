// The `topoqueue` command line. Exit codes: 0 done (a plan was computed, fit or not),
// 2 bad input or usage (the message names file, document and field), 1 internal error,
// or, for `hypernodes discover --check`, problems found.
//
// Start-up cost: `--help` and `--version` load commander and three small modules (the
// errors, the profile names, label discovery) and nothing else. Each command's
// action imports what it runs (YAML, the loaders, the planner, the embedded cluster) when
// it runs, so keep the static imports below that light.

import { readFileSync } from 'node:fs';
import { CoreApiVersion } from '../api/api-versions.ts';
import { Command, CommanderError, Option } from 'commander';
import { InputError } from '../api/errors.ts';
import type { Node, Topology } from '../api/objects.ts';
import { Profile } from '../placement/request.ts';
import { checkDiscoveryConfig, DEFAULT_TOPOLOGY_TYPE, discoverHyperNodes } from '../topology/hypernode-discovery.ts';

export interface Io {
  out: (s: string) => void;
  err: (s: string) => void;
  /** stderr is a terminal (`simulate` draws its progress as one updating line). */
  errIsTTY?: boolean;
}

const defaultIo: Io = {
  out: (s) => process.stdout.write(s),
  err: (s) => process.stderr.write(s),
  errIsTTY: process.stderr.isTTY === true,
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

/** Prints every error and every note; used where the rest of the input still runs. */
function printProblems(io: Io, errors: readonly InputError[], notes: readonly string[]): void {
  for (const e of errors) io.err(`error: ${e.message}\n`);
  for (const n of notes) io.err(`note: ${n}\n`);
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

/** The package's version, from package.json (two levels up from src/cli/ and dist/cli/ alike). */
export function packageVersion(): string {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version?: unknown };
  return typeof pkg.version === 'string' ? pkg.version : 'unknown';
}

/** YAML output as the commands print it: no folding of long strings. */
async function toYaml(value: unknown): Promise<string> {
  const { stringify } = await import('yaml');
  return stringify(value, { lineWidth: 0 });
}

export function buildProgram(io: Io): Command {
  const program = new Command('topoqueue')
    .description('Topology-aware gang scheduler for AI/ML workloads on Kubernetes')
    .version(packageVersion(), '-V, --version', 'print the version')
    .configureOutput({ writeOut: io.out, writeErr: io.err })
    .exitOverride();

  program
    .command('plan')
    .description('compute where every pod of each pending Workload (or Job, JobSet, LeaderWorkerSet, Pod) goes on the topology')
    .option('-f, --filename <path>', 'YAML or JSON file, or a directory of them (repeatable, at least one)', collect, [])
    .addOption(
      new Option('--profile <name>', 'placement profile (short form for the profile feature gates)').choices(Object.values(Profile)),
    )
    .option('--feature-gates <gates>', 'NAME=true|false,... (TASProfileMixed, TASBalancedPlacement, TASRespectNodeAffinityPreferred, ...)')
    .option(
      '--replace-node <node>',
      'repair the admitted Workloads that use this node instead of planning (repeatable: failed nodes repaired together)',
      collect,
      [],
    )
    .option('--strict', 'all or nothing: any refused object (or kind topoqueue does not use) stops the command before planning')
    .option(
      '--explain',
      'why each Workload still waits: per PodSet and level, what the best domain holds and what excludes the nodes; quota, topology or both (text after a table, an `explain` list in yaml/json)',
    )
    .addOption(
      new Option(
        '-o, --output <format>',
        'output format: the Workloads (yaml, json), a table of workload, status, where and reason (table, wide), or their names',
      )
        .choices(['yaml', 'json', 'table', 'wide', 'name'])
        .default('yaml'),
    )
    .action(
      async (opts: {
        filename: string[];
        profile?: Profile;
        featureGates?: string;
        replaceNode: string[];
        strict?: boolean;
        explain?: boolean;
        output: 'yaml' | 'json' | 'table' | 'wide' | 'name';
      }) => {
        requireFiles(opts.filename);
        const [{ loadManifests }, { parseFeatureGates, plan }] = await Promise.all([import('./load.ts'), import('./plan.ts')]);
        const gates = opts.featureGates ? parseFeatureGates(opts.featureGates) : {};
        const loaded = loadManifests(opts.filename, { strict: opts.strict });
        if (opts.strict && loaded.errors.length > 0) reportErrors(io, loaded.errors);
        const result = plan(loaded.objects, {
          gates,
          profile: opts.profile,
          replaceNode: opts.replaceNode.length > 0 ? opts.replaceNode : undefined,
          refused: loaded.refused,
          explain: opts.explain,
        });
        // A flag naming nothing (`--replace-node` with an unknown node) is a usage error.
        const usage = result.errors.filter((e) => e.where.field?.startsWith('--') === true);
        if (usage.length > 0 || (opts.strict && result.errors.length > 0)) reportErrors(io, opts.strict ? result.errors : usage);
        // Every refused object is reported and left out; the rest is planned and printed.
        const errors = [...loaded.errors, ...result.errors];
        printProblems(io, errors, [...loaded.notes, ...result.notes]);
        const list = {
          apiVersion: CoreApiVersion.V1,
          kind: 'List',
          items: result.workloads,
          ...(result.explanations ? { explain: result.explanations } : {}),
        };
        if (opts.output === 'table' || opts.output === 'wide' || opts.output === 'name') {
          const { renderPlanNames, renderPlanTable } = await import('./plan-table.ts');
          const nodes = loaded.objects.filter((o) => o.object.kind === 'Node').map((o) => o.object as Node);
          const topologies = loaded.objects.filter((o) => o.object.kind === 'Topology').map((o) => o.object as Topology);
          io.out(
            opts.output === 'name'
              ? renderPlanNames(result.workloads)
              : renderPlanTable(result.workloads, nodes, topologies, opts.output === 'wide'),
          );
          if (result.explanations) {
            const { renderExplanation } = await import('../placement/explain.ts');
            const blocks = result.explanations.map((e) => renderExplanation(e));
            io.out(`\nwhy they wait (--explain):\n${blocks.length > 0 ? blocks.join('') : 'every Workload is admitted\n'}`);
          }
        } else io.out(opts.output === 'json' ? `${JSON.stringify(list, null, 2)}\n` : await toYaml(list));
        if (errors.length > 0) throw new UsageExit(2);
      },
    );

  program
    .command('serve')
    .description('run the embedded cluster on the real clock behind a Kubernetes API that kubectl and client-node talk to')
    .option('--port <n>', 'port to listen on (0 picks a free one)', '6443')
    .option('--address <ip>', 'address to listen on', '127.0.0.1')
    .option('--kubeconfig <path>', 'where to write the kubeconfig (context topoqueue)', 'topoqueue.kubeconfig')
    .option('--data-dir <dir>', 'keep objects in a crash-safe store in this directory')
    .option(
      '-f, --filename <path>',
      'manifests to load at start (a data centre: Nodes, Topology, flavors, queues); repeatable; none: the built-in example',
      collect,
      [],
    )
    .option('--time-scale <n>', 'run durations and timers pass N times faster (60: an hour in a minute)', '1')
    .addOption(
      new Option(
        '--controllers <set>',
        "which controllers run: all, or none (only the cluster's stand-ins and topoqueue's webhooks: `topoqueue controller` schedules)",
      )
        .choices(['all', 'none'])
        .default('all'),
    )
    .action(
      async (opts: {
        port: string;
        address: string;
        kubeconfig: string;
        dataDir?: string;
        filename: string[];
        timeScale: string;
        controllers: 'all' | 'none';
      }) => {
        const { parsePort, parseTimeScale, serveCommand } = await import('./serve.ts');
        await serveCommand(
          {
            port: parsePort(opts.port),
            address: opts.address,
            kubeconfig: opts.kubeconfig,
            dataDir: opts.dataDir,
            filename: opts.filename,
            timeScale: parseTimeScale(opts.timeScale),
            controllers: opts.controllers,
          },
          io,
        );
      },
    );

  program
    .command('controller')
    .description("run topoqueue's controllers against a Kubernetes API server (beside kube-scheduler, as Kueue does)")
    .option('--kubeconfig <path>', 'kubeconfig to use (default: KUBECONFIG, ~/.kube/config, or the in-cluster service account)')
    .option('--context <name>', 'kubeconfig context to use')
    .option('--namespace <ns>', "topoqueue's own namespace (the lease lives there)", 'topoqueue-system')
    .option('--config <file>', "Kueue's Configuration (config.kueue.x-k8s.io/v1beta2): the fields that apply")
    .option('--leader-elect', 'run only while holding the coordination.k8s.io Lease (for 2+ replicas)')
    .option('--webhook-port <n>', 'webhook server port (HTTPS; 0 picks a free one)', '9443')
    .option(
      '--cert-dir <dir>',
      "webhook certificate directory (tls.crt, tls.key, ca.crt: cert-manager's layout); none: generated at start, its CA patched into the webhook configurations",
    )
    .option('--metrics-port <n>', '/metrics, /healthz and /readyz port (0 picks a free one)', '8080')
    .option('--kube-api-qps <n>', 'requests per second to the API server (default: clientConnection.qps, 50)')
    .option('--kube-api-burst <n>', 'request burst (default: clientConnection.burst, 100)')
    .option('--identity <name>', 'lease holder name (default: host name and a random suffix)')
    .addOption(new Option('--log-format <f>', 'log format (default: text on a terminal, json otherwise)').choices(['json', 'text']))
    .action(
      async (opts: {
        kubeconfig?: string;
        context?: string;
        namespace: string;
        config?: string;
        leaderElect?: boolean;
        webhookPort: string;
        metricsPort: string;
        kubeApiQps?: string;
        kubeApiBurst?: string;
        identity?: string;
        logFormat?: 'json' | 'text';
        certDir?: string;
      }) => {
        const { parsePort } = await import('./serve.ts');
        const { controllerCommand } = await import('./controller.ts');
        const positive = (v: string | undefined, field: string) => {
          if (v === undefined) return undefined;
          const n = Number(v);
          if (!(n > 0) || !Number.isFinite(n)) throw new InputError({ field }, `must be a positive number, got ${JSON.stringify(v)}`);
          return n;
        };
        const code = await controllerCommand(
          {
            kubeconfig: opts.kubeconfig,
            context: opts.context,
            namespace: opts.namespace,
            config: opts.config,
            leaderElect: opts.leaderElect ?? undefined,
            webhookPort: parsePort(opts.webhookPort),
            metricsPort: parsePort(opts.metricsPort),
            qps: positive(opts.kubeApiQps, '--kube-api-qps'),
            burst: positive(opts.kubeApiBurst, '--kube-api-burst'),
            identity: opts.identity,
            certDir: opts.certDir,
            logFormat: opts.logFormat,
          },
          { err: io.err, errIsTTY: io.errIsTTY },
        );
        if (code !== 0) throw new UsageExit(code);
      },
    );

  program
    .command('manifests')
    .description(
      'print the install for a real cluster: CRDs, RBAC, the Deployment, Services and webhook configurations (what deploy/ holds)',
    )
    .option(
      '--foreign-crds',
      'also the CRDs of kinds other systems own (Volcano, JobSet, LeaderWorkerSet, MPIJob, PodGroups): only where those systems are not installed',
    )
    .option('--namespace <ns>', "topoqueue's namespace", 'topoqueue-system')
    .action(async (opts: { foreignCrds?: boolean; namespace: string }) => {
      const { manifestsCommand } = await import('./manifests.ts');
      manifestsCommand(opts, io);
    });

  program
    .command('simulate')
    .description('run the input on the embedded cluster in virtual time (submit-at, SimulationEvents) and report what happened')
    .option('-f, --filename <path>', 'YAML or JSON file, or a directory of them (repeatable, at least one)', collect, [])
    .option(
      '--until <duration|idle>',
      'stop at this virtual time from the start (Go duration, e.g. 24h), or when nothing is left to do',
      'idle',
    )
    .option('--report <file>', 'write the JSON report (docs/simulate.md) to this file')
    .option('--html <file>', 'also write the report viewer (one self-contained HTML file, docs/dashboard.md) to this file')
    .option('--strict', 'all or nothing: any refused object (or kind topoqueue does not use) stops the command before the run')
    .action(async (opts: { filename: string[]; until: string; report?: string; html?: string; strict?: boolean }) => {
      requireFiles(opts.filename);
      const { simulateCommand } = await import('./simulate.ts');
      const r = await simulateCommand(opts, io);
      if (r.code !== 0) throw new UsageExit(r.code);
    });

  const report = program.command('report').description('look at simulation reports');
  report
    .command('view')
    .description('write a simulation report as one self-contained HTML file (charts, Gantt chart, placements; opens offline)')
    .argument('<report.json>', 'a report written by `simulate --report`')
    .option('-o, --output <file>', "the HTML file to write (default: the report's name with .html)")
    .action(async (file: string, opts: { output?: string }) => {
      const { writeReportHtml } = await import('./report-view.ts');
      const out = await writeReportHtml(file, opts.output);
      io.err(`topoqueue: wrote ${out}\n`);
    });

  const topology = program.command('topology').description('inspect topologies');
  topology
    .command('show')
    .description('print the domain tree of each TAS flavor with node counts and free capacity')
    .option('-f, --filename <path>', 'YAML or JSON file, or a directory of them (repeatable, at least one)', collect, [])
    .option('--flavor <name>', 'only this ResourceFlavor')
    .option('--depth <n>', 'levels to show', positiveInt('--depth'))
    .option('--max-children <n>', 'siblings shown before collapsing', positiveInt('--max-children'), 20)
    .addOption(
      new Option('-o, --output <format>', 'output format: the text tree, or the tree as data with free, used and total per domain')
        .choices(['text', 'json', 'yaml'])
        .default('text'),
    )
    .action(
      async (opts: { filename: string[]; flavor?: string; depth?: number; maxChildren: number; output: 'text' | 'json' | 'yaml' }) => {
        requireFiles(opts.filename);
        const [{ loadManifests }, { buildTasCluster, sortObjects }, { renderTopology, topologyData }] = await Promise.all([
          import('./load.ts'),
          import('./cluster-input.ts'),
          import('./topology-show.ts'),
        ]);
        const loaded = loadManifests(opts.filename);
        if (loaded.errors.length > 0) reportErrors(io, loaded.errors);
        for (const n of loaded.notes) io.err(`note: ${n}\n`);
        const input = sortObjects(loaded.objects);
        const cluster = buildTasCluster(input);
        if (cluster.errors.length > 0) reportErrors(io, cluster.errors);
        const flavors = cluster.flavors.filter((f) => opts.flavor === undefined || f.flavor.metadata.name === opts.flavor);
        if (flavors.length === 0) {
          const known = cluster.flavors.map((f) => f.flavor.metadata.name).join(', ') || '(none)';
          reportErrors(io, [
            new InputError(
              { field: '--flavor' },
              opts.flavor
                ? `no TAS ResourceFlavor named "${opts.flavor}"; TAS flavors in the input: ${known}`
                : 'no TAS ResourceFlavor (with spec.topologyName) in the input',
            ),
          ]);
        }
        for (const n of cluster.notes) io.err(`note: ${n}\n`);
        const tierNames = new Map<string, string>();
        for (const { hyperNode: h } of input.hyperNodes) if (h.spec.tierName) tierNames.set(h.metadata.name, h.spec.tierName);
        const hyperNodes = cluster.hyperNodeTree && { tree: cluster.hyperNodeTree, tierNames };
        const titleOf = (f: (typeof flavors)[number]) =>
          f.implicit
            ? `HyperNodes (implicit ResourceFlavor ${f.flavor.metadata.name})`
            : `ResourceFlavor ${f.flavor.metadata.name}, Topology ${f.snapshot.name}`;
        if (opts.output !== 'text') {
          const tree = cluster.hyperNodeTree;
          const data = {
            flavors: flavors.map((f) => ({
              flavor: f.flavor.metadata.name,
              topology: f.snapshot.name,
              ...topologyData(f.snapshot, titleOf(f), { depth: opts.depth }),
            })),
            // status.nodeCount as the HyperNode controller writes it (direct members), and every node under it.
            ...(tree && input.hyperNodes.length > 0
              ? {
                  hyperNodes: tree.hyperNodeNames.map((name) => ({
                    name,
                    tier: tree.tier(name) ?? null,
                    nodeCount: tree.nodeCount(name),
                    nodes: tree.nodesOf(name).size,
                  })),
                }
              : {}),
          };
          io.out(opts.output === 'json' ? `${JSON.stringify(data, null, 2)}\n` : await toYaml(data));
          return;
        }
        const parts = flavors.map((f) =>
          renderTopology(f.snapshot, titleOf(f), { depth: opts.depth, maxChildren: opts.maxChildren, hyperNodes, usedAndTotal: true }),
        );
        io.out(`${parts.join('\n\n')}\n`);
      },
    );

  const hypernodes = program.command('hypernodes').description('generate and check Volcano HyperNodes');
  hypernodes
    .command('discover')
    .description("generate HyperNodes from node labels, as Volcano's label discovery does (a kubectl List to apply)")
    .option(
      '-f, --filename <path>',
      'the Nodes, and the HyperNodes already there (for stable names and stale ones): YAML or JSON file, or a directory (repeatable, at least one)',
      collect,
      [],
    )
    .option(
      '--levels <keys>',
      'label keys, highest level first, comma-separated; the last is the node level (e.g. kubernetes.io/hostname) and never a HyperNode',
    )
    .option('--type <name>', 'topology type name, part of the generated names (at most 20 characters)', DEFAULT_TOPOLOGY_TYPE)
    .option('--check', 'print the problems instead of manifests; exit 1 if there are any')
    .addOption(new Option('-o, --output <format>', 'output format').choices(['yaml', 'json']).default('yaml'))
    .action(async (opts: { filename: string[]; levels?: string; type: string; check?: boolean; output: 'yaml' | 'json' }) => {
      requireFiles(opts.filename);
      const [{ loadManifests }, { sortObjects }] = await Promise.all([import('./load.ts'), import('./cluster-input.ts')]);
      if (opts.levels === undefined)
        throw new InputError(
          { field: '--levels' },
          'required: label keys, highest level first, the last being the node level, e.g. --levels cloud.provider.com/topology-block,cloud.provider.com/topology-rack,kubernetes.io/hostname',
        );
      const config = { levels: opts.levels.split(',').map((k) => k.trim()), type: opts.type };
      const configErrors = checkDiscoveryConfig(config);
      if (configErrors.length > 0)
        reportErrors(
          io,
          configErrors.map((e) => new InputError({ field: `--${e.field}` }, e.message)),
        );
      const loaded = loadManifests(opts.filename);
      if (loaded.errors.length > 0) reportErrors(io, loaded.errors);
      for (const n of loaded.notes) io.err(`note: ${n}\n`);
      const input = sortObjects(loaded.objects);
      if (input.nodes.length === 0)
        reportErrors(io, [new InputError({ field: '-f' }, 'no Node in the input: discovery reads the labels of Node objects')]);
      // Discovery reads names and labels only: no need to parse the rest of a NodeInfo.
      const nodes = input.nodes.map(({ node }) => ({ name: node.metadata.name, labels: node.metadata.labels ?? {} }));
      const result = discoverHyperNodes(
        nodes,
        input.hyperNodes.map((h) => h.hyperNode),
        config,
      );
      if (opts.check) {
        for (const p of result.problems) io.out(`! ${p.message}\n`);
        const tiers = [...new Set(result.hyperNodes.map((h) => h.spec.tier!))].map(
          (t) => `tier ${t}: ${result.hyperNodes.filter((h) => h.spec.tier === t).length}`,
        );
        const summary = `${result.hyperNodes.length} HyperNode(s)${tiers.length > 0 ? ` (${tiers.join(', ')})` : ''} from ${nodes.length} node(s)`;
        io.out(result.problems.length > 0 ? `${result.problems.length} problem(s); ${summary}\n` : `ok: ${summary}; no problems\n`);
        if (result.problems.length > 0) throw new UsageExit(1); // not a usage error: --check found problems
        return;
      }
      for (const p of result.problems) if (p.reason !== 'Stale' || opts.output === 'json') io.err(`note: ${p.message}\n`);
      const list = { apiVersion: CoreApiVersion.V1, kind: 'List', items: result.hyperNodes };
      if (opts.output === 'json') {
        io.out(`${JSON.stringify(list, null, 2)}\n`);
      } else {
        for (const name of result.stale) io.out(`# stale: ${name} (would be deleted)\n`);
        io.out(await toYaml(list));
      }
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
