/**
 * How /metrics hands its body to the framework (issue 26, item 2): the memoised gzip body (one buffer) is given to
 * fastify as that buffer, so it goes out with the headers in one write as a static file would; through a stream the
 * same bytes cost more than twice the CPU per scrape (bench/RESULTS.md, "Gzip throughput against a static ceiling").
 * The plain body (many parts, megabytes at scale) is still streamed, never joined. Outcomes only, never timings.
 */
import { request } from 'node:http';
import type { IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { gunzipSync } from 'node:zlib';
import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { LocalView } from '../../src/collection/engine.js';
import type { PollOutcome } from '../../src/collectors/context.js';
import { defineFamily, SampleSet } from '../../src/metrics/family.js';
import { Exposition } from '../../src/metrics/exposition.js';
import { OPENMETRICS_CONTENT_TYPE } from '../../src/metrics/openmetrics.js';
import { resetSelf } from '../../src/metrics/self.js';
import { SnapshotStore } from '../../src/metrics/store.js';
import { buildApp } from '../../src/server/app.js';
import type { AppDeps } from '../../src/server/app.js';

const fam = defineFamily('buckets', 'couchbase_bucket_fake_bytes', 'gauge', 'Fake.', ['bucket'], 'bytes');

function outcome(value: number): PollOutcome {
  const set = new SampleSet();
  set.add(fam, { bucket: 'b1' }, value);
  return { collector: 'buckets', ok: true, set, error: undefined, durationSeconds: 0.01, requests: [], skipped: new Map(), itemErrors: new Map(), notApplicable: undefined, finishedAt: 1_700_000_000_000 };
}

/** An app over a store with one collector part, and every payload fastify was handed (an onSend hook sees it). */
function app(extra: Partial<AppDeps> = {}) {
  const store = new SnapshotStore();
  store.register('prod', 'buckets');
  store.record('prod', outcome(42));
  const view = new LocalView(store);
  const exposition = new Exposition(view, { processMetrics: false });
  const payloads: unknown[] = [];
  const a = buildApp({
    store: view,
    exposition,
    config: { clusters: [{ name: 'prod', url: 'http://cb:8091' } as never], webhooks: { syncGateway: undefined } },
    log: pino({ level: 'silent' }),
    plugins: [(f) => void f.addHook('onSend', async (_req, _reply, payload) => void payloads.push(payload))],
    ...extra,
  });
  return { a, exposition, payloads };
}

const open: Array<{ close(): Promise<unknown> }> = [];
afterEach(async () => {
  for (const a of open.splice(0)) await a.close();
});
beforeEach(() => resetSelf());

/** One request over a real socket; the body as received (node:http decodes no content encoding). */
function get(port: number, method: string, headers: Record<string, string> = {}): Promise<{ status: number; headers: IncomingHttpHeaders; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path: '/metrics', method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

/** The exposition without the lines every scrape may change (the count of requests served). */
const steady = (t: string): string =>
  t
    .split('\n')
    .filter((l) => !l.startsWith('cbwatch_http_requests_served'))
    .join('\n');

describe('writing the /metrics body', () => {
  it('hands the memoised gzip body to fastify as the buffer itself, text and OpenMetrics', async () => {
    const { a, exposition, payloads } = app();
    const text = await a.inject({ url: '/metrics', headers: { 'accept-encoding': 'gzip' } });
    expect(text.statusCode).toBe(200);
    expect(Buffer.isBuffer(payloads[0])).toBe(true);
    // The very buffer the exposition memoised: not a copy, not a stream over it.
    expect(payloads[0]).toBe((await exposition.body(true)).chunks[0]);
    expect(text.rawPayload.equals(payloads[0] as Buffer)).toBe(true);

    const om = await a.inject({ url: '/metrics', headers: { 'accept-encoding': 'gzip', accept: 'application/openmetrics-text;version=1.0.0' } });
    expect(om.headers['content-type']).toBe(OPENMETRICS_CONTENT_TYPE);
    expect(Buffer.isBuffer(payloads[1])).toBe(true);
    expect(payloads[1]).toBe((await exposition.body(true, true)).chunks[0]);
    expect(gunzipSync(om.rawPayload).toString('utf8')).toMatch(/# EOF\n$/);
  });

  it('streams the plain body part by part, never joined', async () => {
    const { a, exposition, payloads } = app();
    expect((await exposition.body(false)).chunks.length).toBeGreaterThan(1);
    const res = await a.inject('/metrics');
    expect(res.statusCode).toBe(200);
    expect(payloads[0]).toBeInstanceOf(Readable);
    expect(res.body).toContain('couchbase_bucket_fake_bytes{couchbase_cluster="prod",bucket="b1"} 42\n');
  });

  it('over a socket: gzip bodies decode to the plain exposition, lengths agree, HEAD sends headers only', async () => {
    const { a } = app();
    await a.listen({ host: '127.0.0.1', port: 0 });
    open.push(a);
    const port = (a.server.address() as AddressInfo).port;
    const plain = await get(port, 'GET');
    const gz = await get(port, 'GET', { 'accept-encoding': 'gzip' });
    expect(gz.status).toBe(200);
    expect(gz.headers['content-encoding']).toBe('gzip');
    expect(gz.headers.vary).toBe('accept, accept-encoding');
    expect(Number(gz.headers['content-length'])).toBe(gz.body.length);
    expect(steady(gunzipSync(gz.body).toString('utf8'))).toBe(steady(plain.body.toString('utf8')));
    expect(steady(plain.body.toString('utf8'))).toContain('bucket="b1"} 42\n');
    const head = await get(port, 'HEAD', { 'accept-encoding': 'gzip' });
    expect(head.status).toBe(200);
    expect(head.headers['content-encoding']).toBe('gzip');
    expect(head.body.length).toBe(0);
    expect(Number(head.headers['content-length'])).toBeGreaterThan(0);
  });

  it('a gzip scrape gives its request slot back and is counted as served', async () => {
    // One slot: a scrape that kept it would turn every later one into a 503.
    const { a } = app({ maxRequests: 1 });
    await a.listen({ host: '127.0.0.1', port: 0 });
    open.push(a);
    const port = (a.server.address() as AddressInfo).port;
    const codes: number[] = [];
    for (let i = 0; i < 5; i++) codes.push((await get(port, 'GET', { 'accept-encoding': 'gzip' })).status);
    expect(codes).toEqual([200, 200, 200, 200, 200]);
    // The count of requests served is rendered at most once a second: poll until the five show.
    await vi.waitFor(
      async () => {
        const text = (await get(port, 'GET')).body.toString('utf8');
        const line = text.split('\n').find((l) => l.startsWith('cbwatch_http_requests_served_total{handler="/metrics",code="200"} '));
        expect(Number(line?.split(' ')[1])).toBeGreaterThanOrEqual(5);
      },
      { timeout: 5000, interval: 100 },
    );
  });
});
