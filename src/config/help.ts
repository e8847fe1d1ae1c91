/** `cbwatch --help`, built from the settings table (settings.ts) and the collector names. */
import { COLLECTOR_NAMES } from './schema.js';
import { SETTING_ROWS, defaultText } from './settings.js';
import type { Setting } from './settings.js';

/**
 * The commands that take a flag, as `--help`, the parser's errors and docs/configuration.md name them (a test holds
 * the three together); undefined: every command (`--help`, `--version`). `healthcheck` takes `run`'s command
 * line (so a service's command can be copied), except `--config.check`, and follows `run` in every list.
 */
export function commandsOf(flag: string, commands: Setting['commands']): readonly string[] | undefined {
  if (commands === undefined) return undefined;
  return commands.flatMap((c) => (c === 'run' && flag !== 'config.check' ? ['run', 'healthcheck'] : [c]));
}

/** The commands of a collector switch (`--[no-]collector.<name>`). */
export const SWITCH_COMMANDS = ['run', 'check', 'demo'] as const;

/** A row's `--help` sentence, its default filled in. */
export function helpSentence(s: Setting): string {
  return s.help.replace('{default}', defaultText(s) ?? '');
}

/** The flags section of `cbwatch --help`. */
export function flagsHelp(): string {
  const line = (left: string, text: string, commands: readonly string[] | undefined): string =>
    `  ${left.padEnd(36)} ${text}${commands === undefined ? '' : ` [${commands.join(', ')}]`}`;
  const rows: string[] = [];
  for (const [, s] of SETTING_ROWS) {
    if (s.flag === undefined) continue;
    // The collector switches go before --help and --version, as node_exporter lists its --[no-]collector.<name>.
    if (s.flag === 'help') {
      for (const name of COLLECTOR_NAMES) {
        rows.push(line(`--[no-]collector.${name}`, `enable or disable the ${name} collector for every cluster (overrides the file)`, commandsOf(`collector.${name}`, SWITCH_COMMANDS)));
      }
    }
    rows.push(line(`--${s.flag}${s.metavar === undefined ? '' : ` ${s.metavar}`}`, helpSentence(s), commandsOf(s.flag, s.commands)));
  }
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
flags win over the environment, which wins over the file. --config.check and --web.enable-lifecycle have none.
demo reads them too, except those naming a cluster, a config file or a shard (CBWATCH_CONFIG,
CBWATCH_COUCHBASE_URL and its credentials, CBWATCH_SHARD): it watches its own simulated cluster.
Exit code 2 means a bad command line or configuration.
Reference: docs/configuration.md
`;
}
