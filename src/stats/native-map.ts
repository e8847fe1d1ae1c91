/**
 * The mapping from cbwatch's statistics families to Couchbase 7.0+ native metrics: data, one row per legacy stat.
 *
 * Couchbase 7.0+ keeps its statistics in each node's own Prometheus, serves them on the node's `/metrics` and
 * through `GET/POST /pools/default/stats/range`, and answers the pre-7.0 sample envelopes
 * (`/pools/default/buckets/{b}/stats`, the XDCR `replications/…/{stat}` endpoint) by translating every legacy stat
 * name into a query over those native metrics. This table says, for every legacy stat that cbwatch exports and
 * that has a native equivalent, which native series feed it and how the legacy value is derived from them, so that
 * the range source (src/stats/range.ts) and the recording-rule bridge (alerts/, for users who scrape the native
 * /metrics directly) produce the same families, labels and units as the envelope.
 *
 * Provenance (facts read, not code copied):
 * - couchbase/ns_server `src/stat_names_mappings.erl` (commit 08f6fccc5ae7): `pre_70_stat_to_prom_query/3`, the
 *   explicit clauses (cmd_get, couch_docs_disk_size, couch_docs_data_size, disk_write_queue, ep_ops_create,
 *   ep_ops_update, misses, ops, vb_total_queue_age, vb_total_queue_size, xdc_ops, bg_wait_*, disk_commit_*,
 *   disk_update_*, couch_*, curr_connections, `ep_dcp_<type>_*` via map_dcpagg_stat, `@system` sys_*, and the
 *   `@xdcr-<bucket>` `replications/…` clauses) and, for every other bucket stat, `kv_stats_mappings:old_to_new`:
 *   a counter is asked as `irate` (a rate), a gauge as its value, with the unit conversion of its definition.
 * - couchbase/kv_engine `include/statistics/stats.def.h` (commit 0c846fffcdc4): the memcached stat → native family
 *   and labels that kv_stats_mappings is generated from (`STAT(get_hits, , count, ops, LABEL(op, get),
 *   LABEL(result, hit))` → `kv_ops{op="get",result="hit"}`; `VB_AGG_STAT(x)` → `kv_vb_x{state=…}`; units).
 * - couchbase/ns_server `menelaus_stats` computed stats (hit_ratio, ep_cache_miss_rate, ep_resident_items_rate,
 *   vb_<state>_resident_items_ratio, avg_* times, vb_avg_<state>_queue_age): the envelope computes them from the
 *   stats above; the rows here compute the same quotient from the native series.
 * - couchbase/docs-server `modules/metrics-reference/attachments/*_metrics_metadata.json` (release/8.0, commit
 *   a33f9b3c1581; copies in test/fixtures/couchbase/native/): name, type, unit and labels of every native metric
 *   in 8.0; `xdcr_cross_reference.csv` and `kv_cross_reference.csv`: legacy → native names.
 * test/stats/native-map.test.ts checks every row against hand-written transcriptions of ns_server's clauses and
 * against the 8.0 metadata files.
 *
 * Reading a row (the format is also described for other tools in docs/metrics.md, "Statistics sources"):
 * - `section` `kv`: a bucket stat, family `couchbase_bucket_<x>{bucket}` (per node: `couchbase_bucket_node_<x>`);
 *   every native series carries the label `bucket` (the bucket's name), except rows with `perBucket: false`, whose
 *   series are per node only (Couchbase's envelope shows the node's value under every bucket).
 *   `section` `xdcr`: a replication stat, family `couchbase_xdcr_<x>{source_bucket,target_cluster_uuid,
 *   target_cluster_name,target_bucket,node}`; the native series carry `sourceBucketName`, `targetClusterUUID`,
 *   `targetBucketName` and `pipelineType` (the legacy stat is the `Main` pipeline: a matcher in every row).
 * - `series`: the native series summed (over their matchers and over any other label, e.g. `state`, `result`);
 *   a matcher value that is an array means "any of". `metric` is the series name as served (for a histogram, its
 *   `_sum` or `_count` series; `type` is the type the 8.0 metadata gives the metric family).
 * - `derive`: how the legacy value comes from the series —
 *   `level`: the newest value (summed over series);
 *   `rate`: the exact increase of the counter(s) since the previous poll, per second (counter resets handled);
 *   `increase_ratio`: increase(series) / increase(denominator) over the same time (a mean or a share per event);
 *   `level_ratio`: newest(series) / newest(denominator);
 *   `complement_ratio`: 1 − newest(series) / newest(denominator).
 *   A zero divisor gives what menelaus_stats gives the envelope: 0 for the ratios, 1 (100 %) for a residency.
 * - `scale`: multiplies the derived native value into the family's unit. `legacyFactor` is what ns_server
 *   multiplies the native value by to produce the legacy stat (1000 for seconds → milliseconds, 1e6 for
 *   microseconds, 100 for a percentage): `scale` = `legacyFactor` × the catalog's scale of the legacy stat.
 * - `nodeAggregate`: how the bucket-wide value combines the nodes' values, as ns_server's envelope does
 *   (menelaus_stats get_aggregate_method): `sum` (absent: the default) or `max`. Host stats under a bucket
 *   (sys_*) are summed over the nodes like any other, except cpu_utilization_rate, their max.
 * - `nsServer`: the legacy stat's query as ns_server writes it (short form), for the record.
 * - `absentIn80`: the 8.0 metadata no longer lists the native metric (7.x serves it): on 8.0 the family is absent.
 *
 * A legacy stat cbwatch exports that has no native equivalent is listed in NO_NATIVE_EQUIVALENT with the reason,
 * and is never invented from something else.
 */

export type NativeType = 'counter' | 'gauge' | 'histogram';
// `mean`: the mean of a gauge's points since the previous poll (cbwatch's window rule for stats that are themselves
// an average over one sample period, such as the CPU shares: docs/metrics.md), where ns_server serves the gauge.
export type Derive = 'level' | 'rate' | 'mean' | 'increase_ratio' | 'level_ratio' | 'complement_ratio';
export type Section = 'kv' | 'xdcr';

/** Label matchers besides the item's own labels: a value, or any of several values. */
export type Matchers = Readonly<Record<string, string | readonly string[]>>;

export interface NativeSeries {
  /** Series name as served on /metrics and asked with `name=` (a histogram's `_sum` / `_count` series). */
  readonly metric: string;
  readonly matchers: Matchers;
  /** The metric family's type in the 8.0 metadata. */
  readonly type: NativeType;
}

export interface NativeMapRow {
  readonly section: Section;
  /** The legacy stat name (a key of the bucket envelope's samples, or the XDCR stat name). */
  readonly legacy: string;
  /** The cbwatch family (bucket-wide for kv rows; the per-node family is `couchbase_bucket_node_…`). */
  readonly family: string;
  readonly derive: Derive;
  readonly series: readonly NativeSeries[];
  /** The divisor of the ratio derivations. */
  readonly denominator?: readonly NativeSeries[];
  readonly scale: number;
  readonly legacyFactor: number;
  /** kv only: false for a per-node metric without a `bucket` label (the same value under every bucket). */
  readonly perBucket: boolean;
  /**
   * How the bucket-wide value combines the nodes' values (ns_server menelaus_stats get_aggregate_method): `sum`
   * (absent: counts, bytes, rates, host stats) or `max` (e.g. cpu_utilization_rate). A ratio row divides the
   * merged numerator by the merged denominator (never a merge of the nodes' ratios).
   */
  readonly nodeAggregate?: 'sum' | 'max';
  readonly nsServer: string;
  readonly absentIn80?: true;
}

/** The labels that identify an XDCR replication in the native metrics. */
export const XDCR_NATIVE_LABELS = Object.freeze({
  sourceBucket: 'sourceBucketName',
  targetClusterUuid: 'targetClusterUUID',
  targetBucket: 'targetBucketName',
  pipelineType: 'pipelineType',
});
/** The native label of a bucket. */
export const KV_BUCKET_LABEL = 'bucket';

const s = (metric: string, type: NativeType, matchers: Matchers = {}): NativeSeries => Object.freeze({ metric, type, matchers: Object.freeze({ ...matchers }) });

interface RowOpts {
  readonly nodeAggregate?: 'sum' | 'max';
  readonly scale?: number;
  readonly legacyFactor?: number;
  readonly perBucket?: boolean;
  readonly denominator?: readonly NativeSeries[];
  readonly absentIn80?: true;
}

function kv(legacy: string, metric: string, derive: Derive, series: readonly NativeSeries[], nsServer: string, o: RowOpts = {}): NativeMapRow {
  return Object.freeze({
    section: 'kv' as const,
    legacy,
    family: `couchbase_bucket_${metric}`,
    derive,
    series: Object.freeze([...series]),
    ...(o.denominator ? { denominator: Object.freeze([...o.denominator]) } : {}),
    scale: o.scale ?? 1,
    legacyFactor: o.legacyFactor ?? 1,
    perBucket: o.perBucket ?? true,
    ...(o.nodeAggregate ? { nodeAggregate: o.nodeAggregate } : {}),
    nsServer,
    ...(o.absentIn80 ? { absentIn80: true as const } : {}),
  });
}

const MAIN = { pipelineType: 'Main' } as const;

function xdcr(legacy: string, family: string, derive: Derive, metric: string, type: NativeType, nsServer: string, o: RowOpts = {}): NativeMapRow {
  return Object.freeze({
    section: 'xdcr' as const,
    legacy,
    family,
    derive,
    series: Object.freeze([s(metric, type, MAIN)]),
    scale: o.scale ?? 1,
    legacyFactor: o.legacyFactor ?? 1,
    perBucket: true,
    nsServer,
    ...(o.absentIn80 ? { absentIn80: true as const } : {}),
  });
}

const VB_STATES = ['active', 'replica', 'pending'] as const;

/** `vb_<state>_*` (stats.def.h VB_AGG_STAT: family `kv_vb_<x>` or as named, label `state`). */
function vbRows(): NativeMapRow[] {
  const out: NativeMapRow[] = [];
  for (const st of VB_STATES) {
    const p = `vb_${st}_`;
    const m = { state: st };
    const gen = (x: string): string => `kv_stats_mappings: ${p}${x} → ${x === 'num' ? 'kv_num_vbuckets' : `kv_vb_${x}`}{state="${st}"}`;
    out.push(
      kv(`${p}num`, `${p}num`, 'level', [s('kv_num_vbuckets', 'gauge', m)], gen('num')),
      kv(`${p}queue_size`, `${p}queue_size`, 'level', [s('kv_vb_queue_size', 'gauge', m)], gen('queue_size')),
      kv(`${p}queue_fill`, `${p}queue_fill_per_second`, 'rate', [s('kv_vb_queue_fill', 'gauge', m)], `irate(${gen('queue_fill')})`),
      kv(`${p}queue_drain`, `${p}queue_drain_per_second`, 'rate', [s('kv_vb_queue_drain', 'gauge', m)], `irate(${gen('queue_drain')})`),
      kv(`${p}queue_age`, `${p}queue_age_seconds`, 'level', [s('kv_vb_queue_age_seconds', 'gauge', m)], `${gen('queue_age_seconds')} * 1000 (ms)`, { legacyFactor: 1000 }),
      kv(`${p}ops_create`, `${p}ops_create_per_second`, 'rate', [s('kv_vb_ops_create', 'gauge', m)], `irate(${gen('ops_create')})`),
      kv(`${p}ops_update`, `${p}ops_update_per_second`, 'rate', [s('kv_vb_ops_update', 'gauge', m)], `irate(${gen('ops_update')})`),
      kv(`${p}eject`, `${p}eject_per_second`, 'rate', [s('kv_vb_eject', 'gauge', m)], `irate(${gen('eject')})`),
      kv(`${p}num_non_resident`, `${p}num_non_resident`, 'level', [s('kv_vb_num_non_resident', 'gauge', m)], gen('num_non_resident')),
      kv(`${p}meta_data_memory`, `${p}meta_data_memory_bytes`, 'level', [s('kv_vb_meta_data_memory_bytes', 'gauge', m)], gen('meta_data_memory_bytes')),
      kv(
        `${p}resident_items_ratio`,
        `${p}resident_items_ratio`,
        'complement_ratio',
        [s('kv_vb_num_non_resident', 'gauge', m)],
        `computed: 100 * (vb_${st}_curr_items - ${p}num_non_resident) / vb_${st}_curr_items`,
        { denominator: [s(st === 'active' ? 'kv_curr_items' : 'kv_vb_curr_items', 'gauge', st === 'active' ? {} : m)], legacyFactor: 100, scale: 1 },
      ),
      kv(
        `vb_avg_${st}_queue_age`,
        `vb_avg_${st}_queue_age_seconds`,
        'level_ratio',
        [s('kv_vb_queue_age_seconds', 'gauge', m)],
        `computed: ${p}queue_age / ${p}queue_size / 1000`,
        { denominator: [s('kv_vb_queue_size', 'gauge', m)] },
      ),
    );
    if (st !== 'active') out.push(kv(`${p}curr_items`, `${p}curr_items`, 'level', [s('kv_vb_curr_items', 'gauge', m)], gen('curr_items')));
  }
  return out;
}

/** `ep_dcp_<group>_*` (stat_names_mappings.erl map_dcpagg_stat; views and other are sums over several types). */
const DCP_TYPES: ReadonlyArray<readonly [string, string | readonly string[] | undefined]> = [
  ['replica', 'replication'],
  ['xdcr', 'xdcr'],
  ['2i', 'secidx'],
  ['fts', 'fts'],
  ['eventing', 'eventing'],
  ['cbas', 'cbas'],
  ['views', ['mapreduce_view', 'spatial_view']],
];

function dcpRows(): NativeMapRow[] {
  const out: NativeMapRow[] = [];
  for (const [g, type] of DCP_TYPES) {
    const m = type === undefined ? {} : { connection_type: type };
    const p = `ep_dcp_${g}_`;
    const f = `ep_dcp_${g}_`;
    const q = (name: string): string => `kv_dcp_${name}{connection_type=${Array.isArray(type) ? `~${(type as readonly string[]).join('|')}` : String(type)}}`;
    out.push(
      kv(`${p}count`, `${f}connections`, 'level', [s('kv_dcp_connection_count', 'gauge', m)], q('connection_count')),
      kv(`${p}items_remaining`, `${f}items_remaining`, 'level', [s('kv_dcp_items_remaining', 'gauge', m)], q('items_remaining')),
      kv(`${p}items_sent`, `${f}items_sent_per_second`, 'rate', [s('kv_dcp_items_sent', 'gauge', m)], `irate(${q('items_sent')})`),
      kv(`${p}backoff`, `${f}backoff_per_second`, 'rate', [s('kv_dcp_backoff', 'gauge', m)], `irate(${q('backoff')})`),
      kv(`${p}total_bytes`, `${f}sent_bytes_per_second`, 'rate', [s('kv_dcp_total_data_size_bytes', 'gauge', m)], `irate(${q('total_data_size_bytes')})`),
    );
  }
  return out;
}

const ops = (op: string | readonly string[], result?: string): NativeSeries => s('kv_ops', 'gauge', result === undefined ? { op } : { op, result });
const hitMiss = (legacy: string, op: string, result: string): NativeMapRow =>
  kv(legacy, `${legacy}_per_second`, 'rate', [ops(op, result)], `irate(kv_ops{op="${op}",result="${result}"})`);

const KV_ROWS: NativeMapRow[] = [
  // Explicit clauses of stat_names_mappings.erl.
  kv('cmd_get', 'cmd_get_per_second', 'rate', [ops('get')], 'sum(irate(kv_ops{op="get"}))'),
  kv('misses', 'misses_per_second', 'rate', [s('kv_ops', 'gauge', { result: 'miss' })], 'sum(irate(kv_ops{result="miss"}))'),
  kv(
    'ops',
    'ops_per_second',
    'rate',
    [s('kv_cmd_lookup', 'counter'), ops(['set', 'incr', 'decr', 'delete', 'del_meta', 'get_meta', 'set_meta', 'set_ret_meta', 'del_ret_meta'])],
    'sum(irate(kv_cmd_lookup) or irate(kv_ops{op=~"set|incr|decr|delete|del_meta|get_meta|set_meta|set_ret_meta|del_ret_meta"}))',
  ),
  kv('xdc_ops', 'xdc_ops_per_second', 'rate', [ops(['del_meta', 'get_meta', 'set_meta'])], 'sum(irate(kv_ops{op=~"del_meta|get_meta|set_meta"}))'),
  kv('ep_ops_create', 'ep_ops_create_per_second', 'rate', [s('kv_vb_ops_create', 'gauge')], 'sum(irate(kv_vb_ops_create))'),
  kv('ep_ops_update', 'ep_ops_update_per_second', 'rate', [s('kv_vb_ops_update', 'gauge')], 'sum(irate(kv_vb_ops_update))'),
  kv('disk_write_queue', 'disk_write_queue', 'level', [s('kv_ep_queue_size', 'gauge'), s('kv_ep_flusher_todo', 'gauge')], 'sum(kv_ep_queue_size or kv_ep_flusher_todo)'),
  kv('couch_docs_disk_size', 'couch_docs_disk_size_bytes', 'level', [s('kv_ep_db_file_size_bytes', 'gauge')], 'sum(kv_ep_db_file_size_bytes)'),
  kv('couch_docs_data_size', 'couch_docs_data_size_bytes', 'level', [s('kv_ep_db_data_size_bytes', 'gauge')], 'sum(kv_ep_db_data_size_bytes)'),
  kv('couch_docs_actual_disk_size', 'couch_docs_actual_disk_size_bytes', 'level', [s('couch_docs_actual_disk_size', 'gauge')], 'sum by (name) (couch_docs_actual_disk_size)'),
  kv('couch_views_actual_disk_size', 'couch_views_actual_disk_size_bytes', 'level', [s('couch_views_actual_disk_size', 'gauge')], 'sum by (name) (couch_views_actual_disk_size)'),
  kv('vb_total_queue_age', 'vb_total_queue_age_seconds', 'level', [s('kv_vb_queue_age_seconds', 'gauge')], 'sum(kv_vb_queue_age_seconds) * 1000 (ms)', { legacyFactor: 1000 }),
  kv('vb_total_queue_size', 'vb_total_queue_size', 'level', [s('kv_vb_queue_size', 'gauge')], 'sum(kv_vb_queue_size)'),
  kv('bg_wait_count', 'bg_waits_per_second', 'rate', [s('kv_bg_wait_seconds_count', 'histogram')], 'irate(kv_bg_wait_seconds_count)'),
  kv('bg_wait_total', 'bg_wait_seconds_per_second', 'rate', [s('kv_bg_wait_seconds_sum', 'histogram')], 'irate(kv_bg_wait_seconds_sum) * 1000000 (µs)', { legacyFactor: 1e6 }),
  kv('disk_commit_count', 'disk_commits_per_second', 'rate', [s('kv_disk_seconds_count', 'histogram', { op: 'commit' })], 'irate(kv_disk_seconds_count{op="commit"})'),
  kv('disk_commit_total', 'disk_commit_seconds_per_second', 'rate', [s('kv_disk_seconds_sum', 'histogram', { op: 'commit' })], 'irate(kv_disk_seconds_sum{op="commit"}) * 1000000 (µs)', { legacyFactor: 1e6 }),
  kv('disk_update_count', 'disk_updates_per_second', 'rate', [s('kv_disk_seconds_count', 'histogram', { op: 'update' })], 'irate(kv_disk_seconds_count{op="update"})'),
  kv('disk_update_total', 'disk_update_seconds_per_second', 'rate', [s('kv_disk_seconds_sum', 'histogram', { op: 'update' })], 'irate(kv_disk_seconds_sum{op="update"}) * 1000000 (µs)', { legacyFactor: 1e6 }),
  kv('curr_connections', 'curr_connections', 'level', [s('kv_curr_connections', 'gauge')], 'kv_curr_connections (per node, no bucket label)', { perBucket: false }),
  // kv_stats_mappings (stats.def.h): counters are asked as irate, gauges as they are.
  kv('cmd_set', 'cmd_set_per_second', 'rate', [ops('set')], 'irate(kv_ops{op="set"})'),
  hitMiss('get_hits', 'get', 'hit'),
  hitMiss('get_misses', 'get', 'miss'),
  hitMiss('delete_hits', 'delete', 'hit'),
  hitMiss('delete_misses', 'delete', 'miss'),
  hitMiss('incr_hits', 'incr', 'hit'),
  hitMiss('incr_misses', 'incr', 'miss'),
  hitMiss('decr_hits', 'decr', 'hit'),
  hitMiss('decr_misses', 'decr', 'miss'),
  hitMiss('cas_hits', 'cas', 'hit'),
  hitMiss('cas_misses', 'cas', 'miss'),
  hitMiss('cas_badval', 'cas', 'badval'),
  kv('ep_num_ops_get_meta', 'ep_num_ops_get_meta_per_second', 'rate', [ops('get_meta')], 'irate(kv_ops{op="get_meta"})'),
  kv('ep_num_ops_set_meta', 'ep_num_ops_set_meta_per_second', 'rate', [ops('set_meta')], 'irate(kv_ops{op="set_meta"})'),
  kv('ep_num_ops_del_meta', 'ep_num_ops_del_meta_per_second', 'rate', [ops('del_meta')], 'irate(kv_ops{op="del_meta"})'),
  kv('ep_num_ops_set_ret_meta', 'ep_num_ops_set_ret_meta_per_second', 'rate', [ops('set_ret_meta')], 'irate(kv_ops{op="set_ret_meta"})'),
  kv('ep_num_ops_del_ret_meta', 'ep_num_ops_del_ret_meta_per_second', 'rate', [ops('del_ret_meta')], 'irate(kv_ops{op="del_ret_meta"})'),
  kv('cmd_lookup', 'cmd_lookup_per_second', 'rate', [s('kv_cmd_lookup', 'counter')], 'irate(kv_cmd_lookup)'),
  kv('bytes_read', 'read_bytes_per_second', 'rate', [s('kv_read_bytes', 'gauge')], 'irate(kv_read_bytes)'),
  kv('bytes_written', 'written_bytes_per_second', 'rate', [s('kv_written_bytes', 'gauge')], 'irate(kv_written_bytes)'),
  kv('evictions', 'evictions_per_second', 'rate', [s('kv_memcache_evictions', 'gauge')], 'irate(kv_memcache_evictions)'),
  kv('ep_bg_fetched', 'ep_bg_fetched_per_second', 'rate', [s('kv_ep_bg_fetched', 'counter')], 'irate(kv_ep_bg_fetched)'),
  kv('ep_tmp_oom_errors', 'ep_tmp_oom_errors_per_second', 'rate', [s('kv_ep_tmp_oom_errors', 'counter')], 'irate(kv_ep_tmp_oom_errors)'),
  kv('ep_num_value_ejects', 'ep_num_value_ejects_per_second', 'rate', [s('kv_ep_num_value_ejects', 'counter')], 'irate(kv_ep_num_value_ejects)'),
  kv('ep_diskqueue_fill', 'ep_diskqueue_fill_per_second', 'rate', [s('kv_ep_diskqueue_fill', 'gauge')], 'irate(kv_ep_diskqueue_fill)'),
  kv('ep_diskqueue_drain', 'ep_diskqueue_drain_per_second', 'rate', [s('kv_ep_diskqueue_drain', 'gauge')], 'irate(kv_ep_diskqueue_drain)'),
  kv('curr_items', 'curr_items', 'level', [s('kv_curr_items', 'gauge')], 'kv_curr_items'),
  kv('curr_items_tot', 'curr_items_tot', 'level', [s('kv_curr_items_tot', 'gauge')], 'kv_curr_items_tot'),
  kv('mem_used', 'mem_used_bytes', 'level', [s('kv_mem_used_bytes', 'gauge')], 'kv_mem_used_bytes'),
  kv('ep_mem_high_wat', 'ep_mem_high_wat_bytes', 'level', [s('kv_ep_mem_high_wat', 'gauge')], 'kv_ep_mem_high_wat'),
  kv('ep_mem_low_wat', 'ep_mem_low_wat_bytes', 'level', [s('kv_ep_mem_low_wat', 'gauge')], 'kv_ep_mem_low_wat'),
  kv('ep_max_size', 'ep_max_size_bytes', 'level', [s('kv_ep_max_size', 'gauge')], 'kv_ep_max_size'),
  // kv_cross_reference.csv: ep_kv_size → kv_ep_key_value_size_bytes (older stats.def.h: kv_memory_used_bytes{for="hashtable"}).
  kv('ep_kv_size', 'ep_kv_size_bytes', 'level', [s('kv_ep_key_value_size_bytes', 'gauge')], 'kv_ep_key_value_size_bytes'),
  kv('ep_overhead', 'ep_overhead_bytes', 'level', [s('kv_total_memory_overhead_bytes', 'gauge')], 'kv_total_memory_overhead_bytes'),
  kv('ep_meta_data_memory', 'ep_meta_data_memory_bytes', 'level', [s('kv_ep_meta_data_memory_bytes', 'gauge')], 'kv_ep_meta_data_memory_bytes'),
  kv('ep_queue_size', 'ep_queue_size', 'level', [s('kv_ep_queue_size', 'gauge')], 'kv_ep_queue_size'),
  kv('ep_flusher_todo', 'ep_flusher_todo', 'level', [s('kv_ep_flusher_todo', 'gauge')], 'kv_ep_flusher_todo'),
  kv('ep_diskqueue_items', 'ep_diskqueue_items', 'level', [s('kv_ep_diskqueue_items', 'gauge')], 'kv_ep_diskqueue_items'),
  kv('ep_num_non_resident', 'ep_num_non_resident', 'level', [s('kv_ep_num_non_resident', 'gauge')], 'kv_ep_num_non_resident'),
  kv('ep_vb_total', 'ep_vbuckets', 'level', [s('kv_ep_vb_total', 'gauge')], 'kv_ep_vb_total'),
  kv('ep_oom_errors', 'ep_oom_errors_total', 'level', [s('kv_ep_oom_errors', 'gauge')], 'kv_ep_oom_errors'),
  kv('ep_item_commit_failed', 'ep_item_commit_failed_total', 'level', [s('kv_ep_item_commit_failed', 'gauge')], 'kv_ep_item_commit_failed'),
  kv('ep_data_read_failed', 'ep_data_read_failed_total', 'level', [s('kv_ep_data_read_failed', 'gauge')], 'kv_ep_data_read_failed'),
  kv('ep_data_write_failed', 'ep_data_write_failed_total', 'level', [s('kv_ep_data_write_failed', 'gauge')], 'kv_ep_data_write_failed'),
  kv('ep_clock_cas_drift_threshold_exceeded', 'ep_clock_cas_drift_threshold_exceeded_total', 'level', [s('kv_ep_clock_cas_drift_threshold_exceeded', 'gauge')], 'kv_ep_clock_cas_drift_threshold_exceeded'),
  ...vbRows(),
  ...dcpRows(),
  // Computed by ns_server from the stats above (menelaus_stats).
  kv('hit_ratio', 'hit_ratio', 'increase_ratio', [ops('get', 'hit')], 'computed: 100 * get_hits / cmd_get', { denominator: [ops('get')], legacyFactor: 100, scale: 1 }),
  kv('ep_cache_miss_rate', 'ep_cache_miss_ratio', 'increase_ratio', [s('kv_ep_bg_fetched', 'counter')], 'computed: 100 * ep_bg_fetched / cmd_get', {
    denominator: [ops('get')],
    legacyFactor: 100,
    scale: 1,
  }),
  kv('ep_resident_items_rate', 'ep_resident_items_ratio', 'complement_ratio', [s('kv_ep_num_non_resident', 'gauge')], 'computed: 100 * (curr_items_tot - ep_num_non_resident) / curr_items_tot', {
    denominator: [s('kv_curr_items_tot', 'gauge')],
    legacyFactor: 100,
    scale: 1,
  }),
  kv('avg_bg_wait_time', 'avg_bg_wait_seconds', 'increase_ratio', [s('kv_bg_wait_seconds_sum', 'histogram')], 'computed: bg_wait_total / bg_wait_count (µs)', {
    denominator: [s('kv_bg_wait_seconds_count', 'histogram')],
    legacyFactor: 1e6,
  }),
  kv('avg_disk_update_time', 'avg_disk_update_seconds', 'increase_ratio', [s('kv_disk_seconds_sum', 'histogram', { op: 'update' })], 'computed: disk_update_total / disk_update_count (µs)', {
    denominator: [s('kv_disk_seconds_count', 'histogram', { op: 'update' })],
    legacyFactor: 1e6,
  }),
  kv('avg_disk_commit_time', 'avg_disk_commit_seconds', 'increase_ratio', [s('kv_disk_seconds_sum', 'histogram', { op: 'commit' })], 'computed: disk_commit_total / disk_commit_count / 1e6 (s)', {
    denominator: [s('kv_disk_seconds_count', 'histogram', { op: 'commit' })],
  }),
  // `@system` stats (stat_names_mappings.erl: sys_<stat>), per node, shown under every bucket by the envelope.
  ...(['cpu_utilization_rate', 'cpu_user_rate', 'cpu_sys_rate', 'cpu_irq_rate', 'cpu_stolen_rate'] as const).map((st) =>
    kv(st, `${st.replace(/_rate$/, '')}_ratio`, 'mean', [s(`sys_${st}`, 'gauge')], `sys_${st} (per node; percent)`, { perBucket: false, ...(st === 'cpu_utilization_rate' ? { nodeAggregate: 'max' as const } : {}), legacyFactor: 1, scale: 0.01 }),
  ),
  kv('cpu_cores_available', 'cpu_cores_available', 'level', [s('sys_cpu_cores_available', 'gauge')], 'sys_cpu_cores_available (per node)', { perBucket: false }),
  ...(['mem_actual_free', 'mem_actual_used', 'mem_free', 'mem_limit', 'mem_total', 'mem_used_sys', 'swap_total', 'swap_used'] as const).map((st) =>
    kv(st, `${st}_bytes`, 'level', [s(`sys_${st}`, 'gauge')], `sys_${st} (per node)`, { perBucket: false }),
  ),
];

const XDCR_ROWS: NativeMapRow[] = [
  xdcr('bandwidth_usage', 'couchbase_xdcr_bandwidth_usage_bytes_per_second', 'rate', 'xdcr_data_replicated_bytes', 'counter', 'irate(xdcr_data_replicated_bytes{pipelineType="Main"})'),
  xdcr('changes_left', 'couchbase_xdcr_changes_left', 'level', 'xdcr_changes_left_total', 'gauge', 'xdcr_changes_left_total{pipelineType="Main"}'),
  xdcr('data_replicated', 'couchbase_xdcr_data_replicated_bytes_total', 'level', 'xdcr_data_replicated_bytes', 'counter', 'xdcr_data_replicated_bytes{pipelineType="Main"}'),
  xdcr('docs_checked', 'couchbase_xdcr_docs_checked_total', 'level', 'xdcr_docs_checked_total', 'gauge', 'xdcr_docs_checked_total{pipelineType="Main"}'),
  xdcr('docs_failed_cr_source', 'couchbase_xdcr_docs_failed_cr_source_total', 'level', 'xdcr_docs_failed_cr_source_total', 'counter', 'xdcr_docs_failed_cr_source_total{pipelineType="Main"}'),
  xdcr('docs_filtered', 'couchbase_xdcr_docs_filtered_total', 'level', 'xdcr_docs_filtered_total', 'gauge', 'xdcr_docs_filtered_total{pipelineType="Main"}'),
  xdcr('docs_opt_repd', 'couchbase_xdcr_docs_opt_repd_total', 'level', 'xdcr_docs_opt_repd_total', 'counter', 'xdcr_docs_opt_repd_total{pipelineType="Main"}'),
  xdcr('docs_received_from_dcp', 'couchbase_xdcr_docs_received_from_dcp_total', 'level', 'xdcr_docs_received_from_dcp_total', 'counter', 'xdcr_docs_received_from_dcp_total{pipelineType="Main"}'),
  xdcr('docs_rep_queue', 'couchbase_xdcr_docs_rep_queue', 'level', 'xdcr_docs_rep_queue_total', 'gauge', 'xdcr_docs_rep_queue_total{pipelineType="Main"}', { absentIn80: true }),
  xdcr('docs_processed', 'couchbase_xdcr_docs_processed_total', 'level', 'xdcr_docs_processed_total', 'gauge', 'xdcr_docs_processed_total{pipelineType="Main"}'),
  xdcr('docs_written', 'couchbase_xdcr_docs_written_total', 'level', 'xdcr_docs_written_total', 'counter', 'xdcr_docs_written_total{pipelineType="Main"}'),
  xdcr('num_checkpoints', 'couchbase_xdcr_num_checkpoints_total', 'level', 'xdcr_num_checkpoints_total', 'counter', 'xdcr_num_checkpoints_total{pipelineType="Main"}'),
  xdcr('num_failedckpts', 'couchbase_xdcr_num_failedckpts_total', 'level', 'xdcr_num_failedckpts_total', 'counter', 'xdcr_num_failedckpts_total{pipelineType="Main"}'),
  xdcr('rate_received_from_dcp', 'couchbase_xdcr_rate_received_from_dcp_per_second', 'rate', 'xdcr_docs_received_from_dcp_total', 'counter', 'irate(xdcr_docs_received_from_dcp_total{pipelineType="Main"})'),
  xdcr('rate_replicated', 'couchbase_xdcr_rate_replicated_per_second', 'rate', 'xdcr_docs_written_total', 'counter', 'irate(xdcr_docs_written_total{pipelineType="Main"})'),
  xdcr('size_rep_queue', 'couchbase_xdcr_size_rep_queue_bytes', 'level', 'xdcr_size_rep_queue_bytes', 'gauge', 'xdcr_size_rep_queue_bytes{pipelineType="Main"}'),
  xdcr('time_committing', 'couchbase_xdcr_time_committing_seconds', 'level', 'xdcr_time_committing_seconds', 'gauge', 'xdcr_time_committing_seconds{pipelineType="Main"} * 1000 (ms)', { legacyFactor: 1000, scale: 1 }),
  xdcr('wtavg_docs_latency', 'couchbase_xdcr_wtavg_docs_latency_seconds', 'level', 'xdcr_wtavg_docs_latency_seconds', 'gauge', 'xdcr_wtavg_docs_latency_seconds{pipelineType="Main"} * 1000 (ms)', {
    legacyFactor: 1000,
    scale: 1,
  }),
  xdcr('wtavg_meta_latency', 'couchbase_xdcr_wtavg_meta_latency_seconds', 'level', 'xdcr_wtavg_meta_latency_seconds', 'gauge', 'xdcr_wtavg_meta_latency_seconds{pipelineType="Main"} * 1000 (ms)', {
    legacyFactor: 1000,
    scale: 1,
  }),
];

/** Every row: bucket stats, then XDCR stats. */
export const NATIVE_MAP: readonly NativeMapRow[] = Object.freeze([...KV_ROWS, ...XDCR_ROWS]);

export const KV_NATIVE_MAP: readonly NativeMapRow[] = Object.freeze(NATIVE_MAP.filter((r) => r.section === 'kv'));
export const XDCR_NATIVE_MAP: readonly NativeMapRow[] = Object.freeze(NATIVE_MAP.filter((r) => r.section === 'xdcr'));

/**
 * Legacy stats cbwatch exports whose value the range API cannot give: no native metric carries it (in the
 * references above), or the envelope computes it from something the native metrics do not keep. They are named in
 * docs/metrics.md; with `stats_source: range` their families are absent.
 */
export const NO_NATIVE_EQUIVALENT: Readonly<Record<Section, Readonly<Record<string, string>>>> = Object.freeze({
  kv: Object.freeze({
    'vb_<state>_itm_memory': 'no kv_vb_itm_memory_bytes in the 8.0 metadata',
    'ep_dcp_<type>_producer_count, ep_dcp_<type>_total_backlog_size': 'no kv_dcp_producer_count or backlog metric in the 8.0 metadata',
    'ep_dcp_other_*': 'a sum over every other connection type (a negative matcher): not asked',
    'couch_docs_fragmentation, couch_views_fragmentation, couch_total_disk_size': 'computed by menelaus_stats from data and file sizes (rounded to a whole percent); the views\' sizes have no native equivalent; not mapped',
    'couch_views_* (data/disk size, ops), couch_spatial_*': 'per design document in 7.0+ (signature label); not summed here',
    'ep_active_ahead_exceptions, ep_replica_ahead_exceptions, ep_*_hlc_drift*': 'the native drift metrics carry other labels than the envelope\'s per-state names',
    'vb_active_sync_write_*_count': 'kv_vb_sync_write_* in 8.0 carries no state label',
    'ep_tap_*, replication_* (pre-4.0 XDCR totals)': 'removed before 7.0: a 7.0+ envelope has none either',
    'allocstall, hibernated_requests, hibernated_waked, rest_requests, odp_report_failed': 'node-level management-process stats of the envelope, not asked from the range API (system CPU, memory and swap are)',
    '(any stat outside cbwatch\'s catalog)': 'exported by the envelope under a generated name; the range source asks only for the rows of this table',
  }),
  xdcr: Object.freeze({
    meta_latency_wt: 'not mapped by ns_server (no native metric): on 7.0+ the envelope answers nothing for it either',
  }),
});

/** Rows by legacy stat name, per section. */
export const KV_ROW_BY_LEGACY: ReadonlyMap<string, NativeMapRow> = new Map(KV_NATIVE_MAP.map((r) => [r.legacy, r]));
export const XDCR_ROW_BY_LEGACY: ReadonlyMap<string, NativeMapRow> = new Map(XDCR_NATIVE_MAP.map((r) => [r.legacy, r]));

/** Every native series name a section's rows read (numerators and denominators), sorted. */
export function nativeMetricsOf(rows: readonly NativeMapRow[]): string[] {
  const names = new Set<string>();
  for (const r of rows) for (const x of [...r.series, ...(r.denominator ?? [])]) names.add(x.metric);
  return [...names].sort();
}
