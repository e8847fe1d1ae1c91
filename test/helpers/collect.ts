/**
 * Test helpers for collectors: a fake client that answers route templates from fixtures (parsing them with
 * the collector's real zod schemas), and `collect()` which runs one poll and renders its exposition text.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import type { z } from 'zod';
import { runPoll } from '../../src/collectors/context.js';
import type { PollOutcome } from '../../src/collectors/context.js';
import type { Collector } from '../../src/collectors/types.js';
import { defaultClusterConfig, resolveCollectorOptions } from '../../src/config/defaults.js';
import type { CollectorName, CollectorOptions } from '../../src/config/schema.js';
import { collectorSchemas } from '../../src/config/schema.js';
import type { ClusterConfig } from '../../src/config/types.js';
import type { CouchbaseClient, JsonResponse, RequestOptions, RequestRecord } from '../../src/couchbase/client.js';
import { createClient, fillRoute } from '../../src/couchbase/client.js';
import { AuthError, ForbiddenError, HttpStatusError, NetworkError, SchemaError } from '../../src/errors.js';
import { renderSets } from '../../src/metrics/render.js';
import { createSimulator } from '../../src/simulator/index.js';
import type { SimOptions, Simulator } from '../../src/simulator/index.js';

export const FIXTURES = join(import.meta.dirname, '..', 'fixtures', 'couchbase');

export function loadFixture<T = unknown>(rel: string): T {
  return JSON.parse(readFileSync(join(FIXTURES, rel), 'utf8')) as T;
}
export function fixtureText(rel: string): string {
  return readFileSync(join(FIXTURES, rel), 'utf8');
}

/** A canned answer: a JSON-able payload, or an explicit status/body, or a thrown error kind. */
export type FakeAnswer =
  | { status: number; body?: unknown; text?: string }
  | { fail: 'network' | 'invalid_json' };

export type FakeRoute =
  | unknown
  | ((params: Record<string, string>, options: RequestOptions) => unknown | FakeAnswer | Promise<unknown | FakeAnswer>);

export interface FakeCall {
  route: string;
  params: Record<string, string>;
  path: string;
  options: RequestOptions;
}

function isAnswer(v: unknown): v is FakeAnswer {
  return typeof v === 'object' && v !== null && ('fail' in v || ('status' in v && typeof (v as { status: unknown }).status === 'number' && Object.keys(v).every((k) => ['status', 'body', 'text'].includes(k))));
}

/** Routes are keyed by template, e.g. `/pools/default/buckets/{bucket}/stats`. Unknown routes answer 404. */
export function fakeClient(routes: Record<string, FakeRoute>, baseUrl = 'http://cb.test:8091'): CouchbaseClient & { calls: FakeCall[] } {
  const calls: FakeCall[] = [];
  const make = (onRequest?: (r: RequestRecord) => void): CouchbaseClient & { calls: FakeCall[] } => {
    const requestJson = async <T>(route: string, params: Readonly<Record<string, string>>, schema: z.ZodType<T>, options: RequestOptions = {}): Promise<JsonResponse<T>> => {
      const path = fillRoute(route, params);
      calls.push({ route, params: { ...params }, path, options });
      const desc = { method: options.method ?? 'GET', url: `${options.baseUrl ?? baseUrl}${path}`, endpoint: route };
      const handler = routes[route];
      let ans: unknown = handler === undefined ? { status: 404, text: 'Not found.' } : typeof handler === 'function' ? await (handler as (p: Record<string, string>, o: RequestOptions) => unknown)({ ...params }, options) : handler;
      if (!isAnswer(ans)) ans = { status: 200, body: ans };
      const a = ans as FakeAnswer;
      const rec = (status: number | undefined, code: string): void => onRequest?.({ endpoint: route, method: desc.method, status, code, durationSeconds: 0.001, error: undefined });
      if ('fail' in a) {
        rec(undefined, 'network');
        if (a.fail === 'network') throw new NetworkError(desc, 'ECONNRESET');
        throw new SchemaError(desc, 'body is not valid JSON', 200);
      }
      rec(a.status, String(a.status));
      const text = a.text ?? (a.body === undefined ? '' : JSON.stringify(a.body));
      if (a.status < 200 || a.status >= 300) {
        if ((options.allowStatus ?? []).includes(a.status)) return { status: a.status, data: undefined, text };
        if (a.status === 401) throw new AuthError(desc);
        if (a.status === 403) {
          const perms = (a.body as { permissions?: string[] } | undefined)?.permissions ?? [];
          throw new ForbiddenError(desc, perms);
        }
        throw new HttpStatusError(desc, a.status, text.slice(0, 100));
      }
      let body: unknown;
      try {
        // parseBody as the real client honours it: the body's text read by the caller's reader.
        body = options.parseBody !== undefined ? await options.parseBody(text, options.signal) : (a.body ?? JSON.parse(text));
      } catch (err) {
        if (err instanceof SyntaxError) throw new SchemaError(desc, 'body is not valid JSON', a.status);
        throw err;
      }
      const parsed = schema.safeParse(body);
      if (!parsed.success) throw new SchemaError(desc, parsed.error.issues[0]?.message ?? 'bad', a.status);
      return { status: a.status, data: parsed.data, text };
    };
    const c = {
      baseUrl,
      calls,
      requestJson,
      async getJson<T>(route: string, params: Readonly<Record<string, string>>, schema: z.ZodType<T>, options: RequestOptions = {}): Promise<T> {
        const r = await requestJson(route, params, schema, { ...options, allowStatus: [] });
        return r.data as T;
      },
      scoped(scope: { onRequest?: (r: RequestRecord) => void }) {
        return make(scope.onRequest);
      },
      load: () => ({ inFlight: 0, waiting: 0 }),
      async close() {},
    };
    return c as CouchbaseClient & { calls: FakeCall[] };
  };
  return make();
}

export interface CollectResult extends PollOutcome {
  /** Exposition text with `couchbase_cluster="test"` on every series. */
  text: string;
}

/** Run one poll of `collector` against `client`; options are the collector's defaults merged with `options`. */
export async function collect<N extends CollectorName>(
  collector: Collector<N>,
  client: CouchbaseClient,
  extra: {
    options?: Partial<CollectorOptions<N>>;
    cluster?: Partial<ClusterConfig>;
    state?: Map<string, unknown>;
    now?: () => number;
  } = {},
): Promise<CollectResult> {
  const raw = collectorSchemas[collector.name].parse(extra.options ?? {}) as CollectorOptions<N>;
  const options = resolveCollectorOptions(collector.name, raw);
  // Collector tests read the sample envelopes unless they ask for another source (test/stats/ covers auto and range).
  const cluster = defaultClusterConfig({ url: client.baseUrl, statsSource: 'envelope', ...(extra.cluster ?? {}) });
  const input = {
    collector,
    cluster,
    options,
    client,
    ...(extra.state ? { state: extra.state } : {}),
    ...(extra.now ? { now: extra.now } : {}),
  };
  const outcome = await runPoll(input);
  const text = await renderSets([{ base: { couchbase_cluster: 'test' }, set: outcome.set }]);
  return { ...outcome, text };
}

/**
 * A simulator on a real port and a client to it for one describe block: started before its tests, closed
 * after. Read `sim` and `client` inside the tests (they are set once the block starts).
 */
export function simulatorWithClient(opts: SimOptions): { readonly sim: Simulator; readonly client: CouchbaseClient } {
  const held = {} as { sim: Simulator; client: CouchbaseClient };
  beforeAll(async () => {
    held.sim = createSimulator(opts);
    held.client = createClient({ cluster: 't', url: await held.sim.listen(), username: 'Administrator', password: 'password' });
  });
  afterAll(async () => {
    await held.client?.close();
    await held.sim?.close();
  });
  return held;
}
