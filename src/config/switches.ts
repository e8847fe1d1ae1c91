/**
 * Switching collectors without a config file, as node_exporter does: `--collector.<name>` / `--no-collector.<name>`
 * and `CBWATCH_COLLECTOR_<NAME>=true|false`. Precedence flags > environment > file, for every cluster: a switch
 * sets `collectors.<name>.enabled` over what the file says.
 */
import { ConfigError } from '../errors.js';
import type { Flags } from './settings.js';
import { COLLECTOR_NAMES } from './schema.js';
import type { CollectorName } from './schema.js';
import type { ResolvedCollectors } from './types.js';

/** `CBWATCH_COLLECTOR_BUCKET_STATS` for `bucket_stats`. */
export function collectorEnvName(name: string): string {
  return `CBWATCH_COLLECTOR_${name.toUpperCase()}`;
}

const ENV_PREFIX = 'CBWATCH_COLLECTOR_';

export interface CollectorSwitch {
  readonly enabled: boolean;
  /** Where it was set: `--no-collector.xdcr`, `CBWATCH_COLLECTOR_XDCR`. */
  readonly source: string;
}

/**
 * The switches in force: a flag (parseArgs records `--[no-]collector.<name>` as the boolean `collector.<name>`,
 * the last one given winning, as kingpin does), else the environment. An environment variable naming no
 * collector, or holding neither true nor false, is a problem naming the variable.
 */
export function collectorSwitches(
  flags: Partial<Flags>,
  env: Readonly<Record<string, string | undefined>>,
  problems: string[],
): Map<CollectorName, CollectorSwitch> {
  const out = new Map<CollectorName, CollectorSwitch>();
  for (const key of Object.keys(env)) {
    if (!key.startsWith(ENV_PREFIX)) continue;
    const name = key.slice(ENV_PREFIX.length).toLowerCase();
    if (!(COLLECTOR_NAMES as readonly string[]).includes(name)) {
      problems.push(`${key}: unknown collector ${JSON.stringify(name)} (collectors: ${COLLECTOR_NAMES.join(', ')})`);
    }
  }
  for (const name of COLLECTOR_NAMES) {
    const flag = flags[`collector.${name}`];
    if (typeof flag === 'boolean') {
      out.set(name, { enabled: flag, source: `--${flag ? '' : 'no-'}collector.${name}` });
      continue;
    }
    const envName = collectorEnvName(name);
    const text = env[envName];
    // Empty counts as unset, as for every other variable.
    if (text === undefined || text === '') continue;
    const t = text.trim().toLowerCase();
    if (['true', '1', 'yes'].includes(t)) out.set(name, { enabled: true, source: envName });
    else if (['false', '0', 'no'].includes(t)) out.set(name, { enabled: false, source: envName });
    else problems.push(`${envName}: expected true or false, got ${JSON.stringify(text)}`);
  }
  return out;
}

/** `collectors` with the switches applied. */
export function applySwitches(collectors: ResolvedCollectors, switches: ReadonlyMap<CollectorName, CollectorSwitch>): ResolvedCollectors {
  if (switches.size === 0) return collectors;
  const out: Record<string, unknown> = { ...collectors };
  for (const [name, s] of switches) out[name] = { ...collectors[name], enabled: s.enabled };
  return out as ResolvedCollectors;
}

/** A `--collector.<name>` flag naming no collector: the message the CLI prints (exit 2). */
export function unknownCollectorFlag(flag: string): ConfigError | undefined {
  const m = /^(no-)?collector\.(.*)$/.exec(flag);
  if (!m) return undefined;
  return new ConfigError(`--${flag}: unknown collector ${JSON.stringify(m[2])} (collectors: ${COLLECTOR_NAMES.join(', ')})`);
}
