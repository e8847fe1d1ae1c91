/**
 * `cbwatch check`: poll every enabled collector of every cluster once and print a table — collector,
 * endpoint, status, latency, series, and the missing permission on a 403. Exit 0 when all succeed, 1 when
 * any failed (2, for a bad configuration, is the caller's).
 */
import type { Logger } from 'pino';
import { runPoll } from './collectors/context.js';
import type { PollOutcome } from './collectors/context.js';
import { collectorList } from './collectors/index.js';
import { createSharedCache } from './collectors/shared.js';
import type { Collector } from './collectors/types.js';
import type { CollectorName } from './config/schema.js';
import type { ClusterConfig, Config, ResolvedCollectorOptions } from './config/types.js';
import { createClient } from './couchbase/client.js';
import { describeError } from './errors.js';
import { CronSpec, formatSlot } from './cron.js';
import { packageVersion } from './metrics/build.js';

export interface CheckRow {
  cluster: string;
  collector: string;
  endpoint: string;
  status: string;
  latencyMs: number | undefined;
  series: string;
  detail: string;
}

export interface CheckResult {
  rows: CheckRow[];
  outcomes: Array<{ cluster: string; outcome: PollOutcome }>;
  failed: number;
}

export async function checkCluster(cluster: ClusterConfig, collectors: readonly Collector[], log?: Logger): Promise<CheckResult> {
  const client = createClient({
    cluster: cluster.name,
    url: cluster.url,
    username: cluster.username,
    password: cluster.password,
    tls: cluster.tls,
    concurrency: cluster.concurrency,
    connectTimeout: cluster.connectTimeout,
    requestTimeout: cluster.requestTimeout,
    maxResponseBytes: cluster.maxResponseBytes,
    userAgent: `cbwatch/${packageVersion()} (check)`,
  });
  const shared = createSharedCache();
  const enabled = collectors.flatMap((collector) => {
    const options = cluster.collectors[collector.name as CollectorName] as ResolvedCollectorOptions;
    return options.enabled ? [{ collector, options }] : [];
  });
  // Every collector at once, under one deadline (the longest poll timeout): against a hanging cluster the
  // check takes one timeout, not the sum of them.
  const deadline = AbortSignal.timeout(Math.max(1000, ...enabled.map((e) => e.options.timeout)));
  let results: PollOutcome[];
  try {
    results = await Promise.all(
      enabled.map(({ collector, options }) => runPoll({ collector, cluster, options: options as never, client, shared, signal: deadline, ...(log ? { log } : {}) })),
    );
  } finally {
    await client.close();
  }
  const rows: CheckRow[] = [];
  const outcomes: Array<{ cluster: string; outcome: PollOutcome }> = [];
  let failed = 0;
  for (const outcome of results) {
    outcomes.push({ cluster: cluster.name, outcome });
    if (!outcome.ok) failed++;
    rows.push(...rowsOf(cluster.name, outcome));
  }
  return { rows, outcomes, failed };
}

function rowsOf(cluster: string, o: PollOutcome): CheckRow[] {
  const byEndpoint = new Map<string, { codes: Map<string, number>; maxMs: number; perms: Set<string> }>();
  for (const r of o.requests) {
    let e = byEndpoint.get(r.endpoint);
    if (!e) {
      e = { codes: new Map(), maxMs: 0, perms: new Set() };
      byEndpoint.set(r.endpoint, e);
    }
    e.codes.set(r.code, (e.codes.get(r.code) ?? 0) + 1);
    e.maxMs = Math.max(e.maxMs, r.durationSeconds * 1000);
    const perms = (r.error as { permissions?: readonly string[] } | undefined)?.permissions ?? [];
    for (const p of perms) e.perms.add(p);
  }
  const state = o.notApplicable ? 'skipped' : o.ok ? 'ok' : 'FAILED';
  const skippedItems = [...o.skipped.entries()].map(([k, n]) => `${n} skipped (${k})`).join(', ');
  const detail = o.notApplicable ?? (o.ok ? [o.note, skippedItems].filter((x) => x !== undefined && x !== '').join('; ') : describeError(o.error));
  const rows: CheckRow[] = [];
  let first = true;
  for (const [endpoint, e] of byEndpoint) {
    const status = [...e.codes.entries()].map(([c, n]) => (n > 1 ? `${c}×${n}` : c)).join(' ');
    rows.push({
      cluster,
      collector: first ? `${o.collector} (${state})` : '',
      endpoint,
      status,
      latencyMs: e.maxMs,
      series: first ? String(o.set.size) : '',
      detail: e.perms.size > 0 ? `missing permission: ${[...e.perms].join(' or ')}` : first ? detail : '',
    });
    first = false;
  }
  // No request of its own: the collector used an answer another collector fetched in this poll round.
  if (rows.length === 0) rows.push({ cluster, collector: `${o.collector} (${state})`, endpoint: '-', status: '-', latencyMs: undefined, series: String(o.set.size), detail: detail || 'no request of its own (answer shared with another collector)' });
  else if (!o.ok && rows.every((r) => !r.detail.startsWith('missing permission'))) (rows[0] as CheckRow).detail = detail;
  return rows;
}

export function formatTable(rows: readonly CheckRow[]): string {
  const head = ['CLUSTER', 'COLLECTOR', 'ENDPOINT', 'STATUS', 'LATENCY', 'SERIES', 'DETAIL'];
  const cells = rows.map((r) => [r.cluster, r.collector, r.endpoint, r.status, r.latencyMs === undefined ? '' : `${r.latencyMs.toFixed(0)}ms`, r.series, r.detail]);
  const widths = head.map((h, i) => Math.min(60, Math.max(h.length, ...cells.map((c) => (c[i] ?? '').length))));
  const line = (c: string[]): string => c.map((v, i) => (i === c.length - 1 ? v : v.padEnd(widths[i] ?? 0))).join('  ').trimEnd();
  return [line(head), ...cells.map(line)].join('\n');
}

/**
 * The collectors on a cron schedule, with their next slot: `check` polls every collector once, now, whatever its
 * schedule, and says when the daemon would poll the scheduled ones.
 */
export function scheduleLines(config: Config): string[] {
  const out: string[] = [];
  for (const cluster of config.clusters) {
    for (const [name, o] of Object.entries(cluster.collectors) as Array<[string, ResolvedCollectorOptions]>) {
      if (!o.enabled || o.schedule === undefined) continue;
      const spec = new CronSpec(o.schedule, o.timezone);
      try {
        out.push(`${cluster.name} ${name}: polled now by check; the daemon polls it at ${spec.describe()}, next ${formatSlot(spec.nextSlot(), o.timezone)}`);
      } finally {
        spec.dispose();
      }
    }
  }
  return out;
}

export async function runCheck(config: Config, write: (s: string) => void, log?: Logger): Promise<number> {
  let failed = 0;
  const all: CheckRow[] = [];
  for (const r of await Promise.all(config.clusters.map((cluster) => checkCluster(cluster, collectorList(), log)))) {
    failed += r.failed;
    all.push(...r.rows);
  }
  write(`${formatTable(all)}\n`);
  for (const line of scheduleLines(config)) write(`${line}\n`);
  write(failed === 0 ? 'all collectors succeeded\n' : `${failed} collector(s) failed\n`);
  return failed === 0 ? 0 : 1;
}
