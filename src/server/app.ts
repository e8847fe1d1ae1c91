/**
 * The fastify app, built apart from listening so tests can use `app.inject()`.
 * Routes: the telemetry path (/metrics unless --web.telemetry-path says otherwise; gzip when accepted), /-/healthy, /-/ready, /, and the Sync Gateway webhook receiver.
 */
import { constants as h2 } from 'node:http2';
import { createRequire } from 'node:module';
import { Readable } from 'node:stream';
import type { TLSSocket } from 'node:tls';
import Fastify, { LogController } from 'fastify';
import type { FastifyInstance, FastifyReply, FastifyRequest, FastifyServerOptions } from 'fastify';
import type { Logger } from 'pino';
import type { Config } from '../config/types.js';
import { packageVersion } from '../metrics/build.js';
import type { Exposition } from '../metrics/exposition.js';
import { OPENMETRICS_CONTENT_TYPE } from '../metrics/openmetrics.js';
import { countServed, countSlowReader } from '../metrics/self.js';
import { acceptsGzip, negotiateFormat } from './negotiate.js';
import type { StatusSource } from '../collection/view.js';
import { landingPage } from './landing.js';
import { findProblems } from '../metrics/problems.js';
import { DEFAULT_MAX_REQUESTS } from '../config/settings.js';

export interface AppDeps {
  readonly store: StatusSource;
  readonly exposition: Exposition;
  readonly config: Pick<Config, 'clusters' | 'webhooks'>;
  readonly log: Logger;
  /**
   * Checks an Authorization header when web basic auth is configured (`client`: the remote address, to share
   * the password checks out fairly); undefined = open. 'busy': the password could not be checked now (too many
   * checks waiting), answered 503.
   */
  readonly authorize?: (header: string | undefined, client?: string) => Promise<boolean | 'busy'>;
  /** fastify's https options when web TLS is configured. */
  readonly https?: FastifyServerOptions extends { https?: infer H } ? H : unknown;
  /**
   * Client-certificate policies Node cannot enforce in the handshake: a reason to refuse, or undefined. Run on
   * every new TLS connection (refused: closed with no response) and on every request (403).
   */
  readonly checkClientCertificate?: (socket: TLSSocket) => string | undefined;
  /** Registers extra routes (the webhook receiver) on the app. */
  readonly plugins?: ReadonlyArray<(app: FastifyInstance) => void>;
  /** Requests served at once (`--web.max-requests`, default 40; 0: no limit); beyond it, 503. */
  readonly maxRequests?: number;
  /** The web config's `rate_limit` (a token bucket over all requests); beyond it, 429. */
  readonly rateLimit?: { readonly intervalMs: number; readonly burst: number } | undefined;
  /** The web config's `http_server_config.headers`, set on every response. */
  readonly headers?: Readonly<Record<string, string>> | undefined;
  /** With `https`: serve HTTP/2 as well as HTTP/1.1 (the web config's `http_server_config.http2`). */
  readonly http2?: boolean;
  /** Path of the metrics endpoint (`--web.telemetry-path`, default /metrics); only it serves them. */
  readonly telemetryPath?: string;
  /** Server timeouts, ms (defaults: SERVER_TIMEOUTS). */
  readonly timeouts?: Partial<ServerTimeouts>;
}

export interface ServerTimeouts {
  /** Whole request (headers and body) must arrive within this (Node's requestTimeout). */
  readonly requestMs: number;
  /** Request headers must arrive within this (Node's headersTimeout). */
  readonly headersMs: number;
  /** An idle keep-alive connection is closed after this. */
  readonly keepAliveMs: number;
  /** A socket with no activity at all is closed after this (fastify's connectionTimeout). */
  readonly idleMs: number;
  /**
   * A telemetry body must be written out within this grace plus its size at `bodyMinBytesPerSecond`; a client
   * reading slower loses its connection and its slot.
   */
  readonly bodyGraceMs: number;
  /** The slowest read a telemetry body may get after the grace, bytes a second. */
  readonly bodyMinBytesPerSecond: number;
}

/**
 * A slow or silent client holds one connection, and so at most one request slot, for a bounded time: headers
 * within 10 s, the whole request (a webhook body) within 30 s, no activity for 60 s, idle keep-alive 65 s
 * (above Prometheus' and most load balancers' reuse windows). A telemetry body is written out within 10 s plus
 * 1 s per MiB (a 4 MiB plain body: 14 s; Prometheus gives up on a scrape after its scrape_timeout, 10 s by
 * default), else the connection is closed: a client reading at 1 byte/s held its slot for 120 s before.
 */
export const SERVER_TIMEOUTS: ServerTimeouts = {
  requestMs: 30_000,
  headersMs: 10_000,
  keepAliveMs: 65_000,
  idleMs: 60_000,
  bodyGraceMs: 10_000,
  bodyMinBytesPerSecond: 1024 * 1024,
};
export { DEFAULT_MAX_REQUESTS };
/**
 * Uncompressed telemetry scrapes share at most this part of the request slots (at least one): a flood of plain
 * scrapes (megabytes each, and most of the CPU) leaves the rest to gzip scrapers, as Prometheus is.
 */
export const PLAIN_SLOT_SHARE = 0.25;

/** Slots plain scrapes of the telemetry path may hold at once out of `maxRequests`. */
export function plainSlots(maxRequests: number): number {
  return Math.max(1, Math.floor(maxRequests * PLAIN_SLOT_SHARE));
}

/** How long a telemetry body of `bytes` may take to be written (see SERVER_TIMEOUTS). */
export function bodyDeadlineMs(bytes: number, t: Pick<ServerTimeouts, 'bodyGraceMs' | 'bodyMinBytesPerSecond'> = SERVER_TIMEOUTS): number {
  return t.bodyGraceMs + Math.ceil((bytes / t.bodyMinBytesPerSecond) * 1000);
}
/** A refused client certificate is logged at warn at most this often per reason (the rest are counted in `suppressed`). */
export const CLIENT_REFUSAL_WARN_EVERY_MS = 60_000;

/** A token bucket (the semantics of Go's rate.Limiter used by the exporter-toolkit): `burst` tokens, one more every `intervalMs`. */
export class TokenBucket {
  private tokens: number;
  private last: number;
  constructor(
    private readonly intervalMs: number,
    private readonly burst: number,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.tokens = burst;
    this.last = now();
  }
  take(): boolean {
    const t = this.now();
    this.tokens = Math.min(this.burst, this.tokens + (t - this.last) / this.intervalMs);
    this.last = t;
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }
}

/** Route config of a route that reads a request body and carries its own credentials and bounds (the webhook receiver). */
export const WEBHOOK_ROUTE_CONFIG = { webhook: true } as const;

function isWebhookRoute(req: FastifyRequest): boolean {
  return (req.routeOptions.config as { webhook?: unknown } | undefined)?.webhook === true;
}

/**
 * Whether a request comes with a body: HTTP/1.1 announces it by Transfer-Encoding or a Content-Length above 0
 * (RFC 9112 6.3); HTTP/2 by not ending the stream with its headers (a Content-Length there is optional).
 */
function hasBody(req: FastifyRequest): boolean {
  const stream = (req.raw as { stream?: { endAfterHeaders?: boolean } }).stream;
  if (req.raw.httpVersionMajor >= 2 && stream !== undefined) return stream.endAfterHeaders !== true;
  if (req.headers['transfer-encoding'] !== undefined) return true;
  const length = req.headers['content-length'];
  return length !== undefined && length.trim() !== '0';
}

/**
 * Close the connection (an HTTP/2 stream) of a response not written out within `ms`: a client that reads its body
 * slower than the deadline allows gives its slot back (counted in cbwatch_http_slow_readers_closed_total). Over
 * HTTP/2 only the stream is reset, with CANCEL (a reset with NO_ERROR, which destroy() sends, may read as a
 * complete answer to some clients); the session and its other streams go on.
 */
function writeDeadline(req: FastifyRequest, reply: FastifyReply, ms: number): void {
  const res = reply.raw;
  const timer = setTimeout(() => {
    if (res.writableFinished) return;
    countSlowReader();
    const stream = (req.raw as { stream?: { close(code: number): void } }).stream;
    if (req.raw.httpVersionMajor >= 2 && stream !== undefined) stream.close(h2.NGHTTP2_CANCEL);
    else req.raw.socket?.destroy();
  }, ms);
  timer.unref();
  res.once('close', () => clearTimeout(timer));
}

/** The path of a request URL, without its query. */
function pathOf(url: string): string {
  const q = url.indexOf('?');
  return q < 0 ? url : url.slice(0, q);
}

export const METRICS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

type CompilersFactory = Required<NonNullable<NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']>>;
type CompilerBuilder = (externalSchemas: unknown, options: unknown) => unknown;

/**
 * fastify's default schema compilers, built on first use. fastify requires them when an app is built (ajv,
 * ajv-formats, fast-uri, fast-json-stringify: about 120 modules, 1.5 MB of V8 heap and more of the allocator's
 * memory, kept for the process's life) but calls them only for a route that declares a schema, which no route of
 * cbwatch does. These builders require the same packages, resolved from fastify's own directory, and hand over to
 * them the first time fastify asks; until then nothing is loaded. (fastify counts a factory given here as a custom
 * compiler: a headers schema would be handed to it as written rather than with its keys lower-cased.)
 */
export function lazyCompilers(): CompilersFactory {
  const fromFastify = createRequire(createRequire(import.meta.url).resolve('fastify'));
  const lazy = (pkg: string): CompilerBuilder => {
    let build: CompilerBuilder | undefined;
    return (externalSchemas, options) => (build ??= (fromFastify(pkg) as () => CompilerBuilder)())(externalSchemas, options);
  };
  return {
    buildValidator: lazy('@fastify/ajv-compiler') as CompilersFactory['buildValidator'],
    buildSerializer: lazy('@fastify/fast-json-stringify-compiler') as CompilersFactory['buildSerializer'],
  };
}

export function buildApp(deps: AppDeps): FastifyInstance {
  const t = { ...SERVER_TIMEOUTS, ...deps.timeouts };
  // Node checks the request and headers deadlines on this period (default 30 s, too coarse for them).
  const nodeServer = { headersTimeout: t.headersMs, connectionsCheckingInterval: Math.min(1000, t.headersMs) };
  const opts: Record<string, unknown> = {
    loggerInstance: deps.log.child({ component: 'http' }),
    logController: new LogController({ disableRequestLogging: true }),
    forceCloseConnections: true,
    return503OnClosing: true,
    requestTimeout: t.requestMs,
    keepAliveTimeout: t.keepAliveMs,
    connectionTimeout: t.idleMs,
    http: nodeServer,
    schemaController: { compilersFactory: lazyCompilers() },
  };
  if (deps.https) opts.https = { ...(deps.https as object), ...nodeServer, ...(deps.http2 === true ? { allowHTTP1: true } : {}) };
  if (deps.https && deps.http2 === true) {
    opts.http2 = true;
    // An HTTP/2 session idle this long is closed (the keep-alive of HTTP/1.1).
    opts.http2SessionTimeout = t.keepAliveMs;
  }
  const app = Fastify(opts as FastifyServerOptions) as unknown as FastifyInstance;
  if ('headersTimeout' in app.server) app.server.headersTimeout = t.headersMs;

  const telemetryPath = deps.telemetryPath ?? '/metrics';
  // Every answer, refusals included, by route template (an unrouted path is `other`: never a raw path as a label).
  app.addHook('onResponse', async (req, reply) => countServed(req.routeOptions.url ?? 'other', reply.statusCode));

  // Order matters: the cheapest refusals come first, before any TLS policy check or bcrypt compare.
  if (deps.rateLimit !== undefined && deps.rateLimit.intervalMs > 0) {
    const bucket = new TokenBucket(deps.rateLimit.intervalMs, deps.rateLimit.burst);
    app.addHook('onRequest', async (_req, reply) => {
      if (!bucket.take()) return reply.code(429).type('text/plain').send('Too Many Requests\n');
    });
  }
  if (deps.headers !== undefined && Object.keys(deps.headers).length > 0) {
    const headers = deps.headers;
    app.addHook('onRequest', async (_req, reply) => {
      for (const [k, v] of Object.entries(headers)) void reply.header(k, v);
    });
  }

  if (deps.checkClientCertificate) {
    const check = deps.checkClientCertificate;
    // The exporter-toolkit refuses a client certificate (client_allowed_sans, RequireAnyClientCert,
    // VerifyClientCertIfGiven) in the handshake, so such a client never gets an HTTP exchange. Node has no
    // hook inside the handshake; 'secureConnection' is the first moment after it, and this listener runs in
    // the same tick as the one the HTTP server attached, before any request bytes are read: the socket is
    // closed with no response. `check` reads the web config in force, so a reload applies to new connections.
    const httpLog = deps.log.child({ component: 'http' });
    // One client reconnecting in a loop must not flood the log: one warning per reason a minute, as the
    // webhook receiver does, with the count of refusals not logged since the previous one.
    const lastWarn = new Map<string, { at: number; suppressed: number }>();
    app.server.on('secureConnection', (socket: TLSSocket) => {
      const reason = check(socket);
      if (reason === undefined) return;
      socket.destroy();
      const now = performance.now();
      const seen = lastWarn.get(reason);
      if (seen !== undefined && now - seen.at < CLIENT_REFUSAL_WARN_EVERY_MS) {
        seen.suppressed++;
        return;
      }
      // Reasons are a short fixed list (OpenSSL's verify error codes among them); the bound is a safeguard.
      if (seen === undefined && lastWarn.size >= 64) lastWarn.clear();
      const remote = `${socket.remoteAddress ?? '?'}:${socket.remotePort ?? '?'}`;
      httpLog.warn({ remote, reason, suppressed: seen?.suppressed ?? 0 }, 'TLS client refused after the handshake; connection closed');
      lastWarn.set(reason, { at: now, suppressed: 0 });
    });
    app.addHook('onRequest', async (req, reply) => {
      // Kept for connections opened before a reload that tightened the rules: they are refused from then on.
      const reason = check(req.raw.socket as TLSSocket);
      // Refused for the connection, not just this request (the toolkit ends the handshake).
      if (reason === undefined) return;
      // HTTP/2 has no Connection header (and refuses one); its stream just ends.
      if (req.raw.httpVersionMajor < 2) void reply.header('connection', 'close');
      return reply.code(403).type('text/plain').send(`Forbidden: ${reason}\n`);
    });
  }

  // A request that carries a body where none is read is refused now, before auth and before a slot: otherwise
  // fastify would read it first (a POST on /metrics), and a client sending it one byte at a time would hold
  // the connection, and formerly a slot, until the request timeout. The connection is closed with the answer,
  // so the unread rest of the body is never waited for.
  app.addHook('onRequest', async (req, reply) => {
    if (!hasBody(req) || isWebhookRoute(req)) return;
    if (req.raw.httpVersionMajor < 2) void reply.header('connection', 'close');
    if (req.method !== 'GET' && req.method !== 'HEAD' && pathOf(req.url) === telemetryPath) {
      return reply.code(405).header('allow', 'GET, HEAD').type('text/plain').send('Method Not Allowed\n');
    }
    return reply.code(413).type('text/plain').send('Content Too Large: this route takes no request body\n');
  });

  if (deps.authorize) {
    const authorize = deps.authorize;
    app.addHook('onRequest', async (req, reply) => {
      // Health endpoints stay open for orchestrators; webhooks carry their own token.
      if (req.routeOptions.url === '/-/healthy' || isWebhookRoute(req)) return;
      const verdict = await authorize(req.headers.authorization, req.raw.socket?.remoteAddress);
      if (verdict === 'busy') return reply.code(503).header('retry-after', '1').type('text/plain').send('Service Unavailable: too many password checks waiting\n');
      if (!verdict) return reply.code(401).header('www-authenticate', 'Basic realm="cbwatch"').send('Unauthorized\n');
    });
  }

  // The slot is taken last, once the request is authenticated and has no body left to arrive: from here on
  // only cbwatch works on it, so clients that wait for a password check or trickle bytes never hold one.
  const maxRequests = deps.maxRequests ?? DEFAULT_MAX_REQUESTS;
  if (maxRequests > 0) {
    let inFlight = 0;
    let plainInFlight = 0;
    const plainMax = plainSlots(maxRequests);
    app.addHook('onRequest', async (req, reply) => {
      // Liveness stays answerable under a flood; the webhook receiver has its own bounds (max_concurrency,
      // the body deadline and max_body_bytes) and never takes one of these slots; nor does POST /-/reload, whose
      // requests wait for one coalesced reload (src/cli.ts) and would otherwise hold every slot while they wait.
      if (req.routeOptions.url === '/-/healthy' || req.routeOptions.url === '/-/reload' || isWebhookRoute(req)) return;
      if (inFlight >= maxRequests) return reply.code(503).header('retry-after', '1').type('text/plain').send('Service Unavailable: too many requests in flight\n');
      const plain = req.routeOptions.url === telemetryPath && (req.method === 'GET' || req.method === 'HEAD') && !acceptsGzip(req.headers['accept-encoding']);
      if (plain && plainInFlight >= plainMax) {
        return reply.code(503).header('retry-after', '1').type('text/plain').send('Service Unavailable: too many uncompressed scrapes in flight (ask with Accept-Encoding: gzip)\n');
      }
      inFlight++;
      if (plain) plainInFlight++;
      // 'close' fires once whether the answer was sent or the client went away.
      reply.raw.once('close', () => {
        inFlight--;
        if (plain) plainInFlight--;
      });
    });
  }

  app.get(telemetryPath, async (req, reply) => {
    const gzip = acceptsGzip(req.headers['accept-encoding']);
    // OpenMetrics when the scraper prefers it (Prometheus does by default), from the same prepared parts.
    const openMetrics = negotiateFormat(req.headers.accept) === 'openmetrics';
    const body = await deps.exposition.body(gzip, openMetrics);
    void reply.header('content-type', openMetrics ? OPENMETRICS_CONTENT_TYPE : METRICS_CONTENT_TYPE).header('content-length', body.length);
    // The body depends on both headers (a cache in between must not hand one scraper's format to another).
    void reply.header('vary', 'accept, accept-encoding');
    if (gzip) void reply.header('content-encoding', 'gzip');
    if (req.method !== 'HEAD') writeDeadline(req, reply, bodyDeadlineMs(body.length, t));
    // The memoised buffers are written as they are, never joined (see Exposition). One buffer (the gzip body)
    // goes to fastify as a buffer: written with the headers in one write, as a static file would be. Through a
    // stream, the same bytes cost more than twice the time per scrape (bench/RESULTS.md, "Gzip throughput
    // against a static ceiling"). Several (the plain parts, megabytes) are streamed rather than joined.
    const [only] = body.chunks;
    if (body.chunks.length === 1 && only !== undefined) return reply.send(Buffer.isBuffer(only) ? only : Buffer.from(only.buffer, only.byteOffset, only.byteLength));
    return reply.send(Readable.from(body.chunks, { objectMode: false }));
  });

  // Only GET (and HEAD) read the exposition; anything else is told what is allowed: every other method fastify
  // routes (TRACE among them) here, and the methods it does not route (PROPFIND, MKCOL, LOCK…: any that Node's
  // parser accepts) in the not-found handler below.
  app.route({
    method: app.supportedMethods.filter((m) => m !== 'GET' && m !== 'HEAD'),
    url: telemetryPath,
    handler: async (_req, reply) => reply.code(405).header('allow', 'GET, HEAD').type('text/plain').send('Method Not Allowed\n'),
  });
  app.setNotFoundHandler(async (req, reply) => {
    const path = pathOf(req.url);
    if (path === telemetryPath) return reply.code(405).header('allow', 'GET, HEAD').type('text/plain').send('Method Not Allowed\n');
    // POST /-/reload, when --web.enable-lifecycle registered it.
    if (path === '/-/reload' && app.hasRoute({ method: 'POST', url: '/-/reload' })) {
      return reply.code(405).header('allow', 'POST').type('text/plain').send('Method Not Allowed\n');
    }
    // fastify's own answer (its default not-found handler's body).
    return reply.code(404).send({ message: `Route ${req.method}:${req.url} not found`, error: 'Not Found', statusCode: 404 });
  });

  app.get('/-/healthy', async (_req, reply) => reply.type('text/plain').send('Healthy\n'));

  app.get('/-/ready', async (_req, reply) => {
    if (deps.store.allPolledOnce()) return reply.type('text/plain').send('Ready\n');
    return reply.code(503).type('text/plain').send('Not ready: waiting for the first poll of every collector\n');
  });

  app.get('/', async (_req, reply) =>
    reply.type('text/html; charset=utf-8').send(
      landingPage({
        version: packageVersion(),
        statuses: deps.store.statusList(),
        clusters: deps.config.clusters.map((c) => ({ name: c.name, url: c.url })),
        webhooks: deps.config.webhooks.syncGateway?.enabled === true,
        now: Date.now(),
        problems: deps.store.problems?.() ?? [],
        telemetryPath,
      }),
    ),
  );

  for (const p of deps.plugins ?? []) p(app);
  return app;
}
