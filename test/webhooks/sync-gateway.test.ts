import { execFileSync } from 'node:child_process';
import { Readable, Writable } from 'node:stream';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import Fastify from 'fastify';
import type { FastifyInstance } from 'fastify';
import pino from 'pino';
import { Pool } from 'undici';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { SyncGatewayWebhookConfig } from '../../src/config/types.js';
import { liveSelfVersion, selfRegistry } from '../../src/metrics/self.js';
import {
  MAX_OPEN_DATABASES,
  registerSyncGatewayWebhooks,
  resetWebhookMetrics,
  tokenMatches,
  WEBHOOK_FAMILIES,
} from '../../src/webhooks/sync-gateway.js';
import { MAX_DOCUMENT_DEPTH } from '../../src/webhooks/document.js';
import { fixtureText } from '../helpers/collect.js';
import { missing, requireBinary } from '../helpers/tools.js';

const TOKEN = 'tok-3f9c1a77e0b24d5c9e8a1b2c3d4e5f60';
const DOC = fixtureText('sync-gateway-webhook-document_changed/sg-issue-811-sg1.1.json');
const JSON_CT = { 'content-type': 'application/json' };
/** A string that must never reach a log line. */
const MARKER = 'PRIVATE-USER-DATA-7d1e';

function config(over: Partial<SyncGatewayWebhookConfig> = {}): SyncGatewayWebhookConfig {
  return { enabled: true, token: TOKEN, databases: ['db1', 'travel/eu'], max_body_bytes: 4096, max_types: 3, max_concurrency: 64, type_field: 'type', ...over };
}

function captureLog(): { log: pino.Logger; text: () => string } {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, cb) {
      chunks.push(chunk.toString('utf8'));
      cb();
    },
  });
  return { log: pino({ level: 'trace' }, stream), text: () => chunks.join('') };
}

async function build(over: Partial<SyncGatewayWebhookConfig> = {}, log = pino({ level: 'silent' })): Promise<FastifyInstance> {
  const app = Fastify({ logger: false });
  // A route of the rest of the app: the receiver's parsers and limits must not leak onto it.
  app.post('/other', async (req) => ({ got: req.body }));
  registerSyncGatewayWebhooks(app, config(over), log);
  await app.ready();
  return app;
}

async function value(name: string, labels: Record<string, string> = {}): Promise<number | undefined> {
  const metric = selfRegistry.getSingleMetric(name);
  if (!metric) return undefined;
  const data = await metric.get();
  const hit = data.values.find((v) => Object.entries(labels).every(([k, want]) => String(v.labels[k]) === want) && Object.keys(v.labels).length === Object.keys(labels).length);
  return hit?.value;
}

/** `null`: no token in the URL at all. */
const url = (db: string, token: string | null = TOKEN): string => `/webhooks/sync-gateway/${db}${token === null ? '' : `?token=${encodeURIComponent(token)}`}`;

beforeEach(() => resetWebhookMetrics());

describe('Sync Gateway webhook receiver (inject)', () => {
  let app: FastifyInstance;
  afterEach(async () => {
    await app?.close();
  });

  it('accepts the real document_changed body and counts it', async () => {
    app = await build();
    const before = liveSelfVersion();
    const t0 = Date.now() / 1000;
    const res = await app.inject({ method: 'POST', url: url('db1'), headers: JSON_CT, payload: DOC });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ ok: true });
    expect(await value('cbwatch_webhook_documents_total', { database: 'db1', result: 'accepted' })).toBe(1);
    expect(await value('cbwatch_webhook_body_bytes_total', { database: 'db1' })).toBe(Buffer.byteLength(DOC));
    expect(await value('cbwatch_webhook_deleted_documents_total', { database: 'db1' })).toBeUndefined();
    // The fixture has no `type` field.
    expect(await value('cbwatch_webhook_document_types_total', { database: 'db1', doc_type: '_none' })).toBe(1);
    const ts = (await value('cbwatch_webhook_last_document_timestamp_seconds', { database: 'db1' })) ?? 0;
    expect(ts).toBeGreaterThanOrEqual(Math.floor(t0));
    expect(ts).toBeLessThanOrEqual(Date.now() / 1000);
    expect(liveSelfVersion()).toBeGreaterThan(before);
  });

  it('counts deletions and leaves them out of the type counts', async () => {
    app = await build();
    const res = await app.inject({ method: 'POST', url: url('db1'), headers: JSON_CT, payload: { _id: 'k1', _rev: '3-abc', _deleted: true } });
    expect(res.statusCode).toBe(200);
    expect(await value('cbwatch_webhook_deleted_documents_total', { database: 'db1' })).toBe(1);
    expect(await value('cbwatch_webhook_document_types_total', { database: 'db1', doc_type: '_none' })).toBeUndefined();
  });

  it('refuses a missing or wrong token with 401 before reading the body', async () => {
    app = await build();
    for (const token of [null, '', 'wrong', `${TOKEN}x`, TOKEN.slice(0, -1)]) {
      const res = await app.inject({ method: 'POST', url: url('db1', token), headers: JSON_CT, payload: 'not json at all' });
      expect(res.statusCode, String(token)).toBe(401);
    }
    const twice = await app.inject({ method: 'POST', url: `/webhooks/sync-gateway/db1?token=${TOKEN}&token=${TOKEN}`, headers: JSON_CT, payload: DOC });
    expect(twice.statusCode).toBe(401);
    expect(await value('cbwatch_webhook_documents_total', { database: 'db1', result: 'unauthorized' })).toBe(6);
    // An unknown database name never becomes a label, whatever the caller sends.
    await app.inject({ method: 'POST', url: url('evil-name', 'wrong'), headers: JSON_CT, payload: DOC });
    expect(await value('cbwatch_webhook_documents_total', { database: '_unknown', result: 'unauthorized' })).toBe(1);
    expect(await value('cbwatch_webhook_documents_total', { database: 'db1', result: 'bad_json' })).toBeUndefined();
  });

  it('refuses an unknown database with 404 under database="_unknown"', async () => {
    app = await build();
    const res = await app.inject({ method: 'POST', url: url('db2'), headers: JSON_CT, payload: DOC });
    expect(res.statusCode).toBe(404);
    expect(await value('cbwatch_webhook_documents_total', { database: '_unknown', result: 'unknown_database' })).toBe(1);
  });

  it('takes a database name with a slash when it is percent-encoded', async () => {
    app = await build();
    const res = await app.inject({ method: 'POST', url: url('travel%2Feu'), headers: JSON_CT, payload: DOC });
    expect(res.statusCode).toBe(200);
    expect(await value('cbwatch_webhook_documents_total', { database: 'travel/eu', result: 'accepted' })).toBe(1);
  });

  it('with no database list accepts any valid name, up to a bounded number of them', async () => {
    app = await build({ databases: [] });
    expect((await app.inject({ method: 'POST', url: url('anydb'), headers: JSON_CT, payload: DOC })).statusCode).toBe(200);
    expect((await app.inject({ method: 'POST', url: url('Upper'), headers: JSON_CT, payload: DOC })).statusCode).toBe(404);
    expect((await app.inject({ method: 'POST', url: url('_sys'), headers: JSON_CT, payload: DOC })).statusCode).toBe(404);
    for (let i = 1; i < MAX_OPEN_DATABASES; i++) {
      expect((await app.inject({ method: 'POST', url: url(`db-${i}`), headers: JSON_CT, payload: DOC })).statusCode).toBe(200);
    }
    const over = await app.inject({ method: 'POST', url: url('one-too-many'), headers: JSON_CT, payload: DOC });
    expect(over.statusCode).toBe(404);
    // A name seen before still works.
    expect((await app.inject({ method: 'POST', url: url('db-7'), headers: JSON_CT, payload: DOC })).statusCode).toBe(200);
    expect(await value('cbwatch_webhook_documents_total', { database: '_unknown', result: 'unknown_database' })).toBe(3);
  });

  it('caps the body size (413)', async () => {
    app = await build();
    const big = JSON.stringify({ _id: 'x', data: 'y'.repeat(5000) });
    const res = await app.inject({ method: 'POST', url: url('db1'), headers: JSON_CT, payload: big });
    expect(res.statusCode).toBe(413);
    expect(await value('cbwatch_webhook_documents_total', { database: 'db1', result: 'too_large' })).toBe(1);
    // Exactly at the cap is fine.
    const exact = JSON.stringify({ d: 'z'.repeat(4096 - 8) });
    expect(Buffer.byteLength(exact)).toBe(4096);
    expect((await app.inject({ method: 'POST', url: url('db1'), headers: JSON_CT, payload: exact })).statusCode).toBe(200);
  });

  it('takes JSON only (415), and JSON with a charset', async () => {
    app = await build();
    const cases: Array<[Record<string, string>, number]> = [
      [{ 'content-type': 'text/plain' }, 415],
      [{ 'content-type': 'application/x-www-form-urlencoded' }, 415],
      [{}, 415],
      [{ 'content-type': 'application/json; charset=utf-8' }, 200],
    ];
    for (const [headers, status] of cases) {
      const res = await app.inject({ method: 'POST', url: url('db1'), headers, payload: Buffer.from(DOC) });
      expect(res.statusCode, JSON.stringify(headers)).toBe(status);
    }
    expect(await value('cbwatch_webhook_documents_total', { database: 'db1', result: 'unsupported_media_type' })).toBe(3);
  });

  it('refuses bad JSON, an empty body and non-objects (400)', async () => {
    app = await build();
    const bodies: Array<[string, string]> = [
      [`{"_id": "${MARKER}", `, 'bad_json'],
      ['', 'bad_json'],
      ['[1,2]', 'not_object'],
      ['42', 'not_object'],
      ['null', 'not_object'],
    ];
    for (const [payload, result] of bodies) {
      const res = await app.inject({ method: 'POST', url: url('db1'), headers: JSON_CT, payload });
      expect(res.statusCode, payload).toBe(400);
      expect(res.body).not.toContain(MARKER);
      expect(await value('cbwatch_webhook_documents_total', { database: 'db1', result })).toBeGreaterThan(0);
    }
    expect(await value('cbwatch_webhook_documents_total', { database: 'db1', result: 'bad_json' })).toBe(2);
    expect(await value('cbwatch_webhook_documents_total', { database: 'db1', result: 'not_object' })).toBe(3);
  });

  it('refuses a body nested past the depth bound with 400, counted as too_deep, and keeps taking documents', async () => {
    app = await build({ max_body_bytes: 2 * 1024 * 1024 });
    const hostile = [
      '['.repeat(1024 * 1024),
      '['.repeat(512 * 1024) + ']'.repeat(512 * 1024),
      `{"_id":"${MARKER}","a":${'{"b":'.repeat(MAX_DOCUMENT_DEPTH)}1${'}'.repeat(MAX_DOCUMENT_DEPTH)}}`,
    ];
    for (const payload of hostile) {
      const res = await app.inject({ method: 'POST', url: url('db1'), headers: JSON_CT, payload });
      expect(res.statusCode).toBe(400);
      expect(res.json()).toEqual({ error: `body nests deeper than ${MAX_DOCUMENT_DEPTH} levels` });
      expect(res.body).not.toContain(MARKER);
    }
    expect(await value('cbwatch_webhook_documents_total', { database: 'db1', result: 'too_deep' })).toBe(3);
    const ok = await app.inject({ method: 'POST', url: url('db1'), headers: JSON_CT, payload: DOC });
    expect(ok.statusCode).toBe(200);
    expect(await value('cbwatch_webhook_documents_total', { database: 'db1', result: 'accepted' })).toBe(1);
  });

  it('parses bodies on a thread of their own: no JSON.parse on the HTTP thread sees a body', async () => {
    app = await build();
    const parse = vi.spyOn(JSON, 'parse');
    try {
      const doc = JSON.stringify({ _id: MARKER, type: 'hotel' });
      const bad = `{"_id": "${MARKER}", `;
      expect((await app.inject({ method: 'POST', url: url('db1'), headers: JSON_CT, payload: doc })).statusCode).toBe(200);
      expect((await app.inject({ method: 'POST', url: url('db1'), headers: JSON_CT, payload: bad })).statusCode).toBe(400);
      const seen = parse.mock.calls.filter((args) => String(args[0]).includes(MARKER));
      expect(seen).toEqual([]);
    } finally {
      parse.mockRestore();
    }
    expect(await value('cbwatch_webhook_document_types_total', { database: 'db1', doc_type: 'hotel' })).toBe(1);
    expect(await value('cbwatch_webhook_documents_total', { database: 'db1', result: 'bad_json' })).toBe(1);
  });

  it('answers 500, never hangs, when the parse thread cannot start, and counts it as error', async () => {
    const a = Fastify({ logger: false });
    registerSyncGatewayWebhooks(a, config(), pino({ level: 'silent' }), { parseWorkerFile: '/nonexistent/webhook-parse.js' });
    await a.ready();
    try {
      const res = await a.inject({ method: 'POST', url: url('db1'), headers: JSON_CT, payload: DOC });
      expect(res.statusCode).toBe(500);
      expect(await value('cbwatch_webhook_documents_total', { database: 'db1', result: 'error' })).toBe(1);
      expect(await value('cbwatch_webhook_requests_in_flight')).toBe(0);
    } finally {
      await a.close();
    }
  });

  it('counts document types with at most max_types values per database', async () => {
    app = await build();
    for (const type of ['hotel', 'airline', 'hotel', 'route', 'landmark', 'airport', 'x'.repeat(200)]) {
      await app.inject({ method: 'POST', url: url('db1'), headers: JSON_CT, payload: { _id: 'a', type } });
    }
    await app.inject({ method: 'POST', url: url('db1'), headers: JSON_CT, payload: { _id: 'b', type: { nested: true } } });
    await app.inject({ method: 'POST', url: url('travel%2Feu'), headers: JSON_CT, payload: { _id: 'c', type: 'landmark' } });
    const data = await selfRegistry.getSingleMetric('cbwatch_webhook_document_types_total')?.get();
    const rows = (data?.values ?? []).map((v) => `${v.labels.database}/${v.labels.doc_type}=${v.value}`).sort();
    expect(rows).toEqual(['db1/_none=1', 'db1/airline=1', 'db1/hotel=2', 'db1/other=3', 'db1/route=1', 'travel/eu/landmark=1']);
  });

  it('logs nothing from a document body, and never the token', async () => {
    const cap = captureLog();
    app = await build({}, cap.log);
    await app.inject({ method: 'POST', url: url('db1'), headers: JSON_CT, payload: { _id: MARKER, type: MARKER, secret: MARKER } });
    await app.inject({ method: 'POST', url: url('db1'), headers: JSON_CT, payload: `{"${MARKER}": ` });
    await app.inject({ method: 'POST', url: url('db1'), headers: { 'content-type': 'text/plain' }, payload: MARKER });
    await app.inject({ method: 'POST', url: url('db1'), headers: JSON_CT, payload: JSON.stringify({ d: MARKER.repeat(1000) }) });
    await app.inject({ method: 'POST', url: url('db1', 'wrong'), headers: JSON_CT, payload: MARKER });
    const logged = cap.text();
    expect(logged).toContain('refused a Sync Gateway webhook post');
    expect(logged).not.toContain(MARKER);
    expect(logged).not.toContain(TOKEN);
  });

  it('leaves the rest of the app alone: its JSON parser and body limit are untouched', async () => {
    app = await build();
    const res = await app.inject({ method: 'POST', url: '/other', headers: JSON_CT, payload: { a: 'b'.repeat(10_000) } });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ got: { a: 'b'.repeat(10_000) } });
    expect((await app.inject({ method: 'POST', url: '/other', headers: { 'content-type': 'text/plain' }, payload: 'x' })).json()).toEqual({ got: 'x' });
    expect((await app.inject({ method: 'POST', url: '/other', headers: { 'content-type': 'application/xml' }, payload: '<x/>' })).statusCode).toBe(415);
    expect(await value('cbwatch_webhook_documents_total', { database: '_unknown', result: 'unsupported_media_type' })).toBeUndefined();
  });

  it('registers nothing when disabled and refuses an empty token', async () => {
    app = await build({ enabled: false });
    expect((await app.inject({ method: 'POST', url: url('db1'), headers: JSON_CT, payload: DOC })).statusCode).toBe(404);
    expect(() => registerSyncGatewayWebhooks(Fastify(), config({ token: '' }), pino({ level: 'silent' }))).toThrow(/token is empty/);
  });

  it('compares tokens in constant time over digests', () => {
    const expected = Buffer.from('0'.repeat(64), 'hex');
    expect(tokenMatches(undefined, expected)).toBe(false);
    expect(tokenMatches(['a'], expected)).toBe(false);
    expect(tokenMatches('a', expected)).toBe(false);
  });

  it.skipIf(missing('promtool'))('declares its families for the catalog, and renders metrics promtool accepts', async () => {
    expect(WEBHOOK_FAMILIES.map((f) => f.name).sort()).toEqual([
      'cbwatch_webhook_body_bytes_total',
      'cbwatch_webhook_deleted_documents_total',
      'cbwatch_webhook_document_types_total',
      'cbwatch_webhook_documents_total',
      'cbwatch_webhook_last_document_timestamp_seconds',
      'cbwatch_webhook_requests_in_flight',
    ]);
    expect(WEBHOOK_FAMILIES.every((f) => f.collector === 'webhooks')).toBe(true);
    app = await build();
    await app.inject({ method: 'POST', url: url('db1'), headers: JSON_CT, payload: { type: 'hotel', _deleted: false } });
    await app.inject({ method: 'POST', url: url('db1'), headers: JSON_CT, payload: '{' });
    const promtool = requireBinary('promtool') as string;
    execFileSync(promtool, ['check', 'metrics'], { input: await selfRegistry.metrics() });
  });
});

// ---- over a real socket ----------------------------------------------------------------------------------------

/** A real GC when the runtime lets us have one (flag set at run time), else undefined. */
function gcFunction(): (() => void) | undefined {
  const g = (globalThis as { gc?: () => void }).gc;
  if (g) return g;
  try {
    setFlagsFromString('--expose_gc');
    return runInNewContext('gc') as () => void;
  } catch {
    return undefined;
  }
}

async function until(cond: () => Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 2000; i++) {
    if (await cond()) return;
    await new Promise((r) => setTimeout(r, 5));
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe('Sync Gateway webhook receiver (socket)', () => {
  let app: FastifyInstance;
  let pool: Pool;
  afterEach(async () => {
    await pool?.close();
    await app?.close();
  });

  async function start(over: Partial<SyncGatewayWebhookConfig> = {}): Promise<void> {
    app = await build(over);
    await app.listen({ port: 0, host: '127.0.0.1' });
    const addr = app.server.address();
    pool = new Pool(`http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}`, { connections: 50 });
  }

  type Kind = 'good' | 'deleted' | 'typed' | 'bad_json' | 'wrong_token' | 'unknown_db' | 'too_large' | 'text';
  const KINDS: Kind[] = ['good', 'deleted', 'typed', 'bad_json', 'wrong_token', 'unknown_db', 'too_large', 'text', 'good', 'typed'];

  async function send(kind: Kind, i: number): Promise<number> {
    const path = kind === 'wrong_token' ? url('db1', 'nope') : kind === 'unknown_db' ? url('db9') : url('db1');
    const body =
      kind === 'deleted'
        ? JSON.stringify({ _id: `k${i}`, _rev: '2-x', _deleted: true })
        : kind === 'typed'
          ? JSON.stringify({ _id: `k${i}`, type: `t${i % 5}` })
          : kind === 'bad_json'
            ? `{"_id": "k${i}"`
            : kind === 'too_large'
              ? JSON.stringify({ _id: `k${i}`, blob: 'q'.repeat(6000) })
              : DOC;
    const headers = kind === 'text' ? { 'content-type': 'text/plain' } : JSON_CT;
    const res = await pool.request({ path, method: 'POST', headers, body });
    await res.body.dump();
    return res.statusCode;
  }

  it('survives a burst of 10,000 mixed requests, 50 in flight: counters exact, memory flat', async () => {
    await start();
    const gc = gcFunction();
    // Warm up (JIT, pools, label sets) so the measurement sees steady state.
    for (let i = 0; i < 500; i++) await send(KINDS[i % KINDS.length] as Kind, i);
    resetWebhookMetrics();
    gc?.();
    const heapBefore = process.memoryUsage().heapUsed;

    const N = 10_000;
    const statuses = new Map<number, number>();
    let next = 0;
    const worker = async (): Promise<void> => {
      for (let i = next++; i < N; i = next++) {
        const s = await send(KINDS[i % KINDS.length] as Kind, i);
        statuses.set(s, (statuses.get(s) ?? 0) + 1);
      }
    };
    await Promise.all(Array.from({ length: 50 }, worker));

    gc?.();
    const heapAfter = process.memoryUsage().heapUsed;
    const per = N / KINDS.length;
    expect(Object.fromEntries(statuses)).toEqual({ 200: per * 5, 400: per, 401: per, 404: per, 413: per, 415: per });
    expect(await value('cbwatch_webhook_documents_total', { database: 'db1', result: 'accepted' })).toBe(per * 5);
    expect(await value('cbwatch_webhook_documents_total', { database: 'db1', result: 'bad_json' })).toBe(per);
    expect(await value('cbwatch_webhook_documents_total', { database: 'db1', result: 'unauthorized' })).toBe(per);
    expect(await value('cbwatch_webhook_documents_total', { database: '_unknown', result: 'unknown_database' })).toBe(per);
    expect(await value('cbwatch_webhook_documents_total', { database: 'db1', result: 'too_large' })).toBe(per);
    expect(await value('cbwatch_webhook_documents_total', { database: 'db1', result: 'unsupported_media_type' })).toBe(per);
    expect(await value('cbwatch_webhook_documents_total', { database: 'db1', result: 'overloaded' })).toBeUndefined();
    expect(await value('cbwatch_webhook_deleted_documents_total', { database: 'db1' })).toBe(per);
    const deletedBytes = Array.from({ length: N }, (_, i) => i)
      .filter((i) => KINDS[i % KINDS.length] === 'deleted')
      .reduce((a, i) => a + Buffer.byteLength(JSON.stringify({ _id: `k${i}`, _rev: '2-x', _deleted: true })), 0);
    const typedBytes = Array.from({ length: N }, (_, i) => i)
      .filter((i) => KINDS[i % KINDS.length] === 'typed')
      .reduce((a, i) => a + Buffer.byteLength(JSON.stringify({ _id: `k${i}`, type: `t${i % 5}` })), 0);
    expect(await value('cbwatch_webhook_body_bytes_total', { database: 'db1' })).toBe(per * 2 * Buffer.byteLength(DOC) + deletedBytes + typedBytes);
    // max_types 3: t0..t4 → three named, the rest `other`; the good bodies have no type.
    const types = await selfRegistry.getSingleMetric('cbwatch_webhook_document_types_total')?.get();
    const total = (types?.values ?? []).reduce((a, v) => a + v.value, 0);
    expect(total).toBe(per * 4);
    expect((types?.values ?? []).length).toBeLessThanOrEqual(5);
    expect(await value('cbwatch_webhook_requests_in_flight')).toBe(0);

    // Still up and answering.
    expect(await send('good', 0)).toBe(200);
    const growth = heapAfter - heapBefore;
    // With a real GC the heap is back where it was (allow 8 MiB of noise); without one, a generous bound.
    expect(growth, `heap grew by ${growth} bytes (gc ${gc ? 'on' : 'off'})`).toBeLessThan(gc ? 8 * 1024 * 1024 : 64 * 1024 * 1024);
  }, 120_000);

  it('answers 503 beyond max_concurrency and gives the slot back when a client goes away', async () => {
    await start({ max_concurrency: 2 });
    const releases: Array<() => void> = [];
    const slow = (): { res: Promise<number>; abort: AbortController } => {
      const abort = new AbortController();
      let release!: () => void;
      const gate = new Promise<void>((r) => (release = r));
      releases.push(release);
      async function* body(): AsyncGenerator<string> {
        yield '{"_id": "slow", ';
        await gate;
        yield '"done": true}';
      }
      const res = pool
        .request({ path: url('db1'), method: 'POST', headers: JSON_CT, body: Readable.from(body()), signal: abort.signal })
        .then(async (r) => {
          await r.body.dump();
          return r.statusCode;
        });
      return { res, abort };
    };
    const a = slow();
    const b = slow();
    await until(async () => (await value('cbwatch_webhook_requests_in_flight')) === 2, 'two requests in flight');
    expect(await send('good', 1)).toBe(503);
    expect(await value('cbwatch_webhook_documents_total', { database: 'db1', result: 'overloaded' })).toBe(1);

    // One client gives up mid-body: its slot comes back.
    b.abort.abort();
    await expect(b.res).rejects.toThrow();
    await until(async () => (await value('cbwatch_webhook_requests_in_flight')) === 1, 'the aborted request to release its slot');
    expect(await send('good', 2)).toBe(200);

    releases[0]?.();
    expect(await a.res).toBe(200);
    await until(async () => (await value('cbwatch_webhook_requests_in_flight')) === 0, 'no request in flight');
    expect(await value('cbwatch_webhook_documents_total', { database: 'db1', result: 'accepted' })).toBe(2);
  });
});
