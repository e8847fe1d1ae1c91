/**
 * Many clusters in one process: every configured (cluster, collector) has its `cbwatch_collector_*` series from the
 * first scrape on. Before its first poll has finished, what is true is shown (pending 1, its interval, overdue 0, no
 * backoff) and what is not known yet (success, duration, series, last success) is absent, never a guessed number.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { CollectorName } from '../../src/config/schema.js';
import { defaultClusterConfig } from '../../src/config/defaults.js';
import { SnapshotView } from '../../src/collection/view.js';
import { pendingStatus, statusSet } from '../../src/metrics/store.js';
import type { CollectorStatus } from '../../src/metrics/store.js';
import { startHarness } from '../helpers/daemon.js';
import type { Harness } from '../helpers/daemon.js';

/** value by `cluster/collector` of one family's unlabelled-but-for-those series in an exposition. */
function series(text: string, family: string): Map<string, number> {
  const out = new Map<string, number>();
  const re = new RegExp(`^${family}\\{([^}]*)\\} (\\S+)$`, 'gm');
  for (const m of text.matchAll(re)) {
    const labels = Object.fromEntries([...(m[1] ?? '').matchAll(/(\w+)="([^"]*)"/g)].map((l) => [l[1], l[2]]));
    out.set(`${labels.couchbase_cluster}/${labels.collector}`, Number(m[2]));
  }
  return out;
}

describe('collector status before the first poll', () => {
  it('a pending collector shows that it is pending and nothing it does not know', () => {
    const view = new SnapshotView();
    const pending: CollectorStatus[] = [{ ...pendingStatus('c1', 'buckets'), intervalSeconds: 30, timeoutSeconds: 25 }, pendingStatus('c2', 'nodes')];
    view.seed(pending);
    const set = statusSet(view.statusList());
    const values = (family: string): string[] => set.all(family).map((x) => `${x.labels.couchbase_cluster}/${x.labels.collector}=${x.value}`);
    expect(values('cbwatch_collector_first_poll_pending')).toEqual(['c1/buckets=1', 'c2/nodes=1']);
    expect(values('cbwatch_collector_backoff_seconds')).toEqual(['c1/buckets=0', 'c2/nodes=0']);
    expect(values('cbwatch_collector_interval_seconds')).toEqual(['c1/buckets=30']);
    for (const family of ['cbwatch_collector_success', 'cbwatch_collector_duration_seconds', 'cbwatch_collector_last_success_timestamp_seconds', 'cbwatch_collector_series', 'cbwatch_collector_applicable']) {
      expect(values(family), family).toEqual([]);
    }
  });

  it('a finished first poll turns pending to 0, a failed one too', () => {
    const done: CollectorStatus = { ...pendingStatus('c1', 'buckets'), ok: false, lastError: 'boom', lastPollAt: 1_700_000_000_000, lastDurationSeconds: 0.2 };
    const set = statusSet([done]);
    expect(set.all('cbwatch_collector_first_poll_pending').map((x) => x.value)).toEqual([0]);
    expect(set.all('cbwatch_collector_success').map((x) => x.value)).toEqual([0]);
  });
});

describe('many clusters against the simulator', () => {
  let h: Harness | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  it('every cluster has its collector series from the first scrape, success only once it is true', async () => {
    const CLUSTERS = 300;
    const ON: CollectorName[] = ['buckets', 'nodes', 'autofailover'];
    h = await startHarness({
      sim: { latencyMs: 200 },
      mutate: (c) => {
        const first = c.clusters[0];
        if (!first) throw new Error('no cluster');
        const collectors = structuredClone(first.collectors);
        for (const [name, o] of Object.entries(collectors)) o.enabled = ON.includes(name as CollectorName);
        const clusters = Array.from({ length: CLUSTERS }, (_, i) => defaultClusterConfig({ ...first, name: `c${String(i).padStart(3, '0')}`, collectors }));
        return { ...c, clusters, log: { level: 'silent', format: 'json' } };
      },
    });
    const expected = Array.from({ length: CLUSTERS }, (_, i) => ON.map((c) => `c${String(i).padStart(3, '0')}/${c}`)).flat().sort();

    const first = await h.metrics();
    const pending = series(first, 'cbwatch_collector_first_poll_pending');
    expect([...pending.keys()].sort()).toEqual(expected);
    const success = series(first, 'cbwatch_collector_success');
    for (const key of expected) {
      // Pending: no success yet (neither 0 nor 1 would be true); polled: its outcome.
      if (pending.get(key) === 1) expect(success.has(key), key).toBe(false);
      else expect(success.get(key), key).toBe(1);
    }

    await h.daemon.ready();
    const later = await h.metrics();
    expect([...series(later, 'cbwatch_collector_first_poll_pending').entries()].filter(([, v]) => v !== 0)).toEqual([]);
    const ok = series(later, 'cbwatch_collector_success');
    expect([...ok.keys()].sort()).toEqual(expected);
    // Each outcome is what its poll found (a poll can time out on a loaded machine: then 0, and no last success).
    const last = series(later, 'cbwatch_collector_last_success_timestamp_seconds');
    for (const [key, v] of ok) {
      expect([0, 1], key).toContain(v);
      if (v === 1) expect(last.has(key), key).toBe(true);
    }
  }, 240_000);
});
