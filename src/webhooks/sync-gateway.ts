/**
 * The Sync Gateway `document_changed` webhook receiver: `POST /webhooks/sync-gateway/:database?token=SECRET`.
 *
 * Sync Gateway posts every changed document (filtered by the handler's `filter`) as a JSON body to a URL and
 * can add no header, so the shared secret travels in the URL's query string. It is compared in constant
 * time (SHA-256 digests of both sides through `timingSafeEqual`). The path names the database so that one
 * receiver serves several databases with separate counters.
 *
 * Everything is decided in O(1) before the body is read: token (401), database (404), concurrency
 * (503 beyond `max_concurrency`); then the body is read up to `max_body_bytes` (413), must be JSON (415),
 * nest at most MAX_DOCUMENT_DEPTH levels and parse to an object (400). The body is parsed on a thread of its
 * own (parser.ts), never on the one that serves /metrics. Answers are immediate, so Sync Gateway's handler `timeout` never expires
 * because of us. Nothing from a document body is ever logged; only the value of the configured
 * `type_field` becomes a label, capped at `max_types` distinct values per database (the rest: `other`).
 *
 * The metrics are live prom-client metrics in `selfRegistry`; every update calls `touchSelf()` so the
 * exposition cache refreshes.
 */
import { monotonicMs } from '../clock.js';
import { createHash, timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import client from 'prom-client';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import type { SyncGatewayWebhookConfig } from '../config/types.js';
import { ConfigError } from '../errors.js';
import { defineFamily } from '../metrics/family.js';
import type { FamilyDef } from '../metrics/family.js';
import { selfRegistry, touchSelf } from '../metrics/self.js';
import { registerSecret } from '../redact.js';
import { WEBHOOK_ROUTE_CONFIG } from '../server/app.js';
import { MAX_DOCUMENT_DEPTH } from './document.js';
import type { DocumentVerdict, TypeValue } from './document.js';
import { DocumentParser } from './parser.js';

const W = 'webhooks';

export const WEBHOOK = {
  documents: defineFamily(W, 'cbwatch_webhook_documents_total', 'counter', 'Sync Gateway document_changed posts received, by database and result: accepted, or the reason they were refused (bad_json, not_object, too_deep, too_large, unsupported_media_type, unknown_database, unauthorized, overloaded, error). database is _unknown when the path named no database the receiver knows.', ['database', 'result'], 'count'),
  deleted: defineFamily(W, 'cbwatch_webhook_deleted_documents_total', 'counter', 'Accepted documents that were deletions (_deleted: true).', ['database'], 'count'),
  bodyBytes: defineFamily(W, 'cbwatch_webhook_body_bytes_total', 'counter', 'Bytes of accepted document bodies.', ['database'], 'bytes'),
  lastDocument: defineFamily(W, 'cbwatch_webhook_last_document_timestamp_seconds', 'gauge', 'When the receiver last accepted a document for the database (its clock, not the document\'s).', ['database'], 'timestamp_seconds'),
  documentTypes: defineFamily(W, 'cbwatch_webhook_document_types_total', 'counter', 'Accepted documents by the value of the configured top-level type field (deletions excluded); at most max_types values per database, the rest counted as other, a missing or non-scalar field as _none.', ['database', 'doc_type'], 'count'),
  inFlight: defineFamily(W, 'cbwatch_webhook_requests_in_flight', 'gauge', 'Webhook requests being received right now (bounded by max_concurrency; beyond it, 503).', [], 'count'),
} as const;

export const WEBHOOK_FAMILIES: readonly FamilyDef[] = Object.values(WEBHOOK);

export type WebhookResult =
  | 'accepted'
  | 'bad_json'
  | 'not_object'
  | 'too_deep'
  | 'too_large'
  | 'unsupported_media_type'
  | 'unknown_database'
  | 'unauthorized'
  | 'overloaded'
  | 'error';

/** The `database` label of requests whose path named no database the receiver knows (never a real name: those start with [a-z0-9]). */
export const UNKNOWN_DATABASE = '_unknown';
/** With no `databases` list, at most this many distinct names are accepted (and labelled); more are 404. */
export const MAX_OPEN_DATABASES = 100;
const DATABASE_RE = /^[a-z0-9][a-z0-9_$()+\-/]*$/;

const documents = new client.Counter({ name: WEBHOOK.documents.name, help: WEBHOOK.documents.help, labelNames: ['database', 'result'] as const, registers: [] });
const deleted = new client.Counter({ name: WEBHOOK.deleted.name, help: WEBHOOK.deleted.help, labelNames: ['database'] as const, registers: [] });
const bodyBytes = new client.Counter({ name: WEBHOOK.bodyBytes.name, help: WEBHOOK.bodyBytes.help, labelNames: ['database'] as const, registers: [] });
const lastDocument = new client.Gauge({ name: WEBHOOK.lastDocument.name, help: WEBHOOK.lastDocument.help, labelNames: ['database'] as const, registers: [] });
const documentTypes = new client.Counter({ name: WEBHOOK.documentTypes.name, help: WEBHOOK.documentTypes.help, labelNames: ['database', 'doc_type'] as const, registers: [] });
const inFlightGauge = new client.Gauge({ name: WEBHOOK.inFlight.name, help: WEBHOOK.inFlight.help, registers: [] });
const LIVE = [documents, deleted, bodyBytes, lastDocument, documentTypes, inFlightGauge];

/** The webhook families appear in /metrics only once a receiver is registered (never for a disabled one). */
function registerLiveMetrics(): void {
  for (const m of LIVE) {
    const name = (m as unknown as { name: string }).name;
    if (selfRegistry.getSingleMetric(name) === undefined) selfRegistry.registerMetric(m);
  }
}

/** Forget every webhook series (tests). */
export function resetWebhookMetrics(): void {
  for (const m of LIVE) m.reset();
  touchSelf();
}

/** A rotated token file is read again on a wrong token at most this often. */
export const TOKEN_REREAD_MS = 5000;

/** The registered receiver: a reload hands it the token read again. */
export interface WebhookReceiver {
  setToken(token: string): void;
}

function digest(s: string): Buffer {
  return createHash('sha256').update(s, 'utf8').digest();
}

/** Constant-time comparison: equal-length digests, so neither the content nor the length of the secret leaks. */
export function tokenMatches(given: unknown, expected: Buffer): boolean {
  if (typeof given !== 'string') return false;
  return timingSafeEqual(digest(given), expected);
}

/** The body a refused request gets: a reason, nothing echoed back. */
const REASONS: Record<Exclude<WebhookResult, 'accepted'>, { status: number; error: string }> = {
  bad_json: { status: 400, error: 'body is not valid JSON' },
  not_object: { status: 400, error: 'body is not a JSON object (a document)' },
  too_deep: { status: 400, error: `body nests deeper than ${MAX_DOCUMENT_DEPTH} levels` },
  too_large: { status: 413, error: 'body larger than max_body_bytes' },
  unsupported_media_type: { status: 415, error: 'only application/json is accepted' },
  unknown_database: { status: 404, error: 'unknown database' },
  unauthorized: { status: 401, error: 'missing or wrong token' },
  overloaded: { status: 503, error: 'too many requests in flight' },
  error: { status: 500, error: 'internal error' },
};

interface WebhookRequestState {
  database: string;
  acquired: boolean;
}

/** Marker body of a request whose content type is not JSON (counted and answered 415 by the handler). */
const UNSUPPORTED = Symbol('unsupported media type');

/**
 * Register the receiver on `app`, inside an encapsulated plugin: its JSON parser (raw buffer, size cap),
 * hooks and error handler apply to its route only, never to the rest of the app.
 */
/**
 * How long a post may hold a receiver slot (headers in, body not yet all read). Sync Gateway posts one small
 * document per request on a nearby network: ten seconds is generous, and it bounds what a slow or stuck sender
 * (or one token holder opening many connections) can pin, well below the server-wide 30 s request timeout.
 */
export const WEBHOOK_BODY_DEADLINE_MS = 10_000;

export function registerSyncGatewayWebhooks(
  app: FastifyInstance,
  cfg: SyncGatewayWebhookConfig,
  log: Logger,
  opts: { readonly bodyDeadlineMs?: number; readonly parseWorkerFile?: string } = {},
): WebhookReceiver {
  if (!cfg.enabled) return { setToken: () => undefined };
  if (cfg.token === '') throw new ConfigError('webhooks.sync_gateway: the token is empty (token_file or token_env must hold a secret)');
  const wlog = log.child({ component: 'webhooks' });
  registerLiveMetrics();
  if (cfg.token.length < 16) wlog.warn('the Sync Gateway webhook token is shorter than 16 characters: use a long random secret');

  let expected = digest(cfg.token);
  let token = cfg.token;
  let rereadAt = 0;
  const useToken = (t: string): void => {
    if (t === token) return;
    token = t;
    expected = digest(t);
    registerSecret(t);
  };
  /**
   * A wrong token, and the token came from a file: read the file again (at most every TOKEN_REREAD_MS), so
   * that a rotated token is accepted without a restart. True when the file now holds another token.
   */
  const reread = (): boolean => {
    // Durations on the monotonic clock: a wall-clock step back must not block rereads for its size.
    if (cfg.tokenFile === undefined || monotonicMs() - rereadAt < TOKEN_REREAD_MS) return false;
    rereadAt = monotonicMs();
    let t: string;
    try {
      t = readFileSync(cfg.tokenFile, 'utf8').replace(/(?:\r?\n)+$/, '');
    } catch {
      return false;
    }
    if (t.length < 16 || t === token) return false;
    useToken(t);
    wlog.info('webhook token file changed: using the new token');
    return true;
  };
  const configured = new Set(cfg.databases);
  const open = configured.size === 0;
  /** Databases seen so far (open mode: first MAX_OPEN_DATABASES names with a valid token). */
  const seen = new Set<string>(cfg.databases);
  const types = new Map<string, Set<string>>();
  const states = new WeakMap<FastifyRequest, WebhookRequestState>();
  let inFlight = 0;
  /** Rate-limited warnings: result → last time logged (ms). */
  const lastWarn = new Map<string, number>();
  const suppressed = new Map<string, number>();

  const count = (database: string, result: WebhookResult): void => {
    documents.inc({ database, result });
    touchSelf();
  };

  /** Refusals are logged at debug; the ones an operator must act on at most once a minute at warn. */
  const refuse = (reply: FastifyReply, database: string, result: Exclude<WebhookResult, 'accepted'>): FastifyReply => {
    count(database, result);
    const r = REASONS[result];
    if (result === 'unauthorized' || result === 'overloaded' || result === 'too_large' || result === 'error') {
      const now = monotonicMs();
      const last = lastWarn.get(result) ?? -Infinity;
      if (now - last >= 60_000) {
        wlog.warn({ database, result, status: r.status, suppressed: suppressed.get(result) ?? 0 }, 'refused a Sync Gateway webhook post');
        lastWarn.set(result, now);
        suppressed.set(result, 0);
      } else {
        suppressed.set(result, (suppressed.get(result) ?? 0) + 1);
      }
    } else {
      wlog.debug({ database, result, status: r.status }, 'refused a Sync Gateway webhook post');
    }
    return reply.code(r.status).header('cache-control', 'no-store').send({ error: r.error });
  };

  const known = (name: string): boolean => seen.has(name);

  const release = (req: FastifyRequest): void => {
    const st = states.get(req);
    if (st?.acquired) {
      st.acquired = false;
      inFlight--;
      inFlightGauge.set(inFlight);
      touchSelf();
    }
  };

  const typeLabel = (database: string, value: TypeValue): string => {
    if (value.kind === 'none') return '_none';
    if (value.kind === 'too_long') return 'other';
    const v = value.text;
    let set = types.get(database);
    if (!set) {
      set = new Set();
      types.set(database, set);
    }
    if (set.has(v)) return v;
    if (set.size >= cfg.max_types) return 'other';
    set.add(v);
    return v;
  };
  const parser = new DocumentParser(opts.parseWorkerFile);

  void app.register(async (scope) => {
    // Only JSON, read as raw bytes with the configured cap: parsing happens in the handler, where a
    // failure is counted and answered without echoing (Node's JSON errors quote the input).
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('application/json', { parseAs: 'buffer', bodyLimit: cfg.max_body_bytes }, (_req, body, done) => done(null, body));
    scope.addContentTypeParser('*', (_req, _payload, done) => done(null, UNSUPPORTED));

    scope.addHook('onRequest', async (req, reply) => {
      const params = req.params as { database?: string };
      const name = params.database ?? '';
      const st: WebhookRequestState = { database: known(name) ? name : UNKNOWN_DATABASE, acquired: false };
      states.set(req, st);
      const given = (req.query as { token?: unknown }).token;
      if (!tokenMatches(given, expected) && !(reread() && tokenMatches(given, expected))) return refuse(reply, st.database, 'unauthorized');
      if (!known(name)) {
        if (!open || !DATABASE_RE.test(name) || seen.size >= MAX_OPEN_DATABASES) return refuse(reply, UNKNOWN_DATABASE, 'unknown_database');
        seen.add(name);
        st.database = name;
      }
      if (inFlight >= cfg.max_concurrency) return refuse(reply, st.database, 'overloaded');
      inFlight++;
      st.acquired = true;
      inFlightGauge.set(inFlight);
      // A sender still sending when the deadline passes is cut off, which frees its slot at once.
      const deadline = setTimeout(() => {
        if (!reply.sent) req.raw.destroy();
      }, opts.bodyDeadlineMs ?? WEBHOOK_BODY_DEADLINE_MS);
      deadline.unref();
      // Whatever ends the exchange (answer sent, client gone), the slot is given back exactly once.
      reply.raw.once('close', () => {
        clearTimeout(deadline);
        release(req);
      });
      return undefined;
    });
    scope.addHook('onResponse', async (req) => release(req));
    scope.addHook('onClose', async () => parser.close());

    scope.setErrorHandler((err: FastifyError, req, reply) => {
      const database = states.get(req)?.database ?? UNKNOWN_DATABASE;
      switch (err.code) {
        case 'FST_ERR_CTP_BODY_TOO_LARGE':
          return refuse(reply, database, 'too_large');
        case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
          return refuse(reply, database, 'unsupported_media_type');
        case 'FST_ERR_CTP_EMPTY_JSON_BODY':
        case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
          return refuse(reply, database, 'bad_json');
        default:
          // The code only: a message may quote what the client sent.
          wlog.debug({ code: err.code, statusCode: err.statusCode }, 'webhook request failed');
          if (err.statusCode !== undefined && err.statusCode >= 400 && err.statusCode < 500) {
            count(database, 'error');
            return reply.code(err.statusCode).send({ error: 'bad request' });
          }
          return refuse(reply, database, 'error');
      }
    });

    scope.post('/webhooks/sync-gateway/:database', { config: WEBHOOK_ROUTE_CONFIG }, async (req, reply) => {
      const database = states.get(req)?.database ?? UNKNOWN_DATABASE;
      const body = req.body as Buffer | typeof UNSUPPORTED | undefined;
      if (body === UNSUPPORTED) return refuse(reply, database, 'unsupported_media_type');
      if (body === undefined || body.length === 0) return refuse(reply, database, 'bad_json');
      // Read off this thread, depth first: this thread only copies the bytes and waits.
      let verdict: DocumentVerdict;
      try {
        verdict = await parser.parse(body, cfg.type_field);
      } catch (err) {
        wlog.debug({ err: { message: (err as Error).message } }, 'the webhook parse thread failed');
        return refuse(reply, database, 'error');
      }
      if (verdict.kind !== 'document') return refuse(reply, database, verdict.kind);
      documents.inc({ database, result: 'accepted' });
      bodyBytes.inc({ database }, body.length);
      lastDocument.set({ database }, Date.now() / 1000);
      if (verdict.deleted) deleted.inc({ database });
      else if (cfg.type_field !== undefined) documentTypes.inc({ database, doc_type: typeLabel(database, verdict.type) });
      touchSelf();
      return reply.code(200).header('cache-control', 'no-store').send({ ok: true });
    });
  });
  return { setToken: useToken };
}
