/**
 * Command-line parsing: `cbwatch [command] [flags]`. Strict: an unknown flag, a flag given to a command it
 * does not belong to, or a malformed value is a ConfigError naming the flag (the CLI exits 2). The flags are the
 * rows of the settings table (settings.ts) and the collector switches. Flags only record what was given (checked
 * here when their row says so); defaults and the environment are applied by loadConfig(), so that the precedence
 * flags > environment > file is decided in one place.
 */
import { parseArgs as nodeParseArgs } from 'node:util';
import { ConfigError } from '../errors.js';
import { SWITCH_COMMANDS, commandsOf } from './help.js';
import { COLLECTOR_NAMES } from './schema.js';
import { COMMANDS, SETTING_ROWS, takesAnyText } from './settings.js';
import type { Command, Flags } from './settings.js';
import { closest } from './suggest.js';
import { unknownCollectorFlag } from './switches.js';

export { COMMANDS, LOG_FORMATS, LOG_LEVELS } from './settings.js';
export type { Command, Flags, LogFormat, LogLevel } from './settings.js';
export { closest, editDistance } from './suggest.js';
export { flagsHelp, usage } from './help.js';

export interface ParsedArgs {
  readonly command: Command;
  readonly flags: Flags;
}

type OptionSpec = { type: 'string' | 'boolean'; short?: string; commands?: readonly Command[]; metavar?: string };

/** Every flag, from the settings table, with the commands that accept it (undefined: all commands). */
const OPTIONS: Record<string, OptionSpec> = {
  ...Object.fromEntries(
    SETTING_ROWS.flatMap(([, s]) =>
      s.flag === undefined
        ? []
        : [[s.flag, { type: s.type, ...(s.short === undefined ? {} : { short: s.short }), ...(s.commands === undefined ? {} : { commands: s.commands }), ...(s.metavar === undefined ? {} : { metavar: s.metavar }) }]],
    ),
  ),
  ...Object.fromEntries(
    COLLECTOR_NAMES.flatMap((name) => [
      [`collector.${name}`, { type: 'boolean', commands: SWITCH_COMMANDS }],
      [`no-collector.${name}`, { type: 'boolean', commands: SWITCH_COMMANDS }],
    ]),
  ),
};

/** node's parseArgs options: the type and short name only. */
const NODE_OPTIONS = Object.fromEntries(
  Object.entries(OPTIONS).map(([name, o]) => [name, o.short === undefined ? { type: o.type } : { type: o.type, short: o.short }]),
) as Record<string, { type: 'string' | 'boolean'; short?: string }>;

/** Every flag name, without the leading `--`. */
export const FLAG_NAMES: readonly string[] = Object.keys(OPTIONS);

/** The commands that take a flag, as `--help`, the parser's errors and the docs name them; undefined: every command. */
export function flagCommands(name: string): readonly string[] | undefined {
  return commandsOf(name, OPTIONS[name]?.commands);
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

/** A flag's text: empty is refused (a shell variable that expanded to nothing). */
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

  const parse = () => nodeParseArgs({ args: [...argv], options: NODE_OPTIONS, allowPositionals: true, strict: true, tokens: true });
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

  // Each row of the settings table: a boolean as given; a text checked here (`check: 'args'`) or by loadConfig().
  const parsedFlags: Record<string, string | number | boolean | undefined> = {};
  for (const [, s] of SETTING_ROWS) {
    if (s.flag === undefined || s.flag === 'help' || s.flag === 'version') continue;
    if (s.type === 'boolean') {
      parsedFlags[s.flag] = bool(s.flag);
      continue;
    }
    const given = str(s.flag);
    if (given === undefined) continue;
    parsedFlags[s.flag] = s.check === 'load' || takesAnyText(s) ? nonEmpty(s.flag, given) : (s.parse(given, `--${s.flag}`) as string | number);
  }
  parsedFlags['help'] = help || undefined;
  parsedFlags['version'] = version || undefined;
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
    const first = nodeParseArgs({ args: [...argv], options: NODE_OPTIONS, allowPositionals: true, strict: false }).positionals[0];
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
    if (name !== undefined) return new ConfigError(`--${name} needs a value (--${name} ${OPTIONS[name]?.metavar ?? 'VALUE'})`);
    return new ConfigError('a flag is missing its value');
  }
  return new ConfigError(`invalid command line: ${message.split('\n', 1)[0] ?? ''}`);
}
