/**
 * Exporter conventions (issue 26, item 3): what an operator expects from node_exporter and its peers.
 */
import pino from 'pino';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { LocalView } from '../../src/collection/engine.js';
import { Exposition } from '../../src/metrics/exposition.js';
import { resetSelf } from '../../src/metrics/self.js';
import { SnapshotStore } from '../../src/metrics/store.js';
import { request } from 'node:http';
import { createRequire } from 'node:module';
import { networkInterfaces } from 'node:os';
import { gunzipSync } from 'node:zlib';
import type { PollOutcome } from '../../src/collectors/context.js';
import { defineFamily, SampleSet } from '../../src/metrics/family.js';
import { negotiateFormat } from '../../src/server/negotiate.js';
import { parseListenAddress } from '../../src/config/load.js';
import { buildApp } from '../../src/server/app.js';
import type { AppDeps } from '../../src/server/app.js';
import { listenOn } from '../../src/server/listen.js';
import type { Listener } from '../../src/server/listen.js';
import { startHarness } from '../helpers/daemon.js';

function app(extra: Partial<AppDeps> = {}) {
  const store = new SnapshotStore();
  store.register('prod', 'buckets');
  const view = new LocalView(store);
  const exposition = new Exposition(view, { processMetrics: false });
  return buildApp({
    store: view,
    exposition,
    config: { clusters: [{ name: 'prod', url: 'http://cb:8091' } as never], webhooks: { syncGateway: undefined } },
    log: pino({ level: 'silent' }),
    ...extra,
  });
}

/** The value of one series in an exposition, or undefined. */
function value(body: string, series: string): number | undefined {
  const line = body.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe('requests served', () => {
  beforeEach(() => resetSelf());

  it('counts the answers this exporter sent, by route template and status code, refusals included', async () => {
    const a = app({ authorize: async (h) => h === 'Basic ok' });
    for (let i = 0; i < 3; i++) expect((await a.inject({ url: '/metrics', headers: { authorization: 'Basic ok' } })).statusCode).toBe(200);
    expect((await a.inject('/metrics')).statusCode).toBe(401);
    expect((await a.inject({ url: '/no/such/path/42', headers: { authorization: 'Basic ok' } })).statusCode).toBe(404);
    expect((await a.inject('/-/healthy')).statusCode).toBe(200);
    // Rendered at most once a second: poll until the scrapes above show.
    await vi.waitFor(
      async () => {
        const body = (await a.inject({ url: '/metrics', headers: { authorization: 'Basic ok' } })).body;
        expect(value(body, 'cbwatch_http_requests_served_total{handler="/metrics",code="200"}')).toBeGreaterThanOrEqual(3);
        expect(value(body, 'cbwatch_http_requests_served_total{handler="/metrics",code="401"}')).toBe(1);
        expect(value(body, 'cbwatch_http_requests_served_total{handler="other",code="404"}')).toBe(1);
        expect(value(body, 'cbwatch_http_requests_served_total{handler="/-/healthy",code="200"}')).toBe(1);
        expect(body).toContain('# TYPE cbwatch_http_requests_served_total counter\n');
        // A raw path never becomes a label value.
        expect(body).not.toContain('/no/such/path');
      },
      { timeout: 5000, interval: 50 },
    );
  });

  it('is not the Couchbase request counter, which is cbwatch_couchbase_requests_total', async () => {
    const { SELF } = await import('../../src/metrics/self.js');
    const names = Object.values(SELF).map((f) => f.name);
    expect(names).toContain('cbwatch_couchbase_requests_total');
    expect(names).toContain('cbwatch_couchbase_request_duration_seconds');
    expect(names).toContain('cbwatch_http_requests_served_total');
    expect(names).not.toContain('cbwatch_http_requests_total');
    expect(names).not.toContain('cbwatch_http_request_duration_seconds');
  });
});

describe('--web.telemetry-path', () => {
  it('serves the metrics on the path given, 404 on /metrics, and the landing page links to it', async () => {
    const a = app({ telemetryPath: '/exporter/cb' });
    const res = await a.inject('/exporter/cb');
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/plain; version=0.0.4; charset=utf-8');
    expect(res.body).toContain('# TYPE cbwatch_build_info gauge');
    const gz = await a.inject({ url: '/exporter/cb', headers: { 'accept-encoding': 'gzip' } });
    expect(gz.headers['content-encoding']).toBe('gzip');
    expect((await a.inject('/metrics')).statusCode).toBe(404);
    expect((await a.inject({ method: 'POST', url: '/exporter/cb' })).statusCode).toBe(405);
    expect((await a.inject('/-/healthy')).statusCode).toBe(200);
    const landing = (await a.inject('/')).body;
    expect(landing).toContain('<a href="/exporter/cb">Metrics</a>');
    expect(landing).not.toContain('href="/metrics"');
  });

  it('is /metrics when not given', async () => {
    const a = app();
    expect((await a.inject('/metrics')).statusCode).toBe(200);
    expect((await a.inject('/')).body).toContain('<a href="/metrics">Metrics</a>');
  });
});

/** GET /-/healthy on host:port; the status code, or the error code when the connection fails. */
function healthy(host: string, port: number): Promise<number | string> {
  return new Promise((resolve) => {
    const req = request({ host, port, path: '/-/healthy', timeout: 5000 }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
    req.end();
  });
}

/** Whether this machine has the IPv6 loopback (the dual-stack tests need it; the fallback test does not). */
const hasIpv6Loopback = Object.values(networkInterfaces()).some((list) => (list ?? []).some((i) => i.family === 'IPv6' && i.address === '::1'));

describe('--web.listen-address', () => {
  it.skipIf(!hasIpv6Loopback)(':0 (no host) listens on IPv6 and IPv4: the daemon answers over ::1 and 127.0.0.1', async () => {
    const { host, port } = parseListenAddress(':0');
    expect(host).toBe('');
    const h = await startHarness({
      mutate: (c) => ({ ...c, web: { ...c.web, listenHost: host, listenPort: port } }),
      daemon: { collection: 'inline', processMetrics: false },
    });
    try {
      const addr = h.daemon.app.server.address();
      expect(addr).toMatchObject({ address: '::', family: 'IPv6' });
      const p = (addr as { port: number }).port;
      expect(await healthy('127.0.0.1', p)).toBe(200);
      expect(await healthy('::1', p)).toBe(200);
      // cbwatch healthcheck, given the same (empty) host, finds it.
      const cfg = { web: { listenHost: host, listenPort: p, configFile: undefined } } as never;
      // src/healthcheck.cts, as compiled (a CommonJS file).
      const healthcheck = createRequire(import.meta.url)('../../dist/healthcheck.cjs') as typeof import('../../src/healthcheck.cjs');
      expect((await healthcheck.probe(healthcheck.healthcheckTarget(cfg))).ok).toBe(true);
    } finally {
      await h.close();
    }
  });

  it.skipIf(!hasIpv6Loopback)('0.0.0.0 stays IPv4 only; [::1] is the IPv6 loopback', async () => {
    const v4 = app();
    expect(await listenOn(v4, '0.0.0.0', 0)).toBe('0.0.0.0');
    expect(v4.server.address()).toMatchObject({ address: '0.0.0.0', family: 'IPv4' });
    expect(await healthy('127.0.0.1', (v4.server.address() as { port: number }).port)).toBe(200);
    await v4.close();
    const { host } = parseListenAddress('[::1]:0');
    const v6 = app();
    expect(await listenOn(v6, host, 0)).toBe('::1');
    expect(v6.server.address()).toMatchObject({ address: '::1', family: 'IPv6' });
    expect(await healthy('::1', (v6.server.address() as { port: number }).port)).toBe(200);
    await v6.close();
  });

  it('without IPv6 the empty host falls back to 0.0.0.0; other bind errors are not hidden', async () => {
    const stand = (failWith: string): Listener & { calls: unknown[] } => {
      const calls: unknown[] = [];
      return {
        calls,
        async listen(opts) {
          calls.push(opts);
          if (opts.host === '::') throw Object.assign(new Error('bind'), { code: failWith });
        },
      };
    };
    const noV6 = stand('EAFNOSUPPORT');
    expect(await listenOn(noV6, '', 9420, 4096)).toBe('0.0.0.0');
    expect(noV6.calls).toEqual([
      { host: '::', port: 9420, ipv6Only: false, backlog: 4096 },
      { host: '0.0.0.0', port: 9420, backlog: 4096 },
    ]);
    const busy = stand('EADDRINUSE');
    await expect(listenOn(busy, '', 9420)).rejects.toMatchObject({ code: 'EADDRINUSE' });
    expect(busy.calls).toHaveLength(1);
  });
});

/** Prometheus 2.42's Accept header (scrape.go, acceptHeader), as the installed prometheus sends it. */
const PROMETHEUS_2_ACCEPT = 'application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1';
/** Prometheus 3's, from its default scrape_protocols. */
const PROMETHEUS_3_ACCEPT = 'application/openmetrics-text;version=1.0.0;q=0.5,application/openmetrics-text;version=0.0.1;q=0.4,text/plain;version=1.0.0;escaping=allow-utf-8;q=0.3,text/plain;version=0.0.4;q=0.2,*/*;q=0.1';

describe('content negotiation', () => {
  it.each([
    [undefined, 'text'],
    ['', 'text'],
    ['*/*', 'text'],
    ['text/plain', 'text'],
    ['text/plain;version=0.0.4', 'text'],
    ['application/openmetrics-text', 'openmetrics'],
    ['application/openmetrics-text; version=1.0.0; charset=utf-8', 'openmetrics'],
    ['application/openmetrics-text;version=0.0.1', 'openmetrics'],
    ['application/openmetrics-text;version=2.0.0', 'text'],
    ['text/plain;q=0.9,application/openmetrics-text;q=0.5', 'text'],
    ['text/plain;q=0.5,application/openmetrics-text;q=0.9', 'openmetrics'],
    ['application/openmetrics-text;q=0,text/plain', 'text'],
    ['application/json,application/openmetrics-text;version=1.0.0', 'openmetrics'],
    [PROMETHEUS_2_ACCEPT, 'openmetrics'],
    [PROMETHEUS_3_ACCEPT, 'openmetrics'],
  ])('Accept %j: %s', (accept, want) => expect(negotiateFormat(accept)).toBe(want));
});

const ops = defineFamily('buckets', 'couchbase_conv_ops_total', 'counter', 'Operations.', ['bucket']);
const mem = defineFamily('buckets', 'couchbase_conv_mem_bytes', 'gauge', 'Memory.', ['bucket'], 'bytes');

function polled(): PollOutcome {
  const set = new SampleSet();
  set.add(ops, { bucket: 'b' }, 42);
  set.add(mem, { bucket: 'b' }, 1024);
  return { collector: 'buckets', ok: true, set, error: undefined, durationSeconds: 0.01, requests: [], skipped: new Map(), itemErrors: new Map(), notApplicable: undefined, finishedAt: 1_700_000_000_000 };
}

/** The text form turned into OpenMetrics by hand: counter families lose _total in HELP and TYPE; # EOF. */
function byHand(text: string): string {
  const counters = new Set([...text.matchAll(/^# TYPE (\S+)_total counter$/gm)].map((m) => m[1]));
  const lines = text.split('\n').map((l) => {
    const m = /^# (HELP|TYPE) (\S+)_total( .*)$/.exec(l);
    return m && counters.has(m[2]) ? `# ${m[1]} ${m[2]}${m[3]}` : l;
  });
  return `${lines.join('\n')}# EOF\n`;
}

describe('OpenMetrics on /metrics', () => {
  beforeEach(() => resetSelf());

  it('answers Prometheus\' Accept with OpenMetrics, plain and gzip, and others with the text format', async () => {
    const store = new SnapshotStore();
    store.register('prod', 'buckets');
    const view = new LocalView(store);
    const a = buildApp({ store: view, exposition: new Exposition(view, { processMetrics: false }), config: { clusters: [], webhooks: { syncGateway: undefined } }, log: pino({ level: 'silent' }) });
    store.record('prod', polled());
    await a.inject('/-/healthy');
    // Wait until the served counter (a counter rendered by prom-client on this thread) shows a scrape.
    await vi.waitFor(async () => expect((await a.inject('/metrics')).body).toContain('cbwatch_http_requests_served_total{handler="/metrics",code="200"} '), { timeout: 5000, interval: 50 });
    const textRes = await a.inject({ url: '/metrics', headers: { accept: 'text/plain;version=0.0.4' } });
    const omRes = await a.inject({ url: '/metrics', headers: { accept: PROMETHEUS_2_ACCEPT } });
    const gzRes = await a.inject({ url: '/metrics', headers: { accept: PROMETHEUS_2_ACCEPT, 'accept-encoding': 'gzip' } });
    expect(textRes.headers['content-type']).toBe('text/plain; version=0.0.4; charset=utf-8');
    expect(omRes.headers['content-type']).toBe('application/openmetrics-text; version=1.0.0; charset=utf-8');
    expect(gzRes.headers['content-type']).toBe('application/openmetrics-text; version=1.0.0; charset=utf-8');
    expect(omRes.headers.vary).toBe('accept, accept-encoding');
    expect(textRes.body).not.toContain('# EOF');
    const om = omRes.body;
    expect(om).toContain('# HELP couchbase_conv_ops Operations.\n# TYPE couchbase_conv_ops counter\ncouchbase_conv_ops_total{couchbase_cluster="prod",bucket="b"} 42\n');
    expect(om).toContain('# TYPE couchbase_conv_mem_bytes gauge\ncouchbase_conv_mem_bytes{couchbase_cluster="prod",bucket="b"} 1024\n');
    expect(om).toContain('# TYPE cbwatch_http_requests_served counter\n');
    expect(om.endsWith('\n# EOF\n')).toBe(true);
    expect(Number(omRes.headers['content-length'])).toBe(Buffer.byteLength(om));
    // The whole body is the text body with the hand-made changes, and gzip holds the same bytes.
    // (The count of scrapes may move between the three answers: it is masked.)
    const served = (b: string) => b.replace(/(cbwatch_http_requests_served_total\{handler="\/metrics",code="200"\}) \d+/, '$1 N');
    expect(served(om)).toBe(served(byHand(textRes.body)));
    expect(served(gunzipSync(gzRes.rawPayload).toString())).toBe(served(om));
  });
});
