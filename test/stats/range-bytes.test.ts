/**
 * The size of the range answers (bytes on the wire, counted by bench/answer-bytes.ts's relay): bucket_stats
 * without per_node asks the levels' sums over the nodes (nodesAggregation "sum"), so its answer is well under
 * the per-node one. Sizes, not times.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { byteRelay } from '../../bench/answer-bytes.js';
import type { ByteRelay } from '../../bench/answer-bytes.js';
import { bucketStatsCollector } from '../../src/collectors/bucket_stats.js';
import { createClient } from '../../src/couchbase/client.js';
import type { CouchbaseClient } from '../../src/couchbase/client.js';
import { createSimulator } from '../../src/simulator/index.js';
import type { Simulator } from '../../src/simulator/index.js';
import { collect } from '../helpers/collect.js';

const T0 = Date.UTC(2026, 10, 25, 12, 0, 0);
const clock = { now: T0 };
let sim: Simulator;
let relay: ByteRelay;
let client: CouchbaseClient;

beforeAll(async () => {
  sim = createSimulator({ version: '7.6.5', buckets: 10, nodes: 4, replications: 0, statSet: 'full', seed: 7, clock: () => clock.now });
  const url = await sim.listen();
  relay = await byteRelay(Number(new URL(url).port));
  client = createClient({ cluster: 't', url: `http://127.0.0.1:${relay.port}`, username: 'Administrator', password: 'password', concurrency: 4 });
});
afterAll(async () => {
  await client?.close();
  await relay?.close();
  await sim?.close();
});

/** Bytes of the second poll (the steady state: 30 s since the previous one). */
async function secondPollBytes(options: Record<string, unknown>): Promise<number> {
  const state = new Map<string, unknown>();
  let bytes = 0;
  for (const t of [T0, T0 + 30_000]) {
    clock.now = t;
    const before = relay.bytes();
    const r = await collect(bucketStatsCollector, client, { cluster: { statsSource: 'range' }, state, now: () => clock.now, options: options as never });
    expect(r.ok).toBe(true);
    bytes = relay.bytes() - before;
  }
  return bytes;
}

// The saving is in the levels' series (one summed series a bucket instead of four); since a level is asked for its
// newest point alone, each of those series is one point, so the saving is smaller than when the levels came with
// the whole window (then under 80%).
it('bucket_stats without per_node: the range answer is at most 90% of the per-node one (4 nodes)', async () => {
  const perNode = await secondPollBytes({ per_node: true });
  const bucketWide = await secondPollBytes({});
  expect(bucketWide).toBeLessThan(0.9 * perNode);
});
