/**
 * The counter memo's columns, by hand: records found by key, updated in place, forgotten by grouping, their slots
 * given out again, and the columns grown past their first size with every point intact.
 */
import { describe, expect, it } from 'vitest';
import { CounterMemo, NO_RECORD } from '../../src/stats/counter-memo.js';

describe('CounterMemo', () => {
  it('finds a record by key, updates it in place and gives its point', () => {
    const m = new CounterMemo();
    expect(m.slotOf('a')).toBe(NO_RECORD);
    const a = m.add('a', 1_000, 5, 1);
    const b = m.add('b', 2_000, 7.5, 1);
    expect([m.slotOf('a'), m.slotOf('b'), m.size]).toEqual([a, b, 2]);
    m.set(a, 3_000, 9, 2);
    expect(m.slotOf('a')).toBe(a);
    const into = { t: 0, v: 0 };
    expect(m.pointInto(a, into)).toEqual({ t: 3_000, v: 9 });
    expect(m.pointInto(NO_RECORD, into)).toBeUndefined();
    expect([...m]).toEqual([
      ['a', { t: 3_000, v: 9 }],
      ['b', { t: 2_000, v: 7.5 }],
    ]);
    // A new record is never staged and has no place in an answer yet.
    expect([m.stagedOf(b), m.seenAtOf(b)]).toEqual([0, -1]);
    m.setStaged(b, 42);
    m.setSeenAt(b, 3);
    expect([m.stagedOf(b), m.seenAtOf(b)]).toEqual([42, 3]);
  });

  it('forgets the records a grouping did not see, and gives their slots to new series with fresh marks', () => {
    const m = new CounterMemo();
    const a = m.add('a', 1, 1, 1);
    const b = m.add('b', 2, 2, 1);
    m.setStaged(b, 9);
    m.setSeenAt(b, 4);
    m.set(a, 10, 10, 2);
    m.forgetUnseen(2);
    expect([...m]).toEqual([['a', { t: 10, v: 10 }]]);
    expect(m.slotOf('b')).toBe(NO_RECORD);
    // b's slot is reused, with none of b's marks.
    const c = m.add('c', 3, 3, 2);
    expect(c).toBe(b);
    expect([m.stagedOf(c), m.seenAtOf(c)]).toEqual([0, -1]);
    m.forgetUnseen(3);
    expect(m.size).toBe(0);
    m.clear();
    expect(m.slotOf('a')).toBe(NO_RECORD);
  });

  it('keeps every point when its columns grow past their first size', () => {
    const m = new CounterMemo();
    for (let i = 0; i < 1000; i++) m.add(`k${i}`, 1_700_000_000_000 + i, i / 4, 1);
    expect(m.size).toBe(1000);
    const into = { t: 0, v: 0 };
    for (const i of [0, 63, 64, 511, 999]) expect(m.pointInto(m.slotOf(`k${i}`), into)).toEqual({ t: 1_700_000_000_000 + i, v: i / 4 });
  });

  it('adding a known series updates its record: no second slot, none lost', () => {
    const m = new CounterMemo();
    const a = m.add('a', 1, 1, 1);
    expect(m.add('a', 2, 5, 2)).toBe(a);
    expect([...m]).toEqual([['a', { t: 2, v: 5 }]]);
    m.forgetUnseen(2);
    expect(m.size).toBe(1);
    m.forgetUnseen(3);
    // Its one slot is free again.
    expect(m.add('b', 3, 3, 3)).toBe(a);
  });

  it('starts from given points (tests), seen by no grouping yet', () => {
    const m = new CounterMemo([['k', { t: 1, v: 2 }]]);
    expect([...m.values()]).toEqual([{ t: 1, v: 2 }]);
    m.forgetUnseen(1);
    expect(m.size).toBe(0);
  });
});
