/**
 * The little of PromQL a Couchbase node's Prometheus evaluates for the range API (ns_server's
 * menelaus_web_stats builds `f2(f1(metric{labels}[window]))` from `applyFunctions`): label matchers, one
 * range-vector function over the scraped samples (Prometheus 2.x semantics: window [t - w, t], rate/increase
 * extrapolated to the window's edges as Prometheus does), then instant aggregations (sum, min, max, avg drop
 * every label; pN is histogram_quantile, which finds no `le` buckets among the simulated series: empty).
 * Errors are thrown as PromqlError with the text a Prometheus would give; the caller reports them per node.
 */
import { SCRAPE_SECONDS } from './native.js';
import type { NativeSeries } from './native.js';

export class PromqlError extends Error {}

export type MatchOp = '=' | '!=' | '=~' | '!~' | 'any' | 'not_any';

export interface Matcher {
  readonly label: string;
  readonly op: MatchOp;
  readonly value: string | readonly string[];
}

export const RANGE_FUNCTIONS = ['rate', 'irate', 'increase', 'avg_over_time', 'min_over_time', 'max_over_time', 'deriv', 'delta', 'idelta'] as const;
const INSTANT_AGGREGATIONS = ['sum', 'min', 'max', 'avg'] as const;

/** Whether `f` is a function the range API accepts (ns_server's validate_functions). */
export function validFunction(f: string): boolean {
  if ((RANGE_FUNCTIONS as readonly string[]).includes(f) || (INSTANT_AGGREGATIONS as readonly string[]).includes(f)) return true;
  const m = /^p(\d+)$/.exec(f);
  return m !== null && Number(m[1]) > 0 && Number(m[1]) <= 100;
}

/** Prometheus duration (`90`, `90s`, `5m`, `1h`…) in seconds; undefined when it is not one. */
export function durationSeconds(v: unknown): number | undefined {
  if (typeof v === 'number') return Number.isInteger(v) && v > 0 ? v : undefined;
  if (typeof v !== 'string') return undefined;
  const m = /^(\d+)([smhdwy]?)$/.exec(v);
  if (!m) return undefined;
  const unit = { '': 1, s: 1, m: 60, h: 3600, d: 86_400, w: 604_800, y: 31_536_000 }[m[2] as string] as number;
  const s = Number(m[1]) * unit;
  return s > 0 ? s : undefined;
}

/** A float as Prometheus writes it in JSON answers and expositions (Go's 'f', -1 for common magnitudes). */
export function formatValue(v: number): string {
  if (Number.isNaN(v)) return 'NaN';
  if (v === Infinity) return '+Inf';
  if (v === -Infinity) return '-Inf';
  return String(v);
}

function regex(pattern: string): RegExp {
  try {
    return new RegExp(`^(?:${pattern})$`);
  } catch (e) {
    throw new PromqlError(`1:1: parse error: error parsing regexp: ${(e as Error).message.replace(/^Invalid regular expression: /, '')}`);
  }
}

/** A predicate over a series' labels (a missing label matches as ''), compiled once per query. */
export function compileMatchers(matchers: readonly Matcher[]): (labels: Readonly<Record<string, string>>) => boolean {
  const tests = matchers.map((m) => {
    const values = Array.isArray(m.value) ? (m.value as string[]) : [m.value as string];
    switch (m.op) {
      case '=':
        return (v: string) => v === values[0];
      case '!=':
        return (v: string) => v !== values[0];
      case '=~': {
        const r = regex(values[0] as string);
        return (v: string) => r.test(v);
      }
      case '!~': {
        const r = regex(values[0] as string);
        return (v: string) => !r.test(v);
      }
      case 'any':
        return (v: string) => values.includes(v);
      case 'not_any':
        return (v: string) => !values.includes(v);
    }
  });
  return (labels) => matchers.every((m, i) => (tests[i] as (v: string) => boolean)(labels[m.label] ?? ''));
}

export interface EvalSeries {
  readonly labels: Record<string, string>;
  readonly points: Array<[number, number]>;
}

/** Scrape samples of a series within [from, to] (whole seconds), oldest first. */
function samples(s: NativeSeries, from: number, to: number, first: number, last: number): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  const lo = Math.max(first, Math.ceil(from / SCRAPE_SECONDS) * SCRAPE_SECONDS);
  const hi = Math.min(last, Math.floor(to / SCRAPE_SECONDS) * SCRAPE_SECONDS);
  for (let t = lo; t <= hi; t += SCRAPE_SECONDS) {
    const v = s.at(t);
    if (v !== undefined) out.push([t, v]);
  }
  return out;
}

/** Prometheus' extrapolatedRate (promql/functions.go), for rate, increase and delta. */
function extrapolated(pts: ReadonlyArray<[number, number]>, start: number, end: number, counter: boolean, isRate: boolean): number | undefined {
  if (pts.length < 2) return undefined;
  const [t0, v0] = pts[0] as [number, number];
  const [tn, vn] = pts[pts.length - 1] as [number, number];
  let delta = vn - v0;
  if (counter) {
    let prev = v0;
    for (const [, v] of pts) {
      if (v < prev) delta += prev;
      prev = v;
    }
  }
  const sampled = tn - t0;
  const avg = sampled / (pts.length - 1);
  let toStart = t0 - start;
  const toEnd = end - tn;
  if (counter && delta > 0 && v0 >= 0) {
    const toZero = sampled * (v0 / delta);
    if (toZero < toStart) toStart = toZero;
  }
  const threshold = avg * 1.1;
  let interval = sampled;
  interval += toStart < threshold ? toStart : avg / 2;
  interval += toEnd < threshold ? toEnd : avg / 2;
  let r = delta * (interval / sampled);
  if (isRate) r /= end - start;
  return r;
}

function rangeFn(fn: string, pts: ReadonlyArray<[number, number]>, start: number, end: number): number | undefined {
  if (pts.length === 0) return undefined;
  const vals = pts.map((p) => p[1]);
  switch (fn) {
    case 'rate':
      return extrapolated(pts, start, end, true, true);
    case 'increase':
      return extrapolated(pts, start, end, true, false);
    case 'delta':
      return extrapolated(pts, start, end, false, false);
    case 'irate':
    case 'idelta': {
      if (pts.length < 2) return undefined;
      const [ta, va] = pts[pts.length - 2] as [number, number];
      const [tb, vb] = pts[pts.length - 1] as [number, number];
      if (fn === 'idelta') return vb - va;
      return (vb < va ? vb : vb - va) / (tb - ta);
    }
    case 'avg_over_time':
      return vals.reduce((a, v) => a + v, 0) / vals.length;
    case 'min_over_time':
      return Math.min(...vals);
    case 'max_over_time':
      return Math.max(...vals);
    case 'deriv': {
      if (pts.length < 2) return undefined;
      const n = pts.length;
      const mt = pts.reduce((a, p) => a + p[0], 0) / n;
      const mv = vals.reduce((a, v) => a + v, 0) / n;
      let num = 0;
      let den = 0;
      for (const [t, v] of pts) {
        num += (t - mt) * (v - mv);
        den += (t - mt) ** 2;
      }
      return num / den;
    }
    default:
      return undefined;
  }
}

export interface RangeQuery {
  readonly functions: readonly string[];
  /** Seconds. */
  readonly window: number;
  readonly times: readonly number[];
}

/**
 * Evaluate one query over one node's series: the selected series, each range function applied at every
 * evaluation time, then the aggregations. Throws PromqlError for what Prometheus would refuse.
 */
export function evaluate(series: readonly NativeSeries[], q: RangeQuery, first: number, last: number): EvalSeries[] {
  const fns = [...q.functions];
  let rangeName: string | undefined;
  if (fns.length > 0 && (RANGE_FUNCTIONS as readonly string[]).includes(fns[0] as string)) rangeName = fns.shift();
  const misplaced = fns.find((f) => (RANGE_FUNCTIONS as readonly string[]).includes(f));
  if (misplaced !== undefined) throw new PromqlError(`1:1: parse error: expected type range vector in call to function "${misplaced}", got instant vector`);

  let result: EvalSeries[] = [];
  for (const s of series) {
    const points: Array<[number, number]> = [];
    for (const t of q.times) {
      if (rangeName === undefined) {
        // An instant selector: the newest sample at most 5 minutes old.
        const newest = Math.min(last, Math.floor(t / SCRAPE_SECONDS) * SCRAPE_SECONDS);
        const v = newest >= Math.max(first, t - 300) ? s.at(newest) : undefined;
        if (v !== undefined) points.push([t, v]);
      } else {
        const v = rangeFn(rangeName, samples(s, t - q.window, t, first, last), t - q.window, t);
        if (v !== undefined && !Number.isNaN(v)) points.push([t, v]);
      }
    }
    // A function drops the metric name (__name__); Couchbase's own `name` label stays.
    if (points.length > 0) result.push({ labels: { name: s.name, instance: s.instance, ...s.labels }, points });
  }

  for (const f of fns) {
    if (/^p\d+$/.test(f)) {
      // histogram_quantile over series without `le` buckets: Prometheus answers nothing.
      result = [];
      continue;
    }
    const byTime = new Map<number, number[]>();
    for (const s of result) for (const [t, v] of s.points) (byTime.get(t) ?? byTime.set(t, []).get(t))?.push(v);
    const points: Array<[number, number]> = [];
    for (const t of q.times) {
      const vs = byTime.get(t);
      if (!vs || vs.length === 0) continue;
      const sum = vs.reduce((a, v) => a + v, 0);
      points.push([t, f === 'sum' ? sum : f === 'avg' ? sum / vs.length : f === 'min' ? Math.min(...vs) : Math.max(...vs)]);
    }
    result = points.length > 0 ? [{ labels: {}, points }] : [];
  }
  return result;
}
