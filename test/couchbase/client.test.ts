import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { ByteBudget, setAnswerListener } from '../../src/couchbase/answer-budget.js';
import { createClient, fillRoute, MAX_POOLS } from '../../src/couchbase/client.js';
import { FairSemaphore, Semaphore } from '../../src/couchbase/semaphore.js';
import type { RequestRecord } from '../../src/couchbase/client.js';
import { CbwError, ForbiddenError } from '../../src/errors.js';
import { createSimulator } from '../../src/simulator/index.js';
import type { Simulator } from '../../src/simulator/index.js';

const loose = z.looseObject({});
const SECRET = 'pa55-w0rd-never-logged';

let sim: Simulator;
let url: string;

beforeAll(async () => {
  sim = createSimulator({ users: { admin: { username: 'Administrator', password: SECRET } } });
  url = await sim.listen();
});
afterAll(async () => {
  await sim.close();
});

function client(extra: Partial<Parameters<typeof createClient>[0]> = {}) {
  return createClient({ cluster: 'c1', url, username: 'Administrator', password: SECRET, requestTimeout: 2000, ...extra });
}

async function failure(p: Promise<unknown>): Promise<CbwError> {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(CbwError);
    const e = err as CbwError;
    expect(e.message).not.toContain(SECRET);
    expect(JSON.stringify(e)).not.toContain(SECRET);
    return e;
  }
  throw new Error('expected a failure');
}

describe('fillRoute', () => {
  it('encodes each parameter as one path segment', () => {
    expect(fillRoute('/pools/default/buckets/{bucket}/stats/{stat}', { bucket: 'a%b.c-d_e', stat: 'replications/u/a%b/x/changes_left' })).toBe(
      '/pools/default/buckets/a%25b.c-d_e/stats/replications%2Fu%2Fa%25b%2Fx%2Fchanges_left',
    );
  });
  it('refuses a missing parameter', () => {
    expect(() => fillRoute('/a/{b}', {})).toThrow(/missing parameter b/);
  });
});

describe('client against the simulator', () => {
  it('a configured URL with userinfo and a path prefix: requests reach the prefix, errors name the URL without userinfo', async () => {
    const port = new URL(url).port;
    const seen: string[] = [];
    const server = createServer((req, res) => {
      seen.push(req.url ?? '');
      res.writeHead(500, { 'content-type': 'text/plain' });
      res.end('no');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const p2 = (server.address() as AddressInfo).port;
    const c = createClient({ cluster: 'c1', url: `http://cbuser:${SECRET}@127.0.0.1:${p2}/prefix/`, requestTimeout: 2000 });
    try {
      const e = await failure(c.getJson('/pools/default/buckets/{bucket}/stats', { bucket: 'a/b' }, loose, { query: { zoom: 'minute' } }));
      expect(e.message).toContain(`GET http://127.0.0.1:${p2}/prefix/pools/default/buckets/a%2Fb/stats?zoom=minute`);
      expect(e.message).not.toContain('cbuser');
      expect(seen).toEqual(['/prefix/pools/default/buckets/a%2Fb/stats?zoom=minute']);
      // The simulator's own port is another origin: the same client asks it through its base URL.
      expect((await c.requestJson('/pools', {}, loose, { baseUrl: `http://127.0.0.1:${port}`, allowStatus: [401] })).status).toBe(401);
    } finally {
      await c.close();
      await new Promise((r) => server.close(r));
    }
  });

  it('GETs and parses with basic auth, recording the route template', async () => {
    const seen: RequestRecord[] = [];
    const c = client({ observe: (_cl, r) => seen.push(r) });
    const body = await c.getJson('/pools/default', {}, z.looseObject({ nodes: z.array(z.unknown()) }));
    expect(body.nodes.length).toBe(3);
    expect(seen).toMatchObject([{ endpoint: '/pools/default', code: '200', status: 200 }]);
    await c.close();
  });

  it('401 with a wrong password, without the password anywhere', async () => {
    const c = createClient({ cluster: 'c1', url, username: 'Administrator', password: `${SECRET}x` });
    const e = await failure(c.getJson('/pools/default', {}, loose));
    expect(e.code).toBe('CBW_ERR_AUTH');
    expect(e.message).toContain('401');
    expect(e.message).not.toContain(`${SECRET}x`);
    await c.close();
  });

  it('403 carries the permissions array', async () => {
    sim.ctx.faults.add({ match: '/pools/default', kind: 'forbidden', permissions: ['cluster.pools!read'], times: 1 });
    const c = client();
    const e = await failure(c.getJson('/pools/default', {}, loose));
    expect(e.code).toBe('CBW_ERR_FORBIDDEN');
    expect((e as ForbiddenError).permissions).toEqual(['cluster.pools!read']);
    expect(e.message).toContain('cluster.pools!read');
    await c.close();
  });

  it.each([
    ['status', { kind: 'status', status: 500 }, 'CBW_ERR_HTTP'],
    ['404', { kind: 'status', status: 404 }, 'CBW_ERR_NOT_FOUND'],
    ['reset', { kind: 'reset' }, 'CBW_ERR_NETWORK'],
    ['invalid_json', { kind: 'invalid_json' }, 'CBW_ERR_SCHEMA'],
    ['truncated', { kind: 'truncated' }, 'CBW_ERR_SCHEMA'],
  ] as const)('maps the %s fault to a stable code', async (_n, fault, code) => {
    sim.ctx.faults.add({ match: '/pools/default', ...fault, times: 1 });
    const c = client();
    const e = await failure(c.getJson('/pools/default', {}, loose));
    expect(e.code).toBe(code);
    await c.close();
  });

  it('times out a hanging response', async () => {
    sim.ctx.faults.add({ match: '/pools/default', kind: 'hang', times: 1 });
    const c = client({ requestTimeout: 300 });
    const e = await failure(c.getJson('/pools/default', {}, loose));
    expect(e.code).toBe('CBW_ERR_TIMEOUT');
    await c.close();
  });

  it('caps the response size', async () => {
    sim.ctx.faults.add({ match: '/pools/default', kind: 'oversize', bytes: 4 * 1024 * 1024, times: 1 });
    const c = client({ maxResponseBytes: 1024 * 1024 });
    const e = await failure(c.getJson('/pools/default', {}, loose));
    expect(e.code).toBe('CBW_ERR_TOO_LARGE');
    await c.close();
  });

  it('rejects a body that does not match the schema', async () => {
    const c = client();
    const e = await failure(c.getJson('/pools/default', {}, z.object({ nodes: z.string() })));
    expect(e.code).toBe('CBW_ERR_SCHEMA');
    expect(e.message).toContain('nodes');
    await c.close();
  });

  it('returns allowed statuses as data', async () => {
    const c = client();
    const r = await c.requestJson('/no/such/{thing}', { thing: 'x' }, loose, { allowStatus: [404] });
    expect(r.status).toBe(404);
    expect(r.data).toBeUndefined();
    await c.close();
  });

  it('aborts through the scoped signal', async () => {
    sim.ctx.faults.add({ match: '/pools/default', kind: 'hang', times: 1 });
    const c = client({ requestTimeout: 10_000 });
    const scoped = c.scoped({ signal: AbortSignal.timeout(200) });
    const e = await failure(scoped.getJson('/pools/default', {}, loose));
    expect(e.code).toBe('CBW_ERR_TIMEOUT');
    expect(e.message).toContain('poll deadline');
    await c.close();
  });
});

describe('answer listener (the collection thread counts answers towards a collection)', () => {
  it('is told the byte size of each answer read whole, whatever its status, and not of one cut off at the cap', async () => {
    // 'é' is two bytes in UTF-8: the count is of bytes read, not of characters.
    const body = JSON.stringify({ name: 'caf\u00e9', pad: 'x'.repeat(1000) });
    const server = createServer((req, res) => {
      if (req.url === '/big') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(`"${'y'.repeat(4096)}"`);
        return;
      }
      res.writeHead(req.url === '/gone' ? 404 : 200, { 'content-type': 'application/json' });
      res.end(body);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const seen: number[] = [];
    setAnswerListener((n) => seen.push(n));
    try {
      const c = createClient({ cluster: 'c1', url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, username: 'u', password: 'p', requestTimeout: 2000, maxResponseBytes: 2048 });
      await c.getJson('/ok', {}, loose);
      await c.requestJson('/gone', {}, loose, { allowStatus: [404] });
      await failure(c.getJson('/big', {}, z.string()));
      await c.close();
      // {"name":"café","pad":"x…x"}: 1 + 6 + 1 + 7 ("café" quoted, é two bytes) + 1 + 5 + 1 + 1,002 + 1 = 1,025 bytes.
      expect(seen).toEqual([1025, 1025]);
    } finally {
      setAnswerListener(undefined);
      await new Promise<void>((r) => server.close(() => r()));
    }
  });

  it('a listener that throws costs nothing: the answer is still returned', async () => {
    let told = 0;
    setAnswerListener(() => {
      told++;
      throw new Error('listener broke');
    });
    try {
      const c = client();
      const pools = await c.getJson('/pools', {}, z.looseObject({ isAdminCreds: z.boolean() }));
      await c.close();
      expect(pools.isAdminCreds).toBe(true);
      expect(told).toBe(1);
    } finally {
      setAnswerListener(undefined);
    }
  });
});

describe('concurrency bound', () => {
  let server: ReturnType<typeof createServer>;
  let base: string;
  let inFlight = 0;
  let maxInFlight = 0;
  beforeAll(async () => {
    server = createServer((_req, res) => {
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      setTimeout(() => {
        inFlight--;
        res.setHeader('content-type', 'application/json');
        res.end('{}');
      }, 30);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  it('never has more than `concurrency` requests in flight per cluster', async () => {
    const c = createClient({ cluster: 'c', url: base, concurrency: 3 });
    await Promise.all(Array.from({ length: 12 }, (_, i) => c.getJson('/x/{i}', { i: String(i) }, loose)));
    expect(maxInFlight).toBe(3);
    await c.close();
  });

  it('semaphore hands out slots first come, first served', async () => {
    const s = new Semaphore(1);
    const order: number[] = [];
    const r0 = await s.acquire();
    const p1 = s.acquire().then((r) => (order.push(1), r));
    const p2 = s.acquire().then((r) => (order.push(2), r));
    expect(s.waiting).toBe(2);
    r0();
    (await p1)();
    (await p2)();
    expect(order).toEqual([1, 2]);
    expect(s.inFlight).toBe(0);
  });
});

describe('fair slots (one lane per collector)', () => {
  it('a lane holds at most half the slots, so another lane gets the rest at once', async () => {
    const s = new FairSemaphore(8);
    expect(s.laneCap).toBe(4);
    const held = await Promise.all(Array.from({ length: 4 }, () => s.acquire('security')));
    // The fifth request of the same lane waits although four slots are free: they are the others' reserve.
    let fifth = false;
    const p5 = s.acquire('security').then((r) => ((fifth = true), r));
    await Promise.resolve();
    expect(fifth).toBe(false);
    expect(s.waiting).toBe(1);
    const others = await Promise.all(Array.from({ length: 4 }, () => s.acquire('buckets')));
    expect(s.inFlight).toBe(8);
    // One of the lane's own slots freed: its waiter gets it.
    (held[0] as () => void)();
    (await p5)();
    for (const r of [...held.slice(1), ...others]) r();
    expect(s.inFlight).toBe(0);
    expect(s.waiting).toBe(0);
  });

  it('serves waiting lanes in turn, not first come, first served', async () => {
    const s = new FairSemaphore(2, 2);
    const first = await s.acquire('xdcr');
    const second = await s.acquire('xdcr');
    const order: string[] = [];
    const wait = (lane: string): Promise<void> => s.acquire(lane).then((r) => void (order.push(lane), r()));
    // Ten xdcr requests queue before one from nodes; nodes is served second, not eleventh.
    const all = [...Array.from({ length: 10 }, () => wait('xdcr')), wait('nodes')];
    first();
    second();
    await Promise.all(all);
    expect(order.indexOf('nodes')).toBeLessThanOrEqual(1);
    expect(s.inFlight).toBe(0);
  });

  it('an aborted waiter leaves its queue and its lane', async () => {
    const s = new FairSemaphore(1);
    const r = await s.acquire('a');
    const ac = new AbortController();
    const p = s.acquire('b', ac.signal);
    expect(s.waiting).toBe(1);
    ac.abort(new Error('gone'));
    await expect(p).rejects.toThrow('gone');
    expect(s.waiting).toBe(0);
    r();
    expect(s.inFlight).toBe(0);
  });

  it('the unscoped client (no lane) may use every slot', async () => {
    const s = new FairSemaphore(4);
    const held = await Promise.all(Array.from({ length: 4 }, () => s.acquire('')));
    expect(s.inFlight).toBe(4);
    for (const r of held) r();
  });
});

describe('answers parsed one per event-loop turn', () => {
  // A server that holds every answer until all have been asked for, then sends them together: their
  // bodies arrive in the same I/O phase, the case where a scrape would otherwise wait for all of them.
  const N = 6;
  let server: ReturnType<typeof createServer>;
  let base: string;
  beforeAll(async () => {
    const held: Array<() => void> = [];
    server = createServer((_req, res) => {
      held.push(() => {
        res.setHeader('content-type', 'application/json');
        res.end('{"ok":true}');
      });
      if (held.length === N) for (const send of held.splice(0)) send();
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  it('gives each answer its own turn, so I/O (a scrape) can run between two of them', async () => {
    const c = createClient({ cluster: 'c', url: base, concurrency: N });
    // A turn counter: an immediate that re-queues itself runs once per event-loop iteration.
    let turn = 0;
    let ticking = true;
    const tick = (): void => {
      turn++;
      if (ticking) setImmediate(tick);
    };
    setImmediate(tick);
    try {
      const turns = await Promise.all(Array.from({ length: N }, (_, i) => c.getJson('/x/{i}', { i: String(i) }, loose).then(() => turn)));
      expect(new Set(turns).size).toBe(N);
    } finally {
      ticking = false;
      await c.close();
    }
  });
});

describe('a parseBody that gives the event loop turns (returns a Promise)', () => {
  /** A turn of the event loop. */
  const turn = (): Promise<void> => new Promise((r) => setImmediate(r));

  it('what it resolves to goes through the schema; it is handed the request signal', async () => {
    const ac = new AbortController();
    const root = client();
    const c = root.scoped({ signal: ac.signal });
    let handed: AbortSignal | undefined;
    const r = await c.requestJson('/pools/default', {}, z.object({ turns: z.literal(2) }), {
      parseBody: async (_text, signal) => {
        handed = signal;
        await turn();
        await turn();
        return { turns: 2 };
      },
    });
    expect(r.data).toEqual({ turns: 2 });
    // The scope's signal (combined with the request's, when both are given).
    expect(handed?.aborted).toBe(false);
    ac.abort(new Error('done'));
    expect(handed?.aborted).toBe(true);
    await root.close();
  });

  it('a SyntaxError it rejects with is the same "not valid JSON" failure as a synchronous one', async () => {
    const c = client();
    // As a reader throws it: the position in the whole body.
    const broken = (): never => {
      throw new SyntaxError('Unexpected token } in JSON at position 3');
    };
    const sync = await failure(c.requestJson('/pools/default', {}, loose, { parseBody: broken }));
    const later = await failure(
      c.requestJson('/pools/default', {}, loose, {
        parseBody: async () => {
          await turn();
          return broken();
        },
      }),
    );
    expect(sync.code).toBe('CBW_ERR_SCHEMA');
    expect(later.code).toBe('CBW_ERR_SCHEMA');
    expect(later.message).toBe(sync.message);
    expect(later.message).toContain('body is not valid JSON (position 3)');
    // Other errors are its own.
    const odd = new RangeError('odd');
    await expect(c.requestJson('/pools/default', {}, loose, { parseBody: () => Promise.reject(odd) })).rejects.toBe(odd);
    await c.close();
  });

  it('stopped by the poll giving up while it runs: the abort error a request waiting for its turn gets', async () => {
    const c = client();
    for (const [reason, code] of [
      [new Error('poll abandoned'), 'CBW_ERR_ABORTED'],
      [new DOMException('deadline', 'TimeoutError'), 'CBW_ERR_TIMEOUT'],
    ] as const) {
      const ac = new AbortController();
      let stopped = false;
      const e = await failure(
        c.scoped({ signal: ac.signal }).requestJson('/pools/default', {}, loose, {
          parseBody: async (text, signal) => {
            setImmediate(() => ac.abort(reason));
            await turn();
            stopped = signal?.aborted === true;
            // What a reader throws once stopped (its reason, or a SyntaxError of what it did not read) is the abort.
            if (stopped) return JSON.parse(text.slice(0, 10)) as unknown;
            return JSON.parse(text) as unknown;
          },
        }),
      );
      expect(stopped).toBe(true);
      expect(e.code).toBe(code);
      expect(e.cause).toBe(reason);
    }
    await c.close();
  });

  it('two answers are read one after the other, never interleaved, however many turns each reader gives', async () => {
    const c = client();
    const log: string[] = [];
    const parseBody = (name: string) => async (text: string) => {
      log.push(`${name} start`);
      for (let i = 0; i < 3; i++) await turn();
      log.push(`${name} end`);
      return JSON.parse(text) as unknown;
    };
    await Promise.all(['a', 'b', 'c'].map((n) => c.requestJson('/pools/default', {}, loose, { parseBody: parseBody(n) })));
    expect(log).toHaveLength(6);
    for (let i = 0; i < 6; i += 2) expect(log[i + 1]).toBe((log[i] as string).replace('start', 'end'));
    await c.close();
  });
});

describe('answers under load (hardening)', () => {
  it('an answer that would pass the process-wide budget fails with CBW_ERR_BUDGET, and the budget is given back', async () => {
    const budget = new ByteBudget(8 * 1024 * 1024);
    // Other answers in flight hold most of the budget.
    expect(budget.tryReserve(6 * 1024 * 1024)).toBe(true);
    sim.ctx.faults.add({ match: '/pools/default', kind: 'oversize', bytes: 2 * 1024 * 1024, times: 1 });
    const c = client({ budget, maxResponseBytes: 64 * 1024 * 1024 });
    const e = await failure(c.getJson('/pools/default', {}, loose));
    expect(e.code).toBe('CBW_ERR_BUDGET');
    expect(budget.reserved).toBe(6 * 1024 * 1024);
    budget.release(6 * 1024 * 1024);
    // With the budget free again, the same answer is read and parsed, then its bytes are returned.
    sim.ctx.faults.add({ match: '/pools/default', kind: 'oversize', bytes: 2 * 1024 * 1024, times: 1 });
    const arr = await c.getJson('/pools/default', {}, z.array(z.number()));
    expect(arr.length).toBeGreaterThan(1000);
    expect(budget.reserved).toBe(0);
    await c.close();
  });

  it('counts a budget failure under its own code label', async () => {
    const seen: RequestRecord[] = [];
    const budget = new ByteBudget(1024 * 1024);
    sim.ctx.faults.add({ match: '/pools/default', kind: 'oversize', bytes: 2 * 1024 * 1024, times: 1 });
    const c = client({ budget, observe: (_c, r) => seen.push(r) });
    await failure(c.getJson('/pools/default', {}, loose));
    expect(seen.map((r) => r.code)).toEqual(['over_budget']);
    await c.close();
  });

  it('holds the concurrency slot until the answer is parsed', async () => {
    const c = client({ concurrency: 1 });
    let waitingDuringParse = -1;
    const first = z.unknown().refine(() => {
      waitingDuringParse = c.load().waiting;
      return true;
    });
    const p1 = c.getJson('/pools/default', {}, first);
    const p2 = c.getJson('/pools/default/buckets', {}, z.unknown());
    await Promise.all([p1, p2]);
    // The second request was still waiting for the slot while the first answer was being parsed.
    expect(waitingDuringParse).toBe(1);
    await c.close();
  });

  it('does not parse an answer whose poll gave up while it waited', async () => {
    const ac = new AbortController();
    const c = client();
    const scoped = c.scoped({ signal: ac.signal, onRequest: () => ac.abort(new Error('poll abandoned')) });
    let parsed = false;
    const schema = z.unknown().refine(() => {
      parsed = true;
      return true;
    });
    const spy = vi.spyOn(JSON, 'parse');
    try {
      const e = await failure(scoped.getJson('/pools/default', {}, schema));
      expect(e.code).toBe('CBW_ERR_ABORTED');
      expect(spy.mock.calls.filter((a) => String(a[0]).includes('"nodes"'))).toEqual([]);
      expect(parsed).toBe(false);
    } finally {
      spy.mockRestore();
      await c.close();
    }
  });

  it('discards the body of an abandoned poll and returns its budget', async () => {
    const budget = new ByteBudget(256 * 1024 * 1024);
    // The body trickles (headers at once, then 256 bytes a second): the poll's deadline always lands mid-body,
    // however fast the machine is.
    sim.ctx.faults.add({ match: '/pools/default', kind: 'slow_body', bytesPerSecond: 256, times: 1 });
    const c = client({ budget, maxResponseBytes: 128 * 1024 * 1024, requestTimeout: 30_000 });
    const spy = vi.spyOn(JSON, 'parse');
    try {
      const e = await failure(c.scoped({ signal: AbortSignal.timeout(300) }).getJson('/pools/default', {}, loose));
      expect(e.code).toBe('CBW_ERR_TIMEOUT');
      expect(spy.mock.calls.filter((a) => String(a[0]).includes('"nodes"'))).toEqual([]);
      expect(budget.reserved).toBe(0);
      // The connection is usable afterwards: the abandoned body was not left in the pipe.
      await c.getJson('/pools/default', {}, loose);
    } finally {
      spy.mockRestore();
      await c.close();
    }
  });
});

describe('connection pools', () => {
  it('keeps at most MAX_POOLS, closing the least recently used: origins found in nodeServices come from Couchbase', async () => {
    const c = client({ requestTimeout: 1000, connectTimeout: 1000 });
    await c.getJson('/pools/default', {}, z.looseObject({}));
    expect(c.load().pools).toBe(1);
    // 40 origins nobody listens on (127.0.0.x, a closed port): each request fails, each origin got a pool.
    for (let i = 2; i < 42; i++) {
      await c.requestJson('/api/query', {}, z.unknown(), { baseUrl: `http://127.0.0.${i}:9` }).catch(() => undefined);
      expect(c.load().pools).toBeLessThanOrEqual(MAX_POOLS);
    }
    expect(c.load().pools).toBe(MAX_POOLS);
    // The management URL's pool was the oldest: it was closed, and a new request simply opens a new one.
    await c.getJson('/pools/default', {}, z.looseObject({}));
    expect(c.load().pools).toBe(MAX_POOLS);
    await c.close();
    expect(c.load().pools).toBe(0);
  });
});
