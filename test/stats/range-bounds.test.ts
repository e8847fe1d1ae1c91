/**
 * The bounds on what a range answer may make the exporter keep: interned strings bounded by
 * bytes and released when unused, label values and error texts cut before they are kept, series and `errors`
 * entries capped per query (the excess counted), nesting refused past 64 levels, item errors one per cause. Every
 * expected figure is written by hand from the limits documented in docs/security.md ("Range answers").
 */
import { CounterMemo } from '../../src/stats/counter-memo.js';
import { describe, expect, it } from 'vitest';
import type { NativeMapRow } from '../../src/stats/native-map.js';
import { ser, tableRow } from '../helpers/range-table.js';
import { AnswerGrouping, kvItemOf, reportRangeErrors, StagedRequest } from '../../src/stats/range.js';
import { rowValue } from '../../src/stats/row-values.js';
import { Interner, QueryReader, RangeCaps } from '../../src/stats/range-reader.js';


const TABLE: readonly NativeMapRow[] = [tableRow('m0_level', 'level', [ser('m0')]), tableRow('m1_level', 'level', [ser('m1')])];
const T0 = 1_700_000_000;
const MB = 1_000_000;

/** One query's answer: series of bucket `b`… on node n1 with one point each, errors as given. */
function answer(series: ReadonlyArray<Record<string, string>>, errors: unknown[] = [], value = '5'): string {
  const data = series.map((labels) => ({ metric: { nodes: ['n1:8091'], name: 'x', ...labels }, values: [[T0, value]] }));
  return JSON.stringify({ data, errors, startTimestamp: T0 - 60, endTimestamp: T0 });
}

function poll(memo: CounterMemo, body: string, names = ['m0', 'm1']): AnswerGrouping {
  const g = new AnswerGrouping(TABLE, kvItemOf, memo);
  const staged = g.readText(body, names, new Set());
  expect(staged).toBeInstanceOf(StagedRequest);
  g.commit(staged as StagedRequest);
  return g;
}

describe('interned strings', () => {
  it('are bounded by bytes: 2,000 distinct 1,000-character values keep at most 1 MiB', () => {
    const i = new Interner();
    for (let n = 0; n < 2000; n++) i.idOf(`${n}`.padEnd(1000, 'x'));
    // 2,064 bytes each as counted (2 a code unit, 64 of bookkeeping): 508 fit in 1 MiB.
    expect(i.size).toBe(508);
    expect(i.bytes).toBe(508 * 2064);
  });

  it('are released when a poll no longer uses them, and their numbers given out again', () => {
    const memo: CounterMemo = new CounterMemo();
    const interner = () => (poll(memo, '[]', []) as unknown as { reader: QueryReader }).reader.interner;
    const i = interner();
    for (let p = 0; p < 50; p++) {
      // A fresh bucket name every poll: the old one is gone from the next answer, and from the table after it.
      const g = poll(memo, `[${answer([{ bucket: `fresh-${p}` }])},${answer([])}]`);
      g.done();
    }
    // What the last poll used: m0, m1, n1:8091, nodes' labels (name, x, bucket, fresh-49): a handful, not 50 buckets.
    expect(i.size).toBeLessThan(12);
    expect(memo.size).toBe(1);
  });
});

describe('label values', () => {
  it('a 1 MB value is kept cut to 1,024 bytes (prefix, ~ and a hash), counted once; another stays another', () => {
    const r = new QueryReader(new Interner());
    const big = 'a'.repeat(MB);
    const text = answer([{ bucket: `${big}1` }, { bucket: `${big}2` }]);
    expect(r.read(text, 0, false)).toBe(text.length);
    const a = r.entries[0]?.labels['bucket'] as string;
    const b = r.entries[1]?.labels['bucket'] as string;
    expect(Buffer.byteLength(a)).toBe(1024);
    // 1,024 - 17 bytes of prefix, `~`, 16 hex digits.
    expect(a).toMatch(/^a{1007}~[0-9a-f]{16}$/);
    expect(b).not.toBe(a);
    expect(r.caps.counts.get('range_label_length')).toBe(2);
  });

  it('the parse cuts them alike (an answer the reader gives up on)', () => {
    const memoA: CounterMemo = new CounterMemo();
    const memoB: CounterMemo = new CounterMemo();
    const big = 'é'.repeat(MB);
    // The escape in `other` makes the reader give up on the second body: JSON.parse reads it.
    const a = poll(memoA, `[${answer([{ bucket: big }])}]`, ['m0']);
    const b = poll(memoB, `[${answer([{ bucket: big, other: 'q"x' }])}]`, ['m0']);
    const ga = a.done();
    const gb = b.done();
    const itemA = [...ga.items.keys()][0] as string;
    expect(Buffer.byteLength(itemA)).toBeLessThanOrEqual(1024);
    expect([...gb.items.keys()]).toEqual([itemA]);
    expect(rowValue(TABLE[0] as NativeMapRow, ga, itemA, undefined)).toBe(5);
    expect(b.caps.counts.get('range_label_length')).toBe(1);
  });
});

describe('errors entries', () => {
  it('ten 4 MB errors: each text kept is at most 200 characters, and the metric fails on their nodes', () => {
    const errors = Array.from({ length: 10 }, (_, k) => ({ node: `n${k}:8091`, error: `${k}`.repeat(4 * MB) }));
    const g = poll(new CounterMemo(), `[${answer([{ bucket: 'b' }], errors)},${answer([{ bucket: 'b' }])}]`);
    // Entries that name a node are that node's gap (one item error per node and poll, not per text): no text of
    // the metric's own, and each node's reason cut to 200 characters.
    expect(g.errorTexts).toHaveLength(0);
    expect([...g.nodeErrors.keys()].sort()).toEqual(['n0:8091', 'n1:8091', 'n2:8091', 'n3:8091', 'n4:8091', 'n5:8091', 'n6:8091', 'n7:8091', 'n8:8091', 'n9:8091']);
    for (const why of g.nodeErrors.values()) expect(why.length).toBeLessThanOrEqual(200);
    expect(g.nodeErrors.get('n3:8091')?.startsWith('3'.repeat(150))).toBe(true);
    const groups = g.done();
    expect([...(groups.errored.get('m0') ?? [])].sort()).toEqual(['n0:8091', 'n1:8091', 'n2:8091', 'n3:8091', 'n4:8091', 'n5:8091', 'n6:8091', 'n7:8091', 'n8:8091', 'n9:8091']);
    // The neighbour metric keeps its value; m0 on n1 is gone (n1 errored); bucket-wide, m0 is the sum over the
    // series that came (a node's error never blanks the bucket-wide value).
    expect(rowValue(TABLE[1] as NativeMapRow, groups, 'b', undefined)).toBe(5);
    expect(rowValue(TABLE[0] as NativeMapRow, groups, 'b', 'n1:8091')).toBeUndefined();
    expect(rowValue(TABLE[0] as NativeMapRow, groups, 'b', 'n2:8091')).toBeUndefined();
  });

  it('an escaped error text is read, cut after its first 200 characters', () => {
    const r = new QueryReader(new Interner());
    const text = `{"data":[],"errors":[{"error":"a \\"quoted\\" \\u00e9 ${'z'.repeat(300)}","node":"n1:8091"}]}`;
    expect(r.read(text, 0, false)).toBe(text.length);
    expect(r.errors.texts).toEqual([`n1:8091: a "quoted" é ${'z'.repeat(200 - 22)}`]);
  });

  it('20 distinct texts kept, the rest counted; past 1,000 entries the metric fails on every node, counted', () => {
    const caps = new RangeCaps();
    const r = new QueryReader(new Interner(), caps);
    const errors = Array.from({ length: 50_000 }, (_, k) => ({ node: `n${k}:8091`, error: 'down' }));
    const text = answer([{ bucket: 'b' }], errors);
    expect(r.read(text, 0, false)).toBe(text.length);
    expect(r.errors.texts).toHaveLength(20);
    expect(r.errors.nodes.has('*')).toBe(true);
    // Entries 21 to 1,000 read (their texts differ by node: counted), 1,001 to 50,000 past the cap.
    expect(caps.counts.get('range_error_text')).toBe(980);
    expect(caps.counts.get('range_errors')).toBe(49_000);
    expect(r.errors.nodes.size).toBe(1001);
  });

  it('item errors are one per cause per poll, with the number of metrics as the count', () => {
    const calls: Array<{ item: string; count: number | undefined; message: string }> = [];
    const ctx = { itemFailed: (item: string, err: unknown, count?: number) => calls.push({ item, count, message: (err as Error).message }) };
    const errors = [
      ...Array.from({ length: 84 }, (_, k) => ({ metric: `m${k}`, errors: ['n1:8091: Request timed out'] })),
      ...Array.from({ length: 30 }, (_, k) => ({ metric: 'm0', errors: [`n${k}:8091: down`] })),
    ];
    reportRangeErrors(ctx as never, errors);
    // 1 cause for the 84 metrics, 19 more of the 30 distinct ones, then one line for the 11 left.
    expect(calls).toHaveLength(21);
    expect(calls[0]).toEqual({ item: 'range m0, m1, m2 and 81 more', count: 84, message: 'range API error for m0, m1, m2 and 81 more: n1:8091: Request timed out' });
    expect(calls[20]?.count).toBe(11);
    expect(calls.reduce((a, c) => a + (c.count ?? 1), 0)).toBe(114);
  });
});

describe('series and nesting', () => {
  it('200,001 series in one query: the query refused (its metric failed on every node), counted; the next query kept', () => {
    const series = Array.from({ length: 200_001 }, (_, k) => ({ bucket: 'b7', op: `o${k}` }));
    const g = poll(new CounterMemo(), `[${answer(series)},${answer([{ bucket: 'b7' }])}]`);
    const groups = g.done();
    expect(g.caps.counts.get('range_series')).toBe(1);
    expect([...(groups.errored.get('m0') ?? [])]).toEqual(['*']);
    expect(g.errorTexts[0]?.errors).toEqual(['cluster: the answer has 200,001 series, over the limit of 200,000 per query: refused']);
    expect(rowValue(TABLE[1] as NativeMapRow, groups, 'b7', undefined)).toBe(5);
    expect(rowValue(TABLE[0] as NativeMapRow, groups, 'b7', undefined)).toBeUndefined();
  });

  it('200,000 series in one query are all kept: 200 buckets of 1,000 series, 1,000 × 5 each', () => {
    const series = Array.from({ length: 200_000 }, (_, k) => ({ bucket: `b${k % 200}`, op: `o${Math.floor(k / 200)}` }));
    const g = poll(new CounterMemo(), `[${answer(series)}]`, ['m0']);
    const groups = g.done();
    expect(rowValue(TABLE[0] as NativeMapRow, groups, 'b0', undefined)).toBe(5_000);
    expect(rowValue(TABLE[0] as NativeMapRow, groups, 'b199', undefined)).toBe(5_000);
    expect(g.caps.counts.size).toBe(0);
  });

  it('1,024 series of one bucket on one node are kept (1,024 × 5); a 1,025th refuses the metric, counted; the neighbour keeps its own', () => {
    const ops = (n: number) => Array.from({ length: n }, (_, k) => ({ bucket: 'b', op: `o${k}` }));
    const ok = poll(new CounterMemo(), `[${answer(ops(1024))}]`, ['m0']);
    expect(rowValue(TABLE[0] as NativeMapRow, ok.done(), 'b', undefined)).toBe(5_120);
    expect(ok.caps.counts.size).toBe(0);

    const memo: CounterMemo = new CounterMemo();
    const over = poll(memo, `[${answer(ops(3000))},${answer([{ bucket: 'b' }])}]`);
    const groups = over.done();
    // The 1,025th and the 1,975 after it.
    expect(over.caps.counts.get('range_cell_series')).toBe(1_976);
    expect(over.caps.counts.get('range_cells')).toBeUndefined();
    expect([...(groups.errored.get('m0') ?? [])]).toEqual(['*']);
    expect(over.errorTexts[0]?.errors).toEqual(['cluster: the answer names more than 1,024 series of it for one item on one node: m0 refused']);
    expect(rowValue(TABLE[0] as NativeMapRow, groups, 'b', undefined)).toBeUndefined();
    expect(rowValue(TABLE[1] as NativeMapRow, groups, 'b', undefined)).toBe(5);
    // Memo records: the 1,024 series put before the bound was passed, and m1's one; none for the 1,976.
    expect(memo.size).toBe(1_025);
  });

  it('the bound is per node: 1,024 series of one bucket on each of two nodes are kept (2,048 × 5)', () => {
    const data = ['n1:8091', 'n2:8091'].flatMap((node) => Array.from({ length: 1024 }, (_, k) => ({ metric: { nodes: [node], name: 'x', bucket: 'b', op: `o${k}` }, values: [[T0, '5']] })));
    const g = poll(new CounterMemo(), `[${JSON.stringify({ data, errors: [], startTimestamp: T0 - 60, endTimestamp: T0 })}]`, ['m0']);
    expect(rowValue(TABLE[0] as NativeMapRow, g.done(), 'b', undefined)).toBe(10_240);
    expect(g.caps.counts.size).toBe(0);
  });

  it('an answer the reader leaves to the parse is bound alike: 1,025 series of one bucket refuse the metric', () => {
    const series: Array<Record<string, string>> = Array.from({ length: 1025 }, (_, k) => ({ bucket: 'b', op: `o${k}` }));
    // The escape makes the reader give up: JSON.parse reads the answer, put() bounds it.
    (series[0] as Record<string, string>)['other'] = 'q"x';
    const g = poll(new CounterMemo(), `[${answer(series)}]`, ['m0']);
    expect(g.caps.counts.get('range_cell_series')).toBe(1);
    expect([...(g.done().errored.get('m0') ?? [])]).toEqual(['*']);
  });

  it('25,000 buckets in one request are kept; a series of a 25,001st refuses its metric, counted; the other metric keeps its own', () => {
    const series = (n: number) => Array.from({ length: n }, (_, k) => ({ bucket: `b${k}` }));
    const ok = poll(new CounterMemo(), `[${answer(series(25_000))}]`, ['m0']);
    const g1 = ok.done();
    expect(g1.items.size).toBe(25_000);
    expect(rowValue(TABLE[0] as NativeMapRow, g1, 'b24999', undefined)).toBe(5);
    // m0 makes 25,000 cells; m1's one series of b0 has its cell already, its b25000 is one too many: m1 is refused
    // before any of its series is put, both counted.
    const over = poll(new CounterMemo(), `[${answer(series(25_000))},${answer([{ bucket: 'b0' }, { bucket: 'b25000' }])}]`);
    const g2 = over.done();
    expect(over.caps.counts.get('range_cells')).toBe(2);
    expect([...(g2.errored.get('m1') ?? [])]).toEqual(['*']);
    expect(g2.errored.has('m0')).toBe(false);
    expect(rowValue(TABLE[0] as NativeMapRow, g2, 'b0', undefined)).toBe(5);
    expect(rowValue(TABLE[1] as NativeMapRow, g2, 'b0', undefined)).toBeUndefined();
  });

  it('a query naming 100,000 fresh buckets stages nothing of them: no cell, no memo record; its neighbour kept', () => {
    const memo: CounterMemo = new CounterMemo();
    const fresh = Array.from({ length: 100_000 }, (_, k) => ({ bucket: `chaos-${k}` }));
    const g = poll(memo, `[${answer(fresh)},${answer([{ bucket: 'b' }])}]`);
    const groups = g.done();
    expect(g.caps.counts.get('range_cells')).toBe(100_000);
    expect([...(groups.errored.get('m0') ?? [])]).toEqual(['*']);
    // Only m1's one series of b: one cell, one memo record.
    expect(groups.items.size).toBe(1);
    expect(memo.size).toBe(1);
    expect(rowValue(TABLE[1] as NativeMapRow, groups, 'b', undefined)).toBe(5);
  });

  it('an answer nested 3,000,000 deep is refused unparsed, counted; its neighbour kept', () => {
    const deep = `${'['.repeat(3_000_000)}${']'.repeat(3_000_000)}`;
    const first = answer([{ bucket: 'b' }]).replace('"data":[', `"data":[${deep},`);
    const g = poll(new CounterMemo(), `[${first},${answer([{ bucket: 'b' }])}]`);
    const groups = g.done();
    expect(g.caps.counts.get('range_nesting')).toBe(1);
    expect([...(groups.errored.get('m0') ?? [])]).toEqual(['*']);
    expect(rowValue(TABLE[1] as NativeMapRow, groups, 'b', undefined)).toBe(5);
  });

  it('an answer nested 65 levels is refused, 64 is not (an odd entry is skipped as the parse skips it)', () => {
    // The answer and its `data`: 2 levels before the entry.
    const at = (depth: number) => answer([{ bucket: 'b' }]).replace('"data":[', `"data":[${'['.repeat(depth - 2)}${']'.repeat(depth - 2)},`);
    const ok = poll(new CounterMemo(), `[${at(64)}]`, ['m0']);
    expect(ok.caps.counts.get('range_nesting')).toBeUndefined();
    expect(rowValue(TABLE[0] as NativeMapRow, ok.done(), 'b', undefined)).toBe(5);
    const deep = poll(new CounterMemo(), `[${at(65)}]`, ['m0']);
    expect(deep.caps.counts.get('range_nesting')).toBe(1);
  });

  it('a body that is no array and nests past 64 levels is refused unparsed (SyntaxError), not parsed whole', () => {
    const g = new AnswerGrouping(TABLE, kvItemOf, new CounterMemo());
    expect(() => g.readText(`{"a":${'['.repeat(100_000)}${']'.repeat(100_000)}}`, ['m0'], new Set())).toThrow(/deeper than 64/);
  });
});

describe('fetchRange', () => {
  it('counts what the bounds cut as each request is read, so a poll that then fails still shows it', async () => {
    const { bucketStatsCollector } = await import('../../src/collectors/bucket_stats.js');
    const { collect, fakeClient } = await import('../helpers/collect.js');
    let request = 0;
    const big = 'a'.repeat(2000);
    const client = fakeClient({
      '/pools/default/buckets': [{ name: 'b', bucketType: 'membase', nodes: [{ hostname: 'n1:8091', clusterCompatibility: 0x70006 }] }],
      // The first request's first answer carries a 2,000-byte label value (cut: counted once); the second answers
      // 404, which fails the poll (stats_source: range on a cluster without the range API).
      '/pools/default/stats/range': (_p: unknown, o: { json?: unknown }) => {
        if (request++ > 0) return { status: 404, text: 'Not found.' };
        return (o.json as unknown[]).map((_q, i) => ({ data: i === 0 ? [{ metric: { nodes: ['n1:8091'], bucket: 'b', x: big }, values: [[T0, '1']] }] : [], errors: [] }));
      },
    });
    const r = await collect(bucketStatsCollector, client, { cluster: { statsSource: 'range' } });
    expect(r.ok).toBe(false);
    expect(request).toBe(2);
    expect(r.set.capped.get('range_label_length')).toBe(1);
  });
});
