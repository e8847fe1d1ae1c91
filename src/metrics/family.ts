/**
 * Metric family definitions and the sample set a collector fills during one poll.
 * Every family is declared once, statically, by the collector that owns it; the catalog
 * (src/metrics/catalog.ts) gathers them all and docs/metrics.md is generated from it.
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
 * Couchbase's "unavailable" marker is 2^64-1 (an unsigned -1); as a double it rounds to 2^64, and so does any
 * value within a rounding step of it (18446744073709552000 as JSON prints it). No real stat comes near it.
 */
export const UNAVAILABLE_MARKER = 2 ** 64;

/** Why `add` refused a number: the `reason` of `cbwatch_collector_dropped_values_total`. */
export type DropReason = 'non_finite' | 'unavailable_marker' | 'negative_counter';

/**
 * What one poll of one collector produced. `add` skips null and undefined (a missing value emits nothing,
 * never 0), checks label names against the family, and keeps the first of two samples with the same labels
 * (counted in `duplicates`) so that one odd payload cannot make /metrics invalid.
 *
 * `add` is also the one numeric guard every number from Couchbase passes through: a non-finite value (NaN,
 * ±Infinity), the 2^64-1 "unavailable" marker (or anything at or beyond it) and a negative value for a
 * counter are dropped — the series is absent, never a made-up number — and counted per reason in `dropped`.
 */
export class SampleSet {
  private readonly byName = new Map<string, { def: FamilyDef; samples: Sample[]; keys: Set<string> }>();
  duplicates = 0;
  /** Values refused by the numeric guard, by reason. */
  readonly dropped = new Map<DropReason, number>();
  private count = 0;

  private drop(reason: DropReason): void {
    this.dropped.set(reason, (this.dropped.get(reason) ?? 0) + 1);
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
      fam = { def, samples: [], keys: new Set() };
      this.byName.set(def.name, fam);
    } else if (fam.def !== def && (fam.def.type !== def.type || fam.def.labels.join() !== def.labels.join())) {
      throw new Error(`family ${def.name} declared twice with different shapes`);
    }
    const names = Object.keys(labels);
    if (names.length !== def.labels.length || def.labels.some((l) => !(l in labels))) {
      throw new Error(`family ${def.name} expects labels [${def.labels.join(',')}], got [${names.join(',')}]`);
    }
    const key = def.labels.map((l) => labels[l]).join('\u0000');
    if (fam.keys.has(key)) {
      this.duplicates++;
      return;
    }
    fam.keys.add(key);
    fam.samples.push({ labels, value: v });
    this.count++;
  }

  /** Declare a family present even with no samples (rendered with HELP/TYPE only: nothing). */
  families(): FamilySamples[] {
    return [...this.byName.values()].map(({ def, samples }) => ({ def, samples }));
  }

  get size(): number {
    return this.count;
  }

  /** The value of one series, for tests. */
  get(name: string, labels: Labels = {}): number | undefined {
    const fam = this.byName.get(name);
    if (!fam) return undefined;
    const want = Object.entries(labels);
    const hit = fam.samples.find((s) => want.every(([k, v]) => s.labels[k] === v));
    return hit?.value;
  }

  /** All samples of one family, for tests. */
  all(name: string): Sample[] {
    return this.byName.get(name)?.samples ?? [];
  }
}
