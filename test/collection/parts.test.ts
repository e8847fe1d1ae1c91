/**
 * Per-collector parts: a poll re-renders and re-deflates only its own collector's part (spanning every
 * cluster), the spliced gzip body decodes to the plain text, and the text is what renderSets writes for the
 * same sets.
 */
import { constants, gunzipSync, inflateRawSync } from 'node:zlib';
import { describe, expect, it, vi } from 'vitest';
import { LocalView } from '../../src/collection/engine.js';
import { PartRenderer } from '../../src/collection/parts.js';
import type { PreparedPart } from '../../src/metrics/part.js';
import type { PollOutcome } from '../../src/collectors/context.js';
import { Exposition } from '../../src/metrics/exposition.js';
import { defineFamily, SampleSet } from '../../src/metrics/family.js';
import { renderSets } from '../../src/metrics/render.js';
import { SnapshotStore } from '../../src/metrics/store.js';

const big = defineFamily('bucket_stats', 'couchbase_bucket_parts_test_ops', 'gauge', 'Ops.', ['bucket', 'stat']);
const small = defineFamily('tasks', 'couchbase_tasks_parts_test_running', 'gauge', 'Running.', ['kind']);

function outcome(collector: string, fill: (s: SampleSet) => void): PollOutcome {
  const set = new SampleSet();
  fill(set);
  return { collector, ok: true, set, error: undefined, durationSeconds: 0.01, requests: [], skipped: new Map(), itemErrors: new Map(), notApplicable: undefined, finishedAt: 1_700_000_000_000 };
}

/** A part's text, from the deflated bytes it carries (its only form). */
function textOf(p: PreparedPart | undefined): string {
  return p === undefined ? '' : inflateRawSync(p.deflated, { finishFlush: constants.Z_SYNC_FLUSH }).toString('utf8');
}

function bigOutcome(n: number): PollOutcome {
  return outcome('bucket_stats', (s) => {
    for (let b = 0; b < 100; b++) for (let i = 0; i < 50; i++) s.add(big, { bucket: `bucket-${b}`, stat: `stat_${i}` }, b * 1000 + i + n);
  });
}

function tasksOutcome(v: number): PollOutcome {
  return outcome('tasks', (s) => s.add(small, { kind: 'rebalance' }, v));
}

describe('PartRenderer', () => {
  it('a tasks poll re-renders only the tasks part: kilobytes, the bucket stats untouched', async () => {
    const store = new SnapshotStore();
    for (const c of ['a', 'b']) {
      store.register(c, 'bucket_stats');
      store.register(c, 'tasks');
    }
    const bigA = bigOutcome(0);
    const bigB = bigOutcome(1);
    store.record('a', bigA);
    store.record('b', bigB);
    store.record('a', tasksOutcome(1));
    store.record('b', tasksOutcome(0));
    const r = new PartRenderer(store, { requestMetrics: false });
    const first = await r.update();
    expect(first?.order).toEqual(['bucket_stats', 'tasks']);
    expect(first?.parts.map((p) => p.name)).toEqual(['bucket_stats', 'tasks']);
    const bucketPart = first?.parts[0];
    expect(bucketPart?.length).toBeGreaterThan(300_000);

    const famA = vi.spyOn(bigA.set, 'families');
    const famB = vi.spyOn(bigB.set, 'families');
    store.record('b', tasksOutcome(3));
    const next = await r.update();
    expect(next?.order).toEqual(['bucket_stats', 'tasks']);
    expect(next?.parts.map((p) => p.name)).toEqual(['tasks']);
    const tasks = next?.parts[0];
    expect(tasks?.length).toBeLessThan(1024);
    expect(tasks?.deflated.length).toBeLessThan(1024);
    // Both clusters in one block, one HELP/TYPE.
    expect(textOf(tasks)).toBe(
      [
        '# HELP couchbase_tasks_parts_test_running Running.',
        '# TYPE couchbase_tasks_parts_test_running gauge',
        'couchbase_tasks_parts_test_running{couchbase_cluster="a",kind="rebalance"} 1',
        'couchbase_tasks_parts_test_running{couchbase_cluster="b",kind="rebalance"} 3',
        '',
      ].join('\n'),
    );
    expect(famA).not.toHaveBeenCalled();
    expect(famB).not.toHaveBeenCalled();
    // Nothing changed: no update at all.
    expect(await r.update()).toBeUndefined();
  });

  it('a failed poll drops its cluster from the part; the last cluster gone drops the part', async () => {
    const store = new SnapshotStore();
    store.record('a', tasksOutcome(1));
    const r = new PartRenderer(store, { requestMetrics: false });
    expect((await r.update())?.order).toEqual(['tasks']);
    store.record('a', { ...tasksOutcome(0), ok: false, error: new Error('x') });
    const u = await r.update();
    expect(u?.order).toEqual([]);
    expect(u?.statuses[0]?.ok).toBe(false);
  });
});

describe('Exposition over parts', () => {
  it('plain text is the sets rendered per collector, gzip decodes to it, after changes too', async () => {
    const store = new SnapshotStore();
    const bigA = bigOutcome(0);
    store.record('a', bigA);
    store.record('a', tasksOutcome(1));
    const exposition = new Exposition(new LocalView(store, { requestMetrics: false }), { processMetrics: false });
    for (let round = 0; round < 3; round++) {
      if (round > 0) store.record('a', tasksOutcome(round + 5));
      const text = await exposition.text();
      const gz = await exposition.body(true);
      expect(gunzipSync(Buffer.concat(gz.chunks)).toString('utf8')).toBe(text);
      expect(text.startsWith(renderSets(store.collectorSets('bucket_stats')) + renderSets(store.collectorSets('tasks')))).toBe(true);
      expect(text).toContain(`couchbase_tasks_parts_test_running{couchbase_cluster="a",kind="rebalance"} ${round === 0 ? 1 : round + 5}`);
    }
  });
});
