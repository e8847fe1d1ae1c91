/**
 * loadConfig(): the YAML file, the environment and the flags, merged once with the precedence
 * flags > environment > file, validated, secrets read, collector defaults applied. Every problem is a
 * ConfigError whose lines name where it is (file:line:col, a flag or an environment variable), the key path
 * and why; the CLI prints it and exits 2. Secret values never appear in a message.
 *
 * The single-cluster shortcut (`--couchbase.*` flags and `CBWATCH_COUCHBASE_*` variables):
 * - without a file, or with a file that lists no clusters, `--couchbase.url` defines the one cluster;
 * - with a file that lists clusters, giving a URL as well is an error (which cluster would it replace?);
 * - the other shortcut settings (name, username, password, CA file, skip-verify) override the file's values
 *   when the file lists exactly one cluster, and are an error when it lists several.
 */
import { accessSync, constants as fsConstants, readFileSync } from 'node:fs';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { ConfigError } from '../errors.js';
import { CronSpec, formatSlot } from '../cron.js';
import { processRedactor } from '../redact.js';
import { CLUSTERS_PER_PROCESS, DEFAULT_MAX_ANSWER_VALUES, DEFAULT_MAX_BUFFERED_BYTES, resolveCollectors } from './defaults.js';
import { registerConfigSecrets } from './secrets.js';
import { applySwitches, collectorSwitches } from './switches.js';

export { DEFAULT_MAX_ANSWER_VALUES, DEFAULT_MAX_BUFFERED_BYTES } from './defaults.js';
export { registerConfigSecrets } from './secrets.js';
import type { Flags, LogFormat, LogLevel } from './flags.js';
import { LOG_FORMATS, LOG_LEVELS } from './flags.js';
import { CLUSTER_NAME, COLLECTOR_NAMES, MAX_BYTES_SETTING, MAX_CLUSTER_NAME_LENGTH, clusterSchema, fileSchema } from './schema.js';
import type { ClusterFileConfig, FileConfig } from './schema.js';
import type { ClusterConfig, Config, SyncGatewayWebhookConfig } from './types.js';
import { formatDuration, parseSize } from './units.js';
import { loadWebConfig } from './webconfig.js';
import type { WebSettings } from './webconfig.js';
import { formatPath, issueLines, linesToConfigError, parseYamlFile } from './yamlfile.js';
import type { PathSegment, Position } from './yamlfile.js';
import { GC_EVERY_DEFAULT_BYTES } from '../collection/release.js';

/** Every environment variable cbwatch reads, with what it sets. */
export const ENV_VARS = {
  CBWATCH_CONFIG: 'configuration file (as --config)',
  CBWATCH_COUCHBASE_URL: 'single-cluster shortcut: management URL (as --couchbase.url)',
  CBWATCH_COUCHBASE_USERNAME: 'user name (as --couchbase.username)',
  CBWATCH_COUCHBASE_PASSWORD: 'password (there is no flag for it)',
  CBWATCH_COUCHBASE_PASSWORD_FILE: 'file holding the password (as --couchbase.password-file)',
  CBWATCH_COUCHBASE_CLUSTER_NAME: 'couchbase_cluster label value (as --couchbase.cluster-name)',
  CBWATCH_COUCHBASE_CA_FILE: 'CA bundle for the cluster certificate (as --couchbase.ca-file)',
  CBWATCH_COUCHBASE_INSECURE_SKIP_VERIFY: 'true/false (as --couchbase.insecure-skip-verify)',
  CBWATCH_WEB_LISTEN_ADDRESS: 'HOST:PORT to serve on (as --web.listen-address)',
  CBWATCH_WEB_CONFIG_FILE: 'TLS and basic auth file (as --web.config.file)',
  CBWATCH_WEB_TELEMETRY_PATH: 'path of the metrics endpoint (as --web.telemetry-path)',
  CBWATCH_WEB_MAX_REQUESTS: 'HTTP requests served at once, beyond it 503 (as --web.max-requests)',
  CBWATCH_COUCHBASE_MAX_BUFFERED_BYTES: 'process-wide budget for buffered answers (as --couchbase.max-buffered-bytes)',
  CBWATCH_COUCHBASE_MAX_ANSWER_VALUES: 'JSON values one answer may hold (as --couchbase.max-answer-values)',
  CBWATCH_COLLECTION_GC_EVERY: "collect the collection thread's heap every SIZE of answers read (as --collection.gc-every)",
  CBWATCH_LOG_LEVEL: `log level: ${LOG_LEVELS.join(', ')} (as --log.level)`,
  CBWATCH_LOG_FORMAT: `log format: ${LOG_FORMATS.join(', ')} (as --log.format)`,
  CBWATCH_SHARD: 'I/N: watch only the clusters of shard I of N (as --shard)',
} as const;
type EnvName = keyof typeof ENV_VARS;

export const DEFAULT_LISTEN_ADDRESS = ':9420';
export const DEFAULT_TELEMETRY_PATH = '/metrics';
/** Paths the server answers besides the metrics (the webhook routes are under /webhooks/). */
const RESERVED_PATHS = ['/', '/-/healthy', '/-/ready', '/-/reload'];

/** Longest `--web.telemetry-path` (issue 39: a 100 KB path made every request answer 431). */
export const MAX_TELEMETRY_PATH_LENGTH = 256;

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

/** As node_exporter's --web.max-requests. */
export const DEFAULT_MAX_REQUESTS = 40;
/** Below this even a small cluster's bucket list would fail. */
const MIN_ANSWER_VALUES = 10_000;

export interface LoadOptions {
  /**
   * Accept a configuration that watches no cluster (e.g. only the Sync Gateway webhook receiver, or a
   * command that builds its own cluster such as `demo`). Default: false, which makes it an error.
   */
  readonly allowNoClusters?: boolean;
}

/** A setting together with where it came from (`--couchbase.url`, `CBWATCH_COUCHBASE_URL`). */
interface Sourced<T> {
  readonly value: T;
  readonly source: string;
}

type Env = Readonly<Record<string, string | undefined>>;

function fromEnv(env: Env, name: EnvName): Sourced<string> | undefined {
  const v = env[name];
  // An empty variable counts as unset: compose files and Helm charts often pass `VAR=` for "not set".
  return v === undefined || v === '' ? undefined : { value: v, source: name };
}

/** A string flag by its name, else the environment variable. */
function pick(flags: Partial<Flags>, flagName: string, env: Env, envName: EnvName): Sourced<string> | undefined {
  const v = flags[flagName];
  if (v !== undefined && typeof v !== 'string') throw new ConfigError(`--${flagName}: expected a value, got ${typeof v}`);
  return v !== undefined ? { value: v, source: `--${flagName}` } : fromEnv(env, envName);
}

function parseBool(s: Sourced<string>): Sourced<boolean> {
  const t = s.value.trim().toLowerCase();
  if (['true', '1', 'yes'].includes(t)) return { value: true, source: s.source };
  if (['false', '0', 'no'].includes(t)) return { value: false, source: s.source };
  throw new ConfigError(`${s.source}: expected true or false, got ${JSON.stringify(s.value)}`);
}

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
  const host = m[1] as string;
  return { host, port };
}

/** Reads a secret file: trailing newlines trimmed; errors name the key and the path, never the content. */
function readSecret(path: string, key: string, problems: string[]): string | undefined {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    problems.push(`${key}: cannot read ${JSON.stringify(path)} (${errCode(err)})${credentialsHint(path)}`);
    return undefined;
  }
  const value = text.replace(/(?:\r?\n)+$/, '');
  if (value === '') {
    problems.push(`${key}: ${JSON.stringify(path)} is empty`);
    return undefined;
  }
  return value;
}

/**
 * A path still starting with $CREDENTIALS_DIRECTORY was read outside systemd, which alone sets the variable (for the
 * service, from LoadCredential=): say how to check the same file from a shell.
 */
function credentialsHint(path: string): string {
  if (!/^\$(?:CREDENTIALS_DIRECTORY\b|\{CREDENTIALS_DIRECTORY\})/.test(path)) return '';
  return (
    '; $CREDENTIALS_DIRECTORY is set by systemd for the service only (LoadCredential=); from a shell, name the directory' +
    ' the unit loads the credential from, e.g. CREDENTIALS_DIRECTORY=/etc/cbwatch cbwatch run --config /etc/cbwatch/cbwatch.yml --config.check'
  );
}

function errCode(err: unknown): string {
  const code = (err as { code?: string }).code;
  if (code === 'ENOENT') return 'no such file';
  if (code === 'EACCES') return 'permission denied';
  if (code === 'EISDIR') return 'is a directory';
  return code ?? 'unreadable';
}

function checkReadable(path: string, key: string, problems: string[]): void {
  try {
    accessSync(path, fsConstants.R_OK);
  } catch (err) {
    problems.push(`${key}: cannot read ${JSON.stringify(path)} (${errCode(err)})`);
  }
}

/** The cluster name when none is given: the URL's host name (no port, so switching to TLS keeps it). */
export function nameFromUrl(url: string): string {
  return new URL(url).hostname.replace(/^\[|\]$/g, '');
}

/** The webhook token is carried in a URL path, so it must be URL-safe, and long enough not to be guessed. */
const TOKEN = /^[A-Za-z0-9._~-]{16,}$/;

/**
 * Loads the whole configuration. `flags` is what parseArgs() returned (any subset); `env` is usually
 * process.env. Throws ConfigError (code CBW_ERR_CONFIG) listing every problem found.
 */
export function loadConfig(flags: Partial<Flags> = {}, env: Env = process.env, options: LoadOptions = {}): Config {
  const configFile = pick(flags, 'config', env, 'CBWATCH_CONFIG');
  let file: FileConfig = { clusters: [], webhooks: {} };
  let locate: (path: readonly PathSegment[]) => Position | undefined = () => undefined;
  const fileName = configFile?.value ?? '(no file)';
  if (configFile !== undefined) {
    const data = parseYamlFile(configFile.value, configFile.source);
    locate = data.locate;
    const parsed = fileSchema.safeParse(data.value ?? {});
    if (!parsed.success) {
      throw linesToConfigError(
        configFile.value,
        issueLines(configFile.value, parsed.error.issues, locate, fileSchema, unknownCollectorHint),
      );
    }
    file = parsed.data;
  }
  // Like Prometheus: relative paths in the file are relative to the file's directory, not to the cwd.
  const baseDir = configFile === undefined ? process.cwd() : dirname(resolve(configFile.value));
  const rel = (p: string): string => {
    // systemd's LoadCredential= puts secrets in $CREDENTIALS_DIRECTORY, whose path depends on the unit's name:
    // a file path may start with it. Unset, the path stays as written and the read error names it.
    const cred = /^\$(?:CREDENTIALS_DIRECTORY\b|\{CREDENTIALS_DIRECTORY\})/.exec(p);
    if (cred) return env.CREDENTIALS_DIRECTORY ? join(env.CREDENTIALS_DIRECTORY, p.slice(cred[0].length)) : p;
    return isAbsolute(p) ? p : resolve(baseDir, p);
  };
  // Problems found after the schema: each line already says where.
  const problems: string[] = [];
  const at = (path: readonly PathSegment[]): string => {
    const pos = locate(path);
    return `${fileName}${pos === undefined ? '' : `:${pos.line}:${pos.col}`}: ${formatPath(path)}`;
  };

  // --- the single-cluster shortcut -------------------------------------------------------------------------
  const url = pick(flags, 'couchbase.url', env, 'CBWATCH_COUCHBASE_URL');
  const override = {
    name: pick(flags, 'couchbase.cluster-name', env, 'CBWATCH_COUCHBASE_CLUSTER_NAME'),
    username: pick(flags, 'couchbase.username', env, 'CBWATCH_COUCHBASE_USERNAME'),
    password: passwordOverride(flags, env),
    caFile: pick(flags, 'couchbase.ca-file', env, 'CBWATCH_COUCHBASE_CA_FILE'),
    insecure:
      typeof flags['couchbase.insecure-skip-verify'] === 'boolean'
        ? { value: flags['couchbase.insecure-skip-verify'], source: '--couchbase.insecure-skip-verify' }
        : mapSourced(fromEnv(env, 'CBWATCH_COUCHBASE_INSECURE_SKIP_VERIFY'), parseBool),
  };
  const overrideSources = Object.values(override)
    .filter((o): o is NonNullable<typeof o> => o !== undefined)
    .map((o) => o.source);
  if (override.name !== undefined && override.name.value.length > MAX_CLUSTER_NAME_LENGTH) {
    problems.push(`${override.name.source}: a cluster name of ${override.name.value.length} characters is longer than ${MAX_CLUSTER_NAME_LENGTH}`);
  } else if (override.name !== undefined && !CLUSTER_NAME.test(override.name.value)) {
    problems.push(`${override.name.source}: ${JSON.stringify(override.name.value)} may hold letters, digits, _ . - : only`);
  }

  const raws: { raw: ClusterFileConfig; index: number | undefined }[] = file.clusters.map((raw, index) => ({ raw, index }));
  if (url !== undefined) {
    if (file.clusters.length > 0) {
      throw new ConfigError(
        `${url.source}: cannot be combined with ${fileName}, which lists ${file.clusters.length} cluster(s); add the cluster to the file instead`,
      );
    }
    const parsed = clusterSchema.safeParse({ url: url.value });
    if (!parsed.success) {
      const msg = parsed.error.issues.map((i) => i.message).join('; ');
      throw new ConfigError(`${url.source}: ${msg}`);
    }
    raws.push({ raw: parsed.data, index: undefined });
  } else if (file.clusters.length === 0 && overrideSources.length > 0 && !options.allowNoClusters) {
    throw new ConfigError(
      `${overrideSources.join(', ')}: set for a cluster, but no cluster is configured (give --couchbase.url or CBWATCH_COUCHBASE_URL, or a config file with clusters)`,
    );
  } else if (file.clusters.length > 1 && overrideSources.length > 0) {
    throw new ConfigError(
      `${overrideSources.join(', ')}: applies to a single cluster, but ${fileName} lists ${file.clusters.length}; set it per cluster in the file`,
    );
  }

  // --[no-]collector.<name> and CBWATCH_COLLECTOR_<NAME>, over every cluster's file setting.
  const switches = collectorSwitches(flags, env, problems);
  const clusters: ClusterConfig[] = [];
  const seen = new Map<string, string>();
  for (const { raw, index } of raws) {
    const key = (...rest: PathSegment[]): string => (index === undefined ? (url?.source ?? '--couchbase.url') : at(['clusters', index, ...rest]));
    const name = override.name?.value ?? raw.name ?? nameFromUrl(raw.url);
    const nameWhere =
      override.name !== undefined ? override.name.source : raw.name !== undefined ? key('name') : `${key('url')} (name taken from the URL host)`;
    const previous = seen.get(name);
    // A name from the file or a flag was checked already; one taken from the URL's host is checked here.
    if (name.length > MAX_CLUSTER_NAME_LENGTH && override.name === undefined && raw.name === undefined) {
      problems.push(`${nameWhere}: a cluster name of ${name.length} characters is longer than ${MAX_CLUSTER_NAME_LENGTH}; set name`);
    } else if (previous !== undefined) {
      problems.push(`${nameWhere}: duplicate cluster name ${JSON.stringify(name)} (also ${previous}); names must be unique`);
    } else seen.set(name, index === undefined ? 'the shortcut' : `clusters[${index}]`);

    // Password: the shortcut (flag, then environment) wins over the file's password_file / password_env.
    let password: string | undefined;
    let passwordSource: string | undefined;
    let passwordFile: string | undefined;
    if (override.password !== undefined) {
      const p = override.password;
      if (p.kind === 'file') {
        password = readSecret(p.value, p.source, problems);
        passwordSource = `file ${p.value}`;
        passwordFile = p.value;
      } else {
        password = p.value;
        passwordSource = `environment variable ${p.source}`;
      }
    } else if (raw.password_file !== undefined) {
      password = readSecret(rel(raw.password_file), key('password_file'), problems);
      passwordSource = `file ${rel(raw.password_file)}`;
      passwordFile = rel(raw.password_file);
    } else if (raw.password_env !== undefined) {
      const v = env[raw.password_env];
      if (v === undefined || v === '') problems.push(`${key('password_env')}: environment variable ${raw.password_env} is not set`);
      else password = v;
      passwordSource = `environment variable ${raw.password_env}`;
    }
    const username = override.username?.value ?? raw.username;
    const passwordGiven = override.password !== undefined || raw.password_file !== undefined || raw.password_env !== undefined;
    if (username !== undefined && !passwordGiven) {
      problems.push(
        `${override.username?.source ?? key('username')}: a username needs a password (${index === undefined ? 'CBWATCH_COUCHBASE_PASSWORD or --couchbase.password-file' : 'password_file or password_env, or CBWATCH_COUCHBASE_PASSWORD'})`,
      );
    }
    if (username === undefined && passwordGiven) {
      problems.push(`${index === undefined ? '--couchbase.username' : key()}: a password is set but no username`);
    }

    const caFile = override.caFile?.value ?? (raw.tls?.ca_file === undefined ? undefined : rel(raw.tls.ca_file));
    const certFile = raw.tls?.cert_file === undefined ? undefined : rel(raw.tls.cert_file);
    const keyFile = raw.tls?.key_file === undefined ? undefined : rel(raw.tls.key_file);
    if (caFile !== undefined) checkReadable(caFile, override.caFile?.source ?? key('tls', 'ca_file'), problems);
    if (certFile !== undefined) checkReadable(certFile, key('tls', 'cert_file'), problems);
    if (keyFile !== undefined) checkReadable(keyFile, key('tls', 'key_file'), problems);

    const collectors = applySwitches(resolveCollectors(raw.collectors), switches);
    for (const c of COLLECTOR_NAMES) {
      const given = raw.collectors[c]?.timeout;
      const interval = collectors[c].interval;
      if (given !== undefined && given > interval && collectors[c].schedule === undefined) {
        problems.push(
          `${key('collectors', c, 'timeout')}: ${formatDuration(given)} is longer than the interval ${formatDuration(interval)} (a poll must end before the next one)`,
        );
      }
    }

    clusters.push({
      name,
      url: raw.url.replace(/\/+$/, ''),
      username,
      password,
      passwordSource,
      ...(passwordFile === undefined ? {} : { passwordFile }),
      tls: {
        ...(caFile === undefined ? {} : { caFile }),
        ...(certFile === undefined ? {} : { certFile }),
        ...(keyFile === undefined ? {} : { keyFile }),
        insecureSkipVerify: override.insecure?.value ?? raw.tls?.insecure_skip_verify ?? false,
      },
      searchUrl: raw.search_url?.replace(/\/+$/, ''),
      backupUrl: raw.backup_url?.replace(/\/+$/, ''),
      credentialsHosts: raw.credentials_hosts,
      concurrency: raw.concurrency,
      connectTimeout: raw.connect_timeout,
      requestTimeout: raw.request_timeout,
      maxResponseBytes: raw.max_response_bytes,
      probeInterval: raw.probe_interval,
      maxDynamicFamilies: raw.max_dynamic_families,
      maxLabelValueLength: raw.max_label_value_length,
      statsSource: raw.stats_source,
      collectors,
    });
  }

  // --- webhooks ----------------------------------------------------------------------------------------------
  let syncGateway: SyncGatewayWebhookConfig | undefined;
  const sg = file.webhooks.sync_gateway;
  if (sg !== undefined && sg.enabled) {
    const { token_file, token_env, ...rest } = sg;
    let token: string | undefined;
    let tokenKey: string;
    if (token_file !== undefined) {
      tokenKey = at(['webhooks', 'sync_gateway', 'token_file']);
      token = readSecret(rel(token_file), tokenKey, problems);
    } else {
      tokenKey = at(['webhooks', 'sync_gateway', 'token_env']);
      const v = token_env === undefined ? undefined : env[token_env];
      if (v === undefined || v === '') problems.push(`${tokenKey}: environment variable ${String(token_env)} is not set`);
      else token = v.trim();
    }
    if (token !== undefined && !TOKEN.test(token)) {
      problems.push(`${tokenKey}: the token must be at least 16 characters of A-Z a-z 0-9 . _ ~ - (it travels in a URL path)`);
    } else if (token !== undefined) syncGateway = { ...rest, token, ...(token_file !== undefined ? { tokenFile: rel(token_file) } : {}) };
  }

  if (clusters.length === 0 && !options.allowNoClusters && syncGateway === undefined && problems.length === 0) {
    throw new ConfigError(
      configFile === undefined
        ? 'no cluster to watch: give --couchbase.url URL (password in CBWATCH_COUCHBASE_PASSWORD) or --config FILE'
        : `${fileName}: clusters: no cluster to watch (list at least one, or give --couchbase.url)`,
    );
  }

  // --- web and log -------------------------------------------------------------------------------------------
  const listen = pick(flags, 'web.listen-address', env, 'CBWATCH_WEB_LISTEN_ADDRESS') ?? {
    value: DEFAULT_LISTEN_ADDRESS,
    source: 'default',
  };
  let listenAddr = { host: '', port: 9420 };
  try {
    listenAddr = parseListenAddress(listen.value, listen.source);
  } catch (err) {
    problems.push((err as Error).message);
  }
  const webConfigFile = pick(flags, 'web.config.file', env, 'CBWATCH_WEB_CONFIG_FILE');
  let telemetryPath = DEFAULT_TELEMETRY_PATH;
  const telemetry = pick(flags, 'web.telemetry-path', env, 'CBWATCH_WEB_TELEMETRY_PATH');
  if (telemetry !== undefined) {
    try {
      telemetryPath = parseTelemetryPath(telemetry.value, telemetry.source);
    } catch (err) {
      problems.push((err as Error).message);
    }
  }
  let settings: WebSettings | undefined;
  if (webConfigFile !== undefined) {
    try {
      settings = loadWebConfig(webConfigFile.value);
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      problems.push(err.message.replace(/^invalid configuration: /, ''));
    }
  }

  let maxRequests = DEFAULT_MAX_REQUESTS;
  const maxReqFlag = flags['web.max-requests'];
  if (typeof maxReqFlag === 'number') maxRequests = maxReqFlag;
  else {
    const e = fromEnv(env, 'CBWATCH_WEB_MAX_REQUESTS');
    if (e !== undefined) {
      if (/^\d+$/.test(e.value.trim())) maxRequests = Number(e.value);
      else problems.push(`${e.source}: expected a whole number, got ${JSON.stringify(e.value)}`);
    }
  }
  let maxBufferedBytes = DEFAULT_MAX_BUFFERED_BYTES;
  const budgetText = pick(flags, 'couchbase.max-buffered-bytes', env, 'CBWATCH_COUCHBASE_MAX_BUFFERED_BYTES');
  if (budgetText !== undefined) {
    const n = /^\d+$/.test(budgetText.value.trim()) ? Number(budgetText.value) : parseSize(budgetText.value);
    if (n === undefined || !Number.isSafeInteger(n) || n < 1024 * 1024 || n > MAX_BYTES_SETTING) {
      problems.push(`${budgetText.source}: expected a size from 1MiB to 64GiB such as 256MiB, got ${JSON.stringify(budgetText.value)}`);
    } else maxBufferedBytes = n;
  }
  let gcEveryAnswerBytes: number | undefined;
  const gcText = pick(flags, 'collection.gc-every', env, 'CBWATCH_COLLECTION_GC_EVERY');
  if (gcText !== undefined) {
    const t = gcText.value.trim();
    const n = /^\d+$/.test(t) ? Number(t) : parseSize(t);
    // 0 turns it off; below 1 MiB a collection would run every few answers.
    if (n === undefined || !Number.isSafeInteger(n) || (n !== 0 && n < 1024 * 1024) || n > MAX_BYTES_SETTING) {
      problems.push(`${gcText.source}: expected 0 (off) or a size from 1MiB to 64GiB such as 8MiB, got ${JSON.stringify(gcText.value)}`);
    } else gcEveryAnswerBytes = n;
  }
  let maxAnswerValues = DEFAULT_MAX_ANSWER_VALUES;
  const valuesText = pick(flags, 'couchbase.max-answer-values', env, 'CBWATCH_COUCHBASE_MAX_ANSWER_VALUES');
  if (valuesText !== undefined) {
    const t = valuesText.value.trim();
    const n = /^\d+$/.test(t) ? Number(t) : NaN;
    if (!Number.isSafeInteger(n) || n < MIN_ANSWER_VALUES) problems.push(`${valuesText.source}: expected a whole number of at least ${MIN_ANSWER_VALUES} such as ${DEFAULT_MAX_ANSWER_VALUES}, got ${JSON.stringify(valuesText.value)}`);
    else maxAnswerValues = n;
  }

  let level: LogLevel = 'info';
  let format: LogFormat = 'json';
  try {
    level = enumSetting(pick(flags, 'log.level', env, 'CBWATCH_LOG_LEVEL'), LOG_LEVELS) ?? 'info';
    format = enumSetting(pick(flags, 'log.format', env, 'CBWATCH_LOG_FORMAT'), LOG_FORMATS) ?? 'json';
  } catch (err) {
    problems.push((err as Error).message);
  }

  let shard: { index: number; total: number } | undefined;
  const shardText = pick(flags, 'shard', env, 'CBWATCH_SHARD');
  if (shardText !== undefined) {
    try {
      shard = parseShard(shardText.value, shardText.source);
    } catch (err) {
      problems.push((err as Error).message);
    }
  }

  if (problems.length > 0) throw linesToConfigError(fileName, problems);

  // Every secret the configuration holds is known to the redactor before any upstream text is shown.
  registerConfigSecrets({ clusters, webhooks: { syncGateway }, web: { settings } });

  return {
    file: configFile?.value,
    clusters: shard === undefined ? clusters : clusters.filter((c) => shardOf(c.name, shard.total) === shard.index),
    ...(shard === undefined ? {} : { shard }),
    webhooks: { syncGateway },
    web: { listenHost: listenAddr.host, listenPort: listenAddr.port, configFile: webConfigFile?.value, settings, maxRequests, telemetryPath },
    maxBufferedBytes,
    maxAnswerValues,
    ...(gcEveryAnswerBytes !== undefined ? { gcEveryAnswerBytes } : {}),
    log: { level, format },
  };
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

/** Stable shard of a cluster name (FNV-1a), so every replica agrees without talking to the others. */
export function shardOf(name: string, total: number): number {
  let h = 0x811c9dc5;
  for (const ch of Buffer.from(name, 'utf8')) {
    h ^= ch;
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h % total;
}

function mapSourced<T, U>(s: Sourced<T> | undefined, f: (s: Sourced<T>) => Sourced<U>): Sourced<U> | undefined {
  return s === undefined ? undefined : f(s);
}

function enumSetting<T extends string>(s: Sourced<string> | undefined, allowed: readonly T[]): T | undefined {
  if (s === undefined) return undefined;
  const v = s.value.trim().toLowerCase();
  if (!(allowed as readonly string[]).includes(v)) {
    throw new ConfigError(`${s.source}: ${JSON.stringify(s.value)} is not one of ${allowed.join(', ')}`);
  }
  return v as T;
}

type PasswordOverride = { kind: 'file' | 'value'; value: string; source: string };

function passwordOverride(flags: Partial<Flags>, env: Env): PasswordOverride | undefined {
  const file = pick(flags, 'couchbase.password-file', {}, 'CBWATCH_COUCHBASE_PASSWORD_FILE');
  if (file !== undefined) return { kind: 'file', value: file.value, source: file.source };
  const direct = fromEnv(env, 'CBWATCH_COUCHBASE_PASSWORD');
  const viaFile = fromEnv(env, 'CBWATCH_COUCHBASE_PASSWORD_FILE');
  if (direct !== undefined && viaFile !== undefined) {
    throw new ConfigError('CBWATCH_COUCHBASE_PASSWORD and CBWATCH_COUCHBASE_PASSWORD_FILE are both set; keep one');
  }
  if (direct !== undefined) return { kind: 'value', value: direct.value, source: direct.source };
  if (viaFile !== undefined) return { kind: 'file', value: viaFile.value, source: viaFile.source };
  return undefined;
}

/** For unknown keys under `clusters[i].collectors`: say it is a collector and list the real ones. */
function unknownCollectorHint(path: readonly PathSegment[], key: string): string | undefined {
  if (path.length === 3 && path[0] === 'clusters' && path[2] === 'collectors') {
    return `unknown collector ${JSON.stringify(key)} (collectors: ${COLLECTOR_NAMES.join(', ')})`;
  }
  return undefined;
}

// ---------------------------------------------------------------------------------------------------------------

const DURATION_KEYS = new Set(['slow_query_threshold', 'longer_than', 'slow_stats_interval']);

function formatBytes(n: number): string {
  if (n % 1024 ** 3 === 0) return `${n / 1024 ** 3}GiB`;
  if (n % 1024 ** 2 === 0) return `${n / 1024 ** 2}MiB`;
  if (n % 1024 === 0) return `${n / 1024}KiB`;
  return `${n}B`;
}

function optionText(key: string, value: unknown): string[] {
  if (value === undefined || value === null) return [];
  if (Array.isArray(value)) return value.length === 0 ? [] : [`${key}=[${value.join(',')}]`];
  if (typeof value === 'object') {
    return Object.entries(value as Record<string, unknown>).flatMap(([k, v]) => optionText(`${key}.${k}`, v));
  }
  const leaf = key.split('.').pop() ?? key;
  if (typeof value === 'number' && DURATION_KEYS.has(leaf)) return [`${key}=${formatDuration(value)}`];
  return [`${key}=${String(value)}`];
}

/** `at "0 3 * * *" (Europe/Paris), next 2026-11-29 03:00 +01:00`: a schedule and its next slot from now. */
function describeSchedule(expression: string, timezone: string | undefined): string {
  const spec = new CronSpec(expression, timezone);
  try {
    return `at ${spec.describe()}, next ${formatSlot(spec.nextSlot(), timezone)}, and once at start`;
  } finally {
    spec.dispose();
  }
}

/**
 * A human summary (newline-terminated) of a loaded configuration for `--config.check`: clusters, URLs, where each password comes
 * from (never the password), TLS files, enabled collectors with their intervals and options, web, webhooks.
 */
export function describeConfig(config: Config): string {
  const out: string[] = [];
  out.push(`configuration: ${config.file ?? '(flags and environment only)'}`);
  out.push(`clusters (${config.clusters.length}):`);
  if (config.clusters.length > CLUSTERS_PER_PROCESS) {
    out.push(`  warning: more than ${CLUSTERS_PER_PROCESS} clusters, more than one process should carry (about 1 MB of memory each and their share of a core): shard them with --shard i/n`);
  }
  for (const c of config.clusters) {
    out.push(`  ${c.name}  (couchbase_cluster="${c.name}")`);
    out.push(`    url:         ${c.url}`);
    out.push(`    username:    ${c.username ?? '(none: unauthenticated requests)'}`);
    out.push(`    password:    ${c.password === undefined ? '(none)' : `set, from ${c.passwordSource ?? 'configuration'}`}`);
    const tls = [
      c.tls.caFile === undefined ? undefined : `ca_file=${c.tls.caFile}`,
      c.tls.certFile === undefined ? undefined : `cert_file=${c.tls.certFile}`,
      c.tls.keyFile === undefined ? undefined : `key_file=${c.tls.keyFile}`,
      `insecure_skip_verify=${c.tls.insecureSkipVerify}`,
    ].filter((x) => x !== undefined);
    out.push(`    tls:         ${tls.join(', ')}`);
    out.push(`    search_url:  ${c.searchUrl ?? '(discovered from nodeServices)'}`);
    out.push(`    backup_url:  ${c.backupUrl ?? '(discovered from nodeServices)'}`);
    out.push(`    credentials_hosts: ${c.credentialsHosts ?? 'nodes'}`);
    out.push(
      `    limits:      concurrency=${c.concurrency}, connect_timeout=${formatDuration(c.connectTimeout)}, request_timeout=${formatDuration(c.requestTimeout)}, max_response_bytes=${formatBytes(c.maxResponseBytes)}, probe_interval=${formatDuration(c.probeInterval ?? 15_000)}, max_dynamic_families=${c.maxDynamicFamilies ?? 5000}, max_label_value_length=${c.maxLabelValueLength ?? 1024}`,
    );
    out.push(`    stats_source: ${c.statsSource ?? 'auto'}`);
    const disabled: string[] = [];
    out.push('    collectors:');
    for (const name of COLLECTOR_NAMES) {
      const o = c.collectors[name] as unknown as Record<string, unknown> & { enabled: boolean; interval: number; timeout: number };
      if (!o.enabled) {
        disabled.push(name);
        continue;
      }
      const extra = Object.entries(o)
        .filter(([k]) => !['enabled', 'interval', 'timeout', 'schedule', 'timezone'].includes(k))
        .flatMap(([k, v]) => optionText(k, v));
      const when = typeof o['schedule'] === 'string' ? describeSchedule(o['schedule'], o['timezone'] as string | undefined) : `every ${formatDuration(o.interval)}`;
      out.push(`      ${name.padEnd(13)} ${when}, timeout ${formatDuration(o.timeout)}${extra.length > 0 ? `; ${extra.join(', ')}` : ''}`);
    }
    if (disabled.length > 0) out.push(`    disabled:    ${disabled.join(', ')}`);
  }
  const w = config.web;
  const tls = w.settings?.tls;
  const users = w.settings?.basicAuthUsers === undefined ? [] : Object.keys(w.settings.basicAuthUsers);
  const host = w.listenHost.includes(':') ? `[${w.listenHost}]` : w.listenHost;
  out.push(`web: listen ${host}:${w.listenPort}${w.listenHost === '' ? ' (every interface, IPv6 and IPv4)' : ''}, metrics at ${w.telemetryPath ?? DEFAULT_TELEMETRY_PATH}${w.configFile === undefined ? '' : `, web config ${w.configFile}`}`);
  out.push(
    `  tls: ${tls === undefined ? 'off' : `on (cert_file=${tls.certFile}, key_file=${tls.keyFile}, client_auth_type=${tls.clientAuthType}, min_version=${tls.minVersion})`}`,
  );
  out.push(`  basic auth: ${users.length === 0 ? 'off' : `on (users: ${users.join(', ')})`}`);
  const rl = w.settings?.rateLimit;
  out.push(`  rate limit: ${rl === undefined ? 'off' : `one request per ${formatDuration(rl.intervalMs)}, burst ${rl.burst}`}`);
  out.push(`  max requests: ${w.maxRequests === 0 ? 'no limit' : (w.maxRequests ?? DEFAULT_MAX_REQUESTS)}`);
  out.push(`couchbase answers: at most ${formatBytes(config.maxBufferedBytes ?? DEFAULT_MAX_BUFFERED_BYTES)} buffered at once, process-wide; at most ${config.maxAnswerValues ?? DEFAULT_MAX_ANSWER_VALUES} JSON values per answer`);
  const gcEvery = config.gcEveryAnswerBytes;
  out.push(`collection heap: ${gcEvery === 0 ? 'collected when V8 decides' : `collected every ${formatBytes(gcEvery ?? GC_EVERY_DEFAULT_BYTES)} of answers read${gcEvery === undefined ? ' (the default)' : ''}`}`);
  const sg = config.webhooks.syncGateway;
  out.push(
    `webhooks.sync_gateway: ${sg === undefined ? 'off' : `on (token set; databases: ${sg.databases.length === 0 ? '(none listed)' : sg.databases.join(', ')}; max_body_bytes=${formatBytes(sg.max_body_bytes)}${sg.type_field === undefined ? '' : `; type_field=${sg.type_field}`})`}`,
  );
  out.push(`log: level ${config.log.level}, format ${config.log.format}`);
  return `${out.join('\n')}\n`;
}
