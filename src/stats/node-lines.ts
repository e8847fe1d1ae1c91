/**
 * Each node asked by its own version: the native names and formulas differ by server line
 * (native-map.ts nativeMapFor), and a cluster mid-upgrade runs several lines at once. The range source groups the
 * nodes by line (groupByLine, from the bucket list's nodes and their `version`), and
 * - one line (every cluster but one being upgraded): that line's table, asked as before — the same number of
 *   requests as one table;
 * - several lines: every line's table asked in one batch (the union of their native names: as many requests as
 *   one table, a few more at most), each line's rows reading only its own nodes' series (scopedTable: a row's
 *   `nodes`), and the bucket-wide values merged here as ns_server merges nodes: summed (max where
 *   get_aggregate_method says so), ratios after the merge. A per-node value is that node's line's.
 *
 * A ratio ns_server computes (menelaus_stats computed_stats_lazy_proplist: hit_ratio, ep_cache_miss_rate, the
 * residencies, the avg_* times) is computed once, by the node that serves the request, with its own version's
 * formula over the parts summed over every node: mid-upgrade across 7.6.8, ep_cache_miss_rate is get_misses / cmd_get
 * of the whole cluster when a 7.6.8 node serves, ep_bg_fetched / cmd_lookup of the whole cluster when an older one
 * does, never the sum of both formulas' parts. The serving node is the bucket list's `thisNode` (servingLineOf); each
 * line's grouping also reads the parts of the serving line's formulas (withRatioParts). A fragmentation keeps each
 * line's own parts: the small-file rule is applied per node, by that node's line.
 *
 * In the mixed case an increase ratio is the ratio of the lines' summed per-second rates rather than of their
 * increases: the lines' windows are read in the same poll, a second or so apart, so the two agree within that window
 * difference.
 */
import { fetchBucketList } from '../couchbase/buckets.js';
import type { ClusterSource } from '../couchbase/source.js';
import { DEFAULT_LINE, nativeMapFor, SERVER_LINES, serverLineOf } from './native-map.js';
import type { NativeMapRow, NativeSeries, NativeTable, ServerLine } from './native-map.js';
import { rowValue } from './row-values.js';
import type { RangeItems } from './range-groups.js';

/** The nodes of each line present, in line order; one entry for a single-version cluster. */
export type NodeLines = ReadonlyArray<{ readonly line: ServerLine; readonly nodes: readonly string[] }>;

/**
 * How long a cluster's node lines are reused: as long as the active node list the range queries name
 * (range.ts STATS_NODES_MAX_AGE_MS), so the two, made from the same bucket list, never disagree on membership for
 * long; an upgraded or failed-over node shows in both within it. Grouping is a pass over a list already read.
 */
export const NODE_LINES_MAX_AGE_MS = 15_000;

/**
 * The bucket list's nodes grouped by the line of their `version` (deduplicated by hostname; a node of no known line
 * goes with the oldest line present, or the default line when none is known; a node whose membership is other than
 * `active` is left out when active ones are known, as it serves no bucket data). Pure.
 */
export function groupByLine(nodes: readonly unknown[]): NodeLines {
  const byHost = new Map<string, ServerLine | undefined>();
  const inactive = new Set<string>();
  for (const n of nodes) {
    if (n === null || typeof n !== 'object') continue;
    const { hostname, version, clusterMembership } = n as { hostname?: unknown; version?: unknown; clusterMembership?: unknown };
    if (typeof hostname !== 'string' || hostname === '') continue;
    if (typeof clusterMembership === 'string' && clusterMembership !== 'active') inactive.add(hostname);
    if (!byHost.has(hostname) || byHost.get(hostname) === undefined) byHost.set(hostname, typeof version === 'string' ? serverLineOf(version) : undefined);
  }
  if ([...byHost.keys()].some((h) => !inactive.has(h))) for (const h of inactive) byHost.delete(h);
  const known = [...byHost.values()].filter((l): l is ServerLine => l !== undefined);
  const fallback = known.length > 0 ? SERVER_LINES.find((l) => known.includes(l)) as ServerLine : DEFAULT_LINE;
  const out = new Map<ServerLine, string[]>();
  for (const [host, line] of byHost) (out.get(line ?? fallback) ?? out.set(line ?? fallback, []).get(line ?? fallback) as string[]).push(host);
  if (out.size === 0) return [{ line: DEFAULT_LINE, nodes: [] }];
  return SERVER_LINES.filter((l) => out.has(l)).map((line) => ({ line, nodes: (out.get(line) as string[]).sort() }));
}

/**
 * The line of the node that serves cbwatch's requests: the bucket list's node marked `thisNode` (its version's line);
 * undefined when no node is marked or its version has no line. Pure.
 */
export function servingLineOf(nodes: readonly unknown[]): ServerLine | undefined {
  for (const n of nodes) {
    if (n === null || typeof n !== 'object') continue;
    const { thisNode, version } = n as { thisNode?: unknown; version?: unknown };
    if (thisNode === true && typeof version === 'string') return serverLineOf(version);
  }
  return undefined;
}

/** The serving node's line (servingLineOf), shared like the node lines; undefined when the bucket list does not say. */
export async function servingLine(ctx: ClusterSource): Promise<ServerLine | undefined> {
  return ctx.shared.get('statsServingLine', NODE_LINES_MAX_AGE_MS, async () => {
    const list = await fetchBucketList(ctx);
    return servingLineOf(list.buckets.flatMap((b) => (b.nodes ?? []) as unknown[]));
  });
}

/** A cluster's node lines (shared by both collectors; the bucket list is the one bucket_stats reads anyway). */
export async function nodeLinesOf(ctx: ClusterSource): Promise<NodeLines> {
  return ctx.shared.get('statsNodeLines', NODE_LINES_MAX_AGE_MS, async () => {
    const list = await fetchBucketList(ctx);
    return groupByLine(list.buckets.flatMap((b) => (b.nodes ?? []) as unknown[]));
  });
}

// ---- merging the lines' bucket-wide values ----

const RATIOS = new Set<NativeMapRow['derive']>(['increase_ratio', 'level_ratio', 'complement_ratio', 'fragmentation']);
/** The ratios ns_server computes once, with the serving node's formula (the header). */
const COMPUTED_RATIOS = new Set<NativeMapRow['derive']>(['increase_ratio', 'level_ratio', 'complement_ratio']);

/** A ratio row's two sides as rows of their own (summed over the nodes like any level or rate), made once per row. */
interface Parts {
  readonly num: NativeMapRow;
  readonly den: NativeMapRow;
}
const partsOf = new WeakMap<NativeMapRow, Parts>();

function side(row: NativeMapRow, name: string, derive: NativeMapRow['derive'], series: readonly NativeSeries[], extra: { denominator?: readonly NativeSeries[]; minFileBytesPerVbucket?: number } = {}): NativeMapRow {
  const { denominator: _d, minFileBytesPerVbucket: _m, ...rest } = row;
  return Object.freeze({ ...rest, legacy: `${row.legacy}\u0000${name}`, family: `${row.family}\u0000${name}`, derive, series, scale: 1, legacyFactor: 1, ...extra });
}

/** The part rows of a ratio row; undefined for any other. */
export function ratioParts(row: NativeMapRow): Parts | undefined {
  if (!RATIOS.has(row.derive)) return undefined;
  let p = partsOf.get(row);
  if (p !== undefined) return p;
  const den = row.denominator ?? [];
  if (row.derive === 'fragmentation') {
    // data, file, [vBuckets, history]: data by the small-file rule when the row has it; disk = file − history.
    const [data, file, vbs, hist] = row.series as [NativeSeries, NativeSeries, NativeSeries?, NativeSeries?];
    const num = row.minFileBytesPerVbucket !== undefined && vbs !== undefined ? side(row, 'data', 'docs_data_size', [data, file, vbs], { minFileBytesPerVbucket: row.minFileBytesPerVbucket }) : side(row, 'data', 'level', [data]);
    const disk = hist !== undefined ? side(row, 'disk', 'difference', [file], { denominator: [hist] }) : side(row, 'disk', 'level', [file]);
    p = { num, den: disk };
  } else {
    const kind = row.derive === 'increase_ratio' ? 'rate' : 'level';
    p = { num: side(row, 'num', kind, row.series), den: side(row, 'den', kind, den) };
  }
  partsOf.set(row, p);
  return p;
}

/**
 * A line's rows, its ratio rows' parts and (`serving`: the serving line's rows) the parts of the serving line's
 * computed ratios: the table a line's grouping is made for in the mixed case. Made once per pair of tables.
 */
const mixedRows = new WeakMap<readonly NativeMapRow[], Map<readonly NativeMapRow[] | undefined, readonly NativeMapRow[]>>();
export function withRatioParts(rows: readonly NativeMapRow[], serving?: readonly NativeMapRow[]): readonly NativeMapRow[] {
  let byServing = mixedRows.get(rows);
  if (byServing === undefined) mixedRows.set(rows, (byServing = new Map()));
  let out = byServing.get(serving);
  if (out === undefined) {
    const parts = (r: NativeMapRow): NativeMapRow[] => {
      const p = ratioParts(r);
      return p === undefined ? [] : [p.num, p.den];
    };
    const more = (serving ?? []).filter((r) => COMPUTED_RATIOS.has(r.derive) && !rows.includes(r));
    out = Object.freeze([...rows, ...rows.flatMap(parts), ...more.flatMap(parts)]);
    byServing.set(serving, out);
  }
  return out;
}

/** One line's answer: its table and its groups. */
export interface LineGroups {
  readonly table: NativeTable;
  readonly groups: RangeItems;
  readonly nodes: readonly string[];
}

/** A ratio from its summed sides, as fromSums gives it (0 for a zero divisor; 1 for a residency; fragmentation rounded). */
function ratioOf(row: NativeMapRow, num: number, den: number): number {
  switch (row.derive) {
    case 'complement_ratio':
      return den > 0 ? 1 - num / den : 1;
    case 'fragmentation':
      return den > 0 ? Math.round(((den - num) / den) * 100) : 0;
    default:
      return den > 0 ? num / den : 0;
  }
}

/**
 * The value of a legacy stat for one item over several lines' groups (or on one node: that node's line's value), in
 * the legacy unit; undefined when no line has it. Lines whose table has no row for the stat add nothing. `serving`:
 * the serving node's table, whose formula a computed ratio takes over every line's parts (the lines' groupings made
 * withRatioParts of it); without it, each line's own formula's parts are summed.
 */
export function mergedValue(section: 'kv' | 'xdcr', legacy: string, lines: readonly LineGroups[], item: string, node: string | undefined, serving?: NativeTable): number | undefined {
  if (node !== undefined) {
    const l = lines.find((x) => x.nodes.includes(node)) ?? (lines.length === 1 ? lines[0] : undefined);
    const row = l && (section === 'kv' ? l.table.kvByLegacy : l.table.xdcrByLegacy).get(legacy);
    return l && row ? rowValue(row, l.groups, item, node) : undefined;
  }
  if (lines.length === 1) {
    const l = lines[0] as LineGroups;
    const row = (section === 'kv' ? l.table.kvByLegacy : l.table.xdcrByLegacy).get(legacy);
    return row ? rowValue(row, l.groups, item, undefined) : undefined;
  }
  let acc: number | undefined;
  let num = 0;
  let den = 0;
  let ratioRow: NativeMapRow | undefined;
  const servingRow = serving && (section === 'kv' ? serving.kvByLegacy : serving.xdcrByLegacy).get(legacy);
  const once = servingRow !== undefined && COMPUTED_RATIOS.has(servingRow.derive) ? servingRow : undefined;
  // The serving formula's parts read every node: a grouping the lines share is read once.
  const read = new Set<RangeItems>();
  for (const l of lines) {
    const own = (section === 'kv' ? l.table.kvByLegacy : l.table.xdcrByLegacy).get(legacy);
    if (once !== undefined && own !== undefined) {
      if (read.has(l.groups)) continue;
      read.add(l.groups);
    }
    const row = once !== undefined && own !== undefined ? once : own;
    if (row === undefined) continue;
    const p = ratioParts(row);
    if (p !== undefined) {
      const n = rowValue(p.num, l.groups, item, undefined);
      const d = rowValue(p.den, l.groups, item, undefined);
      if (n === undefined || d === undefined) continue;
      ratioRow = row;
      num += n;
      den += d;
      acc = 0;
      continue;
    }
    const v = rowValue(row, l.groups, item, undefined);
    if (v === undefined) continue;
    acc = acc === undefined ? v : row.nodeAggregate === 'max' ? Math.max(acc, v) : acc + v;
  }
  if (ratioRow !== undefined) return ratioOf(ratioRow, num, den) * ratioRow.legacyFactor;
  return acc;
}

/** Scoped tables made so far, by line and nodes (a cluster's membership changes rarely: a few at most). */
const scopedTables = new Map<string, NativeTable>();
const SCOPED_KEPT = 32;

/**
 * A line's table whose rows read only `nodes`' series (a row's `nodes`): every line of a cluster mid-upgrade is then
 * asked in one batch and grouped once, each line's rows adding up their own nodes' series. The same table for the
 * same line and nodes (the range groups' plans are kept per table).
 */
export function scopedTable(line: ServerLine, nodes: readonly string[]): NativeTable {
  const key = `${line}\u0000${[...nodes].sort().join('\u0000')}`;
  let t = scopedTables.get(key);
  if (t !== undefined) return t;
  const base = nativeMapFor(line);
  const set: ReadonlySet<string> = new Set(nodes);
  const scope = (rows: readonly NativeMapRow[]): readonly NativeMapRow[] => Object.freeze(rows.map((r) => Object.freeze({ ...r, nodes: set })));
  const kv = scope(base.kv);
  const xdcr = scope(base.xdcr);
  t = Object.freeze({ line, kv, xdcr, all: Object.freeze([...kv, ...xdcr]), kvByLegacy: new Map(kv.map((r) => [r.legacy, r])), xdcrByLegacy: new Map(xdcr.map((r) => [r.legacy, r])) });
  if (scopedTables.size >= SCOPED_KEPT) scopedTables.clear();
  scopedTables.set(key, t);
  return t;
}

/** Union rows made so far (scopedRows), by their lines' rows and the serving rows. */
const unions = new Map<string, { readonly parts: ReadonlyArray<readonly NativeMapRow[]>; readonly rows: readonly NativeMapRow[] }>();

/**
 * The rows one grouping of a cluster mid-upgrade is made for: each line's scoped rows with their ratio parts, and the
 * parts of the serving line's computed ratios over every node (`serving`: rows of an unscoped table). The same
 * array for the same inputs (plans are kept per array).
 */
export function scopedRows(lines: ReadonlyArray<readonly NativeMapRow[]>, serving: readonly NativeMapRow[]): readonly NativeMapRow[] {
  const parts = [...lines, serving];
  const key = parts.map((p) => `${p[0]?.legacy ?? ''}:${p.length}`).join('|');
  const hit = unions.get(key);
  if (hit !== undefined && hit.parts.length === parts.length && hit.parts.every((p, i) => p === parts[i])) return hit.rows;
  const rows = Object.freeze([...new Set(lines.flatMap((l) => withRatioParts(l, serving)))]);
  if (unions.size >= SCOPED_KEPT) unions.clear();
  unions.set(key, { parts, rows });
  return rows;
}

/** The line tables of a cluster's node lines (for callers that only need the rows). */
export function tablesOf(lines: NodeLines): NativeTable[] {
  return lines.map((l) => nativeMapFor(l.line));
}
