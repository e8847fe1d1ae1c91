/**
 * The native-metric mapping table (src/stats/native-map.ts), checked row by row against references from outside
 * the code under test:
 * - ORACLE: hand-written transcriptions of couchbase/ns_server `src/stat_names_mappings.erl` (commit 08f6fccc5ae7;
 *   the explicit clauses of pre_70_stat_to_prom_query/3, map_dcpagg_stat/4 and the `@xdcr-` section with its
 *   default_stat_list) and, for the stats it hands to kv_stats_mappings, of couchbase/kv_engine
 *   `include/statistics/stats.def.h` (commit 0c846fffcdc4: family, labels, unit). Computed stats (menelaus_stats)
 *   are transcribed as the quotient the envelope shows.
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
import { KV_NATIVE_MAP, NATIVE_MAP, NO_NATIVE_EQUIVALENT, XDCR_NATIVE_MAP } from '../../src/stats/native-map.js';
import type { Matchers, NativeMapRow } from '../../src/stats/native-map.js';

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
  readonly series: Readonly<Record<string, Matchers>> | ReadonlyArray<readonly [string, Matchers]>;
  readonly rate?: boolean;
  readonly factor?: number;
  /** For computed stats: the divisor series and the quotient kind. */
  readonly den?: ReadonlyArray<readonly [string, Matchers]>;
  readonly quotient?: 'increase_ratio' | 'level_ratio' | 'complement_ratio';
}
const one = (metric: string, m: Matchers = {}): ReadonlyArray<readonly [string, Matchers]> => [[metric, m]];

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
  couch_docs_fragmentation: { series: one('couch_docs_fragmentation') },
  couch_views_fragmentation: { series: one('couch_views_fragmentation') },
  couch_total_disk_size: { series: one('couch_total_disk_size') },
  couch_views_data_size: { series: one('couch_views_data_size') },
  couch_views_disk_size: { series: one('couch_views_disk_size') },
  couch_spatial_data_size: { series: one('couch_spatial_data_size') },
  couch_spatial_disk_size: { series: one('couch_spatial_disk_size') },
  couch_views_ops: { series: one('couch_views_ops'), rate: true },
  couch_spatial_ops: { series: one('couch_spatial_ops'), rate: true },
  curr_connections: { series: one('kv_curr_connections') },
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
for (const [g, t] of Object.entries(DCP_TYPE)) {
  const m = { connection_type: t };
  NS_EXPLICIT[`ep_dcp_${g}_count`] = { series: one('kv_dcp_connection_count', m) };
  NS_EXPLICIT[`ep_dcp_${g}_items_remaining`] = { series: one('kv_dcp_items_remaining', m) };
  NS_EXPLICIT[`ep_dcp_${g}_producer_count`] = { series: one('kv_dcp_producer_count', m) };
  NS_EXPLICIT[`ep_dcp_${g}_total_backlog_size`] = { series: one('kv_dcp_total_backlog_size', m) };
  NS_EXPLICIT[`ep_dcp_${g}_items_sent`] = { series: one('kv_dcp_items_sent', m), rate: true };
  NS_EXPLICIT[`ep_dcp_${g}_backoff`] = { series: one('kv_dcp_backoff', m), rate: true };
  NS_EXPLICIT[`ep_dcp_${g}_total_bytes`] = { series: one('kv_dcp_total_data_size_bytes', m), rate: true };
}

// `@system`: sys_<stat> for cpu_*, mem_*, swap_*, allocstall, odp_report_failed; rest_requests and hibernated_waked are irates.
const SYSTEM: Record<string, Oracle> = {};
for (const st of ['cpu_utilization_rate', 'cpu_user_rate', 'cpu_sys_rate', 'cpu_irq_rate', 'cpu_stolen_rate', 'cpu_cores_available']) SYSTEM[st] = { series: one(`sys_${st}`) };
for (const st of ['mem_actual_free', 'mem_actual_used', 'mem_free', 'mem_limit', 'mem_total', 'mem_used_sys', 'swap_total', 'swap_used', 'allocstall', 'odp_report_failed']) {
  SYSTEM[st] = { series: one(`sys_${st}`) };
}
SYSTEM.rest_requests = { series: one('cm_rest_request_leaves_total'), rate: true };
SYSTEM.hibernated_waked = { series: one('cm_request_unhibernates_total'), rate: true };

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
  // docs-server kv_cross_reference.csv (the 8.0 name): ep_kv_size → kv_ep_key_value_size_bytes.
  ep_kv_size: { series: one('kv_ep_key_value_size_bytes') },
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
  STATS_DEF[`${p}itm_memory`] = { series: one('kv_vb_itm_memory_bytes', m) };
  if (st !== 'active') STATS_DEF[`${p}curr_items`] = { series: one('kv_vb_curr_items', m) };
}

// ---- computed by ns_server (menelaus_stats) from the stats above ----
const COMPUTED: Record<string, Oracle> = {
  hit_ratio: { series: one('kv_ops', { op: 'get', result: 'hit' }), den: one('kv_ops', { op: 'get' }), quotient: 'increase_ratio', factor: 100 },
  ep_cache_miss_rate: { series: one('kv_ep_bg_fetched'), den: one('kv_ops', { op: 'get' }), quotient: 'increase_ratio', factor: 100 },
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

const KV_ORACLE: Record<string, Oracle> = { ...NS_EXPLICIT, ...SYSTEM, ...STATS_DEF, ...COMPUTED };

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

function seriesOf(o: Oracle['series']): Array<readonly [string, Matchers]> {
  return Array.isArray(o) ? [...(o as ReadonlyArray<readonly [string, Matchers]>)] : Object.entries(o as Record<string, Matchers>);
}
const norm = (xs: ReadonlyArray<readonly [string, Matchers]>): string[] => xs.map(([m, l]) => `${m}${JSON.stringify(Object.entries(l).sort())}`).sort();
const rowSeries = (xs: NativeMapRow['series'] | undefined): string[] => norm((xs ?? []).map((x) => [x.metric, x.matchers] as const));

/** The catalog's scale and unit of the family a row feeds (what the envelope path applies to the legacy value). */
function catalogOf(r: NativeMapRow): { family: string; scale: number; unit: string; kind: string } | undefined {
  if (r.section === 'kv') {
    const f = STAT_FAMILIES.get(r.legacy);
    return f && { family: f.bucket.name, scale: f.spec.scale, unit: f.spec.unit, kind: f.spec.kind };
  }
  const x = XDCR_STATS.find((s) => s.stat === r.legacy);
  return x && { family: x.metric, scale: x.scale, unit: x.unit, kind: x.kind };
}

describe('native map: rows against ns_server (stat_names_mappings.erl, stats.def.h, computed stats)', () => {
  it.each(NATIVE_MAP.map((r) => [`${r.section} ${r.legacy}`, r] as const))('%s', (_name, r) => {
    const o = (r.section === 'kv' ? KV_ORACLE : XDCR_ORACLE)[r.legacy];
    expect(o, 'a row must map a stat ns_server maps').toBeDefined();
    if (o === undefined) return;
    expect(rowSeries(r.series)).toEqual(norm(seriesOf(o.series)));
    expect(rowSeries(r.denominator)).toEqual(norm(o.den ?? []));
    if (o.quotient !== undefined) expect(r.derive).toBe(o.quotient);
    else expect(r.derive).toBe(o.rate === true ? 'rate' : 'level');
    expect(r.legacyFactor).toBe(o.factor ?? 1);
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

  it('maps every stat of cbwatch\'s catalog that ns_server maps, or names why not', () => {
    const named = Object.keys(NO_NATIVE_EQUIVALENT.kv).join(' ');
    const mapped = new Set(KV_NATIVE_MAP.map((r) => r.legacy));
    const missing = Object.keys(KV_ORACLE).filter((st) => STAT_FAMILIES.has(st) && !mapped.has(st));
    // Each one is named (literally, or by its pattern) in NO_NATIVE_EQUIVALENT.
    const unexplained = missing.filter((st) => {
      const pattern = st.replace(/^vb_(active|replica|pending)_/, 'vb_<state>_').replace(/^ep_dcp_[a-z0-9]+_/, 'ep_dcp_<type>_');
      return !named.includes(st) && !named.includes(pattern) && !/^couch_(views|spatial)_/.test(st);
    });
    expect(unexplained).toEqual([]);
    // XDCR: every stat cbwatch polls is mapped or named.
    const xdcrMapped = new Set(XDCR_NATIVE_MAP.map((r) => r.legacy));
    for (const x of XDCR_STATS) expect(xdcrMapped.has(x.stat) || x.stat in NO_NATIVE_EQUIVALENT.xdcr, x.stat).toBe(true);
    // …and a stat named as having no native equivalent really has none in ns_server's XDCR section.
    for (const st of Object.keys(NO_NATIVE_EQUIVALENT.xdcr)) expect(XDCR_ORACLE[st]).toBeUndefined();
  });

  it('keeps one row per legacy stat and per family', () => {
    const keys = NATIVE_MAP.map((r) => `${r.section}:${r.legacy}`);
    expect(new Set(keys).size).toBe(keys.length);
    const fams = NATIVE_MAP.map((r) => r.family);
    expect(new Set(fams).size).toBe(fams.length);
  });
});

/** Labels every kv series carries besides those the metadata lists: the bucket, and the vBucket state / DCP connection type. */
function implicitLabels(metric: string): string[] {
  const out = ['bucket'];
  if (metric.startsWith('kv_vb_') || metric === 'kv_num_vbuckets') out.push('state');
  if (metric.startsWith('kv_dcp_')) out.push('connection_type');
  // kv_ops carries `result` beside the `op` the metadata lists (stats.def.h: LABEL(op, get), LABEL(result, hit)).
  if (metric === 'kv_ops') out.push('result');
  return out;
}

describe('native map: every native name against the 8.0 metadata', () => {
  const all = NATIVE_MAP.flatMap((r) => [...r.series, ...(r.denominator ?? [])].map((x) => [r, x] as const));
  it.each(all.map(([r, x]) => [`${r.legacy}: ${x.metric}`, r, x] as const))('%s', (_n, r, x) => {
    const base = x.type === 'histogram' ? x.metric.replace(/_(sum|count)$/, '') : x.metric;
    const meta = META.get(base);
    if (r.absentIn80) {
      // The flag may not lie: the metric really is absent from 8.0.
      expect(meta).toBeUndefined();
      return;
    }
    expect(meta, `${base} in the 8.0 metadata`).toBeDefined();
    if (meta === undefined) return;
    expect(meta.type).toBe(x.type);
    if (x.type === 'histogram') expect(x.metric).toMatch(/_(sum|count)$/);
    // Labels: every matcher names a label the metric has.
    const allowed = new Set([...labelsOf(meta), ...(r.section === 'kv' ? implicitLabels(base) : [])]);
    for (const l of Object.keys(x.matchers)) expect(allowed.has(l), `${base} has label ${l}`).toBe(true);
    if (r.section === 'xdcr') expect(labelsOf(meta)).toEqual(expect.arrayContaining(['sourceBucketName', 'targetClusterUUID', 'targetBucketName', 'pipelineType']));
    // Units: the native unit and the row's derivation give the family's unit.
    const c = catalogOf(r);
    if (c === undefined || r.denominator !== undefined) return;
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
