/**
 * Issue 13, case 1: bytes are not objects. 60 MB of `[],[],…` is under the 64 MiB per-answer cap, yet
 * JSON.parse makes 20 million arrays of it (about 1 GB of heap). The client counts the values an answer can
 * create while it streams in and stops reading at the cap (`--couchbase.max-answer-values`), before any parse.
 */
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { ByteBudget } from '../../src/couchbase/answer-budget.js';
import { countValueMarks, DEFAULT_MAX_ANSWER_VALUES, nestsDeeperThan } from '../../src/couchbase/answer-values.js';
import { createClient } from '../../src/couchbase/client.js';
import type { RequestRecord } from '../../src/couchbase/client.js';
import { DEFAULT_MAX_ANSWER_VALUES as CONFIG_DEFAULT } from '../../src/config/load.js';
import { CbwError } from '../../src/errors.js';
import { createSimulator } from '../../src/simulator/index.js';

const SECRET = 'values-test-secret';
const CHUNK = Buffer.from('[],'.repeat(20_000)); // 60 kB, 40,000 marks
const CHUNKS = 500; // 30 MB in all when read to the end

/** Streams `[` + CHUNK × CHUNKS + `[]]`, honouring backpressure, and counts the bytes it managed to write. */
function hostileServer(): Promise<{ url: string; sent: () => number; done: Promise<void>; server: Server }> {
  let sent = 0;
  let finish: () => void = () => undefined;
  const done = new Promise<void>((r) => (finish = r));
  const server = createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    let i = 0;
    const pump = (): void => {
      while (i < CHUNKS) {
        if (res.destroyed) return finish();
        const buf = i === 0 ? Buffer.concat([Buffer.from('['), CHUNK]) : CHUNK;
        i++;
        sent += buf.length;
        if (!res.write(buf)) return void res.once('drain', pump);
      }
      res.end('[]]', () => finish());
    };
    res.on('close', () => finish());
    req.resume();
    pump();
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, sent: () => sent, done, server })),
  );
}

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((r) => s.close(r))));
  vi.restoreAllMocks();
});

async function failure(p: Promise<unknown>): Promise<CbwError> {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(CbwError);
    return err as CbwError;
  }
  throw new Error('expected a failure');
}

describe('countValueMarks', () => {
  it('counts [ { and , bytes (hand-counted)', () => {
    expect(countValueMarks(Buffer.from(''))).toBe(0);
    expect(countValueMarks(Buffer.from('"a string, with a comma"'))).toBe(1);
    expect(countValueMarks(Buffer.from('{"a":[1,2,3],"b":{}}'))).toBe(6);
    expect(countValueMarks(Buffer.from('[],[],[]'))).toBe(5);
    expect(countValueMarks(Buffer.from('12345 true null'))).toBe(0);
  });
  it('has one default, in the client and in the configuration', () => {
    expect(CONFIG_DEFAULT).toBe(DEFAULT_MAX_ANSWER_VALUES);
  });
});

describe('an answer with more values than the cap', () => {
  it('fails as too_large while it streams in: the read stops early, nothing is parsed, the budget is given back', async () => {
    const srv = await hostileServer();
    servers.push(srv.server);
    const seen: RequestRecord[] = [];
    const budget = new ByteBudget(256 * 1024 * 1024);
    const c = createClient({
      cluster: 'c1',
      url: srv.url,
      username: 'Administrator',
      password: SECRET,
      maxAnswerValues: 100_000,
      budget,
      requestTimeout: 30_000,
      observe: (_c, r) => seen.push(r),
    });
    const parse = vi.spyOn(JSON, 'parse');
    try {
      const e = await failure(c.getJson('/pools/default/buckets/{bucket}/stats', { bucket: 'b1' }, z.unknown()));
      expect(e.code).toBe('CBW_ERR_TOO_LARGE');
      // The reason names the request and the limit, and never the credentials or the body.
      expect(e.message).toMatch(/^GET http:\/\/127\.0\.0\.1:\d+\/pools\/default\/buckets\/b1\/stats: .*more than 100000 JSON values.*--couchbase\.max-answer-values/);
      expect(e.message).not.toContain(SECRET);
      expect(e.message).not.toContain('[],');
      expect(seen.map((r) => r.code)).toEqual(['too_large']);
      // (vitest parses source maps meanwhile: only a call on this body counts)
      expect(parse.mock.calls.filter((a) => String(a[0]).startsWith('[[],')).length).toBe(0);
      expect(budget.reserved).toBe(0);
      // The server could not send it all: the client closed the connection. 100,000 values are 150 kB of
      // this body; socket buffers on both sides hold a few MB at most, far from the 30 MB.
      await srv.done;
      expect(srv.sent()).toBeLessThan((CHUNK.length * CHUNKS) / 3);
    } finally {
      await c.close();
    }
  });

  it('a body of nested arrays ([[[[…) fails the same way, before JSON.parse sees it', async () => {
    const sim = createSimulator({ users: { admin: { username: 'Administrator', password: SECRET } } });
    const url = await sim.listen();
    const c = createClient({ cluster: 'c1', url, username: 'Administrator', password: SECRET, maxAnswerValues: 10_000 });
    try {
      // Nested arrays, ten levels per element: every `[` counts.
      sim.ctx.faults.add({ match: '/pools/default', kind: 'oversize', bytes: 2 * 1024 * 1024, fill: '[[[[[[[[[[0]]]]]]]]]]', times: 1 });
      const e = await failure(c.getJson('/pools/default', {}, z.unknown()));
      expect(e.code).toBe('CBW_ERR_TOO_LARGE');
      // Under the cap, nesting is only parsed (V8's JSON.parse is not recursive) and fails the schema.
      const deep = 5_000;
      sim.ctx.faults.add({ match: '/pools/default', kind: 'oversize', bytes: 0, fill: `${'['.repeat(deep)}${']'.repeat(deep)}`, times: 1 });
      const e2 = await failure(c.getJson('/pools/default', {}, z.looseObject({})));
      expect(e2.code).toBe('CBW_ERR_SCHEMA');
      // The same client is fine afterwards.
      await c.getJson('/pools/default', {}, z.looseObject({ nodes: z.array(z.unknown()) }));
    } finally {
      await c.close();
      await sim.close();
    }
  });

  it('an answer of 1 MiB or more nested deeper than 64 levels is refused unparsed; 64 levels and small answers are parsed (issue 39)', async () => {
    const sim = createSimulator({ users: { admin: { username: 'Administrator', password: SECRET } } });
    const url = await sim.listen();
    const c = createClient({ cluster: 'c1', url, username: 'Administrator', password: SECRET });
    // The simulator wraps `fill` in an array: `["x…",[[…]]]` nests 1 + n levels, after a 1 MiB string.
    const nested = (n: number) => `${JSON.stringify(`[{${'x'.repeat(1 << 20)}`)},${'['.repeat(n)}${']'.repeat(n)}`;
    try {
      // 3,000,000 nested arrays (6 MB, under the value cap): 556 MiB on main.
      const deep = 3_000_000;
      sim.ctx.faults.add({ match: '/pools/default', kind: 'oversize', bytes: 0, fill: `${'['.repeat(deep)}${']'.repeat(deep)}`, times: 1 });
      const e = await failure(c.getJson('/pools/default', {}, z.unknown()));
      expect(e.code).toBe('CBW_ERR_SCHEMA');
      expect(e.message).toContain('nests deeper than 64 levels: refused unparsed');
      // 65 levels in a 1 MiB answer (a long string first: brackets in it are text), refused; 64 parsed.
      sim.ctx.faults.add({ match: '/pools/default', kind: 'oversize', bytes: 0, fill: nested(64), times: 1 });
      expect((await failure(c.getJson('/pools/default', {}, z.unknown()))).message).toContain('deeper than 64');
      sim.ctx.faults.add({ match: '/pools/default', kind: 'oversize', bytes: 0, fill: nested(63), times: 1 });
      await expect(c.getJson('/pools/default', {}, z.array(z.unknown()))).resolves.toHaveLength(2);
    } finally {
      await c.close();
      await sim.close();
    }
  });

  it('nestsDeeperThan: strings are skipped whole, escapes and all', () => {
    expect(nestsDeeperThan('[[["[[[[[["]]]', 3)).toBe(false);
    // An escaped backslash, then the closing quote: `"\\"` is a whole string.
    expect(nestsDeeperThan('[[["\\\\"],[[1]]]]', 3)).toBe(true);
    expect(nestsDeeperThan('["\\"[[[[", [[]]]', 3)).toBe(false);
    expect(nestsDeeperThan('{"a":{"b":{"c":[1]}}}', 3)).toBe(true);
  });

  /** Serves `body` in `pieces` writes of about equal size, each flushed before the next (several network chunks). */
  async function chunkedServer(body: string, pieces: number): Promise<string> {
    const server = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      const step = Math.ceil(body.length / pieces);
      let at = 0;
      const next = (): void => {
        if (at >= body.length) return void res.end();
        const part = body.slice(at, at + step);
        at += step;
        res.write(part, () => setImmediate(next));
      };
      next();
    });
    servers.push(server);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  it('the cap is exact whichever chunk passes it, also when the count starts late (bytes above the cap)', async () => {
    // `[0,0,…,0]` with n zeros has 1 + (n - 1) = n marks (the `[` and n - 1 commas) in 2n + 1 bytes: above a
    // cap of 1,000 values in bytes long before it is above it in values, and counted over many chunks.
    const zeros = (n: number): string => `[${Array(n).fill('0').join(',')}]`;
    const atCap = await chunkedServer(zeros(1000), 25);
    const overCap = await chunkedServer(zeros(1001), 25);
    const c = createClient({ cluster: 'c1', url: atCap, maxAnswerValues: 1000 });
    const c2 = createClient({ cluster: 'c1', url: overCap, maxAnswerValues: 1000 });
    try {
      expect(await c.getJson('/x', {}, z.array(z.number()))).toHaveLength(1000);
      const e = await failure(c2.getJson('/x', {}, z.array(z.number())));
      expect(e.code).toBe('CBW_ERR_TOO_LARGE');
      expect(e.message).toMatch(/more than 1000 JSON values/);
      // Marks before the bytes passed the cap are counted too: 999 commas of `0,` in the first chunks, then
      // one long string (one value whatever its length) takes the bytes past the cap.
      const late = await chunkedServer(`[${'0,'.repeat(999)}"${'x'.repeat(5000)}",0]`, 10);
      const c3 = createClient({ cluster: 'c1', url: late, maxAnswerValues: 1000 });
      try {
        // `[` + 999 commas + the comma after the string = 1,001 marks.
        expect((await failure(c3.getJson('/x', {}, z.array(z.unknown())))).code).toBe('CBW_ERR_TOO_LARGE');
      } finally {
        await c3.close();
      }
    } finally {
      await c.close();
      await c2.close();
    }
  });

  it('one long string is one value: a 4 MB string passes a cap of 10,000', async () => {
    const server = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ s: 'x'.repeat(4 * 1024 * 1024) }));
    });
    servers.push(server);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const c = createClient({ cluster: 'c1', url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, maxAnswerValues: 10_000 });
    try {
      const body = await c.getJson('/x', {}, z.object({ s: z.string() }));
      expect(body.s.length).toBe(4 * 1024 * 1024);
    } finally {
      await c.close();
    }
  });

  it('real answers stay far below the default: the bucket list of 1,000 buckets on 4 nodes', async () => {
    const sim = createSimulator({ buckets: 1000, nodes: 4, users: { admin: { username: 'Administrator', password: SECRET } } });
    const url = await sim.listen();
    const c = createClient({ cluster: 'c1', url, username: 'Administrator', password: SECRET, requestTimeout: 30_000 });
    try {
      const list = await c.getJson('/pools/default/buckets', {}, z.array(z.unknown()));
      expect(list.length).toBe(1000);
      const raw = await (await fetch(`${url}/pools/default/buckets`, { headers: { authorization: `Basic ${Buffer.from(`Administrator:${SECRET}`).toString('base64')}` } })).arrayBuffer();
      // At least ten times below the cap.
      expect(countValueMarks(new Uint8Array(raw)) * 10).toBeLessThan(DEFAULT_MAX_ANSWER_VALUES);
    } finally {
      await c.close();
      await sim.close();
    }
  });
});
