import { execFileSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { mapTasks, tasksCollector } from '../../src/collectors/tasks.js';
import { tasksSchema } from '../../src/couchbase/tasks.js';
import { SampleSet } from '../../src/metrics/family.js';
import { collect, fakeClient, FIXTURES, loadFixture, simulatorWithClient } from '../helpers/collect.js';
import { missing, requireBinary } from '../helpers/tools.js';

/** Checked once: a missing promtool skips its tests visibly (and fails under CI=true), never silently. */
const PROMTOOL = requireBinary('promtool');

const TASKS = '/pools/default/tasks';
const NS = '/pools/default';

/** The node list of the three docs rebalance nodes (10.143.194.101-103), to turn ns_1@host into host:8091. */
const rebalanceNodes = {
  nodes: ['10.143.194.101', '10.143.194.102', '10.143.194.103'].map((h) => ({ hostname: `${h}:8091`, otpNode: `ns_1@${h}` })),
};

const GOLDEN: Array<[string, string]> = [
  ['docs-server-6.5plus-rebalance-running-1.json', 'tasks-rebalance-running.prom'],
  ['docs-server-6.0plus-rebalance-failed.json', 'tasks-rebalance-failed.prom'],
  ['docs-server-6.5plus-bucket-compaction.json', 'tasks-bucket-compaction.prom'],
  ['docs-server-7.1plus-xdcr.json', 'tasks-with-xdcr.prom'],
  ['docs-server-7.6plus-sample-bucket-tasks.json', 'tasks-sample-bucket.prom'],
];

describe('tasks collector on real fixtures', () => {
  for (const [file, golden] of GOLDEN) {
    it(`matches the golden exposition for ${file}`, async () => {
      const r = await collect(tasksCollector, fakeClient({ [TASKS]: loadFixture(`pools-default-tasks/${file}`), [NS]: rebalanceNodes }));
      expect(r.ok, String(r.error)).toBe(true);
      await expect(r.text).toMatchFileSnapshot(`../golden/${golden}`);
    });
  }

  it('parses every complete tasks-list fixture', async () => {
    const dir = join(FIXTURES, 'pools-default-tasks');
    const files = readdirSync(dir).filter((f) => f.endsWith('.json') && !/\.(elided|truncated|fragment|wrapped|invalid)\.json$/.test(f));
    let lists = 0;
    for (const f of files) {
      const raw = loadFixture<unknown>(`pools-default-tasks/${f}`);
      if (!Array.isArray(raw)) continue; // single task elements
      lists++;
      const r = await collect(tasksCollector, fakeClient({ [TASKS]: raw, [NS]: rebalanceNodes }));
      expect(r.ok, `${f}: ${String(r.error)}`).toBe(true);
    }
    expect(lists).toBeGreaterThanOrEqual(15);
  });

  it('reports rebalance progress as a ratio, per node under host:port, and the failed status from errorMessage', async () => {
    const r = await collect(tasksCollector, fakeClient({ [TASKS]: loadFixture('pools-default-tasks/docs-server-6.5plus-rebalance-running-2.json'), [NS]: rebalanceNodes }));
    expect(r.set.get('couchbase_rebalance_running')).toBe(1);
    expect(r.set.get('couchbase_rebalance_progress_ratio')).toBeCloseTo(0.6058881772169409, 12);
    expect(r.set.get('couchbase_rebalance_node_progress_ratio', { node: '10.143.194.103:8091' })).toBeCloseTo(0.6730205278592376, 12);
    expect(r.set.get('couchbase_rebalance_status', { status: 'running' })).toBe(1);
    const failed = await collect(tasksCollector, fakeClient({ [TASKS]: loadFixture('pools-default-tasks/docs-server-6.0plus-rebalance-failed.json') }));
    expect(failed.set.get('couchbase_rebalance_status', { status: 'failed' })).toBe(1);
    expect(failed.set.get('couchbase_rebalance_status', { status: 'notRunning' })).toBe(0);
    expect(failed.set.get('couchbase_rebalance_running')).toBe(0);
    expect(failed.set.get('couchbase_rebalance_progress_ratio')).toBeUndefined();
    // No rebalance running: /pools/default is not asked.
    const calls = fakeClient({ [TASKS]: loadFixture('pools-default-tasks/docs-server-6.0plus-rebalance-failed.json') });
    await collect(tasksCollector, calls);
    expect(calls.calls.map((c) => c.route)).toEqual([TASKS]);
  });

  it('skips XDCR entries (owned by the xdcr collector) and averages tasks sharing task type and bucket', () => {
    const set = new SampleSet();
    const list = tasksSchema.parse([
      ...loadFixture<unknown[]>('pools-default-tasks/docs-server-6.5-6.6-xdcr.json'),
      { type: 'global_indexes', status: 'running', bucket: 'travel-sample', index: 'a', id: 5548520957444133000, progress: 0 },
      { type: 'global_indexes', status: 'running', bucket: 'travel-sample', index: 'b', id: 7890207154426784000, progress: 20 },
    ]);
    mapTasks(list, set);
    expect(set.all('couchbase_tasks').some((s) => s.labels.task_type === 'xdcr')).toBe(false);
    expect(set.get('couchbase_task_progress_ratio', { task_type: 'global_indexes', bucket: 'travel-sample' })).toBeCloseTo(0.1, 12);
    expect(set.get('couchbase_tasks', { task_type: 'global_indexes', status: 'running' })).toBe(2);
    expect(set.duplicates).toBe(0);
  });

  it('leaves per-node progress out when /pools/default fails (a bare host would not join), and counts it as an item error', async () => {
    const r = await collect(tasksCollector, fakeClient({ [TASKS]: loadFixture('pools-default-tasks/docs-server-6.0-rebalance-running-1.json'), [NS]: { status: 500, text: 'x' } }));
    expect(r.ok, String(r.error)).toBe(true);
    expect(r.set.all('couchbase_rebalance_node_progress_ratio')).toEqual([]);
    expect(r.set.get('couchbase_rebalance_progress_ratio')).toBeDefined();
    expect(r.itemErrors.get('http_5xx')).toBe(1);
  });

  it('one task entry that does not parse is an item error; the others stay', async () => {
    const r = await collect(tasksCollector, fakeClient({ [TASKS]: [{ type: 'bucket_compaction', bucket: 'b', progress: 50, status: 'running' }, { status: 'running' }] }));
    expect(r.ok, String(r.error)).toBe(true);
    expect(r.itemErrors.get('bad_body')).toBe(1);
    expect(r.set.get('couchbase_task_progress_ratio', { task_type: 'bucket_compaction', bucket: 'b' })).toBe(0.5);
    const all = await collect(tasksCollector, fakeClient({ [TASKS]: [{ status: 'running' }] }));
    expect(all.ok).toBe(false);
  });

  it('emits nothing for a rebalance entry without status or progress', async () => {
    const r = await collect(tasksCollector, fakeClient({ [TASKS]: [{ type: 'rebalance' }, { type: 'bucket_compaction', bucket: 'b' }] }));
    expect(r.ok).toBe(true);
    expect(r.set.all('couchbase_rebalance_status')).toEqual([]);
    expect(r.set.get('couchbase_rebalance_status_stale')).toBeUndefined();
    expect(r.set.all('couchbase_task_progress_ratio')).toEqual([]);
  });

  it('fails the poll on an HTTP error, bad JSON or a list that is not a list', async () => {
    for (const answer of [{ status: 500, text: 'boom' }, { fail: 'invalid_json' as const }, { status: 200, body: { not: 'a list' } }]) {
      const r = await collect(tasksCollector, fakeClient({ [TASKS]: answer }));
      expect(r.ok).toBe(false);
    }
  });

  it.skipIf(PROMTOOL === undefined)('golden files pass promtool check metrics', () => {
    const promtool = PROMTOOL as string;
    const golden = join(import.meta.dirname, '..', 'golden');
    for (const f of readdirSync(golden).filter((x) => x.startsWith('tasks-'))) {
      expect(execFileSync(promtool, ['check', 'metrics'], { input: execFileSync('cat', [join(golden, f)]), encoding: 'utf8' }), f).toBe('');
    }
  });
});

describe('tasks collector against the simulator', () => {
  const t = simulatorWithClient({ scenario: 'demo' });

  it('sees the demo rebalance running with per-node progress and a compaction of the first bucket', async () => {
    const r = await collect(tasksCollector, t.client);
    expect(r.ok, String(r.error)).toBe(true);
    expect(r.set.get('couchbase_rebalance_running')).toBe(1);
    const p = r.set.get('couchbase_rebalance_progress_ratio');
    expect(p).toBeGreaterThanOrEqual(0);
    expect(p).toBeLessThanOrEqual(1);
    expect(r.set.all('couchbase_rebalance_node_progress_ratio').map((s) => s.labels.node).sort()).toEqual(['cb1.cbsim.local:8091', 'cb2.cbsim.local:8091', 'cb3.cbsim.local:8091']);
    expect(r.set.get('couchbase_task_progress_ratio', { task_type: 'bucket_compaction', bucket: 'travel-sample' })).toBeGreaterThanOrEqual(0);
  });
});
