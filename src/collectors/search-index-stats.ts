/**
 * The statistics of the `search_index` collector: its families, the legacy names they read, and the pure mapping
 * from the statistics sources' neutral values to the families.
 *
 * What a series is: one Search (FTS) index's share on one node. The Search service keeps its statistics per node
 * (each node reports the index partitions, pindexes, it holds): levels (documents, pending mutations, disk) and rates
 * add up over `node` to the index's total; the mean query latency is the node's own.
 *
 * Names (ns_server@6.6.5:src/service_fts.erl `get_gauges`, `get_counters`; ns_server@7.6.2:src/stat_names_mappings.erl
 * `get_gauges(fts)`, `get_counters(fts)`, `get_service_gauges(fts)`): per index the gauges doc_count,
 * num_mutations_to_index, num_bytes_used_disk and the counters total_queries, total_queries_error and
 * total_request_time (ns); per node fts_num_bytes_used_ram. Before 7.0 a per-index stat is the key
 * `fts/<index>/<stat>` of the section `@fts-<bucket>` and the node stat a key of `@fts`; from 7.0 the native
 * `fts_<stat>{bucket, scope, collection, index}` (summed over scope and collection for one index) and
 * `fts_num_bytes_used_ram`.
 *
 * The mean query latency is total_request_time ÷ total_queries over the poll's window, ns → s (ns_server's
 * `avg_queries_latency`, in ms there: ns_server@7.6.2:src/menelaus_stats.erl computed_stats_lazy_proplist("@fts-…")),
 * absent when there was no query.
 */
import { defineFamily } from '../metrics/family.js';
import type { FamilyDef, SampleSet } from '../metrics/family.js';
import { byCodeUnit } from '../text-order.js';
import type { StatValues } from '../stats/values.js';
import { ratioOf, sectionItemKey } from './index-stats.js';

const C = 'search_index';
const SHARE = ['bucket', 'index', 'node'] as const;

const share = (name: string, help: string, unit: string): FamilyDef => defineFamily(C, name, 'gauge', `${help} One node's share of the Search index.`, [...SHARE], unit);
/** A mean over one node's part of the Search index: it does not add up over nodes. */
const onNode = (name: string, help: string, unit: string): FamilyDef => defineFamily(C, name, 'gauge', `${help} For the index's partitions on this node; does not add up over nodes.`, [...SHARE], unit);

export const SEARCH_INDEX_FAMILIES = {
  docs: share('couchbase_search_index_docs', 'Documents in the Search index (doc_count).', 'count'),
  pending: share('couchbase_search_index_pending_mutations', 'Mutations not yet indexed (num_mutations_to_index).', 'count'),
  queries: share('couchbase_search_index_queries_per_second', 'Queries per second since the previous poll (total_queries).', 'per_second'),
  queryErrors: share('couchbase_search_index_query_errors_per_second', 'Queries that failed, per second since the previous poll (total_queries_error).', 'per_second'),
  latency: onNode('couchbase_search_index_query_latency_seconds', 'Mean query time since the previous poll (total_request_time ÷ total_queries); absent when there was no query.', 'seconds'),
  diskSize: share('couchbase_search_index_disk_size_bytes', 'Disk space used by the Search index (num_bytes_used_disk).', 'bytes'),
  nodeMemory: defineFamily(C, 'couchbase_search_node_memory_bytes', 'gauge', 'Memory used by the Search service on the node (fts_num_bytes_used_ram).', ['node'], 'bytes'),
} as const satisfies Record<string, FamilyDef>;

const F = SEARCH_INDEX_FAMILIES;

/** The legacy stat names read per Search index (the key's last part before 7.0, `fts_<stat>` from 7.0). */
export const SEARCH_INDEX_STATS = ['doc_count', 'num_mutations_to_index', 'num_bytes_used_disk', 'total_queries', 'total_queries_error', 'total_request_time'] as const;
/** Counters among them (per-second rates over the poll's window); the others are levels. */
export const SEARCH_INDEX_COUNTERS: ReadonlySet<string> = new Set(['total_queries', 'total_queries_error', 'total_request_time']);
/** The node stat, in `@fts` and native alike. */
export const SEARCH_NODE_STATS = ['fts_num_bytes_used_ram'] as const;

const STAT_SET: ReadonlySet<string> = new Set(SEARCH_INDEX_STATS);

/** One Search index's values on one node. */
export interface SearchIndexShare {
  readonly bucket: string;
  readonly index: string;
  readonly node: string;
  readonly values: StatValues;
}

/** One node's `@fts-<bucket>` section values (keys `fts/<index>/<stat>`) as index shares. Pure. */
export function searchSharesFromSection(bucket: string, node: string, values: StatValues): SearchIndexShare[] {
  const byIndex = new Map<string, StatValues>();
  for (const [key, v] of values) {
    const k = sectionItemKey('fts', key);
    if (k === undefined || !STAT_SET.has(k.stat)) continue;
    let s = byIndex.get(k.item);
    if (s === undefined) {
      s = new Map();
      byIndex.set(k.item, s);
    }
    s.set(k.stat, v);
  }
  return [...byIndex].map(([index, v]) => ({ bucket, index, node, values: v }));
}

/** Search index shares and node values → the families. Sorted by labels. Pure. */
export function mapSearchIndexStats(shares: readonly SearchIndexShare[], nodes: ReadonlyMap<string, StatValues>, out: SampleSet): void {
  const sorted = [...shares].sort((a, b) => byCodeUnit(a.bucket, b.bucket) || byCodeUnit(a.index, b.index) || byCodeUnit(a.node, b.node));
  for (const s of sorted) {
    const v = s.values;
    const labels = { bucket: s.bucket, index: s.index, node: s.node };
    out.add(F.docs, labels, v.get('doc_count'));
    out.add(F.pending, labels, v.get('num_mutations_to_index'));
    out.add(F.queries, labels, v.get('total_queries'));
    out.add(F.queryErrors, labels, v.get('total_queries_error'));
    const latency = ratioOf(v.get('total_request_time'), v.get('total_queries'));
    out.add(F.latency, labels, latency === undefined ? undefined : latency * 1e-9);
    out.add(F.diskSize, labels, v.get('num_bytes_used_disk'));
  }
  for (const node of [...nodes.keys()].sort(byCodeUnit)) out.add(F.nodeMemory, { node }, nodes.get(node)?.get('fts_num_bytes_used_ram'));
}
