/**
 * One node down on the simulator ("one node down in `cbwatch demo` keeps every bucket family"): the
 * simulator answers a down node's part of a range query as `{node, error: "Node is not available"}`
 * (src/simulator/modules/stats-range.ts, knob `unhealthyNodes`). bucket_stats through the range API keeps every
 * bucket family it has on the healthy cluster, and names the node.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bucketStatsCollector } from '../../src/collectors/bucket_stats.js';
import { createClient } from '../../src/couchbase/client.js';
import type { CouchbaseClient } from '../../src/couchbase/client.js';
import { createSimulator } from '../../src/simulator/index.js';
import type { Simulator } from '../../src/simulator/index.js';
import { SnapshotStore, statusSet } from '../../src/metrics/store.js';
import { collect } from '../helpers/collect.js';
import { checkCluster, formatTable } from '../../src/check.js';
import { defaultClusterConfig } from '../../src/config/defaults.js';

const T0 = Date.UTC(2026, 10, 25, 12, 0, 0);

async function run(unhealthy: number) {
  const clock = { now: T0 };
  const sim: Simulator = createSimulator({ buckets: 3, nodes: 4, clock: () => clock.now, knobs: { unhealthyNodes: unhealthy } });
  const client: CouchbaseClient = createClient({ cluster: 't', url: await sim.listen(), username: 'Administrator', password: 'password' });
  try {
    const state = new Map<string, unknown>();
    await collect(bucketStatsCollector, client, { cluster: { statsSource: 'range' }, state, now: () => clock.now });
    clock.now += 30_000;
    const r = await collect(bucketStatsCollector, client, { cluster: { statsSource: 'range' }, state, now: () => clock.now });
    const families = new Set(r.set.families().filter((f) => f.def.name.startsWith('couchbase_bucket_') && f.samples.length > 0).map((f) => f.def.name));
    return { r, families };
  } finally {
    await client.close();
    await sim.close();
  }
}

describe('bucket_stats through the range API with one of four nodes down (simulator)', () => {
  let healthy: Awaited<ReturnType<typeof run>>;
  let down: Awaited<ReturnType<typeof run>>;
  beforeAll(async () => {
    healthy = await run(0);
    down = await run(1);
  }, 60_000);
  afterAll(() => undefined);

  it('keeps every bucket family of the healthy cluster', () => {
    expect(healthy.r.ok).toBe(true);
    expect(down.r.ok).toBe(true);
    expect(healthy.families.size).toBeGreaterThan(50);
    expect([...healthy.families].filter((f) => !down.families.has(f))).toEqual([]);
  });

  it('names the node: one item error for the poll, the self-metric at 1, the note', () => {
    const store = new SnapshotStore();
    store.record('test', down.r);
    expect(statusSet(store.statusList()).get('cbwatch_stats_nodes_missing', { collector: 'bucket_stats' })).toBe(1);
    expect([...down.r.itemErrors.values()].reduce((a, b) => a + b, 0)).toBe(1);
    expect(down.r.note).toMatch(/partial: node \S+ missing \(Node is not available\)/);
  });
});

describe('cbwatch check with one node down (simulator)', () => {
  it('prints the node beside the statistics source', async () => {
    const sim: Simulator = createSimulator({ buckets: 2, nodes: 3, knobs: { unhealthyNodes: 1 } });
    try {
      const url = await sim.listen();
      const cluster = defaultClusterConfig({ name: 'sim', url, username: 'Administrator', password: 'password', statsSource: 'range' });
      const { bucketStatsCollector: bs } = await import('../../src/collectors/bucket_stats.js');
      const r = await checkCluster(cluster, [bs]);
      const table = formatTable(r.rows);
      expect(r.failed).toBe(0);
      expect(table).toMatch(/statistics: range \(stats_source: range \(cluster \d+\.\d+\)\); partial: node \S+ missing \(Node is not available\)/);
    } finally {
      await sim.close();
    }
  }, 30_000);
});
