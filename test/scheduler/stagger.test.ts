/**
 * First polls at start: a cluster's heavy collectors (bucket_stats, xdcr, collections) run one at a time, each
 * starting when the previous first poll ended or after the stagger bound; the light ones start at once. Each
 * poll here waits until the test releases it, so the order is decided by the scheduler, not by timing.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Collector } from '../../src/collectors/types.js';
import type { CollectorName } from '../../src/config/schema.js';
import { defaultClusterConfig, resolveCollectors } from '../../src/config/defaults.js';
import type { CouchbaseClient } from '../../src/couchbase/client.js';
import { defineFamily } from '../../src/metrics/family.js';
import { SnapshotStore } from '../../src/metrics/store.js';
import { Scheduler } from '../../src/scheduler/index.js';
import { SILENT_LOG } from '../../src/log-core.js';
import { fakeClient } from '../helpers/collect.js';
import { fakeCollector, untilTrue } from '../helpers/scheduler.js';

const fam = defineFamily('buckets', 'couchbase_fake_value', 'gauge', 'A fake value.');

interface Gate {
  readonly started: string[];
  readonly running: Set<string>;
  release(name: string): void;
}

function gated(names: CollectorName[]): { collectors: Collector[]; gate: Gate } {
  const waiting = new Map<string, () => void>();
  const gate: Gate = {
    started: [],
    running: new Set(),
    release: (name) => waiting.get(name)?.(),
  };
  const collectors = names.map((name) =>
    fakeCollector(name, [fam], async (ctx) => {
      gate.started.push(name);
      gate.running.add(name);
      await new Promise<void>((resolve) => {
        waiting.set(name, resolve);
        ctx.signal.addEventListener('abort', () => resolve());
      });
      gate.running.delete(name);
      ctx.out.add(fam, {}, 1);
    }),
  );
  return { collectors, gate };
}

function setup(names: CollectorName[], firstPollStaggerMs?: number) {
  const { collectors, gate } = gated(names);
  const raw = resolveCollectors();
  for (const k of Object.keys(raw) as Array<keyof typeof raw>) raw[k].enabled = names.includes(k);
  for (const n of names) Object.assign(raw[n], { interval: 600_000, timeout: 300_000 });
  const cluster = defaultClusterConfig({ url: 'http://cb.test:8091', name: 'c1', collectors: raw });
  const store = new SnapshotStore();
  const clients = new Map<string, CouchbaseClient>([['c1', fakeClient({ '/pools/default/nodeServices': {} })]]);
  const scheduler = new Scheduler({ clusters: [cluster], clients, collectors, store, log: SILENT_LOG, maxJitterMs: 1, ...(firstPollStaggerMs === undefined ? {} : { firstPollStaggerMs }) });
  return { store, scheduler, gate };
}

const until = (cond: () => boolean): Promise<void> => untilTrue(cond, 10_000, 10);

let stopMe: Scheduler | undefined;
afterEach(async () => {
  await stopMe?.stop();
  stopMe = undefined;
});

describe('first polls at start', () => {
  it('light collectors start at once; heavy ones one at a time, the next when the previous ended', async () => {
    // A bound no poll here reaches: only the end of a poll lets the next heavy one start.
    const { store, scheduler, gate } = setup(['nodes', 'buckets', 'bucket_stats', 'xdcr', 'collections'], 3_600_000);
    stopMe = scheduler;
    scheduler.start();
    await until(() => gate.running.has('nodes') && gate.running.has('buckets') && gate.running.has('bucket_stats'));
    expect([...gate.running].sort()).toEqual(['bucket_stats', 'buckets', 'nodes']);
    gate.release('nodes');
    gate.release('buckets');
    await until(() => !gate.running.has('nodes') && !gate.running.has('buckets'));
    // The light collectors' end does not start a heavy one.
    expect(gate.started).not.toContain('xdcr');
    gate.release('bucket_stats');
    await until(() => gate.running.has('xdcr'));
    expect([...gate.running]).toEqual(['xdcr']);
    expect(store.allPolledOnce()).toBe(false);
    gate.release('xdcr');
    await until(() => gate.running.has('collections'));
    expect([...gate.running]).toEqual(['collections']);
    gate.release('collections');
    await until(() => store.allPolledOnce());
    expect(gate.started.filter((n) => ['bucket_stats', 'xdcr', 'collections'].includes(n))).toEqual(['bucket_stats', 'xdcr', 'collections']);
  });

  it('a first poll that does not end holds the next one back only up to the bound', async () => {
    const { store, scheduler, gate } = setup(['bucket_stats', 'xdcr', 'collections'], 20);
    stopMe = scheduler;
    scheduler.start();
    // None is released: each next one starts after the bound, all three end up running together.
    await until(() => gate.running.size === 3);
    expect(gate.started).toEqual(['bucket_stats', 'xdcr', 'collections']);
    for (const n of ['bucket_stats', 'xdcr', 'collections']) gate.release(n);
    await until(() => store.allPolledOnce());
  });

  it('the regular schedule of a staggered collector counts from its own first poll', async () => {
    const { scheduler, gate } = setup(['bucket_stats', 'xdcr'], 3_600_000);
    stopMe = scheduler;
    scheduler.start();
    await until(() => gate.running.has('bucket_stats'));
    expect(scheduler.nextPollAt('c1', 'xdcr')).toBe(Number.POSITIVE_INFINITY);
    gate.release('bucket_stats');
    await until(() => gate.running.has('xdcr'));
    expect(scheduler.nextPollAt('c1', 'xdcr')).toBeGreaterThanOrEqual(scheduler.nextPollAt('c1', 'bucket_stats') as number);
    expect(Number.isFinite(scheduler.nextPollAt('c1', 'xdcr'))).toBe(true);
    gate.release('xdcr');
  });
});
