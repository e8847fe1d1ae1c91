/**
 * Issue 13, item 1, end to end: several large answers that are slow to parse (`[[],[],…]`, tens of MB each)
 * arrive at once on one collector's route. The collection worker parses them; the HTTP thread keeps answering
 * /-/healthy and /metrics throughout, the faulted collector shows as failed with a reason while its
 * neighbours stay green, it is back at its next poll once the upstream is, and SIGTERM mid-parse ends the
 * process cleanly. Assertions are on outcomes and ordering, never on how long something took (the one bound
 * below, on SIGTERM, is a liveness bound: "did it exit at all", generous for a busy shared machine).
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Config } from '../../src/config/types.js';
import { PACKAGE_ROOT } from '../../src/paths.js';
import { createSimulator } from '../../src/simulator/index.js';
import type { FaultRule } from '../../src/simulator/types.js';
import { startHarness } from '../helpers/daemon.js';

const STATS_ROUTE = '/pools/default/buckets/:bucket/stats';
/**
 * Per answer: well under the 64 MiB per-answer cap, so each is read in full and parsed. Three of these are
 * about 12 million empty arrays to build: seconds of parsing in the worker, even on a quiet machine, and
 * modest enough for a shared CI box (issue 13's 63 MB case is the chaos bench's job, not a unit test's).
 */
const BYTES = 8 * 1024 * 1024;

async function until(what: string, cond: () => boolean | Promise<boolean>, ms: number): Promise<void> {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/**
 * These answers are parsed only with the value cap out of the way (8 MiB of `[],` is 5.6 million values, over
 * the 4,000,000 default): the first test is about parsing that never starves the HTTP thread.
 */
const NO_VALUE_CAP = 100_000_000;

function only(names: string[], intervalMs: number, maxAnswerValues = NO_VALUE_CAP): (c: Config) => Config {
  return (c) => ({
    ...c,
    maxAnswerValues,
    clusters: c.clusters.map((cl) => ({
      ...cl,
      // Large answers on the envelope routes: the envelopes, not the range API the 7.6 simulator also offers.
      statsSource: 'envelope' as const,
      collectors: Object.fromEntries(
        Object.entries(cl.collectors).map(([k, v]) => [k, { ...v, enabled: names.includes(k), interval: intervalMs, timeout: Math.min(v.timeout, 60_000) }]),
      ) as typeof cl.collectors,
    })),
  });
}

const success = (text: string, collector: string): string | undefined =>
  new RegExp(`^cbwatch_collector_success\\{couchbase_cluster="sim",collector="${collector}"\\} (\\d)$`, 'm').exec(text)?.[1];

/** Ready, and buckets, bucket_stats and nodes all reporting success. */
async function allGreen(h: Awaited<ReturnType<typeof startHarness>>): Promise<void> {
  await h.daemon.ready();
  await until('every collector green', async () => {
    const m = await h.metrics();
    return success(m, 'buckets') === '1' && success(m, 'bucket_stats') === '1' && success(m, 'nodes') === '1';
  }, 60_000);
}

describe('large answers never starve the HTTP thread (worker collection)', () => {
  it.each(['worker', 'inline'] as const)('serves /-/healthy and /metrics while the collection (%s) parses them; the collector fails with a reason, neighbours stay green, recovery at the next poll', async (collection) => {
    const INTERVAL = 4000;
    const h = await startHarness({ mutate: only(['buckets', 'bucket_stats', 'nodes'], INTERVAL), daemon: { collection } });
    try {
      await allGreen(h);
      const buckets = h.sim.ctx.buckets.length;
      expect(buckets).toBeGreaterThanOrEqual(3);
      // Every bucket's stats answer is a large `[[],[],…]` body, all of a poll's in flight at once. The rule stays
      // until the failure shows: one that answered only `buckets` requests could land in the middle of a poll,
      // splitting its answers over two polls that each still had a good bucket (item errors, no failed poll).
      const TIMES = buckets * 1000;
      const rule: FaultRule = { match: STATS_ROUTE, kind: 'oversize', bytes: BYTES, fill: '[]', times: TIMES };
      h.sim.ctx.faults.add(rule);
      // The simulator counts a rule's `times` down as it answers.
      const answered = (): number => TIMES - (h.sim.ctx.faults.rules[0]?.times ?? 0);
      await until('the large answers to be sent', () => answered() >= buckets, 60_000);

      // From here the worker is reading and parsing them. Scrape until the failure shows: every answer in
      // that window must have succeeded, and the HTTP thread must have answered some before the poll ended.
      const outcomes: Array<{ what: string; status: number }> = [];
      let failedText = '';
      for (;;) {
        const healthy = await fetch(`${h.daemon.url}/-/healthy`);
        outcomes.push({ what: 'healthy', status: healthy.status });
        const m = await fetch(`${h.daemon.url}/metrics`);
        const text = await m.text();
        outcomes.push({ what: 'metrics', status: m.status });
        if (success(text, 'bucket_stats') === '0') {
          failedText = text;
          break;
        }
        if (outcomes.length > 20_000) throw new Error('bucket_stats never reported the failure');
        await new Promise((r) => setTimeout(r, 10));
      }
      expect(outcomes.every((o) => o.status === 200)).toBe(true);
      // In a worker, many answers came while the poll was still running (its failure not yet published). With the
      // collection on the HTTP thread a scrape waits out each answer's parse (one per event-loop turn): every scrape
      // is still answered, later.
      if (collection === 'worker') expect(outcomes.length).toBeGreaterThanOrEqual(20);
      // The faulted collector fails; its neighbours, polled in the same thread, stay green with their series.
      expect(success(failedText, 'buckets')).toBe('1');
      expect(success(failedText, 'nodes')).toBe('1');
      expect(failedText).toMatch(/^couchbase_bucket_\w+\{/m);
      // The landing page says why.
      const landing = await (await fetch(`${h.daemon.url}/`)).text();
      const row = landing.slice(landing.indexOf('bucket_stats'));
      expect(landing).toContain('bucket_stats');
      // The reason names the request and what was wrong with the answer (or, on a very slow machine, the
      // poll's deadline, or the overdue watchdog that fails a poll past it before the poll itself ends), never the
      // body itself.
      expect(row).toMatch(/CBW_ERR_SCHEMA: GET http:\/\/[^ ]+\/pools\/default\/buckets\/[^ ]+\/stats.*expected object, received array|timed out|timeout|poll overdue: none has finished for \d+s \(interval 4s, deadline \d+s\)/);
      expect(row).not.toContain('[],[]');

      // The upstream is back. The next poll succeeds: recovery within one interval; the bound here is only "it
      // happens", generous for a shared machine.
      h.sim.ctx.faults.clear();
      await until('bucket_stats to recover', async () => success(await h.metrics(), 'bucket_stats') === '1', INTERVAL * 3 + 60_000);
      const after = await h.metrics();
      expect(success(after, 'buckets')).toBe('1');
      expect(success(after, 'nodes')).toBe('1');
    } finally {
      h.sim.ctx.faults.clear();
      await h.close();
    }
  }, 240_000);

  it('with the value cap (--couchbase.max-answer-values) they are refused while they stream in: too_large with the limit named, neighbours green, back at the next poll', async () => {
    const INTERVAL = 4000;
    const h = await startHarness({ mutate: only(['buckets', 'bucket_stats', 'nodes'], INTERVAL, 200_000) });
    try {
      await allGreen(h);
      const buckets = h.sim.ctx.buckets.length;
      h.sim.ctx.faults.add({ match: STATS_ROUTE, kind: 'oversize', bytes: BYTES, fill: '[]', times: buckets });
      let failedText = '';
      await until('bucket_stats to report the failure', async () => {
        failedText = await h.metrics();
        return success(failedText, 'bucket_stats') === '0';
      }, INTERVAL * 3 + 60_000);
      expect(success(failedText, 'buckets')).toBe('1');
      expect(success(failedText, 'nodes')).toBe('1');
      // Counted as too_large, not as a body that failed its schema after a parse.
      expect(failedText).toMatch(/^cbwatch_couchbase_requests_total\{[^}]*endpoint="\/pools\/default\/buckets\/\{bucket\}\/stats"[^}]*code="too_large"[^}]*\} [1-9]/m);
      const landing = await (await fetch(`${h.daemon.url}/`)).text();
      const row = landing.slice(landing.indexOf('bucket_stats'));
      expect(row).toMatch(/CBW_ERR_TOO_LARGE: GET http:\/\/[^ ]+\/pools\/default\/buckets\/[^ ]+\/stats[^ ]*: response body holds more than 200000 JSON values/);
      expect(row).not.toContain('[],[]');
      await until('the large answers to be sent', () => h.sim.ctx.faults.rules.length === 0, 60_000);
      await until('bucket_stats to recover', async () => success(await h.metrics(), 'bucket_stats') === '1', INTERVAL * 3 + 60_000);
    } finally {
      h.sim.ctx.faults.clear();
      await h.close();
    }
  }, 240_000);

  it('SIGTERM while the worker parses large answers: the real process exits 0, promptly', async () => {
    // A 6.x cluster: bucket statistics come from the envelopes (the route with the large answers), not the range API.
    const sim = createSimulator({ version: '6.6.5' });
    const simUrl = await sim.listen();
    sim.ctx.faults.add({ match: STATS_ROUTE, kind: 'oversize', bytes: BYTES, fill: '[]' });
    const hits = (): number => sim.ctx.faults.rules[0]?.hits ?? 0;
    const child = spawn(
      process.execPath,
      [join(PACKAGE_ROOT, 'bin', 'cbwatch.js'), 'run', '--couchbase.url', simUrl, '--couchbase.username', 'Administrator', '--web.listen-address', '127.0.0.1:0', '--couchbase.max-answer-values', String(NO_VALUE_CAP)],
      { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, CBWATCH_COUCHBASE_PASSWORD: sim.ctx.options.users.admin.password } },
    );
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)));
    try {
      await until('cbwatch to start', () => out.includes('cbwatch started') || child.exitCode !== null, 60_000);
      expect(child.exitCode).toBeNull();
      // Every bucket's large answer has been sent: the worker is reading or parsing them now.
      await until('the large answers to be sent', () => hits() >= sim.ctx.buckets.length || child.exitCode !== null, 60_000);
      expect(child.exitCode).toBeNull();
      const t0 = Date.now();
      child.kill('SIGTERM');
      const code = await Promise.race([exited, new Promise<'hung'>((r) => setTimeout(() => r('hung'), 20_000))]);
      expect(code, out.slice(-2000)).toBe(0);
      // Liveness only: it did exit before the bound above, not a performance figure.
      expect(Date.now() - t0).toBeLessThan(20_000);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
      sim.ctx.faults.clear();
      await sim.close();
    }
  }, 180_000);
});
