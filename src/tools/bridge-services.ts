/**
 * The native-metrics bridge for the service statistics: recording rules that give the families of the `query`,
 * `index`, `search_index`, `eventing`, `analytics` and `processes` collectors from Couchbase's own per-node series
 * (7.0+, each node's `/metrics`), where a native metric maps cleanly. Read by gen-bridge.ts, which writes them with
 * the bucket and XDCR rules.
 *
 * Each rule follows how the collector computes the family from the same native series on the range source (one
 * node's value; see the collectors' headers), so both sources agree:
 * - a level is the native gauge, summed by cbwatch's labels (Couchbase's extra labels, `job` and `instance` drop out);
 * - a rate is `rate()` of the native counter over the bridge's window (the collector: the increase since its
 *   previous poll, per second);
 * - a mean per event is the ratio of two counters' rates over the same window, absent when the divisor did not
 *   move (no request, no latency);
 * - eventing's running totals are the native counters themselves, summed over the eventing nodes, as ns_server gives
 *   `eventing/<function>/<stat>` (ns_server@7.6.2:src/stat_names_mappings.erl: `sum by (name, functionName)`, no rate).
 *
 * Native names, types and units: Couchbase's 8.0 metadata files (docs-server, `metrics-reference/attachments`:
 * n1ql, index, fts, eventing, cm), and for analytics ns_server@7.6.2:src/stat_names_mappings.erl (the `cbas_*`
 * renames); the mapping from the pre-7.0 names: stat_names_mappings.erl `pre_70_stat_to_prom_query`. Labels: every
 * native series carries `couchbase_cluster` and `node` from the scrape's relabelling (docs/native-metrics.md).
 */

/** Stands for the rate window in an expression (gen-bridge.ts replaces it). */
export const WINDOW = '{{RATE_WINDOW}}';

/** The service whose metadata names a native metric (`cbas`: none in the 8.0 metadata files; `cm`: the cluster manager's). */
export type NativeService = 'n1ql' | 'index' | 'fts' | 'eventing' | 'cbas' | 'cm';

export interface ServiceNative {
  readonly metric: string;
  readonly service: NativeService;
  /** The type the metadata gives (or, for cbas, ns_server's mapping). */
  readonly type: 'counter' | 'gauge';
}

export interface ServiceBridgeRule {
  readonly record: string;
  /** PromQL, `{{RATE_WINDOW}}` standing for the rate window. */
  readonly expr: string;
  /** The native series it reads. */
  readonly natives: readonly ServiceNative[];
  /** How, in words (docs/native-metrics.md). */
  readonly how: string;
}

const n = (metric: string, service: NativeService, type: 'counter' | 'gauge'): ServiceNative => ({ metric, service, type });

/** `sum by (by) (e)`. */
const sumBy = (by: string, e: string): string => `sum by (${by}) (${e})`;
/** A native series renamed label by label (`functionName` → `function`) before summing. */
const renamed = (e: string, renames: Readonly<Record<string, string>>): string =>
  Object.entries(renames).reduce((acc, [from, to]) => `label_replace(${acc}, "${to}", "$1", "${from}", "(.*)")`, e);

interface Shape {
  /** cbwatch's labels besides couchbase_cluster. */
  readonly labels: readonly string[];
  /** Native label → cbwatch label. */
  readonly renames?: Readonly<Record<string, string>>;
  /** Matchers on the native series (e.g. the processes cbwatch exports). */
  readonly matchers?: string;
}

function by(s: Shape): string {
  return ['couchbase_cluster', ...s.labels].join(', ');
}

function sel(s: Shape, x: ServiceNative, rate: boolean): string {
  const m = s.matchers ? `${x.metric}{${s.matchers}}` : x.metric;
  return renamed(rate ? `rate(${m}[${WINDOW}])` : m, s.renames ?? {});
}

/**
 * The unit change, as a divisor (`1e9`: nanoseconds to seconds; `100`: a percentage to a ratio). Dividing keeps
 * the exact value where multiplying by the reciprocal would not (0.3 s, not 0.30000000000000004).
 */
type Divisor = '1e9' | '100' | undefined;
const scaled = (e: string, div: Divisor): string => (div === undefined ? e : `(${e}) / ${div}`);
const divText = (div: Divisor): string => (div === undefined ? '' : ` ÷ ${div}`);

/** A level: the native gauge (÷ div). */
function level(record: string, s: Shape, x: ServiceNative, div?: Divisor): ServiceBridgeRule {
  return { record, expr: scaled(sumBy(by(s), sel(s, x, false)), div), natives: [x], how: `\`${x.metric}\`${divText(div)}` };
}

/** A rate per second of the native counter. */
function rate(record: string, s: Shape, x: ServiceNative): ServiceBridgeRule {
  return { record, expr: sumBy(by(s), sel(s, x, true)), natives: [x], how: `rate of \`${x.metric}\`` };
}

/** A running total Couchbase keeps: the native counter, summed. */
function total(record: string, s: Shape, x: ServiceNative): ServiceBridgeRule {
  return { record, expr: sumBy(by(s), sel(s, x, false)), natives: [x], how: `\`${x.metric}\` (the running total), summed over the nodes` };
}

/** A mean per event: rate(num) / rate(den) (÷ div), absent when den did not move. */
function meanOf(record: string, s: Shape, num: ServiceNative, den: ServiceNative, div?: Divisor): ServiceBridgeRule {
  const e = `${sumBy(by(s), sel(s, num, true))}\n/ (${sumBy(by(s), sel(s, den, true))} > 0)`;
  return { record, expr: scaled(e, div), natives: [num, den], how: `rate of \`${num.metric}\` / rate of \`${den.metric}\`${divText(div)}; absent when \`${den.metric}\` did not move` };
}

// ---- query (n1ql metadata; no labels besides the node) ----

const QUERY: Shape = { labels: ['node'] };
const q = (stat: string, type: 'counter' | 'gauge'): ServiceNative => n(`n1ql_${stat}`, 'n1ql', type);
/** The duration bands of the slow-request counters, as the `over` label gives them (seconds). */
const BANDS: readonly (readonly [string, string])[] = [
  ['250ms', '0.25'],
  ['500ms', '0.5'],
  ['1000ms', '1'],
  ['5000ms', '5'],
];

function slowRequests(): ServiceBridgeRule {
  const natives = BANDS.map(([band]) => q(`requests_${band}`, 'counter'));
  const parts = BANDS.map(([band, over]) => `label_replace(rate(n1ql_requests_${band}[${WINDOW}]), "over", "${over}", "", "")`);
  return {
    record: 'couchbase_query_slow_requests_per_second',
    expr: sumBy(`${by(QUERY)}, over`, parts.join(' or ')),
    natives,
    how: `rate of \`n1ql_requests_250ms\`, \`_500ms\`, \`_1000ms\`, \`_5000ms\`, labelled \`over\` 0.25, 0.5, 1, 5`,
  };
}

const QUERY_RULES: readonly ServiceBridgeRule[] = [
  rate('couchbase_query_requests_per_second', QUERY, q('requests', 'counter')),
  rate('couchbase_query_errors_per_second', QUERY, q('errors', 'counter')),
  rate('couchbase_query_invalid_requests_per_second', QUERY, q('invalid_requests', 'counter')),
  rate('couchbase_query_warnings_per_second', QUERY, q('warnings', 'counter')),
  rate('couchbase_query_selects_per_second', QUERY, q('selects', 'counter')),
  slowRequests(),
  meanOf('couchbase_query_request_time_seconds', QUERY, q('request_time', 'counter'), q('requests', 'counter'), '1e9'),
  meanOf('couchbase_query_service_time_seconds', QUERY, q('service_time', 'counter'), q('requests', 'counter'), '1e9'),
  meanOf('couchbase_query_results_per_request', QUERY, q('result_count', 'counter'), q('requests', 'counter')),
  meanOf('couchbase_query_response_bytes_per_request', QUERY, q('result_size', 'counter'), q('requests', 'counter')),
  level('couchbase_query_active_requests', QUERY, q('active_requests', 'gauge')),
  level('couchbase_query_queued_requests', QUERY, q('queued_requests', 'gauge')),
  rate('couchbase_query_timeouts_per_second', QUERY, q('timeouts', 'counter')),
  rate('couchbase_query_cancelled_per_second', QUERY, q('cancelled', 'counter')),
  rate('couchbase_query_prepared_per_second', QUERY, q('prepared', 'counter')),
  level('couchbase_query_memory_bytes', QUERY, q('node_memory', 'gauge')),
  level('couchbase_query_load', QUERY, q('load', 'gauge')),
];

// ---- index (index metadata: per index `bucket, scope, collection, index`; per node no label) ----

const INDEX: Shape = { labels: ['bucket', 'scope', 'collection', 'index', 'node'] };
const INDEX_NODE: Shape = { labels: ['node'] };
const ix = (stat: string, type: 'counter' | 'gauge'): ServiceNative => n(`index_${stat}`, 'index', type);

/**
 * The resident ratio as the collector computes it: recs_in_mem ÷ (recs_in_mem + recs_on_disk) (ns_server's
 * `index_resident_percent`, menelaus_stats.erl), absent with no record; the indexer's resident_percent ÷ 100 for an
 * index that does not report the records.
 */
function residentRatio(): ServiceBridgeRule {
  const inMem = ix('recs_in_mem', 'gauge');
  const onDisk = ix('recs_on_disk', 'gauge');
  const pct = ix('resident_percent', 'gauge');
  const b = by(INDEX);
  const mem = sumBy(b, inMem.metric);
  const all = `(${mem} + ${sumBy(b, onDisk.metric)})`;
  return {
    record: 'couchbase_index_resident_ratio',
    expr: `${mem}\n/ (${all} > 0)\nor (${sumBy(b, pct.metric)}) / 100\nunless on (${b}) ${mem}`,
    natives: [inMem, onDisk, pct],
    how: '`index_recs_in_mem` / (`index_recs_in_mem` + `index_recs_on_disk`), absent with no record; `index_resident_percent` ÷ 100 for an index without the records',
  };
}

function cacheHitRatio(): ServiceBridgeRule {
  const hits = ix('cache_hits', 'counter');
  const misses = ix('cache_misses', 'counter');
  const b = by(INDEX);
  const h = sumBy(b, `rate(${hits.metric}[${WINDOW}])`);
  return {
    record: 'couchbase_index_cache_hit_ratio',
    expr: `${h}\n/ ((${h} + ${sumBy(b, `rate(${misses.metric}[${WINDOW}])`)}) > 0)`,
    natives: [hits, misses],
    how: 'rate of `index_cache_hits` / (rate of `index_cache_hits` + rate of `index_cache_misses`); absent when the index was not read',
  };
}

function ramRatio(): ServiceBridgeRule {
  const used = ix('memory_used_total', 'gauge');
  const quota = ix('memory_quota', 'gauge');
  const b = by(INDEX_NODE);
  return {
    record: 'couchbase_index_node_ram_ratio',
    expr: `${sumBy(b, used.metric)}\n/ (${sumBy(b, quota.metric)} > 0)`,
    natives: [used, quota],
    how: '`index_memory_used_total` / `index_memory_quota` of the node (not capped at 1)',
  };
}

const INDEX_RULES: readonly ServiceBridgeRule[] = [
  level('couchbase_index_items', INDEX, ix('items_count', 'gauge')),
  level('couchbase_index_docs_pending', INDEX, ix('num_docs_pending', 'gauge')),
  level('couchbase_index_docs_queued', INDEX, ix('num_docs_queued', 'gauge')),
  residentRatio(),
  level('couchbase_index_fragmentation_ratio', INDEX, ix('frag_percent', 'gauge'), '100'),
  level('couchbase_index_data_size_bytes', INDEX, ix('data_size', 'gauge')),
  level('couchbase_index_disk_size_bytes', INDEX, ix('disk_size', 'gauge')),
  level('couchbase_index_memory_used_bytes', INDEX, ix('memory_used', 'gauge')),
  meanOf('couchbase_index_scan_latency_seconds', INDEX, ix('total_scan_duration', 'counter'), ix('num_rows_returned', 'counter'), '1e9'),
  rate('couchbase_index_requests_per_second', INDEX, ix('num_requests', 'counter')),
  rate('couchbase_index_rows_returned_per_second', INDEX, ix('num_rows_returned', 'counter')),
  cacheHitRatio(),
  level('couchbase_index_node_memory_quota_bytes', INDEX_NODE, ix('memory_quota', 'gauge')),
  level('couchbase_index_node_memory_used_bytes', INDEX_NODE, ix('memory_used_total', 'gauge')),
  ramRatio(),
];

// ---- Search (fts metadata: per index `bucket, scope, collection, index`, summed over scope and collection) ----

const SEARCH: Shape = { labels: ['bucket', 'index', 'node'] };
const SEARCH_NODE: Shape = { labels: ['node'] };
const fts = (stat: string, type: 'counter' | 'gauge'): ServiceNative => n(`fts_${stat}`, 'fts', type);

const SEARCH_RULES: readonly ServiceBridgeRule[] = [
  // Typed counter in the metadata, but a level (the documents the index holds; ns_server reads it as a gauge).
  level('couchbase_search_index_docs', SEARCH, fts('doc_count', 'counter')),
  level('couchbase_search_index_pending_mutations', SEARCH, fts('num_mutations_to_index', 'gauge')),
  rate('couchbase_search_index_queries_per_second', SEARCH, fts('total_queries', 'counter')),
  rate('couchbase_search_index_query_errors_per_second', SEARCH, fts('total_queries_error', 'counter')),
  meanOf('couchbase_search_index_query_latency_seconds', SEARCH, fts('total_request_time', 'counter'), fts('total_queries', 'counter'), '1e9'),
  level('couchbase_search_index_disk_size_bytes', SEARCH, fts('num_bytes_used_disk', 'gauge')),
  level('couchbase_search_node_memory_bytes', SEARCH_NODE, fts('num_bytes_used_ram', 'gauge')),
];

// ---- eventing (per function: the native `functionName`, summed over the eventing nodes) ----

const EVENTING: Shape = { labels: ['function'], renames: { functionName: 'function' } };
const ev = (stat: string, type: 'counter' | 'gauge'): ServiceNative => n(`eventing_${stat}`, 'eventing', type);

const EVENTING_RULES: readonly ServiceBridgeRule[] = [
  level('couchbase_eventing_dcp_backlog', EVENTING, ev('dcp_backlog', 'gauge')),
  total('couchbase_eventing_on_update_success_total', EVENTING, ev('on_update_success', 'counter')),
  total('couchbase_eventing_on_update_failures_total', EVENTING, ev('on_update_failure', 'counter')),
  total('couchbase_eventing_on_delete_success_total', EVENTING, ev('on_delete_success', 'counter')),
  total('couchbase_eventing_on_delete_failures_total', EVENTING, ev('on_delete_failure', 'counter')),
  total('couchbase_eventing_timeouts_total', EVENTING, ev('timeout_count', 'counter')),
];

// ---- analytics (no cbas metadata file in 8.0: the names of ns_server@7.6.2:src/stat_names_mappings.erl, the
// `cbas_*` renames of the `@cbas` stats; node-level, no labels) ----

const ANALYTICS: Shape = { labels: ['node'] };
const cbas = (metric: string, type: 'counter' | 'gauge'): ServiceNative => n(metric, 'cbas', type);

/** Garbage-collection time: milliseconds a second on the native counter, seconds a second in cbwatch. */
function gcSeconds(): ServiceBridgeRule {
  const x = cbas('cbas_gc_time_milliseconds_total', 'counter');
  return { record: 'couchbase_analytics_gc_seconds_per_second', expr: `(${sumBy(by(ANALYTICS), sel(ANALYTICS, x, true))}) / 1000`, natives: [x], how: `rate of \`${x.metric}\` ÷ 1000` };
}

const ANALYTICS_RULES: readonly ServiceBridgeRule[] = [
  level('couchbase_analytics_heap_used_bytes', ANALYTICS, cbas('cbas_heap_memory_used_bytes', 'gauge')),
  level('couchbase_analytics_disk_used_bytes', ANALYTICS, cbas('cbas_disk_used_bytes_total', 'gauge')),
  level('couchbase_analytics_threads', ANALYTICS, cbas('cbas_thread_count', 'gauge')),
  level('couchbase_analytics_system_load_average', ANALYTICS, cbas('cbas_system_load_average', 'gauge')),
  rate('couchbase_analytics_gc_per_second', ANALYTICS, cbas('cbas_gc_count_total', 'counter')),
  gcSeconds(),
  rate('couchbase_analytics_io_reads_per_second', ANALYTICS, cbas('cbas_io_reads_total', 'counter')),
  rate('couchbase_analytics_io_writes_per_second', ANALYTICS, cbas('cbas_io_writes_total', 'counter')),
];

// ---- processes and disks (cm metadata: `sysproc_*{proc}`, `sys_disk_usage_ratio{disk}`, 7.6+) ----

const PROCESS: Shape = { labels: ['node', 'process'], renames: { proc: 'process' } };
const DISK: Shape = { labels: ['node', 'disk'] };
const cm = (metric: string): ServiceNative => n(metric, 'cm', 'gauge');

const PROCESS_RULES: readonly ServiceBridgeRule[] = [
  level('couchbase_process_resident_memory_bytes', PROCESS, cm('sysproc_mem_resident')),
  level('couchbase_process_cpu_utilization_ratio', PROCESS, cm('sysproc_cpu_utilization'), '100'),
  level('couchbase_node_disk_usage_ratio', DISK, cm('sys_disk_usage_ratio')),
];

export const SERVICE_BRIDGE_GROUPS: readonly { name: string; rules: readonly ServiceBridgeRule[] }[] = [
  { name: 'cbwatch-native-bridge-query', rules: QUERY_RULES },
  { name: 'cbwatch-native-bridge-index', rules: INDEX_RULES },
  { name: 'cbwatch-native-bridge-search', rules: SEARCH_RULES },
  { name: 'cbwatch-native-bridge-eventing', rules: EVENTING_RULES },
  { name: 'cbwatch-native-bridge-analytics', rules: ANALYTICS_RULES },
  { name: 'cbwatch-native-bridge-processes', rules: PROCESS_RULES },
];
