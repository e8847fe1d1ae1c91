/**
 * The range source's answer as the envelopes the collectors read: per bucket (and per bucket and node) a stats
 * envelope, per replication and XDCR stat an XDCR stat envelope, each with ONE sample (the value of this poll, in
 * the legacy stat's unit) at the newest point's time. The collectors' mappers then apply their rules unchanged:
 * a level is that value, a rate is "the mean of the samples since the previous poll" = that one exact rate, an
 * answer whose newest time did not move brings no rate, the catalog's unit scale, per-item isolation.
 */
import type { StatsEnvelope } from '../couchbase/buckets.js';
import type { XdcrStatEnvelope } from '../couchbase/xdcr.js';
import type { CollectContext } from '../collectors/types.js';
import { KV_NATIVE_MAP, XDCR_NATIVE_MAP, XDCR_ROW_BY_LEGACY } from './native-map.js';
import { fetchRange, kvItemOf, xdcrItemOf } from './range.js';
import { newestOf, rowValue } from './range-groups.js';
import type { RangeItems } from './range-groups.js';

/** Pure: the envelope of one bucket (over all nodes, or on `node`), undefined when the answer has nothing of it. */
export function bucketEnvelope(g: RangeItems, bucket: string, node: string | undefined): StatsEnvelope | undefined {
  const t = newestOf(g, bucket, node);
  if (t === undefined) return undefined;
  const samples: Record<string, unknown[]> = { timestamp: [t] };
  for (const row of KV_NATIVE_MAP) {
    const v = rowValue(row, g, bucket, node);
    samples[row.legacy] = [v ?? null];
  }
  return { op: { samples, lastTStamp: t } };
}

/** Pure: one XDCR stat of one replication, one sample per node; undefined when the stat has no native equivalent. */
export function xdcrStatEnvelope(g: RangeItems, replicationId: string, stat: string): XdcrStatEnvelope | undefined {
  const row = XDCR_ROW_BY_LEGACY.get(stat);
  if (row === undefined) return undefined;
  const cells = g.items.get(replicationId);
  const t = newestOf(g, replicationId, undefined);
  if (cells === undefined || t === undefined) return { timestamp: [], nodeStats: {} };
  const nodeStats: Record<string, unknown[]> = {};
  for (const node of cells.keys()) {
    const v = rowValue(row, g, replicationId, node);
    if (v !== undefined) nodeStats[node] = [v];
  }
  return { timestamp: [t], lastTStamp: t, nodeStats };
}

export interface BucketRange {
  envelope(bucket: string, node: string | undefined): StatsEnvelope | undefined;
  readonly requests: number;
}

export async function fetchBucketRange(ctx: CollectContext<'bucket_stats'>): Promise<BucketRange> {
  // Without per_node only the bucket-wide values are read: the levels' sums over the nodes are asked as such.
  const { groups, requests } = await fetchRange(ctx, KV_NATIVE_MAP, {}, kvItemOf, !ctx.options.per_node);
  return { envelope: (bucket, node) => bucketEnvelope(groups, bucket, node), requests };
}

export interface XdcrRange {
  /** Undefined for a stat with no native equivalent; an envelope without samples for a replication the answer lacks. */
  envelope(replicationId: string, stat: string): XdcrStatEnvelope | undefined;
  readonly requests: number;
}

export async function fetchXdcrRange(ctx: CollectContext<'xdcr'>): Promise<XdcrRange> {
  const { groups, requests } = await fetchRange(ctx, XDCR_NATIVE_MAP, { pipelineType: 'Main' }, xdcrItemOf);
  return { envelope: (id, stat) => xdcrStatEnvelope(groups, id, stat), requests };
}
