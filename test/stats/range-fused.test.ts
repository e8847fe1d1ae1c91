/**
 * The range source's one-pass path (groupAnswers, rawSeriesValue) against the two steps it replaces
 * (parseQueryAnswer then groupSeries; pointsOf then seriesValue), whose rules range.test.ts checks with
 * hand-written values. Answers are generated: points out of order, repeated times, numbers and numeric strings,
 * unusable entries, errors, several nodes, summed series, and two polls in a row sharing one memo.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { AnswerGrouping, arrayElementBounds, groupAnswers, groupSeries, kvItemOf, parseQueryAnswer, pointsOf, rawSeriesValue, seriesValue, StagedRequest } from '../../src/stats/range.js';
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

/** A memo's keys and points, without the number of the grouping that last saw each (which differs between two). */
function memoPoints(memo: CounterMemo): Array<[string, { t: number; v: number }]> {
  return [...memo].map(([k, r]) => [k, { t: r.t, v: r.v }]);
}

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
          expect(memoPoints(memoA)).toEqual(memoPoints(memoB));
          expect(got.errors).toEqual(parsed.filter((r) => r.errors.length > 0).map((r) => ({ metric: r.metric, errors: r.errors })));
        }
      }),
      { numRuns: 500 },
    );
  });
});

// A request's body read query by query (AnswerGrouping.readText, then commit) against the same answers added parsed.
const names = ['m0', 'm1', 'm2'];
const spacing = fc.constantFrom('', ' ', '\n  ', '\t');

/** JSON text of `answers` with whitespace between the top-level tokens, and strings holding brackets and commas. */
function bodyText(answers: readonly unknown[], ws: string): string {
  return `${ws}[${ws}${answers.map((a) => JSON.stringify(a)).join(`${ws},${ws}`)}${ws}]${ws}`;
}

describe('AnswerGrouping.readText', () => {
  it('gives the groups, memo and error texts of add() over the parsed answers, over two polls', () => {
    const tricky = fc.record({ data: fc.constant([{ metric: { name: 'kv_ops', bucket: 'a],"{b\\"', nodes: ['n1:8091'] }, values: [[1_700_000_000, '1'], [1_700_000_010, '3']] }]), errors: fc.constant([]) });
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.array(fc.oneof(answer, tricky), { minLength: 0, maxLength: 4 }), fc.boolean(), spacing), { minLength: 2, maxLength: 2 }), (polls) => {
        const memoA: CounterMemo = new Map();
        const memoB: CounterMemo = new Map();
        for (const [answers, summedFirst, ws] of polls) {
          const summed = new Set(summedFirst ? ['m0'] : []);
          const a = new AnswerGrouping(kvItemOf, memoA);
          const staged = a.readText(bodyText(answers, ws), names, summed);
          expect(staged).toBeInstanceOf(StagedRequest);
          a.commit(staged as StagedRequest);
          const b = new AnswerGrouping(kvItemOf, memoB);
          b.add(names.map((metric, i): RawAnswer => ({ metric, raw: answers[i], summed: summed.has(metric) })));
          expect(a.done()).toEqual(b.done());
          expect(memoPoints(memoA)).toEqual(memoPoints(memoB));
          expect(a.errorTexts).toEqual(b.errorTexts);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('a body that is not JSON throws SyntaxError with its position in the whole body, and changes nothing', () => {
    const memo: CounterMemo = new Map([['k', { t: 1, v: 2 }]]);
    const g = new AnswerGrouping(kvItemOf, memo);
    const good = JSON.stringify({ data: [{ metric: { name: 'kv_ops', bucket: 'a', nodes: ['n1:8091'] }, values: [[1_700_000_000, '5']] }], errors: [] });
    // The second answer is broken (`tru`); the third query's answer is past the names and still must be JSON.
    for (const body of [`[${good},{"data":tru}]`, `[${good},${good},{"x":}]`, `[${good}`, `[${good},]`, `[${good}] x`]) {
      expect(() => g.readText(body, names.slice(0, 2), new Set())).toThrow(SyntaxError);
    }
    try {
      g.readText(`[${good},{"data":tru}]`, names, new Set());
    } catch (err) {
      // The broken answer starts after `[` + good + `,`; V8 names no position within it for `tru`.
      expect((err as Error).message).toContain(`position ${good.length + 2}`);
      expect((err as Error).message).not.toContain('data');
    }
    expect([...memo]).toEqual([['k', { t: 1, v: 2 }]]);
    expect(g.done().items.size).toBe(0);
  });

  it('a body that is JSON but not an array comes back as parsed, for the schema to refuse', () => {
    const g = new AnswerGrouping(kvItemOf, new Map());
    expect(g.readText(' {"data":[]} ', names, new Set())).toEqual({ data: [] });
    expect(g.readText('null', names, new Set())).toBeNull();
  });
});

describe('arrayElementBounds', () => {
  it('slices a JSON array into its elements, whatever they hold', () => {
    fc.assert(
      fc.property(fc.array(fc.jsonValue(), { maxLength: 6 }), spacing, (els, ws) => {
        const text = bodyText(els, ws);
        const b = arrayElementBounds(text);
        expect(b).toBeDefined();
        const got = [];
        for (let i = 0; i < (b as number[]).length; i += 2) got.push(JSON.parse(text.slice((b as number[])[i], (b as number[])[i + 1])));
        expect(got).toEqual(JSON.parse(text));
      }),
      { numRuns: 1000 },
    );
  });

  it('by hand: what it does not read as an array', () => {
    expect(arrayElementBounds('[]')).toEqual([]);
    expect(arrayElementBounds(' [ 1 , "a,]\\"" ] ')).toEqual([3, 5, 7, 15]);
    for (const t of ['', '{}', '[', '[1,]', '[,1]', '[1] 2', '["a]', '[1}', '[1,,2]']) expect(arrayElementBounds(t)).toBeUndefined();
  });
});
