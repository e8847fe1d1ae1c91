/**
 * The range source's groups: what a poll's native series add up to, per item (a bucket, a replication) and node,
 * for each row of the mapping table (native-map.ts); row-values.ts reads the rows' values from them.
 *
 * Each series is valued as it is read (range-values.ts) and added at once into the parts of every row that reads
 * it (a level, an increase, a rate, a window mean, and whether some series lacked one of them): nothing is kept per
 * series but its record in the counter memo: kept until the poll's end, each series' labels and value would
 * outlive V8's young-generation collections, which a poll of many buckets pays for. The parts live in one Float64Array
 * per grouping; each cell (item and node) has its stretch of one Int32Array, from row part to offset (-1: no series
 * yet): a few arrays per poll, not one per cell.
 *
 * A request's answers are staged first (a Layer: its own parts, memo updates and errors) and committed only once
 * the whole request has been read, so a body that turns out not to be JSON halfway through changes nothing.
 */
import type { NativeMapRow, NativeSeries } from './native-map.js';
import { NO_RECORD } from './counter-memo.js';
import { doubled } from './grow.js';
import type { CounterMemo, MemoSlot } from './counter-memo.js';
import { HAS_INC, HAS_MEAN, RUN_VALUE, V_INC, V_MEAN, V_SECS, V_T, V_V } from './range-values.js';
import { MAX_GAP_NODES } from '../metrics/family.js';
import { boundedText } from '../errors.js';

/** Add `n` to a node's count in a map of at most MAX_GAP_NODES nodes (node names come from upstream). */
function countNode(m: Map<string, number>, node: string, n: number): void {
  if (m.has(node) || m.size < MAX_GAP_NODES) m.set(node, (m.get(node) ?? 0) + n);
}

/** The pseudo-node of a series summed over the nodes (`nodesAggregation: "sum"`). */
export const ALL_NODES = '\u0000all';

/** A row part: one `series` (or `denominator`) entry of a row, which the series of its metric meeting its matchers add into. */
interface Target {
  readonly slot: number;
  /** The matchers as a list (made once, with the plan, rather than looked up per series and target). */
  readonly matchers: ReadonlyArray<readonly [string, string | readonly string[]]>;
  readonly notMatchers?: NativeSeries['notMatchers'];
  /** The nodes whose series it reads (its row's `nodes`); undefined: every node's. */
  readonly nodes?: ReadonlySet<string>;
}

/** How a table's rows read the series: per metric, the row parts it feeds; per row, its parts. Built once per table. */
export interface Plan {
  readonly byMetric: ReadonlyMap<string, readonly Target[]>;
  readonly parts: ReadonlyMap<NativeMapRow, { readonly num: readonly number[]; readonly den: readonly number[] }>;
  /** Row parts in all. */
  readonly width: number;
}

const plans = new WeakMap<readonly NativeMapRow[], Plan>();

/** The plan of a table of rows (made once per table). */
export function planOf(rows: readonly NativeMapRow[]): Plan {
  let plan = plans.get(rows);
  if (plan !== undefined) return plan;
  const byMetric = new Map<string, Target[]>();
  const parts = new Map<NativeMapRow, { num: number[]; den: number[] }>();
  let width = 0;
  const add = (list: readonly NativeSeries[], into: number[], nodes: ReadonlySet<string> | undefined) => {
    for (const x of list) {
      const slot = width++;
      into.push(slot);
      (byMetric.get(x.metric) ?? byMetric.set(x.metric, []).get(x.metric) as Target[]).push({
        slot,
        matchers: Object.entries(x.matchers),
        ...(x.notMatchers ? { notMatchers: x.notMatchers } : {}),
        ...(nodes ? { nodes } : {}),
      });
    }
  };
  for (const r of rows) {
    const p = { num: [] as number[], den: [] as number[] };
    add(r.series, p.num, r.nodes);
    add(r.denominator ?? [], p.den, r.nodes);
    parts.set(r, p);
  }
  plan = { byMetric, parts, width };
  plans.set(rows, plan);
  return plan;
}

/** A row part's numbers in the store: the sums of its series' newest values, increases, rates and means, and flags. */
export const LEVEL = 0;
export const INC = 1;
export const RATE = 2;
export const MEAN = 3;
export const FLAGS = 4;
const FIELDS = 5;
/** Flags: some series of the part had no increase (or no time span for it); some had no point since the previous poll. */
export const NO_INC = 1;
export const NO_MEAN = 2;

/** Per item and node: where its row parts' offsets are in the slot table (`base`), and its newest point's time. */
export interface Cell {
  readonly base: number;
  newest: number;
  /** Series of one metric put in this cell (MAX_SERIES_PER_CELL), counted while `counting` is that metric's turn (Layer.put). */
  series: number;
  counting: number;
}

/** The parts of one grouping (or of one staged request): cells by item and node, and the store of their numbers. */
class Parts {
  readonly items = new Map<string, Map<string, Cell>>();
  /** Series without the item label (kv rows with perBucket false): node → cell. */
  readonly nodeWide = new Map<string, Cell>();
  data = new Float64Array(FIELDS * 256);
  used = 0;
  /** Per cell, `width` entries from `base`: a row part's offset in `data`, -1 when it has none. */
  slots: Int32Array;
  private cells = 0;

  constructor(readonly width: number) {
    this.slots = new Int32Array(width * 16).fill(-1);
  }

  /** Cells made so far. */
  get cellCount(): number {
    return this.cells;
  }

  /** Whether the cell of `item` on `node` exists. */
  has(item: string | undefined, node: string): boolean {
    return (item === undefined ? this.nodeWide : this.items.get(item))?.has(node) === true;
  }

  cell(item: string | undefined, node: string): Cell {
    let byNode: Map<string, Cell>;
    if (item === undefined) byNode = this.nodeWide;
    else {
      let m = this.items.get(item);
      if (m === undefined) {
        m = new Map();
        this.items.set(item, m);
      }
      byNode = m;
    }
    let cell = byNode.get(node);
    if (cell === undefined) {
      const base = this.cells++ * this.width;
      if (base + this.width > this.slots.length) {
        const bigger = new Int32Array(this.slots.length * 2).fill(-1);
        bigger.set(this.slots);
        this.slots = bigger;
      }
      cell = { base, newest: 0, series: 0, counting: 0 };
      byNode.set(node, cell);
    }
    return cell;
  }

  /** The offset of a cell's part, made (zeroed) when it has none yet. */
  offset(cell: Cell, slot: number): number {
    let o = this.slots[cell.base + slot] as number;
    if (o >= 0) return o;
    o = this.used;
    this.used += FIELDS;
    if (this.used > this.data.length) {
      const bigger = new Float64Array(this.data.length * 2);
      bigger.set(this.data);
      this.data = bigger;
    }
    this.slots[cell.base + slot] = o;
    return o;
  }

  /** Add one series' value (RUN_VALUE, with what `has` of it is set: range-values.ts valueRun) to a cell's part. */
  add(cell: Cell, slot: number, has: number): void {
    const o = this.offset(cell, slot);
    const d = this.data;
    const r = RUN_VALUE;
    d[o + LEVEL] = (d[o + LEVEL] as number) + (r[V_V] as number);
    let flags = d[o + FLAGS] as number;
    if ((has & HAS_MEAN) === 0) flags |= NO_MEAN;
    else d[o + MEAN] = (d[o + MEAN] as number) + (r[V_MEAN] as number);
    if ((has & HAS_INC) === 0) flags |= NO_INC;
    else {
      d[o + INC] = (d[o + INC] as number) + (r[V_INC] as number);
      d[o + RATE] = (d[o + RATE] as number) + (r[V_INC] as number) / (r[V_SECS] as number);
    }
    d[o + FLAGS] = flags;
  }

  /** Add another Parts (a committed request) into these. */
  merge(from: Parts): void {
    const one = (fromCells: Map<string, Cell>, item: string | undefined) => {
      fromCells.forEach((src, node) => {
        const dst = this.cell(item, node);
        if (src.newest > dst.newest) dst.newest = src.newest;
        for (let slot = 0; slot < this.width; slot++) {
          const s = from.slots[src.base + slot] as number;
          if (s < 0) continue;
          const o = this.offset(dst, slot);
          const d = this.data;
          const f = from.data;
          for (let k = 0; k < FLAGS; k++) d[o + k] = (d[o + k] as number) + (f[s + k] as number);
          d[o + FLAGS] = (d[o + FLAGS] as number) | (f[s + FLAGS] as number);
        }
      });
    };
    from.items.forEach((cells, item) => one(cells, item));
    one(from.nodeWide, undefined);
  }
}

/**
 * Cells (an item on a node) one request's answers may make: 2,500 buckets (or replications) on 9 nodes and their
 * sum. Past it, a series that would make another is refused with its metric (Layer.put). docs/security.md.
 */
export const MAX_CELLS_PER_REQUEST = 25_000;

/**
 * Series of one metric one cell (an item on a node) may take from one request's answers. A metric's series in a
 * cell differ by the labels the item does not name: kv_ops's op and result, a DCP connection type, a replication's
 * pipeline; a real answer has a few dozen at most (a per-collection metric at Couchbase's 1,000 collections would
 * fit too). Past it the metric fails on every node for this poll (Layer.put), counted as range_cell_series: without
 * it, series that differ only by a label no row reads would be summed into one item's value and keep one memo record
 * each for the life of the memo. docs/security.md.
 */
export const MAX_SERIES_PER_CELL = 1_024;

/** Why a layer refused a metric, as cbwatch_collector_capped_total's `what` counts its series. */
export type RefusedWhy = 'range_cells' | 'range_cell_series';

/**
 * Memo records staged so far, counted across layers: a record is marked with its count when staged, so a layer
 * finds where it staged a series an answer repeats at once (a layer stages synchronously: its marks are
 * consecutive; a layer whose marks wrap around at 2^30 finds its repeats in the memo's record instead, as
 * without them). A scan of the layer's records instead was quadratic in an answer that repeats its series.
 */
let staged = 0;
/** previous()'s answer, reused: its caller values the series with it before the next call. */
const PREVIOUS = { t: 0, v: 0 };
/** Groupings made so far: each has its own number, so a poll cut short leaves nothing to reset. */
let groupings = 0;
/** Turns of counting a metric's series per cell (Layer.put), across layers: a cell's count belongs to one turn. */
let countings = 0;

/**
 * One request's answers, read but not yet added to the grouping: their parts, the memo updates they make, their
 * errors. Made by Grouping.layer(), added by Grouping.commit().
 */
export class Layer {
  /** The mark of this layer's first staged record. */
  private first = -1;
  readonly parts: Parts;
  /** Known series: their records and newest points (time, value pairs in `points`), in the order read. */
  readonly recs: MemoSlot[] = [];
  private points: Float64Array = new Float64Array(64);
  /** Series not in the memo: key → its place in `freshPoints` (time, value pairs), in the order read. */
  readonly fresh = new Map<string, number>();
  private freshPoints: Float64Array = new Float64Array(64);
  readonly errored: Array<[string, Set<string>]> = [];
  readonly errorTexts: Array<{ metric: string; errors: string[] }> = [];
  readonly nodes = new Set<string>();
  /** Nodes an `errors` entry names, with its reason (the first one). */
  readonly nodeErrors = new Map<string, string>();
  /** Points dropped per node for a time too far in the future. */
  readonly future = new Map<string, number>();

  constructor(
    private readonly plan: Plan,
    private readonly memo: CounterMemo,
    private readonly itemOf: (labels: Readonly<Record<string, string>>) => string | undefined,
  ) {
    this.parts = new Parts(plan.width);
  }

  /**
   * A metric's errors: the nodes whose answer is missing ('*': all), the texts of the entries that name no node
   * (the metric's own item errors), and the entries that name a node (one item error per node and poll).
   */
  errors(metric: string, nodes: Set<string>, texts: string[] = [], byNode: ReadonlyArray<readonly [string, string]> = []): void {
    if (nodes.size > 0) this.errored.push([metric, nodes]);
    if (texts.length > 0) this.errorTexts.push({ metric, errors: texts });
    for (const [node, why] of byNode) if (!this.nodeErrors.has(node) && this.nodeErrors.size < MAX_GAP_NODES) this.nodeErrors.set(node, why);
  }

  /** `n` points of a series of `node` dropped: their time is too far in the future. */
  dropFuture(node: string, n: number): void {
    // The node's name reaches a log line, the landing page and a label: redacted and bounded as upstream text.
    countNode(this.future, node === ALL_NODES ? 'aggregate' : boundedText(node, 200), n);
  }

  /**
   * The previous newest point to value a series against: what this layer already read of it when the answer
   * repeats it, else the memo's. `rec`: the series' memo record, when it has one.
   */
  previous(key: string, rec: MemoSlot): { t: number; v: number } | undefined {
    if (rec === NO_RECORD) {
      const j = this.fresh.get(key);
      if (j === undefined) return undefined;
      PREVIOUS.t = this.freshPoints[2 * j] as number;
      PREVIOUS.v = this.freshPoints[2 * j + 1] as number;
      return PREVIOUS;
    }
    const i = this.memo.stagedOf(rec) - this.first;
    // Staged here only when the mark falls within this layer's and names this record.
    if (this.first < 0 || i < 0 || i >= this.recs.length || this.recs[i] !== rec) return this.memo.pointInto(rec, PREVIOUS);
    PREVIOUS.t = this.points[2 * i] as number;
    PREVIOUS.v = this.points[2 * i + 1] as number;
    return PREVIOUS;
  }

  /** The time (`k` 0) or value (1) of the i-th known series' newest point. */
  pointOf(i: number, k: 0 | 1): number {
    return this.points[2 * i + k] as number;
  }

  /** The time (`k` 0) or value (1) of the newest point of the fresh series at place `j`. */
  freshPointOf(j: number, k: 0 | 1): number {
    return this.freshPoints[2 * j + k] as number;
  }

  /** Series refused, by why: making a cell past MAX_CELLS_PER_REQUEST, or a cell's series past MAX_SERIES_PER_CELL. */
  readonly refused = new Map<RefusedWhy, number>();
  /** The metrics refused in this layer, with why. */
  private refusedMetrics: Map<string, RefusedWhy> | undefined;
  /** The metric whose series put() counts per cell (an answer's series are put one metric after the other), and its turn. */
  private countedMetric = '';
  private counting = 0;

  /** Whether `metric` was refused in this layer (past MAX_CELLS_PER_REQUEST): the rest of its series need no reading. */
  isRefused(metric: string): boolean {
    return this.refusedMetrics?.has(metric) === true;
  }

  /**
   * The cells one query's series may still make in this layer, counted series by series by the range reader as it
   * reads (QueryReader's CellGate): a query whose series would pass MAX_CELLS_PER_REQUEST is refused before any of
   * them is put (no cell, no memo record), and before the entries of the rest are built: refused only at the cap,
   * an answer of fresh items would stage a full request's cells and memo records first, and the memo would keep
   * them. put() refuses as well, for answers the reader leaves to the parse.
   */
  cellGate(): { readonly room: number; fits(labels: Readonly<Record<string, string>>, node: string): boolean } {
    const room = MAX_CELLS_PER_REQUEST - this.parts.cellCount;
    const fresh = new Map<string, Set<string | undefined>>();
    let n = 0;
    return {
      room,
      fits: (labels, node) => {
        const item = this.itemOf(labels);
        if (this.parts.has(item, node)) return true;
        let items = fresh.get(node);
        if (items === undefined) fresh.set(node, (items = new Set()));
        if (items.has(item)) return true;
        items.add(item);
        return ++n <= room;
      },
    };
  }

  /**
   * `metric` refused (`count` of its series counted under `why`: range_cells for its cells, range_cell_series for
   * a cell's series), failed on every node for this poll.
   */
  refuse(metric: string, count: number, why: RefusedWhy = 'range_cells'): void {
    const before = this.refusedMetrics?.get(metric);
    this.refused.set(before ?? why, (this.refused.get(before ?? why) ?? 0) + count);
    if (before !== undefined) return;
    (this.refusedMetrics ??= new Map()).set(metric, why);
    const text =
      why === 'range_cells'
        ? `the answer names more than ${MAX_CELLS_PER_REQUEST.toLocaleString('en')} items and nodes in one request`
        : `the answer names more than ${MAX_SERIES_PER_CELL.toLocaleString('en')} series of it for one item on one node`;
    this.errors(metric, new Set(['*']), [`cluster: ${text}: ${metric} refused`]);
  }

  /** `count` more series of a refused metric, not read: counted under the metric's reason. */
  refuseRest(metric: string, count: number): void {
    if (count > 0) this.refuse(metric, count);
  }

  /**
   * One series, valued (its value in RUN_VALUE, `has` saying what is set: range-values.ts valueRun): its memo
   * update, and its value added to the row parts that read it.
   */
  put(key: string, rec: MemoSlot, metric: string, node: string, labels: Readonly<Record<string, string>>, has: number): void {
    const item = this.itemOf(labels);
    if (this.parts.cellCount >= MAX_CELLS_PER_REQUEST && !this.parts.has(item, node)) {
      // Each cell costs a slot per row part: an answer of fresh buckets without a bound would cost memory without
      // one. Past the cap the metric fails on every node for this poll, rather
      // than sum over part of its series; its memo records are not made either (the direct reader's cellGate
      // refuses a whole answer before any of it is put; this is the parsed answers' way).
      this.refuse(metric, 1);
      return;
    }
    const cell = this.parts.cell(item, node);
    if (metric !== this.countedMetric) {
      this.countedMetric = metric;
      // Small integers (V8 keeps them in the cell itself); a turn number reused after 2^30 turns is a count long reset.
      this.counting = countings = (countings + 1) & 0x3fffffff;
    }
    if (cell.counting !== this.counting) {
      cell.counting = this.counting;
      cell.series = 0;
    }
    if (cell.series >= MAX_SERIES_PER_CELL) {
      // Before its memo record is made: the series past the bound keep nothing.
      this.refuse(metric, 1, 'range_cell_series');
      return;
    }
    cell.series++;
    const t = RUN_VALUE[V_T] as number;
    const v = RUN_VALUE[V_V] as number;
    if (rec !== NO_RECORD) {
      // At most 2^30 (and never 0, the mark of a record never staged): a daemon stages 2^30 records in weeks.
      staged = (staged & 0x3fffffff) + 1;
      this.memo.setStaged(rec, staged);
      if (this.first < 0) this.first = staged;
      const i = this.recs.length;
      this.recs.push(rec);
      if (2 * i + 2 > this.points.length) this.points = doubled(this.points);
      this.points[2 * i] = t;
      this.points[2 * i + 1] = v;
    } else {
      // A repeat of a fresh series (an answer that gives it twice) keeps its place: its newest point is replaced.
      let j = this.fresh.get(key);
      if (j === undefined) {
        j = this.fresh.size;
        this.fresh.set(key, j);
        if (2 * j + 2 > this.freshPoints.length) this.freshPoints = doubled(this.freshPoints);
      }
      this.freshPoints[2 * j] = t;
      this.freshPoints[2 * j + 1] = v;
    }
    if (node !== ALL_NODES) this.nodes.add(node);
    if (t > cell.newest) cell.newest = t;
    const targets = this.plan.byMetric.get(metric);
    if (targets === undefined) return;
    for (let i = 0; i < targets.length; i++) {
      const x = targets[i] as Target;
      if ((x.nodes === undefined || x.nodes.has(node)) && matches(labels, x.matchers) && noneOf(labels, x.notMatchers)) this.parts.add(cell, x.slot, has);
    }
  }
}

function matches(labels: Readonly<Record<string, string>>, list: Target['matchers']): boolean {
  for (let i = 0; i < list.length; i++) {
    const [k, want] = list[i] as readonly [string, string | readonly string[]];
    const have = labels[k];
    if (have === undefined) return false;
    if (typeof want === 'string' ? have !== want : !want.includes(have)) return false;
  }
  return true;
}

/** ns_server's `not_any`: the label is absent or none of the values (ep_dcp_other_*). */
function noneOf(labels: Readonly<Record<string, string>>, not: NativeSeries['notMatchers']): boolean {
  if (not === undefined) return true;
  for (const k in not) {
    const have = labels[k];
    if (have !== undefined && (not[k] as readonly string[]).includes(have)) return false;
  }
  return true;
}

/** A poll's groups, as rowValue and newestOf read them. */
export interface RangeItems {
  /** item → node → cell */
  readonly items: ReadonlyMap<string, ReadonlyMap<string, Cell>>;
  /** Series without the item label (kv rows with perBucket false): node → cell. */
  readonly nodeWide: ReadonlyMap<string, Cell>;
  /** The cells' numbers, and where each cell's row parts are in them. */
  readonly data: Float64Array;
  readonly slots: Int32Array;
  readonly plan: Plan;
  /** metric → nodes whose answer is missing ('*': all). */
  readonly errored: ReadonlyMap<string, Set<string>>;
  /** Every node seen (in a series of its own). */
  readonly nodes: ReadonlySet<string>;
  /** Nodes an `errors` entry named, with the first reason. */
  readonly nodeErrors: ReadonlyMap<string, string>;
  /** Points dropped per node for a time too far in the future. */
  readonly future: ReadonlyMap<string, number>;
  /** The poll's clock (epoch ms): no time exported is later (newestOf). */
  readonly nowMs: number;
}

/** Builds a poll's RangeItems request by request (layers), and the memo with them. */
export class Grouping {
  private parts: Parts;
  private readonly errored = new Map<string, Set<string>>();
  private readonly nodes = new Set<string>();
  /** Each committed answer's error texts (for the item errors), in the order committed. */
  readonly errorTexts: Array<{ metric: string; errors: string[] }> = [];
  /** Nodes an `errors` entry of a committed answer named, with the first reason. */
  readonly nodeErrors = new Map<string, string>();
  readonly future = new Map<string, number>();
  private readonly gen = ++groupings;
  private readonly plan: Plan;

  constructor(
    rows: readonly NativeMapRow[],
    private readonly itemOf: (labels: Readonly<Record<string, string>>) => string | undefined,
    private readonly memo: CounterMemo,
    private readonly nowMs = Number.POSITIVE_INFINITY,
  ) {
    this.plan = planOf(rows);
    this.parts = new Parts(this.plan.width);
  }

  layer(): Layer {
    return new Layer(this.plan, this.memo, this.itemOf);
  }

  commit(l: Layer): void {
    for (const [metric, nodes] of l.errored) this.errored.set(metric, nodes);
    for (const e of l.errorTexts) this.errorTexts.push(e);
    for (const n of l.nodes) this.nodes.add(n);
    for (const [n, why] of l.nodeErrors) if (!this.nodeErrors.has(n) && this.nodeErrors.size < MAX_GAP_NODES) this.nodeErrors.set(n, why);
    for (const [n, k] of l.future) countNode(this.future, n, k);
    for (let i = 0; i < l.recs.length; i++) this.memo.set(l.recs[i] as MemoSlot, l.pointOf(i, 0), l.pointOf(i, 1), this.gen);
    for (const [key, j] of l.fresh) this.memo.add(key, l.freshPointOf(j, 0), l.freshPointOf(j, 1), this.gen);
    // The first request's parts are taken as they are; a later one's are added in.
    if (this.parts.used === 0) this.parts = l.parts;
    else this.parts.merge(l.parts);
  }

  /** The groups; the memo forgets the series this grouping's answers no longer have. */
  done(): RangeItems {
    this.memo.forgetUnseen(this.gen);
    return { items: this.parts.items, nodeWide: this.parts.nodeWide, data: this.parts.data, slots: this.parts.slots, plan: this.plan, errored: this.errored, nodes: this.nodes, nodeErrors: this.nodeErrors, future: this.future, nowMs: this.nowMs };
  }
}

const rowMetricLists = new WeakMap<NativeMapRow, readonly string[]>();

/** The native metrics a row reads (its series' and its denominator's). */
export function rowMetrics(row: NativeMapRow): readonly string[] {
  let list = rowMetricLists.get(row);
  if (list === undefined) {
    list = [...row.series, ...(row.denominator ?? [])].map((x) => x.metric);
    rowMetricLists.set(row, list);
  }
  return list;
}
