/**
 * The native-metric mapping table (src/stats/native-map.ts), checked row by row against references from outside
 * the code under test:
 * Every server line's table (nativeMapFor: 7.0, 7.1, 7.2, 7.6, 7.6.8, 8.0) is checked against its own oracle.
 * - ORACLE: hand-written transcriptions of couchbase/ns_server `src/stat_names_mappings.erl` (commit 08f6fccc5ae7;
 *   the explicit clauses of pre_70_stat_to_prom_query/3, map_dcpagg_stat/4 and the `@xdcr-` section with its
 *   default_stat_list) and, for the stats it hands to kv_stats_mappings, of couchbase/kv_engine
 *   `include/statistics/stats.def.h` (commit 0c846fffcdc4: family, labels, unit). Computed stats (menelaus_stats)
 *   are transcribed as the quotient the envelope shows (menelaus_stats.erl computed_stats_lazy_proplist, commit
 *   001be57c4e85: EPCacheMissRatio = ep_bg_fetched / cmd_lookup; get_aggregate_method: max for couch_views_ops and
 *   cpu_utilization_rate). Per-line facts not in those snapshots come from issue 37, which read the 7.0.0, 7.1.4,
 *   7.2.0, 7.6.0, 7.6.8 and 8.0.0 trees: ep_cache_miss_rate = get_misses / cmd_get from 7.6.8, the 7.2+ small-file
 *   rule (128 KiB × vBuckets) and history file size; the BSL-licensed stats.def.h versions (2021 on, 7.0 GA and
 *   later) for the `state` label of the HLC-drift families on every 7.x line.
 * - older kv_engine names: `include/statistics/stats.def.h` at 0c846fffcdc4 (a 2020 pre-release of 7.0: STAT(ep_kv_size, ,
 *   bytes, memory_used, LABEL(for, hashtable)); connagg_producer_count)
 *   and a later stored version (vb_{state}_itm_memory → vb_itm_memory; vb_{state}_sync_write_*_count →
 *   vb_sync_write_*_count with a `state` label).
 * - the 8.0 metadata files (test/fixtures/couchbase/native/, docs-server release/8.0): every native name exists
 *   with the type, unit and labels the row assumes.
 * - cbwatch's catalogs (the families the envelope path exports): every row's family exists with the unit the
 *   row's scale produces.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { STAT_FAMILIES } from '../../src/collectors/bucket-stat-catalog.js';
import { XDCR_STATS } from '../../src/couchbase/xdcr.js';
import { LINE_ONLY, NO_NATIVE_EQUIVALENT, nativeMapFor, serverLineOf } from '../../src/stats/native-map.js';
import type { Derive, Matchers, NativeMapRow, ServerLine } from '../../src/stats/native-map.js';

/** The lines, written out (not read from the module under test). */
const LINES: readonly ServerLine[] = ['7.0', '7.1', '7.2', '7.6', '7.6.8', '8.0'];
const ORDER: Record<ServerLine, number> = { '7.0': 0, '7.1': 1, '7.2': 2, '7.6': 3, '7.6.8': 4, '8.0': 5 };
const from = (line: ServerLine, first: ServerLine): boolean => ORDER[line] >= ORDER[first];

const FIX = join(__dirname, '..', 'fixtures', 'couchbase', 'native');

interface Meta {
  readonly type: string;
  readonly unit?: string;
  readonly labels?: ReadonlyArray<string | { name: string }>;
}
const META: Map<string, Meta> = new Map();
for (const f of ['kv', 'goxdcr', 'cm']) {
  const d = JSON.parse(readFileSync(join(FIX, `8.0-${f}_metrics_metadata.json`), 'utf8')) as Record<string, Meta>;
  for (const [k, v] of Object.entries(d)) META.set(k, v);
}
const labelsOf = (m: Meta): string[] => (m.labels ?? []).map((l) => (typeof l === 'string' ? l : l.name));

/** One oracle entry: the native series (name → matchers), summed; rate or not; ns_server's unit factor. */
interface Oracle {
  readonly series: Readonly<Record<string, Matchers>> | ReadonlyArray<Series>;
  readonly rate?: boolean;
  readonly factor?: number;
  /** For computed stats: the divisor series and the quotient kind. */
  readonly den?: ReadonlyArray<Series>;
  readonly quotient?: 'increase_ratio' | 'level_ratio' | 'complement_ratio';
  /** Another derivation than the level / rate / quotient above. */
  readonly derive?: Derive;
  /** get_aggregate_method: 'max' where ns_server takes the max over the nodes. */
  readonly max?: true;
  readonly perNode?: true;
  readonly minFile?: number;
}
/** A native series: name, matchers, and (ns_server's not_any) excluded label values. */
type Series = readonly [string, Matchers] | readonly [string, Matchers, Readonly<Record<string, readonly string[]>>];
const one = (metric: string, m: Matchers = {}): ReadonlyArray<Series> => [[metric, m]];

// ---- stat_names_mappings.erl, explicit clauses (bucket section), as written there ----
const NS_EXPLICIT: Record<string, Oracle> = {
  cmd_get: { series: one('kv_ops', { op: 'get' }), rate: true },
  couch_docs_disk_size: { series: one('kv_ep_db_file_size_bytes') },
  couch_docs_data_size: { series: one('kv_ep_db_data_size_bytes') },
  disk_write_queue: { series: [['kv_ep_queue_size', {}], ['kv_ep_flusher_todo', {}]] },
  ep_ops_create: { series: one('kv_vb_ops_create'), rate: true },
  ep_ops_update: { series: one('kv_vb_ops_update'), rate: true },
  misses: { series: one('kv_ops', { result: 'miss' }), rate: true },
  ops: {
    series: [
      ['kv_cmd_lookup', {}],
      ['kv_ops', { op: ['set', 'incr', 'decr', 'delete', 'del_meta', 'get_meta', 'set_meta', 'set_ret_meta', 'del_ret_meta'] }],
    ],
    rate: true,
  },
  vb_total_queue_age: { series: one('kv_vb_queue_age_seconds'), factor: 1000 },
  vb_total_queue_size: { series: one('kv_vb_queue_size') },
  xdc_ops: { series: one('kv_ops', { op: ['del_meta', 'get_meta', 'set_meta'] }), rate: true },
  bg_wait_count: { series: one('kv_bg_wait_seconds_count'), rate: true },
  bg_wait_total: { series: one('kv_bg_wait_seconds_sum'), rate: true, factor: 1e6 },
  disk_commit_count: { series: one('kv_disk_seconds_count', { op: 'commit' }), rate: true },
  disk_commit_total: { series: one('kv_disk_seconds_sum', { op: 'commit' }), rate: true, factor: 1e6 },
  disk_update_count: { series: one('kv_disk_seconds_count', { op: 'update' }), rate: true },
  disk_update_total: { series: one('kv_disk_seconds_sum', { op: 'update' }), rate: true, factor: 1e6 },
  // `couch_<x>` → sum by name of the native metric of the same name; couch_views_ops/couch_spatial_ops as rates.
  couch_docs_actual_disk_size: { series: one('couch_docs_actual_disk_size') },
  couch_views_actual_disk_size: { series: one('couch_views_actual_disk_size') },
  couch_views_data_size: { series: one('couch_views_data_size') },
  couch_views_disk_size: { series: one('couch_views_disk_size') },
  couch_spatial_data_size: { series: one('couch_spatial_data_size') },
  couch_spatial_disk_size: { series: one('couch_spatial_disk_size') },
  couch_views_ops: { series: one('couch_views_ops'), rate: true, max: true },
  couch_spatial_ops: { series: one('couch_spatial_ops'), rate: true },
  // "not actually a per-bucket metric, but a global metric" (the clause's comment): per node, no bucket label.
  curr_connections: { series: one('kv_curr_connections'), perNode: true },
};

// map_dcpagg_stat: ep_dcp_<type>_<stat> → kv_dcp_<suffix>{connection_type=…}; items_sent, total_bytes, backoff are irates.
const DCP_TYPE: Record<string, string | readonly string[]> = {
  replica: 'replication',
  xdcr: 'xdcr',
  '2i': 'secidx',
  fts: 'fts',
  eventing: 'eventing',
  cbas: 'cbas',
  views: ['mapreduce_view', 'spatial_view'],
};
// menelaus_stats ViewsIndexesStats: ep_dcp_views+indexes_<x> = views + 2i + fts.
DCP_TYPE['views+indexes'] = ['mapreduce_view', 'spatial_view', 'secidx', 'fts'];
// ep_dcp_other_: not_any of the eight named types; the `:total` aggregate (all types summed) is left out too.
const OTHER_NOT = { connection_type: ['replication', 'xdcr', 'fts', 'cbas', 'eventing', 'secidx', 'mapreduce_view', 'spatial_view', ':total'] };
function dcpOracle(line: ServerLine): Record<string, Oracle> {
  const out: Record<string, Oracle> = {};
  for (const [g, t] of [...Object.entries(DCP_TYPE), ['other', undefined] as const]) {
    const x = (metric: string): ReadonlyArray<Series> => (t === undefined ? [[metric, {}, OTHER_NOT]] : [[metric, { connection_type: t }]]);
    out[`ep_dcp_${g}_count`] = { series: x('kv_dcp_connection_count') };
    out[`ep_dcp_${g}_items_remaining`] = { series: x('kv_dcp_items_remaining') };
    // kv_dcp_producer_count: 7.0–7.2 only (not in the 8.0 metadata).
    if (!from(line, '7.6')) out[`ep_dcp_${g}_producer_count`] = { series: x('kv_dcp_producer_count') };
    out[`ep_dcp_${g}_items_sent`] = { series: x('kv_dcp_items_sent'), rate: true };
    out[`ep_dcp_${g}_backoff`] = { series: x('kv_dcp_backoff'), rate: true };
    out[`ep_dcp_${g}_total_bytes`] = { series: x('kv_dcp_total_data_size_bytes'), rate: true };
  }
  return out;
}

// `@system`: sys_<stat> for cpu_*, mem_*, swap_*, allocstall, odp_report_failed; rest_requests and hibernated_waked are irates.
const SYSTEM: Record<string, Oracle> = {};
for (const st of ['cpu_utilization_rate', 'cpu_user_rate', 'cpu_sys_rate', 'cpu_irq_rate', 'cpu_stolen_rate', 'cpu_cores_available']) SYSTEM[st] = { series: one(`sys_${st}`) };
for (const st of ['mem_actual_free', 'mem_actual_used', 'mem_free', 'mem_limit', 'mem_total', 'mem_used_sys', 'swap_total', 'swap_used', 'allocstall', 'odp_report_failed']) {
  SYSTEM[st] = { series: one(`sys_${st}`) };
}
SYSTEM.rest_requests = { series: one('cm_rest_request_leaves_total'), rate: true };
SYSTEM.hibernated_waked = { series: one('cm_request_unhibernates_total'), rate: true };
// sys_hibernated_requests = cm_request_hibernates_total - ignoring(name) cm_request_unhibernates_total.
SYSTEM.hibernated_requests = { series: one('cm_request_hibernates_total'), den: one('cm_request_unhibernates_total'), derive: 'difference' };
// The envelope's @system section: every host stat summed over the active nodes, cpu_utilization_rate maxed.
for (const o of Object.values(SYSTEM)) (o as { perNode?: true }).perNode = true;
(SYSTEM.cpu_utilization_rate as { max?: true }).max = true;

// ---- kv_stats_mappings (generated from kv_engine stats.def.h): STAT(name, , unit, family, labels) ----
const hm = (op: string, result: string): Oracle => ({ series: one('kv_ops', { op, result }), rate: true });
const STATS_DEF: Record<string, Oracle> = {
  cmd_set: { series: one('kv_ops', { op: 'set' }), rate: true },
  get_hits: hm('get', 'hit'),
  get_misses: hm('get', 'miss'),
  delete_hits: hm('delete', 'hit'),
  delete_misses: hm('delete', 'miss'),
  incr_hits: hm('incr', 'hit'),
  incr_misses: hm('incr', 'miss'),
  decr_hits: hm('decr', 'hit'),
  decr_misses: hm('decr', 'miss'),
  cas_hits: hm('cas', 'hit'),
  cas_misses: hm('cas', 'miss'),
  cas_badval: hm('cas', 'badval'),
  ep_num_ops_get_meta: { series: one('kv_ops', { op: 'get_meta' }), rate: true },
  ep_num_ops_set_meta: { series: one('kv_ops', { op: 'set_meta' }), rate: true },
  ep_num_ops_del_meta: { series: one('kv_ops', { op: 'del_meta' }), rate: true },
  ep_num_ops_set_ret_meta: { series: one('kv_ops', { op: 'set_ret_meta' }), rate: true },
  ep_num_ops_del_ret_meta: { series: one('kv_ops', { op: 'del_ret_meta' }), rate: true },
  cmd_lookup: { series: one('kv_cmd_lookup'), rate: true },
  bytes_read: { series: one('kv_read_bytes'), rate: true },
  bytes_written: { series: one('kv_written_bytes'), rate: true },
  evictions: { series: one('kv_memcache_evictions'), rate: true },
  ep_bg_fetched: { series: one('kv_ep_bg_fetched'), rate: true },
  ep_tmp_oom_errors: { series: one('kv_ep_tmp_oom_errors'), rate: true },
  ep_num_value_ejects: { series: one('kv_ep_num_value_ejects'), rate: true },
  ep_diskqueue_fill: { series: one('kv_ep_diskqueue_fill'), rate: true },
  ep_diskqueue_drain: { series: one('kv_ep_diskqueue_drain'), rate: true },
  curr_items: { series: one('kv_curr_items') },
  curr_items_tot: { series: one('kv_curr_items_tot') },
  mem_used: { series: one('kv_mem_used_bytes') },
  ep_mem_high_wat: { series: one('kv_ep_mem_high_wat') },
  ep_mem_low_wat: { series: one('kv_ep_mem_low_wat') },
  ep_max_size: { series: one('kv_ep_max_size') },
  ep_overhead: { series: one('kv_total_memory_overhead_bytes') },
  ep_meta_data_memory: { series: one('kv_ep_meta_data_memory_bytes') },
  ep_queue_size: { series: one('kv_ep_queue_size') },
  ep_flusher_todo: { series: one('kv_ep_flusher_todo') },
  ep_diskqueue_items: { series: one('kv_ep_diskqueue_items') },
  ep_num_non_resident: { series: one('kv_ep_num_non_resident') },
  ep_vb_total: { series: one('kv_ep_vb_total') },
  ep_oom_errors: { series: one('kv_ep_oom_errors') },
  ep_item_commit_failed: { series: one('kv_ep_item_commit_failed') },
  ep_data_read_failed: { series: one('kv_ep_data_read_failed') },
  ep_data_write_failed: { series: one('kv_ep_data_write_failed') },
  ep_clock_cas_drift_threshold_exceeded: { series: one('kv_ep_clock_cas_drift_threshold_exceeded') },
};
// VB_AGG_STAT(x, unit, family): vb_<state>_x → kv_vb_<x or family>{state}; queue_age is milliseconds (native seconds).
for (const st of ['active', 'replica', 'pending']) {
  const m = { state: st };
  const p = `vb_${st}_`;
  STATS_DEF[`${p}num`] = { series: one('kv_num_vbuckets', m) };
  STATS_DEF[`${p}queue_size`] = { series: one('kv_vb_queue_size', m) };
  STATS_DEF[`${p}queue_fill`] = { series: one('kv_vb_queue_fill', m), rate: true };
  STATS_DEF[`${p}queue_drain`] = { series: one('kv_vb_queue_drain', m), rate: true };
  STATS_DEF[`${p}queue_age`] = { series: one('kv_vb_queue_age_seconds', m), factor: 1000 };
  STATS_DEF[`${p}ops_create`] = { series: one('kv_vb_ops_create', m), rate: true };
  STATS_DEF[`${p}ops_update`] = { series: one('kv_vb_ops_update', m), rate: true };
  STATS_DEF[`${p}eject`] = { series: one('kv_vb_eject', m), rate: true };
  STATS_DEF[`${p}num_non_resident`] = { series: one('kv_vb_num_non_resident', m) };
  STATS_DEF[`${p}meta_data_memory`] = { series: one('kv_vb_meta_data_memory_bytes', m) };
  if (st !== 'active') STATS_DEF[`${p}curr_items`] = { series: one('kv_vb_curr_items', m) };
}

// ---- computed by ns_server (menelaus_stats) from the stats above ----
const COMPUTED: Record<string, Oracle> = {
  hit_ratio: { series: one('kv_ops', { op: 'get', result: 'hit' }), den: one('kv_ops', { op: 'get' }), quotient: 'increase_ratio', factor: 100 },
  // menelaus_stats: vb_total_queue_age / vb_total_queue_size / 1000; couch_docs_actual_disk_size + couch_views_actual_disk_size.
  vb_avg_total_queue_age: { series: one('kv_vb_queue_age_seconds'), den: one('kv_vb_queue_size'), quotient: 'level_ratio', factor: 1 },
  couch_total_disk_size: { series: [['couch_docs_actual_disk_size', {}], ['couch_views_actual_disk_size', {}]] },
  // Fragmentation = round((Disk - Data) / Disk * 100): a whole percent, legacy value as is.
  couch_views_fragmentation: { series: [['couch_views_data_size', {}], ['couch_views_disk_size', {}]], derive: 'fragmentation' },
  ep_resident_items_rate: { series: one('kv_ep_num_non_resident'), den: one('kv_curr_items_tot'), quotient: 'complement_ratio', factor: 100 },
  avg_bg_wait_time: { series: one('kv_bg_wait_seconds_sum'), den: one('kv_bg_wait_seconds_count'), quotient: 'increase_ratio', factor: 1e6 },
  avg_disk_update_time: { series: one('kv_disk_seconds_sum', { op: 'update' }), den: one('kv_disk_seconds_count', { op: 'update' }), quotient: 'increase_ratio', factor: 1e6 },
  avg_disk_commit_time: { series: one('kv_disk_seconds_sum', { op: 'commit' }), den: one('kv_disk_seconds_count', { op: 'commit' }), quotient: 'increase_ratio', factor: 1 },
};
for (const st of ['active', 'replica', 'pending']) {
  const m = { state: st };
  COMPUTED[`vb_${st}_resident_items_ratio`] = {
    series: one('kv_vb_num_non_resident', m),
    den: st === 'active' ? one('kv_curr_items') : one('kv_vb_curr_items', m),
    quotient: 'complement_ratio',
    factor: 100,
  };
  COMPUTED[`vb_avg_${st}_queue_age`] = { series: one('kv_vb_queue_age_seconds', m), den: one('kv_vb_queue_size', m), quotient: 'level_ratio', factor: 1 };
}

/** What changes from line to line, by hand from the sources in the header. */
function lineOracle(line: ServerLine): Record<string, Oracle> {
  const out: Record<string, Oracle> = {};
  // ep_kv_size: 7.0–7.2 kv_memory_used_bytes{for="hashtable"} (stats.def.h 0c846fff); 7.6+ kv_ep_key_value_size_bytes (kv_cross_reference.csv).
  out.ep_kv_size = from(line, '7.6') ? { series: one('kv_ep_key_value_size_bytes') } : { series: one('kv_memory_used_bytes', { for: 'hashtable' }) };
  // ep_cache_miss_rate: ep_bg_fetched / cmd_lookup to 7.6.7 (menelaus_stats 001be57c); get_misses / cmd_get from 7.6.8.
  out.ep_cache_miss_rate = from(line, '7.6.8')
    ? { series: one('kv_ops', { op: 'get', result: 'miss' }), den: one('kv_ops', { op: 'get' }), quotient: 'increase_ratio', factor: 100 }
    : { series: one('kv_ep_bg_fetched'), den: one('kv_cmd_lookup'), quotient: 'increase_ratio', factor: 100 };
  // couch_docs_data_size and couch_docs_fragmentation: from 7.2, a node's file under 128 KiB × its vBuckets reports
  // its file size as data, and the history file is not fragmentation. Series order: data, file, vBuckets, history.
  const rule = from(line, '7.2');
  const data: Series = ['kv_ep_db_data_size_bytes', {}];
  const file: Series = ['kv_ep_db_file_size_bytes', {}];
  const vbs: Series = ['kv_ep_vb_total', {}];
  const hist: Series = ['kv_ep_db_history_file_size_bytes', {}];
  out.couch_docs_data_size = rule ? { series: [data, file, vbs], derive: 'docs_data_size', minFile: 131072 } : { series: [data] };
  out.couch_docs_fragmentation = rule ? { series: [data, file, vbs, hist], derive: 'fragmentation', minFile: 131072 } : { series: [data, file], derive: 'fragmentation' };
  // vb_<state>_itm_memory: 7.0–7.2 only.
  if (!from(line, '7.6')) for (const st of ['active', 'replica', 'pending']) out[`vb_${st}_itm_memory`] = { series: one('kv_vb_itm_memory_bytes', { state: st }) };
  // HLC drift and ahead exceptions: one family with `state` on every 7.x line (the BSL-licensed stats.def.h, 2021 on:
  // STAT(ep_hlc_drift, FMT("ep_{state}_hlc_drift"), microseconds, , ); the per-state STAT(ep_active_hlc_drift, …) is
  // the 2020 pre-release 0c846fff only; the metrics reference lists kv_ep_hlc_drift_seconds as added in 7.0.0).
  for (const st of ['active', 'replica']) {
    const drift: Series = ['kv_ep_hlc_drift_seconds', { state: st }];
    const count: Series = ['kv_ep_hlc_drift_count', { state: st }];
    const ahead: Series = ['kv_ep_ahead_exceptions', { state: st }];
    out[`ep_${st}_hlc_drift`] = { series: [drift], rate: true, factor: 1e6 };
    out[`ep_${st}_hlc_drift_count`] = { series: [count], rate: true };
    out[`ep_${st}_ahead_exceptions`] = { series: [ahead], rate: true };
    // menelaus_stats AvgActiveTimestampDrift: DriftTotal / 1000000 / Count (seconds).
    out[`avg_${st}_timestamp_drift`] = { series: [drift], den: [count], quotient: 'increase_ratio', factor: 1 };
  }
  // Sync writes: kv_vb_sync_write_<x>_count{state} on every line; counters in the catalog (irate).
  for (const x of ['accepted', 'committed', 'aborted']) out[`vb_active_sync_write_${x}_count`] = { series: one(`kv_vb_sync_write_${x}_count`, { state: 'active' }), rate: true };
  // stat_names_mappings.erl pre_70_stat_to_prom_query("@xdcr-" ++ Bucket, <<"replication_changes_left">>) and
  // (…, <<"replication_docs_rep_queue">>): sum_by([name], {name=xdcr_<x>_total, sourceBucketName=Bucket}), every
  // pipeline; xdcr_docs_rep_queue_total is not in the 8.0 metadata.
  out.replication_changes_left = { series: one('xdcr_changes_left_total') };
  if (!from(line, '8.0')) out.replication_docs_rep_queue = { series: one('xdcr_docs_rep_queue_total') };
  return { ...dcpOracle(line), ...out };
}

const kvOracle = (line: ServerLine): Record<string, Oracle> => ({ ...NS_EXPLICIT, ...SYSTEM, ...STATS_DEF, ...COMPUTED, ...lineOracle(line) });
/** Every line's oracle has the stats of the latest line's, bar the 7.0–7.2-only ones. */
const KV_ORACLE = kvOracle('8.0');

// ---- `@xdcr-<bucket>` replications/<id>/<src>/<dst>/<stat> (pipelineType Main for an id without backfill_) ----
const MAIN = { pipelineType: 'Main' };
const XDCR_ORACLE: Record<string, Oracle> = {};
for (const n of ['time_committing', 'wtavg_docs_latency', 'wtavg_get_latency', 'wtavg_meta_latency', 'throughput_throttle_latency', 'resp_wait_time', 'throttle_latency']) {
  XDCR_ORACLE[n] = { series: one(`xdcr_${n}_seconds`, MAIN), factor: 1000 };
}
XDCR_ORACLE.dcp_dispatch_time = { series: one('xdcr_dcp_dispatch_time_seconds', MAIN), factor: 1e9 };
XDCR_ORACLE.bandwidth_usage = { series: one('xdcr_data_replicated_bytes', MAIN), rate: true };
XDCR_ORACLE.rate_doc_checks = { series: one('xdcr_docs_checked_total', MAIN), rate: true };
XDCR_ORACLE.rate_received_from_dcp = { series: one('xdcr_docs_received_from_dcp_total', MAIN), rate: true };
XDCR_ORACLE.rate_doc_opt_repd = { series: one('xdcr_docs_opt_repd_total', MAIN), rate: true };
XDCR_ORACLE.rate_replicated = { series: one('xdcr_docs_written_total', MAIN), rate: true };
for (const n of [
  'deletion_filtered', 'expiry_received_from_dcp', 'docs_opt_repd', 'deletion_failed_cr_source', 'set_filtered', 'datapool_failed_gets',
  'dcp_datach_length', 'docs_filtered', 'docs_checked', 'set_received_from_dcp', 'docs_unable_to_filter', 'set_failed_cr_source',
  'set_docs_written', 'docs_written', 'deletion_docs_written', 'expiry_docs_written', 'num_failedckpts', 'add_docs_written',
  'docs_rep_queue', 'docs_failed_cr_source', 'deletion_received_from_dcp', 'num_checkpoints', 'expiry_filtered', 'expiry_stripped',
  'changes_left', 'docs_processed', 'docs_received_from_dcp', 'expiry_failed_cr_source',
]) {
  XDCR_ORACLE[n] = { series: one(`xdcr_${n}_total`, MAIN) };
}
XDCR_ORACLE.size_rep_queue = { series: one('xdcr_size_rep_queue_bytes', MAIN) };
XDCR_ORACLE.data_replicated = { series: one('xdcr_data_replicated_bytes', MAIN) };

function seriesOf(o: Oracle['series']): Series[] {
  return Array.isArray(o) ? [...(o as ReadonlyArray<Series>)] : Object.entries(o as Record<string, Matchers>).map(([m, l]) => [m, l] as const);
}
// Order matters for the docs_data_size / fragmentation derives (data, file, vBuckets, history): kept as given.
const text = ([m, l, not]: Series): string => `${m}${JSON.stringify(Object.entries(l).sort())}${not ? `!${JSON.stringify(Object.entries(not).sort())}` : ''}`;
const norm = (xs: ReadonlyArray<Series>, ordered = false): string[] => (ordered ? xs.map(text) : xs.map(text).sort());
const rowSeries = (xs: NativeMapRow['series'] | undefined, ordered = false): string[] =>
  norm((xs ?? []).map((x): Series => (x.notMatchers ? [x.metric, x.matchers, x.notMatchers] : [x.metric, x.matchers])), ordered);

/** The catalog's scale and unit of the family a row feeds (what the envelope path applies to the legacy value). */
function catalogOf(r: NativeMapRow): { family: string; scale: number; unit: string; kind: string } | undefined {
  if (r.section === 'kv') {
    const f = STAT_FAMILIES.get(r.legacy);
    return f && { family: f.bucket.name, scale: f.spec.scale, unit: f.spec.unit, kind: f.spec.kind };
  }
  const x = XDCR_STATS.find((s) => s.stat === r.legacy);
  return x && { family: x.metric, scale: x.scale, unit: x.unit, kind: x.kind };
}

describe('serverLineOf: a node\'s version → its line', () => {
  it.each([
    ['7.0.0-5302-enterprise', '7.0'],
    ['7.0.5', '7.0'],
    ['7.1.4-3601-enterprise', '7.1'],
    ['7.2.0', '7.2'],
    ['7.2.6-8000-community', '7.2'],
    ['7.6.0-1839-enterprise', '7.6'],
    ['7.6.7', '7.6'],
    ['7.6.8-6615-enterprise', '7.6.8'],
    ['7.6.10', '7.6.8'],
    ['8.0.0-3777-enterprise', '8.0'],
    ['8.1.2', '8.0'],
  ] as const)('%s → %s', (v, line) => expect(serverLineOf(v)).toBe(line));
  it.each(['6.6.5-10080-enterprise', '', 'unknown'])('%s → none', (v) => expect(serverLineOf(v)).toBeUndefined());
});

describe.each(LINES)('native map %s: rows against ns_server (stat_names_mappings.erl, stats.def.h, computed stats)', (line) => {
  const table = nativeMapFor(line);
  const KV = kvOracle(line);
  it.each(table.all.map((r) => [`${r.section} ${r.legacy}`, r] as const))('%s', (_name, r) => {
    const o = (r.section === 'kv' ? KV : XDCR_ORACLE)[r.legacy];
    expect(o, 'a row must map a stat ns_server maps').toBeDefined();
    if (o === undefined) return;
    const ordered = o.derive === 'docs_data_size' || o.derive === 'fragmentation';
    expect(rowSeries(r.series, ordered)).toEqual(norm(seriesOf(o.series), ordered));
    expect(rowSeries(r.denominator)).toEqual(norm(o.den ?? []));
    // A gauge behind a stat cbwatch exports as its window mean (catalog kind 'mean') is read as the mean of its points.
    if (o.derive !== undefined) expect(r.derive).toBe(o.derive);
    else if (o.quotient !== undefined) expect(r.derive).toBe(o.quotient);
    else expect(r.derive).toBe(o.rate === true ? 'rate' : catalogOf(r)?.kind === 'mean' ? 'mean' : 'level');
    expect(r.legacyFactor).toBe(o.factor ?? 1);
    expect(r.minFileBytesPerVbucket).toBe(o.minFile);
    // menelaus_stats get_aggregate_method: max for couch_views_ops and cpu_utilization_rate, else sum.
    expect(r.nodeAggregate ?? 'sum').toBe(o.max ? 'max' : 'sum');
    if (r.section === 'kv') expect(r.perBucket).toBe(o.perNode !== true);
    // The family, and a scale that turns the native value into what the envelope path exports.
    const c = catalogOf(r);
    expect(c, `${r.legacy} is in cbwatch's catalog`).toBeDefined();
    if (c === undefined) return;
    expect(r.family).toBe(c.family);
    expect(r.scale).toBeCloseTo(r.legacyFactor * c.scale, 12);
    // A rate row feeds a rate family; a level row a level or cumulative family.
    if (r.derive === 'rate') expect(c.kind).toBe('rate');
    else expect(c.kind).not.toBe('rate');
  });

  it('maps every stat of cbwatch\'s catalog that ns_server maps on this line, or names why not', () => {
    const named = [...Object.keys(NO_NATIVE_EQUIVALENT.kv), ...Object.keys(LINE_ONLY)].join(' ');
    const mapped = new Set(table.kv.map((r) => r.legacy));
    // Everything the oracle maps on this line is a row, unless named with its reason (no node of the line serves it).
    expect(Object.keys(KV).filter((st) => STAT_FAMILIES.has(st) && !mapped.has(st) && !/^couch_spatial_/.test(st) && !named.includes(st))).toEqual([]);
    // A catalog stat that is no row is named (literally, or by its pattern).
    const missing = [...STAT_FAMILIES.keys()].filter((st) => !mapped.has(st));
    const unexplained = missing.filter((st) => {
      const pattern = st.replace(/^vb_(active|replica|pending)_/, 'vb_<state>_').replace(/^ep_dcp_[a-z0-9+]+_/, 'ep_dcp_<type>_');
      return !named.includes(st) && !named.includes(pattern) && !/^(ep_tap_|replication_|couch_spatial_)/.test(st);
    });
    expect(unexplained).toEqual([]);
    // XDCR: every stat cbwatch polls is mapped or named.
    const xdcrMapped = new Set(table.xdcr.map((r) => r.legacy));
    for (const x of XDCR_STATS) expect(xdcrMapped.has(x.stat) || x.stat in NO_NATIVE_EQUIVALENT.xdcr || (line === '8.0' && x.stat === 'docs_rep_queue'), x.stat).toBe(true);
    // …and a stat named as having no native equivalent really has none in ns_server's XDCR section.
    for (const st of Object.keys(NO_NATIVE_EQUIVALENT.xdcr)) expect(XDCR_ORACLE[st]).toBeUndefined();
  });

  it('keeps one row per legacy stat and per family', () => {
    const keys = table.all.map((r) => `${r.section}:${r.legacy}`);
    expect(new Set(keys).size).toBe(keys.length);
    const fams = table.all.map((r) => r.family);
    expect(new Set(fams).size).toBe(fams.length);
  });
});

describe('native map: what each line adds or drops (the 32 stats of issue 37 §4, the 7.0–7.2-only names)', () => {
  const legacy = (line: ServerLine): Set<string> => new Set(nativeMapFor(line).kv.map((r) => r.legacy));
  it('maps the 32 stats the range source used to drop, on every line', () => {
    const dropped = [
      'vb_active_sync_write_accepted_count', 'vb_active_sync_write_committed_count', 'vb_active_sync_write_aborted_count',
      'ep_active_ahead_exceptions', 'ep_replica_ahead_exceptions',
      'ep_active_hlc_drift', 'ep_active_hlc_drift_count', 'ep_replica_hlc_drift', 'ep_replica_hlc_drift_count',
      'avg_active_timestamp_drift', 'avg_replica_timestamp_drift', 'vb_avg_total_queue_age', 'couch_total_disk_size',
      'couch_docs_fragmentation', 'couch_views_fragmentation', 'couch_views_data_size', 'couch_views_disk_size', 'couch_views_ops',
      'ep_dcp_other_count', 'ep_dcp_other_items_remaining', 'ep_dcp_other_items_sent', 'ep_dcp_other_backoff', 'ep_dcp_other_total_bytes',
      'ep_dcp_views+indexes_count', 'ep_dcp_views+indexes_items_remaining', 'ep_dcp_views+indexes_items_sent', 'ep_dcp_views+indexes_backoff',
      'ep_dcp_views+indexes_total_bytes', 'allocstall', 'rest_requests', 'hibernated_requests', 'hibernated_waked',
    ];
    expect(dropped).toHaveLength(32);
    for (const line of LINES) expect(dropped.filter((st) => !legacy(line).has(st)), line).toEqual([]);
  });
  it('maps kv_dcp_producer_count and vb_<state>_itm_memory on 7.0–7.2 only', () => {
    const only = ['vb_active_itm_memory', 'vb_replica_itm_memory', 'vb_pending_itm_memory', 'ep_dcp_replica_producer_count', 'ep_dcp_other_producer_count'];
    for (const line of ['7.0', '7.1', '7.2'] as const) for (const st of only) expect(legacy(line).has(st), `${line} ${st}`).toBe(true);
    for (const line of ['7.6', '7.6.8', '8.0'] as const) for (const st of only) expect(legacy(line).has(st), `${line} ${st}`).toBe(false);
  });
  it('gives the same frozen table for a line every time', () => {
    expect(nativeMapFor('7.2')).toBe(nativeMapFor('7.2'));
    expect(Object.isFrozen(nativeMapFor('7.2').kv)).toBe(true);
  });
});

/** Labels every kv series carries besides those the metadata lists: the bucket, and the vBucket state / DCP connection type. */
function implicitLabels(metric: string): string[] {
  // An XDCR series read as a bucket stat names its bucket by sourceBucketName (the metadata lists it).
  const out = metric.startsWith('xdcr_') ? [] : ['bucket'];
  if (metric.startsWith('kv_vb_') || metric === 'kv_num_vbuckets') out.push('state');
  // stats.def.h (7.2-era stored version): STAT(ep_hlc_drift, FMT("ep_{state}_hlc_drift"), …): a `state` label.
  if (['kv_ep_hlc_drift_seconds', 'kv_ep_hlc_drift_count', 'kv_ep_ahead_exceptions'].includes(metric)) out.push('state');
  if (metric.startsWith('kv_dcp_')) out.push('connection_type');
  // kv_ops carries `result` beside the `op` the metadata lists (stats.def.h: LABEL(op, get), LABEL(result, hit)).
  if (metric === 'kv_ops') out.push('result');
  return out;
}

/**
 * Native names a line's table reads that the 8.0 metadata does not list, each with where it comes from (written by
 * hand): the older lines' names, and ns_server's own per-design-document view stats, which docs-server's metadata
 * leaves out although ns_server asks for them on every line (stat_names_mappings.erl couch_ clause, prom_name_to_pre_70_name).
 */
const NOT_IN_80_METADATA: Record<string, { lines: readonly ServerLine[]; type: string; source: string }> = {
  kv_vb_itm_memory_bytes: { lines: ['7.0', '7.1', '7.2'], type: 'gauge', source: 'stats.def.h STAT(vb_itm_memory, "vb_{state}_itm_memory", bytes, vb_itm_memory, )' },
  kv_dcp_producer_count: { lines: ['7.0', '7.1', '7.2'], type: 'gauge', source: 'stats.def.h STAT(connagg_producer_count, …, dcp_producer_count, )' },
  kv_ep_active_hlc_drift_seconds: { lines: ['7.0', '7.1'], type: 'gauge', source: 'stats.def.h STAT(ep_active_hlc_drift, , microseconds, , )' },
  kv_ep_active_hlc_drift_count: { lines: ['7.0', '7.1'], type: 'gauge', source: 'stats.def.h STAT(ep_active_hlc_drift_count, , count, , )' },
  kv_ep_replica_hlc_drift_seconds: { lines: ['7.0', '7.1'], type: 'gauge', source: 'stats.def.h STAT(ep_replica_hlc_drift, , microseconds, , )' },
  kv_ep_replica_hlc_drift_count: { lines: ['7.0', '7.1'], type: 'gauge', source: 'stats.def.h STAT(ep_replica_hlc_drift_count, , count, , )' },
  kv_ep_active_ahead_exceptions: { lines: ['7.0', '7.1'], type: 'counter', source: 'stats.def.h STAT(ep_active_ahead_exceptions, , count, , )' },
  kv_ep_replica_ahead_exceptions: { lines: ['7.0', '7.1'], type: 'counter', source: 'stats.def.h STAT(ep_replica_ahead_exceptions, , count, , )' },
  couch_views_data_size: { lines: LINES, type: 'gauge', source: 'ns_server couchdb stats (signature label)' },
  couch_views_disk_size: { lines: LINES, type: 'gauge', source: 'ns_server couchdb stats (signature label)' },
  couch_views_ops: { lines: LINES, type: 'counter', source: 'ns_server couchdb stats (signature label), asked as irate' },
  xdcr_docs_rep_queue_total: { lines: ['7.0', '7.1', '7.2', '7.6', '7.6.8'], type: 'gauge', source: 'stat_names_mappings.erl @xdcr docs_rep_queue (absentIn80)' },
};

describe.each(LINES)('native map %s: every native name against the 8.0 metadata', (line) => {
  const all = nativeMapFor(line).all.flatMap((r) => [...r.series, ...(r.denominator ?? [])].map((x) => [r, x] as const));
  it.each(all.map(([r, x]) => [`${r.legacy}: ${x.metric}`, r, x] as const))('%s', (_n, r, x) => {
    const base = x.type === 'histogram' ? x.metric.replace(/_(sum|count)$/, '') : x.metric;
    const meta = META.get(base);
    const older = NOT_IN_80_METADATA[base];
    if (older !== undefined || r.absentIn80) {
      // The exception may not lie: the metric really is absent from 8.0, and this line is one that serves it.
      expect(meta).toBeUndefined();
      expect(older?.lines, `${base} listed for ${line}`).toContain(line);
      if (older) expect(x.type).toBe(older.type);
      return;
    }
    expect(meta, `${base} in the 8.0 metadata`).toBeDefined();
    if (meta === undefined) return;
    expect(meta.type).toBe(x.type);
    if (x.type === 'histogram') expect(x.metric).toMatch(/_(sum|count)$/);
    // Labels: every matcher names a label the metric has.
    const allowed = new Set([...labelsOf(meta), ...(r.section === 'kv' ? implicitLabels(base) : [])]);
    for (const l of [...Object.keys(x.matchers), ...Object.keys(x.notMatchers ?? {})]) expect(allowed.has(l), `${base} has label ${l}`).toBe(true);
    if (r.section === 'xdcr') expect(labelsOf(meta)).toEqual(expect.arrayContaining(['sourceBucketName', 'targetClusterUUID', 'targetBucketName', 'pipelineType']));
    // Units: the native unit and the row's derivation give the family's unit (a ratio of sizes aside).
    const c = catalogOf(r);
    if (c === undefined || r.denominator !== undefined || r.derive === 'fragmentation' || r.derive === 'docs_data_size') return;
    const unit = x.type === 'histogram' && x.metric.endsWith('_count') ? undefined : meta.unit;
    const expected: Record<string, string[]> =
      r.derive === 'rate'
        ? { seconds: ['seconds_per_second'], bytes: ['bytes_per_second'], none: ['per_second', 'bytes_per_second'] }
        : { seconds: ['seconds'], bytes: ['bytes'], ratio: ['ratio'], none: ['count', 'bytes', 'ratio', 'seconds'] };
    expect(expected[unit ?? 'none'], `${base} unit ${String(unit)} → ${c.unit}`).toContain(c.unit);
  });

  it('names with a unit suffix carry that unit in the metadata', () => {
    for (const [, x] of all) {
      const meta = META.get(x.type === 'histogram' ? x.metric.replace(/_(sum|count)$/, '') : x.metric);
      if (meta === undefined) continue;
      if (/_seconds(_sum)?$/.test(x.metric)) expect(meta.unit, x.metric).toBe('seconds');
      if (/_ratio$/.test(x.metric)) expect(meta.unit, x.metric).toBe('ratio');
    }
  });
});
