/**
 * A collector on a cron schedule through the real daemon (collection worker → HTTP thread) against the simulator:
 * it polls once at start, and /metrics carries its next slot (the hour's next :00, in UTC, from the wall clock at
 * that poll) and an overdue gauge of 0, with no interval family for it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness } from '../helpers/daemon.js';
import type { Harness } from '../helpers/daemon.js';

let h: Harness | undefined;
beforeAll(async () => {
  h = await startHarness({
    mutate: (c) => ({
      ...c,
      clusters: c.clusters.map((cl) => ({ ...cl, collectors: { ...cl.collectors, backup: { ...cl.collectors.backup, schedule: '0 * * * *', timezone: 'UTC' } } })),
    }),
  });
  await h.daemon.ready();
}, 60_000);
afterAll(async () => {
  await h?.close();
});

const value = (text: string, family: string, collector: string): number | undefined => {
  const line = text.split('\n').find((l) => l.startsWith(`${family}{`) && l.includes(`collector="${collector}"`));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
};

describe('a scheduled collector in the daemon', () => {
  it('polled at start; its next slot and overdue state on /metrics', async () => {
    const text = await (h as Harness).metrics();
    expect(value(text, 'cbwatch_collector_success', 'backup')).toBe(1);
    const next = value(text, 'cbwatch_collector_next_slot_timestamp_seconds', 'backup') as number;
    // The first whole hour after now (or after the start poll, a moment ago).
    expect(next % 3600).toBe(0);
    expect(next * 1000).toBeGreaterThan(Date.now() - 60_000);
    expect(next * 1000).toBeLessThanOrEqual(Date.now() + 3600_000);
    expect(value(text, 'cbwatch_collector_overdue', 'backup')).toBe(0);
    expect(value(text, 'cbwatch_collector_interval_seconds', 'backup')).toBeUndefined();
    // An interval collector beside it: interval, no slot.
    expect(value(text, 'cbwatch_collector_interval_seconds', 'nodes')).toBe(60);
    expect(value(text, 'cbwatch_collector_next_slot_timestamp_seconds', 'nodes')).toBeUndefined();
    expect(value(text, 'cbwatch_collector_overdue', 'nodes')).toBe(0);
  });
});
