/** Small things an operator trips over (issue 13, item 9): log shape, poll deadlines, `check` concurrency. */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkCluster } from '../../src/check.js';
import { runPoll } from '../../src/collectors/context.js';
import { collectorList } from '../../src/collectors/index.js';
import { defaultClusterConfig, resolveCollectors } from '../../src/config/defaults.js';
import { createClient } from '../../src/couchbase/client.js';
import { createLogger } from '../../src/log.js';
import { SnapshotStore } from '../../src/metrics/store.js';
import { Scheduler } from '../../src/scheduler/index.js';

function capture(): { lines: () => Array<Record<string, unknown>>; sink: Writable } {
  const chunks: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _e, cb) {
      chunks.push(chunk.toString('utf8'));
      cb();
    },
  });
  return {
    sink,
    lines: () =>
      chunks
        .join('')
        .split('\n')
        .filter((l) => l !== '')
        .map((l) => JSON.parse(l) as Record<string, unknown>),
  };
}

// An upstream that accepts every request and never answers, counting those open at once.
let open = 0;
let maxOpen = 0;
let server: ReturnType<typeof createServer>;
let base: string;
beforeAll(async () => {
  server = createServer((req) => {
    open++;
    maxOpen = Math.max(maxOpen, open);
    req.socket.once('close', () => open--);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((r) => server.close(() => r()));
});

function hangingCluster(timeout = 400) {
  const collectors = resolveCollectors();
  for (const c of Object.values(collectors)) {
    c.interval = 60_000;
    c.timeout = timeout;
  }
  return defaultClusterConfig({ name: 'hung', url: base, username: 'u', password: 'password-xyz', collectors });
}

describe('log lines', () => {
  it('carry level names and ISO times', () => {
    const c = capture();
    createLogger({ destination: c.sink }).warn({ a: 1 }, 'hello');
    const [line] = c.lines();
    expect(line?.level).toBe('warn');
    expect(String(line?.time)).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  });

  it('logfmt still renders them', () => {
    let out = '';
    const sink = new Writable({
      write(chunk: Buffer, _e, cb) {
        out += chunk.toString('utf8');
        cb();
      },
    });
    createLogger({ destination: sink, format: 'logfmt' }).info('hi');
    return new Promise<void>((r) => setTimeout(r, 20)).then(() => expect(out).toMatch(/^ts=\d{4}-\d\d-\d\dT\S+Z level=info msg=hi/));
  });
});

describe('a poll that hits its deadline', () => {
  it('fails with CBW_ERR_TIMEOUT naming the endpoint, not a DOMException', async () => {
    const cluster = hangingCluster();
    const collector = collectorList().find((c) => c.name === 'autofailover');
    if (!collector) throw new Error('no autofailover collector');
    const client = createClient({ cluster: 'hung', url: base, requestTimeout: 30_000 });
    try {
      const o = await runPoll({ collector, cluster, options: cluster.collectors.autofailover as never, client });
      expect(o.ok).toBe(false);
      expect((o.error as { code?: unknown }).code).toBe('CBW_ERR_TIMEOUT');
      expect((o.error as Error).message).toContain('/settings/autoFailover');
    } finally {
      await client.close();
    }
  });

  it('is logged as an error object with its code, not {"type":"Object"}', async () => {
    const cluster = hangingCluster();
    const c = capture();
    const store = new SnapshotStore();
    const client = createClient({ cluster: 'hung', url: base, requestTimeout: 30_000 });
    const scheduler = new Scheduler({ clusters: [cluster], clients: new Map([['hung', client]]), collectors: collectorList().filter((x) => x.name === 'autofailover'), store, log: createLogger({ destination: c.sink, level: 'debug' }) });
    try {
      await scheduler.pollAllOnce();
    } finally {
      await scheduler.stop();
      await client.close();
    }
    const failed = c.lines().find((l) => l.msg === 'poll failed');
    const err = failed?.err as Record<string, unknown> | undefined;
    expect(err?.type).not.toBe('Object');
    expect(err?.code).toBe('CBW_ERR_TIMEOUT');
    expect(String(err?.message)).toContain('/settings/autoFailover');
    expect(String(err?.stack)).not.toBe('');
  });
});

describe('cbwatch check', () => {
  it('polls the collectors of a cluster at once, not one after another', async () => {
    maxOpen = 0;
    const r = await checkCluster(hangingCluster(600), collectorList());
    expect(r.failed).toBeGreaterThan(0);
    // Several collectors' requests were waiting on the hanging cluster together.
    expect(maxOpen).toBeGreaterThan(2);
    for (const { outcome } of r.outcomes) if (!outcome.ok) expect((outcome.error as { code?: unknown }).code).toBe('CBW_ERR_TIMEOUT');
  }, 20_000);
});

describe('the scheduler tick', () => {
  it('writes nothing to the console when the event loop was blocked (as node-cron, its former ticker, did: "missed execution")', async () => {
    const cluster = hangingCluster();
    const c = capture();
    const writes: string[] = [];
    const orig = { warn: console.warn, info: console.info, error: console.error };
    console.warn = (...a: unknown[]) => void writes.push(a.map(String).join(' '));
    console.info = console.warn;
    console.error = console.warn;
    const client = createClient({ cluster: 'hung', url: base });
    const scheduler = new Scheduler({ clusters: [cluster], clients: new Map([['hung', client]]), collectors: [], store: new SnapshotStore(), log: createLogger({ destination: c.sink, level: 'debug' }) });
    try {
      scheduler.start();
      await new Promise((r) => setTimeout(r, 1100));
      const until = Date.now() + 2500;
      while (Date.now() < until) {
        /* block the loop past a few ticks */
      }
      await new Promise((r) => setTimeout(r, 1500));
    } finally {
      Object.assign(console, orig);
      await scheduler.stop();
      await client.close();
    }
    expect(writes).toEqual([]);
  }, 15_000);
});
