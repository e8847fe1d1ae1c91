import { crc32, gunzipSync, inflateRawSync } from 'node:zlib';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { LocalView } from '../../src/collection/engine.js';
import type { PollOutcome } from '../../src/collectors/context.js';
import { defineFamily, SampleSet } from '../../src/metrics/family.js';
import { Exposition } from '../../src/metrics/exposition.js';
import { startProcessMetrics } from '../../src/metrics/process.js';
import { SnapshotStore } from '../../src/metrics/store.js';
import { buildApp } from '../../src/server/app.js';

const fam = defineFamily('buckets', 'couchbase_bucket_fake_bytes', 'gauge', 'Fake.', ['bucket'], 'bytes');

function outcome(ok: boolean, value = 1, error?: unknown): PollOutcome {
  const set = new SampleSet();
  if (ok) set.add(fam, { bucket: '<b>' }, value);
  return { collector: 'buckets', ok, set, error, durationSeconds: 0.012, requests: [{ endpoint: '/pools/default/buckets', method: 'GET', status: ok ? 200 : 500, code: ok ? '200' : '500', durationSeconds: 0.01, error: undefined }], skipped: new Map(), itemErrors: new Map(), notApplicable: undefined, finishedAt: 1_700_000_000_000 };
}

function app(authorize?: (h: string | undefined) => Promise<boolean>) {
  const store = new SnapshotStore();
  store.register('prod', 'buckets');
  const view = new LocalView(store);
  const exposition = new Exposition(view, { processMetrics: false });
  const a = buildApp({
    store: view,
    exposition,
    config: { clusters: [{ name: 'prod', url: 'http://cb:8091' } as never], webhooks: { syncGateway: undefined } },
    log: pino({ level: 'silent' }),
    ...(authorize ? { authorize } : {}),
  });
  return { a, store };
}

describe('http app', () => {
  it('is not ready before the first poll, ready after', async () => {
    const { a, store } = app();
    expect((await a.inject('/-/ready')).statusCode).toBe(503);
    expect((await a.inject('/-/healthy')).statusCode).toBe(200);
    store.record('prod', outcome(false, 0, new Error('boom')));
    expect((await a.inject('/-/ready')).statusCode).toBe(200);
  });

  it('serves the snapshot with status families, and drops series on failure', async () => {
    const { a, store } = app();
    store.record('prod', outcome(true, 42));
    let res = await a.inject('/metrics');
    expect(res.headers['content-type']).toContain('text/plain; version=0.0.4');
    expect(res.body).toContain('couchbase_bucket_fake_bytes{couchbase_cluster="prod",bucket="<b>"} 42');
    expect(res.body).toContain('cbwatch_collector_success{couchbase_cluster="prod",collector="buckets"} 1');
    expect(res.body).toContain('cbwatch_collector_last_success_timestamp_seconds{couchbase_cluster="prod",collector="buckets"} 1700000000');
    expect(res.body).toContain('couchbase_up{couchbase_cluster="prod"} 1');
    expect(res.body).toMatch(/cbwatch_build_info\{version="[^"]+",revision="[^"]+",branch="[^"]+",build_date="[^"]+",nodejs_version="v\d+/);
    store.record('prod', outcome(false, 0, new Error('boom')));
    res = await a.inject('/metrics');
    expect(res.body).not.toContain('couchbase_bucket_fake_bytes{');
    expect(res.body).toContain('cbwatch_collector_success{couchbase_cluster="prod",collector="buckets"} 0');
    expect(res.body).toContain('couchbase_up{couchbase_cluster="prod"} 0');
    // last success survives the failure
    expect(res.body).toContain('cbwatch_collector_last_success_timestamp_seconds{couchbase_cluster="prod",collector="buckets"} 1700000000');
  });

  it('gzips when asked, with identical content', async () => {
    const { a, store } = app();
    store.record('prod', outcome(true, 7));
    const plain = await a.inject('/metrics');
    const gz = await a.inject({ url: '/metrics', headers: { 'accept-encoding': 'gzip, deflate' } });
    expect(gz.headers['content-encoding']).toBe('gzip');
    expect(gunzipSync(gz.rawPayload).toString('utf8')).toBe(plain.body);
    expect(Number(plain.headers['content-length'])).toBe(plain.rawPayload.length);
    expect(Number(gz.headers['content-length'])).toBe(gz.rawPayload.length);
  });

  it('honours the quality of gzip in Accept-Encoding (issue 39, item 7)', async () => {
    const { a, store } = app();
    store.record('prod', outcome(true, 7));
    // Hand-written from RFC 9110 12.5.3: q=0 means "not acceptable"; a coding not listed is not asked for.
    const cases: Array<[string, string | undefined]> = [
      ['gzip', 'gzip'],
      ['gzip;q=0', undefined],
      ['gzip; q=0.000', undefined],
      ['GZIP;Q=0', undefined],
      ['deflate, gzip;q=0', undefined],
      ['gzip;q=0.5', 'gzip'],
      ['gzip;q=1.0, identity;q=0.5', 'gzip'],
      ['x-gzip', 'gzip'],
      ['identity', undefined],
      ['deflate, br', undefined],
      ['*', undefined],
      ['gzip;q=abc', undefined],
    ];
    for (const [header, expected] of cases) {
      const res = await a.inject({ url: '/metrics', headers: { 'accept-encoding': header } });
      expect([header, res.statusCode, res.headers['content-encoding']]).toEqual([header, 200, expected]);
    }
  });

  it('writes the gzip body as one member spliced from the parts, decoded whole', async () => {
    const store = new SnapshotStore();
    store.register('prod', 'buckets');
    store.record('prod', outcome(true, 7));
    startProcessMetrics();
    const exposition = new Exposition(new LocalView(store), { processMetrics: true });
    const body = await exposition.body(true);
    const plain = await exposition.body(false);
    // Plain: one buffer per part (collector parts, request metrics, statuses, live self-metrics, process
    // metrics), never joined; gzip: header, each part's deflate blocks, final block and trailer, joined once.
    expect(plain.chunks.length).toBeGreaterThanOrEqual(3);
    expect(body.chunks).toHaveLength(1);
    const gz = Buffer.concat(body.chunks);
    expect(gz.length).toBe(body.length);
    // One member, not several: the raw deflate stream between header and trailer holds everything,
    // and the trailer's CRC-32 and length are those of the whole text.
    const inner = inflateRawSync(gz.subarray(10, gz.length - 8));
    expect(gz.readUInt32LE(gz.length - 8)).toBe(crc32(inner));
    expect(gz.readUInt32LE(gz.length - 4)).toBe(inner.length);
    const text = gunzipSync(gz).toString('utf8');
    expect(inner.toString('utf8')).toBe(text);
    expect(text).toContain('couchbase_bucket_fake_bytes{couchbase_cluster="prod",bucket="<b>"} 7');
    expect(text).toContain('process_resident_memory_bytes');
    // Process and Node.js runtime metrics (event-loop lag, active resources) are re-read once a second: compare the
    // rest, which a second boundary cannot change.
    const steady = (t: string): string => t.split('\n').filter((l) => !/^(process|nodejs)_/.test(l)).join('\n');
    expect(steady(text)).toBe(steady(await exposition.text()));
  });

  it('memoises the joined gzip body until a part changes', async () => {
    const store = new SnapshotStore();
    store.record('prod', outcome(true, 7));
    const exposition = new Exposition(new LocalView(store), { processMetrics: false });
    const a = await exposition.body(true);
    const b = await exposition.body(true);
    expect(b.chunks[0]).toBe(a.chunks[0]);
    store.record('prod', outcome(true, 8));
    const c = await exposition.body(true);
    expect(c.chunks[0]).not.toBe(a.chunks[0]);
    expect(gunzipSync(Buffer.concat(c.chunks)).toString('utf8')).toContain('bucket="<b>"} 8');
  });

  it('memoises: the same bytes until the store changes', async () => {
    const { a, store } = app();
    store.record('prod', outcome(true, 7));
    const r1 = await a.inject('/metrics');
    const r2 = await a.inject('/metrics');
    // The served-requests counter is the one family that moves on its own (refreshed each second, counting these
    // very scrapes): two scrapes across its refresh differ there only (a CI run saw 16 against 17).
    const steady = (body: string) => body.split('\n').filter((l) => !l.startsWith('cbwatch_http_requests_served_total')).join('\n');
    expect(steady(r2.body)).toBe(steady(r1.body));
    store.record('prod', outcome(true, 8));
    expect((await a.inject('/metrics')).body).toContain('} 8');
  });

  it('the landing page escapes what it shows', async () => {
    const { a, store } = app();
    store.record('prod', outcome(false, 0, new Error('<script>alert(1)</script>')));
    const res = await a.inject('/');
    expect(res.headers['content-type']).toContain('text/html');
    expect(res.body).toContain('&lt;script&gt;');
    expect(res.body).not.toContain('<script>alert');
    expect(res.body).toContain('failed');
  });

  it('guards everything but health with basic auth when configured', async () => {
    const { a } = app(async (h) => h === `Basic ${Buffer.from('u:p').toString('base64')}`);
    expect((await a.inject('/metrics')).statusCode).toBe(401);
    expect((await a.inject('/-/healthy')).statusCode).toBe(200);
    const ok = await a.inject({ url: '/metrics', headers: { authorization: `Basic ${Buffer.from('u:p').toString('base64')}` } });
    expect(ok.statusCode).toBe(200);
  });
});
