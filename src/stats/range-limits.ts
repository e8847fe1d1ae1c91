/**
 * What one query's answer of the range API may make the exporter keep: label values and error texts cut, error
 * entries and series capped per query, and what was cut or refused counted (RangeCaps, for
 * cbwatch_collector_capped_total). An upstream byte is kept only for what it is worth. docs/security.md
 * ("Range answers") documents the limits.
 */
import { boundedText } from '../errors.js';
import { capLabelValue } from '../metrics/family.js';
import { takeRefused } from './range-values.js';
import type { PointRefusal } from './range-values.js';

/**
 * What one query's answer may hold before the rest is refused or cut. Documented in docs/security.md ("Range
 * answers").
 */
export const RANGE_LIMITS = {
  /** A label name or value (and a node's name), UTF-8 bytes: longer ones are cut as /metrics cuts a label value. */
  labelBytes: 1024,
  /** The text kept of one `errors` entry (node and error), UTF-16 code units. */
  errorChars: 200,
  /** Distinct error texts kept per query's answer (the rest counted, not kept). */
  errorTexts: 20,
  /** `errors` entries read one by one per query's answer; past it, the metric counts as failed on every node. */
  errorEntries: 1000,
  /** Series per query's answer; past it the query's answer is refused (its metric failed on every node). */
  seriesPerQuery: 200_000,
} as const;

/**
 * What the bounds on one poll's answers cut or refused, by the `what` of `cbwatch_collector_capped_total`:
 * range_label_length (label values cut), range_error_text (error texts not kept), range_errors (errors entries past
 * the cap), range_series (series past the cap: the query refused), range_cells (series refused for making an item
 * and node past range-groups.ts's MAX_CELLS_PER_REQUEST), range_cell_series (series of a metric refused for giving one
 * item and node more than range-groups.ts's MAX_SERIES_PER_CELL), range_nesting (answers refused as too deep),
 * range_duplicate_series (a series an answer repeats, merged).
 */
export type RangeCapWhat = 'range_label_length' | 'range_error_text' | 'range_errors' | 'range_series' | 'range_cells' | 'range_cell_series' | 'range_nesting' | 'range_duplicate_series';

/** Counts of what the bounds did, kept by the reader for one grouping (one poll). */
export class RangeCaps {
  readonly counts = new Map<RangeCapWhat, number>();
  /** Points refused (range-values.ts REFUSED), by why: `cbwatch_collector_dropped_values_total`'s reason. */
  readonly points = new Map<PointRefusal, number>();
  /** Take the points refused since the last take (range-values.ts takeRefused) into `points`. */
  takePoints(): void {
    for (const [why, n] of takeRefused()) this.points.set(why, (this.points.get(why) ?? 0) + n);
  }
  add(what: RangeCapWhat, n = 1): void {
    if (n > 0) this.counts.set(what, (this.counts.get(what) ?? 0) + n);
  }
}

/**
 * A string of its own (not a slice of the request's text, which V8 would keep whole as long as the slice lives):
 * a label value, node name or error text that outlives the read.
 */
export function ownString(s: string): string {
  return JSON.parse(JSON.stringify(s)) as string;
}

/** A label value as kept: at most RANGE_LIMITS.labelBytes UTF-8 bytes (cut as /metrics cuts one), a string of its own. */
export function keptLabel(value: string, caps?: RangeCaps): string {
  // A code unit is at most 3 UTF-8 bytes: short strings need no count.
  if (value.length * 3 <= RANGE_LIMITS.labelBytes || Buffer.byteLength(value, 'utf8') <= RANGE_LIMITS.labelBytes) return value;
  caps?.add('range_label_length');
  return ownString(capLabelValue(value, RANGE_LIMITS.labelBytes));
}

/**
 * The text kept of one `errors` entry: `<node>: <error>` (`cluster` when it names no node), at most
 * RANGE_LIMITS.errorChars code units, a string of its own. `why`: the error's text (already cut is fine).
 */
export function errorText(node: string | undefined, why: string): string {
  return ownString(`${node ?? 'cluster'}: ${why.slice(0, RANGE_LIMITS.errorChars)}`.slice(0, RANGE_LIMITS.errorChars));
}

/** One query's `errors`, bounded: the nodes they name ('*' for one naming none, or past the cap) and the texts kept. */
export class AnswerErrors {
  readonly nodes = new Set<string>();
  readonly texts: string[] = [];
  /** The texts of the entries that name no node, and of refusals (the metric's own errors), bounded like `texts`. */
  readonly clusterTexts: string[] = [];
  /** The entries that name a node: its name (cut) and its reason (cut), each node once, at most MAX_NODES_NAMED. */
  readonly byNode: Array<[string, string]> = [];
  /** Nodes named apart per answer: more than a cluster has (MAX_GAP_NODES, family.ts, keeps 64 of them). */
  static readonly MAX_NODES_NAMED = 64;
  /** Entries read. */
  entries = 0;

  constructor(private readonly caps: RangeCaps | undefined) {}

  /** One entry: its node (cut) or undefined, and its error text. */
  add(node: string | undefined, why: string): void {
    if (++this.entries > RANGE_LIMITS.errorEntries) {
      // Past the cap the nodes are not read one by one: the metric counts as failed everywhere.
      this.nodes.add('*');
      this.caps?.add('range_errors');
      return;
    }
    const n = node === undefined ? undefined : keptLabel(node, this.caps);
    this.nodes.add(n ?? '*');
    const text = errorText(n, why);
    if (n === undefined) {
      if (!this.clusterTexts.includes(text) && this.clusterTexts.length < RANGE_LIMITS.errorTexts) this.clusterTexts.push(text);
    } else if (this.byNode.length < AnswerErrors.MAX_NODES_NAMED && !this.byNode.some(([x]) => x === n)) {
      // Upstream text that reaches the landing page and a log line: redacted and bounded.
      this.byNode.push([boundedText(n, RANGE_LIMITS.errorChars), boundedText(why.slice(0, 4 * RANGE_LIMITS.errorChars), RANGE_LIMITS.errorChars)]);
    }
    if (this.texts.includes(text)) return;
    if (this.texts.length >= RANGE_LIMITS.errorTexts) this.caps?.add('range_error_text');
    else this.texts.push(text);
  }

  /** A refusal of the whole answer (too many series, too deep): every node, with its reason. */
  refuse(why: string): void {
    this.nodes.add('*');
    if (!this.texts.includes(why)) this.texts.push(why);
    if (!this.clusterTexts.includes(why)) this.clusterTexts.push(why);
  }

  clear(): void {
    this.nodes.clear();
    this.texts.length = 0;
    this.clusterTexts.length = 0;
    this.byNode.length = 0;
    this.entries = 0;
  }
}

/** The error text of a query's answer refused for its series. */
export function tooManySeriesText(count: number): string {
  return `cluster: the answer has ${count.toLocaleString('en')} series, over the limit of ${RANGE_LIMITS.seriesPerQuery.toLocaleString('en')} per query: refused`;
}
