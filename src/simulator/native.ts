/**
 * The native statistics of a simulated 7.0+ node: what its own Prometheus would have scraped from its
 * services (kv, ns_server, xdcr), built from the SAME model as the legacy envelopes (modules/buckets.ts and
 * modules/xdcr.ts), so the same underlying counter gives the same value through either path.
 *
 * Names, types and labels: the 8.0 metadata files (test/fixtures/couchbase/native/), the XDCR cross
 * reference and ns_server's stat_names_mappings.erl (how 7.x answers a legacy stat from native metrics).
 *
 * Counters. The envelope serves a legacy counter as its per-second rate r(t) at whole seconds. Its native
 * counter is the running sum of those rates: C(s) = base + r(o+1 s) + … + r(s) over the whole seconds since
 * the node's Prometheus began (o = 10 minutes before the simulator started), so for whole seconds a < b,
 * C(b) - C(a) equals the sum of the envelope's 1-second samples stamped a+1 … b, and the rate 7.x derives
 * over a window equals the mean of the envelope samples in it. Gauges are the envelope's values, with the
 * unit of the native name (seconds for ms, a 0-1 ratio for a percentage). Per node: additive stats are
 * split with the shares of the per-node envelope (bucketNodeShares), ratios and averages are repeated.
 *
 * Sampling. Each node's Prometheus scrapes every 10 s (Couchbase's default), at whole multiples of 10 s of
 * the simulated clock, from o up to now; nothing exists before o. XDCR stats are goxdcr's own cumulative
 * counts and gauges, per node as its envelope's nodeStats give them.
 *
 * Node-level stats (memcached's connections, the host's sys_* gauges) come from the first bucket's model,
 * which draws them the same in every bucket; each node's host stats are its own machine's (buckets.ts
 * nodeStatGen), served by every node that runs. Legacy stats without a native series here stay envelope-only;
 * NATIVE_SKIPPED says why for each.
 *
 * Server lines (SimProfile.line): names that changed between lines are served by the line that has them
 * (kv_engine include/statistics/stats.def.h as kv_stats_mappings is generated from it): ep_kv_size is
 * kv_memory_used_bytes{for="hashtable"} on 7.0-7.2 and kv_ep_key_value_size_bytes from 7.6;
 * kv_dcp_producer_count and kv_vb_itm_memory_bytes{state} exist on 7.0-7.2 only. The DCP aggregates
 * (connagg_* in stats.def.h) are kv_dcp_<stat>{connection_type} per connection type.
 *
 * Services (./services.ts): the query, index, Search, eventing and analytics statistics of the nodes running
 * them, each node's processes (sysproc_*{proc}) and, 7.6+, its disks (sys_disk_usage_ratio{disk}), with the native
 * names and labels of each service (`instance` n1ql, index, fts, eventing, cbas; ns_server for sysproc and disks),
 * from the same model as the legacy service sections (modules/service-stats.ts) and by the same counter rule.
 *
 * Node faults (knob nodeFaults, modules/cluster.ts): a failed-over node serves no bucket or XDCR series (it is
 * no longer one of the bucket's servers), only its host's; a node whose clock is ahead stamps the value of
 * real time t at t + clockAheadMs.
 */
import { SIM_BUCKET_STATS } from './bucket-stat-names.js';
import { fixture } from './fixtures.js';
import { bucketNodeShares, bucketStatGen, nodeRateScale, nodeStatGen } from './modules/buckets.js';
import { nodeFault } from './modules/cluster.js';
import { dcpTypesOf } from './modules/dcp.js';
import type { DcpLegacyType } from './modules/dcp.js';
import { xdcrSimReplications } from './modules/xdcr.js';
import { nodeServiceStats } from './services.js';
import type { SvcStat } from './services.js';
import type { SimBucket, SimContext, SimNode } from './types.js';

/** Seconds between two scrapes of a node's Prometheus. */
export const SCRAPE_SECONDS = 10;
/** Seconds of history a node's Prometheus holds before the simulator started. */
export const HISTORY_SECONDS = 600;

export type NativeType = 'counter' | 'gauge' | 'histogram';

/** One native time series of one node. */
export interface NativeSeries {
  readonly name: string;
  /** The family of `# HELP`/`# TYPE` (a histogram's name for its _count, _sum, _bucket series). */
  readonly family: string;
  /** Labels as the node's /metrics exposes them (no `instance`/`job`: the scraper adds those). */
  readonly labels: Readonly<Record<string, string>>;
  /** The service that exposes it, the `instance` label in the range API's answers. */
  readonly instance: 'kv' | 'ns_server' | 'xdcr' | 'n1ql' | 'index' | 'fts' | 'eventing' | 'cbas';
  /** The type of the 8.0 metadata (`# TYPE`). */
  readonly type: NativeType;
  readonly help: string;
  /** The value at a whole simulated second, or undefined when the node had none then. */
  at(sec: number): number | undefined;
}

interface KvDef {
  readonly name: string;
  /** A histogram's family (`# TYPE`, metadata) when `name` is one of its _count/_sum/_bucket series. */
  readonly family?: string;
  readonly labels?: Readonly<Record<string, string>>;
  /** The legacy stat of the model it comes from. */
  readonly from: string;
  /** `rate`: the legacy stat is the per-second rate of this cumulative count; `gauge`: the value itself. */
  readonly mode: 'rate' | 'gauge';
  /** Native = legacy × scale (gauges only). */
  readonly scale?: number;
  readonly instance?: 'kv' | 'ns_server';
  /** Served only by these server lines (default: every 7.0+ line). */
  readonly lines?: readonly string[];
  /** A DCP connection type's statistic: served only while the bucket has connections of it (modules/dcp.ts). */
  readonly dcpType?: DcpLegacyType;
}

const BEFORE_76 = ['7.0', '7.1', '7.2'];
const BEFORE_80 = ['7.0', '7.1', '7.2', '7.6'];
const FROM_76 = ['7.6', '8.0'];

/**
 * The DCP connection aggregates (stats.def.h connagg_*: `{connection_type}:count` → kv_dcp_connection_count,
 * `:items_remaining`, `:producer_count` (7.0-7.2), `:items_sent`, `:total_bytes` → kv_dcp_total_data_size_bytes,
 * `:backoff`), per connection type; the legacy ep_dcp_<type>_<stat> they answer (stat_names_mappings.erl
 * map_dcpagg_stat: items_sent, total_bytes and backoff are counters, asked as rates). Views are the
 * mapreduce_view connections (spatial_view serves none here); `other` a type outside ns_server's list.
 */
function dcpDefs(): KvDef[] {
  const types: ReadonlyArray<readonly [DcpLegacyType, string]> = [
    ['replica', 'replication'],
    ['xdcr', 'xdcr'],
    ['2i', 'secidx'],
    ['fts', 'fts'],
    ['eventing', 'eventing'],
    ['cbas', 'cbas'],
    ['views', 'mapreduce_view'],
    ['other', 'other'],
  ];
  const stats: ReadonlyArray<readonly [string, string, 'rate' | 'gauge', readonly string[] | undefined]> = [
    ['count', 'kv_dcp_connection_count', 'gauge', undefined],
    ['items_remaining', 'kv_dcp_items_remaining', 'gauge', undefined],
    ['producer_count', 'kv_dcp_producer_count', 'gauge', BEFORE_76],
    ['items_sent', 'kv_dcp_items_sent', 'rate', undefined],
    ['total_bytes', 'kv_dcp_total_data_size_bytes', 'rate', undefined],
    ['backoff', 'kv_dcp_backoff', 'rate', undefined],
  ];
  return types.flatMap(([legacy, type]) =>
    stats.map(([stat, name, mode, lines]): KvDef => ({ name, labels: { connection_type: type }, from: `ep_dcp_${legacy}_${stat}`, mode, dcpType: legacy, ...(lines ? { lines } : {}) })),
  );
}

/**
 * The per-state vBucket stats (stats.def.h: `vb_{state}_x` → kv_vb_x{state}, vb_{state}_num → kv_num_vbuckets{state};
 * kv_stats_mappings answers the legacy names from them) the list below does not already serve for the active state.
 */
function vbStateDefs(): KvDef[] {
  const out: KvDef[] = [];
  for (const st of ['active', 'replica', 'pending'] as const) {
    out.push(
      { name: 'kv_num_vbuckets', labels: { state: st }, from: `vb_${st}_num`, mode: 'gauge' },
      { name: 'kv_vb_meta_data_memory_bytes', labels: { state: st }, from: `vb_${st}_meta_data_memory`, mode: 'gauge' },
      { name: 'kv_vb_queue_drain', labels: { state: st }, from: `vb_${st}_queue_drain`, mode: 'rate' },
    );
    if (st === 'active') continue;
    out.push(
      { name: 'kv_vb_queue_fill', labels: { state: st }, from: `vb_${st}_queue_fill`, mode: 'rate' },
      { name: 'kv_vb_eject', labels: { state: st }, from: `vb_${st}_eject`, mode: 'rate' },
      { name: 'kv_vb_ops_create', labels: { state: st }, from: `vb_${st}_ops_create`, mode: 'rate' },
      { name: 'kv_vb_ops_update', labels: { state: st }, from: `vb_${st}_ops_update`, mode: 'rate' },
      { name: 'kv_vb_queue_size', labels: { state: st }, from: `vb_${st}_queue_size`, mode: 'gauge' },
      { name: 'kv_vb_queue_age_seconds', labels: { state: st }, from: `vb_${st}_queue_age`, mode: 'gauge', scale: 1 / 1000 },
    );
    if (st === 'pending') {
      out.push(
        { name: 'kv_vb_curr_items', labels: { state: st }, from: `vb_${st}_curr_items`, mode: 'gauge' },
        { name: 'kv_vb_num_non_resident', labels: { state: st }, from: `vb_${st}_num_non_resident`, mode: 'gauge' },
      );
    }
  }
  return out;
}

/**
 * Legacy bucket stat → native metric, as stat_names_mappings.erl / kv_stats_mappings answer the legacy name
 * on 7.x (`rate` entries: the legacy value is rate() of the native one). Type and help come from the 8.0
 * metadata (it calls several cumulative counts `gauge`; ns_server still applies rate() to them).
 */
export const NATIVE_KV: readonly KvDef[] = [
  { name: 'kv_ops', labels: { op: 'get', result: 'hit' }, from: 'get_hits', mode: 'rate' },
  { name: 'kv_ops', labels: { op: 'get', result: 'miss' }, from: 'get_misses', mode: 'rate' },
  { name: 'kv_ops', labels: { op: 'set' }, from: 'cmd_set', mode: 'rate' },
  { name: 'kv_ops', labels: { op: 'incr', result: 'hit' }, from: 'incr_hits', mode: 'rate' },
  { name: 'kv_ops', labels: { op: 'incr', result: 'miss' }, from: 'incr_misses', mode: 'rate' },
  { name: 'kv_ops', labels: { op: 'decr', result: 'hit' }, from: 'decr_hits', mode: 'rate' },
  { name: 'kv_ops', labels: { op: 'decr', result: 'miss' }, from: 'decr_misses', mode: 'rate' },
  { name: 'kv_ops', labels: { op: 'delete', result: 'hit' }, from: 'delete_hits', mode: 'rate' },
  { name: 'kv_ops', labels: { op: 'delete', result: 'miss' }, from: 'delete_misses', mode: 'rate' },
  { name: 'kv_ops', labels: { op: 'cas', result: 'hit' }, from: 'cas_hits', mode: 'rate' },
  { name: 'kv_ops', labels: { op: 'cas', result: 'miss' }, from: 'cas_misses', mode: 'rate' },
  { name: 'kv_ops', labels: { op: 'cas', result: 'badval' }, from: 'cas_badval', mode: 'rate' },
  { name: 'kv_ops', labels: { op: 'set_meta' }, from: 'ep_num_ops_set_meta', mode: 'rate' },
  { name: 'kv_ops', labels: { op: 'get_meta' }, from: 'ep_num_ops_get_meta', mode: 'rate' },
  { name: 'kv_ops', labels: { op: 'del_meta' }, from: 'ep_num_ops_del_meta', mode: 'rate' },
  { name: 'kv_ops', labels: { op: 'set_ret_meta' }, from: 'ep_num_ops_set_ret_meta', mode: 'rate' },
  { name: 'kv_ops', labels: { op: 'del_ret_meta' }, from: 'ep_num_ops_del_ret_meta', mode: 'rate' },
  { name: 'kv_vb_sync_write_accepted_count', labels: { state: 'active' }, from: 'vb_active_sync_write_accepted_count', mode: 'rate' },
  { name: 'kv_vb_sync_write_committed_count', labels: { state: 'active' }, from: 'vb_active_sync_write_committed_count', mode: 'rate' },
  { name: 'kv_vb_sync_write_aborted_count', labels: { state: 'active' }, from: 'vb_active_sync_write_aborted_count', mode: 'rate' },
  // Histograms (ns_server: bg_wait_count = rate(_count), bg_wait_total = rate(_sum) in µs); one +Inf bucket.
  { name: 'kv_bg_wait_seconds_count', family: 'kv_bg_wait_seconds', from: 'bg_wait_count', mode: 'rate' },
  { name: 'kv_bg_wait_seconds_sum', family: 'kv_bg_wait_seconds', from: 'bg_wait_total', mode: 'rate', scale: 1e-6 },
  { name: 'kv_bg_wait_seconds_bucket', family: 'kv_bg_wait_seconds', labels: { le: '+Inf' }, from: 'bg_wait_count', mode: 'rate' },
  { name: 'kv_disk_seconds_count', family: 'kv_disk_seconds', labels: { op: 'commit' }, from: 'disk_commit_count', mode: 'rate' },
  { name: 'kv_disk_seconds_sum', family: 'kv_disk_seconds', labels: { op: 'commit' }, from: 'disk_commit_total', mode: 'rate', scale: 1e-6 },
  { name: 'kv_disk_seconds_bucket', family: 'kv_disk_seconds', labels: { op: 'commit', le: '+Inf' }, from: 'disk_commit_count', mode: 'rate' },
  { name: 'kv_disk_seconds_count', family: 'kv_disk_seconds', labels: { op: 'update' }, from: 'disk_update_count', mode: 'rate' },
  { name: 'kv_disk_seconds_sum', family: 'kv_disk_seconds', labels: { op: 'update' }, from: 'disk_update_total', mode: 'rate', scale: 1e-6 },
  { name: 'kv_disk_seconds_bucket', family: 'kv_disk_seconds', labels: { op: 'update', le: '+Inf' }, from: 'disk_update_count', mode: 'rate' },
  { name: 'kv_cmd_lookup', from: 'cmd_lookup', mode: 'rate' },
  { name: 'kv_ep_bg_fetched', from: 'ep_bg_fetched', mode: 'rate' },
  { name: 'kv_read_bytes', from: 'bytes_read', mode: 'rate' },
  { name: 'kv_written_bytes', from: 'bytes_written', mode: 'rate' },
  { name: 'kv_ep_tmp_oom_errors', from: 'ep_tmp_oom_errors', mode: 'rate' },
  { name: 'kv_vb_ops_create', labels: { state: 'active' }, from: 'vb_active_ops_create', mode: 'rate' },
  { name: 'kv_vb_ops_update', labels: { state: 'active' }, from: 'vb_active_ops_update', mode: 'rate' },
  { name: 'kv_ep_diskqueue_fill', from: 'ep_diskqueue_fill', mode: 'rate' },
  { name: 'kv_ep_diskqueue_drain', from: 'ep_diskqueue_drain', mode: 'rate' },
  { name: 'kv_ep_num_value_ejects', from: 'ep_num_value_ejects', mode: 'rate' },
  { name: 'kv_vb_queue_fill', labels: { state: 'active' }, from: 'vb_active_queue_fill', mode: 'rate' },
  { name: 'kv_vb_eject', labels: { state: 'active' }, from: 'vb_active_eject', mode: 'rate' },
  { name: 'kv_mem_used_bytes', from: 'mem_used', mode: 'gauge' },
  { name: 'kv_ep_key_value_size_bytes', from: 'ep_kv_size', mode: 'gauge', lines: FROM_76 },
  // stats.def.h before 7.6: STAT(ep_kv_size, , bytes, memory_used, LABEL(for, hashtable)).
  { name: 'kv_memory_used_bytes', labels: { for: 'hashtable' }, from: 'ep_kv_size', mode: 'gauge', lines: BEFORE_76 },
  // stats.def.h before 7.6: STAT(vb_itm_memory, FMT("vb_{state}_itm_memory"), bytes, vb_itm_memory, ).
  ...['active', 'replica', 'pending'].map((st): KvDef => ({ name: 'kv_vb_itm_memory_bytes', labels: { state: st }, from: `vb_${st}_itm_memory`, mode: 'gauge', lines: BEFORE_76 })),
  ...dcpDefs(),
  ...vbStateDefs(),
  // stats.def.h: ep_<state>_hlc_drift (µs) → kv_ep_hlc_drift_seconds{state}, ep_<state>_hlc_drift_count →
  // kv_ep_hlc_drift_count{state}, ep_<state>_ahead_exceptions → kv_ep_ahead_exceptions{state}: running counts
  // (the 8.0 metadata calls the first two gauges), asked as rates.
  ...['active', 'replica'].flatMap((st): KvDef[] => [
    { name: 'kv_ep_hlc_drift_seconds', labels: { state: st }, from: `ep_${st}_hlc_drift`, mode: 'rate', scale: 1e-6 },
    { name: 'kv_ep_hlc_drift_count', labels: { state: st }, from: `ep_${st}_hlc_drift_count`, mode: 'rate' },
    { name: 'kv_ep_ahead_exceptions', labels: { state: st }, from: `ep_${st}_ahead_exceptions`, mode: 'rate' },
  ]),
  // couchdb's view stats (stat_names_mappings.erl: couch_views_ops as rate, the other couch_* as they are),
  // served by ns_server on the 7.x lines (views are gone from 8.0).
  { name: 'couch_views_ops', from: 'couch_views_ops', mode: 'rate', instance: 'ns_server', lines: BEFORE_80 },
  { name: 'couch_views_data_size', from: 'couch_views_data_size', mode: 'gauge', instance: 'ns_server', lines: BEFORE_80 },
  { name: 'couch_views_disk_size', from: 'couch_views_disk_size', mode: 'gauge', instance: 'ns_server', lines: BEFORE_80 },
  { name: 'kv_ep_meta_data_memory_bytes', from: 'ep_meta_data_memory', mode: 'gauge' },
  { name: 'kv_total_memory_overhead_bytes', from: 'ep_overhead', mode: 'gauge' },
  { name: 'kv_ep_max_size', from: 'ep_max_size', mode: 'gauge' },
  { name: 'kv_ep_mem_high_wat', from: 'ep_mem_high_wat', mode: 'gauge' },
  { name: 'kv_ep_mem_low_wat', from: 'ep_mem_low_wat', mode: 'gauge' },
  { name: 'kv_curr_items', from: 'curr_items', mode: 'gauge' },
  { name: 'kv_curr_items_tot', from: 'curr_items_tot', mode: 'gauge' },
  { name: 'kv_vb_curr_items', labels: { state: 'replica' }, from: 'vb_replica_curr_items', mode: 'gauge' },
  { name: 'kv_vb_num_non_resident', labels: { state: 'active' }, from: 'vb_active_num_non_resident', mode: 'gauge' },
  { name: 'kv_vb_num_non_resident', labels: { state: 'replica' }, from: 'vb_replica_num_non_resident', mode: 'gauge' },
  { name: 'kv_ep_num_non_resident', from: 'ep_num_non_resident', mode: 'gauge' },
  { name: 'kv_ep_vb_total', from: 'ep_vb_total', mode: 'gauge' },
  { name: 'kv_ep_oom_errors', from: 'ep_oom_errors', mode: 'gauge' },
  { name: 'kv_ep_queue_size', from: 'ep_queue_size', mode: 'gauge' },
  { name: 'kv_ep_flusher_todo', from: 'ep_flusher_todo', mode: 'gauge' },
  { name: 'kv_ep_diskqueue_items', from: 'ep_diskqueue_items', mode: 'gauge' },
  { name: 'kv_vb_queue_size', labels: { state: 'active' }, from: 'vb_active_queue_size', mode: 'gauge' },
  { name: 'kv_vb_queue_age_seconds', labels: { state: 'active' }, from: 'vb_active_queue_age', mode: 'gauge', scale: 1 / 1000 },
  { name: 'kv_ep_db_data_size_bytes', from: 'couch_docs_data_size', mode: 'gauge' },
  { name: 'kv_ep_db_file_size_bytes', from: 'couch_docs_disk_size', mode: 'gauge' },
  { name: 'kv_vb_perc_mem_resident_ratio', labels: { state: 'active' }, from: 'vb_active_resident_items_ratio', mode: 'gauge', scale: 1 / 100 },
  { name: 'kv_vb_perc_mem_resident_ratio', labels: { state: 'replica' }, from: 'vb_replica_resident_items_ratio', mode: 'gauge', scale: 1 / 100 },
  { name: 'kv_ep_item_commit_failed', from: 'ep_item_commit_failed', mode: 'gauge' },
  { name: 'kv_ep_data_read_failed', from: 'ep_data_read_failed', mode: 'gauge' },
  { name: 'kv_ep_data_write_failed', from: 'ep_data_write_failed', mode: 'gauge' },
  { name: 'kv_ep_clock_cas_drift_threshold_exceeded', from: 'ep_clock_cas_drift_threshold_exceeded', mode: 'gauge' },
  { name: 'couch_docs_actual_disk_size', from: 'couch_docs_actual_disk_size', mode: 'gauge', instance: 'ns_server' },
  { name: 'couch_views_actual_disk_size', from: 'couch_views_actual_disk_size', mode: 'gauge', instance: 'ns_server' },
];

/** The envelope's system stats (../bucket-stat-names.ts) with no sys_* name in 8.0 (NATIVE_SKIPPED says so). */
const NOT_NATIVE_SYSTEM: ReadonlySet<string> = new Set(['cpu_idle_ms', 'cpu_local_ms', 'hibernated_requests', 'hibernated_waked', 'rest_requests']);

/**
 * Node-level stats the envelope repeats in every bucket (the model draws them the same in every bucket):
 * memcached's connection count (split between the nodes like a bucket count) and the host's sys_* gauges
 * (each node its own, the same value: `category="system"`, as the docs' sys_cpu_sys_rate answer shows).
 */
export const NATIVE_NODE: readonly KvDef[] = [
  { name: 'kv_curr_connections', from: 'curr_connections', mode: 'gauge' },
  ...SIM_BUCKET_STATS.system
    .filter((n) => !NOT_NATIVE_SYSTEM.has(n))
    .map((n): KvDef => ({ name: `sys_${n}`, labels: { category: 'system' }, from: n, mode: 'gauge', instance: 'ns_server' })),
  // stat_names_mappings.erl `@system` rest_requests: rate(cm_rest_request_leaves_total), each node's own.
  { name: 'cm_rest_request_leaves_total', from: 'rest_requests', mode: 'rate', instance: 'ns_server' },
  // `@system` hibernated_waked: rate(cm_request_unhibernates_total); hibernated_requests: cm_request_hibernates_total
  // − cm_request_unhibernates_total (requests hibernated now), so the hibernates count is built on the unhibernates.
  { name: 'cm_request_unhibernates_total', from: 'hibernated_waked', mode: 'rate', instance: 'ns_server' },
];

/** cm_request_hibernates_total of a node: its unhibernates count plus the requests hibernated now. */
function hibernatesSeries(ctx: SimContext, bucket: SimBucket, node: SimNode, unhibernates: NativeSeries): NativeSeries {
  const now = nodeStatGen(ctx, bucket, 'hibernated_requests', node, false);
  const at = (sec: number): number | undefined => {
    const u = unhibernates.at(sec);
    return u === undefined ? undefined : u + now(sec * 1000);
  };
  return { name: 'cm_request_hibernates_total', family: 'cm_request_hibernates_total', labels: {}, instance: 'ns_server', ...meta('cm_request_hibernates_total'), at };
}

interface XdcrDef {
  readonly name: string;
  readonly from: string;
  readonly scale?: number;
  /** 8.0's metadata no longer lists it: served by 7.x profiles only. */
  readonly before8?: boolean;
}

/** Legacy per-replication XDCR stat → native goxdcr metric (xdcr_cross_reference.csv; latencies ms → s). */
export const NATIVE_XDCR: readonly XdcrDef[] = [
  { name: 'xdcr_changes_left_total', from: 'changes_left' },
  { name: 'xdcr_docs_written_total', from: 'docs_written' },
  { name: 'xdcr_docs_processed_total', from: 'docs_processed' },
  { name: 'xdcr_docs_checked_total', from: 'docs_checked' },
  { name: 'xdcr_docs_received_from_dcp_total', from: 'docs_received_from_dcp' },
  { name: 'xdcr_docs_opt_repd_total', from: 'docs_opt_repd' },
  { name: 'xdcr_docs_failed_cr_source_total', from: 'docs_failed_cr_source' },
  { name: 'xdcr_docs_filtered_total', from: 'docs_filtered' },
  { name: 'xdcr_num_checkpoints_total', from: 'num_checkpoints' },
  { name: 'xdcr_num_failedckpts_total', from: 'num_failedckpts' },
  { name: 'xdcr_data_replicated_bytes', from: 'data_replicated' },
  { name: 'xdcr_docs_rep_queue_total', from: 'docs_rep_queue', before8: true },
  { name: 'xdcr_size_rep_queue_bytes', from: 'size_rep_queue' },
  { name: 'xdcr_wtavg_docs_latency_seconds', from: 'wtavg_docs_latency', scale: 1 / 1000 },
  { name: 'xdcr_wtavg_meta_latency_seconds', from: 'wtavg_meta_latency', scale: 1 / 1000 },
  { name: 'xdcr_time_committing_seconds', from: 'time_committing', scale: 1 / 1000 },
];

/** Legacy stats the simulator serves whose native side it does not model, and why. */
export const NATIVE_SKIPPED: Readonly<Record<string, string>> = {
  'hit_ratio, ep_cache_miss_rate, ep_resident_items_rate, vb_avg_*_queue_age, avg_bg_wait_time, avg_disk_update_time, avg_disk_commit_time, couch_*_fragmentation, couch_total_disk_size':
    'ns_server derives them from native metrics served here; the model keeps them consistent with their parts',
  'cpu_idle_ms, cpu_local_ms': 'no sys_* name in 8.0 (and a 7.0+ envelope leaves them out: ./bucket-stat-names.ts)',
  evictions: 'kv_memcache_evictions: memcached buckets only; the simulator serves none',
  'ep_dcp_<type>_total_backlog_size, ep_dcp_views+indexes_*': 'no kv_dcp backlog metric; views+indexes is computed by the envelope',
  'ep_max_data_size, odp_report_failed, ep_tap_*, replication_* (but replication_changes_left and _docs_rep_queue)': 'no native metric in the 8.0 metadata (a 7.0+ envelope leaves them out)',
  'vb_pending_resident_items_ratio, vb_*_itm_memory from 7.6': 'computed by ns_server from kv_vb_num_non_resident and kv_vb_curr_items; kv_vb_itm_memory_bytes is 7.0-7.2 only',
  'couch_spatial_*; couch_views_ops, couch_views_data_size, couch_views_disk_size on 8.0': 'not in the 8.0 metadata (views are gone from 8.0)',
  'XDCR rate_replicated, rate_received_from_dcp, bandwidth_usage': '7.x derives them with rate() from xdcr_docs_written_total, xdcr_docs_received_from_dcp_total, xdcr_data_replicated_bytes: the model\'s rates are those counters\' per-second increments',
  'XDCR meta_latency_wt': 'no native name in the cross reference',
};

interface MetaEntry {
  type?: string;
  help?: string;
}

let metaCache: Map<string, MetaEntry> | undefined;

/** Type and help of a native name, from the 8.0 metadata files (kv, goxdcr, cluster manager). */
function meta(name: string): { type: NativeType; help: string } {
  if (!metaCache) {
    metaCache = new Map();
    for (const f of ['kv', 'goxdcr', 'cm', 'n1ql', 'index', 'fts', 'eventing']) {
      for (const [k, v] of Object.entries(fixture<Record<string, MetaEntry>>(`native/8.0-${f}_metrics_metadata.json`))) metaCache.set(k, v);
    }
  }
  const m = metaCache.get(name);
  const type: NativeType = m?.type === 'counter' || m?.type === 'histogram' ? m.type : 'gauge';
  return { type, help: m?.help ?? `${name} (a 7.x name the 8.0 metadata no longer lists)` };
}

/** Type and help of a service's native name: the 8.0 metadata's, or (analytics: no metadata file here) its kind's. */
function serviceMeta(name: string, kind: SvcStat['kind']): { type: NativeType; help: string } {
  meta(name);
  if (metaCache?.has(name)) return meta(name);
  return { type: kind === 'gauge' ? 'gauge' : 'counter', help: `${name} (analytics service; docs-server cbas metrics metadata)` };
}

/**
 * The native series of a node's service statistics (./services.ts): a counter is the running sum of the legacy
 * section's per-second rates, a gauge or a running total its value; served by the server lines that have them.
 */
function serviceSeries(ctx: SimContext, node: SimNode, stats: readonly SvcStat[]): NativeSeries[] {
  const line = ctx.options.profile.line;
  const first = originSec(ctx);
  const out: NativeSeries[] = [];
  for (const st of stats) {
    const n = st.native;
    if (!n || (n.lines !== undefined && !n.lines.includes(line))) continue;
    const gen = st.gen;
    const at =
      st.kind === 'counter'
        ? (sec: number): number | undefined => (sec < first ? undefined : integrator(ctx, gen).total(sec))
        : (sec: number): number | undefined => (sec < first ? undefined : gen(sec * 1000));
    out.push({ name: n.name, family: n.name, labels: n.labels, instance: n.instance, ...serviceMeta(n.name, st.kind), at });
  }
  return out;
}

function originSec(ctx: SimContext): number {
  return Math.floor(ctx.startedAt / 1000 / SCRAPE_SECONDS) * SCRAPE_SECONDS - HISTORY_SECONDS;
}

type Gen = (t: number) => number;

/**
 * Running sum of a per-second rate over whole seconds since `origin`. It keeps the sum at every scrape of the
 * last two hours at most (answers about recent data cost nothing) and at every 10 minutes since `origin`
 * (older ones sum at most 10 minutes of rates), so a simulator left running for days stays small.
 */
class Integrator {
  private static readonly COARSE = 600;
  private static readonly FINE_MAX = 720;
  private readonly coarse: number[];
  private fine: number[];
  private fineStart: number;
  constructor(
    private readonly gen: Gen,
    private readonly origin: number,
  ) {
    // A node that has run for a day at the rate of its first second: counters are large, as real ones are.
    const base = Math.max(0, gen(origin * 1000)) * 86_400;
    this.coarse = [base];
    this.fine = [base];
    this.fineStart = origin;
  }

  total(sec: number): number {
    if (sec < this.fineStart) {
      const c = Math.floor((sec - this.origin) / Integrator.COARSE);
      return this.sum(this.origin + c * Integrator.COARSE, sec, this.coarse[c] as number);
    }
    while (this.fineStart + this.fine.length * SCRAPE_SECONDS <= sec) {
      const from = this.fineStart + (this.fine.length - 1) * SCRAPE_SECONDS;
      const v = this.sum(from, from + SCRAPE_SECONDS, this.fine[this.fine.length - 1] as number);
      this.fine.push(v);
      if ((from + SCRAPE_SECONDS - this.origin) % Integrator.COARSE === 0) this.coarse.push(v);
      if (this.fine.length > Integrator.FINE_MAX) {
        // Drop the oldest hour: fineStart stays on a multiple of COARSE from origin.
        const drop = Integrator.FINE_MAX / 2;
        this.fine = this.fine.slice(drop);
        this.fineStart += drop * SCRAPE_SECONDS;
      }
    }
    const j = Math.floor((sec - this.fineStart) / SCRAPE_SECONDS);
    return this.sum(this.fineStart + j * SCRAPE_SECONDS, sec, this.fine[j] as number);
  }

  private sum(from: number, to: number, acc: number): number {
    for (let s = from + 1; s <= to; s++) acc += this.gen(s * 1000);
    return acc;
  }
}

function integrator(ctx: SimContext, gen: Gen): Integrator {
  const cache = ctx.area('native.integrators', () => new WeakMap<Gen, Integrator>());
  let i = cache.get(gen);
  if (!i) {
    i = new Integrator(gen, originSec(ctx));
    cache.set(gen, i);
  }
  return i;
}

/** The latest whole second a node's Prometheus holds a scrape for, and the first. */
export function nativeWindow(ctx: SimContext): { first: number; last: number } {
  const nowSec = Math.floor(ctx.now() / 1000);
  return { first: originSec(ctx), last: Math.floor(nowSec / SCRAPE_SECONDS) * SCRAPE_SECONDS };
}

function kvSeries(ctx: SimContext, bucket: SimBucket, node: SimNode, share: number, def: KvDef, bucketLabel: boolean): NativeSeries {
  const first = originSec(ctx);
  let at: (sec: number) => number | undefined;
  if (def.mode === 'rate') {
    // A counter: the running sum of the bucket's rate, the node's share of it (its vBuckets' part).
    const gen = bucketStatGen(ctx, bucket, def.from);
    const k = nodeRateScale(ctx, def.from, node, share) * (def.scale ?? 1);
    at = (sec) => (sec < first ? undefined : integrator(ctx, gen).total(sec) * k);
  } else {
    const gen = nodeStatGen(ctx, bucket, def.from, node, false);
    const k = def.scale ?? 1;
    at = (sec) => (sec < first ? undefined : gen(sec * 1000) * k);
  }
  const family = def.family ?? def.name;
  const labels = { ...(bucketLabel ? { bucket: bucket.name } : {}), ...(def.labels ?? {}) };
  return { name: def.name, family, labels, instance: def.instance ?? 'kv', ...meta(family), at };
}

interface SeriesCache {
  sig: string;
  bucketKnob: unknown;
  xdcrKnob: unknown;
  dcpKnob: unknown;
  byNode: Map<string, { all: NativeSeries[]; byName: Map<string, NativeSeries[]>; svc: readonly SvcStat[] }>;
}

/**
 * Every native series of one node, and the same indexed by name: built once per cluster shape (buckets,
 * data nodes, the value knobs), so a batch of queries over a large cluster does not rebuild them.
 */
export function nodeNativeIndex(ctx: SimContext, node: SimNode): { all: NativeSeries[]; byName: Map<string, NativeSeries[]> } {
  const sig = `${ctx.buckets.map((b) => `${b.name}\u0000${b.uuid}\u0000${b.bucketType}`).join('\n')}|${bucketNodeShares(ctx)
    .map((s) => s.node.hostname)
    .join(',')}|${JSON.stringify(ctx.options.knobs.nodeFaults ?? {})}`;
  const cache = ctx.area<SeriesCache>('native.series', () => ({ sig: '', bucketKnob: undefined, xdcrKnob: undefined, dcpKnob: undefined, byNode: new Map() }));
  const bucketKnob = ctx.options.knobs.bucketStatValues;
  const xdcrKnob = ctx.options.knobs.xdcrStatValues;
  // The DCP connection types a bucket has (modules/dcp.ts) decide which kv_dcp_* series exist.
  const dcpKnob = ctx.options.knobs.dcpConnectionTypes;
  if (cache.sig !== sig || cache.bucketKnob !== bucketKnob || cache.xdcrKnob !== xdcrKnob || cache.dcpKnob !== dcpKnob) {
    Object.assign(cache, { sig, bucketKnob, xdcrKnob, dcpKnob });
    cache.byNode.clear();
  }
  let entry = cache.byNode.get(node.hostname);
  // The service statistics' model is rebuilt when its own knobs change (./services.ts): so is the node's index.
  const svc = nodeServiceStats(ctx, node);
  if (!entry || entry.svc !== svc) {
    const all = nodeNativeSeries(ctx, node);
    const byName = new Map<string, NativeSeries[]>();
    for (const s of all) (byName.get(s.name) ?? byName.set(s.name, []).get(s.name))?.push(s);
    entry = { all, byName, svc };
    cache.byNode.set(node.hostname, entry);
  }
  return entry;
}

/**
 * Every native series of one node: its host's sys_* on every node; memcached's and the buckets' kv series and
 * goxdcr's on the bucket's servers (a failed-over node is none); each as of the node's own clock.
 */
export function nodeNativeSeries(ctx: SimContext, node: SimNode): NativeSeries[] {
  const series = ownSeries(ctx, node);
  const ahead = Math.round((nodeFault(ctx, node.hostname).clockAheadMs ?? 0) / 1000);
  if (ahead === 0) return series;
  // Its Prometheus stamps the value of real second s at s + ahead.
  return series.map((s) => ({ ...s, at: (sec: number) => s.at(sec - ahead) }));
}

function ownSeries(ctx: SimContext, node: SimNode): NativeSeries[] {
  // The services' series after the data service's and the host's (an exposition keeps its older order).
  return [...ownKvSeries(ctx, node), ...serviceSeries(ctx, node, nodeServiceStats(ctx, node))];
}

function ownKvSeries(ctx: SimContext, node: SimNode): NativeSeries[] {
  const line = ctx.options.profile.line;
  const served = (def: KvDef): boolean => def.lines === undefined || def.lines.includes(line);
  const entry = bucketNodeShares(ctx).find((s) => s.node.hostname === node.hostname);
  const out: NativeSeries[] = [];
  const first0 = ctx.buckets[0];
  for (const def of NATIVE_NODE) {
    if (!first0 || (def.from === 'curr_connections' && !entry)) continue;
    const series = kvSeries(ctx, first0, node, entry?.share ?? 0, def, false);
    out.push(series);
    if (def.name === 'cm_request_unhibernates_total') out.push(hibernatesSeries(ctx, first0, node, series));
  }
  if (!entry) return out;
  for (const b of ctx.buckets) {
    if (b.bucketType === 'memcached') continue;
    // A DCP connection type's series exist only while the bucket has connections of it (modules/dcp.ts).
    const dcp = dcpTypesOf(ctx, b);
    for (const def of NATIVE_KV) if (served(def) && (def.dcpType === undefined || dcp.has(def.dcpType))) out.push(kvSeries(ctx, b, node, entry.share, def, true));
  }
  const first = originSec(ctx);
  const override = ctx.options.knobs.xdcrStatValues as Readonly<Record<string, (t: number, node: string) => number>> | undefined;
  const pre8 = ctx.options.profile.major < 8;
  for (const rep of xdcrSimReplications(ctx)) {
    if (!ctx.buckets.some((b) => b.name === rep.source)) continue;
    const labels = { sourceBucketName: rep.source, targetClusterUUID: rep.remote.uuid, targetBucketName: rep.target, pipelineType: 'Main' };
    for (const def of NATIVE_XDCR) {
      if (def.before8 && !pre8) continue;
      const scale = def.scale ?? 1;
      const o = override?.[def.from];
      const at = (sec: number): number | undefined => {
        if (sec < first) return undefined;
        const t = sec * 1000;
        const v = o ? o(t, node.hostname) : rep.stat(def.from, node.hostname, t);
        return v === undefined ? undefined : v * scale;
      };
      out.push({ name: def.name, family: def.name, labels, instance: 'xdcr', ...meta(def.name), at });
    }
  }
  return out;
}
