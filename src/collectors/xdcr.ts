/**
 * Collector `xdcr`: every outgoing XDCR replication of the cluster, per source node, with the 20 XDCR stat
 * names of the REST reference; the remote cluster references; each replication's state from the tasks list.
 *
 * Requests per poll (request planning): 1 tasks list (shared with the `tasks` collector through `fetchTasks`)
 * + 1 remote cluster list + replications × 20 stat envelopes, all through the cluster's bounded client pool.
 * Sampling follows samples.ts: the zoom covers the poll interval; after the first poll each stat request
 * carries `haveTStamp` (a little before the previous newest sample), levels are the latest sample, rates the
 * mean of the samples since the previous answer, and an answer with no new sample leaves the rates out (it never
 * re-emits old values as fresh). `couchbase_xdcr_last_sample_timestamp_seconds` is the newest sample's time per
 * replication. The memos live in ctx.state under the replication id, forgotten when it leaves the tasks list.
 *
 * Why the per-stat endpoint and not the bucket stats envelope: some server versions also list cluster-wide
 * replication sums among the source bucket's samples (keys `replications/…`), but only the per-stat endpoint
 * gives the per-node breakdown. `GET /settings/replications/{id}` is not read: its one state field
 * (`pauseRequested`) is in the tasks list too, and reading it would add a request per replication.
 *
 * Labels: `source_bucket`, `target_cluster_uuid`, `target_cluster_name` (from the remote cluster reference
 * with that uuid; empty when none is known), `target_bucket` (+ `node` for the stat families). The uuid is in
 * every label set, so two replications from one bucket to two remote clusters whose buckets share a name stay
 * two series even when both references carry the same name.
 *
 * Bad input is skipped and counted (ctx.skipped), never fatal and never blanking the other replications: an
 * id that does not split into three parts, a duplicate id, a node whose samples are all null, a 404 on a
 * replication's stats (the source bucket or the replication went away between the tasks list and the stats
 * request). A stat request that fails (4xx/5xx, timeout, a body that does not parse) leaves out only that
 * stat's series of that replication and is counted by ctx.itemFailed. The poll fails when the tasks list or the
 * remote cluster list fails, or when every stat request of the poll failed.
 */
import { fetchTasks } from '../couchbase/tasks.js';
import type { Task } from '../couchbase/tasks.js';
import {
  destinationEndpoint,
  parseReplicationId,
  REMOTE_CLUSTERS_ROUTE,
  remoteClusterSchema,
  remoteClustersSchema,
  XDCR_STAT_BY_NAME,
  XDCR_STAT_ROUTE,
  XDCR_STATS,
  xdcrStatEnvelopeSchema,
} from '../couchbase/xdcr.js';
import type { ReplicationId, XdcrStatEnvelope, XdcrStatSpec } from '../couchbase/xdcr.js';
import { defineFamily } from '../metrics/family.js';
import type { FamilyDef, Labels, SampleSet } from '../metrics/family.js';
import { oneHot } from './helpers.js';
import { alignedFrom, haveTStampFor, reduceSamples, sampleWindow, zoomFor } from './samples.js';
import type { SampleMemo, Zoom } from './samples.js';
import type { CollectContext, Collector, Skip } from './types.js';
import { forgetGone, settleAll } from './util.js';

const C = 'xdcr';

export const REPLICATION_LABELS = ['source_bucket', 'target_cluster_uuid', 'target_cluster_name', 'target_bucket'] as const;
const NODE_LABELS = [...REPLICATION_LABELS, 'node'];

/** One family per XDCR stat name, keyed by Couchbase's stat name. */
export const STAT_FAMILIES: ReadonlyMap<string, FamilyDef> = new Map(
  XDCR_STATS.map((s) => [s.stat, defineFamily(C, s.metric, s.kind === 'cumulative' ? 'counter' : 'gauge', s.help, NODE_LABELS, s.unit)]),
);

/** Replication states Couchbase's tasks list uses; another value appears under its own name. */
export const REPLICATION_STATUSES = ['running', 'paused', 'notRunning'] as const;
/** Remote reference connectivity (7.1+); another value appears under its own name. */
export const CONNECTIVITY_STATUSES = ['RC_OK', 'RC_DEGRADED', 'RC_AUTH_ERR', 'RC_ERROR'] as const;

export const F = {
  remoteInfo: defineFamily(
    C,
    'couchbase_xdcr_remote_cluster_info',
    'gauge',
    'A remote cluster reference (XDCR destination), value 1, with its host.',
    ['target_cluster_name', 'target_cluster_uuid', 'hostname'],
    'info',
  ),
  remoteDeleted: defineFamily(
    C,
    'couchbase_xdcr_remote_cluster_deleted',
    'gauge',
    'Whether the remote cluster reference is marked deleted (replications may still point at its uuid).',
    ['target_cluster_name', 'target_cluster_uuid'],
  ),
  remoteConnectivity: defineFamily(
    C,
    'couchbase_xdcr_remote_cluster_connectivity_status',
    'gauge',
    'Connectivity of the remote cluster reference as Couchbase 7.1+ reports it, one-hot over RC_OK, RC_DEGRADED, RC_AUTH_ERR and RC_ERROR.',
    ['target_cluster_name', 'target_cluster_uuid', 'status'],
  ),
  paused: defineFamily(
    C,
    'couchbase_xdcr_replication_paused',
    'gauge',
    'Whether the replication is paused (pause requested, or status paused in the tasks list).',
    REPLICATION_LABELS,
  ),
  errors: defineFamily(
    C,
    'couchbase_xdcr_replication_errors',
    'gauge',
    'Number of errors the tasks list currently shows for the replication (the messages themselves are in the XDCR log).',
    REPLICATION_LABELS,
    'count',
  ),
  status: defineFamily(
    C,
    'couchbase_xdcr_replication_status',
    'gauge',
    'Replication state from the tasks list, one-hot over running, paused and notRunning.',
    [...REPLICATION_LABELS, 'status'],
  ),
  taskChangesLeft: defineFamily(
    C,
    'couchbase_xdcr_task_changes_left',
    'gauge',
    'Mutations still to be replicated, cluster-wide, as the tasks list reports it (changesLeft); couchbase_xdcr_changes_left has the per-node breakdown.',
    REPLICATION_LABELS,
    'count',
  ),
  taskDocsChecked: defineFamily(
    C,
    'couchbase_xdcr_task_docs_checked_total',
    'counter',
    'Documents checked, cluster-wide, as the tasks list reports it (docsChecked). Counts since the pipeline last started; a restart reads as a counter reset.',
    REPLICATION_LABELS,
    'count',
  ),
  taskDocsWritten: defineFamily(
    C,
    'couchbase_xdcr_task_docs_written_total',
    'counter',
    'Documents written to the destination, cluster-wide, as the tasks list reports it (docsWritten). Counts since the pipeline last started; a restart reads as a counter reset.',
    REPLICATION_LABELS,
    'count',
  ),
  lastSample: defineFamily(
    C,
    'couchbase_xdcr_last_sample_timestamp_seconds',
    'gauge',
    "Time of the newest sample among the replication's stat answers (lastTStamp, on the answering node's clock). It stops moving when Couchbase's XDCR stats stop advancing, while the exporter keeps polling successfully.",
    REPLICATION_LABELS,
    'timestamp_seconds',
  ),
} as const satisfies Record<string, FamilyDef>;


export interface Replication extends ReplicationId {
  readonly labels: Labels;
}

/**
 * GET /pools/default/remoteClusters → samples. Pure. Returns uuid → reference name, preferring a live
 * reference over a deleted one with the same uuid.
 */
export function mapRemoteClusters(raw: readonly unknown[], out: SampleSet, skip: Skip): Map<string, string> {
  const names = new Map<string, { name: string; deleted: boolean }>();
  const seen = new Set<string>();
  // Live references first, so one deleted and one live reference with the same name and uuid keep the live one.
  const parsed = raw
    .map((r, i) => {
      const p = remoteClusterSchema.safeParse(r);
      if (!p.success) skip('bad_remote_cluster', `entry #${i}: ${p.error.issues[0]?.message ?? 'does not parse'}`);
      return p.success ? p.data : undefined;
    })
    .filter((r) => r !== undefined)
    .sort((a, b) => Number(a.deleted === true) - Number(b.deleted === true));
  for (const r of parsed) {
    const key = `${r.name}\u0000${r.uuid}`;
    if (seen.has(key)) {
      skip('duplicate_remote_cluster', `${r.name} (${r.uuid})`);
      continue;
    }
    seen.add(key);
    const deleted = r.deleted === true;
    const base = { target_cluster_name: r.name, target_cluster_uuid: r.uuid };
    out.add(F.remoteInfo, { ...base, hostname: r.hostname ?? '' }, 1);
    out.add(F.remoteDeleted, base, r.deleted);
    oneHot(out, F.remoteConnectivity, base, 'status', CONNECTIVITY_STATUSES, r.connectivityStatus);
    const prev = names.get(r.uuid);
    if (prev === undefined || (prev.deleted && !deleted)) names.set(r.uuid, { name: r.name, deleted });
  }
  return new Map([...names].map(([uuid, v]) => [uuid, v.name]));
}

function pausedOf(t: Task): boolean | undefined {
  if (t.pauseRequested === undefined && t.status === undefined) return undefined;
  return t.pauseRequested === true || t.status === 'paused';
}

/**
 * The XDCR entries of the tasks list → the replications to poll, plus their task-level samples. Pure.
 * `names` maps a remote cluster uuid to its reference name.
 */
export function mapReplicationTasks(tasks: readonly Task[], names: ReadonlyMap<string, string>, out: SampleSet, skip: Skip): Replication[] {
  const out_: Replication[] = [];
  const ids = new Set<string>();
  for (const t of tasks) {
    if (t.type !== 'xdcr') continue;
    const r = t.id === undefined ? undefined : parseReplicationId(t.id);
    if (r === undefined) {
      skip('bad_replication_id', t.id ?? '(no id)');
      continue;
    }
    if (ids.has(r.id)) {
      skip('duplicate_replication', r.id);
      continue;
    }
    ids.add(r.id);
    const labels: Labels = {
      source_bucket: r.sourceBucket,
      target_cluster_uuid: r.remoteUuid,
      target_cluster_name: names.get(r.remoteUuid) ?? '',
      target_bucket: r.targetBucket,
    };
    out.add(F.paused, labels, pausedOf(t));
    out.add(F.errors, labels, t.errors?.length);
    oneHot(out, F.status, labels, 'status', REPLICATION_STATUSES, t.status);
    out.add(F.taskChangesLeft, labels, t.changesLeft);
    out.add(F.taskDocsChecked, labels, t.docsChecked);
    out.add(F.taskDocsWritten, labels, t.docsWritten);
    out_.push({ ...r, labels });
  }
  return out_;
}

export interface MapStatInput {
  readonly labels: Labels;
  readonly stat: string;
  readonly envelope: XdcrStatEnvelope;
  /** The previous answer's memo; undefined on the first poll (then the last interval's samples count). */
  readonly memo?: SampleMemo | undefined;
  /** Exporter clock when the answer arrived (epoch ms); default the memo's time plus one interval. */
  readonly now?: number;
  /** Poll interval, ms; default 60 s. */
  readonly intervalMs?: number;
  /** Sample spacing of the zoom asked for, ms; default 1 s. */
  readonly stepMs?: number;
  readonly skipped?: Skip;
}

export interface MapStatResult {
  /** What to remember for the next poll (undefined: ask for a full window next time). */
  readonly memo: SampleMemo | undefined;
  /** The answer's newest sample time (epoch ms). */
  readonly last: number | undefined;
}

/**
 * Pure mapping of one stat envelope of one replication to one sample per node: the latest sample for levels
 * and counts, the mean of the new samples for rates (none when the answer brought no new sample).
 */
export function mapReplicationStat(input: MapStatInput, out: SampleSet): MapStatResult {
  const skip = input.skipped ?? (() => undefined);
  const spec = XDCR_STAT_BY_NAME.get(input.stat);
  const family = STAT_FAMILIES.get(input.stat);
  if (spec === undefined || family === undefined) {
    skip('unknown_stat', input.stat);
    return { memo: undefined, last: undefined };
  }
  const env = input.envelope;
  const ts = env.timestamp;
  const intervalMs = input.intervalMs ?? 60_000;
  const now = input.now ?? (input.memo ? input.memo.at + intervalMs : 0);
  const win = sampleWindow(ts, env.lastTStamp, input.memo, now, intervalMs, input.stepMs ?? 1_000);
  const nodeStats = env.nodeStats;
  if (nodeStats === undefined) {
    skip('no_node_stats', `${input.labels.source_bucket ?? ''} ${input.stat}`);
    return { memo: win.memo, last: win.last };
  }
  for (const [node, raw] of Object.entries(nodeStats)) {
    if (!Array.isArray(raw)) {
      skip('bad_node_samples', `${input.stat} on ${node}`);
      continue;
    }
    const arr = raw as unknown[];
    // Arrays are aligned on the newest sample: a node that joined late has a shorter history.
    const from = ts === undefined ? 0 : alignedFrom(win.from, ts.length, arr.length);
    const v = reduceSamples(spec, arr, from, win.fresh);
    if (v === undefined) {
      if (spec.kind !== 'rate' || win.fresh) skip('null_samples', `${input.stat} on ${node}`);
      continue;
    }
    out.add(family, { ...input.labels, node }, v);
  }
  return { memo: win.memo, last: win.last };
}

type StatResult = { kind: 'ok'; stat: string; envelope: XdcrStatEnvelope } | { kind: 'not_found'; stat: string };

async function fetchStat(ctx: CollectContext<'xdcr'>, zoom: Zoom, r: Replication, stat: string, memo: SampleMemo | undefined): Promise<StatResult> {
  const ask = async (have: number | undefined): Promise<XdcrStatEnvelope | undefined> => {
    const query: Record<string, string | number> = { zoom: zoom.name };
    if (have !== undefined) query.haveTStamp = have;
    const res = await ctx.client.requestJson(
      XDCR_STAT_ROUTE,
      { bucket: r.sourceBucket, destination_endpoint: destinationEndpoint(r, stat) },
      xdcrStatEnvelopeSchema,
      { query, allowStatus: [404] },
    );
    return res.status === 404 ? undefined : res.data;
  };
  const have = haveTStampFor(memo, zoom);
  let env = await ask(have);
  // Nothing at or after haveTStamp: the node's clock may have stepped back; one full window tells.
  if (env !== undefined && have !== undefined && env.timestamp !== undefined && env.timestamp.length === 0) env = await ask(undefined);
  return env === undefined ? { kind: 'not_found', stat } : { kind: 'ok', stat, envelope: env };
}

/** Per replication, between polls: the memo of each of its stats. */
type ReplicationMemo = Map<string, SampleMemo>;

/** Polls one replication's 20 stats; returns how many stat requests failed and how many were made. */
async function pollReplication(ctx: CollectContext<'xdcr'>, zoom: Zoom, r: Replication): Promise<{ failed: number; total: number; firstError: unknown }> {
  let memos = ctx.state.get(r.id) as ReplicationMemo | undefined;
  if (memos === undefined) {
    memos = new Map();
    ctx.state.set(r.id, memos);
  }
  const m = memos;
  const settled = await settleAll(XDCR_STATS.map((s) => fetchStat(ctx, zoom, r, s.stat, m.get(s.stat))));
  let failed = 0;
  let firstError: unknown;
  const results: StatResult[] = [];
  settled.forEach((res, i) => {
    const stat = XDCR_STATS[i]?.stat ?? '';
    if (res.status === 'fulfilled') {
      results.push(res.value);
      return;
    }
    // One stat's failure leaves out only that stat's series of this replication (past the poll's deadline every
    // request fails: that is the poll's failure, not the items').
    failed++;
    firstError ??= res.reason;
    if (!ctx.signal.aborted) ctx.itemFailed(`${r.id} ${stat}`, res.reason);
  });
  if (failed === 0 && results.every((x) => x.kind === 'not_found')) {
    // The source bucket (or the replication) went away after the tasks list was read.
    ctx.skipped('replication_gone', r.id);
    ctx.state.delete(r.id);
    return { failed, total: XDCR_STATS.length, firstError };
  }
  let newest: number | undefined;
  for (const res of results) {
    if (res.kind === 'not_found') {
      ctx.skipped('stat_not_found', `${r.id} ${res.stat}`);
      m.delete(res.stat);
      continue;
    }
    const { memo, last } = mapReplicationStat(
      {
        labels: r.labels,
        stat: res.stat,
        envelope: res.envelope,
        memo: m.get(res.stat),
        now: ctx.now(),
        intervalMs: ctx.options.interval,
        stepMs: zoom.stepMs,
        skipped: (reason, detail) => ctx.skipped(reason, `${r.id}: ${detail ?? ''}`),
      },
      ctx.out,
    );
    if (memo === undefined) m.delete(res.stat);
    else m.set(res.stat, memo);
    if (last !== undefined && (newest === undefined || last > newest)) newest = last;
  }
  if (newest !== undefined) ctx.out.add(F.lastSample, r.labels, newest / 1000);
  return { failed, total: XDCR_STATS.length, firstError };
}

/**
 * How many replications are polled at once. Each brings 20 requests; the client pool runs `concurrency` of them
 * at a time, so twice that many queued keeps the pool busy while a finished replication makes room for the next.
 * Starting all replications at once would queue replications x 20 requests (4 000 for 200) with their closures,
 * abort listeners and half-read envelopes for no gain in speed, only in peak memory.
 */
export function replicationsInFlight(concurrency: number): number {
  return Math.max(2, Math.ceil((2 * Math.max(1, concurrency)) / XDCR_STATS.length));
}

/**
 * Run `job` over `items` with at most `limit` at a time, starting none after `signal` aborted; every started job
 * settles before this resolves.
 */
async function forEachBounded<T>(items: readonly T[], limit: number, signal: AbortSignal, job: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length && !signal.aborted) await job(items[next++] as T);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

export const xdcrCollector: Collector<'xdcr'> = {
  name: 'xdcr',
  defaultInterval: 30_000,
  families: [...STAT_FAMILIES.values(), ...Object.values(F)],
  role: 'Read-Only Admin (ro_admin): cluster.xdcr.remote_clusters!read and cluster.bucket[<source>].stats!read for every source bucket',
  description: 'Every XDCR replication per source node (the 20 XDCR stats), its state and errors, and the remote cluster references.',
  async collect(ctx) {
    // The two lists are independent: fetch them together, and let neither run on after the other failed.
    const tasksP = fetchTasks(ctx);
    const refsP = ctx.client.getJson(REMOTE_CLUSTERS_ROUTE, {}, remoteClustersSchema);
    await Promise.allSettled([tasksP, refsP]);
    const tasks = await tasksP;
    const refs = await refsP;
    const names = mapRemoteClusters(refs, ctx.out, (r, d) => ctx.skipped(r, d));
    const replications = mapReplicationTasks(tasks, names, ctx.out, (r, d) => ctx.skipped(r, d));
    forgetGone(ctx.state, new Set(replications.map((r) => r.id)));
    const zoom = zoomFor(ctx.options.interval);
    let failed = 0;
    let total = 0;
    let firstError: unknown;
    await forEachBounded(replications, replicationsInFlight(ctx.cluster.concurrency), ctx.signal, async (r) => {
      const res = await pollReplication(ctx, zoom, r);
      failed += res.failed;
      total += res.total;
      firstError ??= res.firstError;
    });
    if (ctx.signal.aborted) throw ctx.signal.reason;
    // Every stat request of every replication failed: nothing of this poll is true, so the poll fails.
    if (total > 0 && failed === total) throw firstError;
  },
};
