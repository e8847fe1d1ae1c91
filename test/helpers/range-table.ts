/**
 * Shared by the range source's tests (test/stats/range-fused.test.ts, range-reader.test.ts): mapping rows written by
 * hand over made-up metrics, what a poll's groups say whatever their layout, and the check that a request's body
 * read from its text gives what the same answers give parsed.
 */
import { CounterMemo } from '../../src/stats/counter-memo.js';
import { expect } from 'vitest';
import type { Matchers, NativeMapRow } from '../../src/stats/native-map.js';
import { AnswerGrouping, kvItemOf, StagedRequest } from '../../src/stats/range.js';
import type { RawAnswer } from '../../src/stats/range.js';
import { newestOf, rowValue } from '../../src/stats/row-values.js';
import type { RangeItems } from '../../src/stats/range-groups.js';


/** One native series of a row: a metric and its matchers. */
export const ser = (metric: string, matchers: Matchers = {}) => ({ metric, matchers, type: 'counter' as const });

/** A bucket row (kv, per bucket, no scaling). */
export const tableRow = (legacy: string, derive: NativeMapRow['derive'], series: NativeMapRow['series'], denominator?: NativeMapRow['series']): NativeMapRow => ({
  section: 'kv',
  legacy,
  family: `couchbase_bucket_${legacy}`,
  derive,
  series,
  ...(denominator ? { denominator } : {}),
  scale: 1,
  legacyFactor: 1,
  perBucket: true,
  nsServer: '',
});

/**
 * What the groups say, whatever their layout: per item and node (and over the nodes) each row's value and the newest
 * point's time, the nodes seen and the errored metrics.
 */
export function viewOf(table: readonly NativeMapRow[], g: RangeItems) {
  const items: Record<string, Record<string, { newest: number | undefined; rows: Array<number | undefined> }>> = {};
  for (const [item, cells] of g.items) {
    const byNode: (typeof items)[string] = {};
    for (const node of [...cells.keys(), undefined]) byNode[node ?? '(all)'] = { newest: newestOf(g, item, node), rows: table.map((r) => rowValue(r, g, item, node)) };
    items[item] = byNode;
  }
  return { items, nodes: [...g.nodes].sort(), errored: [...g.errored].map(([m, n]) => [m, [...n].sort()]).sort() };
}

/**
 * A memo's points in order, without the number of the grouping that last saw each (which differs between two), nor
 * the keys (the parsed answers' path keys by the strings, the text's reader by the interner's numbers).
 */
export function memoPoints(memo: CounterMemo): Array<{ t: number; v: number }> {
  return [...memo.values()].map((r) => ({ t: r.t, v: r.v })).sort((a, b) => a.t - b.t || a.v - b.v);
}

/**
 * One poll both ways: `body` read from its text into memoA, and `parsed` (its answers, in the names' order) added
 * as trees into memoB. Expects the same groups, memo points and error texts.
 */
export function expectReadAsParsed(table: readonly NativeMapRow[], body: string, parsed: readonly unknown[], names: readonly string[], summed: ReadonlySet<string>, memoA: CounterMemo, memoB: CounterMemo): void {
  const a = new AnswerGrouping(table, kvItemOf, memoA);
  const staged = a.readText(body, names, summed);
  expect(staged).toBeInstanceOf(StagedRequest);
  a.commit(staged as StagedRequest);
  const b = new AnswerGrouping(table, kvItemOf, memoB);
  b.add(names.map((metric, i): RawAnswer => ({ metric, raw: parsed[i], summed: summed.has(metric) })));
  expect(viewOf(table, a.done())).toEqual(viewOf(table, b.done()));
  expect(memoPoints(memoA)).toEqual(memoPoints(memoB));
  expect(a.errorTexts).toEqual(b.errorTexts);
}
