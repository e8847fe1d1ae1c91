/**
 * The overdue rule for a collector on a cron schedule (issue 38), where statuses are served (SnapshotView on the
 * HTTP thread): its planned slot, read on the wall clock and on the monotonic clock, passed by more than its
 * deadline and 2 s with no poll finished since. Hand clocks for both; the slot at 03:00:00 UTC, deadline 30 s.
 */
import { describe, expect, it } from 'vitest';
import { preparePart } from '../../src/metrics/part.js';
import { ReleaseCounter } from '../../src/collection/release.js';
import { SnapshotView } from '../../src/collection/view.js';
import { pendingStatus, statusSet } from '../../src/metrics/store.js';
import type { CollectorStatus } from '../../src/metrics/store.js';

const SLOT = Date.parse('2026-11-29T03:00:00Z');
const MONO_SLOT = 9_000_000;

function rig(extra: Partial<CollectorStatus> = {}) {
  const clocks = { mono: MONO_SLOT - 3600_000, wall: SLOT - 3600_000 };
  const view = new SnapshotView(new ReleaseCounter(), () => clocks.mono, () => clocks.wall);
  const status: CollectorStatus = {
    ...pendingStatus('c1', 'backup'),
    ok: true,
    lastSuccessAt: SLOT - 86_400_000,
    lastPollAt: SLOT - 86_400_000,
    lastDurationSeconds: 0.2,
    timeoutSeconds: 30,
    lastPollMonoMs: MONO_SLOT - 86_400_000,
    schedule: { expression: '0 3 * * *', timezone: 'UTC' },
    nextSlotAt: SLOT,
    nextSlotMonoMs: MONO_SLOT,
    ...extra,
  };
  view.apply({ order: ['backup'], parts: [preparePart('backup', 'couchbase_fake_backup 1\n')], statuses: [status] });
  const value = (family: string): number | undefined => statusSet(view.statusList()).all(family).find((x) => x.labels.collector === 'backup')?.value;
  return { clocks, view, value };
}

describe('overdue: a scheduled collector', () => {
  it('fine up to slot + 30 s + 2 s on both clocks; overdue just after, with the reason, series withdrawn', () => {
    const { clocks, view, value } = rig();
    clocks.mono = MONO_SLOT + 32_000;
    clocks.wall = SLOT + 32_000;
    expect(view.statusList()[0]?.overdue).toBeUndefined();
    expect(value('cbwatch_collector_overdue')).toBe(0);
    expect(value('cbwatch_collector_next_slot_timestamp_seconds')).toBe(SLOT / 1000);
    expect(view.parts().map((p) => p.name)).toEqual(['backup']);

    clocks.mono = MONO_SLOT + 32_001;
    clocks.wall = SLOT + 32_001;
    const st = view.statusList()[0];
    expect(st?.ok).toBe(false);
    expect(st?.lastError).toBe('poll overdue: the slot at 2026-11-29T03:00:00.000Z (schedule "0 3 * * *" in UTC) passed 32s ago and no poll has finished since (deadline 30s); the values of the last poll are withdrawn');
    expect(value('cbwatch_collector_success')).toBe(0);
    expect(value('cbwatch_collector_overdue')).toBe(1);
    expect(view.parts()).toEqual([]);
  });

  it('the wall clock alone past the slot (stepped forward, a VM resumed): overdue', () => {
    const { clocks, view } = rig();
    clocks.wall = SLOT + 3600_000;
    expect(view.statusList()[0]?.overdue).toBe(true);
  });

  it('the monotonic clock alone past the slot (the wall clock stepped back): overdue too', () => {
    const { clocks, view } = rig();
    clocks.mono = MONO_SLOT + 60_000;
    clocks.wall = SLOT - 3600_000;
    expect(view.statusList()[0]?.overdue).toBe(true);
  });

  it('no slot planned yet (its first poll still to come): never overdue by this rule', () => {
    const { clocks, view } = rig({ nextSlotAt: undefined as never, nextSlotMonoMs: undefined as never });
    clocks.mono = MONO_SLOT + 10 * 86_400_000;
    clocks.wall = SLOT + 10 * 86_400_000;
    expect(view.statusList()[0]?.overdue).toBeUndefined();
  });
});
