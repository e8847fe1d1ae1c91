import { createHash } from 'node:crypto';
import { CLUSTER_SETTINGS } from '../config/settings.js';

/**
 * Metric family definitions and the sample set a collector fills during one poll.
 * Every family is declared once, statically, by the collector that owns it; the catalog
 * (src/catalog.ts) gathers them all and docs/metrics.md is generated from it.
 */
/** Histograms exist only among the live self-metrics; collectors emit gauges and counters. */
export type MetricType = 'gauge' | 'counter' | 'histogram';

export interface FamilyDef {
  readonly name: string;
  readonly type: MetricType;
  readonly help: string;
  /** Base unit, for documentation: seconds, bytes, ratio, timestamp_seconds, count, per_second, info. */
  readonly unit: string;
  /**
   * Label names. For collector families, besides `couchbase_cluster`, which the renderer adds to every
   * series of a cluster's snapshot. Self-metric families (`exporter`, `webhooks`) list all their labels.
   */
  readonly labels: readonly string[];
  /** Owning collector name, or `exporter` for self-metrics, or `webhooks`. */
  readonly collector: string;
}

const NAME_RE = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_RE = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

/** Declare a family. Throws on a name that breaks the conventions, so mistakes fail at import time. */
export function defineFamily(
  collector: string,
  name: string,
  type: MetricType,
  help: string,
  labels: readonly string[] = [],
  unit = '',
): FamilyDef {
  if (!NAME_RE.test(name)) throw new Error(`invalid metric name ${name}`);
  if (type === 'counter' && !name.endsWith('_total')) throw new Error(`counter ${name} must end in _total`);
  if (type !== 'counter' && name.endsWith('_total')) throw new Error(`non-counter ${name} must not end in _total`);
  for (const l of labels) {
    const selfFamily = collector === 'exporter' || collector === 'webhooks';
    if (!LABEL_RE.test(l) || l === 'cluster' || l === 'type' || (l === 'couchbase_cluster' && !selfFamily) || l.startsWith('__')) {
      throw new Error(`invalid label ${l} on ${name}`);
    }
  }
  return Object.freeze({ name, type, help, unit, labels: Object.freeze([...labels]), collector });
}

/** Turn an arbitrary string into a valid metric-name fragment. */
export function sanitizeName(raw: string): string {
  let s = raw.replace(/[^a-zA-Z0-9_]/g, '_').replace(/_+/g, '_');
  if (/^[0-9]/.test(s)) s = `_${s}`;
  return s;
}

export type Labels = Readonly<Record<string, string>>;

export interface Sample {
  readonly labels: Labels;
  readonly value: number;
}

export interface FamilySamples {
  readonly def: FamilyDef;
  readonly samples: Sample[];
}

/**
 * One family's series as two columns: `labels[i]` and `values[i]` are one series. Kept this way rather than as
 * one `{ labels, value }` object per series: at 1,000 buckets a poll holds 270,000 series, and the object and its
 * boxed number cost about 56 bytes per series, twice over while a poll builds the next set beside the
 * current one, and work for every full collection that marks them (bench/RESULTS.md, "Where the peak goes").
 * An array of numbers keeps them unboxed.
 */
export interface FamilyColumns {
  readonly def: FamilyDef;
  readonly labels: readonly Labels[];
  readonly values: readonly number[];
}

/**
 * Couchbase's "unavailable" marker is 2^64-1 (an unsigned -1); as a double it rounds to 2^64, and so does any
 * value within a rounding step of it (18446744073709552000 as JSON prints it). No real stat comes near it.
 */
export const UNAVAILABLE_MARKER = 2 ** 64;

/**
 * Why a number was refused: the `reason` of `cbwatch_collector_dropped_values_total`. `add`'s own: non_finite,
 * unavailable_marker, negative_counter; a range API answer's points (src/stats/range-values.ts): blank, not_a_number,
 * non_finite, duplicate_time (a time given twice with two values), negative (where Couchbase cannot be negative),
 * unknown_node (a series of a node that is not one of the cluster's asked nodes).
 */
export type DropReason = 'non_finite' | 'unavailable_marker' | 'negative_counter' | 'blank' | 'not_a_number' | 'duplicate_time' | 'negative' | 'unknown_node';

/**
 * What a cap left out or shortened: the `what` of `cbwatch_collector_capped_total`.
 * - `dynamic_families`: a stat outside the catalog not exported because the collector already holds
 *   `max_dynamic_families` families created from upstream names in this poll;
 * - `label_value_length`: a label value longer than `max_label_value_length` bytes, shortened (still exported);
 * - the range API's answers (src/stats/range-reader.ts, RANGE_LIMITS): `range_label_length` (a label value or node
 *   name over 1,024 bytes, cut as it is read), `range_error_text` (an `errors` text past the 20 kept per answer),
 *   `range_errors` (an `errors` entry past the 1,000 read per answer: the metric fails on every node),
 *   `range_series` (a series past the 200,000 per query: the query's answer refused), `range_cells` (a series that
 *   would make an item and node past the 25,000 per request: its metric refused), `range_cell_series` (a series of
 *   a metric that gives one item and node more than 1,024 series in one request: its metric refused), `range_nesting` (an answer
 *   nested deeper than 64 levels, refused unparsed), `range_duplicate_series` (a series an answer gives twice,
 *   merged into one).
 */
export const CAP_WHATS = ['dynamic_families', 'label_value_length', 'range_label_length', 'range_error_text', 'range_errors', 'range_series', 'range_cells', 'range_cell_series', 'range_nesting', 'range_duplicate_series'] as const;
export type CapWhat = (typeof CAP_WHATS)[number];

/**
 * Default longest label value, in UTF-8 bytes (as Prometheus counts for `label_value_length_limit`, which
 * rejects the whole scrape when one value is over it).
 */
export const DEFAULT_MAX_LABEL_VALUE_LENGTH = CLUSTER_SETTINGS.max_label_value_length.default;
/** Hex digits of the hash that stands in for the cut-off part of a long label value. */
const HASH_DIGITS = 16;
/** The shortest cap that still leaves a prefix besides `~` and the hash. */
export const MIN_LABEL_VALUE_LENGTH = HASH_DIGITS + 2;

/** Length of a string in UTF-8 bytes, cheaply when it is obviously short. */
export function utf8Length(value: string, atMost: number): number {
  // A UTF-16 code unit is at most 3 UTF-8 bytes (a surrogate pair, 2 units, is 4 bytes).
  if (value.length * 3 <= atMost) return value.length;
  return Buffer.byteLength(value, 'utf8');
}

/**
 * A label value cut to at most `max` UTF-8 bytes: its longest prefix that fits in `max - 17` bytes (whole
 * characters only), `~`, and 16 hex digits of the SHA-256 of the whole value, so two long values with the same
 * prefix stay two series (and the same value always gives the same label).
 */
export function capLabelValue(value: string, max: number): string {
  if (utf8Length(value, max) <= max) return value;
  const hash = createHash('sha256').update(value).digest('hex').slice(0, HASH_DIGITS);
  const budget = max - HASH_DIGITS - 1;
  let bytes = 0;
  let end = 0;
  for (const ch of value) {
    const cp = ch.codePointAt(0) ?? 0;
    const n = cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
    if (bytes + n > budget) break;
    bytes += n;
    end += ch.length;
  }
  return `${value.slice(0, end)}~${hash}`;
}

/**
 * Longest name part made from an upstream name (an unknown bucket stat or cluster counter): the metric name is
 * also a label value for Prometheus (`__name__`), and one over its `label_value_length_limit` fails the scrape.
 */
export const MAX_DYNAMIC_NAME_LENGTH = 200;

/**
 * A metric-name part cut to `max` characters: its prefix, `_` and 16 hex digits of the SHA-256 of the whole
 * part (valid in a metric name, and distinct names stay distinct). `part` is already sanitised.
 */
export function capNamePart(part: string, max = MAX_DYNAMIC_NAME_LENGTH): string {
  if (part.length <= max) return part;
  const hash = createHash('sha256').update(part).digest('hex').slice(0, HASH_DIGITS);
  return `${part.slice(0, max - HASH_DIGITS - 1)}_${hash}`;
}

/** One series' identity within its family: its label values in the family's label order. */
function seriesKey(def: FamilyDef, labels: Labels): string {
  let key = '';
  for (let i = 0; i < def.labels.length; i++) key += i === 0 ? labels[def.labels[i] as string] : `\u0000${labels[def.labels[i] as string]}`;
  return key;
}

export interface SampleSetOptions {
  /** Longest label value exported, UTF-8 bytes; longer ones are shortened by `capLabelValue` and counted. Default 1,024. */
  readonly maxLabelValueLength?: number | undefined;
}

/**
 * What one poll of one collector produced. `add` skips null and undefined (a missing value emits nothing,
 * never 0), checks label names against the family, and keeps the first of two samples with the same labels
 * (counted in `duplicates`) so that one odd payload cannot make /metrics invalid.
 *
 * `add` is also the one numeric guard every number from Couchbase passes through: a non-finite value (NaN,
 * ±Infinity), the 2^64-1 "unavailable" marker (or anything at or beyond it) and a negative value for a
 * counter are dropped — the series is absent, never a made-up number — and counted per reason in `dropped`.
 */
/**
 * What a poll through the range API could not read, by node: the nodes whose statistics are missing from the answer
 * (with the reason, bounded and redacted upstream text) and the points dropped because their time was too far in
 * the future. The nodes are the cluster's own (at most MAX_GAP_NODES kept). For `cbwatch_stats_nodes_missing`,
 * `cbwatch_stats_future_points_dropped_total`, `cbwatch check` and the landing page.
 */
export interface StatsGaps {
  /** The collector (bucket_stats, xdcr). */
  readonly collector: string;
  readonly missing: ReadonlyMap<string, string>;
  readonly futurePoints: ReadonlyMap<string, number>;
  /** Items (a bucket, a replication) that exist but got nothing to export from the answers, with why. */
  readonly empty?: ReadonlyMap<string, string>;
}
export const MAX_GAP_NODES = 64;

/** Landing-page notes one sample set keeps (SampleSet.note). */
export const MAX_NOTES = 20;

export class SampleSet {
  private readonly byName = new Map<string, { def: FamilyDef; labels: Labels[]; values: number[]; keys: Set<string> | undefined }>();
  duplicates = 0;
  /** Values refused by the numeric guard, by reason. */
  readonly dropped = new Map<DropReason, number>();
  /** What the caps left out or shortened, by what (`cbwatch_collector_capped_total`). */
  readonly capped = new Map<CapWhat, number>();
  /**
   * Text for the landing page only, never rendered on /metrics (Couchbase's own alert messages): redacted and
   * shortened by whoever adds it; at most MAX_NOTES kept, `notesLeftOut` counts the rest.
   */
  readonly notes: string[] = [];
  notesLeftOut = 0;
  /** The range source's gaps in this poll (src/stats/range.ts); undefined when the poll did not read the range API. */
  statsGaps: StatsGaps | undefined = undefined;
  private count = 0;
  private readonly maxLabel: number;

  constructor(options: SampleSetOptions = {}) {
    this.maxLabel = Math.max(MIN_LABEL_VALUE_LENGTH, options.maxLabelValueLength ?? DEFAULT_MAX_LABEL_VALUE_LENGTH);
  }

  /** Keep a line of text for the landing page (see `notes`). */
  note(text: string): void {
    if (this.notes.length < MAX_NOTES) this.notes.push(text);
    else this.notesLeftOut++;
  }

  /** Count something a cap left out (`what`), for the collector's `cbwatch_collector_capped_total`. */
  countCap(what: CapWhat, n = 1): void {
    this.capped.set(what, (this.capped.get(what) ?? 0) + n);
  }

  private drop(reason: DropReason): void {
    this.dropped.set(reason, (this.dropped.get(reason) ?? 0) + 1);
  }

  /** Count `n` numbers refused before they reached `add` (a range answer's points), by why. */
  countDropped(reason: DropReason, n = 1): void {
    if (n > 0) this.dropped.set(reason, (this.dropped.get(reason) ?? 0) + n);
  }

  add(def: FamilyDef, labels: Labels, value: number | null | undefined | boolean): void {
    if (value === null || value === undefined) return;
    const v = typeof value === 'boolean' ? (value ? 1 : 0) : value;
    if (typeof v !== 'number') return;
    if (!Number.isFinite(v)) return this.drop('non_finite');
    if (Math.abs(v) >= UNAVAILABLE_MARKER) return this.drop('unavailable_marker');
    if (v < 0 && def.type === 'counter') return this.drop('negative_counter');
    let fam = this.byName.get(def.name);
    if (fam === undefined) {
      fam = { def, labels: [], values: [], keys: new Set() };
      this.byName.set(def.name, fam);
    } else if (fam.def !== def && (fam.def.type !== def.type || fam.def.labels.join() !== def.labels.join())) {
      throw new Error(`family ${def.name} declared twice with different shapes`);
    }
    // Checked without allocating: `add` runs once per series per poll (tens of thousands at a hundred buckets).
    let given = 0;
    for (const _ in labels) given++;
    let shaped = given === def.labels.length;
    for (let i = 0; shaped && i < def.labels.length; i++) shaped = (def.labels[i] as string) in labels;
    if (!shaped) {
      throw new Error(`family ${def.name} expects labels [${def.labels.join(',')}], got [${Object.keys(labels).join(',')}]`);
    }
    // Every label value passes here: one over the cap is shortened (one too long for a Prometheus with
    // label_value_length_limit would fail the whole scrape, not just its series).
    for (const l of def.labels) {
      const lv = labels[l];
      if (lv !== undefined && lv.length > this.maxLabel / 3 && utf8Length(lv, this.maxLabel) > this.maxLabel) {
        labels = { ...labels, [l]: capLabelValue(lv, this.maxLabel) };
        this.countCap('label_value_length');
      }
    }
    const key = seriesKey(def, labels);
    // Sealed (see seal()): the keys are made again from the samples.
    fam.keys ??= new Set(fam.labels.map((l) => seriesKey(def, l)));
    if (fam.keys.has(key)) {
      this.duplicates++;
      return;
    }
    fam.keys.add(key);
    fam.labels.push(labels);
    fam.values.push(v);
    this.count++;
  }

  /**
   * The poll is over: drop the keys that keep two samples of one series out (a string per series, held as long
   * as the store holds the set, i.e. until the collector's next poll). A later `add` makes them again.
   */
  seal(): void {
    for (const fam of this.byName.values()) fam.keys = undefined;
  }

  /** Each family's series as objects (tests, and anything that is not on a per-poll path). */
  families(): FamilySamples[] {
    return [...this.byName.values()].map(({ def, labels, values }) => ({ def, samples: labels.map((l, i) => ({ labels: l, value: values[i] as number })) }));
  }

  /** Each family's series as columns, without a copy (the renderer: see FamilyColumns). */
  columns(): FamilyColumns[] {
    return [...this.byName.values()];
  }

  get size(): number {
    return this.count;
  }

  /** The value of one series, for tests. */
  get(name: string, labels: Labels = {}): number | undefined {
    const fam = this.byName.get(name);
    if (!fam) return undefined;
    const want = Object.entries(labels);
    const i = fam.labels.findIndex((l) => want.every(([k, v]) => l[k] === v));
    return i < 0 ? undefined : fam.values[i];
  }

  /** All samples of one family (tests, and the landing page's problems). */
  all(name: string): Sample[] {
    const fam = this.byName.get(name);
    return fam ? fam.labels.map((l, i) => ({ labels: l, value: fam.values[i] as number })) : [];
  }
}
