/**
 * AnswerGrouping.readTextSliced, the read that gives the event loop turns between two query answers, against
 * readText (the synchronous read the other range tests hold to the parsed answers): the same staged request,
 * groups, memo, error texts, sizes and counts of what was cut or refused, the same errors; that it does give turns
 * (and gives none within its slice); and that an aborted request's read stops.
 */
import { CounterMemo } from '../../src/stats/counter-memo.js';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { NativeMapRow } from '../../src/stats/native-map.js';
import { memoPoints, ser, tableRow, viewOf } from '../helpers/range-table.js';
import { AnswerGrouping, kvItemOf, StagedRequest } from '../../src/stats/range.js';
import { REFUSED, takeRefused } from '../../src/stats/range-values.js';

import { loadFixture } from '../helpers/collect.js';

/** A rate, a ratio of two metrics and a level: what a value depends on (memo, summed parts, newest point). */
const TABLE: readonly NativeMapRow[] = [tableRow('m0_rate', 'rate', [ser('m0', { op: 'get' })]), tableRow('m1_share', 'increase_ratio', [ser('m1', { op: 'set' })], [ser('m0')]), tableRow('m2_level', 'level', [ser('m2')])];
const NAMES = ['m0', 'm1', 'm2'];
const T0 = 1_700_000_000;
/** The poll's clock: points after T0 + 50 s are in the future. */
const CLOCK = { nowMs: (T0 + 50) * 1000, maxT: (T0 + 50) * 1000 };
const MEMBERS = new Set(['n1:8091', 'n2:8091']);

type Outcome = { staged: boolean; value?: unknown; error?: string };

/** Everything a read leaves behind: what it returned or threw, then (committed) the groups, memo, texts, counts. */
interface Poll {
  outcome: Outcome;
  view: unknown;
  memo: Array<{ t: number; v: number }>;
  texts: unknown;
  caps: unknown;
  points: unknown;
  sizes: unknown;
}

/** One poll of `body` into `memo`, read by `read`. */
async function poll(memo: CounterMemo, body: string, names: readonly string[], summed: ReadonlySet<string>, read: (g: AnswerGrouping) => unknown): Promise<Poll> {
  const sizes = new Map<string, number>();
  const g = new AnswerGrouping(TABLE, kvItemOf, memo, sizes, CLOCK);
  g.members = MEMBERS;
  let outcome: Outcome;
  try {
    const r = await read(g);
    if (r instanceof StagedRequest) {
      g.commit(r);
      outcome = { staged: true };
    } else outcome = { staged: false, value: r };
  } catch (err) {
    outcome = { staged: false, error: `${(err as Error).name}: ${(err as Error).message}` };
  }
  const view = viewOf(TABLE, g.done());
  return { outcome, view, memo: memoPoints(memo), texts: g.errorTexts, caps: [...g.caps.counts].sort(), points: [...g.caps.points].sort(), sizes: [...sizes].sort() };
}

/** The same polls read by readText and by readTextSliced with `sliceMs`, each into a memo of its own. */
async function expectSameReads(bodies: readonly string[], sliceMs: number, names: readonly string[] = NAMES, summed: ReadonlySet<string> = new Set()): Promise<void> {
  const memoA: CounterMemo = new CounterMemo();
  const memoB: CounterMemo = new CounterMemo();
  for (const body of bodies) {
    const a = await poll(memoA, body, names, summed, (g) => g.readText(body, names, summed));
    const b = await poll(memoB, body, names, summed, (g) => g.readTextSliced(body, names, summed, { sliceMs }));
    expect(b).toEqual(a);
  }
}

/** A query's answer: one series per entry (bucket, node, values). */
function answer(series: ReadonlyArray<{ bucket: string; node: string; op?: string; values: unknown[] }>, errors: unknown[] = []): Record<string, unknown> {
  return { data: series.map((s) => ({ metric: { nodes: [s.node], name: 'x', bucket: s.bucket, ...(s.op === undefined ? {} : { op: s.op }) }, values: s.values })), errors, startTimestamp: T0 - 60, endTimestamp: T0 + 100 };
}

const A0 = answer([
  { bucket: 'b1', node: 'n1:8091', op: 'get', values: [[T0, '10'], [T0 + 10, '15']] },
  { bucket: 'b1', node: 'n2:8091', op: 'get', values: [[T0, '1'], [T0 + 10, '']] },
  { bucket: 'b2', node: 'n3:8091', op: 'get', values: [[T0, '4']] },
]);
const A1 = answer(
  [
    { bucket: 'b1', node: 'n1:8091', op: 'set', values: [[T0, '-3'], [T0 + 10, '7'], [T0 + 90, '9']] },
    { bucket: 'b1', node: 'n1:8091', op: 'set', values: [[T0 + 20, '8']] },
  ],
  [{ node: 'n2:8091', error: 'Request timed out' }],
);
const A2 = answer([{ bucket: 'b"2', node: 'n1:8091', values: [[T0, 'NaN'], [T0 + 10, '3']] }]);
const later = (a: Record<string, unknown>, dt: number): Record<string, unknown> =>
  JSON.parse(JSON.stringify(a), (k, v: unknown) => (k === '0' && typeof v === 'number' && v >= T0 ? v + dt : v)) as Record<string, unknown>;

describe('readTextSliced against readText', () => {
  it('the documented answers (docs-server rest-statistics-multiple): the same staged request, groups, memo and counts', async () => {
    const docs = loadFixture<unknown[]>('pools-default-stats-range/docs-server-7.0plus-multiple-post.json');
    await expectSameReads([JSON.stringify(docs, null, 2), JSON.stringify(docs)], 0);
  });

  it('answers with refused points, a node not asked, a future point, a repeated series, an errors entry and an escape', async () => {
    const body = JSON.stringify([A0, A1, A2]);
    const next = JSON.stringify([later(A0, 20), later(A1, 20), later(A2, 20)]);
    await expectSameReads([body, next], 0);
    await expectSameReads([body, next], 0, NAMES, new Set(['m0']));
    await expectSameReads([body, next], Number.POSITIVE_INFINITY);
  });

  it('more answers than names, fewer, none, an answer nested too deep, and bodies that are not an array', async () => {
    const deep = `${'['.repeat(70)}${']'.repeat(70)}`;
    await expectSameReads([JSON.stringify([A0, A1, A2, A0]), JSON.stringify([A0]), '[]', ` [ ${JSON.stringify(A0)} , ${deep} ] `, '{"data":[]}', 'null'], 0);
  });

  it('bodies that are not JSON: the same SyntaxError, the groups and memo untouched', async () => {
    const good = JSON.stringify(A0);
    const broken = [`[${good},{"data":tru}]`, `[${good},${good},{"x":}]`, `[${good}`, `[${good},]`, `[${good}] x`, `[${good},${'['.repeat(70)}`, `${'['.repeat(100)}x`];
    for (const body of broken) {
      const memoA: CounterMemo = new CounterMemo([['k', { t: 1, v: 2 }]]);
      const memoB: CounterMemo = new CounterMemo([['k', { t: 1, v: 2 }]]);
      const a = await poll(memoA, body, NAMES, new Set(), (g) => g.readText(body, NAMES, new Set()));
      const b = await poll(memoB, body, NAMES, new Set(), (g) => g.readTextSliced(body, NAMES, new Set(), { sliceMs: 0 }));
      expect(b).toEqual(a);
      expect(b.outcome.error).toMatch(/^SyntaxError: /);
      expect(b.view).toEqual({ items: {}, nodes: [], errored: [] });
      // Before done() (which forgets the series a poll did not see): nothing read was added.
      const memo: CounterMemo = new CounterMemo([['k', { t: 1, v: 2 }]]);
      const g = new AnswerGrouping(TABLE, kvItemOf, memo);
      await expect(g.readTextSliced(body, NAMES, new Set(), { sliceMs: 0 })).rejects.toThrow(SyntaxError);
      expect([...memo]).toEqual([['k', { t: 1, v: 2 }]]);
    }
  });

  it('generated answers over two polls, a turn given after every answer', async () => {
    const node = fc.constantFrom('n1:8091', 'n2:8091', 'n3:8091');
    const value = fc.oneof({ weight: 8, arbitrary: fc.integer({ min: 0, max: 1000 }).map(String) }, { weight: 1, arbitrary: fc.constantFrom<unknown>('', 'x', '-2', 5, null) });
    const point = fc.tuple(fc.integer({ min: T0, max: T0 + 80 }), value);
    const series = fc.record({ bucket: fc.constantFrom('b1', 'b2', 'b\\3'), node, op: fc.constantFrom('get', 'set'), values: fc.array(point, { maxLength: 4 }) });
    const one = fc.oneof({ weight: 6, arbitrary: fc.array(series, { maxLength: 5 }).map((s) => answer(s) as unknown) }, { weight: 1, arbitrary: fc.constantFrom<unknown>(null, {}, { data: 'x' }, []) });
    await fc.assert(
      fc.asyncProperty(fc.array(fc.array(one, { maxLength: 4 }), { minLength: 2, maxLength: 2 }), fc.boolean(), async (polls, sum) => {
        await expectSameReads(
          polls.map((p) => JSON.stringify(p)),
          0,
          NAMES,
          new Set(sum ? ['m1'] : []),
        );
      }),
      { numRuns: 200 },
    );
  });
});

/** Event-loop turns counted while `work` runs: an immediate that queues itself runs once per turn. */
async function turnsDuring<T>(work: () => Promise<T>): Promise<{ turns: number; result: T }> {
  let turns = 0;
  let ticking = true;
  const tick = (): void => {
    if (!ticking) return;
    turns++;
    setImmediate(tick);
  };
  setImmediate(tick);
  try {
    const result = await work();
    return { turns, result };
  } finally {
    ticking = false;
  }
}

describe('readTextSliced gives the event loop turns', () => {
  const body = JSON.stringify([A0, A1, A2]);

  it('with no slice, a turn between every two answers: an immediate queued before the read runs before it ends', async () => {
    // Answers the reader reads, and answers it gives up on (each then parsed from its own slice of the text).
    for (const text of [body, JSON.stringify([A2, A2, A2])]) {
      const g = new AnswerGrouping(TABLE, kvItemOf, new CounterMemo());
      const { turns, result } = await turnsDuring(() => g.readTextSliced(text, NAMES, new Set(), { sliceMs: 0 }));
      // Three answers: a turn after the first and after the second.
      expect(turns).toBeGreaterThanOrEqual(2);
      expect(result).toBeInstanceOf(StagedRequest);
    }
  });

  it('within its slice, none: the read ends before an immediate queued before it', async () => {
    const g = new AnswerGrouping(TABLE, kvItemOf, new CounterMemo());
    const { turns, result } = await turnsDuring(() => g.readTextSliced(body, NAMES, new Set(), { sliceMs: 60_000 }));
    expect(turns).toBe(0);
    expect(result).toBeInstanceOf(StagedRequest);
  });

  it('stops at its next turn once the signal has fired, with its reason, the groups and memo untouched', async () => {
    const memo: CounterMemo = new CounterMemo([['k', { t: 1, v: 2 }]]);
    const g = new AnswerGrouping(TABLE, kvItemOf, memo);
    const ac = new AbortController();
    const why = new Error('poll abandoned');
    // Fires in the turn the read gives after its first answer.
    setImmediate(() => ac.abort(why));
    await expect(g.readTextSliced(body, NAMES, new Set(), { sliceMs: 0, signal: ac.signal })).rejects.toBe(why);
    expect([...memo]).toEqual([['k', { t: 1, v: 2 }]]);
    expect(g.errorTexts).toEqual([]);
    expect(g.done().items.size).toBe(0);
  });

  it('a read that gives turns keeps its refused points from what runs meanwhile', async () => {
    // Two answers, a point refused (blank) in each; between them, another grouping's read refuses one of its own.
    const blank = answer([{ bucket: 'b1', node: 'n1:8091', values: [[T0, '']] }]);
    const g = new AnswerGrouping(TABLE, kvItemOf, new CounterMemo());
    const other = new AnswerGrouping(TABLE, kvItemOf, new CounterMemo());
    setImmediate(() => other.readText(JSON.stringify([blank]), ['m0'], new Set()));
    const staged = await g.readTextSliced(JSON.stringify([blank, blank]), ['m0', 'm2'], new Set(), { sliceMs: 0 });
    expect(staged).toBeInstanceOf(StagedRequest);
    expect([...g.caps.points]).toEqual([['blank', 2]]);
    expect([...other.caps.points]).toEqual([['blank', 1]]);
    // Nor does it take for its own what other code counted meanwhile and left.
    const h = new AnswerGrouping(TABLE, kvItemOf, new CounterMemo());
    setImmediate(() => {
      REFUSED.not_a_number += 3;
    });
    await h.readTextSliced(JSON.stringify([blank, blank]), ['m0', 'm2'], new Set(), { sliceMs: 0 });
    expect([...h.caps.points]).toEqual([['blank', 2]]);
    takeRefused();
  });
});
