/**
 * The settings table: one row per setting, with its flag, its environment variable (or why it has none), its
 * default, its parser and bounds, and the text `--help` and docs/configuration.md show. The command-line parser,
 * loadConfig(), `--help` and the generated tables of docs/configuration.md all read these rows, and no default is
 * written anywhere else. The per-cluster file keys with a default and bounds (`clusters[].concurrency`, ...) are
 * rows of CLUSTER_SETTINGS below; schema.ts builds their validation from them.
 *
 * This module imports nothing but the error class and the unit parsers, so that the collection worker and the
 * low layers (scheduler, collectors, metrics) can take their defaults from it without loading the loader.
 */
import { ConfigError } from '../errors.js';
import { formatBytes, formatDuration, parseDuration, parseSize } from './units.js';

export const COMMANDS = ['run', 'check', 'demo', 'simulate', 'healthcheck', 'help', 'version'] as const;
export type Command = (typeof COMMANDS)[number];

export const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];
export const LOG_FORMATS = ['json', 'logfmt', 'pretty'] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

/**
 * What was given on the command line, keyed by the flag's own name (`flags['couchbase.url']`); a flag that
 * was not given is absent, so the environment can still decide. The values of rows checked when the command
 * line is read (`check: 'args'`) are already parsed; the others are the text typed, parsed by loadConfig().
 */
export interface Flags {
  readonly config?: string | undefined;
  readonly 'config.check'?: boolean | undefined;
  readonly 'web.listen-address'?: string | undefined;
  readonly 'web.config.file'?: string | undefined;
  readonly 'web.telemetry-path'?: string | undefined;
  readonly 'web.enable-lifecycle'?: boolean | undefined;
  readonly 'web.max-requests'?: number | undefined;
  readonly 'couchbase.max-buffered-bytes'?: string | undefined;
  readonly 'couchbase.max-answer-values'?: string | undefined;
  readonly 'collection.gc-every'?: string | undefined;
  readonly 'collection.inline'?: boolean | undefined;
  readonly 'debug.heap-snapshot-dir'?: string | undefined;
  readonly 'log.level'?: LogLevel | undefined;
  readonly 'log.format'?: LogFormat | undefined;
  readonly 'couchbase.url'?: string | undefined;
  readonly 'couchbase.username'?: string | undefined;
  readonly 'couchbase.cluster-name'?: string | undefined;
  readonly 'couchbase.password-file'?: string | undefined;
  readonly 'couchbase.ca-file'?: string | undefined;
  readonly 'couchbase.insecure-skip-verify'?: boolean | undefined;
  readonly shard?: string | undefined;
  readonly 'with-prometheus'?: boolean | undefined;
  readonly scenario?: string | undefined;
  readonly host?: string | undefined;
  readonly port?: number | undefined;
  readonly 'prometheus.port'?: number | undefined;
  readonly 'alertmanager.port'?: number | undefined;
  readonly buckets?: number | undefined;
  readonly nodes?: number | undefined;
  readonly latency?: number | undefined;
  readonly replications?: number | undefined;
  readonly speed?: number | undefined;
  readonly 'stat-set'?: 'fixture' | 'full' | undefined;
  readonly 'server-version'?: string | undefined;
  readonly help?: boolean | undefined;
  readonly version?: boolean | undefined;
  /** Lets callers index by a flag name held in a variable. */
  readonly [flag: string]: string | number | boolean | undefined;
}

// --- defaults of the process-wide settings -------------------------------------------------------------------

export const DEFAULT_LISTEN_ADDRESS = ':9420';
export const DEFAULT_TELEMETRY_PATH = '/metrics';
/** As node_exporter's --web.max-requests. */
export const DEFAULT_MAX_REQUESTS = 40;
/** Couchbase answers buffered at once, process-wide. */
export const DEFAULT_MAX_BUFFERED_BYTES = 256 * 1024 * 1024;
/** JSON values in one answer; src/couchbase/answer-values.ts has the same figure (a test checks they agree). */
export const DEFAULT_MAX_ANSWER_VALUES = 4_000_000;
/** Bytes of answers read between two collections of the collection thread's heap. */
export const DEFAULT_GC_EVERY_BYTES = 8 * 1024 * 1024;
export const DEFAULT_LOG_LEVEL: LogLevel = 'info';
export const DEFAULT_LOG_FORMAT: LogFormat = 'json';

/** The largest byte setting (a file's sizes, --couchbase.max-buffered-bytes, --collection.gc-every): beyond it a limit is no limit. */
export const MAX_BYTES_SETTING = 64 * 1024 ** 3;
/** Longest `--web.telemetry-path`: a longer one made every request's headers too large to answer. */
export const MAX_TELEMETRY_PATH_LENGTH = 256;
/** Below this even a small cluster's bucket list would fail. */
export const MIN_ANSWER_VALUES = 10_000;
/** Paths the server answers besides the metrics (the webhook routes are under /webhooks/). */
const RESERVED_PATHS = ['/', '/-/healthy', '/-/ready', '/-/reload'];

// --- parsers: each throws a ConfigError naming `source` (the flag or the variable) ----------------------------

/** `:9420` (host '': every interface, IPv6 and IPv4, see src/server/listen.ts), `0.0.0.0:9420` (IPv4 only), `localhost:9420`, `[::1]:9420`, `[::]:9420`. */
export function parseListenAddress(text: string, source = '--web.listen-address'): { host: string; port: number } {
  const t = text.trim();
  const m = /^\[([0-9A-Fa-f:.%\w]+)\]:(\d{1,5})$/.exec(t) ?? /^([^:[\]\s]*):(\d{1,5})$/.exec(t);
  if (!m) {
    const hint = (t.match(/:/g) ?? []).length > 1 ? ' (put an IPv6 address in brackets: [::1]:9420)' : '';
    throw new ConfigError(`${source}: ${JSON.stringify(text)} is not HOST:PORT, e.g. :9420, 0.0.0.0:9420 or [::1]:9420${hint}`);
  }
  const port = Number(m[2]);
  if (port > 65535) throw new ConfigError(`${source}: port ${port} is out of range (0..65535)`);
  return { host: m[1] as string, port };
}

/** `--web.telemetry-path`: an absolute URL path of plain characters that no other route uses. */
export function parseTelemetryPath(text: string, source = '--web.telemetry-path'): string {
  if (text.length > MAX_TELEMETRY_PATH_LENGTH) {
    throw new ConfigError(`${source}: a path of ${text.length} characters is longer than ${MAX_TELEMETRY_PATH_LENGTH}`);
  }
  // Letters, digits and . _ ~ - between slashes: fastify reads `:` and `*` in a route as parameters.
  if (!/^(?:\/[A-Za-z0-9._~-]+)+$/.test(text)) {
    throw new ConfigError(`${source}: ${JSON.stringify(text)} is not a URL path such as /metrics (a leading /, then letters, digits, . _ ~ - and / between them)`);
  }
  // `.` and `..` segments are resolved away by clients and proxies (RFC 3986 5.2.4): such a path is never asked for as written.
  if (text.split('/').some((seg) => seg === '.' || seg === '..')) {
    throw new ConfigError(`${source}: ${JSON.stringify(text)} has a "." or ".." segment, which clients resolve away; give the path as it is asked for, such as /metrics`);
  }
  if (RESERVED_PATHS.includes(text) || text === '/webhooks' || text.startsWith('/webhooks/')) {
    throw new ConfigError(`${source}: ${JSON.stringify(text)} is already used by cbwatch (${RESERVED_PATHS.join(', ')}, /webhooks/)`);
  }
  return text;
}

/** `i/n` with 0 <= i < n. */
export function parseShard(text: string, source = '--shard'): { index: number; total: number } {
  const m = /^(\d+)\/(\d+)$/.exec(text.trim());
  const index = Number(m?.[1]);
  const total = Number(m?.[2]);
  if (!m || total < 1 || index >= total) {
    throw new ConfigError(`${source}: ${JSON.stringify(text)} is not a shard I/N with 0 <= I < N (e.g. 0/3)`);
  }
  return { index, total };
}

/** `true`/`false`, also `1`/`0` and `yes`/`no`. */
export function parseBool(text: string, source: string): boolean {
  const t = text.trim().toLowerCase();
  if (['true', '1', 'yes'].includes(t)) return true;
  if (['false', '0', 'no'].includes(t)) return false;
  throw new ConfigError(`${source}: expected true or false, got ${JSON.stringify(text)}`);
}

function wholeNumber(min: number, max: number) {
  return (text: string, source: string): number => {
    if (!/^\d+$/.test(text.trim())) throw new ConfigError(`${source}: expected a whole number, got ${JSON.stringify(text)}`);
    const n = Number(text);
    if (n < min || n > max) throw new ConfigError(`${source}: ${n} is out of range (${min}..${max})`);
    return n;
  };
}

function oneOf<T extends string>(allowed: readonly T[], fold: boolean) {
  return (text: string, source: string): T => {
    const v = fold ? text.trim().toLowerCase() : text;
    if (!(allowed as readonly string[]).includes(v)) throw new ConfigError(`${source}: ${JSON.stringify(text)} is not one of ${allowed.join(', ')}`);
    return v as T;
  };
}

/** Bytes written as a whole number or a size (`256MiB`); undefined when it is neither. */
function bytes(text: string): number | undefined {
  const t = text.trim();
  const n = /^\d+$/.test(t) ? Number(t) : parseSize(t);
  return n === undefined || !Number.isSafeInteger(n) ? undefined : n;
}

function text(value: string): string {
  return value;
}

/** Whether a row takes any text as it is (a name, a path), so that only an empty one is refused. */
export function takesAnyText(s: Setting): boolean {
  return s.parse === text;
}

// --- the table -----------------------------------------------------------------------------------------------

export interface Setting<T = unknown> {
  /** The flag without its leading `--`; absent for a setting only the environment gives. */
  readonly flag?: string;
  /** Why the setting has no flag. */
  readonly noFlag?: string;
  readonly env?: string;
  /** Why the setting has no environment variable. */
  readonly noEnv?: string;
  /** How node's parseArgs reads the flag. */
  readonly type: 'string' | 'boolean';
  readonly short?: string;
  /** The commands that take the flag (`run` also means `healthcheck`); absent: every command. */
  readonly commands?: readonly Command[];
  /** The value's name in `--help` and the docs: `FILE`, `N`. */
  readonly metavar?: string;
  readonly default?: T;
  /** The default as `--help` and the docs write it; derived from `default` unless given. */
  readonly defaultText?: string;
  /** Said after the default in the docs' default column: `(demo: 127.0.0.1:9420)`. */
  readonly defaultNote?: string;
  /** `args`: the command-line parser checks the flag's value (the flag holds the parsed value); `load`: loadConfig() does. */
  readonly check: 'args' | 'load';
  /** Text (a flag's value or an environment variable's) to value; throws a ConfigError naming `source`. */
  readonly parse: (text: string, source: string) => T;
  /** `--help`'s line; `{default}` stands for the default. */
  readonly help: string;
  /** docs/configuration.md's meaning column; `help` when absent. */
  readonly doc?: string;
  /** docs/configuration.md's note in the environment table. */
  readonly envNote?: string;
}

function row<T>(s: Setting<T>): Setting<T> {
  return s;
}

const RUN_CHECK_DEMO = ['run', 'check', 'demo'] as const;
const ONE_OFF = 'a flag of a one-off command, typed for that run';

/** Every setting, in the order `--help` and the docs list them. The collector switches follow them (see switches.ts). */
export const SETTINGS = {
  config: row({
    flag: 'config', env: 'CBWATCH_CONFIG', type: 'string', commands: ['run', 'check'], metavar: 'FILE', check: 'load', parse: text,
    help: 'configuration file (YAML)', doc: 'the YAML configuration file',
  }),
  'config.check': row<boolean>({
    flag: 'config.check', noEnv: 'an action, not a setting: a variable left in a service\'s environment would make every start a check', type: 'boolean', commands: ['run'], check: 'args', parse: parseBool,
    help: 'validate the configuration, print a summary and exit (0 valid, 2 invalid)', doc: 'validate the configuration, print the summary above, exit 0 (valid) or 2',
  }),
  'web.listen-address': row({
    flag: 'web.listen-address', env: 'CBWATCH_WEB_LISTEN_ADDRESS', type: 'string', commands: ['run', 'demo'], metavar: 'HOST:PORT', check: 'load', parse: parseListenAddress,
    default: parseListenAddress(DEFAULT_LISTEN_ADDRESS), defaultText: DEFAULT_LISTEN_ADDRESS, defaultNote: '(`demo`: `127.0.0.1:9420`)',
    help: 'address to serve /metrics on (default {default}; demo: 127.0.0.1:9420)',
    doc: 'where to serve `/metrics`, `/-/healthy`, `/-/ready`, `/` (see [Listen address](#listen-address))',
  }),
  'web.config.file': row({
    flag: 'web.config.file', env: 'CBWATCH_WEB_CONFIG_FILE', type: 'string', commands: ['run', 'demo'], metavar: 'FILE', check: 'load', parse: text,
    help: 'TLS and basic auth (Prometheus exporter-toolkit format)',
    doc: "TLS and basic auth for cbwatch's own server ([Web config file](#web-config-file-tls-and-basic-auth))",
  }),
  'web.telemetry-path': row({
    flag: 'web.telemetry-path', env: 'CBWATCH_WEB_TELEMETRY_PATH', type: 'string', commands: ['run', 'demo'], metavar: 'PATH', check: 'load', parse: parseTelemetryPath,
    default: DEFAULT_TELEMETRY_PATH,
    help: 'path under which to expose metrics (default {default}; /metrics then answers 404)',
    doc: "the path that serves the metrics (as node_exporter's flag): a `/`, then letters, digits, `.` `_` `~` `-` and `/` between them; `/`, `/-/…` and `/webhooks/…` are taken. Once changed, `/metrics` answers 404 and the landing page links to the new path; `/-/healthy` (and so `cbwatch healthcheck`) and `/-/ready` stay where they are. Point Prometheus' `metrics_path` at it. At most 256 characters, no `.` or `..` segment",
  }),
  'web.enable-lifecycle': row<boolean>({
    flag: 'web.enable-lifecycle', noEnv: 'it opens an endpoint that changes the running process: it stays on the command line, where the unit or manifest shows it (as in Prometheus)',
    type: 'boolean', commands: ['run'], check: 'args', parse: parseBool, default: false, defaultText: 'off',
    help: 'serve POST /-/reload, which reloads the configuration as SIGHUP does (off by default)',
    doc: "serve `POST /-/reload`, which reloads the configuration as SIGHUP does (as Prometheus' flag); without it `/-/reload` is 404. See [Reloading](#reloading)",
  }),
  'web.max-requests': row({
    flag: 'web.max-requests', env: 'CBWATCH_WEB_MAX_REQUESTS', type: 'string', commands: ['run', 'demo'], metavar: 'N', check: 'args', parse: wholeNumber(0, 1_000_000),
    default: DEFAULT_MAX_REQUESTS,
    help: 'HTTP requests served at once; beyond it, 503 (default {default}, 0 = no limit)',
    doc: "HTTP requests served at once (as node_exporter's flag); a request beyond it gets 503 at once. A request counts once it is authenticated, with no body left to arrive: clients waiting for a password check or trickling a body hold no slot. `0`: no limit, at most `1000000`. See [security](security.md)",
  }),
  'couchbase.max-buffered-bytes': row({
    flag: 'couchbase.max-buffered-bytes', env: 'CBWATCH_COUCHBASE_MAX_BUFFERED_BYTES', type: 'string', commands: RUN_CHECK_DEMO, metavar: 'SIZE', check: 'load',
    parse: (t, source) => {
      const n = bytes(t);
      if (n === undefined || n < 1024 * 1024 || n > MAX_BYTES_SETTING) throw new ConfigError(`${source}: expected a size from 1MiB to 64GiB such as 256MiB, got ${JSON.stringify(t)}`);
      return n;
    },
    default: DEFAULT_MAX_BUFFERED_BYTES, defaultText: formatBytes(DEFAULT_MAX_BUFFERED_BYTES),
    help: 'process-wide budget for answers being read or parsed; an answer beyond it fails (default {default})',
    doc: 'process-wide budget for Couchbase answers being read or parsed, over all clusters (each answer counts about twice its size: bytes and text). An answer that would pass it fails with `CBW_ERR_BUDGET` (`code="over_budget"` in `cbwatch_couchbase_requests_total`) and its collector reports failure; from `1MiB` to `64GiB`',
  }),
  'couchbase.max-answer-values': row({
    flag: 'couchbase.max-answer-values', env: 'CBWATCH_COUCHBASE_MAX_ANSWER_VALUES', type: 'string', commands: RUN_CHECK_DEMO, metavar: 'N', check: 'load',
    parse: (t, source) => {
      const n = /^\d+$/.test(t.trim()) ? Number(t.trim()) : NaN;
      if (!Number.isSafeInteger(n) || n < MIN_ANSWER_VALUES) throw new ConfigError(`${source}: expected a whole number of at least ${MIN_ANSWER_VALUES} such as ${DEFAULT_MAX_ANSWER_VALUES}, got ${JSON.stringify(t)}`);
      return n;
    },
    default: DEFAULT_MAX_ANSWER_VALUES,
    help: 'JSON values one answer may hold (its [ { and , characters, counted as it arrives); beyond it, too_large (default {default})',
    doc: 'JSON values one Couchbase answer may hold, counted as its `[`, `{` and `,` bytes while it arrives (bytes are not objects: 60 MB of `[],[],…` would parse into 20 million arrays). Past it the read stops, nothing is parsed, and the request fails with `CBW_ERR_TOO_LARGE` (`code="too_large"`; an item\'s failure counts in `cbwatch_collector_item_errors_total{reason="too_large"}`). The bucket list of 1,000 buckets on 4 nodes holds about 330,000; at least `10000`. See [security](security.md)',
  }),
  'collection.gc-every': row({
    flag: 'collection.gc-every', env: 'CBWATCH_COLLECTION_GC_EVERY', type: 'string', commands: ['run', 'demo'], metavar: 'SIZE', check: 'load',
    parse: (t, source) => {
      const n = bytes(t);
      // 0 turns it off; below 1 MiB a collection would run every few answers.
      if (n === undefined || (n !== 0 && n < 1024 * 1024) || n > MAX_BYTES_SETTING) throw new ConfigError(`${source}: expected 0 (off) or a size from 1MiB to 64GiB such as 8MiB, got ${JSON.stringify(t)}`);
      return n;
    },
    default: DEFAULT_GC_EVERY_BYTES, defaultText: formatBytes(DEFAULT_GC_EVERY_BYTES),
    help: "collect the collection thread's heap every SIZE of Couchbase answers read: less memory where answers are large, for more CPU (default {default}; 0: V8 decides)",
    doc: "collect the collection thread's heap every SIZE of Couchbase answers read since its last collection, rather than when V8 decides: an answer's text larger than V8's young generation is freed only by a full collection, and at 1,000 buckets the answers of one poll (35–40 MB) built up to a peak over 300 MB. A burst of polls that reads less than SIZE (the realistic scenario reads 3–7 MB per 30 s) asks for none during the burst; its end has one of its own. Smaller: less memory for more CPU; `0`: V8 decides within a burst. [bench/RESULTS.md](../bench/RESULTS.md) (\"Footprint, tenth round\", scale curve, fleet) has the figures. It needs node's `--expose-gc`, which the launcher passes; without it a size set here logs a warning and does nothing. `0`, or from `1MiB` to `64GiB`",
  }),
  'collection.inline': row<boolean>({
    flag: 'collection.inline', env: 'CBWATCH_COLLECTION_INLINE', type: 'boolean', commands: ['run', 'demo'], check: 'load', parse: parseBool,
    default: false, defaultText: 'off',
    help: 'poll on the thread that serves HTTP (one V8 isolate): less memory, for more CPU and slower scrapes during polls (default off)',
    doc: "poll and read Couchbase's answers on the thread that serves HTTP, in one V8 isolate, instead of in a worker thread of its own. The process then holds less memory (a second isolate has its own heap, young generation and copy of the modules), but a scrape that arrives during a poll waits for what runs on the thread: an answer's read (answers are read one at a time, and a range answer gives the event loop a turn between two of its queries once it has run 4 ms) and above all the full collections of the one heap that follow the answers (`--collection.gc-every`), which pause both. Meant for a process watching one small cluster under a tight memory limit; [bench/RESULTS.md](../bench/RESULTS.md) (section \"memory\") has the A/B of the two: memory, CPU and scrape latency",
  }),
  'debug.heap-snapshot-dir': row({
    flag: 'debug.heap-snapshot-dir', env: 'CBWATCH_DEBUG_HEAP_SNAPSHOT_DIR', type: 'string', commands: ['run'], metavar: 'DIR', check: 'load', parse: text,
    defaultText: 'off',
    help: 'on SIGUSR2, write a heap snapshot of each thread (HTTP and collection) into DIR (default off)',
    doc: "on `SIGUSR2`, write a V8 heap snapshot of each of the daemon's threads into `DIR`: `cbwatch-<time>-<pid>-collection.heapsnapshot` (the collection worker) and `cbwatch-<time>-<pid>-http.heapsnapshot` (the thread that serves HTTP), or with `--collection.inline` one, `cbwatch-<time>-<pid>-daemon.heapsnapshot`; files only the daemon's user may read. A snapshot holds everything in memory, the Couchbase password included: keep `DIR` private. Each thread stops while its snapshot is taken (a scrape waits for the snapshot of the thread that serves it), and taking one needs memory of about its heap's size again. Off unless set: a `SIGUSR2` is then logged and ignored. `DIR` must be an existing directory. See [Where the memory goes](memory.md)",
  }),
  'log.level': row<LogLevel>({
    flag: 'log.level', env: 'CBWATCH_LOG_LEVEL', type: 'string', commands: ['run', 'check', 'demo', 'simulate'], metavar: 'LEVEL', check: 'args', parse: oneOf(LOG_LEVELS, true),
    default: DEFAULT_LOG_LEVEL, defaultNote: '(`check`: `error` unless the flag is given)',
    help: `one of ${LOG_LEVELS.join(', ')} (default {default})`, doc: LOG_LEVELS.map((l) => `\`${l}\``).join(', '),
  }),
  'log.format': row<LogFormat>({
    flag: 'log.format', env: 'CBWATCH_LOG_FORMAT', type: 'string', commands: ['run', 'check', 'demo', 'simulate'], metavar: 'FORMAT', check: 'args', parse: oneOf(LOG_FORMATS, true),
    default: DEFAULT_LOG_FORMAT, defaultNote: '(`demo`: `logfmt` unless the flag or `CBWATCH_LOG_FORMAT` is given)',
    help: `one of ${LOG_FORMATS.join(', ')} (default {default}; demo: logfmt)`,
    doc: '`json` (one object per line), `logfmt`, `pretty` (for a terminal). In `logfmt` and `pretty` a nested field is dotted keys, an error `err.message` and `err.code`, its stack (`err.stack`) only at `debug` and below',
  }),
  shard: row({
    flag: 'shard', env: 'CBWATCH_SHARD', type: 'string', commands: ['run', 'check'], metavar: 'I/N', check: 'load', parse: parseShard,
    help: 'watch only the clusters whose name hashes to shard I of N (0-based), to split many clusters over replicas',
    doc: 'watch only the clusters whose name hashes (FNV-1a) to shard `I` of `N`, 0-based: run `N` replicas with the same file, each with its own `I`, to split many clusters. A replica whose shard holds no cluster still runs and serves cbwatch\'s own metrics (a warning says so); `check` on it prints that and exits 0',
  }),
  'couchbase.url': row({
    flag: 'couchbase.url', env: 'CBWATCH_COUCHBASE_URL', type: 'string', commands: ['run', 'check'], metavar: 'URL', check: 'load', parse: text,
    help: 'single-cluster shortcut: management URL, e.g. https://cb1:18091',
    doc: 'single-cluster shortcut: the management URL (`http://host:8091` or `https://host:18091`)',
  }),
  'couchbase.username': row({
    flag: 'couchbase.username', env: 'CBWATCH_COUCHBASE_USERNAME', type: 'string', commands: ['run', 'check'], metavar: 'NAME', check: 'load', parse: text,
    help: 'user name (the password comes from CBWATCH_COUCHBASE_PASSWORD or --couchbase.password-file)', doc: 'the user cbwatch authenticates as',
  }),
  'couchbase.password': row({
    noFlag: 'a command line is visible to every user of the machine and lands in shell history', env: 'CBWATCH_COUCHBASE_PASSWORD', type: 'string', check: 'load', parse: text,
    help: 'the password', doc: 'the password', envNote: 'the only way to give the password as a value',
  }),
  'couchbase.password-file': row({
    flag: 'couchbase.password-file', env: 'CBWATCH_COUCHBASE_PASSWORD_FILE', type: 'string', commands: ['run', 'check'], metavar: 'FILE', check: 'load', parse: text,
    help: 'file holding the password (trailing newline ignored)',
    doc: 'a file holding the password (trailing newline ignored); one that other users may read makes `run` log a warning at start',
    envNote: 'for Docker/Kubernetes secrets mounted as files; setting it together with `CBWATCH_COUCHBASE_PASSWORD` is an error',
  }),
  'couchbase.cluster-name': row({
    flag: 'couchbase.cluster-name', env: 'CBWATCH_COUCHBASE_CLUSTER_NAME', type: 'string', commands: ['run', 'check'], metavar: 'NAME', check: 'load', parse: text,
    defaultText: "the URL's host",
    help: 'value of the couchbase_cluster label (default: the URL host)', doc: 'the `couchbase_cluster` label value',
  }),
  'couchbase.ca-file': row({
    flag: 'couchbase.ca-file', env: 'CBWATCH_COUCHBASE_CA_FILE', type: 'string', commands: ['run', 'check'], metavar: 'FILE', check: 'load', parse: text,
    defaultText: 'system CAs',
    help: 'CA bundle (PEM) that signed the cluster certificate', doc: "PEM bundle of the CA(s) that signed the cluster's certificate",
  }),
  'couchbase.insecure-skip-verify': row<boolean>({
    flag: 'couchbase.insecure-skip-verify', env: 'CBWATCH_COUCHBASE_INSECURE_SKIP_VERIFY', type: 'boolean', commands: ['run', 'check'], check: 'load', parse: parseBool,
    default: false, defaultText: 'off',
    help: 'do not verify the cluster TLS certificate (testing only)', doc: "do not verify the cluster's TLS certificate — testing only",
    envNote: '`true`/`false` (also `1`/`0`, `yes`/`no`)',
  }),
  'with-prometheus': row<boolean>({
    flag: 'with-prometheus', noEnv: ONE_OFF, type: 'boolean', commands: ['demo'], check: 'args', parse: parseBool, default: false, defaultText: 'off',
    help: 'also start Prometheus and Alertmanager (from the system packages) with the shipped rules, scraping the demo',
    doc: 'also start Prometheus and Alertmanager from the system packages',
  }),
  scenario: row({
    flag: 'scenario', noEnv: ONE_OFF, type: 'string', commands: ['demo', 'simulate'], metavar: 'NAME', check: 'args', parse: text, defaultText: 'demo', defaultNote: '(`simulate`: `default`)',
    help: 'simulator scenario: default, demo, incident',
    doc: 'simulator scenario: `default` (calm), `demo` (a few visible problems), `incident`',
  }),
  host: row({
    flag: 'host', noEnv: ONE_OFF, type: 'string', commands: ['simulate'], metavar: 'HOST', check: 'args', parse: text, defaultText: '127.0.0.1',
    help: 'simulator listen address (default {default})', doc: 'simulator listen address',
  }),
  port: row({
    flag: 'port', noEnv: ONE_OFF, type: 'string', commands: ['simulate', 'demo'], metavar: 'PORT', check: 'args', parse: wholeNumber(0, 65535), defaultText: '8091', defaultNote: '(`demo`: any free port)',
    help: 'simulator port (simulate: default {default}; demo: default any free port; 0 = any free port)', doc: 'simulator port (`0`: any free port)',
  }),
  'prometheus.port': row({
    flag: 'prometheus.port', noEnv: ONE_OFF, type: 'string', commands: ['demo'], metavar: 'PORT', check: 'args', parse: wholeNumber(0, 65535), defaultText: 'any free port',
    help: 'with --with-prometheus: the port of Prometheus on 127.0.0.1 (default {default})', doc: "with `--with-prometheus`: Prometheus' port on 127.0.0.1",
  }),
  'alertmanager.port': row({
    flag: 'alertmanager.port', noEnv: ONE_OFF, type: 'string', commands: ['demo'], metavar: 'PORT', check: 'args', parse: wholeNumber(0, 65535), defaultText: 'any free port',
    help: 'with --with-prometheus: the port of Alertmanager on 127.0.0.1 (default {default})', doc: "with `--with-prometheus`: Alertmanager's port on 127.0.0.1",
  }),
  buckets: row({
    flag: 'buckets', noEnv: ONE_OFF, type: 'string', commands: ['demo', 'simulate'], metavar: 'N', check: 'args', parse: wholeNumber(0, 10_000), defaultText: "simulator's",
    help: 'number of simulated buckets', doc: 'number of simulated buckets (at most 10000)',
  }),
  nodes: row({
    flag: 'nodes', noEnv: ONE_OFF, type: 'string', commands: ['demo', 'simulate'], metavar: 'N', check: 'args', parse: wholeNumber(1, 1000), defaultText: "simulator's",
    help: 'number of simulated nodes', doc: 'number of simulated nodes (1 to 1000)',
  }),
  latency: row({
    flag: 'latency', noEnv: ONE_OFF, type: 'string', commands: ['demo', 'simulate'], metavar: 'MS', check: 'args', defaultText: '0',
    parse: (t, source) => {
      const v = t.trim();
      const ms = /^\d+(?:\.\d+)?$/.test(v) ? Number(v) : parseDuration(v);
      if (ms === undefined) throw new ConfigError(`${source}: expected milliseconds or a duration such as 5ms, got ${JSON.stringify(t)}`);
      return ms;
    },
    help: 'added latency per request: milliseconds or a duration (5ms, 0.2s)',
    doc: 'added latency per simulated request: milliseconds (`5`) or a duration (`5ms`, `0.2s`)',
  }),
  replications: row({
    flag: 'replications', noEnv: ONE_OFF, type: 'string', commands: ['demo', 'simulate'], metavar: 'N', check: 'args', parse: wholeNumber(0, 10_000), defaultText: "simulator's",
    help: 'number of simulated XDCR replications', doc: 'number of simulated XDCR replications (at most 10000)',
  }),
  speed: row({
    flag: 'speed', noEnv: ONE_OFF, type: 'string', commands: ['demo', 'simulate'], metavar: 'X', check: 'args', defaultText: '1',
    parse: (t, source) => {
      const n = Number(t);
      if (t.trim() === '' || !Number.isFinite(n) || n <= 0) throw new ConfigError(`${source}: expected a positive number, got ${JSON.stringify(t)}`);
      return n;
    },
    help: 'simulator clock speed (1 = real time)', doc: 'simulated seconds per real second',
  }),
  'stat-set': row({
    flag: 'stat-set', noEnv: ONE_OFF, type: 'string', commands: ['demo', 'simulate'], metavar: 'SET', check: 'args', parse: oneOf(['fixture', 'full'] as const, false), defaultText: 'fixture',
    help: 'simulated bucket stats: fixture (the real sample) or full (every documented stat)',
    doc: "simulated bucket stats: `fixture` (a real sample's names) or `full` (every documented stat)",
  }),
  'server-version': row({
    flag: 'server-version', noEnv: ONE_OFF, type: 'string', commands: ['demo', 'simulate'], metavar: 'X.Y.Z', check: 'args', defaultText: '7.6.5',
    parse: (t, source) => {
      if (!/^\d+\.\d+\.\d+$/.test(t.trim())) throw new ConfigError(`${source}: expected a version such as 7.6.5, got ${JSON.stringify(t)}`);
      return t.trim();
    },
    help: 'simulated Couchbase Server version: 6.6.5, 7.2.4, 7.6.5 (default), 8.0.0; 7.0+ answers the stats range API',
    doc: "simulated Couchbase Server version (`6.6.5`, `7.2.4`, `7.6.5`, `8.0.0`); 7.0+ also answers the statistics range API and serves each node's native `/metrics` ([simulator.md](simulator.md))",
  }),
  help: row<boolean>({
    flag: 'help', noEnv: 'an action, not a setting', type: 'boolean', short: 'h', check: 'args', parse: parseBool,
    help: 'show this help', doc: 'print the usage (`cbwatch rules --help`: that of `rules`) and exit 0',
  }),
  version: row<boolean>({
    flag: 'version', noEnv: 'an action, not a setting', type: 'boolean', check: 'args', parse: parseBool,
    help: 'print the version', doc: 'print the version, branch, revision and build date and exit 0',
  }),
} as const satisfies Record<string, Setting<unknown>>;

export type SettingName = keyof typeof SETTINGS;
/** The value a setting's parser returns. */
export type SettingValue<K extends SettingName> = ReturnType<(typeof SETTINGS)[K]['parse']>;

/** The rows in table order, for the loops. */
export const SETTING_ROWS: ReadonlyArray<readonly [SettingName, Setting]> = Object.entries(SETTINGS) as Array<[SettingName, Setting]>;

/**
 * Variables cbwatch reads that set no row above: the collector switches (one per collector, see switches.ts) and
 * the build revision (src/metrics/build.ts).
 */
export const OTHER_ENV_VARS = {
  'CBWATCH_COLLECTOR_<NAME>': {
    sameAs: '`--collector.<name>`, `--no-collector.<name>`',
    note: '`true`/`false` (also `1`/`0`, `yes`/`no`): enable or disable a collector for every cluster, e.g. `CBWATCH_COLLECTOR_XDCR=false`; see [Switching collectors](#switching-collectors)',
  },
  CBWATCH_REVISION: {
    sameAs: '—',
    note: 'overrides the `revision` of `cbwatch_build_info` and `--version` (the commit that runs); the Docker image sets it from its `REVISION` build argument. Unset: the commit recorded at build time (`CBWATCH_REVISION` in the build\'s environment, else `git rev-parse HEAD`), else `unknown`',
  },
} as const;

/** A row's default as `--help` and the docs write it. */
export function defaultText(s: Setting): string | undefined {
  if (s.defaultText !== undefined) return s.defaultText;
  if (s.default === undefined) return undefined;
  return typeof s.default === 'object' ? undefined : String(s.default);
}

// --- per-cluster file keys with a default and bounds --------------------------------------------------------------

export interface ClusterSetting {
  readonly kind: 'integer' | 'duration' | 'size';
  /** Integers: the bounds; durations: the minimum, ms; sizes: none beyond MAX_BYTES_SETTING. */
  readonly min?: number;
  readonly max?: number;
  readonly default: number;
}

/**
 * `clusters[].<key>`. None has a flag or a variable: they are per cluster, so they live in the file (the
 * `--couchbase.*` shortcut names only what a single cluster needs to be reached).
 */
export const CLUSTER_SETTINGS = {
  concurrency: { kind: 'integer', min: 1, max: 256, default: 8 },
  connect_timeout: { kind: 'duration', min: 100, default: 5000 },
  request_timeout: { kind: 'duration', min: 100, default: 10_000 },
  max_response_bytes: { kind: 'size', default: 64 * 1024 * 1024 },
  probe_interval: { kind: 'duration', min: 1000, default: 15_000 },
  max_dynamic_families: { kind: 'integer', min: 0, max: 1_000_000, default: 5000 },
  max_label_value_length: { kind: 'integer', min: 64, max: 1_048_576, default: 1024 },
} as const satisfies Record<string, ClusterSetting>;
export type ClusterSettingKey = keyof typeof CLUSTER_SETTINGS;

/** The type and default cells of a cluster key's row in docs/configuration.md. */
export function clusterSettingCells(s: ClusterSetting): { type: string; default: string } {
  const n = (x: number): string => x.toLocaleString('en-US');
  const type =
    s.kind === 'integer' ? `integer ${n(s.min ?? 0)}–${n(s.max ?? 0)}` : s.kind === 'duration' ? `duration ≥ ${formatDuration(s.min ?? 0)}` : 'size';
  const def = s.kind === 'integer' ? String(s.default) : s.kind === 'duration' ? formatDuration(s.default) : formatBytes(s.default);
  return { type, default: `\`${def}\`` };
}
