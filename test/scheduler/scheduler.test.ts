import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { Collector } from '../../src/collectors/types.js';
import { defaultClusterConfig, resolveCollectors } from '../../src/config/defaults.js';
import type { CouchbaseClient } from '../../src/couchbase/client.js';
import { defineFamily } from '../../src/metrics/family.js';
import { TooLargeError } from '../../src/errors.js';
import { SnapshotStore } from '../../src/metrics/store.js';
import { Scheduler } from '../../src/scheduler/index.js';
import { fakeClient } from '../helpers/collect.js';
import { fakeCollector, untilTrue as until } from '../helpers/scheduler.js';

const fam = defineFamily('buckets', 'couchbase_fake_value', 'gauge', 'A fake value.', ['n']);

/** A collector whose behaviour the test scripts: each poll pops the next action. */
function scripted(name: 'buckets' | 'nodes', actions: Array<'ok' | 'fail' | 'slow'>, log: string[]): Collector {
  let i = 0;
  let running = 0;
  return {
    name,
    defaultInterval: 1000,
    families: [fam],
    role: 'Read-Only Admin',
    description: 'test',
    async collect(ctx) {
      running++;
      if (running > 1) log.push('OVERLAP');
      const action = actions[Math.min(i, actions.length - 1)];
      i++;
      log.push(`${name}:${action}`);
      try {
        await ctx.client.getJson('/pools/default', {}, z.looseObject({}));
        if (action === 'slow') await new Promise((r) => setTimeout(r, 2500));
        if (action === 'fail') throw new Error('scripted failure');
        ctx.out.add(fam, { n: String(i) }, i);
      } finally {
        running--;
      }
    },
  } as Collector;
}

function setup(collectors: Collector[], interval = 1000, now?: () => number) {
  const raw = resolveCollectors();
  for (const k of Object.keys(raw) as Array<keyof typeof raw>) raw[k].enabled = collectors.some((c) => c.name === k);
  for (const c of collectors) Object.assign(raw[c.name], { interval, timeout: 5000 });
  const cluster = defaultClusterConfig({ url: 'http://cb.test:8091', name: 'c1', collectors: raw });
  const store = new SnapshotStore();
  const clients = new Map<string, CouchbaseClient>([['c1', fakeClient({ '/pools/default': {} })]]);
  const scheduler = new Scheduler({ clusters: [cluster], clients, collectors, store, log: pino({ level: 'silent' }), maxJitterMs: 10, ...(now ? { now } : {}) });
  return { store, scheduler };
}

let stopMe: Scheduler | undefined;
afterEach(async () => {
  await stopMe?.stop();
  stopMe = undefined;
});

describe('scheduler', () => {
  it('polls every collector at start and becomes ready after the first polls, whatever their outcome', async () => {
    const log: string[] = [];
    const { store, scheduler } = setup([scripted('buckets', ['ok'], log), scripted('nodes', ['fail'], log)], 60_000);
    stopMe = scheduler;
    expect(store.allPolledOnce()).toBe(false);
    scheduler.start();
    await until(() => store.allPolledOnce());
    const st = Object.fromEntries(store.statusList().map((s) => [s.collector, s]));
    expect(st.buckets?.ok).toBe(true);
    expect(st.nodes?.ok).toBe(false);
    expect(st.nodes?.lastError).toContain('scripted failure');
    expect(log.sort()).toEqual(['buckets:ok', 'nodes:fail']);
  });

  it('polls again at its interval and never overlaps itself', async () => {
    const log: string[] = [];
    const { store, scheduler } = setup([scripted('buckets', ['slow', 'ok', 'ok'], log)], 1000);
    stopMe = scheduler;
    scheduler.start();
    await until(() => log.filter((l) => l === 'buckets:ok').length >= 2, 15_000);
    expect(log).not.toContain('OVERLAP');
    expect(store.statusList()[0]?.ok).toBe(true);
  });

  it('a failed poll drops the series of the previous success', async () => {
    const log: string[] = [];
    const { store, scheduler } = setup([scripted('buckets', ['ok', 'fail'], log)], 1000);
    stopMe = scheduler;
    scheduler.start();
    await until(() => store.statusList()[0]?.ok === true);
    expect(store.labelledSets().some((s) => s.set.all('couchbase_fake_value').length === 1)).toBe(true);
    await until(() => store.statusList()[0]?.ok === false, 15_000);
    expect(store.labelledSets().some((s) => s.set.all('couchbase_fake_value').length > 0)).toBe(false);
    // The last success time survives the failure: staleness stays visible.
    expect(store.statusList()[0]?.lastSuccessAt).toBeGreaterThan(0);
  });

  it('keeps polling at its interval when the wall clock steps back 60 s or 1 h, or forward 1 h', async () => {
    // The wall clock as the scheduler's `now` sees it: stepped by hand, as NTP or a restored VM would step it.
    // Due times must not follow it (before the fix a step back stopped every poll for the size of the step).
    const wall = { offset: 0 };
    const log: string[] = [];
    const { store, scheduler } = setup([scripted('buckets', ['ok'], log)], 1000, () => Date.now() + wall.offset);
    stopMe = scheduler;
    scheduler.start();
    await until(() => log.length >= 1);
    for (const step of [-60_000, -3_600_000, +3_600_000]) {
      wall.offset += step;
      const seen = log.length;
      await until(() => log.length >= seen + 2, 10_000);
    }
    // Wall-clock time is still the data: the last success carries the stepped clock (back 1 h, forward 1 h).
    const last = store.statusList()[0]?.lastSuccessAt ?? 0;
    expect(Math.abs(last - (Date.now() + wall.offset))).toBeLessThan(30_000);
    expect(wall.offset).toBe(-60_000);
  });

  it('skips disabled collectors', () => {
    const { scheduler } = setup([], 1000);
    expect(scheduler.jobCount).toBe(0);
  });
});

/**
 * One `buckets` job polling `collect` every 60 s with a 100 ms deadline, on a hand clock (`clock.now`), and the
 * backoff it reports.
 */
function backoffRig(collect: Collector['collect']) {
  const c = fakeCollector('buckets', [fam], collect, 1000);
  const raw = resolveCollectors();
  for (const k of Object.keys(raw) as Array<keyof typeof raw>) raw[k].enabled = k === 'buckets';
  Object.assign(raw.buckets, { interval: 60_000, timeout: 100 });
  const cluster = defaultClusterConfig({ url: 'http://cb.test:8091', name: 'c1', collectors: raw });
  const store = new SnapshotStore();
  const clock = { now: 1_000_000 };
  const scheduler = new Scheduler({ clusters: [cluster], clients: new Map([['c1', fakeClient({})]]), collectors: [c], store, log: pino({ level: 'silent' }), now: () => clock.now, clock: () => clock.now });
  const backoff = (): number | undefined =>
    store
      .labelledSets()
      .flatMap((x) => x.set.all('cbwatch_collector_backoff_seconds'))
      .map((x) => x.value)[0];
  return { store, scheduler, clock, backoff };
}

describe('backoff of a collector whose polls never finish', () => {
  it('doubles the gap per timeout up to 5 intervals, shows it as a metric, and resets on success', async () => {
    const { backoffGap } = await import('../../src/scheduler/index.js');
    expect([0, 1, 2, 3, 9].map((n) => backoffGap(1000, n))).toEqual([1000, 2000, 4000, 5000, 5000]);

    let hang = true;
    const { store, scheduler, clock, backoff } = backoffRig(async (ctx) => {
      if (hang) await new Promise((_r, reject) => ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason)));
      ctx.out.add(fam, { n: '1' }, 1);
    });

    await scheduler.pollAllOnce();
    expect(store.statusList()[0]?.ok).toBe(false);
    expect(backoff()).toBe(60);
    expect(scheduler.nextPollAt('c1', 'buckets')).toBe(clock.now + 120_000);
    for (let i = 0; i < 3; i++) await scheduler.pollAllOnce();
    expect(backoff()).toBe(240);
    expect(scheduler.nextPollAt('c1', 'buckets')).toBe(clock.now + 300_000);
    hang = false;
    clock.now += 300_000;
    await scheduler.pollAllOnce();
    expect(store.statusList()[0]?.ok).toBe(true);
    expect(backoff()).toBe(0);
  });
});

describe('backoff counts deadlines only', () => {
  it('a poll failing fast on a refused answer (too_large) resets the backoff: the next poll is one interval later', async () => {
    let mode: 'hang' | 'too_large' | 'ok' = 'hang';
    const { store, scheduler, clock, backoff } = backoffRig(async (ctx) => {
      if (mode === 'hang') await new Promise((_r, reject) => ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason)));
      if (mode === 'too_large') throw new TooLargeError({ method: 'GET', url: 'http://cb.test:8091/pools/default/buckets', endpoint: '/pools/default/buckets' }, 4_000_000, 'values');
      ctx.out.add(fam, { n: '1' }, 1);
    });

    // Two deadlines in a row: backed off.
    await scheduler.pollAllOnce();
    await scheduler.pollAllOnce();
    expect(backoff()).toBe(180);
    // The cluster answers again, with an answer the client refuses at once: a failure, but no deadline.
    mode = 'too_large';
    clock.now += 240_000;
    const before = scheduler.nextPollAt('c1', 'buckets') ?? 0;
    await scheduler.pollAllOnce();
    expect(store.statusList()[0]?.ok).toBe(false);
    expect(backoff()).toBe(0);
    // No gap beyond the interval was added for this poll.
    expect(scheduler.nextPollAt('c1', 'buckets')).toBe(before);
    for (let i = 0; i < 3; i++) await scheduler.pollAllOnce();
    expect(backoff()).toBe(0);
    mode = 'ok';
    await scheduler.pollAllOnce();
    expect(store.statusList()[0]?.ok).toBe(true);
  });
});

describe('Scheduler.busy', () => {
  it('is true while a poll runs and false once every poll is over', async () => {
    let release: (() => void) | undefined;
    const c = fakeCollector('buckets', [fam], async (ctx) => {
      await new Promise<void>((r) => (release = r));
      ctx.out.add(fam, { n: '1' }, 1);
    });
    const { scheduler } = setup([c]);
    stopMe = scheduler;
    expect(scheduler.busy()).toBe(false);
    const all = scheduler.pollAllOnce();
    expect(scheduler.busy()).toBe(true);
    await until(() => release !== undefined);
    expect(scheduler.busy()).toBe(true);
    release?.();
    await all;
    expect(scheduler.busy()).toBe(false);
  });
});
