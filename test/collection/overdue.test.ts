/**
 * An overdue poll is a failure (issue 25, item 3): where statuses are served, a collector none of whose polls has
 * finished within its interval, backoff and deadline (plus 2 s) shows success 0 with the reason, and its values
 * are withdrawn. Measured on a hand clock standing for the process's monotonic clock.
 */
import { describe, expect, it } from 'vitest';
import { preparePart } from '../../src/metrics/part.js';
import { ReleaseCounter } from '../../src/collection/release.js';
import { SnapshotView } from '../../src/collection/view.js';
import { pendingStatus, statusSet } from '../../src/metrics/store.js';
import type { CollectorStatus } from '../../src/metrics/store.js';

const T0 = 5_000_000;

function polled(cluster: string, collector: string, extra: Partial<CollectorStatus> = {}): CollectorStatus {
  return { ...pendingStatus(cluster, collector), ok: true, lastSuccessAt: 1_700_000_000_000, lastPollAt: 1_700_000_000_000, lastDurationSeconds: 0.1, intervalSeconds: 30, timeoutSeconds: 25, lastPollMonoMs: T0, ...extra };
}

function rig(statuses: CollectorStatus[]) {
  const clock = { now: T0 };
  const view = new SnapshotView(new ReleaseCounter(), () => clock.now);
  const collectors = [...new Set(statuses.map((s) => s.collector))].sort();
  view.apply({ order: collectors, parts: collectors.map((c) => preparePart(c, `couchbase_fake_${c} 1\n`)), statuses });
  const value = (family: string, collector: string, cluster = 'c1'): number | undefined =>
    statusSet(view.statusList())
      .all(family)
      .find((x) => x.labels.collector === collector && x.labels.couchbase_cluster === cluster)?.value;
  return { clock, view, value };
}

describe('overdue polls', () => {
  it('30 s interval, 25 s deadline: fine at 57 s after the last poll, a failure with its reason just after', () => {
    const { clock, view, value } = rig([polled('c1', 'buckets')]);
    clock.now = T0 + 57_000; // 30 + 25 + 2 s of grace
    const v0 = view.statusVersion;
    expect(view.statusList()[0]?.ok).toBe(true);
    expect(value('cbwatch_collector_success', 'buckets')).toBe(1);
    expect(value('cbwatch_collector_interval_seconds', 'buckets')).toBe(30);
    expect(view.parts().map((p) => p.name)).toEqual(['buckets']);
    expect(view.statusVersion).toBe(v0);

    clock.now = T0 + 57_001;
    const st = view.statusList()[0];
    expect(st?.ok).toBe(false);
    expect(st?.lastError).toBe('poll overdue: none has finished for 57s (interval 30s, deadline 25s); the values of the last poll are withdrawn');
    expect(value('cbwatch_collector_success', 'buckets')).toBe(0);
    // The last success stays what it was (wall-clock data): the alert measures intervals from it.
    expect(value('cbwatch_collector_last_success_timestamp_seconds', 'buckets')).toBe(1_700_000_000);
    expect(view.parts()).toEqual([]);
    // The status part must be rendered again: the version moved although the collector side sent nothing.
    expect(view.statusVersion).toBeGreaterThan(v0);
  });

  it('a poll that finishes again clears it', () => {
    const { clock, view, value } = rig([polled('c1', 'buckets')]);
    clock.now = T0 + 120_000;
    expect(value('cbwatch_collector_success', 'buckets')).toBe(0);
    view.apply({ order: ['buckets'], parts: [preparePart('buckets', 'couchbase_fake_buckets 2\n')], statuses: [polled('c1', 'buckets', { lastPollMonoMs: T0 + 119_000 })] });
    expect(value('cbwatch_collector_success', 'buckets')).toBe(1);
    expect(view.parts().map((p) => p.name)).toEqual(['buckets']);
  });

  it('the backoff of a collector whose polls time out extends the allowance', () => {
    const { clock, view } = rig([polled('c1', 'buckets', { ok: false, lastError: 'deadline', backoffSeconds: 60 })]);
    clock.now = T0 + 117_000; // 30 + 60 + 25 + 2
    expect(view.statusList()[0]?.lastError).toBe('deadline');
    clock.now = T0 + 117_001;
    expect(view.statusList()[0]?.overdue).toBe(true);
  });

  it('one overdue cluster fails alone; the part it shares with a cluster that polls stays', () => {
    const { clock, view, value } = rig([polled('c1', 'buckets'), polled('c2', 'buckets', { lastPollMonoMs: T0 + 50_000 }), polled('c1', 'nodes', { intervalSeconds: 300, timeoutSeconds: 120 })]);
    clock.now = T0 + 60_000;
    expect(value('cbwatch_collector_success', 'buckets', 'c1')).toBe(0);
    expect(value('cbwatch_collector_success', 'buckets', 'c2')).toBe(1);
    expect(value('cbwatch_collector_success', 'nodes', 'c1')).toBe(1);
    expect(view.parts().map((p) => p.name)).toEqual(['buckets', 'nodes']);
  });

  it('a first poll that never finishes is a failure too', () => {
    const { clock, view } = rig([{ ...pendingStatus('c1', 'buckets'), intervalSeconds: 30, timeoutSeconds: 25, lastPollMonoMs: T0 }]);
    clock.now = T0 + 30_000;
    expect(view.statusList()[0]?.ok).toBeUndefined();
    clock.now = T0 + 58_000;
    expect(view.statusList()[0]?.ok).toBe(false);
  });
});
