/**
 * A poll's answers grouped by item (bucket, replication) and node for the mapping rows (AnswerGrouping): each
 * request's body read query by query, each series valued against the counter memo as it is read and added into
 * the rows that read it (range-groups.ts); nothing per series outlives the read but its record in the memo.
 *
 * Values (per native series, i.e. per node and label set; range-values.ts):
 * - a level is the newest point;
 * - a rate is the increase of the counter from the newest point of the previous answer to the newest point of
 *   this one, over the time between them: consecutive polls' increases add up to the counter's whole increase, so
 *   no increment is lost or counted twice. A decrease between two points is a counter reset: the increase after it
 *   counts from 0. The first poll counts the points of its window. An answer with no point newer than the previous
 *   one gives no rate, and a step back starts afresh;
 * - ratios are computed from the summed parts (over nodes for the bucket-wide value), never by summing ratios.
 * A point later than the poll's clock by more than MAX_FUTURE_SKEW_MS (a node whose clock is ahead) is dropped and
 * counted against its node.
 */
import { z } from 'zod';
import { arrayElementBounds, Ch, elementEnd, lastDepth, MAX_JSON_DEPTH, nestingDepth, parseSlice, skipSpace } from './json-slices.js';
import { KV_BUCKET_LABEL, KV_NATIVE_MAP, XDCR_NATIVE_LABELS } from './native-map.js';
import type { NativeMapRow } from './native-map.js';
import { ALL_NODES, Grouping } from './range-groups.js';
import type { Layer, RangeItems } from './range-groups.js';
import { EntryList, IdList, idKey, Interner } from './range-interner.js';
import { RangeCaps } from './range-limits.js';
import { QueryReader } from './range-reader.js';
import { answerHead, treeEntries } from './range-tree.js';
import type { QueryResult } from './range-tree.js';
import { dropAfter, dropNegative, rawRun, REFUSED, seriesKey, seriesValue, takeRefused, valueInto, valueRun } from './range-values.js';
import { CounterMemo } from './counter-memo.js';

/**
 * Group the answers' series by item and node for the rows of `rows`, computing each series' value against the memo
 * (which is replaced by this answer's newest points: series no longer answered are forgotten). Pure but for `memo`.
 */
export function groupSeries(rows: readonly NativeMapRow[], results: readonly QueryResult[], itemOf: (labels: Readonly<Record<string, string>>) => string | undefined, memo: CounterMemo): RangeItems {
  const g = new Grouping(rows, itemOf, memo);
  for (const r of results) {
    const l = g.layer();
    l.errors(r.metric, r.erroredNodes);
    for (const s of r.series) {
      const key = seriesKey(s);
      const rec = memo.slotOf(key);
      const has = valueInto(seriesValue(s.points, l.previous(key, rec)));
      if (has !== 0) l.put(key, rec, s.metric, s.node, s.labels, has);
    }
    g.commit(l);
  }
  return g.done();
}

/** One query's answer as fetchRange has it: the raw answer, or a request that failed (every node errored). */
export type RawAnswer = { readonly metric: string; readonly raw: unknown; readonly summed: boolean } | { readonly metric: string; readonly failed: true };

/**
 * `groupSeries(rows, answers.map(parseQueryAnswer))` without the parsed series in between: each entry's value
 * comes straight from its raw `values` (rawRun), with no array per point nor object per series. Also returns each
 * answer's error texts (for the item errors). Pure but for `memo`; a test holds it equal to the two steps.
 */
export function groupAnswers(rows: readonly NativeMapRow[], answers: readonly RawAnswer[], itemOf: (labels: Readonly<Record<string, string>>) => string | undefined, memo: CounterMemo): { groups: RangeItems; errors: ReadonlyArray<{ metric: string; errors: string[] }> } {
  const g = new AnswerGrouping(rows, itemOf, memo);
  g.add(answers);
  return { groups: g.done(), errors: g.errorTexts };
}

/** One request's answers, read in full and ready to add (AnswerGrouping.readText, then commit). */
export class StagedRequest {
  constructor(readonly layer: Layer) {}
}

/** The schema of a request read by AnswerGrouping.readText: staged, or (not an array) what JSON.parse made of it. */
export const stagedRequestSchema = z.custom<StagedRequest>((v) => v instanceof StagedRequest, { error: 'expected an array' });

/**
 * groupAnswers answer by answer: fetchRange adds each request's answers as it has them, then asks for the groups.
 * A request is first staged (its series read, valued against the memo and added into a layer of its own, nothing
 * else changed), then committed.
 */
/**
 * The native metrics that cannot be below 0: every series the rows read (items, sizes, queue lengths, connections,
 * counts of operations and their times, and the parts of the ratios and means made of them), except those of a
 * difference row and of the families about clock drift, which can be negative (and any metric such a row shares).
 */
export function nonNegativeMetrics(rows: readonly NativeMapRow[]): Set<string> {
  const yes = new Set<string>();
  const no = new Set<string>();
  for (const r of rows) {
    const signed = r.derive === 'difference' || r.family.includes('drift');
    for (const s of [...r.series, ...(r.denominator ?? [])]) (signed ? no : yes).add(s.metric);
  }
  for (const m of no) yes.delete(m);
  return yes;
}

export class AnswerGrouping {
  private readonly g: Grouping;

  /** The metrics whose points below 0 are refused (nonNegativeMetrics). */
  private readonly nonNegative: ReadonlySet<string>;

  /**
   * The cluster's nodes the requests ask (their names as the answers give them), when known: a series of any other
   * node is dropped, its points counted (unknown_node), so that an answer cannot make a series per invented node.
   */
  members: ReadonlySet<string> | undefined;

  /** Whether a series of `node` is dropped for naming no member; its `points` counted when so. */
  private foreign(node: string, points: number): boolean {
    if (this.members === undefined || node === ALL_NODES || this.members.has(node)) return false;
    REFUSED.unknown_node += points;
    return true;
  }

  private readonly reader: QueryReader;

  /** The latest point time kept: a later point is dropped and counted against its node. */
  private readonly maxT: number;

  /**
   * `sizes`: where the length of each query's answer (characters of the text) is written as it is read, for the next
   * poll's balancedBatches. `clock`: the poll's clock (epoch ms, `nowMs`), no exported time later than it, and the
   * latest point time kept (`maxT`). Unbounded when not given.
   */
  constructor(
    rows: readonly NativeMapRow[],
    itemOf: (labels: Readonly<Record<string, string>>) => string | undefined,
    private readonly memo: CounterMemo,
    private readonly sizes?: Map<string, number>,
    clock: { readonly nowMs: number; readonly maxT: number } = { nowMs: Number.POSITIVE_INFINITY, maxT: Number.POSITIVE_INFINITY },
  ) {
    this.g = new Grouping(rows, itemOf, memo, clock.nowMs);
    this.reader = new QueryReader(internerOf(memo), this.caps, entryListOf(memo));
    this.maxT = clock.maxT;
    this.nonNegative = nonNegativeMetrics(rows);
  }

  /** What the bounds on the answers cut or refused in this grouping (cbwatch_collector_capped_total). */
  readonly caps = new RangeCaps();

  /** Each committed answer's error texts (for the item errors), in the order added. */
  get errorTexts(): ReadonlyArray<{ metric: string; errors: string[] }> {
    return this.g.errorTexts;
  }

  /** The nodes the committed answers' `errors` entries named, with the first reason. */
  get nodeErrors(): ReadonlyMap<string, string> {
    return this.g.nodeErrors;
  }

  add(answers: readonly RawAnswer[]): void {
    takeRefused();
    for (const a of answers) {
      const l = this.g.layer();
      if ('failed' in a) l.errors(a.metric, new Set(['*']));
      else this.stage(l, a.metric, a.raw, a.summed);
      for (const [why, n] of l.refused) this.caps.add(why, n);
      this.g.commit(l);
    }
    this.caps.takePoints();
  }

  /**
   * A request's body, the JSON array of its queries' answers (`names[i]`'s at index i), read query by query and
   * each answer staged before the next is read: first by the QueryReader straight from the text (readDirect); when
   * the text is not an array of answers as that reader sees it, each answer is parsed from its own slice of the text
   * (arrayElementBounds), so the parsed tree of one query, not of the whole request, is alive at a time and dies
   * young. Nothing is added to the groups here (commit does): a body that is not JSON throws SyntaxError with the
   * groups and memo untouched, as when the body was parsed whole. A text that is not an array comes back as
   * JSON.parse makes it, for the schema to refuse.
   */
  readText(text: string, names: readonly string[], summed: ReadonlySet<string>): StagedRequest | unknown {
    // Points refused as read are counted in caps.points; nothing counted elsewhere is taken for this poll's.
    takeRefused();
    try {
      const steps = this.readStaged(text, names, summed);
      for (;;) {
        const step = steps.next();
        if (step.done === true) return step.value;
      }
    } finally {
      this.caps.takePoints();
    }
  }

  /**
   * readText, giving the event loop a turn between two query answers once the read has run for `sliceMs` since it
   * started or last gave one: a scrape on the same thread waits for about a slice and one answer's read, not the
   * whole request's. The same result, counts and errors as readText. `signal`: once it has fired, the read stops at
   * its next turn and throws its reason. No other read may stage meanwhile (the client reads one answer at a time):
   * a layer finds the series it repeats by its records' consecutive marks (range-groups.ts).
   */
  async readTextSliced(text: string, names: readonly string[], summed: ReadonlySet<string>, opts: { readonly sliceMs?: number; readonly signal?: AbortSignal | undefined } = {}): Promise<StagedRequest | unknown> {
    const sliceMs = opts.sliceMs ?? READ_SLICE_MS;
    takeRefused();
    try {
      const steps = this.readStaged(text, names, summed);
      let since = performance.now();
      for (;;) {
        const step = steps.next();
        if (step.done === true) return step.value;
        if (performance.now() - since < sliceMs) continue;
        // What other code runs meanwhile may count or take refused points: this read's are taken before, and
        // whatever is left after is not this read's.
        this.caps.takePoints();
        await new Promise<void>((resolve) => setImmediate(resolve));
        takeRefused();
        opts.signal?.throwIfAborted();
        since = performance.now();
      }
    } finally {
      this.caps.takePoints();
    }
  }

  /** readText's steps: each yield falls between two query answers, where a read may give the event loop a turn. */
  private *readStaged(text: string, names: readonly string[], summed: ReadonlySet<string>): Generator<void, StagedRequest | unknown, void> {
    const read = yield* this.readDirect(text, names, summed);
    if (read !== undefined) return read;
    const bounds = arrayElementBounds(text);
    if (bounds !== undefined) {
      for (let i = 0; i < Math.min(names.length, bounds.length / 2); i++) this.sizes?.set(names[i] as string, (bounds[2 * i + 1] as number) - (bounds[2 * i] as number));
      return yield* this.stageAll(names, summed, bounds.length / 2, (i) => {
        const from = bounds[2 * i] as number;
        const to = bounds[2 * i + 1] as number;
        return nestingDepth(text, from, to) > MAX_JSON_DEPTH ? TOO_DEEP : parseSlice(text, from, to);
      });
    }
    // Not an array as the scan sees it: parsed whole, which decides (and throws when it is not JSON), unless it
    // nests deeper than any answer (then refused unparsed, as not JSON this reader takes).
    if (nestingDepth(text) > MAX_JSON_DEPTH) {
      this.caps.add('range_nesting');
      throw new SyntaxError(`Not a range answer: nested deeper than ${MAX_JSON_DEPTH} levels`);
    }
    const raw: unknown = JSON.parse(text);
    return Array.isArray(raw) ? yield* this.stageAll(names, summed, raw.length, (i) => raw[i]) : raw;
  }

  /**
   * readText's first way: each answer read by the QueryReader straight from the text, or, where the reader gives
   * up, sliced and parsed on its own (as the second way does). Undefined when the text is not an array of answers
   * as the reader sees it (the second way then reads it all again and decides); nothing is changed until commit.
   */
  private *readDirect(text: string, names: readonly string[], summed: ReadonlySet<string>): Generator<void, StagedRequest | undefined, void> {
    const l = this.g.layer();
    const r = this.reader;
    let p = skipSpace(text, 0);
    if (text.charCodeAt(p) !== Ch.OpenSquare) return undefined;
    p = skipSpace(text, p + 1);
    let i = 0;
    if (text.charCodeAt(p) !== Ch.CloseSquare) {
      for (;; i++) {
        const name = names[i];
        const sum = name !== undefined && summed.has(name);
        let end = r.read(text, p, sum, l.cellGate(), name === undefined ? undefined : { metric: name, memo: this.memo });
        if (end >= 0) {
          if (name !== undefined) this.stageRead(l, name);
        } else {
          end = elementEnd(text, p);
          if (end < 0) return undefined;
          if (lastDepth > MAX_JSON_DEPTH) {
            // Refused unparsed: a deep nesting costs an object per level once parsed (json-slices.ts MAX_JSON_DEPTH).
            if (name !== undefined) this.refuseDeep(l, name);
          } else {
            const raw = parseSlice(text, p, end);
            if (name !== undefined) this.stage(l, name, raw, sum);
          }
        }
        if (name !== undefined) this.sizes?.set(name, end - p);
        p = skipSpace(text, end);
        const c = text.charCodeAt(p);
        if (c === Ch.CloseSquare) break;
        if (c !== Ch.Comma) return undefined;
        p = skipSpace(text, p + 1);
        // Between two answers (lastDepth is read above, before any other read may run).
        yield;
      }
      i++;
    }
    if (skipSpace(text, p + 1) !== text.length) return undefined;
    // Queries the body has no answer for: as an answer that is not an object.
    for (; i < names.length; i++) this.stage(l, names[i] as string, undefined, summed.has(names[i] as string));
    return new StagedRequest(l);
  }

  /** A query's answer nested deeper than MAX_JSON_DEPTH: its metric failed on every node, counted. */
  private refuseDeep(l: Layer, metric: string): void {
    this.caps.add('range_nesting');
    l.errors(metric, new Set(['*']), [`cluster: the answer nests deeper than ${MAX_JSON_DEPTH} levels: refused`]);
  }

  /** The QueryReader's entries, valued against the memo series by series, into the layer. */
  private stageRead(l: Layer, metric: string): void {
    const r = this.reader;
    if (r.errors.nodes.size > 0) l.errors(metric, new Set(r.errors.nodes), [...r.errors.clusterTexts], [...r.errors.byNode]);
    // Refused by the reader as it read: too many cells (the layer's cellGate).
    if (r.cellRefused > 0) {
      l.refuse(metric, r.cellRefused);
      return;
    }
    const list = r.list;
    const n = list.n;
    for (let i = 0; i < n; i++) {
      const key = list.keys[i] as string;
      const rec = list.recs[i] as number;
      const node = list.nodes[i] as string;
      const from = list.from[i] as number;
      const end = list.to[i] as number;
      if (this.foreign(node, end - from)) continue;
      let to = dropAfter(r.run, from, end, this.maxT);
      if (to < end) l.dropFuture(node, end - to);
      if (this.nonNegative.has(metric)) to = dropNegative(r.run, from, to);
      const has = valueRun(r.run, from, to, l.previous(key, rec));
      if (has !== 0) l.put(key, rec, metric, node, list.labels[i] as Record<string, string>, has);
      // Refused (its cells, or one cell's series): the metric fails everywhere, its other series are not worth valuing (counted).
      if (l.isRefused(metric)) {
        l.refuseRest(metric, n - i - 1);
        break;
      }
    }
    if (n > 0) LABEL_SHAPES.set(metric, list.labels[n - 1] as Record<string, string>);
  }

  /** Add a request read by readText. */
  commit(request: StagedRequest): void {
    takeRefused();
    for (const [why, n] of request.layer.refused) this.caps.add(why, n);
    this.g.commit(request.layer);
    this.caps.takePoints();
  }

  /** Every element is read (an element past the names is still parsed: a body that is not JSON fails whole). */
  private *stageAll(names: readonly string[], summed: ReadonlySet<string>, count: number, element: (i: number) => unknown): Generator<void, StagedRequest, void> {
    const l = this.g.layer();
    for (let i = 0; i < Math.max(count, names.length); i++) {
      if (i > 0) yield;
      const raw = i < count ? element(i) : undefined;
      const name = names[i];
      if (name === undefined) continue;
      if (raw === TOO_DEEP) this.refuseDeep(l, name);
      else this.stage(l, name, raw, summed.has(name));
    }
    return new StagedRequest(l);
  }

  /** One query's answer, valued against the memo series by series, into the layer. */
  private stage(l: Layer, metric: string, raw: unknown, summed: boolean): void {
    const head = answerHead(raw, this.caps);
    const entries = treeEntries(head, summed, this.caps);
    l.errors(metric, head.erroredNodes, head.clusterErrors, head.byNode);
    for (const e of entries) {
      const key = this.treeKey(metric, e.node, e.labels);
      const rec = this.memo.slotOf(key);
      const run = rawRun(e.values);
      if (this.foreign(e.node, run.n)) continue;
      let to = dropAfter(run, 0, run.n, this.maxT);
      if (to < run.n) l.dropFuture(e.node, run.n - to);
      if (this.nonNegative.has(metric)) to = dropNegative(run, 0, to);
      const has = valueRun(run, 0, to, l.previous(key, rec));
      if (has !== 0) l.put(key, rec, metric, e.node, e.labels, has);
      if (l.isRefused(metric)) {
        l.refuseRest(metric, entries.length - entries.indexOf(e) - 1);
        break;
      }
    }
  }

  /** A parsed entry's key in the memo: as the reader keys the same series (idKey), else by its strings. */
  private treeKey(metric: string, node: string, labels: Readonly<Record<string, string>>): string {
    const interner = this.reader.interner;
    const ids = TREE_IDS;
    ids.n = 0;
    for (const k in labels) {
      ids.push(interner.idOf(k));
      ids.push(interner.idOf(labels[k] as string));
    }
    return idKey(interner.idOf(node), interner.idOf(metric), ids.a, 0, ids.n) ?? seriesKey({ metric, node, labels });
  }

  done(): RangeItems {
    takeRefused();
    const groups = this.g.done();
    this.caps.takePoints();
    // The memo has forgotten the series this poll did not see: the strings only they used go too.
    this.reader.interner.sweep();
    this.reader.list.release();
    return groups;
  }
}

/** How long a sliced read (readTextSliced) runs before it gives the event loop a turn, in ms. */
export const READ_SLICE_MS = 4;

/** A query's answer refused unparsed for its nesting (stageAll's marker). */
const TOO_DEEP: unknown = Symbol('too deep');

/**
 * The interner of a memo: its keys are made of the interner's numbers, so the two go together, from poll to poll,
 * whoever reads the answers.
 */
const interners = new WeakMap<CounterMemo, Interner>();

/** The entry list of a memo's readers (one reads at a time: an answer is read and staged in one go). */
const entryLists = new WeakMap<CounterMemo, EntryList>();

/** A memo's companion in `table`, made on first use. */
function companionOf<T extends object>(table: WeakMap<CounterMemo, T>, memo: CounterMemo, make: () => T): T {
  let x = table.get(memo);
  if (x === undefined) {
    x = make();
    table.set(memo, x);
  }
  return x;
}

const entryListOf = (memo: CounterMemo): EntryList => companionOf(entryLists, memo, () => new EntryList());

const internerOf = (memo: CounterMemo): Interner => companionOf(interners, memo, () => new Interner());

/**
 * A grouping that has read one small answer, and its staged request, kept for the life of the process from the
 * first poll on (the shape witness). Between two polls no other grouping, reader or layer is alive, and V8's full
 * collections drop the object shapes (maps) of their classes, and with them every optimized function whose code
 * embeds one (`--trace-deopt`: "weak objects"); each poll would then have V8's compiler threads optimize the reader
 * and the grouping again. Objects of each shape, alive, keep the shapes and the optimized code. A grouping only made
 * is not enough: the witness goes through a read, a commit and done(), as a poll's groupings do. The label sets of
 * the series are shapes too: LABEL_SHAPES keeps one per metric. bench/RESULTS.md has what it saves.
 */
let shapeWitness: unknown;

/** Per metric, the labels of its last series read: the shapes of label sets, kept as keepShapes keeps the classes'. */
const LABEL_SHAPES = new Map<string, object>();

const WITNESS_ANSWER =
  '[{"data":[{"metric":{"nodes":["n:8091"],"name":"kv_ops","bucket":"b","op":"get"},"values":[[1,"1"],[2,"2.5"]]}],"errors":[],"startTimestamp":1,"endTimestamp":2}]';

/** Whether keepShapes has made its witness (a test's question). */
export function shapesKept(): boolean {
  return shapeWitness !== undefined;
}

/** Made at the first poll (fetchRange), then the same object; test/stats/shape-witness.test.ts shows what it keeps. */
export function keepShapes(): unknown {
  if (shapeWitness === undefined) {
    const g = new AnswerGrouping(KV_NATIVE_MAP, kvItemOf, new CounterMemo());
    // A constant answer the reader reads (the test's witness would find the reader's code dropped otherwise).
    const staged = g.readText(WITNESS_ANSWER, ['kv_ops'], new Set()) as StagedRequest;
    g.commit(staged);
    shapeWitness = { g, staged, groups: g.done() };
  }
  return shapeWitness;
}

/** treeKey's list of label numbers. */
const TREE_IDS = new IdList();

/** The bucket a kv series belongs to; undefined for a per-node series. */
export function kvItemOf(labels: Readonly<Record<string, string>>): string | undefined {
  return labels[KV_BUCKET_LABEL];
}

/** `<remote uuid>/<source bucket>/<target bucket>`: the replication id of the tasks list. */
export function xdcrItemOf(labels: Readonly<Record<string, string>>): string | undefined {
  const u = labels[XDCR_NATIVE_LABELS.targetClusterUuid];
  const sb = labels[XDCR_NATIVE_LABELS.sourceBucket];
  const tb = labels[XDCR_NATIVE_LABELS.targetBucket];
  if (u === undefined || sb === undefined || tb === undefined) return undefined;
  // The same few hundred ids for every series of every poll: made once rather than a string per series, at most
  // XDCR_ITEMS_KEPT of them.
  let bySource = XDCR_ITEMS.get(u);
  if (bySource === undefined) XDCR_ITEMS.set(u, (bySource = new Map()));
  let byTarget = bySource.get(sb);
  if (byTarget === undefined) bySource.set(sb, (byTarget = new Map()));
  let id = byTarget.get(tb);
  if (id === undefined) {
    id = `${u}/${sb}/${tb}`;
    if (++xdcrItemsKept > XDCR_ITEMS_KEPT) {
      XDCR_ITEMS.clear();
      xdcrItemsKept = 0;
    } else byTarget.set(tb, id);
  }
  return id;
}

/** xdcrItemOf's ids: remote uuid → source bucket → target bucket → id. Emptied past XDCR_ITEMS_KEPT ids. */
const XDCR_ITEMS = new Map<string, Map<string, Map<string, string>>>();

const XDCR_ITEMS_KEPT = 10_000;

let xdcrItemsKept = 0;
