/**
 * Issue 13, item 5: `couchbase_up` follows a probe of its own (default every 15 s), not the last success of
 * collectors that may poll every 5 minutes. Here the collectors poll every 10 minutes and the probe every
 * second: a dead cluster shows as couchbase_up 0 while every collector still holds its last good answer.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness } from '../helpers/daemon.js';
import type { Harness } from '../helpers/daemon.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness({
    intervalMs: 600_000,
    mutate: (c) => ({ ...c, clusters: c.clusters.map((cl) => ({ ...cl, probeInterval: 1000 })) }),
  });
  await h.daemon.ready();
});
afterAll(async () => {
  await h?.close();
});

async function until(pattern: RegExp): Promise<string> {
  for (;;) {
    const text = await h.metrics();
    if (pattern.test(text)) return text;
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('couchbase_up', () => {
  it('goes to 0 at the next probe when the cluster stops answering, and back to 1 when it recovers', async () => {
    await until(/^couchbase_up\{couchbase_cluster="sim"\} 1$/m);
    h.sim.ctx.faults.add({ match: /./, kind: 'reset' });
    const down = await until(/^couchbase_up\{couchbase_cluster="sim"\} 0$/m);
    // The collectors have not polled since: their last results still stand, yet `up` already tells the truth.
    expect(down).toMatch(/^cbwatch_collector_success\{couchbase_cluster="sim",collector="buckets"\} 1$/m);
    h.sim.ctx.faults.clear();
    await until(/^couchbase_up\{couchbase_cluster="sim"\} 1$/m);
  }, 30_000);
});
