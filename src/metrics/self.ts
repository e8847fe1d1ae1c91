/**
 * The exporter's own metrics. Per-collector status families are derived from the collector statuses at render
 * time. Webhook counters are live prom-client metrics in `selfRegistry` (on the thread that serves HTTP);
 * the Couchbase request counter and histogram live in `requestRegistry`, on the thread that polls (the
 * collection worker), which renders them as a part of its own. Two registries, so that no family is written
 * by both threads.
 */
import client from 'prom-client';
import type { RequestRecord } from '../couchbase/client.js';
import { LOG_DROP_REASONS, onLogDrop } from '../log.js';
import { defineFamily } from './family.js';
import type { FamilyDef } from './family.js';

const X = 'exporter';

export const SELF = {
  up: defineFamily(X, 'couchbase_up', 'gauge', 'Whether the cluster\'s REST API answers (1) or not (0): the latest reachability probe (an authenticated GET /pools/default/nodeServices every probe_interval, default 15s) got a 2xx answer in time.', ['couchbase_cluster']),
  buildInfo: defineFamily(X, 'cbwatch_build_info', 'gauge', 'Build information of the running cbwatch, value 1.', ['version', 'revision', 'branch', 'build_date', 'nodejs_version'], 'info'),
  collectorSuccess: defineFamily(X, 'cbwatch_collector_success', 'gauge', 'Whether the latest poll of the collector succeeded (1) or failed (0).', ['couchbase_cluster', 'collector']),
  collectorDuration: defineFamily(X, 'cbwatch_collector_duration_seconds', 'gauge', 'Wall time of the latest poll of the collector.', ['couchbase_cluster', 'collector'], 'seconds'),
  collectorLastSuccess: defineFamily(X, 'cbwatch_collector_last_success_timestamp_seconds', 'gauge', 'When the collector last finished a poll successfully (absent before its first success).', ['couchbase_cluster', 'collector'], 'timestamp_seconds'),
  collectorSeries: defineFamily(X, 'cbwatch_collector_series', 'gauge', 'Number of series the collector produced in its latest poll.', ['couchbase_cluster', 'collector']),
  collectorRequests: defineFamily(X, 'cbwatch_collector_requests', 'gauge', 'Requests the latest poll of the collector made to Couchbase (request planning: tasks, remote clusters, replications x stats).', ['couchbase_cluster', 'collector']),
  collectorSkipped: defineFamily(X, 'cbwatch_collector_skipped_items', 'gauge', 'Items the latest poll skipped because they did not parse or no longer exist (logged at debug).', ['couchbase_cluster', 'collector', 'reason']),
  collectorItemErrors: defineFamily(X, 'cbwatch_collector_item_errors_total', 'counter', 'Items (a bucket, replication, stat, node, index…) whose request or answer failed while the rest of the poll succeeded; only that item\'s series are missing. By reason: http_4xx, http_5xx, not_found, forbidden, timeout, network, bad_body, too_large, other.', ['couchbase_cluster', 'collector', 'reason']),
  collectorDroppedValues: defineFamily(X, 'cbwatch_collector_dropped_values_total', 'counter', 'Numbers from Couchbase the exporter refused to export, by reason: non_finite (NaN, Infinity), unavailable_marker (2^64-1, Couchbase\'s "no value"), negative_counter (a negative value for a counter). The series is absent instead.', ['couchbase_cluster', 'collector', 'reason']),
  collectorCapped: defineFamily(X, 'cbwatch_collector_capped_total', 'counter', 'What the limits on upstream-named data left out or shortened, by what: dynamic_families (a stat outside the catalog not exported because the collector already has max_dynamic_families such families in this poll), label_value_length (a label value over max_label_value_length bytes, exported shortened: its prefix, ~ and a hash of the whole value).', ['couchbase_cluster', 'collector', 'what']),
  collectorApplicable: defineFamily(X, 'cbwatch_collector_applicable', 'gauge', 'Whether the collector applies to the cluster (0 when e.g. the cluster runs no Search service).', ['couchbase_cluster', 'collector']),
  collectorBackoff: defineFamily(X, 'cbwatch_collector_backoff_seconds', 'gauge', 'How long the collector\'s next poll is put off beyond its interval because its polls keep hitting their deadline (doubling per timeout, at most 4 intervals, so polls are at most 5 intervals apart); 0 after a poll that finished.', ['couchbase_cluster', 'collector'], 'seconds'),
  collectorInterval: defineFamily(X, 'cbwatch_collector_interval_seconds', 'gauge', 'The collector\'s configured polling interval. With cbwatch_collector_last_success_timestamp_seconds it says how many intervals have passed without a successful poll (CbwatchCollectorOverdue).', ['couchbase_cluster', 'collector'], 'seconds'),
  reloadSuccessful: defineFamily(X, 'cbwatch_config_last_reload_successful', 'gauge', 'Whether the latest configuration reload (SIGHUP or POST /-/reload) succeeded (1) or failed and the previous configuration is still running (0); 1 before any reload.'),
  reloadSuccessTime: defineFamily(X, 'cbwatch_config_last_reload_success_timestamp_seconds', 'gauge', 'When the configuration was last loaded successfully (at start or by a reload).', [], 'timestamp_seconds'),
  logLinesDropped: defineFamily(X, 'cbwatch_log_lines_dropped_total', 'counter', 'Log lines the log destination (stderr) refused and cbwatch dropped, by reason: closed (the reader of the pipe is gone, EPIPE), no_space (a full disk), would_block (a pipe that stayed full), other. The exporter keeps serving; only the lines are lost.', ['reason']),
  couchbaseRequests: defineFamily(X, 'cbwatch_couchbase_requests_total', 'counter', 'Requests made to Couchbase, by route template and status code (an unusual status as its class: 2xx, 4xx…; or timeout, network, aborted, too_large, over_budget).', ['couchbase_cluster', 'endpoint', 'code']),
  couchbaseDuration: defineFamily(X, 'cbwatch_couchbase_request_duration_seconds', 'histogram', 'Latency of requests to Couchbase by route template.', ['couchbase_cluster', 'endpoint'], 'seconds'),
  httpServed: defineFamily(X, 'cbwatch_http_requests_served_total', 'counter', 'HTTP requests this exporter answered (scrapes of the telemetry path among them), by handler (the route template, e.g. /metrics; other when no route matched) and status code (refusals such as 401, 429 and 503 included). A scrape shows the requests answered up to a second before it.', ['handler', 'code']),
} as const;

export const SELF_FAMILIES: readonly FamilyDef[] = Object.values(SELF);

export const selfRegistry = new client.Registry();

/** Requests to Couchbase: filled where the clients run (the collection worker, or the process inline). */
export const requestRegistry = new client.Registry();

/**
 * Requests this exporter answered: counted on the HTTP thread, rendered by the exposition at most once a second
 * (with the process metrics), so that counting a scrape does not make the next scrape render and join its body anew.
 */
export const servedRegistry = new client.Registry();

/** Bumped on every request observed, so the request part is re-rendered only when it changed. */
let requestVersion = 0;
export function requestMetricsVersion(): number {
  return requestVersion;
}

/** Bumped on every change of a live self-metric, so the renderer can memoise their text. */
let liveVersion = 0;
export function liveSelfVersion(): number {
  return liveVersion;
}
export function touchSelf(): void {
  liveVersion++;
}

const couchbaseRequests = new client.Counter({
  name: SELF.couchbaseRequests.name,
  help: SELF.couchbaseRequests.help,
  labelNames: ['couchbase_cluster', 'endpoint', 'code'] as const,
  registers: [requestRegistry],
});

const couchbaseDuration = new client.Histogram({
  name: SELF.couchbaseDuration.name,
  help: SELF.couchbaseDuration.help,
  labelNames: ['couchbase_cluster', 'endpoint'] as const,
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
  registers: [requestRegistry],
});

const reloadSuccessful = new client.Gauge({ name: SELF.reloadSuccessful.name, help: SELF.reloadSuccessful.help, registers: [selfRegistry] });
const reloadSuccessTime = new client.Gauge({ name: SELF.reloadSuccessTime.name, help: SELF.reloadSuccessTime.help, registers: [selfRegistry] });

const logLinesDropped = new client.Counter({ name: SELF.logLinesDropped.name, help: SELF.logLinesDropped.help, labelNames: ['reason'] as const, registers: [selfRegistry] });
/** Every reason from the start (0), so that increase() sees the first drop. */
function seedLogDrops(): void {
  for (const reason of LOG_DROP_REASONS) logLinesDropped.inc({ reason }, 0);
}
seedLogDrops();
onLogDrop((reason) => {
  logLinesDropped.inc({ reason });
  touchSelf();
});

const httpServed = new client.Counter({
  name: SELF.httpServed.name,
  help: SELF.httpServed.help,
  labelNames: ['handler', 'code'] as const,
  registers: [servedRegistry],
});

let servedVersion = 0;
/** Changes whenever a request is counted in `servedRegistry`. */
export function servedMetricsVersion(): number {
  return servedVersion;
}

/** Count one answered request: `handler` is the route template (never a raw path), `code` the status sent. */
export function countServed(handler: string, code: number): void {
  httpServed.inc({ handler, code: String(code) });
  servedVersion++;
}

/** Record the outcome of loading the configuration (at start: success) on the HTTP thread's live metrics. */
export function recordConfigLoad(ok: boolean, now = Date.now()): void {
  reloadSuccessful.set(ok ? 1 : 0);
  if (ok) reloadSuccessTime.set(Math.floor(now / 1000));
  touchSelf();
}

/** Status codes Couchbase's services answer with, kept as they are in the `code` label. */
const USUAL_CODES = new Set([200, 201, 202, 204, 301, 302, 304, 307, 308, 400, 401, 403, 404, 405, 408, 409, 413, 429, 500, 501, 502, 503, 504]);

/**
 * The `code` label of a request: a usual status as it is, any other status as its class (`2xx`, `4xx`…, or
 * `other` outside 100-599), failures by name. The status comes from upstream (any three digits parse): without
 * this a broken server or proxy could add a series per endpoint for every code it invents.
 */
export function codeLabel(code: string): string {
  if (!/^\d+$/.test(code)) return code;
  const n = Number(code);
  if (USUAL_CODES.has(n)) return code;
  return n >= 100 && n <= 599 ? `${code.charAt(0)}xx` : 'other';
}

/** The client's `observe` hook. */
export function observeRequest(cluster: string, rec: RequestRecord): void {
  couchbaseRequests.inc({ couchbase_cluster: cluster, endpoint: rec.endpoint, code: codeLabel(rec.code) });
  couchbaseDuration.observe({ couchbase_cluster: cluster, endpoint: rec.endpoint }, rec.durationSeconds);
  requestVersion++;
}

/** Forget every live series of a cluster (tests, reloads). */
export function resetSelf(): void {
  selfRegistry.resetMetrics();
  seedLogDrops();
  requestRegistry.resetMetrics();
  servedRegistry.resetMetrics();
  servedVersion++;
  requestVersion++;
  touchSelf();
}
