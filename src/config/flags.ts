/**
 * Command-line parsing: `cbwatch [command] [flags]`. Strict: an unknown flag, a flag given to a command it
 * does not belong to, or a malformed value is a ConfigError naming the flag (the CLI exits 2). Flags only
 * record what was typed; defaults and the environment are applied by loadConfig(), so that the precedence
 * flags > environment > file can be decided in one place.
 */
import { parseArgs as nodeParseArgs } from 'node:util';
import { ConfigError } from '../errors.js';
import { COLLECTOR_NAMES } from './schema.js';
import { unknownCollectorFlag } from './switches.js';
import { parseDuration } from './units.js';

export const COMMANDS = ['run', 'check', 'demo', 'simulate', 'healthcheck', 'help', 'version'] as const;
export type Command = (typeof COMMANDS)[number];

export const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];
export const LOG_FORMATS = ['json', 'logfmt', 'pretty'] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

/**
 * What was given on the command line, keyed by the flag's own name (`flags['couchbase.url']`); a flag that
 * was not given is absent, so the environment can still decide. Numbers and enumerations are already
 * parsed and checked.
 */
export interface Flags {
  readonly config?: string | undefined;
  readonly 'config.check'?: boolean | undefined;
  readonly 'web.listen-address'?: string | undefined;
  readonly 'web.config.file'?: string | undefined;
  /** Path of the metrics endpoint (default /metrics). */
  readonly 'web.telemetry-path'?: string | undefined;
  /** Serve POST /-/reload (off by default, as Prometheus' --web.enable-lifecycle). */
  readonly 'web.enable-lifecycle'?: boolean | undefined;
  /** Requests served at once; beyond it, 503. */
  readonly 'web.max-requests'?: number | undefined;
  /** Process-wide budget for answers from Couchbase being buffered or parsed (a size: 256MiB). */
  readonly 'couchbase.max-buffered-bytes'?: string | undefined;
  /** Cap on the JSON values one Couchbase answer may hold (a whole number: 4000000). */
  readonly 'couchbase.max-answer-values'?: string | undefined;
  /** Collect the collection thread's heap every this many bytes of answers read (a size: 8MiB; 0 = off). */
  readonly 'collection.gc-every'?: string | undefined;
  readonly 'log.level'?: LogLevel | undefined;
  readonly 'log.format'?: LogFormat | undefined;
  readonly 'couchbase.url'?: string | undefined;
  readonly 'couchbase.username'?: string | undefined;
  readonly 'couchbase.cluster-name'?: string | undefined;
  readonly 'couchbase.password-file'?: string | undefined;
  readonly 'couchbase.ca-file'?: string | undefined;
  readonly 'couchbase.insecure-skip-verify'?: boolean | undefined;
  /** `i/n`: keep the clusters whose name hashes to shard i of n. */
  readonly shard?: string | undefined;
  /** demo: also start Prometheus (and Alertmanager) from the system packages against the daemon. */
  readonly 'with-prometheus'?: boolean | undefined;
  /** demo, simulate: the simulator scenario (`default`, `demo`, `incident`). */
  readonly scenario?: string | undefined;
  /** simulate: the address and port to listen on (port 0 = any free port). */
  readonly host?: string | undefined;
  readonly port?: number | undefined;
  /** demo --with-prometheus: the ports of Prometheus and Alertmanager (default: free ones). */
  readonly 'prometheus.port'?: number | undefined;
  readonly 'alertmanager.port'?: number | undefined;
  readonly buckets?: number | undefined;
  readonly nodes?: number | undefined;
  /** Added latency per simulated request, ms. */
  readonly latency?: number | undefined;
  readonly replications?: number | undefined;
  /** Simulator clock speed (1 = real time). */
  readonly speed?: number | undefined;
  /** Simulator bucket stats: the real fixture's stat names, or the full documented set. */
  readonly 'stat-set'?: 'fixture' | 'full' | undefined;
  /** Simulated Couchbase Server version (X.Y.Z): 7.0+ also answers the statistics range API. */
  readonly 'server-version'?: string | undefined;
  readonly help?: boolean | undefined;
  readonly version?: boolean | undefined;
  /** Lets callers index by a flag name held in a variable. */
  readonly [flag: string]: string | number | boolean | undefined;
}

export interface ParsedArgs {
  readonly command: Command;
  readonly flags: Flags;
}

type OptionSpec = { type: 'string' | 'boolean'; short?: string };

/** Every flag, with the commands that accept it (undefined: all commands). */
const OPTIONS: Record<string, OptionSpec & { commands?: readonly Command[]; value?: string; help: string }> = {
  config: { type: 'string', commands: ['run', 'check'], value: 'FILE', help: 'configuration file (YAML)' },
  'config.check': { type: 'boolean', commands: ['run'], help: 'validate the configuration, print a summary and exit (0 valid, 2 invalid)' },
  'web.listen-address': { type: 'string', commands: ['run', 'demo'], value: 'HOST:PORT', help: 'address to serve /metrics on (default :9420; demo: 127.0.0.1:9420)' },
  'web.config.file': { type: 'string', commands: ['run', 'demo'], value: 'FILE', help: 'TLS and basic auth (Prometheus exporter-toolkit format)' },
  'web.telemetry-path': { type: 'string', commands: ['run', 'demo'], value: 'PATH', help: 'path under which to expose metrics (default /metrics; /metrics then answers 404)' },
  'web.enable-lifecycle': { type: 'boolean', commands: ['run'], help: 'serve POST /-/reload, which reloads the configuration as SIGHUP does (off by default)' },
  'web.max-requests': { type: 'string', commands: ['run', 'demo'], value: 'N', help: 'HTTP requests served at once; beyond it, 503 (default 40, 0 = no limit)' },
  'couchbase.max-buffered-bytes': { type: 'string', commands: ['run', 'check', 'demo'], value: 'SIZE', help: 'process-wide budget for answers being read or parsed; an answer beyond it fails (default 256MiB)' },
  'couchbase.max-answer-values': { type: 'string', commands: ['run', 'check', 'demo'], value: 'N', help: 'JSON values one answer may hold (its [ { and , characters, counted as it arrives); beyond it, too_large (default 4000000)' },
  'collection.gc-every': { type: 'string', commands: ['run', 'demo'], value: 'SIZE', help: "collect the collection thread's heap every SIZE of Couchbase answers read: less memory where answers are large, for more CPU (default 8MiB; 0: V8 decides)" },
  'log.level': { type: 'string', commands: ['run', 'check', 'demo', 'simulate'], value: 'LEVEL', help: `one of ${LOG_LEVELS.join(', ')} (default info)` },
  'log.format': { type: 'string', commands: ['run', 'check', 'demo', 'simulate'], value: 'FORMAT', help: `one of ${LOG_FORMATS.join(', ')} (default json; demo: logfmt)` },
  'couchbase.url': { type: 'string', commands: ['run', 'check'], value: 'URL', help: 'single-cluster shortcut: management URL, e.g. https://cb1:18091' },
  'couchbase.username': { type: 'string', commands: ['run', 'check'], value: 'NAME', help: 'user name (the password comes from CBWATCH_COUCHBASE_PASSWORD or --couchbase.password-file)' },
  'couchbase.cluster-name': { type: 'string', commands: ['run', 'check'], value: 'NAME', help: 'value of the couchbase_cluster label (default: the URL host)' },
  'couchbase.password-file': { type: 'string', commands: ['run', 'check'], value: 'FILE', help: 'file holding the password (trailing newline ignored)' },
  'couchbase.ca-file': { type: 'string', commands: ['run', 'check'], value: 'FILE', help: 'CA bundle (PEM) that signed the cluster certificate' },
  'couchbase.insecure-skip-verify': { type: 'boolean', commands: ['run', 'check'], help: 'do not verify the cluster TLS certificate (testing only)' },
  shard: { type: 'string', commands: ['run', 'check'], value: 'I/N', help: 'watch only the clusters whose name hashes to shard I of N (0-based), to split many clusters over replicas' },
  'with-prometheus': { type: 'boolean', commands: ['demo'], help: 'also start Prometheus and Alertmanager (from the system packages) with the shipped rules, scraping the demo' },
  scenario: { type: 'string', commands: ['demo', 'simulate'], value: 'NAME', help: 'simulator scenario: default, demo, incident' },
  host: { type: 'string', commands: ['simulate'], value: 'HOST', help: 'simulator listen address (default 127.0.0.1)' },
  port: { type: 'string', commands: ['simulate', 'demo'], value: 'PORT', help: 'simulator port (simulate: default 8091; demo: default any free port; 0 = any free port)' },
  'prometheus.port': { type: 'string', commands: ['demo'], value: 'PORT', help: 'with --with-prometheus: the port of Prometheus on 127.0.0.1 (default any free port)' },
  'alertmanager.port': { type: 'string', commands: ['demo'], value: 'PORT', help: 'with --with-prometheus: the port of Alertmanager on 127.0.0.1 (default any free port)' },
  buckets: { type: 'string', commands: ['demo', 'simulate'], value: 'N', help: 'number of simulated buckets' },
  nodes: { type: 'string', commands: ['demo', 'simulate'], value: 'N', help: 'number of simulated nodes' },
  latency: { type: 'string', commands: ['demo', 'simulate'], value: 'MS', help: 'added latency per request: milliseconds or a duration (5ms, 0.2s)' },
  replications: { type: 'string', commands: ['demo', 'simulate'], value: 'N', help: 'number of simulated XDCR replications' },
  speed: { type: 'string', commands: ['demo', 'simulate'], value: 'X', help: 'simulator clock speed (1 = real time)' },
  'stat-set': { type: 'string', commands: ['demo', 'simulate'], value: 'SET', help: 'simulated bucket stats: fixture (the real sample) or full (every documented stat)' },
  'server-version': { type: 'string', commands: ['demo', 'simulate'], value: 'X.Y.Z', help: 'simulated Couchbase Server version: 6.6.5, 7.2.4, 7.6.5 (default), 8.0.0; 7.0+ answers the stats range API' },
  ...Object.fromEntries(
    COLLECTOR_NAMES.flatMap((name) => [
      [`collector.${name}`, { type: 'boolean', commands: ['run', 'check', 'demo'], help: `enable the ${name} collector (overrides the file)` }],
      [`no-collector.${name}`, { type: 'boolean', commands: ['run', 'check', 'demo'], help: `disable the ${name} collector (overrides the file)` }],
    ]),
  ),
  help: { type: 'boolean', short: 'h', help: 'show this help' },
  version: { type: 'boolean', help: 'print the version' },
};

/** Every flag name, without the leading `--`. */
export const FLAG_NAMES: readonly string[] = Object.keys(OPTIONS);

/**
 * The commands that take a flag, as `--help`, the parser's errors and docs/configuration.md name them (a test holds
 * the three together); undefined: every command (`--help`, `--version`). `healthcheck` takes `run`'s command
 * line (so a service's command can be copied), except `--config.check`, and follows `run` in every list.
 */
export function flagCommands(name: string): readonly string[] | undefined {
  const commands = OPTIONS[name]?.commands;
  if (commands === undefined) return undefined;
  return commands.flatMap((c) => (c === 'run' && name !== 'config.check' ? ['run', 'healthcheck'] : [c]));
}

/** The flags `command` takes (for "did you mean"). */
function flagsOf(command: Command): string[] {
  return FLAG_NAMES.filter((n) => flagCommands(n)?.includes(command) ?? true);
}

/** What `cbwatch <command>` lists as its commands when given another word: `rules` is one too (parsed apart). */
const COMMAND_LIST = [...COMMANDS.slice(0, 5), 'rules', ...COMMANDS.slice(5)];

/** Flags that do not exist on purpose, and what to use instead. */
const REFUSED: Record<string, string> = {
  'couchbase.password':
    'there is no --couchbase.password flag (command lines are visible to every user of the machine): set CBWATCH_COUCHBASE_PASSWORD or use --couchbase.password-file FILE',
};

function flagName(arg: string): string | undefined {
  if (!arg.startsWith('--')) return undefined;
  // Never keep what follows `=`: it may be a secret typed by mistake.
  return arg.slice(2).split('=', 1)[0];
}

function intFlag(name: string, text: string | undefined, min: number, max: number): number | undefined {
  if (text === undefined) return undefined;
  if (!/^\d+$/.test(text.trim())) throw new ConfigError(`--${name}: expected a whole number, got ${JSON.stringify(text)}`);
  const n = Number(text);
  if (n < min || n > max) throw new ConfigError(`--${name}: ${n} is out of range (${min}..${max})`);
  return n;
}

function serverVersionFlag(text: string | undefined): string | undefined {
  if (text === undefined) return undefined;
  if (!/^\d+\.\d+\.\d+$/.test(text.trim())) throw new ConfigError(`--server-version: expected a version such as 7.6.5, got ${JSON.stringify(text)}`);
  return text.trim();
}

function enumFlag<T extends string>(name: string, text: string | undefined, allowed: readonly T[]): T | undefined {
  if (text === undefined) return undefined;
  if (!(allowed as readonly string[]).includes(text)) {
    throw new ConfigError(`--${name}: ${JSON.stringify(text)} is not one of ${allowed.join(', ')}`);
  }
  return text as T;
}

/** `--latency 5`, `--latency 5ms`, `--latency 0.2s` → ms. */
function latencyFlag(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const t = text.trim();
  const ms = /^\d+(?:\.\d+)?$/.test(t) ? Number(t) : parseDuration(t);
  if (ms === undefined) throw new ConfigError(`--latency: expected milliseconds or a duration such as 5ms, got ${JSON.stringify(text)}`);
  return ms;
}

function speedFlag(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const n = Number(text);
  if (text.trim() === '' || !Number.isFinite(n) || n <= 0) throw new ConfigError(`--speed: expected a positive number, got ${JSON.stringify(text)}`);
  return n;
}

function nonEmpty(name: string, text: string | undefined): string | undefined {
  if (text === undefined) return undefined;
  if (text.trim() === '') throw new ConfigError(`--${name}: must not be empty`);
  return text;
}

/**
 * Parses `argv` (without the node and script entries, i.e. `process.argv.slice(2)`).
 * The command is the first positional (default `run`); `--help` and `--version` win over any command.
 */
export function parseArgs(argv: readonly string[]): ParsedArgs {
  for (const arg of argv) {
    if (arg === '--') break;
    const name = flagName(arg);
    if (name !== undefined && REFUSED[name] !== undefined) throw new ConfigError(`--${name}: ${REFUSED[name]}`);
  }

  const parse = () => nodeParseArgs({ args: [...argv], options: OPTIONS, allowPositionals: true, strict: true, tokens: true });
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse();
  } catch (err) {
    throw translateParseError(err, commandGuess(argv));
  }
  const { values, positionals, tokens } = parsed;

  if (positionals.length > 1) {
    throw new ConfigError(`unexpected argument ${JSON.stringify(positionals[1])} (commands take flags only)`);
  }
  const first = positionals[0];
  if (first !== undefined && !(COMMANDS as readonly string[]).includes(first)) {
    throw new ConfigError(`unknown command ${JSON.stringify(first)} (commands: ${COMMAND_LIST.join(', ')})`);
  }
  const v = values as Record<string, string | boolean | undefined>;
  const help = v['help'] === true || first === 'help';
  const version = v['version'] === true || first === 'version';
  const command: Command = help ? 'help' : version ? 'version' : ((first as Command | undefined) ?? 'run');

  if (command !== 'help' && command !== 'version') {
    for (const token of tokens) {
      if (token.kind !== 'option') continue;
      const allowed = flagCommands(token.name);
      if (allowed !== undefined && !allowed.includes(command)) {
        throw new ConfigError(`--${token.name} is not a flag of "${command}" (it belongs to: ${allowed.join(', ')})`);
      }
    }
  }

  const str = (k: string): string | undefined => {
    const x = v[k];
    return typeof x === 'string' ? x : undefined;
  };
  const bool = (k: string): boolean | undefined => {
    const x = v[k];
    return typeof x === 'boolean' ? x : undefined;
  };

  const parsedFlags: Record<string, string | number | boolean | undefined> = {
    config: nonEmpty('config', str('config')),
    'config.check': bool('config.check'),
    'web.listen-address': nonEmpty('web.listen-address', str('web.listen-address')),
    'web.config.file': nonEmpty('web.config.file', str('web.config.file')),
    'web.telemetry-path': nonEmpty('web.telemetry-path', str('web.telemetry-path')),
    'web.enable-lifecycle': bool('web.enable-lifecycle'),
    'web.max-requests': intFlag('web.max-requests', str('web.max-requests'), 0, 1_000_000),
    'couchbase.max-buffered-bytes': nonEmpty('couchbase.max-buffered-bytes', str('couchbase.max-buffered-bytes')),
    'couchbase.max-answer-values': nonEmpty('couchbase.max-answer-values', str('couchbase.max-answer-values')),
    'collection.gc-every': nonEmpty('collection.gc-every', str('collection.gc-every')),
    'log.level': enumFlag('log.level', str('log.level'), LOG_LEVELS),
    'log.format': enumFlag('log.format', str('log.format'), LOG_FORMATS),
    'couchbase.url': nonEmpty('couchbase.url', str('couchbase.url')),
    'couchbase.username': nonEmpty('couchbase.username', str('couchbase.username')),
    'couchbase.cluster-name': nonEmpty('couchbase.cluster-name', str('couchbase.cluster-name')),
    'couchbase.password-file': nonEmpty('couchbase.password-file', str('couchbase.password-file')),
    'couchbase.ca-file': nonEmpty('couchbase.ca-file', str('couchbase.ca-file')),
    'couchbase.insecure-skip-verify': bool('couchbase.insecure-skip-verify'),
    shard: nonEmpty('shard', str('shard')),
    'with-prometheus': bool('with-prometheus'),
    scenario: nonEmpty('scenario', str('scenario')),
    host: nonEmpty('host', str('host')),
    port: intFlag('port', str('port'), 0, 65535),
    'prometheus.port': intFlag('prometheus.port', str('prometheus.port'), 0, 65535),
    'alertmanager.port': intFlag('alertmanager.port', str('alertmanager.port'), 0, 65535),
    buckets: intFlag('buckets', str('buckets'), 0, 10_000),
    nodes: intFlag('nodes', str('nodes'), 1, 1000),
    latency: latencyFlag(str('latency')),
    replications: intFlag('replications', str('replications'), 0, 10_000),
    speed: speedFlag(str('speed')),
    'stat-set': enumFlag('stat-set', str('stat-set'), ['fixture', 'full'] as const),
    'server-version': serverVersionFlag(str('server-version')),
    help: help || undefined,
    version: version || undefined,
  };
  // --collector.<name> / --no-collector.<name>: one boolean `collector.<name>`, the last one given winning.
  for (const token of tokens) {
    if (token.kind !== 'option') continue;
    const m = /^(no-)?collector\.(.+)$/.exec(token.name);
    if (m) parsedFlags[`collector.${m[2] as string}`] = m[1] === undefined;
  }
  // Absent, not undefined: `'x' in flags` and spreading behave as "not given".
  for (const k of Object.keys(parsedFlags)) if (parsedFlags[k] === undefined) delete parsedFlags[k];
  const flags = parsedFlags as Flags;
  return { command, flags };
}

/**
 * The command of a command line the strict parser refused (its flags are not known yet): the first word when it is
 * a command, else the first positional a lenient parse finds, else `run`.
 */
function commandGuess(argv: readonly string[]): Command {
  const isCommand = (w: string | undefined): w is Command => w !== undefined && (COMMANDS as readonly string[]).includes(w);
  if (isCommand(argv[0])) return argv[0];
  try {
    const first = nodeParseArgs({ args: [...argv], options: OPTIONS, allowPositionals: true, strict: false }).positionals[0];
    if (isCommand(first)) return first;
  } catch {
    // Not even a lenient parse: fall back to run.
  }
  return 'run';
}

function translateParseError(err: unknown, command: Command): ConfigError {
  const code = (err as { code?: unknown }).code;
  const message = err instanceof Error ? err.message : String(err);
  // Node's messages quote the offending token; rebuild ours from the flag name only (no `=value`).
  const quoted = /'(-[^'\s=]*)/.exec(message)?.[1];
  const name = quoted === undefined ? undefined : quoted.replace(/^-+/, '');
  if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') {
    const collector = name === undefined ? undefined : unknownCollectorFlag(name);
    if (collector !== undefined) return collector;
    const shown = quoted ?? 'an unknown flag';
    // Among the flags of the command at hand: `demo --web.listen-adress` suggests what demo takes.
    const hint = name === undefined ? undefined : closest(name, flagsOf(command === 'help' || command === 'version' ? 'run' : command));
    return new ConfigError(`unknown flag ${shown}${hint === undefined ? '' : ` (did you mean --${hint}?)`}`);
  }
  if (code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE') {
    if (name !== undefined && OPTIONS[name]?.type === 'boolean') return new ConfigError(`--${name} takes no value`);
    if (name !== undefined) return new ConfigError(`--${name} needs a value (--${name} ${OPTIONS[name]?.value ?? 'VALUE'})`);
    return new ConfigError('a flag is missing its value');
  }
  return new ConfigError(`invalid command line: ${message.split('\n', 1)[0] ?? ''}`);
}

/**
 * The known name nearest to `name`, for "did you mean"; none when nothing is close: at most one edit per three
 * characters typed (at least one, at most three), a swap of two neighbours counting as one. `--bogus` is 3 edits
 * from `--nodes`, too far for 5 characters; `--config.chek` is one from `--config.check`.
 */
export function closest(name: string, known: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestD = Math.min(3, Math.max(1, Math.floor(name.length / 3))) + 1;
  for (const k of known) {
    const d = editDistance(name, k);
    if (d < bestD) {
      bestD = d;
      best = k;
    }
  }
  return best;
}

/** Optimal string alignment distance: insertions, deletions, substitutions and swaps of neighbours, each 1. */
export function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  const at = (i: number, j: number): number => (d[i] as number[])[j] as number;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      let v = Math.min(at(i - 1, j) + 1, at(i, j - 1) + 1, at(i - 1, j - 1) + (a[i - 1] === b[j - 1] ? 0 : 1));
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) v = Math.min(v, at(i - 2, j - 2) + 1);
      (d[i] as number[])[j] = v;
    }
  }
  return at(a.length, b.length);
}

/** The flags section of `cbwatch --help`. */
export function flagsHelp(): string {
  const rows = Object.entries(OPTIONS).flatMap(([name, o]) => {
    // One line per collector for the pair, as node_exporter's --[no-]collector.<name>.
    if (name.startsWith('no-collector.')) return [];
    const commands = flagCommands(name);
    const where = commands === undefined ? '' : ` [${commands.join(', ')}]`;
    if (name.startsWith('collector.')) {
      const left = `--[no-]${name}`;
      return [`  ${left.padEnd(36)} enable or disable the ${name.slice('collector.'.length)} collector for every cluster (overrides the file)${where}`];
    }
    const left = `--${name}${o.value === undefined ? '' : ` ${o.value}`}`;
    return `  ${left.padEnd(36)} ${o.help}${where}`;
  });
  return rows.join('\n');
}

/** The whole `cbwatch --help` text. */
export function usage(): string {
  return `Usage: cbwatch [command] [flags]

A Prometheus exporter for Couchbase Server.

Commands:
  run        poll the clusters and serve /metrics (the default)
  check      poll every enabled collector once and print a table; exit 0 all ok, 1 any failed, 2 bad config
  demo       start a simulated cluster and the exporter against it; print the URLs
  simulate   start only the simulated cluster (for trials and benchmarks)
  healthcheck  ask the running daemon (same flags, environment and web config as run) for /-/healthy;
             exit 0 healthy, 1 not (for Docker's HEALTHCHECK)
  rules      print the alerting rules with overrides (--set key=value; see cbwatch rules --help); takes flags
             of its own, besides --help and --version
  help       show this help
  version    print the version

Flags (commands that accept each in brackets; no brackets: every command, rules included):
${flagsHelp()}

The Couchbase password is never a flag: set CBWATCH_COUCHBASE_PASSWORD or use --couchbase.password-file.
The --config, --couchbase.*, --web.* and --log.* flags have environment variables (CBWATCH_CONFIG,
CBWATCH_COUCHBASE_URL, CBWATCH_LOG_LEVEL, ...), --[no-]collector.<name> has CBWATCH_COLLECTOR_<NAME>=true|false;
flags win over the environment, which wins over the file.
demo reads them too, except those naming a cluster, a config file or a shard (CBWATCH_CONFIG,
CBWATCH_COUCHBASE_URL and its credentials, CBWATCH_SHARD): it watches its own simulated cluster.
Exit code 2 means a bad command line or configuration.
Reference: docs/configuration.md
`;
}
