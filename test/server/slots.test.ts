/**
 * Request slots (--web.max-requests) are held only while cbwatch works on a request (issue 25, item 2): never
 * while a client trickles a body, nor while it waits for a password check. Real sockets against a listening
 * server; outcomes asserted (every proper scrape answered 200), never timings.
 */
import { connect as connectHttp2, constants as h2constants } from 'node:http2';
import { connect } from 'node:net';
import { gunzipSync, gzipSync } from 'node:zlib';
import type { AddressInfo, Socket } from 'node:net';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { LocalView } from '../../src/collection/engine.js';
import { Exposition } from '../../src/metrics/exposition.js';
import { SnapshotStore } from '../../src/metrics/store.js';
import { buildApp } from '../../src/server/app.js';
import { createCertificate } from '../../src/simulator/pki.js';
import type { AppDeps } from '../../src/server/app.js';
import { registerSyncGatewayWebhooks } from '../../src/webhooks/sync-gateway.js';

const RIGHT = `Basic ${Buffer.from('prometheus:right').toString('base64')}`;
const TOKEN = 'tok-5b1e0c9d8a7f6e5d4c3b2a1908f7e6d5';

const open: Array<{ close(): Promise<unknown> }> = [];
const sockets: Socket[] = [];
const timers: NodeJS.Timeout[] = [];
afterEach(async () => {
  for (const t of timers.splice(0)) clearInterval(t);
  for (const s of sockets.splice(0)) s.destroy();
  for (const a of open.splice(0)) await a.close();
});

async function listening(extra: Partial<AppDeps>): Promise<{ port: number; requests: () => number; connections: () => Socket[] }> {
  const store = new LocalView(new SnapshotStore());
  const a = buildApp({
    store,
    exposition: new Exposition(store, { processMetrics: false }),
    config: { clusters: [], webhooks: { syncGateway: undefined } },
    log: pino({ level: 'silent' }),
    ...extra,
  });
  let requests = 0;
  a.server.on('request', () => requests++);
  const conns: Socket[] = [];
  a.server.on('connection', (s: Socket) => conns.push(s));
  await a.listen({ host: '127.0.0.1', port: 0 });
  open.push(a);
  return { port: (a.server.address() as AddressInfo).port, requests: () => requests, connections: () => conns };
}

/** Sends `head` and then one byte of the announced body every 50 ms, for as long as the server listens. */
function trickle(port: number, head: string): { answer: () => string; closed: Promise<void> } {
  const sock = connect(port, '127.0.0.1');
  sockets.push(sock);
  sock.on('error', () => undefined);
  let answer = '';
  sock.on('data', (d: Buffer) => (answer += d.toString('latin1')));
  const closed = new Promise<void>((r) => sock.once('close', () => r()));
  sock.write(head);
  timers.push(
    setInterval(() => {
      if (!sock.destroyed) sock.write('x');
    }, 50),
  );
  return { answer: () => answer, closed };
}

async function until(what: string, fn: () => boolean, ms = 5_000): Promise<void> {
  const end = Date.now() + ms;
  while (!fn()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

async function scrapes(port: number, n: number, headers: Record<string, string> = {}): Promise<number[]> {
  const codes: number[] = [];
  for (let i = 0; i < n; i++) {
    const r = await fetch(`http://127.0.0.1:${port}/metrics`, { headers });
    await r.arrayBuffer();
    codes.push(r.status);
  }
  return codes;
}

describe('request slots', () => {
  it('POST /metrics bodies sent a byte at a time hold no slot: they are refused at once and every scrape is answered', async () => {
    const { port, requests } = await listening({ maxRequests: 2 });
    const slow = Array.from({ length: 6 }, () => trickle(port, 'POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\nContent-Length: 100000\r\n\r\nx'));
    await until('the server to see every slow request', () => requests() >= 6);
    expect(await scrapes(port, 10)).toEqual(Array(10).fill(200));
    // Each was answered 405 without its body being waited for, and its connection closed.
    for (const s of slow) {
      await s.closed;
      expect(s.answer()).toMatch(/^HTTP\/1\.1 405 /);
      expect(s.answer()).toMatch(/\r\nallow: GET, HEAD\r\n/i);
    }
  });

  it('a body on a GET-only route is refused at once (413) and the connection closed', async () => {
    const { port } = await listening({ maxRequests: 1 });
    const chunked = trickle(port, 'GET /metrics HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n1\r\n');
    const sized = trickle(port, 'GET /-/ready HTTP/1.1\r\nHost: x\r\nContent-Length: 5000\r\n\r\n');
    const unrouted = trickle(port, 'POST /webhooks/sync-gateway/db1 HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 5000\r\n\r\n{');
    for (const s of [chunked, sized, unrouted]) {
      await s.closed;
      expect(s.answer()).toMatch(/^HTTP\/1\.1 413 /);
    }
    expect(await scrapes(port, 3)).toEqual([200, 200, 200]);
  });

  it('a request without a body is served as before (Content-Length: 0 is no body)', async () => {
    const { port } = await listening({ maxRequests: 1 });
    const r = await fetch(`http://127.0.0.1:${port}/metrics`, { method: 'GET', headers: { 'content-length': '0' } });
    expect(r.status).toBe(200);
    expect((await fetch(`http://127.0.0.1:${port}/metrics`, { method: 'POST' })).status).toBe(405);
  });

  it('clients waiting for a password check hold no slot: an authenticated scraper is never refused', async () => {
    const waiting: Array<(ok: boolean) => void> = [];
    const clients = new Set<string>();
    const { port, requests } = await listening({
      maxRequests: 2,
      // A remembered header is answered at once; any other waits (as behind a queue of bcrypt compares).
      authorize: (header, client) => {
        clients.add(String(client));
        return header === RIGHT ? Promise.resolve(true) : new Promise<boolean>((r) => waiting.push(r));
      },
    });
    for (let i = 0; i < 8; i++) {
      const s = connect(port, '127.0.0.1');
      sockets.push(s);
      s.on('error', () => undefined);
      s.write(`GET /metrics HTTP/1.1\r\nHost: x\r\nAuthorization: Basic ${Buffer.from(`prometheus:wrong-${i}`).toString('base64')}\r\n\r\n`);
    }
    await until('the server to see every wrong password', () => requests() >= 8);
    expect(await scrapes(port, 10, { authorization: RIGHT })).toEqual(Array(10).fill(200));
    const r = await fetch(`http://127.0.0.1:${port}/-/ready`, { headers: { authorization: RIGHT } });
    expect(await r.text()).not.toMatch(/too many requests/);
    // The check is told who asks (the bcrypt queue is shared out per client address).
    expect([...clients]).toEqual(['127.0.0.1']);
    for (const w of waiting) w(false);
  });

  it('a password that cannot be checked now (too many waiting) is answered 503, not 401', async () => {
    const { port } = await listening({ authorize: async (h) => (h === RIGHT ? true : 'busy') });
    const r = await fetch(`http://127.0.0.1:${port}/metrics`, { headers: { authorization: 'Basic eDp5' } });
    expect(r.status).toBe(503);
    expect(r.headers.get('retry-after')).toBe('1');
    expect((await fetch(`http://127.0.0.1:${port}/metrics`, { headers: { authorization: RIGHT } })).status).toBe(200);
  });

  it('webhook posts still read their body (bounded by the receiver, not by --web.max-requests)', async () => {
    const { port } = await listening({
      maxRequests: 1,
      plugins: [(f) => registerSyncGatewayWebhooks(f, { enabled: true, token: TOKEN, databases: ['db1'], max_body_bytes: 4096, max_types: 3, max_concurrency: 4 }, pino({ level: 'silent' }))],
    });
    const res = await fetch(`http://127.0.0.1:${port}/webhooks/sync-gateway/db1?token=${TOKEN}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ _id: 'doc1', _rev: '1-a' }),
    });
    expect(res.status).toBe(200);
    // A slow sender holds a receiver slot, never a scrape's.
    trickle(port, `POST /webhooks/sync-gateway/db1?token=${TOKEN} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 4000\r\n\r\n{`);
    expect(await scrapes(port, 3)).toEqual([200, 200, 200]);
  });
});

/** An exposition whose plain body is large (a client that stops reading leaves it unwritten); its gzip body is small. */
function bigExposition(bytes: number): Exposition {
  const chunk = Buffer.alloc(bytes, 'a');
  const gz = gzipSync('up 1\n');
  return { body: async (gzip: boolean) => (gzip ? { chunks: [gz], length: gz.length } : { chunks: [chunk], length: chunk.length }) } as unknown as Exposition;
}

/** Sends a GET of the telemetry path with `headers` and then reads nothing: the body stays unwritten. */
function nonReader(port: number, headers = ''): { answer: () => string; closed: Promise<void> } {
  const sock = connect(port, '127.0.0.1');
  sockets.push(sock);
  sock.on('error', () => undefined);
  let answer = '';
  sock.once('data', (d: Buffer) => {
    answer += d.toString('latin1', 0, Math.min(d.length, 400));
    sock.pause();
  });
  const closed = new Promise<void>((r) => sock.once('close', () => r()));
  sock.write(`GET /metrics HTTP/1.1\r\nHost: x\r\n${headers}\r\n`);
  return { answer: () => answer, closed };
}

describe('slots belong to scrapers (issue 39, item 4)', () => {
  it('a client that stops reading a body loses its connection at the write deadline, and its slot is given back', async () => {
    // One slot; a 64 MiB body (more than any socket buffer holds) and a deadline of 300 ms at any rate.
    const { port, connections } = await listening({ maxRequests: 1, exposition: bigExposition(64 * 1024 * 1024), timeouts: { bodyGraceMs: 300, bodyMinBytesPerSecond: 1e12 } });
    const slow = nonReader(port);
    await until('the body to start', () => slow.answer() !== '');
    expect(slow.answer()).toMatch(/^HTTP\/1\.1 200 /);
    // The server closes its side (the client, paused, has not read that far).
    await until('the slow connection to be closed', () => connections()[0]?.destroyed === true, 20_000);
    // The one slot is free again (a gzip scrape: its small body is written within the short deadline).
    const r = await fetch(`http://127.0.0.1:${port}/metrics`, { headers: { 'accept-encoding': 'gzip' } });
    expect(r.status).toBe(200);
    expect(await r.text()).toBe('up 1\n');
  });

  it('over HTTP/2, a stream whose body is not read is closed at the write deadline; the session and the slot serve the next scrape', async () => {
    const now = Date.now();
    const cert = createCertificate({ subject: { CN: '127.0.0.1' }, notBefore: new Date(now - 3_600_000), notAfter: new Date(now + 3_600_000), ca: false, altNames: ['127.0.0.1'] });
    const https = { key: cert.privateKey.export({ type: 'pkcs8', format: 'pem' }), cert: cert.pem };
    // One slot, a 64 MiB plain body and a deadline of 300 ms at any rate, as the HTTP/1.1 case above.
    const { port } = await listening({ maxRequests: 1, exposition: bigExposition(64 * 1024 * 1024), timeouts: { bodyGraceMs: 300, bodyMinBytesPerSecond: 1e12 }, https, http2: true });
    const session = connectHttp2(`https://127.0.0.1:${port}`, { rejectUnauthorized: false });
    // Destroyed before the server closes (which waits for its sessions to end).
    open.unshift({ close: async () => session.destroy() });
    session.on('error', () => undefined);
    // Paused: the client takes no more than HTTP/2's flow-control window (64 KiB) of the body, so the server's
    // write cannot finish.
    const slow = session.request({ ':path': '/metrics', 'accept-encoding': 'identity' });
    slow.on('error', () => undefined);
    const status = await new Promise<number>((r) => slow.once('response', (h) => r(Number(h[':status']))));
    expect(status).toBe(200);
    slow.pause();
    // The server resets that stream with CANCEL (not NO_ERROR, which may read as a complete answer)...
    await until('the stream to be reset', () => slow.closed, 20_000);
    expect(slow.rstCode).toBe(h2constants.NGHTTP2_CANCEL);
    // ...and keeps the session: its one slot answers a gzip scrape on a new stream of the same connection.
    expect(session.destroyed).toBe(false);
    const next = session.request({ ':path': '/metrics', 'accept-encoding': 'gzip' });
    const chunks: Buffer[] = [];
    next.on('data', (c: Buffer) => chunks.push(c));
    const nextStatus = await new Promise<number>((r) => next.once('response', (h) => r(Number(h[':status']))));
    await new Promise<void>((r) => next.once('end', () => r()));
    expect(nextStatus).toBe(200);
    expect(gunzipSync(Buffer.concat(chunks)).toString()).toBe('up 1\n');
  });

  it('uncompressed scrapes hold at most a quarter of the slots: gzip scrapes are answered beside them', async () => {
    // 8 slots: 2 for plain scrapes. Two plain readers that stop reading hold both.
    const { port, requests } = await listening({ maxRequests: 8, exposition: bigExposition(64 * 1024 * 1024) });
    nonReader(port);
    nonReader(port, 'Accept-Encoding: gzip;q=0\r\n');
    await until('both plain scrapes to be served', () => requests() >= 2);
    // (fetch asks for gzip unless told otherwise.)
    const plain = await fetch(`http://127.0.0.1:${port}/metrics`, { headers: { 'accept-encoding': 'identity' } });
    expect(plain.status).toBe(503);
    expect(plain.headers.get('retry-after')).toBe('1');
    expect(await plain.text()).toBe('Service Unavailable: too many uncompressed scrapes in flight (ask with Accept-Encoding: gzip)\n');
    const gz = await fetch(`http://127.0.0.1:${port}/metrics`, { headers: { 'accept-encoding': 'gzip' } });
    expect(gz.status).toBe(200);
    expect(await gz.text()).toBe('up 1\n');
    // Other routes take the shared slots.
    expect((await fetch(`http://127.0.0.1:${port}/-/ready`)).status).not.toBe(503);
  });
});
