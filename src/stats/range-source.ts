/**
 * The range source's neutral values (values.ts): one batch of range requests per poll (range.ts fetchRange) for
 * every bucket, or every replication, of the poll; then, per item and label set, each mapped stat's exact value in
 * Couchbase's legacy unit (native-map.ts rows, range-groups.ts rowValue), and the newest point's time.
 *
 * Each server line of the cluster's nodes is read with its own table (node-lines.ts): mid-upgrade, every line's names
 * are asked in the one batch, each line's rows reading only its own nodes' series, and the lines' bucket-wide values
 * are merged as ns_server merges nodes (a computed ratio with the serving node's formula).
 *
 * A window mean whose weighting stat (the catalog's `weight`: cmd_get for hit_ratio, a count for an average time)
 * is 0 this poll has no value: there was no event to average over. That is the envelope source's rule too
 * (samples.ts weightedMean), so a family keeps one meaning whichever source answered.
 */
import type { BucketEntry } from '../couchbase/buckets.js';
import type { ReplicationId } from '../couchbase/xdcr.js';
import { XDCR_STATS } from '../couchbase/xdcr.js';
import type { StatsContext } from './context.js';
import { kindOfSample, perNodeList } from './envelope-buckets.js';
import type { BucketSourceInput, BucketStatsOptions, EnvelopeSpecs } from './envelope-buckets.js';
import { DEFAULT_LINE, KV_BUCKET_LABELS, nativeMapFor } from './native-map.js';
import type { NativeMapRow, NativeTable } from './native-map.js';
import { mergedValue, nodeLinesOf, scopedRows, scopedTable, servingLine } from './node-lines.js';
import type { LineGroups } from './node-lines.js';
import { fetchRange, xdcrItemOf } from './range.js';
import { newestOf, rowValue } from './row-values.js';
import { CbwError } from '../errors.js';
import { MAX_GAP_NODES } from '../metrics/family.js';
import { ITEM_WIDE, setOf } from './values.js';
import type { ItemValues, SourceValues, StatValues, ValueKind } from './values.js';

/** The bucket a bucket stat's series belongs to (KV_BUCKET_LABELS); undefined for a per-node series. */
export function bucketOf(labels: Readonly<Record<string, string>>): string | undefined {
  for (const l of KV_BUCKET_LABELS) {
    const b = labels[l];
    if (b !== undefined) return b;
  }
  return undefined;
}

/** The neutral kind of a row's values. */
export function kindOfRow(row: NativeMapRow): ValueKind {
  switch (row.derive) {
    case 'rate':
      return 'rate';
    case 'mean':
    case 'increase_ratio':
      return 'mean';
    default:
      return 'level';
  }
}

/** The lines' answers, and the table of the node that serves the requests (whose formulas the computed ratios take). */
interface Lines {
  readonly lines: LineGroups[];
  readonly serving: NativeTable;
}

/**
 * One fetch: a single-version cluster's table; mid-upgrade every line's table at once, each line's rows reading only
 * its own nodes' series, and the parts of the serving line's computed ratios read over every node (node-lines.ts).
 * The serving line is the `thisNode`'s, else the oldest line present.
 */
async function fetchLines(
  ctx: StatsContext,
  rowsOf: (t: NativeTable) => readonly NativeMapRow[],
  extra: Readonly<Record<string, string>>,
  itemOf: (labels: Readonly<Record<string, string>>) => string | undefined,
  sumOverNodes = false,
): Promise<Lines> {
  const nodeLines = await nodeLinesOf(ctx);
  if (nodeLines.length <= 1) {
    const table = nativeMapFor(nodeLines[0]?.line ?? DEFAULT_LINE);
    const { groups } = await fetchRange(ctx, rowsOf(table), extra, itemOf, sumOverNodes);
    return { lines: [{ table, groups, nodes: nodeLines[0]?.nodes ?? [] }], serving: table };
  }
  const serving = nativeMapFor((await servingLine(ctx)) ?? nodeLines[0]?.line ?? DEFAULT_LINE);
  const tables = nodeLines.map(({ line, nodes }) => ({ table: scopedTable(line, nodes), nodes }));
  // Per node: a sum over the nodes would mix the lines' series.
  const { groups } = await fetchRange(ctx, scopedRows(tables.map((t) => rowsOf(t.table)), rowsOf(serving)), extra, itemOf, false);
  return { lines: tables.map(({ table, nodes }) => ({ table, groups, nodes })), serving };
}

/**
 * Pure: one bucket's values over the lines' groups (over all its nodes, or on `node`): every stat of every line's
 * table, merged as ns_server merges nodes; undefined when the answer has nothing of the bucket. A stat is present
 * with `undefined` when the answer gives it no value.
 */
export function linesBucketValues(
  lines: readonly LineGroups[],
  bucket: string,
  node: string | undefined,
  specOf?: EnvelopeSpecs,
  serving?: NativeTable,
): { values: StatValues; newest: number } | undefined {
  let newest: number | undefined;
  for (const l of lines) {
    const t = newestOf(l.groups, bucket, node);
    if (t !== undefined && (newest === undefined || t > newest)) newest = t;
  }
  if (newest === undefined) return undefined;
  const values: StatValues = new Map();
  if (lines.length === 1) {
    const l = lines[0] as LineGroups;
    for (const row of l.table.kv) values.set(row.legacy, rowValue(row, l.groups, bucket, node));
  } else {
    for (const l of lines) for (const row of l.table.kv) if (!values.has(row.legacy)) values.set(row.legacy, mergedValue('kv', row.legacy, lines, bucket, node, serving));
  }
  if (specOf !== undefined) unweighted(values, specOf);
  return { values, newest };
}

/** A window mean whose weighting stat is 0 (or below) this poll: no value (see the header). */
function unweighted(values: StatValues, specOf: EnvelopeSpecs): void {
  for (const [stat, v] of values) {
    if (v === undefined) continue;
    const spec = specOf(stat);
    if (spec?.kind !== 'mean' || spec.weight === undefined) continue;
    const w = values.get(spec.weight);
    if (w !== undefined && Number.isFinite(w) && w <= 0) values.set(stat, undefined);
  }
}

/**
 * An item that exists (in the bucket list, in the tasks list) but has nothing to export this poll: no series of it
 * in the answers, or every point of them refused (counted by reason in cbwatch_collector_dropped_values_total).
 * Named as an item failure and in the poll's gaps (the landing page), never a silent success.
 */
function nameEmpty(ctx: StatsContext, what: 'bucket' | 'replication', item: string): void {
  const why = 'no usable point in the range API answers: no series, or every point refused';
  const err = new CbwError('CBW_ERR_SCHEMA', `range API: ${what} ${item} has no statistics this poll (${why})`);
  err.brief = `range API: a ${what} has no statistics this poll (${why})`;
  ctx.itemFailed(`${what} ${item}`, err);
  const gaps = ctx.out.statsGaps;
  const empty = new Map(gaps?.empty ?? []);
  if (empty.size < MAX_GAP_NODES) empty.set(item, why);
  ctx.out.statsGaps = { collector: gaps?.collector ?? (what === 'bucket' ? 'bucket_stats' : 'xdcr'), missing: gaps?.missing ?? new Map(), futurePoints: gaps?.futurePoints ?? new Map(), empty };
}

/** The range source's answer for every bucket of the list (and, with per_node, each of its nodes). */
export async function rangeBucketSource(ctx: StatsContext<BucketStatsOptions>, input: BucketSourceInput): Promise<SourceValues> {
  // Without per_node only the bucket-wide values are read: the levels' sums over the nodes are asked as such.
  const { lines, serving } = await fetchLines(ctx, (t) => t.kv, {}, bucketOf, !ctx.options.per_node);
  const items = new Map<string, ItemValues>();
  for (const b of input.buckets) items.set(b.name, await bucketItem(ctx, lines, serving, input.specOf, b));
  const kinds = new Map(lines.flatMap((l) => l.table.kv.map((r) => [r.legacy, kindOfRow(r)] as const)));
  return { items, kindOf: (stat) => kinds.get(stat) ?? kindOfSample(input.specOf(stat)?.kind), gaps: ctx.out.statsGaps };
}

async function bucketItem(ctx: StatsContext<BucketStatsOptions>, lines: readonly LineGroups[], serving: NativeTable, specOf: EnvelopeSpecs, b: BucketEntry): Promise<ItemValues> {
  const item: ItemValues = { sets: new Map(), newest: undefined };
  const whole = linesBucketValues(lines, b.name, undefined, specOf, serving);
  // A bucket created since the answer's window began has nothing yet either: named all the same, for one poll.
  if (whole === undefined) nameEmpty(ctx, 'bucket', b.name);
  else {
    item.sets.set(ITEM_WIDE, whole.values);
    item.newest = whole.newest;
  }
  const nodes = ctx.options.per_node ? await perNodeList(ctx, b) : undefined;
  if (nodes === undefined) return item;
  for (const n of nodes) {
    const got = linesBucketValues(lines, b.name, n, specOf, serving);
    if (got === undefined) ctx.skipped('no_native_series', `${b.name} on ${n}`);
    else item.sets.set(n, got.values);
  }
  return item;
}

/**
 * Pure: one replication's values over the lines' groups: per node (each node is one line's), every XDCR stat that
 * a line's table maps, in the XDCR table's order; undefined when no line's answer has the replication.
 */
export function linesXdcrValues(lines: readonly LineGroups[], replicationId: string): ItemValues | undefined {
  const item: ItemValues = { sets: new Map(), newest: undefined };
  for (const l of lines) {
    const t = newestOf(l.groups, replicationId, undefined);
    if (t !== undefined && (item.newest === undefined || t > item.newest)) item.newest = t;
  }
  if (item.newest === undefined) return undefined;
  for (const spec of XDCR_STATS) {
    for (const l of lines) {
      const row = l.table.xdcrByLegacy.get(spec.stat);
      const cells = l.groups.items.get(replicationId);
      if (row === undefined || cells === undefined || newestOf(l.groups, replicationId, undefined) === undefined) continue;
      for (const node of cells.keys()) {
        const v = rowValue(row, l.groups, replicationId, node);
        if (v !== undefined) setOf(item, node).set(spec.stat, v);
      }
    }
  }
  return item;
}

/** The range source's answer for every replication of the tasks list (every mapped stat, every poll). */
export async function rangeXdcrSource(ctx: StatsContext, replications: readonly ReplicationId[]): Promise<SourceValues> {
  const { lines } = await fetchLines(ctx, (t) => t.xdcr, { pipelineType: 'Main' }, xdcrItemOf);
  const items = new Map<string, ItemValues>();
  for (const r of replications) {
    const v = linesXdcrValues(lines, r.id);
    if (v !== undefined && v.sets.size > 0) items.set(r.id, v);
    else nameEmpty(ctx, 'replication', r.id);
  }
  const kinds = new Map(lines.flatMap((l) => l.table.xdcr.map((r) => [r.legacy, kindOfRow(r)] as const)));
  return { items, kindOf: (stat) => kinds.get(stat) ?? 'level', gaps: ctx.out.statsGaps };
}
