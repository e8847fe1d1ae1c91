import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { mapReplicationStat, mapReplicationTasks, mapRemoteClusters, nodeLabelsOf, STAT_FAMILIES, xdcrCollector } from '../../src/collectors/xdcr.js';
import { replicationsInFlight } from '../../src/stats/envelope-xdcr.js';
import { tasksSchema } from '../../src/couchbase/tasks.js';
import type { Task } from '../../src/couchbase/tasks.js';
import { parseReplicationId, XDCR_STATS, xdcrStatEnvelopeSchema } from '../../src/couchbase/xdcr.js';
import { SampleSet } from '../../src/metrics/family.js';
import { xdcrSimReplications } from '../../src/simulator/modules/xdcr.js';
import type { CollectorOptions } from '../../src/config/schema.js';
import type { CouchbaseClient } from '../../src/couchbase/client.js';
import { collect, fakeClient, loadFixture, simulatorWithClient } from '../helpers/collect.js';
import { missing, requireBinary } from '../helpers/tools.js';

const TASKS = '/pools/default/tasks';
const REFS = '/pools/default/remoteClusters';
const STAT = '/pools/default/buckets/{bucket}/stats/{destination_endpoint}';

/**
 * Real stat envelopes for the stats they were captured for. The AppDynamics minute capture does not say which
 * stat it is; it stands in for changes_left (a level) in the goldens and for every stat where a test needs all 20.
 */
const STAT_FIXTURE: Record<string, string> = {
  docs_written: 'xdcr-replication-stat/docs-server-docs_written-2013.json',
  rate_replicated: 'xdcr-replication-stat/docs-server-rate_replicated-2013.json',
  bandwidth_usage: 'xdcr-replication-stat/appd-4.6.3-bandwidth_usage-zoom-day.json',
  changes_left: 'xdcr-replication-stat/appd-4.6.3-stat-minute.json',
};
const OTHER_STATS = 'xdcr-replication-stat/appd-4.6.3-stat-minute.json';

/**
 * One poll asking all 20 stats: a slow tier no longer than the interval turns the tiers off. These tests are about
 * mapping and failures; test/collectors/xdcr-tiers.test.ts covers the tiers.
 */
function collectAll(collector: typeof xdcrCollector, client: CouchbaseClient, extra: Parameters<typeof collect>[2] = {}): ReturnType<typeof collect> {
  // collect() parses options with the configuration schema, which turns the duration string into milliseconds.
  const options = { slow_stats_interval: '30s', ...(extra.options ?? {}) } as unknown as Partial<CollectorOptions<'xdcr'>>;
  return collect(collector, client, { ...extra, options });
}

function statName(params: Record<string, string>): string {
  return (params.destination_endpoint ?? '').split('/').pop() ?? '';
}

/** The captured stats with their capture; the others 404 (as a server without that stat would answer). */
const realStats = (params: Record<string, string>): unknown => {
  const f = STAT_FIXTURE[statName(params)];
  return f === undefined ? { status: 404, text: 'Requested resource not found.' } : loadFixture(f);
};
/** Every stat answered with a real envelope. */
const everyStat = (params: Record<string, string>): unknown => loadFixture(STAT_FIXTURE[statName(params)] ?? OTHER_STATS);

/** The 7.1 tasks fixture (two replications from travel-sample to two remote uuids), edited so both target bucket `ts`. */
function sameTargetTasks(): unknown[] {
  const tasks = loadFixture<Array<Record<string, unknown>>>('pools-default-tasks/docs-server-7.1plus-xdcr.json');
  for (const t of tasks) if (t.type === 'xdcr') t.id = String(t.id).replace(/\/ts2$/, '/ts');
  return tasks;
}

/** The 7.1 two-reference fixture, edited to carry the uuids of the tasks fixture's replications. */
function refsForTasks(): unknown[] {
  const refs = loadFixture<Array<Record<string, unknown>>>('pools-default-remoteClusters/docs-server-7.1plus-2refs.json');
  const uuids = ['0ad6c74d0f9fee5e447688933df6b281', '2b5dcd1b0101a9d52f31a802d8c4231e'];
  refs.forEach((r, i) => (r.uuid = uuids[i]));
  return refs;
}

function envelope(nodeStats: Record<string, unknown>, timestamp: number[], lastTStamp = timestamp[timestamp.length - 1]): unknown {
  return { samplesCount: timestamp.length, isPersistent: true, lastTStamp, interval: 1000, timestamp, nodeStats };
}

describe('replication ids', () => {
  it('split into uuid, source and target bucket; bucket names keep . - _ %', () => {
    expect(parseReplicationId('abc/orders.eu/sessions_%cache-2')).toEqual({ id: 'abc/orders.eu/sessions_%cache-2', remoteUuid: 'abc', sourceBucket: 'orders.eu', targetBucket: 'sessions_%cache-2' });
  });
  it.each(['abc/def', 'a/b/c/d', '/b/c', 'a//c', 'a/b/', ''])('reject %j', (id) => {
    expect(parseReplicationId(id)).toBeUndefined();
  });
});

describe('xdcr collector on real fixtures', () => {
  it('matches the golden exposition (7.1 tasks, 7.1 references, real stat envelopes)', async () => {
    const client = fakeClient({
      [TASKS]: loadFixture('pools-default-tasks/docs-server-7.1plus-xdcr.json'),
      [REFS]: loadFixture('pools-default-remoteClusters/docs-server-7.1plus-2refs.json'),
      [STAT]: realStats,
    });
    const r = await collectAll(xdcrCollector, client);
    expect(r.ok, String(r.error)).toBe(true);
    expect(r.set.duplicates).toBe(0);
    // Two replications x the 16 stats without a capture.
    expect([...r.skipped]).toEqual([['stat_not_found', 32]]);
    // Key values by hand from the captures: the latest sample of each level and count, per node; the newest
    // sample time of a replication is the newest lastTStamp among its stat answers (the day-zoom capture's).
    const ts2 = { target_bucket: 'ts2' };
    expect(r.set.get('couchbase_xdcr_changes_left', { ...ts2, node: '172.17.0.2:8091' })).toBe(3150491);
    expect(r.set.get('couchbase_xdcr_docs_written_total', { ...ts2, node: '127.0.0.1:8091' })).toBe(1000000);
    expect(r.set.get('couchbase_xdcr_task_docs_checked_total', ts2)).toBe(84792);
    expect(r.set.get('couchbase_xdcr_last_sample_timestamp_seconds', ts2)).toBe(1507051320);
    expect(r.set.get('couchbase_xdcr_remote_cluster_connectivity_status', { target_cluster_name: 'SecondTarget', status: 'RC_ERROR' })).toBe(1);
    await expect(r.text).toMatchFileSnapshot('../golden/xdcr.prom');
  });

  it('keeps two replications from one bucket to two remote clusters with the same target bucket apart', async () => {
    const client = fakeClient({ [TASKS]: sameTargetTasks(), [REFS]: refsForTasks(), [STAT]: realStats });
    const r = await collectAll(xdcrCollector, client);
    expect(r.ok, String(r.error)).toBe(true);
    expect(r.set.duplicates).toBe(0);
    const left = r.set.all('couchbase_xdcr_changes_left');
    expect(left.map((s) => [s.labels.target_cluster_name, s.labels.target_cluster_uuid, s.labels.target_bucket]).sort()).toEqual([
      ['FirstTarget', '2b5dcd1b0101a9d52f31a802d8c4231e', 'ts'],
      ['SecondTarget', '0ad6c74d0f9fee5e447688933df6b281', 'ts'],
    ]);
    expect(left.map((x) => x.value)).toEqual([3150491, 3150491]);
    expect(r.set.all('couchbase_xdcr_last_sample_timestamp_seconds').map((x) => x.value)).toEqual([1507051320, 1507051320]);
    await expect(r.text).toMatchFileSnapshot('../golden/xdcr-same-target.prom');
  });

  it('plans 1 tasks + 1 remoteClusters + replications x 20 stat requests, each endpoint one encoded segment', async () => {
    const client = fakeClient({ [TASKS]: loadFixture('pools-default-tasks/docs-server-7.1plus-xdcr.json'), [REFS]: [], [STAT]: realStats });
    const r = await collectAll(xdcrCollector, client);
    expect(r.requests).toHaveLength(2 + 2 * 20);
    expect(r.requests.filter((q) => q.endpoint === STAT)).toHaveLength(40);
    const paths = client.calls.filter((c) => c.route === STAT).map((c) => c.path);
    expect(paths).toContain('/pools/default/buckets/travel-sample/stats/replications%2F0ad6c74d0f9fee5e447688933df6b281%2Ftravel-sample%2Fts2%2Fchanges_left');
    expect(new Set(paths.map((p) => p.split('%2F').pop())).size).toBe(20);
    expect(new Set(paths.map((p) => p.split('%2F').pop()))).toEqual(new Set(XDCR_STATS.map((s) => s.stat)));
  });

  it('polls a bounded number of replications at once, enough to keep the client pool busy', async () => {
    expect(replicationsInFlight(16)).toBe(2);
    expect(replicationsInFlight(1)).toBe(2);
    expect(replicationsInFlight(64)).toBe(7);
    const tasks = Array.from({ length: 12 }, (_, i) => ({ type: 'xdcr', id: `u/b/t${i}`, status: 'running' }));
    let inFlight = 0;
    let most = 0;
    const client = fakeClient({
      [TASKS]: tasks,
      [REFS]: [],
      [STAT]: async (p: Record<string, string>) => {
        inFlight++;
        most = Math.max(most, inFlight);
        await new Promise((r) => setImmediate(r));
        inFlight--;
        return everyStat(p);
      },
    });
    const r = await collectAll(xdcrCollector, client, { cluster: { concurrency: 16 } });
    expect(r.ok).toBe(true);
    expect(r.set.all('couchbase_xdcr_changes_left')).toHaveLength(12);
    expect(most).toBe(2 * 20);
  });

  it('encodes % . - _ in bucket names into the one segment', async () => {
    const tasks = [{ type: 'xdcr', id: 'u1/sessions_%cache/orders.eu-2', status: 'running', errors: [] }];
    const client = fakeClient({ [TASKS]: tasks, [REFS]: [], [STAT]: realStats });
    const r = await collectAll(xdcrCollector, client);
    expect(r.ok).toBe(true);
    const path = client.calls.find((c) => c.route === STAT)?.path ?? '';
    expect(path).toBe('/pools/default/buckets/sessions_%25cache/stats/replications%2Fu1%2Fsessions_%25cache%2Forders.eu-2%2Fbandwidth_usage');
    expect(r.set.get('couchbase_xdcr_changes_left', { source_bucket: 'sessions_%cache', target_bucket: 'orders.eu-2' })).toBe(3150491);
  });

  it('sends haveTStamp from the second poll on, per replication and stat', async () => {
    const client = fakeClient({ [TASKS]: loadFixture('pools-default-tasks/docs-server-7.1plus-xdcr.json'), [REFS]: [], [STAT]: realStats });
    const state = new Map<string, unknown>();
    await collectAll(xdcrCollector, client, { state });
    const first = client.calls.filter((c) => c.route === STAT);
    expect(first.every((c) => c.options.query?.haveTStamp === undefined && c.options.query?.zoom === 'minute')).toBe(true);
    client.calls.length = 0;
    await collectAll(xdcrCollector, client, { state });
    const written = client.calls.find((c) => c.route === STAT && statName(c.params) === 'docs_written');
    const left = client.calls.find((c) => c.route === STAT && statName(c.params) === 'changes_left');
    // The previous newest sample less the 5 s allowed for clock differences between nodes.
    expect(written?.options.query?.haveTStamp).toBe(1371685106753 - 5000);
    expect(left?.options.query?.haveTStamp).toBe(1506634199329 - 5000);
  });

  it('parses every complete stat envelope fixture', () => {
    const dir = join(import.meta.dirname, '..', 'fixtures', 'couchbase', 'xdcr-replication-stat');
    for (const f of readdirSync(dir).filter((x) => x.endsWith('.json') && !/\.(truncated|elided|fragment|wrapped|invalid)\.json$/.test(x))) {
      const env = xdcrStatEnvelopeSchema.parse(JSON.parse(readFileSync(join(dir, f), 'utf8')));
      const set = new SampleSet();
      const { memo } = mapReplicationStat({ labels: LABELS, stat: 'changes_left', envelope: env }, set);
      expect(memo?.last, f).toBe(env.lastTStamp);
      expect(set.size, f).toBe(Object.keys(env.nodeStats ?? {}).length);
    }
  });

  it.skipIf(missing('promtool'))('golden files pass promtool check metrics', () => {
    const promtool = requireBinary('promtool') as string;
    const golden = join(import.meta.dirname, '..', 'golden');
    const files = readdirSync(golden).filter((x) => x.startsWith('xdcr'));
    expect(files.length).toBeGreaterThanOrEqual(2);
    for (const f of files) {
      expect(execFileSync(promtool, ['check', 'metrics'], { input: readFileSync(join(golden, f)), encoding: 'utf8' }), f).toBe('');
    }
  });
});

const LABELS = { source_bucket: 'b', target_cluster_uuid: 'u', target_cluster_name: 'n', target_bucket: 't' };

describe('mapping one stat envelope', () => {
  const ts = [1000, 2000, 3000, 4000];
  const env = (nodeStats: Record<string, unknown>, t = ts) => xdcrStatEnvelopeSchema.parse(envelope(nodeStats, t));

  it('levels take the latest non-null sample per node', () => {
    const set = new SampleSet();
    mapReplicationStat({ labels: LABELS, stat: 'changes_left', envelope: env({ 'a:8091': [5, 6, 7, null], 'b:8091': [1, 2, 3, 4] }) }, set);
    expect(set.get('couchbase_xdcr_changes_left', { node: 'a:8091' })).toBe(7);
    expect(set.get('couchbase_xdcr_changes_left', { node: 'b:8091' })).toBe(4);
  });

  it("one labels object per node for all of a replication's stats (formatted once per render), same values", () => {
    const set = new SampleSet();
    const nodeLabels = nodeLabelsOf(LABELS);
    const nodes = { 'a:8091': [5, 6, 7, null], 'b:8091': [1, 2, 3, 4] };
    mapReplicationStat({ labels: LABELS, stat: 'changes_left', envelope: env(nodes), nodeLabels }, set);
    mapReplicationStat({ labels: LABELS, stat: 'docs_rep_queue', envelope: env(nodes), nodeLabels }, set);
    const [left, queue] = ['couchbase_xdcr_changes_left', 'couchbase_xdcr_docs_rep_queue'].map((n) => set.families().find((f) => f.def.name === n)?.samples ?? []);
    expect(left?.map((x) => x.value)).toEqual([7, 4]);
    expect(queue?.map((x) => x.value)).toEqual([7, 4]);
    expect(left?.[0]?.labels).toBe(queue?.[0]?.labels);
    expect(left?.[1]?.labels).toBe(queue?.[1]?.labels);
    expect(left?.[0]?.labels).toEqual({ ...LABELS, node: 'a:8091' });
  });

  it('rates take the mean of the samples newer than the previous poll', () => {
    const set = new SampleSet();
    // The previous answer's newest sample was t=2000, 2 s ago on the exporter's clock: t=3000 and t=4000 are new.
    const { memo } = mapReplicationStat({ labels: LABELS, stat: 'rate_replicated', envelope: env({ 'a:8091': [100, 100, 10, 20] }), memo: { last: 2000, at: 0 }, now: 2000 }, set);
    expect(set.get('couchbase_xdcr_rate_replicated_per_second', { node: 'a:8091' })).toBe(15);
    expect(memo).toEqual({ last: 4000, at: 2000 });
    const first = new SampleSet();
    mapReplicationStat({ labels: LABELS, stat: 'rate_replicated', envelope: env({ 'a:8091': [100, 100, 10, 30] }) }, first);
    expect(first.get('couchbase_xdcr_rate_replicated_per_second')).toBe(60);
  });

  it('aligns a shorter node history on the newest sample', () => {
    const set = new SampleSet();
    mapReplicationStat({ labels: LABELS, stat: 'bandwidth_usage', envelope: env({ 'late:8091': [40, 60] }), memo: { last: 2000, at: 0 }, now: 2000 }, set);
    expect(set.get('couchbase_xdcr_bandwidth_usage_bytes_per_second', { node: 'late:8091' })).toBe(50);
  });

  it('converts milliseconds to seconds for latencies and the checkpoint time', () => {
    const set = new SampleSet();
    for (const stat of ['wtavg_docs_latency', 'wtavg_meta_latency', 'time_committing']) {
      mapReplicationStat({ labels: LABELS, stat, envelope: env({ 'a:8091': [0, 0, 0, 250] }) }, set);
    }
    expect(set.get('couchbase_xdcr_wtavg_docs_latency_seconds')).toBe(0.25);
    expect(set.get('couchbase_xdcr_wtavg_meta_latency_seconds')).toBe(0.25);
    expect(set.get('couchbase_xdcr_time_committing_seconds')).toBe(0.25);
  });

  it('never re-emits old values as fresh: no new sample, no rate; levels are the latest sample the answer has', () => {
    const set = new SampleSet();
    const previous = { last: 4000, at: 100 };
    const stalled = env({ 'a:8091': [5, 6, 7, 12] });
    const { memo } = mapReplicationStat({ labels: LABELS, stat: 'changes_left', envelope: stalled, memo: previous, now: 30_100 }, set);
    mapReplicationStat({ labels: LABELS, stat: 'rate_replicated', envelope: stalled, memo: previous, now: 30_100 }, set);
    expect(set.get('couchbase_xdcr_changes_left', { node: 'a:8091' })).toBe(12);
    expect(set.all('couchbase_xdcr_rate_replicated_per_second')).toEqual([]);
    expect(memo).toBe(previous);
    // An empty answer has nothing to emit at all (the collector asks again without haveTStamp).
    const empty = new SampleSet();
    mapReplicationStat({ labels: LABELS, stat: 'changes_left', envelope: env({ 'a:8091': [] }, []), memo: previous, now: 30_100 }, empty);
    expect(empty.size).toBe(0);
  });

  it('skips nodes with only nulls, non-array samples, a missing nodeStats and unknown stat names', () => {
    const skipped: string[] = [];
    const skip = (r: string) => void skipped.push(r);
    const set = new SampleSet();
    mapReplicationStat({ labels: LABELS, stat: 'changes_left', envelope: env({ 'a:8091': [null, null, null, null], 'b:8091': 'x', 'c:8091': [1, 2, 3, 9] }), skipped: skip }, set);
    expect(set.all('couchbase_xdcr_changes_left').map((s) => [s.labels.node, s.value])).toEqual([['c:8091', 9]]);
    const { memo } = mapReplicationStat({ labels: LABELS, stat: 'changes_left', envelope: xdcrStatEnvelopeSchema.parse({ lastTStamp: 5, timestamp: [5] }), skipped: skip }, set);
    expect(memo).toEqual({ last: 5, at: 0 });
    expect(mapReplicationStat({ labels: LABELS, stat: 'no_such_stat', envelope: env({ 'a:8091': [1, 2, 3, 4] }), skipped: skip }, set).memo).toBeUndefined();
    expect(skipped).toEqual(['null_samples', 'bad_node_samples', 'no_node_stats', 'unknown_stat']);
    expect(set.size).toBe(1);
  });

  it('declares one family per stat name of the reference with the node label: counts as _total counters, the rest gauges', () => {
    expect(STAT_FAMILIES.size).toBe(20);
    // Written out by hand: the cumulative counts of a pipeline run (goxdcr's counters).
    const counters = ['data_replicated', 'docs_checked', 'docs_failed_cr_source', 'docs_filtered', 'docs_opt_repd', 'docs_received_from_dcp', 'docs_processed', 'docs_written', 'num_checkpoints', 'num_failedckpts'];
    for (const [stat, f] of STAT_FAMILIES) {
      expect(f.type, stat).toBe(counters.includes(stat) ? 'counter' : 'gauge');
      expect(f.name.endsWith('_total'), stat).toBe(counters.includes(stat));
      expect(f.labels).toEqual(['source_bucket', 'target_cluster_uuid', 'target_cluster_name', 'target_bucket', 'node']);
    }
    expect(STAT_FAMILIES.get('changes_left')?.name).toBe('couchbase_xdcr_changes_left');
  });
});

describe('mapping the tasks list and the references', () => {
  const parseTasks = (raw: unknown): Task[] => tasksSchema.parse(raw);

  it('emits state, errors and task-level counts per replication', () => {
    const set = new SampleSet();
    const tasks = parseTasks([loadFixture('pools-default-tasks/docs-server-7.1plus-xdcr-task-element.json')]);
    const reps = mapReplicationTasks(tasks, new Map([['e82ad198116fd9f9a369df37ab0819b2', 'backup-dc']]), set, () => undefined);
    expect(reps).toHaveLength(1);
    const l = { source_bucket: 'travel-sample', target_cluster_uuid: 'e82ad198116fd9f9a369df37ab0819b2', target_cluster_name: 'backup-dc', target_bucket: 'travelSampleBackup' };
    expect(set.get('couchbase_xdcr_replication_errors', l)).toBe(1);
    expect(set.get('couchbase_xdcr_replication_paused', l)).toBe(0);
    expect(set.get('couchbase_xdcr_replication_status', { ...l, status: 'running' })).toBe(1);
    expect(set.get('couchbase_xdcr_replication_status', { ...l, status: 'paused' })).toBe(0);
    expect(set.get('couchbase_xdcr_task_docs_checked_total', l)).toBe(28255);
    expect(set.get('couchbase_xdcr_task_docs_written_total', l)).toBe(10518);
    expect(set.get('couchbase_xdcr_task_changes_left', l)).toBe(0);
  });

  it('emits nothing (not zeros) for missing fields, and an unknown status under its own name', () => {
    const set = new SampleSet();
    mapReplicationTasks(parseTasks([{ type: 'xdcr', id: 'u/a/b' }, { type: 'xdcr', id: 'u/a/c', status: 'restarting' }]), new Map(), set, () => undefined);
    expect(set.all('couchbase_xdcr_replication_errors')).toEqual([]);
    expect(set.all('couchbase_xdcr_task_changes_left')).toEqual([]);
    expect(set.all('couchbase_xdcr_replication_paused').map((s) => s.labels.target_bucket)).toEqual(['c']);
    expect(set.all('couchbase_xdcr_replication_status').filter((s) => s.value === 1).map((s) => s.labels.status)).toEqual(['restarting']);
    expect(set.all('couchbase_xdcr_replication_status').every((s) => s.labels.target_cluster_name === '')).toBe(true);
  });

  it('pauseRequested or status paused mark a replication paused', () => {
    const set = new SampleSet();
    mapReplicationTasks(parseTasks([{ type: 'xdcr', id: 'u/a/b', status: 'paused' }, { type: 'xdcr', id: 'u/a/c', status: 'running', pauseRequested: true }]), new Map(), set, () => undefined);
    expect(set.all('couchbase_xdcr_replication_paused').map((s) => s.value)).toEqual([1, 1]);
  });

  it('skips bad and duplicate ids, keeping the others', () => {
    const skipped: string[] = [];
    const set = new SampleSet();
    const reps = mapReplicationTasks(
      parseTasks([{ type: 'xdcr', id: 'u/a' }, { type: 'xdcr' }, { type: 'xdcr', id: 'u/a/b/c' }, { type: 'xdcr', id: 'u/a/b' }, { type: 'xdcr', id: 'u/a/b' }, { type: 'rebalance', status: 'notRunning' }]),
      new Map(),
      set,
      (r) => void skipped.push(r),
    );
    expect(reps.map((r) => r.id)).toEqual(['u/a/b']);
    expect(skipped).toEqual(['bad_replication_id', 'bad_replication_id', 'bad_replication_id', 'duplicate_replication']);
    expect(set.duplicates).toBe(0);
  });

  it('maps references: info with host, deleted, connectivity one-hot; live names win over deleted ones', () => {
    const set = new SampleSet();
    const refs = [
      ...loadFixture<unknown[]>('pools-default-remoteClusters/docs-server-7.1plus-2refs.json'),
      { name: 'OldTarget', uuid: '3e6b2e88808a68b1b844930e11290fbd', hostname: '10.0.0.9:8091', deleted: true },
      { name: 'broken' },
    ];
    const skipped: string[] = [];
    const names = mapRemoteClusters(refs, set, (r) => void skipped.push(r));
    expect(names.get('3e6b2e88808a68b1b844930e11290fbd')).toBe('FirstTarget');
    expect(names.get('5ccf771844cd32375df8c4de70e9d44e')).toBe('SecondTarget');
    expect(skipped).toEqual(['bad_remote_cluster']);
    expect(set.get('couchbase_xdcr_remote_cluster_info', { target_cluster_name: 'SecondTarget' })).toBe(1);
    expect(set.all('couchbase_xdcr_remote_cluster_info').find((s) => s.labels.target_cluster_name === 'SecondTarget')?.labels.hostname).toBe('10.144.220.103:8091');
    expect(set.get('couchbase_xdcr_remote_cluster_deleted', { target_cluster_name: 'OldTarget' })).toBe(1);
    expect(set.get('couchbase_xdcr_remote_cluster_deleted', { target_cluster_name: 'FirstTarget' })).toBe(0);
    expect(set.get('couchbase_xdcr_remote_cluster_connectivity_status', { target_cluster_name: 'SecondTarget', status: 'RC_ERROR' })).toBe(1);
    expect(set.get('couchbase_xdcr_remote_cluster_connectivity_status', { target_cluster_name: 'SecondTarget', status: 'RC_OK' })).toBe(0);
    // Pre-7.1 references have no connectivityStatus: nothing, not zeros.
    expect(set.all('couchbase_xdcr_remote_cluster_connectivity_status').some((s) => s.labels.target_cluster_name === 'OldTarget')).toBe(false);
    // Never the username the references carry.
    expect(JSON.stringify(set.families())).not.toContain('Administrator');
  });

  it('parses every complete remote-clusters fixture', () => {
    const dir = join(import.meta.dirname, '..', 'fixtures', 'couchbase', 'pools-default-remoteClusters');
    for (const f of readdirSync(dir).filter((x) => x.endsWith('.json') && !/\.(truncated|elided|fragment|wrapped|invalid)\.json$/.test(x))) {
      const skipped: string[] = [];
      const set = new SampleSet();
      mapRemoteClusters(JSON.parse(readFileSync(join(dir, f), 'utf8')) as unknown[], set, (r) => void skipped.push(r));
      expect(skipped, f).toEqual([]);
      expect(set.all('couchbase_xdcr_remote_cluster_info').length, f).toBeGreaterThan(0);
    }
  });
});

describe('bad input and failures', () => {
  const twoReps = () => loadFixture('pools-default-tasks/docs-server-7.1plus-xdcr.json');

  it('a 404 on one replication (source bucket gone) skips it and keeps the other', async () => {
    const client = fakeClient({
      [TASKS]: twoReps(),
      [REFS]: [],
      [STAT]: (p: Record<string, string>) => ((p.destination_endpoint ?? '').includes('/ts2/') ? { status: 404, text: 'Requested resource not found.' } : everyStat(p)),
    });
    const r = await collectAll(xdcrCollector, client);
    expect(r.ok, String(r.error)).toBe(true);
    expect(r.skipped.get('replication_gone')).toBe(1);
    expect(r.set.all('couchbase_xdcr_changes_left').map((s) => s.labels.target_bucket)).toEqual(['ts']);
    // The tasks list still lists it: its state is still exported.
    expect(r.set.all('couchbase_xdcr_replication_paused')).toHaveLength(2);
  });

  it('a 404 on one stat only skips that stat', async () => {
    const client = fakeClient({
      [TASKS]: twoReps(),
      [REFS]: [],
      [STAT]: (p: Record<string, string>) => (statName(p) === 'docs_failed_cr_source' ? { status: 404 } : loadFixture(OTHER_STATS)),
    });
    const r = await collectAll(xdcrCollector, client);
    expect(r.ok).toBe(true);
    expect(r.skipped.get('stat_not_found')).toBe(2);
    expect(r.set.all('couchbase_xdcr_docs_failed_cr_source_total')).toEqual([]);
    expect(r.set.all('couchbase_xdcr_changes_left')).toHaveLength(2);
  });

  it('an envelope that is not JSON is one item error; the others stay', async () => {
    const client = fakeClient({
      [TASKS]: twoReps(),
      [REFS]: [],
      [STAT]: (p: Record<string, string>) => (statName(p) === 'changes_left' && (p.destination_endpoint ?? '').includes('/ts2/') ? { fail: 'invalid_json' } : loadFixture(OTHER_STATS)),
    });
    const r = await collectAll(xdcrCollector, client);
    expect(r.ok).toBe(true);
    expect([...r.itemErrors]).toEqual([['bad_body', 1]]);
    expect(r.set.all('couchbase_xdcr_changes_left').map((s) => s.labels.target_bucket)).toEqual(['ts']);
    expect(r.set.all('couchbase_xdcr_docs_written_total')).toHaveLength(2);
  });

  it('fails the poll when the tasks list, the references or every stat request fail; one failing stat is an item error', async () => {
    const tasksDown = await collectAll(xdcrCollector, fakeClient({ [TASKS]: { status: 500, text: 'boom' }, [REFS]: [], [STAT]: realStats }));
    expect(tasksDown.ok).toBe(false);
    const refsBad = await collectAll(xdcrCollector, fakeClient({ [TASKS]: twoReps(), [REFS]: { fail: 'invalid_json' }, [STAT]: realStats }));
    expect(refsBad.ok).toBe(false);
    expect((refsBad.error as { code?: string }).code).toBe('CBW_ERR_SCHEMA');
    const statDown = await collectAll(xdcrCollector, fakeClient({ [TASKS]: twoReps(), [REFS]: [], [STAT]: (p: Record<string, string>) => (statName(p) === 'docs_written' ? { fail: 'network' } : loadFixture(OTHER_STATS)) }));
    expect(statDown.ok).toBe(true);
    expect([...statDown.itemErrors]).toEqual([['network', 2]]);
    expect(statDown.set.all('couchbase_xdcr_changes_left')).toHaveLength(2);
    const allDown = await collectAll(xdcrCollector, fakeClient({ [TASKS]: twoReps(), [REFS]: [], [STAT]: { status: 500, text: 'boom' } }));
    expect(allDown.ok).toBe(false);
    expect((allDown.error as { code?: string }).code).toBe('CBW_ERR_HTTP');
  });

  it('a replication dropped from the tasks list loses its series and its memo', async () => {
    let tasks = twoReps() as Array<Record<string, unknown>>;
    const client = fakeClient({ [TASKS]: () => tasks, [REFS]: [], [STAT]: everyStat });
    const state = new Map<string, unknown>();
    const first = await collectAll(xdcrCollector, client, { state });
    expect(first.set.all('couchbase_xdcr_changes_left')).toHaveLength(2);
    expect((state.get([...state.keys()].find((k) => k.endsWith('/ts2')) ?? '') as { stats: Map<string, unknown> }).stats.size).toBe(20);
    tasks = tasks.filter((t) => !String(t.id).endsWith('/ts2'));
    const second = await collectAll(xdcrCollector, client, { state });
    expect(second.set.all('couchbase_xdcr_changes_left').map((s) => s.labels.target_bucket)).toEqual(['ts']);
    expect(second.set.all('couchbase_xdcr_replication_paused')).toHaveLength(1);
    expect([...state.keys()].filter((k) => k.includes('/ts2'))).toEqual([]);
    expect(second.requests).toHaveLength(2 + 20);
  });

  it('no replication: only the references, two requests', async () => {
    const r = await collectAll(xdcrCollector, fakeClient({ [TASKS]: [{ type: 'rebalance', status: 'notRunning' }], [REFS]: loadFixture('pools-default-remoteClusters/docs-server-4.1-7.0.json') }));
    expect(r.ok).toBe(true);
    expect(r.requests).toHaveLength(2);
    expect(r.set.get('couchbase_xdcr_remote_cluster_deleted', { target_cluster_name: 'remote1' })).toBe(0);
  });
});

describe('xdcr collector against the simulator', () => {
  const t = simulatorWithClient({ scenario: 'demo' });

  it.skipIf(missing('promtool'))('exports changes_left per node for each replication with the values the simulator set', async () => {
    const r = await collectAll(xdcrCollector, t.client);
    expect(r.ok, String(r.error)).toBe(true);
    expect(r.set.duplicates).toBe(0);
    expect([...r.skipped]).toEqual([]);
    const reps = xdcrSimReplications(t.sim.ctx);
    expect(r.requests).toHaveLength(2 + reps.length * 20);
    // The demo's last node was failed over: it is no longer one of the bucket's servers and Couchbase gathers no
    // replication stat from it (the flapping second node is up during the first 20 s of the run).
    const kv = t.sim.ctx.nodes.filter((n) => n.services.includes('kv') && n.hostname !== 'cb3.cbsim.local:8091').map((n) => n.hostname);
    const got = r.set.all('couchbase_xdcr_changes_left');
    expect(got).toHaveLength(reps.length * kv.length);
    for (const rep of reps) {
      for (const node of kv) {
        const s = got.find((x) => x.labels.source_bucket === rep.source && x.labels.target_bucket === rep.target && x.labels.target_cluster_uuid === rep.remote.uuid && x.labels.node === node);
        expect(s, `${rep.id} on ${node}`).toBeDefined();
        expect(s?.labels.target_cluster_name).toBe(rep.remote.name);
        // The simulator's value at the newest whole second it had sampled when it answered (the collector reads
        // the latest sample); the poll took some part of the last few seconds.
        const t = Math.floor(r.finishedAt / 1000) * 1000;
        const candidates = [0, 1, 2, 3, 4, 5].map((k) => rep.changesLeft(node, t - k * 1000));
        expect(candidates, `${rep.id} on ${node}`).toContain(s?.value);
      }
    }
    const text = r.text;
    const promtool = requireBinary('promtool') as string;
    expect(execFileSync(promtool, ['check', 'metrics'], { input: text, encoding: 'utf8' })).toBe('');
  });
});
