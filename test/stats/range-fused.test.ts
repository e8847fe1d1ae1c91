/**
 * The range source's one-pass path (groupAnswers, rawSeriesValue) against the two steps it replaces
 * (parseQueryAnswer then groupSeries; pointsOf then seriesValue), whose rules range.test.ts checks with
 * hand-written values. Answers are generated: points out of order, repeated times, numbers and numeric strings,
 * unusable entries, errors, several nodes, summed series, and two polls in a row sharing one memo.
 */
import { CounterMemo } from '../../src/stats/counter-memo.js';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { arrayElementBounds } from '../../src/stats/json-slices.js';
import type { NativeMapRow } from '../../src/stats/native-map.js';
import { expectReadAsParsed, memoPoints, ser, tableRow, viewOf } from '../helpers/range-table.js';
import { AnswerGrouping, groupAnswers, groupSeries, kvItemOf, parseQueryAnswer } from '../../src/stats/range.js';
import type { RawAnswer } from '../../src/stats/range.js';
import { rowValue } from '../../src/stats/row-values.js';
import type { RangeItems } from '../../src/stats/range-groups.js';
import { pointsOf, rawSeriesValue, seriesValue } from '../../src/stats/range-values.js';
import type { Point } from '../../src/stats/range-values.js';

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

/** A table whose rows read the generated answers' metrics (m0, m1, m2) every way a row can. */
const TABLE: readonly NativeMapRow[] = [
  tableRow('m0_get_rate', 'rate', [ser('m0', { op: 'get' })]),
  tableRow('m0_level', 'level', [ser('m0')]),
  tableRow('m1_mean', 'mean', [ser('m1')]),
  tableRow('m2_share', 'increase_ratio', [ser('m2', { op: 'get' })], [ser('m0')]),
  tableRow('m1_m2_ratio', 'level_ratio', [ser('m1', { op: ['get', 'set'] }), ser('m2')], [ser('m0', { op: 'set' })]),
  tableRow('m2_free', 'complement_ratio', [ser('m2', { op: 'set' })], [ser('m1')]),
];

const view = (g: RangeItems) => viewOf(TABLE, g);

describe('groupAnswers', () => {
  it('gives the groups, memo and error texts of parseQueryAnswer then groupSeries, over two polls', () => {
    fc.assert(
      fc.property(poll, poll, (first, second) => {
        const memoA: CounterMemo = new CounterMemo();
        const memoB: CounterMemo = new CounterMemo();
        for (const round of [first, second]) {
          const raw: RawAnswer[] = round.map(([a, summed, failed], i) => (failed && i === 0 ? { metric: `m${i}`, failed: true } : { metric: `m${i}`, raw: a, summed }));
          const parsed = raw.map((r) => ('failed' in r ? { metric: r.metric, series: [], erroredNodes: new Set(['*']), errors: [] } : parseQueryAnswer(r.metric, r.raw, r.summed)));
          const got = groupAnswers(TABLE, raw, kvItemOf, memoA);
          expect(view(got.groups)).toEqual(view(groupSeries(TABLE, parsed, kvItemOf, memoB)));
          expect(memoPoints(memoA)).toEqual(memoPoints(memoB));
          // The item errors of a metric are its entries that name no node; a node's entries are counted per node (range-nodes.ts).
          const own = (r: (typeof parsed)[number]) => r.errors.filter((e) => ![...r.erroredNodes].some((n) => n !== '*' && e.startsWith(`${n}: `)));
          expect(got.errors).toEqual(parsed.filter((r) => own(r).length > 0).map((r) => ({ metric: r.metric, errors: own(r) })));
        }
      }),
      { numRuns: 500 },
    );
  });
});

// The rows' values by the plainest way: keep every series' value whole, then add up what each row reads. The series'
// values come from seriesValue (its rules are checked by hand in range.test.ts); nothing of the groups is used.
interface Kept {
  readonly metric: string;
  readonly item: string | undefined;
  readonly node: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: NonNullable<ReturnType<typeof seriesValue>>;
}

function keepAll(raw: readonly RawAnswer[], memo: Map<string, Point>): { kept: Kept[]; errored: Map<string, Set<string>> } {
  const kept: Kept[] = [];
  const errored = new Map<string, Set<string>>();
  const seen = new Map<string, Point>();
  for (const r of raw) {
    if ('failed' in r) {
      errored.set(r.metric, new Set(['*']));
      continue;
    }
    const q = parseQueryAnswer(r.metric, r.raw, r.summed);
    if (q.erroredNodes.size > 0) errored.set(r.metric, q.erroredNodes);
    for (const x of q.series) {
      const key = JSON.stringify([x.node, x.metric, Object.entries(x.labels).filter(([k]) => k !== 'name').sort()]);
      const value = seriesValue(x.points, seen.get(key) ?? memo.get(key));
      if (value === undefined) continue;
      seen.set(key, value.newest);
      kept.push({ metric: x.metric, item: kvItemOf(x.labels), node: x.node, labels: x.labels, value });
    }
  }
  memo.clear();
  for (const [k, v] of seen) memo.set(k, v);
  return { kept, errored };
}

function keptRowValue(row: NativeMapRow, kept: readonly Kept[], errored: Map<string, Set<string>>, item: string, node: string | undefined): number | undefined {
  for (const x of [...row.series, ...(row.denominator ?? [])]) {
    const e = errored.get(x.metric);
    // A node's error costs that node's values; the bucket-wide value is the sum over the nodes that answered.
    if (e && (e.has('*') || (node !== undefined && e.has(node)))) return undefined;
  }
  // A ratio over the nodes: a node an error entry names for one of the row's metrics is out of both parts.
  const out = new Set(row.denominator === undefined || node !== undefined ? [] : [...row.series, ...row.denominator].flatMap((x) => [...(errored.get(x.metric) ?? [])]));
  const side = (series: NativeMapRow['series']) => {
    const hit = kept.filter((k) => k.item === item && (node === undefined ? !out.has(k.node) : k.node === node) && series.some((x) => x.metric === k.metric && Object.entries(x.matchers).every(([l, want]) => k.labels[l] !== undefined && (typeof want === 'string' ? k.labels[l] === want : want.includes(k.labels[l] as string)))));
    // A series read by two entries of the side counts twice, as each entry is a term of its own.
    const terms = series.flatMap((x) => hit.filter((k) => k.metric === x.metric && Object.entries(x.matchers).every(([l, want]) => (typeof want === 'string' ? k.labels[l] === want : want.includes(k.labels[l] as string)))));
    return {
      any: hit.length > 0,
      level: terms.reduce((a, k) => a + k.value.newest.v, 0),
      inc: terms.every((k) => k.value.inc !== undefined) ? terms.reduce((a, k) => a + (k.value.inc as number), 0) : undefined,
      rate: terms.every((k) => k.value.inc !== undefined) ? terms.reduce((a, k) => a + (k.value.inc as number) / (k.value.secs as number), 0) : undefined,
      mean: terms.every((k) => k.value.mean !== undefined) ? terms.reduce((a, k) => a + (k.value.mean as number), 0) : undefined,
    };
  };
  const num = side(row.series);
  const den = side(row.denominator ?? []);
  if (!num.any) return undefined;
  switch (row.derive) {
    case 'level':
      return num.level;
    case 'rate':
      return num.rate;
    case 'mean':
      return num.mean;
    case 'increase_ratio':
      if (num.inc === undefined || !den.any || den.inc === undefined) return undefined;
      return den.inc > 0 ? num.inc / den.inc : 0;
    case 'level_ratio':
      return den.any ? (den.level > 0 ? num.level / den.level : 0) : undefined;
    case 'complement_ratio':
      return den.any ? (den.level > 0 ? 1 - num.level / den.level : 1) : undefined;
  }
}

describe('the groups against every series kept whole', () => {
  it('each row, item and node (and over the nodes) has the value of the sums over the series it reads, over two polls', () => {
    fc.assert(
      fc.property(poll, poll, (first, second) => {
        const memo: CounterMemo = new CounterMemo();
        const keptMemo = new Map<string, Point>();
        for (const round of [first, second]) {
          const raw: RawAnswer[] = round.map(([a, summed, failed], i) => (failed && i === 0 ? { metric: `m${i}`, failed: true } : { metric: `m${i}`, raw: a, summed }));
          const { groups } = groupAnswers(TABLE, raw, kvItemOf, memo);
          const { kept, errored } = keepAll(raw, keptMemo);
          expect(memo.size).toBe(keptMemo.size);
          for (const item of new Set(kept.flatMap((k) => (k.item === undefined ? [] : [k.item])))) {
            for (const node of [undefined, ...new Set(kept.filter((k) => k.item === item).map((k) => k.node))]) {
              for (const r of TABLE) {
                const want = keptRowValue(r, kept, errored, item, node);
                const got = rowValue(r, groups, item, node);
                if (want === undefined) expect(got, `${r.legacy} ${item} ${node}`).toBeUndefined();
                else expect(got, `${r.legacy} ${item} ${node}`).toBeCloseTo(want, 9);
              }
            }
          }
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
        const memoA: CounterMemo = new CounterMemo();
        const memoB: CounterMemo = new CounterMemo();
        for (const [answers, summedFirst, ws] of polls) {
          const summed = new Set(summedFirst ? ['m0'] : []);
          expectReadAsParsed(TABLE, bodyText(answers, ws), answers, names, summed, memoA, memoB);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('a body that is not JSON throws SyntaxError with its position in the whole body, and changes nothing', () => {
    const memo: CounterMemo = new CounterMemo([['k', { t: 1, v: 2 }]]);
    const g = new AnswerGrouping(TABLE, kvItemOf, memo);
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
    const g = new AnswerGrouping(TABLE, kvItemOf, new CounterMemo());
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
