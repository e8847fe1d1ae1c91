/**
 * Collectors polled at cron slots (issue 38) under a stepped clock. Fake timers drive the scheduler's ticker and
 * the system wall clock node-cron reads; the scheduler's monotonic clock is the fake time minus every step the
 * test gave the wall clock, so the two can be set apart as an NTP step or a VM resumed from suspend sets them.
 * The overdue verdicts are the HTTP thread's (markOverdue on the store's statuses).
 */
import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { defaultClusterConfig, resolveCollectors } from '../../src/config/defaults.js';
import type { CouchbaseClient } from '../../src/couchbase/client.js';
import { defineFamily } from '../../src/metrics/family.js';
import { markOverdue, SnapshotStore, statusSet } from '../../src/metrics/store.js';
import { Scheduler } from '../../src/scheduler/index.js';
import { fakeClient } from '../helpers/collect.js';
import { fakeCollector } from '../helpers/scheduler.js';

const fam = defineFamily('backup', 'couchbase_fake_backup_value', 'gauge', 'A fake value.', []);
const START = Date.parse('2026-11-28T12:00:00Z');

let step = 0;
/** The monotonic clock: fake time that wall-clock steps do not move. */
const mono = (): number => Date.now() - step;
/** Move the wall clock by `ms` without time passing (a clock step; a resume from suspend). */
function stepWall(ms: number): void {
  step += ms;
  vi.setSystemTime(Date.now() + ms);
}

let scheduler: Scheduler | undefined;
beforeEach(() => {
  step = 0;
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date'] });
  vi.setSystemTime(START);
});
afterEach(async () => {
  await scheduler?.stop();
  scheduler = undefined;
  vi.useRealTimers();
});

function setup(schedule: string, timezone?: string) {
  const polls: string[] = [];
  const collector = fakeCollector('backup', [fam], (ctx) => {
    polls.push(new Date(Date.now()).toISOString());
    ctx.out.add(fam, {}, polls.length);
    return Promise.resolve();
  });
  const raw = resolveCollectors();
  for (const k of Object.keys(raw) as Array<keyof typeof raw>) raw[k].enabled = k === 'backup';
  Object.assign(raw.backup, { schedule, timeout: 30_000, ...(timezone === undefined ? {} : { timezone }) });
  const cluster = defaultClusterConfig({ url: 'http://cb.test:8091', name: 'c1', collectors: raw });
  const store = new SnapshotStore();
  const clients = new Map<string, CouchbaseClient>([['c1', fakeClient({})]]);
  scheduler = new Scheduler({ clusters: [cluster], clients, collectors: [collector], store, log: pino({ level: 'silent' }), clock: mono, maxJitterMs: 1 });
  const status = () => markOverdue(store.statusList(), mono(), Date.now())[0];
  const nextSlot = () => (store.statusList()[0]?.nextSlotAt === undefined ? undefined : new Date(store.statusList()[0]?.nextSlotAt as number).toISOString());
  return { polls, store, scheduler, status, nextSlot };
}

describe('a collector on a cron schedule', () => {
  it('polls once at start, then at each slot of its zone; its next slot is exported', async () => {
    const { polls, store, scheduler: s, status, nextSlot } = setup('0 3 * * *', 'Europe/Paris');
    s.start();
    await vi.advanceTimersByTimeAsync(1000);
    expect(polls).toEqual(['2026-11-28T12:00:00.000Z']);
    // 03:00 in Paris (UTC+1) is 02:00 UTC.
    expect(nextSlot()).toBe('2026-11-29T02:00:00.000Z');
    const exported = statusSet(store.statusList()).all('cbwatch_collector_next_slot_timestamp_seconds');
    expect(exported.map((x) => x.value)).toEqual([Date.parse('2026-11-29T02:00:00Z') / 1000]);
    expect(statusSet(store.statusList()).all('cbwatch_collector_interval_seconds')).toEqual([]);

    await vi.advanceTimersByTimeAsync(Date.parse('2026-11-29T01:59:58Z') - Date.now());
    expect(polls).toHaveLength(1);
    expect(status()?.overdue).toBeUndefined();
    await vi.advanceTimersByTimeAsync(3000);
    expect(polls).toHaveLength(2);
    expect(polls[1]?.startsWith('2026-11-29T02:00:0')).toBe(true);
    expect(nextSlot()).toBe('2026-11-30T02:00:00.000Z');
  });

  it('a wall clock stepped past the slot (a VM resumed from suspend): overdue at once, polled at the next tick, then fine', async () => {
    const { polls, store, scheduler: s, status, nextSlot } = setup('0 3 * * *', 'UTC');
    s.start();
    await vi.advanceTimersByTimeAsync(1000);
    expect(polls).toHaveLength(1);
    // The VM slept 16 h: the wall clock jumps to 04:00:01 the next day, the monotonic clock did not move.
    stepWall(16 * 3600_000);
    const st = status();
    expect(st?.overdue).toBe(true);
    expect(st?.ok).toBe(false);
    expect(st?.lastError).toMatch(/^poll overdue: the slot at 2026-11-29T03:00:00.000Z \(schedule "0 3 \* \* \*" in UTC\) passed 3601s ago and no poll has finished since \(deadline 30s\)/);
    expect(statusSet(markOverdue(store.statusList(), mono(), Date.now())).all('cbwatch_collector_overdue').map((x) => x.value)).toEqual([1]);
    // The next tick starts the missed slot; once it has finished the collector is fine again.
    await vi.advanceTimersByTimeAsync(1000);
    expect(polls).toHaveLength(2);
    expect(status()?.overdue).toBeUndefined();
    expect(status()?.ok).toBe(true);
    expect(nextSlot()).toBe('2026-11-30T03:00:00.000Z');
    expect(statusSet(markOverdue(store.statusList(), mono(), Date.now())).all('cbwatch_collector_overdue').map((x) => x.value)).toEqual([0]);
  });

  it('a wall clock stepped back cannot hold polls up longer than the slot was away; the slot comes again on the wall clock', async () => {
    const { polls, scheduler: s, status } = setup('0 3 * * *', 'UTC');
    s.start();
    await vi.advanceTimersByTimeAsync(1000);
    // 02:00, then NTP steps the wall clock back two hours (to 00:00).
    await vi.advanceTimersByTimeAsync(Date.parse('2026-11-29T02:00:00Z') - Date.now());
    expect(polls).toHaveLength(1);
    stepWall(-2 * 3600_000);
    // One hour later on the monotonic clock the slot was due: polled then, though the wall clock says 01:00.
    await vi.advanceTimersByTimeAsync(3600_000 + 1000);
    expect(polls).toHaveLength(2);
    expect(status()?.overdue).toBeUndefined();
    // The wall clock's 03:00 is still ahead: it polls again then (a repeated read, never a pause).
    await vi.advanceTimersByTimeAsync(2 * 3600_000);
    expect(polls).toHaveLength(3);
    expect(polls[2]?.startsWith('2026-11-29T03:00:0')).toBe(true);
  });

  it('a scheduler that stops ticking shows overdue once the slot and its deadline have passed', async () => {
    const { polls, store, scheduler: s } = setup('*/5 * * * *', 'UTC');
    s.start();
    await vi.advanceTimersByTimeAsync(1000);
    expect(polls).toHaveLength(1);
    // The collection thread stalls: no tick runs, time goes on. Slot 12:05, deadline 30 s, grace 2 s.
    const slot = Date.parse('2026-11-28T12:05:00Z');
    expect(markOverdue(store.statusList(), mono() + (slot + 32_000 - Date.now()), slot + 32_000)[0]?.overdue).toBeUndefined();
    const late = markOverdue(store.statusList(), mono() + (slot + 32_001 - Date.now()), slot + 32_001)[0];
    expect(late?.overdue).toBe(true);
    expect(late?.series).toBe(0);
  });

  it('a reload from an interval to a schedule and back re-registers the collector with the new timing', async () => {
    const { store, scheduler: s } = setup('0 3 * * *', 'UTC');
    s.start();
    await vi.advanceTimersByTimeAsync(1000);
    const cluster = (options: Record<string, unknown>) => {
      const raw = resolveCollectors();
      for (const k of Object.keys(raw) as Array<keyof typeof raw>) raw[k].enabled = k === 'backup';
      Object.assign(raw.backup, options);
      return defaultClusterConfig({ url: 'http://cb.test:8091', name: 'c1', collectors: raw });
    };
    const clients = new Map<string, CouchbaseClient>([['c1', fakeClient({})]]);
    await s.reconfigure([cluster({ interval: 60_000, timeout: 30_000 })], clients);
    await vi.advanceTimersByTimeAsync(1000);
    expect(store.statusList()[0]).toMatchObject({ intervalSeconds: 60 });
    expect(store.statusList()[0]?.schedule).toBeUndefined();
    expect(store.statusList()[0]?.nextSlotAt).toBeUndefined();
    expect(s.nextSlotAt('c1', 'backup')).toBeUndefined();
    await s.reconfigure([cluster({ schedule: '30 4 * * *', timezone: 'UTC', timeout: 30_000 })], clients);
    await vi.advanceTimersByTimeAsync(1000);
    expect(store.statusList()[0]?.intervalSeconds).toBeUndefined();
    expect(store.statusList()[0]?.schedule).toEqual({ expression: '30 4 * * *', timezone: 'UTC' });
    expect(new Date(s.nextSlotAt('c1', 'backup') as number).toISOString()).toBe('2026-11-29T04:30:00.000Z');
  });
});
