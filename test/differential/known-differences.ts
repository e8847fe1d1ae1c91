/**
 * The differences left between `stats_source: envelope` and `range` on the simulator (issue 37, §7), each with
 * its reason. test/differential/envelope-range.test.ts fails on a difference missing here and on an entry that no
 * longer happens in a profile and case it names, so the list shrinks as the range path is fixed. docs/metrics.md,
 * "Envelope and range differences", says the same for users.
 */

export const PROFILES = ['7.0.5', '7.2.4', '7.6.2', '7.6.8', '8.0.0'] as const;
export const CASES = ['healthy', 'down', 'failed_over', 'slow'] as const;
export type Profile = (typeof PROFILES)[number];
export type CaseName = (typeof CASES)[number];

/** absent_in_range / absent_in_envelope: the whole family; series: label sets differ; value: numbers differ. */
export type DifferenceKind = 'absent_in_range' | 'absent_in_envelope' | 'series' | 'value';

export interface Difference {
  readonly family: string;
  readonly profile: string;
  readonly case: CaseName;
  readonly kind: DifferenceKind;
  readonly detail: string;
}

export interface KnownDifference {
  /** A family name, or a pattern over family names. */
  readonly family: string | RegExp;
  readonly kind: DifferenceKind;
  /** Where it happens (default: every profile, every case); each one named must see it. */
  readonly profiles?: readonly Profile[];
  readonly cases?: readonly CaseName[];
  readonly reason: string;
}

export function matches(k: KnownDifference, d: Difference): boolean {
  const family = typeof k.family === 'string' ? k.family === d.family : k.family.test(d.family);
  return (
    family &&
    k.kind === d.kind &&
    (k.profiles === undefined || (k.profiles as readonly string[]).includes(d.profile)) &&
    (k.cases === undefined || k.cases.includes(d.case))
  );
}

const ALL_BUT_DOWN: readonly CaseName[] = ['healthy', 'failed_over', 'slow'];
const FROM_72: readonly Profile[] = ['7.2.4', '7.6.2', '7.6.8', '8.0.0'];

export const KNOWN_DIFFERENCES: readonly KnownDifference[] = [
  // Partial answers (range-core).
  {
    family: /^couchbase_bucket_/,
    kind: 'absent_in_range',
    cases: ['down'],
    reason: 'range-core: one node answering "Node is not available" blanks every bucket-wide value (src/stats/range-groups.ts blocked()); the envelope sums the live nodes',
  },
  // One meaning per family (range-core, native-map).
  {
    family: /^couchbase_bucket_(cpu_(cores_available|sys_ratio|user_ratio)|mem_(actual_free|actual_used|free|limit|total|used_sys)_bytes|swap_(total|used)_bytes)$/,
    kind: 'value',
    cases: ALL_BUT_DOWN,
    reason: 'host stats: the range source takes the mean over the nodes that answer (a failed-over node\'s host too); the envelope sums the active nodes (menelaus_stats get_aggregate_method)',
  },
  {
    family: 'couchbase_bucket_cpu_utilization_ratio',
    kind: 'value',
    cases: ALL_BUT_DOWN,
    reason: 'cpu_utilization_rate: the range source takes the mean over the nodes that answer (a failed-over node\'s host too); the envelope the max over the active nodes (get_aggregate_method)',
  },
  {
    family: 'couchbase_bucket_ep_cache_miss_ratio',
    kind: 'value',
    cases: ALL_BUT_DOWN,
    reason: 'ep_cache_miss_rate: the range source divides bg fetches by gets (a retired UI formula); the envelope by cmd_lookup on 7.0-7.6.7 and get_misses / cmd_get from 7.6.8 (native-map: per-version formulas)',
  },
  {
    family: 'couchbase_bucket_couch_docs_data_size_bytes',
    kind: 'value',
    profiles: FROM_72,
    cases: ALL_BUT_DOWN,
    reason: 'couch_docs_data_size from 7.2: the envelope reports a node\'s file size while its file is under 128 KiB × its vBuckets; the range source ignores the rule (native-map)',
  },
  {
    family: 'couchbase_bucket_ep_kv_size_bytes',
    kind: 'absent_in_range',
    profiles: ['7.0.5', '7.2.4'],
    cases: ALL_BUT_DOWN,
    reason: 'ep_kv_size is kv_memory_used_bytes{for="hashtable"} on 7.0-7.2; the range source asks only the 7.6+ name (native-map: one name table per server line)',
  },
  // The 32 dropped stats (native-map) and the 7.0-7.2-only names.
  {
    family: /^couchbase_bucket_(vb_active_sync_write_(aborted|accepted|committed)_per_second|ep_(active|replica)_(hlc_drift_(count|seconds)_per_second|ahead_exceptions_per_second)|couch_(docs|views)_fragmentation_ratio|couch_total_disk_size_bytes|couch_views_(data_size|disk_size)_bytes|couch_views_ops_per_second|vb_avg_(total|replica|pending)_queue_age_seconds|ep_dcp_other_.*|ep_dcp_views_indexes_.*|ep_dcp_[a-z0-9]+_(producers|total_backlog_size)|hibernated_(requests|waked_per_second)|rest_requests_per_second|vb_(active|replica|pending)_itm_memory_bytes)$/,
    kind: 'absent_in_range',
    cases: ALL_BUT_DOWN,
    reason: 'issue 37 §4: stats 7.x/8.0 can answer that the range source does not map yet (sync writes, HLC drift and ahead exceptions, fragmentations, couch_total_disk_size, couch_views_*, vb_avg_*_queue_age, ep_dcp_other_* and views+indexes, producer counts and backlogs, hibernated_*, rest_requests, vb_*_itm_memory on 7.0-7.2)',
  },
  // Envelope-only in this simulator: legacy names a real 7.x envelope no longer fills (to prune from the simulator's 7.x envelope).
  {
    family: /^couchbase_bucket_(ep_tap_.*|replication_.*|couch_spatial_.*|evictions_per_second|odp_report_failed|ep_max_data_size_bytes|cpu_(idle|local)_seconds_per_second|vb_active_num|vb_active_meta_data_memory_bytes|vb_active_queue_drain_per_second|vb_(replica|pending)_(num|curr_items|num_non_resident|eject_per_second|ops_create_per_second|ops_update_per_second|queue_age_seconds|queue_drain_per_second|queue_fill_per_second|queue_size|meta_data_memory_bytes|resident_items_ratio))$/,
    kind: 'absent_in_range',
    cases: ALL_BUT_DOWN,
    reason: 'the simulator\'s 7.x envelope still serves these pre-7.0 or unmodelled names (TAP, old per-bucket XDCR, spatial views, memcached evictions, per-state vBucket stats it has no native series for); the range source rightly has none. The simulator should drop them from its 7.x envelope',
  },
];
