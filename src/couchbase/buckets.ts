/**
 * GET /pools/default/buckets (the bucket list) and GET /pools/default/buckets/{bucket}/stats (the stats
 * envelope), shared by the `buckets` and `bucket_stats` collectors: one list fetch per cluster serves both
 * when their polls meet (the shared cache keeps a result for 5 s and merges concurrent calls).
 *
 * Schemas are loose and nearly every field is optional: the list has changed shape since Membase 1.6
 * (`bucketType: couchbase`, no `controllers`, `flushCacheUri`) and trimmed captures omit whole objects.
 * The list also carries `saslPassword`, which is deliberately not part of the schema so it never travels
 * inward (looseObject keeps unknown keys, so it is stripped below in `bucketEntrySchema`'s transform).
 */
import { z } from 'zod';
import { checkedArray, uncheckedArray, uncheckedRecord } from './unchecked.js';
import { parseEach } from './source.js';
import type { ClusterSource, InvalidEntry } from './source.js';

const num = z.number().nullable().optional();

export const basicStatsSchema = z.looseObject({
  quotaPercentUsed: num,
  opsPerSec: num,
  diskFetches: num,
  itemCount: num,
  diskUsed: num,
  dataUsed: num,
  memUsed: num,
  vbActiveNumNonResident: num,
  /** Memcached buckets of Membase 1.6. */
  hitRatio: num,
});

export const bucketNodeSchema = z.looseObject({
  hostname: z.string().optional(),
  status: z.string().optional(),
  clusterMembership: z.string().optional(),
  thisNode: z.boolean().optional(),
});

export const bucketEntrySchema = z
  .looseObject({
    name: z.string().min(1),
    uuid: z.string().optional(),
    bucketType: z.string().optional(),
    storageBackend: z.string().optional(),
    evictionPolicy: z.string().optional(),
    conflictResolutionType: z.string().optional(),
    durabilityMinLevel: z.string().optional(),
    compressionMode: z.string().optional(),
    replicaNumber: z.number().optional(),
    maxTTL: z.number().optional(),
    numVBuckets: z.number().optional(),
    quota: z.looseObject({ ram: num, rawRAM: num }).optional(),
    basicStats: basicStatsSchema.optional(),
    controllers: uncheckedRecord().optional(),
    /** Membase 1.6 / Couchbase 1.8: flush offered through this URI instead of `controllers.flush`. */
    flushCacheUri: z.string().optional(),
    nodes: checkedArray(bucketNodeSchema).optional(),
  })
  .transform(({ saslPassword: _secret, vBucketServerMap: map, replicaCopies: _notOurs, ...rest }) => {
    const out: typeof rest & { replicaCopies?: ReplicaCopies } = rest;
    const replicaCopies = replicaCopiesOf(map, rest.replicaNumber);
    if (replicaCopies !== undefined) out.replicaCopies = replicaCopies;
    return out;
  });

/** What the vBucket map places for a bucket's replicas (the map itself, 1,024 rows, is not kept). */
export interface ReplicaCopies {
  /** The fewest replica copies any vBucket has: the replicas the bucket can count on now. */
  readonly min: number;
  /** The most replica copies any vBucket has. */
  readonly max: number;
  readonly vbuckets: number;
  /** vBuckets with fewer replica copies than `replicaNumber` (undefined without one). */
  readonly missing: number | undefined;
}

/**
 * Replica copies from `vBucketServerMap.vBucketMap`: one row per vBucket, the active copy's server index
 * first, then one per replica, -1 where no server holds that copy (a one-node cluster with replicas
 * configured answers `[0,-1]` for every vBucket). Undefined when the answer has no usable map (memcached
 * buckets, trimmed captures).
 */
export function replicaCopiesOf(map: unknown, replicaNumber: number | undefined): ReplicaCopies | undefined {
  const rows = (map as { vBucketMap?: unknown } | null | undefined)?.vBucketMap;
  if (!Array.isArray(rows) || rows.length === 0) return undefined;
  let min = Infinity;
  let max = 0;
  let missing = 0;
  for (const row of rows) {
    if (!Array.isArray(row)) return undefined;
    let copies = 0;
    for (let i = 1; i < row.length; i++) {
      const server = row[i];
      if (typeof server !== 'number') return undefined;
      if (server >= 0) copies++;
    }
    min = Math.min(min, copies);
    max = Math.max(max, copies);
    if (replicaNumber !== undefined && copies < replicaNumber) missing++;
  }
  return { min, max, vbuckets: rows.length, missing: replicaNumber === undefined ? undefined : missing };
}

/** Every entry valid: what the simulator's answers are held to (schema-conformance test). */
export const bucketListSchema = checkedArray(bucketEntrySchema);
/** The list as fetched: entries are checked one by one, so one odd bucket does not cost every bucket. */
const rawBucketListSchema = uncheckedArray();
export type BucketEntry = z.output<typeof bucketEntrySchema>;

export const BUCKETS_ROUTE = '/pools/default/buckets';
export const BUCKET_STATS_ROUTE = '/pools/default/buckets/{bucket}/stats';
export const BUCKET_NODE_STATS_ROUTE = '/pools/default/buckets/{bucket}/nodes/{node}/stats';

export interface BucketList {
  readonly buckets: BucketEntry[];
  /** Entries that did not parse, the first few (the `buckets` collector counts them as item errors). */
  readonly invalid: readonly InvalidEntry[];
  /** How many entries did not parse in all. */
  readonly invalidCount: number;
}

export function parseBucketList(raw: readonly unknown[]): BucketList {
  const { ok, invalid, invalidCount } = parseEach(raw, bucketEntrySchema, 'name');
  return { buckets: ok, invalid, invalidCount };
}

/** The bucket list with its unparseable entries, fetched at most once per 5 s per cluster for every collector that needs it. */
export function fetchBucketList(src: ClusterSource): Promise<BucketList> {
  return src.shared.get('buckets', 5_000, async () => parseBucketList(await src.client.getJson(BUCKETS_ROUTE, {}, rawBucketListSchema)));
}

/** The entries of the bucket list that parse (the `buckets` collector counts the others as item errors). */
export async function fetchBuckets(src: ClusterSource): Promise<BucketEntry[]> {
  return (await fetchBucketList(src)).buckets;
}

/**
 * The stats envelope. `samples` maps each stat name to an array of numbers (null for a sample that lacks
 * the stat), plus `timestamp`. Values are left `unknown` here: the mapper checks each array itself so one
 * odd stat is skipped instead of failing the whole bucket, and a 100-bucket poll does not pay for a deep
 * zod walk over ~20k numbers per bucket.
 */
export const statsEnvelopeSchema = z.looseObject({
  op: z.looseObject({
    samples: uncheckedRecord(),
    samplesCount: z.number().optional(),
    isPersistent: z.boolean().optional(),
    lastTStamp: z.number().optional(),
    interval: z.number().optional(),
  }),
  hot_keys: uncheckedArray().optional(),
  hostname: z.string().optional(),
});

export type StatsEnvelope = z.output<typeof statsEnvelopeSchema>;
