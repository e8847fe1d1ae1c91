/**
 * The Couchbase REST client: one undici pool per origin with keep-alive, a per-cluster bound on requests
 * in flight, explicit connect/headers/body timeouts, a response-size cap, basic auth and TLS.
 * Every request is counted by route template (never a raw path) and timed.
 * Credentials never appear in an error message or a log line: URLs in errors carry no userinfo and the
 * Authorization header is built here and nowhere else.
 * Beside it: the semaphores (semaphore.ts), the thread's answer byte budget (answer-budget.ts), the cap on an
 * answer's values (answer-values.ts) and the mapping of failures to typed errors (request-errors.ts).
 */
import { monotonicMs } from '../clock.js';
import { readFileSync } from 'node:fs';
import { Pool } from './undici.js';
import type { Dispatcher } from 'undici';
import type { z } from 'zod';
import { BudgetError, NetworkError, RequestError, SchemaError, TooLargeError } from '../errors.js';
import type { RequestDescription } from '../errors.js';
import { processRedactor, registerSecret } from '../redact.js';
import type { Redactor } from '../redact.js';
import { answerBudget, reportAnswerBytes } from './answer-budget.js';
import type { ByteBudget } from './answer-budget.js';
import { answerValueLimit, countValueMarks, DEPTH_SCAN_FROM_CHARS, MAX_ANSWER_DEPTH, nestsDeeperThan } from './answer-values.js';
import { abortError, codeOf, statusError, transportError } from './request-errors.js';
import { FairSemaphore } from './semaphore.js';

// The collection worker sets these through this module (src/collection/worker.ts); they live in answer-budget.ts
// and answer-values.ts.
export { setAnswerBudget, setAnswerListener } from './answer-budget.js';
export { setAnswerValueLimit } from './answer-values.js';

export type QueryValue = string | number | boolean | undefined;

export interface RequestOptions {
  readonly query?: Readonly<Record<string, QueryValue>>;
  /** Another origin of the same cluster (Search, Backup); defaults to the cluster's management URL. */
  readonly baseUrl?: string;
  readonly method?: 'GET' | 'POST';
  /** JSON request body (POST). */
  readonly json?: unknown;
  readonly signal?: AbortSignal;
  /** Statuses answered as data instead of thrown (e.g. 404 for an optional endpoint). */
  readonly allowStatus?: readonly number[];
  /**
   * Reads a 2xx body in place of `JSON.parse` (its result, or what its Promise resolves to, then goes through the
   * schema as usual): for an answer read piece by piece (src/stats/range.ts). A SyntaxError it throws is the body's
   * "not valid JSON" failure. A reader that gives the event loop turns is handed the request's signal: whatever it
   * throws once the signal has fired is the request's abort.
   */
  readonly parseBody?: (text: string, signal: AbortSignal | undefined) => unknown;
}

export interface RawResponse {
  readonly status: number;
  readonly text: string;
  readonly contentType: string;
}

export interface JsonResponse<T> {
  readonly status: number;
  /** Parsed body when the status was 2xx; undefined for an allowed non-2xx status. */
  readonly data: T | undefined;
  readonly text: string;
}

/** What `cbwatch check` and the self-metrics see of one request. */
export interface RequestRecord {
  readonly endpoint: string;
  readonly method: string;
  /** HTTP status, or undefined when no response arrived. */
  readonly status: number | undefined;
  /** The `code` label: the status, or `timeout`, `network`, `aborted`, `too_large`, `over_budget`. */
  readonly code: string;
  readonly durationSeconds: number;
  readonly error: RequestError | undefined;
}

export interface CouchbaseClient {
  /** GET (or POST) a route template such as `/pools/default/buckets/{bucket}/stats`; params are URL-encoded. */
  getJson<T>(
    route: string,
    params: Readonly<Record<string, string>>,
    schema: z.ZodType<T>,
    options?: RequestOptions,
  ): Promise<T>;
  /** Like getJson, but statuses in `allowStatus` come back as data rather than errors. */
  requestJson<T>(
    route: string,
    params: Readonly<Record<string, string>>,
    schema: z.ZodType<T>,
    options?: RequestOptions,
  ): Promise<JsonResponse<T>>;
  /** A view of this client bound to a poll: its signal, and a callback per request. */
  scoped(scope: ClientScope): CouchbaseClient;
  /** The management base URL. */
  readonly baseUrl: string;
  /** Requests holding a slot (sent, or answered and being parsed) and requests waiting for one. */
  /** `pools`: connection pools open (one per origin, at most MAX_POOLS), when the client keeps any. */
  load(): { readonly inFlight: number; readonly waiting: number; readonly pools?: number };
  close(): Promise<void>;
  /** Use this password from now on (a reload read a rotated one); every view of the client follows. */
  setPassword?(password: string | undefined): void;
}

export interface ClientScope {
  signal?: AbortSignal;
  /** Called when a request finished (answered, failed or aborted). */
  onRequest?: (rec: RequestRecord) => void;
  /** Called when a request is about to be sent: a poll that hits its deadline can name what it waited for. */
  onStart?: (endpoint: string) => void;
  /**
   * The lane of the cluster's request slots this view queues in (the collector's name for a poll): a lane
   * holds at most half the slots and lanes are served in turn (see FairSemaphore). Inherited by views of
   * this view; the unscoped client's lane is ''.
   */
  lane?: string;
}

export interface ClientSettings {
  readonly cluster: string;
  readonly url: string;
  readonly username?: string | undefined;
  readonly password?: string | undefined;
  /**
   * The file the password came from, if any: on a 401 it is read again (at most once per
   * PASSWORD_REREAD_MS) and, when it changed, the request is sent once more with the new password.
   */
  readonly passwordFile?: string | undefined;
  readonly tls?: {
    readonly caFile?: string;
    readonly certFile?: string;
    readonly keyFile?: string;
    readonly insecureSkipVerify?: boolean;
  };
  readonly concurrency?: number;
  readonly connectTimeout?: number;
  readonly requestTimeout?: number;
  readonly maxResponseBytes?: number;
  /** Cap on the values one answer may hold (see countValueMarks); default: the process-wide one (setAnswerValueLimit). */
  readonly maxAnswerValues?: number;
  /** Called once per finished request (self-metrics). */
  readonly observe?: (cluster: string, rec: RequestRecord) => void;
  readonly userAgent?: string;
  /** Budget for buffered answers; default: the process-wide one (see setAnswerBudget). */
  readonly budget?: ByteBudget;
}

/** Fill a route template. Each value is encoded as ONE path segment (`/` becomes `%2F`). */
export function fillRoute(route: string, params: Readonly<Record<string, string>>): string {
  return route.replace(/\{(\w+)\}/g, (_, key: string) => {
    const v = params[key];
    if (v === undefined) throw new Error(`route ${route}: missing parameter ${key}`);
    return encodeURIComponent(v);
  });
}

/** Connection pools kept per client (one per origin: the management URL, Search, Backup, per node). */
export const MAX_POOLS = 32;

/** A rotated password file is read again on a 401 at most this often per cluster (a poll's worth of requests share one read). */
export const PASSWORD_REREAD_MS = 5000;

interface Shared {
  readonly settings: ClientSettings;
  readonly pools: Map<string, Pool>;
  readonly sem: FairSemaphore;
  /** The Authorization header: replaced when the password is rotated. */
  auth: string | undefined;
  password: string | undefined;
  /** When the password file was last read again after a 401 (ms since epoch). */
  rereadAt: number;
  readonly connect: Record<string, unknown>;
  readonly maxBytes: number;
  readonly budget: ByteBudget;
  /** The process's secrets plus this client's own credentials. */
  redactor: Redactor;
  /** Origin and path prefix of each base URL asked for (the management URL, Search and Backup URLs). */
  readonly urls: Map<string, { readonly origin: string; readonly basePath: string }>;
}

/**
 * A base URL's origin and path prefix, parsed once per base rather than twice per request. Bounded like the
 * pools: the Search and Backup bases come from Couchbase's answers.
 */
function urlParts(shared: Shared, base: string): { readonly origin: string; readonly basePath: string } {
  let parts = shared.urls.get(base);
  if (parts === undefined) {
    const u = new URL(base);
    parts = { origin: u.origin, basePath: u.pathname.replace(/\/+$/, '') };
    if (shared.urls.size >= 4 * MAX_POOLS) shared.urls.clear();
    shared.urls.set(base, parts);
  }
  return parts;
}

function basicAuth(username: string | undefined, password: string | undefined): string | undefined {
  return username !== undefined ? `Basic ${Buffer.from(`${username}:${password ?? ''}`).toString('base64')}` : undefined;
}

/** Switch a client to a new password: header, redaction (here and process-wide: it may reach any log). */
function usePassword(shared: Shared, password: string | undefined): void {
  if (password === shared.password) return;
  shared.password = password;
  shared.auth = basicAuth(shared.settings.username, password);
  registerSecret(password);
  if (shared.settings.username !== undefined && password !== undefined) registerSecret(`${shared.settings.username}:${password}`);
  shared.redactor = shared.redactor.with((r) => r.addCredentials(shared.settings.username, password));
}

/**
 * After a 401: read the password file again (if the password came from one, and not within the last
 * PASSWORD_REREAD_MS). True when the request should be sent again: the password now differs from the one
 * the rejected request carried (rotated by this read or by a concurrent one).
 */
function rereadPassword(shared: Shared, sentAuth: string | undefined): boolean {
  const file = shared.settings.passwordFile;
  if (file === undefined) return false;
  if (shared.auth !== sentAuth) return true;
  // A rate limit is a duration: on the monotonic clock (a wall-clock step back must not block rereads for its size).
  const now = monotonicMs();
  if (now - shared.rereadAt < PASSWORD_REREAD_MS) return false;
  shared.rereadAt = now;
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return false;
  }
  const password = text.replace(/(?:\r?\n)+$/, '');
  if (password === '' || password === shared.password) return false;
  usePassword(shared, password);
  return true;
}

class Client implements CouchbaseClient {
  readonly baseUrl: string;
  constructor(
    private readonly shared: Shared,
    private readonly scope: ClientScope,
  ) {
    this.baseUrl = shared.settings.url.replace(/\/+$/, '');
  }

  /** Closes the pools of the whole client (the root and all its scoped views). */
  async close(): Promise<void> {
    await Promise.all([...this.shared.pools.values()].map((p) => p.close().catch(() => undefined)));
    this.shared.pools.clear();
  }

  setPassword(password: string | undefined): void {
    usePassword(this.shared, password);
  }

  load(): { inFlight: number; waiting: number; pools: number } {
    return { inFlight: this.shared.sem.inFlight, waiting: this.shared.sem.waiting, pools: this.shared.pools.size };
  }

  scoped(scope: ClientScope): CouchbaseClient {
    const parent = this.scope;
    const signal = scope.signal && parent.signal ? AbortSignal.any([scope.signal, parent.signal]) : (scope.signal ?? parent.signal);
    const onRequest =
      scope.onRequest && parent.onRequest
        ? (r: RequestRecord) => {
            parent.onRequest?.(r);
            scope.onRequest?.(r);
          }
        : (scope.onRequest ?? parent.onRequest);
    const onStart =
      scope.onStart && parent.onStart
        ? (e: string) => {
            parent.onStart?.(e);
            scope.onStart?.(e);
          }
        : (scope.onStart ?? parent.onStart);
    const s: ClientScope = {};
    if (signal) s.signal = signal;
    if (onRequest) s.onRequest = onRequest;
    if (onStart) s.onStart = onStart;
    const lane = scope.lane ?? parent.lane;
    if (lane !== undefined) s.lane = lane;
    return new Client(this.shared, s);
  }

  async getJson<T>(
    route: string,
    params: Readonly<Record<string, string>>,
    schema: z.ZodType<T>,
    options: RequestOptions = {},
  ): Promise<T> {
    const res = await this.requestJson(route, params, schema, { ...options, allowStatus: [] });
    return res.data as T;
  }

  async requestJson<T>(
    route: string,
    params: Readonly<Record<string, string>>,
    schema: z.ZodType<T>,
    options: RequestOptions = {},
  ): Promise<JsonResponse<T>> {
    return this.request(route, params, options, async (desc, raw, signal) => {
      if (raw.status < 200 || raw.status >= 300) return { status: raw.status, data: undefined, text: raw.text };
      const turn = nextTurn();
      try {
        await turn.ready;
        // The poll gave up while this answer waited for its turn: parsing it would only cost time and memory.
        if (signal?.aborted) throw abortError(desc, signal, undefined);
        let body: unknown;
        // Refused unparsed: no Couchbase answer nests so deep, and what nesting costs the parser is not bounded by
        // the value cap (a parseBody reader checks its own answers' depth).
        if (options.parseBody === undefined && raw.text.length >= DEPTH_SCAN_FROM_CHARS && nestsDeeperThan(raw.text)) {
          throw new SchemaError(desc, `body nests deeper than ${MAX_ANSWER_DEPTH} levels: refused unparsed`, raw.status);
        }
        try {
          body = options.parseBody === undefined ? JSON.parse(raw.text) : await options.parseBody(raw.text, signal);
        } catch (err) {
          // A reader that gave the event loop turns stopped because the poll gave up meanwhile.
          if (signal?.aborted) throw abortError(desc, signal, undefined);
          if (!(err instanceof SyntaxError)) throw err;
          // Not kept as the cause: V8's SyntaxError quotes the body, which may hold a secret.
          const at = /position \d+/.exec((err as Error).message)?.[0];
          throw new SchemaError(desc, `body is not valid JSON${at === undefined ? '' : ` (${at})`}`, raw.status);
        }
        const parsed = schema.safeParse(body);
        // Summarised (a few issues, redacted paths, bounded), never kept: the zod error holds every issue.
        if (!parsed.success) throw new SchemaError(desc, 'does not match', raw.status, { issues: parsed.error.issues, redactor: this.shared.redactor });
        return { status: raw.status, data: parsed.data, text: raw.text };
      } finally {
        turn.done();
      }
    });
  }

  /**
   * Sends one request and hands its answer to `parse` while still holding the request's concurrency slot
   * and its share of the answer budget: answers cannot pile up unparsed behind a released slot.
   */
  private async request<R>(
    route: string,
    params: Readonly<Record<string, string>>,
    options: RequestOptions,
    parse: (desc: RequestDescription, raw: RawResponse, signal: AbortSignal | undefined) => Promise<R>,
  ): Promise<R> {
    const base = (options.baseUrl ?? this.baseUrl).replace(/\/+$/, '');
    const path = fillRoute(route, params);
    const qs = new URLSearchParams();
    for (const [k, v] of Object.entries(options.query ?? {})) if (v !== undefined) qs.set(k, String(v));
    const search = qs.size > 0 ? `?${qs.toString()}` : '';
    const method = options.method ?? 'GET';
    const { origin, basePath } = urlParts(this.shared, base);
    const fullPath = `${basePath}${path}${search}`;
    // An origin carries no userinfo (the URL standard's origin has none) and neither does a path.
    const desc: RequestDescription = { method, url: `${origin}${fullPath}`, endpoint: route };
    const signal = options.signal && this.scope.signal ? AbortSignal.any([options.signal, this.scope.signal]) : (options.signal ?? this.scope.signal);

    const started = performance.now();
    let status: number | undefined;
    let error: RequestError | undefined;
    let release: (() => void) | undefined;
    const held = { bytes: 0 };
    try {
      let raw: RawResponse;
      try {
        try {
          release = await this.shared.sem.acquire(this.scope.lane ?? '', signal);
        } catch (err) {
          throw abortError(desc, signal, err);
        }
        this.scope.onStart?.(route);
        const sentAuth = this.shared.auth;
        raw = await this.send(origin, fullPath, method, options, desc, signal, held);
        // A rotated password file: read it again and retry once, within the same slot.
        if (raw.status === 401 && rereadPassword(this.shared, sentAuth)) {
          this.shared.budget.release(held.bytes);
          held.bytes = 0;
          raw = await this.send(origin, fullPath, method, options, desc, signal, held);
        }
        status = raw.status;
        const allowed = options.allowStatus ?? [];
        if ((raw.status < 200 || raw.status >= 300) && !allowed.includes(raw.status)) throw statusError(desc, raw, this.shared.redactor);
      } catch (err) {
        error = err instanceof RequestError ? err : new NetworkError(desc, 'unexpected failure', { cause: err });
        throw error;
      } finally {
        // The request is recorded when its answer is in (the latency is the network's, not the parse's).
        const rec: RequestRecord = {
          endpoint: route,
          method,
          status,
          code: status !== undefined ? String(status) : codeOf(error),
          durationSeconds: (performance.now() - started) / 1000,
          error,
        };
        this.shared.settings.observe?.(this.shared.settings.cluster, rec);
        this.scope.onRequest?.(rec);
      }
      return await parse(desc, raw, signal);
    } finally {
      release?.();
      this.shared.budget.release(held.bytes);
    }
  }

  private pool(origin: string): Pool {
    let p = this.shared.pools.get(origin);
    if (p) {
      // Most recently used last, so the eviction below closes the one idle longest.
      this.shared.pools.delete(origin);
      this.shared.pools.set(origin, p);
    } else {
      const s = this.shared.settings;
      p = new Pool(origin, {
        connections: Math.max(1, s.concurrency ?? 8),
        connectTimeout: s.connectTimeout ?? 5000,
        headersTimeout: s.requestTimeout ?? 10_000,
        bodyTimeout: s.requestTimeout ?? 10_000,
        keepAliveTimeout: 30_000,
        connect: this.shared.connect,
      });
      this.shared.pools.set(origin, p);
      // Origins other than the configured URL come from Couchbase (the Search and Backup URLs found in
      // nodeServices): a cluster naming new hosts on every answer must not leave a pool open for each.
      if (this.shared.pools.size > MAX_POOLS) {
        const [oldest, pool] = this.shared.pools.entries().next().value as [string, Pool];
        this.shared.pools.delete(oldest);
        // Graceful: requests already on it finish; the next one to that origin opens a new pool.
        void pool.close().catch(() => undefined);
      }
    }
    return p;
  }

  /**
   * One request through undici's dispatch API: the handler below gathers the answer's chunks itself. undici's
   * `request()` wraps every answer in a Readable stream read through an async iterator, an AsyncResource and a
   * parsed header object, which at 1,400 requests a minute (the realistic bench scenario) were a fifth of the
   * collection thread's CPU beside the parse. Caps, budget and timeouts are as before: the pool's headers and
   * body timeouts apply to dispatch, a cap or an abort aborts the request (its connection is closed).
   */
  private send(
    origin: string,
    path: string,
    method: 'GET' | 'POST',
    options: RequestOptions,
    desc: RequestDescription,
    signal: AbortSignal | undefined,
    held: { bytes: number },
  ): Promise<RawResponse> {
    const headers: Record<string, string> = {
      accept: 'application/json',
      'user-agent': this.shared.settings.userAgent ?? 'cbwatch',
    };
    if (this.shared.auth) headers.authorization = this.shared.auth;
    let body: string | undefined;
    if (options.json !== undefined) {
      body = JSON.stringify(options.json);
      headers['content-type'] = 'application/json';
    }
    if (signal?.aborted) return Promise.reject(abortError(desc, signal, undefined));
    const limit = this.shared.maxBytes;
    const budget = this.shared.budget;
    const valueLimit = this.shared.settings.maxAnswerValues ?? answerValueLimit();
    const pool = this.pool(origin);
    return new Promise<RawResponse>((resolve, reject) => {
      let settled = false;
      let controller: Dispatcher.DispatchController | undefined;
      let status = 0;
      let contentType = '';
      const chunks: Buffer[] = [];
      let total = 0;
      let values = 0;
      // Chunks whose value marks are in `values`. Every value takes at least one byte, so an answer cannot pass
      // the value cap before its bytes do: counting starts only then (real answers, far below the cap in bytes,
      // are never scanned: the scan was a measurable share of the collection thread's CPU).
      let counted = 0;
      const settle = (err: RequestError | undefined, raw?: RawResponse): void => {
        if (settled) return;
        settled = true;
        signal?.removeEventListener('abort', onAbort);
        if (err !== undefined) reject(err);
        else resolve(raw as RawResponse);
      };
      /** Stop reading: the request is aborted (undici closes its connection) and fails with `err`. */
      const fail = (err: RequestError): void => {
        settle(err);
        controller?.abort(err);
      };
      const onAbort = (): void => fail(abortError(desc, signal, undefined));
      signal?.addEventListener('abort', onAbort, { once: true });
      const handler: Dispatcher.DispatchHandler = {
        onRequestStart(c) {
          controller = c;
          // Settled before the request started (its signal fired while it waited for a connection).
          if (settled) c.abort(new Error('request no longer wanted'));
        },
        onResponseStart(_c, statusCode, resHeaders) {
          status = statusCode;
          const declared = Number(resHeaders['content-length'] ?? NaN);
          if (Number.isFinite(declared) && declared > limit) return fail(new TooLargeError(desc, limit));
          const ct = resHeaders['content-type'];
          contentType = Array.isArray(ct) ? (ct[0] ?? '') : (ct ?? '');
        },
        onResponseData(_c, chunk) {
          if (settled) return;
          total += chunk.length;
          if (total > limit) return fail(new TooLargeError(desc, limit));
          // Checked per chunk, before the chunk is kept: the read stops within one network chunk of the cap.
          if (total > valueLimit) {
            for (; counted < chunks.length; counted++) values += countValueMarks(chunks[counted] as Buffer);
            values += countValueMarks(chunk);
            counted++;
            if (values > valueLimit) return fail(new TooLargeError(desc, valueLimit, 'values'));
          }
          // The string the bytes become is about as large again: reserve for both.
          if (!budget.tryReserve(2 * chunk.length)) return fail(new BudgetError(desc, budget.limit));
          held.bytes += 2 * chunk.length;
          chunks.push(chunk);
        },
        onResponseEnd() {
          if (settled) return;
          const text = (chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, total)).toString('utf8');
          settle(undefined, { status, text, contentType });
          reportAnswerBytes(total);
        },
        onResponseError(_c, err) {
          settle(transportError(desc, err, signal));
        },
      };
      try {
        const opts: Dispatcher.DispatchOptions = { path, method, headers };
        if (body !== undefined) opts.body = body;
        pool.dispatch(opts, handler);
      } catch (err) {
        settle(transportError(desc, err, signal));
      }
    });
  }
}

/**
 * Answers are parsed one per event-loop turn, across every client. Responses that arrive together (a pool
 * finishing eight requests at once) would otherwise be parsed, validated and mapped by their collector back
 * to back in one turn, and a scrape arriving meanwhile would wait for all of them; one per turn, it waits
 * for one at most. An immediate queued from an immediate runs on the next turn, after the I/O phase.
 * An answer's turn comes once the answer before it is parsed (`done`), so that a reader that gives the event
 * loop turns of its own (parseBody) is not interleaved with another answer's: one answer is read at a time.
 */
let turns: Promise<void> = Promise.resolve();
function nextTurn(): { readonly ready: Promise<void>; readonly done: () => void } {
  const before = turns;
  let done = (): void => undefined;
  turns = new Promise<void>((resolve) => {
    done = resolve;
  });
  return { ready: before.then(() => new Promise<void>((resolve) => setImmediate(resolve))), done };
}


export function createClient(settings: ClientSettings): CouchbaseClient {
  const tls = settings.tls ?? {};
  const connect: Record<string, unknown> = { rejectUnauthorized: !(tls.insecureSkipVerify ?? false) };
  if (tls.caFile) connect.ca = readFileSync(tls.caFile);
  if (tls.certFile) connect.cert = readFileSync(tls.certFile);
  if (tls.keyFile) connect.key = readFileSync(tls.keyFile);
  const shared: Shared = {
    settings,
    pools: new Map(),
    sem: new FairSemaphore(settings.concurrency ?? 8),
    auth: basicAuth(settings.username, settings.password),
    password: settings.password,
    rereadAt: 0,
    connect,
    maxBytes: settings.maxResponseBytes ?? 64 * 1024 * 1024,
    budget: settings.budget ?? answerBudget(),
    redactor: processRedactor.with((r) => r.addCredentials(settings.username, settings.password)),
    urls: new Map(),
  };
  return new Client(shared, {});
}
