import { execFileSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { bucketFamilies, bucketsCollector, flushEnabled, mapBuckets } from '../../src/collectors/buckets.js';
import { bucketListSchema } from '../../src/couchbase/buckets.js';
import { createClient } from '../../src/couchbase/client.js';
import { SampleSet } from '../../src/metrics/family.js';
import { collect, fakeClient, FIXTURES, loadFixture, simulatorWithClient } from '../helpers/collect.js';
import { missing, requireBinary } from '../helpers/tools.js';

/** Checked once: a missing promtool skips its tests visibly (and fails under CI=true), never silently. */
const PROMTOOL = requireBinary('promtool');

const LIST = '/pools/default/buckets';

/** One golden per server generation: Membase 1.6, 3.0, 4.6, 5.5 (3 nodes, flush on), 6.6. */
const GOLDEN: Array<[string, string]> = [
  ['docs-server-1.6.0.json', 'buckets-1.6.0.prom'],
  ['telegraf-3.0.1.json', 'buckets-3.0.1.prom'],
  ['appd-4.6.3-2buckets.json', 'buckets-4.6.3.prom'],
  ['goxdcr-5.5.1-3511-k8s.json', 'buckets-5.5.1.prom'],
  ['netdata-go.d-6.6.0.json', 'buckets-6.6.0.prom'],
];

describe('buckets collector on real fixtures', () => {
  for (const [file, golden] of GOLDEN) {
    it(`matches the golden exposition for ${file}`, async () => {
      const r = await collect(bucketsCollector, fakeClient({ [LIST]: loadFixture(`pools-default-buckets/${file}`) }));
      expect(r.ok, String(r.error)).toBe(true);
      await expect(r.text).toMatchFileSnapshot(`../golden/${golden}`);
    });
  }

  it('parses every complete fixture and never exports the SASL password', async () => {
    const dir = join(FIXTURES, 'pools-default-buckets');
    const files = readdirSync(dir).filter((f) => f.endsWith('.json') && !/\.(elided|truncated|fragment|wrapped|invalid)\.json$/.test(f));
    expect(files.length).toBeGreaterThanOrEqual(10);
    for (const f of files) {
      const raw = loadFixture<Array<Record<string, unknown>>>(`pools-default-buckets/${f}`);
      const r = await collect(bucketsCollector, fakeClient({ [LIST]: raw }));
      expect(r.ok, `${f}: ${String(r.error)}`).toBe(true);
      expect(r.set.get('couchbase_buckets')).toBe(raw.length);
      for (const b of raw) {
        const pw = b.saslPassword;
        if (typeof pw === 'string' && pw !== '') expect(r.text).not.toContain(pw);
      }
    }
  });

  it('converts quotaPercentUsed to a 0-1 ratio and reads quota.ram and rawRAM apart', async () => {
    const r = await collect(bucketsCollector, fakeClient({ [LIST]: loadFixture('pools-default-buckets/goxdcr-5.5.1-3511-k8s.json') }));
    expect(r.set.get('couchbase_bucket_quota_used_ratio', { bucket: 'default' })).toBeCloseTo(0.1203015049298604, 12);
    expect(r.set.get('couchbase_bucket_quota_ram_bytes', { bucket: 'default' })).toBe(402653184);
    expect(r.set.get('couchbase_bucket_quota_raw_ram_bytes', { bucket: 'default' })).toBe(134217728);
    expect(r.set.get('couchbase_bucket_flush_enabled', { bucket: 'default' })).toBe(1);
    expect(r.set.get('couchbase_bucket_info', { bucket: 'default', bucket_type: 'membase' })).toBe(1);
  });

  it('keeps the 1.x bucket types and takes flushCacheUri as flush enabled', async () => {
    const r = await collect(bucketsCollector, fakeClient({ [LIST]: loadFixture('pools-default-buckets/docs-server-1.6.0.json') }));
    expect(r.set.get('couchbase_bucket_info', { bucket: 'default' })).toBe(1);
    expect(r.set.all('couchbase_bucket_info').map((s) => s.labels.bucket_type)).toEqual(['couchbase', 'memcached']);
    expect(r.set.get('couchbase_bucket_flush_enabled', { bucket: 'test-application' })).toBe(1);
    expect(r.set.get('couchbase_bucket_basic_hit_ratio', { bucket: 'test-application' })).toBe(0);
    // 1.6 has no dataUsed: nothing, not 0.
    expect(r.set.all('couchbase_bucket_basic_data_used_bytes')).toEqual([]);
  });
});

describe('buckets collector: missing fields', () => {
  it('emits nothing for what a trimmed answer leaves out (6.5.1: only name and basicStats)', async () => {
    const r = await collect(bucketsCollector, fakeClient({ [LIST]: loadFixture('pools-default-buckets/netdata-go.d-6.5.1-basicstats-trimmed.json') }));
    expect(r.ok).toBe(true);
    for (const fam of ['couchbase_bucket_info', 'couchbase_bucket_settings_info', 'couchbase_bucket_quota_ram_bytes', 'couchbase_bucket_replicas', 'couchbase_bucket_flush_enabled', 'couchbase_bucket_max_ttl_seconds']) {
      expect(r.set.all(fam), fam).toEqual([]);
    }
    expect(r.set.all('couchbase_bucket_basic_items')).toHaveLength(4);
  });

  it('emits nothing for null basic stats and a bucket with no basicStats at all', async () => {
    const payload = [
      { name: 'a', bucketType: 'membase', basicStats: { quotaPercentUsed: null, opsPerSec: null, itemCount: 5 } },
      { name: 'b', bucketType: 'memcached' },
    ];
    const r = await collect(bucketsCollector, fakeClient({ [LIST]: payload }));
    expect(r.ok).toBe(true);
    expect(r.set.all('couchbase_bucket_quota_used_ratio')).toEqual([]);
    expect(r.set.all('couchbase_bucket_basic_ops_per_second')).toEqual([]);
    expect(r.set.get('couchbase_bucket_basic_items', { bucket: 'a' })).toBe(5);
    expect(r.set.all('couchbase_bucket_basic_items')).toHaveLength(1);
    expect(r.set.get('couchbase_buckets')).toBe(2);
  });

  it('says nothing about flush when neither controllers nor flushCacheUri is present', () => {
    const [b] = bucketListSchema.parse([{ name: 'x' }]);
    expect(b && flushEnabled(b)).toBeUndefined();
    const [c] = bucketListSchema.parse([{ name: 'x', controllers: { compactAll: '/c' } }]);
    expect(c && flushEnabled(c)).toBe(false);
  });

  it('an empty cluster has zero buckets and no per-bucket series', () => {
    const out = new SampleSet();
    mapBuckets([], out);
    expect(out.get('couchbase_buckets')).toBe(0);
    expect(out.size).toBe(1);
  });
});

describe('buckets collector: failures', () => {
  it('fails on an HTTP error', async () => {
    const r = await collect(bucketsCollector, fakeClient({ [LIST]: { status: 500, text: 'boom' } }));
    expect(r.ok).toBe(false);
    expect((r.error as { code?: string }).code).toBe('CBW_ERR_HTTP');
  });
  it('fails on a body that is not JSON', async () => {
    const r = await collect(bucketsCollector, fakeClient({ [LIST]: { fail: 'invalid_json' } }));
    expect(r.ok).toBe(false);
    expect((r.error as { code?: string }).code).toBe('CBW_ERR_SCHEMA');
  });
  it('fails on schema drift (the list is not an array)', async () => {
    const r = await collect(bucketsCollector, fakeClient({ [LIST]: { buckets: [] } }));
    expect(r.ok).toBe(false);
    expect((r.error as { code?: string }).code).toBe('CBW_ERR_SCHEMA');
  });
  it('fails with the missing permission on 403', async () => {
    const r = await collect(bucketsCollector, fakeClient({ [LIST]: { status: 403, body: { message: 'Forbidden', permissions: ['cluster.bucket[.].settings!read'] } } }));
    expect(r.ok).toBe(false);
    expect((r.error as { code?: string; permissions?: string[] }).permissions).toEqual(['cluster.bucket[.].settings!read']);
  });
});

describe('buckets exposition passes promtool check metrics', () => {
  // The same text as the golden files (rendered again, so the check never reads a stale or missing file).
  it.skipIf(PROMTOOL === undefined).each(GOLDEN)('%s', async (file) => {
    const promtool = PROMTOOL as string;
    const r = await collect(bucketsCollector, fakeClient({ [LIST]: loadFixture(`pools-default-buckets/${file}`) }));
    expect(execFileSync(promtool, ['check', 'metrics'], { input: r.text, encoding: 'utf8' })).toBe('');
  });
});

describe('buckets collector against the simulator', () => {
  const t = simulatorWithClient({ buckets: 5 });

  it('reports every simulated bucket, with URL-unsafe names intact', async () => {
    const r = await collect(bucketsCollector, t.client);
    expect(r.ok, String(r.error)).toBe(true);
    expect(r.set.get('couchbase_buckets')).toBe(5);
    const names = r.set.all('couchbase_bucket_info').map((s) => s.labels.bucket);
    expect(names.sort()).toEqual(t.sim.ctx.buckets.map((b) => b.name).sort());
    for (const b of t.sim.ctx.buckets) {
      expect(r.set.get(bucketFamilies.quotaRawRam.name, { bucket: b.name })).toBe(b.ramQuotaBytes);
      expect(r.set.get(bucketFamilies.flush.name, { bucket: b.name })).toBe(b.flushEnabled ? 1 : 0);
      expect(r.set.get(bucketFamilies.replicas.name, { bucket: b.name })).toBe(b.replicaNumber);
      const used = r.set.get(bucketFamilies.quotaUsed.name, { bucket: b.name });
      expect(used).toBeGreaterThan(0);
      expect(used).toBeLessThan(1);
    }
    expect(r.set.get('couchbase_bucket_info', { bucket: 'orders.eu', bucket_type: 'ephemeral' })).toBe(1);
  });

  it('fails with CBW_ERR_AUTH on a wrong password', async () => {
    const bad = createClient({ cluster: 't', url: t.sim.ctx.baseUrl(), username: 'Administrator', password: 'nope' });
    try {
      const r = await collect(bucketsCollector, bad);
      expect(r.ok).toBe(false);
      expect((r.error as { code?: string }).code).toBe('CBW_ERR_AUTH');
    } finally {
      await bad.close();
    }
  });
});

describe('one bad bucket entry (issue 11, item 3)', () => {
  it('leaves that bucket out, counts it as an item error, and keeps its neighbours', async () => {
    const client = fakeClient({
      '/pools/default/buckets': [{ name: 'good', bucketType: 'membase', quota: { ram: 104857600 } }, { name: 'bad', quota: 'not an object' }, { name: 'also-good', bucketType: 'ephemeral' }],
    });
    const r = await collect(bucketsCollector, client);
    expect(r.ok).toBe(true);
    expect(r.itemErrors).toEqual(new Map([['bad_body', 1]]));
    const buckets = r.set.all('couchbase_bucket_info').map((s) => s.labels.bucket).sort();
    expect(buckets).toEqual(['also-good', 'good']);
  });

  it('fails the poll when every entry is bad', async () => {
    const client = fakeClient({ '/pools/default/buckets': [{ name: 1 }, 'x'] });
    const r = await collect(bucketsCollector, client);
    expect(r.ok).toBe(false);
  });
});
