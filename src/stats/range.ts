/**
 * The range source: statistics of Couchbase 7.0+ from `POST /pools/default/stats/range`, batched, turned into the
 * same sample arrays the envelopes give, so that the collectors' rules apply unchanged.
 *
 * Requests: one query per native series name that the mapping table (native-map.ts) reads, with no bucket or
 * replication matcher (the answer holds every bucket or replication; items are told apart by their labels), no
 * `applyFunctions` (raw values: a rate is computed here, exactly, from the counter) and no `nodesAggregation` (one
 * series per node: per-node families come from the same answer, and a counter reset on one node is seen as such),
 * except where only a sum over the nodes is read (`sumOverNodes`: bucket_stats without per_node): a metric that
 * only levels read (level, level_ratio, complement_ratio; never a host gauge averaged over the nodes) is asked
 * with `nodesAggregation: "sum"`, one series instead of one per node. That is exact: those rows use the newest
 * point summed over the nodes, which is the newest point of the summed series (same instants); no increase is
 * taken of a summed series, so a reset on one node can never be hidden by the sum (metrics that a rate, an
 * increase ratio or a window mean reads stay per node). No coarser `step` either: an increase over fewer points
 * would miss a reset between them.
 * At most MAX_QUERIES_PER_REQUEST queries per POST: the bucket stats (87 native names) take 2 requests per poll and
 * the XDCR stats 1, whatever the number of buckets, nodes and replications (the envelopes need one request per
 * bucket, per bucket and node with per_node, and per replication and stat).
 * A poll's batches are asked one after the other, each answer grouped as soon as it is read (fetchRange), query by
 * query: a request's body is sliced into its queries' answers without being parsed (arrayElementBounds) and each
 * slice parsed on its own (AnswerGrouping.readText).
 *
 * Window: from the newest point of the previous answer (absolute `start`; the first poll: one interval and
 * RANGE_SLACK_SECONDS back from now) to now, `step` 10 s (the native scrape interval). Each point is the latest
 * scraped value at that instant. Label matchers that every row reading a metric shares are asked too (`any` over
 * their values: the kv_ops operations cbwatch maps), so the answer holds no series nothing reads.
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
 * Failures: an entry of a query's `errors` (a node that did not answer) removes that metric's values on that node,
 * and so every value that needs them (on that node, and the bucket-wide sums): counted as one item error each. A
 * POST that fails removes the values of its metrics. 404, 405 and 403 on the endpoint mean the cluster (or a
 * proxy in front of it) does not offer the range API: RangeUnavailableError, which `auto` answers by falling back
 * to the envelopes (source.ts).
 */
import { CbwError } from '../errors.js';
import type { CollectContext } from '../collectors/types.js';
import type { CollectorName } from '../config/schema.js';
import { z } from 'zod';
import { KV_BUCKET_LABEL, nativeMetricsOf, XDCR_NATIVE_LABELS } from './native-map.js';
import type { Matchers, NativeMapRow, NativeSeries } from './native-map.js';

export const STATS_RANGE_ROUTE = '/pools/default/stats/range';
/** Queries per POST: the bound on one request's body and answer (the answer grows with buckets × nodes). */
export const MAX_QUERIES_PER_REQUEST = 50;
/** The native metrics are scraped every 10 s by default; a finer step only repeats points. */
export const RANGE_STEP_SECONDS = 10;
/** How far before the previous newest point the next window starts. */
export const RANGE_SLACK_SECONDS = 2 * RANGE_STEP_SECONDS;
/** The longest window asked (after a long gap, e.g. polls that failed): the range API keeps more, but a rate over an hour says little of now. */
export const MAX_WINDOW_SECONDS = 3600;

/** The endpoint is not there (404, 405) or not allowed (403): the cluster, or a proxy in front of it, does not offer it. */
export class RangeUnavailableError extends CbwError {
  readonly status: number;
  constructor(status: number) {
    super('CBW_ERR_HTTP', `POST ${STATS_RANGE_ROUTE} answered ${status}: the range API is not available on this cluster (or a proxy in front of it refuses it)`);
    this.status = status;
  }
}

export interface RangeQuery {
  readonly metric: ReadonlyArray<{ readonly label: string; readonly value: string | readonly string[]; readonly operator?: string }>;
  readonly start: number;
  readonly step: number;
  readonly nodesAggregation?: 'sum';
}

/** The pseudo-node of a series summed over the nodes (`nodesAggregation: "sum"`). */
export const ALL_NODES = '\u0000all';

const LEVEL_DERIVES: ReadonlySet<NativeMapRow['derive']> = new Set(['level', 'level_ratio', 'complement_ratio']);

/**
 * The metrics whose sum over the nodes is all that a bucket-wide value needs: every row reading them takes the
 * newest point (a level or a ratio of levels) and adds the nodes up (not `acrossNodes: 'mean'`). Pure.
 */
export function summableMetrics(rows: readonly NativeMapRow[]): Set<string> {
  const ok = new Set<string>();
  const no = new Set<string>();
  for (const r of rows) {
    const sums = LEVEL_DERIVES.has(r.derive) && r.acrossNodes === undefined;
    for (const m of rowMetrics(r)) (sums ? ok : no).add(m);
  }
  for (const m of no) ok.delete(m);
  return ok;
}

/** One query per metric name, with the extra matchers (e.g. pipelineType) every row of that metric shares. */
export function buildQueries(
  metrics: readonly string[],
  extra: Readonly<Record<string, string>>,
  windowSeconds: number,
  narrow: ReadonlyMap<string, Readonly<Record<string, readonly string[]>>> = new Map(),
  from?: number,
  summed: ReadonlySet<string> = new Set(),
): RangeQuery[] {
  // From the previous answer's newest point (epoch seconds) when there is one, else a window back from now.
  const start = from !== undefined ? from : -Math.max(RANGE_STEP_SECONDS, Math.min(MAX_WINDOW_SECONDS, Math.ceil(windowSeconds)));
  return metrics.map((name) => ({
    metric: [
      { label: 'name', value: name },
      ...Object.entries(extra).map(([label, value]) => ({ label, value })),
      ...Object.entries(narrow.get(name) ?? {}).map(([label, values]) => ({ label, value: values.length === 1 ? (values[0] as string) : [...values], operator: values.length === 1 ? '=' : 'any' })),
    ],
    start,
    step: RANGE_STEP_SECONDS,
    ...(summed.has(name) ? { nodesAggregation: 'sum' as const } : {}),
  }));
}

/**
 * Per metric, the labels every row reading it constrains, with the union of their values: the query asks only for
 * those (e.g. the kv_ops ops cbwatch maps), never for less than some row needs.
 */
export function narrowing(rows: readonly NativeMapRow[]): Map<string, Record<string, string[]>> {
  const per = new Map<string, Array<Matchers>>();
  for (const r of rows) for (const x of [...r.series, ...(r.denominator ?? [])]) (per.get(x.metric) ?? per.set(x.metric, []).get(x.metric) as Matchers[]).push(x.matchers);
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

export function chunk<T>(xs: readonly T[], n: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < xs.length; i += n) out.push(xs.slice(i, i + n));
  return out;
}

export interface Point {
  /** Epoch ms. */
  readonly t: number;
  readonly v: number;
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
  for (const d of head.data) {
    const e = entryOf(d, summed);
    if (e === undefined) continue;
    const points = pointsOf(e.values);
    if (points.length === 0) continue;
    out.series.push({ metric, node: e.node, labels: e.labels, points });
  }
  return out;
}

/** An answer's `errors` (the nodes they name; '*' when one names none) and its `data` entries. Pure. */
function answerHead(raw: unknown): { erroredNodes: Set<string>; errors: string[]; data: readonly unknown[] } {
  const erroredNodes = new Set<string>();
  const errors: string[] = [];
  if (raw === null || typeof raw !== 'object') {
    erroredNodes.add('*');
    errors.push('answer is not an object');
    return { erroredNodes, errors, data: [] };
  }
  const r = raw as { data?: unknown; errors?: unknown };
  if (Array.isArray(r.errors)) {
    for (const e of r.errors as unknown[]) {
      const node = e !== null && typeof e === 'object' ? str((e as { node?: unknown }).node) : undefined;
      erroredNodes.add(node ?? '*');
      const why = e !== null && typeof e === 'object' ? (e as { error?: unknown }).error : e;
      errors.push(`${node ?? 'cluster'}: ${typeof why === 'string' ? why : JSON.stringify(why) ?? 'error'}`);
    }
  }
  if (!Array.isArray(r.data)) {
    if (errors.length === 0) {
      erroredNodes.add('*');
      errors.push('answer has no data array');
    }
    return { erroredNodes, errors, data: [] };
  }
  return { erroredNodes, errors, data: r.data as unknown[] };
}

/**
 * One `data` entry: its labels (the string ones; `nodes` apart), its node, its raw `values`. Undefined for an odd
 * entry, or one of several nodes (an aggregate: not a node's value) unless the sum was asked for (`summed`: the
 * series is ALL_NODES's). This runs for every series of every poll (about 23,000 at 100 buckets on 4 nodes): no
 * per-entry arrays (for…in rather than Object.entries).
 */
function entryOf(d: unknown, summed: boolean): { labels: Record<string, string>; node: string; values: readonly unknown[] } | undefined {
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
      if (Array.isArray(v) && v.length === 1 && typeof v[0] === 'string') node = v[0];
    } else if (typeof v === 'string') labels[k] = v;
  }
  if (summed) node = ALL_NODES;
  if (node === undefined) return undefined;
  return { labels, node, values: values as unknown[] };
}

/** What readPoint read last: the point's time (epoch ms) and value. Scratch, so that reading allocates nothing. */
const READ = { t: 0, v: 0 };

/**
 * Read one raw point, `[time, value]` (time in epoch s, a number or a numeric string; value a number or, as the API
 * sends it, a string), into READ. False when it is unusable (not such a pair, or not finite).
 */
function readPoint(p: unknown): boolean {
  if (!Array.isArray(p) || p.length < 2) return false;
  const p0: unknown = p[0];
  const p1: unknown = p[1];
  const t = typeof p0 === 'number' ? p0 : Number(p0);
  const v = typeof p1 === 'number' ? p1 : typeof p1 === 'string' ? Number(p1) : Number.NaN;
  if (!Number.isFinite(t) || !Number.isFinite(v)) return false;
  READ.t = t * 1000;
  READ.v = v;
  return true;
}

/** The usable points of an entry's `values`, oldest first (sorted only when they do not come so). Pure. */
export function pointsOf(values: readonly unknown[]): Point[] {
  const points: Point[] = [];
  let ordered = true;
  for (let i = 0; i < values.length; i++) {
    if (!readPoint(values[i])) continue;
    const at = READ.t;
    const v = READ.v;
    if (points.length > 0 && at < (points[points.length - 1] as Point).t) ordered = false;
    points.push({ t: at, v });
  }
  if (!ordered) points.sort((a, b) => a.t - b.t);
  return points;
}

/**
 * The previous newest point of a native series, kept between polls and updated in place (a poll makes no new
 * record for a series it already knows). `gen`: the grouping that last saw it; a grouping's end forgets the
 * records it did not see.
 */
export interface MemoPoint {
  t: number;
  v: number;
  gen?: number;
}

/** Groupings made so far: each has its own number, so a poll cut short leaves nothing to reset. */
let groupings = 0;

/** The previous newest point of each native series (node, metric, labels), kept between polls. */
export type CounterMemo = Map<string, MemoPoint>;

/**
 * A native series' key in the memo: node, metric, then its labels in name order. The `name` label, which the
 * range API sets to the metric's own name, is left out when it is that: a seventh of the key's length, at 100,000
 * series and more.
 */
export function seriesKey(s: Pick<RangeSeries, 'metric' | 'node' | 'labels'>): string {
  const parts = KEY_PARTS;
  parts.length = 2;
  parts[0] = s.node;
  parts[1] = s.metric;
  for (const k in s.labels) {
    const v = s.labels[k] ?? '';
    if (k !== 'name' || v !== s.metric) parts.push(k, v);
  }
  return keyOfParts(parts);
}

/** seriesKey's scratch list: node, metric, then label name and value pairs. */
const KEY_PARTS: string[] = [];

/**
 * The key of [node, metric, name, value, name, value…]: the pairs in name order (an insertion sort of a handful,
 * in place: Array.prototype.sort allocated about 450 bytes a call), joined into one flat string (a template
 * literal per label built a chain of intermediate strings). It runs for every series of every poll.
 */
function keyOfParts(parts: string[]): string {
  for (let i = 4; i < parts.length; i += 2) {
    const k = parts[i] as string;
    const v = parts[i + 1] as string;
    let j = i - 2;
    while (j >= 2 && (parts[j] as string) > k) {
      parts[j + 2] = parts[j] as string;
      parts[j + 3] = parts[j + 1] as string;
      j -= 2;
    }
    parts[j + 2] = k;
    parts[j + 3] = v;
  }
  return parts.join('\u0000');
}

/** What one native series gives this poll. */
export interface SeriesValue {
  /** The newest point. */
  readonly newest: Point;
  /** Increase since the previous newest point (resets counted from 0), and the seconds it spans; absent when not known. */
  readonly inc?: number;
  readonly secs?: number;
  /** Mean of the points since the previous newest point (the first poll: of every point of the window). */
  readonly mean?: number;
}

/**
 * Pure. The newest value of a series and, when the previous newest point is known (else: from the window's first
 * point), the exact increase since then. `prev` newer than this answer's newest: a clock step back, nothing known.
 */
export function seriesValue(points: readonly Point[], prev: Point | undefined): SeriesValue | undefined {
  const newest = points[points.length - 1];
  if (newest === undefined) return undefined;
  if (prev !== undefined && newest.t <= prev.t) return { newest };
  // One pass over the points after the base: their mean, and the increase from the base (a decrease is a reset).
  let base = prev;
  let i = 0;
  if (base === undefined) base = points[0] as Point;
  else while (i < points.length && (points[i] as Point).t <= base.t) i++;
  let sum = 0;
  let inc = 0;
  let last = base.v;
  const first = i;
  for (; i < points.length; i++) {
    const v = (points[i] as Point).v;
    sum += v;
    // The first answer's base is its own first point: part of the mean, no increase of its own.
    if (prev !== undefined || i > 0) inc += v >= last ? v - last : v;
    last = v;
  }
  const n = points.length - first;
  if (n === 0) return { newest };
  const mean = sum / n;
  const secs = (newest.t - base.t) / 1000;
  // A first answer of one point: a mean, no increase.
  if (secs <= 0 || (prev === undefined && points.length < 2)) return { newest, mean };
  return { newest, inc, secs, mean };
}

/**
 * `seriesValue(pointsOf(values), prev)` in one pass over the raw `values`, without building the points, when they
 * come oldest first (as the range API sends them); otherwise through those two. Undefined when no point is usable.
 * Pure; a test holds the two ways equal.
 */
export function rawSeriesValue(values: readonly unknown[], prev: Point | undefined): SeriesValue | undefined {
  let n = 0;
  let firstT = 0;
  let lastT = 0;
  let lastV = 0;
  let sum = 0;
  let count = 0;
  let inc = 0;
  let last = prev === undefined ? 0 : prev.v;
  for (let i = 0; i < values.length; i++) {
    if (!readPoint(values[i])) continue;
    const at = READ.t;
    const v = READ.v;
    if (n > 0 && at < lastT) return seriesValue(pointsOf(values), prev);
    if (n === 0) firstT = at;
    n++;
    lastT = at;
    lastV = v;
    // As seriesValue: the first answer counts every point in the mean and the increase from its first point;
    // a later one only the points after the previous newest, the increase from it.
    if (prev === undefined || at > prev.t) {
      sum += v;
      count++;
      if (prev !== undefined || n > 1) inc += v >= last ? v - last : v;
      last = v;
    }
  }
  if (n === 0) return undefined;
  const newest: Point = { t: lastT, v: lastV };
  if (prev !== undefined && lastT <= prev.t) return { newest };
  const mean = sum / count;
  const secs = (lastT - (prev === undefined ? firstT : prev.t)) / 1000;
  if (secs <= 0 || (prev === undefined && n < 2)) return { newest, mean };
  return { newest, inc, secs, mean };
}

/** A row's matchers as a list, made once per Matchers object (the table's rows are built once). */
const matcherLists = new WeakMap<Matchers, ReadonlyArray<readonly [string, string | readonly string[]]>>();

function matches(labels: Readonly<Record<string, string>>, m: Matchers): boolean {
  let list = matcherLists.get(m);
  if (list === undefined) {
    list = Object.entries(m);
    matcherLists.set(m, list);
  }
  for (let i = 0; i < list.length; i++) {
    const [k, want] = list[i] as readonly [string, string | readonly string[]];
    const have = labels[k];
    if (have === undefined) return false;
    if (typeof want === 'string' ? have !== want : !want.includes(have)) return false;
  }
  return true;
}

/** Per item (a bucket, a replication) and node: the values of every native series of the answer. */
interface Cell {
  /** Per index of the metric in `metricIndex`: the values of its series on this node. */
  readonly values: Map<string, Array<{ labels: Readonly<Record<string, string>>; value: SeriesValue }>>;
  newest: number;
}

export interface RangeItems {
  /** item → node → cell */
  readonly items: Map<string, Map<string, Cell>>;
  /** Series without the item label (kv rows with perBucket false): node → cell. */
  readonly nodeWide: Map<string, Cell>;
  /** metric → nodes whose answer is missing ('*': all). */
  readonly errored: Map<string, Set<string>>;
  /** Every node seen. */
  readonly nodes: Set<string>;
}

/**
 * Group the answers' series by item and node, computing each series' value against the memo (which is replaced by
 * this answer's newest points: series no longer answered are forgotten). Pure but for `memo`.
 */
export function groupSeries(results: readonly QueryResult[], itemOf: (labels: Readonly<Record<string, string>>) => string | undefined, memo: CounterMemo): RangeItems {
  const g = new Grouping(itemOf, memo);
  for (const r of results) {
    g.errors(r.metric, r.erroredNodes);
    for (const s of r.series) {
      const key = seriesKey(s);
      g.put(key, s.metric, s.node, s.labels, seriesValue(s.points, memo.get(key)));
    }
  }
  return g.done();
}

/** One query's answer as fetchRange has it: the raw answer, or a request that failed (every node errored). */
export type RawAnswer = { readonly metric: string; readonly raw: unknown; readonly summed: boolean } | { readonly metric: string; readonly failed: true };

/**
 * `groupSeries(answers.map(parseQueryAnswer))` without the parsed series in between: each entry's value comes
 * straight from its raw `values` (rawSeriesValue). At 100 buckets on 4 nodes a poll has about 23,000 series of 3
 * to 6 points; the points, series and per-answer arrays were half of its allocations. Also returns each answer's
 * error texts (for the item errors). Pure but for `memo`; a test holds it equal to the two steps.
 */
export function groupAnswers(answers: readonly RawAnswer[], itemOf: (labels: Readonly<Record<string, string>>) => string | undefined, memo: CounterMemo): { groups: RangeItems; errors: Array<{ metric: string; errors: string[] }> } {
  const g = new AnswerGrouping(itemOf, memo);
  g.add(answers);
  return { groups: g.done(), errors: g.errorTexts };
}

/**
 * One series of a staged query: what Grouping.put will be given. The memo record when the series has one (its
 * key, a string of about 100 characters, then dies young instead of living until the commit), else the key.
 */
interface StagedSeries {
  readonly key: string | undefined;
  readonly rec: MemoPoint | undefined;
  readonly node: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: SeriesValue;
}

/** One query's answer, read but not yet added to the groups (AnswerGrouping.stage). */
interface StagedQuery {
  readonly metric: string;
  readonly erroredNodes: Set<string>;
  readonly errors: string[];
  readonly series: StagedSeries[];
}

/** One request's answers, read in full and ready to add (AnswerGrouping.readText, then commit). */
export class StagedRequest {
  constructor(readonly queries: readonly StagedQuery[]) {}
}

/** The schema of a request read by AnswerGrouping.readText: staged, or (not an array) what JSON.parse made of it. */
export const stagedRequestSchema = z.custom<StagedRequest>((v) => v instanceof StagedRequest, { error: 'expected an array' });

/**
 * groupAnswers answer by answer: fetchRange adds each request's answers as it has them, then asks for the groups.
 * An answer is first staged (its series read and valued against the memo, nothing changed), then committed.
 */
export class AnswerGrouping {
  private readonly g: Grouping;
  /** Each answer's error texts (for the item errors), in the order added. */
  readonly errorTexts: Array<{ metric: string; errors: string[] }> = [];

  constructor(itemOf: (labels: Readonly<Record<string, string>>) => string | undefined, private readonly memo: CounterMemo) {
    this.g = new Grouping(itemOf, memo);
  }

  add(answers: readonly RawAnswer[]): void {
    for (const a of answers) {
      if ('failed' in a) this.g.errors(a.metric, new Set(['*']));
      else this.commitQuery(this.stage(a.metric, a.raw, a.summed));
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
    const bounds = arrayElementBounds(text);
    if (bounds !== undefined) return this.stageAll(names, summed, bounds.length / 2, (i) => parseSlice(text, bounds[2 * i] as number, bounds[2 * i + 1] as number));
    // Not an array as the scan sees it: parsed whole, which decides (and throws when it is not JSON).
    const raw: unknown = JSON.parse(text);
    return Array.isArray(raw) ? this.stageAll(names, summed, raw.length, (i) => raw[i]) : raw;
  }

  /** Add a request read by readText. */
  commit(request: StagedRequest): void {
    for (const q of request.queries) this.commitQuery(q);
  }

  /** Every element is read (an element past the names is still parsed: a body that is not JSON fails whole). */
  private stageAll(names: readonly string[], summed: ReadonlySet<string>, count: number, element: (i: number) => unknown): StagedRequest {
    const queries: StagedQuery[] = [];
    for (let i = 0; i < Math.max(count, names.length); i++) {
      const raw = i < count ? element(i) : undefined;
      const name = names[i];
      if (name !== undefined) queries.push(this.stage(name, raw, summed.has(name)));
    }
    return new StagedRequest(queries);
  }

  /** One query's answer, valued against the memo as Grouping.put would leave it, series by series. Changes nothing. */
  private stage(metric: string, raw: unknown, summed: boolean): StagedQuery {
    const head = answerHead(raw);
    const series: StagedSeries[] = [];
    // A series the answer repeats counts from its previous occurrence, as put() would have set the memo to.
    let repeated: Map<string, Point> | undefined;
    for (const d of head.data) {
      const e = entryOf(d, summed);
      if (e === undefined) continue;
      const key = seriesKey({ metric, node: e.node, labels: e.labels });
      const rec = this.memo.get(key);
      const value = rawSeriesValue(e.values, repeated?.get(key) ?? rec);
      if (value === undefined) continue;
      (repeated ??= new Map()).set(key, value.newest);
      series.push({ key: rec === undefined ? key : undefined, rec, node: e.node, labels: e.labels, value });
    }
    return { metric, erroredNodes: head.erroredNodes, errors: head.errors, series };
  }

  private commitQuery(q: StagedQuery): void {
    this.g.errors(q.metric, q.erroredNodes);
    if (q.errors.length > 0) this.errorTexts.push({ metric: q.metric, errors: q.errors });
    for (const s of q.series) this.g.put(s.key, q.metric, s.node, s.labels, s.value, s.rec);
  }

  done(): RangeItems {
    return this.g.done();
  }
}

const enum Ch {
  Quote = 0x22,
  Comma = 0x2c,
  Backslash = 0x5c,
  OpenSquare = 0x5b,
  CloseSquare = 0x5d,
  OpenCurly = 0x7b,
  CloseCurly = 0x7d,
}

function isJsonSpace(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

/** The index of the quote that ends the string opening at `at`, or -1. */
function stringEnd(text: string, at: number): number {
  let j = at;
  for (;;) {
    j = text.indexOf('"', j + 1);
    if (j < 0) return -1;
    let k = j - 1;
    while (text.charCodeAt(k) === Ch.Backslash) k--;
    // An even run of backslashes before it escapes nothing: the string ends here.
    if ((j - 1 - k) % 2 === 0) return j;
  }
}

/**
 * The [start, end) offsets of the elements of a text that is a JSON array at its top level (start, end, start,
 * end…), found without parsing them: a string is skipped whole (a bracket or comma in it is text), brackets
 * are counted. Undefined when the scan cannot read the text as such an array (the caller then parses it whole,
 * which decides); whether each element is JSON is left to its own parse. Pure.
 */
export function arrayElementBounds(text: string): number[] | undefined {
  const n = text.length;
  let i = 0;
  while (i < n && isJsonSpace(text.charCodeAt(i))) i++;
  if (text.charCodeAt(i) !== Ch.OpenSquare) return undefined;
  const out: number[] = [];
  let depth = 0;
  let start = -1;
  for (i++; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === Ch.Quote) {
      if (depth === 0 && start < 0) start = i;
      i = stringEnd(text, i);
      if (i < 0) return undefined;
    } else if (c === Ch.OpenSquare || c === Ch.OpenCurly) {
      if (depth === 0 && start < 0) start = i;
      depth++;
    } else if (c === Ch.CloseSquare || c === Ch.CloseCurly) {
      if (depth > 0) {
        depth--;
        continue;
      }
      if (c !== Ch.CloseSquare) return undefined;
      // The array's end: after an element, or with none at all (a comma before it is not JSON).
      if (start >= 0) out.push(start, i);
      else if (out.length > 0) return undefined;
      for (i++; i < n; i++) if (!isJsonSpace(text.charCodeAt(i))) return undefined;
      return out;
    } else if (depth === 0) {
      if (c === Ch.Comma) {
        if (start < 0) return undefined;
        out.push(start, i);
        start = -1;
      } else if (start < 0 && !isJsonSpace(c)) start = i;
    }
  }
  return undefined;
}

/** JSON.parse of text[start, end); a SyntaxError names the position in the whole text, never its content. */
function parseSlice(text: string, start: number, end: number): unknown {
  try {
    return JSON.parse(text.slice(start, end));
  } catch (err) {
    // V8 names a position for some errors only; otherwise the answer's own start is the position given.
    const at = /position (\d+)/.exec((err as Error).message);
    throw new SyntaxError(at === null ? `Not valid JSON: the answer at position ${start}` : `Unexpected token in JSON at position ${start + Number(at[1])}`);
  }
}

/** Builds RangeItems series by series, and the memo with them. */
class Grouping {
  private readonly items = new Map<string, Map<string, Cell>>();
  private readonly nodeWide = new Map<string, Cell>();
  private readonly errored = new Map<string, Set<string>>();
  private readonly nodes = new Set<string>();
  private readonly gen = ++groupings;

  constructor(
    private readonly itemOf: (labels: Readonly<Record<string, string>>) => string | undefined,
    private readonly memo: CounterMemo,
  ) {}

  errors(metric: string, nodes: Set<string>): void {
    if (nodes.size > 0) this.errored.set(metric, nodes);
  }

  /**
   * One series; `value` undefined: it had no usable point (as if it were not in the answer). `rec`: its memo record
   * when the caller has looked it up already (`key` is then not needed).
   */
  put(key: string | undefined, metric: string, node: string, labels: Readonly<Record<string, string>>, value: SeriesValue | undefined, rec?: MemoPoint): void {
    if (value === undefined) return;
    if (node !== ALL_NODES) this.nodes.add(node);
    const r = rec ?? (key === undefined ? undefined : this.memo.get(key));
    if (r !== undefined) {
      r.t = value.newest.t;
      r.v = value.newest.v;
      r.gen = this.gen;
    } else if (key !== undefined) this.memo.set(key, { t: value.newest.t, v: value.newest.v, gen: this.gen });
    const item = this.itemOf(labels);
    let byNode: Map<string, Cell>;
    if (item === undefined) byNode = this.nodeWide;
    else {
      let m = this.items.get(item);
      if (m === undefined) {
        m = new Map();
        this.items.set(item, m);
      }
      byNode = m;
    }
    let cell = byNode.get(node);
    if (cell === undefined) {
      cell = { values: new Map(), newest: 0 };
      byNode.set(node, cell);
    }
    let list = cell.values.get(metric);
    if (list === undefined) {
      list = [];
      cell.values.set(metric, list);
    }
    list.push({ labels, value });
    if (value.newest.t > cell.newest) cell.newest = value.newest.t;
  }

  /** The groups; the memo forgets the series this answer no longer has. */
  done(): RangeItems {
    // Deleting the entry being visited is allowed while iterating a Map.
    this.memo.forEach((r, k) => {
      if (r.gen !== this.gen) this.memo.delete(k);
    });
    return { items: this.items, nodeWide: this.nodeWide, errored: this.errored, nodes: this.nodes };
  }
}

/** The parts a row's value is made of, summed over the series (and nodes) it covers. */
interface Parts {
  level: number;
  inc: number;
  rate: number;
  mean: number;
  /** Some series matched. */
  any: boolean;
  /** Every matched series has an increase. */
  allInc: boolean;
  /** Every matched series has points since the previous poll. */
  allMean: boolean;
}

function emptyParts(): Parts {
  return { level: 0, inc: 0, rate: 0, mean: 0, any: false, allInc: true, allMean: true };
}

function resetParts(p: Parts): Parts {
  p.level = 0;
  p.inc = 0;
  p.rate = 0;
  p.mean = 0;
  p.any = false;
  p.allInc = true;
  p.allMean = true;
  return p;
}

/** rowValue's accumulators, reused: it runs for every row of every item and node of a poll (no call nests them). */
const NUM = emptyParts();
const DEN = emptyParts();

function addSeries(p: Parts, cell: Cell | undefined, series: readonly NativeSeries[]): void {
  if (cell === undefined) return;
  for (let s = 0; s < series.length; s++) {
    const x = series[s] as NativeSeries;
    const list = cell.values.get(x.metric);
    if (list === undefined) continue;
    for (let e = 0; e < list.length; e++) {
      const { labels, value } = list[e] as { labels: Readonly<Record<string, string>>; value: SeriesValue };
      if (!matches(labels, x.matchers)) continue;
      p.any = true;
      p.level += value.newest.v;
      if (value.mean === undefined) p.allMean = false;
      else p.mean += value.mean;
      if (value.inc === undefined || value.secs === undefined) p.allInc = false;
      else {
        p.inc += value.inc;
        p.rate += value.inc / value.secs;
      }
    }
  }
}

function fromParts(row: NativeMapRow, num: Parts, den: Parts): number | undefined {
  if (!num.any) return undefined;
  switch (row.derive) {
    case 'level':
      return num.level;
    case 'rate':
      return num.allInc ? num.rate : undefined;
    // No point since the previous poll: a stalled series, nothing new to tell (as the envelope's window rule).
    case 'mean':
      return num.allMean ? num.mean : undefined;
    // A zero divisor gives what menelaus_stats gives the envelope then: 0, or 100% resident for a residency.
    case 'increase_ratio':
      if (!num.allInc || !den.any || !den.allInc) return undefined;
      return den.inc > 0 ? num.inc / den.inc : 0;
    case 'level_ratio':
      if (!den.any) return undefined;
      return den.level > 0 ? num.level / den.level : 0;
    case 'complement_ratio':
      if (!den.any) return undefined;
      return den.level > 0 ? 1 - num.level / den.level : 1;
  }
}

const rowMetricLists = new WeakMap<NativeMapRow, readonly string[]>();

function rowMetrics(row: NativeMapRow): readonly string[] {
  let list = rowMetricLists.get(row);
  if (list === undefined) {
    list = [...row.series, ...(row.denominator ?? [])].map((x) => x.metric);
    rowMetricLists.set(row, list);
  }
  return list;
}

function blocked(row: NativeMapRow, errored: RangeItems['errored'], node: string | undefined): boolean {
  for (const m of rowMetrics(row)) {
    const e = errored.get(m);
    if (e === undefined) continue;
    if (e.has('*') || node === undefined || e.has(node)) return true;
  }
  return false;
}

/** The value of a row for one item on one node (`node`), or over all its nodes (undefined), in the legacy stat's unit. */
export function rowValue(row: NativeMapRow, g: RangeItems, item: string, node: string | undefined): number | undefined {
  if (blocked(row, g.errored, node)) return undefined;
  const cells = row.section === 'kv' && !row.perBucket ? g.nodeWide : g.items.get(item);
  if (cells === undefined) return undefined;
  if (node === undefined && row.acrossNodes === 'mean') {
    // A host's own gauge: the mean of the nodes' values.
    let sum = 0;
    let n = 0;
    let missing = false;
    cells.forEach((_c, nd) => {
      if (nd === ALL_NODES || missing) return;
      const v = rowValue(row, g, item, nd);
      if (v === undefined) missing = true;
      else {
        sum += v;
        n++;
      }
    });
    return missing || n === 0 ? undefined : sum / n;
  }
  const num = resetParts(NUM);
  const den = resetParts(DEN);
  // forEach rather than for…of: the iterator's result objects were a tenth of a poll's allocations.
  if (node === undefined) {
    cells.forEach((c) => {
      addSeries(num, c, row.series);
      if (row.denominator) addSeries(den, c, row.denominator);
    });
  } else {
    const c = cells.get(node);
    addSeries(num, c, row.series);
    if (row.denominator) addSeries(den, c, row.denominator);
  }
  const v = fromParts(row, num, den);
  return v === undefined ? undefined : v * row.legacyFactor;
}

/** The newest point's time (epoch ms) of an item, on one node or over all; undefined when it has none. */
export function newestOf(g: RangeItems, item: string, node: string | undefined): number | undefined {
  const cells = g.items.get(item);
  if (cells === undefined) return undefined;
  let t = 0;
  for (const [n, c] of cells) if ((node === undefined || n === node) && c.newest > t) t = c.newest;
  return t > 0 ? t : undefined;
}

/** The bucket a kv series belongs to; undefined for a per-node series. */
export function kvItemOf(labels: Readonly<Record<string, string>>): string | undefined {
  return labels[KV_BUCKET_LABEL];
}

/** `<remote uuid>/<source bucket>/<target bucket>`: the replication id of the tasks list. */
export function xdcrItemOf(labels: Readonly<Record<string, string>>): string | undefined {
  const u = labels[XDCR_NATIVE_LABELS.targetClusterUuid];
  const sb = labels[XDCR_NATIVE_LABELS.sourceBucket];
  const tb = labels[XDCR_NATIVE_LABELS.targetBucket];
  return u === undefined || sb === undefined || tb === undefined ? undefined : `${u}/${sb}/${tb}`;
}

/** What the range source remembers per collector between polls (in ctx.state under RANGE_STATE_KEY). */
export interface RangeState {
  readonly memo: CounterMemo;
  /** The newest point of the previous answer (epoch ms): where the next window starts. */
  newest: number | undefined;
}

/** NUL-prefixed: forgetGone keeps it. */
export const RANGE_STATE_KEY = '\u0000range';

export function rangeStateOf(state: Map<string, unknown>): RangeState {
  let s = state.get(RANGE_STATE_KEY) as RangeState | undefined;
  if (s === undefined) {
    s = { memo: new Map(), newest: undefined };
    state.set(RANGE_STATE_KEY, s);
  }
  return s;
}

export interface RangeFetch {
  readonly groups: RangeItems;
  /** Requests made. */
  readonly requests: number;
}

/**
 * Ask the range API for every native metric of `rows`, in batches, and group the answer. Throws
 * RangeUnavailableError on 404/405/403, and the first error when every request failed; a request that fails when
 * others did not costs its metrics (an item error each), never the poll.
 */
export async function fetchRange<N extends CollectorName>(
  ctx: CollectContext<N>,
  rows: readonly NativeMapRow[],
  extra: Readonly<Record<string, string>>,
  itemOf: (labels: Readonly<Record<string, string>>) => string | undefined,
  sumOverNodes = false,
): Promise<RangeFetch> {
  const st = rangeStateOf(ctx.state);
  const now = ctx.now();
  const intervalS = ctx.options.interval / 1000;
  const window = st.newest === undefined ? intervalS + RANGE_SLACK_SECONDS : (now - st.newest) / 1000 + RANGE_SLACK_SECONDS;
  const metrics = nativeMetricsOf(rows);
  const narrow = narrowing(rows);
  const summed = sumOverNodes ? summableMetrics(rows) : new Set<string>();
  // The next window starts at the previous answer's newest point (it must be in the answer again: the increase
  // counts from it), unless that is older than the longest window.
  const from = st.newest !== undefined && now - st.newest <= MAX_WINDOW_SECONDS * 1000 ? Math.floor(st.newest / 1000) : undefined;
  const batches = chunk(metrics, MAX_QUERIES_PER_REQUEST);
  // One request after the other, each answer grouped as soon as it is read, and read query by query (readText):
  // one query's parsed JSON is alive at a time, rather than a whole request's (about 8 MB of heap per 50 queries
  // at 100 buckets on 4 nodes) or every batch's. A poll has 2 or 3 batches: a few round trips more, within the
  // poll's deadline.
  const grouping = new AnswerGrouping(itemOf, st.memo);
  let failed = 0;
  let first: unknown;
  for (const names of batches) {
    if (ctx.signal.aborted) throw ctx.signal.reason;
    try {
      const res = await ctx.client.requestJson(STATS_RANGE_ROUTE, {}, stagedRequestSchema, {
        method: 'POST',
        json: buildQueries(names, extra, window, narrow, from, summed),
        allowStatus: [403, 404, 405],
        parseBody: (text) => grouping.readText(text, names, summed),
      });
      if (res.status === 403 || res.status === 404 || res.status === 405) throw new RangeUnavailableError(res.status);
      if (res.data !== undefined) grouping.commit(res.data);
    } catch (err) {
      if (err instanceof RangeUnavailableError) throw err;
      failed++;
      first ??= err;
      grouping.add(names.map((name): RawAnswer => ({ metric: name, failed: true })));
      if (!ctx.signal.aborted) ctx.itemFailed(`range request (${names.length} metrics)`, err);
    }
  }
  if (ctx.signal.aborted) throw ctx.signal.reason;
  if (failed > 0 && failed === batches.length) throw first;
  const groups = grouping.done();
  const errors = grouping.errorTexts;
  for (const r of errors) {
    for (const e of r.errors) {
      // The entry's text comes from upstream: bounded here, and kept out of the brief a page may show.
      const err = new CbwError('CBW_ERR_HTTP', `range API error for ${r.metric}: ${e.slice(0, 200)}`);
      err.brief = `range API error for ${r.metric}`;
      ctx.itemFailed(`range ${r.metric}`, err);
    }
  }
  let newest: number | undefined;
  for (const cells of groups.items.values()) for (const c of cells.values()) if (newest === undefined || c.newest > newest) newest = c.newest;
  for (const c of groups.nodeWide.values()) if (newest === undefined || c.newest > newest) newest = c.newest;
  if (newest !== undefined) st.newest = newest;
  return { groups, requests: batches.length };
}
