/** `--config.check`'s summary of a loaded configuration. */
import { CronSpec, formatSlot } from '../cron.js';
import { CLUSTERS_PER_PROCESS } from './defaults.js';
import { COLLECTOR_NAMES } from './schema.js';
import { CLUSTER_SETTINGS, DEFAULT_GC_EVERY_BYTES, DEFAULT_MAX_ANSWER_VALUES, DEFAULT_MAX_BUFFERED_BYTES, DEFAULT_MAX_REQUESTS, DEFAULT_TELEMETRY_PATH } from './settings.js';
import type { Config } from './types.js';
import { formatBytes, formatDuration } from './units.js';

const DURATION_KEYS = new Set(['slow_query_threshold', 'longer_than', 'slow_stats_interval']);

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
      `    limits:      concurrency=${c.concurrency}, connect_timeout=${formatDuration(c.connectTimeout)}, request_timeout=${formatDuration(c.requestTimeout)}, max_response_bytes=${formatBytes(c.maxResponseBytes)}, probe_interval=${formatDuration(c.probeInterval ?? CLUSTER_SETTINGS.probe_interval.default)}, max_dynamic_families=${c.maxDynamicFamilies ?? CLUSTER_SETTINGS.max_dynamic_families.default}, max_label_value_length=${c.maxLabelValueLength ?? CLUSTER_SETTINGS.max_label_value_length.default}`,
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
  out.push(`collection heap: ${gcEvery === 0 ? 'collected when V8 decides' : `collected every ${formatBytes(gcEvery ?? DEFAULT_GC_EVERY_BYTES)} of answers read${gcEvery === undefined ? ' (the default)' : ''}`}`);
  const sg = config.webhooks.syncGateway;
  out.push(
    `webhooks.sync_gateway: ${sg === undefined ? 'off' : `on (token set; databases: ${sg.databases.length === 0 ? '(none listed)' : sg.databases.join(', ')}; max_body_bytes=${formatBytes(sg.max_body_bytes)}${sg.type_field === undefined ? '' : `; type_field=${sg.type_field}`})`}`,
  );
  out.push(`log: level ${config.log.level}, format ${config.log.format}`);
  return `${out.join('\n')}\n`;
}
