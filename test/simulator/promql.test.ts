/**
 * The simulator's PromQL subset, on hand-made series with values worked out by hand from Prometheus 2.x's
 * promql/functions.go (extrapolatedRate, irate, deriv) and the range API's rules (menelaus_web_stats.erl).
 */
import { describe, expect, it } from 'vitest';
import type { NativeSeries } from '../../src/simulator/native.js';
import { PromqlError, compileMatchers, durationSeconds, evaluate, formatValue, validFunction } from '../../src/simulator/promql.js';

/** A series scraped every 10 s with the given values at those seconds. */
function series(name: string, labels: Record<string, string>, values: Record<number, number>): NativeSeries {
  return { name, family: name, labels, instance: 'kv', type: 'counter', help: '', at: (sec) => values[sec] };
}

const T = 1000;

describe('range functions', () => {
  const line: Record<number, number> = {};
  for (let t = T - 300; t <= T; t += 10) line[t] = 2 * t;

  it('rate and increase over a window filled with scrapes: the plain slope, no extrapolation', () => {
    const s = series('c', {}, line);
    const rate = evaluate([s], { functions: ['rate'], window: 60, times: [T] }, T - 300, T);
    expect(rate[0]?.points).toEqual([[T, 2]]);
    const inc = evaluate([s], { functions: ['increase'], window: 60, times: [T] }, T - 300, T);
    expect(inc[0]?.points).toEqual([[T, 120]]);
  });

  it('a series that starts inside the window is extrapolated by half an interval at most', () => {
    // Scrapes at T-30 … T (4 points, 30 s covered, 10 s apart); 30 s to the window's start > 1.1 × 10 s, so
    // Prometheus extends by 5 s: increase = 60 × 35 / 30 = 70 (the counter's large value rules out "to zero").
    const values: Record<number, number> = {};
    for (let t = T - 30; t <= T; t += 10) values[t] = 1e6 + 2 * (t - (T - 30));
    const s = series('c', {}, values);
    const inc = evaluate([s], { functions: ['increase'], window: 60, times: [T] }, T - 30, T);
    expect(inc[0]?.points[0]?.[1]).toBeCloseTo(70, 9);
    const rate = evaluate([s], { functions: ['rate'], window: 60, times: [T] }, T - 30, T);
    expect(rate[0]?.points[0]?.[1]).toBeCloseTo(70 / 60, 9);
  });

  it('a counter reset adds the value before it; irate takes the last two points', () => {
    const s = series('c', {}, { [T - 30]: 100, [T - 20]: 110, [T - 10]: 5, [T]: 15 });
    // delta = 15 - 100 + 110 (the reset) = 25 over the 30 s covered, extrapolated to the 30 s window (+0 s):
    // start 0 s away (window 30 → [T-30, T]).
    const inc = evaluate([s], { functions: ['increase'], window: 30, times: [T] }, T - 30, T);
    expect(inc[0]?.points[0]?.[1]).toBeCloseTo(25, 9);
    const irate = evaluate([s], { functions: ['irate'], window: 30, times: [T] }, T - 30, T);
    expect(irate[0]?.points[0]?.[1]).toBeCloseTo(1, 9);
    const idelta = evaluate([s], { functions: ['idelta'], window: 30, times: [T] }, T - 30, T);
    expect(idelta[0]?.points[0]?.[1]).toBe(10);
  });

  it('over_time functions, deriv and delta', () => {
    const s = series('g', {}, { [T - 20]: 4, [T - 10]: 10, [T]: 7 });
    const at = (f: string): number | undefined => evaluate([s], { functions: [f], window: 20, times: [T] }, T - 20, T)[0]?.points[0]?.[1];
    expect(at('avg_over_time')).toBe(7);
    expect(at('min_over_time')).toBe(4);
    expect(at('max_over_time')).toBe(10);
    // Least squares through (−10, 4), (0, 10), (10, 7) around their mean: slope = (−10·−3 + 0 + 10·0) / 200 = 0.15.
    expect(at('deriv')).toBeCloseTo(0.15, 12);
    expect(at('delta')).toBe(3);
  });

  it('an instant selector takes the newest scrape at most 5 minutes old', () => {
    const s = series('g', {}, { [T - 10]: 3 });
    expect(evaluate([s], { functions: [], window: 60, times: [T - 5, T + 290, T + 291] }, T - 10, T - 10)[0]?.points).toEqual([
      [T - 5, 3],
      [T + 290, 3],
    ]);
  });
});

describe('aggregations and matchers', () => {
  const a = series('m', { bucket: 'a' }, { [T]: 1 });
  const b = series('m', { bucket: 'b' }, { [T]: 5 });

  it('sum, avg, min, max drop every label; pN finds no histogram buckets', () => {
    for (const [f, v] of [['sum', 6], ['avg', 3], ['min', 1], ['max', 5]] as const) {
      expect(evaluate([a, b], { functions: [f], window: 60, times: [T] }, T, T)).toEqual([{ labels: {}, points: [[T, v]] }]);
    }
    expect(evaluate([a, b], { functions: ['p95'], window: 60, times: [T] }, T, T)).toEqual([]);
  });

  it('a range function after an aggregation is refused, as Prometheus refuses it', () => {
    expect(() => evaluate([a], { functions: ['sum', 'rate'], window: 60, times: [T] }, T, T)).toThrow(PromqlError);
    expect(() => evaluate([a], { functions: ['rate', 'irate'], window: 60, times: [T] }, T, T)).toThrow(/range vector/);
  });

  it('matchers are anchored; a missing label matches as empty; any / not_any take lists', () => {
    const m = (op: '=' | '!=' | '=~' | '!~' | 'any' | 'not_any', value: string | string[]) => compileMatchers([{ label: 'bucket', op, value }]);
    expect(m('=~', 'trav')({ bucket: 'travel' })).toBe(false);
    expect(m('=~', 'trav.*')({ bucket: 'travel' })).toBe(true);
    expect(m('!~', 'a|b')({ bucket: 'b' })).toBe(false);
    expect(m('=', '')({})).toBe(true);
    expect(m('!=', 'x')({})).toBe(true);
    expect(m('any', ['a', 'b'])({ bucket: 'b' })).toBe(true);
    expect(m('not_any', ['a', 'b'])({ bucket: 'b' })).toBe(false);
    expect(() => m('=~', '(')).toThrow(PromqlError);
  });

  it('functions, durations and values as the range API and Prometheus write them', () => {
    for (const f of ['rate', 'irate', 'increase', 'sum', 'avg', 'p1', 'p100']) expect(validFunction(f), f).toBe(true);
    for (const f of ['p0', 'p101', 'median', '']) expect(validFunction(f), f).toBe(false);
    expect([durationSeconds('1m'), durationSeconds(90), durationSeconds('90'), durationSeconds('2h')]).toEqual([60, 90, 90, 7200]);
    expect([durationSeconds('1.5m'), durationSeconds('0s'), durationSeconds(-5), durationSeconds('10x')]).toEqual([undefined, undefined, undefined, undefined]);
    expect([formatValue(40), formatValue(15.899122807017545), formatValue(NaN), formatValue(Infinity), formatValue(-Infinity)]).toEqual(['40', '15.899122807017545', 'NaN', '+Inf', '-Inf']);
  });
});
