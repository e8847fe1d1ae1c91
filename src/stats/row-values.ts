/**
 * The values of the mapping table's rows (native-map.ts) from a poll's range groups (range-groups.ts), in the legacy
 * stats' units: per item (a bucket, a replication) on one node or over all its nodes, by each row's derivation, and
 * the newest point's time of an item.
 */
import type { NativeMapRow } from './native-map.js';
import { ALL_NODES, FLAGS, INC, LEVEL, MEAN, NO_INC, NO_MEAN, RATE, rowMetrics } from './range-groups.js';
import type { Cell, RangeItems } from './range-groups.js';

/** What rowValue adds up for one side of a row (its series, or its denominator). */
interface Sum {
  level: number;
  inc: number;
  rate: number;
  mean: number;
  /** Some series matched. */
  any: boolean;
  /** Every matched series has an increase. */
  allInc: boolean;
  /** Every matched series has points since the previous poll. */
  allMean: boolean;
}

function emptySum(): Sum {
  return { level: 0, inc: 0, rate: 0, mean: 0, any: false, allInc: true, allMean: true };
}

function reset(p: Sum): Sum {
  p.level = 0;
  p.inc = 0;
  p.rate = 0;
  p.mean = 0;
  p.any = false;
  p.allInc = true;
  p.allMean = true;
  return p;
}

/** rowValue's accumulators, reused: it runs for every row of every item and node of a poll (no call nests them). */
const NUM = emptySum();
const DEN = emptySum();

function addCell(p: Sum, g: RangeItems, cell: Cell | undefined, slots: readonly number[]): void {
  if (cell === undefined) return;
  const data = g.data;
  for (let i = 0; i < slots.length; i++) {
    const o = g.slots[cell.base + (slots[i] as number)] as number;
    if (o < 0) continue;
    p.any = true;
    p.level += data[o + LEVEL] as number;
    p.inc += data[o + INC] as number;
    p.rate += data[o + RATE] as number;
    p.mean += data[o + MEAN] as number;
    const f = data[o + FLAGS] as number;
    if (f & NO_INC) p.allInc = false;
    if (f & NO_MEAN) p.allMean = false;
  }
}

function fromSums(row: NativeMapRow, num: Sum, den: Sum): number | undefined {
  if (!num.any) return undefined;
  switch (row.derive) {
    case 'level':
      return num.level;
    case 'rate':
      return num.allInc ? num.rate : undefined;
    // No point since the previous poll: a stalled series, nothing new to tell (as the envelope's window rule).
    case 'mean':
      return num.allMean ? num.mean : undefined;
    // A zero divisor gives what menelaus_stats gives the envelope then: 0, or 100% resident for a residency.
    case 'increase_ratio':
      if (!num.allInc || !den.any || !den.allInc) return undefined;
      return den.inc > 0 ? num.inc / den.inc : 0;
    case 'level_ratio':
      if (!den.any) return undefined;
      return den.level > 0 ? num.level / den.level : 0;
    case 'complement_ratio':
      if (!den.any) return undefined;
      return den.level > 0 ? 1 - num.level / den.level : 1;
    case 'difference':
      return den.any ? num.level - den.level : undefined;
    // Per node first (docsValue).
    case 'docs_data_size':
    case 'fragmentation':
      return undefined;
  }
}

/**
 * Whether a row has no value here: a metric it reads failed as a whole ('*': the request, or an entry naming no
 * node), or, for one node's value, on that node. A node's error never blanks the bucket-wide value: that is the
 * merge over the nodes that answered, as ns_server's envelope merges its live nodes (menelaus_stats), and the gap
 * is named by the self-metrics (range.ts).
 */
function blocked(row: NativeMapRow, errored: RangeItems['errored'], node: string | undefined): boolean {
  for (const m of rowMetrics(row)) {
    const e = errored.get(m);
    if (e === undefined) continue;
    if (e.has('*') || (node !== undefined && e.has(node))) return true;
  }
  return false;
}

/** The value of a row for one item on one node (`node`), or over all its nodes (undefined), in the legacy stat's unit. */
export function rowValue(row: NativeMapRow, g: RangeItems, item: string, node: string | undefined): number | undefined {
  const parts = g.plan.parts.get(row);
  if (parts === undefined) throw new Error(`row ${row.legacy} is not in the table these groups were made for`);
  if (blocked(row, g.errored, node)) return undefined;
  const cells = row.section === 'kv' && !row.perBucket ? g.nodeWide : g.items.get(item);
  if (cells === undefined) return undefined;
  if (row.derive === 'docs_data_size' || row.derive === 'fragmentation') return docsValue(row, g, cells, node, parts.num);
  if (node === undefined && row.nodeAggregate === 'max') {
    // ns_server's max over the nodes (get_aggregate_method): each node's value, then the largest. A query asked
    // with `nodesAggregation: "max"` has one cell (ALL_NODES), already the max at each instant.
    let max: number | undefined;
    cells.forEach((_c, nd) => {
      const v = rowValue(row, g, item, nd);
      if (v !== undefined && (max === undefined || v > max)) max = v;
    });
    return max;
  }
  const num = reset(NUM);
  const den = reset(DEN);
  // forEach rather than for…of: no iterator result object per cell.
  if (node === undefined) {
    // A ratio's parts come from the same nodes: a node missing from one of its metrics is left out of both.
    const ratio = row.denominator !== undefined && g.errored.size > 0;
    cells.forEach((c, nd) => {
      if (ratio && nd !== ALL_NODES && blocked(row, g.errored, nd)) return;
      addCell(num, g, c, parts.num);
      addCell(den, g, c, parts.den);
    });
  } else {
    const c = cells.get(node);
    addCell(num, g, c, parts.num);
    addCell(den, g, c, parts.den);
  }
  const v = fromSums(row, num, den);
  return v === undefined ? undefined : v * row.legacyFactor;
}

/**
 * The newest point's time (epoch ms) of an item, on one node or over all, never later than the poll's clock (a point
 * up to the allowed skew ahead is kept, its time is not exported as it is); undefined when it has none.
 */
export function newestOf(g: RangeItems, item: string, node: string | undefined): number | undefined {
  const cells = g.items.get(item);
  if (cells === undefined) return undefined;
  let t = 0;
  for (const [n, c] of cells) if ((node === undefined || n === node) && c.newest > t) t = c.newest;
  return t > 0 ? Math.min(t, g.nowMs) : undefined;
}

/**
 * couch_docs_data_size with the small-file rule, and the fragmentations (native-map.ts, derives docs_data_size and
 * fragmentation): each node's newest levels in the row's series order (data, file, then vBuckets and history with
 * `minFileBytesPerVbucket`), the rule applied per node, then the nodes added up; a fragmentation is
 * round(100 × (disk − data) / disk) of the sums (menelaus_stats Fragmentation: a whole percent, 0 for no disk). A node
 * without both its data and file sizes adds nothing. Undefined when no node has them.
 */
function docsValue(row: NativeMapRow, g: RangeItems, cells: ReadonlyMap<string, Cell>, node: string | undefined, slots: readonly number[]): number | undefined {
  const level = (c: Cell, i: number): number | undefined => {
    const slot = slots[i];
    if (slot === undefined) return undefined;
    const o = g.slots[c.base + slot] as number;
    return o < 0 ? undefined : (g.data[o + LEVEL] as number);
  };
  const min = row.minFileBytesPerVbucket;
  let data = 0;
  let disk = 0;
  let any = false;
  cells.forEach((c, nd) => {
    if (nd === ALL_NODES || (node !== undefined && nd !== node)) return;
    const d = level(c, 0);
    const f = level(c, 1);
    if (d === undefined || f === undefined) return;
    const vb = min === undefined ? undefined : level(c, 2);
    any = true;
    data += vb !== undefined && min !== undefined && f < min * vb ? f : d;
    disk += f - (min === undefined ? 0 : (level(c, 3) ?? 0));
  });
  if (!any) return undefined;
  const v = row.derive === 'docs_data_size' ? data : disk > 0 ? Math.round(((disk - data) / disk) * 100) : 0;
  return v * row.legacyFactor;
}
