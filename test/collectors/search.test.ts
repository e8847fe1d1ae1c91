import { execFileSync } from 'node:child_process';
import { Writable } from 'node:stream';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  applyCancelPolicy,
  cancelCandidates,
  emitCancelCounts,
  MAX_CANCELS_PER_POLL,
  nodeNamesBudgetMs,
  parseActiveQueries,
  searchCollector,
} from '../../src/collectors/search.js';
import type { CancelPolicy, SearchQuery } from '../../src/collectors/search.js';
import { runPoll } from '../../src/collectors/context.js';
import { SampleSet } from '../../src/metrics/family.js';
import { registerSecret } from '../../src/redact.js';
import { defaultClusterConfig, resolveCollectorOptions } from '../../src/config/defaults.js';
import { collectorSchemas } from '../../src/config/schema.js';
import type { CollectorOptions } from '../../src/config/schema.js';
import { createClient } from '../../src/couchbase/client.js';
import type { CouchbaseClient } from '../../src/couchbase/client.js';
import { activeQueriesSchema } from '../../src/couchbase/search.js';
import { createSimulator } from '../../src/simulator/index.js';
import type { Simulator } from '../../src/simulator/index.js';
import { collect, fakeClient, loadFixture } from '../helpers/collect.js';
import type { FakeRoute } from '../helpers/collect.js';
import { missing, requireBinary } from '../helpers/tools.js';

/** Checked once: a missing promtool skips its tests visibly (and fails under CI=true), never silently. */
const PROMTOOL = requireBinary('promtool');

const ALL = '/api/query';
const BY_INDEX = '/api/query/index/{index}';
const CANCEL = '/api/query/{queryID}/cancel';
const NODE_SERVICES = '/pools/default/nodeServices';
const SEARCH_URL = 'http://cb.test:8094';

const q71 = () => loadFixture('fts-api-query/docs-server-7.1plus-all.json');
const q70 = () => loadFixture('fts-api-query/docs-server-7.0-all.json');

const withSearch = { cluster: { searchUrl: SEARCH_URL } };

const POOLS = '/pools/default';
/**
 * The node list the uuids of the query keys resolve through: b91d… is a known node, f76b… is not (a node that
 * has just left), so both label forms are exercised.
 */
const POOLS_ONE_KNOWN = { nodes: [{ hostname: '10.144.220.101:8091', nodeUUID: 'b91d75480470f979f65f04e8f20a1f7b' }] };

/** A pino logger whose JSON lines land in `lines`. */
function captureLog(): { log: pino.Logger; lines: Array<Record<string, unknown>>; raw: string[] } {
  const lines: Array<Record<string, unknown>> = [];
  const raw: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, cb) {
      const text = chunk.toString('utf8');
      raw.push(text);
      for (const l of text.split('\n').filter(Boolean)) lines.push(JSON.parse(l) as Record<string, unknown>);
      cb();
    },
  });
  return { log: pino({ level: 'debug' }, stream), lines, raw };
}

/** One poll with a logger and shared state (collect() has no logger). */
async function pollWithLog(client: CouchbaseClient, options: Partial<CollectorOptions<'search'>>, state: Map<string, unknown>, log: pino.Logger, searchUrl: string | null = SEARCH_URL) {
  const raw = collectorSchemas.search.parse(options);
  return runPoll({
    collector: searchCollector,
    cluster: defaultClusterConfig({ url: client.baseUrl, searchUrl: searchUrl ?? undefined }),
    options: resolveCollectorOptions('search', raw),
    client,
    state,
    log,
  });
}

describe('search node join (issue 11, item 6)', () => {
  it('node is host:port when the node list knows the uuid, the uuid otherwise; node_uuid always', async () => {
    const r = await collect(searchCollector, fakeClient({ [ALL]: q71(), [POOLS]: POOLS_ONE_KNOWN }), withSearch);
    const rows = r.set.all('couchbase_search_node_active_queries').map((s) => [s.labels.node, s.labels.node_uuid, s.value]);
    expect(rows).toEqual([
      ['10.144.220.101:8091', 'b91d75480470f979f65f04e8f20a1f7b', 3],
      ['f76b2d51397feee28c1e757ed426ef93', 'f76b2d51397feee28c1e757ed426ef93', 1],
    ]);
  });

  it('leaves the per-node series out (and counts an item error) when the node list cannot be read', async () => {
    const r = await collect(searchCollector, fakeClient({ [ALL]: q71(), [POOLS]: { status: 500, text: 'boom' } }), withSearch);
    expect(r.ok, String(r.error)).toBe(true);
    expect(r.set.all('couchbase_search_node_active_queries')).toEqual([]);
    expect(r.set.get('couchbase_search_active_queries', { index: 'DemoIndex1' })).toBe(2);
    expect(Object.fromEntries(r.itemErrors)).toEqual({ http_5xx: 1 });
  });
});

describe('search collector on real fixtures', () => {
  it('matches the golden exposition for the 7.1+ answer (node uuid in the key)', async () => {
    const r = await collect(searchCollector, fakeClient({ [ALL]: q71(), [POOLS]: POOLS_ONE_KNOWN }), withSearch);
    expect(r.ok, String(r.error)).toBe(true);
    await expect(r.text).toMatchFileSnapshot('../golden/search-7.1.prom');
    expect(r.set.get('couchbase_search_total_active_queries')).toBe(4);
    expect(r.set.get('couchbase_search_active_queries', { index: 'DemoIndex1' })).toBe(2);
    expect(r.set.get('couchbase_search_active_queries', { index: 'DemoIndex2' })).toBe(2);
    expect(r.set.get('couchbase_search_active_query_max_duration_seconds', { index: 'DemoIndex1' })).toBe(2.144802122);
    // node joins with every other family (host:port); a uuid the node list does not know stays as node.
    expect(r.set.get('couchbase_search_node_active_queries', { node: '10.144.220.101:8091', node_uuid: 'b91d75480470f979f65f04e8f20a1f7b' })).toBe(3);
    expect(r.set.get('couchbase_search_node_active_queries', { node: 'f76b2d51397feee28c1e757ed426ef93', node_uuid: 'f76b2d51397feee28c1e757ed426ef93' })).toBe(1);
    // No query is slower than the default 10 s threshold.
    expect(r.set.all('couchbase_search_slow_queries').every((s) => s.value === 0)).toBe(true);
  });

  it('matches the golden exposition for the 7.0 answer (bare query ids: no per-node series)', async () => {
    const r = await collect(searchCollector, fakeClient({ [ALL]: q70() }), withSearch);
    expect(r.ok, String(r.error)).toBe(true);
    await expect(r.text).toMatchFileSnapshot('../golden/search-7.0.prom');
    expect(r.set.get('couchbase_search_slow_queries', { index: 'DemoIndex' })).toBe(1);
    expect(r.set.get('couchbase_search_active_query_max_duration_seconds', { index: 'DemoIndex' })).toBe(13.863849125);
    expect(r.set.all('couchbase_search_node_active_queries')).toEqual([]);
  });

  it('honours slow_query_threshold', async () => {
    const r = await collect(searchCollector, fakeClient({ [ALL]: q70() }), { ...withSearch, options: { slow_query_threshold: '2s' } as unknown as Partial<CollectorOptions<'search'>> });
    expect(r.set.get('couchbase_search_slow_queries', { index: 'DemoIndex' })).toBe(1);
    expect(r.set.get('couchbase_search_slow_queries', { index: 'DemoIndex1' })).toBe(1);
    expect(r.set.get('couchbase_search_slow_queries', { index: 'DemoIndex2' })).toBe(1);
    expect(r.set.get('couchbase_search_slow_query_threshold_seconds')).toBe(2);
  });

  it('asks the per-index view for listed indexes: merges its queries, 0 when idle, skips unknown indexes', async () => {
    const client = fakeClient({
      [POOLS]: POOLS_ONE_KNOWN,
      [ALL]: loadFixture('fts-api-query/docs-server-7.1plus-longerThan7s.json'),
      [BY_INDEX]: (p: Record<string, string>) =>
        p.index === 'DemoIndex1'
          ? loadFixture('fts-api-query-index/docs-server-7.1plus-DemoIndex1-longerThan1ms.json')
          : p.index === 'idle'
            ? loadFixture('fts-api-query/docs-server-7.0-longerThan10s-empty.json')
            : { status: 400, body: { error: 'index not found', status: 'fail' } },
    });
    const r = await collect(searchCollector, client, { ...withSearch, options: { indexes: ['DemoIndex1', 'idle', 'gone'] } });
    expect(r.ok, String(r.error)).toBe(true);
    await expect(r.text).toMatchFileSnapshot('../golden/search-indexes.prom');
    // One query from the cluster-wide view and two from the per-index view.
    expect(r.set.get('couchbase_search_active_queries', { index: 'DemoIndex1' })).toBe(3);
    expect(r.set.get('couchbase_search_slow_queries', { index: 'DemoIndex1' })).toBe(1);
    expect(r.set.get('couchbase_search_active_queries', { index: 'idle' })).toBe(0);
    expect(r.set.get('couchbase_search_slow_queries', { index: 'idle' })).toBe(0);
    expect(r.set.get('couchbase_search_active_query_max_duration_seconds', { index: 'idle' })).toBeUndefined();
    expect(r.set.get('couchbase_search_active_queries', { index: 'gone' })).toBeUndefined();
    expect(r.skipped.get('index_not_found')).toBe(1);
    expect(client.calls.map((c) => c.path)).toEqual(['/api/query', '/api/query/index/DemoIndex1', '/api/query/index/idle', '/api/query/index/gone', POOLS]);
    // The search calls go to the search URL; the node list to the cluster manager.
    expect(client.calls.filter((c) => c.route !== POOLS).every((c) => c.options.baseUrl === SEARCH_URL)).toBe(true);
  });

  it.skipIf(PROMTOOL === undefined)('renders output that promtool check metrics accepts', async () => {
    const promtool = PROMTOOL as string;
    for (const payload of [q71(), q70()]) {
      const r = await collect(searchCollector, fakeClient({ [ALL]: payload }), withSearch);
      execFileSync(promtool, ['check', 'metrics'], { input: r.text });
    }
  });
});

describe('search collector: missing and odd fields', () => {
  it('emits nothing but the threshold for an answer without queries or counts', async () => {
    const r = await collect(searchCollector, fakeClient({ [ALL]: { status: 'ok' } }), withSearch);
    expect(r.ok).toBe(true);
    expect(r.set.get('couchbase_search_total_active_queries')).toBeUndefined();
    expect(r.set.all('couchbase_search_active_queries')).toEqual([]);
    expect(r.set.size).toBe(1);
    expect(r.set.get('couchbase_search_slow_query_threshold_seconds')).toBe(10);
  });

  it('counts a query without an execution time but gives it no duration; skips entries it cannot use', async () => {
    const payload = {
      totalActiveQueryCount: 4,
      filteredActiveQueries: {
        queryMap: {
          'aa-1': { QueryContext: { index: 'i1' } },
          'aa-2': { QueryContext: { index: 'i1' }, executionTime: 'about 5 seconds' },
          'aa-3': { executionTime: '1s' },
          'aa-4': 'not an object',
          'bb-5': { QueryContext: { index: 'i2' }, executionTime: '1m30s' },
        },
      },
    };
    const r = await collect(searchCollector, fakeClient({ [ALL]: payload, [POOLS]: { nodes: [] } }), withSearch);
    expect(r.ok).toBe(true);
    expect(r.set.get('couchbase_search_active_queries', { index: 'i1' })).toBe(2);
    expect(r.set.get('couchbase_search_active_query_max_duration_seconds', { index: 'i1' })).toBeUndefined();
    expect(r.set.get('couchbase_search_slow_queries', { index: 'i2' })).toBe(1);
    expect(r.set.get('couchbase_search_active_query_max_duration_seconds', { index: 'i2' })).toBe(90);
    expect(r.set.get('couchbase_search_node_active_queries', { node: 'aa', node_uuid: 'aa' })).toBe(2);
    expect(r.skipped.get('bad_execution_time')).toBe(2);
    expect(r.skipped.get('query_without_index')).toBe(1);
    expect(r.skipped.get('bad_query_entry')).toBe(1);
  });

  it('lists indexes in code-unit order, the same whatever the locale (not localeCompare: a before A there)', async () => {
    const query = (index: string) => ({ QueryContext: { index }, executionTime: '1s' });
    const payload = { totalActiveQueryCount: 3, filteredActiveQueries: { queryMap: { 'aa-1': query('beta'), 'aa-2': query('alpha'), 'aa-3': query('Alpha') } } };
    const r = await collect(searchCollector, fakeClient({ [ALL]: payload, [POOLS]: { nodes: [] } }), withSearch);
    expect(r.ok).toBe(true);
    // Hand-ordered by UTF-16 code unit: 'A' is 0x41, 'a' 0x61, 'b' 0x62.
    expect(r.set.all('couchbase_search_active_queries').map((s) => s.labels.index)).toEqual(['Alpha', 'alpha', 'beta']);
  });

  it('treats a null queryMap as empty', async () => {
    const r = await collect(searchCollector, fakeClient({ [ALL]: { totalActiveQueryCount: 0, filteredActiveQueries: { queryMap: null } } }), withSearch);
    expect(r.ok).toBe(true);
    expect(r.set.get('couchbase_search_total_active_queries')).toBe(0);
  });
});

describe('search collector: failures and applicability', () => {
  it('fails on an HTTP error', async () => {
    const r = await collect(searchCollector, fakeClient({ [ALL]: { status: 500, text: 'boom' } }), withSearch);
    expect(r.ok).toBe(false);
    expect((r.error as { code?: string }).code).toBe('CBW_ERR_HTTP');
  });

  it('fails on a body that is not JSON', async () => {
    const r = await collect(searchCollector, fakeClient({ [ALL]: { fail: 'invalid_json' } }), withSearch);
    expect(r.ok).toBe(false);
    expect((r.error as { code?: string }).code).toBe('CBW_ERR_SCHEMA');
  });

  it('fails when the shape is wrong where it matters', async () => {
    const r = await collect(searchCollector, fakeClient({ [ALL]: { totalActiveQueryCount: 'many' } }), withSearch);
    expect(r.ok).toBe(false);
  });

  it('is not applicable to a cluster without the search service', async () => {
    const ns = loadFixture<{ nodesExt: Array<{ services: Record<string, number> }> }>('pools-default-nodeServices/docs-server-6.5plus.json');
    for (const n of ns.nodesExt) {
      delete n.services.fts;
      delete n.services.ftsSSL;
    }
    const client = fakeClient({ [NODE_SERVICES]: ns });
    const r = await collect(searchCollector, client);
    expect(r.ok).toBe(true);
    expect(r.notApplicable).toBe('no search service');
    expect(r.set.size).toBe(0);
    expect(client.calls.map((c) => c.route)).toEqual([NODE_SERVICES]);
  });

  it('finds the search URL in nodeServices (the node we talk to, plain port for http)', async () => {
    const client = fakeClient({
      [NODE_SERVICES]: { nodesExt: [{ services: { mgmt: 8091, fts: 8094, ftsSSL: 18094 }, thisNode: true }] },
      [ALL]: q71(),
    });
    const r = await collect(searchCollector, client);
    expect(r.ok, String(r.error)).toBe(true);
    expect(client.calls[1]?.options.baseUrl).toBe('http://cb.test:8094');
  });
});

// ---- cancel policy ----------------------------------------------------------------------------------------

const policy = (p: Partial<CancelPolicy> = {}): CancelPolicy => ({ enabled: true, longer_than: 5000, indexes: [], dry_run: false, log_query_text: false, ...p });

function query(key: string, index: string, seconds: number | undefined): SearchQuery {
  const i = key.lastIndexOf('-');
  return { key, node: i > 0 ? key.slice(0, i) : undefined, id: key.slice(i + 1), index, seconds, query: { query: 'secret text' } };
}

describe('cancel policy (pure parts)', () => {
  it('selects queries over the limit on listed indexes, oldest first, skipping ones already acted on', () => {
    const qs = [query('n-1', 'a', 6), query('n-2', 'a', 60), query('n-3', 'b', 600), query('n-4', 'a', 4), query('n-5', 'a', undefined), query('n-6', 'a', 30)];
    expect(cancelCandidates(qs, policy(), new Set()).map((q) => q.key)).toEqual(['n-3', 'n-2', 'n-6', 'n-1']);
    expect(cancelCandidates(qs, policy({ indexes: ['a'] }), new Set(['n-2'])).map((q) => q.key)).toEqual(['n-6', 'n-1']);
    expect(cancelCandidates(qs, policy({ enabled: false }), new Set())).toEqual([]);
  });

  it('logs index, query id, node and duration — and the query text only when asked', async () => {
    const client = fakeClient({ [CANCEL]: loadFixture('fts-api-query-cancel/docs-server-7.1plus.json') });
    const qs = [query('b91d-24', 'DemoIndex1', 12.5)];
    for (const logText of [false, true]) {
      const { log, lines, raw } = captureLog();
      await applyCancelPolicy({ client, baseUrl: SEARCH_URL, log, state: new Map(), skip: () => undefined }, qs, policy({ log_query_text: logText }));
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatchObject({ index: 'DemoIndex1', query_id: '24', node: 'b91d', duration_seconds: 12.5, result: 'cancelled', msg: 'cancelled a runaway search query' });
      expect(raw.join('').includes('secret text')).toBe(logText);
    }
    expect(client.calls[0]).toMatchObject({ route: CANCEL, path: '/api/query/24/cancel', options: { method: 'POST', json: { uuid: 'b91d' }, baseUrl: SEARCH_URL } });
  });

  it('a query text holding a secret and a 100 KB key: the log line is redacted and bounded (issue 25)', async () => {
    registerSecret('Search-Pa55word-zq');
    const client = fakeClient({ [CANCEL]: { status: 'ok', msg: 'aborted' } });
    const long = `${'n'.repeat(100_000)}-77`;
    const q: SearchQuery = { ...query(long, `idx${'i'.repeat(100_000)}`, 60), query: { query: `${' '.repeat(20_000)}password is Search-Pa55word-zq` } };
    const { log, raw } = captureLog();
    await applyCancelPolicy({ client, baseUrl: SEARCH_URL, log, state: new Map(), skip: () => undefined }, [q], policy({ log_query_text: true }));
    const text = raw.join('');
    expect(text).toContain('"query_id":"77"');
    expect(text).not.toContain('Search-Pa55');
    expect(text).toContain('[redacted]');
    expect(text.length).toBeLessThan(4096);
  });

  it('sends no uuid for a 7.0 key and skips ids that are not integers', async () => {
    const client = fakeClient({ [CANCEL]: { status: 'ok', msg: 'aborted' } });
    const skipped: string[] = [];
    const state = new Map<string, unknown>();
    await applyCancelPolicy({ client, baseUrl: SEARCH_URL, log: pino({ level: 'silent' }), state, skip: (r) => skipped.push(r) }, [query('9', 'a', 60), query('n-x1', 'a', 60)], policy());
    expect(client.calls).toHaveLength(1);
    expect(client.calls[0]?.options.json).toEqual({});
    expect(skipped).toEqual(['uncancellable_query_id']);
  });

  it('keeps cancel counters for at most maxIndexes indexes (names come from Couchbase); the rest are counted as capped', async () => {
    const client = fakeClient({ [CANCEL]: { status: 'ok', msg: 'aborted' } });
    const state = new Map<string, unknown>();
    let capped = 0;
    const deps = { client, baseUrl: SEARCH_URL, log: pino({ level: 'silent' }), state, skip: () => undefined, maxIndexes: 2, capped: () => capped++ };
    // Four runaways on four indexes, then two more on an index already counted.
    await applyCancelPolicy(deps, [query('n-1', 'i1', 60), query('n-2', 'i2', 50), query('n-3', 'i3', 40), query('n-4', 'i4', 30)], policy());
    await applyCancelPolicy(deps, [query('n-5', 'i1', 60), query('n-6', 'i1', 50)], policy());
    expect(capped).toBe(2);
    const out = new SampleSet();
    emitCancelCounts(out, state, policy(), [query('n-7', 'i5', 1), query('n-8', 'i6', 1), query('n-9', 'i7', 1)], 2);
    const indexes = new Set(out.all('couchbase_search_queries_cancelled_total').map((x) => x.labels.index));
    expect(indexes).toEqual(new Set(['i1', 'i2']));
    expect(out.all('couchbase_search_queries_cancelled_total').find((x) => x.labels.index === 'i1' && x.labels.result === 'cancelled')?.value).toBe(3);
    expect(out.capped.get('dynamic_families')).toBe(3);
  });

  it('acts on at most MAX_CANCELS_PER_POLL queries per poll; the rest on the next', async () => {
    const client = fakeClient({ [CANCEL]: { status: 'ok', msg: 'aborted' } });
    const state = new Map<string, unknown>();
    const qs = Array.from({ length: MAX_CANCELS_PER_POLL + 3 }, (_, i) => query(`n-${i}`, 'a', 100 + i));
    const deps = { client, baseUrl: SEARCH_URL, log: pino({ level: 'silent' }), state, skip: () => undefined };
    await applyCancelPolicy(deps, qs, policy());
    expect(client.calls).toHaveLength(MAX_CANCELS_PER_POLL);
    await applyCancelPolicy(deps, qs, policy());
    expect(client.calls).toHaveLength(MAX_CANCELS_PER_POLL + 3);
    await applyCancelPolicy(deps, qs, policy());
    expect(client.calls).toHaveLength(MAX_CANCELS_PER_POLL + 3);
  });
});

describe('cancel policy through the collector', () => {
  it('dry run: logs and counts, never posts, never twice; the counter persists and ids are pruned', async () => {
    const { log, lines } = captureLog();
    const state = new Map<string, unknown>();
    const routes: Record<string, FakeRoute> = { [ALL]: q71() };
    const client = fakeClient(routes);
    const opts = { cancel: { enabled: true, longer_than: '2s', dry_run: true } } as unknown as Partial<CollectorOptions<'search'>>;
    const r1 = await pollWithLog(client, opts, state, log);
    expect(r1.ok, String(r1.error)).toBe(true);
    expect(r1.set.get('couchbase_search_queries_cancelled_total', { index: 'DemoIndex1', result: 'dry_run' })).toBe(2);
    expect(r1.set.get('couchbase_search_queries_cancelled_total', { index: 'DemoIndex2', result: 'dry_run' })).toBe(2);
    expect(client.calls.filter((c) => c.route === CANCEL)).toEqual([]);
    const warned = lines.filter((l) => l.msg === 'runaway search query found (dry run: not cancelled)');
    expect(warned).toHaveLength(4);
    expect(JSON.stringify(lines)).not.toContain('restraunts');

    // Same queries again: nothing new, the counter still there.
    const r2 = await pollWithLog(client, opts, state, log);
    expect(r2.set.get('couchbase_search_queries_cancelled_total', { index: 'DemoIndex1', result: 'dry_run' })).toBe(2);
    expect(lines.filter((l) => l.result === 'dry_run')).toHaveLength(4);

    // The queries are gone: their ids are forgotten, the counter stays.
    routes[ALL] = loadFixture('fts-api-query/docs-server-7.0-longerThan10s-empty.json');
    const r3 = await pollWithLog(client, opts, state, log);
    expect((state.get('cancel.attempted') as Set<string>).size).toBe(0);
    expect(r3.set.get('couchbase_search_queries_cancelled_total', { index: 'DemoIndex2', result: 'dry_run' })).toBe(2);
  });

  it('a failing cancel is counted and logged once, not retried, and does not fail the poll', async () => {
    const { log, lines } = captureLog();
    const state = new Map<string, unknown>();
    const client = fakeClient({ [ALL]: q70(), [CANCEL]: { status: 500, text: 'internal error' } });
    const opts = { cancel: { enabled: true, longer_than: '10s', dry_run: false } } as unknown as Partial<CollectorOptions<'search'>>;
    for (let i = 0; i < 3; i++) {
      const r = await pollWithLog(client, opts, state, log);
      expect(r.ok, String(r.error)).toBe(true);
      expect(r.set.get('couchbase_search_queries_cancelled_total', { index: 'DemoIndex', result: 'failed' })).toBe(1);
    }
    expect(client.calls.filter((c) => c.route === CANCEL)).toHaveLength(1);
    const failed = lines.filter((l) => l.result === 'failed');
    expect(failed).toHaveLength(1);
    expect(failed[0]).toMatchObject({ index: 'DemoIndex', query_id: '9', node: '', duration_seconds: 13.863849125, msg: 'could not cancel a runaway search query (not retried)' });
  });

  it('pre-declares 0 for the listed indexes so rate() sees the first cancellation', async () => {
    const r = await collect(searchCollector, fakeClient({ [ALL]: { status: 'ok' } }), {
      ...withSearch,
      options: { cancel: { enabled: true, longer_than: '5m', indexes: ['hot'], dry_run: false } } as unknown as Partial<CollectorOptions<'search'>>,
    });
    expect(r.set.all('couchbase_search_queries_cancelled_total').map((s) => `${s.labels.index}/${s.labels.result}=${s.value}`)).toEqual([
      'hot/cancelled=0',
      'hot/failed=0',
      'hot/forbidden=0',
      'hot/not_found=0',
    ]);
  });

  it('with no index list, pre-declares 0 for every index seen active, and keeps them', async () => {
    const state = new Map<string, unknown>();
    const routes: Record<string, FakeRoute> = { [ALL]: q71() };
    const opts = { ...withSearch, state, options: { cancel: { enabled: true, longer_than: '5m', dry_run: true } } as unknown as Partial<CollectorOptions<'search'>> };
    const r1 = await collect(searchCollector, fakeClient(routes), opts);
    expect(r1.set.all('couchbase_search_queries_cancelled_total').map((s) => `${s.labels.index}/${s.labels.result}=${s.value}`)).toEqual(['DemoIndex1/dry_run=0', 'DemoIndex2/dry_run=0']);
    routes[ALL] = { status: 'ok' };
    const r2 = await collect(searchCollector, fakeClient(routes), opts);
    expect(r2.set.all('couchbase_search_queries_cancelled_total')).toHaveLength(2);
  });

  it('is off by default: no cancel calls, no counter', async () => {
    const client = fakeClient({ [ALL]: q70() });
    const r = await collect(searchCollector, client, withSearch);
    expect(client.calls.map((c) => c.route)).toEqual([ALL]);
    expect(r.set.all('couchbase_search_queries_cancelled_total')).toEqual([]);
  });
});

// ---- against the simulator ----------------------------------------------------------------------------------

describe('search collector against the simulator', () => {
  let sim: Simulator;
  let url: string;
  let client: CouchbaseClient;

  beforeAll(async () => {
    sim = createSimulator({ scenario: 'demo', knobs: { searchRunaways: 2 } });
    url = await sim.listen();
    client = createClient({ cluster: 't', url, username: 'Administrator', password: 'password' });
  });
  afterAll(async () => {
    await client.close();
    await sim.close();
  });

  it('finds the search service through nodeServices and reports the demo runaways as slow', async () => {
    const r = await collect(searchCollector, client);
    expect(r.ok, String(r.error)).toBe(true);
    expect(r.requests.map((q) => q.endpoint)).toEqual([NODE_SERVICES, ALL, POOLS]);
    const slow = r.set.all('couchbase_search_slow_queries').reduce((a, s) => a + s.value, 0);
    expect(slow).toBe(2);
    expect(r.set.get('couchbase_search_active_query_max_duration_seconds', { index: 'travel-hotels' })).toBeGreaterThan(42);
    const fts = sim.ctx.nodes.filter((n) => n.services.includes('fts'));
    const perNode = r.set.all('couchbase_search_node_active_queries');
    expect(perNode.length).toBeGreaterThan(0);
    // The join: node is the host:port every other family uses, node_uuid the uuid of the query key.
    for (const s of perNode) expect(fts.map((n) => [n.hostname, n.uuid])).toContainEqual([s.labels.node, s.labels.node_uuid]);
  });

  it('a hanging /pools/default (the optional node-name lookup) costs the per-node series only: the poll succeeds within its deadline', async () => {
    sim.ctx.faults.add({ match: '/pools/default', kind: 'hang' });
    try {
      const state = new Map<string, unknown>();
      const { log } = captureLog();
      const opts = { timeout: '2s' } as unknown as Partial<CollectorOptions<'search'>>;
      const r = await pollWithLog(client, opts, state, log, null);
      expect(r.ok, String(r.error)).toBe(true);
      expect(r.set.get('couchbase_search_total_active_queries', {})).toBeGreaterThan(0);
      expect(r.set.all('couchbase_search_slow_queries').reduce((a, x) => a + x.value, 0)).toBe(2);
      expect(r.set.all('couchbase_search_node_active_queries')).toEqual([]);
      expect(Object.fromEntries(r.itemErrors)).toEqual({ timeout: 1 });
    } finally {
      sim.ctx.faults.clear();
    }
  });

  it('cancels the runaways for real, once each, and counts them', async () => {
    const state = new Map<string, unknown>();
    const { log, lines } = captureLog();
    const opts = { cancel: { enabled: true, longer_than: '10s', dry_run: false } } as unknown as Partial<CollectorOptions<'search'>>;
    const r1 = await pollWithLog(client, opts, state, log, null);
    expect(r1.ok, String(r1.error)).toBe(true);
    expect(r1.set.get('couchbase_search_queries_cancelled_total', { index: 'travel-hotels', result: 'cancelled' })).toBe(2);
    expect(lines.filter((l) => l.result === 'cancelled')).toHaveLength(2);
    // The simulator restarted them (new ids, young): nothing slow, nothing more to cancel.
    const r2 = await pollWithLog(client, opts, state, log, null);
    expect(r2.requests.filter((q) => q.endpoint === CANCEL)).toEqual([]);
    expect(r2.set.get('couchbase_search_queries_cancelled_total', { index: 'travel-hotels', result: 'cancelled' })).toBe(2);
    expect(r2.set.get('couchbase_search_slow_queries', { index: 'travel-hotels' })).toBe(0);
  });
});

describe('search collector against the simulator: refused cancels', () => {
  it('counts a 403 as forbidden, once', async () => {
    const sim = createSimulator({ scenario: 'demo', knobs: { searchCancelForbidden: true } });
    const url = await sim.listen();
    const client = createClient({ cluster: 't', url, username: 'Administrator', password: 'password' });
    try {
      const state = new Map<string, unknown>();
      const { log, lines } = captureLog();
      const opts = { cancel: { enabled: true, longer_than: '10s', dry_run: false } } as unknown as Partial<CollectorOptions<'search'>>;
      for (let i = 0; i < 2; i++) {
        const r = await pollWithLog(client, opts, state, log, null);
        expect(r.ok, String(r.error)).toBe(true);
        expect(r.set.get('couchbase_search_queries_cancelled_total', { index: 'travel-hotels', result: 'forbidden' })).toBe(1);
        expect(r.set.get('couchbase_search_slow_queries', { index: 'travel-hotels' })).toBe(1);
      }
      const refused = lines.filter((l) => l.result === 'forbidden');
      expect(refused).toHaveLength(1);
      expect(String(refused[0]?.error)).toContain('cluster.fts!manage');
    } finally {
      await client.close();
      await sim.close();
    }
  });

  it('counts an injected 500 as failed', async () => {
    const sim = createSimulator({ scenario: 'demo' });
    const url = await sim.listen();
    sim.ctx.faults.add({ match: '/api/query/:queryID/cancel', kind: 'status', status: 500 });
    const client = createClient({ cluster: 't', url, username: 'Administrator', password: 'password' });
    try {
      const opts = { cancel: { enabled: true, longer_than: '10s', dry_run: false } } as unknown as Partial<CollectorOptions<'search'>>;
      const r = await pollWithLog(client, opts, new Map(), pino({ level: 'silent' }), null);
      expect(r.ok).toBe(true);
      expect(r.set.get('couchbase_search_queries_cancelled_total', { index: 'travel-hotels', result: 'failed' })).toBe(1);
    } finally {
      await client.close();
      await sim.close();
    }
  });
});

describe('parseActiveQueries', () => {
  it('reads both key formats', () => {
    const seen = (p: unknown) => parseActiveQueries(activeQueriesSchema.parse(p), () => undefined).map((q) => `${q.node ?? '-'}/${q.id}/${q.index}`);
    expect(seen(q70()).sort()).toEqual(['-/10/DemoIndex1', '-/11/DemoIndex2', '-/9/DemoIndex']);
    expect(seen(q71())[3]).toBe('f76b2d51397feee28c1e757ed426ef93/3/DemoIndex1');
  });
});

describe('nodeNamesBudgetMs', () => {
  it('a quarter of the deadline, at most half of what is left, never negative', () => {
    expect(nodeNamesBudgetMs(10_000, 0)).toBe(2500);
    expect(nodeNamesBudgetMs(10_000, 7000)).toBe(1500);
    expect(nodeNamesBudgetMs(10_000, 12_000)).toBe(0);
  });

  it('whole milliseconds past half the deadline (the elapsed time is fractional), which AbortSignal.timeout accepts', () => {
    // (10000 - 5000.5) / 2 = 2499.75: a fraction made AbortSignal.timeout throw ERR_OUT_OF_RANGE and fail the poll.
    expect(nodeNamesBudgetMs(10_000, 5000.5)).toBe(2499);
    expect(nodeNamesBudgetMs(10_001, 0)).toBe(2500);
    expect(nodeNamesBudgetMs(2000, 1999.25)).toBe(0);
    for (const [timeout, elapsed] of [[10_000, 5000.5], [10_001, 0.3], [333, 200.123], [5000, 4999.999], [100, 250.5]] as const) {
      const ms = nodeNamesBudgetMs(timeout, elapsed);
      expect(Number.isInteger(ms) && ms >= 0, `${timeout}/${elapsed} -> ${ms}`).toBe(true);
      expect(() => AbortSignal.timeout(Math.max(1, ms))).not.toThrow();
    }
  });

  it('0 for a deadline or elapsed time that is not a number', () => {
    expect(nodeNamesBudgetMs(Number.NaN, 0)).toBe(0);
    expect(nodeNamesBudgetMs(10_000, Number.NaN)).toBe(0);
  });
});

describe('search collector against a slow simulator', () => {
  let sim: Simulator;
  let client: CouchbaseClient;

  beforeAll(async () => {
    // Every request answers after 1.6 s: nodeServices and /api/query take 3.2 s or more of a 6 s deadline, past its
    // half, so the node-name lookup gets half of what is left: at most 1.4 s, and a fraction before the fix (a
    // RangeError from AbortSignal.timeout). The poll still ends 1.4 s or so before its deadline on a loaded machine.
    sim = createSimulator({ scenario: 'demo', latencyMs: 1600, knobs: { searchRunaways: 2 } });
    const url = await sim.listen();
    client = createClient({ cluster: 't', url, username: 'Administrator', password: 'password' });
  });
  afterAll(async () => {
    await client?.close();
    await sim?.close();
  });

  it('past half its deadline the poll still succeeds: the node-name lookup gets whole milliseconds and only costs the per-node series', async () => {
    const { log, lines } = captureLog();
    const opts = { timeout: '6s' } as unknown as Partial<CollectorOptions<'search'>>;
    const r = await pollWithLog(client, opts, new Map(), log, null);
    expect(r.ok, String(r.error)).toBe(true);
    expect(r.requests.map((q) => q.endpoint)).toEqual([NODE_SERVICES, ALL, POOLS]);
    expect(r.set.all('couchbase_search_slow_queries').reduce((a, x) => a + x.value, 0)).toBe(2);
    // /pools/default answers after 1.6 s, beyond the lookup's bound of at most 1.4 s: an item error, no per-node series.
    expect(r.set.all('couchbase_search_node_active_queries')).toEqual([]);
    expect(Object.fromEntries(r.itemErrors)).toEqual({ timeout: 1 });
    expect(JSON.stringify(lines)).not.toContain('out of range');
  });
});
