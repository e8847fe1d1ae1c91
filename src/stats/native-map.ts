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
 * - couchbase/ns_server `src/menelaus_stats.erl` (commit 001be57c4e85) computed_stats_lazy_proplist (hit_ratio,
 *   ep_cache_miss_rate = ep_bg_fetched / cmd_lookup, ep_resident_items_rate, vb_<state>_resident_items_ratio, the
 *   avg_* times and drifts, vb_avg_<state|total>_queue_age, couch_total_disk_size, the Fragmentation of docs and
 *   views, ep_dcp_views+indexes_*): the envelope computes them from the stats above after merging the nodes; the
 *   rows here compute the same from the native series. get_aggregate_method: the nodes' values are summed, except
 *   couch_views_ops and cpu_utilization_rate (and, outside this table, views/<id>/accesses and index_ram_percent,
 *   in a later version of the same file): their max (`nodeAggregate`). section_nodes: host stats (`@system`) come
 *   from the active nodes, bucket stats from the bucket's live nodes.
 * - per server line (nativeMapFor): kv_engine `stats.def.h` at 0c846fffcdc4 (a 2020 pre-release of 7.0: ep_kv_size
 *   as memory_used{for="hashtable"}, connagg_producer_count) and later stored versions (vb_{state}_itm_memory and vb_{state}_sync_write_*_count with a `state` label); the 8.0
 *   metadata for what 7.6+ no longer serves; and, where the stored snapshots stop, a reading of the 7.0.0,
 *   7.1.4, 7.2.0, 7.6.0, 7.6.8 and 8.0.0 trees: ep_cache_miss_rate = get_misses / cmd_get from 7.6.8, the 7.2+
 *   small-file rule of couch_docs_data_size (a node's file under 128 KiB × its vBuckets reports its file size) and
 *   the history file left out of the docs fragmentation, the `state` label of the drift families. The drift families
 *   carry `state` on every 7.x line (every BSL-licensed stats.def.h stored, 2021 on, has them labelled; the per-state
 *   names are in the 2020 pre-release only; Couchbase's metrics reference lists the labelled ones as added in 7.0.0).
 * - couchbase/docs-server `modules/metrics-reference/attachments/*_metrics_metadata.json` (release/8.0, commit
 *   a33f9b3c1581; copies in test/fixtures/couchbase/native/): name, type, unit and labels of every native metric
 *   in 8.0; `xdcr_cross_reference.csv` and `kv_cross_reference.csv`: legacy → native names.
 * test/stats/native-map.test.ts checks every row against hand-written transcriptions of ns_server's clauses and
 * against the 8.0 metadata files.
 *
 * Reading a row (the format is also described for other tools in docs/metrics.md, "Statistics sources"):
 * - `section` `kv`: a bucket stat, family `couchbase_bucket_<x>{bucket}` (per node: `couchbase_bucket_node_<x>`);
 *   every native series carries the label `bucket` (the bucket's name; an XDCR series read as a bucket stat, its
 *   `sourceBucketName`: KV_BUCKET_LABELS), except rows with `perBucket: false`, whose series are per node only
 *   (Couchbase's envelope shows the node's value under every bucket).
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
 *   `complement_ratio`: 1 − newest(series) / newest(denominator);
 *   `difference`, `docs_data_size`, `fragmentation`: see Derive.
 *   A zero divisor gives what menelaus_stats gives the envelope: 0 for the ratios, 1 (100 %) for a residency.
 * - `scale`: multiplies the derived native value into the family's unit. `legacyFactor` is what ns_server
 *   multiplies the native value by to produce the legacy stat (1000 for seconds → milliseconds, 1e6 for
 *   microseconds, 100 for a percentage): `scale` = `legacyFactor` × the catalog's scale of the legacy stat.
 * - `nodeAggregate`: `max` where get_aggregate_method takes the max over the nodes; otherwise the nodes' values are
 *   summed (host stats too: the envelope shows their sum over the active nodes under every bucket).
 * - `series.notMatchers`: ns_server's `not_any` (ep_dcp_other_*).
 * - `minFileBytesPerVbucket`: the 7.2+ small-file rule of the docs_data_size and fragmentation derives.
 * - `nsServer`: the legacy stat's query as ns_server writes it (short form), for the record.
 * - `absentIn80`: the 8.0 metadata no longer lists the native metric (7.x serves it): on 8.0 the family is absent.
 *
 * A legacy stat cbwatch exports that has no native equivalent is listed in NO_NATIVE_EQUIVALENT with the reason,
 * and is never invented from something else.
 */

export type NativeType = 'counter' | 'gauge' | 'histogram';
/**
 * `mean`: the mean of a gauge's points since the previous poll (cbwatch's window rule for stats that are themselves
 * an average over one sample period, such as the CPU shares: docs/metrics.md), where ns_server serves the gauge.
 * `difference`: newest(series) − newest(denominator) (hibernated_requests: hibernates − unhibernates).
 * `docs_data_size`: couch_docs_data_size, per node with the 7.2+ small-file rule (`minFileBytesPerVbucket`), summed.
 * `fragmentation`: round(100 × (disk − data) / disk) over the nodes' sums, 0 for an empty disk (menelaus_stats'
 * Fragmentation); with `minFileBytesPerVbucket` the data side follows the small-file rule and the history file is
 * taken off the disk side. Series order is fixed for these two: data, file, then (7.2+) vBuckets and history.
 */
export type Derive = 'level' | 'rate' | 'mean' | 'increase_ratio' | 'level_ratio' | 'complement_ratio' | 'difference' | 'docs_data_size' | 'fragmentation';
export type Section = 'kv' | 'xdcr';

/** Label matchers besides the item's own labels: a value, or any of several values. */
export type Matchers = Readonly<Record<string, string | readonly string[]>>;

export interface NativeSeries {
  /** Series name as served on /metrics and asked with `name=` (a histogram's `_sum` / `_count` series). */
  readonly metric: string;
  readonly matchers: Matchers;
  /** Labels whose value must be none of these (ns_server's `not_any`: ep_dcp_other_*); a series without the label matches. */
  readonly notMatchers?: Readonly<Record<string, readonly string[]>>;
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
  /** How ns_server merges this stat across nodes (get_aggregate_method): 'sum' unless stated. */
  readonly nodeAggregate?: 'sum' | 'max';
  /** docs_data_size / fragmentation on 7.2+: a node whose file is under this × its vBuckets reports its file size as data. */
  readonly minFileBytesPerVbucket?: number;
  readonly nsServer: string;
  readonly absentIn80?: true;
  /**
   * Set on a cluster mid-upgrade (node-lines.ts scopedTable): the row reads only these nodes' series (its server
   * line's nodes), so that every line's rows can be asked in one batch of requests.
   */
  readonly nodes?: ReadonlySet<string>;
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
/** The labels that name a bucket stat's bucket, in order: a kv series' own, then an XDCR series' source bucket. */
export const KV_BUCKET_LABELS: readonly string[] = Object.freeze([KV_BUCKET_LABEL, XDCR_NATIVE_LABELS.sourceBucket]);

// ---- server lines ----

/**
 * The server lines whose native names or formulas differ (docs/native-metrics.md, "Per server line"). 7.6.8 is its
 * own line only because ep_cache_miss_rate changed there; 7.3–7.5 were never released (a 7.3+ pre-7.6 version
 * reads as 7.2); versions after 8.0 read as 8.0.
 */
export type ServerLine = '7.0' | '7.1' | '7.2' | '7.6' | '7.6.8' | '8.0';
export const SERVER_LINES: readonly ServerLine[] = Object.freeze(['7.0', '7.1', '7.2', '7.6', '7.6.8', '8.0'] as const);

/**
 * The line of a node's version (`7.6.8-6615-enterprise`, `7.2.0`, …); undefined before 7.0 or for a version that
 * does not parse. Pure.
 */
export function serverLineOf(version: string): ServerLine | undefined {
  const m = /^(\d+)\.(\d+)(?:\.(\d+))?/.exec(version.trim());
  if (m === null) return undefined;
  const [major, minor, patch] = [Number(m[1]), Number(m[2]), Number(m[3] ?? 0)];
  if (major < 7) return undefined;
  if (major >= 8) return '8.0';
  if (minor === 0) return '7.0';
  if (minor === 1) return '7.1';
  if (minor < 6) return '7.2';
  if (minor === 6 && patch < 8) return '7.6';
  return '7.6.8';
}

const at = (line: ServerLine, from: ServerLine): boolean => SERVER_LINES.indexOf(line) >= SERVER_LINES.indexOf(from);

/** kv_engine's small-file rule for couch_docs_data_size from 7.2: 128 KiB per vBucket of the node. */
export const MIN_FILE_BYTES_PER_VBUCKET = 128 * 1024;

const s = (metric: string, type: NativeType, matchers: Matchers = {}, notMatchers?: Readonly<Record<string, readonly string[]>>): NativeSeries =>
  Object.freeze({ metric, type, matchers: Object.freeze({ ...matchers }), ...(notMatchers ? { notMatchers: Object.freeze({ ...notMatchers }) } : {}) });

interface RowOpts {
  readonly nodeAggregate?: 'sum' | 'max';
  readonly scale?: number;
  readonly legacyFactor?: number;
  readonly perBucket?: boolean;
  readonly denominator?: readonly NativeSeries[];
  readonly absentIn80?: true;
  readonly minFileBytesPerVbucket?: number;
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
    ...(o.minFileBytesPerVbucket !== undefined ? { minFileBytesPerVbucket: o.minFileBytesPerVbucket } : {}),
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

/** `vb_<state>_*` (stats.def.h: `vb_{state}_x` → family `kv_vb_<x>` or as named, label `state`). */
function vbRows(line: ServerLine): NativeMapRow[] {
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
    // 7.0–7.2 only: kv_engine dropped vb_{state}_itm_memory from its Prometheus stats by 7.6 (absent from the 8.0 metadata).
    if (!at(line, '7.6')) out.push(kv(`${p}itm_memory`, `${p}itm_memory_bytes`, 'level', [s('kv_vb_itm_memory_bytes', 'gauge', m)], gen('itm_memory_bytes')));
  }
  return out;
}

/**
 * `ep_dcp_<group>_*` (stat_names_mappings.erl pre_70_stat_to_prom_query ep_dcp_* clauses + map_dcpagg_stat): one
 * connection_type, `views` as any of two, `other` as none of the named ones (`not_any`). The `:total` aggregate
 * series (every connection type summed by kv_engine) is not a connection of another type: `other` leaves it out.
 * `views+indexes` is menelaus_stats' computed sum of views, 2i and fts.
 */
const NAMED_DCP_TYPES = ['replication', 'xdcr', 'fts', 'cbas', 'eventing', 'secidx', 'mapreduce_view', 'spatial_view'] as const;
export const DCP_TOTAL_CONNECTION_TYPE = ':total';
const DCP_GROUPS: ReadonlyArray<readonly [string, string | readonly string[] | 'other']> = [
  ['replica', 'replication'],
  ['xdcr', 'xdcr'],
  ['2i', 'secidx'],
  ['fts', 'fts'],
  ['eventing', 'eventing'],
  ['cbas', 'cbas'],
  ['views', ['mapreduce_view', 'spatial_view']],
  ['views+indexes', ['mapreduce_view', 'spatial_view', 'secidx', 'fts']],
  ['other', 'other'],
];

function dcpRows(line: ServerLine): NativeMapRow[] {
  const out: NativeMapRow[] = [];
  for (const [g, type] of DCP_GROUPS) {
    const other = type === 'other';
    const m = other ? {} : { connection_type: type };
    const not = other ? { connection_type: [...NAMED_DCP_TYPES, DCP_TOTAL_CONNECTION_TYPE] } : undefined;
    const p = `ep_dcp_${g}_`;
    const f = `ep_dcp_${g.replace('+', '_')}_`;
    const sel = other ? `!~${[...NAMED_DCP_TYPES, DCP_TOTAL_CONNECTION_TYPE].join('|')}` : Array.isArray(type) ? `~${(type as readonly string[]).join('|')}` : String(type);
    const q = (name: string): string => `kv_dcp_${name}{connection_type=${sel}}`;
    const x = (name: string): NativeSeries => s(`kv_dcp_${name}`, 'gauge', m, not);
    out.push(
      kv(`${p}count`, `${f}connections`, 'level', [x('connection_count')], q('connection_count')),
      kv(`${p}items_remaining`, `${f}items_remaining`, 'level', [x('items_remaining')], q('items_remaining')),
      kv(`${p}items_sent`, `${f}items_sent_per_second`, 'rate', [x('items_sent')], `irate(${q('items_sent')})`),
      kv(`${p}backoff`, `${f}backoff_per_second`, 'rate', [x('backoff')], `irate(${q('backoff')})`),
      kv(`${p}total_bytes`, `${f}sent_bytes_per_second`, 'rate', [x('total_data_size_bytes')], `irate(${q('total_data_size_bytes')})`),
    );
    // 7.0–7.2 only: kv_dcp_producer_count (stats.def.h connagg_producer_count) is absent from 7.6 on.
    if (!at(line, '7.6')) out.push(kv(`${p}producer_count`, `${f}producers`, 'level', [x('producer_count')], q('producer_count')));
  }
  return out;
}

const ops = (op: string | readonly string[], result?: string): NativeSeries => s('kv_ops', 'gauge', result === undefined ? { op } : { op, result });
const hitMiss = (legacy: string, op: string, result: string): NativeMapRow =>
  kv(legacy, `${legacy}_per_second`, 'rate', [ops(op, result)], `irate(kv_ops{op="${op}",result="${result}"})`);

/**
 * HLC drift, ahead exceptions and sync writes by vBucket state, on every 7.x line: one family with a `state` label
 * (stats.def.h STAT(ep_hlc_drift, FMT("ep_{state}_hlc_drift"), microseconds, , ), ep_hlc_drift_count and
 * ep_ahead_exceptions in every stored BSL-licensed version, the 7.0-GA era and later; ns_server's prometheus_cfg
 * derives kv_avg_timestamp_drift_seconds from kv_ep_hlc_drift_seconds / kv_ep_hlc_drift_count there; Couchbase's
 * data-service metrics reference lists the three as added in 7.0.0; 8.0 metadata: the same names). The per-state
 * metrics (STAT(ep_active_hlc_drift, , microseconds, , ) → kv_ep_active_hlc_drift_seconds) are only in the 2020
 * pre-release stats.def.h (0c846fff), which no release serves. Sync writes: kv_vb_sync_write_<x>_count{state} on
 * every line (stats.def.h STAT(vb_sync_write_accepted_count, "vb_{state}_sync_write_accepted_count", …)).
 */
function stateRows(): NativeMapRow[] {
  const out: NativeMapRow[] = [];
  for (const st of ['active', 'replica'] as const) {
    const drift = s('kv_ep_hlc_drift_seconds', 'gauge', { state: st });
    const count = s('kv_ep_hlc_drift_count', 'gauge', { state: st });
    const ahead = s('kv_ep_ahead_exceptions', 'counter', { state: st });
    const name = (x: NativeSeries): string => `${x.metric}{state="${st}"}`;
    out.push(
      kv(`ep_${st}_hlc_drift`, `ep_${st}_hlc_drift_seconds_per_second`, 'rate', [drift], `irate(${name(drift)}) * 1000000 (µs)`, { legacyFactor: 1e6, scale: 1 }),
      kv(`ep_${st}_hlc_drift_count`, `ep_${st}_hlc_drift_count_per_second`, 'rate', [count], `irate(${name(count)})`),
      kv(`ep_${st}_ahead_exceptions`, `ep_${st}_ahead_exceptions_per_second`, 'rate', [ahead], `irate(${name(ahead)})`),
      kv(`avg_${st}_timestamp_drift`, `avg_${st}_timestamp_drift_seconds`, 'increase_ratio', [drift], `computed: ep_${st}_hlc_drift / 1000000 / ep_${st}_hlc_drift_count (s)`, {
        denominator: [count],
      }),
    );
  }
  for (const x of ['accepted', 'committed', 'aborted'] as const) {
    out.push(
      kv(`vb_active_sync_write_${x}_count`, `vb_active_sync_write_${x}_per_second`, 'rate', [s(`kv_vb_sync_write_${x}_count`, 'gauge', { state: 'active' })], `irate(kv_vb_sync_write_${x}_count{state="active"})`),
    );
  }
  return out;
}

/** couch_docs_data_size and the fragmentations: series in the order the docs_data_size / fragmentation derives read them. */
function couchRows(line: ServerLine): NativeMapRow[] {
  const data = s('kv_ep_db_data_size_bytes', 'gauge');
  const file = s('kv_ep_db_file_size_bytes', 'gauge');
  const rule = at(line, '7.2');
  const extra = rule ? [s('kv_ep_vb_total', 'gauge'), s('kv_ep_db_history_file_size_bytes', 'gauge')] : [];
  const o = rule ? { minFileBytesPerVbucket: MIN_FILE_BYTES_PER_VBUCKET } : {};
  return [
    kv('couch_docs_data_size', 'couch_docs_data_size_bytes', rule ? 'docs_data_size' : 'level', rule ? [data, file, extra[0] as NativeSeries] : [data], rule ? 'sum(kv_ep_db_data_size_bytes), a node\'s file size while it is under 128 KiB × its vBuckets (7.2+)' : 'sum(kv_ep_db_data_size_bytes)', o),
    kv('couch_docs_fragmentation', 'couch_docs_fragmentation_ratio', 'fragmentation', [data, file, ...extra], `computed: round((couch_docs_disk_size${rule ? ' - history file size' : ''} - couch_docs_data_size) / (couch_docs_disk_size${rule ? ' - history' : ''}) * 100)`, {
      ...o,
      legacyFactor: 1,
      scale: 0.01,
    }),
    kv('couch_views_fragmentation', 'couch_views_fragmentation_ratio', 'fragmentation', [s('couch_views_data_size', 'gauge'), s('couch_views_disk_size', 'gauge')], 'computed: round((couch_views_disk_size - couch_views_data_size) / couch_views_disk_size * 100)', {
      legacyFactor: 1,
      scale: 0.01,
    }),
  ];
}

function kvRows(line: ServerLine): NativeMapRow[] {
  return [
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
    ...couchRows(line),
    kv('couch_docs_actual_disk_size', 'couch_docs_actual_disk_size_bytes', 'level', [s('couch_docs_actual_disk_size', 'gauge')], 'sum by (name) (couch_docs_actual_disk_size)'),
    kv('couch_views_actual_disk_size', 'couch_views_actual_disk_size_bytes', 'level', [s('couch_views_actual_disk_size', 'gauge')], 'sum by (name) (couch_views_actual_disk_size)'),
    // `couch_<x>`: sum by name over the design documents (signature label); ops as irate, max over the nodes (get_aggregate_method).
    kv('couch_views_data_size', 'couch_views_data_size_bytes', 'level', [s('couch_views_data_size', 'gauge')], 'sum by (name) (couch_views_data_size)'),
    kv('couch_views_disk_size', 'couch_views_disk_size_bytes', 'level', [s('couch_views_disk_size', 'gauge')], 'sum by (name) (couch_views_disk_size)'),
    kv('couch_views_ops', 'couch_views_ops_per_second', 'rate', [s('couch_views_ops', 'counter')], 'sum by (name) (irate(couch_views_ops)); max over nodes', { nodeAggregate: 'max' }),
    kv('couch_total_disk_size', 'couch_total_disk_size_bytes', 'level', [s('couch_docs_actual_disk_size', 'gauge'), s('couch_views_actual_disk_size', 'gauge')], 'computed: couch_docs_actual_disk_size + couch_views_actual_disk_size'),
    kv('vb_total_queue_age', 'vb_total_queue_age_seconds', 'level', [s('kv_vb_queue_age_seconds', 'gauge')], 'sum(kv_vb_queue_age_seconds) * 1000 (ms)', { legacyFactor: 1000 }),
    kv('vb_total_queue_size', 'vb_total_queue_size', 'level', [s('kv_vb_queue_size', 'gauge')], 'sum(kv_vb_queue_size)'),
    kv('vb_avg_total_queue_age', 'vb_avg_total_queue_age_seconds', 'level_ratio', [s('kv_vb_queue_age_seconds', 'gauge')], 'computed: vb_total_queue_age / vb_total_queue_size / 1000', {
      denominator: [s('kv_vb_queue_size', 'gauge')],
    }),
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
    // 7.0–7.2: stats.def.h STAT(ep_kv_size, , bytes, memory_used, LABEL(for, hashtable)); 7.6+: kv_cross_reference.csv → kv_ep_key_value_size_bytes.
    at(line, '7.6')
      ? kv('ep_kv_size', 'ep_kv_size_bytes', 'level', [s('kv_ep_key_value_size_bytes', 'gauge')], 'kv_ep_key_value_size_bytes')
      : kv('ep_kv_size', 'ep_kv_size_bytes', 'level', [s('kv_memory_used_bytes', 'gauge', { for: 'hashtable' })], 'kv_memory_used_bytes{for="hashtable"}'),
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
    ...stateRows(),
    ...vbRows(line),
    ...dcpRows(line),
    // Computed by ns_server from the stats above (menelaus_stats computed_stats_lazy_proplist).
    kv('hit_ratio', 'hit_ratio', 'increase_ratio', [ops('get', 'hit')], 'computed: 100 * get_hits / cmd_get', { denominator: [ops('get')], legacyFactor: 100, scale: 1 }),
    // 7.0–7.6.7: ep_bg_fetched / cmd_lookup (menelaus_stats EPCacheMissRatio); 7.6.8 and 8.0: get_misses / cmd_get.
    at(line, '7.6.8')
      ? kv('ep_cache_miss_rate', 'ep_cache_miss_ratio', 'increase_ratio', [ops('get', 'miss')], 'computed: 100 * get_misses / cmd_get', { denominator: [ops('get')], legacyFactor: 100, scale: 1 })
      : kv('ep_cache_miss_rate', 'ep_cache_miss_ratio', 'increase_ratio', [s('kv_ep_bg_fetched', 'counter')], 'computed: 100 * ep_bg_fetched / cmd_lookup', {
          denominator: [s('kv_cmd_lookup', 'counter')],
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
    // `@system` stats (stat_names_mappings.erl: sys_<stat>, rest_requests, hibernated_*), per node, shown under every
    // bucket: summed over the active nodes (menelaus_stats section_nodes("@system")), max for cpu_utilization_rate.
    ...(['cpu_utilization_rate', 'cpu_user_rate', 'cpu_sys_rate', 'cpu_irq_rate', 'cpu_stolen_rate'] as const).map((st) =>
      kv(st, `${st.replace(/_rate$/, '')}_ratio`, 'mean', [s(`sys_${st}`, 'gauge')], `sys_${st} (per node; percent)${st === 'cpu_utilization_rate' ? '; max over nodes' : ''}`, {
        perBucket: false,
        legacyFactor: 1,
        scale: 0.01,
        ...(st === 'cpu_utilization_rate' ? { nodeAggregate: 'max' as const } : {}),
      }),
    ),
    kv('cpu_cores_available', 'cpu_cores_available', 'level', [s('sys_cpu_cores_available', 'gauge')], 'sys_cpu_cores_available (per node)', { perBucket: false }),
    ...(['mem_actual_free', 'mem_actual_used', 'mem_free', 'mem_limit', 'mem_total', 'mem_used_sys', 'swap_total', 'swap_used'] as const).map((st) =>
      kv(st, `${st}_bytes`, 'level', [s(`sys_${st}`, 'gauge')], `sys_${st} (per node)`, { perBucket: false }),
    ),
    kv('allocstall', 'allocstall', 'level', [s('sys_allocstall', 'counter')], 'sys_allocstall (per node; as served, not a rate)', { perBucket: false }),
    kv('rest_requests', 'rest_requests_per_second', 'rate', [s('cm_rest_request_leaves_total', 'counter')], 'irate(cm_rest_request_leaves_total) (per node)', { perBucket: false }),
    kv('hibernated_waked', 'hibernated_waked_per_second', 'rate', [s('cm_request_unhibernates_total', 'counter')], 'irate(cm_request_unhibernates_total) (per node)', { perBucket: false }),
    kv('hibernated_requests', 'hibernated_requests', 'difference', [s('cm_request_hibernates_total', 'counter')], 'cm_request_hibernates_total - cm_request_unhibernates_total (per node)', {
      perBucket: false,
      denominator: [s('cm_request_unhibernates_total', 'counter')],
    }),
    // `@xdcr-<bucket>` (stat_names_mappings.erl pre_70_stat_to_prom_query, the replication_changes_left and
    // replication_docs_rep_queue clauses): sum by (name) of the XDCR gauge whose sourceBucketName is the bucket, over
    // every replication and pipeline of it (no pipelineType matcher) and over the nodes.
    kv('replication_changes_left', 'replication_changes_left', 'level', [s('xdcr_changes_left_total', 'gauge')], 'sum by (name) (xdcr_changes_left_total{sourceBucketName=<bucket>})'),
    kv('replication_docs_rep_queue', 'replication_docs_rep_queue', 'level', [s('xdcr_docs_rep_queue_total', 'gauge')], 'sum by (name) (xdcr_docs_rep_queue_total{sourceBucketName=<bucket>})', { absentIn80: true }),
  ];
}

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
/** One line's table: its bucket rows and XDCR rows, and lookups by legacy stat name. Made once per line. */
export interface NativeTable {
  readonly line: ServerLine;
  readonly kv: readonly NativeMapRow[];
  readonly xdcr: readonly NativeMapRow[];
  /** kv then xdcr. */
  readonly all: readonly NativeMapRow[];
  readonly kvByLegacy: ReadonlyMap<string, NativeMapRow>;
  readonly xdcrByLegacy: ReadonlyMap<string, NativeMapRow>;
}

const tables = new Map<ServerLine, NativeTable>();

/** The table of a server line (the same frozen arrays every call: the range groups' plans are kept per table). */
export function nativeMapFor(line: ServerLine): NativeTable {
  let t = tables.get(line);
  if (t !== undefined) return t;
  // 8.0 no longer serves the metrics behind `absentIn80` rows: they are left out of its table.
  const keep = (r: NativeMapRow): boolean => !(line === '8.0' && r.absentIn80 === true);
  const kvRowsOf = Object.freeze(kvRows(line).filter(keep));
  const xdcrRowsOf = Object.freeze(XDCR_ROWS.filter(keep));
  t = Object.freeze({
    line,
    kv: kvRowsOf,
    xdcr: xdcrRowsOf,
    all: Object.freeze([...kvRowsOf, ...xdcrRowsOf]),
    kvByLegacy: new Map(kvRowsOf.map((r) => [r.legacy, r])),
    xdcrByLegacy: new Map(xdcrRowsOf.map((r) => [r.legacy, r])),
  });
  tables.set(line, t);
  return t;
}

/**
 * The default table: the 7.6 line's (7.6.0–7.6.7). What a caller that knows no node's version reads, what the
 * recording-rule bridge (gen-bridge.ts) derives its rules from, and what docs/metrics.md lists row by row;
 * nativeMapFor gives every line's.
 */
export const DEFAULT_LINE: ServerLine = '7.6';
/** Every row of the default table: bucket stats, then XDCR stats. */
export const NATIVE_MAP: readonly NativeMapRow[] = nativeMapFor(DEFAULT_LINE).all;
export const KV_NATIVE_MAP: readonly NativeMapRow[] = nativeMapFor(DEFAULT_LINE).kv;
export const XDCR_NATIVE_MAP: readonly NativeMapRow[] = nativeMapFor(DEFAULT_LINE).xdcr;

/**
 * Legacy stats cbwatch exports whose value the range API cannot give, on any line: no native metric carries it (in
 * the references above), or Couchbase's own envelope answers nothing for it on 7.0+ either. They are named in
 * docs/metrics.md; with `stats_source: range` their families are absent. Stats mapped on some lines only
 * (kv_dcp_producer_count, vb_<state>_itm_memory: 7.0–7.2) are in LINE_ONLY.
 */
export const NO_NATIVE_EQUIVALENT: Readonly<Record<Section, Readonly<Record<string, string>>>> = Object.freeze({
  kv: Object.freeze({
    'ep_dcp_<type>_total_backlog_size':
      'map_dcpagg_stat asks for kv_dcp_total_backlog_size, which kv_engine never defines (stats.def.h has no backlog connagg stat): Couchbase\'s own 7.0+ envelope answers nothing for it either',
    'couch_spatial_* (data/disk size, ops)': 'not asked: the 8.0 metadata lists no couch_spatial_* metric and spatial views are deprecated; the couch_views_* rows cover the view engine',
    'ep_tap_*, the other replication_* (pre-4.0 XDCR totals)': 'removed before 7.0: a 7.0+ envelope has none either',
    odp_report_failed: 'ns_server asks for sys_odp_report_failed (stat_names_mappings.erl is_system_stat), which the 8.0 metadata does not list (it lists cm_odp_report_failed): Couchbase\'s own envelope has no value for it',
    'cpu_idle_ms, cpu_local_ms': 'pre-7.0 @system stats: ns_server would ask for sys_cpu_idle_ms / sys_cpu_local_ms, which the 8.0 metadata does not list',
    ep_max_data_size: 'no kv_ep_max_data_size in the 8.0 metadata (the bucket quota is mapped as ep_max_size)',
    '(any stat outside cbwatch\'s catalog)': 'exported by the envelope under a generated name; the range source asks only for the rows of this table',
  }),
  xdcr: Object.freeze({
    meta_latency_wt: 'not mapped by ns_server (no native metric): on 7.0+ the envelope answers nothing for it either',
  }),
});

/** Stats that only some lines map, and why the others cannot (docs/native-metrics.md, "Per server line"). */
export const LINE_ONLY: Readonly<Record<string, { readonly lines: readonly ServerLine[]; readonly why: string }>> = Object.freeze({
  'vb_<state>_itm_memory': { lines: ['7.0', '7.1', '7.2'], why: 'kv_vb_itm_memory_bytes is not served from 7.6 on (absent from the 8.0 metadata)' },
  'ep_dcp_<type>_producer_count': { lines: ['7.0', '7.1', '7.2'], why: 'kv_dcp_producer_count is not served from 7.6 on (absent from the 8.0 metadata)' },
});

/** Rows by legacy stat name, per section (the default table). */
export const KV_ROW_BY_LEGACY: ReadonlyMap<string, NativeMapRow> = nativeMapFor(DEFAULT_LINE).kvByLegacy;
export const XDCR_ROW_BY_LEGACY: ReadonlyMap<string, NativeMapRow> = nativeMapFor(DEFAULT_LINE).xdcrByLegacy;

/** Every native series name a section's rows read (numerators and denominators), sorted. */
export function nativeMetricsOf(rows: readonly NativeMapRow[]): string[] {
  const names = new Set<string>();
  for (const r of rows) for (const x of [...r.series, ...(r.denominator ?? [])]) names.add(x.metric);
  return [...names].sort();
}
