/**
 * The counter memo of the range source: the previous newest point of each native series (node, metric, labels),
 * kept between polls, so that a counter's increase counts from it.
 *
 * A record is a slot number, its fields columns of typed arrays: a poll updates a known series' slot in place, and
 * the memo holds, per series, its key, a Map entry and its place in the columns. A record as an object added three
 * heap objects per series (the object and its two boxed numbers), kept for the life of the process and walked by
 * every full collection of the collection thread's heap.
 */

import { doubled } from './grow.js';

/** A record's number in a memo; NO_RECORD for a series the memo does not know. */
export type MemoSlot = number;
export const NO_RECORD: MemoSlot = -1;

/** A point to value a series against (range-values.ts: seriesValue, valueRun). */
export interface MemoPoint {
  readonly t: number;
  readonly v: number;
}

const START_SLOTS = 64;

export class CounterMemo {
  private readonly slots = new Map<string, MemoSlot>();
  /** The newest point's time (epoch ms) and value. */
  private t: Float64Array = new Float64Array(START_SLOTS);
  private v: Float64Array = new Float64Array(START_SLOTS);
  /** The grouping that last saw the series (range-groups.ts: a grouping's end forgets the records it did not see). */
  private gen: Int32Array = new Int32Array(START_SLOTS);
  /** When it was last staged (range-groups.ts: finding a series a request repeats); 0: never. */
  private stagedAt: Int32Array = new Int32Array(START_SLOTS);
  /**
   * Its entry's place in the last answer read that had it (range-reader.ts: finding a series an answer repeats; the
   * reader checks the place holds this record); -1: none.
   */
  private seen: Int32Array = new Int32Array(START_SLOTS);
  /** Slots freed by forgetUnseen(), given out again before new ones. */
  private readonly free: MemoSlot[] = [];
  /** Slots given out so far (the columns' used length). */
  private top = 0;

  /** `points`: records to start with (tests), each as a series seen by no grouping yet. */
  constructor(points: Iterable<readonly [string, MemoPoint]> = []) {
    for (const [key, p] of points) this.add(key, p.t, p.v, 0);
  }

  /** Series known. */
  get size(): number {
    return this.slots.size;
  }

  /** The record of a series, or NO_RECORD. */
  slotOf(key: string): MemoSlot {
    return this.slots.get(key) ?? NO_RECORD;
  }

  /** A new record, or a known series' record updated (as set). */
  add(key: string, t: number, v: number, gen: number): MemoSlot {
    const known = this.slots.get(key);
    if (known !== undefined) {
      this.set(known, t, v, gen);
      return known;
    }
    let s = this.free.pop();
    if (s === undefined) {
      s = this.top++;
      if (s === this.t.length) this.grow();
    }
    this.t[s] = t;
    this.v[s] = v;
    this.gen[s] = gen;
    this.stagedAt[s] = 0;
    this.seen[s] = -1;
    this.slots.set(key, s);
    return s;
  }

  /** A record's newest point, updated in place by a later poll. */
  set(s: MemoSlot, t: number, v: number, gen: number): void {
    this.t[s] = t;
    this.v[s] = v;
    this.gen[s] = gen;
  }

  timeOf(s: MemoSlot): number {
    return this.t[s] as number;
  }

  valueOf(s: MemoSlot): number {
    return this.v[s] as number;
  }

  /**
   * A record's point in `into` (a caller's reused object, read before its next call), or undefined for NO_RECORD:
   * valuing a series allocates nothing for its previous point.
   */
  pointInto(s: MemoSlot, into: { t: number; v: number }): { t: number; v: number } | undefined {
    if (s === NO_RECORD) return undefined;
    into.t = this.t[s] as number;
    into.v = this.v[s] as number;
    return into;
  }

  stagedOf(s: MemoSlot): number {
    return this.stagedAt[s] as number;
  }

  setStaged(s: MemoSlot, mark: number): void {
    this.stagedAt[s] = mark;
  }

  seenAtOf(s: MemoSlot): number {
    return this.seen[s] as number;
  }

  setSeenAt(s: MemoSlot, at: number): void {
    this.seen[s] = at;
  }

  /** Forget every series the grouping `gen` did not see (its records' slots are given out again). */
  forgetUnseen(gen: number): void {
    // Deleting the entry being visited is allowed while iterating a Map.
    this.slots.forEach((s, key) => {
      if (this.gen[s] === gen) return;
      this.slots.delete(key);
      this.free.push(s);
    });
    if (this.slots.size === 0) {
      this.free.length = 0;
      this.top = 0;
    }
  }

  /** Forget every series. */
  clear(): void {
    this.slots.clear();
    this.free.length = 0;
    this.top = 0;
  }

  /** Each series' key and newest point, in the order first seen (tests, tools). */
  *entries(): IterableIterator<[string, MemoPoint]> {
    for (const [key, s] of this.slots) yield [key, { t: this.t[s] as number, v: this.v[s] as number }];
  }

  [Symbol.iterator](): IterableIterator<[string, MemoPoint]> {
    return this.entries();
  }

  /** Each series' newest point, in the order first seen. */
  *values(): IterableIterator<MemoPoint> {
    for (const [, p] of this.entries()) yield p;
  }

  private grow(): void {
    this.t = doubled(this.t);
    this.v = doubled(this.v);
    this.gen = doubled(this.gen);
    this.stagedAt = doubled(this.stagedAt);
    this.seen = doubled(this.seen);
  }
}
