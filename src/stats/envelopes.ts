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
import { DEFAULT_LINE, KV_NATIVE_MAP, nativeMapFor, XDCR_ROW_BY_LEGACY } from './native-map.js';
import type { NativeMapRow, NativeTable } from './native-map.js';
import { mergedValue, nodeLinesOf, withRatioParts } from './node-lines.js';
import type { LineGroups } from './node-lines.js';
import { fetchRange, kvItemOf, RANGE_STATE_KEY, xdcrItemOf } from './range.js';
import type { RangeFetch } from './range.js';
import { newestOf, rowValue } from './range-groups.js';
import type { RangeItems } from './range-groups.js';
import type { CollectorName } from '../config/schema.js';

/** Pure: the envelope of one bucket (over all nodes, or on `node`), undefined when the answer has nothing of it. */
export function bucketEnvelope(g: RangeItems, bucket: string, node: string | undefined, rows: readonly NativeMapRow[] = KV_NATIVE_MAP): StatsEnvelope | undefined {
  const t = newestOf(g, bucket, node);
  if (t === undefined) return undefined;
  const samples: Record<string, unknown[]> = { timestamp: [t] };
  for (const row of rows) {
    const v = rowValue(row, g, bucket, node);
    samples[row.legacy] = [v ?? null];
  }
  return { op: { samples, lastTStamp: t } };
}

/** Pure: one XDCR stat of one replication, one sample per node; undefined when the stat has no native equivalent. */
export function xdcrStatEnvelope(g: RangeItems, replicationId: string, stat: string, byLegacy: ReadonlyMap<string, NativeMapRow> = XDCR_ROW_BY_LEGACY): XdcrStatEnvelope | undefined {
  const row = byLegacy.get(stat);
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
  const { lines, requests } = await fetchLines(ctx, (t) => t.kv, {}, kvItemOf, !ctx.options.per_node);
  return { envelope: (bucket, node) => linesBucketEnvelope(lines, bucket, node), requests };
}

/**
 * Each line of the cluster's nodes asked with its own table (node-lines.ts): one fetch for a single-version cluster,
 * one per line (its nodes only, its own state) mid-upgrade.
 */
async function fetchLines<N extends CollectorName>(
  ctx: CollectContext<N>,
  rowsOf: (t: NativeTable) => readonly NativeMapRow[],
  extra: Readonly<Record<string, string>>,
  itemOf: (labels: Readonly<Record<string, string>>) => string | undefined,
  sumOverNodes = false,
): Promise<{ lines: LineGroups[]; requests: number }> {
  const nodeLines = await nodeLinesOf(ctx);
  if (nodeLines.length <= 1) {
    const table = nativeMapFor(nodeLines[0]?.line ?? DEFAULT_LINE);
    const { groups, requests } = await fetchRange(ctx, rowsOf(table), extra, itemOf, sumOverNodes);
    return { lines: [{ table, groups, nodes: nodeLines[0]?.nodes ?? [] }], requests };
  }
  const lines: LineGroups[] = [];
  let requests = 0;
  for (const { line, nodes } of nodeLines) {
    const table = nativeMapFor(line);
    const got: RangeFetch = await fetchRange(ctx, withRatioParts(rowsOf(table)), extra, itemOf, sumOverNodes, { stateKey: `${RANGE_STATE_KEY}:${line}`, nodes });
    lines.push({ table, groups: got.groups, nodes });
    requests += got.requests;
  }
  return { lines, requests };
}

/** Pure: bucketEnvelope over the lines' groups (the stats of every line's table, merged as ns_server merges nodes). */
export function linesBucketEnvelope(lines: readonly LineGroups[], bucket: string, node: string | undefined): StatsEnvelope | undefined {
  if (lines.length === 1) {
    const l = lines[0] as LineGroups;
    return bucketEnvelope(l.groups, bucket, node, l.table.kv);
  }
  let t: number | undefined;
  for (const l of lines) {
    const lt = newestOf(l.groups, bucket, node);
    if (lt !== undefined && (t === undefined || lt > t)) t = lt;
  }
  if (t === undefined) return undefined;
  const samples: Record<string, unknown[]> = { timestamp: [t] };
  const stats = new Set(lines.flatMap((l) => l.table.kv.map((r) => r.legacy)));
  for (const legacy of stats) samples[legacy] = [mergedValue('kv', legacy, lines, bucket, node) ?? null];
  return { op: { samples, lastTStamp: t } };
}

export interface XdcrRange {
  /** Undefined for a stat with no native equivalent; an envelope without samples for a replication the answer lacks. */
  envelope(replicationId: string, stat: string): XdcrStatEnvelope | undefined;
  readonly requests: number;
}

export async function fetchXdcrRange(ctx: CollectContext<'xdcr'>): Promise<XdcrRange> {
  const { lines, requests } = await fetchLines(ctx, (t) => t.xdcr, { pipelineType: 'Main' }, xdcrItemOf);
  return { envelope: (id, stat) => linesXdcrEnvelope(lines, id, stat), requests };
}

/** Pure: the XDCR stat envelope over the lines' groups (each node is one line's: the nodes' samples side by side). */
export function linesXdcrEnvelope(lines: readonly LineGroups[], replicationId: string, stat: string): XdcrStatEnvelope | undefined {
  const parts = lines.map((l) => xdcrStatEnvelope(l.groups, replicationId, stat, l.table.xdcrByLegacy)).filter((e): e is XdcrStatEnvelope => e !== undefined);
  if (parts.length <= 1) return parts[0];
  const withData = parts.filter((e) => (e.timestamp?.length ?? 0) > 0);
  if (withData.length === 0) return parts[0];
  const t = Math.max(...withData.map((e) => e.timestamp?.[0] as number));
  const nodeStats: Record<string, unknown[]> = {};
  for (const e of withData) Object.assign(nodeStats, e.nodeStats ?? {});
  return { timestamp: [t], lastTStamp: t, nodeStats };
}
