/**
 * The catalog of bucket stats: every name of the bucket stats envelope (GET /pools/default/buckets/{b}/stats)
 * that cbwatch knows, with the family it becomes, its unit conversion and how a 60-sample envelope turns
 * into one value. Both statistics sources give their values under these names (src/stats/values.ts): the range
 * source's rows (src/stats/native-map.ts) name the legacy stat they compute, and map to the same families.
 *
 * What a sample is, per stat, follows Couchbase's stats collector (ns_server `stats_collector.erl`,
 * `ns_stats.hrl`, `menelaus_stats.erl`), which produced this envelope up to 6.6 and whose names 7.x keeps:
 * - counters of memcached/ep-engine (cmd_get, bytes_read, ep_bg_fetched, vb_*_ops_*, *_queue_fill/drain,
 *   *_eject, DCP/TAP items sent…) are stored as per-second rates (delta / elapsed); so are the sums
 *   computed from them (ops, misses, xdc_ops, ep_ops_create/update) and the timing sums
 *   (bg_wait_*, disk_update_*, disk_commit_*). These are `rate` stats: the value is the mean of the
 *   samples newer than the previous poll, named `_per_second`.
 * - stats that are themselves an average or a ratio over ONE sample period (ns_server computes each sample
 *   as numerator / denominator of that period's deltas: avg_disk_commit_time, avg_disk_update_time,
 *   avg_bg_wait_time, avg_*_timestamp_drift, hit_ratio, ep_cache_miss_rate, cpu_*_rate) are `mean` stats:
 *   the value is the mean of the samples newer than the previous poll, weighted by the sample of the
 *   denominator (`weight`) when the envelope carries it, which makes it Σnumerator / Σdenominator over the
 *   window, as the reference would compute it for one period that long. The latest sample alone would be
 *   the average of the last second only (0 for a commit time whenever the last second had no commit).
 * - everything else (items, memory, queue sizes, vBucket counts, disk sizes, resident ratios, fragmentation,
 *   the average age of the items queued now) is a level: the value is the latest non-null sample.
 * - a few levels are counts since the bucket started (ep_oom_errors, ep_item_commit_failed, ep_data_*_failed,
 *   ep_clock_cas_drift_threshold_exceeded; ns_server samples them as gauges "used by alerts") and the pre-4.0
 *   XDCR totals: these are `cumulative`, exported as `_total` counters with their latest sample, so
 *   `rate()`/`increase()` work on them and a restart reads as a counter reset.
 * Units: `*_memory`, `*_size`, mem_*, ep_*_wat… are bytes. vb_*_queue_age are SUMS of item ages in
 * milliseconds; vb_avg_*_queue_age are already seconds (sum / items / 1000); avg_disk_update_time and
 * avg_bg_wait_time are microseconds; avg_disk_commit_time is seconds (µs / 1e6); the *_total timing
 * sums are microseconds per second. hit_ratio, ep_cache_miss_rate, ep_resident_items_rate,
 * vb_*_resident_items_ratio, couch_*_fragmentation and cpu_*_rate are percentages (0-100) and become 0-1
 * `_ratio`s.
 *
 * Per-node values (opt-in `per_node`) go to `couchbase_bucket_node_<metric>{bucket,node}`: a family has one
 * label set, and keeping the bucket-wide families label-stable means `couchbase_bucket_<metric>{bucket}`
 * never changes shape when an operator turns per-node stats on.
 *
 * Names: Prometheus' linter rejects gauges ending in `_count`, so Couchbase's `*_count` levels are renamed
 * (ep_dcp_replica_count → ep_dcp_replica_connections, *_producer_count → *_producers).
 */
import { capNamePart, defineFamily, MAX_DYNAMIC_NAME_LENGTH, sanitizeName } from '../metrics/family.js';
import type { FamilyDef } from '../metrics/family.js';

export const BUCKET_STATS_COLLECTOR = 'bucket_stats';

/**
 * `level`: latest non-null sample. `rate`: mean of the samples since the previous poll. `mean`: a stat that is
 * an average over one sample period: mean of the samples since the previous poll, weighted by `weight`'s
 * samples when the envelope has them. `cumulative`: a count since the bucket (or the node) started, sampled as
 * a level by Couchbase: its latest sample, as a counter.
 */
export type StatKind = 'level' | 'rate' | 'mean' | 'cumulative';

export interface StatSpec {
  /** Couchbase's stat name (the key in `op.samples`). */
  readonly stat: string;
  /** Family name without the `couchbase_bucket_` prefix, with its unit suffix. */
  readonly metric: string;
  readonly kind: StatKind;
  /** Multiplier from Couchbase's unit to the base unit (0.01 for percent, 1e-6 for µs, 0.001 for ms). */
  readonly scale: number;
  /** bytes, seconds, ratio, count, per_second, bytes_per_second, seconds_per_second. */
  readonly unit: string;
  readonly description: string;
  /**
   * `mean` stats: the stat of the same envelope whose samples weight the mean (the denominator of the
   * reference's per-sample formula); undefined for a plain mean.
   */
  readonly weight?: string;
  /** `mean` stats: the reference's per-sample formula and where it is defined (docs/metrics.md quotes it). */
  readonly formula?: string;
  /** Listed in the REST reference's "Bucket stat names" (the others come from real captures). */
  readonly reference: boolean;
}

type Def = Omit<StatSpec, 'reference'>;

const level = (stat: string, description: string, metric = stat): Def => ({ stat, metric, kind: 'level', scale: 1, unit: 'count', description });
const bytes = (stat: string, description: string, metric = `${stat}_bytes`): Def => ({ stat, metric, kind: 'level', scale: 1, unit: 'bytes', description });
const pct = (stat: string, description: string, metric = `${stat.replace(/_(rate|ratio)$/, '')}_ratio`): Def => ({ stat, metric, kind: 'level', scale: 0.01, unit: 'ratio', description });
const secs = (stat: string, metric: string, scale: number, description: string): Def => ({ stat, metric, kind: 'level', scale, unit: 'seconds', description });
const rate = (stat: string, description: string, metric = `${stat}_per_second`): Def => ({ stat, metric, kind: 'rate', scale: 1, unit: 'per_second', description });
const total = (stat: string, description: string, metric = `${stat}_total`): Def => ({ stat, metric, kind: 'cumulative', scale: 1, unit: 'count', description });
const bytesTotal = (stat: string, description: string, metric = `${stat}_bytes_total`): Def => ({ stat, metric, kind: 'cumulative', scale: 1, unit: 'bytes', description });
const bytesRate = (stat: string, metric: string, description: string): Def => ({ stat, metric, kind: 'rate', scale: 1, unit: 'bytes_per_second', description });
const secsRate = (stat: string, metric: string, scale: number, description: string): Def => ({ stat, metric, kind: 'rate', scale, unit: 'seconds_per_second', description });
/** A percentage over one sample period: window mean, weighted by `weight` when given. */
const pctMean = (stat: string, description: string, formula: string, weight?: string): Def => ({
  stat,
  metric: `${stat.replace(/_(rate|ratio)$/, '')}_ratio`,
  kind: 'mean',
  scale: 0.01,
  unit: 'ratio',
  description,
  formula,
  ...(weight === undefined ? {} : { weight }),
});
/** An average time over one sample period: window mean weighted by its count stat. */
const secsMean = (stat: string, metric: string, scale: number, weight: string, formula: string, description: string): Def => ({
  stat,
  metric,
  kind: 'mean',
  scale,
  unit: 'seconds',
  description,
  weight,
  formula,
});

/** Where the per-sample formulas of the bucket's computed stats are defined. */
const MENELAUS = 'ns_server src/menelaus_stats.erl, computed_stats_lazy_proplist';
/** Where cpu_utilization_rate is computed from cpu_local_ms and cpu_idle_ms (4.x-6.0). */
const SYSTEM_STATS = 'ns_server src/system_stats_collector.erl, unpack_data';
/** Where the 6.5+ CPU shares are computed (from cpu_total_ms, which the envelope does not carry). */
const SYSTEM_STATS_65 = 'ns_server src/system_stats_collector.erl (6.5+), compute_cpu_stats';

const VB_STATES = [
  ['active', 'active'],
  ['replica', 'replica'],
  ['pending', 'pending'],
] as const;

function vbucketStats(): Def[] {
  const out: Def[] = [];
  for (const [s, word] of VB_STATES) {
    const p = `vb_${s}_`;
    out.push(
      level(`${p}queue_size`, `Items waiting in the disk-write queue of ${word} vBuckets.`),
      rate(`${p}queue_fill`, `Items enqueued in the disk-write queue of ${word} vBuckets.`),
      rate(`${p}queue_drain`, `Items drained (written) from the disk-write queue of ${word} vBuckets.`),
      secs(`${p}queue_age`, `${p}queue_age_seconds`, 0.001, `Sum of the ages of the items in the disk-write queue of ${word} vBuckets (Couchbase reports milliseconds).`),
      rate(`${p}ops_update`, `Update operations on ${word} vBuckets.`),
      rate(`${p}ops_create`, `Create operations on ${word} vBuckets.`),
      level(`${p}num_non_resident`, `Items in ${word} vBuckets whose value is not resident in memory.`),
      level(`${p}num`, `Number of ${word} vBuckets.`),
      bytes(`${p}meta_data_memory`, `Memory used by metadata of items in ${word} vBuckets.`),
      bytes(`${p}itm_memory`, `Memory used by items (keys and values) in ${word} vBuckets.`),
      rate(`${p}eject`, `Values ejected from memory to disk in ${word} vBuckets.`),
      pct(`${p}resident_items_ratio`, `Share of items in ${word} vBuckets whose value is resident in memory.`),
      secs(`vb_avg_${s}_queue_age`, `vb_avg_${s}_queue_age_seconds`, 1, `Average age of the items in the disk-write queue of ${word} vBuckets.`),
    );
    if (s !== 'active') out.push(level(`${p}curr_items`, `Items in ${word} vBuckets.`));
  }
  return out;
}

function tapStats(): Def[] {
  const out: Def[] = [];
  for (const g of ['rebalance', 'replica', 'user', 'total'] as const) {
    const p = `ep_tap_${g}_`;
    const who = g === 'total' ? 'all TAP' : `${g} TAP`;
    out.push(
      level(`${p}count`, `Number of ${who} connections (pre-3.0 replication protocol).`, `${p}connections`),
      level(`${p}qlen`, `Items in the queues of ${who} connections.`),
      level(`${p}queue_backfillremaining`, `Items left to backfill on ${who} connections.`),
      rate(`${p}queue_backoff`, `Back-offs on ${who} connections.`),
      rate(`${p}queue_drain`, `Items drained from the queues of ${who} connections.`),
      rate(`${p}queue_fill`, `Items enqueued on ${who} connections.`),
      level(`${p}queue_itemondisk`, `Items still on disk to be sent on ${who} connections.`),
      level(`${p}total_backlog_size`, `Items in the backlog of ${who} connections.`),
    );
  }
  return out;
}

/** DCP stream groups as named in the envelope; `views+indexes` is the sum of views and 2i. */
const DCP_GROUPS: ReadonlyArray<readonly [string, string]> = [
  ['replica', 'replication'],
  ['xdcr', 'XDCR'],
  ['views', 'views'],
  ['2i', 'index (2i)'],
  ['fts', 'search (FTS)'],
  ['cbas', 'analytics'],
  ['eventing', 'eventing'],
  ['views+indexes', 'views and indexes'],
  ['other', 'other'],
];

function dcpStats(): Def[] {
  const out: Def[] = [];
  for (const [g, word] of DCP_GROUPS) {
    const p = `ep_dcp_${g}_`;
    const m = `ep_dcp_${g.replace(/[^a-zA-Z0-9]/g, '_')}_`;
    out.push(
      rate(`${p}backoff`, `Back-offs of ${word} DCP connections.`, `${m}backoff_per_second`),
      level(`${p}count`, `Number of ${word} DCP connections.`, `${m}connections`),
      level(`${p}items_remaining`, `Items left to send on ${word} DCP connections.`, `${m}items_remaining`),
      rate(`${p}items_sent`, `Items sent on ${word} DCP connections.`, `${m}items_sent_per_second`),
      level(`${p}producer_count`, `Number of ${word} DCP producers.`, `${m}producers`),
      level(`${p}total_backlog_size`, `Items in the backlog of ${word} DCP connections.`, `${m}total_backlog_size`),
      bytesRate(`${p}total_bytes`, `${m}sent_bytes_per_second`, `Bytes sent on ${word} DCP connections.`),
    );
  }
  return out;
}

/** The names listed in the REST reference (the seed), expanded. */
const REFERENCE: Def[] = [
  rate('xdc_ops', 'Incoming XDCR operations (set, get and delete with metadata) on this bucket as a destination.'),
  secs('vb_total_queue_age', 'vb_total_queue_age_seconds', 0.001, 'Sum of the ages of all items in the disk-write queues (Couchbase reports milliseconds).'),
  secs('vb_avg_total_queue_age', 'vb_avg_total_queue_age_seconds', 1, 'Average age of the items in the disk-write queues.'),
  ...vbucketStats(),
  rate('ep_ops_create', 'Create operations over active, replica and pending vBuckets.'),
  rate('ep_ops_update', 'Update operations over active, replica and pending vBuckets.'),
  total('ep_oom_errors', 'Times an operation failed because memory was full, since the bucket started.'),
  rate('ep_tmp_oom_errors', 'Operations refused with a temporary out-of-memory error.'),
  rate('ep_num_value_ejects', 'Values ejected from memory to disk.'),
  rate('ep_num_ops_set_ret_meta', 'Set-with-metadata operations that return metadata (XDCR).'),
  rate('ep_num_ops_set_meta', 'Set-with-metadata operations (XDCR).'),
  rate('ep_num_ops_get_meta', 'Get-metadata operations (XDCR).'),
  rate('ep_num_ops_del_ret_meta', 'Delete-with-metadata operations that return metadata (XDCR).'),
  rate('ep_num_ops_del_meta', 'Delete-with-metadata operations (XDCR).'),
  level('ep_num_non_resident', 'Items whose value is not resident in memory (all vBucket states but dead).'),
  bytes('ep_meta_data_memory', 'Memory used by item metadata.'),
  bytes('ep_mem_low_wat', 'Memory low water mark: ejection stops below it.'),
  bytes('ep_mem_high_wat', 'Memory high water mark: ejection starts above it.'),
  bytes('ep_max_data_size', 'Maximum memory the bucket may use (its quota on this node).'),
  bytes('ep_kv_size', 'Memory used by keys and values.'),
  total('ep_item_commit_failed', 'Times a disk commit failed, since the bucket started.'),
  level('ep_flusher_todo', 'Items being written to disk by the flusher now.'),
  level('ep_diskqueue_items', 'Items in the disk-write queue.'),
  rate('ep_diskqueue_fill', 'Items enqueued for disk write.'),
  rate('ep_diskqueue_drain', 'Items written to disk from the queue.'),
  rate('ep_bg_fetched', 'Items fetched from disk in the background (cache misses).'),
  pctMean('ep_cache_miss_rate', 'Share of get operations served from disk (ep_bg_fetched / cmd_get).', `100 × ep_bg_fetched / cmd_get (${MENELAUS})`, 'cmd_get'),
  pct('ep_resident_items_rate', 'Share of items whose value is resident in memory.'),
  bytes('ep_overhead', 'Memory overhead: replication queues, checkpoints and other structures.'),
  level('ep_queue_size', 'Items waiting in the queue to be written to disk.'),
  level('ep_vb_total', 'Number of vBuckets of the bucket on the node(s), all states.', 'ep_vbuckets'),
  level('disk_write_queue', 'Items waiting to be written to disk (ep_queue_size + ep_flusher_todo).'),
  secsRate('disk_update_total', 'disk_update_seconds_per_second', 1e-6, 'Time spent updating items on disk (Couchbase reports microseconds).'),
  rate('disk_update_count', 'Disk updates.', 'disk_updates_per_second'),
  secsRate('disk_commit_total', 'disk_commit_seconds_per_second', 1e-6, 'Time spent committing to disk (Couchbase reports microseconds).'),
  rate('disk_commit_count', 'Disk commits.', 'disk_commits_per_second'),
  rate('delete_misses', 'Delete operations on keys that do not exist.'),
  rate('delete_hits', 'Delete operations on existing keys.'),
  rate('decr_misses', 'Decrement operations on keys that do not exist.'),
  rate('decr_hits', 'Decrement operations on existing keys.'),
  rate('incr_hits', 'Increment operations on existing keys.'),
  rate('incr_misses', 'Increment operations on keys that do not exist.'),
  rate('get_hits', 'Get operations that found their key.'),
  rate('get_misses', 'Get operations on keys that do not exist.'),
  rate('misses', 'Operations on keys that do not exist (get, delete, incr, decr, cas).'),
  pctMean('hit_ratio', 'Share of get operations that found their key (get_hits / cmd_get).', `100 × get_hits / cmd_get (${MENELAUS})`, 'cmd_get'),
  rate('cas_badval', 'Compare-and-swap operations refused because the CAS did not match.'),
  rate('cas_hits', 'Compare-and-swap operations that succeeded.'),
  rate('cas_misses', 'Compare-and-swap operations on keys that do not exist.'),
  rate('cmd_get', 'Get operations.'),
  rate('cmd_set', 'Set operations.'),
  rate('evictions', 'Items evicted (memcached buckets).'),
  rate('ops', 'All operations: gets, sets, incr/decr, deletes and XDCR metadata operations.'),
  bytesRate('bytes_read', 'read_bytes_per_second', 'Bytes received from clients.'),
  bytesRate('bytes_written', 'written_bytes_per_second', 'Bytes sent to clients.'),
  level('curr_items', 'Items in active vBuckets (the bucket\'s item count).'),
  level('curr_items_tot', 'Items in active, replica and pending vBuckets.'),
  level('curr_connections', 'Client connections open to the bucket.'),
  bytes('mem_used', 'Memory used by the bucket.'),
  secsMean('avg_bg_wait_time', 'avg_bg_wait_seconds', 1e-6, 'bg_wait_count', `bg_wait_total / bg_wait_count, µs (${MENELAUS})`, 'Average wait for a background fetch from disk (Couchbase reports microseconds).'),
  secsMean('avg_disk_commit_time', 'avg_disk_commit_seconds', 1, 'disk_commit_count', `disk_commit_total / disk_commit_count / 1000000, s (${MENELAUS})`, 'Average disk commit time.'),
  secsMean('avg_disk_update_time', 'avg_disk_update_seconds', 1e-6, 'disk_update_count', `disk_update_total / disk_update_count, µs (${MENELAUS})`, 'Average disk update time (Couchbase reports microseconds).'),
  rate('bg_wait_count', 'Background fetches waited for.', 'bg_waits_per_second'),
  secsRate('bg_wait_total', 'bg_wait_seconds_per_second', 1e-6, 'Time spent waiting for background fetches (Couchbase reports microseconds).'),
  bytes('couch_total_disk_size', 'Disk space used by data and view files.'),
  pct('couch_docs_fragmentation', 'Fragmentation of the data files.'),
  pct('couch_views_fragmentation', 'Fragmentation of the view index files.'),
  bytes('couch_docs_actual_disk_size', 'Disk space used by the data files.'),
  bytes('couch_docs_data_size', 'Live data in the data files.'),
  bytes('couch_docs_disk_size', 'Size of the data files.'),
  bytes('couch_views_actual_disk_size', 'Disk space used by view index files.'),
  bytes('couch_views_data_size', 'Live data in the view index files.'),
  bytes('couch_views_disk_size', 'Size of the view index files.'),
  rate('couch_views_ops', 'View reads.'),
  ...tapStats(),
  level('replication_active_vbreps', 'Active vBucket replicators of outgoing XDCR replications (pre-4.0 XDCR totals).'),
  bytesRate('replication_bandwidth_usage', 'replication_bandwidth_usage_bytes_per_second', 'Bandwidth used by outgoing XDCR replications.'),
  level('replication_changes_left', 'Mutations still to replicate by outgoing XDCR replications.'),
  secs('replication_commit_time', 'replication_commit_time_seconds', 1, 'Time XDCR vBucket replicators spent committing and checkpointing.'),
  bytesTotal('replication_data_replicated', 'Bytes replicated by outgoing XDCR replications.'),
  total('replication_docs_checked', 'Mutations checked by outgoing XDCR replications.'),
  secs('replication_docs_latency_aggr', 'replication_docs_latency_aggr_seconds', 0.001, 'Aggregate document replication latency of XDCR (Couchbase reports milliseconds); divide by replication_docs_latency_wt for the mean.'),
  level('replication_docs_latency_wt', 'Weight (documents) of the aggregate XDCR document latency.'),
  level('replication_docs_rep_queue', 'Documents in the XDCR replication queue.'),
  total('replication_docs_written', 'Mutations written to the remote cluster by XDCR.'),
  secs('replication_meta_latency_aggr', 'replication_meta_latency_aggr_seconds', 0.001, 'Aggregate metadata latency of XDCR (Couchbase reports milliseconds); divide by replication_meta_latency_wt for the mean.'),
  level('replication_meta_latency_wt', 'Weight (operations) of the aggregate XDCR metadata latency.'),
  total('replication_num_checkpoints', 'Checkpoints issued by XDCR replications.'),
  total('replication_num_failedckpts', 'Checkpoints that failed in XDCR replications.'),
  rate('replication_rate_replication', 'Documents replicated by XDCR.'),
  bytes('replication_size_rep_queue', 'Size of the XDCR replication queue.'),
  level('replication_waiting_vbreps', 'vBucket replicators of XDCR waiting to run.'),
  secs('replication_work_time', 'replication_work_time_seconds', 1, 'Time XDCR vBucket replicators spent checking and writing.'),
];

/** Names that are not in the reference but appear in real captures (4.6 to 7.x): system stats, DCP, HLC drift. */
const OBSERVED: Def[] = [
  level('allocstall', 'Memory allocation stalls counted by the kernel, as reported (Couchbase\'s 18446744073709551615, "unavailable", is never exported).'),
  secsMean('avg_active_timestamp_drift', 'avg_active_timestamp_drift_seconds', 1, 'ep_active_hlc_drift_count', `ep_active_hlc_drift / 1000000 / ep_active_hlc_drift_count, s (${MENELAUS})`, 'Average drift between mutation timestamps (HLC) and local time on active vBuckets.'),
  secsMean('avg_replica_timestamp_drift', 'avg_replica_timestamp_drift_seconds', 1, 'ep_replica_hlc_drift_count', `ep_replica_hlc_drift / 1000000 / ep_replica_hlc_drift_count, s (${MENELAUS})`, 'Average drift between mutation timestamps (HLC) and local time on replica vBuckets.'),
  rate('cmd_lookup', 'Sub-document lookup operations.'),
  bytes('couch_spatial_data_size', 'Live data in the spatial index files.'),
  bytes('couch_spatial_disk_size', 'Size of the spatial index files.'),
  rate('couch_spatial_ops', 'Spatial view reads.'),
  level('cpu_cores_available', 'CPU cores available to Couchbase.'),
  secsRate('cpu_idle_ms', 'cpu_idle_seconds_per_second', 0.001, 'Idle CPU time over all cores (Couchbase reports milliseconds per sample).'),
  secsRate('cpu_local_ms', 'cpu_local_seconds_per_second', 0.001, 'Elapsed CPU time over all cores (Couchbase reports milliseconds per sample).'),
  pctMean('cpu_irq_rate', 'Share of CPU time spent serving interrupts.', `100 × irq ms / total ms of the sample period (${SYSTEM_STATS_65})`),
  pctMean('cpu_stolen_rate', 'Share of CPU time stolen by the hypervisor.', `100 × stolen ms / total ms of the sample period (${SYSTEM_STATS_65})`),
  pctMean('cpu_sys_rate', 'Share of CPU time spent in the kernel.', `100 × sys ms / total ms of the sample period (${SYSTEM_STATS_65})`),
  pctMean('cpu_user_rate', 'Share of CPU time spent in user space.', `100 × user ms / total ms of the sample period (${SYSTEM_STATS_65})`),
  pctMean('cpu_utilization_rate', 'CPU utilisation.', `100 × (cpu_local_ms − cpu_idle_ms) / cpu_local_ms (${SYSTEM_STATS}; 6.5+: (total − idle) / total, ${SYSTEM_STATS_65})`, 'cpu_local_ms'),
  rate('ep_active_ahead_exceptions', 'Mutations on active vBuckets whose timestamp was ahead of the drift threshold.'),
  rate('ep_replica_ahead_exceptions', 'Mutations on replica vBuckets whose timestamp was ahead of the drift threshold.'),
  secsRate('ep_active_hlc_drift', 'ep_active_hlc_drift_seconds_per_second', 1e-6, 'Accumulated HLC drift on active vBuckets (Couchbase reports microseconds).'),
  rate('ep_active_hlc_drift_count', 'Drift measurements on active vBuckets.'),
  secsRate('ep_replica_hlc_drift', 'ep_replica_hlc_drift_seconds_per_second', 1e-6, 'Accumulated HLC drift on replica vBuckets (Couchbase reports microseconds).'),
  rate('ep_replica_hlc_drift_count', 'Drift measurements on replica vBuckets.'),
  total('ep_clock_cas_drift_threshold_exceeded', 'Mutations whose CAS drift exceeded the threshold, since the bucket started.'),
  total('ep_data_read_failed', 'Disk read failures since the bucket started.'),
  total('ep_data_write_failed', 'Disk write failures since the bucket started.'),
  ...dcpStats(),
  bytes('ep_max_size', 'Memory quota of the bucket on the node(s).'),
  level('hibernated_requests', 'Idle streaming requests on the management port.'),
  rate('hibernated_waked', 'Wake-ups of streaming requests on the management port.'),
  rate('rest_requests', 'HTTP requests on the management port.'),
  bytes('mem_actual_free', 'Free memory of the host(s), without caches.'),
  bytes('mem_actual_used', 'Used memory of the host(s), without caches.'),
  bytes('mem_free', 'Free memory of the host(s).'),
  bytes('mem_limit', 'Memory limit of the host(s) or container.'),
  bytes('mem_total', 'Total memory of the host(s).'),
  bytes('mem_used_sys', 'Used memory of the host(s).'),
  bytes('swap_total', 'Swap space of the host(s).'),
  bytes('swap_used', 'Swap space in use.'),
  level('odp_report_failed', 'Failed on-demand pricing reports (Capella).'),
  rate('vb_active_sync_write_accepted_count', 'Durable (synchronous) writes accepted on active vBuckets.', 'vb_active_sync_write_accepted_per_second'),
  rate('vb_active_sync_write_committed_count', 'Durable (synchronous) writes committed on active vBuckets.', 'vb_active_sync_write_committed_per_second'),
  rate('vb_active_sync_write_aborted_count', 'Durable (synchronous) writes aborted on active vBuckets.', 'vb_active_sync_write_aborted_per_second'),
  level('vb_total_queue_size', 'Items in the disk-write queues of all vBuckets.'),
];

const UNIT_WORDS: Record<string, string> = {
  bytes: 'bytes',
  seconds: 'seconds',
  ratio: 'ratio 0-1',
  count: 'count',
  per_second: 'per second',
  bytes_per_second: 'bytes per second',
  seconds_per_second: 'seconds per second',
};

function conversion(s: Def): string {
  if (s.unit === 'ratio') return 'percent / 100';
  if (s.scale === 1e-6) return 'µs converted to seconds';
  if (s.scale === 0.001) return 'ms converted to seconds';
  return 'as reported';
}

export const BUCKET_STAT_CATALOG: readonly StatSpec[] = Object.freeze([
  ...REFERENCE.map((d) => Object.freeze({ ...d, reference: true })),
  ...OBSERVED.map((d) => Object.freeze({ ...d, reference: false })),
]);

const BY_STAT = new Map(BUCKET_STAT_CATALOG.map((s) => [s.stat, s] as const));

export function statSpec(stat: string): StatSpec | undefined {
  return BY_STAT.get(stat);
}

/** How a stat's samples become its value, in words (help texts, docs/metrics.md). */
export function windowRule(s: Pick<StatSpec, 'kind' | 'weight'>): string {
  switch (s.kind) {
    case 'rate':
      return 'mean of the samples since the previous poll';
    case 'mean':
      return s.weight === undefined
        ? 'mean of the samples since the previous poll'
        : `mean of the samples since the previous poll, weighted by ${s.weight} where the envelope has it; absent when ${s.weight} is 0 over them`;
    case 'cumulative':
      return 'latest sample of a cumulative count';
    default:
      return 'latest sample';
  }
}

function helpOf(s: StatSpec, perNode: boolean): string {
  const how = windowRule(s);
  const where = perNode ? ' Per node (/nodes/{node}/stats).' : '';
  return `${s.description} Unit: ${UNIT_WORDS[s.unit] ?? s.unit}. Couchbase stat ${s.stat} (${conversion(s)}; ${how}).${where}`;
}

function familyType(s: StatSpec): 'gauge' | 'counter' {
  return s.kind === 'cumulative' ? 'counter' : 'gauge';
}

export interface StatFamilies {
  readonly spec: StatSpec;
  readonly bucket: FamilyDef;
  readonly node: FamilyDef;
}

/** Families per stat name: `couchbase_bucket_<metric>{bucket}` and `couchbase_bucket_node_<metric>{bucket,node}`. */
export const STAT_FAMILIES: ReadonlyMap<string, StatFamilies> = new Map(
  BUCKET_STAT_CATALOG.map((s) => [
    s.stat,
    {
      spec: s,
      bucket: defineFamily(BUCKET_STATS_COLLECTOR, `couchbase_bucket_${s.metric}`, familyType(s), helpOf(s, false), ['bucket'], s.unit),
      node: defineFamily(BUCKET_STATS_COLLECTOR, `couchbase_bucket_node_${s.metric}`, familyType(s), helpOf(s, true), ['bucket', 'node'], s.unit),
    },
  ]),
);

export const HOT_KEY_FAMILY = defineFamily(
  BUCKET_STATS_COLLECTOR,
  'couchbase_bucket_hot_key_ops_per_second',
  'gauge',
  'Operations per second on the busiest document keys of the bucket (hot_keys of the stats envelope). Off by default: label values are document keys; the top N per bucket come from the hot_keys option.',
  ['bucket', 'key'],
  'per_second',
);

/** Suffixes Prometheus reserves for counters, histograms and summaries; an unknown gauge must not end with one. */
const RESERVED_SUFFIX = /_(total|count|sum|bucket|created)$/;

/** The family-name part for a stat cbwatch does not know: sanitised, never ending in a reserved suffix. */
export function unknownMetricName(stat: string): string {
  let m = sanitizeName(stat).replace(/^_+|_+$/g, '').toLowerCase();
  if (m === '') m = 'unnamed';
  if (/^[0-9]/.test(m)) m = `_${m}`;
  // A stat name from Couchbase can be any length: cut (with a hash) before the suffix rule, which it may change.
  m = capNamePart(m);
  if (RESERVED_SUFFIX.test(m)) m = `${m}_value`;
  return m;
}

export function unknownHelp(stat: string, perNode: boolean): string {
  const short = stat.length > MAX_DYNAMIC_NAME_LENGTH ? `${stat.slice(0, MAX_DYNAMIC_NAME_LENGTH)}…` : stat;
  const safe = short.replace(/[\\\n]/g, ' ');
  return `Couchbase bucket stat ${safe} as reported; unit unknown (not in cbwatch's catalog; latest sample).${perNode ? ' Per node (/nodes/{node}/stats).' : ''}`;
}
