/** docs/metrics.md, generated from the metric catalog (`npm run generate`; a test fails when it is stale). */
import { envelopeRangeDifferences } from './metrics-doc-differences.js';
import { collectorList } from '../collectors/index.js';
import type { FamilyDef } from '../metrics/family.js';
import { allFamilies } from '../metrics/catalog.js';
import { TRUTH_RULES } from './metrics-doc-rules.js';
import { NATIVE_MAP, NO_NATIVE_EQUIVALENT } from '../stats/native-map.js';
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
    '<!-- Generated from the metric catalog (src/metrics/catalog.ts) by `npm run generate`. Do not edit. -->',
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
  lines.push(...envelopeRangeDifferences());
  lines.push(...PARTIAL_FAILURES);
  return `${lines.join('\n').trimEnd()}\n`;
}

function matchersText(m: Matchers): string {
  const parts = Object.entries(m).map(([k, v]) => (typeof v === 'string' ? `${k}="${v}"` : `${k}=~"${v.join('|')}"`));
  return parts.length === 0 ? '' : `{${parts.join(',')}}`;
}

function seriesText(xs: readonly NativeSeries[]): string {
  return xs.map((x) => `\`${x.metric}${matchersText(x.matchers)}\``).join(' + ');
}

function deriveText(r: NativeMapRow): string {
  const num = seriesText(r.series);
  const den = r.denominator ? seriesText(r.denominator) : '';
  const where = r.section === 'kv' && !r.perBucket ? ` (per node, no bucket label; bucket-wide: ${r.acrossNodes === 'mean' ? 'mean' : 'sum'} over nodes)` : '';
  const scale = r.scale === 1 ? '' : ` × ${r.scale}`;
  switch (r.derive) {
    case 'level':
      return `newest ${num}${scale}${where}${r.absentIn80 ? ' (7.x; not in 8.0: absent there)' : ''}`;
    case 'rate':
      return `increase of ${num} since the previous poll, per second${scale}`;
    case 'mean':
      return `mean of ${num}'s points since the previous poll${scale}${where}`;
    case 'increase_ratio':
      return `increase(${num}) / increase(${den})${scale}`;
    case 'level_ratio':
      return `${num} / ${den}${scale}`;
    case 'complement_ratio':
      return `1 − ${num} / ${den}${scale}`;
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
    '| 7.0 and later | `POST /pools/default/stats/range` (the envelopes for 10 minutes after it answers 404, 405 or 403) | `POST /pools/default/stats/range` | sample envelopes |',
    '',
    'Sample envelopes: `GET /pools/default/buckets/{bucket}/stats` (and `…/nodes/{node}/stats` with `per_node`) per bucket,',
    'and `GET /pools/default/buckets/{source}/stats/replications%2F…%2F{stat}` per replication and stat (in two tiers).',
    'On 7.0+ Couchbase answers them by translating each legacy name into queries over its native metrics;',
    '8.0 deprecates them. The range API gives those native metrics directly: one query per native name for every',
    'bucket (and node) or replication at once, at most 10 queries per request — 7 requests per `bucket_stats` poll and',
    '2 per `xdcr` poll, whatever the number of buckets, nodes and replications. The queries are dealt out by the size',
    'of their answers in the previous poll, so that no request\'s answer (held whole while it is read) is much larger',
    'than the others. Values are asked raw, one series per node',
    'and every 10 s scrape since the previous poll, so that a counter reset on any node is seen; only without',
    '`per_node`, a metric that nothing but levels read (no rate, no ratio of increases, no window mean, no host gauge',
    'averaged over the nodes) is asked summed over the nodes (`nodesAggregation: "sum"`): the same bucket-wide value,',
    'one series per bucket instead of one per node. `cbwatch check` and the landing page show the source each poll used and why.',
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
    '- Host stats shown under every bucket (`cpu_*`, `mem_*`, `swap_*`): the bucket-wide value is the mean of the nodes\'',
    '  values.',
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
