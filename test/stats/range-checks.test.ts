/**
 * Range answers checked, not trusted: a series given twice is counted once, a time given twice
 * or out of order is resolved once (one point per time), and only decimal numbers in Couchbase's forms are
 * numbers. Each case both ways an answer is read (the text's reader, and JSON.parse where the reader gives up: an
 * escaped quote in an extra label forces it), against values worked out by hand from the points below.
 */
import { CounterMemo } from '../../src/stats/counter-memo.js';
import { describe, expect, it } from 'vitest';
import { KV_NATIVE_MAP, KV_ROW_BY_LEGACY } from '../../src/stats/native-map.js';
import type { NativeMapRow } from '../../src/stats/native-map.js';
import { AnswerGrouping, kvItemOf, StagedRequest } from '../../src/stats/range.js';
import { newestOf, rowValue } from '../../src/stats/row-values.js';
import type { RangeItems } from '../../src/stats/range-groups.js';
import { decimalOf } from '../../src/stats/range-values.js';

const T0 = 1_700_000_000;
const CURR_ITEMS = KV_ROW_BY_LEGACY.get('curr_items') as NativeMapRow;
const OPS = KV_ROW_BY_LEGACY.get('ops') as NativeMapRow;

type Entry = { labels: Record<string, string>; node?: string; values: unknown[] };

/** One poll of one query (`metric`), read from its text; `parsed`: with a label the reader gives up on. */
function poll(metric: string, entries: readonly Entry[], parsed: boolean): { g: RangeItems; duplicates: number } {
  const data = entries.map((e) => ({ metric: { nodes: [e.node ?? 'n1:8091'], name: metric, ...e.labels, ...(parsed ? { note: 'a "quoted" note' } : {}) }, values: e.values }));
  const text = JSON.stringify([{ data, errors: [], startTimestamp: T0 - 60, endTimestamp: T0 + 60 }]);
  const a = new AnswerGrouping(KV_NATIVE_MAP, kvItemOf, new CounterMemo());
  const staged = a.readText(text, [metric], new Set());
  expect(staged).toBeInstanceOf(StagedRequest);
  a.commit(staged as StagedRequest);
  return { g: a.done(), duplicates: a.caps.counts.get('range_duplicate_series') ?? 0 };
}

const both = [false, true].map((parsed) => [parsed ? 'parsed' : 'read', parsed] as const);

describe.each(both)('a series given twice (%s)', (_how, parsed) => {
  it('curr_items of 1,000 given twice on one node is 1,000, not 2,000; counted as a duplicate', () => {
    const e: Entry = { labels: { bucket: 'b' }, values: [[T0, '1000']] };
    const { g, duplicates } = poll('kv_curr_items', [e, e], parsed);
    expect(rowValue(CURR_ITEMS, g, 'b', undefined)).toBe(1000);
    expect(rowValue(CURR_ITEMS, g, 'b', 'n1:8091')).toBe(1000);
    expect(duplicates).toBe(1);
  });

  it('two nodes of 1,000 each are still 2,000 (not duplicates)', () => {
    const { g, duplicates } = poll('kv_curr_items', [
      { labels: { bucket: 'b' }, node: 'n1:8091', values: [[T0, '1000']] },
      { labels: { bucket: 'b' }, node: 'n2:8091', values: [[T0, '1000']] },
    ], parsed);
    expect(rowValue(CURR_ITEMS, g, 'b', undefined)).toBe(2000);
    expect(duplicates).toBe(0);
  });

  it('its two halves are merged: the newest point of either', () => {
    const { g } = poll('kv_curr_items', [
      { labels: { bucket: 'b' }, values: [[T0 + 10, '1010'], [T0 + 20, '1020']] },
      { labels: { bucket: 'b' }, values: [[T0, '1000'], [T0 + 10, '1010']] },
    ], parsed);
    expect(rowValue(CURR_ITEMS, g, 'b', undefined)).toBe(1020);
    expect(newestOf(g, 'b', undefined)).toBe((T0 + 20) * 1000);
  });
});

describe.each(both)('times given twice or out of order (%s)', (_how, parsed) => {
  // A counter of 2,155,045,162 growing by 6 each 10 s: 0.6 per second. A second value at T0 + 10 (0) made it a
  // reset, so the increase counted the counter's whole value: (2,155,045,162 + 18) / 20 s = 107,752,259 per second.
  const C = 2_155_045_162;

  it('ops_per_second is 0.6 when a time comes twice with two values (that time dropped), not 107,752,259', () => {
    const { g } = poll('kv_cmd_lookup', [{ labels: { bucket: 'b' }, values: [[T0, `${C}`], [T0 + 10, `${C + 6}`], [T0 + 10, '0'], [T0 + 20, `${C + 12}`]] }], parsed);
    expect(rowValue(OPS, g, 'b', undefined)).toBeCloseTo(0.6, 12);
  });

  it('the same, the wrong value first', () => {
    const { g } = poll('kv_cmd_lookup', [{ labels: { bucket: 'b' }, values: [[T0, `${C}`], [T0 + 10, '0'], [T0 + 10, `${C + 6}`], [T0 + 20, `${C + 12}`]] }], parsed);
    expect(rowValue(OPS, g, 'b', undefined)).toBeCloseTo(0.6, 12);
  });

  it('a time given twice with one value counts once; points out of order are put in order', () => {
    const { g } = poll('kv_cmd_lookup', [{ labels: { bucket: 'b' }, values: [[T0 + 20, `${C + 12}`], [T0, `${C}`], [T0 + 10, `${C + 6}`], [T0 + 10, `${C + 6}`]] }], parsed);
    expect(rowValue(OPS, g, 'b', undefined)).toBeCloseTo(0.6, 12);
  });

  it('a level whose newest time has two values is the point before it', () => {
    const { g } = poll('kv_curr_items', [{ labels: { bucket: 'b' }, values: [[T0, '1000'], [T0 + 10, '1010'], [T0 + 10, '5']] }], parsed);
    expect(rowValue(CURR_ITEMS, g, 'b', undefined)).toBe(1000);
    expect(newestOf(g, 'b', undefined)).toBe(T0 * 1000);
  });
});

describe.each(both)('numbers (%s)', (_how, parsed) => {
  const level = (v: unknown, t: unknown = T0) => rowValue(CURR_ITEMS, poll('kv_curr_items', [{ labels: { bucket: 'b' }, values: [[t, v]] }], parsed).g, 'b', undefined);

  it('"" and " " are no value (absent), not 0', () => {
    expect(level('')).toBeUndefined();
    expect(level(' ')).toBeUndefined();
    expect(level(' 7 ')).toBeUndefined();
  });

  it('"0x1F" is refused, not 31; other forms Number() reads but Couchbase never writes too', () => {
    for (const v of ['0x1F', '0b11', '0o7', '+3', '1_000', 'Infinity', '.5', '5.', '1e', '--1', '1e3x']) expect(level(v)).toBeUndefined();
  });

  it("Couchbase's decimal forms are read: Prometheus's and ns_server's (float_to_binary, scientific)", () => {
    expect(level('1000')).toBe(1000);
    // A negative decimal is read as such; curr_items cannot be below 0, so there it is refused (range-silent-loss.test.ts).
    expect(decimalOf('-5', 0, 2)).toBe(-5);
    expect(level('-5')).toBeUndefined();
    expect(level('0.6')).toBe(0.6);
    expect(level('1e3')).toBe(1000);
    expect(level('1.00000000000000000000e+03')).toBe(1000);
    expect(level('2.5E-1')).toBe(0.25);
    expect(level('123456789012345678')).toBe(123456789012345680);
    expect(level(42)).toBe(42);
  });

  it('"NaN", "Inf", "+Inf" and "-Inf" (how Couchbase writes no value and the infinities) skip the point', () => {
    for (const v of ['NaN', 'Inf', '+Inf', '-Inf']) expect(level(v)).toBeUndefined();
    const { g } = poll('kv_curr_items', [{ labels: { bucket: 'b' }, values: [[T0, '1000'], [T0 + 10, 'NaN'], [T0 + 20, '+Inf']] }], parsed);
    expect(rowValue(CURR_ITEMS, g, 'b', undefined)).toBe(1000);
    expect(newestOf(g, 'b', undefined)).toBe(T0 * 1000);
  });

  it('a time that is no decimal skips the point ("" was the epoch)', () => {
    expect(level('5', '')).toBeUndefined();
    expect(level('5', '0x6553f100')).toBeUndefined();
    expect(level('5', `${T0}`)).toBe(5);
  });
});

describe('decimalOf', () => {
  it('reads only the decimal forms, by hand', () => {
    const d = (s: string) => decimalOf(s, 0, s.length);
    expect(d('0')).toBe(0);
    expect(d('007')).toBe(7);
    expect(d('-0.5')).toBe(-0.5);
    expect(d('1E+2')).toBe(100);
    for (const s of ['', ' ', '-', '0x1F', 'NaN', '+Inf', 'Inf', '-Inf', ' 1', '1 ', '1,5', '1.', '.5', '-.5', '1.5.', '1e', '1e+']) expect(d(s)).toBeNaN();
  });

  it('gives what Number() gives for every decimal, bit for bit (fractions are read without a copy of the text)', () => {
    const d = (s: string) => decimalOf(s, 0, s.length);
    // Hand-picked: halfway cases and values whose nearest double is not the naive digit-by-digit sum.
    const picked = ['0.1', '0.2', '0.3', '-0.0', '-0', '0.000001', '123456789012.345', '999999999999999', '9999999999999999', '0.1234567890123456789', '1.7976931348623157', '9007199254740993', '3.0000000000000004', '17.91', '2.675', '1e21', '12.5e-3', '0.30000000000000004'];
    const seeded = (seed: number) => () => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32);
    const r = seeded(37);
    const digits = (n: number) => Array.from({ length: n }, () => Math.floor(r() * 10)).join('');
    const random: string[] = [];
    for (let i = 0; i < 20_000; i++) {
      const whole = digits(1 + Math.floor(r() * 12));
      const frac = r() < 0.8 ? `.${digits(1 + Math.floor(r() * 10))}` : '';
      random.push(`${r() < 0.3 ? '-' : ''}${whole}${frac}`);
    }
    for (const s of [...picked, ...random]) expect(Object.is(d(s), Number(s)), s).toBe(true);
    // And inside a longer text, as the reader calls it.
    expect(decimalOf('["x","17.91"]', 6, 11)).toBe(17.91);
  });
});
