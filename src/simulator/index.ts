/**
 * A Couchbase REST simulator built on real captured payloads: used by the tests, the benchmarks and
 * `cbwatch demo`. Basic auth (401 without it), latency per request, per-route fault injection, a clock that
 * can run faster than real time, and a cluster model (nodes, buckets) that the area modules answer from.
 * Option `version` picks a version profile (./profiles.ts: 6.6.5, 7.2.4, 7.6.5 default, 8.0.0): what the
 * cluster reports as its version, and whether it answers the 7.0+ statistics (range API, each node's native
 * /metrics, /prometheus_sd_config: modules/stats-range.ts, from the envelopes' model through ./native.ts). The
 * non-data services' statistics (query, index, Search, eventing, analytics, processes, disks) come from one model,
 * ./services.ts, served by the legacy service sections (modules/service-stats.ts) and the native series alike.
 * docs/simulator.md describes the profiles, the routes and the legacy → native correspondence.
 */
import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import Fastify from 'fastify';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { MODULES } from './modules/index.js';
import { simSecurity } from './modules/security.js';
import { simProfile } from './profiles.js';
import { FAULT_KINDS } from './types.js';
import type { FaultController, FaultRule, SimBucket, SimContext, SimNode, SimOptions, SimUsers } from './types.js';

export type { SimOptions, SimContext, FaultRule, FaultKind } from './types.js';
export { FAULT_KINDS } from './types.js';

/** A route as registered by the area modules (the simulator's own `/_sim/` control routes excluded). */
export interface SimRoute {
  method: string;
  url: string;
}

export interface Simulator {
  readonly app: FastifyInstance;
  readonly ctx: SimContext;
  /** Every route the area modules registered, in registration order. */
  readonly routes: readonly SimRoute[];
  /** Listen on 127.0.0.1 (port 0 = ephemeral); resolves to the base URL. */
  listen(port?: number, host?: string): Promise<string>;
  close(): Promise<void>;
}

const DEFAULT_USERS: SimUsers = {
  admin: { username: 'Administrator', password: 'password' },
  limited: { username: 'viewer', password: 'viewer-password' },
};

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * `anonymous`: a request without credentials is answered (as Couchbase answers trustedCAs, a `no_check`
     * route in ns_server's menelaus_web.erl); wrong credentials still get a 401. Default: valid basic auth
     * required.
     */
    auth?: 'anonymous';
  }
}

/**
 * The 401 of each Couchbase service. The cluster manager (menelaus_util:require_auth in ns_server) answers with an
 * empty body and a Basic challenge; the Search and Backup services (the `/api/` routes here) answer through
 * cbauth's SendUnauthorized (couchbase/cbauth convenience.go): their own realm and a short text body.
 */
function unauthorized(ctx: SimContext, req: FastifyRequest, reply: FastifyReply): FastifyReply {
  if ((req.routeOptions.url ?? '').startsWith('/api/')) {
    return reply.code(401).header('www-authenticate', 'Basic realm="Couchbase"').type('text/plain; charset=utf-8').send('Authentication Failure.\n');
  }
  // disableWWWAuthenticate (POST /settings/security): the cluster manager's 401 comes without the challenge.
  if (simSecurity(ctx).global.disableWWWAuthenticate) return reply.code(401).send('');
  return reply.code(401).header('www-authenticate', 'Basic realm="Couchbase Server Admin / REST"').send('');
}

function hashRand(key: string): number {
  const h = createHash('sha1').update(key).digest();
  return h.readUInt32BE(0) / 2 ** 32;
}

export function defaultNodes(count: number, rand: (k: string) => number, version = simProfile().fullVersion): SimNode[] {
  const groups = ['Group 1', 'Group 2', 'Group 3'];
  const nodes: SimNode[] = [];
  for (let i = 0; i < count; i++) {
    const services = i === 0 ? ['kv', 'n1ql', 'index', 'fts', 'backup'] : i % 3 === 1 ? ['kv', 'fts'] : ['kv', 'index', 'n1ql'];
    nodes.push({
      hostname: `cb${i + 1}.cbsim.local:8091`,
      uuid: createHash('md5').update(`node-${i}-${rand(`node${i}`)}`).digest('hex'),
      status: 'healthy',
      membership: 'active',
      services,
      serverGroup: groups[i % groups.length] as string,
      version,
      thisNode: i === 0,
    });
  }
  return nodes;
}

export function defaultBuckets(count: number): SimBucket[] {
  const names = ['travel-sample', 'beer-sample', 'gamesim-sample', 'orders.eu', 'sessions_%cache'];
  const buckets: SimBucket[] = [];
  for (let i = 0; i < count; i++) {
    buckets.push({
      name: names[i] ?? `bucket-${String(i).padStart(3, '0')}`,
      uuid: createHash('md5').update(`bucket-${i}`).digest('hex'),
      bucketType: i === 3 ? 'ephemeral' : 'membase',
      ramQuotaBytes: (256 + 128 * (i % 4)) * 1024 * 1024,
      replicaNumber: 1,
      flushEnabled: i % 2 === 1,
      seed: i,
    });
  }
  return buckets;
}

export function createSimulator(options: SimOptions = {}): Simulator {
  const seed = options.seed ?? 42;
  const rand = (key: string): number => hashRand(`${seed}:${key}`);
  const users: SimUsers = { ...DEFAULT_USERS, ...(options.users ?? {}) };
  const opts: SimContext['options'] = {
    profile: simProfile(options.version),
    scenario: options.scenario ?? 'default',
    buckets: options.buckets ?? 3,
    nodes: options.nodes ?? 3,
    latencyMs: options.latencyMs ?? 0,
    replications: options.replications ?? 4,
    statSet: options.statSet ?? 'fixture',
    speed: options.speed ?? 1,
    users,
    knobs: options.knobs ?? {},
    seed,
  };
  const clock = options.clock;
  const startedAt = clock ? clock() : Date.now();
  let listenPort = 0;
  const rules: FaultRule[] = [];
  const faults: FaultController = {
    add: (r) => void rules.push({ ...r }),
    clear: () => void rules.splice(0, rules.length),
    get rules() {
      return rules;
    },
  };
  const areas = new Map<string, unknown>();
  const ctx: SimContext = {
    options: opts,
    now: clock ?? (() => startedAt + (Date.now() - startedAt) * opts.speed),
    startedAt,
    nodes: defaultNodes(opts.nodes, rand, opts.profile.fullVersion),
    buckets: defaultBuckets(opts.buckets),
    baseUrl: () => (listenPort ? `http://127.0.0.1:${listenPort}` : ''),
    port: () => listenPort,
    area<T>(key: string, init: () => T): T {
      if (!areas.has(key)) areas.set(key, init());
      return areas.get(key) as T;
    },
    userOf(req: FastifyRequest) {
      const h = req.headers.authorization;
      if (!h?.startsWith('Basic ')) return undefined;
      const [u, ...rest] = Buffer.from(h.slice(6), 'base64').toString('utf8').split(':');
      const p = rest.join(':');
      if (u === users.admin.username && p === users.admin.password) return 'admin';
      if (u === users.limited.username && p === users.limited.password) return 'limited';
      return undefined;
    },
    rand,
    faults,
  };

  const app = Fastify({ logger: false, forceCloseConnections: true, bodyLimit: 1024 * 1024 });
  const routes: SimRoute[] = [];
  app.addHook('onRoute', (r) => {
    if (r.url.startsWith('/_sim/')) return;
    for (const method of Array.isArray(r.method) ? r.method : [r.method]) if (method !== 'HEAD') routes.push({ method, url: r.url });
  });
  // Couchbase answers form posts; accept them as text so area modules can parse what they need.
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_req, body, done) => done(null, body));

  const faultFor = (req: FastifyRequest): FaultRule | undefined => {
    const route = req.routeOptions.url ?? '';
    const path = req.url.split('?')[0] ?? '';
    const i = rules.findIndex((r) => (typeof r.match === 'string' ? r.match === route : r.match.test(path)));
    if (i < 0) return undefined;
    const rule = rules[i] as FaultRule;
    rule.hits = (rule.hits ?? 0) + 1;
    if (rule.times !== undefined) {
      rule.times--;
      if (rule.times <= 0) rules.splice(i, 1);
    }
    return rule;
  };

  const hits = new Map<string, number>();
  // Request counting for benchmarks (GET /_sim/requests): totals by route template and arrival times.
  const counted = { total: 0, byRoute: new Map<string, number>(), times: [] as number[] };
  app.addHook('onRequest', async (req: FastifyRequest, reply: FastifyReply) => {
    const key = `${req.method} ${req.routeOptions.url ?? ''}`;
    hits.set(key, (hits.get(key) ?? 0) + 1);
    if (!req.url.startsWith('/_sim/')) {
      counted.total++;
      const route = req.routeOptions.url ?? 'unmatched';
      counted.byRoute.set(route, (counted.byRoute.get(route) ?? 0) + 1);
      if (counted.times.length >= 500_000) counted.times.splice(0, 250_000);
      counted.times.push(Date.now());
    }
    if (opts.latencyMs > 0) await new Promise((r) => setTimeout(r, opts.latencyMs));
    if (!req.url.startsWith('/_sim/') && req.routeOptions.url !== undefined && ctx.userOf(req) === undefined) {
      // Couchbase authenticates whatever credentials come with a request before it looks at the route's
      // permission (menelaus_auth:verify_rest_auth): wrong ones get a 401 even where anonymous access is allowed.
      const anonymous = req.routeOptions.config.auth === 'anonymous' && req.headers.authorization === undefined;
      if (!anonymous) return unauthorized(ctx, req, reply);
    }
    const fault = faultFor(req);
    if (!fault) return;
    switch (fault.kind) {
      case 'status':
        return reply.code(fault.status ?? 500).send({ errors: { _: 'simulated failure' } });
      case 'forbidden':
        return reply.code(403).send({
          message: 'Forbidden. User needs the following permissions',
          permissions: fault.permissions ?? ['cluster.admin.security!read'],
        });
      case 'reset':
        req.raw.socket.destroy();
        return reply;
      case 'hang':
        await new Promise<void>((resolve) => req.raw.socket.once('close', () => resolve()));
        return reply;
      default:
        (req as unknown as { simFault: FaultRule }).simFault = fault;
    }
  });

  app.addHook('onSend', async (req, reply, payload) => {
    const fault = (req as unknown as { simFault?: FaultRule }).simFault;
    if (!fault) return payload;
    const text = typeof payload === 'string' ? payload : Buffer.isBuffer(payload) ? payload.toString('utf8') : '';
    if (fault.kind === 'invalid_json') return '{"this is": not json';
    if (fault.kind === 'truncated') return text.slice(0, Math.floor(text.length / 2));
    if (fault.kind === 'oversize') {
      void reply.header('content-type', 'application/json');
      const fill = fault.fill ?? '0';
      return `[${`${fill},`.repeat(Math.floor((fault.bytes ?? 200 * 1024 * 1024) / (fill.length + 1)))}${fill}]`;
    }
    if (fault.kind === 'slow_body') {
      // Headers now, then the real body a few bytes at a time; stops when the client goes away.
      const rate = Math.max(1, fault.bytesPerSecond ?? 64);
      const bytes = Buffer.from(text);
      const step = Math.max(1, Math.ceil(rate / 10));
      const socket = req.raw.socket;
      void reply.removeHeader('content-length');
      return Readable.from(
        (async function* () {
          for (let at = 0; at < bytes.length && !socket.destroyed; at += step) {
            yield bytes.subarray(at, at + step);
            await new Promise((r) => setTimeout(r, 100));
          }
        })(),
      );
    }
    return payload;
  });

  // Test and demo control: inject and clear faults over HTTP (used by out-of-process runs).
  app.post('/_sim/faults', async (req) => {
    const body = req.body as FaultRule & { match: string; regex?: boolean };
    faults.add({ ...body, match: body.regex ? new RegExp(body.match) : body.match });
    return { ok: true, rules: rules.length };
  });
  app.delete('/_sim/faults', async () => {
    faults.clear();
    return { ok: true };
  });
  // Faults still set, with how often each has answered; the route table; per-area knobs changed at runtime.
  app.get('/_sim/faults', async () => ({ rules: rules.map((r) => ({ ...r, match: String(r.match) })) }));
  app.get('/_sim/routes', async () => ({ routes: routes.map((r) => ({ ...r, hits: hits.get(`${r.method} ${r.url}`) ?? 0 })), faultKinds: FAULT_KINDS }));
  app.post('/_sim/knobs', async (req) => {
    Object.assign(opts.knobs, req.body as Record<string, unknown>);
    return { ok: true, knobs: opts.knobs };
  });
  // `since` (epoch ms) limits the arrival times returned.
  app.get('/_sim/requests', async (req) => {
    const since = Number((req.query as { since?: string }).since ?? 0);
    return { total: counted.total, byRoute: Object.fromEntries(counted.byRoute), times: counted.times.filter((t) => t >= since) };
  });
  app.get('/_sim/state', async () => ({
    scenario: opts.scenario,
    version: opts.profile.version,
    now: ctx.now(),
    nodes: ctx.nodes,
    buckets: ctx.buckets.map((b) => b.name),
  }));

  for (const mod of MODULES) mod(app, ctx);

  return {
    app,
    ctx,
    routes,
    async listen(port = 0, host = '127.0.0.1') {
      await app.listen({ port, host });
      const addr = app.server.address();
      listenPort = typeof addr === 'object' && addr ? addr.port : port;
      return ctx.baseUrl();
    },
    async close() {
      await app.close();
    },
  };
}

