/**
 * One query's answer of the range API as JSON.parse makes it, walked: its `errors` (the nodes they name, their texts
 * bounded) and its `data` entries (labels, node, raw values), under the same bounds as the text's reader
 * (range-reader.ts) applies. The way an answer is read where that reader gives up.
 */
import { ALL_NODES } from './range-groups.js';
import { AnswerErrors, keptLabel, RANGE_LIMITS, tooManySeriesText } from './range-limits.js';
import type { RangeCaps } from './range-limits.js';
import { pointsOf, seriesKey } from './range-values.js';
import type { Point } from './range-values.js';

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
export interface TreeEntry {
  readonly labels: Record<string, string>;
  readonly node: string;
  values: readonly unknown[];
}

/**
 * The usable entries of a parsed answer (entryOf), bounded and checked as the text's reader does: past
 * RANGE_LIMITS.seriesPerQuery none (the answer refused, in `head`), and a series given twice merged into its first
 * entry (its values after the first's: resolvePoints then keeps one point per time). Pure but for `head` and `caps`.
 */
export function treeEntries(head: AnswerHead, summed: boolean, caps?: RangeCaps): TreeEntry[] {
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

export interface AnswerHead {
  readonly erroredNodes: Set<string>;
  /** Every entry's text (bounded, AnswerErrors). */
  readonly errors: string[];
  /** The texts of entries that name no node, and of refusals: the metric's own item errors. */
  readonly clusterErrors: string[];
  /** The entries that name a node: node → reason (one item error per node and poll, range-nodes.ts missingNodes). */
  readonly byNode: ReadonlyArray<readonly [string, string]>;
  readonly data: readonly unknown[];
}

/**
 * An answer's `errors` (the nodes they name; '*' when one names none, or past RANGE_LIMITS.errorEntries) and its
 * `data` entries. The texts are bounded as the text's reader bounds them (AnswerErrors). Pure but for `caps`.
 */
export function answerHead(raw: unknown, caps?: RangeCaps): AnswerHead {
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
 * series is ALL_NODES's). This runs for every series the text's reader leaves to the parse: no per-entry arrays
 * (for…in rather than Object.entries).
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
