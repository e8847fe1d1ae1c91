/**
 * The range source: statistics of Couchbase 7.0+ from `POST /pools/default/stats/range`, batched, turned into the
 * same sample arrays the envelopes give, so that the collectors' rules apply unchanged.
 *
 * Requests: one query per native series name that the mapping table (native-map.ts) reads, with no bucket or
 * replication matcher (the answer holds every bucket or replication; items are told apart by their labels), no
 * `applyFunctions` (raw values: a rate is computed here, exactly, from the counter) and no `nodesAggregation` (one
 * series per node: per-node families come from the same answer, and a counter reset on one node is seen as such),
 * except where only a bucket-wide value is read (`sumOverNodes`: bucket_stats without per_node): a metric that
 * only levels read (level, level_ratio, complement_ratio) is asked with `nodesAggregation: "sum"`, and one that
 * only a `max` row reads (nodeAggregate; its newest point or window mean) with `nodesAggregation: "max"`: one
 * series instead of one per node. That is exact: those rows use the newest
 * point summed over the nodes, which is the newest point of the summed series (same instants); no increase is
 * taken of a summed series, so a reset on one node can never be hidden by the sum (metrics that a rate, an
 * increase ratio or a window mean reads stay per node). No coarser `step` either: an increase over fewer points
 * would miss a reset between them.
 * At most MAX_QUERIES_PER_REQUEST queries per POST: the bucket stats (82–86 native names by server line) take 8 requests per poll and
 * the XDCR stats (16) 2, whatever the number of buckets, nodes and replications (the envelopes need one request per
 * bucket, per bucket and node with per_node, and per replication and stat). The queries are dealt out so that the
 * requests' answers are about the same size (balancedBatches): a query's answer grows with buckets × nodes (a
 * per-node kv metric) or stays at one series per node (a system metric), and the whole answer of a request is in
 * memory at once, as its bytes and as its text. At 1,000 buckets on 4 nodes, 50 queries to a request made a 37 MB
 * answer, and the collection thread held about three times that while reading it.
 * A poll's batches are asked one after the other, each answer grouped as soon as it is read (fetchRange), query by
 * query (AnswerGrouping.readText): each query's answer is read straight from the request's text (range-reader.ts,
 * no parsed tree), or, where that reader gives up, sliced out (json-slices.ts) and parsed on its own. Each series
 * is valued as it is read and added into the rows that read it (range-groups.ts): nothing per series outlives the
 * read but its record in the counter memo.
 *
 * Window (rangeWindow): on the 10 s grid, from the instant after the previous poll's last one (the first poll: one
 * interval and RANGE_SLACK_SECONDS back; at most MAX_WINDOW_SECONDS) to the poll's clock, rounded down to the step,
 * `step` 10 s (the native scrape interval): every query of a poll ends at the same instant, so each series' newest
 * point, and its previous one, are at the same instants and the parts of a ratio cover the same span. Only the
 * poll's own clock sets the window: an upstream time is data, never control (issue 39). A point later than the
 * poll's clock by more than MAX_FUTURE_SKEW_MS (a node whose clock is ahead) is dropped and counted against its
 * node; no exported time is later than the poll's clock. Each point is the latest scraped value at that instant.
 * A metric that only rows taking the newest point read (levels, ratios of levels, the per-node docs rule:
 * newestOnlyMetrics) is asked for the window's last instant alone, one point a series.
 * Label matchers that every row reading a metric shares are asked too (`any` over their values: the kv_ops
 * operations cbwatch maps), so the answer holds no series nothing reads.
 *
 * Values (per native series, i.e. per node and label set):
 * - a level is the newest point;
 * - a rate is the increase of the counter from the newest point of the previous answer to the newest point of
 *   this one, over the time between them: consecutive polls' increases add up to the counter's whole increase, so
 *   no increment is lost or counted twice (unlike an `irate` over the last two points). A decrease between two
 *   points is a counter reset (a restarted node or pipeline): the increase after it counts from 0. The first poll
 *   (no previous answer) counts the points of its window. An answer with no point newer than the previous one
 *   (stalled statistics, or the node's clock stepped back) gives no rate, and a step back starts afresh.
 * - ratios are computed from the summed parts (over nodes for the bucket-wide value), never by summing ratios.
 * The values are put into the legacy stat's unit (`legacyFactor`) and handed to the collectors as a one-sample
 * envelope whose timestamp is the newest point's time: the collectors' staleness, stall and scale rules apply as
 * for an envelope.
 *
 * Failures: an entry of a query's `errors` that names a node (down, slow past `timeout`) removes that metric's
 * values on that node only: the bucket-wide values are the merge over the nodes that answered (see fetchRange), and
 * the node is named once per poll. An entry naming no node, or a POST that fails, removes the values of its
 * metrics (an item error each). 404 and 405 on the endpoint mean the cluster (or a proxy in front of it) does not
 * offer the range API: RangeUnavailableError, which `auto` answers by falling back to the envelopes (source.ts).
 */
import { boundedText, CbwError } from '../errors.js';
import type { ErrorCode } from '../errors.js';
import { fetchBucketList } from '../couchbase/buckets.js';
import type { BucketEntry } from '../couchbase/buckets.js';
import { MAX_GAP_NODES } from '../metrics/family.js';
import type { StatsGaps } from '../metrics/family.js';
import type { StatsContext } from './context.js';
import { z } from 'zod';
import { arrayElementBounds, Ch, elementEnd, lastDepth, MAX_JSON_DEPTH, nestingDepth, parseSlice, skipSpace } from './json-slices.js';
import { KV_BUCKET_LABEL, KV_NATIVE_MAP, nativeMetricsOf, XDCR_NATIVE_LABELS } from './native-map.js';
import type { Matchers, NativeMapRow } from './native-map.js';
import { ALL_NODES, Grouping, rowMetrics } from './range-groups.js';
import type { Layer, RangeItems } from './range-groups.js';
import { AnswerErrors, EntryList, IdList, idKey, Interner, keptLabel, QueryReader, RANGE_LIMITS, RangeCaps, tooManySeriesText } from './range-reader.js';
import { dropAfter, pointsOf, rawRun, resolvePoints, seriesKey, seriesValue, valueInto, valueRun } from './range-values.js';
import type { CounterMemo, Point } from './range-values.js';

export const STATS_RANGE_ROUTE = '/pools/default/stats/range';
/**
 * Queries per POST: the bound on one request's body and answer (the answer grows with buckets × nodes). With the
 * mapping table's 82 (7.6+) to 86 (7.0, 7.1) kv and 16 XDCR names, a poll of both collectors makes 10 requests, the 10 the issue
 * (and the bench's statistics-source section) allows.
 */
export const MAX_QUERIES_PER_REQUEST = 11;
/** The native metrics are scraped every 10 s by default; a finer step only repeats points. */
export const RANGE_STEP_SECONDS = 10;
/**
 * How much longer than an interval the first poll's window is (a rate needs two points). Later windows start at the
 * instant after the previous poll's last one, whose points the counter memo holds: a series' value counts only the
 * points after its previous newest one, and asking from 20 s before that, as before, made 6 points a series instead
 * of 3 at the 30 s interval, a third of the answers' bytes read to be thrown away (issue 37, CPU).
 */
export const RANGE_SLACK_SECONDS = 2 * RANGE_STEP_SECONDS;
/** The longest window asked (after a long gap, e.g. polls that failed): the range API keeps more, but a rate over an hour says little of now. */
export const MAX_WINDOW_SECONDS = 3600;
/**
 * The bound on one query's samples. Couchbase's Prometheus refuses a query that would load more than
 * `prometheus.queryMaxSamples` samples (default 200,000, menelaus_web_stats params) with an error for that query on
 * that node; each node's Prometheus holds only that node's series, so the bound applies per node: (series of the
 * query on one node) × (points per series). cbwatch asks at most SAMPLE_BUDGET (10% under the limit).
 *
 * Worst case, designed for 1,000 buckets (DESIGN_ITEMS) after a gap of the longest window (MAX_WINDOW_SECONDS,
 * 3,600 s: 361 points at the 10 s step), per node:
 * - kv_ops, narrowed to the 11 ops cbwatch maps: get (hit, miss), delete (hit, miss), incr (hit, miss), decr (hit,
 *   miss), cas (hit, miss, badval), set, get_meta, set_meta, del_meta, set_ret_meta, del_ret_meta = 17 series a
 *   bucket: 17,000 series × 361 points = 6,137,000 samples, 30 times the limit. Bounded by the window: at most
 *   floor(180,000 / 17,000) = 10 points, 90 s.
 * - kv_vb_* (state: active, replica, pending, dead) = 4 a bucket: 45 points (440 s); narrowed to two states (kv_vb_curr_items)
 *   90 points (890 s).
 * - kv_dcp_* narrowed to the 8 connection types mapped: 22 points (210 s).
 * - one series a bucket (kv_curr_items…): 180 points (1,790 s); one a node (sys_*, kv_curr_connections): the whole
 *   3,600 s (361 points).
 * A window cut so starts later (maxWindowSeconds); a counter's increase still counts from its previous newest point
 * (the memo), so a rate over the gap stays exact, and only a window mean covers less. Splitting a query by bucket
 * would be needed past floor(180,000 / (17 × 2)) = 5,294 buckets (two points of kv_ops); Couchbase allows far fewer.
 */
export const QUERY_MAX_SAMPLES = 200_000;
export const SAMPLE_BUDGET = 180_000;
/** The item count the bound is designed for, and assumed before a poll has counted the items. */
export const DESIGN_ITEMS = 1000;

/**
 * The most series a query of `metric` answers per item (bucket, replication) on one node, given its narrowing:
 * kv_ops by its ops' results (stats.def.h), a `state` label not narrowed by the four vBucket states, else the product
 * of the narrowed labels' value counts. Pure.
 */
/** The connection types an un-narrowed kv_dcp_* metric is taken to have per bucket and node (seriesPerItem). */
export const UNNARROWED_DCP_TYPES = 16;

export function seriesPerItem(metric: string, narrow: Readonly<Record<string, readonly string[]>> | undefined): number {
  if (metric === 'kv_ops') {
    const results: Record<string, number> = { get: 2, delete: 2, incr: 2, decr: 2, cas: 3 };
    const ops = narrow?.op;
    // Not narrowed: every op of stats.def.h's kv_ops (and get_meta_for_set_meta, flush, lock).
    if (ops === undefined) return 17 + 3;
    return ops.reduce((a, op) => a + (results[op] ?? 1), 0);
  }
  // kv_dcp_* is asked un-narrowed (ep_dcp_other_* is ns_server's `not_any` of the named connection types): the 8
  // named types, kv_engine's `:total` aggregate and the types no row names (backup, a connector's own …), taken as
  // 16 a bucket and node at most.
  if (metric.startsWith('kv_dcp_') && narrow?.connection_type === undefined) return UNNARROWED_DCP_TYPES;
  let n = 1;
  for (const values of Object.values(narrow ?? {})) n *= values.length;
  if ((metric.startsWith('kv_vb_') || metric === 'kv_num_vbuckets') && narrow?.state === undefined) n *= 4;
  return n;
}

/**
 * The longest window a query of `metric` may ask, seconds on the step: its worst case (series × points on one node)
 * within SAMPLE_BUDGET. `items`: the items each node holds (1 for a per-node metric). Pure.
 */
export function maxWindowSeconds(seriesPerNode: number, items: number): number {
  const points = Math.floor(SAMPLE_BUDGET / Math.max(1, seriesPerNode * items));
  return Math.max(RANGE_STEP_SECONDS, Math.min(MAX_WINDOW_SECONDS, (points - 1) * RANGE_STEP_SECONDS));
}

/** A point this much later than the poll's clock is from a node whose clock is ahead: dropped, counted (issue 39). */
export const MAX_FUTURE_SKEW_MS = 60_000;

/**
 * A poll's window, epoch seconds, on multiples of the step: `end` is the poll's clock rounded down, `from` the
 * instant after the previous poll's `end` (its start rounded down), whose points the counter memo holds (the first
 * poll: one interval and RANGE_SLACK_SECONDS back; at least one step, never more than MAX_WINDOW_SECONDS). Every
 * query of the poll, and of the poll before, is evaluated on the same 10 s grid up to the same `end`: each series'
 * newest point, and the previous poll's, are at the same instants, so
 * the numerator and the denominator of a ratio cover the same span (issue 37 §2). Only the poll's own clock sets it
 * (issue 39 §1). Pure.
 */
export function rangeWindow(nowMs: number, lastPollMs: number | undefined, intervalMs: number): { from: number; end: number } {
  const step = RANGE_STEP_SECONDS;
  const end = Math.floor(nowMs / 1000 / step) * step;
  const nowS = nowMs / 1000;
  // After a poll: the instant after its end (its newest points are the memo's; a point at that instant or before
  // it is never read).
  const startS = lastPollMs === undefined || lastPollMs > nowMs ? nowS - intervalMs / 1000 - RANGE_SLACK_SECONDS : (Math.floor(lastPollMs / 1000 / step) + 1) * step;
  return { from: Math.floor(Math.max(nowS - MAX_WINDOW_SECONDS, Math.min(nowS - step, startS)) / step) * step, end };
}

/** The endpoint is not there (404, 405): the cluster, or a proxy in front of it, does not offer it. */
export class RangeUnavailableError extends CbwError {
  readonly status: number;
  constructor(status: number) {
    super('CBW_ERR_HTTP', `POST ${STATS_RANGE_ROUTE} answered ${status}: the range API is not available on this cluster (or a proxy in front of it refuses it)`);
    this.status = status;
  }
}

/**
 * What the range API needs (menelaus_web_stats handle_range_post: 403 when the user may read the statistics of no
 * bucket, collection_perm: `{[{collection, [B, S, C]}, stats], read}`), and the roles that grant it.
 */
export const RANGE_PERMISSION = 'cluster.collection[<bucket>:.:.].stats!read on at least one bucket (role Read-Only Admin, or Data Monitoring / Bucket Admin on the buckets to watch)';

/**
 * The range API answered 403: the user lacks a permission, which is not "the range API is missing": the poll fails
 * naming it (no silent fallback to the envelopes, which would need the same permission). Read like a
 * ForbiddenError: `permissions` is what `cbwatch check` and the landing page show.
 */
export class RangeForbiddenError extends CbwError {
  readonly status = 403;
  readonly permissions: readonly string[] = [RANGE_PERMISSION];
  constructor() {
    super('CBW_ERR_FORBIDDEN', `POST ${STATS_RANGE_ROUTE} answered 403: forbidden (403): missing permission ${RANGE_PERMISSION}`);
  }
}

/** Longest 400 answer text logged (redacted first). */
export const MAX_400_TEXT = 300;
/** How long no `nodes` is sent after the server refused the list. */
export const RETRY_NODES_MS = 600_000;

/** The metrics only per-node rows read (no bucket label: one series per node, whatever the buckets). Pure. */
export function perNodeMetrics(rows: readonly NativeMapRow[]): Set<string> {
  const perNode = new Set<string>();
  const perItem = new Set<string>();
  for (const r of rows) for (const m of rowMetrics(r)) (r.section === 'kv' && !r.perBucket ? perNode : perItem).add(m);
  for (const m of perItem) perNode.delete(m);
  return perNode;
}

export interface RangeQuery {
  readonly metric: ReadonlyArray<{ readonly label: string; readonly value: string | readonly string[]; readonly operator?: string }>;
  readonly start: number;
  readonly end?: number;
  readonly step: number;
  readonly nodesAggregation?: 'sum' | 'max';
  readonly nodes?: readonly string[];
  readonly timeout?: number;
}

const LEVEL_DERIVES: ReadonlySet<NativeMapRow['derive']> = new Set(['level', 'level_ratio', 'complement_ratio']);
/** What a `max` row may read from a series maxed over the nodes at each instant: its newest point or its window mean. */
const MAX_DERIVES: ReadonlySet<NativeMapRow['derive']> = new Set(['level', 'mean']);

/**
 * Per metric, the aggregation over the nodes that is all a bucket-wide value needs, when every row reading it agrees:
 * `sum` when each takes the newest point (a level or a ratio of levels) and adds the nodes up; `max` when each is a
 * `max` row (nodeAggregate) that takes the newest point or the window mean (the mean of the per-instant max, as the
 * envelope's samples are). Pure.
 */
export function aggregatedMetrics(rows: readonly NativeMapRow[]): Map<string, 'sum' | 'max'> {
  const kinds = new Map<string, 'sum' | 'max' | 'none'>();
  for (const r of rows) {
    const kind = r.nodeAggregate === 'max' ? (MAX_DERIVES.has(r.derive) ? 'max' : 'none') : LEVEL_DERIVES.has(r.derive) ? 'sum' : 'none';
    for (const m of rowMetrics(r)) {
      const had = kinds.get(m);
      kinds.set(m, had === undefined || had === kind ? kind : 'none');
    }
  }
  const out = new Map<string, 'sum' | 'max'>();
  for (const [m, k] of kinds) if (k !== 'none') out.set(m, k);
  return out;
}

/** The derivations that read a series' newest point only (a level, or levels combined at one instant). */
const NEWEST_DERIVES: ReadonlySet<NativeMapRow['derive']> = new Set(['level', 'level_ratio', 'complement_ratio', 'difference', 'docs_data_size', 'fragmentation']);

/**
 * The metrics that every row reading them takes the newest point of: asked for the window's last instant alone
 * (start = end, one point a series), since their older points would be read only to be thrown away. Pure.
 */
export function newestOnlyMetrics(rows: readonly NativeMapRow[]): Set<string> {
  const newest = new Set<string>();
  const not = new Set<string>();
  for (const r of rows) for (const m of rowMetrics(r)) (NEWEST_DERIVES.has(r.derive) ? newest : not).add(m);
  for (const m of not) newest.delete(m);
  return newest;
}

/** The metrics aggregatedMetrics sums over the nodes. Pure. */
export function summableMetrics(rows: readonly NativeMapRow[]): Set<string> {
  return new Set([...aggregatedMetrics(rows)].filter(([, k]) => k === 'sum').map(([m]) => m));
}

/** What buildQueries puts in every query besides the metric's name and the extra matchers. */
export interface QueryOptions {
  /** Per metric, the label values its rows constrain (narrowing). */
  readonly narrow?: ReadonlyMap<string, Readonly<Record<string, readonly string[]>>>;
  /** The window's first instant (epoch s); else `windowSeconds` back from the server's now. */
  readonly from?: number;
  /** The window's last instant (epoch s); else the server's now. */
  readonly end?: number;
  /** Per metric, a later first instant than `from` (the sample bound: maxWindowSeconds). */
  readonly fromByMetric?: ReadonlyMap<string, number>;
  /** Per metric, the aggregation over the nodes asked (`nodesAggregation`), when a bucket-wide value is all that is read. */
  readonly aggregated?: ReadonlyMap<string, 'sum' | 'max'>;
  /**
   * The nodes to ask (host:port, as /pools/default names them). Without it the range API asks every node of the
   * cluster in any membership state (menelaus_web_stats validators: `nodes` defaults to get_hostnames(Req, any)),
   * failed-over ones included, each of which then answers an error.
   */
  readonly nodes?: readonly string[];
  /**
   * How long the server waits for the nodes' answers, ms (menelaus_web_stats read_metrics_response: from the
   * request's start; 1 to 300,000; 60,000 when not given). A node that has not answered by then is an `errors`
   * entry ("Request timed out") and the others' answers come back.
   */
  readonly timeoutMs?: number;
}

/** One query per metric name, with the extra matchers (e.g. pipelineType) every row of that metric shares. */
export function buildQueries(metrics: readonly string[], extra: Readonly<Record<string, string>>, windowSeconds: number, o: QueryOptions = {}): RangeQuery[] {
  // From the previous answer's newest point (epoch seconds) when there is one, else a window back from now.
  const start = o.from !== undefined ? o.from : -Math.max(RANGE_STEP_SECONDS, Math.min(MAX_WINDOW_SECONDS, Math.ceil(windowSeconds)));
  return metrics.map((name) => {
    const agg = o.aggregated?.get(name);
    return {
      metric: [
        { label: 'name', value: name },
        ...Object.entries(extra).map(([label, value]) => ({ label, value })),
        // A label the extra matchers already fix (pipelineType) is not asked twice.
        ...Object.entries(o.narrow?.get(name) ?? {}).filter(([label]) => extra[label] === undefined).map(([label, values]) => ({ label, value: values.length === 1 ? (values[0] as string) : [...values], operator: values.length === 1 ? '=' : 'any' })),
      ],
      start: o.fromByMetric?.get(name) ?? start,
      ...(o.end !== undefined ? { end: o.end } : {}),
      step: RANGE_STEP_SECONDS,
      ...(agg !== undefined ? { nodesAggregation: agg } : {}),
      ...(o.nodes !== undefined ? { nodes: [...o.nodes] } : {}),
      ...(o.timeoutMs !== undefined ? { timeout: o.timeoutMs } : {}),
    };
  });
}

/**
 * The `op` values kv_engine serves with `result="miss"` (include/statistics/stats.def.h: get_misses, delete_misses,
 * incr_misses, decr_misses, cas_misses): a row that reads every miss (`misses`) reads those ops only, so kv_ops can
 * be asked for the ops cbwatch maps (issue 37 §5) without losing one of its series.
 */
export const KV_MISS_OPS: readonly string[] = Object.freeze(['cas', 'decr', 'delete', 'get', 'incr']);

/** A row's matchers with what they imply of the other labels (kv_ops{result="miss"}: the ops that have misses). Pure. */
export function impliedMatchers(metric: string, m: Matchers): Matchers {
  if (metric === 'kv_ops' && m.op === undefined && m.result === 'miss') return { ...m, op: KV_MISS_OPS };
  return m;
}

/**
 * Per metric, the labels every row reading it constrains, with the union of their values: the query asks only for
 * those (e.g. the kv_ops ops cbwatch maps), never for less than some row needs.
 */
export function narrowing(rows: readonly NativeMapRow[]): Map<string, Record<string, string[]>> {
  const per = new Map<string, Array<Matchers>>();
  for (const r of rows) for (const x of [...r.series, ...(r.denominator ?? [])]) (per.get(x.metric) ?? per.set(x.metric, []).get(x.metric) as Matchers[]).push(impliedMatchers(x.metric, x.matchers));
  const out = new Map<string, Record<string, string[]>>();
  for (const [metric, ms] of per) {
    const labels = Object.keys(ms[0] ?? {}).filter((l) => ms.every((m) => m[l] !== undefined));
    if (labels.length === 0) continue;
    const n: Record<string, string[]> = {};
    for (const l of labels) n[l] = [...new Set(ms.flatMap((m) => { const v = m[l] as string | readonly string[]; return typeof v === 'string' ? [v] : [...v]; }))].sort();
    out.set(metric, n);
  }
  return out;
}

/**
 * `names` in as few batches as `max` per batch allows (ceil(n / max)), dealt out by weight so that the batches
 * weigh about the same: heaviest first, each to the lightest batch that has room. Each batch keeps the
 * order of `names`. Pure and deterministic (ties go to the earlier batch and the earlier name).
 */
export function balancedBatches(names: readonly string[], max: number, weightOf: (name: string) => number): string[][] {
  const count = Math.ceil(names.length / max);
  if (count <= 1) return names.length === 0 ? [] : [[...names]];
  const order = names.map((name, i) => ({ name, i, w: weightOf(name) })).sort((a, b) => b.w - a.w || a.i - b.i);
  const batches = Array.from({ length: count }, () => ({ w: 0, items: [] as Array<{ name: string; i: number }> }));
  for (const x of order) {
    let best: (typeof batches)[number] | undefined;
    for (const b of batches) if (b.items.length < max && (best === undefined || b.w < best.w)) best = b;
    const to = best as (typeof batches)[number];
    to.w += x.w;
    to.items.push(x);
  }
  return batches.map((b) => b.items.sort((a, c) => a.i - c.i).map((x) => x.name));
}

/**
 * A query's weight for balancedBatches: the length of its answer in the previous poll, else a guess (a sum over the
 * nodes answers one series where a per-node query answers one per node).
 */
export function answerWeight(sizes: ReadonlyMap<string, number>, summed: ReadonlySet<string>): (name: string) => number {
  return (name) => sizes.get(name) ?? (summed.has(name) ? 1000 : 4000);
}

export interface RangeSeries {
  readonly metric: string;
  readonly node: string;
  readonly labels: Readonly<Record<string, string>>;
  /** Oldest first. */
  readonly points: readonly Point[];
}

export interface QueryResult {
  readonly metric: string;
  readonly series: RangeSeries[];
  /** Nodes whose answer is missing (`errors` entries); '*' when the entry names none. */
  readonly erroredNodes: Set<string>;
  readonly errors: string[];
}

function str(v: unknown): string | undefined {
  return typeof v === 'string' ? v : undefined;
}

/**
 * One query's answer (`{data, errors}`) → series. Pure; odd entries are skipped. `summed`: the query asked for
 * the sum over the nodes, whose series are ALL_NODES's.
 */
export function parseQueryAnswer(metric: string, raw: unknown, summed = false): QueryResult {
  const head = answerHead(raw);
  const out: QueryResult = { metric, series: [], erroredNodes: head.erroredNodes, errors: head.errors };
  const entries = treeEntries(head, summed);
  for (const e of entries) {
    const points = pointsOf(e.values);
    if (points.length === 0) continue;
    out.series.push({ metric, node: e.node, labels: e.labels, points });
  }
  return out;
}

/** A parsed answer's entry as the walk keeps it: its labels, node, raw values, and its key within the answer. */
interface TreeEntry {
  readonly labels: Record<string, string>;
  readonly node: string;
  values: readonly unknown[];
}

/**
 * The usable entries of a parsed answer (entryOf), bounded and checked as the text's reader does: past
 * RANGE_LIMITS.seriesPerQuery none (the answer refused, in `head`), and a series given twice merged into its first
 * entry (its values after the first's: resolvePoints then keeps one point per time). Pure but for `head` and `caps`.
 */
function treeEntries(head: AnswerHead, summed: boolean, caps?: RangeCaps): TreeEntry[] {
  const out: TreeEntry[] = [];
  const seen = new Map<string, number>();
  let count = 0;
  for (const d of head.data) {
    const e = entryOf(d, summed, caps);
    if (e === undefined) continue;
    if (++count > RANGE_LIMITS.seriesPerQuery) continue;
    const key = seriesKey({ metric: '', node: e.node, labels: e.labels });
    const first = seen.get(key);
    if (first === undefined) {
      seen.set(key, out.length);
      out.push(e);
    } else {
      caps?.add('range_duplicate_series');
      const f = out[first] as TreeEntry;
      f.values = [...f.values, ...e.values];
    }
  }
  if (count > RANGE_LIMITS.seriesPerQuery) {
    caps?.add('range_series', count - RANGE_LIMITS.seriesPerQuery);
    head.erroredNodes.add('*');
    const why = tooManySeriesText(count);
    if (!head.errors.includes(why)) head.errors.push(why);
    if (!head.clusterErrors.includes(why)) head.clusterErrors.push(why);
    return [];
  }
  return out;
}

interface AnswerHead {
  readonly erroredNodes: Set<string>;
  /** Every entry's text (bounded, AnswerErrors). */
  readonly errors: string[];
  /** The texts of entries that name no node, and of refusals: the metric's own item errors. */
  readonly clusterErrors: string[];
  /** The entries that name a node: node → reason (one item error per node and poll, range-core's missingNodes). */
  readonly byNode: ReadonlyArray<readonly [string, string]>;
  readonly data: readonly unknown[];
}

/**
 * An answer's `errors` (the nodes they name; '*' when one names none, or past RANGE_LIMITS.errorEntries) and its
 * `data` entries. The texts are bounded as the text's reader bounds them (AnswerErrors). Pure but for `caps`.
 */
function answerHead(raw: unknown, caps?: RangeCaps): AnswerHead {
  const bounded = new AnswerErrors(caps);
  const erroredNodes = bounded.nodes;
  const errors = bounded.texts;
  const clusterErrors = bounded.clusterTexts;
  const byNode = bounded.byNode;
  if (raw === null || typeof raw !== 'object') {
    bounded.refuse('answer is not an object');
    return { erroredNodes, errors, clusterErrors, byNode, data: [] };
  }
  const r = raw as { data?: unknown; errors?: unknown };
  if (Array.isArray(r.errors)) {
    for (const e of r.errors as unknown[]) {
      const node = e !== null && typeof e === 'object' ? str((e as { node?: unknown }).node) : undefined;
      const why = e !== null && typeof e === 'object' ? (e as { error?: unknown }).error : e;
      // JSON.stringify of a huge object: only what is kept of it is worth the time, but it is parsed already.
      bounded.add(node, typeof why === 'string' ? why : (JSON.stringify(why) ?? 'error'));
    }
  }
  if (!Array.isArray(r.data)) {
    if (errors.length === 0) bounded.refuse('answer has no data array');
    return { erroredNodes, errors, clusterErrors, byNode, data: [] };
  }
  return { erroredNodes, errors, clusterErrors, byNode, data: r.data as unknown[] };
}

/**
 * One `data` entry: its labels (the string ones; `nodes` apart), its node, its raw `values`. Undefined for an odd
 * entry, or one of several nodes (an aggregate: not a node's value) unless the sum was asked for (`summed`: the
 * series is ALL_NODES's). This runs for every series of every poll (about 23,000 at 100 buckets on 4 nodes): no
 * per-entry arrays (for…in rather than Object.entries).
 */
function entryOf(d: unknown, summed: boolean, caps?: RangeCaps): TreeEntry | undefined {
  if (d === null || typeof d !== 'object') return undefined;
  const m = (d as { metric?: unknown }).metric;
  const values = (d as { values?: unknown }).values;
  if (m === null || typeof m !== 'object' || !Array.isArray(values)) return undefined;
  const labels: Record<string, string> = {};
  let node: string | undefined;
  const ml = m as Record<string, unknown>;
  for (const k in ml) {
    const v = ml[k];
    if (k === 'nodes') {
      if (Array.isArray(v) && v.length === 1 && typeof v[0] === 'string') node = keptLabel(v[0], caps);
    } else if (typeof v === 'string') labels[keptLabel(k, caps)] = keptLabel(v, caps);
  }
  if (summed) node = ALL_NODES;
  if (node === undefined) return undefined;
  return { labels, node, values: values as unknown[] };
}

/**
 * Group the answers' series by item and node for the rows of `rows`, computing each series' value against the memo
 * (which is replaced by this answer's newest points: series no longer answered are forgotten). Pure but for `memo`.
 */
export function groupSeries(rows: readonly NativeMapRow[], results: readonly QueryResult[], itemOf: (labels: Readonly<Record<string, string>>) => string | undefined, memo: CounterMemo): RangeItems {
  const g = new Grouping(rows, itemOf, memo);
  for (const r of results) {
    const l = g.layer();
    l.errors(r.metric, r.erroredNodes);
    for (const s of r.series) {
      const key = seriesKey(s);
      const rec = memo.get(key);
      const has = valueInto(seriesValue(s.points, l.previous(key, rec)));
      if (has !== 0) l.put(key, rec, s.metric, s.node, s.labels, has);
    }
    g.commit(l);
  }
  return g.done();
}

/** One query's answer as fetchRange has it: the raw answer, or a request that failed (every node errored). */
export type RawAnswer = { readonly metric: string; readonly raw: unknown; readonly summed: boolean } | { readonly metric: string; readonly failed: true };

/**
 * `groupSeries(rows, answers.map(parseQueryAnswer))` without the parsed series in between: each entry's value
 * comes straight from its raw `values` (rawSeriesValue). At 100 buckets on 4 nodes a poll has about 23,000 series
 * of 3 to 6 points; the points, series and per-answer arrays were half of its allocations. Also returns each
 * answer's error texts (for the item errors). Pure but for `memo`; a test holds it equal to the two steps.
 */
export function groupAnswers(rows: readonly NativeMapRow[], answers: readonly RawAnswer[], itemOf: (labels: Readonly<Record<string, string>>) => string | undefined, memo: CounterMemo): { groups: RangeItems; errors: ReadonlyArray<{ metric: string; errors: string[] }> } {
  const g = new AnswerGrouping(rows, itemOf, memo);
  g.add(answers);
  return { groups: g.done(), errors: g.errorTexts };
}

/** One request's answers, read in full and ready to add (AnswerGrouping.readText, then commit). */
export class StagedRequest {
  constructor(readonly layer: Layer) {}
}

/** The schema of a request read by AnswerGrouping.readText: staged, or (not an array) what JSON.parse made of it. */
export const stagedRequestSchema = z.custom<StagedRequest>((v) => v instanceof StagedRequest, { error: 'expected an array' });

/**
 * groupAnswers answer by answer: fetchRange adds each request's answers as it has them, then asks for the groups.
 * A request is first staged (its series read, valued against the memo and added into a layer of its own, nothing
 * else changed), then committed.
 */
export class AnswerGrouping {
  private readonly g: Grouping;

  private readonly reader: QueryReader;

  /**
   * `sizes`: where the length of each query's answer (characters of the text) is written as it is read, for the next
   * poll's balancedBatches.
   */
  /**
   * `clock`: the poll's clock (epoch ms, `nowMs`), no exported time later than it, and the latest point time kept
   * (`maxT`): a later point is dropped and counted against its node. Unbounded when not given.
   */
  private readonly maxT: number;

  constructor(
    rows: readonly NativeMapRow[],
    itemOf: (labels: Readonly<Record<string, string>>) => string | undefined,
    private readonly memo: CounterMemo,
    private readonly sizes?: Map<string, number>,
    clock: { readonly nowMs: number; readonly maxT: number } = { nowMs: Number.POSITIVE_INFINITY, maxT: Number.POSITIVE_INFINITY },
  ) {
    this.g = new Grouping(rows, itemOf, memo, clock.nowMs);
    this.reader = new QueryReader(internerOf(memo), this.caps, entryListOf(memo));
    this.maxT = clock.maxT;
  }

  /** What the bounds on the answers cut or refused in this grouping (cbwatch_collector_capped_total). */
  readonly caps = new RangeCaps();

  /** Each committed answer's error texts (for the item errors), in the order added. */
  get errorTexts(): ReadonlyArray<{ metric: string; errors: string[] }> {
    return this.g.errorTexts;
  }

  /** The nodes the committed answers' `errors` entries named, with the first reason. */
  get nodeErrors(): ReadonlyMap<string, string> {
    return this.g.nodeErrors;
  }

  add(answers: readonly RawAnswer[]): void {
    for (const a of answers) {
      const l = this.g.layer();
      if ('failed' in a) l.errors(a.metric, new Set(['*']));
      else this.stage(l, a.metric, a.raw, a.summed);
      for (const [why, n] of l.refused) this.caps.add(why, n);
      this.g.commit(l);
    }
  }

  /**
   * A request's body, the JSON array of its queries' answers (`names[i]`'s at index i), read query by query: each
   * answer is parsed from its own slice of the text (arrayElementBounds) and staged before the next is parsed, so
   * the parsed tree of one query (tens of kilobytes), not of the whole request (megabytes), is alive at a time and
   * dies young. Nothing is added to the groups here (commit does): a body that is not JSON throws SyntaxError
   * with the groups and memo untouched, as when the body was parsed whole. A text that is not an array comes
   * back as JSON.parse makes it, for the schema to refuse.
   */
  readText(text: string, names: readonly string[], summed: ReadonlySet<string>): StagedRequest | unknown {
    const read = this.readDirect(text, names, summed);
    if (read !== undefined) return read;
    const bounds = arrayElementBounds(text);
    if (bounds !== undefined) {
      for (let i = 0; i < Math.min(names.length, bounds.length / 2); i++) this.sizes?.set(names[i] as string, (bounds[2 * i + 1] as number) - (bounds[2 * i] as number));
      return this.stageAll(names, summed, bounds.length / 2, (i) => {
        const from = bounds[2 * i] as number;
        const to = bounds[2 * i + 1] as number;
        return nestingDepth(text, from, to) > MAX_JSON_DEPTH ? TOO_DEEP : parseSlice(text, from, to);
      });
    }
    // Not an array as the scan sees it: parsed whole, which decides (and throws when it is not JSON), unless it
    // nests deeper than any answer (then refused unparsed, as not JSON this reader takes).
    if (nestingDepth(text) > MAX_JSON_DEPTH) {
      this.caps.add('range_nesting');
      throw new SyntaxError(`Not a range answer: nested deeper than ${MAX_JSON_DEPTH} levels`);
    }
    const raw: unknown = JSON.parse(text);
    return Array.isArray(raw) ? this.stageAll(names, summed, raw.length, (i) => raw[i]) : raw;
  }

  /**
   * readText's first way: each answer read by the QueryReader straight from the text, or, where the reader gives
   * up, sliced and parsed on its own (as the second way does). Undefined when the text is not an array of answers
   * as the reader sees it (the second way then reads it all again and decides); nothing is changed until commit.
   */
  private readDirect(text: string, names: readonly string[], summed: ReadonlySet<string>): StagedRequest | undefined {
    const l = this.g.layer();
    const r = this.reader;
    let p = skipSpace(text, 0);
    if (text.charCodeAt(p) !== Ch.OpenSquare) return undefined;
    p = skipSpace(text, p + 1);
    let i = 0;
    if (text.charCodeAt(p) !== Ch.CloseSquare) {
      for (;; i++) {
        const name = names[i];
        const sum = name !== undefined && summed.has(name);
        let end = r.read(text, p, sum, l.cellGate(), name === undefined ? undefined : { metric: name, memo: this.memo });
        if (end >= 0) {
          if (name !== undefined) this.stageRead(l, name);
        } else {
          end = elementEnd(text, p);
          if (end < 0) return undefined;
          if (lastDepth > MAX_JSON_DEPTH) {
            // Refused unparsed: 3,000,000 nested arrays (6 MB) made 556 MiB of parsed tree (issue 39).
            if (name !== undefined) this.refuseDeep(l, name);
          } else {
            const raw = parseSlice(text, p, end);
            if (name !== undefined) this.stage(l, name, raw, sum);
          }
        }
        if (name !== undefined) this.sizes?.set(name, end - p);
        p = skipSpace(text, end);
        const c = text.charCodeAt(p);
        if (c === Ch.CloseSquare) break;
        if (c !== Ch.Comma) return undefined;
        p = skipSpace(text, p + 1);
      }
      i++;
    }
    if (skipSpace(text, p + 1) !== text.length) return undefined;
    // Queries the body has no answer for: as an answer that is not an object.
    for (; i < names.length; i++) this.stage(l, names[i] as string, undefined, summed.has(names[i] as string));
    return new StagedRequest(l);
  }

  /** A query's answer nested deeper than MAX_JSON_DEPTH: its metric failed on every node, counted. */
  private refuseDeep(l: Layer, metric: string): void {
    this.caps.add('range_nesting');
    l.errors(metric, new Set(['*']), [`cluster: the answer nests deeper than ${MAX_JSON_DEPTH} levels: refused`]);
  }

  /** The QueryReader's entries, valued against the memo series by series, into the layer. */
  private stageRead(l: Layer, metric: string): void {
    const r = this.reader;
    if (r.errors.nodes.size > 0) l.errors(metric, new Set(r.errors.nodes), [...r.errors.clusterTexts], [...r.errors.byNode]);
    // Refused by the reader as it read: too many cells (the layer's cellGate).
    if (r.cellRefused > 0) {
      l.refuse(metric, r.cellRefused);
      return;
    }
    const list = r.list;
    const n = list.n;
    for (let i = 0; i < n; i++) {
      const key = list.keys[i] as string;
      const rec = list.recs[i];
      const node = list.nodes[i] as string;
      const from = list.from[i] as number;
      const end = list.to[i] as number;
      const to = dropAfter(r.run, from, end, this.maxT);
      if (to < end) l.dropFuture(node, end - to);
      const has = valueRun(r.run, from, to, l.previous(key, rec));
      if (has !== 0) l.put(key, rec, metric, node, list.labels[i] as Record<string, string>, has);
      // Refused (its cells, or one cell's series): the metric fails everywhere, its other series are not worth valuing (counted).
      if (l.isRefused(metric)) {
        l.refuseRest(metric, n - i - 1);
        break;
      }
    }
    if (n > 0) LABEL_SHAPES.set(metric, list.labels[n - 1] as Record<string, string>);
  }

  /** Add a request read by readText. */
  commit(request: StagedRequest): void {
    for (const [why, n] of request.layer.refused) this.caps.add(why, n);
    this.g.commit(request.layer);
  }

  /** Every element is read (an element past the names is still parsed: a body that is not JSON fails whole). */
  private stageAll(names: readonly string[], summed: ReadonlySet<string>, count: number, element: (i: number) => unknown): StagedRequest {
    const l = this.g.layer();
    for (let i = 0; i < Math.max(count, names.length); i++) {
      const raw = i < count ? element(i) : undefined;
      const name = names[i];
      if (name === undefined) continue;
      if (raw === TOO_DEEP) this.refuseDeep(l, name);
      else this.stage(l, name, raw, summed.has(name));
    }
    return new StagedRequest(l);
  }

  /** One query's answer, valued against the memo series by series, into the layer. */
  private stage(l: Layer, metric: string, raw: unknown, summed: boolean): void {
    const head = answerHead(raw, this.caps);
    const entries = treeEntries(head, summed, this.caps);
    l.errors(metric, head.erroredNodes, head.clusterErrors, head.byNode);
    for (const e of entries) {
      const key = this.treeKey(metric, e.node, e.labels);
      const rec = this.memo.get(key);
      const run = rawRun(e.values);
      const to = dropAfter(run, 0, run.n, this.maxT);
      if (to < run.n) l.dropFuture(e.node, run.n - to);
      const has = valueRun(run, 0, to, l.previous(key, rec));
      if (has !== 0) l.put(key, rec, metric, e.node, e.labels, has);
      if (l.isRefused(metric)) {
        l.refuseRest(metric, entries.length - entries.indexOf(e) - 1);
        break;
      }
    }
  }

  /** A parsed entry's key in the memo: as the reader keys the same series (idKey), else by its strings. */
  private treeKey(metric: string, node: string, labels: Readonly<Record<string, string>>): string {
    const interner = this.reader.interner;
    const ids = TREE_IDS;
    ids.n = 0;
    for (const k in labels) {
      ids.push(interner.idOf(k));
      ids.push(interner.idOf(labels[k] as string));
    }
    return idKey(interner.idOf(node), interner.idOf(metric), ids.a, 0, ids.n) ?? seriesKey({ metric, node, labels });
  }

  done(): RangeItems {
    const groups = this.g.done();
    // The memo has forgotten the series this poll did not see: the strings only they used go too.
    this.reader.interner.sweep();
    this.reader.list.release();
    return groups;
  }
}

/** A query's answer refused unparsed for its nesting (stageAll's marker). */
const TOO_DEEP: unknown = Symbol('too deep');

/**
 * The interner of a memo: its keys are made of the interner's numbers, so the two go together, from poll to poll,
 * whoever reads the answers.
 */
const interners = new WeakMap<CounterMemo, Interner>();

/** The entry list of a memo's readers (one reads at a time: an answer is read and staged in one go). */
const entryLists = new WeakMap<CounterMemo, EntryList>();

/** A memo's companion in `table`, made on first use. */
function companionOf<T extends object>(table: WeakMap<CounterMemo, T>, memo: CounterMemo, make: () => T): T {
  let x = table.get(memo);
  if (x === undefined) {
    x = make();
    table.set(memo, x);
  }
  return x;
}

const entryListOf = (memo: CounterMemo): EntryList => companionOf(entryLists, memo, () => new EntryList());
const internerOf = (memo: CounterMemo): Interner => companionOf(interners, memo, () => new Interner());

/**
 * A grouping that has read one small answer, and its staged request, kept for the life of the process from the
 * first poll on (issue 23, the range source's CPU). Between two polls no other grouping, reader or layer is alive,
 * and V8's full collections drop the object shapes (maps) of their classes, and with them every optimized function
 * whose code embeds one (`--trace-deopt`: "weak objects"). Each poll then had V8's compiler threads optimize the
 * reader and the grouping again. Objects of each shape, alive, keep the shapes and the optimized code. A grouping
 * only made is not enough (tried): the witness goes through a read, a commit and done(), as a poll's groupings do.
 * The label sets of the series are shapes too: LABEL_SHAPES keeps one per metric. At the realistic scenario, per
 * minute: 99 functions deoptimized for weak objects and 113 optimized before; 6 and 50 with both.
 */
let shapeWitness: unknown;
/** Per metric, the labels of its last series read: the shapes of label sets, kept as keepShapes keeps the classes'. */
const LABEL_SHAPES = new Map<string, object>();
const WITNESS_ANSWER =
  '[{"data":[{"metric":{"nodes":["n:8091"],"name":"kv_ops","bucket":"b","op":"get"},"values":[[1,"1"],[2,"2.5"]]}],"errors":[],"startTimestamp":1,"endTimestamp":2}]';

/** Whether keepShapes has made its witness (a test's question). */
export function shapesKept(): boolean {
  return shapeWitness !== undefined;
}

/** Made at the first poll (fetchRange), then the same object; test/stats/shape-witness.test.ts shows what it keeps. */
export function keepShapes(): unknown {
  if (shapeWitness === undefined) {
    const g = new AnswerGrouping(KV_NATIVE_MAP, kvItemOf, new Map());
    // A constant answer the reader reads (the test's witness would find the reader's code dropped otherwise).
    const staged = g.readText(WITNESS_ANSWER, ['kv_ops'], new Set()) as StagedRequest;
    g.commit(staged);
    shapeWitness = { g, staged, groups: g.done() };
  }
  return shapeWitness;
}

/** treeKey's list of label numbers. */
const TREE_IDS = new IdList();

/** The bucket a kv series belongs to; undefined for a per-node series. */
export function kvItemOf(labels: Readonly<Record<string, string>>): string | undefined {
  return labels[KV_BUCKET_LABEL];
}

/** `<remote uuid>/<source bucket>/<target bucket>`: the replication id of the tasks list. */
export function xdcrItemOf(labels: Readonly<Record<string, string>>): string | undefined {
  const u = labels[XDCR_NATIVE_LABELS.targetClusterUuid];
  const sb = labels[XDCR_NATIVE_LABELS.sourceBucket];
  const tb = labels[XDCR_NATIVE_LABELS.targetBucket];
  if (u === undefined || sb === undefined || tb === undefined) return undefined;
  // The same few hundred ids for every series of every poll: made once (a string per series was a twelfth of a
  // poll's allocations), at most XDCR_ITEMS_KEPT of them.
  let bySource = XDCR_ITEMS.get(u);
  if (bySource === undefined) XDCR_ITEMS.set(u, (bySource = new Map()));
  let byTarget = bySource.get(sb);
  if (byTarget === undefined) bySource.set(sb, (byTarget = new Map()));
  let id = byTarget.get(tb);
  if (id === undefined) {
    id = `${u}/${sb}/${tb}`;
    if (++xdcrItemsKept > XDCR_ITEMS_KEPT) {
      XDCR_ITEMS.clear();
      xdcrItemsKept = 0;
    } else byTarget.set(tb, id);
  }
  return id;
}

/** xdcrItemOf's ids: remote uuid → source bucket → target bucket → id. Emptied past XDCR_ITEMS_KEPT ids. */
const XDCR_ITEMS = new Map<string, Map<string, Map<string, string>>>();
const XDCR_ITEMS_KEPT = 10_000;
let xdcrItemsKept = 0;

/** What the range source remembers per collector between polls (in ctx.state under RANGE_STATE_KEY). */
export interface RangeState {
  readonly memo: CounterMemo;
  /**
   * When the previous poll started, on the poll's own clock (epoch ms): where the next window starts (less
   * RANGE_SLACK_SECONDS). Never an upstream time: one node's point from the future must not move it (issue 39).
   */
  lastPoll: number | undefined;
  /** Nodes already warned about for points in the future (once per node for the life of the collector). */
  readonly warnedFuture: Set<string>;
  /** Items (buckets, replications) the previous poll's answer held: the sample bound's multiplier. */
  items?: number;
  /** Until when (epoch ms) no `nodes` is sent, after the server refused the list (400). */
  noNodesUntil?: number;
  /** The last 400 text logged at warn (a repeat is logged at debug). */
  last400?: string;
  /** Each native metric's answer length in the previous poll (characters): how the next poll's batches are dealt. */
  readonly sizes: Map<string, number>;
  /** What the last poll could not read (for its note). */
  gaps?: StatsGaps | undefined;
  /** Nodes that answered series of their own in the previous poll, or have been missing since they did (missingNodes). */
  ownNodes?: ReadonlySet<string>;
}

/** NUL-prefixed: forgetGone keeps it. */
export const RANGE_STATE_KEY = '\u0000range';

export function rangeStateOf(state: Map<string, unknown>, key: string = RANGE_STATE_KEY): RangeState {
  let s = state.get(key) as RangeState | undefined;
  if (s === undefined) {
    s = { memo: new Map(), lastPoll: undefined, sizes: new Map(), warnedFuture: new Set() };
    state.set(key, s);
  }
  return s;
}

export interface RangeFetch {
  readonly groups: RangeItems;
  /** Requests made. */
  readonly requests: number;
}

/** How long the node list of statsNodes serves both collectors: a failover shows within this. */
export const STATS_NODES_MAX_AGE_MS = 15_000;

/**
 * The nodes a statistics query is asked of: the active members among the buckets' nodes (the data nodes, where
 * the kv and XDCR series live and whose sum ns_server's envelope takes), from the bucket list (which bucket_stats
 * reads every poll; shared, so the list costs bucket_stats no request and xdcr one at most every
 * STATS_NODES_MAX_AGE_MS). A failed-over (inactiveFailed) or not yet rebalanced-in (inactiveAdded) node is left
 * out: it serves no bucket data. Undefined when the list cannot be read or names none: the range API's default
 * (every node, in any membership state) then applies.
 */
export async function statsNodes(ctx: StatsContext): Promise<string[] | undefined> {
  try {
    const nodes = await ctx.shared.get('statsNodes', STATS_NODES_MAX_AGE_MS, async () => activeBucketNodes((await fetchBucketList(ctx)).buckets));
    return nodes.length > 0 ? nodes : undefined;
  } catch (err) {
    if (ctx.signal.aborted) throw err;
    ctx.log.debug({ err }, 'statistics: the bucket list could not be read; the range API asks every node');
    return undefined;
  }
}

/** The hostnames of the buckets' nodes whose membership is active (or not said), each once, in list order. Pure. */
export function activeBucketNodes(buckets: readonly BucketEntry[]): string[] {
  const out: string[] = [];
  for (const b of buckets)
    for (const n of b.nodes ?? []) {
      if (n.hostname === undefined || n.hostname === '' || (n.clusterMembership ?? 'active') !== 'active') continue;
      if (!out.includes(n.hostname)) out.push(n.hostname);
    }
  return out;
}

/** Share of the poll's remaining time a range request lets the server wait for its nodes (`timeout`). */
export const TIMEOUT_SHARE = 0.8;
/** The range API's bounds on `timeout` (menelaus_web_stats validators), ms. */
const MAX_SERVER_TIMEOUT_MS = 300_000;

/**
 * The `timeout` of a request sent now: TIMEOUT_SHARE of the poll's remaining time and of the client's own request
 * timeout, within the server's bounds. The server sends its headers at once and each query's answer as it has it
 * (menelaus_web_stats reply_with_chunked_json_array): a query held for a slow node is a pause in the body, which
 * the client's body timeout (`request_timeout`, 10 s by default) would end, failing the whole request. Pure.
 */
export function serverTimeoutMs(remainingMs: number, requestTimeoutMs: number = Number.POSITIVE_INFINITY): number {
  return Math.max(1, Math.min(MAX_SERVER_TIMEOUT_MS, Math.floor(TIMEOUT_SHARE * remainingMs), Math.floor(TIMEOUT_SHARE * requestTimeoutMs)));
}

/** An `errors` entry's reason that means the node did not answer at all (down, unreachable, or slower than `timeout`). */
const NODE_DOWN = /timed out|timeout|not available|is down|connect/i;

/** The error code an item error for a node missing from the answer carries, by its reason. */
function missingCode(why: string): ErrorCode {
  return /timed out|timeout/i.test(why) ? 'CBW_ERR_TIMEOUT' : NODE_DOWN.test(why) ? 'CBW_ERR_NETWORK' : 'CBW_ERR_HTTP';
}

/** Distinct causes of range item errors logged one by one per poll; the rest under one line. */
const MAX_ERROR_CAUSES = 20;

/**
 * The answers' error texts as item errors, aggregated per poll: one per cause (text), with the number of metrics it
 * failed as its count, so 50,000 errors entries make a few lines, not 800,000 item errors and 257 MB of debug log
 * (issue 39). Past MAX_ERROR_CAUSES causes, the rest are one more, counted.
 */
export function reportRangeErrors(ctx: Pick<StatsContext, 'itemFailed'>, errors: ReadonlyArray<{ metric: string; errors: string[] }>): void {
  const causes = new Map<string, string[]>();
  let others = 0;
  for (const r of errors) {
    for (const e of r.errors) {
      const metrics = causes.get(e);
      if (metrics !== undefined) metrics.push(r.metric);
      else if (causes.size < MAX_ERROR_CAUSES) causes.set(e, [r.metric]);
      else others++;
    }
  }
  for (const [text, metrics] of causes) {
    // The entry's text comes from upstream: bounded (RANGE_LIMITS.errorChars), and kept out of the brief a page may show.
    const names = metrics.length > 3 ? `${metrics.slice(0, 3).join(', ')} and ${metrics.length - 3} more` : metrics.join(', ');
    const err = new CbwError('CBW_ERR_HTTP', `range API error for ${names}: ${text.slice(0, RANGE_LIMITS.errorChars)}`);
    err.brief = `range API error for ${names}`;
    ctx.itemFailed(`range ${names}`, err, metrics.length);
  }
  if (others > 0) {
    const err = new CbwError('CBW_ERR_HTTP', `range API errors of ${others} more metric answers (past ${MAX_ERROR_CAUSES} causes in this poll)`);
    err.brief = 'range API errors';
    ctx.itemFailed('range (more causes)', err, others);
  }
}

/**
 * Ask the range API for every native metric of `rows`, in batches, and group the answer. Throws
 * RangeUnavailableError on 404/405, RangeForbiddenError on 403, and the first error when every request failed; a request that fails when
 * others did not costs its metrics (an item error each), never the poll.
 *
 * Partial answers (issue 37): each request asks only the active data nodes (statsNodes) and lets the server wait
 * for them TIMEOUT_SHARE of the poll's remaining time (and of the request timeout: serverTimeoutMs). A node an `errors` entry names (down: "Node is not available";
 * slow: "Request timed out"), or that answers nothing, leaves the bucket-wide and XDCR values as the merge over the
 * nodes that answered (range-groups.ts), as ns_server's envelope merges its live bucket nodes. A node found down or
 * slow is not asked again in this poll's later requests (as ns_server skips its DownHosts within a request). The
 * gap is named: one item error per node and poll, `ctx.out.statsGaps` (cbwatch_stats_nodes_missing, the landing
 * page) and the poll's note (`cbwatch check`).
 */
export async function fetchRange(
  ctx: StatsContext,
  rows: readonly NativeMapRow[],
  extra: Readonly<Record<string, string>>,
  itemOf: (labels: Readonly<Record<string, string>>) => string | undefined,
  sumOverNodes = false,
  // A cluster mid-upgrade (node-lines.ts): this line's nodes only, with its own memo and window (a state key of its own).
  line?: { readonly stateKey: string; readonly nodes: readonly string[] },
): Promise<RangeFetch> {
  keepShapes();
  const st = rangeStateOf(ctx.state, line?.stateKey);
  const now = ctx.now();
  const { from, end } = rangeWindow(now, st.lastPoll, ctx.options.interval);
  const window = end - from;
  const metrics = nativeMetricsOf(rows);
  const narrow = narrowing(rows);
  const aggregated = sumOverNodes ? aggregatedMetrics(rows) : new Map<string, 'sum' | 'max'>();
  // Read as one series over the nodes (ALL_NODES), summed or maxed.
  const summed = new Set(aggregated.keys());
  const batches = balancedBatches(metrics, MAX_QUERIES_PER_REQUEST, answerWeight(st.sizes, summed));
  // The sample bound (SAMPLE_BUDGET): a query whose worst case over the window would pass it starts later.
  const perNodeOnly = perNodeMetrics(rows);
  const fromByMetric = new Map<string, number>();
  const newestOnly = newestOnlyMetrics(rows);
  for (const m of metrics) {
    if (newestOnly.has(m)) {
      fromByMetric.set(m, end);
      continue;
    }
    const cap = maxWindowSeconds(seriesPerItem(m, narrow.get(m)), perNodeOnly.has(m) ? 1 : Math.max(1, st.items ?? DESIGN_ITEMS));
    if (end - cap > from) fromByMetric.set(m, end - cap);
  }
  const active = st.noNodesUntil !== undefined && now < st.noNodesUntil ? undefined : await statsNodes(ctx);
  // A cluster mid-upgrade: this line's nodes, those of them that are active (all of them when the list is unknown).
  let asked = line === undefined ? active : active === undefined ? [...line.nodes] : line.nodes.filter((n) => active.includes(n));
  const collector = rows[0]?.section === 'xdcr' ? 'xdcr' : 'bucket_stats';
  // Nodes found down or slow in this poll: not asked again by its later requests.
  const down = new Set<string>();
  // One request after the other, each answer grouped as soon as it is read, and read query by query (readText):
  // one request's answer and one query's parsed JSON are alive at a time, rather than every batch's. A poll has
  // up to 7 batches: a few round trips more, within the poll's deadline.
  const grouping = new AnswerGrouping(rows, itemOf, st.memo, st.sizes, { nowMs: now, maxT: now + MAX_FUTURE_SKEW_MS });
  let failed = 0;
  let first: unknown;
  // What the bounds cut or refused, counted as each request is read: a poll that then misses its deadline still
  // shows them (the 100,000-series answers of issue 39 did).
  const flushCaps = (): void => {
    for (const [what, n] of grouping.caps.counts) ctx.out.countCap(what, n);
    grouping.caps.counts.clear();
  };
  for (const names of batches) {
    flushCaps();
    if (ctx.signal.aborted) throw ctx.signal.reason;
    try {
      for (let attempt = 0; ; attempt++) {
        const up = asked?.filter((n) => !down.has(n));
        const nodes = up === undefined || up.length === 0 ? asked : up;
        const remaining = ctx.deadline === undefined ? ctx.options.timeout : ctx.deadline - performance.now();
        const res = await ctx.client.requestJson(STATS_RANGE_ROUTE, {}, stagedRequestSchema, {
          method: 'POST',
          json: buildQueries(names, extra, window, { narrow, from, end, fromByMetric, aggregated, ...(nodes !== undefined ? { nodes } : {}), timeoutMs: serverTimeoutMs(remaining, ctx.cluster.requestTimeout) }),
          allowStatus: [400, 403, 404, 405],
          parseBody: (text) => grouping.readText(text, names, summed),
        });
        if (res.status === 403) throw new RangeForbiddenError();
        if (res.status === 404 || res.status === 405) throw new RangeUnavailableError(res.status);
        if (res.status === 400) {
          const why = boundedText(res.text, MAX_400_TEXT);
          // The node list refused (a node renamed or removed since it was read): once without it, and none sent for a while.
          if (nodes !== undefined && attempt === 0 && /node|hostname/i.test(res.text)) {
            ctx.log.warn({ status: 400, body: why }, 'statistics: the range API refused the node list; asking without it for 10 minutes');
            asked = undefined;
            st.noNodesUntil = now + RETRY_NODES_MS;
            continue;
          }
          if (st.last400 !== why) ctx.log.warn({ status: 400, body: why, metrics: names.length }, 'statistics: the range API refused a request (400)');
          else ctx.log.debug({ status: 400, body: why }, 'statistics: the range API refused a request (400), as before');
          st.last400 = why;
          const err = new CbwError('CBW_ERR_HTTP', `POST ${STATS_RANGE_ROUTE} answered 400: ${why}`);
          err.brief = `POST ${STATS_RANGE_ROUTE} answered 400`;
          (err as CbwError & { status: number }).status = 400;
          throw err;
        }
        if (res.data !== undefined) grouping.commit(res.data);
        for (const [n, why] of grouping.nodeErrors) if (NODE_DOWN.test(why)) down.add(n);
        break;
      }
    } catch (err) {
      if (err instanceof RangeUnavailableError || err instanceof RangeForbiddenError) throw err;
      failed++;
      first ??= err;
      grouping.add(names.map((name): RawAnswer => ({ metric: name, failed: true })));
      if (!ctx.signal.aborted) ctx.itemFailed(`range request (${names.length} metrics)`, err);
    }
  }
  flushCaps();
  if (ctx.signal.aborted) throw ctx.signal.reason;
  if (failed > 0 && failed === batches.length) throw first;
  const groups = grouping.done();
  // Errors that name no node, aggregated per cause (issue 39); a node's, one item error per node (below).
  reportRangeErrors(ctx, grouping.errorTexts);
  const missing = missingNodes(groups, asked, collector === 'bucket_stats', st.ownNodes);
  // The nodes with series of their own, and those still silent since they had some: the next poll's `previous`.
  st.ownNodes = new Set([...groups.nodes, ...[...missing.keys()].filter((n) => st.ownNodes?.has(n) === true || groups.nodes.has(n))]);
  for (const [n, why] of missing) {
    const err = new CbwError(missingCode(why), `range API: the statistics of node ${n} are missing from the answer (${why}); bucket-wide values are sums over the nodes that answered`);
    err.brief = `range API: the statistics of node ${n} are missing`;
    ctx.itemFailed(`range node ${n}`, err);
  }
  const gaps: StatsGaps = { collector, missing, futurePoints: groups.future };
  ctx.out.statsGaps = gaps;
  st.gaps = gaps;
  for (const [n, k] of groups.future) {
    if (st.warnedFuture.has(n) || st.warnedFuture.size >= MAX_GAP_NODES) continue;
    st.warnedFuture.add(n);
    ctx.log.warn({ node: n, points: k, collector }, `statistics: node ${n} answered points more than ${MAX_FUTURE_SKEW_MS / 1000} s ahead of this exporter's clock (is its clock ahead?); they are dropped and counted in cbwatch_stats_future_points_dropped_total (warned once per node)`);
  }
  st.lastPoll = now;
  st.items = groups.items.size;
  return { groups, requests: batches.length };
}

/**
 * The nodes whose statistics this poll's answer lacks, with the reason: those an `errors` entry named and the asked
 * nodes that answered no series of their own while another node did, when they should have: always (`silent`:
 * bucket stats, where every data node has series of its own, its host's at least), or when they had some in the
 * previous poll (`previous`: XDCR, where a node may legitimately have none, but a node that had series and has none
 * now while its neighbours still do has gone silent: a clock far ahead, a stuck goxdcr). Pure.
 */
export function missingNodes(groups: RangeItems, asked: readonly string[] | undefined, silent: boolean, previous?: ReadonlySet<string>): Map<string, string> {
  const missing = new Map<string, string>();
  for (const [n, why] of groups.nodeErrors) missing.set(n, why);
  // Silent: answered no series of its own while another node did (a poll of sums alone names no node).
  if (asked !== undefined && groups.nodes.size > 0)
    for (const n of asked) {
      if (groups.nodes.has(n) || missing.has(n) || !(silent || previous?.has(n) === true)) continue;
      missing.set(n, groups.future.has(n) ? 'every point in the future: its clock is ahead?' : silent ? 'no statistics in the answer' : 'no statistics in the answer, though it had some before');
    }
  return missing;
}

/** The gaps of a collector's last poll through the range API, for the poll's note. Pure. */
export function gapsNote(g: StatsGaps | undefined): string {
  if (g === undefined) return '';
  const parts: string[] = [];
  if (g.missing.size > 0) parts.push(`partial: ${[...g.missing].map(([n, why]) => `node ${n} missing (${why})`).join(', ')}`);
  if (g.futurePoints.size > 0) parts.push(`clock ahead: ${[...g.futurePoints].map(([n, k]) => `node ${n} (${k} future points dropped)`).join(', ')}`);
  return parts.join('; ');
}
