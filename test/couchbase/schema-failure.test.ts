/**
 * Issue 25, items 1 and 4: a schema failure is summarised (a few issues with redacted paths, a count, bounded
 * bytes) before it is kept or logged, and every string derived from an answer passes the redactor. The
 * upstream here is a plain HTTP server answering what each case sets; the oracles are hand-written sizes and
 * the secret's own forms.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createClient } from '../../src/couchbase/client.js';
import { nodeServicesSchema } from '../../src/couchbase/nodeServices.js';
import { securityGlobalSchema } from '../../src/couchbase/security.js';
import { serverGroupsSchema } from '../../src/couchbase/pools.js';
import { CbwError, describeError } from '../../src/errors.js';
import { createLogger } from '../../src/log.js';
import { tasksCollector } from '../../src/collectors/tasks.js';
import { collect, fakeClient, loadFixture } from '../helpers/collect.js';

const USER = 'cbw-user';
const PASSWORD = 'Sch3ma-Key-Pa55word';
const B64 = Buffer.from(`${USER}:${PASSWORD}`).toString('base64').replace(/=+$/, '');

let body = '';
let base: string;
const server = createServer((_req, res) => {
  res.writeHead(200, { 'content-type': 'application/json' }).end(body);
});

beforeAll(async () => {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((r) => server.close(() => r()));
});

function client() {
  return createClient({ cluster: 'c1', url: base, username: USER, password: PASSWORD, requestTimeout: 10_000 });
}

async function schemaFailure(schema: z.ZodType): Promise<CbwError> {
  const c = client();
  try {
    await c.getJson('/x', {}, schema);
  } catch (err) {
    expect(err).toBeInstanceOf(CbwError);
    expect((err as CbwError).code).toBe('CBW_ERR_SCHEMA');
    return err as CbwError;
  } finally {
    await c.close();
  }
  throw new Error('expected a schema failure');
}

/** What the daemon's logger writes for a failed poll (`{ err }` at warn), as one line per record. */
function logged(err: unknown): string[] {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _e, cb) {
      lines.push(...chunk.toString('utf8').split('\n').filter((l) => l !== ''));
      cb();
    },
  });
  createLogger({ destination: sink }).warn({ err }, 'poll failed');
  return lines;
}

const ones = (bytes: number): string => Array(Math.floor(bytes / 2)).fill('1').join(',');

describe('a whole-answer schema failure is summarised', () => {
  it.each([
    ['500 KB of serverGroups entries', () => `{"groups":[${ones(500 * 1024)}]}`, serverGroupsSchema],
    ['2 MB of cipher suites', () => `{"cipherSuites":[${ones(2 * 1024 * 1024)}]}`, securityGlobalSchema],
  ])('%s: the error and its log record stay under a few KB', async (_n, make, schema) => {
    body = make();
    const e = await schemaFailure(schema);
    // The first issue, with its path; not the zod error with every issue.
    expect(e.message).toMatch(/\[0\]: Invalid input: expected string, received number|groups\[0\]: Invalid input: expected object, received number/);
    expect(e.cause).toBeUndefined();
    expect(e.message.length).toBeLessThan(1200);
    const lines = logged(e);
    expect(lines).toHaveLength(1);
    expect((lines[0] as string).length).toBeLessThan(4096);
  });

  it('a schema with many issues: the first three are named and the rest counted', async () => {
    body = JSON.stringify({ a: 1, b: 2, c: 3, d: 4, e: 5 });
    const e = await schemaFailure(z.looseObject({ a: z.string(), b: z.string(), c: z.string(), d: z.string(), e: z.string() }));
    expect(e.message).toMatch(/a: Invalid input: expected string, received number; b: .*; c: .* \(and 2 more issues\)$/);
  });

  it('nodesExt is checked entry by entry: a corrupted node costs only itself', () => {
    const ns = nodeServicesSchema.parse({
      rev: 1,
      nodesExt: [{ services: { mgmt: 8091, kv: 11210 }, hostname: 'a' }, { services: { mgmt: 'x' }, hostname: 'b' }, 1, { services: { mgmt: 8091 }, hostname: 'c' }],
    });
    expect(ns.nodesExt.map((n) => n.hostname)).toEqual(['a', 'c']);
    expect(ns.invalidNodes?.count).toBe(2);
    expect(ns.invalidNodes?.shown.map((e) => [e.index, e.name])).toEqual([
      [1, 'b'],
      [2, undefined],
    ]);
    expect(ns.invalidNodes?.shown[0]?.message).toMatch(/^services\.mgmt: Invalid input: expected number, received string$/);
  });

  it('nodesExt of 200,000 bad entries: every one counted, twenty described', () => {
    const ns = nodeServicesSchema.parse({ nodesExt: Array(200_000).fill(1) });
    expect(ns.nodesExt).toEqual([]);
    expect(ns.invalidNodes?.count).toBe(200_000);
    expect(ns.invalidNodes?.shown).toHaveLength(20);
  });
});

describe('an answer\'s keys pass the redactor', () => {
  const keys: Array<[string, string]> = [
    ['the password', PASSWORD],
    ['base64 of user:password', B64],
    ['the password after 16 KB of whitespace', `${' '.repeat(16 * 1024)}${PASSWORD}`],
    ['a URL-encoded password in a long key', `${'k'.repeat(20_000)}?p=${encodeURIComponent(PASSWORD)}`],
  ];
  it.each(keys)('%s as a key in the failing path: not in the message, the brief, the log or check', async (_n, key) => {
    body = JSON.stringify({ services: { [key]: 'not a number' } });
    const e = await schemaFailure(z.looseObject({ services: z.record(z.string(), z.number()) }));
    const texts = [e.message, e.brief, describeError(e), describeError(e, { public: true }), ...logged(e)];
    for (const t of texts) {
      expect(t).not.toContain(PASSWORD.slice(0, 8));
      expect(t).not.toContain(B64.slice(0, 12));
      expect(t).not.toContain(encodeURIComponent(PASSWORD).slice(0, 8));
      expect(t.length).toBeLessThan(4096);
    }
    expect(e.message).toContain('services');
  });
});

describe('a list of bad entries', () => {
  it('tasks: a fixture with one entry corrupted costs that entry; 5,000 bad entries are all counted, and the poll names one', async () => {
    const tasks = loadFixture<unknown[]>('pools-default-tasks/docs-server-6.5-6.6-xdcr.json');
    const one = await collect(tasksCollector, fakeClient({ '/pools/default/tasks': [...tasks, { type: 42 }] }));
    expect(one.ok, String(one.error)).toBe(true);
    expect(one.itemErrors.get('bad_body')).toBe(1);
    const all = await collect(tasksCollector, fakeClient({ '/pools/default/tasks': Array(5000).fill(1) }));
    expect(all.ok).toBe(false);
    expect(all.itemErrors.get('bad_body')).toBe(5000);
    expect(describeError(all.error)).toMatch(/^GET \/pools\/default\/tasks: task \d+: \(root\): Invalid input: expected object, received number \(and 4999 more entries do not parse\)$/);
  });
});
