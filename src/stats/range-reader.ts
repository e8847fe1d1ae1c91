/**
 * One query's answer of the range API read straight from the request's text, without JSON.parse's tree: each
 * `data` entry's labels and node, and its points into a PointRun (no array per point, no string per value).
 *
 * The answer to one query is `{"data":[{"metric":{…labels, "nodes":[…]},"values":[[t,"v"],…]},…],"errors":[…],
 * "startTimestamp":…,"endTimestamp":…}`. The reader takes only that shape, and only JSON it fully checks
 * (json-cursor.ts): strings without escapes or control characters (an `errors` entry's text may hold escapes),
 * numbers in JSON's grammar, literals, and the structure around them. Anything else (an escape in a label, an
 * object where a label value was expected, a key given twice …) and it gives up (returns -1) before anything is
 * used, and the caller parses that answer with JSON.parse, which decides (range-tree.ts). So, for every text it
 * reads, it gives what JSON.parse followed by the tree's walk gives; a property test holds the two equal.
 *
 * Label names and values come from a table of strings already seen (range-interner.ts): a label value is the same
 * few hundred strings poll after poll, and a string sliced from the text would keep the whole text alive as long as
 * the string lives (V8 slices rather than copies), in the metric store for one. The entries of an answer go to a
 * list of reused arrays (EntryList), keyed in the counter memo by their strings' numbers (idKey).
 */
import { JsonCursor, NUM, SPAN } from './json-cursor.js';
import { Ch } from './json-slices.js';
import { ALL_NODES } from './range-groups.js';
import { EntryList, IdList, idKey, Interner, NO_LABELS } from './range-interner.js';
import type { ReadEntry } from './range-interner.js';
import { AnswerErrors, keptLabel, ownString, RANGE_LIMITS, RangeCaps, tooManySeriesText } from './range-limits.js';
import { PointRun, REFUSED, refuseText, seriesKey } from './range-values.js';
import { NO_RECORD } from './counter-memo.js';
import type { CounterMemo } from './counter-memo.js';

export { AnswerErrors, errorText, keptLabel, RANGE_LIMITS, RangeCaps, tooManySeriesText } from './range-limits.js';
export type { RangeCapWhat } from './range-limits.js';
export { EntryList, IdList, idKey, Interner } from './range-interner.js';
export type { ReadEntry } from './range-interner.js';
export { answerHead, parseQueryAnswer, treeEntries } from './range-tree.js';
export type { AnswerHead, QueryResult, RangeSeries, TreeEntry } from './range-tree.js';

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
export class QueryReader extends JsonCursor {
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
   * Consecutive series of an answer differ in a label or two, so most labels need no hash.
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

  /**
   * `caps`: where what the bounds cut or refused is counted (the grouping's, for the poll's self-metrics). `list`:
   * where the entries of the answer being read go, in order; a list kept from poll to poll (range-grouping.ts keeps
   * one per memo) keeps its arrays' room instead of growing them again each poll.
   */
  constructor(
    readonly interner: Interner,
    readonly caps: RangeCaps = new RangeCaps(),
    readonly list: EntryList = new EntryList(),
  ) {
    super();
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
    // The points this read refuses are counted again by the parse when the reader gives up.
    const refused = { ...REFUSED };
    if (!this.answer(summed)) {
      Object.assign(REFUSED, refused);
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
   * (valueRun then sorts them and keeps one point per time), rather than added twice. Counted as
   * range_duplicate_series. A repeat of a series the memo knows is found by the place its record keeps (seenAt: the
   * list holds the record there only if this answer has it there); of one it does not know, by a table of this
   * answer's fresh keys only, so the common case (a known series) allocates no table entry.
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
      const rec = memo === undefined ? NO_RECORD : memo.slotOf(key);
      let first: number | undefined;
      if (rec !== NO_RECORD) {
        // Its place in this answer's list so far, if the place holds it; else a place in an earlier answer.
        const at = (memo as CounterMemo).seenAtOf(rec);
        if (at >= 0 && at < out && l.recs[at] === rec) first = at;
        else (memo as CounterMemo).setSeenAt(rec, out);
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
        const why = this.escapedString(RANGE_LIMITS.errorChars);
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
          why = this.escapedString(RANGE_LIMITS.errorChars);
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
   * Couchbase's decimal form, decimalOf; t in seconds) goes into the run; one that is not (too short, not finite, or
   * a string, number or literal instead of a list) is skipped, as range-values.ts readPoint skips it. A list of
   * anything else makes the reader give up.
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
    if (count < 2) {
      REFUSED.not_a_number++;
      return true;
    }
    const t = NUM[0] as number;
    const v = NUM[1] as number;
    if (!Number.isFinite(t) || !Number.isFinite(v)) {
      const at = Number.isFinite(t) ? 1 : 0;
      refuseText(this.text, SPAN[2 * at] as number, SPAN[2 * at + 1] as number);
      return true;
    }
    // Written here rather than through PointRun.push: numbers passed to a call are number objects of their own.
    const run = this.run;
    if (run.n === run.t.length) run.grow();
    run.t[run.n] = t * 1000;
    run.v[run.n] = v;
    run.n++;
    return true;
  }
}

/** Label positions whose previous name and value the reader tries first (QueryReader.predicted). */
const PREDICTED = 16;

/** keyEntries' table: the key of a series the memo does not know → its entry. */
const SEEN = new Map<string, number>();
