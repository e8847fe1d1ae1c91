/**
 * One query's answer of the range API read straight from the request's text, without JSON.parse's tree: each
 * `data` entry's labels and node, and its points into a PointRun (no array per point, no string per value).
 *
 * The answer to one query is `{"data":[{"metric":{…labels, "nodes":[…]},"values":[[t,"v"],…]},…],"errors":[],
 * "startTimestamp":…,"endTimestamp":…}`. The reader takes only that shape, and only JSON it fully checks: strings
 * without escapes or control characters, numbers in JSON's grammar, literals, and the structure around them.
 * Anything else (an escape in a label, a non-empty `errors`, an object where a label value was expected, …) and it
 * gives up (returns -1) before anything is used, and the caller parses that answer with JSON.parse, which decides.
 * So, for every text it reads, it gives what JSON.parse followed by the tree's walk (range.ts: entryOf, readPoint)
 * gives; a property test holds the two equal.
 *
 * Label names and values come from a table of strings already seen (`Interner`): a label value is the same few
 * hundred strings poll after poll, and a string sliced from the text would keep the whole text alive as long as
 * the string lives (V8 slices rather than copies), in the metric store for one.
 */
import { ALL_NODES } from './range-groups.js';
import { Ch, skipSpace } from './json-slices.js';
import { PointRun } from './range-values.js';

/**
 * The strings of label names and values, each kept once as a copy of its own (at most LIMIT; past it, copies are
 * not kept), with a number of its own (1, 2, …; 0 for one not kept). Looked up by the text between two quotes,
 * without slicing it, or by a string: an open-addressing table of the strings' hashes (FNV-1a over the UTF-16
 * code units).
 */
export class Interner {
  static readonly LIMIT = 20_000;
  private readonly strings: string[] = [];
  private readonly hashes: number[] = [];
  /** Index into strings, -1 for an empty slot; at most half full. */
  private slots = new Int32Array(1024).fill(-1);
  /** The number of the string the last get() gave (0: not kept). */
  id = 0;

  /** The text between the quotes at `open` and `close` (exclusive), which holds no escape. Sets `id`. */
  get(text: string, open: number, close: number): string {
    let h = 0x811c9dc5;
    for (let p = open + 1; p < close; p++) h = Math.imul(h ^ text.charCodeAt(p), 0x01000193);
    const len = close - open - 1;
    const i = this.find(h, len, text, open + 1);
    const k = this.slots[i] as number;
    if (k >= 0) {
      this.id = k + 1;
      return this.strings[k] as string;
    }
    // JSON.parse of the quoted text makes a string of its own (not a slice of `text`).
    const own = JSON.parse(text.slice(open, close + 1)) as string;
    this.id = this.add(i, h, own);
    return own;
  }

  /** The number of a string (kept from now on, within the limit); 0 when it is not kept. */
  idOf(s: string): number {
    let h = 0x811c9dc5;
    for (let p = 0; p < s.length; p++) h = Math.imul(h ^ s.charCodeAt(p), 0x01000193);
    const i = this.find(h, s.length, s, 0);
    const k = this.slots[i] as number;
    return k >= 0 ? k + 1 : this.add(i, h, s);
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
    if (this.strings.length >= Interner.LIMIT) return 0;
    this.slots[slot] = this.strings.length;
    this.strings.push(s);
    this.hashes.push(h);
    const id = this.strings.length;
    if (this.strings.length * 2 > this.slots.length) this.grow();
    return id;
  }

  private grow(): void {
    const slots = new Int32Array(this.slots.length * 2).fill(-1);
    const mask = slots.length - 1;
    for (let k = 0; k < this.hashes.length; k++) {
      let i = (this.hashes[k] as number) & mask;
      while ((slots[i] as number) >= 0) i = (i + 1) & mask;
      slots[i] = k;
    }
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
 * The characters are the numbers (1 to LIMIT), never 0: such a key never equals a key of strings, which holds
 * NUL separators.
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

/** One entry read: its labels, its node (ALL_NODES for a sum over the nodes) and its points' stretch in the run. */
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
}

/** The outcome of a number or string read as a point's time or value: its number, or NaN when Number() gives none. */
let NUM = 0;

/** Reads one query's answer; reused for the answers of a request (one text). */
export class QueryReader {
  private text = '';
  private pos = 0;
  /** The entries of the answer being read, in order. */
  readonly entries: ReadEntry[] = [];
  /** Their points. */
  readonly run = new PointRun();
  /** Their labels' numbers. */
  readonly ids = new IdList();
  /** The number of the node the last nodes() read. */
  private nodeId = 0;

  constructor(readonly interner: Interner) {}

  /**
   * Read the answer that starts at `start` (a JSON value, then whitespace, then `,` or `]` of the request's array).
   * Returns the index after the value, or -1 when the reader gives up (the caller then parses it whole).
   * `summed`: the query asked for the sum over the nodes (every series is ALL_NODES's).
   */
  read(text: string, start: number, summed: boolean): number {
    this.text = text;
    this.pos = start;
    this.entries.length = 0;
    this.run.n = 0;
    this.ids.n = 0;
    return this.answer(summed) ? this.pos : -1;
  }

  /** Past any whitespace: the code of the character there (NaN at the end). */
  private ws(): number {
    this.pos = skipSpace(this.text, this.pos);
    return this.text.charCodeAt(this.pos);
  }

  /** At a quote: the index of the closing quote of a string without escapes or control characters, else -1. */
  private stringClose(): number {
    const t = this.text;
    for (let p = this.pos + 1; p < t.length; p++) {
      const c = t.charCodeAt(p);
      if (c === Ch.Quote) return p;
      if (c === Ch.Backslash || c < Ch.Space) return -1;
    }
    return -1;
  }

  /** At a quote: skip the string. */
  private skipString(): boolean {
    const close = this.stringClose();
    if (close < 0) return false;
    this.pos = close + 1;
    return true;
  }

  /** A key, its colon and the whitespace after: the index of the key's opening quote, or -1 when not so. */
  private key(): number {
    if (this.ws() !== Ch.Quote) return -1;
    const open = this.pos;
    const close = this.stringClose();
    if (close < 0) return -1;
    this.pos = close + 1;
    if (this.ws() !== Ch.Colon) return -1;
    this.pos++;
    this.ws();
    return open;
  }

  /** After a member or element: true at `close` (`}` or `]`), false at `,` (either consumed); undefined for anything else. */
  private next(close: number): boolean | undefined {
    const c = this.ws();
    this.pos++;
    if (c === close) return true;
    if (c === Ch.Comma) return false;
    return undefined;
  }

  private objectNext(): boolean | undefined {
    return this.next(Ch.CloseCurly);
  }

  private arrayNext(): boolean | undefined {
    return this.next(Ch.CloseSquare);
  }

  /** A JSON number at pos, into NUM. False when the text there is not one. */
  private number(): boolean {
    const t = this.text;
    const start = this.pos;
    let p = start;
    let c = t.charCodeAt(p);
    if (c === Ch.Minus) c = t.charCodeAt(++p);
    if (c === Ch.Zero) c = t.charCodeAt(++p);
    else if (c > Ch.Zero && c <= Ch.Nine) {
      do c = t.charCodeAt(++p);
      while (c >= Ch.Zero && c <= Ch.Nine);
    } else return false;
    let plain = true;
    if (c === Ch.Dot) {
      plain = false;
      c = t.charCodeAt(++p);
      if (!(c >= Ch.Zero && c <= Ch.Nine)) return false;
      do c = t.charCodeAt(++p);
      while (c >= Ch.Zero && c <= Ch.Nine);
    }
    if (c === Ch.LowerE || c === Ch.UpperE) {
      plain = false;
      c = t.charCodeAt(++p);
      if (c === Ch.Plus || c === Ch.Minus) c = t.charCodeAt(++p);
      if (!(c >= Ch.Zero && c <= Ch.Nine)) return false;
      do c = t.charCodeAt(++p);
      while (c >= Ch.Zero && c <= Ch.Nine);
    }
    this.pos = p;
    NUM = plain ? integerOf(t, start, p) : Number(t.slice(start, p));
    return true;
  }

  /** A point's time or value at pos, a number or a string, into NUM (NaN when Number() makes none of it). */
  private scalar(): boolean {
    if (this.text.charCodeAt(this.pos) !== Ch.Quote) return this.number();
    const close = this.stringClose();
    if (close < 0) return false;
    NUM = numberOfString(this.text, this.pos + 1, close);
    this.pos = close + 1;
    return true;
  }

  /** `true`, `false` or `null` at pos. */
  private literal(): boolean {
    const t = this.text;
    const c = t.charCodeAt(this.pos);
    const word = c === Ch.LowerT ? 'true' : c === Ch.LowerF ? 'false' : c === Ch.LowerN ? 'null' : undefined;
    if (word === undefined || !t.startsWith(word, this.pos)) return false;
    this.pos += word.length;
    return true;
  }

  /** A string, number or literal at pos, skipped; false for anything else (an object or array is not taken). */
  private skipSimple(): boolean {
    const c = this.text.charCodeAt(this.pos);
    if (c === Ch.Quote) return this.skipString();
    if (c === Ch.Minus || (c >= Ch.Zero && c <= Ch.Nine)) return this.number();
    return this.literal();
  }

  /** The answer object: `data`, an empty `errors`, and numbers or strings (the timestamps) under other keys. */
  private answer(summed: boolean): boolean {
    if (this.ws() !== Ch.OpenCurly) return false;
    this.pos++;
    if (this.ws() === Ch.CloseCurly) return false;
    let data = false;
    for (;;) {
      const open = this.key();
      if (open < 0) return false;
      if (this.keyIsBefore(open, 'data')) {
        if (data || !this.data(summed)) return false;
        data = true;
      } else if (this.keyIsBefore(open, 'errors')) {
        // Only an empty list: entries (a node that did not answer) are read by the caller's parse.
        if (this.text.charCodeAt(this.pos) !== Ch.OpenSquare) return false;
        this.pos++;
        if (this.ws() !== Ch.CloseSquare) return false;
        this.pos++;
      } else if (this.keyIsBefore(open, '__proto__') || !this.skipSimple()) return false;
      const end = this.objectNext();
      if (end === undefined) return false;
      if (end) return data;
    }
  }

  /** The key whose opening quote is at `open` (the key() just read) is `name`. */
  private keyIsBefore(open: number, name: string): boolean {
    const t = this.text;
    return t.charCodeAt(open + 1 + name.length) === Ch.Quote && t.startsWith(name, open + 1);
  }

  /** `data`: an array of entries. */
  private data(summed: boolean): boolean {
    if (this.text.charCodeAt(this.pos) !== Ch.OpenSquare) return false;
    this.pos++;
    if (this.ws() === Ch.CloseSquare) {
      this.pos++;
      return true;
    }
    for (;;) {
      if (!this.entry(summed)) return false;
      const end = this.arrayNext();
      if (end === undefined) return false;
      if (end) return true;
      this.ws();
    }
  }

  /**
   * One entry: `metric` (labels) and `values` (points), in either order. An entry the tree's walk would skip (not
   * an object, no labels or no values, no single node unless summed) is read and skipped the same.
   */
  private entry(summed: boolean): boolean {
    const c = this.text.charCodeAt(this.pos);
    if (c !== Ch.OpenCurly) return this.skipSimple();
    this.pos++;
    let labels: Record<string, string> | undefined;
    let node: string | undefined;
    let nodeId = 0;
    let from = -1;
    let to = -1;
    let idFrom = -1;
    let idTo = -1;
    if (this.ws() === Ch.CloseCurly) {
      this.pos++;
      return true;
    }
    for (;;) {
      const open = this.key();
      if (open < 0) return false;
      if (this.keyIsBefore(open, 'metric')) {
        if (labels !== undefined || this.text.charCodeAt(this.pos) !== Ch.OpenCurly) return false;
        labels = {};
        idFrom = this.ids.n;
        this.nodeId = 0;
        const n = this.metric(labels);
        if (n === null) return false;
        node = n;
        nodeId = this.nodeId;
        idTo = this.ids.n;
      } else if (this.keyIsBefore(open, 'values')) {
        if (from >= 0 || this.text.charCodeAt(this.pos) !== Ch.OpenSquare) return false;
        from = this.run.n;
        if (!this.values()) return false;
        to = this.run.n;
      } else if (this.keyIsBefore(open, '__proto__') || !this.skipSimple()) return false;
      const end = this.objectNext();
      if (end === undefined) return false;
      if (end) break;
    }
    if (summed && labels !== undefined) {
      node = ALL_NODES;
      nodeId = this.interner.idOf(ALL_NODES);
    }
    if (labels !== undefined && node !== undefined && from >= 0) this.entries.push({ labels, node, nodeId, from, to, idFrom, idTo });
    return true;
  }

  /**
   * The `metric` object: string values are labels, `nodes` names the node when it holds exactly one string;
   * numbers and literals are skipped (the tree's walk keeps only strings). Returns the node (undefined when there
   * is no single one), or null when the reader gives up.
   */
  private metric(labels: Record<string, string>): string | undefined | null {
    this.pos++;
    if (this.ws() === Ch.CloseCurly) {
      this.pos++;
      return undefined;
    }
    let node: string | undefined;
    for (;;) {
      const open = this.key();
      if (open < 0) return null;
      const close = this.keyClose(open);
      if (this.keyIsBefore(open, '__proto__')) return null;
      if (this.keyIsBefore(open, 'nodes')) {
        const n = this.nodes();
        if (n === null) return null;
        node = n;
      } else if (this.text.charCodeAt(this.pos) === Ch.Quote) {
        const vOpen = this.pos;
        const vClose = this.stringClose();
        if (vClose < 0) return null;
        this.pos = vClose + 1;
        const name = this.interner.get(this.text, open, close);
        const nameId = this.interner.id;
        // A label given twice: left to the parse (the last one wins there).
        if (labels[name] !== undefined) return null;
        labels[name] = this.interner.get(this.text, vOpen, vClose);
        this.ids.push(nameId);
        this.ids.push(this.interner.id);
      } else if (this.skipSimple()) {
        // The tree's walk keeps only strings; a label given twice, the last not a string, is left to the parse.
        if (labels[this.interner.get(this.text, open, close)] !== undefined) return null;
      } else return null;
      const end = this.objectNext();
      if (end === undefined) return null;
      if (end) return node;
    }
  }

  /** The closing quote of the key whose opening quote is at `open`. */
  private keyClose(open: number): number {
    return this.text.indexOf('"', open + 1);
  }

  /** `nodes`: an array of strings; its one string, undefined for none or several, null when not such an array. */
  private nodes(): string | undefined | null {
    if (this.text.charCodeAt(this.pos) !== Ch.OpenSquare) {
      // Not a list: no node from it (a string here is a label the walk would keep; give up rather than guess).
      return null;
    }
    this.pos++;
    if (this.ws() === Ch.CloseSquare) {
      this.pos++;
      return undefined;
    }
    let one: string | undefined;
    let count = 0;
    for (;;) {
      if (this.text.charCodeAt(this.pos) !== Ch.Quote) return null;
      const open = this.pos;
      const close = this.stringClose();
      if (close < 0) return null;
      this.pos = close + 1;
      if (count++ === 0) {
        one = this.interner.get(this.text, open, close);
        this.nodeId = this.interner.id;
      }
      const end = this.arrayNext();
      if (end === undefined) return null;
      if (end) return count === 1 ? one : undefined;
      this.ws();
    }
  }

  /**
   * `values`: the points. A point `[t, v, …]` whose first two are usable numbers (a number, or a string Number()
   * reads; t in seconds) goes into the run; one that is not (too short, not finite, or a string, number or literal
   * instead of a list) is skipped, as readPoint skips it. A list of anything else makes the reader give up.
   */
  private values(): boolean {
    this.pos++;
    if (this.ws() === Ch.CloseSquare) {
      this.pos++;
      return true;
    }
    for (;;) {
      if (this.text.charCodeAt(this.pos) === Ch.OpenSquare) {
        if (!this.point()) return false;
      } else if (!this.skipSimple()) return false;
      const end = this.arrayNext();
      if (end === undefined) return false;
      if (end) return true;
      this.ws();
    }
  }

  private point(): boolean {
    this.pos++;
    let count = 0;
    let t = Number.NaN;
    let v = Number.NaN;
    if (this.ws() === Ch.CloseSquare) {
      this.pos++;
      return true;
    }
    for (;;) {
      if (!this.scalar()) return false;
      if (count === 0) t = NUM;
      else if (count === 1) v = NUM;
      count++;
      const end = this.arrayNext();
      if (end === undefined) return false;
      if (end) break;
      this.ws();
    }
    if (count >= 2 && Number.isFinite(t) && Number.isFinite(v)) this.run.push(t * 1000, v);
    return true;
  }
}

/** The value of the digits (after an optional minus) of a JSON integer in text[start, end): exact to 15 digits, else Number(). */
function integerOf(t: string, start: number, end: number): number {
  const neg = t.charCodeAt(start) === Ch.Minus;
  const from = neg ? start + 1 : start;
  if (end - from > 15) return Number(t.slice(start, end));
  let n = 0;
  for (let p = from; p < end; p++) n = n * 10 + (t.charCodeAt(p) - Ch.Zero);
  return neg ? -n : n;
}

/** Number() of the string text[start, end) (no escapes in it): digits alone are read here, anything else by Number(). */
function numberOfString(t: string, start: number, end: number): number {
  // Number('') is 0, as the loop below gives.
  if (end - start > 15) return Number(t.slice(start, end));
  let n = 0;
  for (let p = start; p < end; p++) {
    const d = t.charCodeAt(p) - Ch.Zero;
    if (d < 0 || d > 9) return Number(t.slice(start, end));
    n = n * 10 + d;
  }
  return n;
}
