/**
 * The landing page's items for the services (query, index, Search, eventing) and the data service's health alerts:
 * each is the early sign of one alert of alerts/cbwatch.rules.yml, at that alert's default threshold
 * (alerts/parameters.yml) and without its `for:` duration or its growth condition. Counters that Couchbase keeps
 * as running totals (OOM errors, write failures, eventing failures) are shown while their total is above 0.
 */

export type ItemRow = { readonly cluster: string; readonly labels: Readonly<Record<string, string>>; readonly value: number };
type Severity = 'critical' | 'warning' | 'info';
type Add = (cluster: string, severity: Severity, text: string, alert: string) => void;

/** The alerts' default thresholds (alerts/parameters.yml). */
const QUERY_ERROR_SHARE = 0.05;
const QUERY_SLOW_SHARE = 0.1;
const QUERY_QUEUED = 10;
const INDEX_PENDING = 100_000;
const INDEX_RESIDENT_LOW = 0.1;
const INDEX_RAM_HIGH = 0.9;
const SEARCH_PENDING = 1000;
const EVENTING_BACKLOG = 1000;
const FRAGMENTATION_HIGH = 0.6;
const FRAGMENTATION_MIN_BYTES = 1024 ** 3;
const CACHE_MISS_HIGH = 0.1;
const CACHE_MISS_MIN_GETS = 50;
const RESIDENT_LOW = 0.3;

const pct = (v: number): string => `${Math.round(v * 100)}%`;

/** Series key without `drop` labels: joins two families of one item. */
function keyOf(r: ItemRow, drop: readonly string[] = []): string {
  const parts = Object.entries(r.labels)
    .filter(([k]) => !drop.includes(k))
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([k, v]) => `${k}=${v}`);
  return `${r.cluster}\u0000${parts.join('\u0000')}`;
}

function byKey(list: readonly ItemRow[], drop: readonly string[] = []): Map<string, number> {
  return new Map(list.map((r) => [keyOf(r, drop), r.value]));
}

function indexName(l: Readonly<Record<string, string>>): string {
  return `index ${l.index} on ${l.bucket}.${l.scope}.${l.collection}${l.node === undefined ? '' : ` (node ${l.node})`}`;
}

export function serviceProblems(rows: (family: string) => ItemRow[], add: Add): void {
  // Query, per query node.
  const requests = byKey(rows('couchbase_query_requests_per_second'));
  for (const r of rows('couchbase_query_errors_per_second')) {
    const total = requests.get(keyOf(r));
    if (total !== undefined && total > 0 && r.value / total > QUERY_ERROR_SHARE) add(r.cluster, 'warning', `query node ${r.labels.node}: ${pct(r.value / total)} of requests fail`, 'CouchbaseQueryErrorRateHigh');
  }
  for (const r of rows('couchbase_query_slow_requests_per_second')) {
    if (r.labels.over !== '5') continue;
    const total = requests.get(keyOf(r, ['over']));
    if (total !== undefined && total > 0 && r.value / total > QUERY_SLOW_SHARE) add(r.cluster, 'warning', `query node ${r.labels.node}: ${pct(r.value / total)} of requests take over 5 s`, 'CouchbaseQuerySlowRequests');
  }
  for (const r of rows('couchbase_query_queued_requests'))
    if (r.value > QUERY_QUEUED) add(r.cluster, 'warning', `query node ${r.labels.node}: ${r.value} requests queued`, 'CouchbaseQueryQueuedRequestsHigh');

  // Index statistics.
  for (const r of rows('couchbase_index_docs_pending'))
    if (r.value > INDEX_PENDING) add(r.cluster, 'warning', `${indexName(r.labels)}: ${r.value} mutations pending`, 'CouchbaseIndexPendingMutationsHigh');
  const items = byKey(rows('couchbase_index_items'));
  for (const r of rows('couchbase_index_resident_ratio'))
    if (r.value < INDEX_RESIDENT_LOW && (items.get(keyOf(r)) ?? 0) > 0) add(r.cluster, 'warning', `${indexName(r.labels)}: ${pct(r.value)} resident in memory`, 'CouchbaseIndexResidentRatioLow');
  for (const r of rows('couchbase_index_node_ram_ratio'))
    if (r.value > INDEX_RAM_HIGH) add(r.cluster, 'warning', `index node ${r.labels.node} uses ${pct(r.value)} of the Index memory quota`, 'CouchbaseIndexMemoryNearQuota');

  // Search: pending mutations summed over the nodes holding the index's partitions.
  const pending = new Map<string, { r: ItemRow; sum: number }>();
  for (const r of rows('couchbase_search_index_pending_mutations')) {
    const k = keyOf(r, ['node']);
    const got = pending.get(k);
    pending.set(k, { r, sum: (got?.sum ?? 0) + r.value });
  }
  for (const { r, sum } of pending.values())
    if (sum > SEARCH_PENDING) add(r.cluster, 'warning', `search index ${r.labels.index} (bucket ${r.labels.bucket}): ${sum} mutations pending`, 'CouchbaseSearchIndexPendingMutationsGrowing');

  // Eventing statistics, per function.
  for (const r of rows('couchbase_eventing_dcp_backlog'))
    if (r.value > EVENTING_BACKLOG) add(r.cluster, 'warning', `eventing function ${r.labels.function}: ${r.value} mutations in its backlog`, 'CouchbaseEventingBacklogGrowing');
  const failures = new Map<string, { r: ItemRow; sum: number }>();
  for (const family of ['couchbase_eventing_on_update_failures_total', 'couchbase_eventing_on_delete_failures_total', 'couchbase_eventing_timeouts_total'])
    for (const r of rows(family)) {
      const k = keyOf(r);
      failures.set(k, { r, sum: (failures.get(k)?.sum ?? 0) + r.value });
    }
  for (const { r, sum } of failures.values())
    if (sum > 0) add(r.cluster, 'warning', `eventing function ${r.labels.function}: ${sum} failures and timeouts since it was deployed`, 'CouchbaseEventingFailuresIncreasing');

  // The data service.
  for (const r of rows('couchbase_bucket_ep_oom_errors_total'))
    if (r.value > 0) add(r.cluster, 'critical', `bucket ${r.labels.bucket}: ${r.value} hard out-of-memory errors since the node started`, 'CouchbaseBucketHardOomErrors');
  for (const r of rows('couchbase_bucket_ep_tmp_oom_errors_per_second'))
    if (r.value > 0) add(r.cluster, 'warning', `bucket ${r.labels.bucket}: ${r.value} temporary out-of-memory errors per second`, 'CouchbaseBucketTemporaryOomErrors');
  const diskSize = byKey(rows('couchbase_bucket_couch_docs_actual_disk_size_bytes'));
  for (const r of rows('couchbase_bucket_couch_docs_fragmentation_ratio'))
    if (r.value > FRAGMENTATION_HIGH && (diskSize.get(keyOf(r)) ?? 0) > FRAGMENTATION_MIN_BYTES) add(r.cluster, 'warning', `bucket ${r.labels.bucket}: data files ${pct(r.value)} fragmented`, 'CouchbaseBucketFragmentationHigh');
  const gets = byKey(rows('couchbase_bucket_cmd_get_per_second'));
  for (const r of rows('couchbase_bucket_ep_cache_miss_ratio'))
    if (r.value > CACHE_MISS_HIGH && (gets.get(keyOf(r)) ?? 0) > CACHE_MISS_MIN_GETS) add(r.cluster, 'warning', `bucket ${r.labels.bucket}: ${pct(r.value)} of gets miss the cache`, 'CouchbaseBucketCacheMissRatioHigh');
  const ejects = byKey(rows('couchbase_bucket_ep_num_value_ejects_per_second'));
  for (const r of rows('couchbase_bucket_vb_active_resident_items_ratio'))
    if (r.value < RESIDENT_LOW && (ejects.get(keyOf(r)) ?? 0) > 0) add(r.cluster, 'warning', `bucket ${r.labels.bucket}: ejecting values with ${pct(r.value)} of active items resident`, 'CouchbaseBucketEvictingWithLowResidency');
  for (const family of ['couchbase_bucket_ep_data_write_failed_total', 'couchbase_bucket_ep_item_commit_failed_total'])
    for (const r of rows(family))
      if (r.value > 0) add(r.cluster, 'critical', `bucket ${r.labels.bucket}: ${r.value} ${family.includes('commit') ? 'commit' : 'data write'} failures since the node started`, 'CouchbaseBucketDiskWriteFailures');
}
