/**
 * The range source's one-pass path (groupAnswers, rawSeriesValue) against the two steps it replaces
 * (parseQueryAnswer then groupSeries; pointsOf then seriesValue), whose rules range.test.ts checks with
 * hand-written values. Answers are generated: points out of order, repeated times, numbers and numeric strings,
 * unusable entries, errors, several nodes, summed series, and two polls in a row sharing one memo.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { groupAnswers, groupSeries, kvItemOf, parseQueryAnswer, pointsOf, rawSeriesValue, seriesValue } from '../../src/stats/range.js';
import type { CounterMemo, Point, RawAnswer } from '../../src/stats/range.js';

const rawPoint = fc.oneof(
  fc.tuple(fc.integer({ min: 1_700_000_000, max: 1_700_000_100 }), fc.oneof(fc.integer({ min: 0, max: 50 }).map(String), fc.integer({ min: 0, max: 50 }), fc.constantFrom('NaN', '', 'x'))),
  fc.tuple(fc.integer({ min: 1_700_000_000, max: 1_700_000_100 }).map(String), fc.integer({ min: 0, max: 50 }).map(String)),
  fc.constantFrom<unknown>(null, [], [1_700_000_000], 'odd'),
);
const values = fc.array(rawPoint, { maxLength: 8 });
// Mostly ordered, as the API sends them: sorted by time unless the flag says otherwise.
const valuesMaybeSorted = fc.tuple(values, fc.boolean()).map(([vs, keep]) =>
  keep ? vs : [...vs].sort((a, b) => (Array.isArray(a) && Array.isArray(b) ? Number(a[0]) - Number(b[0]) : 0)),
);
const prevPoint = fc.option(fc.record({ t: fc.integer({ min: 1_700_000_000, max: 1_700_000_100 }).map((s) => s * 1000), v: fc.integer({ min: 0, max: 50 }) }), { nil: undefined });

describe('rawSeriesValue', () => {
  it('equals seriesValue over pointsOf, whatever the points and the previous newest point', () => {
    fc.assert(
      fc.property(valuesMaybeSorted, prevPoint, (vs, prev) => {
        const points = pointsOf(vs);
        const want = points.length === 0 ? undefined : seriesValue(points, prev);
        expect(rawSeriesValue(vs, prev)).toEqual(want);
      }),
      { numRuns: 2000 },
    );
  });

  it('by hand: a later poll counts from the previous newest point, across a reset', () => {
    const prev: Point = { t: 10_000, v: 110 };
    expect(rawSeriesValue([[0, '100'], [10, '110'], [20, '5'], [30, '25']], prev)).toEqual({ newest: { t: 30_000, v: 25 }, inc: 25, secs: 20, mean: 15 });
  });
});

const node = fc.constantFrom('n1:8091', 'n2:8091', 'n3:8091');
const entry = fc.oneof(
  { weight: 8, arbitrary: fc.record({ metric: fc.record({ name: fc.constant('kv_ops'), bucket: fc.constantFrom('a', 'b'), op: fc.constantFrom('get', 'set'), nodes: fc.oneof(node.map((n) => [n]), fc.constant(['n1:8091', 'n2:8091'])) }), values: valuesMaybeSorted }) },
  { weight: 1, arbitrary: fc.constantFrom<unknown>(null, 'x', { metric: null, values: [] }, { metric: { name: 'kv_ops' } }) },
);
const answer = fc.oneof(
  { weight: 6, arbitrary: fc.record({ data: fc.array(entry, { maxLength: 12 }), errors: fc.array(fc.oneof(fc.record({ node, error: fc.constant('timeout') }), fc.constant<unknown>('boom')), { maxLength: 1 }) }) },
  { weight: 1, arbitrary: fc.constantFrom<unknown>(null, { errors: [] }, { data: 'x' }) },
);
const poll = fc.array(fc.tuple(answer, fc.boolean(), fc.boolean()), { minLength: 1, maxLength: 3 });

describe('groupAnswers', () => {
  it('gives the groups, memo and error texts of parseQueryAnswer then groupSeries, over two polls', () => {
    fc.assert(
      fc.property(poll, poll, (first, second) => {
        const memoA: CounterMemo = new Map();
        const memoB: CounterMemo = new Map();
        for (const round of [first, second]) {
          const raw: RawAnswer[] = round.map(([a, summed, failed], i) => (failed && i === 0 ? { metric: `m${i}`, failed: true } : { metric: `m${i}`, raw: a, summed }));
          const parsed = raw.map((r) => ('failed' in r ? { metric: r.metric, series: [], erroredNodes: new Set(['*']), errors: [] } : parseQueryAnswer(r.metric, r.raw, r.summed)));
          const got = groupAnswers(raw, kvItemOf, memoA);
          expect(got.groups).toEqual(groupSeries(parsed, kvItemOf, memoB));
          expect([...memoA]).toEqual([...memoB]);
          expect(got.errors).toEqual(parsed.filter((r) => r.errors.length > 0).map((r) => ({ metric: r.metric, errors: r.errors })));
        }
      }),
      { numRuns: 500 },
    );
  });
});
