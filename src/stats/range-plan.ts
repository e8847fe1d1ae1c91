/**
 * What one poll of the range source asks: the window, the sample budget, the queries and their batches. Pure.
 *
 * Window (rangeWindow): on the 10 s grid (`step`, the native scrape interval), from the instant after the previous
 * poll's last one (the first poll: one interval and RANGE_SLACK_SECONDS back; at most MAX_WINDOW_SECONDS) to the
 * poll's clock rounded down to the step. Every query of a poll ends at the same instant, so each series' newest
 * point, and its previous one, are at the same instants and the parts of a ratio cover the same span. Only the
 * poll's own clock sets the window: an upstream time is data, never control. No coarser step: an increase over
 * fewer points would miss a counter reset between them.
 *
 * Queries (buildQueries): one per native metric that the mapping table (native-map.ts) reads, with no bucket or
 * replication matcher (the answer holds every item; items are told apart by their labels) and no `applyFunctions`
 * (raw values: rates are computed from the counters, range-values.ts). The label values every row reading a metric
 * constrains are asked (narrowing), so the answer holds no series nothing reads. A metric is asked:
 * - per node by default: per-node families come from the same answer, and a reset on one node is seen as such;
 * - with `nodesAggregation` `sum` or `max` when only a bucket-wide value is read and every row reading it takes the
 *   newest point (sum) or is a `max` row taking the newest point or the window mean (aggregatedMetrics). The newest
 *   point of the summed series is the sum of the nodes' newest points (same instants), and no increase is taken of
 *   a summed series, so a reset on one node is never hidden by the sum;
 * - for the window's last instant alone when every row reading it takes the newest point (newestOnlyMetrics);
 * - from a later instant than the window's start when its worst case would pass the sample budget (maxWindowSeconds).
 *
 * Batches (balancedBatches): at most MAX_QUERIES_PER_REQUEST queries a request, dealt out so that the requests'
 * answers are about the same size: a request's whole answer is in memory at once, as its bytes and as its text.
 */
import { nativeMetricsOf } from './native-map.js';
import type { Matchers, NativeMapRow } from './native-map.js';
import { rowMetrics } from './range-groups.js';

/**
 * Queries per POST: the bound on one request's body and answer (the answer grows with buckets × nodes). The kv rows
 * read 82 to 86 native metrics (by server line) and the XDCR rows 16: a poll of both collectors makes 8 + 2 requests.
 */
export const MAX_QUERIES_PER_REQUEST = 11;

/** The native metrics are scraped every 10 s by default; a finer step only repeats points. */
export const RANGE_STEP_SECONDS = 10;

/**
 * How much longer than an interval the first poll's window is (a rate needs two points). Later windows start at the
 * instant after the previous poll's last one, whose points the counter memo holds: a series' value counts only the
 * points after its previous newest one, so older points would be read only to be thrown away.
 */
export const RANGE_SLACK_SECONDS = 2 * RANGE_STEP_SECONDS;

/** The longest window asked (after a long gap, e.g. polls that failed): the range API keeps more, but a rate over an hour says little of now. */
export const MAX_WINDOW_SECONDS = 3600;

/**
 * The bound on one query's samples. Couchbase's Prometheus refuses a query that would load more than
 * `prometheus.queryMaxSamples` samples (default 200,000, menelaus_web_stats params) with an error for that query on
 * that node; each node's Prometheus holds only that node's series, so the bound applies per node: (series of the
 * query on one node) × (points per series). cbwatch asks at most SAMPLE_BUDGET, 10% under the limit.
 *
 * The worst case is DESIGN_ITEMS buckets after a gap of MAX_WINDOW_SECONDS (361 points at the 10 s step): a query
 * whose series × points would pass the budget starts later (maxWindowSeconds, with seriesPerItem's count), e.g. for
 * 1,000 buckets:
 * - kv_ops, narrowed to the ops cbwatch maps, 17 series a bucket (the results of get, delete, incr, decr and cas,
 *   and six ops without one): 10 points, 90 s;
 * - kv_dcp_*, asked un-narrowed and taken as UNNARROWED_DCP_TYPES series a bucket: 11 points, 100 s;
 * - kv_vb_* by the four vBucket states: 45 points, 440 s; narrowed to two states: 90 points, 890 s;
 * - one series a bucket: 180 points, 1,790 s; one a node (sys_*): the whole window.
 * A counter's increase still counts from its previous newest point (the memo), so a rate over the gap stays exact;
 * only a window mean covers less. Splitting a query by bucket would be needed past floor(SAMPLE_BUDGET / (17 × 2))
 * = 5,294 buckets (two points of kv_ops); Couchbase allows far fewer.
 */
export const QUERY_MAX_SAMPLES = 200_000;
export const SAMPLE_BUDGET = 180_000;

/** The item count the bound is designed for, and assumed before a poll has counted the items. */
export const DESIGN_ITEMS = 1000;

/**
 * The connection types an un-narrowed kv_dcp_* metric is taken to have per bucket and node (seriesPerItem): the
 * named types the rows read, kv_engine's `:total` aggregate and the types no row names (backup, a connector's own …).
 */
export const UNNARROWED_DCP_TYPES = 16;

/**
 * The most series a query of `metric` answers per item (bucket, replication) on one node, given its narrowing:
 * kv_ops by its ops' results (stats.def.h), kv_dcp_* without a connection_type narrowing as UNNARROWED_DCP_TYPES, a
 * `state` label not narrowed by the four vBucket states, else the product of the narrowed labels' value counts. Pure.
 */
export function seriesPerItem(metric: string, narrow: Readonly<Record<string, readonly string[]>> | undefined): number {
  if (metric === 'kv_ops') {
    const results: Record<string, number> = { get: 2, delete: 2, incr: 2, decr: 2, cas: 3 };
    const ops = narrow?.op;
    // Not narrowed: every op of stats.def.h's kv_ops (and get_meta_for_set_meta, flush, lock).
    if (ops === undefined) return 17 + 3;
    return ops.reduce((a, op) => a + (results[op] ?? 1), 0);
  }
  // kv_dcp_* is asked un-narrowed: ep_dcp_other_* is ns_server's `not_any` of the named connection types, so the
  // answer must hold the types no row names.
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

/** A point this much later than the poll's clock is from a node whose clock is ahead: dropped, counted against its node. */
export const MAX_FUTURE_SKEW_MS = 60_000;

/**
 * A poll's window, epoch seconds, on multiples of the step: `end` is the poll's clock rounded down, `from` the
 * instant after the previous poll's `end` (its start rounded down), whose points the counter memo holds (the first
 * poll: one interval and RANGE_SLACK_SECONDS back; at least one step, never more than MAX_WINDOW_SECONDS). Every
 * query of the poll, and of the poll before, is evaluated on the same 10 s grid up to the same `end`: each series'
 * newest point, and the previous poll's, are at the same instants, so the numerator and the denominator of a ratio
 * cover the same span. Only the poll's own clock sets it. Pure.
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
  /** The nodes to ask for a host metric (isHostMetric): every active node of the cluster; else `nodes`. */
  readonly hostNodes?: readonly string[];
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
      ...nodesOf(name, o),
      ...(o.timeoutMs !== undefined ? { timeout: o.timeoutMs } : {}),
    };
  });
}

/**
 * Whether a native metric is a host stat: the `@system` section (stat_names_mappings.erl, is_system_stat and the
 * rest_requests / hibernated_* clauses: sys_* and cm_* series), which menelaus_stats section_nodes("@system") reads
 * from every active node of any service (ns_cluster_membership:actual_active_nodes), not only the data nodes.
 */
export function isHostMetric(name: string): boolean {
  return name.startsWith('sys_') || name.startsWith('cm_');
}

function nodesOf(name: string, o: QueryOptions): { nodes?: string[] } {
  const nodes = o.hostNodes !== undefined && isHostMetric(name) ? o.hostNodes : o.nodes;
  return nodes !== undefined ? { nodes: [...nodes] } : {};
}

/**
 * The `op` values kv_engine serves with `result="miss"` (include/statistics/stats.def.h: get_misses, delete_misses,
 * incr_misses, decr_misses, cas_misses): a row that reads every miss (`misses`) reads those ops only, so kv_ops can
 * be asked for the ops cbwatch maps without losing one of its series.
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

/** What planPoll decides for one poll. */
export interface PollPlan {
  /** The window (epoch seconds on the step) and its length. */
  readonly from: number;
  readonly end: number;
  readonly window: number;
  readonly narrow: ReadonlyMap<string, Readonly<Record<string, readonly string[]>>>;
  readonly aggregated: ReadonlyMap<string, 'sum' | 'max'>;
  /** The metrics read as one series over the nodes (ALL_NODES), summed or maxed. */
  readonly summed: ReadonlySet<string>;
  /** The metrics' names, per request. */
  readonly batches: string[][];
  /** Per metric, a later first instant than `from`: the newest point alone, or the sample budget's cut. */
  readonly fromByMetric: ReadonlyMap<string, number>;
}

/**
 * One poll's plan for the native metrics of `rows`: its window, each query's narrowing, aggregation over the nodes
 * (only when `sumOverNodes`: a bucket-wide value is all that is read) and first instant, and the batches.
 * `lastPollMs`, `items` and `sizes` are what the previous poll left (RangeState). Pure.
 */
export function planPoll(
  rows: readonly NativeMapRow[],
  o: { readonly nowMs: number; readonly lastPollMs: number | undefined; readonly intervalMs: number; readonly items: number | undefined; readonly sizes: ReadonlyMap<string, number>; readonly sumOverNodes: boolean },
): PollPlan {
  const { from, end } = rangeWindow(o.nowMs, o.lastPollMs, o.intervalMs);
  const metrics = nativeMetricsOf(rows);
  const narrow = narrowing(rows);
  const aggregated = o.sumOverNodes ? aggregatedMetrics(rows) : new Map<string, 'sum' | 'max'>();
  const summed = new Set(aggregated.keys());
  const batches = balancedBatches(metrics, MAX_QUERIES_PER_REQUEST, answerWeight(o.sizes, summed));
  // The sample bound (SAMPLE_BUDGET): a query whose worst case over the window would pass it starts later.
  const perNodeOnly = perNodeMetrics(rows);
  const newestOnly = newestOnlyMetrics(rows);
  const fromByMetric = new Map<string, number>();
  for (const m of metrics) {
    if (newestOnly.has(m)) {
      fromByMetric.set(m, end);
      continue;
    }
    const cap = maxWindowSeconds(seriesPerItem(m, narrow.get(m)), perNodeOnly.has(m) ? 1 : Math.max(1, o.items ?? DESIGN_ITEMS));
    if (end - cap > from) fromByMetric.set(m, end - cap);
  }
  return { from, end, window: end - from, narrow, aggregated, summed, batches, fromByMetric };
}
