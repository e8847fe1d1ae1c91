/**
 * The index statistics of the `index` collector: their families, the legacy names they read, and the pure mapping
 * from the statistics sources' neutral values to the families. Kept apart from the state mapping (index-state.ts),
 * whose source is /indexStatus.
 *
 * What a series is: one index's share on one node. Couchbase keeps index statistics per node (the indexer's own
 * stats, read by the cluster manager of each index node): a partitioned index has one series per node that holds
 * some of its partitions, and a replica is an index of its own, named as the indexer names it (`idx (replica 1)`),
 * on its own node. So a level such as items, pending documents, sizes or memory adds up over `node` to the index's
 * total (`sum by (bucket, scope, collection, index)`), a rate adds up likewise, and a ratio (resident, fragmentation,
 * cache hits) or a mean (scan latency) is the node's own and never adds up. The cluster-wide `@index-<bucket>`
 * envelope sums the nodes (ns_server@7.6.2:src/menelaus_stats.erl `merge_all_samples_normally`), which would turn
 * a ratio into a sum: the per-node values are read instead (the per-node route before 7.0, the range API's per-node
 * series from 7.0).
 *
 * Names (ns_server@6.6.5:src/service_index.erl `get_gauges`, `get_counters`, `get_service_gauges`;
 * ns_server@7.6.2:src/stat_names_mappings.erl `get_gauges(index)`, `get_counters(index)`, `map_index_stats`): per
 * index the gauges items_count, num_docs_pending, num_docs_queued, frag_percent, recs_in_mem, recs_on_disk,
 * data_size, disk_size, memory_used, and the counters num_requests, num_rows_returned, total_scan_duration (ns),
 * cache_hits, cache_misses; per node index_memory_quota and index_memory_used. Before 7.0 a per-index stat is the key
 * `index/<index>/<stat>` of the section `@index-<bucket>` and a node stat the key of `@index`; from 7.0 the native
 * `index_<stat>{bucket, scope, collection, index}` and, per node, `index_memory_quota` and `index_memory_used_total`.
 *
 * Computed values, the same on both sources, from this poll's values (a counter is already a per-second rate over
 * the poll's window, so a ratio of two of them is the ratio of their increases over the window):
 * - scan latency: total_scan_duration ÷ num_rows_returned, ns → s (ns_server's `avg_scan_latency`,
 *   ns_server@7.6.2:src/menelaus_stats.erl computed_stats_lazy_proplist("@index-…")); absent when no row was returned;
 * - cache hit ratio: cache_hits ÷ (cache_hits + cache_misses); absent when the index was not read;
 * - resident ratio: recs_in_mem ÷ (recs_in_mem + recs_on_disk) (ns_server's `index_resident_percent`); absent with
 *   no record; where a source gives the indexer's resident_percent and not the records, that percent ÷ 100;
 * - fragmentation ratio: frag_percent ÷ 100;
 * - RAM ratio per node: index_memory_used ÷ index_memory_quota (not capped at 1, unlike the UI's percentage).
 */
import { defineFamily } from '../metrics/family.js';
import type { FamilyDef, SampleSet } from '../metrics/family.js';
import { byCodeUnit } from '../text-order.js';
import type { StatValues } from '../stats/values.js';

const C = 'index';
/** The labels of one index's share on one node. */
export const INDEX_NODE_SHARE = ['bucket', 'scope', 'collection', 'index', 'node'] as const;

const share = (name: string, help: string, unit: string): FamilyDef => defineFamily(C, name, 'gauge', `${help} One node's share of the index (see the collector's description).`, [...INDEX_NODE_SHARE], unit);
/** A ratio or mean of one node's part of the index: it does not add up over nodes. */
const onNode = (name: string, help: string, unit: string): FamilyDef => defineFamily(C, name, 'gauge', `${help} For the index's part on this node; does not add up over nodes (see the collector's description).`, [...INDEX_NODE_SHARE], unit);

export const INDEX_STAT_FAMILIES = {
  items: share('couchbase_index_items', 'Items (index entries) in the index (items_count).', 'count'),
  docsPending: share('couchbase_index_docs_pending', 'Documents whose mutations the indexer has not yet received (num_docs_pending).', 'count'),
  docsQueued: share('couchbase_index_docs_queued', 'Documents received and queued for indexing (num_docs_queued).', 'count'),
  resident: onNode('couchbase_index_resident_ratio', 'Share of the index records resident in memory, 0–1 (recs_in_mem ÷ all records); absent with no record.', 'ratio'),
  fragmentation: onNode('couchbase_index_fragmentation_ratio', 'Fragmentation of the index storage, 0–1 (frag_percent ÷ 100).', 'ratio'),
  dataSize: share('couchbase_index_data_size_bytes', 'Data size of the index (data_size).', 'bytes'),
  diskSize: share('couchbase_index_disk_size_bytes', 'Disk space used by the index (disk_size).', 'bytes'),
  memoryUsed: share('couchbase_index_memory_used_bytes', 'Memory used by the index (memory_used).', 'bytes'),
  scanLatency: onNode(
    'couchbase_index_scan_latency_seconds',
    'Mean scan time per row returned since the previous poll (total_scan_duration ÷ num_rows_returned, as ns_server computes avg_scan_latency); absent when no row was returned.',
    'seconds',
  ),
  requests: share('couchbase_index_requests_per_second', 'Scan requests served per second since the previous poll (num_requests).', 'per_second'),
  rowsReturned: share('couchbase_index_rows_returned_per_second', 'Rows returned by scans per second since the previous poll (num_rows_returned).', 'per_second'),
  cacheHit: onNode('couchbase_index_cache_hit_ratio', 'Share of index page reads served from memory since the previous poll, 0–1 (cache_hits ÷ (hits + misses)); absent when there was no read.', 'ratio'),
  nodeQuota: defineFamily(C, 'couchbase_index_node_memory_quota_bytes', 'gauge', 'Memory quota of the Index service on the node (index_memory_quota).', ['node'], 'bytes'),
  nodeUsed: defineFamily(C, 'couchbase_index_node_memory_used_bytes', 'gauge', 'Memory used by the Index service on the node (index_memory_used).', ['node'], 'bytes'),
  nodeRam: defineFamily(
    C,
    'couchbase_index_node_ram_ratio',
    'gauge',
    'Memory used by the Index service on the node over its quota (used ÷ quota; may pass 1, where Couchbase\'s UI caps its percentage at 100). Per node: never the sum over nodes.',
    ['node'],
    'ratio',
  ),
} as const satisfies Record<string, FamilyDef>;

const F = INDEX_STAT_FAMILIES;

/** The legacy stat names read per index (the key's last part before 7.0, `index_<stat>` from 7.0). */
export const INDEX_ITEM_STATS = [
  'items_count',
  'num_docs_pending',
  'num_docs_queued',
  'recs_in_mem',
  'recs_on_disk',
  'resident_percent',
  'frag_percent',
  'data_size',
  'disk_size',
  'memory_used',
  'num_requests',
  'num_rows_returned',
  'total_scan_duration',
  'cache_hits',
  'cache_misses',
] as const;
export type IndexItemStat = (typeof INDEX_ITEM_STATS)[number];

/** Counters among them: each is a per-second rate over the poll's window; the others are levels. */
export const INDEX_ITEM_COUNTERS: ReadonlySet<string> = new Set(['num_requests', 'num_rows_returned', 'total_scan_duration', 'cache_hits', 'cache_misses']);

/** The legacy node stats read from `@index` (and their natives: index_memory_quota, index_memory_used_total). */
export const INDEX_NODE_STATS = ['index_memory_quota', 'index_memory_used'] as const;

const ITEM_STAT_SET: ReadonlySet<string> = new Set(INDEX_ITEM_STATS);

/**
 * A key of a service section's samples that names one item's stat, `<prefix>/<item>/<stat>` (`index/<index>/<stat>`
 * in `@index-<bucket>`, `fts/<index>/<stat>` in `@fts-<bucket>`, `eventing/<function>/<stat>` in `@eventing`):
 * the item and the stat; undefined for any other key (`<prefix>/<stat>`, the section's total over its items, or
 * a stat of another kind). An item name cannot hold `/` in any of these services, but the stat is the last part
 * all the same. Pure.
 */
export function sectionItemKey(prefix: string, key: string): { item: string; stat: string } | undefined {
  if (!key.startsWith(`${prefix}/`)) return undefined;
  const last = key.lastIndexOf('/');
  if (last <= prefix.length) return undefined;
  const item = key.slice(prefix.length + 1, last);
  const stat = key.slice(last + 1);
  if (item === '' || stat === '') return undefined;
  return { item, stat };
}

/** One index's values on one node: the stats of INDEX_ITEM_STATS, in Couchbase's unit (rates per second). */
export interface IndexShare {
  readonly bucket: string;
  readonly scope: string;
  readonly collection: string;
  /** The index as the indexer names it: a replica is `<name> (replica <n>)`. */
  readonly index: string;
  readonly node: string;
  readonly values: StatValues;
}

/**
 * One node's `@index-<bucket>` section values (before 7.0, keys `index/<index>/<stat>`) as index shares. Pre-7.0
 * indexes have no scope or collection: they are `_default`.`_default`, where 7.0 puts them (as the state families
 * do). Keys of other stats, and stats not read, are left out. Pure.
 */
export function indexSharesFromSection(bucket: string, node: string, values: StatValues): IndexShare[] {
  const byIndex = new Map<string, StatValues>();
  for (const [key, v] of values) {
    const k = sectionItemKey('index', key);
    if (k === undefined || !ITEM_STAT_SET.has(k.stat)) continue;
    let s = byIndex.get(k.item);
    if (s === undefined) {
      s = new Map();
      byIndex.set(k.item, s);
    }
    s.set(k.stat, v);
  }
  return [...byIndex].map(([index, v]) => ({ bucket, scope: '_default', collection: '_default', index, node, values: v }));
}

/** num ÷ den, undefined unless both are numbers and den is above 0. */
export function ratioOf(num: number | undefined, den: number | undefined): number | undefined {
  if (num === undefined || den === undefined || !Number.isFinite(num) || !Number.isFinite(den) || den <= 0) return undefined;
  return num / den;
}

const sum = (a: number | undefined, b: number | undefined): number | undefined => (a === undefined || b === undefined ? undefined : a + b);
const times = (v: number | undefined, k: number): number | undefined => (v === undefined ? undefined : v * k);

/** The resident ratio of one share: from the records, else the indexer's percent (see the header). */
function residentOf(v: StatValues): number | undefined {
  const inMem = v.get('recs_in_mem');
  const onDisk = v.get('recs_on_disk');
  if (inMem !== undefined && onDisk !== undefined) return ratioOf(inMem, inMem + onDisk);
  return times(v.get('resident_percent'), 0.01);
}

/** Index shares and node values → the statistics families. Sorted by labels. Pure. */
export function mapIndexStats(shares: readonly IndexShare[], nodes: ReadonlyMap<string, StatValues>, out: SampleSet): void {
  const sorted = [...shares].sort(
    (a, b) => byCodeUnit(a.bucket, b.bucket) || byCodeUnit(a.scope, b.scope) || byCodeUnit(a.collection, b.collection) || byCodeUnit(a.index, b.index) || byCodeUnit(a.node, b.node),
  );
  for (const s of sorted) {
    const v = s.values;
    const labels = { bucket: s.bucket, scope: s.scope, collection: s.collection, index: s.index, node: s.node };
    out.add(F.items, labels, v.get('items_count'));
    out.add(F.docsPending, labels, v.get('num_docs_pending'));
    out.add(F.docsQueued, labels, v.get('num_docs_queued'));
    out.add(F.resident, labels, residentOf(v));
    out.add(F.fragmentation, labels, times(v.get('frag_percent'), 0.01));
    out.add(F.dataSize, labels, v.get('data_size'));
    out.add(F.diskSize, labels, v.get('disk_size'));
    out.add(F.memoryUsed, labels, v.get('memory_used'));
    out.add(F.scanLatency, labels, times(ratioOf(v.get('total_scan_duration'), v.get('num_rows_returned')), 1e-9));
    out.add(F.requests, labels, v.get('num_requests'));
    out.add(F.rowsReturned, labels, v.get('num_rows_returned'));
    const hits = v.get('cache_hits');
    out.add(F.cacheHit, labels, ratioOf(hits, sum(hits, v.get('cache_misses'))));
  }
  for (const node of [...nodes.keys()].sort(byCodeUnit)) {
    const v = nodes.get(node) as StatValues;
    const quota = v.get('index_memory_quota');
    const used = v.get('index_memory_used');
    out.add(F.nodeQuota, { node }, quota);
    out.add(F.nodeUsed, { node }, used);
    out.add(F.nodeRam, { node }, ratioOf(used, quota));
  }
}
