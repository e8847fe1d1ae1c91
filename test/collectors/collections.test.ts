import { execFileSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { collectionsCollector, parseUid } from '../../src/collectors/collections.js';
import { collect, fakeClient, FIXTURES, loadFixture, simulatorWithClient } from '../helpers/collect.js';
import { missing, requireBinary } from '../helpers/tools.js';

/** Checked once: a missing promtool skips its tests visibly (and fails under CI=true), never silently. */
const PROMTOOL = requireBinary('promtool');

const LIST = '/pools/default/buckets';
const SCOPES = '/pools/default/buckets/{bucket}/scopes';

/** Every scopes fixture, one per bucket of a fake cluster, so one golden covers 6.5 dev preview to 7.6+. */
const FILES = readdirSync(join(FIXTURES, 'pools-default-buckets-name-scopes')).filter((f) => f.endsWith('.json')).sort();
const bucketOf = (f: string): string => f.replace(/^docs-server-/, '').replace(/\.json$/, '');

describe('collections collector on real fixtures', () => {
  it('matches the golden exposition for every scopes fixture (6.5 developer preview to 7.6+)', async () => {
    expect(FILES.length).toBeGreaterThanOrEqual(5);
    const client = fakeClient({
      [LIST]: FILES.map((f) => ({ name: bucketOf(f), bucketType: 'membase' })),
      [SCOPES]: (p: Record<string, string>) => loadFixture(`pools-default-buckets-name-scopes/docs-server-${p.bucket}.json`),
    });
    const r = await collect(collectionsCollector, client);
    expect(r.ok, String(r.error)).toBe(true);
    expect(r.skipped.size).toBe(0);
    await expect(r.text).toMatchFileSnapshot('../golden/collections.prom');
  });

  it('counts scopes, collections per bucket and per scope, and reads the hex manifest uid', async () => {
    const client = fakeClient({ [LIST]: [{ name: 'travel-sample' }], [SCOPES]: loadFixture('pools-default-buckets-name-scopes/docs-server-7.6plus.json') });
    const r = await collect(collectionsCollector, client);
    expect(r.set.get('couchbase_bucket_scopes', { bucket: 'travel-sample' })).toBe(2);
    expect(r.set.get('couchbase_bucket_collections', { bucket: 'travel-sample' })).toBe(5);
    expect(r.set.get('couchbase_scope_collections', { bucket: 'travel-sample', scope: '_system' })).toBe(2);
    expect(r.set.get('couchbase_bucket_manifest_uid', { bucket: 'travel-sample' })).toBe(3);
    expect(parseUid('a')).toBe(10);
    expect(parseUid('1f')).toBe(31);
    expect(parseUid('zz')).toBeUndefined();
    expect(parseUid(undefined)).toBeUndefined();
  });

  it('skips and counts a bucket deleted between the list and its scopes call, and counts a manifest that does not parse as an item error; asks no memcached bucket', async () => {
    const client = fakeClient({
      [LIST]: [{ name: 'gone' }, { name: 'odd' }, { name: 'cache', bucketType: 'memcached' }, { name: 'ok', bucketType: 'couchbase' }],
      [SCOPES]: (p: Record<string, string>) =>
        p.bucket === 'gone' ? { status: 404, text: 'Requested resource not found.' } : p.bucket === 'odd' ? { scopes: 'nope' } : loadFixture('pools-default-buckets-name-scopes/docs-server-6.6-7.2-minimal.json'),
    });
    const r = await collect(collectionsCollector, client);
    expect(r.ok, String(r.error)).toBe(true);
    expect(r.skipped.get('bucket_not_found')).toBe(1);
    expect(r.itemErrors.get('bad_body')).toBe(1);
    expect(r.set.get('couchbase_bucket_collections', { bucket: 'ok' })).toBe(1);
    expect(r.set.get('couchbase_bucket_scopes', { bucket: 'gone' })).toBeUndefined();
    expect(client.calls.filter((c) => c.route === SCOPES).map((c) => c.params.bucket)).toEqual(['gone', 'odd', 'ok']);
  });

  it('emits no uid when the manifest has none (not 0)', async () => {
    const r = await collect(collectionsCollector, fakeClient({ [LIST]: [{ name: 'b' }], [SCOPES]: { scopes: [] } }));
    expect(r.set.get('couchbase_bucket_scopes', { bucket: 'b' })).toBe(0);
    expect(r.set.get('couchbase_bucket_manifest_uid', { bucket: 'b' })).toBeUndefined();
  });

  it('fails the poll when the bucket list fails, or when the scopes call of every bucket fails', async () => {
    for (const list of [{ status: 500, text: 'x' }, { fail: 'invalid_json' as const }]) {
      const r = await collect(collectionsCollector, fakeClient({ [LIST]: list }));
      expect(r.ok).toBe(false);
    }
    const r = await collect(collectionsCollector, fakeClient({ [LIST]: [{ name: 'b' }], [SCOPES]: { status: 503, text: 'x' } }));
    expect(r.ok).toBe(false);
  });

  it.skipIf(PROMTOOL === undefined)('golden file passes promtool check metrics', () => {
    const promtool = PROMTOOL as string;
    const input = execFileSync('cat', [join(import.meta.dirname, '..', 'golden', 'collections.prom')]);
    expect(execFileSync(promtool, ['check', 'metrics'], { input, encoding: 'utf8' })).toBe('');
  });
});

describe('collections collector against the simulator', () => {
  const t = simulatorWithClient({ buckets: 4 });

  it('reads the scopes of every bucket, with _default and _system in each', async () => {
    const r = await collect(collectionsCollector, t.client);
    expect(r.ok, String(r.error)).toBe(true);
    for (const b of t.sim.ctx.buckets) {
      expect(r.set.get('couchbase_scope_collections', { bucket: b.name, scope: '_system' })).toBe(2);
      expect(r.set.get('couchbase_bucket_scopes', { bucket: b.name })).toBeGreaterThanOrEqual(2);
      expect(r.set.get('couchbase_bucket_manifest_uid', { bucket: b.name })).toBeGreaterThan(0);
    }
  });
});
