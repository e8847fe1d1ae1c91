/**
 * The clusters of a configuration: each from its file entry (or the `--couchbase.url` shortcut), with the
 * shortcut's overrides, its password read, its TLS files checked and its collectors resolved. Every problem is a
 * line naming where it is; secret values never appear in one.
 */
import { accessSync, constants as fsConstants, readFileSync } from 'node:fs';
import { resolveCollectors } from './defaults.js';
import { COLLECTOR_NAMES, MAX_CLUSTER_NAME_LENGTH } from './schema.js';
import type { ClusterFileConfig } from './schema.js';
import { applySwitches } from './switches.js';
import type { CollectorSwitch } from './switches.js';
import type { CollectorName } from './schema.js';
import type { ClusterConfig } from './types.js';
import { formatDuration } from './units.js';
import type { PathSegment } from './yamlfile.js';

/** A setting together with where it came from (`--couchbase.url`, `CBWATCH_COUCHBASE_URL`). */
export interface Sourced<T> {
  readonly value: T;
  readonly source: string;
}

/** The password the shortcut gives: a file to read, or the value of CBWATCH_COUCHBASE_PASSWORD. */
export type PasswordOverride = { kind: 'file' | 'value'; value: string; source: string };

/** What the `--couchbase.*` shortcut sets over the file's single cluster. */
export interface ClusterOverride {
  readonly name: Sourced<string> | undefined;
  readonly username: Sourced<string> | undefined;
  readonly password: PasswordOverride | undefined;
  readonly caFile: Sourced<string> | undefined;
  readonly insecure: Sourced<boolean> | undefined;
}

export interface ClusterContext {
  readonly raws: ReadonlyArray<{ raw: ClusterFileConfig; index: number | undefined }>;
  readonly override: ClusterOverride;
  /** Where the shortcut's URL came from. */
  readonly url: Sourced<string> | undefined;
  readonly switches: ReadonlyMap<CollectorName, CollectorSwitch>;
  readonly env: Readonly<Record<string, string | undefined>>;
  /** `file:line:col: key.path` of a file key. */
  readonly at: (path: readonly PathSegment[]) => string;
  /** A file's path as written, resolved against the configuration file's directory. */
  readonly rel: (path: string) => string;
}

/** Reads a secret file: trailing newlines trimmed; errors name the key and the path, never the content. */
export function readSecret(path: string, key: string, problems: string[]): string | undefined {
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

/** The clusters, with every problem found pushed to `problems`. */
export function buildClusters(ctx: ClusterContext, problems: string[]): ClusterConfig[] {
  const { raws, override, url, switches, env, at, rel } = ctx;
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
  return clusters;
}
