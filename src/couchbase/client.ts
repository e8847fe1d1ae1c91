/**
 * The Couchbase REST client: one undici pool per origin with keep-alive, a per-cluster bound on requests
 * in flight, explicit connect/headers/body timeouts, a response-size cap, basic auth and TLS.
 * Every request is counted by route template (never a raw path) and timed.
 * Credentials never appear in an error message or a log line: URLs in errors carry no userinfo and the
 * Authorization header is built here and nowhere else.
 */
import { readFileSync } from 'node:fs';
import { Pool, errors as undiciErrors } from 'undici';
import type { Dispatcher } from 'undici';
import type { z } from 'zod';
import {
  AbortedError,
  AuthError,
  ForbiddenError,
  HttpStatusError,
  NetworkError,
  RequestError,
  SchemaError,
  TimeoutError,
  TooLargeError,
} from '../errors.js';
import type { RequestDescription } from '../errors.js';

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
  /** The `code` label: the status, or `timeout`, `network`, `aborted`, `too_large`. */
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
  scoped(scope: { signal?: AbortSignal; onRequest?: (rec: RequestRecord) => void }): CouchbaseClient;
  /** The management base URL. */
  readonly baseUrl: string;
  close(): Promise<void>;
}

export interface ClientSettings {
  readonly cluster: string;
  readonly url: string;
  readonly username?: string | undefined;
  readonly password?: string | undefined;
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
  /** Called once per finished request (self-metrics). */
  readonly observe?: (cluster: string, rec: RequestRecord) => void;
  readonly userAgent?: string;
}

/** Fill a route template. Each value is encoded as ONE path segment (`/` becomes `%2F`). */
export function fillRoute(route: string, params: Readonly<Record<string, string>>): string {
  return route.replace(/\{(\w+)\}/g, (_, key: string) => {
    const v = params[key];
    if (v === undefined) throw new Error(`route ${route}: missing parameter ${key}`);
    return encodeURIComponent(v);
  });
}

export function stripCredentials(url: string): string {
  try {
    const u = new URL(url);
    u.username = '';
    u.password = '';
    return u.toString().replace(/\/$/, '');
  } catch {
    return url.replace(/\/\/[^@/]*@/, '//');
  }
}

/** A counting semaphore: at most `limit` holders; waiters are served first come, first served. */
export class Semaphore {
  private active = 0;
  private readonly queue: Array<() => void> = [];
  constructor(private readonly limit: number) {}
  async acquire(signal?: AbortSignal): Promise<() => void> {
    if (this.active < this.limit) {
      this.active++;
      return () => this.release();
    }
    await new Promise<void>((resolve, reject) => {
      const grant = (): void => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      };
      const onAbort = (): void => {
        const i = this.queue.indexOf(grant);
        if (i >= 0) this.queue.splice(i, 1);
        reject(signal?.reason ?? new Error('aborted'));
      };
      if (signal?.aborted) return onAbort();
      signal?.addEventListener('abort', onAbort, { once: true });
      this.queue.push(grant);
    });
    this.active++;
    return () => this.release();
  }
  private release(): void {
    this.active--;
    const next = this.queue.shift();
    if (next) next();
  }
  get inFlight(): number {
    return this.active;
  }
  get waiting(): number {
    return this.queue.length;
  }
}

interface Shared {
  readonly settings: ClientSettings;
  readonly pools: Map<string, Pool>;
  readonly sem: Semaphore;
  readonly auth: string | undefined;
  readonly connect: Record<string, unknown>;
  readonly maxBytes: number;
}

class Client implements CouchbaseClient {
  readonly baseUrl: string;
  constructor(
    private readonly shared: Shared,
    private readonly scope: { signal?: AbortSignal; onRequest?: (rec: RequestRecord) => void },
  ) {
    this.baseUrl = shared.settings.url.replace(/\/+$/, '');
  }

  /** Closes the pools of the whole client (the root and all its scoped views). */
  async close(): Promise<void> {
    await Promise.all([...this.shared.pools.values()].map((p) => p.close().catch(() => undefined)));
    this.shared.pools.clear();
  }

  scoped(scope: { signal?: AbortSignal; onRequest?: (rec: RequestRecord) => void }): CouchbaseClient {
    const parent = this.scope;
    const signal = scope.signal && parent.signal ? AbortSignal.any([scope.signal, parent.signal]) : (scope.signal ?? parent.signal);
    const onRequest =
      scope.onRequest && parent.onRequest
        ? (r: RequestRecord) => {
            parent.onRequest?.(r);
            scope.onRequest?.(r);
          }
        : (scope.onRequest ?? parent.onRequest);
    const s: { signal?: AbortSignal; onRequest?: (rec: RequestRecord) => void } = {};
    if (signal) s.signal = signal;
    if (onRequest) s.onRequest = onRequest;
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
    const { desc, raw } = await this.request(route, params, options);
    if (raw.status < 200 || raw.status >= 300) return { status: raw.status, data: undefined, text: raw.text };
    await nextTurn();
    let body: unknown;
    try {
      body = JSON.parse(raw.text);
    } catch (err) {
      throw new SchemaError(desc, 'body is not valid JSON', raw.status, { cause: err });
    }
    const parsed = schema.safeParse(body);
    if (!parsed.success) {
      const first = parsed.error.issues[0];
      const where = first ? `${first.path.join('.') || '(root)'}: ${first.message}` : 'does not match';
      throw new SchemaError(desc, where, raw.status, { cause: parsed.error });
    }
    return { status: raw.status, data: parsed.data, text: raw.text };
  }

  private async request(
    route: string,
    params: Readonly<Record<string, string>>,
    options: RequestOptions,
  ): Promise<{ desc: RequestDescription; raw: RawResponse }> {
    const base = (options.baseUrl ?? this.baseUrl).replace(/\/+$/, '');
    const path = fillRoute(route, params);
    const qs = new URLSearchParams();
    for (const [k, v] of Object.entries(options.query ?? {})) if (v !== undefined) qs.set(k, String(v));
    const search = qs.size > 0 ? `?${qs.toString()}` : '';
    const method = options.method ?? 'GET';
    const origin = new URL(base).origin;
    const basePath = new URL(base).pathname.replace(/\/+$/, '');
    const fullPath = `${basePath}${path}${search}`;
    const desc: RequestDescription = { method, url: stripCredentials(`${origin}${fullPath}`), endpoint: route };
    const signal = options.signal && this.scope.signal ? AbortSignal.any([options.signal, this.scope.signal]) : (options.signal ?? this.scope.signal);

    const started = performance.now();
    let status: number | undefined;
    let error: RequestError | undefined;
    let release: (() => void) | undefined;
    try {
      try {
        release = await this.shared.sem.acquire(signal);
      } catch (err) {
        throw new AbortedError(desc, { cause: err });
      }
      const raw = await this.send(origin, fullPath, method, options, desc, signal);
      status = raw.status;
      const allowed = options.allowStatus ?? [];
      if (raw.status >= 200 && raw.status < 300) return { desc, raw };
      if (allowed.includes(raw.status)) return { desc, raw };
      throw statusError(desc, raw);
    } catch (err) {
      error = err instanceof RequestError ? err : new NetworkError(desc, 'unexpected failure', { cause: err });
      throw error;
    } finally {
      release?.();
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
  }

  private pool(origin: string): Pool {
    let p = this.shared.pools.get(origin);
    if (!p) {
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
    }
    return p;
  }

  private async send(
    origin: string,
    path: string,
    method: 'GET' | 'POST',
    options: RequestOptions,
    desc: RequestDescription,
    signal: AbortSignal | undefined,
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
    let res: Dispatcher.ResponseData;
    try {
      const reqOpts: Dispatcher.RequestOptions = { path, method, headers };
      if (body !== undefined) reqOpts.body = body;
      if (signal) reqOpts.signal = signal;
      res = await this.pool(origin).request(reqOpts);
    } catch (err) {
      throw transportError(desc, err, signal);
    }
    const limit = this.shared.maxBytes;
    const declared = Number(res.headers['content-length'] ?? NaN);
    if (Number.isFinite(declared) && declared > limit) {
      res.body.destroy();
      throw new TooLargeError(desc, limit);
    }
    const chunks: Buffer[] = [];
    let total = 0;
    try {
      for await (const chunk of res.body) {
        const buf = chunk as Buffer;
        total += buf.length;
        if (total > limit) {
          res.body.destroy();
          throw new TooLargeError(desc, limit);
        }
        chunks.push(buf);
      }
    } catch (err) {
      if (err instanceof TooLargeError) throw err;
      throw transportError(desc, err, signal);
    }
    const ct = res.headers['content-type'];
    return {
      status: res.statusCode,
      text: Buffer.concat(chunks, total).toString('utf8'),
      contentType: Array.isArray(ct) ? (ct[0] ?? '') : (ct ?? ''),
    };
  }
}

/**
 * Answers are parsed one per event-loop turn, across every client. Responses that arrive together (a pool
 * finishing eight requests at once) would otherwise be parsed, validated and mapped by their collector back
 * to back in one turn, and a scrape arriving meanwhile would wait for all of them; one per turn, it waits
 * for one at most. An immediate queued from an immediate runs on the next turn, after the I/O phase.
 */
let turns: Promise<void> = Promise.resolve();
function nextTurn(): Promise<void> {
  const turn = turns.then(() => new Promise<void>((resolve) => setImmediate(resolve)));
  turns = turn;
  return turn;
}

function statusError(desc: RequestDescription, raw: RawResponse): RequestError {
  if (raw.status === 401) return new AuthError(desc);
  if (raw.status === 403) return new ForbiddenError(desc, permissionsOf(raw.text));
  return new HttpStatusError(desc, raw.status, briefBody(raw.text));
}

/** The `permissions` array of a Couchbase 403 body, or [] when there is none. */
export function permissionsOf(text: string): string[] {
  try {
    const body: unknown = JSON.parse(text);
    if (body && typeof body === 'object' && 'permissions' in body) {
      const p = (body as { permissions: unknown }).permissions;
      if (Array.isArray(p)) return p.filter((x): x is string => typeof x === 'string');
    }
  } catch {
    /* not JSON: no permissions to report */
  }
  return [];
}

/** A short, single-line excerpt of an error body (Couchbase puts the reason there). */
function briefBody(text: string): string {
  const t = text.replace(/\s+/g, ' ').trim();
  if (t === '') return 'unexpected status';
  return t.length > 160 ? `${t.slice(0, 157)}...` : t;
}

function transportError(desc: RequestDescription, err: unknown, signal: AbortSignal | undefined): RequestError {
  if (err instanceof RequestError) return err;
  const code = (err as { code?: string } | null)?.code;
  if (signal?.aborted) {
    const reason: unknown = signal.reason;
    if (reason instanceof Error && reason.name === 'TimeoutError') return new TimeoutError(desc, 'poll deadline', { cause: err });
    return new AbortedError(desc, { cause: err });
  }
  if (err instanceof undiciErrors.ConnectTimeoutError || code === 'UND_ERR_CONNECT_TIMEOUT') return new TimeoutError(desc, 'connect', { cause: err });
  if (err instanceof undiciErrors.HeadersTimeoutError || code === 'UND_ERR_HEADERS_TIMEOUT') return new TimeoutError(desc, 'headers', { cause: err });
  if (err instanceof undiciErrors.BodyTimeoutError || code === 'UND_ERR_BODY_TIMEOUT') return new TimeoutError(desc, 'body', { cause: err });
  const msg = (err as { message?: string } | null)?.message ?? String(err);
  return new NetworkError(desc, code ? `${code}` : msg.slice(0, 120), { cause: err });
}

function codeOf(err: RequestError | undefined): string {
  switch (err?.code) {
    case 'CBW_ERR_TIMEOUT':
      return 'timeout';
    case 'CBW_ERR_ABORTED':
      return 'aborted';
    case 'CBW_ERR_TOO_LARGE':
      return 'too_large';
    default:
      return 'network';
  }
}

export function createClient(settings: ClientSettings): CouchbaseClient {
  const tls = settings.tls ?? {};
  const connect: Record<string, unknown> = { rejectUnauthorized: !(tls.insecureSkipVerify ?? false) };
  if (tls.caFile) connect.ca = readFileSync(tls.caFile);
  if (tls.certFile) connect.cert = readFileSync(tls.certFile);
  if (tls.keyFile) connect.key = readFileSync(tls.keyFile);
  const auth =
    settings.username !== undefined
      ? `Basic ${Buffer.from(`${settings.username}:${settings.password ?? ''}`).toString('base64')}`
      : undefined;
  const shared: Shared = {
    settings,
    pools: new Map(),
    sem: new Semaphore(settings.concurrency ?? 8),
    auth,
    connect,
    maxBytes: settings.maxResponseBytes ?? 64 * 1024 * 1024,
  };
  return new Client(shared, {});
}
