/**
 * Collector `buckets`: which buckets exist and their settings, quota and basic stats, from
 * GET /pools/default/buckets (one request per poll, shared with `bucket_stats`).
 *
 * `bucket_type` keeps Couchbase's own value: `membase` (what the UI calls a Couchbase bucket), `memcached`,
 * `ephemeral`, and `couchbase` in Membase 1.6-era answers. Mapping `membase` to `couchbase` would be
 * friendlier but would make the label disagree with every REST answer and log line an operator compares it to.
 *
 * The names here carry a `basic_`, `quota_` or `settings_` part so they never meet the per-stat families of
 * `bucket_stats` (`couchbase_bucket_<stat>`): `basicStats.memUsed` and the `mem_used` stat are different
 * readings (the former is a cluster-wide snapshot, the latter the sampled envelope).
 */
import { BUCKETS_ROUTE, fetchBucketList } from '../couchbase/buckets.js';
import { CbwError } from '../errors.js';
import { ItemTally } from './helpers.js';
import type { BucketEntry } from '../couchbase/buckets.js';
import { defineFamily } from '../metrics/family.js';
import type { SampleSet } from '../metrics/family.js';
import type { Collector } from './types.js';

const C = 'buckets';
const B = ['bucket'] as const;

export const bucketFamilies = {
  info: defineFamily(C, 'couchbase_bucket_info', 'gauge', 'Bucket exists (always 1); bucket_type is Couchbase\'s own value: membase (a Couchbase bucket), memcached, ephemeral, or couchbase on 1.x servers.', ['bucket', 'bucket_type'], 'info'),
  settings: defineFamily(
    C,
    'couchbase_bucket_settings_info',
    'gauge',
    'Bucket settings as labels (always 1); an empty value means the server does not report that setting.',
    ['bucket', 'eviction_policy', 'conflict_resolution_type', 'durability_min_level', 'storage_backend', 'compression_mode'],
    'info',
  ),
  count: defineFamily(C, 'couchbase_buckets', 'gauge', 'Number of buckets in the cluster.', [], 'count'),
  quotaRam: defineFamily(C, 'couchbase_bucket_quota_ram_bytes', 'gauge', 'RAM quota of the bucket over the whole cluster (quota.ram).', B, 'bytes'),
  quotaRawRam: defineFamily(C, 'couchbase_bucket_quota_raw_ram_bytes', 'gauge', 'RAM quota of the bucket per node (quota.rawRAM).', B, 'bytes'),
  quotaUsed: defineFamily(C, 'couchbase_bucket_quota_used_ratio', 'gauge', 'Share of the RAM quota in use, 0-1 (basicStats.quotaPercentUsed / 100).', B, 'ratio'),
  ops: defineFamily(C, 'couchbase_bucket_basic_ops_per_second', 'gauge', 'Operations per second over the last few seconds (basicStats.opsPerSec).', B, 'per_second'),
  diskFetches: defineFamily(C, 'couchbase_bucket_basic_disk_fetches_per_second', 'gauge', 'Background fetches from disk per second (basicStats.diskFetches).', B, 'per_second'),
  items: defineFamily(C, 'couchbase_bucket_basic_items', 'gauge', 'Items in the bucket, active copies only (basicStats.itemCount).', B, 'count'),
  diskUsed: defineFamily(C, 'couchbase_bucket_basic_disk_used_bytes', 'gauge', 'Disk space used by the bucket, data and views (basicStats.diskUsed).', B, 'bytes'),
  dataUsed: defineFamily(C, 'couchbase_bucket_basic_data_used_bytes', 'gauge', 'Disk space used by the bucket\'s data files (basicStats.dataUsed).', B, 'bytes'),
  memUsed: defineFamily(C, 'couchbase_bucket_basic_mem_used_bytes', 'gauge', 'Memory used by the bucket (basicStats.memUsed).', B, 'bytes'),
  nonResident: defineFamily(C, 'couchbase_bucket_basic_active_non_resident_items', 'gauge', 'Active items whose value is not resident in memory (basicStats.vbActiveNumNonResident).', B, 'count'),
  hitRatio: defineFamily(C, 'couchbase_bucket_basic_hit_ratio', 'gauge', 'Get hit ratio of a memcached bucket as reported by basicStats.hitRatio (1.x servers).', B, 'ratio'),
  replicas: defineFamily(C, 'couchbase_bucket_replicas', 'gauge', 'Configured number of replicas (replicaNumber).', B, 'count'),
  replicasAvailable: defineFamily(
    C,
    'couchbase_bucket_replicas_available',
    'gauge',
    'Replicas every vBucket of the bucket has now: the fewest replica copies any row of vBucketServerMap.vBucketMap places on a server (entries after the first that are not -1). Below couchbase_bucket_replicas when the nodes cannot hold the configured replicas (one node with replicas configured) or after a failover until a rebalance.',
    B,
    'count',
  ),
  vbucketsMissingReplicas: defineFamily(
    C,
    'couchbase_bucket_vbuckets_missing_replicas',
    'gauge',
    'vBuckets of the bucket with fewer replica copies in vBucketServerMap.vBucketMap than its replicaNumber.',
    B,
    'count',
  ),
  flush: defineFamily(C, 'couchbase_bucket_flush_enabled', 'gauge', '1 when the bucket can be flushed (controllers.flush, or flushCacheUri on 1.x servers), else 0.', B, 'bool'),
  maxTtl: defineFamily(C, 'couchbase_bucket_max_ttl_seconds', 'gauge', 'Maximum document time-to-live, 0 for none (maxTTL).', B, 'seconds'),
  vbuckets: defineFamily(C, 'couchbase_bucket_vbuckets', 'gauge', 'Number of vBuckets of the bucket (numVBuckets, 7.6 and later).', B, 'count'),
} as const;

/** The flush setting, or undefined when the answer does not say (trimmed captures have no controllers). */
export function flushEnabled(b: BucketEntry): boolean | undefined {
  if (b.controllers !== undefined) return 'flush' in b.controllers || b.flushCacheUri !== undefined;
  if (b.flushCacheUri !== undefined) return true;
  return undefined;
}

/** Pure mapping of the bucket list to samples. */
export function mapBuckets(list: readonly BucketEntry[], out: SampleSet): void {
  const f = bucketFamilies;
  out.add(f.count, {}, list.length);
  for (const b of list) {
    const l = { bucket: b.name };
    if (b.bucketType !== undefined) out.add(f.info, { bucket: b.name, bucket_type: b.bucketType }, 1);
    if (b.evictionPolicy !== undefined || b.conflictResolutionType !== undefined || b.durabilityMinLevel !== undefined || b.storageBackend !== undefined || b.compressionMode !== undefined) {
      out.add(
        f.settings,
        {
          bucket: b.name,
          eviction_policy: b.evictionPolicy ?? '',
          conflict_resolution_type: b.conflictResolutionType ?? '',
          durability_min_level: b.durabilityMinLevel ?? '',
          storage_backend: b.storageBackend ?? '',
          compression_mode: b.compressionMode ?? '',
        },
        1,
      );
    }
    out.add(f.quotaRam, l, b.quota?.ram);
    out.add(f.quotaRawRam, l, b.quota?.rawRAM);
    const s = b.basicStats;
    if (s) {
      const pct = s.quotaPercentUsed;
      out.add(f.quotaUsed, l, pct === null || pct === undefined ? undefined : pct / 100);
      out.add(f.ops, l, s.opsPerSec);
      out.add(f.diskFetches, l, s.diskFetches);
      out.add(f.items, l, s.itemCount);
      out.add(f.diskUsed, l, s.diskUsed);
      out.add(f.dataUsed, l, s.dataUsed);
      out.add(f.memUsed, l, s.memUsed);
      out.add(f.nonResident, l, s.vbActiveNumNonResident);
      out.add(f.hitRatio, l, s.hitRatio);
    }
    out.add(f.replicas, l, b.replicaNumber);
    if (b.replicaCopies !== undefined) {
      out.add(f.replicasAvailable, l, b.replicaCopies.min);
      out.add(f.vbucketsMissingReplicas, l, b.replicaCopies.missing);
    }
    out.add(f.flush, l, flushEnabled(b));
    out.add(f.maxTtl, l, b.maxTTL);
    out.add(f.vbuckets, l, b.numVBuckets);
  }
}

export const bucketsCollector: Collector<'buckets'> = {
  name: 'buckets',
  defaultInterval: 30_000,
  families: Object.values(bucketFamilies),
  role: 'Read-Only Admin (ro_admin); a bucket-scoped role sees only its buckets',
  description: 'Every bucket: type, settings, RAM quota, basic stats, replicas, flush enabled.',
  async collect(ctx) {
    // The list is the poll's request; each entry is an item: one that does not parse is counted and left out.
    const { buckets, invalid, invalidCount } = await fetchBucketList(ctx);
    const tally = new ItemTally(ctx);
    // The entries past the first few described are counted first, so that a poll all of whose entries fail
    // gives a described one as its reason.
    const rest = invalidCount - invalid.length;
    if (rest > 0) tally.failed(`${rest} more bucket entries`, new CbwError('CBW_ERR_SCHEMA', `GET ${BUCKETS_ROUTE}: ${rest} more entries do not parse`), rest);
    for (const bad of invalid) {
      const item = `bucket ${bad.name !== undefined ? bad.name.slice(0, 100) : `#${bad.index}`}`;
      tally.failed(item, new CbwError('CBW_ERR_SCHEMA', `GET ${BUCKETS_ROUTE}: ${item}: ${bad.message}${rest > 0 ? ` (and ${invalidCount - 1} more entries do not parse)` : ''}`));
    }
    for (const b of buckets) tally.ok(b.name);
    mapBuckets(buckets, ctx.out);
    tally.settle();
  },
};
