/**
 * The range source's arithmetic on one native series: its points, the value it gives a poll (the newest point,
 * the exact increase since the previous poll's newest point, the window mean), and its key in the counter memo
 * that carries the previous newest point from poll to poll. Pure but for the memo's records.
 */

export interface Point {
  /** Epoch ms. */
  readonly t: number;
  readonly v: number;
}

/** What readPoint read last: the point's time (epoch ms) and value. Scratch, so that reading allocates nothing. */
const READ = { t: 0, v: 0 };

const ZERO = 0x30;
const NINE = 0x39;
const MINUS = 0x2d;
const PLUS = 0x2b;
const DOT = 0x2e;

/**
 * The number a string of a range answer stands for, text[start, end) (no escapes in it): only the forms Couchbase
 * writes. A value is Prometheus's text of a float (Go's FormatFloat) or, for a sum over the nodes, ns_server's
 * (prometheus:format_value: integer_to_binary, float_to_binary, `NaN`, `Inf` or `+Inf` by version, `-Inf`); a time
 * is epoch seconds. So: an optional `-`, digits, an optional `.` and digits, an optional exponent. Anything else is
 * NaN: Couchbase's own words for no value (`NaN`, `Inf`, `+Inf`, `-Inf`: the point is skipped, as any point whose
 * value is not finite), and what is no number in Couchbase's forms: `""` and `" "` (which Number() makes 0), `"0x1F"`
 * (31), `"1_000"`, `"+3"`, `"Infinity"`. Digits alone (up to 15) are read here, anything else by Number()
 * once its form is checked; fractions of at most 15 digits too, exactly as Number() reads them. Written into
 * out[at] rather than returned: a fraction returned from a call is a number object of its own, and this runs for
 * every point's value. Pure but for out[at].
 */
export function decimalInto(t: string, start: number, end: number, out: Float64Array, at: number): void {
  const len = end - start;
  if (len <= 0) {
    out[at] = Number.NaN;
    return;
  }
  if (len <= 15) {
    let n = 0;
    let p = start;
    for (; p < end; p++) {
      const d = t.charCodeAt(p) - ZERO;
      if (d < 0 || d > 9) break;
      n = n * 10 + d;
    }
    if (p === end) {
      out[at] = n;
      return;
    }
  }
  let p = start;
  let c = t.charCodeAt(p);
  const neg = c === MINUS;
  if (neg) c = t.charCodeAt(++p);
  // Not a digit: `NaN`, `Inf`, `+Inf`, `-Inf` (no value; the point is skipped as any non-finite one) or no number.
  if (c < ZERO || c > NINE) {
    out[at] = Number.NaN;
    return;
  }
  // The digits as one integer, and how many of them follow the point: exact while there are at most 15.
  let m = 0;
  let digits = 0;
  do {
    m = m * 10 + (c - ZERO);
    digits++;
    c = t.charCodeAt(++p);
  } while (c >= ZERO && c <= NINE);
  let fraction = 0;
  if (c === DOT) {
    c = t.charCodeAt(++p);
    if (c < ZERO || c > NINE) {
      out[at] = Number.NaN;
      return;
    }
    do {
      m = m * 10 + (c - ZERO);
      digits++;
      fraction++;
      c = t.charCodeAt(++p);
    } while (c >= ZERO && c <= NINE);
  }
  if (c === 0x65 || c === 0x45) {
    c = t.charCodeAt(++p);
    if (c === PLUS || c === MINUS) c = t.charCodeAt(++p);
    if (c < ZERO || c > NINE) {
      out[at] = Number.NaN;
      return;
    }
    do c = t.charCodeAt(++p);
    while (c >= ZERO && c <= NINE);
    out[at] = p === end ? Number(t.slice(start, end)) : Number.NaN;
    return;
  }
  if (p !== end) {
    out[at] = Number.NaN;
    return;
  }
  // At most 15 digits: the integer and 10^fraction are exact, and one division of them is rounded once, as the
  // decimal's own nearest double (Number() gives that too, from a copy of the text: a string per value).
  if (digits <= 15) {
    out[at] = neg ? -(m / (POW10[fraction] as number)) : m / (POW10[fraction] as number);
    return;
  }
  out[at] = Number(t.slice(start, end));
}

/** decimalInto's number as a value (a caller that is not per point). Pure. */
export function decimalOf(t: string, start: number, end: number): number {
  decimalInto(t, start, end, ONE, 0);
  return ONE[0] as number;
}

const ONE = new Float64Array(1);

/** 10^0 … 10^15, each exact as a double. */
const POW10 = [1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15];

/** Why a point of a range answer was refused: a `reason` of `cbwatch_collector_dropped_values_total`. */
export type PointRefusal = 'blank' | 'not_a_number' | 'non_finite' | 'duplicate_time' | 'negative' | 'unknown_node';

/**
 * Points refused since the last takeRefused, by reason: counted where they are refused, and taken by the grouping
 * that read them before its synchronous read returns (range-grouping.ts), so that no other poll's count mixes in.
 */
export const REFUSED: Record<PointRefusal, number> = { blank: 0, not_a_number: 0, non_finite: 0, duplicate_time: 0, negative: 0, unknown_node: 0 };

/** The counts of REFUSED that are not 0, which are reset. */
export function takeRefused(): Array<[PointRefusal, number]> {
  const out: Array<[PointRefusal, number]> = [];
  for (const k of Object.keys(REFUSED) as PointRefusal[]) {
    if (REFUSED[k] > 0) out.push([k, REFUSED[k]]);
    REFUSED[k] = 0;
  }
  return out;
}

const NON_FINITE_WORD = /^[+-]?(?:inf|infinity|nan)$/i;
/** Couchbase's decimal form (decimalInto): refused only when too large for a double. */
const DECIMAL = /^-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?$/;

/**
 * Count a refused point by why, from the text of its time or value that was not a finite number, text[start, end)
 * (start < 0: a JSON number, finite only when it was not too large): blank (`""`, `" "`), non_finite (Couchbase's
 * NaN and infinities, or a decimal too large for a double), else not_a_number (hex such as `"0x1F"`, `"1_000"`…).
 */
export function refuseText(t: string, start: number, end: number): void {
  if (start < 0) REFUSED.non_finite++;
  else {
    const s = t.slice(start, end).trim();
    if (s.length === 0) REFUSED.blank++;
    else if (NON_FINITE_WORD.test(s) || DECIMAL.test(s)) REFUSED.non_finite++;
    else REFUSED.not_a_number++;
  }
}

/** Count a refused raw point (as JSON.parse makes it): not a pair, or its time or value not a finite decimal. */
function refuseRaw(p: unknown): void {
  if (!Array.isArray(p) || p.length < 2) {
    REFUSED.not_a_number++;
    return;
  }
  const bad: unknown = Number.isFinite(numberOf(p[0])) ? p[1] : p[0];
  if (typeof bad === 'string') refuseText(bad, 0, bad.length);
  else if (typeof bad === 'number') REFUSED.non_finite++;
  else REFUSED.not_a_number++;
}

/** A point's time or value as parsed: a number, or a string in Couchbase's decimal form (decimalOf); else NaN. */
function numberOf(x: unknown): number {
  return typeof x === 'number' ? x : typeof x === 'string' ? decimalOf(x, 0, x.length) : Number.NaN;
}

/**
 * Read one raw point, `[time, value]` (time in epoch s, value as the API sends it, a string; either a number or a
 * string in Couchbase's decimal form), into READ. False when it is unusable (not such a pair, or not finite).
 */
function readPoint(p: unknown): boolean {
  if (!Array.isArray(p) || p.length < 2) {
    refuseRaw(p);
    return false;
  }
  const t = numberOf(p[0]);
  const v = numberOf(p[1]);
  if (!Number.isFinite(t) || !Number.isFinite(v)) {
    refuseRaw(p);
    return false;
  }
  READ.t = t * 1000;
  READ.v = v;
  return true;
}

/**
 * Points in time order with one point per time: sorted (stably) when they do not come so, and where several points
 * share a time, one of them when they agree, none when they do not (which of two values at one instant is the
 * counter's cannot be told; a wrong one is a reset and an increase of the counter's whole value). Pure but for sorting and shortening `points`.
 */
export function resolvePoints(points: Point[]): Point[] {
  let ordered = true;
  for (let i = 1; i < points.length; i++) {
    if ((points[i] as Point).t <= (points[i - 1] as Point).t) {
      ordered = false;
      break;
    }
  }
  if (ordered) return points;
  points.sort((a, b) => a.t - b.t);
  let out = 0;
  for (let i = 0; i < points.length; ) {
    const p = points[i] as Point;
    let j = i + 1;
    let agree = true;
    while (j < points.length && (points[j] as Point).t === p.t) {
      if ((points[j] as Point).v !== p.v) agree = false;
      j++;
    }
    if (agree) points[out++] = p;
    else REFUSED.duplicate_time += j - i;
    i = j;
  }
  points.length = out;
  return points;
}

/** The usable points of an entry's `values`, oldest first, one per time (resolvePoints). Pure. */
export function pointsOf(values: readonly unknown[]): Point[] {
  const points: Point[] = [];
  for (let i = 0; i < values.length; i++) {
    if (!readPoint(values[i])) continue;
    points.push({ t: READ.t, v: READ.v });
  }
  return resolvePoints(points);
}

/**
 * A native series' key in the memo: node, metric, then its labels in name order. The `name` label, which the
 * range API sets to the metric's own name, is left out when it is that: the key is kept per series, for the life
 * of the memo.
 */
export function seriesKey(s: { readonly metric: string; readonly node: string; readonly labels: Readonly<Record<string, string>> }): string {
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
 * Points read but not yet valued, in the order read: times (epoch ms) and values. Reused from read to read (no
 * object per point): the range reader keeps every point of one query's answer here, each series a stretch of it.
 */
export class PointRun {
  t = new Float64Array(64);
  v = new Float64Array(64);
  n = 0;

  push(t: number, v: number): void {
    if (this.n === this.t.length) this.grow();
    this.t[this.n] = t;
    this.v[this.n] = v;
    this.n++;
  }

  /** Twice the room. */
  grow(): void {
    const t2 = new Float64Array(this.t.length * 2);
    const v2 = new Float64Array(this.t.length * 2);
    t2.set(this.t);
    v2.set(this.v);
    this.t = t2;
    this.v = v2;
  }
}

/**
 * What valueRun gives, in scratch rather than an object per series (a value object, and the numbers boxed in it, for
 * every series of every poll): the newest point's time (epoch ms) and
 * value, the increase since the previous newest point and the seconds it spans, the mean. Which of them are set:
 * valueRun's flags. Valid until the next valueRun or valueInto.
 */
export const RUN_VALUE = new Float64Array(5);
export const V_T = 0;
export const V_V = 1;
export const V_INC = 2;
export const V_SECS = 3;
export const V_MEAN = 4;
/** valueRun's flags: a newest point (0: no value at all), a mean, an increase with its seconds. */
export const HAS_NEWEST = 1;
export const HAS_MEAN = 2;
export const HAS_INC = 4;

/** A SeriesValue into RUN_VALUE; its flags (0 for none). */
export function valueInto(value: SeriesValue | undefined): number {
  if (value === undefined) return 0;
  const r = RUN_VALUE;
  r[V_T] = value.newest.t;
  r[V_V] = value.newest.v;
  let flags = HAS_NEWEST;
  if (value.mean !== undefined) {
    r[V_MEAN] = value.mean;
    flags |= HAS_MEAN;
  }
  if (value.inc !== undefined && value.secs !== undefined) {
    r[V_INC] = value.inc;
    r[V_SECS] = value.secs;
    flags |= HAS_INC;
  }
  return flags;
}

/**
 * `seriesValue` of the points [from, to) of a run, into RUN_VALUE, in one pass when they come oldest first with one
 * point per time (as the range API sends them), else through seriesValue over them resolved (resolvePoints).
 * Returns the flags of what it set; 0 when there are no points. Pure but for reading `run` and writing RUN_VALUE.
 */
export function valueRun(run: PointRun, from: number, to: number, prev: Point | undefined): number {
  if (to <= from) return 0;
  const ts = run.t;
  const vs = run.v;
  for (let i = from + 1; i < to; i++) {
    if ((ts[i] as number) <= (ts[i - 1] as number)) {
      // Out of order, or a time given twice: as pointsOf, sorted and one point per time.
      const points: Point[] = [];
      for (let j = from; j < to; j++) points.push({ t: ts[j] as number, v: vs[j] as number });
      return valueInto(seriesValue(resolvePoints(points), prev));
    }
  }
  const r = RUN_VALUE;
  const firstT = ts[from] as number;
  const lastT = ts[to - 1] as number;
  r[V_T] = lastT;
  r[V_V] = vs[to - 1] as number;
  if (prev !== undefined && lastT <= prev.t) return HAS_NEWEST;
  const prevT = prev === undefined ? Number.NEGATIVE_INFINITY : prev.t;
  let sum = 0;
  let count = 0;
  let inc = 0;
  let last = prev === undefined ? 0 : prev.v;
  for (let i = from; i < to; i++) {
    const at = ts[i] as number;
    const v = vs[i] as number;
    // As seriesValue: the first answer counts every point in the mean and the increase from its first point;
    // a later one only the points after the previous newest, the increase from it.
    if (at > prevT) {
      sum += v;
      count++;
      if (prev !== undefined || i > from) inc += v >= last ? v - last : v;
      last = v;
    }
  }
  r[V_MEAN] = sum / count;
  const secs = (lastT - (prev === undefined ? firstT : prevT)) / 1000;
  if (secs <= 0 || (prev === undefined && to - from < 2)) return HAS_NEWEST | HAS_MEAN;
  r[V_INC] = inc;
  r[V_SECS] = secs;
  return HAS_NEWEST | HAS_MEAN | HAS_INC;
}

/** valueRun as a SeriesValue (undefined when there are no points). Pure but for reading `run`. */
export function runSeriesValue(run: PointRun, from: number, to: number, prev: Point | undefined): SeriesValue | undefined {
  const flags = valueRun(run, from, to, prev);
  if (flags === 0) return undefined;
  const r = RUN_VALUE;
  const newest: Point = { t: r[V_T] as number, v: r[V_V] as number };
  if ((flags & HAS_MEAN) === 0) return { newest };
  if ((flags & HAS_INC) === 0) return { newest, mean: r[V_MEAN] as number };
  return { newest, inc: r[V_INC] as number, secs: r[V_SECS] as number, mean: r[V_MEAN] as number };
}

/**
 * Drop the points of [from, to) of a run whose time is after `maxT` (epoch ms), keeping the others in their order;
 * returns the new end (the points dropped: `to` minus it). Time from upstream is data: a point from a node's
 * future must not become the newest one. Pure but for the run.
 */
export function dropAfter(run: PointRun, from: number, to: number, maxT: number): number {
  const ts = run.t;
  const vs = run.v;
  let w = from;
  for (let i = from; i < to; i++) {
    const t = ts[i] as number;
    if (t > maxT) continue;
    if (w !== i) {
      ts[w] = t;
      vs[w] = vs[i] as number;
    }
    w++;
  }
  return w;
}

/**
 * Drop the points of [from, to) of a run whose value is below 0, keeping the others in their order; returns the new
 * end. For a series that cannot be negative (range-grouping.ts nonNegativeMetrics): such a point is no value, and a
 * counter going down through it is no reset. Counted in REFUSED (negative). Pure but for the run and REFUSED.
 */
export function dropNegative(run: PointRun, from: number, to: number): number {
  const ts = run.t;
  const vs = run.v;
  let w = from;
  for (let i = from; i < to; i++) {
    const v = vs[i] as number;
    if (v < 0) continue;
    if (w !== i) {
      ts[w] = ts[i] as number;
      vs[w] = v;
    }
    w++;
  }
  REFUSED.negative += to - w;
  return w;
}

/** rawSeriesValue's run. */
const RAW_RUN = new PointRun();

/** The usable points of an entry's raw `values` in a reused run (valid until the next call). */
export function rawRun(values: readonly unknown[]): PointRun {
  const run = RAW_RUN;
  run.n = 0;
  for (let i = 0; i < values.length; i++) if (readPoint(values[i])) run.push(READ.t, READ.v);
  return run;
}

/**
 * `seriesValue(pointsOf(values), prev)` from an entry's raw `values` (as JSON.parse makes them), without the points
 * in between. Undefined when no point is usable. Pure; a test holds the two ways equal.
 */
export function rawSeriesValue(values: readonly unknown[], prev: Point | undefined): SeriesValue | undefined {
  const run = rawRun(values);
  return runSeriesValue(run, 0, run.n, prev);
}
