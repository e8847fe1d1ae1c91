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
import { boundedText } from '../errors.js';
import { capLabelValue } from '../metrics/family.js';
import { ALL_NODES } from './range-groups.js';
import { Ch, skipSpace } from './json-slices.js';
import { decimalInto, PointRun, seriesKey } from './range-values.js';
import type { CounterMemo, MemoPoint } from './range-values.js';

/**
 * What one query's answer may hold before the rest is refused or cut (issue 39): an upstream byte is kept only
 * for what it is worth. Documented in docs/security.md ("Range answers").
 */
export const RANGE_LIMITS = {
  /** A label name or value (and a node's name), UTF-8 bytes: longer ones are cut as /metrics cuts a label value. */
  labelBytes: 1024,
  /** The text kept of one `errors` entry (node and error), UTF-16 code units. */
  errorChars: 200,
  /** Distinct error texts kept per query's answer (the rest counted, not kept). */
  errorTexts: 20,
  /** `errors` entries read one by one per query's answer; past it, the metric counts as failed on every node. */
  errorEntries: 1000,
  /** Series per query's answer; past it the query's answer is refused (its metric failed on every node). */
  seriesPerQuery: 200_000,
} as const;

/**
 * What the bounds on one poll's answers cut or refused, by the `what` of `cbwatch_collector_capped_total`:
 * range_label_length (label values cut), range_error_text (error texts not kept), range_errors (errors entries past
 * the cap), range_series (series past the cap: the query refused), range_cells (series refused for making an item
 * and node past range-groups.ts's MAX_CELLS_PER_REQUEST), range_cell_series (series of a metric refused for giving one
 * item and node more than range-groups.ts's MAX_SERIES_PER_CELL), range_nesting (answers refused as too deep),
 * range_duplicate_series (a series an answer repeats, merged).
 */
export type RangeCapWhat = 'range_label_length' | 'range_error_text' | 'range_errors' | 'range_series' | 'range_cells' | 'range_cell_series' | 'range_nesting' | 'range_duplicate_series';

/** Counts of what the bounds did, kept by the reader for one grouping (one poll). */
export class RangeCaps {
  readonly counts = new Map<RangeCapWhat, number>();
  add(what: RangeCapWhat, n = 1): void {
    if (n > 0) this.counts.set(what, (this.counts.get(what) ?? 0) + n);
  }
}

/**
 * A string of its own (not a slice of the request's text, which V8 would keep whole as long as the slice lives):
 * a label value, node name or error text that outlives the read.
 */
function ownString(s: string): string {
  return JSON.parse(JSON.stringify(s)) as string;
}

/** A label value as kept: at most RANGE_LIMITS.labelBytes UTF-8 bytes (cut as /metrics cuts one), a string of its own. */
export function keptLabel(value: string, caps?: RangeCaps): string {
  // A code unit is at most 3 UTF-8 bytes: short strings need no count.
  if (value.length * 3 <= RANGE_LIMITS.labelBytes || Buffer.byteLength(value, 'utf8') <= RANGE_LIMITS.labelBytes) return value;
  caps?.add('range_label_length');
  return ownString(capLabelValue(value, RANGE_LIMITS.labelBytes));
}

/**
 * The text kept of one `errors` entry: `<node>: <error>` (`cluster` when it names no node), at most
 * RANGE_LIMITS.errorChars code units, a string of its own. `why`: the error's text (already cut is fine).
 */
export function errorText(node: string | undefined, why: string): string {
  return ownString(`${node ?? 'cluster'}: ${why.slice(0, RANGE_LIMITS.errorChars)}`.slice(0, RANGE_LIMITS.errorChars));
}

/** One query's `errors`, bounded: the nodes they name ('*' for one naming none, or past the cap) and the texts kept. */
export class AnswerErrors {
  readonly nodes = new Set<string>();
  readonly texts: string[] = [];
  /** The texts of the entries that name no node, and of refusals (the metric's own errors), bounded like `texts`. */
  readonly clusterTexts: string[] = [];
  /** The entries that name a node: its name (cut) and its reason (cut), each node once, at most MAX_NODES_NAMED. */
  readonly byNode: Array<[string, string]> = [];
  /** Nodes named apart per answer: more than a cluster has (MAX_GAP_NODES, family.ts, keeps 64 of them). */
  static readonly MAX_NODES_NAMED = 64;
  /** Entries read. */
  entries = 0;

  constructor(private readonly caps: RangeCaps | undefined) {}

  /** One entry: its node (cut) or undefined, and its error text. */
  add(node: string | undefined, why: string): void {
    if (++this.entries > RANGE_LIMITS.errorEntries) {
      // Past the cap the nodes are not read one by one: the metric counts as failed everywhere.
      this.nodes.add('*');
      this.caps?.add('range_errors');
      return;
    }
    const n = node === undefined ? undefined : keptLabel(node, this.caps);
    this.nodes.add(n ?? '*');
    const text = errorText(n, why);
    if (n === undefined) {
      if (!this.clusterTexts.includes(text) && this.clusterTexts.length < RANGE_LIMITS.errorTexts) this.clusterTexts.push(text);
    } else if (this.byNode.length < AnswerErrors.MAX_NODES_NAMED && !this.byNode.some(([x]) => x === n)) {
      // Upstream text that reaches the landing page and a log line: redacted and bounded.
      this.byNode.push([boundedText(n, RANGE_LIMITS.errorChars), boundedText(why.slice(0, 4 * RANGE_LIMITS.errorChars), RANGE_LIMITS.errorChars)]);
    }
    if (this.texts.includes(text)) return;
    if (this.texts.length >= RANGE_LIMITS.errorTexts) this.caps?.add('range_error_text');
    else this.texts.push(text);
  }

  /** A refusal of the whole answer (too many series, too deep): every node, with its reason. */
  refuse(why: string): void {
    this.nodes.add('*');
    if (!this.texts.includes(why)) this.texts.push(why);
    if (!this.clusterTexts.includes(why)) this.clusterTexts.push(why);
  }

  clear(): void {
    this.nodes.clear();
    this.texts.length = 0;
    this.clusterTexts.length = 0;
    this.byNode.length = 0;
    this.entries = 0;
  }
}

/** The error text of a query's answer refused for its series. */
export function tooManySeriesText(count: number): string {
  return `cluster: the answer has ${count.toLocaleString('en')} series, over the limit of ${RANGE_LIMITS.seriesPerQuery.toLocaleString('en')} per query: refused`;
}

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
 * see, and every record it saw was keyed by numbers asked for in it. Before (a count of 20,000 kept for the life of
 * the process), one fresh 1 MB label value per answer took the process from 74 to 418 MiB in 180 s (issue 39).
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
    const slots = this.slots.fill(-1);
    const mask = slots.length - 1;
    for (let k = 0; k < this.strings.length; k++) {
      if (this.strings[k] === undefined) continue;
      let i = (this.hashes[k] as number) & mask;
      while ((slots[i] as number) >= 0) i = (i + 1) & mask;
      slots[i] = k;
    }
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

  private grow(): void {
    const slots = new Int32Array(this.slots.length * 2).fill(-1);
    const mask = slots.length - 1;
    for (let k = 0; k < this.strings.length; k++) {
      if (this.strings[k] === undefined) continue;
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
  rec: MemoPoint | undefined;
}

/**
 * The entries of one answer, field by field in reused arrays rather than an object each (an object of nine fields
 * per series was two fifths of a poll's allocations, and lived until its answer was staged: what young-generation
 * collections copy). `n` entries are valid; at(i) makes entry i an object (tests, and paths that are rare).
 */
export class EntryList {
  n = 0;
  readonly labels: Array<Record<string, string>> = [];
  readonly nodes: string[] = [];
  readonly keys: string[] = [];
  readonly recs: Array<MemoPoint | undefined> = [];
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
    this.recs[i] = undefined;
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
    this.recs[to] = this.recs[from];
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
      rec: this.recs[i],
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
    this.recs.fill(undefined);
  }

  private grow(): void {
    const more = (a: Int32Array) => {
      const b = new Int32Array(a.length * 2);
      b.set(a);
      return b;
    };
    this.nodeIds = more(this.nodeIds);
    this.from = more(this.from);
    this.to = more(this.to);
    this.idFrom = more(this.idFrom);
    this.idTo = more(this.idTo);
  }
}

/**
 * The outcome of a number or string read as a point's time or value: its number, or NaN when it is not a decimal
 * (decimalOf). An array's element rather than a variable: a fraction stored in a variable of the module is a number
 * object of its own each time (two per point).
 */
const NUM = new Float64Array(3);

/**
 * The cells a query's series may still make (range-groups.ts Layer.cellGate): `room` series can make at most
 * `room` cells, so the reader asks `fits` only once an answer has more series than that.
 */
export interface CellGate {
  readonly room: number;
  /** Whether the series fits (its cell, when new, is counted); false: the query makes too many cells. */
  fits(labels: Readonly<Record<string, string>>, node: string): boolean;
}

/** Reads one query's answer; reused for the answers of a request (one text). */
export class QueryReader {
  private text = '';
  private pos = 0;

  /** The entries as objects (tests; the reader's own paths read `list`). */
  get entries(): ReadEntry[] {
    const out: ReadEntry[] = [];
    for (let i = 0; i < this.list.n; i++) out.push(this.list.at(i));
    return out;
  }
  /** Their points. */
  readonly run = new PointRun();
  /** Their labels' numbers. */
  readonly ids = new IdList();
  /** The number of the node the last nodes() read. */
  private nodeId = 0;
  /**
   * The numbers of the previous entry's label names and values by position (name, value, name, value…), and of its
   * node: what metric() and nodes() compare the text with first (Interner.match), before scanning and hashing it.
   * Consecutive series of an answer differ in a label or two; hashing every label was a sixth of reading.
   */
  private readonly predicted = new Int32Array(2 * PREDICTED);
  private predictedNode = 0;
  /** The answer's `errors`, bounded. */
  readonly errors: AnswerErrors;
  /** Entries past RANGE_LIMITS.seriesPerQuery in the answer being read (not kept). */
  private excess = 0;
  /** The cells gate of the answer being read, and whether it has started counting. */
  private gate: CellGate | undefined;
  private gating = false;
  /**
   * Series of the answer just read when they make more cells than its gate allows: none kept (the entries read
   * before it was known are dropped, the rest skipped as read), the metric refused by the caller. 0 otherwise.
   */
  cellRefused = 0;

  /** `caps`: where what the bounds cut or refused is counted (the grouping's, for the poll's self-metrics). */
  /**
   * `list`: where the entries of the answer being read go, in order; a list kept from poll to poll (range.ts keeps
   * one per memo) keeps its arrays' room instead of growing them again each poll.
   */
  constructor(
    readonly interner: Interner,
    readonly caps: RangeCaps = new RangeCaps(),
    readonly list: EntryList = new EntryList(),
  ) {
    this.errors = new AnswerErrors(this.pending);
  }

  /** What the bounds did in the answer being read: added to `caps` once it is read (a parse may read it again). */
  private readonly pending = new RangeCaps();

  /**
   * Read the answer that starts at `start` (a JSON value, then whitespace, then `,` or `]` of the request's array).
   * Returns the index after the value, or -1 when the reader gives up (the caller then parses it whole).
   * `summed`: the query asked for the sum over the nodes (every series is ALL_NODES's). `keyed`: the answer's metric
   * and the counter memo, to key the entries by (ReadEntry's key and rec); without it they are keyed by metric ''.
   */
  read(text: string, start: number, summed: boolean, gate?: CellGate, keyed?: { readonly metric: string; readonly memo: CounterMemo }): number {
    this.text = text;
    this.pos = start;
    this.list.n = 0;
    this.run.n = 0;
    this.ids.n = 0;
    this.excess = 0;
    this.gate = gate;
    this.gating = false;
    this.cellRefused = 0;
    this.errors.clear();
    this.pending.counts.clear();
    if (!this.answer(summed)) {
      this.list.n = 0;
      this.errors.clear();
      this.text = '';
      return -1;
    }
    for (const [what, n] of this.pending.counts) this.caps.add(what, n);
    this.gate = undefined;
    if (this.cellRefused > 0) {
      this.cellRefused += this.excess;
      this.list.n = 0;
    } else if (this.excess > 0) {
      // Too many series to be an answer: none of them is used (a sum over part of them would be a wrong number).
      this.caps.add('range_series', this.excess);
      this.errors.refuse(tooManySeriesText(this.list.n + this.excess));
      this.list.n = 0;
    } else this.keyEntries(keyed?.metric ?? '', keyed?.memo);
    // Neither the text nor a slice of it outlives the read.
    this.text = '';
    return this.pos;
  }

  /**
   * Whether a series fits the gate; the first time, the entries read so far are counted first. When one does not,
   * they are dropped (counted in cellRefused) and so are their points and labels' numbers.
   */
  private fitsGate(labels: Readonly<Record<string, string>>, node: string): boolean {
    const gate = this.gate as CellGate;
    if (!this.gating) {
      this.gating = true;
      const l = this.list;
      for (let i = 0; i < l.n; i++) {
        if (!gate.fits(l.labels[i] as Record<string, string>, l.nodes[i] as string)) return this.dropAll();
      }
    }
    return gate.fits(labels, node) || this.dropAll();
  }

  private dropAll(): false {
    this.cellRefused = this.list.n;
    this.list.n = 0;
    this.run.n = 0;
    this.ids.n = 0;
    return false;
  }

  /**
   * Each entry's key in the memo and its record there; and a series the answer gives twice (same node and labels) is
   * one series: its entries are merged into the first, their points in one stretch at the end of the run
   * (valueRun then sorts them and keeps one point per time). Counted as range_duplicate_series. Before, each was
   * added: curr_items twice (issue 39). A repeat of a series the memo knows is found by the place its record keeps
   * (seenAt: the list holds the record there only if this answer has it there); of one it does not know, by a table of
   * this answer's fresh keys. A table of every key, emptied for each answer, was a sixth of a poll's allocations.
   */
  private keyEntries(metric: string, memo: CounterMemo | undefined): void {
    const l = this.list;
    const n = l.n;
    if (n === 0) return;
    const metricId = this.interner.idOf(metric);
    const seen = SEEN;
    let out = 0;
    for (let i = 0; i < n; i++) {
      const key =
        idKey(l.nodeIds[i] as number, metricId, this.ids.a, l.idFrom[i] as number, l.idTo[i] as number) ??
        seriesKey({ metric, node: l.nodes[i] as string, labels: l.labels[i] as Record<string, string> });
      const rec = memo?.get(key);
      let first: number | undefined;
      if (rec !== undefined) {
        // Its place in this answer's list so far, if the place holds it; else a place in an earlier answer.
        const at = rec.seenAt ?? -1;
        if (at >= 0 && at < out && l.recs[at] === rec) first = at;
        else rec.seenAt = out;
      } else {
        first = seen.get(key);
        if (first === undefined) seen.set(key, out);
      }
      if (first === undefined) {
        l.move(i, out);
        l.keys[out] = key;
        l.recs[out] = rec;
        out++;
        continue;
      }
      this.caps.add('range_duplicate_series');
      const run = this.run;
      const from = run.n;
      for (let j = l.from[first] as number; j < (l.to[first] as number); j++) run.push(run.t[j] as number, run.v[j] as number);
      for (let j = l.from[i] as number; j < (l.to[i] as number); j++) run.push(run.t[j] as number, run.v[j] as number);
      l.from[first] = from;
      l.to[first] = run.n;
    }
    l.n = out;
    if (seen.size > 0) seen.clear();
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

  /** A JSON number at pos, into NUM[at]. False when the text there is not one. */
  private number(at: number): boolean {
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
    if (plain) NUM[at] = integerOf(t, start, p);
    else decimalInto(t, start, p, NUM, at);
    return true;
  }

  /** A point's time or value at pos, a number or a string, into NUM[at] (NaN when the string is not a decimal: decimalInto). */
  private scalar(at: number): boolean {
    if (this.text.charCodeAt(this.pos) !== Ch.Quote) return this.number(at);
    const close = this.stringClose();
    if (close < 0) return false;
    decimalInto(this.text, this.pos + 1, close, NUM, at);
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
    if (c === Ch.Minus || (c >= Ch.Zero && c <= Ch.Nine)) return this.number(2);
    return this.literal();
  }

  /** The answer object: `data`, an empty `errors`, and numbers or strings (the timestamps) under other keys. */
  private answer(summed: boolean): boolean {
    if (this.ws() !== Ch.OpenCurly) return false;
    this.pos++;
    if (this.ws() === Ch.CloseCurly) return false;
    let data = false;
    let errors = false;
    for (;;) {
      const open = this.key();
      if (open < 0) return false;
      if (this.keyIsBefore(open, 'data')) {
        if (data || !this.data(summed)) return false;
        data = true;
      } else if (this.keyIsBefore(open, 'errors')) {
        if (errors || !this.errorList()) return false;
        errors = true;
      } else if (this.keyIsBefore(open, '__proto__') || !this.skipSimple()) return false;
      const end = this.objectNext();
      if (end === undefined) return false;
      if (end) return data;
    }
  }

  /**
   * `errors`: a list of `{"node": "…", "error": "…"}` (other keys with simple values skipped) or of strings, each
   * kept bounded (AnswerErrors). An error that is not a string, or a string, node or key with an escape the text
   * cannot be checked quickly for, and the reader gives up (the parse decides, under the same bounds).
   */
  private errorList(): boolean {
    if (this.text.charCodeAt(this.pos) !== Ch.OpenSquare) return false;
    this.pos++;
    if (this.ws() === Ch.CloseSquare) {
      this.pos++;
      return true;
    }
    for (;;) {
      const c = this.text.charCodeAt(this.pos);
      if (c === Ch.Quote) {
        const why = this.escapedString();
        if (why === undefined) return false;
        this.errors.add(undefined, why);
      } else if (c === Ch.OpenCurly) {
        if (!this.errorEntry()) return false;
      } else return false;
      const end = this.arrayNext();
      if (end === undefined) return false;
      if (end) return true;
      this.ws();
    }
  }

  /** One `errors` object: `node` (a string without escapes) and `error` (a string), in either order. */
  private errorEntry(): boolean {
    this.pos++;
    let node: string | undefined;
    let why: string | undefined;
    let nodeSeen = false;
    let whySeen = false;
    if (this.ws() !== Ch.CloseCurly) {
      for (;;) {
        const open = this.key();
        if (open < 0) return false;
        if (this.keyIsBefore(open, '__proto__')) return false;
        if (this.keyIsBefore(open, 'node')) {
          // Given twice, or not a string: left to the parse.
          if (nodeSeen || this.text.charCodeAt(this.pos) !== Ch.Quote) return false;
          nodeSeen = true;
          const vOpen = this.pos;
          const vClose = this.stringClose();
          if (vClose < 0) return false;
          this.pos = vClose + 1;
          node = keptLabel(this.text.slice(vOpen + 1, vClose), this.pending);
          // A short one is still a slice of the text: a copy of its own.
          if (node.length <= RANGE_LIMITS.labelBytes) node = ownString(node);
        } else if (this.keyIsBefore(open, 'error')) {
          if (whySeen || this.text.charCodeAt(this.pos) !== Ch.Quote) return false;
          whySeen = true;
          why = this.escapedString();
          if (why === undefined) return false;
        } else if (!this.skipSimple()) return false;
        const end = this.objectNext();
        if (end === undefined) return false;
        if (end) break;
      }
    } else this.pos++;
    // As the parse: no error text is 'error'; an entry without one is read as the parse words it.
    this.errors.add(node, why ?? 'error');
    return true;
  }

  /**
   * At a quote: a JSON string, escapes allowed, checked to its end (undefined when it is not valid JSON), of which
   * only the first RANGE_LIMITS.errorChars code units are decoded and kept: a 4 MB error costs a scan, not a copy.
   */
  private escapedString(): string | undefined {
    const t = this.text;
    const start = this.pos + 1;
    let units = 0;
    let cut = -1;
    let p = start;
    for (; p < t.length; p++) {
      if (units === RANGE_LIMITS.errorChars && cut < 0) cut = p;
      const c = t.charCodeAt(p);
      if (c === Ch.Quote) break;
      if (c < Ch.Space) return undefined;
      if (c === Ch.Backslash) {
        const e = t.charCodeAt(p + 1);
        if (e === 0x75) {
          for (let k = p + 2; k < p + 6; k++) if (!isHex(t.charCodeAt(k))) return undefined;
          p += 5;
        } else if (e === Ch.Quote || e === Ch.Backslash || e === 0x2f || e === 0x62 || e === 0x66 || e === 0x6e || e === 0x72 || e === 0x74) p++;
        else return undefined;
      }
      units++;
    }
    if (p >= t.length) return undefined;
    this.pos = p + 1;
    return JSON.parse(`"${t.slice(start, cut < 0 ? p : cut)}"`) as string;
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
    if (labels !== undefined && node !== undefined && from >= 0) {
      if (this.cellRefused > 0 || (this.gate !== undefined && this.list.n >= this.gate.room && !this.fitsGate(labels, node))) {
        // Too many cells: the answer's series are refused together; none is kept from here on.
        this.cellRefused++;
        this.run.n = from;
        this.ids.n = idFrom;
      } else if (this.list.n < RANGE_LIMITS.seriesPerQuery) this.list.push(labels, node, nodeId, from, to, idFrom, idTo);
      else {
        // Past the cap: counted, its points and labels dropped as read.
        this.excess++;
        this.run.n = from;
        this.ids.n = idFrom;
      }
    }
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
    const t = this.text;
    const idFrom = this.ids.n;
    let node: string | undefined;
    // The position of the key among the entry's keys: the previous entry's key and value there are tried first.
    for (let k = 0; ; k++) {
      if (this.ws() !== Ch.Quote) return null;
      const open = this.pos;
      const guess = k < PREDICTED ? (this.predicted[2 * k] as number) : 0;
      let close = guess > 0 ? this.interner.match(t, open, guess) : -1;
      const known = close >= 0;
      if (!known) close = this.stringClose();
      if (close < 0) return null;
      this.pos = close + 1;
      if (this.ws() !== Ch.Colon) return null;
      this.pos++;
      this.ws();
      if (this.keyIsBefore(open, '__proto__')) return null;
      if (this.keyIsBefore(open, 'nodes')) {
        if (!known && k < PREDICTED) this.predicted[2 * k] = this.interner.idOf('nodes');
        const n = this.nodes();
        if (n === null) return null;
        node = n;
      } else if (t.charCodeAt(this.pos) === Ch.Quote) {
        let name: string;
        if (known) name = this.interner.matched;
        else name = this.interner.label(t, open, close, this.pending);
        const nameId = this.interner.id;
        // A label given twice: left to the parse (the last one wins there). By its number when it has one.
        if (nameId > 0 ? this.idsHaveName(idFrom, nameId) : labels[name] !== undefined) return null;
        const vOpen = this.pos;
        const vGuess = k < PREDICTED ? (this.predicted[2 * k + 1] as number) : 0;
        let vClose = vGuess > 0 ? this.interner.match(t, vOpen, vGuess) : -1;
        let value: string;
        if (vClose >= 0) value = this.interner.matched;
        else {
          vClose = this.stringClose();
          if (vClose < 0) return null;
          value = this.interner.label(t, vOpen, vClose, this.pending);
        }
        this.pos = vClose + 1;
        labels[name] = value;
        this.ids.push(nameId);
        this.ids.push(this.interner.id);
        if (k < PREDICTED) {
          this.predicted[2 * k] = nameId;
          this.predicted[2 * k + 1] = this.interner.id;
        }
      } else if (this.skipSimple()) {
        // The tree's walk keeps only strings; a label given twice, the last not a string, is left to the parse.
        if (labels[known ? this.interner.matched : this.interner.label(t, open, close, this.pending)] !== undefined) return null;
      } else return null;
      const end = this.objectNext();
      if (end === undefined) return null;
      if (end) return node;
    }
  }

  /** Whether the entry whose labels' numbers start at `from` already has the label name number `id`. */
  private idsHaveName(from: number, id: number): boolean {
    const a = this.ids.a;
    for (let i = from; i < this.ids.n; i += 2) if (a[i] === id) return true;
    return false;
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
      if (count === 0 && this.predictedNode > 0) {
        const close = this.interner.match(this.text, open, this.predictedNode);
        if (close >= 0) {
          this.pos = close + 1;
          count++;
          one = this.interner.matched;
          this.nodeId = this.predictedNode;
          const end = this.arrayNext();
          if (end === undefined) return null;
          if (end) return one;
          this.ws();
          continue;
        }
      }
      const close = this.stringClose();
      if (close < 0) return null;
      this.pos = close + 1;
      if (count++ === 0) {
        one = this.interner.label(this.text, open, close, this.pending);
        this.nodeId = this.interner.id;
        this.predictedNode = this.nodeId;
      }
      const end = this.arrayNext();
      if (end === undefined) return null;
      if (end) return count === 1 ? one : undefined;
      this.ws();
    }
  }

  /**
   * `values`: the points. A point `[t, v, …]` whose first two are usable numbers (a number, or a string in
   * Couchbase's decimal form, decimalOf; t in seconds) goes into the run; one that is not (too short, not finite, or a string, number or literal
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

  /** One point: its time into NUM[0], its value into NUM[1] (anything after them into NUM[2]), then into the run. */
  private point(): boolean {
    this.pos++;
    let count = 0;
    if (this.ws() === Ch.CloseSquare) {
      this.pos++;
      return true;
    }
    for (;;) {
      if (!this.scalar(count < 2 ? count : 2)) return false;
      count++;
      const end = this.arrayNext();
      if (end === undefined) return false;
      if (end) break;
      this.ws();
    }
    if (count < 2) return true;
    const t = NUM[0] as number;
    const v = NUM[1] as number;
    if (!Number.isFinite(t) || !Number.isFinite(v)) return true;
    // Written here rather than through PointRun.push: numbers passed to a call are number objects of their own.
    const run = this.run;
    if (run.n === run.t.length) run.grow();
    run.t[run.n] = t * 1000;
    run.v[run.n] = v;
    run.n++;
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

function isHex(c: number): boolean {
  return (c >= Ch.Zero && c <= Ch.Nine) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66);
}

/** What EntryList.release leaves in place of an entry's labels. */
const NO_LABELS: Record<string, string> = Object.freeze({}) as Record<string, string>;

/** Label positions whose previous name and value the reader tries first (QueryReader.predicted). */
const PREDICTED = 16;

/** keyEntries' table: the key of a series the memo does not know → its entry. */
const SEEN = new Map<string, number>();

