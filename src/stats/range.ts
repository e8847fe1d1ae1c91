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
 * At most MAX_QUERIES_PER_REQUEST queries per POST: the bucket stats (68 native names) take 7 requests per poll and
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
import { arrayElementBounds, Ch, elementEnd, lastDepth, MAX_JSON_DEPTH, nestingDepth, parseSlice, skipSpace } from './json-slices.js';
import { KV_BUCKET_LABEL, KV_NATIVE_MAP, nativeMetricsOf, XDCR_NATIVE_LABELS } from './native-map.js';
import type { Matchers, NativeMapRow } from './native-map.js';
import { ALL_NODES, Grouping, rowMetrics } from './range-groups.js';
import type { Layer, RangeItems } from './range-groups.js';
import { AnswerErrors, IdList, idKey, Interner, keptLabel, QueryReader, RANGE_LIMITS, RangeCaps, tooManySeriesText } from './range-reader.js';
import type { ReadEntry } from './range-reader.js';
import { pointsOf, rawSeriesValue, resolvePoints, runSeriesValue, seriesKey, seriesValue } from './range-values.js';
import type { CounterMemo, Point } from './range-values.js';

export const STATS_RANGE_ROUTE = '/pools/default/stats/range';
/**
 * Queries per POST: the bound on one request's body and answer (the answer grows with buckets × nodes). With the
 * mapping table's 68 kv and 16 XDCR names, a poll of both collectors makes 9 requests, under the 10 the issue
 * (and the bench's statistics-source section) allows.
 */
export const MAX_QUERIES_PER_REQUEST = 10;
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
    return [];
  }
  return out;
}

interface AnswerHead {
  readonly erroredNodes: Set<string>;
  readonly errors: string[];
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
  if (raw === null || typeof raw !== 'object') {
    erroredNodes.add('*');
    errors.push('answer is not an object');
    return { erroredNodes, errors, data: [] };
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
      const value = seriesValue(s.points, l.previous(key, rec));
      if (value !== undefined) l.put(key, rec, s.metric, s.node, s.labels, value);
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
  constructor(
    rows: readonly NativeMapRow[],
    itemOf: (labels: Readonly<Record<string, string>>) => string | undefined,
    private readonly memo: CounterMemo,
    private readonly sizes?: Map<string, number>,
  ) {
    this.g = new Grouping(rows, itemOf, memo);
    this.reader = new QueryReader(internerOf(memo), this.caps);
  }

  /** What the bounds on the answers cut or refused in this grouping (cbwatch_collector_capped_total). */
  readonly caps = new RangeCaps();

  /** Each committed answer's error texts (for the item errors), in the order added. */
  get errorTexts(): ReadonlyArray<{ metric: string; errors: string[] }> {
    return this.g.errorTexts;
  }

  add(answers: readonly RawAnswer[]): void {
    for (const a of answers) {
      const l = this.g.layer();
      if ('failed' in a) l.errors(a.metric, new Set(['*']));
      else this.stage(l, a.metric, a.raw, a.summed);
      this.caps.add('range_cells', l.refused);
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
        let end = r.read(text, p, sum);
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
    if (r.errors.nodes.size > 0) l.errors(metric, new Set(r.errors.nodes), [...r.errors.texts]);
    const metricId = r.interner.idOf(metric);
    for (let i = 0; i < r.entries.length; i++) {
      const e = r.entries[i] as ReadEntry;
      const key = idKey(e.nodeId, metricId, r.ids.a, e.idFrom, e.idTo) ?? seriesKey({ metric, node: e.node, labels: e.labels });
      const rec = this.memo.get(key);
      const value = runSeriesValue(r.run, e.from, e.to, l.previous(key, rec));
      if (value !== undefined) l.put(key, rec, metric, e.node, e.labels, value);
      // Refused for its cells: the metric fails everywhere, its other series are not worth valuing (counted).
      if (l.isRefused(metric)) {
        l.refused += r.entries.length - i - 1;
        break;
      }
    }
    const last = r.entries[r.entries.length - 1];
    if (last !== undefined) LABEL_SHAPES.set(metric, last.labels);
  }

  /** Add a request read by readText. */
  commit(request: StagedRequest): void {
    this.caps.add('range_cells', request.layer.refused);
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
    l.errors(metric, head.erroredNodes, head.errors);
    for (const e of entries) {
      const key = this.treeKey(metric, e.node, e.labels);
      const rec = this.memo.get(key);
      const value = rawSeriesValue(e.values, l.previous(key, rec));
      if (value !== undefined) l.put(key, rec, metric, e.node, e.labels, value);
      if (l.isRefused(metric)) {
        l.refused += entries.length - entries.indexOf(e) - 1;
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

function internerOf(memo: CounterMemo): Interner {
  let i = interners.get(memo);
  if (i === undefined) {
    i = new Interner();
    interners.set(memo, i);
  }
  return i;
}

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
  return u === undefined || sb === undefined || tb === undefined ? undefined : `${u}/${sb}/${tb}`;
}

/** What the range source remembers per collector between polls (in ctx.state under RANGE_STATE_KEY). */
export interface RangeState {
  readonly memo: CounterMemo;
  /** The newest point of the previous answer (epoch ms): where the next window starts. */
  newest: number | undefined;
  /** Each native metric's answer length in the previous poll (characters): how the next poll's batches are dealt. */
  readonly sizes: Map<string, number>;
}

/** NUL-prefixed: forgetGone keeps it. */
export const RANGE_STATE_KEY = '\u0000range';

export function rangeStateOf(state: Map<string, unknown>): RangeState {
  let s = state.get(RANGE_STATE_KEY) as RangeState | undefined;
  if (s === undefined) {
    s = { memo: new Map(), newest: undefined, sizes: new Map() };
    state.set(RANGE_STATE_KEY, s);
  }
  return s;
}

export interface RangeFetch {
  readonly groups: RangeItems;
  /** Requests made. */
  readonly requests: number;
}

/** Distinct causes of range item errors logged one by one per poll; the rest under one line. */
const MAX_ERROR_CAUSES = 20;

/**
 * The answers' error texts as item errors, aggregated per poll: one per cause (text), with the number of metrics it
 * failed as its count, so 50,000 errors entries make a few lines, not 800,000 item errors and 257 MB of debug log
 * (issue 39). Past MAX_ERROR_CAUSES causes, the rest are one more, counted.
 */
export function reportRangeErrors(ctx: Pick<CollectContext, 'itemFailed'>, errors: ReadonlyArray<{ metric: string; errors: string[] }>): void {
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
  keepShapes();
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
  const batches = balancedBatches(metrics, MAX_QUERIES_PER_REQUEST, answerWeight(st.sizes, summed));
  // One request after the other, each answer grouped as soon as it is read, and read query by query (readText):
  // one request's answer and one query's parsed JSON are alive at a time, rather than every batch's. A poll has
  // up to 7 batches: a few round trips more, within the poll's deadline.
  const grouping = new AnswerGrouping(rows, itemOf, st.memo, st.sizes);
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
  flushCaps();
  if (ctx.signal.aborted) throw ctx.signal.reason;
  if (failed > 0 && failed === batches.length) throw first;
  const groups = grouping.done();
  reportRangeErrors(ctx, grouping.errorTexts);
  let newest: number | undefined;
  for (const cells of groups.items.values()) for (const c of cells.values()) if (newest === undefined || c.newest > newest) newest = c.newest;
  for (const c of groups.nodeWide.values()) if (newest === undefined || c.newest > newest) newest = c.newest;
  if (newest !== undefined) st.newest = newest;
  return { groups, requests: batches.length };
}
