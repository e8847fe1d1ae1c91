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
 * (31), `"1_000"`, `"+3"`, `"Infinity"` (issue 39). Digits alone (up to 15) are read here, anything else by Number()
 * once its form is checked. Pure.
 */
export function decimalOf(t: string, start: number, end: number): number {
  const len = end - start;
  if (len <= 0) return Number.NaN;
  if (len <= 15) {
    let n = 0;
    let p = start;
    for (; p < end; p++) {
      const d = t.charCodeAt(p) - ZERO;
      if (d < 0 || d > 9) break;
      n = n * 10 + d;
    }
    if (p === end) return n;
  }
  let p = start;
  let c = t.charCodeAt(p);
  if (c === MINUS) c = t.charCodeAt(++p);
  // Not a digit: `NaN`, `Inf`, `+Inf`, `-Inf` (no value; the point is skipped as any non-finite one) or no number.
  if (c < ZERO || c > NINE) return Number.NaN;
  do c = t.charCodeAt(++p);
  while (c >= ZERO && c <= NINE);
  if (c === DOT) {
    c = t.charCodeAt(++p);
    if (c < ZERO || c > NINE) return Number.NaN;
    do c = t.charCodeAt(++p);
    while (c >= ZERO && c <= NINE);
  }
  if (c === 0x65 || c === 0x45) {
    c = t.charCodeAt(++p);
    if (c === PLUS || c === MINUS) c = t.charCodeAt(++p);
    if (c < ZERO || c > NINE) return Number.NaN;
    do c = t.charCodeAt(++p);
    while (c >= ZERO && c <= NINE);
  }
  return p === end ? Number(t.slice(start, end)) : Number.NaN;
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
  if (!Array.isArray(p) || p.length < 2) return false;
  const t = numberOf(p[0]);
  const v = numberOf(p[1]);
  if (!Number.isFinite(t) || !Number.isFinite(v)) return false;
  READ.t = t * 1000;
  READ.v = v;
  return true;
}

/**
 * Points in time order with one point per time: sorted (stably) when they do not come so, and where several points
 * share a time, one of them when they agree, none when they do not (which of two values at one instant is the
 * counter's cannot be told; a wrong one is a reset and an increase of the counter's whole value: ops_per_second
 * 107,752,259 instead of 0.6, issue 39). Pure but for sorting and shortening `points`.
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
 * The previous newest point of a native series, kept between polls and updated in place (a poll makes no new
 * record for a series it already knows). `gen`: the grouping that last saw it; a grouping's end forgets the
 * records it did not see.
 */
export interface MemoPoint {
  t: number;
  v: number;
  gen?: number;
  /** When it was last staged (range-groups.ts: finding a series an answer repeats). */
  staged?: number;
}

/** The previous newest point of each native series (node, metric, labels), kept between polls. */
export type CounterMemo = Map<string, MemoPoint>;

/**
 * A native series' key in the memo: node, metric, then its labels in name order. The `name` label, which the
 * range API sets to the metric's own name, is left out when it is that: a seventh of the key's length, at 100,000
 * series and more.
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
    if (this.n === this.t.length) {
      const t2 = new Float64Array(this.n * 2);
      const v2 = new Float64Array(this.n * 2);
      t2.set(this.t);
      v2.set(this.v);
      this.t = t2;
      this.v = v2;
    }
    this.t[this.n] = t;
    this.v[this.n] = v;
    this.n++;
  }
}

/**
 * `seriesValue` of the points [from, to) of a run, in one pass when they come oldest first with one point per time
 * (as the range API sends them), else through seriesValue over them resolved (resolvePoints). Undefined when there
 * are none. Pure but for reading `run`.
 */
export function runSeriesValue(run: PointRun, from: number, to: number, prev: Point | undefined): SeriesValue | undefined {
  if (to <= from) return undefined;
  const ts = run.t;
  const vs = run.v;
  for (let i = from + 1; i < to; i++) {
    if ((ts[i] as number) <= (ts[i - 1] as number)) {
      // Out of order, or a time given twice: as pointsOf, sorted and one point per time.
      const points: Point[] = [];
      for (let j = from; j < to; j++) points.push({ t: ts[j] as number, v: vs[j] as number });
      return seriesValue(resolvePoints(points), prev);
    }
  }
  const firstT = ts[from] as number;
  const lastT = ts[to - 1] as number;
  const newest: Point = { t: lastT, v: vs[to - 1] as number };
  if (prev !== undefined && lastT <= prev.t) return { newest };
  let sum = 0;
  let count = 0;
  let inc = 0;
  let last = prev === undefined ? 0 : prev.v;
  for (let i = from; i < to; i++) {
    const at = ts[i] as number;
    const v = vs[i] as number;
    // As seriesValue: the first answer counts every point in the mean and the increase from its first point;
    // a later one only the points after the previous newest, the increase from it.
    if (prev === undefined || at > prev.t) {
      sum += v;
      count++;
      if (prev !== undefined || i > from) inc += v >= last ? v - last : v;
      last = v;
    }
  }
  const mean = sum / count;
  const secs = (lastT - (prev === undefined ? firstT : prev.t)) / 1000;
  if (secs <= 0 || (prev === undefined && to - from < 2)) return { newest, mean };
  return { newest, inc, secs, mean };
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
