/** Scheduler.reconfigure: what a configuration reload keeps, replaces and drops (src/scheduler/index.ts). */
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { Collector } from '../../src/collectors/types.js';
import { defaultClusterConfig, resolveCollectors } from '../../src/config/defaults.js';
import type { ClusterConfig } from '../../src/config/types.js';
import type { CouchbaseClient } from '../../src/couchbase/client.js';
import { defineFamily } from '../../src/metrics/family.js';
import { SnapshotStore } from '../../src/metrics/store.js';
import { Scheduler } from '../../src/scheduler/index.js';
import { fakeClient } from '../helpers/collect.js';
import { fakeCollector, untilTrue as until } from '../helpers/scheduler.js';

const fam = defineFamily('buckets', 'couchbase_fake_polls', 'gauge', 'Polls of this job so far.', ['job']);

/** Counts its polls in its own state: a kept job keeps counting, a new one starts again at 1. */
function counting(name: 'buckets' | 'nodes' | 'tasks'): Collector {
  return fakeCollector(name, [fam], async (ctx) => {
    await ctx.client.getJson('/pools/default', {}, z.looseObject({}));
    const n = ((ctx.state.get('n') as number | undefined) ?? 0) + 1;
    ctx.state.set('n', n);
    ctx.out.add(fam, { job: name }, n);
  });
}

function cluster(name: string, intervals: Partial<Record<'buckets' | 'nodes' | 'tasks', number>>): ClusterConfig {
  const raw = resolveCollectors();
  for (const k of Object.keys(raw) as Array<keyof typeof raw>) raw[k].enabled = false;
  for (const [k, ms] of Object.entries(intervals)) Object.assign(raw[k as 'buckets'], { enabled: true, interval: ms, timeout: 5000 });
  return defaultClusterConfig({ url: 'http://cb.test:8091', name, collectors: raw });
}

function value(store: SnapshotStore, clusterName: string, job: string): number | undefined {
  for (const { base, set } of store.labelledSets()) {
    if (base.couchbase_cluster !== clusterName) continue;
    const v = set.get(fam.name, { job });
    if (v !== undefined) return v;
  }
  return undefined;
}

let stopMe: Scheduler | undefined;
afterEach(async () => {
  await stopMe?.stop();
  stopMe = undefined;
});

describe('Scheduler.reconfigure', () => {
  it('keeps unchanged jobs, replaces changed ones, drops removed collectors and clusters, adds new clusters', async () => {
    const collectors = [counting('buckets'), counting('nodes'), counting('tasks')];
    const store = new SnapshotStore();
    const client = fakeClient({ '/pools/default': {} });
    const clients = new Map<string, CouchbaseClient>([['a', client], ['gone', client]]);
    const scheduler = new Scheduler({ clusters: [cluster('a', { buckets: 60_000, nodes: 60_000, tasks: 60_000 }), cluster('gone', { buckets: 60_000 })], clients, collectors, store, log: pino({ level: 'silent' }), maxJitterMs: 10 });
    stopMe = scheduler;
    scheduler.start();
    await until(() => store.allPolledOnce());
    await scheduler.pollAllOnce();
    expect(value(store, 'a', 'buckets')).toBe(2);

    const next = new Map<string, CouchbaseClient>([['a', client], ['b', client]]);
    // nodes: new interval (replaced); tasks: removed; buckets: unchanged (kept); cluster b: new; cluster gone: removed.
    const r = await scheduler.reconfigure([cluster('a', { buckets: 60_000, nodes: 30_000 }), cluster('b', { buckets: 60_000 })], next);
    expect(r).toEqual({ kept: 1, added: 2, removed: 3 });
    // The replaced job's old series stay until its first poll; the removed collector's and cluster's go at once.
    expect(value(store, 'a', 'tasks')).toBeUndefined();
    expect(value(store, 'gone', 'buckets')).toBeUndefined();
    expect(store.statusList().map((s) => `${s.cluster}/${s.collector}`).sort()).toEqual(['a/buckets', 'a/nodes', 'b/buckets']);
    await until(() => value(store, 'b', 'buckets') === 1 && value(store, 'a', 'nodes') === 1);
    await scheduler.pollAllOnce();
    expect(value(store, 'a', 'buckets')).toBe(3); // kept: its state went on counting
    expect(value(store, 'a', 'nodes')).toBe(2); // replaced: a fresh state
    expect(value(store, 'b', 'buckets')).toBe(2);
  });
});
