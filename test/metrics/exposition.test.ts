import { describe, expect, it, vi } from 'vitest';
import { LocalView } from '../../src/collection/engine.js';
import type { PollOutcome } from '../../src/collectors/context.js';
import { defineFamily, SampleSet } from '../../src/metrics/family.js';
import { Exposition } from '../../src/metrics/exposition.js';
import { SnapshotStore } from '../../src/metrics/store.js';

const fam = defineFamily('buckets', 'couchbase_bucket_eager_bytes', 'gauge', 'Eager.', ['bucket'], 'bytes');

function outcome(value: number): PollOutcome {
  const set = new SampleSet();
  set.add(fam, { bucket: 'b' }, value);
  return { collector: 'buckets', ok: true, set, error: undefined, durationSeconds: 0.01, requests: [], skipped: new Map(), itemErrors: new Map(), notApplicable: undefined, finishedAt: 1_700_000_000_000 };
}

async function until(cond: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !cond(); i++) await new Promise((r) => setTimeout(r, 10));
  expect(cond()).toBe(true);
}

describe('Exposition', () => {
  it('eager: renders soon after a change, so the next scrape finds the body ready', async () => {
    const store = new SnapshotStore();
    store.register('prod', 'buckets');
    const exposition = new Exposition(new LocalView(store, { eager: true }), { processMetrics: false });
    const o = outcome(5);
    const families = vi.spyOn(o.set, 'columns');
    store.record('prod', o);
    await until(() => families.mock.calls.length === 1);
    const text = await exposition.text();
    expect(text).toContain('couchbase_bucket_eager_bytes{couchbase_cluster="prod",bucket="b"} 5');
    expect(families).toHaveBeenCalledTimes(1);
  });

  it('eager or not, a scrape right after a change gets the new snapshot, never the older body', async () => {
    for (const eager of [true, false]) {
      const store = new SnapshotStore();
      store.register('prod', 'buckets');
      const exposition = new Exposition(new LocalView(store, { eager }), { processMetrics: false });
      store.record('prod', outcome(1));
      expect(await exposition.text()).toContain('bucket="b"} 1');
      store.record('prod', outcome(2));
      expect(await exposition.text()).toContain('bucket="b"} 2');
    }
  });

  it('lazy: renders nothing until a scrape asks', async () => {
    const store = new SnapshotStore();
    store.register('prod', 'buckets');
    new Exposition(new LocalView(store), { processMetrics: false });
    const o = outcome(5);
    const families = vi.spyOn(o.set, 'columns');
    store.record('prod', o);
    await new Promise((r) => setTimeout(r, 150));
    expect(families).not.toHaveBeenCalled();
  });
});
