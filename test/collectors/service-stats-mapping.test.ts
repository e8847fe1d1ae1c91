/**
 * The pure parts of the index, Search and eventing statistics: the legacy section keys and the mapping from neutral
 * values to families. Expected values are written by hand from ns_server's definitions:
 * - ns_server@6.6.5:src/service_index.erl `get_gauges`/`get_counters`/`get_service_gauges` and
 *   ns_server@7.6.2:src/menelaus_stats.erl computed_stats_lazy_proplist("@index-…"): avg_scan_latency =
 *   total_scan_duration / num_rows_returned (ns per row); index_resident_percent = recs_in_mem × 100 /
 *   (recs_in_mem + recs_on_disk); cache_miss_ratio = misses × 100 / (hits + misses);
 * - ns_server@6.6.5:src/service_index.erl compute_index_ram_usage_stats: index_ram_percent = used / quota × 100;
 * - ns_server@7.6.2:src/menelaus_stats.erl computed_stats_lazy_proplist("@fts-…"): avg_queries_latency =
 *   total_request_time × 1e-6 / total_queries (ms);
 * - ns_server@6.6.5:src/service_eventing.erl get_service_gauges: dcp_backlog and the success/failure counts are
 *   running totals kept as gauges (`eventing/<function>/<stat>`).
 */
import { describe, expect, it } from 'vitest';
import { functionsFromSection, mapEventingStats } from '../../src/collectors/eventing-stats.js';
import { indexSharesFromSection, mapIndexStats, sectionItemKey } from '../../src/collectors/index-stats.js';
import { mapSearchIndexStats, searchSharesFromSection } from '../../src/collectors/search-index-stats.js';
import { SampleSet } from '../../src/metrics/family.js';
import type { StatValues } from '../../src/stats/values.js';

const values = (o: Record<string, number | undefined>): StatValues => new Map(Object.entries(o));

describe('section keys', () => {
  it('splits <prefix>/<item>/<stat> and leaves out the section totals and other keys', () => {
    expect(sectionItemKey('index', 'index/def_type/items_count')).toEqual({ item: 'def_type', stat: 'items_count' });
    expect(sectionItemKey('index', 'index/def_type (replica 1)/num_docs_pending')).toEqual({ item: 'def_type (replica 1)', stat: 'num_docs_pending' });
    expect(sectionItemKey('fts', 'fts/travel-index/doc_count')).toEqual({ item: 'travel-index', stat: 'doc_count' });
    expect(sectionItemKey('eventing', 'eventing/audit/on_update_success')).toEqual({ item: 'audit', stat: 'on_update_success' });
    // `index/<stat>`: the bucket's total over its indexes (service_stats_collector's global_stat), not an index.
    expect(sectionItemKey('index', 'index/items_count')).toBeUndefined();
    expect(sectionItemKey('index', 'index_memory_quota')).toBeUndefined();
    expect(sectionItemKey('index', 'fts/x/doc_count')).toBeUndefined();
    expect(sectionItemKey('index', 'index//items_count')).toBeUndefined();
    expect(sectionItemKey('index', 'index/x/')).toBeUndefined();
  });
});

describe('index statistics mapping', () => {
  // One node's @index-travel-sample section: two indexes, one of them a replica, and the bucket totals.
  const section = values({
    'index/def_type/items_count': 31591,
    'index/def_type/num_docs_pending': 12,
    'index/def_type/num_docs_queued': 3,
    'index/def_type/recs_in_mem': 300,
    'index/def_type/recs_on_disk': 100,
    'index/def_type/frag_percent': 15,
    'index/def_type/data_size': 2_000_000,
    'index/def_type/disk_size': 5_000_000,
    'index/def_type/memory_used': 1_500_000,
    'index/def_type/num_requests': 4,
    'index/def_type/num_rows_returned': 250,
    'index/def_type/total_scan_duration': 500_000_000,
    'index/def_type/cache_hits': 90,
    'index/def_type/cache_misses': 10,
    'index/def_type (replica 1)/items_count': 31591,
    'index/def_type (replica 1)/num_rows_returned': 0,
    'index/def_type (replica 1)/total_scan_duration': 0,
    'index/def_type (replica 1)/cache_hits': 0,
    'index/def_type (replica 1)/cache_misses': 0,
    'index/def_type (replica 1)/recs_in_mem': 0,
    'index/def_type (replica 1)/recs_on_disk': 0,
    'index/items_count': 63182,
    'index/fragmentation': 15,
  });
  const nodes = new Map([
    ['n1:8091', values({ index_memory_quota: 536_870_912, index_memory_used: 134_217_728 })],
    ['n2:8091', values({ index_memory_quota: 536_870_912, index_memory_used: undefined })],
  ]);
  const run = (): SampleSet => {
    const out = new SampleSet();
    mapIndexStats(indexSharesFromSection('travel-sample', 'n1:8091', section), nodes, out);
    return out;
  };
  const def = { bucket: 'travel-sample', scope: '_default', collection: '_default', index: 'def_type', node: 'n1:8091' };
  const replica = { ...def, index: 'def_type (replica 1)' };

  it('maps levels as they are and percentages to ratios, in _default._default before 7.0', () => {
    const out = run();
    expect(out.get('couchbase_index_items', def)).toBe(31591);
    expect(out.get('couchbase_index_docs_pending', def)).toBe(12);
    expect(out.get('couchbase_index_docs_queued', def)).toBe(3);
    // 300 / (300 + 100)
    expect(out.get('couchbase_index_resident_ratio', def)).toBe(0.75);
    expect(out.get('couchbase_index_fragmentation_ratio', def)).toBe(0.15);
    expect(out.get('couchbase_index_data_size_bytes', def)).toBe(2_000_000);
    expect(out.get('couchbase_index_disk_size_bytes', def)).toBe(5_000_000);
    expect(out.get('couchbase_index_memory_used_bytes', def)).toBe(1_500_000);
  });

  it('computes the scan latency per row in seconds and the cache hit ratio from the window rates', () => {
    const out = run();
    expect(out.get('couchbase_index_requests_per_second', def)).toBe(4);
    expect(out.get('couchbase_index_rows_returned_per_second', def)).toBe(250);
    // 500,000,000 ns/s over 250 rows/s = 2,000,000 ns = 0.002 s per row.
    expect(out.get('couchbase_index_scan_latency_seconds', def)).toBeCloseTo(0.002, 12);
    // 90 / (90 + 10)
    expect(out.get('couchbase_index_cache_hit_ratio', def)).toBe(0.9);
  });

  it('leaves the means and ratios out when their denominator is 0 (no row, no read, no record), keeps the replica apart', () => {
    const out = run();
    expect(out.get('couchbase_index_items', replica)).toBe(31591);
    expect(out.get('couchbase_index_scan_latency_seconds', replica)).toBeUndefined();
    expect(out.get('couchbase_index_cache_hit_ratio', replica)).toBeUndefined();
    expect(out.get('couchbase_index_resident_ratio', replica)).toBeUndefined();
    // Not read: nothing, never 0.
    expect(out.get('couchbase_index_docs_pending', replica)).toBeUndefined();
    // The bucket totals are not an index.
    expect(out.all('couchbase_index_items').map((s) => s.labels.index)).toEqual(['def_type', 'def_type (replica 1)']);
  });

  it('takes the indexer resident percent where the records are not given', () => {
    const out = new SampleSet();
    mapIndexStats([{ ...def, values: values({ resident_percent: 42 }) }], new Map(), out);
    expect(out.get('couchbase_index_resident_ratio', def)).toBe(0.42);
  });

  it('exports each index node quota, use and their ratio per node', () => {
    const out = run();
    expect(out.get('couchbase_index_node_memory_quota_bytes', { node: 'n1:8091' })).toBe(536_870_912);
    expect(out.get('couchbase_index_node_memory_used_bytes', { node: 'n1:8091' })).toBe(134_217_728);
    expect(out.get('couchbase_index_node_ram_ratio', { node: 'n1:8091' })).toBe(0.25);
    expect(out.get('couchbase_index_node_memory_quota_bytes', { node: 'n2:8091' })).toBe(536_870_912);
    expect(out.get('couchbase_index_node_memory_used_bytes', { node: 'n2:8091' })).toBeUndefined();
    expect(out.get('couchbase_index_node_ram_ratio', { node: 'n2:8091' })).toBeUndefined();
  });
});

describe('Search index statistics mapping', () => {
  const section = values({
    'fts/travel-index/doc_count': 917,
    'fts/travel-index/num_mutations_to_index': 5,
    'fts/travel-index/num_bytes_used_disk': 4_194_304,
    'fts/travel-index/total_queries': 2,
    'fts/travel-index/total_queries_error': 0.5,
    'fts/travel-index/total_request_time': 30_000_000,
    'fts/idle-index/doc_count': 10,
    'fts/idle-index/total_queries': 0,
    'fts/idle-index/total_request_time': 0,
    'fts/doc_count': 927,
  });

  it('maps the per-index stats and the mean query latency in seconds; no query, no latency', () => {
    const out = new SampleSet();
    mapSearchIndexStats(searchSharesFromSection('travel-sample', 'n1:8091', section), new Map([['n1:8091', values({ fts_num_bytes_used_ram: 88_000_000 })]]), out);
    const l = { bucket: 'travel-sample', index: 'travel-index', node: 'n1:8091' };
    expect(out.get('couchbase_search_index_docs', l)).toBe(917);
    expect(out.get('couchbase_search_index_pending_mutations', l)).toBe(5);
    expect(out.get('couchbase_search_index_disk_size_bytes', l)).toBe(4_194_304);
    expect(out.get('couchbase_search_index_queries_per_second', l)).toBe(2);
    expect(out.get('couchbase_search_index_query_errors_per_second', l)).toBe(0.5);
    // 30,000,000 ns/s over 2 queries/s = 15,000,000 ns = 0.015 s (ns_server's avg_queries_latency: 15 ms).
    expect(out.get('couchbase_search_index_query_latency_seconds', l)).toBeCloseTo(0.015, 12);
    const idle = { ...l, index: 'idle-index' };
    expect(out.get('couchbase_search_index_docs', idle)).toBe(10);
    expect(out.get('couchbase_search_index_query_latency_seconds', idle)).toBeUndefined();
    expect(out.get('couchbase_search_node_memory_bytes', { node: 'n1:8091' })).toBe(88_000_000);
    expect(out.all('couchbase_search_index_docs')).toHaveLength(2);
  });
});

describe('eventing statistics mapping', () => {
  it('maps the running totals per function as counters and the backlog as a level; the section totals are left out', () => {
    const section = values({
      'eventing/audit/dcp_backlog': 120,
      'eventing/audit/on_update_success': 5000,
      'eventing/audit/on_update_failure': 3,
      'eventing/audit/on_delete_success': 40,
      'eventing/audit/on_delete_failure': 0,
      'eventing/audit/timeout_count': 1,
      'eventing/audit/processed_count': 5040,
      'eventing/enrich/dcp_backlog': 0,
      'eventing/dcp_backlog': 120,
    });
    const out = new SampleSet();
    mapEventingStats(functionsFromSection(section), out);
    const a = { function: 'audit' };
    expect(out.get('couchbase_eventing_dcp_backlog', a)).toBe(120);
    expect(out.get('couchbase_eventing_on_update_success_total', a)).toBe(5000);
    expect(out.get('couchbase_eventing_on_update_failures_total', a)).toBe(3);
    expect(out.get('couchbase_eventing_on_delete_success_total', a)).toBe(40);
    expect(out.get('couchbase_eventing_on_delete_failures_total', a)).toBe(0);
    expect(out.get('couchbase_eventing_timeouts_total', a)).toBe(1);
    expect(out.get('couchbase_eventing_dcp_backlog', { function: 'enrich' })).toBe(0);
    // `enrich` has no totals in the answer: none invented.
    expect(out.get('couchbase_eventing_on_update_success_total', { function: 'enrich' })).toBeUndefined();
    expect(out.all('couchbase_eventing_dcp_backlog').map((s) => s.labels.function)).toEqual(['audit', 'enrich']);
  });
});
