/**
 * The exporter's own families, as data: names, types, help and labels. Apart from src/metrics/self.ts (the live
 * prom-client metrics of the HTTP thread), so that the collection worker, which needs the definitions
 * (src/metrics/store.ts), does not load prom-client (issue 26, item 2).
 */
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
  collectorNextSlot: defineFamily(X, 'cbwatch_collector_next_slot_timestamp_seconds', 'gauge', 'When a collector polled on a cron schedule (its `schedule` option) is due next: the wall-clock time of its next slot, planned again after every poll. Absent for collectors polled on an interval.', ['couchbase_cluster', 'collector'], 'timestamp_seconds'),
  collectorOverdue: defineFamily(X, 'cbwatch_collector_overdue', 'gauge', 'Whether the collector\'s next poll is overdue (1): it was due (an interval after the last poll on the monotonic clock, or its cron slot on either clock) and its deadline and 2 s more passed with no poll finished. An overdue collector also reports success 0 and its series are withdrawn.', ['couchbase_cluster', 'collector']),
  reloadSuccessful: defineFamily(X, 'cbwatch_config_last_reload_successful', 'gauge', 'Whether the latest configuration reload (SIGHUP or POST /-/reload) succeeded (1) or failed and the previous configuration is still running (0); 1 before any reload.'),
  reloadSuccessTime: defineFamily(X, 'cbwatch_config_last_reload_success_timestamp_seconds', 'gauge', 'When the configuration was last loaded successfully (at start or by a reload).', [], 'timestamp_seconds'),
  logLinesDropped: defineFamily(X, 'cbwatch_log_lines_dropped_total', 'counter', 'Log lines the log destination (stderr) refused and cbwatch dropped, by reason: closed (the reader of the pipe is gone, EPIPE), no_space (a full disk), would_block (a pipe that stayed full), other. The exporter keeps serving; only the lines are lost.', ['reason']),
  couchbaseRequests: defineFamily(X, 'cbwatch_couchbase_requests_total', 'counter', 'Requests made to Couchbase, by route template and status code (an unusual status as its class: 2xx, 4xx…; or timeout, network, aborted, too_large, over_budget).', ['couchbase_cluster', 'endpoint', 'code']),
  couchbaseDuration: defineFamily(X, 'cbwatch_couchbase_request_duration_seconds', 'histogram', 'Latency of requests to Couchbase by route template.', ['couchbase_cluster', 'endpoint'], 'seconds'),
  slowReaders: defineFamily(X, 'cbwatch_http_slow_readers_closed_total', 'counter', 'Scrapes whose client read the body too slowly: the connection was closed when the write deadline passed (10 s plus 1 s per MiB of body), which gave its request slot back.'),
  reloadFailures: defineFamily(X, 'cbwatch_config_reload_failures_total', 'counter', 'Configuration reloads (SIGHUP or POST /-/reload) that failed; the previous configuration stayed in force.'),
  httpServed: defineFamily(X, 'cbwatch_http_requests_served_total', 'counter', 'HTTP requests this exporter answered (scrapes of the telemetry path among them), by handler (the route template, e.g. /metrics; other when no route matched) and status code (refusals such as 401, 429 and 503 included). A scrape shows the requests answered up to a second before it.', ['handler', 'code']),
} as const;

export const SELF_FAMILIES: readonly FamilyDef[] = Object.values(SELF);
