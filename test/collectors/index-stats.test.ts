/**
 * The `index` collector's statistics through the envelope source (the legacy sections on each index node's own
 * route), and the independence of its parts: /indexStatus and the statistics each fail alone.
 *
 * Hand-built answers in the shape of ns_server's section envelopes (ns_server@6.6.5:src/menelaus_stats.erl
 * handle_stats_section_for_node: the bucket envelope plus `hostname`; keys `index/<index>/<stat>` in
 * `@index-<bucket>` (service_stats_collector.erl per_item_stat) and `index_memory_quota` / `index_memory_used` in
 * `@index`). Counters are per-second samples, gauges levels (base_stats_collector calculate_counters).
 */
import { describe, expect, it } from 'vitest';
import { indexCollector } from '../../src/collectors/index-service.js';
import { collect, fakeClient, loadFixture } from '../helpers/collect.js';

const STATUS = '/indexStatus';
const NS = '/pools/default/nodeServices';
const POOLS = '/pools/default';
const BUCKETS = '/pools/default/buckets';
const NODE_SECTION = '/pools/default/buckets/@{section}/nodes/{node}/stats';
const N1 = 'node1.example.com:8091';
const N2 = 'node2.example.com:8091';
const WITH_INDEX = { nodesExt: [{ hostname: 'node1.example.com', services: { mgmt: 8091, indexHttp: 9102, indexAdmin: 9100 }, thisNode: true }, { hostname: 'node2.example.com', services: { mgmt: 8091, indexHttp: 9102 } }] };
const POOL = { nodes: [{ hostname: N1, clusterMembership: 'active', services: ['kv', 'index'] }, { hostname: N2, clusterMembership: 'active', services: ['index'] }] };
const BUCKET_LIST = [{ name: 'travel-sample', bucketType: 'membase', nodes: [{ hostname: N1 }] }, { name: 'cache', bucketType: 'memcached', nodes: [{ hostname: N1 }] }];
const V66 = loadFixture('indexStatus/handbuilt-6.6.5.json');

const T0 = Date.UTC(2026, 11, 7, 12, 0, 0);
/** A section answer: three samples a second apart, the last at T0. */
function envelope(samples: Record<string, unknown[]>, node: string): unknown {
  return { hostname: node, op: { samples: { timestamp: [T0 - 2000, T0 - 1000, T0], ...samples }, samplesCount: 3, isPersistent: false, lastTStamp: T0, interval: 1000 } };
}

/** What each node's sections say; `index-travel-sample` has the index def_type on node1 and its replica on node2. */
function sections(params: Record<string, string>): unknown {
  const { section, node } = params;
  if (section === 'index') {
    return node === N1
      ? envelope({ index_memory_quota: [536_870_912, 536_870_912, 536_870_912], index_memory_used: [1, 2, 268_435_456], index_ram_percent: [50, 50, 50] }, N1)
      : envelope({ index_memory_quota: [536_870_912, 536_870_912, 536_870_912], index_memory_used: [1, 2, 134_217_728] }, N2);
  }
  if (section === 'index-travel-sample') {
    return node === N1
      ? envelope(
          {
            'index/def_type/items_count': [31000, 31500, 31591],
            'index/def_type/num_docs_pending': [5, 3, 0],
            'index/def_type/frag_percent': [10, 10, 12],
            'index/def_type/recs_in_mem': [1, 1, 900],
            'index/def_type/recs_on_disk': [1, 1, 100],
            'index/def_type/num_requests': [2, 4, 6],
            'index/def_type/num_rows_returned': [100, 200, 300],
            'index/def_type/total_scan_duration': [100_000_000, 200_000_000, 300_000_000],
            'index/def_type/cache_hits': [9, 9, 9],
            'index/def_type/cache_misses': [1, 1, 1],
            'index/items_count': [31000, 31500, 31591],
          },
          N1,
        )
      : envelope({ 'index/def_type (replica 1)/items_count': [31591, 31591, 31591], 'index/def_type (replica 1)/num_rows_returned': [0, 0, 0], 'index/def_type (replica 1)/total_scan_duration': [0, 0, 0] }, N2);
  }
  return { status: 404, text: 'not found' };
}

const routes = (status: unknown): Record<string, unknown> => ({ [NS]: WITH_INDEX, [POOLS]: POOL, [BUCKETS]: BUCKET_LIST, [NODE_SECTION]: sections, [STATUS]: status });
const DEF = { bucket: 'travel-sample', scope: '_default', collection: '_default', index: 'def_type', node: N1 };
const REPLICA = { ...DEF, index: 'def_type (replica 1)', node: N2 };
const FORBIDDEN = { status: 403, body: { message: 'Forbidden. User needs the following permissions', permissions: ['cluster.bucket[.].n1ql.index!read'] } };

describe('index collector: statistics from the legacy sections, per node (before 7.0)', () => {
  it('exports each index share on its node, levels as the newest sample and rates as the mean of the new samples', async () => {
    const client = fakeClient(routes(V66));
    const r = await collect(indexCollector, client, { now: () => T0 + 500 });
    expect(r.ok, String(r.error)).toBe(true);
    expect(r.set.get('couchbase_index_items', DEF)).toBe(31591);
    expect(r.set.get('couchbase_index_docs_pending', DEF)).toBe(0);
    expect(r.set.get('couchbase_index_fragmentation_ratio', DEF)).toBe(0.12);
    // 900 / (900 + 100)
    expect(r.set.get('couchbase_index_resident_ratio', DEF)).toBe(0.9);
    // The first poll's window covers the three samples: mean(2, 4, 6) = 4; mean(100, 200, 300) = 200.
    expect(r.set.get('couchbase_index_requests_per_second', DEF)).toBe(4);
    expect(r.set.get('couchbase_index_rows_returned_per_second', DEF)).toBe(200);
    // 200,000,000 ns/s over 200 rows/s: 1,000,000 ns = 0.001 s per row.
    expect(r.set.get('couchbase_index_scan_latency_seconds', DEF)).toBeCloseTo(0.001, 12);
    // 9 / (9 + 1)
    expect(r.set.get('couchbase_index_cache_hit_ratio', DEF)).toBeCloseTo(0.9, 12);
    // The replica on its own node; no row returned there: no latency.
    expect(r.set.get('couchbase_index_items', REPLICA)).toBe(31591);
    expect(r.set.get('couchbase_index_scan_latency_seconds', REPLICA)).toBeUndefined();
    expect(r.set.get('couchbase_index_items', { ...DEF, node: N2 })).toBeUndefined();
    // Per node: each node's own quota and use, never the cluster-wide sum of the percentages.
    expect(r.set.get('couchbase_index_node_memory_quota_bytes', { node: N1 })).toBe(536_870_912);
    expect(r.set.get('couchbase_index_node_ram_ratio', { node: N1 })).toBe(0.5);
    expect(r.set.get('couchbase_index_node_ram_ratio', { node: N2 })).toBe(0.25);
    // The state families are there too.
    expect(r.set.get('couchbase_index_status_stale')).toBe(1);
    // Only the buckets /indexStatus lists are asked, on each index node; the bucket list is not read.
    const asked = client.calls.filter((c) => c.route === NODE_SECTION).map((c) => `${c.params.section}@${c.params.node}`).sort();
    expect(asked).toEqual([`index-travel-sample@${N1}`, `index-travel-sample@${N2}`, `index@${N1}`, `index@${N2}`]);
  });

  it('a 403 on /indexStatus is an item failure naming the permission; the statistics are still exported', async () => {
    const client = fakeClient(routes(FORBIDDEN));
    const r = await collect(indexCollector, client, { now: () => T0 + 500 });
    expect(r.ok, String(r.error)).toBe(true);
    expect(r.itemErrors.get('forbidden')).toBe(1);
    expect(r.note).toContain('cluster.bucket[.].n1ql.index!read');
    expect(r.set.get('couchbase_index_items', DEF)).toBe(31591);
    expect(r.set.get('couchbase_index_node_ram_ratio', { node: N2 })).toBe(0.25);
    expect(r.set.families().some((f) => f.def.name === 'couchbase_index_state' || f.def.name === 'couchbase_index_status_stale')).toBe(false);
    // Without the list, every bucket that can hold an index is asked (not the memcached one).
    const asked = new Set(client.calls.filter((c) => c.route === NODE_SECTION).map((c) => c.params.section));
    expect([...asked].sort()).toEqual(['index', 'index-travel-sample']);
  });

  it('a failure of the statistics leaves the state families', async () => {
    const r = await collect(indexCollector, fakeClient({ ...routes(V66), [NODE_SECTION]: { status: 500, text: 'boom' } }), { now: () => T0 + 500 });
    expect(r.ok, String(r.error)).toBe(true);
    expect(r.itemErrors.get('http_5xx')).toBeGreaterThan(0);
    expect(r.set.get('couchbase_index_state', { bucket: 'travel-sample', scope: '_default', collection: '_default', index: 'def_type', replica: '0', state: 'ready' })).toBe(1);
    expect(r.set.families().some((f) => f.def.name === 'couchbase_index_items')).toBe(false);
  });

  it('an index that disappears takes its series with it', async () => {
    let withReplica = true;
    const client = fakeClient({
      ...routes(V66),
      [NODE_SECTION]: (p: Record<string, string>) => (p.section === 'index-travel-sample' && p.node === N2 && !withReplica ? envelope({}, N2) : sections(p)),
    });
    const state = new Map<string, unknown>();
    const first = await collect(indexCollector, client, { state, now: () => T0 + 500 });
    expect(first.set.get('couchbase_index_items', REPLICA)).toBe(31591);
    withReplica = false;
    const after = await collect(indexCollector, client, { state, now: () => T0 + 1500 });
    expect(after.ok, String(after.error)).toBe(true);
    expect(after.text).not.toContain('replica 1');
    expect(after.set.get('couchbase_index_items', DEF)).toBe(31591);
  });
});
