/**
 * An overdue poll shows on /metrics of the real daemon (issue 25, item 3): while the collection worker's thread
 * is stalled, the HTTP thread marks each collector whose polls stopped coming as failed (success 0, the reason
 * on the landing page and in the status list) and withdraws its series; they come back with its next poll.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Config } from '../../src/config/types.js';
import { PACKAGE_ROOT } from '../../src/paths.js';
import { startHarness } from '../helpers/daemon.js';

const FIXTURES = join(PACKAGE_ROOT, 'test', 'fixtures', 'collection');

async function until(what: string, cond: () => boolean | Promise<boolean>, ms = 30_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The buckets collector every second (deadline 1 s) and the test's blocker, nothing else. */
function onlyBuckets(c: Config): Config {
  return {
    ...c,
    clusters: c.clusters.map((cl) => ({
      ...cl,
      collectors: Object.fromEntries(Object.entries(cl.collectors).map(([k, o]) => [k, k === 'buckets' ? { ...o, enabled: true, interval: 1000, timeout: 1000 } : { ...o, enabled: false }])) as Config['clusters'][number]['collectors'],
    })),
  };
}

const SUCCESS = 'cbwatch_collector_success{couchbase_cluster="sim",collector="buckets"}';

describe('an overdue collector on the real daemon', () => {
  it('is a failure with its reason while the collection thread is stalled, and recovers with the next poll', async () => {
    const blocker = new SharedArrayBuffer(12);
    const flags = new Int32Array(blocker);
    const h = await startHarness({ mutate: onlyBuckets, daemon: { worker: { extraModules: [join(FIXTURES, 'blocking-collector.mjs')], extraData: { blocker } } } });
    try {
      await h.daemon.ready();
      await until('buckets polled', async () => (await h.metrics()).includes(`${SUCCESS} 1`));
      expect(await h.metrics()).toContain('cbwatch_collector_interval_seconds{couchbase_cluster="sim",collector="buckets"} 1\n');
      // Stall the worker thread (synchronously, inside the blocker's poll): no poll of buckets can finish.
      Atomics.store(flags, 2, 1);
      const polled = h.daemon.scheduler.pollAllOnce();
      await until('the worker to block', () => Atomics.load(flags, 0) === 1);
      // Before the fix: success stayed 1 and the last values stayed served for as long as the stall lasted.
      await until('buckets overdue', async () => (await h.metrics()).includes(`${SUCCESS} 0`));
      const text = await h.metrics();
      expect(text).not.toMatch(/^couchbase_bucket_info\{/m);
      const st = h.daemon.store.statusList().find((s) => s.collector === 'buckets');
      expect(st?.lastError).toMatch(/^poll overdue: none has finished for \d+s \(interval 1s, deadline 1s\)/);
      expect(Atomics.load(flags, 0)).toBe(1);
      Atomics.store(flags, 2, 0);
      Atomics.store(flags, 1, 1);
      Atomics.notify(flags, 1);
      await polled;
      await until('buckets back', async () => (await h.metrics()).includes(`${SUCCESS} 1`));
      expect(await h.metrics()).toMatch(/^couchbase_bucket_info\{/m);
    } finally {
      Atomics.store(flags, 1, 1);
      Atomics.notify(flags, 1);
      await h.close();
    }
  }, 60_000);
});
