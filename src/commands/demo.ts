/**
 * `cbwatch demo`: the simulator with the demo scenario and the daemon against it, its URLs and what to try next,
 * until SIGINT or SIGTERM. Optionally Prometheus and Alertmanager too (--with-prometheus).
 */
import { join } from 'node:path';
import type { Logger } from 'pino';
import { resolveCollectors, defaultClusterConfig } from '../config/defaults.js';
import { flagCommands, flagsHelp } from '../config/flags.js';
import type { ParsedArgs } from '../config/flags.js';
import { DEFAULT_TELEMETRY_PATH, loadConfig } from '../config/load.js';
import { applySwitches, collectorSwitches } from '../config/switches.js';
import type { Config } from '../config/types.js';
import type { Daemon } from '../daemon.js';
import { ConfigError } from '../errors.js';
import { listenForTermination, serveUntilSignal } from '../lifecycle.js';
import { createLogger } from '../log.js';
import { packageVersion } from '../metrics/build.js';
import type { Simulator } from '../simulator/index.js';
import { packagePaths, thisCommandName } from './common.js';
import type { Out } from './common.js';
import { startWithWebConfig } from './serve.js';
import { simOptions } from './simulate.js';

/** Where `cbwatch demo` serves when neither --web.listen-address nor CBWATCH_WEB_LISTEN_ADDRESS says: this machine only. */
export const DEMO_LISTEN_ADDRESS = '127.0.0.1:9420';

/**
 * The environment variables that cannot apply to a demo, which watches its own simulated cluster: those that
 * name a configuration file, a cluster or its credentials, or a shard (a shard could drop the demo's cluster).
 * Every other CBWATCH_* variable applies as it does to `run` (listen address, web config, limits, log).
 */
export const DEMO_IGNORED_ENV = [
  'CBWATCH_CONFIG',
  'CBWATCH_COUCHBASE_URL',
  'CBWATCH_COUCHBASE_USERNAME',
  'CBWATCH_COUCHBASE_PASSWORD',
  'CBWATCH_COUCHBASE_PASSWORD_FILE',
  'CBWATCH_COUCHBASE_CLUSTER_NAME',
  'CBWATCH_COUCHBASE_CA_FILE',
  'CBWATCH_COUCHBASE_INSECURE_SKIP_VERIFY',
  'CBWATCH_SHARD',
] as const;

export function demoEnvironment(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = { ...env };
  for (const k of DEMO_IGNORED_ENV) delete out[k];
  return out;
}

/**
 * `cbwatch demo --help`: what the demo does and the flags it takes, their lines taken from `cbwatch --help`'s
 * (one description per flag).
 */
export function demoUsage(): string {
  const lines = flagsHelp()
    .split('\n')
    .filter((l) => {
      const name = /^\s*--(?:\[no-\])?([\w.-]+)/.exec(l)?.[1];
      return name !== undefined && (flagCommands(name)?.includes('demo') ?? true);
    })
    .map((l) => l.replace(/\s+\[[^[\]]*\]$/, ''));
  return `Usage: cbwatch demo [flags]

Start a simulated Couchbase cluster with problems to look at and the exporter against it, print their URLs and
what to try next, and run until Ctrl-C. The exporter serves on ${DEMO_LISTEN_ADDRESS} unless --web.listen-address
(or CBWATCH_WEB_LISTEN_ADDRESS) says otherwise.

Flags:
${lines.join('\n')}

The CBWATCH_* variables of these flags apply as they do to run. Those naming a cluster, a config file or a shard
are ignored, since the demo watches its own cluster:
${wrap(DEMO_IGNORED_ENV.join(', '), '  ')}
Every command: cbwatch --help. Reference: docs/configuration.md
`;
}

/** `text` cut into lines of at most 112 characters at its spaces, each line after `indent`. */
function wrap(text: string, indent: string): string {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(' ')) {
    if (line !== '' && indent.length + line.length + 1 + word.length > 112) {
      lines.push(indent + line);
      line = word;
    } else line = line === '' ? word : `${line} ${word}`;
  }
  if (line !== '') lines.push(indent + line);
  return lines.join('\n');
}

/** The demo's flags for loading: its own cluster only, and 127.0.0.1:9420 unless an address was given. */
function demoFlags(flags: ParsedArgs['flags'], env: NodeJS.ProcessEnv): ParsedArgs['flags'] {
  const given = flags['web.listen-address'] !== undefined || (env.CBWATCH_WEB_LISTEN_ADDRESS ?? '') !== '';
  return { ...flags, 'couchbase.url': undefined, config: undefined, ...(given ? {} : { 'web.listen-address': DEMO_LISTEN_ADDRESS }) };
}

export async function commandDemo(args: ParsedArgs, out: Out): Promise<number> {
  const { createSimulator } = await import('../simulator/index.js');
  const sim: Simulator = createSimulator(simOptions(args, 'demo'));
  const term = listenForTermination();
  const simPort = args.flags.port === undefined ? 0 : Number(args.flags.port);
  const simUrl = await sim.listen(simPort).catch((e: unknown) => {
    // Not the exporter's address: main()'s hint names --web.listen-address, this one --port.
    throw new Error(`cannot listen for the simulator on 127.0.0.1:${simPort}: ${(e as Error).message} (choose another --port)`);
  });
  let base: Config;
  try {
    base = loadConfig(demoFlags(args.flags, process.env), demoEnvironment(process.env), { allowNoClusters: true });
  } catch (err) {
    await sim.close();
    throw err;
  }
  // --[no-]collector.<name> and CBWATCH_COLLECTOR_<NAME> switch the demo's collectors as they do run's.
  const problems: string[] = [];
  const switches = collectorSwitches(args.flags, demoEnvironment(process.env), problems);
  if (problems.length > 0) {
    await sim.close();
    throw new ConfigError(problems.join('\n'));
  }
  const collectors = applySwitches(resolveCollectors(), switches);
  // The demo polls often so that dashboards fill quickly.
  for (const c of Object.values(collectors)) {
    c.interval = Math.min(c.interval, 10_000);
    c.timeout = Math.min(c.timeout, 9_000);
  }
  const users = sim.ctx.options.users;
  const config: Config = {
    ...base,
    clusters: [defaultClusterConfig({ name: 'demo', url: simUrl, username: users.admin.username, password: users.admin.password, collectors })],
  };
  const formatGiven = args.flags['log.format'] !== undefined || (process.env.CBWATCH_LOG_FORMAT ?? '') !== '';
  const log = createLogger({ level: config.log.level, format: formatGiven ? config.log.format : 'logfmt' });
  let daemon: Daemon;
  try {
    // --web.config.file (TLS, basic auth, rate limit, headers) applies to the demo as to `run`.
    daemon = await startWithWebConfig(config, log);
  } catch (err) {
    // The simulator already listens: without closing it the process would hang instead of exiting 1.
    await sim.close();
    throw err;
  }
  const stops: Array<() => Promise<void>> = [() => sim.close()];
  out(`\ncbwatch ${packageVersion()} demo\n`);
  out(`  exporter:   ${daemon.url}/        (landing page)\n`);
  const metricsUrl = `${daemon.url}${config.web.telemetryPath ?? DEFAULT_TELEMETRY_PATH}`;
  out(`  metrics:    ${metricsUrl}\n`);
  out(`  simulator:  ${simUrl}  (scenario ${sim.ctx.options.scenario}; user ${users.admin.username} / ${users.admin.password})\n`);
  if (args.flags['with-prometheus']) {
    const stack = await startStack(daemon.url, config.web.telemetryPath ?? DEFAULT_TELEMETRY_PATH, log, { prometheusPort: args.flags['prometheus.port'], alertmanagerPort: args.flags['alertmanager.port'] });
    if (stack) {
      stops.push(stack.stop);
      out(`  prometheus:   ${stack.prometheusUrl}\n`);
      out(`  alertmanager: ${stack.alertmanagerUrl}\n`);
    } else out('  prometheus:   not started (install Debian packages prometheus and prometheus-alertmanager)\n');
  }
  out(
    demoNextSteps({
      exporterUrl: daemon.url,
      metricsUrl,
      simUrl,
      username: users.admin.username,
      password: users.admin.password,
      withPrometheus: args.flags['with-prometheus'] === true,
      cmd: thisCommandName(),
      ...packagePaths(),
    }),
  );
  out('Press Ctrl-C to stop.\n\n');
  return serveUntilSignal(daemon, log, term, stops);
}

/** What to try after `cbwatch demo` starts: the first five minutes of a newcomer. */
export function demoNextSteps(o: {
  exporterUrl: string;
  /** The metrics URL in effect (--web.telemetry-path). */
  metricsUrl: string;
  simUrl: string;
  username: string;
  password: string;
  withPrometheus: boolean;
  /** How to name cbwatch (commandName). */
  cmd: string;
  /** Absolute paths of the dashboards and docs directories (packagePaths). */
  dashboards: string;
  docs: string;
}): string {
  const lines = [
    '',
    'Try next:',
    `  - Open ${o.exporterUrl}/ : the scenario's problems (a flapping node, a failed-over node, a CA expiring in`,
    '    less than 20 days, a paused and a failing XDCR replication, a slow search query, an index building, a paused',
    '    eventing function, and from minute 1 to 5 of every 10 a burst of slow queries) are listed under "Needs a look".',
    o.withPrometheus
      ? '  - In Prometheus (above), Alerts: the shipped rules fire as their `for:` durations pass.'
      : `  - ${o.cmd} demo --with-prometheus : also start Prometheus and Alertmanager with the shipped alert rules`,
    ...(o.withPrometheus ? [] : ['    (Debian packages prometheus and prometheus-alertmanager).']),
    `  - Grafana 10.4+: import ${join(o.dashboards, '*.json')} (pick a Prometheus scraping ${o.metricsUrl});`,
    `    see ${join(o.dashboards, 'README.md')}.`,
    '  - Poll the simulator once and print a table per collector:',
    `    CBWATCH_COUCHBASE_PASSWORD=${o.password} ${o.cmd} check --couchbase.url ${o.simUrl} --couchbase.username ${o.username}`,
    `  - A real cluster (a read-only user with the roles in ${join(o.docs, 'configuration.md')}; the password never on the command line):`,
    '    export CBWATCH_COUCHBASE_PASSWORD=...',
    `    ${o.cmd} check --couchbase.url https://cb1.example.com:18091 --couchbase.username cbwatch`,
    `    ${o.cmd} run   --couchbase.url https://cb1.example.com:18091 --couchbase.username cbwatch`,
    '',
  ];
  return `${lines.join('\n')}\n`;
}

async function startStack(
  exporterUrl: string,
  metricsPath: string,
  log: Logger,
  ports: { prometheusPort: number | undefined; alertmanagerPort: number | undefined },
): Promise<{ prometheusUrl: string; alertmanagerUrl: string; stop: () => Promise<void> } | undefined> {
  try {
    const mod = (await import('../tools/prometheus-stack.js')) as {
      startPrometheusStack?: (o: { exporterUrl: string; metricsPath?: string; prometheusPort?: number; alertmanagerPort?: number }) => Promise<{ prometheusUrl: string; alertmanagerUrl: string; stop: () => Promise<void> }>;
    };
    if (!mod.startPrometheusStack) return undefined;
    return await mod.startPrometheusStack({
      exporterUrl,
      metricsPath,
      ...(ports.prometheusPort === undefined ? {} : { prometheusPort: ports.prometheusPort }),
      ...(ports.alertmanagerPort === undefined ? {} : { alertmanagerPort: ports.alertmanagerPort }),
    });
  } catch (err) {
    log.warn({ err }, 'could not start Prometheus and Alertmanager');
    return undefined;
  }
}
