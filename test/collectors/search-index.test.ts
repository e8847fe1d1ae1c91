/**
 * The `search_index` collector through the envelope source: the sections `@fts-<bucket>` and `@fts` on each Search
 * node's own route. Hand-built answers in the shape of ns_server's section envelopes (ns_server@6.6.5:
 * src/service_fts.erl: per-index gauges doc_count, num_mutations_to_index, num_bytes_used_disk and counters
 * total_queries, total_queries_error, total_request_time (ns), kept as `fts/<index>/<stat>` in `@fts-<bucket>`; the
 * node's fts_num_bytes_used_ram in `@fts`). Counters are per-second samples.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { searchIndexCollector } from '../../src/collectors/search-index.js';
import { createClient } from '../../src/couchbase/client.js';
import { createSimulator } from '../../src/simulator/index.js';
import { collect, fakeClient } from '../helpers/collect.js';
import { requireBinary } from '../helpers/tools.js';

const PROMTOOL = requireBinary('promtool');

const NS = '/pools/default/nodeServices';
const POOLS = '/pools/default';
const BUCKETS = '/pools/default/buckets';
const NODE_SECTION = '/pools/default/buckets/@{section}/nodes/{node}/stats';
const S1 = 'fts1.example.com:8091';
const WITH_FTS = { nodesExt: [{ hostname: 'kv1.example.com', services: { mgmt: 8091, kv: 11210 }, thisNode: true }, { hostname: 'fts1.example.com', services: { mgmt: 8091, fts: 8094, ftsSSL: 18094 } }] };
const POOL = { nodes: [{ hostname: 'kv1.example.com:8091', services: ['kv'] }, { hostname: S1, services: ['fts'] }] };
const BUCKET_LIST = [{ name: 'travel-sample', bucketType: 'membase', nodes: [{ hostname: 'kv1.example.com:8091' }] }];
const T0 = Date.UTC(2026, 11, 7, 12, 0, 0);

function envelope(samples: Record<string, unknown[]>): unknown {
  return { hostname: S1, op: { samples: { timestamp: [T0 - 1000, T0], ...samples }, samplesCount: 2, isPersistent: false, lastTStamp: T0, interval: 1000 } };
}
function sections(p: Record<string, string>): unknown {
  if (p.node !== S1) return { status: 404, text: 'not found' };
  if (p.section === 'fts') return envelope({ fts_num_bytes_used_ram: [80_000_000, 88_000_000] });
  if (p.section === 'fts-travel-sample') {
    return envelope({
      'fts/travel-index/doc_count': [900, 917],
      'fts/travel-index/num_mutations_to_index': [8, 5],
      'fts/travel-index/num_bytes_used_disk': [4_000_000, 4_194_304],
      'fts/travel-index/total_queries': [1, 3],
      'fts/travel-index/total_queries_error': [0, 1],
      'fts/travel-index/total_request_time': [10_000_000, 50_000_000],
      'fts/doc_count': [900, 917],
    });
  }
  return { status: 404, text: 'not found' };
}
const L = { bucket: 'travel-sample', index: 'travel-index', node: S1 };

describe('search_index collector: statistics from the legacy sections, per node (before 7.0)', () => {
  it('exports the per-index levels, rates and mean latency, and the node memory, on the Search node only', async () => {
    const client = fakeClient({ [NS]: WITH_FTS, [POOLS]: POOL, [BUCKETS]: BUCKET_LIST, [NODE_SECTION]: sections });
    const r = await collect(searchIndexCollector, client, { now: () => T0 + 500 });
    expect(r.ok, String(r.error)).toBe(true);
    expect(r.set.get('couchbase_search_index_docs', L)).toBe(917);
    expect(r.set.get('couchbase_search_index_pending_mutations', L)).toBe(5);
    expect(r.set.get('couchbase_search_index_disk_size_bytes', L)).toBe(4_194_304);
    // mean(1, 3) = 2 queries/s; mean(0, 1) = 0.5 errors/s.
    expect(r.set.get('couchbase_search_index_queries_per_second', L)).toBe(2);
    expect(r.set.get('couchbase_search_index_query_errors_per_second', L)).toBe(0.5);
    // mean(10 ms, 50 ms) of request time per second over 2 queries/s: 15 ms per query.
    expect(r.set.get('couchbase_search_index_query_latency_seconds', L)).toBeCloseTo(0.015, 12);
    expect(r.set.get('couchbase_search_node_memory_bytes', { node: S1 })).toBe(88_000_000);
    expect(r.set.all('couchbase_search_index_docs')).toHaveLength(1);
    // The kv node, which does not run the Search service, is asked nothing.
    expect(client.calls.filter((c) => c.route === NODE_SECTION).every((c) => c.params.node === S1)).toBe(true);
  });

  it('matches the golden exposition', async () => {
    const r = await collect(searchIndexCollector, fakeClient({ [NS]: WITH_FTS, [POOLS]: POOL, [BUCKETS]: BUCKET_LIST, [NODE_SECTION]: sections }), { now: () => T0 + 500 });
    expect(r.ok, String(r.error)).toBe(true);
    await expect(r.text).toMatchFileSnapshot('../golden/search_index-6.6.prom');
  });

  it.skipIf(PROMTOOL === undefined)('golden file passes promtool check metrics', () => {
    const input = readFileSync(join(import.meta.dirname, '..', 'golden', 'search_index-6.6.prom'));
    expect(execFileSync(PROMTOOL as string, ['check', 'metrics'], { input, encoding: 'utf8' })).toBe('');
  });

  it('emits nothing for a stat without a value (null samples), not zeros, and keeps the others', async () => {
    const nulls = (p: Record<string, string>): unknown =>
      p.section === 'fts-travel-sample' && p.node === S1 ? envelope({ 'fts/travel-index/doc_count': [null, null], 'fts/travel-index/total_queries': [null, null], 'fts/travel-index/total_request_time': [1, 2], 'fts/travel-index/num_bytes_used_disk': [1, 4096] }) : sections(p);
    const r = await collect(searchIndexCollector, fakeClient({ [NS]: WITH_FTS, [POOLS]: POOL, [BUCKETS]: BUCKET_LIST, [NODE_SECTION]: nulls }), { now: () => T0 + 500 });
    expect(r.ok, String(r.error)).toBe(true);
    expect(r.set.all('couchbase_search_index_docs')).toEqual([]);
    expect(r.set.all('couchbase_search_index_queries_per_second')).toEqual([]);
    expect(r.set.all('couchbase_search_index_query_latency_seconds')).toEqual([]);
    expect(r.set.get('couchbase_search_index_disk_size_bytes', L)).toBe(4096);
  });

  it('costs no request and no error where no node runs the Search service', async () => {
    const client = fakeClient({ [NS]: { nodesExt: [{ services: { mgmt: 8091, kv: 11210, indexHttp: 9102 }, thisNode: true }] } });
    const r = await collect(searchIndexCollector, client);
    expect(r.ok).toBe(true);
    expect(r.notApplicable).toBe('no search service');
    expect(client.calls.map((c) => c.route)).toEqual([NS]);
  });

  it('fails the poll when both the per-index and the per-node statistics fail', async () => {
    const r = await collect(searchIndexCollector, fakeClient({ [NS]: WITH_FTS, [POOLS]: POOL, [BUCKETS]: BUCKET_LIST, [NODE_SECTION]: { status: 500, text: 'x' } }));
    expect(r.ok).toBe(false);
    expect(r.set.size).toBe(0);
  });

  // GET /api/index on a Search node (docs-server rest-fts-indexing, "Index Definition": `{ status, indexDefs: {
  // implVersion, indexDefs: { <name>: { name, sourceName, type, … } }, uuid } }`, sourceName the bucket; an alias
  // (`fulltext-alias`) has no source bucket). Hand-written answers in that shape.
  const DEFS = '/api/index';
  const TWO_BUCKETS = [...BUCKET_LIST, { name: 'beer-sample', bucketType: 'membase', nodes: [{ hostname: 'kv1.example.com:8091' }] }, { name: 'cache', bucketType: 'memcached', nodes: [{ hostname: 'kv1.example.com:8091' }] }];
  const defs = (indexes: Record<string, { sourceName: string; type: string }>): unknown => ({
    status: 'ok',
    indexDefs: { implVersion: '5.5.0', indexDefs: Object.fromEntries(Object.entries(indexes).map(([name, d]) => [name, { name, params: {}, sourceType: 'couchbase', uuid: 'u1', ...d }])), uuid: 'u0' },
  });
  const sectionsAsked = (c: { calls: Array<{ route: string; params: Record<string, string> }> }): string[] =>
    c.calls.filter((x) => x.route === NODE_SECTION && x.params.section !== 'fts').map((x) => `${x.params.section}@${x.params.node}`).sort();

  it('asks @fts-<bucket> only of the buckets the Search index definitions name, on the Search node', async () => {
    const client = fakeClient({
      [NS]: WITH_FTS,
      [POOLS]: POOL,
      [BUCKETS]: TWO_BUCKETS,
      [NODE_SECTION]: sections,
      [DEFS]: defs({ 'travel-index': { sourceName: 'travel-sample', type: 'fulltext-index' }, 'all-travel': { sourceName: '', type: 'fulltext-alias' } }),
    });
    const r = await collect(searchIndexCollector, client, { now: () => T0 + 500 });
    expect(r.ok, String(r.error)).toBe(true);
    expect(sectionsAsked(client)).toEqual([`fts-travel-sample@${S1}`]);
    // The definitions come from the Search service's port on the Search node, once a poll.
    const asked = client.calls.filter((c) => c.route === DEFS);
    expect(asked.map((c) => c.options.baseUrl)).toEqual(['http://fts1.example.com:8094']);
    expect(r.set.get('couchbase_search_index_docs', L)).toBe(917);
    expect(r.note ?? '').not.toContain('Search index definitions');
  });

  it('asks no @fts-<bucket> section when the Search service has no index definition (indexDefs null)', async () => {
    const client = fakeClient({ [NS]: WITH_FTS, [POOLS]: POOL, [BUCKETS]: TWO_BUCKETS, [NODE_SECTION]: sections, [DEFS]: { status: 'ok', indexDefs: null } });
    const r = await collect(searchIndexCollector, client, { now: () => T0 + 500 });
    expect(r.ok, String(r.error)).toBe(true);
    expect(sectionsAsked(client)).toEqual([]);
    expect(r.set.all('couchbase_search_index_docs')).toEqual([]);
    // The node's memory still comes from @fts.
    expect(r.set.get('couchbase_search_node_memory_bytes', { node: S1 })).toBe(88_000_000);
  });

  it('falls back to every bucket that can hold an index, noted on the poll, when the definitions cannot be read', async () => {
    const client = fakeClient({
      [NS]: WITH_FTS,
      [POOLS]: POOL,
      [BUCKETS]: TWO_BUCKETS,
      [NODE_SECTION]: sections,
      [DEFS]: { status: 403, body: { message: 'Forbidden. User needs one of the following permissions', permissions: ['cluster.bucket[travel-sample].fts!read'] } },
    });
    const r = await collect(searchIndexCollector, client, { now: () => T0 + 500 });
    expect(r.ok, String(r.error)).toBe(true);
    // The memcached bucket cannot hold a Search index.
    expect(sectionsAsked(client)).toEqual([`fts-beer-sample@${S1}`, `fts-travel-sample@${S1}`]);
    expect(r.note).toContain('Search index definitions (GET /api/index): forbidden (403): missing permission cluster.bucket[travel-sample].fts!read');
    expect(r.note).toContain('the sections of every bucket were asked');
    expect(r.set.get('couchbase_search_index_docs', L)).toBe(917);
  });

  it('reads no index definitions from 7.0 (the range API names the bucket of each series)', async () => {
    const client = fakeClient({ [NS]: WITH_FTS, [POOLS]: POOL, [BUCKETS]: TWO_BUCKETS, [NODE_SECTION]: sections, [DEFS]: defs({}) });
    await collect(searchIndexCollector, client, { cluster: { statsSource: 'range' } });
    expect(client.calls.length).toBeGreaterThan(1);
    expect(client.calls.some((c) => c.route === DEFS || c.route === NODE_SECTION)).toBe(false);
  });
});


describe('search_index collector before 7.0 on the simulator: requests per poll', () => {
  // The simulator lists its Search indexes at GET /api/index (travel-hotels and travel-landmarks on the first
  // bucket, beer-fts on the second); without the definitions (a 404 injected), every bucket is asked.
  async function poll(withDefinitions: boolean): Promise<{ sections: number; docs: string[]; note: string }> {
    const sim = createSimulator({ version: '6.6.5', buckets: 100, nodes: 4, seed: 46 });
    if (!withDefinitions) sim.ctx.faults.add({ match: /^\/api\/index$/, kind: 'status', status: 404 });
    let sections = 0;
    sim.app.addHook('onRequest', async (req) => {
      if (req.url.includes('/@fts-')) sections++;
    });
    const client = createClient({ cluster: 't', url: await sim.listen(), username: 'Administrator', password: 'password', concurrency: 8 });
    try {
      const r = await collect(searchIndexCollector, client, { cluster: { statsSource: 'auto' } });
      expect(r.ok, String(r.error)).toBe(true);
      const docs = r.set.all('couchbase_search_index_docs').map((x) => `${x.labels.bucket}/${x.labels.index}@${x.labels.node}`).sort();
      return { sections, docs, note: r.note ?? '' };
    } finally {
      await client.close();
      await sim.close();
    }
  }

  it('asks 2 buckets x 2 Search nodes with the definitions instead of 100 x 2 without, for the same series', async () => {
    const without = await poll(false);
    const withDefs = await poll(true);
    expect(without.sections).toBe(200);
    expect(without.note).toContain('Search index definitions (GET /api/index)');
    expect(withDefs.sections).toBe(4);
    expect(withDefs.note).not.toContain('Search index definitions');
    // Three Search indexes on each of the two Search nodes.
    expect(withDefs.docs).toHaveLength(6);
    expect(withDefs.docs).toEqual(without.docs);
  }, 60_000);
});
