/**
 * loadConfig(): the YAML file, the environment and the flags, merged once with the precedence
 * flags > environment > file, validated, secrets read, collector defaults applied. Every problem is a
 * ConfigError whose lines name where it is (file:line:col, a flag or an environment variable), the key path
 * and why; the CLI prints it and exits 2. Secret values never appear in a message.
 *
 * The process-wide settings are the rows of the settings table (settings.ts), merged by one loop: the flag, else
 * the environment variable, else the row's default, each parsed by its row.
 *
 * The single-cluster shortcut (`--couchbase.*` flags and `CBWATCH_COUCHBASE_*` variables):
 * - without a file, or with a file that lists no clusters, `--couchbase.url` defines the one cluster;
 * - with a file that lists clusters, giving a URL as well is an error (which cluster would it replace?);
 * - the other shortcut settings (name, username, password, CA file, skip-verify) override the file's values
 *   when the file lists exactly one cluster, and are an error when it lists several.
 */
import { accessSync, constants as fsConstants, statSync } from 'node:fs';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { ConfigError } from '../errors.js';
import { buildClusters, readSecret } from './clusters.js';
import type { ClusterOverride, PasswordOverride, Sourced } from './clusters.js';
import { CLUSTER_NAME, COLLECTOR_NAMES, MAX_CLUSTER_NAME_LENGTH, clusterSchema, fileSchema } from './schema.js';
import type { ClusterFileConfig, FileConfig } from './schema.js';
import { registerConfigSecrets } from './secrets.js';
import { SETTINGS, SETTING_ROWS } from './settings.js';
import type { Flags, Setting, SettingName, SettingValue } from './settings.js';
import { collectorSwitches } from './switches.js';
import type { Config, SyncGatewayWebhookConfig } from './types.js';
import { loadWebConfig } from './webconfig.js';
import type { WebSettings } from './webconfig.js';
import { formatPath, issueLines, linesToConfigError, parseYamlFile } from './yamlfile.js';
import type { PathSegment, Position } from './yamlfile.js';

export {
  DEFAULT_LISTEN_ADDRESS,
  DEFAULT_MAX_ANSWER_VALUES,
  DEFAULT_MAX_BUFFERED_BYTES,
  DEFAULT_MAX_REQUESTS,
  DEFAULT_TELEMETRY_PATH,
  MAX_TELEMETRY_PATH_LENGTH,
  parseListenAddress,
  parseShard,
  parseTelemetryPath,
} from './settings.js';
export { registerConfigSecrets } from './secrets.js';
export { nameFromUrl } from './clusters.js';
export { describeConfig } from './describe.js';

/** Every environment variable a row of the settings table reads, with what it sets. */
export const ENV_VARS: Readonly<Record<string, string>> = Object.fromEntries(
  SETTING_ROWS.flatMap(([, s]) => (s.env === undefined ? [] : [[s.env, s.flag === undefined ? s.help : `${s.help} (as --${s.flag})`]])),
);

export interface LoadOptions {
  /**
   * Accept a configuration that watches no cluster (e.g. only the Sync Gateway webhook receiver, or a
   * command that builds its own cluster such as `demo`). Default: false, which makes it an error.
   */
  readonly allowNoClusters?: boolean;
}

type Env = Readonly<Record<string, string | undefined>>;

/** The rows that name a cluster: their problems are listed with the clusters', the others' after them. */
const SHORTCUT = /^couchbase\.(?:url|username|password|password-file|cluster-name|ca-file|insecure-skip-verify)$/;

/** The settings given by a flag or a variable, each parsed by its row; a row whose value is wrong is absent. */
class Given {
  private readonly values = new Map<SettingName, Sourced<unknown>>();
  /** Problems of the shortcut's rows, and of the others. */
  readonly cluster: string[] = [];
  readonly process: string[] = [];

  constructor(flags: Partial<Flags>, env: Env) {
    for (const [name, s] of SETTING_ROWS) {
      if (s.env === undefined) continue;
      const problems = SHORTCUT.test(name) ? this.cluster : this.process;
      try {
        const v = read(s, flags, env);
        if (v !== undefined) this.values.set(name, v);
      } catch (err) {
        if (!(err instanceof ConfigError)) throw err;
        problems.push(err.message);
      }
    }
  }

  get<K extends SettingName>(name: K): Sourced<SettingValue<K>> | undefined {
    return this.values.get(name) as Sourced<SettingValue<K>> | undefined;
  }

  /** The value given, else the row's default. */
  value<K extends SettingName>(name: K): SettingValue<K> {
    return (this.get(name)?.value ?? (SETTINGS[name] as Setting).default) as SettingValue<K>;
  }
}

/** One row: the flag (already parsed when the command line was read, or parsed now), else the variable. */
function read(s: Setting, flags: Partial<Flags>, env: Env): Sourced<unknown> | undefined {
  const flag = s.flag === undefined ? undefined : flags[s.flag];
  if (flag !== undefined) {
    const source = `--${s.flag as string}`;
    // A boolean, or a value parseArgs() parsed already (a number), is taken as it is; a text is parsed here.
    if (s.type === 'boolean' || (s.check === 'args' && typeof flag !== 'string')) return { value: flag, source };
    if (typeof flag !== 'string') throw new ConfigError(`${source}: expected a value, got ${typeof flag}`);
    return { value: s.parse(flag, source), source };
  }
  const text = s.env === undefined ? undefined : env[s.env];
  // An empty variable counts as unset: compose files and Helm charts often pass `VAR=` for "not set".
  if (text === undefined || text === '' || s.env === undefined) return undefined;
  return { value: s.parse(text, s.env), source: s.env };
}

/** The webhook token is carried in a URL path, so it must be URL-safe, and long enough not to be guessed. */
const TOKEN = /^[A-Za-z0-9._~-]{16,}$/;

/**
 * Loads the whole configuration. `flags` is what parseArgs() returned (any subset); `env` is usually
 * process.env. Throws ConfigError (code CBW_ERR_CONFIG) listing every problem found.
 */
export function loadConfig(flags: Partial<Flags> = {}, env: Env = process.env, options: LoadOptions = {}): Config {
  const given = new Given(flags, env);
  const configFile = given.get('config');
  const { file, fileName, at, rel } = readConfigFile(configFile, env);
  // Problems found after the schema: each line already says where.
  const problems: string[] = [];
  problems.push(...given.cluster);

  // --- the single-cluster shortcut -------------------------------------------------------------------------
  const url = given.get('couchbase.url');
  const override: ClusterOverride = {
    name: given.get('couchbase.cluster-name'),
    username: given.get('couchbase.username'),
    password: passwordOverride(flags, given),
    caFile: given.get('couchbase.ca-file'),
    insecure: given.get('couchbase.insecure-skip-verify'),
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
  const clusters = buildClusters({ raws, override, url, switches, env, at, rel }, problems);

  const syncGateway = syncGatewayConfig(file, env, at, rel, problems);

  if (clusters.length === 0 && !options.allowNoClusters && syncGateway === undefined && problems.length === 0) {
    throw new ConfigError(
      configFile === undefined
        ? 'no cluster to watch: give --couchbase.url URL (password in CBWATCH_COUCHBASE_PASSWORD) or --config FILE'
        : `${fileName}: clusters: no cluster to watch (list at least one, or give --couchbase.url)`,
    );
  }

  // --- the process-wide settings --------------------------------------------------------------------------------
  problems.push(...given.process);
  const listen = given.value('web.listen-address');
  const webConfigFile = given.get('web.config.file');
  let settings: WebSettings | undefined;
  if (webConfigFile !== undefined) {
    try {
      settings = loadWebConfig(webConfigFile.value);
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      problems.push(err.message.replace(/^invalid configuration: /, ''));
    }
  }
  const shard = given.get('shard')?.value;
  const gcEveryAnswerBytes = given.get('collection.gc-every')?.value;
  const heapSnapshotDir = given.get('debug.heap-snapshot-dir');
  if (heapSnapshotDir !== undefined) {
    const problem = directoryProblem(heapSnapshotDir.value);
    if (problem !== undefined) problems.push(`${heapSnapshotDir.source}: ${JSON.stringify(heapSnapshotDir.value)} ${problem}`);
  }

  if (problems.length > 0) throw linesToConfigError(fileName, problems);

  // Every secret the configuration holds is known to the redactor before any upstream text is shown.
  registerConfigSecrets({ clusters, webhooks: { syncGateway }, web: { settings } });

  return {
    file: configFile?.value,
    clusters: shard === undefined ? clusters : clusters.filter((c) => shardOf(c.name, shard.total) === shard.index),
    ...(shard === undefined ? {} : { shard }),
    webhooks: { syncGateway },
    web: {
      listenHost: listen.host,
      listenPort: listen.port,
      configFile: webConfigFile?.value,
      settings,
      maxRequests: given.value('web.max-requests'),
      telemetryPath: given.value('web.telemetry-path'),
    },
    maxBufferedBytes: given.value('couchbase.max-buffered-bytes'),
    maxAnswerValues: given.value('couchbase.max-answer-values'),
    ...(gcEveryAnswerBytes !== undefined ? { gcEveryAnswerBytes } : {}),
    ...(given.value('collection.inline') ? { collectionInline: true } : {}),
    ...(heapSnapshotDir !== undefined ? { heapSnapshotDir: heapSnapshotDir.value } : {}),
    log: { level: given.value('log.level'), format: given.value('log.format') },
  };
}

/** Why `dir` cannot take files (it is not a directory, or this user may not write in it); undefined when it can. */
function directoryProblem(dir: string): string | undefined {
  try {
    if (!statSync(dir).isDirectory()) return 'is not a directory';
    accessSync(dir, fsConstants.W_OK);
    return undefined;
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    return code === 'ENOENT' ? 'does not exist' : code === 'EACCES' ? 'is not writable by this user' : `cannot be used (${code ?? 'error'})`;
  }
}

/** The configuration file read and validated (none: an empty one), with where its keys sit and how its paths resolve. */
function readConfigFile(configFile: Sourced<string> | undefined, env: Env) {
  let file: FileConfig = { clusters: [], webhooks: {} };
  let locate: (path: readonly PathSegment[]) => Position | undefined = () => undefined;
  const fileName = configFile?.value ?? '(no file)';
  if (configFile !== undefined) {
    const data = parseYamlFile(configFile.value, configFile.source);
    locate = data.locate;
    const parsed = fileSchema.safeParse(data.value ?? {});
    if (!parsed.success) {
      throw linesToConfigError(configFile.value, issueLines(configFile.value, parsed.error.issues, locate, fileSchema, unknownCollectorHint));
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
  const at = (path: readonly PathSegment[]): string => {
    const pos = locate(path);
    return `${fileName}${pos === undefined ? '' : `:${pos.line}:${pos.col}`}: ${formatPath(path)}`;
  };
  return { file, fileName, at, rel };
}

/** The Sync Gateway webhook receiver, when enabled, with its token read. */
function syncGatewayConfig(
  file: FileConfig,
  env: Env,
  at: (path: readonly PathSegment[]) => string,
  rel: (path: string) => string,
  problems: string[],
): SyncGatewayWebhookConfig | undefined {
  const sg = file.webhooks.sync_gateway;
  if (sg === undefined || !sg.enabled) return undefined;
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
    return undefined;
  }
  return token === undefined ? undefined : { ...rest, token, ...(token_file !== undefined ? { tokenFile: rel(token_file) } : {}) };
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

/** The shortcut's password: `--couchbase.password-file`, else one of the two variables (both set is an error). */
function passwordOverride(flags: Partial<Flags>, given: Given): PasswordOverride | undefined {
  const file = given.get('couchbase.password-file');
  if (file !== undefined && flags['couchbase.password-file'] !== undefined) return { kind: 'file', value: file.value, source: file.source };
  const direct = given.get('couchbase.password');
  if (direct !== undefined && file !== undefined) {
    throw new ConfigError('CBWATCH_COUCHBASE_PASSWORD and CBWATCH_COUCHBASE_PASSWORD_FILE are both set; keep one');
  }
  if (direct !== undefined) return { kind: 'value', value: direct.value, source: direct.source };
  if (file !== undefined) return { kind: 'file', value: file.value, source: file.source };
  return undefined;
}

/** For unknown keys under `clusters[i].collectors`: say it is a collector and list the real ones. */
function unknownCollectorHint(path: readonly PathSegment[], key: string): string | undefined {
  if (path.length === 3 && path[0] === 'clusters' && path[2] === 'collectors') {
    return `unknown collector ${JSON.stringify(key)} (collectors: ${COLLECTOR_NAMES.join(', ')})`;
  }
  return undefined;
}

