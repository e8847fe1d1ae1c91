import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { indexCollector } from '../../src/collectors/index-service.js';
import { indexStateLabel, parseLastScanTime } from '../../src/collectors/index-state.js';
import { collect, fakeClient, loadFixture } from '../helpers/collect.js';
import { requireBinary } from '../helpers/tools.js';

const PROMTOOL = requireBinary('promtool');
const STATUS = '/indexStatus';
const NS = '/pools/default/nodeServices';
/** Two nodes, both running the Index service. */
const WITH_INDEX = { nodesExt: [{ services: { mgmt: 8091, indexHttp: 9102, indexAdmin: 9100 }, thisNode: true }, { hostname: 'node2.example.com', services: { mgmt: 8091, indexHttp: 9102 } }] };
const V76 = loadFixture('indexStatus/handbuilt-7.6.json');
const V66 = loadFixture('indexStatus/handbuilt-6.6.5.json');

const I = (bucket: string, scope: string, collection: string, index: string, replica = '0') => ({ bucket, scope, collection, index, replica });

describe('index collector: /indexStatus on a 7.x shape', () => {
  it('matches the golden exposition', async () => {
    const r = await collect(indexCollector, fakeClient({ [NS]: WITH_INDEX, [STATUS]: V76 }));
    expect(r.ok, String(r.error)).toBe(true);
    await expect(r.text).toMatchFileSnapshot('../golden/index-7.6.prom');
  });

  it('exports one-hot states per replica, progress as a ratio, the last scan time and the nodes of each partition (values by hand from the fixture)', async () => {
    const r = await collect(indexCollector, fakeClient({ [NS]: WITH_INDEX, [STATUS]: V76 }));
    const airline0 = I('travel-sample', 'inventory', 'airline', 'def_inventory_airline_primary', '0');
    const airline1 = I('travel-sample', 'inventory', 'airline', 'def_inventory_airline_primary', '1');
    expect(r.set.get('couchbase_index_state', { ...airline0, state: 'ready' })).toBe(1);
    expect(r.set.get('couchbase_index_state', { ...airline0, state: 'building' })).toBe(0);
    expect(r.set.get('couchbase_index_state', { ...airline1, state: 'ready' })).toBe(1);
    // "Mon Dec  7 14:05:09 UTC 2026"
    expect(r.set.get('couchbase_index_last_scan_timestamp_seconds', airline0)).toBe(Date.UTC(2026, 11, 7, 14, 5, 9) / 1000);
    // "NA": never scanned, no series.
    expect(r.set.get('couchbase_index_last_scan_timestamp_seconds', airline1)).toBeUndefined();
    expect(r.set.get('couchbase_index_node_partitions', { ...airline0, node: 'node1.example.com:8091' })).toBe(1);
    expect(r.set.get('couchbase_index_node_partitions', { ...airline1, node: 'node2.example.com:8091' })).toBe(1);
    const city = I('travel-sample', 'inventory', 'hotel', 'idx_hotel_city');
    expect(r.set.get('couchbase_index_state', { ...city, state: 'building' })).toBe(1);
    expect(r.set.get('couchbase_index_build_progress_ratio', city)).toBe(0.42);
    expect(r.set.get('couchbase_index_node_partitions', { ...city, node: 'node1.example.com:8091' })).toBe(4);
    expect(r.set.get('couchbase_index_node_partitions', { ...city, node: 'node2.example.com:8091' })).toBe(4);
    const deferred = I('travel-sample', '_default', '_default', 'idx_deferred');
    expect(r.set.get('couchbase_index_state', { ...deferred, state: 'created' })).toBe(1);
    expect(r.set.get('couchbase_index_build_progress_ratio', deferred)).toBe(0);
    expect(r.set.get('couchbase_index_state', { ...I('beer-sample', '_default', '_default', 'idx_broken'), state: 'error' })).toBe(1);
    // "Building (Upgrading)" counts as building; "+0100" is an offset: 23:59:59 at +01:00 is 22:59:59 UTC.
    const upgrade = I('beer-sample', '_default', '_default', 'idx_upgrade');
    expect(r.set.get('couchbase_index_state', { ...upgrade, state: 'building' })).toBe(1);
    expect(r.set.get('couchbase_index_last_scan_timestamp_seconds', upgrade)).toBe(Date.UTC(2026, 11, 6, 22, 59, 59) / 1000);
    expect(r.set.get('couchbase_index_status_stale')).toBe(0);
    // 6 replicas × 8 states.
    expect(r.set.families().find((f) => f.def.name === 'couchbase_index_state')?.samples.length).toBe(48);
  });

  it.skipIf(PROMTOOL === undefined)('golden file passes promtool check metrics', () => {
    const input = readFileSync(join(import.meta.dirname, '..', 'golden', 'index-7.6.prom'));
    expect(execFileSync(PROMTOOL as string, ['check', 'metrics'], { input, encoding: 'utf8' })).toBe('');
  });
});

describe('index collector: /indexStatus on a 6.6.5 shape', () => {
  it('matches the golden exposition', async () => {
    const r = await collect(indexCollector, fakeClient({ [NS]: WITH_INDEX, [STATUS]: V66 }));
    expect(r.ok, String(r.error)).toBe(true);
    await expect(r.text).toMatchFileSnapshot('../golden/index-6.6.5.prom');
  });

  it('puts a pre-collections index in _default._default, takes the replica from the display name, and shows the stale warning', async () => {
    const r = await collect(indexCollector, fakeClient({ [NS]: WITH_INDEX, [STATUS]: V66 }));
    expect(r.ok, String(r.error)).toBe(true);
    expect(r.set.get('couchbase_index_state', { ...I('travel-sample', '_default', '_default', 'def_type', '0'), state: 'ready' })).toBe(1);
    expect(r.set.get('couchbase_index_state', { ...I('travel-sample', '_default', '_default', 'def_type', '1'), state: 'ready' })).toBe(1);
    expect(r.set.get('couchbase_index_node_partitions', { ...I('travel-sample', '_default', '_default', 'def_type', '1'), node: 'node2.example.com:8091' })).toBe(1);
    expect(r.set.get('couchbase_index_state', { ...I('travel-sample', '_default', '_default', 'idx_deferred'), state: 'created' })).toBe(1);
    // The warning of a stale cache: the states are still exported (the last known ones), flagged and noted.
    expect(r.set.get('couchbase_index_status_stale')).toBe(1);
    expect(r.note).toContain('Cannot communicate with indexer process');
  });

  it('bounds the warnings Couchbase sends before they reach the note: the first, cut, and a count of the rest', async () => {
    const long = `${'x'.repeat(5_000)} tail`;
    const body = { ...(V66 as Record<string, unknown>), warnings: [long, 'second', 'third'] };
    const r = await collect(indexCollector, fakeClient({ [NS]: WITH_INDEX, [STATUS]: body }));
    expect(r.ok, String(r.error)).toBe(true);
    expect(r.note?.length ?? 0).toBeLessThan(400);
    expect(r.note).not.toContain('tail');
    expect(r.note).toContain('(and 2 more warnings)');
  });
});

describe('index collector: missing fields, items and failures', () => {
  it('emits nothing for a missing status, progress, last scan time or placement (not zeros)', async () => {
    const r = await collect(indexCollector, fakeClient({ [NS]: WITH_INDEX, [STATUS]: { indexes: [{ indexName: 'bare', bucket: 'b' }] } }));
    expect(r.ok, String(r.error)).toBe(true);
    expect(r.set.families().map((f) => f.def.name)).toEqual(['couchbase_index_status_stale']);
    expect(r.set.get('couchbase_index_status_stale')).toBe(0);
  });

  it('skips an entry that does not parse as a failed item and keeps its neighbours', async () => {
    const good = (V76 as { indexes: unknown[] }).indexes[0];
    const r = await collect(indexCollector, fakeClient({ [NS]: WITH_INDEX, [STATUS]: { indexes: [{ indexName: 'no bucket' }, 'x', good] } }));
    expect(r.ok, String(r.error)).toBe(true);
    expect(r.itemErrors.get('bad_body')).toBe(2);
    expect(r.set.get('couchbase_index_state', { ...I('travel-sample', 'inventory', 'airline', 'def_inventory_airline_primary'), state: 'ready' })).toBe(1);
  });

  it('an index that disappears takes its series with it, and unchanged definitions keep the same series', async () => {
    const all = V76 as { indexes: Array<{ indexName: string }> };
    let answer: unknown = all;
    const client = fakeClient({ [NS]: WITH_INDEX, [STATUS]: () => answer });
    const first = await collect(indexCollector, client);
    const again = await collect(indexCollector, client);
    expect(again.text).toBe(first.text);
    answer = { ...all, indexes: all.indexes.filter((i) => i.indexName !== 'idx_broken') };
    const after = await collect(indexCollector, client);
    expect(first.text).toContain('index="idx_broken"');
    expect(after.text).not.toContain('idx_broken');
    expect(after.set.get('couchbase_index_state', { ...I('beer-sample', '_default', '_default', 'idx_upgrade'), state: 'building' })).toBe(1);
  });

  it('a 403 fails the poll naming the missing permission', async () => {
    const r = await collect(indexCollector, fakeClient({ [NS]: WITH_INDEX, [STATUS]: { status: 403, body: { message: 'Forbidden. User needs the following permissions', permissions: ['cluster.collection[.:.:.].n1ql.index!read'] } } }));
    expect(r.ok).toBe(false);
    expect((r.error as { code?: string }).code).toBe('CBW_ERR_FORBIDDEN');
    expect(String((r.error as Error).message)).toContain('cluster.collection[.:.:.].n1ql.index!read');
    expect(r.set.size).toBe(0);
  });

  it('fails the poll on an HTTP error or bad JSON', async () => {
    for (const answer of [{ status: 500, text: 'x' }, { fail: 'invalid_json' as const }, { indexes: 'nope' }]) {
      const r = await collect(indexCollector, fakeClient({ [NS]: WITH_INDEX, [STATUS]: answer }));
      expect(r.ok).toBe(false);
      expect(r.set.size).toBe(0);
    }
  });

  it('costs no request and no error where no node runs the Index service', async () => {
    const client = fakeClient({ [NS]: { nodesExt: [{ services: { mgmt: 8091, kv: 11210, fts: 8094 }, thisNode: true }] }, [STATUS]: V76 });
    const r = await collect(indexCollector, client);
    expect(r.ok).toBe(true);
    expect(r.notApplicable).toBe('no index service');
    expect(client.calls.map((c) => c.route)).toEqual([NS]);
  });
});

describe('index state helpers', () => {
  it('maps every status string of the indexer to its state label', () => {
    expect(['Ready', 'Building', 'Created', 'Moving', 'Error', 'Paused', 'Warmup', 'Not Available'].map(indexStateLabel)).toEqual([
      'ready', 'building', 'created', 'moving', 'error', 'paused', 'warmup', 'not_available',
    ]);
    expect(['Building (Upgrading)', 'Building (Downgrading)', 'Created (Upgrading)', 'Created (Downgrading)'].map(indexStateLabel)).toEqual(['building', 'building', 'created', 'created']);
    expect(indexStateLabel('Scheduled for Creation')).toBe('scheduled_for_creation');
  });

  it('reads Go UnixDate times in UTC or a numeric offset, and nothing else', () => {
    expect(parseLastScanTime('Tue Feb 29 00:00:00 UTC 2028')).toBe(Date.UTC(2028, 1, 29) / 1000);
    expect(parseLastScanTime('Mon Dec  7 14:05:09 GMT 2026')).toBe(Date.UTC(2026, 11, 7, 14, 5, 9) / 1000);
    expect(parseLastScanTime('Mon Dec  7 14:05:09 -0530 2026')).toBe(Date.UTC(2026, 11, 7, 19, 35, 9) / 1000);
    expect(parseLastScanTime('NA')).toBeUndefined();
    expect(parseLastScanTime('Mon Dec  7 14:05:09 CST 2026')).toBeUndefined();
    expect(parseLastScanTime('Mon Feb 30 14:05:09 UTC 2026')).toBeUndefined();
    expect(parseLastScanTime('2026-12-07T14:05:09Z')).toBeUndefined();
  });
});
