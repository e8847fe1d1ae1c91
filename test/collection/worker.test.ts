/**
 * The daemon's collection runs in a worker thread: scrapes are answered while the worker is blocked mid-poll,
 * a crashed worker shows as failed collectors and is restarted, and the exposition stays valid (one HELP/TYPE
 * per family, families contiguous) with several clusters.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { get } from 'node:http';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import type { Config } from '../../src/config/types.js';
import { WORKER_RESOURCE_LIMITS } from '../../src/collection/host.js';
import { WORKER_NICE } from '../../src/collection/protocol.js';
import { PACKAGE_ROOT } from '../../src/paths.js';
import { onlyCollectors, startHarness } from '../helpers/daemon.js';
import { requireBinary } from '../helpers/tools.js';

const FIXTURES = join(PACKAGE_ROOT, 'test', 'fixtures', 'collection');
const promtool = requireBinary('promtool');

async function until(what: string, cond: () => boolean | Promise<boolean>, ms = 20_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** The raw bytes of a GET (no decoding), with its headers. */
function raw(url: string, headers: Record<string, string>): Promise<{ status: number; headers: Record<string, unknown>; body: Buffer }> {
  return new Promise((resolve, reject) => {
    get(url, { headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    }).on('error', reject);
  });
}

/** Only the collectors the test needs, so the daemon starts fast. */
const only = onlyCollectors;

describe('collection worker', () => {
  it('with --collection.gc-every, asks for a collection of its heap each time that many bytes of answers are read; with 0, never', async () => {
    // undefined: the default, 8 MiB, and 1 GiB: two polls of the harness cluster read a few kilobytes, far from
    // either (a collection per answer, or one ignoring the threshold, would show). 0: none. 1,024 bytes: several per poll. A few kilobytes are
    // also far below the 4 MiB after which the end of a burst asks for one (the next test). The end of the first burst
    // asks for one that gives pages back (StartupRelease), whatever was read: calls[1] counts those.
    for (const every of [undefined, 0, 1024 * 1024 * 1024, 1024]) {
      const gcCalls = new SharedArrayBuffer(8);
      const calls = new Int32Array(gcCalls);
      const h = await startHarness({
        // Set on the config object, below the flag's 1 MiB floor, so that one poll's few kilobytes pass it.
        mutate: (c) => ({ ...only(['buckets', 'nodes'])(c), ...(every === undefined ? {} : { gcEveryAnswerBytes: every }) }),
        daemon: { worker: { extraModules: [join(FIXTURES, 'gc-spy.mjs')], extraData: { gcCalls } } },
      });
      try {
        await h.daemon.ready();
        await h.daemon.scheduler.pollAllOnce();
        await h.daemon.scheduler.pollAllOnce();
        expect(Atomics.load(calls, 1)).toBe(1);
        const regular = Atomics.load(calls, 0) - Atomics.load(calls, 1);
        if (every === 1024) expect(regular).toBeGreaterThan(1);
        else expect(regular).toBe(0);
        expect(h.logs.join('')).not.toContain('--collection.gc-every has no effect');
      } finally {
        await h.close();
      }
    }
  });

  it('once a burst of polls is over and at least 4 MiB of answers were read since the last collection, asks for one', async () => {
    // 100 buckets with every stat on 4 nodes: a poll of bucket_stats reads megabytes (the harness cluster of the
    // test above reads kilobytes, far below the 4 MiB, and asks for none).
    const gcCalls = new SharedArrayBuffer(4);
    const calls = new Int32Array(gcCalls);
    const h = await startHarness({
      sim: { buckets: 100, nodes: 4, statSet: 'full' },
      mutate: only(['buckets', 'bucket_stats']),
      daemon: { worker: { extraModules: [join(FIXTURES, 'gc-spy.mjs')], extraData: { gcCalls } } },
    });
    try {
      await h.daemon.ready();
      // The first polls (a window of 80 s of points) read several MB (more than 8 MiB since the simulator serves
      // the kv_dcp_* series, issue 37: one collection during the burst as well); their end is also the end of
      // start-up, whose collection (StartupRelease) is the last of these.
      // Bounded by the hang it would be, not by how fast a shared machine polls megabytes.
      await until('a collection after the first polls', () => Atomics.load(calls, 0) >= 1, 100_000);
      await new Promise((r) => setTimeout(r, 300));
      const first = Atomics.load(calls, 0);
      expect(first).toBeGreaterThanOrEqual(1);
      expect(first).toBeLessThanOrEqual(2);
      // A later poll reads only the points since the previous one (a few MB here): the bytes of polls add up to
      // the threshold, so a collection comes within a few polls, and never more than one per poll (not one per answer).
      let polls = 0;
      while (Atomics.load(calls, 0) === first && polls < 6) {
        const before = Atomics.load(calls, 0);
        await h.daemon.scheduler.pollAllOnce();
        await new Promise((r) => setTimeout(r, 300));
        expect(Atomics.load(calls, 0) - before).toBeLessThanOrEqual(1);
        polls++;
      }
      expect(Atomics.load(calls, 0)).toBe(first + 1);
    } finally {
      await h.close();
    }
  }, 240_000);

  it('with --collection.gc-every but no gc exposed (node without --expose-gc), says so in a warning and polls as usual', async () => {
    const h = await startHarness({ mutate: (c) => ({ ...only(['buckets'])(c), gcEveryAnswerBytes: 1024 }), daemon: { collection: 'worker' } });
    try {
      await h.daemon.ready();
      await h.daemon.scheduler.pollAllOnce();
      const warning = h.logs.join('').split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as { level: string; msg: string }).find((l) => l.msg.includes('--collection.gc-every has no effect'));
      expect(warning?.level).toBe('warn');
      expect(await h.metrics()).toContain('cbwatch_collector_success{couchbase_cluster="sim",collector="buckets"} 1');
    } finally {
      await h.close();
    }
  });

  it('answers /-/healthy, /metrics (plain and gzip) and / while the worker thread is blocked in a poll', async () => {
    const blocker = new SharedArrayBuffer(12);
    const flags = new Int32Array(blocker);
    const h = await startHarness({
      mutate: only(['buckets']),
      daemon: { worker: { extraModules: [join(FIXTURES, 'blocking-collector.mjs')], extraData: { blocker } } },
    });
    try {
      await h.daemon.ready();
      expect(await h.metrics()).toContain('couchbase_bucket_');
      // Arm the blocker and poll: the worker thread stops inside the collector, synchronously.
      Atomics.store(flags, 2, 1);
      const polled = h.daemon.scheduler.pollAllOnce();
      await until('the worker to block', () => Atomics.load(flags, 0) === 1);
      const healthy = await raw(`${h.daemon.url}/-/healthy`, {});
      const plain = await raw(`${h.daemon.url}/metrics`, {});
      const gz = await raw(`${h.daemon.url}/metrics`, { 'accept-encoding': 'gzip' });
      const landing = await raw(`${h.daemon.url}/`, {});
      // Every answer came while the worker was still blocked: the HTTP thread never waited for it.
      expect(Atomics.load(flags, 0)).toBe(1);
      expect([healthy.status, plain.status, gz.status, landing.status]).toEqual([200, 200, 200, 200]);
      expect(gz.headers['content-encoding']).toBe('gzip');
      const text = plain.body.toString('utf8');
      expect(text).toContain('couchbase_bucket_');
      expect(text).toContain('cbwatch_collector_success{couchbase_cluster="sim",collector="buckets"} 1');
      expect(gunzipSync(gz.body).toString('utf8')).toBe(text);
      // Let go; the poll completes and its results are served.
      Atomics.store(flags, 1, 1);
      Atomics.notify(flags, 1);
      await polled;
      expect(Atomics.load(flags, 0)).toBe(2);
      expect(await h.metrics()).toContain('cbwatch_collector_success{couchbase_cluster="sim",collector="test_blocker"} 1');
    } finally {
      Atomics.store(flags, 1, 1);
      Atomics.notify(flags, 1);
      await h.close();
    }
  });

  it('a crashed worker is logged, its collectors show as failed with no series, and it is restarted', async () => {
    const crasher = new SharedArrayBuffer(4);
    const flags = new Int32Array(crasher);
    const h = await startHarness({
      mutate: only(['buckets']),
      daemon: { worker: { extraModules: [join(FIXTURES, 'crashing-collector.mjs')], extraData: { crasher }, restartDelayMs: { first: 1500, max: 3000 } } },
    });
    try {
      await h.daemon.ready();
      expect(await h.metrics()).toContain('couchbase_bucket_');
      Atomics.store(flags, 0, 1);
      // The crash comes from a timer, so the poll itself may finish first.
      await h.daemon.scheduler.pollAllOnce().catch(() => undefined);
      await until('the crash to be noticed', () => h.daemon.store.statusList().some((s) => s.ok === false));
      // Before the restart delay is over: failed, and nothing stale served.
      const failed = await h.metrics();
      expect(failed).toContain('cbwatch_collector_success{couchbase_cluster="sim",collector="buckets"} 0');
      expect(failed).not.toContain('couchbase_bucket_');
      expect(failed).toContain('couchbase_up{couchbase_cluster="sim"} 0');
      expect(h.daemon.store.statusList().find((s) => s.collector === 'buckets')?.lastError).toMatch(/collection worker exited/);
      expect((await fetch(`${h.daemon.url}/-/healthy`)).status).toBe(200);
      const logs = h.logs.join('');
      expect(logs).toContain('collection worker failed');
      expect(logs).toContain('deliberate crash');
      // A new worker polls again and the series come back.
      await until('the restarted worker to serve buckets again', async () => (await h.metrics()).includes('cbwatch_collector_success{couchbase_cluster="sim",collector="buckets"} 1'));
      expect(await h.metrics()).toContain('couchbase_bucket_');
      expect(Atomics.load(flags, 0)).toBe(2);
    } finally {
      await h.close();
    }
  });

  it('inline collection (no worker) serves the same families', async () => {
    const h = await startHarness({ mutate: only(['buckets', 'tasks']), daemon: { collection: 'inline' } });
    try {
      await h.daemon.ready();
      await h.daemon.scheduler.pollAllOnce();
      const text = await h.metrics();
      expect(text).toContain('cbwatch_collector_success{couchbase_cluster="sim",collector="buckets"} 1');
      expect(text).toContain('cbwatch_collector_success{couchbase_cluster="sim",collector="tasks"} 1');
      expect(text).toContain('couchbase_bucket_');
      expect(text).toContain('cbwatch_couchbase_requests_total{couchbase_cluster="sim"');
      expect(h.logs.join('')).toContain('"collection":"inline"');
    } finally {
      await h.close();
    }
  });

  it.skipIf(!promtool)('two clusters: one HELP/TYPE per family, each family contiguous, promtool clean, gzip the same text', async () => {
    const h = await startHarness({
      mutate: (c) => {
        const one = only(['buckets', 'nodes', 'tasks', 'bucket_stats'])(c);
        const first = one.clusters[0];
        if (!first) throw new Error('no cluster');
        return { ...one, clusters: [first, { ...first, name: 'sim2' }] };
      },
    });
    try {
      await h.daemon.ready();
      await h.daemon.scheduler.pollAllOnce();
      const text = await h.metrics();
      expect(text).toContain('couchbase_cluster="sim2"');
      expect(text).toContain('cbwatch_couchbase_requests_total{couchbase_cluster="sim2"');
      const seen = new Set<string>();
      let current = '';
      for (const line of text.split('\n')) {
        const m = /^# TYPE (\S+)/.exec(line);
        if (m) {
          const name = m[1] as string;
          expect(seen.has(name), `family ${name} declared twice`).toBe(false);
          seen.add(name);
          current = name;
        } else if (line !== '' && !line.startsWith('#')) {
          const name = /^[^{ ]+/.exec(line)?.[0] ?? '';
          expect(name === current || name.startsWith(`${current}_`), `${name} outside its family block (${current})`).toBe(true);
        }
      }
      execFileSync(promtool as string, ['check', 'metrics'], { input: text, encoding: 'utf8', stdio: 'pipe' });
      const gz = await raw(`${h.daemon.url}/metrics`, { 'accept-encoding': 'gzip' });
      // Two scrapes differ only where the process moves on its own between them (the served-requests counter, the
      // process's CPU and memory): the rest of the text must be the same, gzipped or not.
      const steady = (body: string): string => body.split('\n').filter((l) => !/^(cbwatch_http_requests_served_total|process_|nodejs_)/.test(l)).join('\n');
      expect(steady(gunzipSync(gz.body).toString('utf8'))).toBe(steady(await h.metrics()));
    } finally {
      await h.close();
    }
  });

  it('the worker thread runs with a young generation smaller than V8\'s default, the daemon\'s unless told otherwise', async () => {
    // Node 20 gives a worker V8's 48 MB young generation (16 MB semi-spaces) unless resourceLimits says less;
    // bench/RESULTS.md ("Heap sizes per thread") is where the smaller figure comes from.
    expect(WORKER_RESOURCE_LIMITS.maxYoungGenerationSizeMb).toBeLessThan(48);
    for (const [given, expected] of [
      [undefined, WORKER_RESOURCE_LIMITS.maxYoungGenerationSizeMb],
      [{ maxYoungGenerationSizeMb: 24 }, 24],
    ] as const) {
      const limits = new SharedArrayBuffer(12);
      const out = new Int32Array(limits);
      const h = await startHarness({
        mutate: only([]),
        daemon: { worker: { extraModules: [join(FIXTURES, 'limits-collector.mjs')], extraData: { limits }, ...(given ? { resourceLimits: given } : {}) } },
      });
      try {
        await until('the limits collector to report', () => Atomics.load(out, 2) === 1);
        expect(Atomics.load(out, 0)).toBe(expected);
      } finally {
        await h.close();
      }
    }
  }, 60_000);

  it.runIf(process.platform === 'linux')('the collection thread runs at a lower CPU priority than the HTTP thread (its own nice value)', async () => {
    const niceOf = (task: string): number => {
      // /proc/PID/task/TID/stat: the command may hold spaces, so count fields after its closing parenthesis.
      const stat = readFileSync(`/proc/self/task/${task}/stat`, 'utf8');
      return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
    };
    const threads = (): Map<string, number> => new Map(readdirSync('/proc/self/task').map((t) => [t, niceOf(t)]));
    const base = niceOf(String(process.pid));
    const before = threads();
    const h = await startHarness({ mutate: only(['tasks']), daemon: { collection: 'worker' } });
    try {
      await h.daemon.ready();
      const added = [...threads()].filter(([t]) => !before.has(t));
      expect(added.filter(([, n]) => n === Math.min(19, base + WORKER_NICE))).toHaveLength(1);
      // This thread, which serves HTTP, keeps the process's priority.
      expect(niceOf(String(process.pid))).toBe(base);
    } finally {
      await h.close();
    }
  }, 60_000);
});

