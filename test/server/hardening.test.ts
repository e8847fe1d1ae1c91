/** The web server's limits (issue 13, items 2, 4 and 9): rate limit, timeouts, 405 on /metrics. */
import { connect } from 'node:net';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { Exposition } from '../../src/metrics/exposition.js';
import { SnapshotStore } from '../../src/metrics/store.js';
import { buildApp, TokenBucket } from '../../src/server/app.js';
import type { AppDeps } from '../../src/server/app.js';
import { LocalView } from '../../src/collection/engine.js';
import { registerSyncGatewayWebhooks } from '../../src/webhooks/sync-gateway.js';

const TOKEN = 'tok-3f9c1a77e0b24d5c9e8a1b2c3d4e5f60';

/** A normal Sync Gateway post of one document; its status. */
async function postDocument(port: number): Promise<number> {
  const res = await fetch(`http://127.0.0.1:${port}/webhooks/sync-gateway/db1?token=${TOKEN}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ _id: 'doc1', _rev: '1-a' }),
  });
  return res.status;
}

/** A webhook post that sends its headers, then one byte of a 200-byte body every `everyMs`, until the server
 * hangs up; resolves with what the server answered (possibly nothing). */
async function trickleWebhook(port: number, everyMs: number): Promise<string> {
  const sock = connect(port, '127.0.0.1');
  sock.on('error', () => undefined); // the server hanging up mid-write is the point
  let answer = '';
  sock.on('data', (d: Buffer) => (answer += d.toString('latin1')));
  sock.write(`POST /webhooks/sync-gateway/db1?token=${TOKEN} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 200\r\n\r\n{`);
  const trickle = setInterval(() => {
    if (!sock.destroyed) sock.write(' ');
  }, everyMs);
  await new Promise<void>((r) => sock.once('close', () => r()));
  clearInterval(trickle);
  return answer;
}

function app(extra: Partial<AppDeps> = {}) {
  const store = new LocalView(new SnapshotStore());
  return buildApp({
    store,
    exposition: new Exposition(store, { processMetrics: false }),
    config: { clusters: [], webhooks: { syncGateway: undefined } },
    log: pino({ level: 'silent' }),
    ...extra,
  });
}

describe('rate_limit', () => {
  it('a token bucket: burst at once, then one per interval', () => {
    let t = 0;
    const b = new TokenBucket(1000, 2, () => t);
    expect([b.take(), b.take(), b.take()]).toEqual([true, true, false]);
    t = 999;
    expect(b.take()).toBe(false);
    t = 1000;
    expect(b.take()).toBe(true);
    t = 10_000;
    expect([b.take(), b.take(), b.take()]).toEqual([true, true, false]);
  });

  it('answers 429 beyond the burst, before auth runs', async () => {
    let authCalls = 0;
    const a = app({
      rateLimit: { intervalMs: 3_600_000, burst: 2 },
      authorize: async () => {
        authCalls++;
        return true;
      },
    });
    const codes = [];
    for (let i = 0; i < 4; i++) codes.push((await a.inject('/metrics')).statusCode);
    expect(codes).toEqual([200, 200, 429, 429]);
    expect(authCalls).toBe(2);
  });
});

describe('/metrics methods', () => {
  it.each(['POST', 'PUT', 'DELETE'] as const)('%s is 405 with Allow', async (method) => {
    const res = await app().inject({ method, url: '/metrics' });
    expect(res.statusCode).toBe(405);
    expect(res.headers.allow).toBe('GET, HEAD');
  });
  it('HEAD is answered', async () => {
    expect((await app().inject({ method: 'HEAD', url: '/metrics' })).statusCode).toBe(200);
  });
});

/** Sends `METHOD path` over a real socket (any method Node's parser accepts) and returns the status and Allow header.
 * A connection that ends with no byte and a socket error (a reset on a loaded machine) is tried again, at most
 * three times in all: a server that really refuses the method still fails the test. */
async function raw(a: ReturnType<typeof app>, method: string, path: string): Promise<[number, string | undefined]> {
  await a.listen({ host: '127.0.0.1', port: 0 });
  const port = (a.server.address() as AddressInfo).port;
  let text = '';
  let failure: string | undefined;
  for (let attempt = 0; attempt < 3; attempt++) {
    [text, failure] = await new Promise<[string, string | undefined]>((resolve) => {
      const s = connect(port, '127.0.0.1');
      let out = '';
      let error: string | undefined;
      s.on('data', (d: Buffer) => (out += d.toString('latin1')));
      s.on('close', () => resolve([out, error]));
      s.on('error', (e: NodeJS.ErrnoException) => (error = e.code ?? e.message));
      s.write(`${method} ${path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
    });
    if (text !== '' || failure === undefined) break;
  }
  const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0);
  const allow = /\r\nallow: ([^\r]*)\r\n/i.exec(text)?.[1];
  if (status === 0) console.error(`${method} ${path}: no answer (${failure ?? 'closed without an error'})`);
  return [status, allow];
}

describe('every method on the telemetry path (issue 39, item 7: docs/security.md says 405 with Allow)', () => {
  // Hand-written from docs/security.md: "Only GET and HEAD read /metrics; other methods get 405 with Allow: GET, HEAD".
  const others = ['POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'TRACE', 'PROPFIND', 'PROPPATCH', 'MKCOL', 'COPY', 'MOVE', 'LOCK', 'UNLOCK', 'SEARCH', 'REPORT', 'PURGE', 'MKCALENDAR', 'LINK', 'UNLINK', 'SUBSCRIBE', 'NOTIFY'];
  it.each(others)('%s /metrics is 405 with Allow: GET, HEAD', async (method) => {
    const a = app();
    try {
      expect(await raw(a, method, '/metrics')).toEqual([405, 'GET, HEAD']);
    } finally {
      await a.close();
    }
  });
  it('with a query string and on a configured --web.telemetry-path too; elsewhere an unknown method is 404', async () => {
    const cases: Array<[Partial<AppDeps>, string, string, [number, string | undefined]]> = [
      [{}, 'TRACE', '/metrics?x=1', [405, 'GET, HEAD']],
      [{}, 'PROPFIND', '/metrics?x=1', [405, 'GET, HEAD']],
      [{ telemetryPath: '/exporter/cb' }, 'PROPFIND', '/exporter/cb', [405, 'GET, HEAD']],
      [{ telemetryPath: '/exporter/cb' }, 'TRACE', '/exporter/cb', [405, 'GET, HEAD']],
      [{ telemetryPath: '/exporter/cb' }, 'PROPFIND', '/metrics', [404, undefined]],
      [{}, 'PROPFIND', '/', [404, undefined]],
      [{}, 'TRACE', '/nothing-here', [404, undefined]],
      [{}, 'GET', '/metrics', [200, undefined]],
      // POST /-/reload exists only with --web.enable-lifecycle: then any other method is 405 with Allow: POST.
      [{}, 'TRACE', '/-/reload', [404, undefined]],
      [{ plugins: [(f) => void f.post('/-/reload', async () => 'ok\n')] }, 'TRACE', '/-/reload', [405, 'POST']],
      [{ plugins: [(f) => void f.post('/-/reload', async () => 'ok\n')] }, 'PROPFIND', '/-/reload', [405, 'POST']],
    ];
    for (const [deps, method, path, expected] of cases) {
      const a = app(deps);
      try {
        expect([method, path, await raw(a, method, path)]).toEqual([method, path, expected]);
      } finally {
        await a.close();
      }
    }
  });
});

describe('timeouts', () => {
  it('a webhook sender trickling its body is cut off, and its slot serves the next sender', async () => {
    const a = app({
      timeouts: { requestMs: 1500, headersMs: 1000 },
      plugins: [(f) => registerSyncGatewayWebhooks(f, { enabled: true, token: TOKEN, databases: ['db1'], max_body_bytes: 4096, max_types: 3, max_concurrency: 1 }, pino({ level: 'silent' }))],
    });
    await a.listen({ host: '127.0.0.1', port: 0 });
    const port = (a.server.address() as AddressInfo).port;
    try {
      // The slow sender: headers, then one byte of a 200-byte body every 200 ms, for as long as it is let.
      const answer = await trickleWebhook(port, 200);
      // Node answers 408 when the request deadline passes.
      expect(answer === '' || answer.startsWith('HTTP/1.1 408')).toBe(true);

      // The only slot (max_concurrency 1) is free again: a normal sender is served.
      expect(await postDocument(port)).toBe(200);
    } finally {
      await a.close();
    }
  }, 20_000);

  it('a webhook sender slower than the body deadline loses its slot well before the request timeout', async () => {
    // Request timeout 30 s as in production; the receiver's body deadline (10 s by default) set to 400 ms here.
    const a = app({
      timeouts: { requestMs: 30_000, headersMs: 10_000 },
      plugins: [(f) => registerSyncGatewayWebhooks(f, { enabled: true, token: TOKEN, databases: ['db1'], max_body_bytes: 4096, max_types: 3, max_concurrency: 1 }, pino({ level: 'silent' }), { bodyDeadlineMs: 400 })],
    });
    await a.listen({ host: '127.0.0.1', port: 0 });
    const port = (a.server.address() as AddressInfo).port;
    try {
      // Cut off by the body deadline: the 30 s request timeout would outlast this test's own bound.
      await trickleWebhook(port, 100);
      expect(await postDocument(port)).toBe(200);
    } finally {
      await a.close();
    }
  }, 15_000);

  it('a client that never finishes its headers is disconnected', async () => {
    const a = app({ timeouts: { requestMs: 1500, headersMs: 800 } });
    await a.listen({ host: '127.0.0.1', port: 0 });
    const port = (a.server.address() as AddressInfo).port;
    try {
      const sock = connect(port, '127.0.0.1');
      sock.on('error', () => undefined);
      sock.write('GET /metrics HTTP/1.1\r\nHost: x\r\n');
      const trickle = setInterval(() => {
        if (!sock.destroyed) sock.write('X-Slow: 1\r\n');
      }, 100);
      await new Promise<void>((r) => sock.once('close', () => r()));
      clearInterval(trickle);
    } finally {
      await a.close();
    }
  }, 20_000);

  it('has documented defaults set on the server', () => {
    const a = app();
    expect(a.server.requestTimeout).toBe(30_000);
    expect(a.server.headersTimeout).toBe(10_000);
    expect(a.server.keepAliveTimeout).toBe(65_000);
    expect(a.server.timeout).toBe(60_000);
  });
});
