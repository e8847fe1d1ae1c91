/** docs/metrics.md, generated from the metric catalog (`npm run generate`; a test fails when it is stale). */
import { envelopeRangeDifferences } from './metrics-doc-differences.js';
import { collectorList } from '../collectors/index.js';
import type { FamilyDef } from '../metrics/family.js';
import { allFamilies } from '../catalog.js';
import { TRUTH_RULES } from './metrics-doc-rules.js';
import { LINE_ONLY, NATIVE_MAP, NO_NATIVE_EQUIVALENT } from '../stats/native-map.js';
import type { Matchers, NativeMapRow, NativeSeries } from '../stats/native-map.js';

function cell(s: string): string {
  return s.replace(/\|/g, '\\|').replace(/\n/g, ' ');
}

export function renderMetricsDoc(families: readonly FamilyDef[] = allFamilies()): string {
  const groups = new Map<string, FamilyDef[]>();
  for (const f of families) {
    const g = groups.get(f.collector) ?? [];
    g.push(f);
    groups.set(f.collector, g);
  }
  const described = new Map(collectorList().map((c) => [c.name as string, c]));
  const order = ['exporter', 'webhooks', ...collectorList().map((c) => c.name as string)].filter((g) => groups.has(g));
  for (const g of groups.keys()) if (!order.includes(g)) order.push(g);
  const lines: string[] = [
    '# Metrics reference',
    '',
    '<!-- Generated from the metric catalog (src/catalog.ts) by `npm run generate`. Do not edit. -->',
    '',
    `cbwatch exposes ${families.length} metric families. Every series from a collector also carries the label`,
    '`couchbase_cluster` (the configured cluster name). Units are base units: seconds, bytes, ratios 0–1;',
    'counters end in `_total`; `_info` metrics have the value 1 and carry strings as labels; enumerations are',
    'one-hot gauges (1 for the current value, 0 for the others).',
    '',
    ...TRUTH_RULES,
  ];
  for (const g of order) {
    const fams = (groups.get(g) ?? []).slice().sort((a, b) => a.name.localeCompare(b.name));
    const c = described.get(g);
    lines.push(`## ${g}`, '');
    if (c) lines.push(`${c.description} Default interval: ${c.defaultInterval / 1000}s. Couchbase role needed: ${c.role}.`, '');
    else if (g === 'exporter') lines.push('The exporter itself: collector status, requests to Couchbase, build, reachability.', '');
    else if (g === 'webhooks') lines.push('The Sync Gateway `document_changed` webhook receiver (see [webhooks.md](webhooks.md)).', '');
    lines.push('| metric | type | unit | labels | help |', '|---|---|---|---|---|');
    for (const f of fams) {
      const labels = (g === 'exporter' || g === 'webhooks' ? f.labels : ['couchbase_cluster', ...f.labels]).map((l) => `\`${l}\``).join(', ');
      lines.push(`| \`${f.name}\` | ${f.type} | ${f.unit || '—'} | ${labels || '—'} | ${cell(f.help)} |`);
    }
    lines.push('');
  }
  lines.push(...statisticsSources());
  lines.push(...SERVICE_SOURCES);
  lines.push(...envelopeRangeDifferences());
  lines.push(...PARTIAL_FAILURES);
  return `${lines.join('\n').trimEnd()}\n`;
}

function matchersText(m: Matchers, not?: NativeSeries['notMatchers']): string {
  const parts = Object.entries(m).map(([k, v]) => (typeof v === 'string' ? `${k}="${v}"` : `${k}=~"${v.join('|')}"`));
  for (const [k, v] of Object.entries(not ?? {})) parts.push(`${k}!~"${v.join('|')}"`);
  return parts.length === 0 ? '' : `{${parts.join(',')}}`;
}

function seriesText(xs: readonly NativeSeries[]): string {
  return xs.map((x) => `\`${x.metric}${matchersText(x.matchers, x.notMatchers)}\``).join(' + ');
}

function deriveText(r: NativeMapRow): string {
  const num = seriesText(r.series);
  const den = r.denominator ? seriesText(r.denominator) : '';
  const where = r.section === 'kv' && !r.perBucket ? ` (per node, no bucket label; bucket-wide: ${r.nodeAggregate === 'max' ? 'max' : 'sum'} over nodes)` : r.nodeAggregate === 'max' ? ' (bucket-wide: max over nodes)' : '';
  const scale = r.scale === 1 ? '' : ` × ${r.scale}`;
  switch (r.derive) {
    case 'level':
      return `newest ${num}${scale}${where}${r.absentIn80 ? ' (7.x; not in 8.0: absent there)' : ''}`;
    case 'rate':
      return `increase of ${num} since the previous poll, per second${scale}${where}`;
    case 'mean':
      return `mean of ${num}'s points since the previous poll${scale}${where}`;
    case 'increase_ratio':
      return `increase(${num}) / increase(${den})${scale}`;
    case 'level_ratio':
      return `${num} / ${den}${scale}`;
    case 'complement_ratio':
      return `1 − ${num} / ${den}${scale}`;
    case 'difference':
      return `newest ${num} − newest ${den}${scale}${where}`;
    case 'docs_data_size':
      return `per node: newest \`${r.series[1]?.metric ?? ''}\` while under ${(r.minFileBytesPerVbucket ?? 0) / 1024} KiB × \`${r.series[2]?.metric ?? ''}\`, else \`${r.series[0]?.metric ?? ''}\`; summed over nodes${scale}`;
    case 'fragmentation':
      return `round(100 × (disk − data) / disk) of the nodes' sums, data \`${r.series[0]?.metric ?? ''}\`, disk \`${r.series[1]?.metric ?? ''}\`${r.minFileBytesPerVbucket ? ` − \`${r.series[3]?.metric ?? ''}\`, data per node by the small-file rule` : ''}${scale}`;
  }
}

/** Which API feeds each statistics family on each version, and what changes from the envelopes to the range API. */
function statisticsSources(): string[] {
  const rows = NATIVE_MAP.map((r) => `| \`${r.family}\` | \`${r.legacy}\` | ${deriveText(r)} |`);
  const none = (Object.entries(NO_NATIVE_EQUIVALENT) as Array<[string, Readonly<Record<string, string>>]>).flatMap(([section, m]) =>
    Object.entries(m).map(([stat, why]) => `| ${section === 'kv' ? 'bucket' : 'XDCR'} | \`${cell(stat)}\` | ${cell(why)} |`),
  );
  return [
    '## Statistics sources',
    '',
    'Where `bucket_stats` and `xdcr` read their statistics is set per cluster by `stats_source` (docs/configuration.md):',
    '',
    '| Couchbase version (lowest `clusterCompatibility` of the nodes) | `auto` (default) | `range` | `envelope` |',
    '|---|---|---|---|',
    '| before 7.0 | sample envelopes | fails (the poll says why) | sample envelopes |',
    '| 7.0 and later | `POST /pools/default/stats/range` (the envelopes for 10 minutes after it answers 404 or 405; a 403 fails the poll naming the missing permission) | `POST /pools/default/stats/range` | sample envelopes |',
    '',
    'Sample envelopes: `GET /pools/default/buckets/{bucket}/stats` (and `…/nodes/{node}/stats` with `per_node`) per bucket,',
    'and `GET /pools/default/buckets/{source}/stats/replications%2F…%2F{stat}` per replication and stat (in two tiers).',
    'On 7.0+ Couchbase answers them by translating each legacy name into queries over its native metrics;',
    '8.0 deprecates them. The range API gives those native metrics directly: one query per native name for every',
    'bucket (and node) or replication at once, at most 11 queries per request — 8 requests per `bucket_stats` poll and',
    '2 per `xdcr` poll, whatever the number of buckets, nodes and replications. The queries are dealt out by the size',
    'of their answers in the previous poll, so that no request\'s answer (held whole while it is read) is much larger',
    'than the others. Values are asked raw, one series per node',
    'and every 10 s scrape since the previous poll, so that a counter reset on any node is seen; only without',
    '`per_node`, a metric that nothing but levels read (no rate, no ratio of increases, no window mean) is asked summed',
    'over the nodes (`nodesAggregation: "sum"`), and `cpu_utilization_rate` maxed (`"max"`): the same bucket-wide value,',
    'one series per bucket instead of one per node. `cbwatch check` and the landing page show the source each poll used and why.',
    '',
    '**Merging the nodes.** A bucket-wide value merges the nodes\' values as Couchbase\'s own envelope does',
    '(ns_server menelaus_stats): summed, except `cpu_utilization_rate`, the largest node\'s (a row\'s `nodeAggregate`);',
    'the host stats shown under every bucket (`cpu_*`, `mem_*`, `swap_*`, `cpu_cores_available`) are summed over the nodes',
    'like the rest. A ratio divides the merged numerator by the merged denominator, never a merge of the nodes\' ratios.',
    '',
    '**Partial sums while a node is missing.** Each query asks only the cluster\'s active data nodes (`nodes`: failed-over',
    'and not yet rebalanced-in nodes are left out) and lets the server wait for them 80% of the poll\'s remaining time,',
    'and of the cluster\'s `request_timeout` (`timeout`: 8 s by default). A node that is down ("Node is not available"), slower than that ("Request timed out") or silent (for bucket stats, no series of its own while another node has some; for XDCR, none where it had some in the previous poll, since a node may have no replication stats at all) leaves',
    'a partial answer, and cbwatch reads it as Couchbase\'s UI does: every bucket-wide and XDCR value is the sum (or max)',
    'over the nodes that answered, so `couchbase_bucket_curr_items` drops by the missing node\'s share rather than',
    'vanishing, and the bucket alerts can still fire while a node is down. A rate or ratio over such a sum covers the',
    'answering nodes only. The gap is never silent: `cbwatch_stats_nodes_missing{collector}` counts the nodes missing from',
    'the latest poll, each is one item error of that poll (`cbwatch_collector_item_errors_total`, reason `network` or',
    '`timeout`), the landing page names it, and `cbwatch check` prints it beside the source. A node found down or slow',
    'is not asked again by the same poll\'s later requests; the next poll asks it again. A ratio\'s two parts come from the',
    'nodes that answered both.',
    '',
    '**Time is the exporter\'s.** Every query of a poll covers the same window on the 10 s grid, from the instant after',
    'the previous poll\'s last one (whose points cbwatch already holds) to the poll\'s own clock; the first poll goes one',
    'interval and 20 s back. The parts of a ratio cover the same span, and no time sent by a node moves the window. A point more than 60 s ahead of the exporter\'s clock (a node whose clock is ahead) is dropped and',
    'counted against its node (`cbwatch_stats_future_points_dropped_total{collector,node}`, a warning logged once per',
    'node, the landing page); the other nodes\' values stay, and no sample time exported is later than the poll.',
    'A metric that only levels read (a level, a ratio of levels, the per-node small-file rule) is asked for the',
    'window\'s last instant alone: one point a series, the same newest point.',
    '',
    '**The size of a query.** kv_ops is asked for the 11 operations cbwatch maps (17 series a bucket and node), and a',
    'query\'s window is cut so that its worst case (series × points on one node) stays under Couchbase\'s 200,000-sample',
    'query limit at 1,000 buckets after an hour\'s gap: kv_ops 90 s, one series a bucket 1,790 s (src/stats/range.ts',
    'shows the arithmetic). A rate over a cut window is still exact (it counts from the previous poll\'s point). A 403 is',
    'a missing permission (`cluster.collection[<bucket>:.:.].stats!read`, role Read-Only Admin or Data Monitoring): the poll',
    'fails naming it, with no fallback to the envelopes. A 400\'s text is logged, redacted and cut.',
    '',
    '**What stays the same.** The families, their labels and units, and the rules above: a level is the newest value;',
    'a `_per_second` rate is exact over the time since the previous poll — computed from the native counter itself',
    '(its increase between the newest points of two consecutive answers, a decrease counted as a counter reset), not',
    'from an `irate` over the last two points, so consecutive polls add up to the counter\'s whole increase; an answer',
    'with no newer point leaves the rates out and keeps the levels; a clock step back starts afresh;',
    '`couchbase_bucket_last_sample_timestamp_seconds` and `couchbase_xdcr_last_sample_timestamp_seconds` are the',
    'newest point\'s time. Computed ratios are computed from summed parts as Couchbase computes them for the envelope.',
    '',
    '**What differs with the range API** (a user moving from `envelope` to `range`):',
    '',
    '- The native metrics are scraped every 10 s, so a rate covers the time between the newest scrapes before two',
    '  polls (the envelope: between the newest one-second samples): the same counts, attributed to polls up to',
    '  10 s differently. `couchbase_…_last_sample_timestamp_seconds` moves in 10 s steps.',
    '- `hit_ratio`, `ep_cache_miss_rate` and the `avg_*` times are over the poll interval (increase over increase); the',
    '  envelope\'s are the latest second\'s.',
    '- Host stats shown under every bucket (`cpu_*`, `mem_*`, `swap_*`, `allocstall`, `rest_requests`, `hibernated_*`):',
    '  the bucket-wide value is their sum over the nodes, the max for `cpu_utilization_rate`, as Couchbase\'s envelope',
    '  gives them (menelaus_stats get_aggregate_method; also the max for `couch_views_ops`).',
    '- Each node is asked with the native names and formulas of its own server line (7.0, 7.1, 7.2, 7.6, 7.6.8, 8.0:',
    '  docs/native-metrics.md, "Per server line"); a cluster being upgraded is asked one line at a time. The table below',
    '  is the 7.6 line\'s.',
    '  While a cluster runs two lines, a bucket-wide `hit_ratio`, `ep_cache_miss_rate` or `avg_*` time is the ratio of',
    '  the lines\' summed per-second rates (each line is read in its own request, a second or so apart), not of their',
    '  increases over one window: the two agree within that difference. Such a poll makes one set of requests per line.',
    '- `ep_dcp_other_*` counts the connections of no named type (ns_server\'s `not_any`), leaving out kv_engine\'s',
    '  `:total` aggregate series too, should a node serve one (it is every type summed, not another type).',
    '- `cpu_utilization_rate` over the nodes: the envelope takes the max at each second, then cbwatch the mean over the',
    '  interval; with `per_node` the range source takes each node\'s mean over the interval, then the max (without',
    '  `per_node` it asks the max at each instant, as the envelope).',
    '- XDCR stats are asked every poll (no slow tier is needed); `meta_latency_wt` has no native equivalent and is absent.',
    '  On 8.0, `docs_rep_queue` is absent (8.0 no longer lists `xdcr_docs_rep_queue_total`).',
    '- Hot keys exist only in the envelopes: `hot_keys` above 0 keeps that cluster\'s `bucket_stats` on the envelopes.',
    '- Bucket stats outside the table below (outside cbwatch\'s catalog, or without a native equivalent) are absent;',
    '  the envelope exports catalogued ones and, under a generated name, unknown ones.',
    '',
    'Legacy stats with no native equivalent (absent with the range API; never made up from something else):',
    '',
    '| section | legacy stat | why |',
    '|---|---|---|',
    ...none,
    ...Object.entries(LINE_ONLY).map(([stat, o]) => `| bucket | \`${cell(stat)}\` | mapped on ${o.lines.join(', ')} only: ${cell(o.why)} |`),
    '',
    'Every family fed by the range API on 7.0+, with its native series (`bucket`, or `sourceBucketName`,',
    '`targetClusterUUID`, `targetBucketName`, besides the matchers shown) and how the value is derived. Per-node bucket',
    'families (`couchbase_bucket_node_…`) come from the same series, one node at a time. Before 7.0, and with',
    '`envelope`, every family comes from the envelope stat in the second column. The mapping is data',
    '(src/stats/native-map.ts, with its provenance), also used to build the recording-rule bridge for a Prometheus that',
    'scrapes Couchbase\'s native `/metrics` itself.',
    '',
    '| family | envelope stat | 7.0+ range API: native series and derivation |',
    '|---|---|---|',
    ...rows,
    '',
  ];
}

/**
 * Where the service collectors (query, index, search_index, eventing, analytics, processes) read their statistics on
 * each generation, their units, how an index's partitions and replicas add up, and what the sources do not give (a
 * subsection of "Statistics sources"; the code: src/stats/service-*.ts and each collector's header).
 */
const SERVICE_SOURCES: readonly string[] = [
  '### Service statistics',
  '',
  'The statistics of `query`, `index`, `search_index`, `eventing`, `analytics` and `processes` follow the same',
  '`stats_source` setting and the same value rules (a level is the newest point or sample; a `_per_second` rate is',
  'exact since the previous poll; a mean per request, per row or per query is the ratio of two counters\' increases',
  'over the same window, absent when the denominator did not increase: no request, no latency).',
  '',
  '- **7.0 and later:** ONE `POST /pools/default/stats/range` a poll for all of them, shared by the service collectors',
  '  polled at the same tick: one query per statistics table (a regex over its native names: `n1ql_*`, `index_*`,',
  '  `fts_*`, `eventing_*`, `cbas_*`, `sysproc_*`, `sys_disk_usage_ratio`; the index, Search and processes collectors',
  '  have two tables each), each asked only of the active nodes that run that service (`services` in `/pools/default`;',
  '  `processes` asks every node). A service no node runs is not applicable: no query, no error. Raw points on the',
  '  10 s step, valued against each collector\'s own memo of the previous poll.',
  '- **Before 7.0** (and with `stats_source: envelope`): the legacy service sections on each service node\'s own route,',
  '  `GET /pools/default/buckets/@<section>/nodes/<host:port>/stats`, for `@query`, `@index` and `@index-<bucket>` (the',
  '  buckets `/indexStatus` lists), `@fts` and `@fts-<bucket>` (every bucket that can hold an index), `@cbas`; the',
  '  cluster-wide answer sums the nodes, which would make a per-node figure or a percentage wrong. Eventing alone reads',
  '  the cluster-wide `@eventing`: its figures are per function, summed over the eventing nodes on both generations.',
  '',
  '**Units.** Times in seconds (the query request and service times, index scan and Search query latencies, from',
  'nanoseconds; analytics garbage-collection time in seconds per second, from milliseconds), sizes and memory in',
  'bytes, shares as 0–1 ratios (index residency, fragmentation and cache hits, index RAM over quota, process CPU,',
  'disk usage; a Couchbase percentage is divided by 100). Eventing\'s successes, failures and timeouts are the running totals',
  'Couchbase keeps, exported as counters (`_total`).',
  '',
  '**Index partitions and replicas.** Each `couchbase_index_*` statistics series (and each `couchbase_search_index_*`',
  'one) is one node\'s share of an index: a partitioned index has a series on every node that holds some of its',
  'partitions, and a replica is an index of its own, named `<name> (replica N)`, on its own node. Levels and rates add',
  'up: `sum by (couchbase_cluster, bucket, scope, collection, index)` gives the index\'s items, pending documents,',
  'sizes, memory, requests (replicas stay apart, by name; Search: `by (couchbase_cluster, bucket, index)`). Ratios and means (residency, fragmentation, cache hit ratio,',
  'scan and query latency) and `couchbase_index_node_ram_ratio` are per node and never add up.',
  '',
  '**What the sources do not give, and so is absent** (never a zero made up in its place):',
  '',
  '- per-process statistics (`couchbase_process_*`) before 7.0: not served over REST; the `processes` collector is not',
  '  applicable there, and under `stats_source: envelope`, with the reason;',
  '- the 7.x-only query figures before 7.0 (and under `stats_source: envelope`): `couchbase_query_timeouts_per_second`,',
  '  `…_cancelled_per_second`, `…_prepared_per_second`, `couchbase_query_memory_bytes`, `couchbase_query_load`;',
  '- disk usage per mount (`couchbase_node_disk_usage_ratio`) before 7.6;',
  '- from 7.0, the eventing statistics of a paused or undeployed function: Couchbase serves them for deployed',
  '  functions only (its `couchbase_eventing_function_status` is still exported);',
  '- the scope and collection of an index in the legacy sections, which name the bucket and index only: before 7.0,',
  '  and under `stats_source: envelope`, they are `_default`;',
  '- a rate, and a mean per request, row or query, in a poll that sees no new point: the native series are scraped',
  '  every 10 s, so with the range source a collector polled more often than that has polls without rates (levels',
  '  keep their newest value).',
  '',
];

/** The partial-failure rule, as an operator reads it (a block of its own, after the families). */
const PARTIAL_FAILURES: readonly string[] = [
  '## When one item fails',
  '',
  'A poll reads a list (buckets, nodes, repositories, settings…) and then items of it: a bucket\'s scopes, a',
  'node\'s certificate, a search index\'s queries, a repository state\'s list, a security sub-endpoint, an entry',
  'of the tasks, node, trusted-CA or repository list. When one item fails — an HTTP 4xx/5xx, a time-out, a reset',
  'connection, a body that does not parse — only that item\'s series are left out of the poll; its neighbours are exported as',
  'usual, `cbwatch_collector_success` stays 1, and the failure is counted in',
  '`cbwatch_collector_item_errors_total{collector,reason}` (reason: `http_4xx`, `http_5xx`, `not_found`,',
  '`timeout`, `network`, `bad_body`, `too_large`, `forbidden`, `other`). The item\'s series come back with the',
  'first poll that reads it again. Alert on that counter rising (`increase(...[15m]) > 0`) to see an item that',
  'keeps failing.',
  '',
  'The poll fails (`cbwatch_collector_success` 0, every series of the collector dropped) only when its list',
  'request fails, when every item fails, or when its deadline passes. What is not a failure: an item that has',
  'just gone (a bucket deleted between the list and its call answers 404) and a certificate or security call',
  'that needs a role the monitoring user lacks (403, logged once with the missing permission); both are left',
  'out and counted as skipped.',
  '',
];
