/**
 * The range reader's tables (range-reader.ts): the strings of label names and values kept once each with a number
 * of their own (Interner), a series' key in the counter memo made of those numbers (idKey), and the entries of one
 * answer in reused arrays (EntryList).
 */
import { Ch } from './json-slices.js';
import { keptLabel, RANGE_LIMITS } from './range-limits.js';
import type { RangeCaps } from './range-limits.js';
import { NO_RECORD } from './counter-memo.js';
import { doubled } from './grow.js';
import type { MemoSlot } from './counter-memo.js';

/**
 * The strings of label names and values, each kept once as a copy of its own, with a number of its own (1, 2, …;
 * 0 for one not kept). Looked up by the text between two quotes, without slicing it, or by a string: an
 * open-addressing table of the strings' hashes (FNV-1a over the UTF-16 code units).
 *
 * Bounded by bytes, not by count: the strings kept cost at most MAX_BYTES (each counted as two bytes a code unit and
 * ENTRY_BYTES of bookkeeping); past it a string is not kept (its series are then keyed by their strings, which
 * works, more slowly). And released when unused: sweep(), at the end of each poll (AnswerGrouping.done), forgets the
 * strings no read asked for since the previous sweep, and their numbers are given out again. That is safe for the
 * counter memo, whose keys are made of these numbers: the same done() forgets every memo record the poll did not
 * see, and every record it saw was keyed by numbers asked for in it. So fresh label values in every answer never
 * pile up.
 */
export class Interner {
  /** Bytes the kept strings may cost: a label value is at most 1,024 bytes, a real cluster's few hundred of them far less. */
  static readonly MAX_BYTES = 1 << 20;
  /** Bookkeeping counted per string kept (its slot, hash, mark and the string's header). */
  static readonly ENTRY_BYTES = 64;
  /** Numbers are UTF-16 code units in idKey: never above 0xffff. MAX_BYTES / ENTRY_BYTES keeps them far under. */
  private static readonly MAX_COUNT = 0xfff0;
  private readonly strings: Array<string | undefined> = [];
  private readonly hashes: number[] = [];
  /** The sweep generation that last asked for each string. */
  private readonly marks: number[] = [];
  /** Numbers (index + 1) free for reuse. */
  private readonly free: number[] = [];
  private gen = 1;
  private live = 0;
  /** What the kept strings cost, counted as above. */
  bytes = 0;
  /** Index into strings, -1 for an empty slot; at most half full. */
  private slots = new Int32Array(1024).fill(-1);
  /** The number of the string the last get() gave (0: not kept). */
  id = 0;

  /** The strings kept now. */
  get size(): number {
    return this.live;
  }

  /** The text between the quotes at `open` and `close` (exclusive), which holds no escape. Sets `id`. */
  get(text: string, open: number, close: number): string {
    let h = 0x811c9dc5;
    for (let p = open + 1; p < close; p++) h = Math.imul(h ^ text.charCodeAt(p), 0x01000193);
    const len = close - open - 1;
    const i = this.find(h, len, text, open + 1);
    const k = this.slots[i] as number;
    if (k >= 0) {
      this.id = k + 1;
      this.marks[k] = this.gen;
      return this.strings[k] as string;
    }
    // JSON.parse of the quoted text makes a string of its own (not a slice of `text`).
    const own = JSON.parse(text.slice(open, close + 1)) as string;
    this.id = this.add(i, h, own);
    return own;
  }

  /**
   * get() for a label name or value: one longer than RANGE_LIMITS.labelBytes is cut first (keptLabel), so that
   * neither the table nor the labels hold more than the cut. Sets `id`.
   */
  label(text: string, open: number, close: number, caps: RangeCaps | undefined): string {
    if (close - open - 1 <= RANGE_LIMITS.labelBytes / 3) return this.get(text, open, close);
    const whole = text.slice(open + 1, close);
    if (Buffer.byteLength(whole, 'utf8') <= RANGE_LIMITS.labelBytes) return this.get(text, open, close);
    const cut = keptLabel(whole, caps);
    this.id = this.idOf(cut);
    return cut;
  }

  /**
   * Whether the text at `open` is the quoted string number `id` (a string this table keeps, which holds no escape):
   * then its closing quote's index, and the string is marked as asked for (`id` and the string: get()'s); else -1.
   * A comparison, not a hash: the reader asks it for the string the same label had in the previous entry.
   */
  match(text: string, open: number, id: number): number {
    const s = this.strings[id - 1];
    if (s === undefined) return -1;
    const close = open + 1 + s.length;
    if (text.charCodeAt(close) !== Ch.Quote || !text.startsWith(s, open + 1)) return -1;
    this.marks[id - 1] = this.gen;
    this.id = id;
    this.matched = s;
    return close;
  }

  /** The string match() found. */
  matched = '';

  /** The number of a string (kept from now on, within the limit); 0 when it is not kept. */
  idOf(s: string): number {
    let h = 0x811c9dc5;
    for (let p = 0; p < s.length; p++) h = Math.imul(h ^ s.charCodeAt(p), 0x01000193);
    const i = this.find(h, s.length, s, 0);
    const k = this.slots[i] as number;
    if (k >= 0) {
      this.marks[k] = this.gen;
      return k + 1;
    }
    return this.add(i, h, s);
  }

  /**
   * Forget the strings not asked for since the previous sweep (their numbers are reused); the next reads start a
   * new generation. Called once per poll, after the memo forgot the series the poll did not see.
   */
  sweep(): void {
    let dropped = 0;
    for (let k = 0; k < this.strings.length; k++) {
      const s = this.strings[k];
      if (s === undefined || this.marks[k] === this.gen) continue;
      this.strings[k] = undefined;
      this.bytes -= Interner.cost(s);
      this.free.push(k);
      this.live--;
      dropped++;
    }
    this.gen++;
    if (dropped === 0) return;
    // Open addressing: rebuilt rather than deleted from (a deletion would break the probe chains).
    this.place(this.slots.fill(-1));
  }

  private static cost(s: string): number {
    return 2 * s.length + Interner.ENTRY_BYTES;
  }

  /** The slot of the string of hash `h` equal to text[at, at + len), or the empty slot where it would go. */
  private find(h: number, len: number, text: string, at: number): number {
    const slots = this.slots;
    const mask = slots.length - 1;
    let i = h & mask;
    for (;;) {
      const k = slots[i] as number;
      if (k < 0) return i;
      const s = this.strings[k] as string;
      if (s.length === len && this.hashes[k] === h && text.startsWith(s, at)) return i;
      i = (i + 1) & mask;
    }
  }

  private add(slot: number, h: number, s: string): number {
    const cost = Interner.cost(s);
    if (this.bytes + cost > Interner.MAX_BYTES || this.live >= Interner.MAX_COUNT) return 0;
    const k = this.free.length > 0 ? (this.free.pop() as number) : this.strings.length;
    this.slots[slot] = k;
    this.strings[k] = s;
    this.hashes[k] = h;
    this.marks[k] = this.gen;
    this.bytes += cost;
    this.live++;
    if (this.live * 2 > this.slots.length) this.grow();
    return k + 1;
  }

  /** Every kept string's number into `slots` (all -1), at its hash's first free slot. */
  private place(slots: Int32Array): void {
    const mask = slots.length - 1;
    for (let k = 0; k < this.strings.length; k++) {
      if (this.strings[k] === undefined) continue;
      let i = (this.hashes[k] as number) & mask;
      while ((slots[i] as number) >= 0) i = (i + 1) & mask;
      slots[i] = k;
    }
  }

  private grow(): void {
    const slots = new Int32Array(this.slots.length * 2).fill(-1);
    this.place(slots);
    this.slots = slots;
  }
}

/** A growable list of numbers (no boxing): the reader's label numbers. */
export class IdList {
  a = new Int32Array(256);
  n = 0;

  push(x: number): void {
    if (this.n === this.a.length) {
      const b = new Int32Array(this.n * 2);
      b.set(this.a);
      this.a = b;
    }
    this.a[this.n++] = x;
  }
}

/** KEY_IDS' scratch: node, metric, then name and value pairs, for String.fromCharCode. */
const KEY_IDS: number[] = [];

/**
 * A native series' key in the counter memo from the numbers of its strings (node, metric, then each label's name
 * and value, in the order of the names' numbers): a dozen characters where the strings' key (seriesKey) has about a
 * hundred. `pairs` holds ids[from, to) as name, value, name, value…. Undefined when a string has no number (the
 * interner is full): the caller then keys by the strings. Both ways of reading an answer key a series alike.
 * The characters are the numbers (1 to at most 0xfff0), never 0: such a key never equals a key of strings, which
 * holds NUL separators.
 */
export function idKey(node: number, metric: number, ids: Int32Array, from: number, to: number): string | undefined {
  if (node === 0 || metric === 0) return undefined;
  const k = KEY_IDS;
  k.length = 2;
  k[0] = node;
  k[1] = metric;
  for (let i = from; i < to; i += 2) {
    const name = ids[i] as number;
    const value = ids[i + 1] as number;
    if (name === 0 || value === 0) return undefined;
    // Insertion by the name's number: a handful of labels.
    let j = k.length;
    k.push(0, 0);
    while (j > 2 && (k[j - 2] as number) > name) {
      k[j] = k[j - 2] as number;
      k[j + 1] = k[j - 1] as number;
      j -= 2;
    }
    k[j] = name;
    k[j + 1] = value;
  }
  return String.fromCharCode.apply(null, k);
}

/**
 * One entry read: its labels, its node (ALL_NODES for a sum over the nodes), its points' stretch in the run, and,
 * once the answer is read, its key in the counter memo and its record there.
 */
export interface ReadEntry {
  readonly labels: Record<string, string>;
  readonly node: string;
  /** The node's number in the interner (0: none). */
  readonly nodeId: number;
  readonly from: number;
  readonly to: number;
  /** Its labels' numbers in the reader's `ids`: [idFrom, idTo), name and value pairs. */
  readonly idFrom: number;
  readonly idTo: number;
  /** The series' key in the counter memo (idKey, else seriesKey) and its record there (set once the answer is read). */
  key: string;
  rec: MemoSlot;
}

/**
 * The entries of one answer, field by field in reused arrays rather than an object each (an object per series would
 * live until its answer was staged: what young-generation collections copy). `n` entries are valid; at(i) makes
 * entry i an object (tests, and paths that are rare).
 */
export class EntryList {
  n = 0;
  readonly labels: Array<Record<string, string>> = [];
  readonly nodes: string[] = [];
  readonly keys: string[] = [];
  /** Per entry: its record in the memo (NO_RECORD: none), set once the answer is read. */
  recs = new Int32Array(64);
  /** Per entry: the node's number, the points' stretch [from, to) in the run and the labels' numbers' [idFrom, idTo). */
  nodeIds = new Int32Array(64);
  from = new Int32Array(64);
  to = new Int32Array(64);
  idFrom = new Int32Array(64);
  idTo = new Int32Array(64);

  push(labels: Record<string, string>, node: string, nodeId: number, from: number, to: number, idFrom: number, idTo: number): void {
    const i = this.n;
    if (i === this.from.length) this.grow();
    this.labels[i] = labels;
    this.nodes[i] = node;
    this.keys[i] = '';
    this.recs[i] = NO_RECORD;
    this.nodeIds[i] = nodeId;
    this.from[i] = from;
    this.to[i] = to;
    this.idFrom[i] = idFrom;
    this.idTo[i] = idTo;
    this.n = i + 1;
  }

  /** Entry `from` copied to place `to` (to ≤ from), as the list is compacted. */
  move(from: number, to: number): void {
    if (from === to) return;
    this.labels[to] = this.labels[from] as Record<string, string>;
    this.nodes[to] = this.nodes[from] as string;
    this.keys[to] = this.keys[from] as string;
    this.recs[to] = this.recs[from] as number;
    this.nodeIds[to] = this.nodeIds[from] as number;
    this.from[to] = this.from[from] as number;
    this.to[to] = this.to[from] as number;
    this.idFrom[to] = this.idFrom[from] as number;
    this.idTo[to] = this.idTo[from] as number;
  }

  /** Entry i as an object. */
  at(i: number): ReadEntry {
    return {
      labels: this.labels[i] as Record<string, string>,
      node: this.nodes[i] as string,
      nodeId: this.nodeIds[i] as number,
      from: this.from[i] as number,
      to: this.to[i] as number,
      idFrom: this.idFrom[i] as number,
      idTo: this.idTo[i] as number,
      key: this.keys[i] as string,
      rec: this.recs[i] as number,
    };
  }

  /**
   * Drop the references the arrays hold (labels, nodes, keys, records of the last answer read) and keep their room:
   * a list kept from poll to poll between polls (AnswerGrouping.done) then holds no upstream string or record.
   */
  release(): void {
    this.n = 0;
    this.labels.fill(NO_LABELS);
    this.nodes.fill('');
    this.keys.fill('');
    this.recs.fill(NO_RECORD);
  }

  private grow(): void {
    this.nodeIds = doubled(this.nodeIds);
    this.from = doubled(this.from);
    this.to = doubled(this.to);
    this.idFrom = doubled(this.idFrom);
    this.idTo = doubled(this.idTo);
    this.recs = doubled(this.recs);
  }
}

/** What EntryList.release leaves in place of an entry's labels. */
export const NO_LABELS: Record<string, string> = Object.freeze({}) as Record<string, string>;
